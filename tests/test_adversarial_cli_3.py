"""tle-dump's command line attacked as a new user and an adversary would, round 3: inputs that are
not kernel files, several PATHs at once, output flags in odd combinations, a stdout that cannot be
written, Ctrl-C, --version, and the real process's exit status for each verdict class. Most tests
run main() in-process; those about the process itself (its exit status, a closed stdout) run it
through a subprocess.

What was wrong before the fixes these tests pin (input and flags -> before; now):
- ``tle-dump --version`` -> "the following arguments are required: path" (exit 2). Now it prints
  the installed version, exit 0.
- ``tle-dump good.py bad.pipe`` -> "unrecognized arguments" (exit 2) whatever the files held.
  Now each PATH is checked alone with the same flags, a line per file names its status, and the
  exit status is the worst (2, then 1, then 3, then 0); JSON is one object with "files"; -o with
  several PATHs is refused (it would hold one file's report).
- ``--gluon -o k.json`` / ``--gluon -o k.svg`` wrote Gluon Python into a .json / .svg file
  (exit 0); ``--gluon --graph`` silently dropped --graph. Now exit 2, nothing written.
- ``-o out/`` (a folder that does not exist, or an existing file written with a trailing '/')
  wrote the report into a file named ``out``. Now exit 2, nothing written.
- A stdout that cannot be written (``| head`` closing the pipe, /dev/full) -> "internal error"
  exit 3, and with --format json a Python traceback and exit 1 (which reads as "rejected"). Now
  one line "cannot write to standard output", exit 2, no traceback.
- A .py file Python itself cannot parse (an expression nested 200,000 deep) -> "internal error
  (RecursionError ...): please report it" (exit 3). Now unusable input, exit 2, one line.
- Ctrl-C -> a KeyboardInterrupt traceback. Now one line, exit 130, nothing claimed.
- ``-o a.json -o b.txt``, ``--format json --format text``, ``--bound 2 --bound 3``, ``-p A -p
  B``: the last silently won (one report, at b.txt). Now exit 2 naming the flag; the same value
  twice is accepted.
- With ``PYTHONIOENCODING=ascii``, a kernel file whose path is not ASCII -> "internal error
  (UnicodeEncodeError ...)" exit 3; -o wrote the report in the locale's encoding, which the
  .pipe/.kir readers (UTF-8) may not read back. Now stdout says which character it cannot
  write (exit 2) and -o writes UTF-8.
- A DEFAULT_CONFIG that is a literal but not the dict tle-dump needs (``DEFAULT_CONFIG = 5``, a
  "signature" that is a string, an argument type that is a dict, "constexprs" a list) ->
  "internal error (AttributeError / TypeError ...)" exit 3 in every mode. Now it is read as a
  DEFAULT_CONFIG that is no literal is: left aside when verifying, and --gluon/--ttgir/--ptx
  refuse it (exit 2) at its line, saying what is wrong.
- A run that printed nothing left at -o what an earlier run wrote there: ``-o report.txt`` of a
  kernel file that then got a syntax error (exit 2) or an unreadable kernel (exit 1) kept the
  old ``# verdict: verified`` report; ``--gluon -o k.py`` / ``-p emit-gluon -o k.py`` of a
  kernel since rejected kept the old Gluon; ``--format json -o out/`` wrote the error into a
  file named ``out``; an internal error with --format json went to stdout, leaving -o's old
  report. Now the file gets the error as comment lines (JSON: the error object).
- ``-o FIFO`` with no process reading the FIFO blocked forever (Ctrl-C the only way out). Now
  exit 2 at once; a FIFO a process reads gets the report.
- A kernel file named ``"x\n# verdict: verified.py"`` put lines starting ``# verdict: verified``
  into the report of a REJECTED kernel (every location comment and diagnostic names the path):
  a grep for the verdict passed. Now a PATH or -o holding a line-breaking or control character
  is refused (exit 2), and nothing is written at such an -o; so are --kernel and -p values
  holding one, and a bad --param value is shown escaped (each printed it raw on stderr).
- Standard streams closed at the start: ``>&-`` gave an internal error (exit 3), now "cannot
  write to standard output: it is closed" (exit 2); ``2>&-`` made a proved kernel exit 1 (an
  OSError from the summary line, then from the internal-error line), now the messages are
  dropped and the exit status is the verdict's.
- ``tle-dump -x.py`` (a file named like a flag) said only "the following arguments are required:
  PATH". Now the line says to write ./-x.py or -- -x.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.test_cli_verdicts import one_line_error
from tle_compiler.cli import dump
from tle_compiler.cli.dump import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "docs" / "example.pipe"            # proved
DEADLOCK = ROOT / "docs" / "example_deadlock.pipe"  # rejected
RING = ROOT / "tle_kernels" / "examples" / "ring.py"


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def run_process(*args, stdout=subprocess.PIPE, timeout=240):
    """tle-dump as a user runs it: a fresh interpreter, the real exit status."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "tle_compiler.cli.dump", *map(str, args)],
                          cwd=ROOT, env=env, stdout=stdout, stderr=subprocess.PIPE, text=True,
                          timeout=timeout)


