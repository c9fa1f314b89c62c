"""``tle.assume`` on an affine expression of one param: ``M = N // 64 - 1; tle.assume(M >= 1)``.

M is not a param of its own: it is ``N_64 - 1`` with ``N_64 = N // 64`` the param, and the
assumption was refused as bounding "neither a param nor a constant". A bound on ``k * P + c`` is
exactly a bound on P (integer division, rounded the right way for each comparison; a negative k
flips it), so the frontend records it on P: the verdict names ``N_64 >= 2`` and the launch checks
N // 64 >= 2 as for any assumption on a derived param.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tle_compiler.frontend.ast_reader import kernels_of_source

KERNEL = '''
import triton.language as tl
import tle_compiler as tle


@tle.jit
def k(x_ptr, N):
    M = N // 64 - 1
    tle.assume(ASSUME)
    p = tle.pipe(capacity=1, x=tle.gpu.alloc([1, 16], tl.float32))
    tle.gpu.warp_specialize([(prod, (p, M)), (cons, (p, x_ptr, M))], [4], [200])


def prod(p, n):
    w = p.writer()
    for i in range(n - 1):
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.x), tl.zeros([16], tl.float32))
        w.commit(i)
    s = w.acquire(n - 1)
    tl.store(tle.gpu.local_ptr(s.x), tl.zeros([16], tl.float32))
    w.commit(n - 1)


def cons(p, x_ptr, n):
    r = p.reader()
    for i in range(n):
        res = r.wait(i)
        tl.store(x_ptr + tl.arange(0, 16), tl.load(tle.gpu.local_ptr(res.slot.x)))
        r.release(i)
'''


def bounds(assume: str):
    """(min, max) the assumption puts on the param N // 64 (named N_64)."""
    info, = kernels_of_source(KERNEL.replace("ASSUME", assume), "affine.py")
    a, = info.assumptions
    assert a.param == "N_64"
    return a.min, a.max


@pytest.mark.parametrize("assume,want", [
    ("M >= 1", (2, None)), ("M > 1", (3, None)), ("M <= 5", (None, 6)), ("M < 5", (None, 5)),
    ("M == 3", (4, 4)), ("1 <= M", (2, None)), ("2 * M + 1 >= 6", (4, None)),
    ("2 * M >= 3", (3, None)), ("2 * M <= 3", (None, 2)), ("-M >= -3", (None, 4)),
    ("1 <= M <= 3", (2, 4)),
])
def test_a_bound_on_k_p_plus_c_is_the_exact_bound_on_p(assume, want):
    assert bounds(assume) == want


def test_no_integer_solution_is_refused():
    from tle_compiler.diagnostics import TleError

    with pytest.raises(TleError, match="no integer solution"):
        kernels_of_source(KERNEL.replace("ASSUME", "2 * M == 3"), "affine.py")


def test_verified_with_the_assumption_and_rejected_without(capsys):
    from tle_compiler.cli.dump import main as tle_dump

    def run(assume, tmp):
        path = tmp / "affine_kernel.py"
        path.write_text(KERNEL.replace("ASSUME", assume))
        rc = tle_dump(["-q", str(path)])
        return rc, capsys.readouterr()

    import tempfile
    with tempfile.TemporaryDirectory() as d:
        rc, out = run("M >= 1", Path(d))
        assert rc == 0, out
        assert "N_64 >= 2" in out.out + out.err
        rc, out = run("M >= 0", Path(d))   # M = 0: the writer acquires -1
        assert rc == 1, out


def test_the_launch_checks_it(tmp_path):
    path = tmp_path / "affine_launch.py"
    path.write_text(KERNEL.replace("ASSUME", "M >= 1"))
    spec = importlib.util.spec_from_file_location("affine_launch", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rt = mod.k.runtime
    rt.check_assumptions(rt.bind((0, 128), {}))        # N // 64 = 2
    with pytest.raises(ValueError, match="N = 64"):
        rt.check_assumptions(rt.bind((0, 64), {}))     # N // 64 = 1: M = 0
