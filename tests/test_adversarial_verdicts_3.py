"""A third set of kernels written to race or hang where a verifier might look away, and their safe
twins: tle-dump must reject (exit 1, the fault's check named) or at least not prove (exit 3) every
unsafe one, never call it verified, and prove (exit 0) every safe one listed here.

The areas: slot accesses (a pointer, field or result kept past its release or commit, fields
written under an `if`, a commit of another index, aliased slot handles); trip counts that look
equal but are not (shifts and masks against `//` and `%`, `tl` functions of constexprs, runtime
and constexpr forms of one expression, program ids of two axes, casts); loops with steps, starts,
swapped bounds and nests; persistent item loops indexed `r * NP + p` and their variants; TMA copies
into pipe slots under conditions, after commits and through helpers.

Two of these were verified before the frontend fixes that came with this file
(tle_compiler/frontend/protocol.py):
- `tl.minimum(C, 1000)` of a constexpr is a tensor in Triton, so `(tl.minimum(C, 1000) - 1000) // 8`
  divides with C's truncation (-124 at C = 3), but it was read as Python's floor (-125): with
  `--param C=3` a reader waiting one tile more than the writer commits was verified;
- `(C << 28) >> 28` (a constexpr: Python's unbounded integers, C) and `((C + 0 * N) << 28) >> 28`
  (a runtime value: i32, -8 at C = 8) got one key, so one param: two trip counts that differ on
  the GPU were proved equal "for every value".

Four more were verified until the frontend tracked integer widths: `.to(tl.int64)` was read as the
integer itself, so a shift after it, a product widened after it wrapped in i32 (or promoted beside
an i64 value) and a shift beside an argument cancelled from `N + 0 * M` (an i64 when passed so)
were each taken for the i32 expression (INT64_CASES).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tle_compiler.cli.dump import main as tle_dump

HEAD = "import triton.language as tl\nimport tle_compiler as tle\n\n\n"


def src(text: str, *edits: tuple[str, str]) -> str:
    """``text`` (dedented, the imports put in front) with each ``(old, new)`` edit applied once."""
    out = HEAD + textwrap.dedent(text).lstrip("\n")
    for old, new in edits:
        assert out.count(old) == 1, old
        out = out.replace(old, new)
    return out


def check(capsys, path: Path, params: tuple, expect) -> None:
    args = [a for p in params for a in ("--param", p)]
    code = tle_dump(["-q", *args, str(path)])
    out, err = capsys.readouterr()
    text = out + err
    assert "Traceback" not in text
    if expect == "verified":
        assert code == 0, text
        assert ": verified for " in err, text
        return
    kind, what = expect
    assert ": verified for " not in text, text
    if kind == "rejected":
        assert code == 1, text
        assert what in err, text
    else:  # "bounded": nothing claimed for the values named
        assert code == 3, text
        assert "bounded" in err and what in err, text


# ----------------------------------------------------------------------------- slot accesses

# A ring of capacity 2 with two fields; the reader loads both, releases, then stores their sum.
RING = """
@tle.jit
def k(x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32),
                  aux=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, y_ptr, N))], [4], [232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    for p in range(N):
        slot = w.acquire(p)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + p * 64 + tl.arange(0, 64)))
        tl.store(tle.gpu.local_ptr(slot.aux), tl.load(x_ptr + p * 64 + tl.arange(0, 64)))
        w.commit(p)


def consume(kv, y_ptr, N):
    r = kv.reader()
    for p in range(N):
        res = r.wait(p)
        t = tl.load(tle.gpu.local_ptr(res.slot.tile))
        a = tl.load(tle.gpu.local_ptr(res.slot.aux))
        r.release(p)
        tl.store(y_ptr + p * 64 + tl.arange(0, 64), t + a)
