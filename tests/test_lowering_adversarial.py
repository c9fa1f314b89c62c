"""What is verified is what is lowered, on kernels the bundled ones do not exercise.

Each kernel below is a small TLE source (written to tmp_path) with events in places the bundled
kernels and the fixtures of tests/test_lowering_events.py leave out: under runtime ``if``s whose
branches commit or release differently, in helpers called from two places, in nested loops at
both levels, delayed releases, several readers of one pipe, capacities 1 to 3, named-barrier
pipes, persistent ``r * NP + p`` loops, pipelined wgmma with a dot in flight across the back-edge,
cp.async gathers into slots, tensor names first bound in ``if``/``else`` branches. For every
kernel: tle-dump verifies it, it lowers to Gluon and compiles for sm_90a on the CPU, and the
Gluon-trace model of the generated code performs exactly the verified events' barrier operations
(tests/test_lowering_events.py's ``Runs``) for several param values; where the CPU emulator runs
the kernel, its results equal a torch reference.
"""

from __future__ import annotations

import contextlib
import io
import math
from pathlib import Path

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

CONFIG = '''
DEFAULT_CONFIG = {{"signature": {{{sig}}}, "constexprs": {{{cx}}}, "num_warps": 4, "grid": (1,)}}
'''


def _sig(**types) -> str:
    """The kernel's DEFAULT_CONFIG: a constexpr is given as ``constexpr=<default value>``."""
    sig = {k: ("constexpr" if str(v).startswith("constexpr") else v) for k, v in types.items()}
    cx = {k: int(str(v).split("=")[1]) for k, v in types.items() if str(v).startswith("constexpr")}
    return CONFIG.format(sig=", ".join(f'"{k}": "{v}"' for k, v in sig.items()),
                         cx=", ".join(f'"{k}": {v}' for k, v in cx.items()))


KERNELS: dict[str, str] = {}
#: constexpr settings each kernel is checked at (default: its DEFAULT_CONFIG's alone)
CONSTEXPRS: dict[str, list[dict]] = {}
#: runtime params fixed for tle-dump, so that the one left free is proved for every value (the
#: cutoff theorem covers one free param)
FIXED: dict[str, list[dict]] = {}


# 1. Both branches of a runtime `if` acquire, fill and commit (different fills); the reader's
#    branches release before / after their store.
KERNELS["if_else_events"] = HEAD + '''
@tle.jit(num_warps=4)
def if_else_events(x_ptr, y_ptr, N):
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, BM, BN], tl.int32))
    tle.gpu.warp_specialize([(fill, (p, x_ptr, N)), (drain, (p, y_ptr, N))], [4], [232])


def fill(p, x_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    w = p.writer()
    for i in range(N):
        x = tl.load(x_ptr + i * BM * BN + offs)
        if i % 2 == 0:
            s = w.acquire(i)
            tl.store(tle.gpu.local_ptr(s.t), x + 1)
            w.commit(i)
        else:
            s = w.acquire(i)
            tl.store(tle.gpu.local_ptr(s.t), x * 2)
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
            tl.store(y_ptr + i * BM * BN + offs, v - 1)
            r.release(i)
''' + _sig(x_ptr="*i32", y_ptr="*i32", N="i32")


def _ref_if_else_events(x, n):
    y = x.clone()
    for i in range(n):
        y[i] = (x[i] + 1 if i % 2 == 0 else x[i] * 2) - (0 if i % 3 == 0 else 1)
    return y


# 2. An `if`/`else` on a second runtime param: tiles below M are copied, the others zeroed, both
#    through the pipe; the reader's else branch releases before it reads nothing more.
KERNELS["if_on_param"] = HEAD + '''
@tle.jit(num_warps=4)
def if_on_param(x_ptr, y_ptr, N, M):
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, BM, BN], tl.int32))
    tle.gpu.warp_specialize([(fill, (p, x_ptr, N, M)), (drain, (p, y_ptr, N, M))], [4], [232])


def fill(p, x_ptr, N, M):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    w = p.writer()
    for i in range(N):
        s = w.acquire(i)
        if i < M:
            tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + i * BM * BN + offs))
            w.commit(i)
        else:
            tl.store(tle.gpu.local_ptr(s.t), tl.zeros([BM, BN], tl.int32))
            w.commit(i)


def drain(p, y_ptr, N, M):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    r = p.reader()
    for i in range(N):
        res = r.wait(i)
        if i >= M:
            v = tl.load(tle.gpu.local_ptr(res.slot.t)) - 7
            r.release(i)
        else:
            v = tl.load(tle.gpu.local_ptr(res.slot.t))
            r.release(i)
        tl.store(y_ptr + i * BM * BN + offs, v)
''' + _sig(x_ptr="*i32", y_ptr="*i32", N="i32", M="i32")
FIXED["if_on_param"] = [{"M": 0}, {"M": 2}, {"M": 5}]


def _ref_if_on_param(x, n, m):
    y = x.clone()
    for i in range(n):
        y[i] = x[i] if i < m else -7
    return y


# 3. Helpers performing events, each called from two places (before a loop and in it; in both
#    branches of an `if`), one helper calling another.
KERNELS["helpers_twice"] = HEAD + '''
def fill_slot(s, x_ptr, i, offs):
    tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + i * BM * BN + offs))


def put(w, x_ptr, i):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    s = w.acquire(i)
    fill_slot(s, x_ptr, i, offs)
    w.commit(i)


def take(r, y_ptr, i, k):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    res = r.wait(i)
    v = tl.load(tle.gpu.local_ptr(res.slot.t))
    r.release(i)
    tl.store(y_ptr + i * BM * BN + offs, v * k)


@tle.jit(num_warps=4)
def helpers_twice(x_ptr, y_ptr, N):
    tle.assume(N >= 0)  # index 0 is sent whatever N is
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, BM, BN], tl.int32))
    tle.gpu.warp_specialize([(fill, (p, x_ptr, N)), (drain, (p, y_ptr, N))], [4], [232])


def fill(p, x_ptr, N):
    w = p.writer()
    put(w, x_ptr, 0)
    for i in range(N):
        put(w, x_ptr, i + 1)


def drain(p, y_ptr, N):
    r = p.reader()
    for i in range(N + 1):
        if i % 2 == 0:
            take(r, y_ptr, i, 1)
        else:
            take(r, y_ptr, i, 3)
''' + _sig(x_ptr="*i32", y_ptr="*i32", N="i32")


def _ref_helpers_twice(x, n):
    y = x.clone()
    for i in range(n + 1):
        y[i] = x[i] * (1 if i % 2 == 0 else 3)
    return y


# 4. Nested loops with events at both levels: a capacity-1 header per outer iteration, a
#    capacity-2 body pipe indexed o * NI + i.
KERNELS["nested_loops"] = HEAD + '''
@tle.jit(num_warps=4)
def nested_loops(x_ptr, h_ptr, y_ptr, NO, NI: tl.constexpr):
    hdr = tle.pipe(capacity=1, h=tle.gpu.alloc([1, BN], tl.int32))
    body = tle.pipe(capacity=2, t=tle.gpu.alloc([2, BM, BN], tl.int32))
    tle.gpu.warp_specialize([(fill, (hdr, body, x_ptr, h_ptr, NO, NI)),
                             (drain, (hdr, body, y_ptr, NO, NI))], [4], [232])


def fill(hdr, body, x_ptr, h_ptr, NO, NI):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    hw = hdr.writer()
    bw = body.writer()
    for o in range(NO):
        hs = hw.acquire(o)
        tl.store(tle.gpu.local_ptr(hs.h), tl.load(h_ptr + o * BN + tl.arange(0, BN)))
        hw.commit(o)
        for i in range(NI):
            bs = bw.acquire(o * NI + i)
            tl.store(tle.gpu.local_ptr(bs.t), tl.load(x_ptr + (o * NI + i) * BM * BN + offs))
            bw.commit(o * NI + i)


def drain(hdr, body, y_ptr, NO, NI):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    hr = hdr.reader()
    br = body.reader()
    for o in range(NO):
        hres = hr.wait(o)
        h = tl.load(tle.gpu.local_ptr(hres.slot.h))
        hr.release(o)
        for i in range(NI):
            bres = br.wait(o * NI + i)
            v = tl.load(tle.gpu.local_ptr(bres.slot.t)) + h[None, :]
            br.release(o * NI + i)
            tl.store(y_ptr + (o * NI + i) * BM * BN + offs, v)
''' + _sig(x_ptr="*i32", h_ptr="*i32", y_ptr="*i32", NO="i32", NI="constexpr=2")
CONSTEXPRS["nested_loops"] = [{"NI": 1}, {"NI": 2}, {"NI": 3}]


