"""A thirty-fourth adversarial round (adversarial round 34): the memory-race check
(frontend/global_races.py), global memory two partitions access through one pointer argument,
one writing, proved apart or ordered by a pipe hand-off. Each case is a ring of
tests/test_global_races.py (or a producer with two readers) with statements added; the exit
code and the verdict's words are pinned.

Bugs found, one line each:
1. A counter set before an outer loop and incremented in an inner one (`row = 0; for t: for j:
   row += 1`) was read `0 + j + 1`, as if set again at each outer iteration: rows past the first
   outer iteration were taken never written, and a race on them verified (so was a reader's
   load of the next tile's first row, which the writer stores unordered). FIXED: where for
   loops alone stand between its first value and its loop, the counter counts the iterations
   of its loop over all of them, `(n1 * T2 + n2)`, the loops inside the outermost of them of
   constant trip counts; any other loop or branch between makes it an unknown
   (frontend/race_terms.py _induction, _trip_count).
2. A name's value was read at its use, not at its assignment: `a = row * 64; row += 1;
   tl.store(y + a)` read the counter past its increment, `a = t * 64` under an inner `for t`
   read the inner loop's t, and a tuple item `p[0]` the same; races on the rows the model moved
   verified. FIXED: a name's value, and a tuple's items, are read at its assignment, with the
   iterations of the loops that hold it (_single_value gives the site, _at).
3. A loop variable its loop body binds again (`for t in range(N): t = t + 1`) was read as the
   loop's value: a race on row N verified. FIXED: such a variable is an unknown (_loop_of,
   REBOUND), in addresses and in the arguments a pointer may be based on.
4. A stride that bounds the columns beside it (`if j < 2 * S: tl.store(y + (t - 2) * S + j)`)
   was still taken to separate rows, though the columns reach the next row: a race with the
   reader's row t - 1 verified. FIXED: a stride that a condition, a loop range or any other
   value of the pair reads is a number for that pair; one whose expanded address holds none of
   it (`first * S`, first = 0) is held by that address no more (the rule the docs state).
5. A cast of an offset to fewer bits (`(64 * t + 256).to(tl.uint8)`, `.to(tl.int16)`) was
   read as the same value; the cast wraps it, here onto row 0: a race verified. FIXED: a cast to
   int1 / int8 / uint8 / int16 / uint16 / uint32 keeps the value modulo 2 ** bits in the type's
   range (NARROW_CASTS).
6. An `if (t - 2).to(tl.uint32) < 3` (or uint64) was read as a signed comparison, so its else
   branch was taken never to run at t = 0, 1, where the unsigned comparison runs it: a race
   verified. FIXED: uint32 as in 5; a comparison of a uint64 cast, or of an operator the model
   does not read, is not read (and no else branch is taken to negate it).
7. An access whose pointer expression held a `tle.gpu.local_ptr` anywhere, or read a name
   whose values did, was left out as shared memory: `tl.store(y_ptr + idx, v)` with `idx`
   loaded from a slot (a scatter through indices a pipe hands over), or a name bound to a shared
   and then a global pointer, was never paired, and races through them verified. FIXED: an
   access is paired by the arguments its pointer may be based on alone (a local_ptr is based
   on none).
8. A kernel argument the kernel body binds again (`base = S + 64; S = 0`) was read with its new
   value in values computed before the assignment: a race verified. FIXED: such an argument has
   no one value in the body.
9. A loop's range, and an `if`'s condition, were read in the block around the statement,
   where names the block assigns before it are not known: `n = N // 2; for t in range(n)` ran
   any number of times, and a correct kernel (rows t < n against row N) was rejected. FIXED:
   they are read at the statement (_statement).
10. A stride hidden in an unknown (`off = 0; if t % 2 == 1: off = S` or `off = S * 1`, then
   `y + (t - 2) * S + off`) still separated rows: `off` is a multiple of S the rows did not
   show, the write reached row t - 1, and a race with the reader's row t - 1 verified. FIXED:
   a stride that an unknown of the pair may stand for (the arguments the expression it stands
   for reads, through names and loop ranges: Model.hidden) is a number for that pair; a name
   assigned a stride's name among other values is an alias whose uses count
   (stride_arguments). So was a loaded column offset (`off = tl.load(...)`, `y + (t - 2) * S +
   off`), which may be S whatever it reads: strides separate rows only where the columns beside
   them hold no unknown that may be any number (_unbounded_columns); a loaded row index
   (`row * S`) still does.
11. A constexpr argument used only as a factor (`t * D + tl.arange(0, 64)`, DEFAULT_CONFIG's
   D = 32) was a stride, so its rows were taken apart though D = 32 makes them overlap: a race
   verified. FIXED: a constexpr is never a stride (its value is the launch's); a correct kernel
   of such a D of 128 is now refused too (the check is not given constexpr values or their
   tle.assume ranges: left open).
12. A name assigned twice was an unknown of any value wherever it was read, so a reader that
   computes its tile's rows again after its release (`rows = t * 16 + tl.arange(0, 16)` in the
   window and again before the store of columns 64 .. 127), a correct kernel, was rejected, as
   was a name built in two steps (`a = t * 64; a = a + 8192`).
   FIXED: at a use, such a name holds the last assignment before it in a block that holds both,
   where no other assignment of it stands between (in a loop around the use, one later in its
   body stands between: `a = 0; for t: store(y + a); a = 64` stays an unknown).
13. A partition's pointer parameter assigned again from itself (`y_ptr = y_ptr + 64`, or
   `y_ptr += 64` in a loop, Triton's idiom for advancing pointers) was based on no argument:
   the name's own value was cut as a cycle and its binding never counted, so its accesses were
   never paired and races through it verified. FIXED: a name's first value (a partition
   parameter's binding, a kernel argument) counts among what it may be based on
   (_first_candidates); it is the name's value before the body assigns it, and the first value
   of a counter the loop advances (`y_ptr += 64`: `y_ptr + 64 n`), so the correct kernel that
   advances its pointer row by row is verified.

Checked and found right (pinned below where marked): a negative step (`range(4, 0, -1)`, race
and not, pinned); a counter the reader carries over a hand-off through global memory (pinned);
rows of a program id, two halves (pinned); `tl.static_range` rows; an `if` with a signed
comparison and its else branch (pinned); helpers inlined twice (race and not, pinned); a
counter in a `while` (an unknown: rejected); a global-memory ring of 2 and 3 rows beside the
pipe, `t % 2` (pinned); a producer with two readers storing two halves of each row, a scratch
row read in one reader's window (pinned, verified), read by the other before its wait and
halves that overlap (pinned, rejected); a store before a close and a load after the wait
of the closed index (pinned, verified; after the close: rejected); a named-barrier pipe handed
back through another pipe's release, a global load before that release (pinned, verified) and
after it (pinned, rejected); a store before the writer's loop against a load after the
reader's (rejected, where N may be 0; verified under tle.assume(N >= 1): pinned); `tl.where` of a stride (not a stride: rejected); a
tuple indexed by a static_range variable and pointer casts (refused by the frontend and the
lowering); a loop over `range(t * S, (t + 2) * S, 64)` (refused: its bound is a product).
"""

