"""The FlashMLA dense-decode anchor's Python side (benchmarks/anchor_flashmla_decode.py), checked
without a GPU: the ctypes signatures match the C prototypes of
benchmarks/anchor/flashmla_decode_glue.cu, and, against a stand-in library that plays the glue's
contract on CPU memory, the q reshape, the strides, the output reshapes, the schedule reuse and
the argument checks do what FlashMLA's binding does. Its fp32 reference and comparison are
checked on small CPU cases."""

from __future__ import annotations

import ctypes
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from benchmarks.anchor_flashmla_decode import (  # noqa: E402
    HEAD_DIM_K, HEAD_DIM_V, SIGNATURES, FlashMLADecodeAnchor, allclose_like_flashmla,
    decode_reference)

ROOT = Path(__file__).resolve().parent.parent
GLUE = ROOT / "benchmarks/anchor/flashmla_decode_glue.cu"
SCRIPT = ROOT / "benchmarks/anchor_flashmla_decode.py"

C_TYPES = {"int": ctypes.c_int, "float": ctypes.c_float, "long long": ctypes.c_longlong,
           "void*": ctypes.c_void_p, "const void*": ctypes.c_void_p,
           "const char*": ctypes.c_char_p}


def glue_prototypes() -> dict:
    """name -> (restype, [argtypes]) of every extern "C" function defined in the glue."""
    src = re.sub(r"//[^\n]*", "", GLUE.read_text())
    protos = {}
    for ret, name, params in re.findall(r'extern "C"\s+([\w\s\*]+?)\s*(\w+)\(([^)]*)\)', src):
        args = []
        for p in filter(None, (p.strip() for p in params.split(","))):
            ctype = re.sub(r"\s*\*\s*", "* ", re.sub(r"\s+\w+$", "", p)).strip()
            args.append(C_TYPES[ctype])
        protos[name] = (C_TYPES[re.sub(r"\s*\*\s*", "*", ret.strip())], args)
    return protos


def test_ctypes_signatures_match_the_glue():
    protos = glue_prototypes()
    assert set(protos) == set(SIGNATURES)
    for name, (restype, argtypes) in SIGNATURES.items():
        assert protos[name] == (restype, argtypes), name


def test_anchor_decode_takes_its_arguments_in_the_documented_order():
    """The argument names of anchor_decode, in order, as the loader passes them."""
    src = GLUE.read_text()
    params = re.search(r"int anchor_decode\(([^)]*)\)", src).group(1)
    names = [re.search(r"(\w+)$", p.strip()).group(1) for p in params.split(",")]
    assert names == [
        "q", "k_cache", "block_table", "cache_seqlens", "sched_meta", "num_splits", "out", "lse",
        "lse_accum", "out_accum", "b", "s_q", "h_q", "h_k", "num_blocks", "num_sm_parts",
        "causal", "sm_scale", "stride_q_b", "stride_q_row", "stride_q_head", "stride_k_block",
        "stride_k_row", "stride_k_head", "stride_block_table_b", "stream"]


def _view(ptr: int, dtype, shape, strides):
    """A tensor over raw CPU memory at ptr (what a kernel sees through a pointer and strides)."""
    span = 1 + sum((n - 1) * s for n, s in zip(shape, strides))
    raw = (ctypes.c_byte * (span * dtype.itemsize)).from_address(ptr)
    return torch.frombuffer(raw, dtype=dtype).as_strided(shape, strides)


