"""A program id is below the program count of its axis: ``0 <= tl.program_id(a) < tl.num_programs(a)``.

The two were params with independent domains (``>= 0`` and ``>= 1``), so a kernel that is right for
every launch was rejected with a witness no launch gives (``num_programs_0=1, program_id_0=1``).
The frontend now defines the count as ``program_id(a) + 1 + later_programs_a`` (frontend/params.py,
``launch_grid``); a fault the independent check finds is checked again from the base values
(witness.py) and, the definition being affine, over the Program rewritten on its bases
(passes/exact_bases.py), where the cutoff theorem can prove it. These tests check that a fault
which needs ``program_id >= num_programs`` is no longer reported, that a real one still is, with
values that respect the relation and fail in the simulator, and that other axes stay independent.
"""

from __future__ import annotations

import json
import re

from tle_compiler.cli.dump import main as tle_dump
from tle_compiler.frontend import read_source
from tle_compiler.passes import verify
from tle_compiler.semantics.simulator import simulate

HEAD = '''
import triton.language as tl
import tle_compiler as tle
BM: tl.constexpr = 64

@tle.jit
def k(x_ptr, out_ptr):
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, BM], tl.float32))
    tle.gpu.warp_specialize([(prod, (p, x_ptr)), (cons, (p, out_ptr))], [4], [232])
'''

#: every program handles NUM - pid >= 1 tiles; the reader seeds its accumulator with tile 0
COUNTED = HEAD + '''
def prod(p, x_ptr):
    offs = tl.arange(0, BM)
    w = p.writer()
    n = tl.num_programs(0) - tl.program_id(0)
    for i in range(n):
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + i * BM + offs))
        w.commit(i)

def cons(p, out_ptr):
    offs = tl.arange(0, BM)
    r = p.reader()
    n = tl.num_programs(0) - tl.program_id(0)
    res = r.wait(0)
    acc = tl.load(tle.gpu.local_ptr(res.slot.t))
    r.release(0)
    for i in range(1, n):
        res = r.wait(i)
        acc += tl.load(tle.gpu.local_ptr(res.slot.t))
        r.release(i)
    tl.store(out_ptr + offs, acc)
'''

#: the writer commits only under pid < NUM, which every launch satisfies
GUARDED = HEAD + '''
def prod(p, x_ptr):
    offs = tl.arange(0, BM)
    w = p.writer()
    if tl.program_id(0) < tl.num_programs(0):
        s = w.acquire(0)
        tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + offs))
        w.commit(0)

def cons(p, out_ptr):
    offs = tl.arange(0, BM)
    r = p.reader()
    res = r.wait(0)
    acc = tl.load(tle.gpu.local_ptr(res.slot.t))
    r.release(0)
    tl.store(out_ptr + offs, acc)
'''


def writer_commits_n(reader_body: str, count: str = "tl.num_programs(0)") -> str:
    """A kernel whose writer commits range(count - program_id(0)), with ``reader_body`` (its
    ``n`` is the same count) as the reader."""
    return HEAD + f'''
def prod(p, x_ptr):
    offs = tl.arange(0, BM)
    w = p.writer()
    n = {count} - tl.program_id(0)
    for i in range(n):
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + i * BM + offs))
        w.commit(i)

def cons(p, out_ptr):
    offs = tl.arange(0, BM)
    r = p.reader()
    n = {count} - tl.program_id(0)
{reader_body}
'''


#: the reader waits one index more than committed, but only when pid >= NUM (no launch)
ONLY_IMPOSSIBLE = writer_commits_n('''\
    for i in range(n):
        res = r.wait(i)
        tl.store(out_ptr + offs, tl.load(tle.gpu.local_ptr(res.slot.t)))
        r.release(i)
    if tl.program_id(0) >= tl.num_programs(0):
        res = r.wait(7)
        r.release(7)''')

#: wrong when n <= 0 (no launch) and when n == 3 (the last program of three, or any program with
#: two after it): the reader then skips index 2
IMPOSSIBLE_AND_REAL = writer_commits_n('''\
    if n <= 0:
        res = r.wait(0)
        r.release(0)
    for i in range(n):
        if i != 2 or n != 3:
            res = r.wait(i)
            tl.store(out_ptr + offs, tl.load(tle.gpu.local_ptr(res.slot.t)))
            r.release(i)''')

WHEN = re.compile(r"\(when (\w+=-?\d+(?:, \w+=-?\d+)*)(?: \(([^()]*)\))?")


def values(text: str) -> dict[str, int]:
    return {k: int(v) for k, v in (item.split("=") for item in text.split(", "))} if text else {}


def program_of(source: str, name: str = "k.py"):
    (program,) = read_source(source, name).kernels
    return program


def dump(tmp_path, source: str, *args: str) -> int:
    path = tmp_path / "k.py"
    path.write_text(source)
    return tle_dump([str(path), *(args or ("-q",))])


