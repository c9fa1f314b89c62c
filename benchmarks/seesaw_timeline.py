"""Per-pair timeline of the TLE-FlashMLA seesaw kernel on the GPU: where each warp group waits.
It traces tle_kernels/sparse_mla_seesaw.py, one trace row per (query token, head block) item, the
entry/exit stamps at each item's start and end (on the H200: pair period 6,159 cycles at 8K,
consumer0's epilogue 4,864 cycles an item). By default the kernel runs persistent (one program per
SM); `--per-cta` launches it with one program per item (``PerCtaLaunch(kernel, persistent=False)``),
so that a trace row is a CTA and the whole-CTA summary shows the gaps between CTAs.

    python3 benchmarks/seesaw_timeline.py [--skv 8192 131072] [--save trace.pt] [--per-cta]

The kernel's generated Gluon (tle_compiler's lowering of tle_kernels/sparse_mla_seesaw.py) is
instrumented with `%clock64` stamps (thread 0 of each partition stores the SM's cycle counter at
fixed events of every K-tile pair: after each mbarrier wait, after each publish, at the loop head),
launched at the headline shape (SQ=4096, H=128, topk=2048) and summarised: the median cycles of each
segment of each consumer's pair, the pair period, the gather latency of each K piece (producer's
acquire to the consumer's wait returning) and when the producer could refill each piece. Stamps
cost ~1-2 % (the traced kernel's TFLOP/s is printed too). A CPU test (tests/test_kernels.py) checks
that every event still finds its line in the generated code, so the tool breaks loudly, not silently,
when the kernel's schedule changes.

Each partition also stamps each item's entry and exit (clock64, globaltimer, SM id): the summary
gives the SM clock under load, each partition's prologue / loop / epilogue per item, and the idle
gap between consecutive items (with `--per-cta`: CTAs) on one SM.

What it shows on the H200 (docs/kernels.md, "Where the time goes"): each consumer spends ~700-800
cycles per pair (8K; ~1,500 at 128K) waiting for its second K piece, whose gather can only start
when the previous pair released it. Outside the pair loop, consumer0's epilogue takes ~3.9K cycles
with the lowering's 16-byte accumulator stores (~9.2K with 4-byte stores, which put ~12 % of each
per-CTA kernel's time outside the loop).
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

NEV = 16  # event slots per (partition, pair)
PART = {"producer": 0, "consumer0": 1, "consumer1": 2}
# The last line of a pair: the lazy reference max moves on.
PAIR_END = ("ref = r_new", 11)
# partition -> (substring of the generated line to stamp after, or a tuple of alternatives, event);
# event 0 is the loop head. The exchange pipes (max0, max1, prob0, prob1) are named-barrier pipes:
# their hand-offs are the bar.arrive / bar.sync lines the lowering comments with the pipe's verb.
EVENTS = {
    "producer": [("mbarrier.wait(kv0_empty0", 1), ("mbarrier.wait(kv1_empty0", 2),
                 ("mbarrier.wait(kv0r_empty0", 3), ("mbarrier.wait(kv1l_empty0", 4),
                 ("async_copy.mbarrier_arrive(kv1l_full0", 5)],
    "consumer0": [("mbarrier.wait(kv0_full0", 1), ("mbarrier.wait(kv0r_full0", 2),
                  ("# s is read", 3), ("# max0.commit: named barrier", 4), ("acc = _acc", 5),
                  ("mbarrier.arrive(kv0_empty0", 6), ("# max1.wait: named barrier", 7),
                  ("# prob0.commit: named barrier", 8), ("# prob1.wait: named barrier", 9),
                  ("mbarrier.wait(kv1l_full0", 10), PAIR_END],
    "consumer1": [("mbarrier.wait(kv1_full0", 1), ("mbarrier.wait(kv1l_full0", 2),
                  ("# s is read", 3), ("# max0.wait: named barrier", 4),
                  ("# max1.commit: named barrier", 5), ("# prob1.commit: named barrier", 6),
                  ("acc = _acc", 7), ("# prob0.wait: named barrier", 8),
                  ("mbarrier.wait(kv0r_full0", 9), ("mbarrier.arrive(kv1_empty0", 10),
                  PAIR_END],
}
SEGMENTS = {
    "consumer0": ["wait kv0 (K0_L + tail)", "QK0_L issue + wait kv0r (K0_R)", "QK0_R + wait for S",
                  "mask, max, publish m0", "softmax, issue P0·V0_L", "wait P0·V0_L, release kv0",
                  "wait m_new", "publish P0·beta", "wait prob1", "wait kv1l (K1_L)",
                  "issue P1·V1_L, row sums"],
    "consumer1": ["wait kv1 (K1_R + tail)", "QK1_R issue + wait kv1l (K1_L)", "QK1_L + wait for S",
                  "mask, wait m0", "max, publish m_new", "softmax, publish P1", "issue P1·V1_R",
                  "wait prob0", "wait kv0r (K0_R)", "issue P0·V0_R, wait P1·V1_R",
                  "wait P0·V0_R, row sums"],
}
STAMP = '''
@gluon.jit
def _stamp(ptr):
    L: gl.constexpr = gl.BlockedLayout([1], [32], [4], [0])
    o = gl.arange(0, 128, layout=L)
    t = gl.inline_asm_elementwise("mov.u64 $0, %clock64;", "=l,r", [o], dtype=gl.int64,
                                  is_pure=False, pack=1)
    gl.store(ptr + o * 0, t, mask=o == 0)


@gluon.jit
def _stamp_reg(ptr, ASM: gl.constexpr):
    L: gl.constexpr = gl.BlockedLayout([1], [32], [4], [0])
    o = gl.arange(0, 128, layout=L)
    t = gl.inline_asm_elementwise(ASM, "=l,r", [o], dtype=gl.int64,
                                  is_pure=False, pack=1)
    gl.store(ptr + o * 0, t, mask=o == 0)

'''
# Whole-partition stamps, in free event slots of pairs 0 and 1 (the loop uses events 0..11):
# pair 0: 12 clock at entry, 13 clock at exit, 14 globaltimer at entry, 15 globaltimer at exit;
# pair 1: 12 the SM id.
_CLOCK = "'mov.u64 $0, %clock64;'"
_NS = "'mov.u64 $0, %globaltimer;'"
_SMID = "'{ .reg .u32 t; mov.u32 t, %smid; cvt.u64.u32 $0, t; }'"
ENTRY = [f"_stamp_reg(tr + 12, {_CLOCK})", f"_stamp_reg(tr + 14, {_NS})",
         f"_stamp_reg(tr + {NEV} + 12, {_SMID})"]
EXIT = [f"_stamp_reg(tr + 15, {_NS})", f"_stamp_reg(tr + 13, {_CLOCK})"]


ROW = 3 * 16 * NEV  # one trace row (3 partitions x 16 pairs x NEV events) per item


def instrument(src: str) -> tuple[str, dict]:
    """The generated seesaw module (an item loop around the pair loop) with stamps and a trailing
    `trace_ptr` kernel argument: one trace row per item, its entry/exit stamps at the start and
    end of each item; also returns, per partition, the events that found their line (each should
    be found once)."""
    out, cur, found = [], None, {p: [] for p in PART}
    last = None  # index in `out` of the current partition's last body line
    item_ind = "        "  # the entry/exit stamps' indentation: in the item loop

    def close_partition():
        if cur in PART and last is not None:
            out[last + 1:last + 1] = [f"{item_ind}{x}" for x in EXIT]

    for ln in src.split("\n"):
        m = re.match(r"def (\w+)\((.*)\):$", ln)
        if m:
            close_partition()
            last = None
        if m and m.group(1) in PART:
            cur = m.group(1)
            out.append(f"def {cur}({m.group(2)}, tr_base):")
            continue
        if m and m.group(1) == "sparse_mla_seesaw":
            cur = "top"
            out.append(ln.replace("BLOCK_H: gl.constexpr):", "BLOCK_H: gl.constexpr, trace_ptr):"))
            out.append("    tr_row = trace_ptr")
            continue
        out.append(ln)
        s = ln.strip()
        if cur in PART and s and not s.startswith("@"):
            last = len(out) - 1
        if cur == "top" and any(s.startswith(f"({p}, (") for p in PART):
            name = s.split(",")[0][1:]
            out[-1] = ln.replace(")),", f", tr_row + {PART[name] * 16 * NEV})),")
        elif cur in PART and s.startswith("item = gl.where("):
            out.append(f"{item_ind}tr = tr_base + item.to(gl.int64) * {ROW}")
            out += [f"{item_ind}{x}" for x in ENTRY]
        elif cur in PART:
            if s.startswith("for p in range(NP):"):
                body = re.match(r"\s*", ln).group(0) + "    "
                out.append(f"{body}_stamp(tr + p * {NEV} + 0)")
                found[cur].append(0)
                continue
            for pat, ev in EVENTS[cur]:
                if ev in found[cur]:
                    continue  # an event stamps its first line only ("acc = _acc": the first PV)
                if any(x in ln for x in ((pat,) if isinstance(pat, str) else pat)):
                    ind = re.match(r"\s*", ln).group(0)
                    out.append(f"{ind}_stamp(tr + p * {NEV} + {ev})")
                    found[cur].append(ev)
                    last = len(out) - 1
    close_partition()
    text = "\n".join(out)
    first = text.index("@gluon.jit\ndef ")
    return text[:first] + STAMP + text[first:], found


def missing_events(found: dict) -> dict:
    """Per partition, the events (0 = loop head) that `instrument` did not find a line for."""
    return {p: sorted(({0} | {e for _, e in EVENTS[p]}) - set(f)) for p, f in found.items()}


def summarize(t, label: str) -> str:
    """Median cycles of each segment (pairs 2..NP-3 of every CTA), from a [ctas, 3, NP, 16]
    int64 trace."""
    t = t.double()
    P, C0, C1 = 0, 1, 2
    NP = t.shape[2]
    mid = slice(2, NP - 2)
    lines = []
    period = t[:, C0, 3:NP - 1, 0] - t[:, C0, 2:NP - 2, 0]
    lines.append(f"{label}: pair period {period.median().item():.0f} cycles (median)")
    for part, name in ((C0, "consumer0"), (C1, "consumer1")):
        lines.append(f"  {name}:")
        for i, seg in enumerate(SEGMENTS[name]):
            d = (t[:, part, mid, i + 1] - t[:, part, mid, i]).median().item()
            lines.append(f"    {seg:34s} {d:7.0f}")
        back = (t[:, part, 3:NP - 1, 0] - t[:, part, 2:NP - 2, 11]).median().item()
        lines.append(f"    {'loop back-edge':34s} {back:7.0f}")

    def med(x):
        return x.median().item()

    lines += [
        f"  consumer1 trails consumer0 by {med(t[:, C1, mid, 0] - t[:, C0, mid, 0]):.0f}",
        "  gather latency (producer's acquire -> consumer's wait returns):",
        f"    kv0 (K0_L + tail) {med(t[:, C0, mid, 1] - t[:, P, mid, 1]):.0f}, "
        f"kv1 (K1_R + tail) {med(t[:, C1, mid, 1] - t[:, P, mid, 2]):.0f}, "
        f"kv0r (K0_R) {med(t[:, C0, mid, 2] - t[:, P, mid, 3]):.0f}, "
        f"kv1l (K1_L) {med(t[:, C1, mid, 2] - t[:, P, mid, 4]):.0f}",
        "  refill delay (release of the previous pair's piece -> producer's acquire):",
        f"    kv0 {med(t[:, P, 3:NP - 1, 1] - t[:, C0, 2:NP - 2, 6]):.0f}, "
        f"kv1 {med(t[:, P, 3:NP - 1, 2] - t[:, C1, 2:NP - 2, 10]):.0f}, "
        f"kv0r (after consumer1's pair) {med(t[:, P, 3:NP - 1, 3] - t[:, C1, 2:NP - 2, 11]):.0f}",
    ]
    return "\n".join(lines)


def summarize_cta(t, label: str) -> str:
    """Whole-CTA phases from the entry/exit stamps: the SM clock (cycles per ns), each partition's
    prologue (entry -> pair 0's loop head), loop (pair 0's head -> its last stamp of the last pair)
    and epilogue (-> exit), and the idle gap between consecutive CTAs on one SM."""
    t = t.double()
    NP = t.shape[2]
    C0 = 1
    ghz = ((t[:, C0, 0, 13] - t[:, C0, 0, 12]) / (t[:, C0, 0, 15] - t[:, C0, 0, 14])).median().item()
    lines = [f"{label}: SM clock {ghz:.3f} GHz (consumer0's clock64 / globaltimer over its life)"]
    for part, name in ((0, "producer"), (1, "consumer0"), (2, "consumer1")):
        last = 5 if part == 0 else 11
        pro = (t[:, part, 0, 0] - t[:, part, 0, 12]).median().item()
        loop = (t[:, part, NP - 1, last] - t[:, part, 0, 0]).median().item()
        epi = (t[:, part, 0, 13] - t[:, part, NP - 1, last]).median().item()
        life = (t[:, part, 0, 13] - t[:, part, 0, 12]).median().item()
        lines.append(f"  {name:9s}: life {life:8.0f} cycles = prologue {pro:6.0f} + loop {loop:8.0f} "
                     f"({loop / NP:5.0f}/pair) + epilogue {epi:6.0f}")
    start = t[:, :, 0, 14].min(dim=1).values
    end = t[:, :, 0, 15].max(dim=1).values
    sm = t[:, 0, 1, 12]
    gaps = []
    for s_id in sm.unique():
        sel = (sm == s_id).nonzero().flatten()
        order = start[sel].argsort()
        st, en = start[sel][order], end[sel][order]
        gaps.append(st[1:] - en[:-1])
    g = __import__("torch").cat(gaps)
    g = g[g > 0]
    if len(g):
        lines.append(f"  gap between consecutive CTAs on one SM: median {g.median().item():.0f} ns "
                     f"({g.median().item() * ghz:.0f} cycles); CTA life median "
                     f"{(end - start).median().item():.0f} ns")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skv", type=int, nargs="*", default=[8192, 131072])
    ap.add_argument("--save", default="", help="torch.save the traces of CTAs 1000..1263 here")
    ap.add_argument("--per-cta", action="store_true",
                    help="launch one program per item (persistent=False) instead of one per SM")
    args = ap.parse_args()
    import torch
    import triton.testing

    from benchmarks.sparse_mla_smoke import TOPK, make_inputs, outputs
    from tle_compiler.lowering import gluon_source

    root = Path(__file__).resolve().parent.parent
    gen = gluon_source((str(root / "tle_kernels/sparse_mla_seesaw.py"), "sparse_mla_seesaw"),
                       {"TOPK": TOPK, "BLOCK_H": 64})
    if "_TLE_OFF_" in gen.source:
        raise SystemExit("the seesaw uses eager publish (baked barrier offsets): the stamps would "
                         "move the allocation; trace a copy without it")
    text, found = instrument(gen.source)
    missing = missing_events(found)
    if any(missing.values()):
        raise SystemExit(f"events not found in the generated code: {missing}")
    path = Path(tempfile.mkdtemp()) / "sparse_mla_seesaw_traced.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("seesaw_traced", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["seesaw_traced"] = mod
    spec.loader.exec_module(mod)
    saved = {}
    for skv in args.skv:
        q, kv, idx = make_inputs(4096, skv, 128, TOPK, seed=2)
        o, lse, ml = outputs(q)
        sq, h, _ = q.shape
        trace = torch.zeros(sq * (h // 64), 3, TOPK // 128, NEV, dtype=torch.int64, device="cuda")

        args_ = (q, kv, idx, o, lse, ml, q.stride(0), q.stride(1), kv.stride(0), idx.stride(0),
                 o.stride(0), o.stride(1), lse.stride(0), kv.shape[0], 1.0 / math.sqrt(576))

        from tle_kernels.api import PerCtaLaunch

        kernel = PerCtaLaunch(mod.sparse_mla_seesaw, persistent=not args.per_cta)

        def go():
            kernel[(sq, h // 64)](*args_, TOPK=TOPK, BLOCK_H=64, trace_ptr=trace)

        ms = triton.testing.do_bench(go, warmup=50, rep=200, return_mode="median")
        go()
        torch.cuda.synchronize()
        flops = 2 * sq * h * TOPK * (576 + 512)
        print(f"SKV={skv}: traced kernel {ms:.3f} ms = {flops / ms / 1e9:.1f} TFLOP/s", flush=True)
        tc = trace.cpu()
        print(summarize(tc[1000:3000], f"SKV={skv}"), flush=True)
        print(summarize_cta(tc, f"SKV={skv}"), flush=True)
        saved[skv] = tc[1000:1264].clone()
    if args.save:
        torch.save(saved, args.save)


if __name__ == "__main__":
    main()
