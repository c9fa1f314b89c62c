"""What is verified is what is lowered: for every kernel below that tle-dump verifies, the generated
Gluon performs exactly the verified pipe events, with the barrier arrays, counts, parities and
thread counts the verdict's barrier table gives, and no release hands back a slot an in-flight
wgmma still reads.

Areas (each kernel written to tmp_path from the sources here):
* named pipes (``barrier="named"``): exchanges between a default partition of 4 or 8 warps and
  a worker of 1, 2, 4 or 8 warps, a named pipe between two workers (1 and 2 warps) while the
  default partition runs neither end, an 8-warp default partition with named pipes to workers of
  1 and 4 warps (one helper for both), a single use without a hop, an exchange whose default
  partition returns under an ``if`` after its last event, nested ``r * NP + q`` loops
  with NP a constexpr read specialised, a reversed loop, an exchange under an ``if`` on a param,
  a named slot read by a pipelined wgmma;
* loops on mbarrier pipes: nested ``r * NP + q`` loops (NP 1, 2, 3) with a release one tile late,
  ``range(M, N)`` with N < M at run time, a writer counting down (``range(N - 1, -1, -1)``), trip
  counts ``N % 3`` and ``(L - 7) // 4`` with negative values (C's ``%`` and ``//``: the IR's
  derived params and the generated code must agree on them), kernel-level trip counts through
  ``tl.cdiv``, ``tl.minimum``, ``tl.maximum``, ``tl.where``, ``%``, ``//`` and ``>>`` at negative
  and positive arguments;
* pipelined wgmma (``@tle.jit(wgmma_pipeline=True)``): a release right after a ``tl.dot`` whose
  result is used only later, a dot chain over two slots of one ring released in the other order,
  dots over slots of two pipes released in the other order, a release two tiles late, one slot
  tile used as B by two dots, dots in inner, static and nested loops with the release outside or
  one tile late, releases in both branches of ``if``s on a loop variable and on the param, a
  count-down loop, a dot in a helper;
* TMA copies into slots: a count-down loop with boxes of three dtypes (bf16, fp32, int8) into
  one commit, nested ``r * NP + q`` loops of an fp8 field, two readers each seeing one field of
  another box (two groups) next to a one-shot pipe: every commit's expect-tx is the bytes its
  copies deliver (read from the generated Gluon and the signature) and the bytes tle-dump's
  barrier table prints for that group.

For each kernel: tle-dump's verdict (verified, or bounded where two free params or a step the
cutoff theorem leaves out allow no more), compile for sm_90a on the CPU, then the Gluon-trace
model of the generated code (tle_compiler/testing/gluon_trace.py) run for param values 0, 1, 2, 5
(and the negative and reversed ranges named above): its barrier operations per partition equal
the verified events' (the comparer of tests/test_lowering_events.py) for param values inside
the domains the verifier checked, no release meets an
in-flight wgmma, every (barrier, stage) receives exactly init count x phases arrivals (the phases
counted from the IR's commits and releases, independently of the lowering's plan), and every
named-barrier instruction counts the threads of the two partitions of its pipe (computed here
from the warp_specialize warps, not from the plan).

Refused, before anything is lowered, with the reason at the line (REFUSED): a named pipe that is
one-shot or has two readers, a named pipe on a step-2 loop (phase aliasing), a loop bound
chosen by a conditional expression, an index ``i // 2``, trip counts that disagree for N = -1
under C's ``//`` and ``%``, a TMA copy under an ``if`` (on a loop variable or a param) or in a
loop of its window, two copies into one field, the writer storing into a TMA field, a wgmma on a
tile loaded from the previous iteration's slot.

Wrong before this file (fixed in tle_compiler/lowering/compile.py, with_default_warps):
- a compile or launch with ``num_warps=W`` other than the kernel's ``@tle.jit`` num_warps runs
  the default partition on W warps, and the lowering laid it out for W, but the kernel IR the
  lowering passes read kept the ``@tle.jit`` warps, so every named pipe with the default
  partition at one end counted the old warps: ``bar.sync 15, 192`` where 8 + 2 warps (320
  threads) take part, so the barrier completed before the last warps arrived and its later
  phases went out of step (test_named_barriers_count_the_default_partitions_launch_warps).
The other kernels agreed with their verdicts; the file keeps them as regression cases, with
mutations of generated code showing the checks are live on them (a wgmma wait removed before a
release, a named barrier's thread count changed, an init count changed).
"""

from __future__ import annotations

import collections
import contextlib
import io
import re
from pathlib import Path

import pytest

pytest.importorskip("triton.experimental.gluon")

from tle_compiler.diagnostics import TleError, TleVerificationWarning  # noqa: E402
from tle_compiler.testing.gluon_trace import (ARRIVE, ARRIVE_CP_ASYNC, ARRIVE_THREAD,  # noqa: E402
                                              EXPECT, NAMED_ARRIVE, NAMED_SYNC, LoweredKernel,
                                              compare, trace_gluon, release_rings_of)

pytestmark = pytest.mark.filterwarnings(f"ignore::{TleVerificationWarning.__module__}."
                                        f"{TleVerificationWarning.__name__}")

HEAD = '''import triton.language as tl

import tle_compiler as tle

'''


def _config(sig: dict, cx: dict = None, num_warps: int = 4) -> str:
    return (f'\nDEFAULT_CONFIG = {{"signature": {sig!r}, "constexprs": {cx or {}!r}, '
            f'"num_warps": {num_warps}, "grid": (1,)}}\n')


def _c_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _c_mod(a: int, b: int) -> int:
    return a - b * _c_div(a, b)


KERNELS: dict[str, str] = {}
#: the runtime arguments each kernel is traced with
ARGS: dict[str, list[dict]] = {}
#: constexpr settings (default: the DEFAULT_CONFIG's alone)
CONSTEXPRS: dict[str, list[dict]] = {}
#: IR params the kernel derives from its arguments (N // 2 ...), as C computes them
DERIVED: dict[str, dict] = {}
#: named pipe -> the warps of its writer and reader partitions, from the warp_specialize call
NAMED_WARPS: dict[str, dict[str, int]] = {}
#: tle-dump's expected verdict: "verified" (exit 0) or "bounded" (exit 3); flags fix params
VERDICT: dict[str, tuple[str, list]] = {}
#: TMA kernels: the signature's descriptor boxes give each copy's bytes
TMA_KERNELS: set[str] = set()

N_VALUES = [{"N": n} for n in (0, 1, 2, 5)]

# ------------------------------------------------------------------------------ named pipes

#: side_a (the default partition) hands its row to side_b over max0, side_b its own back over
#: max1; each named pipe's release is implied by the other's commit (docs/semantics.md rule 10).
EXCHANGE = HEAD + '''
@tle.jit(num_warps={NW})
def {NAME}(a_ptr, b_ptr, out_a_ptr, out_b_ptr, N{PARAMS}):
    max0 = tle.pipe(capacity=1, barrier="named", m=tle.gpu.alloc([1, 64], tl.float32))
    max1 = tle.pipe(capacity=1, barrier="named", m=tle.gpu.alloc([1, 64], tl.float32))
    tle.gpu.warp_specialize([(side_a, (max0, max1, a_ptr, out_a_ptr, N{PARAMS_ARGS})),
                             (side_b, (max0, max1, b_ptr, out_b_ptr, N{PARAMS_ARGS}))],
                            [{WB}], [{REGS}])


def side_a(max0, max1, a_ptr, out_ptr, N{PARAMS}):
    offs = tl.arange(0, 64)
    w = max0.writer()
    r = max1.reader()
{LOOP_A}


def side_b(max0, max1, b_ptr, out_ptr, N{PARAMS}):
    offs = tl.arange(0, 64)
    r = max0.reader()
    w = max1.writer()
{LOOP_B}
'''

BODY_A = '''mine = tl.load(a_ptr + p * 64 + offs)
s = w.acquire(p)
tl.store(tle.gpu.local_ptr(s.m), mine)
w.commit(p)
res = r.wait(p)
theirs = tl.load(tle.gpu.local_ptr(res.slot.m))
r.release(p)
tl.store(out_ptr + p * 64 + offs, tl.maximum(mine, theirs))'''

BODY_B = '''mine = tl.load(b_ptr + p * 64 + offs)
res = r.wait(p)
theirs = tl.load(tle.gpu.local_ptr(res.slot.m))
r.release(p)
s = w.acquire(p)
tl.store(tle.gpu.local_ptr(s.m), mine)
w.commit(p)
tl.store(out_ptr + p * 64 + offs, tl.maximum(mine, theirs))'''


