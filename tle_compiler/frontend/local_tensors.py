"""One rule of Triton 3.6, owned here: a name a kernel function binds by a plain assignment (`b =
1`, `a, b = 1, 0`, `b = C`; not `b: tl.constexpr = 1`) is a tensor, whatever it holds. Triton's
visit_Assign turns a constant it assigns into one (an int into an i32, a float into an fp32, a
bool into an i1), and passes a tensor argument to a jit function as a tensor. Arithmetic on such
a name is a tensor too (`B + 0`, `-b`, `B * 2`, `B > 0`).

The frontend folds such a name to its value where it can, which is the value Triton computes.
Where Triton needs a constexpr, or refuses a tensor, the folded reading would verify a kernel
Triton cannot compile (or computes otherwise), so the name is refused there:

- `and` / `or` / `not` bitcast a tensor operand to i1, which fails for an i32 or fp32 ("cannot
  bitcast data-type of size 32 to data-type of size 1"; a bool, an i1, is taken);
- `**`: a tensor has no `__pow__`;
- a string, which cannot be a tensor: its plain assignment fails;
- compile-time arguments: the bounds of a tl.static_range, the arguments of tl.arange, the shape
  of tl.zeros / tl.full, the argument of int() / float(), the condition of tl.static_assert;
- `//` and `%` where C's rounding differs from Python's: of a name the builder folds, whose
  folded reading would divide as Python does where Triton divides the tensor as C does; of a
  name it does not fold (bound more than once, or to an expression of a tl.static_range
  variable), which the lowered Gluon keeps a tensor and divides as C does; arithmetic on it whose value leaves i32, where the
  lowered Gluon wraps; and a `<<` / `>>` of (or by) it by a number of bits outside [0, 31],
  undefined for the i32 the lowered Gluon shifts (Python's `-1 >> 40` is -1).

Two readings enforce it, each where it sees the value: the builder (:class:`BuildRules`, on the
Python source, for the names it folds) and the protocol walker (:class:`WalkRules`, on the kernel
IR, for names bound more than once, which stay names there). Both refuse with :func:`refusal`.
"""

from __future__ import annotations

import ast
from typing import Callable, Optional

from ..diagnostics import TleError
from ..ir import kernel as K
from ..ir import promotion
from ..ir.big_ints import number_text
from ..ir.expr import c_div, c_rem
from .constexpr_rules import constexpr_annotation
from .folding import fold
from .python_numbers import tensor_holds

CHECK = "unsupported-expression"


