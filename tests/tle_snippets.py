"""TLE source fragments shared by the lowering tests that write small kernels to a file."""

HEADER = '''
import triton.language as tl
import tle_compiler as tle
'''

# A producer partition filling a 2-slot pipe `p` (field t: [2, 64, 64] bf16) with NT tiles of x.
TILE_FILL = '''
def fill(p, x_ptr, NT):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    w = p.writer()
    for i in range(NT):
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + i * 4096 + offs))
        w.commit(i)
'''
