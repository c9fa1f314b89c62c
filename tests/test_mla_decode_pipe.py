"""The TLE-Pipe MLA decode kernel (tle_kernels/mla_decode_pipe.py) on the CPU: its protocol is
verified for every trip count read from cache_seqlens, it compiles for sm_90a without register
spills, and its math (run by the CPU emulator with exactly the arguments
tle_kernels/mla_decode_pipe_launch.py launches it with) matches the fp32 decode reference, one
split or several, causal or not, grouped kv heads, partial row blocks and empty requests included.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tle_kernels.mla_decode_pipe_launch import (BLOCK_H, decode_grid, decode_pipe_call,
                                                pipe_unsupported_reason)

KERNEL = Path(__file__).resolve().parent.parent / "tle_kernels" / "mla_decode_pipe.py"


# ---------------------------------------------------------------- protocol and compilation


def test_tle_dump_graph_verifies_for_every_trip_count(capsys):
    """The trip count comes from cache_seqlens at run time; the kernel body computes it once and
    hands the same NK to every partition, so the verifier treats it as one opaque param and proves
    the protocol for every value of it (a split past the last token has NK = 0)."""
    from tle_compiler.cli.dump import main

    code = main(["--graph", "--format", "json", str(KERNEL)])
    out = json.loads(capsys.readouterr().out)
    (k,) = out["kernels"]
    assert code == 0 and k["verified"] and k["verdict"] == "proved", k["reason"]
    assert k["scope"].startswith("every value of NK")
    assert [p["name"] if isinstance(p, dict) else p for p in k["params"]] == ["NK"]


def test_every_partition_loops_over_the_same_trip_count():
    from tle_compiler.frontend import read_kernels
    from tle_compiler.ir import For

    (info,) = read_kernels(str(KERNEL))
    loops = {part.name: [s for s in part.body if isinstance(s, For)]
             for part in info.program.partitions}
    assert set(loops) == {"producer", "left", "right"}
    for name, fors in loops.items():
        assert len(fors) == 1, name
        assert str(fors[0].start) == "0" and str(fors[0].stop) == "NK", name


@pytest.mark.parametrize("causal,split", [(False, False), (True, True)],
                         ids=["one_split", "causal_split"])
def test_compiles_for_sm90a_without_spills(causal, split):
    """Both output paths (bf16 out + lse, fp32 parts) and the causal mask: no register spills
    with the workers at [240, 168], and the pipes fit in Hopper's shared memory."""
    import tle_kernels.mla_decode_pipe as mod
    from tle_compiler.lowering import compile_kernel, ptxas_stats

    sig = dict(mod.DEFAULT_CONFIG["signature"], out_ptr="*fp32" if split else "*bf16")
    constexprs = dict(mod.DEFAULT_CONFIG["constexprs"], CAUSAL=causal, SPLIT=split)
    c = compile_kernel(mod.mla_decode_pipe, sig, constexprs)
    st = ptxas_stats(c)
    assert st["ok"], st["log"]
    assert (st["spill_stores"], st["spill_loads"]) == (0, 0), st["log"]
    assert c.metadata.shared <= 232_448
    assert re.search(r"setmaxnreg\.inc\.sync\.aligned\.u32\s+240\b", c.asm["ptx"])  # the left


# ---------------------------------------------------------------- the launcher


def test_pipe_unsupported_reason():
    for s_q, h_q, h_kv in [(1, 16, 1), (2, 128, 1), (4, 128, 8), (1, 8, 8), (3, 48, 2)]:
        assert pipe_unsupported_reason(s_q, h_q, h_kv) is None
    assert "multiple of h_kv" in pipe_unsupported_reason(1, 48, 5)
    assert "s_q" in pipe_unsupported_reason(0, 16, 1)
    assert "h_kv" in pipe_unsupported_reason(1, 16, 0)


def test_grid_covers_every_row_of_every_kv_head():
    # rows of a kv head: s_q * h_q / h_kv, in blocks of 64
    assert BLOCK_H == 64
    assert decode_grid(128, 1, 128, 1, 1) == (256, 1)
    assert decode_grid(64, 2, 128, 1, 3) == (256, 3)
    assert decode_grid(7, 1, 16, 1, 2) == (7, 2)
    assert decode_grid(5, 3, 48, 2, 1) == (5 * 2 * 2, 1)  # 72 rows per kv head: 2 blocks


def test_split_launch_needs_fp32_parts():
    torch = pytest.importorskip("torch")
    from tle_kernels.decode_reference import make_decode_inputs

    q, k, bt, sl = make_decode_inputs(2, 1, 16, 1, [5, 70], device="cpu", seed=0)
    out, lse = torch.empty(2, 1, 16, 512).bfloat16(), torch.empty(2, 16, 1)
    with pytest.raises(ValueError, match="o_part and lse_part"):
        decode_pipe_call(q, k, bt, sl, 0.1, False, 2, out, lse)
    with pytest.raises(ValueError, match="o_part must be fp32"):
        decode_pipe_call(q, k, bt, sl, 0.1, False, 2, out, lse,
                         torch.empty(2, 2, 1, 16, 512).bfloat16(), torch.empty(2, 2, 1, 16))
    grid, args, constexprs = decode_pipe_call(q, k, bt, sl, 0.1, True, 1, out, lse)
    assert grid == (2, 1) and constexprs == {"BLOCK_H": 64, "CAUSAL": False, "SPLIT": False}


# ---------------------------------------------------------------- math, in CPU emulation


def _emulated():
    torch = pytest.importorskip("torch")
    from tle_compiler.testing.emulator import load_kernel_module

    return load_kernel_module(KERNEL, dot_dtypes=(torch.bfloat16,))


