"""One named test per class of failure, each as a pass/fail pair (tests/cases/): protocols in the
text form (``.pipe``) and kernels in Python (``.py``, read by the frontend as Triton runs them).

Each case file states its expectation on its first line:
- ``# expect: ok``: verified for every value (tle-dump exits 0), and the simulator finds no error in
  any small instance;
- ``# expect: error CHECK line N``: the check CHECK fires at line N (the verifier's, or the
  frontend's for a kernel it refuses to read), tle-dump exits 1 printing ``PATH:N: error:``, and the
  simulator finds an error in some small instance (where CHECK is one of its error kinds, that kind
  at that line);
- ``# expect: bounded``: no fault in the values checked, nothing claimed beyond (exit 3);
- ``# expect: bounded fault N=V``: the same, and the fault lies at N = V, beyond what is checked:
  ``--param N=V`` makes the verifier reject it (exit 1), and the simulator too;
- ``# expect: unknown``: the event budget ran out with no fault found (exit 3, never 1).
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from tle_compiler.cli.dump import main as tle_dump
from tle_compiler.diagnostics import TleError
from tle_compiler.frontend import read_file, read_kernels
from tle_compiler.frontend.ast_reader import SPECIALIZABLE
from tle_compiler.lowering.dumping import default_config
from tle_compiler.ir.parser import parse_file
from tle_compiler.passes import run_pipeline, verify
from tle_compiler.semantics.simulator import ERROR_KINDS, StructuralError, param_values, simulate

CASES = Path(__file__).parent / "cases"
FILES = {p.name.split(".")[0]: p.suffix for p in CASES.iterdir() if p.suffix in (".pipe", ".py")}
NAMES = sorted(FILES)
EXPECT = re.compile(r"# expect: (ok|error ([\w-]+) line (\d+)|bounded( fault (\w+)=(-?\d+))?"
                    r"|unknown)$")


def _expectation(path: Path) -> dict:
    m = EXPECT.match(path.read_text().splitlines()[0])
    assert m, f"{path} lacks an '# expect:' header"
    kind = m.group(1).split()[0]
    out = {"kind": kind}
    if kind == "error":
        out.update(check=m.group(2), line=int(m.group(3)))
    if m.group(5):
        out["fault"] = (m.group(5), int(m.group(6)))
    return out


def _program(path: Path):
    """The case's one kernel, or the frontend's TleError for a kernel it refuses to read. A kernel
    whose generic reading fails where binding its constexprs can help (an index or a bound that is
    a number only then) is read specialised to its DEFAULT_CONFIG's integer constexprs, as tle-dump
    reads it."""
    try:
        (program,) = (parse_file(path) if path.suffix == ".pipe" else read_file(path)).kernels
    except TleError as e:
        bind = _default_constexprs(path) if e.check in SPECIALIZABLE else None
        if not bind:
            return e
        try:
            (info,) = read_kernels(path, bind=bind)
        except TleError as e2:
            return e2
        return info.program
    return program


def _default_constexprs(path: Path) -> dict:
    """The integer constexprs of a kernel file's DEFAULT_CONFIG (none without one)."""
    try:
        cx = default_config(str(path), "").get("constexprs", {})
    except TleError:
        return {}
    return {k: v for k, v in cx.items() if isinstance(v, int) and not isinstance(v, bool)}


def _instances(program):
    """Every small param assignment in the params' domains (values up to 4; down to -4 for a
    param without a minimum)."""
    names = [p.name for p in program.params]
    for values in itertools.product(*(param_values(p, 4) for p in program.params)):
        yield dict(zip(names, values))


def _simulator_rejects(program) -> bool:
    for params in _instances(program):
        try:
            if not simulate(program, params).ok:
                return True
        except StructuralError:
            return True
    return False


def _simulator_reports(program, check: str, line: int) -> bool:
    return any((e.kind, e.loc.line) == (check, line)
               for params in _instances(program) for e in simulate(program, params).errors)


def test_every_case_is_a_pair():
    for name in NAMES:
        ext = FILES[name]
        assert (CASES / f"{name}.ok{ext}").exists() and (CASES / f"{name}.bad{ext}").exists(), name
    assert len(NAMES) >= 25
    # every class of the issue "Verdicts that are true" has its pairs here
    for name in ("read_after_release", "dot_after_release", "write_after_commit",  # slot windows
                 "triangular_nest", "coefficient_nest", "coefficient_condition",  # every value
                 "huge_domain",  # exit codes: a budget is unknown, not rejected
                 "c_remainder", "signed_param", "range_step", "loop_else", "callback",
                 "shared_alloc", "reader_handles",  # the frontend reads kernels as Triton does
                 "acquire_ahead"):  # the wrong index is named at its line
        assert name in NAMES, name


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("variant", ["ok", "bad"])
def test_case(name, variant, capsys):
    path = CASES / f"{name}.{variant}{FILES[name]}"
    want = _expectation(path)
    if variant == "ok":
        assert want["kind"] in ("ok", "bounded") and "fault" not in want, "ok files expect no fault"
    else:
        assert want["kind"] != "ok", "bad files expect an error, a fault beyond the bound, or unknown"
    program = _program(path)
    capsys.readouterr()
    if isinstance(program, TleError):  # refused by the frontend, at the line of the construct
        assert want["kind"] == "error", str(program)
        assert (program.check, program.loc.line) == (want["check"], want["line"]), str(program)
        assert tle_dump([str(path), "-q"]) == 1
        assert f"{path}:{want['line']}:" in capsys.readouterr().err
        return
    ctx = verify(program)
    if want["kind"] == "ok":
        assert ctx.ok, [str(d) for d in ctx.diagnostics]
        assert ctx.verdict().kind == "proved", ctx.verdict().describe()
        assert not _simulator_rejects(program)
        assert tle_dump([str(path), "-q"]) == 0
    elif want["kind"] == "error":
        check, line = want["check"], want["line"]
        found = [(d.check, d.loc.line) for d in ctx.errors]
        assert (check, line) in found, found
        # the simulator, at small values or at the values the verifier names ("when N=8, a=0")
        named = {}
        for d in ctx.errors:
            m = re.search(r"\(when ([^)]*)\)", d.message)
            for item in (m.group(1).split(", ") if m else ()):
                k, _, v = item.partition("=")
                if k in {p.name for p in program.params}:
                    named[k] = int(v)
        assert _simulator_rejects(program) or (
            len(named) == len(program.params) and not simulate(program, named).ok), \
            "the simulator found nothing wrong"
        if check in ERROR_KINDS:
            assert _simulator_reports(program, check, line) or (
                named and (check, line) in {(e.kind, e.loc.line)
                                            for e in simulate(program, named).errors}), \
                f"the simulator's {check} is elsewhere"
        assert tle_dump([str(path), "-q"]) == 1
        err = capsys.readouterr().err
        assert f"{path}:{line}: error:" in err
    else:  # bounded / unknown: nothing found, nothing claimed beyond what was checked
        assert ctx.ok, [str(d) for d in ctx.diagnostics]
        assert ctx.verdict().kind == want["kind"], ctx.verdict().describe()
        assert tle_dump([str(path), "-q"]) == 3
        if "fault" in want:
            param, value = want["fault"]
            assert not run_pipeline(program, params={param: value}).ok
            assert tle_dump([str(path), "-q", "--param", f"{param}={value}"]) == 1
            assert not simulate(program, {param: value}).ok
        elif want["kind"] == "bounded":
            assert not _simulator_rejects(program)
