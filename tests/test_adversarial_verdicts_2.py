"""Kernels written to race or hang in ways a verifier might miss, and their safe twins: tle-dump
must reject (exit 1, the fault's check named) every unsafe one, never call it verified, and prove
(exit 0) every safe one.

The areas: `if` on a constexpr or on a literal handed to a partition (around events or an index
computation, one specialisation safe and another not); named-barrier pipes (a release claimed
implied but not, hops that exist for some uses only, a hop through a capacity-2 pipe); delayed
releases and their off-by-one variants; trip counts that are data values, read identically or
not by the partitions; helpers (of the kernel's module or another one) holding events, tuples of
handles, several handles of one reader; multi-reader pipes whose second reader misbehaves.

Two of these were verified before the frontend fixes that came with this file:
- `(TOPK - 1000) // 8` in one partition (TOPK a constexpr: Python's floor division) and
  `(TOPK + 0 * N - 1000) // 8` in the other (a runtime value: C's truncating one) were one derived
  param, so two trip counts that differ by one on the GPU were taken for equal;
- two data values bound to one name on one line (`n = tl.load(a); NP = n; n = tl.load(b)`) were
  one opaque param, so loops over two different loaded counts were taken for equal.
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


def verdict(capsys, path: Path, *params: str) -> tuple[int, str, str]:
    args = [a for p in params for a in ("--param", p)]
    code = tle_dump(["-q", *args, str(path)])
    out, err = capsys.readouterr()
    return code, out, err


def check(capsys, path: Path, params: tuple, expect) -> None:
    code, out, err = verdict(capsys, path, *params)
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
    else:  # "bounded" / "unknown": nothing claimed for the values named
        assert code == 3, text
        assert f": {kind}: " in err and what in err, text


# ----------------------------------------------------------------------------- kernel sources

# A ring of capacity 2 from produce to consume over N tiles; CONSUME_TAIL is the reader's loop
# body after its wait.
RING = """
@tle.jit
def k(x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, y_ptr, N))], [4], [232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    for p in range(N):
        slot = w.acquire(p)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + p * 64 + tl.arange(0, 64)))
        w.commit(p)


def consume(kv, y_ptr, N):
    r = kv.reader()
    for p in range(N):
        res = r.wait(p)
        tl.store(y_ptr + p * 64 + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))
        r.release(p)
