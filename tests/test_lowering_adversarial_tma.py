"""What is verified is what is lowered, on kernels that fill pipe slots with TMA copies.

Each kernel below is a small TLE source (written to tmp_path) whose writer copies slot fields with
``tle.gpu.tma_load``, in forms the bundled TMA kernels (tle_kernels/gpu_tests/tma_ring.py, the
decode's TMA=1 producer) leave out: one box and several boxes per field (Triton clamps a box to
one swizzle span), several TMA fields in one group, fields filled partly by TMA and partly by
register stores or cp.async gathers in one commit (lowering/plan.py's arrive units tma,
tma-partition, tma-thread, tma-mixed), a close, capacities 1 to 3 and one-shot pipes, readers
with field views (a group per reader set), copies inside helpers, under runtime ``if``s that
commit in both branches and under ``if``s on constexprs, persistent ``r * NP + p`` loops,
descriptors renamed and routed through partitions and helpers, a rank-4 descriptor, fp32 and
int8 fields, eager publish and debug waits. For every kernel: tle-dump verifies it, it compiles
for sm_90a on the CPU, the Gluon-trace model of the generated code performs exactly the verified
events' barrier operations (tests/test_lowering_events.py's ``Runs``) for several param values,
every commit's expect-tx is the bytes its window's copies deliver (the boxes of the descriptors
the signature types, read from the generated Gluon independently of the lowering's plan), and
each commit's arrivals on a TMA-completed barrier are its init count; where the CPU emulator runs
the kernel, its results equal a torch reference (not the fp8 kernel: the emulator has no fp8).
Refused with their reason at the copy's line: a descriptor chosen by an ``if`` (the frontend) and
a copy into a ``barrier="named"`` pipe (the lowering).
"""

from __future__ import annotations

import ast
import contextlib
import io
import math
import re
from pathlib import Path

import pytest

pytest.importorskip("triton.experimental.gluon")

from tle_compiler.diagnostics import TleVerificationWarning  # noqa: E402
from tle_compiler.testing.gluon_trace import (ARRIVE, ARRIVE_CP_ASYNC, ARRIVE_THREAD,  # noqa: E402
                                              EXPECT, TMA)

from .test_lowering_events import Runs, param_grid  # noqa: E402

pytestmark = pytest.mark.filterwarnings(f"ignore::{TleVerificationWarning.__module__}."
                                        f"{TleVerificationWarning.__name__}")

HEAD = '''
import triton.language as tl

import tle_compiler as tle

BM = tl.constexpr(64)
BN = tl.constexpr(64)
'''


def _config(**types) -> str:
    """The kernel's DEFAULT_CONFIG: a constexpr is given as ``constexpr=<default value>``."""
    sig = {k: ("constexpr" if str(v).startswith("constexpr") else v) for k, v in types.items()}
    cx = {k: int(str(v).split("=")[1]) for k, v in types.items() if str(v).startswith("constexpr")}
    return ('\nDEFAULT_CONFIG = {"signature": {'
            + ", ".join(f'"{k}": "{v}"' for k, v in sig.items()) + '}, "constexprs": {'
            + ", ".join(f'"{k}": {v}' for k, v in cx.items())
            + '}, "num_warps": 4, "grid": (1,)}\n')


D64 = "tensordesc<bf16[64, 64]>"
KERNELS: dict[str, str] = {}
#: constexpr settings each kernel is checked at (default: its DEFAULT_CONFIG's alone)
CONSTEXPRS: dict[str, list[dict]] = {}
#: the arrive unit (plan.arrive_mode) of each TMA-completed full barrier array of a kernel, as
#: its comment in the generated code names it: the mode the kernel is written to exercise
MODES: dict[str, dict[str, str]] = {}
#: runtime params fixed for tle-dump, so that the one left free is proved for every value (the
#: cutoff theorem covers one free param)
FIXED: dict[str, list[dict]] = {}

# 1. Capacity 1, one field, one [64, 64] bf16 box per copy: the commit is the expect-tx alone.
KERNELS["one_box_c1"] = HEAD + '''
@tle.jit(num_warps=4)
def one_box_c1(x_desc, y_ptr, N):
    p = tle.pipe(capacity=1, t=tle.gpu.alloc([1, BM, BN], tl.bfloat16))
    tle.gpu.warp_specialize([(fill, (p, x_desc, N)), (drain, (p, y_ptr, N))], [4], [232])


def fill(p, x_desc, N):
    w = p.writer()
    for i in range(N):
        s = w.acquire(i)
        tle.gpu.tma_load(s.t, x_desc, [i * BM, 0])
        w.commit(i)


def drain(p, y_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    r = p.reader()
    for i in range(N):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.t))
        r.release(i)
        tl.store(y_ptr + i * BM * BN + offs, v)
''' + _config(x_desc=D64, y_ptr="*bf16", N="i32")
MODES["one_box_c1"] = {"p_full0": "tma"}

# 2. Capacity 3, two TMA fields of one group from two descriptors: k [64, 256] (four 64-column
#    boxes) and v [64, 128] (two): one expect-tx of both fields' bytes.
KERNELS["wide_two_fields_c3"] = HEAD + '''
@tle.jit(num_warps=4)
def wide_two_fields_c3(k_desc, v_desc, yk_ptr, yv_ptr, N):
    p = tle.pipe(capacity=3, k=tle.gpu.alloc([3, BM, 256], tl.bfloat16),
                 v=tle.gpu.alloc([3, BM, 128], tl.bfloat16))
    tle.gpu.warp_specialize([(fill, (p, k_desc, v_desc, N)), (drain, (p, yk_ptr, yv_ptr, N))],
                            [4], [232])


def fill(p, k_desc, v_desc, N):
    w = p.writer()
    for i in range(N):
        s = w.acquire(i)
        tle.gpu.tma_load(s.v, v_desc, [i * BM, 128])
        tle.gpu.tma_load(s.k, k_desc, [i * BM, 0])
        w.commit(i)


def drain(p, yk_ptr, yv_ptr, N):
    rows = tl.arange(0, BM)[:, None]
    r = p.reader()
    for i in range(N):
        res = r.wait(i)
        k = tl.load(tle.gpu.local_ptr(res.slot.k))
        v = tl.load(tle.gpu.local_ptr(res.slot.v))
        r.release(i)
        tl.store(yk_ptr + (i * BM + rows) * 256 + tl.arange(0, 256)[None, :], k)
        tl.store(yv_ptr + (i * BM + rows) * 128 + tl.arange(0, 128)[None, :], v)
''' + _config(k_desc="tensordesc<bf16[64, 256]>", v_desc="tensordesc<bf16[64, 128]>",
              yk_ptr="*bf16", yv_ptr="*bf16", N="i32")
MODES["wide_two_fields_c3"] = {"p_full0": "tma"}

# 3. tma-partition: a TMA tile and two register-stored fields (the tile's row numbers and a
#    per-row scale) in one commit, capacity 2; the reader scatters the scaled rows.
KERNELS["tma_partition_c2"] = HEAD + '''
@tle.jit(num_warps=4)
def tma_partition_c2(x_desc, s_ptr, y_ptr, N):
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, BM, BN], tl.bfloat16),
                 rows=tle.gpu.alloc([2, BM], tl.int32), sc=tle.gpu.alloc([2, BM], tl.float32))
    tle.gpu.warp_specialize([(fill, (p, x_desc, s_ptr, N)), (drain, (p, y_ptr, N))], [4], [232])


def fill(p, x_desc, s_ptr, N):
    w = p.writer()
    for i in range(N):
        sc = tl.load(s_ptr + i * BM + tl.arange(0, BM))
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.rows), (N - 1 - i) * BM + tl.arange(0, BM))
        tle.gpu.tma_load(s.t, x_desc, [i * BM, 0])
        tl.store(tle.gpu.local_ptr(s.sc), sc)
        w.commit(i)


def drain(p, y_ptr, N):
    r = p.reader()
    for i in range(N):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.t)).to(tl.float32)
        rows = tl.load(tle.gpu.local_ptr(res.slot.rows))
        sc = tl.load(tle.gpu.local_ptr(res.slot.sc))
        r.release(i)
        tl.store(y_ptr + rows[:, None] * BN + tl.arange(0, BN)[None, :], v * sc[:, None])
''' + _config(x_desc=D64, s_ptr="*fp32", y_ptr="*fp32", N="i32")
MODES["tma_partition_c2"] = {"p_full0": "tma-partition"}

# 4. tma-thread: a TMA tile and a cp.async row gather (fp16) in one commit, capacity 2.
KERNELS["tma_thread_c2"] = HEAD + '''
@tle.jit(num_warps=4)
def tma_thread_c2(x_desc, g_ptr, idx_ptr, y_ptr, N):
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, BM, BN], tl.bfloat16),
                 g=tle.gpu.alloc([2, BM, BN], tl.float16))
    tle.gpu.warp_specialize([(fill, (p, x_desc, g_ptr, idx_ptr, N)), (drain, (p, y_ptr, N))],
                            [4], [232])


def fill(p, x_desc, g_ptr, idx_ptr, N):
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    w = p.writer()
    for i in range(N):
        src = tl.load(idx_ptr + i * BM + rows)
        s = w.acquire(i)
        tle.gpu.tma_load(s.t, x_desc, [i * BM, 0])
        tl.store(tle.gpu.local_ptr(s.g), tl.load(g_ptr + src[:, None] * BN + cols[None, :]))
        w.commit(i)


def drain(p, y_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    r = p.reader()
    for i in range(N):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.t)).to(tl.float32)
        g = tl.load(tle.gpu.local_ptr(res.slot.g)).to(tl.float32)
        r.release(i)
        tl.store(y_ptr + i * BM * BN + offs, v + g)
''' + _config(x_desc=D64, g_ptr="*fp16", idx_ptr="*i32", y_ptr="*fp32", N="i32")
MODES["tma_thread_c2"] = {"p_full0": "tma-thread"}

# 5. tma-mixed: TMA, a cp.async gather and a register store in one commit, capacity 3, the stream
#    closed at N (the close's expect-tx is 0), a worker partition as the writer.
KERNELS["tma_mixed_close_c3"] = HEAD + '''
@tle.jit(num_warps=4)
def tma_mixed_close_c3(x_desc, g_ptr, idx_ptr, y_ptr, f_ptr, N):
    tle.assume(N >= 0)
    p = tle.pipe(capacity=3, t=tle.gpu.alloc([3, BM, BN], tl.bfloat16),
                 g=tle.gpu.alloc([3, BM, BN], tl.float16), k=tle.gpu.alloc([3, BN], tl.int32))
    tle.gpu.warp_specialize([(drain, (p, y_ptr, f_ptr, N)), (fill, (p, x_desc, g_ptr, idx_ptr, N))],
                            [4], [96])


def fill(p, x_desc, g_ptr, idx_ptr, N):
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    w = p.writer()
    for i in range(N):
        src = tl.load(idx_ptr + i * BM + rows)
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.g), tl.load(g_ptr + src[:, None] * BN + cols[None, :]))
        tl.store(tle.gpu.local_ptr(s.k), cols * 0 + i)
        tle.gpu.tma_load(s.t, x_desc, [i * BM, 0])
        w.commit(i)
    w.close(N)


def drain(p, y_ptr, f_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    r = p.reader()
    for i in range(N):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.t)).to(tl.float32)
        g = tl.load(tle.gpu.local_ptr(res.slot.g)).to(tl.float32)
        k = tl.load(tle.gpu.local_ptr(res.slot.k)).to(tl.float32)
        r.release(i)
        tl.store(y_ptr + i * BM * BN + offs, v - g + k[None, :])
    last = r.wait(N)
    tl.store(f_ptr + tl.arange(0, BN), tl.where(last.is_closed, tl.full([BN], 1, tl.int32),
                                                 tl.zeros([BN], tl.int32)))
    r.release(N)
''' + _config(x_desc=D64, g_ptr="*fp16", idx_ptr="*i32", y_ptr="*fp32", f_ptr="*i32", N="i32")
MODES["tma_mixed_close_c3"] = {"p_full0": "tma-mixed"}

# 6. Two readers with field views: 'a' sees the TMA field t and the register field h, 'b' the TMA
#    field u and h. A group per reader set: t alone, u alone (each its own expect-tx) and h.
KERNELS["views_two_readers"] = HEAD + '''
@tle.jit(num_warps=4)
def views_two_readers(x_desc, z_desc, ya_ptr, yb_ptr, N):
    p = tle.pipe(capacity=2, readers=("a", "b"), t=tle.gpu.alloc([2, BM, BN], tl.bfloat16),
                 u=tle.gpu.alloc([2, BM, BN], tl.bfloat16), h=tle.gpu.alloc([2, BN], tl.float32))
    tle.gpu.warp_specialize([(fill, (p, x_desc, z_desc, N)),
                             (see_a, (p.reader("a", fields=("t", "h")), ya_ptr, N)),
                             (see_b, (p.reader("b", fields=("u", "h")), yb_ptr, N))],
                            [4, 4], [160, 160])


def fill(p, x_desc, z_desc, N):
    w = p.writer()
    for i in range(N):
        s = w.acquire(i)
        tle.gpu.tma_load(s.u, z_desc, [0, i * BN])
        tl.store(tle.gpu.local_ptr(s.h), tl.arange(0, BN).to(tl.float32) + i)
        tle.gpu.tma_load(s.t, x_desc, [i * BM, 0])
        w.commit(i)


def see_a(r, ya_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    for i in range(N):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.t)).to(tl.float32)
        h = tl.load(tle.gpu.local_ptr(res.slot.h))
        r.release(i)
        tl.store(ya_ptr + i * BM * BN + offs, v + h[None, :])


def see_b(r, yb_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    for i in range(N):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.u)).to(tl.float32)
        h = tl.load(tle.gpu.local_ptr(res.slot.h))
        tl.store(yb_ptr + i * BM * BN + offs, v * h[None, :])
        if i > 0:
            r.release(i - 1)
    if N > 0:
        r.release(N - 1)
''' + _config(x_desc=D64, z_desc=D64, ya_ptr="*fp32", yb_ptr="*fp32", N="i32")

