"""Run the control skeleton of a generated Gluon module and compare its barrier operations with the
verified Pipe IR.

The lowering re-reads a kernel's Python AST, so nothing but a test ties the mbarrier code it emits to
the events the verifier checked. This module is that test's machinery:

* :func:`trace_gluon` interprets a Gluon module as Triton would run it, keeping only what decides
  control flow: the ``@gluon.jit`` kernel's prologue (integer scalars; tensors, pointers and floats
  are opaque), ``gl.warp_specialize`` into each partition function with its arguments, and in each
  partition its loops (builtin ``range`` with Triton's handling of negative constant steps,
  ``gl.static_range``), ``if``\\ s and integer assignments. Integers follow Triton: constexprs
  (Python ints, names annotated ``gl.constexpr``) use Python ``//`` and ``%``; runtime values (loop
  variables of ``range``, runtime kernel arguments, a number a jit function assigns to a name
  without the annotation, anything computed from them) are 32-bit (64 when declared so) with C semantics
  (truncating ``//``, a remainder with the dividend's sign, wrap-around). It records, per
  partition, every mbarrier wait / arrive / expect (the plain calls, debug-waits' bounded waits and
  eager publish's per-thread arrives, lowering/debug.py and lowering/eager.py), the barrier and
  stage every TMA copy completes on (a verified TMA access must signal its group's full barrier at
  its slot's stage), and every wgmma issue
  and ``warpgroup_mma_wait``; at each arrive on an *empty* barrier (a release) it checks that no
  wgmma reading the released stage of one of that pipe's rings (or a stage the interpreter cannot
  tell) can still be in flight (groups retire in issue order: ``warpgroup_mma_wait(n)`` leaves the
  n most recent). A barrier operation whose execution depends on data (a condition or loop bound
  the interpreter cannot evaluate) is an error: the protocol must not depend on data. A wgmma wait
  there is not: it may be skipped, so what it would retire stays in flight for the check.
* A kernel-level integer the prologue computes from what the interpreter cannot know (loaded data,
  program ids: a decode kernel's trip count read from ``cache_seqlens``) is, like a runtime
  argument, a value the caller chooses: ``pins`` binds such a name to an integer at its
  assignments in the kernel body, and the partitions then run with that value. A pin must name a
  kernel-body name that at least one of its assignments computes from such a value (a name the
  arguments and constexprs determine is set through them, an argument is given), so a pin stands
  only for what the interpreter could not compute. :func:`data_dependent_names` says which names
  need one.
* :func:`expected_ops` unrolls the verified Program for the same param values and maps every event to
  the barrier operations docs/semantics.md and the plan (barrier arrays, field groups, arrive units)
  prescribe.
* :func:`compare` and :class:`LoweredKernel` put the two side by side, per partition, as lists of
  ``(op, barrier array, stage, parity)``.
"""

from __future__ import annotations

import ast
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Optional, Sequence

from ..ir.nodes import Event, Program
from ..lowering.pipes import NAMED_RELEASE_MARK
from ..ir.record import record
from ..ir.unroll import Instance, unroll

#: Refuse to run a loop longer than this (a guard against runaway bounds).
MAX_TRIPS = 1_000_000

# Operation names in traces (the first element of a key).
WAIT = "wait"  # mbarrier.wait, or a debug-waits bounded wait
ARRIVE = "arrive"  # mbarrier.arrive(bar, count=1): one elected arrive after a partition bar.sync
ARRIVE_CP_ASYNC = "arrive.cp_async"  # async_copy.mbarrier_arrive(bar, increment_count=False)
ARRIVE_THREAD = "arrive.thread"  # eager publish: every thread arrives (lowering/eager.py)
EXPECT = "expect"  # mbarrier.expect(bar, bytes)
NAMED_ARRIVE = "bar.arrive"  # a named-barrier pipe's commit: bar.arrive ID, THREADS (inline asm)
NAMED_SYNC = "bar.sync"  # a named-barrier pipe's wait: bar.sync ID, THREADS (inline asm)
_NAMED_ASM = re.compile(r"^bar\.(arrive|sync) (\d+), (\d+); mov\.b32 \$0, 0;$")
TMA = "tma"  # tma.async_copy_global_to_shared(desc, coord, bar, dst): completes on bar (expect-tx)

#: Partition-function helpers of the generated module whose calls are barrier operations (the
#: inline asm in them addresses a barrier by its shared-memory offset, lowering/debug.py, eager.py).
_DEBUG_WAIT = "_tle_try_wait"
_EAGER_ARRIVE = re.compile(r"_tle_arrive_(w\d+|x)$")
_OFFSET_PREFIX = "_TLE_OFF_"  # module constant: a barrier array's shared-memory offset


class TraceError(Exception):
    """The module cannot be traced, or its protocol depends on data (with the generated line)."""

    def __init__(self, message: str, line: int = 0, text: str = ""):
        self.line = line
        super().__init__((f"generated line {line}: " if line else "") + message
                         + (f"\n    {text.strip()}" if text else ""))


# ------------------------------------------------------------------------------------------- values

class _Opaque:
    """A value the interpreter does not track: a tensor, a pointer, a float, data."""

    def __repr__(self) -> str:
        return "<opaque>"


OPAQUE = _Opaque()


@record
class RInt:
    """A runtime integer (an i32 or i64 tensor scalar in Triton) whose value is known."""

    value: int
    bits: int = 32


@record
class Smem:
    """A shared-memory allocation; ``barrier``: an mbarrier array of ``stages`` barriers."""

    name: str
    barrier: bool = False
    stages: Optional[int] = None


@record
class SmemView:
    """``smem.index(stage)`` (and views of it: permute, slice)."""

    base: Smem
    stage: object


@record
class BarAddr:
    """A barrier's shared-memory address as inline asm gets it: ``_TLE_OFF_<array> + offset``."""

    array: str
    offset: object


@record
class _Qual:
    """A module or a module attribute: ``gl``, ``gl.where``, ``mbarrier.wait``, builtin ``range``."""

    name: str


@record
class _Method:
    """``base.attr`` of a value that is not a module: called as a method, or read (opaque)."""

    base: object
    attr: str


@record
class _Alloc:
    """``gl.allocate_shared_memory(...)`` before it is bound to a name (then an :class:`Smem`)."""

    barrier: bool
    stages: Optional[int]


_MBAR_LAYOUT = _Qual("mbarrier.MBarrierLayout()")


# -------------------------------------------------------------------------------------------- trace

@record
class BarrierOp:
    """One barrier operation executed by a partition; ``line`` is in the generated source and
    ``when`` names the loop variables at that point."""

    op: str
    array: str
    stage: int
    parity: Optional[int] = None
    line: int = 0
    when: str = ""

    @property
    def key(self) -> tuple:
        return (self.op, self.array, self.stage, self.parity)

    def __str__(self) -> str:
        return _fmt_key(self.key)


@record
class WgmmaOp:
    """A wgmma issue (``reads``: the (ring, stage) its shared-memory operands read, stage None when
    the interpreter cannot tell it) or a ``warpgroup_mma_wait(pending)``."""

    op: str  # "issue" | "wait"
    reads: frozenset = frozenset()
    pending: Optional[int] = None
    is_async: bool = True
    line: int = 0
    when: str = ""


@dataclass
class PartitionTrace:
    index: int  # position in gl.warp_specialize (0: the default partition)
    function: str
    ops: list[BarrierOp] = field(default_factory=list)
    events: list = field(default_factory=list)  # BarrierOps and WgmmaOps in program order
    violations: list[str] = field(default_factory=list)

    @property
    def keys(self) -> list[tuple]:
        return [o.key for o in self.ops]


