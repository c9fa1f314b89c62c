"""The lowering of named-barrier pipes, on the CPU: one hardware named barrier per pipe, nothing
else.

For each ``barrier="named"`` pipe of the kernels in tests/fixtures/named_barrier/ and of the
SparseMLA decode seesaw: the writer's commit is one ``bar.arrive ID, THREADS`` and the reader's
wait one ``bar.sync ID, THREADS`` with the same ID, where THREADS counts the writer's and the
reader's warps (32 threads each), read here from the partitions, not from the plan; every pipe
its own ID, none of those Triton's warp specialization uses (0 for the default partition, 1 for
the switch loop, 2 + k for worker partition k), checked in the PTX as well; no mbarrier array for
the pipe; acquire emits nothing and release only the wgmma wait (the Gluon-trace comparer holds
the whole sequence of barrier operations to the verified events). Too many named pipes for the
16 hardware barriers are refused by the verifier at the pipe that does not fit (the lowering's
budget, so it never gets a kernel it cannot give ids to).

A gather into a named slot is stored from registers (no cp.async arrive could order it), and
the Gluon-trace checker sees a named pipe's release through the string the lowering leaves
there (it emits no barrier operation), so a wgmma still reading the slot is flagged as for an
mbarrier pipe.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("triton.experimental.gluon")

from tle_compiler.diagnostics import TleError  # noqa: E402
from tle_compiler.frontend import read_kernels  # noqa: E402
from tle_compiler.lowering.compile import gluon_source  # noqa: E402
from tle_compiler.passes.roles import resolve_roles  # noqa: E402
from tle_compiler.testing.gluon_trace import (LoweredKernel, compare, release_rings_of,  # noqa: E402
                                              trace_gluon)

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "named_barrier"
KERNELS = [(FIXTURES / "hop_commit.ok.py", "hop_commit"), (FIXTURES / "exchange.ok.py", "exchange"),
           (FIXTURES / "three_partitions.ok.py", "three")]
SEESAW = (ROOT / "tle_kernels" / "mla_decode_seesaw.py", "mla_decode_seesaw")
SEESAW_CX = {"BLOCK_H": 64, "CAUSAL": False, "BALANCE": 1, "TMA": 1, "RUN": 1, "QTMA": 0}
NAMED_OP = re.compile(r'"bar\.(arrive|sync) (\d+), (\d+); mov\.b32 \$0, 0;"')
#: Hardware barriers a CTA has.
HW_BARRIERS = 16


def _functions(src: str) -> dict[str, str]:
    """The generated module's functions by name: name -> source text."""
    parts = re.split(r"^@gluon\.jit\ndef ", src, flags=re.M)
    return {p.split("(", 1)[0]: p for p in parts[1:]}


def _named_ops(text: str) -> list[tuple[str, int, int, str]]:
    """(verb, id, threads, the line's comment) of every named-barrier statement in ``text``."""
    out = []
    for ln in text.splitlines():
        m = NAMED_OP.search(ln)
        if m:
            out.append((m.group(1), int(m.group(2)), int(m.group(3)), ln.split("  # ", 1)[-1]))
    return out


def _expected_threads(info) -> dict[str, tuple[str, str, int]]:
    """Per named pipe: (writer partition, reader partition, 32 x their warps), from the kernel."""
    warps = {p.name: p.warps for p in info.kir.partitions}
    roles = resolve_roles(info.program)
    out = {}
    for p in info.program.pipes:
        if p.named:
            r = roles[p.name]
            (reader,) = set(r.readers.values())
            out[p.name] = (r.writer, reader, 32 * (warps[r.writer] + warps[reader]))
    return out


