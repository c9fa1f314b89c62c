"""A seventy-third adversarial round (adversarial round 73), from a new angle: realistic kernels as
a Triton author writes them with pipes, each correct version checked verified (and lowered by
``tle-dump --gluon``) and seeded-bug variants of each checked refused at the line of the bug.

Kernels tried (correct versions verified and lowered):

- a ping-pong GEMM: a TMA producer fills two rings, one per consumer warp group; consumer c
  takes tiles ``2 * p + c`` through a helper called from ``mma0`` / ``mma1``, the tile's row
  and column ``j // tl.cdiv(N, BN)`` / ``j % tl.cdiv(N, BN)``; STAGES, K and N constexprs;
- a persistent GEMM: tiles ``pid + i * num_programs``, the tile count ``tl.cdiv(n_tiles - pid,
  tl.num_programs(0))`` computed in the kernel body, index ``i * K_TILES + kk``;
- a FlashAttention-style forward: Q one-shot (its slot a dot operand for the whole loop), K and
  V rings of capacities KS = 3 and VS = 2, TMA-filled;
- a MoE-style gather: token ids loaded per tile, rows gathered by index into the slot beside an
  ids field, the trip count loaded from memory in the kernel body and passed to both partitions;
- a layernorm row pipeline of three partitions (loader, statistics, normaliser) over two pipes,
  the rows read by two named readers;
- a stream closed at a data-dependent end (``n`` loaded and clamped to ``[0, MAX_TILES]``), the
  consumer waiting ``0..n`` and reading under ``if not res.is_closed``;
- split-K: two partitions multiply halves of K into workspace slices and hand over a token each,
  a reduction partition waits both and sums the slices;
- two readers with field views (``fields=("k",)`` / ``("v",)``).

Seeded bugs, each refused at its line: both ping-pong consumers on one tile or on ``p + C``
(memory-race), a slot released before the dot that reads it, a wait off by one, V committed a
tile late with KS = 1 (deadlock; KS = 2 verified), Q released before its dots, V skipped at
j = 0, K released a tile late, the expert writing the x it gathers from, ids read after release,
a field written from tile 1 on, a reader one tile too many, the statistics read through global
memory, one reader name in two partitions, the statistics index ahead, an unclamped close
count, the closing slot read (unguarded or guard inverted), the flag read after release, the
close never waited, a K tile never released, a producer one tile more, a workspace slice read
before its token or stored after it, overlapping slices, a read outside a field view, a slot
pointer kept past its release, a field written on even tiles only, a tile skipped on data,
ping-pong readers on alternate tiles of one SPMC pipe, a stage number given as the index
(``t % 2``), a stage loop reusing indices 0 and 1 (phase-aliasing) and every third tile skipped.

False verdicts: none found.

False refusals, fixed:

- The ping-pong GEMM with N a constexpr (read specialised, N = 256): memory-race between the
  two consumers' stores of C (``c_ptr + 0``). Their tiles are apart: ``tl.cdiv(N, BN)`` is the
  number 2, but the memory-race model read a ``tl.cdiv`` (and a ``//`` / ``%`` / ``>>``) of
  numbers as a fresh quotient within one of the exact one (``|s - c q| < c``: 2 or 3), and
  ``j // q`` of a non-number divisor as an unknown, so two consumers' tiles could meet. FIXED:
  frontend/race_terms.py ``_binop`` and the ``tl.cdiv`` case of ``_op`` compute the value of a
  non-negative number by a positive one exactly (floor and truncation agree there): verified;
  both consumers on tile ``2 * p`` or on ``p + C`` stay memory-race.

Held (not changed):

- The same GEMM with N a runtime argument: memory-race between the consumers' stores ("partitions
  'mma0' (store at line 71 ...) and 'mma1' (store at line 71 ...) can reach the same global
  address `c_ptr` + 0"). The tile coordinates are ``j // tl.cdiv(N, BN)`` of a runtime N, a
  division by an unknown, which the model reads as any value; proving the tiles apart needs
  division by a symbol. A constexpr N is verified. (Lifted in round FR20: with ``M`` and ``N``
  bounded so that ``rows * N + cols`` stays in int32, verified; unbounded, the race witness is
  the int32 wraparound of that offset, tests/test_false_refusals_20.py.)
- The persistent GEMM with the consumer's index ``i * (K_TILES - 1) + kk``: unknown (exit 3,
  "the params derived from N, M, program_id_0, later_programs_0 were checked as independent
  values, and the fault found (order-mismatch ...) needs derived values no checked value ...
  gives"), not rejected: the search for arguments that give the derived tile count stops. Never
  verified.
- A reader keeping the previous wait's result across iterations (``prev = res`` at the loop's
  end, ``release(ck - 1)`` after reading ``prev.slot.v``): refused where the kernel is read
  ("cannot tell which slot ... `prev` is assigned inside the loop"), a documented limit.

Checked and held (tle-dump was right):

- FlashAttention with ``rq.release(0)`` right after ``qt = tl.load(q slot)``: refused
  (access-outside-window at the first ``tl.dot(qt, ...)``): a loaded slot that only feeds a dot
  is the wgmma's shared-memory operand, read at the dot (docs/language.md); Q released after the
  loop is verified. The loader acquiring V(j) before K(j) is verified (no cycle: the softmax
  partition releases K(j) before waiting V(j)).
- The clamped close without ``tle.assume(MAX_TILES >= 0)``: rejected at MAX_TILES = -1 (the clamp
  gives -1, close(-1)): the constexpr is read for every integer.
- Layernorm's normaliser releasing the rows (loaded into registers) before waiting the
  statistics, and the statistics partition holding the rows until its commit: verified, rightly.
- A field written on tiles 0 and 1 only and read at every tile (capacity 2): verified, as
  docs/semantics.md rule 7 allows (the slot keeps its contents).
"""

from __future__ import annotations

import re

import pytest

from .adversarial_support import dump, expect

