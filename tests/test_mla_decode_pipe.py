"""The TLE-Pipe MLA decode kernel (tle_kernels/mla_decode_pipe.py) on the CPU: its protocol is
verified for every trip count read from cache_seqlens, it compiles for sm_90a without register
spills, its launcher checks shapes, and its math (run by the CPU emulator with exactly the
arguments tle_kernels/mla_decode_pipe_launch.py launches it with) matches the fp32 decode
reference, one split or several, causal or not, grouped kv heads, partial row blocks and empty
requests included. The checks are tests/decode_kernel_checks.py's, shared with the seesaw decode.
"""

from __future__ import annotations

import pytest

from tle_kernels.mla_decode_launch import BLOCK_H, decode_grid
from tle_kernels.mla_decode_pipe_launch import pipe_unsupported_reason

from . import decode_kernel_checks as checks

# ---------------------------------------------------------------- protocol and compilation


def test_tle_dump_graph_verifies_for_every_trip_count(capsys):
    """The trip count comes from cache_seqlens at run time; the kernel body computes it once and
    hands the same NK to every partition, so the verifier treats it as one opaque param and proves
    the protocol for every value of it (a split past the last token has NK = 0)."""
    checks.check_verified_for_every_value("pipe", "NK", capsys)


def test_every_partition_loops_over_the_same_trip_count():
    checks.check_partitions_loop_over("pipe", {"producer", "left", "right"}, "NK")


@pytest.mark.parametrize("causal,split", [(False, False), (True, True)],
                         ids=["one_split", "causal_split"])
def test_compiles_for_sm90a_without_spills(causal, split):
    """Both output paths (bf16 out + lse, fp32 parts) and the causal mask: no register spills
    with the workers at [240, 168] (the left raises to 240), and the pipes fit in shared memory."""
    checks.check_compiles_without_spills("pipe", causal, split, regs=240)


# ---------------------------------------------------------------- the launcher


def test_pipe_unsupported_reason():
    checks.check_unsupported_reason("pipe", pipe_unsupported_reason)


def test_grid_covers_every_row_of_every_kv_head():
    # rows of a kv head: s_q * h_q / h_kv, in blocks of 64
    assert BLOCK_H == 64
    assert decode_grid(128, 1, 128, 1, 1) == (256, 1)
    assert decode_grid(64, 2, 128, 1, 3) == (256, 3)
    assert decode_grid(7, 1, 16, 1, 2) == (7, 2)
    assert decode_grid(5, 3, 48, 2, 1) == (5 * 2 * 2, 1)  # 72 rows per kv head: 2 blocks


def test_launch_checks_shapes_and_alignment():
    checks.check_launch_shapes("pipe")


# ---------------------------------------------------------------- math, in CPU emulation


@pytest.mark.parametrize("b,s_q,h_q,h_kv,seqlens,causal,n_split", checks.CASES,
                         ids=checks.CASE_IDS)
def test_emulated_kernel_matches_the_reference(b, s_q, h_q, h_kv, seqlens, causal, n_split):
    checks.check_case("pipe", b, s_q, h_q, h_kv, seqlens, causal, n_split)


@pytest.mark.parametrize("b,s_q,h_q,h_kv,seqlens,causal,n_split", checks.MASK_EDGE_CASES,
                         ids=checks.MASK_EDGE_IDS)
def test_emulated_mask_edges_match_the_reference(b, s_q, h_q, h_kv, seqlens, causal, n_split):
    """The left consumer's tiles skip the position mask before every row's limit, unsplit and
    split (a split's tiles start at its own lo; checks.MASK_EDGE_CASES)."""
    checks.check_case("pipe", b, s_q, h_q, h_kv, seqlens, causal, n_split)


def test_emulated_lazy_rescale_moves_its_reference_across_tiles():
    """Scores that grow by ~40 log2 units along the positions move the lazy reference max many
    times (every 2^TAU); one split and four must still match the reference."""
    q, k, bt, sl, score = checks.leaning_inputs(lambda i, t, n: t / n * 40.0)
    assert (score.max(1).values - score[:, :64].max(1).values).min() > 40  # log2 units
    checks.check_matches_reference_unsplit_and_split("pipe", q, k, bt, sl)
