"""A fifty-second adversarial round (adversarial round 52), aimed at the features where what is
verified and what is lowered may part: eager publish (``@tle.jit(eager_publish=True)``: per-thread
release arrives, counts scaled by the arriving threads, row vectors laundered through a commit's
arrive), ``wgmma_pipeline=True`` loops, ``tle.gpu.scale_rows``, TMA copies into pipe slots,
``barrier="named"`` pipes, one-shot pipes and close. Each case is a small kernel written to
tmp_path and read by tle-dump's main(); a verified one is lowered and its generated Gluon's
barrier operations are compared with the verified events (tests/adversarial_oracles.py), and an
eager one's arrive counts with the threads that arrive (:func:`eager_count_problems`, which the
event comparison does not look at: it sees which barrier an arrive hits, not how many threads).

Bugs found, one line each (before the fixes that came with this file):

- ``tle.gpu.scale_rows(acc, f)`` of an fp32 wgmma accumulator and a float64 factor was lowered to
  the float32 lazy helper, the factor rounded to fp32 first (``_tle_scale_rows_lazy32(acc,
  f[:, None].to(gl.float32))``), while Triton's ``acc * f[:, None]`` promotes to float64: the
  kernel stored fp32-rounded products (and a float32 tile where the source has a float64 one);
  FIXED: the lazy helper is taken only where the product, as Triton promotes it, is of x's type
  (fp32; lowering/translate.py ``_scale_rows``), so a float64 factor gets the plain float64
  multiply (and a bf16 tile times a float32 factor, a float32 product, keeps it too).

Checked and held (each pinned below): eager publish with partitions of different warps (an 8-warp
default writer and a 4-warp reader, cp.async gathers and a closed flag: eager-mixed, 2 x 256
arrives; an 8-warp wgmma consumer committing row maxima to a 4-warp partition, pipelined with a
delayed release, its row vectors laundered through the arrive; a helper doing the pipe verbs for
partitions of 8 and 2 warps; broadcast readers of equal warps (one count of 2 x their threads)
and of unequal warps (the elected arrive kept); a TMA-filled group beside a register-stored one,
closed, with a reader view of the TMA field alone: the TMA group keeps its elected expect-tx
arrive); a named pipe whose release is implied by a commit of a TMA-filled pipe or of a one-shot
pipe (eager); pipelined wgmmas in a ``static_range`` body that release the previous unrolled
copy's slot (retired at the unrolled back-edge); a slot value carried to the next iteration for a
wgmma to read (refused: which slot is unknown); a TMA copy under a constexpr ``if`` (the reading
specialised to the DEFAULT_CONFIG value, verified for it).

Tried and held, not pinned: eager arrives of 1-warp partitions; TMA copies spelled through a
helper, by keyword, into ``w.acquire(i).t`` inline, through a tuple, with the window's index
written ``i + 1 - 1``, ``0 + i``, ``i * 1`` or through ``j = i`` (each verified, its commit
expecting the copy's bytes), into a 1-D field; wgmma B operands spelled ``.T``, ``tl.trans(x, 1,
0)`` and ``x.trans()`` (both proxy fences emitted); a scale_rows read of a carried in-flight
accumulator (waited first); registers under ``@tle.jit`` budgets that leave the default partition
more than 256 (Triton sets it 256) and under ``maxnreg`` (Triton balances the setmaxnreg pool
itself, so no setmaxnreg.inc waits forever).
"""

from __future__ import annotations

import re

import pytest

from tle_compiler.diagnostics import TleVerificationWarning

from .adversarial_oracles import lowers_to_its_events
from .adversarial_support import dump, expect, write_kernel

pytestmark = pytest.mark.filterwarnings(f"ignore::{TleVerificationWarning.__module__}."
                                        f"{TleVerificationWarning.__name__}")

HEAD = "import triton.language as tl\n\nimport tle_compiler as tle\n\n"


def verified(tmp_path, capsys, text: str, name: str = "kernel.py"):
    """The kernel file ``text`` verified by tle-dump and lowered to exactly its verified events;
    its path."""
    code, err = dump(tmp_path, capsys, text, name=name)
    expect(code, err, "verified")
    path = tmp_path / name
    lowers_to_its_events(path)
    return path


