"""``tle-dump -p ... emit-gluon --param`` refuses what ``--gluon --param`` refuses, and ``-p`` /
``--print-ir`` check --param names as the other modes do.

A ``--param`` value of a kernel param is checked by the protocol passes, but the Gluon module takes
the param as a runtime argument and runs for every value of it: ``--gluon`` lowers only a kernel
verified over every value (its lowering verifies again), and ``-p emit-gluon`` printed the Gluon of
a kernel rejected at N = 3 when given ``--param N=2``. Now both refuse it with the lowering's error
(exit 1), and a kernel not proved for every value is lowered by both with the same warning (exit 3).
"""

from __future__ import annotations

import re

import pytest

from tle_compiler.cli.dump import main as tle_dump

#: rejected at N = 3 only: the reader skips every wait then
REJECTED_AT_3 = '''
import triton.language as tl
import tle_compiler as tle


@tle.jit(num_warps=4)
def k(y_ptr, N):
    ring = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (ring, y_ptr, N)), (consume, (ring, y_ptr, N))], [4], [232])


def produce(ring, y_ptr, N):
    w = ring.writer()
    for t in range(N):
        s = w.acquire(t)
        tl.store(tle.gpu.local_ptr(s.tile), tl.zeros([64], tl.float32))
        w.commit(t)


def consume(ring, y_ptr, N):
    r = ring.reader()
    for t in range(N):
        if N != COND:
            res = r.wait(t)
            x = tl.load(tle.gpu.local_ptr(res.slot.tile))
            r.release(t)
            tl.store(y_ptr + t * 64 + tl.arange(0, 64), x)


DEFAULT_CONFIG = {"signature": {"y_ptr": "*fp32", "N": "i32"}, "constexprs": {}, "num_warps": 4,
                  "grid": (1,)}
'''

#: two free params: verified only for the values checked (bounded)
TWO_PARAMS = REJECTED_AT_3.replace("def k(y_ptr, N)", "def k(y_ptr, N, M)").replace(
    "(ring, y_ptr, N)", "(ring, y_ptr, N, M)").replace(
    "def produce(ring, y_ptr, N)", "def produce(ring, y_ptr, N, M)").replace(
    "def consume(ring, y_ptr, N)", "def consume(ring, y_ptr, N, M)").replace(
    "range(N)", "range(N + M)").replace("if N != COND:", "if True:").replace(
    '"N": "i32"}', '"N": "i32", "M": "i32"}')


