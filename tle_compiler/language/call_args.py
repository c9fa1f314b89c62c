"""The arguments of the ``tl`` calls the translator lowers, bound as Triton 3.6 binds them.

The translator reads a call's operands by position (``node.args[1]``) and a few by keyword. A
keyword it does not read would be dropped from the generated code without a word, and the kernel
would compute something other than what its author wrote: ``tl.sum(x, 1, dtype=tl.float32)``
summed in bf16, ``x.to(tl.int32, bitcast=True)`` converted the value, ``tl.load(p,
volatile=True)`` lost its volatility. A positional parameter given by keyword (``tl.exp2(x=v)``,
``tl.zeros(shape=..., dtype=...)``) crashed the translator instead.

:func:`bind` turns every call of :data:`PARAMS` into the form the translator reads: the
positional parameters in order (keywords naming them moved into place; a parameter given twice
or an unknown keyword is an error), and the other keywords kept only when the translator reads
them (:data:`READ`) or when they hold their default value (:data:`DEFAULTS`, then dropped: the
call means the same without them). Any other keyword is refused with the call's name.
"""

from __future__ import annotations

from dataclasses import replace

from ..ir import kernel as K

UNARY = ("exp2", "log2", "exp", "log", "sqrt", "abs", "sin", "cos", "rsqrt", "floor", "ceil", "erf")

#: Triton 3.6's positional parameters of each call the translator lowers, in order.
PARAMS: dict[str, tuple[str, ...]] = {
    "tl.arange": ("start", "end"),
    "tl.zeros": ("shape", "dtype"),
    "tl.full": ("shape", "value", "dtype"),
    "tl.where": ("condition", "x", "y"),
    "tl.maximum": ("x", "y"),
    "tl.minimum": ("x", "y"),
    "tl.max": ("input", "axis"),
    "tl.min": ("input", "axis"),
    "tl.sum": ("input", "axis"),
    "tl.xor_sum": ("input", "axis"),
    "tl.reduce_or": ("input", "axis"),
    "tl.program_id": ("axis",),
    "tl.num_programs": ("axis",),
    "tl.cdiv": ("x", "div"),
    "tl.dot": ("input", "other", "acc"),
    "to": ("self", "dtype"),
    **{f"tl.{f}": ("x",) for f in UNARY},
}

#: Triton 3.6's parameters after those of :data:`PARAMS`, in order: a call giving them
#: positionally (``x.to(tl.float8e5, "rtz")``, ``x.to(tl.int32, None, True)``) binds them as
#: these keywords, which :func:`bind` then reads, drops at their default or refuses by name
#: (they were refused as "takes at most N positional arguments" although Triton compiles them;
#: lowering adversarial round 11).
#: The reductions' are moved into keywords where the frontend builds the call
#: (:func:`keywords_of`), since the verifier reads a reduction's shape from its keywords.
TRAILING: dict[str, tuple[str, ...]] = {
    "to": ("fp_downcast_rounding", "bitcast"),
    # (tl.maximum(x, y, tl.PropagateNan.NONE), tl.dot's precision and out_dtype by position:
    # adversarial round 63)
    "tl.maximum": ("propagate_nan",),
    "tl.minimum": ("propagate_nan",),
    "tl.dot": ("input_precision", "allow_tf32", "max_num_imprecise_acc", "out_dtype"),
    "tl.sum": ("keep_dims", "dtype"),
    **{f"tl.{r}": ("return_indices", "return_indices_tie_break_left", "keep_dims")
       for r in ("max", "min")},
    **{f"tl.{r}": ("keep_dims",) for r in ("xor_sum", "reduce_or")},
}

#: the calls whose trailing positional arguments the frontend binds as keywords when it builds
#: them (``tl.sum(x, 1, True)`` is ``tl.sum(x, 1, keep_dims=True)`` in the kernel IR)
KEYWORDS_AT_BUILD = ("tl.sum", "tl.max", "tl.min", "tl.xor_sum", "tl.reduce_or")


