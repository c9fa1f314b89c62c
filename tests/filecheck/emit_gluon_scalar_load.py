# RUN: tle-dump -p emit-gluon %s
# A scalar load (tl.load of one pointer) is a gl.load of that pointer: no arange, no layout, no
# reduction to a scalar. In the kernel prologue it reads the trip count NT from memory (the
# verifier treats NT as an opaque param, proved for every value); inside a partition it reads
# one block-table entry per tile, with a scalar mask, `other` and a cache hint passed through.
import triton.language as tl

import tle_compiler as tle

BN = tl.constexpr(64)


def fill(p, x_ptr, bt_ptr, NT):
    offs = tl.arange(0, BN)[:, None] * 64 + tl.arange(0, 64)[None, :]
    w = p.writer()
    for i in range(NT):
        page = tl.load(bt_ptr + i, mask=i < NT, other=0, eviction_policy="evict_last").to(tl.int64)
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + page * (BN * 64) + offs))
        w.commit(i)


def drain(p, NT):
    r = p.reader()
    for i in range(NT):
        r.wait(i)
        r.release(i)


@tle.jit
def paged_copy(x_ptr, bt_ptr, n_ptr):
    NT = tl.cdiv(tl.load(n_ptr + tl.program_id(0)), BN)
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, BN, 64], tl.bfloat16))
    tle.gpu.warp_specialize([(fill, (p, x_ptr, bt_ptr, NT)), (drain, (p, NT))], [4], [232])


# CHECK: def fill(x_ptr, bt_ptr, NT, p_t, p_full0, p_empty0):
# CHECK: for i in range(NT):
# CHECK-NEXT: page = gl.load((bt_ptr + i), mask=(i < NT), other=0, eviction_policy='evict_last').to(gl.int64)
# CHECK-NEXT: _p_s1 = (i) % 2
# CHECK: def paged_copy(x_ptr, bt_ptr, n_ptr):
# CHECK-NEXT: NT = gl.cdiv(gl.load((n_ptr + gl.program_id(0))), BN)
# CHECK: gl.warp_specialize([
# CHECK-NEXT: (fill, (x_ptr, bt_ptr, NT, p_t, p_full0, p_empty0)),
