"""A sixty-fifth adversarial round (adversarial round 65): pipe handles as values (obtained twice,
under two names, through helpers, in tuples, rebound in loops and branches), reader names
duplicated or swapped, helpers with pipe verbs called twice and at depth 2-3, recursion,
partitions given as lambdas, partials, aliases and one function twice, warp_specialize
called twice or nested, partition lists of other lengths than their budgets, partitions that
return values, tl.range loop options, negative static_range steps and computed indices; and
what a helper allocates when it is called twice. Each case is a small kernel read by tle-dump's
main().

False verdicts, fixed:

- ``t = (tle.gpu.alloc([2, 64], tl.float32),)``, ``fa = t[0]``, ``fc = t[0]`` (or ``fa, _ =
  t`` twice, or ``t`` a helper's returned tuple, or ``t`` handed to both partitions, one
  binding ``fz = t[0]`` and the other ``fb = t[0]``): one shared buffer under two names, the
  writer partition storing into ``fa`` and the reader loading ``fc`` with no barrier between
  them, a data race, was verified, exit 0: the builder named a free buffer at each binding of
  an unnamed one, so the tuple's item got a second name and the kernel IR two buffers, which
  the race check (frontend/protocol.py ``check_free_buffers``, by name) took apart. FIXED:
  frontend/build.py ``name_buffer`` keeps the name a buffer was first given (``buffer_names``,
  per allocation): rejected, ``buffer-race`` on `fa`; read by both partitions it is verified.
- The writer handed ``(fa, t)`` storing through ``fb = fbs[0] if N > 0 else fbs[1][0]``, the
  reader reading ``t[0]`` (bound to ``fc`` in the kernel body, or read as ``fr[0]``): at N = 0
  both touch ``t``'s buffer unordered, and it was verified, exit 0. A tuple's item that is a
  free buffer was None unless the tuple was built from a named one, so the conditional
  expression reached ``fa`` alone. FIXED: frontend/build.py ``item_of`` gives such an item the
  name its buffer was given since (``fc``), and ``e_IfExp`` names a buffer no name holds yet
  (``_buf1``) where it is an operand, so the choice reaches both (docs/semantics.md).
- A tuple's buffer handed to a helper (``st0(fb[1])`` storing through its parameter ``b``) was
  an unbound name in the helper: the race check saw no store, and only the lowering's refusal
  (``name '_st01_b' is not defined``) kept it from a verdict, for a racy kernel and a correct
  one alike. FIXED: frontend/build.py ``inline`` names such a buffer for the parameter (``b``):
  the race with a reader of ``fb[1]`` is found, a reader of ``fb[0]`` verified.
- ``ka = mk("ka"); kb = mk("kb")`` of ``def mk(nm: tl.constexpr): return tle.pipe(capacity=2,
  name=nm, tile=tle.gpu.alloc([2, 64], tl.float32))`` (a helper that declares one pipe per call,
  two correct rings) was refused, ``aliased-buffer``: "the tle.gpu.alloc at line 43 is already
  field 'tile' of pipe 'ka' (line 43)". So was ``tile=mkbuf()`` in two pipes of a helper
  ``mkbuf`` returning a ``tle.gpu.alloc``, and a free buffer ``fb = mkbuf()`` beside a pipe
  field ``tile=mkbuf()`` was read as that pipe's field (``field-buffer``), so a partition
  using ``fb`` alone was refused and two partitions racing on it were refused for the wrong
  reason. The builder keyed a buffer by the alloc call's AST node, which every call of the
  helper shares, where Python allocates anew at each call. FIXED: frontend/build.py ``alloc``
  keys each evaluation of tle.gpu.alloc apart (a counter); the lowered Gluon allocates a ring
  per pipe as before. A name bound to one helper's buffer on each path of a run-time `if`
  (``if N > 0: fb = mkbuf() else: fb = mkbuf()``) is now ``unknown-buffer``, as it was for two
  allocs written out (docs/semantics.md, "Free shared buffers").
- A pipe handle chosen by a condition on a constexpr (``h = wa if C > 3 else wb``, ``if C > 3:
  h = wa else: h = wb``, or a helper ``pick(wa, wb, C)`` doing so), Python picking ``wa`` at
  DEFAULT_CONFIG's C = 5, was refused, exit 1 (unknown-handle, or "`h` holds different values
  on different paths"), with or without ``--param C=5``: the generic reading lost the handle
  at the join, and no specialised reading was tried (a false refusal of correct code).
  FIXED: frontend/build.py ``kernel_constexprs_of`` / ``undecided_choice``: where a condition
  that reads only the kernel's unbound constexprs (directly, or through partition parameters
  given them) chooses a pipe handle or a pipe, the generic reading stops as a pipe
  capacity read from constexprs does (CapacityOfConstexprs, check ``constexpr-operand``), and
  tle-dump (a compile, a launch) reads the kernel specialised, where the condition folds:
  verified at C = 5 and lowered with ``ka``'s barriers, rejected at ``--param C=2``; a handle
  chosen at run time (``N > 3``, ``C > N``) is refused as before (docs/language.md).
- Two free buffers one name spells were read as one buffer: a helper ``def mk2(): fb =
  tle.gpu.alloc(...); return fb`` called twice (``fa = mk2(); fc = mk2()``), or ``fc =
  tle.gpu.alloc(...); fa = fc; fc = tle.gpu.alloc(...)``, one partition writing ``fa`` and the
  other reading ``fc`` (two buffers, no race), was rejected as a ``buffer-race`` on `fb` (`fc`),
  and so were two partitions each allocating its own ``scr``: the KIR named each free buffer by
  the variable first bound to it, the same for both. FIXED:
  frontend/build.py ``name_buffer`` numbers a name another buffer holds (``fb_2``), so each
  buffer is its own in the race check and the kernel IR (the .kir text reads back so).

Checked and held (no hole found): a pipe's writer obtained twice (``w2 = kv.writer()``, one
acquiring and the other committing), through a helper that returns it, in a tuple unpacked,
made again in each iteration, or in a partition that only creates it; a writer in the reader's
partition (two-writers); handles of two pipes chosen by a run-time `if` or conditional
expression (refused), swapped by a tuple assignment before the loop (the deadlock found) or in
the loop (refused), picked from a tuple by a tl.static_range variable, reversed or not;
``reader("a")`` twice in two partitions (reader-in-two-partitions), swapped between
partitions, by keyword, from a constexpr parameter, a conditional expression or a tuple item
on a constexpr (a duplicate at another value found), ``fields=`` as a list, a string, a
variable or empty; helpers with pipe verbs called twice in one iteration (phase and order
faults found), at depth 3 and twice at depth 3, recursion (refused); functions passed to helpers
under a shadowing parameter name, by keyword, as a default or in a tuple (the faulty one found);
a partition as a lambda, a functools.partial, an alias of another partition or of itself, one
function twice (duplicate-partition), warp_specialize twice, in an `if`, a loop, an assignment
or a `return`, its list or an argument tuple built in a variable, by concatenation, repetition
or a star, warp and register lists longer or shorter than the workers, 0 or 3 warps, budgets
233, 512 and 8 (all refused); keyword arguments and tuples for its lists; partitions that
return a value, a load, a store or an atomic (the effects kept, the value dropped) or an
event's result; partitions with keyword-only, positional-only and defaulted parameters (a
keyword-only one read as Triton reads it, the module's constexpr of its name); tl.range's
``num_stages``, ``loop_unroll_factor``, ``warp_specialize``, ``flatten``,
``disallow_acc_multi_buffer`` and ``disable_licm``, by keyword or by position (bad-loop);
tl.static_range and range with negative steps (``3 - p`` verified, ``p`` rejected), indices
``2 * p`` and ``2 * p + 1`` (verified), ``3 * p``, ``4 * p``, ``N - 1 - p``, ``2 * p + N``
(phase-aliasing), ``-p`` (negative-index), ``p // 2`` and ``p % 2`` (non-affine), nested
loops whose inner bounds read the outer variable (bounded), constants past the cutoff in
conditions (``p != 777``, ``p % 700``: the fault found past N = 700); chained assignments of
events (refused), unpacking of an event's tuple; loop variables rebound in the body (read as
Python reads them); slots and wait results carried across iterations (unknown-slot); waits and
loads of a slot handed to helpers as arguments, tuples and keywords (loaded before the release,
as lowered); pipe and field names that collide with the lowered module's names (renamed);
a pipe written and read by one partition; a pipe passed twice to one partition (two handles
of its reader); pointer arguments handed to partitions under each other's names, through a
tuple item, `+ 0` or a kernel-body alias (the race found by value); worker partitions of 1, 2
and 8 warps writing a pipe; a pipe handle chosen by a constexpr through a compile of
``compile_kernel(k, sig, {"C": 5})`` (lowered, ``C=2`` refused).

Left open: a tl.static_range loop whose variable a pipe index divides (``w.acquire(p // 2)``)
is refused as non-affine unless the body also picks a tuple item by it (the loop is then
unrolled), and a handle chosen by a tl.static_range variable (``wa if j == 0 else wb``) stays
refused (unknown-handle); a handle a bool constexpr chooses (DEFAULT_CONFIG ``{"C": True}``)
is refused until an integer is given (``--param C=1``), as a pipe capacity of a bool is; a
free buffer a constexpr chooses keeps its rules (a conditional expression reaches both, an
`if` binding it is unknown-buffer), not read specialised; ``tle.gpu.local_ptr(t[1])`` of a
tuple's buffer no name holds is refused ("takes a shared-memory buffer"): bind it to a name
first (``b = t[1]``), which is read as that buffer.
"""

