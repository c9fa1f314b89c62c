"""A seventy-second adversarial round (adversarial round 72), on the memory-race check again:
after round 71's cp.async gathers, which accesses of global memory the check pairs at all, and
whether the hand-offs it counts are the ones the lowered kernel orders (TMA copies beside
cp.async gathers in one field group, pointers spelt through tuples, bindings, choices, member
calls and layout functions). Each case is a small kernel read by tle-dump's main(); where the
truth is Triton or the lowered kernel, Triton's own compile or the PTX the lowering compiles to
is read.

False verdicts, fixed:

- A pointer given to a function of numbers: ``tl.store(tl.max(x_ptr + t * 4096 + offs, 1)[:,
  None] + cols, v)`` in the consumer while the producer loads x's tile t, and likewise
  ``tl.min`` / ``tl.sum`` (reductions), ``tl.maximum`` / ``tl.minimum``, ``tl.abs`` /
  ``tl.exp`` (element-wise math) and ``tl.cdiv`` of a pointer: verified, exit 0. Triton 3.6
  refuses each ("'pointer_type' object has no attribute 'primitive_bitwidth'", "invalid operands
  of type pointer<fp32> and pointer<fp32>", "Expected dtype ['fp32', 'fp64'] but got
  pointer<fp32>"), and the memory-race check reads these functions' values as numbers
  (race_terms.VALUES), so an address through their result was based on no argument and paired
  with nothing. FIXED: frontend/triton_rules.py ``number_operand_rule`` refuses such an operand
  at its line where the frontend knows it is a pointer (a DEFAULT_CONFIG signature types the
  argument ``*...``), as Triton does (unsupported-expression). A reduction of offsets added to
  the pointer stays an offset: verified where no other partition touches the tensor, a race
  where one does.

False refusals, fixed:

- A load stored into a field no reader's view holds (``tl.store(local_ptr(s.u), tl.load(y_ptr
  + ...))`` beside a register-stored ``t``, read by the one reader): memory-race, its message
  calling the load a cp.async copy no hand-off orders. The lowering gathers only into a field of
  some field group (and a slot of rank 2 or more, 16 or 32-bit elements, a pipe with mbarriers):
  it stores u from registers, the load completes at its line, and the commit orders it. FIXED:
  frontend/race_order.py ``unmark_register_stores`` (``may_copy``, run by global_races.py) reads
  such a load as the register load it is: verified; the same with the reader overwriting a tile
  the writer loads later stays memory-race. tests/test_adversarial_features.py's gather into an
  unread field (no register store beside it: the commit arrives per thread, no release) was
  verified there and has been memory-race since round 71's rule; it now expects the race, with
  the message naming the per-thread commit instead of a copy.

Checked and held (tle-dump was right):

- a writer whose field group holds a TMA-filled field and a cp.async-gathered one and no register
  store (arrive unit ``tma-thread``), storing to global memory before its acquire, and a reader
  loading that memory after its wait: verified, and rightly: the PTX of the commit has the
  partition's ``bar.sync`` before the elected ``mbarrier.arrive.expect_tx`` (pinned below), which
  releases the writer's earlier stores as the elected arrive of a register-stored field does;
- the consumer writing x unordered with the producer's load of x, x reached through a tuple
  the kernel body builds, the same argument passed under two parameter names, a name the body
  binds to ``x_ptr + 4096``, ``tl.where`` / a conditional expression / an ``if`` choosing
  between x and y, a loop-carried pointer, ``.T``, ``tl.trans``, ``tl.permute``,
  ``tl.ravel``, ``tl.join`` / ``tl.interleave`` of two pointer tiles, a scalar pointer, a
  member ``.atomic_xchg``, a relaxed ``tl.atomic_add`` and an offset loaded from memory:
  memory-race each;
- a gather through a helper ``put(d, v)`` given ``tl.load(...)`` as its value, called once or
  twice in a window (the inlined temporaries): memory-race, naming the copy;
- the writer gathering (cp.async) x's tile t + 98 after acquire(t), which waits the reader's
  release(t - 2), after which the reader wrote that tile: verified (the copy is issued after the
  acquire's wait); tile t + 99, written before release(t - 1): memory-race;
- ``u = get(ptrs)`` (a helper returning a load) stored into the slot, twice in one window: no
  gather (the name is assigned twice), so the load completes at its line: verified, and the Gluon
  stores from registers;
- a second ``tle.gpu.warp_specialize`` (bad-warp-specialize) and a commit in a conditional
  expression (bad-event): refused where the kernel is read;
- ``tl.broadcast`` of pointers: unlowered-call; ``+p`` of a pointer: unsupported-expression.

Held (not changed):

- races between two programs (CTAs): the check reads ``tl.program_id`` as one symbol the two
  accesses share, so a consumer of program 1 loading ``y_ptr + t * 4096 + offs`` that the
  producer of program 0 stores (an address that does not hold the program id) is ordered by
  the pipe hand-off of its own program only. That is docs/semantics.md's stated scope ("races
  between different programs ... are the program's own arithmetic, as in any Triton kernel");
  checking it needs the grid (one program has no such race), which tle-dump is not given;
- a TMA copy's read of global memory is no access of the check: a tensor descriptor is taken not
  to alias a pointer argument (docs/semantics.md), and descriptors made in the kernel
  (``tl.make_tensor_descriptor``) are refused (unlowered-call);
- the same kernels without a DEFAULT_CONFIG signature stay verified: the frontend does not know
  x_ptr a pointer, and the memory-race check still reads a function of numbers as no pointer.
  No launch runs them (Triton 3.6 refuses the call whatever the argument's type: of a pointer
  as above, and an integer's result is no pointer to store through). Reading such a function
  as the pointers its operands may be was tried and dropped: its operands' candidates reach
  every pointer argument through the names of the bundled SparseMLA kernels
  (``tl.minimum(h0 + r, n_heads - 1)``, h0 from program ids), which then became races;
- ``tl.full(shape, x_ptr, x_ptr.dtype)``, a splat of a pointer that Triton 3.6 compiles, is
  refused by the lowering (`.dtype` of something that is not a pipe slot), so no verdict rests on
  it.
"""

