"""benchmarks/seesaw_timeline.py: the clock64 instrumentation finds every event of the seesaw's
generated code exactly once (so a schedule change breaks the tool loudly), the instrumented module
compiles for sm_90a, and the summary reports the segment durations of a synthetic trace."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

pytest.importorskip("triton.experimental.gluon")
torch = pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import seesaw_timeline as T  # noqa: E402
from tle_compiler.lowering import gluon_source  # noqa: E402

CX = {"TOPK": 2048, "BLOCK_H": 64}


@pytest.fixture(scope="module")
def instrumented():
    gen = gluon_source((str(ROOT / "tle_kernels/sparse_mla_seesaw.py"), "sparse_mla_seesaw"), CX)
    return T.instrument(gen.source)


def test_every_event_is_found_once(instrumented):
    text, found = instrumented
    for part, evs in found.items():
        want = [0] + [e for _, e in T.EVENTS[part]]
        assert sorted(evs) == sorted(want), (part, evs)
    assert text.count("_stamp(tr + p * ") == sum(len(v) for v in found.values())
    assert T.missing_events(found) == {p: [] for p in T.PART}
    # an event whose line is gone is reported (the tool refuses to run then)
    broken = dict(found, consumer1=[e for e in found["consumer1"] if e != 7])
    assert T.missing_events(broken)["consumer1"] == [7]
    assert "trace_ptr" in text.split("def sparse_mla_seesaw(", 1)[1].split(":\n", 1)[0]


def _compile_traced(text: str, path: Path, signature: dict):
    """Compile an instrumented Gluon module for sm_90a (its kernel takes ``trace_ptr`` last)."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource

    path.write_text(text)
    spec = importlib.util.spec_from_file_location(path.stem + "_test", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[path.stem + "_test"] = mod
    spec.loader.exec_module(mod)
    sig = dict(signature, trace_ptr="*i64")
    attrs = {(i,): [["tt.divisibility", 16]] for i, a in enumerate(sig)
             if sig[a].startswith("*") or sig[a] == "i32"}
    return triton.compile(GluonASTSource(mod.sparse_mla_seesaw, sig, constexprs=CX, attrs=attrs),
                          target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})


def test_summary_reports_segment_durations():
    ctas, NP = 4, 16
    t = torch.zeros(ctas, 3, NP, T.NEV, dtype=torch.int64)
    seg = [10 * (i + 1) for i in range(11)]  # consumer segment i takes 10*(i+1) cycles
    period = sum(seg) + 7                    # + a 7-cycle back-edge
    for part in (1, 2):
        for p in range(NP):
            base = p * period + (100 if part == 2 else 0)
            t[:, part, p, 0] = base
            for i, d in enumerate(seg):
                t[:, part, p, i + 1] = t[:, part, p, i] + d
    out = T.summarize(t, "synthetic")
    assert f"pair period {period} cycles" in out
    assert "consumer1 trails consumer0 by 100" in out
    for i, name in enumerate(T.SEGMENTS["consumer0"]):
        assert f"{name:34s} {seg[i]:7d}" in out
    assert f"{'loop back-edge':34s} {7:7d}" in out


def test_stall_report_reads_an_ncu_source_page():
    """benchmarks/stall_report.py on an excerpt of a real `ncu --page source --csv` export."""
    from benchmarks import stall_report as S

    insts = S.load(str(ROOT / "tests/data/ncu_source_excerpt.csv"))
    assert len(insts) == 13 and insts[0][0] == 0
    depbar = [i for i in insts if i[1].startswith("WARPGROUP.DEPBAR")]
    assert len(depbar) == 3 and all(i[2] > 0 and i[3]["barrier"] > 0 for i in depbar)
    out = S.report(insts, [((0, 1 << 20), "kernel")], top=2)
    total = sum(i[2] for i in insts)
    assert f"total samples {total}" in out and "WARPGROUP.DEPBAR" in out


def test_whole_cta_summary_reports_clock_phases_and_gaps():
    """Two CTAs per SM, 2 GHz (2 cycles per ns): prologue / loop / epilogue of each partition
    from the entry, loop and exit stamps, and the idle gap between the CTAs of one SM."""
    NP = 16
    t = torch.zeros(4, 3, NP, T.NEV, dtype=torch.int64)
    for cta in range(4):
        sm, k = cta % 2, cta // 2         # CTAs 0, 2 on SM 0; 1, 3 on SM 1
        ns0 = k * 1000                   # the second CTA of an SM starts 1000 ns after the first
        for part in range(3):
            last = 5 if part == 0 else 11
            c0 = 2 * ns0
            t[cta, part, 0, 12] = c0                        # clock at entry
            t[cta, part, 0, 14] = ns0                       # globaltimer at entry
            t[cta, part, 0, 0] = c0 + 100                   # prologue 100 cycles
            t[cta, part, NP - 1, last] = c0 + 100 + 1500    # loop 1500 cycles
            t[cta, part, 0, 13] = c0 + 1800                 # epilogue 200 cycles
            t[cta, part, 0, 15] = ns0 + 900                 # 900 ns of life
            t[cta, 0, 1, 12] = sm
    out = T.summarize_cta(t, "synthetic")
    assert "SM clock 2.000 GHz" in out
    assert "prologue    100 + loop     1500 (   94/pair) + epilogue    200" in out
    assert "median 100 ns (200 cycles)" in out


def test_kernel_is_instrumented_per_item_and_compiles(instrumented, tmp_path):
    """The bundled kernel (an item loop around the pair loop) gets one trace row per item
    (`tr = tr_base + item * ROW` after the item is known), the entry/exit stamps inside the item
    loop, and the instrumented module compiles for sm_90a."""
    import re

    from tle_kernels.sparse_mla_seesaw import DEFAULT_CONFIG

    text, found = instrumented
    assert T.missing_events(found) == {p: [] for p in T.PART}
    assert text.count(f"tr = tr_base + item.to(gl.int64) * {T.ROW}") == 3
    for part in T.PART:
        body = text.split(f"def {part}(", 1)[1].split("@gluon.jit", 1)[0]
        loop = re.search(r"\n(\s*)for r in range\(ROUNDS\):", body).group(1)
        # the exit stamps sit in the item loop's body, not after it
        assert re.search(rf"\n{loop}    _stamp_reg\(tr \+ 13, ", body), part
    c = _compile_traced(text, tmp_path / "seesaw_traced.py",
                        DEFAULT_CONFIG["signature"])
    assert "%clock64" in c.asm["ptx"] and "%globaltimer" in c.asm["ptx"] and c.asm["cubin"]