# 5. Delayed releases two back on a capacity-3 pipe, with the trailing releases after the loop.
KERNELS["delayed_two_back"] = HEAD + '''
@tle.jit(num_warps=4)
def delayed_two_back(x_ptr, y_ptr, N):
    p = tle.pipe(capacity=3, t=tle.gpu.alloc([3, BM, BN], tl.int32))
    tle.gpu.warp_specialize([(fill, (p, x_ptr, N)), (drain, (p, y_ptr, N))], [4], [232])


def fill(p, x_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    w = p.writer()
    for i in range(N):
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + i * BM * BN + offs))
        w.commit(i)


def drain(p, y_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    r = p.reader()
    prev = tl.zeros([BM, BN], tl.int32)
    for i in range(N):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.t))
        if i > 1:
            r.release(i - 2)
        tl.store(y_ptr + i * BM * BN + offs, v + prev)
        prev = v
    if N > 1:
        r.release(N - 2)
    if N > 0:
        r.release(N - 1)
''' + _sig(x_ptr="*i32", y_ptr="*i32", N="i32")


def _ref_delayed_two_back(x, n):
    y = x.clone()
    for i in range(n):
        y[i] = x[i] + (x[i - 1] if i > 0 else 0)
    return y


# 6. Two readers of one pipe: one sees every field and releases at once under an if/else, the
#    other sees one field (a view) and releases one tile late.
KERNELS["two_readers"] = HEAD + '''
@tle.jit(num_warps=4)
def two_readers(x_ptr, y_ptr, z_ptr, N):
    p = tle.pipe(capacity=2, readers=("full", "view"),
                 a=tle.gpu.alloc([2, BM, BN], tl.int32), b=tle.gpu.alloc([2, BM, BN], tl.int32))
    tle.gpu.warp_specialize([(fill, (p, x_ptr, N)), (both, (p, y_ptr, N)),
                             (only_b, (p.reader("view", fields=("b",)), z_ptr, N))],
                            [4, 4], [160, 160])


def fill(p, x_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    w = p.writer()
    for i in range(N):
        s = w.acquire(i)
        x = tl.load(x_ptr + i * BM * BN + offs)
        tl.store(tle.gpu.local_ptr(s.a), x)
        tl.store(tle.gpu.local_ptr(s.b), x * 5)
        w.commit(i)


def both(p, y_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    r = p.reader("full")
    for i in range(N):
        res = r.wait(i)
        if i % 2 == 1:
            v = tl.load(tle.gpu.local_ptr(res.slot.a)) + tl.load(tle.gpu.local_ptr(res.slot.b))
            r.release(i)
        else:
            v = tl.load(tle.gpu.local_ptr(res.slot.a))
            r.release(i)
        tl.store(y_ptr + i * BM * BN + offs, v)


def only_b(r, z_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    for i in range(N):
        res = r.wait(i)
        tl.store(z_ptr + i * BM * BN + offs, tl.load(tle.gpu.local_ptr(res.slot.b)))
        if i > 0:
            r.release(i - 1)
    if N > 0:
        r.release(N - 1)
''' + _sig(x_ptr="*i32", y_ptr="*i32", z_ptr="*i32", N="i32")


# 7-9. One ring at capacity 1, 2 and 3 whose reader releases in an if/elif/else.
RING = HEAD + '''
@tle.jit(num_warps=4)
def ring_c{C}(x_ptr, y_ptr, N):
    p = tle.pipe(capacity={C}, t=tle.gpu.alloc([{C}, BM, BN], tl.int32))
    tle.gpu.warp_specialize([(fill, (p, x_ptr, N)), (drain, (p, y_ptr, N))], [4], [232])


def fill(p, x_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    w = p.writer()
    for i in range(N):
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + i * BM * BN + offs))
        w.commit(i)


def drain(p, y_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    r = p.reader()
    for i in range(N):
        res = r.wait(i)
        if i == 0:
            v = tl.load(tle.gpu.local_ptr(res.slot.t))
            r.release(i)
        elif i == N - 1:
            v = tl.load(tle.gpu.local_ptr(res.slot.t)) * 2
            r.release(i)
        else:
            v = tl.load(tle.gpu.local_ptr(res.slot.t)) + 1
            r.release(i)
        tl.store(y_ptr + i * BM * BN + offs, v)
''' + _sig(x_ptr="*i32", y_ptr="*i32", N="i32")
for _c in (1, 2, 3):
    KERNELS[f"ring_c{_c}"] = RING.replace("{C}", str(_c))


def _ref_ring(x, n):
    y = x.clone()
    for i in range(n):
        y[i] = x[i] if i == 0 else (x[i] * 2 if i == n - 1 else x[i] + 1)
    return y


# 10. A named-barrier pipe x whose every release is implied by the commit of ack; the reader's
#     branches order the release of x, the acquire of ack and the stores differently.
KERNELS["named_if_else"] = HEAD + '''
@tle.jit(num_warps=4)
def named_if_else(x_ptr, y_ptr, z_ptr, N):
    x = tle.pipe(capacity=1, barrier="named", t=tle.gpu.alloc([1, BM, BN], tl.float32))
    ack = tle.pipe(capacity=1, a=tle.gpu.alloc([1, BN], tl.float32))
    tle.gpu.warp_specialize([(produce, (x, ack, x_ptr, z_ptr, N)),
                             (consume, (x, ack, y_ptr, N))], [4], [232])


def produce(x, ack, x_ptr, z_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    w = x.writer()
    r = ack.reader()
    for t in range(N):
        s = w.acquire(t)
        tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + t * BM * BN + offs))
        w.commit(t)
        res = r.wait(t)
        a = tl.load(tle.gpu.local_ptr(res.slot.a))
        r.release(t)
        tl.store(z_ptr + t * BN + tl.arange(0, BN), a)


def consume(x, ack, y_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    r = x.reader()
    w = ack.writer()
    for t in range(N):
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.t))
        if t % 2 == 0:
            r.release(t)
            s = w.acquire(t)
            tl.store(tle.gpu.local_ptr(s.a), tl.sum(v, 0))
            w.commit(t)
            tl.store(y_ptr + t * BM * BN + offs, v + 1.0)
        else:
            s = w.acquire(t)
            tl.store(y_ptr + t * BM * BN + offs, v * 2.0)
            r.release(t)
            tl.store(tle.gpu.local_ptr(s.a), tl.max(v, 0))
            w.commit(t)
''' + _sig(x_ptr="*fp32", y_ptr="*fp32", z_ptr="*fp32", N="i32")


# 11. A persistent loop: ROUNDS rounds of NP tiles, indices r * NP + p, a capacity-1 per-round
#     pipe next to the capacity-2 tile pipe, the per-round one released after the inner loop.
KERNELS["persistent"] = HEAD + '''
@tle.jit(num_warps=4)
def persistent(x_ptr, b_ptr, y_ptr, ROUNDS, NP: tl.constexpr):
    item = tle.pipe(capacity=1, b=tle.gpu.alloc([1, BN], tl.int32))
    kv = tle.pipe(capacity=2, t=tle.gpu.alloc([2, BM, BN], tl.int32))
    tle.gpu.warp_specialize([(fill, (item, kv, x_ptr, b_ptr, ROUNDS, NP)),
                             (drain, (item, kv, y_ptr, ROUNDS, NP))], [4], [232])


def fill(item, kv, x_ptr, b_ptr, ROUNDS, NP):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    iw = item.writer()
    w = kv.writer()
    for r in range(ROUNDS):
        s = iw.acquire(r)
        tl.store(tle.gpu.local_ptr(s.b), tl.load(b_ptr + r * BN + tl.arange(0, BN)))
        iw.commit(r)
        for p in range(NP):
            t = w.acquire(r * NP + p)
            tl.store(tle.gpu.local_ptr(t.t), tl.load(x_ptr + (r * NP + p) * BM * BN + offs))
            w.commit(r * NP + p)


def drain(item, kv, y_ptr, ROUNDS, NP):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    ir = item.reader()
    rd = kv.reader()
    for r in range(ROUNDS):
        ires = ir.wait(r)
        acc = tl.zeros([BM, BN], tl.int32)
        for p in range(NP):
            res = rd.wait(r * NP + p)
            acc += tl.load(tle.gpu.local_ptr(res.slot.t))
            if p > 0:
                rd.release(r * NP + p - 1)
        if NP > 0:
            rd.release(r * NP + NP - 1)
        b = tl.load(tle.gpu.local_ptr(ires.slot.b))
        ir.release(r)
        tl.store(y_ptr + r * BM * BN + offs, acc + b[None, :])
''' + _sig(x_ptr="*i32", b_ptr="*i32", y_ptr="*i32", ROUNDS="i32", NP="constexpr=2")
CONSTEXPRS["persistent"] = [{"NP": 1}, {"NP": 2}, {"NP": 3}]


