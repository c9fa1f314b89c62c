"""Global memory between partitions: every conflicting pair proved apart or ordered, or refused.

The verifier orders a kernel's partitions through their pipes only. Two partitions that touch the
same global memory, one writing, can race: a store in one and a load in the other may run in
either order, or at once, unless a hand-off of a pipe orders them. This check (``memory-race``,
run by tle-dump once the passes find no other fault) refuses every such pair it cannot prove
safe, with a witness where it finds one: the loop variables of the two accesses and the address
they share.

**The pairs.** Every load, store and atomic of global memory in a partition body (a pointer that
may be based on a kernel argument: a ``tle.gpu.local_ptr`` is based on none, while an address
that holds a value loaded from shared memory, ``y_ptr + tl.load(local_ptr(...))``, or a name
bound to either kind of pointer is global), against every one of another partition through the
same pointer argument, where one of the two writes: a store against a load, a store or an atomic; an atomic
against a load. Two atomics are not a race (each is one indivisible update), nor two loads. The
kernel body before ``warp_specialize`` runs before every partition and is not paired.

**Addresses.** A pointer expression is read as an integer term (z3) in which each kernel
argument is a symbol the two partitions share, as is ``tl.program_id`` (the partitions of one
program run in one CTA); each ``tl.arange(a, b)`` is a lane in ``[a, b)`` of its own (each
occurrence: broadcasting makes two uses of one range independent axes); a loop variable is
``start + step * n`` with ``n`` its iteration, in the range (read where the loop statement
stands), unless the loop's body binds it again; a name the function assigns once stands for
its value read where it is assigned (at the same iterations of the loops that hold both), a
partition parameter for the kernel-body expression it is bound to (a kernel argument the body
binds again has no one value); ``//`` and ``%`` by a number, ``<<`` and ``>>`` by a number,
``&`` with a number, ``tl.where`` and ``min``/``max`` are modelled by what their result can be,
a cast to fewer than 32 bits (or to uint32) by the value modulo ``2 ** bits`` in the type's
range; anything else (a loaded value, a name assigned twice, a pointer cast) is a fresh
unknown. Masks are not read: every lane is taken to access. The model
is an over-approximation of the addresses each access reaches, so "apart" is proved for every
value of the arguments. Arguments are taken not to alias one another (two pointer arguments are
two tensors), and a pointer argument is one a pointer expression adds with coefficient one;
integer overflow of offsets is not modelled.

**Order.** Access A of partition P happens before access B of partition Q when P commits (or
closes) index i of a pipe after A, and Q waits index i of that pipe before B (the wait returns
only once that commit has landed: the protocol's phases are proved); or when P, a reader of a
pipe with mbarriers, releases index i after A and Q, its writer, acquires i + capacity before B.
"After" and "before" are program order with iterations compared (a later iteration of an
enclosing loop, or the same iteration and later in its body), and an event counts only where it
surely runs: under no ``if`` or ``while`` that does not also hold the access, at the same
iterations of the loops above that ``if``.

**The query.** For each pair: is there an assignment of the arguments, the two accesses'
iterations and lanes under which both reach one address and neither happens before the other
through any such pair of events? z3 decides it (the hand-offs quantified over their
iterations). Unsatisfiable: safe. Satisfiable: refused (``memory-race``), with the model as the
witness. Unknown (a nonlinear term, a budget): not proved, and tle-dump says so (exit 3) rather
than verify. Races between different programs (CTAs) are the program's own arithmetic, as in
any Triton kernel, and not checked.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Optional

from ..diagnostics import TleError
from ..ir import kernel as K

#: How long z3 may take for one pair of accesses (ms); past it the pair is "not proved".
PAIR_TIMEOUT_MS = 4000

ATOMIC_PREFIX = "tl.atomic_"
#: Ops whose value is their first argument's, as far as addresses go (hints, shapes, int casts).
_SAME_VALUE = ("tl.multiple_of", "tl.max_contiguous", "tl.max_constancy", "tl.broadcast_to",
               "tl.reshape", "tl.view", "tl.expand_dims", "to_tensor", "tl.broadcast")


#: Ops whose result is a number, never a pointer (an offset a pointer expression may add).
_VALUES = ("tl.load", "tl.arange", "tl.program_id", "tl.num_programs", "tl.cdiv", "tl.zeros",
           "tl.full", "tl.minimum", "tl.maximum", "min", "max", "tl.sum", "tl.max", "tl.min",
           "tl.dot", "tle.gpu.scale_rows") + tuple(f"tl.{m}" for m in K.UNARY_MATH)


#: integer types narrower than 32 bits: (least value, greatest value, modulus of a cast to it)
_NARROW = {"int1": (0, 1, None), "int8": (-128, 127, 256), "uint8": (0, 255, 256),
           "int16": (-32768, 32767, 65536), "uint16": (0, 65535, 65536),
           "uint32": (0, 2 ** 32 - 1, 2 ** 32)}
#: the comparisons :func:`condition` reads
_COMPARE_OPS = ("==", "!=", "<", "<=", ">", ">=")


class Unproved(Exception):
    """z3 could not decide a pair (a nonlinear term, its time budget)."""

    def __init__(self, message: str, loc):
        super().__init__(message)
        self.message, self.loc = message, loc


# ------------------------------------------------------------------------------------ positions


@dataclass(frozen=True)
class Site:
    """Where a node stands in a partition: the path from the body, each step ``("at", i, k)``
    (statement i of a list, k-th node of its expressions in evaluation order), ``("for", i,
    loop)``, ``("while", i, loop)`` (into a loop's body; a while's condition is inside it) or
    ``("if", i, stmt, branch)``."""

    path: tuple

    def loops(self) -> list[tuple[int, object]]:
        """(depth, loop statement) of each loop on the path, outermost first."""
        return [(d, s[2]) for d, s in enumerate(self.path) if s[0] in ("for", "while")]


@dataclass
class Access:
    kind: str  # load | store | atomic
    op: K.Op
    site: Site


@dataclass
class PipeEvent:
    event: K.Event
    site: Site


@dataclass
class Part:
    """A partition with its accesses, events, and what its names are assigned."""

    kp: K.KPartition
    accesses: list[Access] = field(default_factory=list)
    events: list[PipeEvent] = field(default_factory=list)
    #: name -> [(value, site of the assignment)]
    assigns: dict[str, list] = field(default_factory=dict)
    loop_vars: set = field(default_factory=set)
    early_return: bool = False


def _post(e: K.Expr) -> Iterator[K.Expr]:
    for c in K.children(e):
        yield from _post(c)
    yield e


def _pointer(op: K.Op) -> Optional[K.Expr]:
    return op.args[0] if op.args else op.kw("pointer")


def _kind(op: K.Op) -> Optional[str]:
    if op.name == "tl.load":
        return "load"
    if op.name == "tl.store":
        return "store"
    if op.name.startswith(ATOMIC_PREFIX):
        return "atomic"
    return None


def _collect(kp: K.KPartition) -> Part:
    part = Part(kp)

    def nodes(exprs, prefix, i):
        k = 0
        for e in exprs:
            for x in _post(e):
                if isinstance(x, K.Op) and _kind(x):
                    part.accesses.append(Access(_kind(x), x, Site(prefix + (("at", i, k),))))
                elif isinstance(x, K.Event):
                    part.events.append(PipeEvent(x, Site(prefix + (("at", i, k),))))
                k += 1

    def walk(stmts, prefix, top):
        for i, st in enumerate(stmts):
            if isinstance(st, (K.Assign, K.Eval)):
                nodes([st.value], prefix, i)
                if isinstance(st, K.Assign):
                    part.assigns.setdefault(st.target, []).append(
                        (st.value, Site(prefix + (("at", i, 0),))))
            elif isinstance(st, K.Return):
                if st.value is not None:
                    nodes([st.value], prefix, i)
                if not (top and i == len(stmts) - 1):
                    part.early_return = True
            elif isinstance(st, K.For):
                nodes([st.start, st.stop, st.step], prefix, i)
                part.loop_vars.add(st.var)
                walk(st.body, prefix + (("for", i, st),), False)
            elif isinstance(st, K.If):
                nodes([st.cond], prefix, i)
                walk(st.then, prefix + (("if", i, st, "then"),), False)
                walk(st.orelse, prefix + (("if", i, st, "else"),), False)
            elif isinstance(st, K.While):
                inner = prefix + (("while", i, st),)
                nodes([st.cond], inner, -1)
                walk(st.body, inner, False)

    walk(kp.body, (), True)
    return part


# ------------------------------------------------------------------------------------- the model


class Model:
    """Builds z3 terms of one kernel's expressions; symbols of kernel arguments and program ids
    are shared by every instance."""

    def __init__(self, kern: K.Kernel, domains: dict):
        import z3

        self.z3 = z3
        self.kern = kern
        self.params = {p.name for p in kern.params}
        self.domains = domains
        self._sym: dict[str, object] = {}
        #: terms of kernel-body expressions, by id: one value for every partition
        self.shared: dict[int, object] = {}
        #: (partition, id of its outermost loop) -> the loop's start, stop and step terms
        self.bounds: dict[tuple, tuple] = {}
        self.facts: list = []
        self._fresh = 0
        #: unknown's name -> the kernel arguments the expression it stands for reads
        self.hidden: dict[str, set] = {}
        self._edges: dict = {}
        from .tensor_args import body_assigns

        self.prologue_assigns = body_assigns(kern.prologue)

    def sym(self, name: str):
        if name not in self._sym:
            v = self.z3.Int(name)
            self._sym[name] = v
            lo, hi = self.domains.get(name[2:], (None, None)) if name.startswith("a:") else \
                (None, None)
            if lo is not None:
                self.facts.append(v >= lo)
            if hi is not None:
                self.facts.append(v <= hi)
            if name.startswith("pid:"):
                self.facts.append(v >= 0)
            if name.startswith("nprog:"):
                self.facts.append(v >= 1)
        return self._sym[name]

    def fresh(self, tag: str, inst: "Instance"):
        self._fresh += 1
        v = self.z3.Int(f"{tag}#{self._fresh}")
        inst.fresh.append(v)
        return v


@dataclass
class Instance:
    """One dynamic run of a node of a partition: the iteration of each loop on its path."""

    part: Part
    site: Site
    label: str
    #: loop statement id -> (n, value of its variable)
    iters: dict = field(default_factory=dict)
    constraints: list = field(default_factory=list)
    fresh: list = field(default_factory=list)
    #: a loop on its path has a range of unknowns of its own (a nested loop's bound loaded in
    #: the loop around it): an iteration of it may be one the loop does not have
    unsure: bool = False


def instance(model: Model, part: Part, site: Site, label: str) -> Instance:
    """An instance of ``site`` with a fresh iteration for each loop on its path, constrained to
    the loop's range (start, stop and step read at the outer loops' iterations)."""
    z3 = model.z3
    inst = Instance(part, site, label)
    for depth, loop in site.loops():
        n = z3.Int(f"{label}.n{depth}")
        inst.fresh.append(n)
        if isinstance(loop, K.While):
            inst.iters[id(loop)] = (n, None)
            inst.constraints.append(n >= 0)
            continue
        key = (part.kp.name, id(loop))
        if key in model.bounds:
            start, stop, step = model.bounds[key]
        else:
            # read where the loop statement stands (names its block assigns before it hold)
            outer = Instance(part, _statement(site, depth), label, dict(inst.iters), [], [])
            start, stop, step = (term(model, x, outer) for x in (loop.start, loop.stop,
                                                                  loop.step))
            if len(inst.iters) == 0:
                # the partition's outermost loop: its range is read once per run, so every
                # instance of the partition shares it (an event's iteration is then one the
                # loop really has)
                model.bounds[key] = start, stop, step
                model.facts += outer.constraints
            else:
                inst.constraints += outer.constraints
                inst.fresh += outer.fresh
                inst.unsure = inst.unsure or bool(outer.fresh)
        t = start + step * n
        inst.iters[id(loop)] = (n, t)
        inst.constraints += [n >= 0, step != 0, z3.Implies(step > 0, t < stop),
                             z3.Implies(step < 0, t > stop)]
    return inst


def _statement(site: Site, depth: int) -> Site:
    """The site of the loop or ``if`` statement at step ``depth`` of ``site``'s path, where its
    range or condition is read: in the loops above it, after the statements before it."""
    return Site(site.path[:depth] + (("at", site.path[depth][1], 0),))


def condition(model: Model, e: K.Expr, inst: Instance, where: str = "part"):
    """The z3 truth of an ``if``'s condition at ``inst``, or None where it is not read (a
    float, a loaded flag: the branch is then taken to run either way)."""
    z3 = model.z3
    if isinstance(e, K.Compare):
        if not _compare_read(e):
            return None
        a, b = term(model, e.lhs, inst, 24, where), term(model, e.rhs, inst, 24, where)
        return {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b,
                ">=": a >= b}.get(e.op)
    if isinstance(e, K.BoolOp) and e.op in ("and", "or", "&", "|"):
        items = [condition(model, x, inst, where) for x in e.items]
        if e.op in ("and", "&"):
            known = [c for c in items if c is not None]  # a conjunct left out: weaker
            return z3.And(*known) if known else None
        return None if any(c is None for c in items) else z3.Or(*items)
    if isinstance(e, K.UnaryOp) and e.op == "not" and _read_whole(e.operand):
        c = condition(model, e.operand, inst, where)
        return None if c is None else z3.Not(c)
    return None


def _branch_conditions(model: Model, inst: Instance) -> None:
    """Constrain ``inst`` by the conditions of the ``if`` branches on its path (read at the
    iterations of the loops above each ``if``), where they can be read."""
    z3 = model.z3
    for d, s in enumerate(inst.site.path):
        if s[0] != "if":
            continue
        outer = Instance(inst.part, _statement(inst.site, d), inst.label, inst.iters,
                         inst.constraints, inst.fresh)
        c = condition(model, s[2].cond, outer)
        if c is None:
            continue
        if s[3] == "else":
            # only where the condition is read whole is its negation the else branch's
            if not _read_whole(s[2].cond):
                continue
            c = z3.Not(c)
        inst.constraints.append(c)


def _compare_read(e: K.Compare) -> bool:
    """Whether :func:`condition` reads the comparison ``e``: one of the six, of integers the
    model gives signed values (a cast to an unsigned 64-bit type, which the model leaves the
    value it had, makes a negative number a large one, so such a comparison is not read)."""
    return e.op in _COMPARE_OPS and not any(
        isinstance(x, K.Op) and x.name == "to" and len(x.args) > 1
        and isinstance(x.args[1], K.DType) and x.args[1].name == "uint64"
        for x in K.walk_expr(e))


def _read_whole(e: K.Expr) -> bool:
    """Whether :func:`condition` reads ``e`` without leaving a conjunct out."""
    if isinstance(e, K.Compare):
        return _compare_read(e)
    if isinstance(e, K.BoolOp):
        return all(_read_whole(x) for x in e.items)
    if isinstance(e, K.UnaryOp) and e.op == "not":
        return _read_whole(e.operand)
    return False


#: :func:`_loop_value` of a loop variable whose loop body binds it again
REBOUND = object()


def _loop_of(site: Site, name: str):
    """The innermost ``for`` loop of variable ``name`` on the path of ``site``, or None; or
    :data:`REBOUND` where that loop's body binds the name again (an assignment, or a nested
    loop of the same variable, which leaves its last value behind), so that at a use the name
    may hold another value than the loop's."""
    for _, loop in reversed(site.loops()):
        if isinstance(loop, K.For) and loop.var == name:
            if any((isinstance(s, K.Assign) and s.target == name)
                   or (isinstance(s, K.For) and s.var == name) for s in K.walk_stmts(loop.body)):
                return REBOUND
            return loop
    return None


