"""Opt-in pipelined wgmma (``@tle.jit(wgmma_pipeline=True)``; docs/lowering.md, "Pipelined wgmma
(opt-in)"): where the waits go, that the default lowering is unchanged, that the kernels compile for
sm_90a without spills, and that the pipelined SparseMLA pipe kernel's math is right (CPU emulator).

The pipelined SparseMLA pipe kernel is tle_kernels/sparse_mla_pipe.py with the option on and the
left consumer releasing kv tile ck-1 in iteration ck, after tile ck's S was read (and the last tile
after the loop), so its PV stays in flight across the back-edge (``_mla_pipelined``). The right
consumer keeps its releases: score has capacity 1, so releasing score(ck) after waiting
score(ck+1) would deadlock. On an H200 ptxas serialises that kernel's wgmmas (C7512, too few
registers in the left) and it ran at 0.66x / 0.73x of the bundled kernel, so it is a test input
only."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("triton.experimental.gluon")

from tle_compiler.frontend import read_kernels  # noqa: E402
from tle_compiler.lowering import compile_kernel, gluon_source, ptxas_stats  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
ATT = ROOT / "tle_kernels/examples/attention_tile.py"
MLA_CX = {"TOPK": 2048, "BLOCK_H": 64}
MLA_PIPE = ROOT / "tle_kernels/sparse_mla_pipe.py"


def _mla_pipelined(path: Path) -> Path:
    """tle_kernels/sparse_mla_pipe.py with wgmma_pipeline and the left's delayed kv release."""
    from tests.test_kernels import kernel_copy

    read = "        s = tl.where(valid[None, :], s, float(\"-inf\"))  # raw scores: sm_scale > 0 keeps the max\n"
    pv = "        acc = tl.dot(p16, tl.load(tle.gpu.local_ptr(kres.slot.kv_l)), acc)\n"
    return kernel_copy("sparse_mla_pipe", path, [
        ("@tle.jit(num_warps=4)", "@tle.jit(num_warps=4, wgmma_pipeline=True)"),
        (read, read + "        if ck > 0:\n            kr.release(ck - 1)\n"),
        (pv + "        kr.release(ck)\n", pv + "    if NK > 0:\n        kr.release(NK - 1)\n")])


@pytest.fixture(scope="module")
def mla_pipelined(tmp_path_factory) -> Path:
    return _mla_pipelined(tmp_path_factory.mktemp("mla") / "sparse_mla_pipe_pipelined.py")


def _att_variant(tmp_path: Path, delayed_release: bool) -> Path:
    """attention_tile with the option on; with ``delayed_release`` the kv tile t-1 is released in
    iteration t after S(t) was read (and the last one after the loop), so the PV stays in flight."""
    src = ATT.read_text().replace("@tle.jit(num_warps=4)", "@tle.jit(num_warps=4, wgmma_pipeline=True)")
    if delayed_release:
        old = ("                   tl.trans(tl.load(tle.gpu.local_ptr(res.slot.k)))) * qk_scale\n")
        assert old in src and "        r.release(t)\n" in src
        src = src.replace(old, old + "        if t > 0:\n            r.release(t - 1)\n")
        src = src.replace("        r.release(t)\n", "")
        src = src.replace("    out = acc / l_i[:, None]\n",
                          "    if NT > 0:\n        r.release(NT - 1)\n    out = acc / l_i[:, None]\n")
    p = tmp_path / ("att_delayed.py" if delayed_release else "att_plain.py")
    p.write_text(src)
    return p


def _fn(src: str, name: str) -> list[str]:
    body = src.split(f"def {name}(", 1)[1].split("@gluon.jit", 1)[0]
    return [ln.rstrip() for ln in body.splitlines()]


def _waits(lines):
    return [(i, ln.strip()) for i, ln in enumerate(lines) if "warpgroup_mma_wait(" in ln]


