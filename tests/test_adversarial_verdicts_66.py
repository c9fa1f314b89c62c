"""A sixty-sixth adversarial round (adversarial round 66): round 65's false refusals left open
(a tl.static_range variable divided in a pipe index, a handle chosen by one, a tuple's unnamed
buffer given to tle.gpu.local_ptr), and round 65's young machinery: free-buffer naming, each
tle.gpu.alloc evaluation its own buffer, handles and pipes chosen by the kernel's constexprs and
read specialised. Each case is a small kernel read by tle-dump's main().

False refusals, fixed:

- ``for p in tl.static_range(8): if p % 2 == 0: w.acquire(p // 2) ...`` (also ``k = p // 2``
  first, ``p // 2 + 2 * (p % 2)``, a helper given ``p // 2``, or a helper given ``p`` that
  acquires ``i // 2``), a correct ring, was refused, non-affine ("`p // 2` divides (or takes a
  remainder of) a variable"): the loop was built once with ``p`` a name, where Triton 3.6
  unrolls it and each iteration's index is a number. FIXED: frontend/build_loops.py
  ``divides`` (called by ``indexes_by``) reads such a loop unrolled, as one picking a tuple's
  item by its variable was: verified and lowered with the folded indices; ``w.acquire(p // 2)``
  of every ``p`` is found (phase-aliasing). A `range` loop's ``p // 2`` stays non-affine.
  tests/test_lowering_adversarial_3.py pinned ``2 * i + j // 2`` under ``if j == 0:`` (that is
  ``2 * i``) as refused: it now has the verdict of the kernel written ``2 * i``, and that
  test's case divides the `range` variable instead.
- ``for j in tl.static_range(2): h = wa if j == 0 else wb`` (or ``if j == 0: h = wa else: h =
  wb``) before ``h.acquire(p)`` of two correct rings was refused, unknown-handle ("the frontend
  cannot tell which pipe handle `h` is", or "`h` holds different values on different paths").
  FIXED: frontend/build_loops.py ``indexes_by``: a conditional expression of two names, or an
  `if` binding a name to a name, whose test reads the variable unrolls the loop; ``wa if j == 0
  else wa`` is found (phase-aliasing, wait-never-committed).
- ``tl.store(tle.gpu.local_ptr(fb[1]), ...)`` of a tuple ``fb`` of two free buffers no name
  holds was refused, "tle.gpu.local_ptr takes a shared-memory buffer": the item was None.
  FIXED: frontend/build_calls.py ``e_Call`` names such an item where local_ptr takes it
  (``_buf1``, as a conditional expression's operand is), and so does an item picked by a
  tl.static_range variable (``fb[j]``): the reader's ``fb[1]`` races with it (buffer-race),
  ``fb[0]`` is verified (docs/semantics.md, "Free shared buffers").
- ``h = wa if C else wb`` with DEFAULT_CONFIG ``{"C": True}`` (round 65's open item) was refused,
  constexpr-operand ("DEFAULT_CONFIG gives C True, no integer"), where ``--param C=True`` and a
  launch with C=True (compile_kernel binds a bool as its integer) read and lowered it: the file's
  own configuration was refused. FIXED: cli/loading.py ``chosen_by_bools`` binds such a bool of the
  config as its integer where the generic reading stopped at a choice (``undecided_choice``
  marks its CapacityOfConstexprs ``choice``), and frontend/ast_reader.py ``_bound_for`` lets a
  bool bind a choice's constexpr (``generic``, ``kernel_infos``), so that --gluon, which lowers
  the config's True, reads it too: verified and lowered with ``ka``'s barriers, ``"C": False``
  rejected; a pipe capacity of a bool stays refused (docs/language.md).
- ``h = (wa, wb)[C - 5]`` (or ``(wb, wa)[C > 3]``, ``hs[C // 4 - 1]``, ``(ka, kb)[C -
  5].writer()``), a handle a constexpr index picks, Python picking ``wa`` at C = 5, was refused,
  "a tuple's index must be a constant when the kernel is read". FIXED: frontend/
  build_expressions.py ``e_Subscript`` stops the generic reading at such an index of a tuple
  of handles or pipes (``undecided_choice``), read specialised as round 65's conditional
  expressions are; an index the specialised reading folds past the end (``(wa, wb)[C]``, and
  a literal ``(wa, wb)[2]``, unknown-handle before) is refused as Python's IndexError.
  Round 9's ``hs[C - 3]`` of ``(w, w)`` at its config's C = 3 (``hs[0]``, correct) is now
  verified (its test updated); an index read at run time, or of a tuple holding other values,
  keeps the old refusal.
- ``for j in tl.static_range(2): h = wa if j < C else wb`` (a static variable and a constexpr)
  was refused, unknown-handle; now unrolled, then read specialised to C (C = 1 verified, C = 5
  rejected).

Checked and held (no hole found): free buffers under the names the numbering would pick or the
lowering spells (a kernel-body ``kv_tile``, ``_buf1``, ``w``, ``s``, ``k``: the race found, each
its own buffer); one buffer bound twice by ``fa, fc = b, b``, a helper returning ``(b, b)``,
``ident(fa)`` or a tuple returned twice by one call (the race found; two calls, two buffers,
verified); chained assignment, walrus, starred items, slices (refused) and tuples repeated or
concatenated (``(b,) * 2``, ``t + t``, ``t += t``: refused, no tuple); an alloc picked per
iteration of an unrolled tl.static_range (the race found on ``fa_2``); buffers swapped or
allocated again in a kernel-body loop (static_range, range, while: refused) or under ``if C >
3`` (unknown-buffer), a helper allocating in both branches of an `if` on a constexpr
(unknown-buffer); nested items ``fb[1][0]`` given to local_ptr (race found, the other item
verified); the .kir text of ``_buf1`` / ``_buf2`` read back to the same verdict. Choices by
constexprs: a file of two kernels whose DEFAULT_CONFIG entries give C = 5 and C = 2 (each read
at its own value); a config built from a variable (refused: no literal); ``--param C=True`` of
an integer constexpr, ``C=5.0``, ``C=0x5`` (exit 2); ``C / 2 > 2``, ``-C // 2 == -3``, ``-C % 3
== 1`` folded as Python at several values; ``C is True``, ``C is 1``, ``is not``,
``isinstance`` (refused, so a bool read as its integer cannot be told apart); ``f = C > 3``
then ``wa if f`` or ``if f:`` (a tensor in Triton 3.6: refused), ``f: tl.constexpr = C > 3``,
``not C < 4``, ``C > 3 and C`` (verified), ``C > 3 and wa or wb`` (refused); partition
parameters given ``C + N * 0``, ``C + N`` or ``N`` (refused), an unannotated one given C and a
kernel-body ``D: tl.constexpr = C + 1`` (read specialised), a plain ``D = C + 1`` (a tensor in
Triton: refused), ``C = N`` or ``C, D = N, 1`` before the choice (refused); a chosen handle
chosen again in the loop with the other value or by ``if C > 3: h = wb`` (refused), with the
same value (verified); compile_kernel of a kernel-body pipe choice at C = 5 (lowered with
``ka``) and C = 2 (rejected), and of a bool choice at True, False and 1. tl.static_range:
``p // 2 + 2`` over negative ``p`` (Python's floor, lowered as Python literals), ``q = p`` then
``q // 2`` (refused: a tensor Triton divides as C), ``q = p // 2`` (Python's, verified);
``tl.static_range(-4, 0)``; a `range` loop's ``p // 2`` (non-affine, as before).

Left open: a tl.static_range whose bounds are constexprs (``tl.static_range(2 * C)``) and whose
variable a pipe index divides stays non-affine (the generic build binds no constexpr for a
loop bound, so the loop is not unrolled); a free buffer a constexpr chooses keeps its rules, a
pipe capacity of a bool constexpr is refused, and a tuple holding other values than handles
or pipes indexed by a constexpr keeps "a tuple's index must be a constant".
"""

