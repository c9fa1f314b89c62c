"""Symbolic params of a kernel: reserved while reading, named and ordered at the end.

While the frontend reads a kernel, every value that may become a param (a kernel argument, a
kernel-level variable assigned a non-affine value, a pure non-affine expression of params inside a
partition) gets a *placeholder* variable ``$<n>`` keyed by what it stands for, so the same quantity
read twice is the same param. At the end, the params that the Program actually uses get their names
(the variable's name, made unique against loop variables and each other), in first-use order, and
the placeholders are substituted everywhere.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass, replace
from typing import Hashable, Mapping, Optional

from ..ir.derived import WIDEN, Definition, Derived
from ..ir.expr import Affine, BoolOp, Compare, Cond, ModCompare, Not
from ..ir.nodes import Access, Event, For, Loc, Param, Partition, Stmt

PLACEHOLDER = "$"


def is_placeholder(var: str) -> bool:
    return var.startswith(PLACEHOLDER)


@dataclass
class ParamSlot:
    """A reserved param: its placeholder, the name it would like, where it comes from, its domain
    ``[min, max]`` (None: open on that side; a kernel's integers range over every integer unless
    a known fact or a ``tle.assume`` narrows them) and the kernel argument it is, if any."""

    placeholder: str
    hint: str
    loc: Loc
    min: Optional[int] = None
    max: Optional[int] = None
    arg: Optional[str] = None


def _sanitize(text: str) -> str:
    """A param's name from its hint: a kernel argument's own name as it is (`N_` stays `N_`:
    stripped, it was the param `N`, so `--param N_=3` was refused and the arguments N and N_
    were two params of one name), an expression's text made an identifier."""
    if text.isidentifier() and text.isascii() and not keyword.iskeyword(text):
        return text
    text = re.sub(r"\b(?:tl|gl|triton)\.", "", text)
    name = re.sub(r"\W+", "_", text).strip("_")
    if not name:
        return "P"
    return name if name[0].isalpha() or name[0] == "_" else f"P_{name}"


class ParamTable:
    def __init__(self) -> None:
        self.by_key: dict[Hashable, ParamSlot] = {}
        self.by_placeholder: dict[str, ParamSlot] = {}

    def reserve(self, key: Hashable, hint: str, loc: Loc,
                domain: tuple[Optional[int], Optional[int]] = (None, None),
                arg: Optional[str] = None) -> str:
        """The placeholder of the param keyed ``key`` (created on first request, with ``domain``
        and the kernel argument ``arg`` it is)."""
        slot = self.by_key.get(key)
        if slot is None:
            ph = f"{PLACEHOLDER}{len(self.by_key)}"
            slot = ParamSlot(ph, _sanitize(hint), loc, domain[0], domain[1], arg)
            self.by_key[key] = slot
            self.by_placeholder[ph] = slot
        return slot.placeholder

    def narrow(self, placeholder: str, lo: Optional[int], hi: Optional[int]) -> tuple[
            Optional[int], Optional[int]]:
        """Intersect the param's domain with ``[lo, hi]`` (None: no bound); the new domain."""
        slot = self.by_placeholder[placeholder]
        if lo is not None:
            slot.min = lo if slot.min is None else max(slot.min, lo)
        if hi is not None:
            slot.max = hi if slot.max is None else min(slot.max, hi)
        return slot.min, slot.max

    def slot(self, placeholder: str) -> ParamSlot:
        return self.by_placeholder[placeholder]

    def hint(self, placeholder: str) -> str:
        return self.by_placeholder[placeholder].hint

    def domain(self, placeholder: str) -> tuple[Optional[int], Optional[int]]:
        """The (min, max) of the param behind ``placeholder`` (None: unbounded on that side)."""
        slot = self.by_placeholder.get(placeholder)
        return (slot.min, slot.max) if slot is not None else (None, None)


# -- walking and renaming the IR ------------------------------------------------------------------


