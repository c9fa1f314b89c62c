"""The kernel-level declarations built into KIR: shared buffers (`tle.gpu.alloc`), pipes
(`tle.pipe`, capacities from literals or constexprs) and their reader handles."""

from __future__ import annotations

import ast
import dataclasses
from typing import Optional, Sequence

from ..diagnostics import TleError
from ..ir import kernel as K
from ..ir.nodes import Loc
from ..language.gpu import SharedBuffer, Unevaluated, smem, validate_alloc
from ..language.pipe import validate_pipe, validate_reader
from .build_support import CapacityOfConstexprs, Static, decl_view, no_integer_in_config
from .folding import fold
from .shared_memory import check_slot_shape


class DeclarationBuild:
    """The declarations of :class:`~.build.Builder`: its methods, kept here by idea."""

    # -- kernel-level declarations ----------------------------------------------------------
    def literal(self, node: Optional[ast.expr]) -> object:
        """A Python literal from a compile-time expression (for the declaration rules shared
        with the language); what is not one comes as :class:`Unevaluated` (its source)."""
        if node is None:
            return None
        e, st = self.expr(node)
        e = self.checked_value(node, e, st)
        if st is not None and st.kind in ("buffer", "pipe", "handle"):
            # a shared buffer, pipe or handle is held as a static beside a None: it is no
            # literal (`tle.pipe(name=tle.gpu.alloc(...))`, `kv.reader(buf)`), which Python's
            # declaration rules refuse, not the None that leaves the option at its default
            return Unevaluated(ast.unparse(node))
        if isinstance(e, K.Const) and e.value is None:
            return None
        if isinstance(e, K.DType):
            return e.name
        v = fold(e)
        if v is None:
            return Unevaluated(ast.unparse(node))
        if isinstance(v, tuple) and isinstance(node, ast.List):
            return list(v)
        return v

    def alloc(self, node: ast.Call) -> tuple[K.Expr, Optional[Static]]:
        loc = self.loc(node)
        kw = {k.arg: k.value for k in node.keywords}
        shape_n = node.args[0] if node.args else kw.get("shape")
        dtype_n = node.args[1] if len(node.args) > 1 else kw.get("dtype")
        scope_n = node.args[2] if len(node.args) > 2 else kw.get("scope")
        for a in node.args[3:]:
            raise self.err("tle.gpu.alloc(shape, dtype, scope=tle.gpu.smem): too many arguments", a)
        if shape_n is None or dtype_n is None:
            raise self.err("tle.gpu.alloc(shape, dtype, scope=tle.gpu.smem): shape and dtype are "
                           "required", node, check="bad-alloc")
        shape: object
        if isinstance(shape_n, (ast.List, ast.Tuple)):
            dims: list = []
            symbolic: set[int] = set()
            for e in shape_n.elts:
                try:
                    v = self.value(e)
                except TleError as ex:
                    if ex.check != "unknown-name":
                        raise
                    symbolic.add(len(dims))
                    dims.append(ast.unparse(e))  # not known here: its source (a symbolic size)
                    continue
                c = fold(v)
                dims.append(c if isinstance(c, int) and not isinstance(c, bool) else
                            v.id if isinstance(v, K.Name) else ast.unparse(e))
            for i, (d, e) in enumerate(zip(dims, shape_n.elts)):
                # The lowering sizes shared memory from integers and the kernel's constexpr
                # parameters by name (lowering/plan.resolve_dim): a runtime value (`N`, a program
                # id), a name the kernel body binds or an expression of constexprs (`C * 1`) was
                # verified and then refused there; Triton cannot allocate the first two either.
                # (A name not defined here stays its source, a symbolic size, as before.)
                rebound = self.constexpr_rebound(d) if isinstance(d, str) else None
                if not isinstance(d, int) and i not in symbolic \
                        and (d not in self.constexpr_params or rebound is not None):
                    again = "" if rebound is None else (
                        f" (the kernel body binds '{d}' again" + (f" at line {rebound}"
                                                                  if rebound else "") + ")")
                    raise self.err(f"tle.gpu.alloc: dimension `{ast.unparse(e)}` is not a "
                                   f"compile-time integer the lowering can size{again}: write an "
                                   f"integer, a module constant, or a constexpr parameter of the "
                                   f"kernel by its name", e, check="bad-alloc")
            shape = dims
        else:
            shape = Unevaluated(ast.unparse(shape_n))
        dt = self.value(dtype_n)
        if isinstance(dt, K.DType):
            dtype: object = dt.name
        else:
            c = fold(dt)
            dtype = c if isinstance(c, str) else Unevaluated(ast.unparse(dtype_n))
        scope: object = smem
        if scope_n is not None:
            _, sst = self.expr(scope_n)
            if sst is not None and sst.kind == "mod" and sst.value == "tle_compiler.gpu.smem":
                scope = smem
            else:
                sv = fold(self.value(scope_n))
                scope = sv if sv is not None else Unevaluated(ast.unparse(scope_n))
        checked = validate_alloc(shape, dtype, scope, loc, symbolic_ok=True)
        buf = K.Buffer("", tuple(checked.shape), checked.dtype, loc)
        # Each evaluation allocates a buffer of its own, as Python runs the call each time: a
        # helper that declares a pipe (or returns a buffer) called twice makes two rings
        # (adversarial round 65: keyed by the call's node, `ka = mk("ka"); kb = mk("kb")` of
        # `def mk(nm): return tle.pipe(..., name=nm, t=tle.gpu.alloc(...))` read one buffer
        # behind both pipes and was refused, `aliased-buffer`, and a free buffer from a helper
        # that also made a pipe's field was read as that field, `field-buffer`)
        self.allocs += 1
        key = self.allocs
        self.buffers[key] = buf
        return K.Const(None, loc), Static("buffer", (key, None))

    def unused_buffer_name(self) -> str:
        """A name for a free buffer no variable names (`_buf1`, ...): no buffer's, and none a
        file read spells."""
        k = 1
        while f"_buf{k}" in self.free_buffers or any(f"_buf{k}" in ids for ids in self.spelt()):
            k += 1
        return f"_buf{k}"

    def name_buffer(self, st: Static, name: str, node: ast.AST) -> str:
        """Name the free buffer ``st`` after the variable ``name`` first bound to it; the name
        the KIR gives it. A name another buffer already holds (a helper's local `fb` of two
        calls, `fb` bound to a second alloc while `fa = fb` keeps the first, a helper's `fb`
        beside the kernel body's) is numbered, `fb_2`: one name for two buffers read them as
        one, whose partitions' accesses raced. And a buffer named already keeps its name: one
        reached again unnamed (`t = (tle.gpu.alloc(...),)`, then `fa = t[0]` and `fc = t[0]`,
        or a helper's returned tuple) got a second name, two buffers of the KIR, and a
        partition writing `fa` beside one reading `fc` was verified: a race (adversarial round
        65)."""
        key = st.value[0]
        if key in self.buffer_names:
            return self.buffer_names[key]
        if name in self.free_buffers:
            base, k = name, 2
            while f"{base}_{k}" in self.free_buffers or any(
                    f"{base}_{k}" in ids for ids in self.spelt()):
                k += 1
            name = f"{base}_{k}"
        buf = self.buffers[key]
        self.buffers[key] = K.Buffer(name, buf.shape, buf.dtype, buf.loc)
        self.free_buffers[name] = self.buffers[key]
        self.buffer_names[key] = name
        return name

    def declare_pipe(self, node: ast.Call, var: Optional[str]) -> K.PipeDecl:
        """``tle.pipe(...)`` at the top level of the kernel body: the declaration rules of the
        language (language/pipe.py: validate_pipe), checked with each argument's line."""
        if self.depth:
            raise self.err("tle.pipe must be declared at the top level of the kernel body (not "
                           "inside a loop, an if or a with)", node, check="bad-pipe")
        if node.args:
            raise self.err("tle.pipe takes keyword arguments only: tle.pipe(capacity=C, ..., "
                           "field=tle.gpu.alloc(...))", node.args[0], check="bad-pipe")
        opts: dict[str, object] = {"scope": "cta", "name": var, "readers": (), "one_shot": False,
                                   "barrier": "mbarrier"}
        arg_locs: dict[str, Loc] = {}
        fields: dict[str, object] = {}
        refs: dict[str, tuple[int, Optional[str], ast.keyword]] = {}
        capacity: object = None
        for kwn in node.keywords:
            if kwn.arg is None:
                raise self.err("tle.pipe: write each field as name=tle.gpu.alloc(...), not "
                               "**fields", kwn.value, check="bad-pipe")
            arg_locs[kwn.arg] = self.loc(kwn)
            if kwn.arg in ("capacity", "scope", "name", "readers", "one_shot", "barrier"):
                lit = self.literal(kwn.value)
                if kwn.arg == "capacity":
                    capacity = lit
                    if isinstance(lit, Unevaluated):
                        bound = self.capacity_of_constexprs(kwn.value)
                        capacity = lit if bound is None else bound
                elif kwn.arg == "name" and lit is None:
                    pass  # name=None: the variable's name
                else:
                    opts[kwn.arg] = lit
                continue
            _, st = self.expr(kwn.value)
            if st is not None and st.kind == "buffer":
                key, free_name = st.value
                fields[kwn.arg] = SharedBuffer(self.buffers[key].shape, self.buffers[key].dtype)
                refs[kwn.arg] = (key, free_name, kwn)
            else:
                fields[kwn.arg] = Unevaluated(ast.unparse(kwn.value))
        if capacity is None:
            raise self.err("tle.pipe: capacity= is required", node, check="bad-pipe")
        if opts["name"] is None:
            raise self.err("tle.pipe: name= is required when the pipe is not assigned to a "
                           "variable", node, check="bad-pipe")
        if fields:
            arg_locs.setdefault("fields", self.loc(node))
        checked = validate_pipe(capacity=capacity, scope=opts["scope"], name=opts["name"],
                                readers=opts["readers"], one_shot=opts["one_shot"], fields=fields,
                                loc=self.loc(node), arg_locs=arg_locs, barrier=opts["barrier"])
        if checked.name in self.pipes:
            first = self.pipes[checked.name].loc.line
            raise self.err(f"pipe '{checked.name}' is declared twice (first at line {first})",
                           node, check="bad-pipe")
        out: list[K.Buffer] = []
        for fname, _ in checked.fields:
            key, free_name, kwn = refs[fname]
            buf = self.buffers[key]
            owner = self.buffer_owner.get(key)
            if owner is not None:
                # one buffer behind two fields: two rings in the same shared memory, which no
                # barrier of either pipe orders
                what = f"`{ast.unparse(kwn.value)}` (the tle.gpu.alloc at line {buf.loc.line})"
                raise self.err(f"{what} is already field '{owner[1]}' of pipe '{owner[0]}' (line "
                               f"{owner[2].line}): each pipe field needs its own buffer",
                               kwn.value, check="aliased-buffer")
            self.buffer_owner[key] = (checked.name, fname, self.loc(kwn))
            if free_name is not None:
                self.free_buffers.pop(free_name, None)
            out.append(K.Buffer(fname, buf.shape, buf.dtype, self.loc(kwn)))  # the field's line
            check_slot_shape(checked.name, out[-1])  # power-of-two slot dims (shared_memory.py)
        decl = K.PipeDecl(checked.name, checked.capacity, tuple(out), checked.readers,
                          checked.one_shot, self.loc(node), named=checked.named)
        self.pipes[checked.name] = decl
        return decl

    def capacity_of_constexprs(self, node: ast.expr) -> Optional[object]:
        """A capacity that is no literal but reads constexpr parameters of the kernel
        (``tle.pipe(capacity=STAGES, ...)``, ``STAGES + 1``) is a number once they are: the
        reading stops with a check of SPECIALIZABLE, so that tle-dump (with DEFAULT_CONFIG's
        values or a --param) and a compile or launch (with the values it is given) read the kernel
        again specialised to them, where the capacity is an integer the declaration rules check.
        In a build that binds them, the capacity's value: a helper's parameter given a kernel
        constexpr (``mk(STAGES)`` declaring ``tle.pipe(capacity=C, ...)``) reads it by the
        kernel's name, which the build binds. Anything else is left to those rules (None; a
        runtime value: ``bad-pipe``)."""
        try:
            e = self.value(node)
        except TleError:
            return None
        # a name the kernel body bound again before the declaration (`STAGES = 1`, `STAGES =
        # N`) reads as the same KIR name as the parameter: it holds that binding's value, not
        # the constexpr's. Read as the parameter, the pipe was verified (and lowered) with the
        # constexpr's capacity where the kernel declares another
        # (a plain assignment ends its constexpr binding; the variable of a tl.static_range
        # loop keeps its last value after the loop: any binding of the kernel body before the
        # statement being built counts)
        read = [n.id for n in K.walk_expr(e) if isinstance(n, K.Name)]
        rebound = [(n, line) for n in read if (line := self.constexpr_rebound(n)) is not None]
        if rebound:
            name, line = rebound[0]
            where = f" (line {line})" if line else ""
            raise self.err(f"pipe capacity `{ast.unparse(node)}` reads '{name}', which the "
                           f"kernel body binds again{where}: the capacity would be that value, "
                           f"not constexpr {name}'s; read the constexpr parameter itself, or "
                           f"bind the other value to another name (`S: tl.constexpr = ...`)",
                           node, check="bad-pipe")
        names = tuple(dict.fromkeys(n for n in read if n in self.constexpr_params))
        if not names or any(n not in self.constexpr_params for n in read):  # a runtime value
            return None
        if all(type(self.bind.get(n)) is int for n in names):
            return fold(self.with_bound_constexprs(e))
        raise self.needs_constexprs(f"pipe capacity `{ast.unparse(node)}` is read from constexpr",
                                    names, ", verified and lowered", self.loc(node), names)

    def needs_constexprs(self, head: str, names: tuple, result: str, loc: Loc,
                         integers: Sequence[str]) -> CapacityOfConstexprs:
        """The stop of the generic reading where the kernel's constexprs ``names``, unbound in
        this build, decide what it reads (``head`` says what), so that tle-dump, a compile or a
        launch reads the kernel again with them bound (``result``: what that reading gives); the
        message says which of ``integers`` DEFAULT_CONFIG gives no integer. One wording for a
        pipe capacity (:meth:`capacity_of_constexprs`) and a handle or pipe a constexpr chooses
        (:meth:`undecided_choice`)."""
        config = self.frames[0].module.default_config
        unread = (f" (DEFAULT_CONFIG, line {config[1]}, is no literal dict: tle-dump reads "
                  f"no values from it)" if isinstance(config, tuple) and config
                  and config[0] == "error" else no_integer_in_config(config, self.kernel_name,
                                                                      integers))
        return CapacityOfConstexprs(
            f"{head} {', '.join(names)}: give {'it a value' if len(names) == 1 else 'them values'}"
            f" (DEFAULT_CONFIG's \"constexprs\", tle-dump --param {names[0]}=..., or a "
            f"launch's), with which the kernel is read specialised{result}{unread}",
            loc, names, self.kernel_name, config)

    def constexpr_rebound(self, name: str) -> Optional[int]:
        """For a constexpr parameter of the kernel that the kernel body has bound again before
        the statement being built (a plain assignment, which ends its constexpr binding, or the
        variable of a tl.static_range loop, which keeps its last value after the loop), the
        line of the first such binding (0 when unknown); None otherwise. Such a name reads as
        the same KIR name as the parameter, and holds the new value, not the constexpr's."""
        if name not in self.constexpr_params:
            return None
        kernel = self.frames[0]
        here = getattr(self, "kernel_stmt", (0, 0))
        before = [at for at in kernel.stores.get(name, ()) if at < here]
        if name in kernel.constexprs and not before:
            return None
        return min(before)[0] if before else 0

    def with_bound_constexprs(self, e: K.Expr) -> K.Expr:
        """``e`` (arithmetic, comparisons, Boolean operators) with each kernel constexpr this
        build binds replaced by its value."""
        if isinstance(e, K.Name) and e.id in self.constexpr_params \
                and type(self.bind.get(e.id)) is int:
            return K.Const(self.bind[e.id], e.loc)
        if isinstance(e, (K.BinOp, K.Compare)):
            return dataclasses.replace(e, lhs=self.with_bound_constexprs(e.lhs),
                                       rhs=self.with_bound_constexprs(e.rhs))
        if isinstance(e, K.UnaryOp):
            return dataclasses.replace(e, operand=self.with_bound_constexprs(e.operand))
        if isinstance(e, K.BoolOp):
            return dataclasses.replace(e, items=tuple(self.with_bound_constexprs(x)
                                                      for x in e.items))
        return e

    def make_reader(self, decl: K.PipeDecl, node: ast.Call) -> K.Handle:
        """``pipe.reader(name=None, fields=None)``: the language's rules (validate_reader), and
        every handle of one reader sees the same fields."""
        loc = self.loc(node)
        kw = {k.arg: k.value for k in node.keywords}
        if set(kw) - {"name", "fields"} or len(node.args) > 2 or (node.args and "name" in kw) \
                or (len(node.args) > 1 and "fields" in kw):
            raise self.err(f"{ast.unparse(node.func)}(name=None, fields=None): bad arguments", node)
        rname = self.literal(node.args[0] if node.args else kw.get("name"))
        fields = self.literal(node.args[1] if len(node.args) > 1 else kw.get("fields"))
        reader, view = validate_reader(decl_view(decl), rname, fields, loc)
        # the barriers are laid out per reader view, and a wider second handle would read fields
        # nobody waited for
        seen = view or tuple(b.name for b in decl.fields)
        first = self.reader_views.setdefault((decl.name, reader), (seen, loc))
        if set(first[0]) != set(seen):
            who = f"reader '{reader}'" if reader else "the reader"
            raise self.err(f"{who} of pipe '{decl.name}' has two handles with different views: "
                           f"fields ({', '.join(first[0])}) at line {first[1].line}, fields "
                           f"({', '.join(seen)}) at line {loc.line}; make every handle of a reader "
                           f"with the same fields=", node, check="inconsistent-view")
        return K.Handle(decl.name, "reader", reader, view, loc)
