"""What do a kernel's gathers cost? Time it against copies of itself that skip some pipe fills.

    python3 benchmarks/gather_probe.py tle_kernels/sparse_mla_seesaw.py --skip kv0r,kv1l \\
        --skip kv0,kv0r,kv1,kv1l [--skv 8192 131072] [--reps 3]

Each ``--skip`` names pipes (or ``pipe.field``s) of the kernel; for each one a copy of the kernel
file is written and lowered inside ``instrument.skip_fills(names, path=copy)``
(tle_compiler/lowering/instrument.py), so the lowering emits no store / cp.async gather into those
slots while every acquire, commit, wait and release stays: the protocol, the consumers' math and
the tensor-core work are unchanged, only the bytes are not moved. The copies compute wrong results
(the A/B check marks them WRONG); their speed is the kernel's speed if those gathers were free. The
copies and the original run interleaved in one process (benchmarks/ab_sparse_mla.py), so the
ratios are honest.

What it shows for the seesaw on an H200 (docs/kernels.md): without its second K pieces (kv0r,
kv1l) x1.134 / x1.167 at SKV = 8K / 128K; without any K gathers x1.225 / x1.344, i.e. the consumers
alone reach ~670-680 TFLOP/s: the gathers, not the consumers' math or the exchanges between them,
hold the pair loop back.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def kernel_name(src: str) -> str:
    """The name of the (single) ``@tle.jit`` function of a kernel file."""
    return re.search(r"^@tle\.jit.*\n(?:@.*\n)*def (\w+)", src, re.M).group(1)


def dry_run(path: str, skip: list[str]) -> int:
    """Lower ``path`` on the CPU with the fills of ``skip`` left out (tle-dump --gluon's path:
    specialised to its DEFAULT_CONFIG, as a launch would be; the protocol is verified first) and
    return how many fills it skips."""
    from tle_compiler.lowering import instrument
    from tle_compiler.lowering.dumping import lowered

    with instrument.skip_fills(skip, path=path):
        return lowered(path, kernel_name(Path(path).read_text()), "gluon").count("# PROBE:")


def absolute_imports(src: str, path: Path) -> str:
    """``src`` with its relative imports (``from .common import X``) made absolute for the package
    ``path`` lies in, so that a copy of the file elsewhere imports the same modules."""
    from tle_compiler.frontend.modules import module_name_of

    _, package = module_name_of(str(path))
    if not package:
        return src
    return re.sub(r"^from \.(?=\w)", f"from {package}.", src, flags=re.M)


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
    src = absolute_imports(Path(args.path).read_text(), Path(args.path))
    out = Path(tempfile.mkdtemp(prefix="gather_probe_"))
    copies = []  # (path of a copy of the kernel file, the fills it skips)
    for i, spec in enumerate(args.skip):
        skip = [s.strip() for s in spec.split(",") if s.strip()]
        p = out / f"{Path(args.path).stem}_skip{i}.py"
        p.write_text(src)  # its own file: its own kernel object, compile cache and skip_fills path
        print(f"{chr(ord('B') + i)}: skips the fills of {', '.join(skip)}", flush=True)
        copies.append((str(p), skip))
    if args.dry_run:
        for p, skip in copies:
            n = dry_run(p, skip)
            print(f"{p}: verified and lowered, {n} fills skipped", flush=True)
        return
    from benchmarks.ab_sparse_mla import main as ab_main
    from tle_compiler.lowering import instrument

    sys.argv = [sys.argv[0], args.path, *(p for p, _ in copies), "--skv", *map(str, args.skv),
                "--reps", str(args.reps)]
    with contextlib.ExitStack() as stack:
        for p, skip in copies:
            stack.enter_context(instrument.skip_fills(skip, path=p))
        ab_main()


if __name__ == "__main__":
    main()
