"""Read a Python file's ``@tle.jit`` kernels (the kernel never runs): the entry points of the
frontend.

A file is read once: build.py turns its Python source into the kernel IR
(:class:`~tle_compiler.ir.kernel.Kernel`, one per kernel), and protocol.py derives each kernel's Pipe
IR Program and the facts the lowering needs from that KIR. The :class:`KernelInfo` carries the KIR
it came from (``kir``), so the lowering translates the very object the verifier's Program was
derived from. The KIR is built generically (a constexpr binding is applied by the protocol view,
protocol.analyse) and cached by file, text and kernel name (a file's imported modules are checked
for changes), so a kernel read twice (verified, then lowered; read generically, then specialised;
``DEFAULT_CONFIG``, then the kernel) is built once.

Public entry points (re-exported by :mod:`tle_compiler.frontend`):

- :func:`read_file` / :func:`read_source` → :class:`~tle_compiler.ir.nodes.Module`: one Program per
  module-level ``@tle.jit`` function (``@tle.jit``, ``@tle.jit(...)``, ``@jit``/``@jit(...)`` with
  ``jit`` imported from tle_compiler) whose body calls ``tle.gpu.warp_specialize``;
- :func:`read_kernels` / :func:`kernels_of_source` → list of :class:`KernelInfo`, with what the
  lowering needs besides the Program: the KIR, field specs, partitions and their bindings;
- :func:`read_kir` → the KIR kernels of a file (the same objects the KernelInfos carry);
- :func:`kernel_signature`: a kernel's arguments from its ``def`` alone.

Every user mistake is a :class:`~tle_compiler.diagnostics.TleError` at the offending line.
"""

from __future__ import annotations

import ast
import os
from collections import OrderedDict
from typing import Optional, Union

from ..diagnostics import TleError
from ..ir import kernel as K
from ..ir.nodes import Loc, Module, walk_events
from ..language.gpu import SharedBuffer
from .budgets import with_budgets
from .build import Built, CapacityOfConstexprs, build
from .build import has_events as _has_events
from .config_literal import entry_section
from .context import FieldSpec, PipeInfo
from .import_order import import_failure, parse_python
from .kernel import KernelInfo, PartitionInfo, jit_decorator, kernel_params
from .protocol import analyse
from .scope import ModuleScope
from .source_text import read_python

PathLike = Union[str, "os.PathLike[str]"]

# Reading errors that binding the kernel's constexprs to their values can remove (an index, a loop
# bound or a condition that is affine only once e.g. NP = TOPK // 128 is a number; pipe events
# (or an early `return` before them) under an `if` on a constexpr, of which only the taken branch
# may exist; a tl.static_assert on constexprs that the DEFAULT_CONFIG's values make false, decided
# by the values the kernel is then read with: its config's, or those a --param or a launch gives;
# a tle.gpu.prefetch_l2 byte count read from a constexpr, checked at the value it is then read
# with).
SPECIALIZABLE = frozenset({"non-affine", "non-affine-loop", "non-affine-if", "constexpr-if",
                           "static-assert", "constexpr-operand"})


def _bound_for(pending: CapacityOfConstexprs, value: object) -> bool:
    """Whether ``value`` binds a constexpr that ``pending`` needs: an integer, or for a pipe
    handle or a pipe the constexpr chooses (``pending.choice``) a bool too, which the build
    folds as Python does (`wa if C else wb`; --gluon lowers a DEFAULT_CONFIG's True as one).
    A capacity takes integers only."""
    return type(value) is int or getattr(pending, "choice", False) and type(value) is bool


def parse(text: str, path: str) -> ast.Module:
    return parse_python(text, path)


def _read_text(path: PathLike) -> str:
    try:
        return read_python(path)  # as Python reads it: a byte-order mark, a coding declaration
    except OSError as e:
        raise TleError(f"cannot read {os.fspath(path)}: {e.strerror or e}",
                       Loc(os.fspath(path), 0), check="io") from None


