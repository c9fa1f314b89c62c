"""A fortieth adversarial round (adversarial round 40): the protocol claims again (not the
integer-typing rules of rounds 36-39). Kernels built to make a `verified` false: trip counts that
differ between partitions only for some N (C's `//` and `>>` of a negative N, `&`, `%`,
`tl.cdiv` against a floor written out), slot handles kept past their release through aliases
(a tuple, a list, a helper's return, `tl.where` of two slot pointers, a conditional slot), one-shot
pipes at an index other than 0, closes in loops and the closed flag, a handle passed twice, SPSC
readers in two partitions, and `.pipe` files of edge-case syntax (empty partitions, a zero step,
huge capacities, indices and bounds, a self-referring definition, reversed bounds).

Bugs found: none. Every kernel below got a true verdict; the cases are pinned so that a change
that makes one of them false fails here. Checked and found right, one line each:
- `range(N // 2 + 1)` against `range((N + 2) // 2)` without `tle.assume(N >= 0)`: C's `//`
  gives 1 and 0 iterations at N = -1 (Python's floor would give 0 and 0): rejected with N=-1.
- `range((N >> 1) + 1)` against `range(N // 2 + 1)`: at N = -1 the shift floors (-1), C's `//`
  truncates (0): rejected with N=-1; `(N & 1)` against `N % 2` likewise.
- a one-shot pipe used at index 1 (or N): stage 0 at phase 1 in the rule's terms, which a fresh
  mbarrier passes at once; the lowering waits a one-shot's full barrier at parity 0 whatever the
  index, so the verified kernel is right, and the Gluon it prints is pinned.
- slot handles read after their release through a tuple, a list, a helper's return value or a
  `tl.where` of two slot pointers: access-outside-window; a conditional slot: unknown-slot.
- a reader's handle created twice from one pipe passed twice to a partition: one SPSC reader,
  verified (released through the other handle one index late: verified, right on capacity 2;
  two late: wait-on-held-stage); SPSC readers in two partitions: reader-in-two-partitions.
- `.pipe` files: a zero step, a zero capacity, a reversed param range, a self-referring `def`:
  refused (exit 2); a huge capacity (bad-capacity), a huge index (phase-aliasing), a huge loop
  bound (unknown, outside i32).
"""

from __future__ import annotations

import pytest

from .adversarial_support import dump, expect, get, kernel, loop, put

G = get("p")
P = put("p")


def no_assume(text: str) -> str:
    """``text`` without its `tle.assume(N >= 0)`: N ranges over every integer."""
    assert "    tle.assume(N >= 0)\n" in text
    return text.replace("    tle.assume(N >= 0)\n", "")


#: writer's loop head, reader's loop head, the fragments the rejection must name
TRIP_COUNTS = {
    "C // truncates at N = -1": ("for p in range(N // 2 + 1):", "for p in range((N + 2) // 2):",
                                 ("[unconsumed]", "N=-1")),
    "C // truncates, reader ahead": ("for p in range((N + 2) // 2):",
                                     "for p in range(N // 2 + 1):",
                                     ("[wait-never-committed]", "N=-1")),
    ">> floors, // truncates": ("for p in range((N >> 1) + 1):", "for p in range(N // 2 + 1):",
                                ("[wait-never-committed]", "N=-1")),
    "& 1 against C's % 2": ("for p in range((N & 1) + 1):", "for p in range(N % 2 + 1):",
                            ("[unconsumed]", "N=-1")),
    "cdiv against a negated floor": ("for p in range(tl.cdiv(N, 2) + 1):",
                                     "for p in range(-((-N) // 2) + 1):",
                                     ("[unconsumed]",)),
}


@pytest.mark.parametrize("case", TRIP_COUNTS)
def test_trip_counts_that_differ_only_for_negative_n(tmp_path, capsys, case):
    wh, rh, whats = TRIP_COUNTS[case]
    code, err = dump(tmp_path, capsys, no_assume(kernel(loop(wh, P), loop(rh, G))))
    expect(code, err, ("rejected", *whats))


def test_cdiv_and_its_own_expansion_are_one_value(tmp_path, capsys):
    """`tl.cdiv(N, 2)` is `(N + 1) // 2` (C's) in Triton: the two loops agree for every N."""
    text = no_assume(kernel(loop("for p in range(tl.cdiv(N, 2) + 1):", P),
                            loop("for p in range((N + 1) // 2 + 1):", G)))
    expect(*dump(tmp_path, capsys, text), "verified")


READ_AFTER_RELEASE = {
    "tuple": "res = r.wait(p)\na, b = res, p\nr.release(p)\n"
             "tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(a.slot.tile)))\n",
    "list": "res = r.wait(p)\nl = [res.slot]\nr.release(p)\n"
            "tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(l[0].tile)))\n",
    "pointer": "res = r.wait(p)\npp = tle.gpu.local_ptr(res.slot.tile)\nr.release(p)\n"
               "tl.store(y_ptr + tl.arange(0, 64), tl.load(pp))\n",
    "slot view": "res = r.wait(p)\nr.release(p)\n"
                 "tl.store(y_ptr + tl.arange(0, 64), "
                 "tl.load(tle.gpu.local_ptr(res.slot.tile[0])))\n",
}


