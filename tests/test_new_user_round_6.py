"""A new user's round (6) on the kernel APIs, on a machine without a GPU: FlashMLA's Python
interface (``import tle_kernels as flash_mla``), the custom ops' fake implementations and the
benchmarks' arguments. One test per fix, and tests that pin what was found right:

- ``tle_kernels.sparse_decode`` launched its kernel from Python instead of through the custom op
  ``tle_kernels::sparse_mla_decode`` that ``flash_mla_with_kvcache`` uses: on FakeTensors it read
  their data pointers and tried to run on a device ("PyTorch is not linked with support for cuda
  devices"), where the op's fake implementation gives the outputs.
- ``is_fp8_kvcache=True`` with a bf16 cache (FlashMLA's sparse decode requires the flag; this
  package reads a bf16 cache with it False) said "with is_fp8 the cache holds bytes", a name the
  caller of ``flash_mla_with_kvcache`` never used, and not how a bf16 cache is read.
- FlashMLA's ``flash_attn_varlen_func`` (and its packed forms) gave the bare "module
  'tle_kernels' has no attribute"; it now says that FlashMLA's dense varlen prefill is not
  provided and which of FlashMLA's names are (docs/decode.md too).
- ``bench_sparse_decode --shape`` took any head count (``b4_s1_h100``), which
  ``flash_mla_with_kvcache`` refuses with indices (h_q one of 8, 16, 32, 64, 128): the naive
  kernel would have timed a shape no call can run. A usage error now, and ``--help`` says so.
- ``bench_sparse_mla --case h16 --h 64`` (and ``python3 -m tle_kernels`` with them) dropped
  ``--h`` silently (the case sets H); a usage error now.
- ``bench_sparse_decode --s-kv 100`` (fewer cache tokens than the 2048 slots, which name
  distinct tokens) was taken: most slots were then invalid and skipped, yet counted in TFLOP/s.
- ``bench_mla_decode --shape b128_s1_h16 --L 1024`` dropped ``--L`` without a word (that
  shape has the one L 8192); a usage error now.
- ``flash_mla_with_kvcache`` on FakeTensors (FakeTensorMode's shape propagation) with a torch
  built without CUDA failed with torch's AssertionError "Torch not compiled with CUDA enabled":
  filling the metadata asked the device's SM count. It fills n_split 1 there now (the fake
  outputs do not depend on it) and returns the fake outputs; the metadata's shape checks hold.
- the pair ``get_mla_metadata()`` returns, passed whole as ``tile_scheduler_metadata``, got
  "expected the DecodeSchedMeta ..., got tuple"; the error now says to unpack it.
- a filled metadata's config had FlashMLA's fields but ``h_k`` (spelt ``h_kv``); ``h_k`` reads
  it too.
- ``help(tle_kernels)``, where ``python3 -m tle_kernels --help`` sends a user for the Python API,
  listed no entry point (the names are imported lazily, and ``dir`` did not give them; nor did
  tab completion): the package has a ``__dir__`` now.
- a softmax scale of an int too large for a float (``10 ** 400``) raised a bare OverflowError
  naming no argument; it is refused as any other non-finite scale, naming it.

Found right (pinned here): the custom ops' fake implementations (meta tensors and
FakeTensorMode: out [b, s_q, h_q, 512] bf16, lse [b, h_q, s_q] fp32; the prefill's three
outputs), and the errors of a new user's wrong calls, each naming the argument before any launch.
"""

from __future__ import annotations

import warnings

import pytest

torch = pytest.importorskip("torch")

from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: E402

import tle_kernels as flash_mla  # noqa: E402
from tle_kernels import decode_api, sparse_decode_api  # noqa: E402

BF16 = torch.bfloat16
I32 = torch.int32


def sparse_args(device, b=2, s_q=1, h_q=64, topk=128, fp8=True):
    q = torch.empty(b, s_q, h_q, 576, dtype=BF16, device=device)
    if fp8:
        k = torch.empty(4, 64, 1, 656, dtype=torch.uint8, device=device)
    else:
        k = torch.empty(4, 64, 1, 576, dtype=BF16, device=device)
    return q, k, torch.empty(b, s_q, topk, dtype=I32, device=device)


# ---- sparse_decode runs in the custom op ------------------------------------------------------