"""

_RELEASE = "        r.release(p)\n"

# the reader releases only when a constexpr the kernel hands it is true
FLAG_LITERAL = src(RING, ("(consume, (kv, y_ptr, N))", "(consume, (kv, y_ptr, N, FLAG_VALUE))"),
                   ("def consume(kv, y_ptr, N):", "def consume(kv, y_ptr, N, ROPE: tl.constexpr):"),
                   (_RELEASE, "        if ROPE:\n            r.release(p)\n"))
FLAG_GENERIC = src(RING, ("def k(x_ptr, y_ptr, N):", "def k(x_ptr, y_ptr, N, ROPE: tl.constexpr):"),
                   ("(consume, (kv, y_ptr, N))", "(consume, (kv, y_ptr, N, ROPE))"),
                   ("def consume(kv, y_ptr, N):", "def consume(kv, y_ptr, N, ROPE: tl.constexpr):"),
                   (_RELEASE, "        if ROPE:\n            r.release(p)\n"))

# the writer's index is computed under a constexpr if: t + 1 (wrong) or t
SHIFTED_INDEX = src(
    RING, ("def k(x_ptr, y_ptr, N):", "def k(x_ptr, y_ptr, N, SHIFT: tl.constexpr):"),
    ("(produce, (kv, x_ptr, N))", "(produce, (kv, x_ptr, N, SHIFT))"),
    ("def produce(kv, x_ptr, N):", "def produce(kv, x_ptr, N, SHIFT: tl.constexpr):"),
    ("        slot = w.acquire(p)\n", "        if SHIFT:\n            i = p + 1\n        else:\n"
     "            i = p\n        slot = w.acquire(i)\n"),
    ("        w.commit(p)\n", "        w.commit(i)\n"))

# an extra last tile under complementary-looking flags: `EXTRA` (truthy) in the writer and
# `1 - FLAG == 0` in the reader agree for FLAG in {0, 1} only
EXTRA_TILE = src(
    RING, ("def k(x_ptr, y_ptr, N):", "def k(x_ptr, y_ptr, N, FLAG: tl.constexpr):"),
    ("(produce, (kv, x_ptr, N))", "(produce, (kv, x_ptr, N, FLAG))"),
    ("(consume, (kv, y_ptr, N))", "(consume, (kv, y_ptr, N, 1 - FLAG))"),
    ("def produce(kv, x_ptr, N):", "def produce(kv, x_ptr, N, EXTRA: tl.constexpr):"),
    ("        w.commit(p)\n", "        w.commit(p)\n    if EXTRA:\n        slot = w.acquire(N)\n"
     "        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + tl.arange(0, 64)))\n"
     "        w.commit(N)\n"),
    ("def consume(kv, y_ptr, N):", "def consume(kv, y_ptr, N, NO_EXTRA: tl.constexpr):"),
    (_RELEASE, _RELEASE + "    if NO_EXTRA == 0:\n        res = r.wait(N)\n"
     "        tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))\n"
     "        r.release(N)\n"))

# trip counts computed in each partition from a constexpr: Python's floor division (TOPK alone)
# or C's truncating one (TOPK + 0 * N is a runtime value); at TOPK = 3: -125 + 200 = 75 tiles
# written and -124 + 200 = 76 waited
DIVIDED_COUNT = src(
    RING, ("def k(x_ptr, y_ptr, N):", "def k(x_ptr, y_ptr, N, TOPK: tl.constexpr):"),
    ("(produce, (kv, x_ptr, N))", "(produce, (kv, x_ptr, N, TOPK))"),
    ("(consume, (kv, y_ptr, N))", "(consume, (kv, y_ptr, N, TOPK))"),
    ("def produce(kv, x_ptr, N):\n    w = kv.writer()\n    for p in range(N):",
     "def produce(kv, x_ptr, N, TOPK: tl.constexpr):\n    w = kv.writer()\n"
     "    n = (WRITER_COUNT) // 8\n    for p in range(n + 200):"),
    ("def consume(kv, y_ptr, N):\n    r = kv.reader()\n    for p in range(N):",
     "def consume(kv, y_ptr, N, TOPK: tl.constexpr):\n    r = kv.reader()\n"
     "    n = (TOPK + 0 * N - 1000) // 8\n    for p in range(n + 200):"))

# the trip counts are data: NP loaded by the kernel body, NC what the reader loops over
LOADED_COUNT = src(
    RING, ("def k(x_ptr, y_ptr, N):\n    tle.assume(N >= 0)\n",
           "def k(np_ptr, x_ptr, y_ptr):\n    PROLOGUE\n"),
    ("(produce, (kv, x_ptr, N))", "(produce, (kv, x_ptr, NP))"),
    ("(consume, (kv, y_ptr, N))", "(consume, (kv, y_ptr, NC))"))
LOADED = {
    "shared": "NP = tl.load(np_ptr)\n    NC = NP",
    "loaded twice": "NP = tl.load(np_ptr)\n    NC = tl.load(np_ptr)",
    "chosen by data": "NP = tl.load(np_ptr)\n    if NP > 4:\n        NC = NP\n    else:\n        NC = 4",
    "counted": "NP = tl.load(np_ptr)\n    NC = 0\n    for c in range(NP):\n        NC += 1",
    "one line": "n = tl.load(np_ptr); NP = n; n = tl.load(np_ptr + 1); NC = n",
    "one line rebound": "NP = tl.load(np_ptr); NC = NP; NP = tl.load(np_ptr + 1)",
}

# delayed releases: the reader releases tile p - 1 after waiting tile p (DELAYED is its loop
# tail and what follows the loop), over a ring of capacity CAP
DELAYED = src(RING, ("capacity=2, tile=tle.gpu.alloc([2, 64]", "capacity=CAP, tile=tle.gpu.alloc([CAP, 64]"),
              (_RELEASE, "DELAYED"))
DELAYS = {
    "p - 1 and a trailing NP - 1": (2, """\
        if p > 0:
            r.release(p - 1)
    if N > 0:
        r.release(N - 1)
