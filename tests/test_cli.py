"""tle-dump end to end: formats, exit statuses, diagnostics, pipelines."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tle_compiler.cli.dump import main
from tle_compiler.ir.parser import parse_module

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "docs" / "example.pipe"
DEADLOCK = ROOT / "docs" / "example_deadlock.pipe"
KERNELS = [ROOT / "tle_kernels" / "sparse_mla_pipe.py", ROOT / "tle_kernels" / "sparse_mla_seesaw.py",
           ROOT / "tle_kernels" / "mla_decode_pipe.py", ROOT / "tle_kernels" / "mla_decode_seesaw.py"]


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_text_report_is_valid_pipe_and_lists_barriers(capsys):
    code, out, err = run(capsys, "--graph", EXAMPLE)
    assert code == 0
    assert "# verdict: verified" in out
    assert "kv.empty[g1][0..1]  2      left.release, right.release" in out
    assert "producer --kv(kv_r)--> left, right" in out
    # The whole report parses back as a .pipe file with the same program.
    again = parse_module(out).kernels[0]
    orig = parse_module(EXAMPLE.read_text()).kernels[0]
    assert [p.name for p in again.pipes] == [p.name for p in orig.pipes]
    assert "verified" in err


def test_json_schema(capsys):
    code, out, _ = run(capsys, "--format", "json", "--graph", EXAMPLE)
    assert code == 0
    doc = json.loads(out)
    (k,) = doc["kernels"]
    assert k["name"] == "sparse_mla_pipe" and k["verified"] is True
    assert {p["name"] for p in k["pipes"]} == {"q", "kv", "score"}
    assert [p["name"] for p in k["partitions"]] == ["producer", "left", "right"]
    full = [b for b in k["barriers"] if b["pipe"] == "kv" and b["kind"] == "full"]
    empty = [b for b in k["barriers"] if b["pipe"] == "kv" and b["kind"] == "empty"]
    assert len(full) == 4 and len(empty) == 4  # 2 groups x 2 stages
    assert sorted(b["count"] for b in empty) == [1, 1, 2, 2]
    b = empty[0]
    assert set(b) >= {"pipe", "kind", "stage", "count", "arrivers", "waiters"}
    assert b["waiters"][0]["partition"] == "producer" and "^ 1" in b["waiters"][0]["parity"]
    assert not any(b["kind"] == "empty" for b in k["barriers"] if b["pipe"] == "q")  # one-shot
    assert k["graph"]["edges"]


def test_rejected_exit_1_with_path_line(capsys):
    code, out, err = run(capsys, DEADLOCK)
    assert code == 1
    assert f"{DEADLOCK}:17: error: deadlock" in err
    assert "# verdict: rejected" in out
    code, _, _ = run(capsys, "--format", "json", DEADLOCK)
    assert code == 1


def test_unusable_input_exit_2(capsys, tmp_path):
    code, _, err = run(capsys, tmp_path / "missing.pipe")
    assert code == 2 and "no such file" in err
    bad = tmp_path / "bad.pipe"
    bad.write_text("kernel k\npipe a capacity=1 fields=(x)\npartition p default {\n  a.acquire(0\n}\n")
    code, _, err = run(capsys, bad)
    assert code == 2 and f"{bad}:" in err and "4:" in err
    pyfile = tmp_path / "broken.py"
    pyfile.write_text("def f(:\n")
    code, _, err = run(capsys, pyfile)
    assert code == 2 and "syntax" in err.lower()


def test_single_pass_and_unknown_pass(capsys):
    code, out, _ = run(capsys, "-p", "verify-protocol", DEADLOCK)
    assert code == 0  # the protocol is well-formed; only verify-deadlock rejects it
    assert "not verified" in out
    code, _, err = run(capsys, "-p", "infer-barriers", EXAMPLE)
    assert code == 0
    code, _, err = run(capsys, "-p", "no-such-pass", EXAMPLE)
    assert code == 2 and "unknown pass" in err


def test_param_pins_a_value(capsys):
    assert run(capsys, "--param", "NK=2", DEADLOCK)[0] == 0  # the ring never wraps
    assert run(capsys, "--param", "NK=3", DEADLOCK)[0] == 1
    assert run(capsys, "--param", "NK", DEADLOCK)[0] == 2


def test_dot_lanes_and_barrier_labels(capsys, tmp_path):
    code, out, _ = run(capsys, "--format", "dot", EXAMPLE)
    assert code == 0
    assert out.startswith("digraph")
    for part in ("producer", "left", "right"):
        assert f'label="{part}' in out
    assert "kv.empty g1 ×2" in out and "kv.full g1 ×1" in out
    dot = tmp_path / "g.dot"
    assert run(capsys, "-o", dot, EXAMPLE)[0] == 0
    assert dot.read_text().startswith("digraph")


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz not installed")
def test_svg_render(capsys, tmp_path):
    svg = tmp_path / "g.svg"
    assert run(capsys, "-o", svg, EXAMPLE)[0] == 0
    assert "<svg" in svg.read_text()


@pytest.mark.parametrize("path", KERNELS, ids=lambda p: p.stem)
def test_bundled_kernels_verify(capsys, path):
    code, out, err = run(capsys, "--graph", path)
    assert code == 0, err
    assert "# verdict: verified for every value of" in out


def test_console_script_runs():
    exe = shutil.which("tle-dump")
    cmd = [exe] if exe else [sys.executable, "-m", "tle_compiler.cli.dump"]
    r = subprocess.run(cmd + ["--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "tle-dump" in r.stdout


def test_main_job_without_a_gpu(capsys, monkeypatch):
    """`python3 -m tle_kernels` on a CPU: verify the bundled kernel, compile it, show its barriers."""
    import torch

    from tle_kernels.__main__ import main as main_job

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert main_job([]) == 0
    out = capsys.readouterr().out
    assert "# verdict: verified" in out
    assert "ttng.init_barrier" in out and "ttg.warp_specialize(" in out


def test_a_kir_file_lowers_with_its_default_config(tmp_path, capsys):
    """A kernel with constexprs printed to the KIR text form lowers from the .kir file to the
    Gluon its .py lowers to: the constexprs come from the DEFAULT_CONFIG the KIR carries
    (``default_config``), and a protocol view affine only with them is read specialised."""
    from dataclasses import replace

    from tle_compiler.ir.kernel_text import parse_kernel_file, print_kernel

    seesaw = ROOT / "tle_kernels" / "sparse_mla_seesaw.py"
    assert main(["-p", "infer-stages", "--print-ir", str(seesaw)]) == 0
    kir = tmp_path / "seesaw.kir"
    kir.write_text(capsys.readouterr().out)
    assert main(["-p", "emit-gluon", str(kir)]) == 0
    out, err = capsys.readouterr()
    golden = (ROOT / "tests" / "golden" / "gluon" / "sparse_mla_seesaw.sparse_mla_seesaw.py")
    assert out.splitlines()[0].startswith("# Generated by tle_compiler.lowering from ")
    assert out.splitlines()[1:] == golden.read_text().splitlines()[1:]
    assert "read specialised to BLOCK_H=64, TOPK=2048" in err
    # without the attribute the constexprs have no value
    k, = parse_kernel_file(str(kir))
    bare = replace(k, attrs=tuple((a, v) for a, v in k.attrs if a != "default_config"))
    kir.write_text(print_kernel(bare))
    assert main(["-p", "emit-gluon", str(kir)]) == 1
    assert "index of kv0.writer().acquire must be affine" in capsys.readouterr().err
    # --param values specialise the protocol view, and the lowering lowers for them (as for a
    # .py file, cli/print_ir.py): the same Gluon as with the DEFAULT_CONFIG that gives them
    assert main(["-p", "emit-gluon", "--param", "TOPK=2048", "--param", "BLOCK_H=64",
                 str(kir)]) == 0
    out, err = capsys.readouterr()
    assert "read specialised to BLOCK_H=64, TOPK=2048" in err
    assert out.splitlines()[1:] == golden.read_text().splitlines()[1:]
