"""tle-dump's command line attacked as a new user and an adversary would: flags alone and
combined, odd pipelines, --param spellings, input files that are not kernel files, -o paths, and
round trips through --print-ir. Each test runs the CLI's main() in-process.

What was wrong before the fixes these tests pin (input and flags -> before; now):
- ``-p verify-deadlock,verify-protocol`` (verify-deadlock before the pass its argument assumes)
  -> exit 3 "unknown: the passes gave no verdict", although the README says such a pipeline
  makes no claim and exits 0 (and --print-ir of the same pipeline exited 0): now "not verified:
  verify-deadlock ran without verify-protocol before it ...", exit 0, in both modes.
- ``--print-ir`` / ``-p emit-gluon`` / ``-p materialize-barriers`` printed no verdict line on
  stderr: ``--print-ir -q --bound 2`` exited 3 with nothing printed at all. Now every kernel
  gets its summary line, as in the report.
- ``--gluon --wait-bound 1e400s`` (or ``1e400polls``, or ``TLE_DEBUG_WAITS=1e400``) -> a
  Python traceback (OverflowError); ``--wait-bound 1e30s`` -> ptxas's multi-line abort, exit 1;
  ``--wait-bound 18446744073709551616ns`` -> a PTX constant past 64 bits, exit 0;
  ``--wait-bound 1e20polls`` silently became 4294967295 polls; ``--wait-bound 0`` / ``off``
  with --debug-waits silently lowered plain waits; ``--wait-bound 1`` meant 2 s (the env var's
  "on"); errors about --wait-bound named $TLE_DEBUG_WAITS. Now: a bare number is seconds, and
  each of these is one line naming the flag (or the variable), exit 2.
- ``--debug-waits`` / ``--wait-bound`` without --gluon/--ttgir/--ptx (``-p emit-gluon
  --debug-waits`` included, whose Gluon had plain waits) were silently ignored: now exit 2.
- ``--param N_TILES=True`` (an integer param) and ``--param BLOCK_H=True`` (a constexpr whose
  DEFAULT_CONFIG is 64) were read as 1: "verified ... with BLOCK_H = 1". Now exit 2, before any
  specialised read.
- ``tle-dump -`` said "no such file"; a FIFO hung forever; a symlink loop said "no such file";
  a ``.txt`` or suffix-less file was read as Python ("Python syntax error"). Now one clear line
  each (exit 2). (A .pipe or .kir file starting with a UTF-8 byte-order mark stays refused at
  1:1, as tests/test_adversarial_pipe_text.py and test_adversarial_kir.py pin.)
- ``-o K.py K.py`` (also ``--gluon -o K.py K.py``, or through a symlink) overwrote the kernel
  source with the report; ``-o ''`` printed to stdout. Now exit 2, the file untouched.
- ``--kernel nope`` named no kernels of the file (only when another --kernel matched);
  ``--kernel ''`` said "no kernel named ". Now the kernels are listed; an empty name is refused.
- A bad flag printed argparse's five-line usage block before the error; ``--wait-bound -5s``
  said only "expected one argument"; ``--frobnicate --form json`` (an abbreviation argparse
  takes) gave no JSON. Now one line, with the ``--wait-bound=-5s`` spelling, and JSON.
- ``-o g.png`` without Graphviz verified first: a rejected kernel's diagnostics, then the
  Graphviz error, exit 2. Now the Graphviz line alone, before verifying.
- An exception no check expected (a bug) printed a traceback (exit 1, as if rejected). Now one
  "internal error" line naming it, exit 3 (nothing claimed), JSON too.
- ``--print-ir`` of a kernel whose protocol was read specialised (sparse_mla_seesaw.py, TOPK =
  2048) wrote ``verdict = ProtocolVerdict(... scope = 'every value of ROUNDS' ...)`` into a
  kernel printed generic in TOPK. Now the scope names the values read specialised.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from tests.test_cli_verdicts import one_line_error, verdict_line
from tle_compiler.cli.dump import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "docs" / "example.pipe"
DEADLOCK = ROOT / "docs" / "example_deadlock.pipe"
RING = ROOT / "tle_kernels" / "examples" / "ring.py"
SPSC = ROOT / "tle_kernels" / "gpu_tests" / "spsc_ring.py"
MLA_DECODE = ROOT / "tle_kernels" / "mla_decode_pipe.py"


def run(capsys, *args, env=None, monkeypatch=None):
    if env:
        for k, v in env.items():
            monkeypatch.setenv(k, v)
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


one_line = one_line_error  # stderr of an exit-2 run: one line, no traceback


def summaries(err: str) -> dict[str, str]:
    """The per-kernel summary lines on stderr: kernel -> text (without the report's timing)."""
    out = {}
    for ln in err.splitlines():
        if ln.startswith("tle-dump: ") and not ln.startswith(("tle-dump: error", "tle-dump: warn")):
            name, _, rest = ln[len("tle-dump: "):].partition(": ")
            if "/" not in name:
                out[name] = re.sub(r" \([0-9.]+ s(; the file [0-9.]+ s)?\)$", "", rest)
    return out


# ---- kernels written for these tests, from the bundled ring


def _ring_variants() -> dict[str, str]:
    """The ring's kernel as three kernels: proved, rejected (releases t + 1), bounded (loops over
    2 * N_TILES: outside the cutoff theorem's fragment)."""
    src = RING.read_text()
    head = src[src.index("import triton"):src.index("@tle.jit")]
    body = src[src.index("@tle.jit"):src.index("DEFAULT_CONFIG")]
    bad = body.replace("        r.release(t)\n", "        r.release(t + 1)\n")
    bnd = (body.replace("tl.range(0, N_TILES)", "tl.range(0, 2 * N_TILES)")
           .replace("range(N_TILES)", "range(2 * N_TILES)")
           .replace("w.close(N_TILES)", "w.close(2 * N_TILES)")
           .replace("r.wait(N_TILES)", "r.wait(2 * N_TILES)")
           .replace("r.release(N_TILES)\n", "r.release(2 * N_TILES)\n"))

    def named(tag, b):
        return (b.replace("ring_sum", f"ring_{tag}").replace("load_tiles", f"load_{tag}")
                .replace("sum_tiles", f"sum_{tag}"))

    return {"head": head, "ok": named("ok", body), "bad": named("bad", bad),
            "bnd": named("bnd", bnd)}


def kernel_file(tmp_path: Path, name: str, *tags: str) -> Path:
    v = _ring_variants()
    path = tmp_path / name
    path.write_text('"""test kernels"""\n' + v["head"] + "".join(v[t] for t in tags))
    return path


def kir_of(capsys, tmp_path: Path, src: Path, name: str = "k.kir") -> Path:
    code, out, _ = run(capsys, "-p", "verify-protocol", "--print-ir", src)
    assert code == 0
    path = tmp_path / name
    path.write_text(out)
    return path


# ---- pipelines: only verify-deadlock after verify-protocol makes a claim


def test_verify_deadlock_before_verify_protocol_makes_no_claim_and_exits_0(capsys):
    code, out, err = run(capsys, "-p", "verify-deadlock,verify-protocol", EXAMPLE)
    assert code == 0
    assert verdict_line(out).startswith("not verified: verify-deadlock ran without "
                                        "verify-protocol before it")
    assert "unknown" not in err and "verified for" not in err
    code, out, _ = run(capsys, "--format", "json", "-p", "verify-deadlock,verify-protocol", EXAMPLE)
    doc = json.loads(out)
    (k,) = doc["kernels"]
    assert code == 0 and doc["exit_code"] == 0 and k["verdict"] is None and not k["verified"]


def test_verify_deadlock_before_verify_protocol_still_finds_the_deadlock(capsys):
    code, out, err = run(capsys, "-p", "verify-deadlock,verify-protocol", DEADLOCK)
    assert code == 1 and f"{DEADLOCK}:17: error: deadlock" in err
    assert verdict_line(out) == "rejected: 1 error"


def test_a_pipeline_with_verify_deadlock_after_verify_protocol_proves(capsys):
    for p in ("verify-deadlock,verify-protocol,verify-deadlock",
              "verify-protocol,verify-protocol,verify-deadlock", " verify-protocol , verify-deadlock "):
        code, out, _ = run(capsys, "-p", p, EXAMPLE)
        assert code == 0 and verdict_line(out).startswith("verified for every value of NK"), p


def test_print_ir_agrees_with_the_report_on_the_pipeline_order(capsys):
    code, out, err = run(capsys, "-q", "--print-ir", "-p", "verify-deadlock,verify-protocol", RING)
    assert code == 0 and out == ""
    assert summaries(err)["ring_sum"].startswith("not verified: verify-deadlock ran without")


# ---- --print-ir and lowering pipelines say what they proved


def test_print_ir_prints_each_kernels_verdict_on_stderr(capsys):
    code, out, err = run(capsys, "-q", "--print-ir", "--bound", "2", RING)
    assert code == 3 and out == ""
    assert summaries(err)["ring_sum"].startswith("bounded: ") and "N_TILES in [0, 2]" in err
    code, out, err = run(capsys, "--print-ir", RING)
    assert code == 0 and "verdict = ProtocolVerdict(kind = 'proved'" in out
    assert summaries(err)["ring_sum"].startswith("verified for every value of N_TILES")


def test_print_ir_of_several_kernels_gives_each_its_line_and_the_worst_exit(capsys, tmp_path):
    path = kernel_file(tmp_path, "three.py", "ok", "bad", "bnd")
    code, out, err = run(capsys, "-q", "--print-ir", path)
    s = summaries(err)
    assert code == 1 and out == ""
    assert s["ring_ok"].startswith("verified for every value")
    assert s["ring_bad"] == "rejected: 3 errors"
    assert s["ring_bnd"].startswith("bounded: ")


def test_a_pipeline_without_a_verdict_names_every_pass_it_ran(capsys):
    code, _, err = run(capsys, "-q", "-p", "materialize-barriers", RING)
    assert code == 0
    assert summaries(err)["ring_sum"] == (
        "not verified (ran infer-stages, infer-barriers, materialize-barriers; no claim is made: "
        "verify-protocol and verify-deadlock give the verdict)")


def test_print_ir_of_a_kir_read_specialised_names_the_values(capsys, tmp_path):
    kir = kir_of(capsys, tmp_path, ROOT / "tle_kernels" / "sparse_mla_seesaw.py")
    code, _, err = run(capsys, "-q", "--print-ir", kir)
    assert code == 0
    line = summaries(err)["sparse_mla_seesaw"]
    assert line.startswith("verified for every value of ROUNDS") and "(read specialised)" in line


# ---- --debug-waits and --wait-bound


@pytest.mark.parametrize("bound, why", [
    ("1e400s", "too large"), ("1e400polls", "too large"), ("1e30s", "too large (at most"),
    ("18446744073709551616ns", "too large (at most 18446744073 s"),
    ("1e20polls", "too large (at most 4294967295 polls"), ("0", "it must be positive"),
    ("off", "it must be positive"), ("0.5polls", "it must be positive"),
    ("soon", "expected a time (2s, 500ms) or a poll count")])
def test_a_bad_wait_bound_is_one_line_naming_the_flag(capsys, bound, why):
    code, out, err = run(capsys, "--gluon", "--debug-waits", "--wait-bound", bound, RING)
    assert code == 2 and out == ""
    line = one_line(err)
    assert line.startswith(f"tle-dump: error: --wait-bound '{bound}': ") and why in line


def test_a_bad_tle_debug_waits_is_one_line_naming_the_variable(capsys, monkeypatch):
    code, out, err = run(capsys, "--gluon", RING, env={"TLE_DEBUG_WAITS": "1e400"},
                         monkeypatch=monkeypatch)
    assert code == 2 and out == ""
    assert one_line(err) == "tle-dump: error: $TLE_DEBUG_WAITS '1e400': too large"


def test_a_bare_wait_bound_is_seconds(capsys, monkeypatch):
    monkeypatch.delenv("TLE_DEBUG_WAITS", raising=False)
    code, out, _ = run(capsys, "--gluon", "--wait-bound", "1", RING)
    assert code == 0 and "setp.lt.u64 p, t1, 1000000000;" in out
    code, out, _ = run(capsys, "--gluon", "--debug-waits", RING)
    assert code == 0 and "setp.lt.u64 p, t1, 2000000000;" in out
    # --debug-waits asks for bounded waits even where the variable says "off"
    monkeypatch.setenv("TLE_DEBUG_WAITS", "off")
    code, out, _ = run(capsys, "--gluon", "--debug-waits", RING)
    assert code == 0 and "setp.lt.u64 p, t1, 2000000000;" in out


@pytest.mark.parametrize("args", [["--debug-waits"], ["--wait-bound", "2s"],
                                  ["-p", "emit-gluon", "--debug-waits"],
                                  ["--print-ir", "--wait-bound", "1s"]])
def test_debug_waits_without_a_lowering_flag_is_refused(capsys, args):
    code, out, err = run(capsys, *args, RING)
    assert code == 2 and out == ""
    assert "applies to the lowered kernel: add --gluon, --ttgir or --ptx" in one_line(err)


# ---- --param True/False only for a boolean constexpr


@pytest.mark.parametrize("path, value, what", [
    (RING, "N_TILES=True", "N_TILES is an integer param of ring_sum"),
    (EXAMPLE, "NK=False", "NK is an integer param of sparse_mla_pipe"),
    (MLA_DECODE, "BLOCK_H=True", "BLOCK_H is an integer constexpr (DEFAULT_CONFIG: 64)"),
    (MLA_DECODE, "TMA=False", "TMA is an integer constexpr (DEFAULT_CONFIG: 0)")])
def test_true_or_false_for_an_integer_is_refused(capsys, path, value, what):
    code, out, err = run(capsys, "--param", value, path)
    assert code == 2 and out == ""
    line = one_line(err)  # no "read specialised to BLOCK_H=1" note before it
    assert line.startswith(f"tle-dump: error: --param {value}: ") and what in line


def test_true_or_false_for_an_integer_is_refused_in_every_mode(capsys, tmp_path):
    kir = kir_of(capsys, tmp_path, MLA_DECODE)
    for args in (["-p", "emit-gluon", MLA_DECODE], ["--gluon", MLA_DECODE], [kir],
                 ["--print-ir", kir]):
        code, out, err = run(capsys, "--param", "BLOCK_H=True", *args)
        assert code == 2 and out == "", args
        assert "BLOCK_H is an integer constexpr" in one_line(err), args


def test_true_for_a_boolean_constexpr_is_still_read_as_1(capsys):
    code, _, err = run(capsys, "-q", "--param", "CAUSAL=True", MLA_DECODE)
    assert code == 0
    assert "with BLOCK_H = 64, CAUSAL = 1, QTMA = 0, TMA = 0 (read specialised)" in \
        summaries(err)["mla_decode_pipe"]
    code, _, _ = run(capsys, "-q", "--param", "CAUSAL=1", "--param", "CAUSAL=True", MLA_DECODE)
    assert code == 0


# ---- input files


def test_standard_input_is_refused_in_one_line(capsys):
    code, out, err = run(capsys, "-")
    assert code == 2 and out == ""
    assert one_line(err) == ("-: error: tle-dump does not read standard input; give the path of "
                             "a .py, .pipe or .kir file")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_is_refused_without_blocking(capsys, tmp_path):
    fifo = tmp_path / "k.pipe"
    os.mkfifo(fifo)
    code, _, err = run(capsys, fifo)
    assert code == 2 and "not a regular file" in one_line(err)


def test_a_symlink_loop_and_a_dangling_link_say_what_they_are(capsys, tmp_path):
    a, b = tmp_path / "a.pipe", tmp_path / "b.pipe"
    a.symlink_to(b)
    b.symlink_to(a)
    code, _, err = run(capsys, a)
    assert code == 2 and one_line(err).startswith(f"{a}: error: cannot read: ")
    assert "no such file" not in err
    dangling = tmp_path / "d.pipe"
    dangling.symlink_to(tmp_path / "gone.pipe")
    code, _, err = run(capsys, dangling)
    assert code == 2 and one_line(err) == f"{dangling}: error: a symlink to a missing file"
    good = tmp_path / "good.pipe"
    good.symlink_to(EXAMPLE)
    assert run(capsys, good)[0] == 0


@pytest.mark.parametrize("name", ["example.txt", "example", "example.PIPE"])
def test_a_file_of_an_unknown_kind_is_refused_not_read_as_python(capsys, tmp_path, name):
    f = tmp_path / name
    f.write_text(EXAMPLE.read_text())
    code, _, err = run(capsys, f)
    line = one_line(err)
    assert code == 2 and "unknown kind of file" in line and "syntax" not in line
    assert line.endswith("give a .py, .pipe or .kir file")


def test_a_byte_order_mark_is_one_line_naming_it(capsys, tmp_path):
    """A .pipe or .kir text has no place for a byte-order mark (tests/test_adversarial_pipe_text.py,
    tests/test_adversarial_kir.py): refused at 1:1, in the report and --print-ir modes."""
    bom = tmp_path / "bom.pipe"
    bom.write_bytes(b"\xef\xbb\xbf" + EXAMPLE.read_bytes())
    code, out, err = run(capsys, bom)
    assert code == 2 and out == "" and one_line(err).startswith(f"{bom}:1: error: ")
    assert "\\ufeff" in err
    kir = kir_of(capsys, tmp_path, RING)
    bom_kir = tmp_path / "bom.kir"
    bom_kir.write_bytes(b"\xef\xbb\xbf" + kir.read_bytes())
    for args in ([bom_kir], ["--print-ir", bom_kir]):
        code, out, err = run(capsys, *args)
        assert code == 2 and out == "" and one_line(err).startswith(f"{bom_kir}:1: error: ")


def test_a_path_with_spaces_works(capsys, tmp_path):
    folder = tmp_path / "a folder"
    folder.mkdir()
    f = folder / "the example.pipe"
    f.write_text(EXAMPLE.read_text())
    code, out, err = run(capsys, "--format", "json", f)
    doc = json.loads(out)
    assert code == 0 and doc["source"] == str(f) and doc["kernels"][0]["verified"] is True


@pytest.mark.parametrize("name", ["empty.py", "empty.pipe", "empty.kir"])
def test_an_empty_file_is_unusable_input(capsys, tmp_path, name):
    f = tmp_path / name
    f.write_text("")
    code, _, err = run(capsys, f)
    assert code == 2 and ": error: no " in one_line(err) and "kernel" in err


# ---- -o


@pytest.mark.parametrize("flags", [[], ["--gluon"], ["--format", "json"], ["-p", "emit-gluon"]])
def test_output_onto_the_input_file_is_refused_and_leaves_it(capsys, tmp_path, flags):
    src = tmp_path / "ring.py"
    src.write_text(RING.read_text())
    code, out, err = run(capsys, *flags, "-o", src, src)
    assert code == 2 and "it is the input file" in one_line(err)
    if "json" in flags:  # the error goes to stdout, not over the input
        assert json.loads(out)["exit_code"] == 2
    else:
        assert out == ""
    assert src.read_text() == RING.read_text()


def test_output_onto_the_input_through_a_symlink_is_refused(capsys, tmp_path):
    src = tmp_path / "k.pipe"
    src.write_text(EXAMPLE.read_text())
    link = tmp_path / "report.pipe"
    link.symlink_to(src)
    code, _, err = run(capsys, "-o", link, src)
    assert code == 2 and "it is the input file" in one_line(err)
    assert src.read_text() == EXAMPLE.read_text()
    kir = kir_of(capsys, tmp_path, RING)
    before = kir.read_text()
    code, _, err = run(capsys, "--print-ir", "-o", kir, kir)
    assert code == 2 and "it is the input file" in one_line(err) and kir.read_text() == before


def test_an_empty_output_path_is_refused(capsys):
    code, out, err = run(capsys, "-o", "", EXAMPLE)
    assert code == 2 and out == "" and "-o: an empty path" in one_line(err)


def test_an_output_file_gets_the_report_and_stdout_nothing(capsys, tmp_path):
    for name, check in (("r.json", lambda t: json.loads(t)["exit_code"] == 0),
                        ("r.JSON", lambda t: json.loads(t)["kernels"][0]["verified"]),
                        ("r.dot", lambda t: t.startswith("digraph tle {")),
                        ("r.txt", lambda t: "# verdict: verified for every value" in t)):
        code, out, _ = run(capsys, "-o", tmp_path / name, EXAMPLE)
        assert code == 0 and out == "" and check((tmp_path / name).read_text()), name


# ---- --kernel


def test_a_missing_kernel_lists_the_kernels_of_the_file(capsys, tmp_path):
    kinds = "ring_c1, ring_c2, ring_c3, ring_c4"
    for args in (["--kernel", "nope", SPSC], ["--kernel", "nope", "--kernel", "nope", SPSC],
                 ["--kernel", "nope", "--print-ir", SPSC], ["--kernel", "nope", "--gluon", SPSC]):
        code, out, err = run(capsys, *args)
        assert code == 2 and out == ""
        assert one_line(err) == f"{SPSC}: error: no kernel named nope (kernels: {kinds})", args
    code, _, err = run(capsys, "--kernel", "nope", EXAMPLE)
    assert one_line(err) == f"{EXAMPLE}: error: no kernel named nope (kernels: sparse_mla_pipe)"
    kir = kir_of(capsys, tmp_path, SPSC)
    code, _, err = run(capsys, "--kernel", "nope", "--print-ir", kir)
    assert code == 2 and one_line(err) == f"{kir}: error: no kernel named nope (kernels: {kinds})"


def test_an_empty_kernel_name_is_refused(capsys):
    code, _, err = run(capsys, "--kernel", "", SPSC)
    assert code == 2 and "--kernel: an empty name" in one_line(err)


def test_a_kernel_given_twice_is_verified_once(capsys):
    code, out, err = run(capsys, "--kernel", "ring_c2", "--kernel", "ring_c2", SPSC)
    assert code == 0 and out.count("# verdict: ") == 1 and list(summaries(err)) == ["ring_c2"]


# ---- bad flags: one line


@pytest.mark.parametrize("args, text", [
    (["--bound", "1.5"], "argument --bound: invalid int value: '1.5'"),
    (["--frobnicate"], "unrecognized arguments: --frobnicate"),
    (["--format", "yaml"], "argument --format: invalid choice: 'yaml'"),
    (["--wait-bound", "-5s", "--gluon"], "write --wait-bound=-5s"),
    (["-o", "-r.txt"], "write --output=-r.txt"),
    (["--kernel", "-k"], "write --kernel=-k")])
def test_a_bad_flag_is_one_line(capsys, args, text):
    code, out, err = run(capsys, *args, EXAMPLE)
    assert code == 2 and out == ""
    line = one_line(err)
    assert line.startswith("tle-dump: error: ") and text in line and "usage:" not in err


def test_a_negative_flag_value_written_with_equals_works(capsys, monkeypatch):
    monkeypatch.delenv("TLE_DEBUG_WAITS", raising=False)
    code, _, err = run(capsys, "--gluon", "--wait-bound=-5s", RING)
    assert code == 2 and "it must be positive" in one_line(err)


# ---- what already worked: verdicts, JSON and exit codes agree


def test_three_verdicts_in_one_file_json_text_and_exit_code_agree(capsys, tmp_path):
    path = kernel_file(tmp_path, "three.py", "ok", "bad", "bnd")
    code, out, err = run(capsys, "--format", "json", path)
    doc = json.loads(out)
    got = {k["name"]: (k["verdict"], k["exit_code"], k["verified"]) for k in doc["kernels"]}
    assert code == 1 and doc["exit_code"] == 1
    assert got == {"ring_ok": ("proved", 0, True), "ring_bad": ("rejected", 1, False),
                   "ring_bnd": ("bounded", 3, False)}
    assert {k["name"]: k["summary"] for k in doc["kernels"]} == summaries(err)
    code, out, err2 = run(capsys, path)
    verdicts = [ln[len("# verdict: "):] for ln in out.splitlines() if ln.startswith("# verdict:")]
    assert code == 1 and verdicts == list(summaries(err2).values())
    proved_bounded = kernel_file(tmp_path, "two.py", "ok", "bnd")
    code, out, _ = run(capsys, "--format", "json", proved_bounded)
    assert code == 3 and json.loads(out)["exit_code"] == 3


def test_lowering_a_file_with_a_rejected_kernel_lowers_nothing(capsys, tmp_path):
    path = kernel_file(tmp_path, "three.py", "ok", "bad", "bnd")
    code, out, err = run(capsys, "--gluon", path)
    assert code == 1 and out == "" and "ring_bad: rejected: 3 errors" in err


@pytest.mark.parametrize("rel", ["tle_kernels/examples/ring.py", "tle_kernels/examples/spmc.py",
                                 "tle_kernels/gpu_tests/one_shot.py",
                                 "tle_kernels/sparse_mla_pipe.py"])
def test_the_printed_ir_read_back_gives_the_same_verdict_and_barriers(capsys, tmp_path, rel):
    src = ROOT / rel
    kir = kir_of(capsys, tmp_path, src)

    def table(path):
        code, out, _ = run(capsys, "--format", "json", path)
        doc = json.loads(out)
        return code, [(k["name"], k["verdict"], k["scope"], k["barriers"])
                      for k in doc["kernels"]]

    assert table(src) == table(kir)
    report = tmp_path / "report.pipe"  # the text report is a .pipe file with the same verdict
    code, out, _ = run(capsys, src)
    report.write_text(out)
    code2, out2, _ = run(capsys, report)
    assert code == code2 == 0 and verdict_line(out) == verdict_line(out2)


def test_a_huge_bound_is_accepted_and_a_bound_past_the_cutoff_proves(capsys):
    code, out, _ = run(capsys, "--bound", "9" * 30, RING)
    assert code == 0 and verdict_line(out).startswith("verified for every value of N_TILES")
    code, out, _ = run(capsys, "--bound", "0", RING)
    assert code == 3 and "only for N_TILES in {0}" in verdict_line(out)


def test_a_param_value_past_i32_is_not_proved_and_json_says_so(capsys):
    code, out, err = run(capsys, "--format", "json", "--param", "N_TILES=2147483648", RING)
    (k,) = json.loads(out)["kernels"]
    assert code == 3 and json.loads(out)["exit_code"] == 3
    assert k["verdict"] == "unknown" and k["verified"] is False and "outside i32" in k["reason"]
    assert summaries(err)["ring_sum"].startswith("unknown: ")


@pytest.mark.parametrize("pipeline", ["verify-protocol", "infer-barriers", "", ","])
def test_a_pipeline_without_a_verdict_exits_0_and_says_no_claim(capsys, pipeline):
    code, out, err = run(capsys, "-p", pipeline, EXAMPLE)
    assert code == 0 and verdict_line(out).startswith("not verified (ran ")
    assert "no claim is made" in summaries(err)["sparse_mla_pipe"]


@pytest.mark.parametrize("json_flag", [["--form", "json"], ["--forma=json"], ["-oreport.json"],
                                       ["--out", "report.json"]])
def test_a_bad_flag_answers_in_json_when_json_was_asked_for_in_any_spelling(
        capsys, tmp_path, monkeypatch, json_flag):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "--frobnicate", *json_flag, EXAMPLE)
    assert code == 2 and json.loads(out)["exit_code"] == 2 and "--frobnicate" in one_line(err)


