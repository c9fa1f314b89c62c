"""A seventy-first adversarial round (adversarial round 71): away from the arithmetic and the
tl.static_range readings of rounds 65-70, the protocol's edges where what the verifier orders
and what the lowered kernel synchronises may part: free shared buffers touched by several
partitions, named-barrier pipes, TMA copies into slots, field views and the closed flag, early
exits and warp counts, and above all the memory-race check's hand-offs against the barriers the
lowering emits for cp.async-filled slots (docs/lowering.md, "arrive unit"). Each case is a small
kernel read by tle-dump's main(); where the truth is the lowered kernel, its Gluon (``--gluon``)
is read.

False verdicts, fixed:

- A cp.async gather whose slot pointer is not written in the store itself: ``dst =
  tle.gpu.local_ptr(s.tile)`` then ``tl.store(dst, tl.load(x_ptr + ...))`` (or the pointer given
  to a helper ``fill(d, src)``, a tuple's item ``pp[0]``, ``local_ptr(s.tile) + 0``, a name bound
  to a name). The lowering follows the pointer's value and copies the tile by cp.async
  (``async_copy_global_to_shared``), whose global read completes only at the commit of that ring;
  the memory-race check marked a gathered load only where ``local_ptr(slot.f)`` stood in the
  store, so it took the load as done at its line and ordered it by another pipe's hand-off
  (``sig.commit(t)`` after the gather, the reader's ``sig.wait(t)`` before it overwrites x's
  tile): verified, exit 0, while the copy may read the overwritten tile. FIXED:
  frontend/race_sites.py ``_slot_targets`` follows names, tuples, ``+`` / ``-`` and choices to
  the slot pointer, as the lowering does: rejected (memory-race); ordered by the ring's own
  hand-off it stays verified.
- A cp.async gather into field ``a`` of a pipe of two field groups (readers ``ra`` of ``a``, ``rb``
  of ``b``, ``b`` stored from registers), with ``rb``'s partition overwriting the gathered tile
  of x after its ``wait(t)``: verified, exit 0. The copy's per-thread arrive
  (``cp.async.mbarrier.arrive``) is on the full barrier of ``a``'s group; ``rb`` waits ``b``'s,
  which the elected arrive completes with the copy still reading. The check took any wait of the
  ring as ordering the gather. FIXED: frontend/race_order.py ``ordered`` counts a commit -> wait
  for a gathered load only where the reader's view holds the gathered field: rejected; a
  reader of both fields (or of all) stays verified.
- A writer whose slot is filled only by gathers, with a global store before the acquire
  (``tl.store(y_ptr + ...)``, then ``acquire``, gather, ``commit``) and a reader loading that
  row of y after ``wait(t)``: verified, exit 0. The lowering's commit of such a slot is
  ``async_copy.mbarrier_arrive`` alone (arrive unit "thread", lowering/plan.py ``arrive_mode``),
  one ``cp.async.mbarrier.arrive.noinc`` per thread with no bar.sync before it (the PTX of the
  case below), which tracks the thread's copies and is no release of its other accesses: the
  project's own rule for named-pipe hops (docs/lowering.md, rule 10's hops: assign-layouts makes
  such a commit "mixed" there) was not applied to global memory. FIXED: frontend/race_order.py
  ``releases`` (with race_sites.py ``Part.fills``): a commit -> wait orders the writer's other
  accesses only where some field group of the reader's view gets an elected arrive (a register
  store, a TMA copy, a closed flag, a field the lowering cannot gather: a 1-D slot or 8 / 64-bit
  elements, or no gather at all), and the message says why: rejected, naming the pipe; with a
  register-stored field beside the gathered one, or a 1-D slot, it stays verified.

False refusals, fixed:

- ``tl.store(tle.gpu.local_ptr(s.tile), v, None)`` (a mask of None by position or keyword,
  Triton's default, which the lowering drops) was a store that may fill nothing, so the reader's
  read was refused (unwritten-field). FIXED: frontend/walk_calls.py reads a None mask as no mask.
- A helper with a guard clause, ``def put(w, p, x_ptr, N): if p >= N: return`` then the window
  (``acquire(p)`` ... ``commit(p)``), called in ``for p in range(N + 2)``, a correct ring, was
  refused ("`return` is allowed only as a helper's last statement"), where Triton 3.6 compiles
  it (the oracle's TTIR: ``cf.cond_br`` to a ``tt.return``). FIXED: frontend/build_calls.py
  ``guard_clauses`` reads such an `if` as an `if` / `else` holding the rest of the helper:
  verified, lowered as ``if (p >= N): pass else: ...``; the guard ``if p == 3: return`` of the
  writer alone is found (wait-never-committed). A guard beside a returned value stays refused,
  as Triton refuses it ("Inconsistent return types: void and int32"). Round 24 pinned such a
  helper as refused "as Triton refuses it", a claim no oracle had checked: its test now expects
  the verdict (tests/test_adversarial_verdicts_24.py).

Held (false refusals left): the same guard clause in a partition function itself (``if N ==
7: return`` before its loop of events), which Triton 3.6 compiles too, stays refused
(unsupported-control-flow, "restructure so the function returns after its last event"): a
partition's early return has its own reading (the constexpr-guarded one read specialised),
which a rewrite would change (lifted in round FR20 for a condition that reads no constexpr:
tests/test_false_refusals_20.py); and a free buffer written by one partition and read by another
after a hand-off that orders them is refused (buffer-race), as the check orders no free buffer
(the lowering does not translate free buffers yet).

Checked and held (tle-dump was right):

- free buffers (``tle.gpu.alloc`` of no pipe) touched by two partitions through ``q = local_ptr(fb);
  q = q + 0``, a loop-carried name, a name both branches bind, ``tl.where`` of two of them: all
  buffer-race; ``local_ptr(fb) + offs``, ``local_ptr(fb, 0)``, ``fb.index(0)``, an atomic on one:
  refused at the line;
- TMA copies under an ``if`` or a loop on loaded data, or a ``while``: tma-window; a descriptor
  chosen by a conditional expression or an ``if``: bad-tma; a descriptor whose box is not the slot
  (picked from a tuple): signature;
- closed flags: ``if not closed`` of the previous iteration's flag, of another pipe's flag, or of
  another index's flag guarding a read of the closing slot: unwritten-field, at the value;
- a reader obtained twice with two views (inconsistent-view); a slot or a loaded tile carried out
  of its loop (unknown-slot); a tile loaded in the window and fed to ``tl.dot`` after the
  release, through a tuple, ``.T.T`` or ``tl.trans`` (access-outside-window);
- partitions of 0, 3 or 16 warps (bad-warp-specialize, bad-warps, registers); a walrus index and
  a partition parameter with a default left out of the tuple: refused at the line; a trip count
  a partition loads itself, which another partition may load changed (non-affine-loop);
- two TMA-filled fields in two field groups: each copy completes on its own group's barrier,
  whose expect-tx counts its bytes;
- Triton 3.6's PTX has the partition's ``bar.sync`` before an elected ``mbarrier.arrive`` (a
  commit after a global store alone included: pinned below) and before the TMA ring's
  ``mbarrier.arrive.expect_tx`` (tle_kernels/gpu_tests/tma_ring.py, read by hand), so those
  commits order the writer's earlier global accesses as the check assumes.
"""

