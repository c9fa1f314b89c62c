"""The writer's reads of its own slot are reads (Pipe IR ``P.readback(i, f)``), checked by rule 7.

Inside its window (``acquire(i)`` .. ``commit(i)``) the writer may load what it wrote: a store of
``f`` followed by a load of ``f`` in the same window is legal. A load of a field the window has
not written yet reads uninitialised shared memory on the first use of the stage and another
index's data on later ones, because an acquire starts the slot unwritten for the writer
(docs/semantics.md, rule 7): a copy out of a field nothing writes, or a running sum kept in the
slot, is rejected with check ``unwritten-field`` at the line of the load, by the verifier (its fast
path and its wording path alike) and by the simulator.
"""

from __future__ import annotations

import itertools
import textwrap
from pathlib import Path

import pytest

from tle_compiler.cli.dump import main as tle_dump
from tle_compiler.frontend import read_source
from tle_compiler.ir import Access, Affine, Compare, Event, For, If, Loc, Param, Partition, Pipe, \
    Program
from tle_compiler.ir.expr import ModCompare
from tle_compiler.ir.nodes import walk_accesses
from tle_compiler.ir.parser import parse_module
from tle_compiler.ir.printer import print_program
from tle_compiler.ir.tracegen import compile_program
from tle_compiler.passes import verify
from tle_compiler.passes.context import PassContext
from tle_compiler.passes.instances import Checker
from tle_compiler.passes.verify_protocol import check_structure
from tle_compiler.semantics.simulator import simulate

# ------------------------------------------------------------------ kernels


def kernel(capacity: int, writer_window: str) -> str:
    """A pipe ``p`` of fields t and u, ``capacity`` stages, readers a (in the writer's partition,
    a self-fed pipe) and b (another partition), both reading t. ``writer_window`` is the body of
    the writer's window, between ``s = w.acquire(i)`` and ``w.commit(i)``."""
    window = textwrap.indent(textwrap.dedent(writer_window).strip("\n"), " " * 8)
    return f'''import triton.language as tl
import tle_compiler as tle


@tle.jit(num_warps=4)
def k(x_ptr, out_ptr, N):
    tle.assume(N <= 65536)  # out's rows i * 4096 stay in int32
    p = tle.pipe(capacity={capacity}, readers=("a", "b"),
                 t=tle.gpu.alloc([{capacity}, 64, 64], tl.float32),
                 u=tle.gpu.alloc([{capacity}, 64, 64], tl.float32))
    tle.gpu.warp_specialize([(pa, (p, x_ptr, out_ptr, N)), (pb, (p, out_ptr, N))], [4], [232])


def pa(p, x_ptr, out_ptr, N):
    w = p.writer()
    r = p.reader("a", fields=("t",))
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    for i in range(N):
        s = w.acquire(i)
{window}
        w.commit(i)
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.t))
        r.release(i)
        tl.store(out_ptr + i * 4096 + offs, v)


def pb(p, out_ptr, N):
    r = p.reader("b", fields=("t",))
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    for i in range(N):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.t))
        r.release(i)
        tl.store(out_ptr + (N + i) * 4096 + offs, v)
'''


#: t is filled from u, which nothing ever writes
COPY_UNWRITTEN = """
tl.store(tle.gpu.local_ptr(s.t), tl.load(tle.gpu.local_ptr(s.u)))
"""
#: a running sum kept in the slot: t is read before this window wrote it
ACCUMULATE = """
tl.store(tle.gpu.local_ptr(s.t), tl.load(tle.gpu.local_ptr(s.t)) + tl.load(x_ptr + i * 4096 + offs))
"""
#: t is stored, then read back (and u filled from it) in the same window: legal
READ_AFTER_WRITE = """
tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + i * 4096 + offs))
tl.store(tle.gpu.local_ptr(s.u), tl.load(tle.gpu.local_ptr(s.t)) * 2.0)
tl.store(tle.gpu.local_ptr(s.t), tl.load(tle.gpu.local_ptr(s.u)) + 1.0)
"""
#: t is written only on the first use of each stage of a 2-stage ring, read back in every window:
#: from i = 2 on the window reads what an earlier window of its stage left there
FIRST_USE_ONLY = """
if i < 2:
    tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + i * 4096 + offs))
tl.store(tle.gpu.local_ptr(s.u), tl.load(tle.gpu.local_ptr(s.t)))
"""


def line_of(text: str, needle: str) -> int:
    (line,) = [n for n, ln in enumerate(text.splitlines(), 1) if needle in ln]
    return line


def dump(path: Path, capsys) -> tuple[int, str, str]:
    capsys.readouterr()
    code = tle_dump([str(path), "-q"])
    out, err = capsys.readouterr()
    return code, out, err


def program_of(text: str, name: str = "k.py"):
    (program,) = read_source(text, name).kernels
    return program


