"""A seventy-sixth adversarial round (adversarial round 76): odd but legal Python in partitions
(walrus operators, ``global``, defaults of partition functions read from rebound module names,
functools.partial, partitions decorated or defined twice, chained comparisons, ``try``,
``range`` shadowed, one pipe under two names or passed twice, one partition both writer and
reader of a ring, ``tl.where`` indices), unary minus and ``~`` at the int32 wrap, a global load
that the compiler could hoist above the wait that orders it, and compiler hints on the
addresses of global accesses. Each refusal above was checked to hold; the verdicts that rest on
Triton (its hoisting, its vectorisation) were checked against Triton 3.6 compiling the kernel
for sm_90a on the CPU.

False verdict found:

- A contiguity hint that lies: ``tl.store(y_ptr + tl.max_contiguous(2 * offs, 1024), ...)``
  in one partition beside ``tl.store(y_ptr + 2 * offs + 1, ...)`` in another was verified (the
  race model read a hint as its operand's value: even offsets against odd ones). Triton trusts
  the hint: its axis analysis takes the claimed contiguity, and the store is vectorised, each
  thread writing ``st.global.v4`` at the address of the first element of its run, so the first
  partition writes ``y[0..3]``, ``y[8..11]``, ...: the odd elements the other partition writes
  (the Triton oracle below). FIXED: frontend/race_terms.py ``_Slopes`` proves the claim (the
  hinted value changes by exactly 1 per step along every axis it claims a run longer than 1
  on: ``tl.arange`` plus values the same along that axis, through the names it reads, a
  counter ``offs += 1024`` kept by each of its values); an unproved hint is an address of any
  value (``_op``), so the pair is refused (memory-race), for a store, a load, a hint on the
  pointer itself, on a 2-d offset, and on a counter that doubles.

- A ``tl.assume`` the verdict did not rest on, but the compiled kernel did: a partition
  storing ``y + offs`` under ``mask=offs < N`` after ``tl.assume(N >= 1024)``, beside another
  partition's ``tl.store(y_ptr + N, ...)``, was verified for every N (the verifier reads no
  ``tl.assume``: the mask keeps the two apart). The lowering emitted ``gl.assume((N >=
  1024))``, LLVM's assume, and took the mask for true: the PTX of ``tle-dump --ptx`` stored
  all 1024 lanes under ``mov.pred %p, -1``, so at N = 10 the partition wrote ``y[10]`` too (a
  launch checks no ``tl.assume``; a false one is undefined behaviour). FIXED at the root of the
  difference: lowering/more_ops.py reads the condition (a scalar, as Triton takes it) and emits
  nothing, so the kernel that runs is the one verified (the mask stays); domains a verdict
  rests on are ``tle.assume``'s, which a launch checks. tests/test_lowering_more_ops.py's
  pinned ``gl.assume`` updated.

- A division by zero read as a value: round 75 read ``s % d`` at d = 0 as any value, but
  LLVM takes it as undefined behaviour and compiles the code around it for d != 0: after ``s %
  d`` it drops ``if d != 0:`` (plain Triton's PTX and the lowering's alike: ``tle-dump --ptx``
  stored ``y_ptr + 100`` with no test of d, and hoisted the ``rem.s32`` above the partition's
  dispatch). A partition storing ``x_ptr + s % d`` and then, under ``if d != 0:``, ``y_ptr +
  100``, beside another's store of ``y_ptr + 100`` under ``if d == 0:``, was verified (a race
  at d = 0); and a consumer computing ``s % d`` whose wait stands under ``if d != 0:`` (the
  producer commits under the same test) was verified deadlock-free for every d, where the
  lowered consumer waits with no test of d and hangs at d = 0. FIXED: frontend/
  race_divisions.py checks every run-time ``//``, ``%`` and ``tl.cdiv`` of a partition where
  it stands (loops, ``if``\\ s, guard clauses, domains; a ``tl.where`` does not guard it): a
  divisor that may be 0, or -1 beside the type's least value, refuses the kernel at its line
  (check ``division``), naming the values, except a divisor made of kernel arguments and
  program ids alone, which a launch chooses (the bundled SparseMLA and decode kernels
  divide by their arguments ``n_hb``, ``q_div``, ``heads_per_kv``, ``page`` and by ``n_rows *
  NT``, which their launchers keep >= 1; Triton's matmul tutorial by ``group_size_m``, of
  program ids and arguments): the verdict takes it nonzero and says so (stderr, the report,
  JSON ``assumed``), as it states the strides it takes, also of a param the verdict quantifies
  (the hang above: verified for the values of d at which ``d`` is not 0, which the verdict now
  says, where it claimed every d). Any other divisor (a loop variable, a loaded value) that may
  be 0 is refused with z3's values. So that round 73's persistent GEMM (``tile // n_tn`` in a
  loop over ``tl.cdiv(n_tiles - pid, tl.num_programs(0))`` tiles, none where N = 0) stays
  verified with no assumption, race_terms reads a ``tl.cdiv`` by a term of int32 operands as the truncated quotient of ``x +
  (d - 1)`` (it was an unknown).

Held (verdicts checked true): a mask through ``tl.max_constancy`` (whose lie vectorises a
masked store under its first lane's predicate) bounds nothing, so a store beyond it is refused;
a global load in the reader's loop after its wait stays after the wait in the TTGIR and the PTX
of the lowering (no hoisting above ``mbarrier.try_wait``); ``y + (-s)``, ``y + (0 - s)`` and
``y + (~s + 1)`` under ``s < 0`` meet ``y + s`` at s = -2 ** 31 (refused, the witness naming
the wrap).

False verdicts not found elsewhere: the frontend refuses (or reads as Python does) walrus
indices, ``global`` in a partition, a default read from a module name bound again later,
``functools.partial`` partitions, a decorated partition, chained comparisons, events in
``try``, ``range = tl.static_range``, module names bound in control flow or mutated through a
dict or a class; a partition defined twice is read as its last def, one pipe under two names is
one pipe (verified where correct), a partition writing then reading its own ring of capacity 2
deadlocks at N = 3 (rejected).

Left open here and closed since: a division of the kernel body (``q = s % d`` computed
before warp_specialize) was verified with no word of its divisor, though its code dominates
every partition's; now a divisor of arguments and the grid there is stated as the partitions'
are, one the grid or a domain keeps from 0 is none, and any other is not proved
(tests/test_body_divisions.py). The argument divisors a verdict takes nonzero are stated,
not checked by a launch (a
``tle.assume`` in the bundled kernels would make them checked). A lying ``tl.multiple_of`` (a
divisibility the address does not have) makes Triton vectorise from a misaligned address,
which the GPU traps on (no race: nothing claimed about it here); of a scalar bound in a mask
(``offs < tl.multiple_of(N, 16)``) Triton 3.6 did not vectorise the masked store (checked), so
no lane past N is written.
"""

