"""A sixty-third adversarial round (adversarial round 63): obligations of run-time arithmetic under
--param (round 62's open items), arguments given by position or keyword, and expressions whose
pipe events or writes the reading dropped. Each case is a small kernel read by tle-dump's main().

False verdicts, fixed:

- ``Q = C // (N * 65536)`` (or ``M = N * 65536; Q = C // M``) under ``--param N=65536`` was
  "verified for every value of Q, N = 65536", exit 0: the division obligation (check
  division-by-zero) was dropped because its divisor, 2^32 over the integers, is no 0, while the
  GPU computes it in i32, where it is 0. FIXED: passes/verify_protocol.py ``_division_defined``
  judges the divisor (and the dividend beside -1) as the GPU computes it, wrapped into i32 /
  i64, and the message names both values; a `.pipe` file's `def` reads back the same.
- ``second(b=r.wait(p), a=w.commit(p))`` (a helper's keyword arguments in another order than its
  parameters) committed before it waited: the arguments were bound in the parameters' order, so
  a ping-pong that deadlocks as Python and Triton 3.6 evaluate it (keywords as written) was
  verified and lowered reordered; ``first(b=w.commit(p), a=r.wait(p))``, a correct one, was
  rejected as a deadlock. FIXED: frontend/build.py ``inline`` binds the positional arguments,
  then the keyword ones as written.
- ``nop(a=w.commit(p))`` of ``def nop(*, a)``: the argument of a keyword-only parameter was not
  evaluated, so a window committed twice (or an extra ``acquire``) was verified, and
  ``nop(a=tl.atomic_add(y_ptr, 1.0))`` lowered without its atomic; Triton 3.6 evaluates it.
  FIXED: such an argument that performs an event or a write is evaluated (``_has_effect``).
- ``x = (w.commit(p), 1)[1]``, ``len((w.commit(p), 1))``, ``len((w.commit(p),) * 0)`` after a
  window's commit were verified: the reading kept one item (or the length) and dropped the
  second commit, from the verdict and the Gluon, where Python and Triton evaluate every item.
  FIXED: refused at the expression (``no_dropped_effects``, check unsupported-expression).
- ``assert tl.atomic_add(y_ptr, 1.0) >= 0.0`` (or ``y_ptr.atomic_add(...)``) and
  ``tl.static_print(tl.atomic_add(y_ptr, 1.0))`` were verified and lowered without the atomic
  (asserts and static prints emit nothing), where Triton 3.6 evaluates the test and the
  arguments (its TTIR has the atomic). FIXED: refused at the write (frontend/build.py
  ``s_Assert``, the call builder), as pipe events there were.
- ``tl.store(value=...r.wait(2 * q)..., pointer=...r.wait(2 * q + 1)...)`` was verified with the
  waits in the order written (Python's and Triton's) and lowered in tl.store's parameter order
  (pointer first): the lowered kernel's events were not the verified ones (deadlock freedom and
  windows happen to agree for consecutive waits a safe statement makes). FIXED: a statement
  with two or more waits / acquires is built in sequential form (``_calls_helper``), each bound
  in Python's order.
- ``if tl:`` (a module, or a function) around statements was read as always true and verified;
  Triton 3.6 refuses it ("not objects of type module"). FIXED: refused at the condition.
- ``tl.reduce_or(x)`` without an axis was verified and lowered as ``gl.reduce_or(x, 0)``; Triton
  3.6 refuses it ("missing 1 required positional argument: 'axis'"). FIXED:
  language/call_args.py REQUIRED holds its axis.

Refusals and messages, fixed:

- round 62's open item: ``range(0, 10, N)`` (a run-time step that may be 0) stayed rejected
  under ``--param N=3``. Now the zero-step obligation carries its step and is dropped where the
  values given fix it to a non-zero i32 (kept at 0, and where it only wraps to 0: ``N * 65536``
  at N = 65536); the printed protocol states it (``endless zero-step step(N - 3) "..."``, ir/
  grammar.lark, parser.py, printer.py) so that the `.pipe` reads back as the .py is judged.
- round 62's open item: ``tl.maximum(x, y, tl.PropagateNan.NONE)`` was refused ("takes at most
  2 positional arguments"), as were ``tl.sum(x, 0, True)``, ``tl.max(x, 0, False, True, False)``
  and ``x.to(tl.int32, None, True)``, which Triton 3.6 compiles. Now a call's parameters past
  those the translator reads may be given by position (call_args.TAIL), read and lowered as the
  call naming them.
- ``for i in range(0, 10, C)`` of a constexpr C (DEFAULT_CONFIG 5) was rejected as "computed at
  run time" (zero-step): the reading now stops (constexpr-operand) and reads the kernel
  specialised to the value it compiles with.
- ``if None:`` around pipe events was refused as a condition "computed through a name bound more
  than once ... which the kernel IR does not fold" (constexpr-if): the kernel IR now decides it
  as Triton does (compile-time false), and only its `else` exists.

Checked and held (no hole found): loops of pipe events over loaded trip counts (non-affine),
early `return`, `break`, `continue` and `tl.range(num_stages=)` in partitions, `tl.static_range`
against `range` trip counts, events under `if` on program ids and on constexprs given by
--param, indices chosen by a conditional expression or `tl.where`, tuples of handles indexed at
run time, helpers with defaults, keywords and late-bound module constants, a partition defined
twice, C's `//` and `%` of kernel-level values, capacity-3 indices past i32, named-barrier hops
through a pipe of capacity 2 and a commit before the release, global-memory hand-offs at
capacity 1 and 2, shared buffers used by two partitions, closed flags read through `~`, `== 0`
and aliases, events inside asserts, prints, `and` / `or`, lambdas, `with`, walrus, starred
calls, `is None` and attribute reads of an event's result, evaluation order of positional helper
arguments, the `.pipe` `readback` / `maywrite` / `tma` forms written by hand, several kernels in
one file under --kernel / --gluon / -p emit-gluon, and unary math, casts, reshapes, transposes
and reductions against Triton 3.6's own refusals.

Left open: a derived value no pipe event reads (``M = N // 2`` used only as a data loop's
step) is no param --param fixes, so its zero-step obligation stays under ``--param N=3``
(conservative); ``--param C=0`` of a constexpr step is refused where the kernel is read, where
Triton 3.6 compiles the loop away; Triton's shared-memory scratch (layout conversions,
reductions) is not counted in the 227 KB budget (documented), so a kernel whose pipes fill it
may verify and then fail at launch; ``x.to(tl.float32, fp_downcast_rounding='rtz')`` of an
fp32 `x` (a no-op Triton compiles) is refused by the lowering; ``p if None else q`` is refused
by the lowering as "a tensor condition". (Since fixed: the rounding mode of a conversion to
the type a value has, tests/test_rounding_same_type.py; ``p if None else q`` and ``not None``,
tests/test_none_conditions.py, with a name bound to None as the test.)
"""

