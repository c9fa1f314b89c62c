"""TLE-FlashMLA: SparseMLA prefill with FlashMLA's "seesaw" schedule, three warp groups.

One program per (query token, block of BLOCK_H=64 heads). K tiles of BK=64 indices go in pairs:
k0 = 2p and k1 = 2p+1. Each consumer computes QK for its own tile and applies BOTH tiles'
probabilities to its own output half. The max order is one-directional (FlashMLA's): consumer0
publishes its tile's row max and goes on with its reference r0; consumer1 folds in rowmax S1 and
sends the pair's final reference r_new back. Consumer0 brings its P0·V0_L term from r0 to r_new
(beta = exp2(r0 - r_new)) and hands P0 to consumer1 already relative to r_new, so consumer1 never
rescales mid-pair.

Lazy rescale: the reference max of a row moves only when a score exceeds it by more
than 2^TAU (TAU = 8, in log2 units), so after the first pair the rescale factors of O (and of P0
for consumer1) are exactly 1; probabilities stay below 2^8, well inside bf16's range. The rescales
are `tle.gpu.scale_rows(acc, factor)`, which the lowering turns into per-warp skips on a wgmma
accumulator (a warp vote and a branch around the 128 FMULs; lowering/lazy_scale.py), so they cost
~5 instructions per warp when nothing moved. max_logits needs the true max, which only consumer1
sees (it gets consumer0's tile max); it stores it. sm_scale is applied inside exp2's FFMA.
At the H200's power cap (benchmarks/energy_probe.py) skipping the rescales saves energy: at SKV = 8K
1.276 → 1.248 pJ/FLOP with partition-wide `if` flags (a cross-warp reduction each), and the per-warp
skips instead of those flags 1.266 → 1.237.

    producer (4 warps, default)   consumer0 (4 warps, 224 regs)      consumer1 (4 warps, 224 regs)
    Q main dims ─► q (one_shot) ─► q_l q_r                            q_l q_r
    tile 2p:   K0_L,tail,mask ─► kv0 (consumer0 alone)
    tile 2p+1: K1_R,tail,mask ─► kv1 (consumer1 alone)
    tile 2p:   K0_R ─► kv0r ───►  QK0                                 P0·V0_R
    tile 2p+1: K1_L ─► kv1l ───►  P1·V1_L                             QK1
                                 S0 = Q·K0ᵀ                           S1 = Q·K1ᵀ
                                 x0 = rowmax S0 ────────── max0 ───► r0 = lazy(ref, x0)
                                 r0 = lazy(ref, x0)                   r_new = lazy(r0, rowmax S1)
                                 O_l = O_l·a0 + P0·V0_L (async)       P1 = exp2(S1 - r_new)
                                 release kv0 (P0·V0_L retired)        ◄─ prob1 ─ (P1, rowsum P1)
                                 r_new ◄───────────────────── max1 ── O_r = O_r·a + P1·V1_R
                                 (P0·beta, rowsum P0) ─ prob0 ─►      O_r += P0·V0_R
                                 O_l = O_l·beta + P1·V1_L             release kv1, then kv0r
                                 (in flight into the next pair;
                                  kv1l released there)
    epilogue                     out[:, :256], lse                   out[:, 256:], max_logits
    (all pipes capacity 1; lazy(r, x) = x if x > r + TAU else r; a0 = exp2(ref - r0),
     beta = exp2(r0 - r_new), a = a0·beta, l = (l·a0 + rowsum P0)·beta + rowsum P1; a warp
     skips a rescale when the factor of each of its rows is 1)

Both consumers keep identical (ref, l): they combine the same fp32 values in the same order.

Fill and release order (FlashMLA's): each consumer's first QK piece is freed mid-pair, so the
producer gathers it for the next pair while the current one finishes. The producer fills kv0
(K0_L + tail + mask: consumer0's first piece, freed once P0·V0_L retired), kv1 (K1_R + tail +
mask: consumer1's first piece, freed once P1·V1_R retired), kv0r (K0_R: freed by consumer0's QK
and consumer1's P0·V0_R at its end of the pair) and kv1l (K1_L: freed by consumer1's QK and by
consumer0's P1·V1_L, which stays in flight across the loop back-edge: `@tle.jit(...,
wgmma_pipeline=True)`; consumer0 releases kv1l and prob1 of pair p-1 right after it issued the
next pair's first QK wgmmas, so the tensor core has that QK queued behind P1·V1_L). Capacity 2 for
the K tiles does not fit: one more 73,792 B tile pair is 147,584 B over a 230,528 B kernel. The
alternative schedule (consumer1 applying P0 relative to m0 first and rescaling mid-pair, the tiles
filled kv0, kv0r, kv1l, kv1) measured 1 to 4 % slower in interleaved A/Bs on the H200.

Deadlock-freedom (by hand; the verifier proves it): within pair p the order
  P: kv0(p), kv1(p), kv0r(p), kv1l(p) → c0: wait kv0, kv0r; release kv0r; commit max0
  → c1: wait kv1, kv1l; release kv1l; wait max0; commit max1, prob1 → c0: release kv0; wait max1;
  commit prob0; wait prob1, kv1l → c1: wait prob0, kv0r; release kv1, prob0, kv0r
  → c0 (in pair p+1, or after the loop): release prob1(p), kv1l(p)
is a complete schedule respecting every partition's program order, and every cross edge points
forward in it (commit(p) → wait(p) inside pair p; release(p-1) → acquire(p) from the pair before;
consumer0's release of kv1l(p) and prob1(p) comes after its wait for kv0(p+1), which the producer
fills before it needs kv1l(p) back). The happens-before graph is therefore acyclic for every NP.
Consumer0's only waits on consumer1 inside a pair (max1, prob1) come after it committed what
consumer1 needs first (max0); waiting for r_new before committing its tile max would be a cycle
(tests/test_kernels.py checks the verifier rejects that).

Shared memory (bf16 = 2 B): q 65,536 B (q_l + q_r); tile k0 (kv0 + kv0r) and tile k1 (kv1 + kv1l)
each 32 KiB + 32 KiB + 8 KiB + 64 B = 73,792 B; prob0 and prob1 each 8,192 + 256 = 8,448 B;
max0 and max1 256 B each; total 230,528 B (225.1 KiB) of Hopper's 227 KiB, 1,920 B left for
mbarriers (17 of them take 136 B). Keeping q_tail in shared memory too (as the TLE-Pipe kernel
does) would make it 238,720 B: over the limit. FlashMLA fits by aliasing sS0 with K0's dead RoPE
tail, which a verified pipe cannot express; here each consumer instead keeps
q_tail [64,64] in registers (16 regs/thread, the A operand of a register-A wgmma for the tail dot).

Item order: item i is (query token i // n_hb, head block i % n_hb), and round r runs items
r * programs .. r * programs + programs - 1 at once, so the head blocks of one query token (which
gather exactly the same kv rows) run side by side and the second one's gathers hit L2 (the same
ordering as the TLE-Pipe kernel's program renumbering: +14 % at SKV=128K).

Registers: FlashMLA gives each consumer warp group 216 registers per thread and its producer 72.
In `warp_specialize` the budget list covers the workers only, so the two consumers (workers) ask
for [224, 224] and the producer, the default partition, gets what is left of the 64 Ki-register
file: 65,536 / 128 threads = 512 per thread over the three warp groups, so 512 - 2*224 = 64
(ptxas fits it in 56). A gather holds only indices, pointers and masks, so that is enough. 224
rather than FlashMLA's 216: with [216, 216] (producer 72) the kernel ran 0.979x at SKV = 8K and
0.994x at 128K, at 1.232 instead of 1.209 pJ/FLOP; [232, 224], [240, 216] and [224, 232] were
slower too.

Persistent: one program per SM (grid = min(items, SMs)), each looping over ROUNDS
work items, item = r * programs + program (a short last round recomputes the last item instead of
branching around pipe events; its outputs are written twice with the same values). The q pipe is
a capacity-1 pipe indexed by the item: the producer loads the next item's Q as soon as both
consumers released the current one (after their last QK), so it and the next item's first K
pieces arrive while the consumers store their outputs, and no CTA launch (~1 µs on the H200) sits
between items. Every other pipe is indexed ``r * NP + p``, affine only once TOPK (so NP) is a
number: the kernel is verified and lowered per specialisation (tle-dump reads it specialised to
DEFAULT_CONFIG's TOPK and says so; compile.kernel_info_of does it for every launch). Against the
same kernel without the item loop (one program per item, interleaved A/B on the H200):
0.993 at SKV = 8K, 1.066 at 128K. Launch: tle_kernels/api.py
(`launch_args`; `PerCtaLaunch` takes a per-CTA grid and arguments; `persistent=False`: ROUNDS = 1).
Each consumer loads the next item's q tail before it stores the current item's outputs
(`q_tail_of`). The API runs a partial last round as topk pieces on every SM instead
(tle_kernels/tail_split.py), so at the headline shape no program recomputes an item; the pieces
of a token are ``q_div`` consecutive index rows that all read its q row (`q_token_of`: row
token // q_div), so q is not copied per piece (1 for a launch without pieces).

Without the RoPE tail (d_qk = 512, FlashMLA's "MODEL1" layout: q and kv rows of 512 dims, QK over
all of them and V the same 512): the three partitions take ``ROPE`` (1: each row has the 64-dim
tail after its 512 main dims, d_qk = 576; 0: it has none). A kernel passes it as a literal in its
``warp_specialize`` list, so the frontend folds every ``if ROPE:`` while it builds the kernel: this
kernel's IR holds the tail code exactly as it did before the parameter existed, and
tle_kernels/sparse_mla_seesaw_d512.py, whose K pipes have no ``tkv`` field, none of it (no tail
gather, no q tail in the consumers' registers, no tail dot). Everything else, schedule and
budgets included, is shared.

Any head count: the kernel takes the real one, ``n_heads`` (h_q), and runs n_hb = ceil(h_q /
BLOCK_H) head blocks per token. In the last block of an h_q that is not a multiple of 64, the
rows past h_q load q (and the q tail) as 0 and store nothing; their addresses are clamped to the
last real head (``head_index``), so no masked lane addresses past the tensors. A block of real
heads only stores as before (unmasked, so the lowering's 16-byte accumulator stores apply): each
consumer's epilogue branches on ``h0 + BLOCK_H <= n_heads``, uniform per item. h_q 8 / 16 / 32
(tensor parallelism) so cost one 64-row item per token with no padded copy of q or the outputs
(tle_kernels/head_padding.py).

The consumers take ``SINK`` the same way (and ``sink_ptr``): 1 in the attn_sink kernels
(sparse_mla_seesaw_sink.py, sparse_decode_seesaw_fp8_sink.py), whose epilogue adds
exp(attn_sink[h]) to each row's denominator (``sparse_mla_common.sink_normalized``); 0 here,
where ``sink_ptr`` is passed lse_ptr / max_logits_ptr and never read.
"""