def keywords_of(name: str, args: list, kwargs: list) -> tuple[list, list]:
    """(args, kwargs) of a call of ``name`` with its positional arguments past :data:`PARAMS`'
    moved into :data:`TRAILING`'s keywords, in Triton 3.6's order (a call of another name, or
    of more arguments than Triton takes, unchanged: :func:`bind` refuses it). A keyword given
    twice is a CallArgError, as Python's TypeError."""
    params, trailing = PARAMS.get(name, ()), TRAILING.get(name, ())
    if name not in KEYWORDS_AT_BUILD or not len(params) < len(args) <= len(params) + len(trailing):
        return args, kwargs
    args, extra = _positional_tail(name, args, kwargs)
    return args, extra + list(kwargs)


def _positional_tail(name: str, args, kwargs) -> tuple[list, list]:
    """``args`` cut to :data:`PARAMS`' of ``name``, and the rest as :data:`TRAILING`'s
    keywords [(key, value)] in Triton 3.6's order (the caller checks there are no more than it
    has); a keyword ``kwargs`` gives too is a CallArgError, as Python's TypeError."""
    params = PARAMS.get(name, ())
    extra = list(zip(TRAILING.get(name, ()), args[len(params):]))
    for key, _ in extra:
        if any(k == key for k, _ in kwargs):
            raise CallArgError(f"`{_spelling(name)}`: `{key}` given twice")
    return list(args[:len(params)]), extra


#: how many of PARAMS' leading parameters a call must give (default: all of them); a call
#: giving fewer was verified, and the translator failed with Python's IndexError / KeyError /
#: ValueError (`tl.where(c)`, `tl.maximum(x)`, `tl.zeros([64])`); Triton refuses it too
#: (tl.reduce_or's axis has no default in Triton 3.6: "reduce_or() missing 1 required positional
#: argument: 'axis'"; `tl.reduce_or(x)` was verified and lowered as over axis 0: adversarial
#: round 63.)
REQUIRED: dict[str, int] = {"tl.dot": 2, "tl.max": 1, "tl.min": 1, "tl.sum": 1, "tl.xor_sum": 1,
                            "tl.reduce_or": 2}

#: Keywords past the positional parameters that the translator reads and lowers.
READ: dict[str, tuple[str, ...]] = {
    "to": ("bitcast", "fp_downcast_rounding"),
    **{f"tl.{r}": ("keep_dims",) for r in ("xor_sum", "reduce_or")},
    # (values, indices): translate.py's reductions
    **{f"tl.{r}": ("keep_dims", "return_indices") for r in ("max", "min")},
    "tl.sum": ("keep_dims", "dtype"),
    # (input_precision, allow_tf32 and max_num_imprecise_acc: read by the lowering, which
    # takes them where Triton's wgmma does not read them, 16-bit float operands, and refuses
    # them elsewhere: lowering/translate.py ``_dot_options``; lowering adversarial round 14)
    "tl.dot": ("out_dtype", "input_precision", "allow_tf32", "max_num_imprecise_acc"),
    # (a literal tl.PropagateNan value: translate.py passes it on to gl.maximum / gl.minimum,
    # the same builtins; lowering adversarial round 16)
    "tl.maximum": ("propagate_nan",),
    "tl.minimum": ("propagate_nan",),
}

#: The values of tl.PropagateNan (Triton 3.6), as the frontend reads ``tl.PropagateNan.NONE``
#: (a constant of this text): the ``propagate_nan`` of tl.maximum / tl.minimum.
PROPAGATE_NAN = ("tl.PropagateNan.NONE", "tl.PropagateNan.ALL")