# ----------------------------------------------------------------------------------------------
# one reading of a file, cached


class _Reading:
    """One build of a file (its KIR kernels, built generically: a constexpr binding is applied by
    the protocol view, so every binding of the kernel reads the same KIR object), and the
    KernelInfos derived from it, per binding (on demand). The one exception: a constexpr that
    decides an `if` around TMA copies (``if TMA: <TMA copies> else: <cp.async>``) is folded when
    the kernel is built, so that the KIR, which the lowering translates, holds only the branch
    that runs, as the protocol view does; such a binding reads a KIR built for it."""

    def __init__(self, built: Optional[Built], path: str, text: Optional[str] = None,
                 name: Optional[str] = None, pending: Optional[CapacityOfConstexprs] = None):
        #: the generic build; None for a kernel that exists only with constexprs bound (a pipe
        #: capacity read from them: ``pending``, raised for a binding that lacks one of them)
        self.built = built
        self.pending = pending
        self.path = path
        self.text = text
        self.name = name
        self.infos: dict[tuple, list[KernelInfo]] = {}
        self.folded: dict[tuple, Built] = {}
        #: why Python cannot import the file (import_order.import_failure), False when it can,
        #: None until a kernel is read
        self.import_failure: Optional[Union[TleError, bool]] = None
        # every build binds a pending capacity's constexprs (folded like an `if` around TMA
        # copies: the KIR holds the number); the rest is learnt from the generic build, or
        # without one from the first build
        self.branching = frozenset(pending.names) if pending else frozenset()
        self.constexprs = self.branching
        self.stamps: dict = {}
        if built is not None:
            self.learn(built)

    def learn(self, built: Built) -> None:
        """What every build of the file shares, read from ``built``: the constexprs whose
        binding folds an `if` around pipe events or TMA copies, every constexpr argument, and
        the imported modules it read, with what their files were then."""
        self.branching = self.branching | _branching_constexprs(built)
        self.constexprs = frozenset(p.name for _, k in built.kernels for p in k.params
                                    if p.constexpr)
        self.stamps = {m_path: _stamp(m_path) for m_path in built.cache.modules
                       if m_path != os.path.abspath(self.path)}

    def generic(self) -> Built:
        """The generic build; for a kernel that has none (a pipe capacity read from constexprs),
        its build with DEFAULT_CONFIG's values of them, which carries what every build of the
        file does (the config itself, the kernels' names); :class:`CapacityOfConstexprs` without
        such values."""
        if self.built is not None:
            return self.built
        values = entry_section(self.pending.config, self.pending.kernel, "constexprs")
        while True:
            names = self.pending.names
            if not all(_bound_for(self.pending, values.get(n)) for n in names):
                raise self.pending
            try:
                return self.built_for({n: values[n] for n in names})
            except CapacityOfConstexprs:
                if self.pending.names == names:  # no other pipe's capacity learnt: as it is
                    raise

    def fresh(self) -> bool:
        return all(_stamp(p) == s for p, s in self.stamps.items())

    def kernel_infos(self, bind: Optional[dict]) -> list[KernelInfo]:
        key = tuple(sorted((bind or {}).items()))
        if self.pending is not None and not all(
                _bound_for(self.pending, (bind or {}).get(n)) for n in self.pending.names):
            raise self.pending
        if key not in self.infos:
            built = self.built_for(bind or {})
            infos = [_kernel_info(built, fdef, kern, self.path, bind)
                     for fdef, kern in built.kernels]
            if bind and not all(_events_agree(i) for i in infos):
                # the protocol view folded an `if` around events that the build kept (its
                # condition reads a bound constexpr in a way _branching_constexprs does not
                # follow): read the build with every bound constexpr folded instead
                built = self.built_for(bind, every=True)
                infos = [_kernel_info(built, fdef, kern, self.path, bind)
                         for fdef, kern in built.kernels]
            for info in infos:
                _refuse_disagreement(info)
            # register budgets of the constexprs bound here, as numbers (frontend/budgets.py)
            infos = [with_budgets(i, bind or {}) for i in infos]
            # Python must be able to import the module: a name imported must be bound when the
            # import runs (modules that import each other), every module imported must exist,
            # no top-level statement may always raise (import_order.py). Checked once the
            # kernels are read, so that a fault of a kernel's own reading is reported first
            if infos and self.import_failure is None:
                self.import_failure = import_failure(self.path, self.text) or False
            if self.import_failure:
                raise self.import_failure
            self.infos[key] = infos
        return self.infos[key]

    def built_for(self, bind: dict, every: bool = False) -> Built:
        """The build whose KIR the binding reads: the generic one, or one with the bound
        constexprs that decide an `if` around pipe events folded (``every``: all of them)."""
        fold = tuple(sorted((n, v) for n, v in bind.items()
                            if n in self.branching or (every and n in self.constexprs)))
        if not fold:
            return self.generic()
        if fold not in self.folded:
            try:
                built = build(self.path, self.name, bind=dict(fold), text=self.text)
            except CapacityOfConstexprs as e:
                # another pipe's capacity reads constexprs this fold leaves free (`capacity=Q_S`
                # beside `capacity=KV_S`): every build binds them too
                if set(e.names) <= {n for n, _ in fold}:
                    raise
                self.pending = CapacityOfConstexprs(e.message, e.loc,
                                                    tuple(dict.fromkeys(
                                                        (*self.pending.names, *e.names)))
                                                    if self.pending else e.names,
                                                    e.kernel, e.config)
                self.branching = self.branching | frozenset(e.names)
                if not all(_bound_for(e, bind.get(n)) for n in e.names):
                    raise self.pending from None
                return self.built_for(bind, every)
            first = self.built is None and not self.folded
            self.folded[fold] = built
            if first:
                # the first build of a kernel with no generic one: what every build shares,
                # after which the binding may fold more of its constexprs
                self.learn(built)
                return self.built_for(bind, every)
        return self.folded[fold]


