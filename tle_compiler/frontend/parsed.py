"""Parsed Python files shared by the readings of one process.

tle-dump reads a kernel's file up to three times (generically, specialised to DEFAULT_CONFIG's
constexprs, and with its register budgets bound for the translation), and every reading builds
each module the kernel imports. The parse (``ast.parse`` and the compile that checks the module
imports) and the whole-module walks that depend on nothing but the file's text are the same each
time: they are computed once per text here.

The trees handed out are shared, so nothing in the frontend changes an AST node (it never
has: the builder makes kernel IR, not new Python). A walk memoised with :func:`per_tree` returns
a frozenset or a tuple, so a caller cannot change what the next caller reads.
"""

from __future__ import annotations

import ast
import functools
import weakref
from collections import OrderedDict
from typing import Callable, TypeVar

#: Parsed modules by (path, text), most recently used last.
_TREES: "OrderedDict[tuple[str, str], ast.Module]" = OrderedDict()
_TREES_KEPT = 64

T = TypeVar("T")


def cached_tree(path: str, text: str, parse: Callable[[str, str], ast.Module]) -> ast.Module:
    """``parse(text, path)``, computed once per (path, text) among the last 64 parsed; a parse
    that raises is not kept (the next reading raises the same error)."""
    key = (path, text)
    tree = _TREES.get(key)
    if tree is None:
        tree = parse(text, path)
        _TREES[key] = tree
        while len(_TREES) > _TREES_KEPT:
            _TREES.popitem(last=False)
    else:
        _TREES.move_to_end(key)
    return tree


def per_tree(fn: Callable[..., T]) -> Callable[..., T]:
    """Memoise ``fn(tree, *args)`` on the tree object (held weakly) and the other arguments. A
    set result is returned as a frozenset and a list as a tuple: shared, it must not change."""
    memo: "weakref.WeakKeyDictionary[ast.AST, dict]" = weakref.WeakKeyDictionary()

    @functools.wraps(fn)
    def wrapper(tree: ast.AST, *args):
        per = memo.get(tree)
        if per is None:
            per = memo[tree] = {}
        if args not in per:
            out = fn(tree, *args)
            if isinstance(out, set):
                out = frozenset(out)
            elif isinstance(out, list):
                out = tuple(out)
            per[args] = out
        return per[args]

    return wrapper