#: Keywords the translator does not lower, accepted only at Triton's default (a literal there).
#: (tl.max / tl.min of Triton 3.6 take no ``propagate_nan``: Triton refuses the keyword. The
#: ``propagate_nan`` of tl.maximum / tl.minimum is read (READ) and checked by
#: :func:`check_propagate_nan`.)
DEFAULTS: dict[str, dict[str, object]] = {
    "tl.max": {"return_indices_tie_break_left": True},
    "tl.min": {"return_indices_tie_break_left": True},
    "tl.sum": {},
    "tl.xor_sum": {},
    "tl.reduce_or": {},
    "to": {"bitcast": False, "fp_downcast_rounding": None},
    **{f"tl.{f}": {} for f in UNARY},
}

#: tl.load / tl.store keywords the translator does not lower, accepted only at their default.
MEMORY_DEFAULTS: dict[str, dict[str, object]] = {
    "tl.load": {"boundary_check": (), "padding_option": ""},
    "tl.store": {"boundary_check": ()},
}


class CallArgError(Exception):
    """A call the translator cannot lower as written (the message names the call and why)."""


def literal_of(e: K.Expr) -> tuple[bool, object]:
    """(True, value) when ``e`` is a literal the frontend resolved (a constant, a dtype, an empty
    tuple), else (False, None)."""
    if isinstance(e, K.Const):
        return True, e.value
    if isinstance(e, K.DType):
        return True, e.name
    if isinstance(e, K.TupleExpr) and not e.items:
        return True, ()
    return False, None


def _spelling(name: str) -> str:
    return "x.to" if name == "to" else name


def at_default(name: str, key: str, e: K.Expr, defaults: dict[str, object]) -> bool:
    """Whether keyword ``key`` of call ``name`` holds its default value; an error naming it when
    it holds anything else (the translator would drop it)."""
    ok, value = literal_of(e)
    default = defaults[key]
    if ok and (value == default or (value is None and default is None)):
        return True
    raise CallArgError(f"`{_spelling(name)}(..., {key}=...)` is not supported by the lowering "
                       f"(only its default, {default!r}); it would compute something else than "
                       f"the kernel says: leave `{key}=` out where its default computes what "
                       f"is meant")


def check_propagate_nan(name: str, e: K.Expr) -> None:
    """The ``propagate_nan`` of tl.maximum / tl.minimum must be a literal tl.PropagateNan value
    (NONE, the default, or ALL: a NaN operand gives NaN): Triton 3.6 refuses any other for
    float operands ("Unexpected propagate_nan"). An error naming the call otherwise."""
    ok, value = literal_of(e)
    if not (ok and value in PROPAGATE_NAN):
        raise CallArgError(f"`{_spelling(name)}(..., propagate_nan=...)` takes "
                           f"tl.PropagateNan.NONE (its default) or tl.PropagateNan.ALL here: "
                           f"Triton 3.6 refuses any other value for float operands "
                           f"(\"Unexpected propagate_nan\")")


def bind(node: K.Op) -> K.Op:
    """``node`` with its positional parameters in order and only the keywords the translator
    reads (see the module docstring); ``node`` itself for calls outside :data:`PARAMS`."""
    params = PARAMS.get(node.name)
    if params is None:
        return node
    if not node.kwargs and len(node.args) <= len(params):
        _check_required(node.name, params, len(node.args))
        return node  # already in the form the translator reads: the same node (its path)
    name = node.name
    most = len(params) + len(TRAILING.get(name, ()))
    if len(node.args) > most:
        raise CallArgError(f"`{_spelling(name)}` takes at most {most - (name == 'to')} "
                           f"positional arguments here")
    # the parameters past PARAMS given by position, read as the keywords they bind
    args, extra = _positional_tail(name, list(node.args), node.kwargs)
    args += [None] * (len(params) - len(args))
    kept = []
    read = READ.get(name, ())
    defaults = DEFAULTS.get(name, {})
    for key, e in extra + list(node.kwargs):
        if key in params:
            i = params.index(key)
            if args[i] is not None:
                raise CallArgError(f"`{_spelling(name)}`: `{key}` given twice")
            args[i] = e
        elif key in read:
            if key == "propagate_nan":
                check_propagate_nan(name, e)
            kept.append((key, e))
        elif key in defaults:
            at_default(name, key, e, defaults)
        else:
            raise CallArgError(f"`{_spelling(name)}` has no keyword `{key}` the lowering knows")
    while args and args[-1] is None:
        args.pop()
    if any(a is None for a in args):
        missing = params[args.index(None)]
        raise CallArgError(f"`{_spelling(name)}`: `{missing}` is missing")
    _check_required(name, params, len(args))
    return replace(node, args=tuple(args), kwargs=tuple(kept))


