"""A verdict for every value of a param says it covers launches whose loop bounds and indices fit
in i32.

The verifier counts with unbounded integers; the GPU computes a kernel's integer arguments and
what is derived from them in i32. A writer looping `range(N + 1)` and a reader waiting 0..N agree
for every integer N, yet at N = 2^31 - 1 the bound wraps to -2^31 on the GPU: the writer commits
nothing and the reader's first wait never passes. tle-dump printed "verified for every value of N
(N >= 0)"; the verdict line now names the condition under which the claim holds (docs/semantics.md,
"Integers are unbounded")."""

from __future__ import annotations

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
        "verified for every value of N (N >= 0) with loop bounds and indices in i32: ")
    assert v.to_json()["caveat"] == "with loop bounds and indices in i32"
    path = tmp_path / "k.py"
    path.write_text(KERNEL)
    assert tle_dump(["-q", str(path)]) == 0
    assert "every value of N (N >= 0) with loop bounds and indices in i32:" in \
        capsys.readouterr().err


def test_a_finite_domain_names_it_too():
    src = KERNEL.replace("tle.assume(N >= 0)", "tle.assume(0 <= N <= 8)")
    (program,) = read_source(src, "k.py").kernels
    assert "(0 <= N <= 8) with loop bounds and indices in i32:" in \
        verify(program).verdict().describe()


def test_values_given_and_bounded_checks_name_what_was_checked_only():
    (program,) = read_source(KERNEL, "k.py").kernels
    given = verify(program, params={"N": 3}).verdict()
    assert given.kind == "proved" and given.caveat == ""
    assert given.describe().startswith("verified for N = 3: ")
    bounded = verify(program, bound=5).verdict()
    assert bounded.kind == "bounded" and bounded.caveat == ""
