"""Witnesses a launch can give: faults of derived params checked again from base values.

A param the kernel computes from others (``M = tl.cdiv(N, 64)``, ``Program.derived``) is checked
as if independent of them: every combination of values is covered, so a sweep without a fault is
sound, but a fault it finds may be at a combination no launch gives (``M = 1`` with
``N_64_64 = (N + 64) // 64 = 0``: no ``N`` gives both). Before such a fault is reported, the base
params (the kernel arguments and other values the kernel does not compute: the Program's params
without a definition, and ``Program.bases``) are searched, smallest values first within their
domains (``tle.assume`` bounds included): each tuple of base values gives, through the
definitions, one combination of the Program's params, which is checked like any other. A fault
found this way is real and is reported with the base values that give it; when none is found, the
verdict is not "rejected" but "bounded" (or "unknown" when the budget ran out): no fault for the
base values checked, nothing claimed for the others (docs/semantics.md, "Derived params").
Before that enumeration, base values a solver finds for each faulty combination
(witness_solver.py) are checked first: a fault that needs large base values (a tile count of 2
needs ``M`` above 128) is found without enumerating every smaller tuple.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from itertools import chain
from typing import Iterator, Mapping, Optional

from ..ir.derived import LaunchWidthError, derive, derive_on_gpu
from ..ir.nodes import Param, Program
from ..ir.tracegen import CompiledProgram, TraceBudgetExceeded
from .cutoff import _domain_range, _order
from .i32_range import derived_ranges
from .instances import Checker, InstanceResult
from .witness_solver import TOTAL_S, solve_bases

#: Each base param's values reach at least this far from zero (or from its domain's least value) ...
MIN_SPAN = 16
#: ... and at most this far: a definition with a constant ``c`` (a quotient by 64) changes value
#: every ``c`` values of its operand, so the span grows with the constants and with the values of
#: the faults to reproduce (``(c + 1) * (v + 2)``).
MAX_SPAN = 4096
#: The most distinct combinations of the Program's params checked (many base tuples give one).
MAX_COMBOS = 4096
#: The most base tuples enumerated.
MAX_TUPLES = 200_000
#: The most base tuples enumerated after the first fault (more faults to report, smaller ones).
MAX_TUPLES_AFTER_FAULT = 4096
#: The most faulty combinations the solver is asked to reproduce (witness_solver.py).
MAX_SOLVED = 4


@dataclass
class BaseSearch:
    """What the search found: ``faults``, each (base values, the Program's params they give, the
    instance's result), smallest base values first; ``checked``: per base param, the values whose
    combination was checked without a fault; ``stopped``: why the search ended before its planned
    values (the budget, or a cap), else empty; ``events``: the events it expanded; ``complete``:
    every value of every base param's domain was checked (finite domains, none fixed);
    ``skipped``: the base tuples enumerated that are no launch a claim over the values checked
    is about: a derived value outside its param's domain (``tle.assume``), or another value than
    a param fixed (``--param``), over the unbounded integers (sweep.py keeps those only where the
    GPU computes the same derived values); ``elsewhere``: those whose derived values the GPU
    computes otherwise (sweep.py names the first as a value the claim leaves out)."""

    faults: list[tuple[dict[str, int], dict[str, int], InstanceResult]] = field(default_factory=list)
    checked: dict[str, list[int]] = field(default_factory=dict)
    stopped: str = ""
    events: int = 0
    complete: bool = False
    skipped: list[dict[str, int]] = field(default_factory=list)
    #: the base tuples enumerated whose derived values the GPU computes otherwise than the
    #: unbounded integers (a step wraps in i32): not checked, each a launch no claim covers
    elsewhere: list[dict[str, int]] = field(default_factory=list)

    def checked_ranges(self) -> dict[str, str]:
        return {k: (f"[{min(vs)}, {max(vs)}]" if len(set(vs)) > 1 else f"{{{vs[0]}}}")
                for k, vs in self.checked.items() if vs}


def base_params(program: Program) -> list[Param]:
    """The params the derived ones are computed from, and the Program's other params: what a launch
    chooses (the Program's params without a definition first, in order, then ``bases``)."""
    derived = {d.name for d in program.derived}
    return [p for p in program.params if p.name not in derived] + list(program.bases)


def _span(program: Program, faulty: list[dict[str, int]], bound: Optional[int]) -> int:
    consts = [abs(c) for d in program.derived for c in d.definition.constants]
    biggest = max([abs(v) for params in faulty for v in params.values()], default=0)
    span = max(MIN_SPAN, (max(consts, default=0) + 1) * (biggest + 2))
    span = min(span, MAX_SPAN)
    return span if bound is None else min(span, bound)


def _values(p: Param, span: int, extra: list[int], bound: Optional[int]) -> list[int]:
    """``p``'s values to try, smallest magnitude first: those within ``span`` of zero (of its
    least or greatest value when the domain lies further out), and ``extra``."""
    lo, hi = -span, span
    if p.min is not None and p.min > span:
        lo, hi = p.min, p.min + 2 * span
    elif p.max is not None and p.max < -span:
        lo, hi = p.max - 2 * span, p.max
    vals = set(_domain_range(p.min, p.max, lo, hi))
    vals |= {v for v in extra if p.contains(v) and (bound is None or abs(v) <= bound)}
    return _order(vals)


def _by_rank(lists: list[list[int]]) -> Iterator[tuple[int, ...]]:
    """Every tuple of one value per list, by increasing sum of positions (small values first)."""
    tops = [len(v) - 1 for v in lists]
    if any(t < 0 for t in tops):
        return
    rest = [sum(tops[i:]) for i in range(len(tops) + 1)]

    def parts(i: int, s: int) -> Iterator[tuple[int, ...]]:
        if i == len(lists):
            if s == 0:
                yield ()
            return
        for k in range(max(0, s - rest[i + 1]), min(tops[i], s) + 1):
            for tail in parts(i + 1, s - k):
                yield (lists[i][k],) + tail

    for s in range(rest[0] + 1):
        yield from parts(0, s)


def _solved(program: Program, bases: list[Param], lists: list[list[int]],
            faulty: list[dict[str, int]], bound: Optional[int]) -> list[tuple[int, ...]]:
    """Base tuples the solver finds for the first ``MAX_SOLVED`` faulty combinations: within
    the values the enumeration would try when ``bound`` limits it (or a param is fixed), else
    anywhere in i32 and the domains."""
    limited = {p.name: (min(vals), max(vals)) for p, vals in zip(bases, lists)
               if vals and (bound is not None or len(vals) == 1)}
    names = {p.name for p in program.params}
    out: list[tuple[int, ...]] = []
    targets: list[dict[str, int]] = []
    for params in faulty:
        target = {k: v for k, v in params.items() if k in names}
        if target not in targets:
            targets.append(target)
    deadline = time.monotonic() + TOTAL_S  # every target's queries together
    targets = targets[:MAX_SOLVED]
    for i, target in enumerate(targets):
        # an equal share of the time left to each target still to solve (a first one's
        # shrinking leaves the others time for a model)
        now = time.monotonic()
        got = solve_bases(program, bases, target, limited,
                          now + (deadline - now) / (len(targets) - i))
        if got is not None:
            values = tuple(got[p.name] for p in bases)
            if values not in out:
                out.append(values)
    return out


def _as_on_gpu(program: Program, base: dict[str, int], env: dict[str, int]) -> bool:
    """Whether the GPU computes from ``base`` (each an i32 value: a launch types an integer
    argument that fits i32 as i32) the derived values ``env`` holds, which the definitions gave
    over the unbounded integers; a definition of runtime values is computed in i32 (i64 where it
    widens), where a step may wrap."""
    if not any(d.definition.c for d in program.derived):
        return True  # constexprs only: Python's integers, as derive computes them
    try:
        gpu = derive_on_gpu(program.derived, base)
    except LaunchWidthError:
        return False
    return gpu is not None and all(gpu[0][d.name] == env[d.name] for d in program.derived)


def _a_launch(program: Program, base: dict[str, int], env: Optional[dict[str, int]],
              fixed: Mapping[str, int]) -> bool:
    """Whether a solver's candidate is a launch the claim is about: defined, every param inside
    its domain and equal to the value ``--param`` fixed, and the GPU's i32 / i64 steps computing
    the values the integers give."""
    if env is None or any(not p.contains(env[p.name]) or env[p.name] != fixed.get(p.name, env[p.name])
                          for p in program.params):
        return False
    return _as_on_gpu(program, base, env)


def search(program: Program, cp: CompiledProgram, checker: Checker, fixed: Mapping[str, int],
           bound: Optional[int], budget: int, faulty: list[dict[str, int]],
           after_fault: int) -> BaseSearch:
    """Check the combinations base values give, smallest first, until ``after_fault`` more
    combinations after the first faulty one, or the caps. ``faulty``: the combinations the
    independent check found faulty (their independent params' values are tried too, and their
    magnitude sets how far the search goes); ``fixed``: params the caller fixed (``--param``),
    which a combination must agree with; ``budget``: the events it may expand."""
    out = BaseSearch()
    bases = base_params(program)
    span = _span(program, faulty, bound)
    lists = []
    for p in bases:
        if p.name in fixed:
            lists.append([fixed[p.name]])
            continue
        lists.append(_values(p, span, [params[p.name] for params in faulty if p.name in params],
                             bound))
    domains = {p.name: p for p in program.params}
    whole = not fixed and all(p.min is not None and p.max is not None
                              and len(vals) == p.max - p.min + 1 for p, vals in zip(bases, lists))
    seen: dict[tuple[int, ...], bool] = {}  # combination -> faulty
    first_fault: Optional[int] = None
    first_fault_tuple = 0
    combos = 0
    ended = True  # every tuple enumerated
    solved = _solved(program, bases, lists, faulty, bound) if program.derived and faulty else []
    # where interval arithmetic keeps every definition's steps inside i32 over the values
    # enumerated, the GPU computes what derive does at each of them: no tuple to check so
    box = {p.name: (min(vals), max(vals)) for p, vals in zip(bases, lists) if vals}
    all_fit = len(box) == len(bases) and derived_ranges(program, box) is not None
    for n, values in enumerate(chain(solved, _by_rank(lists))):
        candidate = n < len(solved)  # checked beside the enumeration, not part of its ranges
        if n >= MAX_TUPLES + len(solved):
            out.stopped = f"the search stopped after {MAX_TUPLES} tuples of base values"
            ended = False
            break
        if first_fault is not None and n > first_fault_tuple + MAX_TUPLES_AFTER_FAULT:
            ended = False
            break
        base = dict(zip((p.name for p in bases), values))
        env = derive(program.derived, base)
        if candidate and not _a_launch(program, base, env, fixed):
            continue
        if env is None:  # a division by zero: no claim covers these values
            whole = False
            continue
        if not candidate and not all_fit and not _as_on_gpu(program, base, env):
            # the GPU's i32 steps compute other derived values from these base values (`(N *
            # 2**24) // 2**24` is -55 at N = 201): the combination checked would be no launch's,
            # so a fault there is no witness, and no claim covers the launch with these values
            whole = False
            out.elsewhere.append(base)
            continue
        params = {p.name: env[p.name] for p in program.params}
        if any(not domains[k].contains(v) for k, v in params.items()):
            whole = False  # a derived value tle.assume excludes, not a base value: no proof
            out.skipped.append(base)
            continue
        if any(params[k] != v for k, v in fixed.items() if k in params):
            out.skipped.append(base)
            continue
        key = tuple(params.values())
        if key in seen:
            if not seen[key] and not candidate:
                for k, v in base.items():
                    out.checked.setdefault(k, []).append(v)
            continue
        if first_fault is not None and combos > first_fault + after_fault:
            ended = False
            break
        if combos >= MAX_COMBOS:
            out.stopped = f"the search stopped after {MAX_COMBOS} combinations of param values"
            ended = False
            break
        left = budget - out.events
        shown = ", ".join(f"{k}={v}" for k, v in base.items())
        if left <= 0:
            out.stopped = f"the verification budget ran out before {shown}"
            ended = False
            break
        try:
            traces = cp.run(params, left)
        except TraceBudgetExceeded:
            out.stopped = f"the verification budget ran out at {shown}"
            ended = False
            break
        combos += 1
        out.events += cp.work  # events, or loop iterations where those are more
        res = None if checker.clean(traces) else checker.check(traces)
        bad = res is not None and (bool(res.problems) or res.deadlock is not None)
        seen[key] = bad
        if bad:
            out.faults.append((base, params, res))
            if first_fault is None:
                first_fault, first_fault_tuple = combos, n
        elif not candidate:
            for k, v in base.items():
                out.checked.setdefault(k, []).append(v)
    out.faults.sort(key=lambda f: sum(abs(v) for v in f[0].values()))
    out.complete = ended and whole and not out.faults
    return out


__all__ = ["BaseSearch", "base_params", "search"]
