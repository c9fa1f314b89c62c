"""tle-dump's verdicts and exit codes: 0 proved, 1 rejected, 2 unusable input, 3 not proved
(bounded or unknown); JSON for every outcome; one-line errors, never a traceback, for user
mistakes; --param / --bound validation; lowering of kernels that are not proved."""

from __future__ import annotations

import itertools
import json
import pathlib
import warnings
from pathlib import Path

import pytest

from tle_compiler.cli.dump import combine_exit_codes, main
from tle_compiler.diagnostics import TleVerificationWarning
from tle_compiler.ir.parser import parse_file
from tle_compiler.passes import run_pipeline
from tle_compiler.passes.verdict import BOUNDED, Verdict

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "docs" / "example.pipe"
DEADLOCK = ROOT / "docs" / "example_deadlock.pipe"
NO_PARAMS = ROOT / "tests" / "cases" / "undeclared_reader.ok.pipe"
MISSING_RELEASE = ROOT / "tests" / "cases" / "missing_release.bad.pipe"
PERSISTENT = ROOT / "tests" / "fixtures" / "persistent_rounds.py"
FRONTEND_BAD = ROOT / "tests" / "fixtures" / "frontend" / "bad_undeclared_reader.py"
RING = ROOT / "tle_kernels" / "examples" / "ring.py"


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, *args):
    code, out, err = run(capsys, "--format", "json", *args)
    return code, json.loads(out), err


def one_line_error(err: str) -> str:
    """The stderr of an exit-2 run: exactly one line, no traceback."""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err and "error:" in lines[0]
    return lines[0]


def verdict_line(out: str) -> str:
    (line,) = [ln for ln in out.splitlines() if ln.startswith("# verdict: ")]
    return line[len("# verdict: "):]


def several_kernels(tmp_path: Path, *files: Path) -> Path:
    """One .pipe file holding the kernels of ``files``, renamed k0, k1, ... (in that order)."""
    texts = []
    for i, f in enumerate(files):
        lines = f.read_text().splitlines()
        lines = [f"kernel k{i}" if ln.startswith("kernel ") else ln for ln in lines]
        texts.append("\n".join(lines))
    path = tmp_path / "several.pipe"
    path.write_text("\n\n".join(texts) + "\n")
    return path


# ---- verdicts and exit codes


def test_proved_kernel_exits_0_and_prints_the_verdicts_description(capsys):
    (program,) = parse_file(EXAMPLE).kernels
    expected = run_pipeline(program).verdict()
    assert expected.kind == "proved"
    code, out, err = run(capsys, EXAMPLE)
    assert code == 0
    assert verdict_line(out) == expected.describe()
    assert f"tle-dump: sparse_mla_pipe: {expected.describe()} (" in err
    assert verdict_line(out).startswith("verified for every value of NK")


def test_rejected_kernel_exits_1_with_path_line_error(capsys):
    code, out, err = run(capsys, DEADLOCK)
    assert code == 1
    assert f"{DEADLOCK}:17: error: deadlock" in err
    assert verdict_line(out) == "rejected: 1 error"


def test_bound_given_by_the_caller_is_bounded_exit_3_naming_the_values_checked(capsys):
    code, out, err = run(capsys, "--bound", "3", EXAMPLE)
    assert code == 3
    line = verdict_line(out)
    assert line.startswith("bounded:") and "NK in [0, 3]" in line and "not proved" in line
    assert f"tle-dump: sparse_mla_pipe: {line}" in err
    code, doc, _ = run_json(capsys, "--bound", "3", EXAMPLE)
    (k,) = doc["kernels"]
    assert code == 3 and doc["exit_code"] == 3 and k["exit_code"] == 3
    assert k["verdict"] == "bounded" and k["verified"] is False
    assert list(k["checked"]) == ["NK"] and k["reason"]


def test_bound_0_is_a_valid_bound(capsys):
    code, doc, _ = run_json(capsys, "--bound", "0", EXAMPLE)
    assert code == 3 and doc["kernels"][0]["verdict"] == "bounded"
    assert "NK" in doc["kernels"][0]["checked"]