from __future__ import annotations

import pytest

from .adversarial_support import FILL, dump, expect, get, kernel, loop, put, run_dump
from .test_adversarial_verdicts_65 import FB_STORE, HELPER_ITEM, chosen, two

# ---------------------------------- A: a tl.static_range variable divided in a pipe index

#: the writer's helper whose window is given the index `i`
PUT_AT = (f"\n\ndef pp(w, x_ptr, i):\n    s = w.acquire(i)\n    {FILL}\n    w.commit(i)\n"
          f"\n\ndef pq(w, x_ptr, i):\n    if i % 2 == 1:\n        s = w.acquire(i // 2)\n"
          f"        {FILL}\n        w.commit(i // 2)\n")
READ4 = loop("for p in range(4):", get("p"))
DIVIDED = {
    "in-the-index": (loop("for p in tl.static_range(8):", loop("if p % 2 == 0:", put("p // 2"))),
                     "verified"),
    "a-permutation": (loop("for p in tl.static_range(4):", put("p // 2 + 2 * (p % 2)")),
                      "verified"),
    "through-a-name": (loop("for p in tl.static_range(8):",
                            "k = p // 2\n" + loop("if p % 2 == 0:", put("k"))), "verified"),
    "given-a-helper": (loop("for p in tl.static_range(8):",
                            loop("if p % 2 == 0:", "pp(w, x_ptr, p // 2)")), "verified"),
    "in-a-helper": (loop("for p in tl.static_range(8):", "pq(w, x_ptr, p)"), "verified"),
    "each-index-twice": (loop("for p in tl.static_range(4):", put("p // 2")),
                         ("rejected", "[phase-aliasing]")),
    "each-index-twice-through-a-name": (loop("for p in tl.static_range(8):",
                                             "k = p // 2\n" + put("k")),
                                        ("rejected", "[phase-aliasing]")),
}


