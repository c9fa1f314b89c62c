"""Loops built into KIR: `range` / `tl.range` / `tl.static_range` headers and their options,
unrolled static loops, `while`, and the values a loop carries (tuples, names rebound in it,
snapshots of values read before it)."""

from __future__ import annotations

import ast
from typing import Optional

from ..diagnostics import TleError
from ..ir import kernel as K
from .build_support import (MAX_UNROLLED_STATEMENTS, RANGES, STATIC_RANGE_ARGS, Static,
                            TL_RANGE_ARGS, TL_RANGE_OPTIONS, compile_time_only,
                            literal_trip_count, names_of, unrolled_size, walk_no_defs)
from .constexpr_rules import constexpr_annotation
from .folding import fold


#: the pipe verbs that take an index (`w.acquire(p)`, `r.release(p)`)
INDEXED_VERBS = ("acquire", "commit", "wait", "release")


def reads_names(x: ast.AST, names: set) -> bool:
    """Whether the Python expression or statement ``x`` reads one of ``names``."""
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(x))


def indexed_verb(n: ast.AST) -> bool:
    """Whether ``n`` is a call of a pipe verb that takes an index (:data:`INDEXED_VERBS`)."""
    return isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) \
        and n.func.attr in INDEXED_VERBS


def call_operands(call: ast.Call) -> list:
    """The arguments of ``call``, positional then keyword values."""
    return call.args + [k.value for k in call.keywords]


def events_or_helpers(stmts: list[ast.stmt]) -> bool:
    """Whether ``stmts`` (outside nested definitions) call a pipe verb that takes an index or a
    function by name (a helper, which may hold such verbs)."""
    return any(isinstance(c, ast.Call) and isinstance(c.func, ast.Name) or indexed_verb(c)
               for c in walk_no_defs(stmts))


