"""The text form of the kernel IR (tle_compiler/ir/kernel_text.py, kernel_grammar.lark).

Every kernel of the repository and random well-formed kernels (every node type, nesting, attributes
with registered attribute classes, random locations, names that are words of the text form or
Python keywords, tricky constants) must survive print -> parse -> print unchanged and come back
equal, locations included; a table-driven test changes each field of each KIR node type and checks
that the printed text changes and reads back (a field the printer dropped fails it, and so does a
node type or field added to ir/kernel.py without an entry); hand-written examples pin each
construct's spelling, the precedence table, the canonical printing of equivalent spellings, what
the printer refuses, and the parser's error messages (with their line:column); a golden file shows
the format of one example kernel.
"""

from __future__ import annotations

import dataclasses
import keyword
import math
import os
import re
import string
import tomllib
from pathlib import Path
from typing import Optional

import pytest
from hypothesis import HealthCheck, Phase, given, note, settings, strategies as st

from tle_compiler.diagnostics import TleError
from tle_compiler.ir import attrs as attrs_module
from tle_compiler.ir import kernel as K
from tle_compiler.ir import kernel_text
from tle_compiler.ir.attrs import ATTR_TYPES
from tle_compiler.ir.expr import Affine
from tle_compiler.ir.kernel import (OPS, Assign, BinOp, BoolOp, Buffer, BufferRef, Compare, Const,
                                    DType, Eval, Event, For, Global, Handle, If, IsClosed, KParam,
                                    KPartition, Kernel, Name, Op, PipeDecl, PipeRef, ResultSlot,
                                    Return, SlotField, Subscript, TupleExpr, UnaryOp, While,
                                    walk_expr, walk_stmts, stmt_exprs)
from tle_compiler.ir.kernel_text import (BINARY_OPS, BOOL_OPS, CMP_OPS, EXPR_TYPES, KirPrintError,
                                         kir_equal, kir_key, parse_kernel, parse_kernel_file,
                                         parse_kernels, print_kernel, print_kernels,
                                         without_locations)
from tle_compiler.ir.nodes import NOLOC, VERBS, Loc

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden" / "kir"

# ------------------------------------------------------------------------------------------------
# attribute classes of these tests (registered for this module only: see the fixture below)


@dataclasses.dataclass(frozen=True)
class KtStage:
    """A test-only attribute class: an int, an expression and an optional nested value."""

    stage: int
    parity: object = None
    note: object = ()


@dataclasses.dataclass(frozen=True)
class KtBarrier:
    """A test-only attribute class with a field that is not an __init__ argument."""

    name: str
    count: object
    derived: int = dataclasses.field(init=False, default=0)

    def __post_init__(self):
        object.__setattr__(self, "derived", len(self.name))


@pytest.fixture(autouse=True, scope="module")
def _registered_attr_classes():
    """Register this module's attribute classes (through ir/attrs.py's decorator) while its tests
    run, and take them out again, so that other tests see the registry as the package leaves it."""
    added = [c for c in (KtStage, KtBarrier) if c.__name__ not in ATTR_TYPES]
    for c in added:
        attrs_module.attr_type(c)
    yield
    for c in added:
        del ATTR_TYPES[c.__name__]


# ------------------------------------------------------------------------------------------------
# strategies

#: Words of the text form, Python keywords and soft keywords, words the parser resolves (tl, inf,
#: nan), the special attributes and a few ordinary names: every name position must take them all.
WORDS = ("kernel", "const", "pipe", "buffer", "partition", "options", "num_warps", "constexpr",
         "range", "static_range", "capacity", "one_shot", "readers", "fields", "default", "warps",
         "regs", "writer", "reader", "slot", "is_closed", "to", "tl", "tle", "inf", "nan",
         "acquire", "commit", "close", "wait", "release", "match", "case", "type", "_", "attrs",
         "expr", "T", "ifexp")
PY_KEYWORDS = ("if", "for", "else", "in", "not", "and", "or", "None", "True", "False", "lambda",
               "is", "while", "def", "return")
PLAIN = ("a", "b", "x", "ck", "NK", "BK", "q", "kv", "x_1", "_t", "Q2", "left", "right", "π",
         "é_1")

_FIRST = string.ascii_letters + "_"
fresh = st.builds(lambda a, b: a + b, st.sampled_from(_FIRST),
                  st.text(_FIRST + string.digits, max_size=5))
#: any identifier (the printer escapes Python keywords with backticks)
idents = st.one_of(st.sampled_from(WORDS + PY_KEYWORDS + PLAIN), fresh)
#: identifiers that a Python module could define (consts, pipes, buffers)
decl_idents = st.one_of(st.sampled_from(("inf", "nan")), st.sampled_from(WORDS + PLAIN),
                        fresh).filter(
    lambda s: s != "tl" and not keyword.iskeyword(s))

#: triton's short dtype names (what the frontend writes) and a few long ones
DTYPES = ("bf16", "fp16", "fp32", "fp64", "i1", "i8", "i32", "int64", "u8", "fp8e4nv", "fp8e5",
          "bfloat16", "float32")
TRICKY_FLOATS = (0.0, -0.0, 1.0, -1.0, 0.5, 1e-05, 1e16, 1e-300, 5e-324, 1.7976931348623157e308,
                 -2.5e-10, 1.4426950408889634, math.inf, -math.inf, math.nan, 0.1 + 0.2)
TRICKY_INTS = (0, 1, -1, 2**63, -(2**63) - 1, 10**30, 64, 255)
TRICKY_STRINGS = ("", "a", "'", '"', "'\"", "\\", "a#b", "{", "}", "`x`", "\n", "\r\n\t", "é",
                  "\x00", "\u2028", "😀", "else", "# not a comment", "# 1:2", "attrs {}")
#: files of locations: plain paths, and ones the location comment must quote or spell as `?`
FILES = (None, "k.py", "tle_kernels/lib/helpers.py", "a b.py", "c:\\x.py", "2d.py", "-x", "?",
         "it's.py", "x|y;z#")


def scalars(nan_ok: bool = True) -> st.SearchStrategy:
    floats = st.one_of(st.sampled_from(TRICKY_FLOATS), st.floats(allow_nan=nan_ok))
    if not nan_ok:
        floats = floats.filter(lambda v: not math.isnan(v))
    return st.one_of(
        st.none(), st.booleans(),
        st.one_of(st.sampled_from(TRICKY_INTS), st.integers()),
        floats,
        st.one_of(st.sampled_from(TRICKY_STRINGS), st.text(max_size=6)))


#: const and option values: scalars, tuples of them, dtypes
literals = st.recursive(
    st.one_of(scalars(), st.sampled_from(DTYPES).map(DType)),
    lambda inner: st.lists(inner, max_size=3).map(tuple), max_leaves=5)

#: locations: none, or a file (possibly None), a line and a column
locations = st.one_of(st.just(NOLOC),
                      st.builds(Loc, st.sampled_from(FILES), st.integers(0, 400),
                                st.integers(0, 120)))


def op_names() -> st.SearchStrategy[str]:
    parts = st.one_of(st.sampled_from(("tl", "tle", "gpu", "math", "load", "x", "slot", "to",
                                       "writer", "T", "attrs")), fresh).filter(
        lambda s: not keyword.iskeyword(s))

    def ok(path: list[str]) -> bool:
        return not (len(path) >= 2 and (path[1] in ("writer", "reader") or path[-1] == "to"))

    paths = st.lists(parts, min_size=1, max_size=3).filter(ok).map(".".join)
    return st.one_of(st.sampled_from(sorted(OPS)), paths)


class Ctx:
    """What the expressions of one kernel may refer to."""

    def __init__(self, consts: tuple, pipes: tuple, buffers: tuple = ()):
        self.consts = consts
        self.pipes = pipes
        self.buffers = buffers
        self.nan_ok = "nan" not in {c for c, _ in consts} | set(pipes) | set(buffers)


def attr_values(ctx: Ctx) -> st.SearchStrategy:
    """Attribute values: scalars, tuples, KIR expressions, registered attribute classes (nested)."""
    leaves = st.one_of(scalars(ctx.nan_ok), exprs(ctx, 1))

    def extend(inner):
        return st.one_of(
            st.lists(inner, max_size=3).map(tuple),
            st.builds(KtStage, st.integers(0, 8), inner, inner),
            st.builds(KtBarrier, idents, inner))

    return st.recursive(leaves, extend, max_leaves=4)


def attr_dicts(ctx: Ctx) -> st.SearchStrategy[tuple]:
    """A node's attrs: sorted by key, as ir/kernel.py's with_attrs keeps them."""
    return st.dictionaries(idents, attr_values(ctx), max_size=2).map(
        lambda d: tuple(sorted(d.items())))


@st.composite
def handles(draw, ctx: Ctx) -> Handle:
    pipe = draw(st.sampled_from(ctx.pipes) if ctx.pipes and draw(st.booleans()) else idents)
    side = draw(st.sampled_from(("writer", "reader")))
    reader = draw(st.none() | idents)
    view = draw(st.none() | st.lists(idents, max_size=3).map(tuple))
    return Handle(pipe, side, reader, view)