@pytest.mark.parametrize("fp8", [True, False])
def test_sparse_decode_on_fake_tensors_gives_the_fake_outputs(fp8):
    with warnings.catch_warnings():
        # reading a FakeTensor's data pointer warns: it must not happen
        warnings.simplefilter("error")
        with FakeTensorMode():
            q, k, idx = sparse_args("cuda", b=3, s_q=2, h_q=16, fp8=fp8)
            out, lse = flash_mla.sparse_decode(q, k, idx, is_fp8=fp8)
    assert (tuple(out.shape), out.dtype, out.device.type) == ((3, 2, 16, 512), BF16, "cuda")
    assert (tuple(lse.shape), lse.dtype, lse.device.type) == ((3, 16, 2), torch.float32, "cuda")


def test_sparse_decode_calls_the_custom_op(monkeypatch):
    seen = []

    def op(*args):
        seen.append(args)
        return sparse_decode_api.empty_outputs(args[0])

    monkeypatch.setattr(decode_api, "sparse_mla_decode_op", op)
    monkeypatch.setattr(sparse_decode_api, "launch_sparse",
                        lambda *a, **k: pytest.fail("launched outside the custom op"))
    monkeypatch.setattr(sparse_decode_api, "validate_sparse",
                        lambda *a, **k: dict(softmax_scale=0.25, impl="naive"))
    q, k, idx = sparse_args("cpu")
    out, lse = flash_mla.sparse_decode(q, k, idx, 512, None, True)
    assert len(seen) == 1 and seen[0][3:5] == (0.25, True) and seen[0][-1] == "naive"
    assert tuple(out.shape) == (2, 1, 64, 512) and tuple(lse.shape) == (2, 64, 1)


def test_sparse_decode_still_validates_on_cpu_tensors():
    q, k, idx = sparse_args("cpu")
    with pytest.raises(ValueError, match=r"^q: expected a CUDA tensor, got device cpu$"):
        flash_mla.sparse_decode(q, k, idx)


# ---- is_fp8_kvcache=True with a bf16 cache ----------------------------------------------------


def test_a_bf16_cache_flagged_fp8_names_flashmla_flag_and_the_bf16_way():
    # FlashMLA's sparse decode requires is_fp8_kvcache=True; this package also reads a bf16
    # cache, with the flag False: the error names the flag as the caller spelt it and says so
    q, _, idx = sparse_args("cpu")
    meta, _ = flash_mla.get_mla_metadata()
    k = torch.empty(4, 64, 1, 576, dtype=BF16)
    with pytest.raises(TypeError) as e:
        flash_mla.flash_mla_with_kvcache(q, k, None, None, 512, meta, is_fp8_kvcache=True,
                                         indices=idx)
    assert str(e.value) == (
        "k_cache: with is_fp8 the cache holds bytes (is_fp8_kvcache=True: FlashMLA's FP8 layout "
        "[num_blocks, page_block_size, 1, 656]): expected dtype uint8, int8 or float8_e4m3fn, got "
        "torch.bfloat16; a bf16 cache [num_blocks, page_block_size, 1, 576] is read with "
        "is_fp8_kvcache=False")
    assert not meta.have_initialized
    # a cache of another dtype gets no bf16 advice
    with pytest.raises(TypeError) as e:
        flash_mla.flash_mla_with_kvcache(q, k.half(), None, None, 512, meta,
                                         is_fp8_kvcache=True, indices=idx)
    assert str(e.value).endswith("got torch.float16")
    # ... and the same cache with the flag False gets as far as the device rule
    with pytest.raises(ValueError, match=r"^q: expected a CUDA tensor, got device cpu$"):
        flash_mla.flash_mla_with_kvcache(q, k, None, None, 512, meta, is_fp8_kvcache=False,
                                         indices=idx)


# ---- FlashMLA's names ------------------------------------------------------------------------

# flash_mla/__init__.py's __all__ (FlashMLA 1.0.0)
FLASH_MLA_ALL = ("get_mla_metadata", "flash_mla_with_kvcache", "flash_attn_varlen_func",
                 "flash_attn_varlen_qkvpacked_func", "flash_attn_varlen_kvpacked_func",
                 "flash_mla_sparse_fwd")
NOT_PROVIDED = ("flash_attn_varlen_func", "flash_attn_varlen_qkvpacked_func",
                "flash_attn_varlen_kvpacked_func")


