"""A seventy-fifth adversarial round (adversarial round 75): the memory-race model's changes of
round FR20 (frontend/race_terms.py's one quotient per dividend and divisor and one term per
expression and instance, the 2-d mask read with the pointer's lanes, global_races.py's
row-pitch split) and the partition guard clause (frontend/build.py).

Kernels tried: a ring whose two partitions store to one global array after their pipe events,
at addresses that divide, shift or split an argument; each verdict checked against the value
the GPU computes (C's truncating ``//`` and ``%``, an arithmetic ``>>``).

False verdicts found:

- ``s >> 1`` and ``s // 2`` one quotient: the quotient memo keyed a dividend and a divisor
  alone, so a right shift by 1 (floor, an arithmetic shift) and a ``//`` by 2 (truncation,
  Triton's sdiv) of one value were one unknown. A partition storing at ``y + (s >> 1) + 1``
  and another at ``y + s // 2`` was verified; at s = -1 both store ``y[0]``. FIXED:
  race_terms._quotient keys its operation too (a shift's quotient its own, read as floor
  exactly).
- A divisor that may be 0 read as one value: ``s // d`` and ``s % d`` of a run-time ``d`` had
  one quotient ``q`` and the remainder ``s - d * q`` wherever ``d`` was 0 or -1 too, so ``s %
  d`` was exactly ``s`` at d = 0 (a remainder by 0 is undefined: LLVM's UB, PTX's "unspecified,
  machine-specific value"), and the quotients of two partitions one value there. ``tl.store(y +
  s % d)`` beside ``tl.store(y + s + 1 + d)`` under ``tle.assume(d >= 0)`` and ``s >= 0`` was
  verified. FIXED: race_terms._quotient gives each occurrence a value of its own where the
  divisor may be 0 or -1 (``If(guard, q, unknown)``), unless z3 proves the divisor neither
  under the instance's constraints (``tl.cdiv(N, BN)`` of an N assumed >= 1: the GEMM stays
  verified).

Held (verdicts checked true, pinned below): a guard clause after a partition's events (`if N >
3: return` before its last commit: rejected at N = 4; the reader guarded alike: verified);
guards of two partitions whose conditions overlap at s = 0 (both store: memory-race) or
exclude each other (verified); `a, b = z.shape` read by position (a store at `y + a` of a
[64, 128] tile meets one at `y + 64`). No false verdict was found in the 2-d mask rule
(race_terms._Aligned: a range reached on two axes, through a name assigned twice too, keeps
its lanes apart; 200 random pairs of 2-d stores of `r = tl.arange(0, 4)` and `c` on either
axis, masked, at a pitch of 3, 4, 5 or a run-time `s`, checked by enumeration) nor in the
row-pitch split (global_races._rows_apart, an identity of integers once z3 proves the columns
in `[0, N)`: `cols <= N` and an unmasked column are refused), nor in 300 random pairs of
addresses dividing, shifting and taking remainders of `s` by `d` or numbers, and 200 more of
the loop variable `t` stored at in both partitions' loops (quotients of two instances).

False refusals held: a pointer through `tl.reshape(offs, (1, 128))` or `tl.trans(offs[:, None])`
beside the mask `offs[None, :] >= 64` reads no lanes shared (a rank the rule does not follow),
so it is refused beside a twin masked `< 64`, which it never meets.
"""

from __future__ import annotations

from .adversarial_support import dump, expect