from __future__ import annotations

import re

import pytest

from .adversarial_support import dump, expect
from .test_global_races import RING

RACE = ("rejected", "[memory-race]", "can reach the same global address")
ZEROS = "tl.zeros([64], tl.float32)"


def ring(wpre="pass", before="pass", after="pass", rpre="pass", window="pass",
         late="pass") -> str:
    """tests/test_global_races.py's ring, with WPRE / RPRE run by the writer / the reader
    before their loops (after `w = kv.writer()` / `r = kv.reader()`)."""
    text = RING.replace("    w = kv.writer()\n", "    w = kv.writer()\n    WPRE\n").replace(
        "    r = kv.reader()\n", "    r = kv.reader()\n    RPRE\n")
    return (text.replace("WPRE", wpre).replace("RPRE", rpre).replace("BEFORE", before)
            .replace("AFTER", after).replace("WINDOW", window).replace("LATE", late))


def bounded(text: str) -> str:
    """``text`` with N bounded (``tle.assume(N <= 2 ** 20)``), so that its offsets ``t * 64``
    stay in int32 (tests/test_race_wraps.py: unbounded, t * 64 of t = 2 ** 26 wraps around onto
    row 0)."""
    for sig in ("def k(x_ptr, y_ptr, N, S):\n", "def k(x_ptr, y_ptr, N):\n"):
        text = text.replace(sig, sig + "    tle.assume(N <= 1048576)\n")
    return text


