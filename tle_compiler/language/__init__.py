"""The TLE language surface: ``tle.pipe`` (pipe.py), ``tle.gpu`` (gpu.py) and ``tle.assume``
(assume.py); registers.py: warp_specialize's register rule, which the frontend checks and the
lowering budgets by.

Note: ``tle_compiler.pipe`` (the function) is re-exported at the package top level; the module
``tle_compiler.language.pipe`` keeps its name here, so import helpers from it with
``from tle_compiler.language.pipe import ...``.
"""

from . import gpu
from .assume import assume
from .gpu import (SharedBuffer, alloc, launch_dependents, local_ptr, prefetch_l2, scale_rows, smem,
                  tma_load, warp_specialize)
from .pipe import (Pipe, PipeDecl, Reader, Slot, WaitResult, Writer, validate_pipe,
                   validate_reader)

__all__ = ["assume", "gpu", "SharedBuffer", "alloc", "launch_dependents", "local_ptr", "prefetch_l2",
           "scale_rows", "smem",
           "tma_load",
           "warp_specialize",
           "Pipe", "PipeDecl",
           "Reader", "Slot", "WaitResult", "Writer", "validate_pipe", "validate_reader"]
