"""One named test per classic pipe-protocol failure, each as a pass/fail pair (tests/cases/).

Each case file states its expectation on its first line: ``# expect: ok`` or
``# expect: error CHECK line N``. The verifier must give exactly that verdict (and the named check
at that line), ``tle-dump`` must exit 0 / 1 accordingly, and the simulator must agree: no error in
any small instance of an ``ok`` case, an error in some instance of an ``error`` case, and where
CHECK is also one of the simulator's error kinds (``access-outside-window``,
``wait-on-held-stage``, ...), that kind at that line.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from tle_compiler.cli.dump import main as tle_dump
from tle_compiler.ir.parser import parse_file
from tle_compiler.passes import verify
from tle_compiler.semantics.simulator import ERROR_KINDS, StructuralError, param_values, simulate

CASES = Path(__file__).parent / "cases"
NAMES = sorted({p.name.split(".")[0] for p in CASES.glob("*.pipe")})
EXPECT = re.compile(r"# expect: (ok|error ([\w-]+) line (\d+))")


def _expectation(path: Path):
    m = EXPECT.match(path.read_text().splitlines()[0])
    assert m, f"{path} lacks an '# expect:' header"
    return (None, None) if m.group(1) == "ok" else (m.group(2), int(m.group(3)))


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
        assert (CASES / f"{name}.ok.pipe").exists() and (CASES / f"{name}.bad.pipe").exists(), name
    assert len(NAMES) >= 10


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("variant", ["ok", "bad"])
def test_case(name, variant, capsys):
    path = CASES / f"{name}.{variant}.pipe"
    check, line = _expectation(path)
    assert (check is None) == (variant == "ok"), "ok files expect ok, bad files expect an error"
    (program,) = parse_file(path).kernels
    ctx = verify(program)
    if check is None:
        assert ctx.ok, [str(d) for d in ctx.diagnostics]
        assert not _simulator_rejects(program)
        assert tle_dump([str(path), "-q"]) == 0
    else:
        found = [(d.check, d.loc.line) for d in ctx.errors]
        assert (check, line) in found, found
        assert _simulator_rejects(program), "the simulator found nothing wrong"
        if check in ERROR_KINDS:
            assert _simulator_reports(program, check, line), f"the simulator's {check} is elsewhere"
        assert tle_dump([str(path), "-q"]) == 1
        err = capsys.readouterr().err
        assert f"{path}:{line}: error:" in err
