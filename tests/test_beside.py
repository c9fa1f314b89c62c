"""tle-dump's memory-race proof in a child process (cli/beside.py, cli/kernel_checks.py
RacesBeside): the child's results come back as computed, a child that writes anything or raises
gives none (the parent computes them itself), no fork means no child; and tle-dump run as a process
(where the child is used) prints exactly what main() called in-process (where it is not) prints."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tle_compiler.cli import beside
from tle_compiler.cli.dump import main

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork here")


def _square(x):
    return ("proved", [frozenset({f"s{x}"})], {"N": x * x})


def _noisy(x):
    print("a word on stdout")
    return x


def _raising(x):
    if x == 2:
        raise RuntimeError("boom")
    return x


def test_results_come_back_in_order():
    child = beside.start(_square, [(1,), (2,), (3,)])
    assert child is not None
    assert child.results() == [_square(1), _square(2), _square(3)]
    assert child.results() == [_square(1), _square(2), _square(3)]  # taken once, kept


def test_a_child_that_writes_gives_no_result():
    child = beside.start(_noisy, [(1,)])
    assert child.results() == [None]


def test_a_job_that_raises_gives_no_result_for_it():
    child = beside.start(_raising, [(1,), (2,), (3,)])
    assert child.results() == [1, None, 3]


def _sleeping(x):
    import time
    time.sleep(60)
    return x


def test_a_child_past_the_wait_is_stopped_and_gives_no_result(monkeypatch):
    monkeypatch.setattr(beside, "WAIT_S", 0.5)
    child = beside.start(_sleeping, [(1,)])
    assert child.results() == [None]  # the parent computes it itself
    with pytest.raises(ChildProcessError):
        os.waitpid(child.pid, os.WNOHANG)


def test_no_child_where_tle_dump_fork_is_0(monkeypatch):
    monkeypatch.setenv("TLE_DUMP_FORK", "0")
    assert beside.start(_square, [(1,)]) is None
    monkeypatch.setenv("TLE_DUMP_FORK", "1")
    child = beside.start(_square, [(1,)])
    assert child is not None and child.results() == [_square(1)]


def test_a_child_never_asked_is_stopped():
    child = beside.start(_square, [(1,)])
    child.close()
    with pytest.raises(ChildProcessError):
        os.waitpid(child.pid, os.WNOHANG)


def test_no_fork_no_child(monkeypatch):
    monkeypatch.delattr(os, "fork")
    assert beside.start(_square, [(1,)]) is None


def _racy(tmp_path, name: str) -> str:
    from .test_global_races import RACES

    f = tmp_path / "k.py"
    f.write_text(RACES[name], encoding="utf-8")
    return str(f)


@pytest.mark.parametrize("kernel", ["tle_kernels/sparse_decode_seesaw_fp8.py",
                                    "tle_kernels/examples/chain.py",
                                    "race:an address of the previous iteration",
                                    "race:two stores of one address"])
def test_a_process_prints_what_main_prints(kernel, capsys, tmp_path):
    """The FP8 decode's verdict rests on the stride rule (a line the race check prints); the
    example is another kernel's verdict; the races are refused with a witness (the iterations
    z3's model gives). The summary line's seconds aside, the same output."""
    if kernel.startswith("race:"):
        kernel = _racy(tmp_path, kernel[5:])
    code = main(["--graph", kernel])
    got = capsys.readouterr()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, "-m", "tle_compiler.cli.dump", "--graph", kernel],
                       cwd=ROOT, env=env, capture_output=True, text=True)

    def timeless(err: str) -> list[str]:
        return [line.rsplit(" (", 1)[0] if line.endswith(" s)") else line
                for line in err.splitlines()]

    assert r.returncode == code
    assert r.stdout == got.out
    assert timeless(r.stderr) == timeless(got.err)
