"""TMA tile loads into pipe slots (``tle.gpu.tma_load``), on the CPU: the verifier's rules for
them (adversary kernels rejected at their line, the good ones proved), their Pipe IR text form,
the expect-tx byte count the barriers carry, the lowering (TTGIR/PTX for sm_90a, the descriptor
types of the signature, the expect-tx check, the generated barrier operations against the
verified events) and the example kernels' results on the CPU emulation."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tle_compiler.cli.dump import main as dump_main
from tle_compiler.diagnostics import TleError
from tle_compiler.frontend import read_source
from tle_compiler.ir.parser import parse_module
from tle_compiler.ir.printer import print_program
from tle_compiler.passes import verify
from tle_compiler.semantics.simulator import simulate

ROOT = Path(__file__).resolve().parent.parent
TMA_RING = ROOT / "tle_kernels" / "gpu_tests" / "tma_ring.py"
HEAD = "import triton.language as tl\nimport tle_compiler as tle\n"

# A producer TMA-copies [64, 64] bf16 tiles into a capacity-2 pipe; a consumer stores them.
KERNEL = '''
@tle.jit
def k(x_desc, out_ptr, N):
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, 64, 64], tl.bfloat16),
                 u=tle.gpu.alloc([2, 64], tl.int32))
    tle.gpu.warp_specialize([(fill, (p, x_desc, N)), (drain, (p, out_ptr, N))], [4], [232])


def fill(p, x_desc, N):
    w = p.writer()
    for i in range(N):
        s = w.acquire(i)
        tle.gpu.tma_load(s.t, x_desc, [i * 64, 0])
        tl.store(tle.gpu.local_ptr(s.u), tl.arange(0, 64))
        w.commit(i)


def drain(p, out_ptr, N):
    r = p.reader()
    for i in range(N):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.t))
        u = tl.load(tle.gpu.local_ptr(res.slot.u))
        r.release(i)
        tl.store(out_ptr + (i * 64 + u)[:, None] * 64 + tl.arange(0, 64)[None, :], v)
'''
COPY = "        tle.gpu.tma_load(s.t, x_desc, [i * 64, 0])\n"


def source(kernel: str = KERNEL) -> str:
    return HEAD + textwrap.dedent(kernel)


def line_of(text: str, needle: str, nth: int = 0) -> int:
    hits = [n for n, line in enumerate(text.splitlines(), 1) if needle in line]
    return hits[nth]


def errors_of(text: str) -> list:
    (prog,) = read_source(text, "k.py").kernels
    return verify(prog).errors


# ------------------------------------------------------------------ the verifier


def test_a_reader_that_waits_for_a_tma_filled_slot_is_proved():
    (prog,) = read_source(source(), "k.py").kernels
    ctx = verify(prog)
    assert ctx.ok and ctx.verdict().kind == "proved", ctx.diagnostics
    (b,) = [b for b in ctx.barriers if b.kind == "full" and b.stage == 0]
    assert (b.expect_tx, b.tma) == (64 * 64 * 2, ("t",))
    # the simulator runs the TMA copy as the writer's write of its window
    assert simulate(prog, {"N": 5}).ok


@pytest.mark.parametrize("where", ["after the commit", "in an if of the window",
                                   "in a loop of the window"])
def test_a_tma_copy_outside_its_window_is_rejected_at_its_line(where):
    text = source()
    if where == "after the commit":
        bad = text.replace(COPY, "").replace("        w.commit(i)\n", "        w.commit(i)\n" + COPY)
    elif where == "in an if of the window":
        bad = text.replace(COPY, "        if i % 2 == 0:\n    " + COPY)
    else:
        bad = text.replace(COPY, "        for j in range(1):\n    " + COPY)
    assert bad != text
    errs = errors_of(bad)
    line = line_of(bad, "tle.gpu.tma_load")
    (e,) = [e for e in errs if e.loc.line == line]
    assert e.check == "tma-window" and "must stand between p.acquire(i) and p.commit(i)" in \
        e.message
    # and the commit whose window lacks it (the copy is of no window of this block)
    assert {x.loc.line for x in errs} == {line, line_of(bad, "w.commit(i)")}


def test_a_tma_copy_after_the_commit_is_rejected_by_tle_dump_with_path_and_line(tmp_path, capsys):
    bad = source().replace(COPY, "").replace("        w.commit(i)\n",
                                             "        w.commit(i)\n" + COPY)
    f = tmp_path / "late_copy.py"
    f.write_text(bad)
    assert dump_main([str(f)]) == 1
    err = capsys.readouterr().err
    assert f"{f}:{line_of(bad, 'tle.gpu.tma_load')}: error:" in err


def test_a_window_without_its_copy_is_rejected_at_the_commit():
    text = source().replace('''        s = w.acquire(i)
        tle.gpu.tma_load(s.t, x_desc, [i * 64, 0])
        tl.store(tle.gpu.local_ptr(s.u), tl.arange(0, 64))
        w.commit(i)''', '''        s = w.acquire(i)
        if i == 0:
            tl.store(tle.gpu.local_ptr(s.u), tl.arange(0, 64))
            w.commit(i)
        else:
            tle.gpu.tma_load(s.t, x_desc, [i * 64, 0])
            tl.store(tle.gpu.local_ptr(s.u), tl.arange(0, 64))
            w.commit(i)''')
    errs = errors_of(text)
    assert errs and all(e.check == "tma-window" for e in errs), errs
    # neither commit has its acquire in its block, nor the copy of the else branch its window
    assert {e.loc.line for e in errs} == {line_of(text, "w.commit(i)", 0),
                                           line_of(text, "w.commit(i)", 1),
                                           line_of(text, "tle.gpu.tma_load")}


@pytest.mark.parametrize("guard", [
    "        if tl.load(x_desc_ok + i) > 0:\n    ",        # a condition on data
    "        while tl.load(x_desc_ok + i) > 0:\n    ",     # a while loop
    "        for j in range(tl.load(x_desc_ok + i)):\n    ",  # a loop whose trip count is data
    "        k = 0\n        while k > 1:\n    ",    # a while loop waiting on nothing
])
def test_a_copy_that_runs_depending_on_data_is_a_frontend_error(guard):
    text = source().replace("def fill(p, x_desc, N):", "def fill(p, x_desc, N, x_desc_ok):") \
        .replace("(fill, (p, x_desc, N))", "(fill, (p, x_desc, N, out_ptr))") \
        .replace(COPY, guard + COPY)
    with pytest.raises(TleError) as e:
        errors_of(text)
    if guard.lstrip().startswith("while tl.load"):
        # x_desc_ok is out_ptr, which the kernel stores to: the loop re-reads memory the kernel
        # writes, a wait refused before the copy's window is looked at (frontend/memory_waits.py)
        assert (e.value.check, e.value.loc.line) == ("memory-wait", line_of(text, "while tl.load"))
        return
    assert (e.value.check, e.value.loc.line) == ("tma-window", line_of(text, "tle.gpu.tma_load"))
    assert "whether the copy runs must be known" in e.value.message


def test_a_second_copy_in_one_window_is_rejected_at_its_line():
    text = source().replace(COPY, COPY + COPY)
    (e,) = errors_of(text)
    assert (e.check, e.loc.line) == ("tma-window", line_of(text, "tle.gpu.tma_load", 1))
    assert "copied twice" in e.message


@pytest.mark.parametrize("touch", ["store", "load"])
def test_the_writer_may_not_touch_a_tma_filled_field(touch):
    stmt = ("        tl.store(tle.gpu.local_ptr(s.t), tl.zeros([64, 64], tl.bfloat16))\n"
            if touch == "store" else "        v = tl.load(tle.gpu.local_ptr(s.t))\n")
    text = source().replace(COPY, COPY + stmt)
    errs = errors_of(text)
    assert [(e.check, e.loc.line) for e in errs] == [("tma-field-access",
                                                      line_of(text, "local_ptr(s.t)"))]
    assert f"filled by TMA copies (line {line_of(text, 'tle.gpu.tma_load')})" in errs[0].message


def test_a_read_after_the_release_of_a_tma_filled_slot_is_rejected():
    text = source().replace('''        r.release(i)
        tl.store(out_ptr + (i * 64 + u)[:, None] * 64 + tl.arange(0, 64)[None, :], v)''',
                            '''        r.release(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.t))
        tl.store(out_ptr + (i * 64 + u)[:, None] * 64 + tl.arange(0, 64)[None, :], v)''')
    errs = errors_of(text)
    assert errs[0].check == "access-outside-window"
    assert errs[0].loc.line == line_of(text, "res.slot.t", 1)


@pytest.mark.parametrize("call,check", [
    ("tle.gpu.tma_load(res.slot.t, out_ptr, [0, 0])", "reader-write"),
    ("tle.gpu.tma_load(s.t, x_desc + 1, [i * 64, 0])", "bad-tma"),
    ("tle.gpu.tma_load(tle.gpu.local_ptr(s.t), x_desc, [i * 64, 0])", "bad-tma"),
    ("tle.gpu.tma_load(s.t, x_desc, i * 64)", "bad-tma"),
    ("tle.gpu.tma_load(s.t, x_desc)", "bad-tma"),
    ("tle.gpu.tma_load(s.t, x_desc, [i * 64, 0], box=1)", "bad-tma"),
])
def test_misused_tma_loads_are_frontend_errors_at_their_line(call, check):
    text = source()
    if call.startswith("tle.gpu.tma_load(res"):
        text = text.replace("        r.release(i)\n", f"        {call}\n        r.release(i)\n")
    else:
        text = text.replace(COPY, f"        {call}\n")
    with pytest.raises(TleError) as e:
        errors_of(text)
    assert (e.value.check, e.value.loc.line) == (check, line_of(text, call))


def test_keyword_arguments_read_as_positional_ones(tmp_path):
    from tle_compiler.frontend import read_kernels
    from tle_compiler.ir import kernel as K

    text = source().replace(COPY, "        tle.gpu.tma_load(offsets=[i * 64, 0], dst=s.t, "
                                  "desc=x_desc)\n")
    f = tmp_path / "kw.py"
    f.write_text(text)
    (info,) = read_kernels(str(f), name="k")
    assert verify(info.program).ok
    ops = [e for p in info.kir.partitions for st in K.walk_stmts(p.body)
           for x in K.stmt_exprs(st) for e in K.walk_expr(x)
           if isinstance(e, K.Op) and e.name == "tle.gpu.tma_load"]
    assert len(ops) == 1 and not ops[0].kwargs
    assert [type(a).__name__ for a in ops[0].args] == ["SlotField", "Name", "TupleExpr"]


def test_a_copy_into_a_free_buffer_is_refused():
    """A free buffer has no mbarrier, so no read of it (by the other partition here, which
    would also race) can wait for the copy's bytes: refused at the copy (bad-tma), before the
    race check (adversarial round 32)."""
    text = source().replace("    tle.gpu.warp_specialize(", "    b = tle.gpu.alloc([64, 64], tl.bfloat16)\n"
                            "    tle.gpu.warp_specialize(") \
        .replace("(fill, (p, x_desc, N))", "(fill, (p, x_desc, N, b))") \
        .replace("(drain, (p, out_ptr, N))", "(drain, (p, out_ptr, N, b))") \
        .replace("def fill(p, x_desc, N):", "def fill(p, x_desc, N, b):") \
        .replace("def drain(p, out_ptr, N):", "def drain(p, out_ptr, N, b):") \
        .replace(COPY, COPY + "        tle.gpu.tma_load(b, x_desc, [0, 0])\n") \
        .replace("        r.release(i)\n", "        r.release(i)\n"
                 "        tl.store(out_ptr + tl.arange(0, 64), tl.sum(tl.load(tle.gpu.local_ptr(b)), 0))\n")
    with pytest.raises(TleError) as e:
        errors_of(text)
    assert e.value.check == "bad-tma" and "outside a pipe" in e.value.message


# ------------------------------------------------------------------ the Pipe IR text form

PIPE = '''kernel k
param N
pipe p capacity=2 fields=(t)
partition a default warps=4 {
  for i in range(N) {
    p.acquire(i)
    p.tma(i, t, 8192)
    p.commit(i)
  }
}
partition b warps=4 {
  for i in range(N) {
    p.wait(i)
    p.read(i, t)
    p.release(i)
  }
}
'''


def test_pipe_ir_tma_accesses_print_and_parse_back():
    (prog,) = parse_module(PIPE).kernels
    access = prog.partitions[0].body[0].body[1]
    assert (access.tma, access.nbytes, access.side, access.verb) == (True, 8192, "writer", "tma")
    text = print_program(prog, locations=False)
    assert "    p.tma(i, t, 8192)\n" in text
    (again,) = parse_module(text).kernels
    assert print_program(again, locations=False) == text
    ctx = verify(prog)
    assert ctx.ok and [b.expect_tx for b in ctx.barriers if b.kind == "full"] == [8192, 8192]


@pytest.mark.parametrize("line,message", [
    ("p.write(i, t, 8192)", "only a TMA copy"),
    ("p[x].tma(i, t)", "'tma' is the writer's access"),
])
def test_pipe_ir_tma_syntax_errors(line, message):
    with pytest.raises(TleError) as e:
        parse_module(PIPE.replace("p.tma(i, t, 8192)", line))
    assert message in e.value.message


def test_a_pipe_file_with_a_copy_after_its_commit_is_rejected(tmp_path, capsys):
    f = tmp_path / "late.pipe"
    f.write_text(PIPE.replace("    p.tma(i, t, 8192)\n    p.commit(i)\n",
                              "    p.commit(i)\n    p.tma(i, t, 8192)\n"))
    assert dump_main([str(f)]) == 1
    assert f"{f}:8: error: the TMA copy into p.t" in capsys.readouterr().err


# ------------------------------------------------------------------ the lowering

@pytest.fixture(scope="module")
def compiled():
    from tle_compiler.lowering import compile_kernel
    from tle_compiler.lowering.dumping import default_config

    out = {}
    for name in ("tma_ring", "tma_mixed", "tma_pages"):
        cfg = default_config(str(TMA_RING), name)
        out[name] = compile_kernel((str(TMA_RING), name), cfg["signature"], cfg["constexprs"])
    return out


def test_the_example_compiles_to_tma_copies_and_expect_tx_arrives(compiled):
    from tle_compiler.lowering import ptxas_stats

    for name, full_count in (("tma_ring", 1), ("tma_mixed", 2)):
        c = compiled[name]
        ttgir, ptx = c.asm["ttgir"], c.asm["ptx"]
        # tma_mixed copies in a worker partition: the descriptor is one of its captures
        assert ("ttng.async_tma_copy_global_to_local %x_desc[" if name == "tma_ring" else
                "ttng.async_tma_copy_global_to_local %arg") in ttgir
        assert "!tt.tensordesc<tensor<64x256xbf16, #shared>>" in ttgir
        assert "ttng.barrier_expect" in ttgir and ", 32768, %true" in ttgir
        inits = [int(line.split("init_barrier %")[1].split(",")[1].split(":")[0])
                 for line in ttgir.splitlines() if "ttng.init_barrier" in line]
        assert sorted(set(inits)) == sorted({1, full_count}), inits
        assert "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes" in ptx
        assert "mbarrier.arrive.expect_tx.shared.b64 _, [%r" in ptx and "], 32768;" in ptx
        stats = ptxas_stats(c)
        assert stats["ok"] and stats["spill_stores"] == 0 and stats["spill_loads"] == 0, stats
        # one descriptor: 64x64 boxes (a 128-byte swizzle span of bf16), 128-byte swizzle
        (meta,) = c.metadata.tensordesc_meta
        assert meta["block_size"] == [64, 64] and meta["swizzle"] == 3
    assert "], 0;" in compiled["tma_mixed"].asm["ptx"]  # the close declares no bytes


def test_a_rank4_descriptor_copies_through_a_view_of_the_slot_with_the_boxs_shape(compiled):
    """tma_pages: box [1, 64, 1, 256] into a [64, 256] field. The copy lands in a reshaped view
    of the 2-D slot whose NVMMA layout is the descriptor's (rank 4, the same 128-byte swizzle),
    four coordinates, a 4-D bulk tensor copy of 64-column boxes, the field's bytes expected."""
    from tle_compiler.lowering import ptxas_stats

    c = compiled["tma_pages"]
    ttgir, ptx = c.asm["ttgir"], c.asm["ptx"]
    src = c.tle_generated.source
    assert "ring_page.index(_ring_s1).reshape(kv_desc.block_shape))" in src
    assert "[(first + t), (valid - PAGE), HEAD, COL0]" in src
    shared = {line.split(" = ", 1)[0]: line.split(" = ", 1)[1] for line in ttgir.splitlines()
              if line.startswith("#shared")}
    (desc,) = {m for m in shared if f"tensordesc<tensor<1x64x1x256xbf16, {m}>>" in ttgir}
    assert shared[desc] == ("#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, "
                            "elementBitWidth = 16, rank = 4}>")
    assert "ttg.memdesc_reshape" in ttgir and \
        f"-> !ttg.memdesc<1x64x1x256xbf16, {desc}, #smem, mutable>" in ttgir
    (copy,) = [x for x in ttgir.splitlines() if "ttng.async_tma_copy_global_to_local" in x]
    assert "%kv_desc[" in copy and ", %HEAD, %COL0]" in copy
    assert "ttng.barrier_expect" in ttgir and ", 32768, %true" in ttgir
    assert "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes" in ptx
    assert "cp.async.bulk.tensor.2d" not in ptx and "], 32768;" in ptx
    (meta,) = c.metadata.tensordesc_meta
    assert meta["block_size"] == [1, 64, 1, 64] and meta["swizzle"] == 3
    stats = ptxas_stats(c)
    assert stats["ok"] and stats["spill_stores"] == 0 and stats["spill_loads"] == 0, stats


