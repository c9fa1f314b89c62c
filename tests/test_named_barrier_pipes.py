"""Named-barrier pipes (``tle.pipe(capacity=1, barrier="named")``, ``named_barrier`` in the text
forms): what the verifier proves and refuses, and how the declaration is checked and printed.

A named pipe's acquire and release emit no barrier operation, so the verifier's ``named-release``
rule must find, for every acquire of use n >= 1, one hop from the reader's release of use n - 1
to the writer before that acquire: a commit the writer waits, or the release of a non-named pipe
the writer then acquires. The cases are pairs in tests/fixtures/named_barrier/ (first line
``# expect: ok`` or ``# expect: error CHECK line N``, as tests/cases/ has them; they live apart
because the executable semantics, semantics/simulator.py, has no named pipes, and
tests/test_named_failures.py holds every case there to the simulator too). Every rejected case
but one verifies with mbarriers, so each rejection is the named rule's. Hops that exist only for
some trip counts are checked at every small count and at the counts past a constant, against
where the hop is missing.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from tle_compiler.cli.dump import main as tle_dump
from tle_compiler.diagnostics import TleError
from tle_compiler.frontend import read_file, read_kernels
from tle_compiler.ir.kernel_text import parse_kernels, print_kernel
from tle_compiler.ir.parser import parse_file, parse_module
from tle_compiler.ir.printer import print_program
from tle_compiler.passes import verify

FIXTURES = Path(__file__).parent / "fixtures" / "named_barrier"
CASES = sorted(p for p in FIXTURES.iterdir() if p.suffix in (".pipe", ".py"))
EXPECT = re.compile(r"# expect: (ok|error ([\w-]+) line (\d+))$")


def _program(path: Path):
    module = parse_file(path) if path.suffix == ".pipe" else read_file(path)
    (program,) = module.kernels
    return program


def _without_named(program):
    return dataclasses.replace(program, pipes=tuple(dataclasses.replace(p, named=False)
                                                    for p in program.pipes))


def test_the_fixtures_come_in_pairs():
    stems = {p.name.split(".")[0] for p in CASES}
    for stem in stems:
        kinds = {p.name.split(".")[1] for p in CASES if p.name.split(".")[0] == stem}
        assert kinds in ({"ok", "bad"}, {"ok"}, {"bad"}), stem
    assert {"exchange", "hop_commit", "hop_release", "hop_named_release", "three_partitions",
            "chain_third_partition", "same_partition", "closed", "last_release_after_loop",
            "exchange_late_release", "early_acquire"} <= stems
    assert any(p.suffix == ".py" for p in CASES) and any(p.suffix == ".pipe" for p in CASES)


@pytest.mark.parametrize("path", CASES, ids=[p.name for p in CASES])
def test_case(path, capsys):
    m = EXPECT.match(path.read_text().splitlines()[0])
    assert m, f"{path} lacks an '# expect:' header"
    program = _program(path)
    assert any(p.named for p in program.pipes)
    ctx = verify(program)
    capsys.readouterr()
    if m.group(1) == "ok":
        assert ctx.ok, [str(d) for d in ctx.diagnostics]
        assert ctx.verdict().kind == "proved", ctx.verdict().describe()
        assert tle_dump([str(path), "-q"]) == 0
        return
    check, line = m.group(2), int(m.group(3))
    assert (check, line) in [(d.check, d.loc.line) for d in ctx.errors], \
        [str(d) for d in ctx.errors]
    assert tle_dump([str(path), "-q"]) == 1
    err = capsys.readouterr().err
    assert f"{path}:{line}: error:" in err and f"[{check}]" in err
    # the rule adds a condition and nothing else: with mbarriers the protocol is accepted (the
    # acquire then waits for the release), except where it deadlocks without the named rule
    plain = verify(_without_named(program))
    if path.name == "early_acquire.bad.py":
        assert [d.check for d in plain.errors] == ["deadlock"], [str(d) for d in plain.errors]
    else:
        assert plain.ok, [str(d) for d in plain.diagnostics]


def test_the_message_names_the_uncovered_release_and_its_use():
    ctx = verify(_program(FIXTURES / "exchange_late_release.bad.pipe"))
    (d,) = ctx.errors
    assert "pipe 'max0'" in d.message and "use 1" in d.message and "use 0" in d.message
    assert 'barrier="mbarrier"' in d.message  # the way out
    lines = (FIXTURES / "exchange_late_release.bad.pipe").read_text().splitlines()
    release_line = max(i + 1 for i, ln in enumerate(lines) if "max0.release(p)" in ln)
    assert release_line in [n.loc.line for n in d.notes], [str(n) for n in d.notes]


def test_a_hop_through_another_named_pipe_covers_neither():
    """y's release emits nothing: x's acquire is reported, and so is y's own."""
    ctx = verify(_program(FIXTURES / "hop_named_release.bad.pipe"))
    assert sorted(re.search(r"pipe '(\w+)'", d.message).group(1) for d in ctx.errors) == ["x", "y"]
    assert {d.check for d in ctx.errors} == {"named-release"}


