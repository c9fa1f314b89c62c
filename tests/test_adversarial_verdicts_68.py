"""A sixty-eighth adversarial round (adversarial round 68): round 67's open items (a free buffer
chosen by a constexpr, a constexpr index into a tuple of other values than handles, a
tl.static_range of constexpr bounds read specialised only where its variable is divided), and
the unrolled and specialised readings of rounds 65-67 tried for false claims. Each case is a
small kernel read by tle-dump's main().

False verdicts, fixed:

- ``j = 0``, then ``for p in range(2):`` whose body acquires ``3 * p + j`` and then runs ``for j
  in tl.static_range(1, 3): w.acquire(3 * p + j // 1) ...``: Python reads 2 in ``j`` from the
  second iteration on (indices 0, 1, 2, 5, 4, 5: a fault), and Triton 3.6 refuses the kernel,
  carrying the tensor ``j`` through the loop and meeting the constexpr the static loop leaves
  in it ("Loop carried variable j changed type"). It was verified, exit 0, and over
  ``range(N)`` bounded with "no fault for N in [0, 64]": the unrolled iterations bind ``j`` to
  numbers and assign it no statement of the kernel IR, so every iteration read the 0 from
  before the loop. So were a ``while`` loop around such a static loop and a static loop over a
  run-time parameter's name (``for N in tl.static_range(2)``), both refused by Triton. FIXED:
  frontend/build_loops.py ``tensor_names`` / ``carried_retyped`` (called by ``s_For`` for a
  run-time loop and ``s_While``; build_support.py ``Frame.static_bound``, kept by ``s_For``,
  ``unrolled`` and build_statements.py ``assign``, per function, so that one partition's static
  variable is no constexpr of another): a name holding a tensor when the run-time loop is entered
  that a tl.static_range of its body leaves bound to its variable is refused with Triton's
  words (unsupported-expression); and so is one a run-time `if` yields (``j = 0``, then ``if N
  > 0:`` over such a static loop, then ``w.acquire(j + 2)``: verified for every N >= 1, `j`
  read as 0 after the `if`, where Triton refuses it, "the then block redefines it as
  constexpr[2]", and Python reads 2: build_statements.py ``s_If`` keeps ``static_bound`` per
  branch). ``j: tl.constexpr = 0`` before the loop (compiled by Triton, each iteration reading
  0) and ``j = 0`` in the body stay verified; the Triton oracle pins both readings.
- The other way round: ``for j in tl.static_range(2): ...`` then ``for p in range(6): ...; j =
  p``, which Triton 3.6 refuses alike (the constexpr ``j`` made a tensor in the loop), was
  verified: Builder.constexpr_rebound_in_region refused this for a tl.constexpr binding or
  parameter only. FIXED: frontend/constexpr_rules.py ``constexpr_names`` (what a region
  records as constexprs on entry) counts a name a tl.static_range left bound to its variable,
  and the variable of one being built, unrolled or not (``for j in tl.static_range(2): ...
  for p in range(3): j = p``).

False refusals, fixed:

- ``for j in tl.static_range(C - 3): h = (wa, wb)[j]`` (or ``h = wa if j == 0 else wb``, or a
  helper ``pick2(wa, wb, j)`` returning ``(a, b)[i]``) before ``h.acquire(p)`` of two correct
  rings, C = 5, was refused ("a tuple's index must be a constant", unknown-handle): round 67
  read a loop of constexpr bounds specialised only where its variable is divided in a pipe
  index. FIXED: frontend/build_loops.py ``picks_by`` (called by ``s_For`` beside ``divides``):
  a subscript by the variable, or a choice by it among names holding a pipe handle, a pipe or
  a shared buffer, also stops the generic reading, and the kernel is read specialised to C,
  the loop unrolled: verified at C = 5, ``--param C=4`` (``kb`` never written) found, C = 6
  refused as Python's IndexError. A choice among run-time values (``1.0 if j == 0 else 2.0``)
  keeps the generic reading, verified for every value.
- A free buffer chosen by the kernel's constexprs, ``if C > 3: fb = fa else: fb = fc`` (in a
  partition or the kernel body), or ``(fa, fc)[C - 5]``, the other partition reading ``fc``
  (no race at C = 5), was refused: unknown-buffer ("`fb` holds a different shared buffer on
  different paths"), or "a tuple's index must be a constant". So was ``if C > 3: fb = mkbuf()
  else: fb = mkbuf()`` in the kernel body (round 66's held unknown-buffer). FIXED:
  frontend/build_support.py ``picked_at_compile_time`` (a handle, a pipe or a buffer), which
  build_statements.py ``s_If`` (``lost_by``) and build_expressions.py ``e_Subscript`` take in
  place of ``compile_time_only``: such a choice is read specialised (``undecided_choice``), as
  a handle so chosen is: verified at C = 5, the race with ``fa`` found, at ``--param C=2`` the
  other way round. A conditional expression choosing a buffer keeps reaching both (it holds
  for every value: docs/semantics.md "Free shared buffers"), held below.
- A constexpr index into a tuple of other values: ``for p in range((2, 4)[C - 5])``, ``ns =
  (2, 4)`` then ``ns[C - 5]``, ``w.acquire(p + (0, 1)[C - 5])``, ``(1, 0)[C]`` of
  DEFAULT_CONFIG's ``"C": True``, ``t = (wa, 1); h = t[C - 5]`` (round 66 held it refused),
  a reader's name ``kv.reader(("b", "a")[C - 5])``: refused, "a tuple's index must be a
  constant", where Python and Triton 3.6 pick the item at C's value. FIXED:
  frontend/build_expressions.py ``e_Subscript``: an index the kernel's constexprs alone decide
  stops the generic reading for any tuple (``undecided_choice``, "picks a tuple's item"): the
  bound 2 verified against a reader of 2, the reader of 4 found (wait-never-committed),
  ``--param C=4`` (4 windows) found; ``t[1]`` of ``(wa, 1)`` refused as no handle. An index
  read at run time keeps the refusal. tests/test_adversarial_verdicts_66.py's held
  "not-all-handles" case is now this one.
- ``for p in tl.static_range(4): if p // 2 == 0: w.acquire(p) ...``, a correct ring of two
  windows, was refused, non-affine-if ("`p // 2` divides (or takes a remainder of) a
  variable"): round 66 unrolled a loop whose pipe index divides its variable, not one whose
  `if` around the events does. FIXED: frontend/build_loops.py ``divides``: such an `if` (a
  quotient of the variable in its test, pipe events or helper calls under it) unrolls the
  loop; each iteration's test folds as Python's floor division, so over
  ``tl.static_range(-2, 0)`` ``p // 2 == 0`` is never true (C's truncation would make it true
  at p = -1, and the missing window is found) and ``p // 2 == -1`` is verified. A `range`
  loop's ``p // 2`` stays non-affine-if.

Checked and held (no false verdict found): a condition ``p % 2 == -1`` / ``== 1`` over
``tl.static_range(-2, 0)``, in the partition or in a helper given ``p`` (Python's remainder:
the faulty one found); ``(j + N - 2) // 2`` of a run-time N (C's division, derived param);
global stores at ``y_ptr + 128 + p % 2`` / ``p // 2`` over a negative static_range (the race
check over-approximates: both refused); ``(2 * i + j + 1) // 2`` of a `range` variable ``i``
(non-affine); a handle, a tuple of handles or two names rotated or swapped by a `range` loop
or an unrolled static_range inside one (refused: the loop rebinds a handle); a
static_range's variable read after the loop, unrolled or not (its last value, as Python:
``put(p)`` again found); `break` in a static_range (refused, as Triton); a slot read after its
release through ``t = res.slot``, a tuple, a helper returning the slot, a local_ptr bound
before the release, or the last iteration's ``res`` after an unrolled loop (found or refused);
early returns under run-time or constexpr conditions, in partitions and helpers (refused, or
read specialised: found); two partitions given one writer (two-writers); SPMC readers of one
name (reader-in-two-partitions), also picked by ``("a", "b")[C - 5]``; conditional
expressions holding pipe events (``w.commit(p) if C > 3 else None``, ``C > 3 and
w.commit(p)``: refused, a commit used as a value; ``w.acquire(...) if C > 3 else ...``:
conditional-event); ``q = p if C > 7 else p + 1`` (read specialised: found); conditions on
shapes and dtypes (``s.tile.shape[0] == 2``, ``x_ptr.dtype.element_ty == tl.float32``: refused,
non-affine-if) and ``is None`` tests (refused).

Held (false refusals, not fixed): a conditional expression choosing a free buffer by a
constexpr (``fa if C > 3 else fc``) reaches both, so a partition reading the unchosen one is
refused as a race (reading it specialised would take the verdict for every value from kernels
that hold it); a reader name chosen by a conditional expression of constexprs (``"a" if C > 3
else "b"``: undeclared-reader); a pipe capacity from a bool constexpr (docs/language.md);
pipe events under a test of a shape or a dtype, under ``x is None`` (refused), or in a
conditional expression whose test is a constexpr; a counter rebound in an unrolled
static_range (``j += 1`` then ``w.acquire(j)``: non-affine, where Triton folds each
iteration's tensor); ``j = 0`` before a `range` loop whose body reads ``j``, runs ``for j in
tl.static_range(...)`` and binds ``j = 0`` again at its end (Triton carries the tensor:
refused non-affine, "a data value").

Left open: a helper's `if` choosing a handle by a parameter given a tl.static_range variable
of constexpr bounds (``picks_by`` follows subscripts into helpers, not choices), and names
bound inside the loop before the choice (``picks_by`` reads the handles bound before it).
"""