from __future__ import annotations

import pytest

from .adversarial_oracles import triton_ttir
from .adversarial_support import dump, expect, run_dump, write_kernel

HEAD = "import triton.language as tl\n\nimport tle_compiler as tle\n\n\n"

#: the [64, 64] fp32 tile of iteration t, row-major
OFFS = "offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]"

# ---------------------------------------------- A: a gather's slot pointer spelt through names

#: a ring `kv` of gathered x tiles and a ring `sig` of register-stored flags; the producer
#: gathers tile t (GATHER) and commits sig(t) before kv(t); the consumer runs CONSUME
GATHER_RING = HEAD + '''@tle.jit
def k(x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64, 64], tl.float32))
    sig = tle.pipe(capacity=2, flag=tle.gpu.alloc([2, 64, 64], tl.int32))
    tle.gpu.warp_specialize([(produce, (kv, sig, x_ptr, N)),
                             (consume, (kv, sig, x_ptr, y_ptr, N))], [4], [232])


def produce(kv, sig, x_ptr, N):
    OFFS
    w = kv.writer()
    ws = sig.writer()
    for t in range(N):
        s = w.acquire(t)
        GATHER
        g = ws.acquire(t)
        tl.store(tle.gpu.local_ptr(g.flag), tl.zeros([64, 64], tl.int32))
        ws.commit(t)
        w.commit(t)


def consume(kv, sig, x_ptr, y_ptr, N):
    OFFS
    r = kv.reader()
    rs = sig.reader()
    for t in range(N):
CONSUME


def fill(d, src):
    tl.store(d, tl.load(src))


DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"},
                  "constexprs": {}}
'''

#: the consumer overwrites x's tile t once sig(t) arrived, before it waits kv(t)
AFTER_SIG = '''        gs = rs.wait(t)
        f = tl.load(tle.gpu.local_ptr(gs.slot.flag))
        tl.store(x_ptr + t * 4096 + offs, f.to(tl.float32))
        rs.release(t)
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t)
        tl.store(y_ptr + t * 4096 + offs, v)'''

