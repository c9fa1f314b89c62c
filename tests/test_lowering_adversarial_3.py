"""What is verified is what is lowered, third round: constexpr values given at compile time,
shadowed names, helpers shared by partitions, loops the first two rounds leave out, several
readers, wgmma on held slots, TMA boxes of unusual shapes, cache hints, L2 prefetches and
programmatic dependent launch.

Each construct is either
* verified by tle-dump (with ``--param`` for its constexprs), lowered and compiled for sm_90a
  through ``compile_kernel((path, name), ...)`` (the reading a launch makes), with the Gluon-trace
  model of the generated code performing exactly the verified events' barrier operations
  (tests/test_lowering_events.py's ``Runs``) for several param values and constexpr settings
  and at a trip count of 1001 (each stage reused hundreds of times), the expect-tx of every TMA
  commit the bytes its copies deliver, and the CPU emulator's results equal to a torch reference
  (KERNELS); or
* refused before anything is verified, with a message at the line (REFUSED): an index a
  static_range variable scales by a runtime bound (``j * N + i``), a triangular ``i * N + j``,
  an index dividing a range variable (``2 * i + i // 2``), one function for two
  partitions, a pipe parameter rebound in a loop body, launch_dependents
  after warp_specialize, slot handles (and a slot's load used as a wgmma operand) carried from
  one iteration into the next or past the loop, and cache hints Triton refuses.

Fixed in this round:
* A pipe index offset by a constexpr (``w.acquire(i + BASE)``, BASE a constexpr param of the
  Program) verified by ``tle-dump --param BASE=6`` was refused by ``compile_kernel`` with
  BASE = 6 ("the pipe protocol is rejected ... when BASE=-1"): the lowering ran the protocol
  passes with every value of BASE free, where BASE = -1 gives a negative index. The lowering now
  checks the protocol at the integer constexprs it compiles for, as tle-dump --param does
  (lowering/codegen.py ``fixed_constexprs``); a value tle-dump rejects (BASE = 3: phase aliasing)
  is still refused, with the same error.
* A cache hint Triton 3.6 refuses for the operation (a store's ``cache_modifier='.ca'``, a
  load's ``'.cs'``, ``eviction_policy='evict_normal'``) was verified, and the compile of the
  lowered kernel failed in Triton's frontend. tle-dump now refuses it at the call's line
  (frontend/partition_rules.py ``check_cache_hints``, one check for tle-dump and the lowering).
* A ``cache_modifier`` together with an ``eviction_policy`` on a store or a register load (PTX has
  no instruction with both; Triton emits them on one and ptxas fails, plain Triton alike) was
  verified and failed in ptxas. ``check_cache_hints`` refuses the pair at its line.

* A prefetch_l2 byte count that is not a positive compile-time multiple of 16 (a literal 24, a
  constexpr given ``--param NB=24``, a runtime ``N * 16``) was verified by tle-dump and refused by
  the lowering alone. tle-dump refuses it at the call's line with the lowering's reason
  (frontend/partition_rules.py ``prefetch_bytes_refusal``, one rule for the protocol view and the
  lowering); a byte count read from a constexpr is checked at the value the kernel is read
  with, and verified for that value only.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

pytest.importorskip("triton.experimental.gluon")

from tle_compiler.diagnostics import TleError, TleVerificationWarning  # noqa: E402

from .test_lowering_events import Runs, param_grid  # noqa: E402

pytestmark = pytest.mark.filterwarnings(f"ignore::{TleVerificationWarning.__module__}."
                                        f"{TleVerificationWarning.__name__}")

HEAD = '''
import triton.language as tl

import tle_compiler as tle

BM = tl.constexpr(32)
BN = tl.constexpr(64)
'''
HEAD64 = HEAD.replace("BM = tl.constexpr(32)", "BM = tl.constexpr(64)")


def _config(grid: int = 1, **types) -> str:
    """The kernel's DEFAULT_CONFIG: a constexpr is given as ``constexpr=<default value>``."""
    sig = {k: ("constexpr" if str(v).startswith("constexpr") else v) for k, v in types.items()}
    cx = {k: int(str(v).split("=")[1]) for k, v in types.items() if str(v).startswith("constexpr")}
    return ('\nDEFAULT_CONFIG = {"signature": {'
            + ", ".join(f'"{k}": "{v}"' for k, v in sig.items()) + '}, "constexprs": {'
            + ", ".join(f'"{k}": {v}' for k, v in cx.items())
            + f'}}, "num_warps": 4, "grid": ({grid},)}}\n')


OFFS = "    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]\n"

KERNELS: dict[str, str] = {}
#: constexpr settings each kernel is checked at (default: its DEFAULT_CONFIG's alone)
CONSTEXPRS: dict[str, list[dict]] = {}
#: what tle-dump says of a kernel outside the cutoff theorem's fragment (default: proved)
BOUNDED: dict[str, set] = {}

# 1. Indices offset by a constexpr param (BASE, a param of the Program): the writer acquires
#    i + BASE, the reader loops range(BASE, BASE + N); checked at BASE = 0, 6, 12 (a multiple of
#    2 * capacity, else two uses of a stage would share a phase). Before this round the lowering
#    checked the protocol for every BASE and refused what tle-dump --param BASE=6 verified.
KERNELS["offset"] = HEAD + '''
@tle.jit(num_warps=4)
def offset(x_ptr, y_ptr, N, BASE: tl.constexpr):
    p = tle.pipe(capacity=3, t=tle.gpu.alloc([3, BM, BN], tl.int32))
    tle.gpu.warp_specialize([(fill, (p, x_ptr, N, BASE)), (drain, (p, y_ptr, N, BASE))],
                            [4], [232])


def fill(p, x_ptr, N, BASE: tl.constexpr):
''' + OFFS + '''    w = p.writer()
    for i in range(N):
        s = w.acquire(i + BASE)
        tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + i * BM * BN + offs) + BASE)
        w.commit(i + BASE)


def drain(p, y_ptr, N, BASE: tl.constexpr):
''' + OFFS + '''    r = p.reader()
    for j in range(BASE, BASE + N):
        res = r.wait(j)
        tl.store(y_ptr + (j - BASE) * BM * BN + offs, tl.load(tle.gpu.local_ptr(res.slot.t)))
        r.release(j)
''' + _config(x_ptr="*i32", y_ptr="*i32", N="i32", BASE="constexpr=6")
CONSTEXPRS["offset"] = [{"BASE": 0}, {"BASE": 6}, {"BASE": 12}]

# 2. A tl.static_range(R) inner loop with events, R a constexpr given by --param (0: no events,
#    1, 3), index i * R + j, on a capacity-3 ring whose writer has 2 warps.
KERNELS["static_r"] = HEAD + '''
@tle.jit(num_warps=4)
def static_r(x_ptr, y_ptr, N, R: tl.constexpr):
    p = tle.pipe(capacity=3, t=tle.gpu.alloc([3, BM, BN], tl.int32))
    tle.gpu.warp_specialize([(fill, (p, x_ptr, N, R)), (drain, (p, y_ptr, N, R))], [2], [40])


def fill(p, x_ptr, N, R: tl.constexpr):
''' + OFFS + '''    w = p.writer()
    for i in range(N):
        for j in tl.static_range(R):
            s = w.acquire(i * R + j)
            tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + (i * R + j) * BM * BN + offs) + j)
            w.commit(i * R + j)


def drain(p, y_ptr, N, R: tl.constexpr):
''' + OFFS + '''    r = p.reader()
    for t in range(N * R):
        res = r.wait(t)
        tl.store(y_ptr + t * BM * BN + offs, tl.load(tle.gpu.local_ptr(res.slot.t)))
        r.release(t)
''' + _config(x_ptr="*i32", y_ptr="*i32", N="i32", R="constexpr=2")
CONSTEXPRS["static_r"] = [{"R": 0}, {"R": 1}, {"R": 3}]
BOUNDED["static_r"] = {3}

# 3. Nested loops whose inner bounds depend on the outer index: range(i, i + 2) with events at
#    index i + j, and inside it an event-free range(j) (bounded: outside the cutoff fragment).
KERNELS["inner_dep"] = HEAD + '''
@tle.jit(num_warps=4)
def inner_dep(x_ptr, y_ptr, N):
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, BM, BN], tl.int32))
    tle.gpu.warp_specialize([(fill, (p, x_ptr, N)), (drain, (p, y_ptr, N))], [4], [232])


def fill(p, x_ptr, N):
''' + OFFS + '''    w = p.writer()
    for i in range(N):
        for j in range(i, i + 2):
            s = w.acquire(i + j)
            v = tl.load(x_ptr + (i + j) * BM * BN + offs)
            for k in range(j):
                v = v + 1
            tl.store(tle.gpu.local_ptr(s.t), v)
            w.commit(i + j)


def drain(p, y_ptr, N):
''' + OFFS + '''    r = p.reader()
    for i in range(2 * N):
        res = r.wait(i)
        tl.store(y_ptr + i * BM * BN + offs, tl.load(tle.gpu.local_ptr(res.slot.t)))
        r.release(i)
''' + _config(x_ptr="*i32", y_ptr="*i32", N="i32")
BOUNDED["inner_dep"] = {None}

