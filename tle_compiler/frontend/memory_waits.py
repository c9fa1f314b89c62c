"""Loops that wait on memory: synchronization the verifier does not see.

The verdict says a kernel's partitions cannot deadlock through their pipes. A partition can also
wait without a pipe: a ``while`` loop whose condition reads memory that the loop reads again on
every iteration (``while tl.atomic_add(flag, 0) == 0: pass``, or a loaded value the body
refreshes) runs until another partition, or another CTA, writes that memory. The verifier does not
model such a write, so a kernel whose reader spins on a flag its writer sets only after a pipe
acquire that needs the reader's release was verified and hangs on the GPU. Such a loop is refused
at the read (check ``memory-wait``), so that no verdict is printed for a protocol the verifier
cannot see; a pipe is the way to wait for another partition.

A loop waits on memory when its condition depends (directly, or through names the body assigns,
to a fixpoint) on a read made in the loop that some other thread may change while it runs:

* an atomic (``tl.atomic_*``): it reads memory others write by design;
* a load of shared memory (``tl.load(tle.gpu.local_ptr(...))``): the other partitions write it;
* a load of global memory through a pointer computed from a kernel argument that the kernel
  stores to or updates atomically anywhere (any partition, the kernel body; other CTAs run the
  same code).

A ``while`` whose condition reads only values fixed before it, or global memory the kernel never
writes (an input: an argument no store or atomic of the kernel goes through; a launch that passes
the same memory as that input and as an argument the kernel writes is outside this reading),
cannot be waiting for the kernel itself: it is accepted (whether its data make it end is the
program's arithmetic, not synchronization). ``for`` loops are bounded by their range and need no
check.
"""

from __future__ import annotations

from typing import Iterator, Optional

from ..diagnostics import TleError
from ..ir import kernel as K
from .tensor_args import body_assigns

#: Ops that write global memory through their first argument (a pointer).
WRITES = ("tl.store",)
ATOMIC_PREFIX = "tl.atomic_"


def _ops(e: K.Expr) -> Iterator[K.Op]:
    for x in K.walk_expr(e):
        if isinstance(x, K.Op):
            yield x


def _pointer(op: K.Op) -> Optional[K.Expr]:
    """The pointer a load, store or atomic goes through: its first argument, or ``pointer=``
    (``tl.store(pointer=flag_ptr, value=1)`` writes flag_ptr as ``tl.store(flag_ptr, 1)``
    does)."""
    return op.args[0] if op.args else op.kw("pointer")


def _names(e: K.Expr) -> set[str]:
    return {x.id for x in K.walk_expr(e) if isinstance(x, K.Name)}


def _bodies(kern: K.Kernel) -> Iterator[tuple[tuple, dict]]:
    """The kernel body and each partition's body, with the partition's parameter bindings."""
    yield kern.prologue, {}
    for part in kern.partitions:
        yield part.body, dict(part.bindings)