@pytest.mark.parametrize("name", NOT_PROVIDED)
def test_flashmla_varlen_prefill_is_missing_saying_so(name):
    assert not hasattr(flash_mla, name)
    with pytest.raises(AttributeError) as e:
        getattr(flash_mla, name)
    assert str(e.value) == (
        f"module 'tle_kernels' has no attribute {name!r}: FlashMLA's dense variable-length "
        "prefill (flash_attn_varlen_func and its packed forms, SM100 kernels) is not provided; "
        "of FlashMLA's interface tle_kernels has get_mla_metadata, flash_mla_with_kvcache (dense "
        "and sparse decode) and flash_mla_sparse_fwd")


def test_every_other_flashmla_name_is_there_and_the_docs_say_which_are_not():
    for name in FLASH_MLA_ALL:
        if name not in NOT_PROVIDED:
            assert callable(getattr(flash_mla, name)) and name in flash_mla.__all__
    with pytest.raises(AttributeError, match=r"^module 'tle_kernels' has no attribute 'nosuch'$"):
        flash_mla.nosuch
    from pathlib import Path

    text = " ".join((Path(__file__).resolve().parent.parent / "docs" / "decode.md")
                    .read_text().split())
    assert ("FlashMLA's dense variable-length prefill (`flash_attn_varlen_func`, "
            "`flash_attn_varlen_qkvpacked_func`, `flash_attn_varlen_kvpacked_func`: SM100 "
            "kernels) is not: asking for one raises AttributeError saying so") in text


# ---- the benchmarks' arguments -----------------------------------------------------------------


def run_module(capsys, main, argv):
    with pytest.raises(SystemExit) as e:
        main(argv)
    out, err = capsys.readouterr()
    return e.value.code, out, err


@pytest.mark.parametrize("shape", ["b4_s1_h100", "b1_s1_h1", "b128_s1_h256"])
def test_bench_sparse_decode_refuses_a_head_count_the_decode_refuses(capsys, shape):
    from tle_kernels import bench_sparse_decode as B

    code, out, err = run_module(capsys, B.parse_args, ["--shape", shape])
    h = shape.rsplit("h", 1)[1]
    assert code == 2 and out == ""
    assert err.splitlines()[-1] == (
        f"python3 -m tle_kernels.bench_sparse_decode: error: argument --shape: shape {shape!r}: "
        f"H must be one of 8, 16, 32, 64, 128 (the sparse decode's head counts), got {h}")
    assert "Traceback" not in err


def test_bench_sparse_decode_takes_each_head_count_of_the_decode(capsys):
    from tle_kernels import bench_sparse_decode as B

    names = [f"b2_s1_h{h}" for h in sparse_decode_api.H_Q]
    args = B.parse_args(["--shape", *names])
    assert [B.parse_shape(n) for n in args.shape] == [(2, 1, h) for h in sparse_decode_api.H_Q]
    with pytest.raises(SystemExit):
        B.parse_args(["--help"])
    text = " ".join(capsys.readouterr()[0].split())
    assert "shapes to time: any bB_sS_hH, H one of 8, 16, 32, 64, 128 (e.g. b4_s1_h128)" in text


@pytest.mark.parametrize("prog", ["bench", "main_job"])
def test_bench_sparse_mla_head_case_with_another_h_is_a_usage_error(capsys, monkeypatch, prog):
    from tle_kernels import bench_sparse_mla as M

    if prog == "bench":
        code, out, err = run_module(capsys, M.main, ["--case", "h16", "--h", "64"])
        name = "python3 -m tle_kernels.bench_sparse_mla"
    else:
        # python3 -m tle_kernels checks the benchmark's arguments on a CPU as the benchmark would
        import runpy
        import sys

        monkeypatch.setattr(sys, "argv", ["tle_kernels", "--case", "h32", "--h", "128"])
        with pytest.raises(SystemExit) as e:
            runpy.run_module("tle_kernels", run_name="__main__")
        code, (out, err) = e.value.code, capsys.readouterr()
        name = "python3 -m tle_kernels"
    want = ("--h 64: --case h16 times H = 16" if prog == "bench"
            else "--h 128: --case h32 times H = 32")
    assert code == 2 and out == ""
    assert err.splitlines()[-1] == f"{name}: error: {want}; leave --h out"


def test_bench_sparse_mla_h_resolves_as_before():
    from tle_kernels import bench_sparse_mla as M

    assert M.parse_args([]).h == 128
    assert M.parse_args(["--h", "96"]).h == 96
    assert M.parse_args(["--case", "h16"]).h == 16
    assert M.parse_args(["--case", "h32", "--h", "32"]).h == 32
    assert M.parse_args(["--case", "sink", "--h", "64"]).h == 64