from __future__ import annotations

import pytest

from .adversarial_support import DRAIN, FILL, HEAD, dump, expect, get, kernel, loop, put, run_dump

# ------------------------------------------------ A: a helper that allocates, called twice

#: two pipes `ka`, `kb` of capacity 2 ([2, 64] fp32 `tile`), DECL_A / DECL_B declaring them;
#: `produce` fills both in each iteration, `consume` drains both
TWO = HEAD + '''@tle.jit
def k(x_ptr, y_ptr, N, C: tl.constexpr):
    tle.assume(N >= 0)
DECLS
    tle.gpu.warp_specialize([(produce, (ka, kb, x_ptr, N)), (consume, (ka, kb, y_ptr, N))],
                            [4], [232])


def produce(ka, kb, x_ptr, N):
    wa = ka.writer()
    wb = kb.writer()
    for p in range(N):
        s = wa.acquire(p)
        tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + tl.arange(0, 64)))
        wa.commit(p)
        s = wb.acquire(p)
        tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + tl.arange(0, 64)))
        wb.commit(p)


def consume(ka, kb, y_ptr, N):
    ra = ka.reader()
    rb = kb.reader()
    for p in range(N):
        res = ra.wait(p)
        tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))
        ra.release(p)
        res = rb.wait(p)
        tl.store(y_ptr + 64 + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))
        rb.release(p)


def mk(nm: tl.constexpr):
    return tle.pipe(capacity=2, name=nm, tile=tle.gpu.alloc([2, 64], tl.float32))


def mkbuf():
    return tle.gpu.alloc([2, 64], tl.float32)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"},
                  "constexprs": {"C": 5}}
'''


