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
  written twice; ``st = 0; st -= 1``; a tuple bound or unpacked twice; ``-st``, ``st - 2``; a
  helper's parameter given such a name; a helper's returned number, ``range(3, -1, neg())``,
  which Triton's visit_Return makes a tensor) was "verified"
  (exit 0) as Python's reversed range: Triton 3.6 reverses a loop only for a constexpr step,
  and the lowered Gluon keeps such a name an i32 tensor, so the writer's loop ran no iteration
  and the reader waited forever; FIXED: refused as a name bound once was (protocol
  ``range_bounds``, the walker's ``tensor_const``; build.py ``tensor_negative_step`` for a
  helper's result, which the lowering writes in place as the number: the Gluon ran the
  verified loop, not what the source means in Triton), check bad-loop.
- the axis of ``tl.program_id`` / ``tl.num_programs`` read from a name a plain assignment bound
  to a number (``a = 0; tl.program_id(a)``, once or twice, by position or ``axis=``) was
  verified as axis 0; Triton 3.6 (and the Gluon) hold the name as an i32 tensor and refuse the
  call; FIXED: refused where Triton takes compile-time operands only (build.py's
  ``constexpr_operands``, protocol's ``tensor_constexpr``), check unsupported-expression.
- a tl.static_range body that reads a module-level name and then binds that name itself
  (``for p in range(G): ...; G = 3`` under ``tl.static_range(2)``, module ``G = 4``) was read
  as the module's value in every iteration and verified beside a reader of 4 + 4 windows;
  Triton unrolls the loop in one scope, so its second iteration reads the local 3 and the
  reader waits forever (the lowered Gluon, which renamed the module's G apart, ran 8: what
  was verified, not what the source means in Triton; in the kernel body too, `M = M + G`
  then `G = 3`); FIXED: refused at the read (build.py
  ``module_read_rebound``), check unsupported-control-flow; a range loop (its body generated
  once: the module's value each time) and a single-iteration loop keep their verdicts.
- a name bound with an annotation other than tl.constexpr (``M: int = -7``) was read, and
  lowered, as a constexpr: ``M // 2`` verified as Python's -4 in trip counts and addresses, and
  ``st: int = -1`` as a reversed loop's step, where Triton 3.6's visit_AnnAssign hands any
  such annotation to visit_Assign, which makes the number a tensor (C's -3; a loop of no
  iteration); the lowered Gluon inlined the folded number, so it ran what was verified, not
  what the source means in Triton; FIXED: such a binding is a plain assignment to the tensor
  rules (local_tensors.py ``_is_local_tensor``), refused where they refuse the plain one.
- an annotation spelt ``constexpr`` that names something else in the module (``from typing
  import Any as constexpr``, ``constexpr = int``) was taken for tl.constexpr (``st: constexpr
  = -1`` a reversed loop's step, verified), where Triton 3.6 compares the annotation's value
  with its constexpr class and makes the line a plain assignment; FIXED: refused unless it
  resolves to Triton's constexpr (build.py ``constexpr_annotation_names_triton``).
- a tuple's index read from a name a plain assignment bound once (``i = 0; t[i]``) was folded
  to 0 and verified; Triton 3.6 holds the name as a tensor and refuses the subscript; FIXED:
  refused as the other compile-time operands are (build.py ``e_Subscript``).

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
Open (no race or hang: Triton refuses the source, and the lowered kernel runs what was
verified): an `if` on a name a plain assignment bound once to a number (``f = 1; if f: m =
N``) is taken on its folded value by the builder and the lowering, where Triton builds a
run-time ``scf.if`` (``f`` a tensor): ``m``, bound in one branch, is undefined after it there,
and a ``tl.static_assert`` in the other branch is evaluated and fails.
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
    # a jit helper's returned -1 is a tensor too (visit_Return)
    helper = triton_k("for p in range(3, -1, neg()):\n    tl.store(x_ptr + p, 1.0)").replace(
        "@triton.jit\n", "@triton.jit\ndef neg():\n    return -1\n\n\n@triton.jit\n", 1)
    returned = triton_ttir(tmp_path, monkeypatch, helper, "r53ret")
    assert "scf.for" not in returned and "tt.store" not in returned, returned


TENSOR_STEPS = {
    # the slot's usual name, bound to the step before the loop and to the slot in its body
    "the slot's name": "s = -1\n" + loop("for p in range(3, -1, s):", put("3 - p")),
    "bound twice": "st = -1\nst = -1\n" + loop("for p in range(3, -1, st):", put("3 - p")),
    "negated": "st = 1\nst = 1\n" + loop("for p in range(3, -1, -st):", put("3 - p")),
    "computed": "st = 1\nst = 1\n" + loop("for p in range(3, -1, st - 2):", put("3 - p")),
    "by keyword": "s = -1\n" + loop("for p in tl.range(3, -1, step=s):", put("3 - p")),
    "through a helper": "q = -1\nq = -1\nrev(w, x_ptr, q)\n",
    "augmented": "st = 0\nst -= 1\n" + loop("for p in range(3, -1, st):", put("3 - p")),
    "unpacked twice": "st, u = -1, 0\nst, u = -1, 0\n" + loop("for p in range(3, -1, st):",
                                                                put("3 - p")),
    "a tuple's item": "t = (-1, 0)\nt = (-1, 0)\n" + loop("for p in range(3, -1, t[0]):",
                                                         put("3 - p")),
    # a helper's returned number (Triton's visit_Return makes it a tensor)
    "a helper's result": loop("for p in range(3, -1, neg()):", put("3 - p")),
    "a helper's result of its argument": loop("for p in range(3, -1, neg1(1)):", put("3 - p")),
    "an item of a helper's tuple": loop("for p in range(3, -1, two()[0]):", put("3 - p")),
}

#: a helper whose loop runs down by its parameter `st`, and helpers returning numbers
REV = ("\ndef neg():\n    return -1\n\n\ndef neg1(x):\n    return -x\n\n\n"
       "def two():\n    return (-1, 2)\n"
       "\ndef rev(w, x_ptr, st):\n    for p in range(3, -1, st):\n        s = w.acquire(3 - p)\n"
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


# ----------------------- a module-level name a tl.static_range body reads, then binds itself

def test_triton_reads_the_local_binding_in_later_unrolled_iterations(tmp_path, monkeypatch):
    """The oracle: under `tl.static_range(2)` the first iteration's `G` is the module's
    constexpr 4, the second one's the local `G = 3` (a tensor: the inner tl.static_range
    refuses it, "int32[] used as tl.static_range start value is not a constexpr"); under a
    range loop, whose body Triton generates once, both read the module's (4 stores)."""
    head = "import triton\nimport triton.language as tl\n\nG = tl.constexpr(4)\n\n\n@triton.jit\n"
    body = ("def k(x_ptr, N, C: tl.constexpr):\n    for i in LOOP(2):\n"
            "        for p in tl.static_range(G):\n            tl.store(x_ptr + i * 8 + p, 1.0)\n"
            "        G = 3\n")
    err = triton_compile_error(tmp_path, monkeypatch,
                               head + body.replace("LOOP", "tl.static_range"), "r53g1")
    assert err is not None and "not a constexpr" in str(err), err
    ttir = triton_ttir(tmp_path, monkeypatch, head + body.replace("LOOP", "range"), "r53g2")
    assert ttir.count("tt.store") == 4, ttir


#: the writer's windows: G of them at 0, then G again at 8, G read before the body binds it
SHADOWED = loop("for i in LOOP(2):", loop("for p in range(G):", put("i * 8 + p")) + "G = 3\n")
#: the reader of two runs of four windows (4 and 3 under Triton's unrolling: it waits index 11,
#: never committed)
EIGHT = loop("for i in range(2):", loop("for p in range(4):", get("i * 8 + p")))


@pytest.mark.parametrize("binding", ["G = 3", "G -= 1", "G, H = 3, 1",
                                     "for G in tl.static_range(3, 4):\n    pass"])
def test_a_module_name_a_static_body_binds_after_reading_it_is_refused(tmp_path, capsys,
                                                                        binding):
    """Triton runs 4 windows and then 3, and the reader waits index 11 forever. Before:
    verified, the body read once with the module's G in both iterations (the lowered Gluon
    renamed the module's G apart from the local, and ran 8)."""
    writer = SHADOWED.replace("LOOP", "tl.static_range").replace(
        "    G = 3\n", "".join(f"    {line}\n" for line in binding.splitlines()))
    code, err = dump(tmp_path, capsys, kernel(writer, EIGHT, extra="G = 4\n"))
    expect(code, err, ("rejected", "[unsupported-control-flow]",
                       "is read here as the module-level `G`",
                       "the iterations after the first read that local binding"))


def test_a_kernel_body_static_loop_reading_a_module_name_it_binds_is_refused(tmp_path, capsys):
    """The kernel body's `M` is 4 + 3 in Triton, and the reader waits index 7 forever. Before:
    verified with M = 8."""
    text = kernel(loop("for p in range(N):", put("p")), loop("for p in range(8):", get("p")),
                  extra="G = 4\n", body="M = 0\nfor i in tl.static_range(2):\n"
                                        "    M = M + G\n    G = 3\n")
    text = text.replace("(produce, (kv, x_ptr, N, C))", "(produce, (kv, x_ptr, M, C))")
    expect(*dump(tmp_path, capsys, text), ("rejected", "[unsupported-control-flow]",
                                           "is read here as the module-level `G`"))


@pytest.mark.parametrize("loop_fn,extra", [
    ("range", "G = 4\n"),                 # the body generated once: the module's G each time
    ("tl.static_range", "G3 = 4\n"),      # another name for the local
])
def test_a_module_name_read_each_iteration_stays_verified(tmp_path, capsys, loop_fn, extra):
    writer = SHADOWED.replace("LOOP", loop_fn)
    if extra.startswith("G3"):
        writer = writer.replace("range(G)", "range(G3)")
    expect(*dump(tmp_path, capsys, kernel(writer, EIGHT, extra=extra)), "verified")


def test_a_single_iteration_static_body_may_bind_the_name_it_read(tmp_path, capsys):
    writer = loop("for i in tl.static_range(1):", loop("for p in range(G):", put("p"))
                  + "G = 3\n")
    expect(*dump(tmp_path, capsys, kernel(writer, FOUR, extra="G = 4\n")), "verified")


# ------------------------------------------------------------ the cases tried that held

H_KW = '''
def put1(w, x_ptr, i, off=0):
    s = w.acquire(i + off)
    tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + tl.arange(0, 64)))
    w.commit(i + off)


def put2(w, x_ptr, i, off=1):
    put1(w, x_ptr, i, off=off)
'''

H_DEFAULT = '''
OFF = 1


def put1(w, x_ptr, i, off=OFF):
    s = w.acquire(i + off)
    tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + tl.arange(0, 64)))
    w.commit(i + off)


OFF = 0
'''

N_WINDOWS = loop("for p in range(N):", get("p"))
REJECTED = ("rejected",)

#: (writer, reader, extra, the verdict): each a construct of this round, read as Triton does
HELD = {
    # C's truncating division of a run-time value: -(N // -2) is N // 2 on the GPU
    "ceil by a negated division": (loop("for p in range(-(N // -2)):", put("p")),
                                   loop("for p in range((N + 1) // 2):", get("p")), "",
                                   ("rejected", "[wait-never-committed]")),
    # builtin min is tl.minimum of the two (three) values
    "builtin min against tl.minimum": (loop("for p in range(min(N, 4)):", put("p")),
                                       loop("for p in range(tl.minimum(N, 5)):", get("p")), "",
                                       ("rejected", "[wait-never-committed]")),
    "builtin min of three": (loop("for p in range(min(N, 4, C)):", put("p")),
                             loop("for p in range(min(N, 4)):", get("p")), "", REJECTED),
    # the partitions of one CTA see one program id per axis
    "program ids of two axes": (loop("for p in range(tl.program_id(0)):", put("p")),
                                loop("for p in range(tl.program_id(1)):", get("p")), "",
                                REJECTED),
    "one axis by keyword": (loop("for p in range(tl.program_id(0)):", put("p")),
                            loop("for p in range(tl.program_id(axis=0)):", get("p")), "",
                            "verified"),
    "program id below the count": (loop("if tl.program_id(0) < tl.num_programs(0):", put("0")),
                                   get("0"), "", "verified"),
    "the last program skips": (loop("if tl.program_id(0) + 1 < tl.num_programs(0):", put("0")),
                               get("0"), "", ("rejected", "[wait-never-committed]")),
    # and / or / not of a run-time integer: Triton bitcasts it to i1 and refuses
    "and of a runtime integer": (loop("for p in range(N):", loop("if N and p < 3:", put("p"))),
                                 loop("for p in range(tl.minimum(N, 3)):", get("p")), "",
                                 ("rejected", "[unsupported-expression]", "bitcast")),
    "a chained comparison": (loop("for p in range(N):", loop("if 0 < p < 3:", put("p - 1"))),
                             loop("for p in range(tl.minimum(N, 3) - 1):", get("p")), "",
                             ("rejected", "[unsupported-expression]", "chained comparison")),
    # a while loop that is no plain counter may not end
    "while with or": (loop("for p in range(N):", put("p")),
                      "k = 0\n" + loop("while k < 10 or C:", "k += 1\ntl.store(y_ptr, 1.0)")
                      + N_WINDOWS, "", ("rejected", "[endless-loop]")),
    "for else": (loop("for i in range(N):", put("i")) + "else:\n    tl.store(x_ptr, 1.0)\n",
                 N_WINDOWS, "", ("rejected", "[unsupported-control-flow]", "for ... else")),
    # (round FR20: read as an if / else, the writer skipping the commits the reader waits at
    # N = 1)
    "early return before events": ("if N < 2:\n    return\n" + loop("for p in range(N):",
                                                                   put("p")),
                                   N_WINDOWS, "", ("rejected", "[wait-never-committed]")),
    # helpers calling helpers, by keyword and with defaults
    "a keyword passed down": (loop("for p in range(N):", "put2(w, x_ptr, p, off=0)"),
                              N_WINDOWS, H_KW, "verified"),
    "a keyword passed down, the reader off by one": (
        loop("for p in range(N):", "put2(w, x_ptr, p, off=0)"),
        loop("for p in range(N):", get("p + 1")), H_KW, REJECTED),
    "a default read again later": (loop("for p in range(N):", "put1(w, x_ptr, p)"),
                                   N_WINDOWS, H_DEFAULT, ("rejected", "[bad-call]")),
    # module constants rebound, shadowed locally, constexpr globals
    "a module constant shadowed locally": (loop("for p in range(G):", put("p")),
                                           "G = 3\n" + loop("for p in range(G):", get("p")),
                                           "G = 4\n", ("rejected", "[unconsumed]")),
    "a module constant rebound by +=": (loop("for p in range(G):", put("p")),
                                       loop("for p in range(4):", get("p")),
                                       "G = 3\nG += 1\n", "verified"),
    "a constexpr global": (loop("for p in range(G):", put("p")), loop("for p in range(3):",
                                                                       get("p")),
                           "G = tl.constexpr(4)\n", ("rejected", "[unconsumed]")),
    # constexpr if / elif chains
    "an elif chain": ("if C == 1:\n    M = 1\nelif C == 5:\n    M = 2\nelse:\n    M = 3\n"
                      + loop("for p in range(M):", put("p")),
                      loop("for p in range(3):", get("p")), "",
                      ("rejected", "[wait-never-committed]")),
    # the variable of a tl.static_range after it: its last value
    "a static variable after its loop": (loop("for i in tl.static_range(3):", put("i"))
                                         + put("i + 2"), FOUR, "", REJECTED),
    # a bool loop bound is widened by sign extension
    "a bool bound": ("b = True\nb = True\n" + loop("for p in range(b):", put("p")),
                     loop("for p in range(1):", get("p")), "",
                     ("rejected", "[non-affine-loop]", "sign extension")),
    # a tuple item cannot be assigned (Triton has no __setitem__)
    "a tuple item assigned": ("t = (0, N)\nt[1] += 1\n" + loop("for p in range(t[1]):",
                                                                put("p")),
                              N_WINDOWS, "", REJECTED),
    # a negative index of a tuple, a swap
    "a negative tuple index": ("t = (N + 1, N)\n" + loop("for p in range(t[-1]):", put("p")),
                               N_WINDOWS, "", "verified"),
    "a swap": ("a, b = N, N + 1\na, b = b, a\n" + loop("for p in range(a):", put("p")),
               N_WINDOWS, "", REJECTED),
}


@pytest.mark.parametrize("name", sorted(HELD))
def test_a_construct_read_as_triton_runs_it(tmp_path, capsys, name):
    writer, reader, extra, want = HELD[name]
    expect(*dump(tmp_path, capsys, kernel(writer, reader, extra=extra)), want)


#: two partitions storing to o_ptr before their events, unordered: WSTMT against RSTMT
RACE_RING = '''import triton.language as tl
import tle_compiler as tle
import triton


@tle.jit
def k(x_ptr, y_ptr, o_ptr, N, M, C: tl.constexpr):
    tle.assume(N >= 0)
BODY    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, o_ptr, N, M, C)),
                             (consume, (kv, y_ptr, o_ptr, N, M, C))], [4], [232])


def produce(kv, x_ptr, o_ptr, N, M, C: tl.constexpr):
    w = kv.writer()
WSTMT    for p in range(N):
        s = w.acquire(p)
        tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + tl.arange(0, 64)))
        w.commit(p)


def consume(kv, y_ptr, o_ptr, N, M, C: tl.constexpr):
    r = kv.reader()
RSTMT    for p in range(N):
        res = r.wait(p)
        tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))
        r.release(p)

DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "o_ptr": "*fp32",
                                "N": "i32", "M": "i32"}, "constexprs": {"C": 5}}
'''

RACE = ("rejected", "[memory-race]", "can reach the same global address")

#: (the writer's statements, the reader's, the verdict); M is bounded where the name says so
#: (the kernel body's tle.assume)
RACES = {
    # C's division of a negative loop value: (i - 8) // 4 is 0 at i = 5 (Python's -1)
    "C's division reaches the reader": (
        "for i in range(8):\n    tl.store(o_ptr + (i - 8) // 4 + 10, 1.0)",
        "tl.store(o_ptr + 10, 1.0)", RACE),
    "C's division stays below it": (
        "for i in range(8):\n    tl.store(o_ptr + (i - 8) // 4 + 10, 1.0)",
        "tl.store(o_ptr + 11, 1.0)", "verified"),
    "C's remainder reaches the reader": (
        "for i in range(8):\n    tl.store(o_ptr + (i - 8) % 4 + 10, 1.0)",
        "tl.store(o_ptr + 9, 1.0)", RACE),
    # Python's division of a tl.static_range variable (a constexpr): (0 - 3) // 2 is -2
    "Python's division of a static variable": (
        "for i in tl.static_range(4):\n    tl.store(o_ptr + (i - 3) // 2 + 10, 1.0)",
        "tl.store(o_ptr + 8, 1.0)", RACE),
    "a static variable's quotients apart": (
        "for i in tl.static_range(4):\n    tl.store(o_ptr + (i - 3) // 2 + 10, 1.0)",
        "tl.store(o_ptr + 11, 1.0)", "verified"),
    # a reversed loop covers [0, M)
    "a reversed loop apart": ("for i in range(M - 1, -1, -1):\n    tl.store(o_ptr + i, 1.0)",
                              "tl.store(o_ptr + M + tl.arange(0, 16), 1.0)", "verified"),
    "a reversed loop meets": ("for i in range(M - 1, -1, -1):\n    tl.store(o_ptr + i, 1.0)",
                              "tl.store(o_ptr + M - 1 + tl.arange(0, 16), 1.0)", RACE),
    # a reversed loop by 3 may carry its counter past i32 (Triton counts up from 0 to M)
    "a reversed loop by 3": ("for i in range(M, 0, -3):\n    tl.store(o_ptr + i, 1.0)",
                             "tl.store(o_ptr + M + 1 + tl.arange(0, 16), 1.0)",
                             ("rejected", "[endless-loop]")),
    # triangular loops: the inner bound reads the outer variable
    "below the diagonal, the diagonal": (
        "for i in range(8):\n    for j in range(i):\n        tl.store(o_ptr + i * 8 + j, 1.0)",
        "for i in range(8):\n    tl.store(o_ptr + i * 9, 1.0)", "verified"),
    "on the diagonal too": (
        "for i in range(8):\n    for j in range(i + 1):\n        tl.store(o_ptr + i * 8 + j, 1.0)",
        "for i in range(8):\n    tl.store(o_ptr + i * 9, 1.0)", RACE),
    "a packed triangle and the element past it": (
        "for i in range(M):\n    for j in range(i + 1):\n"
        "        tl.store(o_ptr + i * (i + 1) // 2 + j, 1.0)",
        "tl.store(o_ptr + M * (M + 1) // 2, 1.0)", "verified"),
    "a packed triangle and its last element": (
        "for i in range(M):\n    for j in range(i + 1):\n"
        "        tl.store(o_ptr + i * (i + 1) // 2 + j, 1.0)",
        "tl.store(o_ptr + M * (M + 1) // 2 - 1, 1.0)", RACE),
}


def _indented(stmts: str) -> str:
    return "".join(f"    {line}\n" for line in stmts.splitlines())


@pytest.mark.parametrize("name", sorted(RACES))
def test_an_address_read_as_triton_computes_it(tmp_path, capsys, name):
    writer, reader, want = RACES[name]
    body = "tle.assume(M >= 0)\ntle.assume(M < 1000)" if "past it" in name else ""
    text = (RACE_RING.replace("WSTMT", _indented(writer)).replace("RSTMT", _indented(reader))
            .replace("BODY", _indented(body)))
    expect(*dump(tmp_path, capsys, text), want)


# ------------------------------------------- an annotation other than tl.constexpr

def test_triton_makes_an_int_annotated_number_a_tensor(tmp_path, monkeypatch):
    """The oracle: `M: int = -7` then `M // 2 + 10` is the i32 tensor's C division, -3 + 10
    (folded to the constant 7), as `M = -7` is; `M: tl.constexpr = -7` is Python's -4 + 10."""
    ttir = triton_ttir(tmp_path, monkeypatch, triton_k(
        "M: int = -7\ntl.store(x_ptr + M // 2 + 10, 1.0)"), "r53ann")
    assert "arith.constant 7 : i32" in ttir and "arith.constant 6 : i32" not in ttir, ttir
    ttir = triton_ttir(tmp_path, monkeypatch, triton_k(
        "M: tl.constexpr = -7\ntl.store(x_ptr + M // 2 + 10, 1.0)"), "r53annc")
    assert "arith.constant 6 : i32" in ttir and "arith.constant 7 : i32" not in ttir, ttir


@pytest.mark.parametrize("writer,reader", [
    # Python's -4 (the reader's N - 4) where the GPU computes C's -3: N - 3 commits
    ("M: int = -7\n" + loop("for p in range(N + M // 2):", put("p")),
     loop("for p in range(N - 4):", get("p"))),
    # a reversed loop's step: no iteration on the GPU
    ("st: int = -1\n" + loop("for p in range(3, -1, st):", put("3 - p")), FOUR),
])
def test_an_int_annotated_number_is_a_tensor(tmp_path, capsys, writer, reader):
    """Before: verified (read as a constexpr)."""
    expect(*dump(tmp_path, capsys, kernel(writer, reader)), REJECTED)


def test_a_constexpr_annotated_number_stays_verified(tmp_path, capsys):
    writer = "M: tl.constexpr = -7\n" + loop("for p in range(N + M // 2):", put("p"))
    expect(*dump(tmp_path, capsys, kernel(writer, loop("for p in range(N - 4):", get("p")))),
           "verified")


@pytest.mark.parametrize("extra", ["constexpr = int\n", "from typing import Any as constexpr\n"])
def test_an_annotation_spelt_constexpr_that_is_not_tritons_is_refused(tmp_path, capsys, extra):
    """Triton's visit_AnnAssign compares the annotation's value with its constexpr class: any
    other makes the line a plain assignment (a tensor step, a loop of no iteration). Before:
    verified, the spelling taken for tl.constexpr."""
    writer = "st: constexpr = -1\n" + loop("for p in range(3, -1, st):", put("3 - p"))
    code, err = dump(tmp_path, capsys, kernel(writer, FOUR, extra=extra))
    expect(code, err, ("rejected", "[unsupported-expression]",
                       "is not Triton's tl.constexpr here"))


def test_tritons_constexpr_imported_by_name_stays_verified(tmp_path, capsys):
    writer = "st: constexpr = -1\n" + loop("for p in range(3, -1, st):", put("3 - p"))
    expect(*dump(tmp_path, capsys, kernel(
        writer, FOUR, extra="from triton.language import constexpr\n")), "verified")


# ------------------------------------------- a tuple's index held as a tensor

def test_triton_refuses_a_tuple_index_bound_by_assignment(tmp_path, monkeypatch):
    assert triton_compile_error(tmp_path, monkeypatch, triton_k(
        "t = (N, N + 1)\ni = 0\nfor p in range(t[i]):\n    tl.store(x_ptr + p, 1.0)"),
        "r53tup") is not None


@pytest.mark.parametrize("binding,why", [
    ("i = 0", "takes compile-time values only"),             # before: verified (folded to 0)
    ("i = 0\ni = 0", "a tuple's index must be a constant"),  # refused before too
])
def test_a_tuple_index_bound_by_assignment_is_refused(tmp_path, capsys, binding, why):
    writer = f"t = (N, N + 1)\n{binding}\n" + loop("for p in range(t[i]):", put("p"))
    code, err = dump(tmp_path, capsys, kernel(writer, N_WINDOWS))
    expect(code, err, ("rejected", why))


def test_a_constexpr_tuple_index_stays_verified(tmp_path, capsys):
    writer = "t = (N, N + 1)\ni: tl.constexpr = 0\n" + loop("for p in range(t[i]):", put("p"))
    expect(*dump(tmp_path, capsys, kernel(writer, N_WINDOWS)), "verified")
