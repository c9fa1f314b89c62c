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
same pointer argument (a pointer loaded from memory, with no argument added beside it, may point
into any argument's memory), where one of the two writes: a store against a load, a store or an atomic; an atomic
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
unknown; an integer constexpr argument the kernel is read with (``constexprs``: a --param's, or
DEFAULT_CONFIG's where tle-dump checks again at them, cli/dump.py) is its number. An access's
mask is read as an ``if``'s condition (race_terms.access_mask): a lane it leaves out accesses
nothing; the pointer and the mask share one lane per ``tl.arange`` only where neither moves a
value to another axis. The model
is an over-approximation of the addresses each access reaches, so "apart" is proved for every
value of the arguments. Arguments are taken not to alias one another (two pointer arguments are
two tensors), and a pointer argument is one a pointer expression adds with coefficient one.
Int32 sums, differences, products and shifts of an address wrap around as Triton computes them,
and 64-bit values and byte addresses modulo ``2 ** 64`` where their bounds may leave int64
(race_wraps.py, race_spans.py). A value that may be a float is no integer: its cast to an
integer type is any value of the type, a comparison of it either truth (race_terms.floating).

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
through any such pair of events (of a pipe whose writer's indices strictly increase, so
that an index names one use of its stage)? z3 decides it (the hand-offs quantified over their
iterations). Unsatisfiable: safe. Satisfiable: refused (``memory-race``), with the model as the
witness. Unknown (a nonlinear term, a budget: about 4 s of z3's work a pair, 60 s for all the
pairs of a kernel, counted in z3's resource units so that the verdict does not depend on the
machine's load: race_solver.py): not proved, and tle-dump says so (exit 3) rather than verify. Races between different programs (CTAs) are the program's own arithmetic, as in
any Triton kernel, and not checked.

The parts: frontend/race_sites.py (where accesses and events stand), race_terms.py (addresses as
terms), race_strides.py (stride arguments), race_order.py (hand-offs), race_wraps.py and
race_spans.py (fixed-width wraparound), race_solver.py (z3's context and budgets); this module
pairs the accesses, asks z3 and words the verdict.
"""

from __future__ import annotations

from typing import Optional

from ..diagnostics import TleError
from ..ir import kernel as K
from .race_divisions import check_divisions
from .race_order import ordered, unmark_register_stores, unreleased
from .race_solver import (BACKSTOP, BACKSTOP_HIT, SPENT, UNITS_PER_MS, Budget, InContext,
                          Unproved, backstop_words, units)
from .race_sites import ATOMIC_PREFIX, collect, pointer_of
from .race_strides import (digit_splits, generic_equal, row_splits, stride_arguments,
                           stride_groups, unbounded_columns)
from . import race_wraps
from .race_wraps import (address_wrap, element_bytes, element_types, float_arguments,
                         integer_widths, pointer_arguments)
from .race_terms import (REBOUND, SAME_VALUE, VALUES, Instance, Model, access_mask, const_name,
                         branch_conditions, instance, item_of, loop_of, single_value, symbols,
                         term)

#: :func:`_candidates`' marks of a pointer expression holding a `tle.gpu.local_ptr` (shared
#: memory) and a value loaded from memory (a pointer, where no argument is beside it)
LOCAL, LOADED = "<local_ptr>", "<loaded>"
_TOKENS = {LOCAL, LOADED}

#: The resource units z3 may spend on one query of a pair of accesses (race_solver.py: about 4 s
#: of an idle machine); past them the pair is "not proved".
PAIR_RLIMIT = units(4000)
#: The resource units z3 may spend on all the queries of a kernel (about 60 s): many pairs each
#: decided just inside their budget would keep tle-dump busy for hours; past them the kernel is
#: "not proved".
KERNEL_RLIMIT = units(60_000)
#: The short attempts at one query before the last one, which has the whole budget of a query
#: (PAIR_RLIMIT): (resource units, z3 random seed). z3's work on these nonlinear queries is
#: heavy-tailed in its random choices (one query of adversarial round 35 took 0.06 s with one
#: seed and 2.1 s with the next), so a few short runs with other seeds come first; an answer of
#: any of them is z3's answer (unsat a proof, sat a witness). The first is seed 0, z3's default.
ATTEMPTS = ((units(250), 0), (units(250), 1), (units(250), 2), (units(1000), 3))


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
        loop = loop_of(inst.site, e.id) if where == "part" else None
        if loop is not None and loop is not REBOUND:
            return set()  # a number
        got = single_value(model, e.id, inst, where)
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
            rhs = _candidates(model, e.rhs, inst, where, depth - 1, seen)
            # a pointer plus an offset: beside a pointer (shared or global), a loaded value is
            # an offset, not the pointer
            if rhs - _TOKENS:
                out -= {LOADED}
            if out - _TOKENS:
                rhs -= {LOADED}
            out |= rhs
        return out
    if isinstance(e, K.Subscript):
        if len(e.index) == 1 and isinstance(e.index[0], int):
            got = item_of(model, e, inst, where)
            if got is not None:
                item, at, w = got
                return _candidates(model, item, at, w, depth - 1, seen)
            # a tuple bound more than once (in two branches): any item of any of its values
            return _candidates(model, e.value, inst, where, depth - 1, seen)
        return _candidates(model, e.value, inst, where, depth - 1, seen)
    if isinstance(e, K.Op):
        if e.name == "tle.gpu.local_ptr":
            return {LOCAL}  # shared memory: based on no argument
        if e.name == "tl.load" or e.name.startswith(ATOMIC_PREFIX):
            return {LOADED}  # a value read from memory: a pointer, where nothing else is
        if e.name == "to" and len(e.args) > 1 and isinstance(e.args[1], K.Op) and \
                "pointer" in e.args[1].name:
            return set(model.params)  # an integer made a pointer: any argument's memory
        if e.name in SAME_VALUE + ("to",) and e.args:
            return _candidates(model, e.args[0], inst, where, depth - 1, seen)
        if e.name in ("tl.where", "ifexp") and len(e.args) == 3:
            return (_candidates(model, e.args[1], inst, where, depth - 1, seen)
                    | _candidates(model, e.args[2], inst, where, depth - 1, seen))
        if e.name not in VALUES and not e.name.startswith(ATOMIC_PREFIX):
            # an op the model does not read (a block pointer, a helper of Triton's): whatever
            # pointer any of its operands may be
            out = set()
            for x in list(e.args) + [v for _, v in e.kwargs]:
                out |= _candidates(model, x, inst, where, depth - 1, seen)
            return out
    return set()


def _based_on(model: Model, cands: set[str]) -> set[str]:
    """The arguments a pointer of candidates ``cands`` (:func:`_candidates`) may be based on: a
    pointer loaded from global memory (a pointer table, `p = tl.load(tab_ptr)`) and based on
    no argument beside it may point into any argument's memory; a shared-memory pointer into
    none."""
    real = cands - _TOKENS
    if not real and LOADED in cands:
        return set(model.params)
    return real


def _first_candidates(model: Model, name: str, inst: Instance, where: str, depth: int,
                      seen: frozenset) -> set[str]:
    """The arguments the value ``name`` holds before its function assigns it may be based on:
    a partition parameter's binding, a kernel argument."""
    if where == "part":
        binds = dict(inst.part.kp.bindings)
        if name in binds:
            return _candidates(model, binds[name], inst, "prologue", depth - 1, seen)
    return {name} if name in model.params else set()


def _witness_name(n: str) -> str:
    """How a witness names the symbol ``n``: an argument by its name, a program id or count
    as the kernel spells it (``program_id(1)``, ``num_programs(0)``)."""
    if n.startswith("a:"):
        return n[2:]
    kind, axis = n.split(":", 1)
    return f"{'program_id' if kind == 'pid' else 'num_programs'}({axis})"


def _power(m: int) -> str:
    """``m``, a power of two, as ``2 ** k``."""
    return f"2 ** {m.bit_length() - 1}"


def _conflict(a: str, b: str) -> bool:
    return {a, b} not in ({"load"}, {"atomic"})


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


#: the resource units the check that a pair's columns are not negative may spend (about 1 s)
COLUMNS_RLIMIT = units(1000)


def _columns_from_zero(model: Model, budget: Budget, terms, strides: set, bases: set,
                       constraints: list) -> bool:
    """Whether z3 proves the columns of both addresses ``terms`` (the monomials that hold no
    stride of ``strides``, less the pointer arguments ``bases`` and the multiples of a modulus
    their fixed-width arithmetic may wrap by) not negative under ``constraints``: the stride
    rule reads `row * S + col` as row `row`, column `col` of a tensor of rows of S elements,
    which holds only where `0 <= col` (the kernel shows it) and `col < S` (the launch's
    promise: the rows do not overlap)."""
    z3 = model.z3
    zero = []
    cols = []
    groups = [list(stride_groups(z3, t, strides).get((), [])) for t in terms]
    # a monomial both columns hold (`pid * stride_o_s` of a row both address) is where the
    # two tensors' rows start, whatever its sign: the columns are counted from it
    kept = []
    for m in groups[0]:
        at = next((i for i, x in enumerate(groups[1]) if x.eq(m)), None)
        if at is None:
            kept.append(m)
        else:
            del groups[1][at]
    groups[0] = kept
    for monomials in groups:
        col = z3.Sum(*monomials) if len(monomials) > 1 else \
            (monomials[0] if monomials else z3.IntVal(0))
        cols.append(col)
        for n in symbols(col):
            if n.split("#")[0] in ("i32wrap", "i64wrap", "addrwrap") or \
                    n.startswith("a:") and n[2:] in bases:
                zero.append((model.z3.Int(n), z3.IntVal(0)))
    cols = [z3.substitute(c, *zero) if zero else c for c in cols]
    solver = z3.Solver()
    solver.add(*constraints, z3.Or(*[c < 0 for c in cols]), *model.facts)
    got, _ = budget.check(solver, COLUMNS_RLIMIT)
    return got == z3.unsat


def _rows_apart(model: Model, budget: Budget, ta, tb, bases: set, meet, constraints: list):
    """``meet`` (``ta == tb``), or the same read as rows and columns of a row pitch that is no
    stride (``rows[:, None] * N + cols[None, :]`` under a mask ``cols[None, :] < N``): where z3
    proves both columns in ``[0, N)`` under ``constraints``, the addresses meet exactly where
    their rows and their columns do (race_strides.row_splits), which spares the query the
    product of the pitch. An equivalent of ``meet`` under the constraints every query of the
    pair holds: the same answer, reached linearly."""
    z3 = model.z3
    pitches = {n for n in symbols(ta) & symbols(tb) if n.startswith("a:")
               and n[2:] in model.params and n[2:] not in model.pointers}
    for sym, ra, ca, rb, cb in row_splits(z3, ta, tb, {f"a:{n}" for n in bases}, pitches):
        solver = z3.Solver()
        solver.add(*constraints, z3.Or(ca < 0, ca >= sym, cb < 0, cb >= sym), *model.facts)
        got, _ = budget.check(solver, COLUMNS_RLIMIT)
        if got == z3.unsat:
            # each of the two equalities read further as digits of a number (`128 * pm +
            # lane` beside a lane in [0, 128)): the rows' tiles and the columns' apart
            return z3.And(*_digits_apart(model, budget, ra, rb, constraints, 3),
                          *_digits_apart(model, budget, ca, cb, constraints, 3))
    return meet


def _digits_apart(model: Model, budget: Budget, x, y, constraints: list, depth: int) -> list:
    """``x == y`` as equalities of the digits of a number both are written in
    (race_strides.digit_splits), where z3 proves the low digits in ``[0, c)`` under
    ``constraints``; split again ``depth`` times at most. Equivalent to ``x == y`` under the
    constraints."""
    z3 = model.z3
    if depth <= 0:
        return [x == y]
    for c, hx, lx, hy, ly in digit_splits(z3, x, y):
        if z3.is_int_value(z3.simplify(lx)) and z3.is_int_value(z3.simplify(ly)):
            continue  # (no low digit: nothing to split)
        solver = z3.Solver()
        solver.add(*constraints, z3.Or(lx < 0, lx >= c, ly < 0, ly >= c), *model.facts)
        got, _ = budget.check(solver, COLUMNS_RLIMIT)
        if got == z3.unsat:
            return (_digits_apart(model, budget, hx, hy, constraints, depth - 1)
                    + _digits_apart(model, budget, lx, ly, constraints, depth - 1))
    return [x == y]


def check_global_races(kern: K.Kernel, domains: Optional[dict] = None,
                       constexprs: Optional[dict] = None,
                       signature: Optional[dict] = None,
                       floats: frozenset = frozenset()) -> list[tuple[str, ...]]:
    """Refuse (TleError, check ``memory-race``) a pair of accesses of two partitions that may
    reach one global address, one writing, unordered by the pipes; raise :class:`Unproved`
    where z3 cannot decide a pair. ``domains``: each kernel argument's ``tle.assume`` range,
    (min, max) with None for an open end; ``constexprs``: the integer constexpr arguments the
    kernel is read with (each then its number: a constexpr row pitch is a known one), the others
    of any value, and those it is read with a float (no integers: race_terms.floating);
    ``signature``: DEFAULT_CONFIG's argument types, where the file gives them
    (which arguments are pointers, and the integers' widths: race_wraps.py); ``floats``: the
    arguments a launch may give a float (constexprs of no value here, run-time arguments no
    signature types) that no use of them proves otherwise (constexpr_kinds.py), read as the
    float constexprs are. Returns the
    groups of stride arguments whose rows were taken not to overlap (the stride rule:
    race_strides.py) in a pair found safe, each sorted, and after them a note (its first item
    race_divisions.NOTE) of each division by a kernel argument that may be 0
    (race_divisions.check_divisions), so that the verdict can say what it assumes of the
    launch."""
    if len(kern.partitions) < 2:
        return []
    parts = [collect(p) for p in kern.partitions]
    for p in parts:
        unmark_register_stores(kern, p)
    writes = any(a.kind != "load" for p in parts for a in p.accesses)
    model = Model(kern, domains or {}, constexprs)
    # the kernel's terms in a z3 context of their own: its queries are the same whatever the
    # process made before (race_solver.py)
    model.z3 = z3 = InContext(model.z3)
    model.budget = budget = Budget(KERNEL_RLIMIT)
    strides = {f"a:{n}" for n in stride_arguments(kern) if n not in (domains or {})}
    #: the strides the rows of a pair were taken apart by (the stride rule), for the note
    #: tle-dump prints beside a verdict that rests on it
    relied: set[frozenset] = set()

    def pair(pa, a, pb, b) -> str:
        return (f"partitions '{pa.kp.name}' ({a.kind} at line {a.op.loc.line}) and "
                f"'{pb.kp.name}' ({b.kind} at line {b.op.loc.line})")

    def spent(pa, a, pb, b) -> None:
        """Unproved where the kernel's budget is spent, in resource units or (the safety net)
        in wall-clock time."""
        if budget.left() <= 0:
            raise Unproved(
                f"{pair(pa, a, pb, b)}: the memory-race check's budget for the kernel "
                f"({KERNEL_RLIMIT} z3 resource units, about "
                f"{KERNEL_RLIMIT / UNITS_PER_MS / 1000:g} s of z3's time) was spent before "
                f"whether they can reach one address unordered was decided; fewer pairs of "
                f"accesses, or addresses apart by constants, let it be proved",
                b.op.loc if b.op.loc.line else pb.kp.loc)
        if budget.wall_left_ms() <= 0:
            raise Unproved(
                f"{pair(pa, a, pb, b)}: the memory-race check ran past its wall-clock safety "
                f"limit for the kernel ({BACKSTOP * KERNEL_RLIMIT / UNITS_PER_MS / 1000:g} s, "
                f"{BACKSTOP} times its budget of z3's time) before whether they can reach one "
                f"address unordered was decided: z3 worked far slower than its resource count "
                f"says (a runaway query, or an overloaded machine)",
                b.op.loc if b.op.loc.line else pb.kp.loc)
    # each access's pointer and the arguments it may be based on
    info = []
    for p in parts:
        for acc in p.accesses:
            ptr = pointer_of(acc.op)
            if ptr is None:
                continue
            # a pointer into shared memory adds no argument (its candidates are none); one that
            # may be either, or an address holding a value loaded from shared memory, is global
            probe = Instance(p, acc.site, "probe")
            info.append((p, acc, ptr, _based_on(model, _candidates(model, ptr, probe))))
    model.pointers = pointer_arguments(kern, set().union(*(x[3] for x in info)), signature)
    model.widths = integer_widths(signature)
    model.elements = element_types(signature)
    model.sizes = element_bytes(signature)
    model.float_args |= float_arguments(signature)
    maybe_float = sorted(n for n in floats if n in model.params and n not in model.constexprs)
    model.float_args |= set(maybe_float)
    model.maybe_float = set(maybe_float)
    model.based_on = lambda ptr, inst, where: _based_on(model, _candidates(model, ptr, inst, where))
    model.arith = race_wraps  # values in their fixed-width types
    if not writes:
        # a division whose divisor may be 0 is undefined behaviour that the compiled kernel
        # may rest on (race_divisions.py): checked with or without a write, after the pairs
        return check_divisions(model, parts, ATTEMPTS + ((PAIR_RLIMIT, 0),), Unproved)
    for i, (pa, a, ptr_a, ca) in enumerate(info):
        for pb, b, ptr_b, cb in info[i + 1:]:
            if pa is pb or not _conflict(a.kind, b.kind):
                continue
            common = sorted(ca & cb)
            if not common:
                continue
            ia = instance(model, pa, a.site, "A")
            ib = instance(model, pb, b.site, "B")
            branch_conditions(model, ia)
            branch_conditions(model, ib)
            # each pointer with its mask's condition (a lane it leaves out accesses nothing)
            ta, tb = access_mask(model, a.op, ia), access_mask(model, b.op, ib)
            # the two addresses as bytes modulo 2 ** 64: where their offsets may leave the
            # range in which the terms' equality is the addresses', they meet where the terms
            # differ by a multiple of 2 ** 64 / size (race_wraps.address_wrap)
            wrap = address_wrap(model, ptr_a, ia, ptr_b, ib, ca | cb)
            gap = ta - tb if wrap is None else ta - tb - wrap[1] * wrap[0]
            # a stride only one of the two addresses holds is a number like any other, and so
            # is one a condition, a loop range or another value of the pair reads (`if j < 2 *
            # S`): the columns beside it then depend on it, and may reach past a row
            known = ia.constraints + ib.constraints + model.facts
            # (an int32 range is no condition: race_wraps.py)
            conditions = [c for c in known if c.get_id() not in model.wrap_facts]
            bound = set().union(*(symbols(c) for c in conditions))
            # (held: in the expanded address, where `0 * S` is no term)
            held = [symbols(z3.simplify(t, som=True)) for t in (ta, tb)]
            # and so is one an unknown of the pair may hide (`off = S` or `off = 2 * S` in one
            # branch, 0 in another: `off` is an unknown, a multiple of S that the rows do not
            # show)
            hidden = set().union(*(model.hidden.get(n, set()) for n in
                                   symbols(ta) | symbols(tb) | bound))
            both = (strides & held[0] & held[1]) - bound - {f"a:{n}" for n in hidden}
            if both and unbounded_columns(z3, gap, both, conditions):
                both = set()
            if both and not _columns_from_zero(model, budget, (ta, tb), both, ca | cb,
                                               ia.constraints + ib.constraints):
                # a column that may be negative (`(t + 1) * S - 1`, the last element of row t
                # written as row t + 1's column -1) reaches into the row before it whatever
                # the stride: the rows do not show where it meets another address
                both = set()
            if both:
                relied.add(frozenset(n[2:] for n in both))
            meet = generic_equal(z3, gap, both) if both else (
                ta == tb if wrap is None else gap == 0)
            if wrap is None and not both:
                meet = _rows_apart(model, budget, ta, tb, ca | cb, meet,
                                   ia.constraints + ib.constraints)
            def query(*more):
                """z3 on the pair's constraints, the meeting and ``more`` (the model's facts
                last: the symbols the terms made): the short :data:`ATTEMPTS`, then one with
                z3's default seed and the whole budget of a query (:data:`PAIR_RLIMIT`), as
                every query had before the attempts: a query decided in that budget still is.
                The solver, its answer and, where it is unknown, why (race_solver.Budget)."""
                for limit, seed in ATTEMPTS + ((PAIR_RLIMIT, 0),):
                    spent(pa, a, pb, b)
                    solver = z3.Solver()
                    solver.set("random_seed", seed)
                    solver.add(*ia.constraints, *ib.constraints, meet, *more, *model.facts)
                    got, why = budget.check(solver, limit, _solve)
                    if got != z3.unknown:
                        break
                else:
                    spent(pa, a, pb, b)  # the kernel's budget, rather than the query's
                return solver, got, why

            if query()[1] == z3.unsat:
                continue  # apart, whatever orders them (no quantifier to decide)
            unordered = (z3.Not(ordered(model, kern, ia, ib, pa, pb, a.gathered, a.gather,
                                        a.gather_fields)),
                         z3.Not(ordered(model, kern, ib, ia, pb, pa, b.gathered, b.gather,
                                        b.gather_fields)))
            # a witness where no int32 arithmetic wraps around first (the plainer one), nor
            # 64-bit arithmetic or an address modulo 2 ** 64, then any (race_wraps.py)
            # (the outermost loops of the two partitions too, whose ranges are read once per
            # run: a hand-off in a loop that wraps empty orders nothing, race_order.py)
            looped = [r for key, r in model.bounds.items()
                      if key[0] in (pa.kp.name, pb.kp.name)]
            own = ia.ranges + ib.ranges
            range_fresh = [v for r in own + looped for v in r.made]
            wraps = [v for v in ia.fresh + ib.fresh + range_fresh
                     if const_name(z3, v).split("#")[0] in ("i32wrap", "i64wrap", "addrwrap")]
            solver, got, why = query(*unordered, *(v == 0 for v in wraps)) if wraps else \
                (None, None, None)
            if got != z3.sat:
                solver, got, why = query(*unordered)
            if got == z3.unsat:
                continue
            second = b if (a.op.loc.line or 0) <= (b.op.loc.line or 0) else a
            where = second.op.loc if second.op.loc.line else pb.kp.loc
            arg = common[0]
            if got == z3.unknown:
                if why == SPENT:
                    why = (f"z3 spent the budget of a query, {PAIR_RLIMIT} resource units, about "
                           f"{PAIR_RLIMIT / UNITS_PER_MS / 1000:g} s of its time")
                elif why == BACKSTOP_HIT:
                    why = backstop_words(PAIR_RLIMIT)
                raise Unproved(
                    f"{pair(pa, a, pb, b)} access global memory "
                    f"through `{arg}`, one writing: whether they can reach one address with no "
                    f"pipe hand-off ordering them was not decided ({why}); "
                    f"a `tle.assume` on the arguments in their addresses, or addresses apart by "
                    f"constants, lets it be proved", where)
            z = solver.model()

            base = model.sym(f"a:{arg}")
            off = z.eval(ta - base, model_completion=True)
            if wrap is not None and z.eval(wrap[0], model_completion=True).as_long():
                # the offset the two share modulo 2 ** 64 / size, in [-m / 2, m / 2)
                m = wrap[1]
                off = (off.as_long() + m // 2) % m - m // 2
            # the integer arguments and program ids the two addresses read, at the witness
            def witnessed(names) -> set[str]:
                """The integer arguments (no constexpr, no pointer of the pair) and program
                ids among the symbol names ``names``."""
                return {n for n in names
                        if (n.startswith("a:") and n[2:] not in ca | cb
                            and n[2:] not in model.constexprs)
                        or n.startswith(("pid:", "nprog:"))}

            named = witnessed(symbols(ta) | symbols(tb))

            # a loop range whose int32 arithmetic wraps at the witness: the arguments it reads
            # too (`range(s * 65536)` runs at s = -65535)
            def wrapped_at(made) -> bool:
                return any(const_name(z3, v).split("#")[0] == "i32wrap"
                           and z.eval(v, model_completion=True).as_long() for v in made)

            wrapping = own if wrapped_at([v for r in own for v in r.made]) else []
            wrapping = wrapping + [r for r in looped if wrapped_at(r.made)]
            ranged = bool(wrapping)
            for r in wrapping:
                # the arguments a range reads: in its terms, and written in the loop's start,
                # stop and step (a quotient's term names no argument)
                named |= witnessed({n for t in r[:3] for n in symbols(t)} | {
                    f"a:{x.id}" for e in (r.loop.start, r.loop.stop, r.loop.step)
                    for x in K.walk_expr(e) if isinstance(x, K.Name) and x.id in model.params})
            named = sorted(named)
            given = ", ".join(f"{_witness_name(n)} = "
                              f"{z.eval(model.z3.Int(n), model_completion=True)}" for n in named)
            read = sorted(model.constexprs_read)
            given = ", ".join([given] * bool(given) + [
                f"{n} = {model.constexprs[n]} (constexpr)" for n in read])
            given = f" (with {given})" if given else ""
            in_range = {v.get_id() for v in range_fresh}
            wrapped = {const_name(z3, v).split("#")[0] for v in wraps
                       if v.get_id() not in in_range
                       and z.eval(v, model_completion=True).as_long()}
            if ranged:
                given += (" where a loop's int32 range arithmetic wraps around (bound the "
                          "arguments with tle.assume)")
            if "i32wrap" in wrapped:
                given += (" where int32 offset arithmetic wraps around (bound the arguments "
                          "with tle.assume, or compute the offsets in int64 with "
                          ".to(tl.int64))")
            if "i64wrap" in wrapped:
                given += " where 64-bit offset arithmetic wraps around modulo 2 ** 64"
            if "addrwrap" in wrapped:
                given += (f" where the offsets meet modulo {_power(wrap[1])} (the byte address "
                          f"wraps around modulo 2 ** 64)")
            if any(const_name(z3, v).split("#")[0] in ("fcast", "fcompare")
                   for v in ia.fresh + ib.fresh):
                # (race_terms.floating: the witness's float values are any the GPU may hold)
                given += (" where a float converted to an integer, or compared, has a value "
                          "that allows it (the check does not compute floats)")
                constexprs = {p.name for p in kern.params if p.constexpr}
                read = sorted(n for n in model.maybe_float_read if n in constexprs)
                if read:
                    given += (f" ({', '.join(read)}: a constexpr of no value here, "
                              f"which a launch may give as a float; give it one in "
                              f"DEFAULT_CONFIG or with --param, or use it where Triton takes "
                              f"only an integer, a range bound or a shape)")
                read = sorted(n for n in model.maybe_float_read if n not in constexprs)
                if read:
                    given += (f" ({', '.join(read)}: an argument no DEFAULT_CONFIG signature "
                              f"types, which a launch may pass as a float; type it in the "
                              f"signature (\"i32\"), or use it where Triton takes no float, "
                              f"a loop bound or a pointer's offset)")
            copied = "".join(
                f" (the load at line {x.op.loc.line} fills a slot of "
                f"{f'pipe `{x.gather.handle.pipe}`' if x.gather is not None else 'a pipe'}, "
                f"which the lowering copies by cp.async: its read of global memory is complete "
                f"only when a commit of that pipe after it arrives, and no hand-off of another "
                f"pipe orders it, nor a wait of a reader whose view lacks field"
                f"{'s' if len(x.gather_fields) > 1 else ''} "
                f"{', '.join(f'`{f}`' for f in sorted(x.gather_fields))}: such a reader waits "
                f"another field group's barrier, which completes with the copy in flight)"
                for x in (a, b) if x.gathered)
            for p1, p2, x in ((pa, pb, a), (pb, pa, b)):
                pipes = unreleased(model, kern, p1, p2)
                if pipes and not x.gathered:
                    names = ", ".join(f"`{n}`" for n in pipes)
                    copied += (f" (the commits of pipe{'s' if len(pipes) > 1 else ''} {names} "
                               f"by '{p1.kp.name}' fill the slot with loaded tiles only, which "
                               f"the lowering copies by cp.async and arrives on per thread "
                               f"with cp.async.mbarrier.arrive: that tracks the copies, not "
                               f"the partition's other accesses, so waiting such a commit "
                               f"orders none of them; store a field from registers too, or "
                               f"hand off through another pipe)")
            raise TleError(
                f"partitions '{pa.kp.name}' ({a.kind} at line {a.op.loc.line}"
                f"{_describe(model, z, ia)}) and '{pb.kp.name}' ({b.kind} at line "
                f"{b.op.loc.line}{_describe(model, z, ib)}) can reach the same global address "
                f"`{arg}` + {off}{given}, one writing, and no pipe hand-off orders the two (a commit "
                f"after the one and the wait of its index before the other, or a release and "
                f"the acquire a capacity later){copied}: a race; hand the data over in a pipe "
                f"slot, order the accesses with a hand-off, or keep them in one partition",
                where, check="memory-race")
    divided = check_divisions(model, parts, ATTEMPTS + ((PAIR_RLIMIT, 0),), Unproved)
    return sorted(tuple(sorted(x)) for x in relied) + divided
