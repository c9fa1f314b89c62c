"""CPU tests of the stamp-kernel generator (tle_compiler.testing.stamp_kernels).

For generated protocols the verifier accepts (tests/protocol_gen.py), the generated kernel source
must read back through the frontend into the same protocol skeleton (pipes, and each partition's
loops, ifs and events, locations ignored, a reader's field view normalised onto all its events)
and verify; and run on the CPU emulation of the language (tests/gpu/emulator.py), it must report
zero mismatches and exactly the event counts that expected_counts derives from the Program. The
GPU test (tests/gpu/test_e2e_fuzz.py) then runs the same kernels through the lowering.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.protocol_gen import protocols
from tle_compiler.frontend import read_source
from tle_compiler.ir import Event, For, If, Program
from tle_compiler.ir.printer import print_program, without_locations
from tle_compiler.passes import verify
from tle_compiler.testing import stamp_kernels as sk

ROOT = Path(__file__).resolve().parent.parent


def _flatten_boolops(c):
    from tle_compiler.ir import BoolOp, Not
    if isinstance(c, BoolOp):
        items = []
        for i in c.items:
            i = _flatten_boolops(i)
            items += list(i.items) if isinstance(i, BoolOp) and i.op == c.op else [i]
        return BoolOp(c.op, tuple(items))
    if isinstance(c, Not):
        return Not(_flatten_boolops(c.item))
    return c


def _norm_body(body, views):
    out = []
    for s in body:
        if isinstance(s, Event):
            fields = None
            reader = s.reader or None
            if not s.is_writer:
                fields = views.get((s.pipe, s.reader or ""))
            out.append(dataclasses.replace(s, reader=reader, fields=fields))
        elif isinstance(s, For):
            out.append(dataclasses.replace(s, body=_norm_body(s.body, views)))
        elif isinstance(s, If) and not s.cond.variables:
            # the frontend folds an if on constants (the Program's text may hold `if 0 >= 1`)
            out.extend(_norm_body(s.then if s.cond.eval({}) else s.orelse, views))
        elif isinstance(s, If):
            out.append(dataclasses.replace(s, cond=_flatten_boolops(s.cond),
                                           then=_norm_body(s.then, views),
                                           orelse=_norm_body(s.orelse, views)))
    return tuple(out)


def skeleton(program: Program):
    """Pipes and partition bodies, without locations, with each reader's view on all its events;
    register budgets and param declarations are not part of it (the generator picks budgets that
    fit the register file; the frontend declares only the params it sees used)."""
    p = without_locations(program)
    views = sk.reader_views(p)
    pipes = {x.name: (x.capacity, x.fields, x.readers, x.one_shot) for x in p.pipes}
    parts = {x.name: (x.default, x.warps, _norm_body(x.body, views)) for x in p.partitions}
    return pipes, parts


def _frontend_program(source: str) -> Program:
    module = read_source(source, "stamp_gen.py")
    assert len(module.kernels) == 1
    return module.kernels[0]


FUZZ = settings(max_examples=40, derandomize=True, database=None, deadline=None,
                suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])


@FUZZ
@given(protocols())
def test_generated_source_reads_back_as_the_same_protocol(program):
    assume(verify(program).ok)
    source = sk.stamp_kernel_source(program)
    got = _frontend_program(source)
    assert skeleton(got) == skeleton(program), print_program(program)
    ctx = verify(got)
    assert ctx.ok, "\n".join(map(str, ctx.diagnostics))


def _run_emulated(program: Program, params: dict, tmp_path) -> dict:
    from tle_compiler.testing.emulator import emulated_launch, load_kernel_module
    path = sk.write_module(sk.stamp_kernel_source(program), str(tmp_path))
    mod = load_kernel_module(path)
    res = sk.launch_stamp_module(mod, program, params, device="cpu", launch=emulated_launch)
    return sk.decode_results(program, res)


@settings(max_examples=30, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow,
                                 HealthCheck.function_scoped_fixture])
@given(protocols(), st.integers(0, 3), st.integers(0, 3))
def test_stamp_kernel_runs_clean_on_the_emulation(tmp_path, program, n, m):
    assume(verify(program).ok)
    params = {p.name: v for p, v in zip(program.params, (n, m))}
    got = _run_emulated(program, params, tmp_path)
    problems = sk.compare(program, params, got)
    assert not problems, "\n".join(problems) + "\n" + print_program(program)


def test_close_and_views_on_the_emulation(tmp_path):
    """A hand-written protocol with close(), an SPMC view and a late release."""
    from tle_compiler.ir.parser import parse_module
    program = parse_module("""
