"""The repository stands alone and reads as a product.

Every tracked text file (``git ls-files``; in an sdist without ``.git``, every file of the tree) is
scanned for references to documents and folders that are not in the repository (lab notes, the
wheel folder of a development machine, a checkout's sibling folders), for measurement history
("session N", removed logs, dated artefacts) and for dated diary headings; every ``*.md`` a file
names must exist. docs/BENCHMARKS.md and docs/GPU_TESTS.md keep one current result per benchmark,
each with its date, machine and command, and the README's figures come from them.

A failure names ``file:line`` and the rule.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Iterator, NamedTuple, Optional

import pytest

ROOT = Path(__file__).resolve().parent.parent
SELF = "tests/test_repository.py"  # states the rules, so it is not scanned

# Folders that are never part of the product (build outputs, caches, virtual environments).
SKIP_DIRS = {".git", "__pycache__", ".hypothesis", ".pytest_cache", "build", "dist", ".venv",
             "venv", ".tox", ".eggs", "node_modules"}

RULES: list[tuple[str, re.Pattern]] = [
    ("document not in the repository",
     re.compile(r"\b(?:ANCHORS|MISSION)\b|\b(?:DESIGN|DEVICE|STYLE)\.md\b")),
    ("folder not in the repository (.whl/)", re.compile(r"(?<![\w*])\.whl\b")),
    ("folder outside the checkout (../shared)", re.compile(r"\.\./shared\b")),
    ("development tooling (device tool)", re.compile(r"\bdevice tool\b", re.IGNORECASE)),
    ("measurement history (session N)", re.compile(r"\bsessions?[ -]\d+\b", re.IGNORECASE)),
    ("removed logs (gpu_logs)", re.compile(r"\bgpu_logs\b")),
    ("dated artefact", re.compile(r"\b[A-Za-z]\w*_20\d\d-\d\d-\d\d\w*|\b20\d\d-\d\d-\d\d_\w+")),
]
DIARY_HEADING = re.compile(r"^#{1,6}\s.*(?:\b20\d\d-\d\d-\d\d\b|\bsessions?[ -]?\d)", re.IGNORECASE)
DATED_PATH = re.compile(r"20\d\d-?\d\d-?\d\d")
MD_REF = re.compile(r"(?<![\w/.:-])((?:[\w.-]+/)*[\w.-]*\w\.md)\b")

# Known offenders in files this change does not own: (path, rule, text on the line). To be removed:
# each is fixed by its owner, then its entry goes (test_allow_list_is_current fails for an entry
# that no longer matches, so the list cannot outlive the fixes).
ALLOWED: set[tuple[str, str, str]] = set()


class Finding(NamedTuple):
    path: str
    line: int
    rule: str
    text: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.rule}: {self.text.strip()[:160]}"


def product_files(root: Path = ROOT) -> list[str]:
    """Repository-relative paths: the tracked files, or every file of the tree without git."""
    if (root / ".git").exists() and shutil.which("git"):
        out = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True)
        return sorted(p for p in out.stdout.decode().split("\0") if p and (root / p).is_file())
    files = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS and not d.endswith(".egg-info")]
        for f in filenames:
            files.append((Path(dirpath) / f).relative_to(root).as_posix())
    return sorted(files)


def read_text(path: Path) -> Optional[str]:
    """The file's text, or None for a binary file."""
    data = path.read_bytes()
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _md_exists(root: Path, src: str, ref: str, files: set[str]) -> bool:
    base = Path(src).parent
    for cand in (Path(ref), base / ref, Path("docs") / ref):
        p = os.path.normpath(cand.as_posix())
        if p in files or (root / p).is_file():
            return True
    return False


