"""What the SparseMLA TLE kernels (sparse_mla_pipe.py, sparse_mla_seesaw.py) share: the shape of a
kv row and of a K tile, the softmax constants, the (query token, head block) of a work item, the
index validity and the gather rows of a K tile, the softmax's lazy reference max and its rescale
factors, and the epilogue's normalised output and log-sum-exp.

The helpers are plain tile functions: the frontend inlines them into the partition that calls
them (one-expression helpers become that expression), so the generated code is the same as with
the expression written in place.
"""

import triton.language as tl

D_HALF = tl.constexpr(256)   # half of the 512 main dims: each consumer owns one output half
D_MAIN = tl.constexpr(512)   # main dims of q/kv rows (also the V dims)
D_TAIL = tl.constexpr(64)    # RoPE tail dims: a row is D_MAIN + D_TAIL = 576 wide
BK = tl.constexpr(64)        # topk indices (kv rows) per K tile
LOG2E = tl.constexpr(1.4426950408889634)  # softmax in base 2: exp(x) == exp2(x * LOG2E)
LN2 = tl.constexpr(0.6931471805599453)    # back to natural-log units: log(x) == log2(x) * LN2
TAU = tl.constexpr(8.0)      # lazy rescale: a reference max moves only for a score 2^8 above it


def token_of(item, n_hb):
    """The query token of work item ``item``: items run (token, head block) in row-major order,
    so the head blocks of one token, which gather the same kv rows, run side by side."""
    return (item // n_hb).to(tl.int64)


def q_token_of(item, n_hb, q_div):
    """The row of q that work item ``item`` reads: its query token // ``q_div``. A tail split's
    pieces (tle_kernels/tail_split.py) are ``q_div`` index rows per token, pieces t * q_div ..
    t * q_div + q_div - 1 of token t, all reading q row t in place; 1 elsewhere (Triton passes
    an integer argument equal to 1 as a constant, so the division folds away)."""
    return (item // n_hb // q_div).to(tl.int64)


def head0_of(item, n_hb, BLOCK_H: tl.constexpr):
    """The first head of work item ``item``'s head block."""
    return (item % n_hb) * BLOCK_H


def index_valid(t, s_kv):
    """Which topk indices ``t`` name a kv row: 0 <= t < s_kv."""
    return (t >= 0) & (t < s_kv)


def kv_rows(kv_ptr, stride_kv_s, t, valid):
    """Row pointers [BK, 1] of the kv rows of indices ``t``; an invalid index is clamped to row 0
    so it is never dereferenced (its loads are masked with ``valid[:, None]``: zero-fill)."""
    return kv_ptr + tl.where(valid, t, 0).to(tl.int64)[:, None] * stride_kv_s


def lazy_ref(ref, x):
    """The reference max (log2 units) after row maxima ``x``: it moves only for a score more than
    2^TAU above it, so after the first tiles the rescale factors are exactly 1 and the consumers'
    ``tle.gpu.scale_rows`` skip their multiplies."""
    return tl.where(x > ref + TAU, x, ref)


def shift_of(r):
    """What exp2's argument is shifted by for reference ``r``: 0 while every index seen is invalid
    (r is -inf), so that alpha and p are exp2(-inf) = 0 rather than exp2(-inf - -inf) = NaN."""
    return tl.where(r == float("-inf"), 0.0, r)



def rebase(r0, r_use):
    """The factor that brings terms relative to reference ``r0`` to the reference ``r_use``
    shifts by (1 while r0 is -inf: nothing was accumulated relative to it)."""
    return tl.where(r0 == float("-inf"), 1.0, tl.exp2(r0 - r_use))


def normalized(acc, l_i):
    """The output rows acc / l_i; a row with no valid index (l_i == 0) is 0."""
    inv_l = tl.where(l_i > 0, 1.0 / l_i, 0.0)
    return acc * inv_l[:, None]


def head_rows(h0, n_heads, BLOCK_H: tl.constexpr):
    """Which rows of the head block starting at head ``h0`` are real heads (h < n_heads): the
    last block of a head count that is not a multiple of BLOCK_H has rows past it, whose q loads
    as 0 and whose outputs are not stored."""
    return (h0 + tl.arange(0, BLOCK_H)) < n_heads


def head_index(h0, n_heads, BLOCK_H: tl.constexpr):
    """The heads of the rows of the block starting at ``h0``, a row past the real heads clamped
    to the last one: its (masked) loads and stores form addresses inside the tensor."""
    return tl.minimum(h0 + tl.arange(0, BLOCK_H), n_heads - 1)


def sink_normalized(acc, l_i, ref, sink_ptr, h0, n_heads, BLOCK_H: tl.constexpr):
    """The output rows of heads h0 .. h0 + BLOCK_H - 1 with exp(sink[h]) in the softmax
    denominator: acc / (l_i + exp2(sink[h]·log2e - ref)), l_i the row sum relative to the
    reference max ``ref`` (log2 units); 0 for a row with no valid index (l_i == 0). The sink of
    a row past the real heads (h >= n_heads, not stored) is not read."""
    sink = tl.load(sink_ptr + head_index(h0, n_heads, BLOCK_H),
                   mask=head_rows(h0, n_heads, BLOCK_H), other=0.0) * LOG2E
    inv = tl.where(l_i > 0, 1.0 / (l_i + tl.exp2(sink - ref)), 0.0)
    return acc * inv[:, None]


def lse_of(l_i, ref):
    """The log-sum-exp of the scores in natural-log units (l_i sums exp2(score - ref)); +inf for a
    row with no valid index."""
    return tl.where(l_i > 0, (tl.log2(l_i) + ref) * LN2, float("inf"))
