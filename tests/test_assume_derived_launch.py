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