#: the same once kv(t) arrived: the ring's own commit orders the copy
AFTER_RING = '''        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t)
        gs = rs.wait(t)
        f = tl.load(tle.gpu.local_ptr(gs.slot.flag))
        tl.store(x_ptr + t * 4096 + offs, f.to(tl.float32))
        rs.release(t)
        tl.store(y_ptr + t * 4096 + offs, v)'''

SRC = "x_ptr + t * 4096 + offs"
SPELLINGS = {
    "in the store": f"tl.store(tle.gpu.local_ptr(s.tile), tl.load({SRC}))",
    "a name": f"dst = tle.gpu.local_ptr(s.tile)\n        tl.store(dst, tl.load({SRC}))",
    "a name of a name": (f"dst = tle.gpu.local_ptr(s.tile)\n        d2 = dst\n"
                         f"        tl.store(d2, tl.load({SRC}))"),
    "a helper's parameter": f"fill(tle.gpu.local_ptr(s.tile), {SRC})",
    "a tuple's item": (f"pp = (tle.gpu.local_ptr(s.tile), 0)\n"
                       f"        tl.store(pp[0], tl.load({SRC}))"),
    "plus 0": f"tl.store(tle.gpu.local_ptr(s.tile) + 0, tl.load({SRC}))",
}


def line_of(text: str, fragment: str) -> int:
    """The line of ``text`` (1-based) that holds ``fragment`` first."""
    return next(i for i, ln in enumerate(text.splitlines(), 1) if fragment in ln)


def gather_ring(gather: str, consume: str) -> str:
    return (GATHER_RING.replace("OFFS", OFFS).replace("GATHER", gather)
            .replace("CONSUME", consume))


@pytest.mark.parametrize("spelling", list(SPELLINGS))
def test_a_gather_is_ordered_by_its_ring_only_however_its_pointer_is_spelt(
        tmp_path, capsys, spelling):
    """Before: every spelling but the first was verified, exit 0 (a race: the copy may read the
    tile the consumer overwrites after sig's hand-off)."""
    code, err = dump(tmp_path, capsys, gather_ring(SPELLINGS[spelling], AFTER_SIG))
    expect(code, err, ("rejected", "[memory-race]", "fills a slot of pipe `kv`",
                       "copies by cp.async"))


@pytest.mark.parametrize("spelling", list(SPELLINGS))
def test_a_gather_ordered_by_its_ring_is_verified_and_lowered_as_a_copy(
        tmp_path, capsys, spelling):
    """The twin ordered by kv's own commit stays verified, and its Gluon copies the tile by
    cp.async whatever the spelling: the copy the check now orders is the one the GPU runs."""
    code, err = dump(tmp_path, capsys, gather_ring(SPELLINGS[spelling], AFTER_RING))
    expect(code, err, "verified")
    code, gluon, err = run_dump(capsys, "--gluon", str(tmp_path / "kernel.py"))
    assert code == 0, err
    assert "async_copy.async_copy_global_to_shared(kv_tile" in gluon, gluon


# ------------------------------------------------- B: a gather and a reader of another group

#: a pipe of two field groups: `a` gathered from x (read by `ra`), `b` stored from registers
#: (read by `rb`, of view RB_VIEW); rb's partition overwrites x's tile t after its wait(t)
TWO_GROUPS = HEAD + '''@tle.jit
def k(x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=2, readers=("ra", "rb"),
                  a=tle.gpu.alloc([2, 64, 64], tl.float32),
                  b=tle.gpu.alloc([2, 64, 64], tl.int32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (cons_a, (kv, y_ptr, N)),
                             (cons_b, (kv, x_ptr, N))], [4, 4], [168, 168])


def produce(kv, x_ptr, N):
    OFFS
    w = kv.writer()
    for t in range(N):
        s = w.acquire(t)
        tl.store(tle.gpu.local_ptr(s.a), tl.load(x_ptr + t * 4096 + offs))
        tl.store(tle.gpu.local_ptr(s.b), tl.zeros([64, 64], tl.int32))
        w.commit(t)


def cons_a(kv, y_ptr, N):
    OFFS
    r = kv.reader("ra", fields=("a",))
    for t in range(N):
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.a))
        r.release(t)
        tl.store(y_ptr + t * 4096 + offs, v)


def cons_b(kv, x_ptr, N):
    OFFS
    r = kv.reader("rb"RB_VIEW)
    for t in range(N):
        res = r.wait(t)
        f = tl.load(tle.gpu.local_ptr(res.slot.b))
        r.release(t)
        tl.store(x_ptr + t * 4096 + offs, f.to(tl.float32))


DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"},
                  "constexprs": {}}
'''


