"""TLE-Pipe: SparseMLA prefill (DeepSeek-V3.2 sparse attention), three warp groups.

One program per (query token, block of BLOCK_H=64 heads). The topk indices of the token are walked
in K tiles of BK=64; each 576-wide kv row is kept as kv_l [64,256] + kv_r [64,256] (the 512 "main"
dims, which are also V) + tkv [64,64] (the RoPE tail), so every buffer has power-of-two sides.

    producer (default, 4 warps)      left (worker, 4 warps, 240 regs)   right (worker, 4 warps, 168)
    Q rows of the head block ─► q ─► q_l q_r q_tail      (one_shot SPSC)
    gather kv rows by index ──► kv ► kv_l kv_r tkv valid                  kv_r    (view: kv_r only)
      (capacity 2, tile ck)          S = Q·Kᵀ (512 + 64 dims), softmax
                                     alpha probs sum_exp ─► score ──────► alpha probs sum_exp
                                     O_l = O_l·alpha + P·kv_l  (cap. 1)   O_r = O_r·alpha + P·kv_r
    epilogue                         out[:, :256], lse, max_logits        out[:, 256:]

Only the left consumer touches Q (the right one only multiplies the left's probabilities with
kv_r), so q is a one-shot SPSC pipe read by the left alone. The probability tile is a field of the
score pipe rather than a free-standing `tle.gpu.alloc`: the left cannot overwrite it for tile ck+1
before the right released tile ck, and the verifier proves that. sum_exp is the left's running row
sum after tile ck; the right keeps the last one it saw, which after the loop is the final sum.

Deadlock-freedom (by hand): within iteration ck the order
  P.acquire/commit kv(ck) → L.wait kv(ck) → L.acquire/commit score(ck) → R.wait kv(ck), score(ck)
  → R.release score(ck), kv(ck) → L.release kv(ck)
is a complete schedule that respects program order, and every cross-partition edge points forward
in it: commit(ck) → wait(ck) inside iteration ck; release kv(ck-2) → acquire kv(ck) and release
score(ck-1) → acquire score(ck) from an earlier iteration. So the happens-before graph is acyclic
for every NK; q(0) is committed before the producer's loop and waited before the left's.

Shared memory (bf16 = 2 B): q 73,728 B (q_l 32 KiB + q_r 32 KiB + q_tail 8 KiB); kv 2 stages x
(32 KiB + 32 KiB + 8 KiB + 64 B) = 147,584 B; score 256 + 8,192 + 256 = 8,704 B; total 230,016 B
(224.6 KiB) of the 227 KiB Hopper allows, leaving 2,432 B for the mbarriers.

Grid order: programs renumber themselves so that the head blocks of one query token run in the
same wave and share their gathered kv rows through L2 (+13 % at SKV=128K, neutral at 8K).

Lazy rescale (as in the seesaw): the left's reference max of a row moves
only when a score exceeds it by more than 2^TAU (TAU = 8, log2 units), so after the first tiles
alpha is exactly 1, and both consumers' `tle.gpu.scale_rows(acc, alpha)` skip their 128 FMULs per
warp (lowering/lazy_scale.py); max_logits keeps the true max, lse uses the reference. sm_scale goes
into exp2's FFMA. Against rescaling every tile (interleaved A/B on the H200): +2.1 % at SKV = 8K,
+3.8 % at 128K.

Registers: the workers ask for [240, 168] (the left holds S, P and a 64x256 fp32 accumulator; the
right only the accumulator); the producer, the default partition, gets the rest of the 512 per
thread that the three warp groups share: 512 - 240 - 168 = 104.
"""

import triton.language as tl

import tle_compiler as tle

from .sparse_mla_common import (BK, D_HALF, D_MAIN, D_TAIL, LN2, LOG2E, head0_of, index_valid,
                                kv_rows, lazy_ref, lse_of, normalized, shift_of, token_of)