import triton.language as tl

import tle_compiler as tle

from .sparse_mla_common import (BK, D_HALF, D_MAIN, D_TAIL, LN2, LOG2E, head0_of, head_index,
                                head_rows, index_valid, kv_rows, lazy_ref, lse_of, normalized,
                                q_token_of, rebase, shift_of, sink_normalized, token_of)


@tle.jit(num_warps=4, wgmma_pipeline=True)
def sparse_mla_seesaw(q_ptr, kv_ptr, idx_ptr, out_ptr, lse_ptr, max_logits_ptr,
                                 stride_q_s, stride_q_h, stride_kv_s, stride_idx_s, stride_o_s,
                                 stride_o_h, stride_l_s, s_kv, sm_scale, n_items, n_hb, ROUNDS,
                                 n_heads, q_div, TOPK: tl.constexpr, BLOCK_H: tl.constexpr):
    NP = (TOPK + 2 * BK - 1) // (2 * BK)   # K-tile pairs per item (the last one half
                                          # past topk when TOPK % 128 == 64)

    q, kv0, kv0r, kv1, kv1l, max0, max1, prob0, prob1 = seesaw_pipes(BLOCK_H)

    # the partitions' ROPE = 1: rows carry the 64-dim RoPE tail (d_qk = 576); the consumers' SINK
    # = 0: no attn_sink (their sink_ptr, here lse_ptr / max_logits_ptr, is not read)
    tle.gpu.warp_specialize(
        [(producer, (q, kv0, kv0r, kv1, kv1l, q_ptr, stride_q_s, stride_q_h, kv_ptr, stride_kv_s,
                     idx_ptr, stride_idx_s, s_kv, n_items, n_hb, n_heads, q_div, ROUNDS, NP,
                     BLOCK_H, 1, TOPK)),
         (consumer0, (q, kv0, kv0r, kv1l, max0, max1, prob0, prob1, q_ptr, stride_q_s, stride_q_h,
                      out_ptr, stride_o_s, stride_o_h, lse_ptr, stride_l_s, lse_ptr,
                      sm_scale, n_items, n_hb, n_heads, q_div, ROUNDS, NP, BLOCK_H, 1, 0)),
         (consumer1, (q, kv1, kv1l, kv0r, max0, max1, prob0, prob1, q_ptr, stride_q_s, stride_q_h,
                      out_ptr, stride_o_s, stride_o_h, max_logits_ptr, stride_l_s,
                      max_logits_ptr, sm_scale, n_items, n_hb, n_heads, q_div, ROUNDS, NP,
                      BLOCK_H, 1, 0))],
        [4, 4],
        [224, 224])


