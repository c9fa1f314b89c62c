"""The protocol view of the kernel IR: a :class:`~tle_compiler.ir.kernel.Kernel` → its Pipe IR
:class:`~tle_compiler.ir.nodes.Program`, by abstract interpretation.

The builder (build.py) has resolved everything Python: names, module constants, helpers (inlined,
their locals renamed), imports, pipe handles (every verb is a KIR ``Event`` naming its pipe, reader
and view), and the declarations (pipes, buffers, partitions). What is left
is the protocol: which events each partition performs, under which loops and conditions, at which
indices; which slot fields it touches where; and the kernel's params with their domains.

Every KIR value is tracked as an abstract value (:mod:`.values`): integers affine in loop variables
and params (:class:`~.values.Aff`), kernel arguments and kernel-level integers that are params,
slots and views of them, and opaque data. Control flow is kept where it holds events (``For`` with
affine bounds, ``If`` on affine conditions) and rejected at its line where it would make them
depend on data. Integers carry Triton's semantics: ``//`` and ``%`` on runtime integers (loop
variables of ``range``/``tl.range``, runtime kernel arguments, what is computed from them) are C's
truncating operations, on constexprs Python's.

Error messages name expressions as :func:`src` prints them (Python's spelling, with inlined
helpers' locals under their own names).
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import dataclass, replace
from typing import Iterable, Optional

from ..diagnostics import TleError
from ..ir import kernel as K
from ..ir.big_ints import ArithmeticRefusal
from ..ir.expr import Affine
from ..ir.i32 import fits_i32
from ..ir.nodes import (Access, CLOSED_FLAG, Event, For, Loc, Partition, Pipe, Program,
                        READER_VERBS, Stmt, WRITER_VERBS, walk_accesses)
from ..ir.promotion import INTEGER_TYPES
from ..language.gpu import SharedBuffer
from ..language.pipe import PipeDecl
from .context import ASSUME_WHERE, Assumption, FieldSpec, KernelCtx, PipeInfo
from .load_signs import untyped_source
from .load_types import BOUNDS, NOT_NARROW, first_float_read, narrow_arithmetic, own_typed
from .local_tensors import WalkRules, c_and_python, refusal, shift_out_of_i32, tensor_root
from .loop_ends import I32_MAX, I32_MIN, counter_wraps
from .params import (assumed_interval, derivations, finalize, is_placeholder, launch_steps, reached,
                     subst_body, used_placeholders)
from .partition_rules import bind_reshape
from .protocol_terms import (Names, Source, TL_DTYPE_NAMES, affine_like, assigned_names, box_hull,
                             compare_chain, generated, holds_slot, merge_views, read_backs_dropped,
                             same_write, source_text, src, sure_writes, views_of)
from .python_numbers import PythonNumbers
from .shared_memory import check_bound_shapes
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
        if ints and isinstance(e.value, K.SlotField) and e.value.field == "shape" \
                and not isinstance(base, (TupleV, *HANDLES)):
            # `t.shape[1]` of a register tensor: a compile-time number in Triton, data here
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


# ----------------------------------------------------------------------------------------------
# the kernel prologue


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
            return Sym(py, ph, py)
        return merged


def _holds(a: int, op: str, b: int) -> bool:
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b}[op]


# ----------------------------------------------------------------------------------------------
# the kernel


class Ctx(KernelCtx):
    """What one kernel's analysis shares: params, pipes, mma uses, buffer uses, names."""

    def __init__(self, kernel: K.Kernel, names: Names, sources: Optional[dict[str, str]] = None,
                 trees: Optional[dict[str, ast.Module]] = None, read_files: bool = True):
        super().__init__(kernel.name, path=kernel.loc.file)
        self.names = names
        self.temps: dict[str, K.Expr] = {}  # the builder's temporaries → their values
        self.kir_buffers = {b.name: b for b in kernel.buffers}
        self.kernel_buffers = set(self.kir_buffers)
        self.source = Source(sources, trees, read_files)
        # and / or / not of an operand that is an integer if these kernel arguments are
        # (Walker.triton_truth): (the error, their placeholders)
        self.truths: list[tuple[TleError, frozenset]] = []
        # placeholders of the kernel arguments a load, store or atomic takes its pointer from
        self.pointers: set[str] = set()
        # the DEFAULT_CONFIG signature's argument types (the dtype a global load gives)
        self.config_signature: dict[str, str] = {}
        # those that are the only kernel argument of a pointer expression: surely pointers
        self.sure_pointers: set[str] = set()
        # the kernel arguments tle.gpu.tma_load copies read as tensor descriptors: argument ->
        # the (pipe, field, element type, slot shape, location) of each copy
        self.tma_descriptors: dict[str, list[tuple[str, str, str, tuple, Loc]]] = {}
        self.tma_descriptor_locs: dict[str, Loc] = {}  # argument -> its first copy
        # loops whose run-time step may be 0: (location, message) (Walker.note_runtime_step)
        self.zero_steps: list[tuple[Loc, str]] = []
        # run-time `//` / `%` whose divisor may be 0 (or -1 beside a dividend that may be
        # -2^31): key -> (location, message, (dividend, divisor, least)), an obligation where
        # the key is a param of the Program (Walker.runtime_division)
        self.runtime_divisions: dict[str, tuple] = {}
        # run-time loops without events or accesses, for the i32 check (Walker.note_data_loop)
        self.data_loops: list[For] = []

    def refuse_truths(self) -> None:
        """Raise the first error of :attr:`truths` whose kernel arguments the kernel never
        uses as pointers: integers, on which Triton's bitcast to i1 fails (it casts a pointer
        to i1 without complaint)."""
        for err, needs in self.truths:
            if not needs & self.pointers:
                raise err

    def source_text(self, loc: Loc) -> Optional[str]:
        """The source of the outermost call at ``loc`` (None when there is none to read)."""
        call = self.source.call(loc)
        return ast.unparse(call) if call is not None else None


