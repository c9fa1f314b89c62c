"""emit-nvws (tle_compiler/lowering/nvws.py): the pipe protocol as Triton 3.6 NVWS arefs, lowered by
Triton's own passes (docs/nvws.md).

On the CPU, for every example kernel, the bundled SparseMLA kernels (.py and .pipe) and the GPU-test
kernels: Triton's mbarrier init counts equal infer-barriers' counts, and the waits and arrives of
Triton's lowered partitions, interpreted for several trip counts, equal what docs/semantics.md asks
of the verified events, stage and parity included; the lowered module compiles for sm_90a. Then the
pins: what Triton 3.6 gets wrong or refuses on this path, each with the exact output or error, so a
Triton upgrade that changes it fails here. On a Hopper GPU (marked ``gpu``), the example family and
the bundled protocols run with a stamped payload through Triton's lowering, and every slot a reader
sees is the one its writer stored.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("triton._C.libtriton")

from tle_compiler.cli.dump import load  # noqa: E402
from tle_compiler.ir.expr import Affine  # noqa: E402
from tle_compiler.ir.nodes import For, walk_events  # noqa: E402
from tle_compiler.ir.parser import parse_module  # noqa: E402
from tle_compiler.lowering import nvws  # noqa: E402
from tle_compiler.passes import run_pipeline  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def kernels_dir() -> Path:
    """The bundled kernels' folder: ``tle_kernels/`` (``kernels/`` before the rename)."""
    for name in ("tle_kernels", "kernels"):
        if (ROOT / name / "examples").is_dir():
            return ROOT / name
    raise FileNotFoundError("neither tle_kernels/examples nor kernels/examples exists")


def example_files() -> list[Path]:
    return sorted(p for p in (kernels_dir() / "examples").glob("*.py") if p.name != "__init__.py")


def bundled_files() -> list[Path]:
    k = kernels_dir()
    return ([k / "sparse_mla_pipe.py", k / "sparse_mla_seesaw.py", k / "sparse_mla_pipe.pipe",
             k / "sparse_mla_seesaw.pipe"]
            + sorted(p for p in (k / "gpu_tests").glob("*.py") if p.name != "__init__.py"))


def programs(paths) -> list[tuple[str, object]]:
    out = []
    for p in paths:
        for prog in load(p).module.kernels:
            out.append((f"{p.parent.name}/{p.name}:{prog.name}", prog))
    return out


EXAMPLES = programs(example_files())
BUNDLED = programs(bundled_files())
ALL = EXAMPLES + BUNDLED
IDS = [k for k, _ in ALL]

_lowered: dict = {}


def lowered(key: str, prog, stage_hints: bool = False) -> nvws.Lowered:
    if (key, stage_hints) not in _lowered:
        _lowered[(key, stage_hints)] = nvws.lower(nvws.emit_nvws(prog, stage_hints=stage_hints))
    return _lowered[(key, stage_hints)]


def param_grid(prog, values=(0, 1, 2, 3, 5)) -> list[dict]:
    """Small values of the params, each within its domain (``N = tl.maximum(NT, 1)``: N >= 1)."""
    if len(prog.params) > 2:
        values = (0, 1, 3)
    per = [[v for v in values if p.contains(v)] for p in prog.params]
    names = [p.name for p in prog.params]
    return [dict(zip(names, v)) for v in itertools.product(*per)]


def backedge_exits(prog) -> list[str]:
    """Exits whose enter ran in an earlier iteration of their loop (``release(ck - 1)`` inside the
    loop over ck) on a pipe of capacity > 1: Triton 3.6 gives them stage 0 (see the pin below)."""
    out = []

    def walk(body, loops):
        for s in body:
            if isinstance(s, For):
                walk(s.body, loops + (s,))
            elif hasattr(s, "then"):
                walk(s.then, loops)
                walk(s.orelse, loops)
            elif hasattr(s, "verb") and s.verb in ("commit", "release") and loops:
                v = loops[-1].var
                enters = [e for e in walk_events(loops[-1].body) if e.pipe == s.pipe
                          and e.verb in ("acquire", "wait") and (e.reader == s.reader)
                          and e.index.substitute({v: Affine.of(v) - loops[-1].step}) == s.index]
                if enters and prog.pipe(s.pipe).capacity > 1:
                    out.append(f"{s.pipe}.{s.verb}({s.index})")

    for part in prog.partitions:
        walk(part.body, ())
    return out


