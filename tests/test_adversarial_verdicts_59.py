"""A fifty-ninth adversarial round (adversarial round 59): round 58's open item (a `.pipe`
file's run-time division by a param that may be 0), then DOCSTRING_REST
"""

from __future__ import annotations

import pytest

from .adversarial_oracles import triton_compile_error, triton_ttir
from .adversarial_support import dump, expect, get, kernel, loop, put, triton_k

#: the ring's writer and reader over N windows
WRITER = loop("for p in range(N):", put("p"))
READER = loop("for p in range(N):", get("p"))


# ------------------------------------------ A1: a .pipe definition dividing by a param

DIVIDED_PIPE = """kernel k
param N_M any
base M BOUND_M
base N BOUND_N
def N_M = DEFINITION

pipe kv capacity=2 fields=(tile)

partition produce default warps=4 {
  for p in range(N_M) {
    kv.acquire(p)
    kv.write(p, tile)
    kv.commit(p)
  }
}

partition consume warps=4 regs=232 {
  for p in range(N_M) {
    kv.wait(p)
    kv.read(p, tile)
    kv.release(p)
  }
}
"""

_PIPE_ZERO = ("rejected", "kernel.pipe:5: error: 'def N_M = ", "[division-by-zero]",
              "may be 0 in the params' domains", "('base M >= 1')")
_PIPE_MINUS_ONE = ("rejected", "kernel.pipe:5: error: ", "[division-by-zero]",
                   "may be -1 where 'N' may be -2147483648")


def _pipe(definition="N // M", m="any", n=""):
    return (DIVIDED_PIPE.replace("DEFINITION", definition).replace("BOUND_M", m)
            .replace("BOUND_N", n).replace(" \n", "\n"))


@pytest.mark.parametrize("definition, m, n, want", [
    ("N // M", "any", "", _PIPE_ZERO),
    ("N % M", "any", "", _PIPE_ZERO),
    ("N // M", ">= -5", "", _PIPE_ZERO),
    ("N // (M - 1)", ">= 1", "", ("rejected", "[division-by-zero]", "divisor 'M - 1' may be 0")),
    ("N // max(M, 1)", "any", "", "verified"),
    ("N // min(M, 1)", "any", "", ("rejected", "[division-by-zero]", "divisor 'min(M, 1)'")),
    ("N // (M % 4)", "any", "", ("rejected", "[division-by-zero]")),
    ("N // M", ">= 1", "", "verified"),
    ("N // M", "any <= -1", "any", _PIPE_MINUS_ONE),
    ("N // M", "any <= -1", "", "verified"),
    ("N // M", "any <= -1", ">= -2147483647", "verified"),
    ("i64(N // M)", "any <= -2", "any", "verified"),
    # Python's division of constexprs, at compile time: Triton refuses it there, no launch
    ("constexpr(N // M)", "any", "", "verified"),
])
def test_a_pipe_definition_dividing_by_a_param_that_may_be_zero(tmp_path, capsys, definition,
                                                                 m, n, want):
    """`def N_M = N // M` over `base M any` was "verified for every value of N_M (every integer
    N_M)", the launches with M = 0 included, where a Python kernel of the same division is
    rejected (division-by-zero, round 58), and so tle-dump's printed protocol of a rejected
    kernel read back verified."""
    code, err = dump(tmp_path, capsys, _pipe(definition, m, n), name="kernel.pipe")
    expect(code, err, want)


@pytest.mark.parametrize("params, want", [
    (("M=3",), "verified"), (("M=0",), _PIPE_ZERO), (("M=-1", "N=5"), "verified"),
])
def test_a_pipe_division_by_a_param_given_by_param(tmp_path, capsys, params, want):
    """--param values that fix the divisor where it is defined keep the verdict, as for a Python
    kernel (verify_protocol._division_defined reads the same operands)."""
    flags = [a for p in params for a in ("--param", p)]
    code, err = dump(tmp_path, capsys, _pipe(n="any" if "N=5" in params else ""), *flags,
                     name="kernel.pipe")
    expect(code, err, want)


