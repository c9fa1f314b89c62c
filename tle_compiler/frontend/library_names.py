"""Whether a name a kernel's module takes from a library (Triton, tle_compiler) exists there.

The frontend resolves library names by their dotted path (scope.py) and never imports the
module it reads, so a path that Python cannot resolve read like any other: `import
tle_compiler.gpu as G` (no such module: ``tle.gpu`` is an attribute of the package), `from
triton.language import arangee`, a call of `tl.nothing_here(...)` or `tle.gpu.local_pointer(...)`.
Python raises at the import (ModuleNotFoundError, ImportError) or Triton when it compiles the
function (AttributeError), so such a kernel is none that runs, yet it was verified. The checks
here find a library module by its files and the names its ``__init__.py`` binds, without
importing Triton (tle-dump does not import it); tle_compiler, which the frontend runs in, is
looked up by its live attributes.

Only what surely does not exist is reported: a name bound in module-level control flow, a
submodule file, a star import or a module ``__getattr__`` counts as found.
"""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import os
from typing import Optional

from .source_text import read_python

#: The libraries whose names are checked, and the canonical prefixes (scope.canon) that stand for
#: their language modules.
CHECKED = ("triton", "tle_compiler")
_CANON_MODULES = {"tl": "triton.language", "gl": "triton.experimental.gluon.language"}


@functools.lru_cache(maxsize=None)
def _package_folder(top: str) -> Optional[str]:
    """The folder of top-level package ``top``, found without importing it."""
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return list(spec.submodule_search_locations)[0]


@functools.lru_cache(maxsize=None)
def _entry(folder: str, name: str) -> Optional[str]:
    """What ``name`` is in package folder ``folder``: its ``__init__.py`` for a subpackage, its
    ``.py`` file for a module, "" for an extension module or a namespace folder, None when there
    is none. Kept per process, as :func:`module_file` is (a kernel spells a library's names
    hundreds of times, each a few file-system lookups)."""
    sub = os.path.join(folder, name)
    if os.path.isdir(sub):
        init = os.path.join(sub, "__init__.py")
        return init if os.path.isfile(init) else ""
    if os.path.isfile(sub + ".py"):
        return sub + ".py"
    try:
        entries = os.listdir(folder)
    except OSError:
        return None
    if any(e.startswith(name + ".") and e.endswith((".so", ".pyd")) for e in entries):
        return ""
    return None


@functools.lru_cache(maxsize=None)
def module_file(dotted: str) -> Optional[str]:
    """The file of library module ``dotted`` (``__init__.py`` for a package, "" when it exists
    but has no Python source to read), None when it does not exist. Only for :data:`CHECKED`."""
    top, *rest = dotted.split(".")
    folder = _package_folder(top)
    if folder is None:
        return None
    f = os.path.join(folder, "__init__.py")
    for name in rest:
        if not f.endswith("__init__.py"):
            return None  # `a.b` where `a` is a plain module
        f = _entry(os.path.dirname(f), name)
        if f is None or f == "":
            return f
    return f


@functools.lru_cache(maxsize=None)
def _bound(file: str) -> Optional[frozenset]:
    """The names module ``file`` binds at module level (anywhere in its statements outside
    functions), None when it may bind others (a star import, a module ``__getattr__``)."""
    try:
        tree = ast.parse(read_python(file))
    except (OSError, SyntaxError, ValueError):
        return None
    out: set[str] = set()
    todo: list[ast.AST] = list(tree.body)
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            for a in n.names:
                if a.name == "*":
                    return None
                out.add(a.asname or a.name.split(".")[0])
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if n.name == "__getattr__":
                return None
            out.add(n.name)
            continue
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            out.add(n.id)
        todo.extend(ast.iter_child_nodes(n))
    return frozenset(out)


def has_name(module: str, name: str) -> bool:
    """Whether library module ``module`` has attribute ``name`` (bound by its source, or a
    submodule of it); True when that cannot be told."""
    f = module_file(module)
    if not f:
        return True  # no source to read (or no module: its import is what fails)
    if f.endswith("__init__.py") and _entry(os.path.dirname(f), name) is not None:
        return True
    names = _bound(f)
    return names is None or name in names


