"""No input makes tle-dump crash or give a dishonest exit status.

Mutants of small valid kernels, in the kernel IR's text form (``.kir``, run through
``-p PIPELINE --print-ir``) and as Python (``.py``, plain verification), are given to tle-dump in
process (tle_compiler.cli.dump.main). Lines are deleted, duplicated, swapped or truncated,
numbers (indices, capacities, loop bounds) and names changed, pipe verbs (acquire, commit, wait,
release, close) swapped for one another, stray punctuation inserted. Every run must return an
exit status in {0, 1, 2, 3}, never raise, never print a traceback or an internal error; an exit 1
or 2 prints an ``error:`` line that names a file, and its line unless the error is about the
whole file (no kernel in it, a flag). A mutant tle-dump verifies (exit 0) is checked again with the
simulator (tle_compiler/semantics/simulator.py, the executable semantics the property tests use as
their oracle) at small param values: a fault it finds there is a verdict the verifier should not
have given, and fails the test. A mutant that reads only specialised (an index affine only with
its constexprs bound, a pipe capacity read from a constexpr) is checked in the reading tle-dump
verified, with its DEFAULT_CONFIG's values (before, such mutants skipped the simulator).

What this found, each pinned by a regression test below:

* A ``.kir`` event on a pipe the kernel does not declare (``kv.reader.wait(t)`` with the pipe
  renamed, or its ``pipe`` line deleted) was read by the text form, which reads a handle for any
  name, and the protocol view then failed with ``KeyError`` (a traceback from tle-dump -p ...
  --print-ir). ``parse_kernel_file`` now also checks that every handle names a declared pipe
  (ir/kernel_text.check_references): exit 2 with one line naming the pipe and the line.
* A ``.kir`` line whose location comment had one stray character (``| 22 25 :40 45``) hung
  tle-dump: the lexer's pattern for location comments could split every run of digits and the
  blanks around every separator in several ways, and on a line it does not match tried them
  all before giving up. It now reads each item and each separator one way only
  (kernel_grammar.lark, LOCCOMMENT); the line is an ordinary comment, so the statement is located
  in the .kir file itself.
* A dozen lines holding only blanks after a closing brace hung tle-dump on a ``.kir`` and on a
  ``.pipe`` file alike: the pattern that lets ``else`` stand on a later line (_ELSE, in
  kernel_grammar.lark and grammar.lark) could give each line's blanks to that line or to the
  next, and where no ``else`` came it tried every split. Each line now has one reading.
* ``tle-dump FILE.kir`` without ``-p`` read the file as Python and refused it as a "Python syntax
  error" at line 1, which misstated what was wrong: it now says that a ``.kir`` file is verified
  with ``-p verify-protocol,verify-deadlock --print-ir`` (exit 2 still: this mode reads .py and
  .pipe files).
"""

from __future__ import annotations

import contextlib
import functools
import io
import re
import subprocess
import sys
import traceback
from pathlib import Path

import pytest
from hypothesis import (HealthCheck, currently_in_test_context, given, note, settings,
                        strategies as st)

from tle_compiler.cli.dump import load, main
from tle_compiler.diagnostics import TleError
from tle_compiler.frontend import SPECIALIZABLE, read_source
from tle_compiler.ir.kernel_text import parse_kernels
from tle_compiler.ir.parser import parse_module
from tle_compiler.passes.kir_module import protocol_view
from tle_compiler.semantics.simulator import StructuralError, simulate_range