def _slot_order(var: str) -> tuple[int, str]:
    return (int(var[1:]), var) if is_placeholder(var) and var[1:].isdigit() else (-1, var)


def _cond_vars(c: Cond) -> list[Affine]:
    if isinstance(c, Compare):
        return [c.lhs, c.rhs]
    if isinstance(c, ModCompare):
        return [c.expr]
    if isinstance(c, BoolOp):
        return [a for item in c.items for a in _cond_vars(item)]
    return _cond_vars(c.item)


def _collect(body: tuple[Stmt, ...], uses: list[str], loops: set[str]) -> None:
    def note(*exprs: Affine) -> None:
        for e in exprs:
            for v in sorted(e.variables, key=_slot_order):
                if is_placeholder(v) and v not in uses:
                    uses.append(v)

    for s in body:
        if isinstance(s, (Event, Access)):
            note(s.index)
        elif isinstance(s, For):
            loops.add(s.var)
            note(s.start, s.stop)
            _collect(s.body, uses, loops)
        else:
            note(*_cond_vars(s.cond))
            _collect(s.then, uses, loops)
            _collect(s.orelse, uses, loops)


def subst_cond(c: Cond, env: Mapping[str, Affine]) -> Cond:
    if isinstance(c, Compare):
        return Compare(c.lhs.substitute(env), c.op, c.rhs.substitute(env))
    if isinstance(c, ModCompare):
        return replace(c, expr=c.expr.substitute(env))
    if isinstance(c, BoolOp):
        return BoolOp(c.op, tuple(subst_cond(i, env) for i in c.items))
    return Not(subst_cond(c.item, env))


def subst_body(body: tuple[Stmt, ...], env: Mapping[str, Affine],
               loop_vars: Optional[Mapping[str, str]] = None) -> tuple[Stmt, ...]:
    """``body`` with ``env`` substituted in every index, bound and condition, and the loop
    variables of ``loop_vars`` renamed (their uses are renamed by ``env``)."""
    loop_vars = loop_vars or {}
    out: list[Stmt] = []
    for s in body:
        if isinstance(s, (Event, Access)):
            out.append(replace(s, index=s.index.substitute(env)))
        elif isinstance(s, For):
            out.append(replace(s, var=loop_vars.get(s.var, s.var), start=s.start.substitute(env),
                               stop=s.stop.substitute(env),
                               body=subst_body(s.body, env, loop_vars)))
        else:
            out.append(replace(s, cond=subst_cond(s.cond, env),
                               then=subst_body(s.then, env, loop_vars),
                               orelse=subst_body(s.orelse, env, loop_vars)))
    return tuple(out)


def _rename_loops(body: tuple[Stmt, ...], renamed: Mapping[str, str]) -> tuple[Stmt, ...]:
    """``body`` with the loop variables of ``renamed`` (and every use of them: before params
    are named, a plain variable of an expression is a loop variable) renamed."""
    return subst_body(body, {old: Affine.of(new) for old, new in renamed.items()}, renamed)


