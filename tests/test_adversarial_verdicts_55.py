"""A fifty-fifth adversarial round (adversarial round 55): the claims tle-dump prints beside the
bare verdict. A rejection's counterexample (the deadlock cycle with its events and loop values,
the "when N=..." of a fault, its lines) is replayed on the executable semantics
(tle_compiler/semantics/simulator.py, which shares no code with the verifier's passes) and its
lines are checked against the statements of the file (helpers, statements over several lines,
decorators over several lines, ``tl.static_range`` unrolls, two kernels in one file); the barrier
table, ``--graph``, ``--format json`` and ``--print-ir`` are checked against first principles
(the parity of index ``e`` on a ring of capacity ``C`` is ``(e // C) & 1``, a TMA box's bytes
are its elements times the element size) and against the Gluon ``--gluon`` prints (its
``mbarrier.wait`` parities, ``mbarrier.expect`` bytes, ``mbarrier.init`` counts, ``bar.sync``
ids and thread counts); and the exit statuses and streams of several files on one command line,
``-q`` and ``--format json`` for every kind of verdict and refusal. Each case is a small kernel
written to a file and read by tle-dump's main().

Bugs found, one line each (before the fixes that came with this file):

- the barrier table, ``--format json`` (a waiter's ``"parity"``) and the ``.pipe`` report gave
  one parity formula per partition and verb, the first event's: on a one-slot ring written by
  ``acquire(2 * i)`` and ``acquire(2 * i + 1)`` both acquires were listed as waiting at
  ``((2*i) & 1) ^ 1``, which the second never does (the Gluon waits it at ``((2*i + 1) & 1) ^
  1``), and every closing ``wait(N_TILES)`` (tle_kernels/examples/ring.py, close.py, tma_ring.py,
  slot_overlap.py, chain.py) was listed at the loop's ``(t // 3) & 1``, a formula of a variable
  not in its scope; FIXED: a waiter is listed once per formula, each with the lines of its events
  (passes/infer_barriers.py).
- a pipe whose two readers live in one partition printed its empty barrier's arrivers as
  ``cons.release, cons.release`` and its ``--graph`` edge as ``prod --p(t)--> cons, cons``: the
  two arrivals of count 2 told apart nowhere; FIXED: ``cons[l].release, cons[r].release`` and
  ``cons[l], cons[r]``, as the waiters were already named (cli/report.py).
- ``-p infer-barriers --print-ir`` (any protocol pipeline) of a TMA ring whose field shape holds
  constexprs the protocol is not read with printed its full barrier's ``expect_tx = 0``, a group
  whose commits expect no bytes (the phase would complete before the copy lands), where the
  table says "?" and JSON null and the lowering expects 16384; FIXED: None, "not known"
  (passes/kir_protocol.py ``tma_bytes``, ir/attrs.py ``BarrierDecl``).
- ``-p emit-gluon`` of a .py kernel lowered without DEFAULT_CONFIG's argument types and so
  printed another module than ``--gluon`` (``store(_v1.to(gl.float32))`` for ``store(_v1)``;
  element types also decide byte-load layouts), where --help and cli/print_ir.py say it prints
  the module --gluon prints; FIXED: typed as --gluon types it, untyped where tle-dump's own
  translation is (cli/print_ir.py ``_typed``).
- workers whose register requests leave the default partition less than setmaxnreg's minimum
  were refused at the default partition's ``def`` line, where language/registers.py says the
  error is at the warp_specialize call (which holds the requests); FIXED: at the call, for the
  frontend's reading (language/registers.py ``check_registers(at=)``,
  frontend/partition_rules.py, frontend/build.py).

Checked and held (pinned below): every deadlock cycle printed for the kernels below (a cycle
across two pipes, one that only opens at a later iteration through a helper called from an
``if`` and a ``tl.static_range`` unroll, a loop starting at 3 or 10, three partitions where the
writer's acquire waits on the second reader's release, a named pipe's ``bar.sync`` wait) is a
real execution: the simulator deadlocks at the printed param values with each partition blocked
at the printed line, and no smaller value deadlocks them all (a value below the cycle is
verified with --param, as the simulator runs it); the loop values in the notes are the Python
values of the loop variables (``at i=5``, ``at u=13``), not iteration counts; a phase-aliasing fault names the
commit's index and loop value and the simulator finds a fault there; lines point at the event's
own line (a ``r.wait(`` split over two lines: its first line; a load split over three: the load's
line; a helper: the helper's line) and stay right under a decorator written over three lines and
beside a second kernel of the file; a memory race names the loop values at which the two stores
overlap; expect-tx is the sum of the box bytes of the group's TMA copies (fp8 [64, 128] = 8192,
fp32 [32, 32] = 4096, a field group per reader view) and equals the Gluon's ``mbarrier.expect``;
JSON ``init_count`` equals Gluon's ``mbarrier.init`` count for the partition / tma / tma-mixed
units (258 = 1 expect-tx + 1 elected + 32 x 8 per-thread arrivals of an 8-warp writer); a named
pipe between an 8-warp default partition and a 4-warp worker gets ``bar.arrive 15, 384`` /
``bar.sync 15, 384`` and JSON ``bar_id`` 15, ``init_count`` 384; several files give the worst
status (2 over 1 over 3 over 0, in either order), each file's ``exit N`` line on stderr and one
JSON object whose files keep their own statuses; ``--format json`` parses for verified, rejected,
bounded, a syntax error, no kernel and a missing file; ``-q`` prints nothing on stdout; a file
whose check breaks tle-dump (an internal error) is its own exit 3 beside the others.

Tried and held, not pinned: a deadlock reached through a derived param (``M = N // 64``) is
reported "when N=64 (M=1)"; two params (``N + 3`` commits, ``2 * M`` waits) name values at which
the semantics faults; ``--print-ir``'s ``errors`` and ``verdict`` attributes repeat stderr's lines
and values; ``-q`` prints no kernel IR (``--print-ir``, ``-p materialize-barriers``) and still the
Gluon (``--gluon``, ``-p emit-gluon``); ``--param`` values another than DEFAULT_CONFIG's with a
descriptor signature are verified with an untyped translation (documented) while --gluon refuses
them (exit 2); ``--graph``'s DOT draws every commit -> wait and release -> acquire pair of a
field group (a barrier picture, not a happens-before one).

Fixed since: the summary line of each kernel of a file with several gave the file's elapsed
time as the kernel's; it now gives the kernel's own and the file's (cli/dump.py).
tle_kernels/sparse_mla_narrow.py's ``-p emit-gluon`` printed its eager-publish barrier offsets as
0 with the comment that they came from Triton's allocator, where ``--gluon`` (the compiled
kernel's source) prints the allocator's: the pass, which compiles nothing, now marks them as
placeholders in the source and --help says so (lowering/debug.py ``offsets_src``). The
lowering's own register check (budgets written with constexprs, evaluated when the kernel is
translated) named the default partition's ``def`` line; the budgets' evaluation now refuses
them at the budget list (frontend/budgets.py ``with_budgets``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tle_compiler.frontend import read_file
from tle_compiler.semantics.simulator import simulate

from .adversarial_support import run_dump, write_kernel

HEAD = '''import triton.language as tl
import tle_compiler as tle
'''

CONFIG = ('\n\nDEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"}, '
          '"constexprs": {}, "num_warps": 4}\n')


def report(tmp_path, capsys, text: str, *flags: str, name: str = "kernel.py"):
    """tle-dump's exit code, stdout and stderr for the kernel file ``text`` with ``flags``."""
    path = write_kernel(tmp_path, text, name)
    return run_dump(capsys, *flags, str(path))


