"""The seesaw SparseMLA prefill with FlashMLA's topk_length ([s_q] int32), and optionally its
attn_sink (constexpr HAS_SINK): persistent, each program walking the K-tile pairs of its items.

Query token s uses only its first n = clamp(topk_length[s], 0, TOPK) index slots; the others are
invalid (masked, never dereferenced: the producer does not even read their indices, they count as
-1). Per-row early stop: item i (query token i // n_hb, head block i % n_hb) owns
max(1, ceil(n / 128)) K-tile pairs (``mla_decode_parts.request_pairs``: an odd tile count's
partner tile is all slots past n, fully masked; an empty row still owns one fully masked pair, so
that its epilogue writes out 0, lse +inf, max_logits -inf), so a row runs only the pairs it needs
instead of masking all TOPK slots.

Persistent, as the plain seesaw (tle_kernels/sparse_mla_seesaw.py): program k of P (one per SM,
or one per item when there are fewer items; ``api.launch_args``) takes items k, k + P, k + 2P,
... . Their pair counts differ from row to row, so the program cannot loop over items with a
pair loop inside (a loop over an opaque count may not sit inside another loop for the protocol to
be proved for every value: docs/semantics.md, the cutoff theorem's fragment). Instead, as the MLA
decode seesaw walks a batch's requests (tle_kernels/mla_decode_seesaw.py), the program walks the
flat sequence of its items' pairs with ONE loop ``for p in range(NP)``: the kernel body computes
NP, the sum of its items' pair counts (``chunk_pairs``: one masked vector load of topk_length
per 128 items), before ``warp_specialize``, and every partition carries the same walk state (the
pair's item and the item's pairs left) and advances it identically after an item's last pair
(the next item's length read with one scalar load; the producer reads it one item ahead, since
its next pair's index loads need it at once). NP is one opaque param for the verifier, which
proves the protocol for every value of it (tle-dump: "verified for every value of NP").

The schedule is the plain seesaw's, pair for pair: the producer's gathers and fill order, the
consumers' pair loop (pipes indexed by the pair p), the one-directional max exchange, the lazy
rescale, the mid-pair releases, consumer0's P1·V1_L left in flight across the back-edge
(``wgmma_pipeline=True``) and the deadlock argument (its docstring). What the walk changes:

- Q goes through its capacity-1 pipe at every pair (index p): the producer acquires and commits
  the slot each pair but stages an item's Q rows only at its first pair (the slot keeps them);
  each consumer waits for it before its QK and releases it right after. The producer acquires it
  after kv0's copies of the pair (see the producer), so the pair's first copies overlap the
  previous pair as in the plain seesaw, and the next item's Q is loaded once both consumers
  finished the current item's last QK, while they finish its last pair.
- An item ends at the end of its last pair (``left == 0``): each consumer, under one ``if`` that
  issues no wgmma (so the pairs that skip it keep P1·V1_L in flight: docs/lowering.md), loads the
  next item's q RoPE tail into registers (its latency hides behind the stores), stores its output
  half normalised in place (and lse, or max_logits), and starts the next item from nothing.
- The producer's index loads of a pair come before its first acquire (kv0's), so their latency
  hides behind that wait, as in the plain seesaw.

No item is recomputed (the plain seesaw's short last round repeats the last item): a program
with fewer items ends earlier. The launch (tle_kernels/sparse_mla_seesaw_sink_topk_launch.py)
splits a partial last round into topk pieces as for the plain seesaw; the pieces run this kernel
too, each with its own length. With HAS_SINK the epilogue adds exp(attn_sink[h]) to each row's
denominator (``sink_normalized`` of tle_kernels/sparse_mla_common.py); lse and max_logits stay
those of the scores.

Shared memory and register budgets are the plain seesaw's (230,528 B; [224, 224], the producer
64).

The three partitions take ``ROPE`` as the plain seesaw's do (1: rows carry the 64-dim RoPE tail
after their 512 main dims; 0: they have none): every tail gather, q-tail load and tail dot sits
under ``if ROPE:``, and a kernel passes it as a literal, so the frontend folds it while it builds
the kernel. This kernel passes 1 (its code is what it was before the parameter existed);
tle_kernels/sparse_mla_seesaw_d512_topk_length.py passes 0 over pipes without the tail fields.
"""