def missing_import(module: str, names: tuple[str, ...] = ()) -> Optional[str]:
    """Why ``import module`` (or ``from module import names``) fails, for a module of the checked
    libraries; None when it does not, or the module is none of theirs."""
    if module.split(".")[0] not in CHECKED or _package_folder(module.split(".")[0]) is None:
        return None  # not a checked library, or one not installed here (nothing to tell)
    if module_file(module) is None:
        parent, _, last = module.rpartition(".")
        if parent and module_file(parent) is None:
            return missing_import(parent)
        return (f"no module named '{module}'" + (f": package '{parent}' has no module '{last}'"
                                                  if parent else "")
                + " (Python raises ModuleNotFoundError)")
    for n in names:
        if not has_name(module, n):
            return (f"cannot import name '{n}' from '{module}': it defines no '{n}' (Python "
                    f"raises ImportError)")
    return None


def missing_attribute(path: str) -> Optional[str]:
    """Why the canonical library path ``path`` (``tl.x``, ``gl.x``, ``triton.x``,
    ``tle_compiler.x.y``) names nothing, None when it exists or cannot be told. Triton's
    modules are followed through their submodules' files; tle_compiler's attributes on the live
    package, as Python follows them."""
    head, _, rest = path.partition(".")
    if not rest:
        return None
    if (head in _CANON_MODULES or head == "triton") and _package_folder("triton") is not None:
        # follow the submodules (`tl.math.exp2`, `tl.extra.cuda.libdevice.x`) as far as they are
        # files; an attribute of anything else (a class, a function) is not checked
        module, shown = _CANON_MODULES.get(head, "triton"), head
        for name in rest.split("."):
            if not has_name(module, name):
                where = f"`{shown}` ({module})" if shown != module else f"`{module}`"
                return f"{where} has no attribute '{name}' (Python raises AttributeError)"
            f = module_file(module)
            if not f or not f.endswith("__init__.py") or \
                    _entry(os.path.dirname(f), name) is None:
                return None
            module, shown = f"{module}.{name}", f"{shown}.{name}"
        return None
    if head != "tle_compiler":
        return None
    obj, where = importlib.import_module("tle_compiler"), "tle_compiler"
    for name in rest.split("."):
        if not hasattr(obj, name):
            f = getattr(obj, "__file__", None)
            if f and f.endswith("__init__.py") and _entry(os.path.dirname(f), name) is not None:
                return None  # a submodule: an attribute once something imports it
            return f"`{where}` has no attribute '{name}' (Python raises AttributeError)"
        obj, where = getattr(obj, name), f"{where}.{name}"
    return None


def import_as_attribute(module: str, asname: str,
                        tree: ast.Module) -> Optional[tuple[ast.AST, str]]:
    """``import module as asname`` binds what Python's getattr chain from the top package gives
    (Python 3.7+), which for ``tle_compiler.jit`` and ``tle_compiler.language.assume`` is the
    function the package imports over the submodule's name, not the module. The first
    ``asname.attr`` in the file that this object lacks (`@J.jit` after `import tle_compiler.jit
    as J`: AttributeError when the module is imported) and why; None when there is none or the
    object is a module (whose names the other checks follow)."""
    if module.split(".")[0] != "tle_compiler":
        return None
    obj = importlib.import_module("tle_compiler")
    for name in module.split(".")[1:]:
        obj = getattr(obj, name, None)
        if obj is None:
            return None
    if isinstance(obj, type(importlib)):
        return None
    what = getattr(obj, "__name__", type(obj).__name__)
    for n in ast.walk(tree):
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) \
                and n.value.id == asname and not hasattr(obj, n.attr):
            return n, (f"`import {module} as {asname}` binds the package's attribute "
                       f"`{module}`, the {type(obj).__name__} {what} (not the module), which "
                       f"has no attribute '{n.attr}' (Python raises AttributeError)")
    return None

