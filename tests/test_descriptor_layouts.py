"""The layout a tensor-descriptor argument's signature names, spelled without Triton
(lowering/descriptors.layout_repr), is the repr of the layout Triton builds from the Gluon source
the lowering emits for the ring (plan.tma_layout): a signature checked by tle-dump is the one the
compile hands Triton."""

import itertools

import pytest

from tle_compiler.lowering.descriptors import layout_repr
from tle_compiler.lowering.plan import GL_DTYPES, tma_layout

gl = pytest.importorskip("triton.experimental.gluon.language")

SHAPES = [[64, 64], [1, 64, 1, 256], [1, 64, 1, 64], [8, 16], [4, 128], [128], [2, 3, 40],
          [64, 8], [16, 512], [1, 1, 32]]


@pytest.mark.parametrize("shape, dtype", itertools.product(SHAPES, ["bf16", "fp16", "fp32",
                                                                   "fp8e4nv", "int8", "int32"]))
def test_layout_repr_is_tritons_repr(shape, dtype):
    expected = repr(eval(tma_layout(shape, GL_DTYPES[dtype]), {"gl": gl}))
    assert layout_repr(shape, dtype) == expected


def test_layout_repr_names_the_swizzle():
    # a row of 64 bf16 values is 128 bytes: the widest swizzle; 8 fp32 rows of 8 values 32 bytes
    assert "swizzle_byte_width=128" in layout_repr([64, 64], "bf16")
    assert "swizzle_byte_width=32" in layout_repr([8, 8], "fp32")
    assert "swizzle_byte_width=0" in layout_repr([128], "bf16")
