"""The text form of the kernel IR (KIR, :mod:`tle_compiler.ir.kernel`): printer and parser.

``tle-dump -p PASS FILE`` prints a kernel's KIR in this form, and tests store kernels in it (IR in,
pass, IR out), so the printer is *canonical* (one spelling per kernel: whitespace, comments,
redundant parentheses and the optional spellings below print the same) and the two are inverses:
``print_kernel(parse(print_kernel(k))) == print_kernel(k)`` and ``parse(print_kernel(k)) == k``
(source locations are never compared: every ``loc`` field is ``compare=False``; see
:func:`kir_equal` for a comparison that also tells ``1`` from ``1.0`` and ``True``, and NaN from
nothing). The parser builds KIR nodes with ``loc=Loc(path, line, column)`` of their first token
and does no semantic validation beyond what keeps a name's meaning unambiguous; every error is a
:class:`~tle_compiler.diagnostics.TleError` whose message says what was expected and ends with
``at LINE:COLUMN``. The printer raises :class:`KirPrintError` (a ValueError) for a kernel it
cannot write so that it reads back the same (see "What the printer refuses").

The language
============
::

    kernel sparse_mla_pipe(q_ptr, kv_ptr, s_kv, TOPK: constexpr, BLOCK_H: constexpr) num_warps=4 options(wgmma_pipeline=True) {
      const BK = 64
      const LOG2E = 1.4426950408889634

      pipe q capacity=1 one_shot fields=(q_l: bfloat16[1, BLOCK_H, 256])
      pipe kv capacity=2 readers=(left, right) fields=(kv_l: bfloat16[2, 64, 256], valid: int8[2, 64])

      buffer p_tile: bfloat16[64, 64]

      NK = TOPK // BK
      pid = (tl.program_id(1) * tl.num_programs(0) + tl.program_id(0)).to(tl.int64)

      partition producer default warps=4 (q = q, kv = kv, NK = NK) {
        slot = q.writer.acquire(0)
        tl.store(tle.gpu.local_ptr(slot.q_l), tl.load(q_ptr + tl.arange(0, 64)[None, :]))
        q.writer.commit(0)
        for ck in range(0, NK, 1) {
          kres = kv.reader[left fields=(kv_l)].wait(ck)
          s = tl.dot(tl.load(tle.gpu.local_ptr(kres.slot.kv_l)), x, acc)
          if ck > 0 { kv.reader[left].release(ck - 1) }
          done = kres.is_closed
        }
      }
      partition left warps=4 regs=240 (kv = kv) { }
    }

* A file holds any number of kernels. A kernel header is ``kernel NAME(PARAMS) num_warps=N
  [options(KEY=LITERAL, ...)] {`` (``num_warps`` defaults to 4 when left out); a param is ``NAME``
  or ``NAME: constexpr`` or ``NAME: float`` (an argument the source declares a float: no
  integer param of the protocol).
* The kernel body holds, one per line: ``const NAME = LITERAL`` (a module constant), ``pipe NAME
  capacity=N [one_shot] [named_barrier] [readers=(a, b)] [fields=(f: DTYPE[SHAPE], ...)]`` (attributes in any
  order, each at most once; ``capacity`` required and at least 1), ``buffer NAME: DTYPE[SHAPE]``
  (a SHAPE entry is an integer or a name, ``float32[]`` has none), the prologue's statements, and
  the partitions: ``partition NAME [default] [warps=N] [regs=N] [(PARAM = EXPR, ...)] { BODY }``
  (attributes in any order, ``warps`` defaults to 4; the bindings in order). Declarations may come
  anywhere in the body; the prologue's statements come before the first partition.
* Statements: ``NAME = EXPR``, ``EXPR``, ``for NAME in range(START, STOP, STEP) { }`` (or
  ``static_range``; ``range(STOP)`` and ``range(START, STOP)`` mean a start of 0 and a step of 1),
  ``if EXPR { } else { }`` (``else if EXPR { }`` is an ``else`` holding one ``if``; an empty
  ``else`` equals none). Newlines or ``;`` separate statements; a block may stand on one line
  (``{ a = 1; b = 2 }``); ``else`` may start the line after the ``}``.
* Expressions are Python's, with its precedence: ``or and not``, comparisons (two operands: a chain
  ``a < b < c`` is an error), ``| ^ & << >> + - * / // % **``, unary ``- + ~``, calls, subscripts,
  attributes, tuples ``(a, b)`` / ``(a,)`` / ``()`` (``[a, b]`` is the same tuple), literals
  ``12 1.5 1e-05 inf nan True False None 'text'``. A minus sign written straight before a number
  is part of the number: ``-1`` is ``Const(-1)``, ``-(1)`` is ``UnaryOp('-', Const(1))``.
* A call of a dotted path is an operation: ``tl.load(p, mask=m)`` is ``Op("tl.load", (p,),
  (("mask", m),))``. ``x.to(tl.float32)`` is ``Op("to", (x, tl.float32))`` (and ``to(x,
  tl.float32)`` too). No other method is called.
* ``tl.NAME`` is a dtype (``DType``). A plain name is, in this order: a ``const`` of the kernel
  (``Global``, with the const's value), a pipe of the kernel (``PipeRef``), ``inf`` / ``nan``
  (float constants), else a local (``Name``). A name in backticks (```BK```) is always a local.
* Pipe handles: ``kv.writer``, ``kv.reader``, ``kv.reader[left]``, ``kv.reader[left
  fields=(kv_l, kv_r)]``, ``kv.reader[fields=(kv_r)]``; events ``HANDLE.VERB(INDEX)`` with VERB one
  of acquire, commit, close, wait, release; ``EXPR.slot`` and ``EXPR.is_closed`` of a wait's
  result; ``EXPR.FIELD`` a slot field (``EXPR.`slot```: a field that is called ``slot``).
* Subscripts: ``x[:, None]``, ``t[0]``, any expression as an entry (``x[(None)]``: the constant
  None, not a new axis); ``x[]`` has no entries.
* ``#`` comments run to the end of the line.
* Names are identifiers. Words are keywords only where the grammar expects them: ``kernel`` before
  a kernel, ``const pipe buffer partition`` at the start of a kernel item, ``for if`` at the start
  of a statement, ``in range static_range`` in a ``for``, ``options`` in a kernel header, ``True
  False None not and or`` in expressions, ``else`` after a block; elsewhere they are names. Any
  name may be written in backticks wherever a name is expected; the printer does so for Python's
  keywords and where a plain name would mean something else.

Canonical printing
==================
* one kernel after another, a blank line between them; in a kernel: the header, then the consts,
  the pipes, the buffers, the prologue and each partition, a blank line between these sections;
  two spaces of indentation per level; one statement per line; ``{ }`` for an empty block;
* pipe attributes in the order capacity, one_shot, named_barrier, readers, fields (false and empty
  ones left out);
  partition headers ``partition NAME [default] warps=N [regs=N] [(BINDINGS)] {`` (no parentheses
  without bindings); ``options(...)`` only when there are options;
* ``for`` prints its start, stop and step; an ``else`` holding exactly one ``if`` prints as
  ``} else if``; an empty ``else`` is not printed;
* parentheses only where Python's precedence needs them, plus: around a number before ``.``
  (``(1).to(tl.float32)``) and after a unary minus (``-(1)``), around a handle before ``.`` or
  ``[`` (``(kv.writer)[0]``), around an expression statement of the prologue that would start with
  ``const``, ``pipe``, ``buffer`` or ``partition``;
* floats as Python's ``repr`` (shortest round trip; ``inf``, ``-inf``, ``nan``), strings as
  Python's ``repr``; ``1e999`` stands for inf in a kernel that declares a const or pipe ``inf``;
* backticks around a name exactly where a plain one would read back differently: Python keywords;
  for a ``Name``, also ``tl``, ``inf``, ``nan`` and the kernel's consts and pipes; for a field after
  ``.``, also ``slot``, ``is_closed``, ``writer``, ``reader``; for the target of a prologue
  assignment, also ``const pipe buffer partition``.

``locations=True`` appends ``  # FILE:LINE`` to every statement and declaration that has a
location (comments are ignored by the parser, so the output still parses).

What the printer refuses (:class:`KirPrintError`)
=================================================
KIR that no text reads back as: a ``Global`` whose id is not a ``const`` of the kernel, or whose
value is not the const's (compared by type and value); a ``PipeRef`` to a pipe the kernel does not
declare; two consts with one id, or a const and a pipe with one name, or either named ``tl`` or a
Python keyword; ``Const(nan)`` in a kernel that declares a const or pipe named ``nan``; an ``Op``
name that is not a dotted path of identifiers, or whose second part is ``writer`` / ``reader``
(``kv.writer.acquire(0)`` is an event) or whose last part is ``to`` (``x.to(...)`` is the cast); a
``DType`` named ``writer`` / ``reader``; an event verb other than the five; a ``Handle`` side other
than writer / reader; a ``BoolOp`` of fewer than two items; an unknown operator; a ``Const`` or
literal that is not an int, float, bool, str or None (a literal may also be a tuple of literals or
a ``DType``); a subscript entry other than ``":"``, ``None`` or an expression node; a shape entry
other than an int or a name; a pipe capacity below 1; names that are not identifiers.
"""

from __future__ import annotations

import ast
import contextvars
import dataclasses
import functools
import itertools
import keyword
import math
import os
import re
import sys
import unicodedata
import warnings
from pathlib import Path
from typing import Any, Iterator, Optional, Union

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from ..diagnostics import TleError
from .attrs import ATTR_TYPES, AffineIndex, BitAnd, BitXor, FloorDiv, Mod
from .kernel import (Assign, BinOp, BoolOp, Buffer, BufferRef, Compare, Const, DType, Eval, Event,
                     Expr, For, Global, Handle, If, IsClosed, KParam, KPartition, Kernel, Name, Op,
                     PipeDecl, PipeRef, Return, ResultSlot, SlotField, Stmt, Subscript, TupleExpr,
                     UnaryOp, While, children, named_pipe_error, slot_shape_error, stmt_exprs,
                     walk_expr, walk_stmts)
from .nodes import NOLOC, VERBS, Loc
from .syntax_errors import expected_phrase, terminal_word, token_word

__all__ = ["print_kernel", "print_kernels", "parse_kernels", "parse_kernel", "parse_kernel_file",
           "without_locations", "kir_key", "kir_equal", "KirPrintError", "BINARY_OPS",
           "UNARY_OPS", "CMP_OPS", "BOOL_OPS", "EXPR_TYPES", "STMT_TYPES", "location_slots"]

INDENT = "  "
DEFAULT_WARPS = 4  # tle_compiler.jit.DEFAULT_NUM_WARPS (not imported: jit imports the frontend)

# precedence levels, loosest first (Python's)
_OR, _AND, _NOT, _CMP, _BOR, _BXOR, _BAND, _SHIFT, _ARITH, _TERM, _UNARY, _POWER, _POSTFIX, _ATOM = \
    range(1, 15)

#: Binary operators with their precedence level (all left-associative but ``**``).
BINARY_OPS = {"|": _BOR, "^": _BXOR, "&": _BAND, "<<": _SHIFT, ">>": _SHIFT, "+": _ARITH,
              "-": _ARITH, "*": _TERM, "/": _TERM, "//": _TERM, "%": _TERM, "**": _POWER}
UNARY_OPS = ("-", "+", "~", "not")
CMP_OPS = ("==", "!=", "<", "<=", ">", ">=")
BOOL_OPS = ("and", "or")

#: Words at the start of a kernel item that a prologue statement cannot start with unescaped.
_ITEM_WORDS = ("const", "pipe", "buffer", "partition")
#: Attribute names after ``.`` that mean something other than a slot field.
_SPECIAL_ATTRS = ("slot", "is_closed", "writer", "reader")
_NAME_RE = re.compile(r"[^\W\d]\w*")
_ITEM_START_RE = re.compile(r"(?:const|pipe|buffer|partition)(?![\w`])")


#: Every expression node type (an attribute value of one of these prints as ``expr(...)``).
EXPR_TYPES = (Const, Name, Global, DType, BinOp, UnaryOp, Compare, BoolOp, TupleExpr, Subscript, Op,
              PipeRef, BufferRef, Handle, Event, SlotField, ResultSlot, IsClosed)
STMT_TYPES = (Assign, Eval, For, If, While, Return)


class KirPrintError(ValueError):
    """A kernel that the text form cannot write so that it reads back the same."""


# ---------------------------------------------------------------------------------------------
# locations
#
# A statement or declaration is printed on a line of its own; its location comment lists the
# locations of the node and of every sub-node printed on that line (its expressions, a pipe's field
# buffers, a kernel's params, the KIR expressions inside attributes), in the order of
# location_slots. The parser builds the line's nodes, then puts these locations back in the same
# order (_relocate). Nested statement bodies and the kernel's declarations have lines of their own.