def _indent(text: str, n: int) -> str:
    return "\n".join(" " * n + ln if ln else ln for ln in text.splitlines())


def _exchange(name: str, nw: int, wb: int, head: str = "for p in range(N):", params: str = "",
              sig_extra: dict = None, cx: dict = None) -> str:
    """The exchange kernel ``name``: default partition of ``nw`` warps, worker of ``wb``; each
    side's body under the loop header(s) ``head`` (lines, the last one opening the body)."""
    def loop(body: str) -> str:
        out, depth = [], 4
        for h in head.splitlines():  # a line ending in ':' opens a block
            out.append(_indent(h.strip(), depth))
            depth += 4 if h.rstrip().endswith(":") else 0
        return "\n".join(out) + "\n" + _indent(body, depth)

    text = EXCHANGE
    for k, v in {"{NAME}": name, "{NW}": str(nw), "{WB}": str(wb), "{REGS}": "152" if wb == 8
                 else "232", "{PARAMS}": params,
                 "{PARAMS_ARGS}": ", ".join([""] + [p.split(":")[0].strip() for p in
                                                     params.split(",") if p.strip()]),
                 "{LOOP_A}": loop(BODY_A), "{LOOP_B}": loop(BODY_B)}.items():
        text = text.replace(k, v)
    sig = {"a_ptr": "*fp32", "b_ptr": "*fp32", "out_a_ptr": "*fp32", "out_b_ptr": "*fp32",
           "N": "i32", **(sig_extra or {})}
    return text + _config(sig, cx, nw)


for _nw, _wb in ((4, 1), (4, 2), (4, 4), (4, 8), (8, 1)):
    _n = f"named_exchange_{_nw}_{_wb}"
    KERNELS[_n] = _exchange(_n, _nw, _wb)
    ARGS[_n] = N_VALUES
    NAMED_WARPS[_n] = {"max0": _nw + _wb, "max1": _nw + _wb}
    VERDICT[_n] = ("verified", [])

# `return` under an `if` after all of side_a's events: no event depends on it, so it is
# verified, and the generated Gluon's barrier operations are the verified events
KERNELS["named_return_after_events"] = KERNELS["named_exchange_4_2"].replace(
    "named_exchange_4_2", "named_return_after_events").replace(
    "        tl.store(out_ptr + p * 64 + offs, tl.maximum(mine, theirs))\n\n\ndef side_b",
    "        tl.store(out_ptr + p * 64 + offs, tl.maximum(mine, theirs))\n    if N < 3:\n"
    "        return\n\n\ndef side_b")
ARGS["named_return_after_events"] = N_VALUES
NAMED_WARPS["named_return_after_events"] = {"max0": 6, "max1": 6}
VERDICT["named_return_after_events"] = ("verified", [])

# the exchange in nested loops, index rr * NP + qq, NP a constexpr read specialised
KERNELS["named_nested_np"] = _exchange(
    "named_nested_np", 4, 2, head="for rr in range(N):\nfor qq in range(NP):\np = rr * NP + qq",
    params=", NP: tl.constexpr", sig_extra={"NP": "constexpr"}, cx={"NP": 2})
ARGS["named_nested_np"] = N_VALUES
CONSTEXPRS["named_nested_np"] = [{"NP": 1}, {"NP": 2}, {"NP": 3}]
NAMED_WARPS["named_nested_np"] = {"max0": 6, "max1": 6}
VERDICT["named_nested_np"] = ("verified", [])

# the exchange counting down: p = N - 1 - pp for pp = N - 1, ..., 0 (outside the cutoff
# theorem's fragment: bounded)
KERNELS["named_count_down"] = _exchange(
    "named_count_down", 4, 2, head="for pp in range(N - 1, -1, -1):\np = N - 1 - pp")
ARGS["named_count_down"] = [{"N": n} for n in (-2, 0, 1, 2, 5)]
NAMED_WARPS["named_count_down"] = {"max0": 6, "max1": 6}
VERDICT["named_count_down"] = ("bounded", [])

# the exchange under `if M > 0` on both sides (verified for every N with M fixed either way)
KERNELS["named_if_param"] = _exchange(
    "named_if_param", 4, 2, head="if M > 0:\nfor p in range(N):", params=", M",
    sig_extra={"M": "i32"})
ARGS["named_if_param"] = [{"N": n, "M": m} for n in (0, 1, 2, 5) for m in (-1, 0, 1)]
NAMED_WARPS["named_if_param"] = {"max0": 6, "max1": 6}
VERDICT["named_if_param"] = ("verified", [["--param=M=1"], ["--param=M=0"]])

# a named pipe between two workers of 1 and 2 warps; the default partition runs neither end; the
# release of x is implied by side_b's commit of the mbarrier pipe back
KERNELS["named_between_workers"] = HEAD + '''
@tle.jit(num_warps=4)
def named_between_workers(a_ptr, out_ptr, N):
    x = tle.pipe(capacity=1, barrier="named", m=tle.gpu.alloc([1, 64], tl.float32))
    back = tle.pipe(capacity=1, v=tle.gpu.alloc([1, 64], tl.float32))
    tle.gpu.warp_specialize([(idle, (out_ptr, N)), (side_a, (x, back, a_ptr, N)),
                             (side_b, (x, back, N))], [1, 2], [232, 232])


def idle(out_ptr, N):
    tl.store(out_ptr + tl.arange(0, 64), tl.zeros([64], tl.float32) + N)


def side_a(x, back, a_ptr, N):
    offs = tl.arange(0, 64)
    w = x.writer()
    r = back.reader()
    for p in range(N):
        s = w.acquire(p)
        tl.store(tle.gpu.local_ptr(s.m), tl.load(a_ptr + p * 64 + offs))
        w.commit(p)
        res = r.wait(p)
        tl.store(a_ptr + p * 64 + offs, tl.load(tle.gpu.local_ptr(res.slot.v)))
        r.release(p)


def side_b(x, back, N):
    r = x.reader()
    w = back.writer()
    for p in range(N):
        res = r.wait(p)
        v = tl.load(tle.gpu.local_ptr(res.slot.m))
        r.release(p)
        s = w.acquire(p)
        tl.store(tle.gpu.local_ptr(s.v), v * 2.0)
        w.commit(p)
''' + _config({"a_ptr": "*fp32", "out_ptr": "*fp32", "N": "i32"})
ARGS["named_between_workers"] = N_VALUES
NAMED_WARPS["named_between_workers"] = {"x": 3}
VERDICT["named_between_workers"] = ("verified", [])

# the default partition (8 warps) hands rows to two workers (1 and 4 warps) over two named
# pipes; each worker answers over an mbarrier pipe, which implies the release of its named pipe
KERNELS["named_two_partners"] = HEAD + '''
@tle.jit(num_warps=8)
def named_two_partners(a_ptr, out_ptr, N):
    x = tle.pipe(capacity=1, barrier="named", m=tle.gpu.alloc([1, 64], tl.float32))
    y = tle.pipe(capacity=1, barrier="named", m=tle.gpu.alloc([1, 64], tl.float32))
    bx = tle.pipe(capacity=1, v=tle.gpu.alloc([1, 64], tl.float32))
    by = tle.pipe(capacity=1, v=tle.gpu.alloc([1, 64], tl.float32))
    tle.gpu.warp_specialize([(hub, (x, y, bx, by, a_ptr, out_ptr, N)), (echo_x, (x, bx, N)),
                             (echo_y, (y, by, N))], [1, 4], [120, 120])


def hub(x, y, bx, by, a_ptr, out_ptr, N):
    offs = tl.arange(0, 64)
    wx = x.writer()
    wy = y.writer()
    rx = bx.reader()
    ry = by.reader()
    for p in range(N):
        v = tl.load(a_ptr + p * 64 + offs)
        s = wx.acquire(p)
        tl.store(tle.gpu.local_ptr(s.m), v)
        wx.commit(p)
        s = wy.acquire(p)
        tl.store(tle.gpu.local_ptr(s.m), v * 3.0)
        wy.commit(p)
        gx = rx.wait(p)
        u = tl.load(tle.gpu.local_ptr(gx.slot.v))
        rx.release(p)
        gy = ry.wait(p)
        u = u + tl.load(tle.gpu.local_ptr(gy.slot.v))
        ry.release(p)
        tl.store(out_ptr + p * 64 + offs, u)


def echo(x, back, N):
    r = x.reader()
    w = back.writer()
    for p in range(N):
        res = r.wait(p)
        v = tl.load(tle.gpu.local_ptr(res.slot.m))
        r.release(p)
        s = w.acquire(p)
        tl.store(tle.gpu.local_ptr(s.v), v + 1.0)
        w.commit(p)


def echo_x(x, back, N):
    echo(x, back, N)


def echo_y(y, back, N):
    echo(y, back, N)
''' + _config({"a_ptr": "*fp32", "out_ptr": "*fp32", "N": "i32"}, num_warps=8)
ARGS["named_two_partners"] = N_VALUES
NAMED_WARPS["named_two_partners"] = {"x": 9, "y": 12}

