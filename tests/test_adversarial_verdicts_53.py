"""A fifty-third adversarial round (adversarial round 53): the Python constructs a Triton author
reaches for in the partitions and in the kernel body (loop forms and steps, names bound more
than once, helpers with keyword and default arguments, constexpr globals and annotations,
`and` / `or` / `not`, conditional expressions, divisions of negative values, program ids,
tuples, early returns), read by the frontend into the protocol where the verifier's reading may
differ from what Triton 3.6 (and the lowered Gluon, compiled by the same code generator)
executes. Each case is a small kernel written to a file and read by tle-dump's main(); where
the case is about what Triton 3.6 does, a plain ``@triton.jit`` kernel is compiled for sm_90a on
the CPU and its TTIR or refusal read.

Bugs found, one line each (before the fixes that came with this file):

- a negative loop step read through a name the partition binds more than once (``s = -1``
  before the loop and ``s = w.acquire(...)`` in its body, the slot's usual name; ``st = -1``
  written twice; ``-st``, ``st - 2``; a helper's parameter given such a name) was "verified"
  (exit 0) as Python's reversed range: Triton 3.6 reverses a loop only for a constexpr step,
  and the lowered Gluon keeps such a name an i32 tensor, so the writer's loop ran no iteration
  and the reader waited forever; FIXED: refused as a name bound once was (protocol
  ``range_bounds``, the walker's ``tensor_const``), check bad-loop.
- the axis of ``tl.program_id`` / ``tl.num_programs`` read from a name a plain assignment bound
  to a number (``a = 0; tl.program_id(a)``, once or twice, by position or ``axis=``) was
  verified as axis 0; Triton 3.6 (and the Gluon) hold the name as an i32 tensor and refuse the
  call; FIXED: refused where Triton takes compile-time operands only (build.py's
  ``constexpr_operands``, protocol's ``tensor_constexpr``), check unsupported-expression.

Checked and found right (pinned below where a verdict rests on it): ``tl.range`` with loop
options (refused, by keyword or position; their defaults written out are taken) or ``arg1=`` /
``arg2=`` keywords; reversed loops with literal and constexpr steps; ``range(0, N, 3)`` and
``range(M, 0, -3)`` whose counter may step past i32 (endless-loop, or outside the i32 claim);
triangular and skewed indices ``i * (i + 1) // 2 + j`` and loop-carried counters (refused as
non-affine; their memory accesses proved apart or racing exactly); C's truncating ``//`` and
``%`` of negative loop variables, arguments and kernel-body values (in trip counts, conditions
and addresses), Python's on tl.static_range variables and constexprs; ``tl.cdiv``; builtin
``min`` / ``max`` of two or three values beside ``tl.minimum``; ``tl.program_id`` and
``tl.num_programs`` of different axes, ``program_id < num_programs``; ``and`` / ``or`` / ``not``
of runtime integers (refused as Triton refuses them), with constexprs (Triton's short-circuit),
chained comparisons (refused); ``while`` loops with compound conditions (refused unless a plain
counter); ``for`` / ``while`` ... ``else`` (refused); ``assert`` and ``tl.device_assert`` (no
assumption); early ``return`` before events (refused), ``return`` inside loops (refused);
helpers calling helpers with keyword and default arguments, a default reading a module name
bound again (refused); module constants and ``tl.constexpr`` globals rebound or shadowed
locally; constexpr ``if`` / ``elif`` chains; ``a if c else b`` on constexprs and runtime
values; tuple items, negative indices, ``len``, unpacking and swaps of pipes and handles (also
under a constexpr ``if`` and in loops: refused where the handle changes per iteration);
augmented assignment to a tuple item (refused, as Triton refuses ``__setitem__``); a name
bound in one branch only; a tl.static_range variable read after its loop (its last value, the
binding before it for an empty loop) and rebound by an inner loop; bool loop bounds and the
i1 sum ``True + 0``; names bound more than once to numbers past i32, to zero divisors, to
uint32 numbers and to floats compared with integers (refused).

Not bugs, noted: a ``tl.static_assert(C == 5)`` does not restrict the values the verdict is
read for (the kernel is refused at C = 0, which no compile reaches), a
``tl.program_id(C - 5)`` of a free constexpr is refused, and triangular loops over
tl.static_range (``for j in tl.static_range(i)``, an index ``i * (i - 1) // 2 + j``) are
refused as non-affine: false refusals of kernels Triton compiles, each with a clear message.
``M: int = -7`` (an annotation other than tl.constexpr) is read, and lowered, as the number
itself (``M // 2`` is -4 in the verdict and in the Gluon, where Triton's visit_AnnAssign would
make it a tensor and divide as C does): the lowered kernel runs what was verified.
"""

from __future__ import annotations

import pytest

from .adversarial_oracles import triton_compile_error, triton_ttir
from .adversarial_support import dump, expect, get, kernel, loop, put, triton_k

#: the reader of four windows, indices 0 to 3
FOUR = loop("for p in range(4):", get("p"))


# ------------------------------------------- a negative loop step through a tensor name