def test_the_signature_completes_a_rank4_descriptor_with_the_boxs_layout():
    from triton.experimental.gluon import language as gl

    from tle_compiler.frontend import read_kernels
    from tle_compiler.lowering.descriptors import complete_signature

    (info,) = read_kernels(str(TMA_RING), name="tma_pages")
    got = complete_signature(info, {"kv_desc": "tensordesc<bf16[1, 64, 1, 256]>"}, {})
    layout = gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=4)
    assert got == {"kv_desc": f"tensordesc<bf16[1, 64, 1, 256],{layout!r}>"}


@pytest.mark.parametrize("t,message", [
    ("tensordesc<bf16[2, 64, 1, 256]>", "boxes [2, 64, 1, 256], but this tle.gpu.tma_load copies "
                                        "it into ring.page, a bf16 slot of shape [64, 256]"),
    ("tensordesc<bf16[1, 64, 1, 128]>", "boxes [1, 64, 1, 128], but"),
    ("tensordesc<bf16[64, 256, 1, 1]>", "boxes [64, 256, 1, 1], but"),  # not after the last
    ("tensordesc<bf16[1, 64, 256]>", "gives 4 offsets, but its descriptor 'kv_desc' has boxes "
                                     "[1, 64, 256]: one offset per box dimension (3)"),
    ("tensordesc<bf16[1, 1, 64, 1, 256]>", "gives 4 offsets"),
    ("tensordesc<bf16[1, 1, 1, 64, 1, 256]>", "a TMA box has 1 to 5 dimensions"),
])
def test_a_rank4_box_that_does_not_fit_the_field_or_the_offsets_is_an_error(t, message):
    from tle_compiler.frontend import read_kernels
    from tle_compiler.lowering.descriptors import complete_signature

    (info,) = read_kernels(str(TMA_RING), name="tma_pages")
    with pytest.raises(TleError) as e:
        complete_signature(info, {"kv_desc": t}, {})
    assert message in e.value.message and e.value.check == "signature"
    if "dimensions" not in message:
        assert e.value.loc.line == line_of(TMA_RING.read_text(), "tle.gpu.tma_load(slot.page")