@st.composite
def exprs(draw, ctx: Ctx, depth: int = 3):
    leaves = ["const", "name", "dtype", "handle"]
    if ctx.consts:
        leaves.append("global")
    if ctx.pipes:
        leaves.append("piperef")
    if ctx.buffers:
        leaves.append("bufferref")
    kinds = leaves if depth <= 0 else leaves + [
        "binop", "unary", "compare", "boolop", "tuple", "subscript", "op", "to", "event",
        "slotfield", "resultslot", "isclosed"] * 2
    kind = draw(st.sampled_from(kinds))
    sub = exprs(ctx, depth - 1)
    if kind == "const":
        return Const(draw(scalars(ctx.nan_ok)))
    if kind == "name":
        return Name(draw(idents))
    if kind == "dtype":
        return DType(draw(st.sampled_from(DTYPES) | st.sampled_from(("slot", "to", "is_closed"))))
    if kind == "handle":
        return draw(handles(ctx))
    if kind == "global":
        cid, value = draw(st.sampled_from(ctx.consts))
        return Global(cid, value)
    if kind == "piperef":
        return PipeRef(draw(st.sampled_from(ctx.pipes)))
    if kind == "bufferref":
        return BufferRef(draw(st.sampled_from(ctx.buffers)))
    if kind == "binop":
        return BinOp(draw(st.sampled_from(sorted(BINARY_OPS))), draw(sub), draw(sub))
    if kind == "unary":
        # a sign on a number is the spelling the printer must parenthesise (`-(1)`, not `-1`,
        # which reads back as Const(-1)): drawn as often as any other operand
        operand = draw(st.one_of(sub, scalars(ctx.nan_ok).map(Const)))
        return UnaryOp(draw(st.sampled_from(("-", "+", "~", "not"))), operand)
    if kind == "compare":
        return Compare(draw(st.sampled_from(CMP_OPS)), draw(sub), draw(sub))
    if kind == "boolop":
        return BoolOp(draw(st.sampled_from(BOOL_OPS)), tuple(draw(st.lists(sub, min_size=2,
                                                                            max_size=3))))
    if kind == "tuple":
        return TupleExpr(tuple(draw(st.lists(sub, max_size=3))))
    if kind == "subscript":
        entry = st.one_of(st.just(":"), st.none(), st.integers(-3, 300), sub,
                          st.just(Const(None)), st.integers(-3, 3).map(Const))
        return Subscript(draw(sub), tuple(draw(st.lists(entry, max_size=3))))
    if kind in ("op", "to"):
        name = "to" if kind == "to" else draw(op_names())
        args = tuple(draw(st.lists(sub, max_size=3)))
        kwargs = tuple(draw(st.lists(st.tuples(idents, sub), max_size=2)))
        attrs = draw(attr_dicts(ctx)) if depth > 1 and draw(st.booleans()) else ()
        return Op(name, args, kwargs, attrs=attrs)
    if kind == "event":
        attrs = draw(attr_dicts(ctx)) if depth > 1 and draw(st.booleans()) else ()
        return Event(draw(st.sampled_from(VERBS)), draw(handles(ctx)), draw(sub), attrs=attrs)
    if kind == "slotfield":
        return SlotField(draw(sub), draw(idents))
    if kind == "resultslot":
        return ResultSlot(draw(sub))
    return IsClosed(draw(sub))


@st.composite
def stmts(draw, ctx: Ctx, depth: int = 2, max_size: int = 3):
    out = []
    for _ in range(draw(st.integers(0, max_size))):
        kinds = ["assign", "eval", "return"] + (["for", "if", "elif", "while"] if depth > 0
                                                else [])
        kind = draw(st.sampled_from(kinds))
        e = exprs(ctx, 2)
        if kind == "assign":
            out.append(Assign(draw(idents), draw(e)))
        elif kind == "eval":
            out.append(Eval(draw(e)))
        elif kind == "return":
            out.append(Return(draw(st.none() | e)))
        elif kind == "for":
            options = tuple(draw(st.lists(st.tuples(idents, exprs(ctx, 1)), max_size=2)))
            out.append(For(draw(idents), draw(e), draw(e), draw(e),
                           draw(stmts(ctx, depth - 1, 2)), static=draw(st.booleans()),
                           options=options, attrs=draw(attr_dicts(ctx))))
        elif kind == "while":
            out.append(While(draw(e), draw(stmts(ctx, depth - 1, 2))))
        elif kind == "elif":  # an else holding one if: `} else if`
            inner = If(draw(e), draw(stmts(ctx, depth - 1, 1)), draw(stmts(ctx, depth - 1, 1)))
            out.append(If(draw(e), draw(stmts(ctx, depth - 1, 1)), (inner,)))
        else:
            out.append(If(draw(e), draw(stmts(ctx, depth - 1, 2)), draw(stmts(ctx, depth - 1, 2))))
    return tuple(out)


def buffers(names=idents) -> st.SearchStrategy[Buffer]:
    dims = st.lists(st.integers(-4, 300) | idents, max_size=3).map(tuple)
    return st.builds(Buffer, names, dims, st.sampled_from(DTYPES) | idents)


@st.composite
def unlocated_kernels(draw) -> Kernel:
    const_ids = draw(st.lists(decl_idents, max_size=3, unique=True))
    consts = tuple((c, draw(literals)) for c in const_ids)
    pipe_names = draw(st.lists(decl_idents.filter(lambda s: s not in const_ids), max_size=3,
                               unique=True))
    buffer_names = draw(st.lists(decl_idents.filter(lambda s: s not in const_ids
                                                    and s not in pipe_names),
                                 max_size=2, unique=True))
    ctx = Ctx(consts, tuple(pipe_names), tuple(buffer_names))
    pipes = tuple(PipeDecl(n, draw(st.integers(1, 4)),
                           tuple(draw(st.lists(buffers(), max_size=2))),
                           tuple(draw(st.lists(idents, max_size=2))), draw(st.booleans()),
                           attrs=draw(attr_dicts(ctx)))
                  for n in pipe_names)
    free = tuple(draw(buffers(st.just(n))) for n in buffer_names)
    partitions = tuple(
        KPartition(draw(idents), tuple(draw(st.lists(st.tuples(idents, exprs(ctx, 1)),
                                                     max_size=3))),
                   draw(stmts(ctx)), draw(st.integers(0, 16)), draw(st.none() | st.integers(0, 256)),
                   draw(st.booleans()), attrs=draw(attr_dicts(ctx)))
        for _ in range(draw(st.integers(0, 2))))
    return Kernel(draw(idents), tuple(draw(st.lists(st.builds(KParam, idents, st.booleans()),
                                                    max_size=4))),
                  draw(st.integers(0, 16)), tuple(draw(st.lists(st.tuples(idents, literals),
                                                                max_size=2))),
                  consts, pipes, free, draw(stmts(ctx, 1, 2)), partitions,
                  attrs=draw(attr_dicts(ctx)))


def _locate(node, draw):
    """``node`` with every location (of every node, attribute values included) drawn anew."""
    if isinstance(node, tuple):
        return tuple(_locate(x, draw) for x in node)
    if not dataclasses.is_dataclass(node) or isinstance(node, (type, Loc)):
        return node
    changes = {f.name: (draw(locations) if f.name == "loc" else _locate(getattr(node, f.name), draw))
               for f in dataclasses.fields(node) if f.init}
    return dataclasses.replace(node, **changes)


@st.composite
def kernels(draw) -> Kernel:
    """Random well-formed kernels, each node at a random location (or none)."""
    return _locate(draw(unlocated_kernels()), draw)