def two(decls: str) -> str:
    return TWO.replace("DECLS", "".join(f"    {line}\n" for line in decls.splitlines()))


@pytest.mark.parametrize("decls", [
    'ka = mk("ka")\nkb = mk("kb")',
    "ka = tle.pipe(capacity=2, tile=mkbuf())\nkb = tle.pipe(capacity=2, tile=mkbuf())",
], ids=["pipe-helper", "buffer-helper"])
def test_a_helper_called_twice_allocates_twice(tmp_path, capsys, decls):
    """Before: rejected, aliased-buffer ("already field 'tile' of pipe 'ka'"): both calls'
    tle.gpu.alloc were one buffer, keyed by the call's node."""
    code, err = dump(tmp_path, capsys, two(decls))
    expect(code, err, "verified")
    code, gluon, err = run_dump(capsys, "--gluon", str(tmp_path / "kernel.py"))
    assert code == 0, err
    body = gluon.split("def k(", 1)[1]
    assert "ka_tile = gl.allocate_shared_memory(gl.float32, [2, 64]" in body, body
    assert "kb_tile = gl.allocate_shared_memory(gl.float32, [2, 64]" in body, body


def test_held_one_buffer_behind_two_pipes_is_still_refused(tmp_path, capsys):
    code, err = dump(tmp_path, capsys, two(
        "b = mkbuf()\nka = tle.pipe(capacity=2, tile=b)\nkb = tle.pipe(capacity=2, tile=b)"))
    expect(code, err, ("rejected", "[aliased-buffer]", "already field 'tile' of pipe 'ka'"))


#: round 28's ring whose partitions also take the free buffer FB_W / FB_R (`fb` or 0)
RING_FB = kernel(loop("for p in range(N):", put("p")), loop("for p in range(N):", get("p")),
                 extra="\n\ndef mkbuf():\n    return tle.gpu.alloc([2, 64], tl.float32)\n")
RING_FB = (RING_FB
           .replace("    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))\n",
                    "    kv = tle.pipe(capacity=2, tile=mkbuf())\n    fb = mkbuf()\n")
           .replace("(produce, (kv, x_ptr, N, C))", "(produce, (kv, x_ptr, N, C, FB_W))")
           .replace("(consume, (kv, y_ptr, N, C))", "(consume, (kv, y_ptr, N, C, FB_R))")
           .replace("def produce(kv, x_ptr, N, C: tl.constexpr):",
                    "def produce(kv, x_ptr, N, C: tl.constexpr, fb):")
           .replace("def consume(kv, y_ptr, N, C: tl.constexpr):",
                    "def consume(kv, y_ptr, N, C: tl.constexpr, fb):"))
#: a store of the free buffer, and a store out of what it holds
FB_STORE = "    tl.store(tle.gpu.local_ptr(fb), tl.zeros([2, 64], tl.float32))\n"
FB_READ = ("    tl.store(y_ptr + 128 + tl.arange(0, 64), "
           "tl.sum(tl.load(tle.gpu.local_ptr(fb)), 0))\n")