# 12. Pipelined wgmma (P·V in flight across the back-edge) on a capacity-3 kv ring released two
#     tiles late, an if/else without wgmma in the loop, trailing releases after it.
PIPELINED_HEAD = '''
import triton.language as tl

import tle_compiler as tle

BM = tl.constexpr(64)
BN = tl.constexpr(64)
D = tl.constexpr(64)
'''
KERNELS["pipelined_c3"] = PIPELINED_HEAD + '''

@tle.jit(num_warps=4, wgmma_pipeline=True)
def pipelined_c3(q_ptr, k_ptr, v_ptr, o_ptr, NT):
    q = tle.pipe(capacity=1, one_shot=True, q=tle.gpu.alloc([1, BM, D], tl.bfloat16))
    kv = tle.pipe(capacity=3,
                  k=tle.gpu.alloc([3, BN, D], tl.bfloat16),
                  v=tle.gpu.alloc([3, BN, D], tl.bfloat16))
    tle.gpu.warp_specialize([(loader, (q, kv, q_ptr, k_ptr, v_ptr, NT)),
                             (attend, (q, kv, o_ptr, NT))],
                            [4], [232])


def loader(q, kv, q_ptr, k_ptr, v_ptr, NT):
    tile = tl.arange(0, BN)[:, None] * D + tl.arange(0, D)[None, :]
    qw = q.writer()
    slot = qw.acquire(0)
    tl.store(tle.gpu.local_ptr(slot.q), tl.load(q_ptr + tile))
    qw.commit(0)
    w = kv.writer()
    for t in range(NT):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.k), tl.load(k_ptr + t * BN * D + tile))
        tl.store(tle.gpu.local_ptr(slot.v), tl.load(v_ptr + t * BN * D + tile))
        w.commit(t)


def attend(q, kv, o_ptr, NT):
    qr = q.reader()
    r = kv.reader()
    qres = qr.wait(0)
    m_i = tl.full([BM], float("-inf"), tl.float32)
    l_i = tl.zeros([BM], tl.float32)
    acc = tl.zeros([BM, D], tl.float32)
    for t in range(NT):
        res = r.wait(t)
        s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q)),
                   tl.trans(tl.load(tle.gpu.local_ptr(res.slot.k))))
        if t > 1:
            r.release(t - 2)
        if t % 2 == 0:
            m_new = tl.maximum(m_i, tl.max(s, 1))
        else:
            m_new = tl.maximum(m_i, tl.max(s, 1) + 0.0)
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
    out = acc / l_i[:, None]
    tl.store(o_ptr + tl.arange(0, BM)[:, None] * D + tl.arange(0, D)[None, :], out)


DEFAULT_CONFIG = {"signature": {"q_ptr": "*bf16", "k_ptr": "*bf16", "v_ptr": "*bf16",
                                "o_ptr": "*fp32", "NT": "i32"},
                  "constexprs": {}, "num_warps": 4, "grid": (1,)}
'''


# 13. cp.async gathers with a row mask into an fp16 slot on even tiles, register stores of the
#     same field on odd ones (a mixed arrive unit), the commit after the if/else.
KERNELS["gather_if_else"] = HEAD + '''
@tle.jit(num_warps=4)
def gather_if_else(x_ptr, idx_ptr, y_ptr, N, n_valid):
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, BM, BN], tl.float16))
    tle.gpu.warp_specialize([(fill, (p, x_ptr, idx_ptr, N, n_valid)), (drain, (p, y_ptr, N))],
                            [4], [232])


def fill(p, x_ptr, idx_ptr, N, n_valid):
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    w = p.writer()
    for i in range(N):
        src = tl.load(idx_ptr + i * BM + rows)
        ptrs = x_ptr + src[:, None] * BN + cols[None, :]
        s = w.acquire(i)
        if i % 2 == 0:
            tl.store(tle.gpu.local_ptr(s.t), tl.load(ptrs, mask=(rows < n_valid)[:, None]))
        else:
            tl.store(tle.gpu.local_ptr(s.t), tl.load(ptrs) * 2.0)
        w.commit(i)


def drain(p, y_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    r = p.reader()
    for i in range(N):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.t)).to(tl.float32)
        r.release(i)
        tl.store(y_ptr + i * BM * BN + offs, v)
''' + _sig(x_ptr="*fp16", idx_ptr="*i32", y_ptr="*fp32", N="i32", n_valid="i32")


def _ref_gather_if_else(x, idx, n, n_valid):
    import torch

    out = []
    for i in range(n):
        g = x[idx[i].long()].float()
        if i % 2 == 0:
            g[n_valid:] = 0
        else:
            g = (x[idx[i].long()] * 2.0).float()
        out.append(g)
    return torch.stack(out)


# 14. Names first bound in if/else branches around events: the result handle, the tile, the
#     column order used as cols[None, :] after the if.
KERNELS["branch_bound_names"] = HEAD + '''
@tle.jit(num_warps=4)
def branch_bound_names(x_ptr, y_ptr, N):
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, BM, BN], tl.float32))
    tle.gpu.warp_specialize([(fill, (p, x_ptr, N)), (drain, (p, y_ptr, N))], [4], [232])


def fill(p, x_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    w = p.writer()
    for i in range(N):
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + i * BM * BN + offs))
        w.commit(i)


def drain(p, y_ptr, N):
    rows = tl.arange(0, BM)
    r = p.reader()
    for i in range(N):
        if i % 2 == 0:
            res = r.wait(i)
            v = tl.load(tle.gpu.local_ptr(res.slot.t))
            r.release(i)
            cols = tl.arange(0, BN)
            bias = tl.zeros([BN], tl.float32)
        else:
            res = r.wait(i)
            v = tl.load(tle.gpu.local_ptr(res.slot.t)) * 2.0
            cols = (BN - 1) - tl.arange(0, BN)
            bias = tl.full([BN], 1.0, tl.float32)
            r.release(i)
        tl.store(y_ptr + i * BM * BN + rows[:, None] * BN + cols[None, :], v + bias[None, :])
''' + _sig(x_ptr="*fp32", y_ptr="*fp32", N="i32")


def _ref_branch_bound_names(x, n):
    y = x.clone()
    for i in range(n):
        y[i] = x[i] if i % 2 == 0 else (x[i] * 2.0 + 1.0).flip(1)
    return y


# 15. Three partitions in a chain: the middle one reads a and writes b under an if/else (two
#     fills, releases before and after the commit), a one-shot pipe from the first to the last.
KERNELS["chain_if_else"] = HEAD + '''
@tle.jit(num_warps=4)
def chain_if_else(x_ptr, s_ptr, y_ptr, N):
    a = tle.pipe(capacity=2, t=tle.gpu.alloc([2, BM, BN], tl.int32))
    b = tle.pipe(capacity=1, t=tle.gpu.alloc([1, BM, BN], tl.int32))
    sc = tle.pipe(capacity=1, one_shot=True, s=tle.gpu.alloc([1, BN], tl.int32))
    tle.gpu.warp_specialize([(first, (a, sc, x_ptr, s_ptr, N)), (middle, (a, b, N)),
                             (last, (b, sc, y_ptr, N))], [4, 4], [160, 160])


def first(a, sc, x_ptr, s_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    sw = sc.writer()
    ss = sw.acquire(0)
    tl.store(tle.gpu.local_ptr(ss.s), tl.load(s_ptr + tl.arange(0, BN)))
    sw.commit(0)
    w = a.writer()
    for i in range(N):
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + i * BM * BN + offs))
        w.commit(i)


def middle(a, b, N):
    r = a.reader()
    w = b.writer()
    for i in range(N):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.t))
        if i % 2 == 0:
            r.release(i)
            s = w.acquire(i)
            tl.store(tle.gpu.local_ptr(s.t), v + 10)
            w.commit(i)
        else:
            s = w.acquire(i)
            tl.store(tle.gpu.local_ptr(s.t), v - 10)
            w.commit(i)
            r.release(i)


def last(b, sc, y_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    sr = sc.reader()
    sres = sr.wait(0)
    scale = tl.load(tle.gpu.local_ptr(sres.slot.s))
    r = b.reader()
    for i in range(N):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.t))
        tl.store(y_ptr + i * BM * BN + offs, v * scale[None, :])
        r.release(i)
''' + _sig(x_ptr="*i32", s_ptr="*i32", y_ptr="*i32", N="i32")


# 16. A static_range inner loop with events (two tiles per outer iteration, index 2 i + j) read
#     by a runtime inner loop, the releases one tile late in an if without else plus a trailing
#     one.
KERNELS["static_inner"] = HEAD + '''
@tle.jit(num_warps=4)
def static_inner(x_ptr, y_ptr, N):
    p = tle.pipe(capacity=3, t=tle.gpu.alloc([3, BM, BN], tl.int32))
    tle.gpu.warp_specialize([(fill, (p, x_ptr, N)), (drain, (p, y_ptr, N))], [4], [232])


def fill(p, x_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    w = p.writer()
    for i in range(N):
        for j in tl.static_range(2):
            s = w.acquire(2 * i + j)
            tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + (2 * i + j) * BM * BN + offs) + j)
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
''' + _sig(x_ptr="*i32", y_ptr="*i32", N="i32")


