"""Build the kernel IR (ir/kernel.py) of a file's ``@tle.jit`` kernels from their Python source.

This is the one place that reads a kernel's Python: names are bound (locals, module constants by
value, dtypes, imported modules and functions, of this module or any module it imports, relative
imports included), helpers are inlined with their locals renamed (``_helper3_x``), pipe handles
are resolved so that every verb is an :class:`~tle_compiler.ir.kernel.Event` naming its pipe,
reader and view, ``tle.pipe``/``tle.gpu.alloc`` declarations become the kernel's pipes and
buffers, and ``warp_specialize`` its partitions with their parameter bindings.

Evaluation order is Python's: a statement that calls a helper is built in *sequential* form (each
call's value bound to a temporary, in order), so the helper's inlined statements run after what
Python evaluates before the call and before what it evaluates after it.
"""

from __future__ import annotations

import ast
import dataclasses
import math
import os
import sys
import weakref
from dataclasses import dataclass, field
from typing import Optional, Union

from ..diagnostics import TleError
from ..ir import kernel as K
from ..language.call_args import PROPAGATE_NAN
from ..language.unlowered import TENSOR_MEMBERS, TENSOR_ONLY_MEMBERS, UNLOWERED_CALLS
from ..ir.nodes import Loc
from ..ir.big_ints import PythonRaises, number_text
from ..ir.record import record
from ..language.gpu import (SharedBuffer, Unevaluated, normalize_dtype, smem, validate_alloc,
                            validate_warp_specialize)
from ..language.pipe import validate_pipe, validate_reader
from .folding import fold
from .triton_rules import TritonRules
from .local_tensors import BuildRules, covers
from .constexpr_rules import ConstexprRules
from .constexpr_rules import condition_type_refusal
from .constexpr_rules import constexpr_annotation as _constexpr_annotation
from .kernel import (foreign_decorated_kernel, is_float_param, jit_decorator, jit_options,
                     kernel_def_lines, helper_warp_specialize, jit_call_kernel, jit_reference,
                     kernel_def_problem, kernel_params, nested_kernel, string_code_call,
                     superseded)
from ..ir.kernel_names import MODULE_NAMES, source_names
from .import_order import bound_names, parse_python
from .modules import find_module, in_folder, is_library, relative_folder, shown, submodule
from .library_names import import_as_attribute, missing_attribute, missing_import
from .shared_memory import check_shared_memory, check_slot_shape
from .scope import DEFAULT_ALIASES, attr_name, canon, is_triton, module_scope, walk_with_locals
from .source_text import read_python
from .memory_waits import check_memory_waits
from .parsed import per_tree
from .python_numbers import tensor_holds
from .partition_rules import check_cache_hints, check_register_budgets, check_wgmma_warps
from .helper_signatures import (constexpr_annotated, default_as_code, import_time_call,
                                keyword_only_why, omitted_default, positional_only)
from .tensor_args import body_assigns, source_text, tensor_item
from .config_literal import decode_config, encode_config  # noqa: F401 (re-exported)

_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
           ast.Mod: "%", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<",
           ast.RShift: ">>", ast.Pow: "**"}
_CMPOPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
_UNOPS = {ast.USub: "-", ast.UAdd: "+", ast.Not: "not", ast.Invert: "~"}
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


def _host_value(path: str, values: list) -> int:
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
        self.consts: dict[str, Union[int, float]] = dict(self.scope.constants)
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
                        raise TleError(hit[1], _loc(path, hit[0]), check="unknown-name")
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


def _no_integer_in_config(config: object, kernel: str, names: list) -> str:
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


def _literal_items(e: K.Expr, st: Optional[Static]) -> Optional[Static]:
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
        and isinstance(x.value, (bool, int, float)) else _literal_items(x, sx)
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
    # names a while loop's body assigns that were not bound before it: the builder puts them
    # in ``env`` (runtime values in the condition) before the body binds them
    placeholders: set = field(default_factory=set)
    # the module-level names read (no local binding yet) in the body of each tl.static_range
    # loop being built, innermost last (Builder.module_read_rebound)
    module_reads: list = field(default_factory=list)

    def kir(self, name: str) -> str:
        return self.prefix + name


def _compile_time_only(st: Optional[Static]) -> bool:
    """Whether ``st`` is (or holds) a value that exists only when the kernel is read: a pipe
    handle or a pipe, which no run-time choice can pick. (A free buffer chosen so keeps its
    own rules, docs/semantics.md "Free shared buffers": a conditional expression reaches
    both, a name an `if` binds to two is unknown-buffer.)"""
    if st is None:
        return False
    if st.kind == "tuple":
        return any(_compile_time_only(x) for x in st.value)
    return st.kind in ("handle", "pipe")


def _is_none(e: K.Expr) -> bool:
    """Whether ``e`` (of no compile-time Static: a module, a handle or a function is a
    ``Const(None)`` with one) is the constant None, a literal or a module constant bound to it,
    which ``fold`` cannot tell from an expression that does not fold."""
    return isinstance(e, (K.Const, K.Global)) and e.value is None


def _writes(x: K.Expr) -> bool:
    """Whether the node ``x`` (not its operands) writes memory: a store, an atomic, a TMA copy."""
    return isinstance(x, K.Op) and (x.name in ("tl.store", "tle.gpu.tma_load")
                                    or x.name.startswith("tl.atomic_"))


def _has_effect(e: K.Expr) -> bool:
    """Whether evaluating ``e`` performs a pipe event or writes memory (a store, an atomic, a TMA
    copy): what an argument no parameter binds still does when it is evaluated."""
    return any(isinstance(x, K.Event) or _writes(x) for x in K.walk_expr(e))


def _stores(body: list[ast.stmt]) -> dict[str, list[tuple[int, int]]]:
    """Where ``body`` (a function's) binds each name: name -> [(line, column)] of its stores."""
    out: dict[str, list[tuple[int, int]]] = {}
    for n in _walk_no_defs(body):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            out.setdefault(n.id, []).append((n.lineno, n.col_offset))
    return out


def _trip_count(start: K.Expr, stop: K.Expr, step: K.Expr) -> Optional[int]:
    """The number of iterations of a loop whose bounds fold to integers, else None."""
    bounds = [fold(x) for x in (start, stop, step)]
    if not all(isinstance(b, int) for b in bounds) or bounds[2] == 0:
        return None
    return len(range(*bounds))


#: the most statements a tl.static_range loop built unrolled may come to: the bound of one
#: kept whole (triton_rules)
_MAX_UNROLLED = TritonRules.MAX_UNROLLED


def _unrolled_size(stmts) -> int:
    """The statements ``stmts`` come to once Triton unrolls the tl.static_range loops in them
    (a loop of bounds that do not fold counted once)."""
    n = 0
    for s in stmts:
        n += 1
        if isinstance(s, K.For):
            trips = _trip_count(s.start, s.stop, s.step) if s.static else None
            n += (trips or 1) * _unrolled_size(s.body)
        elif isinstance(s, K.While):
            n += _unrolled_size(s.body)
        elif isinstance(s, K.If):
            n += _unrolled_size(s.then) + _unrolled_size(s.orelse)
    return n


def has_events(body: tuple) -> bool:
    """Whether the kernel IR ``body`` holds a pipe event or a TMA copy (ast_reader reads it
    too)."""
    return any(isinstance(e, K.Event) or (isinstance(e, K.Op) and e.name == "tle.gpu.tma_load")
               for x in K.walk_stmts(body) for y in K.stmt_exprs(x) for e in K.walk_expr(y))


def _module_label(m: Module) -> str:
    """A module's dotted name, as Python names it (for messages)."""
    from .modules import module_name_of

    return module_name_of(m.path)[0] or os.path.basename(m.path)


def _loc(path: str, node: ast.AST) -> Loc:
    return Loc(path, getattr(node, "lineno", 0), getattr(node, "col_offset", -1) + 1)


