"""``tle.gpu.launch_dependents()``: ``griddepcontrol.launch_dependents``, which lets the kernel
launched after this one as its programmatic dependent be scheduled once every program has issued
it (instead of once all have exited); no protocol meaning.

The kernel is a two-partition ring that signals in its body and in its consumer. Checked: the
verdict and the barrier table are those of the same kernel without the calls (they are not pipe
events); the Gluon carries one side-effecting inline PTX statement per call, the kernel body's
before the partitions start, and the PTX keeps both; arguments are refused at the call's line;
the CPU emulator runs the kernel (a no-op there); outside a kernel the function refuses to run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("triton.experimental.gluon")

from tle_compiler.diagnostics import TleError  # noqa: E402
from tle_compiler.lowering import gluon_source  # noqa: E402

BM = BN = 64
BODY = "    tle.gpu.launch_dependents()\n"
SRC = '''
import triton.language as tl
import tle_compiler as tle

BM = tl.constexpr(64)
BN = tl.constexpr(64)


@tle.jit
def ring(x_ptr, y_ptr, N):
BODY    ab = tle.pipe(capacity=2, x=tle.gpu.alloc([2, BM, BN], tl.float32))
    tle.gpu.warp_specialize([(prod, (ab, x_ptr, N)), (cons, (ab, y_ptr, N))], [4], [200])


def prod(ab, x_ptr, N):
    w = ab.writer()
    for k in range(N):
        slot = w.acquire(k)
        tl.store(tle.gpu.local_ptr(slot.x),
                 tl.load(x_ptr + k * BM * BN + tl.arange(0, BM)[:, None] * BN
                         + tl.arange(0, BN)[None, :]))
        w.commit(k)


def cons(ab, y_ptr, N):
CONS    r = ab.reader()
    for k in range(N):
        res = r.wait(k)
        tl.store(y_ptr + k * BM * BN + tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :],
                 tl.load(tle.gpu.local_ptr(res.slot.x)))
        r.release(k)
'''


def _kernel(tmp_path: Path, body: str = BODY, cons: str = BODY, name="ld") -> Path:
    p = tmp_path / f"{name}.py"
    p.write_text(SRC.replace("BODY", body).replace("CONS", cons))
    return p


def _dump(path: Path):
    import subprocess
    import sys
    return subprocess.run([sys.executable, "-m", "tle_compiler.cli.dump", str(path)],
                          capture_output=True, text=True)


def test_it_is_not_part_of_the_protocol(tmp_path):
    with_ld = _dump(_kernel(tmp_path))
    without = _dump(_kernel(tmp_path, body="", cons="", name="plain"))
    assert with_ld.returncode == without.returncode == 0, with_ld.stderr
    strip = lambda out: re.sub(r"\S*\.py:\d+", "", out)  # noqa: E731
    assert strip(with_ld.stdout) == strip(without.stdout)
    assert "verified for every value of N" in with_ld.stdout


def test_the_gluon_and_ptx_carry_each_call(tmp_path):
    from tle_compiler.frontend import read_kernels
    from tle_compiler.lowering import compile_kernel

    path = _kernel(tmp_path)
    src = gluon_source((str(path), "ring")).source
    lines = [ln.strip() for ln in src.splitlines() if "launch_dependents" in ln]
    assert len(lines) == 2, src
    assert all(ln.startswith('gl.inline_asm_elementwise("griddepcontrol.launch_dependents;')
               and "is_pure=False" in ln for ln in lines)
    # the kernel body's call comes before the partitions start
    kernel = src.split("\ndef ring(", 1)[1]
    assert kernel.index("griddepcontrol.launch_dependents") < kernel.index("gl.warp_specialize(")
    assert "griddepcontrol.launch_dependents" in src.split("\ndef cons(", 1)[1].split("\ndef ", 1)[0]
    info = next(iter(read_kernels(str(path), name="ring")))
    c = compile_kernel(info, {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"}, {}, num_warps=4)
    assert c.asm["ptx"].count("griddepcontrol.launch_dependents;") == 2
    assert c.asm["cubin"]


@pytest.mark.parametrize("call", ["tle.gpu.launch_dependents(1)",
                                  "tle.gpu.launch_dependents(now=True)"])
def test_arguments_are_refused(tmp_path, call):
    path = _kernel(tmp_path, body=f"    {call}\n", cons="")
    with pytest.raises(TleError, match=r"launch_dependents\(\) takes no arguments") as e:
        gluon_source((str(path), "ring"))
    assert ":11:" in str(e.value)  # the call's line


def test_emulated_kernel_copies(tmp_path):
    torch = pytest.importorskip("torch")
    from tle_compiler.testing.emulator import load_kernel_module

    mod = load_kernel_module(_kernel(tmp_path))
    n = 3
    x = torch.randn(n * BM, BN)
    y = torch.full_like(x, float("nan"))
    mod.ring[(1,)](x, y, n)
    assert torch.equal(x, y)


def test_outside_a_kernel_it_refuses_to_run():
    import tle_compiler as tle

    with pytest.raises(TleError, match="only meaningful inside a @tle.jit kernel"):
        tle.gpu.launch_dependents()
