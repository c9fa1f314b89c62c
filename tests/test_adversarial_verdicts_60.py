"""A sixtieth adversarial round (adversarial round 60): TMA copies into pipe slots (descriptor
boxes and element types that are not the slot's, two copies into one field, a copy under an
`if`, copies and register stores in one field group), one-shot pipes and reader views, arrive
counts of writers of 2, 4 and 8 warps with cp.async gathers beside TMA, `.kir` / `.pipe` inputs
edited by hand, and exit codes of several files. Each case is a small kernel read by tle-dump's
main().

A false `verified`, fixed:

- ``tle-dump -p emit-gluon`` (and ``-p materialize-barriers`` or any pipeline with a lowering
  pass) of a kernel whose DEFAULT_CONFIG descriptor is not the slot its TMA copy fills
  (``tensordesc<bf16[64, 256]>`` or ``tensordesc<fp32[64, 128]>`` copied into a bf16 [64, 128]
  field) printed "verified" (exit 0) and Gluon whose ``mbarrier.expect`` counts the field's
  16384 bytes where the copy lands the box's (32768): the full barrier's phase would never
  complete as printed, and tle-dump's default run and --gluon reject the same kernel at the
  copy (check signature). The pipeline typed the Gluon with the signature only where it fit and
  lowered it untyped otherwise. The same for a `.kir` file whose field shape or
  `default_config` descriptor was edited (the default run rejects it; -p emit-gluon printed
  the edited field's expect-tx), and for an integer param typed u32 or i64 in the signature.
  FIXED: cli/print_ir.py refuses them as the default run does (``_typed`` re-raises a
  "signature" error, ``_check_descriptors`` checks a .kir kernel's descriptors,
  ``check_signature`` the integer types) before lowering: exit 1, the error at the copy's line.
- ``tle-dump -p emit-gluon`` of a kernel whose writer stores to global memory its reader loads
  with no hand-off between them printed "verified" (exit 0) and its Gluon, where the default run
  and --gluon reject it (memory-race): the pipeline's passes check the protocol alone. FIXED:
  a pipeline ending in emit-gluon takes tle-dump's default verdict first
  (cli/dump.py ``_default_verdict_of``) and prints no Gluon, exit 1 and its errors, for a
  kernel it rejects; one it leaves bounded (a `while` counter loaded through an untyped pointer,
  round 48) is printed with a warning, exit 3, where it was "verified", exit 0.

A `.pipe` read back as another protocol, fixed:

- ``ring.tma(t, tile, 0)`` was verified, with ``expect-tx=?`` in the table and
  ``ring.tma(t, tile)`` (bytes unknown) in the printed protocol: 0 is how the IR holds an
  unknown count, so a stated one read back as another, and no TMA copy moves 0 bytes (a commit
  expecting none would complete its phase before the copy lands). FIXED: ir/parser.py refuses
  a byte count of 0 (exit 2, as a negative one).

Checked and held: a descriptor box or element type other than the slot's, the same bytes in
another shape, too few offsets, two TMA copies into one field in a window, a copy under an
`if` of the window (with the commit unconditional), a register store into a TMA-filled field
(before or after the copy) are rejected; a box with an extra unit dimension is verified and
expects the slot's bytes. The expect-tx the table, JSON and the Gluon print agree (fp8 8192,
bf16 16384), and a `.kir` whose `expect_tx` attribute was edited is lowered with the recomputed
bytes. Init counts: a TMA + cp.async group of an 8-, 4- or 2-warp writer is 257 / 129 / 65
(one expect-tx arrive and one per thread), a TMA + register-store group 2, in JSON and the Gluon
alike, with a proxy fence before the register store's arrive when a reader's wgmma reads it.
One-shot pipes: capacity 2 refused, index 1 or N waits parity 0, a release without a wait, a
second release, a read after the release and a wait per iteration rejected. Exit codes of
several files (rejected + missing = 2, bounded + rejected = 1). Reader views: a field outside
the view (directly or through a tuple of fields), a view field no write fills, a second release
are rejected; a two-field view beside a one-field view inits the shared group's empty barrier
with 2 and both readers arrive on it. Cp.async gathers: a narrow strided int8 load, a load
with `other=1.0` or `-0.0` are stored from registers (init count 2), not gathered. Printed
protocols of these kernels read back with the same exit status (a memory race excepted: a
`.pipe` holds no memory accesses, as documented).

Left open: a pipeline that does not end in emit-gluon (``-p verify-protocol,verify-deadlock
--print-ir``, ``-p materialize-barriers``) gives the protocol passes' verdict alone, without the
memory-race check the default run adds (the signature is now checked where a lowering pass
runs): its summary names what it claims, and it prints no Gluon."""