@pytest.mark.parametrize("case", READ_AFTER_RELEASE)
def test_read_after_release_through_an_alias(tmp_path, capsys, case):
    text = kernel(loop("for p in range(N):", P), loop("for p in range(N):", READ_AFTER_RELEASE[case]))
    expect(*dump(tmp_path, capsys, text), ("rejected", "[access-outside-window]", "after release"))


HELPER = '''

def take(r, p):
    res = r.wait(p)
    r.release(p)
    return res.slot
'''


def test_read_after_release_of_a_helpers_slot(tmp_path, capsys):
    reader = loop("for p in range(N):", "sl = take(r, p)\n"
                  "tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(sl.tile)))\n")
    text = kernel(loop("for p in range(N):", P), reader, extra=HELPER)
    expect(*dump(tmp_path, capsys, text), ("rejected", "[access-outside-window]"))


def test_where_of_two_slot_pointers_reads_the_released_one(tmp_path, capsys):
    reader = "res0 = r.wait(0)\n" + loop(
        "for p in range(1, N):",
        "res = r.wait(p)\nr.release(p)\n"
        "q = tl.where(p < 100, tle.gpu.local_ptr(res.slot.tile), "
        "tle.gpu.local_ptr(res0.slot.tile))\n"
        "tl.store(y_ptr + tl.arange(0, 64), tl.load(q))\n") + "r.release(0)\n"
    text = kernel(loop("for p in range(N):", P), reader)
    expect(*dump(tmp_path, capsys, text), ("rejected", "[access-outside-window]"))


def test_conditional_slot_is_unknown(tmp_path, capsys):
    reader = "res0 = r.wait(0)\n" + loop(
        "for p in range(1, N):",
        "res = r.wait(p)\nr.release(p)\nsl = res.slot if p > 100 else res0.slot\n"
        "tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(sl.tile)))\n"
    ) + "r.release(0)\n"
    text = kernel(loop("for p in range(N):", P), reader)
    expect(*dump(tmp_path, capsys, text), ("rejected", "[unknown-slot]"))


def one_shot(index: str) -> str:
    """A one-shot pipe written and read once at ``index``."""
    text = kernel(put(index), f"res = r.wait({index})\n"
                  "tl.store(y_ptr + tl.arange(0, 64), "
                  "tl.load(tle.gpu.local_ptr(res.slot.tile)))\n")
    old = "tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64]"
    assert old in text
    return text.replace(old, "tle.pipe(capacity=1, one_shot=True, tile=tle.gpu.alloc([1, 64]")


@pytest.mark.parametrize("index", ["0", "1", "3", "N"])
def test_one_shot_at_any_index_waits_parity_zero(tmp_path, capsys, index):
    """Verified, and right: the lowering waits a one-shot pipe's full barrier at parity 0 (its
    only phase), not at the phase the index names (1 at index 1, which a fresh barrier passes)."""
    code, err = dump(tmp_path, capsys, one_shot(index))
    expect(code, err, "verified")
    from tle_compiler.cli.dump import main as tle_dump
    out = tmp_path / "k.gluon.py"
    assert tle_dump(["-q", "--gluon", "-o", str(out), str(tmp_path / "kernel.py")]) == 0
    capsys.readouterr()
    waits = [ln.strip() for ln in out.read_text().splitlines() if "mbarrier.wait(" in ln]
    assert waits == ["mbarrier.wait(kv_full0.index(0), 0)"], waits


def test_one_shot_waited_in_a_loop(tmp_path, capsys):
    reader = loop("for p in range(N):", "res = r.wait(0)\n"
                  "tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))\n")
    text = one_shot("0").replace(
        "    res = r.wait(0)\n    tl.store(y_ptr + tl.arange(0, 64), "
        "tl.load(tle.gpu.local_ptr(res.slot.tile)))\n", "    " + reader.replace("\n", "\n    ")
        .rstrip(" "))
    expect(*dump(tmp_path, capsys, text), ("rejected", "[one-shot-reuse]"))


CLOSES = {
    "close in the loop": (loop("for p in range(N):", "w.close(p)\n"),
                          loop("for p in range(N):", "res = r.wait(p)\nr.release(p)\n"),
                          ("rejected", "[event-after-close]")),
    "flag read after release": (
        loop("for p in range(N):", P) + "w.close(N)\n",
        loop("for p in range(N + 1):", "res = r.wait(p)\nr.release(p)\n"
             "if not res.is_closed:\n    tl.store(y_ptr, 1.0)\n"),
        ("rejected", "[access-outside-window]", "is_closed")),
    "closing slot read unguarded": (loop("for p in range(N):", P) + "w.close(N)\n",
                                    loop("for p in range(N + 1):", G),
                                    ("rejected", "[unwritten-field]")),
    "events under the flag": (
        loop("for p in range(N):", P) + "w.close(N)\n",
        loop("for p in range(N + 1):", "res = r.wait(p)\nr.release(p)\nif res.is_closed:\n"
             "    res2 = r.wait(p + 1)\n    r.release(p + 1)\n"),
        ("rejected", "[non-affine-if]")),
    "guarded read": (
        loop("for p in range(N):", P) + "w.close(N)\n",
        loop("for p in range(N + 1):", "res = r.wait(p)\nif not res.is_closed:\n"
             "    tl.store(y_ptr + tl.arange(0, 64), "
             "tl.load(tle.gpu.local_ptr(res.slot.tile)))\nr.release(p)\n"),
        "verified"),
}