def finalize(table: ParamTable, partitions: list[Partition], extra: list[str] = ()
             ) -> tuple[tuple[Param, ...], list[Partition], dict[str, str]]:
    """Name the used params (first-use order), then ``extra`` (params no event uses that the
    Program keeps: a value a ``tle.assume`` bounds), substitute them; returns (params,
    partitions, placeholder → name for every placeholder, used or not)."""
    uses: list[str] = []
    loops: set[str] = set()
    for p in partitions:
        _collect(p.body, uses, loops)
    uses += [ph for ph in extra if ph not in uses]
    # a loop variable spelt like a kernel argument that is a param (`for N in range(N):`) is
    # renamed, not the param: `--param N=3` names the kernel's argument N
    args = {table.by_placeholder[ph].hint for ph in uses if table.by_placeholder[ph].arg}
    clash = sorted(loops & args)
    if clash:
        every = loops | {table.by_placeholder[ph].hint for ph in uses}
        renamed: dict[str, str] = {}
        for v in clash:
            name, k = f"{v}_{1}", 2
            while name in every:
                name, k = f"{v}_{k}", k + 1
            every.add(name)
            renamed[v] = name
        partitions = [replace(p, body=_rename_loops(p.body, renamed)) for p in partitions]
        loops = (loops - set(clash)) | set(renamed.values())
    taken = set(loops)
    names: dict[str, str] = {}
    params: list[Param] = []
    for ph in uses:
        slot = table.by_placeholder[ph]
        name, k = slot.hint, 1
        while name in taken:
            name, k = f"{slot.hint}_{k}", k + 1
        taken.add(name)
        names[ph] = name
        params.append(Param(name, slot.min, slot.loc, slot.max))
    for ph, slot in table.by_placeholder.items():
        names.setdefault(ph, slot.hint)
    env = {ph: Affine.of(n) for ph, n in names.items()}
    parts = [replace(p, body=subst_body(p.body, env)) for p in partitions]
    return tuple(params), parts, names


def used_placeholders(partitions: list[Partition]) -> list[str]:
    """The placeholders the partitions use, in the first-use order :func:`finalize` names them in."""
    uses: list[str] = []
    for p in partitions:
        _collect(p.body, uses, set())
    return uses


def launch_steps(table: ParamTable, definitions: Mapping[str, Definition], placeholder: str
                 ) -> Optional[tuple[Derived, ...]]:
    """How a launch computes the param behind ``placeholder`` from the kernel's arguments: ``()``
    for an argument itself, else the definitions from the arguments to it (``Derived`` steps over
    argument names, named by their hints, the last one the param's); None when it is not computed
    from arguments alone (a value loaded from memory, a program id, a value a branch chose)."""
    key_of = {slot.placeholder: key for key, slot in table.by_key.items()}
    if table.slot(placeholder).arg is not None:
        return ()
    steps: list[Derived] = []
    named: dict[str, str] = {}
    taken = {slot.arg for slot in table.by_placeholder.values() if slot.arg}

    def visit(ph: str) -> Optional[str]:
        slot = table.slot(ph)
        if slot.arg is not None:
            return slot.arg
        if ph in named:
            return named[ph]
        key = key_of.get(ph)
        d = (definitions.get(key[1]) if isinstance(key, tuple) and len(key) == 2
             and key[0] == "pure" else None)
        if d is None:
            return None
        env: dict[str, Affine] = {}
        for v in sorted(d.variables, key=_slot_order):
            name = visit(v)
            if name is None:
                return None
            env[v] = Affine.of(name)
        name, k = slot.hint, 1
        while name in taken:
            name, k = f"{slot.hint}_{k}", k + 1
        taken.add(name)
        named[ph] = name
        steps.append(Derived(name, d.substitute(env), slot.loc))
        return name

    return tuple(steps) if visit(placeholder) is not None else None


#: The program id and program count of an axis, as the frontend keys them (``tl.program_id(0)``).
_GRID_KEY = re.compile(r"^(?:tl|gl|triton\.language|triton\.experimental\.gluon\.language)\."
                       r"(program_id|num_programs)\((\d+)\)$")


def reached(table: ParamTable, definitions: Mapping[str, Definition], uses: list[str]
            ) -> list[str]:
    """``uses`` and every placeholder their definitions compute them from, at any depth: the
    values a launch must give for the used params (``tl.num_programs(0)`` and
    ``tl.program_id(0)`` behind ``n = tl.cdiv(tl.num_programs(0) - tl.program_id(0), 2)``)."""
    key_of = {slot.placeholder: key for key, slot in table.by_key.items()}
    out: list[str] = []
    todo = list(uses)
    while todo:
        ph = todo.pop(0)
        if ph in out:
            continue
        out.append(ph)
        key = key_of.get(ph)
        d = (definitions.get(key[1]) if isinstance(key, tuple) and len(key) == 2
             and key[0] == "pure" else None)
        if d is not None:
            todo.extend(sorted(d.variables, key=_slot_order))
    return out


