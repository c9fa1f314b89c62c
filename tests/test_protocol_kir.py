"""The protocol view of the kernel IR (frontend/protocol.py) reads every kernel as the AST frontend
does: ``protocol(build(...))`` gives the same Program (params with their domains, pipes with their
``mma`` fields, partitions, every location) and the same KernelInfo facts (param origins,
assumptions, partition bindings), or the same error (check, file and line).

The kernels: every Python file of the kernel package (tle_kernels/, examples, GPU test kernels),
tests/cases/*.py and tests/fixtures/**/*.py as they are on disk (read generically, and
specialised to the file's DEFAULT_CONFIG where it has one), and every kernel source the test
suite reads (tests/data/protocol_corpus.json: the sources embedded in tests/test_frontend*.py,
test_specialization.py, test_kernels.py, the stamp kernels, ..., recorded from a run of the
suite; files of the repository are referenced by path, so they are read as they are now).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import pytest

from tle_compiler.diagnostics import TleError
from tle_compiler.frontend.ast_reader import kernels_of_source
from tle_compiler.frontend.protocol import read_kernels_kir
from tle_compiler.ir.printer import print_program, without_locations

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / ("tle_kernels" if (ROOT / "tle_kernels").is_dir() else "kernels")
CORPUS = json.loads((ROOT / "tests" / "data" / "protocol_corpus.json").read_text())


def _disk_files() -> list[Path]:
    files = sorted(PKG.rglob("*.py")) + sorted((ROOT / "tests" / "cases").glob("*.py")) + \
        sorted((ROOT / "tests" / "fixtures").rglob("*.py"))
    return [f for f in files if f.name != "__init__.py" and "@" in f.read_text(encoding="utf-8")]


def _default_bind(path: Path) -> Optional[dict]:
    from tle_compiler.lowering.dumping import default_config

    try:
        cx = default_config(str(path), "").get("constexprs", {})
    except (TleError, Exception):
        return None
    bind = {k: v for k, v in cx.items() if isinstance(v, int) and not isinstance(v, bool)}
    return bind or None


def _read(reader, text: str, path: str, name, bind):
    try:
        return "ok", reader(text, path, name, bind)
    except TleError as e:
        return "err", e


def _where(e: TleError) -> tuple:
    return (e.check, e.loc.file if e.loc else None, e.loc.line if e.loc else None)


def assert_same_reading(text: str, path: str, name: Optional[str] = None,
                        bind: Optional[dict] = None) -> None:
    a = _read(kernels_of_source, text, path, name, bind)
    b = _read(read_kernels_kir, text, path, name, bind)
    if a[0] == "err" or b[0] == "err":
        what = lambda r: (f"error {_where(r[1])}: {r[1].message}" if r[0] == "err" else
                          f"kernels {[i.name for i in r[1]]}")
        assert a[0] == b[0] == "err" and _where(a[1]) == _where(b[1]), \
            f"AST frontend: {what(a)}\nKIR: {what(b)}"
        return
    ast_infos, kir_infos = a[1], b[1]
    assert [i.name for i in ast_infos] == [i.name for i in kir_infos]
    for x, y in zip(ast_infos, kir_infos):
        if x.program != y.program:
            # the text form shows what differs (with event locations); else only a location
            assert print_program(x.program, True) == print_program(y.program, True)
            assert without_locations(x.program) == without_locations(y.program)
            assert x.program == y.program
        for f in ("args", "constexprs", "num_warps", "options", "param_args", "assumptions"):
            assert getattr(x, f) == getattr(y, f), f
        assert [(p.name, p.bindings, p.warps, p.regs, p.default, p.loc) for p in x.partitions] == \
            [(p.name, p.bindings, p.warps, p.regs, p.default, p.loc) for p in y.partitions]
        assert {n: (p.fields, p.decl) for n, p in x.pipes.items()} == \
            {n: (p.fields, p.decl) for n, p in y.pipes.items()}


DISK = _disk_files()


@pytest.mark.parametrize("path", DISK, ids=[str(f.relative_to(ROOT)) for f in DISK])
def test_a_file_on_disk_reads_the_same(path):
    text = path.read_text(encoding="utf-8")
    assert_same_reading(text, str(path))
    bind = _default_bind(path)
    if bind:
        assert_same_reading(text, str(path), bind=bind)


def _corpus_id(i: int, e: dict) -> str:
    where = e.get("repo") or e.get("path")
    extra = f"-{e['name']}" if e.get("name") else ""
    return f"{i}-{where}{extra}" + (f"-{sorted(e['bind'].items())}" if e.get("bind") else "")


@pytest.mark.parametrize("entry", CORPUS, ids=[_corpus_id(i, e) for i, e in enumerate(CORPUS)])
def test_a_kernel_the_suite_reads_reads_the_same(entry, tmp_path, monkeypatch):
    if "repo" in entry:
        path = ROOT / entry["repo"]
        if not path.is_file():
            pytest.skip(f"{entry['repo']} is gone")
        text, where = path.read_text(encoding="utf-8"), str(path)
    else:
        text, where = entry["text"], entry["path"]
        if entry.get("siblings"):
            for n, t in entry["siblings"].items():
                (tmp_path / n).write_text(t)
            (tmp_path / where).write_text(text)
            where = str(tmp_path / where)
        else:
            monkeypatch.chdir(tmp_path)  # a relative path names no file of the repository
    assert_same_reading(text, where, entry.get("name"), entry.get("bind"))


def test_the_corpus_covers_the_frontend_tests():
    # every kind of reading the frontend's tests make is in the corpus: errors of each check the
    # frontend raises, specialised reads, kernels of several partitions
    kinds = set()
    for e in CORPUS:
        if "text" in e:
            r = _read(kernels_of_source, e["text"], e["path"], e.get("name"), e.get("bind"))
            kinds.add(r[1].check if r[0] == "err" else "ok")
    for check in ("ok", "non-affine", "non-affine-loop", "non-affine-if", "conditional-event",
                  "unknown-slot", "reader-write", "buffer-race", "bad-assume", "bad-pipe",
                  "inconsistent-view", "verb-as-value", "unsupported-control-flow", "bad-loop",
                  "aliased-buffer"):
        assert check in kinds, check