#: the persistent ping-pong GEMM, N and K constexprs (read specialised)
GEMM = '''import triton.language as tl

import tle_compiler as tle

BM: tl.constexpr = 128
BN: tl.constexpr = 128
BK: tl.constexpr = 64


@tle.jit(num_warps=4)
def gemm_pp(a_desc, b_desc, c_ptr, M, N: tl.constexpr, K: tl.constexpr, STAGES: tl.constexpr):
    tle.assume(M >= 1)
    ab0 = tle.pipe(capacity=STAGES, a=tle.gpu.alloc([STAGES, BM, BK], tl.float16),
                   b=tle.gpu.alloc([STAGES, BK, BN], tl.float16))
    ab1 = tle.pipe(capacity=STAGES, a=tle.gpu.alloc([STAGES, BM, BK], tl.float16),
                   b=tle.gpu.alloc([STAGES, BK, BN], tl.float16))
    tle.gpu.warp_specialize([(mma0, (ab0, c_ptr, M, N, K)),
                             (load, (ab0, ab1, a_desc, b_desc, M, N, K)),
                             (mma1, (ab1, c_ptr, M, N, K))], [4, 4], [40, 232])


def load(ab0, ab1, a_desc, b_desc, M, N, K):
    n_k = tl.cdiv(K, BK)
    n_pairs = tl.cdiv(M, BM) * tl.cdiv(N, BN) // 2
    w0 = ab0.writer()
    w1 = ab1.writer()
    for p in range(n_pairs):
        for c in range(2):
            i = 2 * p + c
            pm = i // tl.cdiv(N, BN)
            pn = i % tl.cdiv(N, BN)
            for kk in range(n_k):
                if c == 0:
                    s = w0.acquire(p * n_k + kk)
                    tle.gpu.tma_load(s.a, a_desc, [pm * BM, kk * BK])
                    tle.gpu.tma_load(s.b, b_desc, [kk * BK, pn * BN])
                    w0.commit(p * n_k + kk)
                else:
                    s = w1.acquire(p * n_k + kk)
                    tle.gpu.tma_load(s.a, a_desc, [pm * BM, kk * BK])
                    tle.gpu.tma_load(s.b, b_desc, [kk * BK, pn * BN])
                    w1.commit(p * n_k + kk)


def mma0(ab, c_ptr, M, N, K):
    mma(ab, c_ptr, M, N, K, 0)


def mma1(ab, c_ptr, M, N, K):
    mma(ab, c_ptr, M, N, K, 1)


def mma(ab, c_ptr, M, N, K, C):
    n_k = tl.cdiv(K, BK)
    n_tiles = tl.cdiv(M, BM) * tl.cdiv(N, BN)
    n_pairs = n_tiles // 2
    r = ab.reader()
    for p in range(n_pairs):
        j = 2 * p + C
        pm = j // tl.cdiv(N, BN)
        pn = j % tl.cdiv(N, BN)
        acc = tl.zeros([BM, BN], tl.float32)
        for kk in range(n_k):
            res = r.wait(p * n_k + kk)
            acc = tl.dot(tl.load(tle.gpu.local_ptr(res.slot.a)),
                         tl.load(tle.gpu.local_ptr(res.slot.b)), acc)
            r.release(p * n_k + kk)
        rows = pm * BM + tl.arange(0, BM)
        cols = pn * BN + tl.arange(0, BN)
        tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc.to(tl.float16),
                 mask=(rows[:, None] < M) & (cols[None, :] < N))


DEFAULT_CONFIG = {
    "signature": {"a_desc": "tensordesc<fp16[128, 64]>", "b_desc": "tensordesc<fp16[64, 128]>",
                  "c_ptr": "*fp16", "M": "i32", },
    "constexprs": {"STAGES": 3, "K": 256, "N": 256},
    "num_warps": 4,
}
'''

#: the same with N a runtime argument (its offsets may wrap in int32 unless bounded)
GEMM_RUNTIME_N = (GEMM
                  .replace("M, N: tl.constexpr, K", "M, N, K")
                  .replace("    tle.assume(M >= 1)\n",
                           "    tle.assume(M >= 1)\n    tle.assume(N >= 1)\n")
                  .replace('"M": "i32", }', '"M": "i32", "N": "i32", }')
                  .replace('"K": 256, "N": 256}', '"K": 256}'))

#: FlashAttention forward: Q one-shot, K and V rings of capacities KS and VS
FA = '''import triton.language as tl

import tle_compiler as tle

BM: tl.constexpr = 64
BN: tl.constexpr = 64
D: tl.constexpr = 64


@tle.jit(num_warps=4)
def fa_fwd(q_desc, k_desc, v_desc, o_ptr, N_CTX, KS: tl.constexpr, VS: tl.constexpr):
    tle.assume(N_CTX >= 0)
    q = tle.pipe(capacity=1, one_shot=True, t=tle.gpu.alloc([1, BM, D], tl.float16))
    kp = tle.pipe(capacity=KS, t=tle.gpu.alloc([KS, BN, D], tl.float16))
    vp = tle.pipe(capacity=VS, t=tle.gpu.alloc([VS, BN, D], tl.float16))
    tle.gpu.warp_specialize([(softmax, (q, kp, vp, o_ptr, N_CTX)),
                             (loader, (q, kp, vp, q_desc, k_desc, v_desc, N_CTX))],
                            [4], [40])


def loader(q, kp, vp, q_desc, k_desc, v_desc, N_CTX):
    row0 = tl.program_id(0) * BM
    wq = q.writer()
    s = wq.acquire(0)
    tle.gpu.tma_load(s.t, q_desc, [row0, 0])
    wq.commit(0)
    wk = kp.writer()
    wv = vp.writer()
    for j in range(N_CTX):
        sk = wk.acquire(j)
        tle.gpu.tma_load(sk.t, k_desc, [j * BN, 0])
        wk.commit(j)
        sv = wv.acquire(j)
        tle.gpu.tma_load(sv.t, v_desc, [j * BN, 0])
        wv.commit(j)


def softmax(q, kp, vp, o_ptr, N_CTX):
    row0 = tl.program_id(0) * BM
    rq = q.reader()
    rk = kp.reader()
    rv = vp.reader()
    qr = rq.wait(0)
    qt = tl.load(tle.gpu.local_ptr(qr.slot.t))
    m_i = tl.full([BM], float("-inf"), tl.float32)
    l_i = tl.zeros([BM], tl.float32)
    acc = tl.zeros([BM, D], tl.float32)
    for j in range(N_CTX):
        kr = rk.wait(j)
        s = tl.dot(qt, tl.trans(tl.load(tle.gpu.local_ptr(kr.slot.t))))
        rk.release(j)
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        vr = rv.wait(j)
        acc = tl.dot(p.to(tl.float16), tl.load(tle.gpu.local_ptr(vr.slot.t)), acc * alpha[:, None])
        rv.release(j)
        m_i = m_new
    rq.release(0)
    rows = row0 + tl.arange(0, BM)
    tl.store(o_ptr + rows[:, None] * D + tl.arange(0, D)[None, :],
             (acc / l_i[:, None]).to(tl.float16))


DEFAULT_CONFIG = {
    "signature": {"q_desc": "tensordesc<fp16[64, 64]>", "k_desc": "tensordesc<fp16[64, 64]>",
                  "v_desc": "tensordesc<fp16[64, 64]>", "o_ptr": "*fp16", "N_CTX": "i32"},
    "constexprs": {"KS": 3, "VS": 2},
    "num_warps": 4,
}
'''