def body(*lines: str, indent: int = 8) -> str:
    """Statements of a loop body (the first at the placeholder's indentation)."""
    return ("\n" + " " * indent).join(lines)


SPMC = """import triton.language as tl
import tle_compiler as tle


@tle.jit
def k(x_ptr, y_ptr, N):
    kv = tle.pipe(capacity=2, readers=("left", "right"), a=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, y_ptr, N)), (left, (kv, y_ptr, N)),
                             (right, (kv, y_ptr, N))], [4, 4], [232, 232])


def produce(kv, x_ptr, y_ptr, N):
    w = kv.writer()
    offs = tl.arange(0, 64)
    for p in range(N):
        slot = w.acquire(p)
        PBEFORE
        tl.store(tle.gpu.local_ptr(slot.a), tl.load(x_ptr + p * 64 + offs))
        w.commit(p)


def left(kv, y_ptr, N):
    r = kv.reader("left")
    for p in range(N):
        res = r.wait(p)
        t = tl.load(tle.gpu.local_ptr(res.slot.a))
        LWIN
        r.release(p)
        tl.store(y_ptr + p * 128 + tl.arange(0, 64), t)


def right(kv, y_ptr, N):
    r = kv.reader("right")
    for p in range(N):
        RPRE
        res = r.wait(p)
        t = tl.load(tle.gpu.local_ptr(res.slot.a))
        r.release(p)
        tl.store(y_ptr + p * 128 + 64 + tl.arange(0, 64), t)
"""


def spmc(pbefore="pass", lwin="pass", rpre="pass") -> str:
    """A producer and two readers, `left` storing the first half of row p of y (128 wide) and
    `right` the second, after their releases."""
    return SPMC.replace("PBEFORE", pbefore).replace("LWIN", lwin).replace("RPRE", rpre)