def _loop_value(inst: Instance, name: str):
    """The value of loop variable ``name`` at ``inst`` (:func:`_loop_of`), None, or
    :data:`REBOUND`."""
    loop = _loop_of(inst.site, name)
    return inst.iters[id(loop)][1] if loop is not None and loop is not REBOUND else loop


def _assigned_before(assign: Site, use: Site) -> bool:
    """Whether the assignment at ``assign`` is the value a read at ``use`` sees at the same
    iterations: every loop and branch holding the assignment holds the use too, and in their
    innermost common block the assignment's statement comes first."""
    blocks = assign.path[:-1]
    if len(use.path) <= len(blocks) or use.path[:len(blocks)] != blocks:
        return False
    return assign.path[-1][1] < use.path[len(blocks)][1]


def term(model: Model, e: K.Expr, inst: Instance, depth: int = 24, where: str = "part"):
    """The integer term of ``e`` at ``inst`` (``where``: "part" for a partition body's names,
    "prologue" for the kernel body's). Where it is an unknown made for ``e``, the kernel
    arguments ``e`` reads are recorded as hidden in it (``model.hidden``): a stride among them
    may be a factor of its value, which the stride rule could not see."""
    t = _term(model, e, inst, depth, where)
    z3 = model.z3
    if z3.is_const(t) and not z3.is_int_value(t) and "#" in str(t) and \
            str(t) not in model.hidden:
        model.hidden[str(t)] = _reads(model, e, inst.part, where)
    return t