class Builder(BuildRules, ConstexprRules):
    """Builds the KIR of one kernel (:meth:`kernel`)."""

    def __init__(self, cache: ModuleCache, module: Module, bind: Optional[dict] = None):
        self.cache = cache
        self.root = module
        #: the helpers inlined so far (their locals are named `_<helper><n>_<local>`); the
        #: kernel records them (attribute `helpers`) so that a reader of the KIR alone spells
        #: those locals as Python does, as the reader of the .py does from its files' defs
        self.inlined: set[str] = set()
        self.bind = dict(bind or {})
        self.constexpr_params: set = set()  # the kernel being built's constexpr params
        self.kernel_name = ""  # the kernel being built's name
        self.param_names: set = set()  # all of its params
        #: the register budgets written as expressions of unbound constexprs (each a KIR
        #: expression) and where the list is, or None
        self.budget_exprs: Optional[tuple] = None
        self.out: list[K.Stmt] = []
        self.frames: list[Frame] = []
        self.counter = 0
        self.consts: dict[str, object] = {}  # KIR id -> value
        self.const_ids: dict[tuple[str, str], str] = {}  # (module path, name) -> KIR id
        self.pipes: dict[str, K.PipeDecl] = {}
        #: one key per evaluation of a tle.gpu.alloc (:meth:`alloc`) -> buffer (free ones named)
        self.buffers: dict[int, K.Buffer] = {}
        self.allocs = 0  # the evaluations of tle.gpu.alloc so far (their keys)
        self.buffer_names: dict[int, str] = {}  # key -> the free buffer's name (name_buffer)
        # buffer key -> (pipe, field, location of the field) once it is a pipe field
        self.buffer_owner: dict[int, tuple[str, str, Loc]] = {}
        self.free_buffers: dict[str, K.Buffer] = {}
        self.sequential = 0  # > 0 while building a statement that calls a helper
        #: the names the partition being built binds (its parameters and locals), which the
        #: lowered Gluon spells as written (global_of)
        self.partition_locals: frozenset = frozenset()
        #: the names of the kernel's partition functions, once warp_specialize is read
        self.partition_names: frozenset = frozenset()
        self.not_triton = False  # building what Triton never compiles (tle.assume, Python's)
        self.pure: dict[tuple[str, str], bool] = {}  # effect_free's answers, per helper
        self.in_partition = False  # building a partition's body (or what it inlines)
        self.depth = 0  # compound-statement nesting (a pipe is declared at depth 0 only)
        self.loop_depth = 0  # loop nesting (a `return` inside a loop is refused: s_Return)
        #: KIR names certain to hold runtime values (not constexprs): non-constexpr kernel
        #: arguments, loop variables of range / tl.range loops, names bound to expressions of
        #: them or of loads and program ids (an `if` on them is an scf.if: undefined_after)
        self.runtime: set[str] = set()
        #: KIR names bound to a slot or wait result (an event's value): the verifier follows
        #: them past their loop (unknown-slot), so undefined_after leaves them to it
        self.slot_names: set[str] = set()
        # (pipe, reader name or None) -> (fields the reader sees, where its first handle was made)
        self.reader_views: dict[tuple[str, Optional[str]], tuple[tuple[str, ...], Loc]] = {}
        #: KIR variable -> the shape of the tuple (or list) it holds (:meth:`tuple_shape`)
        self.tuple_shapes: dict[str, tuple] = {}
        #: KIR variable -> the statement that bound it last (an if's error names the binding)
        self.bound_at: dict[str, ast.AST] = {}
        # the calls of helper functions built so far (their ast nodes, held so that no other
        # node takes one's place): Triton returns what a jit function returns as a tensor
        # (local_tensors.BuildRules reads it)
        self.helper_calls: set[ast.Call] = set()
        #: KIR names of the variables of the tl.static_range loops being built (constexprs)
        self.static_vars: set[str] = set()

    # -- helpers ----------------------------------------------------------------------------
    @property
    def frame(self) -> Frame:
        return self.frames[-1]

    def loc(self, node: ast.AST) -> Loc:
        return _loc(self.frame.module.path, node)

    def err(self, msg: str, node: ast.AST, check: str = "frontend") -> TleError:
        return TleError(msg, self.loc(node), check=check)

    def emit(self, s: K.Stmt) -> None:
        self.out.append(s)

    def spelt(self) -> list[frozenset]:
        """The identifiers of every file read so far (:attr:`Module.identifiers`): the kernel's
        and those of the modules its partitions and helpers come from. A partition defined in
        another module keeps its locals' names in the KIR, as the kernel's own do."""
        return [self.root.identifiers] + [m.identifiers for m in self.cache.modules.values()
                                          if m is not self.root]

    def fresh(self, base: str) -> str:
        self.counter += 1
        spelt = self.spelt()
        while any(f"_{base}{self.counter}" in ids for ids in spelt):
            self.counter += 1  # never a name a file read spells itself
        return f"_{base}{self.counter}"

    def helper_prefix(self, name: str) -> str:
        """The prefix of the KIR names of one inlining of helper ``name``: ``_<name><n>_``, with
        no identifier of a file read (a partition's local ``_put1_q``, in the kernel's file or
        the module the partition comes from) starting with it, which the inlined ``q`` would
        otherwise rebind (the KIR, and the lowered Gluon, spell both as ``_put1_q``)."""
        self.inlined.add(name)
        spelt = self.spelt()
        while True:
            prefix = f"_{name}{self._next()}_"
            if not any(i.startswith(prefix) for ids in spelt for i in ids):
                return prefix

    def block(self, stmts: list[ast.stmt]) -> tuple[K.Stmt, ...]:
        saved, self.out = self.out, []
        try:
            for s in stmts:
                self.stmt(s)
            return tuple(self.out)
        finally:
            self.out = saved

    def global_of(self, module: Module, name: str, node: ast.AST) -> K.Global:
        key = (module.path, name)
        kid = self.const_ids.get(key)
        if kid is None or kid in self.partition_locals or kid in self.partition_names:
            value = module.consts[name]
            kid, k = name, 1
            # a name the kernel or a partition binds itself (a local, a parameter) would shadow
            # the constant in the generated Gluon, where an inlined helper's read of its
            # module's `B` meets the partition's own `B = 9`: such a constant takes another id
            # (the partition being built may come from another module than the kernel's)
            while (kid in self.consts and self.consts[kid] != value) or (
                    kid in self.root.function_locals or kid in self.partition_locals
                    or kid in self.partition_names):
                kid, k = f"{name}_{k}", k + 1
            self.consts[kid] = value
            self.const_ids[key] = kid
        return K.Global(kid, self.consts[kid], self.loc(node))

    # -- names ------------------------------------------------------------------------------
    def lookup(self, name: str, node: ast.AST) -> tuple[K.Expr, Optional[Static]]:
        f = self.frame
        if name in f.undefined and name not in f.env:
            raise self.err(f"`{name}` is read here, but {f.undefined[name]}: Triton does not "
                           f"define it here (Python would); bind `{name}` before that statement",
                           node, check="unknown-name")
        if name in f.env:
            st = f.env[name]
            loc = self.loc(node)
            if st is None and name in f.lost_by:
                names, where = f.lost_by[name]
                self.undecided_choice(f"`{name}` holds a pipe handle or a pipe that the `if` at "
                                      f"line {where.lineno} chooses",
                                      where.test, names)
            if st is None and name in f.lost_buffers:
                # `b = scr` in one branch, `b = scr2` in the other: read as a runtime value, `b`
                # viewed no buffer at all, so a partition that wrote through it raced with one
                # that read `scr` and the race check never saw the write (nor could the
                # lowering name the buffer)
                raise self.err(f"`{name}` holds a different shared buffer on different paths "
                               f"({', '.join(f.lost_buffers[name])}, or a value of another "
                               f"kind), so the frontend cannot tell which buffer it is (nor "
                               f"check the partitions that use it for races): bind `{name}` "
                               f"to one buffer", node, check="unknown-buffer")
            if st is not None and self.in_partition:
                owner = self.field_buffer_in(st)
                if owner is not None:
                    # a pipe field's buffer is reached through slots only: taken from a tuple or
                    # passed by keyword, its uses would lie in no window the verifier checks
                    raise self.err(f"`{name}` reaches the buffer of field '{owner[1]}' of pipe "
                                   f"'{owner[0]}' directly: use the slot of an acquire or a wait "
                                   f"(whose window the verifier checks)", node,
                                   check="field-buffer")
            if st is not None:
                if st.kind == "const" and name in f.carried:
                    # a carried tuple's item variables, located where the tuple is used
                    items = tuple(dataclasses.replace(x, loc=loc) for x in st.value.items)
                    return K.TupleExpr(items, loc), st
                if st.kind == "const":  # located where it is used
                    return self.tensor_number(name, dataclasses.replace(st.value, loc=loc)), st
                if st.kind == "pipe":
                    return K.PipeRef(st.value.name, loc), st
                if st.kind == "handle":
                    return st.value, st
                if st.kind == "buffer" and st.value[1] is not None:
                    return K.BufferRef(st.value[1], loc), st
            return K.Name(f.kir(name), loc), st
        for reads in f.module_reads:
            reads.setdefault(name, node)
        return self.module_name(f.module, name, node)

    def calls_helper(self, node: ast.Call) -> bool:
        """Whether ``node`` calls a helper (a function the builder inlines), built yet or not:
        a check that runs before a call's arguments are built (tl.arange's operands) names a
        helper's result by its call as :attr:`helper_calls` does for one built. The function is
        resolved by :meth:`callee`, which evaluates nothing (names and attribute chains)."""
        try:
            _, fst = self.callee(node.func)
        except TleError:
            return False
        return fst is not None and fst.kind == "func"

    def tensor_number(self, name: str, e: K.Expr) -> K.Expr:
        """``e``, the number a name of the partition folds to, as Triton holds the name: a
        name it binds by a plain assignment (`b = 100`), a helper's parameter given one, or a
        partition's parameter given such a name of the kernel body is a scalar tensor in
        Triton 3.6 (visit_Assign converts the number: an int an i32, u32 or i64 by its range, a
        float an fp32), so `t + b` of an int8 tile is computed in i32 where `t + 100` stays
        i8. Such a read is ``to_tensor(e)`` in the kernel IR: folding sees through it (loop
        bounds, conditions and indices read the value), the lowering makes the tensor. Any
        other value is ``e`` (a bool, an i1 tensor, promotes as the literal does)."""
        if not self.in_partition:
            return e
        if isinstance(e, K.TupleExpr):
            # a tuple: its number items that are tensors (all of a tuple a plain assignment
            # binds, `T = (100, 1)`; those of a tuple written in the call that were tensors
            # there, `(I, 1)`: item 0 only, the literal 1 a constexpr)
            f = self.frame
            if self._folded_tensor(ast.Name(id=name, ctx=ast.Load())) is not None:
                return _tensor_items(e)
            if name in f.stores:
                return e
            paths = {**f.tensor_items.get(name, {}), **f.body_items.get(name, {})}
            return _tensor_items(e, tuple(paths)) if paths else e
        if not isinstance(e, K.Const) or isinstance(e.value, bool) \
                or not isinstance(e.value, (int, float)):
            return e
        if self._folded_tensor(ast.Name(id=name, ctx=ast.Load())) is None:
            return e
        return K.Op("to_tensor", (e,), (), e.loc)

    def item_of(self, base: K.Expr, st: Static, i: int, loc: Loc) -> tuple[K.Expr, Optional[Static]]:
        """Item ``i`` of ``base``, a tuple whose items' compile-time values ``st`` holds: the
        item itself when it is one (a pipe, a handle, a named buffer), else ``base[i]``."""
        item = st.value[i]
        if item is not None and item.kind == "handle":
            return item.value, item
        if item is not None and item.kind == "pipe":
            return K.PipeRef(item.value.name, loc), item
        if item is not None and item.kind == "buffer" and item.value[1] is not None:
            return K.BufferRef(item.value[1], loc), item
        if item is not None and item.kind == "buffer" and item.value[0] in self.buffer_names:
            # a tuple built before its buffer was named (`t = (tle.gpu.alloc(...),)`, then `fc
            # = t[0]`): the name it was given (adversarial round 65: None, so an access through
            # `t[0]` elsewhere reached no buffer the race check saw)
            name = self.buffer_names[item.value[0]]
            return K.BufferRef(name, loc), Static("buffer", (item.value[0], name))
        if item is not None and item.kind == "const":
            return dataclasses.replace(item.value, loc=loc), item
        if item is not None and item.kind != "tuple":
            return K.Const(None, loc), item
        return K.Subscript(base, (i,), loc), item

    def without_field_buffers(self, e: K.Expr, st: Optional[Static]) -> K.Expr:
        """A partition's argument ``e`` with each pipe field's buffer it holds (in a tuple,
        ``(kv, (ring_buf,))``) passed as None: the KIR names no field's buffer (a field is
        reached through slots only, and the partition's use of the item is refused, check
        ``field-buffer``), so the binding held a BufferRef to no buffer of the kernel, which
        --print-ir could not write."""
        if st is None:
            return e
        if st.kind == "buffer" and self.buffer_owner.get(st.value[0]) is not None:
            return K.Const(None, e.loc)
        if st.kind == "tuple" and isinstance(e, K.TupleExpr) and len(e.items) == len(st.value):
            return K.TupleExpr(tuple(self.without_field_buffers(x, y)
                                     for x, y in zip(e.items, st.value)), e.loc)
        return e

    def field_buffer_in(self, st: Optional[Static]) -> Optional[tuple[str, str, Loc]]:
        """(pipe, field, location) of a pipe field's buffer that ``st`` is or holds, else None."""
        if st is None:
            return None
        if st.kind == "buffer":
            return self.buffer_owner.get(st.value[0])
        if st.kind == "tuple":
            return next((o for o in map(self.field_buffer_in, st.value) if o is not None), None)
        return None

    def stored_from_outside(self, m: Module, name: str) -> Optional[Loc]:
        """Where a module the build read assigns ``name`` as an attribute of module ``m``
        (``common.STEP = 8`` after ``from . import common``), else None: Python's value of
        ``m.name`` is then not the one ``m``'s own statements give."""
        for at in self.cache.package_init_stores(name):
            return at
        for other in list(self.cache.modules.values()):
            for dotted, attr, at in other.attr_stores:
                if dotted is None:
                    if attr == name:  # stored through a module object found at run time
                        return at
                    continue
                if dotted[0] not in other.imports:
                    if attr == name and dotted[0] not in other.consts \
                            and dotted[0] not in other.scope.functions:
                        # `M.C = 3` with M no import of that module: M may hold a module
                        # object found at run time (`M = sys.modules[...]`)
                        return at
                    continue
                file, imported_name, _ = other.imports[dotted[0]]
                # the store's whole path from the imported module: it rebinds m's name when
                # it ends there (`common.STEP = 8`), and changes the object m's name holds in
                # place when it goes on through it (`common.C.value = 3`, or `C.value = 3`
                # after `from .common import C`)
                chain = ([imported_name] if imported_name is not None else []) + \
                    [*dotted[1:], attr]
                for part in chain:
                    sub = submodule(file, part)
                    if sub is None:
                        if part == name and os.path.abspath(file) == os.path.abspath(m.path):
                            return at
                        break
                    file = sub
        return None

    def module_name(self, m: Module, name: str, node: ast.AST) -> tuple[K.Expr, Optional[Static]]:
        loc = self.loc(node)
        at = self.stored_from_outside(m, name)
        if at is not None:
            raise self.err(f"'{name}' of module '{_module_label(m)}' is assigned from another "
                           f"module ({at.file}:{at.line}), so its value is not the one the "
                           f"module's own statements give: bind it once, in its module",
                           node, check="unknown-name")
        if name in m.consts:
            return self.global_of(m, name, node), None
        if name in m.scope.dtypes:
            return K.DType(m.scope.dtypes[name], loc), None
        if name in m.scope.functions:
            return K.Const(None, loc), Static("func", (m, m.scope.functions[name]))
        if name in m.imports:
            sub, attr = self.imported(m, name)
            if attr is None:
                return K.Const(None, loc), Static("usermod", sub)
            return self.renamed_builtin(name, self.module_name(sub, attr, node), node)
        if name in m.assigns:
            e, st = self.module_assign(m, name)
            value = dataclasses.replace(e, loc=loc) if e is not None else K.Const(None, loc)
            return self.renamed_builtin(name, (value, st), node)
        alias = m.scope.alias(name)
        if alias is not None:
            return self.renamed_builtin(name, (K.Const(None, loc), Static("mod", alias)), node)
        f = m.submodule(name)
        if f is not None:  # `pkg.common` after `import pkg.common`
            return K.Const(None, loc), Static("usermod", self.cache.get(f))
        if name in PYTHON_BUILTINS:
            return K.Const(None, loc), Static("mod", f"builtins.{name}")
        if name in m.scope.other:
            raise self.err(f"module-level name '{name}' is not a compile-time value the kernel "
                           f"can read (it is bound in module-level control flow, by a tuple or "
                           f"augmented assignment, by `:=` or a match pattern, through globals(), "
                           f"by a function declaring it global, by an exec'd string, or as a "
                           f"class, or deleted, or its object is changed in place: "
                           f"`C.value = 3`, setattr, `sys.modules[...].C = 3`); "
                           f"Triton kernels read globals that are tl.constexpr values, dtypes, "
                           f"modules or functions", node, check="unknown-name")
        if m is not self.frame.module:
            raise self.err(f"module '{_module_label(m)}' has no attribute '{name}'", node,
                           check="unknown-name")
        raise self.err(f"name '{name}' is not defined here", node, check="unknown-name")

    def renamed_builtin(self, name: str, got: tuple[K.Expr, Optional[Static]],
                        node: ast.AST) -> tuple[K.Expr, Optional[Static]]:
        """``got``, the value of the module-level ``name``, unless it is one of Python's builtins
        bound under a name that Triton 3.6's builtin namespace does not hold (`rng = range`,
        `from builtins import min as mn`, `I = int`): Triton's global lookup takes a module-level
        name only when it is a tl.constexpr, a module, a jit function, a dtype, something of
        triton.language or one of those names (code_generator.global_lookup; "Cannot access
        global variable rng from within @jit'ed function"), and its dependency finder refuses a
        builtin function first ("Unsupported function referenced")."""
        st = got[1]
        if st is not None and st.kind == "mod" and isinstance(st.value, str) \
                and st.value.startswith("builtins.") and name not in TRITON_BUILTIN_NAMES \
                and st.value != "builtins.abs":  # refused under any name where it is called
            raise self.err(f"`{name}` is Python's {st.value[9:]} under another name, which a "
                           f"Triton 3.6 kernel cannot read (\"Cannot access global variable "
                           f"{name} from within @jit'ed function\"; a builtin function: "
                           f"\"Unsupported function referenced\"): call {st.value[9:]} by its "
                           f"own name", node, check="unknown-name")
        return got

    def imported(self, m: Module, name: str) -> tuple[Module, Optional[str]]:
        """(module, name in it or None for the module itself) of imported name ``name`` of
        ``m``; a name the module does not define is an error at the import (Python raises
        ImportError there)."""
        file, attr, at = m.imports[name]
        sub = self.cache.get(file)
        if attr is not None and not sub.defines(attr):
            raise TleError(f"cannot import name '{attr}' from '{_module_label(sub)}' ({sub.path}):"
                           f" it defines no '{attr}' (Python raises ImportError)", at,
                           check="bad-import")
        if attr is not None and m is not self.root:
            # (the kernel's own file is imported first: what it imports runs to its end, and a
            # module importing from it back runs while it is partially initialised)
            back = self.cache.import_back(sub, m.path)
            later = [ln for ln in sub.bound_lines.get(attr, ()) if back is not None and ln > back]
            if later:
                # a circular import: Python imports `m` at line `back` of `sub`, and `m` reads
                # the binding of `attr` before it (`sub` is partially initialised), not the
                # one after it that the frontend would read
                raise TleError(f"`{attr}` is imported from '{_module_label(sub)}', which imports "
                               f"this module back ({sub.path}:{back}) and binds '{attr}' again "
                               f"after that, at line {later[0]}: a circular import, where Python "
                               f"reads the binding before line {back} (a partially initialised "
                               f"module); bind '{attr}' once, before the import", at,
                               check="bad-import")
        return sub, attr

    def module_assign(self, m: Module, name: str) -> tuple[Optional[K.Expr], Optional[Static]]:
        """The value of module-level assignment ``name = expr`` of ``m``, evaluated once, as
        Python evaluates it when the module is imported (in ``m``'s names): a compile-time
        constant (a Global of ``m``'s), a dtype, a helper function, a module, a library name.
        Anything else (a runtime value, a pipe, ...) is an error at the assignment: Triton
        kernels read only such globals."""
        hit = m.resolved.get(name)
        if hit is not None:
            if hit[0] == "busy" and name in PYTHON_BUILTINS \
                    and len(m.bound_lines.get(name, ())) == 1:
                # `min = min`: the module binds the name nowhere before this assignment (and
                # nowhere after it: rebound-global), so Python reads the builtin there, as
                # `from builtins import min` binds it
                return None, Static("mod", f"builtins.{name}")
            if hit[0] == "busy":
                raise TleError(f"circular definition of module-level name '{name}' (Python "
                               f"raises NameError or reads a partially initialised module)",
                               hit[1], check="bad-import")
            return hit[1], hit[2]
        node = m.assigns[name]
        at = _loc(m.path, node)
        # Python evaluates the assignment where it stands; the frontend reads module names at
        # their last binding, so a name the module binds again after it (`prod2 = produce`,
        # then a second `def produce`) held another value when Python read it (the first def):
        # read at its last binding, a safe second def verified a kernel that runs the first
        for n in ast.walk(node):
            if isinstance(n, ast.Name):
                later = [ln for ln in m.bound_lines.get(n.id, ()) if ln > node.lineno]
                if later:
                    raise TleError(f"module-level name '{name}' = `{ast.unparse(node)}` reads "
                                   f"'{n.id}', which the module binds again at line {later[0]}, "
                                   f"after this assignment: Python reads the binding before it "
                                   f"(bind '{n.id}' once, or assign '{name}' after its last "
                                   f"binding)", _loc(m.path, n), check="rebound-global")
        m.resolved[name] = ("busy", at)
        # the constants the expression reads are not the kernel's (only its value is)
        saved = (self.out, self.sequential, self.in_partition, dict(self.consts),
                 dict(self.const_ids), self.not_triton)
        self.out, self.sequential, self.in_partition = [], 0, False
        self.not_triton = True  # Python evaluates it, not Triton
        self.frames.append(Frame(m, "", {}, "<module>"))
        try:
            e, st = self.expr(node)
            emitted = self.out
        except BaseException:
            del m.resolved[name]
            raise
        finally:
            self.frames.pop()
            self.out, self.sequential, self.in_partition = saved[:3]
            self.consts, self.const_ids, self.not_triton = saved[3:]
        v = fold(e)
        if st is not None and st.kind in ("func", "usermod", "mod"):
            result: tuple = (None, st)
        elif isinstance(e, K.DType):
            result = (e, None)
        elif not emitted and isinstance(v, (bool, int, float)):
            m.consts[name] = v
            result = (self.global_of(m, name, node), None)
        elif not emitted and isinstance(v, str):
            del m.resolved[name]
            raise TleError(f"module-level name '{name}' = `{ast.unparse(node)}` holds the string "
                           f"{v!r}: kernels read numbers and booleans from module constants, not "
                           f"strings; write the string where it is used (e.g. "
                           f"tle.pipe(..., barrier={v!r}))", at, check="unknown-name")
        else:
            del m.resolved[name]
            raise TleError(f"module-level name '{name}' = `{ast.unparse(node)}` is not a "
                           f"compile-time value: Triton kernels read globals that are tl.constexpr "
                           f"values (`{name} = tl.constexpr(...)`), dtypes, modules or functions",
                           at, check="unknown-name")
        m.resolved[name] = ("done",) + result
        return result

    # -- statements -------------------------------------------------------------------------
    def stmt(self, s: ast.stmt) -> None:
        calls_helper = self._calls_helper(s)
        self.sequential += calls_helper
        try:
            m = getattr(self, f"s_{type(s).__name__}", None)
            if m is None:
                raise self.err(f"`{ast.unparse(s).splitlines()[0]}` is not supported in a kernel",
                               s, check="unsupported-statement")
            m(s)
        finally:
            self.sequential -= calls_helper

    def _calls_helper(self, s: ast.stmt) -> bool:
        """Whether statement ``s`` is built in sequential form: it calls a helper that is not
        :meth:`effect_free`, or an atomic beside another memory access (a load, a store,
        another atomic). The lowering emits an atomic as a statement of its own before the
        statement that reads its value, so a load Python evaluates before it in the same
        statement (``tl.load(p) + tl.atomic_add(p, 1.0)``) ran after it, and two atomics ran
        in the order of their operation's parameters (``tl.where(x=..., y=..., condition=...)``
        evaluated the condition's first); bound to temporaries in order, they run as Python
        evaluates them (and Triton, which evaluates keyword arguments first: a call mixing the
        two is refused, :meth:`call_arguments`)."""
        if isinstance(s, (ast.For, ast.If, ast.While)):
            nodes = [s.iter] if isinstance(s, ast.For) else [s.test]
        else:
            nodes = [s]
        atomics = accesses = verbs = helpers = 0
        for root in nodes:
            for n in ast.walk(root):
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) \
                        and n.func.attr in VERBS:
                    # two pipe events in one statement (`tl.store(value=...r.wait(p)...,
                    # pointer=...r.wait(p + 1)...)`): bound in Python's order, they run in it,
                    # where the lowering evaluated a tl call's operands in its parameters' order
                    # (adversarial round 63)
                    # a commit beside a wait too (`tl.load(W) + tl.load(first(x_ptr,
                    # w.commit(p)))`): an effect-free helper's argument was bound before the
                    # statement, the commit before the wait Python runs first (round 64)
                    verbs += 1
                if isinstance(n, ast.Call) and isinstance(n.func, (ast.Name, ast.Attribute)):
                    try:
                        _, st = self.callee(n.func)
                    except TleError:
                        continue
                    if st is not None and st.kind == "func":
                        if not self.effect_free(*st.value):
                            return True
                        # an effect-free helper binds its arguments before the statement: one
                        # that performs an effect ran before the statement's other effects
                        # (adversarial round 64)
                        helpers += 1
                        continue
                    if st is not None and st.kind == "mod" and isinstance(st.value, str):
                        path = st.value
                    elif st is None and isinstance(n.func, ast.Attribute):
                        path = f"tl.{n.func.attr}"  # a tensor's method: `ptr.atomic_add(v)`
                    else:
                        continue
                    atomics += path.startswith("tl.atomic_")
                    accesses += path in MEMORY_CALLS or path.startswith("tl.atomic_")
        return (atomics > 0 and accesses > 1 or verbs > 1
                or helpers > 0 and verbs > 0 and verbs + accesses > 1)

    def effect_free(self, m: "Module", fdef: ast.FunctionDef, seen: frozenset = frozenset()
                    ) -> bool:
        """Whether a helper only computes values: every call in it is a tile operation that
        neither touches memory nor synchronises (:data:`PURE_CALLS`), a method in
        :data:`PURE_METHODS`, or another such helper. Inlining one needs no sequential form:
        nothing in it can be observed out of Python's order. Anything not known to be pure
        (a pipe verb, a load or store, a function passed as an argument) counts as an effect."""
        key = (m.path, fdef.name)
        if key in seen:
            return False
        if key in self.pure:
            return self.pure[key]
        answer = self._effect_free(m, fdef, seen | {key})
        if not seen:  # an answer inside a recursion may assume its callers impure: not kept
            self.pure[key] = answer
        return answer

    def _effect_free(self, m: "Module", fdef: ast.FunctionDef, seen: frozenset) -> bool:
        local = {p.arg for p in fdef.args.posonlyargs + fdef.args.args + fdef.args.kwonlyargs}
        local |= {t.id for t in ast.walk(fdef)
                  if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)}
        for n in ast.walk(fdef):
            if not isinstance(n, ast.Call):
                continue
            f = n.func
            if isinstance(f, ast.Attribute) and f.attr in PURE_METHODS and (
                    self._static_path(m, f.value) is None):
                continue  # x.to(...) on a value
            if isinstance(f, ast.Name) and f.id in local:
                return False  # a function passed in
            target = self._static_path(m, f)
            if target is None:
                return False
            kind, value = target
            if kind == "func":
                if not self.effect_free(*value, seen):
                    return False
            elif value not in PURE_CALLS:
                return False
        return True

    def _static_path(self, m: "Module", f: ast.expr) -> Optional[tuple[str, object]]:
        """What a name or attribute chain in module ``m`` names, without evaluating anything:
        ``("func", (module, def))`` for a user function, ``("path", "tl.exp2")`` for a library
        one (canonical), None when it is not a module-level name."""
        if isinstance(f, ast.Name):
            if f.id in m.scope.functions:
                return "func", (m, m.scope.functions[f.id])
            if f.id in m.imports:
                try:
                    sub, attr = self.imported(m, f.id)
                except TleError:
                    return None
                if attr is None:
                    return "usermod", sub
                return self._static_path(sub, ast.Name(attr, ast.Load()))
            if f.id in m.assigns:
                try:
                    _, st = self.module_assign(m, f.id)
                except TleError:
                    return None
                if st is None:
                    return None
                return {"func": ("func", st.value), "usermod": ("usermod", st.value),
                        "mod": ("path", st.value)}[st.kind]
            alias = m.scope.alias(f.id)
            if alias is not None:
                return "path", canon(alias)
            if f.id in ("range", "int", "float", "min", "max", "len", "abs"):
                return "path", f"builtins.{f.id}"
            return None
        if isinstance(f, ast.Attribute):
            base = self._static_path(m, f.value)
            if base is None:
                return None
            kind, value = base
            if kind == "path":
                return "path", canon(f"{value}.{f.attr}")
            if kind == "usermod":
                return self._static_path(value, ast.Name(f.attr, ast.Load()))
        return None

    def triton_builtin(self, func: ast.expr) -> bool:
        """Whether the called ``func`` is a bare name that Triton 3.6 reads from its builtin
        namespace (code_generator.builtin_namespace: min, max, print, range, ...): one that
        neither the function's locals nor its module bind, which Triton's lookup tries first."""
        if not isinstance(func, ast.Name) or func.id in self.frame.env:
            return False
        m, name = self.frame.module, func.id
        return not (name in m.consts or name in m.scope.dtypes or name in m.scope.functions
                    or name in m.imports or name in m.assigns or name in m.scope.other
                    or m.scope.alias(name) is not None or m.submodule(name) is not None)

    def callee(self, func: ast.expr) -> tuple[K.Expr, Optional[Static]]:
        """A call's function without evaluating anything (names and attribute chains)."""
        if isinstance(func, ast.Name):
            if func.id in self.frame.env:
                return K.Const(None), self.frame.env[func.id]
            return self.module_name(self.frame.module, func.id, func)
        if isinstance(func, ast.Attribute):
            _, base = self.callee(func.value)
            if base is not None and base.kind == "mod":
                return K.Const(None), Static("mod", canon(f"{base.value}.{func.attr}"))
            if base is not None and base.kind == "usermod":
                return self.module_name(base.value, func.attr, func)
        return K.Const(None), None

    def s_Expr(self, s: ast.Expr) -> None:
        if isinstance(s.value, ast.Constant):
            return  # a docstring
        e, _ = self.expr(s.value)
        if isinstance(e, (K.Name, K.Const, K.Global)):
            return  # nothing runs
        self.emit(K.Eval(e, self.loc(s)))

    def s_Pass(self, s: ast.Pass) -> None:
        pass

    def assign(self, target: ast.expr, e: K.Expr, st: Optional[Static], node: ast.AST) -> None:
        f = self.frame
        if isinstance(target, ast.Name) and target.id in f.carried:
            self.assign_carried(target.id, e, st, node)
            return
        if isinstance(target, ast.Name):
            if isinstance(node, ast.AnnAssign) and _constexpr_annotation(node):
                f.constexprs.add(target.id)
            else:
                self.constexpr_rebound_in_region(target.id, node)
                f.constexprs.discard(target.id)
            if st is not None and st.kind == "method" and isinstance(st.value[0], Static):
                raise self.verb_as_value(node.value if isinstance(node, (ast.Assign, ast.AnnAssign))
                                         else node)
            if st is not None and st.kind in ("func", "mod", "usermod", "method"):
                raise self.err(f"`{target.id}` would hold a {st.kind}: call it directly",
                               node, check="verb-as-value" if st.kind == "method" else "frontend")
            if st is not None and st.kind == "buffer" and st.value[1] is None:
                # a free buffer gets the name of its variable
                named = self.name_buffer(st, target.id, node)
                st = Static("buffer", (st.value[0], named))
                e = K.BufferRef(named, self.loc(node))
            if st is not None and st.kind == "tuple":
                e = self.without_field_buffers(e, st)  # (ring_buf,): no buffer of the KIR
            self.string_binding(target.id, self.wide_fold(e), node)
            if self.in_partition and isinstance(node, ast.Assign) and st is None \
                    and isinstance(e, K.TupleExpr):
                # `pr = (100, 1)`: a plain assignment makes each number of the tuple a tensor
                e = _tensor_items(e)
            e, st = self.snapshot(e, st, node)
            shape = self.tuple_shape(e, st)
            f.env[target.id] = st
            f.placeholders.discard(target.id)
            self.static_vars.discard(f.kir(target.id))  # rebound: a tensor, no constexpr
            f.undefined.pop(target.id, None)
            f.lost.discard(target.id)
            f.lost_buffers.pop(target.id, None)
            f.lost_by.pop(target.id, None)
            self.bound_at[f.kir(target.id)] = node
            if shape is None:
                self.tuple_shapes.pop(f.kir(target.id), None)
            else:
                self.tuple_shapes[f.kir(target.id)] = shape
            if st is not None and st.kind in ("handle", "pipe", "buffer"):
                return  # compile-time values: uses are resolved to them, nothing runs
            self.emit(K.Assign(f.kir(target.id), e, self.loc(node)))
            self.note_runtime(f.kir(target.id), e)
            if isinstance(e, (K.Event, K.ResultSlot)) or (isinstance(e, K.Name)
                                                         and e.id in self.slot_names):
                self.slot_names.add(f.kir(target.id))
            else:
                self.slot_names.discard(f.kir(target.id))
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            if not isinstance(e, K.TupleExpr) and st is not None and st.kind == "tuple" \
                    and len(st.value) == len(target.elts):
                # a name holding a tuple (`kv, x_ptr = args`): its items, as subscripts
                e = K.TupleExpr(tuple(self.item_of(e, st, k, e.loc)[0]
                                      for k in range(len(st.value))), e.loc)
            elif not isinstance(e, K.TupleExpr) and (st is None or st.kind != "tuple"):
                # a tuple of runtime values only (`y_ptr, n = rest` with the partition argument
                # `rest = (y_ptr, N)`, `x_ptr, n = inner[1]`): its items are subscripts, as
                # `rest[0]` reads them
                shape = self.tuple_shape(e, st)
                if shape is not None and len(shape) == len(target.elts):
                    e = K.TupleExpr(tuple(K.Subscript(e, (k,), e.loc)
                                          for k in range(len(shape))), e.loc)
            if not isinstance(e, K.TupleExpr) or len(e.items) != len(target.elts):
                raise self.err("tuple assignment needs a tuple of the same length on the right",
                               node)
            items = st.value if st is not None and st.kind == "tuple" else [None] * len(e.items)
            values = list(e.items)
            # Python evaluates the whole right side before it assigns: `a, b = b, a` must not
            # read the `a` it has just assigned, so a clash binds the items to temporaries first.
            assigned = {f.kir(n.id) for t in target.elts for n in ast.walk(t)
                        if isinstance(n, ast.Name)}
            if len(values) > 1 and any(isinstance(n, K.Name) and n.id in assigned
                                       for x in values for n in K.walk_expr(x)):
                for k, (x, sx) in enumerate(zip(values, items)):
                    if sx is None and not isinstance(x, (K.Const, K.Global, K.DType)):
                        tmp = self.fresh("t")
                        self.emit(K.Assign(f.kir(tmp), x, x.loc))
                        f.env[tmp] = None
                        values[k] = K.Name(f.kir(tmp), x.loc)
            for t, x, sx in zip(target.elts, values, items):
                self.assign(t, x, sx, node)
            return
        raise self.err(f"`{ast.unparse(target)} = ...`: only names (and tuples of names) can be "
                       f"assigned in a kernel", node)

    def s_Assign(self, s: ast.Assign) -> None:
        if len(s.targets) != 1:
            raise self.err("chained assignment is not supported", s)
        tgt = s.targets[0]
        if not self.in_partition and isinstance(s.value, ast.Call):
            _, st = self.callee(s.value.func)
            if st is not None and st.kind == "mod" and st.value == "tle_compiler.pipe":
                if not isinstance(tgt, ast.Name):
                    raise self.err("assign a tle.pipe to a plain name", s, check="bad-pipe")
                pipe = self.declare_pipe(s.value, tgt.id)
                self.frame.env[tgt.id] = Static("pipe", pipe)
                return
        e, st = self.expr(s.value)
        e, st = self.fold_targets(tgt, e, st)
        self.assign(tgt, e, st, s)

    def fold_targets(self, tgt: ast.expr, e: K.Expr, st: Optional[Static]) \
            -> tuple[K.Expr, Optional[Static]]:
        """``e`` with what each name of ``tgt`` receives folded by :meth:`fold_once`: a
        name, or the names of a tuple target item by item (`a, b = 1, 0`, `(a, b), c = (1,
        0), 2`). The items are constants, so folding them cannot change what the right side
        reads before the names are bound. Unfolded, an `if b:` around events was decided by
        the protocol view and kept by the kernel IR, and the kernel was refused at the `if`
        (constexpr-if), though `b` holds 0 either way."""
        if isinstance(tgt, ast.Name):
            return self.fold_once(tgt, e, st) if st is None else (e, st)
        if not (isinstance(tgt, (ast.Tuple, ast.List)) and isinstance(e, K.TupleExpr)
                and len(e.items) == len(tgt.elts)):
            return e, st
        items = list(st.value) if st is not None and st.kind == "tuple" \
            else [None] * len(e.items)
        if len(items) != len(e.items):
            return e, st
        values = list(e.items)
        for k, t in enumerate(tgt.elts):
            values[k], items[k] = self.fold_targets(t, values[k], items[k])
        return K.TupleExpr(tuple(values), e.loc), \
            Static("tuple", tuple(items)) if any(items) else None

    def fold_once(self, tgt: ast.Name, e: K.Expr, st: Optional[Static],
                  kernel_body: bool = False) -> tuple[K.Expr, Optional[Static]]:
        """``e`` as a constant when the partition binds ``tgt`` only here and ``e`` folds to a
        compile-time bool or int. Such a name (`big = C > 2` in a build binding C, `on =
        True`) is read by the protocol view as that constant, which decides an `if big:`
        around events; the kernel IR must decide it alike, or it kept both branches and the
        lowering stopped with an internal error comparing the two views' events. Triton holds
        such a name as a tensor of that value (a plain assignment converts a constant), so the
        same branch runs; where Triton needs a constexpr or refuses a tensor (`tl.arange(0,
        B)`, `b and p`, `q ** 2`), the name is refused (local_tensors.BuildRules).
        ``kernel_body``: fold in the kernel body too (`M: tl.constexpr = -7`, which Triton keeps
        a constexpr: the lowered kernel must not hold it as an i32 tensor, whose `%` and `//`
        are C's where the verifier reads Python's)."""
        if (self.in_partition or kernel_body) and len(self.frame.stores.get(tgt.id, ())) == 1:
            value = fold(e)
            if isinstance(value, (bool, int)):
                st = Static("const", K.Const(value, e.loc))
                return st.value, st
        return e, st

    def s_AnnAssign(self, s: ast.AnnAssign) -> None:
        # Triton 3.6 evaluates the annotation first (visit_AnnAssign), Python does not (of a
        # local name): a call there (a helper's pipe events) runs in one and not the other
        call = next((n for n in ast.walk(s.annotation)
                     if isinstance(n, (ast.Call, ast.NamedExpr))), None)
        if call is not None:
            raise self.err(f"`{ast.unparse(call)}` in the annotation of "
                           f"`{ast.unparse(s.target)}`: Triton 3.6 evaluates an annotation "
                           f"(and runs what it calls) where Python does not; annotate with a "
                           f"name (tl.constexpr) and call it as a statement", call,
                           check="unsupported-expression")
        if s.value is None:
            return
        if _constexpr_annotation(s):
            self.constexpr_annotation_names_triton(s)
        e, st = self.expr(s.value)
        if isinstance(s.target, ast.Name) and _constexpr_annotation(s):
            self.constexpr_rebinding(s)
            self.constexpr_of_tensor(s, e)
        if st is None and isinstance(s.target, ast.Name):
            # `b: tl.constexpr = 1` stays a constexpr in Triton (a plain `b = 1` is a tensor):
            # folded, its uses are the constant, which `and` / `or` / `not` take as Triton does
            e, st = self.fold_once(s.target, e, st, kernel_body=_constexpr_annotation(s))
        if st is None and isinstance(s.target, ast.Name) and _constexpr_annotation(s) \
                and self.constexpr_in_place(e):
            # `q: tl.constexpr = C - 4` that does not fold (C a constexpr parameter): its uses
            # read the expression in place, a constexpr in the lowered Gluon as in Triton. Bound
            # to the name, the Gluon held an i32 tensor (`q = (C - 4)`): `q % 2` took C's -1
            # where Triton and the verifier take Python's 1 (an `if` around events that never
            # ran: a hang), and `tl.arange(0, q)` did not compile
            st = Static("const", e)
        elif st is None and isinstance(s.target, ast.Name) and _constexpr_annotation(s) \
                and self.in_partition and fold(e) is None and not self.is_runtime(e) \
                and self.constexpr_in_place(e, rebound=True):
            # the expression reads a name the function binds again (`C = 7` after it): read in
            # place it would see the new value, and assigned, the lowered Gluon holds an i32
            # tensor (`q % 2` is C's -1 where Triton's constexpr, and the verdict, take 1)
            raise self.err(f"`{ast.unparse(s).strip()}`: the lowered kernel cannot keep "
                           f"'{s.target.id}' a constexpr, as Triton does: `{ast.unparse(s.value)}` "
                           f"reads a name this function binds again, and the lowering would "
                           f"assign it as an i32 tensor, whose `%`, `//` and shapes differ from "
                           f"the constexpr's; compute it from names bound once", s,
                           check="unsupported-expression")
        self.assign(s.target, e, st, s)

    def constexpr_annotation_names_triton(self, s: ast.AnnAssign) -> None:
        """Refuse `name: constexpr = ...` whose annotation, spelt as Triton's constexpr, names
        something else here (`from typing import Any as constexpr`, a module's `constexpr =
        int`): Triton 3.6's visit_AnnAssign compares the annotation's value with its constexpr
        class and hands any other annotation to visit_Assign, which makes the number a tensor,
        where the frontend (and the lowering, which folds it) read a constexpr."""
        try:
            _, st = self.callee(s.annotation)
        except TleError:
            st = None
        path = st.value if st is not None and st.kind == "mod" else None
        if isinstance(path, str) and path.rsplit(".", 1)[-1] == "constexpr" and (
                is_triton(path) or path.startswith(("gl.", "triton."))):
            return
        raise self.err(f"`{ast.unparse(s).strip()}`: the annotation "
                       f"`{ast.unparse(s.annotation)}` is not Triton's tl.constexpr here, so "
                       f"Triton 3.6 reads the line as a plain assignment (a tensor of the "
                       f"number); annotate with tl.constexpr (or bind it plainly)", s,
                       check="unsupported-expression")

    def constexpr_in_place(self, e: K.Expr, rebound: bool = False) -> bool:
        """Whether ``e`` is arithmetic on constants, enclosing tl.static_range variables and
        names that are no runtime value of a function being built (the partition, or a helper
        it calls) that never assigns them (its constexpr parameters): reading ``e`` where a name
        bound to it is used computes the same value (nothing can rebind those names in between),
        and as Triton computes it, a constexpr. ``rebound``: names the function assigns count
        too (whether ``e`` is such arithmetic but for them)."""
        names = {fr.kir(n): (fr, n) for fr in self.frames for n in fr.env}
        for x in K.walk_expr(e):
            if isinstance(x, (K.BinOp, K.UnaryOp, K.Compare, K.BoolOp, K.Const, K.Global)):
                continue
            if isinstance(x, K.Name) and x.id in self.static_vars:
                continue
            if isinstance(x, K.Name) and x.id not in self.runtime and x.id in names:
                fr, n = names[x.id]
                if (rebound or n not in fr.stores) and fr.env.get(n) is None:
                    continue
            return False
        return True

    def constexpr_rebinding(self, s: ast.AnnAssign) -> None:
        """Refuse `name: tl.constexpr = ...` where Triton 3.6's visit_AnnAssign finds the name
        already bound in the function's scope ("... is already defined. constexpr cannot be
        reassigned"): a parameter, a name bound before (plainly or annotated), a loop variable,
        or a name the body of a tl.static_range that runs more than once annotates (the loop is
        unrolled in one scope: the second iteration finds the first one's binding). The body of
        a range / while loop and a branch of an `if` on a runtime value are scopes of their own
        (a name bound there before is not in the next iteration's or the other branch's).
        Read as a plain rebinding, such a kernel was verified."""
        f, name = self.frame, s.target.id
        if name in f.env and name not in f.placeholders:
            raise self.err(f"`{ast.unparse(s).strip()}`: '{name}' is already bound here, and "
                           f"Triton 3.6 refuses to bind it again as a constexpr (\"{name} is "
                           f"already defined. constexpr cannot be reassigned\"): use another "
                           f"name", s, check="unsupported-expression")
        for region in reversed(f.regions):
            if region[0] == "region":
                return
            if region[1] is None or region[1] > 1:
                runs = "more than once" if region[1] is not None else "for every value of its " \
                    "bound (more than once for most)"
                raise self.err(f"`{ast.unparse(s).strip()}` in the body of a tl.static_range "
                               f"loop, which Triton 3.6 unrolls in one scope: the body runs "
                               f"{runs}, and the second iteration finds '{name}' bound by the "
                               f"first (\"{name} is already defined. constexpr cannot be "
                               f"reassigned\"); bind it before the loop", s,
                               check="unsupported-expression")

    def s_AugAssign(self, s: ast.AugAssign) -> None:
        if not isinstance(s.target, ast.Name):
            raise self.err("augmented assignment to a name only", s)
        cur, _ = self.lookup(s.target.id, s.target)
        rhs, _ = self.expr(s.value)
        e = K.BinOp(_BINOPS[type(s.op)], cur, rhs, self.loc(s))
        self.assign(s.target, e, None, s)

    def s_For(self, s: ast.For) -> None:
        if s.orelse:
            raise self.err(f"`for ... else` is not supported: Triton rejects it after a range / "
                           f"tl.range loop (\"Don't know what to do with else after for\") and "
                           f"runs it inside every iteration of a tl.static_range loop; move the "
                           f"else body after the loop (line {s.orelse[0].lineno})", s,
                           check="unsupported-control-flow")
        it = s.iter
        path = None
        if isinstance(it, ast.Call):
            _, st = self.callee(it.func)
            path = st.value if st is not None and st.kind == "mod" else None
        if path not in RANGES or not isinstance(s.target, ast.Name):
            self.unsupported_loop(s, path)
        start, stop, step, options = self.range_args(path, it, s)
        if not RANGES[path]:
            self.tensor_negative_step(it, step, s)
        elif self.indexes_by(s.body, s.target.id):
            trips = _trip_count(start, stop, step)
            if trips:
                return self.unrolled(s, range(*(fold(x) for x in (start, stop, step))))
        f = self.frame
        carried = self.carry_tuples(s.body, s)
        stored = self.rebound(s.body, s)
        before = dict(f.env)
        f.env[s.target.id] = None
        self.tuple_shapes.pop(f.kir(s.target.id), None)
        if not RANGES[path]:
            self.runtime.add(f.kir(s.target.id))
        f.regions.append(("static", _trip_count(start, stop, step)) if RANGES[path]
                         else ("region", self.constexpr_names()))
        static_vars = set(self.static_vars)
        if RANGES[path]:
            self.static_vars.add(f.kir(s.target.id))
            f.module_reads.append({})
        else:
            self.static_vars.discard(f.kir(s.target.id))
        self.depth += 1
        self.loop_depth += 1
        try:
            body = self.block(s.body)
        finally:
            self.depth -= 1
            self.loop_depth -= 1
            f.regions.pop()
            reads = f.module_reads.pop() if RANGES[path] else None
            self.static_vars = static_vars
            for name in carried:
                f.carried.pop(name, None)
                f.carried_by.pop(name, None)
        if reads:
            self.module_read_rebound(reads, stored, _trip_count(start, stop, step), s)
        self.same_each_iteration(before, stored, s)
        end = dict(f.env)
        self._merge(before, [end])
        f.env[s.target.id] = None
        if RANGES[path] and _trip_count(start, stop, step) == 0:
            # a tl.static_range of no iteration: Triton 3.6 unrolls it to nothing, so neither
            # its variable nor a name its body binds is bound after it (a read is Triton's
            # "NameError: j is not defined"; verified until adversarial round 57), and a name
            # bound before keeps its value (`j = 5`, then `tl.static_range(0)` over `j`)
            why = f"the tl.static_range loop at line {s.lineno} runs no iteration"
            if s.target.id in before:
                f.env[s.target.id] = before[s.target.id]
            else:
                f.env.pop(s.target.id, None)
                f.undefined[s.target.id] = (f"'{s.target.id}' is the variable of a loop that "
                                            f"binds it to nothing: {why}")
            self.undefined_after(before, s, f"it is bound only inside the loop at line "
                                            f"{s.lineno}, and {why}")
        if not RANGES[path]:  # (a static_range loop is unrolled: its names stay, as in Python)
            self.undefined_after(before, s, f"it is bound only inside the loop at line "
                                            f"{s.lineno}")
            self.poisoned_after(before, [end])
            # Triton binds the variable to a placeholder (`ub.poison`) before the loop and
            # leaves it so after it, whether or not the name was bound before the loop: a read
            # after it reads an undefined value (Python's is the last value, or the one before)
            f.env.pop(s.target.id, None)
            f.undefined[s.target.id] = (f"'{s.target.id}' is the variable of the loop at "
                                        f"line {s.lineno}")
        self.emit(K.For(f.kir(s.target.id), start, stop, step, body, RANGES[path], self.loc(s),
                        options))

    def indexes_by(self, body: list[ast.stmt], var: str, depth: int = 0) -> bool:
        """Whether ``body`` (of a tl.static_range loop over ``var``) subscripts with an index
        that reads ``var`` (`ab[j]`, `(s0, s1)[j % 2]`), itself or in a helper it passes
        ``var`` to (`pick(ab, j)`): a tuple's item picked per iteration, which Triton 3.6 does
        (the variable is a constexpr in each unrolled iteration, and a helper is specialised
        to it). The body, built once with the variable a name, could not pick it (see
        :meth:`unrolled`)."""
        def reads(x: ast.AST) -> bool:
            return any(isinstance(n, ast.Name) and n.id == var for n in ast.walk(x))

        for n in _walk_no_defs(body):
            if isinstance(n, ast.Subscript) and reads(n.slice):
                return True
            if not isinstance(n, ast.Call) or depth >= 8:
                continue
            try:
                _, fst = self.callee(n.func)
            except TleError:
                continue
            if fst is None or fst.kind != "func":
                continue
            fdef = fst.value[1]
            names = [a.arg for a in fdef.args.posonlyargs + fdef.args.args]
            given = [names[i] for i, a in enumerate(n.args[:len(names)]) if reads(a)]
            given += [k.arg for k in n.keywords if k.arg is not None and reads(k.value)]
            if any(self.indexes_by(fdef.body, name, depth + 1) for name in given):
                return True
        return False

    def unrolled(self, s: ast.For, values: range) -> None:
        """The tl.static_range loop ``s`` over ``values`` (at least one), built as Triton 3.6
        generates it: its body once per value, in the enclosing scope, the variable bound to
        the value as a constexpr (and left at the last one after the loop). Used where the body
        indexes by the variable (:meth:`indexes_by`): each iteration's `ab[j]` is then the item
        it names, a tensor, a slot's field or a pipe handle alike, and the names the body
        binds are seen by the next iteration as they are in Triton."""
        f = self.frame
        name = s.target.id
        f.regions.append(("static", len(values)))
        self.depth += 1
        self.loop_depth += 1
        out: list[K.Stmt] = []
        size = 0
        try:
            for v in values:
                f.env[name] = Static("const", K.Const(v, self.loc(s.target)))
                self.tuple_shapes.pop(f.kir(name), None)
                self.runtime.discard(f.kir(name))
                # a constexpr, whatever bound the name before (`j = 5`, a tensor, is no longer
                # the binding the tensor rules read)
                self.bound_at.pop(f.kir(name), None)
                body = self.block(s.body)
                out.extend(body)
                size += _unrolled_size(body)  # each iteration's statements counted once
                if size > _MAX_UNROLLED:
                    # the bound triton_rules.static_range_rule holds a loop kept whole to
                    raise self.err(f"`{ast.unparse(s.iter)}` unrolls to more than "
                                   f"{_MAX_UNROLLED} statements; Triton 3.6 unrolls a "
                                   f"tl.static_range in the kernel's source, and its compile "
                                   f"time grows with the square of that: write `range` or "
                                   f"`tl.range` for a loop of many iterations", s,
                                   check="bad-loop")
        finally:
            self.depth -= 1
            self.loop_depth -= 1
            f.regions.pop()
        for stmt in out:
            self.emit(stmt)

    #: calls whose value is a runtime one whatever their arguments
    RUNTIME_OPS = frozenset({"tl.load", "tl.program_id", "tl.num_programs", "tl.atomic_add",
                             "tl.atomic_max", "tl.atomic_min", "tl.atomic_cas", "tl.atomic_xchg"})

    def constexpr_argument(self, a: ast.expr) -> bool:
        """Whether the argument ``a`` of a helper's call (the caller's frame building it) is a
        constexpr in Triton 3.6, which a jit function's parameter then is: a number written in
        the call (signed or not), a name the caller holds as a constexpr (its constexpr
        parameter, a `tl.constexpr` binding, a tl.static_range variable), or operators on those
        alone."""
        if isinstance(a, ast.Constant):
            return type(a.value) in (int, float, bool)
        if isinstance(a, ast.Name):
            # (the variable of an enclosing tl.static_range loop: a constexpr in each unrolled
            # iteration)
            return a.id in self.frame.constexprs or self.frame.kir(a.id) in self.static_vars
        if isinstance(a, ast.UnaryOp) and isinstance(a.op, (ast.USub, ast.UAdd, ast.Invert)):
            return self.constexpr_argument(a.operand)
        if isinstance(a, ast.BinOp):
            return self.constexpr_argument(a.left) and self.constexpr_argument(a.right)
        return False

    def static_arithmetic(self, e: K.Expr) -> bool:
        """Whether ``e`` is arithmetic (operators, comparisons, `and` / `or` / `not`) on constants
        and the variables of enclosing tl.static_range loops only: a constexpr in Triton (and in
        the lowered Gluon, read in place), and no call, subscript or event, so reading it in
        place of a helper's parameter computes what binding it did."""
        return all(isinstance(x, (K.BinOp, K.UnaryOp, K.Compare, K.BoolOp, K.Const, K.Global))
                   or isinstance(x, K.Name) and x.id in self.static_vars
                   for x in K.walk_expr(e))

    def is_runtime(self, e: K.Expr) -> bool:
        """Whether ``e`` is certainly a runtime value (see ``self.runtime``); a value of
        constexprs and constants only, or one this cannot tell, is not."""
        for x in K.walk_expr(e):
            if isinstance(x, K.Name) and x.id in self.runtime:
                return True
            if isinstance(x, K.Op) and x.name in self.RUNTIME_OPS:
                return True
            if isinstance(x, (K.Event, K.IsClosed)):
                return True
        return False

    def note_runtime(self, kir_name: str, e: K.Expr) -> None:
        """``kir_name`` is bound to ``e``: a runtime value if ``e`` is one."""
        if self.is_runtime(e):
            self.runtime.add(kir_name)
        else:
            self.runtime.discard(kir_name)

    def undefined_after(self, before: dict, s: ast.stmt, why: str,
                        names: Optional[set] = None) -> None:
        """After a range / tl.range / while loop (or an ``if`` on a runtime condition, for
        ``names``: those one branch binds), the names bound in it that were not bound before it
        are not defined in Triton, which carries out of an scf.for / scf.while / scf.if only
        the values bound before it (or, for an ``if``, in both branches), while Python keeps
        them: a read after it is refused (lookup), not verified as Python runs it and then
        refused by Triton's compile ("NameError: ... is not defined"). Compile-time values (a
        pipe, a handle, a buffer, a function) are resolved by the frontend and stay."""
        f = self.frame
        for name in sorted(set(f.env) - set(before) if names is None else names):
            st = f.env.get(name)
            if name in before or name in f.carried or f.kir(name) in self.slot_names or (
                    st is not None and st.kind not in ("tuple", "const")):
                continue
            f.env.pop(name, None)
            self.tuple_shapes.pop(f.kir(name), None)
            f.undefined[name] = why

    def poisoned_after(self, before: dict, ends: list[dict]) -> None:
        """After a run-time loop or ``if`` (an scf region), a name bound before it that is
        undefined at the end of one of its paths (``ends``: the environments there), as the
        variable of a run-time loop inside is (`j = 0; while ...: for j in range(3): ...`), is
        undefined after it too: the region yields Triton's placeholder (`ub.poison`) for it on
        that path, and a read after it reads an undefined value (Python's, the loop's last)."""
        f = self.frame
        for name in sorted(before):
            if name in f.undefined and any(name not in end for end in ends):
                f.env.pop(name, None)

    def range_args(self, path: str, it: ast.Call, s: ast.For
                   ) -> tuple[K.Expr, K.Expr, K.Expr, tuple[tuple[str, K.Expr], ...]]:
        """(start, stop, step, options) of a range / tl.range / tl.static_range call, bound as
        Triton binds them (``options``: tl.range's loop options given a value other than their
        default); a call Triton (or Python) would reject is an error."""
        text = ast.unparse(it)
        fn = "range" if path == "builtins.range" else path.replace("gl.", "tl.", 1)
        if path == "builtins.range" and it.keywords:
            raise self.err(f"`{text}`: Python's range takes no keyword arguments (Triton ignores "
                           f"them, so the loop would run with the default step); write the step "
                           f"as the third positional argument, or use tl.range(..., step=...)",
                           s, check="bad-loop")
        if any(isinstance(a, ast.Starred) for a in it.args) or any(
                k.arg is None for k in it.keywords):
            raise self.err(f"`{text}` must spell its arguments out (no *args or **kwargs)", s,
                           check="bad-loop")
        if path == "builtins.range":
            if not 1 <= len(it.args) <= 3:
                raise self.err(f"`{text}`: range takes 1 to 3 arguments, got {len(it.args)}", s,
                               check="bad-loop")
            names: tuple[str, ...] = ("arg1", "arg2", "step")
        else:
            names = STATIC_RANGE_ARGS if RANGES[path] else TL_RANGE_ARGS
            if len(it.args) > len(names):
                raise self.err(f"`{text}`: {fn} takes at most {len(names)} positional arguments "
                               f"({', '.join(names)}), got {len(it.args)}", s, check="bad-loop")
        if RANGES[path]:
            self.constexpr_operands(f"`{text}`", [*it.args, *(k.value for k in it.keywords)])
        # arguments are evaluated once, in Python's order (positional, then keywords)
        given: dict[str, K.Expr] = {n: self.value(a) for n, a in zip(names, it.args)}
        for kw in it.keywords:
            if kw.arg not in names:
                raise self.err(f"`{text}`: {fn} has no argument '{kw.arg}' (its arguments: "
                               f"{', '.join(names)})", s, check="bad-loop")
            if kw.arg in given:
                raise self.err(f"`{text}`: {fn} got two values for '{kw.arg}'", s,
                               check="bad-loop")
            given[kw.arg] = self.value(kw.value)
        if "arg1" not in given:
            raise self.err(f"`{text}`: {fn} needs at least its first argument", s,
                           check="bad-loop")

        def absent(name: str) -> bool:
            v = given.get(name)
            return v is None or isinstance(v, K.Const) and v.value is None

        if absent("arg2"):  # range(n)
            start, stop = K.Const(0, self.loc(it)), given["arg1"]
        else:
            start, stop = given["arg1"], given["arg2"]
        step = K.Const(1, self.loc(it)) if absent("step") else given["step"]
        if fold(step) == 0:
            raise self.err(f"the step of `{text}` must be a non-zero integer, got 0 (the loop "
                           f"would never end)", s, check="bad-loop")
        options = tuple((k, v) for k, v in given.items() if k in TL_RANGE_OPTIONS
                        and not absent(k)
                        and (fold(v) is None or fold(v) is not TL_RANGE_OPTIONS[k]))
        return start, stop, step, options

    def unsupported_loop(self, s: ast.For, path: Optional[str]) -> None:
        """A loop that is no range loop (or whose target is no plain name): an error, which says
        why when its body performs pipe events (the frontend reads no such loop)."""
        if not isinstance(s.target, ast.Name):
            bad = f"the loop target `{ast.unparse(s.target)}` must be a plain name"
        else:
            bad = (f"only `for v in range(...)` / tl.range / tl.static_range loops may contain "
                   f"pipe events, not `for ... in {ast.unparse(s.iter)}`")
        f = self.frame
        before = dict(f.env)
        for n in ast.walk(s.target):
            if isinstance(n, ast.Name):
                f.env[n.id] = None
        try:
            body = self.block(s.body)
        except TleError:
            body = ()
        finally:
            f.env.clear()
            f.env.update(before)
        if any(True for _ in K.events(body)):
            raise self.err(f"this loop contains pipe events, but {bad}", s,
                           check="non-affine-loop")
        raise self.err("loops are `for i in range(...)` / tl.range / tl.static_range", s,
                       check="unsupported-control-flow")

    def s_If(self, s: ast.If) -> None:
        cond, cond_st = self.expr(s.test)
        folded = fold(cond)
        if cond_st is not None and cond_st.kind in ("mod", "usermod", "func"):
            # `if tl:`, `if helper:`: Triton 3.6 refuses a compile-time condition of a module or
            # a function; read as true, the branch was verified and lowered (adversarial round 63)
            kind = "function" if cond_st.kind == "func" else "module"
            raise self.err(f"`{ast.unparse(s.test)}`: "
                           + condition_type_refusal(f"an `if` on the {kind} "
                                                    f"`{ast.unparse(s.test)}`", kind)
                           + "; Triton 3.6 refuses the kernel", s.test,
                           check="unsupported-control-flow")
        if folded is None and cond_st is None and _is_none(cond):
            # `if None:` (a literal, or a module constant bound to None): Triton 3.6 takes a
            # NoneType condition as a compile-time false one, and so does the protocol view; left
            # undecided here, the kernel was refused as one whose views disagree (constexpr-if,
            # adversarial round 63)
            folded = False
        self.compile_time_condition(s.test, cond, folded, "an `if`")
        # a tensor condition: in a partition, of a value that folds (else it is a run-time one
        # or a constexpr's); in the kernel body, which binds no number as a constant, of any
        # name it binds by a plain assignment
        tensor = (isinstance(folded, (bool, int)) or not self.in_partition) \
            and self.tensor_condition(s.test, cond)
        if isinstance(folded, (bool, int, float)) and not isinstance(folded, str) and not tensor:
            # decided now: only the branch that runs exists (Triton does the same with constexprs)
            for st in (s.body if folded else s.orelse):
                self.stmt(st)
            return
        f = self.frame
        carried = self.carry_tuples(s.body + s.orelse, s, "if")
        self.rebound(s.body + s.orelse, s)
        before = dict(f.env)
        shapes_before, sites_before = dict(self.tuple_shapes), dict(self.bound_at)
        runtime = self.is_runtime(cond) or tensor
        self.depth += 1
        if runtime:
            f.regions.append(("region", self.constexpr_names()))
        try:
            then = self.block(s.body)
            env_then = dict(f.env)
            shapes_then, sites_then = dict(self.tuple_shapes), dict(self.bound_at)
            f.env.clear()
            f.env.update(before)
            self.tuple_shapes = dict(shapes_before)
            self.bound_at = dict(sites_before)
            orelse = self.block(s.orelse)
            env_else = dict(f.env)
        finally:
            self.depth -= 1
            if runtime:
                f.regions.pop()
            for name in carried:
                f.carried.pop(name, None)
                f.carried_by.pop(name, None)
        bound = self.tuples_bound_in_branches(
            s, (env_then, shapes_then, sites_then),
            (env_else, dict(self.tuple_shapes), dict(self.bound_at)), sites_before)
        then = then + tuple(bound[0])
        orelse = orelse + tuple(bound[1])
        lost_before = set(f.lost)
        self._merge(before, [env_then, env_else], both=True)
        deciders = self.kernel_constexprs_of(cond) if folded is None and not runtime else None
        if deciders:
            for name in f.lost - lost_before:
                if any(_compile_time_only(env.get(name)) for env in (env_then, env_else)):
                    f.lost_by[name] = (deciders, s)
        if runtime:
            self.poisoned_after(before, [env_then, env_else])
            # an scf.if: a name one branch binds (and not before) is undefined after it
            self.undefined_after(before, s, f"it is bound in one branch only of the `if` at "
                                            f"line {s.lineno}",
                                 (set(env_then) ^ set(env_else)) - set(before) - set(bound[2]))
            # and so is one a branch binds as a constexpr: Triton's visit_AnnAssign puts it in
            # the branch's scope only, and the scf.if yields only the tensors both bind
            annotated = {n for n in (set(env_then) | set(env_else)) - set(before)
                         if any(isinstance(sites.get(f.kir(n)), ast.AnnAssign)
                                and _constexpr_annotation(sites[f.kir(n)])
                                for sites in (sites_then, self.bound_at))}
            self.undefined_after(before, s, f"it is bound as a tl.constexpr in a branch of the "
                                            f"`if` at line {s.lineno}", annotated - set(bound[2]))
        for name, value in bound[2].items():
            f.env[name] = value
            f.lost.discard(name)
            f.lost_buffers.pop(name, None)
            f.lost_by.pop(name, None)
            self.tuple_shapes.pop(f.kir(name), None)
        if tensor and isinstance(folded, (bool, int)) and has_events(orelse if folded else then):
            # an `if` on a tensor of a folded value (tensor_condition) whose branch that never
            # runs holds pipe events: the protocol view decides the `if`, and the lowering
            # pairs the kernel IR's events with the view's, so only the branch that runs is
            # kept (what Triton's scf.if on the constant runs); both were built above, so the
            # names after it and the checks of each branch are Triton's
            for st in then if folded else orelse:
                self.emit(st)
            return
        self.emit(K.If(cond, then, orelse, self.loc(s)))

    def tuples_bound_in_branches(self, s: ast.If, then: tuple, orelse: tuple,
                                 sites_before: dict) -> tuple[list, list, dict]:
        """Names holding a tuple after both branches of ``s`` that a branch binds and that were
        not carried from before the if (:meth:`carry_tuples`): a tuple first bound in the
        branches. Each branch is given assignments of the tuple's items to variables of their
        own (``o__0 = ...`` at the branch's end), and the name reads the tuple of those
        variables after the if: what reads the KIR knows a tuple's items at compile time, so a
        tuple variable would be read as one branch's binding on every path. Branches whose
        tuples differ in length, hold compile-time values (pipes, handles, buffers) or tuples,
        or where one is no tuple, are an error at the binding (Triton refuses a name whose type
        differs between the branches). Each ``then`` / ``orelse`` is (env, tuple shapes, binding
        sites) after its branch. Returns (then's assignments, else's, name -> its new value)."""
        f = self.frame
        stored_names, used_names = _names_of(s.body + s.orelse)
        stored = sorted(stored_names)
        used = set(used_names) | set(then[0]) | set(orelse[0])
        adds: tuple[list, list] = ([], [])
        values = {}
        loc = self.loc(s)
        for name in stored:
            if name in f.carried or name not in then[0] or name not in orelse[0]:
                continue  # carried, or bound on one path only (read in its branch only)
            sts = (then[0][name], orelse[0][name])
            if sts[0] is not None and sts[0] == sts[1] and (
                    sts[0].kind != "tuple" or all(x is not None for x in sts[0].value)):
                continue  # the same compile-time value on both paths
            kir = K.Name(f.kir(name), loc)
            shapes, items = [], []
            saved = self.tuple_shapes
            try:
                for (env, shapes_b, _), st in zip((then, orelse), sts):
                    self.tuple_shapes = shapes_b
                    shapes.append(self.tuple_shape(kir, st))
                    items.append(self.carry_items(kir, st) if shapes[-1] is not None else None)
            finally:
                self.tuple_shapes = saved
            if shapes == [None, None]:
                continue  # no tuple on either path
            # where the branch that rebinds it bound it last
            sites = [b[2].get(f.kir(name)) for b in (then, orelse)]
            site = next((x for x in sites if x is not None
                         and x is not sites_before.get(f.kir(name))), s)
            if any(x is None for x in items) or len(items[0]) != len(items[1]):
                what = [("no tuple" if sh is None else f"a tuple of {len(sh)} items"
                         + ("" if it is not None else
                            " with a compile-time value (a pipe, a handle, a buffer) or a "
                            "tuple among them")) for sh, it in zip(shapes, items)]
                raise self.err(f"`{name}` holds {what[0]} after the then branch of the if at "
                               f"line {s.lineno} and {what[1]} after its else: after the if it "
                               f"must hold a tuple of as many runtime values on every path "
                               f"(Triton refuses a name whose type differs between the "
                               f"branches)", site, check="unsupported-control-flow")
            names = []
            for k in range(len(items[0])):
                var = f"{name}__{k}"
                while var in used:
                    var += "_"
                used.add(var)
                names.append(var)
                f.item_vars[f.kir(var)] = name
                f.env[var] = None
                self.tuple_shapes.pop(f.kir(var), None)
            for add, its in zip(adds, items):
                add.extend(K.Assign(f.kir(v), x, loc) for v, x in zip(names, its))
            values[name] = Static("const", K.TupleExpr(
                tuple(K.Name(f.kir(v), loc) for v in names), loc))
        return adds[0], adds[1], values

    def s_While(self, s: ast.While) -> None:
        if s.orelse:
            raise self.err(f"`while ... else` is not supported: Triton does not run a while loop's "
                           f"else; move the else body after the loop (line {s.orelse[0].lineno})",
                           s, check="unsupported-control-flow")
        f = self.frame
        carried = self.carry_tuples(s.body, s)
        stored = self.rebound(s.body, s)
        for node in ast.walk(s.test):
            # the first test reads a name the body rebinds with its value before the loop: one
            # Triton leaves undefined there (a loop's variable after its loop) is refused, as a
            # read of it elsewhere is (below, the body's names are read as run-time values)
            if isinstance(node, ast.Name) and node.id in stored and node.id in f.undefined \
                    and node.id not in f.env:
                self.lookup(node.id, node)
        before = dict(f.env)
        placeholders = set(f.placeholders)
        for n in stored:
            if n not in f.carried:  # (a carried tuple reads its item variables)
                if n not in f.env:
                    f.placeholders.add(n)
                f.env[n] = None  # assigned in the body: runtime values in the condition
        n_out = len(self.out)
        cond = self.value(s.test)
        # Statements the condition needs (an inlined helper's locals, an effectful call the
        # builder sequences into a temporary: `while tl.atomic_add(flag, 0) == 0` in a helper)
        # run before every test, as Python evaluates the whole condition each time: once before
        # the loop and again at the end of its body. Left before the loop only, the test read
        # the first evaluation forever.
        pre = tuple(self.out[n_out:])
        self.depth += 1
        self.loop_depth += 1
        f.regions.append(("region", self.constexpr_names()))
        try:
            body = self.block(s.body) + pre
        finally:
            self.depth -= 1
            self.loop_depth -= 1
            f.regions.pop()
            f.placeholders = placeholders
            for name in carried:
                f.carried.pop(name, None)
                f.carried_by.pop(name, None)
        self.same_each_iteration(before, stored, s)
        end = dict(f.env)
        self._merge(before, [end])
        self.undefined_after(before, s, f"it is bound only inside the while loop at line "
                                        f"{s.lineno}")
        self.poisoned_after(before, [end])
        self.emit(K.While(cond, body, self.loc(s)))

    def rebound(self, stmts: list[ast.stmt], node: ast.stmt) -> set[str]:
        """The names ``stmts`` assign. One that stands for a value read in place (a helper's or
        partition's parameter bound to the caller's expression, a bound constexpr) becomes a
        variable holding that value now: a loop or a branch that assigns it must not have its
        other reads (a later iteration's, the other branch's) read the expression instead."""
        f = self.frame
        stored = _names_of(stmts)[0]
        for name in sorted(stored):
            st = f.env.get(name)
            if name in f.carried:
                continue  # a carried tuple: its items are variables already
            if st is not None and st.kind == "const":
                self.emit(K.Assign(f.kir(name), st.value, self.loc(node)))
                f.env[name] = None
        return stored

    # A tuple a loop rebinds (`o = (o[1], o[0] + 1)`, `ps = (ps[1], ps[0])`) is carried by the
    # loop: an iteration reads what the previous one bound. What reads the KIR walks a loop's body
    # once and knows a tuple's items at compile time, so a tuple variable assigned in the body
    # would be read as its value on entry. The builder therefore keeps each item of a carried
    # tuple in a variable of its own (`o__0`, `o__1`), the way a rebound scalar is carried: the
    # name reads the tuple of those variables, and a rebinding in the body assigns them. Items
    # that are compile-time values (pipes, handles, buffers) or tuples themselves cannot be
    # carried that way: rebinding such a tuple in a loop is an error at the rebinding. An `if`
    # whose branch rebinds a tuple (`ps = (x, z)` then `if c: ps = (z, x)`) carries it alike:
    # after the if the name reads the item variables, which hold the path's binding (a tuple
    # first bound in both branches gets its item variables at each branch's end,
    # :meth:`tuples_bound_in_branches`).
    def tuple_shape(self, e: K.Expr, st: Optional[Static]) -> Optional[tuple]:
        """None when ``e`` is no tuple (or list) the builder knows of; else one entry per item:
        the item's own shape (None: no tuple)."""
        if st is not None and st.kind == "const":
            return self.tuple_shape(st.value, None)
        items_st = st.value if st is not None and st.kind == "tuple" else None
        if isinstance(e, K.TupleExpr):
            sts = items_st if items_st is not None and len(items_st) == len(e.items) \
                else (None,) * len(e.items)
            return tuple(self.tuple_shape(x, sx) for x, sx in zip(e.items, sts))
        if isinstance(e, K.Name) and e.id in self.tuple_shapes:
            return self.tuple_shapes[e.id]
        if isinstance(e, K.Op) and e.name in ("tl.max", "tl.min") and any(
                k == "return_indices" and isinstance(v, K.Const) and v.value is True
                for k, v in e.kwargs):
            return (None, None)  # (values, indices): `m, i = tl.max(x, 1, return_indices=True)`
        if isinstance(e, K.Subscript) and len(e.index) == 1 and isinstance(e.index[0], int):
            # an item of a tuple (`args[1]`): the item's entry of the tuple's shape, which knows
            # a nested tuple of runtime values that no compile-time value (``st``) records
            base = self.tuple_shape(e.value, None)
            if base is not None and -len(base) <= e.index[0] < len(base) \
                    and base[e.index[0]] is not None:
                return base[e.index[0]]
        if items_st is not None:
            return tuple(None if sx is None else self.tuple_shape(K.Const(None), sx)
                         for sx in items_st)
        return None

    def carry_items(self, e: K.Expr, st: Optional[Static]) -> Optional[list[K.Expr]]:
        """The items of tuple ``e`` as runtime expressions a loop can carry in variables, or None
        when it has an item that is a compile-time value (a pipe, a handle, a buffer, a
        function) or a tuple."""
        shape = self.tuple_shape(e, st)
        if shape is None or any(x is not None for x in shape):
            return None
        items_st = st.value if st is not None and st.kind == "tuple" else (None,) * len(shape)
        if len(items_st) != len(shape) or any(
                sx is not None and sx.kind != "const" for sx in items_st):
            return None
        if st is not None and st.kind == "const":
            e = st.value
        if isinstance(e, K.TupleExpr):
            return [x if sx is None else sx.value for x, sx in zip(e.items, items_st)]
        return [self.item_of(e, st, k, e.loc)[0] if st is not None and st.kind == "tuple"
                else K.Subscript(e, (k,), e.loc) for k in range(len(shape))]

    def carry_tuples(self, body: list[ast.stmt], loop: ast.stmt, what: str = "loop"
                     ) -> list[str]:
        """The names holding a tuple on entry to ``loop`` that its ``body`` rebinds, made
        carried (see above): each item is assigned to its variable before the loop. Returns
        the names this loop carries (an enclosing loop's are carried already). An ``if``
        (``what``) carries the tuples its branches rebind alike: after it, the name reads the
        item variables, which hold the binding of the path that ran."""
        f = self.frame
        stored_names, used_names = _names_of(body)
        stored = sorted(stored_names)
        used = set(used_names) | set(f.env)
        carried = []
        for name in stored:
            if name not in f.env or name in f.carried:
                continue
            st = f.env[name]
            e = st.value if st is not None and st.kind == "const" else K.Name(f.kir(name),
                                                                                self.loc(loop))
            if self.tuple_shape(e, st) is None:
                continue
            carried.append(name)
            f.carried_by[name] = what
            items = self.carry_items(e, st)
            if items is None:
                f.carried[name] = None
                continue
            names = []
            for k, x in enumerate(items):
                var = f"{name}__{k}"
                while var in used and not (isinstance(x, K.Name) and x.id == f.kir(var)):
                    var += "_"
                used.add(var)
                names.append(var)
                f.item_vars[f.kir(var)] = name
                if not (isinstance(x, K.Name) and x.id == f.kir(var)):
                    self.emit(K.Assign(f.kir(var), x, self.loc(loop)))
                f.env[var] = None
                self.tuple_shapes.pop(f.kir(var), None)
            f.carried[name] = tuple(names)
            loc = self.loc(loop)
            f.env[name] = Static("const", K.TupleExpr(
                tuple(K.Name(f.kir(v), loc) for v in names), loc))
        return carried

    # Binding a name to a tuple keeps the tuple's item expressions, and what reads the KIR reads
    # `a[0]` as that expression where `a[0]` is used: an item naming a variable reads the
    # variable's value at the use, not at the binding. That is Python's value only while the
    # variable is not rebound in between. A carried tuple's items are such variables (`a = o`
    # then `o = (o[1], o[0])`: `a[0]` read the swapped `o__0`), as are the scalars of a tuple
    # bound by hand (`a = (j, z_ptr)` then `j = ...`), and a helper that returns its parameter
    # hands back the caller's variable itself. So an item that reads a variable the function
    # binds again after the binding is copied to a temporary where the name is bound.
    def rebound_later(self, e: K.Expr, node: ast.AST) -> bool:
        """Whether ``e`` reads a local variable of the function being built that a statement
        after ``node`` binds again: one of its names, or an item variable of a carried tuple
        (assigned wherever the tuple is bound). A variable of a caller (a helper's parameter
        reads it in place) cannot be rebound while the helper runs."""
        f = self.frame
        end = (getattr(node, "end_lineno", None) or getattr(node, "lineno", 0),
               getattr(node, "end_col_offset", None) or 0)
        for n in K.walk_expr(e):
            if not isinstance(n, K.Name):
                continue
            names = [f.item_vars[n.id]] if n.id in f.item_vars else []
            if n.id.startswith(f.prefix):
                names.append(n.id[len(f.prefix):])
            if any(at > end for name in names for at in f.stores.get(name, ())):
                return True
        return False

    @staticmethod
    def reads_memory(e: K.Expr) -> bool:
        """Whether ``e`` loads (``tl.load``): a tuple item that does is the value memory held
        where the tuple was bound, not where an item is read (a store in between, `u =
        (tl.load(p), 1)`, `tl.store(p, 7.0)`, `u[0]`, read the 7.0: the lowering spells a
        scalar load where it stands)."""
        return any(isinstance(x, K.Op) and x.name == "tl.load" for x in K.walk_expr(e))

    def snapshot(self, e: K.Expr, st: Optional[Static], node: ast.AST, item: bool = False
                 ) -> tuple[K.Expr, Optional[Static]]:
        """``e`` (with what ``st`` says of it) as the name ``node`` binds must hold it: each
        tuple item that reads a variable rebound later (:meth:`rebound_later`) or loads from
        memory (:meth:`reads_memory`) is assigned to a temporary here, and the tuple holds the
        temporary. A value the builder holds as a
        compile-time expression of such a variable (a helper returning its parameter) becomes
        a runtime value, which the binding's assignment copies. Pipes, handles, buffers and
        tuple-valued variables (their items were copied the same way where they were bound)
        are kept."""
        if st is not None and st.kind not in ("const", "tuple"):
            return e, st
        if st is not None and st.kind == "const":
            if isinstance(e, K.TupleExpr):
                v, _ = self.snapshot(e, None, node, item)
                return (e, st) if v is e else (v, Static("const", v))
            if not item:
                return (e, None) if self.rebound_later(e, node) else (e, st)
            st = None
        if isinstance(e, K.TupleExpr):
            sts = st.value if st is not None and len(st.value) == len(e.items) \
                else (None,) * len(e.items)
            new = [self.snapshot(x, sx, node, True) for x, sx in zip(e.items, sts)]
            if all(nx is x for (nx, _), x in zip(new, e.items)):
                return e, st
            nsts = tuple(sx for _, sx in new)
            return (K.TupleExpr(tuple(x for x, _ in new), e.loc),
                    Static("tuple", nsts) if any(sx is not None for sx in nsts) else None)
        if not item or isinstance(e, (K.Const, K.Global, K.DType)) \
                or self.tuple_shape(e, st) is not None \
                or not (self.rebound_later(e, node) or self.reads_memory(e)):
            return e, st
        f = self.frame
        tmp = self.fresh("t")
        self.emit(K.Assign(f.kir(tmp), e, e.loc))
        f.env[tmp] = None
        return K.Name(f.kir(tmp), e.loc), None

    def assign_carried(self, name: str, e: K.Expr, st: Optional[Static], node: ast.AST) -> None:
        """``name = e`` where ``name`` is a tuple a loop carries: ``e``'s items are assigned to
        the item variables (all read before any is assigned); a value that is no tuple of as
        many runtime items is an error (Triton too refuses a loop-carried value whose type the
        body changes)."""
        f = self.frame
        names = f.carried[name]
        items = self.carry_items(e, st)
        if f.carried_by.get(name) == "if":
            self.rebind_in_branch(name, names, items, node)
        if names is None:
            raise self.err(f"`{name}` holds a tuple with a compile-time value (a pipe, a handle, "
                           f"a buffer) or a tuple among its items, and a loop rebinds it here: "
                           f"each iteration would read the previous one's `{name}`, which the "
                           f"frontend cannot carry (bind `{name}` once, before the loop, or keep "
                           f"its runtime items in variables of their own)", node,
                           check="unsupported-control-flow")
        if items is None or len(items) != len(names):
            raise self.err(f"`{name}` holds a tuple of {len(names)} runtime values on entry to a "
                           f"loop that rebinds it here to another kind of value: each iteration "
                           f"reads the previous one's `{name}`, so it must stay a tuple of "
                           f"{len(names)} runtime values (Triton refuses a loop-carried value "
                           f"whose type changes)", node, check="unsupported-control-flow")
        targets = ast.Tuple([ast.Name(v, ast.Store()) for v in names], ast.Store())
        self.assign(targets, K.TupleExpr(tuple(items), e.loc), None, node)

    def rebind_in_branch(self, name: str, names: Optional[tuple], items: Optional[list],
                         node: ast.AST) -> None:
        """The checks of ``assign_carried`` for a tuple an if carries: a branch rebinding it
        must bind a tuple of as many runtime values (after the if, the name reads the one of
        the path that ran)."""
        if names is None:
            raise self.err(f"`{name}` holds a tuple with a compile-time value (a pipe, a handle, "
                           f"a buffer) or a tuple among its items, and a branch of an if "
                           f"rebinds it here: after the if it would hold one path's tuple, "
                           f"which the frontend cannot follow (bind `{name}` once, or keep its "
                           f"runtime items in variables of their own)", node,
                           check="unsupported-control-flow")
        if items is None or len(items) != len(names):
            raise self.err(f"`{name}` holds a tuple of {len(names)} runtime values before an if "
                           f"whose branch rebinds it here to another kind of value: after the if "
                           f"it must hold a tuple of {len(names)} runtime values on every path "
                           f"(Triton refuses a name whose type differs between the branches)",
                           node, check="unsupported-control-flow")

    def tensor_negative_step(self, it: ast.Call, step: K.Expr, s: ast.For) -> None:
        """Refuse a range / tl.range loop whose step folds to a negative number that Triton 3.6
        holds as a tensor: a helper's result (`range(3, -1, neg())`: visit_Return makes the
        returned number a tensor) or a local tensor name (:meth:`local_tensor`). Triton reverses
        a loop only for a constexpr step; the scf.for it builds from a tensor one runs no
        iteration from a start above its stop, where the frontend (and the lowering, which
        writes the folded number in place) ran the reversed loop."""
        node = it.args[2] if len(it.args) > 2 else next(
            (k.value for k in it.keywords if k.arg == "step"), None)
        value = fold(step)
        if node is None or not isinstance(value, int) or isinstance(value, bool) or value >= 0:
            return
        root = self.local_tensor(node)
        if root is None:
            return
        what = ast.unparse(root)
        raise self.err(f"the step of `{ast.unparse(it)}` is negative ({value}) and a tensor in "
                       f"Triton 3.6 (`{ast.unparse(node)}` computes from `{what}`, which Triton "
                       f"holds as a tensor: a helper's returned number, or a name a plain "
                       f"assignment binds): Triton reverses a loop only for a constexpr step, "
                       f"and the loop it builds from a tensor one (scf.for) runs no iteration "
                       f"from a start above its stop; write the step as a literal, or bind it "
                       f"as `name: tl.constexpr = ...`", s, check="bad-loop")

    def module_read_rebound(self, reads: dict, stored: set[str], trips: Optional[int],
                            loop: ast.For) -> None:
        """Refuse a tl.static_range body that reads a module-level name (``reads``: name -> the
        read) and then binds that name itself (``stored``), in a loop of more than one
        iteration: Triton 3.6 unrolls the loop in one scope, so the first iteration reads the
        module's value and every later one the local binding (`for p in range(G): ...; G = 3`
        under `tl.static_range(2)` runs 4 then 3 windows of a module G = 4), where the body is
        built once, reading the module's value (as a range / tl.range loop, whose body Triton
        generates once, does), and the lowering names the two apart."""
        if trips is not None and trips < 2:
            return
        for name in sorted(set(reads) & stored):
            raise self.err(f"`{name}` is read here as the module-level `{name}`, and the body of "
                           f"this tl.static_range loop (line {loop.lineno}) binds `{name}` after "
                           f"it: Triton unrolls the loop in one scope, so the iterations after "
                           f"the first read that local binding instead; use another name for "
                           f"the local", reads[name], check="unsupported-control-flow")

    def same_each_iteration(self, before: dict, stored: set[str], loop: ast.stmt) -> None:
        """A name holding a compile-time value (a pipe handle, a pipe, a buffer, a helper) that a
        loop body binds to another one: the body was built with the value it holds on entry,
        which only the first iteration sees (swapping two handles each iteration): an error."""
        f = self.frame
        for name in sorted(stored):
            old = before.get(name)
            if old is not None and f.env.get(name) != old:
                raise self.err(f"`{name}` holds a {old.kind} that this loop's body binds to "
                               f"another value: the iterations after the first would see "
                               f"another one, which the frontend cannot follow (bind "
                               f"`{name}` once, before the loop)", loop,
                               check="unsupported-control-flow")

    def _merge(self, before: dict, afters: list[dict], both: bool = False) -> None:
        """After control flow, a local's static value is kept only where every path agrees."""
        f = self.frame
        names = set(before)
        for a in afters:
            names |= set(a)
        for n in names:
            vals = [a.get(n) for a in afters] + ([] if both else [before.get(n)])
            f.env[n] = vals[0] if all(v == vals[0] for v in vals) else None
            if f.env[n] is None and any(v is not None for v in vals):
                f.lost.add(n)
                bufs = sorted({f"`{v.value[1]}`" if v.value[1] else "an unnamed buffer"
                               for v in vals if v is not None and v.kind == "buffer"})
                if bufs:
                    f.lost_buffers[n] = bufs

    def s_Return(self, s: ast.Return) -> None:
        if self.frame.prefix:  # an inlined helper: only its last statement may return
            raise self.err("`return` is allowed only as a helper's last statement", s,
                           check="unsupported-control-flow")
        if self.loop_depth:
            # Triton's code generator refuses it ("Cannot have `return` statements inside
            # `while` or `for` statements in triton"), so the lowered kernel could not compile
            raise self.err("`return` inside a loop is not supported: Triton rejects it; guard the "
                           "rest of the loop body with an `if` and return after the loop", s,
                           check="unsupported-control-flow")
        value = self.value(s.value) if s.value is not None else None
        self.emit(K.Return(value, self.loc(s)))

    def s_FunctionDef(self, s: ast.FunctionDef) -> None:
        if self.frame.function != "<kernel>":
            for n in ast.walk(s):
                if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                        and n.func.attr in VERBS):
                    raise self.err(f"`{ast.unparse(n.func)}(...)` inside the nested function "
                                   f"'{s.name}': the frontend follows module-level functions "
                                   f"only; define '{s.name}' at module level", n,
                                   check="nested-function")
        raise self.err(f"`def {s.name}(...)`: nested functions are not supported in a kernel "
                       f"(define '{s.name}' at module level)", s, check="unsupported-statement")

    def _unsupported(self, s: ast.stmt) -> None:
        if any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
               and n.func.attr in VERBS for n in ast.walk(s)):
            raise self.err(f"pipe events inside a `{type(s).__name__.lower()}` statement are not "
                           f"supported: keep them in plain code, for-range loops and ifs", s,
                           check="unsupported-control-flow")
        raise self.err(f"`{type(s).__name__.lower()}` is not supported in a kernel (Triton 3.6 "
                       f"rejects it or its semantics differ)", s, check="unsupported-control-flow")

    s_With = s_Try = s_Import = s_ImportFrom = _unsupported

    def s_Break(self, s: Union[ast.Break, ast.Continue]) -> None:
        word = "break" if isinstance(s, ast.Break) else "continue"
        raise self.err(f"`{word}` is not supported: Triton rejects it (an unsupported AST node); "
                       f"guard the rest of the loop body with an `if` instead", s,
                       check="unsupported-control-flow")

    s_Continue = s_Break

    def s_Assert(self, s: ast.Assert) -> None:
        """Device asserts are not lowered (nothing of the statement is read). A pipe verb in
        its test or message would run in Triton, which evaluates both (visit_Assert), but not in
        the protocol view or the lowered kernel: `assert w.commit(p) is None` was read as an
        acquire never committed, an error about a commit the source does write. Refused at the
        verb instead."""
        for n in ast.walk(s):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) \
                    and n.func.attr in VERBS:
                raise self.err(f"`{ast.unparse(n)}` inside an `assert`: asserts are not lowered, "
                               f"so the pipe event would not run; call it as a statement before "
                               f"the assert", n, check="unsupported-control-flow")
            if isinstance(n, ast.Call):
                # a helper's body is inlined where it is called, and nothing of the assert is:
                # its pipe events and writes, which Triton (and Python) run, would be dropped
                try:
                    _, fst = self.expr(n.func)
                except TleError:
                    fst = None
                if fst is not None and fst.kind == "func":
                    raise self.err(f"`{ast.unparse(n)}` inside an `assert`: asserts are not "
                                   f"lowered, so what the helper does (its pipe events, its "
                                   f"writes) would not run, where Triton and Python run it; call "
                                   f"it as a statement before the assert", n,
                                   check="unsupported-control-flow")
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and (
                    n.func.attr in ("store", "tma_load") or n.func.attr.startswith("atomic_")):
                # ... and so is a store or an atomic (`assert tl.atomic_add(p, 1.0) >= 0`, also
                # the member form `p.atomic_add(1.0)`), which Triton evaluates with the test
                # whether or not the assert is compiled in (adversarial round 63: verified and
                # lowered without the atomic)
                raise self.err(f"`{ast.unparse(n)}` inside an `assert`: asserts are not "
                               f"lowered, so the write would not run, where Triton and Python "
                               f"run it; call it as a statement before the assert", n,
                               check="unsupported-control-flow")
            if isinstance(n, ast.JoinedStr):
                # Triton 3.6 visits the test and the message: an f-string is an AST node it
                # does not support, so the kernel does not compile (dropped, it was verified)
                raise self.err(f"`{ast.unparse(n)}` in an `assert`: Triton 3.6 does not support "
                               f"f-strings (\"unsupported AST node type: JoinedStr\"); write "
                               f"a string literal", n, check="unsupported-expression")
        if isinstance(s.test, ast.Tuple):
            raise self.err(f"`assert {ast.unparse(s.test)}` asserts a tuple: Triton 3.6 refuses "
                           f"it (and Python's is always true); write `assert cond, \"message\"`",
                           s, check="unsupported-expression")

    # -- expressions ------------------------------------------------------------------------
    def expr(self, node: ast.expr) -> tuple[K.Expr, Optional[Static]]:
        m = getattr(self, f"e_{type(node).__name__}", None)
        if m is None:
            raise self.err(f"`{ast.unparse(node)}` is not supported in a kernel", node)
        return m(node)

    def value(self, node: ast.expr) -> K.Expr:
        e, st = self.expr(node)
        return self.checked_value(node, e, st)

    def checked_value(self, node: ast.expr, e: K.Expr, st: Optional[Static]) -> K.Expr:
        """``value``'s rules on ``node`` read as ``e`` (its static ``st``)."""
        if st is not None and st.kind == "method" and isinstance(st.value[0], Static):
            raise self.verb_as_value(node)
        self.void_event_operand(node, e)
        if st is not None and st.kind in ("func", "mod", "usermod", "method"):
            what = "a pipe verb" if st.kind == "method" else f"`{ast.unparse(node)}`"
            raise self.err(f"{what} is used as a value: call it directly (a verb passed as a "
                           f"callback or stored hides its events)", node,
                           check="verb-as-value" if st.kind == "method" else "frontend")
        return e

    def void_event_operand(self, node: ast.expr, e: K.Expr) -> None:
        """Refuse the value of a commit, close or release (which return nothing) used as an
        operand: `w.commit(p) == None`, `tl.store(ptr, w.commit(p))`, `print("c",
        w.release(p))`, `not w.commit(p)`. The protocol view read the event and verified the
        kernel, where the lowering has no value to compute with (it stopped at the line, "an
        operator on a none"); call the verb as a statement."""
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("commit", "close", "release")):
            return
        last = self.out[-1] if self.out else None
        ev = e if isinstance(e, K.Event) else last.value if isinstance(e, K.Name) \
            and isinstance(last, K.Assign) and last.target == e.id else None
        if isinstance(ev, K.Event):
            raise self.err(f"`{ast.unparse(node)}` is used as a value, but {ev.verb} returns "
                           f"nothing: call it as a statement", node, check="bad-event")

    def verb_as_value(self, node: ast.expr) -> TleError:
        text = ast.unparse(node)
        return self.err(f"`{text}` is used as a value: pipe verbs must be called directly on the "
                        f"handle, e.g. `{text}(i)` (a verb passed as a callback or stored in a "
                        f"variable hides its events from the verifier)", node,
                        check="verb-as-value")

    def e_Constant(self, node: ast.Constant) -> tuple[K.Expr, Optional[Static]]:
        return K.Const(node.value, self.loc(node)), None

    def e_Name(self, node: ast.Name) -> tuple[K.Expr, Optional[Static]]:
        return self.lookup(node.id, node)

    def e_Tuple(self, node: ast.Tuple) -> tuple[K.Expr, Optional[Static]]:
        items = [self.expr(e) for e in node.elts]
        for e, (_, st) in zip(node.elts, items):
            if st is not None and st.kind == "method" and isinstance(st.value[0], Static):
                raise self.verb_as_value(e)
        st = Static("tuple", tuple(s for _, s in items)) if any(s for _, s in items) else None
        return K.TupleExpr(tuple(e for e, _ in items), self.loc(node)), st

    e_List = e_Tuple

    def e_BinOp(self, node: ast.BinOp) -> tuple[K.Expr, Optional[Static]]:
        a, b = self.value(node.left), self.value(node.right)
        op = _BINOPS.get(type(node.op))
        if op is None:
            raise self.err("unsupported operator", node)
        if op == "**":
            self.tensor_power(node, [(node.left, a), (node.right, b)])
        self.folded_division(node, [(node.left, a), (node.right, b)])
        return K.BinOp(op, a, b, self.loc(node)), None

    def e_UnaryOp(self, node: ast.UnaryOp) -> tuple[K.Expr, Optional[Static]]:
        x = self.value(node.operand)
        if isinstance(node.op, ast.Not):
            self.tensor_truth(node, [(node.operand, x)], "not")
        if isinstance(node.op, ast.UAdd) and not self.not_triton \
                and self.local_tensor(node.operand) is not None:
            # `+b` of a local number: Triton 3.6 holds b as a tensor, which has no __pos__
            # (adversarial round 27: `b = 3; range(+b)` was verified); the protocol view refuses
            # `+` of the other tensors (Walker._e_UnaryOp)
            raise self.err(f"`{ast.unparse(node)}`: unary `+` of a tensor, which Triton 3.6 "
                           f"refuses (\"'tensor' object has no attribute '__pos__'\"; a plain "
                           f"assignment makes `{ast.unparse(node.operand)}` a tensor); write "
                           f"`{ast.unparse(node.operand)}`", node,
                           check="unsupported-expression")
        built = K.UnaryOp(_UNOPS[type(node.op)], x, self.loc(node))
        if not isinstance(node.op, ast.Not):
            # `-b` of a local number b = -2^31 (or an i1 True) wraps in Triton
            self.folded_arithmetic(node, _UNOPS[type(node.op)] + "u", [(node.operand, x)], built)
        return built, None

    def e_Compare(self, node: ast.Compare) -> tuple[K.Expr, Optional[Static]]:
        """A comparison. A chained one (``0 <= p < N``) is refused as Triton 3.6 refuses it
        ("simultaneous multiple comparison is not supported"), on constexprs as on runtime
        values: read as Python's ``and`` of its links, a kernel Triton cannot compile was
        verified. ``tle.assume(1 <= N <= 64)`` states a domain and is no Triton code (the
        lowering emits nothing for it), and Python evaluates a module-level constant and a
        helper's default: the chain is read there."""
        if len(node.ops) > 1 and not self.not_triton:
            text = ast.unparse(node)
            links = " and ".join(ast.unparse(ast.Compare(a, [op], [b])) for a, op, b in zip(
                [node.left, *node.comparators[:-1]], node.ops, node.comparators))
            raise self.err(f"`{text}` is a chained comparison, which Triton 3.6 refuses in a "
                           f"kernel (\"simultaneous multiple comparison is not supported\"): "
                           f"write `{links}`", node, check="unsupported-expression")
        vals = [self.value(node.left)] + [self.value(c) for c in node.comparators]
        items = []
        for i, op in enumerate(node.ops):
            sym = _CMPOPS.get(type(op))
            if sym is None:
                raise self.err(f"`{type(op).__name__}` is not an arithmetic comparison", node)
            items.append(K.Compare(sym, vals[i], vals[i + 1], self.loc(node)))
            # a local number compares as Triton's tensor does (in float32 beside a float)
            self.folded_arithmetic(node, sym, [(([node.left] + node.comparators)[i], vals[i]),
                                               (node.comparators[i], vals[i + 1])], items[-1])
        if len(items) == 1:
            return items[0], None
        return K.BoolOp("and", tuple(items), self.loc(node)), None

    def e_BoolOp(self, node: ast.BoolOp) -> tuple[K.Expr, Optional[Static]]:
        """``a and b`` / ``a or b``. Triton 3.6 evaluates the operands in order and stops at a
        compile-time one that decides the result (`0 and f()`, `1 or f()`: Python's short
        circuit), while a tensor operand decides nothing then (every operand after it runs). So
        the operands after a constant that decides are not built (an inlined helper's pipe
        events there never run), and an operand after one the reading cannot decide (a
        constexpr parameter, a tensor) may not perform events or writes: refused."""
        op = "and" if isinstance(node.op, ast.And) else "or"
        built = []
        undecided = None  # the first operand the reading cannot decide
        for v in node.values:
            start = len(self.out)
            built.append(self.value(v))
            if undecided is not None and not self.in_kernel_body():
                self.no_effects_in(self.out[start:], v, f"an operand of `{op}` after "
                                   f"`{ast.unparse(undecided)}`, which may decide it (Python "
                                   f"and Triton skip what follows a compile-time operand that "
                                   f"decides)")
            value = fold(built[-1])
            if isinstance(built[-1], K.Const) and built[-1].value is None:
                value = False
            if value is None or isinstance(value, tuple) or self.local_tensor(v) is not None:
                undecided = undecided or v
            elif bool(value) == (op == "or") and undecided is None:
                break  # Triton returns this constant; what follows is never evaluated
        items = tuple(built)
        # a local name bound to a number is a tensor there (local_tensors.BuildRules)
        self.tensor_truth(node, list(zip(node.values, items)), op)
        return K.BoolOp(op, items, self.loc(node)), None

    def static_assert_form(self, node: ast.Call) -> None:
        """Refuse a ``tl.static_assert`` Triton 3.6 refuses before it looks at the condition:
        one not given one or two positional arguments ("`static_assert` requires one or two
        positional arguments only": `msg=` by keyword included), or whose condition is a local
        tensor (`b = C > 1; tl.static_assert(b)`: "Assertion condition could not be determined
        at compile-time"). Read as nothing, each was verified."""
        text = ast.unparse(node)
        if node.keywords or not 1 <= len(node.args) <= 2 \
                or any(isinstance(a, ast.Starred) for a in node.args):
            raise self.err(f"`{text}`: Triton 3.6 takes one or two positional arguments only "
                           f"(the condition and a message: \"`static_assert` requires one or two "
                           f"positional arguments only\"); pass the message positionally",
                           node, check="unsupported-expression")
        self.constexpr_operands(f"`{text}`", node.args[:1])

    def kernel_constexprs_of(self, cond: K.Expr) -> frozenset:
        """The kernel's constexpr parameters (unbound in this build) that decide ``cond`` when
        it reads nothing else: each name it reads is one of them (the kernel body's own), or a
        partition's parameter given an expression of them (:attr:`Frame.constexpr_sources`;
        a helper reads its caller's names in place). Empty when ``cond`` reads anything else
        (a run-time value, a local binding)."""
        names: set[str] = set()
        part = self.frames[1] if self.in_partition and len(self.frames) > 1 else None
        for x in K.walk_expr(cond):
            if isinstance(x, K.Name):
                if part is not None and x.id in part.constexpr_sources:
                    names |= part.constexpr_sources[x.id]
                elif part is None and x.id in self.constexpr_params:
                    names.add(x.id)
                else:
                    return frozenset()
            elif not isinstance(x, (K.Const, K.Global, K.BinOp, K.UnaryOp, K.Compare,
                                    K.BoolOp)):
                return frozenset()
        return frozenset(n for n in names if type(self.bind.get(n)) is not int)

    def expr_static(self, node: ast.expr) -> Optional[Static]:
        """The compile-time value ``node`` holds, read without building it (a name's binding,
        a tuple's items, a pipe's `writer()` / `reader(...)`), else None."""
        if isinstance(node, ast.Name):
            f = self.frame
            return f.env.get(node.id) if node.id not in f.undefined else None
        if isinstance(node, ast.Tuple):
            items = [self.expr_static(e) for e in node.elts]
            return Static("tuple", tuple(items)) if any(items) else None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("writer", "reader"):
            base = self.expr_static(node.func.value)
            return Static("handle", None) if base is not None and base.kind == "pipe" else None
        return None

    def undecided_choice(self, what: str, test: ast.expr, names: frozenset) -> None:
        """Stop the reading where the kernel's constexprs ``names``, unbound in this build,
        decide which compile-time value (a pipe handle or a pipe) a name or an expression
        holds (``what``, by the condition ``test``): Python and Triton take the branch the
        values choose, and only then is the value one the protocol view and the lowering
        have. A check of SPECIALIZABLE (as a pipe capacity read from constexprs is),
        so that tle-dump, a compile or a launch reads the kernel again with them bound, where
        the condition folds (adversarial round 65: the generic reading refused it, "holds
        different values on different paths" or unknown-handle, even under --param)."""
        ordered = tuple(sorted(names))
        config = self.frames[0].module.default_config
        unread = (f" (DEFAULT_CONFIG, line {config[1]}, is no literal dict: tle-dump reads "
                  f"no values from it)" if isinstance(config, tuple) and config
                  and config[0] == "error" else _no_integer_in_config(config,
                                                                      self.kernel_name, ordered))
        raise CapacityOfConstexprs(
            f"{what} by `{ast.unparse(test)}`, of constexpr {', '.join(ordered)}: give "
            f"{'it a value' if len(ordered) == 1 else 'them values'} (DEFAULT_CONFIG's "
            f"\"constexprs\", tle-dump --param {ordered[0]}=..., or a launch's), with which the "
            f"kernel is read specialised and only the chosen value exists{unread}",
            self.loc(test), ordered, self.kernel_name, config)

    def e_IfExp(self, node: ast.IfExp) -> tuple[K.Expr, Optional[Static]]:
        """``a if c else b``: an ``ifexp`` operation (the lowering refuses it); a pipe event in
        ``a`` or ``b`` would depend on data (an error)."""
        test, test_st = self.expr(node.test)
        test = self.checked_value(node.test, test, test_st)
        folded = fold(test)
        if folded is None and test_st is None and _is_none(test):
            # `x if None else y` (a literal, or a name bound to None): Triton 3.6's visit_IfExp
            # takes a NoneType test as a compile-time false one, as `if None:` (s_If); left
            # undecided, the operands were refused as tensors the lowering does not choose
            # between (adversarial round 63's open item)
            folded = False
        self.compile_time_condition(node.test, test, folded, "a conditional expression")
        # a tensor condition (a number a plain assignment bound: `f = 1; N if f else 2.0`, in a
        # partition or the kernel body): Triton 3.6's visit_IfExp builds both operands as
        # tensors of one type and selects at run time, even where the value folds, so the
        # operands are built and marked `tensor=True` for the protocol view, which checks them
        # as Triton does and reads the operand the folded test chooses (Walker.ifexp)
        tensor = (isinstance(folded, (bool, int)) or not self.in_partition) \
            and self.tensor_condition(node.test, test)
        if isinstance(folded, (bool, int, float)) and not tensor:
            # decided now, as an `if` on a constant is: only the operand Python evaluates exists
            return self.expr(node.body if folded else node.orelse)
        deciders = None if folded is not None or tensor or self.is_runtime(test) \
            else self.kernel_constexprs_of(test)
        if deciders and any(_compile_time_only(self.expr_static(b))
                            for b in (node.body, node.orelse)):
            # a handle or a pipe chosen by the kernel's constexprs (`wa if C > 3 else wb`): an
            # `ifexp` of them is no value the protocol view or the lowering has, so the kernel
            # is read with the constexprs bound, where only the chosen one exists
            self.undecided_choice(f"`{ast.unparse(node)}` chooses a pipe handle or a pipe",
                                  node.test, deciders)
        branches = []
        for b in (node.body, node.orelse):
            saved, self.sequential = self.sequential, 0
            start = len(self.out)
            try:
                e, st = self.expr(b)
                e = self.checked_value(b, e, st)
                if st is not None and st.kind == "buffer" and st.value[1] is None \
                        and st.value[0] not in self.buffer_owner:
                    # a free buffer no name holds yet (a tuple's item, `t[0]`): named here, so
                    # that the accesses through the choice reach it (it was None, and a
                    # partition's store through `fa if N > 0 else t[0]` reached `fa` alone)
                    e = K.BufferRef(self.name_buffer(st, self.unused_buffer_name(), b), e.loc)
            finally:
                self.sequential = saved
            if not self.in_kernel_body():
                self.no_events_in(e, b, "a conditional expression (x if c else y)")
                # an inlined helper's statements are emitted before the expression, so they run
                # whichever operand is chosen, where Python and Triton run only the chosen one
                self.no_effects_in(self.out[start:], b, "a conditional expression (x if c "
                                   "else y), whose operands run only when chosen")
            branches.append(e)
        marks = (("tensor", K.Const(True, self.loc(node))),) if tensor else ()
        return self.seq(K.Op("ifexp", (test, *branches), marks, self.loc(node))), None

    def body_value(self, e: K.Expr) -> object:
        """:func:`fold_body` of the kernel body's expression ``e`` through the names the body
        has bound so far (each bound once at its top level stands for its value)."""
        top = {st.target for st in self.out if isinstance(st, K.Assign)} - set(
            self.constexpr_params) - self.param_names
        return fold_body(e, body_assigns(self.out), top)

    def in_kernel_body(self) -> bool:
        return not self.in_partition

    @staticmethod
    def effect_of(emitted: list, reads: bool = False) -> Optional[str]:
        """The first pipe event or memory write (a store, an atomic, a TMA copy) of statements
        the builder emitted (an inlined helper's body), described with its place; None when
        they only compute values. ``reads``: a load counts too."""
        for st in K.walk_stmts(tuple(emitted)):
            for e in K.stmt_exprs(st):
                for x in K.walk_expr(e):
                    what = (f"a pipe event ({x.verb})" if isinstance(x, K.Event) else
                            f"a write ({x.name})" if _writes(x) else
                            f"a read ({x.name})" if reads and isinstance(x, K.Op)
                            and x.name == "tl.load" else None)
                    if what is not None:
                        return f"{what}, at {shown(x.loc.file or '')}:{x.loc.line}"
        return None

    def no_dropped_effects(self, node: ast.AST, items, kept: Optional[int], what: str) -> None:
        """Refuse a tuple the kernel spells out whose items (but the ``kept`` one, which the
        expression goes on with) perform a pipe event or write memory, where ``node`` reads no
        more of it (``what``: `(w.commit(p), 1)[1]`, `len((w.commit(p), 1))`): Python and Triton
        3.6 evaluate every item, and the reading would drop them from the verdict and the
        lowered kernel (adversarial round 63: such a second commit was verified)."""
        for j, item in enumerate(items):
            if j != kept and _has_effect(item):
                raise self.err(f"`{ast.unparse(node)}`: item {j} of the tuple performs a pipe "
                               f"event or a write, which Python and Triton evaluate, but "
                               f"{what} and the reading would drop it: evaluate it in a "
                               f"statement of its own", node, check="unsupported-expression")

    def no_effects_in(self, emitted: list, node: ast.AST, where: str) -> None:
        """Refuse statements the builder emitted for ``node`` (an inlined helper's body) that
        perform a pipe event or write memory (a store, an atomic, a TMA copy), where ``node`` is
        evaluated only sometimes (``where``): the kernel IR would run them always."""
        what = self.effect_of(emitted)
        if what is not None:
            raise self.err(f"`{ast.unparse(node)}` performs {what}, inside {where}: the kernel "
                           f"IR would run it always; call the helper in an `if` statement",
                           node, check="conditional-event")

    def call_arguments(self, node: ast.Call, build) -> tuple[list, list]:
        """A call's positional arguments, then its keyword ones (name, value), each built by
        ``build`` in Python's order. Triton 3.6 builds the keyword arguments first
        (code_generator.visit_Call): where a keyword argument and a positional one both perform
        pipe events or writes (helpers inlined there), the two orders run them differently,
        refused."""
        start = len(self.out)
        args = [build(a) for a in node.args]
        middle = len(self.out)
        kwargs = [(k.arg, build(k.value)) for k in node.keywords if k.arg is not None]
        if node.args and node.keywords and not self.in_kernel_body():
            first = self.effect_of(self.out[start:middle])
            then = self.effect_of(self.out[middle:])
            # a write on one side and a read of memory on the other differ too: the read sees
            # the write in Triton's order (keywords first) and not in Python's, or the reverse
            if first is not None and then is None:
                then = self.effect_of(self.out[middle:], reads=True)
            elif then is not None and first is None:
                first = self.effect_of(self.out[start:middle], reads=True)
            if first is not None and then is not None:
                raise self.err(f"`{ast.unparse(node)}`: a positional argument performs {first}, "
                               f"and a keyword argument {then}; Python evaluates the positional "
                               f"arguments first, Triton 3.6 the keyword ones: bind them to "
                               f"names in the order meant, then call", node,
                               check="unsupported-expression")
        return args, kwargs

    def no_events_in(self, e: K.Expr, node: ast.AST, where: str) -> None:
        """A pipe event evaluated inside ``where`` would depend on data: an error at it."""
        for x in K.walk_expr(e):
            if isinstance(x, K.Event):
                raise self._conditional(x.loc.line, node, x.verb, where)

    def _conditional(self, line: int, node: ast.AST, verb: str, where: str) -> TleError:
        call = next((n for n in ast.walk(node) if isinstance(n, ast.Call)
                     and isinstance(n.func, ast.Attribute) and n.func.attr == verb
                     and n.lineno == line), None)
        who = ast.unparse(call.func.value) if call is not None else "the handle"
        return self.err(f"`{who}.{verb}(...)` inside {where}: the pipe events of a partition must "
                        f"not depend on data; use an `if` on loop variables and params",
                        call if call is not None else node, check="conditional-event")

    def _guarded(self, node: ast.expr) -> tuple[K.Expr, Optional[Static]]:
        """A lambda or a comprehension: not supported; a pipe verb in it would be a conditional
        event (an error at the verb)."""
        if self.in_partition:
            parts: list[ast.AST] = []
            if isinstance(node, ast.Lambda):
                parts = [node.body]
            else:
                elts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
                parts = elts + [x for g in node.generators for x in (g.iter, *g.ifs)]
            for part in parts:
                for n in ast.walk(part):
                    if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                            and n.func.attr in VERBS):
                        raise self._conditional(n.lineno, n, n.func.attr,
                                                "a lambda or comprehension")
        raise self.err(f"`{ast.unparse(node)}` is not supported in a kernel", node)

    e_Lambda = e_ListComp = e_SetComp = e_DictComp = e_GeneratorExp = _guarded

    def e_Subscript(self, node: ast.Subscript) -> tuple[K.Expr, Optional[Static]]:
        # the base and the index are built once each, as Python evaluates them: a helper call
        # in either (`t[put(...)]`, `load(...)[:, None]`) inlines its events once
        base, st = self.expr(node.value)
        single = not isinstance(node.slice, (ast.Tuple, ast.Slice))
        index = self.value(node.slice) if single else None
        if single and fold(index) is not None and (
                isinstance(base, K.TupleExpr) or st is not None and st.kind == "tuple"
                or self.tuple_shape(base, st) is not None):
            # a tuple's item is picked at compile time: Triton 3.6 refuses an index it holds as
            # a tensor (`i = 0; t[i]`), which the folded reading took for 0 (one that does not
            # fold is refused below)
            self.constexpr_operands(f"`{ast.unparse(node)}`", [node.slice])
        if isinstance(base, K.TupleExpr) and single:
            i = fold(index)
            if isinstance(i, int) and -len(base.items) <= i < len(base.items):
                self.no_dropped_effects(node, base.items, i % len(base.items),
                                        f"the subscript picks item {i}")
                item_st = st.value[i] if st is not None and st.kind == "tuple" else None
                return base.items[i], item_st
        if st is not None and st.kind == "tuple" and single:  # a name holding a tuple: `pipes[0]`
            i = fold(index)
            if isinstance(i, int) and -len(st.value) <= i < len(st.value):
                return self.item_of(base, st, i % len(st.value), self.loc(node))
        if single and fold(index) is None and self.tuple_shape(base, st) is not None:
            # the kernel IR is read once for every value of the kernel's constexpr parameters,
            # so an index the reading cannot fold cannot pick a tuple's item
            loop_var = self.is_runtime(index)
            raise self.err(f"`{ast.unparse(node)}`: a tuple's index must be a constant when the "
                           f"kernel is read (a literal, a module constant, the variable of a "
                           f"tl.static_range loop of constant bounds, or a partition or helper "
                           f"argument bound to one); `{ast.unparse(node.slice)}` is not "
                           + ("(a run-time value, such as the variable of a range / tl.range "
                              "loop: a tensor in Triton 3.6, which refuses the subscript; to "
                              "pick an item per iteration, loop with `tl.static_range`)"
                              if loop_var
                              else "(a constexpr parameter of the kernel is read for every "
                                   "value)"), node)
        elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        idx: list = []
        for e in elts:
            if isinstance(e, ast.Slice) and e.lower is None and e.upper is None and e.step is None:
                idx.append(":")
            elif isinstance(e, ast.Constant) and e.value is None:
                idx.append(None)
            else:
                v = fold(index if single else self.value(e))
                if not isinstance(v, int):
                    raise self.err("only `x[:, None]`-style expansions and constant tuple "
                                   "indices are supported", node)
                idx.append(v)
        return K.Subscript(self.checked_value(node.value, base, st), tuple(idx),
                           self.loc(node)), None

    def e_Attribute(self, node: ast.Attribute) -> tuple[K.Expr, Optional[Static]]:
        return self.attribute_of(*self.expr(node.value), node)

    def attribute_of(self, base: K.Expr, st: Optional[Static],
                     node: ast.Attribute) -> tuple[K.Expr, Optional[Static]]:
        """``base.attr`` where ``base`` (of ``node.value``) is built already."""
        loc = self.loc(node)
        if st is not None:
            if st.kind == "mod":
                path = canon(f"{st.value}.{node.attr}")
                if path.split(".")[0] in ("tl", "gl"):
                    dt = normalize_dtype(node.attr)
                    if dt is not None:
                        return K.DType(dt, loc), None
                    if path in PROPAGATE_NAN:
                        # a constexpr of tl.maximum / tl.minimum (Triton 3.6): its value, which
                        # language/call_args.py holds to the default the lowering computes
                        # (adversarial round 62: it was refused as "used as a value")
                        return K.Const(path, loc), None
                return K.Const(None, loc), Static("mod", path)
            if st.kind == "usermod":
                return self.module_name(st.value, node.attr, node)
            if st.kind == "pipe":
                if node.attr in ("writer", "reader"):
                    return K.Const(None, loc), Static("method", (st, node.attr))
                if node.attr in VERBS:
                    who = ast.unparse(node.value)
                    side = "writer()" if node.attr in ("acquire", "commit", "close") else \
                        "reader(...)"
                    raise self.err(f"`{who}.{node.attr}(...)`: pipe events go through a handle: "
                                   f"{who}.{side}.{node.attr}(i)", node, check="bad-event")
                raise self.err(f"pipe '{st.value.name}' has no method '{node.attr}' (writer, "
                               f"reader)", node)
            if st.kind == "handle":
                if node.attr in VERBS:
                    return K.Const(None, loc), Static("method", (st, node.attr))
                raise self.err(f"the {st.value.side} of pipe '{st.value.pipe}' has no "
                               f"'{node.attr}'", node)
        if node.attr == "slot":
            return K.ResultSlot(base, loc), None
        if node.attr == "is_closed":
            return K.IsClosed(base, loc), None
        if node.attr == "to":
            return K.Const(None, loc), Static("method", (base, "to"))
        if node.attr == "T":  # the transposed view (the lowering refuses it)
            return K.Op("T", (base,), (), loc), None
        return K.SlotField(base, node.attr, loc), None

    # -- calls ------------------------------------------------------------------------------
    def e_Call(self, node: ast.Call) -> tuple[K.Expr, Optional[Static]]:
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in TENSOR_MEMBERS:
            # `x.sum(1)`: the receiver is built once, then read as a member or an attribute
            receiver, rst = self.expr(f.value)
            if rst is None or rst.kind == "const":
                return self.member_call(receiver, rst, node)
            _, fst = self.attribute_of(receiver, rst, f)
        else:
            _, fst = self.expr(f)
        loc = self.loc(node)
        for k in node.keywords:
            if k.arg is None:  # read as absent, the call would bind other values than Python's
                raise self.err(f"`**{ast.unparse(k.value)}` in `{ast.unparse(node.func)}(...)`: "
                               f"spell keyword arguments out (name=value)", k.value,
                               check="bad-call")
        if fst is None:
            f = node.func
            if (self.in_partition and isinstance(f, ast.Attribute) and f.attr in VERBS
                    and len(node.args) == 1
                    and not (isinstance(f.value, ast.Name) and f.value.id in self.frame.lost)):
                who = ast.unparse(f.value)
                raise self.err(f"`{who}.{f.attr}(...)`: the frontend cannot tell which pipe "
                               f"handle `{who}` is (create handles with pipe.writer() / "
                               f"pipe.reader(...) and pass them as plain arguments)", node,
                               check="unknown-handle")
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) \
                    and f.value.id in self.frame.lost:
                who = ast.unparse(f.value)
                raise self.err(f"`{who}` holds different values on different paths, so "
                               f"`{who}.{f.attr}(...)` cannot be resolved", node)
            hint = ""
            if isinstance(f, ast.Attribute) and f.attr in ("load", "store", "gather",
                                                           "scatter"):
                # a tensor descriptor's method (`k_desc.load([...])`, Triton's TMA idiom)
                hint = (f": a tensor descriptor's `{f.attr}` is not lowered; copy a tile into a "
                        f"slot with tle.gpu.tma_load(slot.field, {ast.unparse(f.value)}, "
                        f"offsets), or use a tensor of pointers (base + offsets, with a mask)")
            raise self.err(f"`{ast.unparse(node.func)}` cannot be called in a kernel{hint}", node)
        if fst.kind == "func":
            self.helper_calls.add(node)
            return self.inline(fst.value, node)
        if fst.kind == "method":
            return self.call_method(fst.value, node)
        if fst.kind != "mod":
            raise self.err(f"`{ast.unparse(node.func)}` cannot be called", node)
        path = fst.value
        # a library function that does not exist (`tl.nothing_here(...)`, `tle.gpu.local_pointer`):
        # Triton raises AttributeError when it compiles the function (library_names.py)
        why = missing_attribute(path)
        if why is not None:
            raise self.err(f"`{ast.unparse(node.func)}`: {why}", node.func, check="unknown-name")
        if path in ("tl.constexpr", "gl.constexpr") and len(node.args) == 1:
            return self.expr(node.args[0])
        if path == "tle_compiler.pipe":
            if self.in_partition:
                raise self.err("tle.pipe must be declared in the kernel body (or a helper it "
                               "calls), not inside a partition", node, check="bad-pipe")
            decl = self.declare_pipe(node, None)  # not assigned: it needs name=
            return K.PipeRef(decl.name, loc), Static("pipe", decl)
        if path == "tle_compiler.gpu.alloc":
            return self.alloc(node)
        if path == "tle_compiler.gpu.local_ptr" and node.args and \
                isinstance(node.args[0], ast.Name):
            _, bst = self.expr(node.args[0])
            owner = self.buffer_owner.get(bst.value[0]) if bst is not None and \
                bst.kind == "buffer" else None
            if owner is not None:
                raise self.err(f"`{ast.unparse(node)}` reaches the buffer of field '{owner[1]}' of "
                               f"pipe '{owner[0]}' directly: use the slot of an acquire or a wait "
                               f"(whose window the verifier checks)", node, check="field-buffer")
        if path == "tle_compiler.gpu.warp_specialize":
            raise self.err("tle.gpu.warp_specialize must be a statement at the top level of the "
                           "kernel body", node, check="bad-warp-specialize")
        if path == "tle_compiler.gpu.tma_load":
            return self.tma_load(node), None
        short = path.replace("gl.", "tl.", 1).replace("builtins.", "", 1)
        if short.startswith("tl.") and short[3:] in UNLOWERED_CALLS:
            # the lowering translates no such call: refused where the kernel is read, with the
            # lowering's words, so that a verified kernel is one --gluon lowers
            raise self.err(f"`{short}` is not supported by the lowering: "
                           f"{UNLOWERED_CALLS[short[3:]]}", node, check="unlowered-call")
        if short == "tl.static_assert":
            self.static_assert_form(node)
        if short in ("tl.arange", "int", "float"):
            self.constexpr_operands(f"`{ast.unparse(node)}`", list(node.args))
        elif short in ("tl.program_id", "tl.num_programs"):
            # the axis: a compile-time 0, 1 or 2 ("program_id axis must be 0, 1, or 2")
            self.constexpr_operands(f"`{ast.unparse(node)}`",
                                    [*node.args[:1], *(k.value for k in node.keywords
                                                       if k.arg == "axis")])
        elif short in ("tl.zeros", "tl.full") and node.args \
                and isinstance(node.args[0], (ast.List, ast.Tuple)):
            self.constexpr_operands(f"the shape of `{ast.unparse(node)}`",
                                    list(node.args[0].elts))
        if path.startswith("triton."):
            return self.host_function(path, node), None
        saved, self.not_triton = self.not_triton, self.not_triton or path == "tle_compiler.assume"
        try:
            args, kwargs = self.call_arguments(node, self.value)
        finally:
            self.not_triton = saved
        if short == "tl.static_print" and any(_has_effect(a) for a in
                                              [*args, *(v for _, v in kwargs)]):
            # Triton 3.6 evaluates the arguments (execute_static_print visits them) and then
            # prints at compile time: the lowering emits nothing for the call, so an atomic or a
            # store there was dropped from the lowered kernel (adversarial round 63)
            raise self.err(f"`{ast.unparse(node)}`: an argument performs a pipe event or a "
                           f"write, which Triton evaluates, but tl.static_print is lowered to "
                           f"nothing and the write would be dropped: evaluate it in a "
                           f"statement of its own", node, check="unsupported-expression")
        if path in ("builtins.min", "builtins.max", "builtins.len", "builtins.abs") \
                and isinstance(node.func, ast.Attribute):
            # `builtins.min(...)`: Triton 3.6's dependency finder (runtime/jit.py
            # record_reference) refuses a function attribute of a module other than triton's,
            # math and copy that is no jit function, of numbers too
            raise self.err(f"`{ast.unparse(node)}`: Triton 3.6 does not compile a call of "
                           f"`{ast.unparse(node.func)}` (\"Unsupported function referenced: "
                           f"<built-in function {path[9:]}>\"): call {path[9:]} by its bare name",
                           node, check="unknown-name")
        if path in ("builtins.min", "builtins.max") and not self.triton_builtin(node.func) \
                and not all(type(fold(a)) in (int, float, bool) or isinstance(a, K.Name)
                            and a.id in self.constexpr_params for a in args):
            # Triton 3.6 reads a name its builtin namespace substitutes (min, max: tl's
            # builtin_min / builtin_max, which take tensors) there only where the function's
            # module does not bind it (code_generator's global lookup comes first): Python's
            # own min, bound by `from builtins import min`, `min = max` or reached as
            # `builtins.min`, is called with the tensors and fails ("Did you forget to add
            # @triton.jit ?"); of Python numbers it is Python's
            raise self.err(f"`{ast.unparse(node)}`: `{ast.unparse(node.func)}` is Python's "
                           f"{path[9:]} here (the module binds it, so Triton 3.6 does not read "
                           f"it as its own builtin), which Triton calls with a run-time value "
                           f"and fails (\"Did you forget to add @triton.jit ?\"): leave the name "
                           f"unbound at module level, or write tl.minimum / tl.maximum", node,
                           check="unsupported-expression")
        if path == "builtins.len" and len(args) == 1 and not kwargs:
            # the length of a tuple or list the kernel spells out (or a name bound to one) is
            # a number Python and Triton know when they compile: `range(len((a, b, c)))` runs 3
            # times; len of anything else is refused where it is used
            n = self.literal_length(node.args[0], args[0])
            if n is not None:
                if _has_effect(args[0]):
                    # (a tuple, a sum or a repetition of tuples: `len((w.commit(p),) * 0)` runs
                    # the commit once, and the reading kept only the count)
                    raise self.err(f"`{ast.unparse(node)}`: its argument performs a pipe event "
                                   f"or a write, which Python and Triton evaluate, but len "
                                   f"reads only its length and the reading would drop it: "
                                   f"evaluate it in a statement of its own", node,
                                   check="unsupported-expression")
                return K.Const(n, loc), None
        if path == "builtins.len":
            # of anything else (a tensor, whose len Triton 3.6 refuses: "object of type 'tensor'
            # has no len()", a range, a tuple the reading does not spell out) the lowering has
            # no translation: it was verified, and `--gluon` refused `builtins.len`
            raise self.err(f"`{ast.unparse(node)}`: the lowering translates len only of a tuple "
                           f"the kernel spells out (Triton 3.6 has no len of a tensor: \"object "
                           f"of type 'tensor' has no len()\")", node,
                           check="unsupported-expression")
        if path == "builtins.abs":
            # Triton 3.6 has no builtin abs: its names are the kernel module's globals and
            # len, list, range, float, int, isinstance, getattr, hasattr, print, min, max
            # (code_generator.builtin_namespace), so `abs(x)` raises NameError('abs is not
            # defined') and an imported one "Unsupported function referenced", of a tensor, a
            # constexpr or a literal alike; read as tl.abs, such a kernel was verified
            raise self.err(f"`{ast.unparse(node)}`: Triton 3.6 does not compile Python's abs "
                           f"(\"abs is not defined\"; imported from builtins: \"Unsupported "
                           f"function referenced\"): write tl.abs(x), or fold a constant's "
                           f"abs yourself", node, check="unknown-name")
        if path in ("builtins.float", "builtins.int") and len(args) == 1 and not kwargs:
            v = fold(args[0])
            if v is not None:
                try:
                    return K.Const(float(v) if path.endswith("float") else int(v), loc), None
                except (TypeError, ValueError):
                    pass
                except OverflowError as error:  # float(2 ** 1100), int(float('inf'))
                    raise PythonRaises(f"`{ast.unparse(node)}`",
                                       f"OverflowError: {error}", loc) from None
            return self.seq(K.Op(path, tuple(args), (), loc)), None
        if path.startswith("tle_compiler."):
            name = "tle." + path[len("tle_compiler."):]
        elif path.startswith("gl."):
            name = "tl." + path[3:]
        else:
            name = path
        if name == "tl.cdiv" and len(args) == 2 and not kwargs:
            # Triton's cdiv of a local number divides the tensor as C does
            self.folded_cdiv(node, list(zip(node.args, args)))
        args, kwargs = self.positional_keywords(name, args, kwargs, node)
        return self.seq(K.Op(name, tuple(args), tuple(kwargs), loc)), None

    def positional_keywords(self, name: str, args, kwargs, node) -> tuple[list, list]:
        """A reduction's arguments past its axis given by position (``tl.sum(x, 1, True)``,
        ``x.max(1, True)``) as the keywords Triton 3.6 binds them to (language/call_args.py
        ``keywords_of``): the verifier and the lowering read keep_dims / return_indices / dtype
        by keyword; such a call was refused (lowering adversarial round 11)."""
        from ..language import call_args

        try:
            return call_args.keywords_of(name, list(args), list(kwargs))
        except call_args.CallArgError as err:
            raise self.err(f"`{ast.unparse(node)}`: {err}", node,
                           check="unsupported-expression") from None

    def member_call(self, receiver: K.Expr, rst: Optional[Static],
                    node: ast.Call) -> tuple[K.Expr, Optional[Static]]:
        """``x.sum(1)``, ``x.reshape(M, N)``, ``ptr.store(v)``: a tensor's member function, which
        Triton 3.6 defines as the library function of the same name with the tensor as its first
        argument (core.py's ``_tensor_member_fn``), read as that call, ``tl.sum(x, 1)``, with the
        checks and the translation of the call spelled that way. The tensor is built once, before
        the call's arguments, as Python evaluates ``x.sum(...)``."""
        attr = node.func.attr
        instead = TENSOR_ONLY_MEMBERS.get(attr)
        if instead is not None:
            raise self.err(f"`{ast.unparse(node.func)}(...)`: the tensor method '{attr}' is not "
                           f"read by the frontend: {instead}", node, check="unlowered-call")
        value = fold(rst.value) if rst is not None else fold(receiver)
        if type(value) in (int, float, bool) or isinstance(receiver, K.Name) \
                and receiver.id in self.constexpr_params or self.static_arithmetic(receiver):
            # a compile-time number (written, a constexpr, a name bound to one, arithmetic of
            # tl.static_range variables: `i.cdiv(2)` was verified, adversarial round 37): a
            # constexpr or a Python int in Triton 3.6, which has no member functions
            # ("'constexpr' object has no attribute", "'int' object has no attribute")
            what = f"the compile-time number {value!r}" if value is not None \
                else f"the constexpr `{ast.unparse(node.func.value)}`"
            raise self.err(f"`{ast.unparse(node.func)}(...)` calls a member of {what}: Triton "
                           f"3.6's constexpr has none (\"'constexpr' object has no attribute "
                           f"'{attr}'\"); call tl.{attr} on a tensor, or fold the number "
                           f"yourself", node, check="unsupported-expression")
        if isinstance(receiver, K.DType) or isinstance(receiver, K.SlotField) \
                and receiver.field in ("dtype", "shape", "type"):
            # a dtype or a shape tuple: no tensor, so Python's AttributeError in Triton
            raise self.err(f"`{ast.unparse(node.func)}(...)`: `{ast.unparse(node.func.value)}` "
                           f"is no tensor and has no member '{attr}'", node,
                           check="unsupported-expression")
        if attr in UNLOWERED_CALLS:
            raise self.err(f"`{ast.unparse(node.func)}(...)` (tl.{attr}) is not supported by the "
                           f"lowering: {UNLOWERED_CALLS[attr]}", node, check="unlowered-call")
        if (attr == "store" or attr.startswith("atomic_")) and node.args and \
                isinstance(node.args[0], (ast.List, ast.Tuple)):
            # a tensor descriptor's `d.store(offsets, value)` (TMA), whose first operand is a
            # list of offsets: tl.store takes a pointer's value there, and read as one its value
            # was a mask (a float stored was refused as "a float, not a bool")
            raise self.err(f"`{ast.unparse(node)}`: a tensor descriptor's {attr} (offsets "
                           f"first) is not supported by the lowering: "
                           f"{'store' if attr == 'store' else 'update'} through a tensor of "
                           f"pointers (base + offsets, with a mask) instead", node,
                           check="unlowered-call")
        args, kwargs = self.call_arguments(node, self.value)
        args = [receiver, *args]
        if attr == "cdiv" and len(args) == 2 and not kwargs:
            self.folded_cdiv(node, list(zip([node.func.value, *node.args], args)))
        args, kwargs = self.positional_keywords(f"tl.{attr}", args, kwargs, node)
        return self.seq(K.Op(f"tl.{attr}", tuple(args), tuple(kwargs), self.loc(node))), None

    def host_function(self, path: str, node: ast.Call) -> K.Expr:
        """A call of a function of the host package ``triton`` (``triton.cdiv``,
        ``triton.next_power_of_2``), which Triton 3.6 runs as Python on its operands when it
        compiles the kernel: on compile-time numbers it gives one (the constant folded here, as
        Python computes it), on a tensor it fails (`n - 1` of a tensor outside Triton's code
        generator raises). The lowering translates no such call, so one left in the kernel IR
        was verified (a derived param of its own, `next_power_of_2_N`) and then refused by
        `--gluon`; it is refused here instead where its operands are not numbers when the kernel
        is built (check unlowered-call; a constexpr parameter stays a name in the kernel IR)."""
        self.constexpr_operands(f"`{ast.unparse(node)}`",
                                [*node.args, *(k.value for k in node.keywords)])

        def number(a: ast.expr) -> object:
            e, st = self.expr(a)
            e = self.checked_value(a, e, st)
            # a partition's constexpr parameter given a number is that number (its Static)
            return fold(st.value) if st is not None and st.kind == "const" else fold(e)

        params = HOST_FUNCTIONS.get(path)
        if params is not None and len(node.args) <= len(params):
            bound = {p: number(a) for p, a in zip(params, node.args)}
            if all(k.arg in params and k.arg not in bound for k in node.keywords):
                bound.update((k.arg, number(k.value)) for k in node.keywords)
            values = [bound.get(p) for p in params]
            if len(bound) == len(params) and all(type(v) in (int, bool) for v in values):
                try:
                    return K.Const(_host_value(path, values), self.loc(node))
                except ZeroDivisionError:
                    raise self.err(f"`{ast.unparse(node)}` divides by zero (Python raises "
                                   f"ZeroDivisionError when Triton compiles the kernel)", node,
                                   check="unsupported-expression") from None
        short = path[len("triton."):]
        if params is None:
            raise self.err(f"`{ast.unparse(node)}`: `triton.{short}` is a function of the host "
                           f"package triton, which Triton 3.6 runs as Python when it compiles "
                           f"the kernel and the lowering does not translate", node,
                           check="unlowered-call")
        instead = ("; for a run-time value or a constexpr parameter write tl.cdiv(x, div)"
                   if short == "cdiv" else "; compute it on the host and pass the result as a "
                   "constexpr")
        raise self.err(f"`{ast.unparse(node)}`: `triton.{short}` is a host function, which "
                       f"Triton 3.6 runs as Python when it compiles the kernel, on compile-time "
                       f"numbers only (on a tensor it fails), and the lowering translates no call "
                       f"of it: it is folded where the kernel is read, so its operands must be "
                       f"numbers there (literals, module constants){instead}", node,
                       check="unlowered-call")

    def literal_length(self, node: ast.expr, value: K.Expr) -> Optional[int]:
        """The length of ``len``'s argument where it is a tuple or list of known length: a
        tuple or list display without a starred item, or a value the reader holds as one (a
        name bound to a tuple), or a constant tuple or string. None elsewhere."""
        if isinstance(node, (ast.Tuple, ast.List)):
            if any(isinstance(e, ast.Starred) for e in node.elts):
                return None
            return len(node.elts)
        return self.known_length(value)

    def known_length(self, value: K.Expr) -> Optional[int]:
        """The length of a value the reader holds as a tuple, a constant tuple or string, a
        `range` of integer constants, or a `+` / `*` of them (`(1, 2) + (3,)`, `(N,) * 2`)."""
        if isinstance(value, (K.Const, K.Global)) and isinstance(value.value, (tuple, str)):
            return len(value.value)
        if isinstance(value, K.Op) and value.name == "builtins.range" and not value.kwargs \
                and 1 <= len(value.args) <= 3 and all(
                    isinstance(a, K.Const) and type(a.value) is int for a in value.args):
            try:
                return len(range(*(a.value for a in value.args)))
            except ValueError:  # a zero step: Python raises
                return None
        if isinstance(value, K.BinOp) and value.op in ("+", "*"):
            a, b = self.known_length(value.lhs), self.known_length(value.rhs)
            if value.op == "+":
                return a + b if a is not None and b is not None else None
            for n, k in ((a, value.rhs), (b, value.lhs)):
                if n is not None and isinstance(k, K.Const) and type(k.value) is int:
                    return n * max(k.value, 0)
            return None
        shape = self.tuple_shape(value, None)
        return len(shape) if shape is not None else None

    def tma_load(self, node: ast.Call) -> K.Expr:
        """``tle.gpu.tma_load(dst, desc, offsets)`` (positional or by keyword) as
        ``Op("tle.gpu.tma_load", (dst, desc, offsets))``; ``offsets`` a list or tuple of integer
        expressions, one per dimension of the box."""
        names = ("dst", "desc", "offsets")
        given: dict[str, ast.expr] = dict(zip(names, node.args))
        if len(node.args) > 3:
            raise self.err("tle.gpu.tma_load takes (dst, desc, offsets)", node, check="bad-tma")
        for k in node.keywords:
            if k.arg not in names:
                raise self.err(f"tle.gpu.tma_load has no argument '{k.arg}' (it takes dst, desc, "
                               f"offsets)", node, check="bad-tma")
            if k.arg in given:
                raise self.err(f"tle.gpu.tma_load: '{k.arg}' given twice", node, check="bad-tma")
            given[k.arg] = k.value
        missing = [n for n in names if n not in given]
        if missing:
            raise self.err(f"tle.gpu.tma_load needs {', '.join(missing)} (it takes dst, desc, "
                           f"offsets)", node, check="bad-tma")
        offsets = given["offsets"]
        if not isinstance(offsets, (ast.List, ast.Tuple)) or not offsets.elts:
            raise self.err(f"tle.gpu.tma_load: offsets must be a list of integer expressions, one "
                           f"per dimension of the box, got `{ast.unparse(offsets)}`", offsets,
                           check="bad-tma")
        args = (self.value(given["dst"]), self.value(given["desc"]),
                K.TupleExpr(tuple(self.value(e) for e in offsets.elts), self.loc(offsets)))
        return self.seq(K.Op("tle.gpu.tma_load", args, (), self.loc(node)))

    def seq(self, e: K.Expr) -> K.Expr:
        """In a statement that calls a helper, bind each call's value to a temporary now, so
        that what the helper's body does runs in Python's order around it."""
        if not self.sequential:
            return e
        t = self.fresh("t")
        self.emit(K.Assign(self.frame.kir(t), e, e.loc))
        self.frame.env[t] = None
        return K.Name(self.frame.kir(t), e.loc)

    def call_method(self, m: tuple, node: ast.Call) -> tuple[K.Expr, Optional[Static]]:
        base, name = m
        loc = self.loc(node)
        if isinstance(base, Static) and base.kind == "pipe":
            decl: K.PipeDecl = base.value
            if name == "writer":
                if node.args or node.keywords:
                    raise self.err(f"{decl.name}.writer() takes no arguments", node)
                h = K.Handle(decl.name, "writer", loc=loc)
                return h, Static("handle", h)
            h = self.make_reader(decl, node)
            return h, Static("handle", h)
        if isinstance(base, Static) and base.kind == "handle":
            h: K.Handle = base.value
            if len(node.args) + len(node.keywords) != 1:
                raise self.err(f"`{ast.unparse(node.func)}` takes one argument, the iteration "
                               f"index", node, check="bad-event")
            if node.keywords and node.keywords[0].arg != "i":
                # the language's verbs are `acquire(self, i)`, ...: Python binds no other
                # keyword (a TypeError), and `**kw` hides which one it binds
                given = "**" if node.keywords[0].arg is None else f"{node.keywords[0].arg}="
                raise self.err(f"`{ast.unparse(node.func)}` takes the iteration index as its "
                               f"argument or as `i=`, not `{given}...` (Python's TypeError: "
                               f"the verb has no such parameter)", node, check="bad-event")
            idx_node = node.args[0] if node.args else node.keywords[0].value
            ev = K.Event(name, h, self.value(idx_node), loc)
            return self.seq(ev), None
        # x.to(dtype, bitcast=...)
        args = [self.value(a) for a in node.args]
        kwargs = tuple((k.arg, self.value(k.value)) for k in node.keywords)
        return self.seq(K.Op("to", (base,) + tuple(args), kwargs, loc)), None

    def plain_def(self, module: Module, fdef: ast.FunctionDef, node: ast.AST, what: str) -> None:
        """A helper or partition is read as its def's body, which is what its name holds only
        without a decorator, or with ``@triton.jit`` / ``@gluon.jit`` (which compile that body):
        any other decorator binds the name to what it returns (a wrapper that calls the body
        twice, or not at all), so a partition calling it was verified on a body Python does not
        run as written."""
        for dec in fdef.decorator_list:
            target = dec.func if isinstance(dec, ast.Call) else dec
            path = module.scope.module_path(target)
            if path not in ("triton.jit", "triton.experimental.gluon.jit"):
                raise self.err(f"{what} '{fdef.name}' has the decorator `@{ast.unparse(dec)}`: "
                               f"the frontend reads the def's body, but Python binds "
                               f"'{fdef.name}' to what the decorator returns; drop it (or use "
                               f"@triton.jit)", node, check="bad-call")

    def inline(self, fn: tuple, node: ast.Call) -> tuple[K.Expr, Optional[Static]]:
        module, fdef = fn
        self.plain_def(module, fdef, node, "helper")
        if any(f.function == fdef.name and f.module is module for f in self.frames):
            raise self.err(f"recursive call of '{fdef.name}' in a partition: the frontend inlines "
                           f"helper functions and cannot inline a recursion", node,
                           check="recursion")
        args, kw_items = self.call_arguments(node, self.expr)
        kwargs = dict(kw_items)
        for a_node, (_, st) in zip(list(node.args) + [k.value for k in node.keywords],
                                   args + list(kwargs.values())):
            if st is not None and st.kind == "method":
                raise self.verb_as_value(a_node)
            if st is not None and st.kind == "mod":
                # a library function, class or module (`tl.store`, `range`, `tl`): Triton 3.6
                # specialises a jit function on each argument's type and fails on it ("'function'
                # object has no attribute 'type'"), where the frontend called it through the
                # parameter; a jit function (a helper) or a dtype is passed
                raise self.err(f"`{ast.unparse(a_node)}` passed to '{fdef.name}': Triton 3.6 "
                               f"cannot pass a library function, class or module to a jit "
                               f"function (\"object has no attribute 'type'\"); call it in "
                               f"'{fdef.name}' by its name", a_node, check="bad-call")
        prefix = self.helper_prefix(fdef.name)
        frame = Frame(module, prefix, {}, fdef.name, stores=_stores(fdef.body))
        sig = fdef.args
        if sig.vararg is not None or sig.kwarg is not None:
            star = f"*{sig.vararg.arg}" if sig.vararg is not None else f"**{sig.kwarg.arg}"
            raise self.err(f"'{fdef.name}' takes `{star}`, which Triton 3.6 cannot compile in a "
                           f"jit function (it binds the tuple or dict as one argument and fails: "
                           f"\"object has no attribute 'type'\"), even when the call passes "
                           f"nothing there: name the parameters", node, check="bad-call")
        refusal = positional_only(fdef) or import_time_call(fdef, module.scope.module_path)
        if refusal is not None:
            raise self.err(refusal, node, check="bad-call")
        positional = [p.arg for p in sig.posonlyargs + sig.args]
        params = positional + [p.arg for p in sig.kwonlyargs]
        # Triton passes a tensor argument to a jit function as a tensor: a caller's local
        # tensor name (`B = 64`, then `put(..., B)`) is one in the helper too, and so is a
        # partition's parameter given a name the kernel body binds by a plain assignment
        # (`k0 = 0` in the body, then `add(t, k0)`: `a + b` of an i8 tile is an i32 there)
        passed = list(zip(positional, node.args)) + [(k.arg, k.value) for k in node.keywords]
        frame.tensor_params = {p: self.tensor_origin(t) for p, t in (
            (p, self._folded_tensor(a)) for p, a in passed) if p in params and t is not None}
        frame.tensor_items = {p: items for p, items in (
            (p, self.tensor_items_of(a)) for p, a in passed)
            if p in params and p not in frame.tensor_params and items}
        # ... and a number, a caller's constexpr or arithmetic on those as a constexpr: the
        # helper's parameter is a constexpr then, and rebinding it in a loop or a branch of an
        # `if` on a runtime value is refused as Triton refuses it (constexpr_rebound_in_region;
        # `if c: s = 2.0` of `s` given 3.0 was verified and lowered, where Triton 3.6 fails:
        # "initial value for `s` is of type constexpr[3.0], but the then block redefines it")
        frame.constexprs = {p for p, a in passed
                            if p in params and p not in frame.tensor_params
                            and self.constexpr_argument(a)}
        if len(args) > len(positional):
            raise self.err(f"'{fdef.name}' takes {len(positional)} positional arguments, "
                           f"{len(args)} given", node, check="bad-call")
        # Python's rules: `defaults` are those of the last positional parameters, positional-only
        # ones included; keyword-only parameters have their own
        defaults = dict(zip(positional[len(positional) - len(sig.defaults):], sig.defaults))
        defaults.update((p.arg, d) for p, d in zip(sig.kwonlyargs, sig.kw_defaults)
                        if d is not None)
        bound: dict[str, tuple[K.Expr, Optional[Static]]] = {}
        for p, a in zip(positional, args):
            bound[p] = a
        for k, a in kwargs.items():
            if k not in params or k in {p.arg for p in sig.posonlyargs}:
                raise self.err(f"'{fdef.name}' has no parameter '{k}' that a keyword can "
                               f"name", node, check="bad-call")
            if k in bound:
                raise self.err(f"'{fdef.name}' got multiple values for argument '{k}' (Python "
                               f"raises TypeError)", node, check="bad-call")
            bound[k] = a
        # A default is evaluated once, where the def stands, in the module's scope (not the
        # helper's: a parameter of the same name is not seen). Triton also runs every plain
        # parameter's default as code in the helper, given or not (helper_signatures.py), and
        # passes one the call leaves out as its Python value.
        args_of = {a.arg: a for a in sig.args}
        for p in params:
            if p in defaults and p in args_of and p in bound:
                e, _ = self.default_value(module, fdef, p, defaults[p], python=False)
                refusal = default_as_code(fdef, args_of[p], defaults[p], e)
                if refusal is not None:
                    raise TleError(refusal, _loc(module.path, defaults[p]), check="bad-call")
            if p not in bound and p in defaults:
                if p in args_of:
                    e, _ = self.default_value(module, fdef, p, defaults[p], python=False)
                    refusal = default_as_code(fdef, args_of[p], defaults[p], e)
                    if refusal is not None:
                        raise TleError(refusal, _loc(module.path, defaults[p]), check="bad-call")
                bound[p] = self.default_value(module, fdef, p, defaults[p])
                refusal = omitted_default(fdef, p, defaults[p], bound[p][0],
                                          self.constexpr_wrapped(module, defaults[p]))
                if refusal is not None:
                    raise self.err(refusal, node, check="bad-call")
        self.frames.append(frame)
        try:
            for p in params:
                if p not in bound:
                    raise self.err(f"'{fdef.name}': missing argument '{p}'", node,
                                   check="bad-call")
            kwonly = {a.arg for a in sig.kwonlyargs}
            # the arguments bind in the order Python (and Triton 3.6's visit_Call) evaluates
            # them: the positional ones, then the keyword ones as written, whatever the order of
            # the parameters they name (`pick(b=r.wait(p), a=w.commit(p))` waits first); the
            # defaults, evaluated at the def, after them (adversarial round 63: they bound in
            # the parameters' order, so the events of keyword arguments ran reordered)
            given = positional[:len(args)] + [k for k, _ in kw_items]
            for p in given + [p for p in params if p not in given]:
                e, st = bound[p]
                if p in kwonly:
                    # Triton never binds a keyword-only parameter in the body: a read of it is
                    # refused there, as Triton refuses it (or reads a module constexpr instead);
                    # but it evaluates the argument, so an event or a write there runs
                    # (adversarial round 63: `nop(a=w.commit(p))` of `def nop(*, a)` was dropped,
                    # from the verdict and the lowered kernel alike)
                    frame.undefined[p] = keyword_only_why(fdef, p)
                    if p in kwargs and _has_effect(e):
                        self.emit(K.Assign(frame.kir(p), e, e.loc))
                    continue
                # A name passed in is read in place: nothing the helper does can rebind the
                # caller's variable, so the parameter is that variable while it is not assigned.
                # A tuple with a runtime item (`(r, 7)`, a caller's name holding one) is bound
                # to the parameter: its compile-time items resolve in place, the others are read
                # as `param[i]` (item_of), which needs the name.
                if isinstance(e, K.TupleExpr):
                    # an item that loads is read here, where Python evaluates the argument, not
                    # where the helper reads `param[i]` (snapshot)
                    e, st = self.snapshot(e, st, node)
                st = _literal_items(e, st)
                if st is not None and st.kind == "tuple" and any(
                        x is None or x.kind == "tuple" for x in st.value):
                    frame.env[p] = st
                    self.emit(K.Assign(frame.kir(p), e, e.loc))
                    self.note_runtime(frame.kir(p), e)
                    shape = self.tuple_shape(e, st)
                    if shape is not None:
                        self.tuple_shapes[frame.kir(p)] = shape
                    continue
                # So is arithmetic on constants and tl.static_range variables (`i - 1`): Triton
                # passes it as a constexpr, which the helper divides as Python does. Bound to a
                # variable here, the lowered Gluon held it as a tensor and divided it as C does,
                # where the verifier read Python's.
                if st is not None and st.kind == "buffer" and st.value[1] is None \
                        and st.value[0] not in self.buffer_owner:
                    # a free buffer no name holds yet (`st0(t[1])`): named for the parameter,
                    # so that the helper's accesses reach it (adversarial round 65: they reached
                    # no buffer the race check saw, and the lowering an undefined name)
                    st = Static("buffer", (st.value[0], self.name_buffer(st, p, node)))
                if st is not None or isinstance(e, (K.Const, K.Global, K.DType, K.Name)) or (
                        self.static_arithmetic(e)) or self.constexpr_in_place(e):
                    frame.env[p] = st if st is not None else Static("const", e)
                    continue
                frame.env[p] = None
                self.emit(K.Assign(frame.kir(p), e, e.loc))
                self.note_runtime(frame.kir(p), e)
                shape = self.tuple_shape(e, None)
                if shape is not None:
                    self.tuple_shapes[frame.kir(p)] = shape
            body = list(fdef.body)
            ret: tuple[K.Expr, Optional[Static]] = (K.Const(None, self.loc(node)), None)
            for i, st in enumerate(body):
                if isinstance(st, ast.Return):
                    if i != len(body) - 1:
                        raise self.err(f"early `return` in '{fdef.name}': a helper returns at its "
                                       f"end", st, check="unsupported-control-flow")
                    if st.value is not None:
                        ret = self.expr(st.value)
                    continue
                self.stmt(st)
        finally:
            self.frames.pop()
        e, st = ret
        if self.in_partition and (st is None or st.kind == "const"):
            # ... and refuses one outside i64 and u64 (`return x + y` given 2**70 and 1)
            value = self.wide_fold(st.value if st is not None and isinstance(st.value, K.Expr)
                                   else e)
            if type(value) is int and not tensor_holds(value):
                raise self.err(f"`{ast.unparse(node)}` returns the integer {number_text(value)}, "
                               f"outside i64 and u64: Triton 3.6 makes a tensor of what a jit "
                               f"function returns and refuses this one (\"Nonrepresentable "
                               f"integer\"), so the kernel does not compile", node,
                               check="unsupported-expression")
            # Triton's visit_Return makes a returned number (a constexpr too: `return v` of a
            # parameter given 100) a tensor, an i32, u32 or i64 by an int's range, an fp32 (as a
            # plain assignment does, tensor_number), so `t + hlp()` of an int8 tile adds in i32
            # where `t + 100` stays i8
            made = _tensor_items(st.value if st is not None else e)
            if st is None or isinstance(made, K.Op):
                e, st = made, None
        elif self.in_partition and st is not None and st.kind == "tuple":
            # so is each number item of a returned tuple, at any depth (visit_Return's decay):
            # `t + h(t)[1]` of a helper returning `(t, 100)` adds in i32; the item was the
            # literal, read where the call's item stood (an i8 add; lowering adversarial round
            # 11)
            e, st = _tensor_items(e), _tensor_statics(st)
        # An effect-free helper's value is its expression, used where the call stands; any
        # other helper's value is bound where its body ends (later statements may change it).
        if st is None and not self.effect_free(module, fdef) and not isinstance(
                e, (K.Const, K.Global, K.DType, K.Name, K.TupleExpr)):
            t = frame.kir("ret")
            self.emit(K.Assign(t, e, e.loc))
            e = K.Name(t, e.loc)
        return e, st

    def constexpr_wrapped(self, module: Module, node: ast.expr) -> bool:
        """Whether ``node`` is written ``tl.constexpr(...)``, directly or as a module-level name
        (of ``module`` or one it imports) assigned so: Triton passes such a value to a jit
        function as a constexpr, whatever it holds."""
        for _ in range(16):
            if isinstance(node, ast.Call):
                return module.scope.module_path(node.func) == "tl.constexpr"
            if not isinstance(node, ast.Name):
                return False
            if node.id in module.assigns:
                node = module.assigns[node.id]
            elif node.id in module.imports:
                sub, attr = self.imported(module, node.id)
                if attr is None or attr not in sub.assigns:
                    return False
                module, node = sub, sub.assigns[attr]
            else:
                return False
        return False

    def default_value(self, module: Module, fdef: ast.FunctionDef, p: str,
                      node: ast.expr, python: bool = True) -> tuple[K.Expr, Optional[Static]]:
        """The default of parameter ``p`` of helper ``fdef``: Python evaluates it once, where the
        def stands, in the module's scope. A module-level name it reads that the module binds
        again after the def is an error (the frontend reads module names at their last
        binding, which is not the value the default took). A default that Python computes to a
        number or bool (``FLAG=1 < 2``, ``n=0 or 4``) is that constant: left as the comparison's
        expression it was a runtime comparison for the protocol view, and an ``if FLAG:`` around
        pipe events was refused as depending on data."""
        for n in ast.walk(node) if python else ():
            if isinstance(n, ast.Name):
                later = [ln for ln in module.bound_lines.get(n.id, ()) if ln > fdef.lineno]
                if later:
                    raise self.err(f"the default of '{p}' in '{fdef.name}' reads '{n.id}', which "
                                   f"the module binds again at line {later[0]}, after the def: "
                                   f"Python evaluates a default once, where the def stands "
                                   f"(pass the value or bind '{n.id}' once)", n,
                                   check="bad-call")
        self.frames.append(Frame(module, self.helper_prefix(fdef.name), {}, fdef.name))
        # ``python``: the value Python gives the default at the def; else read as the Triton code
        # the helper runs (`p = default`), whose chained comparisons Triton refuses
        saved, self.not_triton = self.not_triton, python
        try:
            e, st = self.expr(node)
        finally:
            self.not_triton = saved
            self.frames.pop()
        value = fold(e) if st is None else None
        if isinstance(value, (bool, int, float)):
            return K.Const(value, e.loc), None
        return e, st

    def _next(self) -> int:
        self.counter += 1
        return self.counter

    # -- kernel-level declarations ----------------------------------------------------------
    def literal(self, node: Optional[ast.expr]) -> object:
        """A Python literal from a compile-time expression (for the declaration rules shared
        with the language); what is not one comes as :class:`Unevaluated` (its source)."""
        if node is None:
            return None
        e, st = self.expr(node)
        e = self.checked_value(node, e, st)
        if st is not None and st.kind in ("buffer", "pipe", "handle"):
            # a shared buffer, pipe or handle is held as a static beside a None: it is no
            # literal (`tle.pipe(name=tle.gpu.alloc(...))`, `kv.reader(buf)`), which Python's
            # declaration rules refuse, not the None that leaves the option at its default
            return Unevaluated(ast.unparse(node))
        if isinstance(e, K.Const) and e.value is None:
            return None
        if isinstance(e, K.DType):
            return e.name
        v = fold(e)
        if v is None:
            return Unevaluated(ast.unparse(node))
        if isinstance(v, tuple) and isinstance(node, ast.List):
            return list(v)
        return v

    def alloc(self, node: ast.Call) -> tuple[K.Expr, Optional[Static]]:
        loc = self.loc(node)
        kw = {k.arg: k.value for k in node.keywords}
        shape_n = node.args[0] if node.args else kw.get("shape")
        dtype_n = node.args[1] if len(node.args) > 1 else kw.get("dtype")
        scope_n = node.args[2] if len(node.args) > 2 else kw.get("scope")
        for a in node.args[3:]:
            raise self.err("tle.gpu.alloc(shape, dtype, scope=tle.gpu.smem): too many arguments", a)
        if shape_n is None or dtype_n is None:
            raise self.err("tle.gpu.alloc(shape, dtype, scope=tle.gpu.smem): shape and dtype are "
                           "required", node, check="bad-alloc")
        shape: object
        if isinstance(shape_n, (ast.List, ast.Tuple)):
            dims: list = []
            symbolic: set[int] = set()
            for e in shape_n.elts:
                try:
                    v = self.value(e)
                except TleError as ex:
                    if ex.check != "unknown-name":
                        raise
                    symbolic.add(len(dims))
                    dims.append(ast.unparse(e))  # not known here: its source (a symbolic size)
                    continue
                c = fold(v)
                dims.append(c if isinstance(c, int) and not isinstance(c, bool) else
                            v.id if isinstance(v, K.Name) else ast.unparse(e))
            for i, (d, e) in enumerate(zip(dims, shape_n.elts)):
                # The lowering sizes shared memory from integers and the kernel's constexpr
                # parameters by name (lowering/plan.resolve_dim): a runtime value (`N`, a program
                # id), a name the kernel body binds or an expression of constexprs (`C * 1`) was
                # verified and then refused there; Triton cannot allocate the first two either.
                # (A name not defined here stays its source, a symbolic size, as before.)
                rebound = self.constexpr_rebound(d) if isinstance(d, str) else None
                if not isinstance(d, int) and i not in symbolic \
                        and (d not in self.constexpr_params or rebound is not None):
                    again = "" if rebound is None else (
                        f" (the kernel body binds '{d}' again" + (f" at line {rebound}"
                                                                  if rebound else "") + ")")
                    raise self.err(f"tle.gpu.alloc: dimension `{ast.unparse(e)}` is not a "
                                   f"compile-time integer the lowering can size{again}: write an "
                                   f"integer, a module constant, or a constexpr parameter of the "
                                   f"kernel by its name", e, check="bad-alloc")
            shape = dims
        else:
            shape = Unevaluated(ast.unparse(shape_n))
        dt = self.value(dtype_n)
        if isinstance(dt, K.DType):
            dtype: object = dt.name
        else:
            c = fold(dt)
            dtype = c if isinstance(c, str) else Unevaluated(ast.unparse(dtype_n))
        scope: object = smem
        if scope_n is not None:
            _, sst = self.expr(scope_n)
            if sst is not None and sst.kind == "mod" and sst.value == "tle_compiler.gpu.smem":
                scope = smem
            else:
                sv = fold(self.value(scope_n))
                scope = sv if sv is not None else Unevaluated(ast.unparse(scope_n))
        checked = validate_alloc(shape, dtype, scope, loc, symbolic_ok=True)
        buf = K.Buffer("", tuple(checked.shape), checked.dtype, loc)
        # Each evaluation allocates a buffer of its own, as Python runs the call each time: a
        # helper that declares a pipe (or returns a buffer) called twice makes two rings
        # (adversarial round 65: keyed by the call's node, `ka = mk("ka"); kb = mk("kb")` of
        # `def mk(nm): return tle.pipe(..., name=nm, t=tle.gpu.alloc(...))` read one buffer
        # behind both pipes and was refused, `aliased-buffer`, and a free buffer from a helper
        # that also made a pipe's field was read as that field, `field-buffer`)
        self.allocs += 1
        key = self.allocs
        self.buffers[key] = buf
        return K.Const(None, loc), Static("buffer", (key, None))

    def unused_buffer_name(self) -> str:
        """A name for a free buffer no variable names (`_buf1`, ...): no buffer's, and none a
        file read spells."""
        k = 1
        while f"_buf{k}" in self.free_buffers or any(f"_buf{k}" in ids for ids in self.spelt()):
            k += 1
        return f"_buf{k}"

    def name_buffer(self, st: Static, name: str, node: ast.AST) -> str:
        """Name the free buffer ``st`` after the variable ``name`` first bound to it; the name
        the KIR gives it. A name another buffer already holds (a helper's local `fb` of two
        calls, `fb` bound to a second alloc while `fa = fb` keeps the first, a helper's `fb`
        beside the kernel body's) is numbered, `fb_2`: one name for two buffers read them as
        one, whose partitions' accesses raced. And a buffer named already keeps its name: one
        reached again unnamed (`t = (tle.gpu.alloc(...),)`, then `fa = t[0]` and `fc = t[0]`,
        or a helper's returned tuple) got a second name, two buffers of the KIR, and a
        partition writing `fa` beside one reading `fc` was verified: a race (adversarial round
        65)."""
        key = st.value[0]
        if key in self.buffer_names:
            return self.buffer_names[key]
        if name in self.free_buffers:
            base, k = name, 2
            while f"{base}_{k}" in self.free_buffers or any(
                    f"{base}_{k}" in ids for ids in self.spelt()):
                k += 1
            name = f"{base}_{k}"
        buf = self.buffers[key]
        self.buffers[key] = K.Buffer(name, buf.shape, buf.dtype, buf.loc)
        self.free_buffers[name] = self.buffers[key]
        self.buffer_names[key] = name
        return name

    def declare_pipe(self, node: ast.Call, var: Optional[str]) -> K.PipeDecl:
        """``tle.pipe(...)`` at the top level of the kernel body: the declaration rules of the
        language (language/pipe.py: validate_pipe), checked with each argument's line."""
        if self.depth:
            raise self.err("tle.pipe must be declared at the top level of the kernel body (not "
                           "inside a loop, an if or a with)", node, check="bad-pipe")
        if node.args:
            raise self.err("tle.pipe takes keyword arguments only: tle.pipe(capacity=C, ..., "
                           "field=tle.gpu.alloc(...))", node.args[0], check="bad-pipe")
        opts: dict[str, object] = {"scope": "cta", "name": var, "readers": (), "one_shot": False,
                                   "barrier": "mbarrier"}
        arg_locs: dict[str, Loc] = {}
        fields: dict[str, object] = {}
        refs: dict[str, tuple[int, Optional[str], ast.keyword]] = {}
        capacity: object = None
        for kwn in node.keywords:
            if kwn.arg is None:
                raise self.err("tle.pipe: write each field as name=tle.gpu.alloc(...), not "
                               "**fields", kwn.value, check="bad-pipe")
            arg_locs[kwn.arg] = self.loc(kwn)
            if kwn.arg in ("capacity", "scope", "name", "readers", "one_shot", "barrier"):
                lit = self.literal(kwn.value)
                if kwn.arg == "capacity":
                    capacity = lit
                    if isinstance(lit, Unevaluated):
                        bound = self.capacity_of_constexprs(kwn.value)
                        capacity = lit if bound is None else bound
                elif kwn.arg == "name" and lit is None:
                    pass  # name=None: the variable's name
                else:
                    opts[kwn.arg] = lit
                continue
            _, st = self.expr(kwn.value)
            if st is not None and st.kind == "buffer":
                key, free_name = st.value
                fields[kwn.arg] = SharedBuffer(self.buffers[key].shape, self.buffers[key].dtype)
                refs[kwn.arg] = (key, free_name, kwn)
            else:
                fields[kwn.arg] = Unevaluated(ast.unparse(kwn.value))
        if capacity is None:
            raise self.err("tle.pipe: capacity= is required", node, check="bad-pipe")
        if opts["name"] is None:
            raise self.err("tle.pipe: name= is required when the pipe is not assigned to a "
                           "variable", node, check="bad-pipe")
        if fields:
            arg_locs.setdefault("fields", self.loc(node))
        checked = validate_pipe(capacity=capacity, scope=opts["scope"], name=opts["name"],
                                readers=opts["readers"], one_shot=opts["one_shot"], fields=fields,
                                loc=self.loc(node), arg_locs=arg_locs, barrier=opts["barrier"])
        if checked.name in self.pipes:
            first = self.pipes[checked.name].loc.line
            raise self.err(f"pipe '{checked.name}' is declared twice (first at line {first})",
                           node, check="bad-pipe")
        out: list[K.Buffer] = []
        for fname, _ in checked.fields:
            key, free_name, kwn = refs[fname]
            buf = self.buffers[key]
            owner = self.buffer_owner.get(key)
            if owner is not None:
                # one buffer behind two fields: two rings in the same shared memory, which no
                # barrier of either pipe orders
                what = f"`{ast.unparse(kwn.value)}` (the tle.gpu.alloc at line {buf.loc.line})"
                raise self.err(f"{what} is already field '{owner[1]}' of pipe '{owner[0]}' (line "
                               f"{owner[2].line}): each pipe field needs its own buffer",
                               kwn.value, check="aliased-buffer")
            self.buffer_owner[key] = (checked.name, fname, self.loc(kwn))
            if free_name is not None:
                self.free_buffers.pop(free_name, None)
            out.append(K.Buffer(fname, buf.shape, buf.dtype, self.loc(kwn)))  # the field's line
            check_slot_shape(checked.name, out[-1])  # power-of-two slot dims (shared_memory.py)
        decl = K.PipeDecl(checked.name, checked.capacity, tuple(out), checked.readers,
                          checked.one_shot, self.loc(node), named=checked.named)
        self.pipes[checked.name] = decl
        return decl

    def capacity_of_constexprs(self, node: ast.expr) -> Optional[object]:
        """A capacity that is no literal but reads constexpr parameters of the kernel
        (``tle.pipe(capacity=STAGES, ...)``, ``STAGES + 1``) is a number once they are: the
        reading stops with a check of SPECIALIZABLE, so that tle-dump (with DEFAULT_CONFIG's
        values or a --param) and a compile or launch (with the values it is given) read the kernel
        again specialised to them, where the capacity is an integer the declaration rules check.
        In a build that binds them, the capacity's value: a helper's parameter given a kernel
        constexpr (``mk(STAGES)`` declaring ``tle.pipe(capacity=C, ...)``) reads it by the
        kernel's name, which the build binds. Anything else is left to those rules (None; a
        runtime value: ``bad-pipe``)."""
        try:
            e = self.value(node)
        except TleError:
            return None
        # a name the kernel body bound again before the declaration (`STAGES = 1`, `STAGES =
        # N`) reads as the same KIR name as the parameter: it holds that binding's value, not
        # the constexpr's. Read as the parameter, the pipe was verified (and lowered) with the
        # constexpr's capacity where the kernel declares another
        # (a plain assignment ends its constexpr binding; the variable of a tl.static_range
        # loop keeps its last value after the loop: any binding of the kernel body before the
        # statement being built counts)
        read = [n.id for n in K.walk_expr(e) if isinstance(n, K.Name)]
        rebound = [(n, line) for n in read if (line := self.constexpr_rebound(n)) is not None]
        if rebound:
            name, line = rebound[0]
            where = f" (line {line})" if line else ""
            raise self.err(f"pipe capacity `{ast.unparse(node)}` reads '{name}', which the "
                           f"kernel body binds again{where}: the capacity would be that value, "
                           f"not constexpr {name}'s; read the constexpr parameter itself, or "
                           f"bind the other value to another name (`S: tl.constexpr = ...`)",
                           node, check="bad-pipe")
        names = tuple(dict.fromkeys(n for n in read if n in self.constexpr_params))
        if not names or any(n not in self.constexpr_params for n in read):  # a runtime value
            return None
        if all(type(self.bind.get(n)) is int for n in names):
            return fold(self.with_bound_constexprs(e))
        config = self.frames[0].module.default_config
        unread = (f" (DEFAULT_CONFIG, line {config[1]}, is no literal dict: tle-dump reads "
                  f"no values from it)" if isinstance(config, tuple) and config
                  and config[0] == "error" else _no_integer_in_config(config,
                                                                      self.kernel_name, names))
        raise CapacityOfConstexprs(
            f"pipe capacity `{ast.unparse(node)}` is read from constexpr {', '.join(names)}: give "
            f"{'it a value' if len(names) == 1 else 'them values'} (DEFAULT_CONFIG's "
            f"\"constexprs\", tle-dump --param {names[0]}=..., or a launch's), with which the "
            f"kernel is read specialised, verified and lowered{unread}",
            self.loc(node), names, self.kernel_name, config)

    def constexpr_rebound(self, name: str) -> Optional[int]:
        """For a constexpr parameter of the kernel that the kernel body has bound again before
        the statement being built (a plain assignment, which ends its constexpr binding, or the
        variable of a tl.static_range loop, which keeps its last value after the loop), the
        line of the first such binding (0 when unknown); None otherwise. Such a name reads as
        the same KIR name as the parameter, and holds the new value, not the constexpr's."""
        if name not in self.constexpr_params:
            return None
        kernel = self.frames[0]
        here = getattr(self, "kernel_stmt", (0, 0))
        before = [at for at in kernel.stores.get(name, ()) if at < here]
        if name in kernel.constexprs and not before:
            return None
        return min(before)[0] if before else 0

    def with_bound_constexprs(self, e: K.Expr) -> K.Expr:
        """``e`` (arithmetic, comparisons, Boolean operators) with each kernel constexpr this
        build binds replaced by its value."""
        if isinstance(e, K.Name) and e.id in self.constexpr_params \
                and type(self.bind.get(e.id)) is int:
            return K.Const(self.bind[e.id], e.loc)
        if isinstance(e, (K.BinOp, K.Compare)):
            return dataclasses.replace(e, lhs=self.with_bound_constexprs(e.lhs),
                                       rhs=self.with_bound_constexprs(e.rhs))
        if isinstance(e, K.UnaryOp):
            return dataclasses.replace(e, operand=self.with_bound_constexprs(e.operand))
        if isinstance(e, K.BoolOp):
            return dataclasses.replace(e, items=tuple(self.with_bound_constexprs(x)
                                                      for x in e.items))
        return e

    def make_reader(self, decl: K.PipeDecl, node: ast.Call) -> K.Handle:
        """``pipe.reader(name=None, fields=None)``: the language's rules (validate_reader), and
        every handle of one reader sees the same fields."""
        loc = self.loc(node)
        kw = {k.arg: k.value for k in node.keywords}
        if set(kw) - {"name", "fields"} or len(node.args) > 2 or (node.args and "name" in kw) \
                or (len(node.args) > 1 and "fields" in kw):
            raise self.err(f"{ast.unparse(node.func)}(name=None, fields=None): bad arguments", node)
        rname = self.literal(node.args[0] if node.args else kw.get("name"))
        fields = self.literal(node.args[1] if len(node.args) > 1 else kw.get("fields"))
        reader, view = validate_reader(_decl_view(decl), rname, fields, loc)
        # the barriers are laid out per reader view, and a wider second handle would read fields
        # nobody waited for
        seen = view or tuple(b.name for b in decl.fields)
        first = self.reader_views.setdefault((decl.name, reader), (seen, loc))
        if set(first[0]) != set(seen):
            who = f"reader '{reader}'" if reader else "the reader"
            raise self.err(f"{who} of pipe '{decl.name}' has two handles with different views: "
                           f"fields ({', '.join(first[0])}) at line {first[1].line}, fields "
                           f"({', '.join(seen)}) at line {loc.line}; make every handle of a reader "
                           f"with the same fields=", node, check="inconsistent-view")
        return K.Handle(decl.name, "reader", reader, view, loc)

    # -- the kernel -------------------------------------------------------------------------
    def kernel(self, fdef: ast.FunctionDef, dec: ast.expr) -> K.Kernel:
        m = self.root
        calls = [n for n in _walk_no_defs(fdef.body) if isinstance(n, ast.Call)
                 and m.scope.is_tle(n.func, "gpu.warp_specialize")]
        if len(calls) > 1:
            raise TleError("a kernel calls tle.gpu.warp_specialize once; this is a second call",
                           _loc(m.path, calls[1]), check="bad-warp-specialize")
        ws_stmt = next((s for s in fdef.body if calls and isinstance(s, ast.Expr)
                        and s.value is calls[0]), None)
        if calls and ws_stmt is None:
            raise TleError("tle.gpu.warp_specialize must be a statement at the top level of the "
                           "kernel body (not nested in a loop, an if, or an expression)",
                           _loc(m.path, calls[0]), check="bad-warp-specialize")
        num_warps, options = jit_options(m.scope, dec, m.path, fdef)
        _check_kernel_signature(m.path, fdef)
        params = []
        frame = Frame(m, "", {}, "<kernel>", stores=_stores(fdef.body))
        self.constexpr_params = set()
        self.kernel_stmt = (0, 0)  # the kernel-body statement being built (line, column)
        self.kernel_name = fdef.name
        for p, cx in kernel_params(m.scope, fdef):
            params.append(K.KParam(p.arg, cx, _loc(m.path, p),
                                   floating=not cx and is_float_param(m.scope, fdef, p)))
            if cx:
                self.constexpr_params.add(p.arg)
                frame.constexprs.add(p.arg)
            if cx and isinstance(self.bind.get(p.arg), int):
                frame.env[p.arg] = Static("const", K.Const(self.bind[p.arg]))
            else:
                frame.env[p.arg] = None
                if not cx:
                    self.runtime.add(p.arg)
        self.param_names = {p.name for p in params}  # (fold_body reads no parameter's name)
        self.frames.append(frame)
        ws = None
        prologue: list[K.Stmt] = []
        self.out = prologue
        for i, st in enumerate(fdef.body):
            if st is ws_stmt:
                ws = st.value
                for rest in fdef.body[i + 1:]:
                    for n in _walk_no_defs([rest]):
                        if isinstance(n, ast.Call) and m.scope.module_path(n.func) == \
                                "tle_compiler.assume":
                            raise self.err(ASSUME_WHERE, n, check="bad-assume")
                    if not _inert(rest):
                        # The kernel IR holds the prologue and the partitions only: code after
                        # the partitions join would be neither verified nor lowered.
                        raise self.err(f"`{ast.unparse(rest).splitlines()[0]}` after "
                                       f"tle.gpu.warp_specialize: a kernel ends with its "
                                       f"warp_specialize (code after it would be neither verified "
                                       f"nor compiled); move it into a partition",
                                       rest, check="bad-warp-specialize")
                break
            self.kernel_stmt = (st.lineno, st.col_offset)  # (capacity_of_constexprs reads it)
            self.stmt(st)
        if ws is None:
            raise TleError(f"kernel '{fdef.name}' calls no tle.gpu.warp_specialize",
                           _loc(m.path, fdef), check="bad-warp-specialize")
        check_cache_hints(tuple(prologue))  # the kernel body's loads, as a partition's
        partitions = self.warp_specialize(ws, num_warps)
        check_register_budgets(partitions, options, self.loc(ws), at=self.loc(ws))
        self.frames.pop()
        kernel = K.Kernel(fdef.name, tuple(params), num_warps, tuple(sorted(options.items())),
                          tuple(sorted(self.consts.items())), tuple(self.pipes.values()),
                          tuple(self.free_buffers.values()), tuple(prologue), tuple(partitions),
                          _loc(m.path, fdef))
        check_shared_memory(kernel)  # it fits in a CTA's shared memory (shared_memory.py)
        check_memory_waits(kernel)
        if m.default_config is not None:
            kernel = K.with_attrs(kernel, default_config=m.default_config)
        if self.inlined:
            kernel = K.with_attrs(kernel, helpers=tuple(sorted(self.inlined)))
        return kernel

    def warp_specialize(self, ws: ast.Call, num_warps: int) -> list[K.KPartition]:
        """``warp_specialize(functions_and_args, worker_num_warps, worker_num_regs)``: the
        language's rules (validate_warp_specialize), then each partition's body."""
        given: dict[str, ast.expr] = dict(zip(WS_ARGS, ws.args))
        for k in ws.keywords:
            if k.arg not in WS_ARGS:
                raise self.err(f"warp_specialize has no argument '{k.arg}' ({', '.join(WS_ARGS)})",
                               k.value, check="bad-warp-specialize")
            if k.arg in given:
                # Python raises TypeError (multiple values); the keyword's value was read
                raise self.err(f"warp_specialize: '{k.arg}' is given positionally and by keyword",
                               k.value, check="bad-warp-specialize")
            given[k.arg] = k.value
        if len(ws.args) > 3:
            raise self.err("warp_specialize(functions_and_args, worker_num_warps, "
                           "worker_num_regs): too many arguments", ws, check="bad-warp-specialize")
        fa = given.get("functions_and_args")
        if not isinstance(fa, (ast.List, ast.Tuple)) or not fa.elts:
            raise self.err("warp_specialize: the first argument must be a list literal of "
                           "(function, (args...)) pairs, the default partition first",
                           fa if fa is not None else ws, check="bad-warp-specialize")
        entries = []
        seen: dict[str, int] = {}
        for elt in fa.elts:
            if not isinstance(elt, (ast.Tuple, ast.List)) or len(elt.elts) != 2:
                raise self.err(f"warp_specialize: each entry is a pair (function, (args...)), got "
                               f"`{ast.unparse(elt)}`", elt, check="bad-warp-specialize")
            fn_node, args_node = elt.elts
            try:
                _, fst = self.expr(fn_node) if isinstance(fn_node, ast.Name) else (None, None)
            except TleError as e:
                if e.check != "unknown-name":
                    raise
                fst = None
            if fst is None or fst.kind != "func":
                raise self.err(f"partition function `{ast.unparse(fn_node)}` is not a "
                               f"module-level function of this file (partition functions must be "
                               f"defined at module level in the kernel's file)", fn_node,
                               check="unknown-partition")
            if fn_node.id in seen:
                # Kept a refusal (adversarial round 58): a partition is named by its function
                # throughout the Pipe IR, the kernel text, the verdicts and the lowered Gluon, so
                # two uses would be one partition; a wrapper function makes a second one.
                fdef = fst.value[1] if isinstance(fst.value, tuple) else fst.value
                params = ", ".join(a.arg for a in fdef.args.args) \
                    if isinstance(fdef, ast.FunctionDef) else "..."
                name = f"{fn_node.id}_2"
                raise self.err(f"partition function '{fn_node.id}' is used twice in "
                               f"warp_specialize (first at line {seen[fn_node.id]}): each "
                               f"partition needs its own function, partition names are function "
                               f"names; for a second partition running the same code, define "
                               f"a function that calls it (`def {name}({params}): "
                               f"{fn_node.id}({params})`) and pass `({name}, (...))` here",
                               fn_node, check="duplicate-partition")
            seen[fn_node.id] = fn_node.lineno
            if not isinstance(args_node, (ast.Tuple, ast.List)):
                raise self.err(f"warp_specialize: the arguments of '{fn_node.id}' must be a tuple, "
                               f"e.g. ({fn_node.id}, (kv, NK)), got `{ast.unparse(args_node)}`",
                               args_node, check="bad-warp-specialize")
            entries.append((elt, fst.value, [self.expr(a) for a in args_node.elts]))

        def values_of(node: Optional[ast.expr]) -> Optional[tuple]:
            """The items of a list argument as the builder reads them (None: no list)."""
            if not isinstance(node, (ast.List, ast.Tuple)):
                return None
            return tuple(self.value(e) for e in node.elts)

        def int_list(node: Optional[ast.expr], values: Optional[tuple]) -> object:
            if node is None:
                return None
            if values is None:
                return Unevaluated(ast.unparse(node))
            out: list[object] = []
            for e, v in zip(node.elts, values):
                c = fold(v)
                out.append(c if isinstance(c, int) and not isinstance(c, bool) else
                           Unevaluated(ast.unparse(e)))
            return out

        warps_node, regs_node = given.get("worker_num_warps"), given.get("worker_num_regs")
        if warps_node is None:
            raise self.err("warp_specialize: worker_num_warps (a list, one warp count per worker "
                           "partition) is required", ws, check="bad-warp-specialize")
        arg_locs = {"warps": self.loc(warps_node)}
        if regs_node is not None:
            arg_locs["regs"] = self.loc(regs_node)
        values = values_of(regs_node)
        regs_given = int_list(regs_node, values)
        if values is not None:
            # A register budget written as an expression of constexprs (`224 + 8 * TMA`) is a
            # number once they are bound: a build that leaves them free leaves the budgets out
            # (the protocol does not read them) and records their expressions, which the
            # lowering evaluates with the launch's values (frontend/budgets.py). The names are
            # those of the expressions as the builder reads them: a `tl.constexpr`-annotated
            # local is its expression in place (`R: tl.constexpr = 224 + 8 * WIDE; [R]`)
            read = sorted({x.id for v in values for x in K.walk_expr(v)
                           if isinstance(x, K.Name)})
            for name in read:
                # a name the kernel body assigns (`WIDE = 0`, a constexpr parameter included)
                # is a tensor in Triton from there on (a plain assignment makes it one), no
                # number a budget can be: the expressions are evaluated with the parameters'
                # launch values, which lowered `WIDE = 0; [224 + 8 * WIDE]` as [232]
                if name in self.frame.stores:
                    line = self.frame.stores[name][0][0]
                    raise self.err(f"warp_specialize: the register budget reads `{name}`, "
                                   f"which the kernel assigns at line {line} (a plain "
                                   f"assignment makes it a tensor in Triton, no constexpr): "
                                   f"write the budget with constexpr parameters the kernel "
                                   f"does not assign", regs_node, check="bad-warp-specialize")
            if any(n in self.constexpr_params for n in read) \
                    and any(isinstance(r, Unevaluated) for r in regs_given):
                self.budget_exprs = (values, self.loc(regs_node))
                regs_given = None
        warps, regs = validate_warp_specialize(len(entries),
                                               int_list(warps_node, values_of(warps_node)),
                                               regs_given, self.loc(ws), arg_locs)
        parts = []
        # the lowered Gluon defines each partition as a module-level function of its name, beside
        # the module constants the kernel reads (global_of): a constant of another module spelt
        # like a partition (`consume = 2` in the module of a helper) is hidden by the function
        self.partition_names = frozenset(pdef.name for _, (_, pdef), _ in entries)
        named: dict[str, ast.AST] = {}
        for elt, (module, pdef), _ in entries:
            # functions of one name from two modules (or the kernel's own name): the lowered
            # Gluon module would define that function twice, the later def hiding the other
            if pdef.name == self.kernel_name or pdef.name in named:
                other = (f"kernel '{self.kernel_name}'" if pdef.name == self.kernel_name else
                         f"the partition at line {named[pdef.name].lineno}")
                raise self.err(f"partition function '{pdef.name}' ({shown(module.path)}) has the "
                               f"name of {other}: partitions and the kernel are functions of "
                               f"one lowered module, named as defined; rename one",
                               elt, check="duplicate-partition")
            named[pdef.name] = elt
        for (path, name), kid in self.const_ids.items():
            if kid in self.partition_names:
                raise self.err(f"module constant '{name}' of {shown(path)} is read by the kernel "
                               f"body and spelt like partition function '{kid}': the lowered "
                               f"kernel defines both at module level, where the function hides "
                               f"the constant; rename one", ws, check="duplicate-name")
        assigns = body_assigns(self.out)  # the kernel body's assignments (tensor_args.py)
        top = {st.target for st in self.out if isinstance(st, K.Assign)} - set(
            self.constexpr_params) - self.param_names
        for i, (elt, (module, pdef), argv) in enumerate(entries):
            self.plain_def(module, pdef, elt, "partition")
            names = [p.arg for p in pdef.args.posonlyargs + pdef.args.args]
            left_out = self.partition_defaults(module, pdef, names, len(argv), elt)
            argv = argv + [e for _, e in left_out]
            if len(names) != len(argv):
                why = (" (one left out of the tuple needs a `tl.constexpr` annotation and a "
                       "number default)") if len(argv) < len(names) else ""
                raise self.err(f"partition '{pdef.name}' takes {len(names)} positional "
                               f"argument(s), {len(argv)} given{why}", elt, check="bad-call")
            frame = Frame(module, "", {}, pdef.name, stores=_stores(pdef.body))
            arg_nodes = elt.elts[1].elts if isinstance(elt, (ast.Tuple, ast.List)) \
                and len(elt.elts) == 2 and isinstance(elt.elts[1], (ast.Tuple, ast.List)) else ()
            # a constexpr left out: its default, a number (partition_defaults)
            arg_nodes = list(arg_nodes) + [d for d, _ in left_out]
            for p, a in zip(names, arg_nodes):
                if self.constexpr_argument(a):
                    # a constexpr in the partition, as in the kernel body (a constexpr
                    # parameter, a name it binds as a tl.constexpr), or a number written in
                    # the call, signed or computed from those (`-1.5`, `C * 2`: the lowered
                    # partition binds it as a gl.constexpr too)
                    frame.constexprs.add(p)
                if isinstance(a, ast.Name) and self._is_local_tensor(a):
                    frame.body_tensors[p] = a.id
                elif isinstance(a, ast.Call) and self._is_local_tensor(a):
                    # a helper's result written in the call (`hn()`, `hm(N)`): the tensor
                    # visit_Return makes of a returned number, or of each number item of a
                    # returned tuple, as a name bound to it is (it was the literal's
                    # constexpr: `t + S` of an int8 tile added in i8; lowering adversarial
                    # round 11)
                    frame.body_tensors[p] = ast.unparse(a)
                elif isinstance(a, (ast.Tuple, ast.List)):
                    items = self.body_tensor_items(a)
                    if items:
                        frame.body_items[p] = items
            bindings = []
            for p, (e, st) in zip(names, argv):
                read = {x.id for x in K.walk_expr(e) if isinstance(x, K.Name)}
                if read and read <= self.constexpr_params and all(
                        isinstance(x, (K.Name, K.Const, K.Global, K.BinOp, K.UnaryOp, K.Compare,
                                       K.BoolOp)) for x in K.walk_expr(e)):
                    # (a condition on `p` is one on these constexprs: kernel_constexprs_of)
                    frame.constexpr_sources[p] = frozenset(read)
                found = tensor_item(e, assigns, p)
                if found is not None:
                    where, te, r = found
                    raise TleError(
                        f"partition '{pdef.name}': argument {where} (`{source_text(te)}`) is a "
                        f"rank-{r} tensor of the kernel body; partitions take pipes, scalars and "
                        f"constants (and tuples of them): compute the tensor in the partition",
                        te.loc if te.loc.line else self.loc(elt), check="bad-warp-specialize")
                what = _unlowerable_argument(e, st)
                if what is not None:
                    hint = " (call a helper by its name in the partition)" \
                        if "function" in what else ""
                    raise self.err(f"partition '{pdef.name}': argument '{p}' is {what}; "
                                   f"partitions take pipes, scalars and constants (and tuples of "
                                   f"them): the lowering cannot pass it{hint}", elt,
                                   check="bad-warp-specialize")
                bindings.append((p, self.without_field_buffers(e, st)))
                self.note_runtime(frame.kir(p), e)
                if st is None and isinstance(e, (K.Const, K.Global, K.DType)):
                    st = Static("const", e)
                elif st is None and isinstance(fold_body(e, assigns, top), (bool, int, float)):
                    # an expression of constants (a bound constexpr times 1, say, or a name the
                    # kernel body binds once to one: NT = TOPK // 64) is a constant in the
                    # partition, as the protocol view evaluates it: its ifs fold alike
                    st = Static("const", K.Const(fold_body(e, assigns, top), e.loc))
                elif st is None and _number_tuple(fold_body(e, assigns, top)):
                    # so is a tuple of them (`T = (65536, 1)` passed as `T`): its items fold in
                    # the partition, where the check of folded arithmetic reads them
                    st = Static("const", _const_tuple(fold_body(e, assigns, top), e.loc))
                elif isinstance(e, K.TupleExpr) and (st is None or st.kind == "tuple"):
                    # and so is each such item of a tuple with run-time items (`(B, N)`): read
                    # as `b[0]`, it was the body's name `B`, which the partition's Gluon does
                    # not define
                    st = _folded_items(e, st, assigns, top)
                if p in frame.body_tensors and st is not None and st.kind == "tuple":
                    # a tuple the kernel body binds by a plain assignment (`T = hm(N)`, the
                    # tuple `(N, 100)`), or a helper's returned tuple: its number items are
                    # tensors, read where the partition reads them (`S[1]` was the literal)
                    st = _tensor_statics(st)
                frame.env[p] = st
                shape = self.tuple_shape(e, st)
                if shape is not None:  # read through the parameter's name
                    # (with its compile-time items too: the shape alone keeps a nested tuple
                    # of runtime values, `(p, (x_ptr, N))`, that the items' values do not)
                    self.tuple_shapes[frame.kir(p)] = shape
            self.frames.append(frame)
            self.in_partition = True
            self.partition_locals = frozenset(names) | frozenset(frame.stores)
            try:
                body = self.block([s for s in pdef.body])
            finally:
                self.frames.pop()
                self.in_partition = False
                self.partition_locals = frozenset()
            default = i == 0
            parts.append(K.KPartition(pdef.name, tuple(bindings), body,
                                      num_warps if default else warps[i - 1],
                                      None if default else regs[i - 1],
                                      default, _loc(module.path, pdef)))
            check_wgmma_warps(parts[-1])
            check_cache_hints(parts[-1].body)
        return parts

    def partition_defaults(self, module: Module, pdef: ast.FunctionDef, names: list,
                           given: int, elt: ast.AST) -> list:
        """The (default node, (value, None)) of each parameter of partition ``pdef`` after the
        ``given`` ones of its argument tuple, where each is annotated ``tl.constexpr`` and has a
        default Python computes to a number (`BLOCK: tl.constexpr = 64`): Gluon's
        warp_specialize calls a partition as a jit function, binding a left-out parameter to
        its default as a helper call does. Any other is left to the arity check (none here)."""
        args = pdef.args.posonlyargs + pdef.args.args
        defaults = dict(zip(names[len(names) - len(pdef.args.defaults):], pdef.args.defaults))
        out = []
        for a in args[given:]:
            if not constexpr_annotated(a) or a.arg not in defaults:
                return []
            e, st = self.default_value(module, pdef, a.arg, defaults[a.arg])
            if st is not None or not isinstance(e, K.Const) or \
                    not isinstance(e.value, (bool, int, float)):
                return []
            out.append((ast.Constant(e.value), (e, None)))
        return out