def scan(root: Path = ROOT, paths: Optional[list[str]] = None) -> list[Finding]:
    paths = product_files(root) if paths is None else paths
    files = set(paths)
    found: list[Finding] = []
    for rel in paths:
        if rel == SELF:
            continue
        if DATED_PATH.search(rel):
            found.append(Finding(rel, 0, "dated artefact (file name)", rel))
        text = read_text(root / rel)
        if text is None:
            continue
        is_md = rel.endswith(".md")
        for no, line in enumerate(text.splitlines(), 1):
            for rule, rx in RULES:
                if rx.search(line):
                    found.append(Finding(rel, no, rule, line))
            if is_md and DIARY_HEADING.search(line):
                found.append(Finding(rel, no, "dated diary heading", line))
            for m in MD_REF.finditer(line):
                ref = m.group(1)
                if "://" in line[max(0, m.start() - 80):m.start()]:
                    continue  # part of a URL
                if not _md_exists(root, rel, ref, files):
                    found.append(Finding(rel, no, f"names {ref}, which is not in the repository",
                                         line))
    return found


def _allowed(f: Finding) -> bool:
    return any(f.path == p and f.rule == r and t in f.text for p, r, t in ALLOWED)


def test_product_files_are_found():
    files = product_files()
    assert {"README.md", "docs/BENCHMARKS.md", "pyproject.toml"} <= set(files)
    assert not any(f.startswith((".git/", "build/")) or "/__pycache__/" in f for f in files)


def test_no_references_outside_the_repository_and_no_measurement_diaries():
    bad = [f for f in scan() if not _allowed(f)]
    assert not bad, "\n" + "\n".join(map(str, bad))


def test_allow_list_is_current():
    """Each allowed offender still exists (remove the entry once its file is fixed)."""
    found = scan()
    stale = [e for e in ALLOWED
             if not any(f.path == e[0] and f.rule == e[1] and e[2] in f.text for f in found)]
    assert not stale, f"fixed, remove from ALLOWED: {stale}"


PLANTED = [  # (file, content, rule, line)
    ("notes.md", "Inputs as in ANCHORS.md.\n", "document not in the repository", 1),
    ("src/a.py", "x = 0\n# see DESIGN.md for why\n", "document not in the repository", 2),
    ("src/b.py", "x = 1  # the MISSION says so\n", "document not in the repository", 1),
    ("run.sh", "pip install .whl/lark-1.2.whl\n", "folder not in the repository (.whl/)", 1),
    ("run2.sh", "cp -r ../shared/data .\n", "folder outside the checkout (../shared)", 1),
    ("doc.md", "Measured on the H200 via the device tool.\n", "development tooling (device tool)", 1),
    ("src/c.py", "y = 2\n\n# +3 % (docs/BENCHMARKS.md, session 3)\n", "measurement history (session N)", 3),
    ("d.md", "Logs: docs/gpu_logs/x.log\n", "removed logs (gpu_logs)", 1),
    ("e.md", "plot docs/sparse_mla_bench_2026-11-29_s7.png\n", "dated artefact", 1),
    ("f.md", "(2026-11-29_s4_gpu_tests.log)\n", "dated artefact", 1),
    ("g.md", "# Title\n\n## 2026-11-29 — lowering as of a commit\n", "dated diary heading", 3),
    ("h.md", "# Session 4 (H200)\n", "dated diary heading", 1),
    ("i.md", "see docs/NOTES.md\n", "names docs/NOTES.md, which is not in the repository", 1),
    ("docs/bench_2026-11-29.png", "\x89PNG\r\n\x1a\n\0\0", "dated artefact (file name)", 0),
]


@pytest.mark.parametrize("name,content,rule,line", PLANTED, ids=[p[0] for p in PLANTED])
def test_a_planted_offender_is_found_with_its_line(tmp_path, name, content, rule, line):
    """In a tree without .git (as from an sdist): the offender is reported at its file and line."""
    (tmp_path / "README.md").write_text("# x\nSee docs/ok.md and README.md.\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "ok.md").write_text("fine, 2026-12-01, NVIDIA H200\n")
    (tmp_path / "docs" / "BENCHMARKS.md").write_text("# Benchmarks\n")
    p = tmp_path / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(content.encode("latin-1") if name.endswith(".png") else content.encode())
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "junk.md").write_text("ANCHORS.md\n")  # never scanned
    found = scan(tmp_path)
    assert (name, line, rule) in [(f.path, f.line, f.rule) for f in found], found
    assert {f.path for f in found} == {name}, found


