"""The element type of an elementwise operation, as Triton's type checking computes it
(triton/language/semantic.py, ``computation_type_impl``), in the Gluon dtype names
("float32", "bfloat16", "int32", "uint8", "float8e4nv", ...), and the value Triton computes for
an operation on typed scalars (:func:`typed_result`).

Two readers need it. The lowering (lowering/translate.py) decides a few things from the type it
believes a value has, above all whether a slot store converts the value to the field's type
(Triton's ``tl.store`` converts; Gluon's shared-memory store refuses another type); a value whose
type it cannot know is marked inexact there and converted explicitly (a conversion to a value's
own type is no operation). The frontend (frontend/local_tensors.py) folds a name bound by a plain
assignment to its value, where Triton holds it as a tensor (an i32, an fp32, an i1) and computes
with it in that type: :func:`typed_result` is the value Triton computes, which the frontend
compares with Python's.

Operand types: a tensor's dtype, None when unknown; a Python number (a literal, a constexpr) is
:data:`PY_INT`, :data:`PY_FLOAT` or :data:`PY_BOOL` (Triton's "scalar" operands, which take part
in the promotion only when of a higher kind than the tensor beside them); a runtime scalar's
type (a kernel argument's signature type, a loop variable's) as a tensor's.
"""

from __future__ import annotations

from typing import Optional

from .expr import c_div, c_rem

PY_INT, PY_FLOAT, PY_BOOL = "<py int>", "<py float>", "<py bool>"

#: a signature's spelling of a scalar argument's type -> the Gluon dtype name
SIGNATURE_SCALARS = {"i1": "int1", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
                     "u1": "int1", "u8": "uint8", "u16": "uint16", "u32": "uint32",
                     "u64": "uint64", "fp16": "float16", "bf16": "bfloat16", "fp32": "float32",
                     "f32": "float32", "fp64": "float64"}

_FLOATS = {"float64": 64, "float32": 32, "float16": 16, "bfloat16": 16, "float8e4nv": 8,
           "float8e5": 8, "float8e4b15": 8, "float8e4b8": 8, "float8e5b16": 8}
_INTS = {"int1": 1, "int8": 8, "int16": 16, "int32": 32, "int64": 64,
         "uint8": 8, "uint16": 16, "uint32": 32, "uint64": 64}
INTEGER_TYPES = frozenset(_INTS)
FP8_TYPES = frozenset(t for t, bits in _FLOATS.items() if bits == 8)


def _kind(t: str) -> int:
    """Triton's dtype kind order (dtype.kind()): bool < integer (of either sign) < float."""
    if t == "int1":
        return 0
    if t in _INTS:
        return 1
    return 2


def _unsigned(t: str) -> bool:
    """Triton's signedness of an integer type: int1 is unsigned, as the uints are."""
    return t == "int1" or t.startswith("uint")


def _python_number(t: str) -> str:
    """The type Triton gives a Python number before promoting (to_tensor): int32 for an int
    (a wider one is refused or widened by the range checks, which the translator leaves to
    Triton), float32 for a float, int1 for a bool."""
    return {PY_INT: "int32", PY_FLOAT: "float32", PY_BOOL: "int1"}[t]


def _integer_promote(a: str, b: str) -> str:
    """Triton's integer_promote_impl: the wider type; of one width, the unsigned one."""
    (wa, ua), (wb, ub) = (_INTS[a], _unsigned(a)), (_INTS[b], _unsigned(b))
    if ua == ub:
        return a if wa > wb else b
    if ua:
        return a if wa >= wb else b
    return b if wb >= wa else a