WS_ARGS = ("functions_and_args", "worker_num_warps", "worker_num_regs")


def check_generated_names(kern: K.Kernel, m: Module) -> None:
    """Refuse a name of the kernel's source that the generated Gluon module binds for itself
    (check ``reserved-name``): the lowering spells the kernel's names as written
    (ir/kernel_names.py source_names), so a partition local ``gl = 3`` or ``mbarrier = 3``, or a
    partition function named ``gl``, rebinds the module's own ``gl`` / ``mbarrier`` and the
    lowered kernel does not compile (or calls the wrong thing); so does a name of the
    ``_tle_...`` helpers it emits. (Temporaries and layout names step over the kernel's names,
    lowering/translate.py.) The builtins ``range`` / ``int`` / ``float`` are refused where they
    are rebound."""
    reserved = MODULE_NAMES - {"range", "int", "float"}
    hits = sorted(n for n in source_names(kern) if n in reserved or n.startswith("_tle_"))
    if not hits:
        return
    name = hits[0]
    parts = {p.name for p in kern.partitions}
    defs = [d for d in m.tree.body if isinstance(d, ast.FunctionDef)
            and (d.name == kern.name or d.name in parts)]
    where: Optional[ast.AST] = None
    for d in defs:
        for n in ast.walk(d):
            if (isinstance(n, ast.Name) and n.id == name) or (
                    isinstance(n, ast.arg) and n.arg == name) or (
                    isinstance(n, ast.FunctionDef) and n.name == name):
                where = n
                break
        if where is not None:
            break
    loc = _loc(m.path, where) if where is not None else kern.loc
    raise TleError(f"`{name}` is a name the generated Gluon module binds for itself (its imports "
                   f"gluon, gl, mbarrier, tma, async_copy, fence_async_shared, warpgroup_mma..., "
                   f"and its _tle_ helpers): the lowering spells the kernel's names as written, so "
                   f"this one would rebind it and the lowered kernel would not compile; rename "
                   f"it", loc, check="reserved-name")


