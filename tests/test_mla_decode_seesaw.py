"""The TLE-FlashMLA seesaw MLA decode kernel (tle_kernels/mla_decode_seesaw.py) on the CPU: its
protocol is verified for every pair count read from cache_seqlens, its generated Gluon performs
exactly the verified barrier operations, it compiles for sm_90a without register spills in every
CAUSAL x SPLIT variant, its launcher keeps the pipe decode's contract, and
its math (run by the CPU emulator with exactly the arguments
tle_kernels/mla_decode_seesaw_launch.py launches it with) matches the fp32 decode reference on the
pipe decode's cases (tests/test_mla_decode_pipe.py): one split or several, causal or not, grouped
kv heads, partial row blocks, empty requests, and odd tile counts (a pair's second tile masked).
"""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import pytest

from tle_kernels.mla_decode_seesaw_launch import (decode_seesaw_call, launch_decode_seesaw,
                                                  seesaw_unsupported_reason)

from .test_mla_decode_pipe import CASES, _merge, _split_range

KERNEL = Path(__file__).resolve().parent.parent / "tle_kernels" / "mla_decode_seesaw.py"


# ---------------------------------------------------------------- protocol and compilation


def test_tle_dump_graph_verifies_for_every_pair_count(capsys):
    """The pair count NP = ceil(NK / 2) comes from cache_seqlens at run time; the kernel body
    computes it once and hands the same value to every partition, so the verifier treats it as one
    opaque param and proves the protocol for every value of it (an empty split has NP = 0)."""
    from tle_compiler.cli.dump import main

    code = main(["--graph", "--format", "json", str(KERNEL)])
    out = json.loads(capsys.readouterr().out)
    (k,) = out["kernels"]
    assert code == 0 and k["verified"] and k["verdict"] == "proved", k["reason"]
    assert k["scope"].startswith("every value of NP")
    assert [p["name"] if isinstance(p, dict) else p for p in k["params"]] == ["NP"]


def test_every_partition_loops_over_the_same_pair_count():
    from tle_compiler.frontend import read_kernels
    from tle_compiler.ir import For

    (info,) = read_kernels(str(KERNEL))
    loops = {part.name: [s for s in part.body if isinstance(s, For)]
             for part in info.program.partitions}
    assert set(loops) == {"producer", "consumer0", "consumer1"}
    for name, fors in loops.items():
        assert len(fors) == 1, name
        assert str(fors[0].start) == "0" and str(fors[0].stop) == "NP", name


@pytest.mark.parametrize("causal,split", [(False, False), (False, True), (True, False),
                                          (True, True)],
                         ids=["one_split", "split", "causal_one_split", "causal_split"])