#: a MoE-style gather: the trip count loaded in the kernel body, rows gathered by token id
MOE = '''import triton.language as tl

import tle_compiler as tle

BT: tl.constexpr = 64
D: tl.constexpr = 64


@tle.jit(num_warps=4)
def moe_gather(idx_ptr, cnt_ptr, x_ptr, y_ptr, STAGES: tl.constexpr):
    n = tl.load(cnt_ptr + tl.program_id(0))
    kv = tle.pipe(capacity=STAGES, rows=tle.gpu.alloc([STAGES, BT, D], tl.float16),
                  ids=tle.gpu.alloc([STAGES, BT], tl.int32))
    tle.gpu.warp_specialize([(expert, (kv, y_ptr, n)), (gather, (kv, idx_ptr, x_ptr, n))],
                            [4], [40])


def gather(kv, idx_ptr, x_ptr, n):
    w = kv.writer()
    cols = tl.arange(0, D)
    for t in range(n):
        ids = tl.load(idx_ptr + t * BT + tl.arange(0, BT))
        s = w.acquire(t)
        tl.store(tle.gpu.local_ptr(s.rows), tl.load(x_ptr + ids[:, None] * D + cols[None, :]))
        tl.store(tle.gpu.local_ptr(s.ids), ids)
        w.commit(t)


def expert(kv, y_ptr, n):
    r = kv.reader()
    cols = tl.arange(0, D)
    for t in range(n):
        res = r.wait(t)
        rows = tl.load(tle.gpu.local_ptr(res.slot.rows))
        ids = tl.load(tle.gpu.local_ptr(res.slot.ids))
        r.release(t)
        tl.store(y_ptr + ids[:, None] * D + cols[None, :], rows * 2)


DEFAULT_CONFIG = {
    "signature": {"idx_ptr": "*i32", "cnt_ptr": "*i32", "x_ptr": "*fp16", "y_ptr": "*fp16"},
    "constexprs": {"STAGES": 2},
    "num_warps": 4,
}
'''


#: a layernorm row pipeline of three partitions: a loader, a statistics partition (reader
#: "stat" of the rows, writer of the per-row mean / rstd) and a normaliser (reader "norm" of the
#: rows and reader of the statistics)
LN = '''import triton.language as tl

import tle_compiler as tle

BR: tl.constexpr = 16
D: tl.constexpr = 128


@tle.jit(num_warps=4)
def layernorm(x_ptr, w_ptr, y_ptr, stats_ptr, ROWS, eps):
    tle.assume(ROWS >= 0)
    n_blk = tl.cdiv(ROWS, BR)
    xs = tle.pipe(capacity=2, readers=("norm", "stat"), x=tle.gpu.alloc([2, BR, D], tl.float32))
    st = tle.pipe(capacity=2, mean=tle.gpu.alloc([2, BR], tl.float32),
                  rstd=tle.gpu.alloc([2, BR], tl.float32))
    tle.gpu.warp_specialize([(norm, (xs, st, w_ptr, y_ptr, n_blk)),
                             (load, (xs, x_ptr, n_blk)),
                             (stat, (xs, st, stats_ptr, n_blk, eps))], [4, 4], [80, 160])


def load(xs, x_ptr, n_blk):
    w = xs.writer()
    for b in range(n_blk):
        s = w.acquire(b)
        offs = (b * BR + tl.arange(0, BR))[:, None] * D + tl.arange(0, D)[None, :]
        tl.store(tle.gpu.local_ptr(s.x), tl.load(x_ptr + offs))
        w.commit(b)


def stat(xs, st, stats_ptr, n_blk, eps):
    r = xs.reader("stat")
    w = st.writer()
    for b in range(n_blk):
        res = r.wait(b)
        x = tl.load(tle.gpu.local_ptr(res.slot.x))
        r.release(b)
        mean = tl.sum(x, 1) / D
        xc = x - mean[:, None]
        rstd = 1.0 / tl.sqrt(tl.sum(xc * xc, 1) / D + eps)
        s = w.acquire(b)
        tl.store(tle.gpu.local_ptr(s.mean), mean)
        tl.store(tle.gpu.local_ptr(s.rstd), rstd)
        w.commit(b)
        tl.store(stats_ptr + b * BR + tl.arange(0, BR), rstd)


def norm(xs, st, w_ptr, y_ptr, n_blk):
    r = xs.reader("norm")
    rs = st.reader()
    wt = tl.load(w_ptr + tl.arange(0, D))
    for b in range(n_blk):
        res = r.wait(b)
        sres = rs.wait(b)
        x = tl.load(tle.gpu.local_ptr(res.slot.x))
        mean = tl.load(tle.gpu.local_ptr(sres.slot.mean))
        rstd = tl.load(tle.gpu.local_ptr(sres.slot.rstd))
        rs.release(b)
        r.release(b)
        offs = (b * BR + tl.arange(0, BR))[:, None] * D + tl.arange(0, D)[None, :]
        tl.store(y_ptr + offs, (x - mean[:, None]) * rstd[:, None] * wt[None, :])


DEFAULT_CONFIG = {
    "signature": {"x_ptr": "*fp32", "w_ptr": "*fp32", "y_ptr": "*fp32", "stats_ptr": "*fp32",
                  "ROWS": "i32", "eps": "fp32"},
    "constexprs": {},
    "num_warps": 4,
}
'''

#: a stream closed at a data-dependent end: the count loaded and clamped in the kernel body
CLOSE = '''import triton.language as tl

import tle_compiler as tle

BM: tl.constexpr = 64
BN: tl.constexpr = 64


@tle.jit(num_warps=4)
def stream_close(x_ptr, len_ptr, y_ptr, MAX_TILES: tl.constexpr):
    tle.assume(MAX_TILES >= 0)
    n = tl.minimum(tl.maximum(tl.load(len_ptr + tl.program_id(0)), 0), MAX_TILES)
    ring = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, BM, BN], tl.float32))
    tle.gpu.warp_specialize([(consume, (ring, y_ptr, n)), (produce, (ring, x_ptr, n))],
                            [4], [80])


def produce(ring, x_ptr, n):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    w = ring.writer()
    for t in range(n):
        s = w.acquire(t)
        tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + t * BM * BN + offs))
        w.commit(t)
    w.close(n)


def consume(ring, y_ptr, n):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    acc = tl.zeros([BM, BN], tl.float32)
    r = ring.reader()
    for t in range(n + 1):
        res = r.wait(t)
        if not res.is_closed:
            acc += tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t)
    tl.store(y_ptr + tl.program_id(0) * BM * BN + offs, acc)


DEFAULT_CONFIG = {
    "signature": {"x_ptr": "*fp32", "len_ptr": "*i32", "y_ptr": "*fp32"},
    "constexprs": {"MAX_TILES": 16},
    "num_warps": 4,
}
'''