@dataclass
class Analysis:
    """What :func:`analyse` learns about a kernel: its Program and what the KernelInfo carries."""

    program: Program
    bindings: dict[str, dict[str, Value]]  # partition → parameter → kernel-level value
    values: dict[str, Value]  # kernel-level names (KIR names) at warp_specialize
    param_args: dict[str, str]
    assumptions: tuple[Assumption, ...]
    pipes: dict[str, PipeInfo]


def pipe_info(decl: K.PipeDecl) -> PipeInfo:
    fields = tuple((b.name, SharedBuffer(tuple(b.shape), b.dtype)) for b in decl.fields)
    d = PipeDecl(decl.name, decl.capacity, "cta", decl.readers, decl.one_shot, fields, decl.loc,
                 decl.named)
    specs = tuple(FieldSpec(b.name, list(b.shape), b.dtype, "smem", b.loc) for b in decl.fields)
    return PipeInfo(d, specs, None, None)  # type: ignore[arg-type]


def kernel_functions(kernel: K.Kernel, sources: Optional[dict[str, str]] = None,
                     read_files: bool = True) -> set[str]:
    """The names of the functions defined in the files the kernel's statements come from (the
    helpers it inlined), so their renamed locals can be spelled as in Python."""
    files = {kernel.loc.file}
    for p in kernel.partitions:
        files.add(p.loc.file)
        for s in K.walk_stmts(p.body):
            files.add(s.loc.file)
    for s in K.walk_stmts(kernel.prologue):
        files.add(s.loc.file)
    out = {p.name for p in kernel.partitions}
    # the helpers the builder inlined (a kernel IR read on its own has no files to read them
    # from: without them its params were named `split_range1_NK` where the .py read says `NK`)
    out.update(h for h in K.get_attr(kernel, "helpers", ()) or () if isinstance(h, str))
    for f in files:
        text = source_text(f, sources, read_files)
        if text:
            out.update(re.findall(r"^\s*def\s+([A-Za-z_]\w*)", text, flags=re.M))
    return out


