"""Row reductions of a wgmma accumulator as a tree (``@tle.jit(..., row_reduce_tree=True)``).

Why: an online softmax reduces every score tile along its rows twice (``tl.max(s, 1)`` for the
running max, ``tl.sum(p, 1)`` for the row sum), and in the seesaw schedules one consumer's row
max is what the other consumer waits for. Triton reduces the elements a thread holds in order,
so a thread's 16 values of a row of a 64 x 64 tile become a chain of 15 dependent FMNMX (or FADD)
before the two shuffle steps across the row's four lanes.

How: in a wgmma accumulator layout (NVMMA v3, warps [W, 1]) a thread holds, for each of its rows,
the column pairs (8j + 2t, 8j + 2t + 1), t = lane % 4: column bit 0 and every column bit from 3
up are register bits, bits 1 and 2 lane bits (the layout fact lowering/lazy_scale.py and
lowering/acc_store.py rely on too). Reshaping [M, N] to [M, 2, N / 2] splits off the top column
bit, a register bit, without moving an element, and reducing that axis of size 2 is one
independent instruction per pair. Repeating it down to N = 8 and reducing the rest as before gives
a tree of depth log2(N) - 2 in registers (4 for N = 64, FlashMLA's depth) with the same number of
instructions; the result is converted to the layout the plain reduction would have had, which is
the same linear layout, so the conversion moves nothing. A sum adds in another order (so its last
bits may differ from the plain reduction's); a max or min is exact either way.

Only fp32 reductions along axis 1 of a 2-D tensor in such a layout take the tree; everything else
keeps ``gl.max`` / ``gl.min`` / ``gl.sum``.
"""

from __future__ import annotations

from typing import Optional

#: the reductions a tree can take (Triton's ``gl.<name>``)
TREE_OPS = ("max", "min", "sum")


def tree_levels(layout: tuple, shape: Optional[tuple], axis: int, dtype: Optional[str]) -> int:
    """How many register-bit halvings the row reduction of ``shape`` in ``layout`` along
    ``axis`` takes (0: the plain reduction): fp32, axis 1 of a 2-D tensor, an NVMMA v3 layout
    with warps [W, 1] over 16-row tiles, N a power of two >= 16 (one level per column bit above
    bit 2)."""
    if dtype not in ("fp32", "float32") or axis != 1 or not shape or len(shape) != 2:
        return 0
    if not layout or layout[0] != "mma":
        return 0
    (wm, wn), (im, _n, _k) = layout[1], layout[2]
    M, N = shape
    if im != 16 or wn != 1 or M % (16 * wm) or N < 16 or N & (N - 1):
        return 0
    return N.bit_length() - 1 - 3  # log2(N) - 3 register bits above bit 2


def helper_name(op: str, M: int, N: int) -> str:
    return f"_tle_row_{op}_{M}x{N}"


def helpers_src(used) -> list[str]:
    """The @gluon.jit helpers for the (op, M, N) in use: ``helper(x, OUT)`` is ``gl.<op>(x, 1)``
    in the layout ``OUT`` (the plain reduction's), reduced as a tree over the register bits."""
    out = []
    for op, M, N in sorted(used):
        body = ["    y = x"]
        width = N
        while width > 8:
            width //= 2
            body.append(f"    y = gl.{op}(gl.reshape(y, [{M}, 2, {width}]), 1)")
        out += ["@gluon.jit",
                f"def {helper_name(op, M, N)}(x, OUT: gl.constexpr):",
                f"    # gl.{op}(x, 1) of a [{M}, {N}] wgmma accumulator: pairs of register-held",
                "    # columns first, a tree instead of a chain (lowering/row_reduce.py)",
                *body,
                f"    return gl.convert_layout(gl.{op}(y, 1), OUT)",
                "", ""]
    return out