def eager_count_problems(path, constexprs=None) -> list[str]:
    """How the per-thread arrives of kernel ``k``'s eager barrier arrays break their init counts:
    every arrive on such an array is a per-thread one (``_tle_arrive_w<W>`` with W the warps of
    the function that calls it, or ``_tle_arrive_x``), and each array's init count is the
    arriving partitions x 32 x their warps (twice that for eager-mixed: each thread also arrives
    for its cp.async copies). Also the number of eager arrays, so a test can tell the option
    took effect."""
    from tle_compiler.lowering import gluon_source

    gen = gluon_source((str(path), "k"), constexprs)
    problems = []
    arrivals: dict[str, set] = {}  # barrier array -> {(function, warps)}; -1: an elected arrive
    for fn in re.split(r"\n@gluon\.jit\n", gen.source):
        m = re.match(r"def (\w+)\(.*\):\n    # partition '\w+': (\d+) warps", fn)
        if not m:
            continue
        name, warps = m.group(1), int(m.group(2))
        for a in re.finditer(r"_tle_arrive_(w(\d+)|x)\(_TLE_OFF_(\w+) ", fn):
            if a.group(2) and int(a.group(2)) != warps:
                problems.append(f"{name} ({warps} warps) arrives by _tle_arrive_{a.group(1)} on "
                                f"{a.group(3)}")
            arrivals.setdefault(a.group(3), set()).add((name, warps))
        for a in re.finditer(r"mbarrier\.arrive\((\w+)\.index", fn):
            arrivals.setdefault(a.group(1), set()).add((name, -1))
    eager = [a for pp in gen.plans.values() for a in pp.arrays if a.mode.startswith("eager")]
    for arr in eager:
        who = arrivals.get(arr.var, set())
        ws = {w for _, w in who}
        if len(ws) != 1 or -1 in ws:
            problems.append(f"{arr.var} ({arr.mode}): arrived on by {sorted(who)}")
            continue
        per_phase = len(who) * 32 * ws.pop() * (2 if arr.mode == "eager-mixed" else 1)
        if any(c != per_phase for c in arr.init_counts):
            problems.append(f"{arr.var} ({arr.mode}): init count {arr.init_counts}, "
                            f"{per_phase} arrives a phase")
    return problems + [f"eager arrays: {len(eager)}"]


def eager_counts_agree(path, arrays: int, constexprs=None) -> None:
    assert eager_count_problems(path, constexprs) == [f"eager arrays: {arrays}"]


# ------------------------------------------------------------------ scale_rows' factor type

ATTEND = HEAD + '''BM = tl.constexpr(64)
BN = tl.constexpr(64)
D = tl.constexpr(64)


@tle.jit(num_warps=4, eager_publish=True, wgmma_pipeline=True)
def k(q_ptr, k_ptr, v_ptr, o_ptr, m_ptr, NT):
    q = tle.pipe(capacity=1, one_shot=True, q=tle.gpu.alloc([1, BM, D], tl.bfloat16))
    kv = tle.pipe(capacity=2, k=tle.gpu.alloc([2, BN, D], tl.bfloat16),
                  v=tle.gpu.alloc([2, BN, D], tl.bfloat16))
    st = tle.pipe(capacity=2, m=tle.gpu.alloc([2, BM], tl.float32))
    tle.gpu.warp_specialize([(loader, (q, kv, q_ptr, k_ptr, v_ptr, NT)),
                             (attend, (q, kv, st, o_ptr, NT)),
                             (stats, (st, m_ptr, NT))],
                            [WARPS], [REGS])


def loader(q, kv, q_ptr, k_ptr, v_ptr, NT):
    tile = tl.arange(0, BN)[:, None] * D + tl.arange(0, D)[None, :]
    qw = q.writer()
    slot = qw.acquire(0)
    tl.store(tle.gpu.local_ptr(slot.q), tl.load(q_ptr + tile))
    qw.commit(0)
    w = kv.writer()
    for t in range(NT):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.k), tl.load(k_ptr + t * BN * D + tile))
        tl.store(tle.gpu.local_ptr(slot.v), tl.load(v_ptr + t * BN * D + tile))
        w.commit(t)


def attend(q, kv, st, o_ptr, NT):
    qr = q.reader()
    r = kv.reader()
    sw = st.writer()
    qres = qr.wait(0)
    m_i = tl.full([BM], float("-inf"), tl.float32)
    l_i = tl.zeros([BM], tl.float32)
    acc = tl.zeros([BM, D], tl.float32)
    for t in range(NT):
        res = r.wait(t)
        s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q)),
                   tl.trans(tl.load(tle.gpu.local_ptr(res.slot.k))))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        ss = sw.acquire(t)
        tl.store(tle.gpu.local_ptr(ss.m), m_new)
        sw.commit(t)
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = tl.dot(p.to(tl.bfloat16), tl.load(tle.gpu.local_ptr(res.slot.v)),
                     tle.gpu.scale_rows(acc, alpha))
        m_i = m_new
        if t > 0:
            r.release(t - 1)
    if NT > 0:
        r.release(NT - 1)
    out = tle.gpu.scale_rows(acc, (1.0 / l_i).to(DTYPE))
    tl.store(o_ptr + tl.arange(0, BM)[:, None] * D + tl.arange(0, D)[None, :], out)


def stats(st, m_ptr, NT):
    r = st.reader()
    for t in range(NT):
        res = r.wait(t)
        tl.store(m_ptr + t * BM + tl.arange(0, BM), tl.load(tle.gpu.local_ptr(res.slot.m)))
        r.release(t)


DEFAULT_CONFIG = {
    "signature": {"q_ptr": "*bf16", "k_ptr": "*bf16", "v_ptr": "*bf16", "o_ptr": "*OUT",
                  "m_ptr": "*fp32", "NT": "i32"},
    "constexprs": {},
    "num_warps": 4,
    "grid": (1,),
}
'''


