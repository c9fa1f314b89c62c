"""verify-protocol: is this a well-formed pipe protocol?

Two levels. Structural rules are checked once on the IR: pipes and readers exist and are declared,
field views name real fields, each pipe has one writer partition and each reader name one partition,
slot accesses come from the right partition and stay in their reader's view, index and bound
variables are in scope, partitions are declared sanely, TMA copies stand in windows whose copies
are known statically (tma_windows.py). Dynamic rules (pairing of acquire/commit
and wait/release, one-shot use, per-stage agreement between commits and waits, every slot access
inside its window) are checked on the event traces of every param value the plan names (see
cutoff.py and sweep.py), and each violation is reported at the event that shows it, with the
smallest param values that do.
"""

from __future__ import annotations


from ..ir.i32 import fits_i32
from ..ir.nodes import CLOSED_FLAG, Access, Event, For, If, Stmt, walk_accesses, walk_events
from ..ir.record import record
from ..ir.smem import SMEM_BYTES, pipes_past_smem
from .context import PassContext
from .infer_barriers import tma_fields
from .named_budget import named_barrier_id, too_many_named
from .sweep import sweep
from .tma_windows import check_tma_windows

#: The most stages a pipe can have: two 8-byte mbarriers a stage in at most 227 KB (232448 bytes)
#: of shared memory per block. A larger capacity cannot be allocated, and checking it would size
#: per-stage tables beyond memory.
MAX_CAPACITY = SMEM_BYTES // 16
#: The most warps a CTA has (1024 threads): every partition's warps run in one CTA, so a kernel
#: whose partitions need more compiles but never launches.
MAX_CTA_WARPS = 32


def _on_gpu(value: int, least: int) -> int:
    """``value`` as the GPU computes it in the signed type whose least value is ``least`` (i32
    or i64): sums and products by constants wrap modulo 2^32 (2^64), so an affine expression's
    value there is its true value wrapped into the type's range."""
    width = -2 * least
    return (value - least) % width + least


def _division_defined(operands, fixed: dict) -> bool:
    """Whether the run-time division of ``operands`` (dividend, divisor, the type's least
    value, whether the dividend's domain holds it: frontend/protocol.py
    runtime_division), undefined for some values of the params' domains, is defined at
    the values ``fixed`` (--param) gives: its divisor fixed to neither 0 nor -1, or to -1 with
    a dividend that cannot be (or is fixed to another value than) the least. The divisor and
    dividend are the values the GPU computes, wrapped into the type (adversarial round 63:
    `C // (N * 65536)` at `--param N=65536` divides by 0 on the GPU, by 2^32 over the
    integers)."""
    a, b, least, may_be_least = operands
    if not b.variables <= fixed.keys():
        return False
    d = _on_gpu(b.eval(fixed), least)
    if d == 0:
        return False
    return d != -1 or not may_be_least or (a.variables <= fixed.keys()
                                           and _on_gpu(a.eval(fixed), least) != least)


def _step_fixed_nonzero(operands, fixed: dict) -> bool:
    """Whether the run-time step of a loop without events (``operands``: ``(step,)``, an Affine:
    frontend/protocol.py note_runtime_step), which may be 0 in the params' domains, is fixed by
    the values ``fixed`` (--param) gives to a non-zero i32: the loop then ends at those values
    (whether its counter stays in i32 is the i32 check's, passes/i32_range.py). A step whose
    value there is outside i32 keeps the obligation: the GPU computes it wrapped (`N * 65536`
    at N = 65536 is 0)."""
    (step,) = operands
    if not step.variables <= fixed.keys():
        return False
    value = step.eval(fixed)
    return value != 0 and fits_i32(value)


def _wrapped_divisor(operands, fixed: dict) -> str:
    """Where the values ``fixed`` gives make the divisor 0 or -1 only as the GPU computes it
    (its value over the integers wraps), what the message of the obligation adds; else ""."""
    _, b, least, _ = operands
    if not b.variables <= fixed.keys():
        return ""
    exact = b.eval(fixed)
    gpu = _on_gpu(exact, least)
    if gpu == exact:
        return ""
    width = 32 if least == -2 ** 31 else 64
    return f" (at the values given `{b}` is {exact}, which the GPU computes in i{width} as {gpu})"


