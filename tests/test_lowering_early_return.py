"""A `return` in the kernel prologue (the grid guard `if pid >= N_PROG: return`, before
tle.gpu.warp_specialize) is lowered as a return. It was lowered as `pass`: the prologue's
statements are no block frame of the translator, so the return, the last statement of its `if`
block, was read as the function's last statement, which emits nothing; every program ran the
partitions, and those past the guard wrote outside their output. The verifier was right either
way (no partition event is skipped by a return before the partitions start), the kernel was not.
tests/gpu/test_early_return.py runs it."""

from __future__ import annotations

import re
from pathlib import Path

from tle_compiler.lowering import compile_kernel, gluon_source
from tle_compiler.lowering.compile import kernel_info_of
from tle_compiler.lowering.dumping import default_config

KERNEL = str(Path(__file__).parent / "gpu" / "early_return_kernel.py")


def _source() -> str:
    return gluon_source((KERNEL, "guarded_ring_sum")).source


def test_the_guard_returns_in_the_generated_gluon():
    src = _source()
    m = re.search(r"\n    if \(pid >= N_PROG\):\n        (\w+)\n", src)
    assert m is not None, src
    assert m.group(1) == "return"
    # the guard comes before the shared memory and the partitions
    assert src.index("if (pid >= N_PROG)") < src.index("allocate_shared_memory")
    assert src.index("if (pid >= N_PROG)") < src.index("gl.warp_specialize")


def test_the_guard_is_the_only_return():
    # nothing else returns: the partitions end where their functions end
    src = _source()
    assert len(re.findall(r"^\s+return\s*$", src, re.M)) == 1, src


def test_the_guarded_kernel_compiles_for_sm90():
    cfg = default_config(KERNEL, "guarded_ring_sum")
    c = compile_kernel(kernel_info_of((KERNEL, "guarded_ring_sum")), cfg["signature"],
                       cfg.get("constexprs", {}), num_warps=cfg.get("num_warps"))
    ptx = c.asm["ptx"]
    assert "mbarrier" in ptx
    # the guard: a compare of the program id with N_PROG that branches around the partitions
    assert re.search(r"setp\.\w+\.s32", ptx)