#: Fields whose nodes are printed on lines of their own (not part of the line's location group).
_OWN_LINES = {Kernel: ("consts", "pipes", "buffers", "prologue", "partitions"),
              KPartition: ("body",), For: ("body",), If: ("then", "orelse"), While: ("body",)}


def location_slots(node: Any) -> Iterator[Loc]:
    """The locations the location comment of ``node``'s line lists: ``node.loc`` first, then those
    of its fields' nodes (tuples and nested dataclasses, in field order), except the fields printed
    on lines of their own (statement bodies; a kernel's consts, pipes, buffers, prologue and
    partitions)."""
    if isinstance(node, tuple):
        for x in node:
            yield from location_slots(x)
        return
    if not dataclasses.is_dataclass(node) or isinstance(node, (type, Loc)):
        return
    fields = dataclasses.fields(node)
    skip = _OWN_LINES.get(type(node), ())
    if any(f.name == "loc" for f in fields):
        yield node.loc
    for f in fields:
        if f.name != "loc" and f.name not in skip:
            yield from location_slots(getattr(node, f.name))


def _relocate(node: Any, locs: Iterator[Loc]) -> Any:
    """``node`` with the locations of :func:`location_slots` taken from ``locs``, in order."""
    if isinstance(node, tuple):
        items = [_relocate(x, locs) for x in node]
        return node if all(a is b for a, b in zip(items, node)) else tuple(items)
    if not dataclasses.is_dataclass(node) or isinstance(node, (type, Loc)):
        return node
    fields = dataclasses.fields(node)
    skip = _OWN_LINES.get(type(node), ())
    changes = {}
    if any(f.name == "loc" for f in fields):
        changes["loc"] = next(locs)
    for f in fields:
        if f.name != "loc" and f.name not in skip and f.init:
            value = getattr(node, f.name)
            new = _relocate(value, locs)
            if new is not value:
                changes[f.name] = new
    return dataclasses.replace(node, **changes) if changes else node


_LOCPATH_RE = re.compile(r"(?:[^\W\d]|[./~])[\w./~+@%=,\-]*")  # the grammar's LOCPATH


def _loc_file(file: Optional[str]) -> str:
    if file is None:
        return "?"
    if not isinstance(file, str):
        raise KirPrintError(f"location file {file!r} is not a string")
    return file if _LOCPATH_RE.fullmatch(file) else repr(file)


def _format_locations(locs: list[Loc], base_file: Optional[str]) -> str:
    """One group of a location comment: ``-`` when none of ``locs`` is set, else the first location
    (``LINE:COL`` when its file is ``base_file``), ``|``, and each further one relative to the one
    before it (``COL`` on the same line of the same file, ``LINE:COL`` in the same file,
    ``FILE:LINE:COL`` elsewhere, ``-`` for none)."""
    if all(loc == NOLOC for loc in locs):
        return "-"
    items = []
    prev_file, prev_line = base_file, None
    for loc in locs:
        if loc == NOLOC:
            items.append("-")
            continue
        if type(loc.line) is not int or type(loc.column) is not int or loc.line < 0 \
                or loc.column < 0:
            raise KirPrintError(f"location {loc!r}: line and column are non-negative ints")
        if loc.file == prev_file and loc.line == prev_line:
            items.append(str(loc.column))
        elif loc.file == prev_file:
            items.append(f"{loc.line}:{loc.column}")
        else:
            items.append(f"{_loc_file(loc.file)}:{loc.line}:{loc.column}")
        prev_file, prev_line = loc.file, loc.line
    return items[0] + ("" if len(items) == 1 else " | " + " ".join(items[1:]))


def _is_ident(s: object) -> bool:
    return isinstance(s, str) and s.isidentifier() and _NAME_RE.fullmatch(s) is not None


def _lit_key(v: object) -> object:
    """A type-exact, NaN-equal key of a literal value (for comparing a Global with its const)."""
    if isinstance(v, tuple):
        return ("tuple",) + tuple(_lit_key(x) for x in v)
    if isinstance(v, DType):
        return ("dtype", v.name)
    if type(v) is float:
        return ("float", "nan" if math.isnan(v) else repr(v))
    return (type(v).__name__, v)


# ---------------------------------------------------------------------------------------------
# printer


def print_kernels(kernels, locations: bool = True) -> str:
    """Several kernels, a blank line between them (what :func:`parse_kernels` reads back)."""
    return "\n".join(print_kernel(k, locations) for k in kernels)


def print_kernel(k: Kernel, locations: bool = True) -> str:
    """One kernel in canonical text form (ends with a newline). ``locations``: end every statement
    and declaration line with its location comment (``parse_kernel`` puts them back); without
    them, the parser locates nodes in the text it reads. Raises :class:`KirPrintError` for KIR that
    would not read back the same (see the module docstring)."""
    return _Printer(k, locations).kernel()


