"""The sparse MLA decode through FlashMLA's entry point on the CPU: ``flash_mla_with_kvcache`` with
``indices`` dispatches to the sparse decode (tle_kernels/decode_api.py -> sparse_decode_api.py):
FlashMLA's rules for a sparse call (causal False, num_splits None, block_table / cache_seqlens not
read), every error naming its argument before anything needs CUDA, the scheduler metadata of a
sparse call (its own config, refused for dense calls and the reverse, shape changes refused), the
custom op ``tle_kernels::sparse_mla_decode`` (its fake implementation, the arguments it passes on,
and run by Triton's interpreter against the fp32 reference), and the dense path left as it was."""

from __future__ import annotations

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.utils._python_dispatch import TorchDispatchMode

import tle_kernels as K
from tle_kernels import decode_api as D

from .triton_cpu import run_in_triton_interpreter

BF16, I32, F32, U8 = torch.bfloat16, torch.int32, torch.float32, torch.uint8

# validate_sparse reads an FP8 cache's data pointer (16-byte alignment); a FakeTensor's is 0 with
# a deprecation warning
pytestmark = pytest.mark.filterwarnings("ignore:Accessing the data pointer of FakeTensor")


def sparse_args(b=2, s_q=1, h_q=16, topk=64, page=64, blocks=3, is_fp8=True, device="cpu"):
    """q, k_cache, indices of a valid sparse call (on ``device``)."""
    q = torch.zeros(b, s_q, h_q, 576, dtype=BF16, device=device)
    if is_fp8:
        k = torch.zeros(blocks, page, 1, 656, dtype=U8, device=device)
    else:
        k = torch.zeros(blocks, page, 1, 576, dtype=BF16, device=device)
    idx = torch.zeros(b, s_q, topk, dtype=I32, device=device)
    return q, k, idx


def sparse_call(q, k, idx, meta=None, is_fp8_kvcache=True, block_table=None, cache_seqlens=None,
                **kw):
    """flash_mla_with_kvcache as FlashMLA's sparse-decode test calls it (positionally up to
    is_fp8_kvcache, block_table and cache_seqlens None)."""
    meta = meta if meta is not None else K.get_mla_metadata()[0]
    head_dim_v = kw.pop("head_dim_v", 512)
    num_splits = kw.pop("num_splits", None)
    softmax_scale = kw.pop("softmax_scale", None)
    causal = kw.pop("causal", False)
    return K.flash_mla_with_kvcache(q, k, block_table, cache_seqlens, head_dim_v, meta, num_splits,
                                    softmax_scale, causal, is_fp8_kvcache, idx, **kw)


def dense_args(b=2, s_q=1, h_q=16, device="cpu"):
    q = torch.zeros(b, s_q, h_q, 576, dtype=BF16, device=device)
    k = torch.zeros(4, 64, 1, 576, dtype=BF16, device=device)
    return q, k, torch.zeros(b, 2, dtype=I32, device=device), torch.zeros(b, dtype=I32,
                                                                         device=device)


class RecordOps(TorchDispatchMode):
    """Records every operator call (custom ops included) with its arguments."""

    def __init__(self):
        super().__init__()
        self.calls = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.calls.append((str(func), args))
        return func(*args, **(kwargs or {}))


# ---------------------------------------------------------------------------------------------
# Dispatch and validation (CPU tensors reach every rule but the device check)
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("is_fp8", [True, False], ids=["fp8", "bf16"])
def test_sparse_call_passes_every_rule_but_the_device(is_fp8):
    """Every optional tensor of a sparse call, valid: only the device check (last) refuses. The
    bf16 cache (is_fp8_kvcache=False) is taken too, beyond FlashMLA."""
    q, k, idx = sparse_args(h_q=64, s_q=2, page=7, is_fp8=is_fp8)
    full = dict(attn_sink=torch.zeros(64), topk_length=torch.zeros(2, dtype=I32),
                extra_k_cache=k[:2], extra_indices_in_kvcache=torch.zeros(2, 2, 128, dtype=I32),
                extra_topk_length=torch.zeros(2, dtype=I32))
    for kw in (dict(), full):
        with pytest.raises(ValueError, match=r"^q: expected a CUDA tensor"):
            sparse_call(q, k, idx, is_fp8_kvcache=is_fp8, **kw)


def test_block_table_and_cache_seqlens_are_not_read():
    """FlashMLA ignores them with indices: None, tensors of any shape, even other objects."""
    q, k, idx = sparse_args()
    for bt, sl in ((None, None), (torch.zeros(5, 7, dtype=I32), torch.zeros(9)), ("x", 3)):
        with pytest.raises(ValueError, match=r"^q: expected a CUDA tensor"):
            sparse_call(q, k, idx, block_table=bt, cache_seqlens=sl)