from __future__ import annotations

import json
import re

import pytest

from .adversarial_support import HEAD, dump, expect, run_dump, write_kernel

TMA = HEAD + '''
@tle.jit(num_warps=4)
def k(x_desc, y_ptr, N):
    tle.assume(N >= 0)
    ring = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64, 128], tl.bfloat16))
    tle.gpu.warp_specialize([(produce, (ring, x_desc, N)),
                             (consume, (ring, y_ptr, N))], [4], [232])


def produce(ring, x_desc, N):
    w = ring.writer()
    for t in range(N):
        slot = w.acquire(t)
        tle.gpu.tma_load(slot.tile, x_desc, [t * 64, 0])
        w.commit(t)


def consume(ring, y_ptr, N):
    r = ring.reader()
    for t in range(N):
        res = r.wait(t)
        tile = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t)
        tl.store(y_ptr + t + tl.arange(0, 64), tl.sum(tile.to(tl.float32), 1))


DEFAULT_CONFIG = {
    "signature": {"x_desc": "tensordesc<bf16[64, 128]>", "y_ptr": "*fp32", "N": "i32"},
    "constexprs": {},
    "num_warps": 4,
}
'''
COPY = "        tle.gpu.tma_load(slot.tile, x_desc, [t * 64, 0])\n"
DESC = "tensordesc<bf16[64, 128]>"


def _tma(desc: str = DESC, copy: str = COPY, n: str = "i32") -> str:
    return (TMA.replace(DESC, desc).replace(COPY, copy)
            .replace('"N": "i32"', f'"N": "{n}"'))


def _expects(out: str) -> list[str]:
    return re.findall(r"mbarrier\.expect\(ring_full0\.index\(\w+\), (\d+)\)", out)


# ------------------------------------ A: -p emit-gluon of a descriptor that is not the slot

BAD_DESCRIPTORS = [
    ("tensordesc<bf16[64, 256]>", "bf16 boxes [64, 256]"),
    ("tensordesc<fp32[64, 128]>", "fp32 boxes [64, 128]"),
    ("tensordesc<bf16[128, 64]>", "bf16 boxes [128, 64]"),
]


@pytest.mark.parametrize("desc, words", BAD_DESCRIPTORS)
@pytest.mark.parametrize("passes", ["emit-gluon", "materialize-barriers"])
def test_a_lowering_pipeline_refuses_a_descriptor_that_is_not_the_slot(tmp_path, capsys, desc,
                                                                       words, passes):
    """Before: "verified", exit 0, and Gluon expecting the field's 16384 bytes of a copy of the
    box's; the default run and --gluon reject it at the copy (line 19)."""
    path = write_kernel(tmp_path, _tma(desc))
    code, err = dump(tmp_path, capsys, _tma(desc))
    expect(code, err, ("rejected", "kernel.py:19: error: ", words, "[signature]"))
    code, out, err = run_dump(capsys, "-p", passes, str(path))
    assert code == 1, err
    assert "kernel.py:19: error: " in err and words in err and "[signature]" in err, err
    assert ": verified for " not in err and not _expects(out), (out, err)


