"""Where a kernel's warps stall, per SASS instruction, from Nsight Compute's source page:

    ncu --kernel-name regex:sparse_mla --launch-skip 2 --launch-count 1 --set full -o seesaw \\
        python3 benchmarks/profile_sparse_mla.py seesaw --sq 1024
    ncu -i seesaw.ncu-rep --page source --csv --print-source sass > seesaw_sass.csv
    python3 benchmarks/stall_report.py seesaw_sass.csv [--regions 0x0-0xc70=prologue,...] [--top 12]

Prints the samples of each region (SASS offsets from the kernel's first instruction; a warp-
specialized kernel keeps each partition's code in one range, which `cuobjdump -sass` of the same
cubin shows), its top stall reasons, and its most-sampled instructions with their reasons. Without
--regions the whole kernel is one region. `WARPGROUP.DEPBAR` = a wait for a wgmma; a `BRA` with
`long_sb` right after `SYNCS.PHASECHK` = an mbarrier wait.
"""

from __future__ import annotations

import argparse
import collections
import csv


def load(path: str):
    rows = list(csv.reader(open(path)))
    head = next(i for i, r in enumerate(rows) if r and r[0] == "Address")
    hdr, data = rows[head], rows[head + 1:]
    ix = {h: i for i, h in enumerate(hdr)}
    stalls = [h for h in hdr if h.startswith("stall_") and "Not Issued" not in h]
    base = int(data[0][0], 16)
    out = []
    for r in data:
        samples = int(r[ix["Warp Stall Sampling (All Samples)"]] or 0)
        out.append((int(r[0], 16) - base, r[1].strip(), samples,
                    {h[6:]: int(r[ix[h]] or 0) for h in stalls}))
    return out


def report(insts, regions, top: int) -> str:
    total = sum(i[2] for i in insts) or 1
    lines = [f"total samples {total}"]
    for (lo, hi), name in regions:
        sel = [i for i in insts if lo <= i[0] < hi]
        s = sum(i[2] for i in sel) or 1
        agg = collections.Counter()
        for i in sel:
            agg.update(i[3])
        lines.append(f"\n== {name} [{lo:#x},{hi:#x}) samples {s} ({100 * s / total:.1f}%)  top reasons: "
                     + ", ".join(f"{k} {100 * v / s:.0f}%" for k, v in agg.most_common(7)))
        for off, text, n, st in sorted(sel, key=lambda i: -i[2])[:top]:
            why = " ".join(f"{k}:{v}" for k, v in sorted(st.items(), key=lambda kv: -kv[1])[:3] if v)
            lines.append(f"  {off:#07x} {n:6d} {100 * n / s:5.1f}%  {text[:60]:60s} {why}")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv")
    ap.add_argument("--regions", default="", help="LO-HI=name,... (hex SASS offsets)")
    ap.add_argument("--top", type=int, default=12)
    args = ap.parse_args()
    insts = load(args.csv)
    regions = []
    for part in filter(None, args.regions.split(",")):
        rng, _, name = part.partition("=")
        lo, hi = (int(x, 16) for x in rng.split("-"))
        regions.append(((lo, hi), name or rng))
    if not regions:
        regions = [((0, max(i[0] for i in insts) + 16), "kernel")]
    print(report(insts, regions, args.top))


if __name__ == "__main__":
    main()
