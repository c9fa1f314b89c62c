"""Launching the TLE-FlashMLA seesaw MLA decode kernel (tle_kernels/mla_decode_seesaw.py) on given
tensors. The kernel walks the balanced schedule of mla_decode_parts.py: P programs per (kv head,
row block) each take an equal share of the batch's K-tile pairs, crossing request boundaries, and
the requests split between programs are merged by mla_decode_combine_scheduled after it.
``launch_decode_seesaw`` runs both into out / lse (one program per request and no combine when
the batch fills the SMs at least once; ``balance`` or TLE_DECODE_BALANCE=0/1 forces either); ``seesaw_unsupported_reason`` says which head counts it cannot
run.

The kernel has two K producers (its TMA constexpr): ``launch_decode_seesaw(..., tma=None)`` copies
K pages as TMA boxes wherever k_cache allows tensor descriptors, else with cp.async (``tma`` or
the environment variable TLE_DECODE_TMA=0/1 forces either); ``launch_decode_seesaw_tma`` always
uses TMA, the "seesaw-tma" implementation of tle_kernels/decode_api.py and of the benchmark.
"""

from typing import Optional

from .mla_decode_launch import launch_scheduled, launcher, parts_for

_, seesaw_unsupported_reason = launcher("seesaw")


def launch_decode_seesaw(q, k_cache, block_table, cache_seqlens, sm_scale, causal, out, lse,
                         sms: int, tma: Optional[bool] = None,
                         balance: Optional[bool] = None) -> None:
    """One decode step into out [b, s_q, h_q, 512] bf16 and lse [b, h_q, s_q] fp32 on validated
    inputs, P = parts_for(...) programs per (kv head, row block) for a device with ``sms`` SMs."""
    b, s_q, h_q, _ = q.shape
    parts = parts_for(b, s_q, h_q, k_cache.shape[2], sms)
    launch_scheduled("seesaw", q, k_cache, block_table, cache_seqlens, sm_scale, causal, out, lse,
                     parts, tma, balance)


def launch_decode_seesaw_tma(q, k_cache, block_table, cache_seqlens, sm_scale, causal, out, lse,
                             sms: int, balance: Optional[bool] = None) -> None:
    """``launch_decode_seesaw`` with the TMA producer (ValueError when k_cache allows no tensor
    descriptor)."""
    launch_decode_seesaw(q, k_cache, block_table, cache_seqlens, sm_scale, causal, out, lse, sms,
                         tma=True, balance=balance)