def config_section(kernel: K.Kernel, section: str) -> dict[str, object]:
    """The dict ``section`` ("constexprs", "signature") of the DEFAULT_CONFIG the builder
    recorded on ``kernel`` (its entry for the kernel in a config keyed by kernel name), its
    string keys only; {} without one."""
    from .config_literal import entry_section

    return entry_section(K.get_attr(kernel, "default_config"), kernel.name, section)


def _enclosing_ifs(body: tuple, target: K.Stmt) -> Optional[list]:
    """The ``if`` statements of ``body`` that ``target`` stands in, outermost first; None when
    ``target`` is not in ``body``."""
    for st in body:
        if st is target:
            return []
        if isinstance(st, K.If):
            branches = (st.then, st.orelse)
        elif isinstance(st, (K.For, K.While)):
            branches = (st.body,)
        else:
            continue
        for branch in branches:
            inner = _enclosing_ifs(branch, target)
            if inner is not None:
                return [st, *inner] if isinstance(st, K.If) else inner
    return None


def config_values(kernel: K.Kernel) -> dict[str, object]:
    """The constexprs the DEFAULT_CONFIG the builder recorded on ``kernel`` gives, as it writes
    them; {} without one."""
    return config_section(kernel, "constexprs")


def config_signature(kernel: K.Kernel) -> dict[str, str]:
    """The argument types the DEFAULT_CONFIG the builder recorded on ``kernel`` gives
    (``{"x_ptr": "*fp32", ...}``); {} without one."""
    return {n: t for n, t in config_section(kernel, "signature").items() if isinstance(t, str)}


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


def config_constexprs(kernel: K.Kernel) -> dict[str, int]:
    """The integer (and bool) constexprs the DEFAULT_CONFIG the builder recorded on ``kernel``
    gives (its entry for the kernel in a config keyed by kernel name); {} without one."""
    return {n: int(v) for n, v in config_values(kernel).items() if isinstance(v, int)}