def _check_named_lowering(info, src: str) -> dict[str, int]:
    """The checks of the module docstring on generated Gluon; returns pipe -> barrier id."""
    funcs = _functions(src)
    ids = {}
    for pipe, (writer, reader, threads) in _expected_threads(info).items():
        arrives = [op for op in _named_ops(funcs[writer]) if op[3].startswith(f"{pipe}.")]
        syncs = [op for op in _named_ops(funcs[reader]) if op[3].startswith(f"{pipe}.")]
        assert [(v, t, c.split(":")[0]) for v, _, t, c in arrives] == \
            [("arrive", threads, f"{pipe}.commit")], (pipe, arrives)
        assert [(v, t, c.split(":")[0]) for v, _, t, c in syncs] == \
            [("sync", threads, f"{pipe}.wait")], (pipe, syncs)
        assert arrives[0][1] == syncs[0][1], pipe
        ids[pipe] = arrives[0][1]
        # no other function touches the barrier, and the pipe has no mbarrier array
        for name, text in funcs.items():
            if name not in (writer, reader):
                assert not [op for op in _named_ops(text) if op[1] == ids[pipe]], (pipe, name)
        assert not re.search(rf"\b{pipe}_(full|empty)\d", src), pipe
    assert len(set(ids.values())) == len(ids), ids
    reserved = 2 + (len(info.kir.partitions) - 1)  # 0, 1 and one per worker partition
    assert all(reserved <= i < HW_BARRIERS for i in ids.values()), ids
    return ids


@pytest.mark.parametrize("path,name", KERNELS, ids=[n for _, n in KERNELS])
def test_each_named_pipe_is_one_hardware_barrier(path, name):
    (info,) = read_kernels(str(path))
    src = gluon_source(info).source
    ids = _check_named_lowering(info, src)
    assert ids
    # the non-named pipes keep their mbarriers
    for p in info.program.pipes:
        if not p.named:
            assert re.search(rf"\bmbarrier\.init\({p.name}_full0", src), p.name
    # the declaration comment names the barrier
    for pipe, i in ids.items():
        assert re.search(rf"# pipe {pipe}: capacity 1, hardware named barrier {i} \(", src), pipe


def test_three_partitions_count_each_pair_of_warps():
    """x joins part_a (4 warps) and part_b (4); z joins part_c (2) and part_b (4)."""
    (info,) = read_kernels(str(FIXTURES / "three_partitions.ok.py"))
    assert {p: t for p, (_, _, t) in _expected_threads(info).items()} == {"x": 256, "z": 192}


def test_the_default_partitions_warps_count(tmp_path):
    """An 8-warp default partition writing to a 2-warp worker: 320 threads."""
    src = (FIXTURES / "hop_commit.ok.py").read_text()
    src = src.replace("@tle.jit\n", "@tle.jit(num_warps=8)\n").replace("[4], [232]", "[2], [232]")
    path = tmp_path / "wide.py"
    path.write_text(src)
    (info,) = read_kernels(str(path))
    assert [p.warps for p in info.kir.partitions] == [8, 2]
    ids = _check_named_lowering(info, gluon_source(info).source)
    assert re.search(rf'"bar\.arrive {ids["x"]}, 320;', gluon_source(info).source)


@pytest.mark.parametrize("path,name", KERNELS, ids=[n for _, n in KERNELS])
def test_the_barrier_operations_are_the_verified_events(path, name):
    lk = LoweredKernel((str(path), name), {})
    for n in range(4):
        params, problems = lk.check({"N": n})
        assert params == {"N": n} and not problems, problems


def test_acquire_and_release_of_a_named_pipe_emit_nothing():
    """hop_commit's writer executes, per iteration, exactly x's bar.arrive, then the wait and the
    release arrive of ack; its reader x's bar.sync, then ack's acquire wait and commit arrive."""
    lk = LoweredKernel((str(FIXTURES / "hop_commit.ok.py"), "hop_commit"), {})
    tr = lk.trace({"N": 2})
    ops = {p.function: [(o.op, o.array) for o in p.ops] for p in tr.partitions}
    assert ops["produce"] == [("bar.arrive", "bar15"), ("wait", "ack_full0"),
                              ("arrive", "ack_empty0")] * 2
    assert ops["consume"] == [("bar.sync", "bar15"), ("wait", "ack_empty0"),
                              ("arrive", "ack_full0")] * 2