def attend(warps: str = "4, 4", regs: str = "152, 152", dtype: str = "tl.float32") -> str:
    """An attention tile: a 4-warp loader, a wgmma consumer (pipelined, delayed release) that
    commits its row maxima to a third partition and rescales its accumulator with
    ``scale_rows``, last by ``1 / l`` as ``dtype`` into an output of that type."""
    out = {"tl.float32": "fp32", "tl.float64": "fp64"}[dtype]
    return (ATTEND.replace("WARPS", warps).replace("REGS", regs).replace("DTYPE", dtype)
            .replace("*OUT", f"*{out}"))


def _attend_fn(gluon: str) -> str:
    return gluon.split("def attend(", 1)[1].split("@gluon.jit", 1)[0]


def test_a_float64_row_factor_is_multiplied_in_float64_as_triton_promotes_it(tmp_path, capsys):
    """``acc * f[:, None]`` of an fp32 tile and an fp64 factor is an fp64 product in Triton. The
    lazy helper multiplies in fp32: it took the factor rounded to fp32 and stored fp32-rounded
    products. Now the final rescale is the plain fp64 multiply (the loop's fp32 one stays lazy)."""
    pytest.importorskip("triton.experimental.gluon")
    from tle_compiler.lowering import compile_kernel, gluon_source
    from tle_compiler.lowering.dumping import default_config

    path = verified(tmp_path, capsys, attend(dtype="tl.float64"))
    fn = _attend_fn(gluon_source((str(path), "k")).source)
    assert "out = (acc * (1.0 / l_i).to(gl.float64)[:, None])" in fn
    assert fn.count("_tle_scale_rows_lazy") == 1  # the loop's fp32 alpha
    ttgir = compile_kernel((str(path), "k"),
                           default_config(str(path), "k")["signature"]).asm["ttgir"]
    assert re.search(r"arith\.mulf .* : tensor<64x64xf64", ttgir)


def test_a_float32_row_factor_keeps_the_lazy_multiply(tmp_path, capsys):
    pytest.importorskip("triton.experimental.gluon")
    from tle_compiler.lowering import gluon_source

    path = verified(tmp_path, capsys, attend())
    fn = _attend_fn(gluon_source((str(path), "k")).source)
    assert fn.count("_tle_scale_rows_lazy32(") == 2
    assert "(1.0 / l_i).to(gl.float32)[:, None]" in fn


def test_a_16_bit_tile_scaled_by_a_float32_factor_keeps_the_plain_multiply(tmp_path, capsys):
    """``acc.to(tl.bfloat16) * f[:, None]`` is a float32 product of a bf16 tile: the float32
    helper, which takes x's registers as f32, is for float32 tiles only."""
    pytest.importorskip("triton.experimental.gluon")
    from tle_compiler.lowering import gluon_source

    text = attend().replace("out = tle.gpu.scale_rows(acc, (1.0 / l_i).to(tl.float32))",
                            "out = tle.gpu.scale_rows(acc.to(tl.bfloat16), 1.0 / l_i)")
    assert "acc.to(tl.bfloat16)" in text
    path = verified(tmp_path, capsys, text)
    fn = _attend_fn(gluon_source((str(path), "k")).source)
    assert "out = (acc.to(gl.bfloat16) * (1.0 / l_i)[:, None])" in fn


