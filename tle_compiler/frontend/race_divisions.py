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
cannot decide, not proved. A division in a ``tl.where`` branch or a conditional expression is
computed whatever the condition, as Triton evaluates both (``tl.where(d != 0, s % d, 0)`` is
refused: write ``s % tl.maximum(d, 1)``); an ``if`` around it is read (``if d != 0: q = s %
d`` is kept). A division by a number other than 0 and -1 is none of these.
"""

from __future__ import annotations

from typing import Iterator

from ..diagnostics import TleError
from ..ir import kernel as K
from .race_sites import Part, Site
from .race_terms import Instance, Model, branch_conditions, const_name, floating, instance, term

def _post(e: K.Expr) -> Iterator[K.Expr]:
    for c in K.children(e):
        yield from _post(c)
    yield e


def divisions(part: Part) -> list[tuple[K.Expr, K.Expr, K.Expr, Site]]:
    """(the division, its dividend, its divisor, its site) of each ``//``, ``%`` and
    ``tl.cdiv`` in the partition's body, the sites numbered as race_sites.collect numbers
    them (the k-th node of a statement's expressions in evaluation order)."""
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

    walk(part.kp.body, ())
    return out


def _number(t):
    try:
        return t.as_long()
    except AttributeError:
        return None


def check_divisions(model: Model, parts: list[Part], Unproved, attempts) -> None:
    """Refuse (TleError, check ``division``) a run-time division of a partition whose divisor
    may be 0 (or -1 beside its type's least value) where it runs (module docstring); raise
    ``Unproved`` where z3 cannot decide one. ``model``: the race check's, set up to read
    values in their fixed-width types, with its budget (global_races.check_global_races);
    ``attempts``: (resource units, seed) of each try of a query, the last the longest."""
    from . import race_wraps

    for part in parts:
        for e, lhs, rhs, site in divisions(part):
            probe = Instance(part, site, "probe")
            if floating(model, lhs, probe, "part") or floating(model, rhs, probe, "part"):
                continue  # (a float's floor division: no undefined value)
            inst = instance(model, part, site, "D")
            branch_conditions(model, inst)
            z3 = model.z3
            with model.fixed_width():
                b = term(model, rhs, inst)
                c = _number(z3.simplify(b))
                if c is not None and c not in (0, -1):
                    continue  # (by a number: defined, whatever the dividend)
                a = term(model, lhs, inst)
                b = model.arith.operand(model, rhs, b, inst, "part")
                a = model.arith.operand(model, lhs, a, inst, "part")
                bits = race_wraps.bits(model, e if isinstance(e, K.BinOp) else lhs, inst,
                                       "part")
            least = -2 ** (bits - 1)
            bad = z3.Or(b == 0, z3.And(b == -1, a == least))
            # the race check's attempts (a few short ones with other seeds, then the whole
            # budget of a query), charged to the kernel's budget
            for limit, seed in attempts:
                if model.budget.left() <= 0 or model.budget.wall_left_ms() <= 0:
                    got = z3.unknown
                    break
                solver = z3.Solver()
                solver.set("random_seed", seed)
                solver.add(*inst.constraints, *model.facts, bad)
                got, _ = model.budget.check(solver, limit)
                if got != z3.unknown:
                    break
            where = e.loc if getattr(e.loc, "line", 0) else part.kp.loc
            if got == z3.unsat:
                continue
            if got != z3.sat:
                raise Unproved(
                    f"partition '{part.kp.name}': whether the divisor of the division at line "
                    f"{where.line} may be 0 was not decided (a division by 0 is undefined "
                    f"behaviour to LLVM, which the compiled kernel may rest on)", where)
            z = solver.model()
            vals = []
            for d in z.decls():
                n = d.name()
                if n.startswith("a:"):
                    vals.append(f"{n[2:]} = {z[d]}")
            for _, loop in inst.site.loops():
                if isinstance(loop, K.For):
                    vals.append(f"{loop.var} = "
                                f"{z.eval(inst.iters[id(loop)][1], model_completion=True)}")
            zero = z.eval(b, model_completion=True)
            at = f" (with {', '.join(sorted(vals))})" if vals else ""
            what = "0" if _number(zero) == 0 else f"-1 and the dividend {least}"
            raise TleError(
                f"partition '{part.kp.name}': the divisor of this integer division may be "
                f"{what}{at}: LLVM takes a division by 0 (or of the type's least value by -1) "
                f"as undefined behaviour and compiles the code around it for a divisor that "
                f"is not (`if d != 0:` after `s % d` is dropped), so no verdict holds there; "
                f"bound the divisor with tle.assume, test it in an `if` around the division, "
                f"or divide by `tl.maximum(d, 1)`", where, check="division")
