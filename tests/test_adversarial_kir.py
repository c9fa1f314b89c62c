"""Adversarial .kir inputs: a kernel in the kernel IR's text form handed to plain ``tle-dump``.

(1) Hand edits of printed kernels (``tle-dump -p verify-protocol --print-ir`` of the bundled
examples) the way an adversary would make them: each edit that makes the protocol unsafe is
rejected (exit 1) with an error naming the problem; each edit that keeps it safe (a renaming, a
reordering of independent declarations, whitespace and comments) keeps the verdict and the
barrier table. (2) Malformed text is unusable input (exit 2): one ``PATH:LINE[:COL]: error:``
line, never a traceback. (3) Hypothesis mutates printed kernels and holds every verified mutant
(exit 0) to an independent oracle.

The oracle (:func:`oracle_faults`) does not use the protocol view the verifier reads
(passes/kir_module.protocol_view, the frontend's derivation): it interprets the parsed KIR
itself at small param values (loops, ifs, locals, partition bindings, ``tle.assume``), records
each partition's pipe events and slot-field accesses, and runs them in every interleaving
against a model of the hardware: per field group and stage a ``full`` and an ``empty``
mbarrier (a phase counter and pending arrivals, a wait at parity p passing once the phase of
parity p completed), each slot field holding the index whose data was written last. A fault is
a state where some partition can never move again (a deadlock), a read of a field holding
another index's data (a stale read, a read of an unwritten field, a wait that passed too early),
or a write of a stage some reader holds. These are hazards on the GPU; the verifier is stricter
(it also refuses commits nobody waits), so the oracle is only asked to find no fault where the
verifier says "verified".

What this round found, each pinned below: an integer literal of more than 4300 digits, and an
expression nested a few hundred deep, crashed the reader (ValueError, RecursionError); an index
such as ``t + (1 << 99999999999)`` made the frontend compute a 12-GB integer (minutes, then
out of memory), and ``t + A * B`` with two 3000-digit literals a traceback when its message was
written; ``kernel k(N, N)`` (a param declared twice, which Python refuses) and a file of two
kernels of one name were verified; an identifier Python reads as another (``ℕ`` is ``N``) was a
name of its own; a ``--param`` value of 5000 digits crashed tle-dump; an empty .kir file was
called a file with "no @tle.jit kernel". A release in a subscript's index (``acc[r.release(t)]``)
or in a loop option was not read by the protocol view, so a second release of a slot was
verified (exit 0; on the GPU an extra arrival on its empty barrier) and ``-p emit-gluon`` stopped
with a traceback; a commit used as a loop bound, or a release compared, was verified where the
frontend refuses the same Python (bad-event). A verdict attribute the file carried (a .kir
printed after verification, then edited) was printed again by ``-p infer-barriers --print-ir``.
A kernel of 100,000 statements (1 MB) took eight minutes to check, the time growing with the
square of its statements: a kernel file holds at most 4,000,000 characters and a kernel in it
5,000 statements. Fifty pipes of 14,000 stages, each within verify-protocol's bound on one pipe,
took three minutes to verify; their mbarriers together are refused (bad-capacity).
"""

from __future__ import annotations

import contextlib
import functools
import io
import itertools
import re
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import pytest
from hypothesis import HealthCheck, given, note, settings, strategies as st

from tle_compiler.cli.dump import main
from tle_compiler.ir import kernel as K
from tle_compiler.ir.kernel_text import (MAX_DEPTH, MAX_FILE_CHARS, MAX_STATEMENTS,
                                         parse_kernel_file)

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "tle_kernels" / "examples"
SEEDS = {name: EXAMPLES / f"{name}.py" for name in ("ring", "spmc", "chain")}
SEEDS["close"] = ROOT / "tle_kernels" / "gpu_tests" / "close.py"
SEEDS["one_shot"] = ROOT / "tle_kernels" / "gpu_tests" / "one_shot.py"
ERROR_LINE = re.compile(r"^\S+:\d+(:\d+)?: error: ")


