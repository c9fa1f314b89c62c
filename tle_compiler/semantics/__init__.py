"""Executable semantics of the Pipe IR: a simulator over real mbarrier parity semantics.

It is the oracle the static verifier is fuzzed against, so it shares no code with ``ir/unroll.py``
or ``passes/``: it has its own interpreter of loops and conditions.
"""

from .simulator import SimError, SimResult, StructuralError, simulate, simulate_range

__all__ = ["SimError", "SimResult", "StructuralError", "simulate", "simulate_range"]
