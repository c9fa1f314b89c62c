"""A/B of the FP8 sparse decode's dequantization: the kernels as they are ("base": each value
fp8 -> f16 -> f32, times its fp32 scale, -> bf16; the f32 -> bf16 conversion runs at a quarter of
the integer rate on Hopper) against "bits", whose lowered Gluon dequantizes with integer
operations and bf16 products instead:

    an e4m3 byte s.eeee.mmm placed as the bf16 bits s.0000eeee.mmm0000 is its value times 2^-120
    exactly (normal and subnormal bytes alike); that times bf16(scale * 2^100), times 2^20, is
    bf16(value * scale) exactly when the scale is a power of two in [2^-97, 2^28) (the cache's
    scales are powers of two: tle_kernels/fp8_kvcache.py), and bf16(value * bf16(scale)) for other
    scales (FlashMLA's numerics). An e4m3 NaN byte (0x7f / 0xff) reads as +-480 * scale.

Four bytes per inline-PTX call (Gluon packs an fp8 tile's elements four to a register): two
byte permutes, two masks, two shifts and two ORs give two bf16x2 words, then two bf16x2 products
each. Every variant runs in one process with FlashMLA; each is checked against the fp32
reference, then timed as CUDA-graph replays, interleaved, medians of ``--reps`` rounds.

    python3 benchmarks/ab_fp8_dequant.py [--variants base bits] [--anchor LIB] [--reps 5]
    python3 benchmarks/ab_fp8_dequant.py --cpu      # ptxas report and instruction counts only
"""
import re
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import ab_fp8_load_hints as hints  # noqa: E402  (its variant packages, checks and timing loop)

#: 2^100 and bf16 2^20 (0x4980 in each half) of the rewritten dequantization
POW100 = float(2 ** 100)
BF16X2_POW20 = "0x49804980"

DEQUANT_ASM = (
    "{ .reg .b32 z0, z1, t0, t1, k; "
    "prmt.b32 z0, $2, 0, 0x1404; prmt.b32 z1, $2, 0, 0x3424; "   # bytes 0,1 / 2,3 to each half's top byte
    "and.b32 t0, z0, 0x7f007f00; and.b32 t1, z1, 0x7f007f00; "
    "shr.b32 t0, t0, 4; shr.b32 t1, t1, 4; "                      # eeee.mmm to bf16's bits 10..4
    "and.b32 z0, z0, 0x80008000; and.b32 z1, z1, 0x80008000; "
    "or.b32 z0, z0, t0; or.b32 z1, z1, t1; "                      # value * 2^-120, exact
    "mul.rn.bf16x2 z0, z0, $3; mul.rn.bf16x2 z1, z1, $4; "        # times scale * 2^100
    f"mov.b32 k, {BF16X2_POW20}; "
    "mul.rn.bf16x2 $0, z0, k; mul.rn.bf16x2 $1, z1, k; }")


def dequant_helper(name: str) -> str:
    """The Gluon helper replacing ``(raw.to(gl.float32) * scale).to(gl.bfloat16)`` where
    ``scale`` is already bf16(scale * 2^100)."""
    return (f"\n\n@gluon.jit\ndef {name}(raw, scale):\n"
            f"    return gl.inline_asm_elementwise({DEQUANT_ASM!r}, '=r,=r,r,r,r', [raw, scale],\n"
            f"                                     dtype=gl.bfloat16, is_pure=True, pack=4)\n")


SCALE_WHERE = re.compile(r"gl\.where\((.*?< SCALE_DIMS\)), (\w+)\[:, None\], (\w+)\[:, None\]\)")
PRODUCT = re.compile(r"\((\w+)\.to\(gl\.float32\) \* (\w+)\)\.to\(gl\.bfloat16\)")


def rewrite_dequant(source: str, helper: str = "_ab_dq") -> tuple[str, int]:
    """``source`` with each dequantization's scale select made on bf16(scale * 2^100) and each
    product replaced by ``helper``; returns the text and the number of products rewritten."""
    source = SCALE_WHERE.sub(
        lambda m: (f"gl.where({m.group(1)}, ({m.group(2)} * {POW100!r}).to(gl.bfloat16)[:, None], "
                   f"({m.group(3)} * {POW100!r}).to(gl.bfloat16)[:, None])"), source)
    source, n = PRODUCT.subn(lambda m: f"{helper}({m.group(1)}, {m.group(2)})", source)
    return source + dequant_helper(helper), n


def install(variant_names):
    """Make the lowering's module loader rewrite the dequantization of the "bits" package's
    kernels (under /tmp/variants/tk_bits/)."""
    from tle_compiler.lowering import compile as lowering_compile
    original = lowering_compile.load_module

    def load_module(gen):
        first = gen.source.split("\n", 1)[0]
        if "bits" in variant_names and "/tk_bits/" in first:
            text, count = rewrite_dequant(gen.source)
            if "fp8" in first and count == 0:
                raise SystemExit(f"bits: no dequantization found in {first}")
            gen = replace(gen, source=text)
        return original(gen)

    lowering_compile.load_module = load_module


def main():
    import argparse
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cpu", action="store_true", help="compile each variant for sm_90a and report it")
    ap.add_argument("--variants", nargs="+", default=["base", "bits"], choices=["base", "bits"])
    ap.add_argument("--shapes", nargs="+", metavar="bB_sS_hH",
                    default=["b128_s1_h128", "b64_s1_h128", "b64_s2_h128", "b128_s1_h64"])
    ap.add_argument("--reps", type=int, default=5, help="interleaved rounds (median reported)")
    ap.add_argument("--anchor", default=None, help="FlashMLA sparse decode anchor library")
    a = ap.parse_args()
    # "bits" is a plain copy of tle_kernels rewritten as it loads (as the load-form variants are)
    hints.VARIANTS["bits"] = "rewritten"
    hints.PTX_FORMS.add("bits")
    hints.install_gluon_rewrites = lambda names: install(names)
    if a.cpu:
        hints.cpu(a.variants)
    else:
        hints.gpu(a.variants, a.shapes, a.reps, a.anchor)


if __name__ == "__main__":
    main()