@pytest.mark.parametrize("old,new,generated", [
    ("bar.arrive 15, 256", "bar.arrive 14, 256", "generated bar.arrive bar14[256]"),
    ("bar.sync 15, 256", "bar.sync 15, 128", "generated bar.sync bar15[128]"),
], ids=["wrong-id", "wrong-threads"])
def test_the_comparer_notices_a_wrong_named_barrier(old, new, generated):
    lk = LoweredKernel((str(FIXTURES / "hop_commit.ok.py"), "hop_commit"), {})
    bad = lk.gen.source.replace(old, new)
    assert bad != lk.gen.source
    tr = trace_gluon(bad, lk.gen.kernel, {"N": 2})
    (msg,) = compare(lk.expected({"N": 2}), tr, lk.partitions, bad)
    assert generated in msg, msg


# ------------------------------------------------------------------------ a wgmma reader

WGMMA = '''
import triton.language as tl
import tle_compiler as tle


@tle.jit
def mma(a_ptr, b_ptr, s_ptr, N):
    x = tle.pipe(capacity=1, BARRIER b=tle.gpu.alloc([1, 64, 64], tl.bfloat16))
    ack = tle.pipe(capacity=1, d=tle.gpu.alloc([1, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (x, ack, b_ptr, N)), (consume, (x, ack, a_ptr, s_ptr, N))],
                            [4], [232])


def produce(x, ack, b_ptr, N):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    w = x.writer()
    r = ack.reader()
    for t in range(N):
        s = w.acquire(t)
        tl.store(tle.gpu.local_ptr(s.b), tl.load(b_ptr + t * 4096 + offs) * 2)
        w.commit(t)
        res = r.wait(t)
        r.release(t)


def consume(x, ack, a_ptr, s_ptr, N):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    r = x.reader()
    w = ack.writer()
    a = tl.load(a_ptr + offs)
    for t in range(N):
        res = r.wait(t)
        acc = tl.dot(a, tl.load(tle.gpu.local_ptr(res.slot.b)))
        r.release(t)
        s = w.acquire(t)
        tl.store(tle.gpu.local_ptr(s.d), tl.zeros([64], tl.float32))
        w.commit(t)
        tl.store(s_ptr + t * 4096 + offs, acc)


DEFAULT_CONFIG = {"signature": {"a_ptr": "*bf16", "b_ptr": "*bf16", "s_ptr": "*fp32", "N": "i32"}}
'''


def _wgmma_kernel(tmp_path, named: bool) -> LoweredKernel:
    path = tmp_path / ("named.py" if named else "plain.py")
    path.write_text(WGMMA.replace("BARRIER ", 'barrier="named", ' if named else ""))
    return LoweredKernel((str(path), "mma"), {})


def _index(lines: list[str], pattern: str, start: int = 0) -> int:
    return next(i for i in range(start, len(lines)) if re.search(pattern, lines[i]))


def test_a_wgmma_read_named_slot_is_fenced_and_waited_before_the_hop(tmp_path):
    """The writer fences its generic-proxy stores before bar.arrive, the reader fences after
    bar.sync, and the reader's release waits for the wgmma before the hop (ack's commit)."""
    lk = _wgmma_kernel(tmp_path, named=True)
    funcs = _functions(lk.gen.source)
    prod = funcs["produce"].splitlines()
    arrive = _index(prod, r"bar\.arrive")
    assert "fence_async_shared()" in prod[arrive - 1], "\n".join(prod)
    assert _index(prod, r"x_b\.index\(0\)\.store") < arrive
    cons = funcs["consume"].splitlines()
    sync = _index(cons, r"bar\.sync")
    assert "fence_async_shared()" in cons[sync + 1], "\n".join(cons)
    mma = _index(cons, r"warpgroup_mma\(", sync)
    wait = _index(cons, r"warpgroup_mma_wait\(0.*# x\.release", mma)
    hop = _index(cons, r"mbarrier\.arrive\(ack_full0", mma)
    assert mma < wait < hop, "\n".join(cons)
    for n in range(3):
        assert not lk.check({"N": n})[1]


