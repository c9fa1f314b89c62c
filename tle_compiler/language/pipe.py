"""``tle.pipe``: a CTA-scope dataflow edge between warp-group partitions.

:func:`validate_pipe` and :func:`validate_reader` are the declaration rules. The runtime objects
below call them with Python values and the caller's line; the frontend calls them with the literal
values it reads from the kernel's AST and the AST node's line, so a misuse reads the same either way.

At Python runtime the handles do not synchronise anything (kernels run only once compiled); they
check their arguments and hand out the per-stage views of the fields.
"""

from __future__ import annotations

import linecache
import re
from typing import Mapping, Optional

from ..diagnostics import TleError
from ..ir.kernel import named_pipe_error, slot_shape_error
from ..ir.nodes import Loc
from ..ir.record import record
from .gpu import SharedBuffer, Unevaluated, caller_loc, describe

SCOPES = ("cta",)


#: The hand-off mechanisms of a pipe (``tle.pipe(barrier=...)``).
BARRIERS = ("mbarrier", "named")


@record
class PipeDecl:
    """A checked pipe declaration. ``readers == ()``: single-producer single-consumer."""

    name: str
    capacity: int
    scope: str
    readers: tuple[str, ...]
    one_shot: bool
    fields: tuple[tuple[str, SharedBuffer], ...]
    loc: Loc = Loc(None, 0)
    #: barrier="named": the hand-off is a hardware named barrier and the release is left out
    #: (docs/semantics.md, "Named-barrier pipes")
    named: bool = False

    @property
    def field_names(self) -> tuple[str, ...]:
        return tuple(f for f, _ in self.fields)

    @property
    def is_spmc(self) -> bool:
        return bool(self.readers)

    def field(self, name: str) -> SharedBuffer:
        return dict(self.fields)[name]


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def validate_pipe(*, capacity: object, scope: object = "cta", name: object = None,
                  readers: object = (), one_shot: object = False,
                  fields: Mapping[str, object], loc: Loc,
                  arg_locs: Optional[Mapping[str, Loc]] = None,
                  barrier: object = "mbarrier") -> PipeDecl:
    """The rules of ``tle.pipe(...)``. ``loc`` is the declaration; ``arg_locs`` may give a finer
    location per argument (keyword name, or field name) and is used for that argument's errors.
    Values the frontend could not read as literals come as :class:`Unevaluated`."""
    arg_locs = arg_locs or {}

    def err(msg: str, arg: str) -> TleError:
        return TleError(msg, arg_locs.get(arg, loc), check="bad-pipe")

    if not isinstance(name, str) or not name.isidentifier():
        raise err(f"pipe name must be an identifier string, got {describe(name)}", "name")
    what = f"pipe '{name}'"
    if not _is_int(capacity) or capacity < 1:
        raise err(f"{what}: capacity must be an integer >= 1 (a literal, a module-level "
                  f"constant or an expression of the kernel's constexpr parameters), got "
                  f"{describe(capacity)}", "capacity")
    if scope not in SCOPES:
        raise err(f"{what}: scope must be \"cta\" (the only scope of this version), got "
                  f"{describe(scope)}", "scope")
    if not isinstance(readers, tuple):
        raise err(f"{what}: readers must be a tuple of reader names, e.g. readers=(\"left\", "
                  f"\"right\"), got {describe(readers)}", "readers")
    for r in readers:
        if not isinstance(r, str) or not r.isidentifier():
            raise err(f"{what}: reader names must be identifier strings, got {describe(r)}",
                      "readers")
    dup = sorted({r for r in readers if readers.count(r) > 1})
    if dup:
        raise err(f"{what}: reader '{dup[0]}' is declared twice", "readers")
    if not isinstance(one_shot, bool):
        raise err(f"{what}: one_shot must be True or False, got {describe(one_shot)}", "one_shot")
    if one_shot and capacity != 1:
        raise err(f"{what}: a one_shot pipe is a single hand-off and must have capacity=1, got "
                  f"capacity={capacity}", "capacity" if "capacity" in arg_locs else "one_shot")
    if barrier not in BARRIERS:
        raise err(f"{what}: barrier must be \"mbarrier\" (the default) or \"named\", got "
                  f"{describe(barrier)}", "barrier")
    named = barrier == "named"
    if named and named_pipe_error(name, capacity, readers, one_shot):
        raise err(named_pipe_error(name, capacity, readers, one_shot), "barrier")
    if not fields:
        raise err(f"{what} has no fields: declare at least one shared buffer, e.g. "
                  f"x=tle.gpu.alloc([{capacity}, 64], tl.bfloat16)", "fields")
    out: list[tuple[str, SharedBuffer]] = []
    for fname, buf in fields.items():
        if not isinstance(buf, SharedBuffer):
            raise err(f"{what}: field '{fname}' must be a tle.gpu.alloc(...) buffer, got "
                      f"{describe(buf)}", fname)
        lead = buf.shape[0]
        if lead != capacity:
            hint = (" (a one_shot pipe has one stage: write [1, ...])" if one_shot else "")
            raise err(slot_shape_error(name, fname, capacity, buf.shape) + hint, fname)
        out.append((fname, buf))
    return PipeDecl(name, capacity, scope, readers, one_shot, tuple(out), loc, named)


