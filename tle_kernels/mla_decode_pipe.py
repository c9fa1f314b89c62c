"""TLE-Pipe: dense MLA decode (FlashMLA's ``flash_mla_with_kvcache``, bf16), split-KV, three warp
groups.

The dataflow of the SparseMLA prefill pipe kernel (sparse_mla_pipe.py) with another work item: a
program handles (request b, kv head g, block of BLOCK_H = 64 query rows, split s). The rows of kv
head g are its s_q * (h_q / h_kv) query rows, flattened as (query j, head) with the head fastest;
a row block past the last row is masked (its Q rows load as zeros, its outputs are not stored).
Split s of request b walks the positions [s * chunk, min(seqlen, (s + 1) * chunk)) of the paged
KV cache, chunk = ceil(ceil(seqlen / n_split) / 64) * 64: a page holds 64 tokens, one K tile, so
each tile reads one block-table entry and a split starts on a page boundary.

    producer (default, 4 warps)      left (worker, 4 warps, 240 regs)   right (worker, 4 warps, 168)
    Q rows of the row block ───► q ─► q_l q_r q_tail     (one_shot SPSC)
    one page of k_cache ──────► kv ─► kv_l kv_r tkv                       kv_r    (view: kv_r only)
      (capacity 2, tile ck)           S = Q·Kᵀ (512 + 64 dims), mask, softmax
                                      alpha probs sum_exp ─► score ─────► alpha probs sum_exp
                                      O_l = O_l·alpha + P·kv_l (cap. 1)   O_r = O_r·alpha + P·kv_r
    epilogue                          out[:, :256], lse                   out[:, 256:]

Masks: position p of tile ck is lo + 64·ck + k; p >= hi is outside the split (its K row loads as
zeros, so P·V never meets uninitialised cache rows; its score is -inf); with CAUSAL, query j sees
positions p < seqlen - s_q + j + 1, a per-(row, position) mask the left applies to the scores.

Two K producers, chosen by the constexpr TMA (0 or 1; the compiler reads the kernel specialised
to it), as in the seesaw decode (mla_decode_seesaw.py): TMA = 0 gathers a page's rows with
cp.async, the positions at or past hi masked to zeros; TMA = 1 copies each piece as one TMA box
through k_desc / tail_desc (rank-4 descriptors over k_cache, mla_decode_launch.k_descriptors) at
token coordinate shift = n - 64 for a tile with n positions before hi (page_shift), so those
positions never arrive and slot row r holds position lo + 64·ck + shift + r, a real one iff
r >= -shift (masked_by_position). The launcher takes TMA wherever k_cache allows the
descriptors; the cp.async launch passes k_cache in their places (unused).

The trip count NK = ceil(max(hi - lo, 0) / 64) is read from cache_seqlens once, in the kernel body
before warp_specialize, and the same value is handed to every partition: for the verifier it is an
opaque param (a kernel-level integer computed from data), and the protocol is proved for every
value of it, exactly as for the prefill's NK.

Outputs (SPLIT constexpr): SPLIT = False (one split) writes out [b, s_q, h_q, 512] bf16 and lse
[b, h_q, s_q] fp32 (natural log; a row without a token: out 0, lse +inf). SPLIT = True writes the
split's o_part [b, n_split, s_q, h_q, 512] fp32 (normalised by the split's own row sum) and
lse_part [b, n_split, s_q, h_q] fp32 (a row without a token in the split: 0 and -inf), which
tle_kernels/mla_decode_combine.py merges by their lse. One kernel covers both through the strides
it is given (mla_decode_pipe_launch.py).

The tricks of the prefill kernel are kept: the lazy reference max (alpha exactly 1 after the first
tiles, so ``tle.gpu.scale_rows`` skips its multiplies), sm_scale folded into exp2's FFMA, the
block-table entry read before the acquire so its latency hides behind the wait for a free stage,
wgmma operands loaded from the slots where they are used, and the probabilities published before
the left's own PV so the right's PV overlaps it.

Shared memory (bf16 = 2 B): q 73,728 B; kv 2 stages x 73,728 B = 147,456 B (no validity field: the
left computes each position's mask itself); score 256 + 8,192 + 256 = 8,704 B; total 229,888 B.
Registers: as the prefill kernel, [240, 168] for the workers, 104 for the producer.
"""

import triton.language as tl

import tle_compiler as tle