def test_option_off_is_byte_identical_and_option_is_read(mla_pipelined):
    (info,) = [i for i in read_kernels(str(ATT), name="attention_tile")]
    assert not info.options.get("wgmma_pipeline", False)
    (v,) = [i for i in read_kernels(str(mla_pipelined), name="sparse_mla_pipe")]
    assert v.options["wgmma_pipeline"]


def test_no_carry_when_the_slot_is_released_in_the_iteration(tmp_path):
    """attention_tile releases kv(t) at the end of iteration t: that release retires the PV, so
    nothing is carried and the option changes no wait (only the kernel name/path header)."""
    on = gluon_source((str(_att_variant(tmp_path, False)), "attention_tile"), {}).source
    off = gluon_source((str(ATT), "attention_tile"), {}).source
    assert _fn(on, "attend") == _fn(off, "attend")


def test_delayed_release_carries_the_pv_across_the_back_edge(tmp_path):
    src = gluon_source((str(_att_variant(tmp_path, True)), "attention_tile"), {}).source
    lines = _fn(src, "attend")
    loop = next(i for i, ln in enumerate(lines) if ln.strip().startswith("for t in range("))
    ind = len(lines[loop]) - len(lines[loop].lstrip())
    end = next(i for i in range(loop + 1, len(lines))
               if lines[i].strip() and len(lines[i]) - len(lines[i].lstrip()) <= ind)
    waits = _waits(lines)
    inside = [w for w in waits if loop < w[0] < end]
    # one wait per iteration, where S is read: it retires S and the previous PV (in order) ...
    assert len(inside) == 1 and "warpgroup_mma_wait(0," in inside[0][1]
    assert "acc" in inside[0][1] and "_a" in inside[0][1]  # the carried acc and its A operand
    dots = [i for i in range(loop, end) if "warpgroup_mma(" in lines[i]]
    assert len(dots) == 2 and dots[0] < inside[0][0] < dots[1]
    # ... no wait at the back-edge (the PV stays in flight) and the wait before the release
    rel = next(i for i in range(loop, end) if "mbarrier.arrive(kv_empty0" in lines[i])
    assert inside[0][0] < rel < dots[1]
    # the carried register A operand is defined before the loop
    a = re.search(r"_a\d+", lines[dots[1] - 1]).group(0)
    assert any(ln.strip().startswith(f"{a} = gl.zeros(") for ln in lines[:loop])
    # loop exit: wait for everything, before the release of the last tile
    after = [w for w in waits if w[0] >= end]
    assert len(after) == 1 and after[0][1].startswith("acc, ") and "warpgroup_mma_wait(0," in after[0][1]
    last_rel = next(i for i in range(end, len(lines)) if "mbarrier.arrive(kv_empty0" in lines[i])
    assert after[0][0] < last_rel
    assert len(waits) == 2


def test_pipelined_mla_left_keeps_pv_in_flight_right_unchanged(mla_pipelined):
    src = gluon_source((str(mla_pipelined), "sparse_mla_pipe"), MLA_CX).source
    base = gluon_source((str(MLA_PIPE), "sparse_mla_pipe"), MLA_CX).source
    assert _fn(src, "right") == _fn(base, "right")  # score capacity 1: its releases stay put
    assert _fn(src, "producer") == _fn(base, "producer")
    lines = _fn(src, "left")
    waits = _waits(lines)
    loop = next(i for i, ln in enumerate(lines) if ln.strip().startswith("for ck in range("))
    in_loop = [w for w in waits if w[0] > loop and lines[w[0]].startswith("        ")]
    assert len(in_loop) == 1 and "# s is read" in in_loop[0][1] and "acc" in in_loop[0][1]
    assert "wgmma in flight" not in "\n".join(lines)  # no drain at the back-edge
    assert sum("loop exit" in w[1] for w in waits) == 1