from __future__ import annotations

import pytest

from tle_compiler.ir.parser import parse_module
from tle_compiler.ir.printer import print_module

from .adversarial_oracles import triton_ttir
from .adversarial_support import (FILL, HEAD, TRITON_JIT, dump, expect, get, judged_as_triton,
                                  kernel, loop, put, reader_does, run_dump, write_kernel)
from .test_adversarial_verdicts_62 import HAND  # the one-pipe .pipe kernel with a line of its own

#: the ring's writer and reader over N windows
WRITER = loop("for p in range(N):", put("p"))
READER = loop("for p in range(N):", get("p"))


def _over_q(text: str) -> str:
    """The ring whose partitions are handed the kernel-level value Q for N."""
    return (text.replace("(kv, x_ptr, N, C)", "(kv, x_ptr, Q, C)")
            .replace("(kv, y_ptr, N, C)", "(kv, y_ptr, Q, C)"))


# ------------------------- A: a run-time divisor that --param fixes to 0 as the GPU computes it

#: `Q = C // (N * 65536)`: at N = 65536 the divisor is 2^32 over the integers, 0 in i32
WRAPPED_DIVISOR = [
    _over_q(kernel(WRITER, READER, body="Q = C // (N * 65536)\n")),
    _over_q(kernel(WRITER, READER, body="M = N * 65536\nQ = C // M\n")),
]


@pytest.mark.parametrize("text", WRAPPED_DIVISOR, ids=["inline", "named"])
def test_a_divisor_that_wraps_to_zero_at_the_values_given_is_refused(tmp_path, capsys, text):
    """Before: `--param N=65536` gave "verified for every value of Q, N = 65536", exit 0: the
    division obligation was dropped because 65536 * 65536 is not 0 over the integers, while the
    GPU computes the divisor in i32, where it is 0 (C's division by zero, undefined)."""
    code, err = dump(tmp_path, capsys, text, "--param", "N=65536")
    expect(code, err, ("rejected", "[division-by-zero]",
                       "is 4294967296, which the GPU computes in i32 as 0"))
    # the printed protocol (its `def` line) reads back the same
    path = tmp_path / "kernel.py"
    _, out, _ = run_dump(capsys, "--param", "N=65536", str(path))
    pipe = write_kernel(tmp_path, out, "k.pipe")
    code, _, err = run_dump(capsys, "-q", "--param", "N=65536", str(pipe))
    assert code == 1 and "[division-by-zero]" in err and ": verified for " not in err, err


@pytest.mark.parametrize("text", WRAPPED_DIVISOR, ids=["inline", "named"])
def test_a_divisor_fixed_inside_i32_still_drops_the_obligation(tmp_path, capsys, text):
    """Held: at N = 1 (divisor 65536) the division is defined and the ring verified; without a
    --param the divisor may be 0 and the kernel is rejected."""
    code, err = dump(tmp_path, capsys, text, "--param", "N=1")
    expect(code, err, "verified")
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, ("rejected", "[division-by-zero]"))
    assert "which the GPU computes" not in err, err


def test_a_divisor_that_wraps_to_minus_one_keeps_the_obligation(tmp_path, capsys):
    """`C // (N * 65536 - 1)` at N = 65536 is C // -1 on the GPU, undefined at C = -2^31."""
    text = _over_q(kernel(WRITER, READER, body="Q = C // (N * 65536 - 1)\n"))
    code, err = dump(tmp_path, capsys, text, "--param", "N=65536")
    expect(code, err, ("rejected", "[division-by-zero]", "in i32 as -1"))


# ---------------------------- B: a run-time step that --param fixes (round 62's open item)

def _stepped(step: str) -> str:
    return kernel(WRITER, READER + loop(f"for i in range(0, 10, {step}):", "pass\n"))