def _check_required(name: str, params: tuple[str, ...], given: int) -> None:
    """An error naming the first required parameter of ``name`` past the ``given`` ones."""
    need = REQUIRED.get(name, len(params))
    if given < need:
        missing = params[given]
        raise CallArgError(f"`{_spelling(name)}`: `{missing}` is missing (Triton 3.6 refuses the "
                           f"call)")


#: tl.load / tl.store keywords passed through to Gluon as cache hints
CACHE_HINTS = ("eviction_policy", "cache_modifier")
#: The parameters of tl.load / tl.store (Triton 3.6) after the ones the translator reads from
#: ``node.args`` itself (the pointer; the stored value), in positional order: an argument given
#: positionally (``tl.store(ptrs, v, m)``) is the keyword of that name, so a mask is never dropped.
POSITIONAL_KWARGS = {
    "tl.load": (1, ("mask", "other", "boundary_check", "padding_option", "cache_modifier",
                    "eviction_policy", "volatile")),
    "tl.store": (2, ("mask", "boundary_check", "cache_modifier", "eviction_policy")),
}


def memory_kwargs(node: K.Op) -> dict[str, K.Expr]:
    """The keyword arguments of a ``tl.load`` / ``tl.store`` call, its positional ones past the
    pointer (and value) under their names (:data:`POSITIONAL_KWARGS`); an error (CallArgError)
    for a call Triton 3.6 binds otherwise (too many positional arguments, one given twice) or a
    keyword the translator would drop unless it holds its default. One binding for the
    translator (lowering/translate.py ``kwargs``) and the protocol view (frontend/protocol.py),
    so that tle-dump refuses at the line what --gluon would."""
    kw = dict(node.kwargs)
    first, names = POSITIONAL_KWARGS[node.name]
    extra = node.args[first:]
    if len(extra) > len(names):
        raise CallArgError(f"{node.name} takes at most {first + len(names)} positional arguments")
    for name, arg in zip(names, extra):
        if name in kw:
            raise CallArgError(f"{node.name}: `{name}` given twice")
        kw[name] = arg
    read = ("pointer", "value", "mask", *CACHE_HINTS) + (("other", "volatile")
                                                         if first == 1 else ())
    check_memory_keywords(node.name, kw, read)
    return kw


def check_memory_keywords(name: str, kw: dict[str, K.Expr], read: tuple[str, ...]) -> None:
    """tl.load / tl.store: every keyword is one the translator reads (``read``) or holds its
    default (MEMORY_DEFAULTS); anything else is an error naming it."""
    defaults = MEMORY_DEFAULTS.get(name, {})
    for key, e in kw.items():
        if key in read:
            continue
        if key in defaults:
            ok, value = literal_of(e)
            if ok and not value:
                # Triton 3.6 tests both for truth only (`if boundary_check:`, `if
                # padding_option:`), so any falsy literal (None, (), "", 0, False) is the
                # default: `tl.store(ptrs, v, None, None, ".wt")` was refused as a boundary
                # check (lowering adversarial round 14)
                continue
            at_default(name, key, e, defaults)
            continue
        raise CallArgError(f"`{name}` has no keyword `{key}` the lowering knows")
