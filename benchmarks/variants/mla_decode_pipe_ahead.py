"""TLE-Pipe dense MLA decode with the left's QK one tile ahead: an A/B candidate for
tle_kernels/mla_decode_pipe.py, not the bundled kernel (measure it with ``python3
benchmarks/ab_decode.py --kernel pipe benchmarks/variants/mla_decode_pipe_ahead.py --anchor
LIB``; checked on the CPU by tests/test_pipe_ahead_variant.py).

What it changes. In the bundled kernel the left waits for tile ck, issues its QK (576 dims),
waits for it, runs the softmax and issues P·V_L: while the softmax runs, the tensor core has only
the right's P·V_R queued. Here the left issues tile ck + 1's QK before tile ck's softmax
(FlashAttention-3's intra-warpgroup overlap), keeping two score tiles in registers (s, s_next):

- The left holds two reader names of kv: ``left_qk`` (all fields: waits tile ck + 1 for its
  QK, releases it once tile ck's P·V_L retired) and ``left_pv`` (``fields=("kv_l",)``: waits
  tile ck for P·V_L, releases it after). One reader could not: waiting tile ck again while it is
  held is ``wait-on-held-stage``, and a wait result carried across the loop is ``unknown-slot``.
- The producer copies one extra tile, NK, after the split's last: it holds no position (its TMA
  box lies wholly past the split's end, all zeros; the cp.async path masks every row), so the
  look-ahead always has a tile; every reader waits and releases it. Its block-table entry is the
  last tile's again (a split with no tile addresses the request's entry 0, masked).
- NK is handed to the partitions as ``tl.maximum(NK, 0)``: never negative anyway, written so the
  verifier knows it (the extra tile makes the protocol depend on NK >= 0; ``tle.assume`` on a
  value loaded from memory is refused).
- ``wgmma_pipeline=True``, so the mask's ``if`` does not drain the in-flight QK; the QK chains
  are written inline (through a helper function, the chained dots' intermediate results stay
  alive as the wait's dependencies and ptxas, copying them, serializes the wgmmas: C7517).

The rest (the work item, the masks, the two K producers, the outputs, shared memory and
registers) is the bundled kernel's: tle_kernels/mla_decode_pipe.py's docstring says it.
"""

import triton.language as tl

import tle_compiler as tle

from tle_kernels.mla_decode_common import (block_rows, masked_by_position, needs_mask,
                                           page_shift, q_row_ptrs, row_limit, row_valid,
                                           row_offsets, split_range, store_half, store_lse,
                                           work_item)
from tle_kernels.sparse_mla_common import (BK, D_HALF, D_MAIN, D_TAIL, LOG2E, kv_rows, lazy_ref,
                                           normalized, shift_of)


@tle.jit(num_warps=4, wgmma_pipeline=True)
def mla_decode_pipe(q_ptr, k_ptr, k_desc, tail_desc, bt_ptr, seqlens_ptr, out_ptr, lse_ptr,
                    stride_q_b, stride_q_s, stride_q_h,
                    stride_k_blk, stride_k_tok, stride_k_h, stride_bt_b,
                    stride_o_b, stride_o_split, stride_o_s, stride_o_h,
                    stride_l_b, stride_l_split, stride_l_s, stride_l_h,
                    s_q, h_kv, heads_per_kv, sm_scale,
                    BLOCK_H: tl.constexpr, CAUSAL: tl.constexpr, SPLIT: tl.constexpr,
                    TMA: tl.constexpr):
    n_rows, rb, g, b, split = work_item(s_q, h_kv, heads_per_kv, BLOCK_H)
    # This split's positions [lo, hi) and its K tiles, read once and shared by every partition.
    seqlen, lo, hi, NK0 = split_range(seqlens_ptr, b, split)
    # NK0 is never negative; written as a maximum, the verifier knows it too (the look-ahead's
    # extra tile makes the protocol depend on it)
    NK = tl.maximum(NK0, 0)

    q_base = q_ptr + b * stride_q_b
    k_head = k_ptr + g * stride_k_h
    bt_row = bt_ptr + b * stride_bt_b + lo // BK  # the block-table entry of tile 0
    out_base = out_ptr + b * stride_o_b + split * stride_o_split
    lse_base = lse_ptr + b * stride_l_b + split * stride_l_split

    q = tle.pipe(capacity=1, one_shot=True,
                 q_l=tle.gpu.alloc([1, BLOCK_H, D_HALF], tl.bfloat16),
                 q_r=tle.gpu.alloc([1, BLOCK_H, D_HALF], tl.bfloat16),
                 q_tail=tle.gpu.alloc([1, BLOCK_H, D_TAIL], tl.bfloat16))
    kv = tle.pipe(capacity=2, readers=("left_qk", "left_pv", "right"),
                  kv_l=tle.gpu.alloc([2, BK, D_HALF], tl.bfloat16),
                  kv_r=tle.gpu.alloc([2, BK, D_HALF], tl.bfloat16),
                  tkv=tle.gpu.alloc([2, BK, D_TAIL], tl.bfloat16))
    score = tle.pipe(capacity=1,
                     alpha=tle.gpu.alloc([1, BLOCK_H], tl.float32),
                     probs=tle.gpu.alloc([1, BLOCK_H, BK], tl.bfloat16),
                     sum_exp=tle.gpu.alloc([1, BLOCK_H], tl.float32))

    tle.gpu.warp_specialize(
        [(producer, (q, kv, q_base, stride_q_s, stride_q_h, k_head, stride_k_blk, stride_k_tok,
                     k_desc, tail_desc, bt_row, lo, hi, NK, rb, g, n_rows, heads_per_kv,
                     BLOCK_H, TMA)),
         (left, (q, kv, score, out_base, stride_o_s, stride_o_h, lse_base, stride_l_s, stride_l_h,
                 sm_scale, lo, hi, NK, seqlen, s_q, rb, g, n_rows, heads_per_kv,
                 BLOCK_H, CAUSAL, SPLIT, TMA)),
         (right, (kv, score, out_base, stride_o_s, stride_o_h, NK, rb, g, n_rows, heads_per_kv,
                  BLOCK_H, SPLIT))],
        [4, 4],
        [240, 168])