#: a profile that keeps each property under a few seconds on a shared machine
KIR = settings(max_examples=60, deadline=None, database=None,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# ------------------------------------------------------------------------------------------------
# round trips


def reparse(k: Kernel, locations: bool = True) -> tuple[str, Kernel]:
    text = print_kernel(k, locations)
    note(text)
    return text, parse_kernel(text, "t.kir")


@KIR
@given(kernels())
def test_round_trip(k):
    text, back = reparse(k)
    assert kir_equal(back, k, locations=True)  # type-exact constants, NaN equal, locations too
    assert without_locations(back) == without_locations(k)
    assert print_kernel(back) == text


@KIR
@given(kernels())
def test_round_trip_without_location_comments(k):
    """Without location comments the parser locates each node in the text it reads: the program
    is the same, and every statement is located on the line it is printed on."""
    text, back = reparse(k, locations=False)
    assert "  # " not in text.replace("'  # ", "")  # no location comment (strings aside)
    assert kir_equal(back, k)
    assert print_kernel(back, locations=False) == text
    lines = text.splitlines()
    for s in _all_stmts(back):
        assert s.loc.file == "t.kir" and 1 <= s.loc.line <= len(lines)
        word = {For: "for", While: "while", Return: "return", If: "if"}.get(type(s))
        if word is not None:
            assert lines[s.loc.line - 1][s.loc.column - 1:].startswith(word)


def _all_stmts(k: Kernel):
    yield from walk_stmts(k.prologue)
    for p in k.partitions:
        yield from walk_stmts(p.body)


@settings(max_examples=20, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(kernels(), max_size=3))
def test_round_trip_files(ks):
    text = print_kernels(ks)
    back = parse_kernels(text)
    assert len(back) == len(ks)
    assert all(kir_equal(a, b, locations=True) for a, b in zip(back, ks))
    assert print_kernels(back) == text


# ------------------------------------------------------------------------------------------------
# every kernel of the repository


def _kernel_files() -> list[Path]:
    files = sorted((ROOT / "tle_kernels").rglob("*.py")) + \
        sorted((ROOT / "benchmarks" / "variants").glob("*.py"))
    return [f for f in files if "warp_specialize" in f.read_text(encoding="utf-8")]


def _default_bind(path: Path) -> Optional[dict]:
    """The integer constexprs of the file's DEFAULT_CONFIG (None: it has none)."""
    from tle_compiler.lowering.dumping import default_config

    try:
        cx = default_config(str(path), "").get("constexprs", {})
    except Exception:
        return None
    bind = {k: v for k, v in cx.items() if isinstance(v, int) and not isinstance(v, bool)}
    return bind or None


def _builds(path: Path) -> list:
    """The file's kernel IR built generically and with its DEFAULT_CONFIG's integer constexprs;
    only the latter for a kernel that builds only with them bound (a pipe capacity read from a
    constexpr, tle_kernels/gpu_tests/ring_stages.py)."""
    from tle_compiler.frontend.build import CapacityOfConstexprs, build_file

    out = []
    try:
        out.append(build_file(path))
    except CapacityOfConstexprs:
        assert _default_bind(path), f"{path}: a capacity of constexprs and no values for them"
    if _default_bind(path):
        out.append(build_file(path, bind=_default_bind(path)))
    return out


def test_repository_has_kernels():
    assert sum(len(_builds(f)[0]) for f in _kernel_files()) >= 15


@pytest.mark.parametrize("path", _kernel_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_repository_kernels_round_trip(path):
    for built in _builds(path):
        for k in built:
            text = print_kernel(k)
            back = parse_kernel(text, "t.kir")
            assert back == k
            assert kir_equal(back, k, locations=True), f"{k.name}: a location differs"
            assert print_kernel(back) == text
            assert back.loc == k.loc and back.loc.file and back.loc.line > 0


# ------------------------------------------------------------------------------------------------
# completeness: every field of every node type is printed and read back

#: one instance of every KIR node type ...
BASE = {
    Const: Const(1), Name: Name("x"), Global: Global("BK", 64), DType: DType("bf16"),
    BinOp: BinOp("+", Name("a"), Name("b")), UnaryOp: UnaryOp("-", Name("a")),
    Compare: Compare("<", Name("a"), Name("b")), BoolOp: BoolOp("and", (Name("a"), Name("b"))),
    TupleExpr: TupleExpr((Name("a"),)), Subscript: Subscript(Name("x"), (":", None)),
    Op: Op("tl.load", (Name("p"),), (("mask", Name("m")),)), PipeRef: PipeRef("kv"),
    BufferRef: BufferRef("buf"), Handle: Handle("kv", "reader", "left", ("f",)),
    Event: Event("wait", Handle("kv", "reader"), Name("i")),
    SlotField: SlotField(Name("s"), "f"), ResultSlot: ResultSlot(Name("r")),
    IsClosed: IsClosed(Name("r")),
    Assign: Assign("y", Name("x")), Eval: Eval(Name("x")),
    For: For("i", Const(0), Name("n"), Const(1), (Eval(Name("i")),)),
    If: If(Name("c"), (Eval(Name("a")),)), While: While(Name("c"), (Eval(Name("a")),)),
    Return: Return(),
    KParam: KParam("p"), Buffer: Buffer("buf2", (4, "N"), "fp32"),
    PipeDecl: PipeDecl("q", 1, (Buffer("g", (1, 8), "bf16"),)),
    KPartition: KPartition("part", (("n", Name("n")),), (Eval(Name("n")),), 4),
    Kernel: Kernel("k", (KParam("n"),), 4, (), (), (), (), (), ()),
}
#: ... and, for each of its fields, another value
OTHER = {
    "Const.value": 2, "Name.id": "y", "Global.id": "BN", "Global.value": 128, "DType.name": "fp16",
    "BinOp.op": "*", "BinOp.lhs": Name("c"), "BinOp.rhs": Const(2),
    "UnaryOp.op": "~", "UnaryOp.operand": Name("b"),
    "Compare.op": ">=", "Compare.lhs": Name("c"), "Compare.rhs": Const(3),
    "BoolOp.op": "or", "BoolOp.items": (Name("a"), Name("b"), Name("c")),
    "TupleExpr.items": (Name("a"), Name("b")),
    "Subscript.value": Name("z"), "Subscript.index": (0, Const(0)),
    "Op.name": "tl.store", "Op.args": (), "Op.kwargs": (("other", Const(0.0)),),
    "Op.attrs": (("stage", KtStage(1, Name("i"))),),
    "PipeRef.pipe": "q", "BufferRef.name": "buf3",
    "Handle.pipe": "q", "Handle.side": "writer", "Handle.reader": None, "Handle.view": None,
    "Event.verb": "release", "Event.handle": Handle("q", "reader"), "Event.index": Const(0),
    "Event.attrs": (("barrier", KtBarrier("full", 2)),),
    "SlotField.slot": Name("t"), "SlotField.field": "g",
    "ResultSlot.result": Name("u"), "IsClosed.result": Name("u"),
    "Assign.target": "z", "Assign.value": Const(None), "Eval.value": Const("s"),
    "For.var": "j", "For.start": Const(1), "For.stop": Const(9), "For.step": Const(2),
    "For.body": (), "For.static": True, "For.options": (("num_stages", Const(3)),),
    "For.attrs": (("unroll", (1, 2.5, None)),),
    "If.cond": Name("d"), "If.then": (), "If.orelse": (Eval(Name("b")),),
    "While.cond": Name("d"), "While.body": (),
    "Return.value": Name("x"),
    "KParam.name": "m", "KParam.constexpr": True, "KParam.floating": True,
    "Buffer.name": "buf4", "Buffer.shape": (2,), "Buffer.dtype": "i8",
    "PipeDecl.name": "q2", "PipeDecl.capacity": 3, "PipeDecl.fields": (),
    "PipeDecl.readers": ("a", "b"), "PipeDecl.one_shot": True,
    "PipeDecl.attrs": (("depth", 2),), "PipeDecl.named": True,
    "KPartition.name": "other", "KPartition.bindings": (), "KPartition.body": (),
    "KPartition.warps": 8, "KPartition.regs": 240, "KPartition.default": True,
    "KPartition.attrs": (("role", "producer"),),
    "Kernel.name": "k2", "Kernel.params": (), "Kernel.num_warps": 8,
    "Kernel.options": (("maxnreg", 128),), "Kernel.consts": (("C", 1.5),),
    "Kernel.pipes": (PipeDecl("w", 2, ()),), "Kernel.buffers": (Buffer("t", (), "fp32"),),
    "Kernel.prologue": (Assign("v", Const(1)),),
    "Kernel.partitions": (KPartition("p2", (), (), 4),),
    "Kernel.attrs": (("flag", True),),
}
#: every field that is a location gets this one instead
OTHER_LOC = Loc("elsewhere.py", 7, 3)


def _node_types() -> list[type]:
    """Every dataclass ir/kernel.py defines: the KIR node types."""
    return [c for c in vars(K).values()
            if isinstance(c, type) and dataclasses.is_dataclass(c) and c.__module__ == K.__name__]


def embed(node) -> Kernel:
    """A kernel that holds ``node`` (declaring the consts, pipes and buffers it refers to)."""
    if isinstance(node, Kernel):
        return node
    consts, pipes, bufs = {"BK": 64}, {"kv": PipeDecl("kv", 2, ())}, {"buf": Buffer("buf", (), "i8")}
    stack = [node]
    while stack:
        x = stack.pop()
        if isinstance(x, tuple):
            stack.extend(x)
        elif dataclasses.is_dataclass(x) and not isinstance(x, (type, Loc)):
            if isinstance(x, Global):
                consts[x.id] = x.value
            elif isinstance(x, PipeRef):
                pipes.setdefault(x.pipe, PipeDecl(x.pipe, 1, ()))
            elif isinstance(x, BufferRef):
                bufs.setdefault(x.name, Buffer(x.name, (), "i8"))
            stack.extend(getattr(x, f.name) for f in dataclasses.fields(x))
    params, partitions, stmts_ = (), (), ()
    if isinstance(node, KParam):
        params = (node,)
    elif isinstance(node, Buffer):
        bufs[node.name] = node
    elif isinstance(node, PipeDecl):
        pipes[node.name] = node
    elif isinstance(node, KPartition):
        partitions = (node,)
    else:
        stmts_ = (node if isinstance(node, kernel_text.STMT_TYPES) else Eval(node),)
    if not partitions:
        partitions = (KPartition("p", (), stmts_, 4),)
    return Kernel("k", params, 4, (), tuple(consts.items()), tuple(pipes.values()),
                  tuple(bufs.values()), (), partitions)


def test_every_node_type_and_field_is_printed():
    """Change each field of each KIR node type: the text changes, and it reads back as the changed
    node, location included. A node type or field that ir/kernel.py gains fails here until the
    printer prints it and this table names another value for it."""
    missing_types = [c.__name__ for c in _node_types() if c not in BASE]
    assert not missing_types, f"node types the completeness table lacks: {missing_types}"
    missing_fields = [f"{c.__name__}.{f.name}" for c in _node_types()
                      for f in dataclasses.fields(c)
                      if f.name != "loc" and f"{c.__name__}.{f.name}" not in OTHER]
    assert not missing_fields, f"fields the completeness table lacks: {missing_fields}"
    for cls, node in BASE.items():
        base_text = print_kernel(embed(node))
        assert kir_equal(parse_kernel(base_text), embed(node), locations=True)
        for f in dataclasses.fields(cls):
            value = OTHER_LOC if f.name == "loc" else OTHER[f"{cls.__name__}.{f.name}"]
            assert value != getattr(node, f.name), f"{cls.__name__}.{f.name}: not a change"
            changed = embed(dataclasses.replace(node, **{f.name: value}))
            text = print_kernel(changed)
            assert text != base_text, f"{cls.__name__}.{f.name} is not printed"
            back = parse_kernel(text)
            assert kir_equal(back, changed, locations=True), \
                f"{cls.__name__}.{f.name} does not read back:\n{text}"


def test_location_comments_name_their_nodes():
    """A hand-written location comment puts each location on its node, in field order."""
    text = """\
kernel k(n) num_warps=4 {  # lib/a.py:10:1 | 12
  partition p warps=4 {  # 20:1
    x = tl.load(n, mask=m)  # 21:5 | 9 18 other.py:3:4
    if x > 0 { }  # - | 22:8 8 12
  }
}
"""
    k = parse_kernel(text, "t.kir")
    assert k.loc == Loc("lib/a.py", 10, 1) and k.params[0].loc == Loc("lib/a.py", 10, 12)
    part = k.partitions[0]
    assert part.loc == Loc("lib/a.py", 20, 1)
    x = part.body[0]
    assert x.loc == Loc("lib/a.py", 21, 5) and x.value.loc == Loc("lib/a.py", 21, 9)
    assert x.value.args[0].loc == Loc("lib/a.py", 21, 18)
    assert x.value.kwargs[0][1].loc == Loc("other.py", 3, 4)
    cond = part.body[1]
    assert cond.loc == NOLOC and cond.cond.loc == Loc("lib/a.py", 22, 8)
    assert cond.cond.rhs.loc == Loc("lib/a.py", 22, 12)
    assert print_kernel(k) == text


def test_location_comment_forms():
    """Files that are not plain paths are quoted, a missing file is `?`, a node without a location
    is `-`, a line whose nodes have none is `-` alone."""
    k = Kernel("k", (KParam("a", loc=Loc(None, 3, 4)),), 4, (), (), (), (
        Buffer("b", (), "i8", loc=Loc("a b.py", 1, 2)), Buffer("c", (), "i8")), (
        Assign("y", Name("x", loc=Loc("k.py", 5, 0)), loc=Loc("2d.py", 4, 9)),), (),
        loc=Loc("k.py", 1, 1))
    text = print_kernel(k)
    assert "{  # k.py:1:1 | ?:3:4\n" in text
    assert "  buffer b: i8[]  # 'a b.py':1:2\n" in text and "  buffer c: i8[]  # -\n" in text
    assert "  y = x  # '2d.py':4:9 | k.py:5:0\n" in text
    assert kir_equal(parse_kernel(text), k, locations=True)


def test_golden_example_kernel():
    """The text form of tle_kernels/examples/ring.py's kernel (TLE_UPDATE_GOLDEN=1 rewrites it; a
    change of the format or of the frontend shows as its diff)."""
    from tle_compiler.frontend.build import build_file

    rel = "tle_kernels/examples/ring.py"
    (k,) = build_file(rel, text=(ROOT / rel).read_text(encoding="utf-8"))
    text = print_kernel(k)
    path = GOLDEN / "ring.kir"
    if os.environ.get("TLE_UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"no golden {path.name}: run with TLE_UPDATE_GOLDEN=1"
    assert text == path.read_text(), "the text form of ring.py changed (if meant: " \
                                     "TLE_UPDATE_GOLDEN=1, and commit the diff)"
    assert kir_equal(parse_kernel(path.read_text()), k, locations=True)


# ------------------------------------------------------------------------------------------------
# hand-written examples (printed without location comments: the parser locates their nodes in the
# text)


def text_of(k: Kernel) -> str:
    return print_kernel(k, locations=False)


def texts_of(ks) -> str:
    return print_kernels(ks, locations=False)


SKETCH = """\
kernel sparse_mla_pipe(q_ptr, kv_ptr, s_kv, sm_scale, TOPK: constexpr, BLOCK_H: constexpr) num_warps=4 options(wgmma_pipeline=True) {
  const BK = 64
  const LOG2E = 1.4426950408889634

  pipe q capacity=1 one_shot fields=(q_l: bfloat16[1, BLOCK_H, 256], q_r: bfloat16[1, 64, 256])
  pipe kv capacity=2 readers=(left, right) fields=(kv_l: bfloat16[2, 64, 256], valid: int8[2, 64])

  buffer p_tile: bfloat16[64, 64]

  NK = TOPK // BK
  lin = tl.program_id(1) * tl.num_programs(0) + tl.program_id(0)
  pid_s = (lin // n_hb).to(tl.int64)

  partition producer default warps=4 (q = q, kv = kv, q_row = q_row, NK = NK) {
    offs_h = tl.arange(0, BLOCK_H)
    qw = q.writer
    slot = q.writer.acquire(0)
    tl.store(tle.gpu.local_ptr(slot.q_l), tl.load(q_rows + offs_d[None, :]))
    q.writer.commit(0)
    for ck in range(0, NK, 1) {
      kres = kv.reader[left].wait(ck)
      s = tl.dot(tl.load(tle.gpu.local_ptr(kres.slot.kv_l)), x, acc)
      if ck > 0 {
        kv.reader[left].release(ck - 1)
      }
      done = kres.is_closed
    }
    for p in static_range(0, 4, 1) { }
  }

  partition left warps=4 regs=240 (kv = kv) {
    res = kv.reader[left fields=(kv_l, valid)].wait(0)
    acc = tl.zeros((BLOCK_H, 64), tl.float32) * LOG2E
  }
}
"""


def L(line, col):
    return Loc("t.kir", line, col)


def test_sketch_structure_and_locations():
    k = parse_kernel(SKETCH, "t.kir")
    assert text_of(k) == SKETCH
    assert (k.name, k.num_warps, k.options) == ("sparse_mla_pipe", 4, (("wgmma_pipeline", True),))
    assert k.loc == L(1, 1)
    assert k.params[:2] == (KParam("q_ptr"), KParam("kv_ptr"))
    assert k.params[4] == KParam("TOPK", True) and k.params[4].loc == L(1, 55)
    assert k.consts == (("BK", 64), ("LOG2E", 1.4426950408889634))
    q, kv = k.pipes
    assert q == PipeDecl("q", 1, (Buffer("q_l", (1, "BLOCK_H", 256), "bfloat16"),
                                  Buffer("q_r", (1, 64, 256), "bfloat16")), one_shot=True)
    assert (q.loc, q.fields[1].loc) == (L(5, 3), L(5, 70))
    assert kv.readers == ("left", "right") and kv.fields[1] == Buffer("valid", (2, 64), "int8")
    assert k.buffers == (Buffer("p_tile", (64, 64), "bfloat16"),)
    bk = Global("BK", 64)
    assert k.prologue[0] == Assign("NK", BinOp("//", Name("TOPK"), bk))
    assert k.prologue[0].value.rhs.loc == L(10, 16)
    assert k.prologue[2] == Assign("pid_s", Op("to", (BinOp("//", Name("lin"), Name("n_hb")),
                                                      DType("int64"))))
    producer, left = k.partitions
    assert (producer.default, producer.warps, producer.regs) == (True, 4, None)
    assert (left.default, left.warps, left.regs) == (False, 4, 240)
    assert producer.bindings == (("q", PipeRef("q")), ("kv", PipeRef("kv")),
                                 ("q_row", Name("q_row")), ("NK", Name("NK")))
    body = producer.body
    assert body[1] == Assign("qw", Handle("q", "writer"))
    assert body[2] == Assign("slot", Event("acquire", Handle("q", "writer"), Const(0)))
    assert body[3] == Eval(Op("tl.store", (
        Op("tle.gpu.local_ptr", (SlotField(Name("slot"), "q_l"),)),
        Op("tl.load", (BinOp("+", Name("q_rows"), Subscript(Name("offs_d"), (None, ":"))),)))))
    assert body[3].loc == L(18, 5)
    loop = body[5]
    assert (loop.var, loop.start, loop.stop, loop.step, loop.static) == (
        "ck", Const(0), Name("NK"), Const(1), False)
    assert loop.loc == L(20, 5) and loop.body[0].loc == L(21, 7)
    reader = Handle("kv", "reader", "left")
    assert loop.body[0] == Assign("kres", Event("wait", reader, Name("ck")))
    assert loop.body[1].value.args[0] == Op("tl.load", (Op("tle.gpu.local_ptr", (
        SlotField(ResultSlot(Name("kres")), "kv_l"),)),))
    assert loop.body[2] == If(Compare(">", Name("ck"), Const(0)), (
        Eval(Event("release", reader, BinOp("-", Name("ck"), Const(1)))),))
    assert loop.body[3] == Assign("done", IsClosed(Name("kres")))
    assert body[6] == For("p", Const(0), Const(4), Const(1), (), static=True)
    assert left.body[0].value.handle == Handle("kv", "reader", "left", ("kv_l", "valid"))
    assert left.body[1].value == BinOp("*", Op("tl.zeros", (
        TupleExpr((Name("BLOCK_H"), Const(64))), DType("float32"))), Global("LOG2E",
                                                                              1.4426950408889634))


def test_module_docstring_example_parses():
    doc = kernel_text.__doc__
    example = doc[doc.index("    kernel sparse_mla_pipe"):doc.index("* A file holds")]
    k = parse_kernel(re.sub(r"(?m)^    ", "", example))
    assert [p.name for p in k.partitions] == ["producer", "left"]
    assert text_of(parse_kernel(text_of(k))) == text_of(k)


def kern(body: str, head: str = "kernel k()") -> Kernel:
    return parse_kernel(f"{head} {{\n{body}\n}}\n", "t.kir")


def part_body(stmts: str, decls: str = "") -> tuple:
    return kern(f"{decls}\npartition p {{\n{stmts}\n}}").partitions[0].body


def ex(text: str, decls: str = ""):
    """The expression of `x = TEXT` in a partition."""
    return part_body(f"x = {text}", decls)[0].value


def show(e, consts=(), pipes=()) -> str:
    """How expression ``e`` prints (as the value of an assignment in a partition)."""
    k = Kernel("k", (), 4, (), tuple(consts), tuple(PipeDecl(p, 1, ()) for p in pipes), (), (),
               (KPartition("p", (), (Assign("x", e),), 4),))
    text = text_of(k)
    return re.search(r"\n    x = (.*)\n", text).group(1)


def test_every_node_prints():
    k = Kernel(
        "k", (KParam("a"), KParam("N", constexpr=True)), 8,
        (("flag", True), ("name", "n'a"), ("tile", (64, 128)), ("dt", DType("float16")),
         ("neg", -1.5), ("none", None)),
        (("BK", 64), ("S", "x"), ("NEG", -math.inf)),
        (PipeDecl("kv", 2, (Buffer("kv_l", (2, "N", 64), "bfloat16"),), ("left", "right")),
         PipeDecl("flag", 1, (), (), True)),
        (Buffer("p", (), "float32"), Buffer("t", (-1, "N"), "int8")),
        (Assign("y", Global("BK", 64)), Eval(Op("tl.program_id", (Const(0),))),
         If(Name("a"), (), (Assign("z", Const(None)),))),
        (KPartition("prod", (("kv", PipeRef("kv")), ("n", Name("a"))), (
            Assign("s", Event("acquire", Handle("kv", "writer"), Name("i"))),
            Eval(Event("commit", Handle("kv", "writer"), Const(0))),
            Assign("r", Event("wait", Handle("kv", "reader", "right", ("kv_l",)), Const(1))),
            Assign("v", Handle("kv", "reader", None, ())),
            Assign("w", SlotField(ResultSlot(Name("r")), "kv_l")),
            Assign("c", IsClosed(Name("r"))),
            Assign("e", BoolOp("or", (UnaryOp("not", Name("a")), BoolOp("and", (
                Compare("<=", Name("a"), Const(2.5)), Name("b")))))),
            Assign("t", Subscript(TupleExpr((Const(1), Const("s"))), (0,))),
            Assign("u", Subscript(Name("x"), (":", None))),
            Assign("c2", Op("to", (Name("x"), DType("float32")), (("bitcast", Const(False)),))),
            For("j", Const(0), Name("N"), Const(2), (Eval(Name("j")),)),
            If(Name("a"), (Eval(Name("b")),), (If(Name("c"), (), (Eval(Name("d")),)),)),
        ), 4, 232, True),))
    expected = """\
kernel k(a, N: constexpr) num_warps=8 options(flag=True, name="n'a", tile=(64, 128), dt=tl.float16, neg=-1.5, none=None) {
  const BK = 64
  const S = 'x'
  const NEG = -inf

  pipe kv capacity=2 readers=(left, right) fields=(kv_l: bfloat16[2, N, 64])
  pipe flag capacity=1 one_shot

  buffer p: float32[]
  buffer t: int8[-1, N]

  y = BK
  tl.program_id(0)
  if a { } else {
    z = None
  }

  partition prod default warps=4 regs=232 (kv = kv, n = a) {
    s = kv.writer.acquire(i)
    kv.writer.commit(0)
    r = kv.reader[right fields=(kv_l)].wait(1)
    v = kv.reader[fields=()]
    w = r.slot.kv_l
    c = r.is_closed
    e = not a or a <= 2.5 and b
    t = (1, 's')[0]
    u = x[:, None]
    c2 = x.to(tl.float32, bitcast=False)
    for j in range(0, N, 2) {
      j
    }
    if a {
      b
    } else if c { } else {
      d
    }
  }
}
"""
    assert text_of(k) == expected
    back = parse_kernel(expected)
    assert back == k and kir_equal(back, k)


@pytest.mark.parametrize("text, tree", [
    ("a + b * c", BinOp("+", Name("a"), BinOp("*", Name("b"), Name("c")))),
    ("(a + b) * c", BinOp("*", BinOp("+", Name("a"), Name("b")), Name("c"))),
    ("a - (b - c)", BinOp("-", Name("a"), BinOp("-", Name("b"), Name("c")))),
    ("a - b - c", BinOp("-", BinOp("-", Name("a"), Name("b")), Name("c"))),
    ("a ** b ** c", BinOp("**", Name("a"), BinOp("**", Name("b"), Name("c")))),
    ("(a ** b) ** c", BinOp("**", BinOp("**", Name("a"), Name("b")), Name("c"))),
    ("-a ** 2", UnaryOp("-", BinOp("**", Name("a"), Const(2)))),
    ("(-a) ** 2", BinOp("**", UnaryOp("-", Name("a")), Const(2))),
    ("a ** -2", BinOp("**", Name("a"), Const(-2))),
    ("(-2) ** a", BinOp("**", Const(-2), Name("a"))),
    ("-1 ** 2", UnaryOp("-", BinOp("**", Const(1), Const(2)))),
    ("-1", Const(-1)),
    ("-(1)", UnaryOp("-", Const(1))),
    ("-(-1)", UnaryOp("-", Const(-1))),
    ("-(-(1))", UnaryOp("-", UnaryOp("-", Const(1)))),
    ("--a", UnaryOp("-", UnaryOp("-", Name("a")))),
    ("+1", UnaryOp("+", Const(1))),
    ("~a & b", BinOp("&", UnaryOp("~", Name("a")), Name("b"))),
    ("~(a & b)", UnaryOp("~", BinOp("&", Name("a"), Name("b")))),
    ("a - -1.5", BinOp("-", Name("a"), Const(-1.5))),
    ("-inf", Const(-math.inf)),
    ("-(inf)", UnaryOp("-", Const(math.inf))),
    ("a | b ^ c & d << e + f", BinOp("|", Name("a"), BinOp("^", Name("b"), BinOp("&", Name("c"), BinOp(
        "<<", Name("d"), BinOp("+", Name("e"), Name("f"))))))),
    ("(a | b) ^ c", BinOp("^", BinOp("|", Name("a"), Name("b")), Name("c"))),
    ("a // b % c / d", BinOp("/", BinOp("%", BinOp("//", Name("a"), Name("b")), Name("c")),
                             Name("d"))),
    ("a >> (b >> c)", BinOp(">>", Name("a"), BinOp(">>", Name("b"), Name("c")))),
    ("a < b + 1", Compare("<", Name("a"), BinOp("+", Name("b"), Const(1)))),
    ("(a < b) < c", Compare("<", Compare("<", Name("a"), Name("b")), Name("c"))),
    ("a == (b != c)", Compare("==", Name("a"), Compare("!=", Name("b"), Name("c")))),
    ("(a | b) == c", Compare("==", BinOp("|", Name("a"), Name("b")), Name("c"))),
    ("not a == b", UnaryOp("not", Compare("==", Name("a"), Name("b")))),
    ("(not a) == b", Compare("==", UnaryOp("not", Name("a")), Name("b"))),
    ("not not a", UnaryOp("not", UnaryOp("not", Name("a")))),
    ("-(not a)", UnaryOp("-", UnaryOp("not", Name("a")))),
    ("a and b and c", BoolOp("and", (Name("a"), Name("b"), Name("c")))),
    ("(a and b) and c", BoolOp("and", (BoolOp("and", (Name("a"), Name("b"))), Name("c")))),
    ("a or b and c", BoolOp("or", (Name("a"), BoolOp("and", (Name("b"), Name("c")))))),
    ("(a or b) and not c", BoolOp("and", (BoolOp("or", (Name("a"), Name("b"))),
                                          UnaryOp("not", Name("c"))))),
    ("not (a and b)", UnaryOp("not", BoolOp("and", (Name("a"), Name("b"))))),
    ("(a, b)", TupleExpr((Name("a"), Name("b")))),
    ("(a,)", TupleExpr((Name("a"),))),
    ("()", TupleExpr(())),
    ("((a, b),)[0]", Subscript(TupleExpr((TupleExpr((Name("a"), Name("b"))),)), (0,))),
    ("x[(0)]", Subscript(Name("x"), (Const(0),))),
    ("x[-1, (-1), -(1)]", Subscript(Name("x"), (-1, Const(-1), UnaryOp("-", Const(1))))),
    ("x[(a, b)]", Subscript(Name("x"), (TupleExpr((Name("a"), Name("b"))),))),
    ("x[a, b]", Subscript(Name("x"), (Name("a"), Name("b")))),
    ("x[]", Subscript(Name("x"), ())),
    ("x[None, :]", Subscript(Name("x"), (None, ":"))),
    ("x[(None)]", Subscript(Name("x"), (Const(None),))),
    ("x[':']", Subscript(Name("x"), (Const(":"),))),
    ("(-1)[0]", Subscript(Const(-1), (0,))),
    ("1[0]", Subscript(Const(1), (0,))),
    ("(1).to(tl.float32)", Op("to", (Const(1), DType("float32")))),
    ("(-1.5).to(tl.float32)", Op("to", (Const(-1.5), DType("float32")))),
    ("(a + b).to(tl.int64)", Op("to", (BinOp("+", Name("a"), Name("b")), DType("int64")))),
    ("-a.to(tl.int64)", UnaryOp("-", Op("to", (Name("a"), DType("int64"))))),
    ("a.b.to()", Op("to", (SlotField(Name("a"), "b"),))),
    ("tl.load(p).to(tl.float32).to(tl.int8)", Op("to", (Op("to", (Op("tl.load", (Name("p"),)),
                                                                  DType("float32"))),
                                                        DType("int8")))),
    ("to()", Op("to")),
    ("to(dtype=tl.int8)", Op("to", (), (("dtype", DType("int8")),))),
    ("tl.float32.to(x)", Op("to", (DType("float32"), Name("x")))),
    ("tl.slot", DType("slot")),
    ("tl.int8.slot", ResultSlot(DType("int8"))),
    ("tl.sum(x, axis=1, keep_dims=True)", Op("tl.sum", (Name("x"),), (("axis", Const(1)),
                                                                       ("keep_dims", Const(True))))),
    ("f()", Op("f")),
    ("kv.writer.wait(0).slot.`slot`", SlotField(ResultSlot(Event("wait", Handle("kv", "writer"),
                                                                 Const(0))), "slot")),
    ("x.`is_closed`.is_closed", IsClosed(SlotField(Name("x"), "is_closed"))),
    ("x.`writer`", SlotField(Name("x"), "writer")),
    ("(kv.reader)[0]", Subscript(Handle("kv", "reader"), (0,))),
    ("(kv.reader[r]).slot", ResultSlot(Handle("kv", "reader", "r"))),
    ("(kv.writer).to(x)", Op("to", (Handle("kv", "writer"), Name("x")))),
    ("kv.reader[`None` fields=(`if`, a)]", Handle("kv", "reader", "None", ("if", "a"))),
    ("`if`.writer.close(n - 1)", Event("close", Handle("if", "writer"),
                                       BinOp("-", Name("n"), Const(1)))),
    ("tl.writer", Handle("tl", "writer")),
    ("`tl`.float32", SlotField(Name("tl"), "float32")),
    ("`inf` + inf + nan", BinOp("+", BinOp("+", Name("inf"), Const(math.inf)), Const(math.nan))),
    ("'a' + \"b'\" + 'é\\n'", BinOp("+", BinOp("+", Const("a"), Const("b'")), Const("é\n"))),
    ("True or False or None", BoolOp("or", (Const(True), Const(False), Const(None)))),
    ("1e999", Const(math.inf)),
    ("1.0 + 1 + 1e-05 + 2E3 + .5 + 7.", BinOp("+", BinOp("+", BinOp("+", BinOp("+", BinOp(
        "+", Const(1.0), Const(1)), Const(1e-05)), Const(2000.0)), Const(0.5)), Const(7.0))),
    ("-0.0", Const(-0.0)),
    ("123456789012345678901234567890", Const(123456789012345678901234567890)),
])
def test_expressions(text, tree):
    got = ex(text)
    assert kir_equal(got, tree), got
    assert kir_equal(ex(show(got)), tree)  # and the canonical spelling reads back the same


def test_resolution_of_plain_names():
    decls = "const BK = 64\nconst inf = 2.0\npipe kv capacity=1\npipe nan capacity=1"
    assert ex("BK + `BK`", decls) == BinOp("+", Global("BK", 64), Name("BK"))
    assert ex("kv", decls) == PipeRef("kv") and ex("`kv`", decls) == Name("kv")
    assert ex("kv.writer", decls) == Handle("kv", "writer")
    assert ex("inf", decls) == Global("inf", 2.0)
    assert ex("-inf", decls) == UnaryOp("-", Global("inf", 2.0))
    assert ex("1e999", decls) == Const(math.inf) and ex("-1e999", decls) == Const(-math.inf)
    assert ex("nan", decls) == PipeRef("nan")
    # the const's value in the Global, wherever the const line stands
    k = kern("partition p {\n  x = BK\n}\nconst BK = 'late'")
    assert k.partitions[0].body[0].value == Global("BK", "late")
    consts, pipes = (("BK", 64), ("inf", 2.0)), ("kv", "nan")
    assert show(BinOp("+", Global("BK", 64), Name("BK")), consts, pipes) == "BK + `BK`"
    assert show(Const(math.inf), consts, pipes) == "1e999"
    assert show(Const(-math.inf), consts, pipes) == "-1e999"
    assert show(UnaryOp("-", Const(math.inf)), consts, pipes) == "-(1e999)"
    assert show(TupleExpr((Name("kv"), PipeRef("kv"), Name("inf"), Global("inf", 2.0))), consts,
                pipes) == "(`kv`, kv, `inf`, inf)"


def test_names_that_are_words():
    # every word of the text form is a name where a name is expected
    text = """\
kernel kernel(const, pipe: constexpr, options) num_warps=2 options(range=1, fields=2) {
  const partition = 1
  pipe buffer capacity=1 readers=(writer, reader, `None`) fields=(slot: int8[warps, `if`])
  buffer const_: options[regs]
  `pipe` = pipe + buffer.writer.commit(0)
  (pipe.x)
  (buffer.writer.acquire(0))
  for in in static_range(range, in, static_range) {
    const = kernel.slot.pipe
    `if` = 1
  }
  partition range default (partition = partition, for = `for`) {
    pipe = const + partition
    const = (pipe, buffer, `buffer`)
    partition = in
    buffer.reader[`None` fields=(slot)].wait(0)
    `for` = `if` + `else` + `not`
  }
}
"""
    k = parse_kernel(text)
    assert (k.name, [p.name for p in k.params]) == ("kernel", ["const", "pipe", "options"])
    assert k.options == (("range", 1), ("fields", 2))
    assert k.consts == (("partition", 1),)
    (pipe,) = k.pipes
    assert pipe.readers == ("writer", "reader", "None")
    assert pipe.fields == (Buffer("slot", ("warps", "if"), "int8"),)
    assert k.buffers == (Buffer("const_", ("regs",), "options"),)
    assert k.prologue[0] == Assign("pipe", BinOp("+", Name("pipe"), Event(
        "commit", Handle("buffer", "writer"), Const(0))))
    assert k.prologue[1] == Eval(SlotField(Name("pipe"), "x"))
    loop = k.prologue[3]
    assert (loop.var, loop.static) == ("in", True)
    assert loop.body[0] == Assign("const", SlotField(ResultSlot(Name("kernel")), "pipe"))
    assert loop.body[1] == Assign("if", Const(1))
    part = k.partitions[0]
    assert part.bindings == (("partition", Global("partition", 1)), ("for", Name("for")))
    assert part.body[1] == Assign("const", TupleExpr((Name("pipe"), PipeRef("buffer"),
                                                      Name("buffer"))))
    assert part.body[3].value == Event("wait", Handle("buffer", "reader", "None", ("slot",)),
                                       Const(0))
    printed = text_of(k)
    assert "  `pipe` = pipe + buffer.writer.commit(0)\n  (pipe.x)\n" in printed
    assert "    `if` = 1\n" in printed and "(partition = partition, `for` = `for`)" in printed
    assert "    `for` = `if` + `else` + `not`\n" in printed
    assert text_of(parse_kernel(printed)) == printed


@pytest.mark.parametrize("a, b", [
    # layout, comments, separators
    ("kernel k() num_warps=4 {\n  x = 1\n}\n", "kernel   k ( )  {x = 1}"),
    ("kernel k() {\n partition p { a = 1; b = 2 } }",
     "# c\n\nkernel k() { # c {\n\n  partition p warps=4 {\n a = 1 # }\n\n b = 2\n }\n}\n\n"),
    ("kernel k() {\r\n  x = 1\r\n}\r\n", "kernel k() {\n  x = 1\n}\n"),
    # declarations: attribute order, trailing commas, placement
    ("kernel k(a, b,) { pipe q fields=(f: int8[2, 4,],) readers=(r,) one_shot capacity=2 }",
     "kernel k(a, b) { pipe q capacity=2 one_shot readers=(r) fields=(f: int8[2, 4]) }"),
    ("kernel k() { partition p regs=8 default warps=2 (a = 1,) { } }",
     "kernel k() { partition p default warps=2 regs=8 (a = 1) { } }"),
    ("kernel k() { partition p () { } }", "kernel k() { partition p warps=4 { } }"),
    ("kernel k() { x = 1\n const C = 2\n buffer b: int8[1]\n pipe q capacity=1 }",
     "kernel k() { pipe q capacity=1\n x = 1\n buffer b: int8[1]\n const C = 2 }"),
    ("kernel k() options() { }", "kernel k() { }"),
    ("kernel k() { readers = 1; pipe q capacity=1 readers=() fields=() }",
     "kernel k() { readers = 1; pipe q capacity=1 }"),
    # statements
    ("kernel k() { for i in range(N) { } }", "kernel k() { for i in range(0, N, 1) { } }"),
    ("kernel k() { for i in range(2, N) { } }", "kernel k() { for i in range(2, N, 1) { } }"),
    ("kernel k() { if a { b } else { } }", "kernel k() { if a { b } }"),
    ("kernel k() { if a { b } else { if c { d } } }",
     "kernel k() { if a { b }\n # between\n else if c { d } }"),
    # expressions
    ("kernel k() { x = ((a)) + (b * (c)) }", "kernel k() { x = a + b * c }"),
    ("kernel k() { x = to(a, tl.int8) }", "kernel k() { x = a.to(tl.int8) }"),
    ("kernel k() { x = [a, b] + [] }", "kernel k() { x = (a, b) + () }"),
    ("kernel k() { x = t[a,] }", "kernel k() { x = t[a] }"),
    ("kernel k() { x = f(a, k=b,) }", "kernel k() { x = f(a, k=b) }"),
    ("kernel k() { x = kv.reader[r][0] }", "kernel k() { x = (kv.reader[r])[0] }"),
    ("kernel k() { x = kv.writer.slot }", "kernel k() { x = (kv.writer).slot }"),
    ("kernel k() { x = 1E3 + 0010 + 1.50 + 1e999 }", "kernel k() { x = 1000.0 + 10 + 1.5 + inf }"),
    ("kernel k() { x = \"a\" + 'b\\'' }", "kernel k() { x = 'a' + \"b'\" }"),
    ("kernel k() { x = `a`.`b` }", "kernel k() { x = a.b }"),
    ("kernel k() { x = kv.reader[`r` fields=(`a`,)] }", "kernel k() { x = kv.reader[r fields=(a)] }"),
    ("kernel k() options(a=+1) { }".replace("+", ""), "kernel k() options(a=1) { }"),
])
def test_canonical_printing(a, b):
    pa, pb = texts_of(parse_kernels(a)), texts_of(parse_kernels(b))
    assert pa == pb


def test_canonical_ignores_locations():
    text = "kernel k() num_warps=4 {\n  x = a + 1\n}\n"
    k1 = parse_kernel(text, "one.kir")
    k2 = parse_kernel("\n\n" + text.replace("  x", "        x"), "two.kir")
    assert k1.loc != k2.loc and k1 == k2 and text_of(k1) == text_of(k2) == text
    assert without_locations(k2).loc == NOLOC
    assert without_locations(k2).prologue[0].value.lhs.loc == NOLOC


def test_constants():
    values = [0, -7, 2**100, -(2**100), 1.5, -1.5, 0.0, -0.0, 1e-05, 5e-324, 1e300, math.inf,
              -math.inf, True, False, None, "", "it's", 'say "x"', "a\\b", "\n\t\x00é😀\u2028",
              "# { } `"]
    for v in values:
        k = Kernel("k", (), 4, (("o", v),), (("C", v),), (), (), (Eval(Const(v)),), ())
        text = text_of(k)
        back = parse_kernel(text)
        assert kir_equal(back, k), (v, text)
        assert text_of(back) == text
    # NaN: as a constant, a const value and an option; equal only through without_locations
    k = Kernel("k", (), 4, (("o", float("nan")),), (("C", float("nan")),), (), (),
               (Eval(BinOp("+", Const(float("nan")), Global("C", float("nan")))),), ())
    text = text_of(k)
    assert "options(o=nan)" in text and "const C = nan" in text and "nan + C" in text
    back = parse_kernel(text)
    assert back != k and without_locations(back) == without_locations(k) and kir_equal(back, k)


def test_kir_equal_is_type_exact():
    assert Const(1) == Const(1.0) == Const(True)  # dataclass equality: Python's ==
    assert not kir_equal(Const(1), Const(1.0)) and not kir_equal(Const(1), Const(True))
    assert not kir_equal(Const(0.0), Const(-0.0))
    assert kir_equal(Const(float("nan")), Const(math.nan))
    assert kir_equal(Name("a", loc=Loc("f", 1, 1)), Name("a"))
    assert hash(kir_key(ex("a + 1"))) == hash(kir_key(BinOp("+", Name("a"), Const(1))))
    # the text form keeps types apart
    assert [type(ex(t).value) for t in ("1", "1.0", "True")] == [int, float, bool]


def test_ops_table_round_trips():
    for name in OPS:
        e = Op(name, (Name("a"), Const(1)), (("mask", Name("m")),))
        text = show(e)
        assert ex(text) == e, text
    assert show(Op("to", (Name("a"), DType("float32")))) == "a.to(tl.float32)"
    assert show(Op("tl.exp2", (Name("a"),))) == "tl.exp2(a)"


def test_multi_kernel_files(tmp_path):
    text = "kernel a() { }\n\nkernel b(N: constexpr) num_warps=8 {\n  x = N\n}\n"
    ks = parse_kernels(text)
    assert [k.name for k in ks] == ["a", "b"] and ks[1].num_warps == 8
    assert texts_of(ks) == "kernel a() num_warps=4 { }\n\n" + text.split("\n\n")[1]
    assert parse_kernels("") == [] and parse_kernels("\n# only a comment\n\n") == []
    f = tmp_path / "two.kir"
    f.write_text(text)
    ks = parse_kernel_file(f)
    assert ks[1].loc == Loc(str(f), 3, 1) and ks[1].prologue[0].loc == Loc(str(f), 4, 3)
    err = error_of("kernel a() { }\nkernel b() { }\n", one=True)
    assert err.message == "expected one kernel, found 2 at 2:1"


def test_grammar_ships_as_package_data():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    globs = pyproject["tool"]["setuptools"]["package-data"]["tle_compiler.ir"]
    grammar = Path(kernel_text.__file__).with_name("kernel_grammar.lark")
    assert grammar.is_file() and any(grammar.match(g) for g in globs)


# ------------------------------------------------------------------------------------------------
# what the printer refuses


def k_with(*, consts=(), pipes=(), prologue=(), body=(), ops=None) -> Kernel:
    parts = (KPartition("p", (), tuple(body), 4),) if body else ()
    return Kernel("k", (), 4, (), tuple(consts), tuple(pipes), (), tuple(prologue), parts)


@pytest.mark.parametrize("kernel, words", [
    (k_with(prologue=[Eval(Global("BK", 64))]), "Global 'BK' has no const line"),
    (k_with(consts=[("BK", 64)], prologue=[Eval(Global("BK", 64.0))]), "has the value 64.0"),
    (k_with(consts=[("BK", 1)], prologue=[Eval(Global("BK", True))]), "has the value True"),
    (k_with(prologue=[Eval(PipeRef("kv"))]), "not a pipe of the kernel"),
    (k_with(consts=[("BK", 1), ("BK", 1)]), "declared twice"),
    (k_with(consts=[("kv", 1)], pipes=[PipeDecl("kv", 1, ())]), "both a const and a pipe"),
    (k_with(consts=[("tl", 1)]), "cannot be named 'tl'"),
    (k_with(pipes=[PipeDecl("if", 1, ())]), "cannot be named 'if'"),
    (k_with(consts=[("nan", 1)], prologue=[Eval(Const(math.nan))]), "NaN constant"),
    (k_with(pipes=[PipeDecl("q", 0, ())]), "capacity 0"),
    (k_with(prologue=[Eval(Op("kv.writer.acquire", (Const(0),)))]), "reads as a pipe handle"),
    (k_with(prologue=[Eval(Op("x.to"))]), "reads as the cast"),
    (k_with(prologue=[Eval(Op("tl..load"))]), "not a dotted path"),
    (k_with(prologue=[Eval(Op("tl.if"))]), "not a dotted path"),
    (k_with(prologue=[Eval(DType("writer"))]), "dtype name 'writer'"),
    (k_with(prologue=[Eval(Event("acquir", Handle("q", "writer"), Const(0)))]), "unknown pipe verb"),
    (k_with(prologue=[Eval(Handle("q", "other"))]), "handle side 'other'"),
    (k_with(prologue=[Eval(BoolOp("and", (Name("a"),)))]), "two or more"),
    (k_with(prologue=[Eval(BinOp("@", Name("a"), Name("b")))]), "unknown binary operator"),
    (k_with(prologue=[Eval(UnaryOp("!", Name("a")))]), "unknown unary operator"),
    (k_with(prologue=[Eval(Compare("is", Name("a"), Name("b")))]), "unknown comparison"),
    (k_with(prologue=[Eval(Const(1j))]), "not a KIR constant"),
    (k_with(prologue=[Eval(Const((1, 2)))]), "not a KIR constant"),
    (k_with(prologue=[Eval(Subscript(Name("t"), (0.5,)))]), "subscript entry 0.5"),
    (k_with(prologue=[Eval(Subscript(Name("t"), (True,)))]), "subscript entry True"),
    (k_with(prologue=[Eval(Op("f", attrs=(("k", object()),)))]), "attribute value"),
    (k_with(prologue=[Eval(Op("f", attrs=(("k", 1), ("k", 2))))]), "given twice"),
    (k_with(prologue=[Eval(Op("f", attrs=(("k", Assign("a", Name("b"))),)))]), "not registered"),
    (k_with(prologue=[Eval(Name("a b"))]), "not an identifier"),
    (k_with(prologue=[Assign("x.y", Const(1))]), "not an identifier"),
    (k_with(prologue=[Eval(SlotField(Name("s"), ""))]), "not an identifier"),
    (Kernel("k", (), 4, (), (), (), (Buffer("b", (True,), "int8"),), (), ()), "shape entry True"),
    (Kernel("k", (), 4, (("o", object()),), (), (), (), (), ()), "not a KIR constant"),
])
def test_printer_refuses(kernel, words):
    with pytest.raises(KirPrintError) as info:
        text_of(kernel)
    assert words in str(info.value)


# ------------------------------------------------------------------------------------------------
# errors: each names what was expected and where (LINE:COLUMN), and loc matches


def error_of(text: str, one: bool = False) -> TleError:
    with pytest.raises(TleError) as info:
        (parse_kernel if one else parse_kernels)(text, "t.kir")
    return info.value


def assert_error_at(text: str, line: int, column: int, *words: str) -> TleError:
    err = error_of(text)
    assert err.message.endswith(f" at {line}:{column}"), err.message
    assert err.loc == Loc("t.kir", line, column), (err.loc, err.message)
    for w in words:
        assert w in err.message, err.message
    assert str(err).startswith(f"t.kir:{line}: error:")
    return err


def test_error_unexpected_token():
    assert_error_at("kernel k() {\n  x = tl.load(p\n}\n", 2, 16, "unexpected end of line",
                    "expected one of ')', ','")
    assert_error_at("kernel k() {\n  x = a b\n}\n", 2, 9, "unexpected name 'b'")
    assert_error_at("kernel k() {\n  x = \n}\n", 2, 7, "unexpected end of line",
                    "expected an expression")
    assert_error_at("kernel k() {\n  x = (a + )\n}\n", 2, 12, "unexpected ')'",
                    "expected an expression")
    assert_error_at("x = 1\n", 1, 1, "unexpected name 'x'", "'kernel'")
    assert_error_at("kernel k {\n}\n", 1, 10, "unexpected '{'", "'('")
    assert_error_at("kernel k() {\n  for i in rnge(4) { }\n}\n", 2, 12, "name 'rnge'",
                    "'range'", "'static_range'")
    assert_error_at("kernel k() {\n  const C = [1]\n}\n", 2, 13, "unexpected '['",
                    "expected a literal")
    assert_error_at("kernel k() {\n  const C = a + 1\n}\n", 2, 15, "unexpected '+'")
    assert_error_at("kernel k() {\n  x = a b\n}\n", 2, 9,
                    "expected one of ';', 'attrs', '}', a newline, an operator")
    assert_error_at("kernel k() { x = y = 1 }", 1, 20, "unexpected '='", "an operator")
    assert_error_at("kernel k() {\n  x = t[1:2]\n}\n", 2, 10, "unexpected ':'")
    assert_error_at("kernel k() {\n  x = a if b else c\n}\n", 2, 9, "unexpected 'if'")


def test_error_unexpected_character():
    assert_error_at("kernel k() {\n  x = a $ b\n}\n", 2, 9, "unexpected character '$'")
    assert_error_at("kernel k() {\n  x = `a b`\n}\n", 2, 7, "backtick")
    assert_error_at("kernel k() {\n  x = 'abc\n}\n", 2, 7, "unexpected character")


def test_error_blocks_and_else():
    assert_error_at("kernel k() {\n  partition p {\n    x = 1\n}\n", 1, 12, "unterminated block",
                    "end of input at 5:1")
    assert_error_at("kernel k() {\n  partition p {\n    x = 1\n  partition r { }\n}\n", 2, 15,
                    "unterminated block", "'partition' line at 4:3")
    assert_error_at("kernel k() {\n  x = '{'  # {\n", 1, 12, "unterminated block")
    assert_error_at("kernel k() {\n  partition p {\n    pipe q capacity=1\n  }\n}\n", 3, 5,
                    "a 'pipe' declaration belongs to a kernel body, not inside a block")
    assert_error_at("kernel k() {\n  x = 1\n  else { }\n}\n", 3, 3, "'else' without an 'if'")
    assert_error_at("kernel k() {\n  x = 1 }\n}\n", 3, 1, "unexpected '}'")


def test_error_expressions():
    assert_error_at("kernel k() {\n  x = a < b < c\n}\n", 2, 13, "chained comparison")
    assert_error_at("kernel k() {\n  x = f(k=1, a)\n}\n", 2, 14, "positional argument after")
    assert_error_at("kernel k() {\n  x = tl.load(p).sum(0)\n}\n", 2, 18, "the only method is .to(dtype)")
    assert_error_at("kernel k() {\n  x = (a).load(p)\n}\n", 2, 11, "the only method")
    assert ex("a.load(p)") == Op("a.load", (Name("p"),))  # a dotted path called is an operation
    assert_error_at("kernel k() {\n  x = `a`.load(p)\n}\n", 2, 15, "`a` is a local name")
    assert_error_at("kernel k() {\n  x = (f)(p)\n}\n", 2, 10, "only operations are called")
    assert_error_at("kernel k() {\n  x = a.`b`(p)\n}\n", 2, 12, "a slot field is not called")
    assert_error_at("kernel k() {\n  x = tl\n}\n", 2, 7, "'tl' alone is not a value")
    assert_error_at("kernel k() {\n  x = a[fields=(b)]\n}\n", 2, 8, "follows P.reader")


def test_error_handles_and_events():
    assert_error_at("kernel k() {\n  kv.writer.acquir(0)\n}\n", 2, 13, "unknown verb 'acquir'",
                    "acquire, commit, close, wait, release")
    assert_error_at("kernel k() {\n  kv.writer.acquire(0, 1)\n}\n", 2, 20,
                    "'acquire' takes one argument, the index")
    assert_error_at("kernel k() {\n  kv.writer.acquire(i=0)\n}\n", 2, 20, "takes one argument")
    assert_error_at("kernel k() {\n  kv.writer(0)\n}\n", 2, 12, "a handle is not called")
    assert_error_at("kernel k() {\n  kv.reader[0].wait(0)\n}\n", 2, 12,
                    "expected a reader name or fields=(...)")
    assert_error_at("kernel k() {\n  kv.reader[r view=(a)].wait(0)\n}\n", 2, 15,
                    "unknown handle attribute 'view'")


def test_error_declarations():
    assert_error_at("kernel k() nmu_warps=4 { }", 1, 12, "unknown kernel attribute 'nmu_warps'")
    assert_error_at("kernel k() num_warps=4 num_warps=8 { }", 1, 24, "duplicate attribute")
    assert_error_at("kernel k() options(a=1) options(b=2) { }", 1, 25, "duplicate 'options")
    assert_error_at("kernel k(a: int) { }", 1, 13, "unknown param kind 'int'")
    assert_error_at("kernel k() options(a=b) { }", 1, 22, "expected a literal",
                    "found name 'b'")
    assert_error_at("kernel k() options(a=np.int8) { }", 1, 22, "a dtype is tl.NAME")
    assert_error_at("kernel k() options(a='\\q') { }", 1, 22, "bad string literal")
    assert_error_at("kernel k() {\n  pipe q one_shot\n}\n", 2, 3, "pipe 'q' needs a capacity")
    assert_error_at("kernel k() {\n  pipe q capacity=0\n}\n", 2, 10, "at least 1")
    assert_error_at("kernel k() {\n  pipe q capacity=1 capacity=2\n}\n", 2, 21,
                    "duplicate attribute 'capacity' on pipe 'q'")
    assert_error_at("kernel k() {\n  pipe q capacity=1 mma=(a)\n}\n", 2, 21,
                    "unknown attribute 'mma' on pipe 'q'", "capacity=N, one_shot")
    assert_error_at("kernel k() {\n  pipe q capacity=(a)\n}\n", 2, 10,
                    "must be written 'capacity=N'")
    assert_error_at("kernel k() {\n  pipe q capacity=1 fields=(a, b)\n}\n", 2, 29,
                    "field 'a' needs its type")
    assert_error_at("kernel k() {\n  pipe q capacity=1 readers=(a: int8[1])\n}\n", 2, 21,
                    "must be written 'readers=(a, b)'")
    assert_error_at("kernel k() {\n  partition p warps=4 warps=8 { }\n}\n", 2, 23,
                    "duplicate attribute 'warps' on partition 'p'")
    assert_error_at("kernel k() {\n  partition p regs { }\n}\n", 2, 15, "'regs=N'")
    assert_error_at("kernel k() {\n  const C = 1\n  const C = 2\n}\n", 3, 3,
                    "const 'C' is declared twice")
    assert_error_at("kernel k() {\n  const C = 1\n  pipe C capacity=1\n}\n", 3, 3,
                    "both a const and a pipe")
    assert_error_at("kernel k() {\n  const tl = 1\n}\n", 2, 3, "cannot be named 'tl'")
    assert_error_at("kernel k() {\n  pipe `if` capacity=1\n}\n", 2, 3, "cannot be named 'if'")
    assert_error_at("kernel k() {\n  partition p { }\n  x = 1\n}\n", 3, 3,
                    "prologue statement after a partition")


# ------------------------------------------------------------------------------------------------
# the strategies reach every node and the tricky spellings (so the properties test them)


def test_strategies_cover_every_node():
    """The generator reaches every node type and the spellings that need care, so the round-trip
    properties above exercise them. The examples are hypothesis's derandomized sequence; the
    sampling stops at the first example by which every wanted kind has been seen (an exception
    no shrinking follows), else it runs its 300 examples and the assertion names what is
    missing."""
    seen: set[str] = set()
    wanted = {"Assign", "Eval", "For", "If", "While", "Return", "BufferRef", "attrs",
              "registered attribute class", "expr attribute", "quoted file", "no location",
              "Const", "Name", "Global", "DType", "BinOp",
              "UnaryOp", "Compare", "BoolOp", "TupleExpr", "Subscript", "Op", "PipeRef",
              "Handle", "Event", "SlotField", "ResultSlot", "IsClosed", "backticks",
              "negated number", "nan", "static loop", "else if"}

    class AllSeen(Exception):
        pass

    @settings(max_examples=300, deadline=None, database=None, derandomize=True,
              phases=[Phase.generate],
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(kernels())
    def sample(k):
        for s in _all_stmts(k):
            seen.add(type(s).__name__)
            for e in stmt_exprs(s):
                seen.update(type(sub).__name__ for sub in walk_expr(e))
        text = print_kernel(k)
        for mark, word in (("`", "backticks"), ("1e999", "shadowed inf"), ("-(", "negated number"),
                           ("[(None)", "constant None entry"), ("nan", "nan"),
                           ("static_range", "static loop"), ("} else if", "else if"),
                           (" attrs {", "attrs"), ("KtStage(", "registered attribute class"),
                           ("= expr(", "expr attribute"), ("'a b.py':", "quoted file"),
                           (" -", "no location"),
                           ("(`", "escaped receiver")):
            if mark in text:
                seen.add(word)
        if wanted <= seen:
            raise AllSeen

    try:
        sample()
    except AllSeen:
        pass
    assert wanted <= seen, wanted - seen


# ------------------------------------------------------------------------------------------------
# index expressions (stage, phase, parity) print compactly and read back as the same objects


def _index_kernel(value) -> Kernel:
    """A one-partition kernel whose only event carries ``value`` as its ``stage`` attribute."""
    ev = Event("acquire", Handle("p", "writer"), Name("i"), attrs=(("stage", value),))
    part = KPartition("w", (), (Eval(ev),), 4, default=True)
    return Kernel("k", (), 4, (), (), (), (), (), (part,))


_var_names = st.sampled_from(["i", "t", "N", "ROUNDS", "ck"])
_affine = st.builds(lambda c, terms: attrs_module.AffineIndex.of(Affine(c, tuple(terms.items()))),
                    st.integers(-40, 40),
                    st.dictionaries(_var_names, st.integers(-9, 9), max_size=3))


@st.composite
def _index_exprs(draw, depth: int = 4):
    e = draw(_affine)
    for _ in range(draw(st.integers(0, depth))):
        cls = draw(st.sampled_from([attrs_module.Mod, attrs_module.FloorDiv, attrs_module.BitAnd,
                                    attrs_module.BitXor]))
        e = cls(e, draw(st.integers(1, 16)))
    return e


@settings(max_examples=150, deadline=None, database=None)
@given(_index_exprs())
def test_index_attributes_print_compactly_and_read_back(value):
    text = print_kernel(_index_kernel(value), locations=False)
    note(text)
    assert "index(" in text and "AffineIndex" not in text
    back = parse_kernel(text)
    got = K.get_attr(back.partitions[0].body[0].value, "stage")
    assert got == value
    # the spelling means what the object means
    env = {"i": 3, "t": 7, "N": 12, "ROUNDS": 5, "ck": 2}
    assert attrs_module.eval_index(got, env) == attrs_module.eval_index(value, env)


def test_index_spellings_that_would_not_read_back_use_the_generic_form():
    # an int at the bottom of the chain would read back as an AffineIndex: printed field by field
    odd = attrs_module.Mod(5, 3)
    text = print_kernel(_index_kernel(odd), locations=False)
    assert "Mod(operand = 5, k = 3)" in text
    assert K.get_attr(parse_kernel(text).partitions[0].body[0].value, "stage") == odd
    # terms that are not normalised (a zero coefficient) likewise
    raw = attrs_module.AffineIndex(1, (("t", 0),))
    text = print_kernel(_index_kernel(raw), locations=False)
    assert "AffineIndex(" in text
    assert K.get_attr(parse_kernel(text).partitions[0].body[0].value, "stage") == raw


@pytest.mark.parametrize("bad,message", [
    ("index(t * t)", "integer combination of names"),
    ("index(t % N)", "takes an integer on its right"),
    ("index(t + 1.5)", "integer combination of names"),
])
def test_malformed_index_attributes_are_errors(bad, message):
    text = print_kernel(_index_kernel(attrs_module.Mod(attrs_module.AffineIndex(0, (("t", 1),)),
                                                       3)), locations=False)
    assert "index(t % 3)" in text
    with pytest.raises(TleError, match=re.escape(message)):
        parse_kernel(text.replace("index(t % 3)", bad))
