"""The pass manager over the kernel IR (KIR): named passes that read a :class:`KirModule` and
return it with the kernel rewritten (typed attributes on its nodes, ir/attrs.py) or with an
output added (emit-gluon's source).

    module = run_passes(kernel, "verify-protocol,infer-stages,infer-barriers,verify-deadlock")
    module.kernel                     # the KIR with the passes' attributes
    run_passes(module, "materialize-barriers,emit-gluon").gluon

Every pass is registered by name (:func:`~.kir_module.register`) when its module is imported:
the four protocol passes (passes/kir_protocol.py, imported here) and the lowering passes, which
lowering/kir_passes.py registers (the passes layer does not import the lowering: a caller that
runs lowering passes imports that module, or calls its ``passes_with_lowering()``). A pass names the
passes it ``requires``; :func:`run_passes` runs a required pass first when the module has not run
it yet, so ``-p emit-gluon`` alone is a whole lowering.

The module holds the kernel and what is derived from it: the Pipe IR :class:`Program` (the
protocol view, from the frontend's :func:`~tle_compiler.frontend.protocol.protocol`, or the one
the frontend already built) and the :class:`~tle_compiler.passes.context.PassContext` the protocol
passes share (diagnostics, verdict, the inferred barriers). Nothing here reads Python source.
"""

from __future__ import annotations

from typing import Mapping, Optional, Union

from ..ir.kernel import Kernel
from ..ir.nodes import Program
from . import kir_protocol  # noqa: F401  (registers the protocol passes)
from .kir_module import KirModule, KirPass, register, registered

__all__ = ["KirModule", "KirPass", "register", "kir_passes", "parse_passes", "run_pass",
           "run_passes"]


def kir_passes() -> dict[str, KirPass]:
    """Every registered pass by name, in pipeline order: the protocol passes (always registered:
    this module imports them), then the lowering's once tle_compiler.lowering.kir_passes is
    imported (the passes layer does not import the lowering)."""
    return registered()


def parse_passes(spec: str) -> list[KirPass]:
    """The passes of a comma-separated pipeline; ValueError names an unknown one."""
    known = kir_passes()
    names = [n.strip() for n in spec.split(",") if n.strip()]
    unknown = [n for n in names if n not in known]
    if unknown:
        hint = ("" if "emit-gluon" in known else
                "; the lowering's passes register when tle_compiler.lowering.kir_passes is imported")
        raise ValueError(f"unknown pass '{unknown[0]}' (passes: {', '.join(known)}{hint})")
    return [known[n] for n in names]


def run_pass(module: KirModule, p: KirPass) -> KirModule:
    """Run ``p`` (and, first, whatever it requires that has not run)."""
    known = kir_passes()
    for req in p.requires:
        if req not in module.passes_run:
            module = run_pass(module, known[req])
    module = p.run(module)
    module.passes_run.append(p.name)
    return module


def run_passes(kernel: Union[Kernel, KirModule], pipeline: str, *, info=None,
               constexprs: Optional[Mapping] = None, program: Optional[Program] = None,
               bound: Optional[int] = None, params: Optional[Mapping[str, int]] = None,
               budget: Optional[int] = None) -> KirModule:
    """Run a comma-separated pipeline over a kernel (or a module a previous pipeline returned)."""
    if isinstance(kernel, KirModule):
        module = kernel
    else:
        module = KirModule(kernel, info=info, constexprs=dict(constexprs or {}), program=program,
                           bound=bound, params=dict(params or {}), budget=budget)
    for p in parse_passes(pipeline):
        module = run_pass(module, p)
    return module
