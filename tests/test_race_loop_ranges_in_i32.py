"""The memory-race check reads a loop's range as Triton computes it: ``range(s * 65536)`` of an
int32 argument ``s`` compares the counter with the int32 product, which wraps around. Read as
an integer, the bound of ``s < 0`` was negative, the loop empty, and a partition storing at
``y + q`` in it was verified beside another storing at ``y``; at s = -65535 the product is
65,536 in int32 and both store ``y[0]`` (a false verified, fixed in
frontend/race_terms.instance: the start, stop and step of a loop around an access are read in
their type, race_wraps.operand). The witness names the argument and the wrap. So are the
loops around the pipe events that order two accesses: a hand-off in a loop that runs no
iteration in int32 orders nothing."""

from __future__ import annotations

import pytest

from .adversarial_support import dump, expect
from .test_adversarial_verdicts_75 import two_stores

LOOP = "for q in range(s * 65536):\n        tl.store(y_ptr + q, 1.0)"
FROM = "for q in range(s * 65536, 1):\n        tl.store(y_ptr + q, 1.0)"
INNER = ("for i in range(2):\n        for q in range(s * 65536):\n"
         "            tl.store(y_ptr + q, 1.0)")
WIDE = "for q in range(s.to(tl.int64) * 65536):\n        tl.store(y_ptr + q, 1.0)"


def kernel(store: str, *assumed: str) -> str:
    """The round-75 ring, the producer running ``store`` after its events and the consumer
    storing ``y[0]`` after its own, under ``tle.assume`` of each of ``assumed``."""
    src = two_stores(store, "tl.store(y_ptr, 2.0)")
    return src.replace("    kv = tle.pipe", "".join(f"    tle.assume({a})\n" for a in assumed)
                       + "    kv = tle.pipe")


@pytest.mark.parametrize("store, assumed, line, witness", [
    # s * 65536 negative as an integer, 65,536 in int32 at s = -65535
    (LOOP, ("s < 0",), 29, "at q = 0) and 'consume' (store at line 29) can reach the same "
                           "global address `y_ptr` + 0 (with s = -65535) where a loop's int32 "
                           "range arithmetic wraps around"),
    # the start past the stop as integers, 0 in int32 at s = 65536 (2 ** 32)
    (FROM, ("s > 0",), 29, "(with s = 65536) where a loop's int32 range arithmetic wraps"),
    # a loop inside another: its range read at each iteration of the outer one
    (INNER, ("s < 0",), 30, "at i = 0, q = 0) and 'consume'"),
])
def test_a_loop_range_that_wraps_in_int32_runs(tmp_path, capsys, store, assumed, line, witness):
    code, err = dump(tmp_path, capsys, kernel(store, *assumed))
    expect(code, err, ("rejected", f"kernel.py:{line}: error: partitions 'produce'", witness,
                       "[memory-race]"))


@pytest.mark.parametrize("store, assumed", [
    # bounded so that the product stays in int32: the loop never runs
    (LOOP, ("s < 0", "s > -32768")),
    (FROM, ("s > 0", "s < 32768")),
    (INNER, ("s < 0", "s > -32768")),
    # the product in int64 (a 64-bit loop): negative, the loop never runs
    (WIDE, ("s < 0",)),
])
def test_a_loop_range_that_stays_in_its_type_is_read_exactly(tmp_path, capsys, store, assumed):
    code, err = dump(tmp_path, capsys, kernel(store, *assumed))
    expect(code, err, "verified")


#: a ring whose hand-offs run in loops of `BOUND` iterations, the producer storing y[0..127]
#: before its loop and the consumer after its own: ordered by commit 0 and wait 0 where the
#: loops run
HANDOFF = '''import triton.language as tl
import tle_compiler as tle


@tle.jit
def k(x_ptr, y_ptr, s):
    ASSUMED
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 128], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, y_ptr, s)),
                             (consume, (kv, y_ptr, s))], [4], [232])


def produce(kv, x_ptr, y_ptr, s):
    w = kv.writer()
    tl.store(y_ptr + tl.arange(0, 128), tl.load(x_ptr + tl.arange(0, 128)))
    for t in range(BOUND):
        sl = w.acquire(t)
        tl.store(tle.gpu.local_ptr(sl.tile), tl.load(x_ptr + t * 128 + tl.arange(0, 128)))
        w.commit(t)


def consume(kv, y_ptr, s):
    r = kv.reader()
    for t in range(BOUND):
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t)
    tl.store(y_ptr + tl.arange(0, 128), tl.zeros([128], tl.float32) + 2.0)
'''


@pytest.mark.parametrize("bound", ["(s * 65536) // 65536", "s * 65536 >> 16"])
def test_a_hand_off_in_a_loop_that_wraps_empty_orders_nothing(tmp_path, capsys, bound):
    """s >= 1: as integers the loops run s times, and commit 0 / wait 0 order the two stores
    (verified before); in int32, at s = 32768, `s * 65536` is -2 ** 31 and the loops run
    none, so nothing orders them."""
    src = HANDOFF.replace("ASSUMED", "tle.assume(s > 0)").replace("BOUND", bound)
    code, err = dump(tmp_path, capsys, src)
    expect(code, err, ("rejected", "kernel.py:28: error: partitions 'produce' (store at line "
                       "15) and 'consume' (store at line 28)", "`y_ptr` + 0 (with s = ",
                       "where a loop's int32 range arithmetic wraps around", "[memory-race]"))


def test_a_hand_off_in_a_loop_that_stays_in_int32_orders(tmp_path, capsys):
    src = HANDOFF.replace("ASSUMED", "tle.assume(s > 0)\n    tle.assume(s < 32768)") \
        .replace("BOUND", "(s * 65536) // 65536")
    code, err = dump(tmp_path, capsys, src)
    expect(code, err, "verified")