from __future__ import annotations

import re

import pytest

from .adversarial_support import dump, expect, run_dump

HEAD = "import triton.language as tl\n\nimport tle_compiler as tle\n\n\n"
OFFS = "offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]"
ZERO = "tl.zeros([64, 64], tl.float32)"
TILE = "x_ptr + t * 4096 + offs"

#: a ring of register-stored tiles; the producer loads x's tile t, the consumer runs STORE (a
#: global access unordered with that load: before its wait) and copies each tile to y
RING = HEAD + '''@tle.jit
def k(x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64, 64], tl.float32))
BODY
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, y_ptr, N)),
                             (consume, CARGS)], [4], [232])


def produce(kv, x_ptr, y_ptr, N):
    OFFS
    w = kv.writer()
    for t in range(N):
        s = w.acquire(t)
        v = tl.load(x_ptr + t * 4096 + offs) * 2.0
        tl.store(tle.gpu.local_ptr(s.tile), v)
        w.commit(t)


def consume(kv, CPARAMS):
    OFFS
    r = kv.reader()
PRE    for t in range(N):
STORE
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t)
        tl.store(y_ptr + t * 4096 + offs, v)


def put(d, v):
    tl.store(d, v)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"},
                  "constexprs": {}}
'''

PLAIN = ("", "(kv, x_ptr, y_ptr, N)", "x_ptr, y_ptr, N", "")


def ring(store: str, body: str = "", cargs: str = PLAIN[1], cparams: str = PLAIN[2],
         pre: str = "") -> str:
    return (RING.replace("OFFS", OFFS).replace("BODY\n", body + "\n" if body else "")
            .replace("CARGS", cargs).replace("CPARAMS", cparams).replace("PRE", pre)
            .replace("STORE", "\n".join("        " + ln for ln in store.splitlines())))


def without_config(text: str) -> str:
    return text[:text.index("DEFAULT_CONFIG")]


# ------------------------------------------------- A: a pointer given to a function of numbers