def test_a_helpers_free_buffer_is_not_another_calls_pipe_field(tmp_path, capsys):
    """Before: rejected, field-buffer (`fb` "reaches the buffer of field 'tile' of pipe 'kv'"):
    the free buffer of the second call was read as the pipe field of the first. One partition
    writing and reading it is verified."""
    text = (RING_FB.replace("FB_W", "0").replace("FB_R", "fb")
            .replace("    r = kv.reader()\n", "    r = kv.reader()\n" + FB_STORE + FB_READ))
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, "verified")


def test_a_helpers_free_buffer_two_partitions_race_on(tmp_path, capsys):
    """Before: rejected as field-buffer; now the race it is (buffer-race, naming both)."""
    text = (RING_FB.replace("FB_W", "fb").replace("FB_R", "fb")
            .replace("    w = kv.writer()\n", "    w = kv.writer()\n" + FB_STORE)
            .replace("    r = kv.reader()\n", "    r = kv.reader()\n" + FB_READ))
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, ("rejected", "[buffer-race]", "'produce' writes it", "'consume' reads it"))
    assert "[field-buffer]" not in err, err


def test_one_helpers_buffers_on_two_paths_are_two_buffers(tmp_path, capsys):
    """`fb` bound to one helper's buffer on each path of a run-time `if` names two buffers, as
    two allocs written out do (unknown-buffer); it was read as one buffer and verified."""
    text = (RING_FB.replace("FB_W", "0").replace("FB_R", "fb")
            .replace("    fb = mkbuf()\n",
                     "    if N > 0:\n        fb = mkbuf()\n    else:\n        fb = mkbuf()\n")
            .replace("    r = kv.reader()\n", "    r = kv.reader()\n" + FB_READ))
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, ("rejected", "[unknown-buffer]"))


# ------------------------------------- B: a pipe handle a condition on a constexpr chooses

#: two pipes `ka`, `kb`; the writer fills the pipe of the handle `h` that CHOOSE binds (from
#: `wa` and `wb`), the reader drains `ka`: verified where C's value picks `wa`
CHOSEN = HEAD + '''@tle.jit
def k(x_ptr, y_ptr, N, C: tl.constexpr):
    tle.assume(N >= 0)
    ka = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    kb = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (ka, kb, x_ptr, N, C)), (consume, (ka, y_ptr, N))],
                            [4], [232])


def produce(ka, kb, x_ptr, N, C: tl.constexpr):
    wa = ka.writer()
    wb = kb.writer()
CHOOSE
    for p in range(N):
        s = h.acquire(p)
        tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + tl.arange(0, 64)))
        h.commit(p)


def consume(ka, y_ptr, N):
    r = ka.reader()
    for p in range(N):
        res = r.wait(p)
        tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))
        r.release(p)


def pick(a, b, c: tl.constexpr):
    if c > 3:
        x = a
    else:
        x = b
    return x


DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"},
                  "constexprs": {"C": 5}}
'''

CHOICES = {
    "ifexp": "h = wa if C > 3 else wb",
    "if": "if C > 3:\n    h = wa\nelse:\n    h = wb",
    "helper": "h = pick(wa, wb, C)",
    "local-constexpr": "U: tl.constexpr = C > 3\nif U:\n    h = wa\nelse:\n    h = wb",
}


def chosen(choose: str) -> str:
    return CHOSEN.replace("CHOOSE", "".join(f"    {line}\n" for line in choose.splitlines()))


@pytest.mark.parametrize("choice", sorted(CHOICES))
def test_a_handle_a_constexpr_chooses_is_read_specialised(tmp_path, capsys, choice):
    """Before: rejected, exit 1 (unknown-handle, or "`h` holds different values on different
    paths"), with or without --param C=5, where Python picks `wa`. Now read specialised to C = 5
    (DEFAULT_CONFIG), verified, and lowered with `ka`'s barriers in the writer."""
    code, err = dump(tmp_path, capsys, chosen(CHOICES[choice]))
    expect(code, err, "verified")
    assert "read specialised to C=5" in err and "with C = 5 (read specialised)" in err, err
    code, gluon, err = run_dump(capsys, "--gluon", str(tmp_path / "kernel.py"))
    assert code == 0, err
    writer = gluon.split("def produce(", 1)[1].split("@gluon.jit", 1)[0]
    assert "mbarrier.wait(ka_empty0" in writer and "mbarrier.arrive(ka_full0" in writer, writer
    assert "kb_full0" not in writer, writer


@pytest.mark.parametrize("choice", sorted(CHOICES))
def test_a_handle_a_constexpr_chooses_badly_is_rejected(tmp_path, capsys, choice):
    """The twin: at --param C=2 the writer fills `kb` and the reader waits on `ka`."""
    path = tmp_path / "kernel.py"
    path.write_text(chosen(CHOICES[choice]))
    code, _, err = run_dump(capsys, "-q", "--param", "C=2", str(path))
    expect(code, err, ("rejected", "[wait-never-committed]", "read specialised to C=2"))


