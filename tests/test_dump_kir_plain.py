"""Plain ``tle-dump FILE.kir``: a kernel in the kernel IR's text form (ir/kernel_text.py) is
verified as a .py file's kernel is, with the same report, verdict and exit status (0 verified,
1 rejected, 3 not proved, 2 unusable input), ``--graph`` and ``--format json`` included.

Before, a .kir file was verified only by the pipeline mode (``-p verify-protocol,verify-deadlock
--print-ir``, which prints the IR with the verdict among its attributes), and plain tle-dump
refused it as unusable input (exit 2)."""

from __future__ import annotations

import io
import json
import re
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from tle_compiler.cli.dump import main

ROOT = Path(__file__).resolve().parents[1]
RING = ROOT / "tle_kernels" / "examples" / "ring.py"


def dump(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def kir_of(py: Path) -> str:
    code, out, err = dump(["-p", "verify-protocol", "--print-ir", str(py)])
    assert code == 0, err
    return out


def verdict_line(text: str) -> str:
    (line,) = [ln for ln in text.splitlines() if ln.startswith("# verdict:")]
    return line


@pytest.fixture
def ring_kir(tmp_path) -> Path:
    path = tmp_path / "ring.kir"
    path.write_text(kir_of(RING))
    return path


def test_plain_kir_gives_the_py_files_verdict(ring_kir):
    code, out, err = dump([str(ring_kir)])
    assert code == 0, err
    code_py, out_py, err_py = dump([str(RING)])
    assert code_py == 0, err_py
    assert verdict_line(out) == verdict_line(out_py)
    assert "verified for every value of N_TILES" in verdict_line(out)
    # the barrier table is the .py file's too
    table = [ln for ln in out.splitlines() if ln.startswith("#   ring.")]
    assert table and table == [ln for ln in out_py.splitlines() if ln.startswith("#   ring.")]


def test_plain_kir_graph_and_json(ring_kir):
    code, out, err = dump(["--graph", str(ring_kir)])
    assert code == 0, err
    assert "pipe ring capacity=3" in out
    code, out, err = dump(["--format", "json", str(ring_kir)])
    assert code == 0, err
    (kernel,) = json.loads(out)["kernels"]
    assert kernel["name"] == "ring_sum"


def _edited(ring_kir: Path, tmp_path: Path, old: str, new: str, name: str) -> Path:
    text = ring_kir.read_text()
    assert text.count(old) == 1, old
    path = tmp_path / name
    path.write_text(text.replace(old, new))
    return path


def test_plain_kir_without_the_readers_release_is_rejected(ring_kir, tmp_path):
    """The loop's release removed: the writer's fourth acquire waits forever (exit 1)."""
    line = next(ln for ln in ring_kir.read_text().splitlines()
                if re.match(r"\s*ring\.reader\.release\(t\)", ln))
    path = _edited(ring_kir, tmp_path, line + "\n", "", "no_release.kir")
    code, out, err = dump([str(path)])
    assert code == 1, (out, err)
    assert "verified" not in verdict_line(out)


def test_plain_kir_reading_the_wrong_index_is_rejected(ring_kir, tmp_path):
    """The reader waits for index t + 1 where the writer commits t: a read of a slot before it
    was written, or a wait that never completes (exit 1)."""
    line = next(ln for ln in ring_kir.read_text().splitlines()
                if re.search(r"ring\.reader\.wait\(t\)", ln))
    # the edited line without its location comment (which counts the nodes it locates)
    new = line.split("  # ")[0].replace("wait(t)", "wait(t + 1)", 1)
    path = _edited(ring_kir, tmp_path, line, new, "wrong_index.kir")
    code, out, err = dump([str(path)])
    assert code == 1, (out, err)
    assert "verified" not in verdict_line(out)


def test_plain_kir_that_is_not_the_text_form_is_unusable(tmp_path):
    path = tmp_path / "bad.kir"
    path.write_text("kernel k {}\n")
    code, out, err = dump([str(path)])
    assert code == 2 and out == "", err
    assert err.startswith(f"{path}:1: error: "), err
    assert "Python" not in err


def test_plain_kir_of_a_kernel_read_specialised(tmp_path):
    """The seesaw decode is read specialised to its DEFAULT_CONFIG constexprs; its .kir holds
    that reading, and plain tle-dump verifies it with the .py file's barrier table."""
    py = ROOT / "tle_kernels" / "mla_decode_seesaw.py"
    path = tmp_path / "seesaw.kir"
    path.write_text(kir_of(py))
    code, out, err = dump([str(path)])
    assert code == 0, err
    code_py, out_py, _ = dump([str(py)])
    assert code_py == 0
    assert "verified for every value of NP" in verdict_line(out)
    rows = [ln for ln in out.splitlines() if re.match(r"#   \w+\.(full|empty)", ln)]
    assert rows and rows == [ln for ln in out_py.splitlines()
                             if re.match(r"#   \w+\.(full|empty)", ln)]


#: (the text replaced, what replaces it, the exit status): hand edits of the ring kernel's .kir
#: that a .kir written by hand could hold and the frontend never produces
EDITS = {
    "a commit before its acquire": (
        "      slot = ring.writer.acquire(t)\n      tl.store(tle.gpu.local_ptr(slot.tile), "
        "tl.load(ptrs))\n      ring.writer.commit(t)\n",
        "      ring.writer.commit(t)\n      slot = ring.writer.acquire(t)\n      "
        "tl.store(tle.gpu.local_ptr(slot.tile), tl.load(ptrs))\n", 1),
    "a read after the release": (
        "      acc = acc + tl.load(tle.gpu.local_ptr(res.slot.tile))\n"
        "      ring.reader.release(t)\n",
        "      ring.reader.release(t)\n"
        "      acc = acc + tl.load(tle.gpu.local_ptr(res.slot.tile))\n", 1),
    "a write after the commit": (
        "      tl.store(tle.gpu.local_ptr(slot.tile), tl.load(ptrs))\n"
        "      ring.writer.commit(t)\n",
        "      ring.writer.commit(t)\n"
        "      tl.store(tle.gpu.local_ptr(slot.tile), tl.load(ptrs))\n", 1),
    "the writer stepping by 2": (
        "    for t in range(0, N_TILES, 1) {\n      ptrs",
        "    for t in range(0, N_TILES, 2) {\n      ptrs", 1),
    "a release twice": (
        "      ring.reader.release(t)\n    }",
        "      ring.reader.release(t)\n      ring.reader.release(t)\n    }", 1),
    "two default partitions": (
        "partition sum_tiles warps=4", "partition sum_tiles default warps=4", 1),
    "no close": ("    ring.writer.close(N_TILES)\n", "", 1),
    "capacity 5": ("pipe ring capacity=3 fields=(tile: fp32[3, 64, 64])",
                   "pipe ring capacity=5 fields=(tile: fp32[5, 64, 64])", 0),
    "a capacity its field does not have": (
        "pipe ring capacity=3 fields=(tile: fp32[3, 64, 64])",
        "pipe ring capacity=1 fields=(tile: fp32[3, 64, 64])", 2),
}


@pytest.mark.parametrize("name", list(EDITS))
def test_plain_kir_hand_edits(ring_kir, tmp_path, name):
    old, new, want = EDITS[name]
    # without location comments (they count the nodes of their line)
    text = "\n".join(re.sub(r"  # .*", "", ln) for ln in ring_kir.read_text().splitlines())
    assert text.count(old) == 1, name
    path = tmp_path / "edited.kir"
    path.write_text(text.replace(old, new) + "\n")
    code, out, err = dump([str(path)])
    assert code == want, (name, out, err)
    if want == 1:
        assert "error:" in err and "verified" not in verdict_line(out)