def _reads(model: Model, e: K.Expr, part: Part, where: str) -> set[str]:
    """The kernel arguments the value of ``e`` may depend on: those it names, and those of
    every value and loop range of each name it reads, through the names those read."""
    todo = list(_names_in(e, where))
    seen, out = set(todo), set()
    while todo:
        node = todo.pop()
        if node[0] == "param":
            out.add(node[1])
            continue
        for nxt in _name_edges(model, part, node):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return out


def _names_in(e: K.Expr, where: str) -> set:
    return {(where, x.id) for x in K.walk_expr(e) if isinstance(x, K.Name)}


def _name_edges(model: Model, part: Part, node: tuple) -> set:
    """What the name ``node`` ((body, name)) reads: its values, its loops' ranges, the binding
    of a partition parameter, or the kernel argument it is."""
    key = (part.kp.name, node)
    if key in model._edges:
        return model._edges[key]
    where, name = node
    out: set = set()
    if where == "part":
        vals = [v for v, _ in part.assigns.get(name, [])]
        body = part.kp.body
        binds = dict(part.kp.bindings)
    else:
        vals = list(model.prologue_assigns.get(name, []))
        body = model.kern.prologue
        binds = {}
    for st in K.walk_stmts(body):
        if isinstance(st, K.For) and st.var == name:
            vals += [st.start, st.stop, st.step]
    for v in vals:
        out |= _names_in(v, where)
    if where == "part" and name in binds:  # its first value, whatever the body assigns
        out |= _names_in(binds[name], "prologue")
    elif name in model.params and (where == "prologue" or name not in binds):
        out.add(("param", name))
    model._edges[key] = out
    return out


def _term(model: Model, e: K.Expr, inst: Instance, depth: int, where: str):
    z3 = model.z3
    if depth <= 0:
        return model.fresh("deep", inst)
    if isinstance(e, K.Const):
        if isinstance(e.value, bool):
            return z3.IntVal(int(e.value))
        if isinstance(e.value, int):
            return z3.IntVal(e.value)
        return model.fresh("const", inst)
    if isinstance(e, K.Global):
        v = e.value
        v = getattr(v, "value", v)  # tl.constexpr(64)
        if isinstance(v, bool):
            return z3.IntVal(int(v))
        if isinstance(v, int):
            return z3.IntVal(v)
        return model.fresh("global", inst)
    if isinstance(e, K.Name):
        return _name(model, e.id, inst, depth, where)
    if isinstance(e, K.Subscript):
        if len(e.index) == 1 and isinstance(e.index[0], int):
            got = _item_of(model, e, inst, where)
            if got is not None:
                item, at, w = got
                if w == "prologue":
                    return _prologue_term(model, item, at, depth - 1)
                return term(model, item, at, depth - 1, w)
            return model.fresh("item", inst)
        return term(model, e.value, inst, depth - 1, where)  # a broadcast: the same values
    if isinstance(e, K.UnaryOp):
        a = term(model, e.operand, inst, depth - 1, where)
        if e.op == "-":
            return -a
        if e.op == "+":
            return a
        if e.op == "~":
            return -a - 1
        return model.fresh("not", inst)
    if isinstance(e, K.BinOp):
        return _binop(model, e, inst, depth, where)
    if isinstance(e, K.Op):
        return _op(model, e, inst, depth, where)
    return model.fresh("expr", inst)