def table(out: str) -> dict[str, list[str]]:
    """The barrier table of a text report: row name -> its columns."""
    rows = {}
    for line in out.splitlines():
        if line.startswith("#   ") and "[g" in line:
            cols = re.split(r"\s{2,}", line[4:].strip())
            rows[cols[0]] = cols[:4] + ["  ".join(cols[4:])]
    return rows


def waits_of(column: str) -> list[tuple[str, str]]:
    """``prod.acquire @ F, cons[l].wait @ G`` -> [(who.verb, formula), ...] (formulas may hold
    commas only inside parentheses, which these do not)."""
    out = []
    for item in re.split(r", (?=[\w\[\]]+\.\w+ @ )", column):
        who, _, phi = item.partition(" @ ")
        out.append((who, phi))
    return out


def evaluate(formula: str, **env: int) -> int:
    """A parity formula of the table or the Gluon (``((2*i + 1) & 1) ^ 1``) at ``env``."""
    return eval(formula, {"__builtins__": {}}, dict(env))  # noqa: S307 - our own formulas


# ------------------------------------------------------------------ parities in the barrier table

TWO_ACQUIRES = HEAD + '''

@tle.jit(num_warps=4)
def k(x_ptr, y_ptr, N):
    p = tle.pipe(capacity=1, t=tle.gpu.alloc([1, 64], tl.float32))
    tle.gpu.warp_specialize([(prod, (p, x_ptr, N)), (cons, (p, y_ptr, N))], [4], [64])


def prod(p, x_ptr, N):
    w = p.writer()
    for i in range(N):
        s0 = w.acquire(2 * i)
        tl.store(tle.gpu.local_ptr(s0.t), tl.load(x_ptr + tl.arange(0, 64)))
        w.commit(2 * i)
        s1 = w.acquire(2 * i + 1)
        tl.store(tle.gpu.local_ptr(s1.t), tl.load(x_ptr + tl.arange(0, 64)))
        w.commit(2 * i + 1)


def cons(p, y_ptr, N):
    r = p.reader()
    for i in range(N):
        for j in range(2):
            s = r.wait(2 * i + j)
            tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(s.slot.t)))
            r.release(2 * i + j)
''' + CONFIG


def test_each_acquire_is_listed_at_its_own_parity(tmp_path, capsys):
    """Bug: both acquires were listed at ``((2*i) & 1) ^ 1``; the one of line 17 waits at the
    parity of index 2i + 1 on a one-slot ring, ((2i + 1) & 1) ^ 1 = 0, as its Gluon does."""
    code, out, _ = report(tmp_path, capsys, TWO_ACQUIRES)
    assert code == 0
    waits = waits_of(table(out)["p.empty[g0][0]"][3])
    assert [w for w, _ in waits] == ["prod.acquire", "prod.acquire"], waits
    for i in range(4):  # first principles: acquire(e) on capacity 1 waits at ((e // 1) & 1) ^ 1
        got = sorted(evaluate(phi, i=i) for _, phi in waits)
        assert got == sorted([((2 * i) & 1) ^ 1, ((2 * i + 1) & 1) ^ 1]) == [0, 1], (i, waits)
    # JSON: one waiter per formula, each with its own line
    code, out, _ = report(tmp_path, capsys, TWO_ACQUIRES, "--format", "json")
    (empty,) = [b for b in json.loads(out)["kernels"][0]["barriers"] if b["kind"] == "empty"]
    by_line = {tuple(w["lines"]): w["parity"] for w in empty["waiters"]}
    assert set(by_line) == {(14,), (17,)}, empty["waiters"]
    assert all(evaluate(by_line[(14,)], i=i) == 1 for i in range(4))
    assert all(evaluate(by_line[(17,)], i=i) == 0 for i in range(4))
    # the Gluon waits the two acquires at these parities
    code, out, _ = report(tmp_path, capsys, TWO_ACQUIRES, "--gluon")
    gluon = re.findall(r"mbarrier\.wait\(p_empty0\.index\(0\), (.*)\)\n", out)
    assert len(gluon) == 2, out
    assert [[evaluate(g, i=i) for i in range(4)] for g in gluon] == [[1] * 4, [0] * 4]


@pytest.mark.parametrize("rel,row,closing", [
    ("tle_kernels/examples/ring.py", "ring.full[g0][0..2]", "sum_tiles.wait @ (N_TILES // 3) & 1"),
    ("tle_kernels/gpu_tests/close.py", "ring.full[g0][0..1]", "consume.wait @ (N_TILES // 2) & 1"),
])
def test_a_closing_wait_is_listed_at_its_own_parity(capsys, rel, row, closing):
    """Bug: the closing ``wait(N_TILES)`` was listed only through the loop's formula ``(t // 3)
    & 1`` (of a variable not in its scope); it waits at (N_TILES // 3) & 1."""
    code, out, _ = run_dump(capsys, "--no-locations", rel)
    assert code == 0
    waits = table(out)[row][3]
    assert closing in waits, waits
    assert waits.count(".wait @ ") == 2, waits


# ------------------------------------------------------------------ two readers in one partition

