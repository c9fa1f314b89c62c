"""tle-dump checks a kernel read generically at its DEFAULT_CONFIG's integer constexprs, as a read
specialised to them is checked (cli/kernel_checks.py ``check_default_shapes``,
frontend/shared_memory.check_bound_shapes): a pipe field ``[2, C]`` whose DEFAULT_CONFIG gives
C = 3 (Gluon refuses a slot dimension that is not a power of two) or a C that makes the rings
outgrow shared memory is rejected at the declaration (exit 1, naming the configuration), where
it was verified while ``tle-dump --gluon`` of the same file failed. A value that fits is
verified; a --param of the constexpr replaces the DEFAULT_CONFIG value."""

from __future__ import annotations

import pytest

from tle_compiler.cli.dump import main

KERNEL = '''import triton.language as tl
import tle_compiler as tle


@tle.jit(num_warps=4)
def ring(x_ptr, N, C: tl.constexpr):
    p = tle.pipe(capacity=2, buf=tle.gpu.alloc([2, C], tl.float32))
    tle.gpu.warp_specialize([(prod, (p, x_ptr, N, C)), (cons, (p, x_ptr, N, C))], [4], [232])


def prod(p, x_ptr, N, C: tl.constexpr):
    w = p.writer()
    for i in range(N):
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.buf), tl.load(x_ptr + tl.arange(0, C)))
        w.commit(i)


def cons(p, x_ptr, N, C: tl.constexpr):
    r = p.reader()
    for i in range(N):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.buf))
        r.release(i)
        tl.store(x_ptr + C + tl.arange(0, C), v)  # not the x[0:C] prod loads (memory-race)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "N": "i32", "C": "constexpr"},
                  "constexprs": {"C": %d}, "num_warps": 4, "grid": (1,)}
'''


def run(tmp_path, capsys, c: int, *args):
    path = tmp_path / "ring_c.py"
    path.write_text(KERNEL % c)
    code = main([*args, str(path)])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("c, check, words", [
    (3, "bad-pipe", "dimension 3 is not a power of two"),
    (1 << 15, "shared-memory", "beyond Hopper's 227 KB"),
])
def test_a_default_config_value_the_launch_cannot_hold_is_rejected(tmp_path, capsys, c, check,
                                                                    words):
    code, err = run(tmp_path, capsys, c)
    assert code == 1, err
    assert f"ring_c.py:7: error:" in err and words in err and f"[{check}]" in err
    assert f"(DEFAULT_CONFIG: C = {c})" in err
    assert "rejected" in err and "verified for" not in err


def test_a_default_config_value_that_fits_is_verified(tmp_path, capsys):
    code, err = run(tmp_path, capsys, 64)
    assert code == 0, err
    assert "verified for every value of N" in err


def test_a_param_replaces_the_default_config_value(tmp_path, capsys):
    """--param C=64 reads the kernel at 64 (checked there), not at the DEFAULT_CONFIG's 3."""
    code, err = run(tmp_path, capsys, 3, "--param", "C=64")
    assert code == 0, err
    assert "C = 64" in err and "DEFAULT_CONFIG: C = 3" not in err
