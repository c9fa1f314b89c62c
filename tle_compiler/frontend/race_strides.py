"""Stride arguments, for the memory-race check (frontend/global_races.py): a kernel argument used
only as a factor of products separates the rows it indexes, so two addresses that both hold it
meet only where they hold the same multiple of it and the same rest (a dependence test of a
parametric array), unless a column beside it may be any number."""

from __future__ import annotations

from typing import Iterator

from ..ir import kernel as K
from .race_terms import const_name, symbols


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
    groups = stride_groups(z3, diff, strides)
    return z3.And(*[z3.Sum(*g) == 0 if len(g) > 1 else g[0] == 0 for g in groups.values()])


#: unknowns the model bounds by the terms they are made of (a lane by its range, a quotient by
#: its dividend, a choice by its operands, a cast by its operand, a wrap's multiple by the value
#: it wraps: race_wraps.py): where those are bounded, so are they; any other unknown (a loaded
#: value, a name assigned twice) may be any number
_BOUNDED = ("lane", "quot", "choice", "minmax", "cdiv", "narrow", "wrap", "and", "i32wrap",
            "i64wrap")
#: the multiple of the modulus a pair's addresses may wrap by (race_wraps.address_wrap): no
#: column of the tensor but the address space's, the rows beside it not wrapping onto each
#: other as they do not overlap; the columns agree modulo it
_ADDRESS = "addrwrap"


def unbounded_columns(z3, diff, strides: set, constraints: list) -> bool:
    """Whether the monomials of ``diff`` that hold no stride (the columns beside the rows) hold
    an unknown that may be any number, itself or through the constraints on the unknowns they
    hold: such a column may be a multiple of a stride (`y + t * S + off` with `off` loaded),
    which no row shows."""
    todo = [x for m in stride_groups(z3, diff, strides).get((), []) for x in symbols(m)
            if "#" in x and x.split("#")[0] != _ADDRESS]
    seen: set = set()
    cons = [(c, symbols(c)) for c in constraints]
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


def stride_groups(z3, diff, strides) -> dict:
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
            name = const_name(z3, f)
            if name in strides:
                key.append(name)
            else:
                rest.append(f)
        coef = rest[0] if len(rest) == 1 else (z3.IntVal(1) if not rest else z3.Product(*rest))
        groups.setdefault(tuple(sorted(key)), []).append(coef)
    return groups



def row_splits(z3, ta, tb, bases: set, candidates: set) -> list:
    """The ways to read two addresses as rows and columns of a row pitch ``S`` (an integer
    argument of ``candidates`` both hold, not taken as a stride): ``(S, Ra, Ca, Rb, Cb)`` where
    address ``ta`` less its base is ``S * Ra + Ca`` (``S`` in no monomial of ``Ra`` or ``Ca``)
    and ``tb`` likewise, the bases cancelling (``ta - tb`` is ``S * (Ra - Rb) + Ca - Cb``).
    Where ``0 <= Ca < S`` and ``0 <= Cb < S`` hold (a mask ``cols < N`` beside columns from 0:
    the caller proves it), ``ta == tb`` is ``Ra == Rb and Ca == Cb`` -- integer arithmetic, no
    promise of the launch: ``S * (Ra - Rb)`` lies strictly between ``-S`` and ``S``, so it is
    0. z3 rarely finds that nonlinear step in its budget itself. ``bases``: the pointer
    arguments' symbols, taken off each address."""
    zero = [(z3.Int(n), z3.IntVal(0)) for n in sorted(bases)]
    out = []
    for s in sorted(candidates):
        sym = z3.Int(s)
        parts = []
        for t in (ta, tb):
            t0 = z3.substitute(t, *zero) if zero else t
            groups = stride_groups(z3, t0, {s})
            if set(groups) - {(), (s,)} or (s,) not in groups:
                break  # the pitch squared, or in no row
            parts.append(tuple(z3.Sum(*g) if len(g) > 1 else g[0]
                               for g in (groups[(s,)], groups.get((), [z3.IntVal(0)]))))
        if len(parts) != 2:
            continue
        (ra, ca), (rb, cb) = parts
        same = z3.simplify((ta - tb) - (sym * ra + ca - sym * rb - cb), som=True)
        if z3.is_int_value(same) and same.as_long() == 0:
            out.append((sym, ra, ca, rb, cb))
    return out


def digit_splits(z3, x, y) -> list:
    """The ways to read the integer terms ``x`` and ``y`` as ``c * X + Y`` (``c`` a number of
    the coefficients of their monomials, above 1, greatest first: ``128 * pm + lane``):
    ``(c, Xx, Yx, Xy, Yy)``, ``X`` the monomials whose coefficient ``c`` divides (divided by
    it), ``Y`` the others. Where ``0 <= Yx < c`` and ``0 <= Yy < c`` hold (the caller proves
    it), ``x == y`` is ``Xx == Xy and Yx == Yy``, as a row pitch splits an address
    (:func:`row_splits`)."""

    def monomials(t):
        t = z3.simplify(t, som=True)
        out = []
        for m in (t.children() if z3.is_add(t) else [t]):
            if z3.is_int_value(m):
                out.append((m.as_long(), z3.IntVal(1)))
                continue
            factors = m.children() if z3.is_mul(m) else [m]
            coef, rest = 1, []
            for f in factors:
                if z3.is_int_value(f):
                    coef *= f.as_long()
                else:
                    rest.append(f)
            out.append((coef, rest[0] if len(rest) == 1 else z3.Product(*rest)))
        return out

    mx, my = monomials(x), monomials(y)
    coefs = sorted({abs(c) for c, _ in mx + my if abs(c) > 1}, reverse=True)
    out = []
    for c in coefs[:3]:
        parts = []
        for ms in (mx, my):
            hi = [k // c * v for k, v in ms if k % c == 0]
            lo = [k * v for k, v in ms if k % c != 0]
            parts += [z3.Sum(*hi) if hi else z3.IntVal(0), z3.Sum(*lo) if lo else z3.IntVal(0)]
        out.append((c, *parts))
    return out
