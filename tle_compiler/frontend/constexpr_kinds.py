"""Which constexpr arguments of a kernel its own code proves integers, for the memory-race check
(frontend/global_races.py, race_terms.floating).

A constexpr that neither DEFAULT_CONFIG's ``constexprs`` nor ``--param`` gives a value is a
launch's to choose, and a launch may pass a float (``SCALE=0.5``): Triton then computes
``t * 2 * SCALE`` in floats, and ``(t * 2 * SCALE).to(tl.int32)`` truncates (1 at t = 1, odd),
which the integer reading ``2 * t * SCALE`` never is. The race check reads such a constexpr as a
float (a cast of it any value of the type, a comparison of it either truth) unless the kernel
compiles only for an integer value of it: it is, by itself, an argument Triton 3.6 refuses
anything but an integer for, in a statement every compile of the kernel reaches:

- a bound or step of a ``for`` loop over ``range`` / ``tl.range`` (code_generator.visit_For:
  "For loop bounds and step must all be ints") or ``tl.static_range`` (Python's ``range`` of
  its values);
- ``tl.arange``'s start or end (semantic.arange: "arange's arguments must be of type
  tl.constexpr", an ``isinstance(.., int)`` check);
- an element of the shape of ``tl.zeros`` / ``tl.full`` (_utils.validate_block_shape: "Shape
  element ... must have type `constexpr[int]`");
- an element of a pipe field's or a free shared buffer's shape (``tle.gpu.alloc``: Gluon's
  allocate_shared checks "all elements of 'shape' must be integers").

Only uses every compile reaches count: none inside an ``if`` (a branch on a constexpr is
compiled only when taken), a conditional expression, an ``and`` / ``or``, or the body of a
``tl.static_range`` loop (unrolled, possibly zero times), nor after a ``return``; and only the
name itself (``tl.arange(0, int(SCALE * 64))`` proves nothing of SCALE), where it still holds
the argument (a partition's parameter bound to it, neither rebound in the partition nor in the
kernel body)."""

from __future__ import annotations

from ..ir import kernel as K


def integer_constexprs(kern: K.Kernel) -> frozenset[str]:
    """The constexpr arguments of ``kern`` its own code proves integers (module docstring)."""
    constexprs = {p.name for p in kern.params if p.constexpr}
    rebound = _assigned(kern.prologue)
    kernel_level = {n: n for n in constexprs if n not in rebound}
    found: set[str] = set()
    for d in kern.pipes:
        for f in d.fields:
            found.update(_shape_names(f.shape, kernel_level))
    for b in kern.buffers:
        found.update(_shape_names(b.shape, kernel_level))
    _uses(kern.prologue, kernel_level, found)
    for part in kern.partitions:
        own = _assigned(part.body)
        names = {n: e.id for n, e in part.bindings
                 if isinstance(e, K.Name) and e.id in kernel_level and n not in own}
        _uses(part.body, names, found)
    return frozenset(found)


def _assigned(body) -> set[str]:
    """The names ``body`` binds anywhere (assignments, loop variables)."""
    out: set[str] = set()
    for s in K.walk_stmts(body):
        if isinstance(s, K.Assign):
            out.add(s.target)
        elif isinstance(s, K.For):
            out.add(s.var)
    return out


def _shape_names(shape, names: dict[str, str]) -> set[str]:
    """The arguments a shape of names (a buffer's: ints or constexpr names) spells."""
    out = set()
    for d in shape:
        n = d if isinstance(d, str) else d.id if isinstance(d, K.Name) else None
        if n in names:
            out.add(names[n])
    return out


def _reached(body, bound, expr) -> None:
    """Calls ``bound(e)`` on every bound and step of a ``for`` loop and ``expr(e)`` on every
    expression of the statements of ``body`` that every compile reaches (a ``tl.static_range``
    body may be unrolled zero times; an ``if``'s branches may not be compiled; nothing after a
    ``return`` in its block is)."""
    for s in body:
        if isinstance(s, K.For):
            for e in (s.start, s.stop, s.step):
                bound(e)
            for e in (s.start, s.stop, s.step):
                expr(e)
            if not s.static:
                _reached(s.body, bound, expr)
        elif isinstance(s, K.While):
            expr(s.cond)
            _reached(s.body, bound, expr)
        elif isinstance(s, K.If):
            expr(s.cond)  # the condition is compiled; the branches may not be
        elif isinstance(s, (K.Assign, K.Eval)):
            expr(s.value)
        elif isinstance(s, K.Return):
            if s.value is not None:
                expr(s.value)
            return