def computation_type(a: Optional[str], b: Optional[str], div_or_mod: bool = False) -> Optional[str]:
    """The type Triton computes ``a op b`` in (``div_or_mod`` for ``/``, ``//`` and ``%``), or
    None when an operand's type is unknown or the pair is one Triton refuses (it reports that
    itself, at the compile)."""
    if a is None or b is None:
        return None
    a_py, b_py = a.startswith("<"), b.startswith("<")
    if a_py and b_py:
        return None  # folded by the frontend or a scalar expression: not a tensor's type
    if a_py != b_py:
        scalar, tensor = (a, b) if a_py else (b, a)
        if _kind(_python_number(scalar)) <= _kind(tensor):
            if div_or_mod and tensor in ("float16", "bfloat16"):
                return "float32"
            return tensor
        a, b = (_python_number(a) if a_py else a), (_python_number(b) if b_py else b)
    if a not in _FLOATS and a not in _INTS or b not in _FLOATS and b not in _INTS:
        return None
    if "float64" in (a, b):
        return "float64"
    if "float32" in (a, b):
        return "float32"
    if "float16" in (a, b):
        return "float32" if div_or_mod else "float16"
    if a == b == "bfloat16":
        return "float32" if div_or_mod else "bfloat16"
    if "bfloat16" in (a, b):
        return "float32"
    if a in _FLOATS and b in _FLOATS:
        return a if a == b else "float16"
    if a in _FLOATS or b in _FLOATS:
        return None  # an fp8 with an integer: Triton refuses
    if div_or_mod and _unsigned(a) != _unsigned(b):
        return None  # Triton refuses /, // and % of integers of different signedness
    return _integer_promote(a, b)


def true_division_type(t: Optional[str]) -> Optional[str]:
    """The type of ``x / y`` computed in ``t``: Triton's truediv turns integers into float32
    and keeps a float type."""
    if t is None:
        return None
    return "float32" if t in _INTS else t


def result_type(types: list[Optional[str]], op: Optional[str]) -> Optional[str]:
    """The type of an elementwise ``op`` of operands of ``types``, folded left to right: ``/``
    is a true division, ``//`` and ``%`` promote as divisions do; a comparison, ``gl.where``'s
    values or ``gl.maximum`` (``op`` None or any other name) promote as arithmetic. None when
    an operand's type is unknown."""
    if not types:
        return None
    div = op in ("/", "//", "%")
    acc = types[0]
    for t in types[1:]:
        acc = computation_type(acc, t, div)
        if acc is None:
            return None
    if acc is not None and acc.startswith("<"):
        return None
    return true_division_type(acc) if op == "/" else acc


def fp8_refusal(what: str, t: Optional[str]) -> Optional[str]:
    """Why Triton 3.6 cannot compile ``what`` computed in the type ``t`` (None when it can):
    it does no arithmetic in an fp8 type. ``a + b`` (``-a``, ``a < b``, tl.fma, tl.sum) of two
    tensors of one fp8 type computes in that type (``computation_type_impl``), and its backend
    cannot lower the operation ("'llvm.fadd' op operand #0 must be floating point ... but got
    'i8'"); ``a * 2.0`` makes the number an fp8 constant, which its builder cannot ("no attribute
    'get_fp8e4nv'"). Plain Triton fails alike, the first at the kernel's first line: the
    lowering refuses both at the operation's line."""
    if t not in FP8_TYPES:
        return None
    return (f"{what} computed in {t}: Triton 3.6 does no arithmetic in an fp8 type (its "
            f"backend cannot lower it; plain Triton fails alike); convert the fp8 values "
            f"first (`.to(tl.float16)` or `.to(tl.float32)`)")


def fp8_select_refusal(what: str, a: Optional[str], b: Optional[str], numbers: list,
                       result: Optional[str]) -> Optional[str]:
    """Why Triton 3.6 cannot compile ``what`` (``tl.where``'s values, or ``tl.maximum`` /
    ``tl.minimum``'s operands) of the types ``a`` and ``b`` (None when it can): an fp8 type
    beside an integer one ("unexpected type fp8e5 and int32", as :func:`operand_pair_refusal`),
    or a Python number (``numbers``, the values given as numbers) beside an fp8 tensor that
    the values promote to (``result``): Triton makes the number a constant of the fp8 type,
    which its builder cannot ("'builder' object has no attribute 'get_fp8e5'"), as for ``a *
    2.0``. The lowering printed ``gl.where(c, t8, 1.0)`` and Triton refused the compile."""
    if a in FP8_TYPES and b in _INTS or b in FP8_TYPES and a in _INTS:
        return (f"{what} of {a} and {b}: Triton 3.6 computes an fp8 type beside no integer "
                f"type (\"unexpected type {a} and {b}\"); convert both to a float type first")
    if result not in FP8_TYPES or not numbers:
        return None
    short = result.replace("float8", "fp8")
    return (f"{what} of a {result} tensor and the number {numbers[0]!r}: Triton 3.6 makes the "
            f"number a {result} constant, which its builder cannot (\"no attribute "
            f"'get_{short}'\"; plain Triton fails alike); convert the fp8 values first "
            f"(`.to(tl.float16)` or `.to(tl.float32)`)")