def _definition_of(table: ParamTable, definitions: Mapping[str, Definition], ph: str
                   ) -> Optional[Definition]:
    """The definition of the pure value behind placeholder ``ph``, if it has one."""
    key = next((k for k, slot in table.by_key.items() if slot.placeholder == ph), None)
    if isinstance(key, tuple) and len(key) == 2 and key[0] == "pure":
        return definitions.get(key[1])
    return None


#: the widest values the GPU computes a param in (i32), where a bound's inverse is searched
_I32 = (-(2 ** 31), 2 ** 31 - 1)


def assumed_interval(table: ParamTable, definitions: Mapping[str, Definition], ph: str,
                     lo: Optional[int], hi: Optional[int]
                     ) -> Optional[tuple[str, Optional[int], Optional[int]]]:
    """A ``tle.assume`` that bounds ``ph`` to ``[lo, hi]`` as one on the single value ``ph`` is
    computed from: ``(base, lo', hi')`` with ``lo <= ph <= hi`` exactly when ``lo' <= base <=
    hi'`` over the i32 values of ``base`` (``N // 2 >= 2``: ``N >= 4``, C's division), or None
    when ``ph`` is computed from several values or is not monotone in its one (``N % 2 == 0``,
    ``N * N >= 16``: no interval of ``N``). Monotone: built of ``+``, ``-``, products and
    quotients by constants (by a positive divisor, C's or Python's), shifts by constants,
    ``min`` / ``max`` and widenings; its direction is found from the ops, its inverse by
    bisection on the values the definitions give."""
    memo: dict[str, Optional[Definition]] = {}

    def definition(p: str) -> Optional[Definition]:
        if p not in memo:
            memo[p] = _definition_of(table, definitions, p)
        return memo[p]

    leaves: set[str] = set()

    def direction(x) -> Optional[int]:
        """+1 non-decreasing, -1 non-increasing, 0 constant in the leaf; None: neither."""
        if isinstance(x, Affine):
            out = 0
            for var, coef in x.terms:
                d = direction_of(var)
                if d is None:
                    return None
                d *= (1 if coef > 0 else -1)
                if d and out and d != out:
                    return None
                out = out or d
            return out
        args = list(x.args)
        consts = [a.const if isinstance(a, Affine) and a.is_const else None for a in args]
        if x.op in ("min", "max", "minimum", "maximum", WIDEN, "+"):
            dirs = [direction(a) for a in args]
            if None in dirs or (1 in dirs and -1 in dirs):
                return None
            return max(dirs, key=abs)
        if x.op == "-":
            a, b = direction(args[0]), direction(args[1])
            if a is None or b is None or (a and b and a == b):
                return None
            return a or -b
        if x.op == "*" and len(args) == 2 and (consts[0] is not None or consts[1] is not None):
            k, other = (consts[0], args[1]) if consts[0] is not None else (consts[1], args[0])
            d = direction(other)
            return None if d is None else (0 if k == 0 else d * (1 if k > 0 else -1))
        if x.op in ("//", ">>", "<<") and consts[1] is not None and consts[1] > 0:
            return direction(args[0])
        return None

    def direction_of(var: str) -> Optional[int]:
        d = definition(var)
        if d is None:
            leaves.add(var)
            return 1
        return direction(d)

    root = definition(ph)
    if root is None:
        return None
    sign = direction(root)
    if not sign or len(leaves) != 1:
        return None
    (base,) = leaves

    def value(x: int, seen: Optional[list[int]] = None) -> Optional[int]:
        """The value at ``base = x``; ``seen`` collects every operand and result of a
        non-affine step on the way (what the GPU computes in i32: a sum or product by constants
        that fits is exact modulo 2^32, a quotient, shift or minimum of a wrapped one is not)."""
        env: dict[str, int] = {base: x}

        def of(p: str) -> Optional[int]:
            if p not in env:
                d = definition(p)
                vals = {v: of(v) for v in d.variables}
                if any(v is None for v in vals.values()):
                    return None
                env[p] = ev(d, vals)
            return env[p]

        def ev(d: Definition, vals: dict[str, int]) -> Optional[int]:
            xs = []
            for a in d.args:
                v = a.eval(vals) if isinstance(a, Affine) else ev(a, vals)
                if v is None:
                    return None
                xs.append(v)
            out = Definition(d.op, tuple(Affine.of(v) for v in xs), d.c, d.wide).eval({})
            if seen is not None and not d.wide:
                seen.extend(xs + ([] if out is None else [out]))
            return out

        return of(ph)

    def fits(x: int) -> bool:
        """Whether every step of the value at ``base = x`` stays in i32 (the GPU computes it as
        the integers do)."""
        seen: list[int] = []
        return value(x, seen) is not None and all(_I32[0] <= v <= _I32[1] for v in seen)

    slot = table.slot(base)
    first = _I32[0] if slot.min is None else max(slot.min, _I32[0])
    last = _I32[1] if slot.max is None else min(slot.max, _I32[1])
    if first > last:
        return None

    class Undefined(Exception):
        """The value is undefined at a value of the base (a shift by more than 64 bits)."""

    def ok(x: int, side: str) -> bool:
        v = value(x)
        if v is None:
            raise Undefined
        return (v >= lo) if side == "lo" else (v <= hi)

    def edge(side: str) -> Optional[int]:
        """The first (the side's bound holds from there on, in the direction it grows) or last
        value of ``base`` in [first, last] where the bound holds; None where none does."""
        # with f non-decreasing, f >= lo holds on an upper ray, f <= hi on a lower one
        upper = (side == "lo") == (sign > 0)
        a, b = first, last
        probe = [ok(a, side), ok(b, side)]
        if upper:
            if not probe[1]:
                return None
            if probe[0]:
                return a
            while b - a > 1:  # ok(a) false, ok(b) true
                m = (a + b) // 2
                a, b = (a, m) if ok(m, side) else (m, b)
            return b
        if not probe[0]:
            return None
        if probe[1]:
            return b
        while b - a > 1:  # ok(a) true, ok(b) false
            m = (a + b) // 2
            a, b = (m, b) if ok(m, side) else (a, m)
        return a

    new_lo, new_hi = slot.min, slot.max
    for side, bound in (("lo", lo), ("hi", hi)):
        if bound is None:
            continue
        upper = (side == "lo") == (sign > 0)
        try:
            e = edge(side)
        except Undefined:
            return None
        if e is None:
            # no value of the base satisfies it: an empty domain, where no step wraps (else
            # the GPU's wrapped value may satisfy it)
            return (base, 1, 0) if fits(first) and fits(last) else None
        # the values left out, [first, e - 1] or [e + 1, last], must be left out on the GPU
        # too: where a step wraps in i32 there, the GPU's value may satisfy the bound (a launch
        # the narrowed domain would not cover). Every step is monotone in the base, so its
        # extremes over that range are at the range's ends.
        if upper and e > first and not (fits(first) and fits(e - 1)):
            return None
        if not upper and e < last and not (fits(e + 1) and fits(last)):
            return None
        if upper and e > _I32[0]:
            new_lo = e if new_lo is None else max(new_lo, e)
        elif not upper and e < _I32[1]:
            new_hi = e if new_hi is None else min(new_hi, e)
    return base, new_lo, new_hi