def two_groups(view: str) -> str:
    return TWO_GROUPS.replace("OFFS", OFFS).replace("RB_VIEW", view)


def test_a_reader_of_another_field_group_does_not_order_a_gather(tmp_path, capsys):
    """Before: verified, exit 0: rb waits kv.full of b's group (an elected arrive), not the one
    the copy's per-thread arrive counts."""
    text = two_groups(', fields=("b",)')
    code, err = dump(tmp_path, capsys, text)
    line = line_of(text, "tl.store(x_ptr + t * 4096 + offs, f.to(tl.float32))")
    expect(code, err, ("rejected", "[memory-race]", f"'cons_b' (store at line {line}",
                       "nor a wait of a reader whose view lacks field `a`"))
    # the lowering: the gathered group's commit is the per-thread cp.async arrive, the other
    # group's an elected arrive (the verified twin below has the same producer)
    code, err = dump(tmp_path, capsys, two_groups(', fields=("a", "b")'))
    expect(code, err, "verified")
    code, gluon, err = run_dump(capsys, "--gluon", str(tmp_path / "kernel.py"))
    assert code == 0, err
    assert "async_copy.mbarrier_arrive(kv_full0" in gluon, gluon
    assert "mbarrier.arrive(kv_full1" in gluon, gluon


@pytest.mark.parametrize("view", [', fields=("a", "b")', ""], ids=["both fields", "all fields"])
def test_a_reader_of_the_gathered_field_orders_it(tmp_path, capsys, view):
    code, err = dump(tmp_path, capsys, two_groups(view))
    expect(code, err, "verified")


# ---------------------------------------- C: a commit of gathered tiles alone is no release

#: the writer stores y's tile t, then fills kv's slot: FIELDS declares its fields, FILL fills
#: them; the reader loads y's tile t after its wait(t)
GLOBAL_HANDOFF = HEAD + '''@tle.jit
def k(x_ptr, y_ptr, z_ptr, N):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=2, FIELDS)
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, y_ptr, N)),
                             (consume, (kv, y_ptr, z_ptr, N))], [4], [232])


def produce(kv, x_ptr, y_ptr, N):
    OFFS
    w = kv.writer()
    for t in range(N):
        tl.store(y_ptr + t * 4096 + offs, tl.full([64, 64], 1.0, tl.float32))
        s = w.acquire(t)
        FILL
        w.commit(t)


def consume(kv, y_ptr, z_ptr, N):
    OFFS
    r = kv.reader()
    for t in range(N):
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile)) + tl.load(y_ptr + t * 4096 + offs)
        r.release(t)
        tl.store(z_ptr + t * 4096 + offs, v)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "z_ptr": "*fp32",
                                "N": "i32"},
                  "constexprs": {}}
'''

GATHERED = "tile=tle.gpu.alloc([2, 64, 64], tl.float32)"
GATHER = "tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + t * 4096 + offs))"


def global_handoff(fields: str = GATHERED, fill: str = GATHER) -> str:
    return (GLOBAL_HANDOFF.replace("OFFS", OFFS).replace("FIELDS", fields)
            .replace("FILL", fill))


def test_a_commit_of_gathered_tiles_alone_orders_no_global_store(tmp_path, capsys):
    """Before: verified, exit 0: the commit is each thread's cp.async.mbarrier.arrive, which
    does not order the thread's store of y."""
    text = global_handoff()
    code, err = dump(tmp_path, capsys, text)
    line = line_of(text, "tl.store(y_ptr + t * 4096 + offs, tl.full(")
    expect(code, err, ("rejected", "[memory-race]", f"'produce' (store at line {line}",
                       "the commits of pipe `kv` by 'produce' fill the slot with loaded tiles "
                       "only", "cp.async.mbarrier.arrive"))


def test_the_lowered_commit_of_gathered_tiles_is_the_per_thread_arrive_alone(tmp_path, capsys):
    """What the GPU runs for such a commit (the producer above, its reader not loading y):
    ``async_copy.mbarrier_arrive`` and no elected ``mbarrier.arrive`` of the full barrier."""
    text = global_handoff().replace(" + tl.load(y_ptr + t * 4096 + offs)", "")
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, "verified")
    code, gluon, err = run_dump(capsys, "--gluon", str(tmp_path / "kernel.py"))
    assert code == 0, err
    produce = gluon.split("def produce(", 1)[1].split("@gluon.jit", 1)[0]
    assert "async_copy.mbarrier_arrive(kv_full0" in produce, produce
    assert "mbarrier.arrive(kv_full0" not in produce.replace("async_copy.mbarrier_arrive", ""), \
        produce