from __future__ import annotations

import importlib
import sys

import pytest

from .adversarial_support import dump, expect, run_dump, write_kernel
from .test_adversarial_verdicts_75 import TWO_STORES

#: two partitions after a ring, each storing once to `y_ptr` (STORE_A at line 19, STORE_B at
#: line 29 where each is one line)
TWO = '''import triton.language as tl
import tle_compiler as tle


@tle.jit
def k(x_ptr, y_ptr, N):
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 128], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, y_ptr, N)),
                             (consume, (kv, y_ptr, N))], [4], [232])


def produce(kv, x_ptr, y_ptr, N):
    w = kv.writer()
    for t in range(N):
        sl = w.acquire(t)
        tl.store(tle.gpu.local_ptr(sl.tile), tl.load(x_ptr + t * 128 + tl.arange(0, 128)))
        w.commit(t)
    offs = tl.arange(0, 1024)
STORE_A


def consume(kv, y_ptr, N):
    r = kv.reader()
    for t in range(N):
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t)
    offs = tl.arange(0, 1024)
STORE_B


DEFAULT_CONFIG = {
    "signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"},
    "constexprs": {},
    "num_warps": 4,
    "grid": (1,),
}
'''

Z = "tl.zeros([1024], tl.float32)"
Z2 = "tl.zeros([32, 32], tl.float32)"
RC = "    r = tl.arange(0, 32)\n    c = tl.arange(0, 32)\n"