# ------------------------------------------------------------------ eager publish: warps and counts

@pytest.mark.parametrize("warps,regs", [("4, 4", "152, 152"), ("8, 4", "152, 88"),
                                        ("8, 2", "152, 88")])
def test_eager_counts_follow_the_arriving_partitions_warps(tmp_path, capsys, warps, regs):
    """The consumer (4 or 8 warps) releases kv and commits st per thread, its row vectors
    (``l_i``, ``m_i``, ``m_new``) laundered through st's arrive; the stats partition (4 or 2
    warps) releases st per thread. Each eager array's count is its arrivers' threads."""
    pytest.importorskip("triton.experimental.gluon")
    from tle_compiler.lowering import gluon_source

    path = verified(tmp_path, capsys, attend(warps, regs))
    eager_counts_agree(path, 3)  # kv.empty, st.full, st.empty
    fn = _attend_fn(gluon_source((str(path), "k")).source)
    assert re.search(r"l_i = _tle_arrive_x\(_TLE_OFF_st_full0 \+", fn)


RING = HEAD + '''BM: tl.constexpr = 64
BN = tl.constexpr(64)


@tle.jit(num_warps=8, eager_publish=True)
def k(x_ptr, out_ptr, stride_x, N_TILES):
    tle.assume(N_TILES >= 0)
    ring = tle.pipe(capacity=3, tile=tle.gpu.alloc([3, BM, BN], tl.float32))
    tle.gpu.warp_specialize([(load_tiles, (ring, x_ptr, stride_x, N_TILES)),
                             (sum_tiles, (ring, out_ptr, N_TILES))], [4], [232])


def load_tiles(ring, x_ptr, stride_x, N_TILES):
    offs_m = tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    w = ring.writer()
    for t in tl.range(0, N_TILES):
        ptrs = x_ptr + (t * BM + offs_m)[:, None] * stride_x + offs_n[None, :]
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(ptrs))
        w.commit(t)
    w.close(N_TILES)


def sum_tiles(ring, out_ptr, N_TILES):
    offs_m = tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    r = ring.reader()
    acc = tl.zeros([BM, BN], tl.float32)
    for t in range(N_TILES):
        res = r.wait(t)
        acc += tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t)
    last = r.wait(N_TILES)
    acc = tl.where(last.is_closed, acc, 0.0)
    r.release(N_TILES)
    tl.store(out_ptr + offs_m[:, None] * BN + offs_n[None, :], acc)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "out_ptr": "*fp32", "stride_x": "i32",
                                "N_TILES": "i32"}, "constexprs": {}, "num_warps": 8, "grid": (1,)}
'''


def test_an_eager_writer_of_other_warps_than_its_reader_with_gathers_and_a_close(tmp_path,
                                                                                 capsys):
    """The 8-warp default partition fills the ring by cp.async and closes it (a closed flag: the
    full barrier is eager-mixed, each of its 256 threads arriving twice); the 4-warp reader
    releases per thread (128)."""
    pytest.importorskip("triton.experimental.gluon")
    from tle_compiler.lowering import gluon_source

    path = verified(tmp_path, capsys, RING)
    eager_counts_agree(path, 2)
    src = gluon_source((str(path), "k")).source
    assert "count=512)  # ring.full[g0][0] eager-mixed = 1 x 256 threads x 2" in src
    assert "count=128)  # ring.empty[g0][0] eager = 1 x 128 threads" in src


BROADCAST = HEAD + '''

@tle.jit(num_warps=4, eager_publish=True)
def k(x_ptr, y_ptr, N):
    p = tle.pipe(capacity=2, readers=("a", "b"), tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (p, x_ptr, N)), (ca, (p, y_ptr, N)),
                             (cb, (p, y_ptr, N))], [WA, WB], [80, 80])


def produce(p, x_ptr, N):
    w = p.writer()
    for i in range(N):
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + tl.arange(0, 64)))
        w.commit(i)


def ca(p, y_ptr, N):
    r = p.reader("a")
    for i in range(N):
        res = r.wait(i)
        tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))
        r.release(i)


def cb(p, y_ptr, N):
    r = p.reader("b")
    for i in range(N):
        res = r.wait(i)
        tl.store(y_ptr + 64 + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))
        r.release(i)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"},
                  "constexprs": {}, "num_warps": 4, "grid": (1,)}
'''