class _Printer:
    def __init__(self, k: Kernel, locations: bool):
        self.k = k
        self.locations = locations
        self.consts: dict[str, object] = {}
        for cid, value in k.consts:
            self.decl_name(cid, "const")
            if cid in self.consts:
                raise KirPrintError(f"kernel '{k.name}': const '{cid}' is declared twice")
            self.consts[cid] = value
        self.pipes = set()
        for p in k.pipes:
            self.decl_name(p.name, "pipe")
            if p.name in self.consts:
                raise KirPrintError(f"kernel '{k.name}': '{p.name}' is both a const and a pipe "
                                    f"(a plain name could not tell them apart)")
            self.pipes.add(p.name)
        self.buffers = set()
        for b in k.buffers:
            self.decl_name(b.name, "buffer")
            if b.name in self.consts or b.name in self.pipes:
                raise KirPrintError(f"kernel '{k.name}': '{b.name}' is both a buffer and a const or "
                                    f"pipe (a plain name could not tell them apart)")
            self.buffers.add(b.name)
        self.shadowed = {"inf", "nan"} & (set(self.consts) | self.pipes | self.buffers)
        self.base_file = k.loc.file if isinstance(k.loc, Loc) else None

    def decl_name(self, name: object, what: str) -> None:
        if not _is_ident(name) or keyword.iskeyword(name) or name == "tl":
            raise KirPrintError(f"kernel '{self.k.name}': a {what} cannot be named {name!r} (an "
                                f"identifier other than a Python keyword and 'tl')")

    # -- names --------------------------------------------------------------------------------
    @staticmethod
    def ident(s: object, what: str = "name") -> str:
        """A name where the grammar expects one: backticks for Python keywords."""
        if not _is_ident(s):
            raise KirPrintError(f"{what} {s!r} is not an identifier")
        return f"`{s}`" if keyword.iskeyword(s) else s  # type: ignore[return-value]

    def local(self, s: str) -> str:
        """A Name in an expression: backticks wherever the plain word resolves to something else."""
        if not _is_ident(s):
            raise KirPrintError(f"local name {s!r} is not an identifier")
        if (keyword.iskeyword(s) or s in ("tl", "inf", "nan") or s in self.consts
                or s in self.pipes or s in self.buffers):
            return f"`{s}`"
        return s

    @staticmethod
    def attr(s: str) -> str:
        if not _is_ident(s):
            raise KirPrintError(f"slot field {s!r} is not an identifier")
        return f"`{s}`" if keyword.iskeyword(s) or s in _SPECIAL_ATTRS else s

    # -- literals -----------------------------------------------------------------------------
    def literal(self, v: object) -> str:
        """A const or option value."""
        if isinstance(v, tuple):
            items = [self.literal(x) for x in v]
            return "(" + items[0] + ",)" if len(items) == 1 else "(" + ", ".join(items) + ")"
        if isinstance(v, DType):
            return self.dtype(v.name)
        if type(v) is float and math.isinf(v):
            return "inf" if v > 0 else "-inf"
        if type(v) is float and math.isnan(v):
            return "nan"
        return self.scalar(v)

    def avalue(self, v: object) -> str:
        """An attribute value: a literal, a tuple, ``expr(EXPR)`` for a KIR expression,
        ``Class(field = value, ...)`` for an instance of a class registered in ATTR_TYPES."""
        if isinstance(v, tuple):
            items = [self.avalue(x) for x in v]
            return "(" + items[0] + ",)" if len(items) == 1 else "(" + ", ".join(items) + ")"
        if isinstance(v, EXPR_TYPES):
            return f"expr({self.expr(v)})"
        if isinstance(v, _INDEX_TYPES):
            e = index_as_expr(v)
            if e is not None:
                return f"index({self.expr(e)})"
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            cls = type(v)
            name = cls.__name__
            if ATTR_TYPES.get(name) is not cls:
                raise KirPrintError(f"attribute value {v!r}: its class {name} is not registered in "
                                    f"ir/attrs.py ATTR_TYPES (decorate it with @attr_type)")
            if not _is_ident(name) or keyword.iskeyword(name) or name == "expr":
                raise KirPrintError(f"attribute class name {name!r} cannot be printed (an "
                                    f"identifier other than a Python keyword and 'expr')")
            # a field marked ``elide_default`` is left out at its default (the parser fills it in)
            fields = [f"{self.ident(f.name, 'attribute field')} = {self.avalue(getattr(v, f.name))}"
                      for f in dataclasses.fields(v) if f.init and not (
                          f.metadata.get("elide_default") and getattr(v, f.name) == f.default)]
            return f"{name}({', '.join(fields)})"
        if isinstance(v, DType) or not (v is None or type(v) in (bool, int, float, str)):
            raise KirPrintError(f"attribute value {v!r} ({type(v).__name__}): expected an int, "
                                f"float, bool, str, None, a tuple, a KIR expression or a "
                                f"registered attribute class")
        return self.literal(v)

    def attrs(self, attrs: object, what: str) -> str:
        """`` attrs {key = value, ...}`` (keys sorted), or nothing for no attributes."""
        if not isinstance(attrs, tuple) or not all(isinstance(a, tuple) and len(a) == 2
                                                   for a in attrs):
            raise KirPrintError(f"attrs of {what}: {attrs!r} is not a tuple of (key, value) pairs")
        if not attrs:
            return ""
        keys = [key for key, _ in attrs]
        if len(set(keys)) != len(keys):
            raise KirPrintError(f"attrs of {what}: a key is given twice ({keys})")
        items = [f"{self.ident(key, 'attribute key')} = {self.avalue(value)}"
                 for key, value in sorted(attrs, key=lambda a: a[0])]
        return " attrs {" + ", ".join(items) + "}"

    @staticmethod
    def scalar(v: object) -> str:
        t = type(v)
        if v is None or t is bool or t is int:
            return repr(v)
        if t is float:
            return repr(v)
        if t is str:
            return repr(v)
        raise KirPrintError(f"{v!r} ({t.__name__}) is not a KIR constant (int, float, bool, str "
                            f"or None)")

    def dtype(self, name: object) -> str:
        if not _is_ident(name) or keyword.iskeyword(name) or name in ("writer", "reader"):
            raise KirPrintError(f"dtype name {name!r} cannot be printed as tl.NAME")
        return f"tl.{name}"

    # -- expressions --------------------------------------------------------------------------
    def expr(self, e: Expr, need: int = 0) -> str:
        text, prec = self._expr(e)
        return f"({text})" if prec < need else text

    def receiver(self, e: Expr) -> str:
        """``e`` before ``.``: a number or a handle goes in parentheses."""
        if isinstance(e, Handle) or (isinstance(e, Const) and type(e.value) in (int, float)):
            return f"({self.expr(e)})"
        return self.expr(e, _POSTFIX)

    def const(self, v: object) -> tuple[str, int]:
        if type(v) is float and math.isnan(v):
            if "nan" in self.shadowed:
                raise KirPrintError(f"kernel '{self.k.name}' declares a const or pipe 'nan': a "
                                    f"NaN constant cannot be written in it")
            return "nan", _ATOM
        if type(v) is float and math.isinf(v):
            word = "1e999" if "inf" in self.shadowed else "inf"
            return (word, _ATOM) if v > 0 else ("-" + word, _UNARY)
        text = self.scalar(v)
        return text, (_UNARY if text.startswith("-") else _ATOM)

    def _expr(self, e: Expr) -> tuple[str, int]:
        if isinstance(e, Const):
            return self.const(e.value)
        if isinstance(e, Name):
            return self.local(e.id), _ATOM
        if isinstance(e, Global):
            if e.id not in self.consts:
                raise KirPrintError(f"kernel '{self.k.name}': Global '{e.id}' has no const line "
                                    f"(Kernel.consts lists every module constant a Global names)")
            if _lit_key(self.consts[e.id]) != _lit_key(e.value):
                raise KirPrintError(f"kernel '{self.k.name}': Global '{e.id}' has the value "
                                    f"{e.value!r}, its const {self.consts[e.id]!r}")
            return e.id, _ATOM
        if isinstance(e, PipeRef):
            if e.pipe not in self.pipes:
                raise KirPrintError(f"kernel '{self.k.name}': PipeRef to '{e.pipe}', which is not "
                                    f"a pipe of the kernel")
            return e.pipe, _ATOM
        if isinstance(e, BufferRef):
            if e.name not in self.buffers:
                raise KirPrintError(f"kernel '{self.k.name}': BufferRef to '{e.name}', which is "
                                    f"not a buffer of the kernel")
            return e.name, _ATOM
        if isinstance(e, DType):
            return self.dtype(e.name), _ATOM
        if isinstance(e, BinOp):
            if e.op not in BINARY_OPS:
                raise KirPrintError(f"unknown binary operator {e.op!r}")
            p = BINARY_OPS[e.op]
            if e.op == "**":  # right-associative; the base is a primary, the exponent a factor
                return f"{self.expr(e.lhs, _POSTFIX)} ** {self.expr(e.rhs, _UNARY)}", p
            return f"{self.expr(e.lhs, p)} {e.op} {self.expr(e.rhs, p + 1)}", p
        if isinstance(e, UnaryOp):
            if e.op not in UNARY_OPS:
                raise KirPrintError(f"unknown unary operator {e.op!r}")
            if e.op == "not":
                return f"not {self.expr(e.operand, _NOT)}", _NOT
            if e.op == "-" and isinstance(e.operand, Const) and type(e.operand.value) in (int,
                                                                                        float):
                return f"-({self.expr(e.operand)})", _UNARY  # `-1` is the constant -1
            return f"{e.op}{self.expr(e.operand, _UNARY)}", _UNARY
        if isinstance(e, Compare):
            if e.op not in CMP_OPS:
                raise KirPrintError(f"unknown comparison {e.op!r}")
            return f"{self.expr(e.lhs, _BOR)} {e.op} {self.expr(e.rhs, _BOR)}", _CMP
        if isinstance(e, BoolOp):
            if e.op not in BOOL_OPS:
                raise KirPrintError(f"unknown boolean operator {e.op!r}")
            if len(e.items) < 2:
                raise KirPrintError(f"'{e.op}' of {len(e.items)} item(s): a BoolOp has two or more")
            p = _AND if e.op == "and" else _OR
            return f" {e.op} ".join(self.expr(x, p + 1) for x in e.items), p
        if isinstance(e, TupleExpr):
            items = [self.expr(x) for x in e.items]
            return ("(" + items[0] + ",)" if len(items) == 1 else "(" + ", ".join(items) + ")",
                    _ATOM)
        if isinstance(e, Subscript):
            value = (f"({self.expr(e.value)})" if isinstance(e.value, Handle)
                     else self.expr(e.value, _POSTFIX))
            return f"{value}[{', '.join(self.index_entry(x) for x in e.index)}]", _POSTFIX
        if isinstance(e, Op):
            return self.op(e), _POSTFIX
        if isinstance(e, Handle):
            return self.handle(e), _POSTFIX
        if isinstance(e, Event):
            if e.verb not in VERBS:
                raise KirPrintError(f"unknown pipe verb {e.verb!r} (expected one of "
                                    f"{', '.join(VERBS)})")
            return (f"{self.handle(e.handle)}.{e.verb}({self.expr(e.index)})"
                    f"{self.attrs(e.attrs, 'an event')}", _POSTFIX)
        if isinstance(e, SlotField):
            return f"{self.receiver(e.slot)}.{self.attr(e.field)}", _POSTFIX
        if isinstance(e, ResultSlot):
            return f"{self.receiver(e.result)}.slot", _POSTFIX
        if isinstance(e, IsClosed):
            return f"{self.receiver(e.result)}.is_closed", _POSTFIX
        raise KirPrintError(f"not a KIR expression: {e!r}")

    def index_entry(self, x: object) -> str:
        """``:``, ``None`` (a new axis), ``3`` / ``-1`` (a raw int, as the frontend folds indices),
        or an expression; a Const of None or of an int goes in parentheses (``(None)``, ``(3)``),
        which tell it from the raw entries."""
        if x is None:
            return "None"
        if isinstance(x, str) and x == ":":
            return ":"
        if type(x) is int:
            return str(x)
        if isinstance(x, Const) and (x.value is None or type(x.value) is int):
            return f"({self.expr(x)})"
        if isinstance(x, EXPR_TYPES):
            return self.expr(x)
        raise KirPrintError(f"subscript entry {x!r}: expected ':', None, an int or an expression "
                            f"node")

    def op(self, e: Op) -> str:
        if not isinstance(e.name, str):
            raise KirPrintError(f"operation name {e.name!r} is not a string")
        parts = e.name.split(".")
        if any(not _is_ident(p) or keyword.iskeyword(p) for p in parts):
            raise KirPrintError(f"operation name {e.name!r} is not a dotted path of identifiers")
        if len(parts) >= 2 and parts[1] in ("writer", "reader"):
            raise KirPrintError(f"operation name {e.name!r} reads as a pipe handle")
        if len(parts) >= 2 and parts[-1] == "to":
            raise KirPrintError(f"operation name {e.name!r} reads as the cast x.to(...)")
        args = list(e.args)
        head = e.name
        if e.name == "to" and args:
            head = f"{self.receiver(args.pop(0))}.to"
        words = [self.expr(a) for a in args]
        words += [f"{self.ident(k, 'keyword argument')}={self.expr(v)}" for k, v in e.kwargs]
        return f"{head}({', '.join(words)}){self.attrs(e.attrs, f'operation {e.name}')}"

    def handle(self, h: Handle) -> str:
        if h.side not in ("writer", "reader"):
            raise KirPrintError(f"handle side {h.side!r}: expected 'writer' or 'reader'")
        sel = []
        if h.reader is not None:
            sel.append(self.ident(h.reader, "reader name"))
        if h.view is not None:
            sel.append(f"fields={self.names(h.view, 'field name')}")
        text = f"{self.ident(h.pipe, 'pipe name')}.{h.side}"
        return text + (f"[{' '.join(sel)}]" if sel else "")

    def names(self, names: tuple, what: str) -> str:
        return "(" + ", ".join(self.ident(n, what) for n in names) + ")"

    # -- statements ---------------------------------------------------------------------------
    def group(self, node: Any) -> list[str]:
        """The location group of ``node``'s line ([] without locations or slots)."""
        if not self.locations:
            return []
        locs = list(location_slots(node))
        if not locs:
            return []
        base = None if node is self.k else self.base_file
        return [_format_locations(locs, base)]

    def where(self, node: Any) -> str:
        return self.comment(self.group(node))

    @staticmethod
    def comment(groups: list[str]) -> str:
        return f"  # {'; '.join(groups)}" if groups else ""

    def body(self, stmts: tuple, depth: int, lines: list[str], top: bool = False) -> None:
        pad = INDENT * depth
        for s in stmts:
            if isinstance(s, Assign):
                target = self.ident(s.target, "assignment target")
                if top and s.target in _ITEM_WORDS:
                    target = f"`{s.target}`"
                lines.append(f"{pad}{target} = {self.expr(s.value)}{self.where(s)}")
            elif isinstance(s, Eval):
                text = self.expr(s.value)
                if top and _ITEM_START_RE.match(text):
                    text = f"({text})"
                lines.append(f"{pad}{text}{self.where(s)}")
            elif isinstance(s, For):
                kind = "static_range" if s.static else "range"
                words = [self.expr(s.start), self.expr(s.stop), self.expr(s.step)]
                words += [f"{self.ident(k, 'loop option')}={self.expr(v)}" for k, v in s.options]
                head = (f"{pad}for {self.ident(s.var, 'loop variable')} in {kind}("
                        f"{', '.join(words)}){self.attrs(s.attrs, 'a for loop')} {{")
                self.block(head, s.body, depth, lines, s)
            elif isinstance(s, While):
                self.block(f"{pad}while {self.expr(s.cond)} {{", s.body, depth, lines, s)
            elif isinstance(s, Return):
                value = "" if s.value is None else " " + self.expr(s.value)
                lines.append(f"{pad}return{value}{self.where(s)}")
            elif isinstance(s, If):
                self.if_stmt(s, f"{pad}if", depth, lines)
            else:
                raise KirPrintError(f"not a KIR statement: {s!r}")

    def block(self, head: str, stmts: tuple, depth: int, lines: list[str], node: Any) -> None:
        """``head`` (ending with '{'), the statements, '}'; ``{ }`` when there are none."""
        if not stmts:
            lines.append(f"{head} }}{self.where(node)}")
            return
        lines.append(head + self.where(node))
        self.body(stmts, depth + 1, lines)
        lines.append(INDENT * depth + "}")

    def if_stmt(self, s: If, head: str, depth: int, lines: list[str],
                owed: Optional[list[str]] = None) -> None:
        """``head`` starts the line (``if`` or ``} else if``); ``owed``: the location groups of the
        ifs that started on this line before (``if a { } else if b {``: one group each)."""
        pad = INDENT * depth
        owed = (owed or []) + self.group(s)
        line = f"{head} {self.expr(s.cond)} {{"
        if s.then:
            lines.append(line + self.comment(owed))
            self.body(s.then, depth + 1, lines)
            line, owed = pad + "}", []
        else:
            line += " }"
        if not s.orelse:
            lines.append(line + self.comment(owed))
        elif len(s.orelse) == 1 and isinstance(s.orelse[0], If):
            self.if_stmt(s.orelse[0], line + " else if", depth, lines, owed)
        else:
            lines.append(line + " else {" + self.comment(owed))
            self.body(s.orelse, depth + 1, lines)
            lines.append(pad + "}")

    # -- declarations -------------------------------------------------------------------------
    def shape(self, dtype: object, shape: tuple) -> str:
        dims = []
        for d in shape:
            if type(d) is int:
                dims.append(str(d))
            elif isinstance(d, str):
                dims.append(self.ident(d, "shape entry"))
            else:
                raise KirPrintError(f"shape entry {d!r}: expected an int or a name")
        return f"{self.ident(dtype, 'dtype')}[{', '.join(dims)}]"

    def pipe(self, p: PipeDecl) -> str:
        if type(p.capacity) is not int or p.capacity < 1:
            raise KirPrintError(f"pipe '{p.name}': capacity {p.capacity!r} (at least 1)")
        words = [f"pipe {self.ident(p.name, 'pipe name')}", f"capacity={p.capacity}"]
        if p.one_shot:
            words.append("one_shot")
        if p.named:
            words.append("named_barrier")
        if p.readers:
            words.append(f"readers={self.names(p.readers, 'reader name')}")
        if p.fields:
            fields = [f"{self.ident(f.name, 'field name')}: {self.shape(f.dtype, f.shape)}"
                      for f in p.fields]
            words.append(f"fields=({', '.join(fields)})")
        return " ".join(words) + self.attrs(p.attrs, f"pipe {p.name}") + self.where(p)

    def partition(self, part: KPartition) -> list[str]:
        words = [f"partition {self.ident(part.name, 'partition name')}"]
        if part.default:
            words.append("default")
        words.append(f"warps={self.int(part.warps, 'warps')}")
        if part.regs is not None:
            words.append(f"regs={self.int(part.regs, 'regs')}")
        if part.bindings:
            words.append("(" + ", ".join(f"{self.ident(n, 'partition parameter')} = "
                                         f"{self.expr(v)}" for n, v in part.bindings) + ")")
        head = INDENT + " ".join(words) + self.attrs(part.attrs, f"partition {part.name}") + " {"
        lines: list[str] = []
        self.block(head, part.body, 1, lines, part)
        return lines

    @staticmethod
    def int(v: object, what: str) -> str:
        if type(v) is not int or v < 0:
            raise KirPrintError(f"{what}={v!r}: expected a non-negative int")
        return str(v)

    def kernel(self) -> str:
        k = self.k
        params = ", ".join(self.ident(p.name, "param name")
                           + (": constexpr" if p.constexpr else ": float" if p.floating else "")
                           for p in k.params)
        head = f"kernel {self.ident(k.name, 'kernel name')}({params}) "
        head += f"num_warps={self.int(k.num_warps, 'num_warps')}"
        if k.options:
            head += " options(" + ", ".join(f"{self.ident(n, 'option name')}={self.literal(v)}"
                                            for n, v in k.options) + ")"
        head += self.attrs(k.attrs, f"kernel {k.name}")
        sections: list[list[str]] = []
        if k.consts:
            sections.append([f"{INDENT}const {cid} = {self.literal(v)}{self.where(v)}"
                             for cid, v in k.consts])
        if k.pipes:
            sections.append([INDENT + self.pipe(p) for p in k.pipes])
        if k.buffers:
            sections.append([f"{INDENT}buffer {self.ident(b.name, 'buffer name')}: "
                             f"{self.shape(b.dtype, b.shape)}{self.where(b)}" for b in k.buffers])
        if k.prologue:
            lines: list[str] = []
            self.body(k.prologue, 1, lines, top=True)
            sections.append(lines)
        for part in k.partitions:
            sections.append(self.partition(part))
        if not sections:
            return f"{head} {{ }}{self.where(k)}\n"
        inner = "\n\n".join("\n".join(s) for s in sections)
        return f"{head} {{{self.where(k)}\n{inner}\n}}\n"


