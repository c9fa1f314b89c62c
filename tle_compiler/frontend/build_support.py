"""What the KIR builder (:mod:`.build`) works with: the Python modules it reads
(:class:`Module`, :class:`ModuleCache`), compile-time values (:class:`Static`), the frames
of inlined helpers (:class:`Frame`), the tables of Python and Triton calls it knows, and
small tests on KIR expressions and Python statements."""

from __future__ import annotations

import ast
import dataclasses
import os
import weakref
from dataclasses import dataclass, field
from typing import Optional, Union

from ..diagnostics import TleError
from ..ir import kernel as K
from ..ir.nodes import Loc
from ..ir.record import record
from .config_literal import encode_config
from .folding import fold
from .import_order import bound_names, parse_python
from .library_names import import_as_attribute, missing_import
from .local_tensors import covers
from .modules import find_module, in_folder, is_library, relative_folder, shown, submodule
from .parsed import per_tree
from .scope import module_scope, walk_with_locals
from .source_text import read_python
from .triton_rules import TritonRules


BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
           ast.Mod: "%", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<",
           ast.RShift: ">>", ast.Pow: "**"}
CMPOPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
UNOPS = {ast.USub: "-", ast.UAdd: "+", ast.Not: "not", ast.Invert: "~"}
#: Library calls that access memory: beside an atomic in one statement, that statement is
#: built in sequential form (Builder._calls_helper).
MEMORY_CALLS = frozenset({"tl.load", "tl.store"})
#: Library calls that compute a value without touching memory or synchronising.
PURE_CALLS = frozenset(
    f"{lib}.{name}" for lib in ("tl", "gl") for name in (
        "arange", "zeros", "zeros_like", "full", "where", "exp", "exp2", "log", "log2", "sqrt",
        "rsqrt", "abs", "maximum", "minimum", "max", "min", "sum", "argmax", "argmin", "fma",
        "broadcast_to", "broadcast", "reshape", "view", "expand_dims", "trans", "permute",
        "cdiv", "program_id", "num_programs", "multiple_of", "max_contiguous", "max_constancy",
        "cast",
        "constexpr", "static_assert", "split", "join", "clamp", "floor", "ceil", "sigmoid",
        "softmax", "static_range", "range")
) | {"builtins.range", "builtins.int", "builtins.float", "builtins.min", "builtins.max",
     "builtins.len", "tle_compiler.gpu.local_ptr", "tle_compiler.gpu.scale_rows"}
#: Methods of a tile that compute a value.
PURE_METHODS = frozenset({"to", "reshape", "broadcast_to", "trans", "permute", "expand_dims"})
#: The names Triton 3.6's code generator reads from its builtin namespace
#: (code_generator.builtin_namespace), through a module-level binding of the name too.
#: Python's builtins a kernel's module-level name may read (Builder.module_name)
PYTHON_BUILTINS = ("range", "int", "float", "min", "max", "len", "print", "abs")

TRITON_BUILTIN_NAMES = frozenset({"len", "list", "range", "float", "int", "isinstance", "getattr",
                                  "hasattr", "print", "min", "max"})

RANGES = {"builtins.range": False, "tl.range": False, "tl.static_range": True, "gl.range": False,
          "gl.static_range": True}
#: The parameters of tl.range / tl.static_range (Triton 3.6), in positional order.
TL_RANGE_ARGS = ("arg1", "arg2", "step", "num_stages", "loop_unroll_factor",
                 "disallow_acc_multi_buffer", "flatten", "warp_specialize", "disable_licm")
STATIC_RANGE_ARGS = ("arg1", "arg2", "step")
#: tl.range's loop options and their defaults.
TL_RANGE_OPTIONS = {"num_stages": None, "loop_unroll_factor": None,
                    "disallow_acc_multi_buffer": False, "flatten": False, "warp_specialize": False,
                    "disable_licm": False}
VERBS = ("acquire", "commit", "close", "wait", "release")
#: Functions of the host package ``triton`` a kernel may call on compile-time numbers (Triton 3.6
#: runs them as Python when it compiles the kernel): name -> their parameters, in order.
HOST_FUNCTIONS = {"triton.cdiv": ("x", "y"), "triton.next_power_of_2": ("n",)}


def host_value(path: str, values: list) -> int:
    """The value of the host function ``path`` (HOST_FUNCTIONS) at Python integers, as
    triton/__init__.py computes it (ZeroDivisionError for a zero divisor)."""
    if path == "triton.cdiv":
        x, y = values
        return (x + y - 1) // y
    n = values[0] - 1
    for shift in (1, 2, 4, 8, 16, 32):
        n |= n >> shift
    return n + 1


# ----------------------------------------------------------------------------------------------
# modules


