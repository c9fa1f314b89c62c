"""A fourth set of kernels written to hang or race where a verifier might look away, their safe
twins, and tle-dump's exit codes on input that is not a plain kernel.

The areas: the cutoff theorem (faults that appear only beyond a constant: a reader that stops
after 500 tiles, an extra tile when N > 300, a gap in the middle of a long loop, trip counts that
differ past 100 or 1000, a modulus of 5000, two params that must both be large; a writer that
drains its return pipe 300 iterations late; ring indices that skip half of every lap, which only
the phase rule sees); named-barrier pipes (a hand-off that stops after 100 uses, two named pipes
in opposite directions, each side arriving before it syncs, a chain through a third partition,
a named pipe's release as the only hop, hand-offs waited two at a time, the pipes driven from
helpers); and the command line (syntax errors, files without kernels, unknown kernels, --param
mistakes, several kernels of different verdicts, JSON against the text verdict).

One false "verified" was found and fixed with this file (tle_compiler/passes/sweep.py): a kernel
whose derived param is computed through an i32 product that wraps (`M = (N * 2**28) // 2**28`,
-8 on the GPU at N = 8, where the check counts 8) was "verified for every value of N (0 <= N <=
20)" when its independent check found a fault no base value gives and the search then covered
the finite domain: the i32 check of the values covered looked at the independent values, not at
the base values the proof rests on, so it never evaluated the definition. With `--param N=8` the
same kernel was already "bounded".
"""

from __future__ import annotations

import json
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


def dump(capsys, path: Path, *args: str) -> tuple[int, str, str]:
    code = tle_dump([*args, str(path)])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def check(capsys, path: Path, params: tuple, expect) -> None:
    code, out, err = dump(capsys, path, "-q", *[a for p in params for a in ("--param", p)])
    text = out + err
    if expect == "verified":
        assert code == 0, text
        assert ": verified for " in err, text
        return
    kind, *whats = expect
    assert ": verified for " not in text, text
    if kind == "rejected":
        assert code == 1, text
    else:  # "bounded" / "unknown": nothing claimed beyond the values named
        assert code == 3, text
        assert f": {kind}: " in err, text
    for what in whats:
        assert what in err, text


def _run(tmp_path, capsys, text, params, expect):
    path = tmp_path / "kernel.py"
    path.write_text(text)
    check(capsys, path, params, expect)


# ----------------------------------------------------------------------------- the cutoff theorem

# A ring of capacity 2; the writer's loop WLOOP with its events under WIF, the reader's RLOOP and
# RIF (`if True:` when unconditional), an EXTRA block after the writer's loop.
RING = """
@tle.jit
def k(x_ptr, y_ptr, N, M):
    tle.assume(N >= 0)
    tle.assume(M >= 0)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N, M)), (consume, (kv, y_ptr, N, M))], [4], [232])


def produce(kv, x_ptr, N, M):
    w = kv.writer()
    for p in range(WLOOP):
        if WIF:
            slot = w.acquire(p)
            tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + tl.arange(0, 64)))
            w.commit(p)
EXTRA

def consume(kv, y_ptr, N, M):
    r = kv.reader()
    for p in range(RLOOP):
        if RIF:
            res = r.wait(p)
            t = tl.load(tle.gpu.local_ptr(res.slot.tile))
            r.release(p)
            tl.store(y_ptr + tl.arange(0, 64), t)
"""
_EXTRA_TILE = """\
    if COND:
        slot = w.acquire(N)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + tl.arange(0, 64)))
        w.commit(N)
"""


def ring(wloop="N", wif="True", rloop="N", rif="True", extra="") -> str:
    return src(RING.replace("WLOOP", wloop).replace("WIF", wif).replace("RLOOP", rloop)
               .replace("RIF", rif).replace("EXTRA", extra))


def extra_tile(cond: str) -> str:
    return ring(extra=_EXTRA_TILE.replace("COND", cond))


