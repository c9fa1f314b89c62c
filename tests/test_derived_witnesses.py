"""A fault at values of derived params is reported with values a launch gives (passes/witness.py).

``M = tl.cdiv(N, 64)`` and ``(N + 64) // 64`` are params checked as if independent; a fault found at
a combination of them is checked again from values of ``N``, and reported as ``when N=0 (M=0,
N_64_64=1)``: the derived values beside the base value that gives them. A fault no checked base
value gives leaves the kernel "bounded", never "rejected". The derived values the tests expect are
computed here with C's division, independently of the compiler's definitions.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tle_compiler.cli.dump import main as tle_dump
from tle_compiler.frontend import read_file, read_source
from tle_compiler.ir.derived import Definition, Derived, derive
from tle_compiler.ir.expr import Affine
from tle_compiler.passes import verify
from tle_compiler.semantics.simulator import simulate

CASES = Path(__file__).parent / "cases"
WHEN = re.compile(r"\(when (\w+=-?\d+(?:, \w+=-?\d+)*) \(([^()]*)\)")


def c_div(a: int, b: int) -> int:
    """C's (Triton's) truncating quotient."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def values(text: str) -> dict[str, int]:
    return {k: int(v) for k, v in (item.split("=") for item in text.split(", "))}


def witness(message: str) -> tuple[dict[str, int], dict[str, int]]:
    """The base values and the derived ones of ``(when N=0 (M=0, K=1), i=0)``."""
    m = WHEN.search(message)
    assert m, f"no base witness in: {message}"
    return values(m.group(1)), values(m.group(2))


def faults_at(program, params: dict[str, int]) -> set[tuple[str, int]]:
    return {(e.kind, e.loc.line) for e in simulate(program, params).errors}


# -- the cdiv spelling case -------------------------------------------------------------------------

def test_every_witness_of_the_cdiv_spelling_case_is_a_value_of_n(capsys):
    """Before, the second error said `when M=1, N_64_64=0`: M = 1 needs N in [1, 64], N_64_64 = 0
    needs N in [-64, -1]. Every error now names an N, whose derived values are the ones shown and
    fail in the simulator at the error's line."""
    path = CASES / "cdiv_spelling.bad.py"
    (program,) = read_file(path).kernels
    ctx = verify(program)
    assert ctx.errors and ctx.verdict().kind == "rejected"
    for d in ctx.errors:
        base, derived = witness(d.message)
        n = base["N"]
        assert derived == {"M": c_div(n + 63, 64), "N_64_64": c_div(n + 64, 64)}, d.message
        # the simulator fails there too, at the same line (it calls the wait that never passes a
        # deadlock)
        assert d.loc.line in {line for _, line in faults_at(program, derived)}, d.message
    assert ("wait-never-committed", 29) in {(d.check, d.loc.line) for d in ctx.errors}
    assert tle_dump([str(path), "-q"]) == 1
    err = capsys.readouterr().err
    assert "(when N=0 (M=0, N_64_64=1), i=0)" in err
    assert "N_64_64=0" not in err and "[unconsumed]" not in err


def test_the_definitions_are_kept_on_the_program():
    (program,) = read_file(CASES / "cdiv_spelling.bad.py").kernels
    assert [p.name for p in program.params] == ["M", "N_64_64"]
    assert [p.name for p in program.bases] == ["N"]
    assert {d.name: str(d.definition) for d in program.derived} == {
        "M": "(N + 63) // 64", "N_64_64": "(N + 64) // 64"}
    for n in range(-200, 200):
        assert derive(program.derived, {"N": n}) == {
            "N": n, "M": c_div(n + 63, 64), "N_64_64": c_div(n + 64, 64)}


# -- a fault no base value gives ---------------------------------------------------------------------

HALVES = '''\
import triton.language as tl
import tle_compiler as tle


@tle.jit
def tiles(x_ptr, y_ptr, N):
    ASSUME
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, y_ptr, N))], [4], [232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    for i in range(N // 2):
        slot = w.acquire(i)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + i * 64 + tl.arange(0, 64)))
        w.commit(i)


def consume(kv, y_ptr, N):
    r = kv.reader()
    for i in range((2 * N) // 4):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(i)
        tl.store(y_ptr + i * 64 + tl.arange(0, 64), v)
'''