#: a persistent GEMM: tiles pid + i * num_programs, a tile count computed in the kernel body
PERSISTENT = '''import triton.language as tl

import tle_compiler as tle

BM: tl.constexpr = 128
BN: tl.constexpr = 128
BK: tl.constexpr = 64


@tle.jit(num_warps=4)
def persistent_gemm(a_desc, b_desc, c_ptr, M, N, K_TILES: tl.constexpr, STAGES: tl.constexpr):
    tle.assume(M >= 0)
    tle.assume(N >= 0)
    n_tn = tl.cdiv(N, BN)
    n_tiles = tl.cdiv(M, BM) * n_tn
    my_tiles = tl.cdiv(n_tiles - tl.program_id(0), tl.num_programs(0))
    ab = tle.pipe(capacity=STAGES, a=tle.gpu.alloc([STAGES, BM, BK], tl.float16),
                  b=tle.gpu.alloc([STAGES, BK, BN], tl.float16))
    tle.gpu.warp_specialize([(mma, (ab, c_ptr, M, N, n_tn, my_tiles, K_TILES)),
                             (load, (ab, a_desc, b_desc, n_tn, my_tiles, K_TILES))], [4], [40])


def load(ab, a_desc, b_desc, n_tn, my_tiles, K_TILES):
    w = ab.writer()
    for i in range(my_tiles):
        tile = tl.program_id(0) + i * tl.num_programs(0)
        pm = tile // n_tn
        pn = tile % n_tn
        for kk in range(K_TILES):
            s = w.acquire(i * K_TILES + kk)
            tle.gpu.tma_load(s.a, a_desc, [pm * BM, kk * BK])
            tle.gpu.tma_load(s.b, b_desc, [kk * BK, pn * BN])
            w.commit(i * K_TILES + kk)


def mma(ab, c_ptr, M, N, n_tn, my_tiles, K_TILES):
    r = ab.reader()
    for i in range(my_tiles):
        tile = tl.program_id(0) + i * tl.num_programs(0)
        pm = tile // n_tn
        pn = tile % n_tn
        acc = tl.zeros([BM, BN], tl.float32)
        for kk in range(K_TILES):
            res = r.wait(i * K_TILES + kk)
            acc = tl.dot(tl.load(tle.gpu.local_ptr(res.slot.a)),
                         tl.load(tle.gpu.local_ptr(res.slot.b)), acc)
            r.release(i * K_TILES + kk)
        rows = pm * BM + tl.arange(0, BM)
        cols = pn * BN + tl.arange(0, BN)
        tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc.to(tl.float16),
                 mask=(rows[:, None] < M) & (cols[None, :] < N))


DEFAULT_CONFIG = {
    "signature": {"a_desc": "tensordesc<fp16[128, 64]>", "b_desc": "tensordesc<fp16[64, 128]>",
                  "c_ptr": "*fp16", "M": "i32", "N": "i32"},
    "constexprs": {"K_TILES": 4, "STAGES": 3},
    "num_warps": 4,
}
'''


#: split-K: two partitions each multiply half of K into a workspace slice and hand over a token;
#: a reduction partition waits both tokens, then sums the slices into C
SPLITK = '''import triton.language as tl

import tle_compiler as tle

BM: tl.constexpr = 64
BN: tl.constexpr = 64
BK: tl.constexpr = 32


@tle.jit(num_warps=4)
def splitk(a_ptr, b_ptr, ws_ptr, c_ptr, K_HALF: tl.constexpr):
    pid = tl.program_id(0)
    done0 = tle.pipe(capacity=1, tok=tle.gpu.alloc([1, BM], tl.int32))
    done1 = tle.pipe(capacity=1, tok=tle.gpu.alloc([1, BM], tl.int32))
    tle.gpu.warp_specialize([(reduce, (done0, done1, ws_ptr, c_ptr, pid)),
                             (part0, (done0, a_ptr, b_ptr, ws_ptr, pid, K_HALF)),
                             (part1, (done1, a_ptr, b_ptr, ws_ptr, pid, K_HALF))],
                            [4, 4], [232, 232])


def partial(done, a_ptr, b_ptr, ws_ptr, pid, K_HALF, h):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], tl.float32)
    for kk in range(K_HALF // BK):
        k0 = h * K_HALF + kk * BK
        a = tl.load(a_ptr + (pid * BM + rm)[:, None] * (2 * K_HALF) + (k0 + rk)[None, :])
        b = tl.load(b_ptr + (k0 + rk)[:, None] * BN + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(ws_ptr + ((pid * 2 + h) * BM + rm)[:, None] * BN + rn[None, :], acc)
    w = done.writer()
    s = w.acquire(0)
    tl.store(tle.gpu.local_ptr(s.tok), rm)
    w.commit(0)


def part0(done, a_ptr, b_ptr, ws_ptr, pid, K_HALF):
    partial(done, a_ptr, b_ptr, ws_ptr, pid, K_HALF, 0)


def part1(done, a_ptr, b_ptr, ws_ptr, pid, K_HALF):
    partial(done, a_ptr, b_ptr, ws_ptr, pid, K_HALF, 1)


def reduce(done0, done1, ws_ptr, c_ptr, pid):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    r0 = done0.reader()
    r1 = done1.reader()
    x0 = r0.wait(0)
    t0 = tl.load(tle.gpu.local_ptr(x0.slot.tok))
    r0.release(0)
    x1 = r1.wait(0)
    t1 = tl.load(tle.gpu.local_ptr(x1.slot.tok))
    r1.release(0)
    p0 = tl.load(ws_ptr + ((pid * 2 + 0) * BM + rm)[:, None] * BN + rn[None, :])
    p1 = tl.load(ws_ptr + ((pid * 2 + 1) * BM + rm)[:, None] * BN + rn[None, :])
    tl.store(c_ptr + (pid * BM + t0 + t1 - rm)[:, None] * BN + rn[None, :], p0 + p1)


DEFAULT_CONFIG = {
    "signature": {"a_ptr": "*fp16", "b_ptr": "*fp16", "ws_ptr": "*fp32", "c_ptr": "*fp32"},
    "constexprs": {"K_HALF": 128},
    "num_warps": 4,
}
'''

