"""The FlashMLA sparse FP8 decode anchor's C side (benchmarks/anchor/flashmla_sparse_decode_glue.cu
and benchmarks/anchor/build_flashmla_sparse_decode_anchor.sh), checked without a GPU:

- the ctypes signatures of benchmarks/anchor_flashmla_sparse_decode.py match the glue's C
  prototypes, argument for argument, and anchor_sparse_decode's arguments come in the order the
  loader passes them;
- the build script compiles FlashMLA's metadata kernel, its two V3.2 sparse FP8 decode
  instantiations, its combine kernel and the glue with FlashMLA's flags (a stand-in nvcc records
  its arguments), and names what is missing;
- where the real library has been built (.anchor/libanchor_flashmla_sparse_decode.so), it exports
  every function, computes num_sm_parts as the binding does, refuses bad shapes with its message,
  and without a GPU a call it accepts reaches FlashMLA's launcher, whose C++ exception comes back
  as a refusal instead of unwinding into Python.
"""

from __future__ import annotations

import ctypes
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.anchor_flashmla_sparse_decode import SIGNATURES, bind

ROOT = Path(__file__).resolve().parent.parent
GLUE = ROOT / "benchmarks/anchor/flashmla_sparse_decode_glue.cu"
BUILD = ROOT / "benchmarks/anchor/build_flashmla_sparse_decode_anchor.sh"
try:
    import torch
    HAS_GPU = torch.cuda.is_available()
except ImportError:  # the CPU checks here need no torch
    HAS_GPU = False

REAL_LIB = Path(os.environ.get("TLE_FLASHMLA_SPARSE_DECODE_ANCHOR",
                               ROOT / ".anchor/libanchor_flashmla_sparse_decode.so"))

C_TYPES = {"int": ctypes.c_int, "float": ctypes.c_float, "long long": ctypes.c_longlong,
           "void*": ctypes.c_void_p, "const void*": ctypes.c_void_p,
           "const char*": ctypes.c_char_p}


def glue_prototypes() -> dict:
    """name -> (restype, [argtypes], [argument names]) of every extern "C" function of the glue."""
    src = re.sub(r"//[^\n]*", "", GLUE.read_text())
    protos = {}
    for ret, name, params in re.findall(r'extern "C"\s+([\w\s\*]+?)\s*(\w+)\(([^)]*)\)', src):
        types, names = [], []
        for p in filter(None, (p.strip() for p in params.split(","))):
            names.append(re.search(r"(\w+)$", p).group(1))
            types.append(C_TYPES[re.sub(r"\s*\*\s*", "* ", re.sub(r"\s+\w+$", "", p)).strip()])
        protos[name] = (C_TYPES[re.sub(r"\s*\*\s*", "*", ret.strip())], types, names)
    return protos


def test_ctypes_signatures_match_the_glue():
    protos = glue_prototypes()
    assert set(protos) == set(SIGNATURES)
    for name, (restype, argtypes) in SIGNATURES.items():
        assert protos[name][:2] == (restype, argtypes), name


def test_the_glue_takes_its_arguments_in_the_loaders_order():
    protos = glue_prototypes()
    assert protos["anchor_sparse_decode_num_sm_parts"][2] == ["num_sms", "s_q", "h_q"]
    assert protos["anchor_sparse_decode_metadata"][2] == [
        "sched_meta", "num_splits", "b", "s_q", "topk", "num_sm_parts", "stream"]
    assert protos["anchor_sparse_decode"][2] == [
        "q", "k_cache", "indices", "attn_sink", "sched_meta", "num_splits", "out", "lse",
        "lse_accum", "out_accum", "b", "s_q", "h_q", "num_blocks", "page_block_size", "topk",
        "num_sm_parts", "sm_scale", "stride_q_b", "stride_q_s_q", "stride_q_h_q",
        "stride_kv_block", "stride_kv_row", "stride_indices_b", "stride_indices_s_q", "stream"]