# ------------------------------------------------------------- hops that exist for some values

COND_TEMPLATE = """\
kernel cond
param N
pipe x capacity=1 named_barrier fields=(m)
pipe ack capacity=1 fields=(v)
partition w default warps=4 {
  for p in range(N) {
    x.acquire(p)
    x.write(p, m)
    x.commit(p)
    ack.wait(p)
    ack.read(p, v)
    ack.release(p)
  }
}
partition r warps=4 {
  for p in range(N) {
    x.wait(p)
    x.read(p, m)
    if COND {
      x.release(p)
      ack.acquire(p)
      ack.write(p, v)
      ack.commit(p)
    } else {
      ack.acquire(p)
      ack.write(p, v)
      ack.commit(p)
      x.release(p)
    }
  }
}
"""

# (condition under which r releases x(p) before its hop, the same in Python). The hop for the
# acquire of x(p + 1) exists iff the condition holds at p, so N is faulty iff it fails at some
# p <= N - 2.
CONDITIONS = [
    ("p < N - 1", lambda p, n: p < n - 1),
    ("p != N - 1", lambda p, n: p != n - 1),
    ("p < N - 2", lambda p, n: p < n - 2),
    ("p != N - 2", lambda p, n: p != n - 2),
    ("p != 0", lambda p, n: p != 0),
    ("p >= 1", lambda p, n: p >= 1),
    ("p % 2 == 0", lambda p, n: p % 2 == 0),
    ("p != 5", lambda p, n: p != 5),
    ("p < 40", lambda p, n: p < 40),
    ("p != 40", lambda p, n: p != 40),
]


def _faulty(cond, n: int) -> bool:
    return any(not cond(p, n) for p in range(0, n - 1))


# The hop pipe itself only under the condition (both sides): ack's indices must stay dense, so
# only prefixes of the loop.
GATED_TEMPLATE = """\
kernel gated
param N
pipe x capacity=1 named_barrier fields=(m)
pipe ack capacity=1 fields=(v)
partition w default warps=4 {
  for p in range(N) {
    x.acquire(p)
    x.write(p, m)
    x.commit(p)
    if COND {
      ack.wait(p)
      ack.read(p, v)
      ack.release(p)
    }
  }
}
partition r warps=4 {
  for p in range(N) {
    x.wait(p)
    x.read(p, m)
    x.release(p)
    if COND {
      ack.acquire(p)
      ack.write(p, v)
      ack.commit(p)
    }
  }
}
"""
GATED = [
    ("p < N - 1", lambda p, n: p < n - 1),
    ("p < N - 2", lambda p, n: p < n - 2),
    ("p < 3", lambda p, n: p < 3),
    ("p < 30", lambda p, n: p < 30),
]
CASES_BY_TEMPLATE = ([(COND_TEMPLATE, t, c) for t, c in CONDITIONS]
                     + [(GATED_TEMPLATE, t, c) for t, c in GATED])


@pytest.mark.parametrize("template,text,cond", CASES_BY_TEMPLATE,
                         ids=[f"{'order' if tp is COND_TEMPLATE else 'gated'}: {t}"
                              for tp, t, _ in CASES_BY_TEMPLATE])
def test_a_conditional_hop_is_judged_at_every_trip_count(tmp_path, template, text, cond):
    program = parse_module(template.replace("COND", text), "cond.pipe").kernels[0]
    values = list(range(0, 9)) + [29, 30, 31, 32, 33, 40, 41, 42, 43]
    faulty = [n for n in values if _faulty(cond, n)]
    for n in values:
        ctx = verify(program, params={"N": n})
        assert ctx.ok == (n not in faulty), (text, n, [str(d) for d in ctx.errors])
        if n in faulty:
            assert {d.check for d in ctx.errors} == {"named-release"}, (text, n)
    ctx = verify(program)
    if faulty:
        assert not ctx.ok
        witness = re.search(r"when N=(\d+)", ctx.errors[0].message)
        assert witness and _faulty(cond, int(witness.group(1))), ctx.errors[0].message
    else:
        assert ctx.ok and ctx.verdict().kind == "proved", ctx.verdict().describe()
    path = tmp_path / "cond.pipe"
    path.write_text(template.replace("COND", text))
    assert tle_dump([str(path), "-q"]) == (1 if faulty else 0)


