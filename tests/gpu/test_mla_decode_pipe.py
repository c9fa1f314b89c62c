"""The TLE-Pipe MLA decode kernel on the GPU, through ``launch_decode_pipe`` (plus the combine of
tle_kernels/mla_decode_combine.py when it runs split), against the fp32 decode reference, with the
checks both decode kernels share (tests/gpu/decode_checks.py: poisoned inputs and outputs, seqlens
0 / 1 / 63 / 64 / 65 / 4096 mixed in one batch). Every test runs both K producers of the kernel
(its TMA constexpr, forced by keyword): cp.async row gathers and TMA boxes shifted so that no
cache row at or past a split's end (NaN here) reaches a slot.

    python3 -m pytest -q -m gpu tests/gpu/test_mla_decode_pipe.py
"""

from __future__ import annotations

import functools

import pytest

from tle_kernels.mla_decode_pipe_launch import launch_decode_pipe

from . import decode_checks as checks

pytestmark = pytest.mark.gpu

LAUNCHES = {"cp_async": functools.partial(launch_decode_pipe, tma=False),
            "tma": functools.partial(launch_decode_pipe, tma=True)}
PRODUCER = pytest.mark.parametrize("producer", list(LAUNCHES))


@pytest.mark.parametrize("b,s_q,h_q,h_kv,causal,n_split", checks.CASES, ids=checks.CASE_IDS)
@PRODUCER
def test_pipe_decode_matches_reference(producer, b, s_q, h_q, h_kv, causal, n_split):
    checks.check_case(LAUNCHES[producer], b, s_q, h_q, h_kv, causal, n_split)


@PRODUCER
def test_pipe_decode_batch_of_seven_long_and_short(producer):
    checks.check_batch_of_seven_long_and_short(LAUNCHES[producer])


@PRODUCER
def test_pipe_decode_lazy_rescale_with_growing_scores(producer):
    """Scores growing by ~60 log2 units along the positions move the lazy reference max many
    times."""
    checks.check_lazy_rescale(LAUNCHES[producer], [2048, 1000], lambda i, t, n: t / n * 50.0)


@PRODUCER
def test_pipe_decode_replays_in_a_cuda_graph_with_new_seqlens(producer):
    checks.check_graph_replay_with_new_seqlens(LAUNCHES[producer], [[765, 65, 0, 2047]])
