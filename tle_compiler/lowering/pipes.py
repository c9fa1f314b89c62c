"""Pipe verbs → mbarrier code, inside a partition being translated (:mod:`.translate`).

For an event on index ``i`` of pipe P (capacity C), materialize-barriers (lowering/kir_passes.py)
has put on the KIR event its ``stage`` (infer-stages' slot expression) and its ``barrier_ops``:
which mbarrier array it waits on (with the parity expression) or arrives on, in emission order.
This module only spells them: an index expression becomes Gluon text with the event's index as
the generated code computes it (:func:`index_src`); nothing here derives a barrier or a parity.

  acquire(i)  wait empty[g][stage] at φ^1 for each group whose empty barrier this writer waits
              (φ^1: a fresh mbarrier reports parity 1 as completed, so the first C acquires pass)
  commit(i)   [fence_async_shared() when a register-stored field of the group feeds wgmma]
              [closed flag := 0]; then per group, by its arrive mode (plan.arrive_mode):
                (the mode is the array's ``arrive_units`` attribute, assign-layouts')
                partition: mbarrier.arrive(full, count=1) — bar.sync + one elected arrive
                thread:    async_copy.mbarrier_arrive(full, increment_count=False) — every thread
                           arrives once its cp.async copies have landed (count = writer threads)
                mixed:     both (the register stores ordered by the partition arrive, the copies by
                           the per-thread arrives; count = writer threads + 1)
                tma[-...]: mbarrier.expect(full, bytes) — one elected arrive declaring the bytes
                           of the window's TMA copies (MBarrierArrive.tx_bytes; 0 for a close),
                           after the arrives of the mode after the dash
  close(i)    acquire(i) + closed flag := 1 + commit(i)
  wait(i)     wait full[g][stage] at φ for each group of the reader's view; then, when the slot
              feeds wgmma, fence_async_shared(): the slot was written through the generic proxy and
              Triton 3.6 does not insert the generic→async fence between partitions (docs/lowering.md)
  release(i)  warpgroup_mma_wait for the last in-flight wgmma reading a ring of the pipe (if
              any), then arrive empty[g][stage] for each group of the view
A ``barrier="named"`` pipe (materialize-barriers' NamedBarrierArrive / NamedBarrierSync): commit is
``bar.arrive id, threads`` by every writer thread (after the proxy fence when wgmma reads the
slot), wait is ``bar.sync id, threads`` by every reader thread (then the fence as above), acquire
emits nothing, and release only the wgmma wait: what the reader's release point orders before the
hand-off that implies it (passes/named_release.py).
On an index Triton types i64 (``range(N.to(tl.int64))``, an i64 kernel argument: ``V.i64``) the
stage and the parity are cast to i32, which ``.index(...)`` of a ring or a barrier array and
``mbarrier.wait``'s phase take; the verifier checked the index inside i32, and a stage or parity
fits whatever the index: the cast changes no value. An i32 index is spelled as before.
One-shot pipes have no empty barriers: acquire/release emit nothing, waits are at parity 0.
With debug waits on (``TLE_DEBUG_WAITS``), every wait above is a bounded wait that prints the site
and traps (:mod:`.debug`).
"""

from __future__ import annotations

from .eager import emit_publish, emit_release_arrive
from ..diagnostics import TleError
from ..ir import kernel as K
from ..ir.attrs import (MBarrierArrive, MBarrierWait, NamedBarrierArrive, NamedBarrierSync,
                        render_index)
from .plan import PipePlan, arrive_parts
from .values import V, wide
from .wgmma_sites import ring_key


def index_src(expr, index: str, i64: bool = False) -> str:
    """An index expression of the event's attributes (ir/attrs.py) as Gluon source, its index
    spelled ``(index)``: ``(t) % 3``, ``(((t) // 3) & 1) ^ 1``; with ``i64`` (the index is an i64
    value) cast to i32, ``((t) % 3).to(gl.int32)``, unless it is a literal."""
    text = render_index(expr, lambda _: f"({index})")
    if i64 and not text.lstrip("-").isdigit():
        text = f"({text}).to(gl.int32)"
    return text


def eager_array(tr, arr) -> bool:
    """Whether the arrives on ``arr`` are per-thread release arrives (``@tle.jit(eager_publish=
    True)``; lowering/eager.py)."""
    return arr.var in tr.ctx.eager_arrays


def _wait(tr, pp: PipePlan, arr, stage: str, parity: str, index: str, site: str) -> None:
    """Wait on ``arr.index(stage)`` at ``parity``; with debug waits on, a bounded wait that prints
    ``site``, the index, the stage and the parity, and traps (lowering/debug.py)."""
    if tr.ctx.debug_waits:
        from .debug import emit_wait

        emit_wait(tr, arr.var, stage, parity, index, site, pp.capacity, pp.one_shot)
    else:
        tr.emit(f"mbarrier.wait({arr.var}.index({stage}), {parity})")


