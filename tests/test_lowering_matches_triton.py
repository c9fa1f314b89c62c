"""What the lowering computes is what Triton computes: random loop bodies, read both ways.

The project's rule for the code inside a partition: compute what plain Triton 3.6 computes, or
refuse the construct at its line. Adversarial rounds checked it one spelling at a time; this test
draws the spellings. A body (tests/triton_diff.py) binds names to numbers (plain, annotated
``tl.constexpr``, derived from other names, rebound under a run-time ``if`` or in a loop) and to
tile expressions, and stores an expression of the tile ``t`` (int8 / uint8 / int16 / int32 / fp16
/ bf16 / fp32), those names, literals, the loop variable, a run-time argument and masked loads
(``mask=``, ``other=``), through arithmetic, comparisons, shifts, casts and bitcasts,
``tl.where``, conditional expressions, ``tl.maximum`` / ``tl.minimum`` / ``tl.abs`` /
``tl.cdiv``, Python's ``min`` / ``max``, ``tl.exp`` / ``tl.sqrt`` / ``tl.floor`` / ``tl.log2``,
reductions broadcast back against ``t``, ``tl.full`` and a helper's sum, into a pointer of
another type. Each body is compiled by plain Triton and by
TLE (tle-dump's verdict, then the lowering and Gluon's compile), in the ring's reader or in its
writer (the value stored into the slot, a field of the pointer's type, which tl.store converts
as it converts a store to global memory); in the reader, names the kernel body binds (k0, k1:
plain, constexpr, derived) may be handed over, as plain Triton's jit call hands them, and:

* where Triton refuses the body, TLE refuses it (tle-dump's error or the lowering's, not a crash);
* where both compile, the value each stores depends on the same operations with the same types
  and constants (tests/triton_diff.value_slices);
* TLE never crashes: a refusal is a TleError or tle-dump's exit code.

TLE refusing a body Triton compiles is allowed (the rule's second branch); the test reports how
many it refused, and a fixed set of bodies Triton compiles pins the ones TLE must accept.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("triton.experimental.gluon")

from tests.triton_diff import SIG, outcome, tle_source  # noqa: E402
from tle_compiler.diagnostics import TleVerificationWarning  # noqa: E402

pytestmark = pytest.mark.filterwarnings(f"ignore::{TleVerificationWarning.__module__}."
                                        f"{TleVerificationWarning.__name__}")

INTS = [0, 1, 2, 3, 7, 100, 127, 128, 255, 256, 300, -1, -3, -100, 2**31 - 1, 2**31,
        3000000000, 2**32 + 5, -2**31]
FLOATS = [0.5, 1.5, -2.0, 3.0, 1e10, 1e-3]
DTYPES = list(SIG)
STORE_TYPES = ["i8", "i16", "i32", "i64", "u8", "fp16", "bf16", "fp32"]
NAMES = ["b0", "b1", "b2"]

number = st.one_of(st.sampled_from(INTS).map(str), st.sampled_from(FLOATS).map(repr))


def expr(names: list[str]):
    """An expression of the tile ``t``, ``names`` (bound before it), literals, ``p`` and ``M``."""
    loads = st.tuples(st.sampled_from(["t > 0", "offs < M", "M > 2"]), number).map(
        lambda a: f"tl.load(x_ptr + p * 2048 + offs, mask={a[0]}, other={a[1]})")
    leaves = [st.just("t"), st.just("t"), number, st.sampled_from(["p", "M"]), loads]
    if names:
        leaves.append(st.sampled_from(names))
    leaf = st.one_of(*leaves)

    def grow(inner):
        binop = st.sampled_from(["+", "-", "*", "/", "//", "%", "&", "|", "^", "<<", ">>"])
        cmp = st.sampled_from(["<", "<=", ">", ">=", "==", "!="])
        dt = st.sampled_from(DTYPES)
        return st.one_of(
            st.tuples(inner, binop, inner).map(lambda a: f"({a[0]} {a[1]} {a[2]})"),
            inner.map(lambda a: f"(-{a})"),
            st.tuples(inner, dt).map(lambda a: f"({a[0]}).to(tl.{a[1]})"),
            inner.map(lambda a: f"tl.abs({a})"),
            st.tuples(st.sampled_from(["tl.maximum", "tl.minimum", "tl.cdiv", "min", "max"]),
                      inner, inner).map(lambda a: f"{a[0]}({a[1]}, {a[2]})"),
            st.tuples(inner, cmp, inner, inner, inner).map(
                lambda a: f"tl.where({a[0]} {a[1]} {a[2]}, {a[3]}, {a[4]})"),
            st.tuples(inner, cmp, inner, dt).map(lambda a: f"({a[0]} {a[1]} {a[2]}).to(tl.{a[3]})"),
            st.tuples(inner, inner, inner).map(lambda a: f"({a[0]} if M > {a[1]} else {a[2]})"),
            st.tuples(inner, inner).map(lambda a: f"add({a[0]}, {a[1]})"),
            st.tuples(st.sampled_from(["tl.exp", "tl.sqrt", "tl.floor", "tl.log2"]), inner).map(
                lambda a: f"{a[0]}({a[1]})"),
            st.tuples(st.sampled_from(["sum", "max", "min"]), st.sampled_from(["0", "1"]),
                      inner).map(lambda a: f"(t - tl.{a[0]}({a[2]}, {a[1]})"
                                           f"[{':, None' if a[1] == '1' else 'None, :'}])"),
            st.tuples(inner, st.sampled_from(["int8", "uint8", "int16", "float16", "bfloat16",
                                              "int32", "float32"])).map(
                lambda a: f"({a[0]}).to(tl.{a[1]}, bitcast=True)"),
            st.tuples(inner, dt).map(lambda a: f"tl.full([32, 64], {a[0]}, tl.{a[1]})"),
        )

    return st.recursive(leaf, grow, max_leaves=5)


@st.composite
def bodies(draw):
    """(tile dtype, store type, body text, whether the writer runs it (storing into its
    slot), the kernel body's bindings of k0 / k1 handed to the reader, or "")."""
    writer = draw(st.booleans())
    kbody, bound = [], []
    if not writer and draw(st.integers(0, 2)) == 0:
        for name in ("k0", "k1")[:draw(st.integers(1, 2))]:
            value = draw(st.one_of(number, st.tuples(st.sampled_from(bound + ["3"]),
                                                     st.sampled_from(["+", "-", "*", "//"]),
                                                     number).map(" ".join)))
            kbody.append(f"{name}{': tl.constexpr' if draw(st.booleans()) else ''} = {value}")
            bound.append(name)
    lines = []
    for name in NAMES[:draw(st.integers(0, 3))]:
        kind = draw(st.sampled_from(["plain", "plain", "constexpr", "derived", "if", "loop",
                                     "tile", "tile-if"]))
        if kind in ("if", "loop") and not bound:
            kind = "plain"
        if kind == "plain":
            lines.append(f"{name} = {draw(number)}")
        elif kind == "constexpr":
            lines.append(f"{name}: tl.constexpr = {draw(number)}")
        elif kind == "derived":
            operands = bound + [draw(number)]
            a, b = draw(st.sampled_from(operands)), draw(st.sampled_from(operands))
            lines.append(f"{name} = {a} {draw(st.sampled_from(['+', '-', '*', '//']))} {b}")
        elif kind == "tile":
            lines.append(f"{name} = {draw(expr(bound))}")
        elif kind == "tile-if":
            lines += [f"{name} = {draw(expr(bound))}", "if M > 0:",
                      f"    {name} = {draw(expr(bound))}"]
        elif kind == "if":
            target = draw(st.sampled_from(bound))
            lines += [f"{name} = {draw(number)}", "if M > 0:", f"    {target} = {draw(number)}"]
        else:
            target = draw(st.sampled_from(bound))
            lines += [f"{name} = {draw(number)}", "for j in range(2):",
                      f"    {target} = {target} + {draw(number)}"]
        bound.append(name)
    value = draw(expr(bound))
    lines.append(f"tl.store(y_ptr + p * 2048 + offs, {value})")
    return (draw(st.sampled_from(DTYPES)), draw(st.sampled_from(STORE_TYPES)), "\n".join(lines),
            writer, "\n".join(kbody))


def check(tmp_path, dt: str, ys: str, body: str, writer: bool = False, kbody: str = "") -> str:
    """The property for one body; returns which branch it took."""
    o = outcome(tmp_path, body, dt, ys, writer, kbody)
    shown = (f"tile {dt}, y *{ys}{' (in the writer, into the slot)' if writer else ''}"
             f"{f' (kernel body: {kbody!r})' if kbody else ''}:\n{body}")
    assert not o.tle_crash, f"TLE crashed on\n{shown}\n{o.tle_crash}"
    if o.plain is None:
        assert o.tle is None, (f"Triton refuses\n{shown}\n({o.why_plain.splitlines()[-1][:300]})"
                               f"\nbut TLE verified and compiled it")
        return "both refused"
    if o.tle is None:
        return "TLE refused"
    assert o.slices_plain == o.slices_tle, (
        f"TLE computes\n{shown}\notherwise than Triton:\n  Triton {o.slices_plain}\n"
        f"  TLE    {o.slices_tle}")
    return "same"


@settings(max_examples=60)
@given(case=bodies())
def test_a_random_body_computes_as_triton_computes_or_is_refused(tmp_path_factory, case):
    dt, ys, body, writer, kbody = case
    check(tmp_path_factory.mktemp("body"), dt, ys, body, writer, kbody)


#: bodies Triton compiles that TLE must compile to the same values (not only refuse)
ACCEPTED = [
    ("int8", "i32", "b0 = 100\nif M > 0:\n    b0 = 3\ntl.store(y_ptr + p * 2048 + offs, t + b0)"),
    ("int8", "i32", "b0 = 100\nb0 = 5\ntl.store(y_ptr + p * 2048 + offs, t + b0)"),
    ("bfloat16", "fp32", "b0 = 0.5\ntl.store(y_ptr + p * 2048 + offs, t * b0 + p)"),
    ("int16", "i32", "tl.store(y_ptr + p * 2048 + offs, tl.where(t > M, t // 3, -t))"),
    ("uint8", "i32", "b0 = 3000000000\ntl.store(y_ptr + p * 2048 + offs, (t < b0).to(tl.int32))"),
    ("int8", "i16", "b0 = 100\nfor j in range(2):\n    b0 = b0 + 1\n"
                    "tl.store(y_ptr + p * 2048 + offs, tl.maximum(t, b0))"),
]


@pytest.mark.parametrize("dt,ys,body", ACCEPTED, ids=range(len(ACCEPTED)))
def test_a_body_triton_compiles_is_computed_as_triton_computes(tmp_path, dt, ys, body):
    assert check(tmp_path, dt, ys, body) == "same"


#: bodies with a kernel-body name (a plain assignment: a tensor Triton's warp_specialize hands
#: to the partition) passed on to a helper, where it is a tensor too: `add(t, k0)` of an int8
#: tile is an i32 in Triton; it was computed in i8 (a random body found it)
ACCEPTED_THROUGH_HELPERS = [
    ("int8", "i8", "tl.store(y_ptr + p * 2048 + offs, tl.abs(add(t, k0)))", "k0 = 0"),
    ("int8", "i8", "tl.store(y_ptr + p * 2048 + offs, add(t, k0) * 2 // 3)", "k0 = 0"),
    ("int16", "i32", "tl.store(y_ptr + p * 2048 + offs, add(t, k0) // 7)", "k0 = 100"),
]


@pytest.mark.parametrize("dt,ys,body,kbody", ACCEPTED_THROUGH_HELPERS,
                         ids=range(len(ACCEPTED_THROUGH_HELPERS)))
def test_a_kernel_body_number_passed_to_a_helper_is_a_tensor_there(tmp_path, dt, ys, body, kbody):
    assert check(tmp_path, dt, ys, body, kbody=kbody) == "same"


#: bodies Triton refuses, and where TLE refuses them: a name bound as a tl.constexpr, then
#: rebound in the body of a loop or a branch of an `if` on a run-time value (the assignment makes
#: it a tensor; Triton refuses a loop-carried or branch-joined name whose type changes). They
#: were verified and lowered: the first random bodies found them.
REBOUND_CONSTEXPRS = {
    "in a loop": ("b0: tl.constexpr = 127\nfor j in range(2):\n    b0 = b0 + 1\n"
                  "tl.store(y_ptr + p * 2048 + offs, t + b0)", 3),
    "in a loop, not read": ("b0: tl.constexpr = 127\nfor j in range(2):\n    b0 = 3\n"
                            "tl.store(y_ptr + p * 2048 + offs, t + b0)", 3),
    "in a branch": ("b0: tl.constexpr = 127\nif M > 0:\n    b0 = 5\n"
                    "tl.store(y_ptr + p * 2048 + offs, t + b0)", 3),
    "in the else branch": ("b0: tl.constexpr = 127\nif M > 0:\n    pass\nelse:\n    b0 += 1\n"
                           "tl.store(y_ptr + p * 2048 + offs, t + b0)", 5),
    "in a nested loop": ("b0: tl.constexpr = 2\nfor j in range(2):\n    for i in range(M):\n"
                         "        b0 = 7\ntl.store(y_ptr + p * 2048 + offs, t + b0)", 4),
}


@pytest.mark.parametrize("case", list(REBOUND_CONSTEXPRS))
def test_a_constexpr_rebound_in_a_loop_or_a_branch_is_refused_as_triton_refuses(tmp_path, case):
    body, line = REBOUND_CONSTEXPRS[case]
    o = outcome(tmp_path, body, "int8", "i32")
    assert o.plain is None and ("changed type" in o.why_plain or "redefines it" in o.why_plain)
    assert o.tle is None and not o.tle_crash
    first = body.splitlines()[0]
    at = tle_source(body, "int8", "i32").splitlines().index("        " + first) + line
    assert f"kernel.py:{at}: error: `b0` is a constexpr in Triton" in o.why_tle, o.why_tle
    assert "[unsupported-expression]" in o.why_tle


@pytest.mark.parametrize("body", [
    # rebound outside a region: a tensor from there on, in Triton and in the lowered kernel
    "b0: tl.constexpr = 127\nb0 = 3\ntl.store(y_ptr + p * 2048 + offs, t + b0)",
    # rebound by a tl.static_range body (unrolled in one scope): Triton takes it
    "b0: tl.constexpr = 127\nfor j in tl.static_range(2):\n    b0 = 3\n"
    "tl.store(y_ptr + p * 2048 + offs, t + b0)",
    # under an `if` on a constexpr condition: decided at compile time, no branch scope
    "b0: tl.constexpr = 127\nif 2 > 1:\n    b0 = 5\ntl.store(y_ptr + p * 2048 + offs, t + b0)",
    # a plain name rebound in a loop keeps its type (i32)
    "b0 = 127\nfor j in range(2):\n    b0 = b0 + 1\ntl.store(y_ptr + p * 2048 + offs, t + b0)",
])
def test_a_constexpr_rebound_where_triton_takes_it_is_computed_as_triton_computes(tmp_path, body):
    assert check(tmp_path, "int8", "i32", body) == "same"


PARAM = '''
import triton.language as tl
import tle_compiler as tle


@tle.jit
def k(x_ptr, y_ptr, N, M, B: tl.constexpr):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.int8))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, y_ptr, N, M, ARG))],
                            [4], [232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    for p in range(N):
        slot = w.acquire(p)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + p * 64 + tl.arange(0, 64)))
        w.commit(p)


def consume(kv, y_ptr, N, M, C):
    r = kv.reader()
    for p in range(N):
        res = r.wait(p)
        t = tl.load(tle.gpu.local_ptr(res.slot.tile))
        if M > 0:
            C = 5
        tl.store(y_ptr + p * 64 + tl.arange(0, 64), t + C)
        r.release(p)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*i8", "y_ptr": "*i32", "N": "i32", "M": "i32",
                                "B": "constexpr"}, "constexprs": {"B": 100}}
'''


@pytest.mark.parametrize("arg,refused", [("B", True), ("100", True), ("M", False)],
                         ids=["a constexpr parameter", "a number", "a run-time value"])
def test_a_partition_parameter_given_a_constexpr_is_one(tmp_path, capsys, arg, refused):
    """A partition's parameter given the kernel's constexpr parameter or a number is a constexpr
    there (Triton: "initial value for `C` is of type constexpr[100], but the then block
    redefines it as int32[]"): rebinding it in a branch on a run-time value is refused at the
    assignment (the lowering refused it at the `if`, tle-dump had said verified); given a
    run-time value it is a tensor, which the branch may rebind."""
    from tle_compiler.cli.dump import main as tle_dump

    path = tmp_path / "kernel.py"
    path.write_text(PARAM.replace("ARG", arg))
    rc = tle_dump(["-q", str(path)])
    out = capsys.readouterr()
    line = PARAM.splitlines().index("            C = 5") + 1
    if refused:
        assert rc == 1, out
        assert f"kernel.py:{line}: error: `C` is a constexpr in Triton" in out.err + out.out
    else:
        assert rc == 0, out


@pytest.mark.parametrize("number", ["0.5", "0.5 * 3", "-1.5", "True"])
def test_a_cast_of_numbers_written_in_place_is_refused_as_triton_refuses(tmp_path, number):
    """`(0.5).to(tl.uint8)`: a float (or bool) written in place is a constexpr in Triton 3.6,
    which has no `.to`; it was verified (found by the random bodies), and the lowering printed
    Gluon that Triton refuses. Refused at the cast now."""
    body = f"tl.store(y_ptr + p * 2048 + offs, t + ({number}).to(tl.uint8))"
    o = outcome(tmp_path, body, "int16", "i32")
    assert o.plain is None and "object has no attribute 'to'" in o.why_plain
    assert o.tle is None and "tle-dump exit 1" in o.why_tle, o.why_tle
    assert "casts numbers written in place, a constexpr in Triton 3.6" in o.why_tle


#: bodies whose runtime branch or loop changes a name's type, which Triton refuses ("initial
#: value for `b1` is of type int8[32, 64], but the then block redefines it as fp32[]",
#: "Loop-carried variable ... has initial type int32 but is re-assigned to ..."). The first was
#: found by the random bodies: verified, and lowered with the branch's assignment as `pass`.
TYPE_CHANGES = {
    "a tile become a number in a branch": "b0 = 0.5\nb1 = (-t)\nif M > 0:\n    b1 = b0\n"
                                          "tl.store(y_ptr + p * 2048 + offs, b1)",
    "the same, unused after": "b0 = 0.5\nb1 = (-t)\nif M > 0:\n    b1 = b0\n"
                              "tl.store(y_ptr + p * 2048 + offs, (-t))",
    "in the else branch": "b1 = t + 1\nif M > 0:\n    b1 = t\nelse:\n    b1 = 3\n"
                          "tl.store(y_ptr + p * 2048 + offs, b1)",
    "a number become a tile in a loop": "b1 = 0\nfor j in range(M):\n    b1 = b1 + t\n"
                                        "tl.store(y_ptr + p * 2048 + offs, b1)",
    "an int become a float in a branch": "b1 = 7\nif M > 0:\n    b1 = 0.5\n"
                                         "tl.store(y_ptr + p * 2048 + offs, t + b1)",
    "a tile of another shape": "b1 = t\nif M > 0:\n    b1 = tl.sum(t, 1)\n"
                               "tl.store(y_ptr + p * 2048 + offs, t)",
}


@pytest.mark.parametrize("case", list(TYPE_CHANGES))
def test_a_name_whose_type_a_branch_or_a_loop_changes_is_refused(tmp_path, case):
    body = TYPE_CHANGES[case]
    o = outcome(tmp_path, body, "int8", "i32")
    assert o.plain is None and ("redefines it" in o.why_plain or "re-assigned" in o.why_plain
                                or "changed type" in o.why_plain), o.why_plain
    assert o.tle is None and "tle-dump exit 1" in o.why_tle, o.why_tle
    assert "Triton 3.6 refuses a name whose type a loop or a branch" in o.why_tle


@pytest.mark.parametrize("body", [
    "b1 = t + 1\nif M > 0:\n    b1 = t * 2\ntl.store(y_ptr + p * 2048 + offs, b1)",
    "b1 = t\nfor j in range(M):\n    b1 = b1 + t\ntl.store(y_ptr + p * 2048 + offs, b1)",
    "b1 = 7\nif M > 0:\n    b1 = M\ntl.store(y_ptr + p * 2048 + offs, t + b1)",
    "b1 = tl.sum(t, 1)\nfor j in range(M):\n    b1 = tl.maximum(b1, tl.max(t, 1))\n"
    "tl.store(y_ptr + p * 2048 + offs, t - b1[:, None])",
])
def test_a_name_a_branch_or_a_loop_rebinds_to_its_type_is_computed(tmp_path, body):
    assert check(tmp_path, "int8", "i32", body) == "same"


@pytest.mark.parametrize("kbody,body", [
    ("k1: tl.constexpr = 0", "if M > 0:\n    k1 = 255\ntl.store(y_ptr + p * 2048 + offs, t)"),
    ("k0: tl.constexpr = 0.001", "for j in range(2):\n    k0 = k0 + 0\n"
                                 "tl.store(y_ptr + p * 2048 + offs, t)"),
])
def test_a_kernel_body_constexpr_handed_to_a_partition_is_one_there(tmp_path, kbody, body):
    """The kernel body's `k1: tl.constexpr = 0` handed to the reader is a constexpr there, so
    the reader's rebinding of it in a runtime branch or a loop is refused as Triton refuses it
    (found by the random bodies with kernel-body bindings: verified and lowered before)."""
    o = outcome(tmp_path, body, "int8", "i32", kbody=kbody)
    assert o.plain is None and o.tle is None, (o.why_plain, o.why_tle)
    assert "is a constexpr in Triton" in o.why_tle, o.why_tle


@pytest.mark.parametrize("body", [
    "b0 = 0.5\nb1 = (b0).to(tl.int8, bitcast=True)\ntl.store(y_ptr + p * 2048 + offs, t)",
    "b0 = 0.5\nb1 = tl.abs(max((b0).to(tl.int8, bitcast=True), (b0).to(tl.int8, bitcast=True)))\n"
    "tl.store(y_ptr + p * 2048 + offs, t)",
    "b0 = 7\ntl.store(y_ptr + p * 2048 + offs, t + b0.to(tl.int16, bitcast=True))",
])
def test_a_bitcast_of_a_plain_number_name_between_widths_is_refused(tmp_path, body):
    """`b0 = 0.5` is an fp32 tensor in Triton 3.6 (visit_Assign), whose bitcast to int8 it
    refuses ("Cannot bitcast data-type of size 32 to data-type of size 8"); the frontend knew
    the width of tiles only and verified it (found by the random bodies)."""
    o = outcome(tmp_path, body, "bfloat16", "i8")
    assert o.plain is None and "Cannot bitcast" in o.why_plain
    assert o.tle is None and "Cannot bitcast data-type of size" in o.why_tle, o.why_tle


def test_a_bitcast_of_a_plain_number_name_within_its_width_is_computed(tmp_path):
    body = "b0 = 0.5\ntl.store(y_ptr + p * 2048 + offs, t + b0.to(tl.int32, bitcast=True))"
    assert check(tmp_path, "int32", "i32", body) == "same"
