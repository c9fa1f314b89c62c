"""``@tle.jit(row_reduce_tree=True)`` (tle_compiler/lowering/row_reduce.py): an fp32 row
reduction of a wgmma accumulator lowers to a tree over the register-held column bits instead of
Triton's in-order chain. What is checked on the CPU: which reductions take the tree, the helpers
it emits, that the bundled seesaw decode compiled with the option reduces its score rows with a
dependency depth of a tree in SASS (the plain lowering's is a chain of 15 and more), and that the
tree moves no data (the same shuffles and shared-memory accesses, the same FMNMX count, no
spills). Its results on the GPU: tests/gpu/test_row_reduce_tree.py."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from tle_compiler.lowering.row_reduce import helper_name, helpers_src, tree_levels

ROOT = Path(__file__).resolve().parents[1]
SEESAW = ROOT / "tle_kernels" / "mla_decode_seesaw.py"
MMA64 = ("mma", (4, 1), (16, 64, 16))
MMA256 = ("mma", (4, 1), (16, 256, 16))


def test_which_reductions_take_the_tree():
    assert tree_levels(MMA64, (64, 64), 1, "fp32") == 3       # 64 -> 32 -> 16 -> 8
    assert tree_levels(MMA256, (64, 256), 1, "fp32") == 5
    assert tree_levels(MMA64, (128, 64), 1, "fp32") == 3      # two 16-row tiles per warp
    assert tree_levels(MMA64, (64, 16), 1, "fp32") == 1
    assert tree_levels(MMA64, (64, 8), 1, "fp32") == 0        # nothing above the lane bits
    assert tree_levels(MMA64, (64, 64), 0, "fp32") == 0       # down the columns: lanes, warps
    assert tree_levels(MMA64, (64, 64), 1, "bf16") == 0
    assert tree_levels(MMA64, (64, 48), 1, "fp32") == 0       # not a power of two
    assert tree_levels(("mma", (2, 2), (16, 64, 16)), (64, 64), 1, "fp32") == 0
    assert tree_levels(("blocked", (1, 8), (4, 8), (4, 1), (1, 0)), (64, 64), 1, "fp32") == 0
    assert tree_levels(MMA64, (64,), 1, "fp32") == 0


def test_helpers_halve_the_columns_down_to_the_lane_bits():
    src = "\n".join(helpers_src({("max", 64, 64), ("sum", 64, 256)}))
    assert helper_name("max", 64, 64) == "_tle_row_max_64x64"
    assert re.findall(r"gl\.max\(gl\.reshape\(y, \[64, 2, (\d+)\]\), 1\)", src) == ["32", "16", "8"]
    assert re.findall(r"gl\.sum\(gl\.reshape\(y, \[64, 2, (\d+)\]\), 1\)", src) == \
        ["128", "64", "32", "16", "8"]
    assert src.count("return gl.convert_layout(") == 2


def seesaw_with_tree(tmp_path: Path, on: bool) -> Path:
    """The bundled seesaw decode with the option set (or not), beside its own imports."""
    src = SEESAW.read_text()
    deco = "@tle.jit(num_warps=4, wgmma_pipeline=True)"
    assert src.count(deco) == 1
    if on:
        src = src.replace(deco, "@tle.jit(num_warps=4, wgmma_pipeline=True, row_reduce_tree=True)")
    src = re.sub(r"from \.(\w+) import", r"from tle_kernels.\1 import", src)
    path = tmp_path / ("tree.py" if on else "plain.py")
    path.write_text(src)
    return path


def gluon_of(path: Path) -> str:
    from tle_compiler.lowering.compile import gluon_source
    import tle_kernels.mla_decode_seesaw as mod

    ce = dict(mod.DEFAULT_CONFIG["constexprs"], TMA=1, BALANCE=0)
    return gluon_source((str(path), "mla_decode_seesaw"), ce, debug_waits=False).source


def test_the_option_turns_the_score_row_reductions_into_trees(tmp_path):
    tree = gluon_of(seesaw_with_tree(tmp_path, True))
    plain = gluon_of(seesaw_with_tree(tmp_path, False))
    # both consumers' row max of S and row sum of P
    # (a name a helper binds is spelt with the helper's prefix once inlined: _update090_p0)
    reduced = [(f, re.sub(r"^_[a-z]+\d+_", "", x))
               for f, x in re.findall(r"= \(?(_tle_row_\w+)\((\w+), L\d+\)", tree)]
    assert reduced == [
        ("_tle_row_max_64x64", "s"), ("_tle_row_sum_64x64", "p0"),
        ("_tle_row_max_64x64", "s"), ("_tle_row_sum_64x64", "p1")]
    assert "def _tle_row_max_64x64(" in tree and "def _tle_row_sum_64x64(" in tree
    assert "_tle_row_" not in plain
    assert plain.count("gl.max(s, 1)") == 2
    # the schedule's reductions (1-D, or blocked layouts) keep Triton's own
    assert tree.count("gl.sum(_part_range") == plain.count("gl.sum(_part_range")


def max_fmnmx_depth(sass: str) -> int:
    """The longest chain of FMNMX instructions each reading the previous one's result, in
    program order (a register written by anything else starts again at 0)."""
    depth: dict[str, int] = {}
    best = 0
    for line in sass.splitlines():
        m = re.search(r"/\*[0-9a-f]{4,5}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][\w.]*)\s+([^;]*);", line)
        if not m:
            continue
        op, operands = m.group(1), [o.strip() for o in m.group(2).split(",")]
        dst = operands[0] if operands and re.fullmatch(r"R\d+", operands[0]) else None
        if op.startswith("FMNMX") and dst:
            d = 1 + max((depth.get(o, 0) for o in operands[1:]), default=0)
            depth[dst] = d
            best = max(best, d)
        elif dst:
            depth[dst] = 0
    return best


def test_the_tree_shortens_the_chain_and_moves_no_data(tmp_path):
    pytest.importorskip("triton.experimental.gluon")
    import triton

    from tle_compiler.lowering import compile_kernel, ptxas_stats
    import tle_kernels.mla_decode_seesaw as mod

    cuobjdump = Path(os.path.dirname(triton.__file__)) / "backends" / "nvidia" / "bin" / "cuobjdump"
    if not cuobjdump.exists():
        pytest.skip("no cuobjdump in this Triton install")
    ce = dict(mod.DEFAULT_CONFIG["constexprs"], TMA=1, BALANCE=0)
    got = {}
    for on in (False, True):
        c = compile_kernel((str(seesaw_with_tree(tmp_path, on)), "mla_decode_seesaw"),
                           mod.DEFAULT_CONFIG["signature"], ce)
        st = ptxas_stats(c)
        assert st["ok"] and (st["spill_stores"], st["spill_loads"]) == (0, 0), st["log"]
        cubin = tmp_path / f"k{int(on)}.cubin"
        cubin.write_bytes(c.asm["cubin"])
        sass = subprocess.run([str(cuobjdump), "-sass", str(cubin)], capture_output=True,
                              text=True, check=True).stdout
        got[on] = dict(depth=max_fmnmx_depth(sass), fmnmx=sass.count("FMNMX"),
                       shfl=sass.count("SHFL"), smem=len(re.findall(r"\b(?:LDS|STS)\b", sass)))
    plain, tree = got[False], got[True]
    assert plain["depth"] >= 15, plain   # 16 values of a row in order, then the shuffles
    assert tree["depth"] <= 7, tree      # 3 halvings + the last pair + the two shuffle steps
    assert (tree["fmnmx"], tree["shfl"], tree["smem"]) == \
        (plain["fmnmx"], plain["shfl"], plain["smem"])
