"""16-byte global stores of a wgmma accumulator tile (``tl.store`` of a 16-bit tensor that is in
the NVMMA accumulator layout, e.g. a kernel's output tile; docs/lowering.md, "Accumulator stores").

In Hopper's wgmma accumulator layout a thread holds only two adjacent columns of a row per
8-column group (lane ``q = laneid % 4`` of a quad holds columns ``8j + 2q, 8j + 2q + 1`` of groups
``j = 0..3`` of every 32 columns). Triton stores such a tile with one 4-byte ``st.global`` per pair:
for a [64, 256] bf16 tile, 64 stores per thread, each warp instruction writing 16 bytes into each
of 8 rows. Converting to a row-contiguous layout first needs a shared-memory scratch buffer, which a
kernel that fills shared memory with pipe slots does not have. The four threads of a quad can
instead exchange their words directly: a 4 x 4 transpose of 32-bit words with two rounds of
``shfl.bfly`` leaves lane ``q`` with columns ``8q .. 8q + 7`` of its rows, one 16-byte
``st.global.v4``: 16 stores per thread instead of 64, and whole sectors. On the H200 this takes the
SparseMLA seesaw's consumer0 epilogue from 9,207 to 3,912 cycles (+3 to +6 % end to end for both
SparseMLA kernels).

The helper ``_tle_store_acc(ptrs, x)`` takes 16 elements per thread at a time (``pack=16``): the
first four register bits of the layout are column +1, row +8, column +8, column +16 (checked for
every NVMMA v3 layout with instr N >= 32 by Triton's linear layouts), so one pack is, per row half,
four words ``w[h + 2j]`` = columns ``8j + 2q + {0, 1}``. Lane q's destination, column ``8q`` of the
32-column block, is 12q bytes after its first element (whose address arrives as operand $16, and
that of row + 8 as $18) because the columns are contiguous, which the lowering checks on the source
(:func:`column_contiguous`); an address that is not 16-byte aligned at run time falls back to
eight 2-byte stores. The pointer's element type decides at compile time: a 16-bit element takes
this path, anything else a plain ``gl.store``.
"""

from __future__ import annotations

from typing import Optional

from ..ir import kernel as K


def _transpose_and_store(words: list[str], addr: str) -> list[str]:
    """PTX: quad-transpose the 4 words (group j = 0..3 of lane q) into t0..t3 (columns 8q..8q+7)
    and store them at ``addr`` (16 bytes, or 8 x 2 bytes when misaligned). Uses p1 = bit 0 of q,
    p2 = bit 1 of q, pa = ``addr`` 16-byte aligned."""
    out = [f"mov.b32 t{j}, {w};" for j, w in enumerate(words)]
    for m, pred, pairs in ((1, "p1", ((0, 1), (2, 3))), (2, "p2", ((0, 2), (1, 3)))):
        for x, y in pairs:
            # the lane with bit m set keeps word y and takes the partner's word y into x's place
            out += [f"selp.b32 s, t{x}, t{y}, {pred};",
                    f"shfl.sync.bfly.b32 r, s, {m}, 31, -1;",
                    f"selp.b32 t{x}, r, t{x}, {pred};",
                    f"selp.b32 t{y}, t{y}, r, {pred};"]
    out += [f"and.b64 m, {addr}, 15;", "setp.eq.u64 pa, m, 0;",
            f"@pa st.global.v4.b32 [{addr}], {{t0, t1, t2, t3}};"]
    for j in range(4):
        out += [f"mov.b32 {{h0, h1}}, t{j};",
                f"@!pa st.global.b16 [{addr}+{4 * j}], h0;",
                f"@!pa st.global.b16 [{addr}+{4 * j + 2}], h1;"]
    return out


def store_asm() -> str:
    """Operands: $0..$7 dummy outputs; $8..$15 the pack's 8 words (w = h + 2j); $16..$31 the 16
    elements' addresses (element 0: row r, column 8*0 + 2q; element 2: row r + 8)."""
    body = ["mov.u32 q, %laneid;", "and.b32 q, q, 3;",
            "and.b32 b, q, 1;", "setp.ne.u32 p1, b, 0;",
            "and.b32 b, q, 2;", "setp.ne.u32 p2, b, 0;",
            "mul.wide.u32 o, q, 12;", "add.u64 a0, $16, o;", "add.u64 a1, $18, o;"]
    body += _transpose_and_store(["$8", "$10", "$12", "$14"], "a0")   # row r
    body += _transpose_and_store(["$9", "$11", "$13", "$15"], "a1")   # row r + 8
    body += [f"mov.b32 ${i}, 0;" for i in range(8)]
    return ("{ .reg .u32 q, b, s, r, t0, t1, t2, t3; .reg .b16 h0, h1; "
            ".reg .pred p1, p2, pa; .reg .u64 a0, a1, o, m; " + " ".join(body) + " }")


