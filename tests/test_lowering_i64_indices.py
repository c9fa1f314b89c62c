"""Pipe events on i64 indices lower to code Triton compiles, with the verified barrier operations.

A loop over ``range(N.to(tl.int64))`` gives an i64 loop variable; Gluon's ``.index(...)`` of a
ring or barrier array and ``mbarrier.wait``'s phase take an i32. The verifier checks the index
inside i32, so the lowering computes the stage and the parity from the i64 index and casts them to
i32 (lowering/pipes.py); an i32 index is spelled as before (tests/test_golden_gluon.py holds the
bundled kernels' text).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("triton.experimental.gluon")

from tle_compiler.lowering import compile_kernel  # noqa: E402
from tle_compiler.lowering.compile import gluon_source, kernel_info_of  # noqa: E402
from tle_compiler.testing.gluon_trace import LoweredKernel  # noqa: E402

from .test_kernels import kernel_copy  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

SIG = {"x_ptr": "*fp32", "out_ptr": "*fp32", "stride_x": "i32", "N_TILES": "i32"}
CAST = ".to(gl.int32)"

#: both loops of the example ring over an i64 trip count
RING_I64 = [("for t in tl.range(0, N_TILES):", "for t in tl.range(0, N_TILES.to(tl.int64)):"),
            ("for t in range(N_TILES):", "for t in range(N_TILES.to(tl.int64)):")]
#: i64 indices computed in the partitions (loops over the i32 trip count)
PARTITION_I64 = [
    ("        slot = w.acquire(t)\n", "        i64 = t.to(tl.int64)\n        slot = w.acquire(i64 + 1 - 1)\n"),
    ("        w.commit(t)\n", "        w.commit(i64)\n"),
    ("        res = r.wait(t)\n", "        u = t.to(tl.int64) + 1\n        res = r.wait(u - 1)\n"),
    ("last = r.wait(N_TILES)", "last = r.wait(N_TILES.to(tl.int64))"),
    ("w.close(N_TILES)", "w.close(N_TILES.to(tl.int64))"),
]


def _ring(tmp_path: Path, name: str, edits) -> tuple[str, str]:
    return str(kernel_copy("examples/ring", tmp_path / f"{name}.py", edits)), "ring_sum"


def _source(kernel) -> str:
    return gluon_source(kernel_info_of(kernel, {}), {}).source


def _event_lines(src: str) -> list[str]:
    """The generated lines that compute a stage or wait on a barrier."""
    return [ln.strip() for ln in src.splitlines()
            if re.match(r"\s*_ring_s\d+ = ", ln) or "mbarrier.wait(" in ln]


def _uncast(src: str) -> str:
    """``src`` with every ``(X).to(gl.int32)`` written ``X``."""
    while CAST in src:
        end = src.index(CAST)
        assert src[end - 1] == ")"
        depth, i = 0, end - 1
        while True:
            depth += {")": 1, "(": -1}.get(src[i], 0)
            if depth == 0:
                break
            i -= 1
        src = src[:i] + src[i + 1:end - 1] + src[end + len(CAST):]
    return src


def test_i64_loops_compile_for_sm90a(tmp_path):
    c = compile_kernel(_ring(tmp_path, "ring_i64", RING_I64), SIG)
    assert ".target sm_90a" in c.asm["ptx"] and c.asm["cubin"]
    src = c.tle_generated.source
    assert "range(N_TILES.to(gl.int64))" in src


def test_i64_casts_only_the_stages_and_parities_of_i64_indices(tmp_path):
    plain = _source(_ring(tmp_path, "ring_i32", ()))
    wide = _source(_ring(tmp_path, "ring_i64", RING_I64))
    assert CAST not in plain
    lines = _event_lines(wide)
    # inside the loops (index t, i64): every stage and parity is cast; the close and the last
    # wait on N_TILES (i32) are not
    on_t = [ln for ln in lines if "(t)" in ln]
    on_n = [ln for ln in lines if "(N_TILES)" in ln]
    assert on_t and on_n
    assert all(ln.count(CAST) == 1 for ln in on_t), on_t
    assert not any(CAST in ln for ln in on_n), on_n
    assert "_ring_s1 = ((t) % 3).to(gl.int32)" in wide
    assert "mbarrier.wait(ring_full0.index(_ring_s1), (((t) // 3) & 1).to(gl.int32))" in wide
    assert "mbarrier.wait(ring_empty0.index(_ring_s1), ((((t) // 3) & 1) ^ 1).to(gl.int32))" in wide
    # apart from the casts and the loop bounds, the i32 kernel's text
    stripped = _uncast(wide).replace("N_TILES.to(gl.int64)", "N_TILES")
    assert stripped.replace("ring_i64.py", "ring_i32.py") == plain


def test_i64_indices_computed_in_partitions_compile(tmp_path):
    kernel = _ring(tmp_path, "ring_part_i64", PARTITION_I64)
    c = compile_kernel(kernel, SIG)
    assert ".target sm_90a" in c.asm["ptx"]
    src = c.tle_generated.source
    assert "_ring_s1 = ((((i64 + 1) - 1)) % 3).to(gl.int32)" in src
    assert "_ring_s2 = ((i64) % 3).to(gl.int32)" in src
    # the close and the wait on the closing slot: the closed flag is read and written at the
    # cast stage
    assert "_ring_s3 = ((N_TILES.to(gl.int64)) % 3).to(gl.int32)" in src
    assert "ring_closed.index(_ring_s3).store(" in src
    assert "_ring_s4 = ((N_TILES.to(gl.int64)) % 3).to(gl.int32)" in src
    assert "gl.max(ring_closed.index(_ring_s4).load(" in src
    # the releases on t and N_TILES (i32) stay as they were
    assert "_ring_s3 = (t) % 3\n" in src and "_ring_s6 = (N_TILES) % 3\n" in src


def test_i32_index_of_an_i64_value_is_not_cast(tmp_path):
    """``x.to(tl.int32)`` of an i64 value is i32 again: nothing to cast."""
    edits = [("        slot = w.acquire(t)\n",
              "        k = t.to(tl.int64).to(tl.int32)\n        slot = w.acquire(k)\n")]
    src = _source(_ring(tmp_path, "ring_narrowed", edits))
    assert "k = t.to(gl.int64).to(gl.int32)" in src
    assert not any(CAST in ln for ln in _event_lines(src))
    assert "_ring_s1 = (k) % 3\n" in src


@pytest.mark.parametrize("edits", [RING_I64, PARTITION_I64], ids=["i64-loops", "i64-in-partitions"])
def test_i64_lowering_emits_the_verified_barrier_operations(tmp_path, edits):
    """The lowered-events oracle (testing/gluon_trace.py): each partition's mbarrier waits and
    arrives, stages and parities included, are the verified events' for several trip counts."""
    lk = LoweredKernel(_ring(tmp_path, "ring_oracle", edits), {})
    for n in (0, 1, 2, 3, 5, 7):
        params, problems = lk.check({"N_TILES": n, "stride_x": 64})
        assert params == {"N_TILES": n}
        assert not problems, f"N_TILES={n}: {problems}"


