"""Hypothesis strategies that build random, *syntactically valid* Pipe IR programs.

"Syntactically valid" means: every node is well formed and the program survives the text form
(print → parse gives it back), so names avoid the text form's keywords, pipes have a capacity of
1-4, ``range`` steps are non-zero, ``%`` moduli positive, ``and``/``or`` have two or more operands,
a slot access's write names no reader. The programs are *not* correct protocols (events and slot
accesses are drawn at random; params have any domain; conditions use Python's ``%`` and C's
``rem``), which is what tests of the text form, of the verifier's error paths and of the
simulator's error paths want.

Exports: :func:`programs` (a strategy of :class:`Program`), :func:`modules`, :func:`affines`,
:func:`conditions` and :func:`names`.
"""

from __future__ import annotations

import functools
from functools import reduce
from typing import Iterable, Sequence

from hypothesis import strategies as st

from tle_compiler.ir.expr import CMP_OPS, Affine, BoolOp, Compare, Cond, ModCompare, Not
from tle_compiler.ir.nodes import (READER_VERBS, VERBS, Access, Event, For, If, Module, Param,
                                   Partition, Pipe, Program, Stmt)
from tle_compiler.ir.parser import RESERVED_WORDS

__all__ = ["names", "affines", "conditions", "programs", "modules"]

_FIRST = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"
_REST = _FIRST + "0123456789"


#: A fixed pool keeps generation fast; it includes words that are keywords, attribute names or
#: verbs somewhere in the text form (``pipe``, ``range``, ``and``, ``fields``, ``wait``, ...): they
#: must still work as plain names everywhere else.
_POOL = ("a", "b", "i", "j", "k", "ck", "NK", "N", "M", "q", "kv", "x_1", "_", "_t", "Q2", "left",
         "right", "producer", "consumer", "fields", "readers", "capacity", "one_shot", "mma",
         "default", "warps", "regs", "acquire", "commit", "close", "wait", "release", "iff",
         "nota", "forx", "else_", "kernel_", "score", "kernel", "param", "pipe", "partition",
         "range", "in", "and", "or")


@functools.lru_cache(maxsize=None)
def names() -> st.SearchStrategy[str]:
    """Identifiers that the text form accepts everywhere (no reserved words): half from a fixed
    pool, half freshly generated."""
    fresh = st.builds(lambda a, b: a + b, st.sampled_from(_FIRST),
                      st.text(_REST, max_size=5)).filter(lambda s: s not in RESERVED_WORDS)
    return st.one_of(st.sampled_from(_POOL), fresh)


@functools.lru_cache(maxsize=None)
def _unique_names(min_size: int, max_size: int) -> st.SearchStrategy[tuple[str, ...]]:
    return st.lists(names(), min_size=min_size, max_size=max_size, unique=True).map(tuple)


def affines(vars: Iterable[str] = (), max_terms: int = 3) -> st.SearchStrategy[Affine]:
    """Normalised affine expressions over ``vars`` (constants only when ``vars`` is empty)."""
    return _affines(tuple(sorted(set(vars))), max_terms)


# Cached per variable set: building (and validating) a fresh strategy object for every drawn
# index would dominate the generation time.
@functools.lru_cache(maxsize=512)
def _affines(pool: tuple[str, ...], max_terms: int) -> st.SearchStrategy[Affine]:
    consts = st.integers(-8, 8)
    if not pool:
        return consts.map(Affine)
    terms = st.lists(st.tuples(st.sampled_from(pool), st.integers(-3, 3)), max_size=max_terms)
    return st.builds(
        lambda c, ts: reduce(lambda acc, t: acc + Affine.of(t[0]).scale(t[1]), ts, Affine(c)),
        consts, terms)


def conditions(vars: Iterable[str] = (), max_depth: int = 2) -> st.SearchStrategy[Cond]:
    """Conditions: Compare / ModCompare leaves under BoolOp (2-3 operands) and Not."""
    pool = tuple(sorted(set(vars)))
    return st.composite(lambda draw: _cond(draw, pool, max_depth))()


_CMP = st.sampled_from(CMP_OPS)
_EQ_NE = st.sampled_from(("==", "!="))
_BOOL = st.sampled_from(("and", "or"))


def _cond(draw, pool: tuple[str, ...], depth: int) -> Cond:
    kind = draw(st.integers(0, 5)) if depth > 0 else draw(st.integers(0, 1))
    if kind == 0:
        return Compare(draw(affines(pool)), draw(_CMP), draw(affines(pool)))
    if kind == 1:
        m = draw(st.integers(1, 4))
        if draw(st.booleans()):
            # C's remainder takes the sign of the expression: -m < r < m
            return ModCompare(draw(affines(pool)), m, draw(_EQ_NE), draw(st.integers(1 - m, m - 1)),
                              c=True)
        return ModCompare(draw(affines(pool)), m, draw(_EQ_NE), draw(st.integers(0, m - 1)))
    if kind <= 3:
        n = draw(st.integers(2, 3))
        return BoolOp(draw(_BOOL), tuple(_cond(draw, pool, depth - 1) for _ in range(n)))
    if kind == 4:
        return Not(_cond(draw, pool, depth - 1))
    return Compare(draw(affines(pool)), draw(_CMP), draw(affines(pool)))


# The program generator draws from primitive, cached strategies through plain helper functions
# (``draw`` passed along) rather than nesting composites: creating and validating a strategy object
# per statement made generation several times slower than parsing and printing.