@pytest.mark.parametrize("name", DIVIDED)
def test_a_static_range_variable_divided_in_a_pipe_index(tmp_path, capsys, name):
    """Before: rejected in all, non-affine ("`p // 2` divides (or takes a remainder of) a
    variable"): the loop, built once with `p` a name, had an index no affine term holds, where
    Triton 3.6 unrolls it and each iteration's index is a number. Now unrolled (as a tuple item
    picked by `p` was): the correct ones verified and lowered, the faulty ones found."""
    writer, want = DIVIDED[name]
    code, err = dump(tmp_path, capsys, kernel(writer, READ4, extra=PUT_AT))
    expect(code, err, want)
    if want == "verified":
        code, gluon, err = run_dump(capsys, "--gluon", str(tmp_path / "kernel.py"))
        assert code == 0, err
        produce = gluon.split("def produce(", 1)[1].split("@gluon.jit", 1)[0]
        assert produce.count("mbarrier.arrive(kv_full0") == 4, produce
        assert "static_range" not in produce, produce


def test_held_a_range_variable_divided_in_a_pipe_index_stays_refused(tmp_path, capsys):
    """A `range` loop is no unrolled loop: `p // 2` stays a non-affine index."""
    writer = loop("for p in range(8):", loop("if p % 2 == 0:", put("p // 2")))
    code, err = dump(tmp_path, capsys, kernel(writer, READ4))
    expect(code, err, ("rejected", "[non-affine]"))


# ---------------------------------------- B: a pipe handle chosen by a tl.static_range variable

TWO_PIPES = two("ka = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))\n"
                "kb = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))")