def two(a: str, b: str) -> str:
    return TWO.replace("STORE_A", a).replace("STORE_B", b)


def race(line_a: int, line_b: int, at: str) -> tuple:
    return ("rejected", f"kernel.py:{line_b}: error: partitions 'produce' (store at line "
                        f"{line_a}", f"`y_ptr` + {at}", "[memory-race]")


ODD = f"    tl.store(y_ptr + 2 * offs + 1, {Z})"


@pytest.mark.parametrize("a", [
    f"    tl.store(y_ptr + tl.max_contiguous(2 * offs, 1024), {Z})",
    f"    tl.store(y_ptr + tl.max_contiguous(tl.multiple_of(2 * offs, 4), [1024]), {Z})",
    f"    tl.store(tl.max_contiguous(y_ptr + 2 * offs, 1024), {Z})",
])
def test_a_contiguity_hint_that_lies_is_no_address(tmp_path, capsys, a):
    """Even offsets claimed contiguous: Triton stores a vector of 4 from each run's first
    address, reaching the odd elements the other partition stores (y[1]). Before: verified."""
    expect(*dump(tmp_path, capsys, two(a, ODD)), race(19, 29, "1"))


def test_a_hinted_load_that_lies_meets_a_store(tmp_path, capsys):
    """The same lie on a load: the vectorised load reads y[1], which the other partition
    writes. Before: verified."""
    a = f"    tl.store(x_ptr + offs, tl.load(y_ptr + tl.max_contiguous(2 * offs, 1024)))"
    code, err = dump(tmp_path, capsys, two(a, ODD))
    expect(code, err, ("rejected", "partitions 'produce' (load at line 19", "`y_ptr` + 1",
                       "[memory-race]"))


def test_a_2d_contiguity_hint_on_the_wrong_axis(tmp_path, capsys):
    """Rows two apart claimed contiguous along axis 0: Triton may vectorise along the rows
    (its coalescing orders the axes by contiguity). Before: verified."""
    a = RC + f"    tl.store(y_ptr + tl.max_contiguous(r[:, None] * 2 + c[None, :] * 64, " \
             f"[32, 1]), {Z2})"
    b = RC + f"    tl.store(y_ptr + r[:, None] * 2 + 1 + c[None, :] * 64, {Z2})"
    expect(*dump(tmp_path, capsys, two(a, b)), race(21, 33, "1"))


def test_a_counter_that_stops_being_contiguous(tmp_path, capsys):
    """`offs += offs` doubles the step: at j = 1 the hinted offsets are even ones."""
    a = f"    for j in range(4):\n        tl.store(y_ptr + tl.max_contiguous(offs, 1024), {Z})\n" \
        f"        offs += offs"
    code, err = dump(tmp_path, capsys, two(a, ODD))
    expect(code, err, ("rejected", "partitions 'produce' (store at line 20", "[memory-race]"))