def _unlowerable_argument(e: K.Expr, st: Optional[Static], top: bool = True) -> Optional[str]:
    """What a partition argument is when the lowering cannot pass it (lowering/walks.py
    ``bindings``: pipes, handles, scalars and constants, and tuples of them; a function, module
    or None only as a tuple's item, a dtype nowhere), else None. Verified as an unused
    parameter, such a kernel did not compile."""
    if isinstance(e, K.DType):
        return f"the dtype `{e.name}`" if top else "a tuple holding a dtype"
    if st is not None and st.kind == "tuple":
        items = e.items if isinstance(e, K.TupleExpr) else (None,) * len(st.value)
        for item, ist in zip(items, st.value):
            what = _unlowerable_argument(item, ist, False) if item is not None else None
            if what is not None:
                return what if not top else "a tuple holding a dtype"
        return None
    if isinstance(e, K.TupleExpr):
        for item in e.items:
            what = _unlowerable_argument(item, None, False)
            if what is not None:
                return "a tuple holding a dtype"
        return None
    if not top:
        return None
    if st is not None and st.kind in ("func", "mod", "usermod"):
        return "a function or module" if st.kind != "func" else "a helper function"
    if isinstance(e, K.Const) and e.value is None and st is None:
        return "None"
    return None

#: Where tle.assume may stand (the error everywhere else).
ASSUME_WHERE = ("tle.assume must be a statement at the top level of the kernel body, before "
                "tle.gpu.warp_specialize (it states the domain of the kernel's params)")


