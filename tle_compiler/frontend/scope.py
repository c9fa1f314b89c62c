"""The module scope of a kernel file: imports (which names are tle / triton / gluon), module-level
integer constants, dtype constants, and functions.

Names are resolved to canonical dotted paths: ``tle_compiler.pipe``, ``tle_compiler.jit``,
``tle_compiler.gpu.alloc``, ``tl.range`` (triton.language), ``gl.static_range`` (Gluon's language).
"""

from __future__ import annotations

import ast
from typing import Optional

from ..ir.big_ints import ArithmeticRefusal, PythonRaises, int_op
from ..ir.nodes import Loc
from ..ir.expr import c_div, c_rem
from ..language.gpu import normalize_dtype
from .parsed import per_tree

_CANON = (
    ("tle_compiler.language.gpu", "tle_compiler.gpu"),
    ("tle_compiler.language.assume.assume", "tle_compiler.assume"),
    # the package's attribute `assume` is the function (language/__init__.py imports it over the
    # submodule's name), and so is what `from tle_compiler.language import assume` and `import
    # tle_compiler.language.assume as A` bind (Python 3.7+ takes the attribute): tle.assume. It
    # was an unknown call, the assumption dropped from the verdict and the lowering refusing it
    ("tle_compiler.language.assume", "tle_compiler.assume"),
    ("tle_compiler.language.pipe.pipe", "tle_compiler.pipe"),
    ("tle_compiler.language.pipe", "tle_compiler.language.pipe"),
    ("tle_compiler.jit.jit", "tle_compiler.jit"),
    ("triton.experimental.gluon.language", "gl"),
    ("triton.language", "tl"),
)

#: Names that mean a module when the file neither imports nor defines them: none. Python binds
#: `tle`, `tl` and `gl` only through the file's imports, so a kernel module without `import
#: tle_compiler as tle` raises NameError at `@tle.jit`, and a helper module without `import
#: triton.language as tl` makes Triton raise NameError when it compiles the helper; both were
#: read as if imported (and verified). Such a name is now unknown, as Python finds it.
DEFAULT_ALIASES: dict[str, str] = {}


def canon(path: str) -> str:
    for old, new in _CANON:
        if path == old or path.startswith(old + "."):
            return new + path[len(old):]
    return path


def is_triton(path: str) -> bool:
    return path.split(".")[0] in ("tl", "gl", "triton")


def attr_name(path: str) -> str:
    return path.rsplit(".", 1)[-1]


#: Python's integer operators by their operator names (ir/big_ints.int_op computes them)
_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Mod: "%",
           ast.LShift: "<<", ast.RShift: ">>", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^",
           ast.Pow: "**"}


#: ``//`` and ``%`` on runtime integers: Triton emits ``arith.divsi`` / ``arith.remsi`` (C's
#: truncating division; the remainder has the dividend's sign), not Python's floor operations.
_C_BINOPS = {ast.FloorDiv: c_div, ast.Mod: c_rem}


def fold_int(op: ast.operator, a: int, b: int, runtime: bool = False) -> Optional[int]:
    """``a op b`` on integers, None when undefined (division by zero, negative shift, ...);
    Python's (ir/big_ints.int_op: wider than MAX_BITS raises NumberTooWide, a negative shift
    count or a division by zero PythonRaises). ``runtime``: an
    operand is a runtime integer in Triton, so ``//`` and ``%`` are C's."""
    if runtime and isinstance(op, (ast.FloorDiv, ast.Mod)):
        return _C_BINOPS[type(op)](a, b) if b != 0 else None
    if runtime and isinstance(op, ast.Pow) and b > 64:
        return None
    name = _BINOPS.get(type(op))
    if name is None:
        return None
    try:
        return int_op(name, a, b)
    except PythonRaises:
        if runtime:  # a tensor's shift by a negative count: no Python number, no refusal here
            return None
        raise


#: Module-level statements whose bindings depend on what runs (a branch taken, a loop's last
#: item, a pattern matched, an exception): no name they bind is a reliable constant.
_CONTROL_FLOW = (ast.If, ast.Try, ast.With, ast.For, ast.While, ast.Match, ast.AsyncFor,
                 ast.AsyncWith) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())