#: two partitions after a ring, each storing once to `y_ptr` at STORE_A / STORE_B (lines 18 and
#: 27); `s` and `d` are run-time int32 arguments
TWO_STORES = '''import triton.language as tl
import tle_compiler as tle


@tle.jit
def k(x_ptr, y_ptr, N, s, d):
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 128], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, y_ptr, N, s, d)),
                             (consume, (kv, y_ptr, N, s, d))], [4], [232])


def produce(kv, x_ptr, y_ptr, N, s, d):
    w = kv.writer()
    for t in range(N):
        sl = w.acquire(t)
        tl.store(tle.gpu.local_ptr(sl.tile), tl.load(x_ptr + t * 128 + tl.arange(0, 128)))
        w.commit(t)
    STORE_A


def consume(kv, y_ptr, N, s, d):
    r = kv.reader()
    for t in range(N):
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t)
    STORE_B


DEFAULT_CONFIG = {
    "signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32", "s": "i32", "d": "i32"},
    "constexprs": {},
    "num_warps": 4,
    "grid": (1,),
}
'''


def two_stores(a: str, b: str) -> str:
    return TWO_STORES.replace("STORE_A", a).replace("STORE_B", b)


def test_a_shift_and_a_division_of_one_value_are_two_quotients(tmp_path, capsys):
    """`s >> 1` floors, `s // 2` truncates: at s = -1 (or -2) `(s >> 1) + 1` and `s // 2` are
    both 0. Before: verified (the two read as one quotient)."""
    code, err = dump(tmp_path, capsys, two_stores("tl.store(y_ptr + (s >> 1) + 1, 1.0)",
                                                  "tl.store(y_ptr + s // 2, 2.0)"))
    expect(code, err, ("rejected", "kernel.py:27: error: partitions 'produce' (store at line 18)",
                       "`y_ptr` + 0", "[memory-race]"))


def test_one_shift_in_two_partitions_is_one_quotient(tmp_path, capsys):
    """The correct twin: both partitions shift `s`, one storing the even element of a pair,
    the other the odd one (and a shift beside itself plus one): verified."""
    code, err = dump(tmp_path, capsys, two_stores("tl.store(y_ptr + 2 * (s >> 1), 1.0)",
                                                  "tl.store(y_ptr + 2 * (s >> 1) + 1, 2.0)"))
    expect(code, err, "verified")
    code, err = dump(tmp_path, capsys, two_stores("tl.store(y_ptr + s // 2, 1.0)",
                                                  "tl.store(y_ptr + s // 2 + 1, 2.0)"))
    expect(code, err, "verified")


def test_a_remainder_by_a_divisor_that_may_be_0_is_any_value(tmp_path, capsys):
    """`s % d` at d = 0 is undefined; the model read it as `s` (`s - 0 * q`), so `y + s % d`
    and `y + s + 1 + d` never met. Before: verified."""
    src = two_stores("tl.store(y_ptr + (s % d), 1.0)", "tl.store(y_ptr + s + 1 + d, 2.0)")
    src = src.replace("    kv = tle.pipe", "    tle.assume(d >= 0)\n    tle.assume(s >= 0)\n"
                      "    kv = tle.pipe")
    code, err = dump(tmp_path, capsys, src)
    expect(code, err, ("rejected", "kernel.py:29: error: partitions 'produce' (store at line 20)",
                       "[memory-race]"))


def test_a_quotient_by_a_divisor_proved_positive_is_shared(tmp_path, capsys):
    """The correct twin: `d` assumed >= 1, `s // d` of the two partitions is one value, and
    `y + s // d` beside `y + s // d + 1` apart: verified. Assumed >= 0 only, the two
    quotients are any values at d = 0: refused."""
    src = two_stores("tl.store(y_ptr + s // d, 1.0)", "tl.store(y_ptr + s // d + 1, 2.0)")
    code, err = dump(tmp_path, capsys, src.replace(
        "    kv = tle.pipe", "    tle.assume(d >= 1)\n    kv = tle.pipe"))
    expect(code, err, "verified")
    code, err = dump(tmp_path, capsys, src.replace(
        "    kv = tle.pipe", "    tle.assume(d >= 0)\n    kv = tle.pipe"))
    expect(code, err, ("rejected", "kernel.py:28: error: partitions 'produce'", "[memory-race]"))


