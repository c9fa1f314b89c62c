"""Who plays which role on each pipe: the writer partition, each reader's partition and field view,
and the field groups (fields partitioned by the set of readers that see them).

This is an analysis, not a pass: the protocol verifier reports what is inconsistent here, and the
later passes use the resolved roles of programs that passed it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..ir.nodes import Event, Loc, Pipe, Program, walk_events
from ..ir.record import record


@record
class FieldGroup:
    """Fields seen by exactly the same readers share one full and one empty barrier per stage."""

    index: int
    fields: tuple[str, ...]
    readers: tuple[str, ...]  # reader names ("" for the implicit SPSC reader)


@dataclass
class PipeRoles:
    pipe: Pipe
    writer: Optional[str] = None  # partition name
    writer_loc: Optional[Loc] = None
    readers: dict[str, str] = field(default_factory=dict)  # reader name -> partition
    reader_locs: dict[str, Loc] = field(default_factory=dict)
    views: dict[str, tuple[str, ...]] = field(default_factory=dict)  # reader name -> field view
    groups: list[FieldGroup] = field(default_factory=list)
    problems: list[tuple[Loc, str, str]] = field(default_factory=list)  # (loc, message, check)

    def groups_of(self, reader: str) -> list[FieldGroup]:
        return [g for g in self.groups if reader in g.readers]


def reader_name(event: Event, pipe: Pipe) -> str:
    """The reader an event speaks for: its written name, or "" on an SPSC pipe."""
    return event.reader if event.reader is not None else ""


def resolve_roles(program: Program) -> dict[str, PipeRoles]:
    roles = {p.name: PipeRoles(p) for p in program.pipes}
    for part in program.partitions:
        for ev in walk_events(part.body):
            r = roles.get(ev.pipe)
            if r is None:
                continue  # unknown pipe: reported by the protocol verifier
            if ev.is_writer:
                if r.writer is None:
                    r.writer, r.writer_loc = part.name, ev.loc
                elif r.writer != part.name:
                    r.problems.append((ev.loc, f"pipe '{ev.pipe}' is written from partitions "
                                       f"'{r.writer}' and '{part.name}': a pipe has one producer",
                                       "two-writers"))
                continue
            name = reader_name(ev, r.pipe)
            if name not in r.readers:
                r.readers[name], r.reader_locs[name] = part.name, ev.loc
            elif r.readers[name] != part.name:
                who = f"reader '{name}'" if name else "the reader"
                hint = "" if name else "; declare readers=(...) for several consumers"
                r.problems.append((ev.loc, f"{who} of pipe '{ev.pipe}' appears in partitions "
                                   f"'{r.readers[name]}' and '{part.name}'{hint}", "reader-in-two-partitions"))
            if ev.fields is not None:
                prev = r.views.get(name)
                if prev is not None and set(prev) != set(ev.fields):
                    r.problems.append((ev.loc, f"reader '{name or ev.pipe}' of pipe '{ev.pipe}' uses field "
                                       f"views ({', '.join(prev)}) and ({', '.join(ev.fields)})",
                                       "inconsistent-view"))
                elif prev is None:
                    r.views[name] = tuple(f for f in r.pipe.fields if f in ev.fields) or ev.fields
    for r in roles.values():
        for name in r.pipe.reader_names:
            r.views.setdefault(name, r.pipe.fields)
        r.groups = _field_groups(r)
    return roles


def _field_groups(r: PipeRoles) -> list[FieldGroup]:
    by_readers: dict[tuple[str, ...], list[str]] = {}
    names = r.pipe.reader_names
    for f in r.pipe.fields:
        seen_by = tuple(n for n in names if f in r.views.get(n, ()))
        if seen_by:
            by_readers.setdefault(seen_by, []).append(f)
    if not r.pipe.fields:
        # A pure synchronisation pipe (no payload) still needs its barriers.
        by_readers[tuple(names)] = []
    return [FieldGroup(i, tuple(fs), rs) for i, (rs, fs) in enumerate(by_readers.items())]
