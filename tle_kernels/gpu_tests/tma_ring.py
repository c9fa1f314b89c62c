"""TMA tile loads into pipe slots (``tle.gpu.tma_load``): a producer copies [BM, BN] bf16 tiles of
a strided 2-D tensor with the Tensor Memory Accelerator into a ring, a consumer copies each tile
to an output; the result is compared element-exact.

``x_desc`` is a tensor descriptor over x [rows, cols] (any row stride that is a multiple of 16
bytes: a per-head view of a paged KV cache is one); program p copies the box of rows
[(p·N_TILES + t)·BM, +BM) and columns [COL0, COL0 + BN) for t < N_TILES into the same rows of y
[p·N_TILES·BM, BN]. Rows or columns past x's end arrive as zeros (TMA zero-fills them).

* ``tma_ring``: the tile is the only field (capacity 2): each commit is one expect-tx arrive of
  BM·BN·2 bytes, nothing else.
* ``tma_mixed``: the slot also holds the tile's row numbers, stored from registers, and the stream
  ends with ``close`` (capacity 3): each commit arrives twice (the register stores' elected
  arrive and the TMA expect-tx), the close's expect is 0 bytes, and the consumer writes each tile
  to the rows its slot names. Its producer is a worker partition (the consumer is the default
  one), so the descriptor reaches the copies through the warp-specialize captures.
"""

import triton.language as tl

import tle_compiler as tle

BM = tl.constexpr(64)
BN = tl.constexpr(256)


@tle.jit(num_warps=4)
def tma_ring(x_desc, y_ptr, stride_y, N_TILES, COL0):
    ring = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, BM, BN], tl.bfloat16))
    tle.gpu.warp_specialize([(produce, (ring, x_desc, N_TILES, COL0)),
                             (consume, (ring, y_ptr, stride_y, N_TILES))],
                            [4], [232])


def produce(ring, x_desc, N_TILES, COL0):
    first = tl.program_id(0) * N_TILES
    w = ring.writer()
    for t in range(N_TILES):
        slot = w.acquire(t)
        tle.gpu.tma_load(slot.tile, x_desc, [(first + t) * BM, COL0])
        w.commit(t)


def consume(ring, y_ptr, stride_y, N_TILES):
    first = tl.program_id(0) * N_TILES
    r = ring.reader()
    for t in range(N_TILES):
        res = r.wait(t)
        tile = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t)
        rows = (first + t) * BM + tl.arange(0, BM)
        tl.store(y_ptr + rows[:, None] * stride_y + tl.arange(0, BN)[None, :], tile)


@tle.jit(num_warps=4)
def tma_mixed(x_desc, y_ptr, done_ptr, stride_y, N_TILES, COL0):
    tle.assume(N_TILES >= 0)  # close(N_TILES) needs a non-negative index
    ring = tle.pipe(capacity=3, tile=tle.gpu.alloc([3, BM, BN], tl.bfloat16),
                    rows=tle.gpu.alloc([3, BM], tl.int32))
    # the consumer is the default partition here: the copies are issued by a worker
    tle.gpu.warp_specialize([(consume_mixed, (ring, y_ptr, done_ptr, stride_y, N_TILES)),
                             (produce_mixed, (ring, x_desc, N_TILES, COL0))],
                            [4], [56])


def produce_mixed(ring, x_desc, N_TILES, COL0):
    first = tl.program_id(0) * N_TILES
    w = ring.writer()
    for t in range(N_TILES):
        slot = w.acquire(t)
        tle.gpu.tma_load(slot.tile, x_desc, [(first + t) * BM, COL0])
        tl.store(tle.gpu.local_ptr(slot.rows), (first + t) * BM + tl.arange(0, BM))
        w.commit(t)
    w.close(N_TILES)


def consume_mixed(ring, y_ptr, done_ptr, stride_y, N_TILES):
    r = ring.reader()
    for t in range(N_TILES):
        res = r.wait(t)
        tile = tl.load(tle.gpu.local_ptr(res.slot.tile))
        rows = tl.load(tle.gpu.local_ptr(res.slot.rows))
        r.release(t)
        tl.store(y_ptr + rows[:, None] * stride_y + tl.arange(0, BN)[None, :], tile)
    last = r.wait(N_TILES)  # the closing slot: no tile, only the flag
    flags = tl.where(last.is_closed, tl.full([BM], 1, tl.int32), tl.full([BM], 0, tl.int32))
    r.release(N_TILES)
    tl.store(done_ptr + tl.program_id(0) * BM + tl.arange(0, BM), flags)