class Module:
    """One parsed Python file: its scope (imports, integer constants, dtypes, functions), its
    float constants, the user modules it imports (found now, read lazily, by file), and its other
    module-level assignments (``STEP = common.STEP``, ``B = common.A * 2``: evaluated when a
    kernel reads the name, :meth:`Builder.module_assign`).

    Each table holds a name only when its *last* module-level binding is of that kind (Python's
    rule: ``X = 1`` then ``from .common import X`` is the imported X). A star import, a missing
    user module, and an import of a library name that is not found are errors at their line."""

    def __init__(self, path: str, cache: "ModuleCache", text: Optional[str] = None):
        self.path = path
        self.cache = cache
        if text is None:
            try:
                text = read_python(path)
            except (SyntaxError, UnicodeDecodeError) as e:
                # a module that is no text Python reads (bytes that are not text in its
                # encoding, a coding declaration Python refuses): Python cannot import it
                why = (f"(unicode error) {e}" if isinstance(e, UnicodeDecodeError) else e.msg)
                line = e.lineno if isinstance(e, SyntaxError) else None
                raise TleError(f"syntax error: {why}", Loc(path, line or 1, 1),
                               check="syntax") from None
        self.text = text
        self.tree = parse_python(text, path)
        self.scope = module_scope(self.tree, path)
        self._locals: Optional[frozenset] = None
        # (a bool constant as the bool it is: Triton's to_tensor of it is an i1 tensor, of
        # 1 an i32 one, so `x = F` then `t + x` of an int8 tile added in i32, lowering round 21)
        self.consts: dict[str, Union[int, float]] = {
            n: bool(v) if n in self.scope.bools else v for n, v in self.scope.constants.items()}
        #: local name -> (module file, imported name or None for the module itself, import line)
        self.imports: dict[str, tuple[str, Optional[str], Loc]] = {}
        #: module-level ``NAME = expr`` that is no literal constant or dtype: evaluated on use
        self.assigns: dict[str, ast.expr] = {}
        #: the evaluated :attr:`assigns` (Builder.module_assign)
        self.resolved: dict[str, tuple] = {}
        #: the ``DEFAULT_CONFIG`` literal, encoded for a KIR attribute (see :func:`encode_config`),
        #: ``("error", LINE)`` when it is no literal, None when absent
        self.default_config: Optional[tuple] = None
        floats: dict[str, float] = {}
        #: name -> the first lines of the module-level statements that bind it
        self.bound_lines: dict[str, list[int]] = {}
        for st in self.tree.body:
            for n in bound_names(st):  # a rebinding ends every earlier meaning of the name
                self.bound_lines.setdefault(n, []).append(st.lineno)
                self.imports.pop(n, None)
                self.assigns.pop(n, None)
                floats.pop(n, None)
            loc = Loc(path, st.lineno, st.col_offset + 1)
            # (`DEFAULT_CONFIG: dict = {...}` binds it too, as tle-dump's readers of the
            # literal take it: read as no config, its constexprs were missing here alone)
            if (isinstance(st, ast.Assign) and any(isinstance(t, ast.Name) and
                                                   t.id == "DEFAULT_CONFIG" for t in st.targets)) \
                    or (isinstance(st, ast.AnnAssign) and st.value is not None
                        and isinstance(st.target, ast.Name) and st.target.id == "DEFAULT_CONFIG"):
                try:
                    self.default_config = encode_config(ast.literal_eval(st.value))
                except (ValueError, TypeError):
                    self.default_config = ("error", st.lineno)
            if isinstance(st, (ast.Assign, ast.AnnAssign)):
                targets = st.targets if isinstance(st, ast.Assign) else [st.target]
                if len(targets) != 1 or not isinstance(targets[0], ast.Name) or st.value is None:
                    continue
                name = targets[0].id
                if name in self.scope.constants or name in self.scope.dtypes:
                    continue
                v = self._const_float(st.value)
                if v is not None:
                    floats[name] = v
                elif name != "DEFAULT_CONFIG":
                    self.assigns[name] = st.value
            elif isinstance(st, ast.ImportFrom):
                self._import_from(st, loc)
            elif isinstance(st, ast.Import):
                for a in st.names:
                    # a library module that does not exist (`import tle_compiler.gpu`): Python
                    # raises at the import, so no kernel of this module runs (library_names.py)
                    why = missing_import(a.name)
                    if why is not None:
                        raise TleError(f"`import {a.name}`: {why}", loc, check="bad-import")
                    hit = import_as_attribute(a.name, a.asname, self.tree) if a.asname else None
                    if hit is not None:
                        raise TleError(hit[1], loc_of(path, hit[0]), check="unknown-name")
                    f = find_module(a.name, 0, path)
                    if f is None:
                        self._not_found(a.name, 0, loc)
                        continue
                    cache.imported.add(f)
                    if a.asname:  # `import pkg.common as c`: c is pkg.common
                        self.imports[a.asname] = (f, None, loc)
                        continue
                    # `import pkg.common`: pkg is bound, pkg.common imported (an attribute of pkg)
                    parts = a.name.split(".")
                    for i in range(1, len(parts)):
                        sub = find_module(".".join(parts[:i]), 0, path)
                        if sub is not None:
                            cache.imported.add(sub)
                    top = find_module(parts[0], 0, path)
                    if top is not None:
                        self.imports[parts[0]] = (top, None, loc)
        #: ``(("pkg", "common"), "STEP", loc)`` for each assignment (or ``setattr``, ``del``) in
        #: this file to an attribute of what may be an imported module
        #: (Builder.stored_from_outside)
        self.attr_stores = _attr_stores(self.tree, path)
        for n in self.scope.rebound:  # rebound where no module-level assignment shows it
            self.imports.pop(n, None)
            self.assigns.pop(n, None)
            floats.pop(n, None)
        self.consts.update(floats)

    def _import_from(self, st: ast.ImportFrom, loc: Loc) -> None:
        mod = "." * st.level + (st.module or "")
        if any(a.name == "*" for a in st.names):
            raise TleError(f"`from {mod} import *`: star imports are not supported in a kernel's "
                           f"modules (the frontend resolves every name statically); import the "
                           f"names the kernel uses, `from {mod} import a, b`, or the module",
                           loc, check="bad-import")
        if not st.level and is_library(st.module or ""):
            # library names: the scope's aliases (tl.*, tle.*); one the library does not have
            # (`from triton.language import arangee`) fails the import (library_names.py)
            why = missing_import(st.module or "", tuple(a.name for a in st.names))
            if why is not None:
                raise TleError(f"`from {mod} import ...`: {why}", loc, check="bad-import")
            return
        base = find_module(st.module or "", st.level, self.path)
        if st.level and st.module and base is None:
            self._not_found(st.module, st.level, loc)
        if base is None and not st.level:
            self._not_found(st.module or "", 0, loc)
            return
        if base is not None:
            self.cache.imported.add(base)
        for a in st.names:
            local = a.asname or a.name
            # `from . import common`: a module of the package (a folder with or without an
            # __init__.py), else a name the package's __init__.py defines
            sub = (in_folder(relative_folder(st.level, self.path), a.name)
                   if st.level and not st.module else submodule(base, a.name))
            if sub is not None:
                self.cache.imported.add(sub)
                self.imports[local] = (sub, None, loc)
            elif base is not None:
                self.imports[local] = (base, a.name, loc)
            else:
                raise TleError(f"`from {mod} import {a.name}`: no module '{a.name}' in "
                               f"{relative_folder(st.level, self.path)} (Python raises "
                               f"ImportError)", loc, check="bad-import")

    def _not_found(self, module: str, level: int, loc: Loc) -> None:
        """An import of a user module that does not exist: an error at its line (Python raises
        ModuleNotFoundError). An absolute import that is not found on sys.path is a library
        the kernel does not read (torch extensions, ...) unless its top-level package is a user
        package."""
        if level:
            folder = relative_folder(level, self.path)
            raise TleError(f"`from {'.' * level}{module} import ...`: no module '{module}' in "
                           f"{folder} (neither {module.replace('.', os.sep)}.py nor "
                           f"{os.path.join(module.replace('.', os.sep), '__init__.py')}; Python "
                           f"raises ModuleNotFoundError)", loc, check="bad-import")
        top = module.split(".")[0]
        if top != module and find_module(top, 0, self.path) is not None:
            raise TleError(f"no module named '{module}': package '{top}' "
                           f"({os.path.dirname(find_module(top, 0, self.path))}) has no module "
                           f"'{module[len(top) + 1:]}' (Python raises ModuleNotFoundError)",
                           loc, check="bad-import")

    @property
    def identifiers(self) -> frozenset:
        """Every identifier the file spells (names, parameters, functions, attributes of none):
        the builder's generated KIR names step over them."""
        return _identifiers(self.tree)

    @property
    def function_locals(self) -> frozenset:
        """The names the kernels and partition functions of the file bind as locals (their
        parameters, assignment and loop targets: the @tle.jit defs and the functions their
        warp_specialize lists name), and the file's function names. The generated Gluon spells
        these as written, so a module constant of the same name (of another module, or read by
        an inlined helper) would be the local or the function there."""
        if self._locals is None:
            fns = {d.name: d for d in self.tree.body if isinstance(d, ast.FunctionDef)}
            chosen = set()
            for d in fns.values():
                if not any(isinstance(n, ast.Call) and self.scope.is_tle(n.func,
                                                                          "gpu.warp_specialize")
                           for n in ast.walk(d)):
                    continue
                chosen.add(d.name)
                for n in ast.walk(d):
                    if isinstance(n, ast.Call) and self.scope.is_tle(n.func, "gpu.warp_specialize") \
                            and n.args and isinstance(n.args[0], (ast.List, ast.Tuple)):
                        for e in n.args[0].elts:
                            if isinstance(e, ast.Tuple) and e.elts and isinstance(e.elts[0],
                                                                                   ast.Name):
                                chosen.add(e.elts[0].id)
            out = set(fns)  # the functions the Gluon defines by these names
            for name in chosen & set(fns):
                for n in ast.walk(fns[name]):
                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                        out.add(n.id)
                    elif isinstance(n, ast.arg):
                        out.add(n.arg)
            self._locals = frozenset(out)
        return self._locals

    def defines(self, name: str) -> bool:
        """Whether the module binds ``name`` at module level (or, a package, has a submodule of
        that name that was imported)."""
        sc = self.scope
        return (name in self.consts or name in sc.dtypes or name in sc.functions
                or name in self.imports or name in self.assigns or name in sc.aliases
                or name in sc.other or self.submodule(name) is not None)

    def submodule(self, name: str) -> Optional[str]:
        """The file of submodule ``name`` of this package when some module read imports it
        (Python sets it as the package's attribute then)."""
        f = submodule(self.path, name)
        return f if f is not None and f in self.cache.imported else None

    def _const_float(self, node: ast.expr) -> Optional[float]:
        if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
            if self.scope.module_path(node.func) in ("tl.constexpr", "gl.constexpr"):
                node = node.args[0]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            v = self._const_float(node.operand)
            return -v if v is not None else None
        if isinstance(node, ast.Constant) and isinstance(node.value, float):
            return node.value
        return None