def validate_reader(decl: PipeDecl, name: object, fields: object, loc: Loc
                    ) -> tuple[Optional[str], Optional[tuple[str, ...]]]:
    """The rules of ``pipe.reader(name, fields=...)``: returns (reader name or None for SPSC,
    field view in declaration order or None for all fields)."""
    what = f"pipe '{decl.name}'"
    if decl.is_spmc:
        if name is None:
            raise TleError(f"{what} has readers {decl.readers}: reader() needs one of these names",
                           loc, check="undeclared-reader")
        if not isinstance(name, str) or name not in decl.readers:
            raise TleError(f"{what}: reader {describe(name)} is not declared (declared readers: "
                           f"{', '.join(decl.readers)})", loc, check="undeclared-reader")
    elif name is not None:
        raise TleError(f"{what} is single-consumer (no readers=...): reader() takes no name, got "
                       f"{describe(name)}; declare readers=({describe(name)},) to name it", loc,
                       check="undeclared-reader")
    if fields is None:
        return name, None
    if isinstance(fields, str) or not isinstance(fields, (tuple, list)):
        raise TleError(f"{what}: fields= must be a tuple of field names, e.g. fields=(\"a\",), got "
                       f"{describe(fields)}", loc, check="bad-view")
    if not fields:
        raise TleError(f"{what}: fields= is empty: a reader must see at least one field", loc,
                       check="bad-view")
    for f in fields:
        if not isinstance(f, str) or f not in decl.field_names:
            raise TleError(f"{what} has no field {describe(f)} (fields: "
                           f"{', '.join(decl.field_names)})", loc, check="bad-view")
    if len(set(fields)) != len(fields):
        raise TleError(f"{what}: fields= names a field twice: {describe(tuple(fields))}", loc,
                       check="bad-view")
    return name, tuple(f for f in decl.field_names if f in fields)


# ---------------------------------------------------------------------------------------------
# Runtime objects


class Slot:
    """One stage of a pipe: an attribute per visible field, each the per-stage buffer view."""

    def __init__(self, pipe: "Pipe", index: int, fields: tuple[str, ...]):
        self._pipe = pipe
        self._index = index
        self._stage = index % pipe.capacity
        self._fields = fields
        for f in fields:
            setattr(self, f, pipe.decl.field(f).index(self._stage))

    def __getattr__(self, name: str) -> object:  # only called for missing attributes
        if name.startswith("_"):
            raise AttributeError(name)
        raise AttributeError(f"pipe '{self._pipe.name}' slot has no field '{name}' (visible: "
                             f"{', '.join(self._fields)})")

    def __repr__(self) -> str:
        return f"Slot({self._pipe.name}, index={self._index}, stage={self._stage})"


@record
class WaitResult:
    """What ``reader.wait(i)`` returns: the slot and whether the writer closed the stream there."""

    slot: Slot
    is_closed: bool = False


def _check_index(i: object, what: str) -> int:
    if not _is_int(i) or i < 0:
        raise TleError(f"{what}: the iteration index must be an integer >= 0, got {describe(i)}",
                       caller_loc(2), check="bad-index")
    return i