@pytest.mark.parametrize("step, value, want", [
    ("N", "3", "verified"),
    ("N", "1", "verified"),
    ("N", "0", ("rejected", "[zero-step]")),
    ("N - 3", "4", "verified"),
    ("N - 3", "3", ("rejected", "[zero-step]")),
    ("N * 65536", "1", "verified"),
    ("N * 65536", "65536", ("rejected", "[zero-step]")),  # 2^32: 0 in i32
])
def test_a_run_time_step_fixed_by_a_param(tmp_path, capsys, step, value, want):
    """Before: `range(0, 10, N)` was rejected ([zero-step]) under --param N=3, where its step
    is 3 (round 62's open item); now the obligation is dropped where the values given fix the
    step to a non-zero i32, and kept where it is 0 (in i32: 65536 * 65536 wraps to 0)."""
    code, err = dump(tmp_path, capsys, _stepped(step), "--param", f"N={value}")
    expect(code, err, want)
    if want == "verified":
        assert "for N = " + value in err, err


def test_a_step_no_param_fixes_stays_rejected(tmp_path, capsys):
    """Held: a step that is an enclosing loop's variable (`range(0, 10, q)` in `for q in
    range(2)`, 0 at q = 0) stays rejected whatever --param gives; so does one no --param
    names (the default run)."""
    text = kernel(WRITER, READER + loop("for q in range(2):",
                                        loop("for i in range(0, 10, q):", "pass\n")))
    code, err = dump(tmp_path, capsys, text, "--param", "N=4")
    expect(code, err, ("rejected", "[zero-step]"))
    code, err = dump(tmp_path, capsys, _stepped("N"))
    expect(code, err, ("rejected", "[zero-step]"))


@pytest.mark.parametrize("step, value, code", [
    ("N", "3", 0), ("N", "0", 1), ("N - 3", "3", 1), ("N - 3", "4", 0),
    ("N * 65536", "65536", 1), ("N * 65536", "1", 0),
])
def test_the_printed_step_reads_back_with_the_same_verdict(tmp_path, capsys, step, value, code):
    """The report writes the step (`endless zero-step step(N - 3) "..."`), so that its `.pipe`
    reads back as the .py is judged, with and without the --param; print → parse → print is the
    identity."""
    path = write_kernel(tmp_path, _stepped(step))
    _, out, _ = run_dump(capsys, str(path))
    assert "\nendless zero-step step(" in out, out
    pipe = write_kernel(tmp_path, out, "k.pipe")
    assert run_dump(capsys, "-q", str(pipe))[0] == 1
    got, _, err = run_dump(capsys, "-q", "--param", f"N={value}", str(pipe))
    assert got == code, err
    got, _, err = run_dump(capsys, "-q", "--param", f"N={value}", str(path))
    assert got == code, err
    module = parse_module(out, "k.pipe")
    again = print_module(module)
    assert again == print_module(parse_module(again, "k.pipe"))
    assert "endless zero-step step(" in again


def test_a_step_of_no_declared_value_is_printed_without_it(tmp_path, capsys):
    """A step of an enclosing loop's variable names nothing a `.pipe` declares: the line states
    no step (and reads back rejected)."""
    text = kernel(WRITER, READER + loop("for q in range(2):",
                                        loop("for i in range(0, 10, q):", "pass\n")))
    path = write_kernel(tmp_path, text)
    _, out, _ = run_dump(capsys, str(path))
    assert "\nendless zero-step \"" in out and "step(" not in out, out


@pytest.mark.parametrize("line, params, code, words", [
    ('endless zero-step step(N) "s"', ("--param", "N=2"), 0, "verified for N = 2"),
    ('endless zero-step step(N) "s"', ("--param", "N=0"), 1, "s [zero-step]"),
    ('endless zero-step step(N) "s"', (), 1, "s [zero-step]"),
    ('endless zero-step step(2 * N - 4) "s"', ("--param", "N=2"), 1, "s [zero-step]"),
    ('endless zero-step step(2 * N - 4) "s"', ("--param", "N=3"), 0, "verified for N = 3"),
    ('endless endless-loop step(N) "s"', (), 2, "'endless endless-loop' states no step"),
    ('endless zero-step step(M) "s"', (), 2, "names 'M', which is no param"),
    ('endless zero-step step(N < 2) "s"', (), 2, "expected an integer expression"),
])
def test_a_hand_written_endless_step(tmp_path, capsys, line, params, code, words):
    """A stated step is the obligation's: dropped where --param fixes it to a non-zero i32,
    refused at its line otherwise; a step of another check, of an undeclared name or that is
    no integer expression is unusable input (exit 2) at its line."""
    pipe = write_kernel(tmp_path, HAND.format(line=line), "k.pipe")
    got, _, err = run_dump(capsys, "-q", *params, str(pipe))
    assert got == code and words in err, err
    if code == 2:
        assert "k.pipe:3" in err, err


# ------------------------ C: parameters given by position past those the translator reads