def seesaw_pipes(BLOCK_H: tl.constexpr):
    """The seesaw's pipes (the table in the module docstring), declared once for every kernel of
    this dataflow over 576-dim rows (the prefill, its attn_sink and topk_length variants, the
    FP8 sparse decode): (q, kv0, kv0r, kv1, kv1l, max0, max1, prob0, prob1)."""
    q = tle.pipe(capacity=1, readers=("consumer0", "consumer1"),
                 q_l=tle.gpu.alloc([1, BLOCK_H, D_HALF], tl.bfloat16),
                 q_r=tle.gpu.alloc([1, BLOCK_H, D_HALF], tl.bfloat16))
    # Tile k0 = 2p, split by last reader: consumer0 alone reads K0_L (QK, then V0_L), the tail and
    # the mask; K0_R is read by consumer0's QK and by consumer1's P0·V0_R.
    kv0 = tle.pipe(capacity=1,
                   kv_l=tle.gpu.alloc([1, BK, D_HALF], tl.bfloat16),
                   tkv=tle.gpu.alloc([1, BK, D_TAIL], tl.bfloat16),
                   valid=tle.gpu.alloc([1, BK], tl.int8))
    kv0r = tle.pipe(capacity=1, readers=("consumer0", "consumer1"),
                    kv_r=tle.gpu.alloc([1, BK, D_HALF], tl.bfloat16))
    # Tile k1 = 2p+1, mirrored: consumer1 alone reads K1_R, the tail and the mask; K1_L is read by
    # consumer1's QK and by consumer0's P1·V1_L.
    kv1 = tle.pipe(capacity=1,
                   kv_r=tle.gpu.alloc([1, BK, D_HALF], tl.bfloat16),
                   tkv=tle.gpu.alloc([1, BK, D_TAIL], tl.bfloat16),
                   valid=tle.gpu.alloc([1, BK], tl.int8))
    kv1l = tle.pipe(capacity=1, readers=("consumer0", "consumer1"),
                    kv_l=tle.gpu.alloc([1, BK, D_HALF], tl.bfloat16))
    max0 = tle.pipe(capacity=1, barrier="named", m=tle.gpu.alloc([1, BLOCK_H], tl.float32))   # consumer0 → 1
    max1 = tle.pipe(capacity=1, barrier="named", m=tle.gpu.alloc([1, BLOCK_H], tl.float32))   # consumer1 → 0
    prob0 = tle.pipe(capacity=1, barrier="named",                                              # consumer0 → 1
                     sS=tle.gpu.alloc([1, BLOCK_H, BK], tl.bfloat16),
                     row_sum=tle.gpu.alloc([1, BLOCK_H], tl.float32))
    prob1 = tle.pipe(capacity=1, barrier="named",                                              # consumer1 → 0
                     sS=tle.gpu.alloc([1, BLOCK_H, BK], tl.bfloat16),
                     row_sum=tle.gpu.alloc([1, BLOCK_H], tl.float32))
    return q, kv0, kv0r, kv1, kv1l, max0, max1, prob0, prob1