# one use of a named pipe (no acquire after the first, so no hop): an 8-warp default partition
# reads what a 1-warp worker writes
KERNELS["named_single_use"] = HEAD + '''
@tle.jit(num_warps=8)
def named_single_use(a_ptr, out_ptr, N):
    x = tle.pipe(capacity=1, barrier="named", m=tle.gpu.alloc([1, 64], tl.float32))
    tle.gpu.warp_specialize([(recv, (x, out_ptr, N)), (send, (x, a_ptr))], [1], [152])


def recv(x, out_ptr, N):
    r = x.reader()
    res = r.wait(0)
    v = tl.load(tle.gpu.local_ptr(res.slot.m))
    r.release(0)
    tl.store(out_ptr + tl.arange(0, 64), v + N)


def send(x, a_ptr):
    w = x.writer()
    s = w.acquire(0)
    tl.store(tle.gpu.local_ptr(s.m), tl.load(a_ptr + tl.arange(0, 64)))
    w.commit(0)
''' + _config({"a_ptr": "*fp32", "out_ptr": "*fp32", "N": "i32"}, num_warps=8)
ARGS["named_single_use"] = [{"N": 0}, {"N": 3}]
NAMED_WARPS["named_single_use"] = {"x": 9}
VERDICT["named_single_use"] = ("verified", [])

# a named slot read as wgmma's B operand (pipelined): the release, which emits no arrive, must
# still retire the wgmma before the commit of back (the hop that hands the slot back)
KERNELS["named_wgmma"] = HEAD + '''BM = tl.constexpr(64)
D = tl.constexpr(64)


@tle.jit(num_warps=4, wgmma_pipeline=True)
def named_wgmma(a_ptr, b_ptr, o_ptr, N):
    x = tle.pipe(capacity=1, barrier="named", p=tle.gpu.alloc([1, BM, D], tl.bfloat16))
    back = tle.pipe(capacity=1, barrier="named", m=tle.gpu.alloc([1, BM], tl.float32))
    tle.gpu.warp_specialize([(mma, (x, back, b_ptr, o_ptr, N)), (prod, (x, back, a_ptr, N))],
                            [4], [232])


def prod(x, back, a_ptr, N):
    tile = tl.arange(0, BM)[:, None] * D + tl.arange(0, D)[None, :]
    w = x.writer()
    r = back.reader()
    for i in range(N):
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.p), tl.load(a_ptr + i * BM * D + tile))
        w.commit(i)
        res = r.wait(i)
        m = tl.load(tle.gpu.local_ptr(res.slot.m))
        r.release(i)
        tl.store(a_ptr + i * BM + tl.arange(0, BM), m.to(tl.bfloat16))


def mma(x, back, b_ptr, o_ptr, N):
    tile = tl.arange(0, BM)[:, None] * D + tl.arange(0, D)[None, :]
    r = x.reader()
    w = back.writer()
    b = tl.load(b_ptr + tile)
    acc = tl.zeros([BM, D], tl.float32)
    for i in range(N):
        res = r.wait(i)
        acc = tl.dot(b, tl.load(tle.gpu.local_ptr(res.slot.p)), acc)
        r.release(i)
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.m), tl.max(acc, 1))
        w.commit(i)
    tl.store(o_ptr + tile, acc)
''' + _config({"a_ptr": "*bf16", "b_ptr": "*bf16", "o_ptr": "*fp32", "N": "i32"})
ARGS["named_wgmma"] = N_VALUES
NAMED_WARPS["named_wgmma"] = {"x": 8, "back": 8}
VERDICT["named_wgmma"] = ("verified", [])

# ------------------------------------------------------------------------- loops (mbarrier)

TILES = HEAD + '''BM = tl.constexpr(32)
BN = tl.constexpr(64)


def put(w, x_ptr, i):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    s = w.acquire(i)
    tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + i * BM * BN + offs))
    w.commit(i)


def take(r, y_ptr, i):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    res = r.wait(i)
    tl.store(y_ptr + i * BM * BN + offs, tl.load(tle.gpu.local_ptr(res.slot.t)))
    r.release(i)
'''


def _tiles(name: str, fill: str, drain: str, params: str = "N", cap: int = 2, sig: dict = None,
           cx: dict = None, pre: str = "") -> str:
    """Kernel ``name(x_ptr, y_ptr, <params>)``: one int32 ring of ``cap`` tiles, the partitions
    ``fill`` (writer w) and ``drain`` (reader r) with the given bodies."""
    args = ", ".join(p.split(":")[0].strip() for p in params.split(","))
    return TILES + f'''

@tle.jit(num_warps=4)
def {name}(x_ptr, y_ptr, {params}):
{pre}    p = tle.pipe(capacity={cap}, t=tle.gpu.alloc([{cap}, BM, BN], tl.int32))
    tle.gpu.warp_specialize([(fill, (p, x_ptr, {args})), (drain, (p, y_ptr, {args}))],
                            [4], [232])


def fill(p, x_ptr, {args}):
    w = p.writer()
{_indent(fill, 4)}


def drain(p, y_ptr, {args}):
    r = p.reader()
{_indent(drain, 4)}
''' + _config(sig or {"x_ptr": "*i32", "y_ptr": "*i32", "N": "i32"}, cx)


KERNELS["loop_nested_np"] = _tiles(
    "loop_nested_np",
    "for a in range(N):\n    for q in range(NP):\n        put(w, x_ptr, a * NP + q)",
    "for a in range(N):\n    for q in range(NP):\n        take(r, y_ptr, a * NP + q)",
    params="N, NP: tl.constexpr", sig={"x_ptr": "*i32", "y_ptr": "*i32", "N": "i32",
                                       "NP": "constexpr"}, cx={"NP": 2})
CONSTEXPRS["loop_nested_np"] = [{"NP": 1}, {"NP": 2}, {"NP": 3}]

# released one tile late inside the nested loop, the last one after both loops (capacity 3)
KERNELS["loop_nested_np_late"] = _tiles(
    "loop_nested_np_late",
    "for a in range(N):\n    for q in range(NP):\n        put(w, x_ptr, a * NP + q)",
    '''offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
for a in range(N):
    for q in range(NP):
        res = r.wait(a * NP + q)
        tl.store(y_ptr + (a * NP + q) * BM * BN + offs, tl.load(tle.gpu.local_ptr(res.slot.t)))
        if a * NP + q > 0:
            r.release(a * NP + q - 1)
if N > 0:
    r.release(N * NP - 1)''',
    params="N, NP: tl.constexpr", cap=3, sig={"x_ptr": "*i32", "y_ptr": "*i32", "N": "i32",
                                              "NP": "constexpr"}, cx={"NP": 2})
CONSTEXPRS["loop_nested_np_late"] = [{"NP": 1}, {"NP": 2}, {"NP": 3}]

# range(M, N), index i - M: nothing when N <= M (bounded: two free params; proved for every N
# with M fixed)
KERNELS["loop_range_m_n"] = _tiles(
    "loop_range_m_n", "for i in range(M, N):\n    put(w, x_ptr, i - M)",
    "for i in range(M, N):\n    take(r, y_ptr, i - M)", params="N, M",
    sig={"x_ptr": "*i32", "y_ptr": "*i32", "N": "i32", "M": "i32"})
ARGS["loop_range_m_n"] = [{"N": 3, "M": 5}, {"N": 0, "M": 0}, {"N": 3, "M": 1},
                          {"N": 5, "M": -2}, {"N": -1, "M": -3}, {"N": -3, "M": -1}]
VERDICT["loop_range_m_n"] = ("verified", [["--param=M=-2"], ["--param=M=3"]])

# the writer counts down (i = N - 1, ..., 0, index N - 1 - i), the reader up
KERNELS["loop_count_down"] = _tiles(
    "loop_count_down", "for i in range(N - 1, -1, -1):\n    put(w, x_ptr, N - 1 - i)",
    "for i in range(N):\n    take(r, y_ptr, i)")
ARGS["loop_count_down"] = [{"N": n} for n in (-3, 0, 1, 2, 5)]
VERDICT["loop_count_down"] = ("bounded", [])

