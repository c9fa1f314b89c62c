"""The kernel body before ``warp_specialize``, walked by :class:`PrologueWalker`: names bound to
values that are not affine become opaque params, ``tle.assume`` narrows the params' domains,
and a kernel-body loop is walked iteration by iteration where that is exact."""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

from ..diagnostics import TleError
from ..ir import kernel as K
from ..ir.expr import Affine, BoolOp, Compare, ModCompare, Not
from ..ir.i32 import fits_i32
from ..ir.nodes import Loc
from .context import ASSUME_WHERE, Assumption
from .load_signs import untyped_source
from .load_types import own_typed
from .local_tensors import WalkRules, c_and_python, refusal, shift_out_of_i32, tensor_root
from .params import PLACEHOLDER, is_placeholder, launch_steps, reached
from .protocol_terms import assigned_names, compare_chain, generated, src
from .values import (Aff, BufferRef, Const, Data, HANDLES, KernelArg, Poison, SlotV, Sym, TupleV,
                     Value, WaitV)
from .walker import Walker


_ASSUME_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "=="}


class _NotExact(Exception):
    """Raised while a kernel-body loop is walked iteration by iteration (PrologueWalker.unroll)
    where a value would become an opaque param: one placeholder would then stand for the values
    of several iterations."""


def run_time_items(v: Value) -> Value:
    """``v`` with each compile-time integer item of it (at any depth) a run-time value of the
    same number: the kernel body's tuple bound again, whose items the lowered kernel hands over
    as the tensors they are (PrologueWalker._s_Assign)."""
    if isinstance(v, TupleV):
        return replace(v, items=tuple(run_time_items(x) for x in v.items))
    if isinstance(v, Aff) and not v.runtime:
        return Aff(v.expr, True, v.wide)
    return v


