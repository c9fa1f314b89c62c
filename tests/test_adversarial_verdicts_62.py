"""A sixty-second adversarial round (adversarial round 62): round 61's open item (the printed
protocol of a kernel with a loop that may never end), and what tle-dump says of a few calls and
configurations outside its default run. Each case is a small kernel read by tle-dump's main().

False verdicts, fixed:

- The printed protocol (the default text report, a valid `.pipe` file) of a kernel rejected for a
  loop without pipe events that may never end read back "verified" (exit 0): a run-time step that
  may be 0 (``for i in range(0, 10, N)``, check zero-step) or a counter that may wrap in i32 over
  an argument no event reads (``for i in range(0, M, 3)``, check endless-loop). A `.pipe` file
  holds no loop without events, and these obligations (Program.zero_steps) were not printed
  (round 59's division obligations are, through `def` lines). FIXED: the printer writes each as
  ``endless CHECK "MESSAGE"`` after the kernel's params and definitions (ir/printer.py
  ``_endless``, the message a JSON string); the parser reads it back as the obligation
  (ir/parser.py ``endless``, grammar.lark ``endless_decl``), which verify-protocol refuses at its
  line, as it refuses the .py kernel. Print → parse → print stays the identity; a check other
  than zero-step / endless-loop, or a message that is no JSON string, is refused at its line.
- The same for a proof qualified to element types: round 48's `while` counter loaded through a
  pointer no DEFAULT_CONFIG signature types is bounded (exit 3, "only for cnt_ptr in signed
  integer element types"), and its printed protocol read back "verified for every value of N",
  exit 0 (Program.signed_only was not printed). FIXED: the printer writes each note as
  ``loaded PTR (TYPE, ...) "WHY"`` (ir/printer.py ``_loaded``), which the parser reads back
  (ir/parser.py ``loaded``), so that tle-dump qualifies the `.pipe` file's proof as the .py's
  (cli/kernel_checks.py check_signed_loads).
- ``tl.maximum(t, 0.0, propagate_nan=None)`` (or tl.minimum) of float operands was verified and
  lowered (``gl.maximum(t, 0.0)``), and ``tl.max(t, 0, propagate_nan=None)`` too: Triton 3.6
  refuses both ("Unexpected propagate_nan None"; its tl.max takes no such keyword).
  language/call_args.py DEFAULTS held None as their default. FIXED: tl.max / tl.min have no
  `propagate_nan` (refused as an unknown keyword), and that of tl.maximum / tl.minimum is held to
  tl.PropagateNan.NONE, Triton's default, which the lowering computes.

A misleading message, fixed: ``tl.maximum(x, y, propagate_nan=tl.PropagateNan.ALL)`` (or
``.NONE``) was refused as "`tl.PropagateNan.ALL` is used as a value: call it directly (a verb
passed as a callback or stored hides its events)". The frontend now reads tl.PropagateNan's
members as constants (frontend/build.py ``attribute_of``): NONE, the default, is verified and
lowered (``gl.maximum(t, 0.0)``); ALL is refused at its line as what the lowering does not
compute (it computes NONE: a NaN operand gives the other operand).

A wrong exit status, fixed: a DEFAULT_CONFIG signature that leaves an argument that is no
constexpr untyped (or names one the kernel does not have, or whose "constexprs" does) made
``--gluon`` exit 2 (unusable input) but ``-p emit-gluon``, documented to print the Gluon --gluon
prints, print it, exit 0. Now ``-p emit-gluon`` of a .py file refuses it as --gluon does, with
the same message (cli/dump.py ``_check_emit_signature``, after the default verdict as there); a
.py file without a DEFAULT_CONFIG is still lowered untyped by -p emit-gluon (documented), where
--gluon needs one.

Checked and held (no hole found): `endless` and `loaded` are keywords only where a declaration
starts (a kernel, param or pipe of those names reads as before); a kernel without such a loop or
note prints neither line; a run-time loop without events whose bounds are params (`range(0, N +
4, 3)`) is judged alike in its .py and printed .pipe (the i32 qualification of the verdict, or
unknown from the budget at N near 2^31); tl.minimum of integer operands with propagate_nan=None
is compiled by Triton (now refused: the frontend does not know the operands' type there).

Left open: a .py kernel with a run-time step that may be 0 is rejected even under a --param that
makes the step non-zero (`--param N=3` for `range(0, 10, N)`), where a division obligation is
dropped at such values (conservative: no false "verified"); `tl.maximum(x, y,
tl.PropagateNan.NONE)` given positionally is refused ("at most 2 positional arguments"); the
lowering does not compute tl.PropagateNan.ALL (refused, not supported).
"""

