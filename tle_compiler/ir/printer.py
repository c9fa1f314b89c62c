"""Printer for the text form of the Pipe IR: the inverse of :mod:`tle_compiler.ir.parser`.

``tle-dump`` shows a kernel's Pipe IR in this form, and tests and bug reports store protocols in it,
so the output is *canonical*: one spelling per program, whatever produced it (the frontend or a
``.pipe`` file). ``print → parse → print`` is the identity, and ``parse(print(p))`` equals ``p`` up
to source locations (see :func:`without_locations`).

Canonical choices:

* a kernel prints as its header (``kernel NAME``, then ``every_access`` where the program records
  every slot access and a reader reads a pipe that has no write access: only there does the flag
  change a verdict),
  its params, its pipes (names padded so attributes line up) and its
  partitions, with one blank line between these sections and between kernels;
* pipe attributes in the order ``capacity``, ``one_shot``, ``named_barrier``, ``readers``,
  ``fields``, ``mma`` (empty tuples and false flags are omitted);
* ``param N`` when the minimum is 0, else ``param N >= K``, or ``param N any`` (no minimum),
  followed by ``<= K`` when there is a maximum;
* after the params, the base params (``Program.bases``) as ``base N`` with bounds as a param's,
  then the definitions (``Program.derived``, in their order) as ``def M = EXPR``
  (:func:`definition_text`); a program without derived params prints neither; then each
  obligation of a loop that may never end (``Program.zero_steps`` of checks zero-step and
  endless-loop) as ``endless CHECK "MESSAGE"``, the message a JSON string, and each note of a
  proof qualified to element types (``Program.signed_only``) as ``loaded PTR (TYPES) "WHY"``;
* ``partition NAME [default] warps=N [regs=N] {``;
* two spaces of indentation per nesting level;
* ``range(STOP)`` when start is 0 and step 1, ``range(START, STOP)`` when step is 1, else all three;
* an ``else`` branch that holds exactly one ``if`` prints as ``} else if COND {``; an empty ``else``
  branch is not printed;
* events as ``PIPE[READER fields=(a, b)].VERB(INDEX)``, the brackets only when a reader or a view is
  present (a reader name ``""``, the implicit SPSC reader, prints as no reader name);
* slot accesses as ``PIPE.write(INDEX, FIELD)`` and ``PIPE[READER].read(INDEX, FIELD)``;
* expressions and conditions via ``str()`` of :mod:`tle_compiler.ir.expr`.

Names must be identifiers (a Python or .kir kernel's always are); the reserved words ``for``,
``if``, ``else``, ``not`` (:data:`~tle_compiler.ir.expr.RESERVED_WORDS`) print in backticks
(`` `not` ``), which the parser reads as names.

``locations=True`` appends ``  # FILE:LINE`` to every event that has a location; the parser skips
comments, so such output still parses.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from .derived import FUNCTIONS, WIDEN, Definition, Operand
from .expr import Affine
from .expr import name_text as _n
from .nodes import (CLOSED_FLAG, ENDLESS_CHECKS, NOLOC, Access, Event, For, If, Module, Param, Partition, Pipe,
                    Program, Stmt, walk_accesses)

__all__ = ["print_program", "print_module", "without_locations", "definition_text"]

INDENT = "  "


def print_module(module: Module, locations: bool = False) -> str:
    """All kernels of ``module``, separated by a blank line."""
    return "\n".join(print_program(k, locations) for k in module.kernels)


def print_program(program: Program, locations: bool = False) -> str:
    """One kernel in canonical text form (ends with a newline)."""
    header = f"kernel {_n(program.name)}"
    if program.every_access and _unwritten_pipe(program):
        # only where it changes a verdict: the reads of a pipe nothing writes are checked
        header += " every_access"
    sections: list[list[str]] = [[header]
                                 + [f"constexpr {_n(n)} = {v}" for n, v in program.constexprs]
                                 + [_param(p) for p in program.params]
                                 + [_param(p, "base") for p in program.bases]
                                 + [f"def {_n(d.name)} = {definition_text(d.definition)}"
                                    for d in program.derived]
                                 + _endless(program, locations)
                                 + _loaded(program, locations)
                                 + [_computed(c) for c in getattr(program, "computed", ())]]
    if program.pipes:
        width = max(len(_n(p.name)) for p in program.pipes)
        sections.append([_pipe(p, width) for p in program.pipes])
    for part in program.partitions:
        sections.append(_partition(part, locations))
    return "\n\n".join("\n".join(lines) for lines in sections) + "\n"


def _located(line: str, loc, locations: bool) -> str:
    """``line`` followed by ``  # FILE:LINE`` where ``locations`` asks for it and ``loc`` is
    known."""
    if locations and loc != NOLOC and loc.line > 0:
        return f"{line}  # {loc}"
    return line


def _endless(program: Program, locations: bool) -> list[str]:
    """The obligations of loops that may never end (Program.zero_steps of checks zero-step and
    endless-loop: a loop without events, which no partition of the text form holds) as
    ``endless CHECK "MESSAGE"`` lines, the message a JSON string: the text form reads back
    rejected as the kernel is. A division obligation (check division-by-zero) follows from its
    ``def`` line and is not printed."""
    known = ({p.name for p in program.params} | {b.name for b in program.bases}
             | {d.name for d in program.derived})
    lines = []
    for loc, message, *check in getattr(program, "zero_steps", ()):
        word = check[0] if check else "zero-step"
        if word not in ENDLESS_CHECKS:
            continue
        # a zero-step loop's step, where it names only declared values (--param may fix it)
        step = check[1][0] if word == "zero-step" and len(check) > 1 else None
        stated = f" step({step})" if step is not None and step.variables <= known else ""
        lines.append(_located(f"endless {word}{stated} {json.dumps(message)}", loc, locations))
    return lines


def _computed(entry: tuple) -> str:
    """A param the kernel computes in a way the verifier does not model (Program.computed) as
    ``computed NAME LINE``, with ``in (EXPR, ...)`` where a branch chose it on data."""
    name, line, values = entry
    tail = f" in ({', '.join(str(v) + ('' if g is None else f' when {g}') for v, g in values)})" \
        if values else ""
    return f"computed {_n(name)} {line}{tail}"


def _loaded(program: Program, locations: bool) -> list[str]:
    """What the verdict rests on pointers of no known element type (Program.signed_only) as
    ``loaded PTR (TYPE, ...) "WHY"`` lines: the text form reads back qualified (bounded) as the
    kernel is."""
    lines = []
    for loc, pointer, why, types in getattr(program, "signed_only", ()):
        lines.append(_located(f"loaded {_n(pointer)} {_names(tuple(sorted(types)))} "
                              f"{json.dumps(why)}", loc, locations))
    return lines


def _unwritten_pipe(program: Program) -> bool:
    """Whether a reader reads a field (not the closed flag, never unwritten) of a pipe that has
    no write access (a write, TMA copy or maywrite): the one case where ``every_access`` decides
    whether the read is checked (Program.checks_fills)."""
    accesses = [a for part in program.partitions for a in walk_accesses(part.body)]
    written = {a.pipe for a in accesses if a.is_write}
    return any(a.side == "reader" and a.field != CLOSED_FLAG and a.pipe not in written
               for a in accesses)


def _names(names: tuple[str, ...]) -> str:
    return "(" + ", ".join(_n(n) for n in names) + ")"


def _param(p: Param, word: str = "param") -> str:
    text = f"{word} {_n(p.name)}"
    if p.min is None:
        text += " any"
    elif p.min != 0:
        text += f" >= {p.min}"
    if p.max is not None:
        text += f" <= {p.max}"
    return text


def definition_text(d: Definition, c: bool = True, wide: bool = False) -> str:
    """``d`` as a ``def`` line writes it (the parser reads it back to an equal Definition): its
    operations infix (``(N + 63) // 64``) or as calls (``min(N, 4)``, ``int64(N)``; ``add(N,
    1)``, ``sub``, ``mul`` where infix would fold two affine operands into one), each operand
    that is neither a name, a non-negative integer nor a call in parentheses, and an operation
    whose ``c`` / ``wide`` differ from ``c`` / ``wide`` (those of the operation around it; runtime
    and i32 at the top) wrapped in ``constexpr(...)`` / ``runtime(...)`` and ``i64(...)`` /
    ``i32(...)``."""
    text = _operation(d)
    if d.wide != wide:
        text = f"{'i64' if d.wide else 'i32'}({text})"
    if d.c != c:
        text = f"{'runtime' if d.c else 'constexpr'}({text})"
    return text


def _operation(d: Definition) -> str:
    def operand(a: Operand, bare: bool) -> str:
        if isinstance(a, Definition):
            text = definition_text(a, d.c, d.wide)
            call = (a.c != d.c or a.wide != d.wide or a.op in FUNCTIONS or a.op == WIDEN
                    or _folds(a))
            return text if bare or call else f"({text})"
        text = str(a)
        simple = (a.is_const and a.const >= 0) or (not a.const and len(a.terms) == 1
                                                   and a.terms[0][1] == 1)
        return text if bare or simple else f"({text})"

    if d.op in FUNCTIONS or d.op == WIDEN:
        return f"{d.op}({', '.join(operand(a, True) for a in d.args)})"
    a, b = d.args
    if _folds(d):
        return f"{_FORMS[d.op]}({operand(a, True)}, {operand(b, True)})"
    return f"{operand(a, False)} {d.op} {operand(b, False)}"


#: The call that writes a ``+``, ``-`` or ``*`` of two affine operands (infix would fold them).
_FORMS = {"+": "add", "-": "sub", "*": "mul"}


def _folds(d: Definition) -> bool:
    """Whether ``d`` written infix would read back as one affine operand: ``+`` or ``-`` of two
    affine operands, or their product with a constant side."""
    if d.op not in _FORMS or len(d.args) != 2:
        return False
    a, b = d.args
    if not (isinstance(a, Affine) and isinstance(b, Affine)):
        return False
    return d.op != "*" or a.is_const or b.is_const


def _pipe(p: Pipe, width: int) -> str:
    words = [f"pipe {_n(p.name).ljust(width)}", f"capacity={p.capacity}"]
    if p.one_shot:
        words.append("one_shot")
    if p.named:
        words.append("named_barrier")
    if p.readers:
        words.append(f"readers={_names(p.readers)}")
    if p.fields:
        words.append(f"fields={_names(p.fields)}")
    if p.mma:
        words.append(f"mma={_names(p.mma)}")
    return " ".join(words)


def _partition(part: Partition, locations: bool) -> list[str]:
    words = [f"partition {_n(part.name)}"]
    if part.default:
        words.append("default")
    words.append(f"warps={part.warps}")
    if part.regs is not None:
        words.append(f"regs={part.regs}")
    lines = [" ".join(words) + " {"]
    _body(part.body, 1, lines, locations)
    lines.append("}")
    return lines


def _range(s: For) -> str:
    if s.step != 1:
        return f"range({s.start}, {s.stop}, {s.step})"
    if s.start.is_const and s.start.const == 0:
        return f"range({s.stop})"
    return f"range({s.start}, {s.stop})"


def _event(e: Event) -> str:
    sel = []
    if e.reader:
        sel.append(_n(e.reader))
    if e.fields is not None:
        sel.append(f"fields={_names(e.fields)}")
    brackets = f"[{' '.join(sel)}]" if sel else ""
    return f"{_n(e.pipe)}{brackets}.{e.verb}({e.index})"


def _access(a: Access) -> str:
    brackets = f"[{_n(a.reader)}]" if a.reader and a.side == "reader" else ""
    size = f", {a.nbytes}" if a.tma and a.nbytes else ""
    return f"{_n(a.pipe)}{brackets}.{a.verb}({a.index}, {_n(a.field)}{size})"


def _body(body: tuple[Stmt, ...], depth: int, lines: list[str], locations: bool) -> None:
    pad = INDENT * depth
    for s in body:
        if isinstance(s, (Event, Access)):
            lines.append(_located(pad + (_event(s) if isinstance(s, Event) else _access(s)),
                                  s.loc, locations))
        elif isinstance(s, For):
            lines.append(f"{pad}for {_n(s.var)} in {_range(s)} {{")
            _body(s.body, depth + 1, lines, locations)
            lines.append(pad + "}")
        elif isinstance(s, If):
            _if(s, depth, lines, locations, pad + "if")
        else:  # pragma: no cover - Stmt is a closed union
            raise TypeError(f"not a statement: {s!r}")


def _if(s: If, depth: int, lines: list[str], locations: bool, head: str) -> None:
    pad = INDENT * depth
    lines.append(f"{head} {s.cond} {{")
    _body(s.then, depth + 1, lines, locations)
    if len(s.orelse) == 1 and isinstance(s.orelse[0], If):
        _if(s.orelse[0], depth, lines, locations, pad + "} else if")
    elif s.orelse:
        lines.append(pad + "} else {")
        _body(s.orelse, depth + 1, lines, locations)
        lines.append(pad + "}")
    else:
        lines.append(pad + "}")


def without_locations(node: Any) -> Any:
    """``node`` (a Module, Program or any IR node, or a tuple of them) with every ``loc`` set to
    NOLOC and ``Module.path`` to None: for comparing programs that came from different sources."""
    if isinstance(node, tuple):
        return tuple(without_locations(x) for x in node)
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        changes = {}
        for f in dataclasses.fields(node):
            value = getattr(node, f.name)
            if f.name == "loc":
                changes["loc"] = NOLOC
            elif isinstance(node, Module) and f.name == "path":
                changes["path"] = None
            elif isinstance(value, tuple) or (dataclasses.is_dataclass(value)
                                              and hasattr(value, "loc")):
                changes[f.name] = without_locations(value)
        return dataclasses.replace(node, **changes) if changes else node
    return node