def _inert(st: ast.stmt) -> bool:
    """A statement that does nothing when it runs: ``pass``, a bare constant (a docstring),
    ``return`` without a value."""
    return (isinstance(st, ast.Pass) or isinstance(st, ast.Expr)
            and isinstance(st.value, ast.Constant)
            or isinstance(st, ast.Return) and st.value is None)


def _check_kernel_signature(path: str, fdef: ast.FunctionDef) -> None:
    """A kernel's arguments are positional, one per launch argument: ``*args``, ``**kwargs`` and
    keyword-only arguments are refused (the lowered kernel would drop them or take them by
    position, so what runs would not be the function that was verified)."""
    a = fdef.args
    star = a.vararg or a.kwarg or (a.kwonlyargs[0] if a.kwonlyargs else None)
    if star is not None:
        spelled = (f"*{a.vararg.arg}" if star is a.vararg else
                   f"**{a.kwarg.arg}" if star is a.kwarg else f"keyword-only `{star.arg}`")
        raise TleError(f"kernel '{fdef.name}': {spelled}: a @tle.jit kernel takes plain positional "
                       f"arguments (one per launch argument); spell each one out before any `*`",
                       _loc(path, star), check="unsupported-signature")


#: _names_of's results by the first statement of the list (held weakly) and the list's nodes
_NAMES: "weakref.WeakKeyDictionary[ast.AST, dict]" = weakref.WeakKeyDictionary()


