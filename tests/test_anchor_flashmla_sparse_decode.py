"""The FlashMLA sparse FP8 decode anchor's Python side
(benchmarks/anchor_flashmla_sparse_decode.py), checked without a GPU. A stand-in C library with
the five C functions the loader binds (compiled here with cc) plays the kernel on CPU memory
through ctypes, so the argument order and types, the strides, the lse transpose and the refusal
path are exercised as the benchmark's ``--anchor`` hook runs them; a Python stand-in checks the
schedule reuse and the argument checks. The index mapping the check relies on is checked against
the fp32 reference."""

from __future__ import annotations

import ctypes
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from benchmarks.anchor_flashmla_sparse_decode import (  # noqa: E402
    BYTES_PER_TOKEN, HEAD_DIM_K, HEAD_DIM_V, SIGNATURES, FlashMLASparseDecodeAnchor, bind,
    flashmla_indices, load_sparse_decode_anchor)

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks/anchor_flashmla_sparse_decode.py"

# The glue's contract, played on host memory: out[b, s, h, :] = q[b, s, h, :512] through q's
# strides, lse[b, s, h] = b * 10000 + s * 1000 + h + sm_scale; every scalar argument recorded.
STAND_IN_C = r"""
#include <stdint.h>
#include <string.h>
static long long args[32];
static int metadata_calls;
const char* anchor_sparse_decode_last_error(void) { return "stand-in refusal"; }
int anchor_sparse_decode_sched_meta_ints(void) { return 8; }
int anchor_sparse_decode_num_sm_parts(int num_sms, int s_q, int h_q) {
    return num_sms / s_q / (h_q / 64); }
int anchor_sparse_decode_metadata(void* meta, void* splits, int b, int s_q, int topk, int parts,
                                  void* stream) {
    metadata_calls++; args[20] = b; args[21] = s_q; args[22] = topk; args[23] = parts;
    return 0; }
int anchor_sparse_decode(const void* q, const void* kv, const void* indices,
                         const void* attn_sink, const void* sched_meta, const void* num_splits,
                         void* out, void* lse, void* lse_accum, void* out_accum, int b, int s_q,
                         int h_q, int num_blocks, int page_block_size, int topk,
                         int num_sm_parts, float sm_scale, int stride_q_b, int stride_q_s_q,
                         int stride_q_h_q, int stride_kv_block, int stride_kv_row,
                         int stride_indices_b, int stride_indices_s_q, void* stream) {
    long long a[] = {b, s_q, h_q, num_blocks, page_block_size, topk, num_sm_parts,
                     stride_q_b, stride_q_s_q, stride_q_h_q, stride_kv_block, stride_kv_row,
                     stride_indices_b, stride_indices_s_q, (long long)(intptr_t)stream,
                     attn_sink != 0};
    memcpy(args, a, sizeof(a));
    if (topk == 4096) return 1;
    for (int i = 0; i < b; i++) for (int s = 0; s < s_q; s++) for (int h = 0; h < h_q; h++) {
        const uint16_t* src = (const uint16_t*)q + (long long)i * stride_q_b
                              + (long long)s * stride_q_s_q + (long long)h * stride_q_h_q;
        long long row = ((long long)i * s_q + s) * h_q + h;
        memcpy((uint16_t*)out + row * 512, src, 512 * sizeof(uint16_t));
        ((float*)lse)[row] = i * 10000.0f + s * 1000.0f + h + sm_scale;
    }
    return 0; }
long long stand_in_arg(int i) { return args[i]; }
int stand_in_metadata_calls(void) { return metadata_calls; }
"""


@pytest.fixture(scope="module")
def stand_in_lib(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler for the stand-in library")
    d = tmp_path_factory.mktemp("anchor")
    (d / "stand_in.c").write_text(STAND_IN_C)
    so = d / "libstand_in.so"
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", str(so), str(d / "stand_in.c")],
                   check=True, capture_output=True)
    return so


class StandInDevice:
    def num_sms(self, device):
        return 132

    def stream(self, device):
        return 0xABC

    def guard(self, device):  # pragma: no cover - CPU tensors take no guard
        raise AssertionError("no device guard for CPU tensors")


def _inputs(b=3, s_q=2, h_q=64, topk=128, num_blocks=5, page=64, sink=False):
    """q and indices as views into larger tensors (strides differ from their shapes), a cache
    whose blocks are padded (block stride > page * 656)."""
    q = torch.randn(b, s_q, h_q, HEAD_DIM_K + 64).to(torch.bfloat16)[..., :HEAD_DIM_K]
    k_cache = torch.zeros(num_blocks, page + 3, 1, BYTES_PER_TOKEN, dtype=torch.uint8)[:, :page]
    indices = torch.zeros(b, s_q, topk + 64, dtype=torch.int32)[..., :topk]
    attn_sink = torch.zeros(h_q) if sink else None
    return q, k_cache, indices, attn_sink