def test_triton_does_not_reverse_a_loop_over_a_tensor_step(tmp_path, monkeypatch):
    """The oracle: `s = -1` (a plain assignment, an i32 tensor) as the step of `range(3, -1,
    s)` builds no loop at all (scf.for counts up from 3 to -1: no iteration, folded away); the
    literal -1 is reversed (lb -1, ub 3, step 1, the variable 2 - iv)."""
    tensor = triton_ttir(tmp_path, monkeypatch, triton_k(
        "s = -1\nfor p in range(3, -1, s):\n    tl.store(x_ptr + p, 1.0)"), "r53neg")
    assert "scf.for" not in tensor and "tt.store" not in tensor, tensor
    literal = triton_ttir(tmp_path, monkeypatch, triton_k(
        "for p in range(3, -1, -1):\n    tl.store(x_ptr + p, 1.0)"), "r53lit")
    assert "scf.for" in literal and "arith.subi" in literal, literal


TENSOR_STEPS = {
    # the slot's usual name, bound to the step before the loop and to the slot in its body
    "the slot's name": "s = -1\n" + loop("for p in range(3, -1, s):", put("3 - p")),
    "bound twice": "st = -1\nst = -1\n" + loop("for p in range(3, -1, st):", put("3 - p")),
    "negated": "st = 1\nst = 1\n" + loop("for p in range(3, -1, -st):", put("3 - p")),
    "computed": "st = 1\nst = 1\n" + loop("for p in range(3, -1, st - 2):", put("3 - p")),
    "by keyword": "s = -1\n" + loop("for p in tl.range(3, -1, step=s):", put("3 - p")),
    "through a helper": "q = -1\nq = -1\nrev(w, x_ptr, q)\n",
}

#: a helper whose loop runs down by its parameter `st`
REV = ("\ndef rev(w, x_ptr, st):\n    for p in range(3, -1, st):\n        s = w.acquire(3 - p)\n"
       "        tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + tl.arange(0, 64)))\n"
       "        w.commit(3 - p)\n")


@pytest.mark.parametrize("name", sorted(TENSOR_STEPS))
def test_a_negative_step_through_a_tensor_name_is_refused(tmp_path, capsys, name):
    """The writer's loop never runs on the GPU, and the reader waits index 0 forever. Before:
    verified (exit 0), the step read as Python's -1."""
    code, err = dump(tmp_path, capsys, kernel(TENSOR_STEPS[name], FOUR, extra=REV))
    expect(code, err, ("rejected", "[bad-loop]", "is negative (-1) and a tensor in Triton 3.6",
                       "Triton reverses a loop only for a constexpr step"))


@pytest.mark.parametrize("writer", [
    loop("for p in range(3, -1, -1):", put("3 - p")),
    "st: tl.constexpr = -1\n" + loop("for p in range(3, -1, st):", put("3 - p")),
    # a literal passed to a helper is a constexpr there (the lowering inlines it)
    "rev(w, x_ptr, -1)\n",
])
def test_a_constexpr_negative_step_stays_verified(tmp_path, capsys, writer):
    expect(*dump(tmp_path, capsys, kernel(writer, FOUR, extra=REV)), "verified")


def test_a_constexpr_negative_step_still_counts(tmp_path, capsys):
    """`range(3, 0, -1)` runs three windows: the reader's fourth wait is never committed."""
    code, err = dump(tmp_path, capsys, kernel(loop("for p in range(3, 0, -1):", put("3 - p")),
                                              FOUR))
    expect(code, err, ("rejected", "[wait-never-committed]"))


# ------------------------------------------- the axis of tl.program_id from a tensor name

def test_triton_refuses_a_program_id_axis_bound_by_assignment(tmp_path, monkeypatch):
    assert triton_compile_error(tmp_path, monkeypatch, triton_k(
        "a = 0\ntl.store(x_ptr + tl.program_id(a), 1.0)"), "r53pid") is not None
    assert triton_compile_error(tmp_path, monkeypatch, triton_k(
        "a: tl.constexpr = 0\ntl.store(x_ptr + tl.program_id(a), 1.0)"), "r53pidc") is None


PID_READER = loop("for p in range(tl.program_id(0)):", get("p"))


@pytest.mark.parametrize("writer", [
    "a = 0\n" + loop("for p in range(tl.program_id(a)):", put("p")),
    "a = 0\na = 0\n" + loop("for p in range(tl.program_id(a)):", put("p")),
    "a = 0\n" + loop("for p in range(tl.program_id(axis=a)):", put("p")),
    "a = 0\na = 0\n" + loop("for p in range(tl.num_programs(a)):", put("p")),
])
def test_a_program_id_axis_bound_by_assignment_is_refused(tmp_path, capsys, writer):
    """Before: verified, the axis read as 0 (the twice-bound num_programs one was refused by
    the protocol only because its counts differ)."""
    code, err = dump(tmp_path, capsys, kernel(writer, PID_READER))
    expect(code, err, ("rejected", "[unsupported-expression]", "takes compile-time values only"))


@pytest.mark.parametrize("writer", [
    "a: tl.constexpr = 0\n" + loop("for p in range(tl.program_id(a)):", put("p")),
    loop("for p in range(tl.program_id(axis=0)):", put("p")),
])
def test_a_constexpr_program_id_axis_stays_verified(tmp_path, capsys, writer):
    expect(*dump(tmp_path, capsys, kernel(writer, PID_READER)), "verified")