# ---- flash_mla_with_kvcache on FakeTensors, torch without CUDA ---------------------------------


def dense_args(device, b=3, s_q=2, h_q=16, h_kv=1):
    return (torch.empty(b, s_q, h_q, 576, dtype=BF16, device=device),
            torch.empty(4, 64, h_kv, 576, dtype=BF16, device=device),
            torch.empty(b, 5, dtype=I32, device=device), torch.empty(b, dtype=I32, device=device))


needs_cpu_torch = pytest.mark.skipif(torch.cuda.is_available(),
                                     reason="the case of a torch built without CUDA")


@needs_cpu_torch
@pytest.mark.parametrize("causal", [False, True])
def test_dense_decode_on_fake_tensors_without_cuda_gives_the_fake_outputs(causal):
    meta, _ = flash_mla.get_mla_metadata()
    with FakeTensorMode():
        q, k, bt, cs = dense_args("cuda", h_q=32, h_kv=2)
        out, lse = flash_mla.flash_mla_with_kvcache(q, k, bt, cs, 512, meta, causal=causal)
        assert (tuple(out.shape), out.dtype, out.device.type) == ((3, 2, 32, 512), BF16, "cuda")
        assert (tuple(lse.shape), lse.dtype) == ((3, 32, 2), torch.float32)
        # the metadata is filled and checked as on a GPU: the same shapes again, then others
        flash_mla.flash_mla_with_kvcache(q, k, bt, cs, 512, meta, causal=causal)
        q2, k2, bt2, cs2 = dense_args("cuda", b=4, h_q=32, h_kv=2)
        with pytest.raises(ValueError, match=r"^tile_scheduler_metadata: it was filled by a call "
                                             r"with other shapes \(b 3 -> 4\)"):
            flash_mla.flash_mla_with_kvcache(q2, k2, bt2, cs2, 512, meta, causal=causal)
    assert meta.have_initialized and meta.n_split == 1 and meta.sm_count is None
    assert meta.config == decode_api.DecodeSchedMeta.Config(3, 2, 32, 64, 2, causal)


@needs_cpu_torch
def test_sparse_decode_call_on_fake_tensors_without_cuda_gives_the_fake_outputs():
    meta, _ = flash_mla.get_mla_metadata()
    with FakeTensorMode():
        q, k, idx = sparse_args("cuda", b=2, s_q=1, h_q=64, topk=256)
        out, lse = flash_mla.flash_mla_with_kvcache(q, k, None, None, 512, meta,
                                                    is_fp8_kvcache=True, indices=idx)
    assert (tuple(out.shape), out.dtype) == ((2, 1, 64, 512), BF16)
    assert (tuple(lse.shape), lse.dtype) == ((2, 64, 1), torch.float32)
    assert meta.config.topk == 256 and meta.n_split == 1


def test_the_sm_count_is_read_from_the_device_otherwise(monkeypatch):
    # real (not fake) tensors, or a torch with CUDA: the device's count, as before
    asked = []
    monkeypatch.setattr(decode_api, "sm_count", lambda dev: asked.append(dev) or 132)
    q = torch.empty(1, 1, 16, 576, dtype=BF16)
    assert decode_api.fill_sm_count(q) == 132 and asked == [q.device]
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    with FakeTensorMode():
        fq = torch.empty(1, 1, 16, 576, dtype=BF16, device="cuda")
        assert decode_api.fill_sm_count(fq) == 132
    meta = decode_api.DecodeSchedMeta()
    meta.fill(decode_api.DecodeSchedMeta.Config(2, 1, 128, 64, 1, False), 132)
    assert meta.sm_count == 132 and meta.n_split == decode_api.choose_n_split(2, 1, 2, 132) > 1


# ---- get_mla_metadata()'s pair passed whole ---------------------------------------------------

UNPACK = (" (the pair get_mla_metadata() returns: pass its first item, sched_meta, _ = "
          "get_mla_metadata())")