# W streams `a` to R and drains the `b` tiles R sends back LAG iterations later; R forwards each
# tile of `a` into `b`. With a lag beyond the two rings' capacities both block.
LAGGED = """
@tle.jit
def k(x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    a = tle.pipe(capacity=2, t=tle.gpu.alloc([2, 64], tl.float32))
    b = tle.pipe(capacity=2, t=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(w, (a, b, x_ptr, y_ptr, N)), (r, (a, b, N))], [4], [232])


def w(a, b, x_ptr, y_ptr, N):
    wa = a.writer()
    rb = b.reader()
    for p in range(N + LAG):
        if p < N:
            s = wa.acquire(p)
            tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + tl.arange(0, 64)))
            wa.commit(p)
        if p >= LAG:
            res = rb.wait(p - LAG)
            tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.t)))
            rb.release(p - LAG)


def r(a, b, N):
    ra = a.reader()
    wb = b.writer()
    for p in range(N):
        res = ra.wait(p)
        v = tl.load(tle.gpu.local_ptr(res.slot.t))
        ra.release(p)
        s = wb.acquire(p)
        tl.store(tle.gpu.local_ptr(s.t), v)
        wb.commit(p)
"""

# Items of NP tiles, of which both partitions use the first USED: `r * NP + q` on a ring of 2.
# With NP = 4 and USED = 2, stage 0 gets 0, 4, 8, ...: every use at phase 0, which a parity wait
# cannot tell apart (the reader's wait of 4 passes on the completion of 0's phase)
ITEMS = """
@tle.jit
def k(x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, y_ptr, N))], [4], [232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    for r0 in range(N):
        for q in range(USED):
            slot = w.acquire(r0 * NP + q)
            tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + tl.arange(0, 64)))
            w.commit(r0 * NP + q)


def consume(kv, y_ptr, N):
    r = kv.reader()
    for r0 in range(N):
        for q in range(USED):
            res = r.wait(r0 * NP + q)
            t = tl.load(tle.gpu.local_ptr(res.slot.tile))
            r.release(r0 * NP + q)
            tl.store(y_ptr + tl.arange(0, 64), t)
"""


def items(np_: int, used: int) -> str:
    return src(ITEMS.replace("NP", str(np_)).replace("USED", str(used)))


CUTOFF_CASES = {
    "both loops over N": (ring(), (), "verified"),
    "reader stops after 500 tiles": (ring(rif="p < 500"), (), ("rejected", "[unconsumed]", "N=501")),
    "an extra tile when N > 300": (extra_tile("N > 300"), (), ("rejected", "[unconsumed]", "N=301")),
    # the writer skips the tiles 501 .. N - 501, which exist only from N = 1002 on
    "writer skips the middle of a long loop": (ring(wif="p <= 500 or p >= N - 500"), (),
                                               ("rejected", "N=1002")),
    "reader stops at tl.minimum(N, 100)": (ring(rloop="tl.minimum(N, 100)"), (),
                                           ("rejected", "[unconsumed]", "N=101")),
    "reader loops N - N // 1000 times": (ring(rloop="N - N // 1000"), (),
                                         ("rejected", "[unconsumed]", "N=1000")),
    # the first N it differs at is 100000: far beyond what the witness search reaches
    "reader loops N - N // 100000 times": (ring(rloop="N - N // 100000"), (), ("unknown",)),
    # a period of 5000 makes the theorem's values too many to check within the budget
    "an extra tile when N % 5000 == 4999": (extra_tile("N % 5000 == 4999"), (), ("unknown",)),
    "a condition at slope 2": (ring(rif="2 * p < N + 1000"), (),
                               ("bounded", "outside the fragment", "2*p < N + 1000")),
    "an extra tile when N and M pass 100": (extra_tile("N > 100 and M > 100"), (),
                                            ("bounded", "2 free params")),
    "an extra tile when N and M pass 100, M=200": (extra_tile("N > 100 and M > 100"), ("M=200",),
                                                   ("rejected", "[unconsumed]", "N=101")),
    "reader stops at tl.minimum(N, M), M=200": (ring(rloop="tl.minimum(N, M)"), ("M=200",),
                                                ("bounded", "needs derived values")),
    "return pipe drained one iteration late": (src(LAGGED.replace("LAG", "1")), (), "verified"),
    "return pipe drained 300 iterations late": (src(LAGGED.replace("LAG", "300")), (),
                                                ("rejected", "[deadlock]")),
    "every tile of every item": (items(4, 4), (), "verified"),
    "half of every item on a ring of two": (items(4, 2), (), ("rejected", "[phase-aliasing]")),
    "four of every six on a ring of two": (items(6, 4), (), ("rejected", "[phase-aliasing]")),
}