def test_a_fault_only_at_combinations_no_base_value_gives_is_not_rejected(tmp_path, capsys):
    """N // 2 and (2 * N) // 4 are two params (two spellings) but one value for every N: the
    independent check finds the producer committing 0 tiles and the consumer waiting 1, which
    no N gives. The kernel is correct for every N the search checks, so it is bounded there."""
    (program,) = read_source(HALVES.replace("ASSUME", "pass"), "k.py").kernels
    a, b = (p.name for p in program.params)
    assert faults_at(program, {a: 0, b: 1})  # the impossible combination is faulty ...
    for n in range(-300, 300):  # ... but no N gives a faulty one
        assert not faults_at(program, {a: c_div(n, 2), b: c_div(2 * n, 4)}), n
    ctx = verify(program)
    v = ctx.verdict()
    assert ctx.ok and v.kind == "bounded", [str(d) for d in ctx.errors]
    assert v.checked == {"N": "[-16, 16]"}
    assert "needs derived values no checked value of N gives" in v.reason
    assert f"{a}=0, {b}=1" in v.reason
    path = tmp_path / "halves.py"
    path.write_text(HALVES.replace("ASSUME", "pass"))
    assert tle_dump([str(path), "-q"]) == 3
    assert "bounded" in capsys.readouterr().err


def test_values_given_that_no_base_value_gives_are_not_rejected(capsys):
    """--param fixing an impossible combination: the fault there is no launch's."""
    path = CASES / "cdiv_spelling.bad.py"
    assert tle_dump([str(path), "-q", "--param", "M=1", "--param", "N_64_64=0"]) == 3
    assert "only for N in {}" in capsys.readouterr().err
    assert tle_dump([str(path), "-q", "--param", "M=2"]) == 1
    assert "(when N=128 (M=2, N_64_64=3), i=2)" in capsys.readouterr().err


SQUARE = '''\
import triton.language as tl
import tle_compiler as tle


@tle.jit
def ring(x_ptr, N):
    M = N * N
    kv = tle.pipe(capacity=1, tile=tle.gpu.alloc([1, 64], tl.int32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, M)), (consume, (kv, x_ptr, M))], [4], [232])


def produce(kv, x_ptr, M):
    w = kv.writer()
    for t in range(M):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + tl.arange(0, 64)))
        w.commit(t)
    w.close(M)


def consume(kv, x_ptr, M):
    r = kv.reader()
    for t in range(M):
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t)
    r.wait(M)
    r.release(M)
'''


def test_one_derived_param_at_a_value_no_base_value_gives():
    """M = N * N ranges over every integer as a param; close(M) at M = -1 is a negative index
    that no N gives. One free param, whose plan would prove every value: not proved, not
    rejected either."""
    (program,) = read_source(SQUARE, "k.py").kernels
    assert faults_at(program, {"M": -1})
    v = verify(program).verdict()
    assert v.kind == "bounded", v.describe()
    assert "negative-index" in v.reason and "M=-1" in v.reason


# -- a real fault at a derived value -----------------------------------------------------------------

def test_a_real_fault_is_rejected_with_the_smallest_base_value_that_gives_it():
    path = CASES / "derived_witness.bad.py"
    (program,) = read_file(path).kernels
    ctx = verify(program)
    (err,) = ctx.errors
    assert (err.check, err.loc.line) == ("unconsumed", 25)
    base, derived = witness(err.message)
    assert base == {"N": 65} and derived == {"M": 2, "K": 1}, err.message
    assert ("unconsumed", 25) in faults_at(program, derived)
    for n in range(0, 65):  # no smaller N shows a fault
        m = c_div(n + 63, 64)
        assert not faults_at(program, {"M": m, "K": min(m, 1)}), n


def test_the_base_search_keeps_to_the_assumed_domain(tmp_path, capsys):
    """tle.assume(0 <= N <= 64): every N of the domain gives at most one tile, so the kernel is
    correct for all of them, and every one was checked: proved for every N of the domain. At
    0 <= N <= 100 the fault at N = 65 is a launch's: rejected."""
    src = (CASES / "derived_witness.bad.py").read_text()
    for assume, kind in (("0 <= N <= 64", "proved"), ("0 <= N <= 100", "rejected")):
        (program,) = read_source(src.replace("N >= 0", assume), "k.py").kernels
        v = verify(program).verdict()
        assert v.kind == kind, v.describe()
        if kind == "proved":
            assert v.scope == "every value of N (0 <= N <= 64)"