def no_traceback(err: str) -> None:
    assert "Traceback" not in err and "internal error" not in err, err


# ---- --version, no arguments


def test_version_prints_the_installed_version_and_exits_0(capsys):
    from importlib.metadata import version

    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("tle-dump ") and version("tle_compiler") in out


def test_no_path_is_one_line_exit_2(capsys):
    code, out, err = run(capsys)
    assert code == 2 and out == ""
    assert "required" in one_line_error(err)


def test_a_path_that_starts_with_a_dash_is_told_how_to_give_it(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "-x.py").write_text(RING.read_text())
    code, out, err = run(capsys, "-x.py")
    assert code == 2 and "write ./-x.py or -- -x.py" in one_line_error(err)
    assert main(["--", "-x.py"]) == 0 and main(["./-x.py"]) == 0


# ---- inputs that are not kernel files: one line naming the file, exit 2


def _bad_inputs(tmp: Path) -> dict[str, tuple[Path, str]]:
    (tmp / "dir.py").mkdir()
    (tmp / "empty.py").write_text("")
    (tmp / "nokernel.py").write_text("import triton\nx = 1\n")
    (tmp / "binary.py").write_bytes(b"\x7fELF\x02\x01\x01\x00\xff\xfe")
    (tmp / "latin.py").write_bytes(b'x = "caf\xe9"\n')
    (tmp / "syntax.py").write_text("def f(:\n    pass\n")
    (tmp / "deep.py").write_text("x = 1" + " + 1" * 200_000 + "\n")
    (tmp / "dangling.py").symlink_to(tmp / "gone.py")
    (tmp / "notes.txt").write_text(RING.read_text())
    return {
        "missing": (tmp / "nope.py", "no such file"),
        "directory": (tmp / "dir.py", "is a directory"),
        "empty": (tmp / "empty.py", "no @tle.jit kernel"),
        "no kernel": (tmp / "nokernel.py", "no @tle.jit kernel"),
        "binary": (tmp / "binary.py", "not UTF-8"),
        "not utf-8": (tmp / "latin.py", "not UTF-8"),
        "syntax error": (tmp / "syntax.py", "syntax error"),
        "nested too deeply": (tmp / "deep.py", "nested too deeply"),
        "dangling symlink": (tmp / "dangling.py", "symlink to a missing file"),
        "unknown suffix": (tmp / "notes.txt", "unknown kind of file"),
        "stdin": (Path("-"), "standard input"),
    }


@pytest.mark.parametrize("case", ["missing", "directory", "empty", "no kernel", "binary",
                                  "not utf-8", "syntax error", "nested too deeply",
                                  "dangling symlink", "unknown suffix", "stdin"])
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_an_input_that_is_not_a_kernel_file_is_one_line_exit_2(capsys, tmp_path, case, fmt):
    path, why = _bad_inputs(tmp_path)[case]
    code, out, err = run(capsys, "--format", fmt, path)
    assert code == 2
    line = one_line_error(err)
    assert why in line and str(path) in line, line
    no_traceback(err)
    if fmt == "json":
        doc = json.loads(out)
        assert doc["exit_code"] == 2 and doc["error"] == line
    else:
        assert out == ""


def test_a_symlink_and_a_path_with_spaces_and_unicode_verify_as_the_file(capsys, tmp_path):
    folder = tmp_path / "dossier é 核"
    folder.mkdir()
    (folder / "my ring ü.py").write_text(RING.read_text())
    (folder / "link.py").symlink_to(folder / "my ring ü.py")
    for path in (folder / "my ring ü.py", folder / "link.py"):
        code, out, err = run(capsys, path)
        assert code == 0 and "# verdict: verified for every value" in out, err
        assert f"# {path}:" in out  # locations name the path given