from .mla_decode_common import (block_rows, masked_by_position, needs_mask, page_shift,
                                q_box_row, q_row_ptrs, row_limit, row_valid, row_offsets,
                                split_range, store_half, store_lse, work_item)
from .sparse_mla_common import (BK, D_HALF, D_MAIN, D_TAIL, LOG2E, kv_rows, lazy_ref, normalized,
                                shift_of)


@tle.jit(num_warps=4)
def mla_decode_pipe(q_ptr, k_ptr, k_desc, tail_desc, q_desc, q_tail_desc, bt_ptr, seqlens_ptr,
                    out_ptr, lse_ptr,
                    stride_q_b, stride_q_s, stride_q_h,
                    stride_k_blk, stride_k_tok, stride_k_h, stride_bt_b,
                    stride_o_b, stride_o_split, stride_o_s, stride_o_h,
                    stride_l_b, stride_l_split, stride_l_s, stride_l_h,
                    s_q, h_kv, heads_per_kv, sm_scale,
                    BLOCK_H: tl.constexpr, CAUSAL: tl.constexpr, SPLIT: tl.constexpr,
                    TMA: tl.constexpr, QTMA: tl.constexpr):
    n_rows, rb, g, b, split = work_item(s_q, h_kv, heads_per_kv, BLOCK_H)
    # This split's positions [lo, hi) and its K tiles, read once and shared by every partition.
    seqlen, lo, hi, NK = split_range(seqlens_ptr, b, split)

    q_base = q_ptr + b * stride_q_b
    k_head = k_ptr + g * stride_k_h
    bt_row = bt_ptr + b * stride_bt_b + lo // BK  # the block-table entry of tile 0
    out_base = out_ptr + b * stride_o_b + split * stride_o_split
    lse_base = lse_ptr + b * stride_l_b + split * stride_l_split

    q = tle.pipe(capacity=1, one_shot=True,
                 q_l=tle.gpu.alloc([1, BLOCK_H, D_HALF], tl.bfloat16),
                 q_r=tle.gpu.alloc([1, BLOCK_H, D_HALF], tl.bfloat16),
                 q_tail=tle.gpu.alloc([1, BLOCK_H, D_TAIL], tl.bfloat16))
    kv = tle.pipe(capacity=2, readers=("left", "right"),
                  kv_l=tle.gpu.alloc([2, BK, D_HALF], tl.bfloat16),
                  kv_r=tle.gpu.alloc([2, BK, D_HALF], tl.bfloat16),
                  tkv=tle.gpu.alloc([2, BK, D_TAIL], tl.bfloat16))
    score = tle.pipe(capacity=1,
                     alpha=tle.gpu.alloc([1, BLOCK_H], tl.float32),
                     probs=tle.gpu.alloc([1, BLOCK_H, BK], tl.bfloat16),
                     sum_exp=tle.gpu.alloc([1, BLOCK_H], tl.float32))

    tle.gpu.warp_specialize(
        [(producer, (q, kv, q_base, stride_q_s, stride_q_h, k_head, stride_k_blk, stride_k_tok,
                     k_desc, tail_desc, q_desc, q_tail_desc, bt_row, lo, hi, NK, b, rb, g,
                     n_rows, h_kv, heads_per_kv, BLOCK_H, TMA, QTMA)),
         (left, (q, kv, score, out_base, stride_o_s, stride_o_h, lse_base, stride_l_s, stride_l_h,
                 sm_scale, lo, hi, NK, seqlen, s_q, rb, g, n_rows, heads_per_kv,
                 BLOCK_H, CAUSAL, SPLIT, TMA)),
         (right, (kv, score, out_base, stride_o_s, stride_o_h, NK, rb, g, n_rows, heads_per_kv,
                  BLOCK_H, SPLIT))],
        [4, 4],
        [240, 168])