def run_isolated(code: str) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter: the pins below make Triton assert or hit
    llvm_unreachable; MLIR's crash recovery turns that into an error today, but a crash must not
    take the test process with it."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


def isolated(code: str):
    """:func:`run_isolated`, for code that prints ``RESULT <json>``: the decoded value (the
    process's stderr is attached as ``isolated.stderr``)."""
    r = run_isolated(code)
    isolated.stderr = r.stderr
    line = next((ln for ln in r.stdout.splitlines() if ln.startswith("RESULT ")), None)
    assert line, f"exit {r.returncode}: {r.stdout[-1500:]}{r.stderr[-1500:]}"
    return json.loads(line[len("RESULT "):])


# ----------------------------------------------------------------------- counts: Triton == ours

@pytest.mark.parametrize("key,prog", ALL, ids=IDS)
def test_triton_counts_equal_inferred_counts(key, prog):
    low = lowered(key, prog)
    barriers = run_pipeline(prog).barriers
    rows = nvws.count_rows(low, barriers)
    named = {p.name for p in prog.pipes if p.named}
    for r in rows:
        if r.aref.pipe in named:
            # a named-barrier pipe has no mbarriers in our plan (one hardware named barrier);
            # the NVWS path lowers it as an aref like any other, with both barriers
            assert r.ours is None, r
            continue
        if r.ours is None:
            # an aref always has an empty barrier; a one-shot pipe has none in our plan. Triton
            # counts it like any other: one arrive per partition that releases it (1 when none
            # does: lower-aref's floor)
            assert r.kind == "empty" and r.aref.one_shot, r
            releasing = {part.name for part in prog.partitions for e in walk_events(part.body)
                         if e.pipe == r.aref.pipe and e.verb == "release"}
            assert r.triton == (len(releasing) or 1,), r
        else:
            assert r.triton == r.ours, f"{r.label}: Triton {r.triton}, infer-barriers {r.ours}"
    # every mbarrier we infer has its Triton array (a named pipe's has the aref's two)
    ours = {(b.pipe, b.kind, b.group) for b in barriers if b.kind != "named"}
    theirs = {(r.aref.pipe, r.kind, r.aref.group) for r in rows}
    assert ours <= theirs


def test_counts_are_partition_units_like_the_plan():
    """The lowering scales a count only for per-thread (cp.async) arrives (plan.init_count); in
    partition units the plan's count is infer-barriers' count, which is what Triton derives."""
    from tle_compiler.lowering.plan import init_count

    assert init_count(2, "partition", 128) == 2
    assert init_count(2, "thread", 128) == 256  # no NVWS counterpart: see the cp_async pin


# --------------------------------------------------------- waits and arrives: Triton == semantics

@pytest.mark.parametrize("key,prog", ALL, ids=IDS)
def test_triton_waits_and_arrives_equal_the_verified_events(key, prog):
    """Triton derives every stage and phase (our operands are 0 placeholders), and they are ours,
    except for an exit whose enter ran in the previous iteration on a ring of capacity > 1: there
    Triton keeps the placeholder (test_pin_release_across_a_back_edge_gets_stage_zero), so such a
    kernel must differ somewhere, and must match once our stages fill the operands Triton leaves."""
    crossing = backedge_exits(prog)
    low = lowered(key, prog)
    wrong = []
    for params in param_grid(prog):
        traced = low.trace(params)
        expected = nvws.expected_ops(prog, low.module.arefs, params)
        problems = nvws.compare_traces(expected, traced, low.module.arefs)
        if not crossing:
            assert problems == [], params
            assert nvws.simulate(low, traced) is None, params
        wrong += problems
    if crossing:
        assert wrong, f"Triton now derives the stage of {crossing}: drop the stage hints"
        hinted = lowered(key, prog, stage_hints=True)
        for params in param_grid(prog):
            traced = hinted.trace(params)
            expected = nvws.expected_ops(prog, hinted.module.arefs, params)
            assert nvws.compare_traces(expected, traced, hinted.module.arefs) == [], params
            assert nvws.simulate(hinted, traced) is None, params