def _names_of(stmts: list[ast.stmt]) -> tuple[frozenset, frozenset]:
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
        names = [n for n in _walk_no_defs(stmts) if isinstance(n, ast.Name)]
        per[key] = (frozenset(n.id for n in names if isinstance(n.ctx, ast.Store)),
                    frozenset(n.id for n in names))
    return per[key]


def _walk_no_defs(nodes: list[ast.stmt]):
    """Every node under ``nodes``, not entering nested functions, lambdas or classes."""
    stack = list(reversed(nodes))
    while stack:
        n = stack.pop()
        yield n
        children = [c for c in ast.iter_child_nodes(n)
                    if not isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                                          ast.ClassDef))]
        stack.extend(reversed(children))


def _decl_view(decl: K.PipeDecl):
    """The language's PipeDecl view of a KIR pipe (for validate_reader's rules)."""
    from ..language.gpu import SharedBuffer
    from ..language.pipe import PipeDecl

    fields = tuple((b.name, SharedBuffer(tuple(b.shape), b.dtype)) for b in decl.fields)
    return PipeDecl(decl.name, decl.capacity, "cta", decl.readers, decl.one_shot, fields, decl.loc,
                    decl.named)


def _number_tuple(v: object) -> bool:
    """Whether ``v`` is a (nested) tuple of Python numbers, non-empty."""
    return isinstance(v, tuple) and bool(v) and all(
        isinstance(x, (bool, int, float)) or _number_tuple(x) for x in v)


