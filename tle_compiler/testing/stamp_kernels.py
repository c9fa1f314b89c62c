"""End-to-end fuzzing of the lowering: a Pipe IR Program → a TLE kernel that *stamps* every slot.

:func:`stamp_kernel_source` turns a (verified) Program into the Python source of a ``@tle.jit``
kernel module whose protocol skeleton is the Program's: same pipes, same partitions, same loops,
ifs, params and event indices. What flows through the pipes is checkable:

* every field of a pipe is an int32 ``[capacity, W]`` shared buffer (W = 16 by default);
* right after ``acquire(i)`` the writer stores ``stamp(pipe, field, i) + lane`` into every element
  of each field of the slot (lane = 0..W-1, so a transposed or shifted layout shows too);
* right after ``wait(i)`` a reader loads every field of its view and compares it with the expected
  stamp; a wait on a *closed* index (the writer called ``close(i)``, which writes no data) is
  counted as closed instead, and must report ``is_closed``;
* each partition keeps register tensors of W lanes: ``err`` (mismatched elements), ``bad`` (the
  first mismatched value), ``at`` (1 + the number of events done before the first mismatch),
  ``done`` (events executed) and ``closed`` (waits that saw is_closed), and stores them at its end
  into ``res[partition, 0..4, :]`` (int32, ``RESULT_ROWS`` rows).

Only ``tl.arange / zeros / full / load / store / where``, int32 arithmetic and comparisons are used,
so the stamp kernels exercise the lowering's pipe machinery, not its math.

:func:`expected_counts` derives from the Program (:func:`tle_compiler.ir.unroll.unroll`) what a
correct run reports; :func:`run_stamp_kernel` writes the source to a temporary module, imports it,
launches it (grid (1,)) and decodes the result buffer.

Stamp encoding (int32, no overflow for index < 65536, < 1024 (pipe, field) pairs):
``stamp = ((pipe_id * 8 + field_id) * 65536 + index) * 32 + lane``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import keyword
import os
import sys
import tempfile
from typing import Any, Callable, Mapping, Optional

from ..ir.expr import Affine, BoolOp, Compare, Cond, ModCompare, Not
from ..ir.nodes import READER_VERBS, Event, For, If, Program, Stmt, walk_events
from ..ir.printer import print_program
from ..ir.unroll import unroll

#: rows of the per-partition result block ``res[partition, row, lane]``
ERR, BAD, AT, DONE, CLOSED = range(5)
RESULT_ROWS = 5
MAX_FIELDS_PER_PIPE = 8
INDEX_RANGE = 65536
MAX_WIDTH = 32

_RESERVED_PREFIX = "st_"


def stamp_base(pipe_id: int, field_id: int) -> int:
    """The stamp of index 0, lane 0 of a (pipe, field) pair."""
    assert field_id < MAX_FIELDS_PER_PIPE
    return (pipe_id * MAX_FIELDS_PER_PIPE + field_id) * INDEX_RANGE * MAX_WIDTH


def stamp(pipe_id: int, field_id: int, index: int, lane: int) -> int:
    return stamp_base(pipe_id, field_id) + index * MAX_WIDTH + lane


def reader_views(program: Program) -> dict[tuple[str, str], Optional[tuple[str, ...]]]:
    """(pipe, reader name or "") → the reader's field view in declaration order (None: all)."""
    views: dict[tuple[str, str], Optional[tuple[str, ...]]] = {}
    for part in program.partitions:
        for ev in walk_events(part.body):
            if ev.verb in READER_VERBS:
                key = (ev.pipe, ev.reader or "")
                views.setdefault(key, None)
                if ev.fields is not None:
                    seen = set(views[key] or ()) | set(ev.fields)
                    decl = program.pipe(ev.pipe).fields
                    views[key] = tuple(f for f in decl if f in seen)
    return views


def _py_affine(a: Affine) -> str:
    text = str(a)
    return text if text.isidentifier() or text.isdigit() else f"({text})"