# 7. Copies inside helpers: `put` acquires, has `copy_into` copy and commits; called before the
#    loop and in it (index 0 and i + 1), the descriptor a helper parameter of another name.
KERNELS["helpers_twice"] = HEAD + '''
def copy_into(slot, src, row):
    tle.gpu.tma_load(slot.t, src, [row, 0])


def put(w, d, i):
    s = w.acquire(i)
    copy_into(s, d, i * BM)
    w.commit(i)


@tle.jit(num_warps=4)
def helpers_twice(x_desc, y_ptr, N):
    tle.assume(N >= 0)
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, BM, BN], tl.bfloat16))
    tle.gpu.warp_specialize([(fill, (p, x_desc, N)), (drain, (p, y_ptr, N))], [4], [232])


def fill(p, x_desc, N):
    w = p.writer()
    put(w, x_desc, 0)
    for i in range(N):
        put(w, x_desc, i + 1)


def drain(p, y_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    r = p.reader()
    for i in range(N + 1):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.t))
        r.release(i)
        tl.store(y_ptr + i * BM * BN + offs, v)
''' + _config(x_desc=D64, y_ptr="*bf16", N="i32")

# 8. An `if` on an integer constexpr inside the window: TMA=1 copies the tile, TMA=0 gathers it
#    with cp.async (the kernel is read specialised; the lowering sees the branch that runs).
KERNELS["constexpr_if"] = HEAD + '''
@tle.jit(num_warps=4)
def constexpr_if(x_desc, x_ptr, y_ptr, N, TMA: tl.constexpr):
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, BM, BN], tl.bfloat16),
                 n=tle.gpu.alloc([2, BN], tl.int32))
    tle.gpu.warp_specialize([(fill, (p, x_desc, x_ptr, N, TMA)), (drain, (p, y_ptr, N))],
                            [4], [232])


def fill(p, x_desc, x_ptr, N, TMA):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    w = p.writer()
    for i in range(N):
        s = w.acquire(i)
        if TMA:
            tle.gpu.tma_load(s.t, x_desc, [i * BM, 0])
        else:
            tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + i * BM * BN + offs))
        tl.store(tle.gpu.local_ptr(s.n), tl.arange(0, BN) * 0 + i)
        w.commit(i)


def drain(p, y_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    r = p.reader()
    for i in range(N):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.t)).to(tl.float32)
        n = tl.load(tle.gpu.local_ptr(res.slot.n)).to(tl.float32)
        r.release(i)
        tl.store(y_ptr + i * BM * BN + offs, v + n[None, :])
''' + _config(x_desc=D64, x_ptr="*bf16", y_ptr="*fp32", N="i32", TMA="constexpr=1")
CONSTEXPRS["constexpr_if"] = [{"TMA": 1}, {"TMA": 0}]

# 9. A persistent loop: ROUNDS rounds of NP tiles, index r * NP + p (NP a constexpr: read
#    specialised), a capacity-1 register pipe per round next to a capacity-2 TMA ring released
#    one tile late, the last release after the inner loop.
KERNELS["persistent"] = HEAD + '''
@tle.jit(num_warps=4)
def persistent(x_desc, b_ptr, y_ptr, ROUNDS, NP: tl.constexpr):
    item = tle.pipe(capacity=1, b=tle.gpu.alloc([1, BN], tl.float32))
    kv = tle.pipe(capacity=2, t=tle.gpu.alloc([2, BM, BN], tl.bfloat16))
    tle.gpu.warp_specialize([(fill, (item, kv, x_desc, b_ptr, ROUNDS, NP)),
                             (drain, (item, kv, y_ptr, ROUNDS, NP))], [4], [232])


def fill(item, kv, x_desc, b_ptr, ROUNDS, NP):
    iw = item.writer()
    w = kv.writer()
    for r in range(ROUNDS):
        s = iw.acquire(r)
        tl.store(tle.gpu.local_ptr(s.b), tl.load(b_ptr + r * BN + tl.arange(0, BN)))
        iw.commit(r)
        for p in range(NP):
            t = w.acquire(r * NP + p)
            tle.gpu.tma_load(t.t, x_desc, [(r * NP + p) * BM, 0])
            w.commit(r * NP + p)


def drain(item, kv, y_ptr, ROUNDS, NP):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    ir = item.reader()
    rd = kv.reader()
    for r in range(ROUNDS):
        ires = ir.wait(r)
        acc = tl.zeros([BM, BN], tl.float32)
        for p in range(NP):
            res = rd.wait(r * NP + p)
            acc += tl.load(tle.gpu.local_ptr(res.slot.t)).to(tl.float32)
            if p > 0:
                rd.release(r * NP + p - 1)
        if NP > 0:
            rd.release(r * NP + NP - 1)
        b = tl.load(tle.gpu.local_ptr(ires.slot.b))
        ir.release(r)
        tl.store(y_ptr + r * BM * BN + offs, acc + b[None, :])
''' + _config(x_desc=D64, b_ptr="*fp32", y_ptr="*fp32", ROUNDS="i32", NP="constexpr=2")
CONSTEXPRS["persistent"] = [{"NP": 1}, {"NP": 2}, {"NP": 3}]
MODES["persistent"] = {"kv_full0": "tma"}

# 10. Eager publish on a TMA kernel: the TMA-completed full array keeps its elected arrive and
#     expect-tx (tma-partition), the empty arrays and the register-only pipe arrive per thread.
KERNELS["eager_tma"] = HEAD + '''
@tle.jit(num_warps=4, eager_publish=True)
def eager_tma(x_desc, y_ptr, z_ptr, N):
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, BM, BN], tl.bfloat16),
                 m=tle.gpu.alloc([2, BM], tl.float32))
    back = tle.pipe(capacity=1, s=tle.gpu.alloc([1, BN], tl.float32))
    tle.gpu.warp_specialize([(fill, (p, back, x_desc, z_ptr, N)), (drain, (p, back, y_ptr, N))],
                            [4], [232])


def fill(p, back, x_desc, z_ptr, N):
    w = p.writer()
    br = back.reader()
    for i in range(N):
        s = w.acquire(i)
        tle.gpu.tma_load(s.t, x_desc, [i * BM, 0])
        tl.store(tle.gpu.local_ptr(s.m), tl.arange(0, BM).to(tl.float32) * i)
        w.commit(i)
        res = br.wait(i)
        tl.store(z_ptr + i * BN + tl.arange(0, BN), tl.load(tle.gpu.local_ptr(res.slot.s)))
        br.release(i)


def drain(p, back, y_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    r = p.reader()
    bw = back.writer()
    for i in range(N):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.t)).to(tl.float32)
        m = tl.load(tle.gpu.local_ptr(res.slot.m))
        r.release(i)
        out = v + m[:, None]
        s = bw.acquire(i)
        tl.store(tle.gpu.local_ptr(s.s), tl.sum(out, 0))
        bw.commit(i)
        tl.store(y_ptr + i * BM * BN + offs, out)
''' + _config(x_desc=D64, y_ptr="*fp32", z_ptr="*fp32", N="i32")
MODES["eager_tma"] = {"p_full0": "tma-partition"}

# 11. Descriptors routed: renamed in the kernel, bound to a partition parameter of another name,
#     renamed again in the partition, handed to a helper whose parameters name them otherwise.
#     (A descriptor chosen by an `if`, even on a constexpr, is refused by the frontend:
#     test_a_descriptor_chosen_by_a_constexpr_if_is_refused_at_the_copy.)
KERNELS["descriptor_routes"] = HEAD + '''
def load_two(s, first, second, i):
    tle.gpu.tma_load(s.b, second, [0, i * BN])
    tle.gpu.tma_load(s.a, first, [i * BM, 0])


@tle.jit(num_warps=4)
def descriptor_routes(a_desc, b_desc, y_ptr, N):
    p = tle.pipe(capacity=2, a=tle.gpu.alloc([2, BM, BN], tl.bfloat16),
                 b=tle.gpu.alloc([2, BM, BN], tl.bfloat16))
    da = a_desc
    tle.gpu.warp_specialize([(fill, (p, da, b_desc, N)), (drain, (p, y_ptr, N))],
                            [4], [232])


def fill(p, src_a, src_b, N):
    w = p.writer()
    one = src_a
    two = src_b
    for i in range(N):
        s = w.acquire(i)
        load_two(s, one, two, i)
        w.commit(i)


def drain(p, y_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    r = p.reader()
    for i in range(N):
        res = r.wait(i)
        a = tl.load(tle.gpu.local_ptr(res.slot.a)).to(tl.float32)
        b = tl.load(tle.gpu.local_ptr(res.slot.b)).to(tl.float32)
        r.release(i)
        tl.store(y_ptr + i * BM * BN + offs, a * 2.0 + b)
''' + _config(a_desc=D64, b_desc=D64, y_ptr="*fp32", N="i32")
MODES["descriptor_routes"] = {"p_full0": "tma"}

# 12. A rank-4 descriptor (box [1, 64, 1, 64], pages of a paged tensor) and a rank-2 one into
#     two fields of one slot, one-shot header pipe filled by TMA too.
KERNELS["rank4_and_one_shot"] = HEAD + '''
@tle.jit(num_warps=4)
def rank4_and_one_shot(kv_desc, x_desc, y_ptr, N, HEAD_IDX):
    q = tle.pipe(capacity=1, one_shot=True, q=tle.gpu.alloc([1, BM, BN], tl.bfloat16))
    p = tle.pipe(capacity=2, page=tle.gpu.alloc([2, BM, BN], tl.bfloat16),
                 t=tle.gpu.alloc([2, BM, BN], tl.bfloat16))
    tle.gpu.warp_specialize([(fill, (q, p, kv_desc, x_desc, N, HEAD_IDX)),
                             (drain, (q, p, y_ptr, N))], [4], [232])


def fill(q, p, kv_desc, x_desc, N, HEAD_IDX):
    qw = q.writer()
    qs = qw.acquire(0)
    tle.gpu.tma_load(qs.q, x_desc, [0, 0])
    qw.commit(0)
    w = p.writer()
    for i in range(N):
        s = w.acquire(i)
        tle.gpu.tma_load(s.page, kv_desc, [i, 0, HEAD_IDX, 0])
        tle.gpu.tma_load(s.t, x_desc, [(i + 1) * BM, 0])
        w.commit(i)


def drain(q, p, y_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    qr = q.reader()
    qres = qr.wait(0)
    r = p.reader()
    for i in range(N):
        res = r.wait(i)
        a = tl.load(tle.gpu.local_ptr(res.slot.page)).to(tl.float32)
        b = tl.load(tle.gpu.local_ptr(res.slot.t)).to(tl.float32)
        c = tl.load(tle.gpu.local_ptr(qres.slot.q)).to(tl.float32)
        r.release(i)
        tl.store(y_ptr + i * BM * BN + offs, a + b - c)
''' + _config(kv_desc="tensordesc<bf16[1, 64, 1, 64]>", x_desc=D64, y_ptr="*fp32", N="i32",
              HEAD_IDX="i32")
MODES["rank4_and_one_shot"] = {"p_full0": "tma", "q_full0": "tma"}

# 13. A runtime `if`/`else` whose branches both acquire, copy (from different descriptors) and
#     commit; the reader releases in one branch before its store, in the other after it.
KERNELS["if_else_windows"] = HEAD + '''
@tle.jit(num_warps=4)
def if_else_windows(x_desc, z_desc, y_ptr, N):
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, BM, BN], tl.bfloat16))
    tle.gpu.warp_specialize([(fill, (p, x_desc, z_desc, N)), (drain, (p, y_ptr, N))], [4], [232])


def fill(p, x_desc, z_desc, N):
    w = p.writer()
    for i in range(N):
        if i % 2 == 0:
            s = w.acquire(i)
            tle.gpu.tma_load(s.t, x_desc, [i * BM, 0])
            w.commit(i)
        else:
            s = w.acquire(i)
            tle.gpu.tma_load(s.t, z_desc, [0, i * BN])
            w.commit(i)


def drain(p, y_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    r = p.reader()
    for i in range(N):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.t))
        if i % 3 == 0:
            r.release(i)
            tl.store(y_ptr + i * BM * BN + offs, v)
        else:
            tl.store(y_ptr + i * BM * BN + offs, v)
            r.release(i)
''' + _config(x_desc=D64, z_desc=D64, y_ptr="*bf16", N="i32")
MODES["if_else_windows"] = {"p_full0": "tma"}

