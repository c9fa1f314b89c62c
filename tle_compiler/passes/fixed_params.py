"""The values a caller fixes (``tle-dump --param``, ``run_pipeline(params=...)``), with the derived
params they determine.

A caller may fix any param of the Program, or a base param the derived ones are computed from
(``Program.bases``: ``N`` of ``M = N // 2``, which need not be a Program param itself). A derived
param whose definition uses only fixed values is fixed too, to the value the definition gives
(C's ``//`` and ``%`` on runtime integers, ir/derived.py), so ``--param N=4`` checks the one
launch ``N = 4`` gives (``M = 2``) instead of every ``M`` beside it; and a printed witness
``when N=1 (M=0, K=1)`` can be checked again with ``--param N=1``.
"""

from __future__ import annotations

from typing import Mapping, Optional

from ..ir.nodes import Param, Program


def fixable(program: Program) -> dict[str, Param]:
    """The params a caller may fix, by name: the Program's, and the bases of its derived ones."""
    out = {p.name: p for p in program.params}
    for b in program.bases:
        out.setdefault(b.name, b)
    return out


def _shown(values: Mapping[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in values.items())


def fix(program: Program, given: Mapping[str, int]) -> dict[str, int]:
    """``given``, with every derived Program param its definition determines from the values
    given (and from those derived before it) added. A ValueError when a derived param given
    disagrees with the value its definition gives, when a definition is undefined there (a
    division by zero, a negative exponent or shift: the message says which), or when a derived
    value lies outside its param's domain (a ``tle.assume`` a launch with these values fails)."""
    out = dict(given)
    if not given:
        return out
    if not program.derived:
        return _fix_computed(program, out)
    names = fixable(program)
    params = {p.name: p for p in program.params}
    base = {k: v for k, v in given.items() if k in names}
    env = dict(base)
    for d in program.derived:
        if not d.definition.variables <= env.keys():
            continue
        used = {k: env[k] for k in sorted(d.definition.variables)}
        value = d.definition.eval(env)
        if value is None:
            raise ValueError(f"the values given ({_shown(base)}) leave {d.name} undefined: {d} "
                             f"{d.definition.why_undefined(env)} at {_shown(used)}")
        if d.name in env:
            if env[d.name] != value:
                raise ValueError(f"--param {d.name}={env[d.name]} disagrees with the other "
                                 f"values given: {d} is {value} at {_shown(used)}")
            continue
        env[d.name] = value
        p = params.get(d.name)
        if p is None:  # a value computed on the way to a param: not one of the Program's
            continue
        if not p.contains(value):
            raise ValueError(f"the values given ({_shown(base)}) give {d.name} = {value} ({d}), "
                             f"outside the domain of {d.name} ({p.domain()})")
        out[d.name] = value
    return _fix_computed(program, out)


def _fix_computed(program: Program, out: dict[str, int]) -> dict[str, int]:
    """``out`` with each computed param (Program.computed) whose branch the values in ``out``
    decide fixed to that branch's value (``C = P if P > 4 else 4`` with P = 7: C = 7), as a
    launch with those values computes it; one given that disagrees is a ValueError. A value a
    branch on data chose (no condition) stays free."""
    for name, _, values in getattr(program, "computed", ()):
        if not values or any(g is None for _, g in values):
            continue
        known = [(v, g) for v, g in values
                 if (v.variables | g.variables) <= out.keys() - {name}]
        if len(known) != len(values):
            continue
        taken = [v.eval(out) for v, g in known if g.eval(out) is True]
        if len(taken) != 1:
            continue
        if name in out and out[name] != taken[0]:
            raise ValueError(f"--param {name}={out[name]} disagrees with the other values "
                             f"given: the kernel computes {name} = {taken[0]} there")
        out[name] = taken[0]
    return out


def with_single_values(program: Program, params: Optional[Mapping[str, int]]) -> dict[str, int]:
    """``params`` (the values a caller fixed), with every param whose domain holds one value
    (``param N >= 3 <= 3``, ``tle.assume(N == 3)``) fixed to it as if given with ``--param``: a
    launch can pass nothing else, so checking that value is every value, and it is not counted
    as a free param (two free params are only bounded). Derived params those values determine
    are fixed with them (:func:`fix`); where that fails (a derived value outside its
    domain: no launch exists) the caller's values are kept as they were."""
    given = dict(params or {})
    derived = {d.name for d in program.derived}
    singles = {name: p.min for name, p in fixable(program).items()
               if p.min is not None and p.min == p.max and name not in given
               and name not in derived}
    if not singles:
        return given
    try:
        return fix(program, {**singles, **given})
    except ValueError:
        return given


__all__ = ["fix", "fixable", "with_single_values"]
