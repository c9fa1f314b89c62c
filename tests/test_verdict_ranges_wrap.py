"""The values a verdict short of a proof names as checked safe leave out every launch whose
derived params the GPU computes otherwise than the verifier.

The witness search (passes/witness.py) evaluates derived params' definitions over the unbounded
integers. A kernel whose writer counts `((N.to(tl.int64) << 28) >> 28) + 10` tiles and whose
reader counts `((N << 28) >> 28) + 10` gets one value from both at every N, so no base value
shows a fault; on the GPU the i32 shift wraps (18 against 2 tiles at N = 8: the kernel hangs).
The verdict is "bounded" over the base values checked, and those at which a step of a definition
leaves i32 are left out (passes/i32_range.py). What it then prints has to be a set of launches
all of which were checked without a wrap: the hull of the values kept took in the values left
out between them (`(N % 16) << 28` wraps at N = 8 but not at N = 16: "N in [-116, 116]" was
printed). Each case here evaluates both trip counts as the GPU does, with numpy's two's
complement int32 / int64 and C's truncating `//` and `%`, at every value of the printed range,
and at a value where they differ that the range must leave out.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from tle_compiler.cli.dump import main as tle_dump
from tle_compiler.ir.nodes import Program
from tle_compiler.ir.parser import parse_module
from tle_compiler.passes import run_pipeline
from tle_compiler.passes.sweep import safe_ranges

from .test_adversarial_verdicts_3 import counts

# ----------------------------------------------------------------------------- the GPU's integers


def i32(x: int) -> int:
    """``x`` as the GPU's i32 arithmetic holds it (sums, products and left shifts wrap)."""
    return int(np.array([x], dtype=np.int64).astype(np.int32)[0])


def i64(x: int) -> int:
    """``x`` as an i64 (every value here fits: numpy refuses one that does not)."""
    return int(np.int64(x))


def tdiv(a: int, b: int) -> int:
    """C's (and arith.divsi's) truncating division, on numpy int64."""
    q = np.floor_divide(np.int64(a), np.int64(b))
    if a % b and (a < 0) != (b < 0):
        q += 1
    return int(q)


def trem(a: int, b: int) -> int:
    """C's remainder: the dividend's sign."""
    return a - b * tdiv(a, b)


def trips(count: int) -> int:
    return max(count, 0)


# ----------------------------------------------------------------------------- running tle-dump

H = "def k(x_ptr, y_ptr, N, M, C: tl.constexpr):\n"


def verdict(tmp_path: Path, capsys, text: str, *params: str) -> tuple[int, dict]:
    path = tmp_path / "k.py"
    path.write_text(text)
    args = [a for p in params for a in ("--param", p)]
    code = tle_dump(["--format", "json", *args, str(path)])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    (kernel,) = json.loads(out)["kernels"]
    return code, kernel


def values(text: str) -> list[int]:
    """The values of ``[a, b]``, ``{a}`` or ``{}``."""
    m = re.fullmatch(r"\[(-?\d+), (-?\d+)\]", text)
    if m:
        return list(range(int(m[1]), int(m[2]) + 1))
    m = re.fullmatch(r"\{(-?\d+)\}", text)
    return [int(m[1])] if m else ([] if text == "{}" else pytest.fail(text))


# ----------------------------------------------------------------------------- the cases

# name: (writer's count, reader's count, both as the GPU computes them, a value of N at which
# they differ on the GPU)
CASES = {
    "a shift after a widening cast against the i32 shift": (
        "((N.to(tl.int64) << 28) >> 28) + 10", "((N << 28) >> 28) + 10",
        lambda n: ((i64(n) << 28) >> 28) + 10, lambda n: (i32(n << 28) >> 28) + 10, 8),
    "a shift of a remainder, wrapping between values that do not": (
        "(((N % 16).to(tl.int64) << 28) >> 28) + 10", "(((N % 16) << 28) >> 28) + 10",
        lambda n: ((i64(trem(n, 16)) << 28) >> 28) + 10,
        lambda n: (i32(trem(n, 16) << 28) >> 28) + 10, 24),
    "a product near 2^31 divided back": (
        "(N.to(tl.int64) * 134217728) // 134217728 + 20", "(N * 134217728) // 134217728 + 20",
        lambda n: tdiv(i64(n) * 134217728, 134217728) + 20,
        lambda n: tdiv(i32(n * 134217728), 134217728) + 20, 16),
    "C's division of a wrapped negative sum": (
        "(N.to(tl.int64) * 1073741824 + 5) // 1073741824 + 6",
        "(N * 1073741824 + 5) // 1073741824 + 6",
        lambda n: tdiv(i64(n) * 1073741824 + 5, 1073741824) + 6,
        lambda n: tdiv(i32(n * 1073741824 + 5), 1073741824) + 6, 2),
    "C's remainder of a wrapped negative product": (
        "(N.to(tl.int64) * 1073741824) % 3 + 4", "(N * 1073741824) % 3 + 4",
        lambda n: trem(i64(n) * 1073741824, 3) + 4,
        lambda n: trem(i32(n * 1073741824), 3) + 4, 2),
    "widening a product after it wrapped": (
        "(N * 268435456).to(tl.int64) - 2147483640", "N * 268435456 - 2147483640",
        lambda n: i64(i32(n * 268435456)) - 2147483640, lambda n: i32(n * 268435456 - 2147483640),
        8),
    "an i32 product promoted beside an i64 value": (
        "N.to(tl.int64) - N + N * 268435456 - 2147483640", "N * 268435456 - 2147483640",
        lambda n: i64(n) - n + i32(n * 268435456) - 2147483640,
        lambda n: i32(n * 268435456 - 2147483640), -1),
}
SHIFT = CASES["a shift after a widening cast against the i32 shift"]
REMAINDER = CASES["a shift of a remainder, wrapping between values that do not"]