def test_a_picture_without_graphviz_is_refused_before_verifying(capsys, tmp_path, monkeypatch):
    """A rejected kernel's diagnostics and then 'Graphviz is not installed' were two stories
    for one exit status (2): the missing renderer is now the one line, before verifying."""
    monkeypatch.setattr("tle_compiler.cli.dot.shutil.which", lambda _name: None)
    code, out, err = run(capsys, "-o", tmp_path / "g.png", DEADLOCK)
    assert code == 2 and out == "" and "Graphviz's 'dot' is not installed" in one_line(err)
    assert not (tmp_path / "g.png").exists()


def test_a_bug_in_tle_dump_is_one_line_and_claims_nothing(capsys, monkeypatch):
    """An exception no check expected printed Python's traceback (exit 1, as if rejected)."""
    import tle_compiler.cli.dump as dump

    def broken(*_a, **_k):
        raise RuntimeError("an invariant\nbroke")

    monkeypatch.setattr(dump, "run_pipeline", broken)
    code, out, err = run(capsys, EXAMPLE)
    line = one_line(err)
    assert code == 3 and out == ""
    assert line.startswith("tle-dump: error: internal error (RuntimeError at test_adversarial_cli_2")
    assert "an invariant broke" in line and "nothing is claimed" in line
    code, out, err = run(capsys, "--format", "json", EXAMPLE)
    doc = json.loads(out)
    assert code == 3 and doc["exit_code"] == 3 and "internal error" in doc["error"]