def _branching_constexprs(built: Built) -> frozenset:
    """The constexpr arguments of the built kernels that a condition of an `if` around pipe
    events or TMA copies reads by name (or through a partition parameter bound to one or to an
    expression of them). A binding of one folds that `if` in the kernel IR, as the protocol view
    folds it when it reads the kernel specialised (protocol.py; around TMA copies it reads it
    only so: the `constexpr-if` check), so that both see the same events in the same order. A
    condition that reaches a constexpr otherwise (a name assigned from it) is caught where the
    two views are compared (``_Reading.kernel_infos``), which then builds again with every bound
    constexpr folded."""
    # (the register budgets' constexprs are not among them: frontend/budgets.py evaluates a
    # budget with their values in whatever reading is lowered, so binding them builds nothing)
    out: set[str] = set()
    for _, kern in built.kernels:
        cx = {p.name for p in kern.params if p.constexpr}
        bodies = [({n: {n} for n in cx}, kern.prologue)]
        for part in kern.partitions:
            # a parameter bound to a constexpr or to an expression of constexprs (`BALANCE +
            # RUN - 1`): a condition reading it reads each of them
            local = {n: read for n, e in part.bindings
                     if (read := {x.id for x in K.walk_expr(e)
                                  if isinstance(x, K.Name) and x.id in cx})}
            bodies.append((local, part.body))
        for names, body in bodies:
            def read(e: K.Expr) -> set[str]:
                return {c for x in K.walk_expr(e) if isinstance(x, K.Name) and x.id in names
                        for c in names[x.id]}

            for st in K.walk_stmts(body):
                if isinstance(st, K.If) and (_has_events(st.then) or _has_events(st.orelse)):
                    out |= read(st.cond)
                # a conditional expression the protocol view decides (`1 if SKIP else 0`): the
                # build binding its constexprs keeps only the operand that runs, which the
                # lowering can translate (it has no conditional expressions)
                for x in K.stmt_exprs(st):
                    for e in K.walk_expr(x):
                        if isinstance(e, K.Op) and e.name == "ifexp":
                            out |= read(e.args[0])
    return frozenset(out)