@pytest.mark.parametrize("capacity", [1, 2])
@pytest.mark.parametrize("window, load", [
    (COPY_UNWRITTEN, "tl.load(tle.gpu.local_ptr(s.u))"),
    (ACCUMULATE, "tl.load(tle.gpu.local_ptr(s.t))"),
], ids=["copy-unwritten", "accumulate"])
def test_a_read_of_a_field_the_window_did_not_write_is_rejected_at_its_line(
        tmp_path, capsys, capacity, window, load):
    text = kernel(capacity, window)
    path = tmp_path / "writer_reads.py"
    path.write_text(text)
    line = line_of(text, load)
    code, _, err = dump(path, capsys)
    assert code == 1, err
    assert f"{path}:{line}: error: the writer of pipe 'p' (partition 'pa') reads back" in err
    assert "[unwritten-field]" in err and "at index 0 (stage 0)" in err
    assert "verified" not in err
    # the simulator agrees at the first value that runs the window
    program = program_of(text, str(path))
    assert simulate(program, {"N": 0}).ok
    assert {(e.kind, e.loc.line) for e in simulate(program, {"N": 1}).errors} == \
        {("unwritten-field", line)}


@pytest.mark.parametrize("capacity", [1, 2])
def test_the_frontend_records_a_writer_load_as_a_readback(capacity):
    text = kernel(capacity, COPY_UNWRITTEN)
    program = program_of(text)
    line = line_of(text, "tl.load(tle.gpu.local_ptr(s.u))")
    writer = [(a.verb, a.field, a.op, a.loc.line) for a in walk_accesses(program.partitions[0].body)
              if a.side == "writer"]
    assert writer == [("readback", "u", "tl.load", line), ("write", "t", "tl.store", line)]
    assert "    p.readback(i, u)\n    p.write(i, t)\n" in print_program(program)


@pytest.mark.parametrize("capacity", [1, 2])
def test_reading_back_what_the_window_wrote_is_verified(tmp_path, capsys, capacity):
    text = kernel(capacity, READ_AFTER_WRITE)
    path = tmp_path / "read_after_write.py"
    path.write_text(text)
    code, _, err = dump(path, capsys)
    assert code == 0, err
    assert "verified for every value of N" in err
    program = program_of(text, str(path))
    verbs = [a.verb + " " + a.field for a in walk_accesses(program.partitions[0].body)
             if a.side == "writer"]
    # the second store of t repeats an access of this window: recorded once
    assert verbs == ["write t", "readback t", "write u", "readback u"]
    for n in range(4):
        assert simulate(program, {"N": n}).ok, n


def test_an_earlier_window_of_the_stage_does_not_count(tmp_path, capsys):
    """Capacity 2: t is written only at i < 2 (the first use of each stage) and read back in every
    window. At i = 2 the stage still holds index 0's t, but the window of acquire(2) wrote none:
    rejected, the witness the first such index."""
    text = kernel(2, FIRST_USE_ONLY)
    path = tmp_path / "first_use_only.py"
    path.write_text(text)
    line = line_of(text, "tl.load(tle.gpu.local_ptr(s.t))")
    code, _, err = dump(path, capsys)
    assert code == 1, err
    assert f"{path}:{line}: error:" in err and "[unwritten-field]" in err
    assert "at index 2 (stage 0)" in err and "(when N=3, i=2)" in err
    assert "earlier window of stage 0" in err
    program = program_of(text, str(path))
    for n in range(3):
        assert simulate(program, {"N": n}).ok, n
    assert {e.kind for e in simulate(program, {"N": 3}).errors} == {"unwritten-field"}


# ------------------------------------------------------------------ the text form

RING = """kernel ring
param N
pipe kv capacity=2 fields=(x, acc)
partition w default warps=4 {{
  for t in range(N) {{
    kv.acquire(t)
{window}
    kv.commit(t)
  }}
}}
partition r warps=4 {{
  for t in range(N) {{
    kv.wait(t)
    kv.read(t, acc)
    kv.release(t)
  }}
}}
"""


def ring(*window: str) -> str:
    return RING.format(window="\n".join("    " + s for s in window))


def test_readback_round_trips_through_the_text_form():
    text = ring("kv.write(t, acc)", "kv.readback(t, acc)", "kv.write(t, x)")
    (program,) = parse_module(text, "r.pipe").kernels
    accesses = list(walk_accesses(program.partitions[0].body))
    assert [(a.side, a.verb, a.readback, a.field) for a in accesses] == [
        ("writer", "write", False, "acc"), ("writer", "readback", True, "acc"),
        ("writer", "write", False, "x")]
    printed = print_program(program)
    assert "    kv.readback(t, acc)\n" in printed
    (again,) = parse_module(printed, "r.pipe").kernels
    assert print_program(again) == printed
    assert [a.readback for a in walk_accesses(again.partitions[0].body)] == [False, True, False]
    # the write and the readback of one field and index are different accesses
    assert accesses[0] != accesses[1]