""", "verified"),
    "p - 1 at capacity 1": (1, """\
        if p > 0:
            r.release(p - 1)
    if N > 0:
        r.release(N - 1)
""", ("rejected", "[wait-on-held-stage]")),
    "p - 2 at capacity 2": (2, """\
        if p > 1:
            r.release(p - 2)
    if N > 1:
        r.release(N - 2)
    if N > 0:
        r.release(N - 1)
""", ("rejected", "[wait-on-held-stage]")),
    "p - 2 at capacity 3": (3, """\
        if p > 1:
            r.release(p - 2)
    if N > 1:
        r.release(N - 2)
    if N > 0:
        r.release(N - 1)
""", "verified"),
    "no trailing release": (2, """\
        if p > 0:
            r.release(p - 1)
""", ("rejected", "[missing-release]")),
    "trailing release twice": (2, """\
        if p > 0:
            r.release(p - 1)
    if N > 0:
        r.release(N - 1)
    if N > 0:
        r.release(N - 1)
""", ("rejected", "[release-without-wait]")),
    "trailing release at N >= 0": (2, """\
        if p > 0:
            r.release(p - 1)
    if N >= 0:
        r.release(N - 1)
""", ("rejected", "[negative-index]")),
    "delayed release at p >= 0": (2, """\
        if p >= 0:
            r.release(p - 1)
    if N > 0:
        r.release(N - 1)
""", ("rejected", "[negative-index]")),
    "trailing release only from N = 2": (2, """\
        if p > 0:
            r.release(p - 1)
    if N > 1:
        r.release(N - 1)
""", ("rejected", "[missing-release]")),
}

# SPMC: left reads and releases every tile; RIGHT is right's loop body
SPMC = """
@tle.jit
def k(x_ptr, y_ptr, z_ptr, N):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=2, readers=("left", "right"), tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (left, (kv, y_ptr, N)),
                             (right, (kv, z_ptr, N))], [4, 4], [232, 232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    for p in range(N):
        slot = w.acquire(p)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + p * 64 + tl.arange(0, 64)))
        w.commit(p)


def left(kv, y_ptr, N):
    r = kv.reader("left")
    for p in range(N):
        res = r.wait(p)
        tl.store(y_ptr + p * 64 + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))
        r.release(p)


def right(kv, y_ptr, N):
    r = kv.reader("right")
    for p in range(N):
        RIGHT