def launch_grid(table: ParamTable, uses: list[str]
                ) -> tuple[dict[str, ParamSlot], dict[str, Definition]]:
    """What a launch's grid ties together: for every axis ``a`` whose ``tl.program_id(a)`` and
    ``tl.num_programs(a)`` are both in ``uses`` (used params, or values a used param is computed
    from: :func:`reached`), ``0 <= program_id(a) < num_programs(a)``. Each
    such count becomes ``program_id(a) + 1 + later`` with ``later >= 0`` (the programs of the axis
    after this one), a base param of its own, so that a fault is only ever reported at a
    combination a launch gives (witness.py). Returns the new base params' slots by placeholder
    (``$later<a>``, no kernel argument) and each count's definition by its placeholder."""
    axes: dict[str, dict[str, str]] = {}
    for key, slot in table.by_key.items():
        if slot.placeholder not in uses or not (isinstance(key, tuple) and len(key) == 2
                                                and key[0] == "pure"):
            continue
        m = _GRID_KEY.match(str(key[1]))
        if m:
            axes.setdefault(m.group(2), {})[m.group(1)] = slot.placeholder
    later: dict[str, ParamSlot] = {}
    counts: dict[str, Definition] = {}
    for axis, found in sorted(axes.items()):
        if len(found) < 2:
            continue
        pid, count = found["program_id"], found["num_programs"]
        ph = f"{PLACEHOLDER}later{axis}"
        later[ph] = ParamSlot(ph, f"later_programs_{axis}", table.slot(count).loc, 0, None)
        counts[count] = Definition("+", (Affine.of(pid) + 1, Affine.of(ph)), True)
    return later, counts