# Each race below was verified before its fix; the reader's LATE store runs after its release,
# unordered with the writer's stores after its commit.
RACES = {
    # bug 1: row counts 1 .. 4N over both loops; the model had it 1 .. 4, so row 6 was apart
    "a counter set before the outer loop": ring(
        wpre="row = 0",
        after=body("for j in range(4):", "    row += 1",
                   f"    tl.store(y_ptr + row * 64 + offs, {ZEROS})"),
        late="tl.store(y_ptr + 64 * 6 + offs, v)"),
    # bug 2: a = t * 64 (the counter before its increment), read as (t + 1) * 64
    "a name of the counter before its increment": ring(
        wpre="row = 0",
        after=body("a = row * 64", "row += 1", f"tl.store(y_ptr + a + offs, {ZEROS})"),
        late="tl.store(y_ptr + offs, v)"),
    "a tuple item of the counter before its increment": ring(
        wpre="row = 0",
        after=body("p = (row * 64, 1)", "row += 1", f"tl.store(y_ptr + p[0] + offs, {ZEROS})"),
        late="tl.store(y_ptr + offs, v)"),
    # bug 2: a = t * 64 of the outer t, read with the inner loop's t in {0, 1}
    "a name read under a loop that shadows its variable": ring(
        after=body("a = t * 64", "for t in range(2):",
                   f"    tl.store(y_ptr + a + 4096 + offs, {ZEROS})"),
        late="tl.store(y_ptr + 4096 + 64 * 5 + offs, v)"),
    # bug 3: rows 1 .. N, read as 0 .. N - 1
    "a loop variable bound again in its body": ring(
        after=body("t = t + 1", f"tl.store(y_ptr + t * 64 + offs, {ZEROS})"),
        late="tl.store(y_ptr + N * 64 + offs, v)"),
    # bug 4: columns [0, 2S) of row t - 2 are row t - 1's too, which the reader loads at t - 1
    # before its release; the writer's acquire(t) waits only for release(t - 2)
    "a stride that bounds the columns": ring(
        before=body("for j in range(0, 1024, 64):", "    if j < 2 * S:",
                    "        if t >= 2:",
                    f"            tl.store(y_ptr + (t - 2) * S + j + offs, {ZEROS})"),
        window="u = tl.load(y_ptr + t * S + offs)"),
    # bug 4: `first * S` holds no stride: row 0's columns 64 .. 127 are row 1's for S = 64
    "a stride held zero times": ring(
        after=body("rows = tl.arange(0, 16)",
                   "tl.store(y_ptr + rows[:, None] * S + offs[None, :], "
                   "tl.zeros([16, 64], tl.float32))"),
        late=body("first = 0", "tl.store(y_ptr + first * S + 64 + offs, v)")),
    # bug 5: 256 as uint8 is 0, 65536 as int16 too
    "an offset cast to uint8": ring(
        after=f"tl.store(y_ptr + (64 * t + 256).to(tl.uint8) + offs, {ZEROS})",
        late="tl.store(y_ptr + offs, v)"),
    "an offset cast to int16": ring(
        after=body("o = (t * 16384 + 65536).to(tl.int16)",
                   f"tl.store(y_ptr + o + offs, {ZEROS})"),
        late="tl.store(y_ptr + offs, v)"),
    # bug 6: at t = 0, t - 2 as unsigned is huge: the else branch stores row 0
    "the else branch of an unsigned comparison": ring(
        after=body("if (t - 2).to(tl.uint32) < 3:", "    pass", "else:",
                   f"    tl.store(y_ptr + t * 64 + offs, {ZEROS})"),
        late="tl.store(y_ptr + offs, v)"),
    "the else branch of a uint64 comparison": ring(
        after=body("if (t - 2).to(tl.uint64) < 3:", "    pass", "else:",
                   f"    tl.store(y_ptr + t * 64 + offs, {ZEROS})"),
        late="tl.store(y_ptr + offs, v)"),
    # bug 7: a scatter through indices the pipe hands over, against the writer's row 0
    "an index loaded from the slot": ring(
        window=body("idx = tl.load(tle.gpu.local_ptr(res.slot.tile)).to(tl.int32)",
                    "tl.store(y_ptr + idx, v)"),
        after=f"tl.store(y_ptr + offs, {ZEROS})"),
    "an index loaded from the slot in place": ring(
        window="tl.store(y_ptr + tl.load(tle.gpu.local_ptr(res.slot.tile)).to(tl.int32), v)",
        after=f"tl.store(y_ptr + offs, {ZEROS})"),
    "a name bound to a shared, then a global pointer": ring(
        window=body("q = tle.gpu.local_ptr(res.slot.tile)", "u = tl.load(q)",
                    "q = y_ptr + t * 64 + offs", "tl.store(q, u)"),
        after=f"tl.store(y_ptr + offs, {ZEROS})"),
}

# bug 10: at odd t the writer's row t - 2 plus S is row t - 1, which the reader loads at t - 1
# before its release (the writer's acquire(t) waits for release(t - 2) only)
for _value, _what in (("S", "an alias"), ("S * 1", "a product")):
    RACES[f"a stride hidden in a name assigned {_what} of it"] = ring(
        before=body("if t >= 2:", "    off = 0", "    if t % 2 == 1:", f"        off = {_value}",
                    f"    tl.store(y_ptr + (t - 2) * S + off + offs, {ZEROS})"),
        window="u = tl.load(y_ptr + t * S + offs)")

RACES["a loaded column offset beside a stride"] = ring(
    before=body("if t >= 2:", "    off = tl.load(x_ptr + 1048576).to(tl.int32)",
                f"    tl.store(y_ptr + (t - 2) * S + off + offs, {ZEROS})"),
    window="u = tl.load(y_ptr + t * S + offs)")

# bug 11: rows of D = 32 with 64 columns: the writer's row t - 2 is the reader's row t - 1 too
CONSTEXPR_ROWS = ring(
    before=body("if t >= 2:", f"    tl.store(y_ptr + (t - 2) * D + offs, {ZEROS})"),
    window="u = tl.load(y_ptr + t * D + offs)").replace(
    "def k(x_ptr, y_ptr, N, S):", "def k(x_ptr, y_ptr, N, S, D: tl.constexpr):").replace(
    "(kv, x_ptr, y_ptr, N, S))", "(kv, x_ptr, y_ptr, N, S, D))").replace(
    "(kv, x_ptr, y_ptr, N, S):", "(kv, x_ptr, y_ptr, N, S, D):") + (
    '\n\nDEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32", '
    '"S": "i32"}, "constexprs": {"D": 32}}\n')
