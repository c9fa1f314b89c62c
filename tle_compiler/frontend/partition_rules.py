"""Rules on a partition's warps and registers that the compiled kernel needs, checked where the
kernel is read, so that tle-dump refuses what the lowering could not compile instead of verifying
it (what is verified is what is lowered).

* A ``tl.dot`` is a Hopper wgmma (docs/lowering.md, "Async wgmma"), which a warp group issues: 4
  warps together. In a partition of 1 or 2 warps (or any count that is not a multiple of 4)
  Triton refuses it ("WGMMA requires num_warps to be divisible by 4").
* The register budgets of warp_specialize (language/registers.py, the one rule for both): the workers'
  requests must leave the default partition at least setmaxnreg's minimum.
* The cache hints of ``tl.load`` / ``tl.store`` (``cache_modifier``, ``eviction_policy``) are
  passed to Gluon as written; a value Triton 3.6 refuses for the operation ("Cache modifier .ca
  not supported" on a store, ``.cs`` on a load, any eviction policy but ``evict_first`` /
  ``evict_last``) would fail the compile of a verified kernel.
* The byte count of ``tle.gpu.prefetch_l2`` is the immediate of a ``cp.async.bulk.prefetch.L2``:
  a positive multiple of 16 known when the kernel compiles (:func:`prefetch_bytes_refusal`, which
  the protocol view checks at the values the kernel is read with and the lowering at those it
  lowers with).
* The ``tle.gpu`` calls a partition makes are bound to their parameters as Python binds them
  (:func:`bind_tle_call`), and the lowering translates that binding: a call Python refuses is
  refused where the kernel is read, not verified and then refused by the lowering.
* A ``tl.load`` of shared memory is never volatile, and ``volatile`` is a bool literal
  (:func:`load_volatile_refusal`).
* ``tle.gpu.scale_rows(x, factor)`` scales the rows of a 2-D ``x`` by a 1-D ``factor`` of one
  value per row (:func:`scale_rows_refusal`).
* Operands the lowering takes as tensors only or as scalars only (:func:`operand_kind_refusal`):
  the pointer of ``tle.gpu.prefetch_l2`` is a tensor, the operands of a conditional expression
  (``x if c else y``) are scalars. The lowering knows every operand's kind; the protocol view
  refuses an operand whose kind it knows (frontend/triton_rules.py ``block_dims``: a literal, a
  kernel argument or an integer it tracks is a scalar, a ``tl.arange`` and what is computed from
  it a tensor) at its line, in the same words.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Optional

from ..diagnostics import TleError
from ..ir import kernel as K
from ..ir.nodes import Loc


def check_wgmma_warps(part: K.KPartition) -> None:
    """Refuse a ``tl.dot`` in ``part`` when its warps are not whole warp groups."""
    if part.warps % 4 == 0:
        return
    for st in K.walk_stmts(part.body):
        for x in K.stmt_exprs(st):
            for e in K.walk_expr(x):
                if isinstance(e, K.Op) and e.name == "tl.dot":
                    raise TleError(f"tl.dot in partition '{part.name}', which has {part.warps} "
                                   f"warp{'s' if part.warps > 1 else ''}: a tl.dot is a wgmma, "
                                   f"issued by whole warp groups of 4 warps (Triton refuses it "
                                   f"otherwise); give the partition 4 or 8 warps",
                                   e.loc, check="bad-warps")


def check_register_budgets(partitions: list[K.KPartition], options: dict, loc: Loc,
                           at: Optional[Loc] = None) -> None:
    """The register rule of warp_specialize (language/registers.check_registers) on budgets that are
    numbers; a budget the generic reading leaves unevaluated is checked where it is bound.
    ``at``: the warp_specialize call, where a refusal is (the frontend's reading)."""
    from ..language.registers import check_registers

    if any(p.regs is not None and not isinstance(p.regs, int) for p in partitions):
        return
    check_registers(SimpleNamespace(partitions=partitions, options=dict(options),
                                    program=SimpleNamespace(loc=loc)), at=at)


#: The cache hints Triton 3.6 compiles, per operation ("" is the default of both keywords).
CACHE_MODIFIERS = {"tl.load": ("", ".ca", ".cg", ".cv"),
                   "tl.store": ("", ".wb", ".cg", ".cs", ".wt")}
EVICTION_POLICIES = ("", "evict_first", "evict_last")
#: where the hints sit among the positional arguments of each operation (Triton 3.6's order)
_HINT_POSITIONS = {"tl.load": {"cache_modifier": 5, "eviction_policy": 6},
                   "tl.store": {"cache_modifier": 4, "eviction_policy": 5}}
#: where ``volatile`` sits among tl.load's positional arguments
_VOLATILE_POSITION = 7


def check_cache_hints(body: tuple) -> None:
    """Refuse a ``tl.load`` / ``tl.store`` cache hint in ``body`` (a partition's statements, or
    the kernel body's before warp_specialize) that Triton 3.6 refuses for
    that operation, and a cache modifier given together with an eviction policy (Triton emits
    both on one instruction, which ptxas refuses: "Modifier '.evict_first' cannot be combined
    with modifier '.cs'"), and a ``volatile=True`` load with a hint other than ``.cv`` (ptxas:
    "Modifier '.volatile' cannot be combined with modifier '.cg'"), at the call's line."""
    for st in K.walk_stmts(body):
        for x in K.stmt_exprs(st):
            for e in K.walk_expr(x):
                if not (isinstance(e, K.Op) and e.name in _HINT_POSITIONS):
                    continue
                given = {}
                for key, pos in _HINT_POSITIONS[e.name].items():
                    a = e.kw(key)
                    if a is None and len(e.args) > pos:
                        a = e.args[pos]
                    if not (isinstance(a, K.Const) and isinstance(a.value, str)):
                        continue
                    given[key] = a.value
                    allowed = (CACHE_MODIFIERS[e.name] if key == "cache_modifier"
                               else EVICTION_POLICIES)
                    if a.value not in allowed:
                        raise TleError(f"{e.name}(..., {key}={a.value!r}): Triton 3.6 refuses "
                                       f"this {key.replace('_', ' ')} on a "
                                       f"{e.name.split('.')[1]} (it takes "
                                       f"{', '.join(repr(v) for v in allowed[1:])})",
                                       e.loc, check="unsupported-expression")
                if given.get("cache_modifier") and given.get("eviction_policy"):
                    raise TleError(f"{e.name}(..., cache_modifier={given['cache_modifier']!r}, "
                                   f"eviction_policy={given['eviction_policy']!r}): no "
                                   f"instruction takes both (ptxas refuses the pair); give one "
                                   f"of them", e.loc, check="unsupported-expression")
                volatile = e.kw("volatile")
                if volatile is None and e.name == "tl.load" and len(e.args) > _VOLATILE_POSITION:
                    volatile = e.args[_VOLATILE_POSITION]
                if isinstance(volatile, K.Const) and volatile.value is True:
                    hints = [f"{key}={value!r}" for key, value in given.items()
                             if value and value != ".cv"]
                    if hints:
                        raise TleError(f"tl.load(..., {', '.join(hints)}, volatile=True): a "
                                       f"volatile load takes no cache hint but '.cv' (Triton "
                                       f"3.6 emits both on one ld.volatile, which ptxas "
                                       f"refuses); give one of them", e.loc,
                                       check="unsupported-expression")


#: the form of tle.gpu.prefetch_l2, as both refusals of its byte count spell it
PREFETCH_USAGE = "tle.gpu.prefetch_l2(ptr, nbytes, mask=None)"
#: the largest byte count: the size operand of cp.async.bulk.prefetch.L2 is a .u32
PREFETCH_MAX_BYTES = 2 ** 32 - 16


def prefetch_bytes_refusal(nbytes: object) -> Optional[str]:
    """Why ``tle.gpu.prefetch_l2`` cannot prefetch ``nbytes`` bytes, or None when it can: the
    size of a bulk prefetch is an immediate of 16-byte units, so it must be a positive multiple
    of 16 (at most a u32) known when the kernel compiles. ``nbytes`` is the compile-time value of
    the argument, None when it is only known at run time. One rule for the protocol view
    (frontend/protocol.py, so that tle-dump refuses at the call's line what the lowering could not
    emit) and the lowering (lowering/translate.py ``_prefetch_l2``)."""
    if isinstance(nbytes, int) and not isinstance(nbytes, bool) and \
            0 < nbytes <= PREFETCH_MAX_BYTES and nbytes % 16 == 0:
        return None
    got = ("a value known only at run time" if nbytes is None
           else f"{nbytes!r}" if isinstance(nbytes, (bool, int, float, str)) else "not a number")
    return (f"{PREFETCH_USAGE}: nbytes must be a positive compile-time multiple of 16, at most "
            f"{PREFETCH_MAX_BYTES} (a bulk prefetch moves 16-byte units), got {got}")


#: The parameters of the tle.gpu calls a partition makes that the lowering translates from their
#: arguments, as language/gpu.py declares them: (required, optional) by name, in order, and
#: what the call takes, in words.
TLE_CALL_PARAMS = {
    "tle.gpu.prefetch_l2": (("ptr", "nbytes"), ("mask",),
                            "a pointer tensor, a byte count and an optional mask"),
    "tle.gpu.launch_dependents": ((), (), "no arguments"),
    "tle.gpu.local_ptr": (("buf",), ("indices",), "a shared-memory buffer (a slot field)"),
    "tle.gpu.scale_rows": (("x", "factor"), (), "two arguments"),
}


def bind_tle_call(name: str, args: tuple, kwargs: tuple) -> tuple[dict, Optional[str]]:
    """The arguments of the call ``name(*args, **dict(kwargs))`` by parameter name, as Python
    binds them to the declaration (TLE_CALL_PARAMS), an optional parameter given as the constant
    None left out (it is the default); and why the call cannot be lowered (None when it can): an
    argument missing, one too many, an unknown keyword or one given twice (Python's TypeError),
    or ``tle.gpu.local_ptr``'s indices, which the lowering does not take. One rule for the
    protocol view (frontend/protocol.py), so that tle-dump refuses the call at its line, and for
    the lowering (lowering/translate.py), which translates the binding."""
    required, optional, takes = TLE_CALL_PARAMS[name]
    params = required + optional
    usage = f"{name}({', '.join(required + tuple(f'{p}=None' for p in optional))})"
    bound: dict = {}
    why = None
    if len(args) > len(params):
        why = f"{len(args)} given positionally, at most {len(params)}"
    else:
        bound.update(zip(params, args))
        for key, value in kwargs:
            if key not in params:
                why = f"no parameter is named `{key}`"
                break
            if key in bound:
                why = f"`{key}` given twice"
                break
            bound[key] = value
    missing = [p for p in required if p not in bound]
    if why is None and missing:
        why = f"{', '.join(f'`{p}`' for p in missing)} missing"
    bound = {k: v for k, v in bound.items()
             if not (k in optional and isinstance(v, K.Const) and v.value is None)}
    if why is None and name == "tle.gpu.local_ptr" and "indices" in bound:
        why = "indices are not supported by the lowering (a pointer to the whole buffer only)"
    return bound, (f"{usage} takes {takes}: {why}" if why else None)


def load_volatile_refusal(volatile: Optional[K.Expr], shared: bool) -> Optional[str]:
    """Why the ``volatile`` argument of a ``tl.load`` (None when not given) cannot be lowered, or
    None: it must be the literal True or False (Gluon takes a bool), and a load of shared memory
    (a slot or buffer, ``shared``) is never volatile. One rule for the protocol view
    (frontend/protocol.py) and the lowering (lowering/translate.py)."""
    if volatile is None:
        return None
    if not (isinstance(volatile, K.Const) and isinstance(volatile.value, bool)):
        return "tl.load's volatile must be True or False (a literal)"
    if volatile.value and shared:
        return ("tl.load(..., volatile=True) of shared memory (a slot or buffer) is not lowered: "
                "what a partition reads of a slot is fixed while it holds it; load it plainly")
    return None


#: The operands the lowering takes of one kind only: (where, the kind it takes) -> why, in the
#: words both refusals use.
OPERAND_KINDS = {
    ("prefetch_l2 ptr", "tensor"):
        f"{PREFETCH_USAGE}: ptr must be a tensor of global-memory pointers",
    ("conditional operand", "scalar"):
        "a conditional expression (x if c else y) is lowered for scalar operands that are "
        "plain expressions; for tensors or loads write tl.where(c, x, y) (both computed) or an "
        "if statement",
}


def shape_test(e: K.Expr) -> bool:
    """Whether a condition reads only register tensors' shapes and literal numbers
    (``len(t.shape) == 2``, ``t.shape[0] == 32``, ``t.numel > 64 and ...``), or compares their
    dtypes with dtypes (``t.dtype == tl.float32``): a compile-time
    value in Triton 3.6 (a tensor's shape is a tuple of constexprs), which the reading leaves
    to the lowering, where the shapes are known. Triton's visit_IfExp then evaluates only the
    operand it chooses, so ``x if <shape test> else y`` takes tensor operands: the protocol
    view reads both (an over-approximation of the one that runs), the lowering translates
    the chosen one only (lowering adversarial round 15: it was refused as a conditional
    expression of tensors, where an ``if`` statement on the same test was lowered). One
    rule for the protocol view (frontend/walk_calls.py) and the lowering (translate.py)."""
    def only(x: K.Expr) -> Optional[bool]:  # None: no shape read; False: anything else
        if isinstance(x, K.Const):
            # (a float too: `t.shape[0] / 3 > 10.5` is Python's arithmetic of constexprs, as
            # an `if` statement on it is read; lowering adversarial round 16)
            return None if type(x.value) in (bool, int, float) else False
        if isinstance(x, K.Compare) and x.op in ("==", "!=") and any(
                isinstance(y, K.SlotField) and y.field == "dtype" for y in (x.lhs, x.rhs)):
            # `t.dtype == tl.float32`: a tensor's dtype is a compile-time value in Triton 3.6,
            # compared with a dtype (round 16)
            return True if all(isinstance(y, K.DType) or isinstance(y, K.SlotField)
                               and y.field == "dtype" for y in (x.lhs, x.rhs)) else False
        if isinstance(x, K.SlotField):
            return True if x.field in ("shape", "numel") else False
        if isinstance(x, K.Op) and x.name == "builtins.len" and len(x.args) == 1:
            return True if isinstance(x.args[0], K.SlotField) and x.args[0].field == "shape" \
                else False
        if isinstance(x, K.Subscript):
            return only(x.value) if isinstance(x.value, K.SlotField) and \
                x.value.field == "shape" and len(x.index) == 1 and \
                type(getattr(x.index[0], "value", x.index[0])) is int else False
        if isinstance(x, K.Compare) and x.op in ("==", "!=") and any(
                isinstance(y, K.TupleExpr) for y in (x.lhs, x.rhs)):
            # `t.shape == (32, 64)`: a tensor's shape compared with a tuple of numbers, which
            # Triton 3.6 compares item by item when it compiles (round 16)
            if not all(isinstance(y, K.TupleExpr) or isinstance(y, K.SlotField)
                       and y.field == "shape" for y in (x.lhs, x.rhs)):
                return False
        parts = ((x.lhs, x.rhs) if isinstance(x, (K.BinOp, K.Compare)) else
                 (x.operand,) if isinstance(x, K.UnaryOp) else
                 x.items if isinstance(x, (K.BoolOp, K.TupleExpr)) else None)
        if parts is None:
            return False
        seen = [only(y) for y in parts]
        return False if False in seen else (True if True in seen else None)
    return only(e) is True


def operand_kind_refusal(where: str, is_tensor: bool) -> Optional[str]:
    """Why an operand at ``where`` (a key of OPERAND_KINDS) cannot be lowered, given whether it
    is a tensor, or None when its kind is the one the lowering takes. One rule for the protocol
    view (frontend/protocol.py, where the operand's kind is known) and the lowering
    (lowering/translate.py), so that tle-dump refuses at the line what --gluon would."""
    ((key, kind),) = [k for k in OPERAND_KINDS if k[0] == where]
    if is_tensor == (kind == "tensor"):
        return None
    return OPERAND_KINDS[(key, kind)]


SCALE_ROWS_SHAPES = ("tle.gpu.scale_rows(x, factor): x must be a 2-D tensor and factor a 1-D "
                     "tensor with one value per row of x")


def scale_rows_refusal(x_dims: Optional[tuple], factor_dims: Optional[tuple]) -> Optional[str]:
    """Why ``tle.gpu.scale_rows(x, factor)`` cannot be lowered with operands of these shapes
    (``()`` for a scalar, None where the shape is not known, a size not known None), or None
    when nothing known stands against it: ``x * factor[:, None]`` needs a 2-D ``x`` and a 1-D
    ``factor`` of ``x``'s row count. One rule for the protocol view (frontend/protocol.py, with
    the shapes it follows) and the lowering (lowering/translate.py ``_scale_rows``, with every
    operand's shape)."""
    if x_dims is not None and len(x_dims) != 2 or \
            factor_dims is not None and len(factor_dims) != 1:
        return SCALE_ROWS_SHAPES
    if x_dims is not None and factor_dims is not None and None not in (x_dims[0], factor_dims[0]) \
            and x_dims[0] != factor_dims[0]:
        return SCALE_ROWS_SHAPES
    return None


#: tl.reshape's and tl.ravel's parameters (Triton 3.6): ``reshape(input, *shape,
#: can_reorder=False)``, ``ravel(x, can_reorder=False)``.
RESHAPE_USAGE = {"tl.reshape": "tl.reshape(input, *shape, can_reorder=False)",
                 "tl.ravel": "tl.ravel(x, can_reorder=False)"}


def slot_pointer_arithmetic_refusal(op: str, pointer_left: bool, zero: bool) -> Optional[str]:
    """Why ``pointer <op> other`` (``pointer_left``) or ``other <op> pointer``, ``pointer`` a
    shared-memory pointer (``tle.gpu.local_ptr(slot.f)``, of a slot field or a free buffer), is
    not lowered; None for the one form that is: adding the constant 0, or subtracting it from
    the pointer (``zero``: ``other`` is the compile-time integer 0), which is the pointer itself.
    A lowered shared-memory pointer is a descriptor of the whole buffer, with no per-element
    addresses to offset. The protocol view refuses with these words where the kernel is read
    (it read an offset pointer as one that reaches part of the field), the lowering at the same
    expression, so that tle-dump never verifies what --gluon refuses."""
    if zero and (op == "+" or (op == "-" and pointer_left)):
        return None
    return (f"`{op}` on a shared-memory pointer (`tle.gpu.local_ptr(...)`) is not supported by "
            f"the lowering, which addresses shared memory as whole buffers (a descriptor, no "
            f"per-element pointers): access the whole field through `tle.gpu.local_ptr(slot.f)` "
            f"and select in registers (tl.where), or give the pipe a field of the shape you "
            f"access; only `+ 0` (the pointer itself) is read")


#: the tl functions that take a shared-memory pointer (``tle.gpu.local_ptr(slot.f)``) as the
#: lowering spells it, a descriptor of the whole buffer: the loads and stores through it and
#: the hints, which leave the pointer as it is (atomics are refused on their own: Gluon has
#: them on global pointers only)
SHARED_POINTER_CALLS = frozenset({"load", "store", "multiple_of", "max_contiguous",
                                  "max_constancy", "static_print", "static_assert"})


def shared_pointer_operand_refusal(what: str) -> str:
    """Why ``what`` (```tl.where```, ```x.T```, "a subscript") of a shared-memory pointer
    (``tl.where(m, local_ptr(a), local_ptr(b))``, ``tl.maximum``, ``tl.trans`` / ``tl.reshape``
    of one) is not lowered: Triton would compute per-element pointers, the lowering holds a
    descriptor of the whole buffer, and Gluon has no such operation on one (the compile failed
    in Gluon, away from the line)."""
    return (f"{what} of a shared-memory pointer (`tle.gpu.local_ptr(...)`) is not supported "
            f"by the lowering, which addresses shared memory as whole buffers (a descriptor, no "
            f"per-element pointers): load the whole field, `tl.load(tle.gpu.local_ptr(slot.f))`, "
            f"and compute on the loaded tile in registers (tl.where, tl.trans, ... of the tile)")


#: ``tl.view(x, shape)`` is a reshape that may reorder the elements (``can_reorder=True``),
#: which Gluon refuses: the reason tle-dump and the lowering give at its line.
VIEW_REFUSAL = ("`tl.view` is not supported by the lowering: use tl.reshape(x, shape) (a reshape "
                "that keeps the order of the elements; Gluon does not reorder them)")


def bind_reshape(name: str, args: tuple, kwargs: tuple) \
        -> tuple[Optional[K.Expr], Optional[tuple], Optional[str]]:
    """``(operand, shape, refusal)`` of a call of ``tl.reshape`` or ``tl.ravel`` bound as Python
    binds it: the operand, the shape's expressions (None for ravel, whose shape is the operand's
    element count; a single tuple or list argument unpacked, as Triton unwraps it) and why the
    lowering cannot translate the call (None when it can): an operand missing, an unknown
    keyword (``shape=`` too: it is ``*shape``, which Python fills by position only), too many
    arguments, or a ``can_reorder`` other than a falsy constant (Gluon refuses to reorder). One
    rule for the protocol view (frontend/protocol.py) and the lowering (lowering/more_ops.py)."""
    usage = RESHAPE_USAGE[name]
    kw = dict(kwargs)
    first = "x" if name == "tl.ravel" else "input"
    operand = args[0] if args else kw.get(first)
    why = None
    unknown = [k for k, _ in kwargs if k not in (first, "can_reorder")]
    if unknown:
        why = f"no parameter is named `{unknown[0]}`"
    elif args and first in kw:
        why = f"`{first}` given twice"
    elif operand is None:
        why = f"`{first}` missing"
    rest = tuple(args[1:])
    shape = None
    reorder = kw.get("can_reorder")
    if name == "tl.ravel":
        if len(rest) > 1 or rest and reorder is not None:
            why = why or f"{len(args)} given positionally, at most 2"
        elif rest:
            reorder = rest[0]
    else:
        shape = rest[0].items if len(rest) == 1 and isinstance(rest[0], K.TupleExpr) else rest
    if why is None and reorder is not None and not (
            isinstance(reorder, K.Const) and not reorder.value):
        # (a falsy constant, `can_reorder=0` / `None`, is False to Triton 3.6 as well: it was
        # refused, lowering adversarial round 13)
        why = "only can_reorder=False is lowered (Gluon keeps the order of the elements)"
    return operand, shape, (f"{usage}: {why}" if why else None)


#: Triton 3.6's compiler hints on a value (semantic.multiple_of / max_contiguous /
#: max_constancy): one value per dimension of the operand (multiple_of: a scalar takes one).
HINTS = ("tl.multiple_of", "tl.max_contiguous", "tl.max_constancy")


def hint_values_refusal(name: str, rank: Optional[int], count: Optional[int],
                        values: tuple = ()) -> Optional[str]:
    """Why ``tl.multiple_of`` / ``tl.max_contiguous`` / ``tl.max_constancy(x, values)`` of an
    ``x`` of ``rank`` dimensions with ``count`` values cannot be compiled (None where nothing
    known stands against it; either None when not known): Triton 3.6 takes one value per
    dimension (``max(1, rank)`` for multiple_of: a scalar takes one) and refuses any other
    count ("Shape of input to max_contiguous does not match the length of values"): tle-dump
    verified ``tl.max_contiguous(offs, 64)`` of a 2-D ``offs`` and the printed Gluon failed the
    same way (lowering adversarial round 13). ``values``: the values known at compile time;
    one that is no integer (``16.0``) Triton refuses too ("values element 0 must have type
    `constexpr[int]`"). One rule for the protocol view and the lowering
    (lowering/more_ops.value_op)."""
    for i, v in enumerate(values):
        if isinstance(v, float) or isinstance(v, str):
            return (f"`{name}`'s value {v!r} is no integer: Triton 3.6 refuses it (\"values "
                    f"element {i} must have type `constexpr[int]`\")")
    if rank is None or count is None:
        return None
    want = max(1, rank) if name == "tl.multiple_of" else rank
    if count == want:
        return None
    short = name.split(".", 1)[1]
    return (f"`{name}` of a {rank}-D {'tensor' if rank else 'scalar'} with {count} value"
            f"{'s' if count != 1 else ''}: Triton 3.6 takes one per dimension ({want}) and "
            f"refuses it (\"Shape of input to {short} does not match the length of values\")")


def trans_dims_refusal(name: str, rank: Optional[int], dims: Optional[tuple]) -> Optional[str]:
    """Why ``tl.trans(x, *dims)`` of a tensor of ``rank`` axes cannot be compiled (None where
    nothing known stands against it: ``rank`` None when not known, ``dims`` None when not given,
    an axis None when not a compile-time integer): Triton and Gluon permute by a permutation of
    the axes, and the swap of the last two (no dims) needs two of them. One rule for the
    protocol view and the lowering (lowering/more_ops.transpose)."""
    if dims is None and name == "tl.permute":
        # (tl.permute is tl.trans without the swap of the last two axes when no dims are given:
        # Triton 3.6 refuses it, "permute dims must have the same length as input shape")
        return (f"`{name}` without dims: Triton 3.6 refuses it (\"permute dims must have the "
                f"same length as input shape\"); give the permutation of the axes")
    if rank is None:
        return None
    if dims is None:
        return None if rank >= 2 else (f"`{name}` of a {rank}-D tensor: it swaps the last two "
                                       f"axes, so it needs two")
    if None in dims:
        return None
    if rank < 1 or sorted(dims) != list(range(rank)):
        # (a 1-D tensor's (0,) is its identity permutation, which Triton 3.6 compiles: it was
        # refused as "dims must be a permutation of its 1 axes", lowering adversarial round 13)
        return f"`{name}` of a {rank}-D tensor: dims must be a permutation of its {rank} axes"
    return None


def reshape_shape_refusal(name: str, operand_dims: Optional[tuple],
                          dims: Optional[tuple]) -> Optional[str]:
    """Why a reshape of a tensor of ``operand_dims`` to ``dims`` cannot be compiled (None where
    nothing known stands against it; a size not known is None, a whole shape not known None):
    every dimension of a Triton block is a power of two, and a reshape keeps the element count
    (a shape of no dimensions is the operand's one element). One rule for the protocol view (the
    shapes it follows) and the lowering (every shape)."""
    if dims is not None:
        for d in dims:
            if d is not None and (isinstance(d, bool) or not isinstance(d, int) or d < 1
                                  or d & (d - 1)):
                return (f"`{name}` to {list(dims)}: every dimension must be a power of two "
                        f"known when the kernel compiles")
    if operand_dims is None or dims is None or None in operand_dims or None in dims:
        return None
    numel = count = 1
    for d in operand_dims:
        numel *= d
    for d in dims:
        count *= d
    if numel != count:
        return (f"`{name}` of a {list(operand_dims)} tensor to {list(dims)}: the element counts "
                f"differ ({numel} and {count})")
    return None
