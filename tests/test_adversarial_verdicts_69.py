"""A sixty-ninth adversarial round (adversarial round 69): round 68's fresh code (the per-function
static bounds of frontend/build_loops.py, ``tensor_names`` / ``carried_retyped``, ``picks_by``,
build_support.picked_at_compile_time) and the names a tl.static_range loop leaves bound, tried
for false claims under `if`s that Triton 3.6 decides when it compiles the kernel. Each case is a
small kernel read by tle-dump's main().

False verdicts, fixed:

- ``j = 0``, then ``if C > 3: for j in tl.static_range(2): w.acquire(j // 1) ...`` (``else:``
  the windows 0 and 1 written out), then ``w.acquire(j + 2)``, a reader of three windows: Triton
  3.6 builds only the branch C chooses, in the enclosing scope, so at C = 5 `j` holds the
  constexpr 1 after it and the writer commits 0, 1, 3 (the reader hangs on 2); the Triton
  oracle reads the offset `j + 100` as 101. It was verified "for every value of C": the
  unrolled iterations bind `j` to numbers and assign it no statement of the kernel IR, so the
  reading of both branches merged `j` into the kernel IR's variable, 0 from before. Under a
  `range` loop (``for p in range(2): w.acquire(3 * p + j); if C > 3: for j in
  tl.static_range(1, 3): ...``), which Triton refuses at C = 5 ("Loop carried variable j
  changed type"), ``--param C=5`` printed "verified for C = 5". FIXED:
  frontend/build_statements.py ``static_binding_chosen`` (called by ``runtime_if`` for an `if`
  decided at compile time but not in this build): a name bound before the `if` (or by both
  branches) that the branches leave with different tl.static_range bindings stops the generic
  reading, and the kernel is read specialised to the constexprs of the test
  (``undecided_choice``), where the `if` folds: the hang found at C = 5, the loop's change of
  type refused as Triton refuses it, ``--param C=2`` (the else branch) verified.
- The same inside a tl.static_range loop: ``j = 0``, then ``for i in tl.static_range(2):
  w.acquire(3 * i + j); if i == 0: for j in tl.static_range(1, 3): w.acquire(j // 1)``:
  Triton unrolls the outer loop and folds each iteration's `if`, so the second iteration
  acquires 3 * 1 + 2 = 5 (the oracle's offsets 0, 11, 12, 3 of its twin); the outer loop was
  built once with `i` a name, `j` read as 0 again, and the kernel verified. FIXED:
  frontend/build_loops.py ``loop_binds_by`` (called by ``indexes_by``, and by ``s_For`` beside
  ``divides`` and ``picks_by`` for bounds of constexprs): an `if` on the variable with a loop in
  a branch whose variable is bound before the loop or read beside the `if` unrolls the loop
  (read specialised where the kernel's constexprs bound it); ``static_binding_chosen`` refuses
  what is still built once (``q = i`` then ``if q == 0:``, which Triton refuses too: `q` is a
  tensor, "the then block redefines it as constexpr[2]").
- A run-time `if` rebinding a constexpr: `j` = 0 from ``for j in tl.static_range(1)``, then
  ``if N > 0: for j in tl.static_range(3): ...`` ``else: for j in tl.static_range(2, 3):
  ...``, then ``w.acquire(j - 1)``: Triton 3.6's scf.if yields tensors only, so `j` keeps 0
  (the oracle's offset `j + 100` is 100) and the writer acquires -1; it was verified, `j` read
  as the 2 both branches leave (built once or unrolled). Without a `j` before the `if`, Triton
  refuses the read ("j is not defined"); it was verified. FIXED:
  frontend/build_statements.py ``static_bindings_not_yielded`` (called by ``runtime_if`` for
  a run-time `if`, beside the tl.constexpr annotations it leaves undefined): a tl.static_range
  variable a branch binds is undefined after the `if` where nothing was bound before it, and a
  name holding a constexpr on entry keeps it (taken before ``rebound`` makes it a variable).

False refusals, fixed (by the same changes):

- ``j = 0``, ``if C > 3: for j in tl.static_range(2): ...``, then ``w.acquire(j + 1)``: correct
  at C = 5 (`j` is 1), refused with phase-aliasing at C = 0 by the generic reading; now read
  specialised: verified at C = 5 and lowered, the fault found at ``--param C=2``.
- ``j = 0``, then ``for i in tl.static_range(2): w.acquire(j + i); if i == 0: for j in
  tl.static_range(1, 3): ...`` (indices 0, 1, 2, 3 in Triton), refused (phase-aliasing) by the
  loop built once; now unrolled: verified and lowered with its four commits.
- ``for i in tl.static_range(2): if i == 0: for j in tl.static_range(2): ...``, then
  ``w.acquire(j + 1)`` after the loop (`j` is 1 in Triton), refused (non-affine: `j` a data
  value of the loop built once): ``loop_binds_by`` also unrolls for a tl.static_range in the
  branch (``static_loop``), whose variable a statement after the enclosing loop may read.
- `j` = 0 from ``for j in tl.static_range(1)``, then ``if N > 0: for j in tl.static_range(1,
  3): w.acquire(j) ...`` (else the windows written out), then ``w.acquire(j + 3)``: refused
  (non-affine, `j` a data value after the `if`); now `j` is Triton's 0: verified.
- ``for j in tl.static_range(3): pass`` (a loop built once), then ``for p in tl.static_range(j +
  2): w.acquire(p // 1)``: refused (non-affine, the later loop's bound a name), where Triton
  3.6 reads the constexpr 2. FIXED: frontend/build_loops.py ``s_For`` binds the variable of a
  tl.static_range loop of literal bounds built once to its last value after it (not where the
  body binds the variable itself: ``j = j * 0 + 5`` leaves that tensor, still refused).

Checked and held (no false verdict found): a run-time `if` (``if N > 0:``) around such a loop
in one branch only, the name a constexpr before it: Triton 3.6 keeps the value from before the
`if` (the oracle's offset `j + 100` is 100, where Python reads 102), and so did tle-dump
(verified, as Triton runs it); a name of a tensor rebound by a tl.static_range loop in a
branch of a run-time `if` (refused, round 68); a static_range variable read after a loop of
negative or non-unit steps, of constexpr bounds (its last value, as Python: the faults found);
TMA copies in a
tl.static_range of one, two or no iterations, in a helper, twice, or under ``if C > 1`` in the
window (refused as tma-window or read specialised, the unwritten field found); ``k:
tl.constexpr`` bound by each branch of ``if C > 3:``, a tuple or ``tl.constexpr(7)`` bound by
each branch (read specialised: found); a `range` loop whose body unrolls a tl.static_range
rebinding a constexpr from before it (Triton reads the value from before in every iteration and
after the loop, the oracle's offset 100, and so does tle-dump); free buffers picked by a
tl.static_range in the kernel body (``(fc, fa)[j]``, ``if j == 1: fb = fa``, a helper, under
``if C > 3:``: the races found); SPMC readers with field views (outside-view,
inconsistent-view, missing-release found); one-shot pipes used twice, in a static_range or a
`range` loop (one-shot-reuse); reads of a closed slot under ``res.is_closed or ...`` / ``and``;
the .kir text of the fixed cases read back (the same verdicts).

Held (false refusals, not fixed): ``k: tl.constexpr`` bound by each branch of ``if C > 3:``
to different values, then ``tl.static_range(k)`` (the lowering: "the bound of tl.static_range()
must be a compile-time integer": the specialised build keeps an `if` without pipe events, so
`k` is a variable of the kernel IR); ``c = res.is_closed == False`` then ``if c:`` around a read
of the closing slot (unwritten-field, where ``not res.is_closed`` is read); a TMA copy in a
tl.static_range of one iteration inside the window (tma-window: "not inside a loop"); a name a
tl.static_range body binds from its variable (``q = j * 2``) used as a later loop's bound
(non-affine-loop; Triton 3.6 compiles it); a `range` loop whose body runs a tl.static_range
built once over a name holding a constexpr before the loop, read after it (`j + 3`: refused as
a data value, where Triton keeps the constexpr); the rounds' earlier held cases (round 68's
docstring).

Left open: round 68's (``picks_by`` does not follow an `if` choosing a handle into a helper, nor
handles bound inside the loop); a name bound from a tl.static_range variable by a tl.constexpr
annotation cannot be tested in an `if` of the loop (Triton refuses the rebinding), so
``static_binding_chosen``'s refusal is reached only through a tensor test Triton refuses as well.
"""

