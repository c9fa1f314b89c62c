"""Adversarial round 4 against tle-dump (a new user's and an attacker's inputs), and two
leftovers of the derived-param text form (tests/test_pipe_derived_params.py).

Tried: ...
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tle_compiler.diagnostics import TleError
from tle_compiler.ir.parser import parse_module
from tle_compiler.ir.printer import print_program

from .test_adversarial_text_inputs import dump, verdict_line, write

ROOT = Path(__file__).resolve().parents[1]

RING = """kernel k
param N
param M any
def M = {definition}
pipe p capacity=2
partition w default {{
  for t in range(N) {{ p.acquire(t); p.commit(t) }}
}}
partition r {{
  for t in range(M) {{ p.wait(t); p.release(t) }}
}}
"""


def dump_json(*args) -> tuple[int, dict, str]:
    """tle-dump --format json: the exit status, the parsed object (json.loads must accept it)
    and stderr; the object's exit_code is the exit status."""
    code, out, err = dump("--format", "json", *args)
    obj = json.loads(out)
    assert obj["exit_code"] == code, obj
    return code, obj, err


# ------------------------------------------------ 1a: a definition dividing by zero

@pytest.mark.parametrize("definition, what", [
    ("N // 0", "divides by 0 ('N // 0')"),
    ("N % 0", "takes a remainder modulo 0 ('N % 0')"),
    ("constexpr(N // 0)", "divides by 0"),
    ("N // (N - N)", "divides by 0"),  # folds to the constant 0
    ("N % min(0, 1)", "takes a remainder modulo 0"),  # an operation of constants, 0
    ("(N // 2) // 0", "divides by 0"),
    ("max(N, N // 0)", "divides by 0"),  # nested in a call
    ("N << -1", "shifts by -1"),
    ("N >> 65", "shifts by 65"),
    ("N ** -1", "raises to the power -1"),
])
def test_a_constant_divisor_of_zero_is_unusable_input_at_its_line(tmp_path, definition, what):
    """Before: `def M = N // 0` was read and the verdict was "bounded ... only for N in {}" (exit
    3), a claim over no value. Now it is unusable input (exit 2), one error at the definition's
    line saying what the operation does and that no launch gives it; --format json too."""
    path = write(tmp_path, "z.pipe", "# a comment line\n" + RING.format(definition=definition))
    code, out, err = dump(path)
    assert code == 2 and out == "", (out, err)
    (line,) = [ln for ln in err.splitlines() if ln.strip()]
    assert line.startswith(f"{path}:5:") and "error: this definition " + what in line, line
    assert "no launch gives one" in line and "Traceback" not in err
    code, obj, _ = dump_json(path)
    assert code == 2 and obj["error"].startswith(f"{path}:5:"), obj


def test_parse_module_refuses_it_with_its_location():
    with pytest.raises(TleError) as e:
        parse_module(RING.format(definition="(N + 1) % 0"), "x.pipe")
    assert e.value.loc.line == 4 and "takes a remainder modulo 0" in str(e.value)


@pytest.mark.parametrize("definition", ["N // (N - 3)", "N % (N - 3)", "N + (N // (N - 3)) * 0",
                                        "N + (N % (3 - N)) * 0"])
@pytest.mark.parametrize("upper", ["", " <= 5"])
def test_a_divisor_zero_at_some_values_claims_none_of_them(tmp_path, definition, upper):
    """A divisor that is 0 only at N = 3 is read (a kernel may compute it; the launch with N = 3
    faults). The verdict claims nothing at N = 3: its values checked ("checked" in the JSON,
    "only for N in ..." in the text) leave N = 3 out; where the reader waits N indices whenever
    M is defined the claim is the values below it (bounded, exit 3), never "proved" over a
    domain that holds 3, and the rejection of `N // (N - 3)` (M != N at N = 1) stays one."""
    text = RING.format(definition=definition).replace("param N\n", f"param N{upper}\n")
    path = write(tmp_path, "v.pipe", text)
    code, obj, _ = dump_json(path)
    (k,) = obj["kernels"]
    if "* 0" in definition:
        assert code == 3 and k["verdict"] == "bounded", k
        lo, hi = map(int, re.fullmatch(r"\[(-?\d+), (-?\d+)\]", k["checked"]["N"]).groups())
        assert not lo <= 3 <= hi, k
        assert k["scope"] == f"N in [{lo}, {hi}]"
    else:
        assert code == 1 and k["verdict"] == "rejected", k


