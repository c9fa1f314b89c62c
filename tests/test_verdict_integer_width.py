"""A verdict for every value of a param says it covers launches whose loop bounds, loop counters,
conditions and indices fit in i32; a verdict for values given claims nothing for a value at which one of them
leaves i32.

The verifier counts with unbounded integers; the GPU computes a kernel's integer arguments and
what is derived from them in i32. A writer looping `range(N + 1)` and a reader waiting 0..N agree
for every integer N, yet at N = 2^31 - 1 the bound wraps to -2^31 on the GPU: the writer commits
nothing and the reader's first wait never passes. tle-dump printed "verified for every value of N
(N >= 0)"; the verdict line now names the condition under which the claim holds (docs/semantics.md,
"Integers are unbounded").

With ``--param N=2147483647`` the same kernels were "verified for N = 2147483647" (exit 0), while
at that value `range(N, N + 2)` runs no iteration and `N + 1 > 0` is false on the GPU: a checked
value at which a loop bound, a condition's operand, an index or a derived param's definition
leaves i32 is now no value the verdict covers (bounded, exit 3, the expression named)."""

from __future__ import annotations

import json

from tle_compiler.cli.dump import main as tle_dump
from tle_compiler.frontend import read_source
from tle_compiler.passes import verify

KERNEL = '''\
import triton.language as tl
import tle_compiler as tle


@tle.jit
def ring(x_ptr, N):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.int32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, x_ptr, N))], [4], [232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    for t in range(N + 1):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + tl.arange(0, 64)))
        w.commit(t)


def consume(kv, x_ptr, N):
    r = kv.reader()
    for t in range(N):
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t)
    res = r.wait(N)
    v = tl.load(tle.gpu.local_ptr(res.slot.tile))
    r.release(N)
    tl.store(x_ptr + tl.arange(0, 64), v)
'''


def test_every_value_names_the_i32_condition(tmp_path, capsys):
    (program,) = read_source(KERNEL, "k.py").kernels
    v = verify(program).verdict()
    assert v.kind == "proved" and v.exit_code == 0
    assert v.describe().startswith(
        "verified for every value of N (N >= 0) with loop bounds, loop counters, conditions and indices in i32: ")
    assert v.to_json()["caveat"] == "with loop bounds, loop counters, conditions and indices in i32"
    path = tmp_path / "k.py"
    path.write_text(KERNEL)
    assert tle_dump(["-q", str(path)]) == 0
    assert "every value of N (N >= 0) with loop bounds, loop counters, conditions and indices in i32:" in \
        capsys.readouterr().err


def test_a_finite_domain_names_it_too():
    src = KERNEL.replace("tle.assume(N >= 0)", "tle.assume(0 <= N <= 8)")
    (program,) = read_source(src, "k.py").kernels
    assert "(0 <= N <= 8) with loop bounds, loop counters, conditions and indices in i32:" in \
        verify(program).verdict().describe()


def test_values_given_and_bounded_checks_name_what_was_checked_only():
    (program,) = read_source(KERNEL, "k.py").kernels
    given = verify(program, params={"N": 3}).verdict()
    assert given.kind == "proved" and given.caveat == ""
    assert given.describe().startswith("verified for N = 3: ")
    bounded = verify(program, bound=5).verdict()
    assert bounded.kind == "bounded" and bounded.caveat == ""


def _kernel_file(tmp_path, writer: str, reader: str, assume: str = "") -> str:
    """A one-pipe kernel whose writer and reader bodies are given (indented 4 spaces)."""
    src = f'''\
import triton.language as tl
import tle_compiler as tle


@tle.jit
def k(x_ptr, N):
{assume}    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, x_ptr, N))], [4], [232])


def produce(kv, x_ptr, N):
    w = kv.writer()
{writer}

def consume(kv, x_ptr, N):
    r = kv.reader()
{reader}
'''
    path = tmp_path / "k.py"
    path.write_text(src)
    return str(path)


def _line(path: str, text: str) -> int:
    """The line of ``path`` that holds ``text``."""
    lines = open(path).read().splitlines()
    return next(n for n, line in enumerate(lines, 1) if text in line)


