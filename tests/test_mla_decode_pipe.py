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
    checks.check_partitions_loop_over("pipe", {"producer", "left", "right"}, "NK",
                                      binds=({"BLOCK_H": 64, "TMA": 0, "QTMA": 0},
                                             {"BLOCK_H": 64, "TMA": 1, "QTMA": 0},
                                             {"BLOCK_H": 64, "TMA": 1, "QTMA": 1}))


@pytest.mark.parametrize("tma", [0, 1], ids=["cp_async", "tma"])
@pytest.mark.parametrize("causal,split", [(False, False), (True, True)],
                         ids=["one_split", "causal_split"])
def test_compiles_for_sm90a_without_spills(causal, split, tma):
    """Both output paths (bf16 out + lse, fp32 parts), the causal mask and both K producers: no
    register spills with the workers at [240, 168] (the left raises to 240), and the pipes fit
    in shared memory."""
    checks.check_compiles_without_spills("pipe", causal, split, regs=240, TMA=tma, QTMA=tma)


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


# ---------------------------------------------------------------- the TMA producer


@pytest.mark.parametrize("tma", [False, True], ids=["cp_async", "tma"])
def test_decode_call_passes_descriptors_exactly_with_tma(tma):
    """decode_call for the pipe kernel: with TMA the two descriptors over k_cache follow it
    (boxes [1, 64, 1, 256] and [1, 64, 1, 64]) and TMA = 1; without, k_cache stands in their
    places and TMA = 0."""
    torch = pytest.importorskip("torch")
    from tle_kernels.decode_reference import make_decode_inputs
    from tle_kernels.mla_decode_launch import decode_call

    q, k, bt, sl = make_decode_inputs(2, 1, 16, 1, [5, 70], device="cpu", seed=0)
    out, lse = torch.empty(2, 1, 16, 512).bfloat16(), torch.empty(2, 16, 1)
    _, args, constexprs = decode_call("pipe", q, k, bt, sl, 0.1, False, 1, out, lse, tma=tma)
    assert constexprs["TMA"] == int(tma)
    assert args[1] is k
    if tma:
        assert [list(d.block_shape) for d in args[2:4]] == [[1, 64, 1, 256], [1, 64, 1, 64]]
        assert all(d.base is k for d in args[2:4])
    else:
        assert args[2] is k and args[3] is k


def test_the_pipe_decode_copies_q_by_tma_only_when_asked(monkeypatch):
    """Q_TMA_BY_DEFAULT: the pipe decode's Q copy by TMA (not yet run on a GPU) is taken when a
    launch asks for it, by the keyword or TLE_DECODE_QTMA=1; the seesaw's wherever it can."""
    pytest.importorskip("torch")
    from tle_kernels.decode_reference import make_decode_inputs
    from tle_kernels.mla_decode_launch import Q_TMA_BY_DEFAULT, QTMA_ENV, use_q_tma

    monkeypatch.delenv(QTMA_ENV, raising=False)
    q, _, _, _ = make_decode_inputs(2, 1, 16, 1, [5, 70], device="cpu", seed=0)
    assert Q_TMA_BY_DEFAULT == {"seesaw": True, "pipe": False}
    assert not use_q_tma(q, 1, None, Q_TMA_BY_DEFAULT["pipe"])
    assert use_q_tma(q, 1, True, Q_TMA_BY_DEFAULT["pipe"])
    monkeypatch.setenv(QTMA_ENV, "1")
    assert use_q_tma(q, 1, None, Q_TMA_BY_DEFAULT["pipe"])


def test_decode_call_passes_q_descriptors_exactly_with_q_tma():
    """With q_tma the pipe kernel takes two descriptors over q viewed as rows [b * s_q * h_q,
    576] after k_cache's (boxes [64, 256] and [64, 64]: its q slot holds the RoPE tail too) and
    QTMA = 1; without, q stands in their places; a q whose rows cannot be boxed is refused."""
    torch = pytest.importorskip("torch")
    from tle_kernels.decode_reference import make_decode_inputs
    from tle_kernels.mla_decode_launch import decode_call

    q, k, bt, sl = make_decode_inputs(2, 2, 16, 1, [5, 70], device="cpu", seed=0)
    out, lse = torch.empty(2, 2, 16, 512).bfloat16(), torch.empty(2, 16, 2)
    for q_tma in (False, True):
        _, args, constexprs = decode_call("pipe", q, k, bt, sl, 0.1, False, 1, out, lse,
                                          tma=True, q_tma=q_tma)
        assert constexprs["QTMA"] == int(q_tma)
        if q_tma:
            assert [list(d.block_shape) for d in args[4:6]] == [[64, 256], [64, 64]]
            assert all(d.base is q and list(d.shape) == [64, 576] for d in args[4:6])
        else:
            assert args[4] is q and args[5] is q
    with pytest.raises(ValueError, match="cannot copy Q with TMA: a row block's q rows"):
        decode_call("pipe", q, k.expand(-1, -1, 2, -1), bt, sl, 0.1, False, 1, out, lse,
                    q_tma=True)


@pytest.mark.parametrize("b,s_q,h_q,h_kv,seqlens,causal,n_split",
                         [c for c in checks.CASES if c[3] == 1 or c[1] == 1],
                         ids=[i for c, i in zip(checks.CASES, checks.CASE_IDS)
                              if c[3] == 1 or c[1] == 1])
def test_emulated_q_tma_matches_the_reference(b, s_q, h_q, h_kv, seqlens, causal, n_split):
    """Q copied as TMA boxes (with the TMA K producer): a partial row block's unused rows take
    the next rows of q, or zeros past its end, and never reach a stored output."""
    checks.check_case("pipe", b, s_q, h_q, h_kv, seqlens, causal, n_split, tma=True, q_tma=True)


def test_tle_dump_ptx_lowers_the_tma_producer_it_verified(capsys):
    """``tle-dump --ptx --param TMA=1`` reads the kernel specialised to the TMA producer, verifies
    it and lowers rank-4 bulk tensor copies with expect-tx arrives; q is still a gather."""
    from tle_compiler.cli.dump import main

    code = main(["--ptx", "--param", "TMA=1", str(checks.kernel_file("pipe"))])
    ptx = capsys.readouterr().out
    assert code == 0
    assert ptx.count("cp.async.bulk.tensor.4d") == 3  # kv_l, kv_r, tkv: one box each
    assert "mbarrier.arrive.expect_tx" in ptx
    assert "cp.async.ca.shared" in ptx or "cp.async.cg.shared" in ptx


@pytest.mark.parametrize("b,s_q,h_q,h_kv,seqlens,causal,n_split",
                         checks.CASES + checks.MASK_EDGE_CASES,
                         ids=checks.CASE_IDS + checks.MASK_EDGE_IDS)
def test_emulated_tma_producer_matches_the_reference(b, s_q, h_q, h_kv, seqlens, causal,
                                                      n_split):
    """The TMA producer's shifted boxes (a split's last page copied at token shift n - 64, so no
    cache row at or past the split's end lands in a slot; the poisoned cache rows are NaN) and
    the left's masks by slot position, against the fp32 reference."""
    checks.check_case("pipe", b, s_q, h_q, h_kv, seqlens, causal, n_split, tma=True)
