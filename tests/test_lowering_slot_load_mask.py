"""A masked load of shared memory (``tl.load(tle.gpu.local_ptr(slot.f), mask=m, other=x)``) keeps
its mask and other.

The lowering loaded the tile and dropped both, so the masked-off elements gave the slot's values
instead of ``other``. The whole tile is in shared memory, so it is read unmasked and the masked-off
elements replaced: ``gl.where(m, tile, x)`` (0 without ``other``), cast to the tile's dtype as
tl.load casts ``other``. The result is a register tensor, never the raw tile a tl.dot would read.
"""

from __future__ import annotations

import re

import pytest

from tle_compiler.diagnostics import TleError
from tle_compiler.lowering import compile_kernel
from tle_compiler.lowering.compile import gluon_source

KERNEL = '''
import triton.language as tl
import tle_compiler as tle


@tle.jit(num_warps=4)
def ring(x_ptr, y_ptr, N):
    a = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64, 64], tl.DTYPE))
    tle.gpu.warp_specialize([(produce, (a, x_ptr, N)), (consume, (a, y_ptr, N))], [4], [232])


def produce(a, x_ptr, N):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    w = a.writer()
    for t in range(N):
        s = w.acquire(t)
        tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + t * 4096 + offs))
        w.commit(t)


def consume(a, y_ptr, N):
    rows = tl.arange(0, 64)[:, None]
    offs = rows * 64 + tl.arange(0, 64)[None, :]
    r = a.reader()
    acc = tl.zeros([64, 64], tl.float32)
    for t in range(N):
        x = r.wait(t)
        v = SLOT_READ
        acc += v.to(tl.float32)
        r.release(t)
    tl.store(y_ptr + offs, acc)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*PTR", "y_ptr": "*fp32", "N": "i32"},
                  "constexprs": {}, "num_warps": 4, "grid": (1,)}
'''

DTYPES = {"float32": "fp32", "bfloat16": "bf16"}


def _write(tmp_path, read: str, dtype: str = "float32"):
    path = tmp_path / "slot_load.py"
    path.write_text(KERNEL.replace("SLOT_READ", read).replace("DTYPE", dtype)
                    .replace("PTR", DTYPES[dtype]))
    return path


def _consumer(path) -> str:
    src = gluon_source((str(path), "ring")).source
    start = src.index("def consume(")
    return src[start:src.index("@gluon.jit", start)]


@pytest.mark.parametrize("read,other", [
    ("tl.load(tle.gpu.local_ptr(x.slot.tile), mask=rows < 32, other=7.0)", "7.0"),
    ("tl.load(tle.gpu.local_ptr(x.slot.tile), rows < 32, 7.0)", "7.0"),
    ("tl.load(tle.gpu.local_ptr(x.slot.tile), mask=rows < 32)", "0"),
], ids=["keywords", "positional", "no-other"])
def test_the_mask_and_other_select_over_the_loaded_tile(tmp_path, read, other):
    cons = _consumer(_write(tmp_path, read))
    tile = re.search(r"(_v\d+) = a_tile\.index\(_a_s\d+\)\.load\(L\d+\)", cons)
    assert tile, cons
    sel = re.search(rf"(_v\d+) = gl\.where\(\(.*< 32\), {tile.group(1)}, {re.escape(other)}\)"
                    rf"\.to\(gl\.float32\)", cons)
    assert sel, cons
    assert f"v = {sel.group(1)}\n" in cons, cons


def test_an_unmasked_load_stays_the_tile(tmp_path):
    cons = _consumer(_write(tmp_path, "tl.load(tle.gpu.local_ptr(x.slot.tile))"))
    assert "gl.where" not in cons, cons


def test_it_compiles_to_a_select_with_other(tmp_path):
    """bf16 tile, fp32 other: the select is on the bf16 tile (other cast, as tl.load casts it)
    and the TTGIR selects between the loaded tile and the constant."""
    path = _write(tmp_path, "tl.load(tle.gpu.local_ptr(x.slot.tile), mask=rows < 32, other=7.0)",
                  "bfloat16")
    ttgir = compile_kernel((str(path), "ring"), {"x_ptr": "*bf16", "y_ptr": "*fp32",
                                                 "N": "i32"}).asm["ttgir"]
    sel = [ln for ln in ttgir.splitlines() if "arith.select" in ln]
    assert sel and all("x64xbf16" in ln for ln in sel), sel
    assert re.search(r"arith\.constant dense<7\.000000e\+00> : tensor<64x64xbf16", ttgir), ttgir


def test_other_without_mask_is_refused(tmp_path):
    path = _write(tmp_path, "tl.load(tle.gpu.local_ptr(x.slot.tile), other=7.0)")
    with pytest.raises(TleError, match="`other` without `mask`"):
        gluon_source((str(path), "ring"))
