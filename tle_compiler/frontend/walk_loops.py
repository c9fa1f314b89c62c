"""Loops read by the protocol view: `range` / `tl.range` / `tl.static_range` bounds and steps
as Triton 3.6 computes them, data loops, `while` loops, and the obligations of loops that
may never end (zero steps, counters that wrap)."""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import Optional, Union

from ..ir import kernel as K
from ..ir.expr import Affine
from ..ir.nodes import For, walk_accesses, walk_events
from .folding import fold
from .load_signs import first_untyped, unsigned_compare
from .load_types import NOT_NARROW, TYPES, first_float_read, narrow_arithmetic, own_typed
from .loop_ends import I32_MAX, TypedOnly, why_not_ending
from .params import is_placeholder
from .protocol_terms import assigned_names, carried_scalar
from .scope import is_triton
from .values import Aff, Const, Data, I64, Poison, SlotV, TupleV, Value, WaitV


class LoopWalk:
    """The loops part of :class:`~.walker.Walker`: its methods, kept here by idea."""

    def lose(self, v: Value, name: str, reason: str) -> Value:
        if isinstance(v, Data):
            return replace(v, lost=v.lost or f"`{self.k.names.py(name)}` {reason}")
        if isinstance(v, TupleV):
            return TupleV(tuple(self.lose(x, name, reason) for x in v.items))
        if isinstance(v, (SlotV, WaitV, Poison)):
            return Poison(name, reason, slot=True)
        return v

    # -- for ------------------------------------------------------------------------------------
    def fresh_loop_var(self, name: str) -> str:
        ir, k = name, 1
        while ir in self.loop_vars:
            ir, k = f"{name}_{k}", k + 1
        return ir

    def range_text(self, s: K.For) -> str:
        loop = self.k.source.stmt(s.loc, ast.For)
        if loop is not None:
            return ast.unparse(loop.iter)
        fn = "tl.static_range" if s.static else "range"
        args = [s.start, s.stop] if not (isinstance(s.start, K.Const) and s.start.value == 0) \
            else [s.stop]
        if not (isinstance(s.step, K.Const) and s.step.value == 1):
            args = [s.start, s.stop, s.step]
        return f"{fn}({', '.join(self.src(a) for a in args)})"

    def range_bounds(self, s: K.For) -> tuple[Optional[tuple[Affine, Affine, int]], Optional[str]]:
        text = self.range_text(s)
        start_v, stop_v, step_v = self.eval(s.start), self.eval(s.stop), self.eval(s.step)
        if s.static:
            self.static_bounds_known(s, text, ((s.start, start_v), (s.stop, stop_v),
                                               (s.step, step_v)))
        start, stop = (s.start, start_v), (s.stop, stop_v)
        if isinstance(stop_v, Const) and stop_v.value is None:
            start, stop = (K.Const(0), Aff(Affine.of(0))), (s.start, start_v)
        if isinstance(step_v, Const) and step_v.value is None:
            step_c: Optional[int] = 1
        else:
            step_c = self.const_int(step_v)
        if step_c == 0:
            raise self.err(f"the step of `{text}` must be a non-zero integer, got 0 (the loop "
                           f"would never end)", s, check="bad-loop")
        if step_c is None and not s.static:
            self.note_runtime_step(s, text, step_v)
        if step_c is None:
            # what to write instead: the persistent-kernel loop `range(pid, N, num_programs)`
            # (Triton's tutorials) counts iterations with a unit step and a cdiv trip count
            # that both partitions compute alike
            step, first, last = self.src(s.step), self.src(start[0]), self.src(stop[0])
            hint = "" if s.static else (
                f"; to stride by a run-time step, loop over a counter, `for k in "
                f"range(tl.cdiv({last} - {first}, {step})):`, and compute `{first} + k * "
                f"{step}` in the body (events indexed by k)")
            return None, (f"the step of `{text}` must be a non-zero integer literal or constant, "
                          f"got `{step}`{hint}")
        if step_c < 0 and not s.static and self.is_runtime(step_v):
            # Triton reverses a loop (swaps its bounds, counts up, maps the variable back) only
            # for a constexpr step; a runtime one goes to scf.for as it is, which counts up and
            # runs no iteration from start > stop: `S = 0 * N - 1` then `range(N - 1, -1, S)`
            # loops N times in Python and never on the GPU
            raise self.err(f"the step of `{text}` is negative ({step_c}) but computed at run "
                           f"time (`{self.src(s.step)}`): Triton reverses a loop only for a "
                           f"constexpr step, and the loop it builds from a runtime one (scf.for) "
                           f"runs no iteration from a start above its stop; write the step as a "
                           f"literal or a constexpr", s, check="bad-loop")
        if step_c < 0 and not s.static and (any(
                isinstance(x, K.Op) and x.name == "to_tensor" for x in K.walk_expr(s.step))
                or self.tensor_const(s.step) is not None):
            # `S = -1` then `range(N, 0, S)`: a plain assignment made S a tensor, whose loop
            # Triton does not reverse (the builder folded S to its value, which it reads
            # through); a name bound more than once (`s = -1` before the loop, `s =
            # w.acquire(...)` in its body) is not folded and stays a name of tensor_consts,
            # which the lowered Gluon assigns as a tensor too
            raise self.err(f"the step of `{text}` is negative ({step_c}) and a tensor in Triton "
                           f"3.6 (`{self.src(s.step)}` computes from a number a plain assignment "
                           f"made a tensor): Triton reverses a loop only for a constexpr step, "
                           f"and the loop it builds from a tensor one (scf.for) runs no "
                           f"iteration from a start above its stop; write the step as a literal, "
                           f"or bind the name as `name: tl.constexpr = ...`", s,
                           check="bad-loop")
        lo, hi = self.as_aff(start[1]), self.as_aff(stop[1])
        if lo is None or hi is None:
            which, v = start if lo is None else stop
            cast = f" ({v.why})" if isinstance(v, Data) and v.unmodelled else ""
            return None, (f"loop bounds must be affine in enclosing loop variables and kernel "
                          f"params: `{self.src(which)}` is not{cast}")
        return (lo, hi, step_c), None

    def runtime_division(self, a: Affine, b: Affine, node, wide) -> Optional[tuple]:
        """A run-time ``//`` or ``%`` by a divisor that is no constant (``N // M``): Triton 3.6
        emits arith.divsi / remsi, undefined (LLVM's sdiv / srem) where the divisor is 0, or
        -1 beside a dividend of the type's least value. Its value is an opaque param, and
        "verified for every value of N_M" held for the launches with M = 0 too (adversarial
        round 58). Where the divisor's domain holds 0, or -1 beside a dividend whose domain
        holds the least value, the obligation is returned, (location, message, operands), for
        :meth:`binop` to keep under the quotient's key (Program.zero_steps, check
        division-by-zero) and the verdict to refuse, should the value be a param of the
        Program (a division only data reads is no protocol); None otherwise."""
        if isinstance(node, K.BinOp):
            num, div = self.src(node.lhs), self.src(node.rhs)
        elif isinstance(node, K.Op) and len(node.args) == 2:  # tl.cdiv(x, div)
            num, div = f"{self.src(node.args[0])} + {self.src(node.args[1])} - 1", \
                self.src(node.args[1])
        else:
            return None
        blo, bhi = self.bounds(b)
        alo, _ = self.bounds(a)
        least = -2 ** 63 if I64 in wide else -2 ** 31
        why = None
        if (blo is None or blo <= 0) and (bhi is None or bhi >= 0):
            why = (f"its divisor `{div}` may be 0 in the params' domains, where the GPU's "
                   f"integer division is undefined (LLVM's sdiv / srem by zero)")
        elif (blo is None or blo <= -1) and (bhi is None or bhi >= -1) \
                and (alo is None or alo <= least):
            why = (f"its divisor `{div}` may be -1 where `{num}` may be {least}, whose quotient "
                   f"overflows (undefined on the GPU)")
        if why is None:
            return None
        # (with the operands, so that a verdict for --param values the divisor is neither 0 nor
        # -1 at drops it: passes/verify_protocol.py check_structure)
        return (node.loc, f"`{self.src(node)}`: {why}; state domains that exclude it "
                          f"(`tle.assume({div} >= 1)`)",
                (a, b, least, alo is None or alo <= least))

    def note_runtime_step(self, s: K.For, text: str, step_v: Value) -> None:
        """A loop whose step is computed at run time: Triton builds scf.for from it unchecked,
        and at step 0 the loop never ends (the partition hangs, whatever the pipes do). Where
        the step's domain holds 0 (or it is not known), the Program carries an obligation the
        verdict refuses (Program.zero_steps, passes/verify_protocol.py): the reading itself is
        kept (a loop without events may step by a run-time value)."""
        a = self.as_aff(step_v)
        lo, hi = self.bounds(a) if a is not None else (None, None)
        if (lo is not None and lo > 0) or (hi is not None and hi < 0):
            return
        free = sorted({self.k.params.slot(v).arg for v in a.variables
                       if is_placeholder(v) and self.k.params.slot(v).arg
                       in self.k.free_constexprs}) if a is not None else []
        if free and not self.is_runtime(step_v):
            # a step of constexprs only is a number when the kernel compiles (`range(0, 10, C)`:
            # no run-time value, never 0 in a launch with C = 5), so the reading stops (a check
            # of SPECIALIZABLE) and tle-dump reads it again with the values it is compiled with,
            # where the step is a constant (adversarial round 63: it was refused as "computed
            # at run time", zero-step, whatever DEFAULT_CONFIG gave)
            raise self.err(f"the step of `{text}` is computed from the constexpr "
                           f"{', '.join(free)}, which the kernel is read without a value for: "
                           f"Triton builds the loop from the value it is compiled with, so it "
                           f"is checked at that value (give one: --param, DEFAULT_CONFIG or the "
                           f"launch's constexprs)", s, check="constexpr-operand")
        dom = "" if a is None else f", which may be 0 in the params' domains"
        # (with the step, so that a verdict for --param values that fix it to a non-zero i32
        # drops the obligation: passes/verify_protocol.py check_structure, adversarial round 63)
        self.note_endless(s, (
            f"the step of `{text}` is computed at run time (`{self.src(s.step)}`{dom}): Triton "
            f"builds the loop (scf.for) from it unchecked, and at step 0 it never ends; state a "
            f"domain that excludes 0 (`tle.assume({self.src(s.step)} >= 1)`) or step by a "
            f"constant"), None if a is None else "zero-step", None if a is None else (a,))

    def note_endless(self, s: K.For, message: str, check: Optional[str] = None,
                     operands: Optional[tuple] = None) -> None:
        """Keep the obligation that the loop ``s`` ends for the verdict to refuse
        (Program.zero_steps: check ``check``, zero-step by default), once per loop (a loop
        walked again, in a branch or an unrolled body, is one loop). ``operands``: a zero-step
        obligation's step, ``(step,)`` (an Affine), which --param values may fix."""
        where = (s.loc.file, s.loc.line, s.loc.column)
        if any((x[0].file, x[0].line, x[0].column) == where for x in self.k.zero_steps):
            return
        if operands is not None:
            self.k.zero_steps.append((s.loc, message, check, operands))
            return
        self.k.zero_steps.append((s.loc, message) if check is None else (s.loc, message, check))

    def static_bounds_known(self, s: K.For, text: str, bounds) -> None:
        """A tl.static_range loop is unrolled when Triton compiles the kernel, so its start, stop
        and step must be compile-time integers (literals, constexprs, static loop variables):
        Triton refuses a runtime one ("... is not a constexpr"). An error at the loop's line,
        whether or not the loop performs pipe events (the kernel cannot compile either way)."""
        for node, v in bounds:
            self.tensor_constexpr(node, f"`{text}`", s)
            if self.is_runtime(v):
                raise self.err(f"`{text}` unrolls at compile time, but `{self.src(node)}` is only "
                               f"known at run time (a kernel argument that is not tl.constexpr, "
                               f"a range / tl.range loop variable, or a value computed from "
                               f"one): Triton refuses to compile it; make it a tl.constexpr or "
                               f"loop with range(...)", s, check="bad-loop")

    def loop_options(self, s: K.For) -> None:
        """tl.range's loop options at a value other than their default (num_stages,
        loop_unroll_factor, flatten, warp_specialize, ...) steer passes Gluon does not run, and
        the lowering refuses them at the option (translate.st_For); a kernel it cannot compile is
        refused here too, with its message, so that tle-dump does not prove it (check
        `bad-loop`)."""
        for opt, v in s.options:
            shown = repr(v.value) if isinstance(v, K.Const) else "..."
            raise self.err(f"tl.range(..., {opt}={shown}) is not supported by the lowering: Gluon "
                           f"runs none of Triton's loop pipelining, unrolling, flattening or "
                           f"warp-specialization passes, and its builtin range carries no loop "
                           f"options (the pipes are the pipelining); leave it at its default",
                           v if v.loc.line else s, check="bad-loop")

    #: tl functions whose value is a float whatever their operands
    FLOAT_FUNCTIONS = frozenset({"exp", "exp2", "log", "log2", "sqrt", "sqrt_rn", "rsqrt", "sin",
                                 "cos", "sigmoid", "div_rn", "fdiv", "erf", "floor", "ceil"})

    def float_part(self, e: K.Expr) -> Optional[K.Expr]:
        """The part of ``e`` that makes it a float in Triton 3.6 (a float constant, a true
        division `/`, `float(x)`, a cast to a float type, a float math function, a name last
        assigned one, a float kernel argument), else None. Not every float is seen (a value
        loaded through a float pointer is not): this finds the ones the source spells."""
        if isinstance(e, (K.Const, K.Global)):
            return e if isinstance(e.value, float) else None
        if isinstance(e, K.Name):
            v = self.env.get(e.id)
            return e if e.id in self.float_names or isinstance(v, Data) and v.floating else None
        if isinstance(e, K.BinOp):
            if e.op == "/":
                return e
            if e.op == "**" and isinstance(e.rhs, (K.Const, K.UnaryOp)) and isinstance(
                    fold(e.rhs), int) and fold(e.rhs) < 0:
                return e  # Python's power with a negative exponent, on constexprs: a float
            if e.op in ("+", "-", "*", "//", "%", "**"):
                return self.float_part(e.lhs) or self.float_part(e.rhs)
            return None
        if isinstance(e, K.UnaryOp) and e.op in ("-", "+"):
            return self.float_part(e.operand)
        if isinstance(e, K.Op):
            if e.name == "to" and len(e.args) > 1 and isinstance(e.args[1], K.DType):
                return e if e.args[1].name.startswith(("fp", "bf")) else None
            fn = e.name.rsplit(".", 1)[-1]
            if e.name == "builtins.float" or is_triton(e.name) and fn in self.FLOAT_FUNCTIONS:
                return e
            if e.name in ("builtins.min", "builtins.max") or is_triton(e.name) and fn in (
                    "minimum", "maximum", "where"):
                return next((f for f in map(self.float_part, e.args) if f is not None), None)
        return None

    def float_bounds(self, s: K.For) -> None:
        """Refuse a loop whose start, stop or step is a float (check `bad-loop`): Triton 3.6
        takes integers only ("For loop bounds and step must all be ints"; tl.static_range:
        "'float' object cannot be interpreted as an integer"). A loop without pipe events is
        data to the verifier, so such a kernel was verified, and its lowered Gluon did not
        compile."""
        for what, e in (("start", s.start), ("stop", s.stop), ("step", s.step)):
            f = self.float_part(e)
            if f is not None:
                why = f"`{self.src(f)}`" if not (isinstance(f, K.BinOp) and f.op == "**") else \
                    f"`{self.src(f)}`: Python's `**` with the negative exponent {fold(f.rhs)}"
                raise self.err(f"`{self.range_text(s)}`: its {what} `{self.src(e)}` is a float "
                               f"({why}), and Triton 3.6 takes integer loop bounds and "
                               f"steps only (\"For loop bounds and step must all be ints\"): "
                               f"compute it as an integer (`//`, or `.to(tl.int32)`)", e
                               if e.loc.line else s, check="bad-loop")

    def bool_part(self, e: K.Expr) -> Optional[K.Expr]:
        """The part of ``e`` that makes it a bool in Triton 3.6 (a bool constant or module
        constant, a comparison, `not`, `and` / `or` of one, `&` / `|` / `^` of two, a name last
        assigned one), else None."""
        if isinstance(e, (K.Const, K.Global)):
            return e if isinstance(e.value, bool) else None
        if isinstance(e, K.Name):
            v = self.env.get(e.id)
            return e if e.id in self.bool_names or isinstance(v, Const) and isinstance(
                v.value, bool) else None
        if isinstance(e, K.Compare) or isinstance(e, K.UnaryOp) and e.op == "not":
            return e
        if isinstance(e, K.BoolOp):
            return next((b for b in map(self.bool_part, e.items) if b is not None), None)
        if isinstance(e, K.BinOp) and e.op in ("&", "|", "^"):
            if self.bool_part(e.lhs) is not None and self.bool_part(e.rhs) is not None:
                return e
        return None

    def i1_tensor(self, e: K.Expr) -> bool:
        """Whether Triton 3.6 computes ``e`` as an i1 tensor: a name bound to a bool (a
        tensor once assigned), or `*` / `&` / `|` / `^` / `+` / `-` of two bools one of which
        is such a tensor (`B * B`): two i1 operands keep i1, where a constexpr int would
        promote to i32."""
        if isinstance(e, K.Name):
            return self.bool_part(e) is not None
        if isinstance(e, K.BinOp) and e.op in ("*", "&", "|", "^", "+", "-"):
            return (self.i1_like(e.lhs) and self.i1_like(e.rhs)
                    and (self.i1_tensor(e.lhs) or self.i1_tensor(e.rhs)))
        return False

    def i1_like(self, e: K.Expr) -> bool:
        return self.bool_part(e) is not None or self.i1_tensor(e)

    def int_src(self, e: K.Expr) -> str:
        """``e`` made an integer as Triton computes it (`B * 1`): the source spelt for a
        message."""
        text = self.src(e)
        return f"{text} * 1" if isinstance(e, (K.Name, K.Const, K.Global)) else f"({text}) * 1"

    def bool_bounds(self, s: K.For) -> Optional[str]:
        """Why a range / tl.range loop whose start, stop or step is a bool cannot hold pipe
        events (check `non-affine-loop` when it does), else None. Triton 3.6 makes a bool
        bound an i1 and widens it to the loop's i32 with a sign extension (visit_For's
        create_int_cast of a signed type), so True counts as -1: `range(C > 2)` runs no
        iteration where Python's runs one, `range(True, 2)` three. The verifier counted
        Python's and the lowered Gluon (the same code generator) runs Triton's: the writer's
        commit never ran and the reader waited for it. A tl.static_range unrolls with Python's
        range and keeps the bool's value; a loop without events is data, as any other."""
        if s.static:
            return None
        for what, e in (("start", s.start), ("stop", s.stop), ("step", s.step)):
            b = self.bool_part(e)
            if b is None:
                v = self.eval(e)
                b = e if isinstance(v, Const) and isinstance(v.value, bool) else None
            if b is not None:
                return (f"`{self.range_text(s)}`: its {what} `{self.src(e)}` is a bool "
                        f"(`{self.src(b)}`), which Triton 3.6 widens to the loop's i32 by sign "
                        f"extension: True counts as -1 (`range(True)` runs no iteration, "
                        f"Python's one); write it as an integer, `{self.int_src(e)}`")
        return None

    #: how deep the walk is in the bounds of a loop (:meth:`scalar_out_of_range`)
    _in_loop_bound = 0

    #: whether the walk is in the body of a tl.static_range of no iteration (no statement of
    #: which Triton 3.6 evaluates: :meth:`_s_For`); None in one whose bounds the reading leaves
    #: to constexprs it has no value of (`tl.static_range(C)`), empty for some values
    static_dead: Optional[bool] = False

    def static_range_values(self, s: K.For) -> Optional[list]:
        """The values a ``tl.static_range`` loop's variable takes (its bounds compile-time
        integers), else None."""
        if not s.static:
            return None
        bounds = [self.static_int(self.eval(e)) for e in (s.start, s.stop, s.step)]
        if None in bounds or bounds[2] == 0:
            return None
        return list(range(*bounds))

    def static_range_after(self, s: K.For, before: dict) -> Optional[Value]:
        """What the variable of a ``tl.static_range`` loop holds after it, where its body does
        not assign it: Triton 3.6 unrolls the loop binding the variable to each value as a
        constexpr (code_generator.visit_For), so after it the variable is the last one, a
        compile-time number (Python's too); a loop of no iteration leaves the binding before it
        (handled by the caller). None where that is not known: a range / tl.range loop's
        variable is Triton's poison placeholder after the loop, refused where it is read."""
        if s.var in assigned_names(s.body):
            return None
        values = self.static_range_values(s)
        if not values:
            return None
        return Aff(Affine.of(values[-1]))

    def _s_For(self, s: K.For) -> None:
        # a tl.static_range variable is a Python number (a constexpr) in each unrolled body
        if s.static:
            self.number_names.add(s.var)
        else:
            self.number_names.discard(s.var)
            self.range_bounds_made_tensors(s)
        self.loop_options(s)
        self._in_loop_bound += 1
        try:
            self.float_bounds(s)
            bool_bad = self.bool_bounds(s)
            bounds, bad = self.range_bounds(s)
            wide = self.range_bound_width(s)
        finally:
            self._in_loop_bound -= 1
        if bool_bad is not None:
            bounds, bad = None, bool_bad
        names = assigned_names(s.body)
        names.setdefault(s.var, s.loc.line)
        before = dict(self.env)
        reason = self.poison_reason("loop", s, s.loc.line)
        carried_saved = self.carry(names, before, s.static)
        for name in names:
            if carried_scalar(self.env.get(name)):
                self.env[name] = Poison(name, reason)
        self.forget_slots(names, s)
        ir_var = self.fresh_loop_var(self.k.names.py(s.var))
        runtime = not s.static
        narrow = boolean = None
        if runtime:
            # Triton types the variable by its bounds: over a count loaded through a pointer of
            # no known element type it may be a uint32 (load_signs.py)
            src = first_untyped(self, (s.start, s.stop))
            if src is not None:
                self.k.untyped_params[ir_var] = src
            # a bound computed in a narrow load's own type may wrap (`range(n + 1)` of an int8
            # 127 runs no iteration): noted where the loop holds pipe events
            given = K.TupleExpr(tuple(x for x in (s.start, s.stop, s.step) if x is not None),
                                s.loc)
            narrow = narrow_arithmetic(self, given)
            # (an int1 bound Triton widens by sign extension: True runs as -1)
            boolean = first_float_read(self, given.items)
        self.env[s.var] = (Aff(Affine.of(ir_var), runtime) if bounds
                           else Data(node=K.Name(s.var, s.loc), runtime=runtime))
        self.env[s.var] = self.range_variable_width(s, self.env[s.var], wide)
        if s.static:
            self.static_loop_vars[s.var] = self.env[s.var]  # a constexpr in Triton
        if bounds:
            self.loop_ranges[ir_var] = bounds
        self.loop_vars.append(ir_var)
        self.depth += 1
        saved_bad, unrolled, dead = self.bad_loop, self.static_unrolled, self.static_dead
        if bad is not None:
            self.bad_loop = (s, f"this loop contains pipe events, but {bad}", "non-affine-loop")
        try:
            self.static_unrolled = unrolled * self.static_range_rule(s)
            # the body of a tl.static_range of no iteration is walked (its events are none the
            # less in the IR's loop of no iteration), but Triton 3.6 unrolls it to nothing and
            # never evaluates it: a `tl.static_assert(False)` there compiles (refused until
            # adversarial round 58)
            values = self.static_range_values(s) if s.static else None
            self.static_dead = True if dead is True or values == [] else \
                None if dead is None or (s.static and values is None) else False
            body = self.exec_body_carried(s, names)
        finally:
            self.loop_vars.pop()
            self.loop_ranges.pop(ir_var, None)
            self.depth -= 1
            self.bad_loop, self.static_unrolled = saved_bad, unrolled
            self.static_dead = dead
            self.carried_before = carried_saved
        after = dict(self.env)
        self.env.clear()
        self.env.update(before)
        self.merge_into(before, [after], names, s, "loop")
        if s.var in names:
            self.env[s.var] = Poison(s.var, f"is the variable of the loop at line {s.loc.line}, "
                                            f"used after the loop")
            after_static = self.static_range_after(s, before)
            if after_static is not None:
                self.env[s.var] = after_static
            elif after_static is None and s.static and s.var in before \
                    and self.static_range_values(s) == []:
                self.env[s.var] = before[s.var]
        if any(walk_events(tuple(body))):
            if bad is not None:
                raise self.err(f"this loop contains pipe events, but {bad}", s,
                               check="non-affine-loop")
        if body and bad is not None:
            self.hoist(walk_accesses(tuple(body)))
        elif body:
            start, stop, step = bounds  # type: ignore[misc]
            if runtime and narrow is not None:
                self.note_signed_reading(s.loc, narrow[0], self.narrow_what(
                    narrow, "a bound of a loop of pipe events"), NOT_NARROW)
            elif runtime and boolean is not None:
                # a bound of the value itself is sign-extended where it is an int1, any other
                # read of it zero-extended: noted where the kernel reads it both ways (analyse)
                raw = [x for x in given.items if own_typed(self, x) == boolean]
                uses = self.k.bool_bounds if raw and len(raw) == len([
                    x for x in given.items if first_float_read(self, (x,)) is not None]) \
                    else self.k.bool_others
                uses.setdefault(boolean, s.loc)
            self.out.append(For(ir_var, start, stop, step, tuple(body), s.loc))
        elif not s.static:
            self.note_data_loop(ir_var, bounds, s)

    def note_data_loop(self, ir_var: str, bounds, s: K.For) -> None:
        """Keep the run-time loop ``s`` (its IR variable and affine ``bounds``), which performs
        no pipe event or slot access and so is no part of the partition, for the i32 check of
        loop bounds (Program.data_loops): nested in the loops around it (their ranges), so its
        bounds and next value are checked over every value their variables take. A bound that
        is not affine (a value read from memory, `N * N`) is a variable of its own
        (``?bound@LINE``), as is the variable of a loop around it whose bounds are not affine
        (the loops around it kept are those its bounds read): no checked value gives them a
        value, so analyse() checks the loop's counter over every i32 value they may take
        (unchecked_data_loops)."""
        if bounds is None:
            vals = [self.eval_quiet(e) for e in (s.start, s.stop, s.step)]
            none = lambda v: isinstance(v, Const) and v.value is None  # noqa: E731
            step = 1 if none(vals[2]) else self.const_int(vals[2]) if vals[2] is not None \
                else None
            if not step:
                self.runtime_step_wraps(s, vals)
                return
            aff = lambda v: self.as_aff(v) if v is not None else None  # noqa: E731
            start, stop = (Affine.of(0), aff(vals[0])) if none(vals[1]) else \
                (aff(vals[0]), aff(vals[1]))
            unknown = Affine.of(f"?bound@{s.loc.line}")
            bounds = (unknown if start is None else start, unknown if stop is None else stop,
                      step)
        start, stop, step = bounds
        loop = For(ir_var, start, stop, step, (), s.loc)
        needed = set(start.variables) | set(stop.variables)
        for var in reversed(self.loop_vars):
            rng = self.loop_ranges.get(var)
            if var not in needed or rng is None:
                continue  # a loop its bounds do not read, or one whose variable is free
            loop = For(var, rng[0], rng[1], rng[2], (loop,), s.loc)
            needed |= set(rng[0].variables) | set(rng[1].variables)
        self.k.data_loops.append(loop)

    def runtime_step_wraps(self, s: K.For, vals: list) -> None:
        """A run-time loop without events whose step is computed at run time (a step that may be
        0 is note_runtime_step's obligation): Triton's scf.for adds the step to its counter in
        i32 before it compares, so where the stop's and the step's domains let `stop - 1 +
        step` pass 2^31 - 1 the counter may wrap below the stop and the loop not end (`range(0,
        N, N // 3 + 1)` at N = 2^31 - 1 steps from 1431655766 to 2147483649; it was verified for
        that N, adversarial round 29). Refused (endless-loop) unless the domains keep it inside;
        the loop's bounds are read over the params' domains, not at the values checked."""
        start_v, stop_v, step_v = vals
        if isinstance(stop_v, Const) and stop_v.value is None:
            stop_v = start_v
        step_a = self.as_aff(step_v) if step_v is not None else None
        stop_a = self.as_aff(stop_v) if stop_v is not None else None
        step_hi = self.bounds(step_a)[1] if step_a is not None else None
        stop_hi = self.bounds(stop_a)[1] if stop_a is not None else None
        step_hi = I32_MAX if step_hi is None else min(step_hi, I32_MAX)
        stop_hi = I32_MAX if stop_hi is None else min(stop_hi, I32_MAX)
        if stop_hi - 1 + step_hi <= I32_MAX:
            return
        text = self.range_text(s)
        self.note_endless(s, (
            f"this loop may never end: the step of `{text}` is computed at run time "
            f"(`{self.src(s.step)}`), and Triton's compiled loop (scf.for) adds it to its "
            f"counter in i32 before it compares, so a stop and a step whose sum passes 2^31 - 1 "
            f"(their domains allow {stop_hi} - 1 + {step_hi}) carry the counter past the end of "
            f"i32, where it wraps below the stop; bound them with tle.assume so that `stop - 1 + "
            f"step` stays inside i32, or step by a constant"), "endless-loop")

    def _s_While(self, s: K.While) -> None:
        """A while loop: no events (its trip count is not known); its slot accesses may happen,
        so they stay, in order."""
        names = assigned_names(s.body)
        self.numbers_in_tensor_ops(s.cond)
        before = dict(self.env)
        # whether a counter shows the loop ends, read with the values before it (loop_ends.py)
        not_ending = why_not_ending(self, s)
        reason = self.poison_reason("loop", s, s.loc.line)
        carried_saved = self.carry(names, before, False)
        for name in names:
            if carried_scalar(self.env.get(name)):
                self.env[name] = Poison(name, reason)
        self.forget_slots(names, s)
        self.refuse_block_cond(s.cond, "`while`", s)
        tested = self.eval_guarded(s.cond, "a while condition")
        self.depth += 1
        saved_bad = self.bad_loop
        self.bad_loop = (s, "pipe events inside a `while` loop: its trip count is not known to the "
                            "compiler; use `for i in range(n)` with n a kernel param",
                         "unsupported-control-flow")
        try:
            self.hoist(walk_accesses(tuple(self.exec_body_carried(s, names))))
        finally:
            self.depth -= 1
            self.bad_loop = saved_bad
            self.carried_before = carried_saved
        self.refuse_endless(s, tested, names, not_ending)
        self.compile_time_condition_rule(s.cond, "while", s, self.written_test(s, ast.While))
        after = dict(self.env)
        self.env.clear()
        self.env.update(before)
        self.merge_into(before, [after], names, s, "loop")

    def refuse_endless(self, s: K.While, tested: Value, names,
                       not_ending: Union[str, TypedOnly, None] = None) -> None:
        """Refuse a `while` whose body assigns nothing its condition reads (the condition
        ``tested`` before the first iteration), unless that condition is surely false (a loop
        that never runs): nothing it reads changes in the loop (a constant, a param, a value
        fixed before it, or memory read again that nothing writes meanwhile: the atomics and
        the loads others write are frontend/memory_waits.py's), and a kernel has no `break`,
        so once the condition holds the loop never ends, and the partition (or the kernel body)
        never reaches its end or its later pipe events, while the verdict said every partition
        runs to its end. A body that assigns what the condition reads must step a counter
        toward a bound (``not_ending``: loop_ends.why_not_ending's reason where it does not):
        `c = c + 0`, `i += 2` against `i != N`, `i -= 1` against `i < N` never end either
        (adversarial round 27), unless the kernel body's walk of it ended (``ends_exactly``)."""
        if self.const_int(tested) == 0 or (isinstance(tested, Const) and tested.value is False):
            return
        if {x.id for x in K.walk_expr(s.cond) if isinstance(x, K.Name)} & set(names):
            if not_ending is None or self.ends_exactly(s):
                return
            if isinstance(not_ending, TypedOnly):
                self.note_signed_only(s, not_ending)
                return
            raise self.err(f"this `while` loop may never end: {not_ending}, so the verifier "
                           f"cannot show that the partition (or the kernel body) finishes, which "
                           f"its verdict says; count with a counter (`k = 0`, `while k < n:`, "
                           f"..., `k += 1`) or bound the loop with range()", s,
                           check="endless-loop")
        raise self.err(f"this `while` loop never ends once its condition `{self.src(s.cond)}` "
                       f"holds: its body assigns nothing the condition reads (and a kernel has "
                       f"no `break`), so the partition would never finish, which the verdict "
                       f"could not say; bound the loop with range(), or update what the "
                       f"condition reads in its body", s, check="endless-loop")

    def note_signed_only(self, s: K.While, why: TypedOnly) -> None:
        """Keep, once per loop, that the `while` loop ``s`` ends only where the value its
        counter compares, loaded through a pointer of no known element type, is of one of the
        types ``why.holds`` (a *u32, *i8 or float pointer may make it endless: ``why.why``): the
        verdict is then not proved, its reason naming the pointer (cli/kernel_checks.py
        check_signed_loads)."""
        self.note_signed_reading(s.loc, why.pointer, (
            f"the `while` loop `while {self.src(s.cond)}:` ends if it is an int32, as the "
            f"verifier reads it, but {why.why}"), why.holds)

    def note_signed_reading(self, loc, pointer: str, what: str, holds: frozenset,
                            ph: Optional[str] = None) -> None:
        """Keep, once per location, that what the statement at ``loc`` does holds as the
        verifier reads it only if ``pointer`` (of no known element type) points to one of the
        element types ``holds`` (frontend/load_types.py; ``what``: how, and what another
        would do); the verdict is then not proved, its reason naming the pointer and the line
        (cli/kernel_checks.py check_signed_loads). With ``ph``, the kernel-body value of that param
        is computed so: kept only if the Program reads it (KernelCtx.signed_params,
        :func:`analyse`)."""
        typed = ("no DEFAULT_CONFIG signature types it" if not self.k.config_signature else
                 "it is not one pointer argument DEFAULT_CONFIG's signature types")
        note = (loc, pointer, (
            f"line {loc.line}: {pointer}'s element type is not known ({typed}): {what}; type "
            f"{pointer} in DEFAULT_CONFIG's signature, or cast the loaded value .to(tl.int32)"),
            holds)
        if ph is not None:
            self.k.signed_params.setdefault(ph, note)
        else:
            self.k.keep_signed_only(note)

    def signed_conditions(self, cond: K.Expr, loc, does: str,
                          ph: Optional[str] = None) -> None:
        """Note (:meth:`note_signed_reading`) what in ``cond`` (an `if` around pipe events, or
        the kernel-body value of the param ``ph`` the Program may read) reads a value loaded
        through a pointer of no known element type so that its truth or value may differ from
        the int32 the verifier reads (``does``: what ``cond`` does, a phrase that follows it,
        "decides which pipe events run"):

        * a comparison Triton computes unsigned where that value is a uint32, with a side the
          verifier reads as negative (load_signs.unsigned_compare: `p - 1 >= -1` of a loop
          variable over such a count holds only at p = 0 unsigned);
        * a comparison of the loaded value itself (not only of a loop variable over it, whose
          float bound Triton refuses): a float may lie between two integers (`p + 1 <= n` and
          `p < n` differ at p = 2 of n = 2.5);
        * arithmetic Triton computes in the load's own type (load_types.narrow_arithmetic:
          `n + 1` of an int8 127 is -128).

        One note per location, naming the element types that keep the reading."""
        holds = set(TYPES)
        whats = []
        pointer = None
        found = unsigned_compare(self, cond)
        if found is not None:
            pointer, compare = found
            inside = "" if ph is None or compare is cond else f" in `{self.src(cond)}`"
            holds -= {"uint32", "uint64"}
            whats.append(
                f"`{self.src(compare)}`{inside}{does} as the verifier reads it where it is "
                f"signed, but through a *u32 {pointer} Triton compares it unsigned, where a side "
                f"the verifier reads as negative is past 2^31 - 1, and its truth may differ")
        for e in K.walk_expr(cond):
            if isinstance(e, K.Compare):
                floating = first_float_read(self, (e.lhs, e.rhs))
                if floating is not None:
                    self.k.bool_others.setdefault(floating, loc)
                    pointer = pointer or floating
                    holds.discard("float")
                    whats.append(
                        f"`{self.src(e)}`{does} as the verifier reads {floating}'s value, an "
                        f"integer, but through a float {floating} that value may lie between two "
                        f"integers (or be an infinity), where the comparison may hold otherwise")
                    break
        narrow = narrow_arithmetic(self, cond)
        if narrow is not None:
            pointer = pointer or narrow[0]
            holds &= NOT_NARROW
            whats.append(self.narrow_what(narrow, "a value pipe events depend on" if ph else
                                          "a condition around pipe events"))
        if whats:
            self.note_signed_reading(loc, pointer, "; ".join(whats), frozenset(holds), ph)

    def narrow_what(self, narrow: tuple, role: str) -> str:
        """Why arithmetic computed in the type of a load of no known element type (``narrow``:
        load_types.narrow_arithmetic's pointer and expression) in ``role`` (what the value is
        to the protocol, "a condition around pipe events") differs from the verifier's integer
        where that type is narrow."""
        pointer, x = narrow
        return (f"`{self.src(x)}` in {role} is computed in {pointer}'s element type (Triton "
                f"gives a Python number the type of the tensor beside it), which through a *i1, "
                f"*i8, *i16, *u8 or *u16 {pointer} wraps at the ends of 1, 8 or 16 bits where "
                f"the verifier's integer does not")

    def ends_exactly(self, s: K.While) -> bool:
        """Whether the walk of ``s`` iteration by iteration ended (the kernel body's:
        PrologueWalker); a partition walks no `while` so."""
        return False