@dataclass
class Trace:
    kernel: str
    prologue: dict[str, int]  # the kernel's integer names at gl.warp_specialize (args included)
    barriers: dict[str, int]  # barrier array -> number of barriers
    inits: dict[tuple[str, int], int]  # (array, stage) -> init count
    partitions: list[PartitionTrace]
    violations: list[str]  # in the kernel prologue and in every partition
    pinned: dict[str, int] = field(default_factory=dict)  # the pins the prologue ran with
    unknown: frozenset = frozenset()  # prologue names whose value the interpreter cannot compute

    def partition(self, function: str) -> PartitionTrace:
        return next(p for p in self.partitions if p.function == function)


def _fmt_key(key: tuple) -> str:
    op, arr, stage, parity = key
    return f"{op} {arr}[{stage}]" + (f" @ parity {parity}" if parity is not None else "")


# ----------------------------------------------------------------------------------- integer model

def _wrap(v: int, bits: int) -> int:
    """``v`` as a signed ``bits``-bit integer (an i1 is 0 or 1: a truth value)."""
    if bits == 1:
        return v & 1
    m = 1 << bits
    v &= m - 1
    return v - m if v >= m >> 1 else v


def _is_int(v) -> bool:
    """A known integer: a constexpr (bools included, as Triton's constexprs) or a runtime one."""
    return isinstance(v, (int, RInt))


def _ival(v) -> int:
    return v.value if isinstance(v, RInt) else int(v)


def _bits_of_const(v: int) -> int:
    """The width Triton gives a constexpr operand of a runtime operation: i32 when it fits, else 64
    (Triton types [2^31, 2^32) as uint32; no pipe index or trip count comes near it)."""
    return 32 if -(1 << 31) <= v < (1 << 31) else 64


def _c_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


def _arith(a, b, op: str, line: int):
    """``a op b`` as Triton computes it (see the module docstring)."""
    if isinstance(a, BarAddr) or isinstance(b, BarAddr):
        if op == "+" and isinstance(a, BarAddr) and not isinstance(b, BarAddr):
            return BarAddr(a.array, _arith(a.offset, b, "+", line) if _is_int(b) else OPAQUE)
        if op == "+" and isinstance(b, BarAddr) and not isinstance(a, BarAddr):
            return BarAddr(b.array, _arith(a, b.offset, "+", line) if _is_int(a) else OPAQUE)
        raise TraceError(f"unrecognised arithmetic on a barrier address ({op})", line)
    if not (_is_int(a) or isinstance(a, float)) or not (_is_int(b) or isinstance(b, float)):
        return OPAQUE
    runtime = isinstance(a, RInt) or isinstance(b, RInt)
    if not runtime:  # constexprs: Python
        try:
            return _PY_OPS[op](a, b)
        except ZeroDivisionError:
            raise TraceError(f"constexpr division by zero ({a} {op} {b})", line) from None
        except KeyError:
            return OPAQUE
    if isinstance(a, float) or isinstance(b, float) or op in ("/", "**"):
        return OPAQUE  # a float result
    bits = max(a.bits if isinstance(a, RInt) else _bits_of_const(int(a)),
               b.bits if isinstance(b, RInt) else _bits_of_const(int(b)))
    x, y = _ival(a), _ival(b)
    if op in ("//", "%") and y == 0:
        raise TraceError(f"runtime integer division by zero ({x} {op} {y})", line)
    if op == "//":
        r = _c_div(x, y)
    elif op == "%":
        r = x - y * _c_div(x, y)
    elif op == ">>":
        r = x >> y
    elif op == "<<":
        r = x << y
    else:
        r = _PY_OPS[op](x, y)
    return RInt(_wrap(r, bits), bits)


_PY_OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
           "/": lambda a, b: a / b, "//": lambda a, b: a // b, "%": lambda a, b: a % b,
           "&": lambda a, b: a & b, "|": lambda a, b: a | b, "^": lambda a, b: a ^ b,
           "<<": lambda a, b: a << b, ">>": lambda a, b: a >> b, "**": lambda a, b: a ** b}
_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
           ast.Mod: "%", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<",
           ast.RShift: ">>", ast.Pow: "**"}
_CMPOPS = {ast.Lt: lambda a, b: a < b, ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b,
           ast.GtE: lambda a, b: a >= b, ast.Eq: lambda a, b: a == b,
           ast.NotEq: lambda a, b: a != b}


def _known(v) -> bool:
    """A value whose truth the interpreter knows (a constexpr or a known runtime integer)."""
    return isinstance(v, (int, float, str, RInt)) or v is None


def _truth(v) -> bool:
    return bool(v.value) if isinstance(v, RInt) else bool(v)


def _has_barrier(v) -> bool:
    if isinstance(v, Smem):
        return v.barrier
    if isinstance(v, SmemView):
        return v.base.barrier
    if isinstance(v, BarAddr):
        return True
    if isinstance(v, (tuple, list)):
        return any(_has_barrier(x) for x in v)
    if isinstance(v, dict):
        return any(_has_barrier(x) for x in v.values())
    if isinstance(v, _Method):
        return _has_barrier(v.base)
    return False


_CANON_MODULES = {
    "triton.experimental.gluon.language": "gl",
    "triton.experimental.gluon": "gluon",
    "triton.language": "tl",
}


class _Return(Exception):
    def __init__(self, value):
        self.value = value


# ------------------------------------------------------------------------------------- interpreter