class PrologueWalker(Walker):
    """The kernel body before warp_specialize: names assigned non-affine values become opaque
    params; ``tle.assume`` narrows params' domains."""

    # -- names the lowered kernel body holds as tensors ------------------------------------------
    # The lowering passes a partition argument that is a compile-time value as a constexpr of
    # the value it computes (Python's arithmetic, as the verifier's), but it emits the kernel
    # body's assignments as written: `M = -7` (or `M = C - 10`) is an i32 tensor in the Gluon,
    # and an expression of M that is computed at run time (`N + M % 4`, a binding or an
    # assignment) divides it as C does (-3 where Python and the verifier read 1). Such a
    # `//` / `%` is recorded where C and Python may differ (PrologueWalker.tensor_division), and
    # refused where its value reaches run-time code (PrologueWalker.refuse_c_division).

    def _body_sets(self) -> tuple[set, dict, dict]:
        if not hasattr(self, "_tensors"):
            # names bound to compile-time numbers; `//` / `%` nodes (by id) of such names, and
            # names bound to a compile-time value computed through one: each -> its tensor root
            self._tensors: set[str] = set()
            self._divisions: dict[int, K.Name] = {}
            self._divided: dict[str, K.Name] = {}
            # what the lowered kernel computes otherwise for the other _divisions (by id): a
            # shift by 32 bits or more, unsigned arithmetic
            self._why: dict[int, str] = {}
        return self._tensors, self._divisions, self._divided

    def tensor_expr(self, e: K.Expr) -> bool:
        return tensor_root(e, lambda n: n.id in self._body_sets()[0]) is not None

    def tensor_division(self, e: K.BinOp, left, right, at=None) -> None:
        if e.op not in ("//", "%"):
            return
        tensors, divisions, _ = self._body_sets()
        root = next((r for r in (tensor_root(x, lambda n: n.id in tensors)
                                 for x in (e.lhs, e.rhs)) if r is not None), None)
        if root is None or self.is_runtime(left) or self.is_runtime(right):
            return
        a, b = self.as_aff(left), self.as_aff(right)
        if a is not None and b is not None and a.is_const and b.is_const and b.const != 0:
            c_value, py_value = c_and_python(e.op, a.const, b.const)
            if c_value == py_value:
                return
        divisions[id(at if at is not None else e)] = root

    def tensor_overflow(self, e, result, at=None) -> None:
        """Record `M + 1` (`-`, `*`, `<<`, `//`, a unary `-`; ``at``: the `tl.cdiv` call whose
        sum ``e`` stands for) of a name bound to a compile-time number whose result
        leaves i32: the verifier reads Python's 2147483648 (M = 2147483647), the lowered kernel
        (as Triton) an i32 that wraps to -2147483648, so `N + (M + 1 > 0)` was verified as N + 1
        while the GPU ran N. Refused where it reaches run-time code, as a division is."""
        if e.op not in ("+", "-", "*", "<<", "//"):
            return
        tensors, divisions, _ = self._body_sets()
        operands = (e.operand,) if isinstance(e, K.UnaryOp) else (e.lhs, e.rhs)
        root = next((r for r in (tensor_root(x, lambda n: n.id in tensors)
                                 for x in operands) if r is not None), None)
        a = self.as_aff(result) if root is not None and isinstance(result, Aff) else None
        if a is not None and a.is_const and not fits_i32(a.const):
            divisions[id(at if at is not None else e)] = root
            if at is not None:
                self._why[id(at)] = (f"its `{self.src(at)}` adds `div - 1` first: the sum is "
                                     f"{a.const}, outside i32, and wraps there, where the "
                                     f"verifier reads Python's unbounded integer")
            elif e.op == "//":
                self._why[id(e)] = (f"its `{self.src(e)}` is {a.const}, outside i32: the i32 "
                                    f"division overflows there (undefined), where the verifier "
                                    f"reads Python's unbounded integer")

    def tensor_name(self, e: K.Expr) -> Optional[K.Name]:
        return tensor_root(e, lambda n: n.id in self._body_sets()[0])

    def wrapped_name(self, name: K.Name) -> bool:
        return name.id in self._body_sets()[2]

    def tensor_unsigned(self, e, left, right, sides=None) -> None:
        """Record :meth:`Walker.unsigned_reason`'s operations: refused where they reach
        run-time code, as a division is (passed whole, the value is a constexpr of Python's)."""
        hit = self.unsigned_reason(e, left, right, sides)
        if hit is not None:
            _, divisions, _ = self._body_sets()
            divisions[id(e)] = hit[0]
            self._why[id(e)] = f"{hit[1]}, where the verifier reads Python's integers"

    def tensor_shift(self, e: K.BinOp, left, right, result) -> None:
        """Record `M >> 40` (`<<`) of (or by) a name bound to a compile-time number, by a
        compile-time number of bits outside [0, 31]: the verifier reads Python's -1 (M = -1),
        the lowered kernel (as Triton, which only warns) shifts the i32 tensor by the width or
        more, undefined there (LLVM's poison; the compiled kernel computed 0), so `N + 1 + (M >>
        40)` was verified as N. Refused where it reaches run-time code, as a division is."""
        amount = shift_out_of_i32(self, e, left, right)
        if amount is None:
            return
        tensors, divisions, _ = self._body_sets()
        root = next((r for r in (tensor_root(x, lambda n: n.id in tensors)
                                 for x in (e.lhs, e.rhs)) if r is not None), None)
        if root is not None:
            divisions[id(e)] = root
            by = (f"by {amount} bits, outside [0, 31]" if isinstance(amount, int) else
                  f"by {amount}, a compile-time number the verifier does not know to lie in "
                  f"[0, 31]")
            self._why[id(e)] = (f"its `{self.src(e)}` shifts the i32 {by}: undefined there from "
                                f"32 bits on (Triton warns \"this may result in undefined "
                                f"behavior\"; LLVM's result is poison), where the verifier reads "
                                f"Python's shift")

    def c_division(self, e: K.Expr) -> Optional[tuple[K.Name, K.Expr]]:
        """(the tensor name, the `//` / `%` or name) of a recorded division ``e`` computes with."""
        _, divisions, divided = self._body_sets()
        for x in K.walk_expr(e):
            if id(x) in divisions:
                return divisions[id(x)], x
            if isinstance(x, K.Name) and x.id in divided:
                return divided[x.id], x
        return None

    def any_runtime(self, v: Optional[Value]) -> bool:
        """Whether the tuple ``v`` has a run-time item, at any depth."""
        if isinstance(v, TupleV):
            return any(self.any_runtime(x) for x in v.items)
        return v is not None and self.is_runtime(v)

    @staticmethod
    def compile_time(v: Optional[Value]) -> bool:
        """Whether the lowering computes ``v`` when it compiles (a constant, or computed from
        constexprs only), which it passes on as a constexpr of Python's value."""
        if isinstance(v, TupleV):
            return all(PrologueWalker.compile_time(x) for x in v.items)
        return isinstance(v, Const) or WalkRules.tensor_number(v) or isinstance(
            v, (Data, Sym)) and not v.runtime and (isinstance(v, Sym) or v.key is not None)

    def refuse_c_division(self, e: K.Expr, v: Optional[Value], passed: bool = False) -> None:
        """Refuse ``e`` (value ``v``) when it reaches run-time code through a recorded division
        (``passed``: a partition's argument, which reaches it whatever ``v`` is: the lowered
        kernel hands the partition the value it computed, C's, not Python's)."""
        if isinstance(e, K.TupleExpr) and isinstance(v, TupleV) and len(e.items) == len(v.items):
            for x, xv in zip(e.items, v.items):
                self.refuse_c_division(x, xv, passed)
            return
        hit = None if self.compile_time(v) and not passed else self.c_division(e)
        if hit is not None:
            root, at = hit
            py = self.k.names.py(root.id)
            if id(at) in self._why:
                how = self._why[id(at)]
            elif isinstance(at, K.UnaryOp) or isinstance(at, K.BinOp) and at.op not in ("//", "%"):
                how = (f"its `{self.src(at)}` leaves i32 there and wraps, where the verifier "
                       f"reads Python's unbounded integer")
            elif isinstance(at, K.Name):
                how = (f"`{self.k.names.py(at.id)}`, computed with a `//` or `%` of it (C's "
                       f"division there), with arithmetic that wraps in i32, a shift by 32 bits "
                       f"or more or unsigned arithmetic, is not the value the verifier reads "
                       f"(Python's)")
            else:
                how = (f"its `{at.op}`" if isinstance(at, K.BinOp) else f"its `{self.src(at)}`")
                how += (" takes C's division (truncating) there, where the verifier reads "
                        "Python's (flooring)")
            reached = ("is handed to a partition as the value the lowered kernel computes from"
                       if passed else "is computed at run time from")
            raise self.err(f"`{self.src(e)}` {reached} `{py}`, which the kernel "
                           f"body binds to a compile-time number: the lowered kernel (as Triton) "
                           f"holds `{py}` as a tensor (an i32 for a number inside i32), so "
                           f"{how}, and "
                           f"they differ here (or may): write the expression in place of `{py}`, "
                           f"or bind it as `{py}: tl.constexpr = ...`", e,
                           check="unsupported-expression")

    def refuse_run_time_cond(self, cond: K.Expr) -> None:
        """Refuse a kernel-body `if` / `while` condition that computes with a recorded division
        or overflow: the lowered kernel decides it at run time on the i32 tensor (`if M % 4 ==
        1:` with M = -7 is C's -3 there, so the branch the verifier took never ran). Each
        operation in it is evaluated first, as a comparison's operands are read apart."""
        for x in K.walk_expr(cond):
            if isinstance(x, (K.BinOp, K.Op, K.Compare)):
                self.eval_quiet(x)
        self.refuse_c_division(cond, None)

    def _s_If(self, s: K.If) -> None:
        self.refuse_run_time_cond(s.cond)
        super()._s_If(s)

    def _s_While(self, s: K.While) -> None:
        """A kernel-body `while`: walked as any loop (a name it rebinds becomes a param of its
        own after it), and also iteration by iteration where its condition is decided at each
        test (`j = C; while j > 0: K = K + 1; j = j - 1`, C bound), as the GPU runs it: a name
        bound before it then takes the exact value it holds after it (PrologueWalker.unroll)."""
        self.refuse_run_time_cond(s.cond)
        before = dict(self.env)
        # walked first from the values before it: refuse_endless asks whether that walk ended
        exact = self.unroll(s, before)
        self._ended = s if exact is not None else None
        super()._s_While(s)
        if exact:
            self.env.update(exact)

    _ended: Optional[K.While] = None  # the `while` whose walk ended (_s_While)

    def ends_exactly(self, s: K.While) -> bool:
        return self._ended is s

    def _s_Assign(self, s: K.Assign) -> None:
        rebound = s.target in self.env and not generated(s)
        super()._s_Assign(s)
        tensors, _, divided = self._body_sets()
        v = self.env.get(s.target)
        self.refuse_c_division(s.value, v)
        hit = self.c_division(s.value)
        if hit is not None:
            divided[s.target] = hit[0]
        else:
            divided.pop(s.target, None)
        # (not while a loop is walked iteration by iteration: its counters stay exact there,
        # and exact_after makes what it rebinds run-time values after it)
        rebound = rebound and not self._unrolling
        if (rebound or isinstance(v, TupleV) and self.any_runtime(v)) and not self._unrolling \
                and hit is None and isinstance(v, TupleV) and self.tensor_tuple(v) \
                and not self.annotated(s):
            # so are the number items of a tuple bound again (`T = (100, 1); T = (T[0] + 0,
            # 1)`), or of one with a run-time item (`T = (N, 100)`, whose items the frontend
            # does not fold in the partition): the lowering hands each to the partition as the
            # tensor it is in Triton
            v = run_time_items(v)
            self.env[s.target] = v
            tensors.discard(s.target)
            return
        if rebound and hit is None and isinstance(v, Aff) and not v.runtime \
                and not self.annotated(s):
            # a name the kernel body binds again by a plain assignment (`S = 100; S = S + 0`,
            # `K = -7; K %= 3`): the lowered kernel hands it to a partition as the scalar
            # tensor it computed (lowering/walks.py ``bindings``), as Triton holds it: a
            # run-time value of the same number, whose `//` and `%` are C's and whose type
            # promotes as a tensor's. It was a constexpr of Python's value in both views, so
            # the partition's `t + S` added in i8 and `D // 2` of -7 was -4 where Triton's is
            # -3 (lowering adversarial round 11). Where C's and Python's values may differ
            # (`hit`), the name stays in ``divided``, which refuses it where it reaches a
            # partition.
            v = Aff(v.expr, True, v.wide)
            self.env[s.target] = v
            tensors.discard(s.target)
            return
        # the lowering binds a name given another constexpr's name to that name itself (a
        # constexpr in the Gluon), and emits any other compile-time number as an assignment
        # (a tuple of such numbers too: Triton's visit_Assign makes each item a tensor, so
        # `T = (-7, 1)` then `T[0] % 4` is C's -3; lowering adversarial round 11)
        if (self.tensor_number(v) or self.tensor_tuple(v)) and not self.annotated(s) and not (
                isinstance(s.value, (K.Name, K.Global)) and not (
                    isinstance(s.value, K.Name) and s.value.id in tensors)):
            tensors.add(s.target)
        else:
            tensors.discard(s.target)

    #: iterations of kernel-body loops with constant bounds walked one by one (nests together)
    UNROLL_BUDGET = 64
    _unrolling = 0  # the depth of such walks under way
    _unroll_left = UNROLL_BUDGET  # iterations the walks under way may still take

    def _s_For(self, s: K.For) -> None:
        """A kernel-body loop. Walked as any loop, a name it rebinds becomes an opaque param of
        its own after it (PrologueWalker.merge_value), so `M = N; for i in range(2): M = M + 1`
        and a partition's `N + 2` were two params. Its value is one runtime value that every
        partition receives, so where the loop's bounds are constants and each iteration's
        statements compute exact values (no load, no `if` or loop on a runtime value, nothing
        a param stands for on its own), the loop is also walked iteration by iteration, as the
        GPU runs it, and a name bound before it takes the exact value it holds after it."""
        if s.static:
            # a tl.static_range takes compile-time bounds; a name of the kernel body bound to a
            # number is a tensor in the lowered kernel (as in Triton), which refuses it there
            tensors = self._body_sets()[0]
            for e in (s.start, s.stop, s.step):
                root = tensor_root(e, lambda n: n.id in tensors)
                if root is not None:
                    raise self.err(refusal("constexpr", self.k.names.py(root.id),
                                           f"`{self.range_text(s)}`"), s,
                                   check="unsupported-expression")
        before = dict(self.env)
        if self._unrolling:  # inside an unrolled loop: exact, or the outer walk gives up
            exact = self.unroll(s, before)
            if exact is None:
                raise _NotExact()
            self.env.update(exact)
            if s.var in assigned_names(s.body) or s.var not in before:
                self.env[s.var] = Poison(s.var, f"is the variable of the loop at line "
                                                f"{s.loc.line}, used after the loop")
            return
        super()._s_For(s)
        exact = self.unroll(s, before)
        if exact:
            self.env.update(exact)

    def unroll(self, s, before: dict) -> Optional[dict[str, Value]]:
        """The exact values after loop ``s`` (walked from ``before``, one iteration after the
        other) of the names it rebinds that were bound before it, or None where they are not
        all known exactly: bounds that are not constants (for a `while`, a condition not
        decided at some test), more iterations than the budget left, a statement other than an
        assignment, `if` or `for`, or a value that would become a param of its own."""
        if not all(isinstance(st, (K.Assign, K.If, K.For)) for st in K.walk_stmts(s.body)):
            return None
        bounds = (s.cond,) if isinstance(s, K.While) else (s.start, s.stop, s.step)
        if any(self.c_division(e) is not None for e in bounds):
            return None  # a bound the lowered kernel computes with C's division
        saved_env = dict(self.env)
        saved_sets = (set(self.float_names), set(self.bool_names), set(self.tensor_consts),
                      set(self.generated_consts), dict(self.tensor_item_paths))
        saved_temps, saved_node = dict(self.k.temps), self.merge_node
        self.env.clear()
        self.env.update(before)
        self._unrolling += 1
        self.depth += 1
        try:
            if isinstance(s, K.While):
                if not self.unroll_while(s):
                    return None
                return self.exact_after(s, before)
            bounds = [self.const_int(self.eval(e)) if not (isinstance(e, K.Const) and e.value
                                                             is None) else None
                      for e in (s.start, s.stop, s.step)]
            start, stop, step = bounds
            if isinstance(s.stop, K.Const) and s.stop.value is None:
                start, stop = 0, start
            step = 1 if isinstance(s.step, K.Const) and s.step.value is None else step
            if start is None or stop is None or not step:
                return None
            trips = range(start, stop, step)
            if len(trips) > self._unroll_left:
                return None
            self._unroll_left -= len(trips)
            try:
                for i in trips:
                    self.env[s.var] = Aff(Affine.of(i), not s.static)
                    self.exec_block(s.body)
            finally:
                self._unroll_left += len(trips)
            return self.exact_after(s, before)
        except (_NotExact, TleError):
            return None
        finally:
            self._unrolling -= 1
            self.depth -= 1
            self.env.clear()
            self.env.update(saved_env)
            (self.float_names, self.bool_names, self.tensor_consts,
             self.generated_consts, self.tensor_item_paths) = saved_sets
            self.k.temps.clear()
            self.k.temps.update(saved_temps)
            self.merge_node = saved_node

    def unroll_while(self, s: K.While) -> bool:
        """Walk the `while` loop ``s`` one iteration after the other while its condition is
        decided true (a comparison of numbers the walk knows exactly); whether it ended on a
        condition decided false within the iteration budget left."""
        taken = 0
        try:
            while True:
                tested = self.eval(s.cond)
                decided = self.const_int(tested)
                if decided is None and isinstance(tested, Const) \
                        and isinstance(tested.value, bool):
                    decided = int(tested.value)
                if decided is None:
                    return False
                if not decided:
                    return True
                if self._unroll_left <= 0:
                    return False
                self._unroll_left -= 1
                taken += 1
                self.exec_block(s.body)
        finally:
            self._unroll_left += taken

    def exact_after(self, s, before: dict) -> dict[str, Value]:
        """The names loop ``s`` rebinds that were bound ``before`` it, with the values the walk
        of its iterations left in the environment, as the run-time values they are after it
        (those whose value is no exact one, or whose width changed, are left out)."""
        var = s.var if isinstance(s, K.For) else None
        out: dict[str, Value] = {}
        for name in assigned_names(s.body):
            old, new = before.get(name), self.env.get(name)
            if name == var or old is None:
                continue
            # a name a loop assigns is a run-time value in the lowered kernel (and in
            # Triton: a loop-carried tensor), whatever it holds: later `//` and `%` of it
            # are C's
            if isinstance(new, Aff):
                new = Aff(new.expr, True, new.wide)
            elif isinstance(new, KernelArg):
                new = Aff(Affine.of(new.param), True) if new.constexpr else new
            elif isinstance(new, Sym) or isinstance(new, Data) and new.key is not None \
                    and not new.shared:
                new = replace(new, runtime=True)
            else:
                continue
            if self.width(new) != self.width(old):
                continue  # (Triton refuses a loop-carried value whose type changes)
            out[name] = new
        return out

    def load_base(self, v: Value) -> Value:
        """A value loaded in the kernel body (``tl.load(n_ptr + pid)``) that a function whose
        result's domain is narrowed from its operands' takes (``tl.maximum(tl.load(p), 0)``,
        ``tl.load(p) & 7``: NARROWING_FUNCTIONS, NARROWING_BINOPS) is an opaque param of its
        own, as it is bound to a name first (``m = tl.load(p); n = tl.maximum(m, 0)``): the
        expression is then a derived param of it, whose domain note_function_domain /
        note_quotient_domain narrow. Whole, it was one opaque param of every integer, and a
        correct kernel indexing by 2n was rejected "when n=-1", a value no launch gives. A load
        of a known float type stays data."""
        if not (isinstance(v, Data) and v.key is None and not v.shared and not v.unmodelled
                and not v.floating and v.partial is None and isinstance(v.node, K.Op)
                and v.node.name == "tl.load") or self._unrolling:
            return v
        dt = self.tile_dtype(v.node)
        if dt is not None and not dt.startswith(("int", "uint")):
            return v
        loc = v.node.loc
        text = self.src(v.node)
        ph = self.k.params.reserve(("load", loc.file, loc.line, loc.column), text, loc)
        self.note_param_type(ph, v.node)
        return Sym(self.k.params.hint(ph), ph, text, True)

    def note_param_type(self, ph: str, node) -> None:
        """Note what the param ``ph`` of the kernel-body value ``node`` drops of its type:
        unsigned (KernelCtx.unsigned_params), or read through a pointer of no known element type
        (KernelCtx.untyped_params, frontend/load_signs.py), either of which decides whether a
        `while` counter compared with it ends (frontend/loop_ends.py)."""
        unsigned = self.tile_dtype(node)
        if unsigned in ("uint32", "uint64"):
            self.k.unsigned_params[ph] = unsigned
        elif unsigned is None:
            src = untyped_source(self, node)
            if src is not None:
                self.k.untyped_params[ph] = src
            own = own_typed(self, node)
            if own is not None:
                self.k.own_typed_params[ph] = own
        # a comparison of such a load computes the value (`B = n - 1 >= 0`): Triton's
        # unsigned one may give another truth
        self.signed_conditions(node, node.loc, ", which pipe events depend on, holds", ph)

    def bind_name(self, name: str, value: Value, node) -> None:
        if isinstance(value, Data) and not value.shared and not value.unmodelled \
                and not value.floating:
            if value.key is None and self._unrolling:
                raise _NotExact()
            # (a view of shared memory, `local_ptr(buf)`, stays one: the partitions it is passed
            # to access the buffer through it; so does an integer cast the verifier does not
            # model, `M = N.to(tl.int8)`: as a free param it would hide why events on it fail;
            # and a float, `S = N / 2`: as an integer param, a loop over it was verified, where
            # Triton refuses a float bound)
            py = self.k.names.py(name)
            if value.key is not None:
                ph = self.k.reserve_pure(value.key, py, node.loc)
                runtime = value.runtime
            else:
                # one param per assignment statement (its whole location: two statements on one
                # line, `n = tl.load(a); NA = n; n = tl.load(b)`, bind two values)
                loc = node.loc
                ph = self.k.params.reserve(("var", name, loc.file, loc.line, loc.column), py, loc)
                runtime = True
                if value.node is not None and not free_value(value.node, self.free_name):
                    self.k.computed_params[ph] = loc.line
                    options = self.where_options(value.node)
                    if options is not None:
                        self.k.computed_options[ph] = tuple((o, None) for o in options)
            if value.node is not None:
                self.note_param_type(ph, value.node)
            value = Sym(py, ph, self.src(value.node) if value.node is not None else py, runtime)
        self.env[name] = value

    def _s_Eval(self, s: K.Eval) -> None:
        v = s.value
        if isinstance(v, K.Op) and v.name == "tle.assume":
            if self.depth:
                raise self.err(ASSUME_WHERE, v, check="bad-assume")
            self.assume(v)
            return
        super()._s_Eval(s)

    def assume(self, call: K.Op) -> None:
        text = self.k.source_text(call.loc) or self.src(call)
        if len(call.args) != 1 or call.kwargs:
            raise self.err(f"`{text}`: tle.assume takes one condition, e.g. tle.assume(N >= 0)",
                           call, check="bad-assume")
        conjuncts: list = []

        def flatten(e) -> None:
            if isinstance(e, K.BoolOp) and e.op == "and" and compare_chain(e) is None:
                for x in e.items:
                    flatten(x)
            else:
                conjuncts.append(e)

        flatten(call.args[0])
        bounds: dict[str, list[Optional[int]]] = {}
        for c in conjuncts:
            chain = compare_chain(c)
            if chain is not None:
                operands, ops = chain
            elif isinstance(c, K.Compare):
                operands, ops = [c.lhs, c.rhs], [c.op]
            else:
                raise self.err(f"`{text}`: `{self.src(c)}` is not a comparison of a param with "
                               f"integer constants (e.g. N >= 0, 1 <= N <= 64, N < 100; `and` of "
                               f"such)", c, check="bad-assume")
            kinds = [self.assume_operand(o, text) for o in operands]
            for i, sym in enumerate(ops):
                (lk, lx), (rk, rx) = kinds[i], kinds[i + 1]
                piece = f"{self.src(operands[i])} {sym} {self.src(operands[i + 1])}"
                if sym == "!=":
                    raise self.err(f"`{text}`: `{piece}` does not bound a param (use <, <=, >, >= "
                                   f"or ==)", c, check="bad-assume")
                if lk == "const" and rk == "const":
                    if not _holds(lx, sym, rx):
                        raise self.err(f"`{text}` does not hold: `{piece}` is false for the values "
                                       f"the kernel is read with ({lx} {sym} {rx})", c,
                                       check="bad-assume")
                    continue
                if lk != "const" and rk != "const":
                    raise self.err(f"`{text}`: `{piece}` compares two params; tle.assume bounds "
                                   f"one param by integer constants", c, check="bad-assume")
                if lk == "const":
                    (lk, lx), (rk, rx), sym = (rk, rx), (lk, lx), _ASSUME_FLIP[sym]
                if lk == "affine":  # k * P + c  sym  rx  ->  P  sym'  bound (exact in integers)
                    (lx, k, c0), rx = lx, rx - lx[2]
                    if k < 0:
                        k, rx, sym = -k, -rx, _ASSUME_FLIP[sym]
                    if sym == "==" and rx % k:
                        raise self.err(f"`{text}` leaves no value: `{piece}` has no integer "
                                       f"solution", c, check="bad-assume")
                    rx = {">=": -(-rx // k), ">": rx // k, "<=": rx // k, "<": -(-rx // k),
                          "==": rx // k}[sym]
                lo, hi = {">=": (rx, None), ">": (rx + 1, None), "<=": (None, rx),
                          "<": (None, rx - 1), "==": (rx, rx)}[sym]
                cur = bounds.setdefault(lx, [None, None])
                if lo is not None:
                    cur[0] = lo if cur[0] is None else max(cur[0], lo)
                if hi is not None:
                    cur[1] = hi if cur[1] is None else min(cur[1], hi)
        loc = call.loc
        keys = {sl.placeholder: key for key, sl in self.k.params.by_key.items()}
        for ph in bounds:
            key = keys.get(ph)
            if isinstance(key, tuple) and len(key) == 2 and key[0] == "pure" \
                    and str(key[1]).startswith("compare"):
                # a comparison's definition (min(max(N - 5, 0), 1), compared_param) wraps in
                # i32 where the comparison does not (N - 5 at N = -2**31): a launch would check
                # another value than the GPU computes
                raise self.err(f"`{text}` bounds `{self.k.params.slot(ph).hint}`, a comparison: "
                               f"bound the values it compares instead (tle.assume(N > 5) for "
                               f"B = N > 5)", call, check="bad-assume")
        for ph, (lo, hi) in bounds.items():
            new_lo, new_hi = self.k.params.narrow(ph, lo, hi)
            slot = self.k.params.slot(ph)
            if new_lo is not None and new_hi is not None and new_lo > new_hi:
                raise self.err(f"`{text}` leaves no value of {slot.hint}: its domain would be "
                               f"[{new_lo}, {new_hi}]", call, check="bad-assume")
            steps = launch_steps(self.k.params, self.k.definitions, ph)
            if steps is None:
                raise self.err(f"`{text}` bounds {slot.hint}, which is not computed from the "
                               f"kernel's arguments alone (a value loaded from memory, a program "
                               f"id, or one a branch chose): no launch can check it, so the "
                               f"protocol would be verified for values nothing guarantees; bound "
                               f"the arguments it comes from, or make the protocol hold for "
                               f"every value of it", call, check="bad-assume")
            keys = {sl.placeholder: key for key, sl in self.k.params.by_key.items()}
            if any(keys.get(p) in {("pure", k) for k in self.k.unsure_width}
                   for p in reached(self.k.params, self.k.definitions, [ph])):
                raise self.err(f"`{text}` bounds {slot.hint}, which is computed in i32 or in i64 "
                               f"depending on the type of an argument its expression cancels "
                               f"(`N + 0 * B`: i64 when B is passed as i64): a launch cannot "
                               f"compute it as the GPU does from its definition; drop the "
                               f"cancelled term", call, check="bad-assume")
            self.k.assumptions.append((ph, Assumption(slot.hint, slot.arg, lo, hi, text, loc,
                                                      steps)))

    def assume_operand(self, node, text: str) -> tuple[str, object]:
        v = self.eval(node)
        c = self.const_int(v)
        if c is not None:
            return "const", c
        a = self.as_aff(v) if isinstance(v, (Aff, KernelArg, Sym, Data)) else None
        if (a is not None and a.const == 0 and len(a.terms) == 1 and a.terms[0][1] == 1
                and is_placeholder(a.terms[0][0])):
            return "param", a.terms[0][0]
        if (a is not None and len(a.terms) == 1 and a.terms[0][1] != 0
                and is_placeholder(a.terms[0][0])):
            # k * P + c (M = N // 64 - 1: P = N // 64): a bound on it is one on P
            return "affine", (a.terms[0][0], a.terms[0][1], a.const)
        raise self.err(f"`{text}`: `{self.src(node)}` is neither a param (a kernel argument or a "
                       f"kernel-level integer computed from them) nor an integer constant", node,
                       check="bad-assume")

    def merge_value(self, name: str, a: Optional[Value], b: Optional[Value], reason: str,
                    slot_reason: Optional[str] = None) -> Optional[Value]:
        # A kernel-level value is one runtime value shared by every partition, whatever path
        # computed it: an opaque param rather than poison.
        merged = super().merge_value(name, a, b, reason, slot_reason)
        if (isinstance(merged, (Poison, Data))
                and not any(isinstance(x, HANDLES + (BufferRef, SlotV, WaitV))
                            or isinstance(x, Data) and x.shared for x in (a, b))):
            if self._unrolling:
                raise _NotExact()
            node = self.merge_node
            loc = node.loc if node is not None else Loc(self.k.path, 0)
            py = self.k.names.py(name)
            ph = self.k.params.reserve(("var", name, reason), py, loc)
            free = self.__dict__.setdefault("_free_merged", set())
            if any(self.arbitrary(x) or self.fresh_free(x, node) for x in (a, b)):
                # any value at some launch; once so (a loop's merge is read more than once, its
                # body's values better known the next time), the param stays free
                free.add(ph)
                self.k.computed_params.pop(ph, None)
                self.k.computed_options.pop(ph, None)
            elif ph not in free:
                # a choice between values the arguments determine: one of them at each launch
                self.k.computed_params[ph] = loc.line
                options = [self.option(x) for x in (a, b)]
                guard = self.read_for(self.if_conds, node.cond) if isinstance(node, K.If) \
                    else None
                if all(o is not None for o in options) and isinstance(node, K.If):
                    if self.free_choice(node.cond):  # each way taken at some launch
                        self.k.computed_options[ph] = ((options[0], None), (options[1], None))
                    elif isinstance(guard, (Compare, ModCompare, BoolOp, Not)):
                        # the then-branch's value where the condition holds, the else-branch's
                        # elsewhere (merge_into gives them in that order)
                        self.k.computed_options[ph] = ((options[0], guard),
                                                       (options[1], Not(guard)))
            return Sym(py, ph, py)
        return merged

    @property
    def if_conds(self) -> dict:
        """Conditions read so far, by the identity of their node, each beside its node
        (:meth:`cond`)."""
        return self.__dict__.setdefault("_if_conds", {})

    def cond(self, node: K.Expr, guarded: bool = False):
        """The condition as the walker reads it, kept by the node's identity for a value an
        ``if`` chooses (merge_value: which branch's value holds where)."""
        self.if_params[id(node)] = (node, len(self.k.params.by_key))  # params reserved before
        out = super().cond(node, guarded)
        self.if_conds[id(node)] = (node, out)
        return out

    @staticmethod
    def read_for(table: dict, node) -> object:
        """What ``table`` (:attr:`if_conds`, :attr:`if_params`) holds for this very node (kept
        beside it, so that its identity is not another node's that took its place)."""
        got = table.get(id(node))
        return got[1] if got is not None and got[0] is node else None

    @property
    def if_params(self) -> dict:
        """How many params were reserved when a condition was read, by its node's identity."""
        return self.__dict__.setdefault("_if_params", {})

    @staticmethod
    def option(v: Optional[Value]) -> Optional[Affine]:
        """``v`` as an affine value over placeholders (an argument, a param, an affine
        expression of them), else None."""
        if isinstance(v, Aff):
            return v.expr
        if isinstance(v, (KernelArg, Sym)) and is_placeholder(v.param):
            return Affine.of(v.param)
        return None

    def where_options(self, node: K.Expr) -> Optional[tuple]:
        """The two values of ``tl.where(COND, X, Y)`` where some launch takes each (a free
        choice: COND compares a load or the program id with 0 or 1) and X and Y are affine
        expressions of names and constants (read again here: no call, so the same values)."""
        if not (isinstance(node, K.Op) and node.name == "tl.where" and len(node.args) == 3
                and not node.kwargs and self.free_choice(node.args[0])):
            return None
        options = []
        for x in node.args[1:]:
            if not all(isinstance(y, (K.Name, K.Const, K.BinOp, K.UnaryOp))
                       for y in K.walk_expr(x)):
                return None
            o = self.option(self.eval(x))
            if o is None:
                return None
            options.append(o)
        return tuple(options)

    def free_choice(self, cond: K.Expr) -> bool:
        """Whether some launch takes each way of an ``if`` on ``cond``, whatever its arguments:
        a comparison of ``tl.program_id`` (0 or 1 in a grid of two programs) or of a value read
        from memory (0 or 1 where its type is known and no int1, else 0 or nonzero) with 0 or 1,
        true at one of those values and false at the other (``tl.program_id(0) == 0``,
        ``tl.load(p) != 0``, ``tl.load(p) > 0`` of an fp32 p)."""
        if not isinstance(cond, K.Compare) or cond.op not in _SPLITS_0_1:
            return False
        x, c = cond.lhs, cond.rhs
        op = cond.op
        if isinstance(x, K.Const) and not isinstance(c, K.Const):
            x, c, op = c, x, _FLIPPED[op]
        if not isinstance(c, K.Const) or isinstance(c.value, bool) or c.value not in (0, 1):
            return False
        if _compares(0, op, c.value) == _compares(1, op, c.value):
            return False
        if isinstance(x, K.Op) and x.name == "tl.program_id":
            return True
        if op not in ("==", "!=") or c.value != 0:
            # a load of an int1 (or of a type not known to be another) may hold 0 and -1 only
            # (Triton widens it by sign extension): `== 0` / `!= 0` alone split it
            dt = self.tile_dtype(x)
            if dt is None or dt in ("int1", "bool", "i1"):
                return False
        while isinstance(x, K.Op) and x.name == "to" and x.args:
            x = x.args[0]
        if isinstance(x, K.Op):
            return x.name == "tl.load"
        if isinstance(x, K.Name):
            # a name bound to a value read from memory: a param of its own, not computed
            v = self.env.get(x.id)
            if isinstance(v, Data):
                return isinstance(v.node, K.Op) and v.node.name == "tl.load"
            if isinstance(v, Sym) and is_placeholder(v.param) \
                    and v.param not in self.k.computed_params:
                key = next((k for k, sl in self.k.params.by_key.items()
                            if sl.placeholder == v.param), None)
                return isinstance(key, tuple) and key[:1] in (("load",), ("var",))
        return False

    def free_name(self, name: str) -> bool:
        """Whether the name ``name`` holds a value that may be any integer at a launch: bound
        to a value read from memory or of an operation the verifier knows nothing of (a param
        of its own that is not computed), or to such a value not bound to a param (not a loop's
        carried value while its body is walked: `NC += 1` counts, it adds nothing free)."""
        v = self.env.get(name)
        if isinstance(v, Sym):
            if not is_placeholder(v.param) or v.param in self.k.computed_params:
                return False
            key = next((k for k, sl in self.k.params.by_key.items()
                        if sl.placeholder == v.param), None)
            return isinstance(key, tuple) and key[:1] in (("load",), ("var",))
        if isinstance(v, Data):
            # no node: a value the walker does not know (what a loop's body adds decides)
            return v.key is None and v.node is not None and free_value(v.node, self.free_name)
        return False  # a loop's carried value (Poison) while its body is walked, or no value

    def fresh_free(self, v: Optional[Value], node) -> bool:
        """Whether ``v`` is a param of a value read from memory (or of an operation the
        verifier knows nothing of) that the merged block bound itself: a loop's accumulator of
        loaded data (``NP += tl.sum(tl.load(p + offs))``, any value after the loop), a value
        loaded in a branch. One bound before the block (``C = P if P > 4 else 4``) is a value
        the protocol may read besides: the choice ties the two."""
        if not (isinstance(v, Sym) and is_placeholder(v.param)
                and v.param not in self.k.computed_params):
            return False
        key = next((k for k, sl in self.k.params.by_key.items() if sl.placeholder == v.param),
                   None)
        if not (isinstance(key, tuple) and key[:1] in (("load",), ("var",))):
            return False
        if isinstance(node, K.If):
            start = self.read_for(self.if_params, node.cond)
            return start is not None and int(v.param[len(PLACEHOLDER):]) >= start
        return True  # a loop's value: its body may bind it again at each iteration

    def arbitrary(self, v: Optional[Value]) -> bool:
        """Whether ``v`` may be any integer whatever the other params are: a value read from
        memory here (not a name bound to one, whose value the protocol may use elsewhere: `C =
        P if P > 4 else 4` is no value below 4), or one the verifier knows nothing of."""
        if isinstance(v, Data):
            return v.node is None or free_value(v.node, self.free_name)
        return isinstance(v, Poison)


def free_value(e: K.Expr, free_name=lambda name: True) -> bool:
    """Whether the value of ``e`` may be any integer at a launch, whatever its arguments: a
    value read from memory (``tl.load(p)``, an atomic's, cast or not), one of an operation the
    verifier knows nothing of, or one of a name ``free_name`` says holds such a value (a loaded
    value bound to a name, a helper's inlined temporary). Triton's integer arithmetic of
    arguments, constants and program ids (``tl.where(N % 64 == 0, N // 64, N // 64 + 1)``)
    gives a value its operands determine: not a free one (Program.computed)."""
    def loaded(x: K.Expr) -> bool:
        while isinstance(x, K.Op) and x.name == "to" and x.args:
            x = x.args[0]
        return isinstance(x, K.Op) and (x.name == "tl.load" or x.name.startswith("tl.atomic_"))

    if loaded(e):
        return True
    for x in K.walk_expr(e):
        if isinstance(x, K.BinOp) and x.op in ("+", "-") and (loaded(x.lhs) or loaded(x.rhs)):
            return True  # a loaded value added: any integer, whatever the other operand
        if isinstance(x, K.Op):
            if x.name == "to" or x.name == "tl.load" or x.name.startswith("tl.atomic_"):
                continue
            name = x.name.rsplit(".", 1)[-1]
            if not x.name.startswith(("tl.", "triton.language.")) or name not in PURE_CALLS:
                return True
        elif isinstance(x, K.Name):
            if free_name(x.id):
                return True
        elif not isinstance(x, (K.Const, K.Global, K.BinOp, K.UnaryOp, K.Compare, K.BoolOp)):
            return True
    return False


#: Triton calls whose value their operands' values determine
PURE_CALLS = frozenset({"where", "minimum", "maximum", "cdiv", "abs", "clamp", "program_id",
                        "num_programs"})


#: comparisons :meth:`PrologueWalker.free_choice` reads, and each with its sides swapped
_SPLITS_0_1 = ("<", "<=", ">", ">=", "==", "!=")
_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}


def _compares(a: int, op: str, b: int) -> bool:
    return a != b if op == "!=" else _holds(a, op, b)


def _holds(a: int, op: str, b: int) -> bool:
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b}[op]