def analyse(kernel: K.Kernel, sources: Optional[dict[str, str]] = None,
            bind: Optional[dict] = None, trees: Optional[dict[str, ast.Module]] = None,
            read_files: bool = True) -> Analysis:
    """The Pipe IR of a kernel and the values the KernelInfo records. ``bind``: the constexpr
    values the kernel was built specialised to (they are constants, not params). ``sources`` and
    ``trees``: the text and the parsed form of the files the kernel was built from (by their
    location names), which messages quote; a file not given is read from disk unless
    ``read_files`` is False (a kernel IR on its own: messages print its expressions)."""
    if bind:
        # slot shapes and the shared-memory budget with the bound constexprs' values
        check_bound_shapes(kernel, bind)
    names = Names(kernel_functions(kernel, sources, read_files))
    k = Ctx(kernel, names, sources, trees, read_files)
    for d in kernel.pipes:
        k.pipes[d.name] = pipe_info(d)
    bind = bind or {}
    k.bind = {n: v for n, v in bind.items() if isinstance(v, int) and not isinstance(v, bool)}
    k.config_constexprs = config_constexprs(kernel)
    k.config_values = config_values(kernel)
    k.config_signature = config_signature(kernel)

    env: dict[str, Value] = {}
    k.free_constexprs = frozenset(p.name for p in kernel.params if p.constexpr and not (
        isinstance(bind.get(p.name), int) and not isinstance(bind.get(p.name), bool)))
    for p in kernel.params:
        value = bind.get(p.name) if p.constexpr else None
        if isinstance(value, int) and not isinstance(value, bool):
            env[p.name] = Aff(Affine.of(value))
            continue
        if p.floating:
            # a float argument is compared and computed with as a float: no integer param models it
            env[p.name] = Data(node=K.Name(p.name, p.loc), runtime=True, floating=True, why=(
                f"`{p.name}` is a float kernel argument (the source declares it one): the "
                f"verifier models integers only, so which events run must not depend on it"))
            continue
        ph = k.params.reserve(("arg", p.name), p.name, p.loc, arg=p.name)
        env[p.name] = KernelArg(p.name, ph, p.constexpr)
    body = PrologueWalker(k, "kernel", env)
    body.number_names = {p.name for p in kernel.params if p.constexpr and p.name in k.bind}
    for s in kernel.prologue:
        body.exec_stmt(s)

    partitions: list[Partition] = []
    bindings: dict[str, dict[str, Value]] = {}
    for part in kernel.partitions:
        argv = {name: body.eval(e) for name, e in part.bindings}
        for name, e in part.bindings:
            body.refuse_c_division(e, argv[name], passed=True)
            # an argument computed in a narrow load's own type, as an assignment may be
            # (`n + 1` passed to the partition): what reads the parameter reads the wrap
            narrow = narrow_arithmetic(body, e) if isinstance(argv[name], Aff) else None
            if narrow is not None:
                k.narrow_values.setdefault(argv[name].expr, narrow)
            # a comparison computed there (`n >= 2` passed as a flag) is noted as a kernel-body
            # value's is, on the param a partition makes of it
            key = argv[name].key if isinstance(argv[name], Data) else None
            if key is not None and not isinstance(e, K.Name):
                marker = f"argument {part.name}.{name}"
                body.signed_conditions(e, e.loc, ", which pipe events depend on, holds", marker)
                note = k.signed_params.pop(marker, None)
                if note is not None:
                    k.key_notes.setdefault(key, note)
        pw = Walker(k, "partition", dict(argv))
        pw.partition = part.name
        # a partition parameter bound to a bool of the kernel body (`B = N > 5`, passed as B) is
        # an i1 tensor there as in the kernel body: `-B` and `B + B` compute in i1
        pw.bool_names |= {name for name, e in part.bindings if body.i1_like(e)}
        pw.number_names = {name for name, e in part.bindings if body.python_number(e)}
        pw.last_top = part.body[-1] if part.body else None
        stores = [st.target for st in K.walk_stmts(part.body)
                  if isinstance(st, K.Assign) and not generated(st)]
        pw.multi_assigned = frozenset(n for n, c in Counter(stores).items() if c > 1)
        for s in part.body:
            pw.exec_stmt(s)
        # An early return (the builder allows one only outside loops) is refused when a pipe
        # event is read after it in program order: whether that event runs would depend on the
        # path taken. One after all of the partition's events (`if N > 0: return` at its end)
        # changes no event, so it is kept, as Triton compiles it.
        if pw.early_return is not None and k.events != pw.events_at_return:
            guards = [n for st in _enclosing_ifs(part.body, pw.early_return) or ()
                      for n in pw.constexpr_names(st.cond)]
            if guards:
                # `if C == 2: return` on a constexpr the reading leaves free: Triton decides it
                # when it compiles, so the kernel is read again specialised to the constexprs
                # (SPECIALIZABLE), where only the branch taken exists
                raise TleError(f"early `return` in '{part.name}' under a condition on constexpr "
                               f"{', '.join(dict.fromkeys(guards))}, which performs pipe events "
                               f"after it: the kernel is read specialised to its constexpr "
                               f"values, so that only the branch that runs exists",
                               pw.early_return.loc, check="constexpr-if")
            raise TleError(f"early `return` in '{part.name}', which performs pipe events "
                           f"after it: whether they run would depend on the path taken; "
                           f"restructure so the function returns after its last event",
                           pw.early_return.loc,
                           check="unsupported-control-flow")
        partitions.append(Partition(part.name, tuple(pw.out), part.warps, part.regs, part.default,
                                    part.loc))
        bindings[part.name] = argv

    check_free_buffers(k)
    uses = used_placeholders(partitions)
    # kernel-body values computed by a comparison of a load of no known element type, which
    # the Program reads: the verdict holds only where that load is signed
    for ph in uses:
        note = k.signed_params.get(ph)
        if note is not None:
            k.keep_signed_only(note)
    # a value of no known element type read as a loop bound of pipe events and otherwise too:
    # an int1 is -1 in the one (sign-extended), 1 in the other (zero-extended)
    for pointer, loc in k.bool_bounds.items():
        other = k.bool_others.get(pointer)
        if other is not None:
            k.keep_signed_only((loc, pointer, (
                f"line {loc.line}: {pointer}'s element type is not known: a bound of this loop "
                f"of pipe events is {pointer}'s value, which through a *i1 {pointer} Triton "
                f"widens by sign extension (True is -1: `range(n)` runs no iteration), while "
                f"line {other.line} reads it zero-extended (True is 1), where the verifier "
                f"reads one integer; type {pointer} in DEFAULT_CONFIG's signature, or cast the "
                f"loaded value .to(tl.int32)"), BOUNDS))
    k.refuse_truths()
    extra = assumed_unused(k, uses)
    params, partitions, pnames = finalize(k.params, partitions, extra)
    uses = uses + extra
    env_names = {ph: Affine.of(n) for ph, n in pnames.items()}

    def rename(v: Value) -> Value:
        if isinstance(v, Aff):
            return Aff(v.expr.substitute(env_names), v.runtime, v.wide)
        if isinstance(v, (KernelArg, Sym)):
            return replace(v, param=pnames.get(v.param, v.param))
        if isinstance(v, TupleV):
            return TupleV(tuple(rename(x) for x in v.items))
        return v

    by_name = {pnames[ph]: slot for ph, slot in k.params.by_placeholder.items()}
    param_args = {p.name: by_name[p.name].arg for p in params if by_name[p.name].arg}
    assumptions = tuple(replace(a, param=pnames.get(ph, a.param)) for ph, a in k.assumptions)
    pipes = tuple(
        Pipe(d.name, d.capacity, tuple(b.name for b in d.fields), d.readers, d.one_shot,
             tuple(b.name for b in d.fields if b.name in k.mma.get(d.name, ())), d.loc, d.named)
        for d in kernel.pipes)
    derived, bases = derivations(k.params, k.definitions, uses, pnames, partitions)
    refuse_pointer_params(k, param_args, bases)
    # the walk records every slot access the kernel makes: a pipe it saw no write of is one
    # nothing writes, not a .pipe file's protocol skeleton
    unnamed = frozenset(pnames[slot.placeholder] for key, slot in k.params.by_key.items()
                        if isinstance(key, tuple) and key and key[0] == "load"
                        and slot.placeholder in pnames)
    known = {p.name for p in params} | {b.name for b in bases} | {d.name for d in derived}
    endless = tuple(unchecked_data_loops(k, pnames, known))
    # a run-time division whose value the Program reads, by a divisor that may be 0
    # (runtime_division)
    division_slots = {key: k.params.by_key.get(("pure", key)) for key in k.runtime_divisions}
    endless += tuple((loc, msg, "division-by-zero",
                      (a.substitute(env_names), b.substitute(env_names), *rest))
                     for key, (loc, msg, (a, b, *rest)) in k.runtime_divisions.items()
                     if division_slots[key] is not None
                     and pnames.get(division_slots[key].placeholder) in known)
    program = Program(kernel.name, params, pipes, tuple(partitions), kernel.loc, derived, bases,
                      every_access=True, unnamed=unnamed,
                      zero_steps=tuple(z if len(z) < 4 else (*z[:3], tuple(
                          x.substitute(env_names) for x in z[3])) for z in k.zero_steps)
                      + endless,
                      data_loops=subst_body(tuple(k.data_loops), env_names),
                      signed_only=tuple(k.signed_only))
    return Analysis(program,
                    {p: {n: rename(v) for n, v in b.items()} for p, b in bindings.items()},
                    {n: rename(v) for n, v in body.env.items()}, param_args, assumptions,
                    dict(k.pipes))