POSITIONAL = [
    # (the call by position, the same call by keyword)
    ("tl.store(y_ptr + tl.arange(0, 64), tl.maximum(t, 0.0, tl.PropagateNan.NONE))",
     "tl.store(y_ptr + tl.arange(0, 64), tl.maximum(t, 0.0))"),
    ("tl.store(y_ptr + tl.arange(0, 64), tl.minimum(t, 0.0, tl.PropagateNan.NONE))",
     "tl.store(y_ptr + tl.arange(0, 64), tl.minimum(t, 0.0))"),
    ("tl.store(y_ptr, tl.sum(t, 0, True).reshape([]))",
     "tl.store(y_ptr, tl.sum(t, 0, keep_dims=True).reshape([]))"),
    ("tl.store(y_ptr, tl.sum(t, 0, False, tl.float32))",
     "tl.store(y_ptr, tl.sum(t, 0, dtype=tl.float32))"),
    ("tl.store(y_ptr, t.sum(0, False))", "tl.store(y_ptr, tl.sum(t, 0))"),
    ("tl.store(y_ptr, tl.max(t, 0, False, True, False))", "tl.store(y_ptr, tl.max(t, 0))"),
    ("tl.store(y_ptr, tl.xor_sum(t.to(tl.int32), 0, False).to(tl.float32))",
     "tl.store(y_ptr, tl.xor_sum(t.to(tl.int32), 0).to(tl.float32))"),
    ("tl.store(y_ptr, tl.reduce_or(t.to(tl.int32), 0, True).reshape([]).to(tl.float32))",
     "tl.store(y_ptr, tl.reduce_or(t.to(tl.int32), 0, keep_dims=True).reshape([])"
     ".to(tl.float32))"),
    ("tl.store(y_ptr + tl.arange(0, 64), t.to(tl.bfloat16, 'rtz').to(tl.float32))",
     "tl.store(y_ptr + tl.arange(0, 64), t.to(tl.bfloat16, fp_downcast_rounding='rtz')"
     ".to(tl.float32))"),
    ("tl.store(y_ptr + tl.arange(0, 64), t.to(tl.int32, None, True).to(tl.float32))",
     "tl.store(y_ptr + tl.arange(0, 64), t.to(tl.int32, fp_downcast_rounding=None, "
     "bitcast=True).to(tl.float32))"),
]
POSITIONAL_IDS = ["maximum-NONE", "minimum-NONE", "sum-keep_dims", "sum-dtype", "method-sum",
                  "max-defaults", "xor_sum", "reduce_or-keep_dims", "to-rounding", "to-bitcast"]


@pytest.mark.parametrize("positional, keyword", POSITIONAL, ids=POSITIONAL_IDS)
def test_a_parameter_given_by_position_is_read_as_its_keyword(tmp_path, capsys, monkeypatch,
                                                              positional, keyword):
    """Before: each was refused ("`tl.maximum` takes at most 2 positional arguments here",
    round 62's open item for propagate_nan), though Triton 3.6 compiles it; now it is verified
    and lowered to the Gluon of the call that names the parameter (a bitcast stays one)."""
    err = judged_as_triton(tmp_path, capsys, monkeypatch, positional, "pos", False,
                           "verified")
    assert "positional arguments" not in err, err
    code, by_position, err = run_dump(capsys, "--gluon", str(tmp_path / "kernel.py"))
    assert code == 0, err
    write_kernel(tmp_path, reader_does(keyword))
    code, by_keyword, err = run_dump(capsys, "--gluon", str(tmp_path / "kernel.py"))
    assert code == 0 and by_position == by_keyword, err
    if "bitcast" in keyword:
        assert "bitcast=True" in by_position


@pytest.mark.parametrize("stmt, words", [
    # (ALL by position is lowered since lowering adversarial round 16; None is refused)
    ("tl.store(y_ptr + tl.arange(0, 64), tl.maximum(t, 0.0, None))",
     "takes tl.PropagateNan.NONE (its default) or tl.PropagateNan.ALL here"),
    ("tl.store(y_ptr, tl.max(t, 0, False, False, False))",
     "`tl.max(..., return_indices_tie_break_left=...)` is not supported"),
    ("tl.store(y_ptr + tl.arange(0, 64), tl.maximum(t, 0.0, tl.PropagateNan.NONE, 1))",
     "`tl.maximum` takes at most 3 positional arguments here"),
    ("tl.store(y_ptr + tl.arange(0, 64), tl.maximum(t, 0.0, tl.PropagateNan.NONE, "
     "propagate_nan=tl.PropagateNan.NONE))", "`propagate_nan` given twice"),
], ids=["ALL", "tie-break", "too-many", "twice"])
def test_what_a_positional_parameter_still_cannot_say(tmp_path, capsys, stmt, words):
    """Held: by position as by keyword, a value the lowering does not compute is refused at
    the call, and so is one parameter too many or one given twice (Triton refuses both)."""
    code, err = dump(tmp_path, capsys, reader_does(stmt))
    expect(code, err, ("rejected", words))


def test_reduce_or_without_an_axis_is_refused(tmp_path, capsys, monkeypatch):
    """Before: `tl.reduce_or(x)` was verified and lowered as `gl.reduce_or(x, 0)`; Triton 3.6
    refuses it ("reduce_or() missing 1 required positional argument: 'axis'")."""
    judged_as_triton(tmp_path, capsys, monkeypatch,
                     "tl.store(y_ptr, tl.reduce_or(t.to(tl.int32)).to(tl.float32))", "ro", True,
                     ("rejected", "`tl.reduce_or`: `axis` is missing"))
    code, err = dump(tmp_path, capsys, reader_does(
        "tl.store(y_ptr, t.to(tl.int32).reduce_or().to(tl.float32))"))
    expect(code, err, ("rejected", "`axis` is missing"))
    code, err = dump(tmp_path, capsys, reader_does(
        "tl.store(y_ptr, tl.reduce_or(t.to(tl.int32), 0).to(tl.float32))"))
    expect(code, err, "verified")


# -------------------------------------------------- D: a data loop stepping by a constexpr

def _constexpr_stepped(step: str, head: str = "range(0, 10, {})") -> str:
    return kernel(WRITER, READER + loop(f"for i in {head.format(step)}:",
                                        "tl.store(y_ptr, 1.0)\n"))


@pytest.mark.parametrize("text", [_constexpr_stepped("C"), _constexpr_stepped("C - 3"),
                                  _constexpr_stepped("C", "range(0, N, {})")],
                         ids=["C", "C-3", "N-by-C"])