def test_a_handle_a_constexpr_chooses_needs_its_value(tmp_path, capsys):
    """Without a value of C (no DEFAULT_CONFIG constexprs, no --param) nothing is verified: the
    error names the constexpr to give."""
    text = chosen(CHOICES["ifexp"]).replace(',\n                  "constexprs": {"C": 5}}', "}")
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, ("rejected", "[constexpr-operand]", "tle-dump --param C="))


@pytest.mark.parametrize("choose", [
    "h = wa if N > 3 else wb",
    "if N > 3:\n    h = wa\nelse:\n    h = wb",
    "h = wa if C > N else wb",
], ids=["ifexp-run-time", "if-run-time", "ifexp-mixed"])
def test_held_a_handle_chosen_at_run_time_is_refused(tmp_path, capsys, choose):
    code, err = dump(tmp_path, capsys, chosen(choose))
    expect(code, err, ("rejected",))
    assert "read specialised" not in err and (
        "[unknown-handle]" in err or "holds different values on different paths" in err), err


# ---------------------------------------------------- C: two free buffers one name spells

#: round 28's ring whose writer stores to the free buffer `fa` and whose reader reads `fc`
TWO_FREE = (RING_FB.replace("FB_W", "fa").replace("FB_R", "fc")
            .replace("    w = kv.writer()\n", "    w = kv.writer()\n" + FB_STORE)
            .replace("    r = kv.reader()\n", "    r = kv.reader()\n" + FB_READ)
            + "\n\ndef mk2():\n    fb = tle.gpu.alloc([2, 64], tl.float32)\n    return fb\n")


@pytest.mark.parametrize("decls", [
    "fa = mk2()\nfc = mk2()",
    "fc = tle.gpu.alloc([2, 64], tl.float32)\nfa = fc\nfc = tle.gpu.alloc([2, 64], tl.float32)",
    "fb = tle.gpu.alloc([2, 64], tl.float32)\nfa = fb\nfc = mk2()",
], ids=["helper-twice", "name-bound-again", "helper-beside-body"])
def test_two_free_buffers_of_one_name_are_two(tmp_path, capsys, decls):
    """Before: rejected, buffer-race on `fb` (or `fc`): the two buffers had one KIR name."""
    text = TWO_FREE.replace("    fb = mkbuf()\n",
                            "".join(f"    {line}\n" for line in decls.splitlines()))
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, "verified")
    code, kir, err = run_dump(capsys, "--print-ir", "-p", "verify-protocol",
                              str(tmp_path / "kernel.py"))
    assert code == 0, err
    assert len([ln for ln in kir.splitlines() if ln.startswith("  buffer ")]) == 2, kir
    (tmp_path / "k.kir").write_text(kir)
    code, _, err = run_dump(capsys, "-q", str(tmp_path / "k.kir"))
    expect(code, err, "verified")


def test_held_one_free_buffer_under_two_names_still_races(tmp_path, capsys):
    text = TWO_FREE.replace("    fb = mkbuf()\n", "    fa = mk2()\n    fc = fa\n")
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, ("rejected", "[buffer-race]"))


# ------------------------------------------------------------------------ D: probes that held

