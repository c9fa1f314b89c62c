"""The input of the FileCheck files on wgmma waits: a partition whose async wgmmas need a wait at
each kind of point (before a loop, after a read of a name, at the end of an `if` branch, at a
loop back-edge, at the end of the partition), and a release that needs none (the wgmma reading
its slot was waited for already)."""

import triton.language as tl

import tle_compiler as tle

BM = tl.constexpr(64)
BN = tl.constexpr(64)
D = tl.constexpr(64)


@tle.jit(num_warps=4)
def placement(q_ptr, k_ptr, o_ptr, NT):
    q = tle.pipe(capacity=1, one_shot=True, q=tle.gpu.alloc([1, BM, D], tl.bfloat16))
    kv = tle.pipe(capacity=2, k=tle.gpu.alloc([2, BN, D], tl.bfloat16))
    tle.gpu.warp_specialize([(loader, (q, kv, q_ptr, k_ptr, NT)), (attend, (q, kv, o_ptr, NT))],
                            [4], [232])


def loader(q, kv, q_ptr, k_ptr, NT):
    tile = tl.arange(0, BN)[:, None] * D + tl.arange(0, D)[None, :]
    slot = q.writer().acquire(0)
    tl.store(tle.gpu.local_ptr(slot.q), tl.load(q_ptr + tile))
    q.writer().commit(0)
    w = kv.writer()
    for t in range(NT):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.k), tl.load(k_ptr + t * BN * D + tile))
        w.commit(t)


def attend(q, kv, o_ptr, NT):
    qres = q.reader().wait(0)
    qq = tl.load(tle.gpu.local_ptr(qres.slot.q))
    r = kv.reader()
    acc = tl.dot(qq, tl.trans(qq))
    for t in range(NT):
        res = r.wait(t)
        s = tl.dot(qq, tl.trans(tl.load(tle.gpu.local_ptr(res.slot.k))))
        acc = acc + s
        if t > 0:
            acc = tl.dot(qq, tl.trans(qq), acc)
        r.release(t)
        acc = tl.dot(qq, tl.trans(qq), acc)
    tl.store(o_ptr + tl.arange(0, BM)[:, None] * D + tl.arange(0, D)[None, :], acc)
    last = tl.dot(qq, tl.trans(qq))