@pytest.fixture(scope="module")
def compiled_pipelined(tmp_path_factory, mla_pipelined):
    out = {}
    tmp = tmp_path_factory.mktemp("pl")
    for key, (path, name, cx) in {
            "att": (_att_variant(tmp, True), "attention_tile", {}),
            "mla": (mla_pipelined, "sparse_mla_pipe", MLA_CX)}.items():
        info = next(i for i in read_kernels(str(path), name=name) if i.name == name)
        sig = {"att": {"q_ptr": "*bf16", "k_ptr": "*bf16", "v_ptr": "*bf16", "o_ptr": "*fp32",
                       "N_KV": "i32", "sm_scale": "fp32"}}.get(key)
        if sig is None:
            from tle_compiler.lowering.dumping import default_config
            sig = default_config(str(path), name)["signature"]
        out[key] = compile_kernel(info, sig, cx, num_warps=4)
    return out


@pytest.mark.parametrize("key", ["att", "mla"])
def test_pipelined_compiles_for_sm90a_without_spills(compiled_pipelined, key):
    c = compiled_pipelined[key]
    assert ".target sm_90a" in c.asm["ptx"] and c.asm["cubin"]
    ops = [ln for ln in c.asm["ttgir"].splitlines() if not ln.startswith("#loc")]
    assert any("ttng.warp_group_dot_wait" in ln for ln in ops)
    assert all("isAsync = true" in ln for ln in ops if "ttng.warp_group_dot " in ln)
    st = ptxas_stats(c)
    assert st["spill_stores"] == 0 and st["spill_loads"] == 0, st["log"]
    if key == "att":  # the carried PV is kept async by ptxas (no C7512 serialisation)
        assert "C7512" not in st["log"], st["log"]
    # "mla": ptxas serialises its wgmmas (C7512, insufficient registers): docs/lowering.md,
    # "Pipelined wgmma (opt-in)"; measured on a GPU before relying on it