def _dotted(node: ast.expr) -> Optional[tuple[str, ...]]:
    """``("a", "b")`` for ``a.b``, None for anything but a dotted name."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return (node.id, *parts[::-1]) if isinstance(node, ast.Name) else None


def _root_name(n: ast.AST) -> Optional[str]:
    """The name a store or call node's object is reached from (`self` of `self.x[0].C = 1`,
    `X` of `setattr(X, "C", 3)` and of `X.__init__(3)`)."""
    if isinstance(n, ast.Call):
        n = n.args[0] if isinstance(n.func, ast.Name) and n.args else n.func
    while isinstance(n, (ast.Attribute, ast.Subscript, ast.Call)):
        n = n.func if isinstance(n, ast.Call) else n.value
    return n.id if isinstance(n, ast.Name) else None


@per_tree
def _identifiers(tree: ast.Module) -> frozenset:
    """Every identifier ``tree`` spells (Module.identifiers)."""
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.arg):
            out.add(n.arg)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
    return frozenset(out)


@per_tree
def _attr_stores(tree: ast.Module, path: str) -> tuple[tuple[tuple[str, ...], str, Loc], ...]:
    """Every ``X.name = ...`` (``+=``, ``del``), ``setattr(X, "name", ...)`` and ``X.__m__(...)``
    in the file, functions included (one may run at import), with ``X`` a dotted name (None for
    another base, `sys.modules[m]`)."""
    out = []
    for n, local in walk_with_locals(tree):
        target = None
        if isinstance(n, ast.Attribute) and isinstance(n.ctx, (ast.Store, ast.Del)):
            target = (_dotted(n.value), n.attr)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in (
                "setattr", "delattr") and len(n.args) >= 2 and isinstance(n.args[1], ast.Constant) \
                and isinstance(n.args[1].value, str):
            target = (_dotted(n.args[0]), n.args[1].value)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) \
                and n.func.attr.startswith("__") and n.func.attr.endswith("__"):
            # `common.C.__init__(3)`: a dunder method may change the object in place
            target = (_dotted(n.func.value), n.func.attr)
        if target is not None and _root_name(n) in local:
            continue  # `self.C = 3`, a store through a name local to its function
        if target is not None:
            # (a base that is no dotted name, `sys.modules[m].C = 3`: None, any module's)
            out.append((target[0], target[1], Loc(path, n.lineno, n.col_offset + 1)))
    return out


def _raw_imports(tree: ast.Module, path: str) -> list[str]:
    """The files of the user modules the import statements of module ``path`` name (a module,
    a package, the submodules `from . import a` names), as Python finds them."""
    out = []
    for st in ast.walk(tree):
        if isinstance(st, ast.Import):
            for a in st.names:
                parts = a.name.split(".")
                out += [f for f in (find_module(".".join(parts[:i]), 0, path)
                                    for i in range(1, len(parts) + 1)) if f is not None]
        elif isinstance(st, ast.ImportFrom):
            base = find_module(st.module or "", st.level, path) if st.module or st.level \
                else None
            if base is None:
                continue
            out.append(base)
            out += [f for f in (submodule(base, a.name) for a in st.names if a.name != "*")
                    if f is not None]
    return out


def _package_inits(path: str) -> list[str]:
    """The ``__init__.py`` of every package the module at ``path`` lives in (its own package's
    first; none for a module outside a package, or for a package's own ``__init__.py`` beyond
    its parents)."""
    out = []
    d = os.path.dirname(os.path.abspath(path))
    if os.path.basename(path) == "__init__.py":
        d = os.path.dirname(d)
    while os.path.isfile(os.path.join(d, "__init__.py")):
        out.append(os.path.join(d, "__init__.py"))
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    return out


class ModuleCache:
    """The modules one build reads, by absolute path, and the user modules their import
    statements name (``imported``: what a package's attributes include)."""

    def __init__(self) -> None:
        self.modules: dict[str, Module] = {}
        self.imported: set[str] = set()
        #: package __init__.py files read only as text (no module the frontend reads): their
        #: attribute stores (package_init_stores)
        self._raw_inits: dict[str, list] = {}
        #: how many modules the build had read when their packages' __init__.py were last read
        self._inits_seen = -1

    def package_init_stores(self, name: str) -> list[Loc]:
        """Python imports every package a module read lives in, running its ``__init__.py``
        first, and every module a module read imports, each of which may change a module
        constant (``from . import consts; consts.C = 3``, ``from .consts import C; C.value =
        3``). Each is read as a module of the build, so that the builder's
        ``stored_from_outside`` sees its stores; one the frontend cannot read as a module (a
        star import, ...) is scanned for stores of an attribute ``name``, or through ``name``
        (where, in it, is returned)."""
        raw = self._raw_inits
        # (read again only when the build has read modules since: a name is looked up often)
        done = self._inits_seen == len(self.modules)
        while not done:
            done = True
            for key in list(self.modules):
                # the packages it lives in, and the user modules it imports (Python runs them
                # at the import, whether the kernel reads a name of theirs or not)
                imported = [os.path.abspath(f) for f, _, _ in self.modules[key].imports.values()]
                for init in _package_inits(key) + imported + sorted(
                        os.path.abspath(f) for f in self.imported):
                    if init in self.modules or init in raw:
                        continue
                    done = False
                    try:
                        self.get(init)
                    except (TleError, OSError, ValueError, RecursionError):
                        # (ValueError: a source with a NUL byte, which Python cannot import
                        # either; it changes nothing then)
                        self.modules.pop(init, None)
                        try:
                            tree = parse_python(read_python(init), init)
                        except (SyntaxError, UnicodeDecodeError, OSError, TleError, ValueError,
                                RecursionError):
                            raw[init] = []
                            continue
                        raw[init] = _attr_stores(tree, init)
                        # the user modules it imports run too (`from .other import *`)
                        self.imported.update(_raw_imports(tree, init))
        self._inits_seen = len(self.modules)
        return [at for stores in raw.values() for dotted, attr, at in stores
                if attr == name or dotted is not None and name in dotted[1:]]

    def import_back(self, sub: "Module", target: str) -> Optional[int]:
        """The line of the first module-level import statement of ``sub`` after which module
        ``target`` has been imported (it, or a module it imports, directly or not, is
        ``target``), else None."""
        target = os.path.abspath(target)
        for st in sub.tree.body:
            if not isinstance(st, (ast.Import, ast.ImportFrom)):
                continue
            seen: set[str] = set()
            # (a package a module lives in was imported before it: importing it again, or
            # `from . import x` through it, runs nothing of it)
            todo = [os.path.abspath(f) for f in _raw_imports(ast.Module(body=[st],
                                                                        type_ignores=[]),
                                                              sub.path)
                    if os.path.abspath(f) not in _package_inits(sub.path)]
            while todo:
                f = todo.pop()
                if f == target:
                    return st.lineno
                if f in seen:
                    continue
                seen.add(f)
                try:
                    tree = self.modules[f].tree if f in self.modules else parse_python(
                        read_python(f), f)
                except (SyntaxError, UnicodeDecodeError, OSError, TleError, ValueError,
                        RecursionError):
                    continue
                todo += [os.path.abspath(x) for x in _raw_imports(tree, f)
                         if os.path.abspath(x) not in _package_inits(f)]
        return None

    def get(self, path: str, text: Optional[str] = None, as_given: bool = False) -> Module:
        """The module of file ``path`` (parsed once); ``text``: its source when it is not read
        from disk; ``as_given``: locations name the file as ``path`` spells it (the root module
        of a build), else as :func:`~.modules.shown` names it."""
        key = os.path.abspath(path)
        if key not in self.modules:
            self.modules[key] = Module(path if as_given else shown(key), self, text)
        return self.modules[key]


# ----------------------------------------------------------------------------------------------
# compile-time values a name can hold


class CapacityOfConstexprs(TleError):
    """A pipe's capacity read from constexpr parameters that the build has no value of
    (``tle.pipe(capacity=STAGES, ...)`` in the generic build): the kernel's KIR exists only
    with ``names`` bound (frontend/ast_reader.py builds it so, per binding). A check of
    SPECIALIZABLE, so that tle-dump and a compile or launch read the kernel specialised."""

    def __init__(self, message: str, loc: Loc, names: tuple, kernel: str = "",
                 config: object = None):
        super().__init__(message, loc, check="constexpr-operand")
        self.names = names
        self.kernel = kernel   # the kernel's name
        self.config = config   # its file's DEFAULT_CONFIG, encoded (Module.default_config)


def no_integer_in_config(config: object, kernel: str, names: list) -> str:
    """" (DEFAULT_CONFIG gives STAGES True, no integer)" for the first of ``names`` that the
    kernel's DEFAULT_CONFIG entry (``config`` encoded) gives a value other than an integer (a
    bool, a float, a string), which no reading binds; "" otherwise."""
    from .config_literal import entry_section

    values = entry_section(config, kernel, "constexprs")
    for n in dict.fromkeys(names):
        if n in values and type(values[n]) is not int:
            return f" (DEFAULT_CONFIG gives {n} {values[n]!r}, no integer)"
    return ""


@record
class Static:
    """What the builder knows statically about a value: a module path (``tl.load``), a helper
    function, a pipe, a handle, a free buffer, a bound method, or a tuple of such."""

    kind: str  # "mod" | "func" | "pipe" | "handle" | "buffer" | "method" | "usermod" | "tuple"
    value: object


def literal_items(e: K.Expr, st: Optional[Static]) -> Optional[Static]:
    """``st`` of the tuple ``e`` with each item that is a literal number (``1`` of ``(b, 1)``)
    known as the constant it is: the item resolves in place like the tuple's other compile-time
    items (a folded local's), so `b[0] % b[1]` is read on both numbers (and checked as Triton
    computes it, local_tensors.BuildRules) rather than on a parameter item the reading cannot
    fold."""
    if st is None or st.kind != "tuple" or not isinstance(e, K.TupleExpr) \
            or len(st.value) != len(e.items):
        return st
    items = tuple(
        Static("const", x) if sx is None and isinstance(x, K.Const)
        and isinstance(x.value, (bool, int, float)) else literal_items(x, sx)
        for x, sx in zip(e.items, st.value))
    return Static("tuple", items)


@dataclass
class Frame:
    """One function being built: its module, the prefix of its locals' KIR names, what each
    local name statically holds (None: a runtime value)."""

    module: Module
    prefix: str
    env: dict[str, Optional[Static]] = field(default_factory=dict)
    function: str = "<kernel>"
    # names that held different compile-time values on different paths (a handle chosen by an
    # if, ...): runtime values now, which cannot be resolved
    lost: set = field(default_factory=set)
    # names that are a constexpr in Triton 3.6 as bound now: `name: tl.constexpr = ...`, a
    # kernel's constexpr parameter, a partition's parameter given one (or a kernel-body name
    # bound as one) or a number (a plain assignment makes a name a tensor);
    # Builder.constexpr_rebound_in_region reads it
    constexprs: set = field(default_factory=set)
    # lost names that held a free shared buffer on some path: name -> those buffers' names
    lost_buffers: dict = field(default_factory=dict)
    # lost names that an `if` on the kernel's constexprs alone bound to different handles or
    # pipes: name -> (those constexprs, the `if`); bound, the `if` is decided
    # (Builder.undecided_choice)
    lost_by: dict = field(default_factory=dict)
    # a partition's parameters given an expression of the kernel's constexpr parameters:
    # parameter -> the constexprs it reads (Builder.kernel_constexprs_of)
    constexpr_sources: dict = field(default_factory=dict)
    # names holding a tuple that an enclosing loop or if carries (Builder.carry_tuples): the
    # names of the scalar variables holding its items, or None for a tuple the frontend cannot
    # carry
    carried: dict = field(default_factory=dict)
    # carried name -> "loop" or "if": what carries it (said by an error at its rebinding)
    carried_by: dict = field(default_factory=dict)
    # where the function binds each of its local names: name -> [(line, column)] of every
    # store (Builder.rebound_later reads it)
    stores: dict = field(default_factory=dict)
    # KIR name of an item variable of a carried tuple (`o__0`) -> the tuple's name (`o`): the
    # variable is assigned wherever the tuple is rebound
    item_vars: dict = field(default_factory=dict)
    # names that Triton leaves undefined after a statement although Python binds them (first
    # bound inside a range / tl.range / while loop, or in one branch of an `if` on a runtime
    # condition): name -> why, said by the error at a later read (Builder.undefined_after)
    undefined: dict = field(default_factory=dict)
    # a helper's parameters bound to a caller's local tensor name (local_tensors.BuildRules):
    # parameter -> that caller's name, which a refusal tells to annotate
    tensor_params: dict = field(default_factory=dict)
    # a helper's parameters given a tuple with such names among its items (`(b, 1)`): parameter
    # -> {index path of the item: the caller's name}; the other items are constexprs there
    tensor_items: dict = field(default_factory=dict)
    # a partition's parameters bound to a name the kernel body binds once by a plain assignment
    # (a tensor in Triton, a constexpr of its value here, docs/language.md): parameter -> that
    # name. Only the check of folded arithmetic reads it (local_tensors.BuildRules)
    body_tensors: dict = field(default_factory=dict)
    # a partition's parameters given a tuple with such names among its items (`(B, 1)`):
    # parameter -> {index path of the item: that name}; read by the same check only
    body_items: dict = field(default_factory=dict)
    # the scopes Triton visits the statement being built in, innermost last: ("static", trip
    # count or None) for a tl.static_range body (unrolled: each iteration sees the names the
    # last one bound), ("region",) for the body of a range / tl.range / while loop or a branch
    # of an `if` on a runtime condition (visited in a scope of its own). Builder.s_AnnAssign
    # reads it.
    regions: list = field(default_factory=list)
    # the names a tl.static_range loop of this function left bound to its variable (a constexpr
    # in Triton: its last value, or the current one while it is built unrolled) and nothing has
    # bound again since (LoopBuild.carried_retyped, ConstexprRules.constexpr_names)
    static_bound: set = field(default_factory=set)
    # names a while loop's body assigns that were not bound before it: the builder puts them
    # in ``env`` (runtime values in the condition) before the body binds them
    placeholders: set = field(default_factory=set)
    # the module-level names read (no local binding yet) in the body of each tl.static_range
    # loop being built, innermost last (Builder.module_read_rebound)
    module_reads: list = field(default_factory=list)

    def kir(self, name: str) -> str:
        return self.prefix + name


def compile_time_only(st: Optional[Static]) -> bool:
    """Whether ``st`` is (or holds) a value that exists only when the kernel is read: a pipe
    handle or a pipe, which no run-time choice can pick. (A free buffer chosen so keeps its
    own rules, docs/semantics.md "Free shared buffers": a conditional expression reaches
    both, a name an `if` binds to two is unknown-buffer.)"""
    if st is None:
        return False
    if st.kind == "tuple":
        return any(compile_time_only(x) for x in st.value)
    return st.kind in ("handle", "pipe")


def picked_at_compile_time(st: Optional[Static]) -> bool:
    """Whether ``st`` is (or holds) a pipe handle, a pipe (:func:`compile_time_only`) or a
    shared buffer: a value only the kernel's reading picks, so that a choice of it that the
    kernel's constexprs make (`if C > 3: fb = fa else: fb = fc`, `(fa, fc)[C - 5]`) is read
    specialised to them, where the choice folds (adversarial round 68: the generic reading
    refused such a buffer, unknown-buffer or "a tuple's index must be a constant"). A
    conditional expression choosing a buffer keeps reaching both (docs/semantics.md "Free
    shared buffers"), which holds for every value."""
    if st is None:
        return False
    if st.kind == "tuple":
        return any(picked_at_compile_time(x) for x in st.value)
    return st.kind in ("handle", "pipe", "buffer")


def is_none(e: K.Expr) -> bool:
    """Whether ``e`` (of no compile-time Static: a module, a handle or a function is a
    ``Const(None)`` with one) is the constant None, a literal or a module constant bound to it,
    which ``fold`` cannot tell from an expression that does not fold."""
    return isinstance(e, (K.Const, K.Global)) and e.value is None


def condition_fold(e: K.Expr, st: Optional[Static]) -> object:
    """:func:`fold` of the condition ``e`` (of compile-time Static ``st``) of an `if` or a
    conditional expression, the constant None (:func:`is_none`) folded to False: Triton 3.6
    takes a NoneType condition as a compile-time false one (`if None:`, `x if None else y`).
    Left undecided, `if None:` was refused as one whose views disagree (constexpr-if) and `x if
    None else y` of tensors as a choice the lowering does not make (adversarial round 63)."""
    folded = fold(e)
    return False if folded is None and st is None and is_none(e) else folded


def writes_memory(x: K.Expr) -> bool:
    """Whether the node ``x`` (not its operands) writes memory: a store, an atomic, a TMA copy."""
    return isinstance(x, K.Op) and (x.name in ("tl.store", "tle.gpu.tma_load")
                                    or x.name.startswith("tl.atomic_"))


def has_effect(e: K.Expr) -> bool:
    """Whether evaluating ``e`` performs a pipe event or writes memory (a store, an atomic, a TMA
    copy): what an argument no parameter binds still does when it is evaluated."""
    return any(isinstance(x, K.Event) or writes_memory(x) for x in K.walk_expr(e))


def stores_of(body: list[ast.stmt]) -> dict[str, list[tuple[int, int]]]:
    """Where ``body`` (a function's) binds each name: name -> [(line, column)] of its stores."""
    out: dict[str, list[tuple[int, int]]] = {}
    for n in walk_no_defs(body):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            out.setdefault(n.id, []).append((n.lineno, n.col_offset))
    return out


def literal_trip_count(start: K.Expr, stop: K.Expr, step: K.Expr) -> Optional[int]:
    """The number of iterations of a loop whose bounds fold to integers, else None."""
    bounds = [fold(x) for x in (start, stop, step)]
    if not all(isinstance(b, int) for b in bounds) or bounds[2] == 0:
        return None
    return len(range(*bounds))


#: the most statements a tl.static_range loop built unrolled may come to: the bound of one
#: kept whole (triton_rules)
MAX_UNROLLED_STATEMENTS = TritonRules.MAX_UNROLLED


def unrolled_size(stmts) -> int:
    """The statements ``stmts`` come to once Triton unrolls the tl.static_range loops in them
    (a loop of bounds that do not fold counted once)."""
    n = 0
    for s in stmts:
        n += 1
        if isinstance(s, K.For):
            trips = literal_trip_count(s.start, s.stop, s.step) if s.static else None
            n += (trips or 1) * unrolled_size(s.body)
        elif isinstance(s, K.While):
            n += unrolled_size(s.body)
        elif isinstance(s, K.If):
            n += unrolled_size(s.then) + unrolled_size(s.orelse)
    return n


def has_events(body: tuple) -> bool:
    """Whether the kernel IR ``body`` holds a pipe event or a TMA copy (ast_reader reads it
    too)."""
    return any(isinstance(e, K.Event) or (isinstance(e, K.Op) and e.name == "tle.gpu.tma_load")
               for x in K.walk_stmts(body) for y in K.stmt_exprs(x) for e in K.walk_expr(y))


def module_label(m: Module) -> str:
    """A module's dotted name, as Python names it (for messages)."""
    from .modules import module_name_of

    return module_name_of(m.path)[0] or os.path.basename(m.path)


def loc_of(path: str, node: ast.AST) -> Loc:
    return Loc(path, getattr(node, "lineno", 0), getattr(node, "col_offset", -1) + 1)


#: names_of's results by the first statement of the list (held weakly) and the list's nodes
_NAMES: "weakref.WeakKeyDictionary[ast.AST, dict]" = weakref.WeakKeyDictionary()


def names_of(stmts: list[ast.stmt]) -> tuple[frozenset, frozenset]:
    """(the names ``stmts`` store, every name they spell), not entering nested functions,
    lambdas or classes. Asked of the same bodies at every enclosing loop and branch, and by each
    reading of a file (its trees are shared: parsed.py), so kept per list of statements."""
    if not stmts:
        return frozenset(), frozenset()
    per = _NAMES.get(stmts[0])
    if per is None:
        per = _NAMES[stmts[0]] = {}
    key = tuple(map(id, stmts))  # (alive while the first statement is: one tree)
    if key not in per:
        names = [n for n in walk_no_defs(stmts) if isinstance(n, ast.Name)]
        per[key] = (frozenset(n.id for n in names if isinstance(n.ctx, ast.Store)),
                    frozenset(n.id for n in names))
    return per[key]


def walk_no_defs(nodes: list[ast.stmt]):
    """Every node under ``nodes``, not entering nested functions, lambdas or classes."""
    stack = list(reversed(nodes))
    while stack:
        n = stack.pop()
        yield n
        children = [c for c in ast.iter_child_nodes(n)
                    if not isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                                          ast.ClassDef))]
        stack.extend(reversed(children))


