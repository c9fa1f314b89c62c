"""The terms the protocol view (:mod:`.protocol`) is written in: the tables of Triton 3.6
operations it reads calls by, the source text of KIR expressions for its messages
(:func:`src`), and small queries on abstract values and accesses (slots held, views, writes
that are sure, one TMA box inside another)."""

from __future__ import annotations

import ast
import os
import re
from dataclasses import replace
from typing import Iterable, Optional, Union

from ..ir import kernel as K
from ..ir.expr import Affine, Cond
from ..ir.nodes import Access, CLOSED_FLAG, For, If, Loc, Stmt
from .parsed import per_tree
from .source_text import read_python
from .values import Aff, Const, Data, KernelArg, Poison, SlotV, Sym, TupleV, Value, WaitV


#: tl functions whose operands Triton 3.6 takes as compile-time values only: name -> (what,
#: its position, its keyword) (Walker.compile_time_operands)
COMPILE_TIME_OPERANDS = {
    "arange": ("arguments", 0, "start"), "zeros": ("shape", 0, "shape"),
    "full": ("shape", 0, "shape"), "reshape": ("shape", 1, "shape"),
    "broadcast_to": ("shape", 1, "shape"),
    **{r: ("axis", 1, "axis") for r in ("sum", "max", "min", "argmax", "argmin", "xor_sum",
                                        "cumsum", "cumprod")},
}

#: tl functions (and tensor methods) whose result is a view of their first argument: of a loaded
#: tile, the same tile rearranged (a matrix multiply still reads it from shared memory).
VIEW_OPS = frozenset({"trans", "permute", "reshape", "view", "broadcast_to", "expand_dims",
                      "convert_layout"})
#: Matrix multiplies: the fields their A and B operands are views of are read by wgmma.
DOT_OPS = frozenset({"dot", "warpgroup_mma", "dot_scaled", "mma_v2", "tcgen05_mma"})
#: Integer functions of their arguments only: of params and constants they are params.
PURE_OPS = frozenset({"cdiv", "minimum", "maximum", "program_id", "num_programs",
                      "next_power_of_2", "min", "max", "abs", "clamp"})
#: Pure integer functions whose value does not depend on the order of their arguments.
SYMMETRIC_OPS = frozenset({"minimum", "maximum", "min", "max"})
#: The functions and operators whose result's domain the walker narrows from its operands'
#: (note_function_domain, note_quotient_domain): a kernel-body load they take is an opaque param
#: of its own (PrologueWalker.load_base), so that their result is a derived param of it.
NARROWING_FUNCTIONS = frozenset({"minimum", "maximum", "min", "max", "abs", "clamp"})
NARROWING_BINOPS = frozenset({"//", "%", "&", ">>"})
#: Integer operators whose operands commute (derived params are keyed by canonical text).
COMMUTATIVE = frozenset({"+", "*", "&", "|", "^"})
#: Pure integer functions whose result is a runtime integer whatever their arguments. Every
#: `tl` one is too (`tl.minimum(C, 1000)` of constexprs is a tensor, so `(tl.minimum(C, 1000) -
#: 1000) // 8` divides with C's truncation); the builtins `min`/`max` of constexprs stay Python
#: ints.
RUNTIME_OPS = frozenset({"program_id", "num_programs"})
#: The leading parameters of the tl functions whose integer results the verifier models, as
#: Triton 3.6 spells them: `tl.program_id(axis=1)` is `tl.program_id(1)`, `tl.cdiv(N, div=64)`
#: is `tl.cdiv(N, 64)`. Given by keyword, they were read as an opaque value, a param of every
#: integer of its own, and a kernel comparing two spellings was rejected with a witness no
#: launch gives (`pid=-1`, `A=0` for `A = tl.maximum(N, y=1)`).
POSITIONAL_PARAMS = {"program_id": ("axis",), "num_programs": ("axis",), "cdiv": ("x", "div"),
                     "maximum": ("x", "y"), "minimum": ("x", "y"), "abs": ("x",)}


