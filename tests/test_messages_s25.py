"""What tle-dump's messages say in corner cases: each names what happened, with no empty parts.

- A param-less .pipe whose index is outside i32 is bounded (exit 3) by that index; there is no
  param value to name, so the reason has no "at ..." clause (it read "at , the index ...").
- A --param value outside i32 is named as such (README, exit status 3) even when the sweep runs
  out of budget at that value before checking it (it read only "the budget ran out").
- The unwritten-field message for a write that may not run says what does count: an
  unconditional write, or a write in both branches of an if/else; a kernel that follows it
  verifies.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tle_compiler.cli.dump import main

ROOT = Path(__file__).resolve().parent.parent
OFF_BY_ONE = ROOT / "tests" / "cases" / "off_by_one.ok.pipe"

HUGE_INDEX = """\
kernel huge
pipe p capacity=1 fields=(f)
partition w default warps=4 {
  p.acquire(4294967296)
  p.write(4294967296, f)
  p.commit(4294967296)
}
partition r warps=4 {
  p.wait(4294967296)
  p.read(4294967296, f)
  p.release(4294967296)
}
"""


def run_json(capsys, *args):
    code = main(["--format", "json", *map(str, args)])
    out, err = capsys.readouterr()
    return code, json.loads(out), err


def test_index_outside_i32_without_params_names_the_index_without_an_empty_witness(
        capsys, tmp_path):
    path = tmp_path / "huge.pipe"
    path.write_text(HUGE_INDEX)
    code, doc, err = run_json(capsys, path)
    (k,) = doc["kernels"]
    assert code == 3 and k["verdict"] == "bounded"
    assert k["reason"].startswith("the index `4294967296` (line 4) is 4294967296, outside i32")
    assert "at ," not in k["reason"] and "at ," not in err
    code = main([str(path)])
    out, err = capsys.readouterr()
    assert code == 3 and "at ," not in out and "at ," not in err
    assert "(the index `4294967296` (line 4) is 4294967296, outside i32" in out


def test_param_outside_i32_is_named_when_the_budget_runs_out_at_it(capsys):
    code, doc, err = run_json(capsys, "--param", "N=2147483648", OFF_BY_ONE)
    (k,) = doc["kernels"]
    assert code == 3 and doc["exit_code"] == 3 and k["verdict"] == "unknown"
    assert k["reason"].startswith("at N=2147483648, the param N is 2147483648, outside i32")
    # the budget is still named: the value was not checked either
    assert "budget" in k["reason"] and "Traceback" not in err
    assert k["checked"] == {"N": "{}"}


def test_largest_i32_value_is_not_called_outside_i32(capsys):
    """At 2^31 - 1 every bound of this protocol stays inside i32: only the budget is named."""
    code, doc, _ = run_json(capsys, "--param", "N=2147483647", OFF_BY_ONE)
    (k,) = doc["kernels"]
    assert code == 3 and k["verdict"] == "unknown"
    assert "i32" not in k["reason"] and k["reason"].startswith("the verification budget")


DATA_IF_KERNEL = """\
import triton.language as tl
import tle_compiler as tle


@tle.jit(num_warps=4)
def k(x_ptr, flag_ptr, out_ptr, N):
    tle.assume(N >= 0)
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(prod, (p, x_ptr, flag_ptr, N)), (cons, (p, out_ptr, N))],
                            [4], [232])


def prod(p, x_ptr, flag_ptr, N):
    offs = tl.arange(0, 64)
    w = p.writer()
    for i in range(N):
        s = w.acquire(i)
        if tl.load(flag_ptr + i) != 0:
            tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + i * 64 + offs))
{ELSE}
        w.commit(i)


def cons(p, out_ptr, N):
    offs = tl.arange(0, 64)
    r = p.reader()
    acc = tl.zeros([64], tl.float32)
    for i in range(N):
        res = r.wait(i)
        acc += tl.load(tle.gpu.local_ptr(res.slot.t))
        r.release(i)
    tl.store(out_ptr + offs, acc)
"""
ELSE_BRANCH = """\
        else:
            tl.store(tle.gpu.local_ptr(s.t), tl.zeros([64], tl.float32))"""


@pytest.mark.parametrize("has_else", [False, True], ids=["if-only", "if-else"])
def test_unwritten_field_message_says_a_write_in_both_branches_counts(capsys, tmp_path,
                                                                      has_else):
    path = tmp_path / "k.py"
    path.write_text(DATA_IF_KERNEL.replace("{ELSE}", ELSE_BRANCH if has_else else ""))
    code = main([str(path), "-q"])
    err = capsys.readouterr().err
    if has_else:  # what the message advises verifies
        assert code == 0, err
        return
    assert code == 1 and "[unwritten-field]" in err, err
    assert ("write the field unconditionally inside the window (a write in both branches of an "
            "if/else counts)") in err