from __future__ import annotations

import pytest

from .adversarial_oracles import triton_compile_error
from .adversarial_support import (TRITON_K, dump, expect, get, kernel, loop, put, run_dump,
                                 triton_k)
from .test_adversarial_verdicts_65 import FB_READ, FB_STORE, RING_FB
from .test_adversarial_verdicts_66 import TWO_PIPES, TWO_WINDOWS, chosen

# ------------------ A: a tl.static_range of constexpr bounds whose variable picks a handle

#: the writer's window of `h`, in a loop over `j`
H_WINDOW = """            s = h.acquire(p)
            tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + tl.arange(0, 64)))
            h.commit(p)
"""
PICK2 = "\n\ndef pick2(a, b, i):\n    return (a, b)[i]\n"


def _write(tmp_path, text: str) -> str:
    """``text`` written to ``tmp_path / "kernel.py"``; its path."""
    path = tmp_path / "kernel.py"
    path.write_text(text)
    return str(path)


def by_c(choice: str) -> str:
    """Round 66's two rings whose writer runs `h`'s window in `for j in tl.static_range(C -
    3)` after ``choice``, C given to it."""
    assert TWO_WINDOWS in TWO_PIPES
    return (TWO_PIPES.replace(TWO_WINDOWS, "        for j in tl.static_range(C - 3):\n" + choice
                              + H_WINDOW)
            .replace("(produce, (ka, kb, x_ptr, N))", "(produce, (ka, kb, x_ptr, N, C))")
            .replace("def produce(ka, kb, x_ptr, N):",
                     "def produce(ka, kb, x_ptr, N, C: tl.constexpr):") + PICK2)