def test_four_offsets_with_a_two_dimensional_box_are_an_error_at_the_copy():
    from tle_compiler.frontend import read_kernels
    from tle_compiler.lowering.descriptors import complete_signature

    (info,) = read_kernels(str(TMA_RING), name="tma_pages")
    with pytest.raises(TleError) as e:
        complete_signature(info, {"kv_desc": "tensordesc<bf16[64, 256]>"}, {})
    assert "gives 4 offsets, but its descriptor 'kv_desc' has boxes [64, 256]" in e.value.message
    assert e.value.loc.line == line_of(TMA_RING.read_text(), "tle.gpu.tma_load(slot.page")


@pytest.mark.parametrize("offsets", ["[i * 64]", "[0, 0, 0, 0, i * 64, 0]"])
def test_offsets_fewer_than_the_fields_dimensions_or_more_than_five_are_not_lowered(
        tmp_path, offsets):
    """Without a signature (emit-gluon alone) the box is not known: the lowering still refuses
    offsets that no box could take (fewer than the field's dimensions, more than TMA has)."""
    from tle_compiler.lowering.compile import gluon_source

    text = source().replace(COPY, f"        tle.gpu.tma_load(s.t, x_desc, {offsets})\n")
    f = tmp_path / "offsets.py"
    f.write_text(text)
    with pytest.raises(TleError) as e:
        gluon_source((str(f), "k"), {}, debug_waits=False)
    assert "offsets must be integers, one per dimension of the descriptor's box" in \
        e.value.message
    assert e.value.loc.line == line_of(text, "tle.gpu.tma_load")