# 17. close under an if: the writer closes at index N after its tiles, the reader counts what is
#     not closed and releases the last slot in a separate branch.
KERNELS["close_if"] = HEAD + '''
@tle.jit(num_warps=4)
def close_if(x_ptr, y_ptr, f_ptr, N):
    tle.assume(N >= 0)
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, BM, BN], tl.int32))
    tle.gpu.warp_specialize([(fill, (p, x_ptr, N)), (drain, (p, y_ptr, f_ptr, N))], [4], [232])


def fill(p, x_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    w = p.writer()
    for i in range(N + 1):
        if i < N:
            s = w.acquire(i)
            tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + i * BM * BN + offs))
            w.commit(i)
        else:
            w.close(i)


def drain(p, y_ptr, f_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    lane = tl.arange(0, BN)
    r = p.reader()
    for i in range(N + 1):
        res = r.wait(i)
        closed = tl.where(res.is_closed, tl.full([BN], 1, tl.int32), tl.zeros([BN], tl.int32))
        tl.store(f_ptr + i * BN + lane, closed)
        if i < N:
            tl.store(y_ptr + i * BM * BN + offs, tl.load(tle.gpu.local_ptr(res.slot.t)))
            r.release(i)
        else:
            r.release(i)
''' + _sig(x_ptr="*i32", y_ptr="*i32", f_ptr="*i32", N="i32")


# 18. Helpers taking a tuple of a handle and a runtime value (a tuple literal and a name holding
#     one), unpacked in the helper, keyword and default arguments, a tuple returned; the release
#     in the helper under an `if` on its parameters.
KERNELS["helper_tuple_arg"] = HEAD + '''
def put(w, x_ptr, i, scale=1, shift=0):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    s = w.acquire(i + shift)
    tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + (i + shift) * BM * BN + offs) * scale)
    w.commit(i + shift)


def take(handles, y_ptr, i, lag=0):
    r, k = handles
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    res = r.wait(i)
    tl.store(y_ptr + i * BM * BN + offs, tl.load(tle.gpu.local_ptr(res.slot.t)) + k)
    if i >= lag:
        r.release(i - lag)
    return res, i + 1


@tle.jit(num_warps=4)
def helper_tuple_arg(x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, BM, BN], tl.int32))
    tle.gpu.warp_specialize([(fill, (p, x_ptr, N)), (drain, (p, y_ptr, N))], [4], [232])


def fill(p, x_ptr, N):
    w = p.writer()
    put(w, x_ptr, 0, 3)
    for j in range(N):
        put(shift=1, i=j, x_ptr=x_ptr, w=w)


def drain(p, y_ptr, N):
    r = p.reader()
    res, nxt = take((r, 7), y_ptr, 0, 1)
    for i in range(N):
        res, nxt = take((r, 0), y_ptr, i + 1, lag=1)
    r.release(N)
''' + _sig(x_ptr="*i32", y_ptr="*i32", N="i32")

# 19. Pipelined wgmma whose delayed release has an `else` that computes (not a release-only
#     `if`): the carried P·V retired on the releasing path only.
KERNELS["pipelined_release_else"] = PIPELINED_HEAD + '''
@tle.jit(num_warps=4, wgmma_pipeline=True)
def pipelined_release_else(q_ptr, k_ptr, v_ptr, o_ptr, NT):
    q = tle.pipe(capacity=1, one_shot=True, q=tle.gpu.alloc([1, BM, D], tl.bfloat16))
    kv = tle.pipe(capacity=3,
                  k=tle.gpu.alloc([3, BN, D], tl.bfloat16),
                  v=tle.gpu.alloc([3, BN, D], tl.bfloat16))
    tle.gpu.warp_specialize([(loader, (q, kv, q_ptr, k_ptr, v_ptr, NT)),
                             (attend, (q, kv, o_ptr, NT))],
                            [4], [232])


def loader(q, kv, q_ptr, k_ptr, v_ptr, NT):
    tile = tl.arange(0, BN)[:, None] * D + tl.arange(0, D)[None, :]
    qw = q.writer()
    slot = qw.acquire(0)
    tl.store(tle.gpu.local_ptr(slot.q), tl.load(q_ptr + tile))
    qw.commit(0)
    w = kv.writer()
    for t in range(NT):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.k), tl.load(k_ptr + t * BN * D + tile))
        tl.store(tle.gpu.local_ptr(slot.v), tl.load(v_ptr + t * BN * D + tile))
        w.commit(t)


def attend(q, kv, o_ptr, NT):
    qr = q.reader()
    r = kv.reader()
    qres = qr.wait(0)
    m_i = tl.full([BM], float("-inf"), tl.float32)
    l_i = tl.zeros([BM], tl.float32)
    acc = tl.zeros([BM, D], tl.float32)
    for t in range(NT):
        res = r.wait(t)
        s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q)),
                   tl.trans(tl.load(tle.gpu.local_ptr(res.slot.k))))
        if t > 1:
            r.release(t - 2)
        else:
            l_i = l_i * 1.0
        if t % 2 == 0:
            m_new = tl.maximum(m_i, tl.max(s, 1))
        else:
            m_new = tl.maximum(m_i, tl.max(s, 1) + 0.0)
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
    out = acc / l_i[:, None]
    tl.store(o_ptr + tl.arange(0, BM)[:, None] * D + tl.arange(0, D)[None, :], out)
''' + _sig(q_ptr="*bf16", k_ptr="*bf16", v_ptr="*bf16", o_ptr="*fp32", NT="i32")

# 20. Two readers with different views: one group gathered by cp.async (both readers), one
#     register-stored (one reader), so the commit arrives per thread on one array and once on
#     the other; the second reader releases late.
KERNELS["reader_views_mixed"] = HEAD + '''
@tle.jit(num_warps=4)
def reader_views_mixed(x_ptr, h_ptr, y_ptr, z_ptr, N):
    p = tle.pipe(capacity=2, readers=("a", "b"), g=tle.gpu.alloc([2, BM, BN], tl.float16),
                 r=tle.gpu.alloc([2, BM, BN], tl.float32))
    tle.gpu.warp_specialize([(fill, (p, x_ptr, h_ptr, N)),
                             (ra_part, (p.reader("a", fields=("g",)), y_ptr, N)),
                             (rb_part, (p.reader("b"), z_ptr, N))], [4, 4], [160, 160])


def fill(p, x_ptr, h_ptr, N):
    rows = tl.arange(0, BM)
    offs = rows[:, None] * BN + tl.arange(0, BN)[None, :]
    w = p.writer()
    for i in range(N):
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.g), tl.load(h_ptr + i * BM * BN + offs))
        tl.store(tle.gpu.local_ptr(s.r), tl.load(x_ptr + i * BM * BN + offs) * 2.0)
        w.commit(i)


def ra_part(r, y_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    for i in range(N):
        res = r.wait(i)
        tl.store(y_ptr + i * BM * BN + offs, tl.load(tle.gpu.local_ptr(res.slot.g)).to(tl.float32))
        r.release(i)


def rb_part(r, z_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    for i in range(N):
        res = r.wait(i)
        v = (tl.load(tle.gpu.local_ptr(res.slot.r))
             + tl.load(tle.gpu.local_ptr(res.slot.g)).to(tl.float32))
        if i > 0:
            r.release(i - 1)
        tl.store(z_ptr + i * BM * BN + offs, v)
    if N > 0:
        r.release(N - 1)
''' + _sig(x_ptr="*fp32", h_ptr="*fp16", y_ptr="*fp32", z_ptr="*fp32", N="i32")

# 21. Both reader names of a pipe in one partition (one with a field view), released in the
#     other order than waited.
KERNELS["two_names_one_partition"] = HEAD + '''
@tle.jit(num_warps=4)
def two_names_one_partition(x_ptr, y_ptr, N):
    p = tle.pipe(capacity=2, readers=("a", "b"), t=tle.gpu.alloc([2, BM, BN], tl.int32),
                 u=tle.gpu.alloc([2, BM, BN], tl.float16))
    tle.gpu.warp_specialize([(fill, (p, x_ptr, N)), (drain, (p, y_ptr, N))], [4], [232])


def fill(p, x_ptr, N):
    rows = tl.arange(0, BM)
    offs = rows[:, None] * BN + tl.arange(0, BN)[None, :]
    w = p.writer()
    for i in range(N):
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + i * BM * BN + offs))
        tl.store(tle.gpu.local_ptr(s.u), tl.load(x_ptr + i * BM * BN + offs).to(tl.float16))
        w.commit(i)


def drain(p, y_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    ra = p.reader("a")
    rb = p.reader("b", fields=("u",))
    for i in range(N):
        a = ra.wait(i)
        b = rb.wait(i)
        v = tl.load(tle.gpu.local_ptr(a.slot.t)) + tl.load(tle.gpu.local_ptr(b.slot.u)).to(tl.int32)
        rb.release(i)
        ra.release(i)
        tl.store(y_ptr + i * BM * BN + offs, v)
''' + _sig(x_ptr="*i32", y_ptr="*i32", N="i32")