kernel closing
param N

pipe a capacity=2 readers=(x, y) fields=(f0, f1)
pipe b capacity=1 fields=(g)

partition prod default warps=4 {
  for i in range(N) {
    a.acquire(i)
    a.commit(i)
  }
  a.close(N)
}
partition cons warps=4 regs=232 {
  for i in range(N + 1) {
    a[x fields=(f1)].wait(i)
    b.acquire(i)
    b.commit(i)
    a[x].release(i)
  }
}
partition last warps=4 regs=232 {
  for i in range(N + 1) {
    a[y].wait(i)
    b.wait(i)
    b.release(i)
    if i >= 1 {
      a[y].release(i - 1)
    }
  }
  a[y].release(N)
}
""").kernels[0]
    assert verify(program).ok
    assert skeleton(_frontend_program(sk.stamp_kernel_source(program))) == skeleton(program)
    for n in (0, 1, 2, 5):
        got = _run_emulated(program, {"N": n}, tmp_path)
        assert not sk.compare(program, {"N": n}, got)
        assert got["cons"]["closed"] == 1 and got["last"]["closed"] == 1


def test_a_wrong_protocol_is_caught_on_the_emulation(tmp_path):
    """The oracle has teeth: a producer that commits index i but stamps another slot's data is
    reported as mismatches (here: the stamp source is edited to write index + 1)."""
    from tle_compiler.ir.parser import parse_module
    from tle_compiler.testing.emulator import emulated_launch, load_kernel_module
    program = parse_module("""
kernel ring
param N
pipe r capacity=2 fields=(t)
partition p default warps=4 {
  for i in range(N) {
    r.acquire(i)
    r.commit(i)
  }
}
partition c warps=4 regs=232 {
  for i in range(N) {
    r.wait(i)
    r.release(i)
  }
}
""").kernels[0]
    source = sk.stamp_kernel_source(program).replace("st_lane + i * 32", "st_lane + (i + 1) * 32", 1)
    path = sk.write_module(source, str(tmp_path))
    res = sk.launch_stamp_module(load_kernel_module(path), program, {"N": 3}, device="cpu",
                                 launch=emulated_launch)
    got = sk.decode_results(program, res)
    assert got["c"]["mismatches"] == 3 * 16
    assert got["c"]["first_bad"] == {"lane": 0, "value": 32, "event": 1}
    assert sk.compare(program, {"N": 3}, got)


def test_expected_counts():
    from tle_compiler.ir.parser import parse_file
    program = parse_file(ROOT / "docs" / "example.pipe").kernels[0]
    counts = sk.expected_counts(program, {"NK": 3})
    assert counts["producer"]["done"] == 2 + 2 * 3
    assert all(c["mismatches"] == 0 and c["closed"] == 0 for c in counts.values())


def test_generated_source_names_and_config():
    from tle_compiler.ir.parser import parse_file
    program = parse_file(ROOT / "docs" / "example.pipe").kernels[0]
    source = sk.stamp_kernel_source(program, width=32)
    assert "W = tl.constexpr(32)" in source
    assert f"def {program.name}(res_ptr, NK):" in source
    import ast
    cfg = next(n for n in ast.parse(source).body if isinstance(n, ast.Assign)
               and n.targets[0].id == "DEFAULT_CONFIG")
    config = ast.literal_eval(cfg.value)
    assert config["signature"] == {"res_ptr": "*i32", "NK": "i32"}
    assert config["partitions"][0] == next(p.name for p in program.partitions if p.default)
    with pytest.raises(ValueError):
        sk.stamp_kernel_source(program, width=48)
