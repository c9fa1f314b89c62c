"""What a verification run proved, in one value: the verdict ``tle-dump`` prints and exits with.

Four kinds (docs/semantics.md, "Verdicts"):

=========  ====  =======================================================================
kind       exit  meaning
=========  ====  =======================================================================
proved     0     no fault for every value of the params in their domain (a theorem whose
                 fragment the program is in covers the values not checked), or for the
                 values the caller fixed (``--param``), which the message names
rejected   1     a fault was found (diagnostics ``PATH:LINE: error:``)
bounded    3     no fault for the values checked, which the message names; the program is
                 outside the fragment of the cutoff theorem (or the caller capped the check),
                 so nothing is claimed for other values
unknown    3     a verification budget (events) ran out before the planned check was done;
                 what was checked without a fault is named
=========  ====  =======================================================================
"""

from __future__ import annotations

from dataclasses import field
from typing import Optional
from ..ir.record import record

PROVED, REJECTED, BOUNDED, UNKNOWN = "proved", "rejected", "bounded", "unknown"
EXIT_CODES = {PROVED: 0, REJECTED: 1, BOUNDED: 3, UNKNOWN: 3}


@record
class Verdict:
    """``checked``: the values checked, per param (``{"N": "[-7, 40]"}``; empty without params);
    ``scope``: what the claim covers (``every value of N`` / ``N = 2`` / ``N in [0, 64]``);
    ``argument``: why the checked values cover the scope (the theorem and its constants), or why
    they do not (``reason``); ``errors``: how many errors (rejected)."""

    kind: str
    scope: str = ""
    checked: dict[str, str] = field(default_factory=dict)
    argument: str = ""
    reason: str = ""
    errors: int = 0
    events: int = 0  # event instances expanded (the budget's unit)

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.kind]

    @property
    def ok(self) -> bool:
        """True when no fault was found (proved, bounded or unknown)."""
        return self.kind != REJECTED

    @property
    def caveat(self) -> str:
        """What a claim for every value of a param leaves out: the verifier counts with unbounded
        integers, the GPU with i32 kernel arguments (docs/semantics.md, "Integers are
        unbounded"), so a launch whose loop bounds, loop counters (the value one step past a
        loop's last, which the compiled loop computes), conditions or pipe indices pass 2^31 - 1
        wraps and is not covered (``range(N + 1)`` at N = 2^31 - 1 runs no iteration, ``N + 1 >
        0`` is false there, ``range(0, N + 4, 3)`` at N = 2^31 - 5 never ends). A claim for
        values given is about those values: a check at which one of these leaves i32 is no claim
        at all (sweep.py, ``_within_i32``)."""
        if self.kind == PROVED and self.scope.startswith("every value of"):
            return "with loop bounds, loop counters, conditions and indices in i32"
        return ""

    def checked_text(self) -> str:
        return ", ".join(f"{p} in {r}" for p, r in self.checked.items())

    def describe(self) -> str:
        """One line: the verdict as tle-dump prints it after ``# verdict:``."""
        what = ("protocol well-formed, deadlock-free, every slot access inside its window "
                "(no stale read, read of an unwritten field or overwrite)")
        if self.kind == REJECTED:
            return f"rejected: {self.errors} error{'s' if self.errors != 1 else ''}"
        if self.kind == PROVED:
            tail = f" ({self.argument})" if self.argument else ""
            caveat = f" {self.caveat}" if self.caveat else ""
            return f"verified for {self.scope}{caveat}: {what}{tail}"
        checked = self.checked_text() or "the single instance"
        if self.kind == BOUNDED:
            return (f"bounded: {what} only for {checked}; not proved for other values "
                    f"({self.reason})")
        # values checked without a fault, if any: a param whose checked set is empty ({}: the
        # check stopped before its first value) is no check at all, and is not named
        done = ", ".join(f"{p} in {r}" for p, r in self.checked.items()
                         if str(r).strip() not in ("{}", "set()", ""))
        return (f"unknown: {self.reason}; no fault for {done}" if done else
                f"unknown: {self.reason}")

    def to_json(self) -> dict:
        return {"verdict": self.kind, "scope": self.scope, "caveat": self.caveat,
                "checked": dict(self.checked),
                "argument": self.argument, "reason": self.reason, "errors": self.errors,
                "events": self.events, "exit_code": self.exit_code}


def rejected(errors: int, checked: Optional[dict[str, str]] = None, events: int = 0) -> Verdict:
    return Verdict(REJECTED, errors=errors, checked=dict(checked or {}), events=events)
