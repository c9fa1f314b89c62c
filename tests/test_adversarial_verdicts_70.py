"""A seventieth adversarial round (adversarial round 70): protocols whose safety rests on
arithmetic the verifier must get exactly right, away from the tl.static_range area of rounds
66-69: pipe indices and loop bounds affine in several params, phases across the capacity
boundary for capacities 1 to 4 and a capacity of a constexpr, negative steps, empty ranges,
trip counts of ``tl.cdiv``, ``//``, ``%`` and ``>>`` of run-time params (C's truncating
division and remainder on negative values), i32 wrap of bounds and of the definitions of
derived params, ``tle.assume`` domains, nested loops whose inner bound reads the outer variable,
conditions on remainders of the loop variable, out-of-order releases, early ``return`` /
``break``, and the claim "verified for every value ... (cutoff theorem)" on such kernels. Each
case is a small kernel read by tle-dump's main().

False verdicts: none found. Every "verified for every value" claim met here was checked by
reasoning (the indices each partition performs, written out) and, where it mattered, against
a value where a faulty twin of the kernel fails; the faulty twins are all rejected at the value
where they fail.

Checked and held (no false verdict found):

- a prologue of three windows, then ``range(N)`` waiting ``p + 3`` against a writer over
  ``range(N + 3)``, at capacities 1, 3, 4 and ``C - 1`` (read specialised to C = 5): verified
  for every N by the cutoff theorem; the twin waiting ``p + 4`` rejected at N = 1;
- ``tl.cdiv(N, 4)`` against ``(N + 3) // 4`` (one derived param: Triton's cdiv is that
  expression, wrap included): verified; against ``N // 4 + 1``, rejected at N = 0; against
  ``-(-N // 4)``: rejected at N = 1, where Triton's truncating division gives 0 (the TTIR
  divides with ``arith.divsi``), not Python's ceiling;
- ``N // 4 == 0`` against ``(N >> 2) == 0`` without a lower bound: rejected at N = -1 (C's
  quotient 0, the shift's -1); ``N % 4 == 1`` against ``(N & 3) == 1``: rejected at N = -3
  (C's remainder -3, the mask's 1);
- ``(N * 2 ** 30) // 2 ** 30`` as a trip count beside ``range(N)`` under ``N <= 3``: bounded
  to [0, 1], the wrap at N = 2 named (the GPU's quotient is -2 there: the reader hangs);
  ``range(N)`` against ``range(M, N + M)`` at ``--param M=2147483000``: unknown, the bound
  ``M + N`` named outside i32 at N = 648, nothing claimed beyond the values checked;
- ``if p < N - 3`` in ``range(N)`` against ``range(N - 3)``: verified for every N; ``if (3 * p)
  % 200 != 199`` in the reader only: rejected at N = 134 (p = 133, past any small sweep); ``if
  (p - N) % 200 != -150`` (C's remainder of a negative operand): rejected at N = 150;
- ``if N % 4 == -1`` against ``if (N + 200) % 4 == 3`` under ``N <= 0`` (unbounded below):
  rejected at N = -201, where the second operand turns negative; under ``-200 <= N <= 0``:
  verified for every value; ``N % 3 == 2`` against ``(N + 1) % 3 == 0`` beside a loop over N:
  verified, against ``(N + 4) % 6 == 0``: rejected at N = 5;
- window 0 written before ``range(1, N)``: verified for N >= 1 under ``tle.assume(N >= 1)``
  (or ``N > 0``), rejected at N = 0 under ``N >= 0``;
- ``range(N - M)`` against ``range(N)`` with ``if p >= M`` at ``--param M=3``: verified for
  every N; ``--param N=3`` instead (the loop over M is not of the fragment's form): bounded;
- two windows held at once (``wait(2i)``, ``wait(2i + 1)``, released in reverse order):
  verified for every N at capacities 2, 3 and 4, rejected at capacity 1 (wait-on-held-stage);
- a triangular nest ``for j in range(i, 3)`` writing ``3 * i + j`` (indices 0, 1, 2, 4, 5, 8):
  rejected; an inner ``range(2 * i, 2 * i + 2)`` in the N-loop: bounded (outside the fragment,
  named), never claimed for every value.

Held (false refusals, not fixed): ``for p in range(0, 2 * N, 2): w.acquire(p // 2)``, which
Triton 3.6 compiles and which is correct, is refused (non-affine: the protocol view has no
iteration counter to rewrite ``p // 2`` over); ``if p < N % 4:`` around events (non-affine-if;
Triton compiles it); a reader that waits index by index in a ``while`` loop (unsupported
control flow). ``break`` and ``return`` inside a loop are refused as Triton 3.6 refuses them.

Left open: ``tle.assume(N % 2 == 0)`` narrows the values checked but the cutoff theorem is not
run over the even values alone (``range(N // 2 * 2)`` against ``range(N)``: bounded, not
verified); ``tle.assume(N <= M)`` (two params) is refused as bad-assume.
"""

