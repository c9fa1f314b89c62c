"""The rounding modes of a float conversion (``x.to(dtype, fp_downcast_rounding=...)``,
``x.cast(...)``, ``tl.cast(...)``) Triton 3.6 refuses, or accepts and then cannot lower on
sm_90: the lowering refuses both at the conversion, for ``x.to`` (translate.py) and ``tl.cast``
(more_ops.py) alike."""

from __future__ import annotations

from typing import Optional

from ..ir.promotion import float_bits


def rounding_refusal(kwargs: dict, src: Optional[str], dst: Optional[str]) -> Optional[str]:
    """Why Triton 3.6 refuses ``x.to(dst, fp_downcast_rounding=...)`` of an ``x`` of type
    ``src`` (None when it does not, or the types are not known here): a mode other than 'rtne'
    and 'rtz' ("Invalid rounding mode"), or one given for a conversion that is no narrowing of
    a float to a float ("fp_downcast_rounding should be set only for truncating fp
    conversions"); with bitcast=True the mode is not read, nor where ``src`` is ``dst``: Triton
    3.6's cast returns a value of the type it asks for unchanged before it reads the mode."""
    from ..language import call_args

    e = kwargs.get("fp_downcast_rounding")
    ok, mode = call_args.literal_of(e) if e is not None else (True, None)
    bitcast = kwargs.get("bitcast")
    if src is not None and src == dst:
        return None
    if not ok or mode is None or bitcast is not None and call_args.literal_of(bitcast) == (True,
                                                                                        True):
        return None
    if mode not in ("rtne", "rtz"):
        return (f"fp_downcast_rounding={mode!r}: Triton 3.6 supports the rounding modes 'rtne' "
                f"and 'rtz' only (\"Invalid rounding mode\")")
    a, b = float_bits(src), float_bits(dst)
    if src is not None and dst is not None and not (a and b and a > b):
        return (f"fp_downcast_rounding={mode!r} on a conversion from {src} to {dst}: Triton "
                f"3.6 takes a rounding mode only for a float narrowed to a float "
                f"(\"fp_downcast_rounding should be set only for truncating fp conversions\")")
    if mode == "rtz" and src is not None and dst is not None and (src, dst) not in RTZ_CONVERSIONS:
        return (f"fp_downcast_rounding='rtz' on a conversion from {src} to {dst}: Triton 3.6 "
                f"accepts it, and its backend has no such conversion (the compile fails in "
                f"ConvertTritonGPUToLLVM: \"Unsupported rounding mode for conversion\"); it "
                f"rounds toward zero from float32 to float16, bfloat16 and float8e5 only")
    return None


#: the conversions Triton 3.6's NVIDIA backend rounds toward zero (sm_90): from float32 only,
#: and not to float8e4nv; from float64 or float16 / bfloat16 to fp8 the compile fails in
#: ConvertTritonGPUToLLVM (verified until adversarial round 37)
RTZ_CONVERSIONS = frozenset({("float32", "float16"), ("float32", "bfloat16"),
                             ("float32", "float8e5")})
