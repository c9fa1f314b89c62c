"""tle-dump: show and verify the pipe protocol of a kernel.

    tle-dump [--graph] [--format text|dot|json] [-o FILE] [-p PIPELINE] PATH [PATH ...]
    tle-dump -p PIPELINE --print-ir PATH    the kernel IR after the passes (cli/print_ir.py)
    tle-dump --gluon|--ttgir|--ptx PATH     the lowered kernel (sm_90a, the file's DEFAULT_CONFIG)
             [--debug-waits [--wait-bound 500ms]]   ... with bounded mbarrier waits that trap

PATH is a Python file with ``@tle.jit`` kernels or a ``.pipe`` file. Every kernel gets a verdict
(tle_compiler/passes/verdict.py); a kernel of a .py or .kir file the passes find no fault in is
translated to Gluon as --gluon translates it (no Triton compile: cli/translation_check.py), and
one the lowering refuses is rejected at its line. The exit status is one a CI gate can use: 0
proved for every value of the params, 1 rejected (diagnostics on stderr as ``PATH:LINE: error:
...``), 2 unusable input (no file, a directory, a syntax error, a bad flag, an output that cannot
be written), 3 not proved (verified only for the values checked, or a verification budget ran out).
With several kernels the worst wins: 2, then 1, then 3, then 0. A partial pipeline (``-p PASS``)
that stops before the verdict claims nothing: it exits 1 on a fault its passes find, else 0, and
says that no claim is made (a deadlock, say, is found only by verify-deadlock). Several PATHs are
each checked alone with the same flags, and the worst of their statuses wins; Ctrl-C exits 130.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import io
import json
import os
import re
import stat
import sys
import time
import warnings
from pathlib import Path
from typing import Iterable, Optional, Sequence

from ..diagnostics import TleError, TleVerificationWarning
from ..ir.nodes import Module, Program
from ..passes import DEFAULT_PIPELINE, PASSES, PassContext, run_pipeline
from ..passes.verdict import PROVED, REJECTED
from .report import KernelReport, diagnostic_json, makes_claim, render_json, render_text
from .constexprs import lowering_constexprs
from .unusable import Unusable, at_line
from .loading import INPUT_SUFFIXES, Loaded, check_bool_values, load, read_input
from .kernel_checks import (RacesBeside, check_default_shapes, check_float_constexprs,
                            check_launch_signature, check_memory_races, check_signed_loads)
from .translation_check import AHEAD, check_translation, params_of, translate_ahead

EXIT_OK, EXIT_REJECTED, EXIT_UNUSABLE, EXIT_NOT_PROVED = 0, 1, 2, 3
#: Ctrl-C (SIGINT): 128 + 2, as shells report a command the signal ended; nothing is claimed.
EXIT_INTERRUPTED = 130
#: Which exit status wins when a file's kernels disagree: unusable, then rejected, then not proved.
EXIT_PRIORITY = (EXIT_UNUSABLE, EXIT_REJECTED, EXIT_NOT_PROVED, EXIT_OK)
IMAGE_SUFFIXES = (".svg", ".png", ".pdf")

EPILOG = f"""\
formats (--format, else from -o's suffix: .json, .dot, .svg/.png/.pdf):
  text   the Pipe IR, the inferred mbarriers and '# verdict: ...' (the report is a valid .pipe file)
  json   one object: "exit_code", "kernels" (each with "verdict", "scope", "checked", "reason",
         "argument", "verified", "translated", "barriers", "diagnostics", ...) and top-level
         "diagnostics"; unusable input gives {{"error": ..., "exit_code": 2}}
  dot    a Graphviz picture of the partitions and pipes; -o FILE.svg/.png/.pdf renders it

verdicts (one per kernel: the '# verdict:' line and the summary line on stderr):
  proved    verified for every value of the params (or for the --param values given)
  rejected  a fault was found: 'PATH:LINE: error: ...' on stderr
  bounded   no fault for the values checked, which it names; nothing claimed for other values
  unknown   a verification budget ran out; it names what was checked without a fault
  A kernel of a .py or .kir file that is not rejected is translated to Gluon as --gluon
  translates it (the Gluon text, no Triton compile): a refusal of the lowering rejects it at
  its line ('error: lowering: ...'). One with a constexpr no DEFAULT_CONFIG or --param gives a
  value, a free shared buffer (not lowered yet), or no DEFAULT_CONFIG signature to type its
  arguments when the untyped translation refuses it keeps its verdict, which is then the
  protocol's alone: its report says '# lowering: not translated to Gluon: ...' (JSON:
  "translated": false, "not_translated"; docs/semantics.md, "Verdicts").

exit status (with several kernels the first of 2, 1, 3 that applies, else 0):
  0  every kernel proved; also when the pipeline (-p) gives no verdict and finds no error
     (-p infer-barriers, or an empty -p "": "not verified", nothing claimed)
  1  a kernel is rejected, or cannot be read or lowered (the lowering refuses its translation)
  2  unusable input: no such file, a directory, stdin, a FIFO, a suffix other than .py/.pipe/
     .kir, a syntax error (or nesting too deep for Python), a file with no kernel (a .py with
     no @tle.jit kernel that calls tle.gpu.warp_specialize) or none of the --kernel names, an
     unknown pass in -p, a bad flag, --param (True/False only for a boolean constexpr) or
     --bound, --debug-waits/--wait-bound without --gluon/--ttgir/--ptx, a DEFAULT_CONFIG
     num_warps other than the kernel's @tle.jit one or a signature type Triton does not read
     ("int", "*float32"), a signature typing "constexpr" a run-time argument or a constexpr
     "constexprs" gives no value, a "constexprs" value other than an integer (None, a str, a
     float) for a constexpr the kernel uses where Triton takes only one (a loop bound, a
     shape), an output (-o, or stdout) that cannot be written, is the input file or ends in
     '/', --gluon/--ttgir/--ptx with --graph or with an -o/--format of JSON or a picture,
     --print-ir (or a lowering pass in -p) with --graph, --format dot/json or
     --gluon/--ttgir/--ptx, --gluon/--ttgir/--ptx on a file without a DEFAULT_CONFIG or whose
     signature or constexprs name no argument of the kernel, or whose signature leaves one
     untyped (-p emit-gluon too, on a .py file whose DEFAULT_CONFIG does so; one without a
     DEFAULT_CONFIG it lowers untyped)
  3  not proved: a kernel is bounded or unknown (--gluon/--ttgir/--ptx still print it, with a
     warning); also an internal error of tle-dump (one line: nothing is claimed)
  130  interrupted (Ctrl-C): nothing is claimed
  Several PATHs: each is checked alone with the same flags ('tle-dump: PATH: exit N' on
  stderr for each) and the worst status wins; --format json prints one object
  {{"exit_code": ..., "files": [...]}}; -o takes one PATH only.

