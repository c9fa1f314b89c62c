"""A kernel's DEFAULT_CONFIG as tle-dump reads it: the lowering's reading (lowering/dumping.py)
with its shape checked, so that a DEFAULT_CONFIG that is a literal but not the dict tle-dump
needs (``DEFAULT_CONFIG = 5``, a "signature" that is a string, an argument type that is a dict)
is the same TleError as one that is no literal at all (check "lowering"), at DEFAULT_CONFIG's
line, rather than an AttributeError or TypeError deep in tle-dump (an internal error)."""

from __future__ import annotations

import re
from pathlib import Path

from ..diagnostics import TleError
from ..ir.nodes import Loc
from ..lowering.signature_checks import type_problem

_CONFIG_LINE = re.compile(r"\s*DEFAULT_CONFIG\s*(?::[^=]*)?=")
_SHAPE = ('DEFAULT_CONFIG must be a literal dict {"signature": {ARG: "TYPE", ...}, '
          '"constexprs": {NAME: VALUE, ...}, "num_warps": N}')


def kernel_config(kir, path: str, kernel: str) -> dict:
    """lowering.dumping.kernel_config, its result checked (_checked)."""
    from ..lowering.dumping import kernel_config as read

    return _checked(read(kir, path, kernel), path)


def default_config(path: str, kernel: str) -> dict:
    """lowering.dumping.default_config, its result checked (_checked)."""
    from ..lowering.dumping import default_config as read

    return _checked(read(path, kernel), path)


def _checked(cfg: object, path: str) -> dict:
    """``cfg`` when it is a dict whose "signature" maps names to type strings and whose
    "constexprs" is a dict of names; else TleError (check "lowering") saying what is wrong."""
    if not isinstance(cfg, dict):
        problem = f"it is {_a(cfg)}"
    else:
        sig, cx = cfg.get("signature", {}), cfg.get("constexprs", {})
        if not isinstance(sig, dict):
            problem = f'its "signature" is {_a(sig)}'
        elif not all(isinstance(k, str) and isinstance(v, str) for k, v in sig.items()):
            bad = next(k for k, v in sig.items() if not (isinstance(k, str) and isinstance(v, str)))
            problem = f'its "signature" gives {bad!r} no type string ("*fp32", "i32", "constexpr")'
        elif not isinstance(cx, dict) or not all(isinstance(k, str) for k in cx):
            problem = 'its "constexprs" is not a dict of names'
        elif any(type_problem(t) for t in sig.values()):
            arg, t = next((a, t) for a, t in sig.items() if type_problem(t))
            raise TleError(type_message(arg, t), Loc(path, _line(path)), check=TYPE_CHECK)
        else:
            return cfg
    raise TleError(f"{_SHAPE}: {problem}", Loc(path, _line(path)), check="lowering")


#: The check of a DEFAULT_CONFIG whose signature holds a type string Triton does not read
#: (tle-dump: unusable input, exit 2, whatever it was asked to print).
TYPE_CHECK = "default-config-type"


def type_message(arg: str, t: str) -> str:
    return f'DEFAULT_CONFIG\'s "signature" types {arg!r} as {type_problem(t)}'


def signature_type_error(path: str, text: str):
    """A TleError (TYPE_CHECK, at DEFAULT_CONFIG's line) for the first argument type of a
    ``.py`` file's literal DEFAULT_CONFIG (one config, or one per kernel name) that Triton does
    not read, or None. Read from the source alone, before the frontend, which reads the pointer
    types too (a tile loaded through "*float32" was refused as a tile of another dtype)."""
    import ast

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None  # the frontend says what is wrong with the file
    for stmt in tree.body:
        target = (stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                  else stmt.target if isinstance(stmt, ast.AnnAssign) else None)
        if not (isinstance(target, ast.Name) and target.id == "DEFAULT_CONFIG") or stmt.value is None:
            continue
        try:
            cfg = ast.literal_eval(stmt.value)
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            return None  # not a literal: _checked's own error, where a config is needed
        entries = ([cfg] if isinstance(cfg, dict) and "signature" in cfg else
                   [v for v in cfg.values() if isinstance(v, dict)] if isinstance(cfg, dict)
                   else [])
        for entry in entries:
            sig = entry.get("signature")
            for arg, t in (sig.items() if isinstance(sig, dict) else ()):
                if isinstance(t, str) and type_problem(t):
                    return TleError(type_message(str(arg), t), Loc(path, stmt.lineno),
                                    check=TYPE_CHECK)
    return None


def _a(value: object) -> str:
    """'an int', 'a str': the kind of a literal, for the message."""
    name = type(value).__name__
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


def _line(path: str) -> int:
    """The line of ``DEFAULT_CONFIG =`` in the file (1 when there is none: a .kir file carries
    its config in the kernel header)."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return 1
    return next((i for i, ln in enumerate(text.splitlines(), 1) if _CONFIG_LINE.match(ln)), 1)
