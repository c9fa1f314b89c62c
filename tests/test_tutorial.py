"""docs/tutorial.md stays true: every file it shows is written out as shown (a `tutorial-file`
block whole, a `tutorial-change` block as one top-level function replacing its namesake in the
file it names), every `tle-dump` run it shows is run on them, and each output line it shows must
be the start of a line the tool prints (the timings it leaves out differ from run to run), with
exit status 0 for a page showing `verified`, 1 for one showing `rejected`, and as many errors
printed as shown. The claims of its
section 2 about `--graph -o` and `--gluon` are checked here too (the Gluon compile runs on the CPU)."""

from __future__ import annotations

import ast
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "tutorial.md"
DIRECTIVE = re.compile(r"<!-- tutorial-(file|change|run): (.+?) -->\n```(\w+)\n(.*?)```", re.S)


def steps():
    """The page's directives in order: (kind, argument, block text)."""
    return [(m.group(1), m.group(2).strip(), m.group(4)) for m in DIRECTIVE.finditer(PAGE.read_text())]


def replace_function(source: str, block: str) -> str:
    """``source`` with the top-level function ``block`` defines put in place of its namesake."""
    new = ast.parse(block).body
    assert len(new) == 1 and isinstance(new[0], ast.FunctionDef), block
    lines = source.splitlines(keepends=True)
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name == new[0].name:
            return "".join(lines[:node.lineno - 1]) + block + "".join(lines[node.end_lineno:])
    raise AssertionError(f"no function {new[0].name} to replace")


def tle_dump(args, cwd):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "tle_compiler.cli.dump", *args], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=600)


def write_files(tmp_path):
    for kind, arg, block in steps():
        if kind == "file":
            (tmp_path / arg).write_text(block)
        elif kind == "change":
            name, base = re.fullmatch(r"(\S+) from (\S+)", arg).groups()
            (tmp_path / name).write_text(replace_function((tmp_path / base).read_text(), block))


def test_the_page_has_its_steps():
    kinds = [k for k, _, _ in steps()]
    assert kinds.count("file") == 2 and kinds.count("change") == 4 and kinds.count("run") == 6


@pytest.mark.parametrize("run", [a for k, a, _ in steps() if k == "run"])
def test_each_run_prints_what_the_page_shows(tmp_path, run):
    write_files(tmp_path)
    shown = next(b for k, a, b in steps() if k == "run" and a == run)
    argv = shlex.split(run)
    assert argv[0] == "tle-dump"
    r = tle_dump(argv[1:], tmp_path)
    printed = [line.rstrip() for line in (r.stdout + r.stderr).splitlines()]
    for want in shown.strip().splitlines():
        assert any(line.startswith(want.rstrip()) for line in printed), (want, printed)
    # and no error the page leaves out
    assert sum(": error: " in line for line in printed) == shown.count(": error: "), printed
    assert r.returncode == (0 if "verified" in shown else 1), (r.returncode, printed)


def test_graph_and_gluon_as_section_2_says(tmp_path):
    write_files(tmp_path)
    r = tle_dump(["--graph", "-o", "ring.dot", "copy_ring.py"], tmp_path)
    assert r.returncode == 0, r.stderr
    dot = (tmp_path / "ring.dot").read_text()
    assert dot.startswith("digraph") and "ring.full" in dot and "ring.empty" in dot
    r = tle_dump(["--gluon", "copy_ring.py"], tmp_path)
    assert r.returncode == 0, r.stderr
    g = r.stdout
    assert "def producer(" in g and "def consumer(" in g and g.count("@gluon.jit") == 3
    assert "mbarrier.init(ring_full0" in g and "mbarrier.init(ring_empty0" in g
    assert "async_copy_global_to_shared" in g