@tle.jit(num_warps=4)
def sparse_mla_pipe(q_ptr, kv_ptr, idx_ptr, out_ptr, lse_ptr, max_logits_ptr,
                    stride_q_s, stride_q_h, stride_kv_s, stride_idx_s, stride_o_s, stride_o_h,
                    stride_l_s, s_kv, sm_scale,
                    TOPK: tl.constexpr, BLOCK_H: tl.constexpr):
    NK = TOPK // BK
    # Renumber programs so the head blocks of one query token (which gather the same kv rows) run
    # in the same wave and share those rows through L2 (the grid is (s_q, h_q // BLOCK_H), launched
    # axis 0 first); the seesaw gained 14 % at SKV=128K from this.
    n_hb = tl.num_programs(1)
    lin = tl.program_id(1) * tl.num_programs(0) + tl.program_id(0)  # launch order
    pid_s = token_of(lin, n_hb)            # query token
    h0 = head0_of(lin, n_hb, BLOCK_H)      # first head of this program's block
    q_row = q_ptr + pid_s * stride_q_s + h0 * stride_q_h
    idx_row = idx_ptr + pid_s * stride_idx_s
    out_row = out_ptr + pid_s * stride_o_s + h0 * stride_o_h
    lse_row = lse_ptr + pid_s * stride_l_s + h0
    ml_row = max_logits_ptr + pid_s * stride_l_s + h0

    q = tle.pipe(capacity=1, one_shot=True,
                 q_l=tle.gpu.alloc([1, BLOCK_H, D_HALF], tl.bfloat16),
                 q_r=tle.gpu.alloc([1, BLOCK_H, D_HALF], tl.bfloat16),
                 q_tail=tle.gpu.alloc([1, BLOCK_H, D_TAIL], tl.bfloat16))
    kv = tle.pipe(capacity=2, readers=("left", "right"),
                  kv_l=tle.gpu.alloc([2, BK, D_HALF], tl.bfloat16),
                  kv_r=tle.gpu.alloc([2, BK, D_HALF], tl.bfloat16),
                  tkv=tle.gpu.alloc([2, BK, D_TAIL], tl.bfloat16),
                  valid=tle.gpu.alloc([2, BK], tl.int8))
    score = tle.pipe(capacity=1,
                     alpha=tle.gpu.alloc([1, BLOCK_H], tl.float32),
                     probs=tle.gpu.alloc([1, BLOCK_H, BK], tl.bfloat16),
                     sum_exp=tle.gpu.alloc([1, BLOCK_H], tl.float32))

    tle.gpu.warp_specialize(
        [(producer, (q, kv, q_row, stride_q_h, kv_ptr, stride_kv_s, idx_row, s_kv, NK, BLOCK_H)),
         (left, (q, kv, score, out_row, stride_o_h, lse_row, ml_row, sm_scale, NK, BLOCK_H)),
         (right, (kv, score, out_row, stride_o_h, NK, BLOCK_H))],
        [4, 4],
        [240, 168])


def producer(q, kv, q_row, stride_q_h, kv_ptr, stride_kv_s, idx_row, s_kv, NK,
             BLOCK_H: tl.constexpr):
    offs_h = tl.arange(0, BLOCK_H)
    offs_k = tl.arange(0, BK)
    offs_d = tl.arange(0, D_HALF)
    offs_t = tl.arange(0, D_TAIL)

    # Q is staged once; the left consumer reads it for every K tile.
    qw = q.writer()
    slot = qw.acquire(0)
    q_rows = q_row + offs_h[:, None] * stride_q_h
    tl.store(tle.gpu.local_ptr(slot.q_l), tl.load(q_rows + offs_d[None, :]))
    tl.store(tle.gpu.local_ptr(slot.q_r), tl.load(q_rows + D_HALF + offs_d[None, :]))
    tl.store(tle.gpu.local_ptr(slot.q_tail), tl.load(q_rows + D_MAIN + offs_t[None, :]))
    qw.commit(0)

    kw = kv.writer()
    for ck in range(NK):
        # Indices are read before acquire so their latency hides behind the wait for a free stage.
        t = tl.load(idx_row + ck * BK + offs_k)
        valid = index_valid(t, s_kv)
        # An invalid index is never dereferenced: its row is row 0 and its load is masked.
        rows = kv_rows(kv_ptr, stride_kv_s, t, valid)
        keep = valid[:, None]
        slot = kw.acquire(ck)
        tl.store(tle.gpu.local_ptr(slot.kv_l),
                 tl.load(rows + offs_d[None, :], mask=keep, other=0.0))
        tl.store(tle.gpu.local_ptr(slot.kv_r),
                 tl.load(rows + D_HALF + offs_d[None, :], mask=keep, other=0.0))
        tl.store(tle.gpu.local_ptr(slot.tkv),
                 tl.load(rows + D_MAIN + offs_t[None, :], mask=keep, other=0.0))
        tl.store(tle.gpu.local_ptr(slot.valid), valid.to(tl.int8))
        kw.commit(ck)


