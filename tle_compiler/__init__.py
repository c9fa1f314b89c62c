"""tle_compiler: pipe-based warp specialization for Triton.

``import tle_compiler as tle`` gives the language surface: ``@tle.jit``, ``tle.pipe``, ``tle.gpu``.
"""
