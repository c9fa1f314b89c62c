"""The lowering's entry point: one kernel (the frontend's KernelInfo) to its Gluon module.

:func:`generate` runs the kernel IR passes over the kernel IR the frontend built
(``KernelInfo.kir``): the protocol passes and materialize-barriers (:data:`LOWERING_PIPELINE`;
the first error, with its source line, is raised), assign-layouts and schedule-wgmma
(:data:`LAYOUT_PIPELINE`, with the lowering options), then emits the module as emit-gluon does
(lowering/emit.py). The passes are registered by lowering/kir_passes.py, imported here.
"""

from __future__ import annotations

from typing import Optional

from ..diagnostics import TleError
from . import emit as _emit, walks
from .emit import HEADER, Generated  # noqa: F401  (the module's parts, where callers read them)
from .kir_passes import run_passes
from .walks import eager_arrays, kernel_option  # noqa: F401  (the kernel options, where they are read)


def kernel_ir(info):
    """The kernel IR the frontend built for ``info`` (``KernelInfo.kir``: the lowering reads the
    kernel the verifier's Program was derived from, never the Python source again)."""
    kir = getattr(info, "kir", None)
    if kir is None:
        raise TleError(f"internal: kernel '{info.name}' reaches the lowering without the kernel "
                       f"IR the frontend built (KernelInfo.kir)", info.program.loc,
                       check="lowering")
    return kir


#: The protocol passes and materialize-barriers: what runs before the lowering's own passes.
LOWERING_PIPELINE = ("verify-protocol,infer-stages,infer-barriers,verify-deadlock,"
                     "materialize-barriers")
#: The lowering passes whose attributes emit-gluon prints (emit-gluon requires them).
LAYOUT_PIPELINE = "assign-layouts,schedule-wgmma"


def fixed_constexprs(program, constexprs: dict) -> dict:
    """The integer constexprs being compiled for that are params of ``program`` (or bases of its
    derived params): the protocol passes check the kernel at those values, as ``tle-dump
    --param`` does, not for every value of them (a kernel verified for ``--param BASE=6`` may be
    rejected for another BASE, which this compile does not lower). A bool is the integer Triton
    reads it as (``if FLAG:`` with FLAG=True is the param FLAG = 1), as ``--param FLAG=True``."""
    from ..passes.fixed_params import fixable

    if program is None:
        return {}
    names = fixable(program)
    return {k: int(v) for k, v in constexprs.items() if k in names and isinstance(v, int)}


def lowered_module(info, constexprs: dict, params: Optional[dict] = None,
                   bound: Optional[int] = None):
    """The kernel IR of ``info`` after :data:`LOWERING_PIPELINE` (a passes.manager.KirModule),
    the protocol checked at the integer constexprs given (:func:`fixed_constexprs`) and, when
    given, at these values of its params and up to this bound (``tle-dump --param/--bound``:
    the claim of the run that lowers it, and the same instances, which the sweep's cache of
    recent runs then does not expand again)."""
    params = {**dict(params or {}), **fixed_constexprs(info.program, constexprs)}
    try:
        return run_passes(kernel_ir(info), LOWERING_PIPELINE, info=info, constexprs=constexprs,
                          program=info.program, params=params, bound=bound)
    except ValueError as e:  # values outside a param's domain (fixed_params.fix)
        raise TleError(f"kernel '{info.name}' cannot be lowered with these constexprs: {e}",
                       info.program.loc, check="lowering") from None


def generate(info, constexprs: dict, debug_waits=False, cp_async: bool = True,
             barrier_offsets: Optional[dict] = None, module=None,
             arg_types: Optional[dict] = None, params: Optional[dict] = None,
             bound: Optional[int] = None) -> Generated:
    """The Gluon module of ``info``'s kernel. ``debug_waits``: False, or a :class:`.debug.Bound`
    (True = the default bound): bounded waits (lowering/debug.py), with ``barrier_offsets``
    (barrier array var → shared-memory offset, from Triton's allocator; 0 until known).
    ``module``: the kernel IR after the lowering passes (by default :func:`lowered_module`, then
    assign-layouts and schedule-wgmma with these options in ``module.lowering``).
    ``arg_types``: the compile's signature (argument -> Triton type), when known: the element
    type of a pointer argument decides the layout of the 2-D byte loads made through it.
    ``params`` / ``bound``: the param values and bound the protocol is checked at
    (:func:`lowered_module`; by default every value)."""
    if module is None:
        module = lowered_module(info, constexprs, params, bound)
        walks.reject_errors(module)
        module.lowering = dict(debug_waits=debug_waits, cp_async=cp_async,
                               barrier_offsets=barrier_offsets, arg_types=arg_types)
        module = run_passes(module, LAYOUT_PIPELINE)
    return _emit.emit(info, constexprs, module, debug_waits, cp_async, barrier_offsets,
                      arg_types)