def event(tr, base, node):
    """A pipe event of the kernel IR (``Event(verb, handle, index)``) on the handle ``base`` (a
    writer or reader value of the translator)."""
    idx = tr.ex(node.index)
    if idx.kind not in ("const", "scalar"):
        raise tr.err("a pipe index must be an integer", node)
    line = node.loc.line
    i64 = idx.kind == "scalar" and wide(idx)
    if base.kind == "writer":
        pp = tr.ctx.plans[base.value]
        return writer_verb(tr, pp, node.verb, idx.text, line, node, i64)
    pipe, reader, _ = base.value
    pp = tr.ctx.plans[pipe]
    return reader_verb(tr, pp, reader, node.verb, idx.text, line, node, i64)


def _stage(tr, pp: PipePlan, node: K.Event, index: str, i64: bool = False) -> str:
    """The event's slot (its ``stage`` attribute) in a fresh variable, or the literal 0."""
    stage = K.get_attr(node, "stage")
    if stage is None:
        raise TleError(f"internal: pipe event {node.verb} of '{pp.name}' reaches the lowering "
                       f"without materialize-barriers' attributes", node.loc, check="lowering")
    text = index_src(stage, index, i64)
    if text != "0":
        s = tr.fresh(f"{pp.name}_s")
        tr.emit(f"{s} = {text}")
        text = s
    return text


def _named_ops(node: K.Event, kind: type) -> list:
    """The event's named-barrier operations of one kind (a ``barrier="named"`` pipe)."""
    return [op for op in K.get_attr(node, "barrier_ops", ()) if isinstance(op, kind)]


#: The string statement a named pipe's release leaves in the generated code (it emits no barrier
#: operation): ``"named release: PIPE"``.
NAMED_RELEASE_MARK = "named release:"


def named_barrier_src(verb: str, bar_id: int, threads: int) -> str:
    """``bar.arrive`` / ``bar.sync`` of every thread of the partition, as a Gluon statement (an
    inline asm with side effects: kept, and not moved across the slot's shared-memory accesses)."""
    return (f'gl.inline_asm_elementwise("bar.{verb} {bar_id}, {threads}; mov.b32 $0, 0;", "=r,r", '
            f'[gl.to_tensor(0)], dtype=gl.int32, is_pure=False, pack=1)')


def _ops(pp: PipePlan, node: K.Event, kind: type) -> list:
    """(barrier array, op) of the event's materialized barrier operations of one kind."""
    arrays = {a.barrier: a for a in pp.arrays}
    return [(arrays[op.barrier], op) for op in K.get_attr(node, "barrier_ops", ())
            if isinstance(op, kind)]


def writer_verb(tr, pp: PipePlan, verb: str, index: str, line: int, node, i64: bool = False):
    if verb not in ("acquire", "commit", "close"):
        raise tr.err(f"a writer has acquire/commit/close, not '{verb}'", node)
    stage = _stage(tr, pp, node, index, i64)
    for arr, op in _ops(pp, node, MBarrierWait):
        _wait(tr, pp, arr, stage, index_src(op.parity, index, i64), index,
              f"pipe {pp.name}: {verb}({index}) on empty[g{arr.group}] (line {line})")
    if verb == "acquire":
        # window: this acquire's number, which the slot's cp.async gathers carry
        return V("slot", value={"pipe": pp.name, "stage": stage, "fields": tuple(pp.rings),
                                "role": "writer", "window": tr.cp_async.new_window(),
                                "stage_attr": K.get_attr(node, "stage")})
    # commit / close
    for op in _named_ops(node, NamedBarrierArrive):  # a named pipe: bar.arrive by every thread
        if any(r.mma for r in pp.rings.values()):
            tr.emit("fence_async_shared()  # generic-proxy writes -> wgmma (async proxy) reads")
        tr.emit(named_barrier_src("arrive", op.bar_id, op.threads)
                + f"  # {pp.name}.{verb}: named barrier, no empty side")
    arrives = _ops(pp, node, MBarrierArrive)
    parts = {arr.var: arrive_parts(arr.mode) for arr, _ in arrives}
    if any(a.fence and parts[a.var][0] for a, _ in arrives):  # register stores read by wgmma
        tr.emit("fence_async_shared()  # generic-proxy writes -> wgmma (async proxy) reads")
    if pp.closed:
        flag = 1 if verb == "close" else 0
        l1 = tr.L(("blocked", (1,), (32,), (tr.warps,), (0,)))
        tr.emit(f"{pp.closed}.index({stage}).store(gl.full([1], {flag}, gl.int32, layout={l1}))")
    for arr, op in arrives:
        bar = f"{arr.var}.index({stage})"
        plain, threads, tma = parts[arr.var]
        if plain and eager_array(tr, arr):
            emit_publish(tr, arr.var, stage)  # every thread arrives (lowering/eager.py)
        elif plain:  # the register stores: one elected arrive after a bar.sync
            tr.emit(f"mbarrier.arrive({bar}, count=1)")
        if threads:  # every thread, once its cp.async copies have landed
            tr.emit(f"async_copy.mbarrier_arrive({bar}, increment_count=False)")
        if tma:  # one elected arrive declaring the bytes the window's TMA copies bring
            _check_tx(pp, arr, op, verb, node)
            why = ("the phase completes when the TMA bytes landed" if verb == "commit" else
                   "a close copies nothing")
            tr.emit(f"mbarrier.expect({bar}, {op.tx_bytes})  # arrive + expect-tx: {why}")
    return V("none", "None")