# 4. Names shadowed between the kernel body and the partitions: the kernel body's NT and offs
#    are handed to partition parameters named N and offs's neighbours, the writer's N is the
#    body's NT (N + 1 tiles), the reader's N is the body's offs (7, added to each tile) and its
#    trip count the body's NT; the helper's parameters N and i are the caller's i and N; the
#    reader rebinds its x_ptr-named local; the writer rebinds NT after its loop.
KERNELS["shadow"] = HEAD + '''
@tle.jit(num_warps=4)
def shadow(x_ptr, y_ptr, N):
    NT = N + 1
    offs = 7
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, BM, BN], tl.int32))
    tle.gpu.warp_specialize([(fill, (p, x_ptr, NT, N)), (drain, (p, y_ptr, offs, NT))],
                            [4], [232])


def put(w, N, i, x_ptr):
''' + OFFS + '''    s = w.acquire(N)
    tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + N * BM * BN + offs) + i)
    w.commit(N)


def fill(p, x_ptr, N, NT):
    w = p.writer()
    for i in range(N):
        put(w, i, N, x_ptr)
    NT = 0


def drain(p, y_ptr, N, offs):
    r = p.reader()
    for i in range(offs):
        res = r.wait(i)
        x_ptr = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
        tl.store(y_ptr + i * BM * BN + x_ptr, tl.load(tle.gpu.local_ptr(res.slot.t)) + N)
        r.release(i)
''' + _config(x_ptr="*i32", y_ptr="*i32", N="i32")

# 5. One helper (`mid`, calling `hop`) called from two partitions with different pipes: a -> b
#    (capacity 2 -> 1, adds 1, 4 warps) and b -> c (capacity 1 -> 3, adds 10, 1 warp).
KERNELS["helper_pipes"] = HEAD + '''
@tle.jit(num_warps=4)
def helper_pipes(x_ptr, y_ptr, N):
    a = tle.pipe(capacity=2, t=tle.gpu.alloc([2, BM, BN], tl.int32))
    b = tle.pipe(capacity=1, t=tle.gpu.alloc([1, BM, BN], tl.int32))
    c = tle.pipe(capacity=3, t=tle.gpu.alloc([3, BM, BN], tl.int32))
    tle.gpu.warp_specialize([(last, (c, y_ptr, N)), (first, (a, x_ptr, N)), (mid1, (a, b, N, 1)),
                             (mid2, (b, c, N))], [4, 4, 1], [80, 80, 24])


def hop(r, w, i, add):
    res = r.wait(i)
    v = tl.load(tle.gpu.local_ptr(res.slot.t))
    r.release(i)
    s = w.acquire(i)
    tl.store(tle.gpu.local_ptr(s.t), v + add)
    w.commit(i)


def mid(src, dst, N, add):
    r = src.reader()
    w = dst.writer()
    for i in range(N):
        hop(r, w, i, add)


def first(a, x_ptr, N):
''' + OFFS + '''    w = a.writer()
    for i in range(N):
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + i * BM * BN + offs))
        w.commit(i)


def mid1(a, b, N, add):
    mid(a, b, N, add)


def mid2(b, c, N):
    mid(b, c, N, 10)


def last(c, y_ptr, N):
''' + OFFS + '''    r = c.reader()
    for i in range(N):
        res = r.wait(i)
        tl.store(y_ptr + i * BM * BN + offs, tl.load(tle.gpu.local_ptr(res.slot.t)))
        r.release(i)
''' + _config(x_ptr="*i32", y_ptr="*i32", N="i32")

# 6-7. Three readers of one pipe in partitions of 1, 2 and 8 warps (the writer is the 4-warp
#    default): 'a' copies the tile, 'b' the column sums field u and releases one tile late
#    (capacity 4) or at once (capacity 1), 'c' stores sum(t) - u (zero).
READERS = HEAD + '''CAP = 4


@tle.jit(num_warps=4)
def readers_c4(x_ptr, y_ptr, N):
    tle.assume(N <= 4096)  # y's offsets stay in int32 (past it they wrap onto each other)
    p = tle.pipe(capacity=CAP, readers=("a", "b", "c"), t=tle.gpu.alloc([CAP, BM, BN], tl.int32),
                 u=tle.gpu.alloc([CAP, BN], tl.int32))
    tle.gpu.warp_specialize([(fill, (p, x_ptr, N)), (ra, (p, y_ptr, N)), (rb, (p, y_ptr, N)),
                             (rc, (p, y_ptr, N))], [1, 2, 8], [24, 40, 88])


def fill(p, x_ptr, N):
''' + OFFS + '''    w = p.writer()
    for i in range(N):
        s = w.acquire(i)
        v = tl.load(x_ptr + i * BM * BN + offs)
        tl.store(tle.gpu.local_ptr(s.t), v)
        tl.store(tle.gpu.local_ptr(s.u), tl.sum(v, 0))
        w.commit(i)


def ra(p, y_ptr, N):
''' + OFFS + '''    r = p.reader("a")
    for i in range(N):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.t))
        r.release(i)
        tl.store(y_ptr + i * BM * BN + offs, v)


def rb(p, y_ptr, N):
    r = p.reader("b")
    for i in range(N):
        res = r.wait(i)
        tl.store(y_ptr + (N + 1) * BM * BN + i * BN + tl.arange(0, BN),
                 tl.load(tle.gpu.local_ptr(res.slot.u)))
        if i > 0:
            r.release(i - 1)
    if N > 0:
        r.release(N - 1)


def rc(p, y_ptr, N):
    r = p.reader("c")
    for i in range(N):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.t))
        u = tl.load(tle.gpu.local_ptr(res.slot.u))
        r.release(i)
        tl.store(y_ptr + (2 * N + 2) * BM * BN + i * BN + tl.arange(0, BN), tl.sum(v, 0) - u)
''' + _config(x_ptr="*i32", y_ptr="*i32", N="i32")
KERNELS["readers_c4"] = READERS
KERNELS["readers_c1"] = READERS.replace("CAP = 4", "CAP = 1").replace(
    "readers_c4", "readers_c1").replace(
    "        if i > 0:\n            r.release(i - 1)\n    if N > 0:\n        r.release(N - 1)\n",
    "        r.release(i)\n")

# 8. wgmma reading two held slots of one ring (tiles 2i and 2i + 1, A @ B), the first released
#    between it and a second wgmma under an `if` that reads only the second; the writer is an
#    8-warp worker (bounded: its loop runs to 2 N).
KERNELS["two_slots_dot"] = HEAD64 + '''
@tle.jit(num_warps=4)
def two_slots_dot(a_ptr, c_ptr, N):
    p = tle.pipe(capacity=2, a=tle.gpu.alloc([2, BM, BN], tl.bfloat16))
    tle.gpu.warp_specialize([(mma, (p, c_ptr, N)), (fill, (p, a_ptr, N))], [8], [80])


def fill(p, a_ptr, N):
''' + OFFS + '''    w = p.writer()
    for i in range(2 * N):
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.a), tl.load(a_ptr + i * BM * BN + offs))
        w.commit(i)


def mma(p, c_ptr, N):
''' + OFFS + '''    r = p.reader()
    acc = tl.zeros([BM, BN], tl.float32)
    for i in range(N):
        r0 = r.wait(2 * i)
        r1 = r.wait(2 * i + 1)
        acc = tl.dot(tl.load(tle.gpu.local_ptr(r0.slot.a)), tl.load(tle.gpu.local_ptr(r1.slot.a)),
                     acc)
        r.release(2 * i)
        if i % 2 == 0:
            acc = tl.dot(tl.load(tle.gpu.local_ptr(r1.slot.a)),
                         tl.load(tle.gpu.local_ptr(r1.slot.a)), acc)
        r.release(2 * i + 1)
    tl.store(c_ptr + offs, acc)
''' + _config(a_ptr="*bf16", c_ptr="*fp32", N="i32")
BOUNDED["two_slots_dot"] = {None}

# 9. An 8-warp worker partition issuing a 128 x 64 wgmma per tile (the default one fills).
KERNELS["worker8_dot"] = HEAD64 + '''
@tle.jit(num_warps=4)
def worker8_dot(a_ptr, b_ptr, c_ptr, N):
    p = tle.pipe(capacity=2, a=tle.gpu.alloc([2, 128, BN], tl.bfloat16),
                 b=tle.gpu.alloc([2, BN, BN], tl.bfloat16))
    tle.gpu.warp_specialize([(fill, (p, a_ptr, b_ptr, N)), (mma, (p, c_ptr, N))], [8], [160])


def fill(p, a_ptr, b_ptr, N):
    offa = tl.arange(0, 128)[:, None] * BN + tl.arange(0, BN)[None, :]
''' + OFFS + '''    w = p.writer()
    for i in range(N):
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.a), tl.load(a_ptr + i * 128 * BN + offa))
        tl.store(tle.gpu.local_ptr(s.b), tl.load(b_ptr + i * BN * BN + offs))
        w.commit(i)


def mma(p, c_ptr, N):
    offc = tl.arange(0, 128)[:, None] * BN + tl.arange(0, BN)[None, :]
    r = p.reader()
    for i in range(N):
        res = r.wait(i)
        acc = tl.dot(tl.load(tle.gpu.local_ptr(res.slot.a)), tl.load(tle.gpu.local_ptr(res.slot.b)))
        r.release(i)
        tl.store(c_ptr + i * 128 * BN + offc, acc)
''' + _config(a_ptr="*bf16", b_ptr="*bf16", c_ptr="*fp32", N="i32")