@pytest.mark.parametrize("n", ["u32", "i64"])
def test_a_lowering_pipeline_refuses_an_integer_param_typed_other_than_i32(tmp_path, capsys, n):
    """Before: -p emit-gluon "verified" a protocol param typed u32 / i64, which the default
    run rejects (the verifier checked i32 arithmetic)."""
    path = write_kernel(tmp_path, _tma(n=n))
    code, _, err = run_dump(capsys, "-q", str(path))
    assert code == 1 and "[signature]" in err, err
    code, out, err = run_dump(capsys, "-p", "emit-gluon", str(path))
    assert code == 1 and "[signature]" in err and ": verified for " not in err, err
    assert not _expects(out), out


def test_the_fitting_descriptor_still_lowers(tmp_path, capsys):
    """Held: the slot's own descriptor, and one with an extra unit dimension (three offsets),
    lower with the slot's 16384 bytes in the table, JSON, -p emit-gluon and --gluon."""
    for desc, copy in [(DESC, COPY), ("tensordesc<bf16[1, 64, 128]>",
                                      "        tle.gpu.tma_load(slot.tile, x_desc, [0, t * 64, 0])\n")]:
        path = write_kernel(tmp_path, _tma(desc, copy))
        code, out, err = run_dump(capsys, str(path))
        assert code == 0 and "expect-tx=16384" in out, (out, err)
        code, out, _ = run_dump(capsys, "--format", "json", str(path))
        assert [b["expect_tx"] for b in json.loads(out)["kernels"][0]["barriers"]
                if b["kind"] == "full"] == [16384, 16384]
        for flags in (["-p", "emit-gluon"], ["--gluon"]):
            code, out, err = run_dump(capsys, *flags, str(path))
            assert code == 0 and _expects(out) == ["16384"], (flags, err)


KIR_EDITS = [
    ("tile: bf16[2, 64, 128]", "tile: bf16[2, 64, 64]", "a bf16 slot of shape [64, 64]"),
    ("'tensordesc<bf16[64, 128]>'", "'tensordesc<bf16[64, 64]>'", "bf16 boxes [64, 64]"),
    ("'tensordesc<bf16[64, 128]>'", "'tensordesc<fp16[64, 128]>'", "fp16 boxes [64, 128]"),
]


@pytest.mark.parametrize("old, new, words", KIR_EDITS)
def test_an_edited_kir_is_not_lowered_with_the_wrong_bytes(tmp_path, capsys, old, new, words):
    """A .kir printed by -p infer-barriers --print-ir, its field shape or its default_config's
    descriptor edited: the default run rejects it, and -p emit-gluon printed "verified" and a
    Gluon expecting the edited field's bytes (8192 for a copy of 16384)."""
    path = write_kernel(tmp_path, _tma())
    kir = tmp_path / "k.kir"
    code, _, _ = run_dump(capsys, "-p", "infer-barriers", "--print-ir", "-o", str(kir), str(path))
    assert code == 0
    text = kir.read_text()
    assert old in text
    kir.write_text(text.replace(old, new))
    code, _, err = run_dump(capsys, "-q", str(kir))
    assert code == 1 and words in err, err
    code, out, err = run_dump(capsys, "-p", "emit-gluon", str(kir))
    assert code == 1 and words in err and "[signature]" in err, err
    assert ": verified for " not in err and not _expects(out), out


def test_an_edited_expect_tx_attribute_is_recomputed(tmp_path, capsys):
    """Held: a .kir whose barrier attribute says expect_tx = 8192 is lowered with the copy's
    16384 (the passes recompute the barriers)."""
    path = write_kernel(tmp_path, _tma())
    kir = tmp_path / "k.kir"
    run_dump(capsys, "-p", "infer-barriers", "--print-ir", "-o", str(kir), str(path))
    kir.write_text(kir.read_text().replace("expect_tx = 16384", "expect_tx = 8192"))
    code, out, _ = run_dump(capsys, str(kir))
    assert code == 0 and "expect-tx=16384" in out
    code, out, _ = run_dump(capsys, "-p", "emit-gluon", str(kir))
    assert code == 0 and _expects(out) == ["16384"], out