READS = loop("for p in range(N):", get("p"))
WRITES = loop("for p in range(N):", put("p"))
#: helpers: a writer made in a helper, a window three helpers deep, a recursive window, a
#: window that reads its slot after the release
HELPERS = (
    "\n\ndef wr(kv):\n    return kv.writer()\n"
    "\n\ndef a1(w, x_ptr, p):\n    a2(w, x_ptr, p)\n"
    "\n\ndef a2(w, x_ptr, p):\n    a3(w, x_ptr, p)\n    a3(w, x_ptr, p)\n"
    f"\n\ndef a3(w, x_ptr, p):\n    s = w.acquire(p)\n    {FILL}\n    w.commit(p)\n"
    "\n\ndef rec(w, x_ptr, p, d: tl.constexpr):\n    if d > 0:\n        rec(w, x_ptr, p, d - 1)\n"
    f"\n\ndef late(r, y_ptr, p):\n    res = r.wait(p)\n    r.release(p)\n    {DRAIN}\n"
    "\n\ndef run(late, r, y_ptr, p):\n    late(r, y_ptr, p)\n"
    f"\n\ndef good(r, y_ptr, p):\n    res = r.wait(p)\n    {DRAIN}\n    r.release(p)\n"
)
HELD = {
    "writer obtained twice": (
        loop("for p in range(N):", f"w2 = kv.writer()\ns = w2.acquire(p)\n{FILL}\nw.commit(p)"),
        READS, "verified"),
    "writer in the reader's partition": (
        WRITES, READS + "w3 = kv.writer()\ns = w3.acquire(N)\nw3.commit(N)\n",
        ("rejected", "[two-writers]")),
    "writer returned by a helper": ("w = wr(kv)\n" + WRITES, READS, "verified"),
    "a helper's window twice, three deep": (
        loop("for p in range(N):", "a1(w, x_ptr, p)"), READS, ("rejected", "[phase-aliasing]")),
    "recursion": (loop("for p in range(N):", "rec(w, x_ptr, p, 1)"), READS,
                  ("rejected", "[recursion]")),
    "a parameter shadowing a helper's name": (
        WRITES, loop("for p in range(N):", "run(good, r, y_ptr, p)"), "verified"),
    "a parameter shadowing it, given the late helper": (
        WRITES, loop("for p in range(N):", "run(late, r, y_ptr, p)"),
        ("rejected", "[access-outside-window]")),
    "a negative static_range step": (
        loop("for p in tl.static_range(3, -1, -1):", put("3 - p")),
        loop("for p in range(4):", get("p")), "verified"),
    "a negative static_range step, unreversed": (
        loop("for p in tl.static_range(3, -1, -1):", put("p")),
        loop("for p in range(4):", get("p")), ("rejected", "[phase-aliasing]")),
    "tl.range's num_stages by position": (
        loop("for p in tl.range(0, N, 1, 3):", put("p")), READS, ("rejected", "[bad-loop]")),
    "a skipped index past the cutoff": (
        loop("for p in range(N):", loop("if p != 777:", put("p"))), READS,
        ("rejected", "[wait-never-committed]", "when N=778")),
    "the loop variable rebound": (
        loop("for p in range(N):", "p = p + 1\n" + put("p - 1")), READS, "verified"),
    "the loop variable rebound, used": (
        loop("for p in range(N):", "p = p + 1\n" + put("p")), READS,
        ("rejected", "[wait-never-committed]")),
    "an index stepping past a phase": (
        loop("for p in range(N):", put("4 * p")), loop("for p in range(N):", get("4 * p")),
        ("rejected", "[phase-aliasing]")),
}


@pytest.mark.parametrize("name", sorted(HELD))
def test_held_handles_helpers_and_loops(tmp_path, capsys, name):
    writer, reader, want = HELD[name]
    code, err = dump(tmp_path, capsys, kernel(writer, reader, extra=HELPERS))
    expect(code, err, want)


WS = ("tle.gpu.warp_specialize([(produce, (kv, x_ptr, N, C)), (consume, (kv, y_ptr, N, C))],\n"
      "                            [4], [232])")
PARTS = "[(produce, (kv, x_ptr, N, C)), (consume, (kv, y_ptr, N, C))]"
WS_HELD = {
    "a lambda": ("tle.gpu.warp_specialize([(produce, (kv, x_ptr, N, C)), (lambda kv, y, n, c: "
                 "consume(kv, y, n, c), (kv, y_ptr, N, C))], [4], [232])", "[unknown-partition]"),
    "a partial": ("tle.gpu.warp_specialize([(produce, (kv, x_ptr, N, C)), (functools.partial("
                  "consume, kv), (y_ptr, N, C))], [4], [232])", "[unknown-partition]"),
    "twice": (WS + "\n    " + WS, "[bad-warp-specialize]"),
    "in an if": ("if N > 0:\n        " + WS.replace("\n", "\n    "), "[bad-warp-specialize]"),
    "its list in a variable": (f"parts = {PARTS}\n    tle.gpu.warp_specialize(parts, [4], [232])",
                               "[bad-warp-specialize]"),
    "more warp counts than workers": (f"tle.gpu.warp_specialize({PARTS}, [4, 4], [232, 232])",
                                      "[bad-warp-specialize]"),
    "3 warps": (f"tle.gpu.warp_specialize({PARTS}, [3], [232])", "[bad-warps]"),
    "233 registers": (f"tle.gpu.warp_specialize({PARTS}, [4], [233])", "[bad-warp-specialize]"),
    "one function twice": ("tle.gpu.warp_specialize([(produce, (kv, x_ptr, N, C)), (prod2, "
                           "(kv, x_ptr, N, C))], [4], [232])", "[duplicate-partition]"),
}


@pytest.mark.parametrize("name", sorted(WS_HELD))
def test_held_partitions_the_kernel_cannot_run_are_refused(tmp_path, capsys, name):
    call, check = WS_HELD[name]
    text = kernel(loop("for p in range(N):", put("p")), READS,
                  extra="\n\nimport functools\n\nprod2 = produce\n")
    assert WS in text
    code, err = dump(tmp_path, capsys, text.replace(WS, call))
    expect(code, err, ("rejected", check))