# ---------------------------------------------------------------------------------------------
# parser

_GRAMMAR = Path(__file__).with_name("kernel_grammar.lark")


#: The location comments the lexer meets while one text is parsed (LOCCOMMENT is an ignored
#: terminal; lark hands ignored tokens to their lexer callback).
_LOC_COMMENTS: contextvars.ContextVar[list] = contextvars.ContextVar("kir_loc_comments")


def _collect_loc_comment(tok: Token) -> Token:
    _LOC_COMMENTS.get().append(tok)
    return tok


@functools.lru_cache(maxsize=1)
def _lark() -> Lark:
    return Lark(_GRAMMAR.read_text(), parser="lalr", lexer="contextual", propagate_positions=True,
                maybe_placeholders=False, start=["start", "locs"],
                lexer_callbacks={"LOCCOMMENT": _collect_loc_comment})


def parse_kernels(text: str, path: Optional[str] = None) -> list[Kernel]:
    """Every kernel of ``text`` (a ``*.kir`` file), in order. ``path`` is only used for locations
    and messages. A line's location comment gives the locations of the nodes that start on it;
    the nodes of a line without one are located in ``text`` (``Loc(path, line, column)``). Raises
    :class:`TleError` on any error."""
    return _parse(text, path)[0]


def _parse(text: str, path: Optional[str]) -> tuple[list[Kernel], Tree]:
    """parse_kernels, with the parse tree the kernels were built from."""
    comments: list[Token] = []
    reset = _LOC_COMMENTS.set(comments)
    try:
        tree = _lark().parse(text, start="start")
    except UnexpectedInput as e:
        raise _syntax_error(e, text, path) from None
    finally:
        _LOC_COMMENTS.reset(reset)
    check_tree(tree, comments, path)
    locations = _Locations(tree, comments, path)
    kernels = [_Builder(path, locations).kernel(k) for k in tree.children]
    locations.check_all_used()
    return kernels, tree


def parse_kernel(text: str, path: Optional[str] = None) -> Kernel:
    """The one kernel of ``text`` (a TleError when there is not exactly one)."""
    kernels = parse_kernels(text, path)
    if len(kernels) != 1:
        line, col = _end_position(text) if not kernels else (kernels[1].loc.line,
                                                             kernels[1].loc.column)
        raise TleError(f"expected one kernel, found {len(kernels)} at {line}:{col}",
                       Loc(path, line, col))
    return kernels[0]


def parse_kernel_file(path: Union[str, os.PathLike]) -> list[Kernel]:
    """Read and parse a file of kernels, each checked to be one the frontend could have built
    (:func:`check_identifiers`, :func:`check_params`, :func:`check_warps`, :func:`check_size`,
    :func:`check_slot_shapes`, :func:`check_references`, :func:`check_integer_sizes`; at most
    :data:`MAX_FILE_CHARS` characters, each kernel named once): a file is something to verify and
    lower."""
    p = os.fspath(path)
    with open(p, encoding="utf-8") as f:
        text = f.read()
    if len(text) > MAX_FILE_CHARS:
        line = text.count("\n", 0, MAX_FILE_CHARS) + 1
        raise _fail(f"the file is longer than {MAX_FILE_CHARS} characters, the most a kernel "
                    f"file may hold (a printed kernel of the repository has under 100,000)",
                    p, line, 1)
    kernels, tree = _parse(text, p)
    check_identifiers(tree, p)
    seen: dict[str, int] = {}
    heads = [text.count("\n", 0, m.start()) + 1 for m in _KERNEL_LINE.finditer(text)]
    for i, k in enumerate(kernels):
        try:
            if k.name in seen:
                j = seen[k.name]
                first = heads[j] if len(heads) == len(kernels) and kernels[j].loc.file != p \
                    else kernels[j].loc.line
                raise TleError(f"kernel '{k.name}' is defined twice (first at line {first}): a "
                               f"file names each kernel once at {k.loc.line}:{k.loc.column}",
                               k.loc, check="duplicate-name")
            seen[k.name] = i
            check_params(k)
            check_warps(k)
            check_size(k)
            check_slot_shapes(k)
            check_references(k)
            check_integer_sizes(k)
        except TleError as e:
            raise _in_this_file(e, text, p, i, len(kernels)) from None
    return kernels


def check_references(k: Kernel) -> None:
    """Every handle (``P.writer``, ``P.reader``) names a pipe the kernel declares, as in any
    kernel the frontend builds. The text form reads a handle for any name ``P`` (a plain name
    resolves to a pipe or buffer only when one is declared, so handles are the one reference it
    does not check); the protocol view and the lowering look each handle's pipe up among the
    declarations, so a hand-edited name that matches none is refused here, at its line, instead
    of failing there."""
    pipes = {p.name for p in k.pipes}
    stmts = list(walk_stmts(k.prologue))
    exprs = []
    for part in k.partitions:
        exprs += [(value, part.loc) for _, value in part.bindings]
        stmts += walk_stmts(part.body)
    exprs += [(e, s.loc) for s in stmts for e in stmt_exprs(s)]
    for top, where in exprs:
        for e in walk_expr(top):
            if isinstance(e, Handle) and e.pipe not in pipes:
                raise TleError(f"'{e.pipe}' is not a pipe of kernel '{k.name}' (declared: "
                               f"{', '.join(sorted(pipes)) or 'none'})",
                               e.loc if e.loc.line else where, check="undeclared")


def check_slot_shapes(k: Kernel) -> None:
    """One slot per stage, as the frontend requires of a kernel's ``tle.gpu.alloc``: a pipe
    field's leading dimension is the pipe's capacity. A hand-edited capacity above it would be
    indexed past the field's buffer (``index(t % 4)`` into ``[3, ...]``). The text form itself
    prints and reads back any field shape."""
    for p in k.pipes:
        for f in p.fields:
            lead = f.shape[0] if f.shape else None
            if type(lead) is int and lead != p.capacity:
                raise TleError(slot_shape_error(p.name, f.name, p.capacity, f.shape),
                               f.loc if f.loc.line else p.loc, check="bad-pipe")


def check_event_places(k: Kernel) -> None:
    """Every pipe event where a kernel the frontend reads has it, so that the protocol view
    (which reads the events of statements' expressions and their operands) sees the events the
    lowering emits: a commit, close or release (which return nothing) only as a statement or
    the whole value of an assignment or return, as the frontend requires of Python (its value
    used as an operand is refused at the verb; an item of a tuple that is such a value is one
    too); no event in a subscript's index or a loop's options, which the protocol view does not
    read. A TleError (bad-event) at the event."""
    printer = _Printer(k, False)

    def refuse(e: Event, why: str) -> TleError:
        return TleError(f"`{printer.expr(e)}` {why}", e.loc, check="bad-event")

    def unread(e: object, where: str) -> None:
        for x in _all_exprs(e):
            if isinstance(x, Event):
                raise refuse(x, f"inside {where}: the protocol view does not read events there; "
                                f"call it as a statement and use its result")

    def visit(e: Expr, whole: bool) -> None:
        if isinstance(e, Event) and not whole and e.verb in ("commit", "close", "release"):
            raise refuse(e, f"is used as a value, but {e.verb} returns nothing: call it as a "
                            f"statement")
        if isinstance(e, Subscript):
            for entry in e.index:
                unread(entry, "a subscript's index")
        for c in children(e):  # the items of a tuple statement are statements: `(w.commit(p), 0)`
            visit(c, whole and isinstance(e, TupleExpr))

    bodies = [k.prologue, *(part.body for part in k.partitions)]
    for part in k.partitions:
        for _, value in part.bindings:
            visit(value, True)
    for body in bodies:
        for s in walk_stmts(body):
            whole = isinstance(s, (Assign, Eval, Return))
            for e in stmt_exprs(s):
                visit(e, whole)
            for _, option in getattr(s, "options", ()):
                unread(option, "a loop option")


def _all_exprs(e: object) -> Iterator[Expr]:
    """``e`` and every expression under it, subscript index entries included."""
    if not isinstance(e, (Const, Name, Global, DType, BinOp, UnaryOp, Compare, BoolOp, TupleExpr,
                          Subscript, Op, PipeRef, BufferRef, Handle, Event, SlotField, ResultSlot,
                          IsClosed)):
        return
    yield e
    for c in children(e):
        yield from _all_exprs(c)
    if isinstance(e, Subscript):
        for entry in e.index:
            yield from _all_exprs(entry)


#: How deep blocks and expressions may nest in a kernel's text (the parse tree's depth; the
#: kernels of the repository reach 25). The passes walk a kernel recursively, and the trace
#: generator (ir/tracegen.py) writes each block as indented Python, which allows 100 levels.
MAX_DEPTH = 100
#: The most bits an integer of a kernel file may have (parse_kernel_file): a literal, and any
#: value the frontend could fold from literals and consts (`1 << 99999999999` would take minutes
#: and gigabytes to compute). The GPU computes in 32 and 64 bits; the verifier names the values
#: outside i32 itself.
MAX_INT_BITS = 1024
#: The most characters of a kernel file, and the most statements of one kernel in it: the
#: repository's printed kernels, attributes included, have under 100,000 characters and 400
#: statements; checking a kernel takes time that grows faster than its statements.
MAX_FILE_CHARS = 4_000_000
MAX_STATEMENTS = 5_000
#: The most digits of an integer literal the text form reads at all: those Python converts.
_MAX_DIGITS = getattr(sys, "get_int_max_str_digits", lambda: 4300)() or 4300
_LONG_DIGITS = re.compile(r"\d{%d,}" % (_MAX_DIGITS + 1))


def _fail(message: str, path: Optional[str], line: int, column: int) -> TleError:
    return TleError(f"{message} at {line}:{column}", Loc(path, line, column))


def _too_long(digits: str, most: str) -> str:
    return f"an integer literal of {len(digits)} digits (at most {most})"


