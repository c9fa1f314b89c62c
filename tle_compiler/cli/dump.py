"""tle-dump: show and verify the pipe protocol of a kernel.

    tle-dump [--graph] [--format text|dot|json] [-o FILE] [-p PIPELINE] PATH
    tle-dump --gluon|--ttgir|--ptx PATH     the lowered kernel (sm_90a, the file's DEFAULT_CONFIG)
             [--debug-waits [--wait-bound 500ms]]   ... with bounded mbarrier waits that trap

PATH is a Python file with ``@tle.jit`` kernels or a ``.pipe`` file. Exit status: 0 when every
kernel is verified, 1 when one is rejected (diagnostics on stderr as ``PATH:LINE: error: ...``),
2 when the input is unusable (missing file, parse error with line and column).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Optional, Sequence

from ..diagnostics import TleError
from ..ir.nodes import Module
from ..passes import DEFAULT_PIPELINE, PASSES, run_pipeline
from .report import KernelReport, render_json, render_text

EXIT_OK, EXIT_REJECTED, EXIT_UNUSABLE = 0, 1, 2


class _Unusable(Exception):
    pass


def _specialised(path: Path, fixed: dict, err: TleError) -> tuple[Module, tuple[str, ...]]:
    """A kernel whose indices are affine only with its integer constexprs as numbers, read
    specialised to ``--param`` values and the file's DEFAULT_CONFIG constexprs (``err`` when there
    are none); also returns the constexprs bound, which are no longer params."""
    from ..frontend.ast_reader import kernels_of_source
    from ..lowering.dumping import default_config

    try:
        bind = dict(default_config(str(path), "").get("constexprs", {}))
    except TleError:  # no DEFAULT_CONFIG: --param values only
        bind = {}
    bind.update(fixed)
    bind = {k: v for k, v in bind.items() if isinstance(v, int) and not isinstance(v, bool)}
    if not bind:
        raise err
    infos = kernels_of_source(path.read_text(), str(path), bind=bind)
    bound = tuple(sorted({n for i in infos for n in i.constexprs if n in bind}))
    print(f"tle-dump: {path}: read specialised to {', '.join(f'{k}={bind[k]}' for k in bound)} "
          f"({err.message.split(':')[0]} otherwise); verified for these values", file=sys.stderr)
    return Module(tuple(i.program for i in infos), str(path)), bound


def load(path: Path, fixed: Optional[dict] = None) -> tuple[Module, tuple[str, ...]]:
    """Read a .pipe or .py file into a Module, with the constexprs it had to be read specialised
    to (_specialised; usually none). Raises TleError (a rejection, exit 1) for frontend errors in a
    kernel, _Unusable (exit 2) for missing files and syntax errors."""
    if not path.exists():
        raise _Unusable(f"{path}: error: no such file")
    if path.suffix == ".pipe":
        from ..ir.parser import parse_file

        try:
            return parse_file(path), ()
        except TleError as e:
            raise _Unusable(str(e)) from None
    from ..frontend import read_file

    try:
        return read_file(str(path)), ()
    except SyntaxError as e:
        raise _Unusable(f"{path}:{e.lineno}:{e.offset}: error: Python syntax error: {e.msg}") from None
    except TleError as e:
        if e.check == "syntax":  # not Python at all: unusable, not a rejected protocol
            loc = e.loc
            raise _Unusable(f"{loc.file}:{loc.line}:{loc.column}: error: Python {e.message}") from None
        from ..frontend import SPECIALIZABLE

        if e.check in SPECIALIZABLE:
            return _specialised(path, fixed or {}, e)
        raise


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="tle-dump",
        description="Print a kernel's Pipe IR, the mbarriers inferred for it, and whether its pipe "
                    "protocol is verified (well-formed and deadlock-free for every param value).",
        epilog=f"passes: {', '.join(PASSES)}. Exit status: 0 verified, 1 rejected, 2 unusable input. "
               "Example: tle-dump --graph kernels/sparse_mla_pipe.py",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("path", help="a .py file with @tle.jit kernels, or a .pipe file")
    ap.add_argument("--graph", action="store_true",
                    help="also show the dataflow graph (partitions and the pipes between them)")
    ap.add_argument("--format", choices=("text", "dot", "json"), default=None,
                    help="output format (default: text; from -o's suffix when it is .dot/.json/.svg/.png)")
    ap.add_argument("-o", "--output", help="write here instead of stdout; .svg/.png/.pdf render the "
                    "DOT graph with Graphviz")
    ap.add_argument("-p", "--passes", default=DEFAULT_PIPELINE, metavar="PIPELINE",
                    help=f"comma-separated passes to run (default: {DEFAULT_PIPELINE})")
    ap.add_argument("--kernel", action="append", help="only this kernel (repeatable)")
    ap.add_argument("--bound", type=int, help="check params only up to min+BOUND (default: a bound "
                    "computed from the program and shown sufficient)")
    ap.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                    help="check only this value of a param (repeatable)")
    ap.add_argument("--no-locations", action="store_true", help="omit '# file:line' after events")
    ap.add_argument("-q", "--quiet", action="store_true", help="print only diagnostics and the exit status")
    lower = ap.add_argument_group("lowering (a .py kernel with a DEFAULT_CONFIG; compiled for sm_90a, "
                                  "no GPU needed)")
    lower.add_argument("--gluon", action="store_true", help="print the generated Gluon source")
    lower.add_argument("--ttgir", action="store_true", help="print the lowered TTGIR")
    lower.add_argument("--ptx", action="store_true", help="print the PTX")
    lower.add_argument("--debug-waits", action="store_true",
                       help="lower every mbarrier wait as a bounded wait that prints the pipe and "
                            "index and traps (docs/lowering.md, 'Debug waits'); the bound: "
                            "--wait-bound, else $TLE_DEBUG_WAITS when it names one, else 2 s")
    lower.add_argument("--wait-bound", metavar="BOUND", default=None,
                       help="with --debug-waits: the bound of one wait (2s, 500ms, 1000000polls)")
    return ap


def _params(items: Sequence[str]) -> dict[str, int]:
    out = {}
    for it in items:
        name, sep, val = it.partition("=")
        if not sep or not val.lstrip("-").isdigit():
            raise _Unusable(f"--param expects NAME=INTEGER, got '{it}'")
        out[name.strip()] = int(val)
    return out


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    path = Path(args.path)
    fmt = args.format
    if fmt is None:
        suffix = Path(args.output).suffix.lower() if args.output else ""
        fmt = {".json": "json", ".dot": "dot", ".svg": "dot", ".png": "dot", ".pdf": "dot"}.get(suffix, "text")
    t0 = time.perf_counter()
    try:
        fixed = _params(args.param)
        try:
            module, bound = load(path, fixed)
        except TleError as e:
            print(str(e), file=sys.stderr)
            return EXIT_REJECTED
        kernels = [k for k in module.kernels if not args.kernel or k.name in args.kernel]
        if not kernels:
            what = f"no kernel named {', '.join(args.kernel)}" if args.kernel else \
                "no @tle.jit kernel that calls tle.gpu.warp_specialize"
            raise _Unusable(f"{path}: error: {what}")
        try:
            # a constexpr the file was read specialised to is no longer a param
            reports = [KernelReport(k, run_pipeline(
                k, args.passes, bound=args.bound,
                params={n: v for n, v in fixed.items() if n not in bound}))
                for k in kernels]
        except ValueError as e:
            raise _Unusable(f"tle-dump: error: {e}") from None
        except TleError as e:  # e.g. a loop too long to expand
            print(str(e), file=sys.stderr)
            return EXIT_REJECTED
    except _Unusable as e:
        print(str(e), file=sys.stderr)
        return EXIT_UNUSABLE

    for rep in reports:
        for d in rep.diagnostics:
            print(str(d), file=sys.stderr)
    if args.gluon or args.ttgir or args.ptx:
        return _dump_lowered(args, path, reports)
    if not args.quiet:
        if fmt == "json":
            text = json.dumps({"tool": "tle-dump", "source": str(path),
                               "kernels": [render_json(r, args.graph) for r in reports]}, indent=2) + "\n"
        elif fmt == "dot":
            from .dot import render_dot

            text = render_dot(reports)
        else:
            text = "\n".join(render_text(r, args.graph, not args.no_locations) for r in reports)
        if args.output:
            out = Path(args.output)
            if fmt == "dot" and out.suffix.lower() in (".svg", ".png", ".pdf"):
                from .dot import render_image

                try:
                    render_image(text, out)
                except FileNotFoundError as e:
                    print(f"tle-dump: error: {e}", file=sys.stderr)
                    return EXIT_UNUSABLE
            else:
                out.write_text(text)
        else:
            sys.stdout.write(text)
    ok = all(r.verified or (r.ctx.ok and "verify-deadlock" not in args.passes) for r in reports)
    elapsed = time.perf_counter() - t0
    for r in reports:
        print(f"tle-dump: {r.program.name}: {r.verdict()} ({elapsed:.2f} s)", file=sys.stderr)
    return EXIT_OK if ok else EXIT_REJECTED


def _debug_waits(args):
    """--debug-waits [--wait-bound B] → the compile_kernel argument (None: $TLE_DEBUG_WAITS)."""
    import os

    if args.wait_bound:
        return args.wait_bound
    if args.debug_waits:
        env = os.environ.get("TLE_DEBUG_WAITS", "")
        return env if env not in ("", "0") else True
    return None


def _dump_lowered(args, path: Path, reports) -> int:
    """--gluon/--ttgir/--ptx: only verified kernels are lowered (a rejected protocol never is)."""
    if path.suffix != ".py":
        print(f"{path}: error: --gluon/--ttgir/--ptx need a .py kernel file", file=sys.stderr)
        return EXIT_UNUSABLE
    if not all(r.verified for r in reports):
        for r in reports:
            print(f"tle-dump: {r.program.name}: {r.verdict()}", file=sys.stderr)
        return EXIT_REJECTED
    from ..lowering.dumping import lowered_texts

    try:
        text = lowered_texts(str(path), [r.program.name for r in reports],
                             {"gluon": args.gluon, "ttgir": args.ttgir, "ptx": args.ptx},
                             debug_waits=_debug_waits(args))
    except (TleError, ValueError) as e:
        print(str(e), file=sys.stderr)
        return EXIT_REJECTED
    if args.output:
        Path(args.output).write_text(text)
    else:
        sys.stdout.write(text)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