from __future__ import annotations

import pytest

from .adversarial_oracles import lowering_problems, triton_compile_error, triton_ttir
from .adversarial_support import TRITON_K, dump, expect, get, kernel, loop, put, run_dump

#: a reader of the windows 0..N-1 (N = 3 or 4)
READ3 = loop("for p in range(3):", get("p"))
READ4 = loop("for p in range(4):", get("p"))


def _chosen(last: str) -> str:
    """`j = 0`, then `if C > 3:` a tl.static_range over `j` writing windows 0 and 1, `else:` the
    same two windows written out, then the window ``last`` (of `j`)."""
    return ("j = 0\n" + loop("if C > 3:", loop("for j in tl.static_range(2):", put("j // 1")))
            + loop("else:", put("0") + put("1")) + put(last))


# -------------------------- A: a constexpr `if` whose branch leaves a static_range variable bound

CHOSEN = {
    # at C = 5 `j` is 1: windows 0, 1, 3 (the reader hangs on 2); at C = 2 `j` is 0: 0, 1, 2
    "j-plus-2": (_chosen("j + 2"), ("rejected", "[wait-never-committed]"), "verified"),
    # at C = 5: 0, 1, 2; at C = 2: 0, 1, 1
    "j-plus-1": (_chosen("j + 1"), "verified", ("rejected", "[phase-aliasing]")),
}


