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

import re
from dataclasses import fields, is_dataclass, replace
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

    def args_of(self, e: K.Expr, binds: dict, body: tuple, depth: int = 12) -> set[str]:
        """The kernel arguments the value of ``e`` may be computed from (names resolved through
        the function's own assignments, then a partition's bindings, whose expressions are the
        kernel body's and resolve through its assignments)."""
        out: set[str] = set()
        if depth <= 0:
            return set(self.params)  # too deep to follow: any argument
        local = self.assigns(body)
        for name in _names(e):
            for v in local.get(name, ()):
                if not (isinstance(v, K.Name) and v.id == name):
                    out |= self.args_of(v, binds, body, depth - 1)
            if name in binds:
                out |= self.args_of(binds[name], {}, self.kern.prologue, depth - 1)
            elif name in self.params:
                out.add(name)
        return out

    def shared(self, e: K.Expr, binds: dict, body: tuple, depth: int = 12) -> bool:
        """Whether the pointer ``e`` may point into shared memory: a ``tle.gpu.local_ptr`` in
        it, or in what a name it reads is bound to (the function's own assignments, then a
        partition's bindings, whose expressions are the kernel body's), as ``args_of`` resolves
        names: ``q = tle.gpu.local_ptr(flag)`` before ``while tl.load(q) == 0`` is the flag."""
        if any(isinstance(x, K.Op) and x.name == "tle.gpu.local_ptr" for x in K.walk_expr(e)):
            return True
        if depth <= 0:
            return True  # too deep to follow: it may
        local = self.assigns(body)
        for name in _names(e):
            for v in local.get(name, ()):
                if not (isinstance(v, K.Name) and v.id == name) and \
                        self.shared(v, binds, body, depth - 1):
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




_NAME = re.compile(r"name:(\w+)")


def _integer(e: K.Expr) -> Optional[int]:
    """The value of an integer constant, or of `+`, `-`, `*` of them; else None."""
    if isinstance(e, (K.Const, K.Global)) and type(e.value) is int:
        return e.value  # a number, or a module constant's
    if isinstance(e, K.BinOp) and e.op in ("+", "-", "*"):
        a, b = _integer(e.lhs), _integer(e.rhs)
        if a is not None and b is not None:
            return a + b if e.op == "+" else a - b if e.op == "-" else a * b
    return None


def _resolved(info: _Kernel, e: K.Expr, binds: dict, body: tuple, depth: int = 8) -> str:
    """A text of ``e`` in which each name the function assigns once (no loop variable) stands
    for its value, and each partition parameter for the kernel body's expression it is bound
    to, resolved there too, and the terms of a sum or product sorted: two pointer expressions
    of equal texts reach the same addresses (a name assigned more than once, or a loop
    variable, stays a name, equal to itself)."""
    if isinstance(e, K.Name):
        local = info.assigns(body)
        vals = local.get(e.id, ())
        loops = {st.var for st in K.walk_stmts(body) if isinstance(st, K.For)}
        if depth > 0 and len(vals) == 1 and e.id not in loops:
            return _resolved(info, vals[0], binds, body, depth - 1)
        if depth > 0 and not vals and e.id in binds:
            return _resolved(info, binds[e.id], {}, info.kern.prologue, depth - 1)
        return f"name:{e.id}"
    if isinstance(e, K.Subscript) and len(e.index) == 1 and isinstance(e.index[0], int):
        # an item of a tuple the function binds (`r, first = pair`): that item
        tup = e.value
        for _ in range(depth):
            vals = info.assigns(body).get(tup.id, ()) if isinstance(tup, K.Name) else ()
            if len(vals) != 1:
                break
            tup = vals[0]
        if isinstance(tup, K.TupleExpr) and -len(tup.items) <= e.index[0] < len(tup.items):
            return _resolved(info, tup.items[e.index[0]], binds, body, depth - 1)
    folded = _integer(e)
    if folded is not None:
        return f"int:{folded}"
    if isinstance(e, K.BinOp) and e.op in ("+", "*"):
        # a sum or product in any order or grouping: its terms, sorted, its integers folded
        terms, todo, number = [], [e], 0 if e.op == "+" else 1
        while todo:
            x = todo.pop()
            if isinstance(x, K.BinOp) and x.op == e.op:
                todo += [x.lhs, x.rhs]
            else:
                text = _resolved(info, x, binds, body, depth)
                if text.startswith("int:"):  # a number, or a name bound to one
                    v = int(text[4:])
                    number = number + v if e.op == "+" else number * v
                else:
                    terms.append(text)
        unit = 0 if e.op == "+" else 1
        if number != unit or not terms:  # `t + 0` is `t`
            terms.append(f"int:{number}")
        terms.sort()
        return terms[0] if len(terms) == 1 else f"{e.op}({', '.join(terms)})"
    scalars = [f"{f.name}={getattr(e, f.name)!r}" for f in fields(e)
               if f.name not in ("loc", "attrs") and not isinstance(getattr(e, f.name), tuple)
               and not is_dataclass(getattr(e, f.name))]
    kids = [_resolved(info, c, binds, body, depth) for c in K.children(e)]
    keys = [k for k, _ in e.kwargs] if isinstance(e, K.Op) else []
    return f"{type(e).__name__}({', '.join(scalars)}; {', '.join(kids)}; {keys})"