class _Interpreter:
    def __init__(self, source: str, release_rings: Mapping[str, Iterable[str]],
                 pins: Optional[Mapping[str, int]] = None):
        self.source = source
        self.lines = source.splitlines()
        self.tree = ast.parse(source)
        self.release_rings = {k: frozenset(v) for k, v in release_rings.items()}
        self.globals: dict[str, object] = {}
        self.functions: dict[str, ast.FunctionDef] = {}
        self.dry = 0  # > 0: inside a branch or loop whose execution depends on data
        self._dry_why: Optional[tuple[str, int]] = None  # the outermost such construct, its line
        self.part: Optional[PartitionTrace] = None
        self.inflight: list[WgmmaOp] = []
        self.loops: list[tuple[str, object]] = []  # (loop variable, its value), outermost first
        self.barriers: dict[str, int] = {}
        self.inits: dict[tuple[str, int], int] = {}
        self.violations: list[str] = []
        self.partitions: list[tuple[ast.FunctionDef, tuple]] = []
        # pins: kernel-level name -> the runtime integer it is bound to (see the module docstring)
        self.pins: dict[str, RInt] = {}
        for k, v in (pins or {}).items():
            if not isinstance(v, int) or isinstance(v, bool) or _wrap(v, 32) != v:
                raise TraceError(f"pin {k}={v!r}: a pin is an i32 integer")
            self.pins[k] = RInt(v)
        self.kernel_env: Optional[dict] = None  # the kernel body's names (where pins apply)
        self.pin_unknown: dict[str, bool] = {}  # pinned name -> some assignment was data-dependent
        self._module()

    # ------------------------------------------------------------------ module level
    def _module(self) -> None:
        for st in self.tree.body:
            if isinstance(st, ast.ImportFrom) and st.module:
                for a in st.names:
                    full = f"{st.module}.{a.name}"
                    self.globals[a.asname or a.name] = _Qual(_CANON_MODULES.get(full, a.name))
            elif isinstance(st, ast.Import):
                for a in st.names:
                    self.globals[a.asname or a.name] = _Qual(_CANON_MODULES.get(a.name, a.name))
            elif isinstance(st, ast.FunctionDef):
                self.functions[st.name] = st
            elif isinstance(st, (ast.Assign, ast.AnnAssign)):
                self.exec(st, self.globals)

    def err(self, msg: str, node: Optional[ast.AST]) -> TraceError:
        line = getattr(node, "lineno", 0)
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        return TraceError(msg, line, text)

    def where(self) -> str:
        return ", ".join(f"{v}={_ival(x) if _is_int(x) else '?'}" for v, x in self.loops)

    # ------------------------------------------------------------------ the kernel
    def run_kernel(self, name: str, args: Mapping[str, object], constexprs: Mapping[str, object],
                   int64: Iterable[str], partitions: bool = True) -> Trace:
        fdef = self.functions.get(name)
        if fdef is None:
            raise TraceError(f"the module has no function '{name}'")
        int64 = set(int64)
        env: dict[str, object] = {}
        for a in fdef.args.args:
            if a.annotation is not None and ast.unparse(a.annotation).endswith("constexpr"):
                if a.arg not in constexprs:
                    raise TraceError(f"constexpr argument '{a.arg}' of '{name}' needs a value")
                env[a.arg] = constexprs[a.arg]
            elif a.arg in args and isinstance(args[a.arg], int) and not isinstance(args[a.arg], bool):
                bits = 64 if a.arg in int64 else 32
                v = int(args[a.arg])
                if _wrap(v, bits) != v:
                    raise TraceError(f"argument {a.arg}={v} does not fit in i{bits}")
                env[a.arg] = RInt(v, bits)
            else:
                env[a.arg] = OPAQUE  # a pointer, a float, or a value not given
        self.kernel_env = env
        self.block(fdef.body, env)
        if not self.partitions:
            raise TraceError(f"'{name}' calls no gl.warp_specialize")
        self._check_pins(name, fdef, env)
        prologue = {k: _ival(v) for k, v in env.items() if _is_int(v) and not isinstance(v, bool)}
        unknown = frozenset(k for k, v in env.items() if v is OPAQUE)
        traces = []
        if partitions:
            for i, (fn, fargs) in enumerate(self.partitions):
                traces.append(self.run_partition(i, fn, fargs))
        return Trace(name, prologue, dict(self.barriers), dict(self.inits), traces,
                     self.violations + [v for t in traces for v in t.violations],
                     {k: v.value for k, v in self.pins.items()}, unknown)

    def _pin(self, name: str, v, env: dict):
        """The value an assignment binds ``name`` to: its pin, where it has one and the
        assignment is in the kernel body (not in a helper it calls)."""
        if env is not self.kernel_env or name not in self.pins:
            return v
        self.pin_unknown[name] = self.pin_unknown.get(name, False) or not _is_int(v)
        return self.pins[name]

    def _check_pins(self, kernel: str, fdef: ast.FunctionDef, env: dict) -> None:
        """Every pin names a kernel-body integer that depends on what the interpreter cannot
        know: a pin never replaces a value the arguments determine."""
        args = {a.arg for a in fdef.args.args}
        for name in self.pins:
            if name in args:
                raise TraceError(f"pin {name}: '{name}' is an argument of '{kernel}'; give its "
                                 f"value as an argument")
            if name not in self.pin_unknown:
                raise TraceError(f"pin {name}: the body of '{kernel}' assigns no '{name}' before "
                                 f"gl.warp_specialize")
            if not self.pin_unknown[name]:
                raise TraceError(f"pin {name}: '{kernel}' computes '{name}' from its arguments and "
                                 f"constexprs; set those instead of pinning it")

    def run_partition(self, index: int, fn: ast.FunctionDef, args: tuple) -> PartitionTrace:
        params = [a.arg for a in fn.args.args]
        if len(params) != len(args):
            raise self.err(f"partition '{fn.name}' takes {len(params)} arguments, gets {len(args)}", fn)
        self.part = PartitionTrace(index, fn.name)
        self.inflight = []
        self.loops = []
        try:
            self.block(fn.body, dict(zip(params, args)))
        except _Return:
            pass
        part, self.part = self.part, None
        return part

    # ------------------------------------------------------------------ statements
    def block(self, stmts: list[ast.stmt], env: dict) -> None:
        for st in stmts:
            self.exec(st, env)

    def exec(self, st: ast.stmt, env: dict) -> None:
        if isinstance(st, ast.Assign):
            v = self.eval(st.value, env)
            if env is not self.globals and isinstance(v, int) and not isinstance(v, bool) \
                    and all(isinstance(t, ast.Name) for t in st.targets) \
                    and not self._constexpr_call(st.value):
                # in a jit function Triton (code_generator.visit_Assign) makes a number assigned
                # to a name a tensor: `M = -7` is an i32, whose `//` and `%` are C's
                # (`M: gl.constexpr = -7` stays a constexpr: the AnnAssign below)
                v = RInt(_wrap(v, _bits_of_const(v)), _bits_of_const(v))
            for t in st.targets:
                self.bind(t, v, env, st)
        elif isinstance(st, ast.AnnAssign):
            if st.value is not None:
                self.bind(st.target, self.eval(st.value, env), env, st)
        elif isinstance(st, ast.AugAssign):
            if not isinstance(st.target, ast.Name):
                raise self.err("only `name op= value` is supported", st)
            cur = self.lookup(st.target.id, env, st)
            self.bind(st.target, _arith(cur, self.eval(st.value, env), _BINOPS[type(st.op)],
                                        st.lineno), env, st)
        elif isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant) \
                and isinstance(st.value.value, str):
            mark = st.value.value
            if mark.startswith(NAMED_RELEASE_MARK) and self.part is not None:
                # a named pipe's release (lowering/pipes.py): no arrive, but the slot goes back
                key = "named:" + mark[len(NAMED_RELEASE_MARK):].strip()
                if key in self.release_rings:
                    self._check_release(key, None, st.lineno, self.where(), str(mark))
        elif isinstance(st, ast.Expr):
            self.eval(st.value, env)
        elif isinstance(st, ast.For):
            self.exec_for(st, env)
        elif isinstance(st, ast.If):
            self.exec_if(st, env)
        elif isinstance(st, ast.While):
            self.exec_while(st, env)
        elif isinstance(st, ast.Return):
            raise _Return(self.eval(st.value, env) if st.value is not None else None)
        elif isinstance(st, ast.Pass):
            pass
        else:
            raise self.err(f"unsupported statement {type(st).__name__}", st)

    @staticmethod
    def _constexpr_call(e: ast.AST) -> bool:
        """Whether ``e`` is `gl.constexpr(...)` / `tl.constexpr(...)` (a constexpr value)."""
        return isinstance(e, ast.Call) and ast.unparse(e.func).split(".")[-1] == "constexpr"

    def bind(self, target: ast.AST, v, env: dict, node: ast.AST) -> None:
        if isinstance(target, ast.Name):
            if isinstance(v, _Alloc):
                v = Smem(target.id, v.barrier, v.stages)
                if v.barrier:
                    self.barriers[v.name] = v.stages
            env[target.id] = self._pin(target.id, v, env)
        elif isinstance(target, (ast.Tuple, ast.List)):
            if isinstance(v, (tuple, list)) and len(v) == len(target.elts):
                for t, x in zip(target.elts, v):
                    self.bind(t, x, env, node)
            elif v is OPAQUE:
                for t in target.elts:
                    self.bind(t, OPAQUE, env, node)
            else:
                raise self.err("cannot unpack this value", node)
        else:
            raise self.err(f"unsupported assignment target `{ast.unparse(target)}`", node)

    def exec_if(self, st: ast.If, env: dict) -> None:
        c = self.eval(st.test, env)
        if self.dry or not _known(c):
            self.dry_blocks([st.body, st.orelse], env, "an `if` whose condition depends on data", st)
            return
        self.block(st.body if _truth(c) else st.orelse, env)

    def exec_while(self, st: ast.While, env: dict) -> None:
        """A ``while`` loop (scf.while): the condition is evaluated before every iteration; one
        that depends on data runs the body once in dry mode (no barrier or wgmma operation may
        be in it)."""
        if st.orelse:
            raise self.err("a while loop with an else", st)
        trips = 0
        while True:
            c = self.eval(st.test, env)
            if self.dry or not _known(c):
                self.dry_blocks([st.body], env, "a `while` loop whose condition depends on data",
                                st)
                return
            if not _truth(c):
                return
            trips += 1
            if trips > MAX_TRIPS:
                raise self.err(f"while loop runs more than {MAX_TRIPS} times", st)
            self.block(st.body, env)

    def dry_blocks(self, blocks: list[list[ast.stmt]], env: dict, why: str, node: ast.AST) -> None:
        """Run ``blocks`` in dry mode: any barrier or wgmma operation in them is an error (``why``),
        and every name they assign becomes opaque."""
        assigned: set[str] = set()
        with self.dry_mode(why, node):
            try:
                for b in blocks:
                    e2 = dict(env)
                    self.block(b, e2)
                    assigned |= {k for k, v in e2.items() if k not in env or env[k] is not v}
            except _Return:
                raise self.err(f"a return inside {why}", node) from None
        for k in assigned:
            env[k] = self._pin(k, OPAQUE, env)

    @contextmanager
    def dry_mode(self, why: str, node: ast.AST):
        outer = self._dry_why
        self.dry += 1
        self._dry_why = outer or (why, getattr(node, "lineno", 0))
        try:
            yield
        finally:
            self.dry -= 1
            self._dry_why = outer

    def exec_for(self, st: ast.For, env: dict) -> None:
        if not isinstance(st.target, ast.Name) or not isinstance(st.iter, ast.Call) or st.orelse:
            raise self.err("loops are `for v in range(...)` / gl.static_range(...)", st)
        fn = self.eval(st.iter.func, env)
        args = [self.eval(a, env) for a in st.iter.args]
        kwargs = {k.arg: self.eval(k.value, env) for k in st.iter.keywords}
        var = st.target.id
        if fn in (_Qual("gl.static_range"), _Qual("tl.static_range")):
            start, end, step = self._range_args(("arg1", "arg2", "step"), args, kwargs, st)
            for x in (start, end, step):  # (a bool is Python's int there: True is 1)
                if not isinstance(x, int):
                    raise self.err(f"static_range bounds must be constexprs, got {x!r}", st)
            if step == 0:
                raise self.err("static_range with step 0", st)
            self._iterate(st, env, var, [x for x in range(start, end, step)])
            return
        if fn == _Qual("tl.range"):
            lb, ub, step = self._range_args(
                ("arg1", "arg2", "step", "num_stages", "loop_unroll_factor",
                 "disallow_acc_multi_buffer", "flatten", "warp_specialize", "disable_licm"),
                args, kwargs, st)
        elif fn == _Qual("range"):
            # Triton's visit_For reads builtin range's positional arguments only
            if kwargs:
                self.violations.append(f"generated line {st.lineno}: keyword arguments of builtin "
                                       f"range ({', '.join(kwargs)}) are ignored by Triton")
            if not 1 <= len(args) <= 3:
                raise self.err("range takes 1 to 3 arguments", st)
            lb = args[0] if len(args) > 1 else 0
            ub = args[1] if len(args) > 1 else args[0]
            step = args[2] if len(args) > 2 else 1
        else:
            raise self.err("only range and static_range loops are supported (as in Triton)", st)
        # Triton: a bool bound or step is an i1, widened to the loop's type by sign extension
        # (visit_For's create_int_cast): True counts as -1, so range(True) runs no iteration
        lb, ub, step = (-1 if x is True else 0 if x is False else x for x in (lb, ub, step))
        # Triton: a negative *constant* step runs scf.for over (ub, lb] upward and maps the
        # induction variable back as ub - iv + lb
        negative = isinstance(step, int) and not isinstance(step, bool) and step < 0
        if negative:
            step, lb, ub = -step, ub, lb
        if not all(_is_int(x) for x in (lb, ub, step)):
            if any(x is not OPAQUE and not _is_int(x) for x in (lb, ub, step)):
                raise self.err("loop bounds and step must be integers", st)
            self.loops.append((var, OPAQUE))
            try:
                env[var] = OPAQUE
                self.dry_blocks([st.body], env, "a loop whose trip count depends on data", st)
            finally:
                self.loops.pop()
            return
        bits = max(x.bits if isinstance(x, RInt) else _bits_of_const(int(x)) for x in (lb, ub, step))
        lo, hi, s = _ival(lb), _ival(ub), _ival(step)
        if s <= 0:
            raise self.err(f"scf.for with a non-positive runtime step ({s}): undefined in Triton", st)
        values = []
        iv = lo
        while iv < hi:
            values.append(RInt(_wrap(hi - iv + lo, bits) if negative else iv, bits))
            if len(values) > MAX_TRIPS:
                raise self.err(f"loop runs more than {MAX_TRIPS} times", st)
            iv += s
        self._iterate(st, env, var, values)

    def _iterate(self, st: ast.For, env: dict, var: str, values: list) -> None:
        if self.dry:  # one pass finds every operation and assignment of the body
            values = values[:1] or [OPAQUE]
        for v in values:
            env[var] = v
            self.loops.append((var, v))
            try:
                self.block(st.body, env)
            finally:
                self.loops.pop()

    def _range_args(self, names: tuple, args: list, kwargs: dict, node) -> tuple:
        bound = dict(zip(names, args))
        if len(args) > len(names):
            raise self.err("too many range arguments", node)
        for k, v in kwargs.items():
            if k not in names or k in bound:
                raise self.err(f"bad range keyword '{k}'", node)
            bound[k] = v
        if "arg1" not in bound:
            raise self.err("range needs an upper bound", node)
        arg2 = bound.get("arg2")
        start, end = (0, bound["arg1"]) if arg2 is None else (bound["arg1"], arg2)
        step = bound.get("step")
        return start, end, 1 if step is None else step

    # ------------------------------------------------------------------ expressions
    def lookup(self, name: str, env: dict, node: ast.AST):
        if name in env:
            return env[name]
        if name.startswith(_OFFSET_PREFIX) and name in self.globals:
            return BarAddr(name[len(_OFFSET_PREFIX):], 0)
        if name in self.globals:
            return self.globals[name]
        if name in self.functions:
            return self.functions[name]
        if name in ("range", "int", "float", "min", "max", "len", "abs", "bool", "print"):
            return _Qual(name)
        raise self.err(f"name '{name}' is not defined", node)

    def eval(self, node: ast.AST, env: dict):
        m = getattr(self, "ev_" + type(node).__name__, None)
        if m is None:
            raise self.err(f"unsupported expression {type(node).__name__}", node)
        return m(node, env)

    def ev_Constant(self, node, env):
        return node.value

    def ev_Name(self, node, env):
        return self.lookup(node.id, env, node)

    def ev_Tuple(self, node, env):
        return tuple(self.eval(e, env) for e in node.elts)

    def ev_List(self, node, env):
        return [self.eval(e, env) for e in node.elts]

    def ev_Slice(self, node, env):
        for x in (node.lower, node.upper, node.step):
            if x is not None:
                self.eval(x, env)
        return OPAQUE

    def ev_JoinedStr(self, node, env):
        return OPAQUE

    def ev_Attribute(self, node, env):
        base = self.eval(node.value, env)
        if isinstance(base, _Qual):
            return _Qual(f"{base.name}.{node.attr}")
        return _Method(base, node.attr)

    def ev_Subscript(self, node, env):
        base = self.eval(node.value, env)
        idx = self.eval(node.slice, env)
        if isinstance(base, (tuple, list)) and _is_int(idx):
            return base[_ival(idx)]
        if _has_barrier(base):
            raise self.err("unrecognised subscript of a barrier", node)
        return OPAQUE

    def ev_BinOp(self, node, env):
        return _arith(self.eval(node.left, env), self.eval(node.right, env),
                      _BINOPS[type(node.op)], node.lineno)

    def ev_UnaryOp(self, node, env):
        v = self.eval(node.operand, env)
        if isinstance(node.op, ast.Not):
            if isinstance(v, RInt):
                return RInt(int(not v.value), 1)
            return (not v) if _known(v) else OPAQUE
        f = {ast.USub: lambda x: -x, ast.UAdd: lambda x: +x, ast.Invert: lambda x: ~x}[type(node.op)]
        if isinstance(v, RInt):
            return RInt(_wrap(f(v.value), v.bits), v.bits)
        return f(v) if isinstance(v, (int, float)) else OPAQUE

    def ev_Compare(self, node, env):
        if len(node.ops) != 1:
            raise self.err("chained comparisons are not supported by Triton", node)
        a, b = self.eval(node.left, env), self.eval(node.comparators[0], env)
        if not (_is_int(a) or isinstance(a, float)) or not (_is_int(b) or isinstance(b, float)):
            if isinstance(node.ops[0], (ast.Is, ast.IsNot)) and _known(a) and _known(b):
                return (a is b) == isinstance(node.ops[0], ast.Is)
            return OPAQUE
        f = _CMPOPS.get(type(node.ops[0]))
        if f is None:
            raise self.err("unsupported comparison", node)
        r = f(_ival(a) if _is_int(a) else a, _ival(b) if _is_int(b) else b)
        return RInt(int(r), 1) if isinstance(a, RInt) or isinstance(b, RInt) else r

    def ev_BoolOp(self, node, env):
        # Triton (code_generator.visit_BoolOp): a constexpr operand that decides is the result,
        # one that does not is dropped; with no runtime operand left the result is the last
        # constexpr (Python's value), with one it is that operand as it is (`p or 0` is p, not
        # a bool), with several their logical and / or
        is_and = isinstance(node.op, ast.And)
        runtime = []
        last = is_and
        for sub in node.values:
            v = self.eval(sub, env)
            if isinstance(v, RInt) or v is OPAQUE or not _known(v):
                runtime.append(v)
                continue
            if bool(v) is (not is_and):
                return v
            last = v
        if not runtime:
            return last
        if len(runtime) == 1:
            return runtime[0]
        if any(not isinstance(v, RInt) for v in runtime):
            return OPAQUE
        vals = [bool(v.value) for v in runtime]
        return RInt(int(all(vals) if is_and else any(vals)), 1)

    def ev_IfExp(self, node, env):
        c = self.eval(node.test, env)
        if _known(c) and not self.dry:
            return self.eval(node.body if _truth(c) else node.orelse, env)
        with self.dry_mode("a conditional expression whose condition depends on data", node):
            self.eval(node.body, env)
            self.eval(node.orelse, env)
        return OPAQUE

    def ev_Call(self, node, env):
        fn = self.eval(node.func, env)
        args = [self.eval(a, env) for a in node.args]
        kwargs = {k.arg: self.eval(k.value, env) for k in node.keywords}
        if isinstance(fn, ast.FunctionDef):
            return self.call_function(fn, args, kwargs, node)
        if isinstance(fn, _Method):
            return self.call_method(fn, args, kwargs, node)
        if isinstance(fn, _Qual):
            return self.call_qual(fn.name, args, kwargs, node)
        if _has_barrier(args) or _has_barrier(kwargs):
            raise self.err("unrecognised operation on a barrier", node)
        return OPAQUE

    # ------------------------------------------------------------------ calls
    def call_function(self, fdef: ast.FunctionDef, args, kwargs, node):
        if fdef.name == _DEBUG_WAIT:  # lowering/debug.py: a bounded mbarrier.try_wait loop
            addr = args[0] if args else kwargs.get("off")
            parity = args[1] if len(args) > 1 else kwargs.get("parity")
            arr, stage = self._addr(addr, node)
            self.record(BarrierOp(WAIT, arr, stage, self._int(parity, "parity", node),
                                  node.lineno, self.where()), node)
            return RInt(1)  # the wait completed (a run that does not trap)
        if _EAGER_ARRIVE.match(fdef.name):  # lowering/eager.py: every thread arrives
            arr, stage = self._addr(args[0] if args else kwargs.get("off"), node)
            self.record(BarrierOp(ARRIVE_THREAD, arr, stage, None, node.lineno, self.where()), node)
            return args[1] if len(args) > 1 else OPAQUE
        params = fdef.args.args
        defaults = dict(zip([p.arg for p in params[len(params) - len(fdef.args.defaults):]],
                            [self.eval(d, self.globals) for d in fdef.args.defaults]))
        local = {}
        for i, p in enumerate(params):
            if i < len(args):
                local[p.arg] = args[i]
            elif p.arg in kwargs:
                local[p.arg] = kwargs[p.arg]
            elif p.arg in defaults:
                local[p.arg] = defaults[p.arg]
            else:
                raise self.err(f"'{fdef.name}': argument '{p.arg}' is missing", node)
        try:
            self.block(fdef.body, local)
        except _Return as r:
            return r.value
        return None

    def call_method(self, m: _Method, args, kwargs, node):
        base, attr = m.base, m.attr
        if isinstance(base, (Smem, SmemView)):
            smem = base if isinstance(base, Smem) else base.base
            if attr == "index" and isinstance(base, Smem):
                return SmemView(base, args[0] if args else kwargs.get("index"))
            if attr in ("permute", "slice", "reshape", "trans", "_reinterpret", "subslice"):
                return base
            if smem.barrier:
                raise self.err(f"unrecognised operation `.{attr}` on barrier array {smem.name}", node)
            if attr == "store":
                self._check_store(base, node)
                return None
            return OPAQUE
        if isinstance(base, RInt) and attr == "to":
            dt = args[0] if args else kwargs.get("dtype")
            bits = {"gl.int32": 32, "gl.int64": 64, "tl.int32": 32, "tl.int64": 64}.get(
                getattr(dt, "name", ""))
            return RInt(_wrap(base.value, bits), bits) if bits else OPAQUE
        if _has_barrier(args) or _has_barrier(kwargs) or _has_barrier(base):
            raise self.err(f"unrecognised operation `.{attr}` on a barrier", node)
        return OPAQUE

    def call_qual(self, name: str, args, kwargs, node):
        arg = lambda i, k, d=None: args[i] if len(args) > i else kwargs.get(k, d)  # noqa: E731
        if name in ("gl.constexpr", "tl.constexpr"):
            return arg(0, "value")
        if name in ("int", "bool"):
            v = args[0]
            if isinstance(v, RInt):
                return v
            return (int if name == "int" else bool)(v) if _known(v) else OPAQUE
        if name in ("float", "abs", "min", "max", "len"):
            if all(isinstance(a, (int, float, str, tuple, list)) for a in args):
                return {"float": float, "abs": abs, "min": min, "max": max, "len": len}[name](*args)
            if name == "abs" and isinstance(args[0], RInt):
                return RInt(_wrap(abs(args[0].value), args[0].bits), args[0].bits)
            return OPAQUE
        if name in ("range", "gl.static_range", "tl.static_range", "tl.range"):
            raise self.err(f"{name}(...) outside a for statement", node)
        if name in ("gl.program_id", "gl.num_programs"):
            return OPAQUE
        if name == "gl.to_tensor":  # the scalar tensor of a number (a plain assignment's)
            v = arg(0, "x")
            if isinstance(v, bool) or not isinstance(v, int):
                return v if isinstance(v, RInt) else OPAQUE
            if -2**31 <= v < 2**31:
                return RInt(v, 32)
            return RInt(v, 64) if 2**32 <= v < 2**63 or -2**63 <= v < -2**31 else OPAQUE
        if name == "gl.cdiv":  # triton.language.standard.cdiv: (x + (div - 1)) // div
            x, d = arg(0, "x"), arg(1, "div")
            return _arith(_arith(x, _arith(d, 1, "-", node.lineno), "+", node.lineno), d, "//",
                          node.lineno)
        if name in ("gl.minimum", "gl.maximum"):
            a, b = args[0], args[1]
            if _is_int(a) and _is_int(b):
                pick = min if name == "gl.minimum" else max
                r = pick(_ival(a), _ival(b))
                runtime = [x for x in (a, b) if isinstance(x, RInt)]
                return RInt(r, max(x.bits for x in runtime)) if runtime else r
            return OPAQUE
        if name == "gl.where":
            c, a, b = arg(0, "condition"), arg(1, "x"), arg(2, "y")
            if _known(c) and _is_int(a) and _is_int(b):
                pick = a if _truth(c) else b
                if isinstance(c, RInt) or isinstance(a, RInt) or isinstance(b, RInt):
                    return pick if isinstance(pick, RInt) else RInt(int(pick))
                return pick
            return OPAQUE
        if name == "gl.allocate_shared_memory":
            shape, layout = arg(1, "shape"), arg(2, "layout")
            barrier = layout == _MBAR_LAYOUT
            stages = shape[0] if barrier and isinstance(shape, (list, tuple)) else None
            return _Alloc(barrier, stages)
        if name == "mbarrier.MBarrierLayout":
            return _MBAR_LAYOUT
        if name == "gl.warp_specialize":
            return self.warp_specialize(arg(0, "functions_and_args"), node)
        if name == "gl.inline_asm_elementwise":
            asm = arg(0, "asm")
            m = _NAMED_ASM.match(asm) if isinstance(asm, str) else None
            if m:  # a named-barrier pipe's hand-off: the array is the barrier id, the "stage"
                # its thread count (both must be what the plan gives the pipe)
                op = NAMED_ARRIVE if m.group(1) == "arrive" else NAMED_SYNC
                self.record(BarrierOp(op, f"bar{m.group(2)}", int(m.group(3)), None, node.lineno,
                                      self.where()), node)
                return OPAQUE
            if not isinstance(asm, str) or "mbarrier" in asm or "bar." in asm:
                raise self.err("inline asm that may touch an mbarrier, outside the helpers the "
                               "lowering's barrier operations use (_tle_try_wait, _tle_arrive_*)",
                               node)
            if _has_barrier(args) or _has_barrier(kwargs):
                raise self.err("a barrier address passed to inline asm", node)
            return OPAQUE
        if name.startswith("mbarrier."):
            return self.mbarrier(name.split(".", 1)[1], args, kwargs, node)
        if name == "async_copy.mbarrier_arrive":
            arr, stage = self._bar(arg(0, "mbarrier"), node)
            inc = arg(1, "increment_count", True)
            self._pred(kwargs.get("pred", True), node)
            op = ARRIVE_CP_ASYNC if inc is False else ARRIVE_CP_ASYNC + ".increment"
            self.record(BarrierOp(op, arr, stage, None, node.lineno, self.where()), node)
            return None
        if name == "tma.async_copy_global_to_shared":
            arr, stage = self._bar(arg(2, "barrier"), node)
            self._pred(kwargs.get("pred", True), node)
            self.record(BarrierOp(TMA, arr, stage, None, node.lineno, self.where()), node)
            dst = arg(3, "result")
            if isinstance(dst, (Smem, SmemView)):  # the copy overwrites its slot, as a store does
                self._check_store(dst, node)
            return None
        if name == "warpgroup_mma":
            return self.wgmma(arg(0, "a"), arg(1, "b"), bool(kwargs.get("is_async", False)), node)
        if name == "warpgroup_mma_wait":
            return self.wgmma_wait(arg(0, "num_outstanding", 0), arg(1, "deps", None), node)
        if name == "warpgroup_mma_init":
            return OPAQUE
        if _has_barrier(args) or _has_barrier(kwargs):
            raise self.err(f"unrecognised operation {name} on a barrier", node)
        return OPAQUE

    def mbarrier(self, verb: str, args, kwargs, node):
        arg = lambda i, k, d=None: args[i] if len(args) > i else kwargs.get(k, d)  # noqa: E731
        if verb == "init":
            arr, stage = self._bar(arg(0, "mbarrier"), node)
            if self.part is not None:
                raise self.err("mbarrier.init inside a partition", node)
            self.inits[(arr, stage)] = self._int(arg(1, "count"), "count", node)
            return None
        if verb == "invalidate":
            return None
        if verb == "wait":
            arr, stage = self._bar(arg(0, "mbarrier"), node)
            parity = self._int(arg(1, "phase"), "parity", node)
            if not self._pred(arg(2, "pred", True), node):
                return None
            self.record(BarrierOp(WAIT, arr, stage, parity, node.lineno, self.where()), node)
            return None
        if verb == "arrive":
            arr, stage = self._bar(arg(0, "mbarrier"), node)
            count = self._int(kwargs.get("count", 1), "count", node)
            if not self._pred(kwargs.get("pred", True), node):
                return None
            op = ARRIVE if count == 1 else f"{ARRIVE}(count={count})"
            self.record(BarrierOp(op, arr, stage, None, node.lineno, self.where()), node)
            return None
        if verb == "expect":
            arr, stage = self._bar(arg(0, "mbarrier"), node)
            if not self._pred(arg(2, "pred", True), node):
                return None
            self.record(BarrierOp(EXPECT, arr, stage, None, node.lineno, self.where()), node)
            return None
        raise self.err(f"unrecognised barrier operation mbarrier.{verb}", node)

    def warp_specialize(self, fa, node):
        if self.part is not None:
            raise self.err("gl.warp_specialize inside a partition", node)
        if self.dry:
            raise self.err("gl.warp_specialize under a condition that depends on data", node)
        if self.partitions:
            raise self.err("a second gl.warp_specialize", node)
        if not isinstance(fa, (list, tuple)):
            raise self.err("gl.warp_specialize: expected a list of (function, args)", node)
        for entry in fa:
            fn, fargs = entry
            if not isinstance(fn, ast.FunctionDef):
                raise self.err("gl.warp_specialize: a partition is not a function of the module", node)
            self.partitions.append((fn, tuple(fargs)))
        return OPAQUE

    # ------------------------------------------------------------------ barrier operands
    def _int(self, v, what: str, node) -> int:
        if not _is_int(v):
            raise self.err(f"the {what} of a barrier operation is not a known integer "
                           f"(it depends on data)", node)
        return _ival(v)

    def _pred(self, v, node) -> bool:
        if not _known(v):
            raise self.err("a barrier operation predicated on data", node)
        return _truth(v)

    def _bar(self, v, node) -> tuple[str, int]:
        if not isinstance(v, SmemView) or not v.base.barrier:
            raise self.err("a barrier operation on something that is not `<mbarrier array>.index(s)`",
                           node)
        stage = self._int(v.stage, "stage", node)
        return v.base.name, stage

    def _addr(self, v, node) -> tuple[str, int]:
        if not isinstance(v, BarAddr):
            raise self.err("a barrier helper called without a barrier address", node)
        off = self._int(v.offset, "barrier offset", node)
        if off % 8:
            raise self.err(f"barrier offset {off} is not a multiple of 8", node)
        return v.array, off // 8

    def record(self, op: BarrierOp, node) -> None:
        if self.dry:
            why, line = self._dry_why
            raise self.err(f"{op} under {why} (line {line}): the protocol must not depend on data", node)
        if self.part is None:
            self.violations.append(f"generated line {op.line}: {op} in the kernel prologue, outside "
                                   f"the partitions")
            return
        n = self.barriers.get(op.array)
        if op.op in (NAMED_ARRIVE, NAMED_SYNC):
            pass  # a hardware barrier: no array to allocate or initialise
        elif n is None:
            self.part.violations.append(f"{self.part.function}: generated line {op.line}: {op} on "
                                        f"'{op.array}', which is not an mbarrier array")
        elif not 0 <= op.stage < n or (op.array, op.stage) not in self.inits:
            self.part.violations.append(f"{self.part.function}: generated line {op.line}: {op}: "
                                        f"no initialised barrier {op.array}[{op.stage}]")
        if op.op in (ARRIVE, ARRIVE_THREAD) and op.array in self.release_rings:
            self._check_release(op.array, op.stage, op.line, op.when, str(op))
        self.part.ops.append(op)
        self.part.events.append(op)

    def _check_release(self, key: str, stage, line: int, when: str, what: str) -> None:
        """A release hands ``stage`` (None: a named pipe's one slot) of every ring of the pipe
        (``release_rings[key]``) back to the writer: no wgmma reading it may be in flight."""
        got = self._inflight_reading(self.release_rings[key], stage)
        if got:
            w, hit = got
            self.part.violations.append(
                f"{self.part.function}: generated line {line}: release {what} "
                f"({'at ' + when if when else 'outside loops'}) while the wgmma "
                f"issued at generated line {w.line} "
                f"({'at ' + w.when if w.when else 'outside loops'}) reading "
                f"{', '.join(hit)}{'' if stage is None else f' at stage {stage}'} may still "
                f"be in flight")

    def _inflight_reading(self, rings, stage):
        """``(wgmma, the rings of ``rings`` it reads)`` of the oldest wgmma in flight that
        reads one of them at ``stage`` (None: any stage) or at a stage the interpreter cannot
        tell, or None."""
        for w in self.inflight:
            hit = sorted(r for r, st in w.reads if r in rings and (stage is None or
                                                                 st in (None, stage)))
            if hit:
                return w, hit
        return None

    def _check_store(self, dst, node) -> None:
        """A register store into shared memory (``ring.index(stage).store(...)``, or a whole
        allocation): no wgmma reading that slot (or a slot the interpreter cannot tell) may be in
        flight, as docs/lowering.md's rule for overwrites says."""
        if self.part is None or self.dry:
            # the prologue issues no wgmma; on a path that may be skipped (dry mode) the waits
            # retire nothing for the check, so a store after one would be reported falsely:
            # such stores go unchecked
            return
        smem = dst if isinstance(dst, Smem) else dst.base
        stage = (None if isinstance(dst, Smem) else
                 _ival(dst.stage) if _is_int(dst.stage) else None)
        got = self._inflight_reading({smem.name}, stage)
        if got:
            self.part.violations.append(
                f"{self.part.function}: generated line {node.lineno}: store into "
                f"{smem.name}{'' if stage is None else f' at stage {stage}'} "
                f"({'at ' + self.where() if self.where() else 'outside loops'}) while the "
                f"wgmma issued at generated line {got[0].line} "
                f"({'at ' + got[0].when if got[0].when else 'outside loops'}) reading it may "
                f"still be in flight")

    # ------------------------------------------------------------------ wgmma
    def wgmma(self, a, b, is_async: bool, node):
        reads = frozenset((x.name, None) if isinstance(x, Smem) else
                          (x.base.name, _ival(x.stage) if _is_int(x.stage) else None)
                          for x in (a, b) if isinstance(x, (Smem, SmemView)))
        op = WgmmaOp("issue", reads, None, is_async, node.lineno, self.where())
        if self.dry:
            raise self.err(f"a wgmma under {self._dry_why[0]} (line {self._dry_why[1]})", node)
        if self.part is None:
            raise self.err("a wgmma in the kernel prologue", node)
        self.part.events.append(op)
        if is_async:
            self.inflight.append(op)
        return OPAQUE

    def wgmma_wait(self, n, deps, node):
        if self.dry:
            # a wait on a path that may be skipped (a branch of an `if` that keeps wgmmas in
            # flight, lowering/translate.py st_If): the other path waits for nothing, so the
            # wgmmas count as still in flight after it, which is what checking releases needs
            deps = list(deps) if isinstance(deps, (list, tuple)) else []
            return tuple(OPAQUE for _ in deps) if len(deps) > 1 else OPAQUE
        if self.part is None:
            raise self.err("warpgroup_mma_wait in the kernel prologue", node)
        pending = self._int(n, "num_outstanding", node)
        self.part.events.append(WgmmaOp("wait", frozenset(), pending, True, node.lineno, self.where()))
        # wgmma groups retire in issue order: at most `pending` most recent stay in flight
        self.inflight = self.inflight[len(self.inflight) - pending:] if pending else []
        deps = list(deps) if isinstance(deps, (list, tuple)) else []
        return tuple(OPAQUE for _ in deps) if len(deps) > 1 else OPAQUE


