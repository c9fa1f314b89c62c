"""The box and element type of every TMA copy the lowering emits are checked against its slot,
however the copy is spelled: a renamed descriptor (``d2 = x_desc``), a renamed slot (``s2 =
slot``), an acquire written inline (``w.acquire(t).tile``), a slot taken from a tuple, a copy in
a helper. A box of other bytes than the slot's lands fewer (or more) bytes than the commit's
expect-tx counts, so the full barrier never completes and the reader hangs; it must be refused
at the copy's line (compile, ``tle-dump --ttgir/--ptx`` exit 1, the run-time launch), and the
same spellings with the right box must still lower. A descriptor the lowering cannot attribute
to one kernel argument is refused rather than left unchecked. Also: a TMA-filled field with a
negative dimension (a constexpr given a negative value) is an error, not a crash."""

from __future__ import annotations

import importlib.util
import re
import textwrap

import pytest

from tle_compiler.cli.dump import main as dump_main
from tle_compiler.diagnostics import TleError

# A producer TMA-copies fp8 [64, 128] tiles (8192 bytes) into a ring; a consumer stores them.
# PROLOGUE / PRODUCER are replaced by each spelling.
TEMPLATE = '''
import triton.language as tl
import tle_compiler as tle

BM = tl.constexpr(64)
BN = tl.constexpr(128)


@tle.jit(num_warps=4)
def k(x_desc, z_desc, y_ptr, N):
    ring = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, BM, BN], tl.float8e4nv))
PROLOGUE
    tle.gpu.warp_specialize([(produce, (ring, DESC, z_desc, N)), (consume, (ring, y_ptr, N))],
                            [4], [232])


def fill(s, d, t):
    tle.gpu.tma_load(s.tile, d, [t * BM, 0])


def produce(ring, x_desc, z_desc, N):
    w = ring.writer()
    for t in range(N):
PRODUCER
        w.commit(t)


def consume(ring, y_ptr, N):
    r = ring.reader()
    for t in range(N):
        res = r.wait(t)
        tile = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t)
        tl.store(y_ptr + t * BM * BN + tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :],
                 tile)


DEFAULT_CONFIG = {
    "signature": {"x_desc": "tensordesc<fp8e4nv[BOX]>", "z_desc": "tensordesc<fp8e4nv[BOX]>",
                  "y_ptr": "*fp8e4nv", "N": "i32"},
    "constexprs": {}, "num_warps": 4, "grid": (1,),
}
'''

PLAIN = "        slot = w.acquire(t)\n        tle.gpu.tma_load(slot.tile, x_desc, [t * BM, 0])"
#: spelling -> (kernel prologue line, the descriptor passed to the producer, producer lines)
SPELLINGS = {
    "plain": ("", "x_desc", PLAIN),
    "descriptor renamed in the kernel": ("    d2 = x_desc", "d2", PLAIN),
    "descriptor renamed in the partition": (
        "", "x_desc",
        "        slot = w.acquire(t)\n        d3 = x_desc\n"
        "        tle.gpu.tma_load(slot.tile, d3, [t * BM, 0])"),
    "slot renamed": (
        "", "x_desc",
        "        slot = w.acquire(t)\n        s2 = slot\n"
        "        tle.gpu.tma_load(s2.tile, x_desc, [t * BM, 0])"),
    "acquire inline": (
        "", "x_desc", "        tle.gpu.tma_load(w.acquire(t).tile, x_desc, [t * BM, 0])"),
    "slot from a tuple": (
        "", "x_desc",
        "        slot = w.acquire(t)\n        pair = (slot, slot)\n"
        "        tle.gpu.tma_load(pair[0].tile, x_desc, [t * BM, 0])"),
    "descriptor from a tuple": (
        "", "x_desc",
        "        slot = w.acquire(t)\n        ds = (z_desc, x_desc)\n"
        "        tle.gpu.tma_load(slot.tile, ds[1], [t * BM, 0])"),
    "copy in a helper": ("", "x_desc", "        slot = w.acquire(t)\n        fill(slot, x_desc, t)"),
    "same descriptor on both paths": (
        "", "x_desc",
        "        slot = w.acquire(t)\n        if t % 2 == 0:\n            d = x_desc\n"
        "        else:\n            d = x_desc\n        tle.gpu.tma_load(slot.tile, d, [t * BM, 0])"),
}
GOOD_BOX, SMALL_BOX = "64, 128", "64, 64"


def kernel_text(spelling: str, box: str) -> str:
    prologue, desc, producer = SPELLINGS[spelling]
    text = TEMPLATE.replace("PROLOGUE\n", prologue + "\n" if prologue else "")
    text = text.replace("DESC", desc).replace("PRODUCER", producer).replace("BOX", box)
    return textwrap.dedent(text).lstrip()


def write(tmp_path, text: str, name: str = "k.py"):
    f = tmp_path / name
    f.write_text(text)
    return f