PICKS = {
    "tuple-item": "            h = (wa, wb)[j]\n",
    "ifexp": "            h = wa if j == 0 else wb\n",
    "helper": "            h = pick2(wa, wb, j)\n",
}


@pytest.mark.parametrize("name", PICKS)
@pytest.mark.parametrize("flags, want", [
    ((), "verified"),
    (("--param", "C=4"), ("rejected", "[wait-never-committed]", "pipe 'kb'")),
], ids=["config-C-5", "param-C-4"])
def test_a_static_range_of_constexpr_bounds_picking_a_handle(tmp_path, capsys, name, flags,
                                                            want):
    """Before: rejected at any C ("a tuple's index must be a constant", unknown-handle). Now
    read specialised to C and unrolled: `wa` then `wb` at C = 5 (lowered with both), `wa`
    alone at C = 4 (the reader's wait on `kb` found)."""
    code, err = dump(tmp_path, capsys, by_c(PICKS[name]), *flags)
    expect(code, err, want)
    assert "read specialised to C=" in err, err
    if want == "verified":
        code, gluon, err = run_dump(capsys, "--gluon", str(tmp_path / "kernel.py"))
        assert code == 0, err
        writer = gluon.split("def produce(", 1)[1].split("@gluon.jit", 1)[0]
        assert writer.index("mbarrier.arrive(ka_full0") < writer.index(
            "mbarrier.arrive(kb_full0"), writer