def helpers_src() -> list[str]:
    cons = ",".join(["=r"] * 8 + ["r"] * 8 + ["l"] * 16)
    return [
        "@gluon.jit",
        "def _tle_store_acc(ptrs, x):",
        "    # tl.store of a wgmma-accumulator-layout tile: quad transpose + 16-byte stores for",
        "    # 16-bit elements (lowering/acc_store.py); otherwise a plain store",
        "    ety: gl.constexpr = ptrs.dtype.element_ty",
        "    if ety.primitive_bitwidth == 16:",
        "        y = x.to(ety)",
        f"        gl.inline_asm_elementwise({store_asm()!r},",
        f"                                  \"{cons}\", [y, ptrs.to(gl.int64, bitcast=True)],",
        "                                  dtype=y.dtype, is_pure=False, pack=16)",
        "    else:",
        "        gl.store(ptrs, x)",
        "",
        "",
    ]


def layout_qualifies(layout: tuple, shape: Optional[tuple]) -> bool:
    """An NVMMA v3 accumulator layout whose first register bits are col+1, row+8, col+8, col+16
    (instr N >= 32) over a 2-D shape it tiles exactly."""
    if not layout or layout[0] != "mma" or not shape or len(shape) != 2:
        return False
    (wm, wn), (im, n, _k) = layout[1], layout[2]
    M, N = shape
    return im == 16 and n >= 32 and n % 32 == 0 and M % (16 * wm) == 0 and N % (n * wn) == 0


def _terms(node: K.Expr) -> list[K.Expr]:
    if isinstance(node, K.BinOp) and node.op == "+":
        return _terms(node.lhs) + _terms(node.rhs)
    return [node]


def _is_index(sub: K.Subscript, pattern: tuple) -> bool:
    """``x[None, :]`` (pattern (None, ":")) or ``x[:, None]`` (pattern (":", None))."""
    return tuple(sub.index) == pattern


def column_contiguous(tr, ptr: K.Expr, n_cols: int) -> bool:
    """Whether the pointer expression is ``(column-invariant terms) + A[None, :]`` with ``A`` a
    ``tl.arange(0, n_cols)`` (directly or through a name assigned exactly once in the function,
    :func:`_is_full_arange`): then
    consecutive columns are consecutive elements. Column-invariant: scalars, constants and
    1-D tensors broadcast as ``x[:, None]`` (times scalars)."""
    terms = _terms(ptr)
    col = [t for t in terms if isinstance(t, K.Subscript) and _is_index(t, (None, ":"))]
    if len(col) != 1 or not _is_full_arange(tr, col[0].value, n_cols):
        return False
    return all(_column_invariant(tr, t) for t in terms if t is not col[0])


def _is_full_arange(tr, node: K.Expr, n: int) -> bool:
    """``tl.arange(0, n)`` itself, or a name assigned exactly once in the function, to it. The
    binding the walk holds for a name assigned more than once need not be the one that reaches
    the store: an ``if`` leaves the binding from before it (or the else branch's), and a loop
    body is walked once, with the binding from before the loop, although a rebinding later in
    the body reaches the store over the back-edge (``cols = (D - 1) - cols``). Such a name is
    not known to be contiguous, so its store stays a plain ``gl.store``."""
    if isinstance(node, K.Name):
        v = tr.env.get(node.id)
        if v is None or not isinstance(v.value, dict) or v.value.get("bounds") != (0, n):
            return False
        # "remat": translate.py binds a name assigned once to tl.arange so (assign)
        return v.kind == "remat" or (getattr(tr, "assign_counts", None) or {}).get(node.id) == 1
    if not (isinstance(node, K.Op) and node.name == "tl.arange" and len(node.args) == 2
            and not node.kwargs):
        return False
    lo, hi = (tr.ex(a) for a in node.args)
    return lo.kind == hi.kind == "const" and (lo.value, hi.value) == (0, n)


def _column_invariant(tr, node: K.Expr) -> bool:
    """No subexpression varies along the last dim: every tensor-valued name or call appears only
    under an ``[:, None]`` subscript."""
    if isinstance(node, K.Subscript):
        return _is_index(node, (":", None))
    if isinstance(node, (K.Const, K.Global)):
        return True
    if isinstance(node, K.Name):
        v = tr.env.get(node.id)
        return node.id in tr.ctx.consts if v is None else v.kind in ("const", "scalar")
    if isinstance(node, K.BinOp):
        return _column_invariant(tr, node.lhs) and _column_invariant(tr, node.rhs)
    if isinstance(node, K.UnaryOp):
        return _column_invariant(tr, node.operand)
    return False
