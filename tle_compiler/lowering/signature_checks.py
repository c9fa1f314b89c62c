"""The checks of a kernel's argument types that keep the compiled kernel's integer arithmetic the
one the verifier checked: no narrow or unsigned integer argument, no i1 or i64 argument the
protocol reads (the values loaded from memory: loaded_params.py). The compile runs them on its signature
(compile.py); tle-dump runs them on a DEFAULT_CONFIG signature (cli/dump.py), so it does not say
``verified`` to a kernel its compile refuses. A module of its own, with nothing of the lowering's
code generation, so that plain verification does not import it."""

from __future__ import annotations

from ..diagnostics import TleError

#: Scalar integer types a signature may not give an argument (docs/semantics.md: the verifier's
#: integers are signed i32/i64).
NARROW_OR_UNSIGNED = frozenset({"i8", "i16", "u8", "u16", "u32", "u64"})


def protocol_args(info) -> set[str]:
    """The kernel arguments the verified pipe protocol reads: each param's argument (a loop
    bound, a condition around events, a pipe index) and the arguments the derived params are
    computed from (``M = N // 64``: N)."""
    out = set(getattr(info, "param_args", {}).values())
    program = getattr(info, "program", None)
    out |= {getattr(b, "name", b) for b in getattr(program, "bases", ())}
    return out & set(info.args)


def check_integer_args(info, signature: dict) -> None:
    """Refuse a narrow or unsigned integer argument type. The verifier reads integer arguments
    as signed i32 (i64 where passed so), as a launch passes a Python int; unsigned or narrow
    arithmetic in the compiled kernel (N - 1 at N = 0 as u32, N + 1 at 127 as i8) would run
    events it did not check."""
    for a in info.args:
        t = signature.get(a)
        if a not in info.constexprs and t in NARROW_OR_UNSIGNED:
            raise TleError(f"kernel '{info.name}': argument '{a}' is typed {t} in the signature; "
                           f"integer arguments must be i32 or i64 (the verifier checks signed "
                           f"i32/i64 arithmetic, which is what a launch with a Python int runs)",
                           info.program.loc, check="signature")


def check_i64_args(info, signature: dict) -> None:
    """Refuse ``i64`` for an argument the verified protocol reads. The verifier computes those
    params in i32, as a launch passes a Python int inside i32, and covers only the values at
    which every loop bound, condition and index stays inside i32, where i32's modular sums agree
    with the integers whatever their order. An i64 argument changes that inside the covered
    values: Triton computes an i32 part of the expression first and widens it beside the i64
    operand, so ``3 * N + B`` (B i64) wraps ``3 * N`` while ``(N + B) + 2 * N`` does not, and two
    partitions that spell one verified index differently would perform different events. (A
    launch's Python int outside i32 is typed i64; such a value is outside what was verified.)"""
    for a in sorted(protocol_args(info)):
        if signature.get(a) == "i64":
            raise TleError(f"kernel '{info.name}': argument '{a}' is typed i64 in the signature, "
                           f"but it is a param of the verified pipe protocol, which the verifier "
                           f"checks in i32 arithmetic on values inside i32 (what a launch passes "
                           f"for a Python int that fits): computed in i64, an index, bound or "
                           f"condition made of it and of i32 values can differ from the verified "
                           f"one; type '{a}' i32 (arguments the protocol does not read may be "
                           f"i64)", info.program.loc, check="signature")


def check_i1_args(info, signature: dict) -> None:
    """Refuse ``i1`` (a bool) for an argument the verified protocol reads. The verifier reads it
    as a signed integer (True is 1), but Triton widens an i1 loop bound by sign extension
    (``range(N)`` at N = True runs from 0 to -1: no iteration) and an i1 in arithmetic and
    comparisons by zero extension (``N == 1`` is true there), so the GPU would run other events
    than the verified ones. (A launch passing a Python bool types the argument i1.)"""
    for a in sorted(protocol_args(info)):
        if signature.get(a) == "i1":
            raise TleError(f"kernel '{info.name}': argument '{a}' is typed i1 in the signature (a "
                           f"bool), but it is a param of the verified pipe protocol, which reads it "
                           f"as a signed integer: Triton widens an i1 loop bound by sign extension "
                           f"(`range({a})` runs no iteration at {a} = True, as from 0 to -1) and "
                           f"an i1 in arithmetic or a comparison by zero extension (`{a} == 1` is "
                           f"true there), so the GPU would run other events than the verified ones; "
                           f"type '{a}' i32 (pass an int, not a bool)", info.program.loc,
                           check="signature")