# ---------------------------------------------------------------------- the declaration

KERNEL = FIXTURES / "hop_commit.ok.py"
DECL = 'x = tle.pipe(capacity=1, barrier="named", t=tle.gpu.alloc([1, 64], tl.float32))'


@pytest.mark.parametrize("decl,words", [
    ('x = tle.pipe(capacity=2, barrier="named", t=tle.gpu.alloc([2, 64], tl.float32))',
     ["capacity=1", "got capacity=2"]),
    ('x = tle.pipe(capacity=1, barrier="named", readers=("c0", "c1"), '
     't=tle.gpu.alloc([1, 64], tl.float32))', ["at most one reader", "2 reader(s)"]),
    ('x = tle.pipe(capacity=1, barrier="named", one_shot=True, '
     't=tle.gpu.alloc([1, 64], tl.float32))', ["not one_shot", ", one_shot)"]),
    ('x = tle.pipe(capacity=1, barrier="bogus", t=tle.gpu.alloc([1, 64], tl.float32))',
     ['barrier must be "mbarrier" (the default) or "named"', "'bogus'"]),
    ('x = tle.pipe(capacity=1, barrier=1, t=tle.gpu.alloc([1, 64], tl.float32))',
     ['barrier must be "mbarrier"', "got 1"]),
], ids=["capacity-2", "two-readers", "one-shot", "bogus", "not-a-string"])
def test_a_bad_declaration_is_refused_at_its_barrier_argument(tmp_path, capsys, decl, words):
    src = KERNEL.read_text()
    assert DECL in src
    path = tmp_path / "k.py"
    path.write_text(src.replace(DECL, decl))
    with pytest.raises(TleError) as e:
        read_file(path)
    line = next(i + 1 for i, ln in enumerate(path.read_text().splitlines()) if decl in ln)
    col = path.read_text().splitlines()[line - 1].index("barrier=") + 1
    assert (e.value.check, e.value.loc.line, e.value.loc.column) == ("bad-pipe", line, col)
    assert "pipe 'x'" in str(e.value)
    for w in words:
        assert w in str(e.value), str(e.value)
    assert tle_dump([str(path), "-q"]) == 1
    assert f"{path}:{line}: error:" in capsys.readouterr().err


def test_the_default_barrier_is_mbarrier(tmp_path):
    path = tmp_path / "k.py"
    path.write_text(KERNEL.read_text().replace(DECL, DECL.replace('barrier="named"',
                                                                  'barrier="mbarrier"')))
    assert [p.named for p in _program(path).pipes] == [False, False]
    assert [p.named for p in _program(KERNEL).pipes] == [True, False]


@pytest.mark.parametrize("line,message", [
    ("pipe x capacity=2 named_barrier fields=(m)", "got capacity=2"),
    ("pipe x capacity=1 one_shot named_barrier fields=(m)", "one_shot)"),
    ("pipe x capacity=1 named_barrier readers=(r0, r1) fields=(m)", "2 reader(s)"),
    ("pipe x capacity=1 named_barrier=1 fields=(m)", "must be written 'named_barrier'"),
    ("pipe x capacity=1 named_barrier named_barrier fields=(m)", "duplicate attribute"),
], ids=["capacity-2", "one-shot", "two-readers", "valued", "twice"])
def test_a_bad_pipe_line_is_refused(line, message):
    text = (FIXTURES / "hop_commit.ok.pipe").read_text()
    old = "pipe x capacity=1 named_barrier fields=(m)"
    assert old in text
    with pytest.raises(TleError) as e:
        parse_module(text.replace(old, line), "t.pipe")
    assert e.value.loc.line == 6 and message in str(e.value), str(e.value)


def test_the_flag_may_come_first_and_prints_after_capacity():
    text = (FIXTURES / "hop_commit.ok.pipe").read_text()
    moved = text.replace("pipe x capacity=1 named_barrier fields=(m)",
                         "pipe x named_barrier fields=(m) capacity=1")
    program = parse_module(moved, "t.pipe").kernels[0]
    assert program.pipes[0].named and not program.pipes[1].named
    printed = print_program(program)
    assert re.search(r"^pipe x +capacity=1 named_barrier fields=\(m\)$", printed, re.M), printed
    again = parse_module(printed, "t.pipe").kernels[0]
    assert [p.named for p in again.pipes] == [True, False]


