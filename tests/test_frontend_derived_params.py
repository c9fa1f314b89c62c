"""Equal expressions of the same kernel params are one derived param.

A trip count that is not affine in the params (`(N + 63) // 64`) becomes an opaque derived param
keyed by the expression, so two partitions reading the same expression agree. Triton defines
`tl.cdiv(x, d)` as `(x + (d - 1)) // d`; the frontend read it under another key, so a producer
looping `tl.cdiv(N, 64)` times and a consumer `(N + 63) // 64` times got two unrelated params and
a correct kernel was rejected with a witness no N gives (one count 0, the other 1). Now tl.cdiv is
read as that very expression: the spellings share a param (or fold to one constant), and a bound
that really differs (`(N + 64) // 64`) is still two params and rejected. Likewise the operands of
commutative operators and of min/max are keyed in one order (`N * D` is `D * N`)."""

from __future__ import annotations

import pytest

from tle_compiler.frontend import read_kernels, read_source
from tle_compiler.passes import verify

TEMPLATE = '''\
import triton.language as tl
import tle_compiler as tle


@tle.jit
def tiles(x_ptr, y_ptr, N, D, NC: tl.constexpr):
    tle.assume(D >= 1)  # (a divisor that may be 0 is refused: adversarial round 58)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N, D, NC)), (consume, (kv, y_ptr, N, D, NC))],
                            [4], [232])


def produce(kv, x_ptr, N, D, NC):
    w = kv.writer()
    for i in range(PRODUCER):
        slot = w.acquire(i)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + i * 64 + tl.arange(0, 64)))
        w.commit(i)


def consume(kv, y_ptr, N, D, NC):
    r = kv.reader()
    for i in range(CONSUMER):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(i)
        tl.store(y_ptr + i * 64 + tl.arange(0, 64), v)
'''


def source(producer: str, consumer: str) -> str:
    return TEMPLATE.replace("PRODUCER", producer).replace("CONSUMER", consumer)


def trip_counts(prog) -> list[str]:
    """The stop of each partition's loop, as the Pipe IR has it."""
    return [str(p.body[0].stop) for p in prog.partitions]


@pytest.mark.parametrize("producer,consumer", [
    ("tl.cdiv(N, 64)", "(N + 63) // 64"),
    ("tl.cdiv(N, 64)", "(63 + N) // 64"),
    ("tl.cdiv(N, 64)", "(N + (64 - 1)) // 64"),
    ("tl.cdiv(N + 1, 64)", "(N + 64) // 64"),
    ("tl.cdiv(N, D)", "(N + D - 1) // D"),
    ("tl.cdiv(N, -8)", "(N - 9) // -8"),
])
def test_one_quantity_spelt_two_ways_is_one_param(producer, consumer):
    (prog,) = read_source(source(producer, consumer), "tiles.py").kernels
    stops = trip_counts(prog)
    assert stops[0] == stops[1], stops
    derived = [p.name for p in prog.params if p.name not in ("N", "D")]
    assert len(derived) == 1, [p.name for p in prog.params]
    ctx = verify(prog)
    assert ctx.ok, [str(d) for d in ctx.diagnostics]
    assert ctx.verdict().kind == "proved", ctx.verdict().describe()


@pytest.mark.parametrize("producer,consumer", [
    ("tl.cdiv(N, 64)", "(N + 64) // 64"),
    ("tl.cdiv(N, 64)", "N // 64"),
    ("tl.cdiv(N, 32)", "(N + 63) // 64"),
    ("tl.cdiv(N, D)", "(N + D) // D"),
])
def test_a_different_bound_is_still_rejected(producer, consumer):
    text = source(producer, consumer)
    (prog,) = read_source(text, "tiles.py").kernels
    stops = trip_counts(prog)
    assert stops[0] != stops[1], stops
    ctx = verify(prog)
    assert not ctx.ok
    wait_line = next(i for i, ln in enumerate(text.splitlines(), 1) if "r.wait(i)" in ln)
    commit_line = next(i for i, ln in enumerate(text.splitlines(), 1) if "w.commit(i)" in ln)
    found = {(d.check, d.loc.line) for d in ctx.errors}
    assert found & {("wait-never-committed", wait_line), ("unconsumed", commit_line)}, found


