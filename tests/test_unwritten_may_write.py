"""Writes that may not run fill nothing, and a Python kernel's pipe that nothing writes is no skeleton.

A store under control flow whose runs the protocol does not model (an ``if`` on a loaded value, a
``while``, a loop over a loaded count) is recorded once where the block stands, as a write that
may not run (Pipe IR ``P.maywrite(i, f)``); so is a store through a pointer ``tl.where`` chose.
It must lie in its window, but for rule 7 (docs/semantics.md) it does not write its field: a
reader's read of a field only such writes touch, or the writer's read-back after one, is
``unwritten-field``. An unconditional write of the field in the same window still fills it, and
``if data | affine:`` surely runs its branch where the affine part holds.

A ``.pipe`` pipe without any write access is a protocol skeleton (its reads checked against their
windows only); a Python kernel's Program records every access (``Program.every_access``), so a
pipe its writer never stores into is read uninitialised: ``unwritten-field`` at the read.

The verifier's fast path (Checker.clean), its wording path (Checker.check), verify() and the
simulator agree on all of it.
"""

from __future__ import annotations

import dataclasses
import textwrap
from pathlib import Path

import pytest

from tle_compiler.cli.dump import main as tle_dump
from tle_compiler.frontend import read_source
from tle_compiler.ir.nodes import walk_accesses
from tle_compiler.ir.parser import parse_module
from tle_compiler.ir.printer import print_program, without_locations
from tle_compiler.ir.tracegen import compile_program
from tle_compiler.passes import verify
from tle_compiler.passes.context import PassContext
from tle_compiler.passes.instances import Checker
from tle_compiler.passes.verify_protocol import check_structure
from tle_compiler.semantics.simulator import simulate


def kernel(window: str, capacity: int = 2, prelude: str = "") -> str:
    """A pipe ``p`` of fields t and u; the writer runs ``window`` between ``s = w.acquire(i)`` and
    ``w.commit(i)`` (``prelude`` before its loop), the reader loads t in every window."""
    body = textwrap.indent(textwrap.dedent(window).strip("\n"), " " * 8)
    pre = textwrap.indent(textwrap.dedent(prelude).strip("\n"), " " * 4)
    return f'''import triton.language as tl
import tle_compiler as tle


@tle.jit(num_warps=4)
def k(x_ptr, flag_ptr, out_ptr, N):
    tle.assume(N >= 0)
    p = tle.pipe(capacity={capacity}, t=tle.gpu.alloc([{capacity}, 64], tl.float32),
                 u=tle.gpu.alloc([{capacity}, 64], tl.float32))
    tle.gpu.warp_specialize([(prod, (p, x_ptr, flag_ptr, out_ptr, N)), (cons, (p, out_ptr, N))],
                            [4], [232])


def prod(p, x_ptr, flag_ptr, out_ptr, N):
    offs = tl.arange(0, 64)
    w = p.writer()
{pre}
    for i in range(N):
        s = w.acquire(i)
{body}
        w.commit(i)


def cons(p, out_ptr, N):
    offs = tl.arange(0, 64)
    r = p.reader()
    acc = tl.zeros([64], tl.float32)
    for i in range(N):
        res = r.wait(i)
        acc += tl.load(tle.gpu.local_ptr(res.slot.t))
        r.release(i)
    tl.store(out_ptr + offs, acc)
'''


STORE_T = "tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + i * 64 + offs))"
READ_T = "acc += tl.load(tle.gpu.local_ptr(res.slot.t))"

