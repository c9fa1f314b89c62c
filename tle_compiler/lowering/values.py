"""The value every lowering walk computes for a KIR expression (lowering/translate.py), in a
module of its own so that what spells pipe events (lowering/pipes.py) builds values without
importing the translator that calls it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional


@dataclass
class V:
    kind: str  # const scalar tensor smem lptr dtype pipe writer reader slot res func mod tuple none
    text: str = ""
    var: Optional[int] = None
    shape: Optional[tuple] = None
    dtype: Optional[str] = None
    value: Any = None
    #: for a pointer (a kernel argument, or a tensor of pointers computed from one): the Triton
    #: type it points to ("fp8e4nv", "bf16"), when the compile's signature says; a 2-D load of
    #: 1-byte elements takes a layout of 16-byte vectors from it (layouts.byte_rows)
    pointee: Optional[str] = None
    #: for a scalar that is a kernel argument unchanged (renamed, bound to a partition parameter,
    #: the same one on every path into here): that argument; a TMA copy's descriptor is checked
    #: against the signature's type of it (lowering/descriptors.check_emitted_copy)
    arg: Optional[str] = None
    #: for a runtime integer scalar: whether Triton types it i64 (a kernel argument the signature
    #: types "i64" / "u64", ``x.to(tl.int64)``, the variable of a loop with such a bound,
    #: arithmetic with one). Gluon's ``.index(...)`` of a ring and ``mbarrier.wait``'s phase take
    #: an i32, so a pipe event on such an index casts the stage and the parity it computes from it
    #: (lowering/pipes.py); for an i32 index nothing changes.
    i64: bool = False
    #: whether ``dtype`` is the type Triton gives the value (ir/promotion.py). False when
    #: a runtime scalar of a type the translator does not know took part in computing a tensor
    #: (``int_tile + a_scalar``: Triton may promote it to the scalar's type); ``dtype`` then
    #: holds the tensor operand's type, and a slot store converts such a value explicitly.
    exact_dtype: bool = True
    #: for a constant: whether its text reads a variable a plain assignment bound in the
    #: generated module (`S = 100`, then `S = S + 0`, or arithmetic on such a variable: the
    #: translator knows the value, but the text names a variable of the function that writes
    #: it), not a literal; a partition given it inside a tuple takes the value
    #: (lowering/walks.py ``bindings``, ``flat``)
    bound: bool = False


def wide(v: V) -> bool:
    """Whether Triton computes with ``v`` in 64 bits: a runtime scalar marked ``i64``, or an
    integer constant outside [-2^31, 2^32) (Triton gives a constant i32 when it fits, u32 up to
    2^32, i64 beyond), which widens the runtime operand it is combined with."""
    if v.kind == "const":
        x = v.value
        return isinstance(x, int) and not isinstance(x, bool) and not -2**31 <= x < 2**32
    return v.kind == "scalar" and v.i64


I32_MIN, I32_MAX = -2**31, 2**31 - 1


def outside_i32(text: str) -> str:
    """Gluon text of the 64-bit integer scalar ``text`` as an i32 TMA coordinate: itself when it
    fits, else -2^31. The hardware's coordinates are signed 32-bit; a value outside that range
    must stay outside the tensor rather than wrap into it, and a box at -2^31 lies wholly before
    any tensor (it arrives as zeros), where one at 2^31 - 1 faults (the box's end overflows)."""
    return (f"gl.where((({text}) < {I32_MIN}) | (({text}) > {I32_MAX}), {I32_MIN}, "
            f"({text})).to(gl.int32)")


def tma_coordinate(v: V) -> str:
    """Gluon text of ``v`` as one coordinate of a TMA copy (an i32): an i64 scalar through
    :func:`outside_i32`, an integer literal outside i32 as -2^31 (its box, like the exact
    coordinate's, lies outside any tensor of fewer than 2^31 rows), anything else as it is."""
    if v.kind == "scalar" and wide(v):
        return outside_i32(v.text)
    if v.kind == "const" and isinstance(v.value, int) and not I32_MIN <= v.value <= I32_MAX:
        return str(I32_MIN)
    return v.text