@pytest.mark.parametrize("name", list(CUTOFF_CASES))
def test_cutoff(tmp_path, capsys, name):
    _run(tmp_path, capsys, *CUTOFF_CASES[name])


def test_the_verdict_names_the_constants_the_theorem_gives(tmp_path, capsys):
    """Capacity 2, slope 1, no offsets or thresholds, two partitions: L = 2C = 4, lag L + 1 = 5,
    N0 = (T + lag) * 2 + P (lag + L) + 3 lag + L = 12 + 18 + 15 + 4 = 49; the check covers
    [A, A + 2L) = [49, 56]."""
    path = tmp_path / "kernel.py"
    path.write_text(ring())
    code, out, _ = dump(capsys, path, "-q", "--format", "json", "-o", str(tmp_path / "r.json"))
    assert code == 0
    (kernel,) = json.loads((tmp_path / "r.json").read_text())["kernels"]
    assert kernel["argument"] == "cutoff theorem, docs/semantics.md: N0 = 49, L = 4, lag 5"
    assert kernel["checked"] == {"N": "[0, 56]"}


# ----------------------------------------------------------------------------- named-barrier pipes

# x: named, wr -> rd; y: rd -> wr (capacity 1, barrier YBAR) carries the hop. Every use, rd
# releases x(p) and then sends y(p); wr waits y(p) before it acquires x(p + 1).
NAMED = """
@tle.jit
def k(a_ptr, out_ptr, N):
    tle.assume(N >= 0)
    x = tle.pipe(capacity=1, barrier="named", m=tle.gpu.alloc([1, 64], tl.float32))
    y = tle.pipe(capacity=1, barrier="YBAR", v=tle.gpu.alloc([1, 64], tl.float32))
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
        if WCOND:
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
        if RCOND:
            s = wy.acquire(p)
            tl.store(tle.gpu.local_ptr(s.v), a)
            wy.commit(p)
"""


def named(ybar="mbarrier", wcond="True", rcond="True", *edits) -> str:
    return src(NAMED.replace("YBAR", ybar).replace("WCOND", wcond).replace("RCOND", rcond), *edits)


_RD_BODY = """\
        res = rx.wait(p)
        a = tl.load(tle.gpu.local_ptr(res.slot.m))
        rx.release(p)
        if True:
            s = wy.acquire(p)
            tl.store(tle.gpu.local_ptr(s.v), a)
            wy.commit(p)
"""
# rd sends y(p) (a copy of its previous tile) before it waits x(p)
_RD_SENDS_FIRST = """\
        s = wy.acquire(p)
        tl.store(tle.gpu.local_ptr(s.v), tl.load(a_ptr + offs))
        wy.commit(p)
        res = rx.wait(p)
        a = tl.load(tle.gpu.local_ptr(res.slot.m))
        rx.release(p)
"""

# x and z named wr -> rd, both read in every use; rd releases x first, then z: the release of z
# (which emits nothing) is the only event of rd after its release of x
NAMED_PAIR = """
@tle.jit
def k(a_ptr, out_ptr, N):
    tle.assume(N >= 0)
    x = tle.pipe(capacity=1, barrier="named", m=tle.gpu.alloc([1, 64], tl.float32))
    z = tle.pipe(capacity=1, barrier="named", m=tle.gpu.alloc([1, 64], tl.float32))
    tle.gpu.warp_specialize([(wr, (x, z, a_ptr, N)), (rd, (x, z, out_ptr, N))], [4], [232])


def wr(x, z, a_ptr, N):
    offs = tl.arange(0, 64)
    wx = x.writer()
    wz = z.writer()
    for p in range(N):
        s = wz.acquire(p)
        tl.store(tle.gpu.local_ptr(s.m), tl.load(a_ptr + offs))
        wz.commit(p)
        s2 = wx.acquire(p)
        tl.store(tle.gpu.local_ptr(s2.m), tl.load(a_ptr + offs))
        wx.commit(p)


def rd(x, z, out_ptr, N):
    offs = tl.arange(0, 64)
    rx = x.reader()
    rz = z.reader()
    for p in range(N):
        res = rx.wait(p)
        res2 = rz.wait(p)
        v = tl.load(tle.gpu.local_ptr(res.slot.m)) + tl.load(tle.gpu.local_ptr(res2.slot.m))
        rx.release(p)
        rz.release(p)
        tl.store(out_ptr + offs, v)
"""