from __future__ import annotations

import json

import pytest

from tle_compiler.ir.parser import parse_module
from tle_compiler.ir.printer import print_module

from .adversarial_support import (dump, expect, get, judged_as_triton, kernel, loop, put,
                                  reader_does, run_dump, write_kernel)

#: the ring's writer and reader over N windows
WRITER = loop("for p in range(N):", put("p"))
READER = loop("for p in range(N):", get("p"))


# ----------------------- A: the printed protocol of a kernel with a loop that may never end

def _with_m(text: str) -> str:
    """The ring with a kernel argument M (i32) handed to the reader, which no event reads."""
    return (text.replace("y_ptr, N, C))]", "y_ptr, N, M, C))]")
            .replace("def consume(kv, y_ptr, N,", "def consume(kv, y_ptr, N, M,")
            .replace("def k(x_ptr, y_ptr, N,", "def k(x_ptr, y_ptr, N, M,")
            .replace('"N": "i32"', '"N": "i32", "M": "i32"'))


ENDLESS = [
    ("zero-step", kernel(WRITER, READER + loop("for i in range(0, 10, N):", "pass\n"))),
    ("zero-step", kernel(WRITER, READER + loop("for i in range(0, 10, N - 3):", "pass\n"))),
    ("endless-loop", _with_m(kernel(WRITER, READER + loop("for i in range(0, M, 3):",
                                                         "pass\n")))),
]
ENDLESS_IDS = ["step-N", "step-N-3", "wraps-M"]


@pytest.mark.parametrize("check, text", ENDLESS, ids=ENDLESS_IDS)
def test_the_printed_protocol_of_a_loop_that_may_never_end_reads_back_rejected(
        tmp_path, capsys, check, text):
    """Before: the .py is rejected ([zero-step] / [endless-loop]) and its printed report, a
    .pipe file, read back "verified for every value of N", exit 0."""
    path = write_kernel(tmp_path, text)
    code, out, err = run_dump(capsys, str(path))
    assert code == 1 and f"[{check}]" in err, err
    assert f"\nendless {check} \"" in out or f"\nendless {check} step(" in out, out
    pipe = tmp_path / "k.pipe"
    pipe.write_text(out)
    code, out2, err2 = run_dump(capsys, "-q", str(pipe))
    assert code == 1 and f"[{check}]" in err2 and ": verified for " not in err2, err2
    assert f"k.pipe:3: error: " in err2, err2  # at the `endless` line
    # the message the .py is refused with, word for word
    assert err.split("error: ", 1)[1].split(" [")[0] in err2, (err, err2)
    # the JSON report says the same
    code, out3, _ = run_dump(capsys, "--format", "json", str(pipe))
    assert code == 1 and json.loads(out3)["kernels"][0]["verdict"] == "rejected"


@pytest.mark.parametrize("check, text", ENDLESS, ids=ENDLESS_IDS)
def test_the_printed_endless_line_round_trips(tmp_path, capsys, check, text):
    """print → parse → print is the identity with the `endless` line, with and without
    locations (a location prints as a comment, which the parser skips)."""
    path = write_kernel(tmp_path, text)
    for flags in ((), ("--no-locations",)):
        _, out, _ = run_dump(capsys, *flags, str(path))
        pipe = out.split("\n# ")[0] if "\n# " in out else out
        module = parse_module(pipe, "k.pipe")
        again = print_module(module)
        assert again == print_module(parse_module(again, "k.pipe"))
        assert again.count("\nendless ") == 1
        assert [x[1] for x in module.kernels[0].zero_steps] == \
            [x[1] for x in parse_module(again, "k.pipe").kernels[0].zero_steps]