SAME_PARTITION = HEAD + '''

@tle.jit(num_warps=4)
def k(x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    p = tle.pipe(capacity=2, readers=("l", "r"), t=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(prod, (p, x_ptr, N)), (cons, (p, y_ptr, N))], [4], [64])


def prod(p, x_ptr, N):
    w = p.writer()
    for i in range(N):
        s0 = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s0.t), tl.load(x_ptr + tl.arange(0, 64)))
        w.commit(i)


def cons(p, y_ptr, N):
    a = p.reader("l")
    b = p.reader("r")
    for i in range(N):
        s = a.wait(i)
        tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(s.slot.t)))
        a.release(i)
        u = b.wait(i)
        tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(u.slot.t)))
        b.release(i)
''' + CONFIG


def test_two_readers_of_one_partition_are_told_apart(tmp_path, capsys):
    """Bug: "cons.release, cons.release" and "prod --p(t)--> cons, cons"; the empty barrier's
    count 2 is one release of each reader, and the Gluon inits it with 2 and arrives twice."""
    code, out, _ = report(tmp_path, capsys, SAME_PARTITION, "--graph")
    assert code == 0
    rows = table(out)
    assert rows["p.empty[g0][0..1]"][1:3] == ["2", "cons[l].release, cons[r].release"], rows
    assert rows["p.full[g0][0..1]"][3] == "cons[l].wait @ (i // 2) & 1, cons[r].wait @ (i // 2) & 1"
    assert "#   prod --p(t)--> cons[l], cons[r]    capacity 2" in out
    code, out, _ = report(tmp_path, capsys, SAME_PARTITION, "--gluon")
    assert re.findall(r"mbarrier\.init\(p_empty0\.index\(\d\), count=(\d+)\)", out) == ["2", "2"]
    assert len(re.findall(r"mbarrier\.arrive\(p_empty0\.", out)) == 2


# ------------------------------------------------------------------ TMA bytes, init counts, ids

TMA_CONSTEXPR = HEAD + '''

@tle.jit(num_warps=4)
def k(x_desc, y_ptr, N, BM: tl.constexpr, BN: tl.constexpr):
    ring = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, BM, BN], tl.bfloat16))
    tle.gpu.warp_specialize([(produce, (ring, x_desc, N, BM)),
                             (consume, (ring, y_ptr, N, BM, BN))], [4], [232])


def produce(ring, x_desc, N, BM: tl.constexpr):
    w = ring.writer()
    for t in range(N):
        slot = w.acquire(t)
        tle.gpu.tma_load(slot.tile, x_desc, [t * BM, 0])
        w.commit(t)


def consume(ring, y_ptr, N, BM: tl.constexpr, BN: tl.constexpr):
    r = ring.reader()
    for t in range(N):
        res = r.wait(t)
        tile = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t)
        tl.store(y_ptr + t * BM * BN + tl.arange(0, BM)[:, None] * BN
                 + tl.arange(0, BN)[None, :], tile)


DEFAULT_CONFIG = {
    "signature": {"x_desc": "tensordesc<bf16[64, 128]>", "y_ptr": "*bf16", "N": "i32",
                  "BM": "constexpr", "BN": "constexpr"},
    "constexprs": {"BM": 64, "BN": 128},
    "num_warps": 4,
}
'''


def test_print_ir_does_not_claim_a_tma_commit_expects_no_bytes(tmp_path, capsys):
    """Bug: ``-p infer-barriers --print-ir`` of a TMA ring whose field shape holds constexprs the
    protocol is not read with printed the full barrier's ``expect_tx = 0`` (a group whose commits
    expect no bytes: its phase would complete before the copy lands), where the table says "?"
    and JSON null; now None. The lowering pipeline (DEFAULT_CONFIG's BM = 64, BN = 128) and the
    Gluon expect 64 x 128 x 2 = 16384, and the .kir printed reads back and lowers so."""
    path = write_kernel(tmp_path, TMA_CONSTEXPR)
    code, out, _ = run_dump(capsys, "-p", "infer-barriers", "--print-ir", str(path))
    assert code == 0
    assert re.findall(r"name = 'ring_full0'.*?expect_tx = (\w+)", out) == ["None"], out
    code, out, _ = run_dump(capsys, str(path))
    assert table(out)["ring.full[g0][0..1]"][4].endswith("expect-tx=?")
    code, out, _ = run_dump(capsys, "--format", "json", str(path))
    assert [b["expect_tx"] for b in json.loads(out)["kernels"][0]["barriers"]
            if b["kind"] == "full"] == [None, None]
    code, out, _ = run_dump(capsys, "-p", "materialize-barriers", str(path))
    assert re.findall(r"name = 'ring_full0'.*?expect_tx = (\w+)", out) == ["16384"]
    assert "tx_bytes = 16384" in out
    code, out, _ = run_dump(capsys, "--gluon", str(path))
    assert re.findall(r"mbarrier\.expect\(ring_full0\.index\(\w+\), (\d+)\)", out) == ["16384"]
    kir = tmp_path / "k.kir"
    code, _, _ = run_dump(capsys, "-p", "infer-barriers", "--print-ir", "-o", str(kir), str(path))
    assert code == 0
    code, out, _ = run_dump(capsys, "-p", "emit-gluon", str(kir))
    assert code == 0
    assert re.findall(r"mbarrier\.expect\(ring_full0\.index\(\w+\), (\d+)\)", out) == ["16384"]
    # bound by --param, the table knows them: 128 x 64 x 2
    code, out, _ = run_dump(capsys, "--param", "BM=128", "--param", "BN=64", str(path))
    assert table(out)["ring.full[g0][0..1]"][4].endswith("expect-tx=16384")