@pytest.mark.parametrize("name", CHOSEN)
def test_a_constexpr_if_leaving_a_static_range_variable_bound(tmp_path, capsys, name):
    """Before: "j-plus-2" verified for every value of C (`j` read as 0 after the `if`),
    "j-plus-1" rejected at C = 0. Now read specialised to C: DEFAULT_CONFIG's C = 5, then
    ``--param C=2`` (the else branch)."""
    text, at5, at2 = CHOSEN[name]
    code, err = dump(tmp_path, capsys, kernel(text, READ3))
    expect(code, err, at5)
    assert "read specialised to C=5" in err and "after one branch of the `if`" in err, err
    code, err = dump(tmp_path, capsys, kernel(text, READ3), "--param", "C=2")
    expect(code, err, at2)
    if at5 == "verified":
        assert lowering_problems(tmp_path / "kernel.py") == []


def test_the_triton_oracle_of_a_constexpr_if_leaving_a_static_range_variable_bound(
        tmp_path, monkeypatch):
    """Triton 3.6 builds only the branch the constexpr chooses, in the enclosing scope: `j`
    holds the static_range variable's last value after it (the offset 101, not 100)."""
    source = TRITON_K + ("    j = 0\n    if C > 2:\n        for j in tl.static_range(2):\n"
                         "            tl.store(x_ptr + j, 1.0)\n"
                         "    tl.store(x_ptr + j + 100, 3.0)\n")
    ttir = triton_ttir(tmp_path, monkeypatch, source, "chosen")
    assert "arith.constant 101 : i32" in ttir, ttir
    assert "arith.constant 100 : i32" not in ttir, ttir


#: round 68's carried `j` under a constexpr `if` in a `range` loop: Triton refuses it at C = 5
CARRIED = "j = 0\n" + loop("for p in range(2):", put("3 * p + j") + loop(
    "if C > 3:", loop("for j in tl.static_range(1, 3):", put("3 * p + j // 1"))))
READ6 = loop("for p in range(6):", get("p"))


