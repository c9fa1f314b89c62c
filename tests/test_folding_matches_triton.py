"""A verdict rests on the numbers the frontend folds: random compile-time integers against Triton.

The verifier reads loop bounds, event indices and conditions as integers; where they hold numbers
and names bound to numbers, the frontend folds them. Triton 3.6 computes the same expressions by
its own rules: a number written in place or a ``tl.constexpr`` name is a Python int (Python's
``//`` and ``%``), a name a plain assignment binds is an i32 scalar tensor (C's ``//`` and ``%``,
wrapping), ``tl.cdiv`` / ``min`` / comparisons / shifts by theirs. A fold that differs from
Triton's value shifts a loop's trip count or an index, and a kernel verified as correct hangs.

Hypothesis draws bindings and an integer expression ``X`` of them, of numbers and of the constexpr
parameter ``C`` (3), through arithmetic, shifts, ``~``, ``abs``, ``min`` / ``max``, ``tl.cdiv`` /
``tl.minimum`` / ``tl.maximum`` / ``tl.where``, comparisons, conditional expressions and a helper,
and ``v``, the value Python's own evaluation gives ``X`` (``tl.cdiv`` as Triton's constexpr form,
``tl.minimum`` / ``tl.where`` / the helper ``add`` as their Python counterparts). The reader of a
ring then uses ``X - v`` where its correct protocol needs 0: in its loop bound (``range(N + X -
v)`` against the writer's ``range(N)``), in its event index (``wait(p + X - v)``) or as its
condition (``if X == v:`` around its events); the bindings are the reader's own, or the kernel
body's handed to the reader (as Triton's jit call hands them: a plain name a tensor, a constexpr a
constexpr). The oracle is Triton itself: plain Triton compiles ``tl.store(x_ptr + (X), 1.0)`` after
the same bindings, and the constant offset of the store in its TTIR is Triton's value of ``X``.
tle-dump may say verified only where Triton's value is ``v`` (then the kernel is correct), and must
refuse where Triton refuses ``X``.
"""

from __future__ import annotations

import ast
import contextlib
import io
import re
import sys
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("triton")

from tests.adversarial_oracles import triton_compile_error, triton_ttir  # noqa: E402

NUMBERS = [0, 1, 2, 3, 4, 5, 7, 8, 31, 100, 255, 256, -1, -2, -3, -4, -7, -8, -100, 1000003,
           2**31 - 1, -2**31, 2**31, 2**32 + 3]
SMALL = st.sampled_from([n for n in NUMBERS if abs(n) < 2**20])

PLAIN = '''
import triton
import triton.language as tl


@triton.jit
def add(x, y):
    return x + y


@triton.jit
def k(x_ptr, N, C: tl.constexpr):
BINDINGS
    tl.store(x_ptr + (X), 1.0)
'''

# the bindings in the kernel body, handed to a jit function that stores at X (what Triton's
# warp_specialize hands a partition: tensors as tensors, constexprs as constexprs)
PLAIN_BODY = '''
import triton
import triton.language as tl


@triton.jit
def add(x, y):
    return x + y


@triton.jit
def part(x_ptr, C, a, b):
    tl.store(x_ptr + (X), 1.0)


@triton.jit
def k(x_ptr, N, C: tl.constexpr):
BINDINGS
    part(x_ptr, C, a, b)
'''

RING = '''
import triton.language as tl
import tle_compiler as tle


@tle.jit
def k(x_ptr, y_ptr, N, C: tl.constexpr):
    tle.assume(N >= 0)
BODY_BINDINGS
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, y_ptr, N, C, PASSED))],
                            [4], [232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    for p in range(N):
        slot = w.acquire(p)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + p * 64 + tl.arange(0, 64)))
        w.commit(p)


def consume(kv, y_ptr, N, C, a, b):
    r = kv.reader()
BINDINGS
READER


def add(x, y):
    return x + y


DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32", "C": "constexpr"},
                  "constexprs": {"C": 3}}
'''

READERS = {
    "bound": '''
    for p in range(N + (X) - (V)):
        res = r.wait(p)
        tl.store(y_ptr + p * 64 + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))
        r.release(p)''',
    "index": '''
    for p in range(N):
        res = r.wait(p + (X) - (V))
        tl.store(y_ptr + p * 64 + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))
        r.release(p + (X) - (V))''',
    "condition": '''
    for p in range(N):
        if (X) == (V):
            res = r.wait(p)
            tl.store(y_ptr + p * 64 + tl.arange(0, 64),
                     tl.load(tle.gpu.local_ptr(res.slot.tile)))
            r.release(p)''',
}