def producer(q, kv, q_base, stride_q_s, stride_q_h, k_head, stride_k_blk, stride_k_tok, k_desc,
             tail_desc, q_desc, q_tail_desc, bt_row, lo, hi, NK, b, rb, g, n_rows, h_kv,
             heads_per_kv, BLOCK_H: tl.constexpr, TMA: tl.constexpr, QTMA: tl.constexpr):
    offs_k = tl.arange(0, BK)
    offs_d = tl.arange(0, D_HALF)
    offs_t = tl.arange(0, D_TAIL)

    # Q is staged once; the left consumer reads it for every K tile.
    r = block_rows(rb, n_rows, BLOCK_H)
    q_rows = q_row_ptrs(q_base, stride_q_s, stride_q_h, r, g, heads_per_kv)
    keep_q = row_valid(rb, n_rows, BLOCK_H)[:, None]
    qw = q.writer()
    slot = qw.acquire(0)
    if QTMA:
        # three TMA boxes of q viewed as rows [b * s_q * h_q, 576], as the seesaw decode copies
        # its Q (mla_decode_launch.q_tma_reason: the block's rows are consecutive there); rows
        # past the kv head's last one are other rows of q or zeros, never stored
        row0 = q_box_row(b, n_rows, h_kv, g, heads_per_kv, rb, BLOCK_H)
        tle.gpu.tma_load(slot.q_l, q_desc, [row0, 0])
        tle.gpu.tma_load(slot.q_r, q_desc, [row0, D_HALF])
        tle.gpu.tma_load(slot.q_tail, q_tail_desc, [row0, D_MAIN])
    else:
        tl.store(tle.gpu.local_ptr(slot.q_l),
                 tl.load(q_rows + offs_d[None, :], mask=keep_q, other=0.0))
        tl.store(tle.gpu.local_ptr(slot.q_r),
                 tl.load(q_rows + D_HALF + offs_d[None, :], mask=keep_q, other=0.0))
        tl.store(tle.gpu.local_ptr(slot.q_tail),
                 tl.load(q_rows + D_MAIN + offs_t[None, :], mask=keep_q, other=0.0))
    qw.commit(0)

    kw = kv.writer()
    for ck in range(NK):
        # The page of tile ck is read before acquire so its latency hides behind the wait for a
        # free stage.
        page = tl.load(bt_row + ck)
        if TMA:
            # Each piece is one TMA box [1, BK, 1, width] of the page at token coordinate shift
            # = n - BK (page_shift): the positions at or past hi (the tail of the split's last
            # page) never arrive, the box's rows before the page are zeros.
            shift = page_shift(lo, hi, ck)
            slot = kw.acquire(ck)
            tle.gpu.tma_load(slot.kv_l, k_desc, [page, shift, g, 0])
            tle.gpu.tma_load(slot.kv_r, k_desc, [page, shift, g, D_HALF])
            tle.gpu.tma_load(slot.tkv, tail_desc, [page, shift, g, D_MAIN])
            kw.commit(ck)
        else:
            # Positions at or past hi (the tail of the last page) load as zeros.
            valid = lo + ck * BK + offs_k < hi
            rows = kv_rows(k_head + page.to(tl.int64) * stride_k_blk, stride_k_tok, offs_k,
                           valid)
            keep = valid[:, None]
            slot = kw.acquire(ck)
            tl.store(tle.gpu.local_ptr(slot.kv_l),
                     tl.load(rows + offs_d[None, :], mask=keep, other=0.0))
            tl.store(tle.gpu.local_ptr(slot.kv_r),
                     tl.load(rows + D_HALF + offs_d[None, :], mask=keep, other=0.0))
            tl.store(tle.gpu.local_ptr(slot.tkv),
                     tl.load(rows + D_MAIN + offs_t[None, :], mask=keep, other=0.0))
            kw.commit(ck)