def check_structure(ctx: PassContext) -> None:
    prog = ctx.program
    # a loop that may never end: a run-time step that may be 0 (zero-step), or a run-time loop
    # without events whose counter may wrap at a launch no checked value stands for
    for loc, message, *check in getattr(prog, "zero_steps", ()):
        if len(check) > 1 and check[0] == "zero-step":
            if _step_fixed_nonzero(check[1], ctx.fixed_params):
                continue
        elif len(check) > 1 and _division_defined(check[1], ctx.fixed_params):
            continue
        elif len(check) > 1:
            message += _wrapped_divisor(check[1], ctx.fixed_params)
        ctx.error(loc, message, check[0] if check else "zero-step")
    seen: dict[str, str] = {}
    for kind, items in (("param", prog.params), ("pipe", prog.pipes), ("partition", prog.partitions)):
        for it in items:
            if it.name in seen:
                msg = (f"{kind} '{it.name}' is declared twice" if seen[it.name] == kind else
                       f"{kind} '{it.name}' has the name of a {seen[it.name]}: names must differ")
                ctx.error(it.loc, msg, "duplicate-name")
            seen.setdefault(it.name, kind)
    for p in prog.pipes:
        if p.capacity < 1:
            ctx.error(p.loc, f"pipe '{p.name}' has capacity {p.capacity}; it must be at least 1", "bad-capacity")
        elif p.capacity > MAX_CAPACITY:
            ctx.error(p.loc, f"pipe '{p.name}' has capacity {p.capacity}: its full and empty "
                      f"mbarriers alone (16 bytes a stage) exceed Hopper's 227 KB of shared memory "
                      f"per block (at most {MAX_CAPACITY} stages)", "bad-capacity")
        if p.one_shot and p.capacity != 1:
            ctx.error(p.loc, f"one-shot pipe '{p.name}' must have capacity 1 (it has {p.capacity})", "bad-capacity")
        for what, names in (("reader", p.readers), ("field", p.fields)):
            dup = {n for n in names if names.count(n) > 1}
            if dup:
                ctx.error(p.loc, f"pipe '{p.name}' declares {what} '{sorted(dup)[0]}' twice", "duplicate-name")
        if CLOSED_FLAG in p.fields:
            ctx.error(p.loc, f"pipe '{p.name}' declares a field named '{CLOSED_FLAG}': that name is "
                      f"the slot's closed flag (res.{CLOSED_FLAG}), so the field could not be told "
                      f"from it", "duplicate-name")
        for f in p.mma:
            if f not in p.fields:
                ctx.error(p.loc, f"pipe '{p.name}' marks '{f}' as an MMA operand but has no such field", "unknown-field")
    if all(p.capacity <= MAX_CAPACITY for p in prog.pipes):
        # every pipe fits alone, but their mbarriers share the CTA's shared memory: pipes that
        # together exceed it cannot be allocated (as a .kir file's are refused when read), and a
        # .pipe file of many such pipes took minutes to check. The slots of TMA-filled fields,
        # whose bytes the program states (a copy lands a whole slot), count too: a commit's
        # expect-tx is the bytes its window's copies bring into shared memory, so a window of
        # more bytes than the CTA has can never complete (and no mbarrier counts past 2^20 - 1)
        tma = tma_fields(prog)
        past = pipes_past_smem(prog.name, prog.pipes, lambda p: p.capacity * sum(
            max(b, 0) for b in tma.get(p.name, {}).values()))
        if past is not None:
            ctx.error(past[0].loc, past[1], "bad-capacity")
    defaults = [p for p in prog.partitions if p.default]
    if not prog.partitions:
        ctx.error(prog.loc, f"kernel '{prog.name}' has no partitions", "no-partitions")
    elif len(defaults) != 1:
        where = defaults[1].loc if len(defaults) > 1 else prog.partitions[0].loc
        ctx.error(where, f"kernel '{prog.name}' needs exactly one default partition (found {len(defaults)})",
                  "default-partition")
    for part in prog.partitions:
        if part.warps < 1:
            ctx.error(part.loc, f"partition '{part.name}' has {part.warps} warps", "bad-warps")
        elif part.warps & (part.warps - 1):
            ctx.error(part.loc, f"partition '{part.name}' has {part.warps} warps: Triton's "
                      f"warp_specialize takes a power of two per partition (the kernel would not "
                      f"compile)", "bad-warps")
        if part.regs is not None and (part.regs % 8 or not 24 <= part.regs <= 256):
            ctx.error(part.loc, f"partition '{part.name}' asks for {part.regs} registers per thread: Hopper's "
                      f"setmaxnreg takes a multiple of 8 in [24, 256]", "bad-regs")
        if part.default and part.regs is not None:
            ctx.warning(part.loc, f"default partition '{part.name}' gets the registers left by the workers; "
                        f"regs={part.regs} is ignored", "default-regs")
        _check_scopes(ctx, part.body, set(prog.param_names))

    total = sum(max(p.warps, 0) for p in prog.partitions)
    if total > MAX_CTA_WARPS:
        ctx.error(prog.partitions[0].loc if prog.partitions else prog.loc,
                  f"kernel '{prog.name}' runs {total} warps ("
                  + ", ".join(f"{p.name}: {p.warps}" for p in prog.partitions)
                  + f"): every partition runs in one CTA, which has at most {MAX_CTA_WARPS} warps "
                  f"(1024 threads); the kernel would compile but never launch", "bad-warps")
    roles = ctx.roles()
    for part in prog.partitions:
        _check_events(ctx, part.body)
    for r in roles.values():
        for loc, msg, check in r.problems:
            ctx.error(loc, msg, check)
        p = r.pipe
        if r.writer is None and r.readers:
            # Only a warning: a wait that actually runs is rejected per instance
            # (wait-never-committed); one in code that never runs is harmless.
            ctx.warning(next(iter(r.reader_locs.values())), f"pipe '{p.name}' is read but never written: "
                        f"a wait on it can never complete", "no-writer")
        if r.writer is None and not r.readers:
            ctx.warning(p.loc, f"pipe '{p.name}' is never used", "unused-pipe")
        for f in p.fields:
            if not any(f in v for v in r.views.values()):
                ctx.warning(p.loc, f"field '{f}' of pipe '{p.name}' is read by no reader", "unread-field")
    _check_named_budget(ctx, roles)