def test_a_static_range_of_constexpr_bounds_picking_past_the_end(tmp_path, capsys):
    """At C = 6 the third iteration's `(wa, wb)[2]` is Python's IndexError."""
    path = _write(tmp_path, by_c(PICKS["tuple-item"]))
    code, out, err = run_dump(capsys, "-q", "--param", "C=6", path)
    assert code != 0 and ": verified for " not in err, err
    assert "index 2 is out of range of a tuple of 2 items" in err, err


def test_a_static_range_of_constexpr_bounds_without_a_value_asks_for_one(tmp_path, capsys):
    text = by_c(PICKS["tuple-item"]).replace('"constexprs": {"C": 5}', '"constexprs": {}')
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, ("rejected", "[constexpr-operand]", "give it a value"))


def test_a_static_range_of_constexpr_bounds_choosing_numbers_stays_generic(tmp_path, capsys):
    """A choice among run-time values by the variable is read in the loop built once: the
    verdict holds for every C, not read specialised."""
    writer = loop("for j in tl.static_range(C):",
                  "x = 1.0 if j == 0 else 2.0\ntl.store(x_ptr + 256, x)") \
        + loop("for p in range(N):", put("p"))
    code, err = dump(tmp_path, capsys, kernel(writer, loop("for p in range(N):", get("p"))))
    expect(code, err, "verified")
    assert "read specialised" not in err, err


# ------------------------------------------------ B: a free buffer a constexpr chooses

def two_free(store: str, read: str, decls: str = "fa = mkbuf()\nfc = mkbuf()", pre: str = "",
             args: str = "fa, fc") -> str:
    """Round 65's ring whose partitions both take the free buffers `fa`, `fc` (``args``); the
    writer runs ``pre`` then stores into ``store``, the reader reads ``read``."""
    return (RING_FB.replace("FB_W", args).replace("FB_R", args)
            .replace("C: tl.constexpr, fb):", f"C: tl.constexpr, {args}):")
            .replace("    w = kv.writer()\n",
                     "    w = kv.writer()\n" + pre + FB_STORE.replace("(fb)", f"({store})"))
            .replace("    r = kv.reader()\n",
                     "    r = kv.reader()\n" + FB_READ.replace("(fb)", f"({read})"))
            .replace("    fb = mkbuf()\n", "".join(f"    {line}\n" for line in decls.splitlines())))


IF_C = "    if C > 3:\n        fb = fa\n    else:\n        fb = fc\n"
RACE = ("rejected", "[buffer-race]", "'produce' writes it", "'consume' reads it")
FREE = {
    "if-other": (two_free("fb", "fc", pre=IF_C), (), "verified"),
    "if-same": (two_free("fb", "fa", pre=IF_C), (), RACE),
    "if-other-at-C-2": (two_free("fb", "fa", pre=IF_C), ("--param", "C=2"), "verified"),
    "tuple-other": (two_free("(fa, fc)[C - 5]", "fc"), (), "verified"),
    "tuple-same": (two_free("(fa, fc)[C - 5]", "fa"), (), RACE),
}


@pytest.mark.parametrize("name", FREE)
def test_a_free_buffer_a_constexpr_chooses(tmp_path, capsys, name):
    """Before: rejected in all, unknown-buffer ("`fb` holds a different shared buffer on
    different paths") or "a tuple's index must be a constant", the correct kernels with the
    racy ones. Now read specialised to C, where the choice folds."""
    text, flags, want = FREE[name]
    code, err = dump(tmp_path, capsys, text, *flags)
    expect(code, err, want)
    assert "[unknown-buffer]" not in err, err
    if want == "verified":
        assert "read specialised to C=" in err, err


@pytest.mark.parametrize("reader, want", [("fc", "verified"), ("fa", RACE)],
                         ids=["the-other", "the-same"])
def test_a_free_buffer_the_kernel_body_chooses_by_a_constexpr(tmp_path, capsys, reader, want):
    """`if C > 3: fb = fa else: fb = fc` in the kernel body, the writer given `fb`."""
    text = (RING_FB.replace("FB_W", "fb").replace("FB_R", reader)
            .replace("    w = kv.writer()\n", "    w = kv.writer()\n" + FB_STORE)
            .replace("    r = kv.reader()\n", "    r = kv.reader()\n" + FB_READ)
            .replace("    fb = mkbuf()\n", "    fa = mkbuf()\n    fc = mkbuf()\n" + IF_C))
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, want)
    assert ("read specialised to C=" in err) is (want == "verified"), err


