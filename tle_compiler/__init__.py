"""tle_compiler: pipe-based warp specialization for Triton.

``import tle_compiler as tle`` gives the language surface: ``@tle.jit``, ``tle.pipe``, ``tle.gpu``,
``tle.assume``.
"""

from .language import gpu
from .language.assume import assume
from .language.pipe import pipe
from .jit import TleKernel, jit

__all__ = ["jit", "pipe", "gpu", "assume", "TleKernel"]
