"""The names of a kernel's source that the generated Gluon module spells as written, and the
names that module binds for itself. The lowering allocates its own names around both
(lowering/names.py, lowering/translate.py); the frontend refuses a source name that is one of the
module's own (frontend/build.py check_generated_names), which the lowering could not rename. Here,
below both, so that each reads one definition.
"""

from __future__ import annotations

from . import kernel as K

#: Names the generated module binds or calls itself (emit.HEADER's imports, builtins).
MODULE_NAMES = frozenset({"gluon", "gl", "async_copy", "fence_async_shared", "mbarrier",
                          "warpgroup_mma", "warpgroup_mma_wait", "warpgroup_mma_init", "tma",
                          "range", "float", "int"})


#: The names of the kernels asked for last (id -> the kernel, its names): one translation asks
#: for the same kernel's a dozen times (a walk of each partition, every pass that allocates names)
_RECENT: dict[int, tuple[K.Kernel, frozenset]] = {}
_RECENT_MAX = 8


def source_names(kernel: K.Kernel) -> set[str]:
    """Every name of the kernel's source that the generated module spells as written: the kernel,
    its arguments and module constants, the partitions, their parameters, and each name a
    statement binds or reads (helpers are inlined with their locals renamed by the frontend).
    A kernel is immutable: its names are computed once (kept for the last few kernels asked
    for), and each call gets its own set."""
    hit = _RECENT.get(id(kernel))
    if hit is not None and hit[0] is kernel:
        return set(hit[1])
    names = _source_names(kernel)
    _RECENT[id(kernel)] = (kernel, frozenset(names))
    while len(_RECENT) > _RECENT_MAX:
        del _RECENT[next(iter(_RECENT))]
    return names


def _source_names(kernel: K.Kernel) -> set[str]:
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
