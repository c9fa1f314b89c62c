"""What do a kernel's gathers cost? Time it against copies of itself that skip some pipe fills.

    python3 benchmarks/gather_probe.py tle_kernels/sparse_mla_seesaw.py --skip kv0r,kv1l \\
        --skip kv0,kv0r,kv1,kv1l [--skv 8192 131072] [--reps 3]

Each ``--skip`` names pipes (or ``pipe.field``s) of the kernel; for each one a copy of the kernel
file is written with ``probe_skip_fills=(...)`` added to its ``@tle.jit``, so the lowering emits
no store / cp.async gather into those slots (tle_compiler/lowering/translate.py) while every
acquire, commit, wait and release stays: the protocol, the consumers' math and the tensor-core work
are unchanged, only the bytes are not moved. The copies compute wrong results (the A/B check marks
them WRONG); their speed is the kernel's speed if those gathers were free. The copies and the
original run interleaved in one process (benchmarks/ab_sparse_mla.py), so the ratios are honest.

What it showed for the seesaw (H200, 2026-11-29, docs/BENCHMARKS.md "Session 4"): without its
second K pieces (kv0r, kv1l) +13 % at SKV = 8K and 128K; without any K gathers +20 % / +29 %, i.e.
the consumers alone reach ~670 TFLOP/s: the gathers, not the consumers' math or the exchanges
between them, hold the pair loop back.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

_JIT = re.compile(r"^@tle\.jit(\((?P<args>.*)\))?\s*$", re.M)


def probe_source(src: str, skip: list[str]) -> str:
    """``src`` with ``probe_skip_fills=(...)`` added to its (single) ``@tle.jit`` decorator."""
    found = list(_JIT.finditer(src))
    if len(found) != 1:
        raise SystemExit(f"expected one single-line @tle.jit decorator, found {len(found)}")
    m = found[0]
    args = (m.group("args") or "").strip()
    opt = f"probe_skip_fills={tuple(skip)!r}"
    return src[:m.start()] + f"@tle.jit({args + ', ' if args else ''}{opt})" + src[m.end():]


def kernel_name(src: str) -> str:
    """The name of the (single) ``@tle.jit`` function of a kernel file."""
    return re.search(r"^@tle\.jit.*\n(?:@.*\n)*def (\w+)", src, re.M).group(1)


def dry_run(path: str) -> int:
    """Lower a probe copy on the CPU (tle-dump --gluon's path: specialised to its DEFAULT_CONFIG,
    as a launch would be; the protocol is verified first) and return how many fills it skips."""
    from tle_compiler.lowering.dumping import lowered

    return lowered(path, kernel_name(Path(path).read_text()), "gluon").count("# PROBE:")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path", help="a @tle.jit SparseMLA kernel file (the baseline, A)")
    ap.add_argument("--skip", action="append", required=True,
                    help="comma-separated pipes (or pipe.field) whose fills a copy skips; repeatable")
    ap.add_argument("--skv", type=int, nargs="*", default=[8192, 131072])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--dry-run", action="store_true",
                    help="write the copies, lower them on the CPU (the protocol verified first) and "
                         "print how many fills each skips; no GPU")
    args = ap.parse_args(argv)
    src = Path(args.path).read_text()
    out = Path(tempfile.mkdtemp(prefix="gather_probe_"))
    paths = [args.path]
    for i, spec in enumerate(args.skip):
        skip = [s.strip() for s in spec.split(",") if s.strip()]
        p = out / f"{Path(args.path).stem}_skip{i}.py"
        p.write_text(probe_source(src, skip))
        print(f"{chr(ord('B') + i)}: skips the fills of {', '.join(skip)}", flush=True)
        paths.append(str(p))
    if args.dry_run:
        for p in paths[1:]:
            n = dry_run(p)
            print(f"{p}: verified and lowered, {n} fills skipped", flush=True)
        return
    sys.argv = [sys.argv[0], *paths, "--skv", *map(str, args.skv), "--reps", str(args.reps)]
    from benchmarks.ab_sparse_mla import main as ab_main

    ab_main()


if __name__ == "__main__":
    main()