def test_a_constexpr_step_is_read_at_the_value_the_kernel_compiles_with(tmp_path, capsys, text):
    """Before: `for i in range(0, 10, C)` with DEFAULT_CONFIG's C = 5 was rejected, "the step of
    `range(0, 10, C)` is computed at run time (`C`, which may be 0 ...)" [zero-step]: a
    constexpr is no run-time value, and Triton builds the loop with the compiled number. Now
    the kernel is read specialised to the value it compiles with, as for other constexpr
    operands."""
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, "verified")
    assert "with C = 5 (read specialised)" in err and "computed at run time" not in err, err
    code, err = dump(tmp_path, capsys, text, "--param", "C=4")
    expect(code, err, "verified")
    assert "with C = 4 (read specialised)" in err, err


def test_a_constexpr_step_without_a_value_or_of_zero_is_refused(tmp_path, capsys):
    """Held / message: without a value the reading says which constexpr to give (exit 1); a
    value that makes the step 0 is refused where the kernel is read."""
    text = _constexpr_stepped("C")
    code, err = dump(tmp_path, capsys, text[:text.index("DEFAULT_CONFIG")])
    expect(code, err, ("rejected", "[constexpr-operand]",
                       "computed from the constexpr C, which the kernel is read without a value"))
    path = write_kernel(tmp_path, text)
    code, _, err = run_dump(capsys, "-q", "--param", "C=0", str(path))
    assert code == 2 and "must be a non-zero integer, got 0" in err, err
    code, err = dump(tmp_path, capsys, _constexpr_stepped("C - 5"))
    expect(code, err, ("rejected", "must be a non-zero integer, got 0"))


def test_a_step_of_a_constexpr_and_a_run_time_value_keeps_the_obligation(tmp_path, capsys):
    """Held: `C + N` is computed at run time (N is an argument) and may be 0 where C is read
    generic (every integer): still [zero-step]; `--param N=3` does not fix C, so the
    obligation stays."""
    text = _constexpr_stepped("C + N")
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, ("rejected", "[zero-step]", "computed at run time"))
    code, err = dump(tmp_path, capsys, text, "--param", "N=3")
    expect(code, err, ("rejected", "[zero-step]"))


# ------------------------------- E: pipe events and writes in a helper call's keyword arguments

#: two partitions exchanging over `xp` (a → b) and `yp` (b → a); a's window of yp is STMT's
PING_PONG = HEAD + '''
@tle.jit
def k(x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    xp = tle.pipe(capacity=1, tile=tle.gpu.alloc([1, 64], tl.float32))
    yp = tle.pipe(capacity=1, tile=tle.gpu.alloc([1, 64], tl.float32))
    tle.gpu.warp_specialize([(a, (xp, yp, x_ptr, N)), (b, (xp, yp, y_ptr, N))], [4], [232])


def a(xp, yp, x_ptr, N):
    wx = xp.writer()
    ry = yp.reader()
    for p in range(N):
        s = wx.acquire(p)
        tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + tl.arange(0, 64)))
        STMT
        tl.store(x_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))
        ry.release(p)


def b(xp, yp, y_ptr, N):
    rx = xp.reader()
    wy = yp.writer()
    for p in range(N):
        res = rx.wait(p)
        t = tl.load(tle.gpu.local_ptr(res.slot.tile))
        rx.release(p)
        s = wy.acquire(p)
        tl.store(tle.gpu.local_ptr(s.tile), t)
        wy.commit(p)


def first(a, b):
    return a


def second(a, b):
    return b

DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"}}
'''


@pytest.mark.parametrize("stmt, want", [
    # the wait before the commit (as written): each partition waits for the other, a deadlock
    ("res = second(b=ry.wait(p), a=wx.commit(p))", ("rejected", "[deadlock]")),
    ("res = first(ry.wait(p), wx.commit(p))", ("rejected", "[deadlock]")),
    # the commit first: a ping-pong
    ("res = first(b=wx.commit(p), a=ry.wait(p))", "verified"),
    ("res = second(wx.commit(p), ry.wait(p))", "verified"),
], ids=["kw-wait-first", "pos-wait-first", "kw-commit-first", "pos-commit-first"])
def test_keyword_arguments_run_their_events_in_the_order_written(tmp_path, capsys, stmt, want):
    """Before: a helper's arguments were bound in the order of its parameters, so
    `second(b=ry.wait(p), a=wx.commit(p))` committed before it waited (verified, and lowered
    so), where Python and Triton 3.6 (visit_Call builds the keywords as written) wait first
    and deadlock; `first(b=wx.commit(p), a=ry.wait(p))`, a correct ping-pong, was rejected as
    a deadlock."""
    code, err = dump(tmp_path, capsys, PING_PONG.replace("STMT", stmt))
    expect(code, err, want)
    if want == "verified":
        _, gluon, err = run_dump(capsys, "--gluon", str(tmp_path / "kernel.py"))
        a = gluon.split("def a(", 1)[1].split("def b(", 1)[0]
        assert a.index("mbarrier.arrive(xp_full0") < a.index("mbarrier.wait(yp_full0"), a


KW_ONLY = "\n\ndef nop(*, a):\n    pass\n\n\ndef nop2(x=0, *, b):\n    pass\n"
READ_RING = loop("for p in range(N):", get("p"))


