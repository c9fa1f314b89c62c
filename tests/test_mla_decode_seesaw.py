"""The TLE-FlashMLA seesaw MLA decode kernel (tle_kernels/mla_decode_seesaw.py) on the CPU: its
protocol is verified for every pair count read from cache_seqlens, its generated Gluon performs
exactly the verified barrier operations, it compiles for sm_90a without register spills in every
CAUSAL x SPLIT variant, its launcher keeps the pipe decode's contract, and its math (run by the
CPU emulator with exactly the arguments tle_kernels/mla_decode_seesaw_launch.py launches it with)
matches the fp32 decode reference on the pipe decode's cases: one split or several, causal or not,
grouped kv heads, partial row blocks, empty requests, and odd tile counts (a pair's second tile
masked). The checks both decode kernels share are tests/decode_kernel_checks.py's.
"""

from __future__ import annotations

import inspect

import pytest

from tle_kernels.mla_decode_seesaw_launch import launch_decode_seesaw, seesaw_unsupported_reason

from . import decode_kernel_checks as checks

# ---------------------------------------------------------------- protocol and compilation


def test_tle_dump_graph_verifies_for_every_pair_count(capsys):
    """The pair count NP = ceil(NK / 2) comes from cache_seqlens at run time; the kernel body
    computes it once and hands the same value to every partition, so the verifier treats it as one
    opaque param and proves the protocol for every value of it (an empty split has NP = 0)."""
    checks.check_verified_for_every_value("seesaw", "NP", capsys)


def test_every_partition_loops_over_the_same_pair_count():
    checks.check_partitions_loop_over("seesaw", {"producer", "consumer0", "consumer1"}, "NP")


@pytest.mark.parametrize("causal,split", [(False, False), (False, True), (True, False),
                                          (True, True)],
                         ids=["one_split", "split", "causal_one_split", "causal_split"])
def test_compiles_for_sm90a_without_spills(causal, split):
    """Both output paths (bf16 out + lse, fp32 parts) with and without the causal mask: no
    register spills with the consumers at [224, 224], and the pipes fit in Hopper's shared
    memory."""
    checks.check_compiles_without_spills("seesaw", causal, split, regs=224)


@pytest.mark.parametrize("causal,split", [(False, False), (True, True)],
                         ids=["one_split", "causal_split"])
def test_lowering_emits_the_verified_barrier_operations(causal, split):
    """What is lowered is what was verified (tests/test_lowering_events.py's check): the
    generated Gluon's mbarrier operations, partition by partition, equal the verified events for
    pair counts 0, 1, 2, 3 and 5, and no release hands back a slot an in-flight wgmma reads (the
    P1·V1_L left in flight across the back-edge included). NP is read from cache_seqlens, which
    the trace interpreter cannot evaluate, so the prologue's one line computing NP is replaced by
    the value (a runtime integer) before tracing."""
    pytest.importorskip("triton.experimental.gluon")
    import tle_kernels.mla_decode_seesaw as mod
    from tle_compiler.testing.gluon_trace import (LoweredKernel, compare, release_rings_of,
                                                  trace_gluon)

    cfg = mod.DEFAULT_CONFIG
    lk = LoweredKernel((str(checks.kernel_file("seesaw")), "mla_decode_seesaw"),
                       dict(cfg["constexprs"], CAUSAL=causal, SPLIT=split))
    np_line = "    NP = ((NK + 1) // 2)\n"
    assert lk.gen.source.count(np_line) == 1
    args = {a: 64 for a, t in cfg["signature"].items() if t == "i32"}
    constexprs = {c: lk.constexprs[c] for c in lk.info.constexprs}
    for n_pairs in (0, 1, 2, 3, 5):
        source = lk.gen.source.replace(np_line, f"    NP = s_q * 0 + {n_pairs}\n")
        trace = trace_gluon(source, lk.gen.kernel, args, constexprs,
                            release_rings=release_rings_of(lk.gen.plans))
        params = lk.params(trace)
        assert params == {"NP": n_pairs}
        problems = compare(lk.expected(params), trace, lk.partitions, source) + trace.violations
        assert not problems, "\n".join(problems)


# ---------------------------------------------------------------- the launcher


def test_launcher_keeps_the_pipe_decode_contract():
    """decode_api.py runs every TLE decode kernel through the same launch signature."""
    from tle_kernels.mla_decode_pipe_launch import launch_decode_pipe, pipe_unsupported_reason

    assert list(inspect.signature(launch_decode_seesaw).parameters) == \
        list(inspect.signature(launch_decode_pipe).parameters)
    assert list(inspect.signature(seesaw_unsupported_reason).parameters) == \
        list(inspect.signature(pipe_unsupported_reason).parameters)


def test_seesaw_unsupported_reason():
    checks.check_unsupported_reason("seesaw", seesaw_unsupported_reason)


def test_launch_checks_shapes_and_alignment():
    checks.check_launch_shapes("seesaw")


# ---------------------------------------------------------------- math, in CPU emulation


@pytest.mark.parametrize("b,s_q,h_q,h_kv,seqlens,causal,n_split", checks.CASES,
                         ids=checks.CASE_IDS)
def test_emulated_kernel_matches_the_reference(b, s_q, h_q, h_kv, seqlens, causal, n_split):
    """The seqlens give odd tile counts (1, 3, 5 pages), whose last pair's second tile has no
    position: its page must not be read."""
    checks.check_case("seesaw", b, s_q, h_q, h_kv, seqlens, causal, n_split)


@pytest.mark.parametrize("first_of_pair", [False, True],
                         ids=["moves_on_both_tiles", "moves_on_consumer0_tiles"])
def test_emulated_lazy_rescale_moves_its_reference_in_each_pair(first_of_pair):
    """Each K tile's keys lean towards q by one more step than the previous tile's, a step of
    ~12 log2 units (more than 2^TAU), so the lazy reference max moves at every tile: at
    consumer0's tile of a pair (its own rescale alpha0 before P0·V0) and at consumer1's (the beta
    that consumer0 applies to its output and to the P0 it hands over). With ``first_of_pair`` the
    tiles of each pair are swapped, so the reference moves only at consumer0's tile and beta stays
    1. One split and four must match the reference."""
    def lean(i, t, n):  # the keys of tile j lean towards q by j (or j's partner) steps
        tile = t // 64
        return (tile ^ 1 if first_of_pair else tile) * 6.5

    q, k, bt, sl, score = checks.leaning_inputs(lean)
    torch = pytest.importorskip("torch")
    tile_max = torch.stack([score[:, 64 * j:64 * j + 64].max(1).values for j in range(8)])
    if first_of_pair:  # consumer0's tile (2p) is each pair's highest, 2^TAU above the last pair's
        assert (tile_max[0::2] > tile_max[1::2]).all()
        assert (tile_max[2::2] - tile_max[0:-2:2] > 8).all()
    else:              # every tile is 2^TAU above the one before
        assert (tile_max[1:] - tile_max[:-1] > 8).all()
    checks.check_matches_reference_unsplit_and_split("seesaw", q, k, bt, sl)