# 14. fp32 and int8 fields: fp32 [32, 64] (256-byte rows: two 32-column boxes) and int8
#     [64, 128] (one 128-byte box), one group, capacity 3.
KERNELS["fp32_int8_c3"] = HEAD + '''
@tle.jit(num_warps=4)
def fp32_int8_c3(f_desc, b_desc, yf_ptr, yb_ptr, N):
    p = tle.pipe(capacity=3, f=tle.gpu.alloc([3, 32, BN], tl.float32),
                 b=tle.gpu.alloc([3, BM, 128], tl.int8))
    tle.gpu.warp_specialize([(fill, (p, f_desc, b_desc, N)), (drain, (p, yf_ptr, yb_ptr, N))],
                            [4], [232])


def fill(p, f_desc, b_desc, N):
    w = p.writer()
    for i in range(N):
        s = w.acquire(i)
        tle.gpu.tma_load(s.f, f_desc, [i * 32, 0])
        tle.gpu.tma_load(s.b, b_desc, [i * BM, 0])
        w.commit(i)


def drain(p, yf_ptr, yb_ptr, N):
    r = p.reader()
    for i in range(N):
        res = r.wait(i)
        f = tl.load(tle.gpu.local_ptr(res.slot.f))
        b = tl.load(tle.gpu.local_ptr(res.slot.b)).to(tl.int32)
        r.release(i)
        tl.store(yf_ptr + (i * 32 + tl.arange(0, 32))[:, None] * BN + tl.arange(0, BN)[None, :], f)
        rows = i * BM + tl.arange(0, BM)
        tl.store(yb_ptr + rows[:, None] * 128 + tl.arange(0, 128)[None, :], b)
''' + _config(f_desc="tensordesc<fp32[32, 64]>", b_desc="tensordesc<i8[64, 128]>",
              yf_ptr="*fp32", yb_ptr="*i32", N="i32")
MODES["fp32_int8_c3"] = {"p_full0": "tma"}

# 15. TMA slots fed to wgmma: a one-shot Q and a capacity-2 K ring, both copied, S = Q Kᵀ per
#     tile accumulated (no register-stored field: the reader needs no proxy fence).
KERNELS["wgmma_operands"] = HEAD + '''
@tle.jit(num_warps=4)
def wgmma_operands(q_desc, k_desc, o_ptr, NT):
    q = tle.pipe(capacity=1, one_shot=True, q=tle.gpu.alloc([1, BM, BN], tl.bfloat16))
    kv = tle.pipe(capacity=2, k=tle.gpu.alloc([2, BM, BN], tl.bfloat16))
    tle.gpu.warp_specialize([(load, (q, kv, q_desc, k_desc, NT)), (attend, (q, kv, o_ptr, NT))],
                            [4], [232])


def load(q, kv, q_desc, k_desc, NT):
    qw = q.writer()
    s = qw.acquire(0)
    tle.gpu.tma_load(s.q, q_desc, [0, 0])
    qw.commit(0)
    w = kv.writer()
    for t in range(NT):
        s = w.acquire(t)
        tle.gpu.tma_load(s.k, k_desc, [t * BM, 0])
        w.commit(t)


def attend(q, kv, o_ptr, NT):
    qr = q.reader()
    r = kv.reader()
    qres = qr.wait(0)
    acc = tl.zeros([BM, BM], tl.float32)
    for t in range(NT):
        res = r.wait(t)
        acc = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q)),
                     tl.trans(tl.load(tle.gpu.local_ptr(res.slot.k))), acc)
        r.release(t)
    tl.store(o_ptr + tl.arange(0, BM)[:, None] * BM + tl.arange(0, BM)[None, :], acc)
''' + _config(q_desc=D64, k_desc=D64, o_ptr="*fp32", NT="i32")
MODES["wgmma_operands"] = {"kv_full0": "tma", "q_full0": "tma"}

# 16. A static_range of two copies per outer iteration (index 2 i + j) on a capacity-3 ring, the
#     reader releasing one tile late in an `if` without `else` and after its loop.
KERNELS["static_inner"] = HEAD + '''
@tle.jit(num_warps=4)
def static_inner(x_desc, y_ptr, N):
    p = tle.pipe(capacity=3, t=tle.gpu.alloc([3, BM, BN], tl.bfloat16))
    tle.gpu.warp_specialize([(fill, (p, x_desc, N)), (drain, (p, y_ptr, N))], [4], [232])


def fill(p, x_desc, N):
    w = p.writer()
    for i in range(N):
        for j in tl.static_range(2):
            s = w.acquire(2 * i + j)
            tle.gpu.tma_load(s.t, x_desc, [(2 * i + j) * BM, 0])
            w.commit(2 * i + j)


def drain(p, y_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    r = p.reader()
    for i in range(N):
        for j in range(2):
            res = r.wait(2 * i + j)
            tl.store(y_ptr + (2 * i + j) * BM * BN + offs, tl.load(tle.gpu.local_ptr(res.slot.t)))
            if 2 * i + j > 0:
                r.release(2 * i + j - 1)
    if N > 0:
        r.release(2 * N - 1)
''' + _config(x_desc=D64, y_ptr="*bf16", N="i32")
MODES["static_inner"] = {"p_full0": "tma"}


# 17. Views that split a TMA field and a cp.async field into two groups, the stream closed at N
#     (the TMA group arrives tma-partition for the closed flag, with a 0-byte expect at the
#     close; the gather group mixed), the writer a worker of 1 or 2 warps (per-thread arrives:
#     32 or 64), the TMA reader the default partition.
VIEWS_SPLIT = HEAD + """
@tle.jit(num_warps=4)
def views_split_close_w{WW}(x_desc, g_ptr, ya_ptr, yb_ptr, N):
    tle.assume(N >= 0)
    p = tle.pipe(capacity=2, readers=("a", "b"), t=tle.gpu.alloc([2, BM, BN], tl.bfloat16),
                 g=tle.gpu.alloc([2, BM, BN], tl.float16))
    tle.gpu.warp_specialize([(see_a, (p.reader("a", fields=("t",)), ya_ptr, N)),
                             (fill, (p, x_desc, g_ptr, N)),
                             (see_b, (p.reader("b", fields=("g",)), yb_ptr, N))],
                            [{WW}, 4], [48, 160])


def fill(p, x_desc, g_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    w = p.writer()
    for i in range(N):
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.g), tl.load(g_ptr + i * BM * BN + offs))
        tle.gpu.tma_load(s.t, x_desc, [i * BM, 0])
        w.commit(i)
    w.close(N)


def see_a(r, ya_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    for i in range(N + 1):
        res = r.wait(i)
        if i < N:
            tl.store(ya_ptr + i * BM * BN + offs, tl.load(tle.gpu.local_ptr(res.slot.t)))
        r.release(i)


def see_b(r, yb_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    for i in range(N):
        res = r.wait(i)
        tl.store(yb_ptr + i * BM * BN + offs, tl.load(tle.gpu.local_ptr(res.slot.g)))
        r.release(i)
    res = r.wait(N)
    r.release(N)
""" + _config(x_desc=D64, g_ptr="*fp16", ya_ptr="*bf16", yb_ptr="*fp16", N="i32")
for _w in (1, 2):
    KERNELS[f"views_split_close_w{_w}"] = VIEWS_SPLIT.replace("{WW}", str(_w))
    MODES[f"views_split_close_w{_w}"] = {"p_full0": "tma-partition", "p_full1": "mixed"}

# 18. A rank-3 field [2, 64, 64] filled by one rank-3 box.
KERNELS["rank3_field"] = HEAD + """
@tle.jit(num_warps=4)
def rank3_field(x_desc, y_ptr, N):
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, 2, BM, BN], tl.bfloat16))
    tle.gpu.warp_specialize([(fill, (p, x_desc, N)), (drain, (p, y_ptr, N))], [4], [232])


def fill(p, x_desc, N):
    w = p.writer()
    for i in range(N):
        s = w.acquire(i)
        tle.gpu.tma_load(s.t, x_desc, [2 * i, 0, 0])
        w.commit(i)


def drain(p, y_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    r = p.reader()
    for i in range(N):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.t)).to(tl.float32)
        r.release(i)
        tl.store(y_ptr + i * BM * BN + offs, tl.sum(v, 0))
""" + _config(x_desc="tensordesc<bf16[2, 64, 64]>", y_ptr="*fp32", N="i32")
MODES["rank3_field"] = {"p_full0": "tma"}

# 19. Three TMA pipes, one descriptor: one partition interleaves the windows of a (tma-partition)
#     and b (capacity 1), committing b first; a one-warp worker fills c (capacity 3) through the
#     same descriptor; the reader waits b, a, c and releases c, a, b.
KERNELS["interleaved_windows"] = HEAD + """
@tle.jit(num_warps=4)
def interleaved_windows(x_desc, y_ptr, N):
    a = tle.pipe(capacity=2, t=tle.gpu.alloc([2, BM, BN], tl.bfloat16),
                 n=tle.gpu.alloc([2, BN], tl.int32))
    b = tle.pipe(capacity=1, u=tle.gpu.alloc([1, BM, BN], tl.bfloat16))
    c = tle.pipe(capacity=3, v=tle.gpu.alloc([3, BM, BN], tl.bfloat16))
    tle.gpu.warp_specialize([(fill, (a, b, x_desc, N)), (drain, (a, b, c, y_ptr, N)),
                             (other, (c, x_desc, N))], [4, 1], [160, 48])


def fill(a, b, x_desc, N):
    wa = a.writer()
    wb = b.writer()
    for i in range(N):
        sa = wa.acquire(i)
        sb = wb.acquire(i)
        tle.gpu.tma_load(sb.u, x_desc, [i * BM, BN])
        tl.store(tle.gpu.local_ptr(sa.n), tl.arange(0, BN) + i)
        tle.gpu.tma_load(sa.t, x_desc, [i * BM, 0])
        wb.commit(i)
        wa.commit(i)


def other(c, x_desc, N):
    w = c.writer()
    for i in range(N):
        s = w.acquire(i)
        tle.gpu.tma_load(s.v, x_desc, [0, i * BN])
        w.commit(i)


def drain(a, b, c, y_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    ra = a.reader()
    rb = b.reader()
    rc = c.reader()
    for i in range(N):
        resb = rb.wait(i)
        resa = ra.wait(i)
        resc = rc.wait(i)
        v = tl.load(tle.gpu.local_ptr(resa.slot.t)).to(tl.float32) * 4.0
        v = v + tl.load(tle.gpu.local_ptr(resb.slot.u)).to(tl.float32) * 2.0
        v = v + tl.load(tle.gpu.local_ptr(resc.slot.v)).to(tl.float32)
        v = v + tl.load(tle.gpu.local_ptr(resa.slot.n)).to(tl.float32)[None, :]
        rc.release(i)
        ra.release(i)
        rb.release(i)
        tl.store(y_ptr + i * BM * BN + offs, v)
""" + _config(x_desc=D64, y_ptr="*fp32", N="i32")
MODES["interleaved_windows"] = {"a_full0": "tma-partition", "b_full0": "tma", "c_full0": "tma"}

# 20. Pipelined wgmma (P·V in flight across the back-edge) on a capacity-3 kv ring filled by two
#     TMA copies and a register store (tma-partition: the writer fences its stores, the reader
#     fences after its wait), released two tiles late; a one-shot TMA Q.
KERNELS["pipelined_tma_partition"] = HEAD + """
@tle.jit(num_warps=4, wgmma_pipeline=True)
def pipelined_tma_partition(q_desc, k_desc, v_desc, m_ptr, o_ptr, NT):
    q = tle.pipe(capacity=1, one_shot=True, q=tle.gpu.alloc([1, BM, BN], tl.bfloat16))
    kv = tle.pipe(capacity=3, k=tle.gpu.alloc([3, BN, BN], tl.bfloat16),
                  v=tle.gpu.alloc([3, BN, BN], tl.bfloat16), m=tle.gpu.alloc([3, BN], tl.float32))
    tle.gpu.warp_specialize([(loader, (q, kv, q_desc, k_desc, v_desc, m_ptr, NT)),
                             (attend, (q, kv, o_ptr, NT))], [4], [232])


def loader(q, kv, q_desc, k_desc, v_desc, m_ptr, NT):
    qw = q.writer()
    slot = qw.acquire(0)
    tle.gpu.tma_load(slot.q, q_desc, [0, 0])
    qw.commit(0)
    w = kv.writer()
    for t in range(NT):
        slot = w.acquire(t)
        tle.gpu.tma_load(slot.k, k_desc, [t * BN, 0])
        tl.store(tle.gpu.local_ptr(slot.m), tl.load(m_ptr + t * BN + tl.arange(0, BN)))
        tle.gpu.tma_load(slot.v, v_desc, [t * BN, 0])
        w.commit(t)


def attend(q, kv, o_ptr, NT):
    qr = q.reader()
    r = kv.reader()
    qres = qr.wait(0)
    m_i = tl.full([BM], float("-inf"), tl.float32)
    l_i = tl.zeros([BM], tl.float32)
    acc = tl.zeros([BM, BN], tl.float32)
    for t in range(NT):
        res = r.wait(t)
        s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q)),
                   tl.trans(tl.load(tle.gpu.local_ptr(res.slot.k))))
        s = s + tl.load(tle.gpu.local_ptr(res.slot.m))[None, :]
        if t > 1:
            r.release(t - 2)
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = tl.dot(p.to(tl.bfloat16), tl.load(tle.gpu.local_ptr(res.slot.v)),
                     acc * alpha[:, None])
        m_i = m_new
    if NT > 1:
        r.release(NT - 2)
    if NT > 0:
        r.release(NT - 1)
    tl.store(o_ptr + tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :],
             acc / l_i[:, None])
""" + _config(q_desc=D64, k_desc=D64, v_desc=D64, m_ptr="*fp32", o_ptr="*fp32", NT="i32")
MODES["pipelined_tma_partition"] = {"kv_full0": "tma-partition", "q_full0": "tma"}