def unchecked_data_loops(k: KernelCtx, pnames: dict, known: set) -> Iterable[tuple]:
    """The run-time loops without events (Ctx.data_loops) that may never end at a launch no
    checked value stands for: a loop whose bounds read a value that is no param, base or
    derived param of the Program (an argument only such loops read, a value computed from one,
    a value read from memory, a bound that is not affine), whose counter's next value may pass
    2^31 - 1 over that value's domain (``tle.assume``; else every i32 value), where scf.for
    wraps it below the bound. The i32 check of loop bounds (passes/i32_range.py) covers the
    others at the values it checks; such a loop it never saw: `for i in range(0, N + 4, 3)` in a
    partition whose events N does not decide was "verified for its single instance" and never
    ends at N = 2^31 - 5. (`while` counters: loop_ends.why_not_ending.)"""
    for nest in k.data_loops:
        chain = [nest]  # the loops of the nest, outermost first (each holds the next)
        while chain[-1].body:
            chain.append(next(x for x in chain[-1].body if isinstance(x, For)))
        free = set().union(*(set(x.start.variables) | set(x.stop.variables) for x in chain)) \
            - {x.var for x in chain}
        unknown = sorted(v for v in free if not is_placeholder(v) or pnames.get(v) not in known)
        if not unknown:
            continue  # every value is the Program's: the i32 check of loop bounds sees them
        env = {}
        for v in free:
            lo, hi = k.params.domain(v) if is_placeholder(v) else (None, None)
            env[v] = (I32_MIN if lo is None else max(lo, I32_MIN),
                      I32_MAX if hi is None else min(hi, I32_MAX))
        top = counter_wraps(nest, env)
        if top is None:
            continue
        loop = chain[-1]
        names = ", ".join(dict.fromkeys(
            f"`{pnames.get(v, v)}`" if is_placeholder(v) else
            "a value that is not affine in params (read from memory, or a product)"
            if v.startswith("?bound@") else
            "the variable of a loop around it whose bounds are not affine" for v in unknown))
        yield (loop.loc, (
            f"this loop may never end: it steps by {loop.step}, and Triton's compiled loop "
            f"(scf.for) adds the step to its counter in i32 before it compares, so a bound that "
            f"close to 2^31 - 1 carries the counter to {top}, past the end of i32, where it "
            f"wraps below the bound; its bounds read {names}, which no value the verifier "
            f"checks stands for (the kernel's events do not read it), and whose domain lets "
            f"the bound come that close (bound it with tle.assume, or step by 1)"),
            "endless-loop")


