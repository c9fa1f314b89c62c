"""A KIR text file's pipe field must have one slot per stage: its leading dimension is the pipe's
capacity, as the frontend requires of a kernel's ``tle.gpu.alloc``. A hand-edited capacity above
the slot count would be indexed past the buffer (``tile.index(t % 4)`` into ``[3, ...]``), one
below it wastes stages; both are refused at the field (its location, kept from the kernel's source), exit 2, and nothing is
lowered."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RING = ROOT / "tle_kernels/examples/ring.py"


def _dump(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tle_compiler.cli.dump", *args],
                          capture_output=True, text=True, cwd=ROOT)


@pytest.fixture(scope="module")
def ring_kir() -> str:
    out = _dump("-p", "verify-protocol", "--print-ir", str(RING))
    assert out.returncode == 0, out.stderr
    return out.stdout


def _pipe_line(text: str) -> str:
    (line,) = [ln for ln in text.splitlines() if ln.lstrip().startswith("pipe ring ")]
    return line


def test_the_printed_kir_lowers(tmp_path, ring_kir):
    p = tmp_path / "ring.kir"
    p.write_text(ring_kir)
    assert "capacity=3" in _pipe_line(ring_kir) and "[3, " in _pipe_line(ring_kir)
    out = _dump("-q", "-p", "emit-gluon", str(p))
    assert out.returncode == 0, out.stderr


@pytest.mark.parametrize("capacity", [4, 2])
def test_a_capacity_other_than_the_slot_count_is_refused(tmp_path, ring_kir, capacity):
    line = _pipe_line(ring_kir)
    edited = ring_kir.replace(line, line.replace("capacity=3", f"capacity={capacity}"))
    p = tmp_path / f"ring_c{capacity}.kir"
    p.write_text(edited)
    for args in (["-q", "-p", "emit-gluon", str(p)],
                 ["-p", "verify-protocol,verify-deadlock", "--print-ir", str(p)]):
        out = _dump(*args)
        assert out.returncode == 2, (args, out.stdout, out.stderr)
        assert (f"the leading dimension of field 'tile' must be the capacity {capacity}"
                in out.stderr)
        # at the field's location, which the text form keeps from the kernel's source (the
        # `# 17:12` comment of the pipe line): the tle.pipe declaration
        assert "tle_kernels/examples/ring.py:17:" in out.stderr
        assert "gl.allocate_shared_memory" not in out.stdout