def expr(names: list[str]):
    leaves = [SMALL.map(str), st.just("C")] + ([st.sampled_from(names)] if names else [])
    leaf = st.one_of(*leaves)

    def grow(inner):
        return st.one_of(
            st.tuples(inner, st.sampled_from(["+", "-", "*", "//", "%", "&", "|", "^", "<<",
                                              ">>"]), inner)
            .map(lambda a: f"({a[0]} {a[1]} {a[2]})"),
            st.tuples(st.sampled_from(["-", "~"]), inner).map(lambda a: f"({a[0]}{a[1]})"),
            inner.map(lambda a: f"abs({a})"),
            st.tuples(st.sampled_from(["min", "max", "tl.cdiv", "tl.minimum", "tl.maximum",
                                       "add"]),
                      inner, inner).map(lambda a: f"{a[0]}({a[1]}, {a[2]})"),
            st.tuples(inner, st.sampled_from(["<", ">=", "=="]), inner)
            .map(lambda a: f"({a[0]} {a[1]} {a[2]})"),
            st.tuples(inner, inner, inner).map(lambda a: f"({a[0]} if {a[1]} > 0 else {a[2]})"),
            st.tuples(inner, inner, inner).map(lambda a: f"tl.where({a[0]} > 0, {a[1]}, {a[2]})"),
        )

    return st.recursive(leaf, grow, max_leaves=4)


@st.composite
def cases(draw):
    """(bindings, X): each binding a plain or a constexpr-annotated name of a number, of an
    expression of the names before it, or of a pair of them (its items read as `a[0]`,
    `a[1]`)."""
    lines, names = [], []
    for name in ["a", "b"][:draw(st.integers(0, 2))]:
        pair = draw(st.integers(0, 3)) == 0
        value = draw(st.one_of(SMALL.map(str), expr(names)))
        if pair:
            value = f"({value}, {draw(st.one_of(SMALL.map(str), expr(names)))})"
        if draw(st.booleans()):
            lines.append(f"{name}: tl.constexpr = {value}")
        else:
            lines.append(f"{name} = {value}")
        names += [f"{name}[0]", f"{name}[1]"] if pair else [name]
    return "\n".join(lines), draw(expr(names))


class _Cdiv:
    """Python's reading of the expression (what a fold that ignored Triton's rules computes):
    tl.cdiv as Triton's constexpr cdiv, (a + b - 1) // b; tl.minimum / tl.maximum as min / max,
    tl.where as a conditional expression."""

    @staticmethod
    def cdiv(a, b):
        return (a + b - 1) // b

    minimum, maximum = staticmethod(min), staticmethod(max)

    @staticmethod
    def where(c, a, b):
        return a if c else b


def python_env() -> dict:
    """The names Python's reading evaluates an expression with (C = 3, tl, the helper)."""
    return {"C": 3, "tl": _Cdiv, "add": lambda a, b: a + b}


def split_bindings(bindings: str) -> list[tuple[str, str]]:
    """(name, value text) of each binding line, annotated or not."""
    return [tuple(re.split(r"(?:: tl\.constexpr)? = ", line, maxsplit=1))
            for line in bindings.splitlines()]


def python_value(bindings: str, x: str):
    env = python_env()
    try:
        for name, value in split_bindings(bindings):
            env[name] = eval(value, {}, env)  # noqa: S307 - the test's own expressions
        v = eval(x, {}, env)  # noqa: S307
    except (ZeroDivisionError, ValueError, OverflowError):
        return None
    return int(v) if isinstance(v, (int, bool)) else None


def leaves_64_bits(bindings: str, x: str) -> bool:
    """Whether any subexpression of the bindings or X (Python's reading) leaves 64 bits: where
    such a number meets Triton's tensors is pinned by the cases below, not drawn."""
    env = python_env()
    for name, text in split_bindings(bindings) + [(None, x)]:
        for node in ast.walk(ast.parse(text, mode="eval")):
            if not isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Call, ast.Constant)):
                continue
            try:
                v = eval(compile(ast.Expression(node), "<x>", "eval"), {}, env)  # noqa: S307
            except Exception:  # noqa: BLE001 - undefined parts are python_value's to judge
                continue
            if isinstance(v, int) and not -2**63 <= v < 2**63:
                return True
        if name is not None:
            try:
                env[name] = eval(text, {}, env)  # noqa: S307
            except Exception:  # noqa: BLE001
                return False
    return False


def with_both_names(bindings: str) -> str:
    """``bindings`` with `a` and `b` bound (to 0 where they are not), for the kernel body's
    hand-off of both."""
    bound = {re.split(r"(?::| =)", line, maxsplit=1)[0] for line in bindings.splitlines()}
    extra = [f"{n} = 0" for n in ("a", "b") if n not in bound]
    return "\n".join(extra + ([bindings] if bindings else []))