# 21. A copy under an `if` on a constexpr inside a helper: HALF=1 copies fields a and b, HALF=0
#     only b (a is then neither written nor read: the expect-tx counts b alone).
KERNELS["constexpr_if_helper"] = HEAD + """
def copy_k(s, k_desc, i, HALF):
    if HALF:
        tle.gpu.tma_load(s.a, k_desc, [i * BM, 0])
    tle.gpu.tma_load(s.b, k_desc, [i * BM, BN])


@tle.jit(num_warps=4)
def constexpr_if_helper(k_desc, y_ptr, N, HALF: tl.constexpr):
    p = tle.pipe(capacity=2, a=tle.gpu.alloc([2, BM, BN], tl.bfloat16),
                 b=tle.gpu.alloc([2, BM, BN], tl.bfloat16))
    tle.gpu.warp_specialize([(fill, (p, k_desc, N, HALF)), (drain, (p, y_ptr, N, HALF))],
                            [4], [232])


def fill(p, k_desc, N, HALF):
    w = p.writer()
    for i in range(N):
        s = w.acquire(i)
        copy_k(s, k_desc, i, HALF)
        w.commit(i)


def drain(p, y_ptr, N, HALF):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    r = p.reader()
    for i in range(N):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.b)).to(tl.float32)
        if HALF:
            v = v + tl.load(tle.gpu.local_ptr(res.slot.a)).to(tl.float32) * 3.0
        r.release(i)
        tl.store(y_ptr + i * BM * BN + offs, v)
""" + _config(k_desc=D64, y_ptr="*fp32", N="i32", HALF="constexpr=1")
CONSTEXPRS["constexpr_if_helper"] = [{"HALF": 1}, {"HALF": 0}]
MODES["constexpr_if_helper"] = {"p_full0": "tma"}

# 22. Eager publish on tma-mixed (TMA, cp.async gather, register store, close): the full array
#     stays tma-mixed (elected arrive, per-thread cp.async arrives, expect-tx), the empty array
#     eager.
KERNELS["eager_tma_mixed"] = KERNELS["tma_mixed_close_c3"].replace(
    "@tle.jit(num_warps=4)", "@tle.jit(num_warps=4, eager_publish=True)").replace(
    "tma_mixed_close_c3", "eager_tma_mixed")
MODES["eager_tma_mixed"] = {"p_full0": "tma-mixed"}

# 23. An fp8 field [64, 128] (one 128-byte box).
KERNELS["fp8_field"] = HEAD + """
@tle.jit(num_warps=4)
def fp8_field(x_desc, y_ptr, N):
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, BM, 128], tl.float8e4nv))
    tle.gpu.warp_specialize([(fill, (p, x_desc, N)), (drain, (p, y_ptr, N))], [4], [232])


def fill(p, x_desc, N):
    w = p.writer()
    for i in range(N):
        s = w.acquire(i)
        tle.gpu.tma_load(s.t, x_desc, [i * BM, 0])
        w.commit(i)


def drain(p, y_ptr, N):
    offs = tl.arange(0, BM)[:, None] * 128 + tl.arange(0, 128)[None, :]
    r = p.reader()
    for i in range(N):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.t)).to(tl.float32)
        r.release(i)
        tl.store(y_ptr + i * BM * 128 + offs, v)
""" + _config(x_desc="tensordesc<fp8e4nv[64, 128]>", y_ptr="*fp32", N="i32")
MODES["fp8_field"] = {"p_full0": "tma"}


# 24. Two readers of one group (the empty barrier counts both releases), one releasing a tile
#     late; the writer's windows under an `if`/`else` on a second runtime param M, both branches
#     copying (other coordinates) and committing.
KERNELS["two_readers_if_param"] = HEAD + """
@tle.jit(num_warps=4)
def two_readers_if_param(x_desc, y_ptr, z_ptr, N, M):
    p = tle.pipe(capacity=2, readers=("a", "b"), t=tle.gpu.alloc([2, BM, BN], tl.bfloat16))
    tle.gpu.warp_specialize([(fill, (p, x_desc, N, M)), (now, (p.reader("a"), y_ptr, N)),
                             (late, (p.reader("b"), z_ptr, N))], [4, 4], [160, 160])


def fill(p, x_desc, N, M):
    w = p.writer()
    for i in range(N):
        if i < M:
            s = w.acquire(i)
            tle.gpu.tma_load(s.t, x_desc, [i * BM, 0])
            w.commit(i)
        else:
            s = w.acquire(i)
            tle.gpu.tma_load(s.t, x_desc, [0, i * BN])
            w.commit(i)


def now(r, y_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    for i in range(N):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.t))
        r.release(i)
        tl.store(y_ptr + i * BM * BN + offs, v)


def late(r, z_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    for i in range(N):
        res = r.wait(i)
        tl.store(z_ptr + i * BM * BN + offs, tl.load(tle.gpu.local_ptr(res.slot.t)))
        if i > 0:
            r.release(i - 1)
    if N > 0:
        r.release(N - 1)
""" + _config(x_desc=D64, y_ptr="*bf16", z_ptr="*bf16", N="i32", M="i32")
FIXED["two_readers_if_param"] = [{"M": 0}, {"M": 2}]
MODES["two_readers_if_param"] = {"p_full0": "tma"}

# 25. close under an `if` of a TMA-only pipe (the close arrives with a 0-byte expect and the
#     closed flag's elected arrive: tma-partition), the commit in a helper after the copy.
KERNELS["close_if_commit_helper"] = HEAD + """
def finish(w, i):
    w.commit(i)


@tle.jit(num_warps=4)
def close_if_commit_helper(x_desc, y_ptr, f_ptr, N):
    tle.assume(N >= 0)
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, BM, BN], tl.bfloat16))
    tle.gpu.warp_specialize([(fill, (p, x_desc, N)), (drain, (p, y_ptr, f_ptr, N))], [4], [232])


def fill(p, x_desc, N):
    w = p.writer()
    for i in range(N + 1):
        if i < N:
            s = w.acquire(i)
            tle.gpu.tma_load(s.t, x_desc, [i * BM, 0])
            finish(w, i)
        else:
            w.close(i)


def drain(p, y_ptr, f_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    r = p.reader()
    for i in range(N + 1):
        res = r.wait(i)
        tl.store(f_ptr + i * BN + tl.arange(0, BN),
                 tl.where(res.is_closed, tl.full([BN], 1, tl.int32), tl.zeros([BN], tl.int32)))
        if i < N:
            tl.store(y_ptr + i * BM * BN + offs, tl.load(tle.gpu.local_ptr(res.slot.t)))
        r.release(i)
""" + _config(x_desc=D64, y_ptr="*bf16", f_ptr="*i32", N="i32")
MODES["close_if_commit_helper"] = {"p_full0": "tma-partition"}

# 26. A one-shot pipe filled by a TMA copy and a register store (tma-partition, waited at parity
#     0 once), read N times.
KERNELS["one_shot_tma_partition"] = HEAD + """
@tle.jit(num_warps=4)
def one_shot_tma_partition(x_desc, y_ptr, N):
    q = tle.pipe(capacity=1, one_shot=True, t=tle.gpu.alloc([1, BM, BN], tl.bfloat16),
                 n=tle.gpu.alloc([1, BN], tl.float32))
    tle.gpu.warp_specialize([(fill, (q, x_desc, N)), (drain, (q, y_ptr, N))], [4], [232])


def fill(q, x_desc, N):
    w = q.writer()
    s = w.acquire(0)
    tle.gpu.tma_load(s.t, x_desc, [0, 0])
    tl.store(tle.gpu.local_ptr(s.n), tl.zeros([BN], tl.float32) + N)
    w.commit(0)


def drain(q, y_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    r = q.reader()
    res = r.wait(0)
    for i in range(N):
        v = tl.load(tle.gpu.local_ptr(res.slot.t)).to(tl.float32)
        v = v + tl.load(tle.gpu.local_ptr(res.slot.n))[None, :]
        tl.store(y_ptr + i * BM * BN + offs, v + i)
""" + _config(x_desc=D64, y_ptr="*fp32", N="i32")
MODES["one_shot_tma_partition"] = {"q_full0": "tma-partition"}


# 27-28. Two TMA pipes of different slot shapes filled in one partition: the slot name `s` bound
#     to a's slot, copied into, then rebound to b's slot (the windows overlap, b committed
#     first); the two slots passed to a helper as a tuple and indexed there.
TWO_SLOTS = HEAD + """
def put(pair, x_desc, z_desc, i):
    tle.gpu.tma_load(pair[1].t, z_desc, [i * BM, 0])
    tle.gpu.tma_load(pair[0].t, x_desc, [i * BM, 0])


@tle.jit(num_warps=4)
def NAME(x_desc, z_desc, y_ptr, N):
    a = tle.pipe(capacity=2, t=tle.gpu.alloc([2, BM, BN], tl.bfloat16))
    b = tle.pipe(capacity=3, t=tle.gpu.alloc([3, BM, 128], tl.bfloat16))
    tle.gpu.warp_specialize([(fill, (a, b, x_desc, z_desc, N)), (drain, (a, b, y_ptr, N))],
                            [4], [232])


def fill(a, b, x_desc, z_desc, N):
    wa = a.writer()
    wb = b.writer()
    for i in range(N):
        BODY


def drain(a, b, y_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    ra = a.reader()
    rb = b.reader()
    for i in range(N):
        resa = ra.wait(i)
        resb = rb.wait(i)
        v = tl.load(tle.gpu.local_ptr(resa.slot.t)).to(tl.float32)
        u = tl.load(tle.gpu.local_ptr(resb.slot.t)).to(tl.float32)
        rb.release(i)
        ra.release(i)
        tl.store(y_ptr + i * BM * BN + offs, v + tl.sum(u, 1)[:, None])
""" + _config(x_desc=D64, z_desc="tensordesc<bf16[64, 128]>", y_ptr="*fp32", N="i32")
TWO_SLOT_BODIES = {
    "slot_name_reused": """s = wa.acquire(i)
        tle.gpu.tma_load(s.t, x_desc, [i * BM, 0])
        s = wb.acquire(i)
        tle.gpu.tma_load(s.t, z_desc, [i * BM, 0])
        wb.commit(i)
        wa.commit(i)""",
    "slot_tuple_helper": """sa = wa.acquire(i)
        sb = wb.acquire(i)
        put((sa, sb), x_desc, z_desc, i)
        wa.commit(i)
        wb.commit(i)""",
}
for _n, _body in TWO_SLOT_BODIES.items():
    KERNELS[_n] = TWO_SLOTS.replace("BODY", _body).replace("def NAME(", f"def {_n}(")
    MODES[_n] = {"a_full0": "tma", "b_full0": "tma"}


# 29. Pipelined wgmma in a persistent loop: ROUNDS rounds of NP TMA-filled (a, b) tiles, index
#     r * NP + p, each slot released in the next tile (the dot of the previous tile retired
#     first), the last after the rounds; a and b copied by boxes at program-id dependent rows.
KERNELS["pipelined_persistent_tma"] = HEAD + """
@tle.jit(num_warps=4, wgmma_pipeline=True)
def pipelined_persistent_tma(a_desc, b_desc, c_ptr, ROUNDS, NP: tl.constexpr):
    kv = tle.pipe(capacity=2, a=tle.gpu.alloc([2, BM, BN], tl.bfloat16),
                  b=tle.gpu.alloc([2, BN, BN], tl.bfloat16))
    tle.gpu.warp_specialize([(loader, (kv, a_desc, b_desc, ROUNDS, NP)),
                             (mma, (kv, c_ptr, ROUNDS, NP))], [4], [232])


def loader(kv, a_desc, b_desc, ROUNDS, NP: tl.constexpr):
    base = tl.program_id(0) * ROUNDS * NP
    w = kv.writer()
    for r in range(ROUNDS):
        for p in range(NP):
            s = w.acquire(r * NP + p)
            tle.gpu.tma_load(s.b, b_desc, [(base + r * NP + p) * BN, 0])
            tle.gpu.tma_load(s.a, a_desc, [(base + r * NP + p) * BM, 0])
            w.commit(r * NP + p)


def mma(kv, c_ptr, ROUNDS, NP: tl.constexpr):
    rd = kv.reader()
    for r in range(ROUNDS):
        acc = tl.zeros([BM, BN], tl.float32)
        for p in range(NP):
            res = rd.wait(r * NP + p)
            if r * NP + p > 0:
                rd.release(r * NP + p - 1)
            acc = tl.dot(tl.load(tle.gpu.local_ptr(res.slot.a)),
                         tl.load(tle.gpu.local_ptr(res.slot.b)), acc)
        rows = (tl.program_id(0) * ROUNDS + r) * BM + tl.arange(0, BM)
        tl.store(c_ptr + rows[:, None] * BN + tl.arange(0, BN)[None, :], acc)
    if ROUNDS > 0:
        rd.release(ROUNDS * NP - 1)
""" + _config(a_desc=D64, b_desc=D64, c_ptr="*fp32", ROUNDS="i32", NP="constexpr=2")
CONSTEXPRS["pipelined_persistent_tma"] = [{"NP": 1}, {"NP": 2}, {"NP": 3}]
MODES["pipelined_persistent_tma"] = {"kv_full0": "tma"}