def by_position(params: tuple, args: list, kwargs: dict) -> tuple[list, dict]:
    """``args`` and ``kwargs`` with the keywords naming ``params`` after the positional
    arguments moved to their positions (as Python binds them); the rest stays as given."""
    args, kwargs = list(args), dict(kwargs)
    for p in params[len(args):]:
        if p not in kwargs:
            break
        args.append(kwargs.pop(p))
    return args, kwargs

FOLD_OPS = {"+": ast.Add, "-": ast.Sub, "*": ast.Mult, "//": ast.FloorDiv, "%": ast.Mod,
             "<<": ast.LShift, ">>": ast.RShift, "&": ast.BitAnd, "|": ast.BitOr,
             "^": ast.BitXor, "**": ast.Pow}

CondResult = Union[Cond, bool, "NotAffine"]


#: the `tl` spelling of the dtypes a slot store's message suggests casting to
TL_DTYPE_NAMES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32", "fp64": "float64",
             "fp8e4nv": "float8e4nv", "fp8e5": "float8e5"}


def mark_open_reads(stmts: list, slot: SlotV) -> list:
    """``stmts`` with every read of ``slot`` (its pipe, index and reader; not its closed flag)
    marked ``open_only``: it runs only where the slot's index was not closed."""
    out = []
    for st in stmts:
        if isinstance(st, Access) and st.side == "reader" and st.field != CLOSED_FLAG and \
                (st.pipe, st.index, st.reader) == (slot.pipe, slot.index, slot.reader):
            st = replace(st, open_only=True)
        elif isinstance(st, For):
            st = replace(st, body=tuple(mark_open_reads(list(st.body), slot)))
        elif isinstance(st, If):
            st = replace(st, then=tuple(mark_open_reads(list(st.then), slot)),
                         orelse=tuple(mark_open_reads(list(st.orelse), slot)))
        out.append(st)
    return out


class NotAffine:
    def __init__(self, reason: str):
        self.reason = reason


# ----------------------------------------------------------------------------------------------
# names and text


class Names:
    """The Python spelling of KIR names: an inlined helper's local ``_drain3_res`` is ``res``;
    the builder's temporaries (``_t5``, a helper's ``_drain3_ret``) have none."""

    def __init__(self, functions: Iterable[str]):
        self.functions = sorted(set(functions), key=len, reverse=True)
        self.cache: dict[str, tuple[str, Optional[str]]] = {}

    def split(self, kir: str) -> tuple[str, Optional[str]]:
        """(prefix, Python name) of a KIR local; the prefix is "" outside inlined helpers."""
        hit = self.cache.get(kir)
        if hit is None:
            hit = ("", kir)
            for f in self.functions:
                if kir.startswith(f"_{f}"):
                    m = re.match(r"(\d+)_([A-Za-z_]\w*)$", kir[len(f) + 1:])
                    if m:
                        hit = (kir[:len(kir) - len(m.group(2))], m.group(2))
                        break
            self.cache[kir] = hit
        return hit

    def py(self, kir: str) -> str:
        return self.split(kir)[1] or kir


_PREC = {"or": 4, "and": 5, "not": 6, "cmp": 7, "|": 8, "^": 9, "&": 10, "<<": 11, ">>": 11,
         "+": 12, "-": 12, "*": 13, "/": 13, "//": 13, "%": 13, "@": 13, "unary": 14, "**": 15,
         "atom": 17}


def source_text(f: Optional[str], sources: Optional[dict[str, str]],
                read_files: bool) -> Optional[str]:
    """The Python source of file ``f``: its entry in ``sources``, else (``read_files``) the file
    on disk; None when there is neither."""
    text = (sources or {}).get(f)
    if text is None and read_files and f and os.path.isfile(f):
        try:
            return read_python(f)
        except (OSError, SyntaxError, ValueError):
            return None
    return text


@per_tree
def _node_index(tree: ast.Module) -> tuple[dict, dict]:
    """The expression and statement nodes of ``tree`` by (line, column), and the values its
    `return` statements return by the same place (Source.at; shared, not to be changed)."""
    idx: dict[tuple[int, int], list[ast.AST]] = {}
    returns: dict[tuple[int, int], ast.AST] = {}
    for n in ast.walk(tree):
        if isinstance(n, (ast.expr, ast.stmt)):
            idx.setdefault((n.lineno, n.col_offset + 1), []).append(n)
        if isinstance(n, ast.Return) and n.value is not None:
            returns[(n.value.lineno, n.value.col_offset + 1)] = n.value
    return idx, returns