# x named a -> b; b forwards each use to c through y, c acknowledges to a through z: every
# release of x is ordered before a's next acquire, but through c (two hops)
NAMED_CHAIN = """
@tle.jit
def k(a_ptr, out_ptr, N):
    tle.assume(N >= 0)
    x = tle.pipe(capacity=1, barrier="named", m=tle.gpu.alloc([1, 64], tl.float32))
    y = tle.pipe(capacity=1, m=tle.gpu.alloc([1, 64], tl.float32))
    z = tle.pipe(capacity=1, m=tle.gpu.alloc([1, 64], tl.float32))
    tle.gpu.warp_specialize([(pa, (x, z, a_ptr, out_ptr, N)), (pb, (x, y, N)), (pc, (y, z, N))],
                            [4, 4], [232, 232])


def pa(x, z, a_ptr, out_ptr, N):
    offs = tl.arange(0, 64)
    wx = x.writer()
    rz = z.reader()
    for p in range(N):
        s = wx.acquire(p)
        tl.store(tle.gpu.local_ptr(s.m), tl.load(a_ptr + offs))
        wx.commit(p)
        res = rz.wait(p)
        tl.store(out_ptr + offs, tl.load(tle.gpu.local_ptr(res.slot.m)))
        rz.release(p)


def pb(x, y, N):
    rx = x.reader()
    wy = y.writer()
    for p in range(N):
        res = rx.wait(p)
        v = tl.load(tle.gpu.local_ptr(res.slot.m))
        rx.release(p)
        s = wy.acquire(p)
        tl.store(tle.gpu.local_ptr(s.m), v)
        wy.commit(p)


def pc(y, z, N):
    ry = y.reader()
    wz = z.writer()
    for p in range(N):
        res = ry.wait(p)
        v = tl.load(tle.gpu.local_ptr(res.slot.m))
        ry.release(p)
        s = wz.acquire(p)
        tl.store(tle.gpu.local_ptr(s.m), v)
        wz.commit(p)
"""

_WR_WAIT = """\
        if True:
            res = ry.wait(p)
            tl.store(out_ptr + offs, tl.load(tle.gpu.local_ptr(res.slot.v)))
            ry.release(p)
"""
# wr drains y two uses at a time, after odd uses (y of capacity 2): after an even use it acquires
# x again with nothing from rd since its last release
_WR_WAIT_PAIRS = """\
        if p % 2 == 1:
            for q in range(p - 1, p + 1):
                res = ry.wait(q)
                tl.store(out_ptr + offs, tl.load(tle.gpu.local_ptr(res.slot.v)))
                ry.release(q)
    if N % 2 == 1:
        res = ry.wait(N - 1)
        tl.store(out_ptr + offs, tl.load(tle.gpu.local_ptr(res.slot.v)))
        ry.release(N - 1)
"""
_HELPERS = """

def take(ry, out_ptr, offs, p):
    res = ry.wait(p)
    tl.store(out_ptr + offs, tl.load(tle.gpu.local_ptr(res.slot.v)))
    ry.release(p)


def give(wy, a, p):
    s = wy.acquire(p)
    tl.store(tle.gpu.local_ptr(s.v), a)
    wy.commit(p)
"""