def test_the_trace_checker_flags_a_plain_release_under_an_inflight_wgmma(tmp_path):
    """The mbarrier twin of the next test: without the release's wgmma wait, the checker reports
    the release arrive while the wgmma reads the slot."""
    lk = _wgmma_kernel(tmp_path, named=False)
    line = next(ln for ln in lk.gen.source.splitlines(True) if "# x.release" in ln)
    bad = lk.gen.source.replace(line, "")
    tr = trace_gluon(bad, lk.gen.kernel, {"N": 2}, release_rings=release_rings_of(lk.gen.plans))
    assert any("may still be in flight" in v for v in tr.violations), tr.violations


def test_the_trace_checker_flags_a_named_release_under_an_inflight_wgmma(tmp_path):
    lk = _wgmma_kernel(tmp_path, named=True)
    line = next(ln for ln in lk.gen.source.splitlines(True) if "# x.release" in ln)
    bad = lk.gen.source.replace(line, "")
    tr = trace_gluon(bad, lk.gen.kernel, {"N": 2}, release_rings=release_rings_of(lk.gen.plans))
    problems = compare(lk.expected({"N": 2}), tr, lk.partitions, bad) + tr.violations
    assert any("in flight" in p for p in problems), problems


# ------------------------------------------------------------------- slots not filled by stores

CP_ASYNC = '''
import triton.language as tl
import tle_compiler as tle


@tle.jit
def gather(x_ptr, y_ptr, N):
    x = tle.pipe(capacity=1, barrier="named", t=tle.gpu.alloc([1, 64, 64], tl.bfloat16))
    ack = tle.pipe(capacity=1, a=tle.gpu.alloc([1, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (x, ack, x_ptr, N)), (consume, (x, ack, y_ptr, N))],
                            [4], [232])


def produce(x, ack, x_ptr, N):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    w = x.writer()
    r = ack.reader()
    for t in range(N):
        s = w.acquire(t)
        FILL
        w.commit(t)
        res = r.wait(t)
        r.release(t)


def consume(x, ack, y_ptr, N):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    r = x.reader()
    w = ack.writer()
    for t in range(N):
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.t))
        r.release(t)
        s = w.acquire(t)
        tl.store(tle.gpu.local_ptr(s.a), tl.zeros([64], tl.float32))
        w.commit(t)
        tl.store(y_ptr + t * 4096 + offs, v)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*bf16", "y_ptr": "*bf16", "N": "i32"}}
'''
GATHER = "tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + t * 4096 + offs))"


def test_a_gather_into_a_named_slot_is_stored_from_registers(tmp_path):
    """A named pipe's bar.arrive orders the writer's register stores, and no cp.async arrive
    tracks a copy: the gather that an mbarrier pipe would fill by cp.async is loaded into
    registers and stored before the arrive (nothing lands after it)."""
    path = tmp_path / "gather.py"
    path.write_text(CP_ASYNC.replace("FILL", GATHER))
    assert verify_ok(path)
    src = gluon_source((str(path), "gather")).source
    prod = _functions(src)["produce"].splitlines()
    assert not any("async_copy" in ln for ln in prod), "\n".join(prod)
    store = _index(prod, r"x_t\.index\(0\)\.store\(")
    arrive = _index(prod, r"bar\.arrive")
    assert store < arrive, "\n".join(prod)
    # the mbarrier twin still gathers by cp.async (the named pipe is what turns it off)
    twin = tmp_path / "gather_mbar.py"
    twin.write_text(CP_ASYNC.replace("FILL", GATHER).replace('barrier="named", ', ""))
    assert "async_copy_global_to_shared" in gluon_source((str(twin), "gather")).source


def verify_ok(path) -> bool:
    from tle_compiler.frontend import read_file
    from tle_compiler.passes import verify

    return verify(read_file(path).kernels[0]).ok