def left(q, kv, score, out_row, stride_o_h, lse_row, ml_row, sm_scale, NK,
         BLOCK_H: tl.constexpr):
    qk_scale = sm_scale * LOG2E  # softmax in base 2: exp(x*sm_scale) == exp2(x*sm_scale*log2(e))
    offs_h = tl.arange(0, BLOCK_H)
    offs_d = tl.arange(0, D_HALF)

    qr = q.reader()
    kr = kv.reader("left")
    sw = score.writer()
    qres = qr.wait(0)

    m_i = tl.full([BLOCK_H], float("-inf"), tl.float32)  # running row max (log2 units)
    ref = tl.full([BLOCK_H], float("-inf"), tl.float32)  # lazy reference max (log2 units)
    l_i = tl.zeros([BLOCK_H], tl.float32)                 # running row sum of exp2(s - ref)
    acc = tl.zeros([BLOCK_H, D_HALF], tl.float32)         # O[:, :256], unnormalised

    for ck in range(NK):
        kres = kr.wait(ck)
        # Operands are loaded where they are used: the lowering feeds shared-memory tiles to the
        # wgmma directly instead of holding Q (144 regs/thread) in registers.
        s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_l)),
                   tl.trans(tl.load(tle.gpu.local_ptr(kres.slot.kv_l))))
        s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_r)),
                   tl.trans(tl.load(tle.gpu.local_ptr(kres.slot.kv_r))), s)
        s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_tail)),
                   tl.trans(tl.load(tle.gpu.local_ptr(kres.slot.tkv))), s)
        valid = tl.load(tle.gpu.local_ptr(kres.slot.valid)) != 0
        s = tl.where(valid[None, :], s, float("-inf"))  # raw scores: sm_scale > 0 keeps the max

        mx = tl.max(s, 1) * qk_scale
        m_i = tl.maximum(m_i, mx)
        r_new = lazy_ref(ref, mx)    # lazy: after the first tiles alpha is exactly 1
        r_use = shift_of(r_new)      # 0 while every index so far is invalid (no NaN)
        alpha = tl.exp2(ref - r_use)
        p = tl.exp2(s * qk_scale - r_use[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        ref = r_new
        p16 = p.to(tl.bfloat16)

        # Publish before the left PV so the right consumer's PV overlaps this one.
        sslot = sw.acquire(ck)
        tl.store(tle.gpu.local_ptr(sslot.alpha), alpha)
        tl.store(tle.gpu.local_ptr(sslot.probs), p16)
        tl.store(tle.gpu.local_ptr(sslot.sum_exp), l_i)
        sw.commit(ck)

        acc = tle.gpu.scale_rows(acc, alpha)
        acc = tl.dot(p16, tl.load(tle.gpu.local_ptr(kres.slot.kv_l)), acc)
        kr.release(ck)

    # A row with no valid index has l_i == 0: out 0, max_logits -inf (m_i stayed -inf), lse +inf.
    out = normalized(acc, l_i)
    tl.store(out_row + offs_h[:, None] * stride_o_h + offs_d[None, :], out.to(tl.bfloat16))
    tl.store(ml_row + offs_h, m_i * LN2)  # natural-log units: max(score * sm_scale)
    tl.store(lse_row + offs_h, lse_of(l_i, ref))


def right(kv, score, out_row, stride_o_h, NK, BLOCK_H: tl.constexpr):
    offs_h = tl.arange(0, BLOCK_H)
    offs_d = tl.arange(0, D_HALF)

    kr = kv.reader("right", fields=("kv_r",))
    sr = score.reader()

    l_i = tl.zeros([BLOCK_H], tl.float32)
    acc = tl.zeros([BLOCK_H, D_HALF], tl.float32)  # O[:, 256:], unnormalised

    for ck in range(NK):
        kres = kr.wait(ck)
        sres = sr.wait(ck)
        alpha = tl.load(tle.gpu.local_ptr(sres.slot.alpha))
        l_i = tl.load(tle.gpu.local_ptr(sres.slot.sum_exp))  # the left's row sum through tile ck
        acc = tle.gpu.scale_rows(acc, alpha)
        acc = tl.dot(tl.load(tle.gpu.local_ptr(sres.slot.probs)),
                     tl.load(tle.gpu.local_ptr(kres.slot.kv_r)), acc)
        sr.release(ck)
        kr.release(ck)

    out = normalized(acc, l_i)
    tl.store(out_row + offs_h[:, None] * stride_o_h + D_HALF + offs_d[None, :],
             out.to(tl.bfloat16))


DEFAULT_CONFIG = {
    # q [s_q, h_q, 576] bf16, kv [s_kv, 1, 576] bf16, indices [s_q, 1, topk] int32,
    # out [s_q, h_q, 512] bf16, lse / max_logits [s_q, h_q] fp32; last dims contiguous.
    "signature": {
        "q_ptr": "*bf16", "kv_ptr": "*bf16", "idx_ptr": "*i32", "out_ptr": "*bf16",
        "lse_ptr": "*fp32", "max_logits_ptr": "*fp32",
        "stride_q_s": "i32", "stride_q_h": "i32", "stride_kv_s": "i32", "stride_idx_s": "i32",
        "stride_o_s": "i32", "stride_o_h": "i32", "stride_l_s": "i32",
        "s_kv": "i32", "sm_scale": "fp32",
        "TOPK": "constexpr", "BLOCK_H": "constexpr",
    },
    "constexprs": {"TOPK": 2048, "BLOCK_H": 64},
    "num_warps": 4,                  # the producer (default partition)
    "grid": ("s_q", "h_q // BLOCK_H"),
}