# 10. A helper that waits, issues a wgmma on the slot and releases, called from two 4-warp
#     partitions with different pipes (capacity 2, accumulating; capacity 4, one result per tile).
KERNELS["helper_dot"] = HEAD64 + '''
@tle.jit(num_warps=4)
def helper_dot(a_ptr, c_ptr, N):
    tle.assume(N <= 4096)  # c's rows (i + 1) * BM * BN stay in int32, apart from row 0
    p = tle.pipe(capacity=2, a=tle.gpu.alloc([2, BM, BN], tl.bfloat16))
    q = tle.pipe(capacity=4, a=tle.gpu.alloc([4, BM, BN], tl.bfloat16))
    tle.gpu.warp_specialize([(fill, (p, q, a_ptr, N)), (m1, (p, c_ptr, N)), (m2, (q, c_ptr, N))],
                            [4, 4], [96, 96])


def fill(p, q, a_ptr, N):
''' + OFFS + '''    w = p.writer()
    v = q.writer()
    for i in range(N):
        x = tl.load(a_ptr + i * BM * BN + offs)
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.a), x)
        w.commit(i)
        t = v.acquire(i)
        tl.store(tle.gpu.local_ptr(t.a), x)
        v.commit(i)


def square(r, i, acc):
    res = r.wait(i)
    a = tl.load(tle.gpu.local_ptr(res.slot.a))
    acc = tl.dot(a, a, acc)
    r.release(i)
    return acc


def m1(p, c_ptr, N):
''' + OFFS + '''    r = p.reader()
    acc = tl.zeros([BM, BN], tl.float32)
    for i in range(N):
        acc = square(r, i, acc)
    tl.store(c_ptr + offs, acc)


def m2(q, c_ptr, N):
''' + OFFS + '''    r = q.reader()
    for i in range(N):
        acc = square(r, i, tl.zeros([BM, BN], tl.float32))
        tl.store(c_ptr + (i + 1) * BM * BN + offs, acc)
''' + _config(a_ptr="*bf16", c_ptr="*fp32", N="i32")

# 11. Slots used after a loop exits: the writer's trailer tile N (the sum of the N tiles) after
#     its loop, and a one-shot slot acquired before the loop and committed after it; the reader
#     waits the trailer and the one-shot slot after its loop and stores their sum.
KERNELS["trailer"] = HEAD + '''
@tle.jit(num_warps=4)
def trailer(x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, BM, BN], tl.int32))
    h = tle.pipe(capacity=1, one_shot=True, t=tle.gpu.alloc([1, BM, BN], tl.int32))
    tle.gpu.warp_specialize([(fill, (p, h, x_ptr, N)), (drain, (p, h, y_ptr, N))], [4], [232])


def fill(p, h, x_ptr, N):
''' + OFFS + '''    w = p.writer()
    hw = h.writer()
    hs = hw.acquire(0)
    acc = tl.zeros([BM, BN], tl.int32)
    for i in range(N):
        s = w.acquire(i)
        v = tl.load(x_ptr + i * BM * BN + offs)
        tl.store(tle.gpu.local_ptr(s.t), v)
        w.commit(i)
        acc = acc + v
    s = w.acquire(N)
    tl.store(tle.gpu.local_ptr(s.t), acc)
    w.commit(N)
    tl.store(tle.gpu.local_ptr(hs.t), acc * 2)
    hw.commit(0)


def drain(p, h, y_ptr, N):
''' + OFFS + '''    r = p.reader()
    for i in range(N):
        res = r.wait(i)
        tl.store(y_ptr + i * BM * BN + offs, tl.load(tle.gpu.local_ptr(res.slot.t)))
        r.release(i)
    res = r.wait(N)
    hres = h.reader().wait(0)
    tl.store(y_ptr + N * BM * BN + offs,
             tl.load(tle.gpu.local_ptr(res.slot.t)) + tl.load(tle.gpu.local_ptr(hres.slot.t)))
    r.release(N)
''' + _config(x_ptr="*i32", y_ptr="*i32", N="i32")

# 12. A capacity-1 slot written K times by an inner loop between its acquire and commit (read
#     back each time), and read i times by the reader's inner loop (trip count the outer index)
#     before its release (bounded: two free params).
KERNELS["slot_span"] = HEAD + '''
@tle.jit(num_warps=4)
def slot_span(x_ptr, y_ptr, N, K):
    tle.assume(N >= 0)
    p = tle.pipe(capacity=1, t=tle.gpu.alloc([1, BM, BN], tl.int32))
    tle.gpu.warp_specialize([(fill, (p, x_ptr, N, K)), (drain, (p, y_ptr, N, K))], [4], [232])


def fill(p, x_ptr, N, K):
''' + OFFS + '''    w = p.writer()
    for i in range(N):
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.t), tl.zeros([BM, BN], tl.int32))
        for k in range(K):
            tl.store(tle.gpu.local_ptr(s.t), tl.load(tle.gpu.local_ptr(s.t))
                     + tl.load(x_ptr + (i * 4 + k) * BM * BN + offs))
        w.commit(i)


def drain(p, y_ptr, N, K):
''' + OFFS + '''    r = p.reader()
    for i in range(N):
        res = r.wait(i)
        acc = tl.zeros([BM, BN], tl.int32)
        for k in range(i):
            acc = acc + tl.load(tle.gpu.local_ptr(res.slot.t))
        r.release(i)
        tl.store(y_ptr + i * BM * BN + offs, acc)
''' + _config(x_ptr="*i32", y_ptr="*i32", N="i32", K="i32")
BOUNDED["slot_span"] = {None}

# 13. Cache hints on register loads stored into slots and on the reader's store, an L2
#     prefetch of the next tile, launch_dependents under an `if` in the 1-warp writer and at the
#     end of the reader (fp16 fields, y = 2 x).
KERNELS["hints"] = HEAD + '''
@tle.jit(num_warps=4)
def hints(x_ptr, y_ptr, N):
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, BM, BN], tl.float16),
                 u=tle.gpu.alloc([2, BM, BN], tl.float16))
    tle.gpu.warp_specialize([(fill, (p, x_ptr, N)), (drain, (p, y_ptr, N))], [1], [24])


def fill(p, x_ptr, N):
    rows = tl.arange(0, BM)
    offs = rows[:, None] * BN + tl.arange(0, BN)[None, :]
    w = p.writer()
    for i in range(N):
        tle.gpu.prefetch_l2(x_ptr + ((i + 1) * BM + rows) * BN, 128,
                            mask=(i + 1 < N) & (rows >= 0))
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.t),
                 tl.load(x_ptr + i * BM * BN + offs, eviction_policy="evict_first"))
        tl.store(tle.gpu.local_ptr(s.u), tl.load(x_ptr + i * BM * BN + offs, cache_modifier=".cg",
                                                 mask=offs >= 0, other=0.0))
        if i == N - 1:
            tle.gpu.launch_dependents()
        w.commit(i)


def drain(p, y_ptr, N):
''' + OFFS + '''    r = p.reader()
    for i in range(N):
        res = r.wait(i)
        tl.store(y_ptr + i * BM * BN + offs, tl.load(tle.gpu.local_ptr(res.slot.t))
                 + tl.load(tle.gpu.local_ptr(res.slot.u), cache_modifier=".cv"),
                 eviction_policy="evict_last")
        r.release(i)
    tle.gpu.launch_dependents()
''' + _config(x_ptr="*fp16", y_ptr="*fp16", N="i32")

# 14. TMA copies with small boxes into a capacity-4 ring from a 1-warp writer: bf16 [16, 32]
#     (64-byte rows), bf16 [8, 16] (32-byte rows), fp32 [64, 8] (32-byte rows), bf16 [1, 64] (one
#     row): one expect-tx of 3456 bytes per commit.
KERNELS["tma_small_boxes"] = '''
import triton.language as tl

import tle_compiler as tle


@tle.jit(num_warps=4)
def tma_small_boxes(a_desc, b_desc, c_desc, d_desc, y_ptr, N):
    p = tle.pipe(capacity=4, a=tle.gpu.alloc([4, 16, 32], tl.bfloat16),
                 b=tle.gpu.alloc([4, 8, 16], tl.bfloat16),
                 c=tle.gpu.alloc([4, 64, 8], tl.float32),
                 d=tle.gpu.alloc([4, 1, 64], tl.bfloat16))
    tle.gpu.warp_specialize([(fill, (p, a_desc, b_desc, c_desc, d_desc, N)),
                             (drain, (p, y_ptr, N))], [1], [24])


def fill(p, a_desc, b_desc, c_desc, d_desc, N):
    w = p.writer()
    for i in range(N):
        s = w.acquire(i)
        tle.gpu.tma_load(s.a, a_desc, [i * 16, 0])
        tle.gpu.tma_load(s.b, b_desc, [i * 8, 0])
        tle.gpu.tma_load(s.c, c_desc, [i * 64, 0])
        tle.gpu.tma_load(s.d, d_desc, [i, 0])
        w.commit(i)


def drain(p, y_ptr, N):
    r = p.reader()
    for i in range(N):
        res = r.wait(i)
        a = tl.load(tle.gpu.local_ptr(res.slot.a))
        b = tl.load(tle.gpu.local_ptr(res.slot.b))
        c = tl.load(tle.gpu.local_ptr(res.slot.c))
        d = tl.load(tle.gpu.local_ptr(res.slot.d))
        r.release(i)
        y = y_ptr + i * 1216
        tl.store(y + tl.arange(0, 16)[:, None] * 32 + tl.arange(0, 32)[None, :], a.to(tl.float32))
        tl.store(y + 512 + tl.arange(0, 8)[:, None] * 16 + tl.arange(0, 16)[None, :],
                 b.to(tl.float32))
        tl.store(y + 640 + tl.arange(0, 64)[:, None] * 8 + tl.arange(0, 8)[None, :], c)
        tl.store(y + 1152 + tl.arange(0, 1)[:, None] * 64 + tl.arange(0, 64)[None, :],
                 d.to(tl.float32))
''' + _config(a_desc="tensordesc<bf16[16, 32]>", b_desc="tensordesc<bf16[8, 16]>",
              c_desc="tensordesc<fp32[64, 8]>", d_desc="tensordesc<bf16[1, 64]>", y_ptr="*fp32",
              N="i32")

