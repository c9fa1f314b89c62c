"""The frontend reads every kernel the test suite reads as recorded: the Pipe IR Program (params with
their domains, pipes with their ``mma`` fields, partitions, every location), the KernelInfo facts
(param origins, assumptions), or the error (check, file and line).

The expectations (tests/data/protocol_corpus.json, each entry's ``expect``) were recorded from the
AST frontend the kernel IR path replaced, so they hold the KIR path (build.py, then protocol.py) to
what that frontend gave: for each kernel its Program as text with locations
(``print_program(program, True)``) and as ``repr`` (a SHA-256 prefix, which also sees what the text
form does not print), its ``param_args`` and its assumptions ``[param, arg, min, max, line]``.

The kernels: the sources embedded in the suite's tests (``text``, read at a relative ``path`` that
names no file) and every kernel file of the repository (``repo``, read as it is now, generically
and specialised to its DEFAULT_CONFIG's integer constexprs). A repository file carries the SHA-256
prefix of the text it was recorded from (``sha``); a file edited since is held to its recorded
protocol up to line numbers (what moved is not what changed), and ``TLE_UPDATE_GOLDEN=1 pytest
tests/test_protocol_kir.py`` re-records every entry (and adds the kernel files the corpus lacks),
to be reviewed as a diff like the golden Gluon.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Optional

import pytest

from tle_compiler.diagnostics import TleError
from tle_compiler.frontend.ast_reader import kernels_of_source
from tle_compiler.ir.printer import print_program

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "tle_kernels"
CORPUS_FILE = ROOT / "tests" / "data" / "protocol_corpus.json"
CORPUS = json.loads(CORPUS_FILE.read_text())
UPDATE = os.environ.get("TLE_UPDATE_GOLDEN") == "1"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def reading(text: str, path: str, name: Optional[str] = None,
            bind: Optional[dict] = None) -> dict:
    """What the frontend gives for a source, in the corpus's recorded form."""
    try:
        infos = kernels_of_source(text, path, name, bind)
    except TleError as e:
        return {"error": [e.check, e.loc.file if e.loc else None, e.loc.line if e.loc else None]}
    kernels = [{"name": i.name, "text": print_program(i.program, True),
                "repr": _sha(repr(i.program)), "param_args": i.param_args,
                "assumptions": [[a.param, a.arg, a.min, a.max, a.loc.line] for a in i.assumptions]}
               for i in infos]
    return json.loads(json.dumps({"kernels": kernels}))  # tuples as lists, as recorded


_LOC_COMMENT = re.compile(r"  # [^\n]*:\d+$", re.M)


def without_lines(r: dict) -> dict:
    """A reading with its line numbers left out (locations, the repr that contains them)."""
    if "error" in r:
        return {"error": r["error"][:2]}
    return {"kernels": [{"name": k["name"], "text": _LOC_COMMENT.sub("", k["text"]),
                         "param_args": k["param_args"],
                         "assumptions": [a[:4] for a in k["assumptions"]]}
                        for k in r["kernels"]]}


def describe(r: dict) -> str:
    if "error" in r:
        return f"error {r['error']}"
    return "\n".join(f"kernel {k['name']} (repr {k.get('repr')}, param_args {k['param_args']}, "
                     f"assumptions {k['assumptions']}):\n{k['text']}" for k in r["kernels"])


def _disk_files() -> list[Path]:
    files = sorted(PKG.rglob("*.py")) + sorted((ROOT / "tests" / "cases").glob("*.py")) + \
        sorted((ROOT / "tests" / "fixtures").rglob("*.py"))
    return [f for f in files if f.name != "__init__.py" and "@" in f.read_text(encoding="utf-8")]


def _default_bind(path: Path) -> Optional[dict]:
    """The integer constexprs of a kernel file's DEFAULT_CONFIG (None without one)."""
    from tle_compiler.lowering.dumping import default_config

    try:
        cx = default_config(str(path.relative_to(ROOT)), "").get("constexprs", {})
    except TleError:
        return None
    bind = {k: v for k, v in cx.items() if isinstance(v, int) and not isinstance(v, bool)}
    return bind or None


def _corpus_id(i: int, e: dict) -> str:
    where = e.get("repo") or e.get("path")
    extra = f"-{e['name']}" if e.get("name") else ""
    return f"{i}-{where}{extra}" + (f"-{sorted(e['bind'].items())}" if e.get("bind") else "")