def test_pipelined_mla_math_in_cpu_emulation(mla_pipelined):
    torch = pytest.importorskip("torch")
    import tests.test_kernels as tk
    from tle_compiler.testing.emulator import load_kernel_module
    mod = load_kernel_module(mla_pipelined, dot_dtypes=(torch.bfloat16,))
    block_h = mod.DEFAULT_CONFIG["constexprs"]["BLOCK_H"]
    s_q, h_q, s_kv, topk = 3, 2 * block_h, 300, 256
    g = torch.Generator().manual_seed(0)
    q = (torch.randn(s_q, h_q, 576, generator=g) * 0.3).bfloat16()
    kv = (torch.randn(s_kv, 1, 576, generator=g) * 0.3).bfloat16()
    idx = torch.randint(0, s_kv, (s_q, 1, topk), generator=g, dtype=torch.int32)
    hole = torch.rand(s_q, 1, topk, generator=g) < 0.3
    idx[hole] = -1
    idx[1] = -1
    idx[2, 0, :200] = -1
    sm_scale = 576 ** -0.5
    out = torch.full((s_q, h_q, 512), float("nan")).bfloat16()
    lse, ml = torch.full((s_q, h_q), float("nan")), torch.full((s_q, h_q), float("nan"))
    mod.sparse_mla_pipe[(s_q, h_q // block_h)](
        q, kv, idx, out, lse, ml,
        q.stride(0), q.stride(1), kv.stride(0), idx.stride(0), out.stride(0), out.stride(1),
        lse.stride(0), kv.shape[0], float(sm_scale), TOPK=topk, BLOCK_H=block_h)
    ref_out, ref_lse, ref_ml = tk._reference(q, kv, idx, sm_scale)
    assert not out.float().isnan().any() and not lse.isnan().any()
    assert ((out.float() - ref_out).norm() / ref_out.norm()).item() < 5e-3
    assert torch.allclose(lse, ref_lse, atol=1e-6, rtol=0)
    assert torch.allclose(ml, ref_ml, atol=1e-6, rtol=0)


def test_release_only_if_keeps_wgmmas_in_flight():
    """tle_kernels/sparse_mla_seesaw.py, consumer0: `if p > 0: prob1.release(p - 1); kv1l.release(p -
    1)` comes right after the pair's first QK wgmmas. The `if` holds only releases, so nothing is
    drained before it: each release waits with 2 wgmmas (the QK just issued) still outstanding and
    rebinds no name (a throwaway dependency), and afterwards the previous pair's P1·V1_L still
    counts as in flight, so the wait that reads S retires it too (groups retire in order)."""
    src = gluon_source((str(ROOT / "tle_kernels/sparse_mla_seesaw.py"), "sparse_mla_seesaw"),
                       MLA_CX).source
    lines = _fn(src, "consumer0")
    loop = next(i for i, ln in enumerate(lines) if ln.strip().startswith("for p in range("))
    cond = next(i for i in range(loop, len(lines)) if lines[i].strip() == "if (p > 0):")
    issued = [i for i in range(loop, cond) if "warpgroup_mma(" in lines[i]]
    assert len(issued) == 2  # QK on K0_L and on the tail, issued before the `if`
    assert not any("warpgroup_mma_wait(" in lines[i] for i in range(loop, cond))
    ind = len(lines[cond]) - len(lines[cond].lstrip())
    end = next(i for i in range(cond + 1, len(lines))
               if len(lines[i]) - len(lines[i].lstrip()) <= ind)
    body = [ln.strip() for ln in lines[cond + 1:end]]
    waits = [ln for ln in body if "warpgroup_mma_wait(" in ln]
    # (elected arrives, or per-thread ones with the kernel's eager publish: lowering/eager.py);
    # prob1 is a named-barrier pipe: its release arrives on nothing and leaves its marker
    arrives = [ln for ln in body if "mbarrier.arrive(" in ln or "_tle_arrive_w" in ln]
    assert len(arrives) == 1 and {re.search(r"(\w+_empty0)", a).group(1).replace("_TLE_OFF_", "")
                                  for a in arrives} == {"kv1l_empty0"}
    assert '"named release: prob1"' in body
    assert waits and all(w.startswith("warpgroup_mma_wait(2, deps=[gl.full(") for w in waits)
    # after the if: the wait that reads S retires everything, the carried acc included
    s_read = next(ln.strip() for ln in lines[end:] if "# s is read" in ln)
    assert s_read.startswith("acc, s, ") and "warpgroup_mma_wait(0," in s_read


def test_if_without_wgmmas_keeps_them_in_flight(tmp_path):
    """An `if` in a pipelined loop whose branches issue no wgmma (here one computing besides
    releasing: the bundled seesaw's consumer0 with one more statement in its release-only `if`)
    keeps what is in flight: no drain before it, each branch waits only as far as it needs, and a
    branch that rebinds an in-flight result makes it in flight again at its end."""
    from tests.test_kernels import kernel_copy

    old = "            if p > 0:\n                pr.release(g - 1)\n"
    p = kernel_copy("sparse_mla_seesaw", tmp_path / "seesaw_if.py", [
        (old, old.replace("            if p > 0:\n", "            if p > 0:\n"
                                                   "                l_i = l_i + 0.0\n"))])
    lines = _fn(gluon_source((str(p), "sparse_mla_seesaw"), MLA_CX).source, "consumer0")
    cond = next(i for i, ln in enumerate(lines) if ln.strip() == "if (p > 0):")
    assert "no wgmma in flight across an if" not in lines[cond - 1]
    body = []
    for ln in lines[cond + 1:]:
        if len(ln) - len(ln.lstrip()) <= len(lines[cond]) - len(lines[cond].lstrip()):
            break
        body.append(ln.strip())
    # the release waits as far as it needs, rebinding acc, which the branch's end makes an
    # in-flight accumulator again (both paths leave the `if` with the same types)
    assert any(b.startswith("acc = warpgroup_mma_wait(2, deps=[acc])") for b in body), body
    assert body[-1].startswith("acc = warpgroup_mma_init(acc)"), body


def _seesaw_with_nested_if(tmp_path, with_else: bool) -> Path:
    """The bundled seesaw with, at the end of consumer0's pair loop (where its P1·V1_L is in
    flight), an `if` that issues no wgmma holding an inner `if` whose branches both read the
    accumulator (``with_else``) or whose one branch does: the shape of an epilogue that
    normalises one way or another (``if HAS_SINK: ... else: ...``) on an item's last pair."""
    from tests.test_kernels import kernel_copy

    old = ("            l_i = (l_i * alpha0 + sum0) * beta + sum1\n"
           "            ref = r_new\n"
           "        if NP > 0:\n")
    inner = ("            if p == NP - 1:\n"
             "                if r > 0:\n"
             "                    acc = acc * 0.5\n")
    if with_else:
        inner += ("                else:\n"
                  "                    acc = acc * 2.0\n")
    inner += "                l_i = l_i * 1.0\n"
    new = old.replace("        if NP > 0:\n", inner + "        if NP > 0:\n")
    name = "seesaw_if_else.py" if with_else else "seesaw_if_then.py"
    return kernel_copy("sparse_mla_seesaw", tmp_path / name, [(old, new)])


def _branch_lines(lines, head: str) -> list[str]:
    """The stripped lines of the block under the first line ``head`` (stripped)."""
    at = next(i for i, ln in enumerate(lines) if ln.strip() == head)
    depth = len(lines[at]) - len(lines[at].lstrip())
    body = []
    for ln in lines[at + 1:]:
        if ln.strip() and len(ln) - len(ln.lstrip()) <= depth:
            break
        body.append(ln.strip())
    return body


def test_if_else_both_reading_waits_before_it(tmp_path):
    """An `if`/`else` inside an `if` that keeps wgmmas in flight, both of whose branches read the
    in-flight accumulator: the wait comes before the inner `if`, so neither inner branch rebinds
    an in-flight result or makes it in flight again (a wait in each branch, a warpgroup_mma_init
    at its end and another wait after the `if` is what made ptxas serialize every wgmma of a
    kernel: its warning C7515); the outer branch, which a path skips, still does at its end."""
    lines = _fn(gluon_source((str(_seesaw_with_nested_if(tmp_path, True)), "sparse_mla_seesaw"),
                             MLA_CX).source, "consumer0")
    outer = _branch_lines(lines, "if (p == (NP - 1)):")
    inner = outer.index("if (r > 0):")
    assert outer[inner - 1].startswith("acc = warpgroup_mma_wait(0, deps=[acc])"), outer
    assert "read in both branches of the if" in outer[inner - 1]
    after = outer[inner:]
    assert not any("warpgroup_mma_wait(" in b or "warpgroup_mma_init" in b
                   for b in after[:-1]), after
    assert after[-1].startswith("acc = warpgroup_mma_init(acc)"), outer


def test_if_without_else_that_waits_still_rewraps(tmp_path):
    """The same inner `if` without its `else`: the path that skips it keeps the accumulator in
    flight, so the branch that waited makes it in flight again."""
    lines = _fn(gluon_source((str(_seesaw_with_nested_if(tmp_path, False)), "sparse_mla_seesaw"),
                             MLA_CX).source, "consumer0")
    inner = _branch_lines(lines, "if (r > 0):")
    assert inner[-1].startswith("acc = warpgroup_mma_init(acc)"), inner


def test_nested_if_else_compiles_without_wgmma_serialization(tmp_path):
    """ptxas keeps the wgmmas asynchronous (no C7515) for the seesaw with the inner if/else."""
    p = _seesaw_with_nested_if(tmp_path, True)
    from tle_compiler.lowering.dumping import default_config

    info = next(i for i in read_kernels(str(p), name="sparse_mla_seesaw", bind=MLA_CX))
    st = ptxas_stats(compile_kernel(info, default_config(str(p), "sparse_mla_seesaw")["signature"],
                                    MLA_CX, num_warps=4))
    assert st["ok"], st["log"]
    assert not st["wgmma_serialized"], st["log"]


def test_if_that_issues_a_wgmma_still_drains(tmp_path):
    """A branch that issues a wgmma would leave the paths with different wgmmas in flight: the
    `if` drains before it and at the end of each branch, as outside pipelined loops."""
    from tests.test_kernels import kernel_copy

    old = "            if p > 0:\n                pr.release(g - 1)\n"
    p = kernel_copy("sparse_mla_seesaw", tmp_path / "seesaw_if_dot.py", [
        (old, old.replace("            if p > 0:\n",
                          "            if p > 0:\n"
                          "                s = tl.dot(q_tail, tl.trans(tl.load(tle.gpu.local_ptr("
                          "k0.slot.tkv))), s)\n"))])
    lines = _fn(gluon_source((str(p), "sparse_mla_seesaw"), MLA_CX).source, "consumer0")
    cond = next(i for i, ln in enumerate(lines) if ln.strip() == "if (p > 0):")
    assert "no wgmma in flight across an if" in lines[cond - 1]


def test_release_after_chained_shared_operand_wgmmas_compiles(tmp_path):
    """consumer1 of the seesaw with its two PV wgmmas swapped: P0·V0_R (both operands in shared
    memory) first, then P1·V1_R accumulating onto its result, then the release of P0's slot. The
    release must retire the first wgmma only (one still outstanding), and no name or register
    holds that wgmma's result any more (the second one took it as its accumulator): Triton's wait
    op still needs a dependency, so the lowering gives it a throwaway one instead of `deps=[]`,
    which Triton rejects ("expected to be waiting on at least one dependency")."""
    from tests.test_kernels import kernel_copy

    old = """            acc = tl.dot(p1, tl.load(tle.gpu.local_ptr(k1.slot.kv_r)), acc)
            pres = pr.wait(g)
            k0r = peer.wait(g)
            acc = tl.dot(tl.load(tle.gpu.local_ptr(pres.slot.sS)),
                         tl.load(tle.gpu.local_ptr(k0r.slot.kv_r)), acc)
            sum0 = tl.load(tle.gpu.local_ptr(pres.slot.row_sum))
            own.release(g)
            pr.release(g)
"""
    new = """            pres = pr.wait(g)
            k0r = peer.wait(g)
            acc = tl.dot(tl.load(tle.gpu.local_ptr(pres.slot.sS)),
                         tl.load(tle.gpu.local_ptr(k0r.slot.kv_r)), acc)
            acc = tl.dot(p1, tl.load(tle.gpu.local_ptr(k1.slot.kv_r)), acc)
            sum0 = tl.load(tle.gpu.local_ptr(pres.slot.row_sum))
            pr.release(g)
"""
    p = kernel_copy("sparse_mla_seesaw", tmp_path / "seesaw_pv_swapped.py", [
        (old, new), ("            peer.release(g)\n\n",
                     "            peer.release(g)\n            own.release(g)\n\n")])
    lines = _fn(gluon_source((str(p), "sparse_mla_seesaw"), MLA_CX).source, "consumer1")
    # prob0 is a named-barrier pipe: its release is the wait and the marker after it
    rel = next(i for i, ln in enumerate(lines) if ln.strip() == '"named release: prob0"')
    wait = lines[rel - 1].strip()
    assert wait.startswith("warpgroup_mma_wait(1, deps=[gl.full(") and "prob0.release" in wait
    assert not any("deps=[])" in ln for ln in lines)
    from tle_compiler.lowering.dumping import default_config
    info = next(i for i in read_kernels(str(p), name="sparse_mla_seesaw", bind=MLA_CX))
    c = compile_kernel(info, default_config(str(p), "sparse_mla_seesaw")["signature"], MLA_CX,
                       num_warps=4)  # Triton rejected the `deps=[]` wait while parsing
    assert ptxas_stats(c)["ok"]