def _compiled(e, visit) -> None:
    """Calls ``visit`` on ``e`` and on every subexpression of it every compile reaches (not
    the operands of an ``and`` / ``or`` or a conditional expression: a constexpr condition
    picks one)."""
    if isinstance(e, K.BoolOp) or isinstance(e, K.Op) and e.name == "ifexp":
        return
    visit(e)
    for c in K.children(e):
        _compiled(c, visit)


def _uses(body, names: dict[str, str], found: set[str]) -> None:
    """The arguments (``names``: a name of ``body`` -> the argument it holds) that the
    statements of ``body`` every compile reaches use where Triton takes only integers."""
    def bound(e):
        if isinstance(e, K.Name) and e.id in names:
            found.add(names[e.id])

    def visit(e):
        if not isinstance(e, K.Op):
            return
        if e.name == "tl.arange":
            ends = list(e.args[:2]) + [v for k, v in e.kwargs if k in ("start", "end")]
            found.update(names[x.id] for x in ends if isinstance(x, K.Name) and x.id in names)
        elif e.name in ("tl.zeros", "tl.full"):
            shape = e.args[0] if e.args else e.kw("shape")
            if isinstance(shape, K.TupleExpr):
                found.update(names[x.id] for x in shape.items
                             if isinstance(x, K.Name) and x.id in names)

    _reached(body, bound, lambda e: _compiled(e, visit))


#: the operators whose result is a float, or a refusal, where an operand is a float (Triton's
#: arithmetic of a float beside an integer or of two floats; a bit operation or a shift of one
#: does not compile)
_ARITH = ("+", "-", "*", "/", "//", "%", "**", "&", "|", "^", "<<", ">>")
#: ops whose value is a float, or a refusal, where one of their operands is a float (hints,
#: broadcasts, the elementwise min / max / abs, a ceiling division); ``tl.where``'s values
_SAME = ("tl.multiple_of", "tl.max_contiguous", "tl.max_constancy", "tl.broadcast_to",
         "tl.reshape", "tl.view", "tl.expand_dims", "tl.broadcast", "tl.abs", "tl.maximum",
         "tl.minimum", "min", "max", "builtins.min", "builtins.max", "tl.cdiv")


class _Scope:
    """Where :func:`_arith_names` reads a name: the arguments it holds (``names``), the values
    of names bound once (``single``), and for a partition its parameters' bindings read in the
    kernel body (``binds``, ``outer``)."""

    def __init__(self, names: dict, single: dict, binds: dict = None, outer=None,
                 args: frozenset = frozenset()):
        self.names, self.single, self.binds, self.outer = names, single, binds or {}, outer
        #: the kernel arguments (in the kernel body): a name bound once whose value reads
        #: itself (`N = (N << 28) >> 28`) reads the argument there
        self.args = args


def integer_arguments(kern: K.Kernel) -> frozenset[str]:
    """The arguments of ``kern`` (run-time or constexpr) its own code proves no floats: a
    launch may pass a float for a run-time argument no signature types (Triton's JIT types a
    Python float fp32), or for a constexpr of no value, and the race check reads such an
    argument as a float (a cast of it any value of the type, a comparison of it either truth:
    race_terms.floating) unless it takes
    part, through arithmetic (:data:`_ARITH`, whose result is a float of a float operand, or a
    refusal), the ops of :data:`_SAME`, ``tl.where``'s values, names bound once and the values
    a partition's parameters are bound to, in a statement every compile reaches (as for
    :func:`integer_constexprs`), in

    - a bound or step of a ``for`` loop (Triton 3.6: "For loop bounds and step must all be
      ints"), or
    - the pointer of a load, a store or an atomic (a pointer plus a float is refused:
      "unsupported operand types"; the pointer argument itself is no float either)."""
    runtime = {p.name for p in kern.params}
    found: set[str] = set()
    rebound = _assigned(kern.prologue)
    kernel_level = {n: n for n in runtime if n not in rebound}
    top = _Scope(kernel_level, _single_assigns(kern.prologue), args=frozenset(runtime))
    _integer_uses(kern.prologue, top, found)
    for part in kern.partitions:
        own = _assigned(part.body)
        binds = {n: e for n, e in part.bindings if n not in own}
        _integer_uses(part.body, _Scope({}, _single_assigns(part.body), binds, top), found)
    return frozenset(found)