def bad_sparse_cases():
    q, k, idx = sparse_args()
    yield "causal", ValueError, dict(causal=True)                 # FlashMLA: dense only
    yield "causal", TypeError, dict(causal=1)
    yield "num_splits", ValueError, dict(num_splits=2)
    yield "tile_scheduler_metadata", TypeError, dict(meta=object())
    yield "is_fp8_kvcache", TypeError, dict(is_fp8_kvcache=None)
    yield "impl", ValueError, dict(impl="flash")
    yield "impl", NotImplementedError, dict(impl="seesaw")      # the seesaw takes no FP8 cache
    yield "head_dim_v", ValueError, dict(head_dim_v=576)
    yield "softmax_scale", ValueError, dict(softmax_scale=-0.1)
    yield "q", ValueError, dict(q=torch.zeros(2, 1, 24, 576, dtype=BF16))    # h_q not served
    yield "q", TypeError, dict(q=q.float())
    yield "k_cache", TypeError, dict(k=k.to(BF16))                        # FP8 wants bytes
    yield "k_cache", TypeError, dict(is_fp8_kvcache=False)                  # bf16 wants bf16
    yield "k_cache", ValueError, dict(k=torch.zeros(3, 64, 2, 656, dtype=U8))  # h_kv 2
    yield "indices", TypeError, dict(idx=idx.long())
    yield "indices", ValueError, dict(idx=torch.zeros(2, 1, 96, dtype=I32))   # topk % 64
    yield "indices", ValueError, dict(idx=torch.zeros(3, 1, 64, dtype=I32))   # batch
    yield "attn_sink", ValueError, dict(attn_sink=torch.zeros(8))
    yield "topk_length", TypeError, dict(topk_length=torch.zeros(2, dtype=torch.int64))
    yield "extra_k_cache", ValueError, dict(extra_k_cache=torch.zeros(2, 8, 1, 600, dtype=U8),
                                            extra_indices_in_kvcache=idx)
    # FlashMLA's name in parentheses after the decode's own
    yield r"extra_indices \(extra_indices_in_kvcache\)", ValueError, dict(
        extra_indices_in_kvcache=idx)
    yield r"extra_indices \(extra_indices_in_kvcache\)", ValueError, dict(
        extra_k_cache=k, extra_indices_in_kvcache=torch.zeros(2, 1, 65, dtype=I32))
    yield "extra_topk_length", ValueError, dict(extra_topk_length=torch.zeros(2, dtype=I32))


BAD = list(bad_sparse_cases())


@pytest.mark.parametrize("device", ["cpu", "meta"])
@pytest.mark.parametrize("name,exc,change", BAD, ids=[f"{n.split()[0]}-{i}"
                                                       for i, (n, _, _) in enumerate(BAD)])
def test_sparse_validation_names_the_argument(device, name, exc, change):
    q, k, idx = sparse_args(device=device)
    kw = dict(q=q, k=k, idx=idx)
    for key, v in change.items():
        kw[key] = v.to(device) if isinstance(v, torch.Tensor) else v
    with pytest.raises(exc, match=rf"^{name}(?!\w)"):
        sparse_call(kw.pop("q"), kw.pop("k"), kw.pop("idx"), **kw)


def test_dense_call_keeps_its_rules():
    """No indices: the dense decode, its messages as before; the FP8 cache and the sparse
    arguments are refused there."""
    q, k, bt, sl = dense_args()
    meta, _ = K.get_mla_metadata()
    with pytest.raises(ValueError, match=r"^q: expected a CUDA tensor"):
        K.flash_mla_with_kvcache(q, k, bt, sl, 512, meta)
    with pytest.raises(ValueError, match=r"^k_cache: page_block_size \(dim 1\) must be 64"):
        K.flash_mla_with_kvcache(q, torch.zeros(4, 32, 1, 576, dtype=BF16), bt, sl, 512, meta)
    with pytest.raises(TypeError, match=r"^block_table: expected a torch.Tensor"):
        K.flash_mla_with_kvcache(q, k, None, sl, 512, meta)
    with pytest.raises(NotImplementedError, match=r"^is_fp8_kvcache: .*sparse decode only"):
        K.flash_mla_with_kvcache(q, k, bt, sl, 512, meta, is_fp8_kvcache=True)
    with pytest.raises(ValueError, match=r"^attn_sink: belongs to the sparse decode"):
        K.flash_mla_with_kvcache(q, k, bt, sl, 512, meta, attn_sink=torch.zeros(16))
    assert not meta.have_initialized