def test_a_buffer_allocated_on_each_path_of_a_constexpr_if(tmp_path, capsys):
    """Round 66 held it unknown-buffer; read specialised, the one buffer allocated is used by
    both partitions: the race found."""
    text = (RING_FB.replace("FB_W", "fb").replace("FB_R", "fb")
            .replace("    w = kv.writer()\n", "    w = kv.writer()\n" + FB_STORE)
            .replace("    r = kv.reader()\n", "    r = kv.reader()\n" + FB_READ)
            .replace("    fb = mkbuf()\n",
                     "    if C > 3:\n        fb = mkbuf()\n    else:\n        fb = mkbuf()\n"))
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, RACE)


def test_held_a_conditional_expression_choosing_a_buffer_reaches_both(tmp_path, capsys):
    """`fa if C > 3 else fc` reaches both buffers for every C: a reader of `fc` is refused."""
    code, err = dump(tmp_path, capsys, two_free("fa if C > 3 else fc", "fc"))
    expect(code, err, ("rejected", "[buffer-race]", "shared buffer `fc`"))
    assert "read specialised" not in err, err


# ---------------------------------- C: a constexpr index into a tuple of other values

R2 = loop("for p in range(2):", get("p"))
R4 = loop("for p in range(4):", get("p"))
ITEMS = {
    "a-loop-bound": (loop("for p in range((2, 4)[C - 5]):", put("p")), R2, (), "verified"),
    "a-loop-bound-badly": (loop("for p in range((2, 4)[C - 5]):", put("p")), R4, (),
                           ("rejected", "[wait-never-committed]")),
    "a-loop-bound-at-C-4": (loop("for p in range((2, 4)[C - 5]):", put("p")), R2,
                            ("--param", "C=4"), ("rejected", "[unconsumed]")),
    "through-a-name": ("ns = (2, 4)\n" + loop("for p in range(ns[C - 5]):", put("p")), R2, (),
                       "verified"),
    "in-an-index": (loop("for p in range(4):", put("p + (0, 1)[C - 5]")), R4, (), "verified"),
    "in-an-index-badly": (loop("for p in range(4):", put("p + (0, 1)[C - 4]")), R4, (),
                          ("rejected", "[order-mismatch]")),
}


@pytest.mark.parametrize("name", ITEMS)
def test_a_constexpr_index_into_a_tuple_of_numbers(tmp_path, capsys, name):
    """Before: rejected in all, "a tuple's index must be a constant when the kernel is read".
    Now read specialised to C: Python's item at C = 5 (`(2, 4)[0]`), `(2, 4)[-1]` at C = 4."""
    writer, reader, flags, want = ITEMS[name]
    code, err = dump(tmp_path, capsys, kernel(writer, reader), *flags)
    expect(code, err, want)
    assert "read specialised to C=" in err and "picks a tuple's item" in err, err


@pytest.mark.parametrize("index, want", [("(1, 0)[C]", "verified"),
                                         ("(0, 1)[C]", ("rejected", "[order-mismatch]"))],
                         ids=["item-1", "item-1-badly"])
def test_a_bool_constexpr_of_the_config_indexes_a_tuple(tmp_path, capsys, index, want):
    """DEFAULT_CONFIG's `"C": True` picks item 1, as Python's True does."""
    text = kernel(loop("for p in range(4):", put(f"p + {index}")), R4, config="True")
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, want)
    assert "read specialised to C=1" in err, err


@pytest.mark.parametrize("c, want", [
    ("5", "verified"),
    ("6", None),
], ids=["the-handle", "the-number"])
def test_a_constexpr_index_into_a_tuple_of_a_handle_and_a_number(tmp_path, capsys, c, want):
    """Round 66 held `t = (wa, 1); h = t[C - 5]` refused; at C = 5 it is `wa` (verified), at
    C = 6 the number 1, no handle: refused."""
    path = _write(tmp_path, chosen("t = (wa, 1)\nh = t[C - 5]"))
    code, out, err = run_dump(capsys, "-q", "--param", f"C={c}", path)
    if want == "verified":
        expect(code, err, "verified")
    else:
        assert code != 0 and ": verified for " not in err, err
        assert "cannot tell which pipe handle `h` is" in err, err


