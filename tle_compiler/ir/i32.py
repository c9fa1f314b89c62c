"""The 32-bit signed range in which the GPU computes a kernel's integer arguments and the loop
bounds, conditions and indices made of them; one definition for the verifier's wrap checks
(passes/i32_range.py), the launch check of derived params (ir/derived.py) and the argument types
of a launch (lowering/runtime.py), so that all three agree on where i32 ends."""

I32_MIN, I32_MAX = -2**31, 2**31 - 1


def fits_i32(value: int) -> bool:
    """Whether ``value`` is an i32 (Triton passes a Python int outside it as an i64)."""
    return I32_MIN <= value <= I32_MAX