passes (-p; a pass's prerequisites run first):
  protocol  {{protocol}}
  lowering  {{lowering}}
  Without --print-ir, a pipeline of protocol passes prints the report above. With --print-ir,
  or when the pipeline holds a lowering pass, tle-dump prints the kernel IR text form after the
  pipeline, with the passes' attributes (PATH: a .py kernel file or a .kir text-form file);
  a pipeline ending in emit-gluon prints the Gluon module --gluon prints (the file's
  DEFAULT_CONFIG constexprs, and the --param values of constexprs in their place), without a
  compile: where inline asm addresses barriers (eager publish) their shared-memory offsets,
  which Triton's allocator decides, are printed as 0 and marked as placeholders; a kernel
  the default run rejects (a memory race, a signature type or descriptor) is not lowered, and
  one it leaves bounded or unknown is printed with a warning, exit 3. Any other pipeline that
  gives a verdict (verify-protocol, then verify-deadlock, its own or those its lowering passes
  require) takes that of -p of its protocol passes without --print-ir: the checks beside the
  passes (memory races, the signature, the translation) apply as there, and a kernel only they
  reject prints no IR (exit 1).
  Exit status as above: 1 on a fault, else the verdict's when the pipeline gives one, else 0.

examples: (run from the root of a checkout of the repository)
  tle-dump --graph tle_kernels/sparse_mla_pipe.py
  tle-dump --format json --param NK=2 -o report.json docs/example.pipe
  tle-dump -p infer-barriers --print-ir tle_kernels/examples/ring.py
  tle-dump -p materialize-barriers tle_kernels/examples/ring.py
  tle-dump -p emit-gluon tle_kernels/examples/ring.py
"""


class _BadFlag(Unusable):
    """argparse rejected the command line (its usage goes to stderr first)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # exit 2 through main, so --format json still prints JSON
        raise _BadFlag(f"{self.prog}: error: {message}")

    def format_help(self):
        # the pass list imports the lowering (its passes register then): only when help is shown,
        # so a plain verification does not pay for importing the lowering
        if self.epilog is None:
            self.epilog = _epilog()
        return super().format_help()


class _Once(argparse.Action):
    """A flag that takes one value: given twice with two values (-o a.json -o b.txt, --format
    json --format text), it is refused rather than the last one silently winning."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.given = None

    def __call__(self, parser, namespace, values, option_string=None):
        if self.given is not None and self.given != values:
            parser.error(f"argument {'/'.join(self.option_strings)}: given twice "
                         f"({self.given!r} and {values!r}); give it once")
        self.given = values
        setattr(namespace, self.dest, values)


def combine_exit_codes(codes: Iterable[int]) -> int:
    """The exit status of several kernels: 2 beats 1 beats 3 beats 0."""
    codes = set(codes)
    return next((c for c in EXIT_PRIORITY if c in codes), EXIT_OK)


def _names_shown(names: Iterable[str]) -> str:
    """``names`` for a message: a name that is no identifier quoted (``--kernel 'k '``: a
    trailing blank was invisible in "no kernel named k  (kernels: k)")."""
    return ", ".join(n if n.isidentifier() else repr(n) for n in names)


def _epilog() -> str:
    from ..lowering.kir_passes import passes_with_lowering

    names = list(passes_with_lowering())
    return EPILOG.replace("{protocol}", ", ".join(n for n in names if n in PASSES)).replace(
        "{lowering}", ", ".join(n for n in names if n not in PASSES))


def _version() -> str:
    """The installed distribution's version (pyproject.toml), or a word saying there is none."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"(tle_compiler {version('tle_compiler')})"
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "(tle_compiler, not installed: version unknown)"


def build_parser() -> argparse.ArgumentParser:
    ap = _Parser(
        prog="tle-dump",
        description="Show a kernel's Pipe IR and inferred mbarriers, and verify its pipe protocol.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("path", nargs="+", metavar="PATH",
                    help="a .py file with @tle.jit kernels, a .pipe file, or a .kir file (the "
                    "kernel IR's text form); several: each checked alone, the worst exit wins")
    ap.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    ap.add_argument("--graph", action="store_true",
                    help="also show the dataflow graph (partitions and the pipes between them)")
    ap.add_argument("--format", action=_Once, choices=("text", "dot", "json"), default=None,
                    help="output format (default: text; from -o's suffix when it is "
                         ".dot/.json/.svg/.png/.pdf)")
    ap.add_argument("-o", "--output", action=_Once,
                    help="write here instead of stdout (UTF-8); .svg/.png/.pdf render the DOT "
                         "graph with Graphviz; another suffix gets text")
    ap.add_argument("-p", "--passes", action=_Once, default=DEFAULT_PIPELINE, metavar="PIPELINE",
                    help=f"comma-separated passes to run (default: {DEFAULT_PIPELINE}); only "
                         "verify-deadlock after verify-protocol gives a verdict; any pass listed "
                         "below, the lowering passes print the kernel IR")
    ap.add_argument("--print-ir", action="store_true",
                    help="print the kernel IR text form after the pipeline (-p), with the "
                         "attributes the passes wrote (a .py or .kir file)")
    ap.add_argument("--kernel", action="append", help="only this kernel (repeatable)")
    ap.add_argument("--bound", action=_Once, type=int, metavar="B",
                    help="check params only up to min+B, B >= 0 (the verdict is then at best "
                         "'bounded'; default: a bound computed from the program)")
    ap.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                    help="check only this value of a param (or of a base param of derived ones, "
                         "N of M = N // 2, which fixes them), or read the kernel specialised to "
                         "this value of a constexpr (0/1 or True/False for a boolean one), which "
                         "--gluon/--ttgir/--ptx then lower (repeatable); the verdict covers these "
                         "values only")
    ap.add_argument("--no-locations", action="store_true", help="omit '# file:line' after events")
    ap.add_argument("-q", "--quiet", action="store_true",
                    help="print only the diagnostics and each kernel's summary line on stderr: "
                         "no report and no kernel IR text (--print-ir, a lowering pass in -p) on "
                         "stdout (the exit status is unchanged; the lowered kernel of "
                         "--gluon/--ttgir/--ptx or -p emit-gluon is still printed, and a report "
                         "asked for with -o is still written)")
    lower = ap.add_argument_group("lowering (a .py kernel with a DEFAULT_CONFIG; compiled for sm_90a, "
                                  "no GPU needed; a rejected kernel is never lowered)")
    lower.add_argument("--gluon", action="store_true", help="print the generated Gluon source")
    lower.add_argument("--ttgir", action="store_true", help="print the lowered TTGIR")
    lower.add_argument("--ptx", action="store_true", help="print the PTX")
    lower.add_argument("--debug-waits", action="store_true",
                       help="lower every mbarrier wait as a bounded wait that prints the pipe and "
                            "index and traps (docs/lowering.md, 'Debug waits'); the bound: "
                            "--wait-bound, else $TLE_DEBUG_WAITS when it names one, else 2 s")
    lower.add_argument("--wait-bound", action=_Once, metavar="BOUND", default=None,
                       help="the bound of one debug wait (2s, 500ms, 1000000polls; a bare "
                            "number is seconds); implies --debug-waits")
    return ap


_INT = re.compile(r"[+-]?[0-9]+")
#: The most digits a --param value may have: 308, below 2**1024, the bound on the integers of a
#: .kir file (ir/kernel_text.MAX_INT_BITS); Python refuses to read integers of 4300 digits.
_PARAM_DIGITS = 308
#: A boolean constexpr may be given as True/False too: the integers 1 and 0.
_BOOLS = {"True": 1, "False": 0}


class _Given(dict):
    """The --param values by name; ``bools``: the names given as True/False, which only a
    boolean constexpr may be (check_bool_values)."""

    bools: frozenset = frozenset()