def check_scalar_args(info, signature: dict) -> None:
    """Refuse a pointer or float type for an argument the verified protocol reads as an
    integer (a loop bound, a condition, an index, a derived param's base): Triton refuses a
    pointer as a loop bound ("For loop bounds and step must all be ints") and computes a float
    bound or index in floating point, neither the integer the verifier checked for every
    value."""
    for a in sorted(protocol_args(info)):
        t = signature.get(a)
        if isinstance(t, str) and (t.startswith("*") or t.startswith(("fp", "bf"))):
            what = "a pointer" if t.startswith("*") else "a float"
            raise TleError(f"kernel '{info.name}': argument '{a}' is typed {t} in the signature "
                           f"({what}), but it is a param of the verified pipe protocol, which "
                           f"reads it as a signed integer (a loop bound, condition or index); "
                           f"type it i32", info.program.loc, check="signature")


#: The type strings Triton 3.6 reads (triton.language.str_to_ty): a pointer is "*" (or "*k",
#: const) before one of these; "constexpr" and "tensordesc<...>" besides.
TRITON_TYPES = ("fp8e4nv", "fp8e4b8", "fp8e5", "fp8e5b16", "fp8e4b15", "fp16", "bf16", "fp32",
                "fp64", "i1", "i8", "i16", "i32", "i64", "u1", "u8", "u16", "u32", "u64", "B")
#: Spellings of other libraries (torch's dtype names, C's) and the Triton type each means: the
#: compile fails on them with a bare KeyError, and the verifier, reading the type as no integer
#: it knows, blamed the arithmetic.
_ALIASES = {"int": "i32", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
            "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64", "bool": "i1",
            "half": "fp16", "float16": "fp16", "bfloat16": "bf16", "float": "fp32",
            "float32": "fp32", "f32": "fp32", "double": "fp64", "float64": "fp64",
            "f16": "fp16", "long": "i64", "float8_e4m3fn": "fp8e4nv", "float8_e5m2": "fp8e5"}


def type_problem(t: str) -> str:
    """'' when Triton reads the argument type string ``t``; else a phrase saying why not (and,
    for another library's spelling of a Triton type, Triton's)."""
    pointer = ""
    base = t
    while base.startswith("*"):
        pointer += "*"
        base = base[1:]
        if base.startswith("k"):
            pointer += "k"
            base = base[1:]
    if base in TRITON_TYPES or base.startswith(("constexpr", "tensordesc")):
        return ""
    if base in _ALIASES:
        return f"{t!r}, which is not Triton's spelling: write {pointer + _ALIASES[base]!r}"
    return (f"{t!r}, which is no Triton type (scalars: i32, i64, fp32, ...; pointers: *fp32, "
            f"*bf16, *i32, ...; constexpr; tensordesc<...>)")


def check_signature(info, signature: dict) -> None:
    """Every check of the argument types a compile is given (the compile's own signature, or
    tle-dump's DEFAULT_CONFIG one): no narrow or unsigned integer, no i1, i64 or pointer / float
    protocol argument, no protocol value loaded as another type than i32."""
    from .loaded_params import check_loaded_params

    for arg, t in signature.items():
        problem = type_problem(t) if isinstance(t, str) else f"{t!r}, which is no type string"
        if problem:
            # (another library's spelling reached the compile as a bare KeyError)
            raise TleError(f"kernel '{info.name}': the signature types argument '{arg}' as "
                           f"{problem}", info.program.loc, check="signature")
    check_integer_args(info, signature)
    check_i1_args(info, signature)
    check_i64_args(info, signature)
    check_scalar_args(info, signature)
    check_loaded_params(info, signature)