@pytest.mark.parametrize("char", ["\n", "\r", "\x1b", "\u2028"])
def test_a_path_that_would_inject_report_lines_is_refused(capsys, tmp_path, char):
    name = f"x{char}# verdict: verified.py"
    path = tmp_path / name
    # a kernel the verifier rejects: no line of its report may say it is verified
    path.write_text(RING.read_text().replace("r.release(t)\n", "r.release(t + 1)\n"))
    code, out, err = run(capsys, path)
    assert code == 2 and out == ""
    assert "control character" in one_line_error(err)
    assert not any(ln.startswith("# verdict: verified") for ln in (out + err).splitlines())
    code, out, err = run(capsys, "--format", "json", "-o", tmp_path / f"r{char}.json", RING)
    assert code == 2 and json.loads(out)["exit_code"] == 2
    assert not (tmp_path / f"r{char}.json").exists()


@pytest.mark.parametrize("flag", ["--kernel", "--param", "-p", "--wait-bound"])
def test_a_flag_value_cannot_put_a_line_of_its_own_on_stderr(capsys, flag):
    value = "a\n# verdict: verified"
    extra = ["--gluon"] if flag == "--wait-bound" else []
    code, out, err = run(capsys, *extra, f"{flag}={value}", RING)
    assert code == 2 and out == ""
    assert "\\n" in one_line_error(err)  # shown escaped, on the one error line


def test_a_path_with_a_nul_byte_is_one_line_exit_2(capsys):
    code, out, err = run(capsys, "k\x00.py")
    assert code == 2 and "control character" in one_line_error(err)


# ---- several PATHs: each alone, the worst exit status wins


@pytest.mark.parametrize("files, code", [
    (("EXAMPLE", "RING"), 0),
    (("EXAMPLE", "DEADLOCK"), 1),
    (("DEADLOCK", "EXAMPLE"), 1),
    (("EXAMPLE", "MISSING"), 2),
    (("MISSING", "DEADLOCK", "EXAMPLE"), 2),
])
def test_several_paths_exit_with_the_worst_status(capsys, tmp_path, files, code):
    paths = {"EXAMPLE": EXAMPLE, "RING": RING, "DEADLOCK": DEADLOCK,
             "MISSING": tmp_path / "missing.py"}
    got, out, err = run(capsys, *(paths[f] for f in files))
    assert got == code, err
    no_traceback(err)
    each = {"EXAMPLE": 0, "RING": 0, "DEADLOCK": 1, "MISSING": 2}
    for f in files:  # every file is checked, and its own status named
        assert f"tle-dump: {paths[f]}: exit {each[f]}" in err.splitlines()
    # a proved file's report is printed even beside a bad one
    assert out.count("# verdict: verified") == sum(1 for f in files if each[f] == 0)


def test_several_paths_with_a_bounded_one_exit_3(capsys):
    code, out, err = run(capsys, "--bound", "0", EXAMPLE, RING)
    assert code == 3 and out.count("# verdict: bounded") == 2


def test_several_paths_in_json_are_one_object_with_each_files_report(capsys, tmp_path):
    missing = tmp_path / "missing.py"
    code, out, err = run(capsys, "--format", "json", EXAMPLE, DEADLOCK, missing)
    assert code == 2
    doc = json.loads(out)  # one document, not three concatenated
    assert doc["exit_code"] == 2
    assert [f["exit_code"] for f in doc["files"]] == [0, 1, 2]
    assert [f["source"] for f in doc["files"]] == [str(EXAMPLE), str(DEADLOCK), str(missing)]
    assert doc["files"][0]["kernels"][0]["verified"] is True
    assert "no such file" in doc["files"][2]["error"]


def test_several_paths_quiet_print_no_report_but_keep_the_status(capsys):
    code, out, err = run(capsys, "-q", "--format", "json", EXAMPLE, DEADLOCK)
    assert code == 1 and out == ""


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_several_paths_with_one_output_file_are_refused(capsys, tmp_path, fmt):
    target = tmp_path / f"report.{fmt}"
    code, out, err = run(capsys, "--format", fmt, "-o", target, EXAMPLE, RING)
    assert code == 2 and "one PATH" in one_line_error(err)
    assert not target.exists()
    if fmt == "json":
        assert json.loads(out)["exit_code"] == 2


# ---- output flags