@pytest.mark.parametrize("flags", [(), ("--param", "C=5")], ids=["config", "param"])
def test_a_constexpr_if_in_a_range_loop_leaving_a_static_range_variable_bound(tmp_path, capsys,
                                                                             flags):
    """Before: with ``--param C=5``, "verified for C = 5" (Python's indices 0, 1, 2, 5, 4, 5;
    Triton refuses the kernel). Now read specialised, where round 68's refusal applies."""
    code, err = dump(tmp_path, capsys, kernel(CARRIED, READ6), *flags)
    expect(code, err, ("rejected", "[unsupported-expression]",
                       "Loop carried variable j changed type"))


def test_the_triton_oracle_of_a_constexpr_if_in_a_range_loop(tmp_path, monkeypatch):
    source = TRITON_K + ("    j = 0\n    for p in range(2):\n        tl.store(x_ptr + j, 1.0)\n"
                         "        if C > 2:\n            for j in tl.static_range(1, 3):\n"
                         "                tl.store(x_ptr + j, 2.0)\n")
    error = triton_compile_error(tmp_path, monkeypatch, source, "carried_if")
    assert error is not None and "Loop carried variable j changed type" in str(error), error


# ------------------------------------- B: an `if` on a tl.static_range variable over such a loop

def _inner(first: str, bounds: str = "2") -> str:
    """`j = 0`, then `for i in tl.static_range(bounds)` writing the window ``first`` and, when
    `i == 0`, the windows 1 and 2 from a tl.static_range over `j`."""
    return "j = 0\n" + loop(f"for i in tl.static_range({bounds}):", put(first) + loop(
        "if i == 0:", loop("for j in tl.static_range(1, 3):", put("j // 1"))))


INNER = {
    # Triton: 0, 1, 2, then 3 * 1 + 2 = 5 (the reader of 4 hangs on 3)
    "faulty": (_inner("3 * i + j"), ("rejected", "[order-mismatch]")),
    # Triton: 0, 1, 2, then 2 + 1 = 3
    "correct": (_inner("j + i"), "verified"),
}


@pytest.mark.parametrize("name", INNER)
def test_an_if_on_a_static_range_variable_over_a_loop_binding_a_name(tmp_path, capsys, name):
    """Before: "faulty" verified, "correct" rejected (phase-aliasing): the outer loop was built
    once and `j` read as 0 in its second iteration. Now unrolled, each `if` folded."""
    text, want = INNER[name]
    code, err = dump(tmp_path, capsys, kernel(text, READ4))
    expect(code, err, want)
    assert "read specialised" not in err, err
    if want == "verified":
        code, gluon, err = run_dump(capsys, "--gluon", str(tmp_path / "kernel.py"))
        assert code == 0, err
        produce = gluon.split("def produce(", 1)[1].split("@gluon.jit", 1)[0]
        assert produce.count("mbarrier.arrive(kv_full0") == 4, produce
        assert lowering_problems(tmp_path / "kernel.py") == []


def test_the_triton_oracle_of_an_if_on_a_static_range_variable(tmp_path, monkeypatch):
    """The second iteration reads `j` = 2: the offsets 0, 11, 12 and 3."""
    source = TRITON_K + ("    j = 0\n    for i in tl.static_range(2):\n"
                         "        tl.store(x_ptr + j + i, 1.0)\n        if i == 0:\n"
                         "            for j in tl.static_range(1, 3):\n"
                         "                tl.store(x_ptr + j + 10, 2.0)\n")
    ttir = triton_ttir(tmp_path, monkeypatch, source, "inner_if")
    for c in (11, 12, 3):
        assert f"arith.constant {c} : i32" in ttir, ttir
    assert "arith.constant 1 : i32" not in ttir, ttir


@pytest.mark.parametrize("name", INNER)
def test_an_if_on_a_static_range_variable_of_constexpr_bounds(tmp_path, capsys, name):
    """`tl.static_range(C - 3)`: the loop is read specialised to C and unrolled."""
    text, want = INNER[name]
    text = text.replace("tl.static_range(2)", "tl.static_range(C - 3)")
    code, err = dump(tmp_path, capsys, kernel(text, READ4))
    expect(code, err, want)
    assert "read specialised to C=5" in err, err