def _global_accesses(info: _Kernel,
                     part: K.KPartition) -> Iterator[tuple[str, set[str], str, K.Op]]:
    """Each load, store or atomic of global memory in ``part``: (kind, the kernel arguments its
    pointer may be computed from, the pointer's text resolved (:func:`_resolved`), the op);
    kind is ``load``, ``store`` or ``atomic``."""
    binds = dict(part.bindings)
    for st in K.walk_stmts(part.body):
        for x in K.stmt_exprs(st):
            for op in _ops(x):
                kind = ("load" if op.name == "tl.load" else "store" if op.name in WRITES
                        else "atomic" if op.name.startswith(ATOMIC_PREFIX) else None)
                ptr = _pointer(op) if kind else None
                if ptr is None or info.shared(ptr, binds, part.body):
                    continue
                yield (kind, info.args_of(ptr, binds, part.body),
                       _resolved(info, ptr, binds, part.body), op)


def _simple(st: K.Stmt) -> bool:
    return isinstance(st, (K.Assign, K.Eval))


def _evaluates(st: K.Stmt, op: K.Op) -> bool:
    return any(x is op for e in K.stmt_exprs(st) for x in K.walk_expr(e))


def _place(part: K.KPartition, op: K.Op):
    """Where ``op`` stands in ``part``: (the chain of (statement list, position) from the
    partition's body, or from the body of the top-level ``for`` it stands in, down through
    ``if`` branches to the statement that evaluates it; that loop or None); None where another
    loop (or a ``while``) holds it."""
    def find(stmts, loop, top):
        for i, st in enumerate(stmts):
            if _simple(st) and _evaluates(st, op):
                return [(stmts, i)], loop
            if isinstance(st, K.If):
                for branch in (st.then, st.orelse):
                    got = find(branch, loop, False)
                    if got:
                        return [(stmts, i)] + got[0], got[1]
            if isinstance(st, K.For) and top:
                got = find(st.body, st, False)
                if got:
                    return got
        return None
    return find(part.body, None, True)


def _range_tag(info: _Kernel, part: K.KPartition, loop: K.For) -> tuple:
    """The range of ``loop`` as resolved texts (:func:`_resolved`): what tags a text read at one
    iteration of it (:func:`_loop_var_named`), so that texts of two loops of one range at one
    iteration compare equal."""
    binds = dict(part.bindings)
    return tuple(_resolved(info, x, binds, part.body) for x in (loop.start, loop.stop, loop.step))


def _loop_var_named(text: str, loop: K.For) -> str:
    """A resolved text with the variable of ``loop`` named `$v`, whichever loop it is."""
    return re.sub(rf"name:{re.escape(loop.var)}\b", "name:$v", text)


