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

#: Names the generated module binds or calls itself (emit.HEADER's imports, builtins).
MODULE_NAMES = frozenset({"gluon", "gl", "async_copy", "fence_async_shared", "mbarrier",
                          "warpgroup_mma", "warpgroup_mma_wait", "warpgroup_mma_init", "tma",
                          "range", "float", "int"})


def source_names(kernel: K.Kernel) -> set[str]:
    """Every name of the kernel's source that the generated module spells as written: the kernel,
    its arguments and module constants, the partitions, their parameters, and each name a
    statement binds or reads (helpers are inlined with their locals renamed by the frontend)."""
    names = {kernel.name} | {p.name for p in kernel.params} | {n for n, _ in kernel.consts}
    exprs: list[K.Expr] = []
    bodies = [kernel.prologue]
    for part in kernel.partitions:
        names.add(part.name)
        names.update(p for p, _ in part.bindings)
        exprs += [e for _, e in part.bindings]
        bodies.append(part.body)
    for body in bodies:
        for st in K.walk_stmts(body):
            if isinstance(st, K.Assign):
                names.add(st.target)
            elif isinstance(st, K.For):
                names.add(st.var)
            exprs += K.stmt_exprs(st)
    for e in exprs:
        names.update(x.id for x in K.walk_expr(e) if isinstance(x, (K.Name, K.Global)))
    return names


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