def decl_view(decl: K.PipeDecl):
    """The language's PipeDecl view of a KIR pipe (for validate_reader's rules)."""
    from ..language.gpu import SharedBuffer
    from ..language.pipe import PipeDecl

    fields = tuple((b.name, SharedBuffer(tuple(b.shape), b.dtype)) for b in decl.fields)
    return PipeDecl(decl.name, decl.capacity, "cta", decl.readers, decl.one_shot, fields, decl.loc,
                    decl.named)


def tensor_statics(st: Optional[Static]) -> Optional[Static]:
    """``st`` (a tuple's) with each number item known as a constant (at any depth) known as the
    tensor Triton makes of it, ``to_tensor(item)``, as :func:`tensor_items_of` reads the tuple."""
    if st is None:
        return None
    if st.kind == "tuple":
        items = [tensor_statics(x) for x in st.value]
        return st if all(a is b for a, b in zip(items, st.value)) else Static(
            "tuple", type(st.value)(items) if isinstance(st.value, (tuple, list)) else items)
    if st.kind == "const" and isinstance(st.value, K.Const) \
            and isinstance(st.value.value, (int, float)) and not isinstance(st.value.value, bool):
        return Static("const", K.Op("to_tensor", (st.value,), (), st.value.loc))
    return st


def tensor_items_of(e: K.Expr, paths: Optional[tuple] = None, at: tuple = ()) -> K.Expr:
    """The tuple ``e`` a plain assignment binds with each number item (at any depth) read as
    the tensor Triton's visit_Assign makes of it, ``to_tensor(item)`` (Builder.tensor_number);
    other items as they are. ``paths``: only the items at (or inside) these index paths (each
    counted from either end, local_tensors.item_paths), None for all."""
    if isinstance(e, K.TupleExpr):
        n = len(e.items)
        items = tuple(tensor_items_of(x, paths, at + (i,)) if paths is None
                      or covers(paths, at + (i,)) or covers(paths, at + (i - n,))
                      or any(p[:len(at) + 1] in (at + (i,), at + (i - n,)) for p in paths)
                      else x for i, x in enumerate(e.items))
        return e if all(a is b for a, b in zip(items, e.items)) else dataclasses.replace(
            e, items=items)
    if isinstance(e, (K.Const, K.Global)) and (type(e.value) in (int, float) or isinstance(
            e, K.Global) and type(e.value) is bool) \
            and (paths is None or covers(paths, at)):
        # (a module constant, `(M, NB)` of `NB = tl.constexpr(100)`, too: its value unwrapped
        # and made a tensor, the name kept inside for the readers that fold it)
        return K.Op("to_tensor", (e,), (), e.loc)
    if isinstance(e, (K.BinOp, K.UnaryOp)) and (paths is None or covers(paths, at)):
        # arithmetic of numbers (`(M, 3 * 3)`, a helper's `return (9 - 0, t)`) is the number it
        # computes, made a tensor alike (lowering adversarial round 19: it stayed a Python
        # number, an i8 add beside an int8 tile where Triton adds in i32)
        value = fold(e)
        if type(value) in (int, float):
            return K.Op("to_tensor", (K.Const(value, e.loc),), (), e.loc)
    return e