class Writer:
    """The producing end of a pipe: ``acquire(i)`` (returns the slot), ``commit(i)``, ``close(i)``."""

    def __init__(self, pipe: "Pipe"):
        self.pipe = pipe

    def acquire(self, i: int) -> Slot:
        return Slot(self.pipe, _check_index(i, f"{self.pipe.name}.acquire"), self.pipe.field_names)

    def commit(self, i: int) -> None:
        _check_index(i, f"{self.pipe.name}.commit")

    def close(self, i: int) -> None:
        _check_index(i, f"{self.pipe.name}.close")

    def __repr__(self) -> str:
        return f"Writer({self.pipe.name})"


class Reader:
    """A consuming end of a pipe: ``wait(i)`` (returns a :class:`WaitResult`), ``release(i)``."""

    def __init__(self, pipe: "Pipe", name: Optional[str], fields: Optional[tuple[str, ...]]):
        self.pipe = pipe
        self.name = name
        self.fields = fields

    def wait(self, i: int) -> WaitResult:
        i = _check_index(i, f"{self.pipe.name}.wait")
        return WaitResult(Slot(self.pipe, i, self.fields or self.pipe.field_names), False)

    def release(self, i: int) -> None:
        _check_index(i, f"{self.pipe.name}.release")

    def __repr__(self) -> str:
        view = f", fields={self.fields}" if self.fields else ""
        return f"Reader({self.pipe.name}, {self.name!r}{view})"


class Pipe:
    """A declared pipe (see :func:`pipe`)."""

    def __init__(self, decl: PipeDecl):
        self.decl = decl

    name = property(lambda self: self.decl.name)
    capacity = property(lambda self: self.decl.capacity)
    scope = property(lambda self: self.decl.scope)
    readers = property(lambda self: self.decl.readers)
    one_shot = property(lambda self: self.decl.one_shot)
    named = property(lambda self: self.decl.named)
    field_names = property(lambda self: self.decl.field_names)
    is_spmc = property(lambda self: self.decl.is_spmc)

    @property
    def fields(self) -> dict[str, SharedBuffer]:
        return dict(self.decl.fields)

    def writer(self) -> Writer:
        return Writer(self)

    def reader(self, name: Optional[str] = None, fields: object = None) -> Reader:
        rname, view = validate_reader(self.decl, name, fields, caller_loc())
        return Reader(self, rname, view)

    def __repr__(self) -> str:
        return (f"Pipe({self.name}, capacity={self.capacity}, readers={self.readers}, "
                f"fields={self.field_names}{', one_shot' if self.one_shot else ''})")


_ASSIGN = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?::[^=()]*)?=(?!=)")


def _assigned_name(loc: Loc) -> Optional[str]:
    """``x`` when the caller's line reads ``x = tle.pipe(...``, else None."""
    if not loc.file:
        return None
    m = _ASSIGN.match(linecache.getline(loc.file, loc.line))
    return m.group(1) if m else None


def pipe(*args: object, capacity: object = None, scope: object = "cta", name: object = None,
         readers: object = (), one_shot: object = False, barrier: object = "mbarrier",
         **fields: object) -> Pipe:
    """Declare a pipe: ``tle.pipe(capacity=C, scope="cta", name=None, readers=(), one_shot=False,
    barrier="mbarrier", **fields)``; each field a ``tle.gpu.alloc([C, ...], dtype)``. ``name``
    defaults to the variable the pipe is assigned to. ``barrier="named"``: a capacity-1 pipe from
    one partition to one reader whose slot the writer fills with register stores, handed over by a
    hardware named barrier with no empty handshake; the verifier must prove every release implied
    by the other pipes' hand-offs (docs/semantics.md, "Named-barrier pipes")."""
    loc = caller_loc()
    if args:
        raise TleError("tle.pipe takes keyword arguments only: tle.pipe(capacity=C, ..., "
                       "field=tle.gpu.alloc(...))", loc, check="bad-pipe")
    if capacity is None:
        raise TleError("tle.pipe: capacity= is required", loc, check="bad-pipe")
    if name is None:
        name = _assigned_name(loc) or "pipe"
    return Pipe(validate_pipe(capacity=capacity, scope=scope, name=name, readers=readers,
                              one_shot=one_shot, fields=fields, loc=loc, barrier=barrier))


__all__ = ["PipeDecl", "Pipe", "Writer", "Reader", "Slot", "WaitResult", "pipe", "validate_pipe",
           "validate_reader", "Unevaluated"]