# 30. The field's width a constexpr D (64, 128, 256: one, two and four 64-column boxes; the
#     kernel read specialised): the expect-tx follows D, the descriptor's box with it.
KERNELS["constexpr_width"] = HEAD + """
@tle.jit(num_warps=4)
def constexpr_width(x_desc, y_ptr, N, D: tl.constexpr):
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, BM, D], tl.bfloat16))
    tle.gpu.warp_specialize([(fill, (p, x_desc, N)), (drain, (p, y_ptr, N, D))], [4], [232])


def fill(p, x_desc, N):
    w = p.writer()
    for i in range(N):
        s = w.acquire(i)
        tle.gpu.tma_load(s.t, x_desc, [i * BM, 0])
        w.commit(i)


def drain(p, y_ptr, N, D):
    offs = tl.arange(0, BM)[:, None] * D + tl.arange(0, D)[None, :]
    r = p.reader()
    for i in range(N):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.t))
        r.release(i)
        tl.store(y_ptr + i * BM * D + offs, v)
""" + _config(x_desc="tensordesc<bf16[64, 64]>", y_ptr="*bf16", N="i32", D="constexpr=64")
CONSTEXPRS["constexpr_width"] = [{"D": 64}, {"D": 128}, {"D": 256}]
#: signature types a constexpr setting changes (the descriptor's box follows the field)
SIGNATURE_OF = {"constexpr_width": lambda cx: {"x_desc": f"tensordesc<bf16[64, {cx['D']}]>"}}
MODES["constexpr_width"] = {"p_full0": "tma"}


# 31. A chain of one-warp workers: the first hands block numbers through a register pipe, the
#     middle reads one, releases it and copies that block by TMA into the kv ring (coordinates
#     from data read out of a slot), the default partition stores the tiles.
KERNELS["chain_block_table"] = HEAD + """
@tle.jit(num_warps=4)
def chain_block_table(x_desc, blk_ptr, y_ptr, N):
    idx = tle.pipe(capacity=2, b=tle.gpu.alloc([2, 16], tl.int32))
    kv = tle.pipe(capacity=2, t=tle.gpu.alloc([2, BM, BN], tl.bfloat16))
    tle.gpu.warp_specialize([(last, (kv, y_ptr, N)), (first, (idx, blk_ptr, N)),
                             (middle, (idx, kv, x_desc, N))], [1, 1], [48, 48])


def first(idx, blk_ptr, N):
    w = idx.writer()
    for i in range(N):
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.b), tl.load(blk_ptr + i * 16 + tl.arange(0, 16)))
        w.commit(i)


def middle(idx, kv, x_desc, N):
    r = idx.reader()
    w = kv.writer()
    for i in range(N):
        res = r.wait(i)
        page = tl.max(tl.load(tle.gpu.local_ptr(res.slot.b)), 0)
        r.release(i)
        s = w.acquire(i)
        tle.gpu.tma_load(s.t, x_desc, [page * BM, 0])
        w.commit(i)


def last(kv, y_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    r = kv.reader()
    for i in range(N):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.t))
        r.release(i)
        tl.store(y_ptr + i * BM * BN + offs, v)
""" + _config(x_desc=D64, blk_ptr="*i32", y_ptr="*bf16", N="i32")
MODES["chain_block_table"] = {"kv_full0": "tma"}


# ------------------------------------------------------------------ the checks

NAMES = sorted(KERNELS)
SETTINGS = [(n, cx) for n in NAMES for cx in CONSTEXPRS.get(n, [{}])]
SETTING_IDS = [n + "".join(f"-{k}={v}" for k, v in cx.items()) for n, cx in SETTINGS]