def producer(q, kv0, kv0r, kv1, kv1l, q_ptr, stride_q_s, stride_q_h, kv_ptr, stride_kv_s,
             idx_ptr, stride_idx_s, s_kv, n_items, n_hb, n_heads, q_div, ROUNDS, NP,
             BLOCK_H: tl.constexpr, ROPE: tl.constexpr, TOPK: tl.constexpr):
    """Q of each item (q row token // q_div: ``q_token_of``; rows past the real heads, h >=
    n_heads, as zeros), then per pair the K
    pieces kv0, kv1, kv0r, kv1l; with ROPE, kv0 and kv1 also carry their tile's RoPE tail (kv
    dims D_MAIN .. D_MAIN + D_TAIL). When TOPK % 128 == 64 the last pair's second tile lies past
    the index row: its slots read as -1 (addressed inside the row, masked), so that tile is all
    invalid (-inf scores, zero probabilities, no kv row loaded) and costs one tile of math, not a
    kernel of its own. The branch is on a constexpr: at TOPK % 128 == 0 the load is the unmasked
    one it always was."""
    offs_k = tl.arange(0, BK)
    offs_d = tl.arange(0, D_HALF)
    offs_t = tl.arange(0, D_TAIL)
    qw = q.writer()
    w0 = kv0.writer()
    w0r = kv0r.writer()
    w1 = kv1.writer()
    w1l = kv1l.writer()
    for r in range(ROUNDS):
        # this program's item of round r; past the last item, the last item again (its outputs
        # are written twice with the same values)
        item = r * tl.num_programs(0) + tl.program_id(0)
        item = tl.where(item < n_items, item, n_items - 1)
        pid_s = token_of(item, n_hb)
        h0 = head0_of(item, n_hb, BLOCK_H)
        q_rows = (q_ptr + q_token_of(item, n_hb, q_div) * stride_q_s
                  + head_index(h0, n_heads, BLOCK_H)[:, None] * stride_q_h)
        idx_row = idx_ptr + pid_s * stride_idx_s
        real = head_rows(h0, n_heads, BLOCK_H)[:, None]
        # This item's Q: acquired once both consumers finished the previous item's QKs.
        slot = qw.acquire(r)
        tl.store(tle.gpu.local_ptr(slot.q_l),
                 tl.load(q_rows + offs_d[None, :], mask=real, other=0.0))
        tl.store(tle.gpu.local_ptr(slot.q_r),
                 tl.load(q_rows + D_HALF + offs_d[None, :], mask=real, other=0.0))
        qw.commit(r)
        for p in range(NP):
            g = r * NP + p
            t0 = tl.load(idx_row + (2 * p) * BK + offs_k)
            if TOPK % (2 * BK) == 0:
                t1 = tl.load(idx_row + (2 * p + 1) * BK + offs_k)
            else:  # slots past the row read as -1, their addresses kept inside it
                slots1 = (2 * p + 1) * BK + offs_k
                t1 = tl.load(idx_row + tl.minimum(slots1, TOPK - 1), mask=slots1 < TOPK,
                             other=-1)
            valid0 = index_valid(t0, s_kv)
            valid1 = index_valid(t1, s_kv)
            rows0 = kv_rows(kv_ptr, stride_kv_s, t0, valid0)
            rows1 = kv_rows(kv_ptr, stride_kv_s, t1, valid1)

            slot = w0.acquire(g)
            tl.store(tle.gpu.local_ptr(slot.kv_l),
                     tl.load(rows0 + offs_d[None, :], mask=valid0[:, None], other=0.0))
            if ROPE:
                tl.store(tle.gpu.local_ptr(slot.tkv),
                         tl.load(rows0 + D_MAIN + offs_t[None, :], mask=valid0[:, None], other=0.0))
            tl.store(tle.gpu.local_ptr(slot.valid), valid0.to(tl.int8))
            w0.commit(g)

            slot = w1.acquire(g)
            tl.store(tle.gpu.local_ptr(slot.kv_r),
                     tl.load(rows1 + D_HALF + offs_d[None, :], mask=valid1[:, None], other=0.0))
            if ROPE:
                tl.store(tle.gpu.local_ptr(slot.tkv),
                         tl.load(rows1 + D_MAIN + offs_t[None, :], mask=valid1[:, None], other=0.0))
            tl.store(tle.gpu.local_ptr(slot.valid), valid1.to(tl.int8))
            w1.commit(g)

            slot = w0r.acquire(g)
            tl.store(tle.gpu.local_ptr(slot.kv_r),
                     tl.load(rows0 + D_HALF + offs_d[None, :], mask=valid0[:, None], other=0.0))
            w0r.commit(g)

            slot = w1l.acquire(g)
            tl.store(tle.gpu.local_ptr(slot.kv_l),
                     tl.load(rows1 + offs_d[None, :], mask=valid1[:, None], other=0.0))
            w1l.commit(g)