def _py_cond(c: Cond) -> str:
    if isinstance(c, Compare):
        return f"{_py_affine(c.lhs)} {c.op} {_py_affine(c.rhs)}"
    if isinstance(c, ModCompare):
        return f"{_py_affine(c.expr)} % {c.modulus} {c.op} {c.rem}"
    if isinstance(c, BoolOp):
        # Triton accepts only binary and/or: nest left to right.
        text = f"({_py_cond(c.items[0])})"
        for item in c.items[1:]:
            text = f"({text} {c.op} ({_py_cond(item)}))"
        return text
    if isinstance(c, Not):
        return f"not ({_py_cond(c.item)})"
    raise TypeError(f"not a condition: {c!r}")


def _check_names(program: Program) -> None:
    names = [program.name] + [p.name for p in program.params] + [p.name for p in program.pipes]
    names += [p.name for p in program.partitions]
    for part in program.partitions:
        for s in _walk_stmts(part.body):
            if isinstance(s, For):
                names.append(s.var)
    for n in names:
        if not n.isidentifier() or keyword.iskeyword(n) or n.startswith(_RESERVED_PREFIX) \
                or n in ("tl", "tle", "W", "res_ptr"):
            raise ValueError(f"name {n!r} cannot be used in a generated stamp kernel")
    for p in program.pipes:
        if len(p.fields) > MAX_FIELDS_PER_PIPE:
            raise ValueError(f"pipe {p.name} has more than {MAX_FIELDS_PER_PIPE} fields")


def _walk_stmts(body: tuple[Stmt, ...]):
    for s in body:
        yield s
        if isinstance(s, For):
            yield from _walk_stmts(s.body)
        elif isinstance(s, If):
            yield from _walk_stmts(s.then)
            yield from _walk_stmts(s.orelse)


