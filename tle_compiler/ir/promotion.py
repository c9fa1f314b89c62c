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


def reduced_type(name: str, t: Optional[str]) -> Optional[str]:
    """The type of ``tl.<name>(x, axis)`` of an ``x`` of type ``t``: tl.sum (and Gluon's, the same
    function) sums an integer narrower than 32 bits as a 32-bit one of its signedness (int1 is
    unsigned: a sum of booleans is uint32); max, min, xor_sum and reduce_or keep the type."""
    if name == "sum" and t in _INTS and _INTS[t] < 32:
        return "uint32" if _unsigned(t) else "int32"
    return t


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


def number_fits(x, t: str) -> bool:
    """Whether ``gl.full(shape, x, t)`` of the Python number ``x`` holds the value tl.store and
    tl.load's ``other`` give it (to_tensor, then a cast to ``t``): any number into a float type
    (rounded alike), an integer (or bool) into an integer type whose range holds it. A float into
    an integer type, or an integer outside the type's range, does not (Triton refuses the
    constant, where the cast truncates or wraps)."""
    if t in _FLOATS:
        return isinstance(x, (bool, int, float))
    if t in _INTS and isinstance(x, (bool, int)):
        bits = _INTS[t]
        if t == "int1":
            return x in (0, 1)
        lo, hi = (0, 2**bits) if _unsigned(t) else (-2**(bits - 1), 2**(bits - 1))
        return lo <= int(x) < hi
    return False