def test_a_tma_copy_into_a_named_slot_is_refused(tmp_path):
    """A TMA copy completes on an mbarrier's expect-tx; a named pipe has none, so the verifier
    rejects the copy at its line (passes/tma_windows.py), before anything is lowered."""
    path = tmp_path / "tma.py"
    src = CP_ASYNC.replace("FILL", "tle.gpu.tma_load(s.t, x_desc, [t * 64, 0])")
    src = src.replace("x_ptr", "x_desc").replace('"x_desc": "*bf16"',
                                                  '"x_desc": "tensordesc<bf16[64, 64]>"')
    path.write_text(src)
    assert not verify_ok(path)
    line = next(i + 1 for i, ln in enumerate(src.splitlines()) if "tma_load" in ln)
    with pytest.raises(TleError) as e:
        gluon_source((str(path), "gather"))
    assert e.value.loc.line == line and "TMA copy" in str(e.value), str(e.value)


def test_the_tma_refusal_names_the_named_barrier(tmp_path):
    path = tmp_path / "tma.py"
    src = CP_ASYNC.replace("FILL", "tle.gpu.tma_load(s.t, x_desc, [t * 64, 0])")
    src = src.replace("x_ptr", "x_desc").replace('"x_desc": "*bf16"',
                                                  '"x_desc": "tensordesc<bf16[64, 64]>"')
    path.write_text(src)
    with pytest.raises(TleError) as e:
        gluon_source((str(path), "gather"))
    assert "read by no reader" not in str(e.value) and "named" in str(e.value), str(e.value)


# ------------------------------------------------------------------- sixteen hardware barriers

def many_named_pipes(k: int, third: bool) -> str:
    """A kernel with k named pipes x0..x{k-1} from produce to consume, every release implied by
    consume's commit of ack; with ``third``, a 1-warp partition reading an mbarrier pipe too."""
    names = [f"x{i}" for i in range(k)]
    args = ", ".join(names)
    decls = "\n".join(f'    {n} = tle.pipe(capacity=1, barrier="named", '
                      f't=tle.gpu.alloc([1, 64], tl.float32))' for n in names)
    writes = "\n".join(f"        s_{n} = {n}.writer().acquire(t)\n"
                       f"        tl.store(tle.gpu.local_ptr(s_{n}.t), v + {i}.0)\n"
                       f"        {n}.writer().commit(t)" for i, n in enumerate(names))
    reads = "\n".join(f"        g_{n} = {n}.reader().wait(t)\n"
                      f"        acc += tl.load(tle.gpu.local_ptr(g_{n}.slot.t))\n"
                      f"        {n}.reader().release(t)" for n in names)
    side = ", side" if third else ""
    parts = (f"[(produce, ({args}, ack, x_ptr, N{side})), (consume, ({args}, ack, y_ptr, N))"
             + (", (idle, (side, y_ptr, N))], [4, 1], [232, 40]" if third else "], [4], [232]"))
    return f'''import triton.language as tl
import tle_compiler as tle


@tle.jit
def many(x_ptr, y_ptr, N):
{decls}
    ack = tle.pipe(capacity=1, a=tle.gpu.alloc([1, 64], tl.float32))
    side = tle.pipe(capacity=1, u=tle.gpu.alloc([1, 64], tl.float32))
    tle.gpu.warp_specialize({parts})


def produce({args}, ack, x_ptr, N{side}):
    offs = tl.arange(0, 64)
    for t in range(N):
        v = tl.load(x_ptr + t * 64 + offs)
{writes}
{"        su = side.writer().acquire(t)" if third else ""}
{"        tl.store(tle.gpu.local_ptr(su.u), v)" if third else ""}
{"        side.writer().commit(t)" if third else ""}
        g = ack.reader().wait(t)
        tl.store(x_ptr + t * 64 + offs, tl.load(tle.gpu.local_ptr(g.slot.a)))
        ack.reader().release(t)


def consume({args}, ack, y_ptr, N):
    offs = tl.arange(0, 64)
    for t in range(N):
        acc = tl.zeros([64], tl.float32)
{reads}
        s = ack.writer().acquire(t)
        tl.store(tle.gpu.local_ptr(s.a), acc)
        ack.writer().commit(t)


def idle(side, y_ptr, N):
    offs = tl.arange(0, 64)
    for t in range(N):
        g = side.reader().wait(t)
        u = tl.load(tle.gpu.local_ptr(g.slot.u))
        side.reader().release(t)
        tl.store(y_ptr + (N + t) * 64 + offs, u)


DEFAULT_CONFIG = {{"signature": {{"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"}}}}
'''