#: the operators Triton 3.6 types through computation_type_impl (arithmetic and comparisons)
_COMPUTED = frozenset({"+", "-", "*", "/", "//", "%", "<", "<=", ">", ">=", "==", "!="})


def operand_pair_refusal(op: str, a: Optional[str], b: Optional[str]) -> Optional[str]:
    """Why Triton 3.6 refuses ``a op b`` of operands of the types ``a`` and ``b`` (None when it
    does not, or a type is not known), the pairs :func:`computation_type` finds refused: an fp8
    type beside an integer type ("unexpected type fp8e5 and int32"), and, for ``/``, ``//`` and
    ``%``, two integer types of different signedness (int1 is unsigned; "Cannot use /, #, or %
    with int32 and uint32 because they have different signedness"). A Python number beside a
    tensor takes no part (its weak type is none of these)."""
    if op not in _COMPUTED:
        return None
    if a in FP8_TYPES and b in _INTS or b in FP8_TYPES and a in _INTS:
        return (f"`{op}` of {a} and {b}: Triton 3.6 computes an fp8 type beside no integer type "
                f"(\"unexpected type {a} and {b}\"); convert both to a float type first")
    if op not in ("/", "//", "%") or a not in _INTS or b not in _INTS:
        return None
    if _unsigned(a) == _unsigned(b):
        return None
    return (f"`{op}` of {a} and {b}: Triton 3.6 refuses /, // and % of integers of different "
            f"signedness (\"Cannot use /, #, or % with {a} and {b} because they have different "
            f"signedness\"); cast one to the other's signedness")


def bitcast_refusal(src: Optional[str], dst: Optional[str]) -> Optional[str]:
    """Why Triton 3.6 refuses ``x.to(dst, bitcast=True)`` of an ``x`` of type ``src`` (None
    when it does not, or a type is not known): types of two widths ("Cannot bitcast data-type of
    size 32 to data-type of size 16"). The frontend refuses the widths it follows; an int32
    ``x = t * 2`` of a loaded tile it did not (lowering adversarial round 19: verified, and the
    Gluon's compile failed away from the line)."""
    a, b = (_FLOATS.get(t) or _INTS.get(t) if t else None for t in (src, dst))
    if a is None or b is None or a == b:
        return None
    article = "an" if src.startswith("int") else "a"
    return (f"`.to({dst}, bitcast=True)` of {article} {src} value: Triton 3.6 bitcasts between "
            f"types of one width only (\"Cannot bitcast data-type of size {a} to data-type of size "
            f"{b}\"); convert it instead, or bitcast to a type of {a} bits")


def fp8_conversion_refusal(src: Optional[str], dst: Optional[str], bitcast: bool) -> Optional[str]:
    """Why Triton 3.6 cannot convert a value of type ``src`` to ``dst`` (None when it can): from
    one fp8 type to another, which it emits without a rounding mode, and its backend asserts
    ("Rounding mode must be specified for convertsions to fp8"; a rounding mode given is
    refused: "fp_downcast_rounding should be set only for truncating fp conversions"); and
    between an integer type (int1 included) and an fp8 type, which its cast has no rule for
    ("cannot cast int32[...] to fp8e5": it converts integers to and from the standard floats
    only; float8e4b15 to an integer goes through the backend's own conversion, which takes
    it)."""
    if bitcast or src == dst:
        return None
    if {src, dst} & FP8_TYPES and "float64" in (src, dst):
        # (verified until adversarial round 37: Triton's TTGIR holds the tt.fp_to_fp, and its
        # LLVM lowering fails, "Unsupported conversion")
        return (f"a conversion from {src} to {dst}: Triton 3.6's backend converts no fp8 type "
                f"to or from float64 (its compile fails in ConvertTritonGPUToLLVM); convert "
                f"through float32")
    if src in INTEGER_TYPES and dst in FP8_TYPES \
            or src in FP8_TYPES and src != "float8e4b15" and dst in INTEGER_TYPES:
        return (f"a conversion from {src} to {dst}: Triton 3.6 converts integers to and from "
                f"the standard float types only (\"cannot cast {src} to {dst}\"); convert "
                f"through one (`.to(tl.float16)` first)")
    if src not in FP8_TYPES or dst not in FP8_TYPES:
        return None
    return (f"a conversion from {src} to {dst}: Triton 3.6 converts between fp8 types without a "
            f"rounding mode, which its backend cannot lower (and refuses fp_downcast_rounding "
            f"for it; plain Triton fails alike); convert through a wider type "
            f"(`.to(tl.float16).to(tl.{dst})`)")


