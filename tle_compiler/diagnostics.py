"""Compiler diagnostics, printed the way editors and CI logs expect: ``PATH:LINE: error: message``."""

from __future__ import annotations


from .ir.nodes import Loc
from .ir.record import record


@record
class Note:
    loc: Loc
    message: str

    def __str__(self) -> str:
        return f"{self.loc}: note: {self.message}"


@record
class Diagnostic:
    loc: Loc
    message: str
    severity: str = "error"  # "error" | "warning"
    notes: tuple[Note, ...] = ()
    check: str = ""  # short name of the rule that fired, e.g. "missing-release"

    def __str__(self) -> str:
        head = f"{self.loc}: {self.severity}: {self.message}"
        if self.check:
            head += f" [{self.check}]"
        return "\n".join([head] + [f"  {n}" for n in self.notes])


class TleError(Exception):
    """A user-facing error at a source location (bad declaration, unparsable input, ...)."""

    def __init__(self, message: str, loc: Loc | None = None, check: str = ""):
        self.loc = loc
        self.check = check
        self.message = message
        super().__init__(f"{loc}: error: {message}" if loc else message)

    def to_diagnostic(self) -> Diagnostic:
        from .ir.nodes import NOLOC

        return Diagnostic(self.loc or NOLOC, self.message, check=self.check)


class TleLoweringWarning(UserWarning):
    """The compiled kernel is not the Gluon module the lowering printed first: a kernel whose
    cp.async gathers Triton could not compile (rows too narrow or unaligned for a cp.async of 4
    bytes or more) is compiled again with register gathers (lowering/compile.py
    ``compile_kernel``; the compiled kernel's ``tle_cp_async_fallback`` holds Triton's error).
    The values computed are the same; ``tle-dump --gluon``, which does not compile, prints the
    cp.async form."""

    def __init__(self, message: str, kernel: str = ""):
        super().__init__(message)
        self.kernel = kernel


class TleVerificationWarning(UserWarning):
    """A kernel is lowered although its pipe protocol is not proved for every value of its params
    (verdict "bounded" or "unknown"): it was checked only for the values the message names."""

    def __init__(self, message: str, kernel: str = "", verdict=None):
        super().__init__(message)
        self.kernel = kernel
        self.verdict = verdict  # the tle_compiler.passes.verdict.Verdict, or None when there was none