@pytest.mark.parametrize("fields, fill", [
    # a register-stored field in the same group: the commit is "mixed", an elected arrive too
    (GATHERED + ",\n                  row=tle.gpu.alloc([2, 64], tl.int32)",
     GATHER + "\n        tl.store(tle.gpu.local_ptr(s.row), tl.arange(0, 64) + t)"),
    # a 1-D slot: the lowering loads it in registers and stores it (no cp.async)
    ("tile=tle.gpu.alloc([2, 4096], tl.float32)",
     "tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + t * 4096 + tl.arange(0, 4096)))"),
    # a tile computed from the load: a register store
    (GATHERED, "tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + t * 4096 + offs) * 2.0)"),
], ids=["a register field beside", "a 1-D slot", "a computed tile"])
def test_a_commit_with_an_elected_arrive_orders_the_global_store(tmp_path, capsys, fields, fill):
    text = global_handoff(fields, fill)
    if "4096]" in fields:  # the reader's 1-D tile beside y's
        text = text.replace(" + tl.load(y_ptr + t * 4096 + offs)",
                            ".reshape(64, 64) + tl.load(y_ptr + t * 4096 + offs)")
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, "verified")


# ------------------------------------------------------------ D: a mask of None (refused)

RING = HEAD + '''@tle.jit
def k(x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, y_ptr, N))],
                            [4], [232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    for p in range(N):
        s = w.acquire(p)
        STORE
        w.commit(p)


def consume(kv, y_ptr, N):
    r = kv.reader()
    for p in range(N):
        res = r.wait(p)
        tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))
        r.release(p)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"},
                  "constexprs": {}}
'''

FILL64 = "tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + tl.arange(0, 64))"


@pytest.mark.parametrize("mask", [", None", ", mask=None"], ids=["by position", "by keyword"])
def test_a_store_into_a_slot_with_a_mask_of_none_fills_it(tmp_path, capsys, mask):
    """Before: rejected, unwritten-field ("its write ... may not run, or write only part of
    the field (... stores with a mask ...)")."""
    code, err = dump(tmp_path, capsys, RING.replace("STORE", FILL64 + mask + ")"))
    expect(code, err, "verified")


def test_a_store_into_a_slot_with_a_mask_stays_refused(tmp_path, capsys):
    code, err = dump(tmp_path, capsys, RING.replace(
        "STORE", FILL64 + ", mask=tl.arange(0, 64) < 32)"))
    expect(code, err, ("rejected", "with a `mask` is not supported"))


# ------------------------------------------------------------------ E: checked and held

#: round 28's ring with a free buffer `fb` handed to both partitions; WRITE runs in the writer
#: after its loop, READ in the reader after its own
FREE = HEAD + '''@tle.jit
def k(x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    fb = tle.gpu.alloc([64], tl.float32)
    tle.gpu.warp_specialize([(produce, (kv, fb, x_ptr, N)), (consume, (kv, fb, y_ptr, N))],
                            [4], [232])


def produce(kv, fb, x_ptr, N):
    w = kv.writer()
    for p in range(N):
        s = w.acquire(p)
        tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + tl.arange(0, 64)))
        w.commit(p)
    WRITE


def consume(kv, fb, y_ptr, N):
    r = kv.reader()
    for p in range(N):
        res = r.wait(p)
        tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))
        r.release(p)
    tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(fb)))
'''

ZEROS = "tl.zeros([64], tl.float32)"


@pytest.mark.parametrize("write, want", [
    ("q = tle.gpu.local_ptr(fb)\n    q = q + 0\n    tl.store(q, " + ZEROS + ")", "[buffer-race]"),
    ("q = tle.gpu.local_ptr(fb)\n    for i in range(N):\n        tl.store(q, " + ZEROS
     + ")\n        q = q + 0", "[buffer-race]"),
    ("if N > 0:\n        q = tle.gpu.local_ptr(fb)\n    else:\n        q = tle.gpu.local_ptr(fb)"
     "\n    tl.store(q, " + ZEROS + ")", "[buffer-race]"),
    ("tl.store(tl.where(tl.arange(0, 64) < 32, tle.gpu.local_ptr(fb), tle.gpu.local_ptr(fb)), "
     + ZEROS + ")", "[buffer-race]"),
    ("tl.store(tle.gpu.local_ptr(fb) + tl.arange(0, 64), " + ZEROS + ")",
     "[unsupported-expression]"),
    ("tl.store(tle.gpu.local_ptr(fb, 0), " + ZEROS + ")", "[bad-call]"),
    ("tl.atomic_add(tle.gpu.local_ptr(fb), " + ZEROS + ")", "[unsupported-expression]"),
], ids=["plus 0", "loop-carried", "both branches", "tl.where", "offsets", "indices", "atomic"])
def test_held_a_free_buffer_written_by_one_partition_read_by_another(tmp_path, capsys, write,
                                                                      want):
    code, err = dump(tmp_path, capsys, FREE.replace("WRITE", write))
    expect(code, err, ("rejected", want))