def _params(items: Sequence[str]) -> dict[str, int]:
    out: dict[str, int] = _Given()
    bools = set()
    for it in items:
        name, sep, val = it.partition("=")
        name, val = name.strip(), val.strip()
        if not sep or not name.isidentifier() or not (_INT.fullmatch(val) or val in _BOOLS):
            raise Unusable(f"tle-dump: error: --param expects NAME=INTEGER (or NAME=True/False "
                            f"for a boolean constexpr), got {it!r}")
        if len(val.lstrip("+-")) > _PARAM_DIGITS:
            raise Unusable(f"tle-dump: error: --param {name}: a value of "
                            f"{len(val.lstrip('+-'))} digits (at most {_PARAM_DIGITS})")
        value = _BOOLS[val] if val in _BOOLS else int(val)
        if name in out and out[name] != value:
            raise Unusable(f"tle-dump: error: --param {name} given twice ({out[name]} and {val})")
        out[name] = value
        if val in _BOOLS:
            bools.add(name)
    out.bools = frozenset(bools)
    return out


def _check_params(fixed: dict[str, int], kernels: list[Program], loaded: Loaded) -> None:
    """Every --param names a param of a selected kernel or a base param its derived ones are
    computed from (with a value in its domain, and giving derived values in theirs), or a
    constexpr the file was read specialised to."""
    from ..passes.fixed_params import fix, fixable

    check_bool_values(fixed, kernels, loaded)
    specialised = loaded.specialised
    known = sorted({n for k in kernels for n in fixable(k)} | set(specialised))
    constexprs = sorted({n for k in kernels for n in loaded.constexprs.get(k.name, ())}
                        - set(known))
    # a .pipe kernel's `constexpr NAME = V` lines: the protocol was read with those values only
    own = {n: (k.name, v) for k in kernels for n, v in k.constexprs}
    for name, value in fixed.items():
        if name in specialised:
            continue
        if name in own:
            kernel, v = own[name]
            if value != v:
                raise Unusable(f"tle-dump: error: --param {name}={value}: the protocol of "
                                f"{kernel} was read specialised to {name} = {v} (its 'constexpr "
                                f"{name} = {v}' line) and holds no other value; give the kernel "
                                f"file (.py or .kir) to check {name} = {value}")
            continue
        params = [fixable(k)[name] for k in kernels if name in fixable(k)]
        if not params:
            what = f"known: {', '.join(known)}" if known else "the kernel has no params"
            if constexprs:
                what += f"; constexprs: {', '.join(constexprs)}"
            kind = "param or constexpr" if constexprs else "param"
            raise Unusable(f"tle-dump: error: --param {name}: no such {kind} ({what})")
        for k, p in ((k, fixable(k)[name]) for k in kernels if name in fixable(k)):
            if not p.contains(value):
                how = next((f": the kernel computes {d}, which takes no other value"
                            for d in k.derived if d.name == name), "")
                raise Unusable(f"tle-dump: error: --param {name}={value} is outside the domain "
                                f"of {name} ({p.domain()}{how})")
    for k in kernels:  # the derived params the values given determine (in their domains)
        try:
            fix(k, {n: v for n, v in fixed.items() if n in fixable(k)})
        except ValueError as e:
            raise Unusable(f"tle-dump: error: {k.name}: {e}") from None


def _check_output(out: Path, source: Optional[Path] = None) -> None:
    """Fail early (before verifying or lowering) when -o cannot be written, or names the input
    file ``source`` (the report would replace the kernel it reports on)."""
    parent = out.parent
    try:
        if source is not None and _is_input(out, source):
            raise Unusable(f"{out}: error: cannot write: it is the input file {source}; give "
                            f"-o another path")
        if out.is_dir():
            raise Unusable(f"{out}: error: cannot write: is a directory")
        if not parent.exists():
            raise Unusable(f"{out}: error: cannot write: no such folder {parent}")
        if not parent.is_dir():
            raise Unusable(f"{out}: error: cannot write: {parent} is not a folder")
    except OSError as e:
        raise Unusable(f"{out}: error: cannot write: {e.strerror or e}") from None
    if not os.access(parent, os.W_OK) or (out.exists() and not os.access(out, os.W_OK)):
        raise Unusable(f"{out}: error: cannot write: permission denied")
    _check_fifo_reader(out)


def _check_fifo_reader(out: Path) -> None:
    """A FIFO at -o with no process reading it would block the write forever: refused. One with
    a reader (a named FIFO a process reads) is written as a file is."""
    try:
        if not stat.S_ISFIFO(out.stat().st_mode):
            return
        fd = os.open(out, os.O_WRONLY | os.O_NONBLOCK)  # ENXIO: no reader at the other end
    except FileNotFoundError:
        return
    except OSError as e:
        if e.errno == errno.ENXIO:
            raise Unusable(f"{out}: error: cannot write: a FIFO that no process reads (the write "
                            f"would block forever)") from None
        raise Unusable(f"{out}: error: cannot write: {e.strerror or e}") from None
    # held open until the run ends (_run_one): closing it now would tell the reader the stream
    # ended (EOF) before the report is written through the FIFO's own path
    _HELD_FIFOS.append(fd)


#: Write ends of -o FIFOs that _check_fifo_reader opened, closed when the run ends.
_HELD_FIFOS: list[int] = []


def _write(out: Path, data: str | bytes) -> None:
    try:
        if isinstance(data, bytes):
            out.write_bytes(data)
        else:
            # UTF-8 whatever the locale: the .pipe/.kir readers decode UTF-8, and a report
            # naming a non-ASCII path must be writable under any LANG
            out.write_text(data, encoding="utf-8")
    except OSError as e:
        raise Unusable(f"{out}: error: cannot write: {e.strerror or e}") from None


def _emit(args, fmt: str, text: str) -> None:
    """The report to -o (rendered when it is an image) or to stdout."""
    if not args.output:
        _write_stdout(text)
        return
    out = Path(args.output)
    if fmt == "dot" and out.suffix.lower() in IMAGE_SUFFIXES:
        from .dot import GraphvizError, render_image

        try:
            render_image(text, out)
        except GraphvizError as e:
            raise Unusable(f"tle-dump: error: {e}") from None
        except OSError as e:
            raise Unusable(f"{out}: error: cannot write: {e.strerror or e}") from None
        return
    _write(out, text)


def _format_of(args) -> str:
    if args.format:
        return args.format
    suffix = Path(args.output).suffix.lower() if args.output else ""
    return {".json": "json", ".dot": "dot", **{s: "dot" for s in IMAGE_SUFFIXES}}.get(suffix, "text")


def _bad_flag_hint(argv: Sequence[str], message: str) -> str:
    """What to do about a command line argparse refused: for a flag whose value starts with '-'
    (--wait-bound -5s, --kernel -k: argparse reads it as a flag), the FLAG=VALUE spelling; else
    where the flags are listed."""
    m = re.search(r"argument (\S+): expected one argument", message)
    if m:
        spellings = m.group(1).split("/")  # -o/--output: the long one takes =VALUE
        for i, a in enumerate(argv[:-1]):
            if a in spellings and argv[i + 1].startswith("-"):
                return f"for a value that starts with '-', write {spellings[-1]}={argv[i + 1]}"
    # a file named like a flag (-x.py) is read as one: say how to give it as a PATH
    def is_file(a: str) -> bool:
        try:
            return Path(a).suffix in INPUT_SUFFIXES and Path(a).exists()
        except (OSError, ValueError):  # a name too long, a NUL byte: no file
            return False

    dashed = next((a for a in argv if a.startswith("-") and len(a) > 1 and a != "--"
                   and is_file(a)), None)
    if dashed:
        return f"for a PATH that starts with '-', write ./{dashed} or -- {dashed}"
    return "tle-dump --help lists the flags"