@pytest.mark.parametrize("writer, check", [
    (put("p") + "nop(a=w.commit(p))\n", "[commit-without-acquire]"),
    (put("p") + "nop2(b=w.acquire(p + 2))\n", "[uncommitted-acquire]"),
], ids=["second-commit", "extra-acquire"])
def test_an_event_passed_to_a_keyword_only_parameter_runs(tmp_path, capsys, writer, check):
    """Before: `nop(a=w.commit(p))` of `def nop(*, a)` was dropped (the parameter is never
    bound, and the argument was not evaluated): a window committed twice was verified. Triton
    3.6 evaluates the argument (its kws), so the event runs."""
    code, err = dump(tmp_path, capsys, kernel(loop("for p in range(N):", writer), READ_RING,
                                              extra=KW_ONLY))
    expect(code, err, ("rejected", check))


def test_the_commit_passed_to_a_keyword_only_parameter_is_the_windows(tmp_path, capsys):
    """The commit given only there closes the window: verified, and lowered with it."""
    writer = loop("for p in range(N):", f"s = w.acquire(p)\n{FILL}\nnop(a=w.commit(p))\n")
    code, err = dump(tmp_path, capsys, kernel(writer, READ_RING, extra=KW_ONLY))
    expect(code, err, "verified")
    _, gluon, _ = run_dump(capsys, "--gluon", str(tmp_path / "kernel.py"))
    assert "mbarrier.arrive(kv_full0" in gluon


def test_an_atomic_passed_to_a_keyword_only_parameter_is_lowered(tmp_path, capsys, monkeypatch):
    """Before: `nop(a=tl.atomic_add(y_ptr, 1.0))` was verified and lowered without the atomic;
    Triton 3.6 compiles it with it (tt.atomic_rmw)."""
    source = (TRITON_JIT + "def nop(*, a):\n    pass\n\n\n" + TRITON_JIT
              + "def k(x_ptr, N, C: tl.constexpr):\n    nop(a=tl.atomic_add(x_ptr, 1.0))\n")
    ttir = triton_ttir(tmp_path, monkeypatch, source, "kwat")
    assert "tt.atomic_rmw" in ttir
    text = reader_does("nop(a=tl.atomic_add(y_ptr, 1.0))").replace(
        "DEFAULT_CONFIG", KW_ONLY.lstrip("\n") + "\n\nDEFAULT_CONFIG")
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, "verified")
    _, gluon, _ = run_dump(capsys, "--gluon", str(tmp_path / "kernel.py"))
    assert "gl.atomic_add(y_ptr, 1.0)" in gluon, gluon


# ------------------------- F: a tuple the kernel spells out, of which the reading keeps one item

WINDOW = f"s = w.acquire(p)\n{FILL}\n"


@pytest.mark.parametrize("stmt", [
    "x = (w.commit(p), 1)[1]",
    "(w.commit(p), 1)[1]",
    "x = ((w.commit(p), 1), 2)[1]",
    "x = len((w.commit(p), 1))",
    "x = (tl.atomic_add(x_ptr, 1.0), 1)[1]",
    "x = len((w.commit(p),) * 0)",
    "x = len((1,) + (w.commit(p),))",
], ids=["subscript", "statement", "nested", "len", "atomic", "len-repeated", "len-sum"])
def test_an_effect_in_a_tuple_item_no_one_reads_is_refused(tmp_path, capsys, stmt):
    """Before: after the window's own commit, `x = (w.commit(p), 1)[1]` was verified (exit 0):
    the reading kept item 1 and dropped the second commit (from the Gluon too), which Python
    and Triton 3.6 evaluate with the tuple. Now such an item is refused at the expression."""
    writer = loop("for p in range(N):", WINDOW + "w.commit(p)\n" + stmt + "\n")
    code, err = dump(tmp_path, capsys, kernel(writer, READ_RING))
    expect(code, err, ("rejected", "[unsupported-expression]", "the reading would drop it"))


@pytest.mark.parametrize("stmt", ["s = (w.acquire(p), 1)[0]", "s = (1, w.acquire(p))[-1]",
                                  "s = w.acquire(p)\nx = len((p, s))"],
                         ids=["kept-item", "negative-index", "len-of-names"])
def test_a_tuple_whose_dropped_items_do_nothing_is_read_as_before(tmp_path, capsys, stmt):
    """Held: the item the subscript keeps may perform the event; items without effects may be
    dropped."""
    writer = loop("for p in range(N):", f"{stmt}\n{FILL}\nw.commit(p)\n")
    code, err = dump(tmp_path, capsys, kernel(writer, READ_RING))
    expect(code, err, "verified")


# ------------------------------------------------------------------- G: probes that held

def _q_reader(text: str) -> str:
    """The ring whose reader is handed the kernel-level value M for N."""
    return (text.replace("(consume, (kv, y_ptr, N, C))", "(consume, (kv, y_ptr, M, C))")
            .replace("def consume(kv, y_ptr, N,", "def consume(kv, y_ptr, M,"))