TMA_GROUPS = HEAD + '''

@tle.jit(num_warps=4)
def k(a_desc, b_desc, x_ptr, y_ptr, z_ptr, N):
    tle.assume(N >= 0)
    ring = tle.pipe(capacity=2, readers=("l", "r"),
                    a=tle.gpu.alloc([2, 64, 128], tl.float8e4nv),
                    b=tle.gpu.alloc([2, 32, 32], tl.float32),
                    g=tle.gpu.alloc([2, 64, 64], tl.bfloat16),
                    c=tle.gpu.alloc([2, 64], tl.int16))
    tle.gpu.warp_specialize([(cl, (ring, y_ptr, N)),
                             (produce, (ring, a_desc, b_desc, x_ptr, N)), (cr, (ring, z_ptr, N))],
                            [8, 4], [152, 152])


def produce(ring, a_desc, b_desc, x_ptr, N):
    w = ring.writer()
    offs = tl.arange(0, 64)
    for t in range(N):
        slot = w.acquire(t)
        tle.gpu.tma_load(slot.a, a_desc, [t * 64, 0])
        tl.store(tle.gpu.local_ptr(slot.g), tl.load(x_ptr + offs[:, None] * 64 + offs[None, :]))
        tle.gpu.tma_load(slot.b, b_desc, [t * 32, 0])
        tl.store(tle.gpu.local_ptr(slot.c), offs.to(tl.int16))
        w.commit(t)


def cl(ring, y_ptr, N):
    r = ring.reader("l", fields=("a", "g", "c"))
    for t in range(N):
        res = r.wait(t)
        x = tl.load(tle.gpu.local_ptr(res.slot.a))
        g = tl.load(tle.gpu.local_ptr(res.slot.g))
        c = tl.load(tle.gpu.local_ptr(res.slot.c))
        r.release(t)
        tl.store(y_ptr + t * 64 + tl.arange(0, 64), c.to(tl.float32)
                 + tl.sum(x.to(tl.float32), 1) + tl.sum(g.to(tl.float32), 1))


def cr(ring, z_ptr, N):
    r = ring.reader("r", fields=("b", "c"))
    for t in range(N):
        res = r.wait(t)
        x = tl.load(tle.gpu.local_ptr(res.slot.b))
        c = tl.load(tle.gpu.local_ptr(res.slot.c))
        r.release(t)
        tl.store(z_ptr + t * 32 + tl.arange(0, 32), tl.sum(x, 1) + tl.sum(c.to(tl.float32), 0))


DEFAULT_CONFIG = {
    "signature": {"a_desc": "tensordesc<fp8e4nv[64, 128]>", "b_desc": "tensordesc<fp32[32, 32]>",
                  "x_ptr": "*bf16", "y_ptr": "*fp32", "z_ptr": "*fp32", "N": "i32"},
    "constexprs": {},
    "num_warps": 4,
}
'''


def test_expect_tx_and_init_counts_are_the_boxes_and_the_arrivals(tmp_path, capsys):
    """Held: per field group (a reader view each), expect-tx is the bytes of its TMA boxes (fp8
    [64, 128] = 8192; fp32 [32, 32] = 4096; none for the register-stored group), the Gluon
    expects the same bytes, and JSON's init_count is the Gluon's mbarrier.init count: the
    (a, g) group of an 8-warp writer arrives once with expect-tx, once per thread for the
    cp.async gather (256) = 257; the (b) group once (tma); the (c) group once (elected)."""
    path = write_kernel(tmp_path, TMA_GROUPS)
    code, out, _ = run_dump(capsys, str(path))
    assert code == 0, out
    rows = table(out)
    assert rows["ring.full[g0][0..1]"][4] == "(a, g)  fence=none expect-tx=8192"
    assert rows["ring.full[g1][0..1]"][4] == "(b)  fence=none expect-tx=4096"
    assert rows["ring.full[g2][0..1]"][4] == "(c)  fence=none expect-tx=0"
    assert rows["ring.empty[g2][0..1]"][1:3] == ["2", "cl[l].release, cr[r].release"]
    code, out, _ = run_dump(capsys, "--format", "json", str(path))
    units = {(b["kind"], b["group"]): (b["arrive_unit"], b["init_count"], b["expect_tx"])
             for b in json.loads(out)["kernels"][0]["barriers"]}
    assert units[("full", 0)] == ("tma-thread", 257, 8192)
    assert units[("full", 1)] == ("tma", 1, 4096)
    assert units[("full", 2)] == ("partition", 1, 0)
    assert units[("empty", 2)][1] == 2
    code, out, _ = run_dump(capsys, "--gluon", str(path))
    inits = dict(re.findall(r"mbarrier\.init\((\w+)\.index\(0\), count=(\d+)\)", out))
    for (kind, group), (_, count, _) in units.items():
        assert inits[f"ring_{kind}{group}"] == str(count), (kind, group, inits)
    expects = dict(re.findall(r"mbarrier\.expect\((\w+)\.index\(\w+\), (\d+)\)", out))
    assert expects == {"ring_full0": "8192", "ring_full1": "4096"}, expects
    assert len(re.findall(r"async_copy\.mbarrier_arrive\(ring_full0\.", out)) == 1


def test_a_named_pipe_gets_its_id_and_the_threads_of_both_partitions(capsys):
    """Held: a named pipe between an 8-warp default writer and a 4-warp reader syncs 32 x 12 =
    384 threads on barrier 15 (the first id from the top), and JSON says so."""
    src = open("tests/fixtures/named_barrier/hop_commit.ok.py").read()
    src = src.replace("@tle.jit\n", "@tle.jit(num_warps=8)\n").replace(
        '"constexprs": {}}', '"constexprs": {}, "num_warps": 8}')
    import tempfile
    from pathlib import Path
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "nb.py"
        path.write_text(src)
        code, out, _ = run_dump(capsys, "--format", "json", str(path))
        assert code == 0
        (named,) = [b for b in json.loads(out)["kernels"][0]["barriers"] if b["kind"] == "named"]
        assert (named["bar_id"], named["init_count"], named["count"]) == (15, 384, 2)
        code, out, _ = run_dump(capsys, "--gluon", str(path))
        assert '"bar.arrive 15, 384;' in out and '"bar.sync 15, 384;' in out


# ------------------------------------------------------------------ counterexamples, replayed

CROSS = HEAD + '''

@tle.jit(num_warps=4)
def k(x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, 64], tl.float32))
    q = tle.pipe(capacity=2, t=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(a, (p, q, x_ptr, N)), (b, (p, q, y_ptr, N))], [4], [64])


def a(p, q, x_ptr, N):
    w = p.writer()
    r = q.reader()
    for i in range(N):
        s = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(s.slot.t))
        r.release(i)
        o = w.acquire(i)
        tl.store(tle.gpu.local_ptr(o.t), v)
        w.commit(i)


def b(p, q, y_ptr, N):
    r = p.reader()
    w = q.writer()
    for i in range(N):
        s = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(s.slot.t))
        r.release(i)
        o = w.acquire(i)
        tl.store(tle.gpu.local_ptr(o.t), v)
        w.commit(i)
'''