@pytest.mark.parametrize("wa,wb,eager,empty", [
    (4, 4, 2, "count=256)  # p.empty[g0][0] eager = 2 x 128"),
    (8, 8, 2, "count=512)  # p.empty[g0][0] eager = 2 x 256"),
    (4, 2, 1, "count=2)  # p.empty[g0][0] partition")])
def test_broadcast_readers_release_per_thread_only_when_their_warps_agree(tmp_path, capsys, wa,
                                                                          wb, eager, empty):
    """Readers of one warp count share a per-thread count (2 x their threads); readers of
    different warp counts keep the elected arrive (one count cannot scale by two thread
    numbers)."""
    pytest.importorskip("triton.experimental.gluon")
    from tle_compiler.lowering import gluon_source

    path = verified(tmp_path, capsys, BROADCAST.replace("WA", str(wa)).replace("WB", str(wb)))
    eager_counts_agree(path, eager)
    assert empty in gluon_source((str(path), "k")).source


HELPERS = HEAD + '''

@tle.jit(num_warps=4, eager_publish=True)
def k(x_ptr, y_ptr, N):
    p = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    q = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (p, q, x_ptr, N)), (ca, (p, y_ptr, N)),
                             (cb, (q, y_ptr, N))], [8, 2], [80, 80])


def put(w, i, x_ptr):
    s = w.acquire(i)
    tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + tl.arange(0, 64)))
    w.commit(i)


def get(r, i, y_ptr):
    res = r.wait(i)
    tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))
    r.release(i)


def produce(p, q, x_ptr, N):
    w = p.writer()
    v = q.writer()
    for i in range(N):
        put(w, i, x_ptr)
        put(v, i, x_ptr)


def ca(p, y_ptr, N):
    r = p.reader()
    for i in range(N):
        get(r, i, y_ptr)


def cb(q, y_ptr, N):
    r = q.reader()
    for i in range(N):
        get(r, i, y_ptr + 64)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"},
                  "constexprs": {}, "num_warps": 4, "grid": (1,)}
'''


def test_a_helper_doing_the_verbs_for_partitions_of_8_and_2_warps(tmp_path, capsys):
    """``get`` releases p in the 8-warp reader and q in the 2-warp one: each call arrives with
    its own partition's threads (the helper is translated per call)."""
    pytest.importorskip("triton.experimental.gluon")
    path = verified(tmp_path, capsys, HELPERS)
    eager_counts_agree(path, 4)


TMA_AND_REGS = HEAD + '''BM = tl.constexpr(64)
BN = tl.constexpr(64)


@tle.jit(num_warps=8, eager_publish=True)
def k(x_desc, x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    tle.assume(N <= 1000)
    p = tle.pipe(capacity=2, readers=("a", "b"), t=tle.gpu.alloc([2, BM, BN], tl.bfloat16),
                 u=tle.gpu.alloc([2, BM], tl.float32))
    tle.gpu.warp_specialize([(fill, (p, x_desc, x_ptr, N)), (da, (p, y_ptr, N)),
                             (db, (p, y_ptr, N))], [2, 4], [80, 80])


def fill(p, x_desc, x_ptr, N):
    w = p.writer()
    for i in range(N):
        s = w.acquire(i)
        tle.gpu.tma_load(s.t, x_desc, [i * BM, 0])
        tl.store(tle.gpu.local_ptr(s.u), tl.load(x_ptr + i * BM + tl.arange(0, BM)))
        w.commit(i)
    w.close(N)


def da(p, y_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    r = p.reader("a", fields=("t",))
    for i in range(N):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.t))
        r.release(i)
        tl.store(y_ptr + i * BM * BN + offs, v.to(tl.float32))
    last = r.wait(N)
    r.release(N)


def db(p, y_ptr, N):
    r = p.reader("b")
    for i in range(N):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.u))
        w = tl.load(tle.gpu.local_ptr(res.slot.t))
        r.release(i)
        tl.store(y_ptr + 8000000 + i * BM + tl.arange(0, BM), v + tl.sum(w.to(tl.float32), 1))
    last = r.wait(N)
    r.release(N)


DEFAULT_CONFIG = {"signature": {"x_desc": "tensordesc<bf16[64, 64]>", "x_ptr": "*fp32",
                                "y_ptr": "*fp32", "N": "i32"},
                  "constexprs": {}, "num_warps": 8, "grid": (1,)}
'''