@per_tree
def rebound_elsewhere(tree: ast.Module) -> frozenset[str]:
    """Module-level names that Python binds other than by a module-level statement binding them
    by name: names a function declares ``global`` (its assignments rebind the module's name when
    it runs), names an assignment expression (``(T := 5)``) binds at module level (in a
    statement, a default argument or a decorator, not inside a function or lambda body), and
    names stored through ``globals()['T'] = ...``."""
    out: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Global):
            out.update(n.names)
        elif isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Call) \
                        and isinstance(t.value.func, ast.Name) \
                        and t.value.func.id in ("globals", "vars") \
                        and isinstance(t.slice, ast.Constant) and isinstance(t.slice.value, str):
                    out.add(t.slice.value)
    out |= mutated_in_place(tree)
    todo: list[ast.AST] = list(tree.body)
    while todo:
        n = todo.pop()
        if isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name):
            out.add(n.target.id)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            # the defaults, annotations and decorators run at module level, the body does not
            todo.extend(n.decorator_list)
            todo.extend(d for d in n.args.defaults + n.args.kw_defaults if d is not None)
            continue
        if isinstance(n, ast.Lambda):
            todo.extend(d for d in n.args.defaults + n.args.kw_defaults if d is not None)
            continue
        todo.extend(ast.iter_child_nodes(n))
    return out


_NAMESPACES = ("globals", "vars", "locals")


def _function_locals(fn: ast.AST) -> frozenset:
    """The names local to function (or lambda) ``fn``: its parameters and the names its own
    body binds (not a nested function's), less those it declares ``global``."""
    a = fn.args
    names = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs}
    names.update(x.arg for x in (a.vararg, a.kwarg) if x is not None)
    declared: set[str] = set()
    todo = list(fn.body) if isinstance(fn.body, list) else [fn.body]
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Global):
            declared.update(n.names)
        elif isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            names.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(n.name)
            todo.extend(getattr(n, "decorator_list", []))
            continue  # its body has locals of its own
        elif isinstance(n, ast.Lambda):
            continue
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            names.update((x.asname or x.name).split(".")[0] for x in n.names)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            names.add(n.name)
        todo.extend(ast.iter_child_nodes(n))
    return frozenset(names - declared)


def walk_with_locals(tree: ast.AST):
    """Every node of ``tree`` with the names local to the function it stands in (empty at
    module level, and in a class body): a store through such a name (`self.C = 3`, a
    parameter `C` of the function) changes no module-level value."""
    todo: list[tuple[ast.AST, frozenset]] = [(tree, frozenset())]
    while todo:
        n, local = todo.pop()
        yield n, local
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            inner = _function_locals(n)
            for c in ast.iter_child_nodes(n):
                # decorators, defaults and annotations run in the enclosing scope
                in_body = c in (n.body if isinstance(n.body, list) else [n.body])
                todo.append((c, inner if in_body else local))
            continue
        todo.extend((c, local) for c in ast.iter_child_nodes(n))


def _chain_base(node: ast.expr) -> tuple[Optional[str], bool]:
    """The name at the bottom of ``a.b[0].c`` (``a``), and whether the chain is a plain dotted
    name (``a.b.c``, no subscript or call on the way)."""
    dotted = True
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        if not isinstance(node, ast.Attribute):
            dotted = False
        node = node.func if isinstance(node, ast.Call) else node.value
    return (node.id if isinstance(node, ast.Name) else None), dotted


def _code_bindings(code: str, mode: str) -> set[str]:
    """Every name the code of an ``exec`` / ``eval`` string may bind in the module it runs in
    (assignments, defs, classes, imports, ``global`` names, and what it rebinds itself)."""
    try:
        tree = ast.parse(code, mode=mode)
    except SyntaxError:
        return set()  # Python raises it at the import
    out: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            out.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in n.names)
        elif isinstance(n, ast.Global):
            out.update(n.names)
    if isinstance(tree, ast.Module):
        out |= rebound_elsewhere(tree)
    return out