ROOT = Path(__file__).resolve().parents[1]
#: small kernels: one pipe or two, SPMC, loops with steps, loop else, remainders
SEEDS = (
    ROOT / "tle_kernels" / "examples" / "ring.py",
    ROOT / "tle_kernels" / "examples" / "chain.py",
    ROOT / "tle_kernels" / "examples" / "spmc.py",
    ROOT / "tests" / "cases" / "read_after_release.ok.py",
    ROOT / "tests" / "cases" / "range_step.ok.py",
    ROOT / "tests" / "cases" / "loop_else.ok.py",
    ROOT / "tests" / "cases" / "remainder_param.ok.py",
    ROOT / "tle_kernels" / "gpu_tests" / "ring_stages.py",  # a capacity read from a constexpr
)
KIR_PIPELINES = ("verify-protocol", "verify-protocol,verify-deadlock", "infer-barriers")
VERBS = ("acquire", "commit", "wait", "release", "close")
#: an error line of an exit 1 or 2: ``PATH:LINE[:COL]: error:``, or ``PATH: error:`` about the
#: whole file, or ``tle-dump: error:`` about a flag
ERROR_AT_LINE = re.compile(r"^\S+:\d+(:\d+)?: error: ")
ERROR_OF_FILE = re.compile(r"^(\S+|tle-dump): error: ")
SETTINGS = settings(max_examples=150, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def dump(argv: list[str]) -> tuple[int, str, str]:
    """tle-dump in process: its exit status, stdout and stderr. An exception escaping main fails
    the test with its traceback."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except BaseException:  # noqa: BLE001 - SystemExit included: main returns, never exits
            pytest.fail(f"tle-dump {' '.join(argv)} raised:\n{traceback.format_exc()}")
    return code, out.getvalue(), err.getvalue()


def check_honest(code: int, err: str, path: Path) -> None:
    """An exit status tle-dump documents, no traceback or internal error, and for 1 and 2 an
    error line naming a file (and a line, unless it is about the whole file)."""
    assert code in (0, 1, 2, 3), (code, err)
    assert "Traceback" not in err, err
    assert not re.search(r"\binternal\b", err, re.I), err
    if code in (1, 2):
        errors = [ln for ln in err.splitlines()
                  if " error: " in ln or ln.startswith("tle-dump: error")]
        assert errors, err
        assert all(ERROR_AT_LINE.match(ln) or ERROR_OF_FILE.match(ln) for ln in errors), errors
        whole_file = [ln for ln in errors if not ERROR_AT_LINE.match(ln)]
        # an error without a line is about the file given, never about some other place
        assert all(ln.startswith((str(path), "tle-dump: error")) for ln in whole_file), errors


def oracle_faults(programs, max_value: int = 2) -> list[str]:
    """The simulator's faults of ``programs`` at every param value up to ``max_value`` (none when
    the simulator cannot model a program: StructuralError, which the verifier would reject)."""
    faults = []
    for prog in programs:
        try:
            results = simulate_range(prog, max_value, low=0, max_states=20_000)
        except StructuralError:
            continue
        faults += [f"{prog.name} at {r.params}: {e}" for r in results for e in r.errors]
    return faults


@functools.cache
def kir_text(seed: Path) -> str:
    """The seed kernel in the KIR text form, as tle-dump prints it."""
    code, out, err = dump(["-p", "verify-protocol", "--print-ir", str(seed)])
    assert code == 0, err
    return out


# -- mutations -------------------------------------------------------------------------------------


@st.composite
def mutated(draw, text: str) -> str:
    """``text`` with one to three line edits."""
    lines = text.splitlines()
    for _ in range(draw(st.integers(1, 3))):
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        op = draw(st.sampled_from(("delete", "duplicate", "swap", "number", "name", "verb",
                                   "truncate", "punctuation", "blank")))
        line = lines[i]
        if op == "delete":
            del lines[i]
        elif op == "duplicate":
            lines.insert(i, line)
        elif op == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], line
        elif op == "number":  # an index, a capacity, a loop bound, a shape, a location
            numbers = list(re.finditer(r"\d+", line))
            if numbers:
                m = draw(st.sampled_from(numbers))
                new = draw(st.sampled_from(("0", "1", "2", "3", "-1", str(int(m.group()) + 1),
                                            "4294967296")))
                lines[i] = line[:m.start()] + new + line[m.end():]
        elif op == "name":
            names = list(re.finditer(r"[A-Za-z_]\w*", line))
            if names:
                m = draw(st.sampled_from(names))
                new = draw(st.sampled_from(("x", "t", "i", "N", "pipe", "kernel", "ring", "kv",
                                            "slot", "None", "True", "writer", "reader")))
                lines[i] = line[:m.start()] + new + line[m.end():]
        elif op == "verb":
            verbs = [v for v in VERBS if f".{v}(" in line]
            if verbs:
                v = draw(st.sampled_from(verbs))
                lines[i] = line.replace(f".{v}(", f".{draw(st.sampled_from(VERBS))}(", 1)
        elif op == "truncate":
            lines = lines[:i] + [line[:draw(st.integers(0, len(line)))]]
        elif op == "blank":  # lines holding only blanks
            lines[i:i] = [draw(st.sampled_from(("", "  ", "\t", "   # note")))] * draw(
                st.integers(1, 20))
        else:
            k = draw(st.integers(0, len(line)))
            lines[i] = line[:k] + draw(st.sampled_from("(){}[],:=#|-+* 0")) + line[k:]
    return "\n".join(lines) + "\n"


# -- (1) the KIR text form -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("dump_fuzz")


def verify_kir(path: Path, text: str, pipeline: str) -> None:
    path.write_text(text)
    code, _, err = dump(["-p", pipeline, "--print-ir", str(path)])
    if currently_in_test_context():
        note(f"exit {code}\n{err}")
    check_honest(code, err, path)
    if code == 0 and "verify-protocol" in pipeline:
        # verified: the simulator runs the protocol view of the same kernels
        try:
            programs = [protocol_view(k) for k in parse_kernels(text, str(path))]
        except TleError:  # read specialised to constexprs: tle-dump said so; no generic view
            return
        assert not oracle_faults(programs), (text, err)


@SETTINGS
@given(data=st.data())
def test_mutated_kir_never_crashes(workdir, data):
    seed = data.draw(st.sampled_from(SEEDS), label="seed")
    text = data.draw(mutated(kir_text(seed)), label="kir")
    pipeline = data.draw(st.sampled_from(KIR_PIPELINES), label="pipeline")
    verify_kir(workdir / "mutant.kir", text, pipeline)


# -- (2) Python kernels ----------------------------------------------------------------------------


def verify_py(path: Path, text: str) -> None:
    path.write_text(text)
    code, _, err = dump([str(path)])
    if currently_in_test_context():
        note(f"exit {code}\n{err}")
    check_honest(code, err, path)
    if code == 0:
        try:
            programs = read_source(text, str(path)).kernels
        except TleError as e:
            if e.check not in SPECIALIZABLE:
                raise
            # read specialised (tle-dump said so): the reading it verified, with its
            # DEFAULT_CONFIG's constexprs (each kernel its own, where the config is keyed)
            programs = load(path, {}).module.kernels
        assert not oracle_faults(programs), (text, err)


@SETTINGS
@given(data=st.data())
def test_mutated_python_never_crashes(workdir, data):
    seed = data.draw(st.sampled_from(SEEDS), label="seed")
    text = data.draw(mutated(seed.read_text()), label="py")
    verify_py(workdir / "mutant.py", text)


# -- .pipe files ---------------------------------------------------------------------------------

PIPE_SEEDS = (ROOT / "docs" / "example.pipe", ROOT / "tests" / "cases" / "late_release.ok.pipe",
              ROOT / "tests" / "cases" / "one_shot_read.ok.pipe",
              ROOT / "tests" / "cases" / "over_arrival.ok.pipe")


@SETTINGS
@given(data=st.data())
def test_mutated_pipe_file_never_crashes(workdir, data):
    seed = data.draw(st.sampled_from(PIPE_SEEDS), label="seed")
    text = data.draw(mutated(seed.read_text()), label="pipe")
    path = workdir / "mutant.pipe"
    path.write_text(text)
    code, _, err = dump([str(path)])
    note(f"exit {code}\n{err}")
    check_honest(code, err, path)
    if code == 0:
        assert not oracle_faults(parse_module(text, str(path)).kernels), (text, err)


def test_seeds_verify_and_pass_the_oracle(workdir):
    """The unmutated seeds are verified (or bounded: range_step's loop), in both forms, with the
    same status, and the simulator agrees where they are verified."""
    for seed in SEEDS:
        verify_py(workdir / "seed.py", seed.read_text())
        verify_kir(workdir / "seed.kir", kir_text(seed), "verify-protocol,verify-deadlock")
        code, _, err = dump([str(seed)])
        kir_code, _, kir_err = dump(["-p", "verify-protocol,verify-deadlock", "--print-ir",
                                     str(workdir / "seed.kir")])
        assert code in (0, 3) and kir_code == code, (seed, err, kir_err)


# -- regressions -----------------------------------------------------------------------------------


def _ring_kir() -> str:
    return kir_text(ROOT / "tle_kernels" / "examples" / "ring.py")


@pytest.mark.parametrize("edit", ["rename-event-pipe", "delete-pipe-line"])
def test_kir_event_on_an_undeclared_pipe_is_unusable_input(workdir, edit):
    """An event on a pipe with no declaration: exit 2, one error line naming the pipe and the
    event's line (it was a KeyError in the protocol view)."""
    text = _ring_kir()
    if edit == "rename-event-pipe":
        text = text.replace("ring.reader.release(t)", "pipe.reader.release(t)")
        missing = "pipe"
    else:
        text = "\n".join(ln for ln in text.splitlines() if not ln.lstrip().startswith("pipe "))
        missing = "ring"
    path = workdir / "undeclared.kir"
    path.write_text(text)
    for pipeline in KIR_PIPELINES:
        code, out, err = dump(["-p", pipeline, "--print-ir", str(path)])
        assert code == 2 and out == "", err
        (line,) = err.strip().splitlines()
        assert ERROR_AT_LINE.match(line), line
        assert f"'{missing}' is not a pipe of kernel 'ring_sum'" in line, line
    # at a line of the kernel's source, which the KIR's locations name
    assert re.match(r"^\S*tle_kernels/examples/ring\.py:\d+(:\d+)?: error: ", line), line


def dump_subprocess(argv: list[str], timeout: float = 60) -> tuple[int, str]:
    """tle-dump in a child process, so that an input that hangs it fails the test (a timeout)
    instead of hanging the test run; the exit status and stderr."""
    code = "import sys; from tle_compiler.cli.dump import main; sys.exit(main(sys.argv[1:]))"
    try:
        proc = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True,
                              text=True, timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"tle-dump {' '.join(argv)} ran for more than {timeout} s")
    return proc.returncode, proc.stderr


