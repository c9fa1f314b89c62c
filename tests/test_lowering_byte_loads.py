"""2-D loads of 1-byte elements (FP8 cache bytes) take 16-byte vectors.

The default register layout holds 8 contiguous elements per thread: a 16-byte vector for bf16,
but only 8 bytes for FP8, so a [64, 256] FP8 tile took 16 loads per thread and each thread held
4 rows' addresses and scales. When the compile's signature says a pointer argument points to a
1-byte type, a 2-D load through it prefers [1, 16] elements per thread, 8 x 4 threads per warp
(lowering/layouts.byte_rows). The FP8 sparse decode's producer is the kernel this serves.
"""

from __future__ import annotations

import re

import pytest

import tle_kernels.sparse_decode_seesaw_fp8 as fp8_mod
from tle_compiler.lowering.codegen import generate
from tle_compiler.lowering.compile import kernel_info_of
from tle_compiler.lowering.layouts import byte_rows, pointee_of

BYTE_LAYOUT = "gl.BlockedLayout([1, 16], [8, 4], [4, 1], [1, 0])"
CFG = fp8_mod.DEFAULT_CONFIG


def producer_source(arg_types):
    info = kernel_info_of(fp8_mod.sparse_decode_seesaw_fp8, dict(CFG["constexprs"]))
    src = generate(info, dict(CFG["constexprs"]), arg_types=arg_types).source
    start = src.index("def fp8_producer(")
    return src[start:src.index("@gluon.jit", start)]


def test_pointee_and_layout_rules():
    assert pointee_of("*fp8e4nv") == "fp8e4nv" and pointee_of("*kbf16") == "bf16"
    assert pointee_of("i32") is None and pointee_of(None) is None
    assert byte_rows((64, 256), 4) == ("blocked", (1, 16), (8, 4), (4, 1), (1, 0))
    assert byte_rows((64, 32), 4) is None      # under 64 bytes a row
    assert byte_rows((16, 256), 4) is None     # fewer than 8 rows a warp
    assert byte_rows((256,), 4) is None


def test_fp8_pointer_loads_take_the_byte_layout():
    sig = dict(CFG["signature"])
    assert sig["kv8_ptr"] == "*fp8e4nv"
    src = producer_source(sig)
    assert BYTE_LAYOUT in src
    # the FP8 tiles' row offsets, scales and the RoPE gathers share the layout: no conversions
    assert "convert_layout" not in src


@pytest.mark.parametrize("arg_types", [None, "bf16"], ids=["no-signature", "bf16-pointer"])
def test_other_loads_keep_the_default_layout(arg_types):
    if arg_types == "bf16":
        arg_types = {**CFG["signature"], "kv8_ptr": "*bf16"}
    src = producer_source(arg_types)
    assert BYTE_LAYOUT not in src
    assert "gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])" in src


def test_the_fp8_bytes_load_as_16_byte_vectors():
    """In the compiled PTX every FP8 byte load of the producer is a 16-byte vector (4 pieces of
    [64, 256] per pair, each 128 bytes per thread = 8 vectors: 32 in the pair loop)."""
    from tle_compiler.lowering import compile_kernel

    ptx = compile_kernel(fp8_mod.sparse_decode_seesaw_fp8, dict(CFG["signature"]),
                         dict(CFG["constexprs"])).asm["ptx"]
    assert len(re.findall(r"ld\.global(?:\.\w+)*\.v4\.b32", ptx)) >= 32
    assert not re.findall(r"ld\.global(?:\.\w+)*\.v2\.b32", ptx)