def trace_gluon(source: str, kernel: str, args: Optional[Mapping[str, object]] = None,
                constexprs: Optional[Mapping[str, object]] = None, *,
                release_rings: Optional[Mapping[str, Iterable[str]]] = None,
                int64_args: Iterable[str] = (), pins: Optional[Mapping[str, int]] = None) -> Trace:
    """Run the control skeleton of the Gluon module ``source`` from its ``@gluon.jit`` function
    ``kernel``. ``args``: values of runtime kernel arguments (ints; others, and missing ones, are
    opaque), i32 unless named in ``int64_args``; ``constexprs``: its ``gl.constexpr`` arguments.
    ``release_rings``: empty-barrier array → the ring allocations of its pipe (the wgmmas a release
    must have retired; :func:`release_rings_of`). ``pins``: kernel-body names computed from data
    → the i32 value to run with (module docstring). Raises :class:`TraceError` when the module
    cannot be run, a barrier operation depends on data, or a pin does not name such a value."""
    interp = _Interpreter(source, release_rings or {}, pins)
    return interp.run_kernel(kernel, dict(args or {}), dict(constexprs or {}), int64_args)


def data_dependent_names(source: str, kernel: str, args: Optional[Mapping[str, object]] = None,
                         constexprs: Optional[Mapping[str, object]] = None, *,
                         int64_args: Iterable[str] = ()) -> frozenset:
    """The names the kernel body binds, before and at ``gl.warp_specialize``, to values the
    interpreter cannot compute from ``args`` and ``constexprs`` (loaded data, program ids, and
    tensors, pointers and floats): the ones a trace can pin. Runs the prologue only."""
    interp = _Interpreter(source, {})
    return interp.run_kernel(kernel, dict(args or {}), dict(constexprs or {}), int64_args,
                             partitions=False).unknown