def test_a_tma_group_keeps_its_elected_expect_tx_arrive_under_eager_publish(tmp_path, capsys):
    """Group g0 = {t} (TMA, read by both readers, 2 and 4 warps) and g1 = {u} (register stores,
    read by b alone). The closed flag makes g0 tma-partition: an elected arrive and the
    expect-tx arrive (8192 bytes, 0 at the close), never per-thread; g1's full barrier and its
    empty barrier (b alone) are eager."""
    pytest.importorskip("triton.experimental.gluon")
    from tle_compiler.lowering import gluon_source

    path = verified(tmp_path, capsys, TMA_AND_REGS)
    eager_counts_agree(path, 2)
    src = gluon_source((str(path), "k")).source
    fill = src.split("def fill(", 1)[1].split("@gluon.jit", 1)[0]
    assert fill.count("mbarrier.expect(p_full0.index(") == 2
    assert "mbarrier.expect(p_full0.index(_p_s4), 0)" in fill
    assert "count=2)  # p.full[g0][0] tma-partition" in src
    assert "count=2)  # p.empty[g0][0] partition" in src  # readers of 2 and 4 warps


# ------------------------------------------------------------------ named pipes' implied releases

NAMED_TMA_HOP = HEAD + '''

@tle.jit(num_warps=4, eager_publish=EAGER)
def k(x_desc, x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    tle.assume(N <= 1000)
    X = tle.pipe(capacity=1, barrier="named", a=tle.gpu.alloc([1, 64, 64], tl.float32))
    Y = tle.pipe(capacity=2, b=tle.gpu.alloc([2, 64, 64], tl.bfloat16))
    tle.gpu.warp_specialize([(wpart, (X, Y, x_ptr, y_ptr, N)), (rpart, (X, Y, x_desc, y_ptr, N))],
                            [4], [128])


def wpart(X, Y, x_ptr, y_ptr, N):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    w = X.writer()
    r = Y.reader()
    for i in range(N):
        if i > 0:
            res = r.wait(i - 1)
            tl.store(y_ptr + offs, tl.load(tle.gpu.local_ptr(res.slot.b)))
            r.release(i - 1)
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.a), tl.load(x_ptr + i * 4096 + offs))
        w.commit(i)
    if N > 0:
        res = r.wait(N - 1)
        tl.store(y_ptr + offs, tl.load(tle.gpu.local_ptr(res.slot.b)))
        r.release(N - 1)


def rpart(X, Y, x_desc, y_ptr, N):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    r = X.reader()
    w = Y.writer()
    for i in range(N):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.a))
        r.release(i)
        s = w.acquire(i)
        tle.gpu.tma_load(s.b, x_desc, [i * 64, 0])
        w.commit(i)
        tl.store(y_ptr + 8192 + offs, v)


DEFAULT_CONFIG = {"signature": {"x_desc": "tensordesc<bf16[64, 64]>", "x_ptr": "*fp32",
                                "y_ptr": "*fp32", "N": "i32"},
                  "constexprs": {}, "num_warps": 4, "grid": (1,)}
'''


@pytest.mark.parametrize("eager", [False, True])
def test_a_named_release_implied_by_a_tma_commit(tmp_path, capsys, eager):
    """rpart's release of X(i) emits nothing; its commit of Y(i), a TMA-filled pipe (one elected
    expect-tx arrive, which Triton's shared-memory barrier pass orders after every warp's loads
    of X's slot), is the hop wpart waits for before it writes X(i + 1). With eager publish Y's
    empty barrier is per-thread; its full barrier stays elected."""
    pytest.importorskip("triton.experimental.gluon")
    from tle_compiler.lowering import gluon_source

    path = verified(tmp_path, capsys, NAMED_TMA_HOP.replace("EAGER", str(eager)))
    src = gluon_source((str(path), "k")).source
    assert "mbarrier.expect(Y_full0.index(" in src and '"named release: X"' in src
    if eager:
        eager_counts_agree(path, 1)