def test_json_carries_the_base_witness(capsys):
    path = CASES / "derived_witness.bad.py"
    assert tle_dump([str(path), "--format", "json"]) == 1
    out = json.loads(capsys.readouterr().out)
    (kernel,) = out["kernels"]
    (diag,) = kernel["diagnostics"]
    assert diag["witness"] == {"base": {"N": 65}, "derived": {"M": 2, "K": 1}}
    assert "(when N=65 (M=2, K=1), i=1)" in diag["message"]
    assert {p["name"]: p.get("definition") for p in kernel["params"]} == {
        "M": "(N + 63) // 64", "K": "minimum(M, 1)"}
    assert [b["name"] for b in kernel["bases"]] == ["N"]


def test_a_kernel_without_derived_params_keeps_its_witness_text():
    (program,) = read_file(CASES / "c_remainder.bad.py").kernels
    assert not program.derived
    for d in verify(program).errors:
        assert not WHEN.search(d.message), d.message


# -- definitions ---------------------------------------------------------------------------------------

N = Affine.of("N")


@pytest.mark.parametrize("op,c,n,want", [
    ("//", True, -64, 0), ("//", False, -64, -1),  # C truncates, Python floors
    ("%", True, -5, -1), ("%", False, -5, 3),  # C's remainder takes the dividend's sign
])
def test_division_follows_the_operands_kind(op, c, n, want):
    assert Definition(op, (N + 63 if op == "//" else N, Affine.of(64 if op == "//" else 4)),
                      c).eval({"N": n}) == want


def test_definitions_nest_and_refuse_undefined_values():
    d = (Derived("M", Definition("//", (N, Affine.of("D")), True)),
         Derived("K", Definition("next_power_of_2", (Affine.of("M"),))))
    assert derive(d, {"N": 100, "D": 7}) == {"N": 100, "D": 7, "M": 14, "K": 16}
    assert derive(d, {"N": 100, "D": 0}) is None


# -- values of base params given (--param N=...) ---------------------------------------------------

SPLIT = '''\
import triton.language as tl
import tle_compiler as tle


@tle.jit
def k(x_ptr, N):
    tle.assume(N >= 0)
    M = N // 2
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, x_ptr, N, M))], [4], [232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    for i in range(N):
        w.acquire(i)
        w.commit(i)


def consume(kv, x_ptr, N, M):
    r = kv.reader()
    for i in range(M * 2):
        r.wait(i)
        r.release(i)
    for i in range(M * 2, N):
        r.wait(i)
        r.release(i)
'''

HALF_AND_ROUNDED_HALF = '''\
import triton.language as tl
import tle_compiler as tle


@tle.jit
def k(x_ptr, N):
    tle.assume(N >= 0)
    M = N // 2
    K = (N + 1) // 2
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, M)), (consume, (kv, x_ptr, K))], [4], [232])


def produce(kv, x_ptr, M):
    w = kv.writer()
    for i in range(M):
        w.acquire(i)
        w.commit(i)


def consume(kv, x_ptr, K):
    r = kv.reader()
    for i in range(K):
        r.wait(i)
        r.release(i)
'''


@pytest.mark.parametrize("n", [0, 3, 4, 9])
def test_a_base_value_given_fixes_the_params_derived_from_it(tmp_path, capsys, n):
    """The reader's two loops cover 0..N-1 whatever M is, as long as M = N // 2: with N given,
    M is that value and the kernel is verified for it. Before, M stayed free and the check found
    a fault at M = N // 2 + 1 (no launch's), so --param N=4 was "bounded" (exit 3)."""
    path = tmp_path / "split.py"
    path.write_text(SPLIT)
    assert tle_dump(["-q", "--param", f"N={n}", str(path)]) == 0
    assert f"verified for N = {n} (M = {c_div(n, 2)}):" in capsys.readouterr().err
    (program,) = read_source(SPLIT, "k.py").kernels
    ctx = verify(program, params={"N": n})
    assert ctx.fixed_params == {"N": n, "M": c_div(n, 2)}
    assert ctx.verdict().kind == "proved" and ctx.verdict().scope == f"N = {n} (M = {c_div(n, 2)})"
    # a derived value given with it must be the one its definition gives
    assert tle_dump(["-q", "--param", f"N={n}", "--param", f"M={c_div(n, 2) + 1}", str(path)]) == 2
    assert f"M = N // 2 is {c_div(n, 2)} at N={n}" in capsys.readouterr().err