@pytest.mark.parametrize("name", list(CASES))
def test_the_range_claimed_leaves_out_every_value_the_gpu_computes_otherwise(tmp_path, capsys,
                                                                               name):
    wsrc, rsrc, writer, reader, bad = CASES[name]
    assert trips(writer(bad)) != trips(reader(bad)), "the case shows no difference on the GPU"
    code, k = verdict(tmp_path, capsys, counts(wsrc, rsrc))
    assert code == 3 and k["verdict"] in ("bounded", "unknown"), k
    safe = values(k["checked"]["N"])
    assert safe, k  # the values that do not wrap are claimed
    assert bad not in safe, k
    for n in safe:
        assert trips(writer(n)) == trips(reader(n)), (n, k["checked"])
    if k["verdict"] == "bounded":
        assert k["scope"] == f"N in {k['checked']['N']}", k


def test_the_remainder_case_names_no_value_past_the_first_wrap(tmp_path, capsys):
    """`(N % 16) << 28` wraps at N = 8 to 15 and fits again at 16 to 23: the range names the run
    of values around zero, [-8, 7], not the hull of every value kept ([-116, 116] before)."""
    wsrc, rsrc, *_ = REMAINDER
    _, k = verdict(tmp_path, capsys, counts(wsrc, rsrc))
    assert k["checked"] == {"N": "[-8, 7]"}, k
    assert "at N=8" in k["reason"] and "outside i32" in k["reason"], k


def test_a_shift_by_the_width_or_more_is_claimed_for_no_value(tmp_path, capsys):
    """`N >> 40` is 0 or -1 over the integers; on the GPU a shift of an i32 by 32 or more is
    undefined (LLVM's poison): no value is claimed, and the verdict stays "bounded" (exit 3)."""
    code, k = verdict(tmp_path, capsys, counts("(N >> 40) + 10", "(N.to(tl.int64) >> 40) + 10"))
    assert code == 3 and k["verdict"] == "bounded", k
    assert k["checked"] == {"N": "{}"}, k
    assert "undefined on the GPU" in k["reason"] and "outside i32" not in k["reason"], k


@pytest.mark.parametrize("n, proved", [(8, False), (7, True), (-8, True), (-9, False),
                                       (2147483647, False)])
def test_a_value_given_is_claimed_only_where_nothing_wraps(tmp_path, capsys, n, proved):
    """`--param N=n`: proved where nothing wraps (the GPU's two counts agree there); at a value
    where a step wraps, no value is claimed (exit 3; "unknown" at 2^31 - 1, whose 2^31 - 1
    tiles the budget does not expand, "bounded" elsewhere)."""
    wsrc, rsrc, writer, reader, _ = SHIFT
    code, k = verdict(tmp_path, capsys, counts(wsrc, rsrc), f"N={n}")
    assert (trips(writer(n)) == trips(reader(n))) == proved
    if proved:
        assert code == 0 and k["verdict"] == "proved", k
    else:
        assert code == 3 and k["verdict"] in ("bounded", "unknown"), k
        assert k["checked"]["N"] == "{}" and "outside i32" in k["reason"], k