# `return` as the last statement of both partitions (after the events; one after an `if`)
KERNELS["loop_return_at_end"] = _tiles(
    "loop_return_at_end", "for i in range(N):\n    put(w, x_ptr, i)\nreturn",
    "for i in range(N):\n    take(r, y_ptr, i)\nif N > 3:\n    tl.store(y_ptr + tl.arange(0, BN), "
    "tl.zeros([BN], tl.int32))\nreturn")

# trip count N % 3 with C's remainder: -2 ... 2 (N = -5 gives -2: no iteration)
KERNELS["loop_mod_trip"] = _tiles(
    "loop_mod_trip", "for i in range(N % 3):\n    put(w, x_ptr, i)",
    "for i in range(N % 3):\n    take(r, y_ptr, i)")
ARGS["loop_mod_trip"] = [{"N": n} for n in (-5, -1, 0, 1, 2, 5)]
DERIVED["loop_mod_trip"] = {"N_3": lambda a: _c_mod(a["N"], 3)}

# N // 2 + 1 tiles, then N % 3 more (both C: N = -1 gives 1 then -1, i.e. 1 tile), read by two
# loops of the same bounds; bounded (the derived params are checked as independent values)
KERNELS["loop_div_mod_trips"] = _tiles(
    "loop_div_mod_trips",
    "for i in range(N // 2 + 1):\n    put(w, x_ptr, i)\nfor i in range(N % 3):\n"
    "    put(w, x_ptr, N // 2 + 1 + i)",
    "for i in range(N // 2 + 1):\n    take(r, y_ptr, i)\nfor j in range(N % 3):\n"
    "    take(r, y_ptr, N // 2 + 1 + j)")
ARGS["loop_div_mod_trips"] = [{"N": n} for n in (-5, -4, -3, -2, -1, 0, 1, 2, 5)]
DERIVED["loop_div_mod_trips"] = {"N_2": lambda a: _c_div(a["N"], 2),
                                 "N_3": lambda a: _c_mod(a["N"], 3)}
VERDICT["loop_div_mod_trips"] = ("bounded", [])

# a kernel-level trip count NT = (L - 7) // 4 (C: L = 0 gives -1, L = 4 gives 0)
KERNELS["loop_kernel_level_trip"] = _tiles(
    "loop_kernel_level_trip", "for i in range(NT):\n    put(w, x_ptr, i)",
    "for i in range(NT):\n    take(r, y_ptr, i)", params="NT",
    sig={"x_ptr": "*i32", "y_ptr": "*i32", "L": "i32"}).replace(
    "(x_ptr, y_ptr, NT):\n", "(x_ptr, y_ptr, L):\n    NT = (L - 7) // 4\n", 1)
ARGS["loop_kernel_level_trip"] = [{"L": v} for v in (-20, 0, 4, 7, 11, 15, 30)]

# kernel-level trip counts the prologue computes with Triton's scalar operations (C semantics for
# runtime integers), at negative and positive L: the values must be in the verified domains
# ((L + 1) % 4 is verified for -3 ... 3)
for _n, _e in {"kl_cdiv": "tl.cdiv(L, 64)", "kl_minimum": "tl.minimum(L, 3)",
               "kl_maximum": "tl.maximum(L - 2, 0)", "kl_mod": "(L + 1) % 4",
               "kl_neg_div": "(-L) // 3", "kl_shift": "L >> 1", "kl_where": "tl.where(L > 2, L, 2)"
               }.items():
    KERNELS[_n] = _tiles(_n, "for i in range(NT):\n    put(w, x_ptr, i)",
                         "for i in range(NT):\n    take(r, y_ptr, i)", params="NT",
                         sig={"x_ptr": "*i32", "y_ptr": "*i32", "L": "i32"}).replace(
        "(x_ptr, y_ptr, NT):\n", f"(x_ptr, y_ptr, L):\n    NT = {_e}\n", 1)
    ARGS[_n] = [{"L": v} for v in (-130, -65, -7, -1, 0, 1, 3, 65, 200)]

# ----------------------------------------------------------------------- pipelined wgmma

WG_HEAD = HEAD + '''BM = tl.constexpr(64)
BN = tl.constexpr(64)
D = tl.constexpr(64)


def load_q(q, q_ptr):
    tile = tl.arange(0, BM)[:, None] * D + tl.arange(0, D)[None, :]
    qw = q.writer()
    s = qw.acquire(0)
    tl.store(tle.gpu.local_ptr(s.q), tl.load(q_ptr + tile))
    qw.commit(0)


def load_k(kv, k_ptr, NT):
    tile = tl.arange(0, BN)[:, None] * D + tl.arange(0, D)[None, :]
    w = kv.writer()
    for t in range(NT):
        s = w.acquire(t)
        tl.store(tle.gpu.local_ptr(s.k), tl.load(k_ptr + t * BN * D + tile))
        w.commit(t)
'''

WG_SIG = {"q_ptr": "*bf16", "k_ptr": "*bf16", "o_ptr": "*fp32", "NT": "i32"}


def _attention(name: str, attend: str, cap: int = 2, tiles: str = "NT") -> str:
    """A one-shot Q and a ring of ``cap`` K tiles (``tiles`` of them) filled by ``loader``;
    ``attend`` (body after qres = q.wait(0), reader r of kv) stores its [BM, BN] fp32 acc."""
    return WG_HEAD + f'''

@tle.jit(num_warps=4, wgmma_pipeline=True)
def {name}(q_ptr, k_ptr, o_ptr, NT):
    q = tle.pipe(capacity=1, one_shot=True, q=tle.gpu.alloc([1, BM, D], tl.bfloat16))
    kv = tle.pipe(capacity={cap}, k=tle.gpu.alloc([{cap}, BN, D], tl.bfloat16))
    tle.gpu.warp_specialize([(loader, (q, kv, q_ptr, k_ptr, NT)), (attend, (q, kv, o_ptr, NT))],
                            [4], [232])


def loader(q, kv, q_ptr, k_ptr, NT):
    load_q(q, q_ptr)
    load_k(kv, k_ptr, {tiles})


def attend(q, kv, o_ptr, NT):
    out = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    qr = q.reader()
    r = kv.reader()
    qres = qr.wait(0)
    acc = tl.zeros([BM, BN], tl.float32)
{_indent(attend, 4)}
    tl.store(o_ptr + out, acc)
''' + _config(WG_SIG)


QK = ("tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q)), "
      "tl.trans(tl.load(tle.gpu.local_ptr({R}.slot.k)))")

# the release right after the dot; its result is used only after the release
KERNELS["wg_release_after_dot"] = _attention("wg_release_after_dot", f'''for t in range(NT):
    res = r.wait(t)
    s = {QK.format(R="res")})
    r.release(t)
    acc = acc + s * 0.5''')

# the same with the dot accumulating (its result carried across the back-edge)
KERNELS["wg_release_after_dot_acc"] = _attention("wg_release_after_dot_acc", f'''for t in range(NT):
    res = r.wait(t)
    acc = {QK.format(R="res")}, acc)
    r.release(t)''')

# a dot chain over two slots of one ring, the later slot released first
KERNELS["wg_chain_released_reversed"] = _attention(
    "wg_chain_released_reversed", f'''for t in range(NT):
    ra = r.wait(2 * t)
    rb = r.wait(2 * t + 1)
    acc = {QK.format(R="ra")}, acc)
    acc = {QK.format(R="rb")}, acc)
    r.release(2 * t + 1)
    r.release(2 * t)''', cap=3, tiles="2 * NT")
VERDICT["wg_chain_released_reversed"] = ("bounded", [])

# the same released in order
KERNELS["wg_chain_released_in_order"] = _attention(
    "wg_chain_released_in_order", f'''for t in range(NT):
    ra = r.wait(2 * t)
    rb = r.wait(2 * t + 1)
    acc = {QK.format(R="ra")}, acc)
    acc = {QK.format(R="rb")}, acc)
    r.release(2 * t)
    r.release(2 * t + 1)''', cap=3, tiles="2 * NT")
VERDICT["wg_chain_released_in_order"] = ("bounded", [])

# released two tiles late (capacity 3), the last two after the loop
KERNELS["wg_release_two_late"] = _attention("wg_release_two_late", f'''for t in range(NT):
    res = r.wait(t)
    acc = {QK.format(R="res")}, acc)
    if t > 1:
        r.release(t - 2)
if NT > 1:
    r.release(NT - 2)
if NT > 0:
    r.release(NT - 1)''', cap=3)

# one slot tile used as B by two dots (S = Q K^T, then acc += S K)
KERNELS["wg_one_tile_two_dots"] = _attention("wg_one_tile_two_dots", '''for t in range(NT):
    res = r.wait(t)
    kt = tl.load(tle.gpu.local_ptr(res.slot.k))
    s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q)), tl.trans(kt))
    acc = tl.dot(s.to(tl.bfloat16), kt, acc)
    r.release(t)''')