def test_the_kernel_body_and_a_partition_share_the_param():
    """`M = tl.cdiv(N, 64)` in the kernel body (a derived param of the prologue) and
    `(N + 63) // 64` in a partition."""
    text = source("M", "(N + 63) // 64").replace(
        "    kv = tle.pipe(", "    M = tl.cdiv(N, 64)\n    kv = tle.pipe(", 1).replace(
        "(produce, (kv, x_ptr, N, D, NC))", "(produce, (kv, x_ptr, M, D, NC))").replace(
        "def produce(kv, x_ptr, N, D, NC):", "def produce(kv, x_ptr, M, D, NC):")
    (prog,) = read_source(text, "tiles.py").kernels
    stops = trip_counts(prog)
    assert stops[0] == stops[1] == "M", stops
    assert verify(prog).verdict().kind == "proved"


@pytest.mark.parametrize("nc", [0, 1, 64, 65, 130])
def test_a_cdiv_of_constants_folds_to_the_constant(nc):
    """With NC bound, tl.cdiv(NC, 64) is a number, equal to the consumer's literal count."""
    text = source("tl.cdiv(NC, 64)", str(-(-nc // 64)))
    (info,) = read_kernels("tiles.py", text=text, bind={"NC": nc})
    stops = trip_counts(info.program)
    assert stops == [str(-(-nc // 64))] * 2, stops
    assert verify(info.program).verdict().kind == "proved"



@pytest.mark.parametrize("producer,consumer", [
    ("N * D", "D * N"),
    ("tl.minimum(N, D)", "tl.minimum(D, N)"),
    ("max(N, D)", "max(D, N)"),
    ("(N * D) // 64", "(D * N) // 64"),
])
def test_operands_in_another_order_are_one_param(producer, consumer):
    (prog,) = read_source(source(producer, consumer), "tiles.py").kernels
    stops = trip_counts(prog)
    assert stops[0] == stops[1], stops
    assert verify(prog).verdict().kind == "proved"


@pytest.mark.parametrize("producer,consumer", [
    ("N // D", "D // N"),
    ("N - D", "D - N"),
])
def test_operands_that_do_not_commute_stay_apart(producer, consumer):
    (prog,) = read_source(source(producer, consumer), "tiles.py").kernels
    stops = trip_counts(prog)
    assert stops[0] != stops[1], stops
    assert not verify(prog).ok


# -- the domain a derived param's definition implies ----------------------------------------------

DOMAIN_TEMPLATE = '''\
import triton.language as tl
import tle_compiler as tle


@tle.jit
def ring(x_ptr, N):
    ASSUME
    M = DEFINITION
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


@pytest.mark.parametrize("assume,definition,domain", [
    ("tle.assume(N >= 0)", "N % 4", (0, 3)),
    # (with N >= 0 alone, N + 3 wraps in i32 at N = 2^31 - 1: tests/test_frontend_fixes_23.py)
    ("tle.assume(0 <= N <= 2147483644)", "tl.cdiv(N, 4)", (0, 536870911)),
    ("tle.assume(N >= 0)", "N // 4", (0, None)),
    ("tle.assume(0 <= N <= 100)", "N // 8", (0, 12)),
    ("tle.assume(N >= 5)", "(N - 5) % 3", (0, 2)),
    ("pass", "tl.program_id(0) % 4", (0, 3)),
    ("pass", "tl.cdiv(tl.program_id(0), 2)", (0, None)),
])
def test_a_quotient_or_remainder_keeps_the_range_its_definition_implies(assume, definition,
                                                                         domain):
    """`M = N % 4` with N >= 0 is 0..3, `tl.cdiv(N, 4)` and `N // 4` are >= 0: the close(M)
    protocol above is correct for M >= 0 and was rejected at M = -1, a value no N gives."""
    src = DOMAIN_TEMPLATE.replace("ASSUME", assume).replace("DEFINITION", definition)
    (prog,) = read_source(src, "k.py").kernels
    (m,) = prog.params
    assert (m.min, m.max) == domain
    ctx = verify(prog)
    assert ctx.ok and ctx.verdict().kind == "proved", [str(e) for e in ctx.errors]


@pytest.mark.parametrize("assume,definition,domain", [
    ("pass", "N % 4", (-3, 3)),  # C's remainder of a negative N is negative
    ("tle.assume(N <= 0)", "N % 4", (-3, 0)),
    ("pass", "N // 4", (None, None)),
    ("tle.assume(N <= 10)", "N // 4", (None, 2)),
])
def test_what_the_definition_does_not_bound_stays_open(assume, definition, domain):
    src = DOMAIN_TEMPLATE.replace("ASSUME", assume).replace("DEFINITION", definition)
    (prog,) = read_source(src, "k.py").kernels
    (m,) = prog.params
    assert (m.min, m.max) == domain
    assert not verify(prog).ok  # M = -1 is a value some N gives: close(-1)