#: two readers with field views: "qk" sees k only, "pv" sees v only
VIEWS = '''import triton.language as tl

import tle_compiler as tle

BK: tl.constexpr = 64
D: tl.constexpr = 64


@tle.jit(num_warps=4)
def kv_views(k_ptr, v_ptr, s_ptr, o_ptr, NK):
    tle.assume(NK >= 0)
    kv = tle.pipe(capacity=2, readers=("qk", "pv"), k=tle.gpu.alloc([2, BK, D], tl.float16),
                  v=tle.gpu.alloc([2, BK, D], tl.float16))
    tle.gpu.warp_specialize([(producer, (kv, k_ptr, v_ptr, NK)),
                             (qk, (kv.reader("qk", fields=("k",)), s_ptr, NK)),
                             (pv, (kv.reader("pv", fields=("v",)), o_ptr, NK))],
                            [4, 4], [232, 160])


def producer(kv, k_ptr, v_ptr, NK):
    rows = tl.arange(0, BK)[:, None] * D + tl.arange(0, D)[None, :]
    w = kv.writer()
    for ck in range(NK):
        slot = w.acquire(ck)
        tl.store(tle.gpu.local_ptr(slot.k), tl.load(k_ptr + ck * BK * D + rows))
        tl.store(tle.gpu.local_ptr(slot.v), tl.load(v_ptr + ck * BK * D + rows))
        w.commit(ck)


def qk(r, s_ptr, NK):
    rows = tl.arange(0, BK)[:, None] * D + tl.arange(0, D)[None, :]
    acc = tl.zeros([BK, D], tl.float32)
    for ck in range(NK):
        res = r.wait(ck)
        acc += tl.load(tle.gpu.local_ptr(res.slot.k)).to(tl.float32)
        r.release(ck)
    tl.store(s_ptr + rows, acc)


def pv(r, o_ptr, NK):
    rows = tl.arange(0, BK)[:, None] * D + tl.arange(0, D)[None, :]
    acc = tl.zeros([BK, D], tl.float32)
    for ck in range(NK):
        res = r.wait(ck)
        acc += tl.load(tle.gpu.local_ptr(res.slot.v)).to(tl.float32)
        r.release(ck)
    tl.store(o_ptr + rows, acc)


DEFAULT_CONFIG = {
    "signature": {"k_ptr": "*fp16", "v_ptr": "*fp16", "s_ptr": "*fp32", "o_ptr": "*fp32",
                  "NK": "i32"},
    "constexprs": {},
    "num_warps": 4,
}
'''


def variant(src: str, *pairs: tuple[str, str]) -> str:
    for old, new in pairs:
        assert old in src, old
        src = src.replace(old, new)
    return src


CORRECT = {"gemm ping-pong": GEMM, "flash attention": FA, "moe gather": MOE,
           "layernorm chain": LN, "data-dependent close": CLOSE, "persistent gemm": PERSISTENT,
           "split-k": SPLITK, "field views": VIEWS}


@pytest.mark.parametrize("name", list(CORRECT))
def test_the_correct_kernel_is_verified_and_lowered(tmp_path, capsys, name):
    """The GEMM: before, memory-race between the consumers' stores (tl.cdiv of numbers read as
    one of two values, a `//` by it as any value)."""
    code, err = dump(tmp_path, capsys, CORRECT[name])
    expect(code, err, "verified")
    code, err = dump(tmp_path, capsys, CORRECT[name], "--gluon")
    assert code == 0, err


MMA_DOT = '''            acc = tl.dot(tl.load(tle.gpu.local_ptr(res.slot.a)),
                         tl.load(tle.gpu.local_ptr(res.slot.b)), acc)
            r.release(p * n_k + kk)'''

GEMM_BUGS = {
    # both consumers on tile 2p: they store the same C tile
    "same tile": (("mma(ab, c_ptr, M, N, K, 1)", "mma(ab, c_ptr, M, N, K, 0)"),
                  ("rejected", "[memory-race]", "partitions 'mma0' (store at line 70",
                   "and 'mma1' (store at line 70")),
    # tile p + C instead of 2p + C: consumer 0's tile p + 1 is consumer 1's tile p
    "tile p + C": (("j = 2 * p + C", "j = p + C"), ("rejected", "[memory-race]")),
    # a released before the dot that reads it from shared memory
    "release before the dot": (
        (MMA_DOT, '''            a = tl.load(tle.gpu.local_ptr(res.slot.a))
            r.release(p * n_k + kk)
            acc = tl.dot(a, tl.load(tle.gpu.local_ptr(res.slot.b)), acc)'''),
        ("rejected", "gemm.py:67: error: read of ab0.a at index 0 after release(0) at line 66",
         "[access-outside-window]")),
    "wait off by one": (
        ("res = r.wait(p * n_k + kk)", "res = r.wait(p * n_k + kk + 1)"),
        ("rejected", "gemm.py:64: error: the reader waits index 3 of pipe 'ab0'",
         "[order-mismatch]")),
}


@pytest.mark.parametrize("bug", list(GEMM_BUGS))
def test_gemm_seeded_bugs_are_refused(tmp_path, capsys, bug):
    pair, want = GEMM_BUGS[bug]
    src = variant(GEMM, pair)
    if bug == "wait off by one":
        src = variant(src, ("r.release(p * n_k + kk)", "r.release(p * n_k + kk + 1)"))
    code, err = dump(tmp_path, capsys, src, name="gemm.py")
    expect(code, err, want)


def test_gemm_with_a_runtime_n_and_unbounded_offsets_wraps(tmp_path, capsys):
    """Lifted in round FR20 (tests/test_false_refusals_20.py verifies it with `M` and `N`
    bounded): with no bound, `rows * N + cols` may pass 2 ** 31 and wrap around in int32,
    where two consumers' elements meet -- the witness says so (before: a witness of no wrap,
    the quotient by the tile count read as any value)."""
    code, err = dump(tmp_path, capsys, GEMM_RUNTIME_N)
    expect(code, err, ("rejected", "[memory-race]", "can reach the same global address",
                       "where int32 offset arithmetic wraps around"))


def test_race_model_divides_numbers_exactly(tmp_path, capsys):
    """The fix itself, without the GEMM around it: `j // tl.cdiv(256, 128)` and `j % ...` of
    the two consumers' tiles 2p and 2p + 1 are apart once the divisor is the number 2."""
    src = variant(GEMM, ("j // tl.cdiv(N, BN)", "j // tl.cdiv(256, 128)"),
                  ("j % tl.cdiv(N, BN)", "j % tl.cdiv(256, 128)"))
    code, err = dump(tmp_path, capsys, src)
    expect(code, err, "verified")
    src = variant(GEMM, ("j // tl.cdiv(N, BN)", "j // 2"), ("j % tl.cdiv(N, BN)", "j % 2"))
    code, err = dump(tmp_path, capsys, src)
    expect(code, err, "verified")


FA_LOADER = '''    for j in range(N_CTX):
        sk = wk.acquire(j)
        tle.gpu.tma_load(sk.t, k_desc, [j * BN, 0])
        wk.commit(j)
        sv = wv.acquire(j)
        tle.gpu.tma_load(sv.t, v_desc, [j * BN, 0])
        wv.commit(j)'''

#: the loader commits V(j) only after acquiring K(j + 1), and softmax holds K(j) until V(j)
FA_LAG = variant(FA, (FA_LOADER, '''    for j in range(N_CTX):
        sk = wk.acquire(j)
        tle.gpu.tma_load(sk.t, k_desc, [j * BN, 0])
        wk.commit(j)
        if j > 0:
            sv = wv.acquire(j - 1)
            tle.gpu.tma_load(sv.t, v_desc, [j * BN - BN, 0])
            wv.commit(j - 1)
    if N_CTX > 0:
        sv = wv.acquire(N_CTX - 1)
        tle.gpu.tma_load(sv.t, v_desc, [N_CTX * BN - BN, 0])
        wv.commit(N_CTX - 1)'''), ("        rk.release(j)\n        m_new", "        m_new"),
                 ("        rv.release(j)\n", "        rv.release(j)\n        rk.release(j)\n"))