def dump(argv: list[str]) -> tuple[int, str, str]:
    """tle-dump in process: exit status, stdout, stderr; an exception escaping fails the test."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except BaseException:  # noqa: BLE001 - main returns its status, it never raises
            pytest.fail(f"tle-dump {' '.join(argv)} raised:\n{traceback.format_exc()}")
    return code, out.getvalue(), err.getvalue()


@functools.cache
def printed(seed: str) -> str:
    """The seed kernel as tle-dump prints it, without location comments (they count the nodes
    of their line, so an edited line would carry a wrong one)."""
    code, out, err = dump(["-p", "verify-protocol", "--print-ir", str(SEEDS[seed])])
    assert code == 0, err
    return "\n".join(re.sub(r"  # .*", "", ln) for ln in out.splitlines()) + "\n"


def barrier_rows(out: str) -> list[str]:
    return [ln for ln in out.splitlines() if re.match(r"#   \w+\.(full|empty|named)", ln)]


def verdict_line(out: str) -> str:
    lines = [ln for ln in out.splitlines() if ln.startswith("# verdict:")]
    return lines[0] if lines else ""


# -- the oracle: the KIR interpreted, its traces run on modelled mbarriers -----------------------


class TooLong(Exception):
    """A trace longer than the oracle runs (:data:`MAX_EVENTS`): this value is skipped."""


class Unknown(Exception):
    """The oracle cannot decide this kernel (a data-dependent condition around events, a
    construct it does not model): it claims nothing."""


UNK = object()  # a value known only from data


@dataclass(frozen=True)
class Slot:
    pipe: str
    index: int
    reader: Optional[str]  # None: the writer's slot


@dataclass(frozen=True)
class Result:
    slot: Slot


@dataclass(frozen=True)
class FieldRef:
    pipe: str
    field: str
    index: int
    writer: bool


def _c_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


BIN = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
       "&": lambda a, b: a & b, "|": lambda a, b: a | b, "^": lambda a, b: a ^ b,
       "<<": lambda a, b: a << b, ">>": lambda a, b: a >> b}
CMP = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
       "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}
MAX_EVENTS = 120


class _Return(Exception):
    pass


class Interp:
    """One partition (or the prologue) run at concrete param values: its trace of
    ``(kind, pipe, reader, index, field)`` items."""

    def __init__(self, kernel: K.Kernel):
        self.k = kernel
        self.trace: list[tuple] = []

    # a value is (python value or UNK, known at compile time)
    def ev(self, e, env: dict):
        if isinstance(e, (K.Const, K.Global)):
            return e.value, True
        if isinstance(e, K.Name):
            return env.get(e.id, (UNK, False))
        if isinstance(e, K.BinOp):
            (a, ca), (b, cb) = self.ev(e.lhs, env), self.ev(e.rhs, env)
            if not all(type(v) is int for v in (a, b)):
                return UNK, False
            if e.op in ("//", "%"):
                if b == 0:
                    raise Unknown("division by zero")
                if ca and cb:  # folded as Python does
                    return (a // b if e.op == "//" else a % b), True
                q = _c_div(a, b)  # the GPU's integer division truncates
                return (q if e.op == "//" else a - q * b), False
            if e.op in BIN and not (e.op in ("<<", ">>") and b < 0):
                return BIN[e.op](a, b), ca and cb
            return UNK, False
        if isinstance(e, K.UnaryOp):
            a, c = self.ev(e.operand, env)
            if e.op == "not":
                return (UNK if a is UNK else not a), c
            if type(a) is not int:
                return UNK, False
            return {"-": -a, "+": a, "~": ~a}[e.op], c
        if isinstance(e, K.Compare):
            (a, ca), (b, cb) = self.ev(e.lhs, env), self.ev(e.rhs, env)
            if a is UNK or b is UNK or type(a) not in (int, bool) or type(b) not in (int, bool):
                return UNK, False
            return CMP[e.op](a, b), ca and cb
        if isinstance(e, K.BoolOp):
            vals = [self.ev(x, env) for x in e.items]  # events in both operands run (no events)
            if any(v is UNK for v, _ in vals):
                return UNK, False
            pick = all if e.op == "and" else any
            return pick(bool(v) for v, _ in vals), all(c for _, c in vals)
        if isinstance(e, K.Event):
            return self.event(e, env)
        if isinstance(e, K.ResultSlot):
            r, _ = self.ev(e.result, env)
            if not isinstance(r, Result):
                raise Unknown("a result slot of no wait")
            return r.slot, False
        if isinstance(e, K.IsClosed):
            self.ev(e.result, env)
            return UNK, False
        if isinstance(e, K.SlotField):
            s, _ = self.ev(e.slot, env)
            if not isinstance(s, Slot):
                raise Unknown("a slot field of no slot")
            return FieldRef(s.pipe, e.field, s.index, s.reader is None), False
        if isinstance(e, K.Subscript):
            v, _ = self.ev(e.value, env)
            for entry in e.index:  # an index entry runs too (events in one included)
                if not isinstance(entry, (str, int, type(None))):
                    self.ev(entry, env)
            return (v, False) if isinstance(v, FieldRef) else (UNK, False)
        if isinstance(e, K.Op):
            return self.op(e, env)
        if isinstance(e, K.TupleExpr):
            for x in e.items:
                self.ev(x, env)
            return UNK, False
        return UNK, False  # handles, pipes, buffers, dtypes

    def op(self, e: K.Op, env: dict):
        args = [self.ev(a, env) for a in e.args]
        kwargs = {n: self.ev(v, env) for n, v in e.kwargs}
        if e.name == "tle.gpu.local_ptr":
            return args[0][0] if args and isinstance(args[0][0], FieldRef) else UNK, False
        writes = "store" in e.name or "tma_load" in e.name or "async_copy" in e.name
        for i, (v, _) in enumerate([*args, *kwargs.values()]):
            if isinstance(v, FieldRef):
                kind = "write" if writes and i == 0 else "read"
                if (kind == "write") != v.writer and kind == "write":
                    raise Unknown("a reader writes a slot")
                self.emit(kind, v.pipe, None, v.index, v.field)
        vals = [v for v, _ in args]
        const = all(c for _, c in args)
        if e.name == "tl.cdiv" and len(vals) == 2 and all(type(v) is int for v in vals):
            if vals[1] == 0:
                raise Unknown("division by zero")
            return (-(-vals[0] // vals[1]) if const else
                    _c_div(vals[0] + vals[1] - 1, vals[1])), const
        if e.name in ("tl.minimum", "tl.maximum", "min", "max") and len(vals) == 2 and \
                all(type(v) is int for v in vals):
            return (min(vals) if "min" in e.name else max(vals)), const
        if e.name == "ifexp" and len(vals) == 3 and vals[0] is not UNK:
            return args[1] if vals[0] else args[2]
        if e.name == "tle.assume":
            if vals and vals[0] is not UNK and not vals[0]:
                raise _OutsideDomain()
            return UNK, False
        return UNK, False

    def event(self, e: K.Event, env: dict):
        i, _ = self.ev(e.index, env)
        if type(i) is not int:
            raise Unknown(f"an event index known only from data ({e.verb})")
        h = e.handle
        if h.side == "writer":
            kinds = {"acquire": ("acquire",), "commit": ("commit",), "close": ("acquire", "close")}
        else:
            kinds = {"wait": ("wait",), "release": ("release",)}
        if e.verb not in kinds:
            raise Unknown(f"{e.verb} on a {h.side}")
        for kind in kinds[e.verb]:
            self.emit(kind, h.pipe, h.reader, i, None)
        if e.verb == "acquire":
            return Slot(h.pipe, i, None), False
        if e.verb == "wait":
            return Result(Slot(h.pipe, i, h.reader or "")), False
        return UNK, False

    def emit(self, kind, pipe, reader, index, field):
        self.trace.append((kind, pipe, reader, index, field))
        if len(self.trace) > MAX_EVENTS:
            raise TooLong()

    def run(self, body, env: dict) -> dict:
        for s in body:
            if isinstance(s, K.Assign):
                env[s.target] = self.ev(s.value, env)
            elif isinstance(s, K.Eval):
                self.ev(s.value, env)
            elif isinstance(s, K.Return):
                if s.value is not None:
                    self.ev(s.value, env)
                raise _Return()
            elif isinstance(s, K.For):
                (a, ca), (b, cb), (c, cc) = (self.ev(x, env) for x in (s.start, s.stop, s.step))
                for _, o in s.options:
                    self.ev(o, env)
                if not all(type(v) is int for v in (a, b, c)) or c == 0:
                    if _touches_pipes(s.body):
                        raise Unknown("a loop bound known only from data")
                    _forget(s.body, env)
                    continue
                if len(range(a, b, c)) > MAX_EVENTS:
                    raise TooLong()
                for v in range(a, b, c):
                    env[s.var] = (v, ca and cb and cc and s.static)
                    self.run(s.body, env)
            elif isinstance(s, K.If):
                v, _ = self.ev(s.cond, env)
                if v is UNK or isinstance(v, (Slot, Result, FieldRef)):
                    if _touches_pipes(s.then) or _touches_pipes(s.orelse):
                        raise Unknown("events under a condition known only from data")
                    _forget(s.then, env)
                    _forget(s.orelse, env)
                    continue
                self.run(s.then if v else s.orelse, env)
            elif isinstance(s, K.While):
                if _touches_pipes(s.body):
                    raise Unknown("events in a while loop")
                self.ev(s.cond, env)
                _forget(s.body, env)
            else:
                raise Unknown(f"statement {type(s).__name__}")
        return env


class _OutsideDomain(Exception):
    """A tle.assume the param values break: not a value the kernel takes."""


def _touches_pipes(body) -> bool:
    for s in K.walk_stmts(body):
        for e in K.stmt_exprs(s):
            if any(isinstance(x, (K.Event, K.SlotField, K.ResultSlot)) for x in K.walk_expr(e)):
                return True
    return False


def _forget(body, env: dict) -> None:
    for s in K.walk_stmts(body):
        if isinstance(s, K.Assign):
            env[s.target] = (UNK, False)
        elif isinstance(s, K.For):
            env[s.var] = (UNK, False)


def traces(k: K.Kernel, values: dict) -> Optional[dict[str, list]]:
    """Each partition's trace at the param values (None: outside the domain tle.assume gives)."""
    env = {p.name: (values.get(p.name, UNK), p.constexpr and p.name in values)
           for p in k.params}
    top = Interp(k)
    try:
        top.run(k.prologue, env)
    except _OutsideDomain:
        return None
    except _Return:
        raise Unknown("a return in the prologue")
    if top.trace:
        raise Unknown("events in the prologue")
    out = {}
    for part in k.partitions:
        it = Interp(k)
        penv = {n: it.ev(e, env) for n, e in part.bindings}
        try:
            it.run(part.body, penv)
        except _Return:
            pass
        except _OutsideDomain:
            return None
        out[part.name] = it.trace
    return out