# the cycle opens only at a later iteration: a waits q(0) at i = 2 (through a helper whose wait
# is written over two lines), b waits p through a tl.static_range unroll and commits q after
LATE = HEAD + '''

@tle.jit(num_warps=4)
def k(x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, 64], tl.float32))
    q = tle.pipe(capacity=1, t=tle.gpu.alloc([1, 64], tl.float32))
    tle.gpu.warp_specialize([(a, (p, q, x_ptr, N)), (b, (p, q, y_ptr, N))], [4], [64])


def get(r, i):
    s = r.wait(
        i)
    v = tl.load(tle.gpu.local_ptr(s.slot.t))
    r.release(i)
    return v


def a(p, q, x_ptr, N):
    w = p.writer()
    r = q.reader()
    for i in range(2 * N):
        o = w.acquire(i)
        tl.store(tle.gpu.local_ptr(o.t), tl.load(x_ptr + tl.arange(0, 64)))
        w.commit(i)
        if i == 2:
            v = get(r, 0)
            tl.store(x_ptr + tl.arange(0, 64), v)


def b(p, q, y_ptr, N):
    r = p.reader()
    w = q.writer()
    for i in range(N):
        for j in tl.static_range(0, 2):
            v = get(r, 2 * i + j)
            tl.store(y_ptr + tl.arange(0, 64), v)
    o = w.acquire(0)
    tl.store(tle.gpu.local_ptr(o.t), tl.load(y_ptr + tl.arange(0, 64)))
    w.commit(0)
'''

# loops that do not start at 0: the notes name the loop variables' values
OFFSET = HEAD + '''

@tle.jit(num_warps=4)
def k(x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, 64], tl.float32))
    q = tle.pipe(capacity=1, t=tle.gpu.alloc([1, 64], tl.float32))
    tle.gpu.warp_specialize([(a, (p, q, x_ptr, N)), (b, (p, q, y_ptr, N))], [4], [64])


def a(p, q, x_ptr, N):
    w = p.writer()
    r = q.reader()
    for i in tl.range(3, N + 3):
        o = w.acquire(i - 3)
        tl.store(tle.gpu.local_ptr(o.t), tl.load(x_ptr + tl.arange(0, 64)))
        w.commit(i - 3)
        if i == 5:
            s = r.wait(0)
            tl.store(x_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(s.slot.t)))
            r.release(0)


def b(p, q, y_ptr, N):
    r = p.reader()
    w = q.writer()
    for u in range(10, 10 + N):
        s = r.wait(u - 10)
        tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(s.slot.t)))
        r.release(u - 10)
    o = w.acquire(0)
    tl.store(tle.gpu.local_ptr(o.t), tl.load(y_ptr + tl.arange(0, 64)))
    w.commit(0)
'''

# three partitions: the writer's acquire waits on the second reader's release
THREE = HEAD + '''

@tle.jit(num_warps=4)
def k(x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    p = tle.pipe(capacity=1, readers=("l", "r"), t=tle.gpu.alloc([1, 64], tl.float32))
    q = tle.pipe(capacity=1, t=tle.gpu.alloc([1, 64], tl.float32))
    tle.gpu.warp_specialize([(w_, (p, x_ptr, N)), (l_, (p, q, y_ptr, N)), (r_, (p, q, y_ptr, N))],
                            [4, 4], [64, 64])


def w_(p, x_ptr, N):
    w = p.writer()
    for i in range(N):
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + tl.arange(0, 64)))
        w.commit(i)


def l_(p, q, y_ptr, N):
    r = p.reader("l")
    w = q.writer()
    for i in range(N):
        s = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(s.slot.t))
        r.release(i)
        if i == 2:
            o = w.acquire(0)
            tl.store(tle.gpu.local_ptr(o.t), v)
            w.commit(0)


def r_(p, q, y_ptr, N):
    r = p.reader("r")
    rq = q.reader()
    for i in range(N):
        s = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(s.slot.t))
        r.release(i)
        if i == 0:
            u = rq.wait(0)
            tl.store(y_ptr + 64 + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(u.slot.t)) + v)
            rq.release(0)
'''

# a named pipe (bar.sync at the wait) in the cycle
NAMED_CYCLE = HEAD + '''

@tle.jit
def k(x_ptr, y_ptr, N):
    x = tle.pipe(capacity=1, barrier="named", t=tle.gpu.alloc([1, 64], tl.float32))
    q = tle.pipe(capacity=1, a=tle.gpu.alloc([1, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (x, q, x_ptr, N)), (consume, (x, q, y_ptr, N))], [4], [232])


def produce(x, q, x_ptr, N):
    offs = tl.arange(0, 64)
    w = x.writer()
    r = q.reader()
    for t in range(N):
        res = r.wait(t)
        a = tl.load(tle.gpu.local_ptr(res.slot.a))
        r.release(t)
        s = w.acquire(t)
        tl.store(tle.gpu.local_ptr(s.t), a)
        w.commit(t)


def consume(x, q, y_ptr, N):
    offs = tl.arange(0, 64)
    r = x.reader()
    w = q.writer()
    for t in range(N):
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.t))
        r.release(t)
        s = w.acquire(t)
        tl.store(tle.gpu.local_ptr(s.a), v * 3.0)
        w.commit(t)
        tl.store(y_ptr + t * 64 + offs, v + 1.0)
'''

DEADLOCKS = {
    "cross": (CROSS, 1, [(17, "a: q.wait(0) at i=0 waits for b: q.commit(0) at i=0 (line 34)"),
                         (29, "b: p.wait(0) at i=0 waits for a: p.commit(0) at i=0 (line 22)")]),
    "late": (LATE, 2, [(14, "a: q.wait(0) at i=2 waits for b: q.commit(0) (line 42)"),
                       (14, "b: p.wait(3) at i=1, j=1 waits for a: p.commit(3) at i=3 (line 27)")]),
    "offset": (OFFSET, 4, [(21, "a: q.wait(0) at i=5 waits for b: q.commit(0) (line 35)"),
                           (30, "b: p.wait(3) at u=13 waits for a: p.commit(3) at i=6 "
                                "(line 19)")]),
    "three": (THREE, 3, [(43, "r_: q.wait(0) at i=0 waits for l_: q.commit(0) at i=2 (line 32)"),
                         (26, "l_: p[l].wait(2) at i=2 waits for w_: p.commit(2) at i=2 "
                              "(line 19)"),
                         (17, "w_: p.acquire(2) at i=2 waits for r_: p[r].release(1) at i=1 "
                              "(line 41)")]),
    "named": (NAMED_CYCLE, 1, [(17, "produce: q.wait(0) at t=0 waits for consume: q.commit(0) "
                                    "at t=0 (line 35)"),
                               (30, "consume: x.wait(0) at t=0 waits for produce: x.commit(0) "
                                    "at t=0 (line 22)")]),
}


