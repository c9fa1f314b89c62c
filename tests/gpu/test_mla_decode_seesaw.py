"""The TLE-FlashMLA seesaw MLA decode kernel on the GPU, through ``launch_scheduled`` (the kernel
walking the balanced schedule of tle_kernels/mla_decode_parts.py, then the scheduled combine of
the requests split between programs) against the fp32 decode reference: the checks both decode
kernels share (tests/gpu/decode_checks.py: the pipe decode's cases, mixed seqlens, poisoned inputs
and outputs; where they pass a split count, it is the seesaw's part count P), and what is the
seesaw's own: odd tile counts (an odd last tile's partner is all masked), the lazy reference
moving at either consumer's tile, long requests, the batches of the decode benchmark with the
part count a launch on this GPU uses, and one program per request (``balance=False``). Every test
runs both K producers of the kernel (its TMA constexpr): cp.async row gathers and TMA boxes
shifted so that no cache row past a request's end (NaN here) reaches a slot.

    python3 -m pytest -q -m gpu tests/gpu/test_mla_decode_seesaw.py
"""

from __future__ import annotations

import pytest

from . import decode_checks as checks

pytestmark = pytest.mark.gpu

LAUNCHES = checks.seesaw_launches()
PRODUCER = pytest.mark.parametrize("producer", list(LAUNCHES))


@pytest.mark.parametrize("b,s_q,h_q,h_kv,causal,n_split", checks.CASES, ids=checks.CASE_IDS)
@PRODUCER
def test_seesaw_decode_matches_reference(producer, b, s_q, h_q, h_kv, causal, n_split):
    checks.check_case(LAUNCHES[producer], b, s_q, h_q, h_kv, causal, n_split)


@PRODUCER
def test_seesaw_decode_odd_tile_counts(producer):
    """Seqlens of 1, 3, 63 and 65 pages (and ends mid-page): the last pair's second tile has no
    position, so its page must not be read and its scores must not count; with splits of 3 the
    split boundaries give odd tile counts inside a request too."""
    checks.check_requests(LAUNCHES[producer],
                          [1, 64 * 3, 64 * 63 - 5, 64 * 65, 64 * 2 + 1, 0, 64 * 5 - 63], 2, 64,
                          [(False, 1), (True, 1), (True, 3)], seed=13, what="odd tiles")


@PRODUCER
def test_seesaw_decode_batch_of_seven_long_and_short(producer):
    checks.check_batch_of_seven_long_and_short(LAUNCHES[producer])


@pytest.mark.parametrize("b,s_q,h_q,causal,n_split", [(1, 1, 128, False, 1), (1, 2, 128, True, 8),
                                                      (2, 1, 16, False, 16)],
                         ids=["b1_one_split", "b1_mtp_causal_split8", "b2_tp8_split16"])
@PRODUCER
def test_seesaw_decode_long_requests(producer, b, s_q, h_q, causal, n_split):
    """32K-token requests (512 tiles, 256 pairs per split without splitting)."""
    checks.check_requests(LAUNCHES[producer], [32768, 32768 - 100][:b], s_q, h_q,
                          [(causal, n_split)], seed=21, what=f"32K b={b} s_q={s_q} h_q={h_q}")


@pytest.mark.parametrize("first_of_pair", [False, True],
                         ids=["moves_on_both_tiles", "moves_on_consumer0_tiles"])
@PRODUCER
def test_seesaw_decode_lazy_rescale_moves_its_reference_in_each_pair(producer, first_of_pair):
    """Each K tile's keys lean towards q by one more step than the previous tile's (~12 log2
    units, more than 2^TAU), so the lazy reference max moves at every tile: at consumer0's tile
    (its alpha0) and at consumer1's (the beta consumer0 applies to its output and to the P0 it
    hands over). With ``first_of_pair`` each pair's tiles are swapped, so it moves only at
    consumer0's."""
    def lean(i, t, n):
        tile = t // 64
        return (tile ^ 1 if first_of_pair else tile) * 6.5

    checks.check_lazy_rescale(LAUNCHES[producer], [640, 500], lean)


@PRODUCER
def test_seesaw_decode_replays_in_a_cuda_graph_with_new_seqlens(producer):
    checks.check_graph_replay_with_new_seqlens(LAUNCHES[producer],
                                               [[765, 65, 0, 1999], [640, 128, 63, 2000]])


@pytest.mark.parametrize("b,s_q,h_q,causal", [(7, 1, 128, False), (64, 2, 128, True),
                                              (128, 1, 16, False), (128, 1, 128, False),
                                              (1, 2, 32, True)],
                         ids=["b7_h128", "b64_mtp_causal", "b128_tp8", "b128_h128", "b1_h32"])
@pytest.mark.parametrize("balance,run", [(True, 1), (False, 1), (False, 2), (False, 3)],
                         ids=["balanced", "per_request", "runs_of_2", "runs_of_3"])
@PRODUCER
def test_seesaw_decode_issue_batches_with_this_gpus_parts(producer, balance, run, b, s_q, h_q,
                                                          causal):
    """Batches mixing seqlens 0 / 1 / 63 / 64 / 65 / 4096 / 32768 (random non-contiguous block
    tables), with the part count a launch on this GPU uses (parts_for: the SMs over the row
    blocks), so the parts cut requests wherever the lengths put them; one program per request;
    and runs of two or three whole requests per program."""
    import torch

    from tle_kernels.decode_reference import make_decode_inputs, mla_decode_reference
    from tle_kernels.mla_decode_launch import parts_for

    lens = [0, 1, 63, 64, 65, 4096, 32768]
    seqlens = [lens[(i * 5 + 3) % len(lens)] for i in range(b)] if b > 1 else [32768]
    q, k_cache, bt, sl = make_decode_inputs(b, s_q, h_q, 1, seqlens, device="cuda", seed=b + s_q)
    sms = torch.cuda.get_device_properties(q.device).multi_processor_count
    launch = checks.ScheduledLaunch(tma=LAUNCHES[producer].tma, balance=balance, run=run)
    out, lse, _, _ = checks.run_decode(launch, q, k_cache, bt, sl, causal,
                                       parts_for(b, s_q, h_q, 1, sms))
    ref_out, ref_lse = mla_decode_reference(q, k_cache, bt, sl, causal=causal)
    checks.check(out, lse, ref_out, ref_lse,
                 f"b={b} s_q={s_q} h_q={h_q} balance={balance} run={run}")