#: the writer's only store of t stands under control flow on data
DATA_IF = f"""
if tl.load(flag_ptr + i) != 0:
    {STORE_T}
"""
DATA_WHILE = f"""
n = tl.load(flag_ptr + i).to(tl.int32)  # an integer counter whatever flag_ptr points to
while n > 0:
    {STORE_T}
    n -= 1
"""
DATA_LOOP = f"""
for kk in range(tl.load(flag_ptr + i)):
    {STORE_T}
"""
#: a pointer tl.where chose between t and u
WHERE = """
dst = tl.where(tl.load(flag_ptr + i) != 0, tle.gpu.local_ptr(s.t), tle.gpu.local_ptr(s.u))
tl.store(dst, tl.load(x_ptr + i * 64 + offs))
"""
#: the store under a data `if`, then a read-back of t in the same window
READBACK = f"""
if tl.load(flag_ptr + i) != 0:
    {STORE_T}
tl.store(out_ptr + i * 64 + offs, tl.load(tle.gpu.local_ptr(s.t)))
"""
#: no store at all: the writer only acquires and commits
NO_WRITE = """
pass
"""
#: the only store sits under a condition on a constexpr that is false
DEAD_IF = f"""
if BM < 0:
    {STORE_T}
"""


def line_of(text: str, needle: str) -> int:
    (line,) = [n for n, ln in enumerate(text.splitlines(), 1) if needle in ln]
    return line


def dump(path: Path, capsys) -> tuple[int, str]:
    capsys.readouterr()
    code = tle_dump([str(path), "-q"])
    return code, capsys.readouterr().err


def program_of(text: str, name: str = "k.py"):
    (program,) = read_source(text, name).kernels
    return program


def agree(program, values=range(4)) -> set:
    """Check the fast path, the wording path, verify() and the simulator agree at each value of
    N; return the lines of the unwritten-field faults the wording path found."""
    ctx = PassContext(program)
    check_structure(ctx)
    assert ctx.ok
    cp = compile_program(program)
    checker = Checker(cp, ctx.roles())
    lines = set()
    for n in values:
        traces = cp.run({"N": n}, 10_000)
        res = checker.check(traces)
        clean = not res.problems and res.deadlock is None
        assert checker.clean(traces) == clean, n
        sim = simulate(program, {"N": n})
        assert sim.ok == clean, (n, sim.errors, res.problems)
        assert verify(program, params={"N": n}).ok == clean, n
        found = {cp.stmts[traces[p.at[0]][0][p.at[1]]].loc.line for p in res.problems
                 if p.check == "unwritten-field"}
        # the checker words the writer's faults first (a read-back), the simulator all of them
        sim_found = {e.loc.line for e in sim.errors if e.kind == "unwritten-field"}
        assert found <= sim_found and bool(found) == bool(sim_found), (n, found, sim_found)
        lines |= found
    return lines


@pytest.mark.parametrize("window, at", [
    (DATA_IF, READ_T), (DATA_WHILE, READ_T), (DATA_LOOP, READ_T), (WHERE, READ_T),
    (READBACK, "tl.store(out_ptr + i * 64 + offs, tl.load(tle.gpu.local_ptr(s.t)))"),
    (NO_WRITE, READ_T), (DEAD_IF, READ_T),
], ids=["data-if", "while", "data-loop", "where", "readback", "no-write", "dead-if"])
def test_a_field_no_write_surely_fills_is_read_unwritten(tmp_path, capsys, window, at):
    text = kernel(window, prelude="BM: tl.constexpr = 64" if window is DEAD_IF else "")
    path = tmp_path / "k.py"
    path.write_text(text)
    code, err = dump(path, capsys)
    assert code == 1, err
    assert f"{path}:{line_of(text, at)}: error: " in err and "[unwritten-field]" in err, err
    assert "verified" not in err
    program = program_of(text, str(path))
    assert line_of(text, at) in agree(program)


@pytest.mark.parametrize("window", [DATA_IF, DATA_WHILE, DATA_LOOP, WHERE, READBACK],
                         ids=["data-if", "while", "data-loop", "where", "readback"])
