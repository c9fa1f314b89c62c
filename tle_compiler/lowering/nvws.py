"""emit-nvws: the pipe protocol of a verified Program as Triton 3.6 NVWS arefs, lowered by Triton.

What it does (docs/nvws.md has the findings behind each choice):

1. :func:`emit_nvws` writes TTGIR text in the one form Triton 3.6's NVWS passes take whole: every
   partition's statements, each op tagged ``{ttg.partition = array<i32: k>}``, inside one scf.for
   marked ``tt.warp_specialize`` that runs once (the partitions' own loops, ifs and events nest
   inside it, each with its own trip counts). Each (pipe, field group) is one aref
   (``nvws.aref.create`` over ``capacity`` slots); acquire/commit are ``aref.put.enter/exit``,
   wait/release ``aref.get.enter/exit``, close a put.enter + put.exit. Stage and phase operands are
   placeholders (0), as in Triton's own tests: ``nvws-assign-stage-phase`` computes them. An exit
   names its enter through the enter's token; a token that leaves a loop (a release after the
   loop) is carried out as a loop result, which assign-stage-phase follows; one that crosses the
   back-edge (a release of the previous iteration's slot) is carried as an iter_arg too, but
   assign-stage-phase does not follow it (docs/nvws.md, item 2): ``stage_hints`` writes our stage
   into the operands Triton leaves alone.
2. :func:`run_triton` parses the text with ``ir.parse_mlir_module`` and runs Triton's passes on it
   (default: ``passes.ttgpuir.add_warp_specialize``, the automatic warp specialization pipeline,
   which runs partition-scheduling (it keeps our partitions), insert-aref, SCCP/CSE,
   ``nvws-lower-aref`` (with ``nvws-assign-stage-phase`` inside), partition-loops and
   ``nvws-lower-warp-group``): the result is a ``ttg.warp_specialize`` whose partitions wait and
   arrive on ``ttng`` mbarriers that Triton allocated and counted.
3. :func:`parse_lowered` reads the mbarrier arrays Triton allocated (one empty and one full array
   per aref, in aref order) and their ``init_barrier`` counts; :meth:`Lowered.trace` interprets each
   partition's control skeleton (scf.for/if, arith on i32/i1) for concrete param values and
   returns the waits (barrier, stage, parity) and arrives (barrier, stage, count) it executes.
4. :func:`expected_ops` is what our semantics (docs/semantics.md) asks of the same values, in the
   same terms; :func:`count_rows` pairs Triton's init counts with infer-barriers' counts.

Counts: Triton derives an aref's empty count from the number of *partitions* that exit it
(``ttg.partition`` of the get.exit ops) times the async kinds of their exits, and the full count
likewise from the put.exit partitions; ``ttng.arrive_barrier %b, 1`` is one elected arrive per
partition. So Triton's counts are in partition units, the units of ``Barrier.count``; our lowering
scales by the writer's arrive unit only for cp.async fills (plan.init_count), which NVWS 3.6 does not
accept (``#nvws.async_op<cp_async>`` on a put.exit aborts: "unsupported producer kind").

:func:`emit_nvws` with ``stamp`` adds a checkable payload (the same idea as
tle_compiler/testing/stamp_kernels.py): every field is an int32 ``[capacity, W]`` ring; after each
put.enter the writer stores ``stamp(pipe, field, index) + lane`` into its fields, and after each
get.enter a reader copies every field of its view to ``log[reader, field, index, :]`` in global
memory. :func:`compile_lowered` compiles the lowered TTGIR for sm_90a (``triton.compile`` on a
``.ttgir`` file: LLVM, PTX, cubin) and :func:`run_stamp` launches it and checks the log.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Optional, Sequence

from ..ir.expr import Affine, BoolOp, Compare, Cond, ModCompare, Not
from ..ir.nodes import Event, For, If, Program, Stmt
from ..ir.record import record
from ..ir.unroll import unroll
from ..passes.roles import PipeRoles, reader_name, resolve_roles

#: ops of a trace: ("wait", aref, kind, stage, parity) / ("arrive", aref, kind, stage, count)
WAIT, ARRIVE = "wait", "arrive"
#: the async kinds nvws.aref.*.exit accepts in Triton 3.6 (NVWSAttrDefs: AsyncOp)
ASYNC_KINDS = ("none", "tma_load", "tc5mma", "tmem_copy", "cp_async", "wgmma")
STAMP_WIDTH = 32
CLOSED_TAG = 1 << 30  # added to the stamp a close writes (a close publishes no data of its own)


class NvwsError(Exception):
    """Triton refused the emitted module, or its output is not what the extraction expects.
    ``log`` holds MLIR's diagnostics (what Triton printed on stderr), ``text`` the module."""

    def __init__(self, message: str, log: str = "", text: str = ""):
        super().__init__(message + (f"\n{log.strip()}" if log.strip() else ""))
        self.log = log
        self.text = text


# ------------------------------------------------------------------------------------- the arefs

@record
class Aref:
    """One ``nvws.aref.create``: a field group of a pipe (one full and one empty mbarrier array)."""

    index: int
    pipe: str
    group: int
    fields: tuple[str, ...]
    capacity: int
    one_shot: bool
    writer: str  # partition
    readers: tuple[tuple[str, str], ...]  # (reader name, partition)

    @property
    def label(self) -> str:
        return f"{self.pipe}.g{self.group}"


def aref_plan(program: Program, roles: Optional[Mapping[str, PipeRoles]] = None) -> list[Aref]:
    """One aref per (pipe, field group), in pipe order then group order (infer-barriers' groups)."""
    roles = roles or resolve_roles(program)
    out: list[Aref] = []
    for p in program.pipes:
        r = roles[p.name]
        if r.writer is None:
            continue
        for g in r.groups:
            out.append(Aref(len(out), p.name, g.index, g.fields, p.capacity, p.one_shot, r.writer,
                            tuple((n, r.readers[n]) for n in g.readers if n in r.readers)))
    return out


def partition_order(program: Program) -> list[str]:
    """Triton's partition numbering: partition 0 becomes the default region of the
    ``ttg.warp_specialize``, so the kernel's default partition goes first."""
    parts = list(program.partitions)
    parts.sort(key=lambda p: not p.default)
    return [p.name for p in parts]


# ----------------------------------------------------------------------------------- the emitter