_VERB = st.sampled_from(VERBS)
_STEP = st.sampled_from((1, 1, 1, 2, 3, -1, -2))
_ELSE_SHAPE = st.sampled_from(("none", "block", "elif"))
_WARPS = st.sampled_from((1, 2, 4, 8))
_REGS = st.one_of(st.none(), st.sampled_from((24, 40, 168, 240)))


def _pick(draw, items: Sequence):
    return items[draw(st.integers(0, len(items) - 1))]


def _subset(draw, items: Sequence[str]) -> tuple[str, ...]:
    """A sub-sequence of ``items``, in a random order."""
    chosen = [x for x in items if draw(st.booleans())]
    return tuple(draw(st.permutations(chosen))) if len(chosen) > 1 else tuple(chosen)


def _pipe(draw, name: str) -> Pipe:
    fields = draw(_unique_names(0, 4))
    return Pipe(name, draw(st.integers(1, 4)), fields, readers=draw(_unique_names(0, 3)),
                one_shot=draw(st.booleans()), mma=_subset(draw, fields))


def _access(draw, pipes: Sequence[Pipe], vars: tuple[str, ...]) -> Access:
    """A write (never with a reader name: the text form has none) or a read, of a declared field
    or of any name; a read names a declared reader, another name, or none."""
    pipe = _pick(draw, pipes)
    field = _pick(draw, pipe.fields) if pipe.fields and draw(st.integers(0, 3)) else draw(names())
    if draw(st.booleans()):
        return Access("writer", pipe.name, field, draw(affines(vars)))
    reader = None
    if draw(st.booleans()):
        declared = pipe.readers and draw(st.booleans())
        reader = _pick(draw, pipe.readers) if declared else draw(names())
    return Access("reader", pipe.name, field, draw(affines(vars)), reader)


def _event(draw, pipes: Sequence[Pipe], vars: tuple[str, ...]) -> Event:
    pipe = _pick(draw, pipes)
    verb = draw(_VERB)
    reader = fields = None
    if verb in READER_VERBS:
        if pipe.readers and draw(st.booleans()):
            reader = _pick(draw, pipe.readers)
        if draw(st.integers(0, 3)) == 0:
            fields = _subset(draw, pipe.fields)
    return Event(verb, pipe.name, draw(affines(vars)), reader=reader, fields=fields)


def _if(draw, pipes: Sequence[Pipe], vars: tuple[str, ...], depth: int) -> If:
    cond = _cond(draw, tuple(sorted(set(vars))), 2)
    then = _body(draw, pipes, vars, depth - 1)
    shape = draw(_ELSE_SHAPE)
    if shape == "none":
        orelse: tuple[Stmt, ...] = ()
    elif shape == "block":
        orelse = _body(draw, pipes, vars, depth - 1)
    else:  # `else if` sugar
        orelse = (_if(draw, pipes, vars, depth - 1),)
    return If(cond, then, orelse)


def _for(draw, pipes: Sequence[Pipe], vars: tuple[str, ...], depth: int) -> For:
    var = draw(names())
    start, stop, step = draw(affines(vars)), draw(affines(vars)), draw(_STEP)
    return For(var, start, stop, step, _body(draw, pipes, vars + (var,), depth - 1))


def _body(draw, pipes: Sequence[Pipe], vars: tuple[str, ...], depth: int) -> tuple[Stmt, ...]:
    out: list[Stmt] = []
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.integers(0, 3)) if depth > 0 else draw(st.integers(0, 1))
        if kind == 0:
            out.append(_event(draw, pipes, vars))
        elif kind == 1:
            out.append(_event(draw, pipes, vars) if draw(st.booleans()) else
                       _access(draw, pipes, vars))
        elif kind == 2:
            out.append(_for(draw, pipes, vars, depth))
        else:
            out.append(_if(draw, pipes, vars, depth))
    return tuple(out)


def _param(draw, name: str) -> Param:
    lo = draw(st.one_of(st.none(), st.integers(-2, 3)))
    hi = draw(st.one_of(st.none(), st.integers(lo if lo is not None else -2, 6)))
    return Param(name, lo, max=hi)


@st.composite
def programs(draw, max_depth: int = 3) -> Program:
    """A random kernel: 0-3 params (``>= K`` for K in -2..3, every integer, or with an upper end),
    1-4 pipes, 1-4 partitions with nested loops/ifs of events and slot accesses."""
    params = tuple(_param(draw, n) for n in draw(_unique_names(0, 3)))
    pipes = tuple(_pipe(draw, n) for n in draw(_unique_names(1, 4)))
    part_names = draw(_unique_names(1, 4))
    default_at = draw(st.integers(-1, len(part_names) - 1))  # -1: no default partition
    param_names = tuple(p.name for p in params)
    partitions = tuple(
        Partition(n, _body(draw, pipes, param_names, draw(st.integers(0, max_depth))),
                  warps=draw(_WARPS), regs=draw(_REGS), default=(i == default_at))
        for i, n in enumerate(part_names))
    return Program(draw(names()), params, pipes, partitions)


def modules(max_kernels: int = 3) -> st.SearchStrategy[Module]:
    """A Module of 1..max_kernels random kernels of distinct names (path None; a file may not
    declare two kernels of one name)."""
    return st.lists(programs(max_depth=2), min_size=1, max_size=max_kernels,
                    unique_by=lambda k: k.name).map(lambda ks: Module(tuple(ks)))
