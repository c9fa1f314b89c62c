"""A launch refuses a float for a kernel argument the verifier proved the protocol over as an
integer (a param: ``KernelInfo.param_args``), naming the argument.

The verdict is over integers; a float value there would be compiled as an fp32 argument (the
signature follows the launch's values) whose loop bounds and pipe indices no proof covers. The
check runs before compiling, so it needs no GPU.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

KERNEL = '''
import triton.language as tl
import tle_compiler as tle


@tle.jit
def k(x_ptr, N, scale):
    p = tle.pipe(capacity=1, x=tle.gpu.alloc([1, 16], tl.float32))
    tle.gpu.warp_specialize([(prod, (p, N, scale)), (cons, (p, x_ptr, N))], [4], [200])


def prod(p, n_tiles, scale):
    w = p.writer()
    for i in range(n_tiles):
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.x), tl.zeros([16], tl.float32) + scale)
        w.commit(i)


def cons(p, x_ptr, n_tiles):
    r = p.reader()
    for i in range(n_tiles):
        res = r.wait(i)
        tl.store(x_ptr + tl.arange(0, 16), tl.load(tle.gpu.local_ptr(res.slot.x)))
        r.release(i)
'''


def load_kernel(path: Path, text: str, name: str = "k"):
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, name)


@pytest.fixture
def k(tmp_path):
    return load_kernel(tmp_path / "int_params.py", KERNEL)


def test_the_param_is_the_kernel_argument(k):
    assert "N" in k.runtime.info.param_args.values()
    assert "scale" not in k.runtime.info.param_args.values()


@pytest.mark.parametrize("value", [2.5, 4.0, np.float32(3)], ids=repr)
def test_a_non_integer_param_is_refused_at_launch(k, value):
    with pytest.raises(ValueError) as ei:
        k[(1,)](0, value, 1.5)
    msg = str(ei.value)
    assert "k: argument N " in msg and "must be an integer" in msg
    assert f"got {type(value).__name__} {value!r}" in msg


@pytest.mark.parametrize("value", [0, 7, np.int64(16), True], ids=repr)
def test_integers_pass_and_a_float_that_is_no_param_is_not_checked(k, value):
    rt = k.runtime
    rt.check_integer_params(rt.bind((0, value, 0.25), {}))


def test_a_kernel_verified_per_specialisation_checks_its_params(tmp_path):
    """persistent_rounds is read with TOPK bound (its index is affine only then): ROUNDS is a
    param of that reading."""
    text = (Path(__file__).parent / "fixtures" / "persistent_rounds.py").read_text()
    k = load_kernel(tmp_path / "rounds.py", text)
    with pytest.raises(ValueError, match=r"argument ROUNDS .*got float 2\.0"):
        k[(1,)](0, 2.0, TOPK=512)
    assert k.runtime._specialized
    k.runtime.check_integer_params(k.runtime.bind((0, 3), {"TOPK": 512}))


DERIVED = '''
import triton.language as tl
import tle_compiler as tle


@tle.jit
def k(x_ptr, N):
    M = N // 2
    p = tle.pipe(capacity=1, x=tle.gpu.alloc([1, 16], tl.float32))
    tle.gpu.warp_specialize([(prod, (p, M)), (cons, (p, x_ptr, M))], [4], [200])


def prod(p, n_tiles):
    w = p.writer()
    for i in range(n_tiles):
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.x), tl.zeros([16], tl.float32))
        w.commit(i)


def cons(p, x_ptr, n_tiles):
    r = p.reader()
    for i in range(n_tiles):
        res = r.wait(i)
        tl.store(x_ptr + tl.arange(0, 16), tl.load(tle.gpu.local_ptr(res.slot.x)))
        r.release(i)
'''


def test_the_base_argument_of_a_derived_param_is_an_integer(tmp_path):
    """M = N // 2 is the loop bound: a float N (10.5 // 2 = 5.0 on the GPU, an fp32 loop bound)
    is refused as a float M would be; an integer N passes."""
    k = load_kernel(tmp_path / "derived_int.py", DERIVED)
    assert "N" in {getattr(b, "name", b) for b in k.runtime.info.program.bases}
    with pytest.raises(ValueError, match=r"k: argument N .*must be an integer, got float 10\.5"):
        k[(1,)](0, 10.5)
    k.runtime.check_integer_params(k.runtime.bind((0, 10), {}))
