"""The FP8 sparse MLA decode as the seesaw schedule (tle_kernels/sparse_decode_seesaw_fp8.py,
launched by tle_kernels/sparse_decode_seesaw_fp8_launch.py) on the CPU:

- its protocol and its attn_sink variant's (sparse_decode_seesaw_fp8_sink.py): tle-dump proves
  them for every ROUNDS, and their pipes are the seesaw prefill's, field for field (the consumers
  they import read exactly those slots);
- their lowering: PTX for sm_90a spilling at most 32 bytes (the producer dequantizes in registers);
- its math, run by the CPU emulator (tle_compiler/testing/emulator.py) through the launcher itself
  against the fp32 reference (tle_kernels/sparse_decode_reference.py) with FlashMLA's
  sparse-decode tolerances: hostile indices (-1, the int32 extremes, past the cache), every token
  no valid slot names NaN (bytes, scales and RoPE), pages of 16 and 61 tokens and a padded block
  stride, s_q 1 and 2, several persistent rounds, the three cache dtypes, topk_length and
  attn_sink; and a kernel that skips the scales fails that comparison.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

import tle_kernels.sparse_decode_seesaw_fp8 as kmod  # noqa: E402
import tle_kernels.sparse_decode_seesaw_fp8_sink as smod  # noqa: E402
from tle_kernels import api  # noqa: E402
from tle_kernels import sparse_decode_api as A  # noqa: E402
from tle_kernels.sparse_decode_reference import (make_sparse_decode_inputs,  # noqa: E402
                                                  sparse_decode_reference)
from tle_kernels.sparse_decode_seesaw_fp8_launch import (  # noqa: E402
    launch_sparse_seesaw_fp8, sparse_seesaw_fp8_unsupported_reason)

# FlashMLA's test scale, its sparse-decode tolerances and its element-wise check
from .gpu.test_sparse_decode import (LSE_ABS, LSE_REL, OUT_ABS, OUT_COS, OUT_REL,  # noqa: E402
                                     SCALE, close)

KDIR = Path(__file__).resolve().parent.parent / "tle_kernels"
KERNEL = KDIR / "sparse_decode_seesaw_fp8.py"
SINK = KDIR / "sparse_decode_seesaw_fp8_sink.py"
PREFILL = KDIR / "sparse_mla_seesaw.py"
KERNELS = [(KERNEL, kmod, "sparse_decode_seesaw_fp8"),
           (SINK, smod, "sparse_decode_seesaw_fp8_sink")]
KERNEL_IDS = ["plain", "sink"]
ARGS = ("attn_sink", "topk_length", "extra_k_cache", "extra_indices", "extra_topk_length")


# ------------------------------------------------------------------------ protocol and lowering

@pytest.mark.parametrize("path,mod,name", KERNELS, ids=KERNEL_IDS)
def test_tle_dump_graph_verifies_for_every_round_count(capsys, path, mod, name):
    from tle_compiler.cli.dump import main

    code = main(["--graph", str(path)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "read specialised to BLOCK_H=64, TOPK=2048" in err
    assert "# verdict: verified for every value of ROUNDS (every integer ROUNDS)" in out


@pytest.mark.parametrize("path,mod,name", KERNELS, ids=KERNEL_IDS)
def test_pipes_are_the_seesaw_prefills_field_for_field(path, mod, name):
    """The imported consumers read the slots the prefill's producer fills: same pipes, capacities,
    readers, fields, shapes and dtypes (locations aside)."""
    from tle_compiler.frontend import read_kernels

    bind = {"TOPK": 2048, "BLOCK_H": 64}
    (fp8,) = read_kernels(str(path), bind=bind)
    (prefill,) = read_kernels(str(PREFILL), bind=bind)
    assert fp8.kir.pipes == prefill.kir.pipes
    assert [p.name for p in fp8.kir.partitions] == ["fp8_producer", "consumer0", "consumer1"]


@pytest.mark.parametrize("path,mod,name", KERNELS, ids=KERNEL_IDS)
def test_compiles_for_sm90a_without_spills(path, mod, name):
    """The producer's 72 registers hold one piece's FP8 bytes across the slot's wait, the next
    pair's indices and the row offsets; ptxas must fit them without spilling (a spill in the
    producer's loop is a local-memory round trip on the path the consumers wait on)."""
    from tle_compiler.lowering import compile_kernel, ptxas_stats

    cfg = mod.DEFAULT_CONFIG
    st = ptxas_stats(compile_kernel(getattr(mod, name), dict(cfg["signature"]),
                                    dict(cfg["constexprs"])))
    assert st["ok"] and st["spill_stores"] == 0 and st["spill_loads"] == 0, st["log"]
    assert not st["wgmma_serialized"], st["log"]  # ptxas C7515


