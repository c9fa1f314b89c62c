"""What passes share: the program, diagnostics, and the typed results each pass infers for the
next."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..diagnostics import Diagnostic, Note
from ..ir.nodes import Loc, Program


@dataclass
class PassContext:
    program: Program
    #: Check no param value beyond this magnitude (``--bound``); None: what the plan needs.
    bound: Optional[int] = None
    #: Check only these param values (e.g. from ``tle-dump --param NK=5``): of the Program's params
    #: or of the bases of derived ones, with the derived params those determine added.
    fixed_params: dict[str, int] = field(default_factory=dict)
    #: The most events the instance checks may expand (all values together) before the verdict
    #: is "unknown" (docs/passes.md, "Cost").
    budget: int = 5_000_000
    diagnostics: list[Diagnostic] = field(default_factory=list)
    #: infer-stages: pipe name → its StageInfo (infer_stages.py)
    stages: Optional[dict] = None
    #: infer-barriers: the Barrier list (infer_barriers.py)
    barriers: Optional[list] = None
    #: verify-protocol: a structural error (unknown pipe, undeclared reader, ...) stops the passes
    #: that pair events
    structure_failed: bool = False
    #: what the instance checks proved (verdict.py's Verdict), set by verify-protocol /
    #: verify-deadlock; :meth:`verdict` turns it into the run's verdict
    checked_verdict: Optional[object] = None
    #: the instance checks' results (sweep.py's Sweep), computed once per context
    sweep: Optional[object] = None
    #: the sweep's annotated event traces, by key (sweep.py)
    annotated_traces: dict = field(default_factory=dict)
    #: the pipes' resolved roles (roles.py), once :meth:`roles` computed them
    resolved_roles: Optional[dict] = None
    passes_run: list[str] = field(default_factory=list)
    _seen: set = field(default_factory=set)

    def __post_init__(self) -> None:
        # values of base params fix the derived params they determine, and the computed ones
        # whose branch they decide (fixed_params.py; a ValueError when they contradict a value
        # given or a domain)
        if self.fixed_params and (self.program.derived or getattr(self.program, "computed", ())):
            from .fixed_params import fix

            self.fixed_params = fix(self.program, self.fixed_params)

    @property
    def named_hops(self) -> dict:
        """Named pipe -> the hand-offs found implying its releases (passes/named_release.py):
        the sweep's, whether this context ran it or took a recent identical one."""
        return self.sweep.named_hops if self.sweep is not None else {}

    def error(self, loc: Loc, message: str, check: str, notes: tuple[Note, ...] = ()) -> None:
        """Report an error once per (check, location): instance checks find the same fault for
        many param values, and the first (smallest) one is the most readable."""
        key = (check, loc.file, loc.line, loc.column)
        if key in self._seen:
            return
        self._seen.add(key)
        self.diagnostics.append(Diagnostic(loc, message, "error", notes, check))

    def warning(self, loc: Loc, message: str, check: str = "") -> None:
        key = ("w", check, loc.file, loc.line, message)
        if key in self._seen:
            return
        self._seen.add(key)
        self.diagnostics.append(Diagnostic(loc, message, "warning", (), check))

    def roles(self):
        """The pipes' resolved roles (roles.py), computed once per context."""
        if self.resolved_roles is None:
            from .roles import resolve_roles

            self.resolved_roles = resolve_roles(self.program)
        return self.resolved_roles

    def verdict(self):
        """The run's :class:`~tle_compiler.passes.verdict.Verdict` (rejected when an error was
        reported; otherwise what the instance checks proved: :attr:`checked_verdict`, set by
        verify-protocol / verify-deadlock)."""
        from .verdict import rejected

        if self.errors:
            v = self.checked_verdict
            return rejected(len(self.errors), v.checked if v else None, v.events if v else 0)
        return self.checked_verdict

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    @property
    def ok(self) -> bool:
        return not self.errors
