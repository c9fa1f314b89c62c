"""tle_compiler: pipe-based warp specialization for Triton.

``import tle_compiler as tle`` gives the language surface: ``@tle.jit``, ``tle.pipe``, ``tle.gpu``.
"""

from .language import gpu
from .language.pipe import pipe
from .jit import TleKernel, jit

__all__ = ["jit", "pipe", "gpu", "TleKernel"]