# 15. TMA boxes wider than a swizzle span in a capacity-1 ring from a 2-warp writer: fp32
#     [16, 64] (256-byte rows: two boxes), int8 [16, 256] (two), bf16 [8, 128] (two), copied in
#     another order than declared: one expect-tx of 10240 bytes.
KERNELS["tma_wide_boxes"] = '''
import triton.language as tl

import tle_compiler as tle


@tle.jit(num_warps=4)
def tma_wide_boxes(a_desc, b_desc, c_desc, ya_ptr, yb_ptr, yc_ptr, N):
    p = tle.pipe(capacity=1, a=tle.gpu.alloc([1, 16, 64], tl.float32),
                 b=tle.gpu.alloc([1, 16, 256], tl.int8),
                 c=tle.gpu.alloc([1, 8, 128], tl.bfloat16))
    tle.gpu.warp_specialize([(fill, (p, a_desc, b_desc, c_desc, N)),
                             (drain, (p, ya_ptr, yb_ptr, yc_ptr, N))], [2], [40])


def fill(p, a_desc, b_desc, c_desc, N):
    w = p.writer()
    for i in range(N):
        s = w.acquire(i)
        tle.gpu.tma_load(s.c, c_desc, [i * 8, 0])
        tle.gpu.tma_load(s.a, a_desc, [i * 16, 0])
        tle.gpu.tma_load(s.b, b_desc, [i * 16, 0])
        w.commit(i)


def drain(p, ya_ptr, yb_ptr, yc_ptr, N):
    r = p.reader()
    for i in range(N):
        res = r.wait(i)
        a = tl.load(tle.gpu.local_ptr(res.slot.a))
        b = tl.load(tle.gpu.local_ptr(res.slot.b))
        c = tl.load(tle.gpu.local_ptr(res.slot.c))
        r.release(i)
        tl.store(ya_ptr + (i * 16 + tl.arange(0, 16))[:, None] * 64 + tl.arange(0, 64)[None, :], a)
        tl.store(yb_ptr + (i * 16 + tl.arange(0, 16))[:, None] * 256 + tl.arange(0, 256)[None, :],
                 b.to(tl.int32))
        tl.store(yc_ptr + (i * 8 + tl.arange(0, 8))[:, None] * 128 + tl.arange(0, 128)[None, :], c)
''' + _config(a_desc="tensordesc<fp32[16, 64]>", b_desc="tensordesc<i8[16, 256]>",
              c_desc="tensordesc<bf16[8, 128]>", ya_ptr="*fp32", yb_ptr="*i32", yc_ptr="*bf16",
              N="i32")

# 16. A loop over this program's share of N tiles (M = cdiv(N - pid, num_programs) computed in
#     the kernel body from program ids; tile pid + k * NP), launched on 3 programs.
KERNELS["pid_loop"] = HEAD + '''
@tle.jit(num_warps=4)
def pid_loop(x_ptr, y_ptr, N):
    pid = tl.program_id(0)
    NP = tl.num_programs(0)
    M = tl.cdiv(N - pid, NP)
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, BM, BN], tl.int32))
    tle.gpu.warp_specialize([(fill, (p, x_ptr, M, pid, NP)), (drain, (p, y_ptr, M, pid, NP))],
                            [4], [232])


def fill(p, x_ptr, M, pid, NP):
''' + OFFS + '''    w = p.writer()
    for k in range(M):
        t = pid + k * NP
        s = w.acquire(k)
        tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + t * BM * BN + offs))
        w.commit(k)


def drain(p, y_ptr, M, pid, NP):
''' + OFFS + '''    r = p.reader()
    for k in range(M):
        res = r.wait(k)
        tl.store(y_ptr + (pid + k * NP) * BM * BN + offs, tl.load(tle.gpu.local_ptr(res.slot.t)))
        r.release(k)
''' + _config(3, x_ptr="*i32", y_ptr="*i32", N="i32")

# 17. Kernel names that look like the lowering's own: a partition local `_helper1_v` beside a
#     helper local of that name (inlined as `_put1__helper1_v`), one named like a stage variable
#     (`_p_s0`), a result handle named `mres`; y = x + 1 and x += 12 in place.
KERNELS["generated_like_names"] = HEAD + '''
@tle.jit(num_warps=4)
def generated_like_names(x_ptr, y_ptr, N):
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, BM, BN], tl.int32))
    tle.gpu.warp_specialize([(fill, (p, x_ptr, N)), (drain, (p, y_ptr, N))], [4], [232])


def put(w, i, v):
    s = w.acquire(i)
    _helper1_v = v + 1
    tl.store(tle.gpu.local_ptr(s.t), _helper1_v)
    w.commit(i)


def fill(p, x_ptr, N):
''' + OFFS + '''    w = p.writer()
    _helper1_v = 5
    _helper0_v = 7
    for i in range(N):
        gv = tl.load(x_ptr + i * BM * BN + offs)
        put(w, i, gv)
        _p_s0 = _helper1_v + _helper0_v
        tl.store(x_ptr + i * BM * BN + offs, gv + _p_s0)


def drain(p, y_ptr, N):
''' + OFFS + '''    r = p.reader()
    for i in range(N):
        mres = r.wait(i)
        tv = tl.load(tle.gpu.local_ptr(mres.slot.t))
        r.release(i)
        tl.store(y_ptr + i * BM * BN + offs, tv)
''' + _config(x_ptr="*i32", y_ptr="*i32", N="i32")

# 18. wgmma operands read before the release in the two branches of a runtime `if` (A @ B on
#     even tiles, B @ A on odd ones), and a tl.trans'd operand, the result used after the release.
KERNELS["dot_branches"] = HEAD64 + '''
@tle.jit(num_warps=4)
def dot_branches(a_ptr, b_ptr, c_ptr, N):
    p = tle.pipe(capacity=2, a=tle.gpu.alloc([2, BM, BN], tl.bfloat16),
                 b=tle.gpu.alloc([2, BN, BN], tl.bfloat16))
    tle.gpu.warp_specialize([(mma, (p, c_ptr, N)), (fill, (p, a_ptr, b_ptr, N))], [4], [160])


def fill(p, a_ptr, b_ptr, N):
''' + OFFS + '''    w = p.writer()
    for i in range(N):
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.a), tl.load(a_ptr + i * BM * BN + offs))
        tl.store(tle.gpu.local_ptr(s.b), tl.load(b_ptr + i * BN * BN + offs))
        w.commit(i)


def mma(p, c_ptr, N):
''' + OFFS + '''    r = p.reader()
    for i in range(N):
        res = r.wait(i)
        a = tl.load(tle.gpu.local_ptr(res.slot.a))
        b = tl.load(tle.gpu.local_ptr(res.slot.b))
        if i % 2 == 0:
            acc = tl.dot(a, b)
        else:
            acc = tl.dot(b, a)
        acc = tl.dot(a, tl.trans(b), acc)
        r.release(i)
        tl.store(c_ptr + i * BM * BN + offs, acc + 1.0)
''' + _config(a_ptr="*bf16", b_ptr="*bf16", c_ptr="*fp32", N="i32")

# 19. Pipelined wgmma (wgmma_pipeline=True: in flight across the back-edge) under a runtime `if`
#     (tiles with i % 3 != 1), each slot released one iteration late and the last after the
#     loop, on a capacity-3 ring.
KERNELS["pipelined_delay_if"] = HEAD64 + '''
@tle.jit(num_warps=4, wgmma_pipeline=True)
def pipelined_delay_if(a_ptr, c_ptr, N):
    p = tle.pipe(capacity=3, a=tle.gpu.alloc([3, BM, BN], tl.bfloat16))
    tle.gpu.warp_specialize([(mma, (p, c_ptr, N)), (fill, (p, a_ptr, N))], [4], [96])


def fill(p, a_ptr, N):
''' + OFFS + '''    w = p.writer()
    for i in range(N):
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.a), tl.load(a_ptr + i * BM * BN + offs))
        w.commit(i)


def mma(p, c_ptr, N):
''' + OFFS + '''    r = p.reader()
    acc = tl.zeros([BM, BN], tl.float32)
    for i in range(N):
        res = r.wait(i)
        a = tl.load(tle.gpu.local_ptr(res.slot.a))
        if i % 3 != 1:
            acc = tl.dot(a, a, acc)
        if i > 0:
            r.release(i - 1)
    if N > 0:
        r.release(N - 1)
    tl.store(c_ptr + offs, acc)
''' + _config(a_ptr="*bf16", c_ptr="*fp32", N="i32")

# 20. Kernel names equal to the lowering's names for the pipe's arrays (`p_full0`, `p_t` in the
#     kernel body, a partition parameter `p_empty0`), and a loop variable named like a stage
#     variable (`_p_s1`): the arrays get `__1` suffixes, the stage variables other numbers
#     (y = (x + 2) * 2).
KERNELS["array_names"] = HEAD + '''
@tle.jit(num_warps=4)
def array_names(x_ptr, y_ptr, N):
    p_full0 = N + 0
    p_t = 2
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, BM, BN], tl.int32))
    tle.gpu.warp_specialize([(fill, (p, x_ptr, p_full0, p_t)), (drain, (p, y_ptr, p_full0, p_t))],
                            [4], [232])


def fill(p, x_ptr, p_empty0, p_t):
''' + OFFS + '''    w = p.writer()
    for _p_s1 in range(p_empty0):
        s = w.acquire(_p_s1)
        tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + _p_s1 * BM * BN + offs) + p_t)
        w.commit(_p_s1)


def drain(p, y_ptr, p_full0, p_t):
''' + OFFS + '''    r = p.reader()
    for i in range(p_full0):
        p_full0_1 = r.wait(i)
        tl.store(y_ptr + i * BM * BN + offs, tl.load(tle.gpu.local_ptr(p_full0_1.slot.t)) * p_t)
        r.release(i)
''' + _config(x_ptr="*i32", y_ptr="*i32", N="i32")

