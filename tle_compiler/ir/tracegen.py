"""Compile a Program's partitions into Python functions that produce their event traces fast.

The instance checks (passes/instances.py) expand every partition for many param values; walking
the IR tree per event (ir/unroll.py) costs microseconds per event. Here each partition body becomes
one generated Python function of nested ``for``/``if`` statements that appends, per event or slot
access, the statement's number and its evaluated index to two flat lists: tens of nanoseconds per
event. The generated code follows the IR exactly (Python ``range`` semantics, Python ``%`` or C's
remainder as the condition says), so the traces equal ``ir.unroll.unroll``'s (a test holds the two
equal on random programs). Loop variables are not recorded; diagnostics re-expand the one trace
they describe with ``ir.unroll`` to name them.

The work of a run is what the caller's budget pays for: per partition, the larger of its events
and its loop iterations. Counting events alone let a loop that emits nothing in most iterations
(``for i in range(N): if i % 1000000 == 0: ...``) spin for hours inside a budget of a few million
events, one value after another. A body nested deeper than Python compiles (20 nested loops, 100
indentation levels, 200 nested parentheses) is run by a small interpreter of the same IR instead,
which gives the same traces and the same work.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Union

from .expr import Affine, BoolOp, Compare, Cond, ModCompare, Not, c_rem
from .nodes import Access, Event, For, If, Program, Stmt


class TraceBudgetExceeded(Exception):
    """A trace grew beyond the events the caller allows (the verification budget)."""

    def __init__(self, partition: str, limit: int):
        self.partition = partition
        self.limit = limit
        super().__init__(f"partition '{partition}' expands to more than {limit} events")


def _py(e: Affine, names: Mapping[str, str]) -> str:
    """``e`` as a Python expression: its terms (a coefficient 1 unwritten), then its constant
    when not 0; ``(0)`` for the affine 0."""
    parts = [names[v] if c == 1 else f"{c}*{names[v]}" for v, c in e.terms]
    if e.const or not parts:
        parts.append(str(e.const))
    return "(" + " + ".join(parts) + ")"


def _cond(c: Cond, names: Mapping[str, str]) -> str:
    if isinstance(c, Compare):
        return f"({_py(c.lhs, names)} {c.op} {_py(c.rhs, names)})"
    if isinstance(c, ModCompare):
        m = f"_crem({_py(c.expr, names)}, {c.modulus})" if c.c else \
            f"({_py(c.expr, names)} % {c.modulus})"
        return f"({m} {c.op} {c.rem})"
    if isinstance(c, BoolOp):
        return "(" + f" {c.op} ".join(_cond(i, names) for i in c.items) + ")"
    if isinstance(c, Not):
        return f"(not {_cond(c.item, names)})"
    raise TypeError(f"not a condition: {c!r}")  # pragma: no cover


@dataclass
class CompiledProgram:
    """``stmts[k]`` is the Event or Access numbered ``k``; ``run(params, limit)`` returns, per
    partition (in program order), the pair (statement numbers, indices) of its trace."""

    program: Program
    stmts: list[Union[Event, Access]]
    functions: list[Callable]
    source: str

    #: the work of the last ``run`` (the sum over partitions of max(events, loop iterations)):
    #: what a budget is charged for it
    work: int = 0

    def run(self, params: Mapping[str, int], limit: int) -> list[tuple[list[int], list[int]]]:
        out = []
        work = 0
        for part, fn in zip(self.program.partitions, self.functions):
            ids: list[int] = []
            idx: list[int] = []
            steps = fn(params, ids, idx, limit)
            if steps < 0:
                raise TraceBudgetExceeded(part.name, limit)
            work += max(len(ids), steps)
            out.append((ids, idx))
        self.work = work
        return out


def compile_program(program: Program) -> CompiledProgram:
    try:
        return _generated(program)
    except (SyntaxError, RecursionError, MemoryError):
        # nested deeper than CPython compiles (SyntaxError "too many statically nested blocks",
        # IndentationError, "too many nested parentheses") or than the generator's recursion
        # reaches: interpret the IR instead, numbering the statements in the same order
        stmts: list[Union[Event, Access]] = []
        number: dict[int, int] = {}
        pending = [list(part.body)[::-1] for part in program.partitions][::-1]
        stack = [s for block in pending for s in block]
        while stack:
            s = stack.pop()
            if isinstance(s, (Event, Access)):
                if id(s) not in number:
                    number[id(s)] = len(stmts)
                    stmts.append(s)
            elif isinstance(s, For):
                stack.extend(reversed(s.body))
            elif isinstance(s, If):
                stack.extend(reversed(s.then + s.orelse))
        functions = [_interpreter(part.body, number) for part in program.partitions]
        return CompiledProgram(program, stmts, functions, "")


def _generated(program: Program) -> CompiledProgram:
    stmts: list[Union[Event, Access]] = []
    number: dict[int, int] = {}
    lines: list[str] = ["def _make(_crem):"]
    for k, part in enumerate(program.partitions):
        names = {p.name: f"P_{i}" for i, p in enumerate(program.params)}
        body: list[str] = []
        counter = [0]

        def emit(block: tuple[Stmt, ...], depth: int, names: dict[str, str]) -> None:
            pad = "    " * depth
            emitted = False
            run: list[tuple[int, str]] = []  # consecutive events: (number, index expression)

            def flush() -> None:
                # a run of events is appended by one call per list (the same lists, in the same
                # order, as one append per event); each distinct index is computed once
                if len(run) == 1:
                    body.append(f"{pad}ids_append({run[0][0]}); idx_append({run[0][1]})")
                elif run:
                    shared = {}
                    for _, x in run:
                        shared.setdefault(x, f"t_{len(shared)}")
                    if len(shared) < len(run):
                        body.append(f"{pad}" + "; ".join(f"{t} = {x}" for x, t in shared.items()))
                        xs = [shared[x] for _, x in run]
                    else:
                        xs = [x for _, x in run]
                    body.append(f"{pad}ids_extend(({', '.join(str(n) for n, _ in run)},)); "
                                f"idx_extend(({', '.join(xs)},))")
                run.clear()

            for s in block:
                if isinstance(s, (Event, Access)):
                    key = id(s)
                    if key not in number:
                        number[key] = len(stmts)
                        stmts.append(s)
                    run.append((number[key], _py(s.index, names)))
                    emitted = True
                    continue
                flush()
                if isinstance(s, For):
                    counter[0] += 1
                    var = f"v_{counter[0]}"
                    inner = dict(names)
                    inner[s.var] = var
                    body.append(f"{pad}for {var} in range({_py(s.start, names)}, "
                                f"{_py(s.stop, names)}, {s.step}):")
                    # the budget is checked once per iteration of every loop, and the iterations
                    # are counted: a loop that emits no event still pays for its work
                    body.append(f"{pad}    steps += 1")
                    body.append(f"{pad}    if steps > limit or len(ids) > limit: return -1")
                    emit(s.body, depth + 1, inner)
                    emitted = True
                elif isinstance(s, If):
                    body.append(f"{pad}if {_cond(s.cond, names)}:")
                    n = len(body)
                    emit(s.then, depth + 1, names)
                    if len(body) == n:
                        body.append(f"{pad}    pass")
                    if s.orelse:
                        body.append(f"{pad}else:")
                        n = len(body)
                        emit(s.orelse, depth + 1, names)
                        if len(body) == n:
                            body.append(f"{pad}    pass")
                    emitted = True
            flush()
            if not emitted:
                body.append(f"{pad}pass")

        emit(part.body, 2, names)
        lines.append(f"    def part_{k}(params, ids, idx, limit):")
        lines.append("        ids_append = ids.append; idx_append = idx.append; steps = 0")
        lines.append("        ids_extend = ids.extend; idx_extend = idx.extend")
        for i, p in enumerate(program.params):
            lines.append(f"        P_{i} = params[{p.name!r}]")
        lines += body
        lines.append("        return -1 if len(ids) > limit else steps")
    lines.append(f"    return [{', '.join(f'part_{k}' for k in range(len(program.partitions)))}]")
    source = "\n".join(lines) + "\n"
    scope: dict = {}
    exec(compile(source, f"<trace {program.name}>", "exec"), scope)
    return CompiledProgram(program, stmts, scope["_make"](c_rem), source)


class _Over(Exception):
    """The budget ran out inside ``_interpreter``'s walk."""


def _interpreter(body: tuple[Stmt, ...], number: Mapping[int, int]) -> Callable:
    """A partition's trace function (the generated one's contract: append statement numbers and
    indices, return the loop iterations run, or -1 past ``limit``) that walks the IR; used where
    the generated code is nested too deeply for Python to compile it."""

    def run(params: Mapping[str, int], ids: list[int], idx: list[int], limit: int) -> int:
        env = dict(params)
        steps = [0]

        def walk(block: tuple[Stmt, ...]) -> None:
            for s in block:
                if isinstance(s, (Event, Access)):
                    ids.append(number[id(s)])
                    idx.append(s.index.eval(env))
                elif isinstance(s, For):
                    saved = env.get(s.var)
                    for v in range(s.start.eval(env), s.stop.eval(env), s.step):
                        steps[0] += 1
                        if steps[0] > limit or len(ids) > limit:
                            raise _Over
                        env[s.var] = v
                        walk(s.body)
                    if saved is None:
                        env.pop(s.var, None)
                    else:
                        env[s.var] = saved
                elif isinstance(s, If):
                    walk(s.then if s.cond.eval(env) else s.orelse)

        try:
            walk(body)
        except _Over:
            return -1
        return -1 if len(ids) > limit else steps[0]

    return run
