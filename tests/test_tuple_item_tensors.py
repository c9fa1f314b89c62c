"""Tuple items that Triton 3.6 holds as tensors, read around pipe events.

A plain assignment makes each item of the tuple it binds a tensor (``pr = (65536, 1)``: two i32
tensors), and a tuple written in a call keeps each item as it is (``put(..., (b, 1))`` with ``b =
65536`` bound by a plain assignment: item 0 is b's i32 tensor, item 1 the constexpr 1, as Triton
specialises the call). Arithmetic on such an item is the tensor's: ``b[0] * b[0]`` of 65536 wraps
to 0 in i32. The frontend folds these values, so its reading must either compute as Triton does
or refuse; before, a condition ``b[0] * b[0] > 0`` around a writer's acquire and commit was
verified with Python's 2^32 (the writer commits) where Triton's i32 product is 0 (it never does:
the reader hangs). Both readings are checked: the builder's, for items of a tuple written in the
call (frontend/local_tensors.py ``BuildRules.tensor_items_of``), and the protocol walker's, for
items of a tuple name (``WalkRules.tensor_tuple``). The reference for each rule is plain Triton's
TTIR.
"""

import contextlib
import io
from pathlib import Path

import pytest

from tle_compiler.cli.dump import main as tle_dump
from tests.test_lowering_adversarial_5 import TUPLE_IF

# a writer whose helper `put` guards its acquire and commit by COND on the tuple ARG that
# `produce` hands it (after BIND); the reader waits for every index
KERNEL = TUPLE_IF


def _dump(tmp_path: Path, bind: str, arg: str, cond: str) -> tuple[int, str]:
    path = tmp_path / "kernel.py"
    path.write_text(KERNEL.replace("BIND", bind).replace("ARG", arg).replace("COND", cond))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = tle_dump(["-q", str(path)])
    return rc, out.getvalue() + err.getvalue()


def _triton_ttir(fn, signature: dict) -> str:
    import triton
    from triton.backends.compiler import GPUTarget

    return triton.compile(triton.compiler.ASTSource(fn, signature, {}),
                          target=GPUTarget("cuda", 90, 32)).asm["ttir"]


def test_plain_triton_holds_tuple_items_as_tensors_or_constexprs():
    """The reference for the cases below: items of a tuple name are tensors (the fp32 compare
    of 16777217 is False; 3 << 30 wraps negative; C's -7 // 2 is -3; nested tuples too), and in
    a tuple written in the call only the items that are tensors in the caller are (``b[1]`` of
    ``(b, 1)`` is the constexpr 1, which tl.arange takes); an index from the end names the same
    item, and a list written in the call is read as the tuple."""
    import triton
    import triton.language as tl

    @triton.jit
    def nested(y_ptr, b):
        if b[0][0] * b[0][0] > 0:
            tl.store(y_ptr, 1)

    @triton.jit
    def from_end(y_ptr, b):
        if b[-2] * b[-2] > 0:
            tl.store(y_ptr, 1)

    @triton.jit
    def ranged(y_ptr, b):
        tl.store(y_ptr + 16 + tl.arange(0, 16 * b[1]), 0)

    @triton.jit
    def f(y_ptr):
        pr = (16777217, 1)
        if pr[0] > 16777216.5:
            tl.store(y_ptr, 1)
        sh = (3, 1)
        if (sh[0] << 30) > 0:
            tl.store(y_ptr + 1, 1)
        dv = (-7, 1)
        if dv[0] // 2 == -4:
            tl.store(y_ptr + 2, 1)
        c = 65536
        nested(y_ptr + 3, ((c, 1), 2))
        from_end(y_ptr + 4, (c, 1))
        from_end(y_ptr + 5, [c, 1])
        ranged(y_ptr, (c, 1))

    ttir = _triton_ttir(f, {"y_ptr": "*i32"})
    stores = [line for line in ttir.splitlines() if "tt.store" in line]
    # only ranged's store of a 16-wide tile remains
    assert len(stores) == 1 and "tensor<16x!tt.ptr<i32>>" in stores[0], stores