from __future__ import annotations

import pytest

from .adversarial_oracles import triton_compile_error, triton_ttir
from .adversarial_support import TRITON_K, dump, expect, get, kernel, loop, put, triton_k

ASSUME = "tle.assume(N >= 0)\n"


def ring(writer: str, reader: str, assume: str = ASSUME, capacity: str = "2") -> str:
    """Round 28's kernel with the pipe of capacity ``capacity`` (its tile's leading dimension
    the same) and ``assume`` in place of its `tle.assume(N >= 0)` (none when empty)."""
    text = kernel(writer, reader).replace("    tle.assume(N >= 0)\n", "".join(
        f"    {line}\n" for line in assume.splitlines()))
    return text.replace("capacity=2, tile=tle.gpu.alloc([2,",
                        f"capacity={capacity}, tile=tle.gpu.alloc([{capacity},")


def two_params(writer: str, reader: str) -> str:
    """``ring`` with a second i32 param M >= 0 passed to both partitions."""
    text = ring(writer, reader, ASSUME + "tle.assume(M >= 0)\n")
    return (text.replace("N, C: tl.constexpr", "N, M, C: tl.constexpr")
            .replace("N, C))", "N, M, C))").replace(", N, C)", ", N, M, C)")
            .replace('"N": "i32"', '"N": "i32", "M": "i32"'))


def every_value(err: str) -> None:
    """The claim is the cutoff theorem's, for every value of N."""
    assert "verified for every value of N" in err and "cutoff theorem" in err, err


# ------------------------------------------------ A: windows across the capacity boundary


def _offset(wait: str) -> tuple[str, str]:
    """A writer over ``range(N + 3)``; a reader of the windows 0..2, then ``range(N)`` waiting
    ``wait``."""
    return (loop("for p in range(N + 3):", put("p")),
            loop("for p in range(3):", get("p")) + loop("for p in range(N):", get(wait)))


@pytest.mark.parametrize("capacity", ["1", "3", "4", "C - 1"])
def test_an_offset_loop_after_a_prologue_at_each_capacity(tmp_path, capsys, capacity):
    """``p + 3``: the writer's indices 0..N+2, the reader's the same: verified for every N.
    ``p + 4``: the reader skips 3 and waits N + 3, never committed: rejected at N = 1."""
    code, err = dump(tmp_path, capsys, ring(*_offset("p + 3"), capacity=capacity))
    expect(code, err, "verified")
    every_value(err)
    code, err = dump(tmp_path, capsys, ring(*_offset("p + 4"), capacity=capacity))
    expect(code, err, ("rejected", "when N=1"))


HELD_TWO = ("a = r.wait(2 * i)\nb = r.wait(2 * i + 1)\nr.release(2 * i + 1)\n"
            "r.release(2 * i)\n")