def reduced_type(name: str, t: Optional[str]) -> Optional[str]:
    """The type of ``tl.<name>(x, axis)`` of an ``x`` of type ``t`` (Gluon's reductions are
    Triton's functions): tl.sum sums an integer narrower than 32 bits as a 32-bit one of its
    signedness (int1 is unsigned: a sum of booleans is uint32); tl.max and tl.min compute in 32
    bits what is narrower (a float, bf16 and every fp8 kind included, as float32; an integer, int1
    and the unsigned ones included, as int32); xor_sum and reduce_or keep the type."""
    if name == "sum" and t in _INTS and _INTS[t] < 32:
        return "uint32" if _unsigned(t) else "int32"
    if name in ("max", "min"):
        if t in _INTS and _INTS[t] < 32:
            return "int32"
        if t in _FLOATS and _FLOATS[t] < 32:
            return "float32"
    return t


def float_bits(t: Optional[str]) -> Optional[int]:
    """The width of the floating-point type ``t`` (a Gluon dtype name), None for any other."""
    return _FLOATS.get(t) if t else None


def python_number_type(x) -> Optional[str]:
    """The type Triton's to_tensor gives the Python number ``x`` (a bool int1, an int int32 /
    uint32 / int64 / uint64 by its range, a float float32); None for anything else."""
    if isinstance(x, bool):
        return "int1"
    if isinstance(x, int):
        for t, lo, hi in (("int32", -2**31, 2**31), ("uint32", 2**31, 2**32),
                          ("int64", -2**63, 2**63), ("uint64", 2**63, 2**64)):
            if lo <= x < hi:
                return t
        return None
    if isinstance(x, float):
        return "float32"
    return None


def weak_type(x) -> Optional[str]:
    """The promotion operand type of the Python number ``x`` beside a tensor (:data:`PY_BOOL`,
    :data:`PY_INT`, :data:`PY_FLOAT`); None for anything else."""
    if isinstance(x, bool):
        return PY_BOOL
    if isinstance(x, int):
        return PY_INT
    if isinstance(x, float):
        return PY_FLOAT
    return None


def number_fits(x, t: str) -> bool:
    """Whether ``gl.full(shape, x, t)`` of the Python number ``x`` holds the value tl.store and
    tl.load's ``other`` give it (to_tensor, then a cast to ``t``): any number into a float type
    (rounded alike), an integer (or bool) into an integer type whose range holds it. A float into
    an integer type, or an integer outside the type's range, does not (Triton refuses the
    constant, where the cast truncates or wraps). No number fits an fp8 type: Gluon builds no
    fp8 constant (its builder has no ``get_fp8e4nv``), so one is splat in its own type and
    cast, as tl.store's cast of it rounds."""
    if t in FP8_TYPES:
        return False
    if t in _FLOATS:
        return isinstance(x, (bool, int, float))
    if t in _INTS and isinstance(x, (bool, int)):
        bits = _INTS[t]
        if t == "int1":
            return x in (0, 1)
        lo, hi = (0, 2**bits) if _unsigned(t) else (-2**(bits - 1), 2**(bits - 1))
        return lo <= int(x) < hi
    return False


class Refused(Exception):
    """Triton refuses the operation (a Python number outside the computation type's range, an
    unsigned tensor with a negative number, types it cannot combine)."""


class Unmodelled(Exception):
    """An operation :func:`typed_result` does not compute (a float `//` or `%`, ...): its
    caller does not know Triton's value."""


def _wrap(x: int, t: str) -> int:
    """``x`` as the integer type ``t`` holds it (two's complement for the signed ones)."""
    bits = _INTS[t]
    x &= (1 << bits) - 1
    if not _unsigned(t) and x >= 1 << (bits - 1):
        x -= 1 << bits
    return x


def _f32(x: float) -> float:
    """``x`` rounded to float32 (round to nearest even), as a Python float."""
    import struct
    try:
        return struct.unpack("f", struct.pack("f", x))[0]
    except OverflowError:
        return float("inf") if x > 0 else float("-inf")