@pytest.mark.parametrize("sparse", [False, True])
def test_the_metadata_pair_passed_whole_is_told_to_be_unpacked(sparse):
    pair = flash_mla.get_mla_metadata()
    if sparse:
        q, k, idx = sparse_args("cpu")
        call = lambda meta: flash_mla.flash_mla_with_kvcache(  # noqa: E731
            q, k, None, None, 512, meta, None, None, False, True, idx)
    else:
        q, k, bt, cs = dense_args("cpu")
        call = lambda meta: flash_mla.flash_mla_with_kvcache(q, k, bt, cs, 512, meta)  # noqa: E731
    with pytest.raises(TypeError) as e:
        call(pair)
    assert str(e.value) == ("tile_scheduler_metadata: expected the DecodeSchedMeta returned by "
                            "tle_kernels.get_mla_metadata(), got tuple" + UNPACK)
    # other wrong objects: the plain message (FlashMLA's old metadata tensor, None)
    for wrong, name in ((torch.zeros(132, 8, dtype=I32), "torch.Tensor"), (None, "NoneType"),
                        ((), "tuple")):
        with pytest.raises(TypeError) as e:
            call(wrong)
        assert str(e.value) == ("tile_scheduler_metadata: expected the DecodeSchedMeta returned "
                                f"by tle_kernels.get_mla_metadata(), got {name}")
    # unpacked, the call gets as far as the device rule
    with pytest.raises(ValueError, match=r"^q: expected a CUDA tensor, got device cpu$"):
        call(pair[0])


@pytest.mark.parametrize("args, kwargs", [
    ((), {}),
    ((torch.zeros(4, dtype=I32), 16, 1), {}),  # FlashMLA's older interface
    ((), dict(cache_seqlens=torch.zeros(4, dtype=I32), num_q_tokens_per_head_k=16,
              num_heads_k=1, num_heads_q=16, is_fp8_kvcache=True, topk=2048)),
])
def test_get_mla_metadata_takes_flashmla_signatures(args, kwargs):
    meta, none = flash_mla.get_mla_metadata(*args, **kwargs)
    assert isinstance(meta, decode_api.DecodeSchedMeta) and none is None
    assert not meta.have_initialized and meta.config is None


# ---- found right: the custom ops' fake implementations ---------------------------------------


@pytest.mark.parametrize("b, s_q, h_q", [(3, 2, 16), (0, 1, 128), (1, 4, 64)])
def test_decode_ops_on_meta_tensors_give_flashmla_shapes(b, s_q, h_q):
    q = torch.empty(b, s_q, h_q, 576, dtype=BF16, device="meta")
    k = torch.empty(4, 64, 1, 576, dtype=BF16, device="meta")
    bt = torch.empty(b, 5, dtype=I32, device="meta")
    cs = torch.empty(b, dtype=I32, device="meta")
    out, lse = torch.ops.tle_kernels.mla_decode(q, k, bt, cs, 0.1, False, 1, "auto")
    assert (tuple(out.shape), out.dtype, out.device.type) == ((b, s_q, h_q, 512), BF16, "meta")
    assert (tuple(lse.shape), lse.dtype) == ((b, h_q, s_q), torch.float32)
    kf = torch.empty(4, 64, 1, 656, dtype=torch.uint8, device="meta")
    idx = torch.empty(b, s_q, 128, dtype=I32, device="meta")
    out, lse = torch.ops.tle_kernels.sparse_mla_decode(q, kf, idx, 0.1, True, None, None, None,
                                                       None, None, "auto")
    assert (tuple(out.shape), out.dtype) == ((b, s_q, h_q, 512), BF16)
    assert (tuple(lse.shape), lse.dtype) == ((b, h_q, s_q), torch.float32)


@pytest.mark.parametrize("batched", [False, True])
def test_prefill_on_fake_tensors_gives_flashmla_shapes(batched):
    lead = (2,) if batched else ()
    with FakeTensorMode():
        q = torch.empty(*lead, 10, 16, 512, dtype=BF16, device="cuda")
        kv = torch.empty(*lead, 20, 1, 512, dtype=BF16, device="cuda")
        idx = torch.empty(*lead, 10, 1, 64, dtype=I32, device="cuda")
        out, max_logits, lse = flash_mla.flash_mla_sparse_fwd(q, kv, idx, 512 ** -0.5)
    assert (tuple(out.shape), out.dtype) == ((*lead, 10, 16, 512), BF16)
    for t in (max_logits, lse):
        assert (tuple(t.shape), t.dtype) == ((*lead, 10, 16), torch.float32)


# ---- FlashMLA's signatures and metadata fields ------------------------------------------------