def triton_value(tmp_path, monkeypatch, bindings: str, x: str, body: bool = False):
    """Triton's value of X after the bindings (its TTIR's constant store offset), or the
    exception where it refuses them; with ``body``, the bindings in the kernel body and X in
    the jit function they are handed to."""
    if body:
        src = PLAIN_BODY.replace("BINDINGS", textwrap.indent(with_both_names(bindings), "    "))
        src = src.replace("(X)", f"({x})")
    else:
        src = PLAIN.replace("BINDINGS", textwrap.indent(bindings or "pass", "    "))
        src = src.replace("X", x)
    err = triton_compile_error(tmp_path, monkeypatch, src, "fold")
    if err is not None:
        return err
    ttir = triton_ttir(tmp_path, monkeypatch, src, "fold")
    m = re.search(r"tt\.addptr %\w+, %([\w-]+)", ttir)
    if m is None:
        return 0
    c = re.search(rf"%{m.group(1)} = arith\.constant (-?\d+) : i(\d+)", ttir)
    return int(c.group(1)) if c else "not a constant"


def verdict(tmp_path, text: str) -> tuple[int, str]:
    """tle-dump's exit code and words on ``text``, read with C = 3 (the oracle's value)."""
    from tle_compiler.cli.dump import main as tle_dump

    path = tmp_path / "kernel.py"
    path.write_text(text)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        rc = tle_dump(["-q", "--param", "C=3", str(path)])
    return rc, out.getvalue()


def ring(bindings: str, x: str, v: int, where: str, body: bool = False) -> str:
    """The TLE kernel of a case: the bindings in the reader, or with ``body`` in the kernel
    body (handed to the reader as its parameters `a` and `b`)."""
    reader = READERS[where].strip("\n").replace("(X)", f"({x})").replace("(V)", f"({v})")
    if body:
        return (RING.replace("BODY_BINDINGS", textwrap.indent(with_both_names(bindings), "    "))
                .replace("PASSED", "a, b").replace("BINDINGS", "    pass")
                .replace("READER", reader))
    return (RING.replace("BODY_BINDINGS\n", "").replace(", PASSED", "")
            .replace("def consume(kv, y_ptr, N, C, a, b):", "def consume(kv, y_ptr, N, C):")
            .replace("BINDINGS", textwrap.indent(bindings, "    ") if bindings else "    pass")
            .replace("READER", reader))


def check(tmp_path, monkeypatch, bindings: str, x: str, where: str, drawn: bool = False,
          body: bool = False) -> str:
    """The property for one case (``drawn``: a random one, skipped where a part leaves 64
    bits; ``body``: the bindings in the kernel body); returns which branch it took."""
    v = python_value(bindings, x)
    if v is None or abs(v) > 2**20 or drawn and leaves_64_bits(bindings, x):
        return "skipped"  # Python cannot evaluate it, the sum would leave i32, or a part 64 bits
    want = triton_value(tmp_path, monkeypatch, bindings, x, body)
    rc, out = verdict(tmp_path, ring(bindings, x, v, where, body))
    shown = (f"{where}{' (bindings in the kernel body)' if body else ''}: {bindings!r}, X = {x}, "
             f"Python's value {v}, Triton's {want!r}")
    if isinstance(want, Exception):
        assert rc != 0, f"Triton refuses X but tle-dump verified the kernel ({shown})\n{out}"
        return "both refused"
    if rc == 0:
        assert want == v, f"tle-dump verified a kernel that hangs or reads the wrong slot " \
                          f"({shown})\n{out}"
        return "verified"
    assert rc in (1, 2, 3), out
    return "refused" if want == v else "rightly refused"


class _SysPath:
    """What the Triton oracle needs of pytest's monkeypatch (hypothesis runs many examples in
    one test, where a function-scoped fixture would be shared): the module directory on
    sys.path."""

    @staticmethod
    def syspath_prepend(path) -> None:
        if str(path) not in sys.path:
            sys.path.insert(0, str(path))


@settings(max_examples=50)
@given(case=cases(), where=st.sampled_from(list(READERS)), body=st.booleans())
def test_a_folded_number_is_the_number_triton_computes(tmp_path_factory, case, where, body):
    bindings, x = case
    check(tmp_path_factory.mktemp("fold"), _SysPath, bindings, x, where, drawn=True, body=body)


