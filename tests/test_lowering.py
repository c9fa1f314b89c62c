"""The lowering on the CPU: every example and bundled kernel compiles for sm_90a through Gluon, and
the TTGIR carries exactly what the passes inferred (barrier counts, partitions, warps, registers,
wgmma reading slots), with no ptxas spills. Compiles are cached per module (one per kernel)."""

from __future__ import annotations

import io
import json
import re
from contextlib import redirect_stdout
from pathlib import Path
from types import SimpleNamespace

import pytest

pytest.importorskip("triton.experimental.gluon")

from tle_compiler.cli.dump import main as dump_main  # noqa: E402
from tle_compiler.diagnostics import TleError  # noqa: E402
from tle_compiler.frontend import read_kernels  # noqa: E402
from tle_compiler.lowering import compile_kernel, gluon_source, ptxas_stats  # noqa: E402
from tle_compiler.lowering.compile import kernel_info_of  # noqa: E402
from tle_compiler.lowering.dumping import default_config  # noqa: E402
from tle_compiler.lowering.layouts import LayoutSolver, blocked_default  # noqa: E402
from tle_compiler.language.registers import check_registers  # noqa: E402
from tle_compiler.passes import run_pipeline  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden"
KERNELS = {
    "ring": ("tle_kernels/examples/ring.py", "ring_sum"),
    "spmc": ("tle_kernels/examples/spmc.py", "spmc_qk"),
    "chain": ("tle_kernels/examples/chain.py", "chain"),
    "attention_tile": ("tle_kernels/examples/attention_tile.py", "attention_tile"),
    "sparse_mla_pipe": ("tle_kernels/sparse_mla_pipe.py", "sparse_mla_pipe"),
    "sparse_mla_seesaw": ("tle_kernels/sparse_mla_seesaw.py", "sparse_mla_seesaw"),
}
# Kernels whose dots read pipe slots (wgmma from shared memory).
WGMMA = {"spmc": 1, "attention_tile": 2, "sparse_mla_pipe": 5, "sparse_mla_seesaw": 10}
# No kernel spills: the seesaw's former 488 B came from LLVM hoisting every loop-invariant wgmma
# descriptor of its capacity-1 slots out of the loop (docs/lowering.md, "Seesaw registers").

_cache: dict = {}


def compiled(key: str):
    if key not in _cache:
        path, name = KERNELS[key]
        cfg = default_config(str(ROOT / path), name)
        # the persistent seesaw is read specialised to its constexprs (compile.kernel_info_of)
        info = kernel_info_of((str(ROOT / path), name), cfg.get("constexprs", {}))
        c = compile_kernel(info, cfg["signature"], cfg.get("constexprs", {}),
                           num_warps=cfg.get("num_warps"))
        _cache[key] = (info, c)
    return _cache[key]


def ttgir_ops(ttgir: str) -> list[str]:
    return [ln.strip() for ln in ttgir.splitlines() if not ln.startswith("#loc")]


@pytest.mark.parametrize("key", list(KERNELS))
def test_compiles_for_sm90a(key):
    info, c = compiled(key)
    assert "ttg.warp_specialize" in c.asm["ttgir"]
    assert ".target sm_90a" in c.asm["ptx"]
    assert c.asm["cubin"]