def test_fa_lagging_v_deadlocks_with_one_k_stage_only(tmp_path, capsys):
    """A wrong capacity assumption: with KS = 2 the lag is fine, with KS = 1 a cycle."""
    code, err = dump(tmp_path, capsys, FA_LAG, "--param", "KS=2")
    expect(code, err, "verified")
    code, err = dump(tmp_path, capsys, FA_LAG, "--param", "KS=1", name="fa.py")
    expect(code, err, ("rejected", "fa.py:60: error: deadlock", "kp.acquire(1) at j=1"))


FA_BUGS = {
    "q released before its dots": (
        ("    rows = row0 + tl.arange(0, BM)\n",
         "    rows = row0 + tl.arange(0, BM)\n    rq.release(0)\n"),
        ("    qt = tl.load(tle.gpu.local_ptr(qr.slot.t))\n",
         "    qt = tl.load(tle.gpu.local_ptr(qr.slot.t))\n    rq.release(0)\n"),
        ("rejected", "[access-outside-window]", "read of q.t at index 0 after release(0)")),
    "v skipped at j = 0": (
        ("vr = rv.wait(j)", "if j > 0:\n            vr = rv.wait(j)"),
        ("        acc = tl.dot(p.to(tl.float16), tl.load(tle.gpu.local_ptr(vr.slot.t)), "
         "acc * alpha[:, None])\n        rv.release(j)",
         "            acc = tl.dot(p.to(tl.float16), tl.load(tle.gpu.local_ptr(vr.slot.t)), "
         "acc * alpha[:, None])\n            rv.release(j)"),
        ("rejected", "fa.py:35: error: the reader of pipe 'vp' never waits index 0",
         "[unconsumed]")),
    "k released a tile late": (
        ("        rk.release(j)\n        m_new",
         "        if j > 0:\n            rk.release(j - 1)\n"
         "        m_new"), ("a", "a"),
        ("rejected", "[missing-release]", "never releases index 0 of pipe 'kp'")),
}


@pytest.mark.parametrize("bug", list(FA_BUGS))
def test_fa_seeded_bugs_are_refused(tmp_path, capsys, bug):
    p1, p2, want = FA_BUGS[bug]
    src = variant(variant(FA, p1), p2) if p2 != ("a", "a") else variant(FA, p1)
    code, err = dump(tmp_path, capsys, src, name="fa.py")
    expect(code, err, want)


MOE_BUGS = {
    # the expert writes x in place while the gatherer still loads later tiles' rows from it
    "expert writes what the gather reads": (
        ("(expert, (kv, y_ptr, n))", "(expert, (kv, x_ptr, n))"),
        ("rejected", "[memory-race]", "partitions 'expert' (store at line 37",
         "'gather' (load at line 24")),
    "ids read after release": (
        ("        ids = tl.load(tle.gpu.local_ptr(res.slot.ids))\n        r.release(t)",
         "        r.release(t)\n        ids = tl.load(tle.gpu.local_ptr(res.slot.ids))"),
        ("rejected", "moe.py:36: error: read of kv.ids at index 0 after release(0) at line 35")),
    "ids written from tile 1 on": (
        ("        tl.store(tle.gpu.local_ptr(s.ids), ids)\n",
         "        if t > 0:\n            tl.store(tle.gpu.local_ptr(s.ids), ids)\n"),
        ("rejected", "moe.py:36: error:", "field 'ids' of stage 0 was never written")),
    "reader one tile too many": (
        ("    for t in range(n):\n        res", "    for t in range(n + 1):\n        res"),
        ("rejected", "[wait-never-committed]")),
}


@pytest.mark.parametrize("bug", list(MOE_BUGS))
def test_moe_seeded_bugs_are_refused(tmp_path, capsys, bug):
    pair, want = MOE_BUGS[bug]
    code, err = dump(tmp_path, capsys, variant(MOE, pair), name="moe.py")
    expect(code, err, want)


LN_BUGS = {
    # the normaliser reads the statistics from global memory the stat partition stores
    "stats through global memory": (
        (("tl.store(y_ptr + offs, (x - mean[:, None]) * rstd[:, None] * wt[None, :])",
          "tl.store(y_ptr + offs, (x - mean[:, None]) * tl.load(stats_ptr + b * BR "
          "+ tl.arange(0, BR))[:, None] * wt[None, :])"),
         ("(norm, (xs, st, w_ptr, y_ptr, n_blk))",
          "(norm, (xs, st, w_ptr, y_ptr, stats_ptr, n_blk))"),
         ("def norm(xs, st, w_ptr, y_ptr, n_blk):",
          "def norm(xs, st, w_ptr, y_ptr, stats_ptr, n_blk):")),
        ("rejected", "[memory-race]", "partitions 'norm' (load at line 60",
         "'stat' (store at line 44")),
    # both readers of the rows under one name
    "one reader name in two partitions": (
        (('r = xs.reader("norm")', 'r = xs.reader("stat")'),),
        ("rejected", "ln.py:34: error: reader 'stat' of pipe 'xs' appears in partitions 'norm' "
         "and 'stat' [reader-in-two-partitions]")),
    # the statistics of the next block waited with this block's rows
    "stats index ahead": (
        (("        res = r.wait(b)\n        sres = rs.wait(b)",
          "        sres = rs.wait(b + 1)\n        res = r.wait(b)"),
         ("rs.release(b)", "rs.release(b + 1)")),
        ("rejected", "ln.py:52: error: the reader waits index 1 of pipe 'st' (wait(b + 1))",
         "[wait-never-committed]")),
}


@pytest.mark.parametrize("bug", list(LN_BUGS))
def test_layernorm_seeded_bugs_are_refused(tmp_path, capsys, bug):
    pairs, want = LN_BUGS[bug]
    code, err = dump(tmp_path, capsys, variant(LN, *pairs), name="ln.py")
    expect(code, err, want)


def test_layernorm_releases_that_are_right_where_they_stand(tmp_path, capsys):
    """Not bugs: the normaliser releasing the rows (loaded into registers) before waiting the
    statistics, and the stat partition holding the rows until its commit."""
    src = variant(LN, ("        res = r.wait(b)\n        sres = rs.wait(b)\n"
                       "        x = tl.load(tle.gpu.local_ptr(res.slot.x))",
                       "        res = r.wait(b)\n        x = tl.load(tle.gpu.local_ptr(res.slot.x))"
                       "\n        r.release(b)\n        sres = rs.wait(b)"),
                  ("        rs.release(b)\n        r.release(b)", "        rs.release(b)"))
    expect(*dump(tmp_path, capsys, src), "verified")
    src = variant(LN, ("        x = tl.load(tle.gpu.local_ptr(res.slot.x))\n        r.release(b)\n"
                       "        mean", "        x = tl.load(tle.gpu.local_ptr(res.slot.x))\n"
                       "        mean"),
                  ("        w.commit(b)\n        tl.store(stats_ptr",
                   "        w.commit(b)\n        r.release(b)\n        tl.store(stats_ptr"))
    expect(*dump(tmp_path, capsys, src), "verified")