# ---------------------------------------------------------------- B: held TMA cases

@pytest.mark.parametrize("desc, copy, want", [
    (DESC, "        tle.gpu.tma_load(slot.tile, x_desc, [t * 64])\n",
     ("rejected", "gives 1 offsets", "[signature]")),
    (DESC, COPY + COPY, ("rejected", "copied twice", "[tma-window]")),
    (DESC, "        if t < N - 1:\n    " + COPY, ("rejected", "[tma-window]", "no TMA copy")),
    (DESC, COPY + "        tl.store(tle.gpu.local_ptr(slot.tile), tl.zeros([64, 128], "
     "tl.bfloat16))\n", ("rejected", "[tma-field-access]")),
    (DESC, "        tl.store(tle.gpu.local_ptr(slot.tile), tl.zeros([64, 128], tl.bfloat16))\n"
     + COPY, ("rejected", "[tma-field-access]")),
])
def test_held_tma_copies(tmp_path, capsys, desc, copy, want):
    code, err = dump(tmp_path, capsys, _tma(desc, copy))
    expect(code, err, want)


GROUP = HEAD + '''
@tle.jit(num_warps=NW)
def k(a_desc, x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    ring = tle.pipe(capacity=2, a=tle.gpu.alloc([2, 64, 64], tl.bfloat16),
                    g=tle.gpu.alloc([2, 64, 64], tl.bfloat16))
    tle.gpu.warp_specialize([(consume, (ring, y_ptr, N)),
                             (produce, (ring, a_desc, x_ptr, N))], [WW], [152])


def produce(ring, a_desc, x_ptr, N):
    w = ring.writer()
    offs = tl.arange(0, 64)
    for t in range(N):
        slot = w.acquire(t)
        GFILL
        tle.gpu.tma_load(slot.a, a_desc, [t * 64, 0])
        w.commit(t)


def consume(ring, y_ptr, N):
    r = ring.reader()
    for t in range(N):
        res = r.wait(t)
        x = tl.load(tle.gpu.local_ptr(res.slot.a))
        g = tl.load(tle.gpu.local_ptr(res.slot.g))
        r.release(t)
        tl.store(y_ptr + t * 64 + tl.arange(0, 64),
                 tl.sum(x.to(tl.float32), 1) + tl.sum(g.to(tl.float32), 1))


DEFAULT_CONFIG = {
    "signature": {"a_desc": "tensordesc<bf16[64, 64]>", "x_ptr": "*bf16", "y_ptr": "*fp32",
                  "N": "i32"},
    "constexprs": {},
    "num_warps": NW,
}
'''
GATHER = "tl.store(tle.gpu.local_ptr(slot.g), tl.load(x_ptr + offs[:, None] * 64 + offs[None, :]))"
REGS = "tl.store(tle.gpu.local_ptr(slot.g), (offs[:, None] + offs[None, :]).to(tl.bfloat16))"


@pytest.mark.parametrize("nw, ww, fill, unit, count", [
    (4, 8, GATHER, "tma-thread", 257), (8, 4, GATHER, "tma-thread", 129),
    (4, 2, GATHER, "tma-thread", 65), (8, 4, REGS, "tma-partition", 2),
])
def test_held_init_counts_of_tma_beside_gathers_and_stores(tmp_path, capsys, nw, ww, fill, unit,
                                                           count):
    """Held: JSON's init count of the (a, g) group is the Gluon's mbarrier.init count: one
    expect-tx arrive plus one per writer thread for a cp.async gather, plus one for a register
    store; the Gluon expects the TMA box's 8192 bytes."""
    text = (GROUP.replace("NW", str(nw)).replace("WW", str(ww)).replace("GFILL", fill))
    path = write_kernel(tmp_path, text)
    code, out, err = run_dump(capsys, "--format", "json", str(path))
    assert code == 0, err
    full = [b for b in json.loads(out)["kernels"][0]["barriers"] if b["kind"] == "full"]
    assert {(b["arrive_unit"], b["init_count"], b["expect_tx"]) for b in full} == \
        {(unit, count, 8192)}
    code, out, err = run_dump(capsys, "--gluon", str(path))
    assert code == 0, err
    assert set(re.findall(r"mbarrier\.init\(ring_full0\.index\(\d\), count=(\d+)\)", out)) == \
        {str(count)}
    assert _expects(out) == ["8192"], out


