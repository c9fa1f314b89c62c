"""``tle.gpu.scale_rows(x, factor)``: ``x * factor[:, None]`` that costs (almost) nothing where the
factor is 1.

Why: an online softmax rescales its fp32 accumulator by ``exp2(m_old - m_new)`` per row whenever
the row max moves. With a lazy reference max (FlashAttention-4's trick, tle_kernels/sparse_mla_seesaw.py)
the factor is exactly 1 for almost every tile, but `acc * alpha[:, None]` still issues one FMUL per
accumulator element (128 per thread for a 64x256 tile). At the H200's power cap those instructions
cost energy, so time (a copy of the SparseMLA seesaw without its three O rescales, wrong by
design, ran 1.034x at SKV = 8K and 1.060x at 128K). A partition-wide `if any(alpha != 1)` skips
them but its cross-warp reduction (shared memory and two warp-group barriers) sits on the critical
path and costs about as much as it saves.

How: when ``x`` has a wgmma accumulator layout with one 16-row tile per warp (NVMMA v3, warps
[W, 1], M = 16 W), every register a thread holds belongs to its rows r and r + 8, and the registers
go (r, c), (r, c+1), (r+8, c), (r+8, c+1), ... (the layout fact lowering/acc_store.py also relies
on). An inline-asm block over ``pack`` such registers checks the factor of its first (row r) and
third (row r + 8) element, takes ``vote.sync.any`` over the warp, and branches around its FMULs
when no row of the warp needs one. The branch is warp-uniform; multiplying by exactly 1 is exact,
so skipping it changes no bit. Elsewhere (other layouts, other dtypes) it is the plain multiply.
"""

from __future__ import annotations

from typing import Optional

ONE_F32 = "0f3F800000"


def pack_for(layout: tuple, shape: Optional[tuple], dtype: Optional[str]) -> Optional[int]:
    """Elements per inline-asm block for ``x`` (None: use the plain multiply): fp32, an NVMMA v3
    layout with warps [W, 1] over exactly M = 16 W rows (one 16-row tile per warp). The caller
    also requires the product ``x * factor[:, None]`` to be of x's type as Triton promotes it (a
    float64 factor makes it float64)."""
    if dtype not in ("fp32", "float32") or not layout or layout[0] != "mma" or not shape:
        return None
    if len(shape) != 2:
        return None
    (wm, wn), (im, _n, _k) = layout[1], layout[2]
    M, N = shape
    if im != 16 or wn != 1 or M != 16 * wm or N % 8:
        return None
    per_thread = N // 2           # 16 rows x N columns over the warp's 32 threads
    return next(p for p in (32, 16, 8, 4) if per_thread % p == 0)


def helper_name(pack: int) -> str:
    return f"_tle_scale_rows_lazy{pack}"


def asm(pack: int) -> tuple[str, str]:
    """(PTX, constraints) of one block: outputs $0..$P-1 tied to the x inputs $P..$2P-1, the
    factors $2P..$3P-1 (row r at $2P, row r + 8 at $2P+2)."""
    f = 2 * pack
    body = [f"setp.neu.f32 p, ${f}, {ONE_F32};", f"setp.neu.f32 q, ${f + 2}, {ONE_F32};",
            "or.pred p, p, q;", "vote.sync.any.pred p, p, -1;", "@!p bra.uni SKIP;"]
    body += [f"mul.f32 ${i}, ${pack + i}, ${f + i};" for i in range(pack)]
    ptx = "{ .reg .pred p, q; " + " ".join(body) + " SKIP: }"
    constraints = ",".join(["=f"] * pack + [str(i) for i in range(pack)] + ["f"] * pack)
    return ptx, constraints


def helpers_src(packs) -> list[str]:
    """The @gluon.jit helpers for the packs in use."""
    out = []
    for p in sorted(packs):
        ptx, cons = asm(p)
        out += ["@gluon.jit",
                f"def {helper_name(p)}(x, factor):",
                "    # x * factor (factor broadcast over columns); a warp whose rows all have",
                "    # factor == 1 skips its multiplies (lowering/lazy_scale.py)",
                f"    return gl.inline_asm_elementwise({ptx!r},",
                f"                                     {cons!r},",
                f"                                     [x, factor], dtype=gl.float32, is_pure=True,"
                f" pack={p})",
                "", ""]
    return out