@pytest.mark.parametrize("path", [p for p in CASES if p.suffix == ".pipe"],
                         ids=[p.name for p in CASES if p.suffix == ".pipe"])
def test_the_pipe_text_round_trips(path):
    program = _program(path)
    again = parse_module(print_program(program), "again.pipe").kernels[0]
    assert [(p.name, p.named) for p in again.pipes] == [(p.name, p.named) for p in program.pipes]
    assert verify(again).ok == verify(program).ok


def test_tle_dump_report_is_a_pipe_file_keeping_the_flag(tmp_path, capsys):
    """The report (a valid .pipe file) lists the named barrier, and no full or empty one, for the
    named pipe; read back, it verifies again."""
    assert tle_dump([str(FIXTURES / "hop_commit.ok.pipe")]) == 0
    out = capsys.readouterr().out
    rows = [ln for ln in out.splitlines() if ln.startswith("#   x.") or ln.startswith("#   ack.")]
    assert [r.split()[1] for r in rows] == ["x.named[g0][0]", "ack.full[g0][0]", "ack.empty[g0][0]"]
    assert "hardware named barrier (bar.arrive -> bar.sync)" in rows[0]
    assert rows[0].split()[2:5] == ["2", "w.commit", "r.wait"], rows[0]  # no parity: no phase
    report = tmp_path / "report.pipe"
    report.write_text(out)
    again = parse_file(report).kernels[0]
    assert [p.named for p in again.pipes] == [True, False]
    assert tle_dump([str(report), "-q"]) == 0


def test_tle_dump_json_gives_the_named_barrier(capsys):
    assert tle_dump(["--format", "json", str(FIXTURES / "exchange.ok.pipe")]) == 0
    doc = json.loads(capsys.readouterr().out)
    (k,) = doc["kernels"]
    kinds = {(b["pipe"], b["kind"]) for b in k["barriers"]}
    assert kinds == {("max0", "named"), ("max1", "named")}
    b = next(b for b in k["barriers"] if b["pipe"] == "max0")
    assert [a["partition"] for a in b["arrivers"]] == ["a"]
    assert [w["partition"] for w in b["waiters"]] == ["b"]


# ---------------------------------------------------------------------- the kernel IR text form

def test_the_kir_text_round_trips_the_flag():
    (info,) = read_kernels(str(FIXTURES / "three_partitions.ok.py"))
    text = print_kernel(info.kir)
    assert re.search(r"^  pipe x capacity=1 named_barrier fields=", text, re.M), text
    assert re.search(r"^  pipe y capacity=1 fields=", text, re.M), text
    (again,) = parse_kernels(text, "three.kir")
    assert [(p.name, p.named) for p in again.pipes] == [("x", True), ("y", False), ("z", True),
                                                       ("q", False)]
    assert print_kernel(again) == text


@pytest.mark.parametrize("old,new,message", [
    ("pipe x capacity=1 named_barrier", "pipe x capacity=2 named_barrier", "got capacity=2"),
    ("pipe x capacity=1 named_barrier", "pipe x capacity=1 one_shot named_barrier", "one_shot)"),
    ("pipe x capacity=1 named_barrier", "pipe x capacity=1 named_barrier=1", "named_barrier"),
], ids=["capacity-2", "one-shot", "valued"])
def test_a_bad_kir_pipe_is_refused(old, new, message):
    (info,) = read_kernels(str(KERNEL))
    text = print_kernel(info.kir, locations=False)
    assert old in text
    if "capacity=2" in new:  # the slot shape follows the capacity, so only the named rule is left
        text = text.replace("t: fp32[1, 64]", "t: fp32[2, 64]")
    with pytest.raises(TleError) as e:
        parse_kernels(text.replace(old, new), "k.kir")
    assert message in str(e.value), str(e.value)


