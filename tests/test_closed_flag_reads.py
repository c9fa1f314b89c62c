"""`res.is_closed` reads the slot's closed flag, so it is a slot access checked in its window.

The flag lives in shared memory, one per stage: every acquire of the stage clears it and a close
sets it, and the lowering loads it where `res.is_closed` stands. Read after `release(i)`, it may be
the flag of a later index of the same stage (the writer's close), so a tile that was not the
closing one reads as closed. The frontend records the read as `P.read(i, is_closed)`; the
verifier's window checks and the simulator treat it like a field read that every reader sees and
that is never unwritten (tests/cases/closed_flag_after_release, closed_flag_window)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tle_compiler.diagnostics import TleError
from tle_compiler.frontend import read_source
from tle_compiler.ir.nodes import CLOSED_FLAG, walk_accesses
from tle_compiler.ir.parser import parse_module
from tle_compiler.passes import verify
from tle_compiler.semantics.simulator import StructuralError, simulate

CASES = Path(__file__).parent / "cases"


def _program(name: str):
    (program,) = read_source((CASES / name).read_text(), name).kernels
    return program


def test_the_frontend_records_the_flag_read_at_its_line():
    program = _program("closed_flag_after_release.bad.py")
    reads = [a for part in program.partitions for a in walk_accesses(part.body)
             if a.field == CLOSED_FLAG]
    assert [(a.side, a.pipe, str(a.index), a.loc.line) for a in reads] == \
        [("reader", "ring", "t", 37)]


def test_verifier_and_simulator_reject_the_read_after_release():
    program = _program("closed_flag_after_release.bad.py")
    v = verify(program)
    assert not v.ok
    assert {(e.check, e.loc.line) for e in v.errors} == {("access-outside-window", 37)}
    # the simulator runs the reader's late read at N_TILES = 1 outside its window, and at
    # N_TILES = 2 some interleaving finds the stage reused by the writer's close
    kinds = {e.kind for e in simulate(program, {"N_TILES": 2}).errors if e.loc.line == 37}
    assert "access-outside-window" in kinds


def test_reads_inside_the_window_are_never_unwritten():
    program = _program("closed_flag_after_release.ok.py")
    assert verify(program).ok
    for n in range(4):
        assert simulate(program, {"N_TILES": n}).ok, n


PIPE = """\
kernel k
param N
pipe kv capacity=1 fields=(FIELDS)
partition producer default warps=4 {
  for i in range(N) {
    kv.acquire(i)
    kv.write(i, WRITTEN)
    kv.commit(i)
  }
  kv.close(N)
}
partition consumer warps=4 {
  for i in range(N) {
    kv.wait(i)
    kv.read(i, k)
    kv.release(i)
  }
  kv.wait(N)
  kv.release(N)
}
"""


def test_the_writer_never_writes_the_flag_as_a_field():
    (program,) = parse_module(PIPE.replace("FIELDS", "k").replace("WRITTEN", CLOSED_FLAG)).kernels
    v = verify(program)
    assert [(e.check, e.loc.line) for e in v.errors] == [("unknown-field", 7)]
    with pytest.raises(StructuralError):
        simulate(program, {"N": 1})


def test_no_field_may_take_the_flag_s_name():
    (program,) = parse_module(PIPE.replace("FIELDS", f"k, {CLOSED_FLAG}")
                              .replace("WRITTEN", "k")).kernels
    assert "duplicate-name" in {e.check for e in verify(program).errors}


def test_a_flag_read_through_a_rebound_result_is_refused():
    """After a loop that rebinds `res`, the frontend cannot tell which slot the flag is read from:
    refused at its line like a field read through it."""
    src = (CASES / "closed_flag_after_release.ok.py").read_text().replace(
        "    done = last.is_closed\n", "    done = res.is_closed\n")
    with pytest.raises(TleError) as e:
        read_source(src, "k.py")
    assert e.value.check == "unknown-slot" and e.value.loc.line == 38