# the dot issued twice in an inner loop, the slot released after it (outer loop)
KERNELS["wg_inner_loop_release_outer"] = _attention(
    "wg_inner_loop_release_outer", f'''for a in range(NT):
    res = r.wait(a)
    for j in range(2):
        acc = {QK.format(R="res")}, acc)
    r.release(a)''')

# wait, dot, release in a static_range of two (indices 2 a + j)
KERNELS["wg_static_range_release"] = _attention("wg_static_range_release", f'''for a in range(NT):
    for j in tl.static_range(2):
        res = r.wait(2 * a + j)
        acc = {QK.format(R="res")}, acc)
        r.release(2 * a + j)''', tiles="2 * NT")
VERDICT["wg_static_range_release"] = ("bounded", [])

# nested loops (indices 2 a + j), released one tile late inside, the last after both loops
KERNELS["wg_nested_release_late"] = _attention("wg_nested_release_late", f'''for a in range(NT):
    for j in range(2):
        res = r.wait(2 * a + j)
        acc = {QK.format(R="res")}, acc)
        if 2 * a + j > 0:
            r.release(2 * a + j - 1)
if NT > 0:
    r.release(2 * NT - 1)''', cap=3, tiles="2 * NT")
VERDICT["wg_nested_release_late"] = ("bounded", [])

# the release first in one branch, last in the other, the dot's result used in both
KERNELS["wg_release_in_branches"] = _attention("wg_release_in_branches", f'''for a in range(NT):
    res = r.wait(a)
    s = {QK.format(R="res")})
    if a % 2 == 0:
        r.release(a)
        acc = acc + s
    else:
        acc = acc - s
        r.release(a)''')

# the release under an `if` on the param, in both branches
KERNELS["wg_release_if_param"] = _attention("wg_release_if_param", f'''for a in range(NT):
    res = r.wait(a)
    acc = {QK.format(R="res")}, acc)
    if NT > 3:
        r.release(a)
    else:
        r.release(a)''')

# a count-down loop: index NT - 1 - a
KERNELS["wg_count_down"] = _attention("wg_count_down", f'''for a in range(NT - 1, -1, -1):
    res = r.wait(NT - 1 - a)
    acc = {QK.format(R="res")}, acc)
    r.release(NT - 1 - a)''')
VERDICT["wg_count_down"] = ("bounded", [])

# the dot in a helper returning its result
KERNELS["wg_helper_dot"] = _attention("wg_helper_dot", '''for a in range(NT):
    res = r.wait(a)
    acc = qk(qres, res, acc)
    r.release(a)''').replace("\n\n@tle.jit", '''

def qk(qres, res, acc):
    return tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q)),
                  tl.trans(tl.load(tle.gpu.local_ptr(res.slot.k))), acc)


@tle.jit''', 1)

# straight-line: tile 0 loaded before the wait of index 1, its dot issued after that wait, slot
# 0 released before tile 1's dot (the load is lazy: the dot reads slot 0 in shared memory, so
# the release must retire it)
KERNELS["wg_tile_loaded_before_later_wait"] = _attention(
    "wg_tile_loaded_before_later_wait", '''res0 = r.wait(0)
k0 = tl.load(tle.gpu.local_ptr(res0.slot.k))
res1 = r.wait(1)
acc = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q)), tl.trans(k0), acc)
r.release(0)
acc = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q)),
             tl.trans(tl.load(tle.gpu.local_ptr(res1.slot.k))), acc)
r.release(1)''', tiles="2")

# dots over slots of two pipes, released in the other order than waited
KERNELS["wg_two_pipes_other_order"] = WG_HEAD + '''

@tle.jit(num_warps=4, wgmma_pipeline=True)
def wg_two_pipes_other_order(q_ptr, k_ptr, o_ptr, NT):
    a = tle.pipe(capacity=2, x=tle.gpu.alloc([2, BM, D], tl.bfloat16))
    b = tle.pipe(capacity=2, y=tle.gpu.alloc([2, BN, D], tl.bfloat16))
    tle.gpu.warp_specialize([(loader, (a, b, q_ptr, k_ptr, NT)), (attend, (a, b, o_ptr, NT))],
                            [4], [232])


def loader(a, b, q_ptr, k_ptr, NT):
    tile = tl.arange(0, BN)[:, None] * D + tl.arange(0, D)[None, :]
    wa = a.writer()
    wb = b.writer()
    for t in range(NT):
        s = wa.acquire(t)
        tl.store(tle.gpu.local_ptr(s.x), tl.load(q_ptr + t * BM * D + tile))
        wa.commit(t)
        s2 = wb.acquire(t)
        tl.store(tle.gpu.local_ptr(s2.y), tl.load(k_ptr + t * BN * D + tile))
        wb.commit(t)


def attend(a, b, o_ptr, NT):
    out = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    ra = a.reader()
    rb = b.reader()
    acc = tl.zeros([BM, BN], tl.float32)
    for t in range(NT):
        ga = ra.wait(t)
        gb = rb.wait(t)
        acc = tl.dot(tl.load(tle.gpu.local_ptr(ga.slot.x)),
                     tl.trans(tl.load(tle.gpu.local_ptr(gb.slot.y))), acc)
        acc2 = tl.dot(tl.load(tle.gpu.local_ptr(gb.slot.y)),
                      tl.trans(tl.load(tle.gpu.local_ptr(gb.slot.y))))
        rb.release(t)
        ra.release(t)
        acc = acc + acc2
    tl.store(o_ptr + out, acc)
''' + _config(WG_SIG)

for _n in [k for k in KERNELS if k.startswith("wg_")]:
    ARGS[_n] = [{"NT": n} for n in (0, 1, 2, 5)]

# ------------------------------------------------------------------------------------- TMA

# a count-down writer copying three boxes (bf16 [64, 64], fp32 [32, 64], int8 [64, 128]) into
# one slot per commit; a reader sees all three, released one tile late
KERNELS["tma_count_down_three_boxes"] = HEAD + '''BM = tl.constexpr(64)
BN = tl.constexpr(64)


@tle.jit(num_warps=4)
def tma_count_down_three_boxes(h_desc, f_desc, b_desc, y_ptr, N):
    p = tle.pipe(capacity=2, h=tle.gpu.alloc([2, BM, BN], tl.bfloat16),
                 f=tle.gpu.alloc([2, 32, BN], tl.float32),
                 b=tle.gpu.alloc([2, BM, 128], tl.int8))
    tle.gpu.warp_specialize([(fill, (p, h_desc, f_desc, b_desc, N)), (drain, (p, y_ptr, N))],
                            [4], [232])


def fill(p, h_desc, f_desc, b_desc, N):
    w = p.writer()
    for i in range(N - 1, -1, -1):
        s = w.acquire(N - 1 - i)
        tle.gpu.tma_load(s.f, f_desc, [i * 32, 0])
        tle.gpu.tma_load(s.h, h_desc, [i * BM, 0])
        tle.gpu.tma_load(s.b, b_desc, [i * BM, 0])
        w.commit(N - 1 - i)


def drain(p, y_ptr, N):
    r = p.reader()
    for i in range(N):
        res = r.wait(i)
        h = tl.sum(tl.load(tle.gpu.local_ptr(res.slot.h)).to(tl.float32), 1)
        f = tl.sum(tl.load(tle.gpu.local_ptr(res.slot.f)), 1)
        b = tl.sum(tl.load(tle.gpu.local_ptr(res.slot.b)).to(tl.float32), 1)
        if i > 0:
            r.release(i - 1)
        tl.store(y_ptr + i * BM + tl.arange(0, BM), h + b)
        tl.store(y_ptr + i * 32 + tl.arange(0, 32), f)
    if N > 0:
        r.release(N - 1)
''' + _config({"h_desc": "tensordesc<bf16[64, 64]>", "f_desc": "tensordesc<fp32[32, 64]>",
               "b_desc": "tensordesc<i8[64, 128]>", "y_ptr": "*fp32", "N": "i32"})
ARGS["tma_count_down_three_boxes"] = [{"N": n} for n in (-1, 0, 1, 2, 5)]
VERDICT["tma_count_down_three_boxes"] = ("bounded", [])
TMA_KERNELS.add("tma_count_down_three_boxes")

