"""The narrow-head SparseMLA prefill (tle_kernels/sparse_mla_narrow.py, h_q <= 32, the heads as the
wgmma's N) on the CPU: its protocol verifies for every trip count, its math (executed against the
CPU emulation of the language, tle_compiler/testing/emulator.py) matches the fp32 reference at
every head count it takes, hostile indices and empty rows included, the API takes it where it
should (and says why not elsewhere), its launch over aligned copies when q or an output is not
16-byte aligned, and it compiles for sm_90a without register spills."""

from __future__ import annotations

import re

import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from tle_kernels import api  # noqa: E402
from tle_kernels.reference import sparse_mla_reference  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
KERNEL = ROOT / "tle_kernels" / "sparse_mla_narrow.py"
SCALE = 576 ** -0.5


def test_protocol_verified_for_every_trip_count():
    r = subprocess.run([sys.executable, "-m", "tle_compiler.cli.dump", str(KERNEL)],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "sparse_mla_narrow: verified for every value of NK" in r.stdout + r.stderr
    # the topk_length kernel: NK read from memory in the kernel body, proved for every value
    assert "sparse_mla_narrow_topk_length: verified for every value of NK" in r.stdout + r.stderr


@pytest.fixture(scope="module")
def emulated():
    from tle_compiler.testing.emulator import load_kernel_module

    return load_kernel_module(KERNEL, dot_dtypes=(torch.bfloat16,)).sparse_mla_narrow


def hostile_case(s_q, h_q, s_kv, topk, seed):
    """q, kv with scores spread wide enough to move the lazy reference max, and indices with
    every kind of invalid slot (-1, -2^31, s_kv, 2^31 - 1), a row with none valid and a row whose
    first tiles are all invalid."""
    g = torch.Generator().manual_seed(seed)
    q = (torch.randn(s_q, h_q, 576, generator=g) * 0.3).bfloat16()
    kv = (torch.randn(s_kv, 1, 576, generator=g) * 0.3).bfloat16()
    kv[::7] *= 8  # some rows score far above the others
    idx = torch.randint(0, s_kv, (s_q, 1, topk), generator=g, dtype=torch.int32)
    bad = torch.tensor([-1, -2**31, s_kv, 2**31 - 1], dtype=torch.int32)
    hole = torch.rand(s_q, 1, topk, generator=g) < 0.3
    idx[hole] = bad[torch.randint(0, 4, (int(hole.sum()),), generator=g)]
    idx[1] = -1            # no valid index at all
    idx[2, 0, :130] = -1   # the first tiles fully invalid, later ones valid
    return q, kv, idx


def run_emulated(kernel, q, kv, idx, block_h, sink=None):
    s_q, h_q, _ = q.shape
    out = torch.full((s_q, h_q, 512), float("nan")).bfloat16()
    lse, ml = torch.full((s_q, h_q), float("nan")), torch.full((s_q, h_q), float("nan"))
    kernel[(s_q,)](q, kv, idx, out, lse, ml, q.stride(0), q.stride(1), kv.stride(0),
                   idx.stride(0), out.stride(0), out.stride(1), lse.stride(0), kv.shape[0],
                   float(SCALE), h_q, lse if sink is None else sink, TOPK=idx.shape[-1],
                   BLOCK_H=block_h, SINK=sink is not None)
    return out, ml, lse


def assert_matches(got, want):
    out, ml, lse = got
    w_out, w_ml, w_lse = want
    assert not out.float().isnan().any() and not lse.isnan().any() and not ml.isnan().any()
    assert ((out.float() - w_out).norm() / w_out.norm()).item() < 5e-3  # bf16 P and out
    assert (out[1] == 0).all()
    assert torch.allclose(lse, w_lse, atol=1e-5, rtol=0)
    assert torch.allclose(ml, w_ml, atol=1e-5, rtol=0)
    assert (lse[1] == float("inf")).all() and (ml[1] == float("-inf")).all()


@pytest.mark.parametrize("h_q", [1, 8, 16, 20, 32])
def test_math_matches_the_reference_in_cpu_emulation(emulated, h_q):
    from tle_kernels.sparse_mla_narrow_launch import block_heads

    q, kv, idx = hostile_case(3, h_q, 300, 192, seed=h_q)
    got = run_emulated(emulated, q, kv, idx, block_heads(h_q))
    assert_matches(got, sparse_mla_reference(q, kv, idx, SCALE))


@pytest.mark.parametrize("h_q", [5, 16, 32])
def test_attn_sink_in_cpu_emulation(emulated, h_q):
    """exp(sink[h]) joins each head's denominator of out (lse stays that of the scores): -inf
    (no effect), +30 (out ~ 0) and random sinks."""
    from tle_kernels.sparse_mla_narrow_launch import block_heads

    q, kv, idx = hostile_case(3, h_q, 300, 192, seed=40 + h_q)
    sink = torch.randn(h_q) * 2
    sink[0], sink[1] = float("-inf"), 30.0
    got = run_emulated(emulated, q, kv, idx, block_heads(h_q), sink)
    assert_matches(got, sparse_mla_reference(q, kv, idx, SCALE, attn_sink=sink))
    assert got[0][0, 1].abs().max() < 1e-6


def test_launch_over_aligned_copies(emulated, monkeypatch):
    """q and the outputs as views 2 bytes / 4 bytes off a 16-byte boundary: the launch runs the
    kernel over aligned copies and writes the results into the views, nothing around them."""
    import tle_kernels.sparse_mla_narrow as N

    monkeypatch.setattr(N, "sparse_mla_narrow", emulated)
    s_q, h_q = 3, 12
    q0, kv, idx = hostile_case(s_q, h_q, 300, 128, seed=5)
    qbuf = torch.zeros(q0.numel() + 1, dtype=torch.bfloat16)
    q = qbuf[1:].view(s_q, h_q, 576)
    q.copy_(q0)
    obuf = torch.full((s_q * h_q * 512 + 2,), 7.0).bfloat16()
    out = obuf[1:-1].view(s_q, h_q, 512)
    lbuf = torch.full((2, s_q * h_q + 2), 7.0)
    ml, lse = lbuf[0, 1:-1].view(s_q, h_q), lbuf[1, 1:-1].view(s_q, h_q)
    assert not api.rows_aligned(q) and not api.rows_aligned(out)
    assert api.launch("auto", q, kv, idx, SCALE, out, ml, lse) == "narrow"
    assert_matches((out, ml, lse), sparse_mla_reference(q0, kv, idx, SCALE))
    assert obuf[0] == 7 and obuf[-1] == 7 and (lbuf[:, 0] == 7).all() and (lbuf[:, -1] == 7).all()


@pytest.fixture(scope="module")
def emulated_length():
    from tle_compiler.testing.emulator import load_kernel_module

    mod = load_kernel_module(KERNEL, dot_dtypes=(torch.bfloat16,))
    return mod.sparse_mla_narrow_topk_length


def run_emulated_length(kernel, q, kv, idx, block_h, lengths, sink=None):
    s_q, h_q, _ = q.shape
    out = torch.full((s_q, h_q, 512), float("nan")).bfloat16()
    lse, ml = torch.full((s_q, h_q), float("nan")), torch.full((s_q, h_q), float("nan"))
    kernel[(s_q,)](q, kv, idx, out, lse, ml, q.stride(0), q.stride(1), kv.stride(0),
                   idx.stride(0), out.stride(0), out.stride(1), lse.stride(0), kv.shape[0],
                   float(SCALE), h_q, lse if sink is None else sink, lengths, TOPK=idx.shape[-1],
                   BLOCK_H=block_h, SINK=sink is not None)
    return out, ml, lse


# per row: 0 (no tile at all), 1, 63, 64, 65, past topk, negative, the whole row
LENGTHS = [0, 1, 63, 64, 65, 1000, -5, 192]


@pytest.mark.parametrize("h_q,sink", [(8, False), (16, True), (32, False), (20, True)])
def test_topk_length_matches_the_reference_in_cpu_emulation(emulated_length, h_q, sink):
    """Each row reads only its first clamp(n, 0, topk) slots: the slots past n name kv rows full of
    NaN, so reading or using one shows. A row with n = 0 runs no tile: out 0, lse +inf."""
    from tle_kernels.sparse_mla_narrow_launch import block_heads

    s_q, topk, s_kv = len(LENGTHS), 192, 300
    q, kv, idx = hostile_case(s_q, h_q, s_kv, topk, seed=60 + h_q)
    kv = torch.cat([kv, torch.full((40, 1, 576), float("nan")).bfloat16()])
    idx[idx == s_kv] = s_kv + 40  # the invalid index s_kv would name a NaN row now
    lengths = torch.tensor(LENGTHS, dtype=torch.int32)
    for r, n in enumerate(LENGTHS):
        n = max(0, min(n, topk))
        idx[r, 0, n:] = torch.randint(s_kv, s_kv + 40, (topk - n,), dtype=torch.int32)
    sinks = None
    if sink:
        sinks = torch.randn(h_q) * 2
        sinks[0] = float("-inf")
    out, ml, lse = run_emulated_length(emulated_length, q, kv, idx, block_heads(h_q), lengths,
                                       sinks)
    w_out, w_ml, w_lse = sparse_mla_reference(q, kv, idx, SCALE, attn_sink=sinks,
                                              topk_length=lengths)
    assert not out.float().isnan().any() and not lse.isnan().any() and not ml.isnan().any()
    assert ((out.float() - w_out).norm() / w_out.norm()).item() < 5e-3
    assert torch.equal(torch.isinf(lse), torch.isinf(w_lse))
    fin = torch.isfinite(w_lse)
    assert torch.allclose(lse[fin], w_lse[fin], atol=1e-5, rtol=0)
    assert torch.equal(ml[~torch.isfinite(w_ml)], w_ml[~torch.isfinite(w_ml)])
    assert torch.allclose(ml[torch.isfinite(w_ml)], w_ml[torch.isfinite(w_ml)], atol=1e-5, rtol=0)
    for r in (0, 6):  # no slot at all: out 0, lse +inf, max_logits -inf
        assert (out[r] == 0).all() and (lse[r] == float("inf")).all()
        assert (ml[r] == float("-inf")).all()


def test_topk_length_launch_through_the_api(monkeypatch, emulated_length):
    """api.launch("auto", ..., topk_length=) at h_q 16 runs the topk_length kernel (the plain one,
    which must not run here, raises)."""
    import tle_kernels.sparse_mla_narrow as N

    class NotThisOne:
        def __getitem__(self, grid):
            raise AssertionError("the plain narrow kernel ran a topk_length call")
    monkeypatch.setattr(N, "sparse_mla_narrow_topk_length", emulated_length)
    monkeypatch.setattr(N, "sparse_mla_narrow", NotThisOne())
    q, kv, idx = hostile_case(4, 16, 300, 128, seed=5)
    lengths = torch.tensor([128, 0, 70, 3], dtype=torch.int32)
    out, ml, lse = api.empty_outputs(q)
    assert api.launch("auto", q, kv, idx, SCALE, out, ml, lse, topk_length=lengths) == "narrow"
    w_out, _, w_lse = sparse_mla_reference(q, kv, idx, SCALE, topk_length=lengths)
    assert ((out.float() - w_out).norm() / w_out.norm()).item() < 5e-3
    assert torch.equal(torch.isinf(lse), torch.isinf(w_lse))


@pytest.mark.parametrize("h_q,d_qk,topk,sink,tlen,expect", [
    (1, 576, 2048, False, False, "narrow"),
    (8, 576, 2048, False, False, "narrow"),
    (16, 576, 2048, False, False, "narrow"),
    (32, 576, 64, False, False, "narrow"),
    (33, 576, 2048, False, False, "seesaw"),
    (32, 576, 2048, True, False, "narrow"),   # attn_sink too
    (32, 576, 2048, True, True, "narrow"),    # topk_length: its topk_length kernel
    (16, 576, 2048, False, True, "narrow"),
    (8, 576, 192, False, True, "narrow"),
    (32, 512, 2048, False, False, "narrow"),  # d_qk 512: its d512 kernels
    (16, 512, 2048, True, True, "narrow"),
    (33, 512, 2048, False, False, "seesaw"),
    (32, 576, 100, False, False, "naive"),
])
def test_auto_takes_it_for_the_calls_it_serves(h_q, d_qk, topk, sink, tlen, expect):
    assert api.select_impl("auto", h_q, d_qk, topk, sink, tlen) == expect


@pytest.mark.parametrize("args,why", [
    ((33, 576, 2048), "narrow needs h_q <= 32 (got h_q=33)"),
    ((32, 256, 2048), "narrow needs d_qk == 576 or 512 (got d_qk=256)"),
    ((32, 576, 100), "narrow needs topk % 64 == 0 (got topk=100)"),
])
def test_what_it_refuses_and_why(args, why):
    assert api.unsupported_reason("narrow", *args) == why
    with pytest.raises(ValueError, match="impl='narrow' cannot run this call"):
        api.select_impl("narrow", *args)


def test_block_heads():
    from tle_kernels.sparse_mla_narrow_launch import block_heads

    assert [block_heads(h) for h in (1, 8, 16, 17, 32)] == [16, 16, 16, 32, 32]
    for h in (0, 33):
        with pytest.raises(ValueError, match="1 <= h_q <= 32"):
            block_heads(h)


@pytest.mark.parametrize("block_h", [16, 32])
def test_compiles_for_sm90a_without_spills(block_h):
    pytest.importorskip("triton")
    from tle_compiler.lowering import compile_kernel, ptxas_stats
    import tle_kernels.sparse_mla_narrow as N

    cfg = N.DEFAULT_CONFIG["sparse_mla_narrow"]
    c = compile_kernel(N.sparse_mla_narrow, cfg["signature"],
                       dict(cfg["constexprs"], BLOCK_H=block_h))
    st = ptxas_stats(c)
    assert st["spill_stores"] == 0 and st["spill_loads"] == 0, st["log"]
    assert not st["wgmma_serialized"]
    assert c.metadata.shared <= 232448
    # eager publish: every thread arrives with release semantics, no elected arrive between
    # two partition-wide bar.syncs (the scores partition releases three barrier groups a tile)
    ptx = c.asm["ptx"]
    assert "mbarrier.arrive.release.cta.shared::cta.b64" in ptx
    assert len(re.findall(r"\bbar\.sync\b|\bbarrier\.sync\b", ptx)) <= 30, "bar.sync count"



@pytest.mark.parametrize("block_h,sink", [(16, False), (32, True)])
def test_topk_length_kernel_compiles_for_sm90a_without_spills(block_h, sink):
    pytest.importorskip("triton")
    from tle_compiler.lowering import compile_kernel, ptxas_stats
    import tle_kernels.sparse_mla_narrow as N

    cfg = N.DEFAULT_CONFIG["sparse_mla_narrow_topk_length"]
    c = compile_kernel(N.sparse_mla_narrow_topk_length, cfg["signature"],
                       dict(cfg["constexprs"], BLOCK_H=block_h, SINK=sink))
    st = ptxas_stats(c)
    assert st["spill_stores"] == 0 and st["spill_loads"] == 0, st["log"]
    assert not st["wgmma_serialized"]
    assert c.metadata.shared <= 232448