def test_which_kernels_cross_a_back_edge():
    crossing = {k for k, p in ALL if backedge_exits(p)}
    assert {"examples/spmc.py:spmc_qk", "gpu_tests/spmc.py:spmc2"} <= crossing, crossing


def test_one_shot_pipe_gets_an_empty_barrier_only_in_nvws():
    """attention_tile's q is one_shot: our plan has no empty barrier; the aref has one, its acquire
    waits it at parity 1 (a fresh barrier passes) and nothing arrives (q is never released)."""
    key, prog = next(kp for kp in EXAMPLES if kp[0].endswith("attention_tile"))
    low = lowered(key, prog)
    tr = low.trace({"NT": 2})
    q = next(a for a in low.module.arefs if a.pipe == "q")
    assert tr["loader"][0].key == (nvws.WAIT, q.index, "empty", 0, 1)
    ours = nvws.expected_ops(prog, low.module.arefs, {"NT": 2}, nvws=False)
    assert ours["loader"] == [k.key for k in tr["loader"]][1:]


# -------------------------------------------------------------------- the lowered module compiles

@pytest.mark.parametrize("key,prog", EXAMPLES, ids=[k for k, _ in EXAMPLES])
def test_lowered_module_compiles_for_sm90a(key, prog):
    low = lowered(key, prog)
    k = nvws.compile_lowered(low.text, prog.name)
    assert ".target sm_90a" in k.asm["ptx"]
    assert k.asm["cubin"]
    # Triton's own arrive: one elected (predicated) thread per partition
    arrives = [ln for ln in k.asm["ptx"].splitlines() if "mbarrier.arrive" in ln]
    assert arrives and all(ln.strip().startswith("@%p") for ln in arrives)


def test_stamped_modules_compile_for_sm90a():
    for key, prog in EXAMPLES:
        mod = nvws.emit_nvws(prog, stamp=nvws.stamp_layout(prog, 16), stage_hints=True)
        low = nvws.lower(mod)
        assert nvws.compile_lowered(low.text, prog.name).asm["cubin"], key


# ---------------------------------------------------------------------- the checkers can fail

def test_count_comparison_catches_a_wrong_count():
    key, prog = next(kp for kp in EXAMPLES if kp[0].endswith("spmc_qk"))
    low = lowered(key, prog)
    barriers = [b.__class__(**{**b.__dict__, "count": b.count + (b.kind == "empty")})
                for b in run_pipeline(prog).barriers]
    rows = nvws.count_rows(low, barriers)
    assert any(r.ours is not None and r.ours != r.triton for r in rows)


def test_trace_comparison_catches_a_wrong_parity_and_a_missing_op():
    key, prog = next(kp for kp in EXAMPLES if kp[0].endswith("ring_sum"))
    low = lowered(key, prog)
    exp = nvws.expected_ops(prog, low.module.arefs, {"N_TILES": 4})
    tr = low.trace({"N_TILES": 4})
    bad = {p: [o[:4] + (o[4] ^ 1,) if o[0] == nvws.WAIT and i == 4 else o for i, o in enumerate(v)]
           for p, v in exp.items()}
    msgs = nvws.compare_traces(bad, tr, low.module.arefs)
    assert len(msgs) == 2 and "first difference at #4" in msgs[0]
    short = {p: v[:-1] for p, v in exp.items()}
    assert len(nvws.compare_traces(short, tr, low.module.arefs)) == 2


def test_simulation_finds_a_deadlock():
    key, prog = next(kp for kp in EXAMPLES if kp[0].endswith("ring_sum"))
    low = lowered(key, prog)
    tr = low.trace({"N_TILES": 4})
    tr["sum_tiles"] = [o for o in tr["sum_tiles"] if o.op == nvws.WAIT]  # never release
    assert "load_tiles waits ring.g0.empty[0] @ parity 0" in nvws.simulate(low, tr)