# ------------------------------------------------------------------------------ emulated math

@pytest.fixture
def emulated(monkeypatch):
    """The launcher runs the emulated kernels on ``sms`` persistent programs (default 3);
    ``emulated(path)`` puts the plain kernel of another file in their place."""
    from tle_compiler.testing.emulator import load_kernel_module

    def use(path=None, sms=3):
        for kpath, mod, name in KERNELS:
            if path is None or mod is kmod:
                emu = load_kernel_module(path or kpath, dot_dtypes=(torch.bfloat16,))
                monkeypatch.setattr(mod, name, getattr(emu, name))
        monkeypatch.setattr(api, "sm_count", lambda device: sms)
    use()
    return use


def run_and_check(x, what=""):
    """The launcher into NaN-poisoned outputs, against the reference."""
    want_out, want_lse = sparse_decode_reference(x["q"], x["k_cache"], x["indices"], 512, SCALE,
                                                 *(x[k] for k in ARGS))
    out, lse = A.empty_outputs(x["q"])
    out.fill_(float("nan"))
    lse.fill_(float("nan"))
    launch_sparse_seesaw_fp8(x["q"], x["k_cache"], x["indices"], SCALE, True, out, lse,
                             *(x[k] for k in ARGS))
    close(f"{what} out", out, want_out.to(torch.bfloat16), OUT_ABS, OUT_REL, OUT_COS)
    close(f"{what} lse", lse, want_lse, LSE_ABS, LSE_REL)
    return out, lse


def hostile(b, s_q, h_q, topk, seed, page=16, invalid=0.3, **kw):
    """FlashMLA's distribution with 30 % invalid slots, unnamed tokens NaN, on the CPU."""
    return make_sparse_decode_inputs(b, s_q, h_q, topk, page=page, device="cpu", seed=seed,
                                     invalid=invalid, **kw)


@pytest.mark.parametrize("b,s_q,topk,page", [(3, 1, 128, 16), (2, 2, 256, 61), (1, 2, 128, 1)],
                         ids=["b3-sq1-topk128", "b2-sq2-topk256-page61", "b1-sq2-page1"])
def test_matches_the_reference_on_hostile_indices(emulated, b, s_q, topk, page):
    """h_q 64: b * s_q items on 3 programs (several rounds, the last one repeating an item);
    s_q 1 writes lse in place, s_q 2 through the transposing scratch."""
    run_and_check(hostile(b, s_q, 64, topk, seed=b * 10 + s_q, page=page))


def test_two_head_blocks_and_mostly_invalid_rows(emulated):
    """h_q 128 (two head blocks per row, side by side) with 90 % invalid slots, and one row with
    none valid at all (out 0, lse +inf)."""
    x = hostile(2, 1, 128, 128, seed=5, invalid=0.9)
    x["indices"][1, 0] = -1
    out, lse = run_and_check(x)
    assert (out[1, 0] == 0).all() and (lse[1, :, 0] == float("inf")).all()


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8, torch.float8_e4m3fn],
                         ids=["uint8", "int8", "float8_e4m3fn"])
def test_every_cache_dtype_and_a_padded_block_stride(emulated, dtype):
    """The cache's bytes as any of the three dtypes FlashMLA takes, its blocks 48 bytes apart
    more than their tokens need (FlashMLA's padded block stride): read through the block stride,
    no copy."""
    x = hostile(2, 1, 64, 128, seed=7)
    kc = x["k_cache"]
    n_blocks, page = kc.shape[:2]
    padded = torch.full((n_blocks, page * 656 + 48), 0xFF, dtype=torch.uint8)  # NaN bytes
    padded[:, :page * 656] = kc.reshape(n_blocks, page * 656)
    x["k_cache"] = padded[:, :page * 656].view(n_blocks, page, 1, 656).view(dtype)
    assert x["k_cache"].stride(0) == page * 656 + 48
    run_and_check(x, str(dtype))


def test_topk_length_and_attn_sink(emulated):
    """Per-request lengths around the tile and pair boundaries (0, 1, 64, 65, 200, past topk,
    negative): slots past a length name NaN tokens, so reading one shows; sinks of +-inf and
    random values."""
    lengths = [0, 1, 64, 65, 200, 300, -5]
    x = hostile(len(lengths), 1, 64, 256, seed=9, topk_length=lengths, attn_sink=True)
    x["attn_sink"][:4] = torch.tensor([float("inf"), float("-inf"), 3.0, -3.0])
    out, lse = run_and_check(x)
    assert (out[0] == 0).all() and (lse[0] == float("inf")).all()
    assert (out[6] == 0).all() and (lse[6] == float("inf")).all()


