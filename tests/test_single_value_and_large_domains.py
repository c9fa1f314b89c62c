"""Param domains at two extremes: a domain of one value, and a finite domain far larger than the
values a check can list.

- A param whose domain holds one value (`param N >= 3 <= 3`, `tle.assume(A == 3)`) is fixed to it
  as `--param` would fix it (passes/fixed_params.with_single_values): a launch can pass nothing else. Before,
  it counted as a free param, so a kernel with one other free param was only "bounded" (two free
  params), though fixing it by hand proved every value of the other.
- A finite domain inside the cutoff theorem's fragment is proved by the theorem's values cut to
  the domain when they are fewer than the domain's values (passes/cutoff.plan). Before, every
  value of the domain was listed: `param M >= 0 <= 100000` ran out of the verification budget
  ("unknown"), though `param M >= 0` alone was proved.

Each claim is held to a fault it must still find: a value fixed this way is checked, not
assumed safe, and a fault at a large value inside a large domain is found.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import test_cutoff  # its program generator and oracles (one param N, in the fragment)
from tle_compiler.cli.dump import main

TWO = """kernel k
param N{n_domain}
param M{m_domain}
pipe p capacity=2 fields=(x)
partition prod default warps=4 {{
  for j in range(N) {{
    p.acquire(j)
    p.write(j, x)
    p.commit(j)
  }}
  for i in range(M) {{
    p.acquire(N + i)
    p.write(N + i, x)
    p.commit(N + i)
  }}
}}
partition cons warps=4 {{
  for j in range({reader_trips}) {{
    p.wait(j)
    p.read(j, x)
    p.release(j)
  }}
}}
"""

PY = '''import triton.language as tl

import tle_compiler as tle

BM: tl.constexpr = 64
BN = tl.constexpr(64)


@tle.jit
def two(x_ptr, out_ptr, stride_x, A, M):
    {assume_a}
    tle.assume(M >= 0)
    ring = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, BM, BN], tl.float32))
    tle.gpu.warp_specialize([(load_tiles, (ring, x_ptr, stride_x, A, M)),
                             (sum_tiles, (ring, out_ptr, A, M))], [4], [232])


def load_tiles(ring, x_ptr, stride_x, A, M):
    offs_m = tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    w = ring.writer()
    for t in range(A):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile),
                 tl.load(x_ptr + offs_m[:, None] * stride_x + offs_n[None, :]))
        w.commit(t)
    for t in range(M):
        slot = w.acquire(A + t)
        tl.store(tle.gpu.local_ptr(slot.tile),
                 tl.load(x_ptr + offs_m[:, None] * stride_x + offs_n[None, :]))
        w.commit(A + t)


def sum_tiles(ring, out_ptr, A, M):
    offs_m = tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    r = ring.reader()
    acc = tl.zeros([BM, BN], tl.float32)
    for t in range({reader_trips}):
        res = r.wait(t)
        acc += tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t)
    tl.store(out_ptr + offs_m[:, None] * BN + offs_n[None, :], acc)
'''


def run(capsys, *args):
    code = main(["-q", *map(str, args)])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, err


def write(tmp_path: Path, text: str, name: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# ---------------------------------------------------------------- one-value domains


def test_a_one_value_param_beside_a_free_one_is_proved_for_every_value_of_the_other(
        tmp_path, capsys):
    path = write(tmp_path, TWO.format(n_domain=" >= 3 <= 3", m_domain=" >= 0",
                                      reader_trips="N + M"), "two.pipe")
    code, err = run(capsys, path)
    assert code == 0, err
    assert "every value of M (M >= 0), N = 3" in err and "cutoff theorem" in err


def test_a_fault_at_the_one_value_is_still_found(tmp_path, capsys):
    # the reader waits one index more than the writer commits: a deadlock at N = 3, any M
    path = write(tmp_path, TWO.format(n_domain=" >= 3 <= 3", m_domain=" >= 0",
                                      reader_trips="N + M + 1"), "two.pipe")
    code, err = run(capsys, path)
    assert code == 1, err
    assert "N=3" in err


def test_a_fault_only_at_the_one_value_is_found(tmp_path, capsys):
    # a reader that skips the first index when N == 3 only: fixing N to 3 must check N = 3
    text = TWO.format(n_domain=" >= 3 <= 3", m_domain=" >= 0", reader_trips="N + M")
    text = text.replace("    p.wait(j)\n    p.read(j, x)\n    p.release(j)\n",
                        "    if N == 3 and j == 0 {\n    } else {\n"
                        "    p.wait(j)\n    p.read(j, x)\n    p.release(j)\n    }\n")
    code, err = run(capsys, write(tmp_path, text, "two.pipe"))
    assert code == 1, err


def test_a_two_value_param_stays_free(tmp_path, capsys):
    # two values: not fixed, so two free params remain; N's domain is small and finite, so M is
    # proved by the cutoff theorem at each of N's values (passes/cutoff.py _split_finite)
    path = write(tmp_path, TWO.format(n_domain=" >= 3 <= 4", m_domain=" >= 0",
                                      reader_trips="N + M"), "two.pipe")
    code, err = run(capsys, path)
    assert code == 0, err
    assert "verified for every value of M (M >= 0) at each value of N (3 <= N <= 4)" in err, err
    # with a --bound the theorem's values are cut: bounded over both, as before the split
    code, err = run(capsys, "--bound", "8", path)
    assert code == 3 and "bounded" in err and "2 free params" in err, err


def test_a_param_given_keeps_its_given_value(tmp_path, capsys):
    # --param wins over nothing: the one value is the only one it may take anyway, and a value
    # outside the domain stays refused as before
    path = write(tmp_path, TWO.format(n_domain=" >= 3 <= 3", m_domain=" >= 0",
                                      reader_trips="N + M"), "two.pipe")
    code, err = run(capsys, "--param", "N=3", path)
    assert code == 0, err
    code, err = run(capsys, "--param", "N=4", path)
    assert code == 2, err


@pytest.mark.parametrize("assume", ["tle.assume(A == 3)",
                                    "tle.assume(A >= 3)\n    tle.assume(A <= 3)"],
                         ids=["equals", "two_bounds"])
def test_a_python_kernel_assuming_one_value(tmp_path, capsys, assume):
    path = write(tmp_path, PY.format(assume_a=assume, reader_trips="A + M"), "two_params.py")
    code, err = run(capsys, path)
    assert code == 0, err
    assert "every value of M (M >= 0), A = 3" in err


def test_a_python_kernel_assuming_one_value_with_a_fault(tmp_path, capsys):
    path = write(tmp_path, PY.format(assume_a="tle.assume(A == 3)", reader_trips="A + M + 1"),
                 "two_params.py")
    code, err = run(capsys, path)
    assert code == 1, err


# ---------------------------------------------------------------- large finite domains


@pytest.mark.parametrize("top", ["100000", "1000000000000000000000000000000"])
def test_a_large_finite_domain_inside_the_fragment_is_proved(tmp_path, capsys, top):
    path = write(tmp_path, TWO.format(n_domain=" >= 3 <= 3", m_domain=f" >= 0 <= {top}",
                                      reader_trips="N + M"), "two.pipe")
    code, err = run(capsys, path)
    assert code == 0, err
    assert f"every value of M (0 <= M <= {top}), N = 3" in err and "cutoff theorem" in err


GAP = """kernel k
param M >= 0 <= {top}
pipe p capacity=2 fields=(x)
partition prod default warps=4 {{
  for i in range(M) {{
    p.acquire(i)
    p.write(i, x)
    p.commit(i)
  }}
}}
partition cons warps=4 {{
  for i in range(M) {{
    if i < 300 {{
      p.wait(i)
      p.read(i, x)
      p.release(i)
    }}
  }}
}}
"""


def test_a_fault_past_a_threshold_inside_a_large_domain_is_found(tmp_path, capsys):
    # the reader stops consuming at index 300: every M > 300 leaves commits unwaited (the
    # writer's third acquire past 300 deadlocks); the theorem's values reach past the threshold
    code, err = run(capsys, write(tmp_path, GAP.format(top="1000000"), "gap.pipe"))
    assert code == 1, err
    assert "M=301" in err or "M=302" in err or "M=303" in err


def test_a_domain_that_ends_before_the_threshold_is_proved(tmp_path, capsys):
    # the same kernel whose domain stops below the threshold: every value is safe, and the
    # theorem's values (past 300) are more than the domain's, so each value is checked
    code, err = run(capsys, write(tmp_path, GAP.format(top="250"), "gap.pipe"))
    assert code == 0, err
    assert "every value of M (0 <= M <= 250)" in err
    assert "every value of the finite domain checked" in err


# ---------------------------------------------------------------- generated programs


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.integers(0, 2 ** 32 - 1), st.integers(0, 3), st.integers(1, 400))
def test_a_finite_domain_proved_by_the_theorem_holds_at_every_value(seed, lo, span):
    """Generated programs with `param N >= lo <= lo + span`: a "proved" verdict holds at every
    value of the domain (each checked exactly up to 120 values, then sampled), and a fault the
    program has inside the domain is never proved away."""
    from tle_compiler.passes import verify
    from tle_compiler.passes.cutoff import plan

    g = test_cutoff
    rnd = random.Random(seed)
    text = g.gen_program(rnd, mutations=rnd.choice([0, 0, 1, 2]))
    hi = lo + span
    text = re.sub(r"^param N.*$", f"param N >= {lo} <= {hi}", text, count=1, flags=re.M)
    prog = g._one(text)
    v = verify(prog).verdict()
    values = list(range(lo, min(hi, lo + 120) + 1))
    values += sorted(rnd.sample(range(lo, hi + 1), min(20, span + 1)))
    fast = g.FastOracle(prog)
    bad = [n for n in values if fast.faulty(n)]
    if v.kind == "proved":
        assert not bad or not g.exact_ok(prog, bad[0]), "the shortcut disagrees with the oracle"
        assert not bad, f"proved ({v.describe()}, plan {plan(prog).argument}) but faulty at " \
                        f"N = {bad[:5]}:\n{text}"
    if bad and g.exact_ok(prog, bad[0]) is False:
        assert v.kind != "proved"