CLOSE_BUGS = {
    "count not clamped": (
        (("tl.minimum(tl.maximum(tl.load(len_ptr + tl.program_id(0)), 0), MAX_TILES)",
          "tl.load(len_ptr + tl.program_id(0))"),),
        ("rejected", "close.py:25: error: close of pipe 'ring' at negative index -1 (when n=-1)",
         "[negative-index]")),
    "closing slot read": (
        (("        if not res.is_closed:\n            acc += ", "        acc += "),),
        ("rejected", "close.py:34: error:", "field 'tile' of stage 0 was never written")),
    "guard inverted": (
        (("if not res.is_closed:", "if res.is_closed:"),),
        ("rejected", "close.py:35: error:", "field 'tile' of stage 0 was never written")),
    "flag read after release": (
        (("        if not res.is_closed:\n            acc += tl.load(tle.gpu.local_ptr("
          "res.slot.tile))\n        r.release(t)",
          "        acc += tl.load(tle.gpu.local_ptr(res.slot.tile)) * 0.0\n"
          "        r.release(t)\n        if not res.is_closed:\n            acc += 1.0"),),
        ("rejected", "close.py:36: error: read of ring.is_closed at index 0 after release(0)")),
    "close never waited": (
        (("for t in range(n + 1):", "for t in range(n):"),),
        ("rejected", "close.py:25: error: the reader of pipe 'ring' never waits index 0 that "
         "close(n) commits here")),
}


@pytest.mark.parametrize("bug", list(CLOSE_BUGS))
def test_close_seeded_bugs_are_refused(tmp_path, capsys, bug):
    pairs, want = CLOSE_BUGS[bug]
    code, err = dump(tmp_path, capsys, variant(CLOSE, *pairs), name="close.py")
    expect(code, err, want)


def test_close_without_a_bound_on_the_constexpr_is_refused(tmp_path, capsys):
    """The clamp's upper end is MAX_TILES, read for every integer: -1 closes at -1."""
    src = variant(CLOSE, ("    tle.assume(MAX_TILES >= 0)\n", ""))
    expect(*dump(tmp_path, capsys, src), ("rejected", "[negative-index]", "MAX_TILES=-1"))


PERSISTENT_BUGS = {
    "last k tile never released": (
        (("            r.release(i * K_TILES + kk)",
          "            if kk < K_TILES - 1:\n                r.release(i * K_TILES + kk)"),),
        ("rejected", "pers.py:44: error: the reader never releases index 3 of pipe 'ab'",
         "[missing-release]")),
    "producer one tile more": (
        (("    for i in range(my_tiles):\n        tile = tl.program_id(0) + i * "
          "tl.num_programs(0)\n        pm = tile // n_tn\n        pn = tile % n_tn\n"
          "        for kk in range(K_TILES):\n            s = w",
          "    for i in range(my_tiles + 1):\n        tile = tl.program_id(0) + i * "
          "tl.num_programs(0)\n        pm = tile // n_tn\n        pn = tile % n_tn\n"
          "        for kk in range(K_TILES):\n            s = w"),),
        ("rejected", "pers.py:33: error: the reader of pipe 'ab' never waits index 0",
         "[unconsumed]")),
}


@pytest.mark.parametrize("bug", list(PERSISTENT_BUGS))
def test_persistent_gemm_seeded_bugs_are_refused(tmp_path, capsys, bug):
    pairs, want = PERSISTENT_BUGS[bug]
    code, err = dump(tmp_path, capsys, variant(PERSISTENT, *pairs), name="pers.py")
    expect(code, err, want)