# 22. A 2-warp worker gathers by cp.async into an mbarrier pipe, reads the slot back under two
#     `if`s (one of them after a named-barrier wait it releases at once), while it reads a named
#     pipe written by the 4-warp default partition; the last named slot waited after the loop.
KERNELS["named_gather_2warps"] = HEAD + '''
@tle.jit(num_warps=4)
def named_gather_2warps(x_ptr, idx_ptr, y_ptr, N):
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, BM, BN], tl.float16))
    x = tle.pipe(capacity=1, barrier="named", m=tle.gpu.alloc([1, BN], tl.float32))
    tle.gpu.warp_specialize([(drain, (p, x, y_ptr, N)), (fill, (p, x, x_ptr, idx_ptr, N))],
                            [2], [232])


def fill(p, x, x_ptr, idx_ptr, N):
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    w = p.writer()
    rx = x.reader()
    for i in range(N):
        src = tl.load(idx_ptr + i * BM + rows)
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + src[:, None] * BN + cols[None, :]))
        if i % 2 == 0:
            v = tl.load(tle.gpu.local_ptr(s.t))
            tl.store(tle.gpu.local_ptr(s.t), v * 2.0)
        if i > 0:
            res = rx.wait(i - 1)
            m = tl.load(tle.gpu.local_ptr(res.slot.m))
            rx.release(i - 1)
            v2 = tl.load(tle.gpu.local_ptr(s.t))
            tl.store(tle.gpu.local_ptr(s.t), v2 + m[None, :].to(tl.float16))
        w.commit(i)
    if N > 0:
        res = rx.wait(N - 1)
        rx.release(N - 1)


def drain(p, x, y_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    r = p.reader()
    wx = x.writer()
    for i in range(N):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.t)).to(tl.float32)
        r.release(i)
        sx = wx.acquire(i)
        tl.store(tle.gpu.local_ptr(sx.m), tl.max(v, 0))
        wx.commit(i)
        tl.store(y_ptr + i * BM * BN + offs, v)
''' + _sig(x_ptr="*fp16", idx_ptr="*i32", y_ptr="*fp32", N="i32")

# 23. A pipelined persistent GEMM: ROUNDS x NP tiles at r * NP + p, the accumulator's wgmma in
#     flight across the inner back-edge, the previous tile released under `if r * NP + p > 0`
#     (across the round boundary), the last one after both loops.
KERNELS["pipelined_persistent_gemm"] = HEAD + '''
D = tl.constexpr(64)


@tle.jit(num_warps=4, wgmma_pipeline=True)
def pipelined_persistent_gemm(a_ptr, b_ptr, c_ptr, ROUNDS, NP: tl.constexpr):
    kv = tle.pipe(capacity=2, a=tle.gpu.alloc([2, 64, D], tl.bfloat16),
                  b=tle.gpu.alloc([2, D, D], tl.bfloat16))
    tle.gpu.warp_specialize([(loader, (kv, a_ptr, b_ptr, ROUNDS, NP)),
                             (mma, (kv, c_ptr, ROUNDS, NP))], [4], [232])


def loader(kv, a_ptr, b_ptr, ROUNDS, NP: tl.constexpr):
    tile = tl.arange(0, 64)[:, None] * D + tl.arange(0, D)[None, :]
    w = kv.writer()
    for r in range(ROUNDS):
        for p in range(NP):
            s = w.acquire(r * NP + p)
            tl.store(tle.gpu.local_ptr(s.a), tl.load(a_ptr + (r * NP + p) * 64 * D + tile))
            tl.store(tle.gpu.local_ptr(s.b), tl.load(b_ptr + (r * NP + p) * D * D + tile))
            w.commit(r * NP + p)


def mma(kv, c_ptr, ROUNDS, NP: tl.constexpr):
    rd = kv.reader()
    for r in range(ROUNDS):
        acc = tl.zeros([64, D], tl.float32)
        for p in range(NP):
            res = rd.wait(r * NP + p)
            if r * NP + p > 0:
                rd.release(r * NP + p - 1)
            acc = tl.dot(tl.load(tle.gpu.local_ptr(res.slot.a)),
                         tl.load(tle.gpu.local_ptr(res.slot.b)), acc)
        tl.store(c_ptr + r * 64 * D + tl.arange(0, 64)[:, None] * D + tl.arange(0, D)[None, :], acc)
    if ROUNDS > 0:
        rd.release(ROUNDS * NP - 1)
''' + _sig(a_ptr="*bf16", b_ptr="*bf16", c_ptr="*fp32", ROUNDS="i32", NP="constexpr=2")
CONSTEXPRS["pipelined_persistent_gemm"] = [{"NP": 1}, {"NP": 2}, {"NP": 3}]

# 24. Events under an `if` on a param alone (no loop), a loop over tl.range(1, N) with index
#     i - 1, the reader's loop over range(N - 1) and its param `if` after the loop.
KERNELS["param_if_range_start"] = HEAD + '''
@tle.jit(num_warps=4)
def param_if_range_start(x_ptr, y_ptr, N):
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, BM, BN], tl.int32))
    extra = tle.pipe(capacity=1, t=tle.gpu.alloc([1, BM, BN], tl.int32))
    tle.gpu.warp_specialize([(fill, (p, extra, x_ptr, N)), (drain, (p, extra, y_ptr, N))],
                            [4], [232])


def fill(p, extra, x_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    w = p.writer()
    we = extra.writer()
    if N > 2:
        s = we.acquire(0)
        tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + offs) * 3)
        we.commit(0)
    for i in tl.range(1, N):
        s = w.acquire(i - 1)
        tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + i * BM * BN + offs))
        w.commit(i - 1)


def drain(p, extra, y_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    r = p.reader()
    re = extra.reader()
    for i in range(N - 1):
        res = r.wait(i)
        tl.store(y_ptr + (i + 1) * BM * BN + offs, tl.load(tle.gpu.local_ptr(res.slot.t)))
        r.release(i)
    if N >= 3:
        res = re.wait(0)
        tl.store(y_ptr + offs, tl.load(tle.gpu.local_ptr(res.slot.t)))
        re.release(0)
''' + _sig(x_ptr="*i32", y_ptr="*i32", N="i32")


# 25. A helper taking a nested tuple ((handle, runtime value), index), waiting inside and
#     returning the result handle with a tile; the caller reads the slot again and releases it.
KERNELS["helper_nested_tuple"] = HEAD + '''
def get(args):
    rk, i = args
    r, k = rk
    res = r.wait(i)
    return res, tl.load(tle.gpu.local_ptr(res.slot.t)) + k


@tle.jit(num_warps=4)
def helper_nested_tuple(x_ptr, y_ptr, N):
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, BM, BN], tl.int32))
    tle.gpu.warp_specialize([(fill, (p, x_ptr, N)), (drain, (p, y_ptr, N))], [4], [232])


def fill(p, x_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    w = p.writer()
    for i in range(N):
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + i * BM * BN + offs))
        w.commit(i)


def drain(p, y_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    r = p.reader()
    for i in range(N):
        res, v = get(((r, i % 3), i))
        v2 = tl.load(tle.gpu.local_ptr(res.slot.t))
        r.release(i)
        tl.store(y_ptr + i * BM * BN + offs, v + v2)
''' + _sig(x_ptr="*i32", y_ptr="*i32", N="i32")


# 26. Nested tuples as partition arguments: the writer gets ((pipe, (x_ptr, N)), 3) and unpacks
#     it a level a statement (Triton 3.6 refuses a nested target), the reader gets (y_ptr, (pipe, N + 1)) and indexes it; a constant item
#     (3, folded into the fill) rides along with runtime items at every depth.
KERNELS["tuple_arg_nested"] = HEAD + '''
@tle.jit(num_warps=4)
def tuple_arg_nested(x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, BM, BN], tl.int32))
    tle.gpu.warp_specialize([(fill, (((p, (x_ptr, N)), 3),)),
                             (drain, ((y_ptr, (p, N + 1)),))], [4], [232])


def fill(args):
    inner, k = args
    p, xn = inner
    x_ptr, n = xn
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    w = p.writer()
    for i in range(n + 1):
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + i * BM * BN + offs) * k)
        w.commit(i)


def drain(args):
    y_ptr = args[0]
    r = args[1][0].reader()
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    for i in range(args[1][1]):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.t))
        r.release(i)
        tl.store(y_ptr + i * BM * BN + offs, v + i)
''' + _sig(x_ptr="*i32", y_ptr="*i32", N="i32")


def _ref_tuple_arg_nested(x, n):
    y = x.clone()
    for i in range(n + 1):
        y[i] = x[i] * 3 + i
    return y