@pytest.mark.parametrize("bind,arg,cond,says", [
    # items of a tuple name (the protocol walker's reading)
    ("pr = (65536, 1)", "pr", "b[0] * b[0] > 0", "4294967296 there, outside i32"),
    ("pr = (16777217, 1)", "pr", "b[0] > 16777216.5", "Triton compares in fp32"),
    ("pr = (3, 1)", "pr", "(b[0] << 30) > 0", "3221225472 there, outside i32"),
    ("pr = (-7, 1)", "pr", "b[0] // 2 == -4", "a tuple, each of whose items"),
    ("pr = (-4, 0)", "pr", "tl.cdiv(b[0], 3) != 0", "a tuple, each of whose items"),
    ("pr = ((65536, 1), 2)", "pr", "b[0][0] * b[0][0] > 0", "outside i32"),
    ("pr = (True, 1)", "pr", "~b[0]", ""),
    ("pr = (65536, 1)", "pr[0]", "b * b > 0", "outside i32"),
    # items of a tuple written in the call (the builder's reading)
    ("b = 65536", "(b, 1)", "b[0] * b[0] > 0", "Triton computes it on that tensor as 0"),
    ("b = 65536", "((b, 1), 2)", "b[0][0] * b[0][0] > 0", "Triton computes it on that tensor"),
    ("b = 16777217", "(2, b)", "b[1] > 16777216.5", "Triton computes it on that tensor"),
    ("b = -7", "(b, 2)", "b[0] % b[1] == 1", "Triton divides that tensor as C does"),
    # a list written in the call is passed as a tuple; an index from the end names the item
    ("b = 65536", "[b, 1]", "b[0] * b[0] > 0", "Triton computes it on that tensor as 0"),
    ("b = 65536", "(b, 1)", "b[-2] * b[-2] > 0", "Triton computes it on that tensor as 0"),
    ("b = 65536\n    b = 65536", "(b, 1)", "b[-2] * b[-2] > 0", "outside i32"),
    ("b = 65536", "((b, 1), 2)", "b[0][-2] * b[-2][0] > 0", "on that tensor as 0"),
], ids=["product", "fp32-compare", "shift", "floordiv", "cdiv", "nested", "invert-bool",
        "item-passed-on", "call-product", "call-nested", "call-second-item", "call-mod",
        "call-list", "call-negative-index", "call-negative-index-name-bound-twice",
        "call-nested-negative-indices"])
def test_a_tensor_item_around_events_is_refused_where_triton_differs(tmp_path, bind, arg, cond,
                                                                     says):
    rc, out = _dump(tmp_path, bind, arg, cond)
    assert rc == 1, out
    assert "kernel.py:14: error" in out, out
    assert says in out, out


@pytest.mark.parametrize("bind,arg,cond", [
    ("pr = (3, 1)", "pr", "b[0] * 2 > 0"),
    ("pr = (1, 3000000000)", "pr", "b[0] > 0"),
    ("b = 65536", "(b, 1)", "b[1] * 2 > 0"),
    ("b = 65536", "(b, 1)", "b[0] + 1 > 0"),
    ("b = 7", "(b, 2)", "b[0] % b[1] == 1"),
    ("b = 65536\n    b = 65536", "(b, 1)", "b[1] * 2 > 0"),
    ("b = 65536", "(b, 1)", "b[-1] * 2 > 0"),
    ("b = 65536\n    b = 65536", "(b, 1)", "b[-1] * 2 > 0"),
], ids=["product-in-range", "other-item", "constexpr-item", "sum-in-range", "mod-agrees",
        "constexpr-item-of-a-name-bound-twice", "constexpr-item-from-the-end",
        "constexpr-item-from-the-end-of-a-name-bound-twice"])
def test_a_tuple_item_that_computes_as_triton_does_stays_verified(tmp_path, bind, arg, cond):
    rc, out = _dump(tmp_path, bind, arg, cond)
    assert rc == 0, out
    assert "k: verified" in out, out


@pytest.mark.parametrize("bind,arg", [("b = 65536", "(b, 1)"),
                                      ("b = 65536\n    b = 65536", "(b, 1)"),
                                      ("", "(4, 1)")],
                         ids=["folded-name", "name-bound-twice", "literals"])