# 21. One helper (`take`: wait, read, release) called on an mbarrier pipe (a, capacity 2) and on
#     a named-barrier pipe (b, whose releases the commits of ack imply) by partitions of 4 and 8
#     warps (y = x + 1).
KERNELS["named_and_mbarrier_helper"] = HEAD + '''
@tle.jit(num_warps=4)
def named_and_mbarrier_helper(x_ptr, y_ptr, N):
    a = tle.pipe(capacity=2, t=tle.gpu.alloc([2, BM, BN], tl.int32))
    b = tle.pipe(capacity=1, barrier="named", t=tle.gpu.alloc([1, BM, BN], tl.int32))
    ack = tle.pipe(capacity=1, f=tle.gpu.alloc([1, BN], tl.int32))
    tle.gpu.warp_specialize([(first, (a, x_ptr, N)), (mid, (a, b, ack, N)),
                             (last, (b, ack, y_ptr, N))], [4, 8], [80, 88])


def take(r, i):
    res = r.wait(i)
    v = tl.load(tle.gpu.local_ptr(res.slot.t))
    r.release(i)
    return v


def first(a, x_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    w = a.writer()
    for i in range(N):
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + i * BM * BN + offs))
        w.commit(i)


def mid(a, b, ack, N):
    r = a.reader()
    w = b.writer()
    k = ack.reader()
    for i in range(N):
        v = take(r, i)
        if i > 0:
            k.wait(i - 1)
            k.release(i - 1)
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.t), v + 1)
        w.commit(i)
    if N > 0:
        k.wait(N - 1)
        k.release(N - 1)


def last(b, ack, y_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    r = b.reader()
    aw = ack.writer()
    for i in range(N):
        v = take(r, i)
        tl.store(y_ptr + i * BM * BN + offs, v)
        s = aw.acquire(i)
        tl.store(tle.gpu.local_ptr(s.f), tl.sum(v, 0))
        aw.commit(i)
''' + _config(x_ptr="*i32", y_ptr="*i32", N="i32")

# 22. An if / elif / else on a tl.static_range variable choosing the pipe and the index of each
#     unrolled copy's events (tiles 4 i + j go to a at 2 i, 2 i + 1 and to b, plus one, at
#     2 i, 2 i + 1); the reader alternates a and b (bounded: its loop runs to 2 N).
KERNELS["static_branches"] = HEAD + '''
@tle.jit(num_warps=4)
def static_branches(x_ptr, y_ptr, N):
    a = tle.pipe(capacity=2, t=tle.gpu.alloc([2, BM, BN], tl.int32))
    b = tle.pipe(capacity=3, t=tle.gpu.alloc([3, BM, BN], tl.int32))
    tle.gpu.warp_specialize([(fill, (a, b, x_ptr, N)), (drain, (a, b, y_ptr, N))], [4], [232])


def fill(a, b, x_ptr, N):
''' + OFFS + '''    wa = a.writer()
    wb = b.writer()
    for i in range(N):
        for j in tl.static_range(4):
            t = 4 * i + j
            if j == 0:
                s = wa.acquire(2 * i)
                tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + t * BM * BN + offs))
                wa.commit(2 * i)
            elif j == 2:
                s = wa.acquire(2 * i + 1)
                tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + t * BM * BN + offs))
                wa.commit(2 * i + 1)
            elif j == 1:
                s = wb.acquire(2 * i)
                tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + t * BM * BN + offs) + 1)
                wb.commit(2 * i)
            else:
                s = wb.acquire(2 * i + 1)
                tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + t * BM * BN + offs) + 1)
                wb.commit(2 * i + 1)


def drain(a, b, y_ptr, N):
''' + OFFS + '''    ra = a.reader()
    rb = b.reader()
    for k in range(2 * N):
        res = ra.wait(k)
        tl.store(y_ptr + (2 * k) * BM * BN + offs, tl.load(tle.gpu.local_ptr(res.slot.t)))
        ra.release(k)
        res = rb.wait(k)
        tl.store(y_ptr + (2 * k + 1) * BM * BN + offs, tl.load(tle.gpu.local_ptr(res.slot.t)))
        rb.release(k)
''' + _config(x_ptr="*i32", y_ptr="*i32", N="i32")
BOUNDED["static_branches"] = {None}

# 23. A wgmma's A operand carried from the previous iteration as a register copy of that
#     iteration's slot (tl.where(..., cur, cur)), B the current slot read in place, released
#     after it: acc = sum over i of a[i - 1] @ a[i] (a[-1] = 0).
KERNELS["carried_operand"] = HEAD64 + '''
@tle.jit(num_warps=4)
def carried_operand(a_ptr, c_ptr, N):
    p = tle.pipe(capacity=2, a=tle.gpu.alloc([2, BM, BN], tl.bfloat16))
    tle.gpu.warp_specialize([(mma, (p, c_ptr, N)), (fill, (p, a_ptr, N))], [4], [160])


def fill(p, a_ptr, N):
''' + OFFS + '''    w = p.writer()
    for i in range(N):
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.a), tl.load(a_ptr + i * BM * BN + offs))
        w.commit(i)


def mma(p, c_ptr, N):
''' + OFFS + '''    r = p.reader()
    acc = tl.zeros([BM, BN], tl.float32)
    prev = tl.zeros([BM, BN], tl.bfloat16)
    for i in range(N):
        res = r.wait(i)
        cur = tl.load(tle.gpu.local_ptr(res.slot.a))
        acc = tl.dot(prev, cur, acc)
        r.release(i)
        prev = tl.where(offs >= 0, cur, cur)
    tl.store(c_ptr + offs, acc)
''' + _config(a_ptr="*bf16", c_ptr="*fp32", N="i32")

TMA = {"tma_small_boxes": 3456, "tma_wide_boxes": 10240}

# ------------------------------------------------------------------ the checks

NAMES = sorted(KERNELS)
SETTINGS = [(n, cx) for n in NAMES for cx in CONSTEXPRS.get(n, [{}])]
SETTING_IDS = [n + "".join(f"-{k}={v}" for k, v in cx.items()) for n, cx in SETTINGS]


def _write(tmp_path: Path, name: str, text: str = None) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(KERNELS[name] if text is None else text)
    return path


def _config_of(path: Path, name: str, cx: dict) -> dict:
    from tle_compiler.lowering.dumping import default_config

    config = default_config(str(path), name)
    return dict(config, constexprs=dict(config["constexprs"], **cx))


def _dump(args: list) -> tuple[int, str]:
    from tle_compiler.cli.dump import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        rc = main(args)
    return rc, out.getvalue()


def _bounded(name: str, cx: dict) -> bool:
    return next(iter(cx.values()), None) in BOUNDED.get(name, ())


@pytest.mark.parametrize("name,cx", SETTINGS, ids=SETTING_IDS)
def test_tle_dump_verifies(name, cx, tmp_path):
    path = _write(tmp_path, name)
    flags = [f"--param={k}={v}" for k, v in _config_of(path, name, cx)["constexprs"].items()]
    rc, text = _dump(["--graph", *flags, str(path)])
    if _bounded(name, cx):
        assert rc == 3 and f"{name}: bounded: protocol well-formed, deadlock-free" in text, text
    else:
        assert rc == 0 and f"{name}: verified for every value" in text, text


@pytest.mark.parametrize("name,cx", SETTINGS, ids=SETTING_IDS)
def test_compiles_for_sm90a(name, cx, tmp_path):
    """Compiled as a launch reads the kernel (compile_kernel of (path, name) and the
    constexprs), for TMA kernels with every commit's expect-tx the bytes its copies deliver (read
    from the generated Gluon and the descriptors' boxes)."""
    from tle_compiler.lowering import compile_kernel

    path = _write(tmp_path, name)
    config = _config_of(path, name, cx)
    c = compile_kernel((str(path), name), config["signature"], config["constexprs"])
    assert ".target sm_90a" in c.asm["ptx"] and c.asm["cubin"]
    if name in TMA:
        from .test_lowering_adversarial_tma import _tx_problems

        problems, walk = _tx_problems(c.tle_generated.source, name, config["signature"])
        assert not problems, "\n".join(problems)
        assert {tx for _, tx, _ in walk.expects} == {TMA[name]}, walk.expects
        assert "cp.async.bulk.tensor" in c.asm["ptx"]


def _grid(program, constexprs: dict) -> list[dict]:
    """param_grid over the params that are not constexprs, each with the constexprs' values."""
    fixed = {p.name: constexprs[p.name] for p in program.params if p.name in constexprs}
    free = SimpleNamespace(params=[p for p in program.params if p.name not in fixed])
    return [dict(g, **fixed) for g in param_grid(free)]


@pytest.mark.parametrize("name,cx", SETTINGS, ids=SETTING_IDS)
def test_generated_barrier_operations_are_the_verified_events(name, cx, tmp_path):
    """For each constexpr setting the lowered kernel's trace equals the verified events at trip
    counts 0, 1, 2, 3, 5 (0, 1, 3 for two params)."""
    path = _write(tmp_path, name)
    config = _config_of(path, name, cx)
    runs = Runs(path, name, config)
    lk = runs.lowered(config["constexprs"])
    grid = _grid(lk.program, config["constexprs"])
    assert len(grid) >= 3
    problems = []
    for values in grid:
        if not cx:  # Runs drives every param (a value computed from program ids is pinned)
            problems += runs.check(values)
            continue
        params, found = lk.check({a: values.get(a, 64) for a in runs.int_args}, {})
        assert params == values, (params, values)
        problems += [f"{name} {cx} with {values}: {p}" for p in found]
    assert not problems, "\n".join(problems)