def producer(q, kv, q_base, stride_q_s, stride_q_h, k_head, stride_k_blk, stride_k_tok, k_desc,
             tail_desc, bt_row, lo, hi, NK, rb, g, n_rows, heads_per_kv, BLOCK_H: tl.constexpr,
             TMA: tl.constexpr):
    offs_k = tl.arange(0, BK)
    offs_d = tl.arange(0, D_HALF)
    offs_t = tl.arange(0, D_TAIL)

    # Q is staged once; the left consumer reads it for every K tile.
    r = block_rows(rb, n_rows, BLOCK_H)
    q_rows = q_row_ptrs(q_base, stride_q_s, stride_q_h, r, g, heads_per_kv)
    keep_q = row_valid(rb, n_rows, BLOCK_H)[:, None]
    qw = q.writer()
    slot = qw.acquire(0)
    tl.store(tle.gpu.local_ptr(slot.q_l), tl.load(q_rows + offs_d[None, :], mask=keep_q, other=0.0))
    tl.store(tle.gpu.local_ptr(slot.q_r),
             tl.load(q_rows + D_HALF + offs_d[None, :], mask=keep_q, other=0.0))
    tl.store(tle.gpu.local_ptr(slot.q_tail),
             tl.load(q_rows + D_MAIN + offs_t[None, :], mask=keep_q, other=0.0))
    qw.commit(0)

    kw = kv.writer()
    for ck in range(NK + 1):
        # The page of tile ck is read before acquire so its latency hides behind the wait for a
        # free stage. Tile NK, one past the split's last, holds no position (all zeros): the
        # left waits for it when it issues the QK one tile ahead; it takes the last tile's
        # block-table entry again, and a split with no tile the request's entry 0 (masked: its
        # page is never used, the entry is only addressed).
        entry = tl.where(NK > 0, tl.minimum(ck, NK - 1), -(lo // BK))
        page = tl.load(bt_row + entry, mask=NK > 0, other=0)
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
    kq = kv.reader("left_qk")                     # the QK's view: every field, one tile ahead
    kp = kv.reader("left_pv", fields=("kv_l",))   # P·V_L's view of the same tiles
    sw = score.writer()
    qres = qr.wait(0)

    ref = tl.full([BLOCK_H], float("-inf"), tl.float32)  # lazy reference max (log2 units)
    l_i = tl.zeros([BLOCK_H], tl.float32)                 # running row sum of exp2(s - ref)
    acc = tl.zeros([BLOCK_H, D_HALF], tl.float32)         # O[:, :256], unnormalised

    kres = kq.wait(0)
    s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_l)),
               tl.trans(tl.load(tle.gpu.local_ptr(kres.slot.kv_l))))
    s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_r)),
               tl.trans(tl.load(tle.gpu.local_ptr(kres.slot.kv_r))), s)
    s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_tail)),
               tl.trans(tl.load(tle.gpu.local_ptr(kres.slot.tkv))), s)
    kq.release(0)
    for ck in range(NK):
        # tile ck + 1's QK goes to the tensor core before tile ck's softmax, which it hides
        knext = kq.wait(ck + 1)
        s_next = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_l)),
                        tl.trans(tl.load(tle.gpu.local_ptr(knext.slot.kv_l))))
        s_next = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_r)),
                        tl.trans(tl.load(tle.gpu.local_ptr(knext.slot.kv_r))), s_next)
        s_next = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_tail)),
                        tl.trans(tl.load(tle.gpu.local_ptr(knext.slot.tkv))), s_next)
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

        vres = kp.wait(ck)
        acc = tle.gpu.scale_rows(acc, alpha)
        acc = tl.dot(p16, tl.load(tle.gpu.local_ptr(vres.slot.kv_l)), acc)
        kp.release(ck)
        kq.release(ck + 1)
        s = s_next
    kp.wait(NK)      # the extra tile: nothing to read
    kp.release(NK)

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
    kr.wait(NK)      # the extra tile: nothing to read
    kr.release(NK)

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
        "bt_ptr": "*i32", "seqlens_ptr": "*i32",
        "out_ptr": "*bf16", "lse_ptr": "*fp32",
        "stride_q_b": "i32", "stride_q_s": "i32", "stride_q_h": "i32",
        "stride_k_blk": "i32", "stride_k_tok": "i32", "stride_k_h": "i32", "stride_bt_b": "i32",
        "stride_o_b": "i32", "stride_o_split": "i32", "stride_o_s": "i32", "stride_o_h": "i32",
        "stride_l_b": "i32", "stride_l_split": "i32", "stride_l_s": "i32", "stride_l_h": "i32",
        "s_q": "i32", "h_kv": "i32", "heads_per_kv": "i32", "sm_scale": "fp32",
        "BLOCK_H": "constexpr", "CAUSAL": "constexpr", "SPLIT": "constexpr", "TMA": "constexpr",
    },
    "constexprs": {"BLOCK_H": 64, "CAUSAL": False, "SPLIT": False, "TMA": 0},
    "num_warps": 4,                  # the producer (default partition)
    "grid": ("b * h_kv * cdiv(s_q * h_q // h_kv, BLOCK_H)", "n_split"),
}