class Source:
    """The Python source behind KIR nodes: the AST node a KIR expression was built from, found
    by its location (and shape), so messages and param names spell expressions as written."""

    def __init__(self, sources: Optional[dict[str, str]] = None,
                 trees: Optional[dict[str, ast.Module]] = None, read_files: bool = True):
        self.sources = dict(sources or {})
        self.trees = dict(trees or {})  # files the builder parsed already
        self.read_files = read_files
        self.index: dict[Optional[str], dict[tuple[int, int], list[ast.AST]]] = {}
        # the places of the values `return` statements return, by file (:meth:`returned`)
        self.returns: dict[Optional[str], dict[tuple[int, int], ast.AST]] = {}
        # the identifiers each file spells (:meth:`spelt`)
        self.names: dict[Optional[str], set[str]] = {}

    def at(self, loc: Loc) -> list[ast.AST]:
        f = loc.file
        if f not in self.index:
            tree = self.trees.get(f)
            if tree is None:
                text = source_text(f, self.sources, self.read_files)
                try:
                    tree = ast.parse(text) if text is not None else None
                except SyntaxError:
                    tree = None
            self.index[f], self.returns[f] = _node_index(tree) if tree is not None else ({}, {})
        return self.index[f].get((loc.line, loc.column), [])

    def returned(self, e: object) -> bool:
        """Whether ``e`` was built from the value of a `return` statement (a helper's result)."""
        loc = getattr(e, "loc", None)
        if not isinstance(loc, Loc) or not loc.line:
            return False
        self.at(loc)
        value = self.returns.get(loc.file, {}).get((loc.line, loc.column))
        return value is not None and self.node(e) is value

    def node(self, e: object) -> Optional[ast.AST]:
        """The AST node ``e`` was built from, or None."""
        loc = getattr(e, "loc", None)
        if not isinstance(loc, Loc) or not loc.line:
            return None
        for n in self.at(loc):
            if _built_from(e, n):
                return n
        return None

    def call(self, loc: Loc) -> Optional[ast.Call]:
        """The outermost call at ``loc``."""
        return next((n for n in self.at(loc) if isinstance(n, ast.Call)), None)

    def stmt(self, loc: Loc, kind: type) -> Optional[ast.AST]:
        return next((n for n in self.at(loc) if isinstance(n, kind)), None)

    def spelt(self, loc: Loc, name: str) -> bool:
        """Whether the file of ``loc`` spells the identifier ``name`` anywhere (a variable the
        builder made, ``q__1`` of a tuple's item, is spelt nowhere)."""
        self.at(loc)
        ids = self.names.get(loc.file)
        if ids is None:
            ids = self.names[loc.file] = {n.id for nodes in self.index[loc.file].values()
                                          for n in nodes if isinstance(n, ast.Name)}
        return name in ids


_BINOP_TYPES = {"+": ast.Add, "-": ast.Sub, "*": ast.Mult, "/": ast.Div, "//": ast.FloorDiv,
                "%": ast.Mod, "&": ast.BitAnd, "|": ast.BitOr, "^": ast.BitXor,
                "<<": ast.LShift, ">>": ast.RShift, "**": ast.Pow}


def _same_loc(kir: object, node: ast.AST) -> bool:
    loc = getattr(kir, "loc", None)
    return isinstance(loc, Loc) and (loc.line, loc.column) == (node.lineno, node.col_offset + 1)


def _member_of(e: K.Op, n: ast.Call) -> bool:
    """Whether the op ``e`` is the member call ``n`` (``x.to(T)``, ``x.cdiv(2)``: the op's first
    argument is the receiver). The receiver is matched too: ``t.to(tl.int32).cdiv(2.5).to(...)``
    and its receiver's receiver ``t.to(tl.int32)`` start at one place, and a message naming the
    inner one printed the whole chain."""
    if not isinstance(n.func, ast.Attribute) or not e.args or \
            len(n.args) + len(n.keywords) != len(e.args) - 1 + len(e.kwargs):
        return False
    receiver = e.args[0]
    if isinstance(receiver, K.Name):
        return isinstance(n.func.value, ast.Name)
    return _built_from(receiver, n.func.value)


