"""Where the user modules a kernel imports live: Python's import resolution, done on files without
running anything (the frontend reads kernels' source, the CPU emulator runs it against an
emulated language; both resolve imports here).

A *user module* is a module whose source the frontend reads (to inline its helpers and fold its
constants) and the emulator runs emulated: any module that is not a library. Libraries are the
standard library and the packages of :data:`LIBRARIES` (triton, whose ``triton.language`` is what
kernels are written in, tle_compiler itself, torch, numpy).

Resolution follows Python's rules: ``from .m import x`` is relative to the importing file's
package (one folder up per extra dot); an absolute ``a.b`` is found on ``sys.path`` or, for a
package installed in editable mode, by the import system's finders (located only, never imported),
then ``b`` inside package ``a``'s folder.
"""

from __future__ import annotations

import os
import sys
from typing import Optional

#: Top-level packages that are libraries (not read as user modules), besides the standard library.
LIBRARIES = frozenset({"triton", "tle_compiler", "torch", "numpy"})


def is_library(module: str) -> bool:
    """Whether absolute module ``module`` is a library rather than a user module."""
    top = module.split(".")[0]
    return top in LIBRARIES or top in sys.stdlib_module_names


def shown(path: str) -> str:
    """How an imported module's file is named in locations and messages: relative to the working
    directory when it lies below it (as a kernel file given on the command line usually is), else
    absolute; so a diagnostic, a printed IR and a recorded reading do not depend on where the
    checkout is."""
    full = os.path.abspath(path)
    rel = os.path.relpath(full)
    return full if rel == os.pardir or rel.startswith(os.pardir + os.sep) else rel


def in_folder(folder: str, rel: str) -> Optional[str]:
    """The file of module ``rel`` (dotted, relative) in ``folder``: ``rel.py`` or
    ``rel/__init__.py``, else None."""
    base = os.path.join(folder, *rel.split("."))
    for cand in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.isfile(cand):
            return os.path.abspath(cand)
    return None


def root_folder(path: str) -> str:
    """The folder above the outermost package holding file ``path`` (its own folder outside
    packages): what is on ``sys.path`` when Python imports that file as the module
    :func:`module_name_of` names, or runs it as a script."""
    folder = os.path.dirname(os.path.abspath(path))
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        folder = os.path.dirname(folder)
    return folder


def _top_level(name: str, importer: Optional[str] = None) -> Optional[str]:
    """The file of top-level module ``name``: in the root folder of the importing file (a
    sibling module of a kernel file, whatever the working directory), then on ``sys.path``,
    else located by the import system's finders (an editable install's finder, ...) without
    importing it."""
    if importer is not None:
        f = in_folder(root_folder(importer), name)
        if f is not None:
            return f
    for p in sys.path:
        f = in_folder(p or os.getcwd(), name)
        if f is not None:
            return f
    for finder in sys.meta_path:
        find_spec = getattr(finder, "find_spec", None)
        if find_spec is None:
            continue
        try:
            spec = find_spec(name, None)
        except Exception:  # noqa: BLE001 (a finder that cannot answer is no answer)
            continue
        if spec is not None and isinstance(spec.origin, str) and spec.origin.endswith(".py") \
                and os.path.isfile(spec.origin):
            return os.path.abspath(spec.origin)
    return None


def find_absolute(module: str, importer: Optional[str] = None) -> Optional[str]:
    """The file of user module ``module`` (absolute, dotted) imported by file ``importer``,
    None when it is a library or cannot be found."""
    if not module or is_library(module):
        return None
    top, _, rest = module.partition(".")
    f = _top_level(top, importer)
    if f is None or not rest:
        return f
    if os.path.basename(f) != "__init__.py":
        return None  # `a.b` where `a` is a plain module
    return in_folder(os.path.dirname(f), rest)


def relative_folder(level: int, importer: str) -> str:
    """The folder a relative import of ``level`` dots in file ``importer`` is resolved in."""
    base = os.path.dirname(os.path.abspath(importer))
    for _ in range(level - 1):
        base = os.path.dirname(base)
    return base


def find_module(module: str, level: int, importer: str) -> Optional[str]:
    """The file of the module a statement ``from <level dots><module> import ...`` (or
    ``import <module>`` for level 0) in file ``importer`` names; for ``from . import x`` (empty
    ``module``) the package's ``__init__.py``; None when it is not found (or is a library)."""
    if level:
        folder = relative_folder(level, importer)
        if not module:
            init = os.path.join(folder, "__init__.py")
            return os.path.abspath(init) if os.path.isfile(init) else None
        return in_folder(folder, module)
    return find_absolute(module, importer)


def submodule(package_file: Optional[str], name: str) -> Optional[str]:
    """The file of submodule ``name`` of the package whose ``__init__.py`` is ``package_file``."""
    if package_file is None or os.path.basename(package_file) != "__init__.py":
        return None
    return in_folder(os.path.dirname(package_file), name)


def module_name_of(path: str) -> tuple[str, str]:
    """(dotted module name, package) of the file ``path`` as Python names it when imported from
    the folder above its outermost package (folders with an ``__init__.py``); a file outside any
    package is a top-level module (package ``""``)."""
    path = os.path.abspath(path)
    folder, stem = os.path.split(path)
    parts = [] if stem == "__init__.py" else [stem[:-3] if stem.endswith(".py") else stem]
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        folder, pkg = os.path.split(folder)
        parts.insert(0, pkg)
    name = ".".join(parts)
    package = name if stem == "__init__.py" else name.rpartition(".")[0]
    return name, package
