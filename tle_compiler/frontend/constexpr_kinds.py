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


def _uses(body, names: dict[str, str], found: set[str]) -> None:
    """The arguments (``names``: a name of ``body`` -> the argument it holds) that the
    statements of ``body`` every compile reaches use where Triton takes only integers."""
    for s in body:
        if isinstance(s, K.For):
            for e in (s.start, s.stop, s.step):
                if isinstance(e, K.Name) and e.id in names:
                    found.add(names[e.id])
            for e in (s.start, s.stop, s.step):
                _expr_uses(e, names, found)
            if not s.static:  # a static_range body may be unrolled zero times
                _uses(s.body, names, found)
        elif isinstance(s, K.While):
            _expr_uses(s.cond, names, found)
            _uses(s.body, names, found)
        elif isinstance(s, K.If):
            _expr_uses(s.cond, names, found)  # the condition is compiled; the branches may not be
        elif isinstance(s, (K.Assign, K.Eval)):
            _expr_uses(s.value, names, found)
        elif isinstance(s, K.Return):
            if s.value is not None:
                _expr_uses(s.value, names, found)
            return  # Triton compiles nothing after a return in its block


def _expr_uses(e, names: dict[str, str], found: set[str]) -> None:
    if isinstance(e, K.BoolOp) or isinstance(e, K.Op) and e.name == "ifexp":
        return  # an operand may not be compiled (a constexpr condition picks one)
    if isinstance(e, K.Op):
        if e.name == "tl.arange":
            ends = list(e.args[:2]) + [v for k, v in e.kwargs if k in ("start", "end")]
            found.update(names[x.id] for x in ends if isinstance(x, K.Name) and x.id in names)
        elif e.name in ("tl.zeros", "tl.full"):
            shape = e.args[0] if e.args else e.kw("shape")
            if isinstance(shape, K.TupleExpr):
                found.update(names[x.id] for x in shape.items
                             if isinstance(x, K.Name) and x.id in names)
    for c in K.children(e):
        _expr_uses(c, names, found)