CLOSED = HEAD + '''@tle.jit
def k(x_ptr, out_ptr):
    ring = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (ring, x_ptr)), (consume, (ring, out_ptr))], [4], [232])


def produce(ring, x_ptr):
    w = ring.writer()
    slot = w.acquire(0)
    tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + tl.arange(0, 64)))
    w.commit(0)
    w.close(1)


def consume(ring, out_ptr):
    r = ring.reader()
    acc = tl.zeros([64], tl.float32)
    res0 = r.wait(0)
    res1 = r.wait(1)
    if not GUARD.is_closed:
        acc += tl.load(tle.gpu.local_ptr(res1.slot.tile))
    r.release(0)
    r.release(1)
    tl.store(out_ptr + tl.arange(0, 64), acc)
'''


def test_held_a_read_guarded_by_another_index_closed_flag(tmp_path, capsys):
    """res0's flag (index 0, open) guards a read of index 1, the closing slot: it runs."""
    code, err = dump(tmp_path, capsys, CLOSED.replace("GUARD", "res0"))
    expect(code, err, ("rejected", "[unwritten-field]", "reads ring.tile at index 1"))
    code, err = dump(tmp_path, capsys, CLOSED.replace("GUARD", "res1"))
    expect(code, err, "verified")


TMA = HEAD + '''BM = tl.constexpr(64)
BN = tl.constexpr(256)


@tle.jit(num_warps=4)
def k(x_desc, z_desc, f_ptr, y_ptr, N):
    ring = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, BM, BN], tl.bfloat16))
    tle.gpu.warp_specialize([(produce, (ring, x_desc, z_desc, f_ptr, N)),
                             (consume, (ring, y_ptr, N))], [4], [232])


def produce(ring, x_desc, z_desc, f_ptr, N):
    w = ring.writer()
    for t in range(N):
        slot = w.acquire(t)
        COPY
        w.commit(t)


def consume(ring, y_ptr, N):
    r = ring.reader()
    for t in range(N):
        res = r.wait(t)
        tile = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t)
        rows = t * BM + tl.arange(0, BM)
        tl.store(y_ptr + rows[:, None] * BN + tl.arange(0, BN)[None, :], tile)


DEFAULT_CONFIG = {"signature": {"x_desc": "tensordesc<bf16[64, 256]>",
                                "z_desc": "tensordesc<bf16[32, 256]>", "f_ptr": "*i32",
                                "y_ptr": "*bf16", "N": "i32"},
                  "constexprs": {}}
'''

COPY = "tle.gpu.tma_load(slot.tile, DESC, [t * BM, 0])"


@pytest.mark.parametrize("copy, want", [
    ("if tl.load(f_ptr + t) > 0:\n            " + COPY.replace("DESC", "x_desc"),
     "[tma-window]"),
    ("for i in range(tl.load(f_ptr + t)):\n            " + COPY.replace("DESC", "x_desc"),
     "[tma-window]"),
    (COPY.replace("DESC", "x_desc if t % 2 == 0 else z_desc"), "[bad-tma]"),
    (COPY.replace("DESC", "(x_desc, z_desc)[1]"), "[signature]"),
], ids=["if on data", "loop on data", "chosen descriptor", "a tuple's descriptor"])
def test_held_tma_copies_whose_bytes_are_not_the_slot(tmp_path, capsys, copy, want):
    code, err = dump(tmp_path, capsys, TMA.replace("COPY", copy))
    expect(code, err, ("rejected", want))
    code, err = dump(tmp_path, capsys, TMA.replace("COPY", COPY.replace("DESC", "x_desc")))
    expect(code, err, "verified")