@pytest.mark.parametrize("name,cx", SETTINGS, ids=SETTING_IDS)
def test_barrier_operations_at_a_large_trip_count(name, cx, tmp_path):
    """The stage and parity arithmetic over many wraps of every ring: the first free param at
    1001 (301 for slot_span, whose reader's inner loop runs i times; any other at 2), where each
    stage has been reused hundreds of times."""
    path = _write(tmp_path, name)
    config = _config_of(path, name, cx)
    runs = Runs(path, name, config)
    lk = runs.lowered(config["constexprs"])
    free = [p.name for p in lk.program.params if p.name not in config["constexprs"]]
    values = {p: ((301 if name == "slot_span" else 1001) if i == 0 else 2)
              for i, p in enumerate(free)}
    if not cx:
        problems = runs.check(values)
    else:
        params, problems = lk.check({a: values.get(a, 64) for a in runs.int_args}, {})
        assert params == dict(values, **{k: v for k, v in config["constexprs"].items()
                                         if k in params}), params
    assert not problems, "\n".join(problems)



@pytest.mark.parametrize("name", NAMES)
def test_debug_waits_keep_the_verified_events(name, tmp_path):
    """With bounded (debug) waits the generated barrier operations are still the verified
    events (their DEFAULT_CONFIG's constexprs)."""
    path = _write(tmp_path, name)
    config = _config_of(path, name, {})
    runs = Runs(path, name, config, debug_waits=True)
    lk = runs.lowered(config["constexprs"])
    grid = _grid(lk.program, config["constexprs"])
    assert len(grid) >= 3
    problems = []
    for values in grid:
        if CONSTEXPRS.get(name):
            params, found = lk.check({a: values.get(a, 64) for a in runs.int_args}, {})
            assert params == values, (params, values)
            problems += found
        else:
            problems += runs.check(values)
    assert not problems, "\n".join(problems)


# ------------------------------------------------------------------ emulated results

def _tiles(n: int, seed: int):
    import torch

    g = torch.Generator().manual_seed(seed)
    return torch.randint(-50, 50, (max(n, 1), 32, 64), generator=g, dtype=torch.int32)


def _emulated(tmp_path: Path, name: str):
    from tle_compiler.testing.emulator import load_kernel_module

    return getattr(load_kernel_module(_write(tmp_path, name)), name)


@pytest.mark.parametrize("n,base", [(0, 0), (1, 0), (4, 0)])
def test_emulated_offset(n, base, tmp_path):
    """At BASE = 0 only: the emulator's pipe blocks acquire(i) until release(i - capacity),
    which never comes for a stream starting at BASE > 0 (on the GPU the first acquire of each
    stage passes a fresh barrier's phase, as the verifier models it)."""
    import torch

    x = _tiles(n, 1)
    y = torch.full_like(x, -999)
    _emulated(tmp_path, "offset")[(1,)](x, y, n, base)
    assert torch.equal(y[:n], x[:n] + base)


@pytest.mark.parametrize("n,r", [(2, 0), (3, 1), (2, 3)])
def test_emulated_static_r(n, r, tmp_path):
    import torch

    x = _tiles(n * r, 2)
    y = torch.full_like(x, -999)
    _emulated(tmp_path, "static_r")[(1,)](x, y, n, r)
    for t in range(n * r):
        assert torch.equal(y[t], x[t] + t % r)
    if not n * r:
        assert (y == -999).all()


@pytest.mark.parametrize("n", [0, 1, 3])
def test_emulated_inner_dep(n, tmp_path):
    import torch

    x = _tiles(2 * n + 1, 3)
    y = torch.full_like(x, -999)
    _emulated(tmp_path, "inner_dep")[(1,)](x, y, n)
    for i in range(n):
        for j in (i, i + 1):
            assert torch.equal(y[i + j], x[i + j] + j)


@pytest.mark.parametrize("n", [0, 2])
def test_emulated_shadow(n, tmp_path):
    import torch

    x = _tiles(n + 1, 4)
    y = torch.full((n + 1, 32, 64), -999, dtype=torch.int32)
    _emulated(tmp_path, "shadow")[(1,)](x, y, n)
    for i in range(n + 1):  # the writer adds its N (the body's NT), the reader the body's offs
        assert torch.equal(y[i], x[i] + (n + 1) + 7)


@pytest.mark.parametrize("n", [0, 1, 4])
def test_emulated_helper_pipes(n, tmp_path):
    import torch

    x = _tiles(n, 5)
    y = torch.full_like(x, -999)
    _emulated(tmp_path, "helper_pipes")[(1,)](x, y, n)
    assert torch.equal(y[:n], x[:n] + 11)


@pytest.mark.parametrize("name", ["readers_c1", "readers_c4"])
@pytest.mark.parametrize("n", [0, 1, 5])
def test_emulated_readers(name, n, tmp_path):
    import torch

    x = _tiles(n, 6)
    y = torch.full((3 * n + 3, 32, 64), -999, dtype=torch.int32)
    _emulated(tmp_path, name)[(1,)](x, y, n)
    flat = y.reshape(-1)
    assert torch.equal(y[:n], x[:n])
    sums = flat[(n + 1) * 2048:(n + 1) * 2048 + n * 64].reshape(n, 64)
    assert torch.equal(sums, x[:n].sum(1).int())
    diffs = flat[(2 * n + 2) * 2048:(2 * n + 2) * 2048 + n * 64]
    assert (diffs == 0).all()


def _bf16_tiles(n: int, rows: int, seed: int):
    import torch

    g = torch.Generator().manual_seed(seed)
    return torch.randint(-3, 4, (max(n, 1), rows, 64), generator=g).to(torch.bfloat16)


@pytest.mark.parametrize("n", [1, 2])
def test_emulated_two_slots_dot(n, tmp_path):
    import torch

    a = _bf16_tiles(2 * n, 64, 7).float()
    c = torch.full((64, 64), float("nan"))
    _emulated(tmp_path, "two_slots_dot")[(1,)](a.bfloat16(), c, n)
    want = torch.zeros(64, 64)
    for i in range(n):
        want = want + a[2 * i] @ a[2 * i + 1]
        if i % 2 == 0:
            want = want + a[2 * i + 1] @ a[2 * i + 1]
    assert torch.allclose(c, want)


@pytest.mark.parametrize("n", [1, 3])
def test_emulated_worker8_dot(n, tmp_path):
    import torch

    a = _bf16_tiles(n, 128, 8)
    b = _bf16_tiles(n, 64, 9)
    c = torch.full((n, 128, 64), float("nan"))
    _emulated(tmp_path, "worker8_dot")[(1,)](a, b, c, n)
    assert torch.allclose(c, a.float() @ b.float())


@pytest.mark.parametrize("n", [1, 3])
def test_emulated_helper_dot(n, tmp_path):
    import torch

    a = _bf16_tiles(n, 64, 10)
    c = torch.full((n + 1, 64, 64), float("nan"))
    _emulated(tmp_path, "helper_dot")[(1,)](a, c, n)
    sq = a.float() @ a.float()
    assert torch.allclose(c[0], sq.sum(0)) and torch.allclose(c[1:], sq)


@pytest.mark.parametrize("n", [0, 1, 3])
def test_emulated_trailer(n, tmp_path):
    import torch

    x = _tiles(n, 11)
    y = torch.full((n + 1, 32, 64), -999, dtype=torch.int32)
    _emulated(tmp_path, "trailer")[(1,)](x, y, n)
    assert torch.equal(y[:n], x[:n])
    assert torch.equal(y[n], 3 * x[:n].sum(0))


@pytest.mark.parametrize("n,k", [(0, 2), (3, 0), (3, 2)])
def test_emulated_slot_span(n, k, tmp_path):
    import torch

    x = _tiles(4 * n + 4, 12)
    y = torch.full((max(n, 1), 32, 64), -999, dtype=torch.int32)
    _emulated(tmp_path, "slot_span")[(1,)](x, y, n, k)
    for i in range(n):
        assert torch.equal(y[i], i * x[i * 4:i * 4 + k].sum(0))


@pytest.mark.parametrize("n", [0, 1, 3])
def test_emulated_hints(n, tmp_path):
    import torch

    from tle_compiler.testing.emulator import load_kernel_module

    x = _tiles(n + 1, 13).half()
    y = torch.full_like(x, -999)
    text = KERNELS["hints"]  # the emulator takes no cache hints: run without them
    for hint in (', eviction_policy="evict_first"', ', cache_modifier=".cg"',
                 ', cache_modifier=".cv"', ',\n                 eviction_policy="evict_last"'):
        assert hint in text, hint
        text = text.replace(hint, "")
    load_kernel_module(_write(tmp_path, "hints", text)).hints[(1,)](x, y, n)
    assert torch.equal(y[:n], 2 * x[:n])


def _desc(t, block):
    from triton.tools.tensor_descriptor import TensorDescriptor

    return TensorDescriptor(t, list(t.shape), list(t.stride()), list(block))


@pytest.mark.parametrize("n", [1, 5])
def test_emulated_tma_small_boxes(n, tmp_path):
    import torch

    g = torch.Generator().manual_seed(n)
    a = torch.randint(-9, 9, (16 * n, 32), generator=g).bfloat16()
    b = torch.randint(-9, 9, (8 * n, 16), generator=g).bfloat16()
    c = torch.randn(64 * n, 8, generator=g)
    d = torch.randint(-9, 9, (n, 64), generator=g).bfloat16()
    y = torch.full((n, 1216), float("nan"))
    _emulated(tmp_path, "tma_small_boxes")[(1,)](
        _desc(a, [16, 32]), _desc(b, [8, 16]), _desc(c, [64, 8]), _desc(d, [1, 64]), y, n)
    for i in range(n):
        got = torch.cat([a[16 * i:16 * i + 16].float().reshape(-1),
                         b[8 * i:8 * i + 8].float().reshape(-1),
                         c[64 * i:64 * i + 64].reshape(-1), d[i].float()])
        assert torch.equal(y[i], got)