def test_a_constexpr_item_of_a_tuple_written_in_the_call_may_size_a_tile(tmp_path, bind, arg):
    """``b[1]`` of ``(b, 1)`` is the constexpr 1 in Triton (the reference above): tl.arange
    takes it, so the kernel is verified; a tuple of literals has no tensor item at all."""
    path = tmp_path / "kernel.py"
    path.write_text(KERNEL.replace("BIND", bind).replace("ARG", arg).replace("COND", "True")
                    .replace("tl.arange(0, 64)))\n        w.commit",
                             "tl.arange(0, 64 * b[1])))\n        w.commit"))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = tle_dump(["-q", str(path)])
    assert rc == 0 and "k: verified" in out.getvalue() + err.getvalue(), err.getvalue()


def test_a_name_bound_twice_in_a_tuple_written_in_the_call_is_a_tensor(tmp_path):
    """``b`` bound twice stays a name in the kernel IR; handed over in ``(b, 1)`` its item is
    b's i32 tensor, whose product with itself wraps (verified before, a hang)."""
    rc, out = _dump(tmp_path, "b = 65536\n    b = 65536", "(b, 1)", "b[0] * b[0] > 0")
    assert rc == 1 and "outside i32" in out, out


def test_the_cast_of_a_folded_local_number_is_refused_without_blaming_triton(tmp_path):
    """``c = 100`` handed to a helper is an i32 tensor in Triton, so ``(b * 2).to(tl.int8)`` is
    Triton's -56; the frontend folds it to 200 and refuses the cast it does not compute, and the
    message does not claim that Triton has no such cast (it said "nor in Triton, as a
    constexpr")."""
    rc, out = _dump(tmp_path, "c = 100", "c", "(b * 2).to(tl.int8) < 0")
    assert rc == 1 and "kernel.py:14: error" in out, out
    assert "nor in Triton" not in out and "a plain assignment bound is a tensor" in out, out


# the kernel body hands a tuple to a partition whose `if COND:` guards the writer's events
BODY = '''
import triton.language as tl
import tle_compiler as tle


@tle.jit
def k(x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    BIND
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.int32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N, ARG)), (consume, (kv, y_ptr, N))], [4],
                            [232])


def produce(kv, x_ptr, N, b):
    w = kv.writer()
    for p in range(N):
        if COND:
            slot = w.acquire(p)
            tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + p * 64 + tl.arange(0, 64)))
            w.commit(p)


def consume(kv, y_ptr, N):
    r = kv.reader()
    for p in range(N):
        res = r.wait(p)
        tl.store(y_ptr + p * 64 + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))
        r.release(p)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*i32", "y_ptr": "*i32", "N": "i32"}}
'''


@pytest.mark.parametrize("bind,arg,cond,verified", [
    ("T = (65536, 1)", "T", "b[0] * b[0] > 0", False),
    ("B = 65536", "(B, 1)", "b[0] * b[0] > 0", False),
    ("B = 65536", "(B, 1)", "b[-2] * b[-2] > 0", False),
    ("B = 65536", "(B * 1, 1)", "b[0] * b[0] > 0", False),
    ("B = 65536", "((B, 1), 2)", "b[0][0] * b[0][0] > 0", False),
    ("B = 65536", "(B, 1)", "b[1] * 2 > 0", True),
    ("T = (3, 1)", "T", "b[0] * 2 > 0", True),
    # literals handed over are constexprs: Python's product, as the lowered kernel computes it
    ("", "(65536, 1)", "b[0] * b[0] > 0", True),
], ids=["tuple-name", "tuple-written", "from-the-end", "expression-item", "nested",
        "constexpr-item", "in-range", "literals"])
def test_a_kernel_body_tuple_handed_to_a_partition(tmp_path, bind, arg, cond, verified):
    """The check of folded arithmetic on a kernel-body name handed to a partition (a tensor in
    Triton: `T = 65536` then `b * b` is refused) holds for the items of a tuple too: ``T =
    (65536, 1)`` passed as ``T``, or ``(B, 1)`` with ``B = 65536``; before, ``b[0] * b[0] > 0``
    was verified with Python's 2^32 (the partition's parameter was not folded, and its items
    were not known as tensors)."""
    path = tmp_path / "kernel.py"
    path.write_text(BODY.replace("BIND", bind).replace("ARG", arg).replace("COND", cond))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = tle_dump(["-q", str(path)])
    text = out.getvalue() + err.getvalue()
    if verified:
        assert rc == 0 and "k: verified" in text, text
    else:
        assert rc == 1 and "kernel.py:18: error" in text and "makes a tensor" in text, text


