"""`q = -7` in a partition is an i32 tensor in Triton 3.6 (visit_Assign), so `q // 2` is C's -3
and `q % 3` C's -1; the frontend folds the name to its value, and Python's -4 / 2 was what the
verifier and the lowered Gluon computed: an event index `p + 4 + q // 2` verified as p, run by
Triton as p + 1 (the writer commits indices the reader never waits: a hang). Such a division is
refused at its line where C and Python differ (frontend/local_tensors.py
BuildRules.folded_division); where they agree, or the name is a constexpr, or the division is a
literal's (Triton folds `-7 // 2` as Python), the kernel reads as before."""

from __future__ import annotations

import pytest

from tle_compiler.cli.dump import main as tle_dump

KERNEL = '''import triton.language as tl
import tle_compiler as tle


@tle.jit
def k(x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.int32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, y_ptr, N))], [4], [232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    BIND
    for p in range(N):
        slot = w.acquire(p + SHIFT)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + p * 64 + tl.arange(0, 64)))
        w.commit(p + SHIFT)


def consume(kv, y_ptr, N):
    r = kv.reader()
    for p in range(N):
        res = r.wait(p)
        tl.store(y_ptr + p * 64 + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))
        r.release(p)
'''


def run(tmp_path, capsys, bind, shift):
    f = tmp_path / "k.py"
    f.write_text(KERNEL.replace("BIND", bind).replace("SHIFT", shift))
    code = tle_dump(["-q", str(f)])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("bind,shift,c_value,py_value", [
    ("q = -7", "4 + q // 2", -3, -4),          # Triton runs p + 1: refused
    ("q = -7", "1 + q % 3", -1, 2),            # C's -1, Python's 2
    ("q = 7", "4 + q // -2", -3, -4),
    ("q = -7", "4 + (q + 0) // 2", -3, -4),    # through an expression of q
    ("d = 2\n    q = -7", "4 + q // d", -3, -4),
])
def test_a_folded_local_divided_where_c_and_python_differ_is_refused(tmp_path, capsys, bind,
                                                                       shift, c_value, py_value):
    code, err = run(tmp_path, capsys, bind, shift)
    assert code == 1, err
    line = KERNEL.replace("BIND", bind).replace("SHIFT", shift).splitlines().index(
        f"        slot = w.acquire(p + {shift})") + 1
    assert f"k.py:{line}: error: `" in err and "[unsupported-expression]" in err, err
    assert f"truncating: {c_value})" in err and f"gives {py_value}" in err, err


@pytest.mark.parametrize("bind,shift", [
    ("q: tl.constexpr = -7", "4 + q // 2"),     # a constexpr divides as Python: index p
    ("q = -8", "4 + q // 2"),                   # exact: C and Python agree
    ("q = 7", "q // 2 - 3"),                    # non-negative operands agree
    ("q = 0", "4 + -7 // 2"),                   # a literal: Triton folds it as Python (-4)
])
def test_a_division_both_readings_agree_on_is_verified(tmp_path, capsys, bind, shift):
    code, err = run(tmp_path, capsys, bind, shift)
    assert code == 0 and "verified for every value of N" in err, err


def test_a_rebound_name_is_refused_by_the_walker_as_before(tmp_path, capsys):
    """`q //= 2` binds q twice: the protocol walker's rule (not folded) refuses it."""
    code, err = run(tmp_path, capsys, "q = -7\n    q //= 2", "4 + q")
    assert code == 1 and "bound more than once" in err, err
