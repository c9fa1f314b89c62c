"""compile_kernel(num_warps=W) (a launch's ``num_warps=``) other than the kernel's @tle.jit warps:
the default partition runs on W warps, and what the frontend checked at the @tle.jit warps is
checked again at W (lowering/compile.py, with_default_warps). A W that Triton cannot compile for
a warp-specialized kernel (not a power of two, or fewer than 4) is refused naming num_warps, and a
W whose default partition would get less than setmaxnreg's minimum of registers from the
workers' requests is refused as the register rule refuses it; before, the first failed inside
Triton's compile of the generated module and the second compiled a kernel whose default
partition was budgeted below the minimum."""

from __future__ import annotations

import textwrap

import pytest

from tle_compiler.diagnostics import TleError

pytest.importorskip("triton")

KERNEL = textwrap.dedent('''
    import triton.language as tl

    import tle_compiler as tle


    @tle.jit(num_warps=4)
    def copy(x_ptr, y_ptr, N):
        ch = tle.pipe(capacity=2, x=tle.gpu.alloc([2, 64], tl.float32))
        tle.gpu.warp_specialize([(fill, (ch, x_ptr, N)), (drain, (ch, y_ptr, N))],
                                [WORKER_WARPS], [232])


    def fill(ch, x_ptr, N):
        w = ch.writer()
        offs = tl.arange(0, 64)
        for i in range(N):
            slot = w.acquire(i)
            tl.store(tle.gpu.local_ptr(slot.x), tl.load(x_ptr + i * 64 + offs))
            w.commit(i)


    def drain(ch, y_ptr, N):
        rd = ch.reader()
        offs = tl.arange(0, 64)
        for i in range(N):
            res = rd.wait(i)
            tl.store(y_ptr + i * 64 + offs, tl.load(tle.gpu.local_ptr(res.slot.x)))
            rd.release(i)
''')

SIGNATURE = {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"}


def compiled(tmp_path, num_warps, worker_warps=4):
    from tle_compiler.lowering import compile_kernel

    path = tmp_path / "copy.py"
    path.write_text(KERNEL.replace("WORKER_WARPS", str(worker_warps)))
    return compile_kernel((str(path), "copy"), SIGNATURE, {}, num_warps=num_warps)


@pytest.mark.parametrize("num_warps", [1, 2, 6, 12])
def test_a_warp_count_triton_cannot_compile_is_refused_naming_num_warps(tmp_path, num_warps):
    with pytest.raises(TleError) as e:
        compiled(tmp_path, num_warps)
    assert e.value.check == "bad-warps"
    assert f"num_warps={num_warps}" in str(e.value) and "multiple of 4" in str(e.value)


def test_a_warp_count_leaving_the_default_partition_too_few_registers_is_refused(tmp_path):
    """An 8-warp worker at 232 registers leaves (65536 - 256 * 232) / 32 = 192 registers per
    warp's thread row: 48 per thread for 4 default warps, 24 for 8, 12 for 16 (below 24)."""
    with pytest.raises(TleError) as e:
        compiled(tmp_path, 16, worker_warps=8)
    assert e.value.check == "registers" and "at least 24" in str(e.value), str(e.value)


@pytest.mark.parametrize("num_warps", [4, 8])
def test_a_warp_count_that_compiles_is_lowered_for_it(tmp_path, num_warps):
    c = compiled(tmp_path, num_warps, worker_warps=8)
    assert c.metadata.num_warps == num_warps + 8  # Triton counts every partition's warps