@pytest.mark.parametrize("capacity", ["1", "2", "3", "4"])
def test_two_windows_held_and_released_in_reverse(tmp_path, capsys, capacity):
    """The reader holds the windows 2i and 2i + 1 together: at capacity 1 both are stage 0
    (a wait on a held stage); from capacity 2 on they are two stages, each released before
    the writer needs it again."""
    text = ring(loop("for i in range(N):", put("2 * i") + put("2 * i + 1")),
                loop("for i in range(N):", HELD_TWO), capacity=capacity)
    code, err = dump(tmp_path, capsys, text)
    if capacity == "1":
        expect(code, err, ("rejected", "[wait-on-held-stage]"))
    else:
        expect(code, err, "verified")
        every_value(err)


# ------------------------------------------- B: trip counts of divisions of run-time params

DIVISIONS = {
    # Triton's cdiv is `(x + div - 1) // div`: one value, wrap included
    "cdiv-as-written": ("tl.cdiv(N, 4)", "(N + 3) // 4", ASSUME, "verified"),
    # N = 0: one wait, no commit
    "cdiv-plus-one": ("tl.cdiv(N, 4)", "N // 4 + 1", ASSUME,
                      ("rejected", "[wait-never-committed]", "when N=0")),
    # C's truncating division: -(-1 // 4) is 0 at N = 1, where cdiv is 1
    "negated-quotient": ("tl.cdiv(N, 4)", "-(-N // 4)", ASSUME,
                         ("rejected", "[unconsumed]", "when N=1")),
}


@pytest.mark.parametrize("name", DIVISIONS)
def test_trip_counts_of_divisions(tmp_path, capsys, name):
    wbound, rbound, assume, want = DIVISIONS[name]
    text = ring(loop(f"for p in range({wbound}):", put("p")),
                loop(f"for p in range({rbound}):", get("p")), assume)
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, want)
    if want == "verified":
        assert "verified for every value of cdiv_N_4" in err, err


def test_the_triton_oracle_of_a_negated_quotient(tmp_path, monkeypatch):
    """Triton 3.6 divides run-time integers with C's truncating ``arith.divsi`` (no floor
    correction): ``-(-N // 4)`` is no ceiling for N > 0."""
    ttir = triton_ttir(tmp_path, monkeypatch, triton_k("tl.store(x_ptr + (-(-N // 4)), 1.0)"),
                       "negated_quotient")
    assert "arith.divsi" in ttir, ttir
    assert "arith.floordivsi" not in ttir, ttir


SIGNED = {
    # N = -1: C's quotient -1 // 4 is 0, the shift -1 >> 2 is -1
    "quotient-and-shift": ("N // 4 == 0", "(N >> 2) == 0", ("rejected", "when N=-1")),
    # N = -3: C's remainder -3 % 4 is -3, the mask -3 & 3 is 1
    "remainder-and-mask": ("N % 4 == 1", "(N & 3) == 1", ("rejected", "when N=-3")),
}


@pytest.mark.parametrize("name", SIGNED)
def test_c_division_of_negative_params_against_bit_operations(tmp_path, capsys, name):
    """No lower bound on N: the two tests agree on every N >= 0 and differ below zero."""
    wcond, rcond, want = SIGNED[name]
    text = ring(loop(f"if {wcond}:", put("0")), loop(f"if {rcond}:", get("0")), assume="")
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, want)


# --------------------------------------------------------------- C: i32 wrap of bounds


def test_a_derived_param_whose_definition_wraps(tmp_path, capsys):
    """At N = 2, ``N * 2 ** 30`` is 2 ** 31: the GPU's quotient is -2 and the writer commits
    nothing while the reader waits twice. Claimed for N in [0, 1] only, the wrap named."""
    text = ring(loop("for p in range((N * 1073741824) // 1073741824):", put("p")),
                loop("for p in range(N):", get("p")), ASSUME + "tle.assume(N <= 3)\n")
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, ("bounded", "only for N in [0, 1]", "outside i32"))