def test_a_derived_value_given_leaves_out_the_launches_that_wrap_to_it(tmp_path, capsys):
    """`--param N_16_28_28=-8` fixes the reader's count at 2 tiles. Over the integers only N with
    C's N % 16 = -8 give it (N = -8, -24, ...); on the GPU N = 8 gives it too (8 << 28 wraps to
    -2^31), where the writer counts 18. The claim names the fixed value and a range of N whose
    launches that give it were all checked: 8 is not in it."""
    wsrc, rsrc, writer, reader, _ = REMAINDER
    code, k = verdict(tmp_path, capsys, counts(wsrc, rsrc), "N_16_28_28=-8")
    assert code == 3 and k["verdict"] == "bounded", k
    assert k["checked"]["N_16_28_28"] == "{-8}", k
    safe = values(k["checked"]["N"])
    assert -8 in safe and 8 not in safe, k
    assert reader(8) == 2 and writer(8) == 18
    for n in safe:
        if reader(n) == 2:  # the launches the claim is about
            assert writer(n) == 2, n


def test_a_finite_domain_checked_whole_is_no_proof_where_a_value_wraps(tmp_path, capsys):
    """Every value of 0 <= N <= 12 is checked from the base values, which would prove it; N = 8
    to 12 wrap on the GPU, so the verdict is bounded, over [0, 7]."""
    wsrc, rsrc, writer, reader, _ = SHIFT
    text = counts(wsrc, rsrc).replace(H, H + "    tle.assume(N >= 0)\n    tle.assume(N <= 12)\n")
    code, k = verdict(tmp_path, capsys, text)
    assert code == 3 and k["verdict"] == "bounded" and k["checked"] == {"N": "[0, 7]"}, k
    assert all(trips(writer(n)) == trips(reader(n)) for n in range(8))
    assert trips(writer(8)) != trips(reader(8))


def test_safe_twins_stay_proved(tmp_path, capsys):
    """The same expression in both partitions is one param: proved for every value (exit 0),
    whatever it computes on the GPU, since every value of it is checked."""
    for wsrc in ("((N << 28) >> 28) + 10", "(N >> 40) + 10", "(N * 1073741824) % 3 + 4"):
        code, k = verdict(tmp_path, capsys, counts(wsrc, wsrc))
        assert code == 0 and k["verdict"] == "proved", (wsrc, k)


# ----------------------------------------------------------------------------- several params

GRID = """kernel grid
param N
param M
pipe kv capacity=2 fields=(k)
partition p default warps=4 {
  for i in range(N) {
    kv.acquire(i)
    kv.write(i, k)
    kv.commit(i)
  }
}
partition c warps=4 {
  for j in range(M) {
  }
  for i in range(N) {
    kv.wait(i)
    kv.read(i, k)
    kv.release(i)
  }
}
"""


@pytest.mark.parametrize("budget", [300, 2_000])
def test_a_budget_that_runs_out_claims_a_box_of_values_checked(budget):
    """Two free params are checked by increasing |N| + |M|; a budget that stops the sweep leaves
    a triangle of values, whose hull ([0, 6] x [0, 6] at 300 events) holds values never
    checked. The verdict ("unknown", exit 3) names a box every pair of which was checked."""
    (program,) = parse_module(GRID, "grid.pipe").kernels
    assert isinstance(program, Program)
    ctx = run_pipeline(program, budget=budget)
    v = ctx.verdict()
    assert v.kind == "unknown" and v.exit_code == 3, v
    done = {(d["N"], d["M"]) for d in ctx.sweep.done}
    box = [(n, m) for n in values(v.checked["N"]) for m in values(v.checked["M"])]
    assert box and set(box) <= done, (v.checked, sorted(done))
    hull_n = range(min(n for n, _ in done), max(n for n, _ in done) + 1)
    hull_m = range(min(m for _, m in done), max(m for _, m in done) + 1)
    assert any((n, m) not in done for n in hull_n for m in hull_m)  # the hull would be wrong


def test_safe_ranges():
    """The box grows from the first value while each new face lies among the values (or those
    the claim need not cover), never across a value left out."""
    one = [{"N": n} for n in [0, 1, -1, 2, -2, 3, 5, 6, 7, -4]]
    assert safe_ranges(one) == {"N": "[-2, 3]"}
    assert safe_ranges(one, [{"N": 4}, {"N": -3}]) == {"N": "[-4, 7]"}
    assert safe_ranges([{"N": 5}]) == {"N": "{5}"}
    assert safe_ranges([]) == {}
    grid = [{"N": n, "M": m} for n in range(4) for m in range(4) if n + m <= 4]
    box = safe_ranges(grid)
    pairs = {(d["N"], d["M"]) for d in grid}
    assert all((n, m) in pairs for n in values(box["N"]) for m in values(box["M"])), box