# a TMA ring read in nested r * NP + q loops (NP a constexpr) next to an fp8 field
KERNELS["tma_nested_fp8"] = HEAD + '''BM = tl.constexpr(64)
BN = tl.constexpr(64)


@tle.jit(num_warps=4)
def tma_nested_fp8(x_desc, y_ptr, N, NP: tl.constexpr):
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, BM, 128], tl.float8e4nv))
    tle.gpu.warp_specialize([(fill, (p, x_desc, N, NP)), (drain, (p, y_ptr, N, NP))],
                            [1], [232])


def fill(p, x_desc, N, NP: tl.constexpr):
    w = p.writer()
    for a in range(N):
        for q in range(NP):
            s = w.acquire(a * NP + q)
            tle.gpu.tma_load(s.t, x_desc, [(a * NP + q) * BM, 0])
            w.commit(a * NP + q)


def drain(p, y_ptr, N, NP: tl.constexpr):
    r = p.reader()
    for a in range(N):
        for q in range(NP):
            res = r.wait(a * NP + q)
            v = tl.load(tle.gpu.local_ptr(res.slot.t)).to(tl.float32)
            r.release(a * NP + q)
            tl.store(y_ptr + (a * NP + q) * BM + tl.arange(0, BM), tl.sum(v, 1))
''' + _config({"x_desc": "tensordesc<fp8e4nv[64, 128]>", "y_ptr": "*fp32", "N": "i32",
               "NP": "constexpr"}, {"NP": 2})
CONSTEXPRS["tma_nested_fp8"] = [{"NP": 1}, {"NP": 3}]
TMA_KERNELS.add("tma_nested_fp8")

# two readers each seeing one field (a group each: expect-tx 8192 and 16384), a one-shot header
# pipe copied once (expect-tx 4096), readers of 1 and 4 warps
KERNELS["tma_views_and_one_shot"] = HEAD + '''BM = tl.constexpr(64)
BN = tl.constexpr(64)


@tle.jit(num_warps=4)
def tma_views_and_one_shot(t_desc, u_desc, h_desc, ya_ptr, yb_ptr, N):
    hdr = tle.pipe(capacity=1, one_shot=True, h=tle.gpu.alloc([1, 32, 128], tl.int8))
    p = tle.pipe(capacity=2, readers=("a", "b"), t=tle.gpu.alloc([2, BM, BN], tl.bfloat16),
                 u=tle.gpu.alloc([2, BM, BN], tl.float32))
    tle.gpu.warp_specialize([(see_b, (hdr, p.reader("b", fields=("u",)), yb_ptr, N)),
                             (fill, (hdr, p, t_desc, u_desc, h_desc, N)),
                             (see_a, (p.reader("a", fields=("t",)), ya_ptr, N))],
                            [4, 1], [160, 160])


def fill(hdr, p, t_desc, u_desc, h_desc, N):
    hw = hdr.writer()
    hs = hw.acquire(0)
    tle.gpu.tma_load(hs.h, h_desc, [0, 0])
    hw.commit(0)
    w = p.writer()
    for i in range(N):
        s = w.acquire(i)
        tle.gpu.tma_load(s.u, u_desc, [i * BM, 0])
        tle.gpu.tma_load(s.t, t_desc, [i * BM, 0])
        w.commit(i)


def see_a(r, ya_ptr, N):
    for i in range(N):
        res = r.wait(i)
        v = tl.sum(tl.load(tle.gpu.local_ptr(res.slot.t)).to(tl.float32), 1)
        r.release(i)
        tl.store(ya_ptr + i * BM + tl.arange(0, BM), v)


def see_b(hdr, r, yb_ptr, N):
    hr = hdr.reader()
    hres = hr.wait(0)
    h = tl.sum(tl.sum(tl.load(tle.gpu.local_ptr(hres.slot.h)).to(tl.float32), 1), 0)
    for i in range(N):
        res = r.wait(i)
        v = tl.sum(tl.load(tle.gpu.local_ptr(res.slot.u)), 0)
        r.release(i)
        tl.store(yb_ptr + i * BN + tl.arange(0, BN), v + h)
''' + _config({"t_desc": "tensordesc<bf16[64, 64]>", "u_desc": "tensordesc<fp32[64, 64]>",
               "h_desc": "tensordesc<i8[32, 128]>", "ya_ptr": "*fp32", "yb_ptr": "*fp32",
               "N": "i32"})
TMA_KERNELS.add("tma_views_and_one_shot")

for _n in KERNELS:
    ARGS.setdefault(_n, N_VALUES)
    VERDICT.setdefault(_n, ("verified", []))

NAMES = sorted(KERNELS)
SETTINGS = [(n, cx) for n in NAMES for cx in CONSTEXPRS.get(n, [{}])]
SETTING_IDS = [n + "".join(f"-{k}{v}" for k, v in cx.items()) for n, cx in SETTINGS]


# ---------------------------------------------------------------------------------- helpers

def _write(tmp_path: Path, name: str, text: str = None) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(KERNELS[name] if text is None else text)
    return path


def _dump(args: list) -> tuple[int, str]:
    from tle_compiler.cli.dump import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        rc = main(args)
    return rc, out.getvalue()


def _config_of(path: Path, name: str, cx: dict) -> dict:
    from tle_compiler.lowering.dumping import default_config

    config = default_config(str(path), name)
    return dict(config, constexprs=dict(config["constexprs"], **cx))


def _lowered(tmp_path: Path, name: str, cx: dict) -> LoweredKernel:
    path = _write(tmp_path, name)
    return LoweredKernel((str(path), name), _config_of(path, name, cx)["constexprs"])


def _params(lk: LoweredKernel, name: str, trace, args: dict) -> dict:
    """The IR params for a trace: the generated prologue's integers, or the C value of a param
    the IR derives inside a partition (``N_3`` for ``N % 3``)."""
    derived = DERIVED.get(name, {})
    return {p.name: (trace.prologue[p.name] if p.name in trace.prologue else derived[p.name](args))
            for p in lk.program.params}


def _phases(lk: LoweredKernel, params: dict) -> collections.Counter:
    """(barrier array, stage) -> how many phases the verified events complete on it: one per
    committed index on each full array of the pipe's groups, one per released index on each empty
    array (counted from the unrolled IR; the plan only names the arrays)."""
    phases: collections.Counter = collections.Counter()
    seen = set()
    for ops in lk.expected(params).values():
        for e in ops:
            ev = e.instance.event
            if e.op == EXPECT or e.op.startswith(ARRIVE):
                key = (e.array, e.stage, ev.pipe, e.instance.index, ev.verb in ("release",))
                if key not in seen:
                    seen.add(key)
                    phases[(e.array, e.stage)] += 1
    return phases


def _arrival_problems(lk: LoweredKernel, trace, params: dict) -> list[str]:
    """Every (barrier, stage) receives init count x phases arrivals: an elected arrive and an
    expect-tx count one, a per-thread arrive (cp.async or eager) the partition's threads."""
    warps = [p.warps for p in lk.info.partitions]
    got: collections.Counter = collections.Counter()
    for tp in trace.partitions:
        for o in tp.ops:
            if o.op in (ARRIVE, EXPECT):
                got[(o.array, o.stage)] += 1
            elif o.op in (ARRIVE_CP_ASYNC, ARRIVE_THREAD):
                got[(o.array, o.stage)] += 32 * warps[tp.index]
            elif o.op.startswith(ARRIVE):
                return [f"{tp.function}: an arrive of an unexpected form {o}"]
    want = _phases(lk, params)
    problems = []
    for key in sorted(set(got) | set(want)):
        init = trace.inits.get(key)
        if init is None or got[key] != init * want[key]:
            problems.append(f"{key[0]}[{key[1]}]: {got[key]} arrivals, init count {init}, "
                            f"{want[key]} phases completed by the verified events")
    return problems


def _named_problems(lk: LoweredKernel, trace, name: str, named_warps: dict = None) -> list[str]:
    """Every bar.arrive / bar.sync counts 32 x (writer warps + reader warps) of its pipe (given
    per kernel in NAMED_WARPS, or ``named_warps``), each pipe has an id of its own, and the id is
    no other pipe's."""
    plans = lk.gen.plans
    ids = {pn: f"bar{pp.named[0]}" for pn, pp in plans.items() if pp.named}
    warps = NAMED_WARPS.get(name, {}) if named_warps is None else named_warps
    problems = []
    if set(ids) != set(warps):
        problems.append(f"named pipes {sorted(ids)}, expected {sorted(warps)}")
    if len(set(ids.values())) != len(ids):
        problems.append(f"two named pipes share a barrier id: {ids}")
    threads = {bar: 32 * warps[pn] for pn, bar in ids.items() if pn in warps}
    for tp in trace.partitions:
        for o in tp.ops:
            if o.op in (NAMED_ARRIVE, NAMED_SYNC) and threads.get(o.array) != o.stage:
                problems.append(f"{tp.function}: generated line {o.line}: {o.op} {o.array} "
                                f"counts {o.stage} threads, the pipe's partitions have "
                                f"{threads.get(o.array)}")
    return problems