def derivations(table: ParamTable, definitions: Mapping[str, Definition], uses: list[str],
                names: Mapping[str, str], partitions: list[Partition]
                ) -> tuple[tuple[Derived, ...], tuple[Param, ...]]:
    """What the Program's derived params are computed from (``Program.derived``, ``.bases``):
    every used param whose pure expression has a definition (``definitions``, by its key), the
    values its definition uses that are no param of the Program (computed on the way, or base),
    named uniquely against the params and the loop variables. ``uses``: the used placeholders
    (:func:`used_placeholders`); ``names``: :func:`finalize`'s names; ``partitions``: after it."""
    key_of = {slot.placeholder: key for key, slot in table.by_key.items()}
    # a program count used beside the program id of its axis (either of them directly or in a
    # definition) is that id plus one plus the programs after it (a base param >= 0 of its
    # own): the two are never independent
    later, counts = launch_grid(table, reached(table, definitions, uses))

    def definition(ph: str) -> Optional[Definition]:
        if ph in counts:
            return counts[ph]
        key = key_of.get(ph)
        if isinstance(key, tuple) and len(key) == 2 and key[0] == "pure":
            return definitions.get(key[1])
        return None

    if not any(definition(ph) is not None for ph in uses):
        return (), ()
    taken = {names[ph] for ph in uses}
    loops: set[str] = set()
    for p in partitions:
        _collect(p.body, [], loops)
    taken |= loops
    local = {ph: names[ph] for ph in uses}

    def name_of(ph: str) -> str:
        if ph not in local:
            slot = later[ph] if ph in later else table.slot(ph)
            hint = slot.arg or slot.hint
            name, k = hint, 1
            while name in taken:
                name, k = f"{hint}_{k}", k + 1
            taken.add(name)
            local[ph] = name
        return local[ph]

    derived: list[Derived] = []
    bases: list[Param] = []
    seen: set[str] = set()

    def visit(ph: str) -> None:
        if ph in seen:
            return
        seen.add(ph)
        slot = later[ph] if ph in later else table.slot(ph)
        d = definition(ph)
        if d is None:
            if ph not in uses:
                bases.append(Param(name_of(ph), slot.min, slot.loc, slot.max))
            return
        for v in sorted(d.variables, key=_slot_order):
            visit(v)
        env = {v: Affine.of(name_of(v)) for v in d.variables}
        derived.append(Derived(name_of(ph), d.substitute(env), slot.loc))

    for ph in uses:
        visit(ph)
    return tuple(derived), tuple(bases)