@pytest.mark.parametrize("key", list(KERNELS))
def test_init_barrier_counts_are_the_inferred_counts(key):
    info, c = compiled(key)
    counts = [int(m.group(1)) for m in re.finditer(r"ttng\.init_barrier %\S+, (\d+)", c.asm["ttgir"])]
    # a named-barrier pipe's barrier is a hardware one, never an mbarrier (checked below)
    named = [b for b in run_pipeline(info.program).barriers if b.kind == "named"]
    inferred = [b for b in run_pipeline(info.program).barriers if b.kind != "named"]
    plans = c.tle_generated.plans
    arrays = [arr for pp in plans.values() for arr in pp.arrays]
    # partition-unit counts are infer-barriers' counts ...
    assert sorted(b.count for arr in arrays for b in arr.barriers) == sorted(b.count for b in inferred)
    # ... and the init counts are exactly those, scaled by the arrive unit (plan.init_count)
    warps = {p.name: p.warps for p in info.partitions}
    expected = []
    for arr in arrays:
        for b in arr.barriers:
            threads = 32 * warps[b.arrivers[0].partition] if b.arrivers else 0
            expected.append({"partition": b.count, "thread": b.count * threads,
                             "mixed": b.count * (threads + 1),
                             # eager publish (lowering/eager.py): every thread arrives itself
                             "eager": b.count * threads,
                             "eager-mixed": b.count * 2 * threads}[arr.mode])
    assert counts == expected == [ic for arr in arrays for ic in arr.init_counts]
    # ... and the same as tle-dump's JSON barriers
    out = io.StringIO()
    with redirect_stdout(out):
        assert dump_main(["--format", "json", "-q" if False else "--no-locations",
                          str(ROOT / KERNELS[key][0])]) == 0
    doc = json.loads(out.getvalue())
    k = next(k for k in doc["kernels"] if k.get("name", k.get("kernel")) == info.name) \
        if any("name" in k or "kernel" in k for k in doc["kernels"]) else doc["kernels"][0]
    mbarriers = [b for b in k["barriers"] if b["kind"] != "named"]
    assert sorted(b["count"] for b in mbarriers) == sorted(b.count for b in inferred)
    assert sorted(counts) == sorted(b["init_count"] for b in mbarriers)
    # each named barrier: bar.arrive / bar.sync over the writer's and the reader's threads
    for b in named:
        j = next(x for x in k["barriers"] if x["kind"] == "named" and x["pipe"] == b.pipe)
        parts = {e.partition for e in b.arrivers + b.waiters}
        assert j["arrive_unit"] == "named" and j["init_count"] == 32 * sum(warps[p] for p in parts)
        assert f"bar.arrive {j['bar_id']}, {j['init_count']};" in c.tle_generated.source
    by_label = {f"{b['pipe']}.{b['kind']}[g{b['group']}][{b['stage']}]": b for b in k["barriers"]}
    for arr in arrays:
        for b, ic in zip(arr.barriers, arr.init_counts):
            assert (by_label[b.label]["arrive_unit"], by_label[b.label]["init_count"]) == (arr.mode, ic)


@pytest.mark.parametrize("key", list(KERNELS))
def test_warp_specialize_partitions_warps_registers(key):
    info, c = compiled(key)
    t = c.asm["ttgir"]
    workers = [p for p in info.partitions if not p.default]
    m = re.search(r"requestedRegisters = array<i32: ([\d, ]+)>", t)
    assert m and [int(x) for x in m.group(1).split(",")] == [p.regs for p in workers]
    warps = [int(w) for w in re.findall(r"partition\d+\(.*\) num_warps\((\d+)\)", t)]
    assert warps == [p.warps for p in workers]
    assert f'"ttg.num-warps" = {info.num_warps}' in t


@pytest.mark.parametrize("key", list(WGMMA))
def test_wgmma_reads_slots_from_shared_memory(key):
    info, c = compiled(key)
    dots = [ln for ln in ttgir_ops(c.asm["ttgir"]) if "ttng.warp_group_dot " in ln]
    assert len(dots) == WGMMA[key]
    # every B operand is a shared-memory descriptor (never a register round trip)
    for d in dots:
        types = d.split(" : ", 1)[1]
        assert types.count("!ttg.memdesc") >= 1
    assert "wgmma.mma_async" in c.asm["ptx"]
    assert "fence.proxy.async" in c.asm["ptx"]


@pytest.mark.parametrize("key", list(WGMMA))
def test_wgmma_is_async_and_waited(key):
    """Every wgmma is issued async; waits (wgmma.wait_group) are emitted only where a result, a
    released slot or a register operand needs them — never one per wgmma in the SparseMLA chains."""
    info, c = compiled(key)
    ops = ttgir_ops(c.asm["ttgir"])
    dots = [ln for ln in ops if "ttng.warp_group_dot " in ln]
    waits = [ln for ln in ops if "ttng.warp_group_dot_wait" in ln]
    assert dots and all("isAsync = true" in d for d in dots)
    assert waits and "wgmma.wait_group.sync.aligned" in c.asm["ptx"]
    if key.startswith("sparse_mla"):
        assert len(waits) < len(dots)  # the QK chain (3 wgmmas) is waited once