# ---------------------------------------------------------------------------------------------
# Scheduler metadata of a sparse call
# ---------------------------------------------------------------------------------------------

def test_sparse_config_and_fill():
    q, k, idx = sparse_args(b=3, s_q=2, h_q=128, topk=128, page=7)
    xk, xidx = torch.zeros(5, 2, 1, 656, dtype=U8), torch.zeros(3, 2, 512, dtype=I32)
    c = D.DecodeSchedMeta.Config.of_sparse(q, k, idx, True, xk, xidx)
    assert c.sparse and (c.b, c.s_q, c.h_q, c.page_block_size, c.h_kv, c.causal) == \
        (3, 2, 128, 7, 1, False)
    assert (c.is_fp8_kvcache, c.topk, c.extra_page_block_size, c.extra_topk) == (True, 128, 2, 512)
    plain = D.DecodeSchedMeta.Config.of_sparse(q, k, idx, False)
    assert plain.extra_page_block_size is None and plain.extra_topk is None
    dense = D.DecodeSchedMeta.Config.of(*dense_args()[:2], False)
    assert not dense.sparse and dense.topk is None and not dense.is_fp8_kvcache
    meta, _ = K.get_mla_metadata()
    meta.fill(c, 132)
    assert meta.have_initialized and meta.n_split == 1 and meta.sm_count == 132


def test_one_metadata_object_serves_one_kind_of_call():
    """Refused before any shape is read, so on CPU tensors too; the metadata stays as filled."""
    q, k, bt, sl = dense_args()
    dense_meta, _ = K.get_mla_metadata()
    dense_meta.fill(D.DecodeSchedMeta.Config.of(q, k, False), 132)
    with pytest.raises(ValueError, match=r"^tile_scheduler_metadata: it was filled by a dense "
                                         r"\(indices None\) call and this call is sparse"):
        sparse_call(*sparse_args(), meta=dense_meta)
    sq, sk, sidx = sparse_args()
    sparse_meta, _ = K.get_mla_metadata()
    sparse_meta.fill(D.DecodeSchedMeta.Config.of_sparse(sq, sk, sidx, True), 132)
    filled = sparse_meta.config
    with pytest.raises(ValueError, match=r"^tile_scheduler_metadata: it was filled by a sparse "
                                         r"\(indices given\) call and this call is dense"):
        K.flash_mla_with_kvcache(q, k, bt, sl, 512, sparse_meta)
    assert sparse_meta.config == filled and not dense_meta.config.sparse


def test_sparse_metadata_reuse_and_mismatch():
    """Same shapes (other contents, other block counts) run; another b, h_q, page size, cache
    format, topk, extra page size or extra topk is refused, naming the field."""
    with FakeTensorMode():
        q, k, idx = sparse_args(s_q=2, h_q=64, page=64, device="cuda")
        meta, _ = K.get_mla_metadata()
        meta.fill(D.DecodeSchedMeta.Config.of_sparse(q, k, idx, True), 132)
        filled = meta.config
        out, lse = sparse_call(q, k, idx, meta)
        out, lse = sparse_call(q, torch.zeros(9, 64, 1, 656, dtype=U8, device="cuda"), idx, meta,
                               attn_sink=torch.zeros(64, device="cuda"))
        assert out.shape == (2, 2, 64, 512) and lse.shape == (2, 64, 2)
        xk = torch.zeros(2, 16, 1, 656, dtype=U8, device="cuda")
        xidx = torch.zeros(2, 2, 64, dtype=I32, device="cuda")
        for what, change in [
                ("b 2 -> 3", dict(q=torch.zeros(3, 2, 64, 576, dtype=BF16, device="cuda"),
                                  idx=torch.zeros(3, 2, 64, dtype=I32, device="cuda"))),
                ("h_q 64 -> 128", dict(q=torch.zeros(2, 2, 128, 576, dtype=BF16, device="cuda"))),
                ("page_block_size 64 -> 32", dict(k=torch.zeros(3, 32, 1, 656, dtype=U8,
                                                                device="cuda"))),
                ("is_fp8_kvcache True -> False", dict(k=torch.zeros(3, 64, 1, 576, dtype=BF16,
                                                                    device="cuda"),
                                                      is_fp8_kvcache=False)),
                ("topk 64 -> 128", dict(idx=torch.zeros(2, 2, 128, dtype=I32, device="cuda"))),
                ("extra_page_block_size None -> 16.*extra_topk None -> 64",
                 dict(extra_k_cache=xk, extra_indices_in_kvcache=xidx))]:
            kw = {**dict(q=q, k=k, idx=idx), **change}
            with pytest.raises(ValueError, match=rf"^tile_scheduler_metadata: .*{what}.*same "
                                                 "shapes"):
                sparse_call(kw.pop("q"), kw.pop("k"), kw.pop("idx"), meta, **kw)
        assert meta.config == filled and meta.n_split == 1