@pytest.mark.parametrize("third,fit", [(False, 11), (True, 10)], ids=["2-partitions", "3-partitions"])
def test_named_pipes_fit_the_barriers_left_and_one_more_is_refused(tmp_path, third, fit):
    path = tmp_path / "fits.py"
    path.write_text(many_named_pipes(fit, third))
    (info,) = read_kernels(str(path))
    assert verify_ok(path)
    ids = _check_named_lowering(info, gluon_source(info).source)
    assert sorted(ids.values()) == list(range(HW_BARRIERS - fit, HW_BARRIERS))
    over = tmp_path / "over.py"
    over.write_text(many_named_pipes(fit + 1, third))
    # one more does not fit: the verifier refuses it (check named-budget, the lowering's id
    # budget, passes/named_budget.py), so the lowering is never reached with it
    assert not verify_ok(over)
    with pytest.raises(TleError) as e:
        gluon_source((str(over), "many"))
    decl = next(i + 1 for i, ln in enumerate(over.read_text().splitlines())
                if ln.startswith(f"    x{fit} = tle.pipe("))
    assert e.value.check == "named-budget" and e.value.loc.line == decl, str(e.value)
    assert f"pipe 'x{fit}': too many" in str(e.value) and f"at most {fit} named pipes" in str(e.value)


# ---------------------------------------------------------------------------------------- PTX

def _ptx_barriers(ptx: str) -> tuple[dict[int, list], set[int]]:
    """The named pipes' bar.arrive / bar.sync in PTX (id -> [(verb, threads)]), and the ids of the
    barriers Triton emits itself (bar.sync / barrier.sync outside those inline asm lines)."""
    named: dict[int, list] = {}
    triton = set()
    for ln in ptx.splitlines():
        m = re.search(r"\bbar\.(arrive|sync) (\d+), (\d+); mov\.b32", ln)
        if m:
            named.setdefault(int(m.group(2)), []).append((m.group(1), int(m.group(3))))
            continue
        m = re.search(r"\b(?:bar|barrier)(?:\.cta)?\.(?:sync|arrive)(?:\.aligned)?\s+(\d+)", ln)
        if m:
            triton.add(int(m.group(1)))
    return named, triton


def _check_ptx(info, ptx: str, ids: dict[str, int]) -> None:
    named, triton = _ptx_barriers(ptx)
    threads = {p: t for p, (_, _, t) in _expected_threads(info).items()}
    assert set(named) == set(ids.values()), (named, ids)
    for pipe, i in ids.items():
        assert sorted(named[i]) == [("arrive", threads[pipe]), ("sync", threads[pipe])], pipe
    assert triton and not (triton & set(named)), (triton, named)
    assert max(triton) < min(named), (triton, named)


def test_three_partitions_compile_for_sm90a_with_distinct_barriers():
    from tle_compiler.lowering import compile_kernel, ptxas_stats

    path = FIXTURES / "three_partitions.ok.py"
    (info,) = read_kernels(str(path))
    ids = _check_named_lowering(info, gluon_source(info).source)
    sig = {"x_ptr": "*fp32", "z_ptr": "*fp32", "out_a_ptr": "*fp32", "out_c_ptr": "*fp32",
           "N": "i32"}
    c = compile_kernel((str(path), "three"), sig)
    st = ptxas_stats(c)
    assert st["ok"], st["log"]
    _check_ptx(info, c.asm["ptx"], ids)


