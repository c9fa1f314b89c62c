"""The CPU emulator (tle_compiler/testing/emulator.py) runs a kernel file as a module of its
package: relative and absolute imports of the package's modules resolve as in Python, and those
modules run against the same emulated language (their ``tl`` is the emulation, not Triton's)."""

from __future__ import annotations

import textwrap

import pytest

torch = pytest.importorskip("torch")

from tle_compiler.testing.emulator import load_kernel_module  # noqa: E402

COMMON = '''
import triton.language as tl
from . import consts
from .consts import BK

SHIFT = tl.constexpr(consts.BASE * 2)


def offsets(t):
    return t * BK + tl.arange(0, BK)


def bump(v):
    return v + SHIFT
'''

KERNEL = '''
import triton.language as tl

import tle_compiler as tle
from . import common
from .common import BK, offsets as offs
import {pkg}.consts as c


@tle.jit(num_warps=4)
def k(x_ptr, y_ptr, N):
    ring = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, BK], tl.float32))
    tle.gpu.warp_specialize([(produce, (ring, x_ptr, N)), (consume, (ring, y_ptr, N))], [4], [232])


def produce(ring, x_ptr, N):
    w = ring.writer()
    for t in range(N):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + offs(t)))
        w.commit(t)


def consume(ring, y_ptr, N):
    r = ring.reader()
    for t in range(N):
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t)
        tl.store(y_ptr + offs(t), common.bump(v) * c.SCALE)
'''


def write(tmp_path, pkg="pkg"):
    d = tmp_path / pkg
    d.mkdir()
    (d / "__init__.py").write_text("raise RuntimeError('a package __init__ is not run')\n")
    (d / "consts.py").write_text("import triton.language as tl\nBK = tl.constexpr(4)\n"
                                 "BASE = tl.constexpr(5)\nSCALE = tl.constexpr(3.0)\n"
                                 "from . import common  # circular: common imports consts\n")
    (d / "common.py").write_text(textwrap.dedent(COMMON))
    path = d / "kern.py"
    path.write_text(KERNEL.format(pkg=pkg))
    return path


def test_a_kernel_importing_from_its_package_runs_emulated(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = load_kernel_module(write(tmp_path))
    n = 3
    x = torch.arange(n * 4, dtype=torch.float32)
    y = torch.full((n * 4,), float("nan"))
    mod.k[(1,)](x, y, n)
    assert torch.equal(y, (x + 10) * 3)
    # one emulated module per file, whichever import reached it; its tl is the emulation
    assert mod.common.consts is mod.c
    assert mod.tl is mod.common.tl and type(mod.tl).__name__ == "SimpleNamespace"
    assert mod.BK == 4 and mod.common.SHIFT == 10


def test_relative_imports_need_a_package(tmp_path):
    path = tmp_path / "loose.py"
    path.write_text("from .common import x\n")
    with pytest.raises(ImportError, match="no known parent package"):
        load_kernel_module(path)
