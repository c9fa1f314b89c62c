"""A ``tle.assume`` on a param the kernel computes from its arguments is checked at launch; one on
a value no launch can compute is refused.

``M = N // 64; tle.assume(M >= 1)`` lets the verifier prove a consumer that waits tile 0 before
its loop, for every M >= 1. The launch checked only assumptions on kernel arguments, so N = 10
(M = 0) launched, the producer committed nothing and the consumer's first wait hung. The launch
now evaluates M from N as the GPU does (C's ``//`` and ``%``) and refuses N = 10, naming M's
value, its definition and the assumption's line. An assumption on a value loaded from memory (or
a program id) cannot be checked by any launch: the frontend refuses it at its line
(``bad-assume``), instead of proving the protocol for values nothing guarantees.
Checked before compiling, so no GPU is needed.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tle_compiler.cli.dump import main as tle_dump
from tle_compiler.diagnostics import TleError
from tle_compiler.frontend import read_source

CASES = Path(__file__).parent / "cases"

NESTED = '''
import triton.language as tl
import tle_compiler as tle


@tle.jit
def k(x_ptr, N, B):
    K = tl.cdiv(N, 64)
    M = K // B
    tle.assume(M >= 1)
    tle.assume(B >= 1)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, M)), (consume, (kv, x_ptr, M))], [4], [232])


def produce(kv, x_ptr, M):
    w = kv.writer()
    for i in range(M):
        w.acquire(i)
        w.commit(i)


def consume(kv, x_ptr, M):
    r = kv.reader()
    r.wait(0)
    r.release(0)
    for i in range(1, M):
        r.wait(i)
        r.release(i)
'''


def load_kernel(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(path.stem.replace(".", "_"), path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, name)


def line_of(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


@pytest.fixture
def tiles():
    return load_kernel(CASES / "assume_unlaunchable.ok.py", "tiles")


def test_the_assumption_on_a_derived_param_knows_how_a_launch_computes_it(tiles):
    rt = tiles.runtime
    (n, m) = rt.assumptions({"x_ptr": None, "y_ptr": None, "N": 64})
    assert (n.param, n.arg, n.arguments) == ("N", "N", ("N",))
    assert (m.param, m.arg, m.min, m.arguments) == ("M", None, 1, ("N",))
    assert [str(st) for st in m.steps] == ["M = N // 64"]


@pytest.mark.parametrize("n", [10, 63, 0])
def test_a_launch_whose_derived_param_violates_the_assumption_is_refused(tiles, n):
    rt = tiles.runtime
    with pytest.raises(ValueError) as ei:
        rt.check_assumptions(rt.bind((None, None, n), {}))
    path = CASES / "assume_unlaunchable.ok.py"
    assert (f"argument N = {n} gives M = 0 (M = N // 64), which violates `tle.assume(M >= 1)` "
            f"({path}:{line_of(path, '    tle.assume(M >= 1)')})") in str(ei.value)


def test_a_launch_inside_the_assumptions_passes(tiles):
    rt = tiles.runtime
    for n in (64, 127, 10**6):
        rt.check_assumptions(rt.bind((None, None, n), {}))
    with pytest.raises(ValueError, match=r"argument N = -5 violates `tle.assume\(N >= 0\)`"):
        rt.check_assumptions(rt.bind((None, None, -5), {}))


def test_the_launch_refuses_before_compiling(tiles):
    # kernel[grid](...) checks the assumptions first: no compile, no GPU needed
    with pytest.raises(ValueError, match="gives M = 0"):
        tiles[(1,)](None, None, 10)


def test_a_float_argument_of_a_derived_assumption_is_refused(tmp_path):
    path = tmp_path / "nested.py"
    path.write_text(NESTED)
    rt = load_kernel(path, "k").runtime
    with pytest.raises(ValueError, match=r"argument N is used to compute M, bounded by "
                                         r"`tle\.assume\(M >= 1\)`.*must be an integer, got "
                                         r"float 100\.5"):
        rt.check_assumptions({"x_ptr": None, "N": 100.5, "B": 1})


def test_a_chain_of_definitions_is_evaluated_with_c_division(tmp_path):
    path = tmp_path / "nested.py"
    path.write_text(NESTED)
    k = load_kernel(path, "k")
    rt = k.runtime
    m = next(a for a in rt.assumptions({"x_ptr": None, "N": 1, "B": 1}) if a.param == "M")
    assert m.arguments == ("N", "B")
    # K = cdiv(N, 64) = (N + 63) // 64, M = K // B
    rt.check_assumptions(rt.bind((None, 1, 1), {}))  # K = 1, M = 1
    rt.check_assumptions(rt.bind((None, 200, 2), {}))  # K = 4, M = 2
    with pytest.raises(ValueError, match="arguments N = 64, B = 2 give M = 0"):
        rt.check_assumptions(rt.bind((None, 64, 2), {}))  # K = 1, M = 0
    # C truncates: N = -100 gives K = (-37) / 64 = 0 (Python's floor would give -1), M = 0
    with pytest.raises(ValueError, match="arguments N = -100, B = 1 give M = 0"):
        rt.check_assumptions(rt.bind((None, -100, 1), {}))
    # B = 0 is refused by its own assumption (arguments' assumptions are checked first)
    with pytest.raises(ValueError, match=r"B = 0 violates `tle.assume\(B >= 1\)`"):
        rt.check_assumptions(rt.bind((None, 100, 0), {}))


def test_an_assumption_no_launch_can_check_is_refused_at_its_line(capsys):
    path = CASES / "assume_unlaunchable.bad.py"
    with pytest.raises(TleError) as ei:
        read_source(path.read_text(), str(path))
    assert ei.value.check == "bad-assume"
    assert ei.value.loc.line == line_of(path, "    tle.assume(M >= 1)")
    assert "not computed from the kernel's arguments alone" in ei.value.message
    assert tle_dump(["-q", str(path)]) == 1
    assert f"{path}:{ei.value.loc.line}: error:" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["tl.program_id(0)", "tl.load(x_ptr + 1)"])
def test_program_ids_and_loaded_values_cannot_be_assumed(value):
    src = NESTED.replace("    K = tl.cdiv(N, 64)\n    M = K // B\n", f"    M = {value}\n")
    with pytest.raises(TleError, match="not computed from the kernel's arguments alone"):
        read_source(src, "k.py")


# the GPU computes a derived param in the launch's integer width: M = (N * 3) // 64 with N an i32
# argument multiplies in i32, so N = 715827883 gives 3*N = -2147483647 (wrapped) and M = -33554431,
# while unbounded integers gave 33554432 and let the launch through to a hang
WRAPPING = NESTED.replace("    K = tl.cdiv(N, 64)\n    M = K // B\n", "    M = (N * 3) // 64\n") \
    .replace("    tle.assume(B >= 1)\n", "")
MIXED = NESTED.replace("    K = tl.cdiv(N, 64)\n    M = K // B\n", "    M = (N * 3 + B) // 64\n") \
    .replace("    tle.assume(B >= 1)\n", "")


def _runtime(tmp_path, source: str):
    path = tmp_path / "wrapping.py"
    path.write_text(source)
    return load_kernel(path, "k").runtime


def test_a_derived_param_is_computed_with_the_gpus_i32_wrap(tmp_path):
    rt = _runtime(tmp_path, WRAPPING)
    rt.check_assumptions({"x_ptr": None, "N": 64, "B": 1})  # M = 3
    rt.check_assumptions({"x_ptr": None, "N": 715827882, "B": 1})  # 3*N = 2^31 - 2: no wrap
    with pytest.raises(ValueError) as ei:
        rt.check_assumptions({"x_ptr": None, "N": 715827883, "B": 1})
    assert ("argument N = 715827883 gives M = -33554431 (M = (3*N) // 64; the GPU's integers "
            "wrap: 3*N = -2147483647), which violates `tle.assume(M >= 1)`") in str(ei.value)


def test_a_wrapped_value_inside_the_assumption_passes(tmp_path):
    # N = 1431655766: 3*N = 4294967298 wraps to 2, M = 0 (refused); N = 1431655808 wraps to 128,
    # M = 2 (what the GPU runs with, inside M >= 1: the protocol is verified for it)
    rt = _runtime(tmp_path, WRAPPING)
    with pytest.raises(ValueError, match=r"gives M = 0 .*3\*N = 2\)"):
        rt.check_assumptions({"x_ptr": None, "N": 1431655766, "B": 1})
    rt.check_assumptions({"x_ptr": None, "N": 1431655808, "B": 1})


def test_an_i64_argument_is_computed_in_i64(tmp_path):
    rt = _runtime(tmp_path, WRAPPING)
    # 2^31 is passed as i64, so 3*N does not wrap: M = 100663296
    rt.check_assumptions({"x_ptr": None, "N": 2**31, "B": 1})
    # 2^62 is i64 and 3*N wraps in i64: 13835058055282163712 - 2^64 < 0
    with pytest.raises(ValueError, match=r"3\*N = -4611686018427387904"):
        rt.check_assumptions({"x_ptr": None, "N": 2**62, "B": 1})


def test_an_i32_part_leaving_i32_in_an_i64_expression_is_refused(tmp_path):
    # B = 2^40 is i64, N i32: the GPU wraps 3*N in i32 before adding B (the order the affine
    # operand no longer has), so a launch where 3*N leaves i32 cannot be checked
    rt = _runtime(tmp_path, MIXED)
    rt.check_assumptions({"x_ptr": None, "N": 1000, "B": 2**40})
    with pytest.raises(ValueError, match=r"cannot be checked .*`3\*N` = 2147483649 mixes i32"):
        rt.check_assumptions({"x_ptr": None, "N": 715827883, "B": 2**40})