# ------------------------------------------------------------------- pins: what Triton 3.6 does

def test_pin_release_across_a_back_edge_gets_stage_zero():
    """spmc's vsum waits tile ck and releases ck - 1 under ``if ck > 0``: the token comes from the
    previous iteration (an iter_arg). nvws-assign-stage-phase follows tokens into loops only
    through a loop's init operand and out through its results, so this exit keeps its 0
    placeholder: every in-loop release arrives on empty[0]. From NK = 4 on the producer waits for
    a release of stage 1 that went to stage 0: a deadlock. (The release after the loop, reached
    through the loop's result, gets the right stage.)"""
    key, prog = next(kp for kp in EXAMPLES if kp[0].endswith("spmc_qk"))
    low = lowered(key, prog, stage_hints=False)
    g1 = next(a for a in low.module.arefs if a.pipe == "kv" and "v" in a.fields)
    tr = low.trace({"NK": 3})
    releases = [o.stage for o in tr["vsum"] if o.op == nvws.ARRIVE]
    assert releases == [0, 0, 0]  # releases of tiles 0 (in the loop), 1 (in the loop), 2 (after)
    exp = [o[3] for o in nvws.expected_ops(prog, low.module.arefs, {"NK": 3})["vsum"]
           if o[0] == nvws.ARRIVE]
    assert exp == [0, 1, 0]
    assert nvws.simulate(low, low.trace({"NK": 3})) is None
    assert nvws.simulate(low, low.trace({"NK": 4})) == (
        f"producer waits kv.g{g1.group}.empty[1] @ parity 0 (operation #13 of 16); scores waits "
        f"kv.g0.full[1] @ parity 1 (operation #12 of 16); vsum waits kv.g{g1.group}.full[1] @ "
        f"parity 1 (operation #5 of 8)")
    # the lowered in-loop release: an arrive on the empty array at the constant stage 0
    lines = low.text.splitlines()
    ifs = [i for i, ln in enumerate(lines) if "scf.if" in ln and "arith.cmpi sgt" in lines[i - 1]]
    assert any(re_match(r"ttg\.memdesc_index %\w+\[%c0_i32\w*\]", lines[i + 1])
               and "ttng.arrive_barrier" in lines[i + 2] for i in ifs)
    # with our stage in the operand Triton leaves alone, the same kernel is right
    hinted = lowered(key, prog, stage_hints=True)
    assert nvws.simulate(hinted, hinted.trace({"NK": 6})) is None


def re_match(pattern: str, s: str) -> bool:
    import re

    return re.search(pattern, s) is not None


def test_pin_warp_group_form_keeps_placeholders_and_counts_partitions_by_attribute():
    """The syntax of Triton's test/NVWS/lower_aref.mlir (aref ops inside ``nvws.warp_group``
    partitions, no ``ttg.partition`` attributes) parses and lowers, but: assign-stage-phase only
    walks scf.for/scf.if from the aref's block, never into a warp_group region, so every wait keeps
    the stage and phase operands it was written with (here 0, so the first acquire waits parity 0
    on a fresh barrier: a deadlock at once); and lower-aref counts an aref's consumers by the
    ``ttg.partition`` attribute of its get.exit ops, so with none the empty count is 1 whatever
    the number of readers."""
    key, prog = next(kp for kp in EXAMPLES if kp[0].endswith("ring_sum"))
    mod = nvws.emit_nvws(prog, form="warp-group")
    assert "nvws.warp_group" in mod.text and "ttg.partition" not in mod.text
    text = nvws.run_triton(mod.text, ("assign-stage-phase", "lower-aref", "lower-warp-group"))
    low = nvws.parse_lowered(text, mod)
    tr = low.trace({"N_TILES": 3})
    assert {(o.stage, o.value) for o in tr["load_tiles"] if o.op == nvws.WAIT} == {(0, 0)}
    assert nvws.simulate(low, tr) == ("load_tiles waits ring.g0.empty[0] @ parity 0 (operation #0 "
                                      "of 8); sum_tiles waits ring.g0.full[0] @ parity 0 "
                                      "(operation #0 of 8)")
    # two reader partitions on kv's kv_r group: Triton counts 1, infer-barriers 2
    k2, p2 = next(kp for kp in BUNDLED if kp[0].endswith("sparse_mla_pipe.pipe:sparse_mla_pipe"))
    mod2 = nvws.emit_nvws(p2, form="warp-group")
    low2 = nvws.parse_lowered(nvws.run_triton(mod2.text, ("assign-stage-phase", "lower-aref",
                                                          "lower-warp-group")), mod2)
    rows = {r.label: (r.triton, r.ours) for r in nvws.count_rows(low2, run_pipeline(p2).barriers)}
    assert rows["kv.empty[g1]"] == ((1, 1), (2, 2))
    # ... while the tagged form of the same kernel counts 2 (test_triton_counts_equal_...)
    assert {r.label: r.triton for r in nvws.count_rows(lowered(k2, p2), [])}["kv.empty[g1]"] == (2, 2)