def test_gluon_waits_before_release_and_read():
    src = gluon_source((str(ROOT / KERNELS["sparse_mla_pipe"][0]), "sparse_mla_pipe"),
                       {"TOPK": 2048, "BLOCK_H": 64}).source
    right = src.split("def right(", 1)[1].split("@gluon.jit", 1)[0]
    lines = [ln.strip() for ln in right.splitlines()]
    dot = next(i for i, ln in enumerate(lines) if "warpgroup_mma(" in ln)
    wait = next(i for i, ln in enumerate(lines) if "warpgroup_mma_wait(0" in ln)
    rel = next(i for i, ln in enumerate(lines) if "mbarrier.arrive(score_empty0" in ln)
    assert dot < wait < rel  # the PV reads the probs slot: retired before the slot is released


@pytest.mark.parametrize("key", ["sparse_mla_pipe", "sparse_mla_seesaw"])
def test_gathers_are_16_byte_cp_async(key):
    info, c = compiled(key)
    ptx = c.asm["ptx"]
    # 16 bytes a copy; the source size is 16 or, for a masked gather (zero-fill), a register
    assert re.search(r"cp\.async\.cg\.shared\.global \[[^]]+\], \[[^]]+\], 0x10, (0x10|%r\d+);",
                     ptx)
    assert "cp.async.mbarrier.arrive.noinc.shared.b64" in ptx
    modes = {arr.var: arr.mode for pp in c.tle_generated.plans.values() for arr in pp.arrays}
    # kv_r only / kv_l + valid (the seesaw's eager publish: every thread arrives for the valid
    # mask too, lowering/eager.py)
    mixed = "eager-mixed" if info.options.get("eager_publish") else "mixed"
    assert "thread" in modes.values() and mixed in modes.values()


@pytest.mark.parametrize("key", list(KERNELS))
def test_no_spills(key):
    info, c = compiled(key)
    st = ptxas_stats(c)
    assert st["ok"], st["log"]
    assert st["spill_stores"] == 0 and st["spill_loads"] == 0, st["log"]
    assert not st["wgmma_serialized"], st["log"]  # ptxas C7515
    assert "bytes stack frame" not in st["log"] or " 0 bytes stack frame" in st["log"], st["log"]


def test_constant_slot_wgmma_operands_use_an_opaque_index_in_loops():
    """A capacity-1 / one_shot slot read by a wgmma inside a loop is indexed with an opaque 0, so
    its descriptors are recomputed in the loop instead of hoisted (and spilled) by LLVM."""
    info, c = compiled("sparse_mla_seesaw")
    src = c.tle_generated.source
    assert 'gl.inline_asm_elementwise("mov.b32 $0, 0;"' in src
    assert not re.search(r"warpgroup_mma\([^\n]*\.index\(0\)", src)


def test_register_a_operand_loaded_in_dot_operand_layout():
    """The seesaw's register q_tail is loaded straight into the wgmma DotOperand layout: no
    conversion through shared memory inside the loop."""
    info, c = compiled("sparse_mla_seesaw")
    assert re.search(r"tt\.load %\S+(, %\S+)* : tensor<64x64x!tt\.ptr<bf16>, #ttg\.dot_op<",
                     c.asm["ttgir"])  # masked (rows past the head count) or not


def _anonymise(lines: list[str]) -> list[str]:
    out = []
    for ln in lines:
        ln = re.sub(r" loc\(#loc\d*\)| loc\(unknown\)", "", ln)
        ln = re.sub(r"%[\w.]+", "%_", ln)
        out.append(ln)
    return out