def test_failed_sparse_call_leaves_metadata_empty():
    meta, _ = K.get_mla_metadata()
    q, k, idx = sparse_args()
    for kw in (dict(causal=True), dict(idx=torch.zeros(2, 1, 96, dtype=I32)), dict()):  # last: CPU
        args = {**dict(q=q, k=k, idx=idx), **kw}
        with pytest.raises(ValueError):
            sparse_call(args.pop("q"), args.pop("k"), args.pop("idx"), meta, **args)
        assert not meta.have_initialized and meta.config is None


# ---------------------------------------------------------------------------------------------
# The custom op
# ---------------------------------------------------------------------------------------------

def test_op_schema():
    schema = str(torch.ops.tle_kernels.sparse_mla_decode.default._schema)
    for arg in ("Tensor q", "Tensor k_cache", "Tensor indices", "float softmax_scale",
                "bool is_fp8_kvcache", "Tensor? attn_sink", "Tensor? topk_length",
                "Tensor? extra_k_cache", "Tensor? extra_indices", "Tensor? extra_topk_length",
                "str impl"):
        assert arg in schema, (arg, schema)
    assert schema.endswith("-> (Tensor, Tensor)")


@pytest.mark.parametrize("is_fp8", [True, False], ids=["fp8", "bf16"])
def test_call_runs_the_sparse_op_with_its_arguments(is_fp8):
    """Under FakeTensorMode: a sparse call runs tle_kernels::sparse_mla_decode (and nothing of
    the dense op) with each tensor in its place, the scale resolved and the impl that will run;
    the fake gives FlashMLA's output shapes."""
    with FakeTensorMode():
        q, k, idx = sparse_args(b=3, s_q=2, h_q=128, page=16, is_fp8=is_fp8, device="cuda")
        sink = torch.zeros(128, device="cuda")
        tl = torch.zeros(3, dtype=I32, device="cuda")
        xk = torch.zeros((2,) + tuple(k.shape[1:]), dtype=k.dtype, device="cuda")  # (no slicing
        xidx = torch.zeros(3, 2, 128, dtype=I32, device="cuda")       # of a fake CUDA tensor here)
        xtl = torch.ones(3, dtype=I32, device="cuda")
        meta, _ = K.get_mla_metadata()
        meta.fill(D.DecodeSchedMeta.Config.of_sparse(q, k, idx, is_fp8, xk, xidx), 132)
        with RecordOps() as rec:
            out, lse = K.flash_mla_with_kvcache(q, k, None, None, 512, meta, None, 0.25, False,
                                                is_fp8, idx, sink, xk, xidx, tl, xtl)
        assert out.shape == (3, 2, 128, 512) and out.dtype == BF16 and out.device.type == "cuda"
        assert lse.shape == (3, 128, 2) and lse.dtype == F32
        ops = [name for name, _ in rec.calls if name.startswith("tle_kernels.")]
        assert ops == ["tle_kernels.sparse_mla_decode.default"]
        args = next(a for name, a in rec.calls if name == ops[0])
        assert args[0] is q and args[1] is k and args[2] is idx
        assert args[3] == 0.25 and args[4] is is_fp8
        assert args[5] is sink and args[6] is tl and args[7] is xk and args[8] is xidx
        # "auto" runs an FP8 call with an extra cache as two split-fp8 launches merged by lse;
        # the bf16 cache's kernels store bf16 only, so that call stays on the naive kernel
        assert args[9] is xtl and args[10] == ("split-fp8" if is_fp8 else "naive")
        # the default scale is 576 ** -0.5
        with RecordOps() as rec:
            sparse_call(q, k, idx, meta, is_fp8_kvcache=is_fp8, extra_k_cache=xk,
                        extra_indices_in_kvcache=xidx)
        args = next(a for name, a in rec.calls if name.startswith("tle_kernels."))
        assert args[3] == 576 ** -0.5 and args[5] is None and args[9] is None


def test_dense_call_runs_the_dense_op():
    with FakeTensorMode():
        q, k, bt, sl = dense_args(b=5, s_q=2, h_q=32, device="cuda")
        meta, _ = K.get_mla_metadata()
        meta.fill(D.DecodeSchedMeta.Config.of(q, k, True), 132)
        with RecordOps() as rec:
            out, lse = K.flash_mla_with_kvcache(q, k, bt, sl, 512, meta, causal=True)
        assert out.shape == (5, 2, 32, 512) and lse.shape == (5, 32, 2)
    ops = [name for name, _ in rec.calls if name.startswith("tle_kernels.")]
    assert ops == ["tle_kernels.mla_decode.default"]