def test_persistent_gemm_wrong_k_stride_is_rejected_with_a_launch(tmp_path, capsys):
    """The consumer's index i * (K_TILES - 1) + kk goes wrong from a program's second tile: a
    tile count of 2 needs M or N above 128, past every small argument the search enumerates
    (it gave `unknown` after 200,000 tuples); the solver's base values reproduce it, reported
    with the arguments of a launch that gives it."""
    src = variant(PERSISTENT, ("res = r.wait(i * K_TILES + kk)",
                               "res = r.wait(i * (K_TILES - 1) + kk)"),
                  ("r.release(i * K_TILES + kk)", "r.release(i * (K_TILES - 1) + kk)"))
    code, err = dump(tmp_path, capsys, src)
    assert code == 1 and ": rejected: " in err, err
    first = next(line for line in err.splitlines() if ": error: " in line)
    assert "kernel.py:44: error: the reader waits index 3 of pipe 'ab'" in first, err
    assert "[order-mismatch]" in first and "(my_tiles=2)" in first, err
    launch = dict(kv.split("=") for kv in re.search(r"\(when (.*?) \(my_tiles", first)
                  .group(1).split(", "))
    n_tiles = -(-int(launch["M"]) // 128) * -(-int(launch["N"]) // 128)
    programs = int(launch["program_id_0"]) + 1 + int(launch["later_programs_0"])
    assert -(-(n_tiles - int(launch["program_id_0"])) // programs) == 2, launch


SPLITK_WAIT1 = '''    x1 = r1.wait(0)
    t1 = tl.load(tle.gpu.local_ptr(x1.slot.tok))
    r1.release(0)
'''
SPLITK_LOADS = '''    p0 = tl.load(ws_ptr + ((pid * 2 + 0) * BM + rm)[:, None] * BN + rn[None, :])
    p1 = tl.load(ws_ptr + ((pid * 2 + 1) * BM + rm)[:, None] * BN + rn[None, :])
'''
SPLITK_STORE = "    tl.store(ws_ptr + ((pid * 2 + h) * BM + rm)[:, None] * BN + rn[None, :], acc)\n"
SPLITK_HANDOFF = '''    w = done.writer()
    s = w.acquire(0)
    tl.store(tle.gpu.local_ptr(s.tok), rm)
    w.commit(0)
'''

SPLITK_BUGS = {
    # the reducer loads part 1's slice before waiting its token
    "slice read before its token": (
        ((SPLITK_WAIT1 + SPLITK_LOADS, SPLITK_LOADS + SPLITK_WAIT1),),
        ("rejected", "[memory-race]", "splitk.py:55: error: partitions 'reduce' (load at line 55)",
         "'part1' (store at line 31)")),
    # the partial stored after the token's commit
    "slice stored after the hand-off": (
        ((SPLITK_STORE + SPLITK_HANDOFF, SPLITK_HANDOFF + SPLITK_STORE),),
        ("rejected", "[memory-race]", "'reduce' (load at line 57)", "'part0' (store at line 35)")),
    # both halves into slice 0
    "one slice for both halves": (
        (("partial(done, a_ptr, b_ptr, ws_ptr, pid, K_HALF, 1)",
          "partial(done, a_ptr, b_ptr, ws_ptr, pid, K_HALF, 0)"),),
        ("rejected", "[memory-race]", "'part0' (store at line 31) and 'part1' (store at line 31)")),
    # slices BM // 2 rows apart: the halves overlap
    "slices overlap": (
        (("tl.store(ws_ptr + ((pid * 2 + h) * BM + rm)",
          "tl.store(ws_ptr + ((pid * 2 + h) * (BM // 2) + rm)"),),
        ("rejected", "[memory-race]", "'part0' (store at line 31) and 'part1' (store at line 31)")),
}


@pytest.mark.parametrize("bug", list(SPLITK_BUGS))
def test_splitk_seeded_bugs_are_refused(tmp_path, capsys, bug):
    pairs, want = SPLITK_BUGS[bug]
    code, err = dump(tmp_path, capsys, variant(SPLITK, *pairs), name="splitk.py")
    expect(code, err, want)


PV_LOOP = '''    for ck in range(NK):
        res = r.wait(ck)
        acc += tl.load(tle.gpu.local_ptr(res.slot.v)).to(tl.float32)
        r.release(ck)
'''
QK_LOOP = PV_LOOP.replace("slot.v", "slot.k")
PRODUCER_V = ("        tl.store(tle.gpu.local_ptr(slot.v), tl.load(v_ptr + ck * BK * D + rows))\n")

VIEWS_BUGS = {
    "a reader reads outside its view": (
        ((PV_LOOP, PV_LOOP.replace("slot.v", "slot.k")),),
        ("rejected", "views.py:45: error: this reader of pipe 'kv' sees only fields (v): "
         "`res.slot.k` is outside its view [outside-view]")),
    "a slot pointer kept past its release": (
        ((PV_LOOP, '''    res0 = r.wait(0)
    vp = tle.gpu.local_ptr(res0.slot.v)
    acc += tl.load(vp).to(tl.float32)
    r.release(0)
    for ck in range(1, NK):
        res = r.wait(ck)
        acc += tl.load(vp).to(tl.float32)
        r.release(ck)
'''),),
        ("rejected", "views.py:49: error: read of kv.v at index 0 after release(0) at line 46")),
    "v written on even tiles only": (
        ((PRODUCER_V, "        if ck % 2 == 0:\n    " + PRODUCER_V),),
        ("rejected", "views.py:46: error: reader 'pv' of pipe 'kv' (partition 'pv') reads kv.v at "
         "index 1 (stage 1), but field 'v' of stage 1 was never written")),
    "the producer skips a tile on data": (
        (('''        slot = w.acquire(ck)
        tl.store(tle.gpu.local_ptr(slot.k), tl.load(k_ptr + ck * BK * D + rows))
''', '''        if tl.load(k_ptr + ck * BK * D) != 0:
            slot = w.acquire(ck)
            tl.store(tle.gpu.local_ptr(slot.k), tl.load(k_ptr + ck * BK * D + rows))
'''), (PRODUCER_V + "        w.commit(ck)\n",
       "    " + PRODUCER_V + "            w.commit(ck)\n")),
        ("rejected", "views.py:24: error: pipe events under a condition that is not affine",
         "[non-affine-if]")),
    "ping-pong readers on alternate tiles of one pipe": (
        ((PV_LOOP, PV_LOOP.replace("range(NK)", "range(NK // 2)")
          .replace("(ck)", "(2 * ck + 1)")),
         (QK_LOOP, QK_LOOP.replace("range(NK)", "range(NK // 2)").replace("(ck)", "(2 * ck)"))),
        ("rejected", "views.py:27: error: reader 'qk' of pipe 'kv' never waits index 0 that "
         "commit(ck) commits here", "[unconsumed]")),
}


@pytest.mark.parametrize("bug", list(VIEWS_BUGS))
def test_field_view_seeded_bugs_are_refused(tmp_path, capsys, bug):
    pairs, want = VIEWS_BUGS[bug]
    code, err = dump(tmp_path, capsys, variant(VIEWS, *pairs), name="views.py")
    expect(code, err, want)


MOE_PRODUCE = '''        s = w.acquire(t)
        tl.store(tle.gpu.local_ptr(s.rows), tl.load(x_ptr + ids[:, None] * D + cols[None, :]))
        tl.store(tle.gpu.local_ptr(s.ids), ids)
        w.commit(t)
'''


def test_moe_index_mistakes_are_refused(tmp_path, capsys):
    """A stage number given as the index (``t % 2``: non-affine), a stage loop reusing indices 0
    and 1 (phase-aliasing at the second use of stage 0), and the producer skipping every third
    tile (wait-never-committed at the reader's wait, phase-aliasing at the producer's commit)."""
    src = variant(MOE, ("s = w.acquire(t)", "s = w.acquire(t % 2)"),
                  ("w.commit(t)", "w.commit(t % 2)"))
    expect(*dump(tmp_path, capsys, src, name="moe.py"),
           ("rejected", "moe.py:23: error: index of w.acquire must be affine", "[non-affine]"))
    src = variant(MOE, ("    for t in range(n):\n        ids = tl.load(idx_ptr + t * BT + "
                        "tl.arange(0, BT))\n" + MOE_PRODUCE,
                        "    for u in range(n):\n        for st in range(2):\n"
                        "            t = 2 * u + st\n"
                        "            ids = tl.load(idx_ptr + t * BT + tl.arange(0, BT))\n"
                        + MOE_PRODUCE.replace("        ", "            ")
                        .replace("(t)", "(st)")),
                  ('''    for t in range(n):
        res = r.wait(t)
        rows = tl.load(tle.gpu.local_ptr(res.slot.rows))
        ids = tl.load(tle.gpu.local_ptr(res.slot.ids))
        r.release(t)
        tl.store''', '''    for u in range(n):
        for st in range(2):
            res = r.wait(st)
            rows = tl.load(tle.gpu.local_ptr(res.slot.rows))
            ids = tl.load(tle.gpu.local_ptr(res.slot.ids))
            r.release(st)
            tl.store'''))
    expect(*dump(tmp_path, capsys, src, name="moe.py"),
           ("rejected", "moe.py:28: error: commit(0) is use 1 of stage 0 of pipe 'kv' but has "
            "phase 0", "[phase-aliasing]"))
    src = variant(MOE, (MOE_PRODUCE, "        if t % 3 != 2:\n"
                        + MOE_PRODUCE.replace("        ", "            ")))
    expect(*dump(tmp_path, capsys, src, name="moe.py"),
           ("rejected", "moe.py:34: error: the reader waits index 2 of pipe 'kv' (wait(t)) that "
            "the writer never commits", "[wait-never-committed]", "[phase-aliasing]"))