def copy_line(text: str) -> int:
    """The line of the producer's copy (the helper's, for the spelling that calls it)."""
    helper = "fill(slot" in text
    return next(n for n, line in enumerate(text.splitlines(), 1)
                if line.strip().startswith("tle.gpu.tma_load(")
                and ("s.tile, d," in line) == helper)


def signature(box: str) -> dict:
    t = f"tensordesc<fp8e4nv[{box}]>"
    return {"x_desc": t, "z_desc": t, "y_ptr": "*fp8e4nv", "N": "i32"}


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_a_box_smaller_than_the_slot_is_refused_at_the_copy_however_it_is_spelled(
        tmp_path, spelling):
    from tle_compiler.lowering.compile import compile_kernel

    text = kernel_text(spelling, SMALL_BOX)
    f = write(tmp_path, text)
    with pytest.raises(TleError) as e:
        compile_kernel((str(f), "k"), signature(SMALL_BOX), {})
    assert e.value.check == "signature"
    assert ("argument 'x_desc' is a tensor descriptor of fp8e4nv boxes [64, 64], but this "
            "tle.gpu.tma_load copies it into ring.tile, a fp8e4nv slot of shape [64, 128]") \
        in e.value.message
    assert e.value.loc.line == copy_line(text)


@pytest.mark.parametrize("spelling", ["descriptor renamed in the kernel", "slot renamed",
                                      "acquire inline", "slot from a tuple"])
@pytest.mark.parametrize("mode", ["--ttgir", "--ptx"])
def test_tle_dump_refuses_the_aliased_mismatch_as_the_plain_one(tmp_path, capsys, spelling,
                                                               mode):
    text = kernel_text(spelling, SMALL_BOX)
    f = write(tmp_path, text)
    assert dump_main(["-q", mode, str(f)]) == 1
    err = capsys.readouterr().err
    assert f"k.py:{copy_line(text)}: error: argument 'x_desc' is a tensor descriptor of fp8e4nv " \
           f"boxes [64, 64]" in err


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_the_same_spellings_with_the_slots_box_lower(tmp_path, spelling):
    """The Gluon of each spelling copies with the descriptor into the ring and declares the
    slot's 8192 bytes at the commit."""
    from tle_compiler.frontend import read_kernels
    from tle_compiler.lowering.codegen import generate
    from tle_compiler.lowering.descriptors import complete_signature

    f = write(tmp_path, kernel_text(spelling, GOOD_BOX))
    (info,) = read_kernels(str(f), name="k")
    sig = complete_signature(info, signature(GOOD_BOX), {})
    src = generate(info, {}, False, arg_types=sig).source
    (copy,) = [x for x in src.splitlines() if "tma.async_copy_global_to_shared(" in x]
    assert "8192 bytes" in copy
    assert re.search(r"mbarrier\.expect\(.*, 8192\)", src), src


def test_an_aliased_copy_compiles_to_one_box_of_the_slots_bytes(tmp_path):
    """The PTX of a renamed descriptor and slot: the box is the slot ([64, 128] fp8, 8192 bytes),
    and the commit expects exactly those bytes."""
    from tle_compiler.lowering.compile import compile_kernel

    text = kernel_text("descriptor renamed in the kernel", GOOD_BOX).replace(
        PLAIN, SPELLINGS["slot renamed"][2])
    assert "d2 = x_desc" in text and "s2 = slot" in text
    f = write(tmp_path, text)
    c = compile_kernel((str(f), "k"), signature(GOOD_BOX), {})
    ptx = c.asm["ptx"]
    assert "cp.async.bulk.tensor.2d" in ptx
    assert re.search(r"mbarrier\.arrive\.expect_tx[^\n]*8192", ptx)
    # x_desc (copied through d2) and z_desc (unused), both of the slot's box
    assert [m["block_size"] for m in c.metadata.tensordesc_meta] == [[64, 128], [64, 128]]


#: the frontend refuses a descriptor that is not one argument (it follows the values as the
#: protocol reading does); the lowering refuses one it cannot attribute, or that is no descriptor
NOT_ONE_ARGUMENT = ("must be an argument of the kernel",
                    "is not a kernel argument the lowering can follow")


@pytest.mark.parametrize("before_loop,producer,messages", [
    ("", "        slot = w.acquire(t)\n        if t % 2 == 0:\n            d = x_desc\n"
         "        else:\n            d = z_desc\n        tle.gpu.tma_load(slot.tile, d, [t * BM, 0])",
     NOT_ONE_ARGUMENT),
    ("    d = x_desc\n",
     "        slot = w.acquire(t)\n        tle.gpu.tma_load(slot.tile, d, [t * BM, 0])\n"
     "        d = z_desc",
     NOT_ONE_ARGUMENT),
    ("", "        slot = w.acquire(t)\n        tle.gpu.tma_load(slot.tile, N, [t * BM, 0])",
     # the frontend refuses it before the lowering's own words are reached
     ("is argument 'N', of type i32, not a tensor descriptor",
      "kernel argument 'N' is the descriptor of a tle.gpu.tma_load and an integer the pipe "
      "protocol reads")),
], ids=["one of two by path", "rebound in the loop", "not a descriptor"])
def test_a_descriptor_that_is_not_one_descriptor_argument_is_refused(tmp_path, before_loop,
                                                                    producer, messages):
    """A descriptor that is one of two arguments by path, or the previous iteration's rebinding,
    cannot be checked, and an integer argument is no descriptor: refused at the copy, not
    lowered unchecked."""
    from tle_compiler.lowering.compile import compile_kernel

    text = kernel_text("plain", GOOD_BOX).replace(PLAIN, producer)
    text = text.replace("    for t in range(N):\n        slot", before_loop +
                        "    for t in range(N):\n        slot", 1)
    f = write(tmp_path, text)
    with pytest.raises(TleError) as e:
        compile_kernel((str(f), "k"), signature(GOOD_BOX), {})
    assert any(m in e.value.message for m in messages), e.value.message
    assert e.value.loc.line == copy_line(text)