RACES["rows of a constexpr pitch"] = CONSTEXPR_ROWS

# bug 13: the writer's y_ptr is y_ptr + 64 (the reader's row 1) / advances a row at each
# iteration (the reader's row 64 at t = 64)
RACES["a pointer parameter assigned from itself"] = ring(
    wpre="y_ptr = y_ptr + 64", after=f"tl.store(y_ptr + offs, {ZEROS})",
    late="tl.store(y_ptr + 64 + offs, v)")
RACES["a pointer parameter advanced in the loop"] = ring(
    after=body(f"tl.store(y_ptr + offs, {ZEROS})", "y_ptr += 64"),
    late="tl.store(y_ptr + 4096 + offs, v)")
# row t + 1, which the writer stores at t + 1, unordered with the window of t
RACES["an advancing pointer's next row"] = ring(
    before=body(f"tl.store(y_ptr + offs, {ZEROS})", "y_ptr += 64"),
    window="u = tl.load(y_ptr + (t + 1) * 64 + offs)")

# bug 8: base is the argument S plus 64 (0 for S = -64), read as 0 + 64
RACES["an argument the kernel body binds again"] = ring(
    after=f"tl.store(y_ptr + base + offs, {ZEROS})", late="tl.store(y_ptr + offs, v)").replace(
    "    kv = tle.pipe(", "    base = S * 1 + 64\n    S = 0\n    kv = tle.pipe(").replace(
    "(produce, (kv, x_ptr, y_ptr, N, S))", "(produce, (kv, x_ptr, y_ptr, N, S, base))").replace(
    "def produce(kv, x_ptr, y_ptr, N, S):", "def produce(kv, x_ptr, y_ptr, N, S, base):")


@pytest.mark.parametrize("name", list(RACES))
def test_a_race_the_model_moved_is_rejected(tmp_path, capsys, name):
    code, err = dump(tmp_path, capsys, RACES[name])
    expect(code, err, RACE)


def test_the_counter_witness_is_past_the_first_outer_iteration(tmp_path, capsys):
    """Bug 1's witness: row 6 is written at t = 1 (rows 5 .. 8), at j = 1."""
    code, err = dump(tmp_path, capsys, RACES["a counter set before the outer loop"])
    expect(code, err, RACE + ("(store at line 23 at t = 1, j = 1)",))
    got = re.search(r"the same global address `y_ptr` \+ (-?\d+)", err)
    assert got and 6 * 64 <= int(got.group(1)) < 7 * 64, err


#: a producer and a reader over tiles of 4 steps, each step's row of y (`it`, a counter over
#: both loops) stored by the writer before its commit and loaded by the reader in its window
TILES = """import triton.language as tl
import tle_compiler as tle


@tle.jit
def k(x_ptr, y_ptr, T):
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, y_ptr, T)),
                             (consume, (kv, x_ptr, y_ptr, T))], [4], [232])


def produce(kv, x_ptr, y_ptr, T):
    w = kv.writer()
    offs = tl.arange(0, 64)
    it = 0
    for tile in range(T):
        for kk in range(4):
            s = w.acquire(tile * 4 + kk)
            tl.store(y_ptr + it * 64 + offs, tl.load(x_ptr + it * 64 + offs))
            tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + it * 64 + offs))
            w.commit(tile * 4 + kk)
            it += 1


def consume(kv, x_ptr, y_ptr, T):
    r = kv.reader()
    offs = tl.arange(0, 64)
    it = 0
    for tile in range(T):
        for kk in range(4):
            res = r.wait(tile * 4 + kk)
            v = tl.load(tle.gpu.local_ptr(res.slot.tile))
            READ
            r.release(tile * 4 + kk)
            it += 1
"""