def release_rings_of(plans: Mapping) -> dict[str, frozenset]:
    """Each empty-barrier array of a lowering plan → the ring variables of its pipe."""
    out = {}
    for pp in plans.values():
        rings = frozenset(r.var for r in pp.rings.values())
        for arr in pp.empty():
            out[arr.var] = rings
        if pp.named:  # its release's marker (lowering/pipes.py NAMED_RELEASE_MARK)
            out["named:" + pp.name] = rings
    return out


# ------------------------------------------------------------------------------------ expectation

@record
class ExpectedOp:
    """A barrier operation one IR event instance must lower to."""

    op: str
    array: str
    stage: int
    parity: Optional[int]
    instance: Instance

    @property
    def key(self) -> tuple:
        return (self.op, self.array, self.stage, self.parity)

    def source(self) -> str:
        """The IR event that asks for this operation: ``kv[left].release(3) at ck=3 (file:line)``."""
        ev = self.instance.event
        who = f"[{ev.reader}]" if getattr(ev, "reader", None) else ""
        where = self.instance.where()
        return (f"{ev.pipe}{who}.{ev.verb}({self.instance.index})"
                + (f" {where}" if where else "") + f" ({ev.loc})")

    def __str__(self) -> str:
        return _fmt_key(self.key)


#: The operations one arrive of a given arrive unit (plan.arrive_mode, codegen's eager modes) emits.
ARRIVE_FORMS = {
    "partition": (ARRIVE,),
    "thread": (ARRIVE_CP_ASYNC,),
    "mixed": (ARRIVE, ARRIVE_CP_ASYNC),
    "eager": (ARRIVE_THREAD,),
    "eager-mixed": (ARRIVE_THREAD, ARRIVE_CP_ASYNC),
    "tma": (EXPECT,),
    "tma-partition": (ARRIVE, EXPECT),
    "tma-thread": (ARRIVE_CP_ASYNC, EXPECT),
    "tma-mixed": (ARRIVE, ARRIVE_CP_ASYNC, EXPECT),
}


