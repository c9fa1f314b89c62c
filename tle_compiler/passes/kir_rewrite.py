"""Rebuild a kernel IR tree with new pipe events: how a pass writes attributes onto the
:class:`~tle_compiler.ir.kernel.Event` nodes of an immutable KIR.

Events are visited in :func:`tle_compiler.ir.kernel.events` order (statements in source order,
the expressions of a statement before its nested bodies, sub-expressions before the expression
that contains them), so a pass that computed one result per event in that order hands them back
as a list.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass, replace
from typing import Callable, Iterator

from ..ir import kernel as K
from ..ir.nodes import Loc

_STMT_EXPRS = {K.Assign: ("value",), K.Eval: ("value",), K.For: ("start", "stop", "step"),
               K.If: ("cond",), K.While: ("cond",), K.Return: ("value",)}
_STMT_BODIES = {K.For: ("body",), K.If: ("then", "orelse"), K.While: ("body",)}


def _map_expr(e, fn: Callable[[K.Event], K.Event]):
    if isinstance(e, tuple):
        return tuple(_map_expr(x, fn) for x in e)
    if not is_dataclass(e) or isinstance(e, Loc):
        return e
    changes = {}
    for f in fields(e):
        if f.name in ("loc", "attrs"):
            continue
        old = getattr(e, f.name)
        new = _map_expr(old, fn)
        if new is not old:
            changes[f.name] = new
    out = replace(e, **changes) if changes else e
    return fn(out) if isinstance(out, K.Event) else out


def _map_stmts(body: tuple, fn) -> tuple:
    out = []
    for s in body:
        changes = {}
        for name in _STMT_EXPRS.get(type(s), ()):
            old = getattr(s, name)
            if old is not None:
                new = _map_expr(old, fn)
                if new is not old:
                    changes[name] = new
        for name in _STMT_BODIES.get(type(s), ()):
            changes[name] = _map_stmts(getattr(s, name), fn)
        out.append(replace(s, **changes) if changes else s)
    return tuple(out)


def map_partition_events(kernel: K.Kernel, fn: Callable[[K.KPartition, K.Event], K.Event]
                         ) -> K.Kernel:
    """``kernel`` with every event ``e`` of partition ``p`` replaced by ``fn(p, e)``, called in
    :func:`~tle_compiler.ir.kernel.events` order."""
    parts = []
    for p in kernel.partitions:
        parts.append(replace(p, body=_map_stmts(p.body, lambda e, p=p: fn(p, e))))
    return replace(kernel, partitions=tuple(parts))


def with_event_attrs(kernel: K.Kernel, per_partition: dict[str, list[dict]]) -> K.Kernel:
    """``kernel`` with the i-th event of each partition given the attributes
    ``per_partition[name][i]`` (a dict; events of partitions not named keep theirs)."""
    cursors: dict[str, Iterator[dict]] = {n: iter(v) for n, v in per_partition.items()}

    def fn(p: K.KPartition, e: K.Event) -> K.Event:
        it = cursors.get(p.name)
        if it is None:
            return e
        new = next(it, None)
        if new is None:
            raise ValueError(f"internal: more events in partition '{p.name}' than results")
        return K.with_attrs(e, **new) if new else e

    return map_partition_events(kernel, fn)


def _map_node(x, fn):
    """``x`` rebuilt bottom-up: ``fn(original, rebuilt)`` replaces every IR node (expressions and
    statements; attributes and locations are not walked)."""
    if isinstance(x, tuple):
        items = tuple(_map_node(i, fn) for i in x)
        return x if all(a is b for a, b in zip(items, x)) else items
    if not is_dataclass(x) or isinstance(x, (Loc, type)):
        return x
    changes = {}
    for f in fields(x):
        if f.name in ("loc", "attrs"):
            continue
        old = getattr(x, f.name)
        new = _map_node(old, fn)
        if new is not old:
            changes[f.name] = new
    return fn(x, replace(x, **changes) if changes else x)


def with_node_attrs(kernel: K.Kernel, attrs: dict[int, dict]) -> K.Kernel:
    """``kernel`` with the attributes ``attrs[id(node)]`` set on the nodes of its prologue and
    partition bodies (keyed by the identity of the node in ``kernel``: what a walk over this
    kernel found about it)."""
    if not attrs:
        return kernel

    def fn(orig, new):
        a = attrs.get(id(orig))
        return K.with_attrs(new, **a) if a else new

    parts = tuple(replace(p, body=_map_node(p.body, fn)) for p in kernel.partitions)
    return replace(kernel, prologue=_map_node(kernel.prologue, fn), partitions=parts)