def test_pin_warp_group_form_with_a_loop_carried_token_asserts():
    r = run_isolated(f"""
        from pathlib import Path
        from tle_compiler.cli.dump import load
        from tle_compiler.lowering import nvws
        prog = load(Path({str(kernels_dir() / 'examples' / 'spmc.py')!r})).module.kernels[0]
        try:
            nvws.run_triton(nvws.emit_nvws(prog, form="warp-group").text, ("assign-stage-phase",))
        except nvws.NvwsError as e:
            print("NVWSERROR", e.log)
    """)
    assert "NVWSERROR" in r.stdout, r.stderr[-2000:]
    assert "DenseMap::at failed due to a missing key" in r.stdout


TWO_READERS_ONE_PARTITION = """
kernel two_in_one
param N
pipe p capacity=2 readers=(a, b) fields=(x)
partition prod default warps=4 {
  for i in range(N) {
    p.acquire(i)
    p.commit(i)
  }
}
partition cons warps=4 regs=200 {
  for i in range(N) {
    p[a].wait(i)
    p[b].wait(i)
    p[a].release(i)
    p[b].release(i)
  }
}
"""


def test_pin_two_readers_in_one_partition():
    """SPMC readers map to partitions in NVWS: two readers of one pipe in the same partition count
    as one consumer (empty count 1; infer-barriers: 2, one arrive per reader), and the partition's
    one stage counter advances on each reader's get.enter, so reader b waits stage 1 for index 0."""
    prog = parse_module(TWO_READERS_ONE_PARTITION).kernels[0]
    ctx = run_pipeline(prog)
    assert not ctx.errors
    low = nvws.lower(nvws.emit_nvws(prog))
    rows = {r.label: (r.triton, r.ours) for r in nvws.count_rows(low, ctx.barriers)}
    assert rows["p.empty[g0]"] == ((1, 1), (2, 2))
    tr = low.trace({"N": 1})
    assert [o.key for o in tr["cons"]] == [(nvws.WAIT, 0, "full", 0, 0), (nvws.WAIT, 0, "full", 1, 0),
                                          (nvws.ARRIVE, 0, "empty", 0, 1),
                                          (nvws.ARRIVE, 0, "empty", 1, 1)]
    msgs = nvws.compare_traces(nvws.expected_ops(prog, low.module.arefs, {"N": 1}), tr,
                               low.module.arefs)
    assert msgs and "expected wait p.g0.full[0] @ parity 0, Triton's wait p.g0.full[1]" in msgs[0]


