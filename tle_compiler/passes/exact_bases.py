"""A Program whose derived params are affine in its base params, rewritten over the bases alone.

Derived params are checked as if independent of what they are computed from (witness.py): sound
for a verdict without a fault, but a fault found there may need a combination no launch gives,
and then the best the search from base values can say is "bounded". When every derived param is
an affine function of the base params (``num_programs(a) = program_id(a) + 1 + later_programs_a``,
frontend/params.py's ``launch_grid``: a program id is below the program count of its axis),
substituting the definitions into the Program gives one whose params, the bases, are independent
with the domains they have: exactly the launches, no more. Its instances are the original's at
the values the definitions give (the same event sequences, position for position), so checking
it proves or refutes the original: a fault there is one a launch gives, and the cutoff theorem
(cutoff.py) applies to it as to any program.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping, Optional

from ..ir.derived import Bounds, Definition, Derived, bounds_of, derive
from ..ir.expr import Affine, BoolOp, Compare, Cond, ModCompare, Not
from ..ir.nodes import Access, Event, For, Param, Program, Stmt
from .witness import base_params


def _affine(d: Definition, env: Mapping[str, Affine]) -> Optional[Affine]:
    """``d`` as an affine expression over the names ``env`` maps to (None: not affine)."""
    xs: list[Affine] = []
    for a in d.args:
        x = _affine(a, env) if isinstance(a, Definition) else a.substitute(env)
        if x is None:
            return None
        xs.append(x)
    if d.op == "+":
        return xs[0] + xs[1]
    if d.op == "-":
        return xs[0] - xs[1]
    if d.op == "*" and (xs[0].is_const or xs[1].is_const):
        return xs[0].scale(xs[1].const) if xs[1].is_const else xs[1].scale(xs[0].const)
    return None


def _meet(p: Param, b: Bounds) -> Param:
    """``p`` with its domain narrowed to the interval ``b``."""
    lo = b[0] if p.min is None else p.min if b[0] is None else max(p.min, b[0])
    hi = b[1] if p.max is None else p.max if b[1] is None else min(p.max, b[1])
    return replace(p, min=lo, max=hi)


def _cond(c: Cond, env: Mapping[str, Affine]) -> Cond:
    """``c`` with ``env`` substituted; a comparison whose sides share a param after it is made
    one of their difference with 0 (``p < p + 1 + later`` is ``-1 - later < 0``), so a param
    that cancels out is no longer one the condition depends on."""
    if isinstance(c, Compare):
        lhs, rhs = c.lhs.substitute(env), c.rhs.substitute(env)
        if (c.lhs.variables | c.rhs.variables) & env.keys() and lhs.variables & rhs.variables:
            return Compare(lhs - rhs, c.op, Affine.of(0))
        return Compare(lhs, c.op, rhs)
    if isinstance(c, ModCompare):
        return replace(c, expr=c.expr.substitute(env))
    if isinstance(c, BoolOp):
        return BoolOp(c.op, tuple(_cond(i, env) for i in c.items))
    return Not(_cond(c.item, env))


def _body(body: tuple[Stmt, ...], env: Mapping[str, Affine], used: set[str]) -> tuple[Stmt, ...]:
    out: list[Stmt] = []
    for s in body:
        if isinstance(s, (Event, Access)):
            s = replace(s, index=s.index.substitute(env))
            used |= s.index.variables
        elif isinstance(s, For):
            s = replace(s, start=s.start.substitute(env), stop=s.stop.substitute(env),
                        body=_body(s.body, env, used))
            used |= s.start.variables | s.stop.variables
        else:
            s = replace(s, cond=_cond(s.cond, env), then=_body(s.then, env, used),
                        orelse=_body(s.orelse, env, used))
            used |= s.cond.variables
        out.append(s)
    return tuple(out)


def over_bases(program: Program) -> Optional[Program]:
    """``program`` with every derived param that is affine in the base params replaced by its
    definition, over the base params it uses (in ``base_params`` order, with their domains);
    None when none is. A base param is one a launch chooses freely within its domain (a kernel
    argument, a program id, the programs after it), so those params are independent, as the
    checks treat them. A derived param that is not affine (``tl.cdiv(num_programs(0) -
    program_id(0), 2)``) stays a derived param, its definition over the bases and the kept ones,
    its domain narrowed to what that definition gives over their domains (``bounds_of``: the
    program count being the program id plus one plus the programs after it, that one is
    ``>= 1``): still checked as independent, which covers every launch."""
    if not program.derived:
        return None
    bases = base_params(program)
    domains: dict[str, Bounds] = {p.name: (p.min, p.max) for p in bases}
    env: dict[str, Affine] = {}
    kept: list[Derived] = []
    for d in program.derived:
        a = _affine(d.definition, env)
        if a is not None:
            env[d.name] = a
            continue
        definition = d.definition.substitute(env)
        kept.append(replace(d, definition=definition))
        domains[d.name] = bounds_of(definition, domains)
    if not env:
        return None  # nothing to substitute: the Program as it is
    used: set[str] = set()
    parts = tuple(replace(p, body=_body(p.body, env, used)) for p in program.partitions)
    own = {p.name: p for p in program.params}
    kept_params = [_meet(own[d.name], domains[d.name]) for d in kept if d.name in own]
    if any(p.min is not None and p.max is not None and p.min > p.max for p in kept_params):
        return None  # no launch reaches the code that uses it: left to the search from bases
    needed = used | {v for d in kept for v in d.definition.variables}
    params = tuple([p for p in bases if p.name in used]
                   + [p for p in kept_params if p.name in used])
    names = {p.name for p in params}
    return replace(program, params=params, partitions=parts, derived=tuple(kept),
                   bases=tuple(p for p in bases if p.name in needed and p.name not in names))


def launch_values(program: Program, values: Mapping[str, int]) -> Optional[dict[str, int]]:
    """The original Program's params at the base values ``values`` (a combination of
    :func:`over_bases`'s params); a base it no longer uses changes no event, and takes the value
    of its domain nearest zero where a definition names it. None where a definition is
    undefined."""
    def nearest(p) -> int:
        return p.min if p.min is not None and p.min > 0 else (
            p.max if p.max is not None and p.max < 0 else 0)

    base = {p.name: values.get(p.name, nearest(p)) for p in base_params(program)}
    env = derive(program.derived, base)
    if env is None:
        return None
    if any(env.get(k, v) != v for k, v in values.items()):
        return None  # a derived param kept independent there: these bases do not give its value
    return {p.name: env[p.name] for p in program.params}


__all__ = ["bounds_of", "launch_values", "over_bases"]