def test_held_a_partitions_returned_atomic_runs(tmp_path, capsys):
    """A worker's `return tl.atomic_add(...)`: the value is dropped, the atomic kept."""
    code, err = dump(tmp_path, capsys, kernel(WRITES, READS + "return tl.atomic_add(y_ptr, 1.0)"))
    expect(code, err, "verified")
    code, gluon, err = run_dump(capsys, "--gluon", str(tmp_path / "kernel.py"))
    assert code == 0, err
    assert "gl.atomic_add(y_ptr, 1.0)" in gluon.split("def consume(", 1)[1], gluon


def test_two_partitions_own_buffers_of_one_name_are_two(tmp_path, capsys):
    """Each partition allocating its own `scr` (one writes it, the other reads its own): two
    buffers. Before: rejected, buffer-race on `scr` (one KIR name for both)."""
    own = "scr = tle.gpu.alloc([64], tl.float32)\n"
    writer = own + "tl.store(tle.gpu.local_ptr(scr), tl.load(x_ptr + tl.arange(0, 64)))\n"
    reader = own + ("tl.store(y_ptr + 256 + tl.arange(0, 64), "
                    "tl.load(tle.gpu.local_ptr(scr)))\n")
    code, err = dump(tmp_path, capsys, kernel(writer + WRITES, reader + READS))
    expect(code, err, "verified")


@pytest.mark.parametrize("c, want", [("5", "verified"), ("2", ("rejected", "[unconsumed]"))])
def test_a_pipe_the_kernel_body_chooses_by_a_constexpr(tmp_path, capsys, c, want):
    """`kk = ka if C > 3 else kb` in the kernel body, handed to the writer: before, rejected
    (unknown-handle) at any C; now read specialised to C."""
    text = (chosen("h = ka.writer()")
            .replace("    tle.gpu.warp_specialize([(produce, (ka, kb,",
                     "    kk = ka if C > 3 else kb\n"
                     "    tle.gpu.warp_specialize([(produce, (kk, kb,")
            .replace('"constexprs": {"C": 5}', '"constexprs": {"C": ' + c + "}"))
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, want)
    assert f"read specialised to C={c}" in err, err


# -------------------------------------------- E: one free buffer reached under two names

#: round 28's ring whose writer stores to `fa` and whose reader reads `fc`, DECL binding them
ONE_FREE = (RING_FB.replace("FB_W", "fa").replace("FB_R", "fc")
            .replace("    w = kv.writer()\n", "    w = kv.writer()\n" + FB_STORE)
            .replace("    r = kv.reader()\n", "    r = kv.reader()\n" + FB_READ)
            + "\n\ndef mkt():\n    return (tle.gpu.alloc([2, 64], tl.float32),)\n")
ONE_BUFFER_TWICE = {
    "tuple-item": "t = (tle.gpu.alloc([2, 64], tl.float32),)\nfa = t[0]\nfc = t[0]",
    "tuple-unpacked": "t = (tle.gpu.alloc([2, 64], tl.float32), 1)\nfa, _ = t\nfc, _ = t",
    "helper-tuple": "t = mkt()\nfa = t[0]\nfc = t[0]",
}


@pytest.mark.parametrize("decls", ONE_BUFFER_TWICE.values(), ids=ONE_BUFFER_TWICE.keys())
def test_one_buffer_bound_twice_from_a_tuple_races(tmp_path, capsys, decls):
    """Before: verified, exit 0: `fa` and `fc`, one tle.gpu.alloc reached through a tuple's
    item twice, were two buffers of the KIR (each named at its binding), so the writer's store
    into `fa` and the reader's load of `fc`, unordered accesses of one shared buffer, were no
    race to the check."""
    text = ONE_FREE.replace("    fb = mkbuf()\n",
                            "".join(f"    {line}\n" for line in decls.splitlines()))
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, ("rejected", "[buffer-race]", "shared buffer `fa`", "'produce' writes it",
                       "'consume' reads it"))


def test_held_one_buffer_bound_twice_read_by_both_is_verified(tmp_path, capsys):
    """The twin: both partitions only read it (the writer's store moved to the reader)."""
    text = (ONE_FREE.replace("    fb = mkbuf()\n", "    t = mkt()\n    fa = t[0]\n    fc = t[0]\n")
            .replace("    w = kv.writer()\n" + FB_STORE,
                     "    w = kv.writer()\n" + FB_READ.replace("y_ptr + 128", "x_ptr + 128")))
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, "verified")


#: round 28's ring whose partitions take the tuple ARG_W / ARG_R and bind its item to a local
PART_TUPLE = (RING_FB.replace("    fb = mkbuf()\n", "    t = mkt()\n")
              .replace("FB_W", "ARG_W").replace("FB_R", "ARG_R")
              .replace("    w = kv.writer()\n", "    w = kv.writer()\n    fz = fb[0]\n"
                       + FB_STORE.replace("(fb)", "(fz)"))
              .replace("    r = kv.reader()\n", "    r = kv.reader()\n    fb = fb[0]\n" + FB_READ)
              + "\n\ndef mkt():\n    return (tle.gpu.alloc([2, 64], tl.float32),)\n")


