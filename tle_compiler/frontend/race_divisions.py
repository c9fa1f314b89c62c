"""Run-time integer divisions whose divisor may be 0, for the memory-race check
(frontend/global_races.py).

Triton computes a ``//`` or ``%`` of integers that are no numbers, and a ``tl.cdiv`` (``(x + d -
1) // d``), as LLVM's ``sdiv`` / ``srem`` (``udiv`` / ``urem`` of unsigned values), and LLVM
takes a division by 0, and a signed one of the type's least value by -1, as undefined
behaviour: not a value (which the race model reads there, race_terms._quotient) but a run that
may do anything, which LLVM's optimiser uses. Past ``s % d`` it takes ``d != 0`` for true: the
PTX of a partition storing ``x_ptr + s % d`` and then, under ``if d != 0:``, ``y_ptr + 100``
stores ``y_ptr + 100`` with no test of ``d`` (tle-dump --ptx, Triton 3.6), so at d = 0 it races
with another partition's store there under ``if d == 0:``, and a reader whose waits stand under
such an ``if`` waits, at d = 0, for commits that never come. The verifier reads the ``if`` as
Python does (adversarial round 76).

So every such division of a partition is checked where it stands (at each iteration of the
loops around it, under the conditions of the ``if``\\ s around it, with the arguments' domains):
where z3 finds values at which its divisor is 0, or -1 beside the least value of the
dividend's type, the kernel is refused at its line (check ``division``), naming them; where it
cannot decide, not proved. A divisor that is a kernel argument itself (``item // n_hb`` of the
bundled SparseMLA kernels, which their launcher passes >= 1), or one that arguments, program
ids and numbers alone make (``n_rows * NT``; the matmul tutorial's ``group_size_m = min(num_pid_m
- first_pid_m, GROUP_M)``, which a grid of the tiles' size keeps >= 1), is a launch's to choose: the verdict takes it nonzero and says so (of a
param it quantifies too: its values are then those at which the divisor is not 0) (JSON ``"assumed"``, a ``# memory-race:`` line, a note on stderr), as it
states the strides the race proof takes; ``tle.assume(d >= 1)`` makes it a domain a launch
checks. A division in a ``tl.where`` branch or a conditional expression is computed whatever
the condition, as Triton evaluates both; an ``if`` around it is read (``if d != 0: q = s % d``
is kept), as is a guard clause before it. A division by a number other than 0 and -1 is none of
these. One of the kernel body (before ``warp_specialize``, whose code comes first) is a note
where its divisor is the launch's, and not proved where it is any other value.
"""

from __future__ import annotations

import re

from typing import Iterator

from ..diagnostics import TleError
from ..ir import kernel as K
from .race_sites import Part, Site
from .race_terms import Instance, Model, branch_conditions, floating, instance, term


def _post(e: K.Expr) -> Iterator[K.Expr]:
    for c in K.children(e):
        yield from _post(c)
    yield e


def divisions(body) -> list[tuple[K.Expr, K.Expr, K.Expr, Site]]:
    """(the division, its dividend, its divisor, its site) of each ``//``, ``%`` and
    ``tl.cdiv`` in the statements ``body`` (a partition's), the sites numbered as
    race_sites.collect numbers them (the k-th node of a statement's expressions in evaluation
    order)."""
    out = []

    def nodes(exprs, prefix, i):
        k = 0
        for e in exprs:
            for x in _post(e):
                if isinstance(x, K.BinOp) and x.op in ("//", "%"):
                    out.append((x, x.lhs, x.rhs, Site(prefix + (("at", i, k),))))
                elif isinstance(x, K.Op) and x.name == "tl.cdiv" and len(x.args) == 2:
                    out.append((x, x.args[0], x.args[1], Site(prefix + (("at", i, k),))))
                k += 1

    def walk(stmts, prefix):
        for i, st in enumerate(stmts):
            if isinstance(st, (K.Assign, K.Eval)):
                nodes([st.value], prefix, i)
            elif isinstance(st, K.Return):
                if st.value is not None:
                    nodes([st.value], prefix, i)
            elif isinstance(st, K.For):
                nodes([st.start, st.stop, st.step], prefix, i)
                walk(st.body, prefix + (("for", i, st),))
            elif isinstance(st, K.If):
                nodes([st.cond], prefix, i)
                walk(st.then, prefix + (("if", i, st, "then"),))
                walk(st.orelse, prefix + (("if", i, st, "else"),))
            elif isinstance(st, K.While):
                inner = prefix + (("while", i, st),)
                nodes([st.cond], inner, -1)
                walk(st.body, inner)

    walk(body, ())
    return out