def _check(lk: LoweredKernel, name: str, args: dict, source: str = None,
           named_warps: dict = None) -> list[str]:
    src = lk.gen.source if source is None else source
    tr = trace_gluon(src, lk.gen.kernel, args, {c: lk.constexprs[c] for c in lk.info.constexprs},
                     release_rings=release_rings_of(lk.gen.plans))
    params = _params(lk, name, tr, args)
    # a value the generated prologue computes must be one the verifier checked (a param's
    # domain: N % 3 in [-2, 2] as C computes it, not [0, 2])
    outside = [f"param {p.name} = {params[p.name]} is outside its verified domain"
               for p in lk.program.params if not p.contains(params[p.name])]
    problems = outside + compare(lk.expected(params), tr, lk.partitions, src) + tr.violations
    problems += _arrival_problems(lk, tr, params) + _named_problems(lk, tr, name, named_warps)
    return [f"{name} {args} (params {params}): {p}" for p in problems]


# ---------------------------------------------------------------------------------- verdicts

@pytest.mark.parametrize("name,cx", SETTINGS, ids=SETTING_IDS)
def test_tle_dump_verdict(name, cx, tmp_path):
    path = _write(tmp_path, name)
    want, fixes = VERDICT[name]
    flags = [f"--param={k}={v}" for k, v in _config_of(path, name, cx)["constexprs"].items()]
    for fix in fixes or [[]]:
        rc, text = _dump(["--graph", *flags, *fix, str(path)])
        if want == "verified":
            assert rc == 0 and re.search(rf"{name}: verified for (every value|its single)", text), \
                text
        else:
            assert rc == 3 and f"{name}: bounded:" in text, text


@pytest.mark.parametrize("name,cx", SETTINGS, ids=SETTING_IDS)
def test_compiles_for_sm90a(name, cx, tmp_path):
    from tle_compiler.lowering import compile_kernel

    path = _write(tmp_path, name)
    config = _config_of(path, name, cx)
    c = compile_kernel((str(path), name), config["signature"], config["constexprs"])
    assert ".target sm_90a" in c.asm["ptx"] and c.asm["cubin"]
    if name in TMA_KERNELS:
        from .test_lowering_adversarial_tma import _tx_problems

        problems, walk = _tx_problems(c.tle_generated.source, name, config["signature"])
        assert not problems and walk.copies >= 1, "\n".join(problems)


_TABLE_ROW = re.compile(r"^#\s+(\w+)\.full\[g(\d+)\]\S*\s+\d+\s.*expect-tx=(\d+)", re.M)
_EXPECT = re.compile(r"mbarrier\.expect\((\w+)_full(\d+)\.index\([^)]*\), (\d+)\)")


@pytest.mark.parametrize("name,cx", [s for s in SETTINGS if s[0] in TMA_KERNELS],
                         ids=[i for s, i in zip(SETTINGS, SETTING_IDS) if s[0] in TMA_KERNELS])
def test_expect_tx_is_the_barrier_tables(name, cx, tmp_path):
    """Every mbarrier.expect of the generated code declares the expect-tx bytes tle-dump's barrier
    table prints for that full barrier (pipe, group), and every group the table gives bytes to
    has its expect."""
    path = _write(tmp_path, name)
    flags = [f"--param={k}={v}" for k, v in _config_of(path, name, cx)["constexprs"].items()]
    _, table = _dump([*flags, str(path)])
    want = {(pipe, int(g)): int(n) for pipe, g, n in _TABLE_ROW.findall(table) if int(n)}
    assert want, table
    src = _lowered(tmp_path, name, cx).gen.source
    got = {}
    for pipe, g, n in _EXPECT.findall(src):
        got.setdefault((pipe, int(g)), set()).add(int(n))
    assert got == {k: {v} for k, v in want.items()}, (got, want)


@pytest.mark.parametrize("name,cx", SETTINGS, ids=SETTING_IDS)
def test_generated_barrier_operations_are_the_verified_events(name, cx, tmp_path):
    lk = _lowered(tmp_path, name, cx)
    problems = []
    for args in ARGS[name]:
        problems += _check(lk, name, args)
    assert not problems, "\n".join(problems)
    # not vacuous: some argument runs barrier operations
    busiest = max(sum(len(tp.ops) for tp in lk.trace(a).partitions) for a in ARGS[name])
    assert busiest >= 2, f"{name}: at most {busiest} barrier operations traced"


# --------------------------------------------------- a default partition of other warps

#: kernel, warps the compile gives the default partition (not its @tle.jit num_warps), the
#: warps of each named pipe's two partitions then
OTHER_WARPS = [("named_exchange_4_2", 8, {"max0": 10, "max1": 10}),
               ("named_exchange_4_8", 8, {"max0": 16, "max1": 16}),
               ("named_single_use", 4, {"x": 5}),
               ("named_two_partners", 4, {"x": 5, "y": 8}),
               ("named_between_workers", 8, {"x": 3}),
               ("named_wgmma", 8, {"x": 12, "back": 12})]


@pytest.mark.parametrize("name,num_warps,named_warps", OTHER_WARPS,
                         ids=[f"{n}-{w}" for n, w, _ in OTHER_WARPS])
def test_named_barriers_count_the_default_partitions_launch_warps(name, num_warps, named_warps,
                                                                  tmp_path):
    """compile_kernel(num_warps=W) (a launch's ``num_warps=``) runs the default partition on W
    warps: its named barriers must count W warps of threads, in the Gluon and in the PTX, and the
    traced events stay the verified ones. Before lowering/compile.py's with_default_warps, the
    kernel IR kept the @tle.jit warps and every named pipe at the default partition counted them
    (bar.sync 15, 192 for 8 + 2 warps)."""
    from tle_compiler.lowering import compile_kernel
    from tle_compiler.lowering.compile import kernel_info_of, with_default_warps

    path = _write(tmp_path, name)
    config = _config_of(path, name, {})
    c = compile_kernel((str(path), name), config["signature"], config["constexprs"],
                       num_warps=num_warps)
    want = {32 * w for w in named_warps.values()}
    ptx_counts = {int(n) for n in re.findall(r"bar\.(?:sync|arrive) 1[0-5], (\d+);",
                                             c.asm["ptx"])}
    assert ptx_counts == want, (ptx_counts, want)
    info = with_default_warps(kernel_info_of((str(path), name), config["constexprs"]), num_warps)
    assert next(p for p in info.partitions if p.default).warps == num_warps
    lk = LoweredKernel(info, config["constexprs"], signature=config["signature"])
    assert lk.gen.source == c.tle_generated.source
    problems = []
    for args in ARGS[name]:
        problems += _check(lk, name, args, named_warps=named_warps)
    assert not problems, "\n".join(problems)


# ------------------------------------------------------------------- the checks are live

def test_a_release_without_its_wgmma_wait_is_seen(tmp_path):
    """Deleting the warpgroup_mma_wait the lowering puts before the release (generated from
    wg_release_after_dot) leaves the QK wgmma in flight at the release: the trace reports it."""
    lk = _lowered(tmp_path, "wg_release_after_dot", {})
    lines = lk.gen.source.splitlines()
    rel = next(i for i, ln in enumerate(lines) if "mbarrier.arrive(kv_empty" in ln)
    wait = max(i for i in range(rel) if "warpgroup_mma_wait(" in lines[i])
    indent = lines[wait][:len(lines[wait]) - len(lines[wait].lstrip())]
    mutated = lines[:wait] + [indent + "pass"] + lines[wait + 1:]
    assert not _check(lk, "wg_release_after_dot", {"NT": 2})
    problems = _check(lk, "wg_release_after_dot", {"NT": 2}, "\n".join(mutated))
    assert any("may still be in flight" in p for p in problems), problems


def test_a_named_barrier_thread_count_other_than_the_partitions_is_seen(tmp_path):
    """A bar.sync counting only the reader's threads (the writer's warps left out) is reported."""
    lk = _lowered(tmp_path, "named_exchange_4_2", {})
    src = lk.gen.source
    assert src.count(", 192; mov.b32") >= 4, src
    mutated = src.replace("bar.sync 15, 192;", "bar.sync 15, 128;", 1)
    assert mutated != src
    problems = _check(lk, "named_exchange_4_2", {"N": 2}, mutated)
    assert any("counts 128 threads" in p for p in problems), problems