"""
_LOAD_T = "        t = tl.load(tle.gpu.local_ptr(res.slot.tile))\n"
_REL = "        r.release(p)\n"
_STORE_AUX = "        tl.store(tle.gpu.local_ptr(slot.aux), tl.load(x_ptr + p * 64 + tl.arange(0, 64)))\n"
_COMMIT = "        w.commit(p)\n"


def _aux_under(cond: str) -> str:
    return src(RING, (_STORE_AUX, f"        if {cond}:\n    " + _STORE_AUX))


SLOT_CASES = {
    "pointer kept past the release": (src(RING, (_LOAD_T, "        ptr = tle.gpu.local_ptr(res.slot.tile)\n"),
                                          (_REL, _REL + "        t = tl.load(ptr)\n")),
                                      ("rejected", "[access-outside-window]")),
    "offset pointer loaded by a helper past the release": (
        src(RING, (_LOAD_T, "        ptr = tle.gpu.local_ptr(res.slot.tile) + 0\n"),
            (_REL, _REL + "        t = ld(ptr)\n")) + "\n\ndef ld(q):\n    return tl.load(q)\n",
        ("rejected", "[access-outside-window]")),
    "pointer in a tuple past the release": (
        src(RING, (_LOAD_T, "        pp = (tle.gpu.local_ptr(res.slot.tile), 1)\n"),
            (_REL, _REL + "        t = tl.load(pp[0])\n")), ("rejected", "[access-outside-window]")),
    "slot field kept past the release": (src(RING, (_LOAD_T, "        fld = res.slot.tile\n"),
                                             (_REL, _REL + "        t = tl.load(tle.gpu.local_ptr(fld))\n")),
                                         ("rejected", "[access-outside-window]")),
    "writer stores through a kept pointer after the commit": (
        src(RING, (_STORE_AUX, "        q = tle.gpu.local_ptr(slot.aux)\n"),
            (_COMMIT, _COMMIT + "        tl.store(q, tl.load(x_ptr + p * 64 + tl.arange(0, 64)))\n")),
        ("rejected", "[access-outside-window]")),
    # one field written on even tiles only: stage 1 of a capacity-2 ring never gets it
    "field written when p % 2 == 0": (_aux_under("p % 2 == 0"), ("rejected", "[unwritten-field]")),
    "field written when p > 0": (_aux_under("p > 0"), ("rejected", "[unwritten-field]")),
    "field written when data says so": (_aux_under("tl.load(x_ptr) > 0"),
                                        ("rejected", "[unwritten-field]")),
    "field written in one branch, the other field in the other": (
        src(RING, (_STORE_AUX, "        if p % 2 == 0:\n    " + _STORE_AUX + "        else:\n"
                   "            tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + tl.arange(0, 64)))\n")),
        ("rejected", "[unwritten-field]")),
    # the first lap writes both stages; later laps read what a committed earlier window left
    # there (no race: that window is complete and no writer touches the field again)
    "field written on the first lap only": (_aux_under("p < 2"), "verified"),
    "commit of the next index": (src(RING, (_COMMIT, "        w.commit(p + 1)\n")),
                                 ("rejected", "[index-mismatch]")),
    "slot handle aliased": (src(RING, ("        slot = w.acquire(p)\n",
                                       "        s0 = w.acquire(p)\n        slot = s0\n")), "verified"),
    "two writer handles": (src(RING, ("    w = kv.writer()\n", "    w = kv.writer()\n    w2 = kv.writer()\n"),
                               (_COMMIT, "        w2.commit(p)\n")), "verified"),
    "result used after the loop": (
        src(RING, ("        tl.store(y_ptr + p * 64 + tl.arange(0, 64), t + a)\n",
                   "        tl.store(y_ptr + p * 64 + tl.arange(0, 64), t + a)\n    if N > 0:\n"
                   "        tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))\n")),
        ("rejected", "[unknown-slot]")),
}


# ----------------------------------------------------------------------------- trip counts

# The writer loops WCOUNT times, the reader RCOUNT times; N, M runtime, C a constexpr.
COUNTS = src(RING, ("def k(x_ptr, y_ptr, N):\n    tle.assume(N >= 0)\n",
                    "def k(x_ptr, y_ptr, N, M, C: tl.constexpr):\n"),
             ("(produce, (kv, x_ptr, N))", "(produce, (kv, x_ptr, N, M, C))"),
             ("(consume, (kv, y_ptr, N))", "(consume, (kv, y_ptr, N, M, C))"),
             ("def produce(kv, x_ptr, N):\n    w = kv.writer()\n    for p in range(N):",
              "def produce(kv, x_ptr, N, M, C: tl.constexpr):\n    w = kv.writer()\n"
              "    n = WCOUNT\n    for p in range(n):"),
             ("def consume(kv, y_ptr, N):\n    r = kv.reader()\n    for p in range(N):",
              "def consume(kv, y_ptr, N, M, C: tl.constexpr):\n    r = kv.reader()\n"
              "    n = RCOUNT\n    for p in range(n):"))


def counts(writer: str, reader: str) -> str:
    return COUNTS.replace("WCOUNT", writer).replace("RCOUNT", reader)


# `tl.minimum` of a constexpr is a tensor: C's truncating division (-124 at C = 3), not -125
MIN_OF_CONSTEXPR = counts("(C - 1000) // 8 + 200", "(tl.minimum(C, 1000) - 1000) // 8 + 200")
MAX_BOTH_RUNTIME = counts("(tl.maximum(C, 0) - 1000) // 8 + 200",
                          "(tl.maximum(C, 0) - 1000 + 0 * N) // 8 + 200")
# C << 28 in Python's integers against the same shift in i32 (-8 + 10 = 2 tiles at C = 8)
SHIFT_WRAPS = counts("((C << 28) >> 28) + 10", "(((C + 0 * N) << 28) >> 28) + 10")
MASK_WRAPS = counts("((C * 268435456) & 7) + 2", "(((C + 0 * N) * 268435456) & 7) + 2")

COUNT_CASES = {
    "shift against truncating division": (counts("(N >> 1) + 8", "N // 2 + 8"), (),
                                          ("rejected", "[wait-never-committed]")),
    "mask against remainder": (counts("(N & 7) + 2", "N % 8 + 2"), (), ("rejected", "[unconsumed]")),
    "remainder by a negative constexpr": (counts("C % -8 + 8", "C % 8 + 8"), (),
                                          ("rejected", "[wait-never-committed]")),
    "tl.minimum of a constexpr, C=3": (MIN_OF_CONSTEXPR, ("C=3",), ("rejected", "[wait-never-committed]")),
    "tl.minimum of a constexpr": (MIN_OF_CONSTEXPR, (), ("rejected", "[wait-never-committed]")),
    "tl.maximum of a constexpr against a runtime form, C=3": (MAX_BOTH_RUNTIME, ("C=3",), "verified"),
    "shift of a constexpr against its runtime form": (SHIFT_WRAPS, (), ("bounded", "needs derived values")),
    "shift of a constexpr against its runtime form, C=8": (SHIFT_WRAPS, ("C=8",), ("bounded", "outside i32")),
    "mask of a constexpr product against its runtime form": (MASK_WRAPS, (),
                                                             ("bounded", "needs derived values")),
    "minimum with swapped arguments": (counts("tl.minimum(N, M)", "tl.minimum(M, N)"), (), "verified"),
    "minimum against maximum": (counts("tl.minimum(N, M)", "tl.maximum(M, N)"), (),
                                ("rejected", "[wait-never-committed]")),
    "cdiv against its definition": (counts("tl.cdiv(N, 4)", "(N + 3) // 4"), (), "verified"),
    "cdiv against one more": (counts("tl.cdiv(N, 4)", "(N + 4) // 4"), (),
                              ("rejected", "[wait-never-committed]")),
    "program ids of two axes": (counts("tl.program_id(0) + 2", "tl.program_id(1) + 2"), (),
                                ("rejected", "[wait-never-committed]")),
    "program counts of two axes": (counts("tl.num_programs(0)", "tl.num_programs(1)"), (),
                                   ("rejected", "[wait-never-committed]")),
    "an unsigned cast": (counts("N.to(tl.uint32)", "N"), (), ("rejected", "[non-affine-loop]")),
    "a product against a product of a quotient": (counts("N * M // 2", "M * (N // 2)"), (),
                                                  ("rejected", "[unconsumed]")),
}

# The GPU computes what follows `.to(tl.int64)` in i64: `(N.to(tl.int64) << 28) >> 28` is N and
# `(N << 28) >> 28` is -8 at N = 8 (18 tiles against 2); `(N * 268435456).to(tl.int64) -
# 2147483640` widens the wrapped product (-4294967288 at N = 8, an empty loop) where the i32 form
# wraps back to 8. Both were verified while the cast was read as the integer itself (one key, one
# param). Triton promotes an i32 operand beside an i64 one the same way, and an argument passed
# as i64 makes `N + 0 * B` an i64 though B cancels from its affine form.
WIDENED = counts("(N * 268435456).to(tl.int64) - 2147483640", "N * 268435456 - 2147483640")
PROMOTED = counts("N.to(tl.int64) - N + N * 268435456 - 2147483640", "N * 268435456 - 2147483640")
INT64_CASES = {
    "shift after a widening cast against the i32 shift": (
        counts("((N.to(tl.int64) << 28) >> 28) + 10", "((N << 28) >> 28) + 10"), (),
        ("bounded", "needs derived values")),
    "shift after a widening cast against the i32 shift, N=8": (
        counts("((N.to(tl.int64) << 28) >> 28) + 10", "((N << 28) >> 28) + 10"), ("N=8",),
        ("bounded", "outside i32")),
    "the same shift after a widening cast in both": (
        counts("((N.to(tl.int64) << 28) >> 28) + 10", "((N.to(tl.int64) << 28) >> 28) + 10"), (),
        "verified"),
    "widening a wrapped product, N=8": (WIDENED, ("N=8",), ("bounded", "outside i32")),
    # the i32 product the cast widens is 2^31 at N = 8: no claim there, even where both widen it
    "widening the product in both, N=8": (
        counts("(N * 268435456).to(tl.int64) - 2147483640",
               "(N * 268435456).to(tl.int64) - 2147483640"), ("N=8",), ("bounded", "outside i32")),
    "widening a product that fits, N=7": (
        counts("(N * 268435456).to(tl.int64) - 1879048190", "N * 268435456 - 1879048190"),
        ("N=7",), "verified"),
    "widening the operand before the product, N=8": (
        counts("N.to(tl.int64) * 268435456 - 2147483640", "N * 268435456 - 2147483640"), ("N=8",),
        "verified"),
    "an i32 product promoted beside an i64 value, N=8": (PROMOTED, ("N=8",),
                                                         ("bounded", "outside i32")),
    "an i32 product truncated back to i32, N=8": (
        counts("(N.to(tl.int64) * 268435456).to(tl.int32) - 2147483640",
               "N * 268435456 - 2147483640"), ("N=8",), "verified"),
    "a shift beside a cancelled argument against the i32 shift": (
        counts("(((N + 0 * M) << 28) >> 28) + 10", "((N << 28) >> 28) + 10"), (),
        ("bounded", "needs derived values")),
    "the same shift beside a cancelled argument in both": (
        counts("(((N + 0 * M) << 28) >> 28) + 10", "(((N + 0 * M) << 28) >> 28) + 10"), (),
        "verified"),
}


# ----------------------------------------------------------------------------- loops

def loops(wloop: str, rloop: str, wi: str, ri: str, base: str = COUNTS) -> str:
    """``base`` with the writer's loop header(s) ``wloop`` and index ``wi``, the reader's
    ``rloop`` and ``ri`` (loop bodies indented by two more spaces under a second header)."""
    t = base.replace("    n = WCOUNT\n    for p in range(n):\n        slot = w.acquire(p)",
                       f"{wloop}\n        slot = w.acquire({wi})").replace(
        "        w.commit(p)", f"        w.commit({wi})")
    t = t.replace("    n = RCOUNT\n    for p in range(n):\n        res = r.wait(p)",
                  f"{rloop}\n        res = r.wait({ri})").replace(
        "        r.release(p)", f"        r.release({ri})")
    return t.replace("x_ptr + p * 64", "x_ptr").replace("y_ptr + p * 64", "y_ptr")


_FOR = "    for p in range(N):"
LOOP_CASES = {
    # a product of a loop variable computed in i32, then widened: no param can stand for it
    "a widened product of a loop variable as the index": (
        loops(_FOR, _FOR, "(p * 268435456).to(tl.int64)", "p"), ("rejected", "[non-affine]")),
    "a loop variable widened before its product as the index": (
        loops(_FOR, _FOR, "p.to(tl.int64) * 1", "p"), "verified"),
    "descending writer one past the end": (loops("    for p in range(N, -1, -1):", _FOR, "N - 1 - p", "p"),
                                           ("rejected", "[negative-index]")),
    "descending writer one short": (loops("    for p in range(N - 1, 0, -1):", _FOR, "N - 1 - p", "p"),
                                    ("rejected", "[wait-never-committed]")),
    "static range of 5 against 4": (loops("    for p in tl.static_range(5):", "    for p in range(4):", "p", "p"),
                                    ("rejected", "[unconsumed]")),
    "static range of 4 against range(4)": (loops("    for p in tl.static_range(4):", "    for p in range(4):",
                                                 "p", "p"), "verified"),
    "start 3, index p - 3": (loops("    for p in range(3, N + 3):", _FOR, "p - 3", "p"), "verified"),
    "start 3, index p - 2": (loops("    for p in range(3, N + 3):", _FOR, "p - 2", "p"),
                             ("rejected", "[wait-never-committed]")),
    "bounds swapped between partitions": (loops("    for p in range(M, N):", "    for p in range(N, M):",
                                                "p - M", "p - N"), ("rejected", "[unconsumed]")),
    "step from a param": (loops("    for p in tl.range(0, N, M):", _FOR, "p", "p"),
                          ("rejected", "[non-affine-loop]")),
    "nest in the other order": (loops("    for o in range(N):\n      for b in range(4):",
                                      "    for b in range(4):\n      for o in range(N):", "o * 4 + b", "o * 4 + b"),
                                ("rejected", "[order-mismatch]")),
    "inner loop from the outer variable, one too long": (
        loops("    for o in range(N):\n      for b in range(2 * o, 2 * o + 3):", "    for q in range(2 * N):",
              "b", "q"), ("rejected", "[unconsumed]")),
    "while loop": (loops("    p = 0\n    while p < N:", _FOR, "p", "p"),
                   ("rejected", "[unsupported-control-flow]")),
}


# ----------------------------------------------------------------------------- persistent items

PERSISTENT = COUNTS.replace("def k(x_ptr, y_ptr, N, M, C: tl.constexpr):",
                            "def k(x_ptr, y_ptr, N, M, C: tl.constexpr, NP: tl.constexpr):").replace(
    "N, M, C))", "N, M, C, NP))").replace("M, C: tl.constexpr):\n    w", "M, C: tl.constexpr, NP: tl.constexpr):\n    w").replace(
    "M, C: tl.constexpr):\n    r", "M, C: tl.constexpr, NP: tl.constexpr):\n    r")
_ROUNDS = "    for r0 in range(N):\n      for p in range(NP):"


def persistent(wloop: str, rloop: str, wi: str, ri: str) -> str:
    return loops(wloop, rloop, wi, ri, PERSISTENT)


PERSISTENT_CASES = {
    "r * NP + p, NP=3": (persistent(_ROUNDS, _ROUNDS, "r0 * NP + p", "r0 * NP + p"), ("NP=3",), "verified"),
    "r * NP + p against r * (NP + 1) + p": (persistent(_ROUNDS, _ROUNDS, "r0 * NP + p", "r0 * (NP + 1) + p"),
                                            ("NP=3",), ("rejected", "[wait-never-committed]")),
    "r * NP + p against p * ROUNDS + r": (
        persistent("    for r0 in range(4):\n      for p in range(NP):",
                   "    for r0 in range(4):\n      for p in range(NP):", "r0 * NP + p", "p * 4 + r0"),
        ("NP=3",), ("rejected", "[order-mismatch]")),
    # the first index of stage 0 is a program id: at pid 1 it has phase 1, which a fresh barrier
    # reports complete, so the reader's wait would pass before the commit
    "r * NP + p + program id": (persistent(_ROUNDS, _ROUNDS, "r0 * NP + p + tl.program_id(0)",
                                           "r0 * NP + p + tl.program_id(0)"), ("NP=2",),
                                ("rejected", "[phase-aliasing]")),
    "r * M + p with M runtime": (persistent("    for r0 in range(N):\n      for p in range(M):",
                                            "    for r0 in range(N):\n      for p in range(M):",
                                            "r0 * M + p", "r0 * M + p"), (), ("rejected", "[non-affine]")),
    "item loop strided by the program count": (
        persistent("    for r0 in range(tl.program_id(0), N, tl.num_programs(0)):\n      for p in range(NP):",
                   "    for r0 in range(tl.program_id(0), N, tl.num_programs(0)):\n      for p in range(NP):",
                   "r0 * NP + p", "r0 * NP + p"), ("NP=2",), ("rejected", "[non-affine-loop]")),
}


# ----------------------------------------------------------------------------- TMA copies

TMA = """
@tle.jit
def k(x_desc, out_ptr, N):
    tle.assume(N >= 0)
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, 64, 64], tl.bfloat16),
                 u=tle.gpu.alloc([2, 64], tl.int32))
    tle.gpu.warp_specialize([(fill, (p, x_desc, N)), (drain, (p, out_ptr, N))], [4], [232])