TMA_I64 = [("""    w = ring.writer()
    for t in range(N_TILES):
        slot = w.acquire(t)
        tle.gpu.tma_load(slot.tile, x_desc, [(first + t) * BM, COL0])
        w.commit(t)
""", """    w = ring.writer()
    for t in range(N_TILES.to(tl.int64)):
        slot = w.acquire(t)
        tle.gpu.tma_load(slot.tile, x_desc, [(first + t) * BM, COL0])
        w.commit(t)
""")]


def test_i64_tma_coordinates_are_cast(tmp_path):
    """A TMA copy's coordinates are i32 (Gluon refuses an i64 one): ``(first + t) * BM`` on an
    i64 ``t`` is cast, the i32 ``COL0`` is not; the copy and the commit complete on the stage's
    full barrier as verified."""
    from tle_compiler.lowering.dumping import default_config

    path = str(kernel_copy("gpu_tests/tma_ring", tmp_path / "tma_i64.py", TMA_I64))
    cfg = default_config(path, "tma_ring")
    c = compile_kernel((path, "tma_ring"), cfg["signature"], cfg.get("constexprs", {}))
    assert ".target sm_90a" in c.asm["ptx"]
    src = c.tle_generated.source
    x = "(((first + t) * BM))"
    assert (f"tma.async_copy_global_to_shared(x_desc, [gl.where(({x} < -2147483648) | ({x} > "
            f"2147483647), -2147483648, {x}).to(gl.int32), COL0], "
            "ring_full0.index(_ring_s1), ring_tile.index(_ring_s1))") in src
    lk = LoweredKernel((path, "tma_ring"), {})
    for n in (0, 1, 2, 3, 5):
        params, problems = lk.check({"N_TILES": n, "stride_y": 256, "COL0": 0})
        assert params == {"N_TILES": n}
        assert not problems, f"N_TILES={n}: {problems}"


