"""tl.dot B operands computed in registers (tests/test_lowering_dot_operands.py ``STAGED``: -k,
exp2(k), a cast, tl.trans(-k), a name rebound, a name rebound in an ``if``), which the lowering
stages through a shared-memory buffer of their own and feeds to a synchronous wgmma: run on the
GPU against torch. The CPU tests check the generated Gluon and the PTX order (each thread's
stores, its proxy fence, the partition's barrier, the wgmma); this checks the numbers, over
several tiles, where the buffer is rewritten at every iteration."""

from __future__ import annotations

import importlib.util

import pytest

from tests.test_lowering_dot_operands import B_KERNEL, STAGED

pytestmark = pytest.mark.gpu

DEVICE = "cuda"


def _kernel(tmp_path, name: str):
    path = tmp_path / f"qk_{name.replace('-', '_')}.py"
    path.write_text(B_KERNEL.replace("BODY", STAGED[name][0]))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.qk


def _b_of(name: str, k):
    """What the kernel's tl.dot reads as B for the tile k (fp32 of its bf16 values)."""
    import torch

    if name == "exp-name":
        return torch.exp2(k).to(torch.bfloat16).float()
    if name in ("neg-name", "neg-inline", "rebound"):
        return -k
    if name == "trans-of-neg":
        return (-k).T
    return k  # to-inline (a cast to its own dtype), if (the tile on every step)


@pytest.mark.parametrize("n", [1, 5])
@pytest.mark.parametrize("name", list(STAGED))
def test_a_staged_b_operand_computes_on_the_gpu(tmp_path, name, n):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU")
    g = torch.Generator().manual_seed(n)
    q = (torch.randn(64, 64, generator=g) * 0.5).to(torch.bfloat16)
    k = (torch.randn(n, 64, 64, generator=g) * 0.5).to(torch.bfloat16)
    s = torch.full((n, 64, 64), float("nan"), dtype=torch.float32, device=DEVICE)
    _kernel(tmp_path, name)[(1,)](q.to(DEVICE), k.to(DEVICE), s, n)
    torch.cuda.synchronize()
    want = torch.stack([q.float() @ _b_of(name, k[t].float()) for t in range(n)])
    # exp2 on the GPU may round one bf16 element of exp2(k) the other way (0.4 %); reading the
    # raw tile instead of the expression is off by O(1)
    torch.testing.assert_close(s.cpu(), want, rtol=2e-2, atol=5e-2)