"""
_STORE = "tl.store(y_ptr + p * 64 + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))"
RIGHT = {
    "reads and releases": (f"res = r.wait(p)\n        {_STORE}\n        r.release(p)", "verified"),
    "loads then releases": ("res = r.wait(p)\n        t = tl.load(tle.gpu.local_ptr(res.slot.tile))\n"
                            "        r.release(p)\n        tl.store(y_ptr + tl.arange(0, 64), t)",
                            "verified"),
    "forgets to release": (f"res = r.wait(p)\n        {_STORE}", ("rejected", "[missing-release]")),
    "releases before reading": (f"res = r.wait(p)\n        r.release(p)\n        {_STORE}",
                                ("rejected", "[access-outside-window]")),
    "releases another index": (f"res = r.wait(p)\n        {_STORE}\n        r.release(p + 2)",
                               ("rejected", "[index-mismatch]")),
    "reads every other tile": (f"if p % 2 == 0:\n            res = r.wait(p)\n            {_STORE}\n"
                               "            r.release(p)", ("rejected", "[unconsumed]")),
    "two handles, one releases twice": (
        f"res = r.wait(p)\n        {_STORE}\n        r.release(p)\n        r2.release(p)",
        ("rejected", "[release-without-wait]")),
    "two handles, wait on one, release on the other": (
        f"res = r.wait(p)\n        {_STORE}\n        r2.release(p)", "verified"),
}

# the right reader's handles come from helpers: a tuple of two handles of one reader, made in
# the loop, waited through one and released through the other (AGAIN: a second release)
SPMC_HELPERS = src(SPMC, ('''def right(kv, y_ptr, N):
    r = kv.reader("right")
    for p in range(N):
        RIGHT
''', f'''def both(kv):
    return kv.reader("right"), kv.reader("right")


def take(rs, p, y_ptr):
    a, b = rs
    res = a.wait(p)
    {_STORE}
    b.release(p)
    AGAIN


def right(kv, y_ptr, N):
    for p in range(N):
        rs = both(kv)
        take(rs, p, y_ptr)
'''))

# right loads its tile, releases it, then multiplies with it: the wgmma reads the slot there
SPMC_DOT = src(SPMC, ("tile=tle.gpu.alloc([2, 64], tl.float32)", "tile=tle.gpu.alloc([2, 64, 64], tl.float16)"),
               ("tl.load(x_ptr + p * 64 + tl.arange(0, 64))", "tl.load(x_ptr + T64)"),
               (f"        {_STORE}\n        r.release(p)\n",
                "        tl.store(y_ptr + T64, tl.load(tle.gpu.local_ptr(res.slot.tile)))\n"
                "        r.release(p)\n"),
               ("    for p in range(N):\n        RIGHT\n",
                "    q = tl.load(y_ptr + 4096 + T64)\n    for p in range(N):\n        res = r.wait(p)\n"
                "        t = tl.load(tle.gpu.local_ptr(res.slot.tile))\n        RIGHT\n"
                "        tl.store(y_ptr + T64, s)\n")
               ).replace("T64", "tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]")

# Named-barrier pipes. x: named, wr -> rd; y: mbarrier pipe rd -> wr that carries the hop
NAMED = """
@tle.jit
def k(a_ptr, out_ptr, N):
    tle.assume(N >= 0)
    x = tle.pipe(capacity=1, barrier="named", m=tle.gpu.alloc([1, 64], tl.float32))
    y = tle.pipe(capacity=2, v=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(wr, (x, y, a_ptr, out_ptr, N)), (rd, (x, y, a_ptr, out_ptr, N))],
                            [4], [232])


def wr(x, y, a_ptr, out_ptr, N):
    offs = tl.arange(0, 64)
    wx = x.writer()
    ry = y.reader()
    for p in range(N):
        s = wx.acquire(p)
        tl.store(tle.gpu.local_ptr(s.m), tl.load(a_ptr + p * 64 + offs))
        wx.commit(p)
        res = ry.wait(p)
        tl.store(out_ptr + offs, tl.load(tle.gpu.local_ptr(res.slot.v)))
        ry.release(p)


def rd(x, y, a_ptr, out_ptr, N):
    offs = tl.arange(0, 64)
    rx = x.reader()
    wy = y.writer()
    for p in range(N):
        res = rx.wait(p)
        a = tl.load(tle.gpu.local_ptr(res.slot.m))
        rx.release(p)
        s = wy.acquire(p)
        tl.store(tle.gpu.local_ptr(s.v), a)
        wy.commit(p)
"""
_RD_TAIL = """\
        rx.release(p)
        s = wy.acquire(p)
        tl.store(tle.gpu.local_ptr(s.v), a)
        wy.commit(p)
"""
_WR_WAIT = """\
        res = ry.wait(p)
        tl.store(out_ptr + offs, tl.load(tle.gpu.local_ptr(res.slot.v)))
        ry.release(p)
"""
# wr waits y one use late: before acquiring x(p + 1) it has only seen y(p - 1), committed after
# the release of x(p - 1), not of x(p)
NAMED_LATE_WAIT = src(NAMED, (_WR_WAIT, """\
        if p > 0:
            res = ry.wait(p - 1)
            tl.store(out_ptr + offs, tl.load(tle.gpu.local_ptr(res.slot.v)))
            ry.release(p - 1)
    if N > 0:
        res = ry.wait(N - 1)
        tl.store(out_ptr + offs, tl.load(tle.gpu.local_ptr(res.slot.v)))
        ry.release(N - 1)
"""))
# rd releases x before (EARLY = 1, the hop) or after (EARLY = 0) its commit of y, a literal
NAMED_ORDER = src(NAMED, ("(rd, (x, y, a_ptr, out_ptr, N))", "(rd, (x, y, a_ptr, out_ptr, N, EARLY_VALUE))"),
                  ("def rd(x, y, a_ptr, out_ptr, N):", "def rd(x, y, a_ptr, out_ptr, N, EARLY: tl.constexpr):"),
                  (_RD_TAIL, """\
        if EARLY:
            rx.release(p)
        s = wy.acquire(p)
        tl.store(tle.gpu.local_ptr(s.v), a)
        wy.commit(p)
        if not EARLY:
            rx.release(p)