@pytest.mark.parametrize("bindings,x", [
    ("a: tl.constexpr = tl.minimum(C, 3)", "a + 1"),
    ("a: tl.constexpr = tl.cdiv(C, 2)", "a * 2"),
    ("a: tl.constexpr = tl.where(C > 2, 3, 4)", "1 - a"),
    ("b = 7\na: tl.constexpr = b + 1", "a + 1"),
    ("a: tl.constexpr = (-tl.cdiv((3 < 1), tl.minimum(C, 3)))\nb = (-(-(C | a)))", "1"),
], ids=["tl.minimum", "tl.cdiv", "tl.where", "a plain name", "found first"])
def test_a_constexpr_bound_to_a_tensor_is_refused_as_triton_refuses_its_use(tmp_path, monkeypatch,
                                                                            bindings, x):
    """`a: tl.constexpr = tl.minimum(C, 3)`: a tensor in a constexpr, on which any operator
    fails in Triton 3.6 ("_semantic argument must be provided outside of JIT functions"). The
    frontend folded the name to 3 and verified the kernel (the last case is the body the
    random search found); it refuses the binding now."""
    assert check(tmp_path, monkeypatch, bindings, x, "bound") == "both refused"
    rc, out = verdict(tmp_path, ring(bindings, x, 0, "bound"))
    assert rc == 1 and "wraps a tensor in the constexpr" in out, out


@pytest.mark.parametrize("bindings,x", [("a: tl.constexpr = max(C, 3)", "a + 1"),
                                        ("a: tl.constexpr = C * 2 - 7", "a % 4"),
                                        ("a: tl.constexpr = -7", "a // 2")])
def test_a_constexpr_of_numbers_is_folded_as_triton_computes_it(tmp_path, monkeypatch, bindings,
                                                                x):
    for where in READERS:
        assert check(tmp_path, monkeypatch, bindings, x, where) == "verified"


def test_a_plain_name_bound_beyond_64_bits_is_refused(tmp_path):
    """`b = 2 ** 70`: a plain assignment makes b a tensor, and Triton 3.6 cannot make one of an
    integer outside i64 and u64 ("Nonrepresentable integer"). The frontend refused `2 ** 64`
    but not a power its fold gives up on (it folds powers up to 64): verified before."""
    assert check(tmp_path, _SysPath, "b = 2**70", "1", "bound") == "both refused"


@pytest.mark.parametrize("bindings,x", [("", "tl.cdiv(2**70, C) - tl.cdiv(2**70, C)"),
                                        ("", "add(2**70, 1) - 2**70"), ("b = C << 256", "1")])
def test_a_number_beyond_64_bits_meeting_a_tensor_is_refused(tmp_path, bindings, x):
    """Triton makes a tensor of what a jit function (tl.cdiv, a helper) returns and of what a
    plain assignment binds, and cannot of an integer outside i64 and u64: refused as Triton
    refuses it. Strict xfails until the walker read Python numbers of any size
    (frontend/python_numbers.py) and the builder checked a helper's returned number: the
    frontend had folded each and verified the kernel."""
    assert check(tmp_path, _SysPath, bindings, x, "bound") == "both refused"


@pytest.mark.parametrize("bindings,x", [("", "tl.cdiv(2**40, C) - tl.cdiv(2**40, C)"),
                                        ("", "add(2**40, 1) - 2**40"), ("b = C << 40", "1"),
                                        ("b: tl.constexpr = C << 256", "1")])
def test_a_number_a_tensor_can_hold_or_a_wide_constexpr_is_verified(tmp_path, bindings, x):
    """The twins of the test above: within 64 bits Triton makes the tensor, and a name bound
    with `tl.constexpr` stays a Python number of any size (visit_AnnAssign), so the kernel
    compiles and is verified."""
    assert check(tmp_path, _SysPath, bindings, x, "bound") == "verified"


@pytest.mark.parametrize("x,where", [("a % 4", "bound"), ("a // 2", "index"),
                                     ("(a % 4 == 1)", "condition")])
def test_a_kernel_body_number_handed_to_a_partition_divides_as_c_does(tmp_path, x, where):
    """The kernel body's `a = -7` handed to the reader: a tensor there (Triton's
    warp_specialize hands it over as one), so `a % 4` is C's -3. The builder folded the
    parameter and read Python's 1, and the kernel (the reader waiting three tiles more than are
    committed) was verified; found by the random cases with bindings in the kernel body."""
    assert check(tmp_path, _SysPath, "a = -7", x, where, body=True) == "rightly refused"


@pytest.mark.parametrize("x,where", [("(C // a)", "bound"), ("(C % a)", "bound"),
                                     ("(C // a)", "index")])
def test_a_constexpr_divided_by_a_partitions_tensor_number_divides_as_c_does(tmp_path, x, where):
    """The reader's own `a = -2` (a tensor in Triton 3.6: a plain assignment) divides the
    constexpr C = 3 the partition is given: C's truncating `3 // -2` is -1 and `3 % -2` is 1,
    Python's -2 and -1. The reading keyed the quotient with Python's and the kernel (the reader
    waiting a tile more than is committed) was verified; found by the random cases."""
    assert check(tmp_path, _SysPath, "a = -2", x, where) == "rightly refused"
