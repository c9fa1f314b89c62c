"""A partition's warp count is a power of two: Triton's warp_specialize compiles nothing else, so
a kernel with a 3-warp worker is rejected at the partition (check bad-warps) instead of verifying
and then failing to compile."""

from __future__ import annotations

from pathlib import Path

import pytest

from tle_compiler.cli.dump import main as tle_dump
from tle_compiler.ir.parser import parse_module
from tle_compiler.passes import verify

RING = """kernel k
param N
pipe kv capacity=2
partition a default warps=4 {{
  for t in range(N) {{
    kv.acquire(t)
    kv.commit(t)
  }}
}}
partition b warps={warps} {{
  for t in range(N) {{
    kv.wait(t)
    kv.release(t)
  }}
}}
"""


@pytest.mark.parametrize("warps,ok", [(1, True), (2, True), (4, True), (8, True), (3, False),
                                      (6, False), (12, False)])
def test_worker_warps_must_be_a_power_of_two(warps, ok):
    (program,) = parse_module(RING.format(warps=warps), "k.pipe").kernels
    ctx = verify(program)
    assert ctx.ok == ok, [str(d) for d in ctx.diagnostics]
    if not ok:
        (err,) = ctx.errors
        assert (err.check, err.loc.line) == ("bad-warps", 10) and "power of two" in err.message


def test_a_kernel_with_a_three_warp_worker_is_rejected_at_the_partition(tmp_path: Path, capsys):
    path = tmp_path / "ring.py"
    path.write_text('''import triton.language as tl
import tle_compiler as tle


@tle.jit
def ring(x_ptr, N):
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.int32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, x_ptr, N))], [3], [232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    for t in range(N):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + t * 64 + tl.arange(0, 64)))
        w.commit(t)


def consume(kv, x_ptr, N):
    r = kv.reader()
    for t in range(N):
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t)
        tl.store(x_ptr + t * 64 + tl.arange(0, 64), v + 1)
''')
    assert tle_dump([str(path), "-q"]) == 1
    assert f"{path}:19: error: partition 'consume' has 3 warps" in capsys.readouterr().err
