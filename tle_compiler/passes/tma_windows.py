"""The structural rule of TMA copies into pipe slots (part of verify-protocol, docs/semantics.md).

A commit of a pipe whose writer fills fields by TMA copies (``PIPE.tma(i, f, BYTES)``,
``tle.gpu.tma_load``) arrives on the full barrier with an expect-tx of the bytes its window's
copies bring, a number fixed when the kernel is compiled. So the copies of every window must be
known statically:

1. every TMA copy stands at the top level of a block between ``acquire(e)`` and ``commit(e)`` of
   that same block (same index expression ``e``), not inside a loop or an ``if`` of the window;
2. every such ``commit(e)`` closes a window that copies each TMA-filled field of the pipe exactly
   once, and a commit of the pipe has its ``acquire`` in its block (a close copies nothing: its
   expect-tx is 0);
3. the writer touches a TMA-filled field only through TMA copies: a store or a load of it would
   race with the copy, which lands asynchronously and is complete only at the readers' wait;
4. every copy into one field moves the same bytes (the expect-tx is one number per field).

Each window then brings exactly the field's bytes, so the barrier's tx-count is right for every
param value the dynamic checks cover (they check, as for any write, that the copy lies inside
its window: rule 7).
"""

from __future__ import annotations

from typing import Optional

from ..ir.nodes import Access, Event, For, If, Stmt, walk_accesses
from .context import PassContext
from .infer_barriers import tma_fields


def check_tma_windows(ctx: PassContext) -> None:
    prog = ctx.program
    tma = tma_fields(prog)
    if not tma:
        return
    for pipe in prog.pipes:
        if pipe.named and pipe.name in tma:
            # the hand-off is a hardware named barrier, which no copy's bytes complete: the
            # readers' wait would return before the copy landed
            loc = min((a.loc for part in prog.partitions for a in walk_accesses(part.body)
                       if a.tma and a.pipe == pipe.name), key=lambda loc: loc.line)
            ctx.error(loc, f"a TMA copy into pipe '{pipe.name}', which has barrier=\"named\": its "
                      f"hand-off is a hardware named barrier, which cannot track a TMA copy's bytes "
                      f"(an mbarrier's expect-tx does), so its readers could read the slot "
                      f"before the copy lands; fill the slot with register stores, or use "
                      f"barrier=\"mbarrier\"", "tma-window")
    roles = ctx.roles()
    for pipe, filled in tma.items():
        r = roles.get(pipe)
        if r is None or not r.readers:
            continue  # no reader at all: its commits are unconsumed (rule 6)
        for f in sorted(filled):
            if not any(f in v for v in r.views.values()):
                # the field belongs to no field group, so no full barrier counts its bytes:
                # the copy is still in flight at the readers' wait, at the next acquire of the
                # stage (whose copy races with it) and possibly when the CTA exits
                first = min((a.loc for part in prog.partitions for a in walk_accesses(part.body)
                             if a.tma and a.pipe == pipe and a.field == f),
                            key=lambda loc: loc.line)
                ctx.error(first, f"field '{f}' of pipe '{pipe}' is filled by this TMA copy but "
                          f"is read by no reader, so no full barrier tracks its copy: no "
                          f"reader's view contains it, so no expect-tx counts its bytes and "
                          f"nothing waits for the copy to land (the next acquire of the stage "
                          f"copies over it, and the CTA may exit with it in flight); add the "
                          f"field to a reader's fields=, or drop the copy", "tma-window")
    for part in prog.partitions:
        for a in walk_accesses(part.body):
            filled = tma.get(a.pipe, {})
            if a.side == "writer" and not a.tma and a.field in filled:
                first = _first_copy(prog, a.pipe, a.field)
                ctx.error(a.loc, f"field '{a.field}' of pipe '{a.pipe}' is filled by TMA copies "
                          f"(line {first}): the writer may not store into it or load from it (the "
                          f"copy lands asynchronously; only the readers' wait sees it complete)",
                          "tma-field-access")
        _block(ctx, part.body, tma)
    _check_negative(ctx, prog)
    _check_bytes(ctx, prog, tma)


def _check_negative(ctx: PassContext, prog) -> None:
    """A copy of a negative number of bytes: the field's shape (a constexpr given a negative
    value, ``--param BN=-64``) has a negative dimension. No box has one; the expect-tx would be
    nonsense (the bytes of the other copies are compared against the largest, at least 0)."""
    for part in prog.partitions:
        for a in walk_accesses(part.body):
            if a.tma and a.nbytes < 0:
                ctx.error(a.loc, f"the TMA copy into {a.pipe}.{a.field} would move {a.nbytes} "
                          f"bytes: a dimension of field '{a.field}' of pipe '{a.pipe}' (its "
                          f"tle.gpu.alloc shape, after the pipe's capacity) is negative; every "
                          f"dimension of a TMA-filled field must be positive", "tma-window")