@pytest.mark.parametrize("n", [1, 3])
def test_emulated_tma_wide_boxes(n, tmp_path):
    import torch

    g = torch.Generator().manual_seed(n)
    a = torch.randn(16 * n, 64, generator=g)
    b = torch.randint(-100, 100, (16 * n, 256), generator=g, dtype=torch.int8)
    c = torch.randint(-9, 9, (8 * n, 128), generator=g).bfloat16()
    ya, yb = torch.full_like(a, float("nan")), torch.full((16 * n, 256), -999, dtype=torch.int32)
    yc = torch.full_like(c, float("nan"))
    _emulated(tmp_path, "tma_wide_boxes")[(1,)](
        _desc(a, [16, 64]), _desc(b, [16, 256]), _desc(c, [8, 128]), ya, yb, yc, n)
    assert torch.equal(ya, a) and torch.equal(yb, b.int()) and torch.equal(yc, c)


@pytest.mark.parametrize("n", [0, 2, 7])
def test_emulated_pid_loop(n, tmp_path):
    import torch

    x = _tiles(n, 14)
    y = torch.full_like(x, -999)
    _emulated(tmp_path, "pid_loop")[(3,)](x, y, n)
    assert torch.equal(y[:n], x[:n])


@pytest.mark.parametrize("n", [0, 3])
def test_emulated_generated_like_names(n, tmp_path):
    import torch

    x = _tiles(n, 15)
    x0 = x.clone()
    y = torch.full_like(x, -999)
    _emulated(tmp_path, "generated_like_names")[(1,)](x, y, n)
    assert torch.equal(y[:n], x0[:n] + 1) and torch.equal(x[:n], x0[:n] + 12)


@pytest.mark.parametrize("n", [1, 2])
def test_emulated_dot_branches(n, tmp_path):
    import torch

    a = _bf16_tiles(n, 64, 16).float()
    b = _bf16_tiles(n, 64, 17).float()
    c = torch.full((n, 64, 64), float("nan"))
    _emulated(tmp_path, "dot_branches")[(1,)](a.bfloat16(), b.bfloat16(), c, n)
    for i in range(n):
        first = a[i] @ b[i] if i % 2 == 0 else b[i] @ a[i]
        assert torch.allclose(c[i], first + a[i] @ b[i].T + 1.0)


# ------------------------------------------------------------------ the constexpr offset, both ways

def test_a_constexpr_offset_lowers_at_the_value_tle_dump_verified(tmp_path):
    """tle-dump --param BASE=6 verifies it, --gluon --param BASE=6 prints it (exit 0), and the
    lowering with BASE = 6 checks the protocol at BASE = 6 (before this round: refused with the
    error of BASE = -1)."""
    from tle_compiler.lowering import gluon_source

    path = _write(tmp_path, "offset")
    rc, text = _dump(["-q", "--gluon", "--param", "BASE=6", str(path)])
    assert rc == 0 and "gl.warp_specialize" in text, text
    src = gluon_source((str(path), "offset"), {"BASE": 6}).source
    assert "mbarrier.wait(p_empty0.index(" in src


def test_a_constexpr_offset_tle_dump_rejects_is_refused_by_the_lowering(tmp_path):
    """BASE = 3 (not a multiple of 2 * capacity) is rejected by tle-dump (exit 1, phase aliasing)
    and refused by the lowering with that error: the verdict and the lowering agree."""
    from tle_compiler.lowering import compile_kernel

    path = _write(tmp_path, "offset")
    rc, text = _dump(["--param", "BASE=3", str(path)])
    assert rc == 1 and "[phase-aliasing]" in text and "verified" not in text, text
    config = _config_of(path, "offset", {"BASE": 3})
    with pytest.raises(TleError, match="the pipe protocol is rejected, nothing is lowered: "
                                       r"commit\(3\) is use 0 of stage 0"):
        compile_kernel((str(path), "offset"), config["signature"], config["constexprs"])
    rc, text = _dump(["-q", "--gluon", "--param", "BASE=3", str(path)])
    assert rc != 0 and "verified" not in text, text


# ------------------------------------------------------------------ refused before verification

def _edit(name: str, *edits: tuple[str, str]) -> str:
    text = KERNELS[name]
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new, 1)
    return text


#: name -> (kernel text, the line the error is at, what the message says)
REFUSED: dict[str, tuple[str, str, str]] = {}

REFUSED["a static_range outer loop scaling a runtime bound"] = (
    _edit("static_r", ("        for j in tl.static_range(R):\n"
                       "            s = w.acquire(i * R + j)\n",
                       "        for j in tl.static_range(R):\n"
                       "            s = w.acquire(j * N + i)\n")),
    "            s = w.acquire(j * N + i)",
    "index of w.acquire must be affine in loop variables and kernel params, got `j * N + i`")
REFUSED["a triangular index i * N + j"] = (
    _edit("inner_dep", ("            s = w.acquire(i + j)\n",
                        "            s = w.acquire(i * N + j)\n")),
    "            s = w.acquire(i * N + j)",
    "must be affine in loop variables and kernel params, got `i * N + j`")
REFUSED["one function for two partitions"] = (
    _edit("helper_pipes", ("(mid2, (b, c, N))", "(mid1, (b, c, N, 10))")),
    "                             (mid1, (b, c, N, 10))], [4, 4, 1], [80, 80, 24])",
    "partition function 'mid1' is used twice in warp_specialize")
REFUSED["a pipe parameter rebound in a loop body"] = (
    _edit("shadow", ("        x_ptr = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]\n"
                     "        tl.store(y_ptr + i * BM * BN + x_ptr,",
                     "        p = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]\n"
                     "        tl.store(y_ptr + i * BM * BN + p,")),
    "    for i in range(offs):",
    "`p` holds a pipe that this loop's body binds to another value")
REFUSED["launch_dependents after warp_specialize"] = (
    _edit("hints", ("[1], [24])\n", "[1], [24])\n    tle.gpu.launch_dependents()\n")),
    "    tle.gpu.launch_dependents()",
    "`tle.gpu.launch_dependents()` after tle.gpu.warp_specialize")
REFUSED["a store's cache_modifier .ca"] = (
    _edit("hints", (',\n                 eviction_policy="evict_last")',
                    ', cache_modifier=".ca")')),
    "        tl.store(y_ptr + i * BM * BN + offs, tl.load(tle.gpu.local_ptr(res.slot.t))",
    "tl.store(..., cache_modifier='.ca'): Triton 3.6 refuses this cache modifier on a store "
    "(it takes '.wb', '.cg', '.cs', '.wt')")
REFUSED["a load's cache_modifier .cs"] = (
    _edit("hints", ('cache_modifier=".cg"', 'cache_modifier=".cs"')),
    '        tl.store(tle.gpu.local_ptr(s.u), tl.load(x_ptr + i * BM * BN + offs, '
    'cache_modifier=".cs",',
    "tl.load(..., cache_modifier='.cs'): Triton 3.6 refuses this cache modifier on a load "
    "(it takes '.ca', '.cg', '.cv')")
REFUSED["eviction_policy evict_normal"] = (
    _edit("hints", ('eviction_policy="evict_first"', 'eviction_policy="evict_normal"')),
    '                 tl.load(x_ptr + i * BM * BN + offs, eviction_policy="evict_normal"))',
    "tl.load(..., eviction_policy='evict_normal'): Triton 3.6 refuses this eviction policy")

# (a tl.static_range variable divided, `2 * i + j // 2`, is read unrolled since adversarial
# round 66: tests/test_adversarial_verdicts_66.py)
REFUSED["an index dividing a range variable"] = (
    _edit("static_branches", ("                s = wa.acquire(2 * i)\n",
                              "                s = wa.acquire(2 * i + i // 2)\n")),
    "                s = wa.acquire(2 * i + i // 2)",
    "index of wa.acquire must be affine in loop variables and kernel params, got `2 * i + i // 2`")
REFUSED["a slot's load carried into the next iteration as a wgmma operand"] = (
    _edit("carried_operand", ("        prev = tl.where(offs >= 0, cur, cur)\n",
                              "        prev = cur\n")),
    "        acc = tl.dot(prev, cur, acc)",
    "cannot tell which slot `tl.dot(prev, cur, acc)` touches: `prev` is assigned inside the loop")


#: a writer slot and a reader result carried from one iteration into the next (software
#: pipelining by hand) and read after the loop: each handle's slot is per iteration
CARRIED = HEAD + '''
@tle.jit(num_warps=4)
def carried(x_ptr, y_ptr, N):
    tle.assume(N >= 1)
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, BM, BN], tl.int32))
    tle.gpu.warp_specialize([(fill, (p, x_ptr, N)), (drain, (p, y_ptr, N))], [4], [232])


def fill(p, x_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    w = p.writer()
    s = w.acquire(0)
    for i in range(1, N + 1):
        tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + (i - 1) * BM * BN + offs))
        w.commit(i - 1)
        if i < N:
            s = w.acquire(i)


def drain(p, y_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    r = p.reader()
    res = r.wait(0)
    for i in range(1, N):
        tl.store(y_ptr + (i - 1) * BM * BN + offs, tl.load(tle.gpu.local_ptr(res.slot.t)))
        r.release(i - 1)
        res = r.wait(i)
    tl.store(y_ptr + (N - 1) * BM * BN + offs, tl.load(tle.gpu.local_ptr(res.slot.t)) + 1000)
    r.release(N - 1)
''' + _config(x_ptr="*i32", y_ptr="*i32", N="i32")
REFUSED["a writer slot carried into the next iteration"] = (
    CARRIED,
    "        tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + (i - 1) * BM * BN + offs))",
    "cannot tell which slot `tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + (i - 1) * BM * BN "
    "+ offs))` touches: `s` is assigned inside the loop at line")