LOOP_WRITER = """\
    for i in range(N, N + 2):
        slot = w.acquire(i - N)
        w.commit(i - N)
"""
TWO_READS = """\
    for i in range(2):
        res = r.wait(i)
        r.release(i)
"""
COND_WRITER = """\
    if N + 1 > 0:
        slot = w.acquire(0)
        w.commit(0)
"""
ONE_READ = """\
    res = r.wait(0)
    r.release(0)
"""


def _json(capsys) -> dict:
    return json.loads(capsys.readouterr().out)["kernels"][0]


def test_a_loop_bound_past_i32_at_a_value_given_is_not_verified(tmp_path, capsys):
    path = _kernel_file(tmp_path, LOOP_WRITER, TWO_READS)
    capsys.readouterr()
    assert tle_dump(["--format", "json", "--param", "N=2147483647", path]) == 3
    k = _json(capsys)
    assert k["verdict"] == "bounded" and not k["verified"]
    line = _line(path, "range(N, N + 2)")
    assert f"the loop bound `N + 2` (line {line}) is 2147483649, outside i32" in k["reason"]
    assert k["checked"] == {"N": "{}"}
    # one below, N + 2 = 2^31 - 1 still fits: the value is verified
    assert tle_dump(["-q", "--param", "N=2147483645", path]) == 0
    assert "verified for N = 2147483645:" in capsys.readouterr().err


def test_a_condition_past_i32_at_a_value_given_is_not_verified(tmp_path, capsys):
    path = _kernel_file(tmp_path, COND_WRITER, ONE_READ, "    tle.assume(N >= 0)\n")
    assert tle_dump(["-q", "--param", "N=2147483647", path]) == 3
    err = capsys.readouterr().err
    assert "bounded:" in err and "only for N in {}" in err
    line = _line(path, "if N + 1 > 0")
    assert f"in the condition `N + 1 > 0`, the operand `N + 1` (line {line}) is 2147483648" in err
    assert tle_dump(["-q", "--param", "N=2147483646", path]) == 0
    capsys.readouterr()
    # for every value, the caveat names conditions
    assert tle_dump(["-q", path]) == 0
    assert "(N >= 0) with loop bounds, loop counters, conditions and indices in i32:" in capsys.readouterr().err


def test_a_strided_loop_is_judged_by_its_last_value_and_its_next_one(tmp_path, capsys):
    reads = TWO_READS.replace("range(2)", "range(0, 4, 2)")
    fits = _kernel_file(tmp_path, """\
    for i in range(N - 4, N, 2):
        slot = w.acquire(i - N + 4)
        w.commit(i - N + 4)
""", reads)
    # at N = 2^31 - 1 the loop takes N - 4 and N - 2, and steps to N: all in i32
    assert tle_dump(["-q", "--param", "N=2147483647", fits]) == 0
    capsys.readouterr()
    wraps = _kernel_file(tmp_path, """\
    for i in range(N - 3, N, 2):
        slot = w.acquire(i - N + 3)
        w.commit(i - N + 3)
""", reads)
    # N - 3, N - 1, and the step to N + 1 that ends the loop wraps: the loop never ends
    assert tle_dump(["-q", "--param", "N=2147483647", wraps]) == 3
    line = _line(wraps, "range(N - 3, N, 2)")
    assert f"the loop variable's next value `i + 2` (line {line}) reaches 2147483648" in \
        capsys.readouterr().err


def test_an_index_past_i32_is_named(tmp_path, capsys):
    path = _kernel_file(tmp_path, """\
    slot = w.acquire(N + 1)
    w.commit(N + 1)
""", """\
    res = r.wait(N + 1)
    r.release(N + 1)
""")
    assert tle_dump(["-q", "--param", "N=2147483647", path]) == 3
    line = _line(path, "w.acquire(N + 1)")
    assert f"the index `N + 1` (line {line}) is 2147483648" in capsys.readouterr().err


def test_the_api_verdict_leaves_out_the_values_that_wrap(tmp_path):
    (program,) = read_source(open(_kernel_file(tmp_path, LOOP_WRITER, TWO_READS)).read(),
                             "k.py").kernels
    v = verify(program, params={"N": 2**31 - 1}).verdict()
    assert v.kind == "bounded" and v.exit_code == 3
    assert "`N + 2`" in v.reason and "outside i32" in v.reason
    assert verify(program, params={"N": 2**31 - 3}).verdict().kind == "proved"
    # a bounded check over values that stay inside is unchanged
    assert verify(program, bound=5).verdict().checked == {"N": "[-5, 5]"}