def _as(x, t: str):
    """The Python number ``x`` converted to ``t`` as Triton's cast converts a value of the type
    it had (an int to a float rounds; a float to an int truncates toward 0; a bool is 0 / 1)."""
    if t in _FLOATS:
        x = float(x)
        return _f32(x) if t == "float32" else x
    if isinstance(x, float):
        if x != x or x in (float("inf"), float("-inf")):
            raise Refused("a NaN or an infinity converted to an integer")
        x = int(x)
    return _wrap(int(x), t)


def typed_result(op: str, operands: list[tuple[object, str]]):
    """The value Triton computes for ``op`` (a binary operator "+", "//", "<<", ..., a
    comparison "<", "==", ..., or a unary "-u", "~u", "+u") of ``operands``, each a Python
    number and its type (a dtype name, or :data:`PY_INT` / :data:`PY_FLOAT` / :data:`PY_BOOL`
    for a Python number beside a tensor), and the result's type. Integers wrap in their width,
    `//` and `%` round as C does, `/` of integers is a float32 division, float32 arithmetic
    rounds to float32 (a double result rounded once: exact for + - * / of float32 operands), a
    comparison is an int1 (a bool). Raises :class:`Refused` where Triton refuses."""
    if op in ("-u", "+u", "~u"):
        (x, t), = operands
        t = _python_number(t) if t.startswith("<") else t
        if op == "+u":
            return _as(x, t), t
        if op == "-u":
            return (_as(-_as(x, t), t) if t in _FLOATS else _wrap(-int(x), t)), t
        if t in _FLOATS:
            raise Refused("~ of a float")
        if t == "int1":
            return 1 - int(bool(x)), t  # the i1's complement: not
        return _wrap(~int(x), t), t
    (x, a), (y, b) = operands
    div = op in ("/", "//", "%")
    t = computation_type(a, b, div)
    if t is None:
        raise Refused(f"{op} of {a} and {b}")
    compare = op in ("<", "<=", ">", ">=", "==", "!=")
    for v, k in ((x, a), (y, b)):
        # arithmetic refuses a Python number its type cannot hold ("Scalar 3000000000 is out
        # of range for type int32"); a comparison takes it wrapped into the type (Triton 3.6
        # compiles `q < 3000000000` of an i32 q = -1 to False)
        if k == PY_INT and t in _INTS and not number_fits(v, t) and not compare:
            raise Refused(f"the Python number {v} does not fit {t}")
        if k == PY_INT and t in _INTS and _unsigned(t) and v < 0 and not compare:
            raise Refused(f"a negative Python number with the unsigned {t}")
    x, y = _as(x, t), _as(y, t)
    if compare:
        return {"<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y, "==": x == y,
                "!=": x != y}[op], "int1"
    if op == "/":
        if t in _INTS:
            x, y, t = _f32(float(x)), _f32(float(y)), "float32"
        if y == 0:
            raise Refused("a division by zero")
        return _as(x / y, t), t
    if t in _FLOATS:
        if op not in ("+", "-", "*"):
            raise Unmodelled(f"{op} of floats")
        return _as({"+": x + y, "-": x - y, "*": x * y}[op], t), t
    if op in ("//", "%"):
        if y == 0:
            raise Refused("a division by zero")
        return _wrap(c_div(x, y) if op == "//" else c_rem(x, y), t), t
    if op in ("<<", ">>"):
        bits = _INTS[t]
        if not 0 <= y < bits:
            raise Refused(f"a shift by {y} bits of a {bits}-bit integer")
        if op == "<<":
            return _wrap(x << y, t), t
        return _wrap((x & ((1 << bits) - 1)) >> y if _unsigned(t) else x >> y, t), t
    if op in ("+", "-", "*", "&", "|", "^"):
        return _wrap({"+": x + y, "-": x - y, "*": x * y, "&": x & y, "|": x | y,
                      "^": x ^ y}[op], t), t
    raise Unmodelled(f"the operator {op}")


def typed_cdiv(x: tuple[object, str], d: tuple[object, str]):
    """The value Triton's ``tl.cdiv(x, d)`` computes, ``(x + d - 1) // d`` in the operands'
    types (``x`` and ``d`` as :func:`typed_result` takes its operands): the sum wraps, the
    division rounds as C's. Raises as :func:`typed_result` does."""
    (dv, dt) = d
    s = typed_result("-", [typed_result("+", [x, d]), (1, PY_INT)])
    return typed_result("//", [s, (dv, dt)])[0]