NAMED_ONE_SHOT_HOP = HEAD + '''

@tle.jit(num_warps=4, eager_publish=True)
def k(x_ptr, y_ptr):
    p = tle.pipe(capacity=1, barrier="named", tile=tle.gpu.alloc([1, 64], tl.float32))
    y = tle.pipe(capacity=1, one_shot=True, tok=tle.gpu.alloc([1, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (p, y, x_ptr)), (ca, (p, y, y_ptr))], [4], [80])


def produce(p, y, x_ptr):
    w = p.writer()
    ry = y.reader()
    s = w.acquire(0)
    tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + tl.arange(0, 64)))
    w.commit(0)
    res = ry.wait(0)
    v = tl.load(tle.gpu.local_ptr(res.slot.tok))
    ry.release(0)
    s = w.acquire(1)
    tl.store(tle.gpu.local_ptr(s.tile), v)
    w.commit(1)


def ca(p, y, y_ptr):
    r = p.reader()
    wy = y.writer()
    res = r.wait(0)
    v = tl.load(tle.gpu.local_ptr(res.slot.tile))
    r.release(0)
    s = wy.acquire(0)
    tl.store(tle.gpu.local_ptr(s.tok), v)
    wy.commit(0)
    res = r.wait(1)
    tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))
    r.release(1)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32"},
                  "constexprs": {}, "num_warps": 4, "grid": (1,)}
'''


def test_a_named_release_implied_by_an_eager_one_shot_commit(tmp_path, capsys):
    """ca's per-thread arrive on the one-shot y (each thread's release orders its own loads of
    the named slot) is the hop the producer waits for before its second write."""
    pytest.importorskip("triton.experimental.gluon")
    path = verified(tmp_path, capsys, NAMED_ONE_SHOT_HOP)
    eager_counts_agree(path, 1)


# ------------------------------------------------------------------ pipelined wgmma

STATIC_PAIRS = HEAD + '''BM = tl.constexpr(64)
BN = tl.constexpr(64)
D = tl.constexpr(64)


@tle.jit(num_warps=4, wgmma_pipeline=True)
def k(q_ptr, k_ptr, o_ptr, NT):
    tle.assume(NT >= 0)
    tle.assume(NT <= 1000)
    q = tle.pipe(capacity=1, one_shot=True, q=tle.gpu.alloc([1, BM, D], tl.bfloat16))
    kv = tle.pipe(capacity=2, k=tle.gpu.alloc([2, BN, D], tl.bfloat16))
    tle.gpu.warp_specialize([(loader, (q, kv, q_ptr, k_ptr, NT)),
                             (attend, (q, kv, o_ptr, NT))], [4], [232])


def loader(q, kv, q_ptr, k_ptr, NT):
    tile = tl.arange(0, BN)[:, None] * D + tl.arange(0, D)[None, :]
    qw = q.writer()
    slot = qw.acquire(0)
    tl.store(tle.gpu.local_ptr(slot.q), tl.load(q_ptr + tile))
    qw.commit(0)
    w = kv.writer()
    for t in range(NT):
        for j in tl.static_range(2):
            slot = w.acquire(2 * t + j)
            tl.store(tle.gpu.local_ptr(slot.k), tl.load(k_ptr + (2 * t + j) * BN * D + tile))
            w.commit(2 * t + j)


def attend(q, kv, o_ptr, NT):
    qr = q.reader()
    r = kv.reader()
    qres = qr.wait(0)
    acc = tl.zeros([BM, BN], tl.float32)
    for t in range(NT):
        for j in tl.static_range(2):
            res = r.wait(2 * t + j)
            acc = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q)),
                         tl.trans(tl.load(tle.gpu.local_ptr(res.slot.k))), acc)
            if j == 1:
                r.release(2 * t + j - 1)
                r.release(2 * t + j)
    tl.store(o_ptr + tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :], acc)


DEFAULT_CONFIG = {"signature": {"q_ptr": "*bf16", "k_ptr": "*bf16", "o_ptr": "*fp32",
                                "NT": "i32"}, "constexprs": {}, "num_warps": 4, "grid": (1,)}
'''


def test_a_static_range_copy_releases_the_previous_copys_slot_after_it_retired(tmp_path, capsys):
    """The stage of ``release(2t + j - 1)`` and of copy j = 1's wgmma, ``(2t + j) % 2``, differ
    by one, so that release does not wait; it is sound because the wgmma of copy j = 0, which
    read that slot, was retired at the static_range back-edge. The release of the copy's own
    slot waits."""
    pytest.importorskip("triton.experimental.gluon")
    from tle_compiler.lowering import gluon_source

    verified(tmp_path, capsys, STATIC_PAIRS)
    fn = _attend_fn(gluon_source((str(tmp_path / "kernel.py"), "k")).source)
    assert "acc = warpgroup_mma_wait(0, deps=[acc])  # loop back-edge" in fn
    assert "# kv.release: a wgmma may still read the slot" in fn