def test_a_base_param_that_is_no_param_of_the_program_can_be_given(tmp_path, capsys):
    """N is used only through M = N // 2 and K = (N + 1) // 2, so the Program's params are M and
    K; the printed witness `when N=1 (M=0, K=1)` is checked again with --param N=1, which was
    refused ("no such param (known: K, M)", exit 2)."""
    path = tmp_path / "halves.py"
    path.write_text(HALF_AND_ROUNDED_HALF)
    assert tle_dump(["-q", str(path)]) == 1
    first = capsys.readouterr().err
    base, derived = witness(first)
    assert base == {"N": 1} and derived == {"M": 0, "K": 1}
    assert tle_dump(["-q", "--param", "N=1", str(path)]) == 1
    err = capsys.readouterr().err
    assert "(when N=1 (M=0, K=1), i=0)" in err and "[wait-never-committed]" in err
    for n in (0, 2, 8):  # even N: M = K, correct
        assert tle_dump(["-q", "--param", f"N={n}", str(path)]) == 0
        assert f"verified for N = {n} (M = {n // 2}, K = {n // 2}):" in capsys.readouterr().err
    assert tle_dump(["-q", "--param", "N=7", str(path)]) == 1
    assert "(when N=7 (M=3, K=4), i=3)" in capsys.readouterr().err
    # the base's domain (tle.assume(N >= 0)) holds for it like for any param
    assert tle_dump(["-q", "--param", "N=-1", str(path)]) == 2
    assert "--param N=-1 is outside the domain of N (N >= 0)" in capsys.readouterr().err
    assert tle_dump(["-q", "--param", "X=1", str(path)]) == 2
    assert "no such param (known: K, M, N)" in capsys.readouterr().err


def test_a_base_value_whose_derived_value_leaves_its_domain_is_unusable(tmp_path, capsys):
    src = SPLIT.replace("    M = N // 2\n", "    M = N // 2\n    tle.assume(M >= 1)\n")
    path = tmp_path / "split.py"
    path.write_text(src)
    assert tle_dump(["-q", "--param", "N=1", str(path)]) == 2
    assert "give M = 0 (M = N // 2), outside the domain of M (M >= 1)" in \
        capsys.readouterr().err
    assert tle_dump(["-q", "--param", "N=2", str(path)]) == 0


def test_a_base_value_given_near_2_31_is_checked_through_its_definitions(tmp_path, capsys):
    """(N + 64) // 64 at N = 2^31 - 1: the sum wraps in i32 before the division; the value given
    is left out of the verdict (passes/i32_range.py) and the definition named."""
    src = HALF_AND_ROUNDED_HALF.replace("    M = N // 2\n    K = (N + 1) // 2\n",
                                        "    M = (N + 64) // 64\n").replace(
        "(consume, (kv, x_ptr, K))", "(consume, (kv, x_ptr, M))").replace(
        "    for i in range(M):\n        w.acquire(i)\n        w.commit(i)\n",
        "    if M >= 1:\n        w.acquire(0)\n        w.commit(0)\n").replace(
        "def consume(kv, x_ptr, K):\n    r = kv.reader()\n    for i in range(K):\n"
        "        r.wait(i)\n        r.release(i)\n",
        "def consume(kv, x_ptr, M):\n    r = kv.reader()\n    r.wait(0)\n    r.release(0)\n")
    (program,) = read_source(src, "k.py").kernels
    assert [str(d) for d in program.derived] == ["M = (N + 64) // 64"]
    assert verify(program, params={"N": 2**31 - 65}).verdict().kind == "proved"
    v = verify(program, params={"N": 2**31 - 1}).verdict()
    assert v.kind == "bounded"
    assert "`N + 64` in the definition `M = (N + 64) // 64`" in v.reason
    assert "is 2147483711" in v.reason
    path = tmp_path / "wrap.py"
    path.write_text(src)
    assert tle_dump(["-q", "--param", "N=2147483647", str(path)]) == 3
    assert "only for N in {}" in capsys.readouterr().err
