"""Imported modules are named in locations relative to the working directory (frontend/modules.py
``shown``), as the kernel file given on the command line is, so readings, printed IR and messages
are the same wherever the checkout lies; a module outside the working directory keeps its absolute
path."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from tle_compiler.frontend.ast_reader import kernels_of_source
from tle_compiler.frontend.modules import shown

ROOT = Path(__file__).resolve().parent.parent


def files_named(path: str) -> set[str]:
    """The files the kernel IR of the pipe decode (read specialised to its DEFAULT_CONFIG: TMA
    copies under ``if TMA``) locates its statements in."""
    infos = kernels_of_source(Path(path).read_text(), path,
                              bind={"BLOCK_H": 64, "TMA": 0, "QTMA": 0})
    return {f for i in infos for f in re.findall(r"file='([^']*)'", repr(i.program))}


def test_helper_modules_are_named_relative_to_the_working_directory(monkeypatch):
    monkeypatch.chdir(ROOT)
    files = files_named("tle_kernels/mla_decode_pipe.py")
    assert "tle_kernels/mla_decode_common.py" in files  # a helper module's events are located
    assert not any(os.path.isabs(f) for f in files), files


def test_the_same_reading_from_another_checkout(monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)
    here = files_named("tle_kernels/mla_decode_pipe.py")
    copy = tmp_path / "checkout"
    shutil.copytree(ROOT / "tle_kernels", copy / "tle_kernels",
                    ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.chdir(copy)
    assert files_named("tle_kernels/mla_decode_pipe.py") == here


def test_outside_the_working_directory_stays_absolute(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    assert shown(str(ROOT / "tle_kernels" / "mla_decode_common.py")) == \
        str(ROOT / "tle_kernels" / "mla_decode_common.py")
    (tmp_path / "m.py").write_text("")
    assert shown(str(tmp_path / "m.py")) == "m.py"