def _built_from(e: object, n: ast.AST) -> bool:
    """Whether the KIR expression ``e`` is the translation of the AST node ``n`` (same place)."""
    if isinstance(e, K.Op):
        if e.name == "T":
            return isinstance(n, ast.Attribute) and n.attr == "T"
        if e.name == "ifexp":
            return isinstance(n, ast.IfExp)
        if not isinstance(n, ast.Call):
            return False
        func = n.func
        last = func.attr if isinstance(func, ast.Attribute) else \
            func.id if isinstance(func, ast.Name) else None
        if last != ("to" if e.name == "to" else e.name.rsplit(".", 1)[-1]):
            return False
        given = len(n.args) + len(n.keywords)
        if e.name != "to" and given == len(e.args) + len(e.kwargs):
            return True
        return _member_of(e, n)
    if isinstance(e, K.Event):
        return isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and \
            n.func.attr == e.verb
    if isinstance(e, K.BinOp):
        return isinstance(n, ast.BinOp) and isinstance(n.op, _BINOP_TYPES.get(e.op, ())) and \
            _same_loc(e.rhs, n.right)
    if isinstance(e, K.UnaryOp):
        return isinstance(n, ast.UnaryOp)
    if isinstance(e, K.Compare):
        return isinstance(n, ast.Compare) and len(n.ops) == 1 and _same_loc(e.rhs, n.comparators[0])
    if isinstance(e, K.BoolOp):
        if compare_chain(e) is not None:
            return isinstance(n, ast.Compare) and len(n.ops) == len(e.items)
        return isinstance(n, ast.BoolOp) and len(n.values) == len(e.items) and \
            isinstance(n.op, ast.And if e.op == "and" else ast.Or)
    if isinstance(e, K.TupleExpr):
        return isinstance(n, (ast.Tuple, ast.List)) and len(n.elts) == len(e.items)
    if isinstance(e, K.Subscript):
        return isinstance(n, ast.Subscript) and _same_loc(e.value, n.value)
    if isinstance(e, K.SlotField):
        return isinstance(n, ast.Attribute) and n.attr == e.field
    if isinstance(e, K.ResultSlot):
        return isinstance(n, ast.Attribute) and n.attr == "slot"
    if isinstance(e, K.IsClosed):
        return isinstance(n, ast.Attribute) and n.attr == "is_closed"
    if isinstance(e, K.Const):  # a literal, or a name bound to a constant
        return isinstance(n, ast.Constant) and n.value == e.value or \
            isinstance(n, (ast.Name, ast.Attribute))
    if isinstance(e, (K.Global, K.DType, K.PipeRef, K.BufferRef, K.Handle)):
        return isinstance(n, (ast.Name, ast.Attribute, ast.Constant, ast.Call))
    return False


def src(e: object, names: Optional[Names] = None, temps: Optional[dict] = None,
        source: Optional[Source] = None) -> str:
    """A KIR expression as Python spells it: its source where it has one, else as
    ``ast.unparse`` would print it."""
    return _Src(names, temps or {}, source).text(e, 0)