def test_the_signature_completes_a_descriptor_with_the_rings_layout():
    from triton.experimental.gluon import language as gl

    from tle_compiler.frontend import read_kernels
    from tle_compiler.lowering.descriptors import complete_signature

    (info,) = read_kernels(str(TMA_RING), name="tma_ring")
    sig = {"x_desc": "tensordesc<bf16[64, 256]>", "y_ptr": "*bf16"}
    got = complete_signature(info, sig, {})
    layout = gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2)
    assert got == {"x_desc": f"tensordesc<bf16[64, 256],{layout!r}>", "y_ptr": "*bf16"}
    assert complete_signature(info, got, {}) == got  # a given layout that is the ring's is kept


@pytest.mark.parametrize("t,message", [
    ("tensordesc<bf16[64, 128]>", "boxes [64, 128], but this tle.gpu.tma_load copies it into "
                                  "ring.tile, a bf16 slot of shape [64, 256]"),
    ("tensordesc<fp16[64, 256]>", "a tensor descriptor of fp16 boxes"),
    ("tensordesc<bf16[64, 256],NVMMASharedLayout(swizzle_byte_width=64, element_bitwidth=16, "
     "rank=2, transposed=False, fp4_padded=False, cga_layout=[])>", "but the ring its TMA "
                                                                    "copies fill has"),
])
def test_a_descriptor_that_does_not_fit_the_slot_is_an_error(t, message):
    from tle_compiler.frontend import read_kernels
    from tle_compiler.lowering.descriptors import complete_signature

    (info,) = read_kernels(str(TMA_RING), name="tma_ring")
    with pytest.raises(TleError) as e:
        complete_signature(info, {"x_desc": t}, {})
    assert message in e.value.message and e.value.check == "signature"
    if "boxes" in message:
        assert e.value.loc.line == line_of(TMA_RING.read_text(), "tle.gpu.tma_load(slot.tile")


