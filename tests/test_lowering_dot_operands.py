"""A tl.dot operand goes to wgmma straight from shared memory only when it is a pipe slot's tile
itself: `tl.load(tle.gpu.local_ptr(slot.f))` (or tl.trans of one), directly or through a name
assigned once. An expression of the tile (`-k`, `k.to(...)`, `tl.exp2(k)`) was lowered to a wgmma
reading the raw tile, dropping the expression, while tle-dump said verified. Now:
- an A operand computed from a tile is computed in registers and fed to wgmma as a register
  operand (generated Gluon below; the numbers on the CPU emulator here and on the GPU in
  tests/gpu/test_dot_operand_expressions.py);
- a B operand computed from a tile (or any register tensor, or a name assigned more than once) was
  refused at its line (wgmma reads B only from shared memory) while tle-dump said verified; now it
  is computed in registers where it stands, stored into a shared-memory buffer of its own with a
  proxy fence, and read from there by a synchronous wgmma (translate.py ``_staged_b_operand``);
- a name bound to an `arange` and then transformed (`-`, `.to`) is no longer rematerialised as the
  bare arange at its uses."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("triton.experimental.gluon")

from tle_compiler.diagnostics import TleError  # noqa: E402
from tle_compiler.lowering import gluon_source  # noqa: E402

from .dot_operand_kernels import (B_KERNEL_SRC, KERNEL_SRC, SIGNATURE, inputs,  # noqa: E402
                                  reference, reference_b)


@pytest.fixture(scope="module")
def kernel_file(tmp_path_factory):
    f = tmp_path_factory.mktemp("dot_operands") / "dot_exprs.py"
    f.write_text(KERNEL_SRC)
    return f


def _partition(src: str, name: str) -> str:
    return src.split(f"def {name}(", 1)[1].split("\n@gluon.jit", 1)[0]


def _wgmmas(body: str) -> list[str]:
    """The A operand text of each warpgroup_mma, in order."""
    return re.findall(r"warpgroup_mma\(([^,]+),", body)


def test_a_operand_expressions_are_computed_in_registers(kernel_file):
    consume = _partition(gluon_source((str(kernel_file), "dot_exprs")).source, "consume")
    a_ops = _wgmmas(consume)
    assert len(a_ops) == 3, consume
    # no wgmma reads the `a` ring: each A operand is a register tensor converted to DotOperand
    assert not any(op.startswith("kv_a.") for op in a_ops), a_ops
    conv = dict(re.findall(r"(_a\d+) = gl\.convert_layout\((.+), L\d+\)", consume))
    assert set(a_ops) <= set(conv), (a_ops, conv)
    exprs = [conv[op] for op in a_ops]
    assert exprs[0] == "ea" and "ea = gl.exp2(a.to(gl.float32)).to(gl.bfloat16)" in consume
    assert exprs[1] == "(-a)"
    # x is the tile or -x depending on the branch taken: the register value after the if
    assert exprs[2] == "x" and "x = (-x)" in consume
    assert consume.index("x = (-x)") < consume.index(f"{a_ops[2]} = gl.convert_layout(x")
    # each expression is computed before the wgmma that reads it
    for op in a_ops:
        assert consume.index(f"{op} = gl.convert_layout") < consume.index(f"warpgroup_mma({op},")
    # B stays in shared memory: the `b` ring itself
    assert all(m == "kv_b.index(_kv_s1)" for m in re.findall(r"warpgroup_mma\([^,]+, ([^,]+),",
                                                               consume))


def test_the_register_operands_compile_for_sm90a(kernel_file):
    from tle_compiler.lowering import compile_kernel, ptxas_stats

    c = compile_kernel((str(kernel_file), "dot_exprs"), SIGNATURE)
    dots = [ln for ln in c.asm["ttgir"].splitlines() if "ttng.warp_group_dot " in ln]
    assert len(dots) == 3
    # operand types: A a register tensor in the DotOperand layout, B a shared-memory descriptor
    assert all(re.search(r": tensor<64x64xbf16, #ttg\.dot_op<\{opIdx = 0.*\* !ttg\.memdesc", d)
               for d in dots), dots
    st = ptxas_stats(c)
    assert st["ok"] and (st["spill_stores"], st["spill_loads"]) == (0, 0), st["log"]


@pytest.mark.parametrize("n", [0, 1, 2, 3])
def test_emulated_numbers_equal_torch(kernel_file, n):
    """The kernel's math (the reference the GPU test holds the lowered kernel to)."""
    torch = pytest.importorskip("torch")
    from tle_compiler.testing.emulator import load_kernel_module

    mod = load_kernel_module(kernel_file)
    a, b, s = inputs(n, "cpu")
    mod.dot_exprs[(1,)](a, b, s, n)
    if n == 0:
        assert torch.isnan(s).all()
    else:
        torch.testing.assert_close(s[:n], reference(a, b, n), rtol=1e-3, atol=1e-3)