@pytest.mark.parametrize("name", list(DEADLOCKS))
def test_a_printed_deadlock_cycle_is_a_real_execution(tmp_path, capsys, name):
    """Held: the cycle printed (param value, each partition's blocked event with its loop values
    and line, what it waits for) is what the executable semantics finds: at the printed value
    every interleaving that runs as far as it can leaves exactly the printed partitions blocked
    at the printed lines, and no smaller value deadlocks them all."""
    text, n, notes = DEADLOCKS[name]
    path = write_kernel(tmp_path, text)
    code, out, err = run_dump(capsys, "-q", str(path))
    assert code == 1 and out == ""
    m = re.search(r"kernel\.py:(\d+): error: deadlock: the partitions wait for each other in a "
                  r"cycle \(when N=(\d+)\) \[deadlock\]\n((?:  .*\n)+)", err)
    assert m, err
    assert int(m.group(2)) == n
    printed = re.findall(r"kernel\.py:(\d+): note: (.*)", m.group(3))
    assert [(int(line), note) for line, note in printed] == notes, printed
    assert int(m.group(1)) == notes[0][0]
    (program,) = read_file(path).kernels
    dead = [e for e in simulate(program, {"N": n}).errors if e.kind == "deadlock"]
    assert dead, name
    parts = {part: part for part in (note.split(":")[0] for _, note in notes)}
    assert sorted((p, loc.line) for p, loc in dead[0].blocked) == \
        sorted((parts[note.split(":")[0]], line) for line, note in notes)
    for smaller in range(n):  # (THREE's N = 1, 2 hang on a wait never committed, alone)
        assert not [e for e in simulate(program, {"N": smaller}).errors
                    if e.kind == "deadlock" and len(e.blocked) == len(notes)], smaller


ALIASED = HEAD + '''

@tle.jit(num_warps=4)
def k(x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(prod, (p, x_ptr, N)), (cons, (p, y_ptr, N))], [4], [64])


def prod(p, x_ptr, N):
    w = p.writer()
    for i in range(5, N + 5):
        s0 = w.acquire(4 * i - 20)
        tl.store(tle.gpu.local_ptr(s0.t), tl.load(x_ptr + tl.arange(0, 64)))
        w.commit(4 * i - 20)


def cons(p, y_ptr, N):
    r = p.reader()
    for i in range(N):
        s = r.wait(4 * i)
        tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(s.slot.t)))
        r.release(4 * i)
'''


def test_a_phase_aliasing_names_the_commit_and_its_loop_value(tmp_path, capsys):
    """Held: indices 0 and 4 share stage 0 and phase 0; the fault names commit(4), its loop
    value i = 6 (index 4 * 6 - 20) and N = 2, at which the semantics finds the slot overwritten
    and read stale, and at N = 1 nothing."""
    path = write_kernel(tmp_path, ALIASED)
    code, _, err = run_dump(capsys, "-q", str(path))
    assert code == 1
    assert ("kernel.py:17: error: commit(4) is use 1 of stage 0 of pipe 'p' but has phase 0"
            in err and "(when N=2, i=6) [phase-aliasing]" in err), err
    (program,) = read_file(path).kernels
    assert {e.kind for e in simulate(program, {"N": 2}).errors} >= {"overwrite", "stale-read"}
    assert simulate(program, {"N": 1}).ok


TWO_KERNELS = HEAD + '''

@tle.jit(
    num_warps=4,
)
def k1(x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(prod, (p, x_ptr, N)), (cons, (p, y_ptr, N))], [4], [64])


@tle.jit(num_warps=4)
def k2(x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(prod, (p, x_ptr, N)), (cons2, (p, y_ptr, N))], [4], [64])


def prod(p, x_ptr, N):
    w = p.writer()
    for i in range(N):
        s0 = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s0.t),
                 tl.load(x_ptr + tl.arange(0, 64)))
        w.commit(i)


def cons(p, y_ptr, N):
    r = p.reader()
    for i in range(N):
        s = r.wait(i)
        tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(s.slot.t)))
        r.release(i)


def cons2(p, y_ptr, N):
    r = p.reader()
    for i in range(N):
        s = r.wait(i)
        r.release(i)
        tl.store(y_ptr + tl.arange(0, 64),
                 tl.load(
                     tle.gpu.local_ptr(s.slot.t)))
'''


def test_lines_under_a_long_decorator_and_beside_a_second_kernel(tmp_path, capsys):
    """Held: a decorator over three lines moves nothing; the second kernel's read after its
    release is at the load's own line (44) of a store over three lines, after the release of
    line 42; every event's '# file:line' is its statement's; JSON gives each kernel its pipe's
    and partitions' lines."""
    path = write_kernel(tmp_path, TWO_KERNELS)
    code, out, err = run_dump(capsys, str(path))
    assert code == 1
    assert ("kernel.py:44: error: read of p.t at index 0 after release(0) at line 42 closed its "
            "window (when N=1, i=0) [access-outside-window]") in err, err
    assert "tle-dump: k1: verified for" in err and "tle-dump: k2: rejected: 1 error" in err
    events = re.findall(r"    (p\.\w+)\(i(?:, t)?\)  # .*kernel\.py:(\d+)", out)
    assert events == [("p.acquire", "24"), ("p.write", "25"), ("p.commit", "27"),
                      ("p.wait", "33"), ("p.read", "34"), ("p.release", "35"),
                      ("p.acquire", "24"), ("p.write", "25"), ("p.commit", "27"),
                      ("p.wait", "41"), ("p.release", "42"), ("p.read", "44")], events
    code, out, _ = run_dump(capsys, "--format", "json", str(path))
    kernels = json.loads(out)["kernels"]
    assert [(k["name"], k["pipes"][0]["line"], [p["line"] for p in k["partitions"]])
            for k in kernels] == [("k1", 10, [21, 30]), ("k2", 17, [21, 38])]


RACE = HEAD + '''

@tle.jit(num_warps=4)
def k(x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    p = tle.pipe(capacity=2, readers=("l", "r"), t=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(prod, (p, x_ptr, N)), (cl, (p, y_ptr, N)), (cr, (p, y_ptr, N))],
                            [4, 4], [64, 64])


def prod(p, x_ptr, N):
    w = p.writer()
    for t in range(N):
        s = w.acquire(t)
        tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + tl.arange(0, 64)))
        w.commit(t)


def cl(p, y_ptr, N):
    r = p.reader("l")
    for t in range(N):
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.t))
        r.release(t)
        tl.store(y_ptr + t * 64 + tl.arange(0, 64), v)


def cr(p, y_ptr, N):
    r = p.reader("r")
    for t in range(N):
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.t))
        r.release(t)
        tl.store(y_ptr + 200 + 32 * t + tl.arange(0, 32), tl.sum(tl.reshape(v, [32, 2]), 1))
'''


