"""tle-dump: show and verify the pipe protocol of a kernel.

    tle-dump [--graph] [--format text|dot|json] [-o FILE] [-p PIPELINE] PATH [PATH ...]
    tle-dump -p PIPELINE --print-ir PATH    the kernel IR after the passes (cli/print_ir.py)
    tle-dump --gluon|--ttgir|--ptx PATH     the lowered kernel (sm_90a, the file's DEFAULT_CONFIG)
             [--debug-waits [--wait-bound 500ms]]   ... with bounded mbarrier waits that trap

PATH is a Python file with ``@tle.jit`` kernels or a ``.pipe`` file. Every kernel gets a verdict
(tle_compiler/passes/verdict.py); a kernel of a .py or .kir file the passes find no fault in is
translated to Gluon as --gluon translates it (no Triton compile: _check_translation), and one the
lowering refuses is rejected at its line. The exit status is one a CI gate can use: 0 proved for
every value of the params, 1 rejected (diagnostics on stderr as ``PATH:LINE: error: ...``), 2
unusable input (no file, a directory, a syntax error, a bad flag, an output that cannot be
written), 3 not proved (verified only for the values checked, or a verification budget ran out).
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
import math
import os
import re
import stat
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional, Sequence

from ..diagnostics import TleError, TleVerificationWarning
from ..ir.nodes import Module, Program
from ..passes import DEFAULT_PIPELINE, PASSES, PassContext, run_pipeline
from ..passes.verdict import BOUNDED, PROVED, REJECTED
from .report import (KernelReport, Qualification, diagnostic_json, makes_claim, render_json,
                     render_text)
from .constexprs import lowering_constexprs, translation_types

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


class _Unusable(Exception):
    """Unusable input (exit 2); the message is the one line printed."""


class _BadFlag(_Unusable):
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


@dataclass
class Loaded:
    module: Module
    #: Integer constexprs the file was read specialised to (they are no longer params).
    specialised: dict[str, int] = field(default_factory=dict)
    #: Each kernel's constexpr arguments by kernel name (none for a .pipe file): the names a
    #: --param may read the kernel specialised to.
    constexprs: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: Each kernel's DEFAULT_CONFIG constexpr values by kernel name (none without one).
    defaults: dict[str, dict] = field(default_factory=dict)
    #: Each kernel's frontend reading (KernelInfo) and DEFAULT_CONFIG signature by kernel name
    #: (a .py file's; none without a signature): the argument types the compile will check.
    infos: dict[str, object] = field(default_factory=dict)
    signatures: dict[str, dict] = field(default_factory=dict)
    #: Each kernel's kernel IR by kernel name, for a .kir file (what the lowering translates).
    kirs: dict[str, object] = field(default_factory=dict)
    #: The constexprs each kernel was read specialised to, by kernel name, where a DEFAULT_CONFIG
    #: keyed by kernel name gave each its own (``specialised`` then holds the values they agree on).
    per_kernel: dict[str, dict] = field(default_factory=dict)

    def specialised_of(self, kernel: str) -> dict[str, int]:
        """The constexprs this kernel was read specialised to: in a file of several kernels, only
        its own, so that its verdict names no value it does not take."""
        # a .pipe kernel's `constexpr NAME = V` lines (the report of a kernel read specialised)
        own = next((dict(k.constexprs) for k in self.module.kernels if k.name == kernel), {})
        if kernel in self.per_kernel:
            return {**own, **self.per_kernel[kernel]}
        names = self.constexprs.get(kernel)
        if names is None:
            return {**own, **self.specialised}
        return {**own, **{n: v for n, v in self.specialised.items() if n in names}}


def combine_exit_codes(codes: Iterable[int]) -> int:
    """The exit status of several kernels: 2 beats 1 beats 3 beats 0."""
    codes = set(codes)
    return next((c for c in EXIT_PRIORITY if c in codes), EXIT_OK)


#: The inputs tle-dump reads, by suffix: Python kernels, Pipe IR text, kernel IR text.
INPUT_SUFFIXES = (".py", ".pipe", ".kir")


def _read_input(path: Path) -> str:
    """The text of PATH, or _Unusable with one line saying why there is none: standard input
    ("-"), a missing file, a symlink loop, a directory, a FIFO or device (reading one would block
    or never end), a suffix other than .py/.pipe/.kir, bytes that are not UTF-8 text."""
    if str(path) == "-":
        raise _Unusable("-: error: tle-dump does not read standard input; give the path of a "
                        ".py, .pipe or .kir file")
    try:
        st = path.stat()
    except FileNotFoundError:
        what = "a symlink to a missing file" if path.is_symlink() else "no such file"
        raise _Unusable(f"{path}: error: {what}") from None
    except OSError as e:  # a symlink loop (ELOOP), a name too long, a folder we may not enter
        raise _Unusable(f"{path}: error: cannot read: {e.strerror or e}") from None
    if stat.S_ISDIR(st.st_mode):
        raise _Unusable(f"{path}: error: is a directory; give a .py, .pipe or .kir file")
    if not stat.S_ISREG(st.st_mode):
        raise _Unusable(f"{path}: error: not a regular file (a FIFO, socket or device); give a "
                        f".py, .pipe or .kir file")
    if path.suffix not in INPUT_SUFFIXES:
        raise _Unusable(f"{path}: error: unknown kind of file "
                        f"({repr(path.suffix) if path.suffix else 'no suffix'}); give a .py, "
                        f".pipe or .kir file")
    try:
        data = path.read_bytes()
    except OSError as e:
        raise _Unusable(f"{path}: error: cannot read: {e.strerror or e}") from None
    try:
        # a .py file is decoded as Python decodes it, as the frontend's readers do
        # (frontend/source_text.py: a byte-order mark skipped, a coding declaration followed);
        # .pipe / .kir text is UTF-8 and refuses a byte-order mark
        if path.suffix == ".py":
            from ..frontend.source_text import decode_python

            text = decode_python(data)
        else:
            text = data.decode("utf-8")
    except SyntaxError as e:  # a coding declaration Python refuses: it does not import the file
        raise _Unusable(f"{path}:{e.lineno or 1}: error: Python syntax error: {e.msg}") from None
    except UnicodeDecodeError as e:
        raise _Unusable(f"{path}: error: not {e.encoding.replace('-sig', '').upper()} text "
                        f"(byte {e.start}); give a .py, .pipe or .kir file") from None
    if "\0" in text:
        raise _Unusable(f"{path}: error: contains NUL bytes; give a .py, .pipe or .kir file")
    return text


def _load_kir(path: Path, fixed: dict) -> Loaded:
    """The kernels of a .kir file (the kernel IR's text form, ir/kernel_text.py) as their
    protocol views (passes/kir_module.py), verified like a .py file's kernels: read generically,
    or specialised to the ``--param`` values naming its constexprs, or, when its indices are
    affine only with them as numbers, to those and the DEFAULT_CONFIG constexprs it carries (a
    note on stderr says so, as for a .py file)."""
    from ..ir.kernel_text import parse_kernel_file
    from .config import kernel_config
    from .print_ir import kir_protocol_view

    try:
        kernels = parse_kernel_file(str(path))
    except TleError as e:  # not the text form: unusable input, as a .pipe syntax error
        raise _Unusable(str(e)) from None
    programs, specialised, names, defaults, signatures = [], {}, {}, {}, {}
    for k in kernels:
        names[k.name] = tuple(p.name for p in k.params if p.constexpr)
        try:
            whole = kernel_config(k, str(path), k.name)
            _check_config_constexprs(path, k.name, whole, k.params)
            config = dict(whole.get("constexprs", {}))
            if isinstance(whole.get("signature"), dict):
                signatures[k.name] = dict(whole["signature"])
        except TleError as e:
            _refuse_contradicting_config(e)
            config = {}
        defaults[k.name] = config
        _refuse_int_as_bool(fixed, config, k.name)
        given = {n: v for n, v in _int_constexprs(fixed).items() if n in names[k.name]}
        program, bound = kir_protocol_view(path, k, {**config, **fixed}, given)
        specialised.update(bound)
        # a text some of whose constexprs its partitions bind to numbers is the print of a
        # kernel read specialised (to its DEFAULT_CONFIG's constexprs, as a .py file's reading
        # of such a kernel is): its claim names them as the .py kernel's does
        in_text = _bound_in_text(k)
        if in_text:
            in_text = {**{n: v for n, v in _int_constexprs(config).items()
                          if n in names[k.name]}, **in_text}
        specialised.update({n: v for n, v in in_text.items() if n not in bound and n not in fixed})
        programs.append(program)
    loaded = Loaded(Module(tuple(programs), str(path)), specialised, names, defaults,
                    signatures=signatures, kirs={k.name: k for k in kernels})
    _check_constexpr_values(loaded, {n: v for n, v in fixed.items() if n in specialised})
    return loaded


def _check_config_constexprs(path: Path, name: str, cfg: dict, params) -> None:
    """_Unusable (exit 2, at DEFAULT_CONFIG's line, whatever tle-dump was asked to print) when
    the signature of kernel ``name``'s DEFAULT_CONFIG ``cfg`` types an argument "constexpr" that
    the kernel (its ``params``) takes at run time, or types a constexpr argument "constexpr"
    while the config's "constexprs" gives it no value: the kernel that was verified (a run-time
    value there; a constexpr a launch gives) is not the one --gluon/--ttgir/--ptx compile with
    these types (the value baked in, or None: "cannot convert None")."""
    sig, values = cfg.get("signature", {}), cfg.get("constexprs", {})
    if not isinstance(sig, dict) or not params:
        return
    values = values if isinstance(values, dict) else {}
    kinds = {p.name: p.constexpr for p in params}
    from .config import _line

    where = f"{path}:{_line(str(path))}: error: DEFAULT_CONFIG's \"signature\" types"
    for arg, t in sig.items():
        if t != "constexpr" or arg not in kinds:
            continue  # an argument the kernel lacks: _check_signature_names says so
        if not kinds[arg]:
            raise _Unusable(f"{where} {arg!r} as \"constexpr\", but kernel '{name}' takes it at "
                            f"run time (no tl.constexpr annotation), as it was verified: type it "
                            f"as the value it is (\"i32\", \"*fp32\"), or annotate it "
                            f"tl.constexpr")
        if arg not in values:
            raise _Unusable(f"{where} {arg!r} as \"constexpr\", but its \"constexprs\" gives "
                            f"{arg} no value, which the compile needs (it would compile {arg} as "
                            f"None): give {arg} a value there, or leave it out of the signature "
                            f"(a launch gives it)")


def _bound_in_text(k) -> dict[str, int]:
    """The integer constexpr params of ``k`` that its partitions bind to one number (``SKIP = 1``
    in each partition's bindings): the text of a kernel read specialised (``--print-ir`` of a .py
    kernel read specialised to SKIP = 1 prints it so), whose verdict then names them as the .py
    kernel's does ("with SKIP = 1 (read specialised)"); a claim for those values only."""
    from ..ir.kernel import Const

    out: dict[str, int] = {}
    for p in k.params:
        if not p.constexpr:
            continue
        values = {e.value if isinstance(e, Const) else None
                  for part in k.partitions for n, e in part.bindings if n == p.name}
        if len(values) == 1:
            (v,) = values
            if isinstance(v, int) and not isinstance(v, bool):
                out[p.name] = v
    return out


def _names_shown(names: Iterable[str]) -> str:
    """``names`` for a message: a name that is no identifier quoted (``--kernel 'k '``: a
    trailing blank was invisible in "no kernel named k  (kernels: k)")."""
    return ", ".join(n if n.isidentifier() else repr(n) for n in names)


def _int_constexprs(values: dict) -> dict:
    """The integer values of ``values``: the constexprs a reading binds (bools stay free)."""
    return {k: v for k, v in values.items() if isinstance(v, int) and not isinstance(v, bool)}


def _chosen_by_bools(err: TleError, config: dict, fixed: dict) -> dict:
    """The boolean constexprs of DEFAULT_CONFIG (``config``, a kernel's "constexprs") that the
    reading needs bound (``err``: the generic reading's CapacityOfConstexprs naming them, a
    pipe handle chosen by `wa if C else wb`), as the integers Triton reads them as, where no
    --param gives them: as `--param C=True` and a launch with C=True read them (adversarial
    round 66: DEFAULT_CONFIG's `"C": True` alone was refused, "no integer")."""
    names = getattr(err, "names", ()) if getattr(err, "choice", False) else ()
    return {n: int(config[n]) for n in names
            if isinstance(config.get(n), bool) and n not in fixed}


def _specialised(path: Path, text: str, fixed: dict, err: TleError,
                 only: Optional[Sequence[str]] = None) -> Loaded:
    """A kernel whose indices are affine only with its integer constexprs as numbers, read
    specialised to ``--param`` values and the file's DEFAULT_CONFIG constexprs (``err`` when there
    are none); the constexprs it binds are no longer params."""
    from .config import default_config

    keyed = _keyed_configs(path, text)
    if keyed is not None:
        return _specialised_per_kernel(path, text, fixed, err, keyed, only)
    try:
        bind = dict(default_config(str(path), "").get("constexprs", {}))
    except TleError as e:  # no DEFAULT_CONFIG: --param values only
        _refuse_contradicting_config(e)
        # the kernel's build with the config's values failed (`"STAGES": 0`: a capacity and a
        # slot buffer of 0), or there is no build without values the config lacks (a second
        # pipe capacity's constexpr): its values, read from the literal, so that the reading
        # below names that fault rather than asking for values the config gives
        literal = _literal_config(text) if e.check != "lowering" else None
        values = literal.get("constexprs") if isinstance(literal, dict) else None
        bind = dict(values) if isinstance(values, dict) else {}
    _refuse_int_as_bool(fixed, bind)
    chosen = _chosen_by_bools(err, bind, fixed)
    default_bind = {**_int_constexprs(bind), **chosen}
    bind = {**_int_constexprs({**bind, **fixed}), **chosen}
    if not bind:
        raise err
    infos = _read_bound(text, path, None, bind, default_bind, fixed, "the kernel")
    bound = sorted({n for i in infos for n in i.constexprs if n in bind})
    loaded = _loaded(path, infos, {k: bind[k] for k in bound})
    _check_constexpr_values(loaded, {n: v for n, v in fixed.items() if n in bound})
    # the line names what the kernels shown were read with: `--kernel k2` of a file whose other
    # kernel is what reads only specialised shows k2 as it is, so no line for the file
    asked = [i for i in infos if i.name in only] if only else infos
    shown = sorted({n for i in (asked or infos) for n in i.constexprs if n in bind})
    if shown:
        print(f"tle-dump: {path}: read specialised to "
              f"{', '.join(f'{k}={bind[k]}' for k in shown)} "
              f"({err.message.split(':')[0]} otherwise); the verdict holds for these values only",
              file=sys.stderr)
    return loaded


def _literal_config(text: str, tree=None) -> object:
    """The file's DEFAULT_CONFIG literal (the last binding, as Python runs the module); None
    without one or for one that is no literal."""
    import ast

    if tree is None:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
    cfg = None
    for stmt in tree.body:  # the last binding counts, as Python runs the module
        target = (stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                  else stmt.target if isinstance(stmt, ast.AnnAssign) else None)
        if isinstance(target, ast.Name) and target.id == "DEFAULT_CONFIG" and stmt.value:
            try:
                cfg = ast.literal_eval(stmt.value)
            except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
                cfg = None
    return cfg


def _read_bound(text: str, path: Path, name: Optional[str], bind: dict, defaults: dict,
                fixed: dict, what: str) -> list:
    """The kernels of ``text`` (or kernel ``name``) read specialised to ``bind``. Where that
    reading fails but the one with DEFAULT_CONFIG's values (``defaults``) does not, it is the
    --param values given that the kernel cannot take: _Unusable naming them and ``what``."""
    from ..frontend.ast_reader import kernels_of_source

    try:
        return kernels_of_source(text, str(path), name=name, bind=bind or None)
    except TleError as e:
        given = {k: v for k, v in fixed.items() if k in bind and defaults.get(k) != v}
        if not given:
            raise
        try:  # readable with DEFAULT_CONFIG's values: it is the values given it cannot take
            kernels_of_source(text, str(path), name=name, bind=defaults or None)
        except TleError:
            raise e from None
        shown = ", ".join(f"{n}={v}" for n, v in given.items())
        raise _Unusable(f"tle-dump: error: --param {shown}: {what} cannot be read with "
                        f"{'this value' if len(given) == 1 else 'these values'}: "
                        f"{e.message.splitlines()[0]}{_at_line(e)}") from None


def _keyed_configs(path: Path, text: str) -> Optional[dict]:
    """A DEFAULT_CONFIG keyed by kernel name (a literal dict of dicts, no "signature" of its
    own), read from the file's text; None for any other (one config for every kernel, none, or
    one that is no literal: the readings say what is wrong with it)."""
    import ast

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    cfg = _literal_config(text, tree)
    # a key must name a function of the file, as the frontend picks a kernel's entry
    # (config_literal.kernel_entry): `{"constexprs": {"STAGES": 2}}` is one config for every
    # kernel, not the entry of a kernel named "constexprs" (read so, no kernel had a value)
    functions = {st.name for st in tree.body if isinstance(st, ast.FunctionDef)}
    if isinstance(cfg, dict) and cfg and "signature" not in cfg \
            and all(isinstance(k, str) and isinstance(v, dict) for k, v in cfg.items()) \
            and any(k in functions for k in cfg):
        return cfg
    return None


def _specialised_per_kernel(path: Path, text: str, fixed: dict, err: TleError,
                            keyed: dict, only: Optional[Sequence[str]] = None) -> Loaded:
    """_specialised for a file whose DEFAULT_CONFIG gives each kernel its own constexprs: each
    kernel read alone, specialised to its own entry's values and the --param values (a kernel
    that needs none read as it is), so that one kernel's capacity or `if` on a constexpr leaves
    the file's other kernels readable; one constexpr may take two values in two kernels, each
    kernel's verdict naming its own (``Loaded.per_kernel``). ``only`` (--kernel), when every
    name in it is a kernel of the file: the other kernels are not read (one that cannot be read
    with its own entry must not refuse the kernels asked for)."""
    import ast

    from ..frontend.kernel import kernel_def_lines
    from ..frontend.scope import ModuleScope

    tree = ast.parse(text)
    names = list(kernel_def_lines(ModuleScope(tree, str(path)), tree))  # in the file's order
    infos, per_kernel = [], {}
    asked = set(only) if only and set(only) <= set(names) else None
    for name in names:
        if asked is not None and name not in asked:
            continue
        entry = keyed.get(name, {})
        own = entry.get("constexprs", {}) if isinstance(entry.get("constexprs"), dict) else {}
        _refuse_int_as_bool(fixed, own, name)
        chosen = _chosen_by_bools(err, own, fixed)
        bind = {**_int_constexprs({**own, **fixed}), **chosen}
        read = _read_bound(text, path, name, bind, {**_int_constexprs(own), **chosen}, fixed,
                           f"kernel {name}")
        for info in read:
            per_kernel[info.name] = {n: bind[n] for n in info.constexprs if n in bind}
        infos.extend(read)
    if not any(per_kernel.values()):
        if asked is None:
            raise err
        # the kernels asked for read as they are, no constexpr bound (another kernel of the
        # file is what reads only specialised)
        return _loaded(path, infos, {})
    values: dict[str, set] = {}
    for kb in per_kernel.values():
        for n, v in kb.items():
            values.setdefault(n, set()).add(v)
    agreed = {n: next(iter(vs)) for n, vs in sorted(values.items()) if len(vs) == 1}
    loaded = _loaded(path, infos, agreed)
    loaded.per_kernel = per_kernel
    _check_constexpr_values(loaded, {n: v for n, v in fixed.items() if n in values})
    shown = ", ".join(f"{n}={v}" for n, v in agreed.items())
    split = [f"{k}: " + ", ".join(f"{n}={v}" for n, v in kb.items() if n not in agreed)
             for k, kb in per_kernel.items() if any(n not in agreed for n in kb)]
    print(f"tle-dump: {path}: read specialised to {'; '.join(filter(None, [shown, *split]))} "
          f"({err.message.split(':')[0]} otherwise); the verdict holds for these values only",
          file=sys.stderr)
    return loaded


def _config_of(path: Path, info) -> dict:
    """The DEFAULT_CONFIG the frontend recorded on the kernel's IR, or {} without one."""
    from .config import kernel_config

    try:
        return kernel_config(info.kir, str(path), info.name)
    except TleError as e:
        _refuse_contradicting_config(e)
        return {}


def _refuse_contradicting_config(err: TleError) -> None:
    """A DEFAULT_CONFIG that contradicts its kernel (a num_warps other than @tle.jit's:
    lowering/dumping.py) is unusable input, whatever tle-dump was asked to print: the file
    describes two kernels. Any other config error leaves the kernel without a config here."""
    from ..lowering.dumping import CONFIG_CHECK
    from .config import TYPE_CHECK

    if err.check in (CONFIG_CHECK, TYPE_CHECK):  # TYPE_CHECK: an argument type Triton cannot read
        raise _Unusable(str(err)) from None


def _loaded(path: Path, infos, specialised: dict[str, int]) -> Loaded:
    """The kernels read, with each one's constexprs: its ``tl.constexpr`` arguments and those
    its DEFAULT_CONFIG's signature calls "constexpr", and the values DEFAULT_CONFIG gives them."""
    configs = {i.name: _config_of(path, i) for i in infos}
    for i in infos:
        _check_config_constexprs(path, i.name, configs[i.name], getattr(i.kir, "params", ()))
    # a signature's "constexpr" counts for an argument of the kernel only: one DEFAULT_CONFIG
    # for a file of several kernels types one kernel's constexpr, which another may not take
    names = {i.name: tuple(dict.fromkeys((*i.constexprs, *(
        n for n, t in configs[i.name].get("signature", {}).items()
        if t == "constexpr" and n in i.args))))
        for i in infos}
    return Loaded(Module(tuple(i.program for i in infos), str(path)), specialised, names,
                  {n: dict(c.get("constexprs", {})) for n, c in configs.items()},
                  {i.name: i for i in infos},
                  {n: dict(c["signature"]) for n, c in configs.items()
                   if isinstance(c.get("signature"), dict)})


def _check_signature(rep: KernelReport, loaded: Loaded, fixed: dict[str, int]) -> None:
    """A kernel the passes found no fault in, checked against its DEFAULT_CONFIG signature as
    the compile checks it (lowering/signature_checks.py, lowering/loaded_params.py): an
    integer argument typed narrow or unsigned, a protocol param typed i64 or i1, or a value its
    events depend on read through a pointer that is not i32 (or computed as a float, an unsigned
    or a narrow integer), is computed on the GPU in an arithmetic the verifier did not check;
    and a tensor descriptor whose box, element type or offsets are not those of the slot its TMA
    copies fill (lowering/descriptors.complete_signature, with the constexprs the kernel would be
    lowered with) would land other bytes than the commit's expect-tx counts. The kernel is
    rejected at that line, as the compile would refuse it, rather than verified."""
    name = rep.program.name
    info, sig = loaded.infos.get(name), loaded.signatures.get(name)
    if info is None and loaded.kirs.get(name) is not None:
        info = _kir_facts(loaded, name, rep.program)
    if info is None or any(d.severity == "error" for d in rep.diagnostics):
        return
    from ..diagnostics import Diagnostic
    from ..lowering.descriptors import complete_signature
    from ..lowering.loaded_params import check_loaded_params
    from ..lowering.signature_checks import check_signature
    from .constexprs import lowering_constexprs, over_config

    if not sig:
        # no signature: arguments and loads are read as i32 (the verdict's caveat), but a value
        # the kernel itself computes as another type whatever the launch's types (`M =
        # tl.full([], 0, tl.uint32) + N`, `N * 1.0`) is refused as a compile would refuse it
        try:
            check_loaded_params(info, {}, untyped=True)
        except TleError as e:
            rep.early.append(Diagnostic(loc=e.loc, message=e.message, check=e.check))
        return

    try:
        check_signature(info, sig)
    except TleError as e:
        rep.early.append(Diagnostic(loc=e.loc, message=e.message, check=e.check))
        return
    config, given = loaded.defaults.get(name, {}), lowering_constexprs(loaded, name, fixed)
    if any(n in config and config[n] != v for n, v in given.items()):
        return  # another configuration than DEFAULT_CONFIG's: its descriptors are a launch's
    try:
        complete_signature(info, sig, over_config(config, given))
    except TleError as e:
        if e.check == "signature":  # a shape left to a launch's constexprs is the lowering's
            rep.early.append(Diagnostic(loc=e.loc, message=e.message, check=e.check))


def _kir_facts(loaded: Loaded, name: str, program: Program):
    """What a .kir file's kernel ``name`` carries of a .py kernel's KernelInfo for the signature
    checks (lowering/walks.kernel_facts, and the kernel arguments its protocol params are read
    from, ``param_args``, derived as the frontend derives them for the view verified), so that
    its DEFAULT_CONFIG signature is checked as a .py kernel's is (a protocol param typed u32,
    i64, i1 or fp32); None where the view cannot be derived again (the verdict says why)."""
    from ..frontend.protocol import analyse
    from ..lowering.walks import kernel_facts

    kir = loaded.kirs[name]
    try:
        param_args = analyse(kir, bind=dict(loaded.specialised_of(name)),
                             read_files=False).param_args
    except TleError:
        return None
    facts = kernel_facts(kir, program)
    facts.param_args = dict(param_args)
    return facts


def _check_default_shapes(rep: KernelReport, loaded: Loaded) -> None:
    """A kernel the passes found no fault in (of a .py or a .kir file), read generically, checked
    at its DEFAULT_CONFIG's integer constexprs as a specialised read is
    (frontend/shared_memory.check_bound_shapes): a field `[2, C]` with C = 3 there, or a C that
    makes the rings outgrow shared memory, is rejected at the declaration, as the launch of that
    configuration would fail (Gluon refuses the allocation), rather than verified. Constexprs
    the read was specialised to were checked when it was made."""
    name = rep.program.name
    info, config = loaded.infos.get(name), loaded.defaults.get(name)
    kir = getattr(info, "kir", None) or loaded.kirs.get(name)  # a .py kernel's, or a .kir's
    if kir is None or not config or any(d.severity == "error" for d in rep.diagnostics):
        return
    done = loaded.specialised_of(name)
    bind = {n: v for n, v in _int_constexprs(config).items() if n not in done}
    if not bind:
        return
    from ..diagnostics import Diagnostic
    from ..frontend.shared_memory import check_bound_shapes

    try:
        check_bound_shapes(kir, bind)
    except TleError as e:
        rep.early.append(Diagnostic(loc=e.loc, message=f"{e.message} (DEFAULT_CONFIG: "
                                    f"{', '.join(f'{n} = {v}' for n, v in sorted(bind.items()))})",
                                    check=e.check))


def _reject(rep: KernelReport, e: TleError, check: Optional[str] = None) -> None:
    """Rejects the kernel of ``rep`` at the refusal ``e``: its words at its place (the kernel's
    where it has none), under ``check`` (``e``'s own by default)."""
    from ..diagnostics import Diagnostic

    rep.early.append(Diagnostic(loc=e.loc or rep.program.loc, message=e.message,
                                check=check or e.check))


def _check_memory_races(rep: KernelReport, loaded: Loaded, beside=None) -> None:
    """A kernel the passes found no fault in, checked for global memory that two partitions
    access, one writing, with no pipe hand-off proved to order them
    (frontend/global_races.check_global_races): rejected with a witness (the iterations and
    the address) rather than verified, or, where z3 cannot decide a pair, not proved (verdict
    unknown, exit 3). After the passes, so that a protocol fault is reported as such, and so
    that the ordering the check reads from commits and waits holds. A .kir file's kernels are
    checked as a .py file's are; a .pipe protocol has no memory accesses. The integer
    constexprs the kernel was read specialised to are numbers in the addresses; where the check
    refuses the kernel for some value of another (a row pitch `row * D`), it is checked again
    with DEFAULT_CONFIG's values, and verified, if so, for those values only. ``beside``: the
    outcomes a child process computed meanwhile (_RacesBeside), taken where they were computed
    from the same inputs."""
    if rep.stopped is not None or any(d.severity == "error" for d in rep.diagnostics):
        return
    inputs = _race_inputs(rep.program, rep.specialised, loaded)
    if inputs is None:
        return
    outcome = beside.outcome(rep.program.name, inputs) if beside is not None else None
    if outcome is None:
        outcome = _race_outcome(*inputs)
    kind = outcome[0]
    if kind == "refused":
        _reject(rep, TleError(outcome[1], outcome[2], check=outcome[3]))
        return
    if kind == "unproved":
        rep.stopped = TleError(outcome[1], outcome[2], check="memory-race")
        return
    relied, extra = outcome[1], outcome[2]
    if extra is not None:
        rep.specialised = {**rep.specialised, **extra}
        print(f"tle-dump: {rep.program.name}: global memory proved apart with "
              f"{', '.join(f'{n}={v}' for n, v in extra.items())} (DEFAULT_CONFIG; a race "
              f"otherwise); the verdict holds for these values only", file=sys.stderr)
    strides = sorted({n for group in relied for n in group})
    if strides:
        # the stride rule is an assumption about the launch (docs/semantics.md, "Strides"):
        # a verdict that may rest on it says so, naming the strides
        rep.assumed = (f"global memory proved apart taking the rows of the stride argument"
                       f"{'s' if len(strides) > 1 else ''} {', '.join(strides)} not to "
                       f"overlap: each "
                       f"stride at least the width of the columns addressed beside it, and no "
                       f"row offset `row * stride` wrapping around int32 or the address space "
                       f"(docs/semantics.md, \"Strides\"); a launch with a smaller stride, or "
                       f"with rows that wrap, is not covered")
        print(f"tle-dump: {rep.program.name}: {rep.assumed}", file=sys.stderr)


def _race_inputs(program: Program, specialised: dict, loaded: Loaded) -> Optional[tuple]:
    """What the memory-race check of ``program`` reads (the arguments of :func:`_race_outcome`),
    None for a kernel with no kernel IR (a .pipe protocol)."""
    info = loaded.infos.get(program.name)
    kir = getattr(info, "kir", None) or loaded.kirs.get(program.name)
    if kir is None:
        return None
    # the tle.assume ranges of the kernel's integer arguments (the protocol's params)
    args = {p.name for p in kir.params}
    domains = {p.name: (p.min, p.max) for p in getattr(program, "params", ())
               if p.name in args}
    # and those of arguments that are no param of the protocol (`N` where the loops run over
    # `N // 2`): each tle.assume comparison of an argument itself narrows its range
    for a in getattr(info, "assumptions", ()):
        if a.arg in args and not a.steps:
            lo, hi = domains.get(a.arg, (None, None))
            lo = a.min if lo is None else lo if a.min is None else max(lo, a.min)
            hi = a.max if hi is None else hi if a.max is None else min(hi, a.max)
            domains[a.arg] = (lo, hi)
    # the constexprs the kernel was read specialised to (a --param's) are numbers in the
    # addresses (a row pitch `row * D`); the others are of any value
    names = set(loaded.constexprs.get(program.name, ())) | \
        {p.name for p in kir.params if p.constexpr}
    values = {n: v for n, v in specialised.items() if n in names}
    config = loaded.defaults.get(program.name, {})  # DEFAULT_CONFIG's constexpr values
    # and the float constexprs DEFAULT_CONFIG gives (`"SCALE": 0.5`), whose values are no
    # integers: a cast or a comparison of one is not read as of an integer
    values.update({n: v for n, v in config.items()
                   if n in names and isinstance(v, float) and n not in values})
    # a constexpr of no value here (neither DEFAULT_CONFIG nor --param gives one) is a launch's
    # to choose, a float too (`SCALE=0.5`), unless the kernel's own use of it compiles only for
    # an integer (a range bound, tl.arange, a shape, or its arithmetic in a loop bound or a
    # pointer's offset: frontend/constexpr_kinds.py): a cast or a comparison of it is read as of
    # a float (race_terms.floating)
    from ..frontend.constexpr_kinds import integer_arguments, integer_constexprs

    floats = frozenset(n for n in names if n not in values and n not in config) - \
        integer_constexprs(kir) - integer_arguments(kir)
    signature = loaded.signatures.get(program.name)  # pointers, integer widths
    # and a run-time argument no signature types, which a launch may pass as a float (Triton's
    # JIT types a Python float fp32), unless the kernel's own use of it compiles only for no
    # float (a loop bound, a pointer's offset: constexpr_kinds.integer_arguments)
    floats |= frozenset(p.name for p in kir.params if not p.constexpr and
                        (not signature or p.name not in signature)) - integer_arguments(kir)
    return kir, domains, values, config, names, floats, signature


def _race_outcome(kir, domains: dict, values: dict, config: dict, names: set, floats: frozenset,
                  signature: Optional[dict]) -> tuple:
    """The memory-race check's outcome, as plain data (a child process may compute it):
    ``("proved", relied, extra)`` (the stride groups relied on; ``extra``: the DEFAULT_CONFIG
    constexprs it was proved with after a refusal without them, else None), ``("refused",
    message, loc, check)`` or ``("unproved", message, loc)``."""
    from ..frontend.global_races import Unproved, check_global_races

    extra = None
    try:
        try:
            relied = check_global_races(kir, domains, values, signature, floats)
            # a free constexpr is read as an int32, as the integer arguments are: a
            # DEFAULT_CONFIG value past int32 (`"C": 2 ** 40`, which the lowering compiles with)
            # is outside that reading, so the kernel is checked with it too
            wide = {n: v for n, v in _int_constexprs(config).items()
                    if n in names and n not in values and not -2 ** 31 <= v < 2 ** 31}
            if wide:
                relied = relied + check_global_races(kir, domains, {**values, **wide},
                                                     signature, floats)
        except TleError:
            # refused for some value of a constexpr argument (`row * D` with D = 32 overlaps
            # the next row): checked again with the DEFAULT_CONFIG values the lowering
            # translates it with, and, proved so, verified for those values only (the verdict
            # names them, as a reading specialised to them does)
            extra = {n: v for n, v in _int_constexprs(config).items()
                     if n in names and n not in values}
            if not extra:
                raise
            relied = check_global_races(kir, domains, {**values, **extra}, signature,
                                        floats)  # its refusal
    except TleError as e:
        return ("refused", e.message, e.loc, e.check)
    except Unproved as e:
        return ("unproved", e.message, e.loc)
    return ("proved", relied, extra)


class _RacesBeside:
    """The memory-race checks of the kernels of one run, computed in a forked process
    (cli/beside.py) while this one verifies and translates them: each outcome is taken where
    the check's inputs, computed again when it is due, are those it was computed from. Only a
    proof or a refusal is taken (an undecided check, whose z3 time limits a busy machine may
    decide, is run again here)."""

    def __init__(self, reports: list, loaded: Loaded):
        from .beside import start

        self.jobs: dict[str, tuple] = {}
        for k, specialised in reports:
            try:  # (computed ahead: a kernel whose check is never due must not fail here)
                inputs = _race_inputs(k, specialised, loaded)
            except Exception:
                continue
            if inputs is not None and k.name not in self.jobs:
                self.jobs[k.name] = inputs
        self.child = start(_race_outcome, list(self.jobs.values()))

    def outcome(self, name: str, inputs: tuple) -> Optional[tuple]:
        if self.child is None or name not in self.jobs:
            return None
        given = self.jobs[name]
        if given[0] is not inputs[0] or given[1:] != inputs[1:]:
            return None
        got = self.child.results()[list(self.jobs).index(name)]
        return got if got is not None and got[0] in ("proved", "refused") else None

    def close(self) -> None:
        if self.child is not None:
            self.child.close()


def _check_float_constexprs(rep: KernelReport, loaded: Loaded, fixed: dict) -> None:
    """A kernel whose protocol reads a constexpr of no value here (neither DEFAULT_CONFIG's
    ``constexprs`` nor --param gives one, so a launch chooses it) that the kernel's own code
    does not prove an integer (frontend/constexpr_kinds.py: a range bound, ``tl.arange``, a
    shape): the protocol checks integer values of it only, while a launch may give a float
    (``if t < SCALE`` and ``if t > SCALE - 1`` both hold at t = 2 of SCALE = 2.5, at no integer
    SCALE), as the memory-race proof reads it (race_terms.floating). Its "verified" is
    qualified to the integers: bounded (exit 3), the reason naming the constexpr.

    So is one DEFAULT_CONFIG gives as a float of no integer value (`"C": 1.25`, adversarial
    round 50): the kernel was read with C a param, proved for its integers, while --gluon and a
    launch of that configuration compile it with C = 1.25, where `p <= C * 2 - 1` and `p < C *
    2` differ at p = 2 (a reader waiting for a commit never made): that launch is outside the
    proof."""
    info = loaded.infos.get(rep.program.name)
    kir = getattr(info, "kir", None) or loaded.kirs.get(rep.program.name)
    if kir is None or rep.stopped is not None or rep.verdict is None or \
            rep.verdict.kind not in (PROVED, BOUNDED):
        return
    from ..frontend.constexpr_kinds import integer_arguments, integer_constexprs

    names = {p.name for p in kir.params if p.constexpr}
    config = loaded.defaults.get(rep.program.name, {})
    read = {p.name for p in rep.program.params} | \
        {p.name for p in getattr(rep.program, "bases", ())}
    # (a constexpr whose arithmetic the kernel uses where Triton takes no float, a loop bound
    # or a pointer's offset, is none either: constexpr_kinds.integer_arguments)
    integers = integer_constexprs(kir) | integer_arguments(kir)
    floats = sorted((names & read) - set(rep.specialised) - set(fixed) - integers
                    & {n for n, v in config.items() if _float_of_no_integer(v)})
    if floats:
        rep.qualifications.append(Qualification(
            f"{', '.join(f'{n} = {config[n]!r}' for n in floats)}: DEFAULT_CONFIG gives a "
            f"float, with which --gluon and a launch of that configuration compile the kernel, "
            f"while the check reads integer values of it only; give it an integer value, or "
            f"check another with --param", tuple(floats), "the integers", of_bounded=True))
    if rep.verdict.kind != PROVED:
        return  # (a bounded claim names the integers it checked)
    free = sorted((names & read) - set(rep.specialised) - set(fixed) - set(config)
                  - integers)
    if free:
        rep.qualifications.append(Qualification(
            f"{', '.join(free)}: a constexpr of no value here, which the protocol reads and a "
            f"launch may give as a float, where the check reads integers only; give it a value "
            f"in DEFAULT_CONFIG or with --param, or use it where Triton takes only an integer, "
            f"a range bound or a shape", tuple(free), "the integers"))


def _float_of_no_integer(value) -> bool:
    """Whether ``value`` (a DEFAULT_CONFIG constexpr) is a float that no integer equals (1.25,
    an infinity, a NaN): Python's and Triton's comparisons and arithmetic of 2.0 are those of
    2."""
    return isinstance(value, float) and not (math.isfinite(value) and value.is_integer())


def _check_signed_loads(rep: KernelReport) -> None:
    """A kernel proved (or bounded) but for `while` loops that end, or comparisons and
    arithmetic deciding pipe events that keep the verifier's int32 reading, only where a value
    loaded through a pointer of no known element type is of some element types
    (frontend/load_signs.py, frontend/load_types.py: no DEFAULT_CONFIG signature types the
    pointer; Program.signed_only, of a .py or a .kir file's kernel): through a *u32 pointer
    Triton compares unsigned and the loop never ends (`k = tl.load(cnt_ptr); while k >= 0: k -=
    1`), through a *i8 one `k += 1` wraps, a float may lie between two integers. Its claim is
    qualified to the element types every note keeps: not proved (bounded, exit 3), the reason
    naming each pointer and line."""
    from ..frontend.load_types import TYPES, phrase

    loops = getattr(rep.program, "signed_only", ())
    if not loops or rep.stopped is not None or rep.verdict is None or \
            rep.verdict.kind not in (PROVED, BOUNDED):
        return
    holds = frozenset(TYPES).intersection(*(note[3] for note in loops))
    rep.qualifications.append(Qualification(
        "; ".join(note[2] for note in loops),
        tuple(dict.fromkeys(note[1] for note in loops)), phrase(holds), of_bounded=True))


def _check_translation(rep: KernelReport, path: Path, loaded: Loaded, fixed: dict[str, int],
                       bound: Optional[int] = None) -> None:
    """A kernel the passes found no fault in, translated to Gluon as the lowering translates it
    (lowering/codegen.generate: the Gluon text only, no Triton compile), so that tle-dump never
    verifies a kernel the lowering refuses (`tl.debug_barrier(1)`, `tl.cast(t, 'fp16')`, a dead
    value of no protocol meaning that the frontend does not read): the lowering's refusal
    rejects the kernel, at its line and in the lowering's words, as --gluon refuses it.

    It translates what --gluon lowers: the reading tle-dump verified (``loaded.infos``, or the
    kernel IR of a .kir file: nothing is read again) with the constexprs --gluon lowers
    (DEFAULT_CONFIG's, with those the kernel was read specialised to and the --param values of
    constexprs in their place) and the argument types of the DEFAULT_CONFIG signature. The
    protocol is checked as this run checked it (its --param values and --bound), so the sweep's
    cache of recent runs serves it. ``rep.translated`` keeps the Generated (the JSON report's
    barrier units read it).

    Not translated, with ``rep.not_translated`` saying why (the verdict is then the protocol's
    alone, and the report says so): a .pipe kernel (a protocol, no kernel to lower); a kernel
    whose verification stopped (verdict unknown: the lowering verifies first); a .kir kernel
    with a worker partition of no ``regs=`` (optional in the text form, which prints none for a
    budget written with constexprs; the lowering needs one: it is translated with setmaxnreg's
    least budget in place of each missing one, and a refusal there rejects it as below); a
    kernel a constexpr of which has no value here (no DEFAULT_CONFIG gives one, nor --param: the
    lowering translates for the constexprs' values, which a launch gives); a kernel the lowering
    refuses only for a form it does not translate yet while the verifier checks it (a free
    shared buffer: translate.NOT_YET; translated again past the buffers, a refusal elsewhere
    rejects it, _refusal_past_free_buffers); and a kernel the lowering refuses without argument
    types (no DEFAULT_CONFIG signature, or one whose descriptor boxes are another
    configuration's), as -p emit-gluon translates it: a launch lowers it with its own types, which may decide the
    refusal: only a refusal the lowering makes for a type it does not know (check
    translate.UNTYPED); any other refusal of the untyped translation (`tl.debug_barrier(1)`,
    `x = N.foo`, a .kir kernel's undefined local) refuses the kernel whatever its types and
    rejects it, as with a signature. An internal error of the lowering is tle-dump's (exit 3:
    nothing is claimed), never a verdict of the kernel."""
    verdict = rep.verdict
    if verdict is None or verdict.kind == REJECTED:
        return
    name = rep.program.name
    if path.suffix == ".pipe":
        rep.not_translated = "a .pipe file holds the protocol alone, no kernel to lower"
        return
    if rep.stopped is not None:  # the lowering runs the protocol passes first: they stop there too
        rep.not_translated = ("the verification stopped (the verdict says where), and the "
                              "lowering verifies the protocol before it translates")
        return
    info, kir = loaded.infos.get(name), loaded.kirs.get(name)
    if info is None and kir is None:
        return
    unbudgeted_why = None
    if kir is None:
        kir = info.kir
    elif any(not p.default and p.regs is None for p in kir.partitions):
        # regs= is optional in the text form (a budget of constexprs prints none): the kernel
        # is not translated, but the translation still runs with setmaxnreg's least budget in
        # place of each missing one, for the refusals no budget lifts (a `break`, read as an
        # undefined local), which reject the kernel as they do one with its budgets
        from dataclasses import replace

        from ..language.registers import MIN_REGS

        unbudgeted = [p.name for p in kir.partitions if not p.default and p.regs is None]
        unbudgeted_why = (f"partition {', '.join(map(repr, unbudgeted))} has no register "
                          f"budget (regs=), which the lowering needs: its .py file lowers")
        kir = replace(kir, partitions=tuple(
            replace(p, regs=MIN_REGS) if not p.default and p.regs is None else p
            for p in kir.partitions))
    cx, sig, typed = translation_types(loaded, name, fixed)
    missing = [p.name for p in kir.params if p.constexpr and p.name not in cx]
    if missing:
        rep.not_translated = (f"no value for constexpr {', '.join(missing)} (the lowering "
                              f"translates a kernel for its constexprs' values: give them in "
                              f"DEFAULT_CONFIG or with --param)")
        other = _refusal_without_constexprs(path, info, kir, rep.program, cx, sig,
                                            _params_of(rep.program, fixed), bound, missing)
        if other is not None:  # refused at a line no missing value reaches: whatever they are
            rep.not_translated = None
            _reject(rep, other, "lowering")
        return
    sig = typed
    try:
        ahead = _AHEAD.pop(_ahead_key(path, info, kir, rep.program, cx, sig,
                                      _params_of(rep.program, fixed), bound), None)
        if ahead is not None:  # translated ahead (_translate_ahead): its result or its raise
            if ahead[1] is not None:
                raise ahead[1]
            translated = ahead[0]
        else:
            with warnings.catch_warnings():  # the verdict is this run's, said on its summary line
                warnings.simplefilter("ignore", TleVerificationWarning)
                translated = _translated(path, info, kir, rep.program, cx, sig,
                                         _params_of(rep.program, fixed), bound)
        if unbudgeted_why is None:
            rep.translated = translated
        else:  # translated with budgets it does not have: not the kernel's Gluon
            rep.not_translated = unbudgeted_why
    except TleError as e:
        from ..lowering.translate import NOT_YET, UNTYPED

        message = e.message.removeprefix("lowering: ")
        if e.check == "internal" or message.startswith("internal"):
            raise RuntimeError(f"the lowering of kernel '{name}': {e}") from e
        if e.check == NOT_YET:  # a form the verifier checks and the lowering does not translate
            other = _refusal_past_free_buffers(path, info, kir, rep.program, cx, sig,
                                               _params_of(rep.program, fixed), bound)
            if other is not None:  # a refusal the free buffers hid: the kernel's own
                _reject(rep, other, "lowering")
                return
            rep.not_translated = unbudgeted_why or f"{message}{_at_line(e)}"
        elif not sig and e.check == UNTYPED:  # a type a launch gives may decide it
            other = _refusal_untyped(path, info, kir, rep.program, cx,
                                     _params_of(rep.program, fixed), bound)
            if other is not None:  # refused whatever that type is
                _reject(rep, other, "lowering")
                return
            rep.not_translated = unbudgeted_why or (
                f"without argument types (no DEFAULT_CONFIG signature that holds here), the "
                f"lowering refuses it: {message}{_at_line(e)}")
        else:  # refused whatever the argument types: the kernel no launch compiles
            _reject(rep, e, "lowering" if e.check in (UNTYPED, None, "") else None)


#: translations made ahead of their check (_translate_ahead), by _ahead_key: (the Generated,
#: None) or (None, what it raised)
_AHEAD: dict = {}


def _ahead_key(path: Path, info, kir, program: Program, cx: dict, sig: dict, params: dict,
               bound: Optional[int]) -> Optional[tuple]:
    try:
        key = (str(path), id(info), id(kir), id(program), tuple(sorted(cx.items())),
               tuple(sorted(sig.items())), tuple(sorted(params.items())), bound)
        hash(key)
    except TypeError:
        return None
    return key


def _translate_ahead(rep: KernelReport, path: Path, loaded: Loaded, fixed: dict[str, int],
                     bound: Optional[int] = None) -> None:
    """The translation :func:`_check_translation` makes of a kernel read from a .py file with
    its constexprs' values, made now (while a child process proves its memory races,
    _RacesBeside) and kept for it: the same call with the same arguments, taken there only if
    they are the same then. Nothing is kept where a warning other than the verdict's was
    given (it would be shown too early): the check then translates, and warns, itself."""
    verdict = rep.verdict
    if verdict is None or verdict.kind == REJECTED or path.suffix == ".pipe" or \
            rep.stopped is not None:
        return
    name = rep.program.name
    info = loaded.infos.get(name)
    if info is None or loaded.kirs.get(name) is not None:
        return
    kir = info.kir
    cx, _, sig = translation_types(loaded, name, fixed)
    if any(p.constexpr and p.name not in cx for p in kir.params):
        return
    params = _params_of(rep.program, fixed)
    key = _ahead_key(path, info, kir, rep.program, cx, sig, params, bound)
    if key is None:
        return
    with warnings.catch_warnings(record=True) as given:
        warnings.simplefilter("always")
        try:
            got = (_translated(path, info, kir, rep.program, cx, sig, params, bound), None)
        except Exception as e:
            got = (None, e)
    if all(issubclass(w.category, TleVerificationWarning) for w in given):
        _AHEAD[key] = got


def _refusal_past_free_buffers(path: Path, info, kir, program: Program, cx: dict, sig: dict,
                               params: dict, bound: Optional[int]) -> Optional[TleError]:
    """The lowering stops at a kernel's first free shared buffer (lowering-not-yet), which would
    hide every refusal after it (a reader's `tl.debug_barrier(1)`, which no launch compiles):
    translated again with each free buffer read as a shared-memory tile of its shape
    (translate.STUB_FREE_BUFFERS), the kernel's refusal there (_refusal_outside); None when that
    translation goes through, or is refused only where a free buffer is read."""
    return _refusal_outside(path, info, kir, program, [cx], sig, params, bound, set(), "")


#: the values each constexpr without one is translated at, one after the other, to look for the
#: refusals no value of it lifts (powers of two, as block shapes need; 16 first)
PROBE_CONSTEXPRS = (16, 64, 32, 128, 8, 4, 2, 1, 256)

#: the element types tried, one after the other, where no signature gives one that the
#: translation needs (translate.UNTYPED_STAND_IN)
UNTYPED_STAND_INS = ("float32", "float16", "bfloat16", "int32")


def _refusal_without_constexprs(path: Path, info, kir, program: Program, cx: dict, sig: dict,
                                params: dict, bound: Optional[int],
                                missing: list[str]) -> Optional[TleError]:
    """A kernel a constexpr of which has no value here is not translated (the lowering needs the
    values a launch gives), which would excuse every refusal of its lowering (a reader's
    `tl.debug_barrier(1)`, which no launch compiles): translated with the constexprs without a
    value at each of PROBE_CONSTEXPRS in turn, the refusal of the lowering when none of them
    translates (_refusal_outside); None when one does (a launch may give that value)."""
    tainted: set[str] = set()
    touched = _lines_reading(kir if kir is not None else info.kir, names=frozenset(missing),
                             tainted_out=tainted)
    names = ", ".join(missing)
    return _refusal_outside(
        path, info, kir, program, [{**cx, **{n: v for n in missing}} for v in PROBE_CONSTEXPRS],
        sig, params, bound, touched,
        f"{{at}}, no value being given for {names}: the lowering refuses the kernel at each "
        f"value tried, {', '.join(map(str, PROBE_CONSTEXPRS))}; give the value a launch gives "
        f"in DEFAULT_CONFIG or with --param", missing, tainted | set(missing))


def _refusal_untyped(path: Path, info, kir, program: Program, cx: dict, params: dict,
                     bound: Optional[int]) -> Optional[TleError]:
    """A kernel without argument types that the lowering refuses for an element type it does not
    know (translate.UNTYPED) is not translated, which would excuse every refusal after that one
    (`tl.debug_barrier(1)` after a keep_dims sum of an untyped load): translated with each of
    UNTYPED_STAND_INS in that type's place, the refusal of the lowering when none of them
    translates (_refusal_outside); None when one does (a launch may give that type)."""
    return _refusal_outside(path, info, kir, program, [cx], {}, params, bound, set(),
                            f"with each element type tried ({', '.join(UNTYPED_STAND_INS)}) "
                            f"where no signature gives one")


def _refusal_outside(path: Path, info, kir, program: Program, cxs: list[dict], sig: dict,
                     params: dict, bound: Optional[int], touched: set[tuple],
                     why: str, varied: tuple = (),
                     touched_names: frozenset = frozenset()) -> Optional[TleError]:
    """The lowering's refusal of a kernel translated with stand-ins, for each configuration of
    ``cxs`` (constexpr values) and, without a signature ``sig``, each element type of
    UNTYPED_STAND_INS where the translation needs one no signature gives; each free shared
    buffer is a shared-memory tile of its shape (translate.STUB_FREE_BUFFERS). None when one of
    these translations goes through (a launch may give those values and types), or none says
    anything (a form not translated yet, an internal error: the stand-ins are no launch's).

    Every stand-in is tried before a refusal is taken, since a translation's first refusal
    hides the ones after it: one at a line reading a constexpr stand-in (a reshape to [C, 2] at
    C = 16) is no reason to keep the verdict, nor one beside it on its line (`x = C;
    tl.debug_barrier(1)`) a reason to excuse it. A free buffer's tile is a stand-in no value
    varies: a refusal at a line reading a free buffer (nor a name bound from one) may be the
    tile's (unless the expression refused, found by its column, reads none: `_ = (buf,
    tl.debug_barrier(1))`), so that translation is made again without those lines
    (_without_lines), and what it refuses elsewhere is the kernel's. The refusal returned is one at a line outside
    ``touched`` (the lines reading a constexpr stand-in: it holds whatever their values are)
    first, else the first, its message then saying which stand-ins were tried (``why``, its
    ``{at}`` the values of the constexprs ``varied`` that translation was made with).

    Where every translation is refused at an expression that reads a constexpr stand-in (one of
    ``touched_names``; a shape the probe values do not give, e.g. a [BLOCK, D] tile at BLOCK =
    64, D = 512, which no single probe value fits), the refusal may be the stand-in's whatever
    the kernel: the translation is made again without the statements reading them, and only
    what it refuses elsewhere is the kernel's (the verdict is kept, not translated, otherwise).
    A refusal the same at every value tried (its place and words: `tl.debug_barrier(C)`) is
    no value's, and the kernel's."""
    from ..lowering.translate import NOT_YET, STUB_FREE_BUFFERS, UNTYPED, UNTYPED_STAND_IN

    ir = kir if kir is not None else info.kir
    buffer_names: set[str] = set()
    buffer_lines = _lines_reading(ir, buffers=True, tainted_out=buffer_names) \
        if ir.buffers else set()

    def refusal(src_info, src_kir, cx: dict, dtype) -> tuple[bool, Optional[TleError]]:
        """(whether it translates, its refusal when it says anything)."""
        tokens = STUB_FREE_BUFFERS.set(True), UNTYPED_STAND_IN.set(dtype)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", TleVerificationWarning)
                _translated(path, src_info, src_kir, program, cx, sig, params, bound)
            return True, None
        except TleError as e:
            if e.check in (NOT_YET, UNTYPED, "internal") or e.message.startswith(
                    ("internal", "lowering: internal")):
                if touched_names and e.loc is not None and _place(e.loc) in touched:
                    stand_in_faults.append(e)  # may be the stand-in values' (see below)
                return False, None
            return False, e
        except Exception:  # noqa: BLE001 - a stand-in is no kernel's form: nothing is learnt
            return False, None
        finally:
            UNTYPED_STAND_IN.reset(tokens[1])
            STUB_FREE_BUFFERS.reset(tokens[0])

    dtypes = (None,) if sig else UNTYPED_STAND_INS
    tries = len(cxs) * len(dtypes)
    names = set(touched_names)

    def no_value_gives(rs) -> bool:
        """Whether refusals ``rs`` are one refusal at every stand-in tried, place and words:
        no stand-in value changes it (`tl.debug_barrier(C)`)."""
        return len(cxs) > 1 and len(rs) == tries and len({(e.loc, e.message) for e, _ in rs}) == 1

    def at_stand_ins(rs) -> bool:
        """Whether every refusal of ``rs`` may be the constexpr stand-ins': a lowering fault
        at a line reading them, or a refusal of an expression reading them."""
        return all(e in stand_in_faults or e.loc is not None and _place(e.loc) in touched
                   and _refused_node_reads(ir, e.loc, names) is not False for e, _ in rs)

    def refused_whatever_the_buffer(e: TleError, cx: dict, dtype) -> bool:
        """Whether refusal ``e``, of an expression reading a free buffer's tile, stands with
        that buffer read as another value in the refused expression only (_buffers_replaced_at:
        a load of it as `tl.zeros` of its shape, the buffer itself as 0): the same place and
        words are no refusal of the tile, but of the expression whatever the lowering will
        make of the buffer (`tl.debug_barrier(buf)`, `tl.cast(tl.load(tle.gpu.local_ptr(buf)),
        'fp16')`)."""
        other = _buffers_replaced_at(ir, e.loc, buffer_names)
        if other is None:
            return False
        _, again = refusal(None, other, cx, dtype)
        return again is not None and again.loc == e.loc and again.message == e.message

    refusals: list[TleError] = []
    #: internal errors of the lowering at lines reading a constexpr stand-in (a shape no launch
    #: of the kernel gives reaching a form the lowering does not expect)
    stand_in_faults: list[TleError] = []
    for cx in cxs:
        for dtype in dtypes:
            ok, e = refusal(info, kir, cx, dtype)
            if ok:
                return None
            if e is not None and e.loc is not None and _place(e.loc) in buffer_lines \
                    and _refused_node_reads(ir, e.loc, buffer_names) is not False \
                    and not refused_whatever_the_buffer(e, cx, dtype):
                ok, e = refusal(None, _without_lines(ir, buffer_lines), cx, dtype)
                if ok or e is not None and e.loc is not None and _place(e.loc) in buffer_lines:
                    return None  # refused only where the free buffers' tiles stand
            if e is not None:
                refusals.append((e, ", ".join(f"{n} = {cx[n]}" for n in varied)))
    if not refusals and len(stand_in_faults) == tries:  # every translation failed so
        refusals = [(e, "") for e in stand_in_faults]
    if not refusals:
        return None
    if touched_names and (stand_in_faults or not no_value_gives(refusals)) \
            and at_stand_ins(refusals):
        left_out = "the statements refused before left out"
        drop: set[tuple] = set()  # the lines of the refusals so far, their statements left out
        for _ in range(16):
            drop |= {_place(e.loc) for e, _ in refusals}
            stripped = _without_lines(ir, buffer_lines, names, drop)
            refusals, faults = [], len(stand_in_faults)
            for cx in cxs:
                for dtype in dtypes:
                    ok, e = refusal(None, stripped, cx, dtype)
                    if ok:
                        return None  # refused only where the stand-in values are read
                    if e is not None:
                        refusals.append((e, left_out))
            if not refusals and len(stand_in_faults) - faults == tries:
                drop |= {_place(e.loc) for e in stand_in_faults[faults:]}
                refusals = [(e, left_out) for e in stand_in_faults[faults:]]
                continue
            if not refusals:
                return None
            if no_value_gives(refusals) or not at_stand_ins(refusals):
                break  # a refusal no stand-in value gives: the kernel's
        else:
            return None
    refusals = [(e, at) for e, at in refusals if e not in stand_in_faults]
    if not refusals:
        return None  # the lowering's own faults at the stand-in values: nothing is learnt
    e, at = next(((e, at) for e, at in refusals
                  if e.loc is not None and e.loc.line and _place(e.loc) not in touched),
                 refusals[0])
    if not why:
        return e
    return TleError(f"{e.message} ({why.replace('{at}', f'with {at}' if at else 'translated')})",
                    e.loc, check=e.check)


def _place(loc) -> tuple:
    """The file and line of ``loc``: a line is one of a file (a helper of another module has lines
    of the same numbers as the kernel's file)."""
    return loc.file, loc.line


def _refused_node_reads(kir, loc, names: set[str]) -> Optional[bool]:
    """Whether the expressions of ``kir`` at ``loc`` (its file, line and column: the node a refusal
    names) read a free buffer or one of ``names``; None when no expression stands there (a
    statement's refusal: the caller reads the whole line)."""
    from ..ir import kernel as K

    found = None
    bodies = [kir.prologue] + [p.body for p in kir.partitions]
    exprs = [e for p in kir.partitions for _, e in p.bindings]
    for body in bodies:
        for st in K.walk_stmts(body):
            exprs.extend(K.stmt_exprs(st))
    for e in exprs:
        for x in K.walk_expr(e):
            at = getattr(x, "loc", None)
            if at is None or _place(at) != _place(loc) or at.column != loc.column \
                    or not loc.column:
                continue
            reads = any(isinstance(y, K.BufferRef) or isinstance(y, K.Name) and y.id in names
                        for y in K.walk_expr(x))
            found = reads or bool(found)
    return found


def _buffers_replaced_at(kir, loc, names: set[str]):
    """``kir`` with every free buffer, and every one of ``names`` (names bound from one), that
    the expression at ``loc`` (its file, line and column: the node a refusal names) reads
    replaced by another value: a load of a whole buffer (`tl.load(tle.gpu.local_ptr(buf))`) by
    `tl.zeros` of its shape and element type (what the load gives, whatever the lowering makes
    of the buffer), any other read of one by the integer 0; every worker partition given a
    register budget as _without_lines gives it. None when no expression stands at ``loc`` or
    none there reads a buffer."""
    import dataclasses

    from ..ir import kernel as K
    from ..language.registers import MIN_REGS

    if not loc.column:
        return None
    hits = []
    declared = {b.name: b for b in kir.buffers}

    def buffer(x) -> bool:
        return isinstance(x, K.BufferRef) or isinstance(x, K.Name) and x.id in names

    def loaded(x, bound: dict):
        """The buffer ``x`` loads whole, when it is `tl.load(tle.gpu.local_ptr(b))` of one
        buffer ``b`` of known dimensions (a name of ``bound``, the function's names bound to a
        buffer)."""
        if not (isinstance(x, K.Op) and x.name == "tl.load" and len(x.args) == 1
                and isinstance(x.args[0], K.Op) and x.args[0].name == "tle.gpu.local_ptr"
                and len(x.args[0].args) == 1 and not x.args[0].kwargs):
            return None
        ref = x.args[0].args[0]
        name = ref.name if isinstance(ref, K.BufferRef) else bound.get(getattr(ref, "id", None))
        buf = declared.get(name)
        return buf if buf is not None and all(isinstance(d, int) for d in buf.shape) else None

    def subst(node, inside: bool, bound: dict):
        """``node`` rebuilt with the buffers read inside the refused expression replaced."""
        if isinstance(node, tuple):
            items = tuple(subst(x, inside, bound) for x in node)
            return items if any(a is not b for a, b in zip(items, node)) else node
        if not dataclasses.is_dataclass(node) or isinstance(node, type):
            return node
        at = getattr(node, "loc", None)
        if not inside and at is not None and _place(at) == _place(loc) and at.column == loc.column \
                and not isinstance(node, (K.Assign, K.Eval, K.For, K.If, K.While, K.Return)):
            inside = True
        if inside:
            buf = loaded(node, bound)
            if buf is not None:
                hits.append(node)
                return K.Op("tl.zeros", (K.TupleExpr(tuple(K.Const(d, node.loc) for d in buf.shape),
                                                     node.loc), K.DType(buf.dtype, node.loc)),
                            loc=node.loc)
            if buffer(node):
                hits.append(node)
                return K.Const(0, node.loc)
        changes = {}
        for f in dataclasses.fields(node):
            v = getattr(node, f.name)
            nv = subst(v, inside, bound)
            if nv is not v:
                changes[f.name] = nv
        return dataclasses.replace(node, **changes) if changes else node

    prologue = subst(kir.prologue, False, {n: n for n in declared})
    partitions = tuple(
        dataclasses.replace(p, body=subst(p.body, False, {n: e.name for n, e in p.bindings
                                                          if isinstance(e, K.BufferRef)}),
                            regs=p.regs if p.default or p.regs is not None else MIN_REGS)
        for p in kir.partitions)
    if not hits:
        return None
    return dataclasses.replace(kir, prologue=prologue, partitions=partitions)


def _without_lines(kir, lines: set[tuple], names: frozenset = frozenset(),
                   drop: frozenset = frozenset()):
    """``kir`` without its statements at ``lines`` (places: a file and a line, _place), nor those
    at ``drop`` whose own expressions read one of ``names`` (every statement at such a line
    where none does), a loop or `if` among them with its body; every worker partition given a
    register budget (setmaxnreg's least where it has none, a budget of constexprs: the
    translation from the kernel IR needs one)."""
    from dataclasses import replace

    from ..ir import kernel as K
    from ..language.registers import MIN_REGS

    def reads(st) -> bool:
        return any(isinstance(x, K.Name) and x.id in names
                   for e in K.stmt_exprs(st) for x in K.walk_expr(e))

    bodies = [kir.prologue] + [p.body for p in kir.partitions]
    reading = {_place(st.loc) for b in bodies for st in K.walk_stmts(b)
               if st.loc is not None and _place(st.loc) in drop and reads(st)}

    def left_out(st) -> bool:
        if st.loc is None:
            return False
        place = _place(st.loc)
        return place in lines or place in drop and (reads(st) or place not in reading)

    def strip(body):
        out = []
        for st in body:
            if left_out(st):
                continue
            if isinstance(st, (K.For, K.While)):
                st = replace(st, body=strip(st.body))
            elif isinstance(st, K.If):
                st = replace(st, then=strip(st.then), orelse=strip(st.orelse))
            out.append(st)
        return tuple(out)

    return replace(kir, prologue=strip(kir.prologue), partitions=tuple(
        replace(p, body=strip(p.body),
                regs=p.regs if p.default or p.regs is not None else MIN_REGS)
        for p in kir.partitions))


def _lines_reading(kir, buffers: bool = False, names: frozenset = frozenset(),
                   tainted_out: Optional[set] = None) -> set[tuple]:
    """The lines (places: a file and a line, _place) of ``kir`` whose statements (or partition
    arguments) read a free shared buffer (``buffers``) or one of the kernel body's ``names`` (its
    constexpr parameters), or a name a statement of the same function bound from one
    (transitively); ``tainted_out`` collects those names (of every function)."""
    from ..ir import kernel as K

    def reads(e, tainted: set[str]) -> bool:
        return any(buffers and isinstance(x, K.BufferRef)
                   or (isinstance(x, K.Name) and x.id in tainted) for x in K.walk_expr(e))

    lines: set[tuple] = set()
    bodies = [((), kir.prologue)] + [(p.bindings, p.body) for p in kir.partitions]
    body_names: set[str] = set(names)  # the prologue's names bound from a stand-in
    for n, (bindings, body) in enumerate(bodies):
        tainted = set(names) if n == 0 else {name for name, e in bindings
                                             if reads(e, body_names)}
        lines |= {_place(e.loc) for name, e in bindings if name in tainted and e.loc is not None}
        lines |= {_place(x.loc) for _, e in bindings for x in K.walk_expr(e)
                  if (buffers and isinstance(x, K.BufferRef)
                      or isinstance(x, K.Name) and x.id in body_names) and x.loc is not None}
        stmts = list(K.walk_stmts(body))
        grew = True
        while grew:
            grew = False
            for st in stmts:
                if isinstance(st, K.Assign) and st.target not in tainted \
                        and reads(st.value, tainted):
                    tainted.add(st.target)
                    grew = True
        lines |= {_place(st.loc) for st in stmts if st.loc is not None
                  and any(reads(e, tainted) for e in K.stmt_exprs(st))}
        if n == 0:  # the prologue, walked first
            body_names = tainted
        if tainted_out is not None:
            tainted_out |= tainted
    return lines


def _translated(path: Path, info, kir, program: Program, cx: dict, sig: dict, params: dict,
                bound: Optional[int]):
    """The Gluon module (a codegen.Generated) of a kernel, with the argument types ``sig`` (none:
    untyped, as -p emit-gluon translates): from its KernelInfo ``info`` as --gluon lowers it
    (lowering/dumping.lowered), or, for a .kir kernel (``info`` None), from its kernel IR and
    protocol view ``program``, as -p emit-gluon lowers it. Raises the lowering's TleError."""
    from ..frontend.budgets import with_budgets
    from ..lowering.codegen import generate
    from ..lowering.descriptors import signature_for_compile

    if info is not None:
        # register budgets written as expressions of constexprs, evaluated with their values
        # (lowering/compile.kernel_info_of does so too): the reading verified is the one lowered
        info = with_budgets(info, cx)
        types = signature_for_compile(info, sig, cx) if sig else None
        return generate(info, cx, False, arg_types=types or None, params=params, bound=bound)
    from dataclasses import replace

    from ..lowering import walks
    from ..lowering.codegen import LAYOUT_PIPELINE, LOWERING_PIPELINE, fixed_constexprs
    from ..lowering.kir_passes import KirModule, run_passes
    from .print_ir import VERDICT_ATTRS

    # the verdict the file carries is left aside: the passes give their own
    kir = replace(kir, attrs=tuple((k, v) for k, v in kir.attrs if k not in VERDICT_ATTRS))
    types = signature_for_compile(walks.kernel_facts(kir, program), sig, cx) if sig else None
    module = KirModule(kir, constexprs=cx, program=program, bound=bound,
                       params={**params, **fixed_constexprs(program, cx)})
    module = run_passes(module, LOWERING_PIPELINE)
    walks.reject_errors(module)  # as codegen.generate, with the types of the signature
    module.lowering = dict(debug_waits=False, cp_async=True, barrier_offsets=None,
                           arg_types=types or None)
    return run_passes(module, f"{LAYOUT_PIPELINE},emit-gluon").generated


def _params_of(k: Program, fixed: dict[str, int]) -> dict[str, int]:
    """The --param values of ``k``'s params and of the bases of its derived ones (_verify's)."""
    from ..passes.fixed_params import fixable

    names = set(fixable(k))
    return {n: v for n, v in fixed.items() if n in names}


def _check_constexpr_values(loaded: Loaded, given: dict[str, int]) -> None:
    """A constexpr the DEFAULT_CONFIG gives as True/False takes 0 or 1 only (any other integer
    would be read and lowered as a truth value the kernel was not written for)."""
    for kernel, config in loaded.defaults.items():
        for n, v in given.items():
            if isinstance(config.get(n), bool) and v not in (0, 1):
                raise _Unusable(f"tle-dump: error: --param {n}={v}: {n} is a boolean constexpr "
                                f"of {kernel} (DEFAULT_CONFIG: {config[n]}); give 0 or 1")


def _read_with_constexprs(path: Path, text: str, infos, fixed: dict) -> Loaded:
    """The kernels read generically, or, when a --param names a constexpr of a kernel that is
    not one of its params, read specialised to the constexprs given (the other values stay
    generic); the verdict then names them ("with CAUSAL = 1 (read specialised)")."""
    from ..frontend.ast_reader import kernels_of_source
    from ..passes.fixed_params import fixable

    generic = _loaded(path, infos, {})
    given = {n: v for n, v in fixed.items()
             if any(n in generic.constexprs[i.name] and n not in fixable(i.program) for i in infos)}
    if not given:
        return generic
    _check_bool_values(fixed, [i.program for i in infos], generic)
    _check_constexpr_values(generic, given)
    shown = ", ".join(f"{n}={v}" for n, v in given.items())
    try:
        infos = kernels_of_source(text, str(path), bind=given)
    except TleError as e:  # read generically, so it is the values given the kernel cannot take
        raise _Unusable(f"tle-dump: error: --param {shown}: the kernel cannot be read with "
                        f"{'this value' if len(given) == 1 else 'these values'}: "
                        f"{e.message.splitlines()[0]}{_at_line(e)}") from None
    print(f"tle-dump: {path}: read specialised to {shown} (--param); the verdict holds for "
          f"{'this value' if len(given) == 1 else 'these values'} only", file=sys.stderr)
    return _loaded(path, infos, given)


def load(path: Path, fixed: Optional[dict] = None,
         only: Optional[Sequence[str]] = None) -> Loaded:
    """Read a .pipe or .py file into a Module, with the constexprs it had to be read specialised
    to (_specialised; usually none) or was read specialised to by a --param naming a constexpr
    (_read_with_constexprs). ``only``: the kernels --kernel asks for (in a file whose
    DEFAULT_CONFIG is keyed by kernel name, the others are not read). Raises TleError (a
    rejection, exit 1) for frontend errors in a kernel, _Unusable (exit 2) for input that cannot
    be read or parsed, or whose DEFAULT_CONFIG gives an integer constexpr a value of another
    kind (_check_integer_config_values)."""
    loaded = _load(path, fixed, only)
    _check_integer_config_values(path, loaded, fixed or {})
    return loaded


def _check_integer_config_values(path: Path, loaded: Loaded, fixed: dict) -> None:
    """_Unusable (exit 2, at DEFAULT_CONFIG's line) when the DEFAULT_CONFIG "constexprs" of a
    kernel gives a value that is no integer (a str, None, a list, a float, 5.0 too) to a
    constexpr the kernel uses where Triton 3.6 takes only an integer, in a statement every
    compile reaches (frontend/constexpr_kinds.py: a loop bound, tl.arange, a shape, a pointer's
    offset): the protocol was verified for its integer values, while the configuration --gluon
    lowers and a launch of it compiles would fail in Triton ("For loop bounds and step must all
    be ints", "cannot convert None ... to tensor"), as one whose "constexprs" gives the
    constexpr no value (_check_config_constexprs). A --param value of it takes the config's
    place, and a bool is the integer Triton reads it as."""
    from ..frontend.constexpr_kinds import integer_arguments, integer_constexprs

    for name, config in loaded.defaults.items():
        info = loaded.infos.get(name)
        kir = getattr(info, "kir", None) or loaded.kirs.get(name)
        if kir is None or not isinstance(config, dict):
            continue
        constexprs = {p.name for p in kir.params if p.constexpr}
        integers = integer_constexprs(kir) | (integer_arguments(kir) & constexprs)
        bad = [(n, config[n]) for n in sorted(integers)
               if n in config and n not in fixed and not isinstance(config[n], int)]
        if bad:
            from .config import _line

            n, v = bad[0]
            kind = "" if v is None else f" (a {type(v).__name__})"
            raise _Unusable(f"{path}:{_line(str(path))}: error: DEFAULT_CONFIG's \"constexprs\" "
                            f"gives {n} = {v!r}{kind}, but kernel '{name}' uses "
                            f"{n} where Triton takes only an integer (a loop bound, tl.arange, a "
                            f"shape): the configuration --gluon lowers would not compile; give "
                            f"{n} an integer")


def _load(path: Path, fixed: Optional[dict] = None,
          only: Optional[Sequence[str]] = None) -> Loaded:
    """:func:`load`, without the check of DEFAULT_CONFIG's integer constexprs."""
    text = _read_input(path)
    if path.suffix == ".pipe":
        from ..ir.parser import parse_module

        try:
            return Loaded(parse_module(text, str(path)))
        except TleError as e:
            raise _Unusable(str(e)) from None
    if path.suffix == ".kir":
        return _load_kir(path, fixed or {})
    from ..frontend import SPECIALIZABLE
    from ..frontend.ast_reader import kernels_of_source
    from .config import signature_type_error

    bad_type = signature_type_error(str(path), text)
    if bad_type is not None:  # before the frontend, which reads the pointer types too
        raise _Unusable(str(bad_type))
    try:
        infos = kernels_of_source(text, str(path))
    except (RecursionError, MemoryError):
        _refuse_too_deep(path, text)
        raise  # Python parses it: a fault of the frontend, reported as an internal error
    except SyntaxError as e:
        # the Python running tle-dump reads the file: syntax of a newer one is an error here
        ver = f"{sys.version_info.major}.{sys.version_info.minor}"
        raise _Unusable(f"{path}:{e.lineno}:{e.offset}: error: Python syntax error: {e.msg} "
                        f"(as Python {ver} reads it; fix the line, or run tle-dump with the "
                        f"Python the kernel is written for)") from None
    except TleError as e:
        if e.check == "syntax":  # not Python at all: unusable, not a rejected protocol
            loc = e.loc
            ver = f"{sys.version_info.major}.{sys.version_info.minor}"
            raise _Unusable(f"{loc.file}:{loc.line}:{loc.column}: error: Python {e.message} (as "
                            f"Python {ver} reads it; fix the line, or run tle-dump with the "
                            f"Python the kernel is written for)") from None
        if e.check in SPECIALIZABLE:
            return _specialised(path, text, fixed or {}, e, only)
        raise
    return _read_with_constexprs(path, text, infos, fixed or {})


def _refuse_too_deep(path: Path, text: str) -> None:
    """_Unusable when Python itself cannot parse ``text`` (an expression nested thousands deep:
    ast.parse raises RecursionError or MemoryError, and Python refuses to run the file too)."""
    import ast

    try:
        ast.parse(text, str(path))
    except (RecursionError, MemoryError) as e:
        raise _Unusable(f"{path}: error: Python cannot parse this file: nested too deeply "
                        f"({type(e).__name__}); Python refuses to run it as well") from None
    except SyntaxError:
        pass


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
    boolean constexpr may be (_check_bool_values)."""

    bools: frozenset = frozenset()


def _params(items: Sequence[str]) -> dict[str, int]:
    out: dict[str, int] = _Given()
    bools = set()
    for it in items:
        name, sep, val = it.partition("=")
        name, val = name.strip(), val.strip()
        if not sep or not name.isidentifier() or not (_INT.fullmatch(val) or val in _BOOLS):
            raise _Unusable(f"tle-dump: error: --param expects NAME=INTEGER (or NAME=True/False "
                            f"for a boolean constexpr), got {it!r}")
        if len(val.lstrip("+-")) > _PARAM_DIGITS:
            raise _Unusable(f"tle-dump: error: --param {name}: a value of "
                            f"{len(val.lstrip('+-'))} digits (at most {_PARAM_DIGITS})")
        value = _BOOLS[val] if val in _BOOLS else int(val)
        if name in out and out[name] != value:
            raise _Unusable(f"tle-dump: error: --param {name} given twice ({out[name]} and {val})")
        out[name] = value
        if val in _BOOLS:
            bools.add(name)
    out.bools = frozenset(bools)
    return out


def _refuse_int_as_bool(fixed: dict, config: dict, kernel: str = "") -> None:
    """_check_bool_values's refusal of a constexpr whose DEFAULT_CONFIG value ``config`` gives as
    an integer, before a kernel is read specialised to True/False as 1/0."""
    for name in sorted(getattr(fixed, "bools", ())):
        if name in config and not isinstance(config[name], bool):
            raise _Unusable(f"tle-dump: error: --param {name}={'True' if fixed[name] else 'False'}"
                            f": {name} is an integer constexpr{f' of {kernel}' if kernel else ''} "
                            f"(DEFAULT_CONFIG: {config[name]!r}); give an integer")


def _check_bool_values(fixed: dict, kernels: list[Program], loaded: Loaded) -> None:
    """A --param given as True/False names a boolean constexpr: not an integer param (N=True
    would check N = 1 under a spelling that says it is a flag), nor a constexpr whose
    DEFAULT_CONFIG value is an integer (BLOCK_H=True would read and lower BLOCK_H = 1)."""
    from ..passes.fixed_params import fixable

    for name in sorted(getattr(fixed, "bools", ())):
        given = f"--param {name}={'True' if fixed[name] else 'False'}"
        for k in kernels:
            config = loaded.defaults.get(k.name, {})
            if name in loaded.constexprs.get(k.name, ()):
                _refuse_int_as_bool(fixed, config, k.name)
            elif name in fixable(k) and name not in loaded.specialised:
                raise _Unusable(f"tle-dump: error: {given}: {name} is an integer param of "
                                f"{k.name}, not a boolean constexpr; give an integer")


def _check_params(fixed: dict[str, int], kernels: list[Program], loaded: Loaded) -> None:
    """Every --param names a param of a selected kernel or a base param its derived ones are
    computed from (with a value in its domain, and giving derived values in theirs), or a
    constexpr the file was read specialised to."""
    from ..passes.fixed_params import fix, fixable

    _check_bool_values(fixed, kernels, loaded)
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
                raise _Unusable(f"tle-dump: error: --param {name}={value}: the protocol of "
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
            raise _Unusable(f"tle-dump: error: --param {name}: no such {kind} ({what})")
        for k, p in ((k, fixable(k)[name]) for k in kernels if name in fixable(k)):
            if not p.contains(value):
                how = next((f": the kernel computes {d}, which takes no other value"
                            for d in k.derived if d.name == name), "")
                raise _Unusable(f"tle-dump: error: --param {name}={value} is outside the domain "
                                f"of {name} ({p.domain()}{how})")
    for k in kernels:  # the derived params the values given determine (in their domains)
        try:
            fix(k, {n: v for n, v in fixed.items() if n in fixable(k)})
        except ValueError as e:
            raise _Unusable(f"tle-dump: error: {k.name}: {e}") from None


def _check_output(out: Path, source: Optional[Path] = None) -> None:
    """Fail early (before verifying or lowering) when -o cannot be written, or names the input
    file ``source`` (the report would replace the kernel it reports on)."""
    parent = out.parent
    try:
        if source is not None and _is_input(out, source):
            raise _Unusable(f"{out}: error: cannot write: it is the input file {source}; give "
                            f"-o another path")
        if out.is_dir():
            raise _Unusable(f"{out}: error: cannot write: is a directory")
        if not parent.exists():
            raise _Unusable(f"{out}: error: cannot write: no such folder {parent}")
        if not parent.is_dir():
            raise _Unusable(f"{out}: error: cannot write: {parent} is not a folder")
    except OSError as e:
        raise _Unusable(f"{out}: error: cannot write: {e.strerror or e}") from None
    if not os.access(parent, os.W_OK) or (out.exists() and not os.access(out, os.W_OK)):
        raise _Unusable(f"{out}: error: cannot write: permission denied")
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
            raise _Unusable(f"{out}: error: cannot write: a FIFO that no process reads (the write "
                            f"would block forever)") from None
        raise _Unusable(f"{out}: error: cannot write: {e.strerror or e}") from None
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
        raise _Unusable(f"{out}: error: cannot write: {e.strerror or e}") from None


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
            raise _Unusable(f"tle-dump: error: {e}") from None
        except OSError as e:
            raise _Unusable(f"{out}: error: cannot write: {e.strerror or e}") from None
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


#: whether the memory-race proofs run in a child process beside the rest (_RacesBeside): in a
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
    except _Unusable as e:
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
        except _Unusable as e:
            print(str(e), file=sys.stderr)
            return EXIT_UNUSABLE
    return code


def _write_stdout(text: str, failing: bool = False) -> None:
    """Write ``text`` to stdout and flush it there. A stdout that cannot take it (a closed pipe,
    `| head`, a full disk) is an output that cannot be written: _Unusable (exit 2) with one line,
    and stdout is pointed at the null device so that Python's own flush at exit does not print a
    traceback. ``failing``: already reporting an error; a second one is dropped."""
    if sys.stdout is None:  # started with stdout closed (>&-)
        if not failing:
            raise _Unusable("tle-dump: error: cannot write to standard output: it is closed")
        return
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except UnicodeEncodeError as e:  # PYTHONIOENCODING=ascii and a non-ASCII path or name
        if not failing:
            raise _Unusable(f"tle-dump: error: cannot write to standard output: its encoding "
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
            raise _Unusable(f"tle-dump: error: cannot write to standard output: "
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
        ctx = run_pipeline(k, args.passes, bound=args.bound, params=_params_of(k, fixed))
    except ValueError as e:
        raise _Unusable(f"tle-dump: error: {e}") from None
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
        raise _Unusable(f"tle-dump: error: {what} {path!r}: holds the control character "
                        f"{m.group(0)!r}, which would break the report's lines"
                        f"{'; rename it' if what in ('PATH', '-o') else ''}")


def _run(args, fmt: str) -> int:
    t0 = time.perf_counter()
    _refuse_line_breaking("PATH", args.path)
    if args.output:
        _refuse_line_breaking("-o", args.output)
    if not args.path:  # Path("") is ".": it was refused as the current directory
        raise _Unusable(f"tle-dump: error: an empty PATH ({args.path!r}); give a .py, .pipe or "
                        f".kir file")
    if args.path.endswith(("/", os.sep)) and not os.path.isdir(args.path) and os.path.exists(
            args.path.rstrip("/" + os.sep)):
        # Path() drops the trailing slash: a file was read where the shell (cat, open) refuses
        raise _Unusable(f"{args.path}: error: not a directory (a trailing '/' after a file); "
                        f"give the file without the '/'")
    path = Path(args.path)
    lowering = args.gluon or args.ttgir or args.ptx
    fixed = _params(args.param)
    if args.bound is not None and args.bound < 0:
        raise _Unusable(f"tle-dump: error: --bound must be 0 or more, got {args.bound}")
    if any(not k.strip() for k in args.kernel or ()):
        raise _Unusable("tle-dump: error: --kernel: an empty name; give a kernel's name")
    for k in args.kernel or ():  # a kernel's name is an identifier: no line of its own on stderr
        _refuse_line_breaking("--kernel", k)
    _refuse_line_breaking("-p", args.passes)
    if args.output is not None and not args.output.strip():
        raise _Unusable("tle-dump: error: -o: an empty path; give a file to write, or leave -o "
                        "out to print to stdout")
    if args.output is not None and args.output.endswith(("/", os.sep)):
        # Path() drops the trailing slash: the report would become a file named like the folder
        raise _Unusable(f"{args.output}: error: cannot write: names a folder (a trailing '/'); "
                        f"give -o a file path")
    if (args.debug_waits or args.wait_bound is not None) and not lowering:
        # the lowered waits are printed by --gluon/--ttgir/--ptx only (-p emit-gluon lowers plain
        # waits): without one of them the flag would change nothing
        flag = "--debug-waits" if args.debug_waits else "--wait-bound"
        raise _Unusable(f"tle-dump: error: {flag} applies to the lowered kernel: add --gluon, "
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
            raise _Unusable(f"tle-dump: error: {e}") from None
        return _run_print_ir(args, fmt, path, fixed, names, lowering)
    if lowering and fmt != "text":
        # -o r.json / g.svg asks for a report or a picture: the lowered kernel is neither
        given = (f"--format {args.format}" if args.format else
                 f"-o {args.output} (a {'JSON report' if fmt == 'json' else 'Graphviz picture'})")
        raise _Unusable(f"tle-dump: error: --gluon/--ttgir/--ptx print the lowered kernel as "
                        f"text; {given} does not apply")
    if lowering and args.graph:
        raise _Unusable("tle-dump: error: --gluon/--ttgir/--ptx print the lowered kernel; "
                        "--graph (the report's dataflow graph) does not apply")
    if args.output:
        _check_output(Path(args.output), path)
        if fmt == "dot" and not lowering and Path(args.output).suffix.lower() in IMAGE_SUFFIXES:
            from .dot import GraphvizError, check_renderer

            try:  # before verifying: a deadlock's diagnostics and then this error would be two
                check_renderer(Path(args.output))
            except GraphvizError as e:
                raise _Unusable(f"tle-dump: error: {e}") from None
    if lowering and path.suffix != ".py":
        _read_input(path)  # a missing file or a directory says so first
        hint = " (a .kir file's Gluon: -p emit-gluon)" if path.suffix == ".kir" else ""
        raise _Unusable(f"{path}: error: --gluon/--ttgir/--ptx need a .py kernel file{hint}")
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
        raise _Unusable(f"{path}: error: no kernel named {_names_shown(missing)} (kernels: "
                        f"{', '.join(k.name for k in loaded.module.kernels)})")
    if not kernels:
        what = (f"no kernel named {_names_shown(dict.fromkeys(args.kernel))}"
                + (f" (kernels: {', '.join(k.name for k in loaded.module.kernels)})"
                   if loaded.module.kernels else "") if args.kernel else
                "no kernel (a .pipe file starts with 'kernel NAME')" if path.suffix == ".pipe" else
                "no kernel (a .kir file starts with 'kernel NAME(PARAMS)', docs/kir.md)"
                if path.suffix == ".kir" else
                "no @tle.jit kernel that calls tle.gpu.warp_specialize")
        raise _Unusable(f"{path}: error: {what}")
    _check_params(fixed, kernels, loaded)
    # the memory-race proofs, in a child process while this one verifies and translates
    beside = _RacesBeside([(k, loaded.specialised_of(k.name)) for k in kernels], loaded) \
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
            _check_signature(rep, loaded, fixed)
            _check_default_shapes(rep, loaded)
            if beside is not None:
                _translate_ahead(rep, path, loaded, fixed, args.bound)
            _check_memory_races(rep, loaded, beside)
            _check_float_constexprs(rep, loaded, fixed)
            _check_signed_loads(rep)
            if not lowering:  # --gluon/--ttgir/--ptx translate it themselves (_dump_lowered)
                _check_translation(rep, path, loaded, fixed, args.bound)
            spent[id(rep)] += time.perf_counter() - t
    finally:
        if beside is not None:
            beside.close()
        _AHEAD.clear()

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
        raise _Unusable("tle-dump: error: printing the kernel IR (--print-ir, or a lowering pass "
                        "in -p) prints text: --gluon/--ttgir/--ptx, --graph and --format "
                        "dot/json do not apply")
    if args.output:
        _check_output(Path(args.output), path)
    _read_input(path)  # a missing file or a directory says so first
    if path.suffix not in (".py", ".kir"):  # before any verdict: unusable whatever the kernel
        raise _Unusable(f"{path}: error: printing the kernel IR needs a .py or .kir file (a "
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

    code, text = _print_ir.run_print_ir(args, path, fixed, names, load_lowered, _Unusable, check,
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
    """``spec`` as a debug-wait bound (lowering/debug.parse_bound), or _Unusable naming ``what``
    (--wait-bound, $TLE_DEBUG_WAITS): an infinite, zero, negative or unreadable bound, or one the
    lowered wait cannot count to. ``bare_seconds``: a bare number is seconds (--wait-bound 1 is
    one second; in $TLE_DEBUG_WAITS, 1 means "on", the default bound)."""
    from ..lowering.debug import MAX_POLLS, parse_bound

    text = spec.strip()
    if text.startswith("-") and _BARE_NUMBER.match(text[1:]):  # -5s: parse_bound reads no sign
        raise _Unusable(f"tle-dump: error: {what} {spec!r}: it must be positive")
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
        raise _Unusable(f"tle-dump: error: {what} {spec!r}: {why}") from None
    if bound is None:
        return None
    if bound.value < 1:  # 0.5polls: no poll at all
        raise _Unusable(f"tle-dump: error: {what} {spec!r}: it must be positive")
    # parse_bound refuses nanoseconds past what the wait counts, but caps a poll count at
    # MAX_POLLS without a word: a larger one is refused here
    number = re.match(r"[0-9.eE+]+", text)
    if bound.unit == "polls" and number and float(number.group(0)) > MAX_POLLS:
        raise _Unusable(f"tle-dump: error: {what} {spec!r}: too large (at most {MAX_POLLS} polls: "
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
            raise _Unusable(f"tle-dump: error: --wait-bound {args.wait_bound!r}: it must be "
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


def _at_line(err: Exception) -> str:
    """" (line N)" for an error with a source line, else ""."""
    loc = getattr(err, "loc", None)
    return f" (line {loc.line})" if isinstance(err, TleError) and loc and loc.line else ""


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
    """_Unusable (exit 2, at DEFAULT_CONFIG's line) when the signature --gluon/--ttgir/--ptx
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
        raise _Unusable(f"{where} \"constexprs\" names {', '.join(map(repr, stray))}, which kernel "
                        f"'{name}' has no argument of (its arguments: {', '.join(args)})")
    unknown = [a for a in sig if a not in args]
    missing = [a for a in args if a not in sig and a not in cx]
    if not unknown and not missing:
        return
    where += ' "signature"'
    what = (f"names {', '.join(map(repr, unknown))}, which kernel '{name}' has no argument of"
            if unknown else
            f"gives no type for {', '.join(map(repr, missing))}, an argument of kernel '{name}'")
    raise _Unusable(f"{where} {what} (its arguments: {', '.join(args)}; constexprs may be left "
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
            raise _Unusable(str(e)) from None
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
                raise _Unusable(f"tle-dump: error: --param {given}: the kernel cannot be lowered "
                                f"with {'this value' if ',' not in given else 'these values'}: "
                                f"{_one_line(e.message if isinstance(e, TleError) else str(e))}"
                                f"{_at_line(e)}") from None
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