def _json_requested(argv: Sequence[str]) -> bool:
    """Whether a command line argparse rejected asked for JSON (--format json or -o X.json)."""
    def spells(a: str, flag: str) -> bool:  # argparse takes a unique prefix: --form, --out
        return len(a) > 3 and flag.startswith(a)

    for i, a in enumerate(argv):
        nxt = argv[i + 1] if i + 1 < len(argv) else ""
        name, eq, value = a.partition("=")
        if spells(name, "--format") and (value if eq else nxt) == "json":
            return True
        if (a == "-o" or spells(name, "--output")) and (value if eq else nxt).lower().endswith(
                ".json"):
            return True
        if a.startswith("-o") and len(a) > 2 and a.lower().endswith(".json"):  # -oreport.json
            return True
    return False


def _json_text(doc: dict) -> str:
    return json.dumps(doc, indent=2) + "\n"


def _reporting(args) -> bool:
    """Whether the report is written: always to -o (a quiet run must not leave an earlier run's
    report there, which would state that run's verdict), to stdout unless -q."""
    return not args.quiet or bool(args.output)


def _error_json(args, path: Optional[str], message: str, code: int = EXIT_UNUSABLE) -> None:
    """Unusable input (or an internal error: ``code`` 3) as JSON: to -o when it can be written
    (not a folder, nor the input file), else to stdout."""
    text = _json_text({"tool": "tle-dump", "source": path, "error": message, "exit_code": code})
    if _error_output(args) is not None:
        try:
            Path(args.output).write_text(text, encoding="utf-8")
            return
        except OSError:
            pass
    _write_stdout(text, failing=True)


def _error_text(args, fmt: str, message: str, lead: str = "") -> None:
    """The error of a run that printed no report, written as comment lines (``lead``, else the
    format's) to the text or DOT file -o names, so that what an earlier run left there (a
    ``# verdict: verified`` report, a lowered kernel) does not stand for this run. Nothing when
    -o is absent, names a folder, a picture or the input file, or cannot be written (the error
    line on stderr says why)."""
    out = _error_output(args)
    if out is None or fmt == "json" or (fmt == "dot" and out.suffix.lower() in IMAGE_SUFFIXES):
        return
    lead = lead or ("//" if fmt == "dot" else "#")
    try:
        out.write_text("".join(f"{lead} {ln}\n" for ln in message.splitlines()),
                       encoding="utf-8")
    except OSError:
        pass


def _error_output(args) -> Optional[Path]:
    """The -o file an error may be written to: a regular file or none yet, not the input file;
    None when there is no -o, or it names a folder (a trailing '/'), a FIFO or device (whose
    write may block), or holds a line-breaking character: the error line on stderr is enough."""
    if args is None or not args.output or args.output.endswith(("/", os.sep)):
        return None
    if _LINE_BREAKING.search(args.output) or _LINE_BREAKING.search(args.path):
        return None
    out = Path(args.output)
    try:
        plain = not out.exists() or out.is_file()
    except OSError:
        return None
    return out if plain and not _is_input(out, Path(args.path)) else None


def _is_input(out: Path, source: Path) -> bool:
    """Whether -o names the input file (a report written there would replace the kernel)."""
    try:
        return out.exists() and source.exists() and out.samefile(source)
    except OSError:
        return False


class _DropOnError(io.TextIOBase):
    """sys.stderr while tle-dump runs: a stderr that cannot be written (closed, ``2>&-``) drops
    the message instead of raising, so that the exit status stays the run's (an OSError there
    made a proved kernel exit 1)."""

    def __init__(self, inner):
        self.inner = inner

    def write(self, text):
        try:
            return self.inner.write(text)
        except (OSError, ValueError, AttributeError):
            return len(text)

    def flush(self):
        try:
            self.inner.flush()
        except (OSError, ValueError, AttributeError):
            pass

    def fileno(self):
        return self.inner.fileno()

    def isatty(self):  # whether a progress line is shown (_progress)
        try:
            return self.inner.isatty()
        except (OSError, ValueError, AttributeError):
            return False

    @property
    def encoding(self):
        return getattr(self.inner, "encoding", "utf-8")


#: whether the memory-race proofs run in a child process beside the rest (RacesBeside): in a
#: tle-dump process of its own (main() of no arguments), not where main() is called in-process
_BESIDE = False


def main(argv: Optional[Sequence[str]] = None) -> int:
    global _BESIDE
    _BESIDE = argv is None
    stderr = sys.stderr
    sys.stderr = _DropOnError(stderr)
    try:
        return _main(argv)
    finally:
        sys.stderr = stderr


def _main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = build_parser()
    try:
        args = ap.parse_args(argv)
    except _BadFlag as e:
        # one line, as every other refusal (argparse would print its usage block first)
        print(f"{e} ({_bad_flag_hint(argv, str(e))})", file=sys.stderr)
        if _json_requested(argv):
            _error_json(None, None, str(e))
        return EXIT_UNUSABLE
    if args.output == "-":  # the usual spelling of stdout (was a file named '-')
        args.output = None
    fmt = _format_of(args)
    paths = args.path
    if len(paths) > 1:
        return _run_several(args, fmt, paths)
    args.path = paths[0]
    return _run_one(args, fmt)