def left(q, kv, score, out_base, stride_o_s, stride_o_h, lse_base, stride_l_s, stride_l_h,
         sm_scale, lo, hi, NK, seqlen, s_q, rb, g, n_rows, heads_per_kv,
         BLOCK_H: tl.constexpr, CAUSAL: tl.constexpr, SPLIT: tl.constexpr, TMA: tl.constexpr):
    qk_scale = sm_scale * LOG2E  # softmax in base 2: exp(x*sm_scale) == exp2(x*sm_scale*log2(e))
    offs_k = tl.arange(0, BK)
    r = block_rows(rb, n_rows, BLOCK_H)
    lim = row_limit(seqlen, s_q, hi, r, heads_per_kv, CAUSAL)

    qr = q.reader()
    kr = kv.reader("left")
    sw = score.writer()
    qres = qr.wait(0)

    ref = tl.full([BLOCK_H], float("-inf"), tl.float32)  # lazy reference max (log2 units)
    l_i = tl.zeros([BLOCK_H], tl.float32)                 # running row sum of exp2(s - ref)
    acc = tl.zeros([BLOCK_H, D_HALF], tl.float32)         # O[:, :256], unnormalised

    for ck in range(NK):
        kres = kr.wait(ck)
        s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_l)),
                   tl.trans(tl.load(tle.gpu.local_ptr(kres.slot.kv_l))))
        s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_r)),
                   tl.trans(tl.load(tle.gpu.local_ptr(kres.slot.kv_r))), s)
        s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_tail)),
                   tl.trans(tl.load(tle.gpu.local_ptr(kres.slot.tkv))), s)
        if needs_mask(lo + (ck + 1) * BK, seqlen, s_q, hi, CAUSAL):  # only the split's last tiles
            if TMA:  # slot row r is position lo + ck·BK + shift + r (page_shift)
                s = masked_by_position(s, lo, ck, page_shift(lo, hi, ck), lim, CAUSAL)
            else:
                pos = lo + ck * BK + offs_k
                s = tl.where(pos[None, :] < lim[:, None], s, float("-inf"))  # sm_scale > 0: max

        mx = tl.max(s, 1) * qk_scale
        r_new = lazy_ref(ref, mx)    # lazy: after the first tiles alpha is exactly 1
        r_use = shift_of(r_new)      # 0 while a row has seen no position (no NaN)
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

    # A row that saw no position has l_i == 0: out 0, and lse +inf (one split) or -inf (a part).
    keep = row_valid(rb, n_rows, BLOCK_H)
    out = normalized(acc, l_i)
    o_row = row_offsets(r, g, heads_per_kv, stride_o_s, stride_o_h)
    l_ptrs = lse_base + row_offsets(r, g, heads_per_kv, stride_l_s, stride_l_h)
    store_half(out_base, o_row, out, keep, rb, n_rows, BLOCK_H, SPLIT)
    store_lse(l_ptrs, l_i, ref, keep, SPLIT)


def right(kv, score, out_base, stride_o_s, stride_o_h, NK, rb, g, n_rows, heads_per_kv,
          BLOCK_H: tl.constexpr, SPLIT: tl.constexpr):
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

    keep = row_valid(rb, n_rows, BLOCK_H)
    out = normalized(acc, l_i)
    r = block_rows(rb, n_rows, BLOCK_H)
    o_row = row_offsets(r, g, heads_per_kv, stride_o_s, stride_o_h)
    store_half(out_base + D_HALF, o_row, out, keep, rb, n_rows, BLOCK_H, SPLIT)


DEFAULT_CONFIG = {
    # q [b, s_q, h_q, 576] bf16, k_cache [num_blocks, 64, h_kv, 576] bf16, block_table
    # [b, max_blocks] int32, cache_seqlens [b] int32; one split: out [b, s_q, h_q, 512] bf16,
    # lse [b, h_q, s_q] fp32 (SPLIT=True: o_part fp32 and lse_part fp32, the same strides by name).
    "signature": {
        "q_ptr": "*bf16", "k_ptr": "*bf16",
        "k_desc": "tensordesc<bf16[1, 64, 1, 256]>", "tail_desc": "tensordesc<bf16[1, 64, 1, 64]>",
        "q_desc": "tensordesc<bf16[64, 256]>", "q_tail_desc": "tensordesc<bf16[64, 64]>",
        "bt_ptr": "*i32", "seqlens_ptr": "*i32",
        "out_ptr": "*bf16", "lse_ptr": "*fp32",
        "stride_q_b": "i32", "stride_q_s": "i32", "stride_q_h": "i32",
        "stride_k_blk": "i32", "stride_k_tok": "i32", "stride_k_h": "i32", "stride_bt_b": "i32",
        "stride_o_b": "i32", "stride_o_split": "i32", "stride_o_s": "i32", "stride_o_h": "i32",
        "stride_l_b": "i32", "stride_l_split": "i32", "stride_l_s": "i32", "stride_l_h": "i32",
        "s_q": "i32", "h_kv": "i32", "heads_per_kv": "i32", "sm_scale": "fp32",
        "BLOCK_H": "constexpr", "CAUSAL": "constexpr", "SPLIT": "constexpr", "TMA": "constexpr",
        "QTMA": "constexpr",
    },
    "constexprs": {"BLOCK_H": 64, "CAUSAL": False, "SPLIT": False, "TMA": 0, "QTMA": 0},
    "num_warps": 4,                  # the producer (default partition)
    "grid": ("b * h_kv * cdiv(s_q * h_q // h_kv, BLOCK_H)", "n_split"),
}