def test_a_memory_race_names_the_iterations_whose_stores_overlap(tmp_path, capsys):
    """Held: cl's store of t = 3 covers y[192, 256) and cr's of t = 0 covers y[200, 232): the
    race is named at those values and at the first address both reach, `y_ptr` + 200."""
    code, _, err = run_dump(capsys, "-q", str(write_kernel(tmp_path, RACE)))
    assert code == 1
    assert ("kernel.py:36: error: partitions 'cl' (store at line 27 at t = 3) and 'cr' (store "
            "at line 36 at t = 0) can reach the same global address `y_ptr` + 200, one writing"
            in err), err
    lo_l, lo_r = 3 * 64, 200 + 32 * 0  # first principles: the two ranges meet at 200
    assert max(lo_l, lo_r) == 200 < min(lo_l + 64, lo_r + 32)


# ------------------------------------------------------------------ exit statuses and streams

BOUNDED = ("--bound", "2")


@pytest.mark.parametrize("first_rejected", [False, True])
def test_several_files_rejected_beats_bounded_in_either_order(tmp_path, capsys, first_rejected):
    """Held (--help: "the first of 2, 1, 3 that applies"): a bounded file (3) and a rejected
    one (1) exit 1 whichever comes first; each file's status on stderr, in order; -q prints
    nothing on stdout."""
    ok = write_kernel(tmp_path, TWO_ACQUIRES, "ok.py")
    bad = write_kernel(tmp_path, CROSS, "bad.py")
    files = [bad, ok] if first_rejected else [ok, bad]
    code, out, err = run_dump(capsys, "-q", *BOUNDED, *map(str, files))
    assert code == 1 and out == ""
    status = {ok: 3, bad: 1}
    assert re.findall(r"^tle-dump: (.*): exit (\d)$", err, re.M) == \
        [(str(f), str(status[f])) for f in files]
    code, out, err = run_dump(capsys, "--format", "json", *BOUNDED, *map(str, files))
    doc = json.loads(out)
    assert code == doc["exit_code"] == 1
    assert [f["exit_code"] for f in doc["files"]] == [status[f] for f in files]
    assert [f["kernels"][0]["verdict"] for f in doc["files"]] == \
        [{3: "bounded", 1: "rejected"}[status[f]] for f in files]


def test_an_internal_error_in_one_of_several_files_is_its_own_3(tmp_path, capsys, monkeypatch):
    """Held: a file whose check breaks tle-dump claims nothing (exit 3, one line) and the other
    files are still checked: beside a rejected file the run exits 1, beside a proved one 3, and
    the JSON object keeps each file's status and the internal error's line."""
    import tle_compiler.cli.dump as dump

    real = dump.run_pipeline

    def broken(program, *a, **k):
        if program.name == "kbroken":
            raise RuntimeError("an invariant broke")
        return real(program, *a, **k)

    monkeypatch.setattr(dump, "run_pipeline", broken)
    ok = write_kernel(tmp_path, TWO_ACQUIRES, "ok.py")
    brk = write_kernel(tmp_path, TWO_ACQUIRES.replace("def k(", "def kbroken("), "broken.py")
    bad = write_kernel(tmp_path, CROSS, "bad.py")
    code, out, err = run_dump(capsys, "-q", str(ok), str(brk), str(bad))
    assert code == 1 and out == ""
    assert re.findall(r"^tle-dump: .*/(\w+)\.py: exit (\d)$", err, re.M) == \
        [("ok", "0"), ("broken", "3"), ("bad", "1")]
    assert "internal error (RuntimeError" in err and "nothing is claimed for" in err
    code, out, err = run_dump(capsys, "--format", "json", str(ok), str(brk))
    doc = json.loads(out)
    assert code == doc["exit_code"] == 3
    assert [f["exit_code"] for f in doc["files"]] == [0, 3]
    assert "internal error" in doc["files"][1]["error"]


@pytest.mark.parametrize("case,code", [
    ("verified", 0), ("rejected", 1), ("bounded", 3), ("syntax", 2), ("nokernel", 2),
    ("missing", 2)])
def test_json_parses_for_every_kind_of_answer(tmp_path, capsys, case, code):
    """Held: one JSON document on stdout whatever the answer, its exit_code the status; a
    refusal's line goes to stderr too, and nothing else to stdout."""
    texts = {"verified": TWO_ACQUIRES, "rejected": CROSS, "bounded": TWO_ACQUIRES,
             "syntax": "def f(:\n", "nokernel": "x = 1\n"}
    path = tmp_path / "missing.py" if case == "missing" else write_kernel(tmp_path, texts[case])
    flags = BOUNDED if case == "bounded" else ()
    got, out, err = run_dump(capsys, "--format", "json", *flags, str(path))
    doc = json.loads(out)
    assert got == doc["exit_code"] == code
    if code == 2:
        assert set(doc) >= {"error", "exit_code"} and doc["error"].splitlines()[0] in err
    else:
        assert doc["kernels"][0]["verdict"] == {0: "proved", 1: "rejected", 3: "bounded"}[code]
        assert doc["kernels"][0]["verified"] is (code == 0)


# ------------------------------------------------------------------ -p emit-gluon and --gluon

@pytest.mark.parametrize("case", ["two acquires", "tma groups", "tma constexpr shape"])
def test_emit_gluon_prints_the_module_gluon_prints(tmp_path, capsys, case):
    """Bug: ``-p emit-gluon`` of a .py kernel lowered without DEFAULT_CONFIG's argument types
    and printed another module than ``--gluon`` (``p_t.index(0).store(_v1.to(gl.float32))``
    for ``store(_v1)`` of an fp32 load), where --help says it prints the Gluon module --gluon
    prints; now typed as --gluon types it (cli/print_ir.py ``_typed``)."""
    text = {"two acquires": TWO_ACQUIRES, "tma groups": TMA_GROUPS,
            "tma constexpr shape": TMA_CONSTEXPR}[case]
    path = write_kernel(tmp_path, text)
    code, emitted, _ = run_dump(capsys, "-q", "-p", "emit-gluon", str(path))
    assert code == 0
    code, gluon, _ = run_dump(capsys, "-q", "--gluon", str(path))
    assert code == 0
    assert emitted == gluon