def test_compiles_for_sm90a_without_spills(causal, split):
    """Both output paths (bf16 out + lse, fp32 parts) with and without the causal mask: no
    register spills with the consumers at [224, 224], and the pipes fit in Hopper's shared
    memory."""
    import tle_kernels.mla_decode_seesaw as mod
    from tle_compiler.lowering import compile_kernel, ptxas_stats

    sig = dict(mod.DEFAULT_CONFIG["signature"], out_ptr="*fp32" if split else "*bf16")
    constexprs = dict(mod.DEFAULT_CONFIG["constexprs"], CAUSAL=causal, SPLIT=split)
    c = compile_kernel(mod.mla_decode_seesaw, sig, constexprs)
    st = ptxas_stats(c)
    assert st["ok"], st["log"]
    assert (st["spill_stores"], st["spill_loads"]) == (0, 0), st["log"]
    assert c.metadata.shared <= 232_448
    assert re.search(r"setmaxnreg\.inc\.sync\.aligned\.u32\s+224\b", c.asm["ptx"])  # consumers


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
    lk = LoweredKernel((str(KERNEL), "mla_decode_seesaw"),
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
    for s_q, h_q, h_kv in [(1, 16, 1), (2, 128, 1), (4, 128, 8), (1, 8, 8), (3, 48, 2)]:
        assert seesaw_unsupported_reason(s_q, h_q, h_kv) is None
    assert "seesaw needs h_q to be a multiple of h_kv" in seesaw_unsupported_reason(1, 48, 5)
    assert "s_q" in seesaw_unsupported_reason(0, 16, 1)
    assert "h_kv" in seesaw_unsupported_reason(1, 16, 0)


def test_launch_checks_shapes_and_alignment():
    torch = pytest.importorskip("torch")
    from tle_kernels.decode_reference import make_decode_inputs

    q, k, bt, sl = make_decode_inputs(2, 1, 16, 1, [5, 70], device="cpu", seed=0)
    out, lse = torch.empty(2, 1, 16, 512).bfloat16(), torch.empty(2, 16, 1)
    with pytest.raises(ValueError, match="o_part and lse_part"):
        decode_seesaw_call(q, k, bt, sl, 0.1, False, 2, out, lse)
    with pytest.raises(ValueError, match="seesaw needs q and k_cache rows of 576"):
        decode_seesaw_call(q[..., :512], k, bt, sl, 0.1, False, 1, out, lse)
    grid, args, constexprs = decode_seesaw_call(q, k, bt, sl, 0.1, True, 1, out, lse)
    assert grid == (2, 1) and constexprs == {"BLOCK_H": 64, "CAUSAL": False, "SPLIT": False}
    unaligned = torch.zeros(2, 1, 16, 577).bfloat16()[..., 1:]  # rows start 2 bytes in
    with pytest.raises(ValueError, match="q: the seesaw decode kernel needs 16-byte aligned rows"):
        launch_decode_seesaw(unaligned, k, bt, sl, 0.1, False, 1, out, lse)


# ---------------------------------------------------------------- math, in CPU emulation


def _emulated():
    torch = pytest.importorskip("torch")
    from tle_compiler.testing.emulator import load_kernel_module

    return load_kernel_module(KERNEL, dot_dtypes=(torch.bfloat16,))


def _run(mod, q, k, bt, sl, causal, n_split, sm_scale=None):
    """The emulated kernel, launched as launch_decode_seesaw launches it, into NaN-poisoned
    outputs; the split parts are merged as the combine merges them. Returns (out fp32, lse,
    o_part, lse_part)."""
    import torch

    b, s_q, h_q, _ = q.shape
    sm_scale = 576 ** -0.5 if sm_scale is None else sm_scale
    out = torch.full((b, s_q, h_q, 512), float("nan")).bfloat16()
    lse = torch.full((b, h_q, s_q), float("nan"))
    o_part = torch.full((b, n_split, s_q, h_q, 512), float("nan"))
    lse_part = torch.full((b, n_split, s_q, h_q), float("nan"))
    grid, args, constexprs = decode_seesaw_call(q, k, bt, sl, sm_scale, causal, n_split, out, lse,
                                                o_part, lse_part)
    mod.mla_decode_seesaw[grid](*args, **constexprs)
    if n_split == 1:
        assert o_part.isnan().all() and lse_part.isnan().all()  # untouched
        return out.float(), lse, None, None
    assert out.float().isnan().all() and lse.isnan().all()      # the combine's to write
    assert not o_part.isnan().any() and not lse_part.isnan().any()
    merged, merged_lse = _merge(o_part, lse_part)
    return merged, merged_lse, o_part, lse_part


@pytest.mark.parametrize("b,s_q,h_q,h_kv,seqlens,causal,n_split", CASES,
                         ids=[f"b{c[0]}_sq{c[1]}_hq{c[2]}_hkv{c[3]}_{'causal' if c[5] else 'full'}"
                              f"_split{c[6]}" for c in CASES])
def test_emulated_kernel_matches_the_reference(b, s_q, h_q, h_kv, seqlens, causal, n_split):
    """Against tle_kernels/decode_reference.py (fp32) on poisoned inputs: cache rows past seqlen
    are NaN and block-table entries past a request's pages name no page, so reading either shows
    (NaN, or the emulator's out-of-bounds assertion). The seqlens give odd tile counts (1, 3, 5
    pages), whose last pair's second tile has no position: its page must not be read."""
    torch = pytest.importorskip("torch")
    from tle_kernels.decode_reference import make_decode_inputs, mla_decode_reference

    mod = _emulated()
    q, k, bt, sl = make_decode_inputs(b, s_q, h_q, h_kv, seqlens, device="cpu", seed=11)
    out, lse, o_part, lse_part = _run(mod, q, k, bt, sl, causal, n_split)
    ref_out, ref_lse = mla_decode_reference(q, k, bt, sl, causal=causal)

    assert not out.isnan().any() and not lse.isnan().any()
    assert (out - ref_out).abs().max().item() < 2e-3          # bf16 P (and bf16 out, one split)
    empty = ref_lse == float("inf")
    assert torch.equal(lse[empty], ref_lse[empty])             # no token: +inf ...
    assert (out.permute(0, 2, 1, 3)[empty] == 0).all()         # ... and out 0
    assert (lse[~empty] - ref_lse[~empty]).abs().max().item() < 1e-4
    if n_split > 1:  # a split with no token of a request: lse -inf and o_part exactly 0
        for i, n in enumerate(seqlens):
            for s in range(n_split):
                lo, hi = _split_range(n, n_split, s)
                if hi <= lo:
                    assert (lse_part[i, s] == float("-inf")).all()
                    assert (o_part[i, s] == 0).all()
                else:
                    assert (lse_part[i, s, -1] > float("-inf")).all()  # the last query sees all


@pytest.mark.parametrize("first_of_pair", [False, True],
                         ids=["moves_on_both_tiles", "moves_on_consumer0_tiles"])
def test_emulated_lazy_rescale_moves_its_reference_in_each_pair(first_of_pair):
    """Each K tile's keys lean towards q by one more step than the previous tile's, a step of
    ~12 log2 units (more than 2^TAU), so the lazy reference max moves at every tile: at
    consumer0's tile of a pair (its own rescale alpha0 before P0·V0) and at consumer1's (the beta
    that consumer0 applies to its output and to the P0 it hands over). With ``first_of_pair`` the
    tiles of each pair are swapped, so the reference moves only at consumer0's tile and beta stays
    1. One split and four must match the reference (a skipped or misapplied rescale is off by a
    factor of at least 2^8)."""
    torch = pytest.importorskip("torch")
    from tle_kernels.decode_reference import make_decode_inputs, mla_decode_reference

    mod = _emulated()
    b, s_q, h_q, h_kv, n = 2, 1, 64, 1, 500
    q, k, bt, sl = make_decode_inputs(b, s_q, h_q, h_kv, [n, n - 37], device="cpu", seed=5)
    g = torch.Generator().manual_seed(5)
    direction = torch.randn(576, generator=g)
    direction /= direction.norm()
    q = (q.float() + 30.0 * direction).bfloat16()
    for i in range(b):  # the keys of tile j lean towards q by j (or j's partner) steps
        for t in range(int(sl[i])):
            tile = t // 64
            rank = tile ^ 1 if first_of_pair else tile
            k[bt[i, tile], t % 64, 0] += (rank * 6.5 * direction).bfloat16()
    ref_out, ref_lse = mla_decode_reference(q, k, bt, sl)
    score = (q[0, 0].float() @ k[bt[0, :8].long()].reshape(-1, 576)[:n].float().T) \
        * 576 ** -0.5 * 1.4426950408889634
    tile_max = torch.stack([score[:, 64 * j:64 * j + 64].max(1).values for j in range(8)])
    if first_of_pair:  # consumer0's tile (2p) is each pair's highest, 2^TAU above the last pair's
        assert (tile_max[0::2] > tile_max[1::2]).all()
        assert (tile_max[2::2] - tile_max[0:-2:2] > 8).all()
    else:              # every tile is 2^TAU above the one before
        assert (tile_max[1:] - tile_max[:-1] > 8).all()
    for n_split in (1, 4):
        out, lse, _, _ = _run(mod, q, k, bt, sl, False, n_split)
        assert ((out - ref_out).norm() / ref_out.norm()).item() < 5e-3
        assert (lse - ref_lse).abs().max().item() < 1e-4