def _folded_items(e: K.TupleExpr, st: Optional[Static], assigns: dict,
                  top: set) -> Optional[Static]:
    """``st`` of the partition argument ``e`` (a tuple) with each item that :func:`fold_body`
    folds to a number (or a tuple of them) known as that constant; ``st`` unchanged when none
    does."""
    sts = st.value if st is not None and len(st.value) == len(e.items) \
        else (None,) * len(e.items)
    items = []
    for x, sx in zip(e.items, sts):
        v = fold_body(x, assigns, top) if sx is None else None
        if isinstance(v, (bool, int, float)):
            items.append(Static("const", K.Const(v, x.loc)))
        elif _number_tuple(v):
            items.append(Static("const", _const_tuple(v, x.loc)))
        elif isinstance(x, K.TupleExpr) and (sx is None or sx.kind == "tuple"):
            items.append(_folded_items(x, sx, assigns, top))
        else:
            items.append(sx)
    if all(a is b for a, b in zip(items, sts)):
        return st
    return Static("tuple", tuple(items))


def _const_tuple(v: tuple, loc: Loc) -> K.TupleExpr:
    """The kernel IR of the :func:`_number_tuple` ``v``."""
    return K.TupleExpr(tuple(_const_tuple(x, loc) if isinstance(x, tuple) else K.Const(x, loc)
                             for x in v), loc)