def q_tail_of(q_ptr, stride_q_s, stride_q_h, item, n_items, n_hb, n_heads, q_div,
              BLOCK_H: tl.constexpr):
    """q's RoPE tail [BLOCK_H, D_TAIL] of work ``item`` (past the last item: the last item's), which
    each consumer keeps in registers as the A operand of its tail dot (rows past the real heads,
    h >= n_heads, as zeros). Loaded one item ahead, so that its global-load latency hides behind
    the previous item's output stores (on the H200: 1.211 -> 1.203 pJ/FLOP at SKV = 8K, neutral
    at 128K). Only with ROPE (d_qk = 576)."""
    item = tl.where(item < n_items, item, n_items - 1)
    h0 = head0_of(item, n_hb, BLOCK_H)
    rows = (q_ptr + q_token_of(item, n_hb, q_div) * stride_q_s
            + head_index(h0, n_heads, BLOCK_H)[:, None] * stride_q_h)
    return tl.load(rows + D_MAIN + tl.arange(0, D_TAIL)[None, :],
                   mask=head_rows(h0, n_heads, BLOCK_H)[:, None], other=0.0)


def consumer0(q, kv0, kv0r, kv1l, max0, max1, prob0, prob1, q_ptr, stride_q_s, stride_q_h,
              out_ptr, stride_o_s, stride_o_h, lse_ptr, stride_l_s, sink_ptr, sm_scale, n_items,
              n_hb, n_heads, q_div, ROUNDS, NP, BLOCK_H: tl.constexpr, ROPE: tl.constexpr,
              SINK: tl.constexpr):
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
    if ROPE:
        q_tail = q_tail_of(q_ptr, stride_q_s, stride_q_h, tl.program_id(0), n_items, n_hb,
                           n_heads, q_div, BLOCK_H)
    for r in range(ROUNDS):
        # this program's item of round r; past the last item, the last item again (its outputs
        # are written twice with the same values)
        item = r * tl.num_programs(0) + tl.program_id(0)
        item = tl.where(item < n_items, item, n_items - 1)
        pid_s = token_of(item, n_hb)
        h0 = head0_of(item, n_hb, BLOCK_H)
        qres = qr.wait(r)
        ref = tl.full([BLOCK_H], float("-inf"), tl.float32)
        l_i = tl.zeros([BLOCK_H], tl.float32)
        acc = tl.zeros([BLOCK_H, D_HALF], tl.float32)
        for p in range(NP):
            g = r * NP + p
            k0 = own.wait(g)
            s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_l)),
                       tl.trans(tl.load(tle.gpu.local_ptr(k0.slot.kv_l))))
            if ROPE:
                s = tl.dot(q_tail, tl.trans(tl.load(tle.gpu.local_ptr(k0.slot.tkv))), s)
            if p > 0:
                pr.release(g - 1)
                peer.release(g - 1)
            k0r = own_r.wait(g)
            s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_r)),
                       tl.trans(tl.load(tle.gpu.local_ptr(k0r.slot.kv_r))), s)
            valid = tl.load(tle.gpu.local_ptr(k0.slot.valid)) != 0
            s = tl.where(valid[None, :], s, float("-inf"))
            own_r.release(g)

            mx0 = tl.max(s, 1) * qk_scale
            mslot = mw.acquire(g)
            tl.store(tle.gpu.local_ptr(mslot.m), mx0)
            mw.commit(g)
            r0 = lazy_ref(ref, mx0)
            r0_use = shift_of(r0)
            alpha0 = tl.exp2(ref - r0_use)
            p0 = tl.exp2(s * qk_scale - r0_use[:, None])
            sum0 = tl.sum(p0, 1)
            acc = tle.gpu.scale_rows(acc, alpha0)
            acc = tl.dot(p0.to(tl.bfloat16), tl.load(tle.gpu.local_ptr(k0.slot.kv_l)), acc)

            own.release(g)
            mres = mr.wait(g)
            r_new = tl.load(tle.gpu.local_ptr(mres.slot.m))
            mr.release(g)
            r_use = shift_of(r_new)
            beta = rebase(r0, r_use)
            pslot = pw.acquire(g)
            tl.store(tle.gpu.local_ptr(pslot.sS), tle.gpu.scale_rows(p0, beta).to(tl.bfloat16))
            tl.store(tle.gpu.local_ptr(pslot.row_sum), sum0)
            pw.commit(g)
            acc = tle.gpu.scale_rows(acc, beta)

            pres = pr.wait(g)
            k1 = peer.wait(g)
            acc = tl.dot(tl.load(tle.gpu.local_ptr(pres.slot.sS)),
                         tl.load(tle.gpu.local_ptr(k1.slot.kv_l)), acc)
            sum1 = tl.load(tle.gpu.local_ptr(pres.slot.row_sum))

            l_i = (l_i * alpha0 + sum0) * beta + sum1
            ref = r_new
        if NP > 0:
            pr.release(r * NP + NP - 1)
            peer.release(r * NP + NP - 1)
        qr.release(r)  # our last QK of the item is done: the producer may load the next Q
        # the next item's RoPE tail: its load is in flight while this item's outputs are stored
        if ROPE:
            q_tail = q_tail_of(q_ptr, stride_q_s, stride_q_h, (r + 1) * tl.num_programs(0)
                               + tl.program_id(0), n_items, n_hb, n_heads, q_div, BLOCK_H)

        if SINK:  # exp(attn_sink[h]) joins each row's denominator (lse stays the scores')
            out = sink_normalized(acc, l_i, ref, sink_ptr, h0, n_heads, BLOCK_H)
        else:
            out = normalized(acc, l_i)
        out_row = out_ptr + pid_s * stride_o_s + h0 * stride_o_h
        if h0 + BLOCK_H <= n_heads:  # a whole block of real heads: unmasked (16-byte) stores
            tl.store(out_row + offs_h[:, None] * stride_o_h + offs_d[None, :],
                     out.to(tl.bfloat16))
            tl.store(lse_ptr + pid_s * stride_l_s + h0 + offs_h, lse_of(l_i, ref))
        else:  # the last block of an h_q % BLOCK_H != 0: its rows past h_q store nothing
            real = head_rows(h0, n_heads, BLOCK_H)
            heads = head_index(h0, n_heads, BLOCK_H)
            tl.store(out_ptr + pid_s * stride_o_s + heads[:, None] * stride_o_h
                     + offs_d[None, :], out.to(tl.bfloat16), mask=real[:, None])
            tl.store(lse_ptr + pid_s * stride_l_s + heads, lse_of(l_i, ref), mask=real)