def _events_agree(info: KernelInfo) -> bool:
    """Whether every partition of the KIR performs the pipe events of its protocol view, in the
    same order (what the lowering pairs: passes/kir_protocol.event_pairs). A view that could not
    be made (a reading error) agrees: the error is reported as it is."""
    program = info.program
    if program is None or info.kir is None:
        return True
    views = {p.name: p for p in program.partitions}
    return all(K.same_events(list(K.events(part.body)), list(walk_events(views[part.name].body)))
               for part in info.kir.partitions if part.name in views)


def _refuse_disagreement(info: KernelInfo) -> None:
    """Refuse a kernel whose protocol view decided an `if` around pipe events that its kernel
    IR keeps, even with every bound constexpr folded: its condition is a constant the protocol
    view computes through a name bound more than once (`big = True` then `big = False`), an
    augmented assignment or a tuple's item, which the builder does not fold. Verified, such a
    kernel stopped the lowering with an internal error (the two views' events differ); the
    error names the `if`."""
    if _events_agree(info):
        return
    views = {p.name: p for p in info.program.partitions}
    for part in info.kir.partitions:
        kev = list(K.events(part.body))
        vev = list(walk_events(views[part.name].body)) if part.name in views else []
        if K.same_events(kev, vev):
            continue
        i = next((i for i, (a, b) in enumerate(zip(kev, vev))
                  if (a.verb, a.handle.pipe) != (b.verb, b.pipe)), min(len(kev), len(vev)))
        event = kev[i] if i < len(kev) else kev[-1] if kev else None
        where = _enclosing_if(part.body, event) if event is not None else None
        loc = where.loc if where is not None else part.loc
        raise TleError(f"the pipe events of partition '{part.name}' depend on an `if` whose "
                       f"condition the verifier reads as a constant computed through a name "
                       f"bound more than once, an augmented assignment or a tuple item, which "
                       f"the kernel IR does not fold: write the condition on constexprs (or on "
                       f"a name bound once)", loc, check="constexpr-if")


def _enclosing_if(body: tuple, event: K.Event) -> Optional[K.If]:
    """The innermost `if` of ``body`` whose branches hold ``event``."""
    found = None
    for st in K.walk_stmts(body):
        if isinstance(st, K.If) and any(e is event for e in K.events(st.then + st.orelse)):
            found = st  # statements are walked outer first: the last one is the innermost
    return found


def _stamp(path: str) -> Optional[tuple[int, int]]:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


_READINGS: "OrderedDict[tuple, _Reading]" = OrderedDict()
_CACHE_SIZE = 64


def _reading(text: str, path: str, name: Optional[str]) -> _Reading:
    key = (path, os.getcwd() if not os.path.isabs(path) else "", text, name)
    hit = _READINGS.get(key)
    if hit is not None and hit.fresh():
        _READINGS.move_to_end(key)
        return hit
    try:
        r = _Reading(build(path, name, text=text), path, text, name)
    except CapacityOfConstexprs as e:
        r = _Reading(None, path, text, name, pending=e)
    _READINGS[key] = r
    while len(_READINGS) > _CACHE_SIZE:
        _READINGS.popitem(last=False)
    return r