def worker_regs(n_workers: int) -> list[int]:
    """Register budgets that fit the 64 Ki-register file with 128-thread partitions."""
    per = {0: 0, 1: 232, 2: 168, 3: 120}.get(n_workers)
    if per is None:
        per = max(24, (512 // (n_workers + 1)) // 8 * 8 - 8)
    return [per] * n_workers


def ordered_partitions(program: Program):
    """The default partition first (warp_specialize's order), then the others in program order."""
    return sorted(program.partitions, key=lambda p: not p.default)


class _Emitter:
    def __init__(self, program: Program, width: int):
        self.p = program
        self.width = width
        self.pipe_id = {p.name: k for k, p in enumerate(program.pipes)}
        self.views = reader_views(program)
        self.closing = {ev.pipe for part in program.partitions for ev in walk_events(part.body)
                        if ev.verb == "close"}
        self.lines: list[str] = []
        self.counter = 0

    def emit(self, depth: int, text: str) -> None:
        self.lines.append("    " * depth + text)

    # -- handles -------------------------------------------------------------------------------
    @staticmethod
    def writer_var(pipe: str) -> str:
        return f"st_w_{pipe}"

    @staticmethod
    def reader_var(pipe: str, reader: str) -> str:
        return f"st_r_{pipe}_{reader}" if reader else f"st_r_{pipe}"

    @staticmethod
    def pipe_var(pipe: str) -> str:
        return f"st_pipe_{pipe}"

    def pipes_of(self, part) -> list[str]:
        used = {ev.pipe for ev in walk_events(part.body)}
        return [p.name for p in self.p.pipes if p.name in used]

    # -- events --------------------------------------------------------------------------------
    def event(self, ev: Event, depth: int) -> None:
        # Fresh temporaries per event: a name reused across loops and branches would become a
        # loop-carried / branch-merged value of different types (a slot of another pipe).
        self.counter += 1
        n = self.counter
        idx = _py_affine(ev.index)
        pipe = self.p.pipe(ev.pipe)
        pid = self.pipe_id[ev.pipe]
        if ev.verb in ("acquire", "commit", "close"):
            w = self.writer_var(ev.pipe)
            if ev.verb == "acquire":
                self.emit(depth, f"st_slot_{n} = {w}.acquire({idx})")
                for fid, f in enumerate(pipe.fields):
                    self.emit(depth, f"tl.store(tle.gpu.local_ptr(st_slot_{n}.{f}), "
                                     f"st_lane + {idx} * {MAX_WIDTH} + {stamp_base(pid, fid)})")
            else:
                self.emit(depth, f"{w}.{ev.verb}({idx})")
        else:
            r = self.reader_var(ev.pipe, ev.reader or "")
            if ev.verb == "release":
                self.emit(depth, f"{r}.release({idx})")
            else:
                view = self.views.get((ev.pipe, ev.reader or "")) or pipe.fields
                self.emit(depth, f"st_res_{n} = {r}.wait({idx})")
                closing = ev.pipe in self.closing
                if closing:
                    self.emit(depth, f"st_isc_{n} = tl.where(st_res_{n}.is_closed, st_one, st_zero)")
                for f in view:
                    fid = pipe.fields.index(f)
                    self.emit(depth, f"st_v_{n} = tl.load(tle.gpu.local_ptr(st_res_{n}.slot.{f}))")
                    self.emit(depth, f"st_want_{n} = st_lane + {idx} * {MAX_WIDTH} + "
                                     f"{stamp_base(pid, fid)}")
                    miss = f"tl.where(st_v_{n} != st_want_{n}, st_one, st_zero)"
                    if closing:
                        miss = f"{miss} * (1 - st_isc_{n})"
                    self.emit(depth, f"st_miss_{n} = {miss}")
                    self.emit(depth, f"st_first_{n} = tl.where(st_err == 0, st_miss_{n}, st_zero)")
                    self.emit(depth, f"st_bad = tl.where(st_first_{n} == 1, st_v_{n}, st_bad)")
                    self.emit(depth, f"st_at = tl.where(st_first_{n} == 1, st_done + 1, st_at)")
                    self.emit(depth, f"st_err = st_err + st_miss_{n}")
                if closing:
                    self.emit(depth, f"st_closed = st_closed + st_isc_{n}")
        self.emit(depth, f"st_done = st_done + 1")

    def body(self, body: tuple[Stmt, ...], depth: int) -> None:
        if not body:
            self.emit(depth, "pass")
        for s in body:
            if isinstance(s, Event):
                self.event(s, depth)
            elif isinstance(s, For):
                rng = f"{_py_affine(s.start)}, {_py_affine(s.stop)}"
                if s.step != 1:
                    rng += f", {s.step}"
                self.emit(depth, f"for {s.var} in range({rng}):")
                self.body(s.body, depth + 1)
            elif isinstance(s, If):
                self.emit(depth, f"if {_py_cond(s.cond)}:")
                self.body(s.then, depth + 1)
                if s.orelse:
                    self.emit(depth, "else:")
                    self.body(s.orelse, depth + 1)
            else:  # pragma: no cover
                raise TypeError(s)

    # -- the module ----------------------------------------------------------------------------
    def module(self) -> str:
        p = self.p
        params = [x.name for x in p.params]
        parts = ordered_partitions(p)
        default = parts[0]
        if not default.default:
            raise ValueError(f"program {p.name} has no default partition")
        workers = parts[1:]
        text = print_program(p).rstrip("\n")
        e = self.emit
        e(0, '"""Stamp kernel generated by tle_compiler.testing.stamp_kernels from this Pipe IR:')
        e(0, "")
        for ln in text.splitlines():
            e(0, "    " + ln if ln else "")
        e(0, '"""')
        e(0, "")
        e(0, "import triton.language as tl")
        e(0, "")
        e(0, "import tle_compiler as tle")
        e(0, "")
        e(0, f"W = tl.constexpr({self.width})")
        e(0, "")
        e(0, "")
        e(0, f"@tle.jit(num_warps={default.warps})")
        e(0, f"def {p.name}({', '.join(['res_ptr'] + params)}):")
        for pipe in p.pipes:
            kw = [f"capacity={pipe.capacity}", f'name="{pipe.name}"']
            if pipe.readers:
                kw.append("readers=(" + "".join(f'"{r}", ' for r in pipe.readers) + ")")
            if pipe.one_shot:
                kw.append("one_shot=True")
            kw += [f"{f}=tle.gpu.alloc([{pipe.capacity}, W], tl.int32)" for f in pipe.fields]
            e(1, f"{self.pipe_var(pipe.name)} = tle.pipe({', '.join(kw)})")
        entries = []
        for k, part in enumerate(parts):
            args = [self.pipe_var(x) for x in self.pipes_of(part)] + ["res_ptr"] + params
            entries.append(f"({part.name}, ({', '.join(args)},))")
        warps = [w.warps for w in workers]
        regs = worker_regs(len(workers))
        e(1, "tle.gpu.warp_specialize([" + (",\n" + " " * 29).join(entries) + "],")
        e(1, f"                        {warps}, {regs})")
        for k, part in enumerate(parts):
            e(0, "")
            e(0, "")
            pipes = self.pipes_of(part)
            args = [self.pipe_var(x) for x in pipes] + ["res_ptr"] + params
            e(0, f"def {part.name}({', '.join(args)}):")
            e(1, "st_lane = tl.arange(0, W)")
            e(1, "st_one = tl.full([W], 1, tl.int32)")
            e(1, "st_zero = tl.zeros([W], tl.int32)")
            for name in ("err", "bad", "at", "done", "closed"):
                e(1, f"st_{name} = tl.zeros([W], tl.int32)")
            handles = []
            for ev in walk_events(part.body):
                key = (ev.pipe, None) if ev.is_writer else (ev.pipe, ev.reader or "")
                if key not in handles:
                    handles.append(key)
            for pipe, reader in handles:
                pv = self.pipe_var(pipe)
                if reader is None:
                    e(1, f"{self.writer_var(pipe)} = {pv}.writer()")
                else:
                    args_r = []
                    if reader:
                        args_r.append(f'"{reader}"')
                    view = self.views.get((pipe, reader))
                    if view is not None:
                        args_r.append("fields=(" + "".join(f'"{f}", ' for f in view) + ")")
                    e(1, f"{self.reader_var(pipe, reader)} = {pv}.reader({', '.join(args_r)})")
            self.body(part.body, 1)
            e(1, f"st_out = res_ptr + {k * RESULT_ROWS} * W + st_lane")
            for row, name in enumerate(("err", "bad", "at", "done", "closed")):
                e(1, f"tl.store(st_out + {row} * W, st_{name})")
        e(0, "")
        e(0, "")
        sig = ", ".join(['"res_ptr": "*i32"'] + [f'"{x}": "i32"' for x in params])
        e(0, "DEFAULT_CONFIG = {")
        e(1, f"# res: [{len(parts)}, {RESULT_ROWS}, W] int32, one block per partition in "
             f"warp_specialize order; grid (1,)")
        e(1, f'"signature": {{{sig}}},')
        e(1, '"constexprs": {},')
        e(1, f'"num_warps": {default.warps},')
        e(1, '"grid": (1,),')
        e(1, '"partitions": (' + "".join(f'"{x.name}", ' for x in parts) + "),")
        e(0, "}")
        return "\n".join(self.lines) + "\n"


def stamp_kernel_source(program: Program, params: Optional[Mapping[str, int]] = None,
                        width: int = 16) -> str:
    """The Python source of a TLE kernel module reproducing ``program``'s protocol with stamped
    slots (see the module docstring). ``params`` are not baked in (they are kernel arguments); when
    given they are only checked against the program's params. ``width`` is W (<= 32)."""
    if not 1 <= width <= MAX_WIDTH or width & (width - 1):
        raise ValueError(f"width must be a power of two <= {MAX_WIDTH}, got {width}")
    _check_names(program)
    if params is not None:
        missing = [p.name for p in program.params if p.name not in params]
        if missing:
            raise ValueError(f"no value for param(s) {', '.join(missing)}")
    return _Emitter(program, width).module()


def expected_counts(program: Program, params: Mapping[str, int]) -> dict[str, dict[str, int]]:
    """What a correct run of the stamp kernel reports, per partition: ``done`` (its events),
    ``closed`` (its waits on an index the writer closed), ``mismatches`` (0)."""
    traces = unroll(program, dict(params))
    closed_idx: dict[str, set[int]] = {}
    for trace in traces.values():
        for inst in trace:
            if inst.event.verb == "close":
                closed_idx.setdefault(inst.event.pipe, set()).add(inst.index)
    out: dict[str, dict[str, int]] = {}
    for part in program.partitions:
        trace = traces[part.name]
        closed = sum(1 for x in trace if x.event.verb == "wait"
                     and x.index in closed_idx.get(x.event.pipe, ()))
        out[part.name] = {"done": len(trace), "closed": closed, "mismatches": 0}
    return out


def decode_results(program: Program, res: Any) -> dict[str, dict[str, Any]]:
    """Per partition (warp_specialize order) from the result tensor ``res[parts, RESULT_ROWS, W]``:
    mismatches (sum over lanes), done / closed (lane 0, and whether every lane agrees), the first
    bad value and event number (lane of the first mismatch, or None)."""
    res = res.cpu()
    out: dict[str, dict[str, Any]] = {}
    for k, part in enumerate(ordered_partitions(program)):
        block = res[k]
        err = block[ERR]
        bad_lanes = (err != 0).nonzero().flatten().tolist()
        first = None
        if bad_lanes:
            ln = bad_lanes[0]
            first = {"lane": ln, "value": int(block[BAD, ln]), "event": int(block[AT, ln])}
        out[part.name] = {
            "mismatches": int(err.sum()),
            "done": int(block[DONE, 0]),
            "closed": int(block[CLOSED, 0]),
            "lanes_agree": bool((block[DONE] == block[DONE, 0]).all()
                                and (block[CLOSED] == block[CLOSED, 0]).all()),
            "first_bad": first,
        }
    return out


def write_module(source: str, directory: Optional[str] = None) -> str:
    """Write ``source`` to ``directory`` (a fresh temp dir by default) as a uniquely named .py."""
    directory = directory or tempfile.mkdtemp(prefix="tle_stamp_")
    digest = hashlib.sha1(source.encode()).hexdigest()[:12]
    path = os.path.join(directory, f"tle_stamp_{digest}.py")
    with open(path, "w", encoding="utf-8") as f:
        f.write(source)
    return path


def import_module_from(path: str):
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # some launchers look the module up by name
    spec.loader.exec_module(mod)
    return mod


def launch_stamp_module(mod: Any, program: Program, params: Mapping[str, int], device: str = "cuda",
                        width: int = 16, launch: Optional[Callable] = None) -> Any:
    """Launch an imported stamp module's kernel on a poisoned result buffer; returns the buffer.
    ``launch(kernel, grid, args)`` overrides ``kernel[grid](*args)`` (e.g. for an emulator)."""
    import torch

    n = len(program.partitions)
    res = torch.full((n, RESULT_ROWS, width), -7, dtype=torch.int32, device=device)
    kernel = getattr(mod, program.name)
    args = [res] + [int(params[p.name]) for p in program.params]
    if launch is None:
        kernel[(1,)](*args)
        if device.startswith("cuda"):
            torch.cuda.synchronize()
    else:
        launch(kernel, (1,), args)
    return res


def run_stamp_kernel(program: Program, params: Mapping[str, int], width: int = 16,
                     device: str = "cuda", directory: Optional[str] = None
                     ) -> dict[str, dict[str, Any]]:
    """Generate, import and launch the stamp kernel of ``program`` for ``params`` on CUDA; returns
    :func:`decode_results` (compare with :func:`expected_counts`)."""
    path = write_module(stamp_kernel_source(program, params, width), directory)
    mod = import_module_from(path)
    res = launch_stamp_module(mod, program, params, device=device, width=width)
    return decode_results(program, res)


def compare(program: Program, params: Mapping[str, int], got: Mapping[str, Mapping[str, Any]]
            ) -> list[str]:
    """Differences between a run's decoded results and :func:`expected_counts` (empty: pass)."""
    want = expected_counts(program, params)
    problems = []
    for part, w in want.items():
        g = got.get(part)
        if g is None:
            problems.append(f"{part}: no result")
            continue
        if g["mismatches"]:
            problems.append(f"{part}: {g['mismatches']} mismatched elements, first {g['first_bad']}")
        if not g["lanes_agree"]:
            problems.append(f"{part}: lanes disagree on done/closed counts")
        for key in ("done", "closed"):
            if g[key] != w[key]:
                problems.append(f"{part}: {key} = {g[key]}, expected {w[key]}")
    return problems


__all__ = ["stamp_kernel_source", "expected_counts", "run_stamp_kernel", "decode_results",
           "launch_stamp_module", "write_module", "import_module_from", "compare", "stamp",
           "stamp_base", "reader_views", "worker_regs", "RESULT_ROWS"]