def test_a_kernel_without_such_a_loop_prints_no_endless_line(tmp_path, capsys):
    """Held: the ring, and the ring whose data loop steps by a constant, print none."""
    for text in (kernel(WRITER, READER),
                 kernel(WRITER, READER + loop("for i in range(0, 10, 2):", "pass\n"))):
        path = write_kernel(tmp_path, text)
        code, out, err = run_dump(capsys, str(path))
        assert code == 0 and "endless" not in out, err


HAND = """kernel k
param N
{line}

pipe kv capacity=1

partition a default warps=4 {{
  kv.acquire(0)
  kv.commit(0)
}}

partition b warps=4 {{
  kv.wait(0)
  kv.release(0)
}}
"""


@pytest.mark.parametrize("line, code, words", [
    ('endless zero-step "the step of `range(0, 10, N)` may be 0"', 1, "[zero-step]"),
    ('endless endless-loop "a \\"quoted\\" counter \\u00e9 wraps"', 1,
     'a "quoted" counter \u00e9 wraps [endless-loop]'),
    ('endless division-by-zero "x"', 2, "'endless division-by-zero': the check"),
    ('endless zero-step "\\x"', 2, "is no JSON string"),
    ('endless zero-step ""', 2, "needs a message"),
    ('endless zero-step x', 2, "k.pipe:3"),
])
def test_a_hand_written_endless_line(tmp_path, capsys, line, code, words):
    """An `endless` line written by hand is the obligation it states (exit 1 at its line); a
    check the line cannot state, or a message that is no JSON string, is unusable input."""
    pipe = write_kernel(tmp_path, HAND.format(line=line), "k.pipe")
    got, out, err = run_dump(capsys, "-q", str(pipe))
    assert got == code and words in err, err
    if code == 1:
        assert "k.pipe:3: error: " in err, err


def test_the_printed_protocol_of_a_proof_qualified_to_element_types_reads_back_bounded(
        tmp_path, capsys):
    """Before: the .py is bounded (exit 3) and its printed protocol read back verified."""
    from .test_adversarial_verdicts_48 import DOWN_TO_ZERO, ring
    path = write_kernel(tmp_path, ring(DOWN_TO_ZERO))
    code, out, err = run_dump(capsys, "--param", "C=3", str(path))
    assert code == 3 and "only for cnt_ptr in signed integer element types" in err, err
    assert "\nloaded cnt_ptr (int16, int32, int64, int8) \"line " in out, out
    pipe = tmp_path / "k.pipe"
    pipe.write_text(out)
    code, again, err2 = run_dump(capsys, "--no-locations", str(pipe))
    assert code == 3 and "only for cnt_ptr in signed integer element types" in err2, err2
    assert ": verified for " not in err2, err2
    once = print_module(parse_module(again, "k.pipe"))
    assert once == print_module(parse_module(once, "k.pipe")) and "\nloaded cnt_ptr (" in once


@pytest.mark.parametrize("line, words", [
    ('loaded p (int32, uint33) "x"', "the element types are one or more of"),
    ('loaded p () "x"', "the element types are one or more of"),
    ('loaded p (int32) ""', "needs a reason"),
])
def test_a_hand_written_loaded_line_that_says_nothing_is_refused(tmp_path, capsys, line, words):
    pipe = write_kernel(tmp_path, HAND.format(line=line), "k.pipe")
    code, _, err = run_dump(capsys, "-q", str(pipe))
    assert code == 2 and words in err and "k.pipe:3" in err, err


# --------------------------------------------- B: tl.maximum / tl.minimum's propagate_nan

STORE = "tl.store(y_ptr + tl.arange(0, 64), {})"