def test_a_counter_over_two_loops_reads_its_own_row(tmp_path, capsys):
    code, err = dump(tmp_path, capsys, TILES.replace(
        "READ", "u = tl.load(y_ptr + it * 64 + offs)"))
    expect(code, err, "verified")


def test_a_counter_over_two_loops_reading_the_next_tiles_row_is_rejected(tmp_path, capsys):
    """Bug 1: at kk = 3 the reader loads row it + 1, the next tile's first, which the writer
    stores after acquire(it + 1), waiting for release(it - 1) only. Before: read as `kk + 1`,
    never 4: verified."""
    code, err = dump(tmp_path, capsys, TILES.replace(
        "READ", "if kk == 3:\n                u = tl.load(y_ptr + (it + 1) * 64 + offs)"))
    expect(code, err, RACE + ("(store at line 19 at tile = 1, kk = 0)",
                              "(load at line 34 at tile = 0, kk = 3)"))


# bug 9: rows t < N // 2 of the writer against the reader's row N
LOCAL_BOUND = ring(before=f"tl.store(y_ptr + t * 64 + offs, {ZEROS})").replace(
    "    offs = tl.arange(0, 64)\n    for t in range(N):",
    "    offs = tl.arange(0, 64)\n    n = N // 2\n    for t in range(n):").replace(
    "def consume(kv, x_ptr, y_ptr, N, S):\n",
    "def consume(kv, x_ptr, y_ptr, N, S):\n"
    "    tl.store(y_ptr + N * 64 + tl.arange(0, 64), tl.zeros([64], tl.float32))\n")

#: a ring the writer closes at N (BEFORE / AFTER: around the close); the reader waits N, the
#: close, after its loop and then loads y
CLOSED = """import triton.language as tl
import tle_compiler as tle


@tle.jit
def k(x_ptr, y_ptr, N):
    tle.assume(N >= 1)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, y_ptr, N)),
                             (consume, (kv, x_ptr, y_ptr, N))], [4], [232])


def produce(kv, x_ptr, y_ptr, N):
    w = kv.writer()
    offs = tl.arange(0, 64)
    for t in range(N):
        s = w.acquire(t)
        tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + t * 64 + offs))
        w.commit(t)
    BEFORE
    w.close(N)
    AFTER


def consume(kv, x_ptr, y_ptr, N):
    r = kv.reader()
    offs = tl.arange(0, 64)
    for t in range(N):
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t)
    fin = r.wait(N)
    r.release(N)
    u = tl.load(y_ptr + offs)
"""
_STORE_Y = "tl.store(y_ptr + offs, tl.zeros([64], tl.float32))"

#: a named-barrier pipe `a` handed back through the release of `y` (round 33's NAMED, capacity
#: 1 both); the writer stores row p - 1 of y after y's acquire(p), the reader loads row p
#: before (EARLY) or after (LATE) y's release(p)
NAMED = """import triton.language as tl
import tle_compiler as tle


@tle.jit
def k(x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    a = tle.pipe(capacity=1, barrier="named", t=tle.gpu.alloc([1, 64], tl.float32))
    y = tle.pipe(capacity=1, t=tle.gpu.alloc([1, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (a, y, x_ptr, y_ptr, N)), (consume, (a, y, y_ptr, N))],
                            [4], [232])


def produce(a, y, x_ptr, y_ptr, N):
    w = a.writer()
    wy = y.writer()
    for p in range(N):
        s = wy.acquire(p)
        if p >= 1:
            tl.store(y_ptr + (p - 1) * 64 + tl.arange(0, 64), tl.zeros([64], tl.float32))
        tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + tl.arange(0, 64)))
        wy.commit(p)
        s = w.acquire(p)
        tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + tl.arange(0, 64)))
        w.commit(p)


def consume(a, y, y_ptr, N):
    r = a.reader()
    ry = y.reader()
    for p in range(N):
        res = r.wait(p)
        v = tl.load(tle.gpu.local_ptr(res.slot.t))
        r.release(p)
        res = ry.wait(p)
        u = tl.load(tle.gpu.local_ptr(res.slot.t))
        EARLY
        ry.release(p)
        LATE
"""
_LOAD_ROW = "g = tl.load(y_ptr + p * 64 + tl.arange(0, 64))"