"""))
# the hop exists on even uses only
NAMED_EVEN = src(NAMED, (_RD_TAIL, """\
        if p % 2 == 0:
            rx.release(p)
        s = wy.acquire(p)
        tl.store(tle.gpu.local_ptr(s.v), a)
        wy.commit(p)
        if p % 2 == 1:
            rx.release(p)
"""))

# x: named, wr -> rd; y: mbarrier pipe wr -> rd of capacity YCAP whose release by rd is the only
# candidate hop: rd releases x(p), then y(p); wr acquires y(p + 1) before x(p + 1). At capacity
# 1 that acquire waits for y's release of p, so it follows x's release of p; at capacity 2 it
# waits for y's release of p - 1 only
NAMED_RELEASE_HOP = """
@tle.jit
def k(a_ptr, out_ptr, N):
    x = tle.pipe(capacity=1, barrier="named", m=tle.gpu.alloc([1, 64], tl.float32))
    y = tle.pipe(capacity=YCAP, v=tle.gpu.alloc([YCAP, 64], tl.float32))
    tle.gpu.warp_specialize([(wr, (x, y, a_ptr, N)), (rd, (x, y, out_ptr, N))], [4], [232])


def wr(x, y, a_ptr, N):
    offs = tl.arange(0, 64)
    wx = x.writer()
    wy = y.writer()
    for p in range(N):
        s2 = wy.acquire(p)
        tl.store(tle.gpu.local_ptr(s2.v), tl.load(a_ptr + p * 64 + offs))
        wy.commit(p)
        s = wx.acquire(p)
        tl.store(tle.gpu.local_ptr(s.m), tl.load(a_ptr + p * 64 + offs))
        wx.commit(p)


def rd(x, y, out_ptr, N):
    offs = tl.arange(0, 64)
    rx = x.reader()
    ry = y.reader()
    for p in range(N):
        res = rx.wait(p)
        a = tl.load(tle.gpu.local_ptr(res.slot.m))
        rx.release(p)
        res2 = ry.wait(p)
        b = tl.load(tle.gpu.local_ptr(res2.slot.v))
        ry.release(p)
        tl.store(out_ptr + p * 64 + offs, a + b)
"""

# helpers in another module of a package: constants there, not the kernel's, decide
HELPERS = '''
FLAG = 0
LAG = 2
OFF = 2**31 - 4


def give(r, p):
    if FLAG:
        r.release(p)


def give_lagged(r, p):
    r.release(p + LAG - 2)


def give_back_previous(r, p):
    if p >= 1:
        r.release(p - 1)


def fill(w, p, x_ptr):
    slot = w.acquire(p + OFF)
    tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + tl.arange(0, 64)))
    w.commit(p + OFF)
'''
# the kernel's own FLAG and LAG would make give() release and give_lagged() release p - 2
PKG_KERNEL = src(RING, ("@tle.jit", "from .helpers import HELPER\n\nFLAG = 1\nLAG = 0\n\n\n@tle.jit"),
                 (_RELEASE, "        HELPER(r, p)\n"))
# the previous tile given back by a helper; after the loop the kernel releases N - 1 and calls
# the helper once more, which gives back N - 1 a second time
PKG_DELAYED = src(RING, ("@tle.jit", "from .helpers import give_back_previous\n\n\n@tle.jit"),
                  (_RELEASE, "        give_back_previous(r, p)\n    if N > 0:\n"
                             "        r.release(N - 1)\n        give_back_previous(r, N)\n"))
# indices p + 2**31 - 4 (the writer's in the helper): in i32 for N <= 4 only
PKG_WRAP = src(RING, ("@tle.jit", "from .helpers import OFF, fill\n\n\n@tle.jit"),
               ("tle.assume(N >= 0)", "tle.assume(0 <= N <= 8)"),
               ("""\
        slot = w.acquire(p)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + p * 64 + tl.arange(0, 64)))
        w.commit(p)