def test_a_param_value_outside_its_verified_domain_is_seen(tmp_path):
    """kl_mod is verified for NT = (L + 1) % 4 in -3 ... 3: a prologue computing % 8 instead runs
    NT = 7 at L = 6, a value never checked, even though its events match the IR's for NT = 7."""
    lk = _lowered(tmp_path, "kl_mod", {})
    src = lk.gen.source
    mutated = src.replace("NT = ((L + 1) % 4)", "NT = ((L + 1) % 8)")
    assert mutated != src
    assert not _check(lk, "kl_mod", {"L": 6})
    problems = _check(lk, "kl_mod", {"L": 6}, mutated)
    assert any("NT = 7 is outside its verified domain" in p for p in problems), problems


def test_an_init_count_other_than_the_arrivals_is_seen(tmp_path):
    lk = _lowered(tmp_path, "loop_nested_np_late", {"NP": 2})
    src = lk.gen.source
    mutated = re.sub(r"(mbarrier\.init\(p_empty0\.index\(1\), count=)1\)", r"\g<1>2)", src)
    assert mutated != src
    problems = _check(lk, "loop_nested_np_late", {"N": 2}, mutated)
    assert any("init count 2" in p for p in problems), problems


# ------------------------------------------------------------------------------------ refused

#: name -> (source, the reason tle-dump gives, text of a line an error is reported at)
REFUSED: dict[str, tuple[str, str, str]] = {}

REFUSED["named_one_shot"] = (KERNELS["named_single_use"].replace(
    "named_single_use", "named_one_shot").replace('barrier="named",',
                                                  'barrier="named", one_shot=True,'),
    "is not one_shot", 'barrier="named"')

REFUSED["named_two_readers"] = (HEAD + '''
@tle.jit(num_warps=4)
def named_two_readers(a_ptr, out_ptr):
    x = tle.pipe(capacity=1, barrier="named", readers=("u", "v"),
                 m=tle.gpu.alloc([1, 64], tl.float32))
    tle.gpu.warp_specialize([(send, (x, a_ptr)), (recv, (x.reader("u"), out_ptr, 0)),
                             (recv, (x.reader("v"), out_ptr, 64))], [2, 1], [232, 232])


def send(x, a_ptr):
    w = x.writer()
    s = w.acquire(0)
    tl.store(tle.gpu.local_ptr(s.m), tl.load(a_ptr + tl.arange(0, 64)))
    w.commit(0)


def recv(r, out_ptr, o):
    res = r.wait(0)
    v = tl.load(tle.gpu.local_ptr(res.slot.m))
    r.release(0)
    tl.store(out_ptr + o + tl.arange(0, 64), v)
''' + _config({"a_ptr": "*fp32", "out_ptr": "*fp32"}), "at most one reader", 'barrier="named"')

REFUSED["named_step_2"] = (_exchange("named_step_2", 4, 2, head="for p in range(0, N, 2):"),
                           "phase-aliasing", "w.commit(p)")

REFUSED["loop_bound_chosen"] = (_tiles(
    "loop_bound_chosen", "if N > 2:\n    for i in range(N):\n        put(w, x_ptr, i)\nelse:\n"
    "    for i in range(2):\n        put(w, x_ptr, i)",
    "T = N if N > 2 else 2\nfor i in range(T):\n    take(r, y_ptr, i)"), "non-affine-loop",
    "for i in range(T):")

REFUSED["loop_index_halved"] = (_tiles(
    "loop_index_halved", "for i in range(0, 2 * N, 2):\n    put(w, x_ptr, i // 2)",
    "for i in range(N):\n    take(r, y_ptr, i)"), "must be affine", "s = w.acquire(i)")

# the writer commits N // 2 + 1 + N % 3 tiles, the reader reads that many in one loop: equal
# under C's // and % for N >= 0 only (N = -1: the writer's second loop runs -1 times, the
# reader's single loop 0 times, so the writer's tile 0 is never read)
REFUSED["loop_trips_disagree_below_zero"] = (_tiles(
    "loop_trips_disagree_below_zero",
    "for i in range(N // 2 + 1):\n    put(w, x_ptr, i)\nfor i in range(N % 3):\n"
    "    put(w, x_ptr, N // 2 + 1 + i)",
    "for i in range(N // 2 + 1 + N % 3):\n    take(r, y_ptr, i)"), "when N=-1", "w.commit(i)")

TMA_FILL = HEAD + '''BM = tl.constexpr(64)
BN = tl.constexpr(64)


@tle.jit(num_warps=4)
def {NAME}(x_desc, y_ptr, N, M):
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, BM, BN], tl.bfloat16))
    tle.gpu.warp_specialize([(fill, (p, x_desc, N, M)), (drain, (p, y_ptr, N))], [4], [232])


def fill(p, x_desc, N, M):
    w = p.writer()
    for i in range(N):
        s = w.acquire(i)
{WINDOW}
        w.commit(i)


def drain(p, y_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    r = p.reader()
    for i in range(N):
        res = r.wait(i)
        tl.store(y_ptr + i * BM * BN + offs, tl.load(tle.gpu.local_ptr(res.slot.t)))
        r.release(i)
''' + _config({"x_desc": "tensordesc<bf16[64, 64]>", "y_ptr": "*bf16", "N": "i32", "M": "i32"})


def _tma(name: str, window: str) -> str:
    return TMA_FILL.replace("{NAME}", name).replace("{WINDOW}", _indent(window, 8))


REFUSED["tma_copy_if_param"] = (_tma("tma_copy_if_param", '''if M > 0:
    tle.gpu.tma_load(s.t, x_desc, [i * BM, 0])
else:
    tle.gpu.tma_load(s.t, x_desc, [0, i * BN])'''), "tma-window",
    "tle.gpu.tma_load(s.t, x_desc, [i * BM, 0])")
REFUSED["tma_copy_if_loop_var_else_store"] = (_tma(
    "tma_copy_if_loop_var_else_store", '''if i % 2 == 0:
    tle.gpu.tma_load(s.t, x_desc, [i * BM, 0])
else:
    tl.store(tle.gpu.local_ptr(s.t), tl.zeros([BM, BN], tl.bfloat16))'''), "tma-field-access",
    "tl.store(tle.gpu.local_ptr(s.t)")
REFUSED["tma_copy_in_window_loop"] = (_tma("tma_copy_in_window_loop", '''for j in range(2):
    tle.gpu.tma_load(s.t, x_desc, [(i + j) * BM, 0])'''), "tma-window", "[(i + j) * BM, 0]")
REFUSED["tma_two_copies_one_field"] = (_tma(
    "tma_two_copies_one_field", '''tle.gpu.tma_load(s.t, x_desc, [i * BM, 0])
tle.gpu.tma_load(s.t, x_desc, [(i + 1) * BM, 0])'''), "copied twice", "[(i + 1) * BM, 0]")

REFUSED["wg_tile_of_previous_slot"] = (_attention("wg_tile_of_previous_slot", '''if NT > 0:
    res = r.wait(0)
    k_prev = tl.load(tle.gpu.local_ptr(res.slot.k))
    for t in range(1, NT):
        nxt = r.wait(t)
        acc = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q)), tl.trans(k_prev), acc)
        r.release(t - 1)
        k_prev = tl.load(tle.gpu.local_ptr(nxt.slot.k))
    acc = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q)), tl.trans(k_prev), acc)
    r.release(NT - 1)'''), "unknown-slot", "tl.trans(k_prev), acc)")


# a tile loaded from the slot, the slot released, then the dot: the load is lazy (the wgmma reads
# the slot), so the dot is a read after the release
REFUSED["wg_dot_after_release_of_its_tile"] = (_attention(
    "wg_dot_after_release_of_its_tile", '''for a in range(NT):
    res = r.wait(a)
    kt = tl.load(tle.gpu.local_ptr(res.slot.k))
    r.release(a)
    acc = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q)), tl.trans(kt), acc)'''),
    "after release(0)", "acc = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q)), tl.trans(kt), acc)")


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_before_lowering(name, tmp_path):
    """tle-dump rejects the kernel (exit 1) with the reason at its line, and the lowering lowers
    nothing of it."""
    from tle_compiler.lowering import gluon_source

    text, reason, marker = REFUSED[name]
    path = _write(tmp_path, name, text)
    rc, out = _dump([str(path)])
    assert rc == 1 and reason in out, out
    lines = [k + 1 for k, ln in enumerate(text.splitlines()) if marker in ln]
    errors = [int(m) for m in re.findall(rf"{re.escape(str(path))}:(\d+): error: ", out)]
    assert lines and errors and set(errors) & set(lines), (lines, out)
    with pytest.raises(TleError):
        gluon_source((str(path), name))