def _check_tx(pp: PipePlan, arr, op: MBarrierArrive, verb: str, node) -> None:
    """The expect-tx materialize-barriers wrote must be the bytes of one slot of every
    TMA-filled field of the group (a commit; a close copies nothing): what is lowered is what
    was verified, and a wrong count hangs the readers or lets them read early."""
    want = 0 if verb == "close" else sum(
        pp.rings[f].slot_bytes for f in arr.barriers[0].fields if pp.rings[f].tma)
    if op.tx_bytes != want:
        raise TleError(f"lowering: {pp.name}.{verb} arrives on {arr.var} with expect-tx "
                       f"{op.tx_bytes} bytes, but its window's TMA copies bring {want} (the fields' "
                       f"shapes); run materialize-barriers again", node.loc, check="lowering")


def reader_verb(tr, pp: PipePlan, reader: str, verb: str, index: str, line: int, node,
                i64: bool = False):
    if verb == "wait":
        stage = _stage(tr, pp, node, index, i64)
        arrays = []
        for arr, op in _ops(pp, node, MBarrierWait):
            arrays.append(arr)
            _wait(tr, pp, arr, stage, index_src(op.parity, index, i64), index,
                  f"pipe {pp.name}[{reader or '-'}]: wait({index}) on full[g{arr.group}] (line {line})")
        # cp.async-filled fields: the writer cannot fence after the copies land, so the reader
        # orders them before its wgmmas. Register-stored fields were fenced by the writer before
        # its commit, but dropping the reader's fence there measured 1-2 % slower on both
        # SparseMLA kernels (docs/lowering.md), so every wgmma-read slot gets one.
        # (a slot filled only by TMA copies holds no generic-proxy writes to order)
        named = _named_ops(node, NamedBarrierSync)
        for op in named:  # a named pipe: bar.sync with the writer's bar.arrive
            tr.emit(named_barrier_src("sync", op.bar_id, op.threads)
                    + f"  # {pp.name}.wait: named barrier")
        if any(a.fence and not all(pp.rings[f].tma for f in a.barriers[0].fields)
               for a in arrays) or (named and any(r.mma for r in pp.rings.values())):
            tr.emit("fence_async_shared()  # order the writer's generic-proxy stores before wgmma")
        fields = tuple(f for a in arrays for b in a.barriers[:1] for f in b.fields)
        if named:
            fields = tuple(pp.rings)
        slot = V("slot", value={"pipe": pp.name, "stage": stage, "fields": fields,
                                "stage_attr": K.get_attr(node, "stage")})
        return V("res", value={"slot": slot})
    if verb == "release":
        if pp.one_shot:
            return V("none", "None")
        stage = _stage(tr, pp, node, index, i64)
        # docs/semantics.md: before a release, wait for the async wgmmas still reading the slot
        # (not those reading another slot of the pipe: wgmma_sites.rings_overlap)
        at = K.get_attr(node, "stage")
        tr.wait_rings({ring_key(r.var, at) for r in pp.rings.values()} | {ring_key(None)},
                      f"{pp.name}.release: a wgmma may still read the slot")
        if pp.named:  # nothing to arrive on; the marker lets testing/gluon_trace.py check that
            # no wgmma reading the slot is still in flight here, as at any release
            tr.emit(f'"{NAMED_RELEASE_MARK} {pp.name}"')
        for arr, op in _ops(pp, node, MBarrierArrive):
            if eager_array(tr, arr):
                emit_release_arrive(tr, arr.var, stage)  # every thread (lowering/eager.py)
            else:
                tr.emit(f"mbarrier.arrive({arr.var}.index({stage}), count={op.count})")
        return V("none", "None")
    raise tr.err(f"a reader has wait/release, not '{verb}'", node)