REFUSED["a reader result carried into the next iteration and past the loop"] = (
    CARRIED.replace("""    s = w.acquire(0)
    for i in range(1, N + 1):
        tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + (i - 1) * BM * BN + offs))
        w.commit(i - 1)
        if i < N:
            s = w.acquire(i)
""", """    for i in range(N):
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + i * BM * BN + offs))
        w.commit(i)
"""),
    "        tl.store(y_ptr + (i - 1) * BM * BN + offs, tl.load(tle.gpu.local_ptr(res.slot.t)))",
    "cannot tell which slot `tl.load(tle.gpu.local_ptr(res.slot.t))` touches: `res` is assigned "
    "inside the loop at line")


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_before_verification(name, tmp_path):
    text, at, says = REFUSED[name]
    path = tmp_path / "refused.py"
    path.write_text(text)
    line = text.splitlines().index(at) + 1
    rc, out = _dump([str(path)])
    assert rc == 1, out
    assert f"{path}:{line}: error: " in out and says in out, out
    assert "verified for" not in out, out


@pytest.mark.parametrize("modifier", [".cs", ".wb", ".wt"])
def test_a_hint_triton_refuses_is_refused_by_tle_dump_and_the_lowering_alike(modifier, tmp_path):
    """Refused or compiled, never verified and then failed: a load's store-only cache modifier
    is refused by tle-dump (exit 1) and by compile_kernel, with one message (before this round
    tle-dump verified it and Triton's frontend failed the compile)."""
    from tle_compiler.lowering import compile_kernel

    path = _write(tmp_path, "hints", _edit("hints", ('cache_modifier=".cg"',
                                                     f'cache_modifier="{modifier}"')))
    says = f"tl.load(..., cache_modifier='{modifier}'): Triton 3.6 refuses this cache modifier"
    rc, out = _dump([str(path)])
    assert rc == 1 and says in out and "verified for" not in out, out
    config = _config_of(_write(tmp_path, "ok", KERNELS["hints"]), "hints", {})
    with pytest.raises(TleError, match=re.escape(says)):
        compile_kernel((str(path), "hints"), config["signature"], {})


@pytest.mark.parametrize("edit", [
    (',\n                 eviction_policy="evict_last")',
     ', cache_modifier=".cs",\n                 eviction_policy="evict_last")'),
    ("        tl.store(y_ptr + i * BM * BN + offs, tl.load(tle.gpu.local_ptr(res.slot.t))\n",
     "        tl.store(y_ptr + i * BM * BN + offs, tl.load(tle.gpu.local_ptr(res.slot.t))\n"
     "                 + tl.load(y_ptr + offs, cache_modifier='.cg', eviction_policy='evict_last')"
     "\n")])
def test_a_cache_modifier_with_an_eviction_policy_is_refused(edit, tmp_path):
    """Triton 3.6 accepts a cache_modifier with an eviction_policy and ptxas refuses the PTX
    ("Modifier '.evict_last' cannot be combined with modifier '.cs'"), as it does for the same
    hints in plain Triton: tle-dump refuses the pair at its line (exit 1) and so does
    compile_kernel (it was verified, then failed in ptxas)."""
    from tle_compiler.lowering import compile_kernel

    path = _write(tmp_path, "hints", _edit("hints", edit))
    rc, out = _dump([str(path)])
    assert rc == 1 and "no instruction takes both" in out and "verified for" not in out, out
    config = _config_of(_write(tmp_path, "ok", KERNELS["hints"]), "hints", {})
    with pytest.raises(TleError, match="no instruction takes both"):
        compile_kernel((str(path), "hints"), config["signature"], {})


@pytest.mark.parametrize("n", [1, 4])
def test_emulated_pipelined_delay_if(n, tmp_path):
    import torch

    a = _bf16_tiles(n, 64, 18)
    c = torch.full((64, 64), float("nan"))
    _emulated(tmp_path, "pipelined_delay_if")[(1,)](a, c, n)
    sq = a.float() @ a.float()
    assert torch.allclose(c, sum(sq[i] for i in range(n) if i % 3 != 1))


@pytest.mark.parametrize("n", [0, 3])
def test_emulated_array_names(n, tmp_path):
    import torch

    x = _tiles(n, 19)
    y = torch.full_like(x, -999)
    _emulated(tmp_path, "array_names")[(1,)](x, y, n)
    assert torch.equal(y[:n], (x[:n] + 2) * 2)


@pytest.mark.parametrize("n", [0, 1, 4])
def test_emulated_named_and_mbarrier_helper(n, tmp_path):
    import torch

    x = _tiles(n, 20)
    y = torch.full_like(x, -999)
    _emulated(tmp_path, "named_and_mbarrier_helper")[(1,)](x, y, n)
    assert torch.equal(y[:n], x[:n] + 1)


@pytest.mark.parametrize("n", [0, 1, 3])
def test_emulated_static_branches(n, tmp_path):
    import torch

    x = _tiles(4 * n, 21)
    y = torch.full_like(x, -999)
    _emulated(tmp_path, "static_branches")[(1,)](x, y, n)
    for t in range(4 * n):
        assert torch.equal(y[t], x[t] + t % 2)


@pytest.mark.parametrize("n", [1, 3])
def test_emulated_carried_operand(n, tmp_path):
    import torch

    a = _bf16_tiles(n, 64, 22)
    c = torch.full((64, 64), float("nan"))
    _emulated(tmp_path, "carried_operand")[(1,)](a, c, n)
    want = sum(a[i - 1].float() @ a[i].float() for i in range(1, n)) if n > 1 else 0
    assert torch.allclose(c, torch.zeros(64, 64) + want)



_PREFETCH = ("        tle.gpu.prefetch_l2(x_ptr + ((i + 1) * BM + rows) * BN, 128,\n"
             "                            mask=(i + 1 < N) & (rows >= 0))\n")


def _prefetching(tmp_path: Path, nbytes: str, default: int = 24) -> Path:
    """The "hints" kernel with the prefetch of ``nbytes`` bytes and a constexpr NB (DEFAULT_CONFIG:
    ``default``) handed to its writer."""
    text = _edit("hints", (_PREFETCH, _PREFETCH.replace(" 128,", f" {nbytes},")),
                 ("def hints(x_ptr, y_ptr, N):", "def hints(x_ptr, y_ptr, N, NB: tl.constexpr):"),
                 ("(fill, (p, x_ptr, N))", "(fill, (p, x_ptr, N, NB))"),
                 ("def fill(p, x_ptr, N):", "def fill(p, x_ptr, N, NB: tl.constexpr):"),
                 ('"N": "i32"}, "constexprs": {}', '"N": "i32", "NB": "constexpr"}, '
                                                    f'"constexprs": {{"NB": {default}}}'))
    return _write(tmp_path, "hints", text)


@pytest.mark.parametrize("nbytes", ["24", "NB", "N * 16"])
def test_a_prefetch_byte_count_the_lowering_refuses_is_refused_by_tle_dump(nbytes, tmp_path):
    """`prefetch_l2(ptr, 24)`, `prefetch_l2(ptr, NB)` with `--param NB=24` and `prefetch_l2(ptr,
    N * 16)` were verified by tle-dump (exit 0) while the lowering refused them. tle-dump refuses
    them at the call's line with the lowering's reason ("nbytes must be a positive compile-time
    multiple of 16": frontend/partition_rules.py prefetch_bytes_refusal, one rule for both), and
    so does a compile with NB = 24."""
    path = _prefetching(tmp_path, nbytes)
    line = f"{path}:21:"
    for mode in ([], ["--gluon"], ["--print-ir"]):
        rc, out = _dump(["-q", *mode, "--param", "NB=24", str(path)])
        assert rc == 1 and "multiple of 16" in out and line in out, (mode, out)
        assert "verified for" not in out, (mode, out)
    from tle_compiler.lowering import compile_kernel

    with pytest.raises(TleError, match="multiple of 16") as e:
        compile_kernel((str(path), "hints"), {"x_ptr": "*fp16", "y_ptr": "*fp16", "N": "i32"},
                       {"NB": 24}, num_warps=4)
    assert e.value.loc.line == 21


def test_a_constexpr_prefetch_byte_count_is_verified_for_its_value_only(tmp_path):
    """A byte count read from a constexpr is right for some values only: tle-dump reads the
    kernel specialised to the value it is given (DEFAULT_CONFIG's or a --param's) and says the
    verdict holds for it only; the value is the one the prefetch is lowered with. A value the
    lowering refuses other than DEFAULT_CONFIG's is one the kernel cannot be read with (exit 2),
    and without any value the kernel is refused at the call."""
    path = _prefetching(tmp_path, "NB", default=128)
    rc, out = _dump(["-q", str(path)])
    assert rc == 0 and "read specialised to NB=128" in out and "with NB = 128" in out, out
    rc, out = _dump(["-q", "--param", "NB=48", str(path)])
    assert rc == 0 and "with NB = 48 (read specialised)" in out, out
    rc, out = _dump(["-q", "--gluon", "--param", "NB=48", str(path)])
    assert rc == 0 and "prefetch.L2.global [$1], 48;" in out, out
    rc, out = _dump(["-q", "--param", "NB=24", str(path)])
    assert rc == 2 and "--param NB=24: the kernel cannot be read" in out \
        and "multiple of 16" in out and "(line 21)" in out, out
    free = _write(tmp_path, "hints", path.read_text().replace('"constexprs": {"NB": 128}',
                                                               '"constexprs": {}'))
    rc, out = _dump(["-q", str(free)])
    assert rc == 1 and "the constexpr NB, which the kernel is read without a value" in out \
        and f"{free}:21:" in out, out