#: ops whose value is a function of their operands' values alone (no memory, no lane, no
#: program id): a divisor of them and of arguments is the launch's
_PURE = ("tl.cdiv", "tl.minimum", "tl.maximum", "min", "max", "builtins.min", "builtins.max",
         "to", "tl.cast", "tl.multiple_of", "tl.max_contiguous", "tl.max_constancy",
         "to_tensor", "tl.where", "ifexp")


def _launched(model: Model, part: Part, e: K.Expr, where: str, found: set, busy: set) -> bool:
    """Whether the value of ``e`` is made of kernel arguments (added to ``found``), program ids
    and counts (the launch's grid) and numbers alone, through the names it reads (a
    partition's assignments, its parameters' bindings, the kernel body's values): no loop
    variable, loaded value or lane."""
    if isinstance(e, (K.Const, K.Global, K.DType)):
        return True
    if isinstance(e, K.Name):
        key = (where, e.id)
        if key in busy:
            return False  # (a name its own value reads: a counter)
        busy = busy | {key}
        if where == "part":
            if e.id in part.loop_vars:
                return False
            vals = [(v, "part") for v, _ in part.assigns.get(e.id, [])]
            binds = dict(part.kp.bindings)
            if e.id in binds:
                vals.append((binds[e.id], "prologue"))
        else:
            if any(isinstance(st, K.For) and st.var == e.id
                   for st in K.walk_stmts(model.kern.prologue)):
                return False
            vals = [(v, "prologue") for v in model.prologue_assigns.get(e.id, [])]
            if not vals and e.id in model.params:
                found.add(e.id)
                return True
        return bool(vals) and all(_launched(model, part, v, w, found, busy) for v, w in vals)
    if isinstance(e, K.BinOp):
        return _launched(model, part, e.lhs, where, found, busy) and \
            _launched(model, part, e.rhs, where, found, busy)
    if isinstance(e, K.UnaryOp):
        return _launched(model, part, e.operand, where, found, busy)
    if isinstance(e, (K.Compare, K.BoolOp)):
        return all(_launched(model, part, x, where, found, busy) for x in K.children(e))
    if isinstance(e, K.Op) and e.name in ("tl.program_id", "tl.num_programs"):
        found.add("<grid>")  # (the launch's grid: one value for the program)
        return True
    if isinstance(e, K.Op) and e.name in _PURE:
        return all(_launched(model, part, x, where, found, busy)
                   for x in list(e.args) + [v for _, v in e.kwargs])
    return False


def _number(t):
    try:
        return t.as_long()
    except AttributeError:
        return None


#: the mark of a division note among check_global_races' results (beside the stride groups)
NOTE = "division:"


def check_divisions(model: Model, parts: list[Part], attempts, Unproved) -> list[tuple]:
    """Check each run-time division of the partitions where it runs (module docstring): one
    whose divisor may be 0 (or -1 beside its type's least value) is refused (TleError, check
    ``division``, naming the values z3 found), or, where the divisor is a kernel argument
    itself or arguments and the grid alone make (``n_rows * NT``), which only a launch
    chooses, taken
    nonzero by the verdict: returned as a note
    ``(NOTE, divisor text, file, line, column, refusal, arguments)`` (the words a refusal
    would have, with z3's values, where it found them, else ""), which the verdict states
    (cli/kernel_checks.py), as it states the strides the race proof takes. ``Unproved`` where
    z3 cannot decide one of another divisor. ``model``: the race check's, set up to read values in their fixed-width
    types, with its budget (global_races.check_global_races); ``attempts``: (resource units,
    seed) of each try of a query, the last the longest."""
    from . import race_wraps

    found = [_division(model, part, e, lhs, rhs, site, attempts, race_wraps, Unproved)
             for part in parts for e, lhs, rhs, site in divisions(part.kp.body)]
    found += _body_divisions(model, parts[0], Unproved) if parts else []
    notes: list[tuple] = []
    for note in found:
        if note is not None and note not in notes:
            notes.append(note)
    return notes