# ------------------------------------------------------------------ C: one-shot pipes

def _one_shot(writer: str, reader: str, capacity: int = 1) -> str:
    from .adversarial_support import kernel
    return kernel(writer, reader).replace(
        "tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64]",
        f"tle.pipe(capacity={capacity}, one_shot=True, tile=tle.gpu.alloc([{capacity}, 64]")


@pytest.mark.parametrize("writer, reader, want", [
    ("PUT(1)", "GET(1)", "verified"),
    ("PUT(N)", "GET(N)", "verified"),
    ("PUT(0)", "r.release(0)\n", ("rejected", "[release-without-wait]")),
    ("PUT(0)", "GET(0)r.release(0)\n", ("rejected", "[one-shot-reuse]")),
    ("PUT(0)", "GET(0)" + "tl.store(y_ptr + tl.arange(0, 64), "
     "tl.load(tle.gpu.local_ptr(res.slot.tile)))\n", ("rejected", "[access-outside-window]")),
    ("PUT(0)", "for p in range(N):\n    res = r.wait(0)\n", ("rejected", "[one-shot-reuse]")),
    ("PUT(0)", "", ("rejected", "[unconsumed]")),
])
def test_held_one_shot_pipes(tmp_path, capsys, writer, reader, want):
    from .adversarial_support import get, put

    def fill(s):
        return re.sub(r"PUT\((\w+)\)", lambda m: put(m.group(1)),
                      re.sub(r"GET\((\w+)\)", lambda m: get(m.group(1)), s))
    text = _one_shot(fill(writer), fill(reader))
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, want)
    if want == "verified":
        code, out, _ = run_dump(capsys, "--gluon", str(tmp_path / "kernel.py"))
        assert code == 0 and re.findall(r"mbarrier\.wait\(kv_full0\.index\(0\), (\w+)\)",
                                        out) == ["0"], out


def test_a_one_shot_pipe_of_capacity_two_is_refused(tmp_path, capsys):
    from .adversarial_support import get, put
    code, err = dump(tmp_path, capsys, _one_shot(put("0"), get("0"), capacity=2))
    expect(code, err, ("rejected", "must have capacity=1"))


# ------------------------------------------------------------- D: several files' exit

def test_several_files_exit_with_the_worst(tmp_path, capsys):
    """Held: rejected + a missing file = 2; bounded + rejected = 1; bounded alone = 3."""
    good = write_kernel(tmp_path, _tma(), "good.py")
    bad = write_kernel(tmp_path, _tma("tensordesc<bf16[64, 256]>"), "bad.py")
    assert run_dump(capsys, "-q", str(bad), str(tmp_path / "none.py"))[0] == 2
    assert run_dump(capsys, "-q", "--bound", "2", str(good), str(bad))[0] == 1
    assert run_dump(capsys, "-q", "--bound", "2", str(good))[0] == 3
    assert run_dump(capsys, "-q", "-p", "emit-gluon", str(good))[0] == 0


# ----------------------------------------- A2: -p emit-gluon of a kernel that races