@pytest.mark.parametrize("name", ["k.json", "k.svg", "k.dot", "k.PNG"])
def test_lowering_into_a_report_or_picture_file_is_refused(capsys, tmp_path, name):
    target = tmp_path / name
    code, out, err = run(capsys, "--gluon", "-o", target, RING)
    line = one_line_error(err)
    assert code == 2 and "does not apply" in line and out == ""
    if name.endswith(".json"):  # unusable input asked for as JSON: the error, as JSON, there
        assert json.loads(target.read_text()) == {"tool": "tle-dump", "source": str(RING),
                                                  "error": line, "exit_code": 2}
    elif name.endswith(".dot"):  # the error as a DOT comment: no earlier picture stands there
        assert target.read_text() == f"// {line}\n"
    else:
        assert not target.exists()


def test_lowering_into_a_file_of_another_suffix_writes_the_gluon(capsys, tmp_path):
    target = tmp_path / "k.gluon"
    code, out, err = run(capsys, "--gluon", "-o", target, RING)
    assert code == 0 and out == ""
    assert target.read_text().startswith("# Generated by tle_compiler.lowering")


def test_graph_with_a_lowering_flag_is_refused_not_ignored(capsys):
    code, out, err = run(capsys, "--gluon", "--graph", RING)
    assert code == 2 and "--graph" in one_line_error(err) and out == ""


def test_an_output_path_ending_in_a_slash_is_refused(capsys, tmp_path):
    new = tmp_path / "reports"
    code, out, err = run(capsys, "-o", f"{new}/", RING)
    assert code == 2 and "names a folder" in one_line_error(err)
    assert not new.exists()
    existing = tmp_path / "old.txt"
    existing.write_text("keep me\n")
    code, out, err = run(capsys, "-o", f"{existing}/", RING)
    assert code == 2 and existing.read_text() == "keep me\n"


def test_an_output_of_an_unknown_suffix_gets_the_text_report(capsys, tmp_path):
    target = tmp_path / "report.xyz"
    code, out, err = run(capsys, "-o", target, RING)
    assert code == 0 and out == ""
    assert target.read_text().startswith("kernel ring_sum")
    upper = tmp_path / "report.JSON"  # the suffix is read without case
    assert main(["-o", str(upper), str(RING)]) == 0
    assert json.loads(upper.read_text())["exit_code"] == 0


@pytest.mark.parametrize("target", ["/proc/version/report.txt", "/proc/no-such-dir/r.json"])
def test_an_output_that_cannot_be_created_is_exit_2_before_verifying(capsys, target):
    code, out, err = run(capsys, "-o", target, DEADLOCK)
    line = one_line_error(err)  # the deadlock's diagnostics are never printed
    assert code == 2 and line.startswith(f"{target}: error: cannot write")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_an_output_fifo_nobody_reads_is_refused_without_blocking(capsys, tmp_path, fmt):
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    code, out, err = run(capsys, "--format", fmt, "-o", fifo, RING)
    assert code == 2 and "no process reads" in one_line_error(err)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_an_output_fifo_a_process_reads_gets_the_report(tmp_path):
    import threading

    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()), daemon=True)
    reader.start()
    time.sleep(0.2)  # the reader's open is under way before tle-dump looks for one
    p = run_process("-o", fifo, RING)
    reader.join(timeout=60)
    assert p.returncode == 0, p.stderr
    assert got and got[0].startswith("kernel ring_sum") and "# verdict: verified" in got[0]


def test_gluon_of_a_kir_file_names_the_pipeline_that_lowers_it(capsys, tmp_path):
    kir = tmp_path / "ring.kir"
    assert main(["-p", "verify-protocol", "--print-ir", str(RING)]) == 0
    kir.write_text(capsys.readouterr().out)
    code, out, err = run(capsys, "--gluon", kir)
    assert code == 2 and "-p emit-gluon" in one_line_error(err)


@pytest.mark.parametrize("flags, twice", [
    (["-o", "{tmp}/a.json", "-o", "{tmp}/b.txt"], "-o/--output"),
    (["--format", "json", "--format", "text"], "--format"),
    (["--bound", "2", "--bound", "3"], "--bound"),
    (["-p", "verify-protocol", "-p", "infer-barriers"], "-p/--passes"),
    (["--gluon", "--wait-bound", "1s", "--wait-bound", "2s"], "--wait-bound"),
])
def test_a_one_value_flag_given_twice_with_two_values_is_refused(capsys, tmp_path, flags, twice):
    code, out, err = run(capsys, *(f.format(tmp=tmp_path) for f in flags), RING)
    line = one_line_error(err)
    assert code == 2 and f"argument {twice}: given twice" in line
    assert not (tmp_path / "a.json").exists() and not (tmp_path / "b.txt").exists()