def _events(info: _Kernel, part: K.KPartition, stmts, loop: Optional[K.For]) -> Iterator:
    """(position, verb, pipe, side, index text) of the events of the simple statements
    ``stmts``; in the body of ``loop`` the index text names the loop variable `$v` and is
    tagged with the loop's range, so that events of two loops of one range at one iteration
    compare equal."""
    binds = dict(part.bindings)
    tag = None if loop is None else _range_tag(info, part, loop)
    for i, st in enumerate(stmts):
        if _simple(st):
            for e in K.stmt_exprs(st):
                for ev in K._post(e):
                    idx = _resolved(info, ev.index, binds, part.body)
                    if loop is not None:
                        idx = _loop_var_named(idx, loop)
                    yield i, ev.verb, ev.handle.pipe, ev.handle.side, (idx, tag)


def _arrives(info: _Kernel, part: K.KPartition, chain, loop) -> set:
    """The (pipe, index) of the commits and closes that surely follow the access at the end of
    ``chain`` once it ran: later in its statement list or in an enclosing one."""
    return {(pipe, idx) for stmts, at in chain
            for i, verb, pipe, side, idx in _events(info, part, stmts, loop)
            if i > at and side == "writer" and verb in ("commit", "close")}


def _waits(info: _Kernel, part: K.KPartition, chain, loop) -> set:
    """The (pipe, index) of the waits that surely ran before the access at the end of
    ``chain`` when it runs: earlier in its statement list or in an enclosing one."""
    return {(pipe, idx) for stmts, at in chain
            for i, verb, pipe, side, idx in _events(info, part, stmts, loop)
            if i < at and side == "reader" and verb == "wait"}


def _substitute(e, name: str, by: K.Expr):
    """``e`` with every ``Name(name)`` replaced by ``by``."""
    if isinstance(e, K.Name):
        return by if e.id == name else e
    if isinstance(e, tuple):
        return tuple(_substitute(x, name, by) for x in e)
    if not is_dataclass(e) or isinstance(e, type):
        return e
    return replace(e, **{f.name: _substitute(getattr(e, f.name), name, by) for f in fields(e)
                         if f.name not in ("loc", "attrs")})


def _last_arrives(info: _Kernel, part: K.KPartition, chain, loop) -> set:
    """For an access in the body of the top-level loop ``loop`` (of step 1): the (pipe, index)
    of the commits and closes of the loop's last iteration that stand in the loop's own body
    after the access's statement (they run at every iteration, after every run of the
    access), the index computed at the last value of the loop variable."""
    if loop is None or not (isinstance(loop.step, K.Const) and loop.step.value == 1):
        return set()
    last = K.BinOp("+", loop.stop, K.Const(-1))
    binds = dict(part.bindings)
    out = set()
    for i, st in enumerate(loop.body):
        if i > chain[0][1] and _simple(st):
            for e in K.stmt_exprs(st):
                for ev in K._post(e):
                    if ev.handle.side == "writer" and ev.verb in ("commit", "close"):
                        idx = _substitute(ev.index, loop.var, last)
                        out.add((ev.handle.pipe, (_resolved(info, idx, binds, part.body), None)))
    return out


def _ordered(info: _Kernel, first: tuple[K.KPartition, K.Op],
             second: tuple[K.KPartition, K.Op]) -> bool:
    """Whether every run of the access ``first`` surely happens before every run of
    ``second`` through the hand-offs of one pipe: the first partition commits (or closes) an
    index after the access, in its statement list or an enclosing one (outside loops, or in
    the body of a top-level loop: at the same iteration); the second waits that index before
    its access, in its list or an enclosing one, or, for an access outside loops, in a
    top-level loop before it (the same index, of a loop of the same range at the same
    iteration). An access run more than once (in a loop) is taken for ordered only against
    one run once, after that loop."""
    (pa, a), (pb, b) = first, second
    at_a, at_b = _place(pa, a), _place(pb, b)
    if at_a is None or at_b is None or at_b[1] is not None:
        return False  # (the second in a loop runs at every iteration: _ordered_per_iteration)
    (chain_a, loop_a), (chain_b, _) = at_a, at_b
    waits = _waits(info, pb, chain_b, None)
    for st in pb.body[:chain_b[0][1]]:
        if isinstance(st, K.For):
            waits |= {(pipe, idx) for _, verb, pipe, side, idx in _events(info, pb, st.body, st)
                      if side == "reader" and verb == "wait"}
    return bool((_arrives(info, pa, chain_a, loop_a)
                 | _last_arrives(info, pa, chain_a, loop_a)) & waits)


