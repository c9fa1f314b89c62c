"""The accumulator-store lowering (tle_compiler/lowering/acc_store.py): its PTX, interpreted for the
four lanes of a quad, leaves every 16-bit element at the address the layout gives it; the source
check accepts row-broadcast + contiguous-column pointers only; the bundled SparseMLA kernels use it.
(On the GPU: tests/gpu/test_pipe_kernels.py::test_accumulator_store.)"""

from __future__ import annotations

import ast
import re

import pytest

from tle_compiler.lowering import acc_store


def _run_quad(words_of_lane, addrs_of_lane):
    """Interpret `store_asm()` for lanes 0..3 (lockstep; shfl.bfly within the quad). Returns
    {byte address: 16-bit value} of every store."""
    asm = acc_store.store_asm()
    instrs = [s.strip() for s in re.split(r";\s*", asm.strip("{} ")) if s.strip()]
    instrs = [s for s in instrs if not s.startswith(".reg")]
    regs = [dict() for _ in range(4)]
    for q in range(4):
        for i, w in enumerate(words_of_lane[q]):
            regs[q][f"${8 + i}"] = w
        for i, a in enumerate(addrs_of_lane[q]):
            regs[q][f"${16 + i}"] = a
    mem = {}

    def val(q, x):
        x = x.strip()
        if x in regs[q]:
            return regs[q][x]
        if x == "%laneid":
            return q
        return int(x, 0)

    for ins in instrs:
        pred = None
        m = re.match(r"@(!?)(\w+)\s+(.*)", ins)
        if m:
            pred, ins = (m.group(1) == "", m.group(2)), m.group(3)
        op, _, rest = ins.partition(" ")
        if op.startswith("shfl.sync.bfly"):
            d, a, lanemask, _c, _m = [x.strip() for x in rest.split(",")]
            src = [val(q, a) for q in range(4)]
            for q in range(4):
                regs[q][d] = src[q ^ int(lanemask)]
            continue
        for q in range(4):
            if pred is not None and bool(regs[q][pred[1]]) != pred[0]:
                continue
            r = regs[q]
            if op.startswith("st.global"):
                am = re.match(r"\[(\w+)(?:\+(\d+))?\],\s*(.*)", rest)
                base = r[am.group(1)] + int(am.group(2) or 0)
                if op == "st.global.v4.b32":
                    ws = [r[x.strip()] for x in am.group(3).strip("{}").split(",")]
                    assert base % 16 == 0, "a 16-byte store at a misaligned address"
                    for k, w in enumerate(ws):
                        mem[base + 4 * k] = w & 0xFFFF
                        mem[base + 4 * k + 2] = w >> 16
                else:
                    assert op == "st.global.b16"
                    mem[base] = r[am.group(3).strip()]
                continue
            if op == "mov.b32" and rest.startswith("{"):
                dst, src = rest.split("},")
                h0, h1 = [x.strip() for x in dst.strip("{").split(",")]
                w = val(q, src)
                r[h0], r[h1] = w & 0xFFFF, w >> 16
                continue
            args = [x.strip() for x in rest.split(",")]
            d = args[0]
            if op in ("mov.u32", "mov.b32"):
                r[d] = val(q, args[1])
            elif op == "and.b32" or op == "and.b64":
                r[d] = val(q, args[1]) & val(q, args[2])
            elif op == "setp.ne.u32":
                r[d] = val(q, args[1]) != val(q, args[2])
            elif op == "setp.eq.u64":
                r[d] = val(q, args[1]) == val(q, args[2])
            elif op == "mul.wide.u32":
                r[d] = val(q, args[1]) * val(q, args[2])
            elif op == "add.u64":
                r[d] = val(q, args[1]) + val(q, args[2])
            elif op == "selp.b32":
                r[d] = val(q, args[1]) if r[args[3]] else val(q, args[2])
            else:
                raise AssertionError(f"the interpreter does not know `{ins}`")
    return mem


@pytest.mark.parametrize("base", [4096, 4098])  # 16-byte aligned rows; 2 bytes off (fallback)
def test_quad_transpose_puts_every_element_at_its_address(base):
    """One pack of the accumulator layout per lane (row r and r + 8, columns 8j + 2q + {0, 1} of a
    32-column block), row-major 16-bit elements with leading dim 40: after the asm every one of
    the 64 elements is in memory at row * 40 + column."""
    ld = 40

    def addr(row, col):
        return base + 2 * (row * ld + col)

    def elem(row, col):
        return (row * 64 + col) & 0xFFFF

    words, addrs = [], []
    for q in range(4):
        w, a = [], []
        for i in range(16):  # element bits: col+1, row+8, col+8, col+16
            t, h, j = i & 1, (i >> 1) & 1, i >> 2
            row, col = 8 * h, 8 * j + 2 * q + t
            a.append(addr(row, col))
        for i in range(8):   # word i = elements 2i, 2i+1: h = i & 1, j = i >> 1
            h, j = i & 1, i >> 1
            lo, hi = elem(8 * h, 8 * j + 2 * q), elem(8 * h, 8 * j + 2 * q + 1)
            w.append(lo | hi << 16)
        words.append(w)
        addrs.append(a)
    mem = _run_quad(words, addrs)
    want = {addr(r, c): elem(r, c) for r in (0, 8) for c in range(32)}
    assert mem == want