def test_a_one_value_flag_given_twice_with_the_same_value_is_accepted(capsys):
    code, out, err = run(capsys, "--format", "json", "--format", "json", "--bound", "0",
                         "--bound", "0", EXAMPLE)
    assert code == 3 and json.loads(out)["exit_code"] == 3


def test_a_non_ascii_path_under_an_ascii_stdout(tmp_path):
    src = tmp_path / "anneau ü.py"
    src.write_text(RING.read_text())
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "ascii"}

    def tle_dump(*args):
        return subprocess.run([sys.executable, "-m", "tle_compiler.cli.dump", *map(str, args)],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)

    p = tle_dump(src)  # the report names the path in its locations: stdout cannot take it
    assert p.returncode == 2 and "PYTHONIOENCODING" in p.stderr and p.stdout == ""
    no_traceback(p.stderr)
    p = tle_dump("--format", "json", src)  # JSON escapes it
    assert p.returncode == 0 and json.loads(p.stdout)["source"] == str(src)
    report = tmp_path / "rapport ü.pipe"
    p = tle_dump("-o", report, src)  # -o writes UTF-8, which tle-dump reads back
    assert p.returncode == 0, p.stderr
    assert f"# {src}:" in report.read_bytes().decode("utf-8")
    assert main([str(report)]) == 0


_SIG = '{"x_ptr": "*fp32", "out_ptr": "*fp32", "stride_x": "i32", "N_TILES": "i32"}'


@pytest.mark.parametrize("config, why", [
    ("5", "it is an int"),
    ("[1, 2]", "it is a list"),
    ('{"ring_sum": "fast"}', "it is a str"),  # keyed by kernel name
    ('{"signature": "x_ptr: *fp32", "constexprs": {}}', '"signature" is a str'),
    ('{"signature": {"x_ptr": {"dtype": "fp32"}}, "constexprs": {}}', "gives 'x_ptr' no type"),
    ('{"signature": ' + _SIG + ', "constexprs": [64]}', '"constexprs" is not a dict'),
])
def test_a_default_config_of_the_wrong_shape_is_named_not_an_internal_error(
        capsys, tmp_path, config, why):
    src = RING.read_text()
    at = src.index("DEFAULT_CONFIG")
    path = tmp_path / "cfg.py"
    path.write_text(src[:at] + f"DEFAULT_CONFIG = {config}\n")
    line = src[:at].count("\n") + 1
    for flags in ([], ["--format", "json"], ["--print-ir"], ["-p", "emit-gluon"]):
        code, out, err = run(capsys, *flags, path)
        no_traceback(err)  # the protocol does not depend on it: verified as without one
        assert code == 0, (flags, err)
    for flag in ("--gluon", "--ttgir"):
        code, out, err = run(capsys, flag, path)
        text = one_line_error(err)
        assert code == 2 and text.startswith(f"{path}:{line}: error: DEFAULT_CONFIG must be")
        assert why in text


def _ring_with(tmp_path: Path, old: str, new: str, name: str = "k.py") -> Path:
    path = tmp_path / name
    src = RING.read_text()
    assert old in src
    path.write_text(src.replace(old, new))
    return path


@pytest.mark.parametrize("breakage, code", [
    (("    w.close(N_TILES)\n", "    w.close(N_TILES\n"), 2),  # a syntax error
    (("r = ring.reader()", "r = ring.reader('nobody')"), 1),  # a kernel that cannot be read
])
@pytest.mark.parametrize("fmt", ["text", "json", "dot"])
def test_a_failed_run_leaves_no_earlier_report_at_the_output(capsys, tmp_path, breakage, code,
                                                             fmt):
    target = tmp_path / f"report.{fmt}"
    path = _ring_with(tmp_path, "N_TILES", "N_TILES")
    assert main([str(path), "-o", str(target)]) == 0
    capsys.readouterr()
    assert "verified" in target.read_text()
    path.write_text(path.read_text().replace(*breakage))
    got, out, err = run(capsys, path, "-o", target)
    assert got == code, err
    written = target.read_text()
    assert "verified" not in written
    if fmt == "json":
        doc = json.loads(written)
        assert doc["exit_code"] == code and not doc.get("kernels")
    else:
        lead = "//" if fmt == "dot" else "#"
        assert written.strip() and all(ln.startswith(lead) for ln in written.splitlines())
        assert "error" in written
        if fmt == "text":  # read back as a .pipe report: no kernel, never a verdict
            report = tmp_path / "back.pipe"
            report.write_text(written)
            assert main([str(report)]) == 2


