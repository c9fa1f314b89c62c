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
reason i64 arguments the protocol reads are refused, compile.check_i64_args).

:func:`check_loaded_params` infers, from the signature, the type of every name the kernel body
assigns before ``warp_specialize`` and refuses a name of the verified protocol (a param, a base
of a derived param, or a name a derived param is defined from) whose value comes from a load and
is not an i32 (or an i1 of a comparison): load it through an ``*i32`` pointer, or cast it
``.to(tl.int32)``, whose value the verifier's integer then is.
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
    if a == WEAK:
        return b
    if b == WEAK:
        return a
    if a.startswith("*") or b.startswith("*"):
        return a if a.startswith("*") else b
    if _is_float(a) or _is_float(b):
        return a if _is_float(a) else b  # some float: not an integer the verifier models
    if a not in _INT_BITS or b not in _INT_BITS:
        return None
    (ra, sa), (rb, sb) = (_INT_BITS[a], a[0]), (_INT_BITS[b], b[0])
    if sa == sb:
        return a if ra > rb else b
    if sa == "u":
        return a if ra >= rb else b
    return b if rb >= ra else a


class _Types:
    """The type of each kernel-level name, from the signature, in the prologue's order."""

    def __init__(self, kernel: K.Kernel, signature: dict, constexprs: frozenset):
        self.env: dict[str, Typed] = {}
        for p in kernel.params:
            t = signature.get(p.name)
            if p.name in constexprs or t == "constexpr":
                self.env[p.name] = (WEAK, False)
            elif isinstance(t, str):
                self.env[p.name] = (t, False)

    def block(self, body) -> None:
        for s in body:
            if isinstance(s, K.Assign):
                self.bind(s.target, self.expr(s.value))
            elif isinstance(s, K.For):
                bound = promote(promote(self.expr(s.start)[0], self.expr(s.stop)[0]),
                                self.expr(s.step)[0])
                self.bind(s.var, ("i32" if bound == WEAK else bound, False))
                for _ in range(2):  # loop-carried names: their types after a second pass
                    self.block(s.body)
            elif isinstance(s, K.While):
                for _ in range(2):
                    self.block(s.body)
            elif isinstance(s, K.If):
                self.block(s.then)
                self.block(s.orelse)

    def bind(self, name: str, typed: Typed) -> None:
        old = self.env.get(name)
        if old is not None:
            # a name bound again (a loop-carried value, both branches of an `if`): a Python int
            # takes the tensor's type (Triton makes the two agree or refuses); two types: unknown
            a, b = old[0], typed[0]
            t = b if a == WEAK else a if b == WEAK else a if a == b else None
            typed = (t, old[1] or typed[1])
        self.env[name] = typed

    def expr(self, e) -> Typed:
        if isinstance(e, K.Const):
            v = e.value
            if isinstance(v, bool):
                return "i1", False
            return (WEAK if isinstance(v, int) else "float" if isinstance(v, float) else None,
                    False)
        if isinstance(e, K.Global):
            return (WEAK if isinstance(e.value, int) and not isinstance(e.value, bool) else None,
                    False)
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
            return ("i1" if e.op == "not" else t), loaded
        if isinstance(e, (K.Compare, K.BoolOp)):
            items = (e.lhs, e.rhs) if isinstance(e, K.Compare) else e.items
            return "i1", any(self.expr(x)[1] for x in items)
        if isinstance(e, K.Subscript):
            return self.expr(e.value)
        if isinstance(e, K.Op):
            return self.op(e)
        return None, False

    def op(self, e: K.Op) -> Typed:
        name = e.name.removeprefix("tl.").removeprefix("triton.language.")
        args = [self.expr(a) for a in e.args]
        loaded = any(x[1] for x in args) or any(self.expr(v)[1] for _, v in e.kwargs)
        if name == "load" and args:
            ptr = args[0][0]
            return (ptr[1:] if ptr is not None and ptr.startswith("*") else None), True
        if name in ("to", "cast") and len(e.args) >= 2 and isinstance(e.args[1], K.DType):
            return _sig_name(e.args[1].name), loaded
        if name in ("program_id", "num_programs", "arange"):
            return "i32", loaded
        if name in ("minimum", "maximum", "cdiv", "fdiv") and len(args) == 2:
            return promote(args[0][0], args[1][0]), loaded
        if name == "where" and len(args) == 3:
            return promote(args[1][0], args[2][0]), loaded
        if name in ("abs", "sum", "max", "min", "multiple_of", "max_contiguous") and args:
            return args[0][0], loaded
        return None, loaded


def protocol_names(info) -> set[str]:
    """The kernel-level names the verified protocol reads: its params, the values its derived
    params are computed through, and the bases of their definitions."""
    program = info.program
    out = {p.name for p in program.params}
    out |= {getattr(b, "name", b) for b in getattr(program, "bases", ())}
    out |= {d.name for d in getattr(program, "derived", ())}
    return out


def check_loaded_params(info, signature: dict) -> None:
    """Refuse a name of the verified protocol whose value the kernel loads from memory as
    anything but an i32 (module docstring); ``signature``: the compile's argument types."""
    kir = getattr(info, "kir", None)
    if kir is None:
        return
    types = _Types(kir, signature, frozenset(getattr(info, "constexprs", ())))
    types.block(kir.prologue)
    wanted = protocol_names(info)
    for st in K.walk_stmts(kir.prologue):
        if not (isinstance(st, K.Assign) and st.target in wanted):
            continue
        t, loaded = types.env.get(st.target, (None, False))
        if not loaded or t in ACCEPTED:
            continue
        what = f"of type {t}" if t is not None else "of a type the lowering cannot tell"
        raise TleError(f"kernel '{info.name}': '{st.target}' is a param of the verified pipe "
                       f"protocol read from memory, and the signature makes it a value {what}; the "
                       f"verifier reads it as a signed integer and what the kernel computes from "
                       f"it (bounds, conditions, indices) in i32, which the GPU does only for an "
                       f"i32 (an unsigned compare, a narrow or float value, or i64 arithmetic "
                       f"would run events it did not check): load it through an *i32 pointer "
                       f"or cast it .to(tl.int32)", st.loc, check="signature")