def write(tmp_path, text: str, name: str = "k.py"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = tle_dump(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def errors(err: str) -> list[str]:
    """The error messages on stderr, without the check tag the -p path adds."""
    return [re.sub(r" \[[\w-]+\]$", "", ln) for ln in err.splitlines() if ": error: " in ln]


def test_emit_gluon_with_a_param_refuses_a_kernel_rejected_at_another_value(tmp_path, capsys):
    path = write(tmp_path, REJECTED_AT_3.replace("COND", "3"))
    code, out, gluon_err = run(capsys, "--gluon", "--param", "N=2", path)
    assert code == 1 and not out.strip()
    for pipeline in ("emit-gluon", "verify-protocol,verify-deadlock,emit-gluon"):
        code, out, err = run(capsys, "-p", pipeline, "--param", "N=2", path)
        assert code == 1, err
        assert "gl." not in out and not out.strip(), out[:200]
        assert errors(err) == errors(gluon_err), (err, gluon_err)
        assert "nothing is lowered" in err and "(when N=3, t=0)" in err


def test_emit_gluon_with_a_param_prints_what_gluon_prints_when_proved(tmp_path, capsys):
    path = write(tmp_path, REJECTED_AT_3.replace("COND", "-5"))  # N != -5: range(-5) is empty
    code, gluon, _ = run(capsys, "--gluon", "--param", "N=2", path)
    assert code == 0 and "@gluon.jit" in gluon
    code, emitted, err = run(capsys, "-p", "emit-gluon", "--param", "N=2", path)
    assert code == 0, err
    assert emitted == gluon


def test_emit_gluon_with_a_param_warns_as_gluon_when_not_proved_for_every_value(tmp_path, capsys):
    path = write(tmp_path, TWO_PARAMS)
    code, gluon, gluon_err = run(capsys, "--gluon", "--param", "N=2", path)
    assert code == 3 and "@gluon.jit" in gluon
    code, emitted, err = run(capsys, "-p", "emit-gluon", "--param", "N=2", path)
    assert code == 3, err
    assert emitted == gluon
    warning = [ln for ln in gluon_err.splitlines() if "is lowered, but" in ln]
    assert warning and warning[0] in err.splitlines(), (err, gluon_err)


def test_a_pipeline_without_emit_gluon_keeps_the_values_given(tmp_path, capsys):
    """Printing the kernel IR after the protocol passes claims what they checked: N = 2 only."""
    path = write(tmp_path, REJECTED_AT_3.replace("COND", "3"))
    code, out, err = run(capsys, "-p", "verify-protocol,verify-deadlock", "--print-ir",
                         "--param", "N=2", path)
    assert code == 0, err
    assert "kernel k(" in out


@pytest.mark.parametrize("mode", [
    ("--print-ir",),
    ("-p", "verify-protocol", "--print-ir"),
    ("-p", "emit-gluon"),
    ("-p", "materialize-barriers", "--print-ir"),
])
def test_print_ir_refuses_an_unknown_param(tmp_path, capsys, mode):
    path = write(tmp_path, REJECTED_AT_3.replace("COND", "3"))
    code, out, err = run(capsys, *mode, "--param", "ZZ=1", path)
    assert code == 2, err
    assert "--param ZZ: no such param (known: N)" in err
    assert not out.strip()
    # a known one is taken (exit as its verdict or the lowering says, never 2)
    code, _, err = run(capsys, "-q", *mode, "--param", "N=1", path)
    assert code != 2, err


def test_print_ir_of_a_kir_file_refuses_an_unknown_param(tmp_path, capsys):
    src = write(tmp_path, REJECTED_AT_3.replace("COND", "3"))
    kir = str(tmp_path / "k.kir")
    assert tle_dump(["--print-ir", src, "-o", kir]) == 1  # rejected, the IR still written
    capsys.readouterr()
    code, out, err = run(capsys, "-q", "--print-ir", "--param", "ZZ=1", kir)
    assert code == 2 and "--param ZZ: no such param" in err, err
    code, out, err = run(capsys, "-p", "emit-gluon", "--param", "N=2", kir)
    assert code == 1 and "nothing is lowered" in err and not out.strip(), err


def warning_lines(err: str) -> list[str]:
    return [ln for ln in err.splitlines() if "warning" in ln.lower()]


@pytest.mark.parametrize("quiet", [(), ("-q",)], ids=["", "quiet"])
def test_emit_gluon_with_a_bound_refuses_what_gluon_refuses(tmp_path, capsys, quiet):
    """--bound 2 checks N in [-2, 2] only; the Gluon runs for every N and hangs at N = 3, so
    both --gluon and -p emit-gluon verify it with no bound and refuse it."""
    path = write(tmp_path, REJECTED_AT_3.replace("COND", "3"))
    code, out, gluon_err = run(capsys, *quiet, "--gluon", "--bound", "2", path)
    assert code == 1 and not out.strip()
    for pipeline in ("emit-gluon", "verify-protocol,verify-deadlock,emit-gluon"):
        code, out, err = run(capsys, *quiet, "-p", pipeline, "--bound", "2", path)
        assert code == 1, err
        assert not out.strip(), out[:200]
        assert errors(err) == errors(gluon_err), (err, gluon_err)
        assert "(when N=3, t=0)" in err


def test_emit_gluon_with_a_bound_prints_what_gluon_prints_with_one_warning_line(tmp_path,
                                                                                capsys):
    """A kernel right for every N, checked with --bound 2: the run's verdict is bounded, so both
    lower it with a warning (exit 3); -p emit-gluon says so on one `tle-dump: warning:` line, not
    as a Python warning with its source line."""
    path = write(tmp_path, REJECTED_AT_3.replace("COND", "-5"))
    code, gluon, gluon_err = run(capsys, "--gluon", "--bound", "2", path)
    assert code == 3 and "@gluon.jit" in gluon
    for quiet in ((), ("-q",)):
        code, emitted, err = run(capsys, *quiet, "-p", "emit-gluon", "--bound", "2", path)
        assert code == 3, err
        assert emitted == gluon
        (line,) = warning_lines(err)
        assert line.startswith("tle-dump: warning: ") and "only for N in [-2, 2]" in line, err
        assert "TleVerificationWarning" not in err and "emit(" not in err, err


@pytest.mark.parametrize("case, argv, want", [
    ("proved", (), 0),
    ("two-params", ("--param", "N=2"), 3),
])
def test_quiet_emit_gluon_still_prints_the_gluon(tmp_path, capsys, case, argv, want):
    """-q silences the report, not the product: -q -p emit-gluon prints the Gluon as
    -q --gluon does (it printed nothing, with exit 0 or 3)."""
    text = REJECTED_AT_3.replace("COND", "-5") if case == "proved" else TWO_PARAMS
    path = write(tmp_path, text)
    code, gluon, _ = run(capsys, "-q", "--gluon", *argv, path)
    assert code == want and "@gluon.jit" in gluon
    code, emitted, err = run(capsys, "-q", "-p", "emit-gluon", *argv, path)
    assert code == want, err
    assert emitted == gluon
    assert all(ln.startswith("tle-dump: warning: ") for ln in warning_lines(err)), err
    # a pipeline that prints the kernel IR stays quiet under -q (its verdict: for N = 2 only)
    code, out, err = run(capsys, "-q", "-p", "verify-protocol,verify-deadlock", "--print-ir",
                         *argv, path)
    assert code == 0 and not out.strip(), err