CYCLE = '''"""two partitions that each wait for the other first: a deadlock only verify-deadlock sees."""
import triton.language as tl

import tle_compiler as tle


@tle.jit
def cyc(x_ptr, N):
    p1 = tle.pipe(capacity=1, a=tle.gpu.alloc([1, 64], tl.float32))
    p2 = tle.pipe(capacity=1, b=tle.gpu.alloc([1, 64], tl.float32))
    tle.gpu.warp_specialize([(part_a, (p1, p2, x_ptr, N)), (part_b, (p1, p2, x_ptr, N))],
                            [4], [232])


def part_a(p1, p2, x_ptr, N):
    r = p2.reader()
    w = p1.writer()
    for t in range(N):
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.b))
        r.release(t)
        s = w.acquire(t)
        tl.store(tle.gpu.local_ptr(s.a), v)
        w.commit(t)


def part_b(p1, p2, x_ptr, N):
    r = p1.reader()
    w = p2.writer()
    for t in range(N):
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.a))
        r.release(t)
        s = w.acquire(t)
        tl.store(tle.gpu.local_ptr(s.b), v)
        w.commit(t)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "N": "i32"}, "constexprs": {},
                  "num_warps": 4, "grid": (1,)}
'''


@pytest.mark.parametrize("args", [[], ["-p", "verify-deadlock,verify-protocol"],
                                  ["--gluon"], ["--gluon", "-p", "verify-protocol"],
                                  ["--ptx", "-p", "infer-barriers"], ["-p", "emit-gluon"],
                                  ["-p", "verify-protocol,emit-gluon"]])
