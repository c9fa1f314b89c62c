"""Instrumentation of the lowering for probes and tests, kept out of the product's signatures
(``@tle.jit``, ``compile_kernel``, ``generate``): nothing changes unless a ``with`` block turns it
on, and a kernel lowered inside one never serves a launch outside it.

    from tle_compiler.lowering import instrument

    with instrument.plan_hook(f):
        compile_kernel(...)   # f(plans) runs after the barrier init counts are set, and may change
                              # them: a test lowers a deliberately broken barrier this way

    with instrument.skip_fills({"kv0r", "kv1l.kv_l"}, path="copy_of_kernel.py"):
        ...                   # the stores / cp.async gathers into those pipes (or pipe.fields) are
                              # left out: what the gathers cost (benchmarks/gather_probe.py)

A skipped fill still counts as filled (the commit arrives with the same unit and count as in the
real kernel), and every acquire, commit, wait, release and wgmma stays: the kernel runs the same
protocol and tensor-core work without moving those bytes, so its results are wrong by design. A
name that is not a pipe of a kernel lowered in the block is an error. ``path`` limits a skip to
the kernels of one source file (a probe copy timed next to the original in one process); without
it the skip applies to every kernel lowered in the block.

The blocks nest and are per thread of control (``contextvars``). :func:`key` is what the runtime's
compile cache adds to its key, so an instrumented compile and a plain one of the same kernel are
two cache entries.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from typing import Callable, Iterable, Iterator, Optional, Union
from ..ir.record import record


@record
class _SkipFills:
    names: frozenset
    path: Optional[str]  # resolved source path, or None for every kernel


_HOOKS: contextvars.ContextVar[tuple] = contextvars.ContextVar("tle_plan_hooks", default=())
_SKIPS: contextvars.ContextVar[tuple] = contextvars.ContextVar("tle_skip_fills", default=())


def _resolved(path) -> Optional[str]:
    return None if path is None else os.path.realpath(os.fspath(path))


@contextlib.contextmanager
def plan_hook(fn: Callable) -> Iterator[None]:
    """Inside the block, the lowering calls ``fn(plans)`` (pipe name → plan.PipePlan) after it set
    every barrier array's ``init_counts`` and before it emits the ``mbarrier.init``s."""
    token = _HOOKS.set(_HOOKS.get() + (fn,))
    try:
        yield
    finally:
        _HOOKS.reset(token)


@contextlib.contextmanager
def skip_fills(names: Union[str, Iterable[str]], path=None) -> Iterator[None]:
    """Inside the block, the lowering leaves out the fills of ``names`` (pipes or
    ``"pipe.field"``s) in the kernels of ``path`` (every kernel when None)."""
    names = frozenset([names] if isinstance(names, str) else names)
    token = _SKIPS.set(_SKIPS.get() + (_SkipFills(names, _resolved(path)),))
    try:
        yield
    finally:
        _SKIPS.reset(token)


def plan_hooks() -> tuple:
    """The plan hooks of the enclosing blocks, outermost first."""
    return _HOOKS.get()


def fills_skipped(path) -> frozenset:
    """The pipes / pipe.fields whose fills the lowering leaves out in a kernel of ``path``."""
    p = _resolved(path)
    out: set = set()
    for s in _SKIPS.get():
        if s.path is None or s.path == p:
            out |= s.names
    return frozenset(out)


def key(path) -> tuple:
    """What is turned on for a kernel of ``path``: () when nothing is (the plain kernel)."""
    hooks, skips = plan_hooks(), fills_skipped(path)
    if not hooks and not skips:
        return ()
    return (hooks, tuple(sorted(skips)))  # the hooks themselves: an id could be reused