def _real_anchor(path) -> FlashMLASparseDecodeAnchor:
    anchor = load_sparse_decode_anchor(str(path))
    anchor._device = StandInDevice()
    lib = anchor._lib
    lib.stand_in_arg.restype, lib.stand_in_arg.argtypes = ctypes.c_longlong, [ctypes.c_int]
    return anchor


@pytest.mark.parametrize("s_q, h_q, sink", [(1, 128, False), (2, 64, True), (3, 128, True)])
def test_every_head_reaches_the_kernel_and_lse_comes_back_transposed(stand_in_lib, s_q, h_q,
                                                                      sink):
    anchor = _real_anchor(stand_in_lib)
    q, k_cache, indices, attn_sink = _inputs(s_q=s_q, h_q=h_q, sink=sink)
    out, lse = anchor(q, k_cache, indices, 0.25, attn_sink)
    assert out.shape == (3, s_q, h_q, HEAD_DIM_V) and out.dtype == torch.bfloat16
    assert lse.shape == (3, h_q, s_q) and lse.dtype == torch.float32
    assert torch.equal(out, q[..., :HEAD_DIM_V])
    b_i, s_i, h_i = torch.meshgrid(torch.arange(3), torch.arange(s_q), torch.arange(h_q),
                                   indexing="ij")
    want_lse = (b_i * 10000.0 + s_i * 1000.0 + h_i + 0.25).transpose(1, 2)
    assert torch.equal(lse, want_lse)
    arg = anchor._lib.stand_in_arg
    parts = 132 // s_q // (h_q // 64)
    assert [arg(i) for i in range(7)] == [3, s_q, h_q, 5, 64, 128, parts]
    assert [arg(i) for i in range(7, 14)] == [*q.stride()[:3], *k_cache.stride()[:2],
                                              *indices.stride()[:2]]
    assert k_cache.stride()[:2] == (67 * BYTES_PER_TOKEN, BYTES_PER_TOKEN)
    assert arg(14) == 0xABC and arg(15) == int(sink)
    assert [arg(i) for i in range(20, 24)] == [3, s_q, 128, parts]


def test_a_refusal_of_the_library_raises_its_message(stand_in_lib):
    anchor = _real_anchor(stand_in_lib)
    with pytest.raises(ValueError, match="anchor_sparse_decode refused: stand-in refusal"):
        anchor(*_inputs(topk=4096)[:3])


def test_the_benchmark_hook_loads_the_library_by_path(stand_in_lib, tmp_path):
    from tle_kernels.bench_sparse_decode import load_anchor
    anchor = load_anchor(str(stand_in_lib))
    assert type(anchor).__name__ == "FlashMLASparseDecodeAnchor"
    missing = tmp_path / "libnot_built.so"
    with pytest.raises(FileNotFoundError, match="libnot_built.so"):
        load_anchor(str(missing))


def test_a_library_without_the_glue_functions_is_refused_by_name():
    class Partial:
        anchor_sparse_decode_last_error = ctypes.CFUNCTYPE(ctypes.c_char_p)()
    with pytest.raises(AttributeError, match="anchor_sparse_decode_sched_meta_ints"):
        bind(Partial())
    assert set(SIGNATURES) == {"anchor_sparse_decode_last_error",
                               "anchor_sparse_decode_sched_meta_ints",
                               "anchor_sparse_decode_num_sm_parts",
                               "anchor_sparse_decode_metadata", "anchor_sparse_decode"}