def test_a_readback_takes_no_reader_name():
    from tle_compiler.diagnostics import TleError

    with pytest.raises(TleError, match="'readback' is the writer's access"):
        parse_module(ring("kv.write(t, acc)", "kv[a].readback(t, acc)"), "r.pipe")


def test_a_readback_after_the_commit_is_outside_its_window():
    text = ring("kv.write(t, acc)").replace(
        "    kv.commit(t)\n", "    kv.commit(t)\n    kv.readback(t, acc)\n", 1)
    (program,) = parse_module(text, "r.pipe").kernels
    ctx = verify(program, params={"N": 1})
    assert [d.check for d in ctx.errors] == ["access-outside-window"]
    assert simulate(program, {"N": 1}).kinds == {"access-outside-window"}


# ------------------------------------------------------------------ both engines, every placement

A = Affine.of
LOC = Loc("x.pipe", 1)
#: conditions a window item may run under (None: always)
CONDS = {None: lambda i: True, "i<1": lambda i: i < 1, "even": lambda i: i % 2 == 0}


def _cond(name):
    if name == "i<1":
        return Compare(A("i"), "<", A(1))
    return ModCompare(A("i"), 2, "==", 0)


def _window_program(items, capacity):
    """for i in range(N): acquire(i); ITEMS; commit(i) / wait(i); read(i, x); release(i), where
    each item is (verb, condition): a write or a readback of x at line 50 + its position."""
    body = [Event("acquire", "kv", A("i"), loc=LOC)]
    for n, (verb, cond) in enumerate(items):
        a = Access("writer", "kv", "x", A("i"), None, "", Loc("x.pipe", 50 + n),
                   readback=verb == "readback")
        body.append(a if cond is None else If(_cond(cond), (a,), (), LOC))
    body.append(Event("commit", "kv", A("i"), loc=LOC))
    reader = (Event("wait", "kv", A("i"), loc=LOC), Access("reader", "kv", "x", A("i"), loc=LOC),
              Event("release", "kv", A("i"), loc=LOC))
    loop = lambda b: (For("i", A(0), A("N"), 1, tuple(b)),)
    return Program("k", (Param("N"),), (Pipe("kv", capacity, ("x",)),),
                   (Partition("w", loop(body), default=True), Partition("r", loop(reader))))


def _first_fault(items, n):
    """The (index, line) of the first readback that runs before any write of its window, by the
    rule (a reader's read of x faults too when no window up to its index on its stage wrote x:
    reported as None)."""
    for i in range(n):
        wrote = False
        for k, (verb, cond) in enumerate(items):
            if not CONDS[cond](i):
                continue
            if verb == "write":
                wrote = True
            elif not wrote:
                return (i, 50 + k)
    return None


ITEMS = [(v, c) for v in ("write", "readback") for c in CONDS]


@pytest.mark.parametrize("capacity", [1, 2])
@pytest.mark.parametrize("size", [1, 2, 3])
def test_every_order_of_writes_and_readbacks_matches_the_rule(capacity, size):
    """Every sequence of writes and readbacks of x (each always, at i < 1, or at even i) in the
    writer's window: the verifier's fast path (Checker.clean), its wording path (Checker.check),
    verify() and the simulator all reject exactly the N where a readback runs before any write of
    its window, the first at the readback's line."""
    checked = faulty = 0
    for items in itertools.product(ITEMS, repeat=size):
        if not any(v == "readback" for v, _ in items):
            continue
        program = _window_program(items, capacity)
        ctx = PassContext(program)
        check_structure(ctx)
        assert ctx.ok
        cp = compile_program(program)
        checker = Checker(cp, ctx.roles())
        for n in range(5):
            traces = cp.run({"N": n}, 10_000)
            res = checker.check(traces)
            clean = not res.problems and res.deadlock is None
            assert checker.clean(traces) == clean, (items, n)
            fault = _first_fault(items, n)
            readback_problems = [p for p in res.problems if p.message.startswith("the writer")]
            sim = simulate(program, {"N": n})
            sim_readback = {e.loc.line for e in sim.errors
                            if e.kind == "unwritten-field" and "readback" in e.message}
            where = (items, capacity, n)
            if fault is None:
                assert not readback_problems and not sim_readback, where
            else:
                assert readback_problems and readback_problems[0].check == "unwritten-field", where
                assert cp.stmts[traces[0][0][readback_problems[0].at[1]]].loc.line == fault[1]
                assert fault[1] in sim_readback, where
            assert verify(program, params={"N": n}).ok == sim.ok, where
            checked += 1
            faulty += fault is not None
    assert checked and faulty
