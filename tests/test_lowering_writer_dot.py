"""A writer's tl.dot on a tile of its own slot.

The protocol lets the writer read its slot inside its window, but wgmma reads a B operand from
shared memory through the async proxy, which needs an NVMMA shared layout for the field and a
proxy fence after the writer's own stores. The lowering gave the field neither, so tle-dump
--gluon printed Gluon that Triton could not compile and --ttgir aborted inside LLVM (exit 134).
Now a B operand from the writer's slot is refused at the dot's line before Triton is called (exit
1 through tle-dump), and an A operand from it is read from registers, which is correct as it is.
"""

from __future__ import annotations

import re

import pytest

from tle_compiler.cli.dump import main
from tle_compiler.diagnostics import TleError
from tle_compiler.lowering.compile import gluon_source

B_FROM_WRITER = '''
import triton.language as tl
import tle_compiler as tle


@tle.jit
def ring(q_ptr, x_ptr, s_ptr, y_ptr, N):
    kv = tle.pipe(capacity=2, k=tle.gpu.alloc([2, 64, 64], tl.bfloat16))
    tle.gpu.warp_specialize([(produce, (kv, q_ptr, x_ptr, s_ptr, N)), (consume, (kv, y_ptr, N))],
                            [4], [232])


def produce(kv, q_ptr, x_ptr, s_ptr, N):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    q = tl.load(q_ptr + offs)
    w = kv.writer()
    for t in range(N):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.k), tl.load(x_ptr + t * 4096 + offs) * 2)
        k = tl.load(tle.gpu.local_ptr(slot.k))
        s = DOT
        tl.store(s_ptr + t * 4096 + offs, s)
        w.commit(t)


def consume(kv, y_ptr, N):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    r = kv.reader()
    for t in range(N):
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.k))
        r.release(t)
        tl.store(y_ptr + t * 4096 + offs, v)


DEFAULT_CONFIG = {"signature": {"q_ptr": "*bf16", "x_ptr": "*bf16", "s_ptr": "*fp32",
                                "y_ptr": "*bf16", "N": "i32"}, "constexprs": {}, "num_warps": 4,
                  "grid": (1,)}
'''

# The writer of kv also reads pipe qp (filled by a third partition): B from a slot it reads is
# the supported form; A is the tile of its own slot.
A_FROM_WRITER = '''
import triton.language as tl
import tle_compiler as tle


@tle.jit
def ring(q_ptr, x_ptr, s_ptr, y_ptr, N):
    qp = tle.pipe(capacity=1, q=tle.gpu.alloc([1, 64, 64], tl.bfloat16))
    kv = tle.pipe(capacity=2, k=tle.gpu.alloc([2, 64, 64], tl.bfloat16))
    tle.gpu.warp_specialize([(produce, (kv, qp, x_ptr, s_ptr, N)), (consume, (kv, y_ptr, N)),
                             (load_q, (qp, q_ptr))], [4, 4], [232, 232])


def load_q(qp, q_ptr):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    w = qp.writer()
    slot = w.acquire(0)
    tl.store(tle.gpu.local_ptr(slot.q), tl.load(q_ptr + offs))
    w.commit(0)


def produce(kv, qp, x_ptr, s_ptr, N):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    rq = qp.reader()
    qres = rq.wait(0)
    q = tl.load(tle.gpu.local_ptr(qres.slot.q))
    w = kv.writer()
    for t in range(N):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.k), tl.load(x_ptr + t * 4096 + offs) * 2)
        k = tl.load(tle.gpu.local_ptr(slot.k))
        s = tl.dot(k, q)
        tl.store(s_ptr + t * 4096 + offs, s)
        w.commit(t)
    rq.release(0)


def consume(kv, y_ptr, N):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    r = kv.reader()
    for t in range(N):
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.k))
        r.release(t)
        tl.store(y_ptr + t * 4096 + offs, v)


DEFAULT_CONFIG = {"signature": {"q_ptr": "*bf16", "x_ptr": "*bf16", "s_ptr": "*fp32",
                                "y_ptr": "*bf16", "N": "i32"}, "constexprs": {}, "num_warps": 4,
                  "grid": (1,)}
'''

MESSAGE = "tl.dot with a B operand from a slot this partition acquired as the writer"


@pytest.mark.parametrize("dot", ["tl.dot(q, k)", "tl.dot(q, tl.load(tle.gpu.local_ptr(slot.k)))",
                                 "tl.dot(q, tl.trans(k))"], ids=["name", "inline", "trans"])
def test_a_b_operand_from_the_writers_slot_is_refused_at_its_line(tmp_path, dot):
    src = B_FROM_WRITER.replace("DOT", dot)
    path = tmp_path / "writer_dot.py"
    path.write_text(src)
    with pytest.raises(TleError, match=MESSAGE) as e:
        gluon_source((str(path), "ring"))
    assert e.value.loc.line == next(i for i, ln in enumerate(src.splitlines(), 1)
                                    if "tl.dot(" in ln)


@pytest.mark.parametrize("stage", ["--gluon", "--ttgir"])
def test_tle_dump_exits_1_with_the_message(tmp_path, capsys, stage):
    path = tmp_path / "writer_dot.py"
    src = B_FROM_WRITER.replace("DOT", "tl.dot(q, k)")
    path.write_text(src)
    code = main([stage, str(path)])
    err = capsys.readouterr().err
    assert code == 1, err
    line = next(i for i, ln in enumerate(src.splitlines(), 1) if "tl.dot(" in ln)
    assert f"writer_dot.py:{line}: error: lowering: {MESSAGE}" in err


def test_an_a_operand_from_the_writers_slot_is_read_from_registers(tmp_path):
    """A is the writer's tile loaded into registers and converted to the wgmma operand layout;
    B, from the slot of the pipe the partition reads, stays in shared memory. It compiles."""
    from tle_compiler.lowering import compile_kernel

    path = tmp_path / "writer_a.py"
    path.write_text(A_FROM_WRITER)
    src = gluon_source((str(path), "ring")).source
    prod = src[src.index("def produce("):src.index("@gluon.jit", src.index("def produce("))]
    # (`k` is read only by the dot: a deferred tile, loaded where the dot reads it)
    load = re.search(r"(_v\d+) = kv_k\.index\(_kv_s\d+\)\.load\(L\d+\)", prod)
    assert load and re.search(rf"_a\d+ = gl\.convert_layout\({load.group(1)}, L\d+\)", prod), prod
    assert re.search(r"warpgroup_mma\(_a\d+, qp_q\.index\(", prod), prod
    sig = {"q_ptr": "*bf16", "x_ptr": "*bf16", "s_ptr": "*fp32", "y_ptr": "*bf16", "N": "i32"}
    ptx = compile_kernel((str(path), "ring"), sig).asm["ptx"]
    assert "wgmma.mma_async" in ptx
