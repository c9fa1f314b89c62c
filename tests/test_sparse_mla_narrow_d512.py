"""The narrow-head SparseMLA prefill at d_qk = 512 (no RoPE tail; tle_kernels/sparse_mla_narrow.py's
``sparse_mla_narrow_d512`` and ``sparse_mla_narrow_d512_topk_length``: the same partitions, the
tail fields neither written nor read) on the CPU: both kernels verify for every trip count, and
their protocols have no event on the tail fields; their math in the CPU emulation matches the
fp32 reference with hostile indices, attn_sink and topk_length; "auto" runs them for d_qk = 512
at h_q <= 32 (and not the d576 kernels); they compile for sm_90a without spills, with fewer
wgmmas than the d576 kernel. On the GPU (tests/gpu/test_sparse_mla_narrow.py) q and kv are also
512-wide views of rows whose other columns are NaN, so a read of a tail shows."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

from tle_kernels import api  # noqa: E402
from tle_kernels.reference import sparse_mla_reference  # noqa: E402

from .test_sparse_mla_narrow import KERNEL, ROOT, assert_matches, hostile_case  # noqa: E402

SCALE = 512 ** -0.5


def test_both_kernels_verified_for_every_trip_count():
    r = subprocess.run([sys.executable, "-m", "tle_compiler.cli.dump", str(KERNEL)],
                       capture_output=True, text=True, cwd=ROOT)
    text = r.stdout + r.stderr
    assert r.returncode == 0, text
    for name in ("sparse_mla_narrow_d512", "sparse_mla_narrow_d512_topk_length"):
        assert f"{name}: verified for every value of NK" in text, text
    # each kernel's protocol as tle-dump prints it: the d576 kernels write and read the tail
    # fields (q_tail, tkv), the d512 kernels have no event on them
    blocks = dict(re.findall(r"^kernel (\w+)\n(.*?)(?=^kernel |\Z)", r.stdout, re.S | re.M))
    assert set(blocks) >= {"sparse_mla_narrow", "sparse_mla_narrow_d512",
                           "sparse_mla_narrow_d512_topk_length"}
    tail = re.compile(r"\.(write|read)\([^)]*\b(tkv|q_tail)\)")
    assert tail.search(blocks["sparse_mla_narrow"])
    assert not tail.search(blocks["sparse_mla_narrow_d512"])
    assert not tail.search(blocks["sparse_mla_narrow_d512_topk_length"])


def d512_case(s_q, h_q, s_kv, topk, seed):
    """hostile_case's q, kv and indices, 512 columns wide (contiguous: the emulator takes
    contiguous arguments only)."""
    q6, kv6, idx = hostile_case(s_q, h_q, s_kv, topk, seed)
    return q6[..., :512].contiguous(), kv6[..., :512].contiguous(), idx


@pytest.fixture(scope="module")
def emulated():
    from tle_compiler.testing.emulator import load_kernel_module

    return load_kernel_module(KERNEL, dot_dtypes=(torch.bfloat16,))


def run(kernel, q, kv, idx, block_h, sink=None, lengths=None):
    s_q, h_q, _ = q.shape
    out = torch.full((s_q, h_q, 512), float("nan")).bfloat16()
    lse, ml = torch.full((s_q, h_q), float("nan")), torch.full((s_q, h_q), float("nan"))
    args = [q, kv, idx, out, lse, ml, q.stride(0), q.stride(1), kv.stride(0), idx.stride(0),
            out.stride(0), out.stride(1), lse.stride(0), kv.shape[0], float(SCALE), h_q,
            lse if sink is None else sink]
    if lengths is not None:
        args.append(lengths)
    kernel[(s_q,)](*args, TOPK=idx.shape[-1], BLOCK_H=block_h, SINK=sink is not None)
    return out, ml, lse


@pytest.mark.parametrize("h_q,sink", [(1, False), (16, True), (20, False), (32, True)])
def test_math_matches_the_reference_in_cpu_emulation(emulated, h_q, sink):
    from tle_kernels.sparse_mla_narrow_launch import block_heads

    q, kv, idx = d512_case(3, h_q, 300, 192, seed=70 + h_q)
    sinks = None
    if sink:
        sinks = torch.randn(h_q) * 2
        sinks[0] = float("-inf")
    got = run(emulated.sparse_mla_narrow_d512, q, kv, idx, block_heads(h_q), sinks)
    assert_matches(got, sparse_mla_reference(q, kv, idx, SCALE, attn_sink=sinks))


def test_topk_length_matches_the_reference_in_cpu_emulation(emulated):
    """Each row reads its first clamp(n, 0, topk) slots only (0, 1, 65, past topk, negative)."""
    from tle_kernels.sparse_mla_narrow_launch import block_heads

    lengths = torch.tensor([0, 1, 65, 1000, -5, 192], dtype=torch.int32)
    q, kv, idx = d512_case(len(lengths), 16, 300, 192, seed=90)
    idx[1] = torch.randint(0, 300, (1, 192), dtype=torch.int32)  # row 1: its first slot valid
    got = run(emulated.sparse_mla_narrow_d512_topk_length, q, kv, idx, block_heads(16),
              lengths=lengths)
    w_out, w_ml, w_lse = sparse_mla_reference(q, kv, idx, SCALE, topk_length=lengths)
    out, ml, lse = got
    assert not out.float().isnan().any() and not lse.isnan().any()
    assert ((out.float() - w_out).norm() / w_out.norm()).item() < 5e-3
    assert torch.equal(torch.isinf(lse), torch.isinf(w_lse))
    fin = torch.isfinite(w_lse)
    assert torch.allclose(lse[fin], w_lse[fin], atol=1e-5, rtol=0)
    assert (out[0] == 0).all() and (lse[0] == float("inf")).all() and (lse[4] == float("inf")).all()


def test_auto_runs_the_d512_kernels(emulated, monkeypatch):
    """api.launch("auto") at d_qk 512, h_q 12: the d512 kernel, and with topk_length its
    topk_length kernel; the d576 kernels must not run."""
    import tle_kernels.sparse_mla_narrow as N

    class NotThisOne:
        def __getitem__(self, grid):
            raise AssertionError("a d576 narrow kernel ran a d_qk = 512 call")
    monkeypatch.setattr(N, "sparse_mla_narrow_d512", emulated.sparse_mla_narrow_d512)
    monkeypatch.setattr(N, "sparse_mla_narrow_d512_topk_length",
                        emulated.sparse_mla_narrow_d512_topk_length)
    monkeypatch.setattr(N, "sparse_mla_narrow", NotThisOne())
    monkeypatch.setattr(N, "sparse_mla_narrow_topk_length", NotThisOne())
    q, kv, idx = d512_case(4, 12, 300, 128, seed=6)
    for lengths in (None, torch.tensor([128, 0, 70, 3], dtype=torch.int32)):
        out, ml, lse = api.empty_outputs(q)
        assert api.launch("auto", q, kv, idx, SCALE, out, ml, lse, topk_length=lengths) == "narrow"
        w_out, _, w_lse = sparse_mla_reference(q, kv, idx, SCALE, topk_length=lengths)
        assert ((out.float() - w_out).norm() / w_out.norm()).item() < 5e-3
        assert torch.equal(torch.isinf(lse), torch.isinf(w_lse))


@pytest.mark.parametrize("name,block_h,sink", [("sparse_mla_narrow_d512", 16, False),
                                               ("sparse_mla_narrow_d512", 32, True),
                                               ("sparse_mla_narrow_d512_topk_length", 32, False)])
def test_compiles_for_sm90a_without_spills(name, block_h, sink):
    pytest.importorskip("triton")
    from tle_compiler.lowering import compile_kernel, ptxas_stats
    import tle_kernels.sparse_mla_narrow as N

    def compiled(kname):
        cfg = N.DEFAULT_CONFIG[kname]
        return compile_kernel(getattr(N, kname), cfg["signature"],
                              dict(cfg["constexprs"], BLOCK_H=block_h, SINK=sink))

    c = compiled(name)
    st = ptxas_stats(c)
    assert st["ok"] and st["spill_stores"] == 0 and st["spill_loads"] == 0, st["log"]
    assert not st["wgmma_serialized"] and not st["wgmma_wait_injected"], st["log"]
    assert c.metadata.shared <= 232448
    # no RoPE tail: the scores partition issues two QK wgmma groups per tile, not three
    wgmmas = len(re.findall(r"wgmma\.mma_async", c.asm["ptx"]))
    full = len(re.findall(r"wgmma\.mma_async", compiled(name.replace("_d512", "")).asm["ptx"]))
    assert 0 < wgmmas < full