@dataclass(frozen=True)
class _Pipe:
    capacity: int
    readers: tuple  # (None,) for a single consumer
    groups: tuple  # per group: (fields, readers that see them)
    one_shot: bool


def _pipes(k: K.Kernel) -> dict[str, _Pipe]:
    out = {}
    for p in k.pipes:
        if p.named:
            raise Unknown("a named-barrier pipe")
        readers = tuple(p.readers) or (None,)
        views: dict = {r: None for r in readers}
        for part in k.partitions:
            for s in K.walk_stmts(part.body):
                for e in K.stmt_exprs(s):
                    for x in K.walk_expr(e):
                        if isinstance(x, K.Handle) and x.pipe == p.name and x.side == "reader" \
                                and x.view is not None:
                            views[x.reader] = tuple(x.view)
            for _, b in part.bindings:
                for x in K.walk_expr(b):
                    if isinstance(x, K.Handle) and x.pipe == p.name and x.view is not None:
                        views[x.reader] = tuple(x.view)
        fields = [f.name for f in p.fields] or ["<slot>"]
        by_readers: dict = {}
        for f in fields:
            who = tuple(r for r in readers if views.get(r) is None or f in views[r])
            by_readers.setdefault(who, []).append(f)
        groups = tuple((tuple(fs), who) for who, fs in by_readers.items())
        out[p.name] = _Pipe(p.capacity, readers, groups, p.one_shot)
    return out


MAX_STATES = 60_000