import triton.language as tl

import tle_compiler as tle

from .mla_decode_parts import SCHED_CHUNK, request_pairs
from .sparse_mla_common import (BK, D_HALF, D_MAIN, D_TAIL, LN2, LOG2E, head0_of, head_index,
                                head_rows, index_valid, kv_rows, lazy_ref, lse_of, normalized,
                                q_token_of, rebase, shift_of, sink_normalized, token_of)
from .sparse_mla_seesaw import q_tail_of, seesaw_pipes


@tle.jit(num_warps=4, wgmma_pipeline=True)
def sparse_mla_seesaw_topk_length(q_ptr, kv_ptr, idx_ptr, out_ptr, lse_ptr, max_logits_ptr,
                                  stride_q_s, stride_q_h, stride_kv_s, stride_idx_s, stride_o_s,
                                  stride_o_h, stride_l_s, s_kv, sm_scale, n_items, n_hb,
                                  attn_sink_ptr, topk_length_ptr, n_heads, q_div,
                                  TOPK: tl.constexpr, BLOCK_H: tl.constexpr,
                                  HAS_SINK: tl.constexpr):
    # NP: one opaque value for the verifier (it proves the protocol for every NP), read once
    # and shared by every partition
    NP, n0, left0 = walk_start(topk_length_ptr, n_items, n_hb, TOPK)

    q, kv0, kv0r, kv1, kv1l, max0, max1, prob0, prob1 = seesaw_pipes(BLOCK_H)

    # the partitions' ROPE = 1: rows carry the 64-dim RoPE tail (d_qk = 576)
    tle.gpu.warp_specialize(
        [(producer, (q, kv0, kv0r, kv1, kv1l, q_ptr, stride_q_s, stride_q_h, kv_ptr, stride_kv_s,
                     idx_ptr, stride_idx_s, s_kv, topk_length_ptr, n_items, n_hb, n_heads, q_div,
                     NP, n0, left0, TOPK, BLOCK_H, 1)),
         (consumer0, (q, kv0, kv0r, kv1l, max0, max1, prob0, prob1, q_ptr, stride_q_s, stride_q_h,
                      out_ptr, stride_o_s, stride_o_h, lse_ptr, stride_l_s, attn_sink_ptr,
                      topk_length_ptr, sm_scale, n_items, n_hb, n_heads, q_div, NP, left0, TOPK,
                      BLOCK_H, 1,
                      HAS_SINK)),
         (consumer1, (q, kv1, kv1l, kv0r, max0, max1, prob0, prob1, q_ptr, stride_q_s, stride_q_h,
                      out_ptr, stride_o_s, stride_o_h, max_logits_ptr, stride_l_s, attn_sink_ptr,
                      topk_length_ptr, sm_scale, n_items, n_hb, n_heads, q_div, NP, left0, TOPK,
                      BLOCK_H, 1,
                      HAS_SINK))],
        [4, 4],
        [224, 224])


def item_length(topk_length_ptr, item, n_items, n_hb, TOPK: tl.constexpr):
    """The valid slots n = clamp(topk_length[token], 0, TOPK) of work ``item`` (a scalar or a
    block of items); 0 for an item past the last, whose address is clamped to the last item's
    token so that nothing out of bounds is read."""
    last = tl.minimum(item, n_items - 1)
    n = tl.load(topk_length_ptr + token_of(last, n_hb), mask=item < n_items, other=0)
    return tl.minimum(tl.maximum(n, 0), TOPK)


