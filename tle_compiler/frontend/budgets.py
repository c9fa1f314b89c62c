"""Register budgets written as expressions of constexprs, evaluated for a launch's values.

``worker_num_regs=[224 + 8 * TMA, 224]`` is a number only once TMA has one. The protocol does not
read budgets, so a reading that leaves TMA free keeps them out (PartitionInfo.regs None) and
records each as a kernel IR expression (KernelInfo.budgets, built by build.py). The lowering needs
numbers: :func:`with_budgets` evaluates the expressions with the constexprs' values (Triton's
constexpr arithmetic, which is Python's; a bool is the integer Triton reads it as) and checks them
as ``warp_specialize`` checks literal budgets. A reading with those constexprs bound
(``read_kernels(bind=...)``) has its budgets evaluated so. The reading that was verified is the
one lowered: no second reading binds the budget's constexprs for the lowering alone."""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping

from ..diagnostics import TleError
from ..ir import kernel as K
from ..language.gpu import validate_warp_specialize
from ..language.registers import check_registers
from .folding import fold
from .kernel import KernelInfo


def with_budgets(info: KernelInfo, values: Mapping[str, object]) -> KernelInfo:
    """``info`` with the register budget of each worker partition a number, evaluated from its
    expression with the constexpr ``values``. An info whose budgets are numbers, or that has
    none, or one a constexpr of whose budgets has no value in ``values`` comes back as it is
    (the lowering refuses a partition without a budget, naming it). Raises TleError (check
    "bad-warp-specialize") at the budget list when a budget is no arithmetic it evaluates (a
    call) or is out of setmaxnreg's range."""
    if info.budgets is None or all(p.regs is not None for p in info.partitions[1:]):
        return info
    exprs, loc = info.budgets
    numbers = {k: int(v) for k, v in values.items()
               if isinstance(v, int)}  # bools too, as Triton reads them
    if any(isinstance(x, K.Name) and x.id not in numbers for e in exprs for x in K.walk_expr(e)):
        return info
    regs = []
    for part, e in zip(info.partitions[1:], exprs):
        v = _value(e, numbers)
        if not isinstance(v, int):
            raise TleError(f"warp_specialize: the register budget of partition '{part.name}' "
                           f"is not constexpr arithmetic the lowering can evaluate: write it "
                           f"with numbers, constexprs, operators and `x if c else y`", loc,
                           check="bad-warp-specialize")
        regs.append(int(v))  # a bool as the integer Triton reads it as
    _, checked = validate_warp_specialize(len(info.partitions),
                                          [p.warps for p in info.partitions[1:]], regs, loc,
                                          {"regs": loc})
    workers = tuple(replace(p, regs=r) for p, r in zip(info.partitions[1:], checked))
    info = replace(info, partitions=(info.partitions[0], *workers))
    # what the workers leave the default partition, refused at the budget list as the literal
    # budgets' refusal is at the call (the lowering's own check has only the partitions' lines)
    check_registers(info, at=loc)
    return info


def _value(e: K.Expr, numbers: Mapping[str, int]) -> object:
    """The value of budget expression ``e`` with each constexpr name its number: Python's, as
    Triton's constexpr arithmetic computes it (names, constants, operators, comparisons, `and`
    / `or`, `a if c else b`), or None where ``e`` is none of these."""
    if isinstance(e, K.Name):
        return numbers[e.id]
    if isinstance(e, K.Op) and e.name == "ifexp" and len(e.args) == 3:
        test = _value(e.args[0], numbers)
        return None if test is None else _value(e.args[1] if test else e.args[2], numbers)
    if isinstance(e, K.UnaryOp):
        return fold(replace(e, operand=_known(e.operand, numbers)))
    if isinstance(e, (K.BinOp, K.Compare)):
        return fold(replace(e, lhs=_known(e.lhs, numbers), rhs=_known(e.rhs, numbers)))
    if isinstance(e, K.BoolOp):
        return fold(replace(e, items=tuple(_known(x, numbers) for x in e.items)))
    return fold(e)


def _known(e: K.Expr, numbers: Mapping[str, int]) -> K.Expr:
    """``e`` as a constant of its value (itself where it has none, which fold then refuses)."""
    v = _value(e, numbers)
    return e if v is None else K.Const(v, e.loc)
