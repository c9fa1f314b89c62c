"""An alias of an in-flight wgmma result (``o = acc`` right after the ``tl.dot``) keeps both names
in flight (schedule-wgmma's ``InflightWgmmas.renamed``): a read of either waits for the wgmma and
the wait rebinds both. Moving the mark to the alias left ``acc`` unwaited: ``tl.sum(acc, 1)`` read
Gluon's ``warpgroup_mma_accumulator`` and Triton refused the kernel after it was verified. With
``wgmma_pipeline=True`` a loop-carried alias (``prev = acc``) is carried across the back-edge with
``acc``, and an alias made inside an ``if`` that keeps wgmmas in flight (``if t == NT - 2: o =
acc``) is waited for at the branch's end, so both paths leave ``o`` a plain tensor.

The kernels are tle_kernels/examples/attention_tile.py with the lines below; the pipelined ones
release kv tile t - 1 in iteration t, so the P·V wgmma stays in flight across the back-edge."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

pytest.importorskip("triton.experimental.gluon")

from tle_compiler.lowering import gluon_source  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
ATT = ROOT / "tle_kernels/examples/attention_tile.py"
BM = BN = D = 64

_PV = ("        acc = tl.dot(p.to(tl.bfloat16), tl.load(tle.gpu.local_ptr(res.slot.v)),\n"
       "                     acc * alpha[:, None])\n")
_ACC0 = "    acc = tl.zeros([BM, D], tl.float32)\n"
_OUT = "    out = acc / l_i[:, None]\n"
_QK = "                   tl.trans(tl.load(tle.gpu.local_ptr(res.slot.k)))) * qk_scale\n"
_REL = "        r.release(t)\n"

# variant -> (pipelined, [(old, new)]) on attention_tile's source
VARIANTS = {
    # o = acc, then acc read (the adversary's form) / o read
    "read_acc": (False, [(_PV, _PV + "        o = acc\n        l_i = l_i + tl.sum(acc, 1)\n")]),
    "read_o": (False, [(_PV, _PV + "        o = acc\n        l_i = l_i + tl.sum(o, 1)\n")]),
    # a loop-carried alias, assigned every iteration, is the output
    "carried": (True, [(_ACC0, _ACC0 + "    prev = tl.zeros([BM, D], tl.float32)\n"),
                       (_REL, _REL + "        prev = acc\n"),
                       (_OUT, "    out = prev / l_i[:, None]\n")]),
    # an alias made in a rare branch, read after the loop
    "branch": (True, [(_ACC0, _ACC0 + "    o = tl.zeros([BM, D], tl.float32)\n"),
                      (_REL, _REL + "        if t == NT - 2:\n            o = acc\n"),
                      (_OUT, "    out = o + acc / l_i[:, None]\n")]),
}


def _variant(tmp_path: Path, kind: str) -> Path:
    pipelined, edits = VARIANTS[kind]
    src = ATT.read_text()
    if pipelined:  # the delayed release of test_lowering_pipelined.py's attention variant
        edits = [("@tle.jit(num_warps=4)", "@tle.jit(num_warps=4, wgmma_pipeline=True)"),
                 (_QK, _QK + "        if t > 0:\n            r.release(t - 1)\n")] + edits + [
                 (_REL, ""), ("    out = ", "    if NT > 0:\n        r.release(NT - 1)\n    out = ")]
    for old, new in edits:
        assert src.count(old) == 1, (kind, old)
        src = src.replace(old, new)
    p = tmp_path / f"att_alias_{kind}.py"
    p.write_text(src)
    return p


def _attend(tmp_path: Path, kind: str) -> list[str]:
    src = gluon_source((str(_variant(tmp_path, kind)), "attention_tile")).source
    return [ln.strip() for ln in src.split("def attend(", 1)[1].split("@gluon.jit", 1)[0].splitlines()]


def _deps(line: str) -> set:
    return {d.strip() for d in re.search(r"deps=\[([^\]]*)\]", line).group(1).split(",")}


@pytest.mark.parametrize("kind,read", [("read_acc", "gl.sum(acc, 1)"), ("read_o", "gl.sum(o, 1)")])
def test_a_read_of_either_name_waits_and_rebinds_both(tmp_path, kind, read):
    lines = _attend(tmp_path, kind)
    alias = lines.index("o = acc")
    use = next(i for i, ln in enumerate(lines) if read in ln)
    waits = [i for i in range(alias, use) if "warpgroup_mma_wait(" in lines[i]]
    assert len(waits) == 1, lines[alias:use + 1]
    assert {"acc", "o"} <= _deps(lines[waits[0]])
    assert lines[waits[0]].startswith("acc, o, ") or lines[waits[0]].startswith("o, acc, ")


def test_a_carried_alias_stays_in_flight_with_the_accumulator(tmp_path):
    lines = _attend(tmp_path, "carried")
    loop = next(i for i, ln in enumerate(lines) if ln.startswith("for t in range("))
    assert "acc = warpgroup_mma_init(acc)  # in flight across the back-edge" in lines[:loop]
    assert "prev = warpgroup_mma_init(prev)  # in flight across the back-edge" in lines[:loop]
    (exit_wait,) = [ln for ln in lines if "loop exit" in ln]
    assert {"acc", "prev"} <= _deps(exit_wait)
    assert not any("back-edge" in ln for ln in lines[loop:] if "warpgroup_mma_wait(" in ln)


def test_an_alias_made_in_a_branch_is_waited_for_at_its_end(tmp_path):
    lines = _attend(tmp_path, "branch")
    alias = lines.index("o = acc")
    wait, rewrap = lines[alias + 1], lines[alias + 2]
    assert "warpgroup_mma_wait(0" in wait and {"acc", "o"} <= _deps(wait)
    assert rewrap.startswith("acc = warpgroup_mma_init(acc)")  # in flight again, as on the other path
    assert "o = warpgroup_mma_init(o)" not in " ".join(lines)


@pytest.mark.parametrize("kind", list(VARIANTS))
def test_the_alias_kernels_compile_for_sm90a(tmp_path, kind):
    from tle_compiler.frontend import read_kernels
    from tle_compiler.lowering import compile_kernel
    from tle_compiler.lowering.dumping import default_config

    path = _variant(tmp_path, kind)
    info = next(i for i in read_kernels(str(path), name="attention_tile"))
    c = compile_kernel(info, default_config(str(path), "attention_tile")["signature"], {},
                       num_warps=4)
    assert ".target sm_90a" in c.asm["ptx"] and c.asm["cubin"]


@pytest.mark.parametrize("kind", ["carried", "branch"])
def test_pipelined_alias_releases_only_retired_slots(tmp_path, kind):
    """The generated barrier operations are the verified ones, and no kv slot is released while
    a wgmma reading it may be in flight (testing/gluon_trace.py), for 0, 1, 2, 3 and 5 tiles."""
    from tle_compiler.testing.gluon_trace import LoweredKernel

    lk = LoweredKernel((str(_variant(tmp_path, kind)), "attention_tile"), {})
    problems = []
    for n in (0, 1, 2, 3, 5):
        problems += [f"{n} tiles: {p}" for p in lk.check({"N_KV": n * BN})[1]]
    assert not problems, "\n".join(problems)


def _reference(kind: str, q, k, v, n_tiles: int, sm_scale: float):
    """The kernel's math in torch (fp32, P rounded to bf16 for the P·V product as the kernel
    does), for ``n_tiles`` >= 1."""
    import torch

    qk_scale = sm_scale * math.log2(math.e)
    m = torch.full((BM,), float("-inf"))
    l_i, acc, o = torch.zeros(BM), torch.zeros(BM, D), torch.zeros(BM, D)
    for t in range(n_tiles):
        s = (q.float() @ k[t * BN:(t + 1) * BN].float().T) * qk_scale
        m_new = torch.maximum(m, s.max(1).values)
        alpha = (m - m_new).exp2()
        p = (s - m_new[:, None]).exp2()
        l_i = l_i * alpha + p.sum(1)
        acc = acc * alpha[:, None] + p.bfloat16().float() @ v[t * BN:(t + 1) * BN].float()
        if kind in ("read_acc", "read_o"):
            l_i = l_i + acc.sum(1)
        if kind == "branch" and t == n_tiles - 2:
            o = acc
        m = m_new
    return o + acc / l_i[:, None] if kind == "branch" else acc / l_i[:, None]


@pytest.mark.parametrize("kind", list(VARIANTS))
@pytest.mark.parametrize("n_tiles", [1, 3])
def test_emulated_numbers_equal_the_reference(tmp_path, kind, n_tiles):
    torch = pytest.importorskip("torch")
    from tle_compiler.testing.emulator import load_kernel_module

    mod = load_kernel_module(_variant(tmp_path, kind))
    g = torch.Generator().manual_seed(n_tiles)
    q, k, v = (torch.randn(rows, D, generator=g).bfloat16()
               for rows in (BM, n_tiles * BN, n_tiles * BN))
    sm_scale = D ** -0.5
    o = torch.full((BM, D), float("nan"))
    mod.attention_tile[(1,)](q, k, v, o, n_tiles * BN, sm_scale)
    torch.testing.assert_close(o, _reference(kind, q, k, v, n_tiles, sm_scale),
                               rtol=2e-3, atol=2e-3)