@pytest.mark.parametrize("a", [
    f"    tl.store(y_ptr + tl.max_contiguous(tl.multiple_of(offs, 1024), 1024), {Z})",
    f"    tl.store(y_ptr + tl.max_contiguous(tl.multiple_of(offs, [1024]), [1024]), {Z})",
    f"    tl.store(tl.max_contiguous(y_ptr + offs, 1024), {Z})",
    f"    tl.store(y_ptr + tl.max_contiguous(tl.program_id(0) * 0 + offs - 0, 1024), {Z})",
    f"    for j in range(4):\n        tl.store(y_ptr - 8192 + tl.max_contiguous(offs, 1024), {Z})\n"
    f"        offs += 1024",
])
def test_a_true_contiguity_hint_keeps_its_address(tmp_path, capsys, a):
    """Controls: a hint that holds (a range plus values the same along it, a counter moved by
    a number) is its operand's value: the two halves are apart, verified."""
    b = f"    tl.store(y_ptr + 1024 + offs, {Z})"
    expect(*dump(tmp_path, capsys, two(a, b)), "verified")


def test_a_true_2d_hint_and_a_constexpr_run(tmp_path, capsys):
    """Controls: a 2-d hint on the columns (`[1, 32]`), and a run given as a constexpr tuple."""
    a = RC + f"    tl.store(y_ptr + tl.max_contiguous(r[:, None] * 64 + c[None, :], [1, 32]), " \
             f"{Z2})"
    b = RC + f"    tl.store(y_ptr + r[:, None] * 64 + 32 + c[None, :], {Z2})"
    expect(*dump(tmp_path, capsys, two(a, b)), "verified")
    src = two(f"    tl.store(y_ptr + tl.max_contiguous(offs, (BN,)), {Z})",
              f"    tl.store(y_ptr + 1024 + offs, {Z})")
    src = (src.replace("def k(x_ptr, y_ptr, N):", "def k(x_ptr, y_ptr, N, BN: tl.constexpr):")
           .replace("(produce, (kv, x_ptr, y_ptr, N))", "(produce, (kv, x_ptr, y_ptr, N, BN))")
           .replace("def produce(kv, x_ptr, y_ptr, N):",
                    "def produce(kv, x_ptr, y_ptr, N, BN: tl.constexpr):")
           .replace('"constexprs": {}', '"constexprs": {"BN": 1024}'))
    expect(*dump(tmp_path, capsys, src), "verified")


def test_a_constancy_hint_on_a_mask_bounds_nothing(tmp_path, capsys):
    """Held: `tl.max_constancy(offs < 65, 4)` lets Triton store y[64..67] under lane 64's
    predicate; the mask so hinted bounds nothing (refused), the plain mask is read."""
    b = "    tl.store(y_ptr + 66, 1.0)"
    a = f"    tl.store(y_ptr + offs, {Z}, mask=tl.max_constancy(offs < 65, 4))"
    expect(*dump(tmp_path, capsys, two(a, b)), race(19, 29, "66"))
    a = f"    tl.store(y_ptr + offs, {Z}, mask=offs < 65)"
    expect(*dump(tmp_path, capsys, two(a, b)), "verified")


TRITON_HINT = '''import triton
import triton.language as tl


@triton.jit
def k(y_ptr):
    offs = tl.arange(0, 1024)
    tl.store(y_ptr + OFFSETS, tl.zeros([1024], tl.float32))
'''


def _stores(tmp_path, monkeypatch, offsets: str, tag: str) -> list[str]:
    """The global stores of the PTX Triton 3.6 compiles TRITON_HINT to for sm_90a, `y_ptr`
    16-byte aligned as the launcher specialises it."""
    triton = pytest.importorskip("triton")
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    (tmp_path / f"{tag}.py").write_text(TRITON_HINT.replace("OFFSETS", offsets))
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        mod = importlib.import_module(tag)
        got = triton.compile(ASTSource(mod.k, {"y_ptr": "*fp32"}, {},
                                       {(0,): [["tt.divisibility", 16]]}),
                             target=GPUTarget("cuda", 90, 32))
    finally:
        sys.modules.pop(tag, None)
    return [ln.split()[0] for ln in got.asm["ptx"].splitlines() if "st.global" in ln]


