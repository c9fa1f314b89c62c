"""Nothing after the frontend reads Python source: the passes verify, and the lowering lowers, the
kernel IR the frontend built (with the Program it derived) while every read of a ``.py`` file
fails, with the messages a reading of the source gives; a kernel IR on its own (no KernelInfo, or
a ``.kir`` file) is verified from the KIR alone."""

from __future__ import annotations

import builtins
import pathlib
import shutil
from pathlib import Path

import pytest

from tle_compiler.cli.dump import main
from tle_compiler.frontend import read_kernels
from tle_compiler.frontend.protocol import protocol
from tle_compiler.ir.kernel_text import print_kernel
from tle_compiler.lowering.codegen import generate, kernel_ir
from tle_compiler.lowering.kir_passes import run_passes
from tle_compiler.passes import run_pipeline

ROOT = Path(__file__).resolve().parent.parent
BAD = ROOT / "tests" / "cases" / "read_after_release.bad.py"
RING = ROOT / "tle_kernels" / "examples" / "ring.py"
VERIFY = "verify-protocol,infer-stages,infer-barriers,verify-deadlock"


class PythonRead(AssertionError):
    """Raised by a read of a .py file (not an OSError: the frontend would take that for a
    missing file and go on)."""


@pytest.fixture
def no_python_reads(monkeypatch):
    """From here on, opening or reading a .py file fails."""
    real_open, real_read = builtins.open, pathlib.Path.read_text

    def guarded_open(file, *a, **k):
        if str(file).endswith(".py"):
            raise PythonRead(f"read {file}")
        return real_open(file, *a, **k)

    def guarded_read(self, *a, **k):
        if self.suffix == ".py":
            raise PythonRead(f"read {self}")
        return real_read(self, *a, **k)

    def enable():
        monkeypatch.setattr(builtins, "open", guarded_open)
        monkeypatch.setattr(pathlib.Path, "read_text", guarded_read)

    return enable


def messages(ctx) -> list[str]:
    return [str(d) for d in ctx.diagnostics]


def test_the_guard_catches_a_reading_of_the_source(tmp_path, no_python_reads):
    # the frontend's derivation of the protocol view reads the source when given none: the
    # guard makes that an error (what the tests below rely on)
    path = tmp_path / "bad.py"
    shutil.copy(BAD, path)
    info, = read_kernels(path)
    no_python_reads()
    with pytest.raises(PythonRead):
        protocol(info.kir)


def test_verifying_reads_no_source(tmp_path, no_python_reads):
    path = tmp_path / "bad.py"
    shutil.copy(BAD, path)
    info, = read_kernels(path)
    expected = messages(run_pipeline(protocol(info.kir)))  # quoting the source from disk
    assert expected and "error" in expected[0]
    no_python_reads()
    with_info = run_passes(info.kir, VERIFY, info=info)
    assert with_info.ctx.program is info.program
    assert messages(with_info.ctx) == expected
    alone = run_passes(info.kir, VERIFY)  # the kernel IR without its KernelInfo
    assert messages(alone.ctx) == expected


def test_lowering_reads_no_source(tmp_path, no_python_reads):
    path = tmp_path / "ring.py"
    shutil.copy(RING, path)
    info, = read_kernels(path)
    expected = generate(info, {}).source
    path.unlink()  # and the file is gone
    no_python_reads()
    assert generate(info, {}).source == expected
    assert run_passes(kernel_ir(info), "emit-gluon", info=info).gluon == expected


def test_a_kir_file_lowers_without_its_source(tmp_path, capsys, no_python_reads):
    path = tmp_path / "ring.py"
    shutil.copy(RING, path)
    info, = read_kernels(path)
    expected = generate(info, {}).source
    kir = tmp_path / "ring.kir"
    kir.write_text(print_kernel(info.kir))
    no_python_reads()
    assert main(["-p", "emit-gluon", str(kir)]) == 0
    out = capsys.readouterr().out
    # the same module, but for the path the header names (the .kir's kernel location)
    assert out.splitlines()[1:] == expected.splitlines()[1:]


def test_the_lowering_needs_the_frontends_kernel_ir(tmp_path):
    from dataclasses import replace

    from tle_compiler.diagnostics import TleError

    info, = read_kernels(RING)
    with pytest.raises(TleError, match="without the kernel IR the frontend built"):
        kernel_ir(replace(info, kir=None))