#: the two-pipe writer's loop body (both windows written out), replaced by CHOICE
TWO_WINDOWS = """        s = wa.acquire(p)
        tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + tl.arange(0, 64)))
        wa.commit(p)
        s = wb.acquire(p)
        tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + tl.arange(0, 64)))
        wb.commit(p)
"""
CHOSEN_WINDOW = """        for j in tl.static_range(2):
CHOICE            s = h.acquire(p)
            tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + tl.arange(0, 64)))
            h.commit(p)
"""
CHOICES = {
    "ifexp": ("            h = wa if j == 0 else wb\n", "verified"),
    "if": ("            if j == 0:\n                h = wa\n            else:\n"
           "                h = wb\n", "verified"),
    "ifexp-reversed": ("            h = wb if j == 1 else wa\n", "verified"),
    "ifexp-one-pipe-twice": ("            h = wa if j == 0 else wa\n",
                             ("rejected", "[phase-aliasing]", "[wait-never-committed]")),
    "if-one-pipe-twice": ("            if j == 0:\n                h = wa\n            else:\n"
                          "                h = wa\n", ("rejected", "[phase-aliasing]")),
}


@pytest.mark.parametrize("name", CHOICES)
def test_a_handle_chosen_by_a_static_range_variable(tmp_path, capsys, name):
    """Before: rejected, unknown-handle (or "`h` holds different values on different paths"),
    the correct choice and the faulty one alike; now the loop is unrolled and `j` folds."""
    choice, want = CHOICES[name]
    assert TWO_WINDOWS in TWO_PIPES
    text = TWO_PIPES.replace(TWO_WINDOWS, CHOSEN_WINDOW.replace("CHOICE", choice))
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, want)
    if want == "verified":
        code, gluon, err = run_dump(capsys, "--gluon", str(tmp_path / "kernel.py"))
        assert code == 0, err
        produce = gluon.split("def produce(", 1)[1].split("@gluon.jit", 1)[0]
        assert produce.index("mbarrier.arrive(ka_full0") < produce.index(
            "mbarrier.arrive(kb_full0"), produce


# -------------------------------- C: tle.gpu.local_ptr of a tuple's buffer no name holds

#: round 65's tuple of two buffers handed to both partitions; the writer stores into `fb[1]`
#: directly, the reader reads `fb[R]` directly
LOCAL_ITEM = (HELPER_ITEM.replace("    q = fb[R]\n", "").replace("local_ptr(q)", "local_ptr(fb[R])")
              .replace("    st0(fb[1])\n", FB_STORE.replace("(fb)", "(fb[1])")))


@pytest.mark.parametrize("item, want", [
    ("1", ("rejected", "[buffer-race]", "'produce' writes it", "'consume' reads it")),
    ("0", "verified"),
], ids=["the-same-item", "the-other-item"])
def test_local_ptr_of_a_tuples_unnamed_buffer(tmp_path, capsys, item, want):
    """Before: rejected in both, "`tle.gpu.local_ptr(fb[1])`: tle.gpu.local_ptr takes a
    shared-memory buffer": the item of a buffer no name held was None. Now it is named where
    local_ptr takes it (`_buf1`): the race on the same item found, the other item verified."""
    assert "local_ptr(fb[1])" in LOCAL_ITEM and "local_ptr(fb[R])" in LOCAL_ITEM
    code, err = dump(tmp_path, capsys, LOCAL_ITEM.replace("fb[R]", f"fb[{item}]"))
    expect(code, err, want)


#: the writer stores into `fb[j]` for each `j` of tl.static_range(J), the reader reads `fb[R]`
LOCAL_ITEMS = LOCAL_ITEM.replace(
    FB_STORE.replace("(fb)", "(fb[1])"),
    "    for j in tl.static_range(J):\n"
    "        tl.store(tle.gpu.local_ptr(fb[j]), tl.zeros([2, 64], tl.float32))\n")


