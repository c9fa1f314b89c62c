"""Positions in one function of the kernel IR (a partition), named by the path from the
partition to the node, as Python would reach it: ``body[6].body[1].value.lhs`` is the left operand
of the value of the second statement of the loop that is the partition's seventh statement.

A path names a node by structure, not by object identity, so it means the same in every walk of
the function and after the KIR text form is printed and read back. Tuple fields are indexed
(``args[0]``); a tuple of ``(key, expression)`` pairs (an operation's keywords, a loop's options)
by key (``kwargs[mask]``). A statement list is named like a field (``body``, ``then``,
``orelse``). schedule-wgmma and emit-gluon name the positions of wgmma waits with these paths
(lowering/schedule_wgmma.py, scheduled_waits.py).
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from typing import Iterator, Optional

from ..ir import kernel as K
from ..ir.nodes import Loc

#: The statement types: their nested statement lists are positions of their own (a block),
#: walked statement by statement, not as part of the statement's expressions.
STMTS = (K.Assign, K.Eval, K.For, K.If, K.While, K.Return)


def join(path: str, rest: str) -> str:
    """``rest`` (a path relative to the node at ``path``) as a path from the function."""
    return f"{path}.{rest}" if path and rest else path or rest


#: per class: whether its instances are IR nodes (dataclasses other than Loc); and the names of
#: the fields a walk enters (all but ``loc`` and ``attrs``). Kept per class: ``fields()`` and
#: ``is_dataclass()`` of every node visited cost more than the walk itself.
_NODE_CLASS: dict[type, bool] = {}
_WALKED_FIELDS: dict[type, tuple[str, ...]] = {}


def _is_node(x: object) -> bool:
    cls = type(x)
    got = _NODE_CLASS.get(cls)
    if got is None:
        got = _NODE_CLASS[cls] = is_dataclass(x) and not isinstance(x, (Loc, type))
    return got


def _walked_fields(node: object) -> tuple[str, ...]:
    cls = type(node)
    got = _WALKED_FIELDS.get(cls)
    if got is None:
        got = _WALKED_FIELDS[cls] = tuple(f.name for f in fields(node)
                                          if f.name not in ("loc", "attrs"))
    return got


def children(node: object, exprs_only: bool = False) -> Iterator[tuple[str, object]]:
    """``(segment, child)`` for every IR node (or statement list, ``exprs_only`` False) directly
    under ``node``; ``exprs_only``: the expressions a statement evaluates itself, not its nested
    statement lists."""
    for name in _walked_fields(node):
        value = getattr(node, name)
        if _is_node(value):
            yield name, value
        elif isinstance(value, tuple):
            if value and all(isinstance(s, STMTS) for s in value):
                if not exprs_only:
                    yield name, value
                continue
            for i, item in enumerate(value):
                if _is_node(item):
                    yield f"{name}[{i}]", item
                elif (isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str)
                      and _is_node(item[1])):
                    yield f"{name}[{item[0]}]", item[1]


def walk(node: object, path: str = "") -> Iterator[tuple[str, object]]:
    """``(path, x)`` for ``node`` and everything under it, parents first: every IR node and every
    statement list (a tuple of statements)."""
    yield path, node
    if isinstance(node, tuple):
        for i, s in enumerate(node):
            yield from walk(s, f"{path}[{i}]")
        return
    for seg, child in children(node):
        yield from walk(child, join(path, seg))


def expression_paths(stmt: object, path: str) -> dict[int, str]:
    """The path of every expression node a statement evaluates itself (``stmt`` at ``path``), by
    the node's identity; a node object that occurs twice is named by its first occurrence."""
    out: dict[int, str] = {}

    def visit(node, p):
        out.setdefault(id(node), p)
        for seg, child in children(node):
            visit(child, join(p, seg))

    for seg, child in children(stmt, exprs_only=True):
        visit(child, join(path, seg))
    return out


def carriers(root: object) -> dict[str, object]:
    """The nodes under (and including) ``root`` that carry attributes (ir/kernel.py's KPartition,
    For, Op, Event), by path."""
    return {p: n for p, n in walk(root) if not isinstance(n, tuple) and hasattr(n, "attrs")}


def carrier_of(path: str, carrier_paths) -> tuple[str, str]:
    """``(carrier, rest)``: the innermost carrier path that contains ``path`` (a prefix of it
    ending at a segment), and ``path`` relative to it."""
    best: Optional[str] = None
    for c in carrier_paths:
        if c == path or not c or path.startswith(c + ".") or path.startswith(c + "["):
            if best is None or len(c) > len(best):
                best = c
    if best is None:
        raise ValueError(f"internal: no node carrying attributes contains {path!r}")
    return best, path[len(best):].lstrip(".")