def test_held_a_run_time_index_into_a_tuple_of_numbers_stays_refused(tmp_path, capsys):
    code, err = dump(tmp_path, capsys, kernel(loop("for p in range(4):", put("p + (0, 1)[N]")),
                                              R4))
    expect(code, err, ("rejected", "a tuple's index must be a constant"))
    assert "read specialised" not in err, err


# -------------------------- D: an `if` on a quotient of a tl.static_range variable

QUOTIENTS = {
    "first-half": ("4", "if p // 2 == 0:", "p", "", "verified"),
    "second-half": ("4", "if p // 2 == 1:", "p", "", ("rejected", "[order-mismatch]")),
    "negative-floor": ("-2, 0", "if p // 2 == -1:", "p + 2", "", "verified"),
    "negative-never": ("-2, 0", "if p // 2 == 0:", "p + 2", put("0"),
                       ("rejected", "[wait-never-committed]")),
}


@pytest.mark.parametrize("name", QUOTIENTS)
def test_an_if_on_a_quotient_of_a_static_range_variable(tmp_path, capsys, name):
    """Before: rejected in all, non-affine-if (`p // 2` divides a variable). Now the loop is
    unrolled and each test folds as Python's floor division of the constexpr: over
    tl.static_range(-2, 0), `p // 2` is -1 both times (C's truncation would give 0 at p = -1,
    and make `== 0` true there)."""
    bounds, test, index, after, want = QUOTIENTS[name]
    writer = loop(f"for p in tl.static_range({bounds}):", loop(test, put(index))) + after
    code, err = dump(tmp_path, capsys, kernel(writer, R2))
    expect(code, err, want)
    if want == "verified":
        code, gluon, err = run_dump(capsys, "--gluon", str(tmp_path / "kernel.py"))
        assert code == 0, err
        produce = gluon.split("def produce(", 1)[1].split("@gluon.jit", 1)[0]
        assert produce.count("mbarrier.arrive(kv_full0") == 2, produce


def test_held_an_if_on_a_quotient_of_a_range_variable_stays_refused(tmp_path, capsys):
    writer = loop("for p in range(4):", loop("if p // 2 == 0:", put("p")))
    code, err = dump(tmp_path, capsys, kernel(writer, R2))
    expect(code, err, ("rejected", "[non-affine-if]"))


#: an SPMC pipe of readers "a" and "b", the second reader partition naming its reader NAME
SPMC = '''import triton.language as tl
import tle_compiler as tle
import triton


@tle.jit
def k(x_ptr, y_ptr, N, C: tl.constexpr):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=2, readers=("a", "b"), tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (ca, (kv, y_ptr, N)),
                             (cb, (kv, y_ptr, N, C))], [4, 4], [232, 232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    for p in range(N):
        s = w.acquire(p)
        tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + tl.arange(0, 64)))
        w.commit(p)


def ca(kv, y_ptr, N):
    r = kv.reader("a")
    for p in range(N):
        res = r.wait(p)
        tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))
        r.release(p)


def cb(kv, y_ptr, N, C: tl.constexpr):
    r = kv.reader(NAME)
    for p in range(N):
        res = r.wait(p)
        tl.store(y_ptr + 64 + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))
        r.release(p)

DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"},
                  "constexprs": {"C": 5}}
'''


@pytest.mark.parametrize("name, want", [
    ('("b", "a")[C - 5]', "verified"),
    ('("a", "b")[C - 5]', ("rejected", "[reader-in-two-partitions]")),
], ids=["the-other-reader", "the-same-reader"])
def test_a_reader_name_a_constexpr_index_picks(tmp_path, capsys, name, want):
    """Before: refused, "a tuple's index must be a constant"; now read specialised to C: the
    reader "a" picked twice is found."""
    code, err = dump(tmp_path, capsys, SPMC.replace("NAME", name))
    expect(code, err, want)
    assert "read specialised to C=5" in err, err


def test_held_a_reader_name_a_conditional_expression_chooses(tmp_path, capsys):
    code, err = dump(tmp_path, capsys, SPMC.replace("NAME", '"b" if C > 3 else "a"'))
    expect(code, err, ("rejected", "[undeclared-reader]"))