def _run_one(args, fmt: str) -> int:
    """One PATH: its exit status, every failure turned into one line and a documented status."""
    try:
        return _run(args, fmt)
    except Unusable as e:
        print(str(e), file=sys.stderr)
        if fmt == "json" and _reporting(args):
            _error_json(args, args.path, str(e))
        else:
            _error_text(args, fmt, str(e))
        return EXIT_UNUSABLE
    except TleError as e:  # a kernel's error no mode caught: rejected, as the frontend's are
        print(str(e.to_diagnostic()), file=sys.stderr)
        _error_text(args, fmt, str(e.to_diagnostic()))
        return EXIT_REJECTED
    except KeyboardInterrupt:  # Ctrl-C: no traceback, and a status that claims nothing
        print(f"tle-dump: interrupted; nothing is claimed for {args.path}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as e:  # noqa: BLE001 - a bug in tle-dump itself (RecursionError too)
        return _internal_error(args, fmt, e)
    finally:
        while _HELD_FIFOS:
            os.close(_HELD_FIFOS.pop())


def _run_several(args, fmt: str, paths: Sequence[str]) -> int:
    """Several PATHs: each is checked as if given alone, with the same flags, and the exit
    status is the worst of theirs (2, then 1, then 3, then 0). Their reports follow one another
    on stdout; with --format json they are one object, {"exit_code": worst, "files": [the
    object of each PATH]}. -o would hold one file's report only: refused."""
    if args.output is not None:
        message = (f"tle-dump: error: -o writes one report: give one PATH with -o (got "
                   f"{len(paths)}), or leave -o out")
        print(message, file=sys.stderr)
        if fmt == "json" and _reporting(args):
            _write_stdout(_json_text({"tool": "tle-dump", "source": None, "error": message,
                                      "exit_code": EXIT_UNUSABLE}), failing=True)
        return EXIT_UNUSABLE
    wrap = fmt == "json" and _reporting(args)
    codes, docs = [], []
    for path in paths:
        one = argparse.Namespace(**vars(args))
        one.path = path
        if wrap:  # each file's JSON object, collected into one document
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                code = _run_one(one, fmt)
            try:
                docs.append(json.loads(buf.getvalue()))
            except ValueError:
                docs.append({"tool": "tle-dump", "source": path, "exit_code": code})
        else:
            code = _run_one(one, fmt)
        if code == EXIT_INTERRUPTED:
            return code
        # which file each status belongs to: the summary lines name kernels, not files
        print(f"tle-dump: {path}: exit {code}", file=sys.stderr)
        codes.append(code)
    code = combine_exit_codes(codes)
    if wrap:
        try:
            _write_stdout(_json_text({"tool": "tle-dump", "exit_code": code, "files": docs}))
        except Unusable as e:
            print(str(e), file=sys.stderr)
            return EXIT_UNUSABLE
    return code


def _write_stdout(text: str, failing: bool = False) -> None:
    """Write ``text`` to stdout and flush it there. A stdout that cannot take it (a closed pipe,
    `| head`, a full disk) is an output that cannot be written: Unusable (exit 2) with one line,
    and stdout is pointed at the null device so that Python's own flush at exit does not print a
    traceback. ``failing``: already reporting an error; a second one is dropped."""
    if sys.stdout is None:  # started with stdout closed (>&-)
        if not failing:
            raise Unusable("tle-dump: error: cannot write to standard output: it is closed")
        return
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except UnicodeEncodeError as e:  # PYTHONIOENCODING=ascii and a non-ASCII path or name
        if not failing:
            raise Unusable(f"tle-dump: error: cannot write to standard output: its encoding "
                            f"({e.encoding}) cannot write {e.object[e.start:e.end]!r}; set "
                            f"PYTHONIOENCODING=utf-8, or write the report with -o") from None
    except OSError as e:
        try:
            fd = os.open(os.devnull, os.O_WRONLY)
            os.dup2(fd, sys.stdout.fileno())
            os.close(fd)
        except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
            pass  # a stdout without a file descriptor (a test's capture)
        if not failing:
            raise Unusable(f"tle-dump: error: cannot write to standard output: "
                            f"{e.strerror or e}") from None


def _internal_error(args, fmt: str, err: BaseException) -> int:
    """A bug in tle-dump (an exception no check expected): one line naming it and where it was
    raised, never a traceback, and no claim: exit 3, not proved (nothing was verified to the
    end; 0 would claim a proof, 1 a fault and 2 a bad input that none of them established)."""
    import traceback

    frames = traceback.extract_tb(err.__traceback__)
    where = f" at {Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
    text = " ".join(str(err).split())[:300]
    message = (f"tle-dump: error: internal error ({type(err).__name__}{where}: {text}); "
               f"nothing is claimed for {args.path}: please report it with this input")
    print(message, file=sys.stderr)
    if fmt == "json" and _reporting(args):
        _error_json(args, args.path, message, EXIT_NOT_PROVED)
    else:
        _error_text(args, fmt, message)
    return EXIT_NOT_PROVED


def _verify(k: Program, args, fixed: dict[str, int], specialised: dict[str, int]) -> KernelReport:
    """Run the pipeline on one kernel with its own --param values."""
    try:
        ctx = run_pipeline(k, args.passes, bound=args.bound, params=params_of(k, fixed))
    except ValueError as e:
        raise Unusable(f"tle-dump: error: {e}") from None
    except TleError as e:  # a trace longer than the verifier expands: neither proved nor rejected
        inference = ",".join(p for p in ("infer-stages", "infer-barriers") if p in args.passes)
        try:  # the structural inference does not expand traces: keep the barriers in the report
            ctx = run_pipeline(k, inference) if inference else PassContext(k)
        except TleError:
            ctx = PassContext(k)
        return KernelReport(k, ctx, specialised=specialised, stopped=e)
    return KernelReport(k, ctx, specialised=specialised)


#: Characters that break a line (str.splitlines) or are control characters: a path holding one
#: would put lines of its own choosing (``# verdict: verified``) into the report and stderr.
_LINE_BREAKING = re.compile("[\x00-\x1f\x7f\x85\u2028\u2029]")


def _refuse_line_breaking(what: str, path: str) -> None:
    m = _LINE_BREAKING.search(path)
    if m:
        raise Unusable(f"tle-dump: error: {what} {path!r}: holds the control character "
                        f"{m.group(0)!r}, which would break the report's lines"
                        f"{'; rename it' if what in ('PATH', '-o') else ''}")


def _run(args, fmt: str) -> int:
    t0 = time.perf_counter()
    _refuse_line_breaking("PATH", args.path)
    if args.output:
        _refuse_line_breaking("-o", args.output)
    if not args.path:  # Path("") is ".": it was refused as the current directory
        raise Unusable(f"tle-dump: error: an empty PATH ({args.path!r}); give a .py, .pipe or "
                        f".kir file")
    if args.path.endswith(("/", os.sep)) and not os.path.isdir(args.path) and os.path.exists(
            args.path.rstrip("/" + os.sep)):
        # Path() drops the trailing slash: a file was read where the shell (cat, open) refuses
        raise Unusable(f"{args.path}: error: not a directory (a trailing '/' after a file); "
                        f"give the file without the '/'")
    path = Path(args.path)
    lowering = args.gluon or args.ttgir or args.ptx
    fixed = _params(args.param)
    if args.bound is not None and args.bound < 0:
        raise Unusable(f"tle-dump: error: --bound must be 0 or more, got {args.bound}")
    if any(not k.strip() for k in args.kernel or ()):
        raise Unusable("tle-dump: error: --kernel: an empty name; give a kernel's name")
    for k in args.kernel or ():  # a kernel's name is an identifier: no line of its own on stderr
        _refuse_line_breaking("--kernel", k)
    _refuse_line_breaking("-p", args.passes)
    if args.output is not None and not args.output.strip():
        raise Unusable("tle-dump: error: -o: an empty path; give a file to write, or leave -o "
                        "out to print to stdout")
    if args.output is not None and args.output.endswith(("/", os.sep)):
        # Path() drops the trailing slash: the report would become a file named like the folder
        raise Unusable(f"{args.output}: error: cannot write: names a folder (a trailing '/'); "
                        f"give -o a file path")
    if (args.debug_waits or args.wait_bound is not None) and not lowering:
        # the lowered waits are printed by --gluon/--ttgir/--ptx only (-p emit-gluon lowers plain
        # waits): without one of them the flag would change nothing
        flag = "--debug-waits" if args.debug_waits else "--wait-bound"
        raise Unusable(f"tle-dump: error: {flag} applies to the lowered kernel: add --gluon, "
                        f"--ttgir or --ptx")
    names = [n.strip() for n in args.passes.split(",") if n.strip()]
    if args.print_ir or any(n not in PASSES for n in names):
        # a kernel IR pipeline (a lowering pass, or the IR printed): checked against the registry
        # with the lowering's passes; a protocol-only run imports neither, so plain verification
        # starts as fast as it did (--gluon/--ttgir/--ptx load the lowering when they run it)
        from ..lowering import kir_passes  # noqa: F401  (registers the lowering's passes)
        from ..passes.manager import parse_passes

        try:
            names = [p.name for p in parse_passes(args.passes)]
        except ValueError as e:
            raise Unusable(f"tle-dump: error: {e}") from None
        return _run_print_ir(args, fmt, path, fixed, names, lowering)
    if lowering and fmt != "text":
        # -o r.json / g.svg asks for a report or a picture: the lowered kernel is neither
        given = (f"--format {args.format}" if args.format else
                 f"-o {args.output} (a {'JSON report' if fmt == 'json' else 'Graphviz picture'})")
        raise Unusable(f"tle-dump: error: --gluon/--ttgir/--ptx print the lowered kernel as "
                        f"text; {given} does not apply")
    if lowering and args.graph:
        raise Unusable("tle-dump: error: --gluon/--ttgir/--ptx print the lowered kernel; "
                        "--graph (the report's dataflow graph) does not apply")
    if args.output:
        _check_output(Path(args.output), path)
        if fmt == "dot" and not lowering and Path(args.output).suffix.lower() in IMAGE_SUFFIXES:
            from .dot import GraphvizError, check_renderer

            try:  # before verifying: a deadlock's diagnostics and then this error would be two
                check_renderer(Path(args.output))
            except GraphvizError as e:
                raise Unusable(f"tle-dump: error: {e}") from None
    if lowering and path.suffix != ".py":
        read_input(path)  # a missing file or a directory says so first
        hint = " (a .kir file's Gluon: -p emit-gluon)" if path.suffix == ".kir" else ""
        raise Unusable(f"{path}: error: --gluon/--ttgir/--ptx need a .py kernel file{hint}")
    if lowering:
        args.debug_bound = _debug_bound(args)

    try:
        loaded = load(path, fixed, args.kernel)
    except TleError as e:  # the frontend cannot read a kernel: rejected, with no kernel report
        return _unreadable(args, fmt, path, e)
    kernels = [k for k in loaded.module.kernels if not args.kernel or k.name in args.kernel]
    missing = [n for n in dict.fromkeys(args.kernel or ()) if n not in {k.name for k in kernels}]
    if kernels and missing:
        # a kernel asked for by name and not there must not pass as verified with the others
        raise Unusable(f"{path}: error: no kernel named {_names_shown(missing)} (kernels: "
                        f"{', '.join(k.name for k in loaded.module.kernels)})")
    if not kernels:
        what = (f"no kernel named {_names_shown(dict.fromkeys(args.kernel))}"
                + (f" (kernels: {', '.join(k.name for k in loaded.module.kernels)})"
                   if loaded.module.kernels else "") if args.kernel else
                "no kernel (a .pipe file starts with 'kernel NAME')" if path.suffix == ".pipe" else
                "no kernel (a .kir file starts with 'kernel NAME(PARAMS)', docs/kir.md)"
                if path.suffix == ".kir" else
                "no @tle.jit kernel that calls tle.gpu.warp_specialize")
        raise Unusable(f"{path}: error: {what}")
    _check_params(fixed, kernels, loaded)
    # the memory-race proofs, in a child process while this one verifies and translates
    beside = RacesBeside([(k, loaded.specialised_of(k.name)) for k in kernels], loaded) \
        if _BESIDE and not lowering else None
    spent = {}  # each kernel's own seconds (its verification and checks), for its summary line
    try:
        reports = []
        for k in kernels:
            t = time.perf_counter()
            reports.append(_verify(k, args, fixed, loaded.specialised_of(k.name)))
            spent[id(reports[-1])] = time.perf_counter() - t
        for rep in reports:
            t = time.perf_counter()
            check_launch_signature(rep, loaded, fixed)
            check_default_shapes(rep, loaded)
            if beside is not None:
                translate_ahead(rep, path, loaded, fixed, args.bound)
            check_memory_races(rep, loaded, beside)
            check_float_constexprs(rep, loaded, fixed)
            check_signed_loads(rep)
            if not lowering:  # --gluon/--ttgir/--ptx translate it themselves (_dump_lowered)
                check_translation(rep, path, loaded, fixed, args.bound)
            spent[id(rep)] += time.perf_counter() - t
    finally:
        if beside is not None:
            beside.close()
        AHEAD.clear()

    collect = getattr(args, "collect_reports", None)
    if collect is not None:  # _default_verdict_of: each kernel's verdict, for -p --print-ir
        collect.extend(reports)
    for rep in reports:
        for d in rep.diagnostics:
            print(str(d), file=sys.stderr)
    if lowering:
        return _dump_lowered(args, path, reports, loaded, fixed)
    code = combine_exit_codes(r.exit_code for r in reports)
    if _reporting(args):
        if fmt == "json":
            text = _json_text({"tool": "tle-dump", "source": str(path), "exit_code": code,
                               "kernels": [render_json(r, args.graph) for r in reports],
                               "diagnostics": []})
        elif fmt == "dot":
            from .dot import render_dot

            text = render_dot(reports)
        else:
            text = "\n".join(render_text(r, args.graph, not args.no_locations) for r in reports)
        _emit(args, fmt, text)
    elapsed = time.perf_counter() - t0
    for r in reports:
        # one kernel: the run's time; several: each its own verification and checks, then the
        # whole file's (the file's reading and the race proofs beside are shared)
        took = f"{elapsed:.2f} s" if len(reports) == 1 else \
            f"{spent[id(r)]:.2f} s; the file {elapsed:.2f} s"
        print(f"tle-dump: {r.program.name}: {r.summary()} ({took})", file=sys.stderr)
    return code


def _run_print_ir(args, fmt: str, path: Path, fixed: dict, names: list, lowering: bool) -> int:
    """-p PIPELINE with --print-ir or a lowering pass: the kernel IR (or Gluon) after it."""
    if lowering or fmt != "text" or args.graph:
        raise Unusable("tle-dump: error: printing the kernel IR (--print-ir, or a lowering pass "
                        "in -p) prints text: --gluon/--ttgir/--ptx, --graph and --format "
                        "dot/json do not apply")
    if args.output:
        _check_output(Path(args.output), path)
    read_input(path)  # a missing file or a directory says so first
    if path.suffix not in (".py", ".kir"):  # before any verdict: unusable whatever the kernel
        raise Unusable(f"{path}: error: printing the kernel IR needs a .py or .kir file (a "
                        f".pipe file holds only the protocol)")
    # The checks tle-dump adds to the protocol passes (a memory race between partitions, the
    # signature's types and descriptors, the translation, loads of no known element type) are
    # no passes of the pipeline: where the pipeline gives a verdict, each kernel's verdict of
    # the same run without --print-ir is taken first, so that printing the IR does not turn a
    # rejected kernel into a verified one. A pipeline with emit-gluon prints the lowered kernel,
    # as --gluon does: it takes the default run's verdict, and prints nothing when that rejects
    # a kernel; any other that runs verify-protocol and then verify-deadlock (its own, or those
    # its lowering passes require) takes that of its protocol passes, as `-p` of them gives it
    # (print_ir.run_print_ir: a kernel only those checks reject is printed with their errors and
    # no IR). One that gives no verdict claims nothing.
    lowered = "emit-gluon" in names
    protocol = _protocol_passes_of(names)
    if lowered or makes_claim(protocol):
        first, first_err, beside = _default_verdict_of(
            args, path, DEFAULT_PIPELINE if lowered else ",".join(protocol))
    else:
        first, first_err, beside = 0, "", []
    if first == 1 and (lowered or not beside):
        # the Gluon printed is the lowered kernel: a rejected kernel is not lowered as verified
        # (and a file the run could not read has no kernel to print)
        sys.stderr.write(first_err)
        _error_text(args, "text", f"tle-dump: {path}: nothing printed (exit 1): the "
                    f"errors are on stderr")
        return 1
    from . import print_ir as _print_ir

    def load_lowered(p: Path, given: Optional[dict] = None,
                     only: Optional[Sequence[str]] = None) -> Loaded:
        # the read the pipeline lowers, its DEFAULT_CONFIG held to --gluon's rules
        loaded = load(p, given, only)
        if lowered:
            _check_emit_signature(p, loaded, args.kernel)
        return loaded

    def check(given: dict, programs: list, specialised: dict, constexprs: dict,
              defaults: Optional[dict] = None) -> None:
        _check_params(given, programs, Loaded(Module(tuple(programs)), dict(specialised),
                                              dict(constexprs), dict(defaults or {})))

    code, text = _print_ir.run_print_ir(args, path, fixed, names, load_lowered, Unusable, check,
                                        beside={r.program.name: r for r in beside})
    # the Gluon a pipeline ending in emit-gluon prints is its product, as --gluon's: -q keeps it
    if text and (_reporting(args) or "emit-gluon" in names):
        _emit(args, "text", text)
    elif not text:  # a kernel rejected or not lowered: no earlier run's IR stands at -o
        _error_text(args, "text", f"tle-dump: {path}: nothing printed (exit {code}): the "
                    f"errors are on stderr")
    return code


def _protocol_passes_of(names: Sequence[str]) -> list[str]:
    """The protocol passes (verify-protocol, infer-stages, infer-barriers, verify-deadlock) the
    pipeline ``names`` runs, in the order it runs them: its own, and those its passes require
    (passes/manager.run_pass runs a pass's requirements first)."""
    from ..passes.manager import kir_passes

    known, ran = kir_passes(), []

    def run(name: str) -> None:
        for req in known[name].requires:
            if req not in ran:
                run(req)
        ran.append(name)

    for n in names:
        run(n)
    return [n for n in ran if n in PASSES]


def _default_verdict_of(args, path: Path, passes: str = DEFAULT_PIPELINE
                        ) -> tuple[int, str, list[KernelReport]]:
    """The exit status of tle-dump's run of ``passes`` on ``path`` without --print-ir (the
    default run's pipeline unless given), with the same --param, --bound and --kernel, its
    report not printed, what it wrote on stderr (the errors that say why it rejects), and its
    kernels' reports (none where it could not read the file)."""
    import copy

    first = copy.copy(args)
    first.passes, first.print_ir, first.quiet, first.output = passes, False, True, None
    first.graph, first.format = False, None
    first.collect_reports = []
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = _run(first, "text")
    return code, err.getvalue(), first.collect_reports


def _unreadable(args, fmt: str, path: Path, err: TleError) -> int:
    """A frontend error stops the file's kernels from being read at all: exit 1, the diagnostic
    on stderr and, in JSON, in the top-level "diagnostics" (with no kernels)."""
    diag = err.to_diagnostic()
    print(str(diag), file=sys.stderr)
    if _reporting(args) and fmt == "json":
        _emit(args, fmt, _json_text({"tool": "tle-dump", "source": str(path),
                                     "exit_code": EXIT_REJECTED, "kernels": [],
                                     "diagnostics": [diagnostic_json(diag)]}))
    else:
        _error_text(args, fmt, str(diag))
    print(f"tle-dump: {path}: rejected: a kernel cannot be read (1 error)", file=sys.stderr)
    return EXIT_REJECTED


_BARE_NUMBER = re.compile(r"\s*[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?\s*")


def _parse_wait_bound(spec: str, what: str, bare_seconds: bool):
    """``spec`` as a debug-wait bound (lowering/debug.parse_bound), or Unusable naming ``what``
    (--wait-bound, $TLE_DEBUG_WAITS): an infinite, zero, negative or unreadable bound, or one the
    lowered wait cannot count to. ``bare_seconds``: a bare number is seconds (--wait-bound 1 is
    one second; in $TLE_DEBUG_WAITS, 1 means "on", the default bound)."""
    from ..lowering.debug import MAX_POLLS, parse_bound

    text = spec.strip()
    if text.startswith("-") and _BARE_NUMBER.match(text[1:]):  # -5s: parse_bound reads no sign
        raise Unusable(f"tle-dump: error: {what} {spec!r}: it must be positive")
    if bare_seconds and _BARE_NUMBER.fullmatch(text):
        text += "s"
    usage = "a time (2s, 500ms) or a poll count (1000000polls)"
    try:
        bound = parse_bound(text)
    except (ValueError, OverflowError) as e:
        if isinstance(e, OverflowError):  # parse_bound's "too large ...", or int() of infinity
            why = str(e) if str(e).startswith("too large") else "too large"
        elif "positive" in str(e):
            why = "it must be positive"
        else:
            why = f"expected {usage}"
        raise Unusable(f"tle-dump: error: {what} {spec!r}: {why}") from None
    if bound is None:
        return None
    if bound.value < 1:  # 0.5polls: no poll at all
        raise Unusable(f"tle-dump: error: {what} {spec!r}: it must be positive")
    # parse_bound refuses nanoseconds past what the wait counts, but caps a poll count at
    # MAX_POLLS without a word: a larger one is refused here
    number = re.match(r"[0-9.eE+]+", text)
    if bound.unit == "polls" and number and float(number.group(0)) > MAX_POLLS:
        raise Unusable(f"tle-dump: error: {what} {spec!r}: too large (at most {MAX_POLLS} polls: "
                        f"the lowered wait counts in 32 bits)")
    return bound


def _debug_bound(args):
    """--debug-waits [--wait-bound B], or $TLE_DEBUG_WAITS: the lowering's debug_waits argument
    (a lowering/debug.Bound; None: plain waits), checked here so that a bad value is one line
    naming the flag or the variable, never a traceback or a PTX the assembler refuses.
    --wait-bound implies --debug-waits and must give a bound (0 or "off" would silently turn
    the debug waits asked for off)."""
    from ..lowering.debug import ENV

    if args.wait_bound is not None:
        bound = _parse_wait_bound(args.wait_bound, "--wait-bound", bare_seconds=True)
        if bound is None:
            raise Unusable(f"tle-dump: error: --wait-bound {args.wait_bound!r}: it must be "
                            f"positive (leave --debug-waits out for plain waits)")
        return bound
    env = _parse_wait_bound(os.environ.get(ENV, ""), f"${ENV}", bare_seconds=False)
    if args.debug_waits:
        return env if env is not None else _parse_wait_bound("on", "--debug-waits", False)
    return env


def _debug_waits(args):
    """The compile_kernel argument of the debug waits (_debug_bound, checked in _run)."""
    return getattr(args, "debug_bound", None)


def _lowering_constexprs(reports: list[KernelReport], fixed: dict[str, int],
                         loaded: Loaded) -> dict[str, dict]:
    """lowering_constexprs of every kernel reported, by kernel name."""
    return {r.program.name: lowering_constexprs(loaded, r.program.name, fixed) for r in reports}


def _unlowerable_values(loaded: Loaded, constexprs: dict[str, dict], fixed: dict[str, int]) -> str:
    """The --param values that differ from the DEFAULT_CONFIG the kernel lowers with ("" when
    none): a lowering that fails with them fails for the values given (exit 2)."""
    out = {}
    for name, values in constexprs.items():
        config = loaded.defaults.get(name, {})
        out.update({n: fixed[n] for n, v in values.items()
                    if n in fixed and n in config and v != config[n]})
    return ", ".join(f"{n}={v}" for n, v in out.items())


def _one_line(message: str) -> str:
    """A message on one line: its first line and, for a compiler's report of several (Triton's
    source excerpt), its last, which says what went wrong."""
    lines = [ln.strip() for ln in message.strip().splitlines() if ln.strip()]
    return lines[0] if len(lines) < 2 else f"{lines[0]} ... {lines[-1]}"


def _check_emit_signature(path: Path, loaded: Loaded, only: Optional[Sequence[str]]) -> None:
    """-p ... emit-gluon of a .py file prints the Gluon --gluon prints: a DEFAULT_CONFIG whose
    signature leaves an argument that is no constexpr untyped, or names one (or whose
    "constexprs" names one) the kernel does not have, is unusable input there as under --gluon
    (_check_signature_names, exit 2; adversarial round 62: it printed the Gluon, exit 0). A
    kernel without a DEFAULT_CONFIG is still lowered untyped, as documented. ``loaded``: the
    read the pipeline lowers; ``only``: the kernels --kernel asks for (all without)."""
    from .config import default_config

    for program in loaded.module.kernels:
        if only and program.name not in only:
            continue
        try:
            cfg = default_config(str(path), program.name)
        except TleError:
            continue  # no DEFAULT_CONFIG (or one the default run judged): as before
        _check_signature_names(path, program.name, cfg, loaded)


def _check_signature_names(path: Path, name: str, cfg: dict, loaded: Loaded) -> None:
    """Unusable (exit 2, at DEFAULT_CONFIG's line) when the signature --gluon/--ttgir/--ptx
    compile with names an argument the kernel does not have (a misspelt one was left aside, and
    the compile then said only that the real one had no type, at the kernel's line), or leaves
    an argument that is no constexpr without a type."""
    info = loaded.infos.get(name)
    args, cx = getattr(info, "args", None), tuple(getattr(info, "constexprs", ()))
    sig = cfg.get("signature", {})
    if args is None or not isinstance(sig, dict):
        return
    from .config import _line

    where = f"{path}:{_line(str(path))}: error: DEFAULT_CONFIG's"
    values = cfg.get("constexprs", {})
    stray = [a for a in (values if isinstance(values, dict) else ()) if a not in args]
    if stray:  # a misspelt constexpr: the compile then said the real one needed a value
        raise Unusable(f"{where} \"constexprs\" names {', '.join(map(repr, stray))}, which kernel "
                        f"'{name}' has no argument of (its arguments: {', '.join(args)})")
    unknown = [a for a in sig if a not in args]
    missing = [a for a in args if a not in sig and a not in cx]
    if not unknown and not missing:
        return
    where += ' "signature"'
    what = (f"names {', '.join(map(repr, unknown))}, which kernel '{name}' has no argument of"
            if unknown else
            f"gives no type for {', '.join(map(repr, missing))}, an argument of kernel '{name}'")
    raise Unusable(f"{where} {what} (its arguments: {', '.join(args)}; constexprs may be left "
                    f"out); --gluon/--ttgir/--ptx compile with these types")


def _stderr_is_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced, or closed
        return False


def _progress(line: str) -> None:
    """A line saying what a long step is doing (a Triton compile: seconds of silence otherwise),
    on stderr when it is a terminal only: a pipe or a file, as a script or CI reads tle-dump,
    gets exactly what it got before."""
    if _stderr_is_terminal():
        print(line, file=sys.stderr, flush=True)


def _dump_lowered(args, path: Path, reports: list[KernelReport],
                  loaded: Loaded, fixed: dict[str, int]) -> int:
    """--gluon/--ttgir/--ptx: a rejected kernel is never lowered (exit 1); a kernel verified only
    for the values checked (bounded, unknown) is lowered with a warning line saying what was
    checked (exit 3), whether the verdict is this run's or the lowering's own
    (TleVerificationWarning). The constexprs the kernel was verified with (_lowering_constexprs)
    replace DEFAULT_CONFIG's; a lowering that fails with --param values other than
    DEFAULT_CONFIG's is unusable input (exit 2) naming them."""
    # a comment in the language printed: no earlier run's lowered kernel stands at -o
    lead = "#" if args.gluon else "//"
    if any(r.verdict is not None and r.verdict.kind == REJECTED for r in reports):
        for r in reports:
            print(f"tle-dump: {r.program.name}: {r.summary()}", file=sys.stderr)
        _error_text(args, "text", f"tle-dump: {path}: not lowered: a kernel is rejected (the "
                    f"errors are on stderr)", lead)
        return EXIT_REJECTED
    from ..lowering.dumping import lowered_texts
    from .config import default_config
    from ..lowering.walks import unproved_message

    for r in reports:
        try:
            cfg = default_config(str(path), r.program.name)
        except TleError as e:
            raise Unusable(str(e)) from None
        _check_signature_names(path, r.program.name, cfg, loaded)
    constexprs = _lowering_constexprs(reports, fixed, loaded)
    codes = [EXIT_OK]
    warned = set()
    for r in reports:
        v = r.verdict
        if v is not None and v.kind != PROVED:
            # the lowering's own wording (lowering/walks.py), as -p ... emit-gluon prints it
            print(f"tle-dump: warning: {unproved_message(r.program.name, v.describe())}",
                  file=sys.stderr)
            warned.add(r.program.name)
            codes.append(EXIT_NOT_PROVED)
    if (args.ttgir or args.ptx) and not args.quiet:
        names = ", ".join(r.program.name for r in reports)
        _progress(f"tle-dump: compiling {names} for sm_90a with Triton (a first compile takes "
                  f"seconds, a later one of the same kernel is cached) ...")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TleVerificationWarning)
        try:
            # a kernel read specialised (--param) is lowered with the values it was verified for
            text = lowered_texts(str(path), [r.program.name for r in reports],
                                 {"gluon": args.gluon, "ttgir": args.ttgir, "ptx": args.ptx},
                                 debug_waits=_debug_waits(args), constexprs=constexprs)
        except (TleError, ValueError) as e:
            given = _unlowerable_values(loaded, constexprs, fixed)
            if given:  # DEFAULT_CONFIG's values lower (tests/test_lowering*.py): these do not
                raise Unusable(f"tle-dump: error: --param {given}: the kernel cannot be lowered "
                                f"with {'this value' if ',' not in given else 'these values'}: "
                                f"{_one_line(e.message if isinstance(e, TleError) else str(e))}"
                                f"{at_line(e)}") from None
            print(str(e), file=sys.stderr)
            _error_text(args, "text", str(e), lead)
            return EXIT_REJECTED
    for w in caught:
        if not issubclass(w.category, TleVerificationWarning):
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
            continue
        name = getattr(w.message, "kernel", "")
        if name not in warned:  # the lowering's own verdict (e.g. the DEFAULT_CONFIG read)
            print(f"tle-dump: warning: {w.message}", file=sys.stderr)
            warned.add(name)
            codes.append(EXIT_NOT_PROVED)
    _emit(args, "text", text or "")
    return combine_exit_codes(codes)


if __name__ == "__main__":
    sys.exit(main())