@pytest.mark.parametrize("call, refused, want", [
    ("tl.maximum(t, 0.0, propagate_nan=None)", True,
     ("rejected", "takes tl.PropagateNan.NONE (its default) or tl.PropagateNan.ALL here")),
    ("tl.minimum(t, 0.0, propagate_nan=None)", True,
     ("rejected", "takes tl.PropagateNan.NONE (its default) or tl.PropagateNan.ALL here")),
    ("tl.maximum(t, 0.0, propagate_nan=tl.PropagateNan.NONE)", False, "verified"),
    ("tl.minimum(t, 0.0, propagate_nan=tl.PropagateNan.NONE)", False, "verified"),
    # (ALL lowered since lowering adversarial round 16: gl.maximum given the same value)
    ("tl.maximum(t, 0.0, propagate_nan=tl.PropagateNan.ALL)", False, "verified"),
    ("tl.minimum(t, 0.0, propagate_nan=tl.PropagateNan.ALL)", False, "verified"),
], ids=["max-None", "min-None", "max-NONE", "min-NONE", "max-ALL", "min-ALL"])
def test_propagate_nan_of_an_elementwise_maximum(tmp_path, capsys, monkeypatch, call, refused,
                                                 want):
    """Before: None was verified (Triton refuses it for floats), NONE and ALL were refused as
    "used as a value: call it directly (a verb passed as a callback ...)"."""
    stmt = STORE.format(call)
    err = judged_as_triton(tmp_path, capsys, monkeypatch, stmt, "pn", refused, want)
    assert "used as a value" not in err, err
    if want == "verified":
        code, out, err = run_dump(capsys, "--gluon", str(tmp_path / "kernel.py"))
        nan = ", propagate_nan=_tle_tl.PropagateNan.ALL" if "ALL" in call else ""
        assert code == 0 and (f"gl.maximum(t, 0.0{nan})" in out
                              or f"gl.minimum(t, 0.0{nan})" in out), err


def test_a_reduction_takes_no_propagate_nan(tmp_path, capsys, monkeypatch):
    """Before: `tl.max(t, 0, propagate_nan=None)` was verified; Triton 3.6's tl.max takes no
    such keyword."""
    judged_as_triton(tmp_path, capsys, monkeypatch,
                     "tl.store(y_ptr, tl.max(t, 0, propagate_nan=None))", "pr", True,
                     ("rejected", "`tl.max` has no keyword `propagate_nan`"))
    code, err = dump(tmp_path, capsys, reader_does("tl.store(y_ptr, tl.min(t, 0))"))
    expect(code, err, "verified")


# ------------------------ C: -p emit-gluon of a DEFAULT_CONFIG that leaves an argument untyped

RING = kernel(WRITER, READER)


@pytest.mark.parametrize("edit, words", [
    (('"N": "i32"', ""), "gives no type for 'N'"),
    (('"N": "i32"', '"N": "i32", "M": "i32"'), "names 'M', which kernel 'k' has no argument of"),
    (('"C": 5', '"C": 5, "D": 1'), "\"constexprs\" names 'D'"),
], ids=["untyped", "unknown-arg", "unknown-constexpr"])
def test_emit_gluon_refuses_the_signature_gluon_refuses(tmp_path, capsys, edit, words):
    """Before: --gluon exit 2, -p emit-gluon printed the Gluon, exit 0."""
    assert edit[0] in RING
    path = write_kernel(tmp_path, RING.replace(*edit))
    for flags in (("--gluon",), ("-p", "emit-gluon"),
                  ("-p", "verify-protocol,verify-deadlock,emit-gluon")):
        code, out, err = run_dump(capsys, *flags, str(path))
        assert code == 2 and words in err, (flags, err)
        assert "gl.warp_specialize" not in out, out
    code, _, err = run_dump(capsys, "-q", str(path))  # the protocol's verdict is unchanged
    assert code == 0, err


def test_emit_gluon_of_a_file_without_a_config_still_lowers_untyped(tmp_path, capsys):
    """Held (documented): without a DEFAULT_CONFIG, --gluon is unusable input and -p emit-gluon
    lowers the kernel untyped; with a full signature both print the same Gluon."""
    bare = RING.split("DEFAULT_CONFIG")[0].replace(", C: tl.constexpr", "").replace(", C))", "))")
    path = write_kernel(tmp_path, bare)
    assert run_dump(capsys, "--gluon", str(path))[0] == 2
    code, out, err = run_dump(capsys, "-p", "emit-gluon", str(path))
    assert code == 0 and "gl.warp_specialize" in out, err
    path = write_kernel(tmp_path, RING)
    code, gluon, _ = run_dump(capsys, "--gluon", str(path))
    code2, emitted, _ = run_dump(capsys, "-p", "emit-gluon", str(path))
    assert code == code2 == 0 and gluon == emitted
