"""The kernels bundled under tle_kernels/ that several test files run over."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

from tle_compiler.frontend.kernel import jit_decorator
from tle_compiler.frontend.scope import ModuleScope

KERNELS_DIR = Path(__file__).resolve().parent.parent / "tle_kernels"


def tle_kernels(where: Path = KERNELS_DIR) -> list[tuple[Path, str]]:
    """(file, kernel name) of every module-level ``@tle.jit`` function of the file ``where`` or
    under the folder ``where``, files in sorted order, kernels in source order."""
    out = []
    for path in [where] if where.is_file() else sorted(where.rglob("*.py")):
        out += _jit_kernels(path, path.stat().st_mtime_ns)
    return out


@functools.lru_cache(maxsize=None)
def _jit_kernels(path: Path, mtime_ns: int) -> tuple[tuple[Path, str], ...]:
    """The file's ``@tle.jit`` kernels, read once per process (several test modules ask for
    the same files as they are collected; a file changed since is read again)."""
    tree = ast.parse(path.read_text(), str(path))
    scope = ModuleScope(tree, str(path))
    return tuple((path, n.name) for n in tree.body
                 if isinstance(n, ast.FunctionDef) and jit_decorator(scope, n) is not None)