def _namespace_writes(call: ast.Call) -> Optional[set[str]]:
    """The names a method call on ``globals()`` (``vars()``, ``locals()``) writes, when the call
    spells them: ``update(C=3)`` or ``update({"C": 3})``, ``setdefault("C", 3)``, ``pop("C")``,
    ``__setitem__("C", 3)``, ``__delitem__("C")``; none for ``get``, ``keys``, ``items``,
    ``values``, ``copy``, ``__getitem__`` and ``__contains__``; None when it cannot be told."""
    method = call.func.attr
    if method in ("get", "keys", "items", "values", "copy", "__getitem__", "__contains__"):
        return set()
    if method == "update":
        out = {k.arg for k in call.keywords if k.arg is not None}
        if any(k.arg is None for k in call.keywords):
            return None
        for a in call.args:
            if not isinstance(a, ast.Dict) or not all(
                    isinstance(k, ast.Constant) and isinstance(k.value, str) for k in a.keys):
                return None
            out.update(k.value for k in a.keys)
        return out
    if method in ("setdefault", "pop", "__setitem__", "__delitem__") and call.args \
            and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str):
        return {call.args[0].value}
    return None


@per_tree
def mutated_in_place(tree: ast.Module) -> frozenset[str]:
    """Module-level names whose value Python may change without a statement of the module
    binding them by name, so that a kernel launched after the import reads another value than
    the frontend's reading of the module's statements (each was verified with the value the
    statements give while the launch's Python holds another):
    - the object a name holds, changed through an attribute or item (``C.value = 3`` of a
      ``C = tl.constexpr(2)``, ``setattr(C, "value", 3)``, ``C.__init__(3)``,
      ``C.__dict__["value"] = 3``, ``del C.value``); an imported module's attribute store
      (``common.STEP = 8``) is left to the builder's ``stored_from_outside``, which names the
      module it reaches;
    - an attribute stored through something that is no dotted name (``sys.modules[__name__].C
      = 3``, ``setattr(importlib.import_module(m), "C", 3)``): the attribute's name, since the
      object may be this module;
    - names an ``exec`` / ``eval`` of a constant string binds (``exec("C = 3")``; code that is
      no constant, or that may make a kernel, is refused by kernel.string_code_call);
    - every name the module assigns or defines, where the module's namespace itself escapes
      (``globals().update(C=3)``, ``g = globals()``, ``locals()["C"] = 3``, a frame's
      ``f_globals``, ``__dict__``, ``sys.modules``): where it is changed is not known.
      (``globals()["C"] = ...`` with a constant key names its name.)
    Function bodies count: one may run at import, or before a launch."""
    imported: set[str] = set()
    assigned: set[str] = set()
    for st in tree.body:
        if isinstance(st, (ast.Import, ast.ImportFrom)):
            imported.update((a.asname or a.name).split(".")[0] for a in st.names)
        elif isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            assigned.add(st.name)
        for n in ast.walk(st):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                assigned.add(n.id)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                break
    out: set[str] = set()
    escaped = False
    # the namespace calls whose use is a read or a constant-keyed store (handled by
    # rebound_elsewhere): `globals()["C"]`, `globals()["C"] = ...`, `del globals()["C"]`
    plain: set[int] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Call) \
                and isinstance(n.value.func, ast.Name) and n.value.func.id in _NAMESPACES \
                and not n.value.args and not n.value.keywords:
            if isinstance(n.ctx, ast.Load):
                plain.add(id(n.value))
            elif isinstance(n.slice, ast.Constant) and isinstance(n.slice.value, str):
                plain.add(id(n.value))
                out.add(n.slice.value)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) \
                and isinstance(n.func.value, ast.Call) \
                and isinstance(n.func.value.func, ast.Name) \
                and n.func.value.func.id in _NAMESPACES and not n.func.value.args:
            # globals().update(C=3), .setdefault("C", 3), .pop("C"): the names it writes, when
            # they are written out; .get / .keys / .items / .copy read
            names = _namespace_writes(n)
            if names is not None:
                plain.add(id(n.func.value))
                out |= names
    for n, local in walk_with_locals(tree):
        target = None
        if isinstance(n, (ast.Attribute, ast.Subscript)) and isinstance(n.ctx, (ast.Store,
                                                                                   ast.Del)):
            target = n
        elif isinstance(n, ast.Call):
            f = n.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(
                f, ast.Attribute) else None
            if isinstance(f, ast.Name) and name in _NAMESPACES and id(n) not in plain:
                escaped = True
            elif name in ("setattr", "delattr", "__setattr__", "__delattr__") and n.args \
                    and not (isinstance(f, ast.Attribute) and len(n.args) < 2):
                # setattr(X, "a", v), object.__setattr__(X, "a", v); X.__setattr__("a", v)
                obj = n.args[0] if isinstance(f, ast.Name) or len(n.args) >= 3 or \
                    name in ("__delattr__",) and len(n.args) >= 2 else f.value
                base, dotted = _chain_base(obj)
                if base in local:
                    continue
                if base is not None and (base not in imported or not dotted):
                    out.add(base)
                attr = n.args[1] if obj is n.args[0] and len(n.args) > 1 else n.args[0]
                if not dotted and isinstance(attr, ast.Constant) and isinstance(attr.value,
                                                                                 str):
                    out.add(attr.value)
            elif isinstance(f, ast.Attribute) and f.attr.startswith("__") \
                    and f.attr.endswith("__"):
                base, _ = _chain_base(f.value)  # C.__init__(3), C.__dict__.update(...)
                if base is not None and base not in imported and base not in local:
                    out.add(base)
            elif isinstance(f, ast.Name) and f.id in ("exec", "eval") and n.args \
                    and isinstance(n.args[0], ast.Constant) and isinstance(n.args[0].value,
                                                                           str):
                out |= _code_bindings(n.args[0].value, "exec" if f.id == "exec" else "eval")
        if target is None:
            continue
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Call) \
                and id(target.value) in plain:
            continue
        base, dotted = _chain_base(target.value)
        if base is None:
            # reached through a literal or a call (`[C][0].value = 3`, `f(C).value = 3`):
            # every module-level name in it may be the object changed
            out.update(x.id for x in ast.walk(target.value) if isinstance(x, ast.Name)
                       and x.id not in local and x.id not in imported)
            continue
        if base in _NAMESPACES or base in local:
            continue
        if base not in imported or not dotted:
            out.add(base)
        if isinstance(target, ast.Attribute) and (base not in imported or not dotted):
            # sys.modules[__name__].C = 3, or M.C = 3 with M bound to a module object found
            # at run time: the object may be this module
            out.add(target.attr)
    # the module's namespace reached through its frame, its module object's __dict__ or
    # sys.modules: where a name is changed is not known
    # (`self.__dict__` in a method, a name local to its function, reaches no module)
    escaped = escaped or any(
        isinstance(n, ast.Attribute) and (n.attr in ("f_globals", "_getframe", "currentframe")
                                          or n.attr == "__dict__"
                                          and _chain_base(n.value)[0] not in local
                                          or n.attr == "modules" and _chain_base(n.value)[0]
                                          == "sys")
        for n, local in walk_with_locals(tree))
    if escaped:
        out |= assigned
    return out