@pytest.mark.parametrize("before", [True, False], ids=["sure-first", "sure-last"])
def test_a_write_that_surely_runs_in_the_same_window_still_fills(tmp_path, capsys, window,
                                                                  before):
    sure = "tl.store(tle.gpu.local_ptr(s.t), tl.zeros([64], tl.float32))"
    lines = textwrap.dedent(window).strip("\n").splitlines()
    if window is READBACK and not before:  # the sure write must come before the read-back
        lines.insert(len(lines) - 1, sure)
    else:
        lines = [sure] + lines if before else lines + [sure]
    text = kernel("\n".join(lines))
    path = tmp_path / "k.py"
    path.write_text(text)
    code, err = dump(path, capsys)
    if window is WHERE:
        # the protocol is right, but the lowering does not translate a store through a
        # tl.where of two slot pointers, a refusal no argument types lift: since adversarial
        # round 30 it rejects this kernel of no DEFAULT_CONFIG (it was said, the verdict kept);
        # since lowering adversarial round 19 in words that name the tl.where (it said "a
        # scalar pointer")
        assert code == 1 and "error: lowering: `tl.where` of a shared-memory pointer" in err, \
            err
        assert "[unwritten-field]" not in err, err
    else:
        assert code == 0, err
    assert not agree(program_of(text, str(path)))


def test_the_frontend_records_maywrite_and_a_sure_write_after_it_as_one_write():
    accesses = [a for part in program_of(kernel(DATA_IF)).partitions
                for a in walk_accesses(part.body) if a.side == "writer"]
    assert [(a.field, a.verb) for a in accesses] == [("t", "maywrite")]
    # a pointer only passed to a tl function, then stored through: one write, at the first touch
    text = kernel("""
    q = tl.multiple_of(tle.gpu.local_ptr(s.t), 16)
    tl.store(q, tl.load(x_ptr + i * 64 + offs))
    """)
    accesses = [a for part in program_of(text).partitions
                for a in walk_accesses(part.body) if a.side == "writer"]
    assert [(a.field, a.verb) for a in accesses] == [("t", "write")]


@pytest.mark.parametrize("cond, ok", [
    ("(tl.load(flag_ptr + i) != 0) | (i == 0)", True),
    ("(i == 0) or (tl.load(flag_ptr + i) != 0)", True),
    ("(tl.load(flag_ptr + i) != 0) | (i == 1)", False),
])
def test_an_affine_disjunct_makes_the_branch_sure_where_it_holds(tmp_path, capsys, cond, ok):
    """Capacity 1: a field written at index 0 stays in the slot, so ``data | (i == 0)`` fills it
    for every later read; ``data | (i == 1)`` leaves index 0 to the data."""
    text = kernel(f"if {cond}:\n    {STORE_T}", capacity=1)
    path = tmp_path / "k.py"
    path.write_text(text)
    code, err = dump(path, capsys)
    assert code == (0 if ok else 1), err
    assert bool(agree(program_of(text, str(path)))) != ok


SKELETON = """
kernel ring
param N

pipe p capacity=2 fields=(t)

partition prod default warps=4 {
  for i in range(N) {
    p.acquire(i)
    p.commit(i)
  }
}

partition cons warps=4 regs=232 {
  for i in range(N) {
    p.wait(i)
    p.read(i, t)
    p.release(i)
  }
}
"""


def test_a_pipe_file_without_writes_stays_a_skeleton_but_a_python_kernel_does_not():
    (program,) = parse_module(SKELETON).kernels
    assert not program.every_access
    assert verify(program).ok
    assert not agree(program)
    # the same protocol as a Python kernel reads it: every access recorded, so t is unwritten
    python = dataclasses.replace(program, every_access=True)
    assert not verify(python).ok
    assert agree(python)
    assert program_of(kernel(NO_WRITE)).every_access


def test_maywrite_round_trips_through_the_text_form_and_fills_nothing():
    text = SKELETON.replace("    p.acquire(i)\n", "    p.acquire(i)\n    p.maywrite(i, t)\n")
    (program,) = parse_module(text).kernels
    (a,) = [a for part in program.partitions for a in walk_accesses(part.body)
            if a.side == "writer"]
    assert a.may and a.is_write and not a.fills
    assert "p.maywrite(i, t)" in print_program(program)
    assert without_locations(parse_module(print_program(program)).kernels[0]) == \
        without_locations(program)
    assert not verify(program).ok and agree(program)
    # outside its window it is an access-outside-window, like any write
    late = SKELETON.replace("    p.commit(i)\n", "    p.commit(i)\n    p.maywrite(i, t)\n")
    (program,) = parse_module(late).kernels
    checks = {d.check for d in verify(program).diagnostics}
    assert "access-outside-window" in checks