#: the consumer's store through a function of numbers of x's tile (each refused by Triton 3.6)
NUMBER_FUNCS = {
    "tl.max": f"tl.store(tl.max({TILE}, 1)[:, None] + tl.arange(0, 64)[None, :], {ZERO})",
    "tl.min": f"tl.store(tl.min({TILE}, 1)[:, None] + tl.arange(0, 64)[None, :], {ZERO})",
    "tl.sum": f"tl.store(tl.sum({TILE}, 1)[:, None] + tl.arange(0, 64)[None, :], {ZERO})",
    "tl.max by keyword": (f"tl.store(tl.max(input={TILE}, axis=1)[:, None] "
                          f"+ tl.arange(0, 64)[None, :], {ZERO})"),
    "a member max": f"tl.store(({TILE}).max(1)[:, None] + tl.arange(0, 64)[None, :], {ZERO})",
    "tl.max of a name": (f"pp = {TILE}\n"
                         f"tl.store(tl.max(pp, 1)[:, None] + tl.arange(0, 64)[None, :], {ZERO})"),
    "tl.maximum": f"tl.store(tl.maximum({TILE}, {TILE}), {ZERO})",
    "tl.minimum": f"tl.store(tl.minimum({TILE}, x_ptr + offs), {ZERO})",
    "tl.abs": f"tl.store(tl.abs({TILE}), {ZERO})",
    "tl.exp": f"tl.store(tl.exp({TILE}), {ZERO})",
    "tl.cdiv": f"tl.store(tl.cdiv({TILE}, 1), {ZERO})",
}


@pytest.mark.parametrize("func", list(NUMBER_FUNCS))
def test_a_pointer_given_to_a_function_of_numbers_is_refused_as_triton_refuses_it(
        tmp_path, capsys, func):
    """Before: verified, exit 0 (Triton 3.6 refuses the call; the access through it was paired
    with nothing)."""
    code, err = dump(tmp_path, capsys, ring(NUMBER_FUNCS[func]))
    name = func.split()[0] if func.startswith("tl.") else "tl.max"
    expect(code, err, ("rejected", "[unsupported-expression]", f"{name} of a pointer",
                       "Triton 3.6 refuses it"))


def test_triton_refuses_a_reduction_and_math_of_pointers(tmp_path, monkeypatch):
    """The oracle: Triton 3.6 compiles none of them (a plain @triton.jit kernel)."""
    from .adversarial_oracles import triton_compile_error

    for call in ("tl.max(p, 1)[:, None] + tl.arange(0, 64)[None, :]",
                 "tl.sum(p, 1)[:, None] + tl.arange(0, 64)[None, :]",
                 "tl.maximum(p, p + 1)", "tl.abs(p)", "tl.exp(p)", "tl.cdiv(p, 1)"):
        src = ("import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
               "def k(x_ptr, N, C: tl.constexpr):\n"
               f"    p = x_ptr + {OFFS.split(' = ')[1]}\n"
               f"    tl.store({call}, 1.0)\n")
        assert triton_compile_error(tmp_path, monkeypatch, src, "r72num") is not None, call


def test_a_reduction_of_offsets_is_still_an_offset(tmp_path, capsys):
    """The twin: a reduction of the offsets (numbers) added to y's pointer; only the consumer
    touches y, the producer reads x alone: verified."""
    store = (f"tl.store(y_ptr + t * 4096 + tl.max(offs, 1)[:, None] - 63 "
             f"+ tl.arange(0, 64)[None, :], {ZERO})")
    code, err = dump(tmp_path, capsys, ring(store))
    expect(code, err, "verified")
    code, err = dump(tmp_path, capsys, without_config(ring(store)))
    expect(code, err, "verified")


def test_a_reduction_of_offsets_into_x_is_still_a_race(tmp_path, capsys):
    store = (f"tl.store(x_ptr + t * 4096 + tl.max(offs, 1)[:, None] - 63 "
             f"+ tl.arange(0, 64)[None, :], {ZERO})")
    code, err = dump(tmp_path, capsys, ring(store))
    expect(code, err, ("rejected", "[memory-race]", "`x_ptr`"))


# ------------------------------------------------------- B: the pointer spelt other ways