NAMED_CASES = {
    "exchange": (named(), (), "verified"),
    # the return pipe named too: each direction's release is implied by the other's commit
    "two named pipes in opposite directions": (named("named"), (), "verified"),
    "two named pipes, rd arrives before it syncs": (
        named("named", "True", "True", (_RD_BODY, _RD_SENDS_FIRST)), (),
        ("rejected", "[named-release]")),
    "hand-off only in the first 100 uses": (named("mbarrier", "p < 100", "p < 100"), (),
                                            ("rejected", "[named-release]", "N=102")),
    "hand-off only in the first 100 uses, N=100": (named("mbarrier", "p < 100", "p < 100"),
                                                   ("N=100",), "verified"),
    "hand-offs waited two at a time": (
        named("mbarrier", "True", "True", (_WR_WAIT, _WR_WAIT_PAIRS),
              ('y = tle.pipe(capacity=1, barrier="mbarrier", v=tle.gpu.alloc([1, 64]',
               'y = tle.pipe(capacity=2, barrier="mbarrier", v=tle.gpu.alloc([2, 64]')),
        (), ("rejected", "[named-release]")),
    "hand-offs through helpers": (
        named("mbarrier", "True", "True",
              (_WR_WAIT, "        take(ry, out_ptr, offs, p)\n"),
              (_RD_BODY.split("        if True:\n")[1], ""),
              ("        rx.release(p)\n        if True:\n",
               "        rx.release(p)\n        give(wy, a, p)\n")) + _HELPERS,
        (), "verified"),
    "a named pipe's release as the only hop": (src(NAMED_PAIR), (), ("rejected", "[named-release]")),
    "the hop through a third partition": (src(NAMED_CHAIN), (), ("rejected", "[named-release]")),
}


@pytest.mark.parametrize("name", list(NAMED_CASES))
def test_named_barrier_pipes(tmp_path, capsys, name):
    _run(tmp_path, capsys, *NAMED_CASES[name])


# ----------------------------------------------------------------------------- i32 of derived params

WRAPPED = """
@tle.jit
def k(x_ptr, y_ptr, N):
    tle.assume(0 <= N <= 20)
    M = (N * FACTOR) // FACTOR
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, y_ptr, M))], [4], [232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    for p in range(N):
        slot = w.acquire(p)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + p * 64 + tl.arange(0, 64)))
        w.commit(p)


def consume(kv, y_ptr, M):
    r = kv.reader()
    for p in range(M):
        res = r.wait(p)
        t = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(p)
        tl.store(y_ptr + p * 64 + tl.arange(0, 64), t)
"""

WRAP_CASES = {
    # N * 2**28 leaves i32 from N = 8 on: M is -8 on the GPU at N = 8, the reader waits nothing
    # and the writer blocks on its third acquire
    "a derived param through a product that wraps": (
        src(WRAPPED.replace("FACTOR", "268435456")), (),
        ("bounded", "only for N in [0, 7]", "at N=8", "is 2147483648, outside i32")),
    "the same at N=8": (src(WRAPPED.replace("FACTOR", "268435456")), ("N=8",),
                        ("bounded", "outside i32")),
    "a derived param through a product that stays in i32": (src(WRAPPED.replace("FACTOR", "4")),
                                                            (), "verified"),
    "the same unbounded": (src(WRAPPED.replace("FACTOR", "268435456").replace(
        "tle.assume(0 <= N <= 20)", "tle.assume(N >= 0)")), (), ("bounded", "outside i32")),
}


@pytest.mark.parametrize("name", list(WRAP_CASES))
def test_derived_params_in_i32(tmp_path, capsys, name):
    _run(tmp_path, capsys, *WRAP_CASES[name])


# ----------------------------------------------------------------------------- the command line

def _two_kernels(second_rif: str, second_extra: str = "") -> str:
    """The verified ring as `k`, and a second kernel `k2` with its own partitions."""
    second = RING.replace("def k(", "def k2(").replace("produce", "produce2").replace(
        "consume", "consume2").replace("WLOOP", "N").replace("WIF", "True").replace(
        "RLOOP", "N").replace("RIF", second_rif).replace("EXTRA", second_extra)
    return ring() + "\n" + textwrap.dedent(second)


def test_a_syntax_error_is_unusable_input(tmp_path, capsys):
    path = tmp_path / "kernel.py"
    path.write_text(ring().replace("def consume(", "def consume(:"))
    code, out, err = dump(capsys, path, "--format", "json")
    assert code == 2, err
    assert "Python syntax error" in err
    assert json.loads(out)["exit_code"] == 2 and "syntax error" in json.loads(out)["error"]