def test_i64_tma_coordinate_arguments_outside_i32_become_a_box_before_the_tensor():
    """A coordinate argument typed i64 (a launch value of 2^31 or more in magnitude) is replaced
    by -2^31 when it lies outside i32, in the Gluon source and in the PTX (a 64-bit range test
    selecting -2^31 before the copy): a plain cast would wrap 2^32 + c onto c and copy real data
    into the slot, and a clamp to 2^31 - 1 faults on the H200 (the box's end overflows).
    tests/gpu/test_tma_ring.py runs it."""
    from tle_compiler.lowering.dumping import default_config

    path = str(ROOT / "tle_kernels" / "gpu_tests" / "tma_ring.py")
    cfg = default_config(path, "tma_ring")
    sig = dict(cfg["signature"], COL0="i64")
    c = compile_kernel((path, "tma_ring"), sig, cfg.get("constexprs", {}))
    src = c.tle_generated.source
    assert ("[((first + t) * BM), gl.where(((COL0) < -2147483648) | ((COL0) > 2147483647), "
            "-2147483648, (COL0)).to(gl.int32)]") in src
    assert re.search(r"selp\.b32\s+%r\d+, -2147483648, %r\d+, %p\d+;", c.asm["ptx"])


@pytest.mark.parametrize("literal, clamped", [(2**32, -2**31), (-2**32 - 64, -2**31)])
def test_tma_coordinate_literals_outside_i32_become_a_box_before_the_tensor(tmp_path, literal, clamped):
    """An integer literal coordinate outside i32 is written as -2^31 (Triton would type it i64 or
    u32, which the copy refuses): its box stays outside the tensor."""
    src_copy = "tle.gpu.tma_load(slot.tile, x_desc, [(first + t) * BM, COL0])\n        w.commit(t)"
    path = str(kernel_copy("gpu_tests/tma_ring", tmp_path / "tma_lit.py",
                           [(src_copy, src_copy.replace("COL0", str(literal)))]))
    from tle_compiler.lowering.dumping import default_config

    cfg = default_config(path, "tma_ring")
    c = compile_kernel((path, "tma_ring"), cfg["signature"], cfg.get("constexprs", {}))
    assert f"[((first + t) * BM), {clamped}]" in c.tle_generated.source


def test_i64_ring_with_debug_waits_compiles(tmp_path):
    """Debug waits (lowering/debug.py) pass the stage and parity to an inline-asm try-wait of i32
    operands."""
    c = compile_kernel(_ring(tmp_path, "ring_i64_debug", RING_I64), SIG, debug_waits=True)
    src = c.tle_generated.source
    assert "_tle_try_wait(" in src and "mbarrier.wait(" not in src
    assert ".target sm_90a" in c.asm["ptx"]