def consumer1(q, kv1, kv1l, kv0r, max0, max1, prob0, prob1, q_ptr, stride_q_s, stride_q_h,
              out_ptr, stride_o_s, stride_o_h, ml_ptr, stride_l_s, sink_ptr, sm_scale, n_items,
              n_hb, n_heads, q_div, ROUNDS, NP, BLOCK_H: tl.constexpr, ROPE: tl.constexpr,
              SINK: tl.constexpr):
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
    if ROPE:
        q_tail = q_tail_of(q_ptr, stride_q_s, stride_q_h, tl.program_id(0), n_items, n_hb,
                           n_heads, q_div, BLOCK_H)
    for r in range(ROUNDS):
        # this program's item of round r; past the last item, the last item again (its outputs
        # are written twice with the same values)
        item = r * tl.num_programs(0) + tl.program_id(0)
        item = tl.where(item < n_items, item, n_items - 1)
        pid_s = token_of(item, n_hb)
        h0 = head0_of(item, n_hb, BLOCK_H)
        qres = qr.wait(r)
        m_i = tl.full([BLOCK_H], float("-inf"), tl.float32)
        ref = tl.full([BLOCK_H], float("-inf"), tl.float32)
        l_i = tl.zeros([BLOCK_H], tl.float32)
        acc = tl.zeros([BLOCK_H, D_HALF], tl.float32)
        for p in range(NP):
            g = r * NP + p
            k1 = own.wait(g)
            s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_r)),
                       tl.trans(tl.load(tle.gpu.local_ptr(k1.slot.kv_r))))
            if ROPE:
                s = tl.dot(q_tail, tl.trans(tl.load(tle.gpu.local_ptr(k1.slot.tkv))), s)
            k1l = own_l.wait(g)
            s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_l)),
                       tl.trans(tl.load(tle.gpu.local_ptr(k1l.slot.kv_l))), s)
            valid = tl.load(tle.gpu.local_ptr(k1.slot.valid)) != 0
            s = tl.where(valid[None, :], s, float("-inf"))
            own_l.release(g)

            mx1 = tl.max(s, 1) * qk_scale
            mres = mr.wait(g)
            mx0 = tl.load(tle.gpu.local_ptr(mres.slot.m))
            mr.release(g)
            r0 = lazy_ref(ref, mx0)
            r_new = lazy_ref(r0, mx1)
            mslot = mw.acquire(g)
            tl.store(tle.gpu.local_ptr(mslot.m), r_new)
            mw.commit(g)
            m_i = tl.maximum(m_i, tl.maximum(mx0, mx1))
            r0_use = shift_of(r0)
            r_use = shift_of(r_new)
            alpha0 = tl.exp2(ref - r0_use)
            beta = rebase(r0, r_use)
            p1 = tl.exp2(s * qk_scale - r_use[:, None])
            sum1 = tl.sum(p1, 1)
            p1 = p1.to(tl.bfloat16)
            pslot = pw.acquire(g)
            tl.store(tle.gpu.local_ptr(pslot.sS), p1)
            tl.store(tle.gpu.local_ptr(pslot.row_sum), sum1)
            pw.commit(g)

            acc = tle.gpu.scale_rows(acc, tl.exp2(ref - r_use))
            acc = tl.dot(p1, tl.load(tle.gpu.local_ptr(k1.slot.kv_r)), acc)
            pres = pr.wait(g)
            k0r = peer.wait(g)
            acc = tl.dot(tl.load(tle.gpu.local_ptr(pres.slot.sS)),
                         tl.load(tle.gpu.local_ptr(k0r.slot.kv_r)), acc)
            sum0 = tl.load(tle.gpu.local_ptr(pres.slot.row_sum))
            own.release(g)
            pr.release(g)
            peer.release(g)

            l_i = (l_i * alpha0 + sum0) * beta + sum1
            ref = r_new
        qr.release(r)
        # the next item's RoPE tail: its load is in flight while this item's outputs are stored
        if ROPE:
            q_tail = q_tail_of(q_ptr, stride_q_s, stride_q_h, (r + 1) * tl.num_programs(0)
                               + tl.program_id(0), n_items, n_hb, n_heads, q_div, BLOCK_H)

        if SINK:  # exp(attn_sink[h]) joins each row's denominator (lse stays the scores')
            out = sink_normalized(acc, l_i, ref, sink_ptr, h0, n_heads, BLOCK_H)
        else:
            out = normalized(acc, l_i)
        out_row = out_ptr + pid_s * stride_o_s + h0 * stride_o_h
        if h0 + BLOCK_H <= n_heads:  # as consumer0's: whole blocks unmasked, the last masked
            tl.store(out_row + offs_h[:, None] * stride_o_h + D_HALF + offs_d[None, :],
                     out.to(tl.bfloat16))
            tl.store(ml_ptr + pid_s * stride_l_s + h0 + offs_h, m_i * LN2)
        else:
            real = head_rows(h0, n_heads, BLOCK_H)
            heads = head_index(h0, n_heads, BLOCK_H)
            tl.store(out_ptr + pid_s * stride_o_s + heads[:, None] * stride_o_h + D_HALF
                     + offs_d[None, :], out.to(tl.bfloat16), mask=real[:, None])
            tl.store(ml_ptr + pid_s * stride_l_s + heads, m_i * LN2, mask=real)