def test_a_file_without_kernels_is_unusable_input(tmp_path, capsys):
    path = tmp_path / "kernel.py"
    path.write_text(HEAD + "@tle.jit\ndef k(x):\n    pass\n")
    code, _, err = dump(capsys, path, "-q")
    assert code == 2 and "no @tle.jit kernel that calls tle.gpu.warp_specialize" in err, err


def test_an_unknown_kernel_name_is_unusable_input(tmp_path, capsys):
    path = tmp_path / "kernel.py"
    path.write_text(ring())
    code, _, err = dump(capsys, path, "-q", "--kernel", "nope")
    assert code == 2 and "no kernel named nope" in err and ": verified for " not in err, err


@pytest.mark.parametrize("params,code,what", [
    (("N=1", "N=1"), 0, ": verified for N = 1:"),  # the same value twice is one value
    (("N=1", "N=2"), 2, "--param N given twice (1 and 2)"),
    (("Q=1",), 2, "--param Q: no such param (known: N)"),
    (("N=1.5",), 2, "--param expects NAME=INTEGER"),
    (("N",), 2, "--param expects NAME=INTEGER"),
    (("N=-1",), 2, "--param N=-1 is outside the domain of N (N >= 0)"),
])
def test_param_mistakes(tmp_path, capsys, params, code, what):
    path = tmp_path / "kernel.py"
    path.write_text(ring())
    got, _, err = dump(capsys, path, "-q", *[a for p in params for a in ("--param", p)])
    assert got == code and what in err, err


def _summaries(err: str) -> dict[str, str]:
    return {ln.split(": ", 2)[1]: ln.split(": ", 2)[2] for ln in err.splitlines()
            if ln.startswith("tle-dump: k")}


@pytest.mark.parametrize("second,code,kinds", [
    # k verified, k2 bounded (a condition outside the fragment): not proved, 3
    ("2 * p < N + 1000", 3, {"k": "proved", "k2": "bounded"}),
    # k verified, k2 rejected (an extra tile nobody waits): 1
    ("True", 1, {"k": "proved", "k2": "rejected"}),
])
def test_two_kernels_the_worst_verdict_wins_in_text_and_json(tmp_path, capsys, second, code, kinds):
    path = tmp_path / "kernel.py"
    extra = "" if second != "True" else _EXTRA_TILE.replace("COND", "N > 3")
    path.write_text(_two_kernels(second, extra))
    got, out, err = dump(capsys, path, "--format", "json")
    assert got == code, err
    doc = json.loads(out)
    assert doc["exit_code"] == code
    by_name = {k["name"]: k for k in doc["kernels"]}
    assert {n: k["verdict"] for n, k in by_name.items()} == kinds
    summaries = _summaries(err)
    for name, k in by_name.items():
        assert k["verified"] == (k["verdict"] == "proved")
        assert summaries[name].startswith(k["summary"]), (summaries[name], k["summary"])
        assert k["exit_code"] == {"proved": 0, "rejected": 1, "bounded": 3}[k["verdict"]]
    # one kernel asked for by name: its own verdict alone
    got, _, err = dump(capsys, path, "-q", "--kernel", "k")
    assert got == 0 and ": verified for " in err, err


def test_a_bounded_kernel_never_exits_0(tmp_path, capsys):
    path = tmp_path / "kernel.py"
    path.write_text(ring())
    code, out, err = dump(capsys, path, "--format", "json", "--bound", "3")
    assert code == 3 and ": bounded: " in err and ": verified for " not in err, err
    (kernel,) = json.loads(out)["kernels"]
    assert kernel["verdict"] == "bounded" and kernel["verified"] is False
    assert kernel["checked"] == {"N": "[0, 3]"}


def test_a_deadlock_without_verify_deadlock_claims_nothing(tmp_path, capsys):
    """Documented (tle-dump --help): a pipeline without verify-deadlock gives no verdict and exits
    0 when it finds no error; it must not say "verified"."""
    path = tmp_path / "kernel.py"
    path.write_text(src(LAGGED.replace("LAG", "300")))
    code, _, err = dump(capsys, path, "-q", "-p", "verify-protocol")
    assert code == 0 and ": not verified (ran verify-protocol; no claim is made" in err, err
    code, _, err = dump(capsys, path, "-q")
    assert code == 1 and "[deadlock]" in err, err