@pytest.mark.parametrize("with_sink", [False, True], ids=["plain", "sink"])
def test_a_batch_under_one_wave_runs_as_topk_pieces(emulated, monkeypatch, with_sink):
    """2 rows of 64 heads at topk 2048 on 132 SMs: 2 items would leave 130 SMs idle, so each row
    runs as 16 pieces of one K-tile pair, merged by lse; with attn_sink the pieces run the plain
    kernel and the merged rows get the sink once (a piece applying it would count it 16 times)."""
    import tle_kernels.tail_split as ts

    emulated(sms=132)
    splits = []
    run_split = ts.run_split
    monkeypatch.setattr(ts, "run_split", lambda *a, **k: splits.append(a[-1]) or run_split(*a, **k))
    x = hostile(1, 2, 64, 2048, seed=11, page=64, attn_sink=with_sink)
    if with_sink:
        x["attn_sink"][3:] += 2.0  # the sink's share of the denominator is large
    run_and_check(x)
    assert splits == [ts.TailSplit(0, 16)]


@pytest.mark.parametrize("h_q", [8, 16, 32])
def test_tensor_parallel_head_counts_run_padded_to_64_heads(emulated, h_q):
    """h_q 8 / 16 / 32 (FlashMLA refuses them): q padded with zero heads to 64, the kernel run,
    the real heads copied back; with attn_sink (+-inf too) and per-request topk_length."""
    x = hostile(3, 2, h_q, 256, seed=h_q, topk_length=[0, 100, 300], attn_sink=True)
    x["attn_sink"][0] = float("inf")
    out, lse = run_and_check(x, f"h_q={h_q}")
    assert out.shape == (3, 2, h_q, 512) and lse.shape == (3, h_q, 2)
    assert (out[0] == 0).all() and (lse[0] == float("inf")).all()


def test_a_kernel_that_skips_the_scales_fails(emulated, tmp_path):
    """The same kernel with the dequantization's ``* scale`` dropped (raw FP8 values) fails the
    comparison: the check sees the scales."""
    from tests.test_kernels import kernel_copy

    path = kernel_copy("sparse_decode_seesaw_fp8", tmp_path / "no_scale.py",
                       [("(raw.to(tl.float32) * scale).to(tl.bfloat16)",
                         "raw.to(tl.float32).to(tl.bfloat16)")])
    emulated(path)
    with pytest.raises(AssertionError, match="elements off|cosine"):
        run_and_check(hostile(2, 1, 64, 128, seed=11))


# ----------------------------------------------------------------------------------- support

def test_unsupported_calls_say_why():
    meta = dict(device="meta")
    q = torch.empty(2, 1, 64, 576, dtype=torch.bfloat16, **meta)
    kc = torch.empty(4, 64, 1, 656, dtype=torch.uint8, **meta)
    idx = torch.empty(2, 1, 256, dtype=torch.int32, **meta)
    assert sparse_seesaw_fp8_unsupported_reason(q, kc, idx, True) is None
    bf16 = torch.empty(4, 64, 1, 576, dtype=torch.bfloat16, **meta)
    assert "FP8 cache only" in sparse_seesaw_fp8_unsupported_reason(q, bf16, idx, False)
    assert "extra cache" in sparse_seesaw_fp8_unsupported_reason(q, kc, idx, True,
                                                                 extra_k_cache=kc)
    for h_q in (8, 16, 32):  # run padded to 64 heads
        qh = torch.empty(2, 1, h_q, 576, dtype=torch.bfloat16, **meta)
        assert sparse_seesaw_fp8_unsupported_reason(qh, kc, idx, True) is None, h_q
    q48 = torch.empty(2, 1, 48, 576, dtype=torch.bfloat16, **meta)
    assert "h_q % 64" in sparse_seesaw_fp8_unsupported_reason(q48, kc, idx, True)
    idx64 = torch.empty(2, 1, 192, dtype=torch.int32, **meta)
    assert "topk % 128" in sparse_seesaw_fp8_unsupported_reason(q, kc, idx64, True)
    assert re.search("cannot run", _raises(q48, kc, idx))


def _raises(q, kc, idx) -> str:
    with pytest.raises(NotImplementedError) as e:
        launch_sparse_seesaw_fp8(q, kc, idx, SCALE, True, None, None)
    return str(e.value)