def _body_divisions(model: Model, part: Part, Unproved) -> list[tuple]:
    """The kernel body's divisions (before ``warp_specialize``: its code comes before every
    partition's, so LLVM may rest the partitions' code on its divisors too). Its work-item
    arithmetic divides by counts the launch makes (``item % n_rb`` of ``n_rb = cdiv(s_q *
    heads, BLOCK_H)``), which the model does not tie to the grid: a divisor of arguments, the
    grid and numbers alone is a note, as a partition's that z3 finds may be 0 (no values
    named); one by a number other than 0 and -1 is none; any other (a loaded value, a loop
    variable) is not proved."""
    notes = []
    z3 = model.z3
    for e, lhs, rhs, _ in divisions(model.kern.prologue):
        probe = Instance(part, Site(()), "probe")
        with model.fixed_width():  # (numbers and constexprs folded: `2 * BK`)
            b = term(model, rhs, probe, 24, "prologue")
            c = _number(z3.simplify(b))
            if c is None:
                b = model.arith.operand(model, rhs, b, probe, "prologue")
        if c is not None and c not in (0, -1):
            continue
        if c is None and model.budget.left() > 0:
            # a divisor the arguments' domains and the grid keep from 0 and -1 (a program
            # count is at least 1): none
            solver = z3.Solver()
            solver.add(*probe.constraints, *model.facts, z3.Or(b == 0, b == -1))
            if model.budget.check(solver, BODY_RLIMIT)[0] == z3.unsat:
                continue
        if floating(model, lhs, probe, "prologue") or floating(model, rhs, probe, "prologue"):
            continue  # (a float's floor division: no undefined value)
        found: set = set()
        loc = e.loc if getattr(e.loc, "line", 0) else model.kern.loc
        if not (_launched(model, part, rhs, "prologue", found, set()) and found):
            raise Unproved(
                f"the kernel body divides by a value that is no number, no argument and no "
                f"value of the grid (line {loc.line}): whether it may be 0 is not checked (a "
                f"division by 0 is undefined behaviour to LLVM, which the compiled kernel may "
                f"rest on)", loc)
        notes.append(_note(model, rhs, loc, "", sorted(found - {"<grid>"})))
    return notes


#: the resource units of the proof that a kernel-body divisor is neither 0 nor -1
BODY_RLIMIT = 200_000


def _note(model: Model, divisor: K.Expr, loc, message: str, args: list[str]) -> tuple:
    """The note of a divisor the launch chooses: ``(NOTE, divisor text, file, line, column,
    refusal, arguments)`` (check_divisions)."""
    from ..ir.kernel_text import _Printer

    try:
        text = _source_text(model, _Printer(model.kern, False), divisor)
    except Exception:  # noqa: BLE001 - (a node the printer has no form for: its names)
        text = " * ".join(args)
    return (NOTE, f"`{text}`", loc.file or "", loc.line, loc.column, message, tuple(args))


def _source_text(model: Model, printer, e: K.Expr) -> str:
    """``e`` as its source spells it, nearly: a temporary the frontend made for a call it
    hoisted (``_t5``, ``_f1__t4`` in a helper; the kernel body's one assignment of it)
    printed as that call, and a helper's local by its own name (the frontend renames the
    locals of an inlined helper ``f`` to ``_f<n>_<name>``)."""
    if isinstance(e, K.Name) and re.fullmatch(r"(_[A-Za-z]\w*?\d+_)?_t\d+", e.id):
        vals = model.prologue_assigns.get(e.id, [])
        if len(vals) == 1:
            e = vals[0]
    return re.sub(r"\b_[A-Za-z]\w*?\d+_([A-Za-z_]\w*)\b", r"\1", printer.expr(e))


