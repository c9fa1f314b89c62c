"""Several free params, all but one of a small finite domain (passes/cutoff.py ``_split_finite``):
a kernel with a flag it assumes 0 or 1 beside a trip count N is proved for every N at each value
of the flag (the cutoff theorem once per value, as ``--param FLAG=v`` proves it), not bounded to
the values of both near zero.

Before, such a kernel was "bounded" (exit 3): every combination within 64 of zero checked, no
claim beyond. A flag that breaks the protocol only past that bound (a commit skipped at p = 100
when FLAG = 1) was then not found; now each value's plan reaches the theorem's values (N0 from
the constants), so it is rejected with its witness. A domain too large to split, a --bound, or a
value whose own plan is only bounded keep the bounded plan of every param.
"""

from __future__ import annotations

import pytest

from tle_compiler.cli.dump import main as tle_dump

KERNEL = '''
import triton.language as tl
import tle_compiler as tle


@tle.jit
def k(x_ptr, y_ptr, N, FLAG: tl.constexpr):
    tle.assume(N >= 0)
    tle.assume(FLAG >= 0)
    tle.assume(FLAG <= TOP)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N, FLAG)), (consume, (kv, y_ptr, N))],
                            [4], [232])


def produce(kv, x_ptr, N, FLAG: tl.constexpr):
    # a range over FLAG compiles only for an integer FLAG: the verdict covers every launch
    # (a float FLAG, which the protocol's integers do not hold, bounds it: round 46)
    for q in range(FLAG):
        pass
    w = kv.writer()
    for p in range(N):
        slot = w.acquire(p)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + p * 64 + tl.arange(0, 64)))
        COMMIT


def consume(kv, y_ptr, N):
    r = kv.reader()
    for p in range(N):
        res = r.wait(p)
        tl.store(y_ptr + p * 64 + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))
        r.release(p)
'''

# FLAG = 1 skips the commit of index 100: a fault only from N = 101 on, past the bounded sweep's
# values (within 64 of zero)
SKIP_AT_100 = "if (p != 100) | (FLAG != 1):\n            w.commit(p)"
# the same commit written two ways, by the flag: safe at every value
TWO_WAYS = ("if FLAG == 0:\n            w.commit(p)\n        else:\n"
            "            w.commit(p + 0)")


def dump(tmp_path, capsys, commit: str, top: int, *argv: str):
    path = tmp_path / "kernel.py"
    path.write_text(KERNEL.replace("COMMIT", commit).replace("TOP", str(top)))
    code = tle_dump([*argv, "-q", str(path)])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("top", [1, 3])
def test_a_flag_of_a_few_values_is_proved_at_each(tmp_path, capsys, top):
    code, err = dump(tmp_path, capsys, TWO_WAYS, top)
    assert code == 0, err
    assert f"verified for every value of N (N >= 0) at each value of FLAG (0 <= FLAG <= {top})" \
        in err
    assert "cutoff theorem" in err


@pytest.mark.parametrize("top", [1, 2])
def test_a_fault_past_the_bounded_values_is_found(tmp_path, capsys, top):
    code, err = dump(tmp_path, capsys, SKIP_AT_100, top)
    assert code == 1 and "verified" not in err, err
    assert "FLAG=1" in err and "acquire(100) of pipe 'kv' is never committed" in err, err


def test_each_value_alone_agrees(tmp_path, capsys):
    """--param FLAG=0 proves it; --param FLAG=1 rejects it at the same place."""
    assert dump(tmp_path, capsys, SKIP_AT_100, 1, "--param", "FLAG=0")[0] == 0
    code, err = dump(tmp_path, capsys, SKIP_AT_100, 1, "--param", "FLAG=1")
    assert code == 1 and "acquire(100)" in err, err


def test_a_domain_too_large_to_split_stays_bounded(tmp_path, capsys):
    code, err = dump(tmp_path, capsys, TWO_WAYS, 99)
    assert code == 3 and "bounded" in err and "2 free params" in err, err


def test_a_bound_keeps_it_bounded(tmp_path, capsys):
    code, err = dump(tmp_path, capsys, TWO_WAYS, 1, "--bound", "8")
    assert code == 3 and "bounded" in err, err


def test_two_finite_params_are_every_combination(tmp_path, capsys):
    """N itself of a finite domain beside the flag: every combination checked, proved."""
    path = tmp_path / "kernel.py"
    path.write_text(KERNEL.replace("COMMIT", TWO_WAYS).replace("TOP", "1").replace(
        "tle.assume(N >= 0)", "tle.assume(N >= 0)\n    tle.assume(N <= 5)"))
    code = tle_dump(["-q", str(path)])
    err = capsys.readouterr().err
    assert code == 0 and ("verified for every combination of N (0 <= N <= 5) and FLAG "
                          "(0 <= FLAG <= 1)") in err, err