def _check_named_budget(ctx: PassContext, roles) -> None:
    """The named-barrier ids the lowering can give (passes/named_budget.py): one hardware barrier
    per field group of every written ``barrier="named"`` pipe (as infer-barriers declares them), in
    declaration order; the first pipe without an id is an error at its declaration, the
    lowering's refusal, so that no kernel is verified that the compiler cannot compile."""
    prog = ctx.program
    k = 0
    for p in prog.pipes:
        r = roles.get(p.name)
        if not p.named or r is None or r.writer is None:
            continue
        for _ in r.groups:
            if named_barrier_id(k, len(prog.partitions)) is None:
                ctx.error(p.loc, too_many_named(p.name, len(prog.partitions)), "named-budget")
                return
            k += 1


def _check_scopes(ctx: PassContext, body: tuple[Stmt, ...], scope: set[str]) -> None:
    def need(names: frozenset[str], loc) -> None:
        for n in sorted(names - scope):
            ctx.error(loc, f"'{n}' is neither a loop variable in scope nor a param of the kernel", "unknown-name")

    for s in body:
        if isinstance(s, (Event, Access)):
            need(s.index.variables, s.loc)
        elif isinstance(s, For):
            need(s.start.variables | s.stop.variables, s.loc)
            if s.var in scope:
                ctx.error(s.loc, f"loop variable '{s.var}' shadows a param or an enclosing loop variable", "shadowing")
            if s.step == 0:
                ctx.error(s.loc, "loop step must not be zero", "bad-step")
            _check_scopes(ctx, s.body, scope | {s.var})
        elif isinstance(s, If):
            need(s.cond.variables, s.loc)
            _check_scopes(ctx, s.then, scope)
            _check_scopes(ctx, s.orelse, scope)