def test_triton_vectorises_the_lying_hint(tmp_path, monkeypatch):
    """The oracle: Triton stores the hinted even offsets four elements at a time (each
    `st.global.v4` writes the three elements after its first), the plain ones one by one."""
    hinted = _stores(tmp_path, monkeypatch, "tl.max_contiguous(tl.multiple_of(2 * offs, 4), 1024)",
                     "r76_hinted")
    plain = _stores(tmp_path, monkeypatch, "2 * offs", "r76_plain")
    assert hinted and all(s == "st.global.v4.b32" for s in hinted), hinted
    assert plain and all(s == "st.global.b32" for s in plain), plain


#: the mask of the first partition's store is what keeps it apart from the second's `y + N`;
#: `tl.assume(N >= 1024)` promises LLVM that it holds for every lane
ASSUMED = two("    tl.assume(N >= 1024)\n"
              f"    tl.store(y_ptr + offs, {Z}, mask=offs < N)",
              "    tl.store(y_ptr + N, 2.0)")


def test_tl_assume_is_not_passed_on_to_the_compiler(tmp_path, capsys):
    """Verified (the mask keeps the store below N, the other at N), and now true of the
    lowered kernel: before, the lowering emitted `gl.assume((N >= 1024))`, LLVM took the mask
    for true (the PTX stored under `mov.pred %p, -1`), and at N = 10 the partition wrote
    y[10..1023], y[N] among them: a race in a kernel verified for every N. The lowering reads
    the condition and emits nothing; the mask stays."""
    expect(*dump(tmp_path, capsys, ASSUMED), "verified")
    path = write_kernel(tmp_path, ASSUMED, "gluon.py")
    code, out, err = run_dump(capsys, "--gluon", str(path))
    assert code == 0, err
    assert "gl.assume" not in out, out
    assert "mask=(gl.arange(0, 1024, layout=L0) < N)" in out, out


TRITON_ASSUME = '''import triton
import triton.language as tl


@triton.jit
def k(y_ptr, N):
    ASSUME
    offs = tl.arange(0, 1024)
    tl.store(y_ptr + offs, tl.zeros([1024], tl.float32), mask=offs < N)
'''


def test_triton_drops_a_mask_an_assume_decides(tmp_path, monkeypatch):
    """The oracle: under `tl.assume(N >= 1024)` Triton 3.6 (LLVM) stores every lane under one
    predicate set true; without it, each lane under its own comparison."""
    triton = pytest.importorskip("triton")
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    monkeypatch.syspath_prepend(str(tmp_path))
    preds = {}
    for tag, line in (("r76_assumed", "tl.assume(N >= 1024)"), ("r76_free", "pass")):
        (tmp_path / f"{tag}.py").write_text(TRITON_ASSUME.replace("ASSUME", line))
        try:
            mod = importlib.import_module(tag)
            ptx = triton.compile(ASTSource(mod.k, {"y_ptr": "*fp32", "N": "i32"}, {},
                                           {(0,): [["tt.divisibility", 16]]}),
                                 target=GPUTarget("cuda", 90, 32)).asm["ptx"]
        finally:
            sys.modules.pop(tag, None)
        stores = [ln.split()[0] for ln in ptx.splitlines() if "st.global" in ln]
        preds[tag] = (set(stores), "mov.pred" in ptx and "-1;" in ptx.split("mov.pred")[1][:20])
    assert len(preds["r76_assumed"][0]) == 1 and preds["r76_assumed"][1], preds
    assert len(preds["r76_free"][0]) > 1, preds


#: two partitions after a ring, with run-time `s` and `d` (round 75's TWO_STORES): STORE_A
#: from line 18, STORE_B from line 27
#: round 75's ring whose partitions store STORE_A / STORE_B after their events (lines 18 / 27)
SD = TWO_STORES


