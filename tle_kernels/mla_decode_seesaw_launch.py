"""Launching the TLE-FlashMLA seesaw MLA decode kernel (tle_kernels/mla_decode_seesaw.py) on given
tensors, with the TLE-Pipe decode launcher's contract, so tle_kernels/decode_api.py runs either
kernel the same way: ``launch_decode_seesaw`` runs one decode step into outputs the caller
allocated (one split: out and lse; ``n_split > 1``: the splits' o_part / lse_part for
tle_kernels/mla_decode_combine.py), and ``seesaw_unsupported_reason`` says which head counts it
cannot run. Both are the shared launcher of mla_decode_launch.py (its ``launch_decode`` states the
contract) bound to this kernel.

The kernel has two K producers (its TMA constexpr): ``launch_decode_seesaw(..., tma=None)`` copies
K pages with cp.async (``tma=True`` or the environment variable TLE_DECODE_TMA=1 asks for TMA
boxes, refused when k_cache does not allow tensor descriptors); ``launch_decode_seesaw_tma``
always uses TMA, the "seesaw-tma" implementation of tle_kernels/decode_api.py and of the
benchmark's A/B. TMA is opt-in until it has been checked and measured on a GPU.
"""

from .mla_decode_launch import launcher

launch_decode_seesaw, seesaw_unsupported_reason = launcher("seesaw")


def launch_decode_seesaw_tma(q, k_cache, block_table, cache_seqlens, sm_scale, causal, n_split,
                             out, lse, o_part=None, lse_part=None) -> None:
    """``launch_decode_seesaw`` with the TMA producer (ValueError when k_cache allows no
    tensor descriptor)."""
    launch_decode_seesaw(q, k_cache, block_table, cache_seqlens, sm_scale, causal, n_split, out,
                         lse, o_part, lse_part, tma=True)
