"""The pass manager over the kernel IR (KIR): named passes that read a :class:`KirModule` and
return it with the kernel rewritten (typed attributes on its nodes, ir/attrs.py) or with an
output added (emit-gluon's source).

    module = run_passes(kernel, "verify-protocol,infer-stages,infer-barriers,verify-deadlock")
    module.kernel                     # the KIR with the passes' attributes
    run_passes(module, "materialize-barriers,emit-gluon").gluon

Every pass is registered by name (:func:`kir_passes`): the four protocol passes
(passes/kir_protocol.py) and the lowering passes (lowering/kir_passes.py). A pass names the
passes it ``requires``; :func:`run_passes` runs a required pass first when the module has not run
it yet, so ``-p emit-gluon`` alone is a whole lowering.

The module holds the kernel and what is derived from it: the Pipe IR :class:`Program` (the
protocol view, from the frontend's :func:`~tle_compiler.frontend.protocol.protocol`, or the one
the frontend already built) and the :class:`~tle_compiler.passes.context.PassContext` the protocol
passes share (diagnostics, verdict, the inferred barriers). Nothing here reads Python source.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Optional, Protocol, Union

from ..ir.kernel import Kernel
from ..ir.nodes import Program
from .context import PassContext


@dataclass
class KirModule:
    """One kernel and its analyses while passes run over it.

    ``info``: the frontend's KernelInfo (path, args, constexprs, options, field specs) when the
    kernel was read from Python, which the lowering passes need; ``constexprs``: the values of
    the kernel's constexpr arguments the lowering specialises to; ``bound`` / ``params`` /
    ``budget``: what the protocol passes check (as ``tle-dump --bound/--param``)."""

    kernel: Kernel
    info: object = None
    constexprs: dict = field(default_factory=dict)
    program: Optional[Program] = None
    bound: Optional[int] = None
    params: dict = field(default_factory=dict)
    budget: Optional[int] = None
    #: the protocol passes' context (created with the first protocol pass)
    ctx: Optional[PassContext] = None
    #: emit-gluon's output: the Gluon module source and the lowering's plan (codegen.Generated)
    gluon: Optional[str] = None
    generated: object = None
    #: lowering options (codegen.generate's): debug waits, cp.async gathers, barrier offsets
    lowering: dict = field(default_factory=dict)
    passes_run: list = field(default_factory=list)

    def protocol(self) -> PassContext:
        """The protocol passes' context over the kernel's Pipe IR (derived once)."""
        if self.ctx is None:
            if self.program is None:
                from ..frontend.protocol import protocol

                self.program = protocol(self.kernel)
            self.ctx = PassContext(self.program, bound=self.bound,
                                   fixed_params=dict(self.params))
            if self.budget is not None:
                self.ctx.budget = self.budget
        return self.ctx


class KirPass(Protocol):
    """A named pass over a :class:`KirModule`."""

    name: str
    #: passes that must have run on the module first (run_passes runs them when they have not)
    requires: tuple

    def run(self, module: KirModule) -> KirModule: ...


_REGISTRY: dict[str, KirPass] = {}


def register(p: KirPass) -> KirPass:
    if p.name in _REGISTRY and _REGISTRY[p.name] is not p:
        raise ValueError(f"pass '{p.name}' registered twice")
    _REGISTRY[p.name] = p
    return p


def kir_passes() -> dict[str, KirPass]:
    """Every registered pass by name, in pipeline order (protocol passes, then the lowering)."""
    from . import kir_protocol  # noqa: F401  (registers the protocol passes)
    from ..lowering import kir_passes as _lowering  # noqa: F401  (registers the lowering passes)

    return dict(_REGISTRY)


def parse_passes(spec: str) -> list[KirPass]:
    """The passes of a comma-separated pipeline; ValueError names an unknown one."""
    known = kir_passes()
    names = [n.strip() for n in spec.split(",") if n.strip()]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"unknown pass '{unknown[0]}' (passes: {', '.join(known)})")
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