def fill(p, x_desc, N):
    w = p.writer()
    for i in range(N):
        s = w.acquire(i)
        tle.gpu.tma_load(s.t, x_desc, [i * 64, 0])
        tl.store(tle.gpu.local_ptr(s.u), tl.arange(0, 64))
        w.commit(i)


def drain(p, out_ptr, N):
    r = p.reader()
    for i in range(N):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.t))
        u = tl.load(tle.gpu.local_ptr(res.slot.u))
        r.release(i)
        tl.store(out_ptr + (i * 64 + u)[:, None] * 64 + tl.arange(0, 64)[None, :], v)
"""
_COPY = "        tle.gpu.tma_load(s.t, x_desc, [i * 64, 0])\n"
_CP_HELPER = "\n\ndef cp(s, d, i):\n    tle.gpu.tma_load(s.t, d, [i * 64, 0])\n"

TMA_CASES = {
    "copy under a param condition": (src(TMA, (_COPY, "        if N > 1:\n    " + _COPY)),
                                     ("rejected", "[tma-window]")),
    "copy under a program id condition": (src(TMA, (_COPY, "        if tl.program_id(0) == 0:\n    " + _COPY)),
                                          ("rejected", "[tma-window]")),
    "copy by a helper after the commit": (src(TMA, (_COPY, ""), ("        w.commit(i)\n",
                                                                 "        w.commit(i)\n        cp(s, x_desc, i)\n"))
                                          + _CP_HELPER, ("rejected", "[tma-window]")),
    "copy by a helper inside the window": (src(TMA, (_COPY, "        cp(s, x_desc, i)\n")) + _CP_HELPER,
                                           "verified"),
    "copy through an aliased slot": (src(TMA, (_COPY, "        s3 = s\n" + _COPY.replace("s.t", "s3.t"))),
                                     "verified"),
    "copy into the previous iteration's slot": (
        src(TMA, ("    for i in range(N):\n        s = w.acquire(i)\n" + _COPY,
                  "    s = w.acquire(0)\n    tle.gpu.tma_load(s.t, x_desc, [0, 0])\n"
                  "    tl.store(tle.gpu.local_ptr(s.u), tl.arange(0, 64))\n    w.commit(0)\n"
                  "    for i in range(1, N):\n        s0 = s\n        s = w.acquire(i)\n"
                  "        tle.gpu.tma_load(s0.t, x_desc, [i * 64, 0])\n")),
        ("rejected", "[unknown-slot]")),
    "writer loads a copied field": (src(TMA, ("        w.commit(i)\n",
                                              "        z = tl.load(tle.gpu.local_ptr(s.t))\n        w.commit(i)\n")),
                                    ("rejected", "[tma-field-access]")),
    # a close copies nothing: a reader that reads the closed slot reads what no copy brought
    "reader reads the closed slot": (src(TMA, ("        w.commit(i)\n", "        w.commit(i)\n    w.close(N)\n"),
                                         ("    for i in range(N):\n        res = r.wait(i)",
                                          "    for i in range(N + 1):\n        res = r.wait(i)")),
                                     ("rejected", "[unwritten-field]")),
}


# ----------------------------------------------------------------------------- the tests

def _run(tmp_path, capsys, text, params, expect):
    path = tmp_path / "kernel.py"
    path.write_text(text)
    check(capsys, path, params, expect)


@pytest.mark.parametrize("name", list(SLOT_CASES))
def test_slot_accesses(tmp_path, capsys, name):
    text, expect = SLOT_CASES[name]
    _run(tmp_path, capsys, text, (), expect)


@pytest.mark.parametrize("name", list(COUNT_CASES))
def test_trip_counts(tmp_path, capsys, name):
    _run(tmp_path, capsys, *COUNT_CASES[name])


@pytest.mark.parametrize("name", list(INT64_CASES))
def test_widening_casts_are_not_verified(tmp_path, capsys, name):
    _run(tmp_path, capsys, *INT64_CASES[name])


def test_an_assumption_on_a_value_an_argument_width_decides_is_refused(tmp_path, capsys):
    """`M = ((N + 0 * B) << 28) >> 28` is N when B is passed as i64 and -8 at N = 8 when it is
    an i32: a launch cannot compute M from its definition (which no longer names B), so a
    `tle.assume` on it is refused; without the cancelled term it is proved."""
    text = src(RING, ("def k(x_ptr, y_ptr, N):\n    tle.assume(N >= 0)\n",
                      "def k(x_ptr, y_ptr, N, B):\n    N = ((N + 0 * B) << 28) >> 28\n"
                      "    tle.assume(N >= 1)\n"))
    _run(tmp_path, capsys, text, (), ("rejected", "[bad-assume]"))
    _run(tmp_path, capsys, text.replace("((N + 0 * B) << 28) >> 28", "(N << 28) >> 28"), (),
         "verified")


@pytest.mark.parametrize("name", list(LOOP_CASES))
def test_loops(tmp_path, capsys, name):
    text, expect = LOOP_CASES[name]
    _run(tmp_path, capsys, text, (), expect)


@pytest.mark.parametrize("name", list(PERSISTENT_CASES))
def test_persistent_item_loops(tmp_path, capsys, name):
    _run(tmp_path, capsys, *PERSISTENT_CASES[name])


@pytest.mark.parametrize("name", list(TMA_CASES))
def test_tma_copies(tmp_path, capsys, name):
    text, expect = TMA_CASES[name]
    _run(tmp_path, capsys, text, (), expect)


def test_tl_minimum_of_a_constexpr_divides_like_c():
    """What the first fix rests on: Triton 3.6 folds `(tl.minimum(3, 1000) - 1000) // 8` to -124
    (the tensor's truncating division) and `(min(3, 1000) - 1000) // 8` to -125 (Python's); the
    frontend keeps the builtin's a constexpr and makes the tl function's a runtime value."""
    from tle_compiler.frontend import read_source

    text = counts("(min(C, 1000) - 1000) // 8 + 200", "(tl.minimum(C, 1000) - 1000) // 8 + 200")
    (program,) = read_source(text, "k.py").kernels
    c_semantics = {str(d.definition): d.definition.c for d in program.derived}
    assert c_semantics == {"min(C, 1000)": False, "(min_C_1000 - 1000) // 8": False,
                           "minimum(C, 1000)": True, "(minimum_C_1000 - 1000) // 8": True}, \
        c_semantics