def test_the_lowering_refuses_a_copy_whose_descriptor_it_cannot_attribute():
    """The translator's own guard (behind the frontend's): a descriptor value that is not one
    kernel argument unchanged (``arg`` None) is refused when the compile has a signature, and
    not checked when there is none (Gluon printed alone: no box known)."""
    from types import SimpleNamespace

    from tle_compiler.ir.nodes import Loc
    from tle_compiler.lowering.descriptors import check_emitted_copy

    ring = SimpleNamespace(pipe="ring", field="tile", dtype="float8e4nv", shape=[64, 128])
    loc = Loc("k.py", 7, 9)
    check_emitted_copy({}, None, ring, 2, loc)
    check_emitted_copy(signature(GOOD_BOX), "x_desc", ring, 2, loc)
    with pytest.raises(TleError) as e:
        check_emitted_copy(signature(GOOD_BOX), None, ring, 2, loc)
    assert "(into ring.tile) is not a kernel argument the lowering can follow" in e.value.message
    assert e.value.loc.line == 7 and e.value.check == "signature"
    with pytest.raises(TleError) as e:
        check_emitted_copy(signature(SMALL_BOX), "z_desc", ring, 2, loc)
    assert "argument 'z_desc' is a tensor descriptor of fp8e4nv boxes [64, 64]" in e.value.message
    with pytest.raises(TleError) as e:
        check_emitted_copy(signature(GOOD_BOX), "x_desc", ring, 3, loc)
    assert "gives 3 offsets, but its descriptor 'x_desc' has boxes [64, 128]" in e.value.message


def test_a_launch_with_a_host_descriptor_of_the_wrong_box_is_refused(tmp_path):
    """The run-time launch compiles through the same check: a host descriptor of [64, 64] boxes
    for the aliased copy is refused at the copy (before the launch finds no GPU)."""
    import torch
    from triton.tools.tensor_descriptor import TensorDescriptor

    text = kernel_text("slot renamed", GOOD_BOX)
    path = write(tmp_path, text, "launch_box.py")
    spec = importlib.util.spec_from_file_location("tle_launch_box", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    x = torch.zeros(256, 128, dtype=torch.float8_e4m3fn)
    small = TensorDescriptor(x, list(x.shape), list(x.stride()), [64, 64])
    y = torch.zeros(4 * 64, 128, dtype=torch.float8_e4m3fn)
    with pytest.raises(TleError) as e:
        mod.k[(1,)](small, small, y, 4)
    assert e.value.check == "signature", e.value.message
    assert "boxes [64, 64], but this tle.gpu.tma_load copies it into ring.tile" in e.value.message
    assert e.value.loc.line == copy_line(text)


def test_a_negative_dimension_of_a_tma_filled_field_is_an_error_not_a_crash(tmp_path, capsys):
    text = kernel_text("plain", GOOD_BOX).replace("BN = tl.constexpr(128)\n", "")
    text = text.replace("def k(x_desc, z_desc, y_ptr, N):", "def k(x_desc, z_desc, y_ptr, N, "
                        "BN: tl.constexpr):").replace("(consume, (ring, y_ptr, N))",
                                                      "(consume, (ring, y_ptr, N, BN))")
    text = text.replace("def consume(ring, y_ptr, N):", "def consume(ring, y_ptr, N, "
                        "BN: tl.constexpr):")
    text = text.replace('"N": "i32"}', '"N": "i32", "BN": "constexpr"}').replace(
        '"constexprs": {}', '"constexprs": {"BN": 128}')
    f = write(tmp_path, text)
    # the read specialised to BN = -64 stops at the field's shape (frontend/shared_memory.py), a
    # value the kernel cannot be read with (exit 2), before the TMA copy's byte count
    assert dump_main(["-q", "--param", "BN=-64", str(f)]) == 2
    err = capsys.readouterr().err
    assert ("--param BN=-64: the kernel cannot be read with this value: pipe 'ring': field "
            "'tile' has slot shape [64, -64]: dimension -64 is not positive") in err
    assert "min()" not in err and "Traceback" not in err
    assert dump_main(["-q", "--param", "BN=64", str(f)]) == 0  # a positive value still verifies