PY_DIVIDED = '''import triton.language as tl
import tle_compiler as tle


@tle.jit
def k(x_ptr, y_ptr, M, N):
    ASSUME
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, M, N)), (consume, (kv, y_ptr, M, N))],
                            [4], [232])


def produce(kv, x_ptr, M, N):
    w = kv.writer()
    for p in range(N // M):
        s = w.acquire(p)
        tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + tl.arange(0, 64)))
        w.commit(p)


def consume(kv, y_ptr, M, N):
    r = kv.reader()
    for p in range(N // M):
        res = r.wait(p)
        tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))
        r.release(p)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "M": "i32", "N": "i32"},
                  "constexprs": {}}
'''


@pytest.mark.parametrize("assume, code", [
    ("tle.assume(N >= 0)", 1), ("tle.assume(N >= 0)\n    tle.assume(M >= 1)", 0)])
def test_the_printed_protocol_reads_back_with_the_kernels_verdict(tmp_path, capsys, assume,
                                                                   code):
    """The report of the Python kernel (rejected at `N // M`, verified with M >= 1) read back as
    a .pipe file gets the same exit status: before, the rejected one read back verified."""
    from .adversarial_support import run_dump
    path = tmp_path / "k.py"
    path.write_text(PY_DIVIDED.replace("ASSUME", assume))
    got, out, err = run_dump(capsys, "--no-locations", str(path))
    assert got == code, err
    assert "def N_M = N // M" in out, out
    back = tmp_path / "k.pipe"
    back.write_text(out)
    got, _, err = run_dump(capsys, "-q", str(back))
    assert got == code, err
    if code:
        assert "[division-by-zero]" in err, err


# ------------------------------------------------ A2: a select on a signed float literal

@pytest.mark.parametrize("value, picks", [("-0.0", "2"), ("-(0.0)", "2"), ("- -0.0", "2"),
                                          ("+0.0", "2"), ("-0.5", "N"), ("-(-0.5)", "N"),
                                          ("-1e-50", "N")])
def test_triton_selects_on_a_signed_float_by_its_truth(tmp_path, monkeypatch, value, picks):
    body = f"f = {value}\nn = N if f else 2\nfor i in range(n):\n    tl.store(x_ptr + i, 1.0)"
    ttir = triton_ttir(tmp_path, monkeypatch, triton_k(body), "r59fsel")
    bound = "%N" if picks == "N" else "%c2_i32"
    assert f"scf.for %i = %c0_i32 to {bound} step" in ttir, ttir


@pytest.mark.parametrize("value, want", [
    ("-0.5", "verified"), ("-(-0.5)", "verified"), ("-1e-50", "verified"),
    ("-0.0", ("rejected", "never commits")), ("-(0.0)", ("rejected", "never commits")),
    ("- -0.0", ("rejected", "never commits")), ("+0.0", ("rejected", "never commits"))])
def test_a_select_on_a_signed_float_reads_its_truth(tmp_path, capsys, value, want):
    """`f = -0.0; n = N if f else 2` (or `-0.5`) was refused as a non-affine loop bound: the
    unary minus of a float was an opaque value, where round 58 read a float literal's truth;
    -0.0 is false (the writer's two windows against the reader's N), -0.5 true."""
    writer = f"f = {value}\nn = N if f else 2\n" + WRITER.replace("range(N)", "range(n)")
    code, err = dump(tmp_path, capsys, kernel(writer, READER))
    expect(code, err, want)


@pytest.mark.parametrize("prelude, picks", [("g = 0.5\nf = -g\ng = 0.0\n", "N"),
                                            ("g = 0.0\nf = -g\ng = 0.5\n", "2")])
def test_the_negation_of_a_name_bound_to_a_float(tmp_path, capsys, monkeypatch, prelude, picks):
    """`g = 0.5; f = -g` (g rebound after): Triton negates the fp32 tensor g was, and the select
    reads f's value then; the walk folds `-` of a float constant to the float it is."""
    body = prelude + "n = N if f else 2\nfor i in range(n):\n    tl.store(x_ptr + i, 1.0)"
    ttir = triton_ttir(tmp_path, monkeypatch, triton_k(body), "r59fneg")
    bound = "%N" if picks == "N" else "%c2_i32"
    assert f"scf.for %i = %c0_i32 to {bound} step" in ttir, ttir
    writer = prelude + "n = N if f else 2\n" + WRITER.replace("range(N)", "range(n)")
    code, err = dump(tmp_path, capsys, kernel(writer, READER))
    expect(code, err, "verified" if picks == "N" else ("rejected", "never commits"))