def test_a_value_too_large_to_expand_is_unknown_exit_3(capsys):
    code, out, err = run(capsys, "--param", "NK=10000000", EXAMPLE)
    assert code == 3
    line = verdict_line(out)
    assert line.startswith("unknown: ") and "10000000" in line
    assert f"tle-dump: sparse_mla_pipe: {line}" in err and "Traceback" not in err
    code, doc, _ = run_json(capsys, "--param", "NK=10000000", EXAMPLE)
    (k,) = doc["kernels"]
    assert code == 3 and doc["exit_code"] == 3
    assert k["verdict"] == "unknown" and k["verified"] is False and "10000000" in k["reason"]
    assert k["barriers"]


def test_a_pass_that_stops_on_a_too_long_trace_gives_unknown_not_a_traceback(capsys, monkeypatch):
    """The trace expansion raises TleError past its limit (ir/unroll.py): no verdict was reached,
    so the kernel is "unknown" (exit 3), and the inference passes still fill the report."""
    import tle_compiler.cli.dump as dump
    from tle_compiler.diagnostics import TleError
    from tle_compiler.ir.nodes import Loc

    real = dump.run_pipeline

    def stopping(program, pipeline, **kw):
        if "verify" in pipeline:
            raise TleError("loop over ck runs 9999999 times, more than the verifier expands",
                           Loc(str(EXAMPLE), 11))
        return real(program, pipeline, **kw)

    monkeypatch.setattr(dump, "run_pipeline", stopping)
    code, out, err = run(capsys, EXAMPLE)
    assert code == 3 and "Traceback" not in err
    assert verdict_line(out) == ("unknown: verification stopped: loop over ck runs 9999999 times, "
                                 "more than the verifier expands (line 11)")
    code, doc, _ = run_json(capsys, EXAMPLE)
    (k,) = doc["kernels"]
    assert code == 3 and k["verdict"] == "unknown" and k["barriers"]


def test_param_value_narrows_the_claim(capsys):
    code, out, err = run(capsys, "--param", "NK=2", EXAMPLE)
    assert code == 0
    assert verdict_line(out).startswith("verified for NK = 2:")
    code, doc, _ = run_json(capsys, "--param", "NK=2", EXAMPLE)
    (k,) = doc["kernels"]
    assert k["verdict"] == "proved" and k["scope"] == "NK = 2" and "2" in k["checked"]["NK"]
    # the value decides: the deadlock needs a third tile
    assert run(capsys, "--param", "NK=2", DEADLOCK)[0] == 0
    assert run(capsys, "--param", "NK=3", DEADLOCK)[0] == 1


def test_kernel_without_params_is_proved_even_with_a_bound(capsys):
    code, out, _ = run(capsys, "--bound", "0", NO_PARAMS)
    assert code == 0 and verdict_line(out).startswith("verified for its single instance")


def test_several_kernels_exit_2_beats_1_beats_3_beats_0(capsys, tmp_path):
    proved_and_bounded = several_kernels(tmp_path, NO_PARAMS, EXAMPLE)
    code, doc, _ = run_json(capsys, "--bound", "3", proved_and_bounded)
    assert [k["verdict"] for k in doc["kernels"]] == ["proved", "bounded"]
    assert code == doc["exit_code"] == 3
    assert run(capsys, proved_and_bounded)[0] == 0
    all_three = several_kernels(tmp_path, NO_PARAMS, EXAMPLE, DEADLOCK)
    code, doc, _ = run_json(capsys, "--bound", "3", all_three)
    assert [k["verdict"] for k in doc["kernels"]] == ["proved", "bounded", "rejected"]
    assert code == doc["exit_code"] == 1
    # an output that cannot be written makes the whole run unusable, whatever the verdicts
    code, _, err = run(capsys, "--bound", "3", "-o", tmp_path / "no" / "r.txt", all_three)
    assert code == 2 and "no such folder" in one_line_error(err)