SPELLINGS = {
    "a tuple of the body": (f"tl.store(pp[0] + t * 4096 + offs, {ZERO})",
                            "    pp = (x_ptr, y_ptr)", "(kv, pp, y_ptr, N)", "pp, y_ptr, N"),
    "one argument twice": (f"tl.store(b_ptr + t * 4096 + offs, {ZERO})", "",
                           "(kv, x_ptr, y_ptr, x_ptr, N)", "a_ptr, y_ptr, b_ptr, N"),
    "a name the body binds": (f"tl.store(q - 4096 + t * 4096 + offs, {ZERO})",
                              "    q = x_ptr + 4096", "(kv, q, y_ptr, N)", "q, y_ptr, N"),
    "tl.where": f"tl.store(tl.where(t > 3, y_ptr, x_ptr) + t * 4096 + offs, {ZERO})",
    "a conditional expression": f"p = y_ptr if N > 3 else x_ptr\n"
                                f"tl.store(p + t * 4096 + offs, {ZERO})",
    "an if": (f"if t > 2:\n    pq = x_ptr\nelse:\n    pq = y_ptr\n"
              f"tl.store(pq + t * 4096 + offs, {ZERO})"),
    "a relaxed atomic": f"tl.atomic_add({TILE}, {ZERO}, sem='relaxed')",
    "a member atomic": f"({TILE}).atomic_xchg({ZERO})",
    "a loaded offset": f"tl.store(x_ptr + tl.load(y_ptr + offs).to(tl.int32), {ZERO})",
    ".T": f"tl.store(({TILE}).T, {ZERO})",
    "tl.trans": f"tl.store(tl.trans({TILE}), {ZERO})",
    "tl.permute": f"tl.store(tl.permute({TILE}, (1, 0)), {ZERO})",
    "tl.ravel": f"tl.store(tl.ravel({TILE}), tl.zeros([4096], tl.float32))",
    "tl.interleave": f"tl.store(tl.interleave({TILE}, {TILE}), tl.zeros([64, 128], tl.float32))",
    "tl.join": (f"pj = tl.join(x_ptr + offs, x_ptr + offs)\n"
                f"tl.store(tl.reshape(pj, [64, 128]) + t * 8192, tl.zeros([64, 128], tl.float32))"),
    "a scalar pointer": "tl.store(x_ptr + t * 4096, 0.0)",
    "a loop-carried pointer": (f"tl.store(xx + offs, {ZERO})\nxx = xx + 4096", "", PLAIN[1],
                               PLAIN[2], "    xx = x_ptr\n"),
}


@pytest.mark.parametrize("spelling", list(SPELLINGS))
def test_the_consumers_write_of_x_is_paired_however_its_pointer_is_spelt(
        tmp_path, capsys, spelling):
    """The consumer writes x's tile before its wait, unordered with the producer's load."""
    case = SPELLINGS[spelling]
    text = ring(case) if isinstance(case, str) else ring(*case)
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, ("rejected", "[memory-race]", "`x_ptr`"))


# ---------------------------------------------- C: a gather through a helper's value parameter

#: round 71's rings of a gathered x (kv) and a register-stored flag (sig); the consumer
#: overwrites x's tile t once sig(t) arrived, before it waits kv(t)
def gather_ring(gather: str) -> str:
    from .test_adversarial_verdicts_71 import AFTER_SIG, gather_ring as ring71

    text = ring71(gather, AFTER_SIG)
    return text.replace("def fill(d, src):", "def put(d, v):\n    tl.store(d, v)\n\n\n"
                                              "def fill(d, src):")


PUT = "put(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + t * 4096 + offs))"


@pytest.mark.parametrize("calls", [1, 2])
def test_a_gather_through_a_helpers_value_parameter_is_a_copy(tmp_path, capsys, calls):
    code, err = dump(tmp_path, capsys, gather_ring("\n        ".join([PUT] * calls)))
    expect(code, err, ("rejected", "[memory-race]", "fills a slot of pipe `kv`",
                       "copies by cp.async"))


# ---------------------------------- D: a TMA copy and a gather in one group (arrive tma-thread)