# ------- E: a name a run-time loop carries, rebound to a constexpr by a tl.static_range in it

R6 = loop("for p in range(6):", get("p"))
#: the writer: `j`'s window, then `j` bound by a tl.static_range (unrolled: `j // 1`) per p
CARRIED = loop("for p in range(2):", put("3 * p + j") + loop("for j in tl.static_range(1, 3):",
                                                             put("3 * p + j // 1")))
CHANGED = ("rejected", "[unsupported-expression]", "Loop carried variable j changed type")
RETYPED = {
    "unrolled": ("j = 0\n" + CARRIED, R6, CHANGED),
    "unrolled-over-N": ("j = 0\n" + CARRIED.replace("range(2)", "range(N)"),
                        loop("for p in range(3 * N):", get("p")), CHANGED),
    "in-a-while-loop": ("j = 0\ni = 0\n" + loop("while i < 2:", loop(
        "for j in tl.static_range(2):", "tl.store(x_ptr + 256 + j, 1.0)") + "i += 1\n")
        + loop("for p in range(6):", put("p")), R6, CHANGED),
    "a-parameter": (loop("for p in range(6):", put("p") + loop(
        "for N in tl.static_range(2):", "tl.store(x_ptr + 256 + N, 1.0)")), R6,
        ("rejected", "[unsupported-expression]", "Loop carried variable N changed type")),
    "a-constexpr-before": ("j: tl.constexpr = 0\n" + CARRIED, R6, "verified"),
    "bound-in-the-body": (CARRIED.replace("for p in range(2):\n",
                                          "for p in range(2):\n    j = 0\n"), R6, "verified"),
}


@pytest.mark.parametrize("name", RETYPED)
def test_a_static_range_variable_a_run_time_loop_carries(tmp_path, capsys, name):
    """`j = 0` before `for p in range(2)`, whose body reads `j` then runs `for j in
    tl.static_range(1, 3)`: Triton 3.6 carries `j` (a tensor) through the loop and refuses the
    constexpr the static loop leaves in it ("Loop carried variable j changed type"). It was
    verified, exit 0 (and `range(N)` bounded, "no fault for N in [0, 64]"): the unrolled
    iterations assign `j` no statement of the kernel IR, so every iteration read 0, where
    Python reads 2 from the second on (indices 0, 1, 2, 5, 4, 5). A `tl.constexpr` binding
    before the loop is no tensor (Triton compiles it, each iteration reading 0: verified), nor
    is a binding in the body."""
    writer, reader, want = RETYPED[name]
    code, err = dump(tmp_path, capsys, kernel(writer, reader))
    expect(code, err, want)


#: the plain Triton kernel of RETYPED's "unrolled" case (BINDING before the loop)
RETYPED_TRITON = triton_k("""BINDING
for p in range(2):
    tl.store(x_ptr + 3 * p + j, 1.0)
    for j in tl.static_range(1, 3):
        tl.store(x_ptr + 3 * p + j // 1, 2.0)""")


@pytest.mark.parametrize("binding, refused", [("j = 0", True), ("j: tl.constexpr = 0", False)],
                         ids=["a-tensor", "a-constexpr"])
def test_the_triton_oracle_of_a_carried_static_range_variable(tmp_path, monkeypatch, binding,
                                                              refused):
    """What E's verdicts rest on: Triton 3.6 refuses the tensor's change of type and compiles
    the constexpr's."""
    assert RETYPED_TRITON.startswith(TRITON_K)
    error = triton_compile_error(tmp_path, monkeypatch,
                                 RETYPED_TRITON.replace("BINDING", binding), "retyped")
    assert (error is not None) is refused, error
    if refused:
        assert "Loop carried variable j changed type" in str(error), error


@pytest.mark.parametrize("rebinding, want", [
    ("j = p", ("rejected", "[unsupported-expression]",
               "or the variable of a tl.static_range loop before it")),
    ("i = p", "verified"),
], ids=["the-static-variable", "another-name"])
def test_a_static_range_variable_rebound_to_a_tensor_in_a_later_loop(tmp_path, capsys, rebinding,
                                                                   want):
    """`for j in tl.static_range(2)` then `for p in range(6): ...; j = p`: the constexpr `j`
    the static loop leaves, made a tensor in the run-time loop, is Triton 3.6's "Loop carried
    variable j changed type" (the oracle below); it was verified. A tl.constexpr binding so
    rebound was refused already (Builder.constexpr_rebound_in_region), which now counts a
    tl.static_range variable after its loop as one."""
    writer = loop("for j in tl.static_range(2):", "tl.store(x_ptr + 256 + j, 1.0)") + loop(
        "for p in range(6):", put("p") + rebinding + "\n")
    code, err = dump(tmp_path, capsys, kernel(writer, R6))
    expect(code, err, want)