# 27. A tuple holding pipe handles (a writer made in the kernel body, a reader) and a runtime
#     int: the partitions take (handle, N) pairs, one passes its pair on to a helper whole.
KERNELS["tuple_arg_handles"] = HEAD + '''
def put_all(args, x_ptr):
    w, n = args
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    for i in range(n):
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + i * BM * BN + offs) - 5)
        w.commit(i)


@tle.jit(num_warps=4)
def tuple_arg_handles(x_ptr, y_ptr, N):
    p = tle.pipe(capacity=3, t=tle.gpu.alloc([3, BM, BN], tl.int32))
    tle.gpu.warp_specialize([(fill, ((p.writer(), N), x_ptr)),
                             (drain, ((p.reader(), N), y_ptr))], [4], [232])


def fill(wn, x_ptr):
    put_all(wn, x_ptr)


def drain(rn, y_ptr):
    r, n = rn
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    for i in range(n):
        res = r.wait(i)
        tl.store(y_ptr + i * BM * BN + offs, tl.load(tle.gpu.local_ptr(res.slot.t)))
        r.release(i)
''' + _sig(x_ptr="*i32", y_ptr="*i32", N="i32")


def _ref_tuple_arg_handles(x, n):
    y = x.clone()
    for i in range(n):
        y[i] = x[i] - 5
    return y


# 28. A tuple indexed in the partition with constexprs: a module constant and a partition
#     argument bound to a literal (annotated tl.constexpr), with arithmetic on them, pick the
#     pipe, the pointer and the trip count out of one flat tuple.
KERNELS["tuple_arg_constexpr_index"] = HEAD + '''
PIPE = tl.constexpr(0)


@tle.jit(num_warps=4)
def tuple_arg_constexpr_index(x_ptr, y_ptr, N):
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, BM, BN], tl.int32))
    tle.gpu.warp_specialize([(fill, ((p, x_ptr, N, 7), 1)),
                             (drain, ((p, y_ptr, N, 7), 1))], [4], [232])


def fill(args, PTR: tl.constexpr):
    w = args[PIPE].writer()
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    for i in range(args[PTR + 1]):
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.t), tl.load(args[PTR] + i * BM * BN + offs) + args[-1])
        w.commit(i)


def drain(args, PTR: tl.constexpr):
    r = args[PIPE].reader()
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    for i in range(args[PTR + PIPE + 1]):
        res = r.wait(i)
        tl.store(args[PTR] + i * BM * BN + offs, tl.load(tle.gpu.local_ptr(res.slot.t)))
        r.release(i)
''' + _sig(x_ptr="*i32", y_ptr="*i32", N="i32")


def _ref_tuple_arg_constexpr_index(x, n):
    y = x.clone()
    for i in range(n):
        y[i] = x[i] + 7
    return y


# 29. A tuple unpacked in the partition into names the loop then rebinds (the tuple's runtime
#     item is the loop's start), and a one-item tuple.
KERNELS["tuple_arg_unpacked"] = HEAD + '''
@tle.jit(num_warps=4)
def tuple_arg_unpacked(x_ptr, y_ptr, N):
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, BM, BN], tl.int32))
    tle.gpu.warp_specialize([(fill, ((p, x_ptr, 0, N),)),
                             (drain, ((p,), (y_ptr, N)))], [4], [232])


def fill(args):
    p, ptr, lo, hi = args
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    w = p.writer()
    for i in range(lo, hi):
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.t), tl.load(ptr + i * BM * BN + offs))
        w.commit(i)
        ptr = ptr + 0


def drain(one, rest):
    (p,) = one
    y_ptr, n = rest
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    r = p.reader()
    for i in range(n):
        res = r.wait(i)
        tl.store(y_ptr + i * BM * BN + offs, tl.load(tle.gpu.local_ptr(res.slot.t)) * 2)
        r.release(i)
''' + _sig(x_ptr="*i32", y_ptr="*i32", N="i32")


def _ref_tuple_arg_unpacked(x, n):
    y = x.clone()
    for i in range(n):
        y[i] = x[i] * 2
    return y


# 30. A scalar the kernel body reduces from a tensor, passed in a tuple and as an expression
#     evaluated in the call (`tl.sum(tl.arange(0, 4), 0)`: 6): its lines go in the prologue.
KERNELS["tuple_arg_reduced"] = HEAD + '''
@tle.jit(num_warps=4)
def tuple_arg_reduced(x_ptr, y_ptr, N):
    six = tl.sum(tl.arange(0, 4), 0)
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, BM, BN], tl.int32))
    tle.gpu.warp_specialize([(fill, ((p, x_ptr, six), N)),
                             (drain, ((p, y_ptr), tl.max(tl.arange(0, 8), 0), N))], [4], [232])


def fill(args, N):
    p, x_ptr, k = args
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    w = p.writer()
    for i in range(N):
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + i * BM * BN + offs) + k)
        w.commit(i)


def drain(args, seven, N):
    p, y_ptr = args
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    r = p.reader()
    for i in range(N):
        res = r.wait(i)
        tl.store(y_ptr + i * BM * BN + offs, tl.load(tle.gpu.local_ptr(res.slot.t)) * seven)
        r.release(i)
''' + _sig(x_ptr="*i32", y_ptr="*i32", N="i32")


def _ref_tuple_arg_reduced(x, n):
    y = x.clone()
    for i in range(n):
        y[i] = (x[i] + 6) * 7
    return y

# ------------------------------------------------------------------ the checks

NAMES = sorted(KERNELS)
SETTINGS = [(n, cx) for n in NAMES for cx in CONSTEXPRS.get(n, [{}])]
SETTING_IDS = [n + "".join(f"-{k}={v}" for k, v in cx.items()) for n, cx in SETTINGS]