def test_a_printed_kir_file_verifies_and_lowers_as_its_source(tmp_path, capsys):
    """tle-dump --print-ir of the .py kernel, read back as .kir: the same IR printed again, and
    emit-gluon gives the Gluon the .py gives (the named barrier's bar.arrive / bar.sync)."""
    src = FIXTURES / "hop_commit.ok.py"
    assert tle_dump(["--print-ir", str(src)]) == 0
    printed = capsys.readouterr().out
    assert "named_barrier" in printed and "kind = 'named'" in printed
    kir = tmp_path / "hop.kir"
    kir.write_text(printed)
    assert tle_dump(["--print-ir", str(kir)]) == 0
    strip = lambda t: [ln.split("  #")[0] for ln in t.splitlines()]  # noqa: E731
    assert strip(capsys.readouterr().out) == strip(printed)
    assert tle_dump(["-p", "emit-gluon", str(kir)]) == 0
    from_kir = capsys.readouterr().out
    # -p emit-gluon of the .py is typed by its DEFAULT_CONFIG signature, as --gluon is; a .kir
    # file carries no signature, so its slot stores convert values whose type it does not know
    # (a no-op `.to(gl.float32)` of an fp32 load): the same module but for those conversions
    assert tle_dump(["-p", "emit-gluon", str(src)]) == 0
    from_py = capsys.readouterr().out
    untyped = re.sub(r"\.store\((\w+)\.to\(gl\.float32\)\)", r".store(\1)", from_kir)
    assert untyped.splitlines()[1:] == from_py.splitlines()[1:]
    assert "bar.arrive" in from_kir and "bar.sync" in from_kir


def test_a_release_left_out_of_the_last_iteration_is_still_required():
    """A named pipe's release emits nothing, but it still ends the reader's window: the reader of
    last_release_after_loop.ok.pipe without its release after the loop is rejected as for any
    pipe (missing-release), not accepted because no acquire follows."""
    text = (FIXTURES / "last_release_after_loop.ok.pipe").read_text()
    epilogue = "  if N >= 1 {\n    x.release(N - 1)\n  }\n"
    assert epilogue in text
    program = parse_module(text.replace(epilogue, ""), "t.pipe").kernels[0]
    ctx = verify(program)
    assert "missing-release" in {d.check for d in ctx.errors}, [str(d) for d in ctx.errors]


def test_a_string_module_constant_is_refused_by_name(tmp_path):
    """``BARRIER = tl.constexpr("named")`` then ``tle.pipe(barrier=BARRIER)``: module constants
    hold numbers and booleans only; the error says the string is the reason (not that the
    tl.constexpr the kernel wrote is missing) and points at the assignment."""
    src = (Path(__file__).parent / "fixtures/named_barrier/exchange.ok.py").read_text()
    assert 'barrier="named"' in src
    for spelling in ('tl.constexpr("named")', '"named"'):
        text = src.replace("import tle_compiler as tle\n",
                           f"import tle_compiler as tle\n\nBARRIER = {spelling}\n", 1)
        text = text.replace('barrier="named"', "barrier=BARRIER")
        path = tmp_path / "k.py"
        path.write_text(text)
        with pytest.raises(TleError) as e:
            read_file(path)
        msg = str(e.value)
        assert "holds the string 'named'" in msg and "not strings" in msg, msg
        line = next(i + 1 for i, ln in enumerate(text.splitlines()) if ln.startswith("BARRIER"))
        assert e.value.loc.line == line


def test_the_table_names_the_hand_offs_that_imply_each_release(capsys):
    """tle-dump's barrier table (and JSON ``implied_by``) says, per named pipe, which hand-off
    the verifier found after each release: for the decode seesaw the ones its docstring argues
    (max0 by max1's commit, max1 by prob0's, prob0 by the next pair's max1, prob1 by the next
    pair's max0); for a hop through an mbarrier pipe's release, that release."""
    root = Path(__file__).resolve().parent.parent
    assert tle_dump(["--param", "TMA=1", str(root / "tle_kernels/mla_decode_seesaw.py")]) == 0
    out = capsys.readouterr().out
    rows = {ln.split()[1]: ln for ln in out.splitlines() if ".named[" in ln}
    want = {"max0": "max1.commit", "max1": "prob0.commit", "prob0": "max1.commit",
            "prob1": "max0.commit"}
    assert sorted(rows) == sorted(f"{p}.named[g0][0]" for p in want)
    for pipe, hop in want.items():
        assert rows[f"{pipe}.named[g0][0]"].endswith(f"every release implied by {hop}"), rows
    fixture = Path(__file__).parent / "fixtures/named_barrier/hop_release.ok.pipe"
    # twice in one process: the second run takes the first one's checks from the recent-sweep
    # cache (passes/sweep.py) and must still name the hand-offs
    for _ in range(2):
        assert tle_dump(["--format", "json", str(fixture)]) == 0
        doc = json.loads(capsys.readouterr().out)
        named = [b for k in doc["kernels"] for b in k["barriers"] if b["kind"] == "named"]
        assert named and all(len(b["implied_by"]) == 1 and b["implied_by"][0].endswith(".release")
                             for b in named), [b["implied_by"] for b in named]