def assumed_unused(k: KernelCtx, uses: list[str]) -> list[str]:
    """What the ``tle.assume`` bounds of values no event uses say of the params the events use.

    A bound on a value the kernel computes (``tle.assume(N // 2 >= 2)``) is checked by every
    launch, through its definition; where no event uses that value, the Program would not hold
    it, and the params its definition is computed from would be checked at values no launch
    gives (a fault at ``N = 3`` reported for a kernel no launch runs with ``N = 3``). Where the
    value is monotone in one param (``N // 2``, ``tl.cdiv(N, 64) - 1``), the bound is one on that
    param, narrowed here exactly (``N >= 4``); otherwise (``N % 2 == 0``, ``N * N >= 16``) the
    value is returned, to become a derived param of the Program, whose domain the search for
    witnesses keeps (passes/witness.py): a fault is reported only with values a launch gives."""
    used = set(reached(k.params, k.definitions, uses))
    extra: list[str] = []
    for ph, a in k.assumptions:
        if ph in used or ph in extra:
            continue
        if not set(reached(k.params, k.definitions, [ph])[1:]) & used:
            continue  # it bounds nothing the events depend on
        inv = assumed_interval(k.params, k.definitions, ph, a.min, a.max)
        if inv is None:
            extra.append(ph)
            continue
        base, lo, hi = inv
        slot = k.params.slot(base)
        if lo is not None and hi is not None and lo > hi:
            raise TleError(f"`{a.text}` leaves no value of {slot.arg or slot.hint} a launch can "
                           f"pass", a.loc, check="bad-assume")
        k.params.narrow(base, lo, hi)
    return extra