@pytest.mark.parametrize("arg_w, arg_r, want", [
    ("t", "t", ("rejected", "[buffer-race]", "shared buffer `fz`")),
    ("mkt()", "mkt()", "verified"),
], ids=["one-tuple", "a-tuple-each"])
def test_a_tuples_buffer_named_in_each_partition(tmp_path, capsys, arg_w, arg_r, want):
    """One tuple `t` handed to both partitions, its buffer bound to `fz` in the writer and `fb`
    in the reader: before, verified (two names, two buffers of the KIR) where they race. A
    tuple allocated for each partition (`mkt()` twice): before, a buffer-race on `fb` (one
    alloc node, one buffer); two buffers, verified."""
    text = PART_TUPLE.replace("ARG_W", arg_w).replace("ARG_R", arg_r)
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, want)


#: the writer is handed `(fa, T_W)` and stores through `fbs[0] if N > 0 else fbs[1][0]`; the
#: reader reads R_ARG's buffer (`fc`, bound to `t[0]` in the kernel body, or `t[0]` itself)
CHOICE_OF_ITEM = (RING_FB.replace("    fb = mkbuf()\n", "    t = mkt()\nFC    fa = mkbuf()\n")
                  .replace("FB_W", "(fa, T_W)").replace("FB_R", "R_ARG")
                  .replace("def produce(kv, x_ptr, N, C: tl.constexpr, fb):\n    w = kv.writer()\n",
                           "def produce(kv, x_ptr, N, C: tl.constexpr, fbs):\n    w = kv.writer()\n"
                           "    fb = fbs[0] if N > 0 else fbs[1][0]\n" + FB_STORE)
                  .replace("def consume(kv, y_ptr, N, C: tl.constexpr, fb):\n    r = kv.reader()\n",
                           "def consume(kv, y_ptr, N, C: tl.constexpr, fr):\n    r = kv.reader()\n"
                           "    fb = RD\n" + FB_READ)
                  + "\n\ndef mkt():\n    return (tle.gpu.alloc([2, 64], tl.float32),)\n")


@pytest.mark.parametrize("fc, t_w, r_arg, rd, want", [
    ("    fc = t[0]\n", "t", "fc", "fr", ("rejected", "[buffer-race]", "shared buffer `fc`")),
    ("", "t", "t", "fr[0]", ("rejected", "[buffer-race]")),
    ("    fc = t[0]\n", "mkt()", "fc", "fr", "verified"),
], ids=["named-in-the-body", "named-nowhere", "another-tuple"])
def test_a_tuples_buffer_chosen_by_a_conditional_expression(tmp_path, capsys, fc, t_w, r_arg,
                                                            rd, want):
    """Before: verified, exit 0, in the first two: the tuple's item `fbs[1][0]` (the buffer the
    reader reads) was None in `fbs[0] if N > 0 else fbs[1][0]`, so the writer's store at N = 0
    reached `fa` alone for the race check. Now the item is the buffer (its name, or `_buf1`);
    a tuple of its own (`mkt()` again) is another buffer, verified."""
    text = (CHOICE_OF_ITEM.replace("FC", fc).replace("T_W", t_w).replace("R_ARG", r_arg)
            .replace("RD", rd))
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, want)


#: both partitions take the tuple `t` of two buffers; the writer stores into `t[1]` through a
#: helper's parameter, the reader reads `t[R]`
HELPER_ITEM = (RING_FB.replace("    fb = mkbuf()\n", "    t = (tle.gpu.alloc([2, 64], tl.float32), "
                               "tle.gpu.alloc([2, 64], tl.float32))\n")
               .replace("FB_W", "t").replace("FB_R", "t")
               .replace("    w = kv.writer()\n", "    w = kv.writer()\n    st0(fb[1])\n")
               .replace("    r = kv.reader()\n", "    r = kv.reader()\n    q = fb[R]\n"
                        + FB_READ.replace("(fb)", "(q)"))
               + "\n\ndef st0(b):\n" + FB_STORE.replace("(fb)", "(b)"))


@pytest.mark.parametrize("item, want", [
    ("1", ("rejected", "[buffer-race]", "shared buffer `b`")),
    ("0", "verified"),
], ids=["the-same-item", "the-other-item"])
def test_a_tuples_buffer_given_to_a_helper(tmp_path, capsys, item, want):
    """Before: rejected in both, by the lowering ("name '_st01_b' is not defined"): the helper's
    parameter given a buffer no name held was an unbound name, whose store the race check did
    not see either. Now named for the parameter: the race found, the other item verified."""
    code, err = dump(tmp_path, capsys, HELPER_ITEM.replace("fb[R]", f"fb[{item}]"))
    expect(code, err, want)
