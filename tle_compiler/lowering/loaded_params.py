"""The types of kernel-level values read from memory that the verified protocol reads.

A kernel-level integer computed from loaded data (``n = tl.load(n_ptr)``, the decode kernels'
``NK`` from ``cache_seqlens``) is an opaque param to the verifier: one value shared by every
partition, ranging over every integer. What the kernel then computes from it (``M = n - 1``, a
condition ``if M >= 1:`` around events, a trip count ``range(n)``) the verifier evaluates over the
integers and covers where the values stay in i32, which is what the GPU computes when the loaded
value is an i32: i32's modular sums agree with the integers wherever the verdict claims them.

The element type of the pointer decides the value's type, and the frontend does not see it (the
signature comes with the compile). Through a ``*u32`` pointer ``n - 1`` at ``n = 0`` is
4294967295 and ``M >= 1`` an unsigned compare that holds (``arith.cmpi uge``), where the verifier
reads ``-1 >= 1``: a partition that waits under ``if M >= 1:`` for a commit made under
``if n >= 2:`` hangs. Through ``*i8`` / ``*i16`` the arithmetic wraps at 8 / 16 bits, through a
float pointer a fractional value makes ``n >= 2`` and ``n > 1`` differ, and through ``*i64`` the
i32 and i64 parts of one expression are computed in an order the verifier does not model (the
reason i64 arguments the protocol reads are refused, signature_checks.check_i64_args).

:func:`check_loaded_params` infers, from the signature, the type of every value the kernel body
computes before ``warp_specialize`` (through its loops and both branches of its ``if``s) and
refuses one that a partition's pipe events depend on (a partition parameter that the bounds of a
loop holding events, the condition of an ``if`` holding events or an event's index are computed
from) when it comes from a load and is not an i32 (nor a comparison's i1 truth): load it
through an ``*i32`` pointer, or cast it ``.to(tl.int32)``, whose value the verifier's integer
then is (``.to(tl.int64)`` too: the frontend keys that cast apart and computes in i64). A value
the kernel computes as a float (``n = N * 1.0``, which the frontend reads as an opaque integer
param) or as an unsigned or narrow integer is refused whether or not it was loaded: at N = 1 the
fp32 ``(n + 16777216) - 16777216`` is 0.0, where the verifier reads 1. A fill has its dtype:
``M = tl.full([], 0, tl.uint32) + N`` is a uint32, so ``if M - 1 >= 0:`` is an unsigned compare,
true at N = 0, where ``if M >= 1:`` is not (a reader waiting under the first for a writer's
commit under the second hung, "verified" before adversarial round 47).
"""

from __future__ import annotations

from typing import Optional

from ..diagnostics import TleError
from ..ir import kernel as K

#: KIR dtype names (language.gpu.normalize_dtype) -> the signature's spelling
_SIG_NAMES = {"int1": "i1", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
              "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64"}
_INT_BITS = {"i1": 1, "i8": 8, "i16": 16, "i32": 32, "i64": 64,
             "u8": 8, "u16": 16, "u32": 32, "u64": 64}
#: A Python int (a literal, a module constant, a constexpr argument): it takes the type of the
#: tensor beside it, as Triton types a scalar operand.
WEAK = "int"
#: tl functions whose result is a float whatever their operands.
FLOAT_FNS = frozenset({"sqrt", "sqrt_rn", "rsqrt", "exp", "exp2", "log", "log2", "sin", "cos",
                       "erf", "floor", "ceil", "fdiv", "div_rn", "sigmoid", "softmax"})
#: Types a loaded value the protocol reads may have.
ACCEPTED = frozenset({"i32", "i1", WEAK})

# a value's type and whether it comes from a load: (type or None when not known, loaded)
Typed = tuple[Optional[str], bool]


def _sig_name(dtype: str) -> str:
    return _SIG_NAMES.get(dtype, dtype)


def _is_float(t: Optional[str]) -> bool:
    return t is not None and (t.startswith("fp") or t == "bf16" or t == "float")