def test_exit_code_priority_is_2_then_1_then_3_then_0():
    for n in range(1, 5):
        for codes in itertools.product((0, 1, 2, 3), repeat=n):
            expected = 2 if 2 in codes else 1 if 1 in codes else 3 if 3 in codes else 0
            assert combine_exit_codes(codes) == expected, codes
    assert combine_exit_codes([]) == 0


# ---- pipelines that make no claim


def test_pipeline_without_verify_deadlock_makes_no_claim_and_exits_0(capsys):
    code, out, _ = run(capsys, "-p", "infer-barriers", EXAMPLE)
    assert code == 0 and verdict_line(out).startswith("not verified (ran ")
    code, doc, _ = run_json(capsys, "-p", "infer-stages,infer-barriers", EXAMPLE)
    (k,) = doc["kernels"]
    assert code == 0 and doc["exit_code"] == 0
    assert k["verdict"] is None and k["verified"] is False and k["barriers"]


def test_verify_deadlock_without_verify_protocol_claims_nothing(capsys):
    """verify-deadlock's argument assumes the protocol rules: alone it must not say verified."""
    code, out, err = run(capsys, "-p", "verify-deadlock", MISSING_RELEASE)
    assert "verified for" not in out and "verified for" not in err
    assert verdict_line(out).startswith("not verified")
    code, doc, _ = run_json(capsys, "-p", "verify-deadlock", MISSING_RELEASE)
    assert doc["kernels"][0]["verified"] is False and doc["kernels"][0]["verdict"] is None


def test_verify_protocol_alone_still_rejects(capsys):
    code, out, err = run(capsys, "-p", "verify-protocol", MISSING_RELEASE)
    assert code == 1 and f"{MISSING_RELEASE}:" in err and verdict_line(out).startswith("rejected")


# ---- JSON for every outcome


@pytest.mark.parametrize("args, code", [
    ([EXAMPLE], 0), ([DEADLOCK], 1), (["--bound", "2", EXAMPLE], 3), ([NO_PARAMS], 0)])
def test_json_kernels_carry_the_verdict_fields(capsys, args, code):
    rc, doc, _ = run_json(capsys, *args)
    assert rc == code and doc["exit_code"] == code
    for k in doc["kernels"]:
        assert {"verdict", "scope", "checked", "reason", "argument", "verified", "exit_code",
                "summary"} <= set(k)
        assert k["verified"] is (k["verdict"] == "proved")
        assert k["verdict"] in ("proved", "bounded", "rejected", "unknown")


def test_json_of_a_rejected_file_has_its_diagnostics(capsys):
    code, doc, err = run_json(capsys, DEADLOCK)
    (k,) = doc["kernels"]
    assert code == 1 and doc["exit_code"] == 1 and k["verdict"] == "rejected" and k["errors"] == 1
    (d,) = k["diagnostics"]
    assert (d["line"], d["check"], d["severity"]) == (17, "deadlock", "error") and d["notes"]
    assert f"{DEADLOCK}:17: error: deadlock" in err  # diagnostics go to stderr as text too


def test_frontend_error_is_rejected_with_top_level_diagnostics(capsys):
    code, out, err = run(capsys, FRONTEND_BAD)
    assert code == 1 and out == ""
    assert f"{FRONTEND_BAD}:20: error: pipe 'p': reader 'middle' is not declared" in err
    code, doc, err = run_json(capsys, FRONTEND_BAD)
    assert code == 1 and doc["exit_code"] == 1 and doc["kernels"] == []
    (d,) = doc["diagnostics"]
    assert (d["line"], d["check"], d["severity"]) == (20, "undeclared-reader", "error")
    assert f"{FRONTEND_BAD}:20: error:" in err


def _unusable_inputs(tmp_path: Path) -> dict[str, list]:
    broken_py = tmp_path / "broken.py"
    broken_py.write_text("def f(:\n")
    broken_pipe = tmp_path / "broken.pipe"
    broken_pipe.write_text("kernel k\npipe a capacity=1 fields=(x)\npartition p default {\n  a.acquire(0\n}\n")
    return {"missing file": [tmp_path / "missing.pipe"], "directory": [tmp_path],
            "python syntax": [broken_py], "pipe syntax": [broken_pipe],
            "bad param": ["--param", "NK=x", EXAMPLE], "unknown param": ["--param", "FOO=1", EXAMPLE],
            "negative bound": ["--bound", "-1", EXAMPLE], "unknown pass": ["-p", "nope", EXAMPLE],
            "unknown kernel": ["--kernel", "nope", EXAMPLE]}