class _Kernel:
    """What the check needs of a kernel: for each function body (the kernel body, each
    partition), how its names resolve to kernel arguments, and the arguments written."""

    def __init__(self, kern: K.Kernel):
        self.kern = kern
        self.params = {p.name for p in kern.params}
        self._assigns: dict[int, dict[str, list[K.Expr]]] = {}  # id(body) -> body_assigns
        self.written: set[str] = set()
        for body, binds in _bodies(kern):
            for st in K.walk_stmts(body):
                for x in K.stmt_exprs(st):
                    for op in _ops(x):
                        ptr = _pointer(op)
                        if (op.name in WRITES or op.name.startswith(ATOMIC_PREFIX)) and \
                                ptr is not None:
                            self.written |= self.args_of(ptr, binds, body)

    def assigns(self, body: tuple) -> dict[str, list[K.Expr]]:
        """``body_assigns`` of a function body, computed once per body."""
        key = id(body)
        if key not in self._assigns:
            self._assigns[key] = body_assigns(body)
        return self._assigns[key]

    def args_of(self, e: K.Expr, binds: dict, body: tuple, depth: int = 12,
                seen: frozenset = frozenset()) -> set[str]:
        """The kernel arguments the value of ``e`` may be computed from (names resolved through
        the function's own assignments, then a partition's bindings, whose expressions are the
        kernel body's and resolve through its assignments). ``seen``: the names of ``body``
        being resolved around this call; a name read again inside its own assignments (``i +=
        1 + tl.load(p + i)``) adds nothing its other assignments do not, so it is not followed
        again (else the walk would run to its depth and answer "any argument")."""
        out: set[str] = set()
        if depth <= 0:
            return set(self.params)  # too deep to follow: any argument
        local = self.assigns(body)
        for name in _names(e) - seen:
            for v in local.get(name, ()):
                out |= self.args_of(v, binds, body, depth - 1, seen | {name})
            if name in binds:
                out |= self.args_of(binds[name], {}, self.kern.prologue, depth - 1)
            elif name in self.params:
                out.add(name)
        return out

    def shared(self, e: K.Expr, binds: dict, body: tuple, depth: int = 12,
               seen: frozenset = frozenset()) -> bool:
        """Whether the pointer ``e`` may point into shared memory: a ``tle.gpu.local_ptr`` in
        it, or in what a name it reads is bound to (the function's own assignments, then a
        partition's bindings, whose expressions are the kernel body's), as ``args_of`` resolves
        names (``seen`` as there): ``q = tle.gpu.local_ptr(flag)`` before ``while tl.load(q) ==
        0`` is the flag."""
        if any(isinstance(x, K.Op) and x.name == "tle.gpu.local_ptr" for x in K.walk_expr(e)):
            return True
        if depth <= 0:
            return True  # too deep to follow: it may
        local = self.assigns(body)
        for name in _names(e) - seen:
            for v in local.get(name, ()):
                if self.shared(v, binds, body, depth - 1, seen | {name}):
                    return True
            if name in binds and self.shared(binds[name], {}, self.kern.prologue, depth - 1):
                return True
        return False

    def hazard(self, op: K.Op, binds: dict, body: tuple) -> Optional[str]:
        """Why the read ``op`` may change while a loop spins on it, or None."""
        if op.name.startswith(ATOMIC_PREFIX):
            return f"`{op.name}` reads memory other threads write"
        ptr = _pointer(op)
        if op.name != "tl.load" or ptr is None:
            return None
        if self.shared(ptr, binds, body):
            return "a load of shared memory, which the other partitions write"
        hit = sorted(self.args_of(ptr, binds, body) & self.written)
        if hit:
            return (f"a load through `{hit[0]}`, which this kernel stores to (another partition "
                    f"or CTA may write it while the loop runs)")
        return None


def _reads_in(loop: K.While) -> list[K.Op]:
    """The memory reads the condition of ``loop`` depends on, made in the loop: in the condition
    itself and in the body's assignments to names the condition reads (to a fixpoint)."""
    assigns = body_assigns(loop.body)
    exprs = [loop.cond]
    seen: set[str] = set()
    todo = list(_names(loop.cond))
    while todo:
        n = todo.pop()
        if n in seen or n not in assigns:
            continue
        seen.add(n)
        for v in assigns[n]:
            exprs.append(v)
            todo.extend(_names(v))
    return [op for e in exprs for op in _ops(e)
            if op.name == "tl.load" or op.name.startswith(ATOMIC_PREFIX)]


def check_memory_waits(kern: K.Kernel) -> None:
    """Refuse a ``while`` loop of ``kern`` that waits on memory (the module docstring)."""
    info = None
    for body, binds in _bodies(kern):
        for st in K.walk_stmts(body):
            if not isinstance(st, K.While):
                continue
            reads = _reads_in(st)
            if not reads:
                continue
            info = info or _Kernel(kern)
            for op in reads:
                why = info.hazard(op, binds, body)
                if why is not None:
                    raise TleError(
                        f"this `while` loop (line {st.loc.line}) runs until memory it reads again "
                        f"on every iteration changes ({why}): that waits for a write the verifier "
                        f"does not see, so no verdict could say the kernel does not hang; wait "
                        f"for another partition through a pipe, or bound the loop with range()",
                        op.loc if op.loc.line else st.loc, check="memory-wait")