def protocol(kernel: K.Kernel, sources: Optional[dict[str, str]] = None,
             bind: Optional[dict] = None, trees: Optional[dict[str, ast.Module]] = None,
             read_files: bool = True) -> Program:
    """The Pipe IR :class:`Program` of a kernel (errors are TleErrors at their lines)."""
    return analyse(kernel, sources, bind, trees, read_files).program


def refuse_pointer_params(k: KernelCtx, param_args: dict[str, str], bases) -> None:
    """A kernel argument the kernel uses as a pointer (the only kernel argument a load, store
    or atomic computes its pointer from) that the protocol also reads as an integer (a loop
    bound, a condition, an index, or what a derived param is computed from): Triton refuses
    the loop ("For loop bounds and step must all be ints, are (int32, pointer<fp32>, int32)")
    or computes with an address, never the integer the verifier checked for every value
    (`range(x_ptr)` was verified "for every value of x_ptr"). An error at the kernel, where
    the argument is declared."""
    pointer_args = {k.params.slot(ph).arg: k.params.slot(ph) for ph in k.sure_pointers
                    if k.params.slot(ph).arg}
    read = set(param_args.values()) | {getattr(b, "name", b) for b in bases}
    for arg in sorted(read & set(k.tma_descriptor_locs)):
        # a tensor descriptor is no integer: Triton refuses it as a loop bound, and an integer
        # argument as a TMA copy's descriptor (the verdict was "verified for every value" of it)
        loc = k.tma_descriptor_locs[arg]
        raise TleError(f"kernel argument '{arg}' is the descriptor of a tle.gpu.tma_load and an "
                       f"integer the pipe protocol reads (a loop bound, condition or index): a "
                       f"tensor descriptor is no integer, and an integer no descriptor; pass the "
                       f"count and the descriptor as arguments of their own", loc,
                       check="bad-tma")
    for arg in sorted(read & set(pointer_args)):
        slot = next((sl for sl in k.params.by_placeholder.values() if sl.arg == arg),
                    pointer_args[arg])
        raise TleError(f"kernel argument '{arg}' is used as a pointer (a load, store or atomic "
                       f"takes its address from it) and as an integer by the pipe protocol (a "
                       f"loop bound, condition or index): Triton refuses a pointer as a loop "
                       f"bound and compares addresses, not the integer the verifier checks; pass "
                       f"the count as an integer argument of its own", slot.loc,
                       check="pointer-param")


def check_free_buffers(k: KernelCtx) -> None:
    """A free shared buffer (a tle.gpu.alloc of the kernel that is no pipe field) touched by two
    partitions, one of them writing, is a data race: no barrier orders the two. An error at the
    later access, naming both."""
    what = {True: "writes", False: "reads"}
    for buf, uses in k.buffer_uses.items():
        for i, (p2, w2, loc2, op2) in enumerate(uses):
            for p1, w1, loc1, op1 in uses[:i]:
                if p1 != p2 and (w1 or w2):
                    raise TleError(
                        f"shared buffer `{buf}` is used by two partitions, one of them writing: "
                        f"'{p1}' {what[w1]} it ({op1} at line {loc1.line}) and '{p2}' "
                        f"{what[w2]} it ({op2} at line {loc2.line}); no barrier orders them (a "
                        f"data race outside any pipe): hand the data over through a pipe", loc2,
                        check="buffer-race")