@pytest.mark.parametrize("j, item, want", [
    ("2", "0", ("rejected", "[buffer-race]", "shared buffer `_buf1`")),
    ("2", "1", ("rejected", "[buffer-race]", "shared buffer `_buf2`")),
    ("1", "1", "verified"),
], ids=["both-items-read-0", "both-items-read-1", "item-0-only"])
def test_local_ptr_of_a_tuples_unnamed_buffer_by_a_static_range_variable(tmp_path, capsys, j,
                                                                        item, want):
    """Before: rejected in all, "takes a shared-memory buffer" (as `fb[1]` was)."""
    assert "local_ptr(fb[j])" in LOCAL_ITEMS
    code, err = dump(tmp_path, capsys,
                     LOCAL_ITEMS.replace("static_range(J)", f"static_range({j})")
                     .replace("fb[R]", f"fb[{item}]"))
    expect(code, err, want)


@pytest.mark.parametrize("c, want", [
    ("1", "verified"),
    ("5", ("rejected", "[phase-aliasing]", "[wait-never-committed]")),
])
def test_a_handle_chosen_by_a_static_range_variable_and_a_constexpr(tmp_path, capsys, c, want):
    """`h = wa if j < C else wb` in `for j in tl.static_range(2)`: unrolled, each iteration's
    test reads the constexpr alone and the kernel is read specialised to C (round 65's
    reading); before, unknown-handle at any C."""
    text = (TWO_PIPES.replace(TWO_WINDOWS, CHOSEN_WINDOW.replace(
        "CHOICE", "            h = wa if j < C else wb\n"))
        .replace('"C": 5', '"C": ' + c)
        .replace("(produce, (ka, kb, x_ptr, N))", "(produce, (ka, kb, x_ptr, N, C))")
        .replace("def produce(ka, kb, x_ptr, N):",
                 "def produce(ka, kb, x_ptr, N, C: tl.constexpr):"))
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, want)
    assert f"read specialised to C={c}" in err, err


# ------------------------------- D: a pipe handle a bool constexpr of DEFAULT_CONFIG chooses

@pytest.mark.parametrize("c, want", [
    ("True", "verified"),
    ("False", ("rejected", "[wait-never-committed]")),
])
def test_a_handle_a_bool_constexpr_of_the_config_chooses(tmp_path, capsys, c, want):
    """`h = wa if C else wb`, DEFAULT_CONFIG `{"C": True}`: before, rejected (constexpr-operand,
    "DEFAULT_CONFIG gives C True, no integer") where `--param C=True` and a launch with C=True
    read it (as 1). Now read specialised to it as they do, and --gluon lowers it (as True)."""
    text = chosen("h = wa if C else wb").replace('"C": 5', '"C": ' + c)
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, want)
    assert "read specialised to C=" in err and "no integer" not in err, err
    code, gluon, err = run_dump(capsys, "--gluon", str(tmp_path / "kernel.py"))
    if want == "verified":
        assert code == 0, err
        writer = gluon.split("def produce(", 1)[1].split("@gluon.jit", 1)[0]
        assert "mbarrier.arrive(ka_full0" in writer and "kb_full0" not in writer, writer
    else:
        assert code == 1 and "[wait-never-committed]" in err, err


def test_held_a_capacity_of_a_bool_constexpr_of_the_config_stays_refused(tmp_path, capsys):
    """A pipe capacity takes integers: DEFAULT_CONFIG's `"C": True` gives it none."""
    text = kernel(loop("for p in range(N):", put("p")), loop("for p in range(N):", get("p")),
                  config="True").replace("capacity=2, tile=tle.gpu.alloc([2, 64]",
                                         "capacity=C, tile=tle.gpu.alloc([C, 64]")
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, ("rejected", "[constexpr-operand]", "DEFAULT_CONFIG gives C True"))


# ------------------------------------- E: a pipe handle a constexpr index picks from a tuple

PICKED = {
    "by-a-difference": ("h = (wa, wb)[C - 5]", "5", "verified"),
    "by-a-comparison": ("h = (wb, wa)[C > 3]", "5", "verified"),
    "by-a-comparison-badly": ("h = (wb, wa)[C > 3]", "2", ("rejected", "[wait-never-committed]")),
    "through-a-name": ("hs = (wa, wb)\nh = hs[C // 4 - 1]", "5", "verified"),
    "negative": ("h = (wa, wb)[-C + 3]", "5", "verified"),
    "pipes-then-writer": ("h = (ka, kb)[C - 5].writer()", "5", "verified"),
    "past-the-end": ("h = (wa, wb)[C]", "5", ("rejected", "index 5 is out of range of a tuple")),
}