DEFAULT_CONFIG = {
    # q [s_q, h_q, 576] bf16, kv [s_kv, 1, 576] bf16, indices [s_q, 1, topk] int32,
    # out [s_q, h_q, 512] bf16, lse / max_logits [s_q, h_q] fp32; last dims contiguous;
    # n_heads = h_q (any count: n_hb = ceil(h_q / BLOCK_H) head blocks, the last one masked).
    "signature": {
        "q_ptr": "*bf16", "kv_ptr": "*bf16", "idx_ptr": "*i32", "out_ptr": "*bf16",
        "lse_ptr": "*fp32", "max_logits_ptr": "*fp32",
        "stride_q_s": "i32", "stride_q_h": "i32", "stride_kv_s": "i32", "stride_idx_s": "i32",
        "stride_o_s": "i32", "stride_o_h": "i32", "stride_l_s": "i32",
        "s_kv": "i32", "sm_scale": "fp32", "n_items": "i32", "n_hb": "i32",
        "ROUNDS": "i32", "n_heads": "i32", "q_div": "i32",
        "TOPK": "constexpr", "BLOCK_H": "constexpr",
    },
    "constexprs": {"TOPK": 2048, "BLOCK_H": 64},  # TOPK must be a multiple of BK = 64
    "num_warps": 4,                  # the producer (default partition)
    "grid": ("programs",),
}