class CountingLibrary:
    """A Python stand-in counting metadata and decode calls; the decode writes nothing."""

    def __init__(self):
        self.metadata_calls = []
        self.decode_calls = []

    def anchor_sparse_decode_last_error(self):
        return b""

    def anchor_sparse_decode_sched_meta_ints(self):
        return 8

    def anchor_sparse_decode_num_sm_parts(self, num_sms, s_q, h_q):
        return max(num_sms // s_q // (h_q // 64), 1)

    def anchor_sparse_decode_metadata(self, meta, splits, b, s_q, topk, parts, stream):
        self.metadata_calls.append((meta, splits, b, s_q, topk, parts))
        return 0

    def anchor_sparse_decode(self, *args):
        self.decode_calls.append(args)
        return 0


def test_schedule_is_computed_once_per_shape():
    lib = CountingLibrary()
    anchor = FlashMLASparseDecodeAnchor(lib, StandInDevice())
    q, k, idx, _ = _inputs()
    for _ in range(3):
        anchor(q, k, idx)
    assert len(lib.metadata_calls) == 1
    meta, splits, b, s_q, topk, parts = lib.metadata_calls[0]
    assert (b, s_q, topk, parts) == (3, 2, 128, 66)
    assert all(c[4] == meta and c[5] == splits for c in lib.decode_calls)
    anchor(q[:2], k, idx[:2])                           # another batch size
    q2, k2, idx2, _ = _inputs(topk=256)                 # another topk
    anchor(q2, k2, idx2)
    assert [c[2:5] for c in lib.metadata_calls[1:]] == [(2, 2, 128), (3, 2, 256)]
    anchor(q, k, idx)
    assert len(lib.metadata_calls) == 3                 # the first shape's schedule is kept
    anchor.clear_schedules()
    anchor(q, k, idx)
    assert len(lib.metadata_calls) == 4


BAD_ARGUMENTS = [
    (lambda q, k, i, s: (q.float(), k, i, s), "q"),
    (lambda q, k, i, s: (q[..., :512], k, i, s), "q"),
    (lambda q, k, i, s: (q[:, :, :32], k, i, s), "q"),               # h_q 32: no sm90 kernel
    (lambda q, k, i, s: (q, k.view(torch.bfloat16), i, s), "k_cache"),
    (lambda q, k, i, s: (q, k[..., :576], i, s), "k_cache"),
    (lambda q, k, i, s: (q, k[:, ::2], i, s), "k_cache"),              # tokens not contiguous
    (lambda q, k, i, s: (q, k, i.long(), s), "indices"),
    (lambda q, k, i, s: (q, k, i[..., :100], s), "indices"),           # topk not a multiple of 64
    (lambda q, k, i, s: (q, k, i[:2], s), "indices"),
    (lambda q, k, i, s: (q, k, i, torch.zeros(3)), "attn_sink"),
    (lambda q, k, i, s: (q, k, i, torch.zeros(64, dtype=torch.float64)), "attn_sink"),
]


@pytest.mark.parametrize("change, name", BAD_ARGUMENTS)
def test_bad_arguments_are_refused_by_name_before_any_launch(change, name):
    lib = CountingLibrary()
    anchor = FlashMLASparseDecodeAnchor(lib, StandInDevice())
    q, k, idx, _ = _inputs()
    q, k, idx, sink = change(q, k, idx, None)
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        anchor(q, k, idx, attn_sink=sink)
    assert not lib.metadata_calls and not lib.decode_calls


def test_misaligned_q_is_refused_since_flashmla_loads_it_by_tma():
    lib = CountingLibrary()
    anchor = FlashMLASparseDecodeAnchor(lib, StandInDevice())
    q, k, idx, _ = _inputs()
    base = torch.zeros(3 * 2 * 64 * HEAD_DIM_K + 1, dtype=torch.bfloat16)
    shifted = base[1:].view(3, 2, 64, HEAD_DIM_K)        # data 2 bytes off 16-byte alignment
    with pytest.raises(ValueError, match=r"\bq\b.*TMA"):
        anchor(shifted, k, idx)
    assert not lib.decode_calls


def test_flashmla_indices_keep_the_reference_answer():
    """Every index naming no token becomes -1 (FlashMLA's only empty slot), valid ones stay, and
    the fp32 reference gives the same output and lse on either form."""
    from tle_kernels.sparse_decode_reference import (make_sparse_decode_inputs,
                                                     sparse_decode_reference)
    x = make_sparse_decode_inputs(2, 2, 64, 128, is_fp8=True, device="cpu", seed=5, invalid=0.4)
    n_tokens = x["k_cache"].shape[0] * x["k_cache"].shape[1]
    mapped = flashmla_indices(x["indices"], n_tokens)
    valid = (x["indices"] >= 0) & (x["indices"] < n_tokens)
    assert (~valid).any() and ((x["indices"] != -1) & ~valid).any()   # hostile values present
    assert torch.equal(mapped[valid], x["indices"][valid]) and (mapped[~valid] == -1).all()
    want = sparse_decode_reference(x["q"], x["k_cache"], x["indices"])
    got = sparse_decode_reference(x["q"], x["k_cache"], mapped)
    assert torch.equal(want[0], got[0]) and torch.equal(want[1], got[1])


def test_script_explains_itself_and_needs_its_library(tmp_path):
    r = subprocess.run([sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert "--lib" in r.stdout and "FlashMLA" in r.stdout
    r = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "--lib" in r.stderr
    missing = tmp_path / "libmissing.so"
    r = subprocess.run([sys.executable, str(SCRIPT), "--lib", str(missing)], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 2 and "libmissing.so" in r.stderr and "not found" in r.stderr
    r = subprocess.run([sys.executable, str(SCRIPT), "--lib", str(missing), "--topk", "100"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "--topk" in r.stderr