def test_a_tensor_test_over_a_loop_binding_a_name_is_refused(tmp_path, capsys, monkeypatch):
    """``q = i`` makes `q` a tensor: Triton refuses the `if`'s change of `j`'s type, and the
    loop built once cannot tell `j` after it; refused."""
    text = "j = 0\n" + loop("for i in tl.static_range(2):", "q = i\n" + put("j + i") + loop(
        "if q == 0:", loop("for j in tl.static_range(1, 3):", put("j // 1"))))
    code, err = dump(tmp_path, capsys, kernel(text, READ4))
    expect(code, err, ("rejected", "[unsupported-expression]", "`q == 0` is not decided"))
    source = TRITON_K + ("    j = 0\n    for i in tl.static_range(2):\n        q = i\n"
                         "        tl.store(x_ptr + j + i, 1.0)\n        if q == 0:\n"
                         "            for j in tl.static_range(1, 3):\n"
                         "                tl.store(x_ptr + j + 10, 2.0)\n")
    error = triton_compile_error(tmp_path, monkeypatch, source, "tensor_if")
    assert error is not None and "redefines it as constexpr" in str(error), error


# ----------------------------------------------------------------- checked and held

def test_held_a_runtime_if_keeps_the_value_from_before(tmp_path, capsys, monkeypatch):
    """A run-time `if` yields no constexpr: after ``if N > 0: for j in tl.static_range(1, 3)``
    `j` holds its constexpr from before (0), as tle-dump reads it (Python would read 2)."""
    writer = (loop("for j in tl.static_range(1):", put("j // 1"))
              + loop("if N > 0:", loop("for j in tl.static_range(1, 3):", put("j // 1")))
              + loop("else:", put("1") + put("2")) + put("j + 3"))
    code, err = dump(tmp_path, capsys, kernel(writer, READ4))
    expect(code, err, "verified")
    source = TRITON_K + ("    for j in tl.static_range(1):\n        tl.store(x_ptr + j, 1.0)\n"
                         "    if N > 0:\n        for j in tl.static_range(1, 3):\n"
                         "            tl.store(x_ptr + j, 2.0)\n"
                         "    tl.store(x_ptr + j + 100, 3.0)\n")
    ttir = triton_ttir(tmp_path, monkeypatch, source, "runtime_if")
    assert "arith.constant 100 : i32" in ttir and "arith.constant 102 : i32" not in ttir, ttir


def test_held_a_tma_copy_in_a_static_range_of_one_iteration(tmp_path, capsys):
    """Refused (tma-window), a false refusal held: the copy is counted per block."""
    text = ('import triton.language as tl\nimport tle_compiler as tle\n\n\n'
            '@tle.jit\ndef k(x_desc, y_ptr, N):\n'
            '    ring = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64, 256], tl.bfloat16))\n'
            '    tle.gpu.warp_specialize([(produce, (ring, x_desc, N)), '
            '(consume, (ring, y_ptr, N))], [4], [232])\n\n\n'
            'def produce(ring, x_desc, N):\n    w = ring.writer()\n    for t in range(N):\n'
            '        slot = w.acquire(t)\n        for j in tl.static_range(1):\n'
            '            tle.gpu.tma_load(slot.tile, x_desc, [t * 64, 0])\n'
            '        w.commit(t)\n\n\n'
            'def consume(ring, y_ptr, N):\n    r = ring.reader()\n    for t in range(N):\n'
            '        res = r.wait(t)\n        tile = tl.load(tle.gpu.local_ptr(res.slot.tile))\n'
            '        r.release(t)\n'
            '        tl.store(y_ptr + (t * 64 + tl.arange(0, 64))[:, None] * 256 '
            '+ tl.arange(0, 256)[None, :], tile)\n')
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, ("rejected", "[tma-window]"))