# tma_pages: pages of a paged cache through a rank-4 descriptor. kv_desc is over kv [pages, PAGE,
# heads, cols] with box [1, PAGE, 1, BN], which fills the [PAGE, BN] field (the box's unit
# dimensions dropped). Program p copies its N_PAGES pages page = p·N_PAGES + t of head HEAD,
# columns [COL0, COL0 + BN), with the token coordinate shifted to valid[page] - PAGE: the first
# PAGE - valid rows of the box lie before the page (negative coordinates, zero-filled by TMA) and
# the page's first valid rows land at the end, so no row past a page's valid count reaches the
# slot, whatever it holds. The consumer writes the slot to y rows [page·PAGE, +PAGE): row r is
# token valid - PAGE + r of the page, or zero.
PAGE = tl.constexpr(64)


@tle.jit(num_warps=4)
def tma_pages(kv_desc, valid_ptr, y_ptr, N_PAGES, HEAD, COL0):
    ring = tle.pipe(capacity=2, page=tle.gpu.alloc([2, PAGE, BN], tl.bfloat16))
    tle.gpu.warp_specialize([(produce_pages, (ring, kv_desc, valid_ptr, N_PAGES, HEAD, COL0)),
                             (consume_pages, (ring, y_ptr, N_PAGES))],
                            [4], [232])


def produce_pages(ring, kv_desc, valid_ptr, N_PAGES, HEAD, COL0):
    first = tl.program_id(0) * N_PAGES
    w = ring.writer()
    for t in range(N_PAGES):
        valid = tl.load(valid_ptr + first + t)
        slot = w.acquire(t)
        # token coordinate valid - PAGE: rows before the page arrive as zeros
        tle.gpu.tma_load(slot.page, kv_desc, [first + t, valid - PAGE, HEAD, COL0])
        w.commit(t)


def consume_pages(ring, y_ptr, N_PAGES):
    first = tl.program_id(0) * N_PAGES
    r = ring.reader()
    for t in range(N_PAGES):
        res = r.wait(t)
        page = tl.load(tle.gpu.local_ptr(res.slot.page))
        r.release(t)
        rows = (first + t) * PAGE + tl.arange(0, PAGE)
        tl.store(y_ptr + rows[:, None] * BN + tl.arange(0, BN)[None, :], page)


DEFAULT_CONFIG = {
    # x_desc: a tensor descriptor over x [rows, cols] bf16 with block [BM, BN] (the host passes
    # triton.tools.tensor_descriptor.TensorDescriptor(x, x.shape, x.stride(), [BM, BN])); y
    # [P * N_TILES * BM, stride_y] bf16 (stride_y >= BN); done [P, BM] int32; grid (P,)
    "tma_ring": {
        "signature": {"x_desc": "tensordesc<bf16[64, 256]>", "y_ptr": "*bf16", "stride_y": "i32",
                      "N_TILES": "i32", "COL0": "i32"},
        "constexprs": {},
        "num_warps": 4,
        "grid": ("P",),
    },
    "tma_mixed": {
        "signature": {"x_desc": "tensordesc<bf16[64, 256]>", "y_ptr": "*bf16", "done_ptr": "*i32",
                      "stride_y": "i32", "N_TILES": "i32", "COL0": "i32"},
        "constexprs": {},
        "num_warps": 4,
        "grid": ("P",),
    },
    # kv_desc: a tensor descriptor over kv [pages, PAGE, heads, cols] bf16 with block [1, PAGE, 1,
    # BN] (strides in elements, the last 1, the others multiples of 16 bytes); valid [P *
    # N_PAGES] int32 in [0, PAGE]; y [P * N_PAGES * PAGE, BN] bf16; grid (P,)
    "tma_pages": {
        "signature": {"kv_desc": "tensordesc<bf16[1, 64, 1, 256]>", "valid_ptr": "*i32",
                      "y_ptr": "*bf16", "N_PAGES": "i32", "HEAD": "i32", "COL0": "i32"},
        "constexprs": {},
        "num_warps": 4,
        "grid": ("P",),
    },
}
