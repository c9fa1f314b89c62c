"""Which partition arguments are tensors: refused where the kernel is read.

A partition runs in its own warps with its own layouts, and the lowering hands a partition its
pipes' buffers, runtime scalars and constexprs (lowering/walks.bindings, tuples of them
flattened); a tensor the kernel body computed (``tl.arange(0, 64)``, a loaded row) has a layout
over the default partition's warps that another partition cannot take. Refusing it only in the
lowering would let tle-dump verify a kernel that then cannot be compiled, so the frontend
refuses it at the argument, before anything is verified.

The rank is inferred from the kernel body's IR only as far as it is certain: a value of unknown
rank (a call this module does not know) is not refused here.
"""

from __future__ import annotations

import re

from typing import Optional

from ..ir import kernel as K

#: The names of the builder's temporaries (build.py ``Builder.fresh("t")``: ``_t1``, ``_t2``, ...).
TEMPORARY = re.compile(r"_t\d+")

#: tl functions whose result has the rank of the broadcast of their (tensor) arguments
ELEMENTWISE = frozenset({"tl.where", "tl.minimum", "tl.maximum", "tl.cdiv", "tl.exp", "tl.exp2",
                         "tl.log", "tl.log2", "tl.sqrt", "tl.abs", "tl.fma", "tl.sigmoid",
                         "tl.umulhi", "to"})
#: reductions: rank - 1 along ``axis``, a scalar without one
REDUCTIONS = frozenset({"tl.sum", "tl.max", "tl.min", "tl.argmax", "tl.argmin", "tl.xor_sum",
                        "tl.reduce"})
#: functions of scalars only
SCALAR = frozenset({"tl.program_id", "tl.num_programs"})


def _axis(op: K.Op) -> Optional[K.Expr]:
    axis = op.kw("axis")
    if axis is None and len(op.args) > 1:
        axis = op.args[1]
    return axis


#: The rank of a name while its own assignments are being read (``x = x + 1`` in a loop): no
#: information from that path; the name's other assignments decide.
CYCLE = -1


def rank(e: K.Expr, assigns: dict[str, list[K.Expr]], memo: Optional[dict] = None
         ) -> Optional[int]:
    """The rank of ``e`` computed in the kernel body (0: a scalar), None when not certain.
    ``assigns``: each name the body assigns -> the values assigned to it; ``memo``: the ranks of
    names found so far (each name is read once, so a body of many rebindings stays linear)."""
    memo = {} if memo is None else memo
    r = _rank(e, assigns, memo)
    return None if r == CYCLE else r


def _rank(e: K.Expr, assigns: dict, memo: dict) -> Optional[int]:
    if isinstance(e, (K.Const, K.Global)):
        return 0 if isinstance(e.value, (bool, int, float)) else None
    if isinstance(e, K.Name):
        values = assigns.get(e.id)
        if values is None:
            return 0  # a kernel argument
        if e.id not in memo:
            memo[e.id] = CYCLE  # read while its own assignments are
            memo[e.id] = _broadcast([_rank(v, assigns, memo) for v in values])
        return memo[e.id]
    if isinstance(e, (K.BinOp, K.Compare)):
        return _broadcast([_rank(e.lhs, assigns, memo), _rank(e.rhs, assigns, memo)])
    if isinstance(e, K.UnaryOp):
        return _rank(e.operand, assigns, memo)
    if isinstance(e, K.BoolOp):
        return _broadcast([_rank(x, assigns, memo) for x in e.items])
    if isinstance(e, K.Subscript):
        base = _rank(e.value, assigns, memo)
        if base is not None and base > 0 and all(i == ":" or i is None or isinstance(i, int)
                                                 for i in e.index):
            # `:` keeps a dimension, None adds one, an integer takes one away
            return base + sum(1 for i in e.index if i is None) \
                - sum(1 for i in e.index if isinstance(i, int) and not isinstance(i, bool))
        return None
    if isinstance(e, K.Op):
        if e.name == "tl.arange":
            return 1
        if e.name in ("tl.zeros", "tl.full") and e.args and isinstance(e.args[0], K.TupleExpr):
            return len(e.args[0].items)
        if e.name in SCALAR:
            return 0
        if e.name == "tl.load" and e.args:
            return _rank(e.args[0], assigns, memo)
        if e.name in ELEMENTWISE:
            return _broadcast([_rank(a, assigns, memo) for a in e.args
                               if not isinstance(a, K.DType)])
        if e.name in REDUCTIONS and e.args:
            x = _rank(e.args[0], assigns, memo)
            axis = _axis(e)
            if x is None or x == CYCLE:
                return x
            if axis is None or (isinstance(axis, K.Const) and axis.value is None):
                return 0
            return max(x - 1, 0)
    return None


def _broadcast(ranks: list[Optional[int]]) -> Optional[int]:
    """A tensor if any operand is one; a scalar only if every operand is known to be (an operand
    read in its own cycle, CYCLE, says nothing)."""
    known = [r for r in ranks if r is not None]
    if known and max(known) > 0:
        return max(known)
    return max(known, default=CYCLE) if len(known) == len(ranks) else None


def tensor_item(e: K.Expr, assigns: dict[str, list[K.Expr]], where: str, depth: int = 0,
                memo: Optional[dict] = None) -> Optional[tuple[str, K.Expr, int]]:
    """The first item of the partition argument ``e`` (written ``where``: its parameter, then
    ``[i]`` per tuple level) that is a tensor of the kernel body: (where, expression, rank);
    None when no item is known to be one."""
    if depth > 64:
        return None
    if isinstance(e, K.TupleExpr):
        for i, x in enumerate(e.items):
            found = tensor_item(x, assigns, f"{where}[{i}]", depth + 1, memo)
            if found is not None:
                return found
        return None
    if isinstance(e, K.Name) and len(assigns.get(e.id, ())) == 1 \
            and isinstance(assigns[e.id][0], K.TupleExpr):
        return tensor_item(assigns[e.id][0], assigns, where, depth + 1, memo)
    r = rank(e, assigns, memo)
    if r is not None and r > 0 and isinstance(e, K.Name) and TEMPORARY.fullmatch(e.id) \
            and len(assigns.get(e.id, ())) == 1:
        # a temporary the builder bound a tuple's loading item to (build.py snapshot): the
        # error names the item as written
        return where, assigns[e.id][0], r
    return (where, e, r) if r is not None and r > 0 else None


def body_assigns(prologue) -> dict[str, list[K.Expr]]:
    """Each name the kernel body assigns -> the values assigned to it (in ifs and loops too)."""
    out: dict[str, list[K.Expr]] = {}
    for st in K.walk_stmts(prologue):
        if isinstance(st, K.Assign):
            out.setdefault(st.target, []).append(st.value)
        elif isinstance(st, K.For):
            out.setdefault(st.var, []).append(K.Const(0))
    return out


def source_text(e: K.Expr) -> str:
    """``e`` as the source spells it (for the error)."""
    from .protocol_terms import src

    return src(e)
