"""Moved to :mod:`tle_compiler.testing.emulator` (one CPU emulation of TLE for every test); this
re-export keeps ``tests.gpu.emulator`` importable."""

from tle_compiler.testing.emulator import (
    TIMEOUT_S,
    Ptr,
    emulated_launch,
    load_kernel_module,
    make_language,
)

__all__ = ["TIMEOUT_S", "Ptr", "emulated_launch", "load_kernel_module", "make_language"]
