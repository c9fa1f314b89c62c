"""The error tle-dump reports for an input, a flag or an output it cannot use (exit 2), and the
``PATH:LINE`` lead a message takes from an error's location."""

from __future__ import annotations

from ..diagnostics import TleError


class Unusable(Exception):
    """Unusable input (exit 2); the message is the one line printed."""


def at_line(err: Exception) -> str:
    """" (line N)" for an error with a source line, else ""."""
    loc = getattr(err, "loc", None)
    return f" (line {loc.line})" if isinstance(err, TleError) and loc and loc.line else ""
