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


def _known(at) -> bool:
    return at is not None and getattr(at, "line", 0) > 0


class ArithmeticRefusal(TleError):
    """Constexpr arithmetic the reading refuses where it is computed (:class:`NumberTooWide`,
    :class:`PythonRaises`); :meth:`at` gives it the line of the expression around it."""

    def at(self, loc) -> "ArithmeticRefusal":
        """The same refusal at the source location ``loc`` (kept where it has one)."""
        if _known(self.loc) or not _known(loc):
            return self
        return self.again(loc)

    def again(self, loc) -> "ArithmeticRefusal":
        raise NotImplementedError


class NumberTooWide(ArithmeticRefusal):
    """An integer the kernel's constexpr arithmetic computes is wider than :data:`MAX_BITS`."""

    def __init__(self, what: str, bits: int, loc=None):
        self.what, self.bits = what, bits
        super().__init__(f"{what} is an integer of {bits} bits or more: Triton computes it in "
                         f"Python at compile time, and the reading computes integers of up to "
                         f"{MAX_BITS} bits only (a tensor holds 64): not read", loc,
                         check="unsupported-expression")

    def again(self, loc) -> "NumberTooWide":
        return NumberTooWide(self.what, self.bits, loc)


class PythonRaises(ArithmeticRefusal):
    """Python raises computing the kernel's constexpr arithmetic (`C >> -1`: "negative shift
    count"; `C // 0`; `0 ** -1`; `2 ** 1100 * 1.0`: "int too large to convert to float"), which
    Triton 3.6 computes in Python when it compiles the kernel: its compile raises too."""

    def __init__(self, what: str, error: str, loc=None):
        self.what, self.error = what, error
        super().__init__(f"{what} raises in Python ({error}): Triton 3.6 computes arithmetic on "
                         f"compile-time numbers in Python when it compiles the kernel, so the "
                         f"kernel does not compile", loc, check="unsupported-expression")

    def again(self, loc) -> "PythonRaises":
        return PythonRaises(self.what, self.error, loc)


def number_text(value: object) -> str:
    """``value`` as an error message shows it: a wide integer by its first digits and width."""
    text = repr(value)
    if isinstance(value, int) and not isinstance(value, bool) and len(text) > 24:
        return f"{text[:8]}... ({value.bit_length()} bits)"
    return text


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
    Python gives no integer (a negative power, which is a float); :class:`PythonRaises` where
    Python raises (a division by zero, a negative shift count, 0 to a negative power). A result
    wider than :data:`MAX_BITS` raises :class:`NumberTooWide`; a shift or a power is measured
    before it is computed, so the reading never starts computing one Python would not
    finish."""
    if op in ("<<", ">>") and b < 0:
        raise PythonRaises(f"`{number_text(a)} {op} {b}`", "ValueError: negative shift count")
    if op in ("//", "%") and b == 0:
        raise PythonRaises(f"`{number_text(a)} {op} {b}`",
                           "ZeroDivisionError: integer division or modulo by zero")
    if op == "**" and b < 0:
        if a == 0:
            raise PythonRaises(f"`{a} ** {b}`", "ZeroDivisionError: 0.0 cannot be raised to a "
                                                "negative power")
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