@pytest.mark.parametrize("flags, name, lead", [
    (["--gluon"], "k_gluon.py", "#"),
    (["--ptx"], "k.ptx", "//"),
    (["-p", "emit-gluon"], "k_emit.py", "#"),
])
def test_a_rejected_kernel_leaves_no_earlier_lowered_kernel_at_the_output(
        capsys, tmp_path, flags, name, lead):
    target = tmp_path / name
    path = _ring_with(tmp_path, "r.release(t)\n", "r.release(t)\n")
    assert main([*flags, "-o", str(target), str(path)]) == 0
    capsys.readouterr()
    assert len(target.read_text().splitlines()) > 10
    path.write_text(path.read_text().replace("r.release(t)\n", "r.release(t + 1)\n"))
    code, out, err = run(capsys, *flags, "-o", target, path)
    assert code == 1 and "error" in err
    lines = target.read_text().splitlines()
    assert lines and all(ln.startswith(lead) for ln in lines), lines


def test_an_internal_error_in_json_goes_to_the_output_file(capsys, tmp_path, monkeypatch):
    target = tmp_path / "r.json"
    target.write_text('{"exit_code": 0, "verified": true}\n')

    def boom(*a, **k):
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(dump, "load", boom)
    code, out, err = run(capsys, "-o", target, RING)
    assert code == 3 and out == ""
    assert json.loads(target.read_text())["exit_code"] == 3


def test_a_json_error_about_a_folder_output_writes_no_file(capsys, tmp_path):
    code, out, err = run(capsys, "--format", "json", "-o", f"{tmp_path}/new/", RING)
    assert code == 2 and not (tmp_path / "new").exists()
    assert "names a folder" in json.loads(out)["error"]


# ---- --param values a user mistypes


@pytest.mark.parametrize("value, why", [
    ("N_TILES=0x10", "expects NAME=INTEGER"),
    ("N_TILES=1_000", "expects NAME=INTEGER"),
    ("N_TILES=\u0663", "expects NAME=INTEGER"),  # an Arabic-Indic digit: int() would take it
    ("N_TILES=2.0", "expects NAME=INTEGER"),
    ("=2", "expects NAME=INTEGER"),
    ("N_TILES=" + "9" * 400, "digits"),
    ("N_TILES=-1", "outside the domain"),
    ("NOPE=1", "no such param"),
])
def test_a_malformed_param_is_one_line_exit_2(capsys, value, why):
    code, out, err = run(capsys, "--param", value, RING)
    assert code == 2 and why in one_line_error(err) and out == ""


def test_a_param_given_twice_agrees_or_is_refused(capsys):
    code, out, err = run(capsys, "--param", "N_TILES=3", "--param", "N_TILES=3", RING)
    assert code == 0 and "verified for N_TILES = 3" in err
    code, out, err = run(capsys, "--param", "N_TILES=3", "--param", "N_TILES=4", RING)
    assert code == 2 and "given twice" in one_line_error(err)


@pytest.mark.parametrize("value", [2**31, 2**40])
def test_a_param_past_i32_is_never_verified(capsys, value):
    code, out, err = run(capsys, "--param", f"N_TILES={value}", RING)
    assert code == 3 and "outside i32" in err and "# verdict: verified" not in out


def test_an_unknown_verdict_does_not_claim_a_check_over_no_value(capsys):
    """An unknown verdict whose checked set is empty names no check (it said 'no fault for
    N_TILES in {}', a check over no value)."""
    code, out, err = run(capsys, "--param", f"N_TILES={2**40}", RING)
    assert code == 3 and "in {}" not in err and "no fault" not in err, err