def _division(model: Model, part: Part, e, lhs, rhs, site: Site, attempts, race_wraps,
              Unproved):
    """None where the divisor of one division is neither 0 nor -1 beside its type's least
    value where it runs; the note of an argument divisor that may be; else refused."""
    probe = Instance(part, site, "probe")
    if floating(model, lhs, probe, "part") or floating(model, rhs, probe, "part"):
        return None  # (a float's floor division: no undefined value)
    inst = instance(model, part, site, "D")
    branch_conditions(model, inst)
    z3 = model.z3
    with model.fixed_width():
        b = term(model, rhs, inst)
        c = _number(z3.simplify(b))
        if c is not None and c not in (0, -1):
            return None  # (by a number: defined, whatever the dividend)
        # a divisor the kernel's arguments and the grid alone make (`n_hb`, `n_rows * NT`,
        # `8 * tl.cdiv(N, 64)`, the matmul tutorial's `group_size_m`): a launch's
        found: set = set()
        launched = _launched(model, part, rhs, "part", found, set()) and bool(found)
        args = sorted(found - {"<grid>"})
        a = term(model, lhs, inst)
        b = model.arith.operand(model, rhs, b, inst, "part")
        a = model.arith.operand(model, lhs, a, inst, "part")
        bits = race_wraps.bits(model, e if isinstance(e, K.BinOp) else lhs, inst, "part")
    least = -2 ** (bits - 1)
    bad = z3.Or(b == 0, z3.And(b == -1, a == least))
    # the race check's attempts (a few short ones with other seeds, then the whole budget of
    # a query), charged to the kernel's budget
    got = z3.unknown
    for limit, seed in attempts:
        if model.budget.left() <= 0 or model.budget.wall_left_ms() <= 0:
            break
        solver = z3.Solver()
        solver.set("random_seed", seed)
        solver.add(*inst.constraints, *model.facts, bad)
        got, _ = model.budget.check(solver, limit)
        if got != z3.unknown:
            break
    if got == z3.unsat:
        return None
    loc = e.loc if getattr(e.loc, "line", 0) else part.kp.loc
    message = None
    if got == z3.sat:
        z = solver.model()
        vals = [f"{d.name()[2:]} = {z[d]}" for d in z.decls() if d.name().startswith("a:")]
        for _, loop in inst.site.loops():
            if isinstance(loop, K.For):
                vals.append(f"{loop.var} = "
                            f"{z.eval(inst.iters[id(loop)][1], model_completion=True)}")
        what = "0" if _number(z.eval(b, model_completion=True)) == 0 else \
            f"-1 and the dividend {least}"
        at = f" (with {', '.join(sorted(vals))})" if vals else ""
        message = (
            f"partition '{part.kp.name}': the divisor of this integer division may be "
            f"{what}{at}: LLVM takes a division by 0 (or of the type's least value by -1) as "
            f"undefined behaviour and compiles the code around it for a divisor that is not "
            f"(`if d != 0:` after `s % d` is dropped), so no verdict holds there; test the "
            f"divisor in an `if` around the division, bound it with tle.assume, or divide by "
            f"`tl.maximum(d, 1)`")
    if launched:
        # a launch's to choose: the verdict takes it nonzero, and says so (cli/kernel_checks.py)
        return _note(model, rhs, loc, message or "", args)
    if message is None:
        raise Unproved(
            f"partition '{part.kp.name}': whether the divisor of the division at line "
            f"{loc.line} may be 0 was not decided (a division by 0 is undefined behaviour to "
            f"LLVM, which the compiled kernel may rest on)", loc)
    raise TleError(message, loc, check="division")