def promote(a: Optional[str], b: Optional[str]) -> Optional[str]:
    """The type of a binary arithmetic operation on values of types ``a`` and ``b`` (Triton's
    integer promotion; a Python int takes the other operand's type)."""
    if a is None or b is None:
        return None
    if WEAK in (a, b):
        # a Python int takes the tensor's type, but a bool tensor's arithmetic is i32's
        # (Triton zero-extends the i1: `(N > 0) - 1` is -1 at N = 0)
        t = b if a == WEAK else a
        return "i32" if t == "i1" else t
    if a.startswith("*") or b.startswith("*"):
        return a if a.startswith("*") else b
    if _is_float(a) or _is_float(b):
        # some float: not an integer the verifier models (a Python float beside an integer
        # tensor makes it an fp32)
        f = a if _is_float(a) and a != "float" else b if _is_float(b) and b != "float" else None
        return f or "fp32"
    if a not in _INT_BITS or b not in _INT_BITS:
        return None
    (ra, sa), (rb, sb) = (_INT_BITS[a], a[0]), (_INT_BITS[b], b[0])
    if sa == sb:
        return a if ra > rb else b
    if sa == "u":
        return a if ra >= rb else b
    return b if rb >= ra else a


def _join(a: dict, b: dict) -> dict:
    """The types of names after two paths: a Python int takes the tensor's type (Triton makes
    the two agree or refuses); two other types: unknown."""
    out = dict(a)
    for name, (t2, l2) in b.items():
        if name not in out:
            out[name] = (t2, l2)
            continue
        t1, l1 = out[name]
        t = t2 if t1 == WEAK else t1 if t2 == WEAK else t1 if t1 == t2 else None
        out[name] = (t, l1 or l2)
    return out