class _Src:
    def __init__(self, names: Optional[Names], temps: dict, source: Optional[Source] = None):
        self.names = names
        self.temps = temps
        self.source = source

    def text(self, e: object, prec: int) -> str:
        t, p = self.node(e)
        return f"({t})" if p < prec else t

    def node(self, e: object) -> tuple[str, int]:
        t, p = self.render(e)
        if self.source is not None and not (isinstance(e, K.Name) and e.id in self.temps):
            n = self.source.node(e)
            if n is not None:
                return ast.unparse(n), p
        return t, p

    def render(self, e: object) -> tuple[str, int]:
        atom = _PREC["atom"]
        if isinstance(e, K.Const):
            return repr(e.value), atom
        if isinstance(e, K.Name):
            if e.id in self.temps:
                return self.node(self.temps[e.id])
            return (self.names.py(e.id) if self.names else e.id), atom
        if isinstance(e, K.Global):
            return e.id, atom
        if isinstance(e, K.DType):
            return f"tl.{e.name}", atom
        if isinstance(e, K.BinOp):
            p = _PREC[e.op]
            lp, rp = (p + 1, p) if e.op == "**" else (p, p + 1)
            return f"{self.text(e.lhs, lp)} {e.op} {self.text(e.rhs, rp)}", p
        if isinstance(e, K.UnaryOp):
            if e.op == "not":
                return f"not {self.text(e.operand, _PREC['not'])}", _PREC["not"]
            return f"{e.op}{self.text(e.operand, _PREC['unary'])}", _PREC["unary"]
        if isinstance(e, K.Compare):
            p = _PREC["cmp"]
            return f"{self.text(e.lhs, p + 1)} {e.op} {self.text(e.rhs, p + 1)}", p
        if isinstance(e, K.BoolOp):
            chain = compare_chain(e)
            if chain is not None:
                operands, ops = chain
                p = _PREC["cmp"]
                out = self.text(operands[0], p + 1)
                for op, o in zip(ops, operands[1:]):
                    out += f" {op} {self.text(o, p + 1)}"
                return out, p
            p = _PREC[e.op]
            parts = [self.text(x, p + 1 + i) for i, x in enumerate(e.items)]
            return f" {e.op} ".join(parts), p
        if isinstance(e, K.TupleExpr):
            items = [self.text(x, 0) for x in e.items]
            return ("(" + items[0] + ",)" if len(items) == 1 else
                    "(" + ", ".join(items) + ")"), atom
        if isinstance(e, K.Subscript):
            idx = [":" if i == ":" else repr(i) for i in e.index]
            return f"{self.text(e.value, atom)}[{', '.join(idx)}]", atom
        if isinstance(e, K.Op):
            args = [self.text(a, 0) for a in e.args]
            args += [f"{k}={self.text(v, 0)}" for k, v in e.kwargs]
            if e.name == "to" and e.args:
                return f"{self.text(e.args[0], atom)}.to({', '.join(args[1:])})", atom
            if e.name == "T" and len(e.args) == 1:
                return f"{self.text(e.args[0], atom)}.T", atom
            if e.name == "to_tensor" and len(e.args) == 1:
                return self.node(e.args[0])  # the number a name was bound to, as written
            if e.name == "ifexp" and len(e.args) == 3:
                c, a, b = e.args
                return f"{self.text(a, 4)} if {self.text(c, 4)} else {self.text(b, 3)}", 3
            return f"{op_text(e.name)}({', '.join(args)})", atom
        if isinstance(e, K.PipeRef):
            return e.pipe, atom
        if isinstance(e, K.BufferRef):
            return e.name, atom
        if isinstance(e, K.Handle):
            if e.side == "writer":
                return f"{e.pipe}.writer()", atom
            return f"{e.pipe}.reader({repr(e.reader) if e.reader else ''})", atom
        if isinstance(e, K.Event):
            return f"{self.text(e.handle, atom)}.{e.verb}({self.text(e.index, 0)})", atom
        if isinstance(e, K.SlotField):
            return f"{self.text(e.slot, atom)}.{e.field}", atom
        if isinstance(e, K.ResultSlot):
            return f"{self.text(e.result, atom)}.slot", atom
        if isinstance(e, K.IsClosed):
            return f"{self.text(e.result, atom)}.is_closed", atom
        return type(e).__name__, atom


def literal_arithmetic(e: K.Expr) -> bool:
    """Whether ``e`` is numbers written in place and arithmetic on them only (a constexpr in
    Triton 3.6), not a name nor a number a plain assignment made a tensor (``to_tensor``)."""
    if isinstance(e, K.Const):
        return True
    if isinstance(e, K.BinOp):
        return literal_arithmetic(e.lhs) and literal_arithmetic(e.rhs)
    if isinstance(e, K.UnaryOp):
        return literal_arithmetic(e.operand)
    return False