def test_kir_stray_character_in_a_location_comment_does_not_hang(workdir):
    """One character inserted in a long location comment (found by the fuzz test above): the
    line is read as an ordinary comment and the kernel verified, at once."""
    text = kir_text(ROOT / "tle_kernels" / "examples" / "chain.py")
    lines = text.splitlines()
    (i,) = [k for k, ln in enumerate(lines) if "tl.store(" in ln and "# " in ln][:1]
    lines[i] = lines[i].replace(" 25 40 45 ", " 25 :40 45 ", 1)  # the input the fuzz found
    assert lines[i] != text.splitlines()[i]
    path = workdir / "stray.kir"
    path.write_text("\n".join(lines) + "\n")
    code, err = dump_subprocess(["-p", "verify-protocol", "--print-ir", str(path)])
    assert code == 0, err


@pytest.mark.parametrize("suffix", [".kir", ".pipe"])
def test_blank_lines_after_a_block_do_not_hang(workdir, suffix):
    """Thirty lines holding only blanks after a closing brace, where no ``else`` follows: read
    and verified at once (it hung on the _ELSE pattern)."""
    if suffix == ".kir":
        lines = _ring_kir().splitlines()
        i = next(k for k, ln in enumerate(lines) if ln.strip() == "}")
        argv = ["-p", "verify-protocol"]
    else:
        lines = (ROOT / "docs" / "example.pipe").read_text().splitlines()
        i = next(k for k, ln in enumerate(lines) if ln.strip() == "}")
        argv = []
    lines[i + 1:i + 1] = ["  "] * 30
    path = workdir / f"blank{suffix}"
    path.write_text("\n".join(lines) + "\n")
    code, err = dump_subprocess(argv + (["--print-ir"] if suffix == ".kir" else []) + [str(path)])
    assert code == 0, err
    # and a comment line among them, then the else, still reads as the if's else
    text = "kernel k\nparam N\npipe p capacity=1\npartition w default warps=4 {\n" \
           "  if N > 0 {\n    p.acquire(0)\n    p.commit(0)\n  }\n  \n  # c\r\n\t\n" \
           "  else {\n    p.acquire(0)\n    p.commit(0)\n  }\n}\n" \
           "partition r warps=4 {\n  p.wait(0)\n  p.release(0)\n}\n"
    (program,) = parse_module(text, "else.pipe").kernels
    assert len(program.partitions[0].body) == 1  # one if, with its else