TMA_THREAD = HEAD + '''@tle.jit(num_warps=4)
def k(x_desc, y_ptr, z_ptr, o_ptr, N):
    tle.assume(N >= 0)
    ring = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64, 64], tl.bfloat16),
                    g=tle.gpu.alloc([2, 64, 64], tl.float32))
    tle.gpu.warp_specialize([(consume, (ring, z_ptr, o_ptr, N)),
                             (produce, (ring, x_desc, y_ptr, z_ptr, N))], [4], [232])


def produce(ring, x_desc, y_ptr, z_ptr, N):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    w = ring.writer()
    for t in range(N):
        tl.store(z_ptr + t * 4096 + offs, tl.full([64, 64], 1.0, tl.float32))
        s = w.acquire(t)
        tle.gpu.tma_load(s.tile, x_desc, [t * 64, 0])
        tl.store(tle.gpu.local_ptr(s.g), tl.load(y_ptr + t * 4096 + offs))
        w.commit(t)


def consume(ring, z_ptr, o_ptr, N):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    r = ring.reader()
    for t in range(N):
        res = r.wait(t)
        a = tl.load(tle.gpu.local_ptr(res.slot.tile))
        b = tl.load(tle.gpu.local_ptr(res.slot.g))
        r.release(t)
        z = tl.load(z_ptr + t * 4096 + offs)
        tl.store(o_ptr + t * 4096 + offs, a.to(tl.float32) + b + z)


DEFAULT_CONFIG = {"signature": {"x_desc": "tensordesc<bf16[64, 64]>", "y_ptr": "*fp32",
                                "z_ptr": "*fp32", "o_ptr": "*fp32", "N": "i32"},
                  "constexprs": {}}
'''


def test_a_tma_and_gather_group_commit_releases_the_writers_stores(tmp_path, capsys):
    """Verified: the commit of a group of a TMA copy and a gather (no register store) is the
    per-thread cp.async arrives and then the elected expect-tx arrive, which the partition's
    bar.sync precedes in Triton 3.6's PTX: the z stores before the acquire are released."""
    code, err = dump(tmp_path, capsys, TMA_THREAD)
    expect(code, err, "verified")
    pytest.importorskip("triton")
    code, ptx, err = run_dump(capsys, "--ptx", str(tmp_path / "kernel.py"))
    assert code == 0, err
    lines = ptx.splitlines()
    at = next(i for i, ln in enumerate(lines) if "mbarrier.arrive.expect_tx" in ln)
    stored = max(i for i, ln in enumerate(lines[:at]) if "st.global" in ln)
    between = lines[stored:at]
    assert any(re.search(r"\bbar\.sync\b|\bbarrier\.sync\b", ln) for ln in between), \
        "\n".join(between)


# --------------------------------------------------------------- E: refused where it is read

def test_a_second_warp_specialize_is_refused(tmp_path, capsys):
    text = ring(f"tl.store(y_ptr + t * 4096 + offs, {ZERO})")
    call = text[text.index("    tle.gpu.warp_specialize"):text.index("\n\n\ndef produce")]
    text = text.replace(call, call + "\n" + call)
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, ("rejected", "[bad-warp-specialize]", "second call"))


def test_a_commit_in_a_conditional_expression_is_refused(tmp_path, capsys):
    text = ring(f"tl.store(y_ptr + t * 4096 + offs, {ZERO})").replace(
        "        w.commit(t)\n", "        w.commit(t) if N > 5 else w.commit(t)\n")
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, ("rejected", "[bad-event]"))


# ------------------------------- F: a gather after the acquire that waits the reader's release

#: the producer gathers x's tile SRC into slot t; the consumer writes x's tile t + 100 after
#: reading slot t and before releasing it
RELEASED = HEAD + """@tle.jit
def k(x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)),
                             (consume, (kv, x_ptr, y_ptr, N))], [4], [232])


def produce(kv, x_ptr, N):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    w = kv.writer()
    for t in range(N):
        s = w.acquire(t)
        tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + SRC + offs))
        w.commit(t)


def consume(kv, x_ptr, y_ptr, N):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    r = kv.reader()
    for t in range(N):
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        tl.store(x_ptr + (t + 100) * 4096 + offs, v)
        r.release(t)
        tl.store(y_ptr + t * 4096 + offs, v)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"},
                  "constexprs": {}}
"""


def test_a_gather_after_the_acquire_of_the_release_that_follows_the_write_is_ordered(
        tmp_path, capsys):
    """Tile t + 98 is the consumer's write of iteration t - 2, before its release(t - 2), which
    the producer's acquire(t) waits before it issues the copy: verified."""
    code, err = dump(tmp_path, capsys, RELEASED.replace("SRC", "(t + 98) * 4096"))
    expect(code, err, "verified")