def walk_start(topk_length_ptr, n_items, n_hb, TOPK: tl.constexpr):
    """(NP, n0, left0): this program's K-tile pairs over all its items k, k + P, ... (k =
    program_id, P = programs), summed a chunk of items at a time; and the walk's state at its
    first pair: its first item's valid slots and pairs."""
    items = (n_items - tl.program_id(0) + tl.num_programs(0) - 1) // tl.num_programs(0)
    NP = 0
    for c in range((items + SCHED_CHUNK - 1) // SCHED_CHUNK):
        NP += chunk_pairs(topk_length_ptr, c, n_items, n_hb, TOPK)
    n0 = item_length(topk_length_ptr, tl.program_id(0), n_items, n_hb, TOPK)
    return NP, n0, request_pairs(n0)


def chunk_pairs(topk_length_ptr, c, n_items, n_hb, TOPK: tl.constexpr):
    """The K-tile pairs of this program's items c * SCHED_CHUNK .. c * SCHED_CHUNK +
    SCHED_CHUNK - 1 (its items are k, k + P, ...: k = program_id, P = programs), the sum of their
    ``request_pairs``, read as one masked vector."""
    item = tl.program_id(0) + (c * SCHED_CHUNK + tl.arange(0, SCHED_CHUNK)) * tl.num_programs(0)
    n = item_length(topk_length_ptr, item, n_items, n_hb, TOPK)
    return tl.sum(tl.where(item < n_items, request_pairs(n), 0), 0)


def producer(q, kv0, kv0r, kv1, kv1l, q_ptr, stride_q_s, stride_q_h, kv_ptr, stride_kv_s,
             idx_ptr, stride_idx_s, s_kv, topk_length_ptr, n_items, n_hb, n_heads, q_div,
             NP, n0, left0, TOPK: tl.constexpr, BLOCK_H: tl.constexpr, ROPE: tl.constexpr):
    """Per pair: the K piece kv0, the item's Q at its first pair, then the K pieces kv1, kv0r,
    kv1l of its tiles 2pp and 2pp + 1 (pp the pair's index in the item); with ROPE, kv0 and kv1
    also carry their tile's RoPE tail (kv dims D_MAIN .. D_MAIN + D_TAIL)."""
    offs_k = tl.arange(0, BK)
    offs_d = tl.arange(0, D_HALF)
    offs_t = tl.arange(0, D_TAIL)
    qw = q.writer()
    w0 = kv0.writer()
    w0r = kv0r.writer()
    w1 = kv1.writer()
    w1l = kv1l.writer()
    item = tl.program_id(0)  # the walk: pair p's item, its valid slots, the pair's index pp in it
    n_valid = n0             # and the item's pairs left from pair p on
    pp = 0
    left = left0
    # the next item's valid slots, read one item ahead: its first pair's index loads need them
    n_next = item_length(topk_length_ptr, item + tl.num_programs(0), n_items, n_hb, TOPK)
    for p in range(NP):
        pid_s = token_of(item, n_hb)
        idx_row = idx_ptr + pid_s * stride_idx_s
        # slots at or past n_valid are not read: index -1, invalid
        slots0 = (2 * pp) * BK + offs_k
        slots1 = (2 * pp + 1) * BK + offs_k
        t0 = tl.load(idx_row + slots0, mask=slots0 < n_valid, other=-1)
        if TOPK % (2 * BK) == 0:
            t1 = tl.load(idx_row + slots1, mask=slots1 < n_valid, other=-1)
        else:  # the last pair's second tile lies past the row: addresses kept inside it
            t1 = tl.load(idx_row + tl.minimum(slots1, TOPK - 1), mask=slots1 < n_valid, other=-1)
        valid0 = index_valid(t0, s_kv)
        valid1 = index_valid(t1, s_kv)
        rows0 = kv_rows(kv_ptr, stride_kv_s, t0, valid0)
        rows1 = kv_rows(kv_ptr, stride_kv_s, t1, valid1)

        slot = w0.acquire(p)
        tl.store(tle.gpu.local_ptr(slot.kv_l),
                 tl.load(rows0 + offs_d[None, :], mask=valid0[:, None], other=0.0))
        if ROPE:
            tl.store(tle.gpu.local_ptr(slot.tkv),
                     tl.load(rows0 + D_MAIN + offs_t[None, :], mask=valid0[:, None], other=0.0))
        tl.store(tle.gpu.local_ptr(slot.valid), valid0.to(tl.int8))
        w0.commit(p)

        # Q rows are staged at the item's first pair only: the slot keeps them while it goes on.
        # The acquire waits for both consumers' QKs of pair p - 1, consumer1's behind that pair's
        # last piece. After kv0's copies it costs nothing, since kv1's acquire below waits for
        # consumer1 to finish pair p - 1 anyway; before them, it would hold back the first copies
        # of pair p until pair p - 1's last piece had landed and been multiplied.
        slot = qw.acquire(p)
        if (pp == 0) | (p == 0):  # p = 0 is the first item's first pair: pp == 0 there
            h0 = head0_of(item, n_hb, BLOCK_H)
            q_rows = (q_ptr + q_token_of(item, n_hb, q_div) * stride_q_s
                      + head_index(h0, n_heads, BLOCK_H)[:, None] * stride_q_h)
            real = head_rows(h0, n_heads, BLOCK_H)[:, None]  # rows past h_q: zeros
            tl.store(tle.gpu.local_ptr(slot.q_l),
                     tl.load(q_rows + offs_d[None, :], mask=real, other=0.0))
            tl.store(tle.gpu.local_ptr(slot.q_r),
                     tl.load(q_rows + D_HALF + offs_d[None, :], mask=real, other=0.0))
        qw.commit(p)

        slot = w1.acquire(p)
        tl.store(tle.gpu.local_ptr(slot.kv_r),
                 tl.load(rows1 + D_HALF + offs_d[None, :], mask=valid1[:, None], other=0.0))
        if ROPE:
            tl.store(tle.gpu.local_ptr(slot.tkv),
                     tl.load(rows1 + D_MAIN + offs_t[None, :], mask=valid1[:, None], other=0.0))
        tl.store(tle.gpu.local_ptr(slot.valid), valid1.to(tl.int8))
        w1.commit(p)

        slot = w0r.acquire(p)
        tl.store(tle.gpu.local_ptr(slot.kv_r),
                 tl.load(rows0 + D_HALF + offs_d[None, :], mask=valid0[:, None], other=0.0))
        w0r.commit(p)

        slot = w1l.acquire(p)
        tl.store(tle.gpu.local_ptr(slot.kv_l),
                 tl.load(rows1 + offs_d[None, :], mask=valid1[:, None], other=0.0))
        w1l.commit(p)

        pp = pp + 1
        left = left - 1
        if left == 0:  # the item's last pair: the walk goes on to the program's next item
            item = item + tl.num_programs(0)
            n_valid = n_next
            pp = 0
            left = request_pairs(n_valid)
            n_next = item_length(topk_length_ptr, item + tl.num_programs(0), n_items, n_hb,
                                 TOPK)


def consumer0(q, kv0, kv0r, kv1l, max0, max1, prob0, prob1, q_ptr, stride_q_s, stride_q_h,
              out_ptr, stride_o_s, stride_o_h, lse_ptr, stride_l_s, sink_ptr, topk_length_ptr,
              sm_scale, n_items, n_hb, n_heads, q_div, NP, left0, TOPK: tl.constexpr,
              BLOCK_H: tl.constexpr, ROPE: tl.constexpr, HAS_SINK: tl.constexpr):
    qk_scale = sm_scale * LOG2E
    offs_h = tl.arange(0, BLOCK_H)
    offs_d = tl.arange(0, D_HALF)
    qr = q.reader("consumer0")
    own = kv0.reader()
    own_r = kv0r.reader("consumer0")
    peer = kv1l.reader("consumer0")
    mw = max0.writer()
    mr = max1.reader()
    pw = prob0.writer()
    pr = prob1.reader()
    item = tl.program_id(0)  # the walk (as the producer's): pair p's item and its pairs left
    left = left0
    if ROPE:
        q_tail = q_tail_of(q_ptr, stride_q_s, stride_q_h, item, n_items, n_hb, n_heads,
                           q_div, BLOCK_H)
    ref = tl.full([BLOCK_H], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_H], tl.float32)
    acc = tl.zeros([BLOCK_H, D_HALF], tl.float32)
    for p in range(NP):
        qres = qr.wait(p)
        k0 = own.wait(p)
        s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_l)),
                   tl.trans(tl.load(tle.gpu.local_ptr(k0.slot.kv_l))))
        if ROPE:
            s = tl.dot(q_tail, tl.trans(tl.load(tle.gpu.local_ptr(k0.slot.tkv))), s)
        if p > 0:
            # the previous pair's P1·V1_L was left in flight; it is queued before this QK
            pr.release(p - 1)
            peer.release(p - 1)
        k0r = own_r.wait(p)
        s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_r)),
                   tl.trans(tl.load(tle.gpu.local_ptr(k0r.slot.kv_r))), s)
        valid = tl.load(tle.gpu.local_ptr(k0.slot.valid)) != 0
        s = tl.where(valid[None, :], s, float("-inf"))
        own_r.release(p)
        qr.release(p)

        mx0 = tl.max(s, 1) * qk_scale
        mslot = mw.acquire(p)
        tl.store(tle.gpu.local_ptr(mslot.m), mx0)
        mw.commit(p)
        r0 = lazy_ref(ref, mx0)
        r0_use = shift_of(r0)
        alpha0 = tl.exp2(ref - r0_use)
        p0 = tl.exp2(s * qk_scale - r0_use[:, None])
        sum0 = tl.sum(p0, 1)
        acc = tle.gpu.scale_rows(acc, alpha0)
        acc = tl.dot(p0.to(tl.bfloat16), tl.load(tle.gpu.local_ptr(k0.slot.kv_l)), acc)

        own.release(p)
        mres = mr.wait(p)
        r_new = tl.load(tle.gpu.local_ptr(mres.slot.m))
        mr.release(p)
        r_use = shift_of(r_new)
        beta = rebase(r0, r_use)
        pslot = pw.acquire(p)
        tl.store(tle.gpu.local_ptr(pslot.sS), tle.gpu.scale_rows(p0, beta).to(tl.bfloat16))
        tl.store(tle.gpu.local_ptr(pslot.row_sum), sum0)
        pw.commit(p)
        acc = tle.gpu.scale_rows(acc, beta)

        pres = pr.wait(p)
        k1 = peer.wait(p)
        acc = tl.dot(tl.load(tle.gpu.local_ptr(pres.slot.sS)),
                     tl.load(tle.gpu.local_ptr(k1.slot.kv_l)), acc)
        sum1 = tl.load(tle.gpu.local_ptr(pres.slot.row_sum))

        l_i = (l_i * alpha0 + sum0) * beta + sum1
        ref = r_new
        left = left - 1
        if left == 0:
            # the item's last pair: store its half (normalised in place, so no second
            # accumulator's registers) and start the program's next item from nothing; the next
            # item's q tail is loaded first, so its latency hides behind the stores
            pid_s = token_of(item, n_hb)
            h0 = head0_of(item, n_hb, BLOCK_H)
            item = item + tl.num_programs(0)
            left = request_pairs(item_length(topk_length_ptr, item, n_items, n_hb, TOPK))
            if ROPE:
                q_tail = q_tail_of(q_ptr, stride_q_s, stride_q_h, item, n_items, n_hb,
                                   n_heads, q_div, BLOCK_H)
            if HAS_SINK:  # exp(attn_sink[h]) joins each row's denominator
                acc = sink_normalized(acc, l_i, ref, sink_ptr, h0, n_heads, BLOCK_H)
            else:
                acc = normalized(acc, l_i)
            out_row = out_ptr + pid_s * stride_o_s + h0 * stride_o_h
            if h0 + BLOCK_H <= n_heads:  # a whole block of real heads: unmasked (16-byte) stores
                tl.store(out_row + offs_h[:, None] * stride_o_h + offs_d[None, :],
                         acc.to(tl.bfloat16))
                tl.store(lse_ptr + pid_s * stride_l_s + h0 + offs_h, lse_of(l_i, ref))
            else:  # the last block of an h_q % BLOCK_H != 0: rows past h_q store nothing
                real = head_rows(h0, n_heads, BLOCK_H)
                heads = head_index(h0, n_heads, BLOCK_H)
                tl.store(out_ptr + pid_s * stride_o_s + heads[:, None] * stride_o_h
                         + offs_d[None, :], acc.to(tl.bfloat16), mask=real[:, None])
                tl.store(lse_ptr + pid_s * stride_l_s + heads, lse_of(l_i, ref), mask=real)
            acc = tl.zeros([BLOCK_H, D_HALF], tl.float32)
            ref = tl.full([BLOCK_H], float("-inf"), tl.float32)
            l_i = tl.zeros([BLOCK_H], tl.float32)
    if NP > 0:
        pr.release(NP - 1)
        peer.release(NP - 1)