def check_tree(tree: Tree, comments: list, path: Optional[str]) -> None:
    """What a parse tree must be for its kernels to be built: nested at most :data:`MAX_DEPTH`
    deep, with integer literals (location comments' included) Python converts. A TleError at
    the first offender's line."""
    stack: list[tuple[Tree, int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise _fail(f"nested more than {MAX_DEPTH} levels deep (blocks and expressions)",
                        path, node.meta.line, node.meta.column)
        for c in reversed(node.children):
            if isinstance(c, Tree):
                stack.append((c, depth + 1))
            elif isinstance(c, Token) and c.type == "INT" and len(c) > _MAX_DIGITS:
                raise _fail(_too_long(str(c), f"{_MAX_DIGITS} digits"), path, c.line, c.column)
    for tok in comments:
        m = _LONG_DIGITS.search(str(tok))
        if m:
            raise _fail(_too_long(m.group(), f"{_MAX_DIGITS} digits"), path, tok.line,
                        tok.column + m.start())


def check_identifiers(tree: Tree, path: Optional[str]) -> None:
    """Every identifier of a kernel file in Unicode normal form NFKC, the form Python reads an
    identifier in (`ℕ` is `N`): two spellings of one name would be two names here and one in
    the Gluon the kernel lowers to. A kernel the frontend read has only such names."""
    for tok in tree.scan_values(lambda v: isinstance(v, Token) and v.type in ("NAME", "ESCNAME")
                                and not v.isascii()):
        normal = unicodedata.normalize("NFKC", str(tok))
        if normal != str(tok):
            raise _fail(f"identifier {str(tok)!r} is not in Unicode normal form NFKC (Python "
                        f"reads it as {normal!r})", path, tok.line, tok.column)
        # the grammar's pattern takes every letter and digit of \w: a few (`৴`, a number sign)
        # are no part of a Python identifier, which --param NAME=... and a .pipe report refuse
        if not str(tok).strip("`").isidentifier():
            raise _fail(f"{str(tok)!r} is not a Python identifier", path, tok.line, tok.column)


def check_size(k: Kernel) -> None:
    """At most :data:`MAX_STATEMENTS` statements in a kernel (its prologue and partitions, the
    bodies of loops and ifs included)."""
    stmts = itertools.chain(walk_stmts(k.prologue), *(walk_stmts(p.body) for p in k.partitions))
    extra = next(itertools.islice(stmts, MAX_STATEMENTS, None), None)
    if extra is not None:
        raise TleError(f"kernel '{k.name}' has more than {MAX_STATEMENTS} statements, the most "
                       f"a kernel file's kernel may have at {extra.loc.line}:{extra.loc.column}",
                       extra.loc, check="too-large")


def check_params(k: Kernel) -> None:
    """A kernel's params, and each partition's, named once, as Python refuses `def f(a, a)`
    (the text form itself reads any list of names)."""
    names = [p.name for p in k.params]
    for p in k.params:
        if names.count(p.name) > 1:
            raise TleError(f"kernel '{k.name}' declares param '{p.name}' twice at "
                           f"{p.loc.line}:{p.loc.column}", p.loc, check="duplicate-name")
    for part in k.partitions:
        names = [n for n, _ in part.bindings]
        for n in names:
            if names.count(n) > 1:
                raise TleError(f"partition '{part.name}' binds its param '{n}' twice at "
                               f"{part.loc.line}:{part.loc.column}", part.loc,
                               check="duplicate-name")


#: The checks whose refusal is about the kernel's or a partition's header (its name, its warps):
#: located at that header in the .kir, not at the source line its location comments name.
_KERNEL_CHECKS = ("duplicate-name", "bad-jit", "bad-warps")
_KERNEL_LINE = re.compile(r"^[ \t]*kernel[ \t]+[^\s(]+[ \t]*\(", re.M)


def _in_this_file(e: TleError, text: str, path: str, index: int, count: int) -> TleError:
    """``e``, a check's refusal of kernel ``index`` of the file ``path``, located in this file.
    A printed kernel's location comments name the Python source it was read from, so a check
    that located its refusal at a node said "k.py:16: error: kernel 'k' is defined twice" of a
    .kir file holding the kernel twice (an edit of the .kir, not of k.py). Now the refusal is at
    the kernel's line here (or its partition's, when it names one), and names the source line
    the comments give."""
    if e.loc is None or e.loc.file in (None, path) or e.check not in _KERNEL_CHECKS:
        # a refusal of a statement (an event on an undeclared pipe) stays at the source line
        # its comments name, the line that holds the statement (tests/test_dump_inputs_fuzz.py)
        return e
    heads = list(_KERNEL_LINE.finditer(text))
    if len(heads) != count:
        return e
    start = heads[index].start()
    m = re.match(r"(?:default )?partition '([^']+)'", e.message)
    if m:
        part = re.compile(rf"^[ \t]*partition[ \t]+`?{re.escape(m.group(1))}`?\b", re.M)
        found = part.search(text, start)
        if found is not None:
            start = found.start()
    line = text.count("\n", 0, start) + 1
    column = start - text.rfind("\n", 0, start)
    column += len(text[start:]) - len(text[start:].lstrip(" \t"))
    message = re.sub(r" at \d+:\d+$", "", e.message)
    return TleError(f"{message} (its location comments name {e.loc.file}:{e.loc.line}) at "
                    f"{line}:{column}", Loc(path, line, column), check=e.check)


def check_warps(k: Kernel) -> None:
    """The kernel's ``num_warps`` is one ``@tle.jit`` takes (a power of two from 4), and its
    default partition runs that many warps, as in every kernel the frontend builds (the default
    partition is the kernel's own warps). The verifier counts a partition's ``warps`` (named
    barriers, the CTA's warp budget) while the lowering lays the default partition out and
    launches it with ``num_warps``: a hand-edited ``num_warps=8`` beside ``default warps=4`` was
    verified for one kernel and lowered as another."""
    nw = k.num_warps
    if isinstance(nw, bool) or not isinstance(nw, int) or nw < 4 or nw & (nw - 1):
        raise TleError(f"kernel '{k.name}' has num_warps={nw}: @tle.jit takes a power of two "
                       f">= 4 (the default partition of a warp-specialized kernel is whole warp "
                       f"groups) at {k.loc.line}:{k.loc.column}", k.loc, check="bad-jit")
    for part in k.partitions:
        if part.default and part.warps != nw:
            raise TleError(f"default partition '{part.name}' has warps={part.warps}, but the "
                           f"kernel's num_warps is {nw}: the default partition runs the kernel's "
                           f"warps at {part.loc.line}:{part.loc.column}", part.loc,
                           check="bad-warps")


def check_integer_sizes(k: Kernel) -> None:
    """No integer the frontend could compute from the kernel's literals and consts (a folded
    constant, an index's coefficient) has more than :data:`MAX_INT_BITS` bits; each literal has
    fewer (:func:`check_tree`). Every expression gets an upper bound on the bits of the integers
    it folds to: a literal or const its own; a value known only at run time (a param, a loop
    variable, a local assigned in a loop body, which the frontend does not fold) 1; a sum one
    more than its larger term, a product the sum of its factors', a shift or a power by a known
    count grown by it; a name that of the value assigned to it. A TleError at the first
    expression beyond the bound."""
    unknown = (1, None)
    printer = _Printer(k, False)

    def _expr_text(e: Expr) -> str:
        text = printer.expr(e)
        return text if len(text) <= 60 else text[:57] + "..."

    def merge(a: tuple, b: tuple) -> tuple:
        return (max(a[0], b[0]), a[1] if a[1] == b[1] else None)

    def fold(op: str, x: int, y: int) -> Optional[int]:
        try:
            if op == "+":
                return x + y
            if op == "-":
                return x - y
            if op == "*":
                return x * y
            if op == "//":
                return x // y
            if op == "%":
                return x % y
            if op == "&":
                return x & y
            if op == "|":
                return x | y
            if op == "^":
                return x ^ y
            if op == ">>":
                return x >> y
            if op == "<<":
                return x << y
            if op == "**":
                return x ** y if y >= 0 else None
        except (ArithmeticError, ValueError):
            return None
        return None

    def value(e: Expr, env: dict) -> tuple[int, Optional[int]]:
        bits, v = _value(e, env)
        if bits > MAX_INT_BITS:
            raise TleError(f"`{_expr_text(e)}` may be an integer of {bits} bits: the integers "
                           f"of a kernel have at most {MAX_INT_BITS} bits at "
                           f"{e.loc.line}:{e.loc.column}", e.loc, check="bad-integer")
        return bits, v

    def _value(e: Expr, env: dict) -> tuple[int, Optional[int]]:
        if isinstance(e, (Const, Global)):
            v = e.value
            if isinstance(v, bool) or not isinstance(v, int):
                return (1, None) if isinstance(v, bool) else unknown
            return (v.bit_length(), v)
        if isinstance(e, Name):
            return env.get(e.id, unknown)
        subs = [value(c, env) for c in children(e) if not isinstance(c, (str, type(None)))]
        if isinstance(e, BinOp):
            (a, x), (b, y) = subs
            if e.op in ("<<", "**"):
                if y is None or y < 0:  # not folded: a value of the run
                    bits = a
                else:
                    bits = a + y if e.op == "<<" else max(a, 1) * y
            elif e.op == "*":
                bits = a + b
            elif e.op in ("+", "-", "|", "^", "&"):
                bits = max(a, b) + 1
            else:  # // % / >>: no larger than the operands
                bits = max(a, b)
            if bits > MAX_INT_BITS:  # not folded
                return (bits, None)
            if x is not None and y is not None:
                v = fold(e.op, x, y)
                if v is not None:
                    return (max(v.bit_length(), 1), v)
            return (bits, None)
        if isinstance(e, UnaryOp):
            (a, x), = subs
            if e.op == "-" and x is not None:
                return (a, -x)
            if e.op == "~" and x is not None:
                return (a + 1, ~x)
            return (a + 1, None)
        if isinstance(e, (Compare,)):
            return (1, None)
        return (max((b for b, _ in subs), default=1), None)

    def assigned(body) -> set:
        out = set()
        for s in walk_stmts(body):
            if isinstance(s, Assign):
                out.add(s.target)
            elif isinstance(s, For):
                out.add(s.var)
        return out

    def block(body, env: dict) -> dict:
        for s in body:
            for e in stmt_exprs(s):
                value(e, env)
            for _, o in getattr(s, "options", ()):
                value(o, env)
            if isinstance(s, Assign):
                env[s.target] = value(s.value, env)
            elif isinstance(s, (For, While)):
                inner = dict(env)
                for n in assigned(s.body):
                    inner[n] = unknown
                if isinstance(s, For):
                    inner[s.var] = (max(value(s.start, env)[0], value(s.stop, env)[0]) + 1,
                                    None)
                inner = block(s.body, inner)
                for n in assigned(s.body):
                    env[n] = merge(env.get(n, unknown), inner[n])
            elif isinstance(s, If):
                a, b = block(s.then, dict(env)), block(s.orelse, dict(env))
                for n in set(a) | set(b):
                    env[n] = merge(a.get(n, unknown), b.get(n, unknown))
        return env

    top = block(k.prologue, {p.name: unknown for p in k.params})
    for part in k.partitions:
        env = dict(top)
        env.update({n: value(e, top) for n, e in part.bindings})
        block(part.body, env)


# -- syntax errors ----------------------------------------------------------------------------

_TERMINAL_WORDS = {
    "NAME": "a name",
    "ESCNAME": "a `name`",
    "INT": "an integer",
    "FLOAT": "a float",
    "STRING": "a string",
    "_NL": "a newline",
    "_ELSE": "'else'",
    "$END": "end of input",
}
#: The terminals that start an expression: an expected set holding all of them says "an
#: expression" instead.
_EXPR_START = frozenset({"NAME", "ESCNAME", "INT", "FLOAT", "STRING", "TRUE", "FALSE", "NONE",
                         "LPAR", "LSQB", "MINUS", "PLUS", "TILDE"})
_LITERAL_START = frozenset({"NAME", "INT", "FLOAT", "STRING", "TRUE", "FALSE", "NONE", "LPAR",
                            "MINUS"})


def _describe_terminal(name: str) -> str:
    return terminal_word(_lark(), name, _TERMINAL_WORDS)


#: Operators: an expected set holding every binary one says "an operator" instead.
_BINARY_WORDS = frozenset(BINARY_OPS) | frozenset(CMP_OPS)
_OPERATOR_WORDS = _BINARY_WORDS | {"and", "or", ".", "(", "["}


def _describe_expected(names) -> str:
    names = set(names)
    words = []
    spelled = {n: _describe_terminal(n)[1:-1] for n in names}
    if _BINARY_WORDS <= set(spelled.values()):
        names = {n for n in names if spelled[n] not in _OPERATOR_WORDS}
        words.append("an operator")
    if _EXPR_START <= names:
        names -= _EXPR_START | {"NOT"}  # `not` starts an expression, but not an operand
        words.append("an expression")
    elif _LITERAL_START <= names and "ESCNAME" not in names:
        names -= _LITERAL_START
        words.append("a literal")
    return expected_phrase([*words, *(_describe_terminal(n) for n in names)])


def _position(text: str, offset: int) -> tuple[int, int]:
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _end_position(text: str) -> tuple[int, int]:
    return _position(text, len(text))


_SKIP_RE = re.compile(r"#[^\n]*|'(?:[^'\\\n]|\\.)*'?|\"(?:[^\"\\\n]|\\.)*\"?|`[^`\n]*`?")


def _open_braces(text: str, upto: int) -> list[int]:
    """Offsets of the '{' still open at offset ``upto`` (comments, strings and `names` skipped)."""
    stack: list[int] = []
    i = 0
    while i < upto:
        ch = text[i]
        if ch in "#'\"`":
            m = _SKIP_RE.match(text, i)
            i = m.end() if m and m.end() > i else i + 1
            continue
        if ch == "{":
            stack.append(i)
        elif ch == "}" and stack:
            stack.pop()
        i += 1
    return stack


def _accepted(e: UnexpectedToken) -> set[str]:
    """The terminals really acceptable at the error: LALR's state may list more (merged states)."""
    try:
        return set(e.interactive_parser.accepts())
    except Exception:  # pragma: no cover - fall back to the state's lookahead set
        return set(e.expected)


_DECL_RE = re.compile(r"[\t ]*(kernel|const|pipe|buffer|partition)[\t ]+[`\w]")


def _syntax_error(e: UnexpectedInput, text: str, path: Optional[str]) -> TleError:
    def err(message: str, offset_or_pos) -> TleError:
        line, col = (_position(text, offset_or_pos) if isinstance(offset_or_pos, int)
                     else offset_or_pos)
        return TleError(f"{message} at {line}:{col}", Loc(path, line, col))

    if isinstance(e, UnexpectedToken):
        tok = e.token
        if tok.type == "$END":
            upto, pos = len(text), _end_position(text)
        else:
            upto = tok.start_pos if tok.start_pos is not None else len(text)
            pos = (tok.line, tok.column)
        # `else` where no `if` block ends lexes as a name; the error surfaces at the next token
        m = re.search(r"(?<![\w`])else[\t ]*$", text[:upto])
        if m is not None and tok.type in ("LBRACE", "IF", "NAME"):
            return err("'else' without an 'if': an else must follow the '}' of an if block",
                       m.start())
        accepted = _accepted(e)
        opened = _open_braces(text, upto)
        if tok.type == "$END" and "RBRACE" in accepted and opened:
            line, col = pos
            return err(f"unterminated block: this '{{' has no matching '}}' (reached end of input "
                       f"at {line}:{col})", opened[-1])
        # a declaration line inside a block: its keyword lexed as a name
        start = text.rfind("\n", 0, upto) + 1
        d = _DECL_RE.match(text, start)
        if d is not None and start + len(d.group(0)) - 1 <= upto:
            word = d.group(1)
            around = _open_braces(text, d.start(1))
            if len(around) > (0 if word == "kernel" else 1):
                if _open_braces(text, len(text)):
                    line, col = _position(text, d.start(1))
                    return err(f"unterminated block: this '{{' has no matching '}}' (before the "
                               f"'{word}' line at {line}:{col})", around[-1])
                place = "the file" if word == "kernel" else "a kernel body"
                return err(f"a '{word}' declaration belongs to {place}, not inside a block",
                           d.start(1))
        return err(f"unexpected {token_word(tok, 'number')}{_describe_expected(accepted)}", pos)
    if isinstance(e, UnexpectedCharacters):
        ch = text[e.pos_in_stream] if e.pos_in_stream < len(text) else ""
        what = "a backtick: `NAME` quotes one identifier" if ch == "`" else repr(ch)
        if ch == "\ufeff" and e.pos_in_stream == 0:
            what += (", a byte-order mark: .kir text is UTF-8 without one; save the file "
                     "without it")
        return err(f"unexpected character {what}", (e.line, e.column))
    if isinstance(e, UnexpectedEOF):  # pragma: no cover - LALR reports $END as UnexpectedToken
        return err(f"unexpected end of input{_describe_expected(e.expected)}", len(text))
    line, col = getattr(e, "line", 0) or 0, getattr(e, "column", 0) or 0  # pragma: no cover
    return TleError(f"syntax error at {line}:{col}", Loc(path, line, col))  # pragma: no cover


# -- tree -> KIR ------------------------------------------------------------------------------

_BIN_ALIASES = {"bit_or": "|", "bit_xor": "^", "bit_and": "&", "lshift": "<<", "rshift": ">>",
                "add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%",
                "pow": "**"}
_UNARY_ALIASES = {"neg": "-", "pos": "+", "invert": "~", "not_op": "not"}
_PIPE_ATTRS = {"capacity": "capacity=N", "one_shot": "one_shot", "named_barrier": "named_barrier",
               "readers": "readers=(a, b)",
               "fields": "fields=(f: DTYPE[SHAPE], ...)"}
_PARTITION_ATTRS = {"default": "default", "warps": "warps=N", "regs": "regs=N"}


#: The rules of nodes that take a group of a location comment: statements and declarations.
_LINE_RULES = frozenset({"kernel", "const_decl", "pipe_decl", "buffer_decl", "partition_decl",
                         "assign", "eval", "for_stmt", "if_stmt", "while_stmt", "return_stmt"})


#: Characters that break a line (str.splitlines) or are control characters (cli/dump.py refuses
#: a PATH holding one for the same reason).
_LINE_BREAKING = re.compile("[\x00-\x1f\x7f\x85\u2028\u2029]")


class _Locations:
    """The location comments of a text: for each line, its groups of items, and the columns of
    the statements and declarations that start on it (the n-th of them takes the n-th group)."""

    def __init__(self, tree: Tree, comments: list[Token], path: Optional[str]):
        self.path = path
        self.starts: dict[int, list[int]] = {}
        for sub in tree.iter_subtrees():
            if sub.data in _LINE_RULES and not sub.meta.empty:
                self.starts.setdefault(sub.meta.line, []).append(sub.meta.column)
        for cols in self.starts.values():
            cols.sort()
        self.groups: dict[int, tuple[Token, list[Tree]]] = {}
        self.used: dict[int, int] = {}
        for tok in comments:
            body = str(tok)[1:]
            try:
                groups = _lark().parse(body, start="locs").children
            except UnexpectedInput as e:  # pragma: no cover - LOCCOMMENT matches the rule `locs`
                raise TleError(f"malformed location comment at {tok.line}:{tok.column}",
                               Loc(path, tok.line, tok.column)) from e
            self.groups[tok.line] = (tok, groups)

    def error(self, message: str, tok: Token) -> TleError:
        return TleError(f"{message} at {tok.line}:{tok.column}", Loc(self.path, tok.line,
                                                                      tok.column))

    def group(self, meta) -> Optional[tuple[Token, Tree]]:
        """The group of the node that starts at ``meta`` (None when its line has no comment)."""
        entry = self.groups.get(meta.line)
        if entry is None:
            return None
        tok, groups = entry
        cols = self.starts.get(meta.line, [])
        rank = cols.index(meta.column)
        if len(groups) != len(cols):
            raise self.error(f"this location comment has {len(groups)} group(s) (separated by "
                             f"';'), and {len(cols)} statement(s) or declaration(s) start on its "
                             f"line", tok)
        self.used[meta.line] = self.used.get(meta.line, 0) + 1
        return tok, groups[rank]

    def check_all_used(self) -> None:
        for line, (tok, _) in sorted(self.groups.items()):
            if line not in self.starts:
                raise self.error("a location comment on a line where no statement or "
                                 "declaration starts", tok)

    def decode(self, tok: Token, group: Tree, count: int, base_file: Optional[str]) -> list[Loc]:
        """The ``count`` locations of ``group`` (see :func:`_format_locations`)."""
        items = group.children
        if len(items) == 1 and items[0].data == "loc_none":
            return [NOLOC] * count
        if len(items) != count:
            raise self.error(f"this location comment lists {len(items)} location(s) where the "
                             f"node and its sub-nodes have {count} (the line was edited: "
                             f"delete the comment, and the line is located in this file)", tok)
        out = []
        prev_file, prev_line = base_file, None
        for item in items:
            kind, ch = item.data, item.children
            if kind == "loc_none":
                out.append(NOLOC)
                continue
            if kind == "loc_col":
                if prev_line is None:
                    raise self.error("a location comment's first location has a line "
                                     "(LINE:COL)", tok)
                loc = Loc(prev_file, prev_line, int(ch[0]))
            elif kind == "loc_line":
                loc = Loc(prev_file, int(ch[0]), int(ch[1]))
            else:
                f = ch[0]
                if f.data == "loc_path":
                    file: Optional[str] = str(f.children[0])
                elif f.data == "loc_quoted":
                    file = ast.literal_eval(str(f.children[0]))
                    m = _LINE_BREAKING.search(file)
                    if m:
                        # tle-dump prints the file after each event of its report and at each
                        # error: `"x\nkernel k\n"` would put lines of its own choosing there
                        raise self.error(f"a location comment's file {file!r} holds the control "
                                         f"character {m.group()!r}, which would break the "
                                         f"lines of a report", tok)
                else:
                    file = None
                loc = Loc(file, int(ch[1]), int(ch[2]))
            out.append(loc)
            prev_file, prev_line = loc.file, loc.line
        return out


class _Builder:
    def __init__(self, path: Optional[str], locations: Optional[_Locations] = None):
        self.path = path
        self.locations = locations
        self.base_file = path
        self.consts: dict[str, object] = {}
        self.pipes: set[str] = set()
        self.buffers: set[str] = set()

    def place(self, node: Any, tree: Tree, base_file: Union[str, None, bool] = False) -> Any:
        """``node`` (built from ``tree``) with the locations of its line's comment, if any;
        relative locations are read against ``base_file`` (by default the kernel's file)."""
        if self.locations is None:
            return node
        found = self.locations.group(tree.meta)
        if found is None:
            return node
        tok, group = found
        count = sum(1 for _ in location_slots(node))
        base = self.base_file if base_file is False else base_file
        locs = iter(self.locations.decode(tok, group, count, base))
        return _relocate(node, locs)

    def kernel_file(self, tree: Tree) -> Optional[str]:
        """The file of the kernel's location (its header's comment), the file the locations of
        the kernel's other lines are relative to; ``path`` when the header has no comment."""
        entry = self.locations.groups.get(tree.meta.line) if self.locations else None
        if entry is None:
            return self.path
        first = entry[1][0].children[0]  # the kernel starts its line: the first group is its own
        if first.data == "loc_full":
            f = first.children[0]
            if f.data == "loc_path":
                return str(f.children[0])
            return ast.literal_eval(str(f.children[0])) if f.data == "loc_quoted" else None
        return None

    def loc(self, node: Union[Tree, Token]) -> Loc:
        if isinstance(node, Token):
            return Loc(self.path, node.line, node.column)
        return Loc(self.path, node.meta.line, node.meta.column)

    def error(self, message: str, node: Union[Tree, Token, Loc]) -> TleError:
        loc = node if isinstance(node, Loc) else self.loc(node)
        return TleError(f"{message} at {loc.line}:{loc.column}", loc)

    @staticmethod
    def name(node: Union[Tree, Token]) -> str:
        """The identifier of a `name` tree or a NAME / ESCNAME token."""
        tok = node.children[0] if isinstance(node, Tree) else node
        s = str(tok)
        return s[1:-1] if tok.type == "ESCNAME" else s

    # -- kernel -------------------------------------------------------------------------------
    def kernel(self, tree: Tree) -> Kernel:
        ch = tree.children
        name = self.name(ch[0])
        self.base_file = self.kernel_file(tree)
        params, num_warps, options, body, attrs_tree = [], None, None, None, None
        for c in ch[1:]:
            if c.data == "kparam":
                params.append(self.kparam(c))
            elif c.data == "kattr_int":
                key = self.name(c.children[0])
                if key != "num_warps":
                    raise self.error(f"unknown kernel attribute '{key}' (expected num_warps=N or "
                                     f"options(...))", c)
                if num_warps is not None:
                    raise self.error("duplicate attribute 'num_warps' on the kernel", c)
                num_warps = int(c.children[1])
            elif c.data == "kattr_options":
                if options is not None:
                    raise self.error("duplicate 'options(...)' on the kernel", c)
                options = tuple((self.name(o.children[0]), self.literal(o.children[1]))
                                for o in c.children)
            elif c.data == "attrs_clause":
                attrs_tree = c
            else:
                body = c
        items = body.children
        # the names a plain identifier resolves to are declared anywhere in the kernel body
        for item in items:
            if item.data == "const_decl":
                cid = self.name(item.children[0])
                self.declared(cid, "const", item)
                if cid in self.consts:
                    raise self.error(f"const '{cid}' is declared twice", item)
                self.consts[cid] = self.place(self.literal(item.children[1]), item)
        for item in items:
            if item.data == "pipe_decl":
                pname = self.name(item.children[0])
                self.declared(pname, "pipe", item)
                if pname in self.consts:
                    raise self.error(f"'{pname}' is both a const and a pipe (a plain name could "
                                     f"not tell them apart)", item)
                self.pipes.add(pname)
        for item in items:
            if item.data == "buffer_decl":
                bname = self.name(item.children[0])
                self.declared(bname, "buffer", item)
                if bname in self.consts or bname in self.pipes:
                    raise self.error(f"'{bname}' is both a buffer and a const or pipe (a plain "
                                     f"name could not tell them apart)", item)
                if bname in self.buffers:
                    raise self.error(f"buffer '{bname}' is declared twice", item)
                self.buffers.add(bname)
        pipes, buffers, prologue, partitions = [], [], [], []
        for item in items:
            kind = item.data
            if kind == "const_decl":
                continue
            if kind == "pipe_decl":
                pipes.append(self.pipe(item))
            elif kind == "buffer_decl":
                buffers.append(self.place(Buffer(self.name(item.children[0]),
                                                 *self.type(item.children[1]), loc=self.loc(item)),
                                          item))
            elif kind == "partition_decl":
                partitions.append(self.partition(item))
            else:
                if partitions:
                    raise self.error("a prologue statement after a partition: the prologue runs "
                                     "before warp_specialize, so its statements come first", item)
                prologue.append(self.stmt(item))
        k = Kernel(name, tuple(params), DEFAULT_WARPS if num_warps is None else num_warps,
                   options or (), tuple(self.consts.items()), tuple(pipes), tuple(buffers),
                   tuple(prologue), tuple(partitions), loc=self.loc(tree),
                   attrs=self.attrs_clause(attrs_tree))
        return self.place(k, tree, base_file=None)

    def declared(self, name: str, what: str, node: Tree) -> None:
        if name == "tl" or keyword.iskeyword(name):
            raise self.error(f"a {what} cannot be named '{name}' (tl.NAME is a dtype; Python's "
                             f"keywords are not names)", node)

    def kparam(self, tree: Tree) -> KParam:
        ch = tree.children
        kind = str(ch[1]) if len(ch) > 1 else None
        if kind not in (None, "constexpr", "float"):
            raise self.error(f"unknown param kind '{ch[1]}' (expected 'NAME: constexpr' or "
                             f"'NAME: float')", ch[1])
        return KParam(self.name(ch[0]), kind == "constexpr", loc=self.loc(tree),
                      floating=kind == "float")

    def literal(self, tree: Tree) -> object:
        kind, ch = tree.data, tree.children
        if kind == "lit_int":
            return int(ch[0])
        if kind == "lit_neg_int":
            return -int(ch[0])
        if kind == "lit_float":
            return float(ch[0])
        if kind == "lit_neg_float":
            return -float(ch[0])
        if kind in ("lit_name", "lit_neg_name"):
            word = str(ch[0])
            if word == "inf" or (word == "nan" and kind == "lit_name"):
                v = math.inf if word == "inf" else math.nan
                return -v if kind == "lit_neg_name" else v
            raise self.error(f"expected a literal (a number, inf, nan, a string, True, False, "
                             f"None, a tuple of literals or tl.DTYPE), found name '{word}'", ch[0])
        if kind == "lit_dtype":
            if str(ch[0]) != "tl":
                raise self.error(f"expected a literal, found '{ch[0]}.{ch[1]}' (a dtype is "
                                 f"tl.NAME)", ch[0])
            return DType(str(ch[1]), loc=self.loc(tree))
        if kind == "lit_str":
            return self.string(ch[0])
        if kind == "lit_true":
            return True
        if kind == "lit_false":
            return False
        if kind == "lit_none":
            return None
        if kind == "lit_tuple":
            return tuple(self.literal(c) for c in ch)
        raise AssertionError(kind)  # pragma: no cover

    def string(self, tok: Token) -> str:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            try:
                value = ast.literal_eval(str(tok))
            except (SyntaxError, ValueError, Warning) as e:
                raise self.error(f"bad string literal {tok} ({e})", tok) from None
        assert isinstance(value, str)
        return value

    def attrs(self, nodes: list[Tree], allowed: dict[str, str], what: str) -> dict[str, Tree]:
        out: dict[str, Tree] = {}
        for node in nodes:
            key = self.name(node.children[0])
            if key not in allowed:
                raise self.error(f"unknown attribute '{key}' on {what} (expected one of "
                                 f"{', '.join(allowed.values())})", node)
            if key in out:
                raise self.error(f"duplicate attribute '{key}' on {what}", node)
            out[key] = node
        return out

    def want(self, node: Tree, kinds: tuple[str, ...], spelling: str, what: str) -> None:
        if node.data not in kinds:
            raise self.error(f"attribute '{self.name(node.children[0])}' on {what} must be "
                             f"written '{spelling}'", node)

    def pipe(self, tree: Tree) -> PipeDecl:
        name = self.name(tree.children[0])
        what = f"pipe '{name}'"
        kir_attrs = [c for c in tree.children[1:] if c.data == "attrs_clause"]
        a = self.attrs([c for c in tree.children[1:] if c.data != "attrs_clause"], _PIPE_ATTRS,
                       what)
        if "capacity" not in a:
            raise self.error(f"{what} needs a capacity (capacity=N)", tree)
        self.want(a["capacity"], ("int_attr",), "capacity=N", what)
        capacity = int(a["capacity"].children[1])
        if capacity < 1:
            raise self.error(f"the capacity of {what} must be at least 1", a["capacity"])
        one_shot = "one_shot" in a
        if one_shot:
            self.want(a["one_shot"], ("flag_attr",), "one_shot", what)
        readers: tuple[str, ...] = ()
        if "readers" in a:
            node = a["readers"]
            self.want(node, ("names_attr", "empty_attr"), _PIPE_ATTRS["readers"], what)
            readers = tuple(self.name(n) for n in node.children[1:])
        fields: tuple[Buffer, ...] = ()
        if "fields" in a:
            node = a["fields"]
            if node.data == "names_attr":
                raise self.error(f"{what}: field '{self.name(node.children[1])}' needs its type "
                                 f"(fields=(NAME: DTYPE[SHAPE], ...))", node.children[1])
            self.want(node, ("fields_attr", "empty_attr"), _PIPE_ATTRS["fields"], what)
            fields = tuple(Buffer(self.name(f.children[0]), *self.type(f.children[1]),
                                  loc=self.loc(f)) for f in node.children[1:])
        named = "named_barrier" in a
        if named:
            self.want(a["named_barrier"], ("flag_attr",), "named_barrier", what)
            bad = named_pipe_error(name, capacity, readers, one_shot)
            if bad:
                raise self.error(bad, a["named_barrier"])
        node = PipeDecl(name, capacity, fields, readers, one_shot, loc=self.loc(tree),
                        attrs=self.attrs_clause(kir_attrs[0] if kir_attrs else None), named=named)
        return self.place(node, tree)

    def type(self, tree: Tree) -> tuple[tuple, str]:
        """(shape, dtype) of ``DTYPE[DIMS]``."""
        dims = []
        for d in tree.children[1:]:
            if d.data == "dim_int":
                dims.append(int(d.children[0]))
            elif d.data == "dim_neg":
                dims.append(-int(d.children[0]))
            else:
                dims.append(self.name(d.children[0]))
        return tuple(dims), self.name(tree.children[0])

    def partition(self, tree: Tree) -> KPartition:
        ch = tree.children
        name = self.name(ch[0])
        what = f"partition '{name}'"
        attr_nodes = [c for c in ch[1:] if c.data.endswith("_attr")]
        a = self.attrs(attr_nodes, _PARTITION_ATTRS, what)
        warps, regs = DEFAULT_WARPS, None
        if "default" in a:
            self.want(a["default"], ("flag_attr",), "default", what)
        if "warps" in a:
            self.want(a["warps"], ("int_attr",), "warps=N", what)
            warps = int(a["warps"].children[1])
        if "regs" in a:
            self.want(a["regs"], ("int_attr",), "regs=N", what)
            regs = int(a["regs"].children[1])
        bindings: tuple = ()
        attrs: tuple = ()
        for c in ch[1:]:
            if c.data == "bindings":
                bindings = tuple((self.name(b.children[0]), self.expr(b.children[1]))
                                 for b in c.children)
            elif c.data == "attrs_clause":
                attrs = self.attrs_clause(c)
        node = KPartition(name, bindings, (), warps, regs, "default" in a, loc=self.loc(tree),
                          attrs=attrs)
        return dataclasses.replace(self.place(node, tree), body=self.block(ch[-1]))

    # -- statements ---------------------------------------------------------------------------
    def block(self, tree: Tree) -> tuple[Stmt, ...]:
        return tuple(self.stmt(s) for s in tree.children)

    def stmt(self, tree: Tree) -> Stmt:
        """A statement, with the locations of its line's comment (its nested bodies have lines of
        their own)."""
        kind, ch, loc = tree.data, tree.children, self.loc(tree)
        if kind == "assign":
            return self.place(Assign(self.name(ch[0]), self.expr(ch[1]), loc=loc), tree)
        if kind == "eval":
            return self.place(Eval(self.expr(ch[0]), loc=loc), tree)
        if kind == "return_stmt":
            return self.place(Return(self.expr(ch[0]) if ch else None, loc=loc), tree)
        if kind == "for_stmt":
            var, rng, body = self.name(ch[0]), ch[1], ch[-1]
            attrs_tree = ch[-2] if ch[-2].data == "attrs_clause" else None
            args = [a for a in ch[2:-1] if a.data in ("argument", "kwarg")]
            bounds, options = [], []
            for a in args:
                if a.data == "kwarg":
                    options.append((self.name(a.children[0]), self.expr(a.children[1])))
                elif options:
                    raise self.error("a loop bound after a loop option", a)
                else:
                    bounds.append(self.expr(a.children[0]))
            if not 1 <= len(bounds) <= 3:
                raise self.error(f"{rng.data}(...) takes 1 to 3 bounds (stop; start, stop; "
                                 f"start, stop, step), not {len(bounds)}", rng)
            if len(bounds) == 1:
                bounds = [Const(0, loc=bounds[0].loc)] + bounds
            if len(bounds) == 2:
                bounds.append(Const(1, loc=bounds[1].loc))
            head = For(var, *bounds, (), static=rng.data == "static_range", loc=loc,
                       options=tuple(options), attrs=self.attrs_clause(attrs_tree))
            return dataclasses.replace(self.place(head, tree), body=self.block(body))
        if kind == "while_stmt":
            head = self.place(While(self.expr(ch[0]), (), loc=loc), tree)
            return dataclasses.replace(head, body=self.block(ch[1]))
        if kind == "if_stmt":
            head = self.place(If(self.expr(ch[0]), (), loc=loc), tree)
            orelse: tuple = ()
            then = self.block(ch[1])
            if len(ch) > 2:
                orelse = self.block(ch[2]) if ch[2].data == "block" else (self.stmt(ch[2]),)
            return dataclasses.replace(head, then=then, orelse=orelse)
        raise AssertionError(kind)  # pragma: no cover

    # -- attributes ---------------------------------------------------------------------------
    def attrs_clause(self, tree: Optional[Tree]) -> tuple:
        """The attributes of ``attrs {key = value, ...}`` (a tree of rule attrs_clause or
        attr_dict), sorted by key, as ir/kernel.py's with_attrs keeps them."""
        if tree is None:
            return ()
        d = tree.children[0] if tree.data == "attrs_clause" else tree
        out: dict[str, object] = {}
        for entry in d.children:
            key = self.name(entry.children[0])
            if key in out:
                raise self.error(f"attribute '{key}' is given twice", entry)
            out[key] = self.avalue(entry.children[1])
        return tuple(sorted(out.items()))

    def avalue(self, tree: Tree) -> object:
        kind, ch = tree.data, tree.children
        if kind == "av_tuple":
            return tuple(self.avalue(c) for c in ch)
        if kind == "av_expr":
            return self.expr(ch[0])
        if kind == "av_index":
            try:
                return index_of_expr(self.expr(ch[0]))
            except ValueError as e:
                raise self.error(f"index(...): {e}", tree) from None
        if kind == "av_object":
            cname = str(ch[0])
            cls = ATTR_TYPES.get(cname)
            if cls is None:
                known = ", ".join(sorted(ATTR_TYPES)) or "none"
                raise self.error(f"unknown attribute class '{cname}' (registered in ir/attrs.py "
                                 f"ATTR_TYPES: {known})", ch[0])
            kwargs: dict[str, object] = {}
            for f in ch[1:]:
                fname = self.name(f.children[0])
                if fname in kwargs:
                    raise self.error(f"field '{fname}' of {cname} is given twice", f)
                kwargs[fname] = self.avalue(f.children[1])
            init = [f.name for f in dataclasses.fields(cls) if f.init]
            unknown = [n for n in kwargs if n not in init]
            if unknown:
                raise self.error(f"{cname} has no field '{unknown[0]}' (its fields: "
                                 f"{', '.join(init)})", tree)
            try:
                return cls(**kwargs)
            except (TypeError, ValueError) as e:
                raise self.error(f"{cname}(...): {e}", tree) from None
        return self.literal(tree)

    # -- expressions --------------------------------------------------------------------------
    def expr(self, tree: Tree) -> Expr:
        kind, ch, loc = tree.data, tree.children, self.loc(tree)
        if kind in _BIN_ALIASES:
            return BinOp(_BIN_ALIASES[kind], self.expr(ch[0]), self.expr(ch[1]), loc=loc)
        if kind in _UNARY_ALIASES:
            if kind == "neg":
                folded = self.negative_number(ch[0])
                if folded is not None:
                    return Const(folded, loc=loc)
            return UnaryOp(_UNARY_ALIASES[kind], self.expr(ch[0]), loc=loc)
        if kind in ("or_op", "and_op"):
            return BoolOp(kind[:-3], tuple(self.expr(c) for c in ch), loc=loc)
        if kind == "compare":
            if len(ch) > 3:
                raise self.error("a chained comparison: a Compare has two operands (write "
                                 "(a < b) and (b < c), or parenthesize one)", ch[3].children[0])
            return Compare(str(ch[1].children[0]), self.expr(ch[0]), self.expr(ch[2]), loc=loc)
        if kind == "chain":
            return self.chain(tree)
        if kind == "name_atom":
            return self.resolve(str(ch[0]), False, [], tree)
        if kind == "escname_atom":
            return Name(self.name(ch[0]), loc=loc)
        if kind == "int_atom":
            return Const(int(ch[0]), loc=loc)
        if kind == "float_atom":
            return Const(float(ch[0]), loc=loc)
        if kind == "string_atom":
            return Const(self.string(ch[0]), loc=loc)
        if kind in ("true_atom", "false_atom", "none_atom"):
            return Const({"true_atom": True, "false_atom": False}.get(kind), loc=loc)
        if kind == "paren":
            return self.expr(ch[0])
        if kind in ("tuple_atom", "list_atom"):
            return TupleExpr(tuple(self.expr(c) for c in ch), loc=loc)
        raise AssertionError(kind)  # pragma: no cover

    def negative_number(self, tree: Tree) -> Optional[object]:
        """The value of ``-tree`` when ``tree`` is a number written right there (``-1``, ``-1.5``,
        ``-inf``); None otherwise (``-(1)``, ``-x``)."""
        if tree.data == "int_atom":
            return -int(tree.children[0])
        if tree.data == "float_atom":
            return -float(tree.children[0])
        if tree.data == "name_atom" and str(tree.children[0]) == "inf" \
                and "inf" not in self.consts and "inf" not in self.pipes \
                and "inf" not in self.buffers:
            return -math.inf
        return None

    def resolve(self, ident: str, escaped: bool, segs: list[Token], node: Tree) -> Expr:
        """A name (plain or in backticks) followed by the attributes ``segs``, not called."""
        loc = self.loc(node)
        if escaped:
            value: Expr = Name(ident, loc=loc)
        elif ident == "tl":
            if not segs:
                raise self.error("'tl' alone is not a value: tl.NAME is a dtype (a local named "
                                 "tl is written `tl`)", node)
            value, segs = DType(str(segs[0]), loc=loc), segs[1:]
        elif ident in self.consts:
            value = Global(ident, self.consts[ident], loc=loc)
        elif ident in self.pipes:
            value = PipeRef(ident, loc=loc)
        elif ident in self.buffers:
            value = BufferRef(ident, loc=loc)
        elif ident in ("inf", "nan"):
            value = Const(math.inf if ident == "inf" else math.nan, loc=loc)
        else:
            value = Name(ident, loc=loc)
        for s in segs:
            value = self.attribute(value, str(s), loc)
        return value

    @staticmethod
    def attribute(value: Expr, attr: str, loc: Loc) -> Expr:
        if attr == "slot":
            return ResultSlot(value, loc=loc)
        if attr == "is_closed":
            return IsClosed(value, loc=loc)
        return SlotField(value, attr, loc=loc)

    def arguments(self, call: Tree) -> tuple[tuple, tuple]:
        args, kwargs = [], []
        for a in call.children:
            if a.data == "kwarg":
                kwargs.append((self.name(a.children[0]), self.expr(a.children[1])))
            elif kwargs:
                raise self.error("a positional argument after a keyword argument", a)
            else:
                args.append(self.expr(a.children[0]))
        return tuple(args), tuple(kwargs)

    def chain(self, tree: Tree) -> Expr:
        atom, trailers = tree.children[0], tree.children[1:]
        loc = self.loc(tree)
        n, i = len(trailers), 0
        value: Expr
        if atom.data in ("name_atom", "escname_atom"):
            escaped = atom.data == "escname_atom"
            ident = self.name(atom.children[0])
            first = trailers[0]
            if first.data == "attr" and str(first.children[0]) in ("writer", "reader"):
                value, i = self.handle(ident, str(first.children[0]), trailers, loc)
            else:
                j = 0
                while j < n and trailers[j].data == "attr":
                    j += 1
                segs = [t.children[0] for t in trailers[:j]]
                if j < n and trailers[j].data == "call":
                    args, kwargs = self.arguments(trailers[j])
                    if segs and str(segs[-1]) == "to":
                        recv = self.resolve(ident, escaped, segs[:-1], atom)
                        value = Op("to", (recv,) + args, kwargs, loc=loc)
                    elif escaped:
                        raise self.error(f"`{ident}` is a local name, and only operations are "
                                         f"called (tl.load(...), x.to(dtype))", trailers[j])
                    else:
                        value = Op(".".join([ident] + [str(s) for s in segs]), args, kwargs,
                                   loc=loc)
                    i = j + 1
                else:
                    value, i = self.resolve(ident, escaped, segs, atom), j
        else:
            value = self.expr(atom)
        while i < n:
            t = trailers[i]
            called = i + 1 < n and trailers[i + 1].data == "call"
            if t.data == "attr":
                attr = str(t.children[0])
                if called:
                    if attr != "to":
                        raise self.error(f"'.{attr}(...)': the only method is .to(dtype) (an "
                                         f"operation is called by its path, tl.{attr}(x); a pipe "
                                         f"verb follows its handle, P.writer.{attr}(i))",
                                         t.children[0])
                    args, kwargs = self.arguments(trailers[i + 1])
                    value = Op("to", (value,) + args, kwargs, loc=loc)
                    i += 2
                    continue
                value = self.attribute(value, attr, loc)
            elif t.data == "esc_attr":
                if called:
                    raise self.error(f"a slot field is not called: {t.children[0]}(...)",
                                     trailers[i + 1])
                value = SlotField(value, self.name(t.children[0]), loc=loc)
            elif t.data in ("index", "index_empty"):
                value = Subscript(value, tuple(self.index_entry(c) for c in t.children), loc=loc)
            elif t.data == "select":
                raise self.error("a reader selection [READER fields=(...)] follows P.reader or "
                                 "P.writer", t)
            elif t.data == "attrs_trailer":
                if i == 0 or trailers[i - 1].data != "call" or not isinstance(value, (Op, Event)):
                    raise self.error("attrs {...} follow the call of an operation or of a pipe "
                                     "verb", t)
                value = dataclasses.replace(value, attrs=self.attrs_clause(t.children[0]))
            else:
                raise self.error("only operations are called (tl.load(...), x.to(dtype)) and "
                                 "pipe verbs (P.writer.acquire(i))", t)
            i += 1
        return value

    def index_entry(self, tree: Tree) -> object:
        """``:``, ``None`` (a new axis), an int written right there (a raw int entry, ``-1``
        too), else an expression (``(None)``, ``(3)``: Const entries)."""
        if tree.data == "colon":
            return ":"
        inner = tree.children[0]
        if inner.data == "none_atom":
            return None
        if inner.data == "int_atom":
            return int(inner.children[0])
        if inner.data == "neg" and inner.children[0].data == "int_atom":
            return -int(inner.children[0].children[0])
        return self.expr(inner)

    def handle(self, pipe: str, side: str, trailers: list[Tree], loc: Loc) -> tuple[Expr, int]:
        """``P.writer`` / ``P.reader`` with its selection and its verb, if any; the number of
        trailers used."""
        reader: Optional[str] = None
        view: Optional[tuple[str, ...]] = None
        i, n = 1, len(trailers)
        if i < n and trailers[i].data in ("index", "index_empty", "select"):
            reader, view = self.selection(trailers[i])
            i += 1
        value: Expr = Handle(pipe, side, reader, view, loc=loc)
        if i < n and trailers[i].data == "call":
            raise self.error(f"a handle is not called: write {pipe}.{side}.VERB(INDEX)",
                             trailers[i])
        if i + 1 < n and trailers[i].data == "attr" and trailers[i + 1].data == "call":
            verb_tok = trailers[i].children[0]
            verb = str(verb_tok)
            if verb not in VERBS:
                raise self.error(f"unknown verb '{verb}' (expected one of {', '.join(VERBS)})",
                                 verb_tok)
            args, kwargs = self.arguments(trailers[i + 1])
            if len(args) != 1 or kwargs:
                raise self.error(f"'{verb}' takes one argument, the index", trailers[i + 1])
            value = Event(verb, value, args[0], loc=loc)
            i += 2
        return value, i

    def selection(self, t: Tree) -> tuple[Optional[str], Optional[tuple[str, ...]]]:
        if t.data == "index" and len(t.children) == 1 and t.children[0].data == "subscript":
            inner = t.children[0].children[0]
            if inner.data in ("name_atom", "escname_atom"):
                return self.name(inner.children[0]), None
        if t.data == "select":
            sel = t.children[0]
            reader = self.name(sel.children[0]) if len(sel.children) == 2 else None
            attr = sel.children[-1]
            key = str(attr.children[0])
            if key != "fields":
                raise self.error(f"unknown handle attribute '{key}' (expected fields=(...))",
                                 attr)
            return reader, tuple(self.name(n) for n in attr.children[1].children)
        raise self.error("expected a reader name or fields=(...) in a handle's brackets "
                         "(P.reader[READER fields=(a, b)])", t)


# ---------------------------------------------------------------------------------------------
# comparing kernels


def without_locations(node: Any) -> Any:
    """``node`` (any KIR node, or a tuple or list of them) with every ``loc`` set to NOLOC and
    every NaN replaced by ``math.nan``: KIR's ``==`` already ignores locations, but two NaN
    objects are unequal, so a kernel holding a NaN equals its reparsed self only through this."""
    if isinstance(node, list):
        return [without_locations(x) for x in node]
    if isinstance(node, tuple):
        return tuple(without_locations(x) for x in node)
    if type(node) is float and math.isnan(node):
        return math.nan
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        changes = {}
        for f in dataclasses.fields(node):
            value = getattr(node, f.name)
            new = NOLOC if f.name == "loc" else without_locations(value)
            if new is not value:
                changes[f.name] = new
        return dataclasses.replace(node, **changes) if changes else node
    return node


def kir_key(node: Any, locations: bool = False) -> Any:
    """A hashable key of ``node`` that is equal exactly when the nodes are the same program:
    locations aside (``locations=True``: with them), every constant by type and value
    (``Const(1)``, ``Const(1.0)`` and ``Const(True)`` differ, as do ``0.0`` and ``-0.0``; all NaNs
    are equal)."""
    if isinstance(node, (tuple, list)):
        return ("tuple",) + tuple(kir_key(x, locations) for x in node)
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        return (type(node).__name__,) + tuple(kir_key(getattr(node, f.name), locations)
                                              for f in dataclasses.fields(node)
                                              if f.compare or locations)
    if type(node) is float:
        return ("float", "nan" if math.isnan(node) else repr(node))
    if node is None or type(node) in (bool, int, str):
        return (type(node).__name__, node)
    return ("object", type(node).__name__, repr(node))


def kir_equal(a: Any, b: Any, locations: bool = False) -> bool:
    """``a`` and ``b`` are the same program (see :func:`kir_key`); ``locations``: and every node
    has the same location."""
    return kir_key(a, locations) == kir_key(b, locations)


# ------------------------------------------------------------------------------------------------
# index expressions (ir/attrs.py) in their compact spelling: ``index(((t // 3) & 1) ^ 1)``

_INDEX_TYPES = (AffineIndex, Mod, FloorDiv, BitAnd, BitXor)
_INDEX_OPS = {Mod: ("%", "k"), FloorDiv: ("//", "k"), BitAnd: ("&", "mask"), BitXor: ("^", "bits")}


def index_as_expr(v) -> Optional[Expr]:
    """The index expression ``v`` (stage, phase, parity of an event) as the KIR expression that
    spells it: ``Mod(AffineIndex(0, (("t", 1),)), 3)`` is ``t % 3``. None when the compact
    spelling would not read back as ``v`` (an int at the bottom of the chain instead of an
    AffineIndex, terms not normalised, a variable that is no plain name): the generic
    ``Class(field = ...)`` spelling is printed then."""
    from .expr import Affine

    if isinstance(v, AffineIndex):
        if not (type(v.const) is int and all(
                type(c) is int and isinstance(n, str) and _is_ident(n) and not keyword.iskeyword(n)
                for n, c in v.terms)):
            return None
        if AffineIndex.of(Affine(v.const, tuple(v.terms))) != v:
            return None
        e: Optional[Expr] = None
        for n, c in v.terms:
            term = Name(n) if c == 1 else BinOp("*", Const(c), Name(n))
            e = term if e is None else BinOp("+", e, term)
        if e is None:
            return Const(v.const)
        return e if v.const == 0 else BinOp("+", e, Const(v.const))
    op = _INDEX_OPS.get(type(v))
    if op is None:
        return None
    k = getattr(v, op[1])
    inner = index_as_expr(v.operand) if isinstance(v.operand, _INDEX_TYPES) else None
    if inner is None or type(k) is not int:
        return None
    return BinOp(op[0], inner, Const(k))


def index_of_expr(e: Expr):
    """The index expression a compact spelling names (the inverse of :func:`index_as_expr`):
    ``%``, ``//``, ``&``, ``^`` by an integer over an affine combination of names."""
    from .expr import Affine

    if isinstance(e, BinOp) and e.op in ("%", "//", "&", "^"):
        if not (isinstance(e.rhs, Const) and type(e.rhs.value) is int):
            raise ValueError(f"`{e.op}` takes an integer on its right")
        cls = next(c for c, (op, _) in _INDEX_OPS.items() if op == e.op)
        return cls(index_of_expr(e.lhs), e.rhs.value)
    const, terms = 0, {}

    def add(x: Expr, sign: int) -> None:
        nonlocal const
        if isinstance(x, Const) and type(x.value) is int:
            const += sign * x.value
        elif isinstance(x, Name):
            terms[x.id] = terms.get(x.id, 0) + sign
        elif isinstance(x, BinOp) and x.op in ("+", "-"):
            add(x.lhs, sign)
            add(x.rhs, sign if x.op == "+" else -sign)
        elif (isinstance(x, BinOp) and x.op == "*" and isinstance(x.lhs, Const)
              and type(x.lhs.value) is int and isinstance(x.rhs, Name)):
            terms[x.rhs.id] = terms.get(x.rhs.id, 0) + sign * x.lhs.value
        else:
            raise ValueError("an index is an integer combination of names (`2*i + N - 1`) under "
                             "`%`, `//`, `&` or `^` by integers")

    add(e, 1)
    return AffineIndex.of(Affine(const, tuple(terms.items())))