class _Types:
    """The type of each kernel-level name, from the signature, in the prologue's order."""

    def __init__(self, kernel: K.Kernel, signature: dict, constexprs: frozenset,
                 untyped: bool = False):
        self.env: dict[str, Typed] = {}
        for p in kernel.params:
            t = signature.get(p.name)
            if p.name in constexprs or t == "constexpr":
                self.env[p.name] = (WEAK, False)
            elif isinstance(t, str):
                self.env[p.name] = (t, False)
            elif untyped:
                # no signature: an argument is read as an i32, as the verdict says (a pointer
                # too: what is loaded through it is left unknown, not refused)
                self.env[p.name] = ("i32", False)

    def block(self, body) -> None:
        for s in body:
            if isinstance(s, K.Assign):
                self.env[s.target] = self.expr(s.value)
            elif isinstance(s, K.For):
                bound = promote(promote(self.expr(s.start)[0], self.expr(s.stop)[0]),
                                self.expr(s.step)[0])
                self.env[s.var] = ("i32" if bound == WEAK else bound, False)
                self.loop(s.body)
            elif isinstance(s, K.While):
                self.loop(s.body)
            elif isinstance(s, K.If):
                before = dict(self.env)
                self.block(s.then)
                then, self.env = self.env, before
                self.block(s.orelse)
                self.env = _join(then, self.env)

    def loop(self, body) -> None:
        """A body run zero or more times: its names' types joined with those before it, twice
        (a loop-carried value's type after one iteration is the type it keeps)."""
        for _ in range(2):
            before = dict(self.env)
            self.block(body)
            self.env = _join(before, self.env)

    def expr(self, e) -> Typed:
        if isinstance(e, K.Const):
            v = e.value
            if isinstance(v, bool):
                return "i1", False
            return (WEAK if isinstance(v, int) else "float" if isinstance(v, float) else None,
                    False)
        if isinstance(e, K.Global):
            v = e.value
            return (WEAK if isinstance(v, int) and not isinstance(v, bool) else
                    "float" if isinstance(v, float) else None, False)
        if isinstance(e, K.Name):
            return self.env.get(e.id, (None, False))
        if isinstance(e, K.BinOp):
            (a, la), (b, lb) = self.expr(e.lhs), self.expr(e.rhs)
            if e.op == "/":
                return "fp32", la or lb
            if e.op in ("<<", ">>"):
                return a, la or lb
            return promote(a, b), la or lb
        if isinstance(e, K.UnaryOp):
            t, loaded = self.expr(e.operand)
            # (`not n` is a truth the verifier models, `n == 0`, of a load or not)
            return ("i1", False) if e.op == "not" else (t, loaded)
        if isinstance(e, (K.Compare, K.BoolOp)):
            # a comparison's truth: the verifier models it whatever it compares (a loaded i1
            # itself is not one: _refused)
            return "i1", False
        if isinstance(e, K.Subscript):
            return self.expr(e.value)
        if isinstance(e, K.Op):
            return self.op(e)
        return None, False

    def op(self, e: K.Op) -> Typed:
        name = e.name.removeprefix("tl.").removeprefix("triton.language.")
        args = [self.expr(a) for a in e.args]
        loaded = any(x[1] for x in args) or any(self.expr(v)[1] for _, v in e.kwargs)
        if (name == "load" or name.startswith("atomic_")) and args:
            # an atomic returns the old value in memory: read from it like a load
            ptr = args[0][0]
            return (ptr[1:] if ptr is not None and ptr.startswith("*") else None), True
        if name in ("to", "cast") and len(e.args) >= 2 and isinstance(e.args[1], K.DType):
            t = _sig_name(e.args[1].name)
            # a cast to i32 is the value the verifier's integer is; one to i64 the frontend keys
            # apart and computes in i64 (docs/semantics.md): either is no longer a raw load
            return t, loaded and t not in ("i32", "i64")
        if name in ("full", "zeros"):
            # a fill is of its dtype: `tl.full([], 5, tl.uint32) + N` is a uint32 (compared
            # unsigned, and refused by Triton as a range bound or an mbarrier phase), `tl.full(
            # [], 5, tl.float32) + N` an fp32 (adversarial round 47)
            at = 2 if name == "full" else 1
            dt = e.args[at] if len(e.args) > at else e.kw("dtype")
            if isinstance(dt, K.DType):
                return _sig_name(dt.name), loaded
            return None, loaded
        if name in ("program_id", "num_programs", "arange"):
            return "i32", loaded
        if name in ("minimum", "maximum") and len(args) == 2:
            # (a function makes a Python number an int32 tensor first: tl.maximum of an int8
            # load and 0 is an int32, Triton's `extsi` then `maxsi`)
            a, b = ("i32" if t == WEAK else t for t, _ in args)
            return promote(a, b), loaded
        if name == "cdiv" and len(args) == 2:
            return promote(args[0][0], args[1][0]), loaded
        if name == "where" and len(args) == 3:
            return promote(args[1][0], args[2][0]), loaded
        if name in ("abs", "sum", "max", "min", "multiple_of", "max_contiguous") and args:
            return args[0][0], loaded
        floats = [t for t, _ in args if _is_float(t)]
        if name in FLOAT_FNS or floats:
            # math on floats (or giving one): a float, whatever the lowering knows of the op
            return next((t for t in floats if t != "float"), "fp32"), loaded
        return None, loaded


def _names(e) -> set[str]:
    return {x.id for x in K.walk_expr(e) if isinstance(x, K.Name)}


def _has_events(body) -> bool:
    """Whether ``body`` performs a pipe event or touches a slot field (whether a slot access
    runs is part of the protocol too: an unwritten field is a fault)."""
    return any(isinstance(x, (K.Event, K.SlotField)) for st in K.walk_stmts(body)
               for e in K.stmt_exprs(st) for x in K.walk_expr(e))


def protocol_params(part: K.KPartition) -> list[str]:
    """The parameters of a partition whose values decide its pipe events: the names the bounds
    of a loop holding events (or slot accesses), the condition of an ``if`` holding them and the
    index of an event are computed from, through the partition's assignments."""
    used: set[str] = set()
    for st in K.walk_stmts(part.body):
        if isinstance(st, K.For) and _has_events(st.body):
            used |= _names(st.start) | _names(st.stop) | _names(st.step)
        elif isinstance(st, K.If) and (_has_events(st.then) or _has_events(st.orelse)):
            used |= _names(st.cond)
        for e in K.stmt_exprs(st):
            for x in K.walk_expr(e):
                if isinstance(x, K.Event):
                    used |= _names(x.index)
    assigns = [st for st in K.walk_stmts(part.body) if isinstance(st, K.Assign)]
    while True:  # what a used name is computed from is used too
        more = {n for st in assigns if st.target in used for n in _names(st.value)} - used
        if not more:
            break
        used |= more
    return [name for name, _ in part.bindings if name in used]