B_KERNEL = '''
import triton.language as tl

import tle_compiler as tle


@tle.jit
def qk(q_ptr, k_ptr, s_ptr, N):
    kv = tle.pipe(capacity=2, k=tle.gpu.alloc([2, 64, 64], tl.bfloat16))
    tle.gpu.warp_specialize([(produce, (kv, k_ptr, N)), (consume, (kv, q_ptr, s_ptr, N))],
                            [4], [232])


def produce(kv, k_ptr, N):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    w = kv.writer()
    for t in range(N):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.k), tl.load(k_ptr + t * 4096 + offs))
        w.commit(t)


def consume(kv, q_ptr, s_ptr, N):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    q = tl.load(q_ptr + offs)
    r = kv.reader()
    for t in range(N):
        res = r.wait(t)
        k = tl.load(tle.gpu.local_ptr(res.slot.k))
BODY
        r.release(t)
        tl.store(s_ptr + t * 4096 + offs, s)
'''

STAGED = {
    "exp-name": ("        kk = tl.exp2(k.to(tl.float32)).to(tl.bfloat16)\n        s = tl.dot(q, kk)",
                 "kk"),
    "neg-name": ("        kk = -k\n        s = tl.dot(q, kk)", "kk"),
    "neg-inline": ("        s = tl.dot(q, -k)", "(-k)"),
    "trans-of-neg": ("        s = tl.dot(q, tl.trans(-k))", "gl.permute((-k), (1, 0))"),
    "to-inline": ("        s = tl.dot(q, k.to(tl.bfloat16))", "k.to(gl.bfloat16)"),
    "rebound": ("        k = -k\n        s = tl.dot(q, k)", "k"),
    "if": ("        if t % 2 == 1:\n            k = tl.load(tle.gpu.local_ptr(res.slot.k))\n"
           "        s = tl.dot(q, k)", "k"),
}
_STAGE = re.compile(r"(_b\d+) = gl\.allocate_shared_memory\(gl\.bfloat16, \[64, 64\], "
                    r"gl\.NVMMASharedLayout\(swizzle_byte_width=128, element_bitwidth=16, "
                    r"rank=2\), (.+)\)  # B of the tl\.dot")


@pytest.mark.parametrize("name", list(STAGED))
def test_a_b_operand_computed_in_registers_is_staged_through_shared_memory(tmp_path, name):
    """A B operand that is not the slot's tile as loaded (an expression of it, a name assigned
    more than once): the value is computed in registers where the kernel computes it (inside
    the slot's window, where the verifier reads it), stored into a buffer of its own in an
    NVMMA layout, fenced for the async proxy and read by a synchronous wgmma, so the buffer is
    never rewritten while a wgmma reads it."""
    body, expr = STAGED[name]
    path = tmp_path / "qk.py"
    path.write_text(B_KERNEL.replace("BODY", body))
    consume = _partition(gluon_source((str(path), "qk")).source, "consume")
    (buf, value), = _STAGE.findall(consume)
    assert expr in value, value
    fence = consume.index("fence_async_shared()", consume.index(f"{buf} = "))
    dot = re.search(rf"warpgroup_mma\(_a\d+, {buf}, [^\n]*is_async=False\)", consume)
    assert dot is not None and fence < dot.start(), consume
    assert "kv_k.index" not in dot.group(0)
    # the staged value is computed before the slot is released
    assert consume.index(f"{buf} = ") < consume.index("mbarrier.arrive(kv_empty")


