"""A fifty-ninth adversarial round (adversarial round 59): round 58's open item (a `.pipe`
file's run-time division by a param that may be 0) and leads (a select on `-0.0`, a
`tl.minimum(N, 2**31 - 1)` trip count), then while loops, early returns, helpers called twice,
static ranges of constexpr expressions, param steps, `%` / `//` indices, releases in branches.
Each case is a small kernel read by tle-dump's main(); where it is about what Triton 3.6 does, a
plain ``@triton.jit`` kernel is compiled for sm_90a on the CPU (tests/adversarial_oracles.py).

A false verdict, fixed:

- a `.pipe` file's ``def N_M = N // M`` (or ``%``, a divisor such as ``M % 4`` or ``min(M,
  1)``) over ``base M any`` was "verified for every value of N_M (every integer N_M)", the
  launches with M = 0 (and M = -1 beside N = -2^31) included, where the GPU's arith.divsi is
  undefined; a Python kernel of the same division is rejected since round 58, and its printed
  protocol read back verified. FIXED: the .pipe reader keeps the same obligation for each
  run-time division of a definition whose divisor the `param` / `base` domains let be 0, or -1
  beside a dividend that may be the type's least value (interval arithmetic: ir/derived.py
  ``undefined_divisions``, ir/parser.py ``division_obligations``); the verdict rejects it at
  the `def`'s line (check division-by-zero) unless --param fixes the divisor where it is
  defined. A `constexpr(...)` definition (Python's division, at compile time) is left out.
  (tests/test_adversarial_cli_4.py's `N // (N - 3)`, read as "bounded" before, is now refused.)

False refusals, fixed:

- ``f = -0.0; n = N if f else 2`` (and ``-0.5``, ``-(0.0)``, ``- -0.0``, ``+0.0``, ``g = 0.5;
  f = -g``): Triton 3.6 folds the sign and selects by the float's truth (-0.0 is false), but
  the walk left ``-`` of a float an opaque value, so the bound was refused as non-affine
  (FIXED: protocol.py ``unary`` folds ``-`` / ``+`` of a float constant).
- ``tl.minimum(N, 2**31 - 1)`` against ``N`` ("unknown"), ``tl.maximum(N, 0)`` under N >= 0
  and ``tl.minimum(N, N)`` ("bounded"): a derived param checked as independent of N, whose
  faults need values no N gives. Never `verified` wrongly; now exact: a run-time i32 min / max
  of kernel arguments and loop variables whose operands' i32 domains decide it is that operand
  (FIXED: protocol.py
  ``decided_extremum``; ``2**31 - 2``, ``2**31`` (i64), ``tl.maximum(N, 4)`` under N >= 3 stay
  what they were).

Checked and held: ``N if -0.5 else 2`` (a compile-time float test) is refused as Triton
refuses it; ``-0.0 == 0`` and ``-0.0 < 0`` read as Triton compares; `while` loops with events,
an early `return` before events, `p % C` / `p // C` indices and indices computed from two loop
variables are refused (unsupported, as documented); an early `return` after the last event,
a release in both branches of an affine `if`, a helper performing a window called twice an
iteration (bounded; with one index twice: rejected), a release skipped at the last index or
under a constexpr, a static_range of constexpr expressions whose count differs from the
reader's, a two-reader pipe whose reader holds two tiles (spmc.py's `vsum` releasing `ck - 2`:
rejected) and one whose last release tests `N > 0` against `NK = tl.cdiv(N, 64)` (bounded,
never verified): each verdict true; `tl.maximum` of a u8 load and -1 is an i32 maxsi in Triton,
as read.

Left open: a min / max decided over params the kernel computes (`tl.maximum(x_hi - x_lo, 0)`
of mla_decode_seesaw.py at RUN = 1, x_lo = 0 and x_hi >= 1) stays a derived param (its operand
would become a param the lowered kernel's prologue does not hold). A `.pipe` definition whose divisor may be -1 only where the dividend cannot be the
least value (`N // (N - 3)` over `param N any <= 2`) is refused, as the Python frontend refuses
it: the intervals of divisor and dividend are taken independently. A condition on data whose
branches perform the same events (`if tl.load(p) > 0: r.release(i) else: r.release(i)`) is
refused (non-affine-if), a documented limit.
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


def test_the_pipe_division_in_json(tmp_path, capsys):
    """--format json: exit 1, verdict rejected, one diagnostic at the `def` line with the check."""
    import json

    from .adversarial_support import run_dump
    path = tmp_path / "kernel.pipe"
    path.write_text(_pipe())
    code, out, _ = run_dump(capsys, "--format", "json", str(path))
    obj = json.loads(out)
    (k,) = obj["kernels"]
    assert code == obj["exit_code"] == k["exit_code"] == 1 and k["verdict"] == "rejected", obj
    (d,) = k["diagnostics"]
    assert d["line"] == 5 and d["check"] == "division-by-zero", d


# --------------------------------------------- A2b: comparisons of a signed float

@pytest.mark.parametrize("prelude, picks", [("f = -0.0\nn = N if f == 0 else 2", "N"),
                                            ("f = -0.0\nn = N if f < 0 else 2", "2"),
                                            ("f = -(0.5)\nn = N if f < 0 else 2", "N")])
def test_a_comparison_of_a_signed_float(tmp_path, capsys, monkeypatch, prelude, picks):
    """Held (and checked against Triton): -0.0 equals 0 and is not below it; -(0.5) is."""
    body = prelude + "\nfor i in range(n):\n    tl.store(x_ptr + i, 1.0)"
    ttir = triton_ttir(tmp_path, monkeypatch, triton_k(body), "r59fcmp")
    bound = "%N" if picks == "N" else "%c2_i32"
    assert f"scf.for %i = %c0_i32 to {bound} step" in ttir, ttir
    writer = prelude + "\n" + WRITER.replace("range(N)", "range(n)")
    code, err = dump(tmp_path, capsys, kernel(writer, READER))
    expect(code, err, "verified" if picks == "N" else ("rejected", "never commits"))


# ----------------------------------------------------------------- B: held cases

HELP_W = '''

def push(w, x_ptr, i):
    s = w.acquire(i)
    tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + tl.arange(0, 64)))
    w.commit(i)
'''


@pytest.mark.parametrize("writer, reader, extra, want", [
    # a helper that performs a window, called twice an iteration (two indices; one twice)
    (loop("for p in range(N):", "push(w, x_ptr, 2 * p)\npush(w, x_ptr, 2 * p + 1)"),
     loop("for p in range(2 * N):", get("p")), HELP_W, ("bounded",)),
    (loop("for p in range(N):", "push(w, x_ptr, 2 * p)\npush(w, x_ptr, 2 * p)"),
     loop("for p in range(2 * N):", get("p")), HELP_W, ("rejected", "never commits")),
    # an early `return` after the last event, and one before events
    (WRITER + "return\n", READER, "", "verified"),
    # (round FR20: read as an if / else, the writer skipping every commit the reader waits)
    ("if N > 5:\n    return\n" + WRITER, READER, "", ("rejected", "[wait-never-committed]")),
    # a release in both branches of an affine `if`; a release skipped at the last index
    (WRITER, loop("for p in range(N):", "res = r.wait(p)\nif p % 2 == 0:\n    "
                  "tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))"
                  "\n    r.release(p)\nelse:\n    r.release(p)"), "", "verified"),
    (WRITER, loop("for p in range(N):", "res = r.wait(p)\nif p < N - 1:\n    r.release(p)"), "",
     ("rejected", "never releases")),
    # a release under a constexpr the generic reading leaves open (C = 0 skips it)
    (WRITER, loop("for p in range(N):", "res = r.wait(p)\nif C > 3:\n    r.release(p)"), "",
     ("rejected", "never releases")),
    # a static_range of constexpr expressions against the writer's count
    (loop("for j in tl.static_range(C // 2, C):", put("j - C // 2")),
     loop("for j in range(C // 2):", get("j")), "", ("rejected", "never waits")),
])
def test_held(tmp_path, capsys, writer, reader, extra, want):
    code, err = dump(tmp_path, capsys, kernel(writer, reader, extra=extra))
    if want == ("bounded",):
        assert code == 3 and ": verified for " not in err, err
    else:
        expect(code, err, want)