def fold_body(e: K.Expr, assigns: dict, top: set, depth: int = 16) -> object:
    """:func:`fold` of a partition argument, reading through the kernel body's names: a name in
    ``top`` (bound at the body's top level, not a kernel parameter) that the body assigns once
    (``assigns``: tensor_args.body_assigns) stands for the value assigned, at the binding of the
    partitions (warp_specialize ends the body). ``NT = TOPK // 64`` passed as ``NT`` is 32 in a
    build that binds TOPK = 2048, as Triton's constexpr arithmetic makes it and as the protocol
    view evaluates it, so an ``if NT % 2 == 1`` around events folds in both views."""
    if depth <= 0:
        return None
    if isinstance(e, K.Name):
        vals = assigns.get(e.id)
        if e.id in top and vals is not None and len(vals) == 1:
            return fold_body(vals[0], assigns, top, depth - 1)
        return None
    if isinstance(e, (K.BinOp, K.Compare)):
        a = fold_body(e.lhs, assigns, top, depth - 1)
        b = fold_body(e.rhs, assigns, top, depth - 1)
        if a is None or b is None or isinstance(a, (str, tuple)) or isinstance(b, (str, tuple)):
            return None
        return fold(dataclasses.replace(e, lhs=K.Const(a, e.loc), rhs=K.Const(b, e.loc)))
    if isinstance(e, K.UnaryOp):
        v = fold_body(e.operand, assigns, top, depth - 1)
        if v is None or isinstance(v, (str, tuple)):
            return None
        return fold(dataclasses.replace(e, operand=K.Const(v, e.loc)))
    if isinstance(e, K.BoolOp):
        vals = [fold_body(x, assigns, top, depth - 1) for x in e.items]
        if any(v is None or isinstance(v, (str, tuple)) for v in vals):
            return None
        return fold(dataclasses.replace(e, items=tuple(K.Const(v, e.loc) for v in vals)))
    if isinstance(e, K.TupleExpr):
        # `(B, 1)` of a name the body binds once: the tuple of the items' values
        vals = tuple(fold_body(x, assigns, top, depth - 1) for x in e.items)
        return None if any(v is None for v in vals) else vals
    return fold(e)