def consumer1(q, kv1, kv1l, kv0r, max0, max1, prob0, prob1, q_ptr, stride_q_s, stride_q_h,
              out_ptr, stride_o_s, stride_o_h, ml_ptr, stride_l_s, sink_ptr, topk_length_ptr,
              sm_scale, n_items, n_hb, n_heads, q_div, NP, left0, TOPK: tl.constexpr,
              BLOCK_H: tl.constexpr, ROPE: tl.constexpr, HAS_SINK: tl.constexpr):
    qk_scale = sm_scale * LOG2E
    offs_h = tl.arange(0, BLOCK_H)
    offs_d = tl.arange(0, D_HALF)
    qr = q.reader("consumer1")
    own = kv1.reader()
    own_l = kv1l.reader("consumer1")
    peer = kv0r.reader("consumer1")
    mw = max1.writer()
    mr = max0.reader()
    pw = prob1.writer()
    pr = prob0.reader()
    item = tl.program_id(0)  # the walk (as the producer's): pair p's item and its pairs left
    left = left0
    if ROPE:
        q_tail = q_tail_of(q_ptr, stride_q_s, stride_q_h, item, n_items, n_hb, n_heads,
                           q_div, BLOCK_H)
    m_i = tl.full([BLOCK_H], float("-inf"), tl.float32)
    ref = tl.full([BLOCK_H], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_H], tl.float32)
    acc = tl.zeros([BLOCK_H, D_HALF], tl.float32)
    for p in range(NP):
        qres = qr.wait(p)
        k1 = own.wait(p)
        s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_r)),
                   tl.trans(tl.load(tle.gpu.local_ptr(k1.slot.kv_r))))
        if ROPE:
            s = tl.dot(q_tail, tl.trans(tl.load(tle.gpu.local_ptr(k1.slot.tkv))), s)
        k1l = own_l.wait(p)
        s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_l)),
                   tl.trans(tl.load(tle.gpu.local_ptr(k1l.slot.kv_l))), s)
        valid = tl.load(tle.gpu.local_ptr(k1.slot.valid)) != 0
        s = tl.where(valid[None, :], s, float("-inf"))
        own_l.release(p)
        qr.release(p)

        mx1 = tl.max(s, 1) * qk_scale
        mres = mr.wait(p)
        mx0 = tl.load(tle.gpu.local_ptr(mres.slot.m))
        mr.release(p)
        r0 = lazy_ref(ref, mx0)
        r_new = lazy_ref(r0, mx1)
        mslot = mw.acquire(p)
        tl.store(tle.gpu.local_ptr(mslot.m), r_new)
        mw.commit(p)
        m_i = tl.maximum(m_i, tl.maximum(mx0, mx1))
        r0_use = shift_of(r0)
        r_use = shift_of(r_new)
        alpha0 = tl.exp2(ref - r0_use)
        beta = rebase(r0, r_use)
        p1 = tl.exp2(s * qk_scale - r_use[:, None])
        sum1 = tl.sum(p1, 1)
        p1 = p1.to(tl.bfloat16)
        pslot = pw.acquire(p)
        tl.store(tle.gpu.local_ptr(pslot.sS), p1)
        tl.store(tle.gpu.local_ptr(pslot.row_sum), sum1)
        pw.commit(p)

        acc = tle.gpu.scale_rows(acc, tl.exp2(ref - r_use))
        acc = tl.dot(p1, tl.load(tle.gpu.local_ptr(k1.slot.kv_r)), acc)
        pres = pr.wait(p)
        k0r = peer.wait(p)
        acc = tl.dot(tl.load(tle.gpu.local_ptr(pres.slot.sS)),
                     tl.load(tle.gpu.local_ptr(k0r.slot.kv_r)), acc)
        sum0 = tl.load(tle.gpu.local_ptr(pres.slot.row_sum))
        own.release(p)
        pr.release(p)
        peer.release(p)

        l_i = (l_i * alpha0 + sum0) * beta + sum1
        ref = r_new
        left = left - 1
        if left == 0:  # the item's last pair: as consumer0's, with max_logits for lse
            pid_s = token_of(item, n_hb)
            h0 = head0_of(item, n_hb, BLOCK_H)
            item = item + tl.num_programs(0)
            left = request_pairs(item_length(topk_length_ptr, item, n_items, n_hb, TOPK))
            if ROPE:
                q_tail = q_tail_of(q_ptr, stride_q_s, stride_q_h, item, n_items, n_hb,
                                   n_heads, q_div, BLOCK_H)
            if HAS_SINK:
                acc = sink_normalized(acc, l_i, ref, sink_ptr, h0, n_heads, BLOCK_H)
            else:
                acc = normalized(acc, l_i)
            out_row = out_ptr + pid_s * stride_o_s + h0 * stride_o_h
            if h0 + BLOCK_H <= n_heads:  # as consumer0's: whole blocks unmasked, the last masked
                tl.store(out_row + offs_h[:, None] * stride_o_h + D_HALF + offs_d[None, :],
                         acc.to(tl.bfloat16))
                tl.store(ml_ptr + pid_s * stride_l_s + h0 + offs_h, m_i * LN2)
            else:
                real = head_rows(h0, n_heads, BLOCK_H)
                heads = head_index(h0, n_heads, BLOCK_H)
                tl.store(out_ptr + pid_s * stride_o_s + heads[:, None] * stride_o_h + D_HALF
                         + offs_d[None, :], acc.to(tl.bfloat16), mask=real[:, None])
                tl.store(ml_ptr + pid_s * stride_l_s + heads, m_i * LN2, mask=real)
            acc = tl.zeros([BLOCK_H, D_HALF], tl.float32)
            m_i = tl.full([BLOCK_H], float("-inf"), tl.float32)
            ref = tl.full([BLOCK_H], float("-inf"), tl.float32)
            l_i = tl.zeros([BLOCK_H], tl.float32)