class LoopBuild:
    """The loops of :class:`~.build.Builder`: its methods, kept here by idea."""

    def s_For(self, s: ast.For) -> None:
        if s.orelse:
            raise self.err(f"`for ... else` is not supported: Triton rejects it after a range / "
                           f"tl.range loop (\"Don't know what to do with else after for\") and "
                           f"runs it inside every iteration of a tl.static_range loop; move the "
                           f"else body after the loop (line {s.orelse[0].lineno})", s,
                           check="unsupported-control-flow")
        it = s.iter
        path = None
        if isinstance(it, ast.Call):
            _, st = self.callee(it.func)
            path = st.value if st is not None and st.kind == "mod" else None
        if path not in RANGES or not isinstance(s.target, ast.Name):
            self.unsupported_loop(s, path)
        start, stop, step, options = self.range_args(path, it, s)
        if not RANGES[path]:
            self.tensor_negative_step(it, step, s)
        elif self.indexes_by(s.body, s.target.id):
            if literal_trip_count(start, stop, step) is not None:
                # (of no iteration too, adversarial round 67: Triton 3.6 visits such a body no
                # time, where building it once with the variable a name refused its
                # `w.acquire(j // 2)`, non-affine: the first iteration of `for j in
                # tl.static_range(i)` under an unrolled `i`)
                return self.unrolled(s, range(*(fold(x) for x in (start, stop, step))))
            bounds = (start, stop, step)
            deciders = frozenset().union(*(self.kernel_constexprs_of(x) for x in bounds))
            if deciders and all(fold(x) is not None or self.kernel_constexprs_of(x)
                                for x in bounds) and (self.divides(s.body, s.target.id)
                                                      or self.picks_by(s.body, s.target.id)
                                                      or self.loop_binds_by(s.body, s.target.id)):
                # (adversarial round 67, round 66's open item) bounds the kernel's constexprs
                # alone decide (`tl.static_range(2 * C)`): unrolled only where they are numbers,
                # so the kernel is read specialised to them (as a pipe capacity of them is),
                # where the loop built once with `p` a name refused `w.acquire(p // 2)`, or
                # (adversarial round 68) a tuple's item `(wa, wb)[j]` or a handle `wa if j == 0
                # else wb` it picks (only then: a loop the generic reading builds keeps its
                # verdict for every value)
                ordered = tuple(sorted(deciders))
                raise self.needs_constexprs(
                    f"`{ast.unparse(it)}` is read unrolled, with bounds of "
                    "constexpr", ordered, " and the loop unrolled", self.loc(s), ordered)
        f = self.frame
        # (its own variable is no name the loop carries)
        tensors = self.tensor_names() - {s.target.id} if not RANGES[path] else set()
        carried = self.carry_tuples(s.body, s)
        stored = self.rebound(s.body, s)
        before = dict(f.env)
        f.env[s.target.id] = None
        self.tuple_shapes.pop(f.kir(s.target.id), None)
        if not RANGES[path]:
            self.runtime.add(f.kir(s.target.id))
        f.regions.append(("static", literal_trip_count(start, stop, step)) if RANGES[path]
                         else ("region", self.constexpr_names()))
        static_vars = set(self.static_vars)
        if RANGES[path]:
            self.static_vars.add(f.kir(s.target.id))
            f.module_reads.append({})
        else:
            self.static_vars.discard(f.kir(s.target.id))
        self.depth += 1
        self.loop_depth += 1
        try:
            body = self.block(s.body)
        finally:
            self.depth -= 1
            self.loop_depth -= 1
            f.regions.pop()
            reads = f.module_reads.pop() if RANGES[path] else None
            self.static_vars = static_vars
            for name in carried:
                f.carried.pop(name, None)
                f.carried_by.pop(name, None)
        if reads:
            self.module_read_rebound(reads, stored, literal_trip_count(start, stop, step), s)
        self.carried_retyped(tensors, s)
        self.same_each_iteration(before, stored, s)
        end = dict(f.env)
        self._merge(before, [end])
        f.env[s.target.id] = None
        trips = literal_trip_count(start, stop, step)
        if RANGES[path] and trips and s.target.id not in stored:
            # (adversarial round 69) the loop built once of literal bounds leaves its last value
            # in the variable, a constexpr in Triton 3.6: a later `tl.static_range(j + 2)` or
            # pipe index `j // 2` reads the number, as after the loop read unrolled (not where
            # the body binds the variable itself: `j = j * 0 + 5` leaves that tensor in it)
            values = range(*(fold(x) for x in (start, stop, step)))
            f.env[s.target.id] = Static("const", K.Const(values[trips - 1], self.loc(s.target)))
        if RANGES[path] and trips != 0:
            f.static_bound.add(s.target.id)
        elif not RANGES[path]:
            f.static_bound.discard(s.target.id)
        if RANGES[path] and literal_trip_count(start, stop, step) == 0:
            # a tl.static_range of no iteration: Triton 3.6 unrolls it to nothing, so neither
            # its variable nor a name its body binds is bound after it (a read is Triton's
            # "NameError: j is not defined"; verified until adversarial round 57), and a name
            # bound before keeps its value (`j = 5`, then `tl.static_range(0)` over `j`)
            why = f"the tl.static_range loop at line {s.lineno} runs no iteration"
            if s.target.id in before:
                f.env[s.target.id] = before[s.target.id]
            else:
                f.env.pop(s.target.id, None)
                f.undefined[s.target.id] = (f"'{s.target.id}' is the variable of a loop that "
                                            f"binds it to nothing: {why}")
            self.undefined_after(before, s, f"it is bound only inside the loop at line "
                                            f"{s.lineno}, and {why}")
        if not RANGES[path]:  # (a static_range loop is unrolled: its names stay, as in Python)
            self.undefined_after(before, s, f"it is bound only inside the loop at line "
                                            f"{s.lineno}")
            self.poisoned_after(before, [end])
            # Triton binds the variable to a placeholder (`ub.poison`) before the loop and
            # leaves it so after it, whether or not the name was bound before the loop: a read
            # after it reads an undefined value (Python's is the last value, or the one before)
            f.env.pop(s.target.id, None)
            f.undefined[s.target.id] = (f"'{s.target.id}' is the variable of the loop at "
                                        f"line {s.lineno}")
        self.emit(K.For(f.kir(s.target.id), start, stop, step, body, RANGES[path], self.loc(s),
                        options))

    def indexes_by(self, body: list[ast.stmt], var: str, depth: int = 0) -> bool:
        """Whether ``body`` (of a tl.static_range loop over ``var``) subscripts with an index
        that reads ``var`` (`ab[j]`, `(s0, s1)[j % 2]`), itself or in a helper it passes
        ``var`` to (`pick(ab, j)`): a tuple's item picked per iteration, which Triton 3.6 does
        (the variable is a constexpr in each unrolled iteration, and a helper is specialised
        to it). The body, built once with the variable a name, could not pick it (see
        :meth:`unrolled`)."""
        def reads(x: ast.AST) -> bool:
            return reads_names(x, {var})

        if depth == 0 and self.divides(body, var):  # (it follows the helpers itself)
            return True
        for n in walk_no_defs(body):
            if isinstance(n, ast.Subscript) and reads(n.slice):
                return True
            # (adversarial round 66) a pipe event's index that divides the variable or takes
            # its remainder (`w.acquire(p // 2)`), or a value it chooses (`wa if j == 0 else
            # wb`, `if j == 0: h = wa`): each iteration's is a number in Triton 3.6, where the
            # body built once with the variable a name read a non-affine index (non-affine) or
            # a handle of no single value (unknown-handle), refusing correct kernels; unrolled,
            # each is folded. (A condition `if p % 2 == 0:` the protocol view reads as it is.)
            if isinstance(n, ast.IfExp) and reads(n.test) and all(
                    isinstance(b, ast.Name) for b in (n.body, n.orelse)):
                return True
            # (adversarial round 67: and a swap, `if j == 1: h, g = g, h`, refused as `h`
            # holding different values on different paths where each iteration's is one)
            if isinstance(n, ast.If) and reads(n.test) and any(
                    isinstance(a, ast.Assign) and (isinstance(a.value, ast.Name) or (
                        isinstance(a.value, ast.Tuple) and a.value.elts and all(
                            isinstance(x, ast.Name) for x in a.value.elts)))
                    for a in n.body + n.orelse):
                return True
            if depth == 0 and self.loop_binds_by(body, var):
                return True
            if not isinstance(n, ast.Call) or depth >= 8:
                continue
            helper = self.helper_given(n, reads)
            if helper is None:
                continue
            fdef, given = helper
            if any(self.indexes_by(fdef.body, name, depth + 1) for name in given):
                return True
        return False

    def loop_binds_by(self, body: list[ast.stmt], var: str) -> bool:
        """Whether ``body`` (of a tl.static_range loop over ``var``) holds an `if` whose test
        reads ``var`` with a loop in a branch that is a tl.static_range, or whose variable is a
        name bound before the loop or read beside the `if` (adversarial round 69): each unrolled
        iteration's `if` folds in Triton 3.6 and only the branch that runs is built, so after it
        the name holds the inner loop's last value in some iterations and its value from before
        in others, which the loop built once cannot read (StatementBuild.static_binding_chosen
        refuses it there)."""
        return any(isinstance(n, ast.If) and reads_names(n.test, {var}) and any(
            isinstance(x, ast.For) and isinstance(x.target, ast.Name)
            and (self.static_loop(x) or self.bound_beside(x.target.id, body, n))
            for x in walk_no_defs(n.body + n.orelse))
            for n in walk_no_defs(body))

    def static_loop(self, s: ast.For) -> bool:
        """Whether ``s`` is a tl.static_range loop, whose variable stays bound after it (a
        constexpr a later statement of the function, after the enclosing loop too, may read)."""
        if not isinstance(s.iter, ast.Call):
            return False
        try:
            _, st = self.callee(s.iter.func)
        except TleError:
            return False
        return st is not None and st.kind == "mod" and RANGES.get(st.value) is True

    def bound_beside(self, name: str, body: list[ast.stmt], node: ast.stmt) -> bool:
        """Whether ``name`` is bound in the function being built, or occurs in ``body`` outside
        its statement ``node``: a name whose binding ``node`` changes matters beyond it."""
        inside = sum(isinstance(x, ast.Name) and x.id == name for x in walk_no_defs([node]))
        return name in self.frame.env or inside < sum(
            isinstance(x, ast.Name) and x.id == name for x in walk_no_defs(body))

    def picks_by(self, body: list[ast.stmt], var: str, depth: int = 0) -> bool:
        """Whether ``body`` (of a tl.static_range loop over ``var``) picks a value by ``var``
        that the loop built once with ``var`` a name cannot pick: a subscript whose index reads
        ``var`` (`(wa, wb)[j]`, `hs[j % 2]`: a tuple's item, or an index Triton 3.6 refuses of a
        tensor), itself or in a helper it passes ``var`` to, or a conditional expression or an
        `if` binding a name to a name whose test reads ``var`` where those names hold a pipe
        handle, a pipe or a shared buffer (`wa if j == 0 else wb`). A choice among run-time
        values (`a if j == 0 else b` of tensors) is no such pick: the loop built once reads it
        for every iteration. (What :meth:`s_For` reads specialised to the kernel's constexprs
        when they bound the loop, beside :meth:`divides`.)"""
        def reads(x: ast.AST) -> bool:
            return reads_names(x, {var})

        def held(x: ast.expr) -> bool:
            st = self.expr_static(x) if isinstance(x, ast.Name) else None
            return compile_time_only(st) or st is not None and st.kind == "buffer"

        for n in walk_no_defs(body):
            if isinstance(n, ast.Subscript) and reads(n.slice):
                return True
            if depth == 0 and isinstance(n, ast.IfExp) and reads(n.test) and any(
                    held(b) for b in (n.body, n.orelse)):
                return True
            if depth == 0 and isinstance(n, ast.If) and reads(n.test) and any(
                    isinstance(a, ast.Assign) and any(
                        held(x) for x in ([a.value] if isinstance(a.value, ast.Name) else
                                          a.value.elts if isinstance(a.value, ast.Tuple)
                                          else []))
                    for a in n.body + n.orelse):
                return True
            if not isinstance(n, ast.Call) or depth >= 8:
                continue
            helper = self.helper_given(n, reads)
            if helper is not None and any(self.picks_by(helper[0].body, name, depth + 1)
                                          for name in helper[1]):
                return True
        return False

    def divides(self, body: list[ast.stmt], var: str, depth: int = 0) -> bool:
        """Whether a pipe event of ``body`` (`x.acquire / commit / wait / release(...)`), or of
        a helper it calls, takes an index that divides ``var`` or takes its remainder, itself
        (`w.acquire(p // 2)`) or through a name the body binds to such a value (`k = p % 2`)
        or a helper's parameter given one (see :meth:`indexes_by`)."""
        def divided(x: ast.AST, names: set) -> bool:
            return any(isinstance(n, ast.BinOp) and isinstance(n.op, (ast.FloorDiv, ast.Mod))
                       and reads_names(n, {var} | names) for n in ast.walk(x)) \
                or reads_names(x, names) \
                or any(isinstance(n, ast.Call) and self.returns_divided(n, {var} | names, depth)
                       for n in ast.walk(x))

        names: set = set()
        for n in walk_no_defs(body):  # the names bound to such a value (in source order)
            if isinstance(n, ast.Assign) and divided(n.value, names):
                names |= {t.id for t in n.targets if isinstance(t, ast.Name)}
        for n in walk_no_defs(body):
            # (adversarial round 67) a loop with pipe events (or helper calls) whose bounds
            # divide the variable (`for j in tl.static_range(i // 2, i)`): each unrolled
            # iteration's bounds are numbers in Triton 3.6, where the loop built once had a
            # non-affine bound (non-affine-loop), refusing a correct kernel; and so is an inner
            # loop over bounds reading the variable that is read unrolled itself (`for j in
            # tl.static_range(i)` over `w.acquire(j // 2)`: its bounds must be numbers)
            bounds = call_operands(n.iter) \
                if isinstance(n, ast.For) and isinstance(n.iter, ast.Call) else []
            if any(divided(a, names) for a in bounds) and events_or_helpers(n.body):
                return True
            if depth < 8 and any(reads_names(a, {var} | names) for a in bounds) and isinstance(
                    n.target, ast.Name) and (self.divides(n.body, n.target.id, depth + 1)
                                             or self.indexes_by(n.body, n.target.id, depth + 1)):
                return True
            # (adversarial round 68) an `if` around pipe events (or helper calls) whose test
            # takes a quotient of the variable (`if p // 2 == 1:`): each unrolled iteration's
            # test is a number in Triton 3.6, where the loop built once refused it
            # (non-affine-if). (A remainder, `if p % 2 == 0:`, the protocol view reads as it is.)
            if isinstance(n, ast.If) and any(
                    isinstance(x, ast.BinOp) and isinstance(x.op, ast.FloorDiv)
                    and reads_names(x, {var}) for x in ast.walk(n.test)) \
                    and events_or_helpers(n.body + n.orelse):
                return True
            if not isinstance(n, ast.Call):
                continue
            if indexed_verb(n) and any(divided(a, names) for a in call_operands(n)):
                return True
            if depth >= 8:
                continue
            helper = self.helper_given(n, lambda a: divided(a, names))
            if helper is None:
                continue
            fdef, given = helper
            if given and self.divided_in(fdef.body, set(given)):
                return True
            _, given = self.helper_given(n, lambda a: reads_names(a, {var}))
            if any(self.divides(fdef.body, p, depth + 1) for p in given):
                return True
        return False

    def helper_given(self, call: ast.Call, pred) -> Optional[tuple[ast.FunctionDef, list[str]]]:
        """The def of the helper ``call`` calls and the names of its parameters given an
        argument (by position or keyword) that ``pred`` holds of; None when the callee is no
        helper of the kernel's modules. (What :meth:`indexes_by`, :meth:`divides` and
        :meth:`returns_divided` follow into a helper.)"""
        try:
            _, fst = self.callee(call.func)
        except TleError:
            return None
        if fst is None or fst.kind != "func":
            return None
        fdef = fst.value[1]
        params = [a.arg for a in fdef.args.posonlyargs + fdef.args.args]
        given = [params[i] for i, a in enumerate(call.args[:len(params)]) if pred(a)]
        given += [k.arg for k in call.keywords if k.arg is not None and pred(k.value)]
        return fdef, given

    def returns_divided(self, call: ast.Call, names: set, depth: int) -> bool:
        """Whether the helper ``call`` calls returns a quotient or remainder of a parameter it
        is given a value reading ``names`` for (`def stage(i): return i % 2`, called
        `w.acquire(stage(p))`), itself, through a name it binds, or through a helper of its
        own: :meth:`divides`."""
        # (adversarial round 67) such an index was non-affine in the loop built once (`i % 2`
        # of the name `p`), refusing a correct kernel, where Triton 3.6 specialises the helper
        # to each unrolled iteration's constexpr and the value returned is a number
        if depth >= 8:
            return False
        helper = self.helper_given(call, lambda a: reads_names(a, names))
        if helper is None:
            return False
        fdef, given = helper[0], set(helper[1])
        if not given:
            return False
        bound: set = set()

        def divided(x: ast.AST) -> bool:
            return reads_names(x, bound) or any(
                isinstance(n, ast.BinOp) and isinstance(n.op, (ast.FloorDiv, ast.Mod))
                and reads_names(n, given | bound) for n in ast.walk(x)) or any(
                isinstance(n, ast.Call) and self.returns_divided(n, given | bound, depth + 1)
                for n in ast.walk(x))

        for n in walk_no_defs(fdef.body):  # (in source order, as divides binds its names)
            if isinstance(n, ast.Assign):
                targets = {t.id for t in n.targets if isinstance(t, ast.Name)}
                if divided(n.value):
                    bound |= targets
                elif reads_names(n.value, given):  # (a copy of a parameter: `j = i`, `j % 4`)
                    given = given | targets
            if isinstance(n, ast.Return) and n.value is not None and divided(n.value):
                return True
        return False

    def divided_in(self, body: list[ast.stmt], names: set) -> bool:
        """Whether a pipe event of ``body`` takes an index that reads ``names`` (parameters
        given a quotient or remainder of a tl.static_range variable): :meth:`divides`."""
        for n in walk_no_defs(body):
            if isinstance(n, ast.Assign) and reads_names(n.value, names):
                names = names | {t.id for t in n.targets if isinstance(t, ast.Name)}
        # (a parameter holding the quotient: an event reading it is one divides would find)
        for n in walk_no_defs(body):
            if indexed_verb(n) and any(reads_names(a, names) for a in call_operands(n)):
                return True
        return False

    def unrolled(self, s: ast.For, values: range) -> None:
        """The tl.static_range loop ``s`` over ``values`` (none: no statement), built as Triton 3.6
        generates it: its body once per value, in the enclosing scope, the variable bound to
        the value as a constexpr (and left at the last one after the loop). Used where the body
        indexes by the variable (:meth:`indexes_by`): each iteration's `ab[j]` is then the item
        it names, a tensor, a slot's field or a pipe handle alike, and the names the body
        binds are seen by the next iteration as they are in Triton."""
        f = self.frame
        name = s.target.id
        f.regions.append(("static", len(values)))
        self.depth += 1
        self.loop_depth += 1
        out: list[K.Stmt] = []
        size = 0
        try:
            for v in values:
                f.env[name] = Static("const", K.Const(v, self.loc(s.target)))
                self.tuple_shapes.pop(f.kir(name), None)
                self.runtime.discard(f.kir(name))
                # a constexpr, whatever bound the name before (`j = 5`, a tensor, is no longer
                # the binding the tensor rules read), and one a run-time loop or `if` of the
                # body must not rebind (constexpr_names)
                self.bound_at.pop(f.kir(name), None)
                f.static_bound.add(name)
                body = self.block(s.body)
                out.extend(body)
                size += unrolled_size(body)  # each iteration's statements counted once
                if size > MAX_UNROLLED_STATEMENTS:
                    # the bound triton_rules.static_range_rule holds a loop kept whole to
                    raise self.err(f"`{ast.unparse(s.iter)}` unrolls to more than "
                                   f"{MAX_UNROLLED_STATEMENTS} statements; Triton 3.6 unrolls a "
                                   f"tl.static_range in the kernel's source, and its compile "
                                   f"time grows with the square of that: write `range` or "
                                   f"`tl.range` for a loop of many iterations", s,
                                   check="bad-loop")
        finally:
            self.depth -= 1
            self.loop_depth -= 1
            f.regions.pop()
        for stmt in out:
            self.emit(stmt)

    #: calls whose value is a runtime one whatever their arguments
    RUNTIME_OPS = frozenset({"tl.load", "tl.program_id", "tl.num_programs", "tl.atomic_add",
                             "tl.atomic_max", "tl.atomic_min", "tl.atomic_cas", "tl.atomic_xchg"})

    def constexpr_argument(self, a: ast.expr) -> bool:
        """Whether the argument ``a`` of a helper's call (the caller's frame building it) is a
        constexpr in Triton 3.6, which a jit function's parameter then is: a number written in
        the call (signed or not), a name the caller holds as a constexpr (its constexpr
        parameter, a `tl.constexpr` binding, a tl.static_range variable), or operators on those
        alone."""
        if isinstance(a, ast.Constant):
            return type(a.value) in (int, float, bool)
        if isinstance(a, ast.Name):
            # (the variable of an enclosing tl.static_range loop: a constexpr in each unrolled
            # iteration)
            return a.id in self.frame.constexprs or self.frame.kir(a.id) in self.static_vars
        if isinstance(a, ast.UnaryOp) and isinstance(a.op, (ast.USub, ast.UAdd, ast.Invert)):
            return self.constexpr_argument(a.operand)
        if isinstance(a, ast.BinOp):
            return self.constexpr_argument(a.left) and self.constexpr_argument(a.right)
        return False

    def static_arithmetic(self, e: K.Expr) -> bool:
        """Whether ``e`` is arithmetic (operators, comparisons, `and` / `or` / `not`) on constants
        and the variables of enclosing tl.static_range loops only: a constexpr in Triton (and in
        the lowered Gluon, read in place), and no call, subscript or event, so reading it in
        place of a helper's parameter computes what binding it did."""
        return all(isinstance(x, (K.BinOp, K.UnaryOp, K.Compare, K.BoolOp, K.Const, K.Global))
                   or isinstance(x, K.Name) and x.id in self.static_vars
                   for x in K.walk_expr(e))

    def is_runtime(self, e: K.Expr) -> bool:
        """Whether ``e`` is certainly a runtime value (see ``self.runtime``); a value of
        constexprs and constants only, or one this cannot tell, is not."""
        for x in K.walk_expr(e):
            if isinstance(x, K.Name) and x.id in self.runtime:
                return True
            if isinstance(x, K.Op) and x.name in self.RUNTIME_OPS:
                return True
            if isinstance(x, (K.Event, K.IsClosed)):
                return True
        return False

    def note_runtime(self, kir_name: str, e: K.Expr) -> None:
        """``kir_name`` is bound to ``e``: a runtime value if ``e`` is one."""
        if self.is_runtime(e):
            self.runtime.add(kir_name)
        else:
            self.runtime.discard(kir_name)

    def undefined_after(self, before: dict, s: ast.stmt, why: str,
                        names: Optional[set] = None) -> None:
        """After a range / tl.range / while loop (or an ``if`` on a runtime condition, for
        ``names``: those one branch binds), the names bound in it that were not bound before it
        are not defined in Triton, which carries out of an scf.for / scf.while / scf.if only
        the values bound before it (or, for an ``if``, in both branches), while Python keeps
        them: a read after it is refused (lookup), not verified as Python runs it and then
        refused by Triton's compile ("NameError: ... is not defined"). Compile-time values (a
        pipe, a handle, a buffer, a function) are resolved by the frontend and stay."""
        f = self.frame
        for name in sorted(set(f.env) - set(before) if names is None else names):
            st = f.env.get(name)
            if name in before or name in f.carried or f.kir(name) in self.slot_names or (
                    st is not None and st.kind not in ("tuple", "const")):
                continue
            f.env.pop(name, None)
            self.tuple_shapes.pop(f.kir(name), None)
            f.undefined[name] = why

    def poisoned_after(self, before: dict, ends: list[dict]) -> None:
        """After a run-time loop or ``if`` (an scf region), a name bound before it that is
        undefined at the end of one of its paths (``ends``: the environments there), as the
        variable of a run-time loop inside is (`j = 0; while ...: for j in range(3): ...`), is
        undefined after it too: the region yields Triton's placeholder (`ub.poison`) for it on
        that path, and a read after it reads an undefined value (Python's, the loop's last)."""
        f = self.frame
        for name in sorted(before):
            if name in f.undefined and any(name not in end for end in ends):
                f.env.pop(name, None)

    def range_args(self, path: str, it: ast.Call, s: ast.For
                   ) -> tuple[K.Expr, K.Expr, K.Expr, tuple[tuple[str, K.Expr], ...]]:
        """(start, stop, step, options) of a range / tl.range / tl.static_range call, bound as
        Triton binds them (``options``: tl.range's loop options given a value other than their
        default); a call Triton (or Python) would reject is an error."""
        text = ast.unparse(it)
        fn = "range" if path == "builtins.range" else path.replace("gl.", "tl.", 1)
        if path == "builtins.range" and it.keywords:
            raise self.err(f"`{text}`: Python's range takes no keyword arguments (Triton ignores "
                           f"them, so the loop would run with the default step); write the step "
                           f"as the third positional argument, or use tl.range(..., step=...)",
                           s, check="bad-loop")
        if any(isinstance(a, ast.Starred) for a in it.args) or any(
                k.arg is None for k in it.keywords):
            raise self.err(f"`{text}` must spell its arguments out (no *args or **kwargs)", s,
                           check="bad-loop")
        if path == "builtins.range":
            if not 1 <= len(it.args) <= 3:
                raise self.err(f"`{text}`: range takes 1 to 3 arguments, got {len(it.args)}", s,
                               check="bad-loop")
            names: tuple[str, ...] = ("arg1", "arg2", "step")
        else:
            names = STATIC_RANGE_ARGS if RANGES[path] else TL_RANGE_ARGS
            if len(it.args) > len(names):
                raise self.err(f"`{text}`: {fn} takes at most {len(names)} positional arguments "
                               f"({', '.join(names)}), got {len(it.args)}", s, check="bad-loop")
        if RANGES[path]:
            self.constexpr_operands(f"`{text}`", [*it.args, *(k.value for k in it.keywords)])
        # arguments are evaluated once, in Python's order (positional, then keywords)
        given: dict[str, K.Expr] = {n: self.value(a) for n, a in zip(names, it.args)}
        for kw in it.keywords:
            if kw.arg not in names:
                raise self.err(f"`{text}`: {fn} has no argument '{kw.arg}' (its arguments: "
                               f"{', '.join(names)})", s, check="bad-loop")
            if kw.arg in given:
                raise self.err(f"`{text}`: {fn} got two values for '{kw.arg}'", s,
                               check="bad-loop")
            given[kw.arg] = self.value(kw.value)
        if "arg1" not in given:
            raise self.err(f"`{text}`: {fn} needs at least its first argument", s,
                           check="bad-loop")

        def absent(name: str) -> bool:
            v = given.get(name)
            return v is None or isinstance(v, K.Const) and v.value is None

        if absent("arg2"):  # range(n)
            start, stop = K.Const(0, self.loc(it)), given["arg1"]
        else:
            start, stop = given["arg1"], given["arg2"]
        step = K.Const(1, self.loc(it)) if absent("step") else given["step"]
        if fold(step) == 0:
            raise self.err(f"the step of `{text}` must be a non-zero integer, got 0 (the loop "
                           f"would never end)", s, check="bad-loop")
        options = tuple((k, v) for k, v in given.items() if k in TL_RANGE_OPTIONS
                        and not absent(k)
                        and (fold(v) is None or fold(v) is not TL_RANGE_OPTIONS[k]))
        return start, stop, step, options

    def unsupported_loop(self, s: ast.For, path: Optional[str]) -> None:
        """A loop that is no range loop (or whose target is no plain name): an error, which says
        why when its body performs pipe events (the frontend reads no such loop)."""
        if not isinstance(s.target, ast.Name):
            bad = f"the loop target `{ast.unparse(s.target)}` must be a plain name"
        else:
            bad = (f"only `for v in range(...)` / tl.range / tl.static_range loops may contain "
                   f"pipe events, not `for ... in {ast.unparse(s.iter)}`")
        f = self.frame
        before = dict(f.env)
        for n in ast.walk(s.target):
            if isinstance(n, ast.Name):
                f.env[n.id] = None
        try:
            body = self.block(s.body)
        except TleError:
            body = ()
        finally:
            f.env.clear()
            f.env.update(before)
        if any(True for _ in K.events(body)):
            raise self.err(f"this loop contains pipe events, but {bad}", s,
                           check="non-affine-loop")
        raise self.err("loops are `for i in range(...)` / tl.range / tl.static_range", s,
                       check="unsupported-control-flow")

    def s_While(self, s: ast.While) -> None:
        if s.orelse:
            raise self.err(f"`while ... else` is not supported: Triton does not run a while loop's "
                           f"else; move the else body after the loop (line {s.orelse[0].lineno})",
                           s, check="unsupported-control-flow")
        f = self.frame
        tensors = self.tensor_names()
        carried = self.carry_tuples(s.body, s)
        stored = self.rebound(s.body, s)
        for node in ast.walk(s.test):
            # the first test reads a name the body rebinds with its value before the loop: one
            # Triton leaves undefined there (a loop's variable after its loop) is refused, as a
            # read of it elsewhere is (below, the body's names are read as run-time values)
            if isinstance(node, ast.Name) and node.id in stored and node.id in f.undefined \
                    and node.id not in f.env:
                self.lookup(node.id, node)
        before = dict(f.env)
        placeholders = set(f.placeholders)
        for n in stored:
            if n not in f.carried:  # (a carried tuple reads its item variables)
                if n not in f.env:
                    f.placeholders.add(n)
                f.env[n] = None  # assigned in the body: runtime values in the condition
        n_out = len(self.out)
        cond = self.value(s.test)
        # Statements the condition needs (an inlined helper's locals, an effectful call the
        # builder sequences into a temporary: `while tl.atomic_add(flag, 0) == 0` in a helper)
        # run before every test, as Python evaluates the whole condition each time: once before
        # the loop and again at the end of its body. Left before the loop only, the test read
        # the first evaluation forever.
        pre = tuple(self.out[n_out:])
        self.depth += 1
        self.loop_depth += 1
        f.regions.append(("region", self.constexpr_names()))
        try:
            body = self.block(s.body) + pre
        finally:
            self.depth -= 1
            self.loop_depth -= 1
            f.regions.pop()
            f.placeholders = placeholders
            for name in carried:
                f.carried.pop(name, None)
                f.carried_by.pop(name, None)
        self.carried_retyped(tensors, s)
        self.same_each_iteration(before, stored, s)
        end = dict(f.env)
        self._merge(before, [end])
        self.undefined_after(before, s, f"it is bound only inside the while loop at line "
                                        f"{s.lineno}")
        self.poisoned_after(before, [end])
        self.emit(K.While(cond, body, self.loc(s)))

    def tensor_names(self) -> set[str]:
        """The names of the function being built that hold a tensor in Triton 3.6 now: bound to
        a run-time value, or to a number by a plain assignment (which makes it a tensor), and
        no constexpr (a tl.constexpr binding or parameter, the variable of a tl.static_range
        loop, a parameter given a number)."""
        f = self.frame
        names = set()
        for name, st in f.env.items():
            k = f.kir(name)
            if name in f.constexprs or k in self.static_vars or name in f.static_bound:
                continue
            site = self.bound_at.get(k)
            if st is None or st.kind == "const" and (
                    isinstance(site, (ast.Assign, ast.AugAssign))
                    or isinstance(site, ast.AnnAssign) and not constexpr_annotation(site)):
                names.add(name)
        return names

    def carried_retyped(self, tensors: set[str], s: ast.stmt, static_bound: Optional[set] = None,
                        where: str = "") -> None:
        """Refuse a name that held a tensor when the run-time loop or `if` ``s`` was entered
        (``tensors``, :meth:`tensor_names`) and that a tl.static_range loop of its body (or of
        the branch ``where``, whose end ``static_bound`` describes) leaves bound to its
        variable's last value, a constexpr: Triton 3.6 carries the name through the loop, or
        yields it from the branch, and refuses its change of type ("Loop carried variable j
        changed type", "initial value for `j` is of type int32[], but the then block redefines
        it as constexpr[2]"). Read as the builder reads it (the unrolled iterations bind the
        name to numbers, and no statement of the kernel IR assigns it), the next iteration, or
        the code after the `if`, read the value from before: a kernel Triton refuses was
        verified, and one whose Python reading differs (adversarial round 68)."""
        f = self.frame
        bound = f.static_bound if static_bound is None else static_bound
        for name in sorted(tensors):
            if name in f.env and name in bound:
                kind = "loop" if isinstance(s, (ast.For, ast.While)) else "`if`"
                triton = (f"Loop carried variable {name} changed type" if kind == "loop" else
                          f"initial value for `{name}` is of type ..., but {where} "
                          f"redefines it as constexpr[...]")
                raise self.err(f"`{name}` holds a tensor when the {kind} at line {s.lineno} is "
                               f"entered, and a tl.static_range loop of "
                               f"{'its body' if kind == 'loop' else where} leaves it bound to a "
                               f"constexpr (its variable's last value): Triton 3.6 "
                               f"{'carries' if kind == 'loop' else 'yields'} `{name}` and "
                               f"refuses the change of type (\"{triton}\"); name the "
                               f"tl.static_range variable otherwise", s,
                               check="unsupported-expression")

    def rebound(self, stmts: list[ast.stmt], node: ast.stmt) -> set[str]:
        """The names ``stmts`` assign. One that stands for a value read in place (a helper's or
        partition's parameter bound to the caller's expression, a bound constexpr) becomes a
        variable holding that value now: a loop or a branch that assigns it must not have its
        other reads (a later iteration's, the other branch's) read the expression instead."""
        f = self.frame
        stored = names_of(stmts)[0]
        for name in sorted(stored):
            st = f.env.get(name)
            if name in f.carried:
                continue  # a carried tuple: its items are variables already
            if st is not None and st.kind == "const":
                self.emit(K.Assign(f.kir(name), st.value, self.loc(node)))
                f.env[name] = None
        return stored

    # A tuple a loop rebinds (`o = (o[1], o[0] + 1)`, `ps = (ps[1], ps[0])`) is carried by the
    # loop: an iteration reads what the previous one bound. What reads the KIR walks a loop's body
    # once and knows a tuple's items at compile time, so a tuple variable assigned in the body
    # would be read as its value on entry. The builder therefore keeps each item of a carried
    # tuple in a variable of its own (`o__0`, `o__1`), the way a rebound scalar is carried: the
    # name reads the tuple of those variables, and a rebinding in the body assigns them. Items
    # that are compile-time values (pipes, handles, buffers) or tuples themselves cannot be
    # carried that way: rebinding such a tuple in a loop is an error at the rebinding. An `if`
    # whose branch rebinds a tuple (`ps = (x, z)` then `if c: ps = (z, x)`) carries it alike:
    # after the if the name reads the item variables, which hold the path's binding (a tuple
    # first bound in both branches gets its item variables at each branch's end,
    # :meth:`tuples_bound_in_branches`).
    def tuple_shape(self, e: K.Expr, st: Optional[Static]) -> Optional[tuple]:
        """None when ``e`` is no tuple (or list) the builder knows of; else one entry per item:
        the item's own shape (None: no tuple)."""
        if st is not None and st.kind == "const":
            return self.tuple_shape(st.value, None)
        items_st = st.value if st is not None and st.kind == "tuple" else None
        if isinstance(e, K.TupleExpr):
            sts = items_st if items_st is not None and len(items_st) == len(e.items) \
                else (None,) * len(e.items)
            return tuple(self.tuple_shape(x, sx) for x, sx in zip(e.items, sts))
        if isinstance(e, K.Name) and e.id in self.tuple_shapes:
            return self.tuple_shapes[e.id]
        if isinstance(e, K.Op) and e.name in ("tl.max", "tl.min") and any(
                k == "return_indices" and isinstance(v, K.Const) and v.value is True
                for k, v in e.kwargs):
            return (None, None)  # (values, indices): `m, i = tl.max(x, 1, return_indices=True)`
        if isinstance(e, K.Subscript) and len(e.index) == 1 and isinstance(e.index[0], int):
            # an item of a tuple (`args[1]`): the item's entry of the tuple's shape, which knows
            # a nested tuple of runtime values that no compile-time value (``st``) records
            base = self.tuple_shape(e.value, None)
            if base is not None and -len(base) <= e.index[0] < len(base) \
                    and base[e.index[0]] is not None:
                return base[e.index[0]]
        if items_st is not None:
            return tuple(None if sx is None else self.tuple_shape(K.Const(None), sx)
                         for sx in items_st)
        return None

    def carry_items(self, e: K.Expr, st: Optional[Static]) -> Optional[list[K.Expr]]:
        """The items of tuple ``e`` as runtime expressions a loop can carry in variables, or None
        when it has an item that is a compile-time value (a pipe, a handle, a buffer, a
        function) or a tuple."""
        shape = self.tuple_shape(e, st)
        if shape is None or any(x is not None for x in shape):
            return None
        items_st = st.value if st is not None and st.kind == "tuple" else (None,) * len(shape)
        if len(items_st) != len(shape) or any(
                sx is not None and sx.kind != "const" for sx in items_st):
            return None
        if st is not None and st.kind == "const":
            e = st.value
        if isinstance(e, K.TupleExpr):
            return [x if sx is None else sx.value for x, sx in zip(e.items, items_st)]
        return [self.item_of(e, st, k, e.loc)[0] if st is not None and st.kind == "tuple"
                else K.Subscript(e, (k,), e.loc) for k in range(len(shape))]

    def carry_tuples(self, body: list[ast.stmt], loop: ast.stmt, what: str = "loop"
                     ) -> list[str]:
        """The names holding a tuple on entry to ``loop`` that its ``body`` rebinds, made
        carried (see above): each item is assigned to its variable before the loop. Returns
        the names this loop carries (an enclosing loop's are carried already). An ``if``
        (``what``) carries the tuples its branches rebind alike: after it, the name reads the
        item variables, which hold the binding of the path that ran."""
        f = self.frame
        stored_names, used_names = names_of(body)
        stored = sorted(stored_names)
        used = set(used_names) | set(f.env)
        carried = []
        for name in stored:
            if name not in f.env or name in f.carried:
                continue
            st = f.env[name]
            e = st.value if st is not None and st.kind == "const" else K.Name(f.kir(name),
                                                                                self.loc(loop))
            if self.tuple_shape(e, st) is None:
                continue
            carried.append(name)
            f.carried_by[name] = what
            items = self.carry_items(e, st)
            if items is None:
                f.carried[name] = None
                continue
            names = []
            for k, x in enumerate(items):
                var = f"{name}__{k}"
                while var in used and not (isinstance(x, K.Name) and x.id == f.kir(var)):
                    var += "_"
                used.add(var)
                names.append(var)
                f.item_vars[f.kir(var)] = name
                if not (isinstance(x, K.Name) and x.id == f.kir(var)):
                    self.emit(K.Assign(f.kir(var), x, self.loc(loop)))
                f.env[var] = None
                self.tuple_shapes.pop(f.kir(var), None)
            f.carried[name] = tuple(names)
            loc = self.loc(loop)
            f.env[name] = Static("const", K.TupleExpr(
                tuple(K.Name(f.kir(v), loc) for v in names), loc))
        return carried

    # Binding a name to a tuple keeps the tuple's item expressions, and what reads the KIR reads
    # `a[0]` as that expression where `a[0]` is used: an item naming a variable reads the
    # variable's value at the use, not at the binding. That is Python's value only while the
    # variable is not rebound in between. A carried tuple's items are such variables (`a = o`
    # then `o = (o[1], o[0])`: `a[0]` read the swapped `o__0`), as are the scalars of a tuple
    # bound by hand (`a = (j, z_ptr)` then `j = ...`), and a helper that returns its parameter
    # hands back the caller's variable itself. So an item that reads a variable the function
    # binds again after the binding is copied to a temporary where the name is bound.
    def rebound_later(self, e: K.Expr, node: ast.AST) -> bool:
        """Whether ``e`` reads a local variable of the function being built that a statement
        after ``node`` binds again: one of its names, or an item variable of a carried tuple
        (assigned wherever the tuple is bound). A variable of a caller (a helper's parameter
        reads it in place) cannot be rebound while the helper runs."""
        f = self.frame
        end = (getattr(node, "end_lineno", None) or getattr(node, "lineno", 0),
               getattr(node, "end_col_offset", None) or 0)
        for n in K.walk_expr(e):
            if not isinstance(n, K.Name):
                continue
            names = [f.item_vars[n.id]] if n.id in f.item_vars else []
            if n.id.startswith(f.prefix):
                names.append(n.id[len(f.prefix):])
            if any(at > end for name in names for at in f.stores.get(name, ())):
                return True
        return False

    @staticmethod
    def reads_memory(e: K.Expr) -> bool:
        """Whether ``e`` loads (``tl.load``): a tuple item that does is the value memory held
        where the tuple was bound, not where an item is read (a store in between, `u =
        (tl.load(p), 1)`, `tl.store(p, 7.0)`, `u[0]`, read the 7.0: the lowering spells a
        scalar load where it stands)."""
        return any(isinstance(x, K.Op) and x.name == "tl.load" for x in K.walk_expr(e))

    def snapshot(self, e: K.Expr, st: Optional[Static], node: ast.AST, item: bool = False
                 ) -> tuple[K.Expr, Optional[Static]]:
        """``e`` (with what ``st`` says of it) as the name ``node`` binds must hold it: each
        tuple item that reads a variable rebound later (:meth:`rebound_later`) or loads from
        memory (:meth:`reads_memory`) is assigned to a temporary here, and the tuple holds the
        temporary. A value the builder holds as a
        compile-time expression of such a variable (a helper returning its parameter) becomes
        a runtime value, which the binding's assignment copies. Pipes, handles, buffers and
        tuple-valued variables (their items were copied the same way where they were bound)
        are kept."""
        if st is not None and st.kind not in ("const", "tuple"):
            return e, st
        if st is not None and st.kind == "const":
            if isinstance(e, K.TupleExpr):
                v, _ = self.snapshot(e, None, node, item)
                return (e, st) if v is e else (v, Static("const", v))
            if not item:
                return (e, None) if self.rebound_later(e, node) else (e, st)
            st = None
        if isinstance(e, K.TupleExpr):
            sts = st.value if st is not None and len(st.value) == len(e.items) \
                else (None,) * len(e.items)
            new = [self.snapshot(x, sx, node, True) for x, sx in zip(e.items, sts)]
            if all(nx is x for (nx, _), x in zip(new, e.items)):
                return e, st
            nsts = tuple(sx for _, sx in new)
            return (K.TupleExpr(tuple(x for x, _ in new), e.loc),
                    Static("tuple", nsts) if any(sx is not None for sx in nsts) else None)
        if not item or isinstance(e, (K.Const, K.Global, K.DType)) \
                or self.tuple_shape(e, st) is not None \
                or not (self.rebound_later(e, node) or self.reads_memory(e)):
            return e, st
        f = self.frame
        tmp = self.fresh("t")
        self.emit(K.Assign(f.kir(tmp), e, e.loc))
        f.env[tmp] = None
        return K.Name(f.kir(tmp), e.loc), None

    def assign_carried(self, name: str, e: K.Expr, st: Optional[Static], node: ast.AST) -> None:
        """``name = e`` where ``name`` is a tuple a loop carries: ``e``'s items are assigned to
        the item variables (all read before any is assigned); a value that is no tuple of as
        many runtime items is an error (Triton too refuses a loop-carried value whose type the
        body changes)."""
        f = self.frame
        names = f.carried[name]
        items = self.carry_items(e, st)
        if f.carried_by.get(name) == "if":
            self.rebind_in_branch(name, names, items, node)
        if names is None:
            raise self.err(f"`{name}` holds a tuple with a compile-time value (a pipe, a handle, "
                           f"a buffer) or a tuple among its items, and a loop rebinds it here: "
                           f"each iteration would read the previous one's `{name}`, which the "
                           f"frontend cannot carry (bind `{name}` once, before the loop, or keep "
                           f"its runtime items in variables of their own)", node,
                           check="unsupported-control-flow")
        if items is None or len(items) != len(names):
            raise self.err(f"`{name}` holds a tuple of {len(names)} runtime values on entry to a "
                           f"loop that rebinds it here to another kind of value: each iteration "
                           f"reads the previous one's `{name}`, so it must stay a tuple of "
                           f"{len(names)} runtime values (Triton refuses a loop-carried value "
                           f"whose type changes)", node, check="unsupported-control-flow")
        targets = ast.Tuple([ast.Name(v, ast.Store()) for v in names], ast.Store())
        self.assign(targets, K.TupleExpr(tuple(items), e.loc), None, node)

    def rebind_in_branch(self, name: str, names: Optional[tuple], items: Optional[list],
                         node: ast.AST) -> None:
        """The checks of ``assign_carried`` for a tuple an if carries: a branch rebinding it
        must bind a tuple of as many runtime values (after the if, the name reads the one of
        the path that ran)."""
        if names is None:
            raise self.err(f"`{name}` holds a tuple with a compile-time value (a pipe, a handle, "
                           f"a buffer) or a tuple among its items, and a branch of an if "
                           f"rebinds it here: after the if it would hold one path's tuple, "
                           f"which the frontend cannot follow (bind `{name}` once, or keep its "
                           f"runtime items in variables of their own)", node,
                           check="unsupported-control-flow")
        if items is None or len(items) != len(names):
            raise self.err(f"`{name}` holds a tuple of {len(names)} runtime values before an if "
                           f"whose branch rebinds it here to another kind of value: after the if "
                           f"it must hold a tuple of {len(names)} runtime values on every path "
                           f"(Triton refuses a name whose type differs between the branches)",
                           node, check="unsupported-control-flow")

    def tensor_negative_step(self, it: ast.Call, step: K.Expr, s: ast.For) -> None:
        """Refuse a range / tl.range loop whose step folds to a negative number that Triton 3.6
        holds as a tensor: a helper's result (`range(3, -1, neg())`: visit_Return makes the
        returned number a tensor) or a local tensor name (:meth:`local_tensor`). Triton reverses
        a loop only for a constexpr step; the scf.for it builds from a tensor one runs no
        iteration from a start above its stop, where the frontend (and the lowering, which
        writes the folded number in place) ran the reversed loop."""
        node = it.args[2] if len(it.args) > 2 else next(
            (k.value for k in it.keywords if k.arg == "step"), None)
        value = fold(step)
        if node is None or not isinstance(value, int) or isinstance(value, bool) or value >= 0:
            return
        root = self.local_tensor(node)
        if root is None:
            return
        what = ast.unparse(root)
        raise self.err(f"the step of `{ast.unparse(it)}` is negative ({value}) and a tensor in "
                       f"Triton 3.6 (`{ast.unparse(node)}` computes from `{what}`, which Triton "
                       f"holds as a tensor: a helper's returned number, or a name a plain "
                       f"assignment binds): Triton reverses a loop only for a constexpr step, "
                       f"and the loop it builds from a tensor one (scf.for) runs no iteration "
                       f"from a start above its stop; write the step as a literal, or bind it "
                       f"as `name: tl.constexpr = ...`", s, check="bad-loop")

    def module_read_rebound(self, reads: dict, stored: set[str], trips: Optional[int],
                            loop: ast.For) -> None:
        """Refuse a tl.static_range body that reads a module-level name (``reads``: name -> the
        read) and then binds that name itself (``stored``), in a loop of more than one
        iteration: Triton 3.6 unrolls the loop in one scope, so the first iteration reads the
        module's value and every later one the local binding (`for p in range(G): ...; G = 3`
        under `tl.static_range(2)` runs 4 then 3 windows of a module G = 4), where the body is
        built once, reading the module's value (as a range / tl.range loop, whose body Triton
        generates once, does), and the lowering names the two apart."""
        if trips is not None and trips < 2:
            return
        for name in sorted(set(reads) & stored):
            raise self.err(f"`{name}` is read here as the module-level `{name}`, and the body of "
                           f"this tl.static_range loop (line {loop.lineno}) binds `{name}` after "
                           f"it: Triton unrolls the loop in one scope, so the iterations after "
                           f"the first read that local binding instead; use another name for "
                           f"the local", reads[name], check="unsupported-control-flow")

    def same_each_iteration(self, before: dict, stored: set[str], loop: ast.stmt) -> None:
        """A name holding a compile-time value (a pipe handle, a pipe, a buffer, a helper) that a
        loop body binds to another one: the body was built with the value it holds on entry,
        which only the first iteration sees (swapping two handles each iteration): an error."""
        f = self.frame
        for name in sorted(stored):
            old = before.get(name)
            if old is not None and f.env.get(name) != old:
                raise self.err(f"`{name}` holds a {old.kind} that this loop's body binds to "
                               f"another value: the iterations after the first would see "
                               f"another one, which the frontend cannot follow (bind "
                               f"`{name}` once, before the loop)", loop,
                               check="unsupported-control-flow")