def test_host_descriptors_give_the_signature_type():
    import torch
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor as GluonDescriptor
    from triton.tools.tensor_descriptor import TensorDescriptor

    from tle_compiler.lowering.runtime import arg_type

    x = torch.zeros(128, 3, 576, dtype=torch.bfloat16)[:, 1, :]
    d = TensorDescriptor(x, list(x.shape), list(x.stride()), [64, 256])
    assert arg_type("x_desc", d, "k") == "tensordesc<bf16[64, 256]>"
    layout = gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2)
    g = GluonDescriptor(x, list(x.shape), list(x.stride()), [64, 256], layout)
    assert arg_type("x_desc", g, "k") == f"tensordesc<bf16[64, 256],{layout!r}>"


def test_a_commit_whose_expect_tx_is_not_its_windows_bytes_is_not_lowered():
    from dataclasses import replace

    from tle_compiler.ir import kernel as K
    from tle_compiler.ir.attrs import MBarrierArrive
    from tle_compiler.lowering.codegen import kernel_ir
    from tle_compiler.lowering.compile import kernel_info_of
    from tle_compiler.lowering.kir_passes import run_passes
    from tle_compiler.passes.kir_rewrite import map_partition_events

    info = kernel_info_of((str(TMA_RING), "tma_ring"), {})
    m = run_passes(kernel_ir(info), "materialize-barriers", info=info, constexprs={},
                   program=info.program)

    def halve(part, e):
        ops = tuple(replace(op, tx_bytes=op.tx_bytes // 2) if isinstance(op, MBarrierArrive)
                    else op for op in K.get_attr(e, "barrier_ops", ()))
        return K.with_attrs(e, barrier_ops=ops)

    m.kernel = map_partition_events(m.kernel, halve)
    with pytest.raises(TleError) as e:
        run_passes(m, "emit-gluon")
    assert "expect-tx 16384 bytes, but its window's TMA copies bring 32768" in e.value.message
    assert e.value.loc.line == line_of(TMA_RING.read_text(), "w.commit(t)")


def test_the_generated_copies_signal_their_slots_barriers():
    from tle_compiler.testing.gluon_trace import LoweredKernel, compare, trace_gluon

    lk = LoweredKernel((str(TMA_RING), "tma_ring"), {})
    params, problems = lk.check({"N_TILES": 5, "COL0": 0, "stride_y": 256})
    assert params == {"N_TILES": 5} and problems == []
    tr = lk.trace({"N_TILES": 2, "COL0": 0, "stride_y": 256})
    ops = [(o.op, o.array, o.stage) for o in tr.partition("produce").ops]
    assert ops == [("wait", "ring_empty0", 0), ("tma", "ring_full0", 0),
                   ("expect", "ring_full0", 0), ("wait", "ring_empty0", 1),
                   ("tma", "ring_full0", 1), ("expect", "ring_full0", 1)]
    # a copy that completes on another stage's barrier than its slot's is caught
    line = next(x for x in lk.gen.source.splitlines() if "tma.async_copy_global_to_shared" in x)
    wrong = lk.gen.source.replace(line, line.replace("ring_full0.index(_ring_s1)",
                                                     "ring_full0.index(0)"))
    assert wrong != lk.gen.source
    tr = trace_gluon(wrong, lk.gen.kernel, {"N_TILES": 2, "COL0": 0, "stride_y": 256})
    (msg,) = compare(lk.expected({"N_TILES": 2}), tr, lk.partitions, wrong)
    assert "expected  tma ring_full0[1]" in msg and "generated tma ring_full0[0]" in msg


def test_a_copy_into_a_reshaped_view_signals_its_slots_barrier():
    """The trace reads the copy of tma_pages through its `.reshape(kv_desc.block_shape)` view:
    each copy completes on the full barrier of its slot's stage, then the commit's expect."""
    from tle_compiler.testing.gluon_trace import LoweredKernel

    lk = LoweredKernel((str(TMA_RING), "tma_pages"), {})
    params, problems = lk.check({"N_PAGES": 5, "HEAD": 1, "COL0": 0})
    assert params == {"N_PAGES": 5} and problems == []
    tr = lk.trace({"N_PAGES": 2, "HEAD": 1, "COL0": 0})
    ops = [(o.op, o.array, o.stage) for o in tr.partition("produce_pages").ops]
    assert ops == [("wait", "ring_empty0", 0), ("tma", "ring_full0", 0),
                   ("expect", "ring_full0", 0), ("wait", "ring_empty0", 1),
                   ("tma", "ring_full0", 1), ("expect", "ring_full0", 1)]


def test_eager_publish_leaves_the_expect_tx_arrive_elected(tmp_path):
    from tle_compiler.lowering import compile_kernel

    f = tmp_path / "eager_tma.py"
    f.write_text(source().replace("@tle.jit\n", "@tle.jit(eager_publish=True)\n"))
    sig = {"x_desc": "tensordesc<bf16[64, 64]>", "out_ptr": "*bf16", "N": "i32"}
    c = compile_kernel((str(f), "k"), sig, {})
    src = c.tle_generated.source
    assert "mbarrier.arrive(p_full0.index(_p_s2), count=1)" in src
    assert "mbarrier.expect(p_full0.index(_p_s2), 8192)" in src
    assert "# p.full[g0][0] tma-partition" in src and "# p.empty[g0][0] eager" in src


def test_skipping_a_tma_fill_is_refused(tmp_path):
    from tle_compiler.lowering import compile_kernel, instrument
    from tle_compiler.lowering.dumping import default_config

    cfg = default_config(str(TMA_RING), "tma_ring")
    with instrument.skip_fills("ring", path=str(TMA_RING)):
        with pytest.raises(TleError) as e:
            compile_kernel((str(TMA_RING), "tma_ring"), cfg["signature"], cfg["constexprs"])
    assert "cannot skip the TMA copies of ring.tile" in e.value.message


# ------------------------------------------------------------------ the example on the emulation

@pytest.mark.parametrize("n", [0, 1, 2, 5])
@pytest.mark.parametrize("col0", [256, 448])
def test_the_example_copies_tiles_on_the_emulation(n, col0):
    from tests.gpu.tma_cases import check_tma_mixed, check_tma_ring
    from tle_compiler.testing.emulator import load_kernel_module

    mod = load_kernel_module(TMA_RING)
    check_tma_ring(mod, "cpu", n, col0)
    check_tma_mixed(mod, "cpu", n, col0)


@pytest.mark.parametrize("n", [0, 1, 4])
@pytest.mark.parametrize("col0", [0, 448])
def test_the_pages_example_zero_fills_shifted_tokens_on_the_emulation(n, col0):
    from tests.gpu.tma_cases import check_tma_pages
    from tle_compiler.testing.emulator import load_kernel_module

    check_tma_pages(load_kernel_module(TMA_RING), "cpu", n, col0)


def test_the_pages_check_sees_a_copy_that_is_not_shifted(tmp_path):
    """The check of tma_pages fails when the valid rows land at the start of the slot (a copy
    at token 0): the comparison sees row placement, not only values."""
    from tests.gpu.tma_cases import check_tma_pages
    from tle_compiler.testing.emulator import load_kernel_module

    unshifted = TMA_RING.read_text().replace("[first + t, valid - PAGE, HEAD, COL0]",
                                             "[first + t, 0, HEAD, COL0]")
    assert unshifted != TMA_RING.read_text()
    mod_path = tmp_path / "unshifted_pages.py"
    mod_path.write_text(unshifted)
    with pytest.raises(AssertionError, match="elements differ"):
        check_tma_pages(load_kernel_module(mod_path), "cpu", 1, 0)


def test_a_launch_compiles_for_the_host_descriptor_it_is_given():
    """Without a GPU a launch stops after compiling: the descriptor's type came from the host
    descriptor (no layout) and was completed with the ring's."""
    import torch

    from tests.gpu.tma_cases import descriptor, source
    from tle_kernels.gpu_tests import tma_ring

    x = source(256, 1, "cpu")
    y = torch.zeros(256, 256, dtype=torch.bfloat16)
    with pytest.raises(TleError) as e:
        tma_ring.tma_ring[(2,)](descriptor(x), y, 256, 2, 0)
    assert e.value.check == "no-gpu"
    (compiled,) = tma_ring.tma_ring.runtime.cache.values()
    assert "!tt.tensordesc<tensor<64x256xbf16, #shared>>" in compiled.asm["ttgir"]


def test_a_copy_into_a_field_no_reader_sees_is_not_lowered(tmp_path):
    """A field no reader's view holds belongs to no field group: no full barrier could track
    the copy (verify-protocol refuses it at the copy, passes/tma_windows.py)."""
    from tle_compiler.lowering import compile_kernel

    text = source().replace("r = p.reader()", "r = p.reader(\"a\", fields=(\"u\",))") \
        .replace("p = tle.pipe(capacity=2,", "p = tle.pipe(capacity=2, readers=(\"a\",),") \
        .replace("        v = tl.load(tle.gpu.local_ptr(res.slot.t))\n", "") \
        .replace("tl.arange(0, 64)[None, :], v)", "tl.arange(0, 64)[None, :], u)")
    f = tmp_path / "unread.py"
    f.write_text(text)
    sig = {"x_desc": "tensordesc<bf16[64, 64]>", "out_ptr": "*i32", "N": "i32"}
    with pytest.raises(TleError) as e:
        compile_kernel((str(f), "k"), sig, {})
    assert "is read by no reader, so no full barrier tracks its copy" in e.value.message
    assert e.value.loc.line == line_of(text, "tle.gpu.tma_load")


def test_a_launch_compiles_for_a_rank4_host_descriptor():
    """A rank-4 host descriptor over a strided view of a paged tensor gives the type
    tensordesc<bf16[1, 64, 1, 256]>, completed with the rank-4 layout of the box."""
    import torch

    from tests.gpu.tma_cases import page_descriptor, paged_source
    from tle_compiler.lowering.runtime import arg_type
    from tle_kernels.gpu_tests import tma_ring

    kv = paged_source(2, 1, "cpu")
    d = page_descriptor(kv)
    assert arg_type("kv_desc", d, "k") == "tensordesc<bf16[1, 64, 1, 256]>"
    valid = torch.tensor([64, 0], dtype=torch.int32)
    y = torch.zeros(128, 256, dtype=torch.bfloat16)
    with pytest.raises(TleError) as e:
        tma_ring.tma_pages[(2,)](d, valid, y, 1, 1, 0)
    assert e.value.check == "no-gpu"
    (compiled,) = tma_ring.tma_pages.runtime.cache.values()
    assert "!tt.tensordesc<tensor<1x64x1x256xbf16, #shared>>" in compiled.asm["ttgir"]