def test_held_the_ptx_has_a_bar_sync_before_an_elected_arrive(tmp_path, capsys):
    """Triton 3.6 puts the partition's bar.sync before an elected mbarrier.arrive even where the
    window touched no shared memory (a global store, then the commit): the commit orders every
    thread's store, as the memory-race check assumes of an elected arrive."""
    text = HEAD + '''@tle.jit
def k(y_ptr, z_ptr):
    kv = tle.pipe(capacity=1, tile=tle.gpu.alloc([1, 128], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, y_ptr)), (consume, (kv, y_ptr, z_ptr))], [4], [232])


def produce(kv, y_ptr):
    w = kv.writer()
    w.acquire(0)
    tl.store(y_ptr + tl.arange(0, 128), tl.full([128], 1.0, tl.float32))
    w.commit(0)


def consume(kv, y_ptr, z_ptr):
    r = kv.reader()
    r.wait(0)
    v = tl.load(y_ptr + tl.arange(0, 128))
    r.release(0)
    tl.store(z_ptr + tl.arange(0, 128), v)


DEFAULT_CONFIG = {"signature": {"y_ptr": "*fp32", "z_ptr": "*fp32"}, "constexprs": {},
                  "num_warps": 4}
'''
    path = write_kernel(tmp_path, text)
    code, ptx, err = run_dump(capsys, "--ptx", str(path))
    assert code == 0, err
    lines = [ln.strip() for ln in ptx.splitlines()]
    stores = [i for i, ln in enumerate(lines) if ln.startswith("st.global")]
    arrives = [i for i, ln in enumerate(lines) if "mbarrier.arrive.shared::cta.b64" in ln
               and i > stores[0]]
    assert stores and arrives, ptx
    between = lines[stores[0]:arrives[0]]
    assert any(ln.startswith("bar.sync") for ln in between), "\n".join(between)


@pytest.mark.parametrize("warps, want", [
    ("0", "[bad-warp-specialize]"), ("3", "[bad-warps]"), ("16", "[registers]"),
], ids=["0 warps", "3 warps", "16 warps"])
def test_held_a_worker_of_another_warp_count(tmp_path, capsys, warps, want):
    code, err = dump(tmp_path, capsys, RING.replace("STORE", FILL64 + ")").replace(
        "[4], [232]", f"[{warps}], [232]"))
    expect(code, err, ("rejected", want))


def test_held_a_trip_count_each_partition_loads_itself(tmp_path, capsys):
    """A trip count a partition loads itself (``n = tl.load(x_ptr)`` in the writer): another
    partition's load of it may see another value (a store between, ordered by a hand-off), so
    it is no param the partitions share: refused, not verified (only a kernel-body load is one
    value for every partition)."""
    text = RING.replace("    for p in range(N):\n        s = w.acquire(p)",
                        "    n = tl.load(x_ptr)\n    for p in range(n):\n        s = w.acquire(p)")
    code, err = dump(tmp_path, capsys, text.replace("STORE", FILL64 + ")"))
    expect(code, err, ("rejected", "[non-affine-loop]"))


#: two TMA-filled fields in two field groups (readers `ra` of `a`, `rb` of `b`)
TWO_TMA_GROUPS = """import triton.language as tl

import tle_compiler as tle

BM = tl.constexpr(64)
BN = tl.constexpr(256)


@tle.jit(num_warps=4)
def k(x_desc, z_desc, y_ptr, u_ptr, N):
    ring = tle.pipe(capacity=2, readers=("ra", "rb"),
                    a=tle.gpu.alloc([2, BM, BN], tl.bfloat16),
                    b=tle.gpu.alloc([2, 32, BN], tl.bfloat16))
    tle.gpu.warp_specialize([(produce, (ring, x_desc, z_desc, N)),
                             (cons_a, (ring, y_ptr, N)), (cons_b, (ring, u_ptr, N))],
                            [4, 4], [168, 168])


def produce(ring, x_desc, z_desc, N):
    w = ring.writer()
    for t in range(N):
        slot = w.acquire(t)
        tle.gpu.tma_load(slot.b, z_desc, [t * 32, 0])
        tle.gpu.tma_load(slot.a, x_desc, [t * BM, 0])
        w.commit(t)


def cons_a(ring, y_ptr, N):
    r = ring.reader("ra", fields=("a",))
    for t in range(N):
        res = r.wait(t)
        tile = tl.load(tle.gpu.local_ptr(res.slot.a))
        r.release(t)
        rows = t * BM + tl.arange(0, BM)
        tl.store(y_ptr + rows[:, None] * BN + tl.arange(0, BN)[None, :], tile)


def cons_b(ring, u_ptr, N):
    r = ring.reader("rb", fields=("b",))
    for t in range(N):
        res = r.wait(t)
        tile = tl.load(tle.gpu.local_ptr(res.slot.b))
        r.release(t)
        rows = t * 32 + tl.arange(0, 32)
        tl.store(u_ptr + rows[:, None] * BN + tl.arange(0, BN)[None, :], tile)


DEFAULT_CONFIG = {"signature": {"x_desc": "tensordesc<bf16[64, 256]>",
                                "z_desc": "tensordesc<bf16[32, 256]>",
                                "y_ptr": "*bf16", "u_ptr": "*bf16", "N": "i32"},
                  "constexprs": {}}
"""