def test_a_loop_bound_that_wraps_at_a_fixed_param(tmp_path, capsys):
    """``range(M, N + M)`` at M = 2147483000: from N = 648 the bound wraps and the reader runs
    no iteration (the writer hangs on its third acquire); nothing claimed past the wrap."""
    text = two_params(loop("for p in range(N):", put("p")),
                      loop("for p in range(M, N + M):", get("p - M")))
    code, err = dump(tmp_path, capsys, text, "--param", "M=2147483000")
    expect(code, err, ("unknown", "at N=648", "outside i32"))
    assert "verified" not in err, err


# ------------------------------------------------- D: conditions on the loop variable


def test_a_condition_against_the_param(tmp_path, capsys):
    """``if p < N - 3`` in ``range(N)`` writes 0..N-4, what ``range(N - 3)`` waits."""
    text = ring(loop("for p in range(N):", loop("if p < N - 3:", put("p"))),
                loop("for p in range(N - 3):", get("p")))
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, "verified")
    every_value(err)


REMAINDERS = {
    # 3 * 133 = 399 = 199 mod 200: the first index skipped is 133
    "scaled": ("(3 * p) % 200 != 199", "when N=134"),
    # C's remainder of p - N < 0 is -150 at p = N - 150: first at N = 150
    "negative": ("(p - N) % 200 != -150", "when N=150"),
}


@pytest.mark.parametrize("name", REMAINDERS)
def test_a_remainder_condition_that_skips_late(tmp_path, capsys, name):
    """The reader skips one index first at a large N; the writer commits every index."""
    cond, where = REMAINDERS[name]
    text = ring(loop("for p in range(N):", put("p")),
                loop("for p in range(N):", loop(f"if {cond}:", get("p"))))
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, ("rejected", where))


NEGATIVE = {
    # N % 4 == -1 holds for negative N = 3 mod 4; (N + 200) % 4 == 3 only while N + 200 >= 0
    "unbounded-below": ("tle.assume(N <= 0)\n", ("rejected", "[unconsumed]", "when N=-201")),
    "bounded-below": ("tle.assume(N <= 0)\ntle.assume(N >= -200)\n", "verified"),
}


@pytest.mark.parametrize("name", NEGATIVE)
def test_c_remainders_of_a_negative_domain(tmp_path, capsys, name):
    """Two C remainders that agree on [-200, 0] and differ first at -201."""
    assume, want = NEGATIVE[name]
    text = ring(loop("if N % 4 == -1:", put("0")), loop("if (N + 200) % 4 == 3:", get("0")),
                assume)
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, want)
    if want == "verified":
        assert "verified for every value of N (-200 <= N <= 0)" in err, err


@pytest.mark.parametrize("cond, want", [("(N + 1) % 3 == 0", "verified"),
                                        ("(N + 4) % 6 == 0", ("rejected", "when N=5"))])
def test_a_window_of_index_n_under_a_remainder(tmp_path, capsys, cond, want):
    """The window N written when ``N % 3 == 2``: the same N for ``(N + 1) % 3 == 0`` (N >= 0),
    not for ``(N + 4) % 6 == 0`` (N = 2 mod 6 only)."""
    text = ring(loop("for p in range(N):", put("p")) + loop("if N % 3 == 2:", put("N")),
                loop("for p in range(N):", get("p")) + loop(f"if {cond}:", get("N")))
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, want)
    if want == "verified":
        every_value(err)


@pytest.mark.parametrize("assume, want", [
    ("tle.assume(N >= 1)\n", "verified"), ("tle.assume(N > 0)\n", "verified"),
    (ASSUME, ("rejected", "[unconsumed]", "when N=0"))])
def test_a_first_window_outside_the_loop_under_assume(tmp_path, capsys, assume, want):
    """Window 0 before ``range(1, N)``: one commit too many at N = 0 only."""
    text = ring(put("0") + loop("for p in range(1, N):", put("p")),
                loop("for p in range(N):", get("p")), assume)
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, want)
    if want == "verified":
        assert "verified for every value of N (N >= 1)" in err, err