def _ident(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


@record
class _Key:
    """An open enter: (aref, side, index). side is "put" or "get:<reader>"."""

    aref: int
    side: str
    index: Affine


@dataclass
class StampLayout:
    """Where a stamped run logs what each reader saw: ``log[(slot * F + field) * I + index, lane]``
    with ``slot`` the reader's number (:attr:`readers`), ``F`` the most fields of a pipe, ``I`` the
    index bound the kernel was emitted for."""

    width: int
    max_index: int
    readers: list[tuple[str, str]]  # (pipe, reader name); a pipe's SPSC reader is ""
    max_fields: int
    pipe_ids: dict[str, int]
    field_ids: dict[tuple[str, str], int]
    #: load the slot with ttg.local_load where the reader holds it, instead of in a helper (makes
    #: nvws-lower-aref combine arefs: docs/nvws.md)
    direct_load: bool = False

    def slot(self, pipe: str, reader: str) -> int:
        return self.readers.index((pipe, reader))

    def offset(self, pipe: str, reader: str, fld: str, index: int) -> int:
        return ((self.slot(pipe, reader) * self.max_fields + self.field_ids[(pipe, fld)])
                * self.max_index + index) * self.width

    def stamp(self, pipe: str, fld: str, index: int, lane: int, closed: bool = False) -> int:
        base = (self.pipe_ids[pipe] * 64 + self.field_ids[(pipe, fld)]) * (1 << 16)
        return ((base + index) * 32 + lane) % (1 << 30) + (CLOSED_TAG if closed else 0)

    @property
    def log_elems(self) -> int:
        return len(self.readers) * self.max_fields * self.max_index * self.width


@dataclass
class NvwsModule:
    """The emitted TTGIR and what it was emitted from."""

    program: Program
    text: str
    arefs: list[Aref]
    partitions: list[str]  # Triton's partition order (0 = default region)
    params: list[str]  # the function's i32 arguments, in order (after ``log`` when stamped)
    unmatched: list[str] = field(default_factory=list)  # exits emitted without their enter's token
    stamp: Optional[StampLayout] = None


class _PartEmitter:
    """Emits one partition's statements (every op tagged with its Triton partition number)."""

    def __init__(self, mod: "_ModuleEmitter", k: int, name: str):
        self.m, self.k, self.name = mod, k, name
        self.tag = f"ttg.partition = array<i32: {k}>" if mod.form == "ws-loop" else ""
        self.consts: dict[tuple[int, str], str] = {}
        self.n = 0

    # -- values
    def ad(self, *extra: str, force: bool = False) -> str:
        """The attribute dictionary of an op: the partition tag (ws-loop form) and ``extra``
        (partition attributes, dropped in the warp-group form unless ``force``)."""
        if not self.tag and not force:
            return "{}"
        items = ([self.tag] if self.tag else []) + list(extra)
        return "{" + ", ".join(items) + "}"

    def fresh(self, base: str = "v") -> str:
        self.n += 1
        return f"%p{self.k}_{base}{self.n}"

    def const(self, v: int, ty: str = "i32") -> str:
        key = (v, ty)
        if key not in self.consts:
            self.consts[key] = f"%p{self.k}_c{'m' if v < 0 else ''}{abs(v)}{'' if ty == 'i32' else '_' + ty}"
        return self.consts[key]

    def const_lines(self, ind: str) -> list[str]:
        out = []
        for (v, ty), name in self.consts.items():
            lit = ("true" if v else "false") if ty == "i1" else str(v)
            out.append(f"{ind}{name} = arith.constant {self.ad()} {lit} : {ty}")
        return out

    def op(self, out: list[str], ind: str, text: str, ty: str = "i32", base: str = "v") -> str:
        r = self.fresh(base)
        head, _, tail = text.partition(" ")
        out.append(f"{ind}{r} = {head} {tail} {self.ad()} : {ty}")
        return r

    def affine(self, a: Affine, env: Mapping[str, str], out: list[str], ind: str) -> str:
        acc: Optional[str] = None
        for v, c in a.terms:
            t = env[v]
            if c != 1:
                t = self.op(out, ind, f"arith.muli {t}, {self.const(c)}")
            acc = t if acc is None else self.op(out, ind, f"arith.addi {acc}, {t}")
        if acc is None:
            return self.const(a.const)
        if a.const:
            acc = self.op(out, ind, f"arith.addi {acc}, {self.const(a.const)}")
        return acc

    def cond(self, c: Cond, env, out: list[str], ind: str) -> str:
        if isinstance(c, Compare):
            pred = {"==": "eq", "!=": "ne", "<": "slt", "<=": "sle", ">": "sgt", ">=": "sge"}[c.op]
            a, b = self.affine(c.lhs, env, out, ind), self.affine(c.rhs, env, out, ind)
            return self._cmp(pred, a, b, out, ind)
        if isinstance(c, ModCompare):
            a = self.affine(c.expr, env, out, ind)
            m = self.const(c.modulus)
            r = self.op(out, ind, f"arith.remsi {a}, {m}")
            if not c.c:  # Python's %: the sign of the modulus
                zero = self.const(0)
                fix = self.op(out, ind, f"arith.addi {r}, {m}")
                wrong = self._cmp("slt" if c.modulus > 0 else "sgt", r, zero, out, ind)
                r = self.op(out, ind, f"arith.select {wrong}, {fix}, {r}")
            return self._cmp("eq" if c.op == "==" else "ne", r, self.const(c.rem), out, ind)
        if isinstance(c, BoolOp):
            vals = [self.cond(x, env, out, ind) for x in c.items]
            acc = vals[0]
            for v in vals[1:]:
                acc = self.op(out, ind, f"arith.{'andi' if c.op == 'and' else 'ori'} {acc}, {v}", "i1")
            return acc
        if isinstance(c, Not):
            v = self.cond(c.item, env, out, ind)
            return self.op(out, ind, f"arith.xori {v}, {self.const(1, 'i1')}", "i1")
        raise TypeError(f"unknown condition {c!r}")

    def _cmp(self, pred: str, a: str, b: str, out: list[str], ind: str) -> str:
        r = self.fresh("b")
        out.append(f"{ind}{r} = arith.cmpi {pred}, {a}, {b} {self.ad()} : i32")
        return r

    # -- statements
    def body(self, stmts: Sequence[Stmt], env: dict, tokens: "_Scope", out: list[str], ind: str) -> None:
        for i, s in enumerate(stmts):
            if isinstance(s, Event):
                self.event(s, env, tokens, out, ind)
            elif isinstance(s, For):
                self.loop(s, env, tokens, out, ind, stmts[i + 1:])
            elif isinstance(s, If):
                c = self.cond(s.cond, env, out, ind)
                out.append(f"{ind}scf.if {c} {{")
                self.body(s.then, env, _Scope(tokens), out, ind + "  ")
                if s.orelse:
                    out.append(f"{ind}}} else {{")
                    self.body(s.orelse, env, _Scope(tokens), out, ind + "  ")
                out.append(f"{ind}}} {self.ad('ttg.partition.outputs = []')}")
            # slot accesses (Access) carry no synchronisation: the payload is not emitted

    def loop(self, s: For, env: dict, tokens: "_Scope", out: list[str], ind: str,
             after: Sequence[Stmt]) -> None:
        var = self.fresh(_ident(s.var))
        body_env = dict(env)
        lines: list[str] = []
        bind = ind + "  "
        if s.step > 0:
            lb, ub = self.affine(s.start, env, out, ind), self.affine(s.stop, env, out, ind)
            step, iv = self.const(s.step), var
            body_env[s.var] = var
        else:  # Python range with a negative step: count the trips, v = start + u * step
            start, stop = self.affine(s.start, env, out, ind), self.affine(s.stop, env, out, ind)
            d = self.op(out, ind, f"arith.subi {start}, {stop}")
            d = self.op(out, ind, f"arith.addi {d}, {self.const(-s.step - 1)}")
            n = self.op(out, ind, f"arith.divsi {d}, {self.const(-s.step)}")
            ub = self.op(out, ind, f"arith.maxsi {n}, {self.const(0)}")
            lb, step, iv = self.const(0), self.const(1), var
            t = self.op(lines, bind, f"arith.muli {iv}, {self.const(s.step)}")
            body_env[s.var] = self.op(lines, bind, f"arith.addi {start}, {t}")
        scope = _Scope(tokens, loop=s, pe=self)
        self.body(s.body, body_env, scope, lines, bind)
        # the last enter of each (aref, side) at the body's top level that is still open at its end
        last_of: dict[tuple[int, str], tuple[_Key, str]] = {}
        for key, tok in scope.created_top:
            if key in scope.own:
                last_of[(key.aref, key.side)] = (key, tok)
        iter_args: list[tuple[str, str]] = []  # (block argument, initial value)
        yields: list[str] = []
        pos_of: dict[tuple[int, str], int] = {}
        for key_in, arg in scope.carried_in.items():
            src = last_of.get((key_in.aref, key_in.side))
            prev = None if src is None else src[0].index.substitute(
                {s.var: Affine.of(s.var) - s.step})
            iter_args.append((arg, self.poison(out, ind)))
            if prev == key_in.index:
                yields.append(src[1])
                pos_of[(key_in.aref, key_in.side)] = len(iter_args) - 1
            else:  # the enter is not the previous iteration's: nothing Triton can follow
                yields.append(arg)
                self.m.unmatched.append(f"{self.name}: exit of {self.m.arefs[key_in.aref].label}"
                                        f"({key_in.index}) in the loop over {s.var}")
        posts: list[tuple[int, _Key]] = []
        if abs(s.step) == 1:
            last = s.stop - s.step  # the loop variable's last value (when the loop runs)
            for (a, side), (key, tok) in last_of.items():
                post = _Key(a, side, key.index.substitute({s.var: last}))
                if not _consumed_in(after, post, self.m):
                    continue
                if (a, side) not in pos_of:
                    iter_args.append((self.fresh("tok"), self.poison(out, ind)))
                    yields.append(tok)
                    pos_of[(a, side)] = len(iter_args) - 1
                posts.append((pos_of[(a, side)], post))
        outs = ", ".join(f"array<i32: {self.k}>" for _ in iter_args)
        attrs = self.ad(f"ttg.partition.outputs = [{outs}]")
        if iter_args:
            res = self.fresh("loop")
            ia = ", ".join(f"{x} = {i}" for x, i in iter_args)
            types = ", ".join("!ttg.async.token" for _ in iter_args)
            out.append(f"{ind}{res}:{len(iter_args)} = scf.for {iv} = {lb} to {ub} step {step} "
                       f"iter_args({ia}) -> ({types}) : i32 {{")
            out += lines
            out.append(f"{bind}scf.yield {self.ad()} {', '.join(yields)} : {types}")
            out.append(f"{ind}}} {attrs}")
            for pos, post in posts:
                tokens.own[post] = f"{res}#{pos}"
        else:
            out.append(f"{ind}scf.for {iv} = {lb} to {ub} step {step} : i32 {{")
            out += lines
            out.append(f"{ind}}} {attrs}")

    def poison(self, out: list[str], ind: str) -> str:
        r = self.fresh("tp")
        out.append(f"{ind}{r} = ub.poison {self.ad()} : !ttg.async.token")
        return r

    def event(self, ev: Event, env: dict, tokens, out: list[str], ind: str) -> None:
        m = self.m
        if ev.is_writer:
            arefs, side = m.by_pipe[ev.pipe], "put"
        else:
            rname = reader_name(ev, m.program.pipe(ev.pipe))
            arefs = [a for a in m.by_pipe[ev.pipe] if rname in [n for n, _ in a.readers]]
            side = f"get:{rname}"
        idx = self.affine(ev.index, env, out, ind) if (m.stage_hints or m.stamp) else None
        enter = ev.verb in ("acquire", "wait", "close")
        exit_ = ev.verb in ("commit", "release", "close")
        for a in arefs:
            key = _Key(a.index, side, ev.index)
            kind = "put" if side == "put" else "get"
            if enter:
                st, ph = self.stage_phase(a, idx, kind, out, ind)
                r = self.fresh("e")
                nb = len(m.buffers[a.index])
                views = ", ".join(m.view_type(a.index, j) for j in range(nb))
                out.append(f"{ind}{r}:{nb + 1} = nvws.aref.{kind}.enter {m.aref_name(a)}[{st}, {ph}] "
                           f"{self.ad()} : {m.aref_type(a)} -> {views}, !ttg.async.token")
                tok = f"{r}#{nb}"
                if m.stamp is not None:
                    self.stamp_payload(a, ev, kind, r, idx, out, ind)
                if exit_:  # close: its own put.exit right away
                    self.exit(a, kind, idx, tok, out, ind)
                else:
                    tokens.put(key, tok)
            elif exit_:
                tok = tokens.lookup(key)
                if tok is None:
                    m.unmatched.append(f"{self.name}: {ev.verb} {a.label}({ev.index})")
                    tok = self.poison(out, ind)
                self.exit(a, kind, idx, tok, out, ind)

    def stage_phase(self, a: Aref, idx: Optional[str], kind: str, out, ind) -> tuple[str, str]:
        if not self.m.stage_hints or idx is None:
            return self.const(0), self.const(0)
        c = self.const(a.capacity)
        st = self.op(out, ind, f"arith.remsi {idx}, {c}")
        q = self.op(out, ind, f"arith.divsi {idx}, {c}")
        ph = self.op(out, ind, f"arith.andi {q}, {self.const(1)}")
        if kind == "put":
            ph = self.op(out, ind, f"arith.xori {ph}, {self.const(1)}")
        return st, ph

    def exit(self, a: Aref, kind: str, idx: Optional[str], tok: str, out, ind) -> None:
        m = self.m
        st = self.const(0)
        if m.stage_hints and idx is not None:
            st = self.op(out, ind, f"arith.remsi {idx}, {self.const(a.capacity)}")
        kinds = m.async_kind(a, kind)
        out.append(f"{ind}nvws.aref.{kind}.exit {m.aref_name(a)}[{st}], {tok} "
                   f"[{', '.join(f'#nvws.async_op<{k}>' for k in kinds)}] {self.ad()} : "
                   f"{m.aref_type(a)}, !ttg.async.token")

    # -- the stamp payload
    def stamp_payload(self, a: Aref, ev: Event, kind: str, r: str, idx: str, out, ind) -> None:
        m, lay = self.m, self.m.stamp
        w = lay.width
        tty = f"tensor<{w}xi32, #blocked>"
        lane = self.fresh("lane")
        rng = self.ad(f"end = {w} : i32, start = 0 : i32", force=True)
        out.append(f"{ind}{lane} = tt.make_range {rng} : {tty}")
        for j, fld in enumerate(a.fields):
            view = f"{r}#{j}"
            if kind == "put":
                base = self.const(lay.stamp(a.pipe, fld, 0, 0))
                s = self.op(out, ind, f"arith.muli {idx}, {self.const(32)}")
                s = self.op(out, ind, f"arith.addi {s}, {base}")
                if ev.verb == "close":
                    s = self.op(out, ind, f"arith.addi {s}, {self.const(CLOSED_TAG)}")
                sp = self.fresh("t")
                out.append(f"{ind}{sp} = tt.splat {s} {self.ad()} : i32 -> {tty}")
                val = self.op(out, ind, f"arith.addi {sp}, {lane}", tty)
                out.append(f"{ind}ttg.local_store {val}, {view} {self.ad()} : {tty} -> "
                           f"{m.view_type(a.index, j)}")
            else:
                # the reader hands the slot to a helper that loads it and logs it: a direct
                # ttg.local_load would make nvws-lower-aref combine every aref read in one loop of
                # a partition into one (combineArefs), which asserts on our nested loops
                rname = reader_name(ev, m.program.pipe(ev.pipe))
                off0 = lay.offset(a.pipe, rname, fld, 0)
                o = self.op(out, ind, f"arith.muli {idx}, {self.const(w)}")
                o = self.op(out, ind, f"arith.addi {o}, {self.const(off0)}")
                if not lay.direct_load:
                    out.append(f"{ind}tt.call @tle_stamp_log({view}, %log, {o}) {self.ad()} : "
                               f"({m.view_type(a.index, j)}, !tt.ptr<i32>, i32) -> ()")
                    continue
                val = self.fresh("ld")
                out.append(f"{ind}{val} = ttg.local_load {view} {self.ad()} : "
                           f"{m.view_type(a.index, j)} -> {tty}")
                osp = self.fresh("t")
                out.append(f"{ind}{osp} = tt.splat {o} {self.ad()} : i32 -> {tty}")
                offs = self.op(out, ind, f"arith.addi {osp}, {lane}", tty)
                pty = f"tensor<{w}x!tt.ptr<i32>, #blocked>"
                bp, ptrs = self.fresh("t"), self.fresh("t")
                out.append(f"{ind}{bp} = tt.splat %log {self.ad()} : !tt.ptr<i32> -> {pty}")
                out.append(f"{ind}{ptrs} = tt.addptr {bp}, {offs} {self.ad()} : {pty}, {tty}")
                out.append(f"{ind}tt.store {ptrs}, {val} {self.ad()} : {pty}")


class _Scope:
    """The open enters (key → token) visible in a block. A branch of an ``if`` sees its
    enclosing block's tokens; a loop body also gets, for an exit whose index mentions the loop
    variable and whose enter is not in the body before it, a block argument (``carried_in``) that
    the loop fills with the previous iteration's token."""

    def __init__(self, parent: Optional["_Scope"] = None, loop: Optional[For] = None,
                 pe: Optional[_PartEmitter] = None):
        self.parent, self.loop, self.pe = parent, loop, pe
        self.own: dict[_Key, str] = {}
        self.created_top: list[tuple[_Key, str]] = []
        self.carried_in: dict[_Key, str] = {}

    def put(self, key: _Key, tok: str) -> None:
        self.own[key] = tok
        self.created_top.append((key, tok))

    def lookup(self, key: _Key, consume: bool = True) -> Optional[str]:
        if key in self.own:
            return self.own.pop(key) if consume else self.own[key]
        if self.loop is not None and self.loop.var in key.index.variables:
            if key not in self.carried_in:
                self.carried_in[key] = self.pe.fresh("tokin")
            return self.carried_in[key]
        return self.parent.lookup(key, False) if self.parent else None


def _consumed_in(stmts: Sequence[Stmt], key: _Key, m: "_ModuleEmitter") -> bool:
    """Whether an exit of ``key`` (same aref side and index) appears in ``stmts``."""
    from ..ir.nodes import walk_events

    a = m.arefs[key.aref]
    for ev in walk_events(tuple(stmts)):
        if ev.pipe != a.pipe or ev.verb not in ("commit", "release") or ev.index != key.index:
            continue
        side = "put" if ev.is_writer else f"get:{reader_name(ev, m.program.pipe(ev.pipe))}"
        if side == key.side:
            return True
    return False


class _ModuleEmitter:
    def __init__(self, program: Program, *, stage_hints: bool, async_ops: Optional[Mapping],
                 stamp: Optional[StampLayout], name: Optional[str], num_warps: int,
                 form: str = "ws-loop"):
        if form not in ("ws-loop", "warp-group"):
            raise ValueError(f"unknown form {form!r}")
        self.form = form
        self.program = program
        self.roles = resolve_roles(program)
        self.arefs = aref_plan(program, self.roles)
        self.by_pipe: dict[str, list[Aref]] = {}
        for a in self.arefs:
            self.by_pipe.setdefault(a.pipe, []).append(a)
        self.stage_hints, self.stamp = stage_hints, stamp
        self.async_ops = dict(async_ops or {})
        self.name = _ident(name or program.name)
        self.num_warps = num_warps
        self.unmatched: list[str] = []
        w = stamp.width if stamp else 1
        self.buffers: dict[int, list[str]] = {
            a.index: [f"!ttg.memdesc<{a.capacity}x{w}xi32, #shared, #smem, mutable>"
                      for _ in (a.fields if stamp else (None,))] for a in self.arefs}
        self.w = w

    def aref_name(self, a: Aref) -> str:
        return f"%aref{a.index}"

    def aref_type(self, a: Aref) -> str:
        return f"<[{', '.join(self.buffers[a.index])}]>"

    def view_type(self, a: int, j: int) -> str:
        return f"!ttg.memdesc<{self.w}xi32, #shared, #smem, mutable>"

    def async_kind(self, a: Aref, kind: str) -> list[str]:
        k = self.async_ops.get((a.pipe, kind)) or self.async_ops.get(kind) or "none"
        return [k] if isinstance(k, str) else list(k)

    def emit(self) -> NvwsModule:
        prog = self.program
        order = partition_order(prog)
        params = [p.name for p in prog.params]
        args = ([f"%log: !tt.ptr<i32>"] if self.stamp else []) + [f"%{_ident(p)}: i32" for p in params]
        lines = [
            f"#blocked = #ttg.blocked<{{sizePerThread = [1], threadsPerWarp = [32], "
            f"warpsPerCTA = [{self.num_warps}], order = [0]}}>",
            "#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>",
            "#smem = #ttg.shared_memory",
            f'module attributes {{"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = {self.num_warps} : i32, '
            f'ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32}} {{',
            f"  tt.func public @{self.name}({', '.join(args)}) attributes {{noinline = false}} {{",
        ]
        ind = "    "
        for a in self.arefs:
            bufs = []
            for j, ty in enumerate(self.buffers[a.index]):
                b = f"%buf{a.index}_{j}"
                lines.append(f"{ind}{b} = ttg.local_alloc : () -> {ty}  // {a.label}")
                bufs.append(b)
            lines.append(f"{ind}{self.aref_name(a)} = nvws.aref.create {', '.join(bufs)} : "
                         f"{self.aref_type(a)}")
        env0 = {p: f"%{_ident(p)}" for p in params}
        if self.form == "warp-group":
            lines.append(f"{ind}nvws.warp_group")
            for k, pname in enumerate(order):
                part = prog.partition(pname)
                pe = _PartEmitter(self, k, pname)
                body: list[str] = []
                pe.body(part.body, dict(env0), _Scope(), body, ind + "  ")
                lines.append(f"{ind}partition{k} num_warps({part.warps}) {{  // {pname}")
                lines += pe.const_lines(ind + "  ") + body
                lines.append(f"{ind}  nvws.warp_group.{'yield' if k == 0 else 'return'}")
                lines.append(f"{ind}}}")
        else:
            lines.append(f"{ind}%ws_c0 = arith.constant 0 : i32")
            lines.append(f"{ind}%ws_c1 = arith.constant 1 : i32")
            lines.append(f"{ind}scf.for %ws_iv = %ws_c0 to %ws_c1 step %ws_c1 : i32 {{")
            for k, pname in enumerate(order):
                part = prog.partition(pname)
                pe = _PartEmitter(self, k, pname)
                body = []
                lines.append(f"{ind}  // partition {k}: {pname}")
                pe.body(part.body, dict(env0), _Scope(), body, ind + "  ")
                lines += pe.const_lines(ind + "  ") + body
            ks = ", ".join(str(k) for k in range(len(order)))
            stages = ", ".join("0 : i32" for _ in order)
            lines.append(f"{ind}}} {{tt.warp_specialize, ttg.partition = array<i32: {ks}>, "
                         f"ttg.partition.outputs = [], ttg.partition.stages = [{stages}], "
                         f"ttg.warp_specialize.tag = 0 : i32}}")
        lines += [f"{ind}tt.return", "  }"]
        if self.stamp:
            w, tty = self.w, f"tensor<{self.w}xi32, #blocked>"
            pty = f"tensor<{w}x!tt.ptr<i32>, #blocked>"
            lines += [
                f"  tt.func private @tle_stamp_log(%b: {self.view_type(0, 0)}, %p: !tt.ptr<i32>, "
                f"%o: i32) attributes {{noinline = false}} {{",
                f"    %v = ttg.local_load %b : {self.view_type(0, 0)} -> {tty}",
                f"    %lane = tt.make_range {{end = {w} : i32, start = 0 : i32}} : {tty}",
                f"    %os = tt.splat %o : i32 -> {tty}",
                f"    %offs = arith.addi %os, %lane : {tty}",
                f"    %ps = tt.splat %p : !tt.ptr<i32> -> {pty}",
                f"    %ptrs = tt.addptr %ps, %offs : {pty}, {tty}",
                f"    tt.store %ptrs, %v : {pty}",
                "    tt.return",
                "  }",
            ]
        lines.append("}")
        text = "\n".join(lines) + "\n"
        return NvwsModule(prog, text, self.arefs, order, params, self.unmatched, self.stamp)


def stamp_layout(program: Program, max_index: int, width: int = STAMP_WIDTH,
                 direct_load: bool = False) -> StampLayout:
    roles = resolve_roles(program)
    readers = [(p.name, n) for p in program.pipes for n in roles[p.name].readers]
    return StampLayout(width, max_index, readers, max(len(p.fields) for p in program.pipes),
                       {p.name: i for i, p in enumerate(program.pipes)},
                       {(p.name, f): j for p in program.pipes for j, f in enumerate(p.fields)},
                       direct_load)


def emit_nvws(program: Program, *, stage_hints: bool = False, async_ops: Optional[Mapping] = None,
              stamp: Optional[StampLayout] = None, name: Optional[str] = None,
              num_warps: Optional[int] = None, form: str = "ws-loop") -> NvwsModule:
    """TTGIR text whose partitions perform ``program``'s pipe events as NVWS aref ops.

    ``stage_hints``: write our stage/phase (``i % C``, ``(i // C) & 1``, put: ``^ 1``) as the
    operands instead of 0 placeholders; Triton overwrites every operand it can derive, so what is
    left of ours shows where it could not. ``async_ops``: the ``#nvws.async_op`` kinds of the exits,
    ``{"put": "none", "get": "none"}`` by default (keys ``"put"``/``"get"`` or ``(pipe, "put")``).
    ``stamp``: add the checkable payload (:func:`stamp_layout`). ``form="warp-group"``: the form of
    Triton's test/NVWS/lower_aref.mlir instead, each partition an ``nvws.warp_group`` region with
    untagged ops (what 3.6 does with it: docs/nvws.md)."""
    warps = num_warps or next((p.warps for p in program.partitions if p.default),
                              program.partitions[0].warps)
    return _ModuleEmitter(program, stage_hints=stage_hints, async_ops=async_ops, stamp=stamp,
                          name=name, num_warps=warps, form=form).emit()


# ------------------------------------------------------------------------------- running Triton

@contextlib.contextmanager
def _captured_stderr():
    """MLIR prints its diagnostics on file descriptor 2: capture them (``log[0]``)."""
    log = [""]
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        saved = os.dup(2)
        try:
            os.dup2(tmp.fileno(), 2)
            yield log
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            log[0] = tmp.read().decode(errors="replace")


PIPELINES = {
    # the automatic warp specialization pipeline: partitions kept, arefs lowered, loops split
    "warp-specialize": lambda pm, ns: __import__("triton._C.libtriton", fromlist=["passes"])
    .passes.ttgpuir.add_warp_specialize(pm, ns),
    "assign-stage-phase": lambda pm, ns: _nvws().add_assign_stage_phase(pm),
    "lower-aref": lambda pm, ns: _nvws().add_lower_aref(pm),
    "lower-warp-group": lambda pm, ns: _nvws().add_lower_warp_group(pm),
    # Hopper's automatic warp specialization (the one that creates and lowers nvws tokens)
    "hopper-warpspec": lambda pm, ns: __import__("triton._C.libtriton", fromlist=["nvidia"])
    .nvidia.passes.hopper.add_hopper_warpspec(pm, ns, False),
    "canonicalize": lambda pm, ns: __import__("triton._C.libtriton", fromlist=["passes"])
    .passes.common.add_canonicalizer(pm),
}


def _nvws():
    from triton._C.libtriton import nvidia

    return nvidia.passes.nvws


def run_triton(text: str, pipeline: Iterable[str] = ("warp-specialize",), num_stages: int = 3) -> str:
    """Parse ``text`` (TTGIR with NVWS ops) with Triton and run ``pipeline`` (names of
    :data:`PIPELINES`); returns the resulting module's text without locations. Raises NvwsError
    with MLIR's diagnostics when parsing or a pass fails."""
    from triton._C.libtriton import ir, nvidia

    ctx = ir.context()
    ir.load_dialects(ctx)
    nvidia.load_dialects(ctx)
    with tempfile.NamedTemporaryFile("w", suffix=".ttgir", delete=False) as f:
        f.write(text)
        path = f.name
    try:
        with _captured_stderr() as log:
            try:
                mod = ir.parse_mlir_module(path, ctx)
            except Exception as e:  # noqa: BLE001 - Triton raises RuntimeError
                err = e
            else:
                err = None
        if err is not None:
            raise NvwsError(f"Triton could not parse the module: {err}", log[0], text)
        mod.context = ctx
        pm = ir.pass_manager(ctx)
        for p in pipeline:
            PIPELINES[p](pm, num_stages)
        with _captured_stderr() as log:
            try:
                pm.run(mod, "emit-nvws")
            except Exception as e:  # noqa: BLE001
                err = e
        if err is not None:
            raise NvwsError(f"Triton's {'/'.join(pipeline)} failed: {err}", log[0], text)
        return mod.str_nodebug()
    finally:
        os.unlink(path)


# --------------------------------------------------------------------- reading the lowered module

_RES = r"%[\w$.\-]+"
_VAL = re.compile(r"%[\w$.\-]+(?:#\d+)?")


@dataclass
class Op:
    name: str
    results: list[str]
    text: str  # the op's line after the name
    regions: list["Region"] = field(default_factory=list)
    line: int = 0

    @property
    def operands(self) -> list[str]:
        head = self.text.split(" : ")[0] if self.name not in ("scf.yield", "ttg.warp_yield") else self.text
        head = re.sub(r"\{[^{}]*\}", "", head)  # attribute dictionaries
        return _VAL.findall(head)


@dataclass
class Region:
    args: list[str]
    ops: list[Op]
    label: str = ""


def _split_results(s: str) -> list[str]:
    out = []
    for part in s.split(","):
        part = part.strip()
        if ":" in part:
            name, n = part.split(":")
            out += [f"{name}#{i}" for i in range(int(n))]
        else:
            out.append(part)
    return out


def parse_ops(text: str) -> list[Op]:
    """The ops of the (first) function of a printed module, with their regions (a reader for the
    subset Triton prints after the NVWS passes: one op per line, regions opened by a trailing
    ``{``)."""
    lines = [ln.rstrip() for ln in text.splitlines()]
    start = next(i for i, ln in enumerate(lines) if ln.strip().startswith("tt.func public"))
    ops, _ = _parse_block(lines, start + 1)
    return ops


_OP_RE = re.compile(r"^(?:(?P<res>%[^=]+?) = )?(?P<name>[\w.]+|\"[^\"]+\")(?P<rest>.*)$")


def _parse_block(lines: list[str], i: int) -> tuple[list[Op], int]:
    ops: list[Op] = []
    while i < len(lines):
        s = lines[i].strip()
        if not s or s.startswith("//") or s.startswith("#"):
            i += 1
            continue
        if s.startswith("}"):
            return ops, i
        m = _OP_RE.match(s)
        if not m:
            raise NvwsError(f"cannot read line {i + 1} of the lowered module: {s}")
        res = _split_results(m.group("res")) if m.group("res") else []
        op = Op(m.group("name"), res, m.group("rest"), line=i + 1)
        ops.append(op)
        if op.name == "ttg.warp_specialize":
            i = _parse_ws(lines, i + 1, op)
            continue
        if s.endswith("{"):
            args = _region_args(op)
            body, j = _parse_block(lines, i + 1)
            op.regions.append(Region(args, body, "then" if op.name == "scf.if" else "body"))
            close = lines[j].strip()
            if close.startswith("} else {"):
                body2, j = _parse_block(lines, j + 1)
                op.regions.append(Region([], body2, "else"))
            i = j + 1
            continue
        i += 1
    return ops, i


def _region_args(op: Op) -> list[str]:
    if op.name == "scf.for":
        m = re.match(r"\s*(%[\w$.\-]+) = ", op.text)
        args = [m.group(1)] if m else []
        ia = re.search(r"iter_args\((.*?)\) ->", op.text)
        if ia:
            args += re.findall(r"(%[\w$.\-]+) = ", ia.group(1))
        return args
    return []


def _parse_ws(lines: list[str], i: int, op: Op) -> int:
    while i < len(lines):
        s = lines[i].strip()
        m = re.match(r"^(default|partition\d+)(\((.*)\))?.*\{$", s)
        if not m:
            return i
        args = re.findall(r"(%[\w$.\-]+):", m.group(3) or "")
        body, j = _parse_block(lines, i + 1)
        op.regions.append(Region(args, body, m.group(1)))
        i = j + 1
    return i


# ------------------------------------------------------------------------------------ interpreter

@record
class TracedOp:
    op: str  # WAIT | ARRIVE
    aref: int
    kind: str  # "empty" | "full"
    stage: int
    value: int  # parity of a wait, count of an arrive
    line: int = 0

    @property
    def key(self) -> tuple:
        return (self.op, self.aref, self.kind, self.stage, self.value)


class _Yield(Exception):
    def __init__(self, values):
        self.values = values


def _i32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= (1 << 31) else v


class _Interp:
    def __init__(self, arrays: Mapping[str, tuple[int, str]], limit: int = 1_000_000):
        self.arrays = arrays  # alloc value name -> (aref, kind)
        self.ops: list[TracedOp] = []
        self.limit = limit

    def run(self, ops: list[Op], env: dict) -> None:
        for op in ops:
            self.step(op, env)

    def val(self, env: dict, name: str):
        if name not in env:
            raise NvwsError(f"value {name} is not defined where the lowered module uses it")
        return env[name]

    def step(self, op: Op, env: dict) -> None:
        n, t = op.name, op.text
        ops_ = op.operands
        v = lambda k: self.val(env, ops_[k])  # noqa: E731
        if n == "arith.constant":
            lit = re.sub(r"\{[^{}]*\}", "", t).split(":")[0].strip()
            env[op.results[0]] = {"true": 1, "false": 0}.get(lit, None) if lit in ("true", "false") \
                else (int(lit) if re.fullmatch(r"-?\d+", lit) else None)
        elif n in _ARITH:
            a, b = v(0), v(1)
            env[op.results[0]] = None if a is None or b is None else _ARITH[n](a, b)
        elif n == "arith.cmpi":
            pred = t.strip().split(",")[0]
            a, b = v(0), v(1)
            env[op.results[0]] = int(_CMP[pred](a, b))
        elif n == "arith.select":
            env[op.results[0]] = v(1) if v(0) else v(2)
        elif n in ("arith.extui", "arith.extsi", "arith.trunci", "arith.index_cast"):
            env[op.results[0]] = v(0)
        elif n == "ub.poison":
            env[op.results[0]] = None
        elif n == "ttg.memdesc_index":
            env[op.results[0]] = (ops_[0] if ops_[0] not in env else env[ops_[0]], v(1))
        elif n in ("ttng.wait_barrier", "ttng.arrive_barrier"):
            base, stage = v(0)
            if base not in self.arrays:
                raise NvwsError(f"{n} on {base}, not a barrier array of an aref (line {op.line})")
            aref, kind = self.arrays[base]
            if n == "ttng.wait_barrier":
                value = v(1)
            else:
                value = int(re.search(r",\s*(\d+)", t).group(1))
            self.ops.append(TracedOp(WAIT if n == "ttng.wait_barrier" else ARRIVE, aref, kind,
                                     stage, value, op.line))
            if len(self.ops) > self.limit:
                raise NvwsError("the lowered module runs more barrier operations than the limit")
        elif n == "scf.for":
            m = re.match(r"\s*(%[\w$.\-]+) = (%[\w$.\-#]+) to (%[\w$.\-#]+) step (%[\w$.\-#]+)", t)
            lb, ub, st = (self.val(env, m.group(k)) for k in (2, 3, 4))
            inits = []
            ia = re.search(r"iter_args\((.*?)\) ->", t)
            if ia:
                inits = [self.val(env, x) for x in re.findall(r"= (%[\w$.\-#]+)", ia.group(1))]
            body = op.regions[0]
            cur = inits
            iv = lb
            while iv < ub:
                benv = dict(env)
                benv[body.args[0]] = iv
                for a, x in zip(body.args[1:], cur):
                    benv[a] = x
                cur = self.region(body, benv, len(cur))
                iv += st
            for r, x in zip(op.results, cur):
                env[r] = x
        elif n == "scf.if":
            c = v(0)
            vals: list = [None] * len(op.results)
            if c:
                vals = self.region(op.regions[0], dict(env), len(op.results))
            elif len(op.regions) > 1:
                vals = self.region(op.regions[1], dict(env), len(op.results))
            for r, x in zip(op.results, vals):
                env[r] = x
        elif n in ("scf.yield", "ttg.warp_yield"):
            raise _Yield([self.val(env, x) for x in ops_])
        else:
            for r in op.results:  # anything else (allocs, payload): opaque
                env[r] = op.results[0] if n == "ttg.local_alloc" else None

    def region(self, reg: Region, env: dict, n: int) -> list:
        try:
            self.run(reg.ops, env)
        except _Yield as y:
            return y.values
        return [None] * n


_ARITH = {
    "arith.addi": lambda a, b: _i32(a + b), "arith.subi": lambda a, b: _i32(a - b),
    "arith.muli": lambda a, b: _i32(a * b), "arith.xori": lambda a, b: a ^ b,
    "arith.andi": lambda a, b: a & b, "arith.ori": lambda a, b: a | b,
    "arith.divsi": lambda a, b: int(a / b), "arith.remsi": lambda a, b: a - int(a / b) * b,
    "arith.maxsi": max, "arith.minsi": min,
}
_CMP = {"eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "slt": lambda a, b: a < b,
        "sle": lambda a, b: a <= b, "sgt": lambda a, b: a > b, "sge": lambda a, b: a >= b,
        "ult": lambda a, b: (a & 0xFFFFFFFF) < (b & 0xFFFFFFFF),
        "uge": lambda a, b: (a & 0xFFFFFFFF) >= (b & 0xFFFFFFFF)}


@dataclass
class BarrierArray:
    """An mbarrier array Triton allocated for an aref: ``counts[s]`` from ``ttng.init_barrier``."""

    value: str
    aref: int
    kind: str  # "empty" | "full"
    counts: list[int]


@dataclass
class Lowered:
    """The module Triton returned, read back."""

    text: str
    module: NvwsModule
    arrays: list[BarrierArray]
    partitions: dict[str, Region]  # IR partition name -> its region of the ttg.warp_specialize
    root: list[Op]

    def trace(self, params: Mapping[str, int]) -> dict[str, list[TracedOp]]:
        """IR partition name → the waits and arrives it executes for these param values."""
        env0: dict = {}
        fn_args = re.search(r"tt\.func public @\w+\((.*?)\)", self.text).group(1)
        names = re.findall(r"(%[\w$.\-]+):", fn_args)
        if self.module.stamp:
            names = names[1:]
        for nm, p in zip(names, self.module.params):
            env0[nm] = int(params[p])
        interp = _Interp({a.value: (a.aref, a.kind) for a in self.arrays})
        ws = None
        for op in self.root:
            if op.name == "ttg.warp_specialize":
                ws = op
                break
            try:
                interp.step(op, env0)
            except NvwsError:
                raise
        if ws is None:
            raise NvwsError("the lowered module has no ttg.warp_specialize", text=self.text)
        captured = [interp.val(env0, x) if x in env0 else x
                    for x in _VAL.findall(ws.text.split(")")[0])]
        out: dict[str, list[TracedOp]] = {}
        for name, reg in self.partitions.items():
            env = dict(env0)
            for a, x in zip(reg.args, captured):
                env[a] = x
            pi = _Interp(interp.arrays)
            pi.region(reg, env, 0)
            out[name] = pi.ops
        return out


def parse_lowered(text: str, module: NvwsModule) -> Lowered:
    """Read the barrier arrays (in aref order: empty, full) and the warp_specialize regions."""
    ops = parse_ops(text)
    allocs = [op for op in ops if op.name == "ttg.local_alloc" and re.search(r"x1xi64,", op.text)]
    if len(allocs) != 2 * len(module.arefs):
        raise NvwsError(f"expected {2 * len(module.arefs)} mbarrier arrays (an empty and a full one "
                        f"per aref), Triton allocated {len(allocs)}", text=text)
    arrays = []
    for k, op in enumerate(allocs):
        cap = int(re.search(r"memdesc<(\d+)x1xi64", op.text).group(1))
        arrays.append(BarrierArray(op.results[0], k // 2, "empty" if k % 2 == 0 else "full",
                                   [0] * cap))
    by_value = {a.value: a for a in arrays}
    env: dict = {}
    for op in ops:
        if op.name == "arith.constant":
            _Interp({}).step(op, env)
        elif op.name == "ttg.memdesc_index":
            env[op.results[0]] = (op.operands[0], env.get(op.operands[1]))
        elif op.name == "ttng.init_barrier":
            base, s = env[op.operands[0]]
            by_value[base].counts[s] = int(re.search(r",\s*(\d+)", op.text).group(1))
    ws = [op for op in ops if op.name == "ttg.warp_specialize"]
    if len(ws) != 1:
        raise NvwsError(f"expected one ttg.warp_specialize, found {len(ws)}", text=text)
    regions = ws[0].regions
    if len(regions) != len(module.partitions):
        raise NvwsError(f"the warp_specialize has {len(regions)} regions, the kernel "
                        f"{len(module.partitions)} partitions", text=text)
    parts = {name: reg for name, reg in zip(module.partitions, regions)}
    return Lowered(text, module, arrays, parts, ops)


def lower(module: NvwsModule, num_stages: int = 3) -> Lowered:
    """Run Triton's automatic warp specialization pipeline on the emitted module and read it back."""
    return parse_lowered(run_triton(module.text, ("warp-specialize",), num_stages), module)


# ------------------------------------------------------------------------------------ expectation

def expected_ops(program: Program, arefs: Sequence[Aref], params: Mapping[str, int],
                 nvws: bool = True) -> dict[str, list[tuple]]:
    """Partition name → the (op, aref, kind, stage, parity|count) its events ask for, by
    docs/semantics.md: acquire/close wait every group's empty at ``φ ^ 1``, commit/close arrive on
    every group's full, wait waits the reader's groups' full at ``φ``, release arrives on their
    empty; one arrive per partition (count 1). ``nvws=True``: as an aref also has an empty barrier
    on a one-shot pipe, its acquire waits it (parity 1: a fresh barrier passes) and its release
    arrives on it; ``nvws=False``: our lowering's one-shot (no empty barrier)."""
    by_pipe: dict[str, list[Aref]] = {}
    for a in arefs:
        by_pipe.setdefault(a.pipe, []).append(a)
    out: dict[str, list[tuple]] = {}
    for part, insts in unroll(program, params).items():
        ops: list[tuple] = []
        for inst in insts:
            ev = inst.event
            if not isinstance(ev, Event):
                continue
            pipe = program.pipe(ev.pipe)
            i, cap = inst.index, pipe.capacity
            stage, phase = (0, 0) if pipe.one_shot else (i % cap, (i // cap) & 1)
            empty = nvws or not pipe.one_shot
            rname = "" if ev.is_writer else reader_name(ev, pipe)
            mine = [a for a in by_pipe[ev.pipe]
                    if ev.is_writer or rname in [n for n, _ in a.readers]]
            if ev.verb in ("acquire", "close") and empty:
                ops += [(WAIT, a.index, "empty", stage, phase ^ 1) for a in mine]
            if ev.verb in ("commit", "close"):
                ops += [(ARRIVE, a.index, "full", stage, 1) for a in mine]
            if ev.verb == "wait":
                ops += [(WAIT, a.index, "full", stage, phase) for a in mine]
            if ev.verb == "release" and empty:
                ops += [(ARRIVE, a.index, "empty", stage, 1) for a in mine]
        out[part] = ops
    return out


def compare_traces(expected: Mapping[str, list[tuple]], traced: Mapping[str, list[TracedOp]],
                   arefs: Sequence[Aref]) -> list[str]:
    """One message per partition whose traced operations differ from the expected ones."""
    problems = []
    fmt = lambda o: (f"{o[0]} {arefs[o[1]].label}.{o[2]}[{o[3]}]"  # noqa: E731
                     + (f" @ parity {o[4]}" if o[0] == WAIT else f" x{o[4]}"))
    for part, exp in expected.items():
        got = [t.key for t in traced.get(part, [])]
        if got == exp:
            continue
        pos = next((k for k, (a, b) in enumerate(zip(exp, got)) if a != b), min(len(exp), len(got)))
        problems.append(
            f"partition '{part}': {len(got)} barrier operations traced, {len(exp)} expected; first "
            f"difference at #{pos}: expected {fmt(exp[pos]) if pos < len(exp) else 'nothing'}, "
            f"Triton's {fmt(got[pos]) if pos < len(got) else 'nothing'}")
    return problems


@record
class CountRow:
    """One mbarrier array: Triton's init counts per stage next to infer-barriers' (None: we
    allocate no such barrier, a one-shot pipe's empty)."""

    aref: Aref
    kind: str
    triton: tuple[int, ...]
    ours: Optional[tuple[int, ...]]

    @property
    def label(self) -> str:
        return f"{self.aref.pipe}.{self.kind}[g{self.aref.group}]"


def count_rows(lowered: Lowered, barriers: Sequence) -> list[CountRow]:
    """Triton's init counts (partition units: one elected arrive per partition) beside
    ``run_pipeline(program).barriers`` counts, array by array."""
    rows = []
    for arr in lowered.arrays:
        a = lowered.module.arefs[arr.aref]
        ours = sorted((b.stage, b.count) for b in barriers
                      if b.pipe == a.pipe and b.group == a.group and b.kind == arr.kind)
        rows.append(CountRow(a, arr.kind, tuple(arr.counts),
                             tuple(c for _, c in ours) if ours else None))
    return rows


# ----------------------------------------------------------------------- compiling and running

def compile_lowered(lowered_text: str, name: str = "nvws_kernel"):
    """``triton.compile`` of the lowered TTGIR (stages llir → ptx → cubin) for sm_90a."""
    import triton
    from triton.backends.compiler import GPUTarget

    d = tempfile.mkdtemp(prefix="tle_nvws_")
    path = os.path.join(d, f"{name}.ttgir")
    with open(path, "w") as f:
        f.write(lowered_text)
    return triton.compile(path, target=GPUTarget("cuda", 90, 32))


def run_stamp(program: Program, params: Mapping[str, int], max_index: Optional[int] = None,
              stage_hints: bool = False, device: str = "cuda") -> dict:
    """Emit the stamped module, lower it with Triton's NVWS pipeline, compile and launch it (grid
    (1,)), and compare every logged slot with the stamp its writer stored. Returns ``{"mismatches":
    [...], "checked": n, "lowered": Lowered}``."""
    import torch

    top = max([inst.index for insts in unroll(program, params).values() for inst in insts
               if isinstance(inst.event, Event)] + [0]) + 1
    if max_index is None:
        max_index = top
    elif top > max_index:
        raise ValueError(f"indices reach {top - 1}, the log holds {max_index}")
    lay = stamp_layout(program, max_index)
    mod = emit_nvws(program, stamp=lay, stage_hints=stage_hints)
    low = lower(mod)
    kernel = compile_lowered(low.text, mod.program.name)
    log = torch.full((lay.log_elems,), -1, dtype=torch.int32, device=device)
    kernel[(1, 1, 1)](log, *[int(params[p]) for p in mod.params])
    torch.cuda.synchronize()
    mismatches, checked = check_stamp_log(program, params, lay, log.cpu().tolist())
    return {"mismatches": mismatches, "checked": checked, "lowered": low}


def check_stamp_log(program: Program, params: Mapping[str, int], lay: StampLayout,
                    got: Sequence[int]) -> tuple[list[tuple], int]:
    """Compare a stamped run's log with the stamps: for every wait of every reader, each field of
    its view at that index must hold ``stamp(pipe, field, index) + lane`` (with the closed tag
    when the writer closed that index). Returns (mismatches, elements checked); a mismatch is
    (partition, pipe, reader, field, index, lane, logged, expected)."""
    traces = unroll(program, params)
    arefs = aref_plan(program)
    closed = {(inst.event.pipe, inst.index) for insts in traces.values() for inst in insts
              if isinstance(inst.event, Event) and inst.event.verb == "close"}
    mismatches, checked = [], 0
    for part, insts in traces.items():
        for inst in insts:
            ev = inst.event
            if not isinstance(ev, Event) or ev.verb != "wait":
                continue
            rname = reader_name(ev, program.pipe(ev.pipe))
            view = [f for a in arefs if a.pipe == ev.pipe
                    and rname in [n for n, _ in a.readers] for f in a.fields]
            for fld in view:
                off = lay.offset(ev.pipe, rname, fld, inst.index)
                for lane in range(lay.width):
                    want = lay.stamp(ev.pipe, fld, inst.index, lane, (ev.pipe, inst.index) in closed)
                    checked += 1
                    if got[off + lane] != want:
                        mismatches.append((part, ev.pipe, rname, fld, inst.index, lane,
                                           got[off + lane], want))
    return mismatches, checked


# ------------------------------------------------------------------- running the traces (on a CPU)

def simulate(lowered: Lowered, traces: Mapping[str, list[TracedOp]]) -> Optional[str]:
    """Run the traced partitions over mbarrier semantics (docs/semantics.md: an arrive lowers
    ``pending``; at zero the phase completes; a wait at parity ``p`` passes once ``completed mod 2
    != p``), each partition as far as it can, round-robin. Returns None when every partition ends,
    else a description of where each one is stuck (a deadlock of this schedule)."""
    count = {(a.aref, a.kind, s): c for a in lowered.arrays for s, c in enumerate(a.counts)}
    pending = dict(count)
    completed = {k: 0 for k in count}
    pos = {p: 0 for p in traces}
    progress = True
    while progress:
        progress = False
        for p, ops in traces.items():
            while pos[p] < len(ops):
                o = ops[pos[p]]
                k = (o.aref, o.kind, o.stage)
                if o.op == WAIT:
                    if completed[k] % 2 == o.value:
                        break
                else:
                    pending[k] -= o.value
                    while pending[k] <= 0:
                        completed[k] += 1
                        pending[k] += count[k]
                pos[p] += 1
                progress = True
    stuck = {p: ops[pos[p]] for p, ops in traces.items() if pos[p] < len(ops)}
    if not stuck:
        return None
    arefs = lowered.module.arefs
    return "; ".join(f"{p} waits {arefs[o.aref].label}.{o.kind}[{o.stage}] @ parity {o.value} "
                     f"(operation #{pos[p]} of {len(traces[p])})" for p, o in stuck.items())