def _check_events(ctx: PassContext, body: tuple[Stmt, ...]) -> None:
    prog = ctx.program
    for ev in walk_events(body):
        p = prog.pipe(ev.pipe)
        if p is None:
            ctx.error(ev.loc, f"unknown pipe '{ev.pipe}'", "unknown-pipe")
            continue
        if ev.is_writer:
            if ev.reader is not None or ev.fields is not None:
                ctx.error(ev.loc, f"{ev.verb} is a writer operation: it takes no reader name or field view",
                          "writer-with-reader")
            continue
        if p.readers and ev.reader is None:
            ctx.error(ev.loc, f"pipe '{p.name}' has readers ({', '.join(p.readers)}): say which one "
                      f"{ev.verb}s, e.g. {p.name}[{p.readers[0]}].{ev.verb}(...)", "missing-reader")
        elif p.readers and ev.reader not in p.readers:
            ctx.error(ev.loc, f"'{ev.reader}' is not a declared reader of pipe '{p.name}' "
                      f"(readers: {', '.join(p.readers)})", "undeclared-reader")
        elif not p.readers and ev.reader is not None:
            ctx.error(ev.loc, f"pipe '{p.name}' declares no readers (single consumer); declare "
                      f"readers=({ev.reader}, ...) to name them", "undeclared-reader")
        if ev.fields is not None:
            bad = [f for f in ev.fields if f not in p.fields]
            if bad:
                ctx.error(ev.loc, f"field view names '{bad[0]}', which pipe '{p.name}' does not have "
                          f"(fields: {', '.join(p.fields)})", "unknown-field")
            elif not ev.fields:
                ctx.error(ev.loc, "a field view must name at least one field", "empty-view")


def _check_accesses(ctx: PassContext) -> None:
    """Slot accesses name a field of a declared pipe, come from the partition that holds that
    pipe's end (its writer, or the reader's partition) and, for a reader, a field of its view."""
    prog = ctx.program
    roles = ctx.roles()
    for part in prog.partitions:
        for a in walk_accesses(part.body):
            p = prog.pipe(a.pipe)
            if p is None:
                ctx.error(a.loc, f"unknown pipe '{a.pipe}'", "unknown-pipe")
                continue
            flag = a.field == CLOSED_FLAG  # the closed flag: every reader sees it, none writes it
            if flag and a.side == "writer":
                ctx.error(a.loc, f"write to {p.name}.{a.field}: the closed flag is set by close() "
                          f"and cleared by acquire(), never written as a field", "unknown-field")
                continue
            if a.field not in p.fields and not flag:
                ctx.error(a.loc, f"pipe '{p.name}' has no field '{a.field}' (fields: "
                          f"{', '.join(p.fields) or 'none'})", "unknown-field")
                continue
            r = roles[p.name]
            if a.side == "writer":
                if r.writer is not None and r.writer != part.name:
                    what = "write to" if a.is_write else "read of"
                    ctx.error(a.loc, f"{what} {p.name}.{a.field} in partition '{part.name}', but "
                              f"pipe '{p.name}' is written by partition '{r.writer}'",
                              "access-wrong-partition")
                continue
            name = a.reader or ""
            if p.readers and name not in p.readers:
                ctx.error(a.loc, f"read of {p.name}.{a.field} by '{name}', which is not a declared "
                          f"reader of pipe '{p.name}' (readers: {', '.join(p.readers)})",
                          "undeclared-reader")
                continue
            if not p.readers and name:
                ctx.error(a.loc, f"pipe '{p.name}' declares no readers: its read takes no reader "
                          f"name", "undeclared-reader")
                continue
            owner = r.readers.get(name)
            if owner is not None and owner != part.name:
                who = f"reader '{name}'" if name else "the reader"
                ctx.error(a.loc, f"read of {p.name}.{a.field} in partition '{part.name}', but "
                          f"{who} of pipe '{p.name}' is partition '{owner}'",
                          "access-wrong-partition")
            elif not flag and a.field not in r.views.get(name, p.fields):
                who = f"reader '{name}'" if name else "the reader"
                ctx.error(a.loc, f"{who} of pipe '{p.name}' sees only ({', '.join(r.views[name])}):"
                          f" its read of '{a.field}' is outside its view", "access-outside-view")


@record
class VerifyProtocol:
    """Structural and per-instance protocol rules of docs/semantics.md (rules 1–7): pairing,
    one-shot use, phases, consumption, and slot accesses inside their windows."""

    name: str = "verify-protocol"

    def apply(self, ctx: PassContext) -> None:
        check_structure(ctx)
        if ctx.ok:
            _check_accesses(ctx)
        if ctx.ok:
            check_tma_windows(ctx)
        if ctx.ok:
            sweep(ctx).report_protocol(ctx)
        else:
            ctx.structure_failed = True