def op_text(name: str) -> str:
    """How an operation's function is spelled in Python (``builtins.min`` is ``min``)."""
    return name[len("builtins."):] if name.startswith("builtins.") else name


def compare_chain(e: K.Expr) -> Optional[tuple[list, list]]:
    """``a < b <= c`` as the builder writes it (an ``and`` of comparisons sharing their middle
    operands): (operands, ops), else None."""
    if not (isinstance(e, K.BoolOp) and e.op == "and" and len(e.items) > 1
            and all(isinstance(c, K.Compare) for c in e.items)):
        return None
    items = e.items
    if not all(items[i].rhs is items[i + 1].lhs for i in range(len(items) - 1)):
        return None
    return [items[0].lhs] + [c.rhs for c in items], [c.op for c in items]


# ----------------------------------------------------------------------------------------------
# walking KIR statements


def assigned_names(body: tuple) -> dict[str, int]:
    """KIR names assigned anywhere in ``body`` (loop variables included) → first line."""
    out: dict[str, int] = {}
    for s in K.walk_stmts(body):
        if isinstance(s, K.Assign):
            out.setdefault(s.target, s.loc.line)
        elif isinstance(s, K.For):
            out.setdefault(s.var, s.loc.line)
    return out


def generated(s: K.Assign) -> bool:
    """An assignment the builder made (a helper's parameter, its result, a temporary that keeps
    Python's order around an inlined helper), not one of the source: its value passes through
    unchanged (no name of its own). Such an assignment is located at its value; an augmented
    assignment ``x += 1`` is too, but its value reads ``x``."""
    if s.loc != s.value.loc or s.loc.line == 0:
        return False
    v = s.value
    return not (isinstance(v, K.BinOp) and isinstance(v.lhs, K.Name) and v.lhs.id == s.target)


def compound(a: Affine) -> bool:
    """Whether computing ``a`` takes an operation (a sum, a product) that may wrap in i32: not a
    constant, nor one variable itself (a param or loop variable, whose own value the i32 check
    covers)."""
    return not a.is_const and not (a.const == 0 and len(a.terms) == 1 and a.terms[0][1] == 1)


def affine_like(v: Optional[Value]) -> bool:
    return isinstance(v, (Aff, KernelArg, Sym)) or (isinstance(v, Data) and v.key is not None)


def carried_scalar(v: Optional[Value]) -> bool:
    """Whether a name holding ``v`` before a loop that assigns it is, inside the loop, a value
    that depends on the iteration: an integer, or a bool. Triton carries every such name
    through the loop (an i1 iter_arg for ``f = True`` ... ``f = False``): read as the
    constant it held before the loop, an ``if f:`` around events was dropped and the events
    were verified as running in every iteration, where they run in the first only."""
    return affine_like(v) or isinstance(v, Const) and isinstance(v.value, bool)


def value_fields(v: Optional[Value]) -> frozenset:
    return v.fields if isinstance(v, Data) else frozenset()


def holds_slot(v: Optional[Value]) -> bool:
    """Whether ``v`` is (or contains) a slot, a wait result or a view of a slot."""
    if isinstance(v, (SlotV, WaitV)):
        return True
    if isinstance(v, Poison):
        return v.slot
    if isinstance(v, Data):
        return bool(v.slots) or v.lost is not None
    if isinstance(v, TupleV):
        return any(holds_slot(x) for x in v.items)
    return False


#: tl / tle functions whose first argument is a pointer into global memory
POINTER_OPS = frozenset({"load", "store", "atomic_add", "atomic_and", "atomic_cas", "atomic_max",
                         "atomic_min", "atomic_or", "atomic_xchg", "atomic_xor", "make_block_ptr",
                         "make_tensor_descriptor", "prefetch_l2"})


def views_of(v: Optional[Value]) -> frozenset:
    """The slots and free buffers ``v`` (or a tuple item of it) is, or is a view of."""
    if isinstance(v, (SlotV, WaitV)):
        return frozenset({v})
    if isinstance(v, Poison):
        return frozenset({v}) if v.slot else frozenset()
    if isinstance(v, Data):
        return frozenset(v.slots) | frozenset(v.buffers) | (
            frozenset({v.lost}) if v.lost is not None else frozenset())
    if isinstance(v, TupleV):
        return frozenset().union(*(views_of(x) for x in v.items))
    return frozenset()