AFTER = {
    # Triton: 0, 1 in the first iteration, `j` = 1 after the loop: 2
    "correct": ("j + 1", "verified"),
    "faulty": ("j + 2", ("rejected", "[wait-never-committed]")),
}


@pytest.mark.parametrize("name", AFTER)
def test_a_static_range_variable_bound_under_an_if_read_after_the_loop(tmp_path, capsys, name):
    """``for i in tl.static_range(2): if i == 0: for j in tl.static_range(2): ...``, then
    `j` read after the outer loop. Before: refused (non-affine, `j` a data value of the loop
    built once); now the outer loop is unrolled and `j` holds 1, as in Triton."""
    last, want = AFTER[name]
    writer = loop("for i in tl.static_range(2):", loop(
        "if i == 0:", loop("for j in tl.static_range(0, 2):", put("j // 1")))) + put(last)
    code, err = dump(tmp_path, capsys, kernel(writer, READ3))
    expect(code, err, want)


def test_the_triton_oracle_of_a_static_range_variable_read_after_the_loop(tmp_path, monkeypatch):
    source = TRITON_K + ("    for i in tl.static_range(2):\n        if i == 0:\n"
                         "            for j in tl.static_range(0, 2):\n"
                         "                tl.store(x_ptr + j + 10, 2.0)\n"
                         "    tl.store(x_ptr + j + 100, 3.0)\n")
    ttir = triton_ttir(tmp_path, monkeypatch, source, "after_loop")
    assert "arith.constant 101 : i32" in ttir, ttir


def test_held_a_static_range_of_a_constexpr_bound_by_each_branch(tmp_path, capsys, monkeypatch):
    """A false refusal held: the specialised build keeps the `if` (no pipe events under it), so
    `k` is a kernel IR variable the lowering cannot take as a tl.static_range bound; Triton
    builds only the chosen branch and compiles it."""
    writer = (loop("if C > 3:", "k: tl.constexpr = 3") + loop("else:", "k: tl.constexpr = 2")
              + loop("for p in tl.static_range(k):", put("p")))
    code, err = dump(tmp_path, capsys, kernel(writer, READ3))
    expect(code, err, ("rejected", "[lowering]", "tl.static_range() must be a compile-time"))
    source = TRITON_K + ("    if C > 2:\n        k: tl.constexpr = 3\n    else:\n"
                         "        k: tl.constexpr = 2\n    for p in tl.static_range(k):\n"
                         "        tl.store(x_ptr + p, 1.0)\n")
    assert triton_compile_error(tmp_path, monkeypatch, source, "bound_by_branch") is None


LATER = {
    "correct": ("j + 2", "verified"),  # `j` is 2: four windows
    "faulty": ("j + 3", ("rejected", "[unconsumed]")),  # five
}


@pytest.mark.parametrize("name", LATER)
def test_a_later_static_range_bounded_by_a_loop_variable_left_bound(tmp_path, capsys, name):
    """``for j in tl.static_range(3): pass`` (built once) leaves the constexpr 2 in `j`; a later
    ``tl.static_range(j + 2)`` unrolled over ``w.acquire(p // 1)`` was refused (non-affine: the
    bound a name); now the loop's last value is read, as after a loop read unrolled."""
    bound, want = LATER[name]
    writer = (loop("for j in tl.static_range(3):", "pass")
              + loop(f"for p in tl.static_range({bound}):", put("p // 1")))
    code, err = dump(tmp_path, capsys, kernel(writer, READ4))
    expect(code, err, want)


def test_a_static_range_variable_the_body_rebinds_is_not_its_last_value(tmp_path, capsys):
    """``j = j * 0 + 5`` in the body: `j` holds that tensor after the loop (Triton's 5, so the
    next index is 6 and the kernel faulty), not the loop's last value 1: still no verdict."""
    writer = loop("for j in tl.static_range(2):", put("j") + "j = j * 0 + 5") + put("j + 1")
    code, err = dump(tmp_path, capsys, kernel(writer, READ3))
    expect(code, err, ("rejected", "[non-affine]"))


# ------------------------------------ C: a run-time `if` yields no tl.static_range variable

