"""``tle.assume(COND)``: the domain of a kernel's integer param, stated in the kernel body.

A kernel's integer arguments (and the kernel-level values computed from them) are params of the
Pipe IR that range over every integer, negative ones included, unless the kernel says otherwise:
``tle.assume(N >= 0)``, ``tle.assume(1 <= N <= 64)``, ``tle.assume(N >= 0 and M < 100)``. The
verifier then proves the protocol for the values the assumption allows, and a launch checks that
the kernel-argument params it names satisfy it (tle_compiler.lowering.runtime). Like
``tle.gpu.local_ptr``, it is read from the kernel's source; called as plain Python it raises.
"""

from __future__ import annotations

from .gpu import _only_in_kernel


def assume(cond: object) -> None:
    """State that ``cond`` (a comparison of one param with integer constants; chains and ``and``
    allowed) holds in every launch of the kernel (kernel only: a statement of the kernel body
    before ``tle.gpu.warp_specialize``)."""
    raise _only_in_kernel("tle.assume")


__all__ = ["assume"]
