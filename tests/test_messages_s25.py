"""What tle-dump's messages say in corner cases: each names what happened, with no empty parts.

- A param-less .pipe whose index is outside i32 is bounded (exit 3) by that index; there is no
  param value to name, so the reason has no "at ..." clause (it read "at , the index ...").
- A --param value outside i32 is named as such (README, exit status 3) even when the sweep runs
  out of budget at that value before checking it (it read only "the budget ran out").
"""

from __future__ import annotations

import json
from pathlib import Path

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