# ------------------------------------------------ 1b: read specialised, read back

@pytest.mark.parametrize("rel", ["tle_kernels/mla_decode_pipe.py",
                                 "tle_kernels/mla_decode_seesaw.py"])
def test_read_specialised_verdict_reads_back(tmp_path, rel):
    """Before: the report of a kernel read specialised (to its constexprs BLOCK_H and TMA, which
    decide an `if` around TMA copies) read back with a verdict line without "with BLOCK_H = 64,
    TMA = 0 (read specialised)": the .pipe form had no way to say which constexprs the protocol
    was read with, so the read-back claimed "every value of NK" with no condition. Now the
    report writes `constexpr BLOCK_H = 64` lines (Program.constexprs) and the read-back verdict
    line, JSON "scope", "checked" and "specialised" are the .py's."""
    code, out, err = dump(ROOT / rel)
    assert code == 0 and "(read specialised)" in verdict_line(out), err
    assert "\nconstexpr BLOCK_H = 64\nconstexpr TMA = 0\n" in out
    back = write(tmp_path, "back.pipe", out)
    code2, out2, err2 = dump(back)
    assert code2 == code and verdict_line(out2) == verdict_line(out), err2
    # and once more: the read-back's report prints the same declarations
    assert "\nconstexpr BLOCK_H = 64\nconstexpr TMA = 0\n" in out2
    _, a, _ = dump_json(ROOT / rel)
    _, b, _ = dump_json(back)
    for key in ("verdict", "scope", "checked", "specialised"):
        assert a["kernels"][0][key] == b["kernels"][0][key], key


def test_constexpr_declaration_round_trip_and_refusals():
    text = "kernel k\nconstexpr `not` = -3\nconstexpr B = 64\nparam N\n"
    (prog,) = parse_module(text).kernels
    assert prog.constexprs == (("not", -3), ("B", 64))
    assert print_program(prog) == text
    for bad, line, words in [
        ("kernel k\nconstexpr B = 1\nconstexpr B = 2\n", 3, "declared twice (first at line 2)"),
        ("kernel k\nparam B\nconstexpr B = 2\n", 3, "also a param of kernel 'k' (line 2)"),
        ("kernel k\nbase B\nparam M\ndef M = B // 2\nconstexpr B = 2\n", 5, "also a base param"),
        ("kernel k\nparam M\nconstexpr M = 2\nbase B\ndef M = B // 2\n", 3, "also a definition"),
    ]:
        with pytest.raises(TleError) as e:
            parse_module(bad, "x.pipe")
        assert e.value.loc.line == line and words in str(e.value), str(e.value)
    for bad in ["kernel k\nconstexpr B\n", "kernel k\nconstexpr B = N\n", "constexpr B = 1\n",
                "kernel k\nconstexpr B = 1 + 1\n"]:
        with pytest.raises(TleError):
            parse_module(bad, "x.pipe")


# ------------------------------------------------ 2: paths, file names, encodings

OK_PIPE = (ROOT / "tests" / "cases" / "acquire_ahead.ok.pipe").read_text()
BAD_PIPE = (ROOT / "tests" / "cases" / "acquire_ahead.bad.pipe").read_text()
RING_PY = (ROOT / "tle_kernels" / "examples" / "ring.py").read_text()


def error_lines(err: str) -> list[str]:
    return [ln for ln in err.splitlines() if ln.strip()]


@pytest.mark.parametrize("name", ["ríng ✓.pipe", "a b c.pipe", "x" * 250 + ".pipe",
                                  "-starts-with-dash.pipe", "quote\"s 'and' $dollar.pipe"])
def test_odd_file_names_read_and_report_with_their_name(tmp_path, name):
    """A kernel file whose name is not ASCII, holds spaces, quotes or a '$', starts with '-' (given
    as ./-x.pipe) or is 250 characters long: read, verified, its events located by its name;
    the report reads back; JSON parses and names the file."""
    path = write(tmp_path, name, OK_PIPE)
    code, out, err = dump(path)
    assert code == 0 and f"# {path}:8" in out, err
    back = write(tmp_path, "back.pipe", out)
    assert dump(back)[0] == 0
    code, obj, _ = dump_json(path)
    assert code == 0 and obj["source"] == str(path)