def test_two_params_one_fixed(tmp_path, capsys):
    """``range(N - M)`` against ``range(N)`` with ``if p >= M``: the same count for every N, M
    (both empty for N <= M). Proved for every N at M = 3; at N = 3 the loop over M is outside
    the fragment: bounded."""
    text = two_params(loop("for p in range(N - M):", put("p")),
                      loop("for p in range(N):", loop("if p >= M:", get("p - M"))))
    code, err = dump(tmp_path, capsys, text, "--param", "M=3")
    expect(code, err, "verified")
    every_value(err)
    code, err = dump(tmp_path, capsys, text, "--param", "N=3")
    expect(code, err, ("bounded", "outside the fragment of the cutoff theorem"))


# ----------------------------------------------------------------------- E: nested loops


def test_a_triangular_nest_of_constant_bounds(tmp_path, capsys):
    """``for i in range(3): for j in range(i, 3)`` writing ``3 * i + j``: 0, 1, 2, 4, 5, 8."""
    text = ring(loop("for i in range(3):", loop("for j in range(i, 3):", put("3 * i + j"))),
                loop("for p in range(9):", get("p")))
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, ("rejected", "[order-mismatch]"))


def test_an_inner_bound_of_the_n_loop_variable(tmp_path, capsys):
    """Correct (0..2N-1 both ways), but the inner bounds move with `i`: bounded, never the
    cutoff theorem's claim."""
    text = ring(loop("for i in range(N):", loop("for j in range(2 * i, 2 * i + 2):", put("j"))),
                loop("for i in range(N):", loop("for j in range(2):", get("2 * i + j"))))
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, ("bounded", "nested or triangular loops"))


# ------------------------------------------------------------ F: held false refusals


def test_held_a_step_two_loop_divided_back(tmp_path, capsys, monkeypatch):
    """Triton 3.6 compiles ``range(0, 2 * N, 2)`` with ``p // 2``; tle-dump refuses it."""
    source = triton_k("for p in range(0, 2 * N, 2):\n    tl.store(x_ptr + p // 2, 1.0)")
    assert triton_compile_error(tmp_path, monkeypatch, source, "step_two") is None
    text = ring(loop("for p in range(0, 2 * N, 2):", put("p // 2")),
                loop("for p in range(N):", get("p")))
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, ("rejected", "[non-affine]", "`p // 2`"))


def test_held_a_condition_on_a_remainder_of_the_param(tmp_path, capsys, monkeypatch):
    source = triton_k("for p in range(3):\n    if p < N % 4:\n        tl.store(x_ptr + p, 1.0)")
    assert triton_compile_error(tmp_path, monkeypatch, source, "mod_if") is None
    text = ring(loop("for p in range(N % 4):", put("p")),
                loop("for p in range(3):", loop("if p < N % 4:", get("p"))), assume="")
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, ("rejected", "[non-affine-if]"))


EXITS = {
    "break": ("break", "unsupported AST node type: Break"),
    "return": ("return", "Cannot have `return` statements inside"),
}


@pytest.mark.parametrize("name", EXITS)
def test_an_exit_from_a_loop_around_events(tmp_path, capsys, monkeypatch, name):
    """Triton 3.6 refuses ``break`` and ``return`` inside a loop, and so does tle-dump."""
    stmt, triton_says = EXITS[name]
    source = TRITON_K + (f"    for p in range(N):\n        if p == 3:\n            {stmt}\n"
                         "        tl.store(x_ptr + p, 1.0)\n")
    error = triton_compile_error(tmp_path, monkeypatch, source, f"exit_{name}")
    assert error is not None and triton_says in str(error), error
    text = ring(loop("for p in range(N):", loop("if p == 3:", f"{stmt}\n") + put("p")),
                loop("for p in range(tl.minimum(N, 3)):", get("p")))
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, ("rejected", "[unsupported-control-flow]"))