HELD = {
    # a reader that skips one index past the cutoff's small values
    "skip-200": (kernel(WRITER, loop("for p in range(N):", loop("if p != 200:", get("p")))),
                 ("rejected", "[unconsumed]")),
    # events under `if` on two program ids, the writer's and the reader's apart
    "program-ids": (kernel(loop("for p in range(N):", loop("if tl.program_id(0) == 0:",
                                                            put("p"))),
                           loop("for p in range(N):", loop("if tl.program_id(1) == 0:",
                                                           get("p")))),
                    ("rejected", "[unconsumed]")),
    # tl.static_range of 4 against range(3)
    "static-range": (kernel(loop("for p in tl.static_range(4):", put("p")),
                            loop("for p in range(3):", get("p"))),
                     ("rejected", "[unconsumed]")),
    # the partition Python calls is the last def of its name
    "partition-defined-twice": (kernel(WRITER, READER, extra='''
def consume(kv, y_ptr, N, C: tl.constexpr):
    r = kv.reader()
    for p in range(N):
        res = r.wait(p + 1)
        r.release(p + 1)
'''), ("rejected", "[wait-never-committed]")),
    # C's truncating // of a kernel-level value (N = 0: (0 - 1) // 2 is 0 on the GPU)
    "c-division": (_q_reader(kernel(loop("for p in range((N + 1) // 2):", put("p")),
                                    loop("for p in range(M + 1):", get("p")),
                                    body="M = (N - 1) // 2\n")),
                   ("rejected", "[wait-never-committed]", "N=0")),
    # an event in an assert, which the lowering does not run
    "event-in-assert": (kernel(loop("for p in range(N):", "assert w.acquire(p) is not None\n"
                                    + put("p")), READER),
                        ("rejected", "inside an `assert`")),
    # a closed index read only where the flag, negated by `~`, says it is open
    "closed-flag-inverted": (kernel(WRITER + "w.close(N)\n", READER + "res = r.wait(N)\n"
                                    + loop("if ~res.is_closed:",
                                           "tl.store(y_ptr + tl.arange(0, 64), "
                                           "tl.load(tle.gpu.local_ptr(res.slot.tile)))\n")
                                    + "r.release(N)\n"), "verified"),
    "closed-flag-read-when-closed": (kernel(WRITER + "w.close(N)\n", READER
                                            + "res = r.wait(N)\n" + loop(
                                                "if res.is_closed:",
                                                "tl.store(y_ptr + tl.arange(0, 64), "
                                                "tl.load(tle.gpu.local_ptr(res.slot.tile)))\n")
                                            + "r.release(N)\n"),
                                     ("rejected", "[unwritten-field]")),
}


@pytest.mark.parametrize("name", sorted(HELD))
def test_held(tmp_path, capsys, name):
    text, want = HELD[name]
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, want)


def test_held_an_event_in_a_tuple_statement_runs(tmp_path, capsys):
    """Held: `(w.commit(p), 1)` as a statement and `_, s = 1, w.acquire(p)` run their events
    in order (verified, and lowered with them)."""
    writer = loop("for p in range(N):", f"_, s = 1, w.acquire(p)\n{FILL}\n(w.commit(p), 1)\n")
    code, err = dump(tmp_path, capsys, kernel(writer, READ_RING))
    expect(code, err, "verified")
    _, gluon, _ = run_dump(capsys, "--gluon", str(tmp_path / "kernel.py"))
    produce = gluon.split("def produce(", 1)[1].split("def consume(", 1)[0]
    assert produce.index("mbarrier.wait(kv_empty0") < produce.index("mbarrier.arrive(kv_full0")


def test_held_gluon_under_a_param_judges_every_value(tmp_path, capsys):
    """Held: `--param N=4` verifies a ring wrong at N = 5 for N = 4, but `--gluon` lowers a
    kernel for every N, so it refuses it (exit 1)."""
    text = kernel(WRITER, loop("for p in range(N):", loop("if N != 5:", get("p"))))
    code, err = dump(tmp_path, capsys, text, "--param", "N=4")
    expect(code, err, "verified")
    code, out, err = run_dump(capsys, "-q", "--param", "N=4", "--gluon",
                              str(tmp_path / "kernel.py"))
    assert code == 1 and "nothing is lowered" in err and "gl.warp_specialize" not in out, err


NAMED_CAPACITY_2 = """kernel hop
param N
pipe x capacity=1 named_barrier fields=(m)
pipe y capacity=2 fields=(v)
partition w default warps=4 {
  for p in range(N) {
    y.acquire(p)
    y.write(p, v)
    y.commit(p)
    x.acquire(p)
    x.write(p, m)
    x.commit(p)
  }
}
partition r warps=4 {
  for p in range(N) {
    y.wait(p)
    x.wait(p)
    x.read(p, m)
    x.release(p)
    y.read(p, v)
    y.release(p)
  }
}
"""


def test_held_a_named_hop_through_a_pipe_of_capacity_two(tmp_path, capsys):
    """Held: the release of y(p) enables y's acquire two uses later, not the acquire of x(p + 1)
    that follows y(p + 1): rejected (named-release); at capacity 1 it is verified."""
    pipe = write_kernel(tmp_path, NAMED_CAPACITY_2, "k.pipe")
    code, _, err = run_dump(capsys, "-q", str(pipe))
    assert code == 1 and "[named-release]" in err, err
    pipe = write_kernel(tmp_path, NAMED_CAPACITY_2.replace("capacity=2", "capacity=1"), "k.pipe")
    code, _, err = run_dump(capsys, "-q", str(pipe))
    assert code == 0, err


# ------------------------------ H: writes in an assert's test or a tl.static_print's arguments

@pytest.mark.parametrize("stmt, words", [
    ("assert tl.atomic_add(y_ptr, 1.0) >= 0.0", "inside an `assert`"),
    ("assert y_ptr.atomic_add(1.0) >= 0.0, 'negative'", "inside an `assert`"),
    ("tl.static_print(tl.atomic_add(y_ptr, 1.0))", "tl.static_print is lowered to nothing"),
], ids=["assert", "assert-member", "static_print"])
def test_a_write_triton_evaluates_where_nothing_is_lowered_is_refused(tmp_path, capsys,
                                                                       monkeypatch, stmt, words):
    """Before: verified, and lowered without the atomic (asserts and tl.static_print emit
    nothing); Triton 3.6 evaluates the test (visit_Assert, debug or not) and static_print's
    arguments, so its TTIR has the atomic. Pipe events there were refused already."""
    source = (TRITON_JIT + "def k(x_ptr, N, C: tl.constexpr):\n    y_ptr = x_ptr\n    "
              + stmt + "\n")
    assert "tt.atomic_rmw" in triton_ttir(tmp_path, monkeypatch, source, "wr")
    code, err = dump(tmp_path, capsys, reader_does(stmt))
    expect(code, err, ("rejected", words))


