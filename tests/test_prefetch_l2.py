"""``tle.gpu.prefetch_l2(ptr, nbytes, mask=)``: a bulk L2 prefetch per pointer element
(``cp.async.bulk.prefetch.L2.global``), no protocol meaning.

The kernel is a two-partition ring whose producer prefetches tile k + 2 before it loads tile k.
Checked: the verdict and the barrier table are those of the same kernel without the prefetch (it
is not a pipe event nor a slot access); the Gluon and the PTX carry one predicated prefetch of
``nbytes`` per element, with the mask as its predicate, and an unmasked form; the arguments the
lowering refuses, each with its message at the call's line; the CPU emulator runs the kernel and
its results are the copy; outside a kernel the function refuses to run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("triton.experimental.gluon")

from tle_compiler.diagnostics import TleError  # noqa: E402
from tle_compiler.lowering import gluon_source  # noqa: E402

BM = BN = 64
PREFETCH = ("        tle.gpu.prefetch_l2(x_ptr + (nxt * BM + rows) * BN, NBYTES, "
            "mask=(nxt < N) & (rows >= 0))\n")
SRC = '''
import triton.language as tl
import tle_compiler as tle

BM = tl.constexpr(64)
BN = tl.constexpr(64)


@tle.jit
def pf_ring(x_ptr, y_ptr, N):
    ab = tle.pipe(capacity=2, x=tle.gpu.alloc([2, BM, BN], tl.float32))
    tle.gpu.warp_specialize([(prod, (ab, x_ptr, N)), (cons, (ab, y_ptr, N))], [4], [200])


def prod(ab, x_ptr, N):
    w = ab.writer()
    rows = tl.arange(0, BM)
    for k in range(N):
        nxt = k + 2
PREFETCH        slot = w.acquire(k)
        tl.store(tle.gpu.local_ptr(slot.x),
                 tl.load(x_ptr + k * BM * BN + rows[:, None] * BN + tl.arange(0, BN)[None, :]))
        w.commit(k)


def cons(ab, y_ptr, N):
    r = ab.reader()
    for k in range(N):
        res = r.wait(k)
        tl.store(y_ptr + k * BM * BN + tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :],
                 tl.load(tle.gpu.local_ptr(res.slot.x)))
        r.release(k)


DEFAULT_CONFIG = {
    "signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"},
    "constexprs": {},
    "num_warps": 4,
    "grid": (1,),
}
'''


def _kernel(tmp_path: Path, prefetch: str = PREFETCH, nbytes: str = "256", name="pf") -> Path:
    p = tmp_path / f"{name}.py"
    p.write_text(SRC.replace("PREFETCH", prefetch.replace("NBYTES", nbytes)))
    return p


def _dump(path: Path, *flags: str):
    import subprocess
    import sys
    return subprocess.run([sys.executable, "-m", "tle_compiler.cli.dump", *flags, str(path)],
                          capture_output=True, text=True)


def test_the_prefetch_is_not_part_of_the_protocol(tmp_path):
    with_pf = _dump(_kernel(tmp_path))
    without = _dump(_kernel(tmp_path, prefetch="", name="plain"))
    assert with_pf.returncode == without.returncode == 0, with_pf.stderr
    strip = lambda out: re.sub(r"\S*\.py:\d+", "", out)  # noqa: E731
    assert strip(with_pf.stdout) == strip(without.stdout)
    assert "verified for every value of N" in with_pf.stdout


def test_the_gluon_and_ptx_carry_one_predicated_prefetch(tmp_path):
    from tle_compiler.frontend import read_kernels
    from tle_compiler.lowering import compile_kernel

    path = _kernel(tmp_path, nbytes="512")
    src = gluon_source((str(path), "pf_ring")).source
    (line,) = [ln for ln in src.splitlines() if "prefetch" in ln]
    assert "cp.async.bulk.prefetch.L2.global [$1], 512;" in line and "@p" in line
    assert "is_pure=False" in line and ".to(gl.int32)" in line
    info = next(iter(read_kernels(str(path), name="pf_ring")))
    c = compile_kernel(info, {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"}, {}, num_warps=4)
    ptx = c.asm["ptx"]
    assert len(re.findall(r"@p cp\.async\.bulk\.prefetch\.L2\.global \[%rd\d+\], 512;", ptx)) == 1
    assert c.asm["cubin"]


def test_unmasked_form(tmp_path):
    pf = "        tle.gpu.prefetch_l2(x_ptr + (nxt * BM + rows) * BN, 128)\n"
    src = gluon_source((str(_kernel(tmp_path, prefetch=pf)), "pf_ring")).source
    (line,) = [ln for ln in src.splitlines() if "prefetch" in ln]
    assert "[$1], 128; mov.b32 $0, 0;" in line and "@p" not in line


@pytest.mark.parametrize("call, message", [
    ("tle.gpu.prefetch_l2(x_ptr + (nxt * BM + rows) * BN, 100)", "multiple of 16"),
    ("tle.gpu.prefetch_l2(x_ptr + (nxt * BM + rows) * BN, 0)", "multiple of 16"),
    ("tle.gpu.prefetch_l2(x_ptr + (nxt * BM + rows) * BN, N * 16)", "compile-time"),
    ("tle.gpu.prefetch_l2(x_ptr + (nxt * BM + rows) * BN, 64, mask=nxt < N)", "mask must be"),
    ("tle.gpu.prefetch_l2(x_ptr + (nxt * BM + rows) * BN)", "takes a pointer tensor"),
    ("tle.gpu.prefetch_l2(x_ptr + (nxt * BM + rows) * BN, 64, other=0)", "takes a pointer tensor"),
    ("tle.gpu.prefetch_l2(x_ptr, 64)", "tensor of global-memory pointers"),
])
def test_refused_arguments(tmp_path, call, message):
    path = _kernel(tmp_path, prefetch=f"        {call}\n")
    with pytest.raises(TleError, match=message) as e:
        gluon_source((str(path), "pf_ring"))
    assert ":20:" in str(e.value)  # the call's line


def test_emulated_kernel_copies(tmp_path):
    torch = pytest.importorskip("torch")
    from tle_compiler.testing.emulator import load_kernel_module

    mod = load_kernel_module(_kernel(tmp_path))
    n = 5
    x = torch.randn(n * BM, BN)
    y = torch.full_like(x, float("nan"))
    mod.pf_ring[(1,)](x, y, n)
    assert torch.equal(x, y)


def test_outside_a_kernel_it_refuses_to_run():
    import tle_compiler as tle

    with pytest.raises(TleError, match="only meaningful inside a @tle.jit kernel"):
        tle.gpu.prefetch_l2(None, 16)
