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