def _single_assigns(body) -> dict:
    """The names ``body`` assigns exactly once, in a statement every compile reaches (no ``if``
    or ``tl.static_range`` body around it): name -> the value assigned."""
    count: dict[str, int] = {}
    for s in K.walk_stmts(body):
        if isinstance(s, K.Assign):
            count[s.target] = count.get(s.target, 0) + 1
        elif isinstance(s, K.For):
            count[s.var] = count.get(s.var, 0) + 2  # a loop variable: no value of its own
    out: dict = {}

    def walk(stmts):
        for s in stmts:
            if isinstance(s, K.Assign) and count.get(s.target) == 1:
                out[s.target] = s.value
            elif isinstance(s, K.For) and not s.static:
                walk(s.body)
            elif isinstance(s, K.While):
                walk(s.body)
            elif isinstance(s, K.Return):
                return
    walk(body)
    return out


def _integer_uses(body, scope: _Scope, found: set[str]) -> None:
    """The arguments that the statements of ``body`` every compile reaches use where Triton
    takes no float: a loop's bounds and step, and the pointer of a load, a store or an
    atomic."""
    def visit(e):
        if isinstance(e, K.Op) and (e.name in ("tl.load", "tl.store") or
                                    e.name.startswith("tl.atomic_")):
            ptr = e.args[0] if e.args else e.kw("pointer")
            if ptr is not None:
                found.update(_arith_names(ptr, scope))

    _reached(body, lambda e: found.update(_arith_names(e, scope)),
             lambda e: _compiled(e, visit))


def _arith_names(e, scope: _Scope, depth: int = 24, seen: frozenset = frozenset()) -> set[str]:
    """The arguments whose float would make ``e`` a float (or fail to compile): those it reads
    through the arithmetic of :data:`_ARITH`, a negation, the ops of :data:`_SAME`,
    ``tl.where``'s values, broadcasts, names bound once and partition parameters' bindings."""
    if depth <= 0:
        return set()
    sub = lambda x, sc=scope: _arith_names(x, sc, depth - 1, seen)  # noqa: E731
    if isinstance(e, K.Name):
        if e.id in scope.names:
            return {scope.names[e.id]}
        if e.id in seen:
            # the value before the one assignment of a name that reads itself: the argument
            # (kernel body), the parameter's binding (partition)
            if e.id in scope.args:
                return {e.id}
            if e.id in scope.binds and scope.outer is not None:
                return _arith_names(scope.binds[e.id], scope.outer, depth - 1)
            return set()
        if e.id in scope.single:
            return _arith_names(scope.single[e.id], scope, depth - 1, seen | {e.id})
        if e.id in scope.binds and scope.outer is not None:
            return _arith_names(scope.binds[e.id], scope.outer, depth - 1)
        return set()
    if isinstance(e, K.BinOp) and e.op in _ARITH:
        return sub(e.lhs) | sub(e.rhs)
    if isinstance(e, K.UnaryOp) and e.op in ("-", "+", "~"):
        return sub(e.operand)
    if isinstance(e, K.Subscript) and not all(isinstance(i, int) for i in e.index):
        return sub(e.value)  # a broadcast
    if isinstance(e, K.Op) and e.name in _SAME:
        out: set[str] = set()
        for a in e.args[:1] if e.name.startswith(("tl.multiple_of", "tl.max_", "tl.broad",
                                                   "tl.reshape", "tl.view", "tl.expand"))\
                else e.args:
            out |= sub(a)
        return out
    if isinstance(e, K.Op) and e.name == "tl.where" and len(e.args) == 3:
        return sub(e.args[1]) | sub(e.args[2])
    return set()