def test_the_count_is_defined_from_the_program_id():
    program = program_of(COUNTED)
    assert {d.name: str(d.definition) for d in program.derived} == {
        "num_programs_0": "(program_id_0 + 1) + later_programs_0"}
    assert [(b.name, b.min, b.max) for b in program.bases] == [("later_programs_0", 0, None)]
    # the Pipe IR itself is unchanged: the loop still runs to num_programs_0 - program_id_0
    assert {p.name for p in program.params} == {"num_programs_0", "program_id_0"}


def test_a_kernel_right_for_every_launch_is_proved(tmp_path, capsys):
    """Before: rejected, `(when num_programs_0=1, program_id_0=1)`."""
    for source in (COUNTED, GUARDED):
        ctx = verify(program_of(source))
        assert not ctx.errors, [d.message for d in ctx.errors]
        assert ctx.verdict().kind == "proved", ctx.verdict()
        assert dump(tmp_path, source) == 0
        assert "program_id_0=1" not in capsys.readouterr().err


def test_a_fault_that_needs_program_id_at_or_above_the_count_is_not_reported(tmp_path, capsys):
    program = program_of(ONLY_IMPOSSIBLE)
    # the fault is there when the two are taken as independent ...
    assert simulate(program, {"num_programs_0": 1, "program_id_0": 1}).errors
    # ... and no launch gives it
    ctx = verify(program)
    assert not ctx.errors, [d.message for d in ctx.errors]
    assert ctx.verdict().kind == "proved"
    assert dump(tmp_path, ONLY_IMPOSSIBLE) == 0
    capsys.readouterr()


def test_a_real_fault_is_reported_with_a_launch_that_gives_it(tmp_path, capsys):
    program = program_of(IMPOSSIBLE_AND_REAL)
    ctx = verify(program)
    assert ctx.errors and ctx.verdict().kind == "rejected"
    for d in ctx.errors:
        m = WHEN.search(d.message)
        assert m, d.message
        shown = {**values(m.group(1)), **values(m.group(2) or "")}
        pid, count = shown["program_id_0"], shown["num_programs_0"]
        assert 0 <= pid < count, d.message
        assert count - pid == 3, d.message  # the one real fault: n == 3
        if "later_programs_0" in shown:
            assert count == pid + 1 + shown["later_programs_0"], d.message
        errors = simulate(program, {"num_programs_0": count, "program_id_0": pid}).errors
        assert d.loc.line in {e.loc.line for e in errors}, d.message
    assert dump(tmp_path, IMPOSSIBLE_AND_REAL, "--format", "json") == 1
    out = json.loads(capsys.readouterr().out)
    (kernel,) = out["kernels"]
    for diag in kernel["diagnostics"]:
        w = diag.get("witness")
        if w:
            launch = {**w["base"], **w["derived"]}
            assert 0 <= launch["program_id_0"] < launch["num_programs_0"], diag


def test_a_fault_of_the_first_program_is_still_found(tmp_path, capsys):
    """The reader waits index 1 always: wrong for the last program (n == 1)."""
    source = writer_commits_n('''\
    for i in range(n):
        res = r.wait(i)
        tl.store(out_ptr + offs, tl.load(tle.gpu.local_ptr(res.slot.t)))
        r.release(i)
    if n == 1:
        res = r.wait(1)
        r.release(1)''')
    ctx = verify(program_of(source))
    assert ctx.verdict().kind == "rejected"
    (d, *_) = ctx.errors
    m = WHEN.search(d.message)
    shown = {**values(m.group(1)), **values(m.group(2) or "")}
    assert shown["num_programs_0"] - shown["program_id_0"] == 1, d.message
    assert shown["program_id_0"] >= 0, d.message
    assert dump(tmp_path, source) == 1
    capsys.readouterr()


def test_other_axes_stay_independent():
    """program_id(0) and num_programs(1) are unrelated: num_programs(1) = 1 with program_id(0) = 1
    is a launch (a 2 x 1 grid), so the fault there is reported."""
    program = program_of(writer_commits_n('''\
    res = r.wait(0)
    tl.store(out_ptr + offs, tl.load(tle.gpu.local_ptr(res.slot.t)))
    r.release(0)
    for i in range(1, n):
        res = r.wait(i)
        r.release(i)''', count="tl.num_programs(1)"))
    assert not program.derived
    ctx = verify(program)
    assert ctx.verdict().kind == "rejected"
    assert any("wait-never-committed" == d.check for d in ctx.errors)


def derived_count(count: str, reader_body: str) -> str:
    """A kernel whose writer commits range(n), ``n = count`` computed from the program id and
    count of axis 0 through a definition that is not affine, with ``reader_body`` as the
    reader (its ``n`` the same)."""
    return HEAD + f'''
def prod(p, x_ptr):
    offs = tl.arange(0, BM)
    w = p.writer()
    n = {count}
    for i in range(n):
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + i * BM + offs))
        w.commit(i)

def cons(p, out_ptr):
    offs = tl.arange(0, BM)
    r = p.reader()
    n = {count}
{reader_body}
'''