def test_pin_async_kinds_hopper_fills_cannot_use():
    """Our lowering fills slots with cp.async (per-thread arrives, plan.init_count 'thread'); the
    aref exit kinds Triton 3.6 counts are tc5mma/tma_load/none for producers and tc5mma/wgmma/none
    for consumers: cp_async (and wgmma on a put.exit) stop lower-aref in llvm_unreachable."""
    out = {}
    for name, kinds in (("put cp_async", {"put": "cp_async"}), ("put wgmma", {"put": "wgmma"}),
                        ("get cp_async", {"get": "cp_async"}), ("get wgmma", {"get": "wgmma"})):
        out[name] = isolated(f"""
            import json
            from pathlib import Path
            from tle_compiler.cli.dump import load
            from tle_compiler.lowering import nvws
            prog = load(Path({str(kernels_dir() / 'examples' / 'ring.py')!r})).module.kernels[0]
            try:
                low = nvws.lower(nvws.emit_nvws(prog, async_ops={kinds!r}))
                res = "ok " + repr([a.counts for a in low.arrays])
            except nvws.NvwsError as e:
                res = [l for l in e.log.splitlines() if "kind" in l][0].strip()
            print("RESULT " + json.dumps(res))
        """)
    assert out == {"put cp_async": "unsupported producer kind",
                   "put wgmma": "unsupported producer kind",
                   "get cp_async": "unsupported consumer kind",
                   "get wgmma": "ok [[1, 1, 1], [1, 1, 1]]"}


def test_pin_no_proxy_fence_for_wgmma_consumers():
    """lower-aref fences the generic→async proxy after a put.exit only when a consumer's exit is
    tc5mma; a wgmma consumer (Hopper) gets no fence. Our lowering fences before such a commit
    (infer-barriers: fence=async-proxy)."""
    key, prog = next(kp for kp in EXAMPLES if kp[0].endswith("attention_tile"))
    assert any(b.fence == "async-proxy" for b in run_pipeline(prog).barriers)
    wg = nvws.run_triton(nvws.emit_nvws(prog, async_ops={"get": "wgmma"}).text)
    tc = nvws.run_triton(nvws.emit_nvws(prog, async_ops={"get": "tc5mma"}).text)
    assert "fence_async_shared" not in wg
    assert "fence_async_shared" in tc and "tc_gen5_commit" in tc  # Blackwell's form


TOKENS_IN_PARTITIONS = """
module attributes {"ttg.num-warps" = 4 : i32, "ttg.num-ctas" = 1 : i32, "ttg.threads-per-warp" = 32 : i32, ttg.target = "cuda:90"} {
  tt.func public @tok(%N: i32) {
    %0 = nvws.create_token {loadType = 2 : i32, numBuffers = 3 : i32} : tensor<3x!nvws.token>
    ttg.warp_specialize(%0, %N)
    default {
      %c0 = arith.constant 0 : i32
      %c1 = arith.constant 1 : i32
      %false = arith.constant false
      scf.for %i = %c0 to %N step %c1 : i32 {
        nvws.producer_acquire %0, %c0, %false : tensor<3x!nvws.token>, i32, i1
        nvws.producer_commit %0, %c0 : tensor<3x!nvws.token>, i32
      }
      ttg.warp_yield
    }
    partition0(%t: tensor<3x!nvws.token>, %n: i32) num_warps(4) {
      %c0 = arith.constant 0 : i32
      %c1 = arith.constant 1 : i32
      %false = arith.constant false
      scf.for %i = %c0 to %n step %c1 : i32 {
        nvws.consumer_wait %t, %c0, %false : tensor<3x!nvws.token>, i32, i1
        nvws.consumer_release %t, %c0 : tensor<3x!nvws.token>, i32
      }
      ttg.warp_return
    } : (tensor<3x!nvws.token>, i32) -> ()
    tt.return
  }
}
"""