def _write(tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(KERNELS[name])
    return path


def _config(path: Path, name: str, cx: dict) -> dict:
    from tle_compiler.lowering.dumping import default_config

    config = default_config(str(path), name)
    return dict(config, constexprs=dict(config["constexprs"], **cx))


@pytest.mark.parametrize("name,cx", SETTINGS, ids=SETTING_IDS)
def test_tle_dump_verifies(name, cx, tmp_path):
    from tle_compiler.cli.dump import main

    path = _write(tmp_path, name)
    for fixed in FIXED.get(name, [{}]):
        flags = [f"--param={k}={v}" for k, v in {**_config(path, name, cx)["constexprs"],
                                                  **fixed}.items()]
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = main(["--graph", *flags, str(path)])
        text = out.getvalue() + err.getvalue()
        assert rc == 0 and f"{name}: verified for every value" in text, text


@pytest.mark.parametrize("name,cx", SETTINGS, ids=SETTING_IDS)
def test_compiles_for_sm90a(name, cx, tmp_path):
    from tle_compiler.frontend import read_kernels
    from tle_compiler.lowering import compile_kernel

    path = _write(tmp_path, name)
    config = _config(path, name, cx)
    info = next(i for i in read_kernels(str(path), name=name, bind=config["constexprs"]))
    c = compile_kernel(info, config["signature"], config["constexprs"], num_warps=4)
    assert ".target sm_90a" in c.asm["ptx"] and c.asm["cubin"]


@pytest.mark.parametrize("name,cx", SETTINGS, ids=SETTING_IDS)
def test_generated_barrier_operations_are_the_verified_events(name, cx, tmp_path):
    path = _write(tmp_path, name)
    runs = Runs(path, name, _config(path, name, cx))
    grid = param_grid(runs.base.program)
    assert len(grid) >= 3
    problems = []
    for values in grid:
        problems += runs.check(values)
    assert not problems, "\n".join(problems)


# ------------------------------------------------------------------ emulated results

def _tiles(n: int, seed: int, dtype=None):
    import torch

    g = torch.Generator().manual_seed(seed)
    return torch.randint(-50, 50, (max(n, 1), 32, 64), generator=g, dtype=torch.int32)


def _emulated(tmp_path: Path, name: str):
    from tle_compiler.testing.emulator import load_kernel_module

    return getattr(load_kernel_module(_write(tmp_path, name)), name)


def _run_copy_kernel(tmp_path, name, n, ref):
    """A kernel (x_ptr, y_ptr, N) over int32 [N, 32, 64] tiles: y == ref(x, n) on the N tiles."""
    import torch

    x = _tiles(n + 1, n)
    y = torch.full_like(x, -999)
    _emulated(tmp_path, name)[(1,)](x, y, n)
    rows = n + 1 if name in ("helpers_twice", "tuple_arg_nested") else n
    assert torch.equal(y[:rows], ref(x, n)[:rows])
    assert (y[rows:] == -999).all()


COPY_REFS = {"if_else_events": _ref_if_else_events, "helpers_twice": _ref_helpers_twice,
             "delayed_two_back": _ref_delayed_two_back, "ring_c1": _ref_ring, "ring_c2": _ref_ring,
             "ring_c3": _ref_ring, "tuple_arg_nested": _ref_tuple_arg_nested,
             "tuple_arg_handles": _ref_tuple_arg_handles,
             "tuple_arg_constexpr_index": _ref_tuple_arg_constexpr_index,
             "tuple_arg_unpacked": _ref_tuple_arg_unpacked,
             "tuple_arg_reduced": _ref_tuple_arg_reduced}


@pytest.mark.parametrize("n", [0, 1, 2, 5])
@pytest.mark.parametrize("name", sorted(COPY_REFS))
def test_emulated_copy_kernels(name, n, tmp_path):
    pytest.importorskip("torch")
    _run_copy_kernel(tmp_path, name, n, COPY_REFS[name])


@pytest.mark.parametrize("n,m", [(0, 0), (3, 0), (3, 2), (4, 9)])
def test_emulated_if_on_param(n, m, tmp_path):
    torch = pytest.importorskip("torch")
    x = _tiles(n, 1)
    y = torch.full_like(x, -999)
    _emulated(tmp_path, "if_on_param")[(1,)](x, y, n, m)
    assert torch.equal(y[:n], _ref_if_on_param(x, n, m)[:n])


@pytest.mark.parametrize("no,ni", [(0, 2), (1, 1), (2, 3), (3, 2)])
def test_emulated_nested_loops(no, ni, tmp_path):
    torch = pytest.importorskip("torch")
    x = _tiles(no * ni, 2)
    h = torch.arange(max(no, 1) * 64, dtype=torch.int32).reshape(-1, 64)
    y = torch.full_like(x, -999)
    _emulated(tmp_path, "nested_loops")[(1,)](x, h, y, no, ni)
    ref = torch.stack([x[o * ni + i] + h[o][None, :] for o in range(no) for i in range(ni)]) \
        if no * ni else x[:0]
    assert torch.equal(y[:no * ni], ref)


@pytest.mark.parametrize("n", [0, 1, 4])
def test_emulated_two_readers(n, tmp_path):
    torch = pytest.importorskip("torch")
    x = _tiles(n, 3)
    y, z = torch.full_like(x, -999), torch.full_like(x, -999)
    _emulated(tmp_path, "two_readers")[(1,)](x, y, z, n)
    for i in range(n):
        assert torch.equal(y[i], x[i] * 6 if i % 2 == 1 else x[i])
        assert torch.equal(z[i], x[i] * 5)


@pytest.mark.parametrize("n", [0, 1, 4])
def test_emulated_named_if_else(n, tmp_path):
    torch = pytest.importorskip("torch")
    x = _tiles(n, 4).float()
    y, z = torch.full_like(x, -999.0), torch.full((max(n, 1), 64), -999.0)
    _emulated(tmp_path, "named_if_else")[(1,)](x, y, z, n)
    for t in range(n):
        assert torch.equal(y[t], x[t] + 1.0 if t % 2 == 0 else x[t] * 2.0)
        assert torch.equal(z[t], x[t].sum(0) if t % 2 == 0 else x[t].max(0).values)


@pytest.mark.parametrize("rounds,np_", [(0, 2), (1, 1), (2, 3), (3, 2)])
def test_emulated_persistent(rounds, np_, tmp_path):
    torch = pytest.importorskip("torch")
    x = _tiles(rounds * np_, 5)
    b = torch.arange(max(rounds, 1) * 64, dtype=torch.int32).reshape(-1, 64)
    y = torch.full((max(rounds, 1), 32, 64), -999, dtype=torch.int32)
    _emulated(tmp_path, "persistent")[(1,)](x, b, y, rounds, np_)
    for r in range(rounds):
        assert torch.equal(y[r], x[r * np_:(r + 1) * np_].sum(0) + b[r][None, :])


@pytest.mark.parametrize("nt", [1, 2, 5])
def test_emulated_pipelined_c3(nt, tmp_path):
    torch = pytest.importorskip("torch")
    g = torch.Generator().manual_seed(nt)
    q, k, v = (torch.randn(rows, 64, generator=g).bfloat16() for rows in (64, 64 * nt, 64 * nt))
    o = torch.full((64, 64), float("nan"))
    _emulated(tmp_path, "pipelined_c3")[(1,)](q, k, v, o, nt)
    ref = torch.softmax((q.float() @ k.float().T) * math.log(2.0), 1) @ v.float()  # exp2 weights
    assert torch.allclose(o, ref, atol=2e-2, rtol=2e-2)


@pytest.mark.parametrize("n,n_valid", [(0, 32), (1, 20), (3, 7), (4, 32)])
def test_emulated_gather_if_else(n, n_valid, tmp_path):
    torch = pytest.importorskip("torch")
    g = torch.Generator().manual_seed(n)
    x = torch.randn(100, 64, generator=g).half()
    idx = torch.randint(0, 100, (max(n, 1), 32), generator=g, dtype=torch.int32)
    y = torch.full((max(n, 1), 32, 64), float("nan"))
    _emulated(tmp_path, "gather_if_else")[(1,)](x, idx, y, n, n_valid)
    if n:
        assert torch.equal(y[:n], _ref_gather_if_else(x, idx, n, n_valid))


@pytest.mark.parametrize("n", [0, 1, 4])
def test_emulated_branch_bound_names(n, tmp_path):
    torch = pytest.importorskip("torch")
    x = _tiles(n, 6).float()
    y = torch.full_like(x, -999.0)
    _emulated(tmp_path, "branch_bound_names")[(1,)](x, y, n)
    assert torch.equal(y[:n], _ref_branch_bound_names(x, n)[:n])


@pytest.mark.parametrize("n", [0, 1, 4])
def test_emulated_chain_if_else(n, tmp_path):
    torch = pytest.importorskip("torch")
    x = _tiles(n, 7)
    s = torch.arange(64, dtype=torch.int32) % 5 - 2
    y = torch.full_like(x, -999)
    _emulated(tmp_path, "chain_if_else")[(1,)](x, s, y, n)
    for i in range(n):
        assert torch.equal(y[i], (x[i] + (10 if i % 2 == 0 else -10)) * s[None, :])


@pytest.mark.parametrize("n", [0, 1, 3])
def test_emulated_static_inner(n, tmp_path):
    torch = pytest.importorskip("torch")
    x = _tiles(2 * n, 8)
    y = torch.full_like(x, -999)
    _emulated(tmp_path, "static_inner")[(1,)](x, y, n)
    for k in range(2 * n):
        assert torch.equal(y[k], x[k] + k % 2)


@pytest.mark.parametrize("n", [0, 1, 3])
def test_emulated_close_if(n, tmp_path):
    torch = pytest.importorskip("torch")
    x = _tiles(n, 9)
    y = torch.full_like(x, -999)
    f = torch.full((n + 1, 64), -1, dtype=torch.int32)
    _emulated(tmp_path, "close_if")[(1,)](x, y, f, n)
    assert torch.equal(y[:n], x[:n])
    assert f[:n].eq(0).all() and f[n].eq(1).all()


@pytest.mark.parametrize("n", [0, 1, 3])
def test_emulated_helper_tuple_arg(n, tmp_path):
    torch = pytest.importorskip("torch")
    x = _tiles(n + 1, 10)
    y = torch.full_like(x, -999)
    _emulated(tmp_path, "helper_tuple_arg")[(1,)](x, y, n)
    assert torch.equal(y[0], x[0] * 3 + 7)
    assert torch.equal(y[1:n + 1], x[1:n + 1])


@pytest.mark.parametrize("nt", [1, 3])
def test_emulated_pipelined_release_else(nt, tmp_path):
    torch = pytest.importorskip("torch")
    g = torch.Generator().manual_seed(nt)
    q, k, v = (torch.randn(rows, 64, generator=g).bfloat16() for rows in (64, 64 * nt, 64 * nt))
    o = torch.full((64, 64), float("nan"))
    _emulated(tmp_path, "pipelined_release_else")[(1,)](q, k, v, o, nt)
    ref = torch.softmax((q.float() @ k.float().T) * math.log(2.0), 1) @ v.float()
    assert torch.allclose(o, ref, atol=2e-2, rtol=2e-2)


@pytest.mark.parametrize("n", [0, 1, 3])
def test_emulated_reader_views_mixed(n, tmp_path):
    torch = pytest.importorskip("torch")
    x = _tiles(n, 11).float()
    h = (_tiles(n, 12) % 16).half()
    y, z = torch.full_like(x, -999.0), torch.full_like(x, -999.0)
    _emulated(tmp_path, "reader_views_mixed")[(1,)](x, h, y, z, n)
    assert torch.equal(y[:n], h[:n].float())
    assert torch.equal(z[:n], x[:n] * 2.0 + h[:n].float())


@pytest.mark.parametrize("n", [0, 1, 3])
def test_emulated_two_names_one_partition(n, tmp_path):
    torch = pytest.importorskip("torch")
    x = _tiles(n, 13)
    y = torch.full_like(x, -999)
    _emulated(tmp_path, "two_names_one_partition")[(1,)](x, y, n)
    assert torch.equal(y[:n], x[:n] * 2)


@pytest.mark.parametrize("n", [0, 1, 3])
def test_emulated_named_gather_2warps(n, tmp_path):
    torch = pytest.importorskip("torch")
    g = torch.Generator().manual_seed(n)
    x = torch.randint(-8, 8, (100, 64), generator=g).half()
    idx = torch.randint(0, 100, (max(n, 1), 32), generator=g, dtype=torch.int32)
    y = torch.full((max(n, 1), 32, 64), float("nan"))
    _emulated(tmp_path, "named_gather_2warps")[(1,)](x, idx, y, n)
    prev = None
    for i in range(n):
        t = x[idx[i].long()].float() * (2.0 if i % 2 == 0 else 1.0)
        if i > 0:
            t = t + prev.max(0).values[None, :]
        assert torch.equal(y[i], t)
        prev = t


@pytest.mark.parametrize("rounds,np_", [(1, 1), (2, 2), (3, 3)])
def test_emulated_pipelined_persistent_gemm(rounds, np_, tmp_path):
    torch = pytest.importorskip("torch")
    g = torch.Generator().manual_seed(rounds)
    a = torch.randn(rounds * np_, 64, 64, generator=g).bfloat16()
    b = torch.randn(rounds * np_, 64, 64, generator=g).bfloat16()
    c = torch.full((rounds, 64, 64), float("nan"))
    _emulated(tmp_path, "pipelined_persistent_gemm")[(1,)](a, b, c, rounds, np_)
    ref = (a.float() @ b.float()).reshape(rounds, np_, 64, 64).sum(1)
    assert torch.allclose(c, ref, atol=1e-2, rtol=1e-2)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5])
