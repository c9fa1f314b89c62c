"""ir/promotion.typed_result, the value Triton computes for an operation on a name bound by a
plain assignment (a tensor in Triton 3.6), checked against Triton itself: each case is a plain
@triton.jit kernel `q = X` then a store of `q OP Y` (or `OP q`), compiled for sm_90a on the CPU;
Triton folds the operation to a constant in its TTIR, which is read back. The frontend refuses a
folded operation exactly where this value differs from Python's
(local_tensors.BuildRules.folded_arithmetic)."""

from __future__ import annotations

import importlib
import re

import pytest

from tle_compiler.ir import promotion

triton = pytest.importorskip("triton")

CASES = [
    # (assignment value, expression over q, Python's value of it)
    (3, "q << 30", 3 << 30),
    (65536, "q * q", 65536 * 65536),
    (-7, "q // 2", -7 // 2),
    (-7, "q % 3", -7 % 3),
    (16777217, "(q > 16777216.5).to(tl.int32)", 1),
    (16777217, "q * 1.0", 16777217.0),
    (3, "q * 0.1", 3 * 0.1),
    (True, "(q + q).to(tl.int32)", 2),
    (-2147483648, "-q", 2147483648),
    (-1, "(q < 3000000000).to(tl.int32)", 1),
    (7, "q // 2", 3),
    (5, "q - 9", -4),
]


def _triton_constant(tmp_path, monkeypatch, value, expr):
    """The constant Triton's TTIR stores for ``expr`` with ``q = value``."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    name = f"typed_fold_{abs(hash((value, expr)))}"
    (tmp_path / f"{name}.py").write_text(
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        f"def k(y_ptr):\n    q = {value!r}\n    tl.store(y_ptr, {expr})\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module(name)
    float_result = "1.0" in expr or "0.1" in expr
    c = triton.compile(ASTSource(mod.k, signature={"y_ptr": "*fp32" if float_result else "*i64"},
                                 constexprs={}), target=GPUTarget("cuda", 90, 32))
    ttir = c.asm["ttir"]
    m = re.search(r"arith\.constant (?:dense<)?(0x[0-9A-Fa-f]+|[-0-9.e+]+)>? : "
                  r"(?:tensor<[^>]*>|\w+)", ttir)
    assert m, ttir
    text = m.group(1)
    if text.startswith("0x"):  # a float32 MLIR prints by its bits
        import struct
        return struct.unpack(">f", bytes.fromhex(text[2:].rjust(8, "0")))[0]
    return float(text) if float_result else int(text)


def _typed(value, expr):
    """typed_result for the case: q's tensor type and the operation of ``expr``."""
    t = "int1" if isinstance(value, bool) else promotion.python_number_type(value)
    m = re.fullmatch(r"\(?q ([-+*/%<>=]+|//|<<) ([-0-9.]+|q)\)?(?:\.to\(tl\.int32\))?", expr)
    if expr == "-q":
        return promotion.typed_result("-u", [(value, t)])[0]
    op, rhs = m.group(1), m.group(2)
    y = (value, t) if rhs == "q" else (float(rhs), promotion.PY_FLOAT) if "." in rhs \
        else (int(rhs), promotion.PY_INT)
    result, rt = promotion.typed_result(op, [(value, t), y])
    return int(result) if ".to(tl.int32)" in expr else result


@pytest.mark.parametrize("value,expr,python", CASES, ids=[f"{v}:{e}" for v, e, _ in CASES])
def test_the_typed_value_is_the_one_triton_folds(tmp_path, monkeypatch, value, expr, python):
    """Triton's folded constant is typed_result's (``python``, Python's value, shows which
    cases the frontend refuses: those where the two differ)."""
    want = _triton_constant(tmp_path, monkeypatch, value, expr)
    got = _typed(value, expr)
    if isinstance(want, float):
        assert promotion._f32(got) == promotion._f32(want), (got, want)
    else:
        assert got == want, (got, want)


@pytest.mark.parametrize("value", [-4, -7, 7, 2147483647, 2147483646])
def test_the_typed_cdiv_is_the_one_triton_folds(tmp_path, monkeypatch, value):
    """tl.cdiv(q, 3) of an i32 q: ``(q + 2) // 3`` with the i32 wrap and C's rounding
    (promotion.typed_cdiv), as Triton folds it; 2147483647 wraps (-715827882, Python's cdiv
    715827883)."""
    want = _triton_constant(tmp_path, monkeypatch, value, "tl.cdiv(q, 3)")
    got = promotion.typed_cdiv((value, "int32"), (3, promotion.PY_INT))
    assert got == want, (got, want)


def test_a_folded_cdiv_that_wraps_is_refused(tmp_path, capsys):
    """`b = 2147483647` then `if tl.cdiv(b, 3) > 0:` around a writer's events: Python's cdiv is
    positive, Triton's wraps negative (no commit: the reader waits forever). Refused at the
    condition's line (local_tensors.BuildRules.folded_cdiv); its twin b = 2147483645 (no wrap:
    both 715827882) is verified."""
    from tle_compiler.cli.dump import main as tle_dump

    def kernel(b: int) -> str:
        return f'''import triton.language as tl
import tle_compiler as tle


@tle.jit
def k(x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, y_ptr, N))], [4], [232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    b = {b}
    for p in range(N):
        if tl.cdiv(b, 3) > 0:
            slot = w.acquire(p)
            tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + p * 64 + tl.arange(0, 64)))
            w.commit(p)


def consume(kv, y_ptr, N):
    r = kv.reader()
    for p in range(N):
        res = r.wait(p)
        tl.store(y_ptr + p * 64 + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))
        r.release(p)
'''
    bad = tmp_path / "bad.py"
    bad.write_text(kernel(2147483647))
    assert tle_dump(["-q", str(bad)]) == 1
    err = capsys.readouterr()
    line = next(i for i, t in enumerate(kernel(0).splitlines(), 1) if "tl.cdiv" in t)
    assert f"bad.py:{line}: error: `b` in `tl.cdiv(b, 3)`" in err.out + err.err, err
    assert "-715827882" in err.out + err.err and "715827883" in err.out + err.err
    good = tmp_path / "good.py"
    good.write_text(kernel(2147483645))
    assert tle_dump(["-q", str(good)]) == 0, capsys.readouterr()