def expected_ops(program: Program, plans: Mapping, params: Mapping[str, int]
                 ) -> dict[str, list[ExpectedOp]]:
    """Partition name → the barrier operations its verified events lower to, in order, for the
    given param values (docs/semantics.md's verb table; field groups from infer-barriers' roles;
    barrier arrays and arrive units from the lowering plan ``plans``)."""
    from ..passes.roles import resolve_roles

    roles = resolve_roles(program)
    out: dict[str, list[ExpectedOp]] = {}
    for part, insts in unroll(program, params).items():
        ops: list[ExpectedOp] = []
        for inst in insts:
            if isinstance(inst.event, Event):
                ops += _event_ops(inst, program, roles[inst.event.pipe], plans[inst.event.pipe])
            elif getattr(inst.event, "tma", False):  # a TMA copy completes on its group's full
                ops.append(_tma_op(inst, program, roles[inst.event.pipe],
                                   plans[inst.event.pipe]))
        out[part] = ops
    return out


def _tma_op(inst: Instance, program: Program, role, pp) -> ExpectedOp:
    """The barrier a TMA copy of a slot field signals: the full array of the field's group, at
    the slot's stage."""
    a = inst.event
    pipe = program.pipe(a.pipe)
    stage = 0 if pipe.one_shot else inst.index % pipe.capacity
    g = next(g for g in role.groups if a.field in g.fields)
    arr = next(x for x in pp.arrays if x.kind == "full" and x.group == g.index)
    return ExpectedOp(TMA, arr.var, stage, None, inst)