@pytest.mark.parametrize("stmt", ["assert N >= 0", "tl.static_print('n', N)",
                                  "tl.device_assert(tl.atomic_add(y_ptr, 1.0) >= 0.0)"],
                         ids=["assert", "static_print", "device_assert"])
def test_asserts_and_prints_without_dropped_writes_are_read_as_before(tmp_path, capsys, stmt):
    """Held: an assert or a static print that writes nothing is verified; tl.device_assert is
    lowered, its atomic with it."""
    code, err = dump(tmp_path, capsys, reader_does(stmt))
    expect(code, err, "verified")
    if "atomic" in stmt:
        _, gluon, _ = run_dump(capsys, "--gluon", str(tmp_path / "kernel.py"))
        assert "gl.atomic_add(y_ptr, 1.0)" in gluon


# ----------------------------------------------------- I: `if` on None, a module or a function

def test_an_if_on_none_takes_its_else_branch(tmp_path, capsys, monkeypatch):
    """Before: `if None:` around pipe events was refused as a condition "computed through a name
    bound more than once ... which the kernel IR does not fold" (constexpr-if): the protocol view
    read None as false, the kernel IR kept the `if`. Triton 3.6 takes a NoneType condition as a
    compile-time false one (its TTIR has no store of the branch)."""
    source = (TRITON_JIT + "def k(x_ptr, N, C: tl.constexpr):\n    if None:\n"
              "        tl.store(x_ptr, 1.0)\n    else:\n        tl.store(x_ptr + 1, 2.0)\n")
    assert triton_ttir(tmp_path, monkeypatch, source, "ifnone").count("tt.store") == 1
    extra = loop("if None:", "s = w.acquire(N)\nw.commit(N)\n")
    code, err = dump(tmp_path, capsys, kernel(WRITER + extra, READER))
    expect(code, err, "verified")
    writer = loop("if None:", "s = w.acquire(0)\nw.commit(0)\n") + loop("else:", WRITER)
    code, err = dump(tmp_path, capsys, kernel(writer, READER))
    expect(code, err, "verified")
    _, gluon, _ = run_dump(capsys, "--gluon", str(tmp_path / "kernel.py"))
    assert "if None" not in gluon and gluon.count("mbarrier.arrive(kv_full0") == 1, gluon


@pytest.mark.parametrize("cond, kind", [("tl", "module"), ("hh", "function")])
def test_an_if_on_a_module_or_a_function_is_refused(tmp_path, capsys, monkeypatch, cond, kind):
    """Before: `if tl:` was verified (the branch read as always taken); Triton 3.6 refuses it
    ("`if` conditionals can only accept values of type {NoneType, bool, int}, not objects of
    type module")."""
    source = TRITON_JIT + "def k(x_ptr, N, C: tl.constexpr):\n    if tl:\n        pass\n"
    from .adversarial_oracles import triton_compile_error
    assert "not objects of type module" in str(triton_compile_error(tmp_path, monkeypatch,
                                                                    source, "iftl"))
    text = kernel(WRITER + loop(f"if {cond}:", "pass\n"), READER,
                  extra="\n\ndef hh():\n    pass\n")
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, ("rejected", f"an `if` on the {kind} `{cond}`"))


# ------------------------------- J: two waits in one tl call's keyword arguments, out of order

def test_two_waits_in_a_calls_keyword_arguments_are_lowered_in_the_order_written(tmp_path,
                                                                                 capsys):
    """Before: `tl.store(value=...r.wait(p)..., pointer=...r.wait(p + 1)...)` was verified with
    wait(p) first (the order written, Python's and Triton's) and lowered with wait(p + 1)
    first (tl.store's parameter order). The statement is now built in sequential form, so the
    lowered kernel waits in the verified order."""
    reader = loop("for q in range(N):",
                  "tl.store(value=tl.load(tle.gpu.local_ptr(r.wait(2 * q).slot.tile)), "
                  "pointer=y_ptr + tl.arange(0, 64) + "
                  "tl.load(tle.gpu.local_ptr(r.wait(2 * q + 1).slot.tile)).to(tl.int32))\n"
                  "r.release(2 * q)\nr.release(2 * q + 1)\n")
    text = kernel(loop("for p in range(2 * N):", put("p")), reader)
    path = write_kernel(tmp_path, text)
    code, gluon, err = run_dump(capsys, "-p", "emit-gluon", str(path))
    # (bounded, exit 3: the writer's loop to 2 * N is outside the cutoff theorem's fragment)
    assert code == 3 and "gl.warp_specialize" in gluon, err
    consume = gluon.split("def consume(", 1)[1]
    assert consume.index("((2 * q)) % 2") < consume.index("(((2 * q) + 1)) % 2"), consume
    _, out, _ = run_dump(capsys, "--no-locations", str(path))
    protocol = out.split("partition consume", 1)[1]
    assert protocol.index("kv.wait(2*q)") < protocol.index("kv.wait(2*q + 1)"), protocol