#: the writer stores y before its loop, the reader loads it after its loop: ordered by
#: commit(0) -> wait(0) where N >= 1, a race where the loops may not run
BEFORE_THE_LOOPS = RING.replace(
    "    offs = tl.arange(0, 64)\n    for t in range(N):\n        s = w.acquire(t)",
    "    offs = tl.arange(0, 64)\n    tl.store(y_ptr + offs, tl.zeros([64], tl.float32))\n"
    "    for t in range(N):\n        s = w.acquire(t)").replace(
    "        r.release(t)\n        LATE\n",
    "        r.release(t)\n    u = tl.load(y_ptr + tl.arange(0, 64))\n").replace(
    "BEFORE", "pass").replace("AFTER", "pass").replace("WINDOW", "pass")
assert BEFORE_THE_LOOPS.count("tl.load(y_ptr") == 1

_ROWS = "rows = t * 16 + tl.arange(0, 16)"
_TILE = "rows[:, None].to(tl.int64) * S + tl.arange(0, 64)[None, :]"

SAFE = {
    # bug 12: rows 16 t .. 16 t + 15, columns 0 .. 63 handed over, 64 .. 127 stored by the reader
    "a name assigned again with the same rows": ring(
        before=body(_ROWS, f"tl.store(y_ptr + {_TILE}, tl.zeros([16, 64], tl.float32))"),
        window=body(_ROWS, f"u = tl.load(y_ptr + {_TILE})"),
        late=body(_ROWS, f"tl.store(y_ptr + 64 + {_TILE}, u)")),
    # bug 13: row t stored before commit(t) through the advancing pointer, loaded in the window
    "a pointer parameter advanced row by row": ring(
        before=body(f"tl.store(y_ptr + offs, {ZEROS})", "y_ptr += 64"),
        window="u = tl.load(y_ptr + t * 64 + offs)"),
    "a name built in two steps": ring(
        after=body("a = t * 64", "a = a + 8192", f"tl.store(y_ptr + a + offs, {ZEROS})",
                   "a = 5"),
        late="tl.store(y_ptr + offs, v)"),
    "a store before the close, a load after the wait of it": CLOSED.replace(
        "BEFORE", _STORE_Y).replace("AFTER", "pass"),
    "a load before the release that hands a named pipe back": NAMED.replace(
        "EARLY", _LOAD_ROW).replace("LATE", "pass"),
    "a hand-off before the loops that run": BEFORE_THE_LOOPS.replace(
        "    kv = tle.pipe(", "    tle.assume(N >= 1)\n    kv = tle.pipe("),
    "a loop over a count its partition computes": LOCAL_BOUND,
    "a negative step": ring(
        after=body("for j in range(4, 0, -1):",
                   f"    tl.store(y_ptr + 4096 + j * 64 + offs, {ZEROS})"),
        late="tl.store(y_ptr + 4096 + offs, v)"),
    "a counter the reader carries": ring(
        rpre="k = 0", before=f"tl.store(y_ptr + t * 64 + offs, {ZEROS})",
        window=body("u = tl.load(y_ptr + k * 64 + offs)", "k += 1")),
    "two halves of a program's row": ring(
        after=f"tl.store(y_ptr + tl.program_id(0) * 128 + offs, {ZEROS})",
        late="tl.store(y_ptr + tl.program_id(0) * 128 + 64 + offs, v)"),
    "the else branch of a signed comparison": ring(
        after=body("if t < 3:", "    pass", "else:",
                   f"    tl.store(y_ptr + t * 64 + offs, {ZEROS})"),
        late="tl.store(y_ptr + offs, v)"),
    "an offset cast to int8 in range": ring(
        after=f"tl.store(y_ptr + 64 + (t % 64).to(tl.int8) + offs, {ZEROS})",
        late="tl.store(y_ptr - 64 + offs, v)"),
    "a helper inlined twice": ring(
        after=body(f"tl.store(helper(y_ptr, t) + offs, {ZEROS})",
                   f"tl.store(helper(y_ptr, t + 4) + offs, {ZEROS})"),
        late="tl.store(y_ptr - 64 + offs, v)") + "\n\ndef helper(p, r):\n"
                                                   "    q = p + r * 64\n    return q\n",
    "a ring of two rows in global memory": ring(
        before="tl.store(y_ptr + (t % 2) * 64 + offs, tl.load(x_ptr + t * 64 + offs))",
        window="u = tl.load(y_ptr + (t % 2) * 64 + offs)"),
    "two readers storing two halves": spmc(),
    # the same rows as bug 10's, without the offset: one row each, ordered
    "rows two behind through a stride": ring(
        before=body("if t >= 2:", f"    tl.store(y_ptr + (t - 2) * S + offs, {ZEROS})"),
        window="u = tl.load(y_ptr + t * S + offs)"),
    # bug 10: a loaded row index, columns 0 .. 63 against the reader's 64 .. 127
    "a loaded row index through a stride": ring(
        before=body("if t >= 2:", "    row = tl.load(x_ptr + 1048576 + t).to(tl.int32)",
                    f"    tl.store(y_ptr + row * S + offs, {ZEROS})"),
        window="u = tl.load(y_ptr + t * S + 64 + offs)"),
    "a scratch row read in one reader's window": spmc(
        pbefore="tl.store(y_ptr - 64 - p * 64 + offs, tl.load(x_ptr + p * 64 + offs))",
        lwin="u = tl.load(y_ptr - 64 - p * 64 + tl.arange(0, 64))"),
}