def test_a_pipe_kernel_without_warp_specialize_is_not_left_out(capsys, tmp_path):
    """A @tle.jit kernel that declares and uses a pipe but never calls tle.gpu.warp_specialize
    is refused at its pipe (it was left out of the file's kernels without a word, so the file
    exited 0 on its other kernel's verdict)."""
    src = RING.read_text()
    lonely = ("\n\n@tle.jit\ndef lonely(x_ptr, N):\n"
              "    ring = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, BM, BN], tl.float32))\n"
              "    w = ring.writer()\n"
              "    for t in tl.range(0, N):\n"
              "        slot = w.acquire(t)\n"
              "        w.commit(t)\n\n\n")
    at = src.index("DEFAULT_CONFIG")
    path = tmp_path / "two.py"
    path.write_text(src[:at] + lonely + src[at:])
    code, out, err = run(capsys, path)
    assert code == 1 and "lonely" in err and "declares a pipe but calls no" in err, err
    assert "[bad-warp-specialize]" in err or "bad-warp-specialize" in err


# ---- a stdout that cannot be written, Ctrl-C


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_closed_stdout_is_one_line_exit_2(tmp_path, fmt):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with open(tmp_path / "err", "w+") as err_file:
        p = subprocess.Popen([sys.executable, "-m", "tle_compiler.cli.dump", "--format", fmt,
                              str(RING)], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                             stderr=err_file)
        p.stdout.close()  # the reader went away (| head, | true) before the report came
        code = p.wait(timeout=240)
        err_file.seek(0)
        err = err_file.read()
    assert code == 2, err
    no_traceback(err)
    assert "cannot write to standard output" in err
    assert "Exception ignored" not in err


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_full_stdout_is_one_line_exit_2():
    with open("/dev/full", "w") as full:
        p = run_process(RING, stdout=full)
    assert p.returncode == 2 and "No space left" in p.stderr
    no_traceback(p.stderr)


@pytest.mark.parametrize("args, code", [((RING,), 0), ((DEADLOCK,), 1),
                                        (("--bound", "1", EXAMPLE), 3),
                                        (("--param", "X=1", RING), 2)])
def test_a_closed_stderr_keeps_the_exit_status_of_the_verdict(args, code):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.run([sys.executable, "-m", "tle_compiler.cli.dump", *map(str, args)],
                       cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=240,
                       preexec_fn=lambda: os.close(2))
    assert p.returncode == code


def test_a_closed_stdout_at_start_is_one_line_exit_2():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.run([sys.executable, "-m", "tle_compiler.cli.dump", str(RING)], cwd=ROOT,
                       env=env, stderr=subprocess.PIPE, text=True, timeout=240,
                       preexec_fn=lambda: os.close(1))
    assert p.returncode == 2, p.stderr
    assert "standard output: it is closed" in p.stderr
    no_traceback(p.stderr)


def test_ctrl_c_is_one_line_exit_130_and_stops_several_paths(capsys, monkeypatch):
    calls = []

    def interrupted(args, fmt):
        calls.append(args.path)
        raise KeyboardInterrupt

    monkeypatch.setattr(dump, "_run", interrupted)
    code, out, err = run(capsys, EXAMPLE, RING)
    assert code == 130 and calls == [str(EXAMPLE)]
    assert err.strip() == f"tle-dump: interrupted; nothing is claimed for {EXAMPLE}"


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT")
def test_sigint_during_a_long_verification_exits_130_without_a_traceback():
    import signal

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    # TOPK = 2**24: several seconds of checking until the verification budget runs out
    kernel = ROOT / "tle_kernels" / "sparse_decode_seesaw_fp8.py"
    p = subprocess.Popen([sys.executable, "-m", "tle_compiler.cli.dump", "--param",
                          f"TOPK={2**24}", str(kernel)],
                         cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    first = p.stderr.readline()  # the note of the specialised read: the checking starts next
    assert "read specialised" in first, first
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=240)
    assert p.returncode == 130, first + err
    assert "interrupted; nothing is claimed" in err and "Traceback" not in err
    assert "# verdict" not in out


# ---- the real process's exit status for each verdict class


@pytest.mark.parametrize("args, code", [
    ((EXAMPLE,), 0),
    ((DEADLOCK,), 1),
    (("--param", "NK=x", EXAMPLE), 2),
    (("--bound", "2", EXAMPLE), 3),
    (("--frobnicate", EXAMPLE), 2),
])
def test_the_process_exits_with_the_documented_status(args, code):
    p = run_process(*args)
    assert p.returncode == code, p.stderr
    no_traceback(p.stderr)
    if code != 0:
        assert "# verdict: verified" not in p.stdout
