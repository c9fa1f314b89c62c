"""The TLE-FlashMLA seesaw MLA decode kernel on the GPU, through ``launch_decode_seesaw`` (plus the
combine of tle_kernels/mla_decode_combine.py when it runs split), against the fp32 decode
reference, on the pipe decode's cases (tests/gpu/test_mla_decode_pipe.py: its case list, mixed
seqlens and checks are imported, not copied) and on what is the seesaw's own: odd tile counts
(an odd last tile's partner is all masked), the lazy reference moving at either consumer's tile,
and long requests.

Inputs come from ``make_decode_inputs``: random non-contiguous block tables, cache rows past each
request's seqlen NaN and block-table entries past its pages a block id no cache has; outputs are
poisoned with NaN before the launch.

    python3 -m pytest -q -m gpu tests/gpu/test_mla_decode_seesaw.py
"""

from __future__ import annotations

import pytest
import torch

from tle_kernels.decode_reference import make_decode_inputs, mla_decode_reference
from tle_kernels.mla_decode_combine import mla_decode_combine
from tle_kernels.mla_decode_seesaw_launch import launch_decode_seesaw

from .test_mla_decode_pipe import CASES, MIXED, OUT_REL, check

pytestmark = pytest.mark.gpu


def run_seesaw(q, k_cache, block_table, cache_seqlens, causal, n_split, sm_scale=None):
    """out (bf16), lse and, when split, the parts, all written into NaN-poisoned tensors."""
    b, s_q, h_q, d = q.shape
    sm_scale = d ** -0.5 if sm_scale is None else sm_scale
    dev = q.device
    out = torch.full((b, s_q, h_q, 512), float("nan"), device=dev, dtype=torch.bfloat16)
    lse = torch.full((b, h_q, s_q), float("nan"), device=dev)
    o_part = lse_part = None
    if n_split > 1:
        o_part = torch.full((b, n_split, s_q, h_q, 512), float("nan"), device=dev)
        lse_part = torch.full((b, n_split, s_q, h_q), float("nan"), device=dev)
    launch_decode_seesaw(q, k_cache, block_table, cache_seqlens, sm_scale, causal, n_split, out,
                         lse, o_part, lse_part)
    if n_split > 1:
        mla_decode_combine(o_part, lse_part, out, lse)
    torch.cuda.synchronize()
    return out, lse, o_part, lse_part


@pytest.mark.parametrize("b,s_q,h_q,h_kv,causal,n_split", CASES,
                         ids=[f"sq{c[1]}_hq{c[2]}_hkv{c[3]}_{'causal' if c[4] else 'full'}"
                              f"_split{c[5]}" for c in CASES])