def test_a_gather_of_the_tile_a_later_release_follows_is_a_race(tmp_path, capsys):
    """Tile t + 99 is written at iteration t - 1, whose release acquire(t) does not wait."""
    code, err = dump(tmp_path, capsys, RELEASED.replace("SRC", "(t + 99) * 4096"))
    expect(code, err, ("rejected", "[memory-race]", "`x_ptr`"))


# ------------------------------------------- G: a tile loaded into a name assigned twice

GET_TWICE = ("u = get(x_ptr + t * 4096 + offs)\n"
             "        tl.store(tle.gpu.local_ptr(s.tile), u)\n"
             "        u = get(x_ptr + t * 4096 + offs)\n"
             "        tl.store(tle.gpu.local_ptr(s.tile), u)")


def test_a_tile_loaded_into_a_name_assigned_twice_is_stored_from_registers(tmp_path, capsys):
    """``u = get(ptrs)`` (a helper returning ``tl.load``) then ``tl.store(local_ptr(s.tile),
    u)``, twice: no gather (the lowering defers a load to the store only for a name assigned
    once), so the load completes at its line and sig's hand-off orders it: verified, and the
    Gluon stores the tile from registers (no cp.async)."""
    text = gather_ring(GET_TWICE).replace(
        "def put(d, v):", "def get(p):\n    return tl.load(p)\n\n\ndef put(d, v):")
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, "verified")
    code, gluon, err = run_dump(capsys, "--gluon", str(tmp_path / "kernel.py"))
    assert code == 0, err
    assert "kv_tile.index(_kv_s1).store(u" in gluon, gluon
    assert "async_copy_global_to_shared(kv_tile" not in gluon, gluon


# ------------------------------------- H: a load stored into a field the lowering never gathers

#: the writer stores t from registers and y's tile i into field u, which no reader's view holds
#: (so the lowering loads it into registers); the reader overwrites y's tile i + SHIFT after its
#: wait(i)
UNREAD = HEAD + """@tle.jit(num_warps=4)
def k(y_ptr, N):
    tle.assume(N >= 0)
    p = tle.pipe(capacity=2, readers=("a",), t=tle.gpu.alloc([2, 64, 64], tl.float32),
                 u=tle.gpu.alloc([2, 64, 64], tl.float32))
    tle.gpu.warp_specialize([(fill, (p, y_ptr, N)), (drain, (p, y_ptr, N))], [4], [232])


def fill(p, y_ptr, N):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    w = p.writer()
    for i in range(N):
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.t), tl.full([64, 64], 1.0, tl.float32))
        tl.store(tle.gpu.local_ptr(s.u), tl.load(y_ptr + i * 4096 + offs))
        w.commit(i)


def drain(p, y_ptr, N):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    r = p.reader("a", fields=("t",))
    for i in range(N):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.t))
        tl.store(y_ptr + (i + SHIFT) * 4096 + offs, v)
        r.release(i)


DEFAULT_CONFIG = {"signature": {"y_ptr": "*fp32", "N": "i32"}, "constexprs": {}}
"""


def test_a_load_into_a_field_no_reader_sees_is_ordered_as_a_register_load(tmp_path, capsys):
    """Before: memory-race ("fills a slot of pipe `p`, which the lowering copies by cp.async"),
    a false refusal: u is in no field group, the lowering stores it from registers, and the
    commit (t stored from registers: an elected arrive after bar.sync) releases the load."""
    code, err = dump(tmp_path, capsys, UNREAD.replace("SHIFT", "0"))
    expect(code, err, "verified")
    code, gluon, err = run_dump(capsys, "--gluon", str(tmp_path / "kernel.py"))
    assert code == 0, err
    assert "p_u.index(_p_s1).store(" in gluon, gluon
    assert "async_copy_global_to_shared" not in gluon, gluon


def test_a_load_into_a_field_no_reader_sees_is_still_paired(tmp_path, capsys):
    """Tile i + 1, overwritten after wait(i), is loaded at iteration i + 1: a race."""
    code, err = dump(tmp_path, capsys, UNREAD.replace("SHIFT", "1"))
    expect(code, err, ("rejected", "[memory-race]", "`y_ptr`"))
    assert "cp.async" not in err, err