UNUSABLE = ["missing file", "directory", "python syntax", "pipe syntax", "bad param", "unknown param",
            "negative bound", "unknown pass", "unknown kernel"]


@pytest.mark.parametrize("case", UNUSABLE)
def test_unusable_input_is_exit_2_and_a_json_error(capsys, tmp_path, case):
    args = _unusable_inputs(tmp_path)[case]
    code, out, err = run(capsys, *args)
    assert code == 2 and out == ""
    assert "Traceback" not in err
    code, doc, _ = run_json(capsys, *args)
    assert code == 2 and doc["exit_code"] == 2 and doc["error"]


def test_bad_flag_is_exit_2_and_json_when_json_was_asked_for(capsys):
    code, out, err = run(capsys, "--frobnicate", EXAMPLE)
    assert code == 2 and out == "" and "unrecognized arguments: --frobnicate" in err
    code, doc, _ = run_json(capsys, "--frobnicate", EXAMPLE)
    assert code == 2 and doc["exit_code"] == 2 and "--frobnicate" in doc["error"]
    code, out, _ = run(capsys, "--format", "yaml", EXAMPLE)
    assert code == 2 and out == ""


def test_json_error_goes_to_the_output_file(capsys, tmp_path):
    report = tmp_path / "report.json"
    code, out, _ = run(capsys, "-o", report, tmp_path / "missing.pipe")
    assert code == 2 and out == ""
    doc = json.loads(report.read_text())
    assert doc["exit_code"] == 2 and "no such file" in doc["error"]


# ---- one-line errors for unusable input


def test_directory_is_exit_2_one_line_without_a_location(capsys, tmp_path):
    code, _, err = run(capsys, tmp_path)
    assert code == 2
    assert one_line_error(err) == f"{tmp_path}: error: is a directory; give a .py, .pipe or .kir file"


def test_unreadable_file_is_exit_2_one_line(capsys, tmp_path, monkeypatch):
    f = tmp_path / "k.pipe"
    f.write_text(EXAMPLE.read_text())

    def denied(self):
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(pathlib.Path, "read_bytes", denied)
    code, _, err = run(capsys, f)
    assert code == 2 and one_line_error(err) == f"{f}: error: cannot read: Permission denied"


def test_binary_file_is_exit_2_one_line(capsys, tmp_path):
    f = tmp_path / "k.py"
    f.write_bytes(b"\xff\xfe\x00garbage")
    code, _, err = run(capsys, f)
    assert code == 2 and "not UTF-8" in one_line_error(err)


@pytest.mark.parametrize("value", ["NK", "NK=", "NK=x", "NK=1.5", "=3", "1K=2"])
def test_param_that_is_not_name_equals_integer_is_exit_2(capsys, value):
    code, _, err = run(capsys, "--param", value, EXAMPLE)
    assert code == 2 and "--param expects NAME=INTEGER" in one_line_error(err)


def test_unknown_param_is_exit_2_naming_the_known_params(capsys):
    code, _, err = run(capsys, "--param", "NQ=2", EXAMPLE)
    assert code == 2
    line = one_line_error(err)
    assert "NQ" in line and "known: NK" in line


def test_param_outside_its_domain_is_exit_2(capsys):
    code, _, err = run(capsys, "--param", "NK=-1", EXAMPLE)
    assert code == 2 and "NK >= 0" in one_line_error(err)


def test_param_given_twice_with_two_values_is_exit_2(capsys):
    code, _, err = run(capsys, "--param", "NK=1", "--param", "NK=2", EXAMPLE)
    assert code == 2 and "twice" in one_line_error(err)


def test_negative_bound_is_exit_2_one_line(capsys):
    code, _, err = run(capsys, "--bound", "-1", EXAMPLE)
    assert code == 2 and one_line_error(err) == "tle-dump: error: --bound must be 0 or more, got -1"