def _tuple_of(model: Model, e: K.Expr, inst: Instance, where: str, depth: int = 16):
    """The tuple expression ``e`` names, with the instance and the body (``where``) its items
    are read at, following names (read where they are assigned) and items of tuples (``xa[0]``
    of ``xa = ((p, M), N)``); None where it is no such tuple."""
    for _ in range(depth):
        if isinstance(e, K.TupleExpr):
            return e, inst, where
        if isinstance(e, K.Subscript):
            got = _item_of(model, e, inst, where, depth - 1)
            if got is None:
                return None
            e, inst, where = got
            continue
        if not isinstance(e, K.Name):
            return None
        vals = _single_value(model, e.id, inst, where)
        if vals is None:
            return None
        e, where, site = vals
        if site is not None:
            inst = _at(inst, site)
    return None


def _item_of(model: Model, e: K.Subscript, inst: Instance, where: str, depth: int = 16):
    """(the expression, the instance and the body it is read at) item ``e`` (``t[k]``, k a
    number) of a tuple stands for, or None."""
    if depth <= 0 or len(e.index) != 1 or not isinstance(e.index[0], int):
        return None
    got = _tuple_of(model, e.value, inst, where, depth - 1)
    if got is None or not -len(got[0].items) <= e.index[0] < len(got[0].items):
        return None
    return got[0].items[e.index[0]], got[1], got[2]


def _at(inst: Instance, site: Site) -> Instance:
    """``inst`` moved to ``site``, a node before it on a path the loops of ``site`` all hold:
    the same iterations of those loops (where a name's value is read: its assignment)."""
    return Instance(inst.part, site, inst.label, inst.iters, inst.constraints, inst.fresh,
                    inst.unsure)


def _single_value(model: Model, name: str, inst: Instance, where: str):
    """The one expression ``name`` holds at ``inst``, where it is read ("part" / "prologue") and
    the site of its assignment in the partition (None for the kernel body's), or None. The
    value is to be read at that site, not at the use: a counter incremented in between, a loop
    variable the use's loop shadows, hold other values there.

    In a partition: the last assignment before the use in a block that holds both (the
    deepest such block, the latest there), where no other assignment of the name stands in
    that block between the two (in the statements from it up to the one that holds the use, a
    loop there included, whose later statements reach the use at its next iteration); the
    binding of a partition parameter the body never assigns."""
    if where == "part":
        part = inst.part
        vals = part.assigns.get(name, [])
        binds = dict(part.kp.bindings)
        if name in part.loop_vars:
            return None
        if not vals:
            return (binds[name], "prologue", None) if name in binds else None
        reaching = [(v, st) for v, st in vals if _assigned_before(st, inst.site)]
        if not reaching:
            # a partition parameter, read before the body assigns it at all: its binding
            top = inst.site.path[0][1]
            if name in binds and all(
                    st.path[0][1] > top or (len(st.path) == 1 and st.path[0][1] == top)
                    for _, st in vals):
                return binds[name], "prologue", None
            return None
        value, site = max(reaching, key=lambda vs: (len(vs[1].path), vs[1].path[-1][1]))
        block = site.path[:-1]
        last = inst.site.path[len(block)][1]
        for _, other in vals:
            if other is site or other.path[:len(block)] != block:
                continue
            if len(other.path) == len(block) + 1 and other.path[-1][1] == last:
                continue  # the assignment whose value holds the use: it reads the name first
            if site.path[-1][1] < other.path[len(block)][1] <= last:
                return None  # assigned again in between (or later in a loop around the use)
        return value, "part", site
    vals = model.prologue_assigns.get(name, [])
    # a kernel argument the body binds again holds the argument before that assignment and
    # its value after: no one value (`base = S + 64; S = 0`)
    if len(vals) == 1 and name not in model.params and not any(
            isinstance(s, K.For) and s.var == name for s in K.walk_stmts(model.kern.prologue)):
        return vals[0], "prologue", None
    return None


def _name(model: Model, name: str, inst: Instance, depth: int, where: str):
    if where == "part":
        v = _loop_value(inst, name)
        if v is REBOUND:
            return model.fresh(f"name:{name}", inst)
        if v is not None:
            return v
    got = _single_value(model, name, inst, where)
    if got is not None:
        if got[1] == "prologue":
            return _prologue_term(model, got[0], inst, depth - 1)
        return term(model, got[0], _at(inst, got[2]), depth - 1, "part")
    if where == "part":
        v = _induction(model, name, inst, depth)
        if v is not None:
            return v
    local = inst.part.assigns if where == "part" else model.prologue_assigns
    if name in model.params and name not in local and \
            (where == "prologue" or name not in dict(inst.part.kp.bindings)):
        return model.sym(f"a:{name}")
    return model.fresh(f"name:{name}", inst)


def _prologue_term(model: Model, e: K.Expr, inst: Instance, depth: int):
    """The term of a kernel-body expression: one value for every partition, so made once and
    shared (its unknowns and their constraints are the kernel's), unless it holds lanes (a
    ``tl.arange`` the body made: each use of it is an axis of its own)."""
    key = id(e)
    if key in model.shared:
        return model.shared[key]
    scratch = Instance(inst.part, Site(()), inst.label)
    t = term(model, e, scratch, depth, "prologue")
    if any(str(v).startswith("lane#") for v in scratch.fresh):
        inst.constraints += scratch.constraints
        inst.fresh += scratch.fresh
        return t
    model.shared[key] = t
    model.facts += scratch.constraints
    return t