def test_a_too_long_name_and_path_are_unusable_input(tmp_path):
    for path in (tmp_path / ("x" * 300 + ".pipe"), tmp_path / ("/".join(["d" * 200] * 25) + ".pipe")):
        code, out, err = dump(path)
        assert code == 2 and out == "" and len(error_lines(err)) == 1, err
        assert err.startswith(f"{path}: error: cannot read: File name too long"), err
        assert dump_json(path)[0] == 2


def test_symlinks(tmp_path):
    """A symlink to a kernel file is read as the file (its suffix decides: a .py link to a .pipe
    text is a Python syntax error at its line); a dangling one says so."""
    target = write(tmp_path, "t.pipe", OK_PIPE)
    (tmp_path / "l.pipe").symlink_to(target)
    assert dump(tmp_path / "l.pipe")[0] == 0
    (tmp_path / "d.pipe").symlink_to(tmp_path / "nowhere.pipe")
    code, _, err = dump(tmp_path / "d.pipe")
    assert code == 2 and "a symlink to a missing file" in err, err
    (tmp_path / "l.py").symlink_to(target)
    code, _, err = dump(tmp_path / "l.py")
    assert code == 2 and re.match(rf"{re.escape(str(tmp_path / 'l.py'))}:\d+:\d+: error: Python "
                                  r"syntax error", err), err


@pytest.mark.parametrize("src, line, words", [
    ("type X = int\n", 1, "invalid syntax"),  # 3.12's type alias
    ("try:\n    pass\nexcept ValueError, TypeError:\n    pass\n", 3,
     "multiple exception types must be parenthesized"),  # 3.14 (PEP 758)
    ("def f[T](x: T) -> T:\n    return x\n", 1, ""),  # 3.12's generic function
])
def test_syntax_only_a_newer_python_accepts_says_which_python_read_it(tmp_path, src, line, words):
    """Before: "PATH:1:6: error: Python syntax error: invalid syntax" for a kernel file written
    for a newer Python, not saying that tle-dump's own Python read it. Now the line names the
    version and what to do; exit 2 (text and JSON)."""
    import sys
    if sys.version_info >= (3, 12) and "type X" in src or sys.version_info >= (3, 12) and "[T]" in src:
        pytest.skip("this Python reads it")
    if sys.version_info >= (3, 14) and "except" in src:
        pytest.skip("this Python reads it")
    path = write(tmp_path, "new.py", src)
    code, out, err = dump(path)
    (msg,) = error_lines(err)
    assert code == 2 and out == "" and msg.startswith(f"{path}:{line}:"), err
    assert words in msg and f"as Python {sys.version_info.major}.{sys.version_info.minor} reads " \
        "it; fix the line, or run tle-dump with the Python the kernel is written for" in msg, msg
    assert dump_json(path)[0] == 2


@pytest.mark.parametrize("src, code, words", [
    ("import nosuchmodule_xyz\nx = 1\n", 2, "no @tle.jit kernel that calls tle.gpu.warp_specialize"),
    ("x = 1\n", 2, "no @tle.jit kernel"),
    ("", 2, "no @tle.jit kernel"),
    (RING_PY.replace("import", "import nosuchmod_abc\nimport", 1), 1,
     "`import nosuchmod_abc`: no module named 'nosuchmod_abc'"),
])
def test_python_files_without_kernels_or_with_missing_imports(tmp_path, src, code, words):
    path = write(tmp_path, "k.py", src)
    got, out, err = dump(path)
    assert got == code and words in err and "Traceback" not in err, err
    assert dump_json(path)[0] == code


def test_a_pipe_file_with_lone_carriage_returns_says_so(tmp_path):
    """Before: a .pipe file saved with classic Mac line endings (\\r alone) whose first line is a
    comment read as one comment: "no kernel (a .pipe file starts with 'kernel NAME')", though
    it holds one. Now the first lone \\r is refused at its line and column, saying what to do;
    \\r\\n stays fine, and a .kir file (read as Python reads lines) keeps reading \\r as a line
    end."""
    path = write(tmp_path, "cr.pipe", OK_PIPE.replace("\n", "\r"))
    code, _, err = dump(path)
    (msg,) = error_lines(err)
    assert code == 2 and msg.startswith(f"{path}:1: error: a carriage return '\\r' that ends no "
                                        "line"), msg
    assert "convert the file's line endings" in msg
    path = write(tmp_path, "cr2.pipe", OK_PIPE.replace("\n", "\r\n").replace("param N\r\n",
                                                                               "param N # x\ry\r\n"))
    code, _, err = dump(path)
    assert code == 2 and error_lines(err)[0].startswith(f"{path}:4: error: a carriage return") \
        and "at 4:12" in err, err
    assert dump(write(tmp_path, "crlf.pipe", OK_PIPE.replace("\n", "\r\n")))[0] == 0