def _yielded(then_loop: str, else_loop: str, last: str, first: str = "1") -> str:
    """`j` = 0 from a tl.static_range of one iteration (window 0), then `if N > 0:` over the
    loop ``then_loop`` and `else:` over ``else_loop`` (each binding `j`), then the window
    ``last``."""
    return (loop(f"for j in tl.static_range({first}):", put("j // 1"))
            + loop("if N > 0:", then_loop) + loop("else:", else_loop) + put(last))


YIELDED = {
    # both branches leave 2 in `j` (Python), Triton keeps 0: acquire(-1)
    "built-once": (_yielded(loop("for j in tl.static_range(3):", "pass"),
                            loop("for j in tl.static_range(2, 3):", "pass"), "j - 1"),
                   loop("for p in range(2):", get("p")),
                   ("rejected", "[negative-index]")),
    "unrolled": (_yielded(loop("for j in tl.static_range(3):", "t = (1, 2, 3)[j]"),
                          loop("for j in tl.static_range(2, 3):", "t = (1, 2, 3)[j]"), "j - 1"),
                 loop("for p in range(2):", get("p")), ("rejected", "[negative-index]")),
    # windows 1, 2 in either branch, then Triton's j + 3 = 3 (Python's 5 when N > 0)
    "correct": (_yielded(loop("for j in tl.static_range(1, 3):", put("j")),
                         put("1") + put("2"), "j + 3"), READ4, "verified"),
}


@pytest.mark.parametrize("name", YIELDED)
def test_a_runtime_if_keeps_a_constexpr_a_branch_rebinds(tmp_path, capsys, name):
    """Before: "built-once" and "unrolled" verified (`j` read as the branches' 2), "correct"
    refused (non-affine, `j` a data value). Now `j` holds its constexpr from before the `if`,
    as in Triton."""
    writer, reader, want = YIELDED[name]
    code, err = dump(tmp_path, capsys, kernel(writer, reader))
    expect(code, err, want)


def test_the_triton_oracle_of_a_runtime_if_rebinding_a_constexpr(tmp_path, monkeypatch):
    source = TRITON_K + ("    for j in tl.static_range(1):\n        tl.store(x_ptr + j, 1.0)\n"
                         "    if N > 0:\n        for j in tl.static_range(3):\n"
                         "            tl.store(x_ptr + 10, 1.0)\n    else:\n"
                         "        for j in tl.static_range(2, 3):\n"
                         "            tl.store(x_ptr + 20, 1.0)\n"
                         "    tl.store(x_ptr + j + 100, 3.0)\n")
    ttir = triton_ttir(tmp_path, monkeypatch, source, "not_yielded")
    assert "arith.constant 100 : i32" in ttir and "arith.constant 102 : i32" not in ttir, ttir


def test_a_static_range_variable_bound_only_in_a_runtime_if_is_undefined_after(
        tmp_path, capsys, monkeypatch):
    """Bound by a tl.static_range in both branches of `if N > 0:` and not before: Triton 3.6
    refuses the read after it ("j is not defined"); it was verified."""
    writer = (put("0") + loop("if N > 0:", loop("for j in tl.static_range(3):", "pass"))
              + loop("else:", loop("for j in tl.static_range(2, 3):", "pass")) + put("j - 1"))
    code, err = dump(tmp_path, capsys, kernel(writer, loop("for p in range(2):", get("p"))))
    expect(code, err, ("rejected", "[unknown-name]", "a constexpr the `if` does not yield"))
    source = TRITON_K + ("    if N > 0:\n        for j in tl.static_range(3):\n"
                         "            tl.store(x_ptr + 10, 1.0)\n    else:\n"
                         "        for j in tl.static_range(2, 3):\n"
                         "            tl.store(x_ptr + 20, 1.0)\n"
                         "    tl.store(x_ptr + j + 100, 3.0)\n")
    error = triton_compile_error(tmp_path, monkeypatch, source, "undefined_after_if")
    assert error is not None and "j is not defined" in str(error), error
