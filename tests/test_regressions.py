"""Protocols on which the static verifier and the simulator once disagreed (tests/regressions/).

Each file is replayed through both on every small param instance; they must agree. New shrunk
counterexamples from test_properties go here as .pipe files with a comment saying what went wrong.
"""

from pathlib import Path

import pytest

from tle_compiler.ir.parser import parse_file

from .test_properties import assert_agree

FILES = sorted((Path(__file__).parent / "regressions").glob("*.pipe"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_regression_agrees(path):
    for program in parse_file(path).kernels:
        assert_agree(program, in_hypothesis=False)


def test_known_verdicts():
    from tle_compiler.passes import verify

    verdict = {p.stem: verify(parse_file(p).kernels[0]).ok for p in FILES}
    assert verdict["read_never_written_dead_code"] is True
    assert verdict["one_shot_odd_index"] is True
    assert verdict["aliasing_without_deadlock"] is False