def _ordered_per_iteration(info: _Kernel, first: tuple[K.KPartition, K.Op],
                           second: tuple[K.KPartition, K.Op]) -> bool:
    """For two accesses in the bodies of top-level loops of one range: whether at every
    iteration the first surely happens before the second, the first partition committing an
    index after it that the second waits before it (the same index at the same iteration)."""
    (pa, a), (pb, b) = first, second
    at_a, at_b = _place(pa, a), _place(pb, b)
    if at_a is None or at_b is None or at_a[1] is None or at_b[1] is None:
        return False
    return bool(_arrives(info, pa, *at_a) & _waits(info, pb, *at_b))


def check_global_races(kern: K.Kernel) -> None:
    """Refuse global memory that one partition writes and another reads at the same addresses:
    a store (or atomic) in one partition and a load in another through pointer expressions
    that are one expression once names are resolved (:func:`_resolved`: `y_ptr + 64 +
    tl.arange(0, 64)` in both, a flag `flag_ptr`), or a store in one and an atomic in the
    other. The verifier orders partitions by their pipes only; it does not check that such a
    pair is ordered by them (the store before a commit, the load after the matching wait), so
    the load may read the memory before or while the store lands: a race, or a flag protocol
    (an atomic one partition sets, another reads, with the data it guards) the verdict could
    not claim safe. Pointers through other expressions (`x_ptr + tl.arange(0, 64)` loaded, `x_ptr
    + t * 64 + tl.arange(0, 64)` stored) are taken to reach other addresses, and two stores (or
    two atomics) are no read of the other's write: neither is refused. Only an address that
    varies with nothing (every name in it resolves to kernel arguments and constants) is
    compared, and a pair is accepted where one hand-off surely orders it (:func:`_ordered`:
    straight-line code, a commit after the first access and its wait before the second)."""
    if len(kern.partitions) < 2:
        return
    info = _Kernel(kern)
    seen: dict[object, list[tuple[str, str, K.Op]]] = {}
    for part in kern.partitions:
        for kind, args, text, op in _global_accesses(info, part):
            if not args:
                continue  # no argument's memory
            per_iteration = False
            if any(n not in info.params for n in _NAME.findall(text)):
                # an address that varies: compared only as a function of the variable of the
                # top-level loop it stands in (`x_ptr + t * 64 + ...`), at one iteration
                at = _place(part, op)
                loop = at[1] if at is not None else None
                if loop is None or any(n not in info.params and n != loop.var
                                       for n in _NAME.findall(text)):
                    continue
                text = (_loop_var_named(text, loop), _range_tag(info, part, loop))
                per_iteration = True
            for other, okind, oop in seen.get(text, ()):
                if other == part.name or {kind, okind} in ({"store"}, {"atomic"}, {"load"}):
                    continue
                opart = kern.partition(other)
                order = _ordered_per_iteration if per_iteration else _ordered
                if order(info, (opart, oop), (part, op)) or order(info, (part, op), (opart, oop)):
                    continue
                consts = {q.name for q in kern.params if q.constexpr}
                arg = min(args, key=lambda n: (n in consts, n))  # a pointer before a constexpr
                raise TleError(
                    f"partitions '{other}' ({okind} at line {oop.loc.line}) and '{part.name}' "
                    f"({kind} here) access the same global memory through `{arg}`, one writing "
                    f"what the other reads: the verifier orders partitions only through pipes "
                    f"and does not check that this write and this read are ordered by them, so "
                    f"the read may see the memory before or during the write (a race, or a flag "
                    f"protocol it cannot prove); hand the data over in a pipe slot, or keep "
                    f"these writes and reads in one partition", op.loc if op.loc.line
                    else part.loc, check="memory-race")
            seen.setdefault(text, []).append((part.name, kind, op))
