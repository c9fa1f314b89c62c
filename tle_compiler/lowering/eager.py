"""Eager publish (``@tle.jit(..., eager_publish=True)``; docs/lowering.md, "Eager publish").

Two changes to how the lowering arrives on the mbarriers of register-filled slots and releases:

1. **Per-thread release arrives.** Gluon's ``mbarrier.arrive`` is one elected thread, and Triton's
   shared-memory barrier pass brackets every such arrive with a partition-wide ``bar.sync`` (before:
   the other threads' stores must be done; after: it treats the arrive as touching all of shared
   memory). Here every thread of the arriving partition executes
   ``mbarrier.arrive.release.cta.shared::cta.b64`` itself (release semantics order its own earlier
   stores and reads), so no ``bar.sync`` is needed and the barrier's count is scaled by the
   partition's threads (plan.init_count, modes "eager" / "eager-mixed"). Gluon 3.6 cannot hand a
   barrier to inline asm, so its address is ``global_smem`` + the offset Triton's allocator gives
   the barrier array, read from a first compile and baked into the second (as debug waits do;
   compile.py checks that the allocation did not move).

2. **Publish before the work that follows.** ptxas schedules a partition's instructions by the
   length of the dependence chain behind them; an arrive has nothing behind it, so ptxas sinks a
   commit's arrive below the independent work that follows in program order (in the SparseMLA
   seesaw, consumer0's m0 went out after all 32 ``exp2`` of its softmax, and consumer1 waited for
   it). After a commit, the small row vectors (one fp32 value per row, two per thread: running
   maxima, sums, scale factors) that the rest of the function reads are passed through the
   arrive's result — ``popc(state) >> 6`` is 0 for any state, which ptxas does not fold — so the
   work that reads them cannot start before the arrive issued. Cost: an ``or`` per element and a
   ``popc``/``shr`` per laundered vector.

Only barrier arrays whose arriving partitions all have the same warp count are eager (their count
scales by one thread number); others keep the elected arrive.
"""

from __future__ import annotations

from .debug import offset_const

# %0,%1 (out) = %2,%3 (a row vector's two elements per thread), with a data dependency on the
# arrive on the mbarrier at global_smem + %4 (the same offset in %5).
_ARRIVE_X_ASM = ("{ .reg .u64 st; .reg .u32 a, t; mov.u32 a, global_smem; add.u32 a, a, $4; "
                 "mbarrier.arrive.release.cta.shared::cta.b64 st, [a]; cvt.u32.u64 t, st; "
                 "popc.b32 t, t; shr.u32 t, t, 6; or.b32 $0, $2, t; or.b32 $1, $3, t; }")
# %0,%1 (out) = %2,%3, with a data dependency on %4 (an already laundered value of the same layout)
_LAUNDER_ASM = ("{ .reg .u32 t; popc.b32 t, $4; shr.u32 t, t, 6; or.b32 $0, $2, t; "
                "or.b32 $1, $3, t; }")
_ARRIVE_ASM = ("{ .reg .u32 a; mov.u32 a, global_smem; add.u32 a, a, $1; "
               "mbarrier.arrive.release.cta.shared::cta.b64 _, [a]; mov.u32 $0, 0; }")


def helpers_src(warps: set[int]) -> list[str]:
    """Module-level Gluon helpers: ``_tle_arrive_w<W>(off)`` per warp count W of an eager
    partition (one arrive per thread: a [32·W] tensor with one element per thread),
    ``_tle_arrive_x(off, x)`` and ``_tle_launder(y, x)`` (row vectors with two elements per
    thread: pack=2, one asm per thread)."""
    out = []
    for w in sorted(warps):
        out += [
            "@gluon.jit",
            f"def _tle_arrive_w{w}(off):",
            "    # every thread arrives once, with release semantics (eager publish, lowering/eager.py)",
            f"    L: gl.constexpr = gl.BlockedLayout([1], [32], [{w}], [0])",
            f"    gl.inline_asm_elementwise({_ARRIVE_ASM!r}, \"=r,r\",",
            f"                              [gl.full([{32 * w}], 0, gl.int32, layout=L) + off],",
            "                              dtype=gl.int32, is_pure=False, pack=1)",
            "",
            "",
        ]
    out += [
        "@gluon.jit",
        "def _tle_arrive_x(off, x):",
        "    # arrive (every thread, once) and return x through a dependency on the arrive's result",
        "    o = gl.full_like(x, 0, dtype=gl.int32) + off",
        f"    return gl.inline_asm_elementwise({_ARRIVE_X_ASM!r}, \"=r,=r,r,r,r,r\", [x, o],",
        "                                     dtype=gl.float32, is_pure=False, pack=2)",
        "",
        "",
        "@gluon.jit",
        "def _tle_launder(y, x):",
        "    # y, with a data dependency on x (a value returned by _tle_arrive_x)",
        f"    return gl.inline_asm_elementwise({_LAUNDER_ASM!r}, \"=r,=r,r,r,r,r\", [y, x],",
        "                                     dtype=gl.float32, is_pure=False, pack=2)",
        "",
        "",
    ]
    return out


def is_row_vector(tr, v) -> bool:
    """An fp32 vector whose layout gives each thread exactly two elements: a slice (dim 1) of a
    wgmma accumulator layout over M = 16·warps rows (a row max/sum of a [M, N] tile)."""
    if v.kind != "tensor" or v.shape is None or len(v.shape) != 1 or v.dtype != "float32":
        return False
    if not v.text.isidentifier() or tr.is_pending(v):
        return False
    lay = tr.S.layout(v.var)
    if lay[0] != "slice" or lay[1] != 1 or lay[2][0] != "mma":
        return False
    warps_m = lay[2][1][0]
    return isinstance(v.shape[0], int) and v.shape[0] == 16 * warps_m


def _address(var: str, stage: str) -> str:
    """The shared-memory offset of stage ``stage`` of barrier array ``var`` (8 bytes a barrier)."""
    return f"{offset_const(var)} + ({stage}) * 8"


def emit_release_arrive(tr, var: str, stage: str) -> None:
    tr.emit(f"_tle_arrive_w{tr.warps}({_address(var, stage)})")


def emit_publish(tr, var: str, stage: str) -> None:
    """A commit's arrive: per thread, and the row vectors read after it laundered through it."""
    if not tr.emitting:
        return
    later = tr.later_names()
    rows = [n for n in sorted(later) if n in tr.env and is_row_vector(tr, tr.env[n])]
    if not rows:
        emit_release_arrive(tr, var, stage)
        return
    first = tr.env[rows[0]].text
    tr.emit(f"{first} = _tle_arrive_x({_address(var, stage)}, {first})  # eager publish: "
            f"{', '.join(rows)} wait for the arrive")
    for n in rows[1:]:
        t = tr.env[n].text
        tr.emit(f"{t} = _tle_launder({t}, {first})")