def _induction(model: Model, name: str, inst: Instance, depth: int):
    """A counter a loop carries (``row = i`` before the loop, ``row += c`` in its body, ``c`` a
    number): at the use, ``init + c * n`` (``n`` the loop's iteration, plus one past the
    increment); None where ``name`` is no such counter or the use is not in that loop. Where
    ``for`` loops alone stand between the first value and the counter's loop, each directly in
    the one before, and the counter's loop and those inside the outermost of them run a
    constant number of times, ``n`` counts the iterations of the counter's loop over all of
    them (``(n1 * T2 + n2) * T3 + n3``); any other loop or branch between: None. A partition
    parameter the body assigns only in the loop (``y_ptr += 64``) starts from its binding."""
    vals = inst.part.assigns.get(name, [])
    inside = [(v, st) for v, st in vals if len(st.path) > 1 and st.path[-2][0] == "for"]
    binds = dict(inst.part.kp.bindings)
    if len(inside) != 1 or name in inst.part.loop_vars or \
            (len(vals) < 2 and name not in binds):
        return None
    v1, s1 = inside[0]
    before = [(v, st) for v, st in vals if st is not s1]
    if before:
        if any(st.path[:-1] != before[0][1].path[:-1] for _, st in before):
            return None  # the first values in blocks of their own: not one value at the loop
        v0, s0 = max(before, key=lambda vs: vs[1].path[-1][1])  # the last one runs last
    else:  # the binding, before the body's first statement
        v0, s0 = binds[name], Site((("at", -1, 0),))
    if not (isinstance(v1, K.BinOp) and v1.op in ("+", "-") and isinstance(v1.lhs, K.Name)
            and v1.lhs.id == name):
        return None
    step = v1.rhs.value if isinstance(v1.rhs, K.Const) else getattr(v1.rhs, "value", None)
    step = getattr(step, "value", step)
    if isinstance(step, bool) or not isinstance(step, int):
        return None
    step = step if v1.op == "+" else -step
    loop_at = len(s1.path) - 2  # the increment stands directly in a for loop's body
    if loop_at < 0 or s1.path[loop_at][0] != "for":
        return None
    loop_step = s1.path[loop_at]
    use = inst.site.path
    if len(use) <= loop_at + 1 or use[:loop_at + 1] != s1.path[:loop_at + 1]:
        return None  # the use is outside that loop
    loop_site = Site(s1.path[:loop_at] + (("at", loop_step[1], 0),))
    if not _assigned_before(s0, loop_site):
        return None  # the first value is not set before the loop
    between = s1.path[len(s0.path) - 1:loop_at]
    if before and any(isinstance(x, K.Name) and x.id == name for x in K.walk_expr(v0)):
        return None
    n = inst.iters[id(loop_step[2])][0]
    if any(st[0] in ("for", "while") for st in between):
        # loops around the counter's loop: the first value is not set again at their
        # iterations, so the count runs on over them
        if any(st[0] != "for" for st in between):
            return None
        first = len(s0.path) - 1
        count = inst.iters[id(between[0][2])][0]
        for d in range(first + 1, loop_at + 1):
            trips = _trip_count(model, inst, Site(s1.path[:d] + (("at", s1.path[d][1], 0),)),
                                s1.path[d][2])
            if trips is None:
                return None
            count = count * trips + inst.iters[id(s1.path[d][2])][0]
        n = count
    # read where it is assigned
    init = term(model, v0, _at(inst, s0), depth - 1) if before else \
        _prologue_term(model, v0, inst, depth - 1)
    after = use[loop_at + 1][1] > s1.path[loop_at + 1][1]
    return init + step * (n + (1 if after else 0))


def _trip_count(model: Model, inst: Instance, site: Site, loop: K.For) -> Optional[int]:
    """How many times ``loop`` (its statement at ``site``) runs, where its range is numbers."""
    probe = Instance(inst.part, site, "probe", dict(inst.iters), [], [])
    nums = [_number(term(model, x, probe)) for x in (loop.start, loop.stop, loop.step)]
    if None in nums or nums[2] == 0:
        return None
    return len(range(*nums))


def _number(t) -> Optional[int]:
    import z3

    t = z3.simplify(t)
    return t.as_long() if z3.is_int_value(t) else None


def _binop(model: Model, e: K.BinOp, inst: Instance, depth: int, where: str):
    z3 = model.z3
    a = term(model, e.lhs, inst, depth - 1, where)
    b = term(model, e.rhs, inst, depth - 1, where)
    if e.op == "+":
        return a + b
    if e.op == "-":
        return a - b
    if e.op == "*":
        return a * b
    c = _number(b)
    if e.op in ("//", "%", ">>") and c is not None:
        if e.op == ">>":
            if not 0 <= c < 64:
                return model.fresh("shift", inst)
            c = 1 << c
        if c == 0:
            return model.fresh("div0", inst)
        # floor (Python) or truncation (C, Triton's signed integers): |a - c q| < |c|
        q = model.fresh("quot", inst)
        inst.constraints.append(z3.Abs(a - c * q) < abs(c))
        return q if e.op in ("//", ">>") else a - c * q
    if e.op == "<<" and c is not None and 0 <= c < 64:
        return a * (1 << c)
    if e.op == "&":
        m = c if c is not None else _number(a)
        v = model.fresh("and", inst)
        if m is not None and m >= 0:
            inst.constraints += [v >= 0, v <= m]
        return v
    return model.fresh(f"op{e.op}", inst)


def _op(model: Model, e: K.Op, inst: Instance, depth: int, where: str):
    z3 = model.z3
    name = e.name
    if name == "tl.arange" and len(e.args) == 2:
        lo = term(model, e.args[0], inst, depth - 1, where)
        hi = term(model, e.args[1], inst, depth - 1, where)
        v = model.fresh("lane", inst)
        inst.constraints += [v >= lo, v < hi]
        return v
    if name == "tl.program_id":
        axis = _number(term(model, e.args[0], inst, depth - 1, where)) if e.args else 0
        return model.sym(f"pid:{axis}")
    if name == "tl.num_programs":
        axis = _number(term(model, e.args[0], inst, depth - 1, where)) if e.args else 0
        return model.sym(f"nprog:{axis}")
    if name in _SAME_VALUE and e.args:
        return term(model, e.args[0], inst, depth - 1, where)
    if name == "to" and len(e.args) >= 1:
        if len(e.args) > 1 and isinstance(e.args[1], K.Op) and "pointer" in e.args[1].name:
            return model.fresh("cast", inst)  # a pointer cast: offsets in other units
        a = term(model, e.args[0], inst, depth - 1, where)
        narrow = _NARROW.get(e.args[1].name) if len(e.args) > 1 and \
            isinstance(e.args[1], K.DType) else None
        if narrow is None:
            return a  # a cast to int32 or a 64-bit type: the same value (overflow is not
            # modelled; an address adds a uint64 offset modulo 2 ** 64, as a signed one)
        # a cast to fewer bits, or to uint32, keeps the value modulo 2 ** bits, in the type's
        # range (int1: whether it is nonzero)
        lo, hi, mod = narrow
        v = model.fresh("narrow", inst)
        inst.constraints += [v >= lo, v <= hi]
        if mod:
            k = model.fresh("wrap", inst)
            inst.constraints.append(v == a - mod * k)
        return v
    if name == "tl.full" and len(e.args) >= 2:
        return term(model, e.args[1], inst, depth - 1, where)
    if name == "tl.zeros":
        return z3.IntVal(0)
    if name in ("tl.where", "ifexp") and len(e.args) == 3:
        a = term(model, e.args[1], inst, depth - 1, where)
        b = term(model, e.args[2], inst, depth - 1, where)
        v = model.fresh("choice", inst)
        inst.constraints.append(z3.Or(v == a, v == b))
        return v
    if name in ("tl.minimum", "tl.maximum", "min", "max") and len(e.args) == 2:
        a = term(model, e.args[0], inst, depth - 1, where)
        b = term(model, e.args[1], inst, depth - 1, where)
        v = model.fresh("minmax", inst)
        inst.constraints.append(z3.Or(v == a, v == b))
        return v
    if name == "tl.cdiv" and len(e.args) == 2:
        a = term(model, e.args[0], inst, depth - 1, where)
        c = _number(term(model, e.args[1], inst, depth - 1, where))
        if c:
            q = model.fresh("cdiv", inst)
            inst.constraints.append(z3.Abs(a + (c - 1) - c * q) < abs(c))
            return q
    return model.fresh(name.replace(".", "_"), inst)