def _write(tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(KERNELS[name])
    return path


def _kernel_config(path: Path, name: str, cx: dict) -> dict:
    from tle_compiler.lowering.dumping import default_config

    config = default_config(str(path), name)
    config = dict(config, constexprs=dict(config["constexprs"], **cx))
    if name in SIGNATURE_OF:
        config["signature"] = dict(config["signature"], **SIGNATURE_OF[name](config["constexprs"]))
    return config


@pytest.mark.parametrize("name,cx", SETTINGS, ids=SETTING_IDS)
def test_tle_dump_verifies(name, cx, tmp_path):
    from tle_compiler.cli.dump import main

    path = _write(tmp_path, name)
    for fixed in FIXED.get(name, [{}]):
        flags = [f"--param={k}={v}" for k, v in {**_kernel_config(path, name, cx)["constexprs"],
                                                  **fixed}.items()]
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = main(["--graph", *flags, str(path)])
        text = out.getvalue() + err.getvalue()
        assert rc == 0 and f"{name}: verified for every value" in text, text


# -------- the expect-tx of every commit, from the generated Gluon and the signature alone

_DESC = re.compile(r"tensordesc<(\w+)\[([\d, ]+)\]")
_BYTES = {"bf16": 2, "fp16": 2, "fp32": 4, "i8": 1, "fp8e4nv": 1, "i32": 4}
_GL_BYTES = {"gl.bfloat16": 2, "gl.float16": 2, "gl.float32": 4, "gl.int8": 1,
             "gl.float8e4nv": 1, "gl.int32": 4, "gl.int64": 8}


def _desc_bytes(sig: dict) -> dict[str, int]:
    """Kernel argument -> the bytes one copy through it delivers: its box (the signature's block
    shape) times its element size."""
    out = {}
    for a, t in sig.items():
        m = _DESC.match(str(t))
        if m:
            out[a] = _BYTES[m.group(1)] * math.prod(int(d) for d in m.group(2).split(","))
    return out


def _call_name(node: ast.AST) -> str:
    return ast.unparse(node.func) if isinstance(node, ast.Call) else ""


def _array_of(node: ast.AST) -> str:
    """``ARR`` of a barrier argument ``ARR.index(stage)``."""
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
        node.func.attr == "index", ast.unparse(node)
    return ast.unparse(node.func.value)


class _TxWalk:
    """Walks each partition of the generated kernel in program order, helpers inlined at their
    calls, following which kernel descriptor argument each name holds: the bytes of the TMA copies
    completing on a barrier array add up until that array's ``mbarrier.expect``, whose count must
    be that sum (a copy with no expect after it is a problem too)."""

    def __init__(self, source: str, kernel: str, sig: dict):
        self.tree = ast.parse(source)
        self.funcs = {f.name: f for f in self.tree.body if isinstance(f, ast.FunctionDef)}
        self.bytes = _desc_bytes(sig)
        self.kernel = kernel
        self.expects: list[tuple[str, int, int]] = []  # (array, declared, copied)
        self.copies = 0
        self.slots: dict[str, int] = {}  # ring allocated by the kernel -> bytes of one slot
        self.problems: list[str] = []

    def run(self) -> "_TxWalk":
        kfn = self.funcs[self.kernel]
        env = {a.arg: a.arg for a in kfn.args.args}
        for st in kfn.body:  # the rings the kernel allocates, renames (`da = a_desc`)
            if isinstance(st, ast.Assign) and len(st.targets) == 1 and \
                    isinstance(st.targets[0], ast.Name):
                name = st.targets[0].id
                if _call_name(st.value) == "gl.allocate_shared_memory":
                    dtype, shape = ast.unparse(st.value.args[0]), ast.literal_eval(st.value.args[1])
                    self.slots[name] = _GL_BYTES.get(dtype, 0) * math.prod(shape[1:])
                    env[name] = name
                else:
                    env[name] = self.value(st.value, env)
        (ws,) = [n for n in ast.walk(kfn) if _call_name(n) == "gl.warp_specialize"]
        for item in ws.args[0].elts:
            fn, args = item.elts
            self.partition(self.funcs[fn.id], [self.value(a, env) for a in args.elts])
        return self

    def value(self, node: ast.AST, env: dict):
        return env.get(node.id) if isinstance(node, ast.Name) else None

    def partition(self, fdef: ast.FunctionDef, args: list) -> None:
        env = {p.arg: a for p, a in zip(fdef.args.args, args)}
        pending: dict[str, int] = {}
        self.block(fdef.body, env, pending)
        for arr, n in pending.items():
            if n:
                self.problems.append(f"{fdef.name}: {n} bytes copied on {arr} with no expect after")

    def block(self, stmts, env, pending) -> None:
        for st in stmts:
            if isinstance(st, ast.Assign) and len(st.targets) == 1 and \
                    isinstance(st.targets[0], ast.Name):
                env[st.targets[0].id] = self.value(st.value, env)
            if isinstance(st, (ast.For, ast.While)):
                self.block(st.body, env, pending)
                continue
            if isinstance(st, ast.If):  # both paths, each from the state before the `if`
                for body in (st.body, st.orelse):
                    self.block(body, dict(env), pending)
                continue
            for node in ast.walk(st):
                if isinstance(node, ast.Call):
                    self.call(node, env, pending)

    def call(self, node: ast.Call, env, pending) -> None:
        name = _call_name(node)
        if name == "tma.async_copy_global_to_shared":
            desc = self.value(node.args[0], env)
            if desc not in self.bytes:
                self.problems.append(f"a TMA copy through {ast.unparse(node.args[0])}, which is "
                                     f"no descriptor argument of the kernel")
                return
            arr = _array_of(node.args[2])
            pending[arr] = pending.get(arr, 0) + self.bytes[desc]
            self.copies += 1
            dst = node.args[3]  # RING.index(stage), or its .reshape(desc.block_shape) view
            while isinstance(dst, ast.Call) and isinstance(dst.func, ast.Attribute):
                dst = dst.func.value
            ring = self.value(dst, env)
            if self.slots.get(ring) != self.bytes[desc]:
                self.problems.append(f"a TMA copy of {self.bytes[desc]} bytes through {desc} "
                                     f"into {ast.unparse(node.args[3])}, a slot of "
                                     f"{self.slots.get(ring)} bytes")
        elif name == "mbarrier.expect":
            arr = _array_of(node.args[0])
            declared = ast.literal_eval(node.args[1])
            self.expects.append((arr, declared, pending.get(arr, 0)))
            pending[arr] = 0
        elif name in self.funcs and name != self.kernel:
            callee = self.funcs[name]
            env2 = {p.arg: self.value(a, env) for p, a in zip(callee.args.args, node.args)}
            env2.update({k.arg: self.value(k.value, env) for k in node.keywords})
            self.block(callee.body, env2, pending)


def _tx_problems(source: str, kernel: str, sig: dict) -> tuple[list[str], _TxWalk]:
    walk = _TxWalk(source, kernel, sig).run()
    problems = list(walk.problems)
    problems += [f"mbarrier.expect on {arr} declares {declared} bytes, the copies before it "
                 f"deliver {copied}" for arr, declared, copied in walk.expects
                 if declared != copied]
    return problems, walk


def _arrival_problems(lk, values_args: dict, pins: dict) -> list[str]:
    return _arrivals_of(lk.trace(values_args, pins), lk.info.partitions)


def _arrivals_of(tr, partitions) -> list[str]:
    """Every commit's arrivals on a barrier a TMA copy completes on (elected arrives and the
    expect-tx count 1, a cp.async arrive one per thread of the partition) add up to the barrier's
    init count, so the phase completes on the commit and its bytes, not before or never."""
    warps = [p.warps for p in partitions]
    tma_arrays = {o.array for p in tr.partitions for o in p.ops if o.op == TMA}
    problems = []
    for part, tp in zip(partitions, tr.partitions):
        run: list = []
        for o in tp.ops + [None]:
            if o is not None and o.array in tma_arrays and o.op in (ARRIVE, ARRIVE_CP_ASYNC,
                                                                     ARRIVE_THREAD, EXPECT) \
                    and (not run or (run[0].array, run[0].stage) == (o.array, o.stage)):
                run.append(o)
                continue
            if run:
                n = sum(32 * warps[tp.index] if x.op in (ARRIVE_CP_ASYNC, ARRIVE_THREAD) else 1
                        for x in run)
                want = tr.inits[(run[0].array, run[0].stage)]
                if n != want or run[-1].op != EXPECT:
                    problems.append(f"{part.name}: a commit arrives {n} times on "
                                    f"{run[0].array}[{run[0].stage}] ({[x.op for x in run]}), "
                                    f"init count {want}")
                run = []
            if o is not None and o.array in tma_arrays and o.op in (ARRIVE, ARRIVE_CP_ASYNC,
                                                                     ARRIVE_THREAD, EXPECT):
                run = [o]
    return problems


@pytest.mark.parametrize("name,cx", SETTINGS, ids=SETTING_IDS)
def test_compiles_for_sm90a_with_the_copies_bytes_expected(name, cx, tmp_path):
    from tle_compiler.frontend import read_kernels
    from tle_compiler.lowering import compile_kernel

    path = _write(tmp_path, name)
    config = _kernel_config(path, name, cx)
    info = next(i for i in read_kernels(str(path), name=name, bind=config["constexprs"]))
    c = compile_kernel(info, config["signature"], config["constexprs"], num_warps=4)
    assert ".target sm_90a" in c.asm["ptx"] and c.asm["cubin"]
    src = c.tle_generated.source
    problems, walk = _tx_problems(src, name, config["signature"])
    assert not problems, "\n".join(problems)
    tma_on = cx.get("TMA", 1)
    assert (walk.copies > 0) == bool(tma_on), src
    if tma_on:
        ptx = c.asm["ptx"]
        assert "cp.async.bulk.tensor" in ptx and "mbarrier.arrive.expect_tx" in ptx
        # each expect-tx the PTX carries is one the Gluon declared
        ptx_tx = {int(n) for n in re.findall(r"mbarrier\.arrive\.expect_tx\.shared\.b64 _, "
                                             r"\[%r\d+\], (\d+);", c.asm["ptx"])}
        assert ptx_tx and ptx_tx <= {d for _, d, _ in walk.expects}, (ptx_tx, walk.expects)
    for arr, mode in MODES.get(name, {}).items():
        assert re.search(rf"mbarrier\.init\({arr}\.index\(0\), count=\d+\)  # \S+ {mode} ", src), \
            f"{arr}: not arrive unit {mode}\n" + "\n".join(
                ln for ln in src.splitlines() if "mbarrier.init" in ln)


def _runs_check(name: str, cx: dict, tmp_path: Path, debug_waits: bool, values=None):
    path = _write(tmp_path, name)
    runs = Runs(path, name, _kernel_config(path, name, cx), debug_waits=debug_waits)
    grid = param_grid(runs.base.program, *(values or ()))
    problems = []
    for v in grid:
        problems += runs.check(v)
        cxs, args, pins = runs.setting(v)
        problems += [f"{name} with {v}: {p}"
                     for p in _arrival_problems(runs.lowered(cxs), args, pins)]
    return runs, grid, problems


@pytest.mark.parametrize("name,cx", SETTINGS, ids=SETTING_IDS)
def test_generated_barrier_operations_are_the_verified_events(name, cx, tmp_path):
    runs, grid, problems = _runs_check(name, cx, tmp_path, debug_waits=False)
    assert len(grid) >= 3
    assert not problems, "\n".join(problems)
    src = runs.base.gen.source
    assert ("tma.async_copy_global_to_shared(" in src) == bool(cx.get("TMA", 1))


@pytest.mark.parametrize("name,cx", SETTINGS, ids=SETTING_IDS)
def test_debug_waits_keep_the_verified_events(name, cx, tmp_path):
    """Debug waits turn every mbarrier wait into a bounded try-wait loop: the same operations,
    and the copies and expect-tx untouched."""
    runs, grid, problems = _runs_check(name, cx, tmp_path, debug_waits=True, values=((3,),))
    assert not problems, "\n".join(problems)
    src = runs.base.gen.source
    assert "_tle_try_wait(" in src and "mbarrier.wait(" not in src
    sig = _kernel_config(tmp_path / f"{name}.py", name, cx)["signature"]
    tx, _ = _tx_problems(src, name, sig)
    assert not tx, "\n".join(tx)


def test_eager_publish_leaves_only_the_tma_arrays_elected(tmp_path):
    """eager_publish on a TMA kernel: the releases and the register-only pipe's commits are
    per-thread arrives; the TMA-completed full array keeps its elected arrive and expect-tx."""
    runs, _, _ = _runs_check("eager_tma", {}, tmp_path, debug_waits=False, values=((2,),))
    tr = runs.base.trace({"N": 2})
    ops = {(o.op, o.array) for p in tr.partitions for o in p.ops}
    assert {(ARRIVE, "p_full0"), (EXPECT, "p_full0"), (ARRIVE_THREAD, "p_empty0"),
            (ARRIVE_THREAD, "back_full0"), (ARRIVE_THREAD, "back_empty0")} <= ops, ops
    assert not {(ARRIVE_THREAD, "p_full0"), (ARRIVE, "p_empty0")} & ops


def test_the_byte_check_sees_a_wrong_expect(tmp_path):
    """The walk that checks expect-tx counts fails on a count off by one box, and on a copy
    moved after its expect."""
    from tle_compiler.lowering import gluon_source

    path = _write(tmp_path, "wide_two_fields_c3")
    sig = _kernel_config(path, "wide_two_fields_c3", {})["signature"]
    src = gluon_source((str(path), "wide_two_fields_c3"), {}).source
    assert not _tx_problems(src, "wide_two_fields_c3", sig)[0]
    assert "p_full0.index(_p_s2), 49152)" in src
    (problem,) = _tx_problems(src.replace(", 49152)", ", 40960)"), "wide_two_fields_c3", sig)[0]
    assert "declares 40960 bytes, the copies before it deliver 49152" in problem
    lines = src.splitlines()
    (k,) = [n for n, ln in enumerate(lines) if "mbarrier.expect(" in ln]
    c = max(n for n, ln in enumerate(lines[:k]) if "tma.async_copy_global_to_shared(" in ln)
    late = lines[:c] + [lines[k]] + lines[c:k] + lines[k + 1:]  # the expect before the k copy
    found = _tx_problems("\n".join(late), "wide_two_fields_c3", sig)[0]
    assert len(found) == 2 and "32768 bytes copied on p_full0 with no expect after" in found[0]
    assert "declares 49152 bytes, the copies before it deliver 16384" in found[1]
    # a copy into the other field's ring (the v box into k's slot)
    (copy_k,) = [ln for ln in lines if "tma.async_copy_global_to_shared(k_desc" in ln]
    assert "p_k.index(_p_s1))" in copy_k
    swapped = src.replace(copy_k, copy_k.replace("k_desc", "v_desc"))
    found = _tx_problems(swapped, "wide_two_fields_c3", sig)[0]
    assert any("16384 bytes through v_desc into p_k.index(_p_s1), a slot of 32768 bytes" in f
               for f in found), found


def test_the_arrival_check_sees_a_wrong_init_count(tmp_path):
    """A tma-partition barrier initialised for the expect-tx alone would complete before the
    register stores are published: the arrival check reports it."""
    from tle_compiler.testing.gluon_trace import LoweredKernel, trace_gluon

    path = _write(tmp_path, "tma_partition_c2")
    lk = LoweredKernel((str(path), "tma_partition_c2"), {})
    assert not _arrival_problems(lk, {"N": 3}, {})
    init = "mbarrier.init(p_full0.index(1), count=2)"
    assert init in lk.gen.source
    tr = trace_gluon(lk.gen.source.replace(init, init.replace("count=2", "count=1")),
                     lk.gen.kernel, {"N": 3})
    (problem,) = _arrivals_of(tr, lk.info.partitions)
    assert "a commit arrives 2 times on p_full0[1] (['arrive', 'expect']), init count 1" in problem


def test_a_descriptor_chosen_by_a_constexpr_if_is_refused_at_the_copy(tmp_path):
    """A descriptor bound in both branches of an `if` on a constexpr, then copied through: the
    frontend refuses the copy at its line (check bad-tma), also when tle-dump reads the kernel
    specialised to the constexpr, so nothing is verified that the lowering could not attribute
    to one argument."""
    from tle_compiler.cli.dump import main

    src = KERNELS["descriptor_routes"].replace(
        "def descriptor_routes(a_desc, b_desc, y_ptr, N):",
        "def descriptor_routes(a_desc, b_desc, y_ptr, N, SWAP: tl.constexpr):").replace(
        "(fill, (p, da, b_desc, N))", "(fill, (p, da, b_desc, N, SWAP))").replace(
        "def fill(p, src_a, src_b, N):\n    w = p.writer()\n    one = src_a\n    two = src_b\n",
        "def fill(p, src_a, src_b, N, SWAP):\n    w = p.writer()\n    if SWAP:\n"
        "        one = src_b\n"
        "        two = src_a\n    else:\n        one = src_a\n        two = src_b\n")
    assert "if SWAP:" in src and "SWAP: tl.constexpr" in src
    path = tmp_path / "chosen.py"
    path.write_text(src)
    line = src.splitlines().index("    tle.gpu.tma_load(s.b, second, [0, i * BN])") + 1
    for flags in ([], ["--param=SWAP=0"], ["--param=SWAP=1"]):
        err = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            assert main([*flags, str(path)]) == 1
        assert f"chosen.py:{line}: error: tle.gpu.tma_load: the descriptor `two` must be an " \
               f"argument of the kernel" in err.getvalue() and "[bad-tma]" in err.getvalue()


# ------------------------------------------------------------------ emulated results

def _desc(t, block):
    from triton.tools.tensor_descriptor import TensorDescriptor

    return TensorDescriptor(t, list(t.shape), list(t.stride()), list(block))


def _emulated(tmp_path: Path, name: str):
    from tle_compiler.testing.emulator import load_kernel_module

    return getattr(load_kernel_module(_write(tmp_path, name)), name)


def _bf16(rows: int, cols: int, seed: int):
    import torch

    g = torch.Generator().manual_seed(seed)
    return torch.randint(-20, 20, (rows, cols), generator=g).to(torch.bfloat16)


def _box(x, r0: int, c0: int, rows: int = 64, cols: int = 64):
    """x[r0:r0 + rows, c0:c0 + cols] with zeros past x's end (as TMA fills them)."""
    import torch

    out = torch.zeros(rows, cols, dtype=x.dtype)
    part = x[r0:r0 + rows, c0:c0 + cols]
    out[:part.shape[0], :part.shape[1]] = part
    return out


@pytest.mark.parametrize("n", [0, 1, 3])
def test_emulated_one_box_c1(n, tmp_path):
    import torch

    x = _bf16(64 * n - 10 if n else 1, 64, n)  # the last tile's last 10 rows past x's end
    y = torch.full((max(n, 1) * 64, 64), float("nan"), dtype=torch.bfloat16)
    _emulated(tmp_path, "one_box_c1")[(1,)](_desc(x, [64, 64]), y, n)
    for i in range(n):
        assert torch.equal(y[i * 64:(i + 1) * 64], _box(x, i * 64, 0))


@pytest.mark.parametrize("n", [1, 4])
def test_emulated_wide_two_fields_c3(n, tmp_path):
    import torch

    k, v = _bf16(64 * n, 256, 1), _bf16(64 * n, 200, 2)  # v's columns 200..255 past its end
    yk = torch.full((64 * n, 256), float("nan"), dtype=torch.bfloat16)
    yv = torch.full((64 * n, 128), float("nan"), dtype=torch.bfloat16)
    _emulated(tmp_path, "wide_two_fields_c3")[(1,)](_desc(k, [64, 256]), _desc(v, [64, 128]),
                                                     yk, yv, n)
    assert torch.equal(yk, k)
    for i in range(n):
        assert torch.equal(yv[i * 64:(i + 1) * 64], _box(v, i * 64, 128, 64, 128))


@pytest.mark.parametrize("n", [0, 1, 3])
def test_emulated_tma_partition_c2(n, tmp_path):
    import torch

    x = _bf16(64 * max(n, 1), 64, 3)
    s = torch.randn(max(n, 1) * 64)
    y = torch.full((max(n, 1) * 64, 64), float("nan"))
    _emulated(tmp_path, "tma_partition_c2")[(1,)](_desc(x, [64, 64]), s, y, n)
    for i in range(n):
        dst = (n - 1 - i) * 64
        rows = slice(i * 64, (i + 1) * 64)
        assert torch.equal(y[dst:dst + 64], x[rows].float() * s[rows, None])


@pytest.mark.parametrize("name", ["tma_thread_c2", "tma_mixed_close_c3"])
@pytest.mark.parametrize("n", [0, 1, 4])
def test_emulated_tma_with_gathers(name, n, tmp_path):
    import torch

    g = torch.Generator().manual_seed(n)
    x = _bf16(64 * max(n, 1), 64, 4)
    src = torch.randint(-8, 8, (100, 64), generator=g).half()
    idx = torch.randint(0, 100, (max(n, 1), 64), generator=g, dtype=torch.int32)
    y = torch.full((max(n, 1), 64, 64), float("nan"))
    if name == "tma_thread_c2":
        _emulated(tmp_path, name)[(1,)](_desc(x, [64, 64]), src, idx, y, n)
    else:
        f = torch.full((64,), -1, dtype=torch.int32)
        _emulated(tmp_path, name)[(1,)](_desc(x, [64, 64]), src, idx, y, f, n)
        assert f.eq(1).all()
    for i in range(n):
        tile, gathered = x[i * 64:(i + 1) * 64].float(), src[idx[i].long()].float()
        want = tile + gathered if name == "tma_thread_c2" else tile - gathered + i
        assert torch.equal(y[i], want)


@pytest.mark.parametrize("n", [0, 1, 3])
def test_emulated_views_two_readers(n, tmp_path):
    import torch

    x, z = _bf16(64 * max(n, 1), 64, 5), _bf16(64, 64 * max(n, 1), 6)
    ya, yb = (torch.full((max(n, 1), 64, 64), float("nan")) for _ in range(2))
    _emulated(tmp_path, "views_two_readers")[(1,)](_desc(x, [64, 64]), _desc(z, [64, 64]),
                                                    ya, yb, n)
    h = torch.arange(64).float()
    for i in range(n):
        assert torch.equal(ya[i], x[i * 64:(i + 1) * 64].float() + (h + i)[None, :])
        assert torch.equal(yb[i], z[:, i * 64:(i + 1) * 64].float() * (h + i)[None, :])


@pytest.mark.parametrize("n", [0, 2])
def test_emulated_helpers_twice(n, tmp_path):
    import torch

    x = _bf16(64 * (n + 1), 64, 7)
    y = torch.full((64 * (n + 1), 64), float("nan"), dtype=torch.bfloat16)
    _emulated(tmp_path, "helpers_twice")[(1,)](_desc(x, [64, 64]), y, n)
    assert torch.equal(y, x)


@pytest.mark.parametrize("tma", [0, 1])
def test_emulated_constexpr_if(tma, tmp_path):
    import torch

    n = 3
    x = _bf16(64 * n, 64, 8)
    y = torch.full((n, 64, 64), float("nan"))
    _emulated(tmp_path, "constexpr_if")[(1,)](_desc(x, [64, 64]), x, y, n, TMA=tma)
    for i in range(n):
        assert torch.equal(y[i], x[i * 64:(i + 1) * 64].float() + i)


@pytest.mark.parametrize("rounds,np_", [(0, 2), (1, 1), (2, 3)])
def test_emulated_persistent(rounds, np_, tmp_path):
    import torch

    x = _bf16(64 * max(rounds * np_, 1), 64, 9)
    b = torch.randn(max(rounds, 1), 64)
    y = torch.full((max(rounds, 1), 64, 64), float("nan"))
    _emulated(tmp_path, "persistent")[(1,)](_desc(x, [64, 64]), b, y, rounds, np_)
    for r in range(rounds):
        tiles = x[r * np_ * 64:(r + 1) * np_ * 64].float().reshape(np_, 64, 64)
        assert torch.allclose(y[r], tiles.sum(0) + b[r][None, :])


@pytest.mark.parametrize("n", [0, 2])
def test_emulated_eager_tma(n, tmp_path):
    import torch

    x = _bf16(64 * max(n, 1), 64, 10)
    y = torch.full((max(n, 1), 64, 64), float("nan"))
    z = torch.full((max(n, 1), 64), float("nan"))
    _emulated(tmp_path, "eager_tma")[(1,)](_desc(x, [64, 64]), y, z, n)
    for i in range(n):
        want = x[i * 64:(i + 1) * 64].float() + (torch.arange(64).float() * i)[:, None]
        assert torch.equal(y[i], want) and torch.allclose(z[i], want.sum(0))


@pytest.mark.parametrize("n", [0, 2])
def test_emulated_descriptor_routes(n, tmp_path):
    import torch

    a, b = _bf16(64 * max(n, 1), 64, 11), _bf16(64, 64 * max(n, 1), 12)
    y = torch.full((max(n, 1), 64, 64), float("nan"))
    _emulated(tmp_path, "descriptor_routes")[(1,)](_desc(a, [64, 64]), _desc(b, [64, 64]), y, n)
    for i in range(n):
        assert torch.equal(y[i], a[i * 64:(i + 1) * 64].float() * 2
                           + b[:, i * 64:(i + 1) * 64].float())


@pytest.mark.parametrize("n", [0, 1, 3])
def test_emulated_rank4_and_one_shot(n, tmp_path):
    import torch

    g = torch.Generator().manual_seed(n)
    kv = torch.randint(-9, 9, (max(n, 1), 64, 3, 64), generator=g).to(torch.bfloat16)
    x = _bf16(64 * (n + 1), 64, 15)
    y = torch.full((max(n, 1), 64, 64), float("nan"))
    _emulated(tmp_path, "rank4_and_one_shot")[(1,)](_desc(kv, [1, 64, 1, 64]), _desc(x, [64, 64]),
                                                     y, n, 2)
    for i in range(n):
        want = kv[i, :, 2, :].float() + x[(i + 1) * 64:(i + 2) * 64].float() - x[:64].float()
        assert torch.equal(y[i], want)


@pytest.mark.parametrize("n", [0, 1, 4])
def test_emulated_if_else_windows(n, tmp_path):
    import torch

    x, z = _bf16(64 * max(n, 1), 64, 16), _bf16(64, 64 * max(n, 1), 17)
    y = torch.full((max(n, 1) * 64, 64), float("nan"), dtype=torch.bfloat16)
    _emulated(tmp_path, "if_else_windows")[(1,)](_desc(x, [64, 64]), _desc(z, [64, 64]), y, n)
    for i in range(n):
        want = x[i * 64:(i + 1) * 64] if i % 2 == 0 else z[:, i * 64:(i + 1) * 64]
        assert torch.equal(y[i * 64:(i + 1) * 64], want)


@pytest.mark.parametrize("n", [1, 3])
def test_emulated_fp32_int8_c3(n, tmp_path):
    import torch

    g = torch.Generator().manual_seed(n)
    f = torch.randn(32 * n, 64, generator=g)
    b = torch.randint(-100, 100, (64 * n, 128), generator=g, dtype=torch.int8)
    yf = torch.full((32 * n, 64), float("nan"))
    yb = torch.full((64 * n, 128), -999, dtype=torch.int32)
    _emulated(tmp_path, "fp32_int8_c3")[(1,)](_desc(f, [32, 64]), _desc(b, [64, 128]), yf, yb, n)
    assert torch.equal(yf, f) and torch.equal(yb, b.int())


@pytest.mark.parametrize("nt", [1, 3])
def test_emulated_wgmma_operands(nt, tmp_path):
    import torch

    q, k = _bf16(64, 64, 18), _bf16(64 * nt, 64, 19)
    o = torch.full((64, 64), float("nan"))
    _emulated(tmp_path, "wgmma_operands")[(1,)](_desc(q, [64, 64]), _desc(k, [64, 64]), o, nt)
    want = sum(q.float() @ k[t * 64:(t + 1) * 64].float().T for t in range(nt))
    assert torch.equal(o, want)


@pytest.mark.parametrize("n", [0, 1, 2])
def test_emulated_static_inner(n, tmp_path):
    import torch

    x = _bf16(128 * max(n, 1), 64, 20)
    y = torch.full((128 * max(n, 1), 64), float("nan"), dtype=torch.bfloat16)
    _emulated(tmp_path, "static_inner")[(1,)](_desc(x, [64, 64]), y, n)
    assert torch.equal(y[:128 * n], x[:128 * n])


@pytest.mark.parametrize("name", ["views_split_close_w1", "views_split_close_w2"])
@pytest.mark.parametrize("n", [0, 1, 3])
def test_emulated_views_split_close(name, n, tmp_path):
    import torch

    x = _bf16(64 * max(n, 1), 64, 21)
    g = _bf16(64 * max(n, 1), 64, 22).half()
    ya = torch.full((max(n, 1) * 64, 64), float("nan"), dtype=torch.bfloat16)
    yb = torch.full((max(n, 1) * 64, 64), float("nan"), dtype=torch.float16)
    _emulated(tmp_path, name)[(1,)](_desc(x, [64, 64]), g, ya, yb, n)
    assert torch.equal(ya[:64 * n], x[:64 * n]) and torch.equal(yb[:64 * n], g[:64 * n])


@pytest.mark.parametrize("n", [1, 2])
def test_emulated_rank3_field(n, tmp_path):
    import torch

    g = torch.Generator().manual_seed(n)
    x = torch.randint(-9, 9, (2 * n, 64, 64), generator=g).to(torch.bfloat16)
    y = torch.full((n, 64, 64), float("nan"))
    _emulated(tmp_path, "rank3_field")[(1,)](_desc(x, [2, 64, 64]), y, n)
    for i in range(n):
        assert torch.equal(y[i], x[2 * i:2 * i + 2].float().sum(0))


@pytest.mark.parametrize("n", [0, 1, 4])
def test_emulated_interleaved_windows(n, tmp_path):
    import torch

    x = _bf16(64 * max(n, 1), 64 * max(n, 2), 23)
    y = torch.full((max(n, 1), 64, 64), float("nan"))
    _emulated(tmp_path, "interleaved_windows")[(1,)](_desc(x, [64, 64]), y, n)
    for i in range(n):
        want = (_box(x, i * 64, 0).float() * 4 + _box(x, i * 64, 64).float() * 2
                + _box(x, 0, i * 64).float() + (torch.arange(64) + i).float()[None, :])
        assert torch.equal(y[i], want)


@pytest.mark.parametrize("nt", [1, 4])
def test_emulated_pipelined_tma_partition(nt, tmp_path):
    import torch

    g = torch.Generator().manual_seed(nt)
    q, k, v = (torch.randn(rows, 64, generator=g).bfloat16() for rows in (64, 64 * nt, 64 * nt))
    m = torch.randn(64 * nt, generator=g)
    o = torch.full((64, 64), float("nan"))
    _emulated(tmp_path, "pipelined_tma_partition")[(1,)](
        _desc(q, [64, 64]), _desc(k, [64, 64]), _desc(v, [64, 64]), m, o, nt)
    s = (q.float() @ k.float().T + m[None, :]) * math.log(2.0)  # exp2 weights
    assert torch.allclose(o, torch.softmax(s, 1) @ v.float(), atol=2e-2, rtol=2e-2)


@pytest.mark.parametrize("half", [0, 1])
def test_emulated_constexpr_if_helper(half, tmp_path):
    import torch

    n = 3
    x = _bf16(64 * n, 128, 24)
    y = torch.full((n, 64, 64), float("nan"))
    _emulated(tmp_path, "constexpr_if_helper")[(1,)](_desc(x, [64, 64]), y, n, HALF=half)
    for i in range(n):
        rows = x[i * 64:(i + 1) * 64].float()
        assert torch.equal(y[i], rows[:, 64:] + (rows[:, :64] * 3 if half else 0))


@pytest.mark.parametrize("n", [0, 2])
def test_emulated_eager_tma_mixed(n, tmp_path):
    import torch

    g = torch.Generator().manual_seed(n)
    x = _bf16(64 * max(n, 1), 64, 25)
    src = torch.randint(-8, 8, (100, 64), generator=g).half()
    idx = torch.randint(0, 100, (max(n, 1), 64), generator=g, dtype=torch.int32)
    y = torch.full((max(n, 1), 64, 64), float("nan"))
    f = torch.full((64,), -1, dtype=torch.int32)
    _emulated(tmp_path, "eager_tma_mixed")[(1,)](_desc(x, [64, 64]), src, idx, y, f, n)
    assert f.eq(1).all()
    for i in range(n):
        assert torch.equal(y[i], x[i * 64:(i + 1) * 64].float() - src[idx[i].long()].float() + i)


@pytest.mark.parametrize("name", ["eager_tma", "eager_tma_mixed", "views_split_close_w1"])
def test_compiles_with_debug_waits(name, tmp_path):
    """Debug waits (and eager publish's barrier offsets) need a second compile with the barriers'
    shared-memory offsets baked in: still sm_90a code whose expect-tx are the copies' bytes."""
    from tle_compiler.lowering import compile_kernel

    path = _write(tmp_path, name)
    config = _kernel_config(path, name, {})
    c = compile_kernel((str(path), name), config["signature"], config["constexprs"],
                       debug_waits=True)
    assert ".target sm_90a" in c.asm["ptx"] and "mbarrier.try_wait" in c.asm["ptx"]
    src = c.tle_generated.source
    assert "_tle_try_wait(" in src and "mbarrier.wait(" not in src
    problems, walk = _tx_problems(src, name, config["signature"])
    assert walk.copies and not problems, "\n".join(problems)


def test_a_tma_copy_into_a_named_barrier_pipe_is_refused_at_the_copy(tmp_path):
    """A named barrier cannot track a copy's bytes: the verifier rejects the copy at its line with
    the reason (passes/tma_windows.py), and so does the lowering if reached; nothing is emitted
    that would let the reader run before the bytes land."""
    from tle_compiler.diagnostics import TleError
    from tle_compiler.lowering import compile_kernel

    src = KERNELS["one_box_c1"].replace(
        "p = tle.pipe(capacity=1, t=", 'p = tle.pipe(capacity=1, barrier="named", t=').replace(
        "    tle.gpu.warp_specialize([(fill, (p, x_desc, N)), (drain, (p, y_ptr, N))], [4], [232])",
        "    ack = tle.pipe(capacity=1, a=tle.gpu.alloc([1, BN], tl.float32))\n"
        "    tle.gpu.warp_specialize([(fill, (p, ack, x_desc, N)), (drain, (p, ack, y_ptr, N))],"
        " [4], [232])").replace(
        "def fill(p, x_desc, N):\n    w = p.writer()\n",
        "def fill(p, ack, x_desc, N):\n    w = p.writer()\n    ar = ack.reader()\n").replace(
        "        w.commit(i)\n",
        "        w.commit(i)\n        ar.wait(i)\n        ar.release(i)\n").replace(
        "def drain(p, y_ptr, N):", "def drain(p, ack, y_ptr, N):").replace(
        "        r.release(i)\n",
        "        r.release(i)\n        s = aw.acquire(i)\n"
        "        tl.store(tle.gpu.local_ptr(s.a), tl.sum(v.to(tl.float32), 0))\n"
        "        aw.commit(i)\n").replace(
        "    r = p.reader()\n", "    r = p.reader()\n    aw = ack.writer()\n")
    assert 'barrier="named"' in src and "aw.commit(i)" in src and "ar.release(i)" in src
    path = tmp_path / "named_tma.py"
    path.write_text(src)
    config = _kernel_config(path, "one_box_c1", {})
    with pytest.raises(TleError) as e:
        compile_kernel((str(path), "one_box_c1"), config["signature"], config["constexprs"])
    assert e.value.loc.line == src.splitlines().index(
        "        tle.gpu.tma_load(s.t, x_desc, [i * BM, 0])") + 1
    assert "has barrier=\"named\"" in e.value.message and "cannot track a TMA copy" in \
        e.value.message
    # and the verifier refuses it first: tle-dump rejects the kernel at the copy (exit 1)
    from tle_compiler.cli.dump import main

    assert main([str(path)]) == 1



@pytest.mark.parametrize("n,m", [(0, 0), (3, 0), (3, 2), (4, 9)])
def test_emulated_two_readers_if_param(n, m, tmp_path):
    import torch

    x = _bf16(64 * max(n, 1), 64 * max(n, 1), 26)
    y, z = (torch.full((max(n, 1) * 64, 64), float("nan"), dtype=torch.bfloat16) for _ in range(2))
    _emulated(tmp_path, "two_readers_if_param")[(1,)](_desc(x, [64, 64]), y, z, n, m)
    for i in range(n):
        want = x[i * 64:(i + 1) * 64, :64] if i < m else x[:64, i * 64:(i + 1) * 64]
        rows = slice(i * 64, (i + 1) * 64)
        assert torch.equal(y[rows], want) and torch.equal(z[rows], want)


@pytest.mark.parametrize("n", [0, 1, 3])
def test_emulated_close_if_commit_helper(n, tmp_path):
    import torch

    x = _bf16(64 * max(n, 1), 64, 27)
    y = torch.full((max(n, 1) * 64, 64), float("nan"), dtype=torch.bfloat16)
    f = torch.full((n + 1, 64), -1, dtype=torch.int32)
    _emulated(tmp_path, "close_if_commit_helper")[(1,)](_desc(x, [64, 64]), y, f, n)
    assert torch.equal(y[:64 * n], x[:64 * n])
    assert f[:n].eq(0).all() and f[n].eq(1).all()


@pytest.mark.parametrize("n", [0, 1, 3])
def test_emulated_one_shot_tma_partition(n, tmp_path):
    import torch

    x = _bf16(64, 64, 28)
    y = torch.full((max(n, 1), 64, 64), float("nan"))
    _emulated(tmp_path, "one_shot_tma_partition")[(1,)](_desc(x, [64, 64]), y, n)
    for i in range(n):
        assert torch.equal(y[i], x.float() + n + i)


# A descriptor name bound twice before the copies: `one = src_b` then `one = src_a`. The copy
# through `one` reads a_desc; the signature's pre-check (descriptors.tma_copies) followed the
# first binding and refused the kernel as copying b_desc's [64, 128] boxes into the [64, 64]
# slot, though tle-dump verifies it and the copy the lowering emits is a_desc's. The same with
# a partition parameter assigned in the body (`src_a = src_b`).
REBIND = HEAD + '''
@tle.jit(num_warps=4)
def rebind(a_desc, b_desc, y_ptr, N):
    p = tle.pipe(capacity=2, a=tle.gpu.alloc([2, BM, BN], tl.bfloat16),
                 b=tle.gpu.alloc([2, BM, 128], tl.bfloat16))
    tle.gpu.warp_specialize([(fill, (p, a_desc, b_desc, N)), (drain, (p, y_ptr, N))], [4], [232])


def fill(p, src_a, src_b, N):
    w = p.writer()
    ROUTE
    for i in range(N):
        s = w.acquire(i)
        tle.gpu.tma_load(s.a, one, [i * BM, 0])
        tle.gpu.tma_load(s.b, two, [i * BM, 0])
        w.commit(i)


def drain(p, y_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    r = p.reader()
    for i in range(N):
        res = r.wait(i)
        a = tl.load(tle.gpu.local_ptr(res.slot.a)).to(tl.float32)
        b = tl.load(tle.gpu.local_ptr(res.slot.b)).to(tl.float32)
        r.release(i)
        tl.store(y_ptr + i * BM * BN + offs, a + tl.sum(b, 1)[:, None])
''' + _config(a_desc=D64, b_desc="tensordesc<bf16[64, 128]>", y_ptr="*fp32", N="i32")
REBIND_ROUTES = {
    "name_twice": ("one = src_b\n    one = src_a\n    two = src_b", None),
    "param_assigned": ("src_b = src_a\n    src_b = b_swap\n    one = src_a\n    two = src_b", None),
    "name_twice_wrong": ("one = src_a\n    one = src_b\n    two = src_b",
                         "argument 'b_desc' is a tensor descriptor of bf16 boxes [64, 128], but "
                         "this tle.gpu.tma_load copies it into p.a"),
}


@pytest.mark.parametrize("route", sorted(REBIND_ROUTES))
def test_a_descriptor_name_bound_twice_is_checked_as_the_copy_reads_it(route, tmp_path):
    from tle_compiler.cli.dump import main
    from tle_compiler.diagnostics import TleError
    from tle_compiler.lowering import compile_kernel

    text, error = REBIND_ROUTES[route]
    src = REBIND.replace("ROUTE", text)
    if "b_swap" in text:  # a third descriptor argument of b's box, bound to the parameter
        src = src.replace("def rebind(a_desc, b_desc,", "def rebind(a_desc, b_desc, b2_desc,") \
            .replace("(fill, (p, a_desc, b_desc, N))", "(fill, (p, a_desc, b_desc, b2_desc, N))") \
            .replace("def fill(p, src_a, src_b, N):", "def fill(p, src_a, src_b, b_swap, N):") \
            .replace('"b_desc": "tensordesc<bf16[64, 128]>",',
                     '"b_desc": "tensordesc<bf16[64, 128]>", '
                     '"b2_desc": "tensordesc<bf16[64, 128]>",')
        assert "b2_desc" in src.split("DEFAULT_CONFIG")[1]
    path = tmp_path / "rebind.py"
    path.write_text(src)
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        rc = main([str(path)])
    # verified: the verifier counts the fields' bytes; a copy of the wrong box is refused by the
    # lowering's translation, which tle-dump runs on every kernel it verifies
    assert rc == (0 if error is None else 1), err.getvalue()
    assert error is None or error in err.getvalue(), err.getvalue()
    config = _kernel_config(path, "rebind", {})
    if error is not None:
        with pytest.raises(TleError) as e:
            compile_kernel((str(path), "rebind"), config["signature"], {})
        assert error in e.value.message and e.value.loc.line == \
            src.splitlines().index("        tle.gpu.tma_load(s.a, one, [i * BM, 0])") + 1
        return
    c = compile_kernel((str(path), "rebind"), config["signature"], {})
    assert ".target sm_90a" in c.asm["ptx"]
    problems, walk = _tx_problems(c.tle_generated.source, "rebind", config["signature"])
    assert walk.copies == 2 and not problems, "\n".join(problems)



@pytest.mark.parametrize("name", sorted(TWO_SLOT_BODIES))
@pytest.mark.parametrize("n", [0, 1, 4])
def test_emulated_two_slots(name, n, tmp_path):
    import torch

    x, z = _bf16(64 * max(n, 1), 64, 29), _bf16(64 * max(n, 1), 128, 30)
    y = torch.full((max(n, 1), 64, 64), float("nan"))
    _emulated(tmp_path, name)[(1,)](_desc(x, [64, 64]), _desc(z, [64, 128]), y, n)
    for i in range(n):
        rows = slice(i * 64, (i + 1) * 64)
        assert torch.equal(y[i], x[rows].float() + z[rows].float().sum(1)[:, None])


def test_slots_swapped_in_the_helper_tuple_are_refused_at_the_copy(tmp_path):
    """(sb, sa) instead of (sa, sb): z_desc's [64, 128] box would land in a's [64, 64] slot. The
    verifier counts the fields' bytes and proves the protocol; the lowering refuses the copy at
    its line in the helper (a wrong box would leave the expect-tx unmatched)."""
    from tle_compiler.diagnostics import TleError
    from tle_compiler.lowering import compile_kernel

    src = KERNELS["slot_tuple_helper"].replace("put((sa, sb), x_desc", "put((sb, sa), x_desc")
    assert "put((sb, sa)" in src
    path = tmp_path / "swapped.py"
    path.write_text(src)
    config = _kernel_config(path, "slot_tuple_helper", {})
    with pytest.raises(TleError) as e:
        compile_kernel((str(path), "slot_tuple_helper"), config["signature"], {})
    assert "argument 'z_desc' is a tensor descriptor of bf16 boxes [64, 128], but this " \
           "tle.gpu.tma_load copies it into a.t, a bf16 slot of shape [64, 64]" in e.value.message
    assert e.value.loc.line == src.splitlines().index(
        "    tle.gpu.tma_load(pair[1].t, z_desc, [i * BM, 0])") + 1



@pytest.mark.parametrize("rounds,np_", [(1, 1), (2, 3)])
def test_emulated_pipelined_persistent_tma(rounds, np_, tmp_path):
    import torch

    g = torch.Generator().manual_seed(rounds)
    a = torch.randn(2 * rounds * np_ * 64, 64, generator=g).bfloat16()
    b = torch.randn(2 * rounds * np_ * 64, 64, generator=g).bfloat16()
    c = torch.full((2 * rounds * 64, 64), float("nan"))
    _emulated(tmp_path, "pipelined_persistent_tma")[(2,)](_desc(a, [64, 64]), _desc(b, [64, 64]),
                                                           c, rounds, np_)
    ta = a.float().reshape(-1, 64, 64)
    tb = b.float().reshape(-1, 64, 64)
    want = (ta @ tb).reshape(2 * rounds, np_, 64, 64).sum(1).reshape(-1, 64)
    assert torch.allclose(c, want, atol=1e-2, rtol=1e-2)



@pytest.mark.parametrize("d", [64, 256])
def test_emulated_constexpr_width(d, tmp_path):
    import torch

    n = 2
    x = _bf16(64 * n, 320, 31)
    y = torch.full((64 * n, d), float("nan"), dtype=torch.bfloat16)
    _emulated(tmp_path, "constexpr_width")[(1,)](_desc(x, [64, d]), y, n, D=d)
    assert torch.equal(y, x[:, :d])



@pytest.mark.parametrize("n", [0, 1, 4])
def test_emulated_chain_block_table(n, tmp_path):
    import torch

    x = _bf16(64 * 5, 64, 32)
    blk = torch.tensor([(3 * i + 1) % 5 for i in range(max(n, 1))], dtype=torch.int32)
    blk = blk[:, None].expand(-1, 16).contiguous()
    y = torch.full((max(n, 1) * 64, 64), float("nan"), dtype=torch.bfloat16)
    _emulated(tmp_path, "chain_block_table")[(1,)](_desc(x, [64, 64]), blk, y, n)
    for i in range(n):
        b = int(blk[i, 0])
        assert torch.equal(y[i * 64:(i + 1) * 64], x[b * 64:(b + 1) * 64])


def test_launches_compile_for_host_descriptors_of_each_dtype_and_rank(tmp_path):
    """Without a GPU a launch stops after compiling: the host descriptors (fp32, int8, fp8, a
    rank-3 and a rank-4 box) gave the signature types, completed with the rings' layouts."""
    import importlib.util

    import torch

    from tle_compiler.diagnostics import TleError

    def d(t, block):
        return _desc(t, block)

    cases = {
        "fp32_int8_c3": lambda: (d(torch.zeros(64, 64), [32, 64]),
                                 d(torch.zeros(64, 128, dtype=torch.int8), [64, 128]),
                                 torch.zeros(64, 64), torch.zeros(64, 128, dtype=torch.int32), 1),
        "fp8_field": lambda: (d(torch.zeros(64, 128, dtype=torch.float8_e4m3fn), [64, 128]),
                              torch.zeros(64, 128), 1),
        "rank3_field": lambda: (d(torch.zeros(4, 64, 64, dtype=torch.bfloat16), [2, 64, 64]),
                                torch.zeros(64, 64), 1),
        "rank4_and_one_shot": lambda: (
            d(torch.zeros(2, 64, 3, 64, dtype=torch.bfloat16), [1, 64, 1, 64]),
            d(torch.zeros(128, 64, dtype=torch.bfloat16), [64, 64]), torch.zeros(64, 64), 1, 2),
    }
    want = {"fp32_int8_c3": ["tensor<32x64xf32", "tensor<64x128xsi8"],
            "fp8_field": ["tensor<64x128xf8E4M3FN"], "rank3_field": ["tensor<2x64x64xbf16"],
            "rank4_and_one_shot": ["tensor<1x64x1x64xbf16", "tensor<64x64xbf16"]}
    for name, args in cases.items():
        path = _write(tmp_path, name)
        spec = importlib.util.spec_from_file_location(f"launch_{name}", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        kernel = getattr(mod, name)
        with pytest.raises(TleError) as e:
            kernel[(1,)](*args())
        assert e.value.check == "no-gpu", str(e.value)
        (compiled,) = kernel.runtime.cache.values()
        for t in want[name]:
            assert f"!tt.tensordesc<{t}, #shared" in compiled.asm["ttgir"], (name, t)


@pytest.mark.parametrize("order,error", [(("b_desc", "a_desc"), None),
                                         (("a_desc", "b_desc"), "argument 'b_desc' is a tensor "
                                          "descriptor of bf16 boxes [64, 128], but this "
                                          "tle.gpu.tma_load copies it into p.a")])
def test_a_kernel_level_name_bound_twice_reaches_the_partition_as_its_last_binding(
        order, error, tmp_path):
    """`da = b_desc; da = a_desc` in the kernel body, `da` bound to the partition parameter the
    copy into a reads: compiled with a_desc's boxes; the other order refused at the copy."""
    from tle_compiler.diagnostics import TleError
    from tle_compiler.lowering import compile_kernel

    src = REBIND.replace("ROUTE", "one = src_a\n    two = src_b").replace(
        "    tle.gpu.warp_specialize([(fill, (p, a_desc, b_desc, N))",
        f"    da = {order[0]}\n    da = {order[1]}\n"
        "    tle.gpu.warp_specialize([(fill, (p, da, b_desc, N))")
    assert "    da = " in src
    path = tmp_path / "kernel_rebind.py"
    path.write_text(src)
    config = _kernel_config(path, "rebind", {})
    if error is not None:
        with pytest.raises(TleError) as e:
            compile_kernel((str(path), "rebind"), config["signature"], {})
        assert error in e.value.message
        return
    c = compile_kernel((str(path), "rebind"), config["signature"], {})
    problems, walk = _tx_problems(c.tle_generated.source, "rebind", config["signature"])
    assert walk.copies == 2 and not problems, "\n".join(problems)