def test_held_two_tma_fields_in_two_groups_complete_their_own_barriers(tmp_path, capsys):
    """Each copy completes on its own group's full barrier, whose expect-tx is its bytes."""
    code, err = dump(tmp_path, capsys, TWO_TMA_GROUPS)
    expect(code, err, "verified")
    code, gluon, err = run_dump(capsys, "--gluon", str(tmp_path / "kernel.py"))
    assert code == 0, err
    assert "[(t * 32), 0], ring_full1.index(_ring_s1), ring_b.index(_ring_s1))" in gluon, gluon
    assert "[(t * BM), 0], ring_full0.index(_ring_s1), ring_a.index(_ring_s1))" in gluon, gluon
    assert "mbarrier.expect(ring_full0.index(_ring_s2), 32768)" in gluon, gluon
    assert "mbarrier.expect(ring_full1.index(_ring_s2), 16384)" in gluon, gluon


def test_the_ptx_of_a_gathers_only_commit_has_no_bar_sync_after_the_store(tmp_path, capsys):
    """The producer of the case above (its reader not loading y), compiled: between each
    thread's st.global of y and its cp.async.mbarrier.arrive no bar.sync or fence stands, so the
    reader's wait does not order the store (the elected arrive of a register-stored slot has a
    bar.sync before it: test_held_the_ptx_has_a_bar_sync_before_an_elected_arrive)."""
    text = global_handoff().replace(" + tl.load(y_ptr + t * 4096 + offs)", "")
    path = write_kernel(tmp_path, text)
    code, ptx, err = run_dump(capsys, "--ptx", str(path))
    assert code == 0, err
    lines = [ln.strip() for ln in ptx.splitlines()]
    stores = [i for i, ln in enumerate(lines) if ln.startswith("st.global")]
    arrive = next(i for i, ln in enumerate(lines) if ln.startswith("cp.async.mbarrier.arrive"))
    before = [i for i in stores if i < arrive]
    assert before, ptx
    between = lines[before[-1]:arrive]  # from the producer's last store of y to its arrive
    assert not any(ln.startswith(("bar.sync", "barrier.sync", "fence", "membar"))
                   for ln in between), "\n".join(between)


# ------------------------------------------------------ F: a helper's guard clause (refused)

#: round 28's ring whose writer runs its window in a helper with a guard clause GUARD, over
#: WRITER_RANGE
GUARDED = HEAD + '''@tle.jit
def k(x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, y_ptr, N))],
                            [4], [232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    for p in range(WRITER_RANGE):
        put(w, p, x_ptr, N)


def put(w, p, x_ptr, N):
    if GUARD:
        return
    s = w.acquire(p)
    tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + tl.arange(0, 64)))
    w.commit(p)


def consume(kv, y_ptr, N):
    r = kv.reader()
    for p in range(N):
        res = r.wait(p)
        tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))
        r.release(p)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"},
                  "constexprs": {}}
'''


def guarded(guard: str, writer_range: str = "N + 2") -> str:
    return GUARDED.replace("GUARD", guard).replace("WRITER_RANGE", writer_range)


def test_a_helper_with_a_guard_clause_is_read_as_an_if_else(tmp_path, capsys):
    """Before: rejected, unsupported-control-flow ("`return` is allowed only as a helper's last
    statement")."""
    code, err = dump(tmp_path, capsys, guarded("p >= N"))
    expect(code, err, "verified")
    code, gluon, err = run_dump(capsys, "--gluon", str(tmp_path / "kernel.py"))
    assert code == 0, err
    assert "if (p >= N):\n            pass\n        else:" in gluon, gluon


def test_a_guard_clause_that_skips_a_window_the_reader_waits_is_found(tmp_path, capsys):
    code, err = dump(tmp_path, capsys, guarded("p == 3", "N"))
    expect(code, err, ("rejected", "[wait-never-committed]", "waits index 3"))


def test_triton_compiles_a_helper_with_a_guard_clause(tmp_path, monkeypatch):
    """The oracle: Triton 3.6 compiles the helper's early return as a branch to its return."""
    ttir = triton_ttir(tmp_path, monkeypatch, '''import triton
import triton.language as tl


@triton.jit
def put(x_ptr, p, N):
    if p >= N:
        return
    tl.store(x_ptr + p, 1.0)


@triton.jit
def k(x_ptr, N, C: tl.constexpr):
    for p in range(N + 2):
        put(x_ptr, p, N)
''', "guard71")
    assert "cf.cond_br" in ttir and ttir.count("tt.return") >= 3, ttir


def test_a_guard_clause_beside_a_returned_value_stays_refused(tmp_path, capsys):
    text = guarded("p >= N").replace("    w.commit(p)\n\n\ndef consume",
                                     "    w.commit(p)\n    return p\n\n\ndef consume")
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, ("rejected", "`return` is allowed only as a helper's last statement"))
