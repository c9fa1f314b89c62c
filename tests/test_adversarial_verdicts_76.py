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

Left open: a lying ``tl.multiple_of`` (a divisibility the address does not have) makes Triton
vectorise from a misaligned address, which the GPU traps on (no race: nothing claimed about
it here).
"""

from __future__ import annotations

import importlib
import sys

import pytest

from .adversarial_support import dump, expect

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