@pytest.mark.parametrize("case", CLOSES)
def test_closes(tmp_path, capsys, case):
    writer, reader, want = CLOSES[case]
    expect(*dump(tmp_path, capsys, kernel(writer, reader)), want)


TWO_HANDLES = '''import triton.language as tl
import tle_compiler as tle


@tle.jit
def k(x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, kv, y_ptr, N))], [4],
                            [232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    for p in range(N):
        s = w.acquire(p)
        tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + tl.arange(0, 64)))
        w.commit(p)


def consume(a, b, y_ptr, N):
    r1 = a.reader()
    r2 = b.reader()
    for p in range(N):
        res = r1.wait(p)
        tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))
        r2.release(p)
'''


def test_one_pipe_passed_twice_is_one_reader(tmp_path, capsys):
    expect(*dump(tmp_path, capsys, TWO_HANDLES), "verified")
    # released through the other handle one index late: legal on capacity 2 (two held)
    late = TWO_HANDLES.replace("        r2.release(p)\n", "        if p >= 1:\n"
                               "            r2.release(p - 1)\n    r2.release(N - 1)\n")
    expect(*dump(tmp_path, capsys, late, "--param", "N=3"), "verified")
    expect(*dump(tmp_path, capsys, late), ("rejected", "[negative-index]", "N=0"))
    # two late: wait(2) while stage 0 still holds index 0
    bad = TWO_HANDLES.replace("        r2.release(p)\n", "        if p >= 2:\n"
                              "            r2.release(p - 2)\n")
    expect(*dump(tmp_path, capsys, bad, "--param", "N=3"), ("rejected", "[wait-on-held-stage]"))


def test_spsc_readers_in_two_partitions(tmp_path, capsys):
    text = TWO_HANDLES.replace("(consume, (kv, kv, y_ptr, N))]", "(consume, (kv, kv, y_ptr, N)),"
                               " (consume2, (kv, y_ptr, N))]").replace("[4],", "[4, 4],") \
        .replace("[232])", "[232, 232])") + '''

def consume2(kv, y_ptr, N):
    r = kv.reader()
    for p in range(N):
        res = r.wait(p)
        tl.store(y_ptr + 64 + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))
        r.release(p)
'''
    expect(*dump(tmp_path, capsys, text), ("rejected", "[reader-in-two-partitions]"))


RING_PIPE = """kernel e
param N
pipe kv capacity=CAP fields=(k)
partition producer default warps=4 {
  for i in range(LOOP) {
    kv.acquire(IDX)
    kv.commit(IDX)
  }
}
partition consumer warps=4 {
  for i in range(LOOP) {
    kv.wait(IDX)
    kv.release(IDX)
  }
}
"""

PIPE_FILES = {
    "zero step": (dict(LOOP="0, N, 0"), 2, "step must not be zero"),
    "zero capacity": (dict(CAP="0"), 2, "must be at least 1"),
    "huge capacity": (dict(CAP="99999999999999999999"), 1, "[bad-capacity]"),
    "huge index": (dict(LOOP="1", IDX="99999999999999999999999"), 1, "[phase-aliasing]"),
    "huge bound": (dict(LOOP="0, 99999999999999999999"), 3, "outside i32"),
    "every third index on capacity 3": (dict(CAP="3", IDX="3*i"), 0, ": verified for "),
    "every second index on capacity 3": (dict(CAP="3", IDX="2*i"), 1, "[phase-aliasing]"),
    "odd indices on capacity 2": (dict(IDX="2*i + 1"), 0, ": verified for "),
}


@pytest.mark.parametrize("case", PIPE_FILES)
def test_pipe_file_edges(tmp_path, capsys, case):
    subs, want_code, what = PIPE_FILES[case]
    text = RING_PIPE
    for key, default in (("CAP", "2"), ("LOOP", "N"), ("IDX", "i")):
        text = text.replace(key, subs.get(key, default))
    code, err = dump(tmp_path, capsys, text, name="e.pipe")
    assert code == want_code, err
    assert what in err, err
    if code != 0:
        assert ": verified for " not in err, err


def test_pipe_file_definition_of_itself(tmp_path, capsys):
    text = ("kernel e\nparam M\nbase N any\ndef M = M // 2\npipe kv capacity=2 fields=(k)\n"
            "partition producer default warps=4 {\n}\npartition consumer warps=4 {\n}\n")
    code, err = dump(tmp_path, capsys, text, name="e.pipe")
    assert code == 2 and "refers to 'M' itself" in err, err
