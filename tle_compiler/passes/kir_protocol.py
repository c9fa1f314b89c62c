"""The four protocol passes over the kernel IR. Each runs its Pipe IR pass (verify_protocol.py,
infer_stages.py, infer_barriers.py, verify_deadlock.py) on the module's protocol view and writes
the result into the KIR as typed attributes (ir/attrs.py):

=================  ===========  =============================================================
pass               node         attributes
=================  ===========  =============================================================
verify-protocol    Kernel       ``verdict`` (ProtocolVerdict, once one is known), ``errors``
                                (ProtocolError per fault)
infer-stages       Event        ``stage``, ``phase`` and, for blocking verbs, ``parity``:
                                index expressions over the event's AffineIndex
infer-barriers     PipeDecl     ``barriers``: a BarrierDecl per mbarrier array (``expect_tx``:
                                the bytes of a commit's TMA copies, from the fields' shapes)
                   Event        ``waits`` (BarrierWait: array and parity), ``arrives`` (arrays)
verify-deadlock    Kernel       ``verdict``, ``errors`` (as verify-protocol)
=================  ===========  =============================================================

The protocol view has one event per KIR event, in the same order per partition (the frontend
builds one from the other); :func:`event_pairs` checks that before anything is written.
"""

from __future__ import annotations

from dataclasses import replace
from ..diagnostics import TleError
from ..ir import kernel as K
from ..ir.attrs import (AffineIndex, BarrierDecl, BarrierRole, BarrierWait, ProtocolError,
                        ProtocolVerdict, parity_expr, phase_expr, stage_expr)
from ..ir.nodes import walk_events
from ..ir.record import record
from ..language.gpu import slot_bytes
from .infer_barriers import Barrier, InferBarriers, tma_fields
from .infer_stages import InferStages
from .kir_rewrite import with_event_attrs
from .kir_module import KirModule, register
from .verify_deadlock import VerifyDeadlock
from .verify_protocol import VerifyProtocol


def event_pairs(module: KirModule) -> dict[str, list]:
    """Per partition, (KIR event, Pipe IR event) in evaluation order."""
    program = module.protocol().program
    out: dict[str, list] = {}
    for part in module.kernel.partitions:
        ppart = next((p for p in program.partitions if p.name == part.name), None)
        kev = list(K.events(part.body))
        pev = list(walk_events(ppart.body)) if ppart is not None else []
        if not K.same_events(kev, pev):
            raise TleError(f"internal: the protocol view of partition '{part.name}' has "
                           f"{len(pev)} events, its kernel IR {len(kev)} (or in another order)",
                           part.loc, check="internal")
        out[part.name] = list(zip(kev, pev))
    return out


def _run_program_pass(module: KirModule, program_pass) -> bool:
    """Apply the Pipe IR pass as run_pipeline does: not after a structural error (unknown pipe,
    undeclared reader, ...), which leaves nothing to pair. Returns whether it ran."""
    ctx = module.protocol()
    if ctx.structure_failed:
        return False
    program_pass.apply(ctx)
    ctx.passes_run.append(program_pass.name)
    return True


def verdict_attrs(module: KirModule) -> dict:
    """The verdict and errors of the protocol passes so far, as Kernel attributes."""
    ctx = module.protocol()
    out: dict = {}
    v = ctx.verdict()
    if v is not None:
        out["verdict"] = ProtocolVerdict(v.kind, v.scope, tuple(sorted(v.checked.items())),
                                         v.argument, v.reason, v.errors)
    if ctx.errors:
        out["errors"] = tuple(ProtocolError(d.check or "", d.loc.line, d.message)
                              for d in ctx.errors)
    return out


@record
class _VerifyPass:
    name: str
    program_pass: object
    requires: tuple = ()

    def run(self, module: KirModule) -> KirModule:
        _run_program_pass(module, self.program_pass)
        attrs = verdict_attrs(module)
        if attrs:
            module.kernel = K.with_attrs(module.kernel, **attrs)
        return module


VERIFY_PROTOCOL = register(_VerifyPass("verify-protocol", VerifyProtocol()))


@record
class InferStagesKir:
    """Every event's ``stage`` (slot), ``phase`` and waited ``parity`` as index expressions over
    its index (affine in loop variables and params)."""

    name: str = "infer-stages"
    requires: tuple = ()

    def run(self, module: KirModule) -> KirModule:
        if not _run_program_pass(module, InferStages()):
            return module
        program = module.protocol().program
        per_part: dict[str, list[dict]] = {}
        for pname, pairs in event_pairs(module).items():
            rows = []
            for _, pe in pairs:
                pipe = program.pipe(pe.pipe)
                if pipe is None:
                    rows.append({})
                    continue
                i = AffineIndex.of(pe.index)
                row = {"stage": stage_expr(i, pipe.capacity, pipe.one_shot),
                       "phase": phase_expr(i, pipe.capacity, pipe.one_shot)}
                parity = parity_expr(pe.verb, i, pipe.capacity, pipe.one_shot)
                if parity is not None:
                    row["parity"] = parity
                rows.append(row)
            per_part[pname] = rows
        module.kernel = with_event_attrs(module.kernel, per_part)
        return module


register(InferStagesKir())


def array_name(pipe: str, kind: str, group: int) -> str:
    """The name of a barrier array: the variable the generated code holds it in."""
    return f"{pipe}_{kind}{group}"


def _roles(endpoints) -> tuple:
    out = []
    for e in endpoints:
        r = BarrierRole(e.partition, e.verb, e.reader)
        if r not in out:
            out.append(r)
    return tuple(out)