@pytest.fixture(scope="module", autouse=True)
def _rewrite_corpus():
    """With TLE_UPDATE_GOLDEN=1: write what the tests recorded back to the corpus file, and add
    the readings of kernel files it lacks."""
    yield
    if UPDATE:
        have = {(e.get("repo"), e.get("name"), json.dumps(e.get("bind"), sort_keys=True))
                for e in CORPUS if "repo" in e}
        cwd = os.getcwd()
        os.chdir(ROOT)
        try:
            for f in _disk_files():
                rel = str(f.relative_to(ROOT))
                text = f.read_text(encoding="utf-8")
                for bind in (None, _default_bind(f)):
                    key = (rel, None, json.dumps(bind, sort_keys=True))
                    if (bind is None or key[2] != "null") and key not in have:
                        have.add(key)
                        CORPUS.append({"bind": bind, "expect": reading(text, rel, None, bind),
                                       "name": None, "repo": rel, "sha": _sha(text)})
        finally:
            os.chdir(cwd)
        CORPUS_FILE.write_text(json.dumps(CORPUS, indent=1, sort_keys=True) + "\n")


@pytest.mark.parametrize("entry", CORPUS, ids=[_corpus_id(i, e) for i, e in enumerate(CORPUS)])
def test_a_kernel_the_suite_reads_reads_as_recorded(entry, tmp_path, monkeypatch):
    if "repo" in entry:
        monkeypatch.chdir(ROOT)  # locations name the file as the corpus does
        path = ROOT / entry["repo"]
        assert path.is_file(), f"{entry['repo']} is gone: remove its entries from the corpus"
        text, where = path.read_text(encoding="utf-8"), entry["repo"]
    else:
        monkeypatch.chdir(tmp_path)  # a relative path names no file of the repository
        text, where = entry["text"], entry["path"]
    got = reading(text, where, entry.get("name"), entry.get("bind"))
    expect = entry["expect"]
    if UPDATE:
        entry["expect"] = got
        if "repo" in entry:
            entry["sha"] = _sha(text)
        return
    if "repo" in entry and entry["sha"] != _sha(text):
        # edited since it was recorded: the same protocol, wherever its lines moved
        assert without_lines(got) == without_lines(expect), \
            f"recorded:\n{describe(expect)}\n\nnow:\n{describe(got)}"
        return
    assert got == expect, f"recorded:\n{describe(expect)}\n\nnow:\n{describe(got)}"


DISK = _disk_files()


@pytest.mark.parametrize("path", DISK, ids=[str(f.relative_to(ROOT)) for f in DISK])
def test_every_kernel_file_is_in_the_corpus(path, monkeypatch):
    # read generically, and specialised to its DEFAULT_CONFIG where that binds constexprs
    monkeypatch.chdir(ROOT)
    rel = str(path.relative_to(ROOT))
    binds = {json.dumps(e.get("bind"), sort_keys=True) for e in CORPUS
             if e.get("repo") == rel and e.get("name") is None}
    assert "null" in binds, f"{rel}: no corpus entry (TLE_UPDATE_GOLDEN=1 adds it)"
    bind = _default_bind(path)
    if bind:
        assert json.dumps(bind, sort_keys=True) in binds, \
            f"{rel}: no corpus entry for its DEFAULT_CONFIG {bind} (TLE_UPDATE_GOLDEN=1 adds it)"


def test_the_corpus_covers_the_frontend_tests():
    # every kind of reading the frontend's tests make is in the corpus: errors of each check the
    # frontend raises, specialised reads, kernels of several partitions
    kinds = {e["expect"]["error"][0] if "error" in e["expect"] else "ok" for e in CORPUS
             if "text" in e}
    for check in ("ok", "non-affine", "non-affine-loop", "non-affine-if", "conditional-event",
                  "unknown-slot", "reader-write", "buffer-race", "bad-assume", "bad-pipe",
                  "inconsistent-view", "verb-as-value", "unsupported-control-flow", "bad-loop",
                  "aliased-buffer"):
        assert check in kinds, check
    assert any(e.get("bind") for e in CORPUS)
    assert any(len(k["text"].split("\npartition ")) > 3 for e in CORPUS
               for k in e["expect"].get("kernels", ()))


def test_edited_files_are_held_to_their_protocol_up_to_lines():
    # the comparison an edited kernel file gets ignores where lines moved, not what the protocol
    # is: a moved event passes, a changed index or a different error check does not
    a = {"kernels": [{"name": "k", "text": "  p.acquire(i)  # k.py:10\n", "repr": "x",
                      "param_args": {}, "assumptions": [["N", "N", 0, None, 3]]}]}
    moved = {"kernels": [{"name": "k", "text": "  p.acquire(i)  # k.py:12\n", "repr": "y",
                          "param_args": {}, "assumptions": [["N", "N", 0, None, 5]]}]}
    changed = {"kernels": [{"name": "k", "text": "  p.acquire(i + 1)  # k.py:10\n", "repr": "x",
                            "param_args": {}, "assumptions": [["N", "N", 0, None, 3]]}]}
    assert without_lines(a) == without_lines(moved)
    assert without_lines(a) != without_lines(changed)
    assert without_lines({"error": ["bad-pipe", "k.py", 3]}) == \
        without_lines({"error": ["bad-pipe", "k.py", 9]})
    assert without_lines({"error": ["bad-pipe", "k.py", 3]}) != \
        without_lines({"error": ["bad-loop", "k.py", 3]})