TOKENS_IN_WS_LOOP = """
module attributes {"ttg.num-warps" = 4 : i32, "ttg.num-ctas" = 1 : i32, "ttg.threads-per-warp" = 32 : i32, ttg.target = "cuda:90"} {
  tt.func public @tok(%N: i32) {
    %0 = nvws.create_token {loadType = LOADTYPE : i32, numBuffers = 3 : i32} : tensor<3x!nvws.token>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %false = arith.constant false
    scf.for %i = %c0 to %N step %c1 : i32 {
      nvws.producer_acquire %0, %c0, %false {async_task_id = array<i32: 0>} : tensor<3x!nvws.token>, i32, i1
      nvws.producer_commit %0, %c0 {async_task_id = array<i32: 0>} : tensor<3x!nvws.token>, i32
      nvws.consumer_wait %0, %c0, %false {async_task_id = array<i32: 1>} : tensor<3x!nvws.token>, i32, i1
      nvws.consumer_release %0, %c0 {async_task_id = array<i32: 1>} : tensor<3x!nvws.token>, i32
    } {tt.warp_specialize}
    tt.return
  }
}
"""


def test_pin_token_ops_have_no_lowering_for_given_partitions():
    """The token form (nvws.create_token, producer_acquire/commit, consumer_wait/release) is lowered
    only by doTokenLowering inside Hopper's nvgpu-warp-specialization (add_hopper_warpspec), which
    returns at once when no loop carries ``tt.warp_specialize``: tokens inside our
    ttg.warp_specialize partitions come out untouched, and compiling stops at shared-memory
    allocation. Inside a ``tt.warp_specialize`` loop the pass partitions the loop itself; the
    token lowering then asserts for every load type but 2 (local stores), and for 2 it leaves the
    ops in place (no partitions made) with per-thread counts (128 arrives on the empty barrier per
    release) and the stage and phase the ops were given."""
    head = """
        import json, re
        from tle_compiler.lowering import nvws
    """
    head = textwrap.dedent(head)
    out = isolated(head + textwrap.dedent(f"""
        t = nvws.run_triton({TOKENS_IN_PARTITIONS!r}, ("hopper-warpspec",))
        res = [t.count("nvws.producer_acquire"), t.count("ttng.wait_barrier")]
        try:
            nvws.compile_lowered(t, "tok")
            res.append("ok")
        except Exception as e:
            res.append(type(e).__name__)
        print("RESULT " + json.dumps(res))
    """))
    compile_stderr = isolated.stderr
    for lt in (1, 2):
        out.append(isolated(head + textwrap.dedent(f"""
            try:
                t = nvws.run_triton({TOKENS_IN_WS_LOOP!r}.replace("LOADTYPE", "{lt}"),
                                    ("hopper-warpspec",))
                res = [t.count("nvws."), t.count("ttg.warp_specialize"),
                       len(re.findall(r"ttng.init_barrier %\\w+, 128", t)),
                       len(re.findall(r"ttng.arrive_barrier %\\w+, 128", t))]
            except nvws.NvwsError as e:
                res = [l for l in e.log.splitlines() if "Assertion" in l][0].split(": ", 1)[1]
            print("RESULT " + json.dumps(res))
        """)))
    out = {"partitions": out[:2], "compile": out[2], "1": out[3], "2": out[4]}
    assert out["partitions"] == [1, 0]  # not lowered
    assert out["compile"] == "RuntimeError"
    assert "shared memory size for scalar type is unspecified: tensor<3x!nvws.token>" in compile_stderr
    assert out["1"].startswith("/project/third_party/nvidia/hopper/lib/Transforms/"
                               "WarpSpecialization/WSLowerToken.cpp:73: void mlir::"
                               "processProducerCommitOp")
    assert out["1"].endswith("Assertion `false' failed.")
    assert out["2"] == [0, 0, 3, 1]  # 3 empty barriers (numBuffers) of count 128; 1 release


# -------------------------------------------------------------------------------------- the GPU

GPU_RUNS = [(k, p) for k, p in ALL if ".pipe:" not in k]  # the .pipe files repeat the .py kernels


@pytest.mark.gpu
@pytest.mark.parametrize("key,prog", GPU_RUNS, ids=[k for k, _ in GPU_RUNS])
def test_gpu_stamped_protocol_runs_element_exact(key, prog):
    """The protocol, lowered by Triton's NVWS passes, run on the GPU with stamped slots: every
    slot each reader waits is logged and equals what its writer stored for that index. (Stages
    from Triton except where it cannot derive them: test_pin_release_across_a_back_edge_...)"""
    hints = bool(backedge_exits(prog))
    for params in param_grid(prog, (0, 1, 2, 3, 7)):
        res = nvws.run_stamp(prog, params, stage_hints=hints)
        assert res["mismatches"] == [], (params, res["mismatches"][:5])