# FlashMLA's flash_mla/flash_mla_interface.py: each function's parameters and defaults
FLASH_MLA_SIGNATURES = {
    "flash_mla_with_kvcache": [
        ("q", None), ("k_cache", None), ("block_table", None), ("cache_seqlens", None),
        ("head_dim_v", None), ("tile_scheduler_metadata", None), ("num_splits", "None"),
        ("softmax_scale", "None"), ("causal", "False"), ("is_fp8_kvcache", "False"),
        ("indices", "None"), ("attn_sink", "None"), ("extra_k_cache", "None"),
        ("extra_indices_in_kvcache", "None"), ("topk_length", "None"),
        ("extra_topk_length", "None")],
    "flash_mla_sparse_fwd": [("q", None), ("kv", None), ("indices", None), ("sm_scale", None),
                             ("d_v", "512"), ("attn_sink", "None"), ("topk_length", "None")],
    "get_mla_metadata": [("args", None), ("kwargs", None)],
}


@pytest.mark.parametrize("name", sorted(FLASH_MLA_SIGNATURES))
def test_flashmla_parameters_in_order_with_their_defaults(name):
    import inspect

    params = inspect.signature(getattr(flash_mla, name)).parameters.values()
    positional = [(p.name, None if p.default is p.empty else repr(p.default)) for p in params
                  if p.kind is not p.KEYWORD_ONLY]
    assert positional == FLASH_MLA_SIGNATURES[name]
    # what this package adds is keyword only
    assert [p.name for p in params if p.kind is p.KEYWORD_ONLY] in ([], ["impl"])


def test_a_filled_metadata_config_has_flashmla_field_names():
    # FlashMLASchedMeta.Config: b, s_q, h_q, page_block_size, h_k, causal, is_fp8_kvcache, topk,
    # extra_page_block_size, extra_topk
    meta, _ = flash_mla.get_mla_metadata()
    assert meta.have_initialized is False and meta.config is None
    cfg = decode_api.DecodeSchedMeta.Config(3, 2, 32, 64, 2, True)
    meta.fill(cfg, 132)
    got = {f: getattr(meta.config, f) for f in (
        "b", "s_q", "h_q", "page_block_size", "h_k", "causal", "is_fp8_kvcache", "topk",
        "extra_page_block_size", "extra_topk")}
    assert got == dict(b=3, s_q=2, h_q=32, page_block_size=64, h_k=2, causal=True,
                       is_fp8_kvcache=False, topk=None, extra_page_block_size=None,
                       extra_topk=None)
    assert meta.have_initialized is True


# ---- help(tle_kernels) -------------------------------------------------------------------------


def test_help_of_the_package_shows_the_entry_points():
    # python3 -m tle_kernels --help points at help(tle_kernels) for the Python API
    import pydoc

    text = pydoc.render_doc(flash_mla, renderer=pydoc.plaintext)
    for sig in ("flash_mla_with_kvcache(q: 'torch.Tensor', k_cache: 'torch.Tensor'",
                "get_mla_metadata(*args, **kwargs)", "flash_mla_sparse_fwd(q: 'torch.Tensor'",
                "sparse_mla_prefill(q: 'torch.Tensor'", "sparse_decode(q: 'torch.Tensor'",
                "class DecodeSchedMeta("):
        assert sig in text, sig
    names = dir(flash_mla)
    assert set(flash_mla.__all__) <= set(names) and "__getattr__" in names
    assert not set(NOT_PROVIDED) & set(names)


def test_dir_of_the_package_imports_nothing():
    import subprocess
    import sys
    from pathlib import Path

    root = str(Path(__file__).resolve().parent.parent)
    code = ("import sys, tle_kernels; names = dir(tle_kernels); "
            "print('flash_mla_with_kvcache' in names, 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True,
                         check=True, env={"PYTHONPATH": root, "PATH": "/usr/bin:/bin"})
    assert out.stdout.split() == ["True", "False"]


def test_bench_sparse_decode_refuses_fewer_cache_tokens_than_slots(capsys):
    from tle_kernels import bench_sparse_decode as B

    code, out, err = run_module(capsys, B.parse_args, ["--s-kv", "100"])
    assert code == 2 and out == ""
    assert err.splitlines()[-1] == (
        "python3 -m tle_kernels.bench_sparse_decode: error: --s-kv 100: each query row's 2048 "
        "slots (--topk) name distinct tokens of its request's cache, so --s-kv must be at least "
        "--topk")
    assert B.parse_args(["--s-kv", "2048"]).s_kv == 2048
    assert B.parse_args(["--s-kv", "128", "--topk", "128"]).topk == 128
    with pytest.raises(SystemExit):
        B.parse_args(["--help"])
    assert "(default 32768; at least --topk)" in " ".join(capsys.readouterr()[0].split())