def ring_golden_lines() -> list[str]:
    _, c = compiled("ring")
    keep = re.compile(r"ttng\.(init_barrier|wait_barrier|arrive_barrier)|ttg\.warp_specialize|"
                      r"partition\d|ttg\.local_alloc|scf\.for")
    return _anonymise([ln for ln in ttgir_ops(c.asm["ttgir"]) if keep.search(ln)])


def test_golden_ttgir_ring():
    """Barrier/partition skeleton of tle_kernels/examples/ring.py (SSA names anonymised). Regenerate with
    `python -c "import tests.test_lowering as t; t.write_golden()"` after an intended change."""
    expected = (GOLDEN / "ring_ttgir.txt").read_text().splitlines()
    assert ring_golden_lines() == expected


def write_golden() -> None:  # pragma: no cover - maintenance helper
    (GOLDEN / "ring_ttgir.txt").write_text("\n".join(ring_golden_lines()) + "\n")


def test_gluon_source_of_ring_uses_inferred_parities():
    src = gluon_source((str(ROOT / KERNELS["ring"][0]), "ring_sum")).source
    assert "mbarrier.wait(ring_empty0.index(_ring_s1), (((t) // 3) & 1) ^ 1)" in src
    assert "mbarrier.wait(ring_full0.index(_ring_s1), ((t) // 3) & 1)" in src
    assert "gl.warp_specialize([" in src and "], [4], [232])" in src