def test_a_byte_order_mark_says_what_to_do(tmp_path):
    path = write(tmp_path, "bom.pipe", "\ufeff" + OK_PIPE)
    code, _, err = dump(path)
    assert code == 2 and err.startswith(f"{path}:1: error: unexpected character '\\ufeff', a "
                                        "byte-order mark, at 1:1") and "save the file" in err, err


@pytest.mark.parametrize("edit, code", [
    (lambda t: t.replace("  ", "\t"), 0),  # tabs
    (lambda t: t.replace("  kv.acquire", "\f kv.acquire"), 0),  # a form feed
    (lambda t: t.replace("\n", ";\n"), 0),  # a ';' after every line
    (lambda t: t.replace("default warps=4 {", "default warps=4 { # a comment after a brace"), 0),
    (lambda t: t.replace("# The", "# \u202e The"), 0),  # a bidi override in a comment
    (lambda t: t.replace("kv", "κv"), 0),
    (lambda t: t.replace("kv", "`not`"), 0),
    (lambda t: t.replace("kv", 'k"v'), 2),
    (lambda t: t.replace("kv", "k\\v"), 2),
    (lambda t: t.replace("kv", "k\u200bv"), 2),  # a zero-width space
    (lambda t: t.replace("  kv.acquire", "\u00a0 kv.acquire"), 2),  # a no-break space
    (lambda t: t.replace("kv.acquire", "kv\uff0eacquire"), 2),  # a fullwidth full stop
    (lambda t: t.replace("capacity=2", "capacity: 2"), 2),
    (lambda t: t.replace("capacity=2", "capacity=2.0"), 2),
    (lambda t: t.replace("kernel acquire_ahead", "Kernel acquire_ahead"), 2),
    (lambda t: t.replace("param N", "param N = 3"), 2),
    (lambda t: t.replace("capacity=2 fields=(k)", "capacity=2 # c\n fields=(k)"), 2),
    (lambda t: t.replace("capacity=2", "capacity=" + "9" * 4000), 2),
    (lambda t: t.replace("kv.acquire(t)", "kv.acquire(" + "(" * 5000 + "t" + ")" * 5000 + ")"), 2),
    (lambda t: t.rstrip().rstrip("}"), 2),
    (lambda t: t + "}\n", 2),
    (lambda t: "", 2), (lambda t: "  \n\t\n", 2), (lambda t: "# only\n# comments\n", 2),
    (lambda t: "kernel\n", 2),
])
def test_near_miss_pipe_text(tmp_path, edit, code):
    """Near-miss spellings, odd blanks and characters: verified, or one PATH:LINE error line
    (PATH: error for a file without a kernel), exit 2, never a traceback; JSON the same."""
    path = write(tmp_path, "k.pipe", edit(OK_PIPE))
    got, out, err = dump(path)
    assert got == code and "Traceback" not in err, err
    if code == 2:
        (msg,) = error_lines(err)
        assert re.match(rf"{re.escape(str(path))}(:\d+)?: error: ", msg), msg
    else:
        assert dump(write(tmp_path, "back.pipe", out))[0] == 0
    assert dump_json(path)[0] == code


def test_o_dash_is_stdout(tmp_path, monkeypatch):
    """Before: `-o -` wrote the report into a file named '-' in the working directory. Now it is
    stdout, as for most tools (and with several PATHs too)."""
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path, "k.pipe", OK_PIPE)
    code, out, _ = dump("-o", "-", path)
    assert code == 0 and out.startswith("kernel acquire_ahead") and not (tmp_path / "-").exists()
    code, out, _ = dump("-o", "-", "--format", "json", path, path)
    assert code == 0 and json.loads(out)["exit_code"] == 0 and not (tmp_path / "-").exists()