def sd(a: str, b: str, assume: str = "") -> str:
    src = SD.replace("STORE_A", a).replace("STORE_B", b)
    return src.replace("    kv = tle.pipe", f"    {assume}\n    kv = tle.pipe") if assume else src


DIVIDED = ("tl.store(x_ptr + s % d, 1.0)\n    if d != 0:\n        tl.store(y_ptr + 100, 2.0)")
AT_ZERO = "if d == 0:\n        tl.store(y_ptr + 100, 3.0)"


def test_a_division_by_zero_is_no_value_but_undefined(tmp_path, capsys):
    """`s % (t - d)` at t = d is LLVM's undefined behaviour, a run with no defined outcome:
    after `s % d` LLVM drops `if d != 0:` (the oracle below, and the lowered PTX of that
    kernel); here Triton 3.6 kept the test `t != d` (checked), but a verdict cannot rest on
    what an optimiser happens to leave. The other partition stores y[100 + t] under `t == d`.
    Before: verified (the `if`s read as Python reads them)."""
    a = ("for t in range(4):\n        tl.store(x_ptr + s % (t - d), 1.0)\n"
         "        if t != d:\n            tl.store(y_ptr + 100 + t, 2.0)")
    b = "for t in range(4):\n        if t == d:\n            tl.store(y_ptr + 100 + t, 3.0)"
    code, err = dump(tmp_path, capsys, sd(a, b))
    expect(code, err, ("rejected", "kernel.py:19: error: partition 'produce': the divisor of "
                       "this integer division may be ", "[division]"))


def test_a_divisor_argument_is_taken_nonzero_and_said(tmp_path, capsys):
    """The same by the argument `d` itself, which only a launch chooses (the bundled SparseMLA
    kernels divide by their argument `n_hb` so): verified taking d nonzero, which the verdict
    says (stderr, the text report, the JSON `assumed`); `tle.assume(d >= 1)` makes it a domain
    a launch checks, and the note goes. Before: verified with no word of it."""
    code, err = dump(tmp_path, capsys, sd(DIVIDED, AT_ZERO))
    expect(code, err, "verified")
    assert "taking the divisor `d` at line 18 of kernel.py never 0" in err, err
    path = write_kernel(tmp_path, sd(DIVIDED, AT_ZERO), "json_kernel.py")
    code, out, err = run_dump(capsys, "--format", "json", str(path))
    assert code == 0 and "taking the divisor `d` at line 18" in out, out
    code, err = dump(tmp_path, capsys, sd(DIVIDED, AT_ZERO, "tle.assume(d >= 1)"))
    expect(code, err, "verified")
    assert "taking the divisor" not in err, err


#: a reader whose wait stands under `d != 0` after computing `s % d`; the writer commits under
#: the same test without dividing
HANG = '''import triton.language as tl
import tle_compiler as tle


@tle.jit
def k(x_ptr, y_ptr, s, d):
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 128], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, d)),
                             (consume, (kv, y_ptr, s, d))], [4], [232])


def produce(kv, x_ptr, d):
    w = kv.writer()
    if d != 0:
        sl = w.acquire(0)
        tl.store(tle.gpu.local_ptr(sl.tile), tl.load(x_ptr + tl.arange(0, 128)))
        w.commit(0)


def consume(kv, y_ptr, s, d):
    r = kv.reader()
    tl.store(y_ptr + 128, (s % d).to(tl.float32))
    if d != 0:
        res = r.wait(0)
        tl.store(y_ptr + tl.arange(0, 128), tl.load(tle.gpu.local_ptr(res.slot.tile)))
        r.release(0)


DEFAULT_CONFIG = {
    "signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "s": "i32", "d": "i32"},
    "constexprs": {},
    "num_warps": 4,
    "grid": (1,),
}
'''


