"""A slot filled inside a helper function lowers as the same fill written inline.

`def fill(slot, ptrs): tl.store(tle.gpu.local_ptr(slot.tile), tl.load(ptrs))`, called from the
writer's window, is a cp.async gather like the store written in the partition: the helper's
statements are built as their own statements (sequenced only when they call a helper
themselves), so the store's value stays the `tl.load` expression the cp.async form needs rather
than a temporary holding registers. Before, the calling statement's sequencing reached into the
helper's body and the fill became a register copy (correct, but a load and a store per element
through the partition's registers)."""

from __future__ import annotations

from tle_compiler.lowering.compile import gluon_source

KERNEL = '''
import triton.language as tl
import tle_compiler as tle


@tle.jit
def ring(x_ptr, y_ptr, N):
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64, 64], tl.bfloat16))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, y_ptr, N))], [4], [232])


def fill(slot, ptrs):
    tl.store(tle.gpu.local_ptr(slot.tile), tl.load(ptrs))


def produce(kv, x_ptr, N):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    w = kv.writer()
    for t in range(N):
        slot = w.acquire(t)
        FILL
        w.commit(t)


def consume(kv, y_ptr, N):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    r = kv.reader()
    for t in range(N):
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t)
        tl.store(y_ptr + t * 4096 + offs, v)
'''

INLINE = "tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + t * 4096 + offs))"
HELPER = "fill(slot, x_ptr + t * 4096 + offs)"


def _producer(tmp_path, fill: str) -> str:
    path = tmp_path / "ring.py"
    path.write_text(KERNEL.replace("FILL", fill))
    src = gluon_source((str(path), "ring")).source
    start = src.index("def produce(")
    return src[start:src.index("@gluon.jit", start)]


def test_a_fill_in_a_helper_is_a_cp_async_gather_as_inline(tmp_path):
    for fill in (INLINE, HELPER):
        prod = _producer(tmp_path, fill)
        assert "async_copy.async_copy_global_to_shared(kv_tile" in prod, (fill, prod)
        assert "async_copy.mbarrier_arrive(kv_full0" in prod, (fill, prod)
        assert "gl.load(" not in prod and ".store(" not in prod, (fill, prod)