def test_rejected_protocol_is_never_lowered():
    with pytest.raises(TleError) as e:
        compile_kernel((str(GOLDEN / "bad_missing_release.py"), "leaky"),
                       {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"})
    assert "bad_missing_release.py:26" in str(e.value)
    assert "nothing is lowered" in str(e.value)


def test_register_rule():
    def info(regs, warps=(4, 4), default_warps=4):
        parts = [SimpleNamespace(name="d", default=True, warps=default_warps, regs=None, loc=None)]
        parts += [SimpleNamespace(name=f"w{i}", default=False, warps=w, regs=r, loc=None)
                  for i, (w, r) in enumerate(zip(warps, regs))]
        return SimpleNamespace(partitions=parts)

    assert check_registers(info([240, 168])) == 104
    assert check_registers(info([216, 216])) == 80
    with pytest.raises(TleError, match="multiple of 8"):
        check_registers(info([250, 168]))
    with pytest.raises(TleError, match="leave"):
        check_registers(info([256, 256]))  # 512 - 512 = 0 left for the default partition


def test_layout_solver_converts_only_where_fixed_layouts_meet():
    S = LayoutSolver(4)
    a, b, c = S.new(2), S.new(2), S.new(2)
    mma1 = ("mma", (4, 1), (16, 64, 16))
    mma2 = ("mma", (4, 1), (16, 256, 16))
    S.fix(a, mma1)
    S.fix(c, mma2)
    s1 = S.soft_eq(b, a)          # b joins a's class
    s2 = S.soft_eq(b, c)          # would force mma1 == mma2: converted instead
    r = S.new(1)
    S.slice_of(r, 1, a)           # a reduction of a
    free = S.new(2)
    S.solve()
    assert S.converts == {s2} and s1 not in S.converts
    assert S.layout(b) == mma1 and S.layout(r) == ("slice", 1, mma1)
    assert S.layout(free) == blocked_default(2, 4)


def test_launch_without_gpu_says_so_and_bad_args_are_errors():
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    from tle_kernels.examples.ring import ring_sum

    x = torch.zeros(64, 64)
    with pytest.raises(TleError, match="no CUDA GPU"):
        ring_sum[(1,)](x, x, 64, 1)
    with pytest.raises(TleError, match="argument 'stride_x' is a str"):
        ring_sum[(1,)](x, x, "64", 1)
    with pytest.raises(TleError, match="missing argument"):
        ring_sum[(1,)](x, x)


@pytest.mark.parametrize("flag,needle", [("--gluon", "gl.warp_specialize(["),
                                         ("--ttgir", "ttng.init_barrier")])
def test_tle_dump_lowered(flag, needle):
    out = io.StringIO()
    with redirect_stdout(out):
        assert dump_main([flag, str(ROOT / KERNELS["ring"][0])]) == 0
    assert needle in out.getvalue()


def test_tle_dump_ptx_of_rejected_kernel_fails():
    assert dump_main(["--ptx", str(GOLDEN / "bad_missing_release.py")]) == 1


def test_tle_cp_async_0_lowers_gathers_as_register_loads(monkeypatch):
    """TLE_CP_ASYNC=0 (for Triton's concurrency sanitizer, scripts/gpu_check.sh): no cp.async."""
    monkeypatch.setenv("TLE_CP_ASYNC", "0")
    from tle_kernels.sparse_mla_pipe import DEFAULT_CONFIG, sparse_mla_pipe

    c = compile_kernel(sparse_mla_pipe, DEFAULT_CONFIG["signature"], DEFAULT_CONFIG["constexprs"])
    assert "cp.async" not in c.asm["ptx"]
    assert not c.tle_generated.uses_cp_async


# ------------------------------------------------------------------ scalar loads

SCALAR_LOADS = '''
import triton.language as tl
import tle_compiler as tle


def fill(p, x_ptr, bt_ptr, NT):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    w = p.writer()
    for i in range(NT):
        page = tl.load(bt_ptr + i, mask=MASK, other=0).to(tl.int64)
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + page * 4096 + offs))
        w.commit(i)


def drain(p, NT):
    r = p.reader()
    for i in range(NT):
        r.wait(i)
        r.release(i)


@tle.jit
def paged_copy(x_ptr, bt_ptr, n_ptr):
    NT = tl.load(n_ptr + tl.program_id(0))
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, 64, 64], tl.bfloat16))
    tle.gpu.warp_specialize([(fill, (p, x_ptr, bt_ptr, NT)), (drain, (p, NT))], [4], [232])
'''
SCALAR_LOADS_SIG = {"x_ptr": "*bf16", "bt_ptr": "*i32", "n_ptr": "*i32"}


def test_scalar_loads_compile_to_scalar_tt_loads(tmp_path):
    """tl.load of one pointer, in the kernel prologue (the trip count, an opaque param the verifier
    proves the protocol for at every value) and in a partition (masked, with `other`): scalar
    tt.loads (a !tt.ptr operand, no tensor of one pointer, no reduction), one ld.global each."""
    path = tmp_path / "paged_copy.py"
    path.write_text(SCALAR_LOADS.replace("MASK", "i < NT"))
    info = kernel_info_of((str(path), "paged_copy"), {})
    assert [p.name for p in info.program.params] == ["NT"]
    c = compile_kernel(info, SCALAR_LOADS_SIG, {})
    loads = [ln.strip() for ln in ttgir_ops(c.asm["ttgir"]) if "tt.load " in ln]
    scalar = [ln for ln in loads if ln.split(" : ", 1)[1].startswith("!tt.ptr<i32>")]
    assert len(scalar) == 2, loads
    assert sum(ln.count(",") == 2 for ln in scalar) == 1  # the partition's: pointer, mask, other
    assert not any("tensor<1x" in ln for ln in loads) and "tt.reduce" not in c.asm["ttgir"]
    assert len(re.findall(r"\bld\.global\.b32\b", c.asm["ptx"])) == 2
    st = ptxas_stats(c)
    assert st["ok"] and (st["spill_stores"], st["spill_loads"]) == (0, 0), st["log"]
    assert not st["wgmma_serialized"], st["log"]  # ptxas C7515


def test_a_tensor_mask_on_a_scalar_pointer_is_a_lowering_error(tmp_path):
    """As in Triton: a scalar pointer's mask must be a scalar."""
    path = tmp_path / "paged_copy.py"
    path.write_text(SCALAR_LOADS.replace("MASK", "tl.arange(0, 64) < NT"))
    with pytest.raises(TleError, match="tl.load of a scalar pointer: its mask must be a scalar") as e:
        gluon_source((str(path), "paged_copy"))
    assert e.value.loc.line == path.read_text().splitlines().index(
        "        page = tl.load(bt_ptr + i, mask=tl.arange(0, 64) < NT, other=0).to(tl.int64)") + 1