def test_specialised_constexpr_is_a_known_param_and_narrows_the_claim(capsys):
    code, out, err = run(capsys, "--param", "TOPK=256", PERSISTENT)
    assert code == 0, err
    assert "read specialised to TOPK=256" in err
    assert "TOPK = 256 (read specialised)" in verdict_line(out)
    code, doc, _ = run_json(capsys, "--param", "TOPK=256", PERSISTENT)
    (k,) = doc["kernels"]
    assert k["specialised"] == {"TOPK": 256} and "TOPK = 256" in k["scope"]
    code, _, err = run(capsys, "--param", "TOPK=256", "--param", "NOPE=1", PERSISTENT)
    lines = [ln for ln in err.splitlines() if "error:" in ln]
    assert code == 2 and len(lines) == 1 and "ROUNDS" in lines[0] and "TOPK" in lines[0]


# ---- outputs that cannot be written


@pytest.mark.parametrize("name", ["r.txt", "r.json", "g.dot", "g.svg", "g.png"])
def test_output_into_a_missing_folder_is_exit_2_one_line(capsys, tmp_path, name):
    target = tmp_path / "no" / "such" / name
    code, out, err = run(capsys, "-o", target, EXAMPLE)
    assert code == 2 and not target.exists()
    assert one_line_error(err) == f"{target}: error: cannot write: no such folder {target.parent}"


def test_output_that_is_a_directory_or_under_a_file_is_exit_2(capsys, tmp_path):
    code, _, err = run(capsys, "-o", tmp_path, EXAMPLE)
    assert code == 2 and "is a directory" in one_line_error(err)
    plain = tmp_path / "plain.txt"
    plain.write_text("")
    code, _, err = run(capsys, "-o", plain / "r.txt", EXAMPLE)
    assert code == 2 and "is not a folder" in one_line_error(err)


