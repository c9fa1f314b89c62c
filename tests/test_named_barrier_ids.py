"""Hardware barrier ids in the PTX of kernels with ``barrier="named"`` pipes.

A named pipe is a ``bar.arrive`` (writer) / ``bar.sync`` (readers) on an id of its own
(lowering/kir_passes.py, named_barrier_allocs), while Triton's warp specialization uses named
barriers of its own in the same CTA: ``barrier.sync 1`` (every thread) to start and end the
partitions, id 0 over the default partition's threads for its ``__syncthreads``, and id k + 2 over
worker partition k's threads for that partition's thread barriers (Triton 3.6,
ConvertWarpSpecializeToLLVM). Two uses of one id with different thread counts, or by partitions
outside the pipe, would make the hardware count them together: a hang or a race the verifier does
not see. These tests compile each bundled kernel with named pipes and a set of extra kernels (two,
three, four and six partitions of 1, 2 and 4 warps, eager publish, debug waits), split the PTX by
partition (the dispatch on the warp id and the switch on the partition state byte; each worker runs
from its case to the ``barrier.sync 1`` that ends it) and check every barrier instruction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Optional

import pytest

pytest.importorskip("triton.experimental.gluon")

from tle_compiler.diagnostics import TleError  # noqa: E402
from tle_compiler.lowering import compile_kernel  # noqa: E402
from tle_compiler.lowering.compile import kernel_info_of  # noqa: E402
from tle_compiler.lowering.dumping import default_config  # noqa: E402
from tle_compiler.lowering.kir_passes import NAMED_BARRIERS  # noqa: E402
from tle_compiler.passes import run_pipeline  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).parent / "fixtures" / "named_barrier"

BUNDLED = {
    "sparse_mla_seesaw": ("tle_kernels/sparse_mla_seesaw.py", "sparse_mla_seesaw"),
    "sparse_mla_seesaw_d512": ("tle_kernels/sparse_mla_seesaw_d512.py", "sparse_mla_seesaw_d512"),
    "mla_decode_seesaw": ("tle_kernels/mla_decode_seesaw.py", "mla_decode_seesaw"),
    "sparse_decode_seesaw_fp8": ("tle_kernels/sparse_decode_seesaw_fp8.py",
                                 "sparse_decode_seesaw_fp8"),
    **{k: (f"tle_kernels/{k}.py", k) for k in (
        "sparse_mla_seesaw_sink", "sparse_mla_seesaw_topk_length", "sparse_mla_seesaw_d512_sink",
        "sparse_mla_seesaw_d512_topk_length", "sparse_decode_seesaw_fp8_sink")},
    "exchange.ok": (str(FIXTURES / "exchange.ok.py"), "exchange"),
    "hop_commit.ok": (str(FIXTURES / "hop_commit.ok.py"), "hop_commit"),
    "three_partitions.ok": (str(FIXTURES / "three_partitions.ok.py"), "three"),
}

# ------------------------------------------------------------------------------- the PTX split

LABEL = re.compile(r"^(\$L__BB\d+_\d+):")
BRA = re.compile(r"^\s*(@!?(%p\d+)\s+)?bra(?:\.uni)?\s+(\$L__BB\d+_\d+);")
BAR = re.compile(r"\b(?:bar|barrier)\.(sync|arrive|red)\b[\w.]*\s+(\d+)(?:\s*,\s*(\d+))?")
IS_DEFAULT = re.compile(r"setp\.lt\.u32\s+(%p\d+),\s*%r\d+,\s*(\d+);")
STATE_CASE = re.compile(r"setp\.eq\.b16\s+(%p\d+),\s*(%rs\d+),\s*(\d+);")
# the Gluon inline asm of a named pipe (lowering/pipes.py, named_barrier_src): one asm line
PIPE_ASM = re.compile(r"bar\.(sync|arrive) (\d+), (\d+); mov\.b32")
START = re.compile(r"^\s*barrier\.sync\s+1;")


@dataclass(frozen=True)
class Site:
    line: int
    text: str
    op: str            # sync / arrive / red
    bar_id: int
    threads: Optional[int]
    pipe_asm: bool     # emitted by a named pipe (not by Triton)


def _blocks(ptx: str):
    blocks, order, cur = {"": []}, [""], ""
    for n, line in enumerate(ptx.splitlines(), 1):
        m = LABEL.match(line)
        if m:
            cur = m.group(1)
            blocks[cur] = []
            order.append(cur)
        else:
            blocks[cur].append((n, line))
    return blocks, order


def _site(n: int, line: str) -> Optional[Site]:
    if "mbarrier" in line or line.lstrip().startswith("//"):
        return None
    m = BAR.search(line)
    if not m:
        return None
    return Site(n, line.strip(), m.group(1), int(m.group(2)),
                int(m.group(3)) if m.group(3) else None, bool(PIPE_ASM.search(line)))


def partition_sites(ptx: str, n_workers: int) -> tuple[dict, list]:
    """The barrier instructions of each partition ("default", or the worker's index) and those
    of the dispatch itself (the start/end ``barrier.sync 1`` of the switch loop)."""
    blocks, order = _blocks(ptx)
    after = {order[i]: order[i + 1] for i in range(len(order) - 1)}
    # the warp id (a shfl of tid.x / 32), the predicates on it and on the state byte, and the
    # branches they guard (LLVM may schedule other instructions in between)
    text = ptx.splitlines()
    warp = next(m.group(1) for ln in text
                if (m := re.search(r"shfl\.sync\.idx\.b32\s+(%r\d+),", ln)))
    preds, default_entry, cases = {}, None, {}
    for name in order:
        for _, line in blocks[name]:
            m = IS_DEFAULT.search(line)
            if m and line.split(",")[1].strip() == warp:
                preds[m.group(1)] = ("default", None)
            m = STATE_CASE.search(line)
            if m:
                preds[m.group(1)] = (m.group(2), int(m.group(3)))
            m = re.match(r"\s*brx\.idx\s+(%r\d+),\s*(\$L_brx_\d+);", line)
            if m:  # a jump table: the case of value i is the table's i-th label
                table = re.search(re.escape(m.group(2)) + r":\s*\.branchtargets([^;]*);", ptx)
                labels = [t.strip() for t in table.group(1).split(",")]
                cases.setdefault(m.group(1), {}).update(enumerate(labels))
            b = BRA.match(line)
            if b and b.group(1) and not b.group(1).startswith("@!") and b.group(2) in preds:
                reg, value = preds.pop(b.group(2))
                if reg == "default":
                    default_entry = default_entry or b.group(3)
                else:
                    cases.setdefault(reg, {})[value] = b.group(3)
    # the state register: its cases include every worker's index (and the exit's, after them)
    switch = [c for c in cases.values() if set(range(n_workers + 1)) <= set(c)]
    assert default_entry and len(switch) == 1, "no warp-specialize dispatch found in the PTX"

    def walk(entry: str, worker: bool) -> list[tuple[int, str]]:
        seen, todo, out, started = set(), [entry], [], not worker
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            body, fall, stopped = blocks[name], True, False
            for n, line in body:
                # a worker ends at the barrier.sync 1 that hands back to the switch loop
                if START.match(line) and worker:
                    if started:
                        stopped = True
                        break
                    started = True  # the worker's first: the start of the partitions
                out.append((n, line))
                b = BRA.match(line)
                if b:
                    todo.append(b.group(3))
                    if not b.group(1):
                        fall = False
                        break
                if line.strip() == "ret;":
                    fall = False
                    break
            if fall and not stopped and name in after:
                todo.append(after[name])
        return out

    entries = {k: switch[0][k] for k in range(n_workers)}
    regions = {"default": walk(default_entry, False)}
    for k in range(n_workers):
        regions[k] = walk(switch[0][k], True)
    sites = {r: [s for n, ln in lines if (s := _site(n, ln))] for r, lines in regions.items()}
    claimed = {s.line for ss in sites.values() for s in ss}
    rest = [s for n, ln in enumerate(ptx.splitlines(), 1) if n not in claimed and (s := _site(n, ln))]
    return sites, rest, {k: blocks[e] for k, e in entries.items()}


# ------------------------------------------------------------------------------------ the checks

def barrier_problems(info, compiled) -> list[str]:
    """Every way the PTX's barrier ids break the rules in the module docstring (empty: none)."""
    ptx = compiled.asm["ptx"]
    parts = info.partitions
    default = next(p for p in parts if p.default)
    workers = [p for p in parts if not p.default]
    region_of = {default.name: "default", **{p.name: k for k, p in enumerate(workers)}}
    warps = {"default": default.warps, **{k: p.warps for k, p in enumerate(workers)}}
    name_of = {r: n for n, r in region_of.items()}
    sites, rest, entries = partition_sites(ptx, len(workers))
    problems = []
    # worker k's case sets the registers of the k-th worker partition (the split is the kernel's);
    # setmaxnreg acts on a warp group, so partitions of 1 or 2 warps sharing one get its largest
    for k, body in entries.items():
        m = next((re.search(r"setmaxnreg\.\w+\.sync\.aligned\.u32\s+(\d+);", ln)
                  for _, ln in body if "setmaxnreg" in ln), None)
        regs = int(m.group(1)) if m else None
        if regs is None or regs < workers[k].regs or (workers[k].warps % 4 == 0
                                                      and regs != workers[k].regs):
            problems.append(f"worker {k} ({workers[k].name}): its case sets {regs} registers, "
                            f"not {workers[k].regs}")
    # each barrier instruction belongs to one partition; the rest is the dispatch's barrier.sync 1
    lines = [s.line for ss in sites.values() for s in ss]
    if len(lines) != len(set(lines)):
        problems.append("a barrier instruction is reached from two partitions")
    for s in rest:
        if (s.op, s.bar_id, s.threads) != ("sync", 1, None):
            problems.append(f"line {s.line}: {s.text!r} outside every partition")

    named = {b.pipe: b for b in run_pipeline(info.program).barriers if b.kind == "named"}
    plans = {pp.name: pp.named for pp in compiled.tle_generated.plans.values() if pp.named}
    assert set(plans) == set(named), (plans, named)
    pipe_ids = {bar_id: pipe for pipe, (bar_id, _) in plans.items()}
    if len(pipe_ids) != len(plans):
        problems.append(f"two named pipes share an id: {plans}")
    triton_ids = {0, 1} | {k + 2 for k in range(len(workers))}
    for pipe, (bar_id, threads) in plans.items():
        b = named[pipe]
        writers = {region_of[e.partition] for e in b.arrivers}
        readers = {region_of[e.partition] for e in b.waiters}
        expected = 32 * sum(warps[r] for r in writers | readers)
        if threads != expected:
            problems.append(f"{pipe}: {threads} threads, its partitions have {expected}")
        if bar_id in triton_ids or not 0 < bar_id < NAMED_BARRIERS:
            problems.append(f"{pipe}: id {bar_id} is one of Triton's {sorted(triton_ids)}")
        uses = [(r, s) for r, ss in sites.items() for s in ss if s.bar_id == bar_id]
        uses += [("dispatch", s) for s in rest if s.bar_id == bar_id]
        if not any(s.op == "arrive" for _, s in uses) or not any(s.op == "sync" for _, s in uses):
            problems.append(f"{pipe}: id {bar_id} lacks its bar.arrive or its bar.sync")
        met = set()
        for r, s in uses:
            where = f"{pipe} (id {bar_id}), line {s.line} in {name_of.get(r, r)}: {s.text!r}"
            if not s.pipe_asm:
                problems.append(f"{where}: a barrier of Triton's on the pipe's id")
            elif s.threads != threads:
                problems.append(f"{where}: {s.threads} threads, the pipe has {threads}")
            elif (s.op, r) not in {("arrive", w) for w in writers} | {("sync", q) for q in readers}:
                problems.append(f"{where}: not the pipe's writer's arrive or a reader's sync")
            met.add(r)
        if met and 32 * sum(warps.get(r, 0) for r in met) != threads:
            problems.append(f"{pipe}: id {bar_id} meets {sorted(map(str, met))}, not {threads} "
                            f"threads of warps")
    for r, ss in sites.items():
        for s in ss:
            if s.pipe_asm and s.bar_id not in pipe_ids:
                problems.append(f"line {s.line} in {name_of[r]}: {s.text!r} on no pipe's id")
    # Triton's own barriers: id 0 over the default partition, k + 2 over worker k, nothing else
    for r, ss in sites.items():
        own = {(0, 32 * warps[r])} if r == "default" else {(r + 2, 32 * warps[r])}
        for s in ss:
            if s.pipe_asm or (s.op, s.bar_id, s.threads) == ("sync", 1, None):
                continue
            if (s.bar_id, s.threads) not in own:
                problems.append(f"line {s.line} in {name_of[r]}: {s.text!r}, Triton's barrier "
                                f"of this partition is {sorted(own)}")
    return problems


_cache: dict = {}


def compiled(path: str, name: str, debug_waits=None):
    key = (path, name, debug_waits)
    if key not in _cache:
        cfg = default_config(path, name)
        info = kernel_info_of((path, name) if name else path, cfg.get("constexprs", {}))
        c = compile_kernel(info, cfg["signature"], cfg.get("constexprs", {}),
                           num_warps=cfg.get("num_warps"), debug_waits=debug_waits)
        _cache[key] = (info, c)
    return _cache[key]


@pytest.mark.parametrize("key", list(BUNDLED))
def test_bundled_named_barrier_ids(key):
    path, name = BUNDLED[key]
    info, c = compiled(str(ROOT / path), name)
    assert c.tle_generated.plans and any(pp.named for pp in c.tle_generated.plans.values())
    assert barrier_problems(info, c) == []


def test_the_check_sees_a_collision_a_wrong_count_and_a_stray_partition():
    """The same check on the seesaw's PTX edited three ways: each edit is reported."""
    info, c = compiled(str(ROOT / BUNDLED["sparse_mla_seesaw"][0]), "sparse_mla_seesaw")
    ptx = c.asm["ptx"]
    (bar_id, threads), = {pp.named for pp in c.tle_generated.plans.values()
                          if pp.named and pp.name == "max0"}
    sync = f"bar.sync {bar_id}, {threads}; mov.b32"
    assert sync in ptx and "bar.sync \t3, 128;" in ptx

    def problems(edited: str) -> list[str]:
        return barrier_problems(info, SimpleNamespace(asm={"ptx": edited},
                                                      tle_generated=c.tle_generated))

    # a Triton partition barrier moved onto the pipe's id
    found = problems(ptx.replace("bar.sync \t3, 128;", f"bar.sync \t{bar_id}, 128;", 1))
    assert any("a barrier of Triton's on the pipe's id" in p for p in found), found
    # the pipe's bar.sync counting other threads than its bar.arrive
    found = problems(ptx.replace(sync, f"bar.sync {bar_id}, {threads + 128}; mov.b32", 1))
    assert any(f"{threads + 128} threads, the pipe has {threads}" in p for p in found), found
    # the pipe's bar.sync on the reader's Triton id (2 + its worker index)
    found = problems(ptx.replace(sync, "bar.sync 3, 256; mov.b32"))
    assert any("on no pipe's id" in p for p in found) and any("lacks" in p for p in found), found


# ------------------------------------------------------------------------ kernels made for this

def pingpong_source(name: str, pipes: int, warps: tuple, eager: bool = False) -> str:
    """Two partitions (``warps``: the default's, the worker's) passing a row back and forth over
    ``pipes`` named pipes in turn (p0 side0 -> side1, p1 side1 -> side0, ...): each pipe's hop is
    its reader's commit of the next pipe, which the writer waits before its next acquire."""
    opts = [f"num_warps={warps[0]}"] + (["eager_publish=True"] if eager else [])
    args = ", ".join(f"p{j}" for j in range(pipes))
    lines = ["import triton.language as tl", "", "import tle_compiler as tle", "", "",
             f"@tle.jit({', '.join(opts)})", f"def {name}(x_ptr, out_ptr, N):"]
    lines += [f'    p{j} = tle.pipe(capacity=1, barrier="named", m=tle.gpu.alloc([1, 64], tl.float32))'
              for j in range(pipes)]
    lines += [f"    tle.gpu.warp_specialize([(side0, ({args}, x_ptr, out_ptr, N)), "
              f"(side1, ({args}, x_ptr, out_ptr, N))], [{warps[1]}], [200])", "", ""]
    for side in (0, 1):
        lines += [f"def side{side}({args}, x_ptr, out_ptr, N):", "    offs = tl.arange(0, 64)"]
        lines += [f"    e{j} = p{j}.{'writer' if j % 2 == side else 'reader'}()" for j in range(pipes)]
        lines += ["    for p in range(N):", f"        v = tl.load(x_ptr + ({side} * N + p) * 64 + offs)"]
        for j in range(pipes):
            lines += ([f"        s{j} = e{j}.acquire(p)", f"        tl.store(tle.gpu.local_ptr(s{j}.m), v)",
                       f"        e{j}.commit(p)"] if j % 2 == side else
                      [f"        g{j} = e{j}.wait(p)", f"        v = v + tl.load(tle.gpu.local_ptr(g{j}.slot.m))",
                       f"        e{j}.release(p)"])
        lines += [f"        tl.store(out_ptr + ({side} * N + p) * 64 + offs, v)", "", ""]
    lines += ['DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "out_ptr": "*fp32", "N": "i32"}, '
              '"constexprs": {}}', ""]
    return "\n".join(lines)


def pairs_source(name: str, warps: tuple, eager: bool = False) -> str:
    """Partitions side0 .. side{n-1} of ``warps`` warps (side0 the default), in pairs (0, 1),
    (2, 3), ...: each pair exchanges a row over two named pipes, as
    tests/fixtures/named_barrier/exchange.ok.py does, so each id is met by one pair."""
    opts = [f"num_warps={warps[0]}"] + (["eager_publish=True"] if eager else [])
    lines = ["import triton.language as tl", "", "import tle_compiler as tle", "", "",
             f"@tle.jit({', '.join(opts)})", f"def {name}(x_ptr, out_ptr, N):"]
    calls, funcs = [], []
    for k in range(0, len(warps), 2):
        lines += [f'    ab{k} = tle.pipe(capacity=1, barrier="named", m=tle.gpu.alloc([1, 64], tl.float32))',
                  f'    ba{k} = tle.pipe(capacity=1, barrier="named", m=tle.gpu.alloc([1, 64], tl.float32))']
        for i, first, (w, r) in ((k, True, (f"ab{k}", f"ba{k}")), (k + 1, False, (f"ba{k}", f"ab{k}"))):
            calls.append(f"(side{i}, ({w}, {r}, x_ptr, out_ptr, N))")
            put = ["        s = w.acquire(p)", "        tl.store(tle.gpu.local_ptr(s.m), mine)",
                   "        w.commit(p)"]
            get = ["        res = r.wait(p)", "        theirs = tl.load(tle.gpu.local_ptr(res.slot.m))",
                   "        r.release(p)"]
            funcs += [f"def side{i}(wp, rp, x_ptr, out_ptr, N):", "    offs = tl.arange(0, 64)",
                      "    w = wp.writer()", "    r = rp.reader()", "    for p in range(N):",
                      f"        mine = tl.load(x_ptr + ({i} * N + p) * 64 + offs)",
                      *(put + get if first else get + put),
                      f"        tl.store(out_ptr + ({i} * N + p) * 64 + offs, tl.maximum(mine, theirs))",
                      "", ""]
    regs = [72 + 8 * (i % 3) for i in range(len(warps) - 1)]
    lines += [f"    tle.gpu.warp_specialize([{', '.join(calls)}], {list(warps[1:])}, {regs})", "", "",
              *funcs, 'DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "out_ptr": "*fp32", '
              '"N": "i32"}, "constexprs": {}}', ""]
    return "\n".join(lines)


EXTRA = {
    # name: (source, debug_waits)
    # (named pipes only: debug waits, which bound mbarrier waits, would change nothing here)
    "pairs_4_1": (lambda n: pairs_source(n, (4, 1)), None),
    "pairs_4_2_eager": (lambda n: pairs_source(n, (4, 2), eager=True), None),
    "pairs_4_4": (lambda n: pairs_source(n, (4, 4)), None),
    "pairs_4_1_2_4": (lambda n: pairs_source(n, (4, 1, 2, 4)), None),
    "pairs_4_1_2_4_eager": (lambda n: pairs_source(n, (4, 1, 2, 4), eager=True), None),
    "pairs_4_2_1_1_4_2": (lambda n: pairs_source(n, (4, 2, 1, 1, 4, 2)), None),
    # the most named pipes two partitions have (ids 15 down to 5; Triton's are 0, 1 and 2)
    "pingpong_11_w2": (lambda n: pingpong_source(n, 11, (4, 2)), None),
    "pingpong_11_w1_eager": (lambda n: pingpong_source(n, 11, (4, 1), eager=True), None),
    "pingpong_4_w4": (lambda n: pingpong_source(n, 4, (4, 4)), None),
}


@pytest.mark.parametrize("key", list(EXTRA))
def test_extra_named_barrier_ids(key, tmp_path):
    make, debug_waits = EXTRA[key]
    path = tmp_path / f"{key}.py"
    path.write_text(make(key))
    info, c = compiled(str(path), key, debug_waits)
    assert sum(1 for pp in c.tle_generated.plans.values() if pp.named) >= 2
    assert barrier_problems(info, c) == []


@pytest.mark.parametrize("key", ["sparse_mla_seesaw", "mla_decode_seesaw", "three_partitions.ok",
                                 "hop_commit.ok"])
def test_named_barrier_ids_with_debug_waits(key):
    """Debug waits (bounded mbarrier waits that print and trap) add branches to every partition
    with an mbarrier wait; the named pipes' ids and counts stay as they were."""
    path, name = BUNDLED[key]
    info, c = compiled(str(ROOT / path), name, True)
    assert "trap;" in c.asm["ptx"]
    assert barrier_problems(info, c) == []


def test_one_named_pipe_too_many_is_refused(tmp_path):
    """Twelve named pipes between two partitions would need id 4, below the five ids kept for
    Triton's warp specialization and a spare: the lowering refuses the kernel."""
    path = tmp_path / "pingpong_12.py"
    path.write_text(pingpong_source("pingpong_12", 12, (4, 2)))
    with pytest.raises(TleError, match="too many barrier=\"named\" pipes"):
        compiled(str(path), "pingpong_12")