def test_seesaw_decode_matches_reference(b, s_q, h_q, h_kv, causal, n_split):
    q, k_cache, bt, sl = make_decode_inputs(b, s_q, h_q, h_kv, MIXED, device="cuda",
                                            seed=h_q + 7 * n_split + s_q)
    out, lse, o_part, lse_part = run_seesaw(q, k_cache, bt, sl, causal, n_split)
    ref_out, ref_lse = mla_decode_reference(q, k_cache, bt, sl, causal=causal)
    check(out, lse, ref_out, ref_lse, f"s_q={s_q} h_q={h_q} h_kv={h_kv} causal={causal} "
                                      f"n_split={n_split}")
    if n_split > 1:  # every split writes every row of its request, a split without tokens 0/-inf
        assert not o_part.isnan().any() and not lse_part.isnan().any()
        for i, n in enumerate(MIXED):
            chunk = -(-(-(-n // n_split)) // 64) * 64
            for s in range(n_split):
                if min(n, (s + 1) * chunk) <= s * chunk:
                    assert (lse_part[i, s] == float("-inf")).all(), (i, s)
                    assert (o_part[i, s] == 0).all(), (i, s)


def test_seesaw_decode_odd_tile_counts():
    """Seqlens of 1, 3, 63 and 65 pages (and ends mid-page): the last pair's second tile has no
    position, so its page must not be read and its scores must not count; with splits of 3 the
    split boundaries give odd tile counts inside a request too."""
    seqlens = [1, 64 * 3, 64 * 63 - 5, 64 * 65, 64 * 2 + 1, 0, 64 * 5 - 63]
    q, k_cache, bt, sl = make_decode_inputs(7, 2, 64, 1, seqlens, device="cuda", seed=13)
    for causal, n_split in [(False, 1), (True, 1), (True, 3)]:
        out, lse, _, _ = run_seesaw(q, k_cache, bt, sl, causal, n_split)
        ref_out, ref_lse = mla_decode_reference(q, k_cache, bt, sl, causal=causal)
        check(out, lse, ref_out, ref_lse, f"odd tiles causal={causal} n_split={n_split}")


def test_seesaw_decode_batch_of_seven_long_and_short():
    """b = 7 with two long requests around the short ones, and a seqlen that ends mid-page."""
    seqlens = [4096, 0, 65, 1, 64, 63, 4096 + 17]
    q, k_cache, bt, sl = make_decode_inputs(7, 2, 128, 1, seqlens, device="cuda", seed=3)
    for causal, n_split in [(True, 1), (True, 5), (False, 2)]:
        out, lse, _, _ = run_seesaw(q, k_cache, bt, sl, causal, n_split)
        ref_out, ref_lse = mla_decode_reference(q, k_cache, bt, sl, causal=causal)
        check(out, lse, ref_out, ref_lse, f"b=7 causal={causal} n_split={n_split}")


@pytest.mark.parametrize("b,s_q,h_q,causal,n_split", [(1, 1, 128, False, 1), (1, 2, 128, True, 8),
                                                      (2, 1, 16, False, 16)],
                         ids=["b1_one_split", "b1_mtp_causal_split8", "b2_tp8_split16"])
def test_seesaw_decode_long_requests(b, s_q, h_q, causal, n_split):
    """32K-token requests (512 tiles, 256 pairs per split without splitting)."""
    q, k_cache, bt, sl = make_decode_inputs(b, s_q, h_q, 1, [32768, 32768 - 100][:b],
                                            device="cuda", seed=21)
    out, lse, _, _ = run_seesaw(q, k_cache, bt, sl, causal, n_split)
    ref_out, ref_lse = mla_decode_reference(q, k_cache, bt, sl, causal=causal)
    check(out, lse, ref_out, ref_lse, f"32K b={b} s_q={s_q} h_q={h_q} n_split={n_split}")


@pytest.mark.parametrize("first_of_pair", [False, True],
                         ids=["moves_on_both_tiles", "moves_on_consumer0_tiles"])
def test_seesaw_decode_lazy_rescale_moves_its_reference_in_each_pair(first_of_pair):
    """Each K tile's keys lean towards q by one more step than the previous tile's (~12 log2
    units, more than 2^TAU), so the lazy reference max moves at every tile: at consumer0's tile
    (its alpha0) and at consumer1's (the beta consumer0 applies to its output and to the P0 it
    hands over). With ``first_of_pair`` each pair's tiles are swapped, so it moves only at
    consumer0's. A skipped or misapplied rescale is off by a factor of at least 2^8."""
    seqlens = [640, 500]
    q, k_cache, bt, sl = make_decode_inputs(2, 1, 64, 1, seqlens, device="cuda", seed=9)
    g = torch.Generator(device="cuda").manual_seed(9)
    direction = torch.randn(576, device="cuda", generator=g)
    direction /= direction.norm()
    q = (q.float() + 30.0 * direction).bfloat16()
    for i, n in enumerate(seqlens):
        t = torch.arange(n, device="cuda")
        tile = t // 64
        rank = tile ^ 1 if first_of_pair else tile
        pages, rows = bt[i, tile].long(), t % 64
        k_cache[pages, rows, 0] = (k_cache[pages, rows, 0].float()
                                   + (rank * 6.5).float()[:, None] * direction).bfloat16()
    ref_out, ref_lse = mla_decode_reference(q, k_cache, bt, sl)
    for n_split in (1, 3):
        out, lse, _, _ = run_seesaw(q, k_cache, bt, sl, False, n_split)
        rel = ((out.float() - ref_out).norm() / ref_out.norm()).item()
        assert rel <= OUT_REL, f"n_split={n_split}: relative error {rel:.3g}"
        assert (lse - ref_lse).abs().max().item() <= 1e-4


def test_seesaw_decode_replays_in_a_cuda_graph_with_new_seqlens():
    """The pair count is read from cache_seqlens on the device, so one captured launch (split
    kernel + combine) serves a later step whose requests grew: replay after changing
    cache_seqlens in place (within each request's pages) and compare with the reference."""
    b, s_q, h_q = 4, 1, 128
    q, k_cache, bt, sl = make_decode_inputs(b, s_q, h_q, 1, [700, 64, 1, 2000], device="cuda",
                                            seed=4, poison=False)
    n_split = 3
    out = torch.empty(b, s_q, h_q, 512, device="cuda", dtype=torch.bfloat16)
    lse = torch.empty(b, h_q, s_q, device="cuda")
    o_part = torch.empty(b, n_split, s_q, h_q, 512, device="cuda")
    lse_part = torch.empty(b, n_split, s_q, h_q, device="cuda")

    def step():
        launch_decode_seesaw(q, k_cache, bt, sl, 576 ** -0.5, False, n_split, out, lse, o_part,
                             lse_part)
        mla_decode_combine(o_part, lse_part, out, lse)

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        step()  # compile and warm up outside the capture
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step()
    for lens in ([700, 64, 1, 2000], [765, 65, 0, 1999], [640, 128, 63, 2000]):
        sl.copy_(torch.tensor(lens, dtype=torch.int32))
        out.fill_(float("nan"))
        lse.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        ref_out, ref_lse = mla_decode_reference(q, k_cache, bt, sl)
        check(out, lse, ref_out, ref_lse, f"graph replay, seqlens {lens}")