def run_model(k: K.Kernel, parts: dict[str, list]) -> list[str]:
    """Every interleaving of the traces on the modelled mbarriers: the faults found (at most one
    per kind)."""
    pipes = _pipes(k)
    names = list(parts)
    tr = [parts[n] for n in names]
    for t in tr:
        for kind, pipe, reader, index, field in t:
            if pipe not in pipes:
                raise Unknown("an event on an undeclared pipe")
            p = pipes[pipe]
            if kind in ("wait", "release") and reader not in p.readers:
                raise Unknown("an undeclared reader")
            if index < 0:
                return ["a negative index"]
            if field is not None and not any(field in fs for fs, _ in p.groups):
                raise Unknown("an undeclared field")
    # barrier state: (pipe, group, stage, 'full'|'empty') -> (phase, pending)
    # slot data: (pipe, stage, field) -> index written; holders: (pipe, stage) -> readers holding

    def count(p: _Pipe, g: int, which: str) -> int:
        return 1 if which == "full" else len(p.groups[g][1])

    def groups_of(p: _Pipe, reader) -> list[int]:
        return [g for g, (_, who) in enumerate(p.groups) if reader in who]

    def parity(p: _Pipe, i: int) -> int:
        return 0 if p.one_shot else (i // p.capacity) & 1

    start = (tuple(0 for _ in tr), frozenset(), frozenset(), frozenset())
    faults: set[str] = set()
    seen = {start}
    stack = [start]
    while stack:
        state = stack.pop()
        pos, bars, data, held = state
        bars_d, data_d, held_d = dict(bars), dict(data), dict(held)
        moved = False
        for w, t in enumerate(tr):
            if pos[w] == len(t):
                continue
            kind, pipe, reader, i, field = t[pos[w]]
            p = pipes[pipe]
            s = 0 if p.one_shot else i % p.capacity
            nb, nd, nh = dict(bars_d), dict(data_d), dict(held_d)

            def phase(key):
                return nb.get(key, (0, None))[0]

            def arrive(key, n):
                ph, pending = nb.get(key, (0, n))
                pending = n if pending is None else pending
                pending -= 1
                nb[key] = (ph + 1, n) if pending == 0 else (ph, pending)

            if kind == "acquire":
                if not p.one_shot and any(phase((pipe, g, s, "empty")) & 1 == parity(p, i) ^ 1
                                          for g in range(len(p.groups))):
                    continue  # blocked
            elif kind in ("commit", "close"):
                for g in range(len(p.groups)):
                    arrive((pipe, g, s, "full"), 1)
            elif kind == "wait":
                if any(phase((pipe, g, s, "full")) & 1 == parity(p, i)
                       for g in groups_of(p, reader)):
                    continue  # blocked
                nh[(pipe, s)] = held_d.get((pipe, s), frozenset()) | {(reader, i)}
            elif kind == "release":
                nh[(pipe, s)] = held_d.get((pipe, s), frozenset()) - {(reader, i)}
                if not p.one_shot:
                    for g in groups_of(p, reader):
                        arrive((pipe, g, s, "empty"), count(p, g, "empty"))
            elif kind == "write":
                if held_d.get((pipe, s)):
                    faults.add(f"{names[w]} writes {pipe}.{field} (stage {s}) while a reader "
                               f"holds it")
                nd[(pipe, s, field)] = i
            elif kind == "read":
                if data_d.get((pipe, s, field)) != i:
                    faults.add(f"{names[w]} reads {pipe}.{field} for index {i} but the stage "
                               f"holds index {data_d.get((pipe, s, field))}'s data")
            moved = True
            nxt = (pos[:w] + (pos[w] + 1,) + pos[w + 1:], frozenset(nb.items()),
                   frozenset(nd.items()), frozenset(nh.items()))
            if nxt not in seen:
                seen.add(nxt)
                if len(seen) > MAX_STATES:
                    raise Unknown("too many states")
                stack.append(nxt)
        if not moved and any(pos[w] < len(t) for w, t in enumerate(tr)):
            stuck = [f"{names[w]} at {tr[w][pos[w]][:2]}" for w, t in enumerate(tr)
                     if pos[w] < len(t)]
            faults.add(f"deadlock: {', '.join(stuck)}")
    return sorted(faults)


def _protocol_params(k: K.Kernel) -> list[str]:
    """The kernel params the pipe events' control and indices read (through locals and
    partition bindings), found on the KIR."""
    params = {p.name for p in k.params}
    deps: dict[str, set] = {}

    def names(e) -> set:
        return {x.id for x in K.walk_expr(e) if isinstance(x, K.Name)}

    roots: set = set()
    for body in [k.prologue, *(p.body for p in k.partitions)]:
        for s in K.walk_stmts(body):
            if isinstance(s, K.Assign):
                deps.setdefault(s.target, set()).update(names(s.value))
            if isinstance(s, (K.For, K.If, K.While)):
                for e in K.stmt_exprs(s):
                    roots |= names(e)
            for e in K.stmt_exprs(s):
                for x in K.walk_expr(e):
                    if isinstance(x, K.Event):
                        roots |= names(x.index)
    for part in k.partitions:
        for n, e in part.bindings:
            deps.setdefault(n, set()).update(names(e))
    found, todo = set(), list(roots)
    while todo:
        n = todo.pop()
        if n in found:
            continue
        found.add(n)
        todo.extend(deps.get(n, ()))
    return [p for p in (q.name for q in k.params) if p in found and p in params]


def _values(k: K.Kernel, n: int) -> list[int]:
    """The values each protocol param takes: 0 to 5 and, with one param, the multiples of the
    kernel's integer consts above 5 (and one more) up to four times, so that a param divided by
    a tile size (``NK = tl.cdiv(N, BK)``) gives more than one tile; 0 to 3 with two params."""
    if n > 1:
        return list(range(4))
    steps = {v for _, v in k.consts if type(v) is int and v > 5}
    return sorted(set(range(6)) | {c * j + d for c in steps for j in range(1, 5) for d in (0, 1)})


def oracle_faults(path: Path) -> Optional[list[str]]:
    """The oracle's faults of every kernel of a .kir file at every protocol param value from 0
    to 5 (0 to 3 for two params; three or more: undecided); None when it cannot decide one."""
    try:
        kernels = parse_kernel_file(path)
    except Exception:  # noqa: BLE001 - not the oracle's to read: tle-dump refused it
        return None
    faults = []
    try:
        for k in kernels:
            params = _protocol_params(k)
            if len(params) > 2:
                return None
            for combo in itertools.product(_values(k, len(params)), repeat=len(params)):
                at = dict(zip(params, combo))
                try:
                    parts = traces(k, at)
                except TooLong:
                    continue
                if parts is None:
                    continue
                faults += [f"{k.name} at {at}: {f}" for f in run_model(k, parts)]
                if faults:
                    return faults
    except Unknown as e:
        note(f"oracle: unknown ({e})")
        return None
    return faults


# -- (1) hand edits ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("adversarial_kir")


def edited(seed: str, old, new: Optional[str]) -> str:
    """The seed's text with every ``old`` replaced by ``new`` (there is one at least); ``old``
    may be a list of such (old, new) pairs instead, applied in turn."""
    text = printed(seed)
    for a, b in (old if new is None else [(old, new)]):
        assert a in text, (seed, a)
        text = text.replace(a, b)
    return text


RING_WRITE = ("      slot = ring.writer.acquire(t)\n"
              "      tl.store(tle.gpu.local_ptr(slot.tile), tl.load(ptrs))\n"
              "      ring.writer.commit(t)\n")
RING_READ = ("      res = ring.reader.wait(t)\n"
             "      acc = acc + tl.load(tle.gpu.local_ptr(res.slot.tile))\n"
             "      ring.reader.release(t)\n")
RING_DECL = "  pipe ring capacity=3 fields=(tile: fp32[3, 64, 64])\n"
WRITER_LOOP = "    for t in range(0, N_TILES, 1) {\n      ptrs"
READER_LOOP = "    for t in range(0, N_TILES, 1) {\n      res"

#: name: (seed, text replaced, replacement, what the error says, whether the oracle sees a hazard
#: at N <= 3: a deadlock, a stale read or a write of a held slot)
UNSAFE = {
    "a commit without its acquire": (
        "ring", RING_WRITE, "      ring.writer.commit(t)\n", "commit(0) of pipe 'ring' but no "
        "acquire is open", True),
    "a wait at the next index": (
        "ring", "res = ring.reader.wait(t)", "res = ring.reader.wait(t + 1)", "[index-mismatch]",
        True),
    "a wait at the index one lap back": (
        "ring", "res = ring.reader.wait(t)", "res = ring.reader.wait(t - 3)", "[negative-index]",
        True),
    "a release in one branch of an if": (
        "ring", "      ring.reader.release(t)\n",
        "      if t % 2 == 0 {\n        ring.reader.release(t)\n      }\n", "[missing-release]",
        True),
    "a release moved out of the loop": (
        "ring", "      ring.reader.release(t)\n    }\n    last",
        "    }\n    ring.reader.release(N_TILES - 1)\n    last", "[", True),
    "an acquire moved into a nested loop": (
        "ring", RING_WRITE,
        "      for u in range(0, 2, 1) {\n        slot = ring.writer.acquire(2 * t + u)\n"
        "        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(ptrs))\n"
        "        ring.writer.commit(2 * t + u)\n      }\n", "[", True),
    "the writer's loop runs zero times": (
        "ring", WRITER_LOOP, "    for t in range(0, 0, 1) {\n      ptrs", "[wait-never-committed]",
        True),
    "the reader's loop runs one more time": (
        "ring", READER_LOOP, "    for t in range(0, N_TILES + 1, 1) {\n      res",
        "[wait-never-committed]", True),
    "the reader's loop bound is a data value": (
        "ring", READER_LOOP, "    for t in range(0, tl.load(out_ptr), 1) {\n      res",
        "[non-affine-loop]", False),
    "the writer's loop starts at 1": (
        "ring", WRITER_LOOP, "    for t in range(1, N_TILES, 1) {\n      ptrs",
        "[wait-never-committed]", True),
    "the writer steps by 2": (
        "ring", WRITER_LOOP, "    for t in range(0, N_TILES, 2) {\n      ptrs", "[", True),
    "the reader partition deleted": (
        "ring", "  partition sum_tiles", "  partition_deleted", None, False),
    "the reader partition duplicated": (
        "ring", "  }\n}\n", "  }\n\n  partition sum_tiles warps=4 (ring = ring, out_ptr = "
        "out_ptr, N_TILES = N_TILES) {\n    for t in range(0, N_TILES, 1) {\n" + RING_READ
        + "    }\n  }\n}\n",
        "[duplicate-name]", False),
    "a second default partition": (
        "ring", "partition sum_tiles warps=4", "partition sum_tiles default warps=4",
        "[default-partition]", False),
    "a one-shot ring": (
        "ring", RING_DECL, "  pipe ring capacity=3 one_shot fields=(tile: fp32[3, 64, 64])\n",
        "[bad-capacity]", False),
    "a reader list on a single-consumer pipe": (
        "ring", RING_DECL, "  pipe ring capacity=3 readers=(a) fields=(tile: fp32[3, 64, 64])\n",
        "[missing-reader]", False),
    "a reader that does not exist": (
        "spmc", "res = kv.reader[scores].wait(ck)", "res = kv.reader[nobody].wait(ck)",
        "[undeclared-reader]", False),
    "an SPMC pipe with a third reader": (
        "spmc", "readers=(scores, vsum)", "readers=(scores, vsum, extra)", "[", True),
    "an SPMC pipe losing a reader": (
        "spmc", "readers=(scores, vsum)", "readers=(scores)", "[undeclared-reader]", False),
    "a field removed from the pipe": (
        "spmc", "fields=(k: fp16[2, 64, 64], v: fp16[2, 64, 64])", "fields=(k: fp16[2, 64, 64])",
        "[unknown-field]", False),
    "a reader's view naming no field": (
        "spmc", "kv.reader[vsum fields=(v)]", "kv.reader[vsum fields=(w)]", "[", False),
    "a release under a condition only one reader has": (
        "spmc", "      kv.reader[scores].release(ck)\n",
        "      if ck % 2 == 0 {\n        kv.reader[scores].release(ck)\n      }\n",
        "[missing-release]", True),
    "the last release of one reader left out": (
        "spmc", "      kv.reader[scores].release(ck)\n",
        "      if ck < NK - 1 {\n        kv.reader[scores].release(ck)\n      }\n",
        "[missing-release]", False),
    "the second stage's pipe given capacity 2 in chain": (
        "chain", "  pipe bc capacity=1 fields=(y: fp32[1, 32, 64])\n",
        "  pipe bc capacity=1 fields=(y: fp32[1, 32, 64])\n  pipe bc capacity=2 "
        "fields=(y: fp32[2, 32, 64])\n", "[duplicate-name]", False),
    "a partition binding its loop bound to another value": (
        "ring", "(ring = ring, out_ptr = out_ptr, N_TILES = N_TILES)",
        "(ring = ring, out_ptr = out_ptr, N_TILES = N_TILES + 1)", "[wait-never-committed]", True),
    "a wait of the closing slot at another index": (
        "ring", "last = ring.reader.wait(N_TILES)", "last = ring.reader.wait(0)",
        "[index-mismatch]", True),
    "a second release inside a subscript's index": (
        "ring", RING_READ, RING_READ + "      x = acc[ring.reader.release(t)]\n",
        "`ring.reader.release(t)` inside a subscript's index", True),
    "a release in a loop option": (
        "ring", READER_LOOP, "    for t in range(0, N_TILES, 1, num_stages=ring.reader.release(0))"
        " {\n      res", "`ring.reader.release(0)` inside a loop option", False),
    "a commit used as a loop bound": (
        "ring", "      ring.writer.commit(t)\n",
        "      for u in range(0, ring.writer.commit(t), 1) {\n      }\n",
        "`ring.writer.commit(t)` is used as a value, but commit returns nothing", False),
    "a release compared": (
        "ring", "      ring.reader.release(t)\n", "      x = ring.reader.release(t) == 0\n",
        "[bad-event]", False),
    "the same condition on both ends of a ring": (
        "ring", [(RING_WRITE, "      if t % 2 == 0 {\n" + RING_WRITE + "      }\n"),
                 (RING_READ, "      if t % 2 == 0 {\n" + RING_READ + "      }\n")], None,
        "[phase-aliasing]", True),
    "conditions that differ between the partitions": (
        "ring", RING_READ, "      if t % 3 == 0 {\n" + RING_READ + "      }\n", "[", True),
    "a write after the commit": (
        "ring", RING_WRITE, "      slot = ring.writer.acquire(t)\n      ring.writer.commit(t)\n"
        "      tl.store(tle.gpu.local_ptr(slot.tile), tl.load(ptrs))\n", "[", True),
    "a read after the release": (
        "ring", RING_READ, "      res = ring.reader.wait(t)\n      ring.reader.release(t)\n"
        "      acc = acc + tl.load(tle.gpu.local_ptr(res.slot.tile))\n", "[", True),
}


@pytest.mark.parametrize("name", list(UNSAFE))
def test_an_unsafe_edit_is_rejected(workdir, name):
    seed, old, new, says, hazard = UNSAFE[name]
    path = workdir / "unsafe.kir"
    if name == "the reader partition deleted":
        text = printed(seed)
        head, tail = text.split("  partition sum_tiles", 1)
        path.write_text(head + "}\n")
    else:
        path.write_text(edited(seed, old, new))
    code, out, err = dump([str(path)])
    assert code == 1, (name, code, err)
    errors = [ln for ln in err.splitlines() if " error: " in ln]
    assert errors and all(ERROR_LINE.match(ln) for ln in errors), err
    assert "Traceback" not in err
    if says:
        assert says in err, (name, err)
    if "verified" in verdict_line(out):
        pytest.fail(f"{name}: {verdict_line(out)}")
    if hazard:  # the oracle agrees there is a hazard on the GPU
        faults = oracle_faults(path)
        assert faults, name


def test_an_event_the_protocol_view_would_not_read_is_not_lowered(workdir):
    """A release in a subscript's index was verified (the protocol view reads no index entry)
    and then stopped emit-gluon with a traceback ("more events than results")."""
    path = workdir / "hidden.kir"
    path.write_text(edited("ring", RING_READ,
                           RING_READ + "      x = acc[ring.reader.release(t)]\n"))
    code, out, err = dump(["-p", "emit-gluon", str(path)])
    assert code == 1 and out == "", err
    assert "Traceback" not in err and "[bad-event]" in err, err


def test_pipes_whose_barriers_do_not_fit_together_are_rejected_at_once(workdir):
    """Fifty pipes of 14,000 stages each fit alone (verify-protocol's bound is one pipe's
    barriers) and took three minutes to verify; together their mbarriers need 11 MB of shared
    memory. Rejected at the pipe where they stop fitting (bad-capacity), as one pipe is."""
    decls = "".join(f"  pipe p{i} capacity=14000 fields=(f: fp32[14000, 64])\n" for i in range(50))
    path = workdir / "pipes.kir"
    path.write_text(edited("ring", RING_DECL, decls + RING_DECL))
    t0 = time.perf_counter()
    code, _, err = dump([str(path)])
    assert code == 1 and time.perf_counter() - t0 < 10, err
    assert re.search(re.escape(str(path)) + r":7: error: the pipes of kernel 'ring_sum' up to 'p1' "
                     r"have 448000 bytes of full and empty mbarriers .*\[bad-capacity\]", err), err
    # pipes that fit together: verified (with a warning that they are unused)
    decls = "".join(f"  pipe p{i} capacity=100 fields=(f: fp32[100, 64])\n" for i in range(2))
    path.write_text(edited("ring", RING_DECL, decls + RING_DECL))
    code, _, err = dump([str(path)])
    assert code == 0 and "[unused-pipe]" in err, err
    # one byte beyond: 14,526 stages beside the ring's 3
    path.write_text(edited("ring", RING_DECL, "  pipe p capacity=14526 fields=(f: fp32[14526, 64])"
                           "\n" + RING_DECL))
    code, _, err = dump([str(path)])
    assert code == 1 and "up to 'ring' have 232464 bytes" in err, err


def test_a_verdict_the_file_carries_is_not_this_runs(workdir):
    """A .kir printed after verification carries its verdict as an attribute; with the release
    then deleted by hand, a pipeline that does not verify printed the file's "proved" again
    (exit 0), and one that verifies keeps its own verdict only."""
    code, out, err = dump(["-p", "verify-protocol,verify-deadlock", "--print-ir",
                           str(SEEDS["ring"])])
    assert code == 0 and "verdict = ProtocolVerdict(kind = 'proved'" in out, err
    text = "\n".join(ln for ln in out.splitlines()
                     if not re.match(r"\s*ring\.reader\.release\(t\)", ln)) + "\n"
    path = workdir / "stale_verdict.kir"
    path.write_text(text)
    code, out, err = dump(["-p", "infer-barriers", "--print-ir", str(path)])
    assert code == 0 and "ProtocolVerdict" not in out, err
    code, out, err = dump(["-p", "verify-protocol", "--print-ir", str(path)])
    assert code == 1 and "[missing-release]" in err
    assert "kind = 'proved'" not in out and "verdict = ProtocolVerdict(kind = 'rejected'" in out
    code, _, err = dump([str(path)])
    assert code == 1 and "[missing-release]" in err


def test_the_reader_partition_deleted_says_what_is_missing(workdir):
    text = printed("ring")
    path = workdir / "no_reader.kir"
    path.write_text(text.split("  partition sum_tiles", 1)[0] + "}\n")
    code, _, err = dump([str(path)])
    assert code == 1
    assert "the reader of pipe 'ring' never waits" in err, err


@pytest.mark.parametrize("seed", list(SEEDS))
def test_the_oracle_passes_every_seed(seed, workdir):
    """The oracle is no stricter than the hardware on kernels the repository ships."""
    path = workdir / f"{seed}.kir"
    path.write_text(printed(seed))
    assert oracle_faults(path) == [], seed


#: safe edits: (seed, [(text replaced, replacement), ...], renamed names old -> new in the table)
SAFE = {
    "a local renamed": ("ring", [("res", "got")], {}),
    "the pipe renamed": ("ring", [("ring.", "belt."), ("pipe ring ", "pipe belt "),
                                  ("(ring = ring,", "(belt = belt,")], {"ring": "belt"}),
    "a partition renamed": ("ring", [("sum_tiles", "add_tiles")], {"sum_tiles": "add_tiles"}),
    "a loop variable renamed": ("spmc", [("ck", "j")], {"ck": "j"}),
    "the consts reordered": ("ring", [("  const BM = 64\n  const BN = 64\n",
                                       "  const BN = 64\n  const BM = 64\n")], {}),
    "the pipes reordered": ("chain", [("  pipe ab capacity=2 fields=(x: fp32[2, 32, 64])\n"
                                       "  pipe bc capacity=1 fields=(y: fp32[1, 32, 64])\n",
                                       "  pipe bc capacity=1 fields=(y: fp32[1, 32, 64])\n"
                                       "  pipe ab capacity=2 fields=(x: fp32[2, 32, 64])\n")], {}),
    "the partitions' independent statements reordered": (
        "ring", [("    offs_m = tl.arange(0, BM)\n    offs_n = tl.arange(0, BN)\n    acc",
                  "    offs_n = tl.arange(0, BN)\n    offs_m = tl.arange(0, BM)\n    acc")], {}),
    "whitespace and comments": ("spmc", [("\n", "  # a comment\n\n"), ("    ", "\t"),
                                         ("(", "(  ")], {}),
    "a release in both branches of an if": (
        "ring", [("      ring.reader.release(t)\n", "      if t % 2 == 0 {\n        "
                  "ring.reader.release(t)\n      } else {\n        ring.reader.release(t)\n"
                  "      }\n")], {}),
    "an index written another way": ("ring", [("ring.reader.wait(t)",
                                               "ring.reader.wait(2 * t - t + 0)")], {}),
    "a commit as the item of a dropped tuple": ("ring", [("      ring.writer.commit(t)\n",
                                                         "      (ring.writer.commit(t), 0)\n")],
                                               {}),
    "capacity 2 with its field": ("ring", [("capacity=3 fields=(tile: fp32[3,",
                                            "capacity=2 fields=(tile: fp32[2,")], None),
}


@pytest.mark.parametrize("name", list(SAFE))
def test_a_safe_edit_keeps_the_verdict_and_the_barriers(workdir, name):
    seed, edits, renamed = SAFE[name]
    text = printed(seed)
    for old, new in edits:
        assert old in text, (name, old)
        text = text.replace(old, new)
    path = workdir / "safe.kir"
    path.write_text(text)
    code, out, err = dump([str(path)])
    base = workdir / "base.kir"
    base.write_text(printed(seed))
    code0, out0, _ = dump([str(base)])
    assert code == code0 == 0, (name, err)
    assert verdict_line(out).split(" (")[0] == verdict_line(out0).split(" (")[0]
    if renamed is not None:  # the same barriers, under the new names
        want = []
        for row in barrier_rows(out0):
            for a, b in renamed.items():
                row = re.sub(rf"\b{a}\b", b, row)
            want.append(re.sub(r"\s+", " ", row))
        assert sorted(re.sub(r"\s+", " ", r) for r in barrier_rows(out)) == sorted(want), name
    assert oracle_faults(path) == [], name


#: the same edit made to ring.py and to its printed .kir: (Python replaced, by, KIR replaced, by)
BOTH = {
    "a release in one branch of an if": (
        "        r.release(t)\n", "        if t % 2 == 0:\n            r.release(t)\n",
        "      ring.reader.release(t)\n",
        "      if t % 2 == 0 {\n        ring.reader.release(t)\n      }\n"),
    "a release in both branches of an if": (
        "        r.release(t)\n", "        if t % 2 == 0:\n            r.release(t)\n"
        "        else:\n            r.release(t)\n",
        "      ring.reader.release(t)\n", "      if t % 2 == 0 {\n        ring.reader.release(t)\n"
        "      } else {\n        ring.reader.release(t)\n      }\n"),
    "a wait at the next index": ("res = r.wait(t)", "res = r.wait(t + 1)",
                                 "res = ring.reader.wait(t)", "res = ring.reader.wait(t + 1)"),
    "the writer's loop starts at 1": ("tl.range(0, N_TILES)", "tl.range(1, N_TILES)",
                                      "for t in range(0, N_TILES, 1) {\n      ptrs",
                                      "for t in range(1, N_TILES, 1) {\n      ptrs"),
    "the writer steps by 2": ("tl.range(0, N_TILES)", "tl.range(0, N_TILES, 2)",
                              "for t in range(0, N_TILES, 1) {\n      ptrs",
                              "for t in range(0, N_TILES, 2) {\n      ptrs"),
    "capacity 2": ("STAGES = 3", "STAGES = 2", "capacity=3 fields=(tile: fp32[3,",
                   "capacity=2 fields=(tile: fp32[2,"),
    "no close": ("    w.close(N_TILES)\n", "", "    ring.writer.close(N_TILES)\n", ""),
}


@pytest.mark.parametrize("name", list(BOTH))
def test_an_edit_gets_the_verdict_of_the_same_edit_in_python(workdir, name):
    """The .kir file's verdict is that of the Python kernel edited alike: the same exit status,
    the same verdict and the same checks failed."""
    py_old, py_new, kir_old, kir_new = BOTH[name]
    source = SEEDS["ring"].read_text()
    assert source.count(py_old) == 1, py_old
    py = workdir / "ring_edit.py"
    py.write_text(source.replace(py_old, py_new))
    kir = workdir / "ring_edit.kir"
    kir.write_text(edited("ring", kir_old, kir_new))
    (code_py, out_py, err_py), (code, out, err) = dump([str(py)]), dump([str(kir)])
    assert code == code_py, (name, err_py, err)
    checks = [sorted(set(re.findall(r"error: .*\[([\w-]+)\]$", e, re.M))) for e in (err_py, err)]
    assert checks[0] == checks[1], (name, err_py, err)
    assert verdict_line(out).split(" (")[0] == verdict_line(out_py).split(" (")[0]


# -- (2) malformed text ---------------------------------------------------------------------------


def _malformed() -> dict[str, bytes]:
    ring = printed("ring")
    deep = "(" * 300 + "t" + ")" * 300
    return {
        "a truncated file": ring[: len(ring) // 2].encode(),
        "a file cut inside a token": ring[: ring.index("capacity=3") + 5].encode(),
        "an unknown verb": ring.replace("ring.reader.release(t)", "ring.reader.free(t)").encode(),
        "an unknown statement keyword": ring.replace("for t in", "loop t in", 1).encode(),
        "a missing closing brace": ring.rstrip()[:-1].encode(),
        "an extra closing brace": (ring + "}\n").encode(),
        "an unbalanced opening brace": ring.replace("range(0, N_TILES, 1) {",
                                                    "range(0, N_TILES, 1) {{", 1).encode(),
        "a const declared twice": ring.replace("  const BM = 64\n",
                                               "  const BM = 64\n  const BM = 32\n").encode(),
        "a param declared twice": ring.replace("(x_ptr, out_ptr, stride_x, N_TILES)",
                                               "(x_ptr, out_ptr, N_TILES, N_TILES)").encode(),
        "a partition param bound twice": ring.replace(
            "(ring = ring, out_ptr = out_ptr, N_TILES = N_TILES)",
            "(ring = ring, N_TILES = out_ptr, N_TILES = N_TILES)").encode(),
        "two kernels of one name": (ring + ring).encode(),
        "non-UTF-8 bytes": ring.encode()[:120] + b"\xff\xfe" + ring.encode()[120:],
        "a NUL byte": ring.encode()[:120] + b"\0" + ring.encode()[120:],
        "an empty file": b"",
        "a file of blanks and comments": b"\n  \n# nothing here\n",
        "an integer of 5000 digits": ring.replace("const BM = 64", "const BM = " + "9" * 5000)
                                     .encode(),
        "an integer of 400 digits in an index": ring.replace(
            "ring.reader.wait(t)", "ring.reader.wait(t + " + "9" * 400 + ")").encode(),
        "a shift by 99999999999": ring.replace(
            "ring.reader.wait(t)", "ring.reader.wait(t + (1 << 99999999999))").encode(),
        "a power folded through locals": ring.replace(
            "      res = ring.reader.wait(t)\n", "      a = 2 ** 1000\n      b = a * a\n"
            "      res = ring.reader.wait(t + b - b)\n").encode(),
        "a product of two 300-digit literals": ring.replace(
            "ring.reader.wait(t)", f"ring.reader.wait(t + {'9' * 300} * {'9' * 300})").encode(),
        "a negative capacity": ring.replace("capacity=3", "capacity=-3").encode(),
        "a capacity of 0": ring.replace("capacity=3", "capacity=0").encode(),
        "an identifier Python reads as another": ring.replace("N_TILES", "ℕ").encode(),
        "expressions nested 300 deep": ring.replace("ring.reader.wait(t)",
                                                    f"ring.reader.wait({deep})").encode(),
        "a chain of 2000 additions": ring.replace(
            "ring.reader.wait(t)", "ring.reader.wait(t" + " + 0" * 2000 + ")").encode(),
        "ifs nested 60 deep": ring.replace(
            "      ring.reader.release(t)\n", "if t >= 0 {\n" * 60 + "ring.reader.release(t)\n"
            + "}\n" * 60).encode(),
        "a byte order mark": ("\ufeff" + ring).encode(),
    }


MALFORMED = _malformed()


@pytest.mark.parametrize("name", list(MALFORMED))
def test_malformed_text_is_unusable_input(workdir, name):
    path = workdir / "malformed.kir"
    path.write_bytes(MALFORMED[name])
    for argv in ([str(path)], ["-p", "verify-protocol,verify-deadlock", "--print-ir", str(path)]):
        code, out, err = dump(argv)
        assert code == 2 and out == "", (name, argv, code, err)
        (line,) = err.strip().splitlines()
        assert "Traceback" not in err
        if name in ("non-UTF-8 bytes", "a NUL byte", "an empty file",
                    "a file of blanks and comments"):
            assert line.startswith(f"{path}: error: "), line  # about the whole file
        else:
            assert ERROR_LINE.match(line) and line.startswith(str(path)), line


def test_malformed_messages_name_the_problem_and_its_line(workdir):
    path = workdir / "m.kir"
    expect = {
        "an integer of 5000 digits": r":2: error: an integer literal of 5000 digits",
        "a shift by 99999999999": r":27: error: `1 << 99999999999` may be an integer of "
                                  r"100000000000 bits",
        "a param declared twice": r":1: error: kernel 'ring_sum' declares param 'N_TILES' twice",
        "two kernels of one name": r":37: error: kernel 'ring_sum' is defined twice",
        "an identifier Python reads as another": r":1: error: identifier 'ℕ' is not in Unicode "
                                                 r"normal form NFKC \(Python reads it as 'N'\)",
        "expressions nested 300 deep": rf":27: error: nested more than {MAX_DEPTH} levels deep",
        "an empty file": r": error: no kernel \(a \.kir file starts with 'kernel NAME",
    }
    for name, pattern in expect.items():
        path.write_bytes(MALFORMED[name])
        code, _, err = dump([str(path)])
        assert code == 2 and re.search(re.escape(str(path)) + pattern, err), (name, err)


def test_identifiers_in_normal_form_stay_names(workdir):
    """Non-ASCII identifiers Python keeps as written are names like any other: the kernel
    verifies as it did."""
    path = workdir / "unicode.kir"
    path.write_text(printed("ring").replace("N_TILES", "Ñ").replace("acc", "ácc"))
    code, out, err = dump([str(path)])
    assert code == 0, err
    assert "verified for every value of Ñ" in verdict_line(out)


def test_the_deepest_nesting_read_runs_every_pass(workdir):
    """Just under the nesting bound, the verifier and the lowering's passes (which walk the
    kernel recursively, and generate indented Python for its traces) still run."""
    ring = printed("ring")
    for make in (lambda n: ring.replace("ring.reader.wait(t)", "ring.reader.wait(t"
                                        + " + 0" * n + ")"),
                 lambda n: ring.replace("      ring.reader.release(t)\n", "if t >= 0 {\n" * n
                                        + "ring.reader.release(t)\n" + "}\n" * n)):
        path = workdir / "deep.kir"

        def refused(n: int) -> bool:
            path.write_text(make(n))
            return dump([str(path)])[0] == 2

        # the deepest nesting read: doubling to a refused depth, then halving the gap
        ok, bad = 1, 2
        while not refused(bad):
            ok, bad = bad, bad * 2
        while bad - ok > 1:
            mid = (ok + bad) // 2
            ok, bad = (ok, mid) if refused(mid) else (mid, bad)
        n = ok
        assert n >= 20 and refused(n + 1)
        path.write_text(make(n))
        assert dump([str(path)])[0] == 0
        code, _, err = dump(["-p", "emit-gluon", str(path)])
        assert code == 0, err


def test_a_ten_megabyte_file_is_refused_at_its_line(workdir):
    """A kernel file holds at most MAX_FILE_CHARS characters: 10 MB of one kernel's text is
    refused at the line where the bound falls, at once (checking 100,000 statements took eight
    minutes), as is 10 MB of garbage."""
    ring = printed("ring")
    path = workdir / "big.kir"
    path.write_text(ring.replace("    acc = tl.zeros", "    x = 1\n" * 1_000_000
                                 + "    acc = tl.zeros"))
    assert path.stat().st_size > 10_000_000
    t0 = time.perf_counter()
    code, _, err = dump([str(path)])
    assert code == 2 and time.perf_counter() - t0 < 5, err
    line = ring[:ring.index("    acc = tl.zeros")].count("\n") + 1 + \
        (MAX_FILE_CHARS - ring.index("    acc = tl.zeros")) // len("    x = 1\n")
    assert err == f"{path}:{line}: error: the file is longer than {MAX_FILE_CHARS} characters, " \
                  f"the most a kernel file may hold (a printed kernel of the repository has " \
                  f"under 100,000) at {line}:1\n", err
    path.write_text("@" * 10_000_000)
    code, _, err = dump([str(path)])
    assert code == 2 and err.startswith(f"{path}:1: error: the file is longer than"), err[:300]


def test_a_kernel_of_too_many_statements_is_refused_at_the_first_beyond(workdir):
    """Checking a kernel takes time that grows faster than its statements (10,000 took 8 s):
    a kernel of a file has at most MAX_STATEMENTS; the bundled ones have under 500."""
    ring = printed("ring")
    path = workdir / "many.kir"
    at = ring[:ring.index("    acc = tl.zeros")].count("\n") + 1
    path.write_text(ring.replace("    acc = tl.zeros", "    x = 1\n" * MAX_STATEMENTS
                                 + "    acc = tl.zeros"))
    code, _, err = dump([str(path)])
    assert code == 2, err
    assert re.fullmatch(re.escape(str(path)) + rf":(\d+): error: kernel 'ring_sum' has more than "
                        rf"{MAX_STATEMENTS} statements, the most a kernel file's kernel may have "
                        rf"at \1:5\n", err), err
    assert int(err.split(":")[1]) < at + MAX_STATEMENTS
    path.write_text(ring.replace("    acc = tl.zeros", "    x = 1\n" * (MAX_STATEMENTS - 100)
                                 + "    acc = tl.zeros"))
    code, _, err = dump([str(path)])
    assert code == 0, err


def test_a_huge_param_value_is_unusable_input(workdir):
    path = workdir / "ring.kir"
    path.write_text(printed("ring"))
    code, _, err = dump(["--param", "N_TILES=" + "9" * 5000, str(path)])
    assert code == 2 and err.startswith("tle-dump: error: --param N_TILES: a value of 5000 "
                                        "digits"), err


# -- (3) mutated kernels -----------------------------------------------------------------------


VERBS = ("acquire", "commit", "wait", "release", "close")


@st.composite
def mutated(draw, text: str) -> str:
    """``text`` with one to three edits: lines deleted, duplicated or swapped, an integer
    tweaked, an event's index shifted, a verb swapped."""
    lines = text.splitlines()
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(lines) - 1))
        op = draw(st.sampled_from(("delete", "duplicate", "swap", "number", "index", "verb")))
        line = lines[i]
        if op == "delete":
            del lines[i]
        elif op == "duplicate":
            lines.insert(i, line)
        elif op == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], line
        elif op == "number":
            numbers = list(re.finditer(r"\d+", line))
            if numbers:
                m = draw(st.sampled_from(numbers))
                new = draw(st.sampled_from(("0", "1", "2", "3", str(int(m.group()) + 1),
                                            str(max(int(m.group()) - 1, 0)))))
                lines[i] = line[:m.start()] + new + line[m.end():]
        elif op == "index":
            m = re.search(r"\.(acquire|commit|close|wait|release)\(([^()]*)\)", line)
            if m:
                d = draw(st.sampled_from(("+ 1", "- 1", "+ 2", "* 2")))
                lines[i] = line[:m.start(2)] + f"({m.group(2)}) {d}" + line[m.end(2):]
        else:
            verbs = [v for v in VERBS if f".{v}(" in line]
            if verbs:
                v = draw(st.sampled_from(verbs))
                lines[i] = line.replace(f".{v}(", f".{draw(st.sampled_from(VERBS))}(", 1)
    return "\n".join(lines) + "\n"


@settings(max_examples=160, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_a_verified_mutant_is_safe(workdir, data):
    seed = data.draw(st.sampled_from(sorted(SEEDS)), label="seed")
    text = data.draw(mutated(printed(seed)), label="kir")
    path = workdir / "mutant.kir"
    path.write_text(text)
    code, out, err = dump([str(path)])
    note(f"exit {code}\n{err}")
    assert code in (0, 1, 2, 3), (code, err)
    assert "Traceback" not in err and not re.search(r"\binternal\b", err, re.I), err
    if code in (1, 2):
        errors = [ln for ln in err.splitlines() if " error: " in ln]
        assert errors, err
    if code == 0:
        faults = oracle_faults(path)
        assert not faults, (faults, text)