def test_a_slot_carried_to_the_next_iteration_for_a_wgmma_is_refused(tmp_path, capsys):
    """``prev = res`` at the end of the body, read by the next iteration's wgmma before
    ``release(t - 1)``: the slot's stage the lowering would tell apart from the release's is
    the iteration's own, so the read is refused where it stands."""
    text = STATIC_PAIRS.replace('''    for t in range(NT):
        for j in tl.static_range(2):
            res = r.wait(2 * t + j)
            acc = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q)),
                         tl.trans(tl.load(tle.gpu.local_ptr(res.slot.k))), acc)
            if j == 1:
                r.release(2 * t + j - 1)
                r.release(2 * t + j)
''', '''    prev = r.wait(0)
    for t in range(1, 2 * NT):
        res = r.wait(t)
        acc = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q)),
                     tl.trans(tl.load(tle.gpu.local_ptr(prev.slot.k))), acc)
        r.release(t - 1)
        prev = res
    if NT > 0:
        r.release(2 * NT - 1)
''')
    assert "prev = res" in text
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, ("rejected", "cannot tell which slot", "[unknown-slot]"))


# ------------------------------------------------------------------ TMA under a constexpr

TMA_CONSTEXPR = HEAD + '''BM = tl.constexpr(64)
BN = tl.constexpr(64)


@tle.jit(num_warps=4, eager_publish=True)
def k(x_desc, y_ptr, N, USE: tl.constexpr):
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, BM, BN], tl.bfloat16))
    tle.gpu.warp_specialize([(fill, (p, x_desc, y_ptr, N, USE)), (drain, (p, y_ptr, N))], [4],
                            [232])


def fill(p, x_desc, y_ptr, N, USE: tl.constexpr):
    w = p.writer()
    for i in range(N):
        s = w.acquire(i)
        if USE:
            tle.gpu.tma_load(s.t, x_desc, [i * BM, 0])
        else:
            tl.store(tle.gpu.local_ptr(s.t), tl.load(y_ptr + tl.arange(0, BM)[:, None] * BN
                                                     + tl.arange(0, BN)[None, :]))
        w.commit(i)


def drain(p, y_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    r = p.reader()
    for i in range(N):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.t))
        r.release(i)
        tl.store(y_ptr + i * BM * BN + offs, v)


DEFAULT_CONFIG = {"signature": {"x_desc": "tensordesc<bf16[64, 64]>", "y_ptr": "*bf16",
                                "N": "i32"}, "constexprs": {"USE": 1}, "num_warps": 4,
                  "grid": (1,)}
'''


def test_a_tma_copy_under_a_constexpr_if_is_verified_for_the_configured_value(tmp_path, capsys):
    """Read specialised to USE = 1 (said in the verdict): the copy stands in its window, the
    commit expects its bytes, and eager publish leaves the TMA group's full barrier elected."""
    pytest.importorskip("triton.experimental.gluon")
    from tle_compiler.lowering import gluon_source

    code, err = dump(tmp_path, capsys, TMA_CONSTEXPR)
    expect(code, err, "verified")
    assert "read specialised to USE=1" in err
    path = tmp_path / "kernel.py"
    lowers_to_its_events(path)
    src = gluon_source((str(path), "k"), {"USE": 1}).source
    assert "mbarrier.expect(p_full0.index(" in src
    eager_counts_agree(path, 1, {"USE": 1})  # the empty barrier


def test_eager_count_check_sees_a_wrong_warp_count(tmp_path, monkeypatch):
    """The count check itself: an arrive helper of another warp count than its partition's is
    reported."""
    pytest.importorskip("triton.experimental.gluon")
    from tle_compiler.lowering import eager

    path = write_kernel(tmp_path, HELPERS)
    real = eager.emit_release_arrive
    monkeypatch.setattr(eager, "emit_release_arrive", lambda tr, var, stage: (
        tr.emit(f"_tle_arrive_w4({eager._address(var, stage)})") if tr.warps == 2
        else real(tr, var, stage)))
    from tle_compiler.lowering import pipes

    monkeypatch.setattr(pipes, "emit_release_arrive", eager.emit_release_arrive)
    problems = eager_count_problems(path)
    assert any("cb (2 warps) arrives by _tle_arrive_w4 on q_empty0" in p for p in problems)