@pytest.mark.parametrize("bind,arg,cond", [
    ("B = 3", "(B, N)", "b[1] + b[0] > 0"),
    ("B = 3", "((B, N), 2)", "b[0][1] + b[0][0] > 0"),
], ids=["flat", "nested"])
def test_a_body_name_in_a_tuple_with_runtime_items_is_lowered(tmp_path, bind, arg, cond):
    """``(B, N)`` handed to a partition, read as ``b[0]``: verified, then the lowered Gluon
    named the kernel body's ``B`` in the partition, where it is not defined (Triton refused the
    lowered kernel: "NameError('B is not defined')"). The item folds to its value now."""
    pytest.importorskip("triton.experimental.gluon")
    path = tmp_path / "kernel.py"
    path.write_text(BODY.replace("BIND", bind).replace("ARG", arg).replace("COND", cond))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = tle_dump(["-q", "--ttgir", str(path)])
    assert rc == 0 and "tt.func" in out.getvalue(), err.getvalue()[-2000:]


HELPERS = ("\n\ndef mk():\n    return (65536, 1)\n\n\ndef mk1():\n    return 65536\n\n\n"
           "def same(x):\n    return x\n")


def test_plain_triton_returns_a_helpers_constant_as_a_tensor():
    """The reference for the case below: Triton's visit_Return makes a constant a jit function
    returns a tensor (``mk1() * mk1()`` of 65536 is the i32 product, 0), however the call is
    used: assigned, passed on, or in place."""
    import triton
    import triton.language as tl

    @triton.jit
    def mk1():
        return 65536

    @triton.jit
    def same(x):
        return x

    @triton.jit
    def f(y_ptr):
        if mk1() * mk1() > 0:
            tl.store(y_ptr, 1)
        if same(65536) * same(65536) > 0:
            tl.store(y_ptr + 1, 1)

    assert "tt.store" not in _triton_ttir(f, {"y_ptr": "*i32"})


@pytest.mark.parametrize("arg,cond", [("0", "mk1() * mk1() > 0"),
                                      ("0", "mk()[0] * mk()[0] > 0"),
                                      ("0", "same(65536) * same(65536) > 0"),
                                      ("mk1()", "b * b > 0")],
                         ids=["in-place", "tuple-item", "parameter-returned", "passed-on"])
def test_a_helpers_returned_constant_is_a_tensor(tmp_path, arg, cond):
    """``mk1() * mk1() > 0`` around a writer's events was verified with Python's 2^32 (the
    builder inlined the helper and read its returned constant as the constant); refused now,
    naming the call (local_tensors.tensor_root of a helper call, Builder.helper_calls)."""
    path = tmp_path / "kernel.py"
    path.write_text(KERNEL.replace("BIND", "").replace("ARG", arg).replace("COND", cond)
                    .replace("\n\nDEFAULT_CONFIG", HELPERS + "\n\nDEFAULT_CONFIG"))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = tle_dump(["-q", str(path)])
    text = out.getvalue() + err.getvalue()
    # passed on (b = mk1() in the caller, b * b in the helper): the helper's parameter is bound
    # to the tensor the call returned, and named as such
    says = "is bound to a compile-time value" if cond == "b * b > 0" else "returns as a tensor"
    assert rc == 1 and says in text and ("outside i32" in text or "as 0" in text), text


@pytest.mark.parametrize("cond", ["same(3) * 2 > 0", "mk1() + 1 > 0", "mk()[-1] * 2 > 0"])
def test_a_helpers_result_in_range_stays_verified(tmp_path, cond):
    path = tmp_path / "kernel.py"
    path.write_text(KERNEL.replace("BIND", "").replace("ARG", "0").replace("COND", cond)
                    .replace("\n\nDEFAULT_CONFIG", HELPERS + "\n\nDEFAULT_CONFIG"))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = tle_dump(["-q", str(path)])
    assert rc == 0 and "k: verified" in out.getvalue() + err.getvalue(), err.getvalue()