def test_a_staged_b_operand_compiles_for_sm90a(tmp_path):
    """tl.dot(q, -k) then tl.dot(q, k, s) on the slot: the staged B is a shared-memory
    allocation of the register value, read by a synchronous warp_group_dot; the tile itself
    still goes to an async one."""
    from tle_compiler.lowering import compile_kernel, ptxas_stats

    path = tmp_path / "qk.py"
    path.write_text(B_KERNEL.replace("BODY", "        s = tl.dot(q, -k)\n        s = tl.dot(q, k, s)"))
    c = compile_kernel((str(path), "qk"), {"q_ptr": "*bf16", "k_ptr": "*bf16", "s_ptr": "*fp32",
                                           "N": "i32"})
    ttgir = c.asm["ttgir"]
    dots = [ln for ln in ttgir.splitlines() if "ttng.warp_group_dot " in ln]
    assert len(dots) == 2 and "isAsync = true" in dots[1] and "isAsync = true" not in dots[0]
    assert re.search(r"ttg\.local_alloc %\S+ : \(tensor<64x64xbf16", ttgir), ttgir
    ptx = c.asm["ptx"]
    # each thread's stores, its proxy fence, the partition's barrier, then the wgmma
    first = ptx.index("wgmma.mma_async")  # the staged dot's
    fence = ptx.rindex("fence.proxy.async.shared::cta", 0, first)
    assert "st.shared" in ptx[ptx.rindex("mbarrier.try_wait", 0, fence):fence]
    assert "bar.sync" in ptx[fence:first]
    assert ptxas_stats(c)["ok"]


@pytest.mark.parametrize("n", [0, 1, 2, 3])
def test_staged_b_operands_emulated_and_lowered(tmp_path, n):
    """The B-operand kernel (tests/dot_operand_kernels.py, run on the GPU by
    tests/gpu/test_dot_operand_expressions.py): its math on the CPU emulator equals torch, and
    each of its three B operands is staged for a synchronous wgmma."""
    torch = pytest.importorskip("torch")
    from tle_compiler.testing.emulator import load_kernel_module

    path = tmp_path / "dot_b_exprs.py"
    path.write_text(B_KERNEL_SRC)
    consume = _partition(gluon_source((str(path), "dot_b_exprs")).source, "consume")
    assert len(_STAGE.findall(consume)) == 3 and consume.count("is_async=False)") == 3, consume
    mod = load_kernel_module(path)
    a, b, s = inputs(n, "cpu")
    mod.dot_b_exprs[(1,)](a, b, s, n)
    if n == 0:
        assert torch.isnan(s).all()
    else:
        torch.testing.assert_close(s[:n], reference_b(a, b, n), rtol=1e-3, atol=1e-3)


def test_a_plain_b_tile_through_a_name_still_reads_shared_memory(tmp_path):
    """The bundled kernels' form: a name assigned once to the tile's load."""
    path = tmp_path / "qk.py"
    path.write_text(B_KERNEL.replace("BODY", "        s = tl.dot(q, k)"))
    consume = _partition(gluon_source((str(path), "qk")).source, "consume")
    assert re.search(r"warpgroup_mma\(_a\d+, kv_k\.index\(_kv_s\d+\), ", consume), consume


def test_a_transformed_arange_name_is_not_rematerialised_bare(tmp_path):
    """`neg = -tl.arange(0, 64)` and `cols = tl.arange(0, 64).to(tl.int64)`, each assigned once:
    a bare `tl.arange` name is re-emitted at each use, and the sign and the int64 conversion were
    dropped with it."""
    path = tmp_path / "qk.py"
    body = ("        s = tl.dot(q, k)\n"
            "        neg = -tl.arange(0, 64)\n        cols = tl.arange(0, 64).to(tl.int64)")
    src = B_KERNEL.replace("BODY", body).replace(
        "tl.store(s_ptr + t * 4096 + offs, s)",
        "tl.store(s_ptr + t * 4096 + (63 + neg)[:, None] * 64 + cols[None, :], s)")
    path.write_text(src)
    consume = _partition(gluon_source((str(path), "qk")).source, "consume")
    assert re.search(r"neg = \(-gl\.arange\(0, 64", consume), consume
    assert re.search(r"cols = gl\.arange\(0, 64, layout=L\d+\)\.to\(gl\.int64\)", consume), consume
    store = next(ln for ln in consume.splitlines() if "gl.store(" in ln or "_tle_store_acc(" in ln)
    assert "neg" in store and "cols" in store and "gl.arange" not in store, store
