"""One K tile of the online softmax that the naive Triton kernels (sparse_mla_naive.py,
mla_decode_naive.py) run: a ``@triton.jit`` helper, which Triton inlines into the kernel that
calls it. The TLE kernels compute the same in their own form (a lazy reference max shared
between warp groups; sparse_mla_common.py)."""

import triton
import triton.language as tl


@triton.jit
def online_softmax_step(s, m_i, l_i, acc, v):
    """``(m_i, l_i, acc)`` after the scores ``s`` [M, K] (log2 units, -inf where masked) of one K
    tile with values ``v`` [K, D]: the running row max, the row sum of exp2(s - m_i) and the
    unnormalised output, rescaled to the new max. While a row has seen no score its max stays
    -inf and the exponents are taken against 0, so alpha and p are 0, not NaN."""
    m_new = tl.maximum(m_i, tl.max(s, 1))
    m_use = tl.where(m_new == float("-inf"), 0.0, m_new)
    alpha = tl.math.exp2(m_i - m_use)
    p = tl.math.exp2(s - m_use[:, None])
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
    return m_new, l_i, acc
