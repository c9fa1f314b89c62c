"""The abstract interpreter of the protocol view: :class:`Walker` walks a partition's kernel IR
and records its pipe events, slot accesses, loops and conditions as Pipe IR statements.

Every KIR value is tracked as an abstract value (:mod:`.values`): integers affine in loop
variables and params (:class:`~.values.Aff`), kernel arguments and kernel-level integers that
are params, slots and views of them, and opaque data. Control flow is kept where it holds
events (``For`` with affine bounds, ``If`` on affine conditions) and rejected at its line
where it would make them depend on data. Integers carry Triton's semantics: ``//`` and ``%``
on runtime integers (loop variables of ``range``/``tl.range``, runtime kernel arguments, what
is computed from them) are C's truncating operations, on constexprs Python's. Its methods
are kept by idea in the walk_* mixins (conditions, arithmetic, calls, loops)."""

from __future__ import annotations

import ast
import re
from dataclasses import replace
from typing import Optional

from ..diagnostics import TleError
from ..ir import kernel as K
from ..ir.big_ints import ArithmeticRefusal
from ..ir.expr import Affine
from ..ir.nodes import (Access, CLOSED_FLAG, Event, Loc, READER_VERBS, Stmt, WRITER_VERBS,
                        walk_accesses)
from ..ir.promotion import INTEGER_TYPES
from ..language.gpu import SharedBuffer
from .load_types import NOT_NARROW, first_float_read, narrow_arithmetic
from .local_tensors import WalkRules
from .params import is_placeholder
from .partition_rules import bind_reshape
from .protocol_terms import (TL_DTYPE_NAMES, affine_like, box_hull, generated, holds_slot,
                             merge_views, read_backs_dropped, same_write, src, sure_writes,
                             views_of)
from .python_numbers import PythonNumbers
from .triton_rules import TritonRules
from .values import (Aff, BufferRef, Const, Data, HANDLES, KernelArg, PipeRef, Poison, ReaderRef,
                     SlotField, SlotV, Sym, TupleV, Value, WaitV, WriterRef)
from .walk_arithmetic import ArithmeticWalk
from .walk_calls import CallWalk
from .walk_conditions import ConditionWalk
from .walk_loops import LoopWalk


