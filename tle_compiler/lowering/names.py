"""Unique names for what the lowering allocates: pipe rings, mbarrier arrays and closed flags.

The generated Gluon names a ring ``<pipe>_<field>``, a barrier array by materialize-barriers'
name (``<pipe>_full<g>`` / ``<pipe>_empty<g>``) and a closed flag ``<pipe>_closed``, and spells
the kernel's own names (arguments, module constants, partitions, their parameters and locals) as
written. These can meet: pipe ``a`` field ``x_tile`` and pipe ``a_x`` field ``tile``; field
``full0`` of pipe ``a`` and the barrier array ``a_full0``; pipe ``x`` field ``ptr`` and the
argument ``x_ptr``. Two bindings of one name in a partition's parameters are a SyntaxError, and
one that shadows another reads the wrong buffer. So each allocated name is the natural one when
nothing else has it, and otherwise the natural one with the first free ``__<k>`` suffix (k = 1,
2, ...), decided in declaration order (pipes; in each its fields, closed flag, barrier arrays):
deterministic, and a kernel without a clash keeps every name it had.
"""

from __future__ import annotations

from typing import Iterable

from ..ir import kernel as K
from ..ir.kernel_names import MODULE_NAMES, source_names  # noqa: F401 (re-exported)


class NameAllocator:
    """Hands out the allocated names: natural ones first come, first served; a clash with a
    source name, a module name or an earlier allocation gets the first free ``__<k>`` suffix
    that is no source name and no other allocation's natural name either."""

    def __init__(self, kernel: K.Kernel, natural: Iterable[str]):
        self.taken = source_names(kernel) | set(MODULE_NAMES)
        self.natural = set(natural)

    def __call__(self, name: str) -> str:
        if name in self.taken:
            k = 1
            while f"{name}__{k}" in self.taken or f"{name}__{k}" in self.natural:
                k += 1
            name = f"{name}__{k}"
        self.taken.add(name)
        return name
