"""tl.dot A operands computed from pipe-slot tiles (`tl.exp2(a...)`, `-a`, a name rebound in an
`if`), lowered and run on the GPU, against torch (tests/dot_operand_kernels.py). The same kernel
matches the reference on the CPU emulator (tests/test_lowering_dot_operands.py), so a failure
here is the lowering's: before the fix each of these wgmmas read the raw tile from shared memory.
The B-operand kernel's operands (`-b`, `tl.trans(b * 2)`, a name assigned twice) are staged
through shared-memory buffers of their own for synchronous wgmmas (they were refused before)."""

from __future__ import annotations

import importlib.util

import pytest

from tests.dot_operand_kernels import B_KERNEL_SRC, KERNEL_SRC, inputs, reference, reference_b

pytestmark = pytest.mark.gpu

DEVICE = "cuda"


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    path = tmp_path_factory.mktemp("dot_operands_gpu") / "dot_exprs.py"
    path.write_text(KERNEL_SRC)
    spec = importlib.util.spec_from_file_location("dot_exprs_gpu_kernel", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.dot_exprs


@pytest.mark.parametrize("n", [0, 1, 2, 3, 17])
def test_a_operand_expressions_compute_on_the_gpu(kernel, n):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU")
    a, b, s = inputs(n, DEVICE, seed=n)
    kernel[(1,)](a, b, s, n)
    torch.cuda.synchronize()
    if n == 0:
        assert torch.isnan(s).all(), "no tile: nothing may be written"
        return
    # exp2 on the GPU may differ from torch's by an fp32 ulp, which can move the bf16 rounding
    # of an element of exp2(a) by one bf16 ulp (0.4 %); a raw-tile read is off by O(1)
    torch.testing.assert_close(s[:n], reference(a.cpu(), b.cpu(), n).to(DEVICE),
                               rtol=2e-2, atol=5e-2)


@pytest.fixture(scope="module")
def b_kernel(tmp_path_factory):
    path = tmp_path_factory.mktemp("dot_b_operands_gpu") / "dot_b_exprs.py"
    path.write_text(B_KERNEL_SRC)
    spec = importlib.util.spec_from_file_location("dot_b_exprs_gpu_kernel", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.dot_b_exprs


@pytest.mark.parametrize("n", [0, 1, 2, 3, 17])
def test_b_operands_staged_through_shared_memory_compute_on_the_gpu(b_kernel, n):
    """tl.dot B operands in registers (`-b`, `tl.trans(b * 2)`, a name assigned twice), each
    stored into a shared-memory buffer of its own and read by a synchronous wgmma."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU")
    a, b, s = inputs(n, DEVICE, seed=n)
    b_kernel[(1,)](a, b, s, n)
    torch.cuda.synchronize()
    if n == 0:
        assert torch.isnan(s).all(), "no tile: nothing may be written"
        return
    torch.testing.assert_close(s[:n], reference_b(a.cpu(), b.cpu(), n).to(DEVICE),
                               rtol=2e-2, atol=5e-2)
