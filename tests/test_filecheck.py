"""FileCheck-style tests of the kernel IR passes: every tests/filecheck/* file names its pipeline
in a ``RUN:`` line (``tle-dump -p PIPELINE [--print-ir] %s``), and its ``CHECK`` lines are matched,
in order, against what that command prints (the KIR text form with the passes' attributes; the
Gluon module after emit-gluon). The command runs through tle-dump's main, so these are also tests
of the shell workflow; a file's RUN line can be pasted into a shell with %s replaced by its path,
%S by its folder and %repo by the repository root (an input shared by several files lives in
tests/filecheck/inputs/; a bundled kernel is named by its path in the repository).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Optional

import pytest

from tle_compiler.cli.dump import main

# ----------------------------------------------------------------------------------------------
# the matcher
#
# Matching goes through the text in order, from where the previous match ended (as LLVM's FileCheck
# does, so several CHECK lines may match one long output line, left to right):
# 
# * ``CHECK: s``       the first occurrence of ``s`` after the previous match;
# * ``CHECK-NEXT: s``  an occurrence of ``s`` on the line right after the previous match's line;
# * ``CHECK-NOT: s``   no occurrence of ``s`` between the previous match and the next positive
#                      match (or the end of the text).
# 
# Patterns are plain substrings (surrounding blanks ignored). :func:`check` returns None when every
# line matches, else a message naming the first CHECK line that does not.

_DIRECTIVE = re.compile(r"(?:#|//)\s*(CHECK|CHECK-NEXT|CHECK-NOT):(.*)$")


def directives(source: str) -> list[tuple[int, str, str]]:
    """(line number, kind, pattern) of every CHECK line of a test file, in order."""
    out = []
    for n, line in enumerate(source.splitlines(), 1):
        m = _DIRECTIVE.search(line)
        if m:
            out.append((n, m.group(1), m.group(2).strip()))
    return out


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def check(checks: list[tuple[int, str, str]], text: str) -> Optional[str]:
    pos = 0  # where the previous match ended
    prev_line_end = -1  # offset of the newline ending the previous match's line
    nots: list[tuple[int, str]] = []

    def forbidden(lo: int, hi: int) -> Optional[str]:
        for n, pat in nots:
            at = text.find(pat, lo, hi)
            if at >= 0:
                return (f"line {n}: CHECK-NOT: {pat!r} found on output line "
                        f"{_line_of(text, at)}")
        return None

    for n, kind, pat in checks:
        if kind == "CHECK-NOT":
            nots.append((n, pat))
            continue
        if kind == "CHECK-NEXT":
            start = text.find("\n", pos) + 1 if prev_line_end < 0 else prev_line_end + 1
            if start <= 0 or start > len(text):
                return f"line {n}: CHECK-NEXT: {pat!r}: no line after the previous match"
            end = text.find("\n", start)
            end = len(text) if end < 0 else end
            at = text.find(pat, start, end)
            if at < 0:
                return (f"line {n}: CHECK-NEXT: {pat!r} not on output line "
                        f"{_line_of(text, start)}: {text[start:end]!r}")
        else:
            at = text.find(pat, pos)
            if at < 0:
                return (f"line {n}: CHECK: {pat!r} not found after output line "
                        f"{_line_of(text, pos)}")
        bad = forbidden(pos, at)
        if bad:
            return bad
        nots = []
        pos = at + len(pat)
        nl = text.find("\n", pos)
        prev_line_end = len(text) if nl < 0 else nl
    return forbidden(pos, len(text))


# ----------------------------------------------------------------------------------------------
# the files

HERE = Path(__file__).resolve().parent / "filecheck"
FILES = sorted(p for p in HERE.iterdir() if p.suffix in (".py", ".kir"))
_RUN = re.compile(r"(?:#|//)\s*RUN:\s*(.*)$", re.M)


ROOT = HERE.parent.parent


def run_line(path: Path) -> list[str]:
    """The tle-dump arguments of the file's RUN line (%s: the file, %S: its folder, %repo: the
    repository root)."""
    m = _RUN.search(path.read_text())
    assert m, f"{path.name}: no RUN: line"
    argv = shlex.split(m.group(1))
    assert argv[0] == "tle-dump", f"{path.name}: RUN runs tle-dump, not {argv[0]}"
    subst = {"%s": str(path), "%S": str(path.parent), "%repo": str(ROOT)}
    return [re.sub(r"%repo|%S|%s", lambda m: subst[m.group()], a) for a in argv[1:]]


def run_file(path: Path, capsys) -> tuple[int, str]:
    code = main(run_line(path))
    return code, capsys.readouterr().out


def test_there_is_a_file_per_pass():
    from tle_compiler.lowering.kir_passes import passes_with_lowering

    covered = set()
    for f in FILES:
        argv = run_line(f)
        covered |= set(argv[argv.index("-p") + 1].split(","))
    assert set(passes_with_lowering()) <= covered


@pytest.mark.parametrize("path", FILES, ids=[f.name for f in FILES])
def test_filecheck(path, capsys):
    checks = directives(path.read_text())
    assert any(k != "CHECK-NOT" for _, k, _ in checks), f"{path.name}: no CHECK lines"
    code, out = run_file(path, capsys)
    want = re.search(r"EXIT:\s*(\d+)", path.read_text())
    assert code == int(want.group(1) if want else 0), out
    problem = check(checks, out)
    assert problem is None, f"{path.name}: {problem}\n--- output ---\n{out}"


def test_a_wrong_check_line_fails(capsys):
    """Mutations of every file's CHECK lines must fail: its last positive pattern changed, and
    that pattern turned into a CHECK-NOT (it is in the output after the previous match)."""
    for path in FILES:
        checks = directives(path.read_text())
        _, out = run_file(path, capsys)
        i = max(k for k, c in enumerate(checks) if c[1] != "CHECK-NOT")
        n, kind, pat = checks[i]
        wrong = checks[:i] + [(n, kind, pat + " WRONG")] + checks[i + 1:]
        assert check(wrong, out) is not None, path.name
        forbid = checks[:i] + [(n, "CHECK-NOT", pat)] + checks[i + 1:]
        assert check(forbid, out) is not None, path.name


def test_the_matcher():
    text = "a b c\nd e\nf\n"
    assert check([(1, "CHECK", "a"), (2, "CHECK", "c"), (3, "CHECK-NEXT", "e")], text) is None
    assert "CHECK-NEXT" in check([(1, "CHECK", "a"), (2, "CHECK-NEXT", "f")], text)
    assert "CHECK-NOT" in check([(1, "CHECK", "a"), (2, "CHECK-NOT", "e"), (3, "CHECK", "f")],
                                text)
    assert check([(1, "CHECK", "d"), (2, "CHECK-NOT", "a"), (3, "CHECK", "f")], text) is None
    assert check([(1, "CHECK", "c"), (2, "CHECK", "b")], text) is not None  # in order
    assert check([(1, "CHECK", "f"), (2, "CHECK-NOT", "a")], text) is None
    assert check([(1, "CHECK", "a"), (2, "CHECK-NOT", "f")], text) is not None  # up to the end