def sure_writes(body) -> list[Access]:
    """The writes that surely run when ``body`` does: its writer writes that run (not
    ``Access.may``, not a TMA copy, which an `if` on data refuses) outside any loop (one whose
    range may be empty), and those both branches of an `if` in it make (an affine `if`, or one
    already reduced to such writes)."""
    out: list[Access] = []
    for s in body:
        if isinstance(s, Access) and s.is_write and not s.may and not s.tma:
            out.append(s)
        elif isinstance(s, If):
            in_else = sure_writes(s.orelse)
            out.extend(a for a in sure_writes(s.then) if any(same_write(a, b) for b in in_else))
    return out


def read_backs_dropped(body) -> list[Stmt]:
    """``body`` (a branch of an `if` on data, no events in it) without the writer's read-backs
    that a write of the same slot field that surely runs precedes in its statement list: those
    read what the branch wrote, so rule 7 holds for them wherever the branch runs."""
    out: list[Stmt] = []
    written: list[Access] = []
    for s in body:
        if isinstance(s, Access) and s.readback and any(
                (w.pipe, w.field, w.index) == (s.pipe, s.field, s.index) for w in written):
            continue
        out.append(s)
        written.extend(sure_writes([s]))
    return out


def same_write(a: Access, b: Access) -> bool:
    """Whether two writes fill the same field of the same slot (where and how aside)."""
    return (a.side, a.pipe, a.field, a.index, a.reader) == (b.side, b.pipe, b.field, b.index,
                                                            b.reader)


def box_hull(a: tuple, b: tuple) -> tuple[Optional[int], Optional[int]]:
    """The least interval holding the intervals ``a`` and ``b`` (None: an open end)."""
    lo = None if a[0] is None or b[0] is None else min(a[0], b[0])
    hi = None if a[1] is None or b[1] is None else max(a[1], b[1])
    return lo, hi


def one_box_fits(a: tuple, b: tuple) -> bool:
    """Whether one TMA box fills slot fields of shapes ``a`` and ``b`` (ir/smem.py
    box_fits_field of both, the compile's rule): the box with the most unit dimensions of both in each gap between
    their other dimensions, tried against both by the compile's own rule."""
    from ..ir.smem import box_fits_field

    def gaps(shape: tuple) -> tuple[list[int], list[int]]:
        dims, ones, run = [], [], 0
        for d in shape:
            if d == 1:
                run += 1
            else:
                ones.append(run)
                dims.append(d)
                run = 0
        return dims, ones + [run]

    (da, ga), (db, gb) = gaps(a), gaps(b)
    if da != db:
        return False
    box: list[int] = []
    for i, d in enumerate(da):
        box += [1] * max(ga[i], gb[i]) + [d]
    box += [1] * max(ga[-1], gb[-1])
    return box_fits_field(box, list(a)) and box_fits_field(box, list(b))


def merge_views(a: Optional[Value], b: Optional[Value], reason: str) -> Optional[Data]:
    """The merge of two non-affine data values (or unbound names) that reach one point on
    different paths: the union of what they view; when they view different slots, the slot is
    path-dependent (``lost`` with ``reason``). None when either is not plain data."""
    if not all(x is None or isinstance(x, Data) for x in (a, b)):
        return None
    da = a if isinstance(a, Data) else Data()
    db = b if isinstance(b, Data) else Data()
    lost = da.lost or db.lost
    if da.slots != db.slots and lost is None:
        lost = reason
    # a view of a part of a field on either path is not the field itself (tle.gpu.tma_load's
    # destination must be)
    node = next((n for n in (da.node, db.node) if n is not None and
                 not isinstance(n, K.SlotField)), da.node if da.node is not None else db.node)
    return Data(node=node, fields=da.fields | db.fields, view=da.view or db.view,
                slots=da.slots | db.slots, buffers=da.buffers | db.buffers, lost=lost,
                partial=da.partial or db.partial)


# ----------------------------------------------------------------------------------------------
# the interpreter
