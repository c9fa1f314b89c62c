"""A Python source file may start with a UTF-8 byte-order mark: Python skips it, and so does
tle-dump now, in the kernel's file and in the modules it imports (it was refused as a syntax
error at 1:1, though Python imports the file). A .pipe or .kir file with one stays refused
(tests/test_adversarial_pipe_text.py, test_adversarial_kir.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from tle_compiler.cli.dump import main

ROOT = Path(__file__).resolve().parent.parent
BOM = b"\xef\xbb\xbf"


def run(capsys, *args):
    code = main(["-q", *map(str, args)])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def test_a_kernel_file_with_a_byte_order_mark_is_read_as_python_reads_it(tmp_path, capsys):
    path = tmp_path / "ring.py"
    path.write_bytes(BOM + (ROOT / "tle_kernels" / "examples" / "ring.py").read_bytes())
    spec = importlib.util.spec_from_file_location("ring_bom", path)
    spec.loader.exec_module(importlib.util.module_from_spec(spec))  # Python imports it
    code, _, err = run(capsys, path)
    assert code == 0 and "ring_sum: verified" in err, err
    code, out, err = run(capsys, "--gluon", path)
    assert code == 0 and "def ring_sum(" in out, err


def test_an_imported_module_with_a_byte_order_mark(tmp_path, capsys):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "consts.py").write_bytes(BOM + b"STAGES = 3\n")
    text = (ROOT / "tle_kernels" / "examples" / "ring.py").read_text()
    assert "STAGES = 3\n" in text
    (pkg / "k.py").write_text(text.replace("STAGES = 3\n", "from .consts import STAGES\n"))
    code, _, err = run(capsys, pkg / "k.py")
    assert code == 0 and "ring_sum: verified" in err, err


def test_a_pipe_file_with_a_byte_order_mark_stays_refused(tmp_path, capsys):
    path = tmp_path / "example.pipe"
    path.write_bytes(BOM + (ROOT / "docs" / "example.pipe").read_bytes())
    code, _, err = run(capsys, path)
    assert code == 2 and "example.pipe:1: error:" in err, err