def test_op_passes_its_arguments_to_the_launch(monkeypatch):
    """The op's implementation (CPU tensors: no launch) allocates FlashMLA's outputs and hands
    each argument to sparse_decode_api.launch_sparse in its place."""
    seen = []

    def fake_launch(impl, q, k_cache, indices, sm_scale, is_fp8, out, lse, *rest):
        seen.append((impl, q, k_cache, indices, sm_scale, is_fp8, out, lse) + rest)
        out.fill_(1.0)
        lse.fill_(2.0)
        return "naive"

    monkeypatch.setattr(D.sparse_api, "launch_sparse", fake_launch)
    q, k, idx = sparse_args(b=2, s_q=3, h_q=16)
    sink, tl = torch.zeros(16), torch.zeros(2, dtype=I32)
    xk, xidx, xtl = k[:1], torch.zeros(2, 3, 64, dtype=I32), torch.zeros(2, dtype=I32)
    out, lse = torch.ops.tle_kernels.sparse_mla_decode(q, k, idx, 0.5, True, sink, tl, xk, xidx,
                                                       xtl, "naive")
    (impl, q_, k_, idx_, scale, fp8, o, l, *rest), = seen
    assert (impl, scale, fp8) == ("naive", 0.5, True)
    assert q_ is q and k_ is k and idx_ is idx
    assert rest[0] is sink and rest[1] is tl and rest[2] is xk and rest[3] is xidx
    assert rest[4] is xtl
    assert out.shape == (2, 3, 16, 512) and out.dtype == BF16 and (out == 1).all()
    assert lse.shape == (2, 16, 3) and lse.dtype == F32 and (lse == 2).all()


# ---------------------------------------------------------------------------------------------
# The op run by Triton's interpreter (the naive kernel) against the fp32 reference: fp32 q and
# bf16-layout caches as fp32 (the interpreter's bf16 dots are wrong); the FP8 cache stays bytes
# ---------------------------------------------------------------------------------------------

INTERPRETED = r'''
import torch
import tle_kernels.decode_api  # registers the op
from tle_kernels.sparse_decode_reference import (make_sparse_decode_inputs,
                                                 sparse_decode_reference)
inf = float("inf")
for is_fp8 in (True, False):
    x = make_sparse_decode_inputs(3, 2, 16, 128, page=16, is_fp8=is_fp8, device="cpu", seed=21,
                                  invalid=0.3, topk_length=[0, 70, 999], attn_sink=True,
                                  extra_topk=64, extra_page=5, extra_topk_length=[64, 3, 0])
    x["indices"][2, 1] = -1                      # request 2, row 1: only its extra cache slots
    x["extra_indices"][2, 1] = -1                # ... none either: out 0, lse +inf
    k, xk = x["k_cache"], x["extra_k_cache"]
    if not is_fp8:
        k, xk = k.float(), xk.float()
    out, lse = torch.ops.tle_kernels.sparse_mla_decode(
        x["q"].float(), k, x["indices"], 0.3, is_fp8, x["attn_sink"], x["topk_length"], xk,
        x["extra_indices"], x["extra_topk_length"], "naive")
    want_out, want_lse = sparse_decode_reference(
        x["q"].float(), x["k_cache"], x["indices"], 512, 0.3, x["attn_sink"], x["topk_length"],
        x["extra_k_cache"], x["extra_indices"], x["extra_topk_length"])
    what = ("fp8" if is_fp8 else "bf16")
    assert out.dtype == torch.bfloat16 and out.shape == (3, 2, 16, 512), what
    assert lse.dtype == torch.float32 and lse.shape == (3, 16, 2), what
    assert not out.isnan().any() and not lse.isnan().any(), what
    err = (out.float() - want_out).abs().max().item()
    assert torch.allclose(out.float(), want_out, atol=2e-3, rtol=1e-2), (what, err)
    assert (want_lse[2, :, 1] == inf).all() and (lse[2, :, 1] == inf).all(), what
    assert (out[2, 1] == 0).all(), what
    fin = torch.isfinite(want_lse)
    assert torch.equal(lse[~fin], want_lse[~fin]), what
    assert torch.allclose(lse[fin], want_lse[fin], atol=1e-5), what
print("INTERPRETED OK")
'''


def test_sparse_op_in_triton_interpreter(tmp_path):
    run_in_triton_interpreter(INTERPRETED, tmp_path, timeout=300)