@pytest.mark.parametrize("name,line", [
    ("f.md", "python3 -m pip install --no-index --no-deps --target /tmp/site DIR/*.whl"),
    ("f.py", '(whl,) = wheels.glob("tle_compiler-*.whl")'),
    ("f.py", "self.anchors.append(('fix', v, L))  # layout anchors first"),
    ("f.py", "raise PermissionError(13, 'Permission denied')"),
    ("f.md", "2026-12-01, NVIDIA H200, `python3 -m tle_kernels.bench_sparse_mla --check`"),
    ("f.pipe", "# Found by the property test (2026-11-29): a one-shot pipe staged at index 1."),
    ("f.md", "see https://github.com/org/repo/blob/main/CONTRIBUTING.md"),
    ("f.md", "## Where the time goes"),
])
def test_ordinary_text_is_not_flagged(tmp_path, name, line):
    (tmp_path / name).write_text(line + "\n")
    assert scan(tmp_path) == []


# --- the benchmark and GPU-test documents ------------------------------------------------------

DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")
MACHINE = re.compile(r"NVIDIA H200|development machine")
COMMAND = re.compile(r"`(?:python3|bash|FLASHMLA_SRC=)[^`]*`")


def _sections(text: str) -> dict[str, str]:
    parts = re.split(r"^## (.+)$", text, flags=re.MULTILINE)
    return {parts[i].strip(): parts[i + 1] for i in range(1, len(parts), 2)}


def test_benchmarks_one_current_table_per_benchmark_with_date_machine_command():
    text = (ROOT / "docs" / "BENCHMARKS.md").read_text()
    sections = _sections(text)
    assert "Method" in sections
    results = {k: v for k, v in sections.items() if k not in ("Method", "Levers measured")}
    assert {"SparseMLA prefill: naive Triton, TLE-Pipe, TLE seesaw", "Pipe copy",
            "tle-dump latency"} <= set(results), sorted(results)
    for title, body in results.items():
        tables = re.findall(r"^\|(?:\s*:?-{3,}:?\s*\|)+\s*$", body, flags=re.MULTILINE)
        assert len(tables) == 1, f"{title!r}: {len(tables)} tables (one current table)"
        head = body.split("\n|", 1)[0]  # the text before the table says when, where, how
        assert DATE.search(head), f"{title!r}: no date before its table"
        assert MACHINE.search(head), f"{title!r}: no machine before its table"
        assert COMMAND.search(head), f"{title!r}: no command before its table"


def test_gpu_tests_latest_results_have_date_machine_command():
    sections = _sections((ROOT / "docs" / "GPU_TESTS.md").read_text())
    latest = sections.get("Latest results")
    assert latest, "docs/GPU_TESTS.md has no 'Latest results' section"
    # a table: one row per command, its code and date; the machine named above the table
    assert "NVIDIA H200" in latest.split("\n|")[0], "the Latest results section names no machine"
    rows = [r for r in latest.splitlines() if r.startswith("| `")]
    assert rows, "docs/GPU_TESTS.md's Latest results has no rows with a command"
    run = re.compile(r"`(?:[A-Z_]+=\S+ )*(?:python3|bash|compute-sanitizer)[^`]*`")
    for r in rows:
        assert DATE.search(r) and run.search(r), r


def test_readme_figures_come_from_the_benchmark_tables():
    readme = (ROOT / "README.md").read_text()
    bench = (ROOT / "docs" / "BENCHMARKS.md").read_text()
    start = readme.index("- **SparseMLA prefill**")
    para = readme[start:readme.index("\n\n", start)]
    figures = re.findall(r"\d+\.\d+", para.replace("DeepSeek-V3.2", ""))
    assert len(figures) >= 6, para
    missing = [x for x in figures if not re.search(rf"(?<![\d.]){re.escape(x)}(?!\d)", bench)]
    assert not missing, f"README figures not in docs/BENCHMARKS.md: {missing}"