def _tensor_statics(st: Optional[Static]) -> Optional[Static]:
    """``st`` (a tuple's) with each number item known as a constant (at any depth) known as the
    tensor Triton makes of it, ``to_tensor(item)``, as :func:`_tensor_items` reads the tuple."""
    if st is None:
        return None
    if st.kind == "tuple":
        items = [_tensor_statics(x) for x in st.value]
        return st if all(a is b for a, b in zip(items, st.value)) else Static(
            "tuple", type(st.value)(items) if isinstance(st.value, (tuple, list)) else items)
    if st.kind == "const" and isinstance(st.value, K.Const) \
            and isinstance(st.value.value, (int, float)) and not isinstance(st.value.value, bool):
        return Static("const", K.Op("to_tensor", (st.value,), (), st.value.loc))
    return st


def _tensor_items(e: K.Expr, paths: Optional[tuple] = None, at: tuple = ()) -> K.Expr:
    """The tuple ``e`` a plain assignment binds with each number item (at any depth) read as
    the tensor Triton's visit_Assign makes of it, ``to_tensor(item)`` (Builder.tensor_number);
    other items as they are. ``paths``: only the items at (or inside) these index paths (each
    counted from either end, local_tensors.item_paths), None for all."""
    if isinstance(e, K.TupleExpr):
        n = len(e.items)
        items = tuple(_tensor_items(x, paths, at + (i,)) if paths is None
                      or covers(paths, at + (i,)) or covers(paths, at + (i - n,))
                      or any(p[:len(at) + 1] in (at + (i,), at + (i - n,)) for p in paths)
                      else x for i, x in enumerate(e.items))
        return e if all(a is b for a, b in zip(items, e.items)) else dataclasses.replace(
            e, items=items)
    if isinstance(e, K.Const) and isinstance(e.value, (int, float)) \
            and not isinstance(e.value, bool) and (paths is None or covers(paths, at)):
        return K.Op("to_tensor", (e,), (), e.loc)
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


# ----------------------------------------------------------------------------------------------
# entry points


@dataclass
class Built:
    """What building a file gives: every module read (``cache``, the root one ``module``), and the
    KIR of each kernel with the ``def`` it was built from."""

    cache: "ModuleCache"
    module: Module
    kernels: list[tuple[ast.FunctionDef, K.Kernel]]
    #: by kernel name, the register budgets written as expressions of constexprs this build
    #: leaves unbound (its partitions have none; a build binding them has numbers): KIR
    #: expressions and the list's location (Builder's ``budget_exprs``), for
    #: frontend/budgets.py to evaluate with the constexprs' values
    budget_exprs: dict = field(default_factory=dict)

    def sources(self) -> dict[str, str]:
        """The source of every module read, by the file name its locations carry."""
        return {m.path: m.text for m in self.cache.modules.values()}

    def trees(self) -> dict[str, ast.Module]:
        """The parsed source of every module read, by the file name its locations carry."""
        return {m.path: m.tree for m in self.cache.modules.values()}


def build(path: Union[str, os.PathLike], name: Optional[str] = None,
          bind: Optional[dict] = None, text: Optional[str] = None) -> Built:
    """The KIR of every ``@tle.jit`` kernel of a file that calls warp_specialize (or of the one
    named ``name``); ``bind``: integer constexpr values to read the kernels specialised to;
    ``text``: the file's source, when it is not to be read from disk (locations name ``path``)."""
    cache = ModuleCache()
    m = cache.get(os.fspath(path), text=text, as_given=True)
    builder = Builder(cache, m)
    for local in m.imports:  # a name the file imports must exist (Python raises ImportError)
        builder.imported(m, local)
    out = []
    exprs: dict = {}
    nested = nested_kernel(m.scope, m.tree)
    kernel_defs = kernel_def_lines(m.scope, m.tree)
    if nested is not None and (name is None or nested[0].name == name):
        fdef, kw = nested
        if kw in ("class", "def", "async def"):  # Python makes it a kernel the file's reading
            # would leave out (a class attribute, a factory's result)
            raise TleError(f"kernel '{fdef.name}' is defined inside a module-level `{kw}`: "
                           f"tle-dump reads kernels defined at the module's top level, so this "
                           f"one would be neither verified nor launched (move the def there)",
                           _loc(m.path, fdef), check="bad-jit")
        raise TleError(f"kernel '{fdef.name}' is defined inside a module-level `{kw}`: whether "
                       f"Python defines it (and which def its name holds) depends on what runs; "
                       f"tle-dump reads kernels defined at the module's top level (move the def "
                       f"there)", _loc(m.path, fdef), check="bad-jit")
    foreign = foreign_decorated_kernel(m.scope, m.tree)
    if foreign is not None and (name is None or foreign[1].name == name):
        dec, fdef = foreign
        raise TleError(f"'{fdef.name}' calls tle.gpu.warp_specialize under the decorator "
                       f"`@{ast.unparse(dec)}`, which tle-dump does not read as tle.jit: Python "
                       f"binds '{fdef.name}' to what it returns, which may be a kernel (a "
                       f"functools.partial of tle.jit, a function calling tle.jit) that would be "
                       f"neither verified nor read (write @tle.jit or @tle.jit(...) above the "
                       f"def)", _loc(m.path, dec), check="bad-jit")
    called = jit_call_kernel(m.scope, m.tree)
    if called is not None and (name is None or called[1].name == name):
        call, fdef = called
        raise TleError(f"`{ast.unparse(call)}` makes '{fdef.name}' a kernel by a call: tle-dump "
                       f"reads kernels decorated with @tle.jit where they are defined, so this "
                       f"one would be neither verified nor launched (write @tle.jit above "
                       f"`def {fdef.name}`)", _loc(m.path, call), check="bad-jit")
    loose = jit_reference(m.scope, m.tree)
    if loose is not None and (name is None or loose[1].name == name):
        use, fdef = loose
        raise TleError(f"'{fdef.name}' calls tle.gpu.warp_specialize without being a @tle.jit "
                       f"kernel, and `{ast.unparse(use)}` may make a kernel of it that tle-dump "
                       f"cannot name (tle.jit applied to what the reading cannot follow, or the "
                       f"function handed on): such a kernel would be neither verified nor read "
                       f"(write @tle.jit above `def {fdef.name}`)", _loc(m.path, use),
                       check="bad-jit")
    dynamic = string_code_call(m.scope, m.tree) if kernel_defs or nested is not None else None
    if dynamic is not None:
        raise TleError(f"`{ast.unparse(dynamic.func)}(...)` runs code from a string when Python "
                       f"imports this kernel file: a @tle.jit kernel that code defines would be "
                       f"neither verified nor launched (tle-dump reads the file's statements, "
                       f"and no launch can read the string's source); write the code in the "
                       f"file", _loc(m.path, dynamic), check="bad-jit")
    for st in m.tree.body:
        # `@tle.jit async def`: Python makes it a kernel (tle.jit takes any function), which the
        # reading of `def`s left out of the file's verdict and no launch could read
        if isinstance(st, ast.AsyncFunctionDef) and (name is None or st.name == name) \
                and jit_decorator(m.scope, st) is not None:
            raise TleError(f"kernel '{st.name}' is an `async def`: Python makes it a kernel, but "
                           f"Triton compiles no coroutine and tle-dump reads kernels written with "
                           f"`def`, so this one would be neither verified nor launched (write "
                           f"`def {st.name}`)", _loc(m.path, st), check="bad-jit")
    for st in m.tree.body:
        if isinstance(st, ast.FunctionDef) and (name is None or st.name == name):
            dec = jit_decorator(m.scope, st)
            if dec is None:
                continue
            lines = kernel_defs.get(st.name, frozenset())
            if not any(isinstance(n, ast.Call) and m.scope.is_tle(n.func, "gpu.warp_specialize")
                       for n in ast.walk(st)):
                # a kernel whose warp_specialize is in a helper it calls: refused at that call
                # (the partitions are read from the kernel body only), not left out of the file
                helper = helper_warp_specialize(m.scope, st)
                if helper is not None and not superseded(st, m.bound_lines, lines):
                    call, chain = helper
                    via = " -> ".join(f"'{h}'" for h in chain)
                    raise TleError(f"kernel '{st.name}' (line {st.lineno}) calls "
                                   f"tle.gpu.warp_specialize in its helper {via}: a kernel calls "
                                   f"warp_specialize at the top level of its own body, where the "
                                   f"partitions are read (a helper's call is neither verified nor "
                                   f"launched; a helper may declare the pipes); move the call "
                                   f"into '{st.name}'",
                                   _loc(m.path, call), check="bad-warp-specialize")
                # a kernel that declares a pipe but runs no partitions: its protocol has no
                # partitions to read, and leaving it out would give the file another kernel's
                # verdict (exit 0): refused at the pipe
                pipe = next((n for n in ast.walk(st) if isinstance(n, ast.Call)
                             and m.scope.is_tle(n.func, "pipe")), None)
                if pipe is not None and not superseded(st, m.bound_lines, lines):
                    raise TleError(f"kernel '{st.name}' (line {st.lineno}) declares a pipe but "
                                   f"calls no tle.gpu.warp_specialize: a pipe connects the "
                                   f"partitions of a warp_specialize call in the kernel's body, "
                                   f"so this kernel has no protocol to verify and cannot run "
                                   f"(add the call, or drop the pipe)",
                                   _loc(m.path, pipe), check="bad-warp-specialize")
                continue
            if superseded(st, m.bound_lines, lines):
                continue
            problem = kernel_def_problem(m.scope, st, dec, m.bound_lines, lines)
            if problem is not None:
                raise TleError(problem[2], Loc(m.path, problem[0], problem[1]), check="bad-jit")
            b = Builder(cache, m, bind)
            kern = b.kernel(st, dec)
            check_generated_names(kern, m)
            out.append((st, kern))
            if b.budget_exprs is not None:
                exprs[kern.name] = b.budget_exprs
    return Built(cache, m, out, exprs)


def build_file(path: Union[str, os.PathLike], name: Optional[str] = None,
               bind: Optional[dict] = None, text: Optional[str] = None) -> list[K.Kernel]:
    """The KIR of the kernels of a file (see :func:`build`)."""
    return [k for _, k in build(path, name, bind, text).kernels]