def _merge(o_part, lse_part):
    """The combine's formula (tle_kernels/mla_decode_combine.py) in torch: out = sum_s
    exp(lse_s - lse) o_s, lse = log sum_s exp(lse_s); an empty split (lse_s = -inf) has weight 0,
    a row with no token anywhere gives out 0 and lse +inf. lse comes back as [b, h_q, s_q]."""
    import torch

    m = lse_part.max(1, keepdim=True).values
    m = torch.where(m == float("-inf"), 0.0, m)
    w = torch.exp(lse_part - m)                       # [b, n_split, s_q, h_q]
    total = w.sum(1)
    out = (w[..., None] * torch.where(w[..., None] > 0, o_part, 0.0)).sum(1) \
        / torch.where(total > 0, total, 1.0)[..., None]
    lse = torch.where(total > 0, torch.log(total) + m[:, 0], float("inf"))
    return out, lse.transpose(1, 2)


def _split_range(seqlen: int, n_split: int, s: int) -> tuple[int, int]:
    chunk = -(-(-(-seqlen // n_split)) // 64) * 64
    return s * chunk, min(seqlen, (s + 1) * chunk)


def _run(mod, q, k, bt, sl, causal, n_split, sm_scale=None):
    """The emulated kernel, launched as launch_decode_pipe launches it, into NaN-poisoned
    outputs; the split parts are merged as the combine merges them. Returns (out fp32, lse,
    o_part, lse_part)."""
    import torch

    b, s_q, h_q, _ = q.shape
    sm_scale = 576 ** -0.5 if sm_scale is None else sm_scale
    out = torch.full((b, s_q, h_q, 512), float("nan")).bfloat16()
    lse = torch.full((b, h_q, s_q), float("nan"))
    o_part = torch.full((b, n_split, s_q, h_q, 512), float("nan"))
    lse_part = torch.full((b, n_split, s_q, h_q), float("nan"))
    grid, args, constexprs = decode_pipe_call(q, k, bt, sl, sm_scale, causal, n_split, out, lse,
                                              o_part, lse_part)
    mod.mla_decode_pipe[grid](*args, **constexprs)
    if n_split == 1:
        assert o_part.isnan().all() and lse_part.isnan().all()  # untouched
        return out.float(), lse, None, None
    assert out.float().isnan().all() and lse.isnan().all()      # the combine's to write
    assert not o_part.isnan().any() and not lse_part.isnan().any()
    merged, merged_lse = _merge(o_part, lse_part)
    return merged, merged_lse, o_part, lse_part


CASES = [
    # b, s_q, h_q, h_kv, seqlens, causal, n_split
    (6, 1, 16, 1, [0, 1, 63, 64, 65, 300], False, 1),    # TP8 heads: one partial row block
    (6, 2, 32, 2, [0, 1, 63, 64, 65, 300], True, 1),     # causal row before the first token
    (3, 2, 64, 1, [1, 65, 300], True, 3),                # 128 rows: two whole row blocks
    (4, 1, 128, 2, [0, 64, 129, 300], False, 4),         # more splits than some requests' pages
    (2, 3, 48, 2, [130, 7], True, 2),                    # 72 rows per kv head: a partial 2nd block
]


@pytest.mark.parametrize("b,s_q,h_q,h_kv,seqlens,causal,n_split", CASES,
                         ids=[f"b{c[0]}_sq{c[1]}_hq{c[2]}_hkv{c[3]}_{'causal' if c[5] else 'full'}"
                              f"_split{c[6]}" for c in CASES])
def test_emulated_kernel_matches_the_reference(b, s_q, h_q, h_kv, seqlens, causal, n_split):
    """Against tle_kernels/decode_reference.py (fp32) on poisoned inputs: cache rows past seqlen
    are NaN and block-table entries past a request's pages name no page, so reading either
    shows (NaN, or the emulator's out-of-bounds assertion)."""
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


def test_emulated_lazy_rescale_moves_its_reference_across_tiles():
    """Scores that grow by ~40 log2 units along the positions move the lazy reference max many
    times (every 2^TAU); one split and four must still match the reference (a skipped or
    misapplied rescale is off by a factor of at least 2^8)."""
    torch = pytest.importorskip("torch")
    from tle_kernels.decode_reference import make_decode_inputs, mla_decode_reference

    mod = _emulated()
    b, s_q, h_q, h_kv, n = 2, 1, 64, 1, 500
    q, k, bt, sl = make_decode_inputs(b, s_q, h_q, h_kv, [n, n - 37], device="cpu", seed=5)
    g = torch.Generator().manual_seed(5)
    direction = torch.randn(576, generator=g)
    direction /= direction.norm()
    q = (q.float() + 30.0 * direction).bfloat16()
    for i in range(b):  # the key of position t leans towards q in proportion to t
        for t in range(int(sl[i])):
            k[bt[i, t // 64], t % 64, 0] += (t / n * 40.0 * direction).bfloat16()
    ref_out, ref_lse = mla_decode_reference(q, k, bt, sl)
    score = (q[0, 0].float() @ k[bt[0, :8].long()].reshape(-1, 576)[:n].float().T) \
        * 576 ** -0.5 * 1.4426950408889634
    assert (score.max(1).values - score[:, :64].max(1).values).min() > 40  # log2 units
    for n_split in (1, 4):
        out, lse, _, _ = _run(mod, q, k, bt, sl, False, n_split)
        assert ((out - ref_out).norm() / ref_out.norm()).item() < 5e-3
        assert (lse - ref_lse).abs().max().item() < 1e-4