class StandInLibrary:
    """Plays the glue on CPU: the "kernel" copies each reshaped q row's first 512 values to its
    out row and its first value to lse, through the pointers and strides it is given."""

    SCHED_META_INTS = 8

    def __init__(self, num_sm_parts=5, refuse=None):
        self.parts = num_sm_parts
        self.refuse = refuse
        self.metadata_calls = []
        self.decode_calls = []

    def anchor_decode_last_error(self):
        return (self.refuse or "").encode()

    def anchor_decode_sched_meta_ints(self):
        return self.SCHED_META_INTS

    def anchor_decode_num_sm_parts(self, num_sms, s_q, h_q, h_k):
        self.num_sm_parts_args = (num_sms, s_q, h_q, h_k)
        return self.parts

    def anchor_decode_metadata(self, seqlens, meta, splits, b, s_q, parts, stream):
        self.metadata_calls.append((seqlens, meta, splits, b, s_q, parts, stream))
        return 0

    def anchor_decode(self, *args):
        self.decode_calls.append(args)
        if self.refuse:
            return 1
        (q, _k, _bt, _sl, _meta, _splits, out, lse, _la, _oa, b, s_q, h_q, h_k, _nb, _parts,
         _causal, _scale, sq_b, sq_row, sq_head, *_rest) = args
        rows = s_q * (h_q // h_k)
        qv = _view(q, torch.bfloat16, (b, rows, h_k, HEAD_DIM_K), (sq_b, sq_row, sq_head, 1))
        ov = _view(out, torch.bfloat16, (b, h_k, rows, HEAD_DIM_V),
                   (h_k * rows * HEAD_DIM_V, rows * HEAD_DIM_V, HEAD_DIM_V, 1))
        lv = _view(lse, torch.float32, (b, h_k, rows), (h_k * rows, rows, 1))
        ov.copy_(qv[..., :HEAD_DIM_V].transpose(1, 2))
        lv.copy_(qv[..., 0].float().transpose(1, 2))
        return 0


class StandInDevice:
    def num_sms(self, device):
        return 132

    def stream(self, device):
        return 0xABC

    def guard(self, device):  # pragma: no cover - CPU tensors take no guard
        raise AssertionError("no device guard for CPU tensors")


def _inputs(b=3, s_q=2, h_q=32, h_k=2, num_blocks=11, max_blocks=4, q_s_step=1):
    # q, k_cache and the block table are views into larger tensors (strides differ from shape)
    q = torch.randn(b, s_q * q_s_step, h_q, HEAD_DIM_K + 64).to(torch.bfloat16)
    q = q[:, ::q_s_step, :, :HEAD_DIM_K]
    k_cache = torch.zeros(num_blocks * 2, 64, h_k, HEAD_DIM_K, dtype=torch.bfloat16)[::2]
    block_table = torch.zeros(b, max_blocks + 3, dtype=torch.int32)[:, :max_blocks]
    cache_seqlens = torch.tensor([5, 0, 200][:b], dtype=torch.int32)
    return q, k_cache, block_table, cache_seqlens


@pytest.mark.parametrize("s_q, h_q, h_k, q_s_step", [
    (1, 128, 1, 1), (2, 128, 1, 1), (2, 64, 1, 2), (1, 16, 1, 3), (2, 32, 2, 1), (3, 16, 4, 2)])
def test_each_query_head_reaches_its_rows_and_comes_back(s_q, h_q, h_k, q_s_step):
    lib = StandInLibrary()
    anchor = FlashMLADecodeAnchor(lib, StandInDevice())
    q, k_cache, block_table, seqlens = _inputs(s_q=s_q, h_q=h_q, h_k=h_k, q_s_step=q_s_step)
    out, lse = anchor(q, k_cache, block_table, seqlens, causal=True)
    assert out.shape == (3, s_q, h_q, HEAD_DIM_V) and out.dtype == torch.bfloat16
    assert lse.shape == (3, h_q, s_q) and lse.dtype == torch.float32
    assert torch.equal(out, q[..., :HEAD_DIM_V])
    assert torch.equal(lse, q[..., 0].float().transpose(1, 2))
    (args,) = lib.decode_calls
    assert args[10:18] == (3, s_q, h_q, h_k, 11, 5, 1, pytest.approx(HEAD_DIM_K ** -0.5))
    assert args[21:24] == k_cache.stride()[:3] and k_cache.stride(0) == 2 * 64 * h_k * HEAD_DIM_K
    assert args[24] == block_table.stride(0) == 7
    assert args[25] == 0xABC and lib.metadata_calls[0][6] == 0xABC
    assert lib.num_sm_parts_args == (132, s_q, h_q, h_k)


def test_schedule_is_computed_once_and_again_when_seqlens_change():
    lib = StandInLibrary(num_sm_parts=5)
    anchor = FlashMLADecodeAnchor(lib, StandInDevice())
    q, k_cache, block_table, seqlens = _inputs()
    for _ in range(3):
        anchor(q, k_cache, block_table, seqlens)
    assert len(lib.metadata_calls) == 1
    seqlens_ptr, meta_ptr, splits_ptr, b, s_q, parts, _ = lib.metadata_calls[0]
    assert (seqlens_ptr, b, s_q, parts) == (seqlens.data_ptr(), 3, 2, 5)
    # every decode used the schedule the metadata call filled
    assert all(c[4] == meta_ptr and c[5] == splits_ptr for c in lib.decode_calls)
    seqlens.add_(1)  # a write through torch: the cached schedule no longer describes them
    anchor(q, k_cache, block_table, seqlens)
    assert len(lib.metadata_calls) == 2
    anchor.clear_schedules()
    anchor(q, k_cache, block_table, seqlens)
    assert len(lib.metadata_calls) == 3
    anchor(q[:2], k_cache, block_table[:2], seqlens[:2].clone())
    assert len(lib.metadata_calls) == 4 and lib.metadata_calls[3][3] == 2


@pytest.mark.parametrize("change, name", [
    (lambda q, k, bt, sl: (q.float(), k, bt, sl), "q"),
    (lambda q, k, bt, sl: (q[..., :512], k, bt, sl), "q"),
    (lambda q, k, bt, sl: (q, k[:, :32], bt, sl), "k_cache"),
    (lambda q, k, bt, sl: (q[:, :, :31], k, bt, sl), "k_cache"),
    (lambda q, k, bt, sl: (q, k, bt.long(), sl), "block_table"),
    (lambda q, k, bt, sl: (q, k, bt[:2], sl), "block_table"),
    (lambda q, k, bt, sl: (q, k, bt, sl[:2]), "cache_seqlens"),
    (lambda q, k, bt, sl: (q, k, bt, sl.long()), "cache_seqlens"),
])
def test_bad_arguments_are_refused_by_name_before_any_launch(change, name):
    lib = StandInLibrary()
    anchor = FlashMLADecodeAnchor(lib, StandInDevice())
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        anchor(*change(*_inputs()))
    assert not lib.metadata_calls and not lib.decode_calls


def test_a_refusal_of_the_library_raises_its_message():
    lib = StandInLibrary(refuse="num_sm_parts out of 1..160")
    anchor = FlashMLADecodeAnchor(lib, StandInDevice())
    with pytest.raises(ValueError, match="anchor_decode refused: num_sm_parts out of 1..160"):
        anchor(*_inputs())


def _naive_attention(q, kv, sm_scale):
    """softmax(q kᵀ) v for one request, one head: q [d], kv [n, d]."""
    s = (kv.float() @ q.float()) * sm_scale
    p = torch.softmax(s, dim=0)
    return p @ kv[:, :HEAD_DIM_V].float(), torch.logsumexp(s, dim=0)


def test_reference_sees_the_causal_window_and_gives_empty_rows_zero_and_inf():
    torch.manual_seed(0)
    s_q, h_q, n = 2, 4, 70
    q = (torch.randn(2, s_q, h_q, HEAD_DIM_K) / 10).to(torch.bfloat16)
    k_cache = (torch.randn(4, 64, 1, HEAD_DIM_K) / 10).to(torch.bfloat16)
    block_table = torch.tensor([[2, 0], [1, 3]], dtype=torch.int32)
    seqlens = torch.tensor([n, 0], dtype=torch.int32)
    scale = HEAD_DIM_K ** -0.5
    out, lse = decode_reference(q, k_cache, block_table, seqlens, True, scale)
    tokens = torch.cat([k_cache[2, :, 0], k_cache[0, :, 0]])[:n]
    for j in range(s_q):  # query j sees tokens < n - s_q + j + 1
        for h in range(h_q):
            o, l_ = _naive_attention(q[0, j, h], tokens[:n - s_q + j + 1], scale)
            torch.testing.assert_close(out[0, j, h], o, rtol=1e-5, atol=1e-6)
            assert lse[0, h, j].item() == pytest.approx(l_.item(), abs=1e-5)
    assert torch.equal(out[1], torch.zeros_like(out[1]))
    assert torch.isinf(lse[1]).all() and (lse[1] > 0).all()
    out_nc, _ = decode_reference(q, k_cache, block_table, seqlens, False, scale)
    o, _ = _naive_attention(q[0, 0, 0], tokens, scale)
    torch.testing.assert_close(out_nc[0, 0, 0], o, rtol=1e-5, atol=1e-6)


def test_flashmla_tolerance_accepts_either_bound_and_rejects_misplaced_inf():
    ref = torch.tensor([1000.0, 1e-3, math.inf])
    ok, err = allclose_like_flashmla(torch.tensor([1001.0, 1.5e-3, math.inf]), ref, 8e-4, 2e-2)
    assert ok and err == pytest.approx(1.0)
    assert not allclose_like_flashmla(torch.tensor([1100.0, 1e-3, math.inf]), ref, 8e-4, 2e-2)[0]
    assert not allclose_like_flashmla(torch.tensor([1000.0, 1e-3, 0.0]), ref, 8e-4, 2e-2)[0]


def test_script_explains_itself_and_needs_its_library():
    r = subprocess.run([sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert "--lib" in r.stdout and "FlashMLA" in r.stdout
    r = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "--lib" in r.stderr