def check_loaded_params(info, signature: dict, untyped: bool = False) -> None:
    """Refuse a value that a partition's pipe events depend on and that is no integer the
    verifier models (module docstring): read from memory as anything but an i32, or computed as
    a float, an unsigned or a narrow integer; ``signature``: the compile's argument types.
    ``untyped``: there is none (tle-dump's read of a file without a DEFAULT_CONFIG signature):
    the arguments are read as i32 and a load as a value of any type, so only what the kernel
    itself computes as another type (a fill of an unsigned dtype, a float) is refused."""
    kir = getattr(info, "kir", None)
    if kir is None:
        return
    types = _Types(kir, signature, frozenset(getattr(info, "constexprs", ())), untyped)
    types.block(kir.prologue)
    tuples = {st.target: st.value for st in K.walk_stmts(kir.prologue)
              if isinstance(st, K.Assign) and isinstance(st.value, K.TupleExpr)}

    def items_of(e, depth: int = 0) -> list:
        """A tuple's items (a kernel-level name bound to one included), nested ones flat."""
        if isinstance(e, K.Name) and e.id in tuples and depth < 100:
            e = tuples[e.id]
        if isinstance(e, K.TupleExpr) and depth < 100:
            return [x for item in e.items for x in items_of(item, depth + 1)]
        return [e]

    for part in kir.partitions:
        bindings = dict(part.bindings)
        for param in protocol_params(part):
            for item in items_of(bindings[param]):
                t, loaded = types.expr(item)
                if not _refused(t, loaded) or untyped and t is None:
                    continue
                what = f"of type {t}" if t is not None else "of a type the lowering cannot tell"
                text = f"'{item.id}'" if isinstance(item, K.Name) else "the value"
                how = ("comes from a load, and the signature makes it a value" if loaded else
                       "is computed as a value")
                raise TleError(
                    f"kernel '{info.name}': {text}, which partition '{part.name}' receives as "
                    f"'{param}' and its pipe events depend on, {how} {what}; the verifier reads "
                    f"it as a signed integer and what the kernel computes from it (bounds, "
                    f"conditions, indices) in i32, which the GPU does only for an i32 (an "
                    f"unsigned compare, a narrow or float value, or i64 arithmetic would run "
                    f"events it did not check): "
                    + ("load it through an *i32 pointer or cast it .to(tl.int32)" if loaded else
                       "compute it in integers, or cast it .to(tl.int32)"),
                    _loc_of(kir, item, part), check="signature")


def _refused(t: Optional[str], loaded: bool) -> bool:
    """Whether a value of type ``t`` (``loaded``: read from memory) may not decide events: a
    float, unsigned or narrow integer always; an i64 or a type the lowering cannot tell when
    read from memory (an i64 the kernel casts to is keyed apart by the frontend); an i1 read
    from memory (through a ``*i1`` pointer, adversarial round 50): the verifier reads it as an
    opaque integer, while Triton widens it by sign extension as a loop bound (True is -1:
    `range(n)` runs no iteration) and by zero extension elsewhere (`n > 0` holds), so a writer
    over `range(n)` and a reader waiting under `n > 0` were verified and hang. An i1 a
    comparison computes is a truth the frontend models (a bool loop bound it refuses)."""
    if t == "i1" and loaded:
        return True
    if t in ACCEPTED or (t is not None and t.startswith("*")):
        return False
    if t is None or t == "i64":
        return loaded
    return True


def _loc_of(kir: K.Kernel, item, part: K.KPartition):
    """Where the value was bound: the last kernel-level assignment of the name, else the
    partition's entry."""
    if isinstance(item, K.Name):
        st = next((x for x in reversed(list(K.walk_stmts(kir.prologue)))
                   if isinstance(x, K.Assign) and x.target == item.id), None)
        if st is not None:
            return st.loc
    return part.loc