def test_a_signed_float_as_the_test_itself_is_refused_as_triton_does(tmp_path, capsys,
                                                                      monkeypatch):
    """Held: `N if -0.5 else 2` (a compile-time float as the test): Triton refuses it."""
    body = "n = N if -0.5 else 2\nfor i in range(n):\n    tl.store(x_ptr + i, 1.0)"
    assert triton_compile_error(tmp_path, monkeypatch, triton_k(body), "r59fdir") is not None
    writer = "n = N if -0.5 else 2\n" + WRITER.replace("range(N)", "range(n)")
    code, err = dump(tmp_path, capsys, kernel(writer, READER))
    expect(code, err, ("rejected", "compile-time float -0.5"))


# ------------------------------------------- A3: a min / max the i32 domains decide

@pytest.mark.parametrize("wbound, rbound, assume, want", [
    ("tl.minimum(N, 2**31 - 1)", "N", "", "verified"),
    ("min(N, 2**31 - 1)", "N", "", "verified"),
    ("tl.where(N < 2**31 - 1, N, 2**31 - 1)", "N", "", "verified"),
    ("tl.maximum(N, 0)", "N", "", "verified"),
    ("tl.minimum(N, N)", "N", "", "verified"),
    ("tl.maximum(N, 3)", "N", "tle.assume(N >= 3)", "verified"),
    ("tl.maximum(N - 5, -2**31)", "N - 5", "", "verified"),
    ("tl.minimum(N, 2**31 - 1)", "tl.minimum(N, 2**31 - 1)", "", "verified"),
    # not decided by the domains: a bound, an unknown or a refusal, never `verified`
    ("tl.maximum(N, 4)", "N", "tle.assume(N >= 3)", ("rejected", "maximum_N_4=4")),
    ("tl.minimum(N, 100)", "N", "", ("rejected", "minimum_N_100=100")),
    ("tl.minimum(N, 2**31 - 2)", "N", "", ("unknown",)),
    ("tl.minimum(N, 2**31)", "N", "", ("unknown",)),
])
def test_a_min_or_max_its_operands_domains_decide(tmp_path, capsys, wbound, rbound, assume,
                                                   want):
    """`tl.minimum(N, 2**31 - 1)` against N (N an i32: it is always N) was "unknown" (a derived
    param checked as independent of N, whose fault at 0 against N = 1 no N gives), as was
    `tl.maximum(N, 0)` under N >= 0 ("bounded"): the walk now reads the operand the domains
    always choose; `2**31 - 2` (N = 2^31 - 1 is below it) stays a derived param."""
    writer = loop(f"for p in range({wbound}):", put("p"))
    reader = loop(f"for p in range({rbound}):", get("p"))
    code, err = dump(tmp_path, capsys, kernel(writer, reader, body=assume + "\n"))
    if want == ("unknown",):
        assert code == 3 and ": verified for " not in err, err
    else:
        expect(code, err, want)


def test_a_min_of_a_param_of_any_sign_stays_a_derived_param(tmp_path, capsys):
    """Held: without `tle.assume(N >= 0)`, `tl.maximum(N, 0)` against N differs at N < 0 (the
    writer's none against the reader's none: equal) - but `tl.maximum(N, 1)` differs at N = 0."""
    text = kernel(loop("for p in range(tl.maximum(N, 1)):", put("p")), READER)
    text = text.replace("    tle.assume(N >= 0)\n", "")
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, ("rejected", "maximum_N_1=1"))


def test_the_decided_minimum_lowers_to_its_events(tmp_path):
    from .adversarial_oracles import lowers_to_its_events
    path = tmp_path / "kernel.py"
    path.write_text(kernel(loop("for p in range(tl.minimum(N, 2**31 - 1)):", put("p")), READER))
    lowers_to_its_events(path)