def test_a_wait_past_a_division_by_zero_hangs(tmp_path, capsys):
    """The lowered consumer waits the full barrier with no test of d (LLVM folded `d != 0`
    after `s % d`), the producer commits only at d != 0: at d = 0 the consumer hangs. Before:
    verified deadlock-free for every d, with no word of d = 0; now for the values at which the
    divisor `d` is not 0, which the verdict says (tle.assume(d >= 1) makes it a domain a
    launch checks)."""
    code, err = dump(tmp_path, capsys, HANG)
    expect(code, err, "verified")
    assert ("taking the divisor `d` at line 22 of kernel.py never 0" in err
            and "(the verdict's values of d are those at which none is)" in err), err


def test_int_min_by_minus_one_is_undefined_too(tmp_path, capsys):
    """Under `if t != d:` the remainder of -2 ** 31 by `t - d` = -1 still overflows (LLVM's
    srem)."""
    a = ("for t in range(4):\n        if t != d:\n"
         "            tl.store(x_ptr + s % (t - d), 1.0)")
    code, err = dump(tmp_path, capsys, sd(a, "tl.store(y_ptr, 1.0)"))
    expect(code, err, ("rejected", "may be -1 and the dividend -2147483648 (with ",
                       "s = -2147483648", "[division]"))


def test_a_where_does_not_guard_a_division(tmp_path, capsys):
    """Triton computes both branches of a tl.where: the division runs at t = d."""
    a = "for t in range(4):\n        tl.store(x_ptr + tl.where(t != d, s % (t - d), 0), 1.0)"
    expect(*dump(tmp_path, capsys, sd(a, "tl.store(y_ptr, 1.0)")),
           ("rejected", "may be 0 (with ", "[division]"))


@pytest.mark.parametrize("a,assume", [
    ("tl.store(x_ptr + s // d, 1.0)", "tle.assume(d >= 1)"),
    ("tl.store(x_ptr + s % tl.maximum(d, 1), 1.0)", ""),
    ("tl.store(x_ptr + s // 7 + tl.cdiv(s, 3) + s % -5, 1.0)", ""),
    ("if d > 0:\n        tl.store(x_ptr + s % d, 1.0)", ""),
    ("for t in range(1, d):\n        tl.store(x_ptr + s // t, 1.0)", ""),
    ("if d <= 0:\n        return\n    tl.store(x_ptr + s % d, 1.0)", ""),
])
def test_divisions_by_nonzero_divisors_stay_verified(tmp_path, capsys, a, assume):
    """Controls: a divisor bounded by tle.assume, clamped, a number, tested by an `if` around
    the division or a guard clause before it, or a loop variable that starts at 1."""
    expect(*dump(tmp_path, capsys, sd(a, "tl.store(y_ptr, 1.0)", assume)), "verified")


TRITON_DIV = '''import triton
import triton.language as tl


@triton.jit
def k(y_ptr, s, d):
    tl.store(y_ptr + 200 + s % d, 1.0)
    if d != 0:
        tl.store(y_ptr + 100, 2.0)
'''


def test_triton_drops_the_test_of_a_divisor(tmp_path, monkeypatch):
    """The oracle: Triton 3.6 (LLVM) compiles the store under `if d != 0:` after `s % d` with
    no test of d and no branch: both stores under one predicate (the thread's)."""
    triton = pytest.importorskip("triton")
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    (tmp_path / "r76_div.py").write_text(TRITON_DIV)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        mod = importlib.import_module("r76_div")
        ptx = triton.compile(ASTSource(mod.k, {"y_ptr": "*fp32", "s": "i32", "d": "i32"}, {}),
                             target=GPUTarget("cuda", 90, 32)).asm["ptx"]
    finally:
        sys.modules.pop("r76_div", None)
    body = ptx.split(".entry", 1)[1].split("\n}", 1)[0]
    stores = [ln.split()[0] for ln in body.splitlines() if "st.global" in ln]
    assert "rem.s32" in body and len(stores) == 2 and len(set(stores)) == 1, body
    assert "bra" not in body, body
