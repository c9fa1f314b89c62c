"""How Triton 3.6 binds the parameters of a jit function, as the rules a helper's signature must
follow to be read as Triton compiles it (the builder inlines helpers: Builder.inline).

Triton's call of a jit function (code_generator.call_JitFunction) binds the call's arguments with
``inspect.getcallargs`` over every parameter, passes each as a value (a Python number, bool,
dtype or None becomes a constexpr; anything else must be a Triton value), and the callee's code
generator (visit_FunctionDef) then

- runs ``p = default`` (``p: annotation = default`` when annotated) for every parameter with a
  default among the plain parameters, whether or not the call gave it, as Triton code; and
- binds the argument values, in signature order, to the plain parameters only
  (``node.args.args``): keyword-only parameters are never bound in the body, and positional-only
  ones shift every value onto the wrong name.

So (each refused at the call or at the read, check ``bad-call`` / ``unknown-name``):

- a positional-only parameter: Triton binds the first argument's value to the first parameter
  after the ``/`` (``def put(a, /, b)`` reads ``b`` as ``a``'s argument, silently) and leaves the
  rest unbound;
- a keyword-only parameter read in the body: unbound in Triton (NameError, or the module's
  constexpr of that name where there is one); unused, it is harmless, as in Triton;
- a plain parameter's default Triton cannot run as code: a string not annotated
  ``tl.constexpr`` (converted to a tensor: "cannot convert a of type str to tensor"), a chained
  comparison, a dict;
- a default the call leaves out whose Python value Triton cannot pass (``'int' object has no
  attribute 'type'``): a tuple, list, string, bytes or complex, unless wrapped as
  ``tl.constexpr(...)``;
- a default that calls a Triton function (``d=tl.cdiv(4, 2)``): Python evaluates defaults when
  the module is imported, where the call raises, so the kernel's module cannot be imported.
"""

from __future__ import annotations

import ast
from typing import Optional

from ..ir import kernel as K
from .folding import fold



def constexpr_annotated(arg: ast.arg) -> bool:
    """Whether parameter ``arg`` is annotated ``tl.constexpr`` (any spelling): Triton's default
    assignment is then an AnnAssign that keeps the value a constexpr."""
    return arg.annotation is not None and ast.unparse(arg.annotation).split(".")[-1] == "constexpr"


def positional_only(fdef: ast.FunctionDef) -> Optional[str]:
    """The refusal of a helper with positional-only parameters, else None."""
    if not fdef.args.posonlyargs:
        return None
    names = [a.arg for a in fdef.args.posonlyargs]
    after = [a.arg for a in fdef.args.args]
    shifted = (f"('{after[0]}' takes the value of '{names[0]}')" if after else
               f"('{names[0]}' is never bound)")
    return (f"'{fdef.name}' has positional-only parameters ({', '.join(names)}, before `/`): "
            f"Triton 3.6 binds a jit function's argument values to the parameters after the `/` "
            f"only, in order, so they land on the wrong names {shifted}; drop the `/`")


def keyword_only_why(fdef: ast.FunctionDef, name: str) -> str:
    """Why a keyword-only parameter ``name`` is undefined in the body (Frame.undefined)."""
    return (f"'{name}' is a keyword-only parameter of '{fdef.name}' (after the `*`), which Triton "
            f"3.6 never binds in a jit function's body (it binds the plain parameters only: make "
            f"'{name}' one)")


def _has(value: object, kinds: tuple) -> bool:
    if isinstance(value, kinds):
        return True
    return isinstance(value, tuple) and any(_has(v, kinds) for v in value)


def default_as_code(fdef: ast.FunctionDef, arg: ast.arg, node: ast.expr,
                    e: K.Expr) -> Optional[str]:
    """The refusal of parameter ``arg``'s default ``node`` (its value ``e``) that Triton's
    ``arg = default`` in the callee cannot run, else None (chained comparisons are refused by
    the expression reader itself when it reads the default as Triton code)."""
    if not constexpr_annotated(arg) and _has(fold(e), (str, bytes)):
        return (f"the default of '{arg.arg}' in '{fdef.name}' is a string, `{ast.unparse(node)}`:"
                f" Triton 3.6 assigns every default in the helper (`{arg.arg} = "
                f"{ast.unparse(node)}`, even when the call passes '{arg.arg}'), which converts it "
                f"to a tensor and fails (\"cannot convert ... of type <class 'str'> to tensor\");"
                f" annotate it `{arg.arg}: tl.constexpr = ...`")
    return None


def import_time_call(fdef: ast.FunctionDef, module_path) -> Optional[str]:
    """The refusal of a default of ``fdef`` that calls a Triton function (`d=tl.cdiv(4, 2)`),
    else None: Python evaluates every default once, when the module is imported, and a Triton
    function outside a kernel raises there (\"Cannot call @triton.jit'd outside of the scope of
    a kernel\", \"Did you forget to add @triton.jit ?\"), so the kernel's module cannot be
    imported. ``module_path`` resolves a callee to its dotted path (`tl.constexpr` constructs a
    value and is accepted)."""
    for d in [*fdef.args.defaults, *(k for k in fdef.args.kw_defaults if k is not None)]:
        for n in ast.walk(d):
            if not isinstance(n, ast.Call):
                continue
            path = module_path(n.func) or ""
            if path.split(".")[0] in ("tl", "gl", "triton") and path != "tl.constexpr":
                return (f"the default `{ast.unparse(d)}` of '{fdef.name}' calls `{path}`: Python "
                        f"evaluates a default when the module is imported, where a Triton "
                        f"function cannot run (it raises outside a kernel); compute the value in "
                        f"the helper, or write it as a constant")
    return None


def omitted_default(fdef: ast.FunctionDef, name: str, node: ast.expr, e: K.Expr,
                    wrapped: bool) -> Optional[str]:
    """The refusal of the default ``node`` (its value ``e``) of parameter ``name`` that a call
    leaves out, when its Python value is none Triton can pass to a jit function, else None.
    ``wrapped``: the default is written (directly or through a module constant) as
    ``tl.constexpr(...)``, which Triton passes."""
    if wrapped:
        return None
    v = fold(e)
    if isinstance(e, K.TupleExpr) or isinstance(v, (tuple, list, str, bytes, complex)):
        kind = {ast.List: "list", ast.Tuple: "tuple"}.get(type(node)) or (
            type(v).__name__ if v is not None else "tuple")
        return (f"the call leaves out '{name}' of '{fdef.name}', whose default "
                f"`{ast.unparse(node)}` is a {kind}: Triton 3.6 passes a default as its Python "
                f"value, and a {kind} is none it can pass to a jit function (\"object has no "
                f"attribute 'type'\"); pass '{name}' in the call or write the default "
                f"`tl.constexpr({ast.unparse(node)})`")
    return None