_CHECK_KERNEL = '''
import triton.language as tl
import tle_compiler as tle
D_HALF = 256


def f(p, out_row, stride, x, cols, offs_d, half, offs_h):
    r = p.reader()
    r.wait(0)
    tl.store({expr}, x)
    r.release(0)


def g(p):
    w = p.writer()
    w.acquire(0)
    w.commit(0)


@tle.jit
def k(out_row, stride, x, cols, offs_d, half, offs_h):
    p = tle.pipe(capacity=1, t=tle.gpu.alloc([1, 64], tl.float32))
    tle.gpu.warp_specialize([(g, (p,)), (f, (p, out_row, stride, x, cols, offs_d, half, offs_h))],
                            [4], [200])
'''


def _check(expr: str, n: int = 256) -> bool:
    """column_contiguous on the pointer of the kernel IR of ``tl.store(<expr>, x)`` (as the
    frontend builds it), with the names bound the way the translator binds them."""
    from types import SimpleNamespace

    from tle_compiler.frontend.build import build_file
    from tle_compiler.ir import kernel as K
    from tle_compiler.lowering.translate import V

    kir = build_file("k.py", "k", text=_CHECK_KERNEL.format(expr=expr))[0]
    store = next(st.value for part in kir.partitions for st in part.body
                 if isinstance(st, K.Eval) and isinstance(st.value, K.Op)
                 and st.value.name == "tl.store")
    env = {"out_row": V("scalar", "out_row"), "stride": V("scalar", "stride"),
           "offs_d": V("remat", "offs_d", value={"arange": ("0", "256"), "bounds": (0, 256)}),
           "half": V("remat", "half", value={"arange": ("0", "128"), "bounds": (0, 128)}),
           "offs_h": V("remat", "offs_h", value={"arange": ("0", "64"), "bounds": (0, 64)}),
           "cols": V("tensor", "cols", 1, (64, 256), "int32")}

    class Tr:
        ctx = SimpleNamespace(consts={})

        def __init__(self):
            self.env = env

        def ex(self, node):
            assert isinstance(node, (K.Const, K.Global)), node
            return V("const", repr(node.value), value=node.value)

    return acc_store.column_contiguous(Tr(), store.args[0], n)


@pytest.mark.parametrize("expr,ok", [
    ("out_row + offs_h[:, None] * stride + offs_d[None, :]", True),
    ("out_row + offs_h[:, None] * stride + D_HALF + offs_d[None, :]", True),
    ("out_row + offs_h[:, None] * stride + tl.arange(0, 256)[None, :]", True),
    ("out_row + offs_h[:, None] * stride + offs_d[None, :] * 2", False),    # strided columns
    ("out_row + offs_h[:, None] * stride + half[None, :]", False),           # 128 of 256 columns
    ("out_row + offs_h[:, None] * stride + tl.arange(1, 257)[None, :]", False),
    ("out_row + offs_d[:, None] * stride + offs_h[None, :]", False),         # wrong extent
    ("out_row + cols + offs_d[None, :]", False),                             # a 2-D tensor term
    ("out_row + offs_h[None, :] * stride + offs_d[None, :]", False),        # two column terms
])
def test_column_contiguity_check(expr, ok):
    assert _check(expr) is ok


def test_bundled_kernels_use_accumulator_stores():
    from tle_compiler.lowering import gluon_source

    for name in ("sparse_mla_seesaw", "sparse_mla_pipe"):
        src = gluon_source((f"tle_kernels/{name}.py", name), {"TOPK": 2048, "BLOCK_H": 64}).source
        assert src.count("_tle_store_acc(") == 3, name  # the helper and both consumers' tiles


def test_layout_condition():
    assert acc_store.layout_qualifies(("mma", (4, 1), (16, 256, 16)), (64, 256))
    assert acc_store.layout_qualifies(("mma", (4, 1), (16, 64, 16)), (128, 128))
    assert not acc_store.layout_qualifies(("mma", (4, 1), (16, 16, 16)), (64, 16))  # N < 32
    assert not acc_store.layout_qualifies(("mma", (4, 1), (16, 64, 16)), (32, 64))  # rows < 64
    assert not acc_store.layout_qualifies(("blocked", (1, 8), (4, 8), (4, 1), (1, 0)), (64, 256))


def test_cache_hints_pass_through(tmp_path):
    """`eviction_policy` / `cache_modifier` of a tl.load reach Gluon: a register load keeps them,
    and a gather stored whole into a slot stays a cp.async (instead of turning into a register
    load because of an unknown keyword)."""
    from tle_compiler.lowering import gluon_source

    src = '''
import triton.language as tl
import tle_compiler as tle


@tle.jit(num_warps=4)
def hinted(x_ptr, y_ptr, NT):
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, 64, 64], tl.bfloat16))
    tle.gpu.warp_specialize([(fill, (p, x_ptr, NT)), (drain, (p, y_ptr, NT))], [4], [128])


def fill(p, x_ptr, NT):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    w = p.writer()
    for i in range(NT):
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + i * 4096 + offs, eviction_policy="evict_last"))
        w.commit(i)


def drain(p, y_ptr, NT):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    r = p.reader()
    for i in range(NT):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.t))
        old = tl.load(y_ptr + offs, cache_modifier=".cg")
        tl.store(y_ptr + offs, v + old)
        r.release(i)
'''
    f = tmp_path / "hinted.py"
    f.write_text(src)
    gen = gluon_source((str(f), "hinted"), {}).source
    assert re.search(r"async_copy_global_to_shared\([^\n]*eviction_policy='evict_last'", gen)
    assert re.search(r"gl\.load\([^\n]*cache_modifier='\.cg'", gen)
