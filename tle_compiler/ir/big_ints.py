"""Python's integer arithmetic, as Triton 3.6 computes constexprs, with a bound on the width of
the numbers it will compute.

Triton computes arithmetic on constexprs in Python, with integers of any size: `2 ** 5000` is a
number of 5001 bits, and `((2 ** 4096) ** 4096) ** 4096` one Python does not finish computing
(Triton's compile of such a kernel hangs). The reading of a kernel computes the same arithmetic
to check it, so it needs the same numbers, up to a point: a number wider than :data:`MAX_BITS`
stops the reading with :class:`NumberTooWide` (a refusal, never a verdict on a number it did not
compute). Every number a tensor can hold is 64 bits or less, and Python prints a number of up to
4300 digits, so the bound leaves the integers a kernel can use exact, the printed ones included.
"""

from __future__ import annotations

import operator
from typing import Optional

from ..diagnostics import TleError

#: the widest integer (in bits) the reading computes; Python prints up to 4300 digits (about
#: 14,000 bits) by default
MAX_BITS = 8192


class NumberTooWide(TleError):
    """An integer the kernel's constexpr arithmetic computes is wider than :data:`MAX_BITS`."""

    def __init__(self, what: str, bits: int, loc=None):
        self.what, self.bits = what, bits
        super().__init__(f"{what} is an integer of {bits} bits or more: Triton computes it in "
                         f"Python at compile time, and the reading computes integers of up to "
                         f"{MAX_BITS} bits only (a tensor holds 64): not read", loc,
                         check="unsupported-expression")

    def at(self, loc) -> "NumberTooWide":
        """The same refusal at the source location ``loc`` (kept where it has one)."""
        known = lambda at: at is not None and getattr(at, "line", 0) > 0  # noqa: E731
        return self if known(self.loc) or not known(loc) else NumberTooWide(self.what, self.bits,
                                                                            loc)


def checked(*values: int) -> None:
    """Nothing, or :class:`NumberTooWide` where one of ``values`` is wider than
    :data:`MAX_BITS`."""
    for value in values:
        if value.bit_length() > MAX_BITS:
            raise NumberTooWide("a number", value.bit_length())


#: Python's operators (``True & True`` stays a bool, as Python computes it)
_OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "//": operator.floordiv,
        "%": operator.mod, "<<": operator.lshift, ">>": operator.rshift, "**": operator.pow,
        "&": operator.and_, "|": operator.or_, "^": operator.xor}


def int_op(op: str, a: int, b: int) -> Optional[int]:
    """Python's ``a op b`` on integers (``op`` one of + - * // % << >> ** & | ^), None where
    Python gives no integer (a division by zero, a negative shift, a negative power, which is a
    float). A result wider than :data:`MAX_BITS` raises :class:`NumberTooWide`; a shift or a
    power is measured before it is computed, so the reading never starts computing one Python
    would not finish."""
    if op in ("//", "%") and b == 0 or op in ("<<", ">>", "**") and b < 0:
        return None
    if op == "<<" and a != 0 and a.bit_length() + b > MAX_BITS:
        raise NumberTooWide("a number", a.bit_length() + b)
    if op == "**" and abs(a) > 1 and (abs(a).bit_length() - 1) * b >= MAX_BITS:
        raise NumberTooWide("a number", (abs(a).bit_length() - 1) * b + 1)
    fn = _OPS.get(op)
    if fn is None:
        return None
    out = fn(a, b)
    checked(out)
    return out