def test_build_script_needs_a_flashmla_checkout_and_names_what_is_missing(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("FLASHMLA_SRC", "CUTLASS_INC")}
    r = subprocess.run(["bash", str(BUILD), str(tmp_path / "x.so")], capture_output=True,
                       text=True, env=env, timeout=60)
    assert r.returncode != 0 and "FLASHMLA_SRC" in r.stderr
    r = subprocess.run(["bash", str(BUILD)], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode != 0 and "usage" in r.stderr
    r = subprocess.run(["bash", str(BUILD), str(tmp_path / "x.so")], capture_output=True,
                       text=True, env={**env, "FLASHMLA_SRC": str(tmp_path)}, timeout=60)
    assert r.returncode != 0 and f"missing {tmp_path}/csrc/params.h" in r.stderr


SOURCES = ["csrc/smxx/decode/get_decoding_sched_meta/get_decoding_sched_meta.cu",
           "csrc/sm90/decode/sparse_fp8/instantiations/v32_persistent_h64.cu",
           "csrc/sm90/decode/sparse_fp8/instantiations/v32_persistent_h128.cu",
           "csrc/smxx/decode/combine/combine.cu"]


def _fake_checkout(root: Path) -> None:
    for rel in ["csrc/params.h", "csrc/sm90/decode/sparse_fp8/splitkv_mla.cuh",
                "csrc/cutlass/include/cute/tensor.hpp", *SOURCES]:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("")


def test_build_script_compiles_flashmlas_sparse_decode_unchanged_with_the_glue(tmp_path):
    """A stand-in nvcc on PATH records its arguments: the metadata kernel, the V3.2 h64 / h128
    instantiations, the combine kernel and the glue, for sm_90a, with FlashMLA's include folders
    and CUTLASS from the checkout's submodule; NVCC_THREADS becomes --threads; the output's folder
    is created."""
    src = tmp_path / "FlashMLA"
    _fake_checkout(src)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "nvcc_args"
    (bin_dir / "nvcc").write_text(f'#!/usr/bin/env bash\nprintf "%s\\n" "$@" > {log}\n')
    (bin_dir / "nvcc").chmod(0o755)
    out = tmp_path / "deep" / "lib.so"
    env = {k: v for k, v in os.environ.items() if k not in ("CUTLASS_INC", "NVCC_THREADS")}
    env.update(FLASHMLA_SRC=str(src), PATH=f"{bin_dir}:{env['PATH']}")
    r = subprocess.run(["bash", str(BUILD), str(out)], capture_output=True, text=True, env=env,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    args = log.read_text().splitlines()
    assert "--threads" not in args
    assert out.parent.is_dir() and args[args.index("-o") + 1] == str(out)
    assert [a for a in args if a.endswith(".cu")] == [str(src / s) for s in SOURCES] + [str(GLUE)]
    assert "arch=compute_90a,code=sm_90a" in args and "-shared" in args
    includes = [args[i + 1] for i, a in enumerate(args) if a == "-I"]
    assert includes == [str(src / "csrc"), str(src / "csrc/kerutils/include"),
                        str(src / "csrc/sm90"), str(src / "csrc/cutlass/include")]
    assert "-std=c++20" in args and "--use_fast_math" in args and "-O3" in args
    env["NVCC_THREADS"] = "2"
    r = subprocess.run(["bash", str(BUILD), str(out)], capture_output=True, text=True, env=env,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    args = log.read_text().splitlines()
    assert args[args.index("--threads") + 1] == "2"
    env["CUTLASS_INC"] = str(tmp_path / "elsewhere")
    r = subprocess.run(["bash", str(BUILD), str(out)], capture_output=True, text=True, env=env,
                       timeout=60)
    assert r.returncode != 0 and "elsewhere/cute/tensor.hpp" in r.stderr


# ---------------------------------------------------------------------------------------------
# The real library, where it has been built (no GPU needed for these)

needs_real_lib = pytest.mark.skipif(
    not REAL_LIB.is_file(), reason=f"no FlashMLA sparse decode anchor library at {REAL_LIB}")


def _real():
    return bind(ctypes.CDLL(str(REAL_LIB)))


@needs_real_lib
def test_the_built_library_exports_every_function_and_the_binding_schedule_sizes():
    lib = _real()
    assert lib.anchor_sparse_decode_sched_meta_ints() == 8   # 32-byte DecodingSchedMeta
    # the binding's sm90 get_meta: max(SMs / s_q / (h_q / 64), 1)
    assert lib.anchor_sparse_decode_num_sm_parts(132, 1, 128) == 66
    assert lib.anchor_sparse_decode_num_sm_parts(132, 2, 64) == 66
    assert lib.anchor_sparse_decode_num_sm_parts(132, 200, 128) == 1
    assert lib.anchor_sparse_decode_num_sm_parts(132, 1, 32) == 0


def _decode_args(**change):
    """anchor_sparse_decode's arguments for b 4, s_q 1, h_q 64, topk 128, a contiguous q and a
    cache of 10 pages of 64 tokens; bogus 16-byte-aligned pointers (never dereferenced here)."""
    a = dict(q=1024, k_cache=1024, indices=1024, attn_sink=None, sched_meta=1024,
             num_splits=1024, out=1024, lse=1024, lse_accum=1024, out_accum=1024, b=4, s_q=1,
             h_q=64, num_blocks=10, page_block_size=64, topk=128, num_sm_parts=66, sm_scale=0.1,
             stride_q_b=64 * 576, stride_q_s_q=64 * 576, stride_q_h_q=576,
             stride_kv_block=64 * 656, stride_kv_row=656, stride_indices_b=128,
             stride_indices_s_q=128, stream=None)
    a.update(change)
    return list(a.values())


@needs_real_lib
@pytest.mark.parametrize("change, message", [
    (dict(h_q=32), "h_q must be 64 or 128"),
    (dict(topk=100), "topk must be a positive multiple of 64"),
    (dict(topk=0), "topk must be a positive multiple of 64"),
    (dict(b=0), "batch size must be positive"),
    (dict(b=20000), "shared memory"),
    (dict(s_q=0), "s_q must lie in 1..65535"),
    (dict(num_sm_parts=161), "num_sm_parts out of 1..160"),
    (dict(stride_kv_row=576), "656 bytes apart"),
    (dict(stride_kv_block=64 * 656 + 8), "multiple of 16 bytes"),
    (dict(stride_q_h_q=580), "multiples of 8 elements"),
    (dict(q=1026), "16-byte aligned"),
    (dict(out=None), "pointer is null"),
])
def test_the_built_glue_refuses_what_the_kernel_cannot_take(change, message):
    lib = _real()
    assert lib.anchor_sparse_decode(*_decode_args(**change)) == 1
    assert message in lib.anchor_sparse_decode_last_error().decode()


@needs_real_lib
@pytest.mark.parametrize("args, message", [
    ((1024, 1024, 0, 1, 128, 66, None), "batch size must be positive"),
    ((1024, 1024, 4, 1, 96, 66, None), "topk must be a positive multiple of 64"),
    ((1024, 1024, 4, 1, 128, 0, None), "num_sm_parts out of 1..160"),
    ((None, 1024, 4, 1, 128, 66, None), "pointer is null"),
])
def test_the_built_metadata_entry_refuses_bad_shapes(args, message):
    lib = _real()
    assert lib.anchor_sparse_decode_metadata(*args) == 1
    assert message in lib.anchor_sparse_decode_last_error().decode()


@needs_real_lib
@pytest.mark.skipif(HAS_GPU, reason="on a GPU this would launch on bogus pointers")
def test_without_a_gpu_flashmlas_exception_comes_back_as_a_refusal():
    """The split-KV kernel's host code at 64 and 128 heads runs until its output tensor map fails
    for want of a driver; the exception it throws is caught in the glue (the combine kernel, whose
    host code would exit the process, is not reached)."""
    code = (
        "import ctypes, sys\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "from benchmarks.anchor_flashmla_sparse_decode import bind\n"
        f"lib = bind(ctypes.CDLL({str(REAL_LIB)!r}))\n"
        "for h in (64, 128):\n"
        "    rc = lib.anchor_sparse_decode(*[1024] * 3, None, *[1024] * 6, 4, 1, h, 10, 64, 128,"
        " 66, 0.1, h * 576, h * 576, 576, 64 * 656, 656, 128, 128, None)\n"
        "    print(rc, lib.anchor_sparse_decode_last_error().decode())\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 2
    for line in lines:
        rc, msg = line.split(" ", 1)
        assert rc == "1" and ("error" in msg.lower() or "failed" in msg.lower()), line
