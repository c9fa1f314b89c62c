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
        else:
            return cfg
    raise TleError(f"{_SHAPE}: {problem}", Loc(path, _line(path)), check="lowering")


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