DEFAULT_CONFIG = {
    # q [s_q, h_q, 576] bf16, kv [s_kv, 1, 576] bf16, indices [s_q, 1, topk] int32,
    # out [s_q, h_q, 512] bf16, lse / max_logits [s_q, h_q] fp32, attn_sink [h_q] fp32 (any
    # fp32 tensor when HAS_SINK is 0: not read), topk_length [s_q] int32; last dims contiguous.
    "signature": {
        "q_ptr": "*bf16", "kv_ptr": "*bf16", "idx_ptr": "*i32", "out_ptr": "*bf16",
        "lse_ptr": "*fp32", "max_logits_ptr": "*fp32",
        "stride_q_s": "i32", "stride_q_h": "i32", "stride_kv_s": "i32", "stride_idx_s": "i32",
        "stride_o_s": "i32", "stride_o_h": "i32", "stride_l_s": "i32",
        "s_kv": "i32", "sm_scale": "fp32", "n_items": "i32", "n_hb": "i32",
        "attn_sink_ptr": "*fp32", "topk_length_ptr": "*i32", "n_heads": "i32",
        "q_div": "i32",
        "TOPK": "constexpr", "BLOCK_H": "constexpr", "HAS_SINK": "constexpr",
    },
    "constexprs": {"TOPK": 2048, "BLOCK_H": 64, "HAS_SINK": 1},  # TOPK a multiple of 64
    "num_warps": 4,                  # the producer (default partition)
    "grid": ("programs",),           # min(items, SMs) persistent programs (api.launch_args)
}