# ---------------------------------------------------------------------------------- order

def precedes(z3, x: Instance, y: Instance):
    """Whether ``x`` runs before ``y`` in one partition: a z3 formula over their iterations."""
    px, py = x.site.path, y.site.path
    eqs, ors = [], []
    for sx, sy in zip(px, py):
        if sx == sy and sx[0] in ("for", "while"):
            nx, ny = x.iters[id(sx[2])][0], y.iters[id(sy[2])][0]
            ors.append(z3.And(*eqs, nx < ny))
            eqs.append(nx == ny)
            continue
        if sx == sy:
            continue  # the same branch, or (a leaf) the same node
        if sx[1] != sy[1]:
            static = sx[1] < sy[1]
        elif sx[0] == "at" and sy[0] == "at":
            static = sx[2] < sy[2]
        elif sx[0] == "at":
            static = True  # a header (a for's range, an if's condition) before its body
        elif sy[0] == "at":
            static = False
        else:
            static = False  # two branches of one if: never both at one iteration
        if static:
            ors.append(z3.And(*eqs))
        return z3.Or(*ors) if ors else z3.BoolVal(False)
    return z3.Or(*ors) if ors else z3.BoolVal(False)


def surely(z3, ev: Instance, acc: Instance):
    """The condition under which event ``ev`` surely runs in a run where ``acc`` ran: every
    ``if`` on its path holds ``acc`` too, at the same iterations of the loops above it; None
    where an ``if`` that does not hold ``acc``, or a ``while``, stands on its path."""
    conds = []
    for d, s in enumerate(ev.site.path):
        if s[0] == "while":
            return None
        if s[0] == "if":
            if acc.site.path[:d + 1] != ev.site.path[:d + 1]:
                return None
            for _, loop in Site(ev.site.path[:d]).loops():
                conds.append(ev.iters[id(loop)][0] == acc.iters[id(loop)][0])
    return z3.And(*conds)


# ---------------------------------------------------------------------------------- strides

def _children_with_parent(e: K.Expr, parent) -> Iterator[tuple[K.Expr, object]]:
    yield e, parent
    for c in K.children(e):
        yield from _children_with_parent(c, e)


def stride_arguments(kern: K.Kernel) -> set[str]:
    """The kernel arguments the kernel uses only as a factor of a product (``rows * stride``),
    seen through partition bindings and names that only rename them: strides. Two addresses
    are taken to meet only where they hold the same multiple of each stride (a tensor's rows do
    not overlap, whatever the stride's value), as a dependence test of a parametric array
    does. A constexpr argument is none: its value is the launch's own (DEFAULT_CONFIG's, or
    any), not a tensor's row pitch, and rows of a small one overlap (`t * D + arange(0, 64)`
    with D = 32)."""
    params = {p.name for p in kern.params}
    constexprs = {p.name for p in kern.params if p.constexpr}
    from .tensor_args import body_assigns

    pro = body_assigns(kern.prologue)

    def denotes(name: str, local: dict, binds: dict, seen=0) -> set[str]:
        """The arguments ``name`` may hold as it is: those of any of its values that is a
        plain name (`s = S`, also where `s` is assigned something else too)."""
        if seen > 16:
            return set()
        vals = local.get(name, [])
        if vals:
            return set().union(*(denotes(v.id, local, binds, seen + 1) for v in vals
                                 if isinstance(v, K.Name) and v.id != name))
        if name in binds:
            b = binds[name]
            return denotes(b.id, pro, {}, seen + 1) if isinstance(b, K.Name) else set()
        return {name} if name in params else set()

    used_else: set[str] = set()
    used_as_factor: set[str] = set()
    bodies = [(kern.prologue, pro, {})]
    for kp in kern.partitions:
        bodies.append((kp.body, body_assigns(kp.body), dict(kp.bindings)))
    for body, local, binds in bodies:
        for st in K.walk_stmts(body):
            alias_def = isinstance(st, K.Assign) and isinstance(st.value, K.Name)
            for x in K.stmt_exprs(st):
                for node, parent in _children_with_parent(x, st):
                    if not isinstance(node, K.Name):
                        continue
                    for p in denotes(node.id, local, binds):
                        if alias_def and parent is st:
                            continue  # `s = stride`: a new name for it
                        if isinstance(parent, K.BinOp) and parent.op == "*":
                            used_as_factor.add(p)
                        else:
                            used_else.add(p)
    return used_as_factor - used_else - constexprs


def generic_equal(z3, diff, strides: dict):
    """``diff == 0`` with each stride symbol generic: every group of monomials of ``diff`` (the
    difference of two addresses, expanded) holding one product of strides sums to zero, and
    those holding none."""
    groups = _stride_groups(z3, diff, strides)
    return z3.And(*[z3.Sum(*g) == 0 if len(g) > 1 else g[0] == 0 for g in groups.values()])


#: unknowns the model bounds by the terms they are made of (a lane by its range, a quotient by
#: its dividend, a choice by its operands, a cast by its operand): where those are bounded, so
#: are they; any other unknown (a loaded value, a name assigned twice) may be any number
_BOUNDED = ("lane", "quot", "choice", "minmax", "cdiv", "narrow", "wrap", "and")


def _unbounded_columns(z3, diff, strides: set, constraints: list) -> bool:
    """Whether the monomials of ``diff`` that hold no stride (the columns beside the rows) hold
    an unknown that may be any number, itself or through the constraints on the unknowns they
    hold: such a column may be a multiple of a stride (`y + t * S + off` with `off` loaded),
    which no row shows."""
    todo = [x for m in _stride_groups(z3, diff, strides).get((), []) for x in _symbols(m)
            if "#" in x]
    seen: set = set()
    cons = [(c, _symbols(c)) for c in constraints]
    while todo:
        x = todo.pop()
        if x in seen:
            continue
        seen.add(x)
        if x.split("#")[0] not in _BOUNDED:
            return True
        for _, syms in cons:
            if x in syms:
                todo += [y for y in syms if "#" in y and y not in seen]
    return False