def test_emulated_param_if_range_start(n, tmp_path):
    torch = pytest.importorskip("torch")
    x = _tiles(n, 14)
    y = torch.full_like(x, -999)
    _emulated(tmp_path, "param_if_range_start")[(1,)](x, y, n)
    assert torch.equal(y[1:n], x[1:n])
    if n >= 1:
        assert torch.equal(y[0], x[0] * 3 if n >= 3 else torch.full_like(x[0], -999))


def test_a_helper_tuple_parameter_with_a_runtime_item_is_bound(tmp_path):
    """A tuple holding a handle and a runtime value, passed to a helper (as a literal or a
    name) and unpacked there: the frontend binds the parameter, so its runtime item is read as
    `param[1]` from a name the kernel IR defines (before, the verifier proved the kernel and the
    lowering then failed with "name '_take<N>_handles' is not defined here")."""
    from tle_compiler.lowering import gluon_source

    src = gluon_source((str(_write(tmp_path, "helper_tuple_arg")), "helper_tuple_arg")).source
    drain = src.split("def drain(", 1)[1].split("@gluon.jit", 1)[0]
    assert "_k = 7" in drain and "_k = 0" in drain, drain


@pytest.mark.parametrize("n", [0, 1, 4])
def test_emulated_helper_nested_tuple(n, tmp_path):
    torch = pytest.importorskip("torch")
    x = _tiles(n, 15)
    y = torch.full_like(x, -999)
    _emulated(tmp_path, "helper_nested_tuple")[(1,)](x, y, n)
    for i in range(n):
        assert torch.equal(y[i], 2 * x[i] + i % 3)


def test_a_tuple_partition_argument_lowers(tmp_path):
    """`warp_specialize([(fill, ((p, x_ptr), N)), ...])` with `p, x_ptr = px` in the partition:
    verified by tle-dump and lowered with the tuple's runtime item as a parameter of its own
    (walks.bindings flattens it; before, the lowering refused a kernel tle-dump verifies)."""
    from tle_compiler.lowering import gluon_source

    src = KERNELS["helper_nested_tuple"].replace("(fill, (p, x_ptr, N))", "(fill, ((p, x_ptr), N))")
    src = src.replace("def fill(p, x_ptr, N):\n", "def fill(px, N):\n    p, x_ptr = px\n")
    assert "p, x_ptr = px" in src and "((p, x_ptr), N)" in src
    path = tmp_path / "tuple_arg.py"
    path.write_text(src)
    from tle_compiler.cli.dump import main

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main([str(path)]) == 0  # verified
    src = gluon_source((str(path), "helper_nested_tuple")).source
    fill = src.split("def fill(", 1)[1].split("@gluon.jit", 1)[0]
    assert fill.startswith("px_1, N, ") and "x_ptr = px_1" in fill, fill
    assert "helper_nested_tuple(x_ptr, y_ptr, N)" in src and "(fill, (x_ptr, N, " in src, src


# A tensor the kernel body computes cannot be a partition's argument (its layout spans the
# default partition's warps): the frontend refuses it at the argument, so tle-dump rejects the
# kernel instead of verifying one the lowering cannot compile (frontend/tensor_args.py).
TENSOR_ARGS = {
    "plain": ("(drain, (p, y_ptr, N))", "(drain, (p, y_ptr, N, tl.arange(0, 4)))",
              "def drain(p, y_ptr, N):", "def drain(p, y_ptr, N, t):",
              "argument t (`tl.arange(0, 4)`) is a rank-1 tensor"),
    "named_2d": ("(drain, (p, y_ptr, N))", "(drain, (p, y_ptr, N, z))",
                 "def drain(p, y_ptr, N):", "def drain(p, y_ptr, N, z):",
                 "argument z (`z`) is a rank-2 tensor"),
    "in_tuple": ("(drain, (p, y_ptr, N))", "(drain, (p, y_ptr, (N, (1, z[0, :][None, :]))))",
                 "def drain(p, y_ptr, N):", "def drain(p, y_ptr, nt):\n    N = nt[0]",
                 "argument nt[1][1]"),
    "name_of_tuple": ("(drain, (p, y_ptr, N))", "(drain, (p, y_ptr, N, both))",
                      "def drain(p, y_ptr, N):", "def drain(p, y_ptr, N, both):",
                      "argument both[1] (`tl.load(x_ptr + tl.arange(0, 4))`) is a rank-1 tensor"),
}


@pytest.mark.parametrize("form", sorted(TENSOR_ARGS))
def test_a_tensor_partition_argument_is_refused_before_verification(form, tmp_path):
    from tle_compiler.cli.dump import main

    call, new_call, head, new_head, message = TENSOR_ARGS[form]
    src = KERNELS["ring_c2"].replace(call, new_call).replace(head, new_head)
    src = src.replace("    tle.gpu.warp_specialize(",
                      "    z = tl.zeros([4, 4], tl.int32)\n"
                      "    both = (N, tl.load(x_ptr + tl.arange(0, 4)))\n"
                      "    tle.gpu.warp_specialize(", 1)
    assert new_call in src and new_head in src
    path = tmp_path / f"tensor_{form}.py"
    path.write_text(src)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        assert main([str(path)]) == 1
    text = out.getvalue()
    assert "partition 'drain': " + message in text and "[bad-warp-specialize]" in text, text
    assert "verified" not in text, text


def test_a_tuple_indexed_by_a_kernel_constexpr_is_read_specialised(tmp_path):
    """The kernel IR is read once for every value of the kernel's constexpr parameters, where
    `args[PTR]` with PTR one of them picks no item: the kernel is read specialised to PTR
    (DEFAULT_CONFIG's, or --param's), where the index folds as an index of a partition argument
    bound to a literal does (kernel tuple_arg_constexpr_index). Refused at its line until
    adversarial round 68 ("a tuple's index must be a constant"); PTR = 0 picks the pointer as
    a loop bound, which is refused."""
    from tle_compiler.cli.dump import main

    src = KERNELS["tuple_arg_constexpr_index"]
    src = src.replace("def tuple_arg_constexpr_index(x_ptr, y_ptr, N):",
                      "def tuple_arg_constexpr_index(x_ptr, y_ptr, N, PTR: tl.constexpr):")
    src = src.replace("(fill, ((p, x_ptr, N, 7), 1))", "(fill, ((p, x_ptr, N, 7), PTR))")
    src = src.replace('"N": "i32"}', '"N": "i32", "PTR": "constexpr"}') \
             .replace('"constexprs": {}', '"constexprs": {"PTR": 1}')
    assert "(fill, ((p, x_ptr, N, 7), PTR))" in src and '"PTR": 1' in src
    path = tmp_path / "cx_index.py"
    path.write_text(src)
    for flags, code in (([], 0), (["--param=PTR=1"], 0), (["--param=PTR=0"], 1)):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            assert main([*flags, str(path)]) == code, out.getvalue()
        text = out.getvalue()
        assert "a tuple's index must be a constant" not in text, text
        assert ("verified for" in text) is (code == 0), text
        if code == 0:
            assert "read specialised to PTR=1" in text, text