# correct where N is bounded: an offset t * 64 (or - 64 - p * 64) of a t past 2 ** 26 wraps
# around in int32 onto the other partition's row
for _name in ("a name built in two steps", "a scratch row read in one reader's window",
              "the else branch of a signed comparison", "a helper inlined twice",
              "a loop over a count its partition computes"):
    SAFE[_name] = bounded(SAFE[_name])


@pytest.mark.parametrize("name", list(SAFE))
def test_a_correct_kernel_is_verified(tmp_path, capsys, name):
    code, err = dump(tmp_path, capsys, SAFE[name])
    expect(code, err, "verified")


CHECKED_RACES = {
    # 0 at the first iteration, 4096 after: the reader's row 4096
    "a name assigned again later in the loop": ring(
        wpre="a = 0", after=body(f"tl.store(y_ptr + a + offs, {ZEROS})", "a = 4096"),
        late="tl.store(y_ptr + 4096 + offs, v)"),
    "a name assigned again under an if": ring(
        after=body("a = 0", "if t > 3:", "    a = 4096", f"tl.store(y_ptr + a + offs, {ZEROS})"),
        late="tl.store(y_ptr + 4096 + offs, v)"),
    "a store after the close": CLOSED.replace("AFTER", _STORE_Y).replace("BEFORE", "pass"),
    "a load after the release that hands a named pipe back": NAMED.replace(
        "LATE", _LOAD_ROW).replace("EARLY", "pass"),
    "a hand-off before loops that may not run": BEFORE_THE_LOOPS,
    "a negative step onto the reader's row": ring(
        after=body("for j in range(4, 0, -1):",
                   f"    tl.store(y_ptr + 4096 + j * 64 + offs, {ZEROS})"),
        late="tl.store(y_ptr + 4096 + 4 * 64 + offs, v)"),
    "a helper's row the reader stores": ring(
        after=body(f"tl.store(helper(y_ptr, t) + offs, {ZEROS})",
                   f"tl.store(helper(y_ptr, t + 4) + offs, {ZEROS})"),
        late="tl.store(y_ptr + 8 * 64 + offs, v)") + "\n\ndef helper(p, r):\n"
                                                      "    q = p + r * 64\n    return q\n",
    "a scratch row the other reader loads before its wait": spmc(
        pbefore="tl.store(y_ptr - 64 - p * 64 + offs, tl.load(x_ptr + p * 64 + offs))",
        rpre="u = tl.load(y_ptr - 64 - p * 64 + tl.arange(0, 64))"),
    "two readers' halves that overlap": spmc().replace("p * 128 + 64 + tl", "p * 128 + 32 + tl"),
}


@pytest.mark.parametrize("name", list(CHECKED_RACES))
def test_a_race_found_before_is_still_rejected(tmp_path, capsys, name):
    code, err = dump(tmp_path, capsys, CHECKED_RACES[name])
    expect(code, err, RACE)