""", "        fill(w, p, x_ptr)\n"),
               ("res = r.wait(p)", "res = r.wait(p + OFF)"), (_RELEASE, "        r.release(p + OFF)\n"))


# ----------------------------------------------------------------------------- the cases

CASES = {
    # constexpr flags
    "flag literal 0 skips the release": (FLAG_LITERAL.replace("FLAG_VALUE", "0"), (),
                                         ("rejected", "[missing-release]")),
    "flag literal 1 releases": (FLAG_LITERAL.replace("FLAG_VALUE", "1"), (), "verified"),
    "flag generic": (FLAG_GENERIC, (), ("rejected", "ROPE=0")),
    "flag generic, ROPE=1": (FLAG_GENERIC, ("ROPE=1",), "verified"),
    "flag generic, ROPE=0": (FLAG_GENERIC, ("ROPE=0",), ("rejected", "[missing-release]")),
    "index under a flag, generic": (SHIFTED_INDEX, (), ("rejected", "[non-affine]")),
    "index under a flag, SHIFT=0": (SHIFTED_INDEX, ("SHIFT=0",), "verified"),
    "index under a flag, SHIFT=1": (SHIFTED_INDEX, ("SHIFT=1",), ("rejected", "[wait-never-committed]")),
    "extra tile, generic": (EXTRA_TILE, (), ("rejected", "[unconsumed]")),
    "extra tile, FLAG=1": (EXTRA_TILE, ("FLAG=1",), "verified"),
    "extra tile, FLAG=0": (EXTRA_TILE, ("FLAG=0",), "verified"),
    "extra tile, FLAG=2": (EXTRA_TILE, ("FLAG=2",), ("rejected", "[unconsumed]")),
    # Python's floor division and C's truncating one are not one param
    "floor and truncating counts": (DIVIDED_COUNT.replace("WRITER_COUNT", "TOPK - 1000"), (),
                                    ("rejected", "[wait-never-committed]")),
    "floor and truncating counts, TOPK=3": (DIVIDED_COUNT.replace("WRITER_COUNT", "TOPK - 1000"),
                                            ("TOPK=3",), ("rejected", "[wait-never-committed]")),
    "truncating counts in both": (DIVIDED_COUNT.replace("WRITER_COUNT", "TOPK - 1000 + 0 * N"), (),
                                  "verified"),
    # trip counts from memory
    "loaded count shared": (LOADED_COUNT.replace("PROLOGUE", LOADED["shared"]), (), "verified"),
    "loaded count loaded twice": (LOADED_COUNT.replace("PROLOGUE", LOADED["loaded twice"]), (),
                                  ("rejected", "[wait-never-committed]")),
    "loaded count chosen by data": (LOADED_COUNT.replace("PROLOGUE", LOADED["chosen by data"]), (),
                                    ("rejected", "[wait-never-committed]")),
    # NC counts NP's iterations: max(NP, 0), the writer's count too, at every launch; a value
    # carried by a loop the verifier does not model, so a fault at one of its values (NP=0,
    # NC=1: rejected until adversarial round 74) is no launch's
    "loaded count counted again": (LOADED_COUNT.replace("PROLOGUE", LOADED["counted"]), (),
                                   ("unknown", "is at values of NC")),
    "two loads on one line": (LOADED_COUNT.replace("PROLOGUE", LOADED["one line"]), (),
                              ("rejected", "[wait-never-committed]")),
    "a load rebound on one line": (LOADED_COUNT.replace("PROLOGUE", LOADED["one line rebound"]), (),
                                   ("rejected", "[wait-never-committed]")),
    # SPMC readers
    **{f"right {name}": (src(SPMC.replace("RIGHT", body),
                             *([('r = kv.reader("right")\n',
                                 'r = kv.reader("right")\n    r2 = kv.reader("right")\n')]
                               if "r2" in body else [])), (), expect)
       for name, (body, expect) in RIGHT.items()},
    "handles from helpers": (SPMC_HELPERS.replace("    AGAIN\n", ""), (), "verified"),
    "handles from helpers, released twice": (SPMC_HELPERS.replace("AGAIN", "a.release(p)"), (),
                                             ("rejected", "[release-without-wait]")),
    "dot after the release": (SPMC_DOT.replace("RIGHT", "r.release(p)\n        s = tl.dot(q, t)"),
                              (), ("rejected", "[access-outside-window]")),
    "dot before the release": (SPMC_DOT.replace("RIGHT", "s = tl.dot(q, t)\n        r.release(p)"),
                               (), "verified"),
    # named-barrier pipes
    "named exchange": (src(NAMED), (), "verified"),
    "named, hop waited one use late": (NAMED_LATE_WAIT, (), ("rejected", "[named-release]")),
    "named, release before the hop (literal 1)": (NAMED_ORDER.replace("EARLY_VALUE", "1"), (),
                                                  "verified"),
    "named, release after the hop (literal 0)": (NAMED_ORDER.replace("EARLY_VALUE", "0"), (),
                                                 ("rejected", "[named-release]")),
    "named, hop on even uses only": (NAMED_EVEN, (), ("rejected", "[named-release]")),
    "named, release hop through capacity 1": (src(NAMED_RELEASE_HOP.replace("YCAP", "1")), (),
                                              "verified"),
    "named, release hop through capacity 2": (src(NAMED_RELEASE_HOP.replace("YCAP", "2")), (),
                                              ("rejected", "[named-release]")),
    "named, capacity 2": (src(NAMED, ('x = tle.pipe(capacity=1, barrier="named", m=tle.gpu.alloc([1,',
                                      'x = tle.pipe(capacity=2, barrier="named", m=tle.gpu.alloc([2,')),
                          (), ("rejected", "[bad-pipe]")),
    "named, two readers": (src(NAMED, ('barrier="named", m=', 'barrier="named", readers=("rd", "wr"), m=')),
                           (), ("rejected", "[bad-pipe]")),
    # delayed releases
    **{f"delayed, {name}": (DELAYED.replace("CAP", str(cap)).replace("DELAYED", tail), (), expect)
       for name, (cap, tail, expect) in DELAYS.items()},
}

PACKAGE_CASES = {
    "helper's FLAG (0) decides": (PKG_KERNEL.replace("HELPER", "give"), (),
                                  ("rejected", "[missing-release]")),
    "helper's LAG decides": (PKG_KERNEL.replace("HELPER", "give_lagged"), (), "verified"),
    "helper gives back the last tile twice": (PKG_DELAYED, (), ("rejected", "[release-without-wait]")),
    "indices leave i32": (PKG_WRAP, (), ("bounded", "outside i32")),
    "indices in i32, N=4": (PKG_WRAP, ("N=4",), "verified"),
    "indices leave i32, N=5": (PKG_WRAP, ("N=5",), ("bounded", "2147483648")),
}


@pytest.mark.parametrize("name", list(CASES))
def test_kernel(tmp_path, capsys, name):
    text, params, expect = CASES[name]
    path = tmp_path / "kernel.py"
    path.write_text(text)
    check(capsys, path, params, expect)


@pytest.mark.parametrize("name", list(PACKAGE_CASES))
def test_kernel_with_helpers_of_another_module(tmp_path, capsys, name):
    text, params, expect = PACKAGE_CASES[name]
    pkg = tmp_path / "adv_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "helpers.py").write_text(HEAD + HELPERS)
    path = pkg / "kernel.py"
    path.write_text(text)
    check(capsys, path, params, expect)


def test_the_divided_counts_differ_on_the_gpu():
    """What the first fix rests on: at TOPK = 3 Triton computes `(TOPK - 1000) // 8` on a
    constexpr with Python's floor division and on a runtime value with C's truncation."""
    import ast

    from tle_compiler.frontend.scope import fold_int

    assert (3 - 1000) // 8 == -125
    assert fold_int(ast.FloorDiv(), 3 - 1000, 8, True) == -124


def test_the_one_line_loads_are_two_params(tmp_path):
    from tle_compiler.frontend import read_file

    path = tmp_path / "kernel.py"
    path.write_text(LOADED_COUNT.replace("PROLOGUE", LOADED["one line"]))
    (program,) = read_file(path).kernels
    assert len(program.params) == 2, program.params
