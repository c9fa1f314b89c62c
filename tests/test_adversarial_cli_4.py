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