def test_the_triton_oracle_of_a_static_range_variable_rebound_in_a_later_loop(tmp_path,
                                                                              monkeypatch):
    source = triton_k("""for j in tl.static_range(2):
    tl.store(x_ptr + 256 + j, 1.0)
for p in range(6):
    tl.store(x_ptr + p, 1.0)
    j = p""")
    error = triton_compile_error(tmp_path, monkeypatch, source, "rebound")
    assert error is not None and "Loop carried variable j changed type" in str(error), error


@pytest.mark.parametrize("else_branch", ["", "else:\n    j = 5\n"], ids=["no-else", "an-else"])
def test_a_static_range_variable_a_run_time_if_yields(tmp_path, capsys, else_branch):
    """`j = 0`, then `if N > 0:` over `for j in tl.static_range(1, 3)` (windows 0, 1), then
    `w.acquire(j + 2)`: Python reads 2 (window 4, the reader's third wait hangs), Triton 3.6
    refuses the branch's change of `j`'s type ("initial value for `j` is of type int32[], but
    the then block redefines it as constexpr[2]"). Without an else it was verified (every
    value of N >= 1: `j` read as the 0 before the `if`)."""
    writer = "j = 0\n" + loop("if N > 0:", loop("for j in tl.static_range(1, 3):",
                                                 put("j // 1 - 1"))) + else_branch + put("j + 2")
    text = kernel(writer, loop("for p in range(3):", get("p"))).replace("tle.assume(N >= 0)",
                                                                        "tle.assume(N >= 1)")
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, ("rejected", "[unsupported-expression]", "the then block redefines it"))


def test_the_triton_oracle_of_a_static_range_variable_an_if_yields(tmp_path, monkeypatch):
    source = triton_k("""j = 0
if N > 0:
    for j in tl.static_range(1, 3):
        tl.store(x_ptr + 256 + j, 1.0)
tl.store(x_ptr + j, 1.0)""")
    error = triton_compile_error(tmp_path, monkeypatch, source, "yielded")
    assert error is not None and "the then block redefines it as constexpr" in str(error), error


@pytest.mark.parametrize("events", ["w.acquire(j // 1)", "w.acquire(j)"],
                         ids=["unrolled", "built-once"])
def test_a_static_range_variable_rebound_in_a_run_time_loop_of_its_body(tmp_path, capsys,
                                                                         events):
    """`for j in tl.static_range(2):` whose body runs `for p in range(3): j = p`: the constexpr
    `j` made a tensor in the run-time loop (Triton 3.6's "Loop carried variable j changed
    type"). Unrolled, it was verified."""
    window = put("j").replace("w.acquire(j)", events)
    writer = loop("for j in tl.static_range(2):", window + loop("for p in range(3):", "j = p")) \
        + loop("for p in range(2, 6):", put("p"))
    code, err = dump(tmp_path, capsys, kernel(writer, R6))
    expect(code, err, ("rejected", "[unsupported-expression]",
                       "or the variable of a tl.static_range loop before it"))


def test_a_static_range_variable_of_one_partition_is_no_constexpr_of_another(tmp_path, capsys):
    """The writer's `for N in tl.static_range(2)` leaves its own `N` a constexpr; the reader's
    parameter `N`, rebound in its run-time loop (`N = N + 1`), is a tensor there (Triton
    compiles each partition as a function of its own): verified. (Kept per function,
    Frame.static_bound; kept per builder, the writer's name refused the reader's loop.)"""
    writer = loop("for N in tl.static_range(2):", "tl.store(x_ptr + 256 + N, 1.0)") + loop(
        "for p in range(6):", put("p"))
    code, err = dump(tmp_path, capsys, kernel(writer, loop("for p in range(6):",
                                                           get("p") + "N = N + 1")))
    expect(code, err, "verified")