def _check_bytes(ctx: PassContext, prog, tma: dict[str, dict[str, int]]) -> None:
    """Every copy into one field moves the same bytes: the commit's expect-tx is one number per
    field (the largest copy's), so a window whose copy brings fewer bytes never completes its
    full barrier (its readers hang), and one bringing more completes it early."""
    for part in prog.partitions:
        for a in walk_accesses(part.body):
            want = tma.get(a.pipe, {}).get(a.field)
            if a.tma and want is not None and a.nbytes != want and a.nbytes >= 0:
                # (a negative size is _check_negative's: the largest, ``want``, is at least 0,
                # so no copy may move it when the others are negative)
                other = min(c.loc.line for p in prog.partitions for c in walk_accesses(p.body)
                            if c.tma and c.pipe == a.pipe and c.field == a.field
                            and c.nbytes == want)
                if a.nbytes == 0:  # the IR's "unknown" (a .pipe `P.tma(i, f)`): no count
                    ctx.error(a.loc, f"the TMA copy into {a.pipe}.{a.field} states no byte "
                              f"count, the copy at line {other} {want}: every commit's "
                              f"expect-tx counts {want} bytes for the field, which this copy "
                              f"is not known to move; state its bytes", "tma-window")
                    continue
                ctx.error(a.loc, f"the TMA copy into {a.pipe}.{a.field} moves {a.nbytes} bytes, "
                          f"the copy at line {other} {want}: every commit's expect-tx counts "
                          f"{want} bytes for the field, so this window's full barrier would "
                          f"never complete", "tma-window")


def _first_copy(prog, pipe: str, field: str) -> int:
    return min(a.loc.line for p in prog.partitions for a in walk_accesses(p.body)
               if a.tma and a.pipe == pipe and a.field == field)


def _block(ctx: PassContext, body: tuple[Stmt, ...], tma: dict[str, dict[str, int]]) -> None:
    """The windows of one statement list, pipe by pipe; nested blocks on their own. A writer may
    hold several windows of one pipe open at once (``acquire(2 * t)``, ``acquire(2 * t + 1)``,
    a copy into each, both commits: two stages), so each open window is keyed by its index
    expression, and a copy or a commit belongs to the window of its own index. A commit with no
    open acquire of its index expression in the block is an error: its window's copies cannot
    be counted here."""
    # (pipe, index) -> (its open acquire, the TMA copies into its slot seen since)
    open_: dict[tuple, tuple[Event, list[Access]]] = {}
    for s in body:
        if isinstance(s, For):
            _block(ctx, s.body, tma)
        elif isinstance(s, If):
            _block(ctx, s.then, tma)
            _block(ctx, s.orelse, tma)
        elif isinstance(s, Access):
            if not s.tma:
                continue
            win = open_.get((s.pipe, s.index))
            if win is None:
                ctx.error(s.loc, f"the TMA copy into {s.pipe}.{s.field} (index {s.index}) must "
                          f"stand between {s.pipe}.acquire({s.index}) and "
                          f"{s.pipe}.commit({s.index}) in the same block, not inside a loop or an "
                          f"`if` of the window: the commit's expect-tx counts the copies of its "
                          f"window", "tma-window")
                continue
            win[1].append(s)
        elif isinstance(s, Event) and s.is_writer and s.pipe in tma:
            key = (s.pipe, s.index)
            if s.verb == "acquire":
                open_[key] = (s, [])
            elif s.verb == "close":
                open_.pop(key, None)
            else:
                # a commit of another index than every open acquire of the block (a look-ahead
                # producer's `commit(i)` after `acquire(i + 1)`, or `commit(N + K)` after
                # `acquire(N)`) closes a window this rule cannot count the copies of: refused
                # as rule 9 words it (the commit and its acquire in one statement list). (An
                # acquire whose commit is elsewhere needs no error of its own: that commit has
                # no open window in its block, or there is none, a pairing fault.)
                _commit(ctx, s, open_.pop(key, None), tma[s.pipe])


def _commit(ctx: PassContext, commit: Event, win, filled: dict[str, int]) -> None:
    fields = ", ".join(sorted(filled))
    if win is None:
        ctx.error(commit.loc, f"{commit.pipe}.commit({commit.index}) must be in the same block as "
                  f"its acquire, {commit.pipe}.acquire({commit.index}) (the same index "
                  f"expression): pipe '{commit.pipe}' fills ({fields}) by TMA copies, and each "
                  f"commit's expect-tx counts the copies between its acquire and itself",
                  "tma-window")
        return
    acquire, copies = win
    for f in sorted(filled):
        mine = [c for c in copies if c.field == f]
        if not mine:
            ctx.error(commit.loc, f"{commit.pipe}.commit({commit.index}) closes a window with no "
                      f"TMA copy into field '{f}', which other windows fill by TMA: its full "
                      f"barrier expects the field's bytes at every commit", "tma-window")
        elif len(mine) > 1:
            ctx.error(mine[1].loc, f"field '{f}' of pipe '{commit.pipe}' is copied twice in the "
                      f"window of {commit.pipe}.acquire({commit.index}) (lines {mine[0].loc.line} "
                      f"and {mine[1].loc.line}): one TMA copy per field and window",
                      "tma-window")