def _event_ops(inst: Instance, program: Program, role, pp) -> list[ExpectedOp]:
    ev: Event = inst.event
    pipe = program.pipe(ev.pipe)
    arrays = {(a.kind, a.group): a for a in pp.arrays}
    i, cap = inst.index, pipe.capacity
    stage, phase = (0, 0) if pipe.one_shot else (i % cap, (i // cap) & 1)
    reader = ev.reader or ""
    out: list[ExpectedOp] = []

    def add(op, kind, g, parity=None):
        out.append(ExpectedOp(op, arrays[(kind, g.index)].var, stage, parity, inst))

    if pipe.named:  # commit: bar.arrive, wait: bar.sync; acquire and release emit nothing
        op = {"commit": NAMED_ARRIVE, "wait": NAMED_SYNC}.get(ev.verb)
        bar_id, threads = pp.named
        return [ExpectedOp(op, f"bar{bar_id}", threads, None, inst)] if op else []
    if ev.verb in ("acquire", "close") and not pipe.one_shot:
        for g in role.groups:
            add(WAIT, "empty", g, phase ^ 1)
    if ev.verb in ("commit", "close"):
        for g in role.groups:
            for op in ARRIVE_FORMS[arrays[("full", g.index)].mode]:
                add(op, "full", g)
    if ev.verb == "wait":
        for g in role.groups_of(reader):
            add(WAIT, "full", g, phase)
    if ev.verb == "release" and not pipe.one_shot:
        for g in role.groups_of(reader):
            for op in ARRIVE_FORMS[arrays[("empty", g.index)].mode]:
                add(op, "empty", g)
    return out


def compare(expected: Mapping[str, list[ExpectedOp]], trace: Trace, partitions: Sequence[str],
            source: str = "") -> list[str]:
    """Mismatches between the expected operations (IR partition name → ops) and the traced ones.
    ``partitions``: the IR partition names in gl.warp_specialize order (the k-th runs the k-th
    function of the call). One message per partition: the first differing position, the IR event
    that asks for the expected operation and the generated line of the traced one."""
    lines = source.splitlines()
    problems = []
    if len(partitions) != len(trace.partitions):
        problems.append(f"the generated kernel runs {len(trace.partitions)} partitions "
                        f"({', '.join(p.function for p in trace.partitions)}), the IR has "
                        f"{len(partitions)} ({', '.join(partitions)})")
    for part, tp in zip(partitions, trace.partitions):
        if part not in expected:
            problems.append(f"Gluon function {tp.function} runs partition '{part}', which the IR "
                            f"does not have")
            continue
        exp, got = expected[part], tp.ops
        ek, gk = [e.key for e in exp], [g.key for g in got]
        if ek == gk:
            continue
        pos = next((k for k, (a, b) in enumerate(zip(ek, gk)) if a != b), min(len(ek), len(gk)))
        msg = [f"partition '{part}' (Gluon function {tp.function}): {len(gk)} barrier operations "
               f"generated, {len(ek)} expected; first difference at operation #{pos}:"]
        if pos < len(exp):
            msg.append(f"  expected  {exp[pos]}  for {exp[pos].source()}")
        else:
            msg.append("  expected  nothing more")
        if pos < len(got):
            g = got[pos]
            text = lines[g.line - 1].strip() if 0 < g.line <= len(lines) else ""
            msg.append(f"  generated {g}  at generated line {g.line}"
                       + (f" ({g.when})" if g.when else "") + (f": {text}" if text else ""))
        else:
            msg.append("  generated nothing more")
        if 0 < pos <= len(exp):
            msg.append(f"  (after {exp[pos - 1]} for {exp[pos - 1].source()}, which matched)")
        problems.append("\n".join(msg))
    return problems


# --------------------------------------------------------------------------------------- a kernel

class LoweredKernel:
    """A kernel lowered once (for fixed constexprs), traced and compared for any runtime arguments.

    ``kernel``: a ``@tle.jit`` kernel, a KernelInfo or a ``(path, name)`` pair, as
    :func:`tle_compiler.lowering.compile.gluon_source` takes it; ``signature``: the compile's
    argument types, when the traced source must be the one compile_kernel compiles."""

    def __init__(self, kernel, constexprs: Optional[Mapping[str, object]] = None,
                 debug_waits=False, int64_args: Iterable[str] = (),
                 signature: Optional[Mapping[str, str]] = None):
        from ..lowering.compile import gluon_source, kernel_info_of

        self.constexprs = dict(constexprs or {})
        self.info = kernel_info_of(kernel, self.constexprs)
        self.gen = gluon_source(self.info, self.constexprs, debug_waits=debug_waits,
                                signature=dict(signature) if signature else None)
        self.int64_args = tuple(int64_args)
        self.partitions = [p.name for p in self.info.partitions]  # warp_specialize order

    @property
    def program(self) -> Program:
        return self.info.program

    def trace(self, args: Mapping[str, object], pins: Optional[Mapping[str, int]] = None) -> Trace:
        return trace_gluon(self.gen.source, self.gen.kernel, args,
                           {c: self.constexprs[c] for c in self.info.constexprs},
                           release_rings=release_rings_of(self.gen.plans),
                           int64_args=self.int64_args, pins=pins)

    def data_params(self, args: Mapping[str, object]) -> list[str]:
        """The Program's params the kernel body computes from what the trace cannot know (a trip
        count read from memory, one derived from program ids): a test pins them to the values it
        checks, as it sets a runtime argument."""
        unknown = data_dependent_names(self.gen.source, self.gen.kernel, args,
                                       {c: self.constexprs[c] for c in self.info.constexprs},
                                       int64_args=self.int64_args)
        return [p.name for p in self.program.params if p.name in unknown]

    def params(self, trace: Trace) -> dict[str, int]:
        """The Program's params bound by name to the kernel's integer values at warp_specialize
        (a kernel argument, a kernel-level variable computed from arguments and constexprs, or a
        pinned one)."""
        missing = [p.name for p in self.program.params if p.name not in trace.prologue]
        if missing:
            raise TraceError(f"kernel '{self.info.name}': IR param(s) {', '.join(missing)} are no "
                             f"integer of the generated kernel's prologue "
                             f"({', '.join(sorted(trace.prologue)) or 'none'})")
        return {p.name: trace.prologue[p.name] for p in self.program.params}

    def expected(self, params: Mapping[str, int]) -> dict[str, list[ExpectedOp]]:
        return expected_ops(self.program, self.gen.plans, params)

    def check(self, args: Mapping[str, object], pins: Optional[Mapping[str, int]] = None
              ) -> tuple[dict[str, int], list[str]]:
        """(the param values the arguments and pins give, every problem found): per-partition
        mismatches between the generated barrier operations and the verified events, then the
        trace's violations (releases under in-flight wgmmas, operations on uninitialised
        barriers)."""
        tr = self.trace(args, pins)
        params = self.params(tr)
        problems = compare(self.expected(params), tr, self.partitions, self.gen.source)
        return params, problems + tr.violations
