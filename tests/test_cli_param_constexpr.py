"""``tle-dump --param NAME=VALUE`` where NAME is a constexpr of a kernel: the kernel is read
specialised to that value, the verdict names it, and --gluon/--ttgir/--ptx lower that
specialisation in place of DEFAULT_CONFIG's value.

tests/fixtures/cli/flagged_ring.py is read generically (its DEFAULT_CONFIG has LOWER False);
``--param LOWER=1`` verifies and lowers the other variant. tle_kernels/mla_decode_pipe.py is read
specialised to its DEFAULT_CONFIG (TMA copies under ``if TMA``); ``--param CAUSAL=1`` adds to
those values. A value a constexpr cannot take (2 for a boolean, a BLOCK_H that divides by zero)
and a name that is neither a param nor a constexpr are unusable input (exit 2, one line naming
the value or the known names).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tle_compiler.cli.dump import EXIT_OK, EXIT_UNUSABLE, main

ROOT = Path(__file__).resolve().parent.parent
PIPE = ROOT / "tle_kernels" / "mla_decode_pipe.py"
FLAGGED = ROOT / "tests" / "fixtures" / "cli" / "flagged_ring.py"
SEESAW = ROOT / "tle_kernels" / "mla_decode_seesaw.py"


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def verdict_line(out: str) -> str:
    (line,) = [ln for ln in out.splitlines() if ln.startswith("# verdict: ")]
    return line[len("# verdict: "):]


def error_line(err: str) -> str:
    """The last stderr line of an exit-2 run: the one error, no traceback."""
    assert "Traceback" not in err, err
    lines = [ln for ln in err.strip().splitlines() if "error:" in ln]
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize("value", ["1", "True"])
def test_a_constexpr_of_a_generically_read_kernel_is_read_specialised(capsys, value):
    code, out, err = run(capsys, "--graph", "--param", f"LOWER={value}", FLAGGED)
    assert code == EXIT_OK, err
    assert "read specialised to LOWER=1 (--param)" in err
    verdict = verdict_line(out)
    assert verdict.startswith("verified for every value of N_TILES")
    assert "with LOWER = 1 (read specialised)" in verdict
    assert "LOWER" not in verdict_line(run(capsys, FLAGGED)[1])  # without --param: generic


def test_a_constexpr_adds_to_a_kernel_read_specialised_to_its_config(capsys):
    code, out, err = run(capsys, "--graph", "--param", "CAUSAL=1", PIPE)
    assert code == EXIT_OK, err
    assert "read specialised to BLOCK_H=64, CAUSAL=1, QTMA=0, TMA=0" in err
    assert "with BLOCK_H = 64, CAUSAL = 1, QTMA = 0, TMA = 0 (read specialised)" in verdict_line(out)
    assert "CAUSAL" not in verdict_line(run(capsys, PIPE)[1])  # DEFAULT_CONFIG's False: unbound


def test_the_json_verdict_names_the_constexpr_as_checked(capsys):
    code, out, _ = run(capsys, "--format", "json", "--param", "LOWER=0", FLAGGED)
    (kernel,) = json.loads(out)["kernels"]
    assert code == EXIT_OK and kernel["verdict"] == "proved"
    assert kernel["specialised"] == {"LOWER": 0}
    assert kernel["checked"]["LOWER"] == "[0, 0]"
    assert "LOWER = 0 (read specialised)" in kernel["scope"]


@pytest.mark.parametrize("path, name", [(FLAGGED, "LOWER"), (PIPE, "CAUSAL")])
def test_gluon_lowers_the_constexpr_value_given(capsys, path, name):
    code0, off, err0 = run(capsys, "--gluon", "--param", f"{name}=0", path)
    code1, on, err1 = run(capsys, "--gluon", "--param", f"{name}=1", path)
    code, default, err = run(capsys, "--gluon", path)
    assert (code0, code1, code) == (EXIT_OK, EXIT_OK, EXIT_OK), err0 + err1 + err
    assert off == default  # DEFAULT_CONFIG's value is False
    assert on != off
    assert f"{name}: gl.constexpr = False" in off
    assert f"{name}: gl.constexpr = True" in on  # a boolean constexpr is lowered as one


@pytest.mark.parametrize("path, name", [(FLAGGED, "LOWER"), (PIPE, "CAUSAL")])
def test_a_boolean_constexpr_takes_0_or_1_only(capsys, path, name):
    code, _, err = run(capsys, "--param", f"{name}=2", path)
    assert code == EXIT_UNUSABLE
    line = error_line(err)
    assert f"--param {name}=2" in line and "boolean constexpr" in line and "0 or 1" in line


def test_a_constexpr_value_that_divides_by_zero_is_unusable(capsys):
    """BLOCK_H = 0 gives the q slot a dimension 0 (and the row-block count a division by zero):
    the kernel reads with DEFAULT_CONFIG's BLOCK_H, so it is the value given that is refused
    (unusable input, the first reason met while reading: the slot's shape), not the kernel (it
    was a rejection, exit 1, where the kernel must be read specialised anyway)."""
    for path in (PIPE, SEESAW):
        code, out, err = run(capsys, "--gluon", "--param", "BLOCK_H=0", path)
        assert code == EXIT_UNUSABLE and out == ""
        line = error_line(err)
        assert "--param BLOCK_H=0: the kernel cannot be read with this value" in line
        assert "dimension 0 is not positive" in line


def test_unknown_name_lists_params_and_constexprs(capsys):
    code, _, err = run(capsys, "--graph", "--param", "LOWERR=1", FLAGGED)
    assert code == EXIT_UNUSABLE
    line = error_line(err)
    assert "--param LOWERR: no such param or constexpr" in line
    assert "known: N_TILES" in line and "constexprs: LOWER" in line
    code, _, err = run(capsys, "--graph", "--param", "CAUSALL=1", PIPE)
    assert code == EXIT_UNUSABLE
    line = error_line(err)
    assert "known: BLOCK_H, NK, QTMA, TMA" in line and "constexprs: CAUSAL, SPLIT" in line


@pytest.mark.parametrize("value", ["LOWER=true", "LOWER=yes", "LOWER=1.0"])
def test_a_value_that_is_no_integer_nor_true_false_is_unusable(capsys, value):
    code, _, err = run(capsys, "--param", value, FLAGGED)
    assert code == EXIT_UNUSABLE and "--param expects NAME=INTEGER" in error_line(err)


@pytest.mark.parametrize("path, param, line", [
    (FLAGGED, "LOWER=1", "LOWER: gl.constexpr = True"),
    (PIPE, "CAUSAL=1", "CAUSAL: gl.constexpr = True"),
    (SEESAW, "TMA=1", "TMA: gl.constexpr = 1"),  # a constexpr the seesaw must be read with
])
def test_print_ir_emit_gluon_lowers_the_constexpr_given_as_gluon_does(capsys, path, param, line):
    """``-p emit-gluon`` (cli/print_ir.py) prints the module ``--gluon`` prints for the same
    --param, not DEFAULT_CONFIG's, and says once that it read the kernel specialised."""
    code, printed, err = run(capsys, "-p", "emit-gluon", "--param", param, path)
    assert code == EXIT_OK, err
    assert err.count("read specialised to") == 1, err
    assert line in printed
    code, gluon, err = run(capsys, "--gluon", "--param", param, path)
    assert code == EXIT_OK, err
    assert printed == gluon
    assert printed != run(capsys, "-p", "emit-gluon", path)[1]  # DEFAULT_CONFIG's differ


def test_print_ir_of_a_kir_file_lowers_the_constexpr_given(capsys, tmp_path):
    """A ``.kir`` file printed from the kernel lowers a --param constexpr as the ``.py`` does."""
    code, kir, err = run(capsys, "-p", "infer-barriers", "--print-ir", PIPE)
    assert code == EXIT_OK, err
    kir_file = tmp_path / "mla_decode_pipe.kir"
    kir_file.write_text(kir)
    code, printed, err = run(capsys, "-p", "emit-gluon", "--param", "CAUSAL=1", kir_file)
    assert code == EXIT_OK, err
    assert "CAUSAL: gl.constexpr = True" in printed
    assert printed == run(capsys, "--gluon", "--param", "CAUSAL=1", PIPE)[1]
