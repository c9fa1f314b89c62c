"""Python expressions built into KIR: constants, names, tuples, operators, comparisons,
`and` / `or`, conditional expressions, subscripts and attributes, with the checks that no
pipe event or memory effect is dropped or reordered by the reading."""

from __future__ import annotations

import ast
from typing import Optional

from ..diagnostics import TleError
from ..ir import kernel as K
from ..language.call_args import PROPAGATE_NAN
from ..language.gpu import normalize_dtype
from .build_support import (BINOPS, CMPOPS, Static, UNOPS, VERBS, compile_time_only,
                            condition_fold, fold_body, has_effect, is_none,
                            picked_at_compile_time, writes_memory)
from .config_literal import entry_section
from .folding import fold
from .modules import shown
from .scope import canon
from .tensor_args import body_assigns


class ExpressionBuild:
    """The expressions of :class:`~.build.Builder`: its methods, kept here by idea."""

    # -- expressions ------------------------------------------------------------------------
    def expr(self, node: ast.expr) -> tuple[K.Expr, Optional[Static]]:
        m = getattr(self, f"e_{type(node).__name__}", None)
        if m is None:
            raise self.err(f"`{ast.unparse(node)}` is not supported in a kernel", node)
        return m(node)

    def value(self, node: ast.expr) -> K.Expr:
        e, st = self.expr(node)
        return self.checked_value(node, e, st)

    def checked_value(self, node: ast.expr, e: K.Expr, st: Optional[Static]) -> K.Expr:
        """``value``'s rules on ``node`` read as ``e`` (its static ``st``)."""
        if st is not None and st.kind == "method" and isinstance(st.value[0], Static):
            raise self.verb_as_value(node)
        self.void_event_operand(node, e)
        if st is not None and st.kind in ("func", "mod", "usermod", "method"):
            what = "a pipe verb" if st.kind == "method" else f"`{ast.unparse(node)}`"
            raise self.err(f"{what} is used as a value: call it directly (a verb passed as a "
                           f"callback or stored hides its events)", node,
                           check="verb-as-value" if st.kind == "method" else "frontend")
        return e

    def void_event_operand(self, node: ast.expr, e: K.Expr) -> None:
        """Refuse the value of a commit, close or release (which return nothing) used as an
        operand: `w.commit(p) == None`, `tl.store(ptr, w.commit(p))`, `print("c",
        w.release(p))`, `not w.commit(p)`. The protocol view read the event and verified the
        kernel, where the lowering has no value to compute with (it stopped at the line, "an
        operator on a none"); call the verb as a statement."""
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("commit", "close", "release")):
            return
        last = self.out[-1] if self.out else None
        ev = e if isinstance(e, K.Event) else last.value if isinstance(e, K.Name) \
            and isinstance(last, K.Assign) and last.target == e.id else None
        if isinstance(ev, K.Event):
            raise self.err(f"`{ast.unparse(node)}` is used as a value, but {ev.verb} returns "
                           f"nothing: call it as a statement", node, check="bad-event")

    def verb_as_value(self, node: ast.expr) -> TleError:
        text = ast.unparse(node)
        return self.err(f"`{text}` is used as a value: pipe verbs must be called directly on the "
                        f"handle, e.g. `{text}(i)` (a verb passed as a callback or stored in a "
                        f"variable hides its events from the verifier)", node,
                        check="verb-as-value")

    def e_Constant(self, node: ast.Constant) -> tuple[K.Expr, Optional[Static]]:
        return K.Const(node.value, self.loc(node)), None

    def e_Name(self, node: ast.Name) -> tuple[K.Expr, Optional[Static]]:
        return self.lookup(node.id, node)

    def e_Tuple(self, node: ast.Tuple) -> tuple[K.Expr, Optional[Static]]:
        items = [self.expr(e) for e in node.elts]
        for e, (_, st) in zip(node.elts, items):
            if st is not None and st.kind == "method" and isinstance(st.value[0], Static):
                raise self.verb_as_value(e)
        st = Static("tuple", tuple(s for _, s in items)) if any(s for _, s in items) else None
        return K.TupleExpr(tuple(e for e, _ in items), self.loc(node)), st

    e_List = e_Tuple

    def e_BinOp(self, node: ast.BinOp) -> tuple[K.Expr, Optional[Static]]:
        if isinstance(node.op, ast.Add) and isinstance(node.left, (ast.Tuple, ast.List)) \
                and isinstance(node.right, (ast.Tuple, ast.List)) \
                and isinstance(node.left, ast.Tuple) == isinstance(node.right, ast.Tuple):
            # `(M, 2) + (3,)`: Triton's tuple (a Python list, a list) concatenates, a tuple
            # whose items are the operands' (it was read as arithmetic on two tuples, and an
            # item of it refused as "no tuple"; lowering adversarial round 19)
            (a, sa), (b, sb) = self.e_Tuple(node.left), self.e_Tuple(node.right)
            st = None if sa is None and sb is None else Static("tuple", (
                *(sa.value if sa is not None else (None,) * len(a.items)),
                *(sb.value if sb is not None else (None,) * len(b.items))))
            return K.TupleExpr(a.items + b.items, self.loc(node)), st
        a, b = self.value(node.left), self.value(node.right)
        op = BINOPS.get(type(node.op))
        if op is None:
            raise self.err("unsupported operator", node)
        if op == "**":
            self.tensor_power(node, [(node.left, a), (node.right, b)])
        self.folded_division(node, [(node.left, a), (node.right, b)])
        return K.BinOp(op, a, b, self.loc(node)), None

    def e_UnaryOp(self, node: ast.UnaryOp) -> tuple[K.Expr, Optional[Static]]:
        x = self.value(node.operand)
        if isinstance(node.op, ast.Not):
            self.tensor_truth(node, [(node.operand, x)], "not")
        if isinstance(node.op, ast.UAdd) and not self.not_triton \
                and self.local_tensor(node.operand) is not None:
            # `+b` of a local number: Triton 3.6 holds b as a tensor, which has no __pos__
            # (adversarial round 27: `b = 3; range(+b)` was verified); the protocol view refuses
            # `+` of the other tensors (Walker._e_UnaryOp)
            raise self.err(f"`{ast.unparse(node)}`: unary `+` of a tensor, which Triton 3.6 "
                           f"refuses (\"'tensor' object has no attribute '__pos__'\"; a plain "
                           f"assignment makes `{ast.unparse(node.operand)}` a tensor); write "
                           f"`{ast.unparse(node.operand)}`", node,
                           check="unsupported-expression")
        built = K.UnaryOp(UNOPS[type(node.op)], x, self.loc(node))
        if not isinstance(node.op, ast.Not):
            # `-b` of a local number b = -2^31 (or an i1 True) wraps in Triton
            self.folded_arithmetic(node, UNOPS[type(node.op)] + "u", [(node.operand, x)], built)
        return built, None

    def e_Compare(self, node: ast.Compare) -> tuple[K.Expr, Optional[Static]]:
        """A comparison. A chained one (``0 <= p < N``) is refused as Triton 3.6 refuses it
        ("simultaneous multiple comparison is not supported"), on constexprs as on runtime
        values: read as Python's ``and`` of its links, a kernel Triton cannot compile was
        verified. ``tle.assume(1 <= N <= 64)`` states a domain and is no Triton code (the
        lowering emits nothing for it), and Python evaluates a module-level constant and a
        helper's default: the chain is read there."""
        if len(node.ops) > 1 and not self.not_triton:
            text = ast.unparse(node)
            links = " and ".join(ast.unparse(ast.Compare(a, [op], [b])) for a, op, b in zip(
                [node.left, *node.comparators[:-1]], node.ops, node.comparators))
            raise self.err(f"`{text}` is a chained comparison, which Triton 3.6 refuses in a "
                           f"kernel (\"simultaneous multiple comparison is not supported\"): "
                           f"write `{links}`", node, check="unsupported-expression")
        if len(node.ops) == 1 and isinstance(node.ops[0], (ast.Is, ast.IsNot)):
            return self.none_test(node), None
        vals = [self.value(node.left)] + [self.value(c) for c in node.comparators]
        items = []
        for i, op in enumerate(node.ops):
            sym = CMPOPS.get(type(op))
            if sym is None:
                raise self.err(f"`{type(op).__name__}` is not an arithmetic comparison", node)
            items.append(K.Compare(sym, vals[i], vals[i + 1], self.loc(node)))
            # a local number compares as Triton's tensor does (in float32 beside a float)
            self.folded_arithmetic(node, sym, [(([node.left] + node.comparators)[i], vals[i]),
                                               (node.comparators[i], vals[i + 1])], items[-1])
        if len(items) == 1:
            return items[0], None
        return K.BoolOp("and", tuple(items), self.loc(node)), None

    def none_test(self, node: ast.Compare) -> K.Const:
        """``x is None`` / ``x is not None``: Triton 3.6's visit_Compare gives the constexpr
        ``x is None`` of the value unwrapped (a tensor, a number, a handle: not None), decided
        when it compiles, so an `if` on it builds the branch taken only (``def h(x, s=None):
        if s is not None: x = x * s``). Read as that constant where the reading knows whether
        ``x`` is None; refused where it does not (a constexpr given no value), and for an
        identity test of two other values (Python's identity of Triton's objects)."""
        text = ast.unparse(node)
        sides = [node.left, node.comparators[0]]
        nones = [isinstance(x, ast.Constant) and x.value is None for x in sides]
        if not any(nones):
            raise self.err(f"`{text}`: `is` / `is not` compares Triton's objects by identity; "
                           f"only a test against None (`x is None`, `x is not None`) is read",
                           node, check="unsupported-expression")
        e, st = self.expr(sides[1] if nones[0] else sides[0])
        if st is not None and st.kind == "const" and isinstance(st.value, K.Expr):
            e, st = st.value, None  # a parameter bound to a constant (None by its default)
        if st is None and is_none(e):
            none = True
        elif st is not None or self.is_runtime(e) or fold(e) is not None or isinstance(
                e, (K.Op, K.BinOp, K.UnaryOp, K.Compare, K.BoolOp, K.DType, K.Const,
                    K.Global)):
            # a compile-time object (a module, a handle, a dtype), a number, a value computed
            # or loaded
            none = False
        else:
            raise self.err(f"`{text}`: whether `{ast.unparse(sides[1] if nones[0] else sides[0])}`"
                           f" is None is not known when the kernel is read (Triton 3.6 decides "
                           f"it when it compiles); give it a value", node,
                           check="unsupported-expression")
        return K.Const(none == isinstance(node.ops[0], ast.Is), self.loc(node))

    def e_BoolOp(self, node: ast.BoolOp) -> tuple[K.Expr, Optional[Static]]:
        """``a and b`` / ``a or b``. Triton 3.6 evaluates the operands in order and stops at a
        compile-time one that decides the result (`0 and f()`, `1 or f()`: Python's short
        circuit), while a tensor operand decides nothing then (every operand after it runs). So
        the operands after a constant that decides are not built (an inlined helper's pipe
        events there never run), and an operand after one the reading cannot decide (a
        constexpr parameter, a tensor) may not perform events or writes: refused."""
        op = "and" if isinstance(node.op, ast.And) else "or"
        built = []
        undecided = None  # the first operand the reading cannot decide
        for v in node.values:
            start = len(self.out)
            built.append(self.value(v))
            if undecided is not None and not self.in_kernel_body():
                self.no_effects_in(self.out[start:], v, f"an operand of `{op}` after "
                                   f"`{ast.unparse(undecided)}`, which may decide it (Python "
                                   f"and Triton skip what follows a compile-time operand that "
                                   f"decides)")
            value = fold(built[-1])
            if isinstance(built[-1], K.Const) and built[-1].value is None:
                value = False
            if value is None or isinstance(value, tuple) or self.local_tensor(v) is not None:
                undecided = undecided or v
            elif bool(value) == (op == "or") and undecided is None:
                break  # Triton returns this constant; what follows is never evaluated
        items = tuple(built)
        # a local name bound to a number is a tensor there (local_tensors.BuildRules)
        self.tensor_truth(node, list(zip(node.values, items)), op)
        return K.BoolOp(op, items, self.loc(node)), None

    def static_assert_form(self, node: ast.Call) -> None:
        """Refuse a ``tl.static_assert`` Triton 3.6 refuses before it looks at the condition:
        one not given one or two positional arguments ("`static_assert` requires one or two
        positional arguments only": `msg=` by keyword included), or whose condition is a local
        tensor (`b = C > 1; tl.static_assert(b)`: "Assertion condition could not be determined
        at compile-time"). Read as nothing, each was verified."""
        text = ast.unparse(node)
        if node.keywords or not 1 <= len(node.args) <= 2 \
                or any(isinstance(a, ast.Starred) for a in node.args):
            raise self.err(f"`{text}`: Triton 3.6 takes one or two positional arguments only "
                           f"(the condition and a message: \"`static_assert` requires one or two "
                           f"positional arguments only\"); pass the message positionally",
                           node, check="unsupported-expression")
        self.constexpr_operands(f"`{text}`", node.args[:1])

    def kernel_constexprs_of(self, cond: K.Expr) -> frozenset:
        """The kernel's constexpr parameters (unbound in this build) that decide ``cond`` when
        it reads nothing else: each name it reads is one of them (the kernel body's own), or a
        partition's parameter given an expression of them (:attr:`Frame.constexpr_sources`;
        a helper reads its caller's names in place). Empty when ``cond`` reads anything else
        (a run-time value, a local binding)."""
        names: set[str] = set()
        part = self.frames[1] if self.in_partition and len(self.frames) > 1 else None
        for x in K.walk_expr(cond):
            if isinstance(x, K.Name):
                if part is not None and x.id in part.constexpr_sources:
                    names |= part.constexpr_sources[x.id]
                elif part is None and x.id in self.constexpr_params:
                    names.add(x.id)
                else:
                    return frozenset()
            elif not isinstance(x, (K.Const, K.Global, K.BinOp, K.UnaryOp, K.Compare,
                                    K.BoolOp)):
                return frozenset()
        return frozenset(n for n in names if type(self.bind.get(n)) is not int)

    def expr_static(self, node: ast.expr) -> Optional[Static]:
        """The compile-time value ``node`` holds, read without building it (a name's binding,
        a tuple's items, a pipe's `writer()` / `reader(...)`), else None."""
        if isinstance(node, ast.Name):
            f = self.frame
            return f.env.get(node.id) if node.id not in f.undefined else None
        if isinstance(node, ast.Tuple):
            items = [self.expr_static(e) for e in node.elts]
            return Static("tuple", tuple(items)) if any(items) else None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("writer", "reader"):
            base = self.expr_static(node.func.value)
            return Static("handle", None) if base is not None and base.kind == "pipe" else None
        return None

    def undecided_choice(self, what: str, test: ast.expr, names: frozenset) -> None:
        """Stop the reading where the kernel's constexprs ``names``, unbound in this build,
        decide which compile-time value (a pipe handle, a pipe or a buffer) a name or an expression
        holds (``what``, by the condition ``test``): Python and Triton take the branch the
        values choose, and only then is the value one the protocol view and the lowering
        have. A check of SPECIALIZABLE (as a pipe capacity read from constexprs is),
        so that tle-dump, a compile or a launch reads the kernel again with them bound, where
        the condition folds (adversarial round 65: the generic reading refused it, "holds
        different values on different paths" or unknown-handle, even under --param)."""
        ordered = tuple(sorted(names))
        config = self.frames[0].module.default_config
        e = self.needs_constexprs(
            f"{what} by `{ast.unparse(test)}`, of constexpr", ordered,
            " and only the chosen value exists", self.loc(test),
            [n for n in ordered if type(entry_section(config, self.kernel_name,
                                                      "constexprs").get(n)) is not bool])
        # a choice, which a bool constexpr makes as well (DEFAULT_CONFIG's `"C": True`, read
        # as the integer 1 and lowered as True: adversarial round 66), where a capacity takes
        # integers only
        e.choice = True
        raise e

    def e_IfExp(self, node: ast.IfExp) -> tuple[K.Expr, Optional[Static]]:
        """``a if c else b``: an ``ifexp`` operation (the lowering refuses it); a pipe event in
        ``a`` or ``b`` would depend on data (an error)."""
        test, test_st = self.expr(node.test)
        test = self.checked_value(node.test, test, test_st)
        folded = condition_fold(test, test_st)
        self.compile_time_condition(node.test, test, folded, "a conditional expression")
        # a tensor condition (a number a plain assignment bound: `f = 1; N if f else 2.0`, in a
        # partition or the kernel body): Triton 3.6's visit_IfExp builds both operands as
        # tensors of one type and selects at run time, even where the value folds, so the
        # operands are built and marked `tensor=True` for the protocol view, which checks them
        # as Triton does and reads the operand the folded test chooses (Walker.ifexp)
        tensor = (isinstance(folded, (bool, int)) or not self.in_partition) \
            and self.tensor_condition(node.test, test)
        if isinstance(folded, (bool, int, float)) and not tensor:
            # decided now, as an `if` on a constant is: only the operand Python evaluates exists
            return self.expr(node.body if folded else node.orelse)
        deciders = None if folded is not None or tensor or self.is_runtime(test) \
            else self.kernel_constexprs_of(test)
        if deciders and any(compile_time_only(self.expr_static(b))
                            for b in (node.body, node.orelse)):
            # a handle or a pipe chosen by the kernel's constexprs (`wa if C > 3 else wb`): an
            # `ifexp` of them is no value the protocol view or the lowering has, so the kernel
            # is read with the constexprs bound, where only the chosen one exists
            self.undecided_choice(f"`{ast.unparse(node)}` chooses a pipe handle or a pipe",
                                  node.test, deciders)
        branches = []
        for b in (node.body, node.orelse):
            saved, self.sequential = self.sequential, 0
            start = len(self.out)
            try:
                e, st = self.expr(b)
                e = self.checked_value(b, e, st)
                if st is not None and st.kind == "buffer" and st.value[1] is None \
                        and st.value[0] not in self.buffer_owner:
                    # a free buffer no name holds yet (a tuple's item, `t[0]`): named here, so
                    # that the accesses through the choice reach it (it was None, and a
                    # partition's store through `fa if N > 0 else t[0]` reached `fa` alone)
                    e = K.BufferRef(self.name_buffer(st, self.unused_buffer_name(), b), e.loc)
            finally:
                self.sequential = saved
            if not self.in_kernel_body():
                self.no_events_in(e, b, "a conditional expression (x if c else y)")
                # an inlined helper's statements are emitted before the expression, so they run
                # whichever operand is chosen, where Python and Triton run only the chosen one
                self.no_effects_in(self.out[start:], b, "a conditional expression (x if c "
                                   "else y), whose operands run only when chosen")
            branches.append(e)
        marks = (("tensor", K.Const(True, self.loc(node))),) if tensor else ()
        return self.seq(K.Op("ifexp", (test, *branches), marks, self.loc(node))), None

    def body_value(self, e: K.Expr) -> object:
        """:func:`fold_body` of the kernel body's expression ``e`` through the names the body
        has bound so far (each bound once at its top level stands for its value)."""
        top = {st.target for st in self.out if isinstance(st, K.Assign)} - set(
            self.constexpr_params) - self.param_names
        return fold_body(e, body_assigns(self.out), top)

    def in_kernel_body(self) -> bool:
        return not self.in_partition

    @staticmethod
    def effect_of(emitted: list, reads: bool = False) -> Optional[str]:
        """The first pipe event or memory write (a store, an atomic, a TMA copy) of statements
        the builder emitted (an inlined helper's body), described with its place; None when
        they only compute values. ``reads``: a load counts too."""
        for st in K.walk_stmts(tuple(emitted)):
            for e in K.stmt_exprs(st):
                for x in K.walk_expr(e):
                    what = (f"a pipe event ({x.verb})" if isinstance(x, K.Event) else
                            f"a write ({x.name})" if writes_memory(x) else
                            f"a read ({x.name})" if reads and isinstance(x, K.Op)
                            and x.name == "tl.load" else None)
                    if what is not None:
                        return f"{what}, at {shown(x.loc.file or '')}:{x.loc.line}"
        return None

    def no_dropped_effects(self, node: ast.AST, items, kept: Optional[int], what: str) -> None:
        """Refuse a tuple the kernel spells out whose items (but the ``kept`` one, which the
        expression goes on with) perform a pipe event or write memory, where ``node`` reads no
        more of it (``what``: `(w.commit(p), 1)[1]`, `len((w.commit(p), 1))`): Python and Triton
        3.6 evaluate every item, and the reading would drop them from the verdict and the
        lowered kernel (adversarial round 63: such a second commit was verified)."""
        for j, item in enumerate(items):
            if j != kept and has_effect(item):
                raise self.err(f"`{ast.unparse(node)}`: item {j} of the tuple performs a pipe "
                               f"event or a write, which Python and Triton evaluate, but "
                               f"{what} and the reading would drop it: evaluate it in a "
                               f"statement of its own", node, check="unsupported-expression")

    def no_effects_in(self, emitted: list, node: ast.AST, where: str) -> None:
        """Refuse statements the builder emitted for ``node`` (an inlined helper's body) that
        perform a pipe event or write memory (a store, an atomic, a TMA copy), where ``node`` is
        evaluated only sometimes (``where``): the kernel IR would run them always."""
        what = self.effect_of(emitted)
        if what is not None:
            raise self.err(f"`{ast.unparse(node)}` performs {what}, inside {where}: the kernel "
                           f"IR would run it always; call the helper in an `if` statement",
                           node, check="conditional-event")

    def call_arguments(self, node: ast.Call, build) -> tuple[list, list]:
        """A call's positional arguments, then its keyword ones (name, value), each built by
        ``build`` in Python's order. Triton 3.6 builds the keyword arguments first
        (code_generator.visit_Call): where a keyword argument and a positional one both perform
        pipe events or writes (helpers inlined there), the two orders run them differently,
        refused."""
        start = len(self.out)
        args = [build(a) for a in node.args]
        middle = len(self.out)
        kwargs = [(k.arg, build(k.value)) for k in node.keywords if k.arg is not None]
        if node.args and node.keywords and not self.in_kernel_body():
            first = self.effect_of(self.out[start:middle])
            then = self.effect_of(self.out[middle:])
            # a write on one side and a read of memory on the other differ too: the read sees
            # the write in Triton's order (keywords first) and not in Python's, or the reverse
            if first is not None and then is None:
                then = self.effect_of(self.out[middle:], reads=True)
            elif then is not None and first is None:
                first = self.effect_of(self.out[start:middle], reads=True)
            if first is not None and then is not None:
                raise self.err(f"`{ast.unparse(node)}`: a positional argument performs {first}, "
                               f"and a keyword argument {then}; Python evaluates the positional "
                               f"arguments first, Triton 3.6 the keyword ones: bind them to "
                               f"names in the order meant, then call", node,
                               check="unsupported-expression")
        return args, kwargs

    def no_events_in(self, e: K.Expr, node: ast.AST, where: str) -> None:
        """A pipe event evaluated inside ``where`` would depend on data: an error at it."""
        for x in K.walk_expr(e):
            if isinstance(x, K.Event):
                raise self._conditional(x.loc.line, node, x.verb, where)

    def _conditional(self, line: int, node: ast.AST, verb: str, where: str) -> TleError:
        call = next((n for n in ast.walk(node) if isinstance(n, ast.Call)
                     and isinstance(n.func, ast.Attribute) and n.func.attr == verb
                     and n.lineno == line), None)
        who = ast.unparse(call.func.value) if call is not None else "the handle"
        return self.err(f"`{who}.{verb}(...)` inside {where}: the pipe events of a partition must "
                        f"not depend on data; use an `if` on loop variables and params",
                        call if call is not None else node, check="conditional-event")

    def _guarded(self, node: ast.expr) -> tuple[K.Expr, Optional[Static]]:
        """A lambda or a comprehension: not supported; a pipe verb in it would be a conditional
        event (an error at the verb)."""
        if self.in_partition:
            parts: list[ast.AST] = []
            if isinstance(node, ast.Lambda):
                parts = [node.body]
            else:
                elts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
                parts = elts + [x for g in node.generators for x in (g.iter, *g.ifs)]
            for part in parts:
                for n in ast.walk(part):
                    if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                            and n.func.attr in VERBS):
                        raise self._conditional(n.lineno, n, n.func.attr,
                                                "a lambda or comprehension")
        raise self.err(f"`{ast.unparse(node)}` is not supported in a kernel", node)

    e_Lambda = e_ListComp = e_SetComp = e_DictComp = e_GeneratorExp = _guarded

    def e_Subscript(self, node: ast.Subscript) -> tuple[K.Expr, Optional[Static]]:
        # the base and the index are built once each, as Python evaluates them: a helper call
        # in either (`t[put(...)]`, `load(...)[:, None]`) inlines its events once
        base, st = self.expr(node.value)
        single = not isinstance(node.slice, (ast.Tuple, ast.Slice))
        index = self.value(node.slice) if single else None
        if single and fold(index) is not None and (
                isinstance(base, K.TupleExpr) or st is not None and st.kind == "tuple"
                or self.tuple_shape(base, st) is not None):
            # a tuple's item is picked at compile time: Triton 3.6 refuses an index it holds as
            # a tensor (`i = 0; t[i]`), which the folded reading took for 0 (one that does not
            # fold is refused below)
            self.constexpr_operands(f"`{ast.unparse(node)}`", [node.slice])
        if isinstance(base, K.TupleExpr) and single:
            i = fold(index)
            if isinstance(i, int) and -len(base.items) <= i < len(base.items):
                self.no_dropped_effects(node, base.items, i % len(base.items),
                                        f"the subscript picks item {i}")
                item_st = st.value[i] if st is not None and st.kind == "tuple" else None
                return base.items[i], item_st
        if st is not None and st.kind == "tuple" and single:  # a name holding a tuple: `pipes[0]`
            i = fold(index)
            if isinstance(i, int) and -len(st.value) <= i < len(st.value):
                return self.item_of(base, st, i % len(st.value), self.loc(node))
        if single and type(fold(index)) is int and (
                isinstance(base, K.TupleExpr) or st is not None and st.kind == "tuple"):
            # an index past the tuple's end: Python's IndexError, when Triton 3.6 compiles it
            n = len(base.items) if isinstance(base, K.TupleExpr) else len(st.value)
            raise self.err(f"`{ast.unparse(node)}`: index {fold(index)} is out of range of a "
                           f"tuple of {n} item{'s' if n != 1 else ''} (Python's IndexError when "
                           f"Triton compiles the kernel)", node, check="unsupported-expression")
        if single and fold(index) is None and self.tuple_shape(base, st) is not None:
            # the kernel IR is read once for every value of the kernel's constexpr parameters,
            # so an index the reading cannot fold cannot pick a tuple's item
            loop_var = self.is_runtime(index)
            deciders = None if loop_var else self.kernel_constexprs_of(index)
            if deciders:
                # a tuple's item a constexpr index picks (`(wa, wb)[C]`, `ws[STAGE]`): read
                # specialised, where the index folds, as a conditional expression choosing a
                # handle is (adversarial round 66, for a tuple of pipe handles or pipes: refused,
                # "a tuple's index must be a constant"; round 68: a tuple of shared buffers, of
                # numbers or of tensors alike, `(2, 4)[C - 5]`, which Python and Triton 3.6
                # pick at compile time just the same)
                picks = "a pipe handle, a pipe or a buffer" if st is not None \
                    and st.kind == "tuple" and all(picked_at_compile_time(x) for x in st.value) \
                    else "a tuple's item"
                self.undecided_choice(f"`{ast.unparse(node)}` picks {picks}", node.slice,
                                      deciders)
            raise self.err(f"`{ast.unparse(node)}`: a tuple's index must be a constant when the "
                           f"kernel is read (a literal, a module constant, the variable of a "
                           f"tl.static_range loop of constant bounds, or a partition or helper "
                           f"argument bound to one); `{ast.unparse(node.slice)}` is not "
                           + ("(a run-time value, such as the variable of a range / tl.range "
                              "loop: a tensor in Triton 3.6, which refuses the subscript; to "
                              "pick an item per iteration, loop with `tl.static_range`)"
                              if loop_var
                              else "(a constexpr parameter of the kernel is read for every "
                                   "value)"), node)
        elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        idx: list = []
        for e in elts:
            if isinstance(e, ast.Slice) and e.lower is None and e.upper is None and e.step is None:
                idx.append(":")
            elif isinstance(e, ast.Constant) and e.value is None:
                idx.append(None)
            else:
                v = fold(index if single else self.value(e))
                if not isinstance(v, int):
                    raise self.err("only `x[:, None]`-style expansions and constant tuple "
                                   "indices are supported", node)
                idx.append(v)
        return K.Subscript(self.checked_value(node.value, base, st), tuple(idx),
                           self.loc(node)), None

    def e_Attribute(self, node: ast.Attribute) -> tuple[K.Expr, Optional[Static]]:
        return self.attribute_of(*self.expr(node.value), node)

    def attribute_of(self, base: K.Expr, st: Optional[Static],
                     node: ast.Attribute) -> tuple[K.Expr, Optional[Static]]:
        """``base.attr`` where ``base`` (of ``node.value``) is built already."""
        loc = self.loc(node)
        if st is not None:
            if st.kind == "mod":
                path = canon(f"{st.value}.{node.attr}")
                if path.split(".")[0] in ("tl", "gl"):
                    dt = normalize_dtype(node.attr)
                    if dt is not None:
                        return K.DType(dt, loc), None
                    if path in PROPAGATE_NAN:
                        # a constexpr of tl.maximum / tl.minimum (Triton 3.6): its value, which
                        # language/call_args.py holds to the default the lowering computes
                        # (adversarial round 62: it was refused as "used as a value")
                        return K.Const(path, loc), None
                return K.Const(None, loc), Static("mod", path)
            if st.kind == "usermod":
                return self.module_name(st.value, node.attr, node)
            if st.kind == "pipe":
                if node.attr in ("writer", "reader"):
                    return K.Const(None, loc), Static("method", (st, node.attr))
                if node.attr in VERBS:
                    who = ast.unparse(node.value)
                    side = "writer()" if node.attr in ("acquire", "commit", "close") else \
                        "reader(...)"
                    raise self.err(f"`{who}.{node.attr}(...)`: pipe events go through a handle: "
                                   f"{who}.{side}.{node.attr}(i)", node, check="bad-event")
                raise self.err(f"pipe '{st.value.name}' has no method '{node.attr}' (writer, "
                               f"reader)", node)
            if st.kind == "handle":
                if node.attr in VERBS:
                    return K.Const(None, loc), Static("method", (st, node.attr))
                raise self.err(f"the {st.value.side} of pipe '{st.value.pipe}' has no "
                               f"'{node.attr}'", node)
        if node.attr == "slot":
            return K.ResultSlot(base, loc), None
        if node.attr == "is_closed":
            return K.IsClosed(base, loc), None
        if node.attr == "to":
            return K.Const(None, loc), Static("method", (base, "to"))
        if node.attr == "T":  # the transposed view (the lowering refuses it)
            return K.Op("T", (base,), (), loc), None
        return K.SlotField(base, node.attr, loc), None