def barrier_decls(barriers: list[Barrier], pipe: str) -> tuple[BarrierDecl, ...]:
    """The barrier arrays of ``pipe``, group by group, full before empty (the lowering's order)."""
    arrays: dict[tuple, list[Barrier]] = {}
    for b in barriers:
        if b.pipe == pipe:
            arrays.setdefault((b.group, b.kind != "full"), []).append(b)
    out = []
    for key in sorted(arrays):
        bs = sorted(arrays[key], key=lambda b: b.stage)
        b0 = bs[0]
        out.append(BarrierDecl(array_name(pipe, b0.kind, b0.group), b0.kind, b0.group, b0.fields,
                               len(bs), b0.count, _roles(b0.arrivers), _roles(b0.waiters),
                               b0.fence, b0.expect_tx))
    return tuple(out)


def event_barriers(decls: tuple[BarrierDecl, ...], partition: str, event: K.Event,
                   one_shot: bool, parity) -> dict:
    """Which arrays a KIR event of ``partition`` waits on (with its parity) and arrives on:
    acquire/close wait on the empty arrays the writer waits on; commit/close arrive on every full
    array; wait waits on the full arrays of the reader's groups; release arrives on the empty
    arrays of the reader's groups. A one-shot pipe's acquire and release touch none."""
    verb = event.verb
    reader = event.handle.reader or ""
    waits: list = []
    arrives: list = []
    if verb in ("acquire", "close") and not one_shot:
        waits = [d for d in decls if d.kind == "empty" and any(
            w.partition == partition and w.verb in (verb, "acquire", "close") for w in d.wait)]
    if verb in ("commit", "close"):
        arrives = [d for d in decls if d.kind in ("full", "named")]
    if verb == "wait":
        waits = [d for d in decls if d.kind in ("full", "named") and any(
            w.partition == partition and w.verb == "wait" and (w.reader or "") == reader
            for w in d.wait)]
    if verb == "release" and not one_shot:
        arrives = [d for d in decls if d.kind == "empty" and any(
            a.partition == partition and a.verb == "release" and (a.reader or "") == reader
            for a in d.arrive)]
    out: dict = {}
    if waits:
        out["waits"] = tuple(BarrierWait(d.name, parity) for d in waits)
    if arrives:
        out["arrives"] = tuple(d.name for d in arrives)
    return out


def tma_bytes(module: KirModule, decls: dict) -> dict:
    """The full barriers' ``expect_tx`` from the kernel IR's field shapes (module constants and
    the module's constexpr values resolve their names): the Pipe IR knows the bytes of a TMA copy
    only where the field's shape was a number when the kernel was read. A number both know must
    agree."""
    copied = tma_fields(module.protocol().program)
    if not copied:
        return decls
    consts = {**dict(module.kernel.consts), **dict(module.constexprs)}
    out = {}
    for name, ds in decls.items():
        pipe = module.kernel.pipe(name)
        shapes = {b.name: b for b in pipe.fields} if pipe is not None else {}
        fixed = []
        for d in ds:
            fields = [f for f in d.fields if f in copied.get(name, {})]
            if d.kind != "full" or not fields:
                fixed.append(d)
                continue
            sizes = []
            for f in fields:
                b = shapes[f]
                sizes.append(slot_bytes([consts.get(x, x) if isinstance(x, str) else x
                                         for x in b.shape], b.dtype))
            if any(n is None for n in sizes):
                # a shape the module cannot resolve yet (a constexpr without a value here): the
                # Pipe IR's number when it knows one, else None, "not known", as the JSON
                # report's null and the table's "?" say; 0 printed (--print-ir) read as a group
                # whose commits expect no bytes, which its lowering never has
                fixed.append(d if d.expect_tx else replace(d, expect_tx=None))
                continue
            tx = sum(sizes)
            if d.expect_tx and d.expect_tx != tx:
                raise TleError(f"internal: pipe '{name}': the protocol view's TMA bytes "
                               f"({d.expect_tx}) differ from the fields' shapes ({tx})",
                               pipe.loc, check="internal")
            fixed.append(replace(d, expect_tx=tx))
        out[name] = tuple(fixed)
    return out


@record
class InferBarriersKir:
    """Every pipe's mbarrier arrays (``barriers``) and, on every event, the arrays it waits on
    and arrives on."""

    name: str = "infer-barriers"
    requires: tuple = ("infer-stages",)

    def run(self, module: KirModule) -> KirModule:
        if not _run_program_pass(module, InferBarriers()):
            return module
        barriers = module.protocol().barriers
        decls = {p.name: barrier_decls(barriers, p.name) for p in module.kernel.pipes}
        decls = tma_bytes(module, decls)
        pipes = tuple(K.with_attrs(p, barriers=decls[p.name]) for p in module.kernel.pipes)
        kernel = replace(module.kernel, pipes=pipes)
        one_shot = {p.name: p.one_shot for p in kernel.pipes}
        per_part: dict[str, list[dict]] = {}
        for part in kernel.partitions:
            per_part[part.name] = [
                event_barriers(decls.get(e.handle.pipe, ()), part.name, e,
                               one_shot.get(e.handle.pipe, False), K.get_attr(e, "parity"))
                for e in K.events(part.body)]
        module.kernel = with_event_attrs(kernel, per_part)
        return module


register(InferBarriersKir())

VERIFY_DEADLOCK = register(_VerifyPass("verify-deadlock", VerifyDeadlock()))
