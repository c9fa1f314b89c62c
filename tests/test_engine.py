"""The verifier's engine: compiled traces, the fast path, the run that finds deadlocks, the budget,
the plan of values, and which event an index mismatch is blamed on.

Each fast piece is held equal to a slow, obviously-right reference on random programs: the
compiled trace generators to the IR interpreter (ir/unroll.py), the fast "no fault" path to the
path that words problems, and the run that detects deadlocks to a happens-before graph built here
with networkx (the definition in docs/semantics.md).
"""

from __future__ import annotations

import itertools

import networkx as nx
import pytest
from hypothesis import HealthCheck, assume, given, settings

from .protocol_gen import mutated, protocols
from .strategies import programs
from tle_compiler.ir.nodes import Event
from tle_compiler.ir.parser import parse_module
from tle_compiler.ir.tracegen import TraceBudgetExceeded, compile_program
from tle_compiler.ir.unroll import unroll
from tle_compiler.passes import run_pipeline, verify
from tle_compiler.passes.context import PassContext
from tle_compiler.passes.cutoff import plan
from tle_compiler.passes.instances import Checker
from tle_compiler.passes.verify_protocol import check_structure

SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def _values(program, top=3):
    """A few assignments of small values, inside every param's domain."""
    ranges = []
    for p in program.params:
        vals = [v for v in range(-2, top + 1) if p.contains(v)]
        ranges.append(vals or [p.min if p.min is not None else p.max])
    for combo in itertools.islice(itertools.product(*ranges), 12):
        yield dict(zip((p.name for p in program.params), combo))


def _structured(program) -> bool:
    ctx = PassContext(program)
    check_structure(ctx)
    return ctx.ok


@SETTINGS
@given(programs())
def test_compiled_traces_equal_the_ir_interpreter(program):
    assume(_structured(program))
    cp = compile_program(program)
    for params in _values(program):
        try:
            got = cp.run(params, 20_000)
        except TraceBudgetExceeded:
            continue
        ref = unroll(program, params)
        for (ids, idx), part in zip(got, program.partitions):
            assert [(cp.stmts[s], i) for s, i in zip(ids, idx)] == \
                [(inst.event, inst.index) for inst in ref[part.name]]


def _happens_before_acyclic(program, roles, traces) -> bool:
    """The definition: program order, k-th commit -> every reader's k-th wait, every reader's
    (k-1)-th release -> the writer's k-th acquire; deadlock-free iff acyclic."""
    g = nx.DiGraph()
    uses = {}
    for k, part in enumerate(program.partitions):
        prev = None
        for pos, inst in enumerate(traces[part.name]):
            if not isinstance(inst.event, Event):
                continue
            node = (k, pos)
            g.add_node(node)
            if prev is not None:
                g.add_edge(prev, node)
            prev = node
            ev = inst.event
            pipe = program.pipe(ev.pipe)
            s = 0 if pipe.one_shot else inst.index % pipe.capacity
            key = (ev.pipe, s)
            role = "w" if ev.is_writer else ("r", ev.reader or "")
            if ev.verb in ("acquire", "close"):
                uses.setdefault(key + ("acq",), []).append(node)
            if ev.verb in ("commit", "close"):
                uses.setdefault(key + ("commit",), []).append(node)
            if ev.verb == "wait":
                uses.setdefault(key + ("wait", role), []).append(node)
            if ev.verb == "release":
                uses.setdefault(key + ("rel", role), []).append(node)
    for p in program.pipes:
        for s in range(p.capacity):
            commits = uses.get((p.name, s, "commit"), [])
            acqs = uses.get((p.name, s, "acq"), [])
            for r in p.reader_names:
                for a, b in zip(commits, uses.get((p.name, s, "wait", ("r", r)), [])):
                    g.add_edge(a, b)
                if not p.one_shot:
                    for a, b in zip(uses.get((p.name, s, "rel", ("r", r)), []), acqs[1:]):
                        g.add_edge(a, b)
    return nx.is_directed_acyclic_graph(g)


@SETTINGS
@given(protocols(accesses=True))
def test_fast_path_and_run_agree_with_the_definitions(program):
    ctx = PassContext(program)
    check_structure(ctx)
    assume(ctx.ok)
    cp = compile_program(program)
    checker = Checker(cp, ctx.roles())
    for params in _values(program, top=5):
        traces = cp.run(params, 50_000)
        res = checker.check(traces)
        # the fast path says "clean" exactly when the wording path finds nothing
        assert checker.clean(traces) == (not res.problems and res.deadlock is None), params
        if not res.problems:
            ref = unroll(program, params)
            assert (res.deadlock is None) == _happens_before_acyclic(program, ctx.roles(), ref)


@SETTINGS
@given(mutated())
def test_fast_path_agrees_on_mutated_protocols(program):
    ctx = PassContext(program)
    check_structure(ctx)
    assume(ctx.ok)
    cp = compile_program(program)
    checker = Checker(cp, ctx.roles())
    for params in _values(program, top=4):
        traces = cp.run(params, 50_000)
        res = checker.check(traces)
        assert checker.clean(traces) == (not res.problems and res.deadlock is None), params


RING = """kernel ring
param N{dom}
pipe kv capacity=2 fields=(k)
partition p default warps=4 {{
  for i in range(N) {{
    kv.acquire(i)
    kv.write(i, k)
    kv.commit(i)
  }}
}}
partition c warps=4 {{
  for i in range(N) {{
    kv.wait(i)
    kv.read(i, k)
    kv.release(i)
  }}
}}
"""


def _one(text):
    (prog,) = parse_module(text, "t.pipe").kernels
    return prog