# ---- a scale too large for a float -------------------------------------------------------------


@pytest.mark.parametrize("entry", ["dense", "sparse", "prefill", "sparse_decode"])
def test_a_scale_too_large_for_a_float_is_refused_naming_it(entry):
    big = 10 ** 400
    meta, _ = flash_mla.get_mla_metadata()
    if entry == "dense":
        q, k, bt, cs = dense_args("cpu")
        call = lambda s: flash_mla.flash_mla_with_kvcache(q, k, bt, cs, 512, meta,  # noqa: E731
                                                          softmax_scale=s)
        name = "softmax_scale: expected a finite positive float"
    elif entry in ("sparse", "sparse_decode"):
        q, k, idx = sparse_args("cpu")
        if entry == "sparse":
            call = lambda s: flash_mla.flash_mla_with_kvcache(  # noqa: E731
                q, k, None, None, 512, meta, softmax_scale=s, is_fp8_kvcache=True, indices=idx)
        else:
            call = lambda s: flash_mla.sparse_decode(q, k, idx, 512, s)  # noqa: E731
        name = "softmax_scale: expected a finite positive float"
    else:
        q = torch.empty(10, 16, 576, dtype=BF16)
        kv = torch.empty(20, 1, 576, dtype=BF16)
        idx = torch.empty(10, 1, 64, dtype=I32)
        call = lambda s: flash_mla.flash_mla_sparse_fwd(q, kv, idx, s)  # noqa: E731
        name = "sm_scale: "
    with pytest.raises(ValueError, match="^" + name):
        call(big)
    # a large int that a float holds is a scale like any other: refused only by the device rule
    with pytest.raises(ValueError, match=r"^q: expected a CUDA tensor"):
        call(10 ** 300)
    assert not meta.have_initialized


def test_docs_say_sparse_decode_runs_in_the_op_and_how_a_bf16_cache_is_flagged():
    from pathlib import Path

    text = " ".join((Path(__file__).resolve().parent.parent / "docs" / "sparse_decode.md")
                    .read_text().split())
    assert ("`tle_kernels.sparse_decode` is the same decode in the same op under its own names "
            "(no metadata)") in text
    assert ("(a bf16 cache with `is_fp8_kvcache=True`, as code written for FlashMLA passes it, is "
            "a TypeError saying so)") in text


def test_bench_mla_decode_L_for_shapes_of_one_L_is_a_usage_error(capsys):
    from tle_kernels import bench_mla_decode as M

    code, out, err = run_module(capsys, M.main, ["--shape", "b128_s1_h16", "--L", "1024"])
    assert code == 2 and out == ""
    assert err.splitlines()[-1] == (
        "python3 -m tle_kernels.bench_mla_decode: error: --L: sets the L of b128_s1 and "
        "b64_s2_causal; --shape b128_s1_h16 times L = 8192 only")


@pytest.mark.parametrize("argv", [["--shape", "b128_s1_h16", "b128_s1", "--L", "1024"],
                                  ["--L", "2048"], ["--shape", "b128_s1_h16"]])
def test_bench_mla_decode_L_with_a_shape_it_sets_reaches_the_gpu_check(capsys, monkeypatch, argv):
    from tle_kernels import bench_mla_decode as M

    monkeypatch.setattr(M, "gpu_missing", lambda: True)
    assert M.main(argv) == 2


def test_pipe_copy_without_a_gpu_is_a_clear_usage_exit(tmp_path):
    """benchmarks/pipe_copy.py (scripts/gpu_check.sh's bench stage) on a machine whose torch sees
    no GPU: exit 2 with one line saying so, not a traceback from torch.Generator("cuda")."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: the benchmark would run")
    root = Path(__file__).resolve().parent.parent
    r = subprocess.run([sys.executable, str(root / "benchmarks" / "pipe_copy.py")],
                       capture_output=True, text=True, cwd=tmp_path, timeout=300,
                       env={**os.environ, "PYTHONPATH": str(root)})
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.strip().endswith("runs on a CUDA GPU (Hopper, sm_90a); torch sees none here")