@per_tree
def matched_names(tree: ast.Module) -> frozenset[str]:
    """Names a module-level ``match`` statement binds (captures, ``*rest``, ``**rest``)."""
    out: set[str] = set()
    for st in tree.body:
        if isinstance(st, ast.Match):
            for n in ast.walk(st):
                if isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
                    out.add(n.name)
                elif isinstance(n, ast.MatchMapping) and n.rest:
                    out.add(n.rest)
    return out


class ModuleScope:
    """Everything module-level the frontend needs from one file."""

    def __init__(self, tree: ast.Module, path: str, rebound: Optional[set[str]] = None):
        self.tree = tree
        self.path = path
        self.aliases: dict[str, str] = {}
        self.constants: dict[str, int] = {}
        #: the constants bound to a bool (``F = tl.constexpr(True)``): :attr:`constants` holds
        #: them as 0 / 1, the frontend's folding reads them so; the kernel's module constants
        #: keep the bool (build_support.Module), as Triton holds it
        self.bools: set[str] = set()
        self.dtypes: dict[str, str] = {}
        self.functions: dict[str, ast.FunctionDef] = {}
        self.other: set[str] = set()  # other module-level names (shadow default aliases)
        #: names whose last module-level binding is a call (``myjit = tle.jit(num_warps=8)``)
        self.calls: dict[str, ast.Call] = {}
        #: what each of the ``other`` names is last bound to by a module-level assignment
        self.bound_to: dict[str, ast.expr] = {}
        self._root: "ModuleScope" = self
        self._at: dict[int, "ModuleScope"] = {}
        for stmt in tree.body:
            self._scan(stmt)
        # Bindings the statement-by-statement scan does not see as module-level assignments:
        # Python rebinds these names too, so none of them is a constant the kernel can read.
        self.rebound = (rebound_elsewhere(tree) | matched_names(tree)) if rebound is None \
            else set(rebound)
        for name in self.rebound:
            self._bind_other(name)

    # -- scanning ---------------------------------------------------------------------------
    def at(self, line: int) -> "ModuleScope":
        """The module's names as the statements ending before ``line`` bind them: what Python
        reads where it evaluates an expression of that line at import (a decorator, or the call
        a decorator name is bound to), whereas the kernel body reads the last bindings."""
        root = self._root
        if line not in root._at:
            body = [st for st in root.tree.body if (st.end_lineno or st.lineno) < line]
            # the names the whole module rebinds elsewhere (a function's `global`, a walrus, a
            # match): none is a constant or alias here either (walking the tree again for each
            # line cost a tenth of a large file's reading)
            sub = ModuleScope(ast.Module(body=body, type_ignores=[]), root.path, root.rebound)
            sub._root = root
            root._at[line] = sub
        return root._at[line]

    def _bind_other(self, name: str) -> None:
        self.calls.pop(name, None)
        self.bound_to.pop(name, None)
        self.constants.pop(name, None)
        self.bools.discard(name)
        self.dtypes.pop(name, None)
        self.functions.pop(name, None)
        self.aliases.pop(name, None)
        self.other.add(name)

    def _scan(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.Import):
            for a in stmt.names:
                if a.asname:
                    self._bind_other(a.asname)
                    self.aliases[a.asname] = canon(a.name)
                else:
                    top = a.name.split(".")[0]
                    self._bind_other(top)
                    self.aliases[top] = canon(top)
        elif isinstance(stmt, ast.ImportFrom):
            if stmt.level or not stmt.module:
                for a in stmt.names:
                    self._bind_other(a.asname or a.name)
                return
            for a in stmt.names:
                local = a.asname or a.name
                self._bind_other(local)
                self.aliases[local] = canon(f"{stmt.module}.{a.name}")
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self._bind_other(stmt.name)
            self.other.discard(stmt.name)
            if isinstance(stmt, ast.FunctionDef):
                self.functions[stmt.name] = stmt
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            value = stmt.value
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            if len(names) != len(targets) or value is None:
                for t in targets:
                    for n in ast.walk(t):
                        if isinstance(n, ast.Name):
                            self._bind_other(n.id)
                return
            c = self.const_int(value)
            d = self.dtype_of(value) if c is None else None
            # `myjit = tle.jit`, `T = tle_compiler`: the name is bound to what the dotted path of
            # an imported module names, as an import would bind it, so it resolves to the same
            # path (`@myjit` is `@tle.jit`: Python makes the def a kernel, which was left out)
            a = self.module_path(value) if c is None and d is None and isinstance(
                value, (ast.Name, ast.Attribute)) else None
            for n in names:
                self._bind_other(n)
                self.other.discard(n)
                if c is not None:
                    self.constants[n] = c
                    if self.is_bool(value):
                        self.bools.add(n)
                elif d is not None:
                    self.dtypes[n] = d
                elif a is not None:
                    self.aliases[n] = a
                else:
                    self.other.add(n)
                    self.bound_to[n] = value
                    if isinstance(value, ast.Call):
                        self.calls[n] = value
        elif isinstance(stmt, ast.AugAssign):
            # `STEP += 1` rebinds STEP: its new value when both sides are integer constants,
            # else no constant the kernel can read (it read the value before, then)
            if not isinstance(stmt.target, ast.Name):
                return
            name = stmt.target.id
            old, c = self.constants.get(name), self.const_int(stmt.value)
            new = fold_int(stmt.op, old, c) if old is not None and c is not None else None
            self._bind_other(name)
            if new is not None:
                self.other.discard(name)
                self.constants[name] = new
        elif isinstance(stmt, ast.Delete):
            for t in stmt.targets:
                if isinstance(t, ast.Name):
                    self._bind_other(t.id)
        elif isinstance(stmt, ast.ClassDef):
            self._bind_other(stmt.name)
        elif isinstance(stmt, _CONTROL_FLOW):
            # Module-level control flow: names bound there are not reliable constants.
            for n in ast.walk(stmt):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                    self._bind_other(n.id)
                elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    self._bind_other(n.name)
            # (a match statement's captures: ``matched_names``, bound as other after the scan)

    # -- resolution ---------------------------------------------------------------------------
    def module_path(self, node: ast.expr) -> Optional[str]:
        """Canonical dotted path of ``a.b.c`` when ``a`` is an imported module or name (or a
        default alias such as ``tl``), else None."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        base = self.alias(node.id)
        if base is None:
            return None
        return canon(".".join([base] + parts[::-1]))

    def alias(self, name: str) -> Optional[str]:
        if name in self.aliases:
            return self.aliases[name]
        if name in self.other or name in self.constants or name in self.functions:
            return None
        return DEFAULT_ALIASES.get(name)

    def const_int(self, node: ast.expr, local: Optional[dict[str, int]] = None) -> Optional[int]:
        """The value of an integer constant expression over literals and module constants
        (``64``, ``BK * 2``, ``tl.constexpr(64)``), else None."""
        if isinstance(node, ast.Constant):
            v = node.value
            if isinstance(v, bool):
                return int(v)
            return v if isinstance(v, int) else None
        if isinstance(node, ast.Name):
            if local is not None and node.id in local:
                return local[node.id]
            return self.constants.get(node.id)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = self.const_int(node.operand, local)
            if v is None:
                return None
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.BinOp):
            a, b = self.const_int(node.left, local), self.const_int(node.right, local)
            if a is None or b is None:
                return None
            try:
                return fold_int(node.op, a, b)
            except PythonRaises:
                return None  # Python cannot import the module: refused where it is read
            except ArithmeticRefusal as wide:
                raise wide.at(Loc(self.path, node.lineno)) from None
        if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
            path = self.module_path(node.func)
            if path in ("tl.constexpr", "gl.constexpr"):
                return self.const_int(node.args[0], local)
        return None

    def is_bool(self, node: ast.expr) -> bool:
        """Whether ``node``, a constant :meth:`const_int` reads, is a Python bool (``True``,
        ``tl.constexpr(False)``, a module constant bound to one): Triton holds it as a bool,
        which ``to_tensor`` makes an i1 tensor (an int an i32 one; lowering round 21)."""
        if isinstance(node, ast.Constant):
            return isinstance(node.value, bool)
        if isinstance(node, ast.Name):
            return node.id in self.bools
        if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
            return self.module_path(node.func) in ("tl.constexpr", "gl.constexpr") \
                and self.is_bool(node.args[0])
        return False

    def dtype_of(self, node: ast.expr) -> Optional[str]:
        """Triton's name of a dtype written ``tl.bfloat16``, ``"bf16"`` or a module constant."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return normalize_dtype(node.value)
        if isinstance(node, ast.Name) and node.id in self.dtypes:
            return self.dtypes[node.id]
        path = self.module_path(node)
        if path and path.split(".")[0] in ("tl", "gl"):
            return normalize_dtype(attr_name(path))
        return None

    def is_tle(self, node: ast.expr, what: str) -> bool:
        """Whether ``node`` names ``tle_compiler.<what>``."""
        return self.module_path(node) == f"tle_compiler.{what}"


@per_tree
def module_scope(tree: ast.Module, path: str) -> ModuleScope:
    """The ModuleScope of a parsed file, made once per tree (parsed.py: the readings of one
    file share its tree; a ModuleScope is not changed once made, :meth:`ModuleScope.at` only
    caches)."""
    return ModuleScope(tree, path)