def test_emit_gluon_does_not_lower_a_kernel_whose_partitions_race(tmp_path, capsys):
    """Before: -p emit-gluon printed "verified" (exit 0) and the Gluon of a kernel whose writer
    stores to `x_ptr` while its reader loads it with no hand-off between them, which the default
    run and --gluon reject (memory-race): the pipeline's passes check the protocol only. Now a
    pipeline ending in emit-gluon first takes tle-dump's own verdict (dump._default_verdict_of)
    and prints no Gluon for a rejected kernel."""
    from .adversarial_support import get, kernel, loop, put
    w = loop("for p in range(N):", put("p") + "tl.store(x_ptr + tl.arange(0, 64), "
             "tl.zeros([64], tl.float32))\n")
    r = loop("for p in range(N):", get("p") + "tl.store(y_ptr + tl.arange(0, 64), "
             "tl.load(x_ptr + tl.arange(0, 64)))\n")
    text = kernel(w, r).replace("(consume, (kv, y_ptr, N, C))",
                                "(consume, (kv, y_ptr, x_ptr, N, C))").replace(
        "def consume(kv, y_ptr, N,", "def consume(kv, y_ptr, x_ptr, N,")
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, ("rejected", "[memory-race]"))
    path = tmp_path / "kernel.py"
    for flags in (["-p", "emit-gluon"], ["-q", "-p", "emit-gluon"]):
        code, out, err = run_dump(capsys, *flags, str(path))
        assert code == 1 and "[memory-race]" in err and ": verified for " not in err, err
        assert "gluon.jit" not in out, out
    # without the race (the reader loads y_ptr), the Gluon is printed, verified
    code, out, err = run_dump(capsys, "-p", "emit-gluon",
                              str(write_kernel(tmp_path, text.replace(
                                  "tl.load(x_ptr + tl.arange(0, 64)))\n", "1.0)\n"), "ok.py")))
    assert code == 0 and ": verified for " in err and "gluon.jit" in out, err


# --------------------------------------------------- E: a .pipe TMA copy of 0 bytes

ZERO_PIPE = """kernel k
param N

pipe ring capacity=2 fields=(tile)

partition produce default warps=4 {
  for t in range(N) {
    ring.acquire(t)
    ring.tma(t, tile, BYTES)
    ring.commit(t)
  }
}

partition consume warps=4 regs=232 {
  for t in range(N) {
    ring.wait(t)
    ring.read(t, tile)
    ring.release(t)
  }
}
"""


def test_a_pipe_tma_copy_of_zero_bytes_is_refused(tmp_path, capsys):
    """Before: `ring.tma(t, tile, 0)` was verified, its table said expect-tx=? and its printed
    protocol `ring.tma(t, tile)` (0 is the IR's "unknown"): a stated count read back as another.
    Now refused at the count (exit 2, as a negative count); 16384 and no count are read as
    before."""
    path = write_kernel(tmp_path, ZERO_PIPE.replace("BYTES", "0"), "k.pipe")
    code, _, err = run_dump(capsys, "-q", str(path))
    assert code == 2 and "k.pipe:9: error: a TMA copy moves at least one byte" in err, err
    path = write_kernel(tmp_path, ZERO_PIPE.replace("BYTES", "16384"), "k.pipe")
    code, out, err = run_dump(capsys, "--no-locations", str(path))
    assert code == 0 and "expect-tx=16384" in out and "ring.tma(t, tile, 16384)" in out, err
    path = write_kernel(tmp_path, ZERO_PIPE.replace(", BYTES", ""), "k.pipe")
    code, out, err = run_dump(capsys, "--no-locations", str(path))
    assert code == 0 and "expect-tx=?" in out and "ring.tma(t, tile)\n" in out, err


def test_emit_gluon_of_a_kernel_the_default_run_leaves_bounded(tmp_path, capsys):
    """Before: a `while` counter loaded through a pointer of no known element type (round 48:
    bounded, exit 3, by the default run) was "verified" (exit 0) under -p emit-gluon. Now the
    Gluon is printed with a warning that it is not proved, exit 3."""
    from .test_adversarial_verdicts_48 import DOWN_TO_ZERO, ring
    path = write_kernel(tmp_path, ring(DOWN_TO_ZERO))
    assert run_dump(capsys, "-q", "--param", "C=3", str(path))[0] == 3
    code, out, err = run_dump(capsys, "-q", "--param", "C=3", "-p", "emit-gluon", str(path))
    assert code == 3 and "tle-dump: warning: " in err and "not proved" in err, err
    assert "gluon.jit" in out, out
