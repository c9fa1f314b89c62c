"""``@tle.jit``: mark a kernel whose body calls ``tle.gpu.warp_specialize`` over pipe partitions.

The decorator does not run or trace the kernel: :meth:`TleKernel.pipe_ir` reads the kernel's file
with the frontend. ``kernel[grid](*args, **constexprs)`` lowers it to Gluon, compiles it for sm_90a
(cached per signature and constexprs) and launches it on the current CUDA stream
(:mod:`tle_compiler.lowering.runtime`); without a GPU, launching raises a TleError that says so.

Note: ``tle_compiler.jit`` at the package top level is this decorator (it shadows the module's
name); import the class with ``from tle_compiler.jit import TleKernel`` or from ``tle_compiler``.
"""

from __future__ import annotations

import inspect
import linecache
import re
from typing import Any, Callable, Optional

from .diagnostics import TleError
from .ir.nodes import Loc, Program
from .language.gpu import DEFAULT_NUM_WARPS, caller_loc, check_num_warps, describe

__all__ = ["DEFAULT_NUM_WARPS", "TleKernel", "check_num_warps", "jit"]


def _def_line(fn: Callable, file: Optional[str]) -> int:
    """The line of ``def fn`` (``co_firstlineno`` is the first decorator's line)."""
    first = fn.__code__.co_firstlineno
    if file:
        pat = re.compile(rf"^\s*(async\s+)?def\s+{re.escape(fn.__name__)}\b")
        for line in range(first, first + 200):
            text = linecache.getline(file, line)
            if not text:
                break
            if pat.match(text):
                return line
    return first


class _Launcher:
    def __init__(self, kernel: "TleKernel", grid: object):
        self.kernel = kernel
        self.grid = grid

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        self.kernel.runtime.launch(self.grid, args, kwargs, caller_loc())


class TleKernel:
    """A ``@tle.jit`` kernel: the function, where it is defined, and its launch options."""

    def __init__(self, fn: Callable, num_warps: Optional[int] = None, **options: Any):
        self.fn = fn
        self.name = fn.__name__
        self.__name__ = fn.__name__
        self.__qualname__ = getattr(fn, "__qualname__", fn.__name__)
        self.__doc__ = fn.__doc__
        self.__module__ = fn.__module__
        self.__wrapped__ = fn
        try:
            self.file: Optional[str] = inspect.getsourcefile(fn) or fn.__code__.co_filename
        except TypeError:  # pragma: no cover - builtins
            self.file = None
        self.line = _def_line(fn, self.file)
        self.num_warps = num_warps if num_warps is not None else DEFAULT_NUM_WARPS
        self.options = dict(options)
        self._runtime = None

    @property
    def runtime(self):
        """Compiled variants of this kernel and its launcher (tle_compiler.lowering.runtime)."""
        if self._runtime is None:
            from .lowering.runtime import Runtime

            self._runtime = Runtime(self)
        return self._runtime

    @property
    def loc(self) -> Loc:
        return Loc(self.file, self.line)

    def kernel_info(self, bind: Optional[dict] = None):  # -> frontend.KernelInfo
        """The frontend's view of this kernel (Program, field specs, partitions); ``bind``: integer
        constexpr values to read it specialised to (frontend.read_kernels)."""
        from .frontend import read_kernels

        if not self.file:
            raise TleError(f"kernel '{self.name}' has no source file to read", self.loc)
        infos = read_kernels(self.file, name=self.name, bind=bind)
        for info in infos:
            if info.name == self.name and info.program.loc.line == self.line:
                return info
        for info in infos:
            if info.name == self.name:
                return info
        raise TleError(f"kernel '{self.name}' has no Pipe IR: the frontend reads module-level "
                       f"@tle.jit functions whose body calls tle.gpu.warp_specialize", self.loc,
                       check="no-kernel")

    def pipe_ir(self) -> Program:
        """The kernel's Pipe IR, built by the frontend from the kernel's source file."""
        return self.kernel_info().program

    def __getitem__(self, grid: object) -> _Launcher:
        return _Launcher(self, grid)

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        raise TleError(f"'{self.name}' is a @tle.jit kernel: launch it as {self.name}[grid](...)",
                       caller_loc(), check="no-grid")

    def __repr__(self) -> str:
        return f"TleKernel({self.name} at {self.file}:{self.line}, num_warps={self.num_warps})"


def jit(fn: Optional[Callable] = None, *, num_warps: Optional[int] = None,
        **options: Any) -> Any:
    """``@tle.jit`` or ``@tle.jit(num_warps=8, ...)``: ``num_warps`` is the default partition's
    warp count (4 when not given); other options are kept for the lowering."""
    loc = caller_loc()
    if num_warps is not None:
        check_num_warps(num_warps, loc)
    if fn is None:
        return lambda f: TleKernel(f, num_warps, **options)
    if not callable(fn):
        raise TleError(f"@tle.jit decorates a function, got {describe(fn)}", loc, check="bad-jit")
    return TleKernel(fn, num_warps, **options)