@pytest.mark.parametrize("name", PICKED)
def test_a_handle_a_constexpr_index_picks(tmp_path, capsys, name):
    """Before: rejected, "a tuple's index must be a constant when the kernel is read" (the
    generic reading has no value of C), where Python picks the item at C's value. Now read
    specialised to C as a conditional expression choosing a handle is (round 65): verified
    where the item is `wa`, the faults found, an index past the end refused as Python's
    IndexError."""
    choose, c, want = PICKED[name]
    code, err = dump(tmp_path, capsys, chosen(choose).replace('"C": 5', '"C": ' + c))
    expect(code, err, want)
    if want == "verified":
        assert f"read specialised to C={c}" in err, err
        code, gluon, err = run_dump(capsys, "--gluon", str(tmp_path / "kernel.py"))
        assert code == 0, err
        writer = gluon.split("def produce(", 1)[1].split("@gluon.jit", 1)[0]
        assert "mbarrier.arrive(ka_full0" in writer and "kb_full0" not in writer, writer


@pytest.mark.parametrize("choose", ["h = (wa, wb)[N]", "h = (wa, wb)[C - N]"],
                         ids=["run-time", "mixed"])
def test_held_an_index_read_at_run_time_or_of_other_values_is_refused(tmp_path, capsys, choose):
    """(An index of the kernel's constexprs into a tuple of other values, `t = (wa, 1)` then
    `t[C - 5]`, held here until adversarial round 68, is read specialised since:
    tests/test_adversarial_verdicts_68.py.)"""
    code, err = dump(tmp_path, capsys, chosen(choose))
    expect(code, err, ("rejected", "a tuple's index must be a constant"))
    assert "read specialised" not in err, err


PICKERS = ('\n\ndef pk(a, b, c: tl.constexpr):\n    return a if c == 0 else b\n'
           '\n\ndef pk2(a, b, c: tl.constexpr):\n    if c == 0:\n        x = a\n    else:\n'
           '        x = b\n    return x\n')


@pytest.mark.parametrize("call, want", [
    ("pk(wa, wb, j)", "verified"),
    ("pk2(wa, wb, j)", "verified"),
    ("pk(wa, wa, j)", ("rejected", "[phase-aliasing]")),
], ids=["ifexp-helper", "if-helper", "one-pipe-twice"])
def test_a_handle_a_helper_chooses_by_a_static_range_variable(tmp_path, capsys, call, want):
    """The choice made in a helper given `j`: before, unknown-handle; the loop is unrolled."""
    text = TWO_PIPES.replace(TWO_WINDOWS, CHOSEN_WINDOW.replace(
        "CHOICE", f"            h = {call}\n")) + PICKERS
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, want)


def test_lowering_round_3s_static_range_quotient_is_read_as_its_original(tmp_path, capsys):
    """tests/test_lowering_adversarial_3.py's `wa.acquire(2 * i + j // 2)` under `if j == 0:`
    of `for j in tl.static_range(4)` (the index 2 * i): before, refused (non-affine); now read
    unrolled, with the verdict of the kernel written `2 * i` (bounded: exit 3, nothing false)."""
    from .test_lowering_adversarial_3 import KERNELS, _edit

    edited = _edit("static_branches", ("                s = wa.acquire(2 * i)\n",
                                       "                s = wa.acquire(2 * i + j // 2)\n"))
    code, err = dump(tmp_path, capsys, KERNELS["static_branches"])
    code_edited, err_edited = dump(tmp_path, capsys, edited)
    assert code == code_edited == 3, err + err_edited
    assert "[non-affine]" not in err_edited and ": bounded: " in err_edited, err_edited