class Walker(ConditionWalk, ArithmeticWalk, CallWalk, LoopWalk, WalkRules, TritonRules,
              PythonNumbers):
    """Interprets KIR statements of one function body: the kernel prologue (``mode`` "kernel") or
    a partition (``mode`` "partition"), appending Pipe IR statements to ``out``."""

    def __init__(self, k: "Ctx", mode: str, env: Optional[dict[str, Value]] = None):
        self.k = k
        self.mode = mode
        self.env: dict[str, Value] = env if env is not None else {}
        self.out: list[Stmt] = []
        self.loop_vars: list[str] = []  # IR names of the enclosing loops, outermost first
        self.loop_ranges: dict[str, tuple[Affine, Affine, int]] = {}
        #: the shape (:meth:`block_dims`) of each value a name was bound to, by the id of its
        #: expression, as it stood where the assignment ran: the names in that expression are
        #: read in the scope of the assignment, not in the one a later use sees (`y = o + 1`,
        #: then `o = tl.arange(0, 32)`, leaves `y` of `o`'s first shape)
        self.bound_dims: dict[int, tuple[tuple, bool]] = {}
        #: likewise the kind (:meth:`operand_type`) of each value a name was bound to
        self.bound_kinds: dict[int, Optional[str]] = {}
        # id(a value a name is bound to) -> (the value, its kind where it was bound:
        # Walker.type_known), read by the type check at a runtime `if` or a loop (same_types)
        self.types_bound: dict[int, tuple] = {}
        #: the Triton type of each range / tl.range loop variable whose type is known (its
        #: bounds': TritonRules.range_variable_type), by its IR name; and of a loop variable the
        #: walk holds as data (bounds it does not model), by the id of its node (with the node)
        self.loop_types: dict[str, str] = {}
        self.loop_nodes: dict[int, tuple] = {}
        #: names the loops being walked carry (Poison in their bodies) -> (the environment
        #: before the loop, the value there): their type inside is the one they had before,
        #: which Triton requires them to keep (TritonRules.carried_type)
        self.carried_before: dict[str, tuple] = {}
        self.no_events: Optional[str] = None  # why an event here would be conditional
        # (loop, message, check) of an enclosing loop that may not contain events
        self.bad_loop: Optional[tuple[K.Stmt, str, str]] = None
        self.depth = 0  # compound-statement nesting
        self.partition: Optional[str] = None
        self.merge_node: Optional[K.Stmt] = None
        self.last_top: Optional[K.Stmt] = None  # the last top-level statement of the body
        self.early_return: Optional[K.Return] = None  # a return before it
        self.events_at_return = 0  # the kernel's event count when early_return was reached
        # comparisons truth_kind is reading through names bound to them (a guard against a name
        # bound to a comparison of itself, `b = b < N`)
        self._truth_names: set[int] = set()
        # names a partition (or a helper it calls) bound by an assignment to a compile-time
        # number: Triton 3.6 holds them as tensors (visit_Assign converts the constant), so
        # `and` / `or` / `not` bitcast them as they do a runtime integer (local_tensors.WalkRules)
        self.tensor_consts: set[str] = set()
        #: tl.static_range variables -> the value their loop binds (compile_time_sample)
        self.static_loop_vars: dict[str, Value] = {}
        # those of them the builder assigned (a helper's parameter bound to its argument)
        self.generated_consts: set[str] = set()
        # of those bound to a tuple written in a call (`(b, 1)`), the index paths of the items
        # that are tensors (the others are constexprs); a name absent here has all its items so
        self.tensor_item_paths: dict[str, frozenset] = {}
        # names last assigned a float (Walker.float_part): Triton's loops refuse them as bounds
        self.float_names: set[str] = set()
        # names last assigned a bool (Walker.bool_part): Triton sign-extends them as loop bounds
        self.bool_names: set[str] = set()
        # names the partition's body assigns more than once (the builder folds none of them)
        self.multi_assigned: frozenset[str] = frozenset()
        # names Triton holds as Python numbers though the reading has their value (a constexpr
        # the kernel is read specialised to, a partition parameter given one) until assigned:
        # python_number reads them as it reads an unbound constexpr argument
        self.number_names: set[str] = set()

    def err(self, message: str, node, check: str = "frontend") -> TleError:
        return TleError(message, node.loc, check=check)

    def src(self, e) -> str:
        return src(e, self.k.names, self.k.temps, self.k.source)

    # -- affine views of values -----------------------------------------------------------------
    def param_of(self, v: Data) -> str:
        hint = v.hint or (self.src(v.node) if v.node is not None else "P")
        loc = v.node.loc if v.node is not None else Loc(self.k.path, 0)
        return self.k.reserve_pure(v.key, hint, loc)

    def as_aff(self, v: Value) -> Optional[Affine]:
        if isinstance(v, Aff):
            return v.expr
        if isinstance(v, (KernelArg, Sym)):
            return Affine.of(v.param)
        if isinstance(v, Const) and isinstance(v.value, bool):
            return Affine.of(int(v.value))
        if isinstance(v, Data) and v.key is not None:
            return Affine.of(self.param_of(v))
        return None

    def key_of(self, v: Value) -> Optional[str]:
        if isinstance(v, Aff):
            if any(not is_placeholder(x) for x in v.expr.variables):
                return None
            return str(v.expr)
        if isinstance(v, (KernelArg, Sym)):
            return v.param
        if isinstance(v, Data):
            return v.key
        if isinstance(v, Const) and isinstance(v.value, (bool, int)):
            return str(int(v.value))
        return None

    def affine(self, v: Value, node, what: str) -> Affine:
        a = self.as_aff(v)
        if a is not None:
            return a
        text = self.src(node)
        if isinstance(v, Poison):
            detail = f"'{self.k.names.py(v.name)}' {v.reason}"
        elif isinstance(v, Data) and v.why:
            detail = v.why
        elif isinstance(v, Data):
            detail = "it is a data value, not an integer known from loop variables and params"
        else:
            detail = f"it is not an integer (it is {type(v).__name__})"
        raise self.err(f"{what} must be affine in loop variables and kernel params, got "
                       f"`{text}`: {detail}", node, check="non-affine")

    def const_int(self, v: Value) -> Optional[int]:
        a = self.as_aff(v) if isinstance(v, Aff) else None
        return a.const if a is not None and a.is_const else None

    @staticmethod
    def is_runtime(v: Value) -> bool:
        if isinstance(v, KernelArg):
            return not v.constexpr
        if isinstance(v, (Aff, Sym, Data)):
            return v.runtime
        return False

    # -- sign proofs ----------------------------------------------------------------------------
    def bounds(self, e: Affine, depth: int = 0) -> tuple[Optional[int], Optional[int]]:
        lo: Optional[int] = e.const
        hi: Optional[int] = e.const
        for var, c in e.terms:
            vlo, vhi = self.var_bounds(var, depth)
            if c < 0:
                vlo, vhi = vhi, vlo
            lo = None if lo is None or vlo is None else lo + c * vlo
            hi = None if hi is None or vhi is None else hi + c * vhi
        return lo, hi

    def var_bounds(self, var: str, depth: int) -> tuple[Optional[int], Optional[int]]:
        if depth > 64:  # pragma: no cover - loop nests are far shallower
            return None, None
        rng = self.loop_ranges.get(var)
        if rng is not None:
            start, stop, step = rng
            if step > 0:
                lo, hi = self.bounds(start, depth + 1)[0], self.bounds(stop, depth + 1)[1]
                return lo, None if hi is None else hi - 1
            lo, hi = self.bounds(stop, depth + 1)[0], self.bounds(start, depth + 1)[1]
            return None if lo is None else lo + 1, hi
        if is_placeholder(var):
            return self.k.params.domain(var)
        return None, None

    def nonneg(self, e: Affine) -> bool:
        lo = self.bounds(e)[0]
        return lo is not None and lo >= 0

    # -- expressions ----------------------------------------------------------------------------
    def eval(self, e: K.Expr) -> Value:
        try:
            value = getattr(self, f"_e_{type(e).__name__}")(e)
        except ArithmeticRefusal as wide:  # constexpr arithmetic refused (ir/big_ints): here
            raise wide.at(e.loc) from None
        if self.k.source.returned(e) and self.python_number(e):
            # a jit function's returned Python number (an inlined helper's `return a << 70`):
            # Triton's visit_Return makes a tensor of it, whatever the caller computes with it
            # (`h(C) * 0 + 1`); the builder refuses one it folds, this one it computes from a
            # constexpr (adversarial round 29)
            self.made_tensor(e, lambda: f"`{self.src(e)}`, what a jit function returns,", e)
        return value

    def eval_guarded(self, e: K.Expr, why: str) -> Value:
        saved = self.no_events
        self.no_events = self.no_events or why
        try:
            return self.eval(e)
        finally:
            self.no_events = saved

    def _e_Const(self, e: K.Const) -> Value:
        v = e.value
        if isinstance(v, int) and not isinstance(v, bool):
            return Aff(Affine.of(v))
        return Const(v)

    def _e_Name(self, e: K.Name) -> Value:
        v = self.env.get(e.id)
        return v if v is not None else Data(node=e)

    def _e_Global(self, e: K.Global) -> Value:
        v = e.value
        if isinstance(v, bool):
            return Aff(Affine.of(int(v)))
        if isinstance(v, int):
            return Aff(Affine.of(v))
        return Data(node=e)

    def _e_DType(self, e: K.DType) -> Value:
        return Const(e.name)

    def _e_TupleExpr(self, e: K.TupleExpr) -> Value:
        return TupleV(tuple(self.eval(x) for x in e.items))

    def _e_Subscript(self, e: K.Subscript) -> Value:
        base = self.eval(e.value)
        if isinstance(base, TupleV) and len(e.index) == 1 and isinstance(e.index[0], int):
            i = e.index[0]
            if -len(base.items) <= i < len(base.items):
                return base.items[i]
        if isinstance(base, HANDLES):
            raise self.err(f"`{self.src(e.value)}` is a pipe handle and cannot be indexed", e)
        if isinstance(base, Poison) and base.slot:
            return base
        ints = [i for i in e.index if isinstance(i, int) and not isinstance(i, bool)]
        if isinstance(base, Data) and base.shared and not (ints and base.view == "loaded"):
            # (a part of a shared buffer or slot field: refused where it is used, by the rule
            # of its use, `local_ptr` or a TMA copy; a tile loaded from one is a register
            # tensor, which an integer index is refused of below)
            return replace(base, node=e, key=None, hint=None, why=None)
        if ints and (isinstance(e.value, K.SlotField) and e.value.field == "shape"
                     or isinstance(base, Data) and isinstance(base.node, K.SlotField)
                     and base.node.field == "shape") \
                and not isinstance(base, (TupleV, *HANDLES)):
            # `t.shape[1]` of a register tensor: a compile-time number in Triton, data here;
            # `s[1]` of `s = t.shape` alike (a tensor there: the lowering spells it so)
            return Data(node=e, fields=base.fields if isinstance(base, Data) else frozenset())
        if ints and isinstance(e.value, K.Op) and any(
                k == "return_indices" and not (isinstance(v, K.Const) and not v.value)
                for k, v in e.value.kwargs):
            # tl.max / tl.min(..., return_indices=True) is a (values, indices) pair in Triton;
            # its items are data here (the lowering refuses the keyword at its line)
            return Data(node=e, fields=base.fields if isinstance(base, Data) else frozenset())
        if ints and not isinstance(base, Poison):
            # an integer index picks a tuple's item (above) and nothing else: Triton 3.6
            # refuses it on a tensor or a scalar ("unsupported tensor index"), Python on an
            # integer, and the lowering on anything but a tuple; it was verified and then not
            # lowered
            what = (f"index {ints[0]} is out of range for a tuple of {len(base.items)} items"
                    if isinstance(base, TupleV) else
                    f"`{self.src(e.value)}` is no tuple (Triton 3.6 refuses an integer index of "
                    f"a tensor or a scalar: only `x[:, None]`-style expansions)")
            raise self.err(f"`{self.src(e)}`: {what}", e, check="unsupported-expression")
        return Data(node=e, fields=base.fields if isinstance(base, Data) else frozenset())

    def check_slot_store(self, ptr: Data, node: K.Op) -> None:
        """A ``tl.store`` into a whole slot field (``local_ptr(slot.f)``) stores a tile of the
        field's slot shape and dtype: the lowering writes it with Gluon's shared-memory store,
        which takes no other shape (Triton's own store would broadcast; Gluon's compile
        refuses), so a tile whose shape the frontend knows and that differs is refused here, at
        the store, instead of verified and then not compiled. A tile of another dtype the
        frontend knows is refused too, asking for the cast (Triton's store would convert; the
        language has the conversion written out, so that a narrowing one is seen); one whose
        dtype it does not follow (a tile loaded from global memory where no DEFAULT_CONFIG
        signature types its pointer) the lowering converts, as tl.store does."""
        value = node.args[1] if len(node.args) > 1 else node.kw("value")
        if value is None or len(ptr.slots) != 1 or ptr.buffers or ptr.lost:
            return
        if not (isinstance(ptr.node, K.Op) and ptr.node.name == "tle.gpu.local_ptr"):
            return  # a pointer computed from the slot's (a scatter): its shape is its own
        (sf,) = ptr.slots
        buf = dict(self.k.pipes[sf.slot.pipe].decl.fields).get(sf.field)
        if buf is None:
            return
        slot = list(self.slot_dims(buf))
        where = f"field '{sf.field}' of pipe '{sf.slot.pipe}'"
        dims, exact = self.block_dims(value)
        if not (exact and dims):
            loaded = self.loaded_slot_shape(value)
            if loaded is not None:
                dims, exact = loaded, True
        if exact and dims and all(isinstance(d, int) for d in (*dims, *slot)) \
                and list(dims) != slot:
            shape = ", ".join(map(str, dims))
            raise self.err(f"`{self.src(node)}` stores a tile of shape [{shape}] "
                           f"into {where}, whose slot is [{', '.join(map(str, slot))}]: the "
                           f"lowered shared-memory store takes the slot's shape only (Gluon "
                           f"refuses the compile); store a tile of the slot's shape", node,
                           check="bad-store")
        dt = self.tile_dtype(value)
        if dt is not None and (dims or not exact) and dt != buf.dtype:
            raise self.err(f"`{self.src(node)}` stores a tile of {dt} into {where}, which holds "
                           f"{buf.dtype}: a store into a slot field stores the field's dtype "
                           f"(where Triton's tl.store would convert, the conversion is written "
                           f"out, so that a narrowing one is seen); cast it first (`.to(tl."
                           f"{TL_DTYPE_NAMES.get(buf.dtype, buf.dtype)})`)", node,
                           check="bad-store")

    def loaded_slot_shape(self, e: K.Expr) -> Optional[tuple]:
        """The slot shape of the field a tile was loaded from whole (`t =
        tl.load(tle.gpu.local_ptr(res.slot.a))`, or that load itself), its constexpr names
        bound where the read binds them; None elsewhere."""
        if isinstance(e, K.Name):
            v = self.env.get(e.id)
            if not (isinstance(v, Data) and v.view == "loaded" and len(v.slots) == 1
                    and not v.buffers and isinstance(v.node, K.Op) and v.node.name == "tl.load"):
                return None
            e = v.node
        buf = self.loaded_field(e)
        if buf is None:
            return None
        dims = self.slot_dims(buf)
        return dims if all(isinstance(d, int) for d in dims) else None

    def slot_dims(self, buf) -> tuple:
        """A pipe field's slot shape (its dimensions after the capacity), the constexpr names
        bound where the read binds them."""
        return tuple(self.k.bind.get(d, d) if isinstance(d, str) else d for d in buf.shape[1:])

    def loaded_field(self, e: K.Expr):
        """The pipe field (its buffer declaration) ``e`` loads whole, where ``e`` is
        ``tl.load(tle.gpu.local_ptr(res.slot.f))``; None elsewhere."""
        if not (isinstance(e, K.Op) and e.name == "tl.load" and e.args and not e.kwargs):
            return None
        ptr = e.args[0]
        if not (isinstance(ptr, K.Op) and ptr.name == "tle.gpu.local_ptr" and ptr.args
                and isinstance(ptr.args[0], K.SlotField)):
            return None
        src = self.eval_quiet(ptr.args[0])
        if not (isinstance(src, Data) and len(src.slots) == 1 and not src.buffers):
            return None
        (sf,) = src.slots
        return dict(self.k.pipes[sf.slot.pipe].decl.fields).get(sf.field)

    def tile_dtype(self, e: K.Expr, seen: frozenset = frozenset()) -> Optional[str]:
        """The element type of tile ``e`` where the frontend surely knows it: a cast
        (``x.to(tl.bfloat16)``), ``tl.zeros`` / ``tl.full`` of a dtype, a load of a slot field,
        and through names, ``tl.where`` / ``tl.maximum`` / ``tl.minimum`` and arithmetic whose
        operands have the same known type (or a Python number beside a float tile). None
        elsewhere."""
        if isinstance(e, K.Name):
            v = self.env.get(e.id)
            node = v.node if isinstance(v, Data) and not v.shared else None
            if isinstance(v, Data) and v.view == "loaded" and len(v.slots) == 1 and \
                    not v.buffers and isinstance(v.node, K.Op) and v.node.name == "tl.load":
                node = v.node
            elif isinstance(v, Data) and v.view == "loaded" and not v.lost and not (
                    isinstance(v.node, K.Op) and v.node.name == "tl.load"):
                # a value computed in registers from a loaded tile (`x = t.to(tl.float16)`):
                # its type is its expression's, as for any other tile (adversarial round 36)
                node = v.node
            if node is None or id(node) in seen or isinstance(node, K.Name):
                return None
            return self.tile_dtype(node, seen | {id(node)})
        if isinstance(e, K.BinOp) and e.op in ("+", "-", "*"):
            a, b = (self.tile_dtype(x, seen) for x in (e.lhs, e.rhs))
            if a is not None and a == b:
                return a
            for t, other, other_t in ((a, e.rhs, b), (b, e.lhs, a)):
                if t is not None and t.startswith(("fp", "bf")) and isinstance(other, K.Const) \
                        and isinstance(other.value, (int, float)) \
                        and not isinstance(other.value, bool):
                    return t
                if t == "int64" and (isinstance(other, K.Const) and type(other.value) is int
                                     or isinstance(other, K.Name) and other_t in (None, "int32")
                                     and self.operand_type(other) == "int"):
                    # Triton promotes an i32 (or a Python int) beside an int64 to int64: `u +
                    # N.cast(tl.int64)` is one (adversarial round 37)
                    return t
            # integers of two types, or beside a name of a uint32 loop variable: Triton's
            # promotion (`u + N.to(tl.uint32)` of an int32 `u` is a uint32: adversarial round 39)
            return self.binop_int_type(e, a, b, seen)
        if isinstance(e, K.BinOp):
            a, b = (self.tile_dtype(x, seen) for x in (e.lhs, e.rhs))
            if a is not None and a == b and a in INTEGER_TYPES and e.op in self.INT_RESULT_OPS:
                return a
            return self.binop_int_type(e, a, b, seen)
        if isinstance(e, K.UnaryOp) and e.op in ("-", "+", "~"):
            # Triton's minus is `0 - x` in x's type, invert `x ^ -1`: the operand's type
            # (`u = -N.to(tl.uint32)` in a loop carrying an int32 `u`: adversarial round 39)
            return self.tile_dtype(e.operand, seen)
        if not isinstance(e, K.Op):
            return None
        if e.name in ("to", "tl.cast"):
            # `x.cast(tl.float16)` / `tl.cast(x, ...)` too: `x = t.cast(tl.float16)` made
            # `tl.exp2(x)` verified (adversarial round 37)
            dt = e.args[1] if len(e.args) > 1 else e.kw("dtype")
            return dt.name if isinstance(dt, K.DType) else None
        if e.name in ("tl.reshape", "tl.ravel"):  # the operand's elements, in another shape
            operand = bind_reshape(e.name, e.args, e.kwargs)[0]
            return self.tile_dtype(operand, seen) if operand is not None else None
        if e.name in ("tl.zeros", "tl.full"):
            at = 1 if e.name == "tl.zeros" else 2
            dt = e.args[at] if len(e.args) > at else e.kw("dtype")
            return dt.name if isinstance(dt, K.DType) else None
        if e.name in ("tl.where", "tl.maximum", "tl.minimum"):
            items = e.args[1:] if e.name == "tl.where" else e.args
            kinds = {self.tile_dtype(x, seen) for x in items}
            if len(kinds) == 1 and len(items) == 2:
                return kinds.pop()
            if len(items) == 2 and kinds & INTEGER_TYPES:
                # integers of two types: promoted as an operator's operands are
                # (binary_op_type_checking_impl): `tl.where(c, N, N.to(tl.uint32))` is a uint32
                t = self.scalar_int_type(K.BinOp("+", items[0], items[1], e.loc), seen=seen)
                return t if t in INTEGER_TYPES else None
            return None
        if e.name == "tl.dot" and len(e.args) >= 2:
            # Triton 3.6's semantic.dot: int32 for integer operands and fp32 for fp32 or bf16
            # ones, whatever out_dtype says (an int8 dot with out_dtype=tl.float16 is an int32
            # tensor: adversarial round 28), else out_dtype (fp32 unless given); an accumulator
            # must have that type (TritonRules.dot_rule)
            ops = {self.tile_dtype(x, seen) for x in e.args[:2]}
            if None in ops:
                return None
            if ops <= {"int8", "uint8"}:
                return "int32"
            if ops <= {"fp32", "bf16"}:
                return "fp32"
            out = e.kw("out_dtype")
            return "fp32" if out is None else out.name if isinstance(out, K.DType) else None
        if e.name == "tl.load" and e.args and self.k.config_signature:
            # a global load: the element type of the one pointer argument (as the
            # DEFAULT_CONFIG signature types it) its pointer is computed from
            args = set()
            for x in K.walk_expr(e.args[0]):
                v = self.env.get(x.id) if isinstance(x, K.Name) else None
                if isinstance(v, KernelArg):
                    args.add(v.name)
                elif isinstance(v, Aff):
                    args.update(self.k.params.slot(ph).arg or "?" for ph in v.expr.variables
                                if is_placeholder(ph))
                elif isinstance(v, Data) and v.shared:
                    args.add("?")
            sig = self.k.config_signature
            ptrs = [a for a in args if sig.get(a, "").startswith("*")]
            if "?" not in args and len(ptrs) == 1:
                dt = element_dtype(sig[ptrs[0]])
                if dt is not None:
                    return dt
        buf = self.loaded_field(e)
        return buf.dtype if buf is not None else None

    def eval_quiet(self, e: K.Expr) -> Optional[Value]:
        """``e`` evaluated again without recording anything (a slot field's view); None when
        that raises."""
        mark = len(self.out)
        try:
            return self.eval(e)
        except TleError:
            return None
        finally:
            del self.out[mark:]

    def note_function_domain(self, key: str, name: str, operands: list[Affine],
                             rt: bool = False, wide: bool = False) -> None:
        """The values ``name(*operands)`` can take (min / max / abs), from the bounds of its
        operands: ``NP = tl.maximum(X - Y, 0)`` is never negative, so NP's domain is NP >= 0
        and `--param NP=-3` is refused as outside it, instead of a verdict for a value no launch
        computes (and the verifier checks only the values the kernel can compute)."""
        if name not in ("min", "max", "minimum", "maximum", "abs", "clamp"):
            return
        bounds = [self.bounds(o) for o in operands]
        i32 = rt and not wide
        if i32:
            # an operand computed in i32 that may wrap there is any i32 value (`tl.maximum(N +
            # 10, 5)` at N = 2^31 - 1 is 5): its bounds are those of i32 too
            bounds = [box_hull(b, (self.I32_MIN, self.I32_MAX)) if self.may_wrap(o) else b
                      for b, o in zip(bounds, operands)]
        if name == "clamp" and len(bounds) == 3:  # clamp(x, lo, hi): between lo's and hi's
            dom = (bounds[1][0], bounds[2][1])
        elif name == "abs":
            lo, hi = bounds[0]
            if lo is not None and lo >= 0:
                dom = (lo, hi)
            elif hi is not None and hi <= 0:
                dom = (-hi, None if lo is None else -lo)
            else:
                dom = (0, None if lo is None or hi is None else max(-lo, hi))
            if rt:
                # two's complement abs of the width's minimum is that minimum (abs(-2^31) is
                # -2^31 in i32): where the operand may be it, so may the result, and the
                # domain must hold it (it then also holds the values between, which no launch
                # computes; a fault found only there is not called a witness, passes/witness.py)
                floor = -2 ** 63 if wide else self.I32_MIN
                if lo is None or lo <= floor:
                    dom = (floor, dom[1])
        else:
            los, his = [b[0] for b in bounds], [b[1] for b in bounds]
            if name in ("max", "maximum"):
                known_lo = [x for x in los if x is not None]
                dom = (max(known_lo) if known_lo else None,
                       max(his) if None not in his else None)
            else:
                known_hi = [x for x in his if x is not None]
                dom = (min(los) if None not in los else None,
                       min(known_hi) if known_hi else None)
        self.narrow_known(key, dom)

    # -- attributes -----------------------------------------------------------------------------
    def _e_SlotField(self, e: K.SlotField) -> Value:
        return self.attribute(self.eval(e.slot), e.field, e)

    def _e_ResultSlot(self, e: K.ResultSlot) -> Value:
        return self.attribute(self.eval(e.result), "slot", e)

    def _e_IsClosed(self, e: K.IsClosed) -> Value:
        return self.attribute(self.eval(e.result), "is_closed", e)

    def attribute(self, base: Value, attr: str, node) -> Value:
        if isinstance(base, SlotV):
            if attr in base.fields:
                fields = frozenset({(base.pipe, attr)}) if base.role == "reader" else frozenset()
                return Data(node=node, fields=fields, view="buffer",
                            slots=frozenset({SlotField(base, attr)}))
            decl = self.k.pipes[base.pipe].decl
            if attr in decl.field_names:
                raise self.err(f"this reader of pipe '{base.pipe}' sees only fields "
                               f"({', '.join(base.fields)}): `{self.src(node)}` is outside its "
                               f"view", node, check="outside-view")
            raise self.err(f"pipe '{base.pipe}' has no field '{attr}' (fields: "
                           f"{', '.join(decl.field_names)})", node, check="unknown-field")
        if isinstance(base, WaitV):
            if attr == "slot":
                return base.slot
            if attr == "is_closed":
                # the flag lives in the slot (every acquire clears it, a close sets it) and the
                # lowering loads it here: a read of the slot, legal only inside the wait's window
                slot = base.slot
                self.record(Access("reader", slot.pipe, CLOSED_FLAG, slot.index, slot.reader,
                                   "is_closed", node.loc))
                return Data(node=node, closed_of=slot)
            raise self.err(f"the result of wait() has .slot and .is_closed, not .{attr}", node)
        if isinstance(base, Poison):
            if base.slot and attr == "slot":
                return base
            if base.slot and attr == "is_closed":
                raise self.err(f"cannot tell which slot `{self.src(node)}` reads its closed flag "
                               f"from: `{self.k.names.py(base.name)}` {base.reason}", node,
                               check="unknown-slot")
            if base.slot and attr != "is_closed":
                return Data(node=node, view="buffer",
                            lost=f"`{self.k.names.py(base.name)}` {base.reason}")
            return Data(node=node)
        if isinstance(base, Data) and attr == "T":
            if base.shared:
                return replace(base, node=node, key=None, hint=None, why=None)
            return Data(node=node, fields=base.fields)
        return Data(node=node)

    # -- pipes, handles, buffers ----------------------------------------------------------------
    def _e_PipeRef(self, e: K.PipeRef) -> Value:
        return PipeRef(self.k.pipes[e.pipe].decl)

    def _e_Handle(self, e: K.Handle) -> Value:
        if e.side == "writer":
            return WriterRef(e.pipe)
        return ReaderRef(e.pipe, e.reader, e.view)

    def _e_BufferRef(self, e: K.BufferRef) -> Value:
        buf = self.k.kir_buffers.get(e.name)
        if buf is None:
            return Data(node=e)
        return BufferRef(SharedBuffer(tuple(buf.shape), buf.dtype), e.name, buf.loc)

    def _e_Event(self, e: K.Event) -> Value:
        index_v = self.eval(e.index)
        recv = self._e_Handle(e.handle)
        call = self.k.source.call(e.loc)
        who = ast.unparse(call.func.value) if call is not None and \
            isinstance(call.func, ast.Attribute) else self.handle_text(e.handle)
        verbs = WRITER_VERBS if isinstance(recv, WriterRef) else READER_VERBS
        side = "writer" if isinstance(recv, WriterRef) else "reader"
        if e.verb not in verbs:
            other = "a reader" if e.verb in READER_VERBS else "a writer"
            raise self.err(f"`{who}` is the {side} of pipe '{e.handle.pipe}': it has "
                           f"{', '.join(verbs)}, not {e.verb} ('{e.verb}' is a verb of {other})",
                           e, check="bad-event")
        if self.mode == "kernel":
            raise self.err(f"`{who}.{e.verb}(...)`: pipe events belong in partition functions, "
                           f"not in the kernel body", e, check="bad-event")
        if self.no_events:
            raise self.err(f"`{who}.{e.verb}(...)` inside {self.no_events}: the pipe events of a "
                           f"partition must not depend on data; use an `if` on loop variables "
                           f"and params", e, check="conditional-event")
        if self.bad_loop is not None:
            loop, message, check = self.bad_loop
            raise self.err(message, loop, check=check)
        index = self.affine(index_v, e.index, f"index of {who}.{e.verb}")
        read = first_float_read(self, (e.index,))
        if read is not None:
            self.k.bool_others.setdefault(read, e.loc)  # (an int1 zero-extended)
        narrow = narrow_arithmetic(self, e.index)
        if narrow is not None:
            # (an index computed in a narrow load's own type may wrap: `p + n * 4` of an int8
            # n = 63 is p - 4, where `p + n * 2 + n * 2` is p + 252)
            self.note_signed_reading(e.loc, narrow[0], self.narrow_what(
                narrow, f"the index of {who}.{e.verb}"), NOT_NARROW)
        if isinstance(recv, WriterRef):
            ev = Event(e.verb, recv.pipe, index, None, None, e.loc)
        else:
            ev = Event(e.verb, recv.pipe, index, recv.reader, recv.fields, e.loc)
        self.out.append(ev)
        self.k.events += 1
        decl = self.k.pipes[recv.pipe].decl
        if e.verb == "acquire":
            return SlotV(recv.pipe, decl.field_names, "writer", index)
        if e.verb == "wait":
            return WaitV(SlotV(recv.pipe, recv.fields or decl.field_names, "reader", index,
                               recv.reader))
        return Const(None)

    @staticmethod
    def handle_text(h: K.Handle) -> str:
        if h.side == "writer":
            return f"{h.pipe}.writer()"
        return f"{h.pipe}.reader({repr(h.reader) if h.reader else ''})"

    # -- statements -----------------------------------------------------------------------------
    def exec_block(self, body: tuple) -> list[Stmt]:
        saved, self.out = self.out, []
        try:
            for s in body:
                self.exec_stmt(s)
            return self.out
        finally:
            self.out = saved

    def exec_stmt(self, s: K.Stmt) -> None:
        try:
            getattr(self, f"_s_{type(s).__name__}")(s)
        except ArithmeticRefusal as wide:
            raise wide.at(s.loc) from None

    def _s_Eval(self, s: K.Eval) -> None:
        self.eval(s.value)

    def _s_Assign(self, s: K.Assign) -> None:
        v = self.eval(s.value)
        if not generated(s) or self.k.source.stmt(s.loc, ast.AugAssign) is not None:
            # (an augmented assignment of a name the builder folded, `x <<= 70` of `x:
            # tl.constexpr = 1`, reads as `x = 1 << 70`, located at its value: Triton's
            # visit_AugAssign is a plain assignment, making a tensor of it; adversarial round 29)
            self.plain_number_assignment(s)
        self.number_names.discard(s.target)
        if isinstance(v, Data) and v.node is not None and not isinstance(v.node, K.Name):
            self.bound_dims[id(v.node)] = self.block_dims(v.node)
            self.bound_kinds[id(v.node)] = self.operand_type(v.node)
        if self.float_part(s.value) is not None:
            self.float_names.add(s.target)
            if isinstance(v, Data):  # a kernel-level float passed on to a partition stays one
                v = replace(v, floating=True)
        else:
            self.float_names.discard(s.target)
        if self.bool_part(s.value) is not None:
            self.bool_names.add(s.target)
        else:
            self.bool_names.discard(s.target)
        # the lowered Gluon assigns a generated name too (a helper's parameter bound to `C - 4`):
        # a tensor of a number there as a source assignment makes one
        self.note_assignment(s, v, generated(s))
        if generated(s):
            self.k.temps[s.target] = s.value
            self.env[s.target] = v
            return
        known = self.type_known(s.value)
        if isinstance(v, Aff):
            # an integer computed in a narrow load's own type (`m = n + 1`), which the affine
            # value no longer shows: a loop bound, condition or index reading it may wrap
            narrow = narrow_arithmetic(self, s.value)
            if narrow is not None:
                self.k.narrow_values.setdefault(v.expr, narrow)
        self.bind_name(s.target, v, s)
        bound = self.env.get(s.target)
        if bound is not None:
            self.types_bound[id(bound)] = (bound, known)
        if isinstance(s.value, K.TupleExpr) and isinstance(bound, TupleV) \
                and len(bound.items) == len(s.value.items):
            # each item's type as written (`t = (N > 0, 1)`: an int1 and an int32), which the
            # builder's item variables (`t__0 = t[0]`, generated) hold at a join: Triton 3.6
            # checks a tuple's items there ("initial value for `t` is of type ['int1[]',
            # 'int32[]'], but the then block redefines it"; verified until adversarial round 57)
            for item, expr in zip(bound.items, s.value.items):
                if item is not None and id(item) not in self.types_bound:
                    self.types_bound[id(item)] = (item, self.type_known(expr))

    def bind_name(self, name: str, value: Value, node) -> None:
        if isinstance(value, Data) and value.key is not None and value.hint is None:
            # the value named keeps whether Triton computes it at run time: `n = tl.cdiv(N,
            # 64)` then `(n - 100) // 8` is C's truncating division, as written in place; it
            # was read as Python's flooring one (a reader's trip count one short of the GPU's:
            # a hang verified), and `8 * n` as a compile-time number (`pid // g` refused)
            value = Data(node=value.node, fields=value.fields, key=value.key,
                         hint=self.k.names.py(name), why=value.why, wide=value.wide,
                         runtime=value.runtime)
        self.env[name] = value

    # -- merging environments -------------------------------------------------------------------
    def merge_value(self, name: str, a: Optional[Value], b: Optional[Value], reason: str,
                    slot_reason: Optional[str] = None) -> Optional[Value]:
        if isinstance(a, Aff) and isinstance(b, Aff) and a == b:
            return Aff(a.expr, a.runtime or b.runtime, a.wide)
        if a == b:
            return a
        if a is None and b is None:
            return None
        why = slot_reason or reason
        if (a is None or isinstance(a, Data) and not affine_like(a)) and \
                (b is None or isinstance(b, Data) and not affine_like(b)):
            return merge_views(a, b, f"`{self.k.names.py(name)}` {why}")
        slot = holds_slot(a) or holds_slot(b)
        for p in (a, b):
            if isinstance(p, Poison):
                return replace(p, slot=True) if slot and not p.slot else p
        return Poison(name, why if slot else reason, slot)

    def merge_into(self, before: dict, afters: list[dict], names: dict[str, int], node,
                   what: str) -> None:
        self.merge_node = node
        if what == "if" or not getattr(node, "static", False):
            self.same_types(before, afters, names, node, what)
        for name, line in names.items():
            values = [before.get(name)] + [env.get(name) for env in afters] \
                if what != "if" else [env.get(name) for env in afters]
            merged = values[0]
            for v in values[1:]:
                merged = self.merge_value(name, merged, v, self.poison_reason(what, node, line),
                                          self.slot_reason(what, node, line))
            if merged is None:
                self.env.pop(name, None)
            else:
                self.env[name] = merged

    @staticmethod
    def slot_reason(what: str, node, line: int) -> str:
        if what == "loop":
            return (f"is assigned inside the loop at line {node.loc.line} (at line {line}): after "
                    f"the loop, or in the next iteration before it is assigned again, it may hold "
                    f"any iteration's slot (slots are per iteration)")
        return (f"is assigned differently in the branches of the if at line {node.loc.line}, so "
                f"which slot it holds depends on the condition")

    @staticmethod
    def poison_reason(what: str, node, line: int) -> str:
        if what == "loop":
            return (f"is assigned inside the loop at line {node.loc.line} (at line {line}), so its "
                    f"value depends on the iteration (write indices as affine expressions of the "
                    f"loop variables)")
        return (f"is assigned differently in the branches of the if at line {node.loc.line}, so "
                f"its value depends on the condition")

    def hoist(self, accesses) -> None:
        """Record the accesses of a block whose runs the protocol does not model (a `while`, a
        loop or `if` on data) as if they ran once, here: each must lie in its window, and a read
        is checked as if it ran. But the block may not run at all, so a write there is a write
        that may not run (``Access.may``): it fills nothing for rule 7, neither for a reader nor
        for the writer's own read-back. Not a TMA copy: whether it runs must be known, since the
        commit declares its bytes."""
        for a in accesses:
            if a.tma:
                raise TleError(f"tle.gpu.tma_load inside a `while`, or a loop or `if` whose "
                               f"trip count or condition depends on data: whether the copy runs "
                               f"must be known, because the commit of its window declares its "
                               f"bytes (expect-tx); copy unconditionally between acquire and "
                               f"commit", a.loc, check="tma-window")
            self.record(replace(a, may=True) if a.is_write else a)

    def hoist_branches(self, then: list[Stmt], orelse: list[Stmt]) -> None:
        """Record the two branches of an `if` on data: every access hoisted as if it ran once
        (``hoist``: a write there may not run), then, after them, each write that surely runs
        in both branches as a write that runs: one of the branches runs, so the field is
        written when the `if` is done. It comes after the hoisted accesses, not where the
        branch made it, so a read-back in the other branch before its own write still finds
        the field unwritten. A read-back in a branch after that branch's own write of the
        field that runs (both in its statement list, with no event between them) is legal
        whatever the condition, so it is left out rather than hoisted after a write that may
        not run."""
        self.hoist(walk_accesses(tuple(read_backs_dropped(then))
                                 + tuple(read_backs_dropped(orelse))))
        in_else = sure_writes(orelse)
        for a in sure_writes(then):
            if any(same_write(a, b) for b in in_else):
                self.record(a)

    def forget_slots(self, names: dict[str, int], node) -> None:
        for name, line in names.items():
            v = self.env.get(name)
            if holds_slot(v):
                self.env[name] = self.lose(v, name, self.slot_reason("loop", node, line))

    def exec_body_carried(self, s: K.Stmt, names: dict[str, int]) -> list[Stmt]:
        """Walk the body of loop ``s`` from the environment at its head, as its second and later
        iterations see it. A first walk starts from the values before the loop (the first
        iteration); a name the body assigns a slot view (a slot, a pointer to a slot field, a
        loaded slot tile) that it did not hold at the head is, in the next iteration, the
        previous iteration's slot until the body assigns it again: ``ap = tl.zeros(...)``
        before the loop, then ``tl.dot(ap, b)`` and ``ap = tl.load(local_ptr(res.slot.a))`` in
        the body reads slot ``p - 1`` at the dot of iteration ``p``, after its release. So the
        body is walked again with such names merged with their value at the body's end (a
        view whose slot depends on the iteration: an access through it is ``unknown-slot``),
        as Triton itself walks a loop body once to find its loop-carried values. So is a name
        the body binds to a view of a free buffer (``q = local_ptr(scr)`` after ``tl.store(q,
        ...)``): the second iteration's store writes the buffer, which the race check must see.
        The names that already held a slot at the head were made path-dependent by
        ``forget_slots``."""
        head = dict(self.env)
        body = self.exec_block(s.body)
        carried: dict[str, Value] = {}
        for name, line in names.items():
            start, end = head.get(name), self.env.get(name)
            if end == start or not (views_of(end) - views_of(start)) or holds_slot(start):
                continue
            merged = self.merge_value(name, start, end, self.poison_reason("loop", s, line),
                                      self.slot_reason("loop", s, line))
            if holds_slot(end) and not holds_slot(merged):
                merged = self.lose(end, name, self.slot_reason("loop", s, line))
            carried[name] = merged
        if not carried:
            return body
        self.env.clear()
        self.env.update(head)
        self.env.update(carried)
        return self.exec_block(s.body)

    def _s_Return(self, s: K.Return) -> None:
        if s.value is not None:
            self.eval(s.value)
        if s is not self.last_top and self.early_return is None:
            self.early_return = s
            self.events_at_return = self.k.events


def element_dtype(sig_type: str) -> Optional[str]:
    """The element dtype, as the KIR names dtypes, of a signature's pointer type
    (``*fp32`` -> ``fp32``, ``*i32`` -> ``int32``, ``*u8`` -> ``uint8``); None for another."""
    if not sig_type.startswith("*"):
        return None
    t = sig_type[1:]
    m = re.fullmatch(r"([iu])(\d+)", t)
    if m:
        return f"{'int' if m.group(1) == 'i' else 'uint'}{m.group(2)}"
    return t