def test_image_without_graphviz_is_exit_2_one_line(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr("tle_compiler.cli.dot.shutil.which", lambda _name: None)
    code, _, err = run(capsys, "-o", tmp_path / "g.svg", EXAMPLE)
    lines = [ln for ln in err.splitlines() if "error:" in ln]
    assert code == 2 and len(lines) == 1 and "Graphviz" in lines[0] and "Traceback" not in err


# ---- lowering: rejected never, bounded / unknown with a warning


def test_gluon_into_a_missing_folder_is_exit_2_before_lowering(capsys, tmp_path):
    code, out, err = run(capsys, "--gluon", "-o", tmp_path / "no" / "k.py", RING)
    assert code == 2 and out == "" and "no such folder" in one_line_error(err)


def test_gluon_of_a_rejected_kernel_is_not_lowered(capsys):
    code, out, err = run(capsys, "--gluon", ROOT / "tests" / "golden" / "bad_missing_release.py")
    assert code == 1 and out == "" and "error:" in err


def test_gluon_of_a_bounded_kernel_is_lowered_with_a_warning_and_exit_3(capsys):
    code, out, err = run(capsys, "--gluon", "--bound", "3", RING)
    assert code == 3
    assert "@gluon.jit" in out
    (warning,) = [ln for ln in err.splitlines() if "warning:" in ln]
    assert "ring_sum" in warning and "bounded" in warning and "N_TILES in [0, 3]" in warning


def test_gluon_of_a_proved_kernel_exits_0_without_warning(capsys):
    code, out, err = run(capsys, "--gluon", RING)
    assert code == 0 and "@gluon.jit" in out and "warning" not in err


def _bounded_lowering(monkeypatch):
    """Make the lowering's own verification report "bounded" (the real passes run; only their
    verdict is replaced), as a kernel outside the cutoff theorem would."""
    import tle_compiler.lowering.codegen as codegen

    real = codegen.lowered_module

    def bounded(info, constexprs, *args, **kwargs):
        module = real(info, constexprs, *args, **kwargs)
        module.ctx.checked_verdict = Verdict(BOUNDED, scope="N_TILES in [0, 5]",
                                              checked={"N_TILES": "[0, 5]"},
                                              reason="for this test")
        return module

    monkeypatch.setattr(codegen, "lowered_module", bounded)


def test_generate_warns_when_the_verdict_is_not_proved(monkeypatch):
    from tle_compiler.lowering import gluon_source

    with warnings.catch_warnings():
        warnings.simplefilter("error", TleVerificationWarning)
        gluon_source((str(RING), "ring_sum"), {})  # proved: no warning
    _bounded_lowering(monkeypatch)
    with pytest.warns(TleVerificationWarning, match=r"ring_sum.*N_TILES in \[0, 5\]") as rec:
        gluon_source((str(RING), "ring_sum"), {})
    assert rec[0].message.kernel == "ring_sum" and rec[0].message.verdict.kind == "bounded"


def test_generate_warns_exactly_when_the_passes_do_not_prove_the_kernel(tmp_path):
    """A loop bound 2 * N (a param coefficient other than 1): warned iff not proved."""
    from tle_compiler.frontend import read_kernels
    from tle_compiler.lowering import gluon_source

    text = RING.read_text()
    for old in ("tl.range(0, N_TILES)", "range(N_TILES)", "close(N_TILES)", "wait(N_TILES)",
                "release(N_TILES)"):
        text = text.replace(old, old.replace("N_TILES", "2 * N_TILES"))
    path = tmp_path / "ring2.py"
    path.write_text(text)
    (info,) = read_kernels(path)
    verdict = run_pipeline(info.program).verdict()
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always", TleVerificationWarning)
        gluon_source((str(path), "ring_sum"), {})
    got = [w for w in rec if issubclass(w.category, TleVerificationWarning)]
    assert bool(got) == (verdict.kind != "proved")
    if got:
        assert verdict.describe() in str(got[0].message)


def test_tle_dump_reports_the_lowerings_own_warning_and_exits_3(capsys, monkeypatch):
    _bounded_lowering(monkeypatch)
    code, out, err = run(capsys, "--gluon", "-p", "infer-barriers", RING)
    assert code == 3 and "@gluon.jit" in out
    (warning,) = [ln for ln in err.splitlines() if "warning:" in ln]
    assert "ring_sum" in warning and "N_TILES in [0, 5]" in warning


def test_lowering_flag_errors_are_exit_2(capsys, tmp_path):
    code, _, err = run(capsys, "--gluon", "--wait-bound", "soon", RING)
    assert code == 2 and "soon" in one_line_error(err)
    code, out, _ = run(capsys, "--gluon", "--format", "json", RING)
    assert code == 2 and json.loads(out)["exit_code"] == 2
    no_config = tmp_path / "ring_no_config.py"
    text = RING.read_text()
    no_config.write_text(text[:text.index("DEFAULT_CONFIG = ")])
    assert run(capsys, no_config)[0] == 0  # verified, but cannot be lowered without types
    code, _, err = run(capsys, "--gluon", no_config)
    assert code == 2 and "DEFAULT_CONFIG" in one_line_error(err)
    code, _, err = run(capsys, "--gluon", EXAMPLE)
    assert code == 2 and "need a .py kernel file" in one_line_error(err)


# ---- help


def test_help_lists_formats_verdicts_exit_codes_and_examples(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    for word in ("text", "json", "dot", "proved", "rejected", "bounded", "unknown"):
        assert f"\n  {word} " in out, word
    for code in "0123":
        assert f"\n  {code}  " in out, code
    examples = out[out.index("examples:"):].splitlines()[1:]
    assert sum(1 for ln in examples if ln.strip().startswith("tle-dump ")) >= 2


def test_dot_picture_labels_each_kernel_with_its_verdict(capsys, tmp_path):
    several = several_kernels(tmp_path, NO_PARAMS, EXAMPLE, DEADLOCK)
    code, out, _ = run(capsys, "--format", "dot", "--bound", "3", several)
    assert code == 1
    for name, status in (("k0", "verified"), ("k1", "BOUNDED (not proved)"), ("k2", "REJECTED")):
        assert f'label="kernel {name}: {status}"' in out