def _stride_groups(z3, diff, strides) -> dict:
    """The monomials of ``diff`` (expanded) by the product of strides they hold: sorted stride
    names -> the coefficients beside them."""
    expanded = z3.simplify(diff, som=True)
    monomials = list(expanded.children()) if z3.is_add(expanded) else [expanded]
    groups: dict[tuple, list] = {}
    for m in monomials:
        factors, todo = [], [m]
        while todo:  # a product's factors, nested products flattened
            f = todo.pop()
            if z3.is_mul(f):
                todo += f.children()
            else:
                factors.append(f)
        key, rest = [], []
        for f in factors:
            if z3.is_const(f) and not z3.is_int_value(f) and str(f) in strides:
                key.append(str(f))
            else:
                rest.append(f)
        coef = rest[0] if len(rest) == 1 else (z3.IntVal(1) if not rest else z3.Product(*rest))
        groups.setdefault(tuple(sorted(key)), []).append(coef)
    return groups


# ---------------------------------------------------------------------------------- the check

def _candidates(model: Model, e: K.Expr, inst: Instance, where: str = "part",
                depth: int = 48, seen: frozenset = frozenset()) -> set[str]:
    """The kernel arguments a pointer expression adds with coefficient +1 (through ``+``, the
    left of ``-``, names, broadcasts and hints): the pointer it may be based on."""
    if depth <= 0:
        return set(model.params)
    if isinstance(e, K.Name):
        # the name read at this place: at another (`q = q + 64` reads the q of the assignment
        # before it) it may hold another value
        key = (where, e.id, tuple((x[0], x[1]) for x in inst.site.path))
        if key in seen:
            # a name its own value reads (`b = b + t`): its other values count, and the value
            # it starts with (a partition parameter's binding, a kernel argument)
            return _first_candidates(model, e.id, inst, where, depth, seen)
        seen = seen | {key}
        loop = _loop_of(inst.site, e.id) if where == "part" else None
        if loop is not None and loop is not REBOUND:
            return set()  # a number
        got = _single_value(model, e.id, inst, where)
        if got is not None:  # read where it is assigned, as term() reads it
            at = inst if got[2] is None else Instance(inst.part, got[2], inst.label)
            return _candidates(model, got[0], at, got[1], depth - 1, seen)
        local = inst.part.assigns if where == "part" else model.prologue_assigns
        if e.id in model.params and e.id not in local:
            return {e.id}
        if e.id in local:  # assigned more than once: what any of its values may be based on
            first = _first_candidates(model, e.id, inst, where, depth, seen)
            if where == "part":
                return first.union(*(_candidates(model, v, Instance(inst.part, at, inst.label),
                                                 where, depth - 1, seen)
                                     for v, at in local[e.id]))
            return first.union(*(_candidates(model, v, inst, where, depth - 1, seen)
                                 for v in local[e.id]))
        return set()
    if isinstance(e, K.TupleExpr):
        return set().union(*(_candidates(model, x, inst, where, depth - 1, seen)
                             for x in e.items))
    if isinstance(e, K.BinOp) and e.op in ("+", "-"):
        out = _candidates(model, e.lhs, inst, where, depth - 1, seen)
        if e.op == "+":
            out |= _candidates(model, e.rhs, inst, where, depth - 1, seen)
        return out
    if isinstance(e, K.Subscript):
        if len(e.index) == 1 and isinstance(e.index[0], int):
            got = _item_of(model, e, inst, where)
            if got is not None:
                item, at, w = got
                return _candidates(model, item, at, w, depth - 1, seen)
            # a tuple bound more than once (in two branches): any item of any of its values
            return _candidates(model, e.value, inst, where, depth - 1, seen)
        return _candidates(model, e.value, inst, where, depth - 1, seen)
    if isinstance(e, K.Op):
        if e.name == "tle.gpu.local_ptr":
            return set()  # shared memory
        if e.name == "to" and len(e.args) > 1 and isinstance(e.args[1], K.Op) and \
                "pointer" in e.args[1].name:
            return set(model.params)  # an integer made a pointer: any argument's memory
        if e.name in _SAME_VALUE + ("to",) and e.args:
            return _candidates(model, e.args[0], inst, where, depth - 1, seen)
        if e.name in ("tl.where", "ifexp") and len(e.args) == 3:
            return (_candidates(model, e.args[1], inst, where, depth - 1, seen)
                    | _candidates(model, e.args[2], inst, where, depth - 1, seen))
        if e.name not in _VALUES and not e.name.startswith(ATOMIC_PREFIX):
            # an op the model does not read (a block pointer, a helper of Triton's): whatever
            # pointer any of its operands may be
            out = set()
            for x in list(e.args) + [v for _, v in e.kwargs]:
                out |= _candidates(model, x, inst, where, depth - 1, seen)
            return out
    return set()


def _first_candidates(model: Model, name: str, inst: Instance, where: str, depth: int,
                      seen: frozenset) -> set[str]:
    """The arguments the value ``name`` holds before its function assigns it may be based on:
    a partition parameter's binding, a kernel argument."""
    if where == "part":
        binds = dict(inst.part.kp.bindings)
        if name in binds:
            return _candidates(model, binds[name], inst, "prologue", depth - 1, seen)
    return {name} if name in model.params else set()


def _conflict(a: str, b: str) -> bool:
    return {a, b} not in ({"load"}, {"atomic"})


def _hb_pairs(kern: K.Kernel, first: Part, second: Part) -> Iterator[tuple]:
    """(event of ``first``, event of ``second``, offset) pairs whose hand-off orders what
    ``first`` did before its event before what ``second`` does after its own: a commit or close
    and a wait of the same index (offset 0); a release and an acquire of the index plus the
    capacity, on a pipe with mbarriers."""
    if first.early_return:
        return
    for e in first.events:
        he = e.event.handle
        pipe = kern.pipe(he.pipe)
        if pipe is None:
            continue
        for w in second.events:
            hw = w.event.handle
            if hw.pipe != he.pipe:
                continue
            if he.side == "writer" and e.event.verb in ("commit", "close") and \
                    hw.side == "reader" and w.event.verb == "wait":
                yield e, w, 0
            elif he.side == "reader" and e.event.verb == "release" and not pipe.named and \
                    hw.side == "writer" and w.event.verb == "acquire":
                yield e, w, pipe.capacity


def _ordered(model: Model, kern: K.Kernel, a: Instance, b: Instance, pa: Part, pb: Part):
    """z3: ``a`` happens before ``b`` through some hand-off (existential over the events'
    iterations)."""
    z3 = model.z3
    alts = []
    for e, w, offset in _hb_pairs(kern, pa, pb):
        ie = instance(model, pa, e.site, f"{a.label}>{len(alts)}e")
        iw = instance(model, pb, w.site, f"{b.label}<{len(alts)}w")
        se, sw = surely(z3, ie, a), surely(z3, iw, b)
        if se is None or sw is None:
            continue
        iters = {str(n) for i in (ie, iw) for n, _ in i.iters.values()}
        xe = term(model, e.event.index, ie)
        xw = term(model, w.event.index, iw)
        if ie.unsure or iw.unsure or any(str(v) not in iters for v in ie.fresh + iw.fresh):
            # an index (or a range) with an unknown in it: z3 could choose its value, so the
            # pair is no evidence of an order
            continue
        body = z3.And(*ie.constraints, *iw.constraints, precedes(z3, a, ie), se,
                      precedes(z3, iw, b), sw, xw == xe + offset)
        bound = ie.fresh + iw.fresh
        alts.append(z3.Exists(bound, body) if bound else body)
    return z3.Or(*alts) if alts else z3.BoolVal(False)