def test_stamp_log_check_catches_a_wrong_slot():
    """The GPU test's checker: a log holding exactly the stamps passes; one element from another
    index, a slot never logged, or a missing closed tag fail."""
    key, prog = next(kp for kp in EXAMPLES if kp[0].endswith("ring_sum"))
    params = {"N_TILES": 3}
    lay = nvws.stamp_layout(prog, 4)
    log = [-1] * lay.log_elems
    for i in range(4):
        for lane in range(lay.width):
            log[lay.offset("ring", "", "tile", i) + lane] = lay.stamp("ring", "tile", i, lane, i == 3)
    assert nvws.check_stamp_log(prog, params, lay, log) == ([], 4 * lay.width)
    bad = list(log)
    bad[lay.offset("ring", "", "tile", 1) + 5] = lay.stamp("ring", "tile", 0, 5)
    assert [m[4:6] for m in nvws.check_stamp_log(prog, params, lay, bad)[0]] == [(1, 5)]
    bad = list(log)
    bad[lay.offset("ring", "", "tile", 2)] = -1
    assert len(nvws.check_stamp_log(prog, params, lay, bad)[0]) == 1
    bad = list(log)
    bad[lay.offset("ring", "", "tile", 3)] = lay.stamp("ring", "tile", 3, 0)  # not closed
    assert len(nvws.check_stamp_log(prog, params, lay, bad)[0]) == 1


def test_pin_slot_loads_in_a_nested_loop_make_lower_aref_combine_arefs():
    """nvws-lower-aref first merges the arefs whose get.enter buffers feed ttg.local_load (or a
    tcgen05 MMA) under one common op of the warp-specialized loop's body, per partition
    (combineArefs: meant for TMA loads consumed together). With our partitions' own loops nested
    in that body, every slot read in one loop is merged: spmc's scores reads k and v (the v exits
    of vsum sit in two blocks) and chain's stage_b reads ab twice. The stamped payload therefore
    loads slots in a helper function (tt.call, inlined by make_llir), which is not such a user."""
    out = {}
    for f in ("ring", "attention_tile", "chain", "spmc"):
        for direct in (False, True):
            # one interpreter per case: after a caught crash, Triton's state is not to be trusted
            r = run_isolated(f"""
                from pathlib import Path
                from tle_compiler.cli.dump import load
                from tle_compiler.lowering import nvws
                prog = load(Path({str(kernels_dir() / 'examples')!r}) / "{f}.py").module.kernels[0]
                m = nvws.emit_nvws(prog, stamp=nvws.stamp_layout(prog, 8, direct_load={direct}))
                try:
                    nvws.lower(m)
                    print("RESULT ok")
                except nvws.NvwsError as e:
                    lines = e.log.splitlines()
                    print("RESULT " + ([l.split(": ", 1)[1] for l in lines if "Assertion" in l]
                           + [l.split("error: ", 1)[1] for l in lines if "signal was caught" in l])[0])
            """)
            line = next((ln for ln in r.stdout.splitlines() if ln.startswith("RESULT ")), None)
            out[f + (" direct" if direct else "")] = line[len("RESULT "):] if line else \
                f"died: {r.returncode}"
    assert {k: v for k, v in out.items() if v == "ok"} == {
        "ring": "ok", "attention_tile": "ok", "chain": "ok", "spmc": "ok", "ring direct": "ok",
        "attention_tile direct": "ok"}
    assert out["spmc direct"].startswith("/project/third_party/nvidia/lib/Dialect/NVWS/Transforms/"
                                         "LowerAref.cpp:737: auto mlir::triton::(anonymous "
                                         "namespace)::createCombinedArefOps")
    assert out["spmc direct"].endswith("Assertion `a->getBlock() == b->getBlock()' failed.")
    assert out["chain direct"].startswith("A signal was caught while processing the MLIR module")