#: a ring whose writer commits one tile past its loop, the reader waiting it
LATE = '''import triton.language as tl
import tle_compiler as tle


@tle.jit
def k(x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, y_ptr, N))],
                            [4], [232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    for p in range(N):
        s = w.acquire(p)
        tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + p * 64 + tl.arange(0, 64)))
        w.commit(p)
    if N > 3:
        return
    s = w.acquire(N)
    tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + tl.arange(0, 64)))
    w.commit(N)


def consume(kv, y_ptr, N):
    r = kv.reader()
    for p in range(N):
        res = r.wait(p)
        tl.store(y_ptr + p * 64 + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))
        r.release(p)
    READER_GUARD
    res = r.wait(N)
    tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))
    r.release(N)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"},
                  "constexprs": {}}
'''


def test_a_guard_clause_after_the_events_skips_the_last_commit(tmp_path, capsys):
    """The writer's `if N > 3: return` after its loop skips commit(N), which the reader waits:
    rejected at N = 4. The reader guarded alike (`if N > 3: return` before its last wait):
    verified."""
    code, err = dump(tmp_path, capsys, LATE.replace("    READER_GUARD\n", ""))
    expect(code, err, ("rejected", "kernel.py:32: error: the reader waits index 4 of pipe 'kv'",
                       "when N=4", "[wait-never-committed]"))
    code, err = dump(tmp_path, capsys, LATE.replace("READER_GUARD", "if N > 3:\n        return"))
    expect(code, err, "verified")


def test_guard_clauses_of_two_partitions_that_both_pass_at_one_value_race(tmp_path, capsys):
    """`if s > 0: return` beside `if s < 0: return`: at s = 0 both store y[0] (memory-race);
    beside `if s <= 0: return` the two never both store: verified."""
    a = "if s > 0:\n        return\n    tl.store(y_ptr, 1.0)"
    code, err = dump(tmp_path, capsys, two_stores(a, "if s < 0:\n        return\n"
                                                     "    tl.store(y_ptr, 2.0)"))
    expect(code, err, ("rejected", "kernel.py:31: error: partitions 'produce' (store at line 20)",
                       "`y_ptr` + 0", "[memory-race]"))
    code, err = dump(tmp_path, capsys, two_stores(a, "if s <= 0:\n        return\n"
                                                     "    tl.store(y_ptr, 2.0)"))
    expect(code, err, "verified")


def test_a_shape_unpacked_by_position_gives_the_first_dimension(tmp_path, capsys):
    """`a, b = z.shape` of a [64, 128] tile: `y + a` is `y + 64`, which the other partition
    stores (memory-race at `y_ptr` + 64)."""
    code, err = dump(tmp_path, capsys, two_stores(
        "z = tl.zeros([64, 128], tl.float32)\n    a, b = z.shape\n    tl.store(y_ptr + a, 1.0)",
        "tl.store(y_ptr + 64, 2.0)"))
    expect(code, err, ("rejected", "[memory-race]", "`y_ptr` + 64"))


def test_a_2d_mask_one_column_past_the_pitch_is_refused(tmp_path, capsys):
    """Two partitions store the tiles of columns [0, 64) and [64, 128) of rows `rows` of a
    row pitch N: masked `cols <= N`, column N of row r is column 0 of row r + 1, which the
    other stores (memory-race); unmasked columns likewise."""
    def tile(c0: str, mask: str) -> str:
        return (f"rows = tl.program_id(0) * 64 + tl.arange(0, 64)\n"
                f"    cols = {c0} + tl.arange(0, 64)\n"
                f"    tl.store(y_ptr + rows[:, None] * d + cols[None, :], "
                f"tl.zeros([64, 64], tl.float32), mask={mask})")
    ok = "(rows[:, None] < N) & (cols[None, :] < d)"
    for bad in ("(rows[:, None] < N) & (cols[None, :] <= d)", "rows[:, None] < N"):
        code, err = dump(tmp_path, capsys, two_stores(tile("0", ok), tile("64", bad)))
        expect(code, err, ("rejected", "[memory-race]"))