def test_a_deadlock_is_never_verified_nor_lowered_whatever_the_pipeline(capsys, tmp_path, args):
    path = tmp_path / "cyc.py"
    path.write_text(CYCLE)
    code, out, err = run(capsys, "-q", *args, path)
    assert code == 1 and out == "" and f"{path}:" in err and "deadlock" in err
    assert "verified for" not in err


def test_a_pipeline_that_cannot_see_the_deadlock_claims_nothing(capsys, tmp_path):
    path = tmp_path / "cyc.py"
    path.write_text(CYCLE)
    code, out, err = run(capsys, "-p", "verify-protocol", path)
    assert code == 0 and verdict_line(out).startswith("not verified (ran verify-protocol;")
    code, out, err = run(capsys, "--format", "json", "-p", "verify-protocol,infer-barriers", path)
    (k,) = json.loads(out)["kernels"]
    assert code == 0 and k["verdict"] is None and k["verified"] is False


def test_the_verdict_attribute_of_a_kernel_read_specialised_names_the_values(capsys):
    """--print-ir of a kernel verified only at its DEFAULT_CONFIG constexprs wrote "every value
    of ROUNDS" into the printed kernel, which stays generic in TOPK and BLOCK_H."""
    code, out, err = run(capsys, "--print-ir", ROOT / "tle_kernels" / "sparse_mla_seesaw.py")
    assert code == 0
    (attr,) = re.findall(r"verdict = ProtocolVerdict\(kind = 'proved', scope = '([^']*)'", out)
    assert attr == ("every value of ROUNDS (every integer ROUNDS), with BLOCK_H = 64, "
                    "TOPK = 2048 (read specialised)")
    assert "('TOPK', '[2048, 2048]')" in out
    code, out, _ = run(capsys, "--print-ir", RING)  # read generically: unchanged
    assert "scope = 'every value of N_TILES (N_TILES >= 0)'" in out