def test_a_ring_is_proved_for_every_value_by_the_cutoff_theorem():
    v = verify(_one(RING.format(dom=""))).verdict()
    assert v.kind == "proved" and "cutoff theorem" in v.argument
    assert v.checked["N"].startswith("[0, ")


def test_every_integer_domain_checks_negative_values_too():
    ctx = verify(_one(RING.format(dom=" any")))
    v = ctx.verdict()
    assert v.kind == "proved" and v.checked["N"].startswith("[-")


def test_a_fixed_param_narrows_the_claim_to_that_value():
    v = run_pipeline(_one(RING.format(dom="")), params={"N": 7}).verdict()
    assert (v.kind, v.scope, v.checked) == ("proved", "N = 7", {"N": "{7}"})


def test_a_finite_domain_is_checked_whole():
    v = verify(_one(RING.format(dom=" >= 2 <= 9"))).verdict()
    assert v.kind == "proved" and v.checked == {"N": "[2, 9]"}


def test_a_bound_below_the_theorem_gives_a_bounded_verdict():
    v = run_pipeline(_one(RING.format(dom="")), bound=5).verdict()
    assert v.kind == "bounded" and v.checked == {"N": "[0, 5]"} and "--bound 5" in v.reason


def test_a_huge_minimum_is_proved_from_values_below_it():
    ctx = verify(_one(RING.format(dom=" >= 120000")))
    v = ctx.verdict()
    assert v.kind == "proved" and v.events < 100_000, v


def test_a_fault_found_only_within_a_huge_domain_is_reported_there():
    # faulty only for N >= 100: the values below the domain pass the probe's check? no: the probe
    # (N0 .. N0+2L) lies below 100, where the protocol is fine, so it cannot prove the domain; the
    # domain's own first values are checked and show the fault
    text = RING.format(dom=" >= 200").replace(
        "    kv.release(i)\n", "    kv.release(i)\n  }\n  if N >= 100 {\n    kv.wait(N)\n    kv.release(N)\n")
    ctx = verify(_one(text))
    assert not ctx.ok
    assert "when N=200" in str(ctx.errors[0]), ctx.errors


def test_several_free_params_give_a_bounded_grid():
    text = RING.format(dom="").replace("param N\n", "param N\nparam M\n").replace(
        "partition c warps=4 {\n", "partition c warps=4 {\n  for j in range(M) {\n  }\n")
    v = verify(_one(text)).verdict()
    assert v.kind == "bounded" and "2 free params" in v.reason and set(v.checked) == {"N", "M"}


def test_the_budget_ends_in_unknown_with_what_was_checked():
    v = run_pipeline(_one(RING.format(dom="")), budget=2_000).verdict()
    assert v.kind == "unknown" and "budget of 2000 events" in v.reason
    assert v.checked["N"].startswith("[0, ")


def test_a_budget_exhausted_inside_one_value_is_unknown_not_rejected():
    text = RING.format(dom=" >= 5000").replace("for i in range(N) {\n    kv.acquire",
                                               "for i in range(N) {\n    for j in range(i, i + 1) {\n    }\n    kv.acquire")
    ctx = run_pipeline(_one(text), budget=3_000)
    assert ctx.ok and ctx.verdict().kind == "unknown"


def test_outside_the_fragment_the_verdict_names_the_construct_and_its_line():
    text = RING.format(dom="").replace("for i in range(N) {\n    kv.wait(i)",
                                       "for i in range(0, N, 2) {\n    kv.wait(i)")
    v = verify(_one(text)).verdict()
    assert v.kind in ("bounded", "rejected")
    text = """kernel tri
param N
pipe kv capacity=1 fields=(k)
partition p default warps=4 {
  for a in range(N) {
    for b in range(a, N) {
    }
  }
}
"""
    v = verify(_one(text)).verdict()
    assert v.kind == "bounded" and "(line 6)" in v.reason and "nested or triangular" in v.reason


OFF_BY_ONE = """kernel obo
param N
pipe kv capacity=2 fields=(k)
partition p default warps=4 {
  for t in range(N) {
    kv.acquire(t + 1)
    kv.commit(t)
  }
}
partition c warps=4 {
  for t in range(N) {
    kv.wait(t)
    kv.release(t)
  }
}
"""


def test_an_off_by_one_acquire_is_reported_at_its_own_line_naming_its_index():
    ctx = verify(_one(OFF_BY_ONE))
    (err,) = ctx.errors
    assert (err.check, err.loc.line) == ("index-mismatch", 6)
    assert "acquire(t + 1) takes index 1" in err.message and "commit(t)" in err.message


def test_an_off_by_one_wait_is_reported_at_its_own_line():
    text = OFF_BY_ONE.replace("kv.acquire(t + 1)", "kv.acquire(t)").replace("kv.wait(t)",
                                                                              "kv.wait(t + 1)")
    ctx = verify(_one(text))
    assert [(e.check, e.loc.line) for e in ctx.errors][0] == ("index-mismatch", 12)
    assert "wait(t + 1) takes index 1" in ctx.errors[0].message


def test_plan_orders_values_by_magnitude():
    pl = plan(_one(RING.format(dom=" any")))
    ns = [d["N"] for d in pl.values]
    assert ns[:5] == [0, 1, -1, 2, -2]
    assert min(ns) == -pl.fragment.n0_negative - pl.fragment.L
    assert max(ns) == pl.fragment.n0 + 2 * pl.fragment.L - 1


@pytest.mark.parametrize("path", ["tle_kernels/sparse_mla_pipe.pipe", "tle_kernels/sparse_mla_seesaw.pipe",
                                  "docs/example.pipe"])
def test_bundled_protocols_are_proved_for_every_value(path):
    from tle_compiler.ir.parser import parse_file

    (prog,) = parse_file(path).kernels
    assert verify(prog).verdict().kind == "proved"
