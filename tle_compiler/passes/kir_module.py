"""What a kernel IR pass is: the :class:`KirModule` it reads and returns, the :class:`KirPass`
interface, and the registry passes add themselves to (:func:`register`) when their module is
imported: the protocol passes (passes/kir_protocol.py) and the lowering's passes
(lowering/kir_passes.py, which registers its own). passes/manager.py runs pipelines over it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Protocol

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
        """The protocol passes' context over the kernel's Pipe IR (derived once): the Program
        given, else the one the frontend built with ``info`` when ``info.kir`` is this kernel,
        else :func:`protocol_view` of the kernel IR alone."""
        if self.ctx is None:
            if self.program is None:
                info = self.info
                if getattr(info, "kir", None) is self.kernel and \
                        getattr(info, "program", None) is not None:
                    self.program = info.program
                else:
                    self.program = protocol_view(self.kernel)
            self.ctx = PassContext(self.program, bound=self.bound,
                                   fixed_params=dict(self.params))
            if self.budget is not None:
                self.ctx.budget = self.budget
        return self.ctx


def protocol_view(kernel: Kernel, bind: Optional[dict] = None) -> Program:
    """The Pipe IR of a kernel IR on its own (parsed from the text form, or built without a
    KernelInfo): the frontend's derivation with no Python source. The frontend spells an
    expression in a message as written when it has the file's source and otherwise prints the
    KIR expression; here it reads no file, so the messages print the KIR's expressions.
    ``bind``: integer constexpr values the view is specialised to (as the frontend reads a kernel
    specialised)."""
    from ..frontend.protocol import protocol

    return protocol(kernel, bind=bind, read_files=False)


class KirPass(Protocol):
    """A named pass over a :class:`KirModule`."""

    name: str
    #: passes that must have run on the module first (run_passes runs them when they have not)
    requires: tuple

    def run(self, module: KirModule) -> KirModule: ...


_REGISTRY: dict[str, KirPass] = {}


def register(p: KirPass) -> KirPass:
    """Add ``p`` to the registry under its name (registering the same object again is a
    no-op, another pass of that name is an error)."""
    if p.name in _REGISTRY and _REGISTRY[p.name] is not p:
        raise ValueError(f"pass '{p.name}' registered twice")
    _REGISTRY[p.name] = p
    return p


def registered() -> dict[str, KirPass]:
    """The passes registered so far by name, in registration order."""
    return dict(_REGISTRY)
