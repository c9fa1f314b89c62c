"""The translator's element types (lowering/promotion.py) against Triton's own type checking:
every pair of element types (and Python numbers beside each), for arithmetic, true division and
``//`` / ``%``, gives Triton's type or None where Triton refuses the pair; and the slot stores
whose value's type the translator cannot know are converted, those it knows are not."""

from __future__ import annotations

import itertools

import pytest

tl = pytest.importorskip("triton.language")
from triton.language.semantic import TritonSemantic  # noqa: E402

from tle_compiler.ir import promotion  # noqa: E402

GLUON_NAMES = ["int1", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
               "float16", "bfloat16", "float32", "float64", "float8e4nv", "float8e5"]
PYTHON = {promotion.PY_INT: 3, promotion.PY_FLOAT: 0.5, promotion.PY_BOOL: True}


def _triton(name):
    return getattr(tl, name) if hasattr(tl, name) else tl.dtype(
        {"float8e4nv": "fp8e4nv", "float8e5": "fp8e5"}[name])


def _gluon_name(dtype) -> str:
    """Triton's dtype name in the translator's spelling."""
    return {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "fp64": "float64",
            "fp8e4nv": "float8e4nv", "fp8e5": "float8e5"}.get(dtype.name, dtype.name)


def _triton_type(a, b, op):
    """What Triton computes ``a op b`` in, or None where it refuses (a Python number given as
    its kind; Triton's to_tensor type for it)."""
    sem = TritonSemantic(None)
    ta = _triton(a) if a in GLUON_NAMES else {promotion.PY_INT: tl.int32,
                                              promotion.PY_FLOAT: tl.float32,
                                              promotion.PY_BOOL: tl.int1}[a]
    tb = _triton(b) if b in GLUON_NAMES else {promotion.PY_INT: tl.int32,
                                              promotion.PY_FLOAT: tl.float32,
                                              promotion.PY_BOOL: tl.int1}[b]
    try:
        t = sem.computation_type_impl(ta, a in PYTHON, tb, b in PYTHON, op in ("/", "//", "%"))
    except (TypeError, ValueError):
        return None
    if op == "/" and t.is_int():
        return "float32"
    return _gluon_name(t)


@pytest.mark.parametrize("op", ["+", "/", "%"])
def test_every_pair_of_element_types_promotes_as_triton_does(op):
    names = GLUON_NAMES + list(PYTHON)
    wrong = []
    for a, b in itertools.product(names, repeat=2):
        if a in PYTHON and b in PYTHON:
            continue  # folded by the frontend: no tensor's type
        want = _triton_type(a, b, op)
        got = promotion.result_type([a, b], op)
        if got != want:
            wrong.append((a, b, got, want))
    assert not wrong, wrong[:20]


def test_an_unknown_operand_gives_no_type():
    assert promotion.result_type(["int32", None], "+") is None
    assert promotion.result_type([None, promotion.PY_FLOAT], "*") is None
    assert promotion.result_type(["int8", promotion.PY_INT, "int32"], "+") == "int32"
    assert promotion.result_type(["int8", promotion.PY_INT], "+") == "int8"
    assert promotion.result_type(["int32", promotion.PY_FLOAT], "+") == "float32"
    assert promotion.result_type(["bfloat16", promotion.PY_FLOAT], "*") == "bfloat16"
    assert promotion.result_type(["bfloat16", "float32"], "*") == "float32"


@pytest.mark.parametrize("name", GLUON_NAMES)
def test_a_sum_is_typed_as_tl_sum_types_it(name):
    """tl.sum's own choice (standard._pick_sum_dtype): narrow integers sum as 32-bit ones of
    their signedness; xor_sum keeps the type (max / min: test_lowering_adversarial_6's table)."""
    from triton.language.standard import _pick_sum_dtype

    picked = _pick_sum_dtype(_triton(name), None)
    assert promotion.reduced_type("sum", name) == (name if picked is None
                                                   else _gluon_name(picked))
    assert promotion.reduced_type("xor_sum", name) == name


def test_gluon_printed_is_the_source_the_compile_compiles():
    """tle-dump --gluon types the kernel by its DEFAULT_CONFIG signature, as the compile does
    (an fp8 pointer's byte loads take 16-byte rows, a slot store of a value of known type is not
    converted): the printed module is the one --ttgir compiles."""
    pytest.importorskip("triton.experimental.gluon")
    import os

    from tle_compiler.lowering.compile import compile_kernel, kernel_info_of
    from tle_compiler.lowering.dumping import default_config, lowered

    path = os.path.join(os.path.dirname(__file__), "..", "tle_kernels",
                        "sparse_decode_split_fp8.py")
    path = os.path.abspath(path)
    cfg = default_config(path, "sparse_decode_split_fp8")
    cx = dict(cfg.get("constexprs", {}))
    c = compile_kernel(kernel_info_of((path, "sparse_decode_split_fp8"), cx), cfg["signature"], cx)
    assert lowered(path, "sparse_decode_split_fp8", "gluon") == c.tle_generated.source