def _kernel_info(built: Built, fdef: ast.FunctionDef, kern: K.Kernel, path: str,
                 bind: Optional[dict]) -> KernelInfo:
    """The KernelInfo of one built kernel: its protocol view (protocol.analyse) and what the
    lowering reads besides it."""
    a = analyse(kern, built.sources(), bind, trees=built.trees())
    calls = {(n.lineno, n.col_offset + 1): n for n in ast.walk(fdef) if isinstance(n, ast.Call)}
    pipes = {}
    for pname, info in a.pipes.items():
        info.node = calls.get((info.decl.loc.line, info.decl.loc.column))
        pipes[pname] = info
    functions = {s.name: s for s in built.module.tree.body if isinstance(s, ast.FunctionDef)}
    infos = [PartitionInfo(part.name, part.name,
                           functions.get(part.name) if part.loc.file == path else None,
                           a.bindings[part.name], part.warps, part.regs, part.default, part.loc)
             for part in kern.partitions]
    return KernelInfo(kern.name, a.program, fdef, path, kern.num_warps, dict(kern.options),
                      tuple(p.name for p in kern.params),
                      tuple(p.name for p in kern.params if p.constexpr), pipes, tuple(infos),
                      {b.name: SharedBuffer(tuple(b.shape), b.dtype) for b in kern.buffers},
                      dict(built.module.scope.constants), a.values, a.param_args, a.assumptions,
                      kir=kern, budgets=built.budget_exprs.get(kern.name))


# ----------------------------------------------------------------------------------------------
# entry points


def kernels_of_source(text: str, path: str, name: Optional[str] = None,
                      bind: Optional[dict] = None) -> list[KernelInfo]:
    """The KernelInfos of the kernels of ``text`` (located at ``path``); see :func:`read_kernels`."""
    return _reading(text, path, name).kernel_infos(bind)


def read_kir(path: PathLike, text: Optional[str] = None, name: Optional[str] = None
             ) -> list[K.Kernel]:
    """The kernel IR of the kernels of a Python file (or of ``text``, located at ``path``): the
    objects :func:`read_kernels` of the same arguments carries in ``KernelInfo.kir``, whatever
    constexpr binding it reads them with."""
    p = os.fspath(path)
    reading = _reading(_read_text(p) if text is None else text, p, name)
    return [k for _, k in reading.generic().kernels]


def kernel_signature(path: PathLike, name: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(arguments, constexpr arguments) of the @tle.jit function ``name`` of a file, from its
    ``def`` alone: what a launch needs before the kernel can be read specialised."""
    p = os.fspath(path)
    tree = parse(_read_text(p), p)
    scope = ModuleScope(tree, p)
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name == name and jit_decorator(scope, stmt):
            params = kernel_params(scope, stmt)
            return tuple(p.arg for p, _ in params), tuple(p.arg for p, cx in params if cx)
    raise TleError(f"{p}: no @tle.jit function named '{name}'", Loc(p, 0), check="no-kernel")


def read_source(text: str, path: str = "<input>") -> Module:
    """The Pipe IR of the kernels in ``text`` (``path`` names it in locations)."""
    return Module(tuple(k.program for k in kernels_of_source(text, path)), path)


def read_file(path: PathLike) -> Module:
    """The Pipe IR of the kernels of a Python file."""
    p = os.fspath(path)
    return read_source(_read_text(p), p)


def read_kernels(path: PathLike, text: Optional[str] = None, name: Optional[str] = None,
                 bind: Optional[dict] = None) -> list[KernelInfo]:
    """The kernels of a Python file (or of ``text``, located at ``path``) with everything the
    frontend learned about them; ``name`` reads only the kernel(s) of that name. ``bind``: values
    of integer constexpr arguments to read the kernel *specialised* to (they become constants,
    not params; the protocol is then verified for those values only)."""
    p = os.fspath(path)
    return kernels_of_source(_read_text(p) if text is None else text, p, name, bind)


__all__ = ["read_file", "read_source", "read_kernels", "read_kir", "kernels_of_source",
           "kernel_signature", "SPECIALIZABLE", "KernelInfo", "PartitionInfo", "PipeInfo",
           "FieldSpec"]