def _symbols(t) -> set[str]:
    """The names of the uninterpreted constants in the z3 term ``t``."""
    import z3

    out, todo, seen = set(), [t], set()
    while todo:
        x = todo.pop()
        if x.get_id() in seen:
            continue
        seen.add(x.get_id())
        if z3.is_const(x) and not z3.is_int_value(x):
            out.add(str(x))
        todo += x.children()
    return out


def _solve(solver):
    """z3's answer for one pair (a function of its own, so tests can stand in for it)."""
    return solver.check()


def _describe(model: Model, z, inst: Instance) -> str:
    vals = []
    for _, loop in inst.site.loops():
        if isinstance(loop, K.For):
            t = inst.iters[id(loop)][1]
            vals.append(f"{loop.var} = {z.eval(t, model_completion=True)}")
    return f" at {', '.join(vals)}" if vals else ""


def check_global_races(kern: K.Kernel, domains: Optional[dict] = None) -> None:
    """Refuse (TleError, check ``memory-race``) a pair of accesses of two partitions that may
    reach one global address, one writing, unordered by the pipes; raise :class:`Unproved`
    where z3 cannot decide a pair. ``domains``: each kernel argument's ``tle.assume`` range,
    (min, max) with None for an open end."""
    if len(kern.partitions) < 2:
        return
    parts = [_collect(p) for p in kern.partitions]
    if not any(a.kind != "load" for p in parts for a in p.accesses):
        return
    model = Model(kern, domains or {})
    z3 = model.z3
    strides = {f"a:{n}" for n in stride_arguments(kern) if n not in (domains or {})}
    # each access's pointer and the arguments it may be based on
    info = []
    for p in parts:
        for n, acc in enumerate(p.accesses):
            ptr = _pointer(acc.op)
            if ptr is None:
                continue
            # a pointer into shared memory adds no argument (its candidates are none); one that
            # may be either, or an address holding a value loaded from shared memory, is global
            probe = Instance(p, acc.site, "probe")
            info.append((p, acc, ptr, _candidates(model, ptr, probe)))
    for i, (pa, a, ptr_a, ca) in enumerate(info):
        for pb, b, ptr_b, cb in info[i + 1:]:
            if pa is pb or not _conflict(a.kind, b.kind):
                continue
            common = sorted(ca & cb)
            if not common:
                continue
            ia = instance(model, pa, a.site, "A")
            ib = instance(model, pb, b.site, "B")
            _branch_conditions(model, ia)
            _branch_conditions(model, ib)
            ta, tb = term(model, ptr_a, ia), term(model, ptr_b, ib)
            # a stride only one of the two addresses holds is a number like any other, and so
            # is one a condition, a loop range or another value of the pair reads (`if j < 2 *
            # S`): the columns beside it then depend on it, and may reach past a row
            bound = set().union(*(_symbols(c) for c in ia.constraints + ib.constraints
                                  + model.facts))
            # (held: in the expanded address, where `0 * S` is no term)
            held = [_symbols(z3.simplify(t, som=True)) for t in (ta, tb)]
            # and so is one an unknown of the pair may hide (`off = S` or `off = 2 * S` in one
            # branch, 0 in another: `off` is an unknown, a multiple of S that the rows do not
            # show)
            hidden = set().union(*(model.hidden.get(n, set()) for n in
                                   _symbols(ta) | _symbols(tb) | bound))
            both = (strides & held[0] & held[1]) - bound - {f"a:{n}" for n in hidden}
            if both and _unbounded_columns(z3, ta - tb, both, ia.constraints + ib.constraints
                                           + model.facts):
                both = set()
            meet = generic_equal(z3, ta - tb, both) if both else ta == tb
            solver = z3.Solver()
            solver.set("timeout", PAIR_TIMEOUT_MS)
            solver.add(*ia.constraints, *ib.constraints, meet, *model.facts)
            if _solve(solver) == z3.unsat:
                continue  # apart, whatever orders them (no quantifier to decide)
            solver = z3.Solver()
            solver.set("timeout", PAIR_TIMEOUT_MS)
            solver.add(*ia.constraints, *ib.constraints, meet,
                       z3.Not(_ordered(model, kern, ia, ib, pa, pb)),
                       z3.Not(_ordered(model, kern, ib, ia, pb, pa)))
            solver.add(*model.facts)  # after the terms: the symbols they made
            got = _solve(solver)
            if got == z3.unsat:
                continue
            first, second = (a, b) if (a.op.loc.line or 0) <= (b.op.loc.line or 0) else (b, a)
            where = second.op.loc if second.op.loc.line else pb.kp.loc
            arg = common[0]
            if got == z3.unknown:
                raise Unproved(
                    f"partitions '{pa.kp.name}' ({a.kind} at line {a.op.loc.line}) and "
                    f"'{pb.kp.name}' ({b.kind} at line {b.op.loc.line}) access global memory "
                    f"through `{arg}`, one writing: whether they can reach one address with no "
                    f"pipe hand-off ordering them was not decided ({solver.reason_unknown()}); "
                    f"a `tle.assume` on the arguments in their addresses, or addresses apart by "
                    f"constants, lets it be proved", where)
            z = solver.model()
            base = model.sym(f"a:{arg}")
            off = z.eval(ta - base, model_completion=True)
            # the integer arguments and program ids the two addresses read, at the witness
            named = sorted(n for n in _symbols(ta) | _symbols(tb)
                           if (n.startswith("a:") and n[2:] not in ca | cb)
                           or n.startswith("pid:"))
            given = ", ".join(f"{n[2:] if n.startswith('a:') else 'program_id(' + n[4:] + ')'}"
                              f" = {z.eval(model.z3.Int(n), model_completion=True)}"
                              for n in named)
            given = f" (with {given})" if given else ""
            raise TleError(
                f"partitions '{pa.kp.name}' ({a.kind} at line {a.op.loc.line}"
                f"{_describe(model, z, ia)}) and '{pb.kp.name}' ({b.kind} at line "
                f"{b.op.loc.line}{_describe(model, z, ib)}) can reach the same global address "
                f"`{arg}` + {off}{given}, one writing, and no pipe hand-off orders the two (a commit "
                f"after the one and the wait of its index before the other, or a release and "
                f"the acquire a capacity later): a race; hand the data over in a pipe slot, "
                f"order the accesses with a hand-off, or keep them in one partition",
                where, check="memory-race")