def test_the_decode_seesaw_exchange_lowers_to_named_barriers():
    """max0 and prob0 from consumer0 to consumer1, max1 and prob1 back, each 4 + 4 warps; the
    PTX (TMA producer, the balanced schedule) keeps them apart from Triton's barriers. Spills are
    tests/test_mla_decode_seesaw.py's."""
    from tle_compiler.lowering import compile_kernel, ptxas_stats
    import tle_kernels.mla_decode_seesaw as mod

    (info,) = read_kernels(str(SEESAW[0]), name=SEESAW[1], bind={"BLOCK_H": 64, "TMA": 1, "QTMA": 0})
    assert {p.name for p in info.program.pipes if p.named} == {"max0", "max1", "prob0", "prob1"}
    assert {p: (w, r, t) for p, (w, r, t) in _expected_threads(info).items()} == {
        "max0": ("consumer0", "consumer1", 256), "prob0": ("consumer0", "consumer1", 256),
        "max1": ("consumer1", "consumer0", 256), "prob1": ("consumer1", "consumer0", 256)}
    src = gluon_source(SEESAW, SEESAW_CX).source
    ids = _check_named_lowering(info, src)
    c = compile_kernel(mod.mla_decode_seesaw, dict(mod.DEFAULT_CONFIG["signature"]), SEESAW_CX)
    assert ptxas_stats(c)["ok"]
    _check_ptx(info, c.asm["ptx"], ids)


HOP_GATHER = '''
import triton.language as tl
import tle_compiler as tle


@tle.jit
def hop(x_ptr, z_ptr, y_ptr, N):
    x = tle.pipe(capacity=1, barrier="named", t=tle.gpu.alloc([1, 64, 64], tl.bfloat16))
    ack = tle.pipe(capacity=1, a=tle.gpu.alloc([1, 64, 64], tl.bfloat16))
    tle.gpu.warp_specialize([(produce, (x, ack, x_ptr, y_ptr, N)), (consume, (x, ack, z_ptr, N))],
                            [4], [232])


def produce(x, ack, x_ptr, y_ptr, N):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    w = x.writer()
    r = ack.reader()
    for t in range(N):
        s = w.acquire(t)
        tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + t * 4096 + offs) * 2)
        w.commit(t)
        res = r.wait(t)
        tl.store(y_ptr + t * 4096 + offs, tl.load(tle.gpu.local_ptr(res.slot.a)))
        r.release(t)


def consume(x, ack, z_ptr, N):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    r = x.reader()
    w = ack.writer()
    for t in range(N):
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.t))
        r.release(t)
        s = w.acquire(t)
        tl.store(tle.gpu.local_ptr(s.a), tl.load(z_ptr + t * 4096 + offs))
        w.commit(t)
        tl.store(z_ptr + t * 4096 + offs, v)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*bf16", "z_ptr": "*bf16", "y_ptr": "*bf16", "N": "i32"}}
'''


def test_a_hop_commit_filled_by_cp_async_also_arrives_with_release_order(tmp_path):
    """consume's commit of ack is the hop that implies x's release (rule 10). ack is filled by a
    cp.async gather, whose per-thread cp.async.mbarrier.arrive tracks the copies, not consume's
    earlier loads of x's slot: the commit must also make an elected (release) arrive after the
    partition's bar.sync, so the init count is 32 x warps + 1. An mbarrier twin of x keeps the
    per-thread arrives alone."""
    path = tmp_path / "hop.py"
    path.write_text(HOP_GATHER)
    assert verify_ok(path)
    gen = gluon_source((str(path), "hop"))
    cons = _functions(gen.source)["consume"]
    commit = [ln for ln in cons.splitlines() if "ack_full0" in ln and "arrive" in ln]
    assert any("async_copy.mbarrier_arrive(ack_full0" in ln for ln in commit), commit
    assert any("mbarrier.arrive(ack_full0" in ln and "async_copy" not in ln for ln in commit), commit
    ack = next(a for a in gen.plans["ack"].arrays if a.kind == "full")
    assert ack.mode == "mixed" and ack.init_counts == [129]
    twin = tmp_path / "hop_mbar.py"
    twin.write_text(HOP_GATHER.replace('barrier="named", ', ""))
    ack2 = next(a for a in gluon_source((str(twin), "hop")).plans["ack"].arrays if a.kind == "full")
    assert ack2.mode == "thread" and ack2.init_counts == [128]