def tensor_dtype(value: object) -> Optional[str]:
    """The dtype of the tensor Triton 3.6 makes of ``value`` assigned to a name when `and` /
    `or` / `not` cannot take it: "i32" for an int, "fp32" for a float; None for a bool (an i1,
    which they take) and anything else."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return "i32" if isinstance(value, int) else "fp32"


def refusal(use: str, name: str, where: str, origin: Optional[str] = None,
            value: object = None, via: str = "", verb: str = "", op: str = "",
            once: bool = False, result: object = None, shift: object = None,
            item: bool = False) -> str:
    """The message refusing ``name`` (a local tensor, or a helper parameter given one) in
    ``where`` (the construct, quoted). ``use`` is what Triton does there: "truth" (``verb``
    bitcasts it), "power", "constexpr" (compile-time values only), "division" (C's ``op``),
    "overflow" (arithmetic whose ``result`` leaves i32), "shift" (a `<<` / `>>` by ``shift``
    bits, outside [0, 31]: undefined in i32) or "string" (the assignment of a string ``value``,
    which Triton cannot make a tensor).
    ``origin`` is the name the plain assignment bound (``name`` unless it was passed on, which
    ``via`` says), ``value`` its compile-time value when known; ``once``: for "division", the
    name is bound once (to a value the builder could not fold), not more than once; ``item``:
    the value divided is an item of a tuple the name is bound to."""
    origin = origin or name
    dtype = tensor_dtype(value)
    bound = f"`{origin}` is bound to {value!r}" if value is not None \
        else f"`{origin}` is bound to a compile-time value"
    made = f"an {dtype} tensor" if dtype else "a tensor"
    tensor = f"{bound}, which Triton 3.6 makes {made} (a plain assignment makes `{origin}` a " \
             f"tensor{via})"
    annotate = f"bind it as `{origin}: tl.constexpr = ...`"
    if origin.endswith(")"):
        # a helper's result (tensor_root names it by the call)
        tensor = (f"`{origin}` returns a compile-time value, which Triton 3.6 returns as a "
                  f"tensor (a jit function's return value is one{via})")
        annotate = f"bind the value as `x: tl.constexpr = ...` and use `x` in place of `{origin}`"
    if use == "truth":
        why = (f"`{verb}` bitcasts it to i1 (\"cannot bitcast data-type of size 32 to data-type "
               f"of size 1\")")
        advice = f"{annotate}, or compare it, `{name} != 0`"
    elif use == "power":
        why, advice = "a tensor has no `__pow__`", f"{annotate}, or multiply it out"
    elif use == "constexpr":
        why, advice = f"{where} takes compile-time values only", annotate
    elif use == "string":
        tensor = (f"a plain assignment makes `{origin}` a tensor in Triton 3.6, and a string "
                  f"cannot be one (\"cannot convert {value} of type <class 'str'> to tensor\")")
        why, advice = "the kernel does not compile", annotate
    elif use == "overflow":
        why = (f"it is {result} there, outside i32, which the lowered kernel (as Triton) "
               f"computes in i32, where it wraps")
        advice = annotate
    elif use == "shift":
        by = (f"by {shift}, outside [0, 31]" if isinstance(shift, int) else
              f"by {shift}, a compile-time number the verifier does not know to lie in [0, 31]")
        python = f"Python's {result}" if result is not None else "Python's shift"
        why = (f"it shifts {by}, which the lowered kernel (as Triton, warning \"this may result "
               f"in undefined behavior\") computes as an i32 shift, undefined there from 32 bits "
               f"on (LLVM's poison), where the verifier reads {python}")
        advice = annotate
    elif use == "division":
        how = "a tuple, each of whose items a plain assignment makes a tensor" if item \
            else "an expression of a tl.static_range variable or a constexpr" if once \
            else "bound more than once"
        tensor = (f"`{origin}` is bound to a compile-time value the frontend does not fold "
                  f"({how}), so the lowered kernel (as Triton) holds it as an i32 tensor")
        why = (f"it takes C's `{op}` (truncating) where the verifier reads Python's (flooring), "
               f"and they differ here (or may)")
        advice = (f"write the expression in place of `{origin}`, or bind it as `{origin}: "
                  f"tl.constexpr = ...`" if once else
                  f"bind `{origin}` once, or as `{origin}: tl.constexpr = ...`")
    elif use == "folded arithmetic":
        triton_value, py_value, how = result
        if triton_value is None:
            why = f"Triton refuses it there ({how}), where Python computes {py_value!r}"
        else:
            why = (f"Triton computes it on that tensor as {triton_value!r} ({how}), where "
                   f"Python's value, which the frontend would read, is {py_value!r}")
        advice = (f"{annotate} for Python's value, or write the value meant in place of "
                  f"`{where.strip('`')}`")
    elif use == "folded division":
        c_value, py_value = result
        why = (f"Triton divides that tensor as C does (`{op}` truncating: {c_value}), where "
               f"Python's `{op}` of the value gives {py_value}")
        advice = (f"{annotate} for Python's {py_value}, or write the value meant in place of "
                  f"`{where.strip('`')}`")
    else:
        raise ValueError(use)
    return f"`{name}` in {where}: {tensor}; {why}: {advice}"


#: the Python operators of the arithmetic the folded reading checks -> the kernel IR's symbol
_AST_OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
            ast.Mod: "%", ast.LShift: "<<", ast.RShift: ">>", ast.BitAnd: "&", ast.BitOr: "|",
            ast.BitXor: "^"}


def _difference(t: str, op: str) -> str:
    """What makes Triton's value of ``op`` in the type ``t`` another than Python's, in words."""
    if op in ("<", "<=", ">", ">=", "==", "!="):
        return "the comparison is made in the operands' promoted type"
    if t == "int1":
        return "an i1's arithmetic wraps at 2"
    if t == "float32":
        return "float32 arithmetic"
    if op in ("//", "%"):
        return f"C's truncating `{op}` in {t}"
    return f"{t} arithmetic wraps"


def c_and_python(op: str, x: int, y: int) -> tuple[int, int]:
    """``x op y`` (``op`` "//" or "%", ``y`` not 0) as an i32 tensor computes it (C's, Triton's
    arith.divsi / remsi) and as Python computes it on constants: they differ where the signs
    do and the division is not exact."""
    if op == "//":
        return c_div(x, y), x // y
    return c_rem(x, y), x % y


def shift_out_of_i32(walker, e, left, right) -> object:
    """What makes the `<<` / `>>` ``e`` (operands' values ``left``, ``right``, read by
    ``walker``) possibly undefined on the GPU when it shifts a tensor: its compile-time number
    of bits when outside [0, 31] (outside [0, 63] for an operand that may be an i64), or the
    source of a compile-time amount the reading does not know (a constexpr parameter: `M >>
    (C * 13)` is a shift by 39 at C = 3, a derived param the verifier computes with Python's
    shift); None for a constant amount in range or a run-time one (a derived param computed in
    i32, whose shift by the width or more the i32 check of its definition leaves out)."""
    if not isinstance(e, K.BinOp) or e.op not in ("<<", ">>") or walker.is_runtime(right):
        return None
    try:
        b = walker.as_aff(right)
    except Exception:  # noqa: BLE001 - a value of no integer reading (a tuple, a pointer)
        b = None
    bits = 64 if walker.width(left) or walker.width(right) else 32
    if b is not None and b.is_const:
        return b.const if not 0 <= b.const < bits else None
    return f"`{walker.src(e.rhs)}`"


def _no_tensor(value: object) -> Optional[str]:
    """What in ``value`` (a compile-time value a name is assigned) Triton 3.6 cannot make a
    tensor of: bytes, a complex number, the Ellipsis, an integer outside [-2**63, 2**64), or a
    string inside a tuple; None when there is nothing such (a plain string is refused on its
    own, :func:`refusal`)."""
    if isinstance(value, bytes):
        return "bytes"
    if isinstance(value, complex):
        return "a complex number"
    if value is Ellipsis:
        return "`...`"
    if isinstance(value, int) and not isinstance(value, bool) and not tensor_holds(value):
        return f"the integer {number_text(value)}, outside i64 and u64 (\"Nonrepresentable integer\"),"
    if isinstance(value, tuple):
        for v in value:
            what = "a string" if isinstance(v, str) else _no_tensor(v)
            if what is not None:
                return what
    return None


def _index_value(index: ast.expr) -> Optional[int]:
    """The integer a constant tuple index is written as (``0``, ``-2``), or None."""
    sign = 1
    if isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.USub):
        index, sign = index.operand, -1  # `b[-2]`
    if isinstance(index, ast.Constant) and isinstance(index.value, int) \
            and not isinstance(index.value, bool):
        return sign * index.value
    return None


def item_path(node) -> tuple[Optional[ast.Name], tuple]:
    """``node`` as a tuple item read by constant indices, ``b[0][-1]`` -> (the Name ``b``, (0,
    -1)); (None, ()) for anything else (a slice, a run-time index, an attribute)."""
    path: list = []
    while isinstance(node, ast.Subscript):
        i = _index_value(node.slice)
        if i is None:
            return None, ()
        path.append(i)
        node = node.value
    if not isinstance(node, ast.Name) or not path:
        return None, ()
    return node, tuple(reversed(path))


def item_paths(node, leaf: Callable[[object, tuple], dict], path: tuple = ()) -> dict:
    """``leaf(item, its index path)`` merged over the items of the tuple ``node`` (a Python
    tuple or list display, or a kernel IR tuple; nested ones walked in turn), each item under
    its index from either end (`b[-2]` of `(b, 1)` is item 0); ``leaf(node, path)`` for
    anything else."""
    items = node.elts if isinstance(node, (ast.Tuple, ast.List)) \
        else node.items if isinstance(node, K.TupleExpr) else None
    if items is None:
        return leaf(node, path)
    found: dict = {}
    for i, item in enumerate(items):
        for index in (i, i - len(items)):
            found.update(item_paths(item, leaf, path + (index,)))
    return found


def covers(paths, path: tuple) -> bool:
    """Whether the index path ``path`` reads into one of ``paths`` (is it or an item of it)."""
    return any(path[:len(p)] == p for p in paths)


def tensor_root(node, is_tensor: Callable[[object], bool],
                is_tensor_item: Optional[Callable[[ast.Name, tuple], bool]] = None):
    """The first name ``node`` computes from by arithmetic (a binary or unary operator other than
    `not`, a comparison) for which ``is_tensor`` holds, or None: Triton computes a tensor from a
    tensor. ``node`` is a Python expression (ast) or a kernel IR one. An item of a tuple read by
    constant indices (``b[0]``) is a tensor when the tuple's name is one (a plain assignment of
    a tuple makes each of its items a tensor) or when ``is_tensor_item(name, path)`` holds (a
    helper's parameter given a tuple with a tensor there); its name is returned."""
    if isinstance(node, (ast.Name, K.Name)):
        return node if is_tensor(node) else None
    if isinstance(node, ast.Call):
        # a jit function's result (Triton's visit_Return makes a returned constant a tensor):
        # named by the call as written
        if is_tensor(node):
            return ast.copy_location(ast.Name(id=ast.unparse(node), ctx=ast.Load()), node)
        return None
    if isinstance(node, K.Subscript):
        # `t[0]` (`t[0][1]`) of a tuple name: an item of a tuple bound by a plain assignment
        # (``is_tensor_item`` says which items are tensors when not all are)
        path: list = []
        while isinstance(node, K.Subscript) and len(node.index) == 1 \
                and isinstance(node.index[0], int) and not isinstance(node.index[0], bool):
            path.append(node.index[0])
            node = node.value
        if not isinstance(node, K.Name) or not is_tensor(node):
            return None
        return node if is_tensor_item is None or is_tensor_item(node, tuple(reversed(path))) \
            else None
    if isinstance(node, ast.Subscript) and isinstance(node.value, (ast.Tuple, ast.List)):
        # an item of a tuple written in place (`(b, 1)[0]`): that item
        elts, i = node.value.elts, _index_value(node.slice)
        if i is None or not -len(elts) <= i < len(elts) \
                or any(isinstance(x, ast.Starred) for x in elts):
            return None
        return tensor_root(elts[i], is_tensor, is_tensor_item)
    if isinstance(node, ast.Subscript):
        inner = node
        while isinstance(inner, ast.Subscript) and _index_value(inner.slice) is not None:
            inner = inner.value
        if isinstance(inner, ast.Call):
            # an item of a helper's returned tuple (`mk()[0]`): a tensor as the result is
            return tensor_root(inner, is_tensor, is_tensor_item)
        base, path = item_path(node)
        if base is not None and (is_tensor(base) or is_tensor_item is not None
                                 and is_tensor_item(base, path)):
            return base
        return None
    if isinstance(node, (ast.BinOp, K.BinOp)):
        parts = (node.left, node.right) if isinstance(node, ast.BinOp) else (node.lhs, node.rhs)
    elif isinstance(node, ast.UnaryOp) and not isinstance(node.op, ast.Not) \
            or isinstance(node, K.UnaryOp) and node.op != "not":
        parts = (node.operand,)
    elif isinstance(node, ast.Compare):
        parts = (node.left, *node.comparators)
    elif isinstance(node, K.Compare):
        parts = (node.lhs, node.rhs)
    elif isinstance(node, K.Op) and node.name == "to" and node.args:
        # `q.to(tl.int32)` is the tensor cast: still a tensor (`q.to(tl.int32) % 4` is C's)
        parts = (node.args[0],)
    elif isinstance(node, K.Op) and node.name == "ifexp" and len(node.args) == 3:
        # `(q if C > 2 else 0)`: the tensor where the branch that holds it is taken
        parts = node.args[1:]
    else:
        return None
    return next((r for r in (tensor_root(p, is_tensor, is_tensor_item) for p in parts)
                 if r is not None), None)


class BuildRules:
    """The rule in the builder (frontend/build.py's Builder), on the Python source: a name the
    function being built binds by a plain assignment, or a helper parameter such a name (or an
    expression of one) was passed to, read where Triton needs a constexpr or refuses a tensor."""

    def local_tensor(self, node: ast.expr) -> Optional[ast.Name]:
        """The name ``node`` computes from (:func:`tensor_root`) that is a local of the partition
        (or helper) being built bound by a plain assignment of this function (not `name:
        tl.constexpr = ...`), or a helper's parameter that such a name of its caller was passed
        to (and the helper does not rebind): Triton 3.6 holds it as a tensor, whatever its value,
        and passes it to a jit function as one (a parameter given a literal or a constexpr is a
        constexpr there, as Triton specialises the call to it). None for anything else."""
        if not self.in_partition:
            return None
        return tensor_root(node, self._is_local_tensor, self._is_tensor_item)

    def _is_local_tensor(self, node: ast.Name) -> bool:
        if isinstance(node, ast.Call):
            return node in self.helper_calls or self.calls_helper(node)
        f = self.frame
        if node.id in f.tensor_params and node.id not in f.stores:
            return True
        site = self.bound_at.get(f.kir(node.id))
        # `b: tl.constexpr = 1` keeps a constexpr; any other annotation (`b: int = 1`) is a
        # plain assignment to Triton 3.6's visit_AnnAssign, which makes the number a tensor
        return site is not None and not (isinstance(site, ast.AnnAssign)
                                         and constexpr_annotation(site)) and any(
            line == site.lineno for line, _ in f.stores.get(node.id, ()))

    def _is_tensor_item(self, node: ast.Name, path: tuple) -> bool:
        """Whether item ``path`` of the helper parameter ``node`` holds a tensor: the caller
        passed a tuple with a local tensor (or an expression of one) there (``(b, 1)``: item 0
        is b's tensor, item 1 the constexpr 1, as Triton specialises the call)."""
        f = self.frame
        return node.id not in f.stores and covers(f.tensor_items.get(node.id, ()), path)

    def tensor_items_of(self, node: ast.expr, path: tuple = ()) -> dict:
        """The items of the argument ``node`` that are tensors of this function (its local
        tensor names and expressions of them, :meth:`local_tensor`), by their index paths in
        ``node``: {path: origin name}. A tuple written in place (``(b, 1)``) has them where
        they stand; a tuple parameter passes its own on."""
        f = self.frame

        def leaf(x: ast.expr, at: tuple) -> dict:
            name = self.local_tensor(x)
            if name is not None:
                return {at: self.tensor_origin(name)}
            if self.in_partition and isinstance(x, ast.Name) and x.id not in f.stores:
                return {at + p: origin for p, origin in f.tensor_items.get(x.id, {}).items()}
            return {}

        return item_paths(node, leaf, path)

    def body_tensor_items(self, node: ast.expr, path: tuple = ()) -> dict:
        """The items of the kernel body's tuple ``node`` (a warp_specialize argument) that are
        names it binds by a plain assignment (or expressions of them), by index path (each
        under its index from either end): {path: the name}. Triton hands each to the partition
        as the tensor it is; the others are constexprs."""
        def leaf(x: ast.expr, at: tuple) -> dict:
            # (a helper's result too, `(hn(), 1)`: Triton returns a number as a tensor)
            root = tensor_root(x, lambda n: isinstance(n, (ast.Name, ast.Call))
                               and self._is_local_tensor(n))
            return {at: root.id} if root is not None else {}

        return item_paths(node, leaf, path)

    def tensor_origin(self, node: ast.Name) -> str:
        """The name of the function being built that made :meth:`local_tensor` ``node`` a
        tensor by a plain assignment (through the parameters it was passed on as)."""
        f = self.frame
        if node.id in f.stores:
            return node.id
        if node.id in f.tensor_params:
            return f.tensor_params[node.id]
        items = f.tensor_items.get(node.id)
        return next(iter(items.values())) if items else node.id

    def local_number(self, node: ast.expr, e: K.Expr, body: bool = False) -> Optional[ast.Name]:
        """The local tensor name (:meth:`local_tensor`) ``node`` computes from when ``node``
        folds to a number that is no bool (``e`` is its kernel IR): an i32 or fp32 tensor in
        Triton 3.6, which `and` / `or` / `not` cannot take. None otherwise (a comparison is an
        i1; a runtime value is the protocol walker's to classify). ``body``: in the kernel body
        too, where a name bound once by a plain assignment (`b = 1`) is such a tensor as well
        (:meth:`body_number`)."""
        if body and not self.in_partition:
            return self.body_number(node, e)
        # a partition's parameter given a name the kernel body binds once by a plain
        # assignment is such a tensor too (Triton's warp_specialize hands it over as one):
        # `a % 4` of a parameter given the body's `a = -7` was folded as Python's 1 where
        # Triton computes C's -3
        name = self._folded_tensor(node)
        return name if name is not None and tensor_dtype(fold(e)) is not None else None

    def body_number(self, node: ast.expr, e: K.Expr) -> Optional[ast.Name]:
        """The name of the kernel body ``node`` computes from (:func:`tensor_root`) that the
        body binds by a plain assignment, when ``node`` folds through the body's bindings
        (``body_value``) to a number that is no bool: Triton 3.6 holds `b = 1` of the kernel
        body as an i32 tensor as it does in a partition, so `b or N` fails to compile there
        too ("cannot bitcast data-type of size 32 to data-type of size 1"); read as the
        constant, the kernel body decided it and the kernel was verified."""
        root = tensor_root(node, lambda n: isinstance(n, ast.Name) and self._is_local_tensor(n))
        if root is None or tensor_dtype(self.body_value(e)) is None:
            return None
        return root

    def tensor_refusal(self, use: str, name: ast.Name, where: str, node: ast.AST,
                       **kw) -> TleError:
        """:func:`refusal` of the local tensor ``name`` in ``where`` at ``node``."""
        f = self.frame
        origin = self.tensor_origin(name)
        via = f", passed to '{f.function}' as `{name.id}`" \
            if name.id in f.tensor_params and name.id not in f.stores else ""
        st = f.env.get(name.id)
        value = st.value.value if st is not None and st.kind == "const" \
            and isinstance(st.value, K.Const) else None
        return self.err(refusal(use, name.id, where, origin, value, via, **kw), node,
                        check=CHECK)

    def string_binding(self, name: str, value: object, node: ast.AST) -> None:
        """Refuse a plain assignment of a string to ``name`` in a partition (or a helper it
        calls): Triton's visit_Assign converts the constant to a tensor and fails ("cannot
        convert a of type <class 'str'> to tensor"); read as a constant, such a kernel was
        verified. `name: tl.constexpr = "a"` stays a constexpr string."""
        if self.in_partition and isinstance(node, ast.Assign) and isinstance(value, str):
            raise self.err(refusal("string", name, f"`{ast.unparse(node)}`", value=value), node,
                           check=CHECK)
        other = _no_tensor(value)
        if self.in_partition and isinstance(node, ast.Assign) and other is not None:
            # bytes, a complex number, `...` (or a tuple holding one, or a string): Triton 3.6
            # converts each to a tensor as it does a string, and fails the same way
            raise self.err(f"`{ast.unparse(node)}`: a plain assignment makes `{name}` a tensor in "
                           f"Triton 3.6, and {other} cannot be one (\"cannot convert ... to "
                           f"tensor\"): the kernel does not compile", node, check=CHECK)

    def constexpr_operands(self, what: str, nodes: list) -> None:
        """Refuse a local tensor (:meth:`local_tensor`) where Triton 3.6 takes only constexprs
        (``what``: the construct). The frontend folded `B = 64` to its constant there and the
        lowering inlined it, so such a kernel was verified and compiled, where Triton refuses it
        ("arange's arguments must be of type tl.constexpr", "int32[] used as tl.static_range
        start value is not a constexpr")."""
        for n in nodes:
            name = self.local_tensor(n)
            if name is not None:
                raise self.tensor_refusal("constexpr", name, what, name)

    def folded_division(self, node: ast.BinOp, operands: list[tuple[ast.expr, K.Expr]]) -> None:
        """Refuse `q // 2` (`q % 2`) of a local number the builder folds, where C's rounding
        and Python's differ. Triton 3.6 holds `q = -7` as an i32 tensor and divides it as C
        does (`q // 2` is -3, `q % 2` is -1); the folded reading, which the verifier and the
        lowered Gluon both compute, is Python's -4 and 1. An event index `p + 4 + q // 2` was
        verified as p where Triton runs p + 1 (a hang). A literal `-7 // 2` stays Python's:
        Triton folds it as a constexpr. Every other binary operator of a local number goes to
        :meth:`folded_arithmetic` (this is the builder's one call for a binary operation)."""
        symbol = _AST_OPS.get(type(node.op))
        if isinstance(node.op, (ast.Div, ast.FloorDiv, ast.Mod)):
            self.i1_division(node, operands)
        if not isinstance(node.op, (ast.FloorDiv, ast.Mod)):
            if symbol is not None:
                self.folded_arithmetic(node, symbol, operands,
                                       K.BinOp(symbol, operands[0][1], operands[1][1]))
            return
        (lv, le), (rv, re) = operands
        x, y = fold(le), fold(re)
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (x, y)) or y == 0:
            return
        name = self.local_number(lv, le) or self.local_number(rv, re)
        if name is None:
            return
        op = "//" if isinstance(node.op, ast.FloorDiv) else "%"
        c_value, py_value = c_and_python(op, x, y)
        if c_value != py_value:
            raise self.tensor_refusal("folded division", name, f"`{ast.unparse(node)}`", node,
                                      op=op, result=(c_value, py_value))
        self.folded_arithmetic(node, op, operands, K.BinOp(op, le, re))

    def i1_division(self, node: ast.BinOp, operands: list[tuple[ast.expr, K.Expr]]) -> None:
        """Refuse `/`, `//` or `%` of a local bool the builder folds (an i1 tensor in Triton
        3.6: `b = C > 0`, an item of `a = (0 < C, C * C)`) and an integer: Triton refuses
        operands of different signedness ("Cannot use /, #, or % with triton.language.int32
        and triton.language.int1"), where the folded reading computed Python's `3 // True`
        (adversarial round 29, tests/test_folding_matches_triton.py's draw `C // a[0]`; the
        walker's rule for names it does not fold: Walker.i1_division_rule)."""
        def boolean(e: K.Expr, v: object) -> bool:  # a bool, folded or not (`0 < C`)
            return isinstance(v, bool) or v is None and (
                isinstance(e, (K.Compare, K.BoolOp)) or isinstance(e, K.UnaryOp) and e.op == "not")

        def item(e: K.Expr) -> K.Expr:  # `a[0]` of a tuple the function bound: that item
            path: list = []
            while isinstance(e, K.Subscript) and len(e.index) == 1 \
                    and isinstance(e.index[0], int):
                path.append(e.index[0])
                e = e.value
            st = self.frame.env.get(e.id) if path and isinstance(e, K.Name) else None
            v = getattr(st, "value", None)
            if v is None and path and isinstance(e, K.Name):  # the value the function bound
                v = next((x.value for x in reversed(getattr(self, "out", ()))
                          if isinstance(x, K.Assign) and x.target == e.id), None)
            for i in reversed(path):
                if not isinstance(v, K.TupleExpr) or not -len(v.items) <= i < len(v.items):
                    return e
                v = v.items[i]
            return v if isinstance(v, K.Expr) and path else e

        operands = [(n, item(e)) for n, e in operands]
        values = [fold(e) for _, e in operands]
        locals_ = [self._folded_tensor(n) for n, _ in operands]
        bools = [boolean(e, v) for (_, e), v in zip(operands, values)]
        i1 = [b and n is not None for b, n in zip(bools, locals_)]
        if i1[0] == i1[1]:
            return
        j = 1 if i1[0] else 0
        other = values[j]
        if bools[j] or isinstance(other, float) or other is None and not isinstance(
                operands[j][1], (K.Name, K.BinOp, K.UnaryOp, K.Const, K.Global)):
            return  # a Python bool beside the i1 takes its type; a float or unknown value
        name = ast.unparse(operands[1 - j][0])
        # the integer spelt as Python parses it: `t > 0 * 1` would compare with 0
        as_int = (f"{name} * 1" if isinstance(operands[1 - j][0], (ast.Name, ast.Constant))
                  else f"({name}) * 1")
        raise self.err(f"`{ast.unparse(node)}`: `{name}` is a bool Triton 3.6 holds as an i1 "
                       f"tensor (a plain assignment made it one), and it refuses "
                       f"`{_AST_OPS.get(type(node.op), '/')}` between an i1 and an integer "
                       f"(\"Cannot use /, #, or % with triton.language.int32 and "
                       f"triton.language.int1 because they have different signedness\"); write "
                       f"it as an integer (`{as_int}`)", node, check=CHECK)

    def folded_arithmetic(self, node: ast.AST, op: str, operands: list[tuple[ast.expr, K.Expr]],
                          built: K.Expr) -> None:
        """Refuse an operation (``op``: a binary operator, a comparison, "-u" / "~u" / "+u")
        on a local number the builder folds (:meth:`local_tensor`) where the value Triton
        computes differs from Python's, which the folded reading holds (``built``: the kernel
        IR of the operation). Triton 3.6 holds `b = 3` as an i32 tensor (`b = True` an i1):
        `b << 30` wraps to -2^30, `b * b` of 65536 to 0, `b > 16777216.5` of 16777217 compares
        in float32 (False), `True + True` is an i1's 0. Read with Python's values, a condition
        around a writer's commit, or an event index, was verified where Triton runs another
        protocol (a hang); the lowered Gluon held the folded literal too. Operands that are no
        local numbers are constexprs (Triton folds them as Python does); an operation the
        typed reading does not model (ir/promotion.py ``Unmodelled``) is left as it is."""
        values = [fold(e) for _, e in operands]
        if not all(isinstance(v, (bool, int, float)) for v in values):
            return
        locals_ = [self._folded_tensor(n) for n, _ in operands]
        name = next((n for n in locals_ if n is not None), None)
        if name is None:
            return
        # a local number is the tensor to_tensor makes of it; any other operand a Python number
        typed = [(v, promotion.python_number_type(v) if local is not None
                  else promotion.weak_type(v)) for v, local in zip(values, locals_)]
        if any(t is None for _, t in typed):
            return
        py_value = fold(built)
        if op in ("<<", ">>") and isinstance(values[1], int) and not isinstance(values[1], bool) \
                and not 0 <= values[1] < 32 and typed[0][1] in (promotion.PY_INT, "int32", "int1"):
            # an i32 shift by the width or more: undefined on the GPU (the message of the
            # names bound more than once, WalkRules)
            raise self.tensor_refusal("shift", name, f"`{ast.unparse(node)}`", node,
                                      shift=values[1], result=py_value)
        try:
            triton_value, t = promotion.typed_result(op, typed)
        except promotion.Unmodelled:
            return
        except promotion.Refused as e:
            triton_value, how = None, str(e)
        else:
            if py_value is None or triton_value == py_value \
                    and isinstance(triton_value, float) == isinstance(py_value, float):
                return
            how = _difference(t, op)
        raise self.tensor_refusal("folded arithmetic", name, f"`{ast.unparse(node)}`", node,
                                  result=(triton_value, py_value, how))

    def _folded_tensor(self, node: ast.expr) -> Optional[ast.Name]:
        """:meth:`local_tensor` of ``node``, or a partition parameter given a name the kernel
        body binds once by a plain assignment (a tensor Triton's warp_specialize hands over)."""
        if not self.in_partition:
            return None
        f = self.frame

        def item(n: ast.Name, path: tuple) -> bool:
            return self._is_tensor_item(n, path) or n.id not in f.stores and covers(
                f.body_items.get(n.id, ()), path)

        return tensor_root(node, lambda n: self._is_local_tensor(n) or (
            isinstance(n, ast.Name) and n.id in f.body_tensors and n.id not in f.stores), item)

    def folded_cdiv(self, node: ast.Call, operands: list[tuple[ast.expr, K.Expr]]) -> None:
        """``tl.cdiv(b, d)`` of a local number ``b``: Triton's cdiv is ``(b + d - 1) // d`` on
        the tensor, with its wrap and C's rounding (``tl.cdiv(-4, 3)`` of an i32 -4 is 0, of
        2^31 - 1 it is -715827882; folded with Python's, -1 and 715827883). Refused where they
        differ, as :meth:`folded_arithmetic` (ir/promotion.typed_cdiv)."""
        values = [fold(e) for _, e in operands]
        if len(values) != 2 or not all(isinstance(v, int) and not isinstance(v, bool)
                                       for v in values) or values[1] == 0:
            return
        locals_ = [self._folded_tensor(n) for n, _ in operands]
        name = next((r for r in locals_ if r is not None), None)
        if name is None:
            return
        x, d = values
        py_value = -(-x // d)
        try:
            triton_value = promotion.typed_cdiv(*[
                (v, promotion.python_number_type(v) if local is not None
                 else promotion.weak_type(v)) for v, local in zip(values, locals_)])
        except promotion.Unmodelled:
            return
        except promotion.Refused as e:
            raise self.tensor_refusal("folded arithmetic", name, f"`{ast.unparse(node)}`", node,
                                      result=(None, py_value, str(e))) from None
        if triton_value != py_value:
            raise self.tensor_refusal("folded arithmetic", name, f"`{ast.unparse(node)}`", node,
                                      result=(triton_value, py_value, "`b + d - 1` in the "
                                              "tensor's type and C's truncating `//`, as "
                                              "Triton's tl.cdiv computes it"))

    def tensor_power(self, node: ast.BinOp, operands: list[tuple[ast.expr, K.Expr]]) -> None:
        """Refuse `q ** 2` (`2 ** q`) of a local number: folded, it was read as a constexpr
        power; Triton holds q as a tensor, which has no `__pow__`."""
        for v, e in operands:
            name = self.local_number(v, e, body=True)
            if name is not None:
                raise self.tensor_refusal("power", name, f"`{ast.unparse(node)}`", node)

    def tensor_truth(self, node: ast.AST, operands: list[tuple[ast.expr, K.Expr]],
                     verb: str) -> None:
        """Refuse `not b` and an `and` / `or` in which Triton 3.6 bitcasts a local number to i1
        (read as a constant, it was dropped by `and`, or decided `not`). The operands are walked
        as Triton's code_generator.visit_BoolOp walks them: a constant that decides the result
        ends the walk, another one is dropped, each tensor is kept, and two kept or more are each
        bitcast; `not` bitcasts its operand."""
        where = f"`{ast.unparse(node)}`"
        if verb == "not":
            v, e = operands[0]
            name = self.local_number(v, e, body=True)
            if name is not None:
                raise self.tensor_refusal("truth", name, where, node, verb=verb)
            return
        kept, local = 0, None
        for v, e in operands:
            name = self.local_number(v, e, body=True)
            if name is not None:
                kept, local = kept + 1, local or name
                continue
            c = fold(e)
            if c is None:
                kept += 1
            elif bool(c) == (verb == "or"):
                break
        if local is not None and kept > 1:
            raise self.tensor_refusal("truth", local, where, node, verb=verb)


class WalkRules:
    """The rule in the protocol walker (frontend/walker.py's Walker), on the kernel IR: names a
    partition (or a helper it calls) binds to a compile-time number by an assignment that is
    not annotated (``tensor_consts``); the builder folds those bound once, so these are mostly
    the names bound more than once, which the lowered Gluon keeps as tensors too."""

    def note_assignment(self, s: K.Assign, value, generated: bool = False) -> None:
        """Record whether ``s`` makes its target a tensor of a compile-time number. A
        ``generated`` one is the builder's (a helper's parameter bound to its argument, `C - 4`),
        which the lowered Gluon assigns as the source would: a tensor there too, though Triton
        passes a constexpr argument to a jit function as a constexpr."""
        self.tensor_item_paths.pop(s.target, None)
        items = self.tensor_tuple(value)
        if generated and items:
            # a helper's parameter bound to a tuple written in the call (`(b, 1)`): the items
            # that are tensors in the caller are tensors there, the others constexprs
            paths = frozenset(self.tensor_paths(s.value))
            items = bool(paths)
            if items and () not in paths:
                self.tensor_item_paths[s.target] = paths
        if self.partition is not None and (self.tensor_number(value) or items) \
                and not self.annotated(s):
            self.tensor_consts.add(s.target)
            if generated:
                self.generated_consts.add(s.target)
            else:
                self.generated_consts.discard(s.target)
        else:
            self.tensor_consts.discard(s.target)
            self.generated_consts.discard(s.target)

    def tensor_paths(self, e: K.Expr) -> dict:
        """The index paths of the items of the tuple expression ``e`` that are tensors of the
        partition (computed from a name of ``tensor_consts``), as the keys of a dict."""
        def leaf(x: K.Expr, at: tuple) -> dict:
            if isinstance(x, K.Name) and x.id in self.tensor_item_paths:
                return dict.fromkeys(at + p for p in self.tensor_item_paths[x.id])
            return {at: None} if self.tensor_const(x) is not None else {}

        return item_paths(e, leaf)

    def tensor_item(self, name: K.Name, path: tuple) -> bool:
        """Whether item ``path`` of the tensor name ``name`` is a tensor: every item of a tuple
        a plain assignment binds is; of a helper's parameter bound to a tuple written in the
        call, those ``tensor_paths`` found."""
        paths = self.tensor_item_paths.get(name.id)
        return paths is None or covers(paths, path)

    def annotated(self, s: K.Assign) -> bool:
        """Whether ``s`` is written `name: tl.constexpr = value`, which Triton keeps a
        constexpr (the kernel IR does not tell it from a plain assignment)."""
        node = self.k.source.stmt(s.loc, ast.AnnAssign)
        return node is not None and ast.unparse(node.annotation).split(".")[-1] == "constexpr"

    @staticmethod
    def tensor_number(v) -> bool:
        """Whether the value ``v`` is a compile-time integer (not a bool) or float, which Triton
        makes a tensor when a kernel function assigns it to a name; or a constexpr argument the
        reading leaves unbound (`b = C`), which is such a number unless the launch passes a bool
        (the refusal then says to bind it as a constexpr, which Triton takes either way)."""
        from .values import Aff, Const, KernelArg

        return isinstance(v, Aff) and not v.runtime \
            or isinstance(v, Const) and isinstance(v.value, float) \
            or isinstance(v, KernelArg) and v.constexpr

    @classmethod
    def tensor_tuple(cls, v) -> bool:
        """Whether ``v`` is a tuple holding such a number (at any depth): Triton's visit_Assign
        makes each item of a tuple it assigns a tensor (`pr = (65536, 1)`: `pr[0] * pr[0]` is
        the i32 product, 0)."""
        from .values import TupleV

        return isinstance(v, TupleV) and any(
            cls.tensor_number(x) or cls.tensor_tuple(x) for x in v.items)

    def tensor_const(self, e: K.Expr) -> Optional[K.Name]:
        """The name of ``tensor_consts`` that ``e`` computes from (:func:`tensor_root`)."""
        return tensor_root(e, lambda n: n.id in self.tensor_consts, self.tensor_item)

    def tensor_refusal(self, use: str, name: K.Name, e: K.Expr, **kw) -> TleError:
        py = self.k.names.py(name.id)
        via = ", as the lowered kernel binds the helper's parameter to its argument" \
            if name.id in self.generated_consts else ""
        return self.err(refusal(use, py, f"`{self.src(e)}`", via=via, **kw), e, check=CHECK)

    def tensor_constexpr(self, e: K.Expr, where: str, at) -> None:
        """Refuse ``e`` computed from a tensor name where Triton 3.6 takes compile-time values
        only (``where``: the construct, quoted; ``at``: where to say it): the bound of a
        tl.static_range or an argument of tl.arange given a helper's parameter that the builder
        assigns (its argument computed from a name the caller binds more than once) was verified,
        and the Gluon, which holds the parameter as an i32 tensor, did not compile. The builder
        refuses the names a function binds itself (BuildRules.constexpr_operands)."""
        name = self.tensor_const(e)
        if name is None:
            return
        via = ", as the lowered kernel binds the helper's parameter to its argument" \
            if name.id in self.generated_consts else ""
        raise self.err(refusal("constexpr", self.k.names.py(name.id), where, via=via), at,
                       check=CHECK)

    def tensor_power(self, e: K.BinOp) -> None:
        """Refuse `q ** 2` of a tensor name: a tensor has no `__pow__`."""
        if e.op != "**":
            return
        for x in (e.lhs, e.rhs):
            name = self.tensor_const(x)
            if name is not None:
                raise self.tensor_refusal("power", name, e)

    def tensor_truth(self, e: K.Expr, operand: K.Expr, verb: str) -> None:
        """Refuse ``operand`` of `and` / `or` / `not` ``e`` that Triton bitcasts to i1 when it is
        (computed from) a tensor name of a compile-time number."""
        name = self.tensor_const(operand)
        if name is not None:
            raise self.tensor_refusal("truth", name, e, verb=verb)

    def tensor_overflow(self, e, result, at=None) -> None:
        """Refuse `q * 65536` (`+`, `-`, `<<`) of a tensor name whose compile-time result leaves
        i32: the verifier computed Python's 4294967296, the lowered kernel (as Triton, which
        folds the i32 product to 0) a wrapped i32, so `if q * 65536 != 0:` around events was
        verified and never ran (q = 65536 bound twice)."""
        from ..ir.i32 import fits_i32
        from .values import Aff

        if e.op not in ("+", "-", "*", "<<", "//"):
            return
        # (a unary `-` too: `-q` of q = -2147483648 bound twice is 2147483648 to the verifier;
        # `q // -1` is 2147483648 there too, an i32 division that overflows on the GPU; ``at``:
        # the `tl.cdiv` call whose `x + (div - 1)` ``e`` stands for)
        operands = (e.operand,) if isinstance(e, K.UnaryOp) else (e.lhs, e.rhs)
        name = next((n for n in (self.tensor_const(x) for x in operands) if n), None)
        a = self.as_aff(result) if name is not None and isinstance(result, Aff) else None
        if a is not None and a.is_const and not fits_i32(a.const):
            raise self.tensor_refusal("overflow", name, at if at is not None else e,
                                      result=a.const)

    def tensor_shift(self, e: K.BinOp, left, right, result) -> None:
        """Refuse `q >> 40` (`<<`) of (or by) a tensor name, the shift a compile-time number of
        bits outside [0, 31]: the verifier reads Python's -1 (q = -1 bound twice), the lowered
        kernel (as Triton, which only warns) an i32 shift by the width or more, undefined (LLVM's
        poison; the compiled kernel computed 0 there), so a reader looping `N + 1 + (q >> 40)`
        times was verified against a writer's N."""
        from .values import Aff

        amount = shift_out_of_i32(self, e, left, right)
        if amount is None:
            return
        name = next((n for n in (self.tensor_const(x) for x in (e.lhs, e.rhs)) if n), None)
        if name is not None:
            a = self.as_aff(result) if isinstance(result, Aff) else None
            value = a.const if a is not None and a.is_const else None
            raise self.tensor_refusal("shift", name, e, shift=amount, result=value)

    def tensor_division(self, e: K.BinOp, left, right, at=None) -> None:
        """Refuse `q // 2` (`q % 2`) of a name the partition binds to a compile-time number
        and the builder did not fold, where C's division and Python's differ (or may: a value
        of a tl.static_range variable). A name bound once to a constant the builder folds, and
        refuses such a division of it itself (BuildRules.folded_division); any other stays a
        name in the kernel IR, which the lowered Gluon (as Triton) holds as an i32 tensor and divides as
        C does: `q = -7` twice, then `q // 2` is -3 on the GPU where the verifier computed -4;
        `q = i - 1` in a tl.static_range over i, then `if q % 2 == 1:` around events, is -1 %
        2 = -1 on the GPU at i = 0, where the verifier read 1 and verified events that never
        run (a hang)."""
        if e.op not in ("//", "%"):
            return
        names = [n for n in (self.tensor_const(x) for x in (e.lhs, e.rhs)) if n is not None]
        if not names or self.is_runtime(left) or self.is_runtime(right):
            return
        a, b = self.as_aff(left), self.as_aff(right)
        if a is not None and b is not None and a.is_const and b.is_const and b.const != 0:
            c_value, py_value = c_and_python(e.op, a.const, b.const)
            if c_value == py_value:
                return
        # (``at``: the `tl.cdiv` call whose `//` ``e`` stands for)
        from .values import TupleV

        raise self.tensor_refusal("division", names[0], at if at is not None else e, op=e.op,
                                  item=isinstance(self.env.get(names[0].id), TupleV),
                                  once=names[0].id not in self.multi_assigned)