# ------------------------------------------------------------------ the line of a register refusal

def test_a_register_budget_refusal_is_at_the_warp_specialize_call(tmp_path, capsys):
    """Bug: workers asking 8 x 232 and 4 x 232 registers (nothing left for the default partition)
    were refused at the default partition's ``def`` line (language/registers.py says "a
    TleError at the warp_specialize call", and the requests are written there); now at the
    call. A request setmaxnreg refuses (150) is at its own line of the call."""
    lines = TMA_GROUPS.splitlines()
    call = next(n for n, t in enumerate(lines, 1) if "tle.gpu.warp_specialize(" in t)
    budgets = next(n for n, t in enumerate(lines, 1) if "[8, 4], [152, 152]" in t)
    cl = next(n for n, t in enumerate(lines, 1) if t.startswith("def cl("))
    text = TMA_GROUPS.replace("[8, 4], [152, 152]", "[8, 4], [232, 232]")
    code, _, err = report(tmp_path, capsys, text, "-q")
    assert code == 1
    assert (f"kernel.py:{call}: error: the workers' registers (produce: 8 warps x 232, cr: 4 "
            f"warps x 232) leave 0 per thread for the default partition") in err, err
    assert f"kernel.py:{cl}:" not in err
    text = TMA_GROUPS.replace("[8, 4], [152, 152]", "[8, 4], [150, 152]")
    code, _, err = report(tmp_path, capsys, text, "-q")
    assert code == 1
    assert f"kernel.py:{budgets}: error: warp_specialize: register budget 150" in err, err


def test_a_value_below_the_cycle_is_verified_and_the_semantics_agrees(tmp_path, capsys):
    """Held: OFFSET deadlocks from N = 4 on (its q is waited at i = 5, the fourth iteration) and
    leaves a commit unconsumed at N = 0; --param N=3 is verified for that value alone, as the
    semantics runs it, and --param N=4 prints the cycle."""
    path = write_kernel(tmp_path, OFFSET)
    code, _, err = run_dump(capsys, "-q", "--param", "N=3", str(path))
    assert code == 0 and "tle-dump: k: verified for N = 3: " in err, err
    (program,) = read_file(path).kernels
    assert simulate(program, {"N": 3}).ok
    code, _, err = run_dump(capsys, "-q", "--param", "N=4", str(path))
    assert code == 1 and "cycle (when N=4) [deadlock]" in err, err


def test_each_kernels_summary_line_gives_its_own_time_and_the_files(capsys):
    """A file of four kernels: each summary line gives that kernel's own seconds, then the
    file's; the kernels' own add up to no more than the file's. One kernel: the run's time."""
    path = Path(__file__).resolve().parent.parent / "tle_kernels" / "sparse_mla_narrow.py"
    code, _, err = run_dump(capsys, "-q", str(path))
    assert code == 0
    times = re.findall(r"^tle-dump: (\w+): verified.*\((\d+\.\d\d) s; the file (\d+\.\d\d) s\)$",
                       err, re.M)
    assert len(times) == 4 and len({f for _, _, f in times}) == 1, err
    assert sum(float(k) for _, k, _ in times) <= float(times[0][2]) + 0.01
    code, _, err = run_dump(capsys, "-q", "--kernel", "sparse_mla_narrow", str(path))
    assert code == 0 and re.search(r"\((\d+\.\d\d) s\)$", err.strip()), err


def test_emit_gluon_marks_unresolved_barrier_offsets_as_placeholders(capsys):
    """An eager-publish kernel addresses its barriers through inline asm at offsets Triton's
    allocator decides: --gluon compiles and prints them resolved; -p emit-gluon, which compiles
    nothing, prints 0 and says in the source that it does not run as printed."""
    path = Path(__file__).resolve().parent.parent / "tle_kernels" / "sparse_mla_narrow.py"
    args = ("-q", "--kernel", "sparse_mla_narrow", str(path))
    code, emitted, _ = run_dump(capsys, "-p", "emit-gluon", *args)
    assert code == 0
    offsets = re.findall(r"^_TLE_OFF_\w+ = gl\.constexpr\((\d+)\)$", emitted, re.M)
    assert offsets and set(offsets) == {"0"}
    assert "PLACEHOLDERS (0)" in emitted and "does not run as printed" in emitted
    code, gluon, _ = run_dump(capsys, "--gluon", *args)
    assert code == 0 and "PLACEHOLDERS" not in gluon
    resolved = re.findall(r"^_TLE_OFF_\w+ = gl\.constexpr\((\d+)\)$", gluon, re.M)
    assert len(resolved) == len(offsets) and all(int(o) > 0 for o in resolved)
    assert "from Triton's allocator" in gluon


def test_a_register_refusal_of_constexpr_budgets_is_at_the_budget_list(tmp_path, capsys):
    """Budgets written with a constexpr (``[232 + C, 232]``) are numbers only when the kernel is
    lowered; workers leaving the default partition nothing were then refused at the default
    partition's ``def`` line (the lowering's check knows no call); now at the budget list."""
    text = TMA_GROUPS.replace("def k(a_desc, b_desc, x_ptr, y_ptr, z_ptr, N):",
                              "def k(a_desc, b_desc, x_ptr, y_ptr, z_ptr, N, C: tl.constexpr):")
    text = text.replace("[8, 4], [152, 152]", "[8, 4], [232 + C, 232]")
    text = text.replace('"constexprs": {}', '"constexprs": {"C": 0}')
    text = text.replace('"N": "i32"}', '"N": "i32", "C": "constexpr"}')
    lines = text.splitlines()
    budgets = next(n for n, t in enumerate(lines, 1) if "[232 + C, 232]" in t)
    cl = next(n for n, t in enumerate(lines, 1) if t.startswith("def cl("))
    code, _, err = report(tmp_path, capsys, text, "-q")
    assert code == 1
    assert (f"kernel.py:{budgets}: error: the workers' registers (produce: 8 warps x 232, cr: 4 "
            f"warps x 232) leave 0 per thread for the default partition") in err, err
    assert f"kernel.py:{cl}:" not in err
    code, _, err = report(tmp_path, capsys, text.replace('{"C": 0}', '{"C": -120}'), "-q")
    assert code == 0, err  # 8 x 112 and 4 x 232 leave the default partition 56