#: the reader seeds its accumulator with tile 0: right for every launch, where n >= 1
SEEDED = '''\
    res = r.wait(0)
    acc = tl.load(tle.gpu.local_ptr(res.slot.t))
    r.release(0)
    for i in range(1, n):
        res = r.wait(i)
        acc += tl.load(tle.gpu.local_ptr(res.slot.t))
        r.release(i)
    tl.store(out_ptr + offs, acc)'''

#: the reader skips index 2 when n == 3: a fault a launch gives
SKIPS_AT_3 = '''\
    for i in range(n):
        if i != 2 or n != 3:
            res = r.wait(i)
            tl.store(out_ptr + offs, tl.load(tle.gpu.local_ptr(res.slot.t)))
            r.release(i)'''

NP_MINUS_PID = "tl.num_programs(0) - tl.program_id(0)"
DERIVED_COUNTS = {
    "cdiv": f"tl.cdiv({NP_MINUS_PID}, 2)",
    "floordiv": f"({NP_MINUS_PID} + 1) // 2",
    "minimum": f"tl.minimum({NP_MINUS_PID}, 4)",
}


def test_the_relation_holds_when_id_and_count_only_feed_a_derived_param(tmp_path, capsys):
    """Before: rejected `(when num_programs_0=1, program_id_0=1 (n=0))`, though every launch has
    n >= 1: the two were related only where both were params themselves."""
    for spelling, count in DERIVED_COUNTS.items():
        program = program_of(derived_count(count, SEEDED))
        defs = {d.name: str(d.definition) for d in program.derived}
        assert defs["num_programs_0"] == "(program_id_0 + 1) + later_programs_0", spelling
        assert "later_programs_0" in {b.name for b in program.bases}, spelling
        # taken as independent values, n = 0 is a fault ...
        assert simulate(program, {"n": 0}).errors, spelling
        # ... that no launch gives
        ctx = verify(program)
        assert not ctx.errors, (spelling, [d.message for d in ctx.errors])
        assert ctx.verdict().kind == "proved", (spelling, ctx.verdict())
        assert dump(tmp_path, derived_count(count, SEEDED)) == 0, spelling
        err = capsys.readouterr().err
        assert "n >= 1" in err or "1 <= n <= 4" in err, err


def test_a_real_fault_of_a_derived_count_is_reported_with_a_launch(tmp_path, capsys):
    for spelling, count in DERIVED_COUNTS.items():
        source = derived_count(count, SKIPS_AT_3)
        program = program_of(source)
        ctx = verify(program)
        assert ctx.errors and ctx.verdict().kind == "rejected", (spelling, ctx.verdict())
        assert dump(tmp_path, source, "--format", "json") == 1, spelling
        (kernel,) = json.loads(capsys.readouterr().out)["kernels"]
        witnesses = [d["witness"] for d in kernel["diagnostics"] if d.get("witness")]
        assert witnesses, (spelling, kernel["diagnostics"])
        for w in witnesses:
            # the launch: a program id and the programs after it (so the count is above the id)
            pid, later = w["base"]["program_id_0"], w["base"]["later_programs_0"]
            assert pid >= 0 and later >= 0, (spelling, w)
            num = pid + 1 + later
            assert w["derived"].get("num_programs_0", num) == num, (spelling, w)
            assert w["derived"]["n"] == 3 == {"cdiv": (num - pid + 1) // 2,
                                              "floordiv": (num - pid + 1) // 2,
                                              "minimum": min(num - pid, 4)}[spelling], w
            assert simulate(program, {"n": 3}).errors, (spelling, w)


def test_the_domain_a_kept_definition_gives_over_the_bases():
    """exact_bases.bounds_of: what a definition that is not affine can give over its params'
    domains, by interval arithmetic (C's quotient and remainder for runtime values)."""
    from tle_compiler.ir.derived import Definition
    from tle_compiler.ir.expr import Affine
    from tle_compiler.passes.exact_bases import bounds_of

    later = Affine.of("later") + 2
    dom = {"later": (0, None), "x": (-5, 7)}
    assert bounds_of(Definition("//", (later, Affine.of(2)), True), dom) == (1, None)
    assert bounds_of(Definition("minimum", (later, Affine.of(4)), True), dom) == (2, 4)
    assert bounds_of(Definition("maximum", (Affine.of("x"), Affine.of(0)), True), dom) == (0, 7)
    assert bounds_of(Definition("//", (Affine.of("x"), Affine.of(2)), True), dom) == (-2, 3)
    assert bounds_of(Definition("//", (Affine.of("x"), Affine.of(2)), False), dom) == (-3, 3)
    assert bounds_of(Definition("%", (Affine.of("x"), Affine.of(4)), True), dom) == (-3, 3)
    assert bounds_of(Definition("%", (later, Affine.of(4)), True), dom) == (0, 3)
    assert bounds_of(Definition("abs", (Affine.of("x"),), True), dom) == (0, 7)
    assert bounds_of(Definition("*", (Affine.of("x"), Affine.of(-2)), True), dom) == (-14, 10)
    # a product of two params, or a quotient by a param: every integer
    assert bounds_of(Definition("*", (Affine.of("x"), later), True), dom) == (None, None)
    assert bounds_of(Definition("//", (later, Affine.of("x")), True), dom) == (None, None)
