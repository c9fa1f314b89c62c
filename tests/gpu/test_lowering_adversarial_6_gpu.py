"""Lowering adversarial round 6 on the GPU: the kernels of tests/test_lowering_adversarial_6.py's
GPU_CASES (several-None subscripts, expand_dims with a tuple, keep_dims reductions, x.T and
x.numel, an ``if`` Triton folds to false, a 0-d tl.full, a tensor tl.cdiv and narrow tl.max
stored into slots, float sums of a whole tile), each launched through the TLE runtime and
compared bit for bit with the plain Triton kernel that computes the same values without pipes
(within float32 rounding for the REORDERED cases: a float sum Triton groups in another
layout). The CPU counterpart
(``test_the_gpu_cases_verify_and_compile``) verifies and compiles every one of them."""

from __future__ import annotations

import importlib.util

import pytest

from tests.test_lowering_adversarial_6 import GPU_CASES, REORDERED

pytestmark = pytest.mark.gpu

DEVICE = "cuda"


def _load(path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _inputs(torch, dt: str, n: int):
    g = torch.Generator().manual_seed(6 + n)
    if dt == "bfloat16":
        x = (torch.randn(n * 2048, generator=g) * 8).to(torch.bfloat16)
    elif dt == "int8":
        x = torch.randint(-128, 128, (n * 2048,), generator=g, dtype=torch.int8)
    else:
        x = torch.randint(-1000, 1000, (n * 2048,), generator=g, dtype=torch.int32)
    return x.to(DEVICE)


@pytest.mark.parametrize("n", [1, 3])
@pytest.mark.parametrize("case", GPU_CASES, ids=[c[0] for c in GPU_CASES])
def test_the_lowered_kernel_computes_what_plain_triton_computes(tmp_path, case, n):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU")
    name, tle_src, ref_src, xdt, ydt = case
    (tmp_path / "kernel.py").write_text(tle_src)
    (tmp_path / "ref.py").write_text(ref_src)
    k = _load(tmp_path / "kernel.py", f"adv6_{name}_tle".replace("-", "_")).k
    ref = _load(tmp_path / "ref.py", f"adv6_{name}_ref".replace("-", "_")).ref
    x = _inputs(torch, xdt, n)
    y = torch.full((n * 2048,), 7, dtype=getattr(torch, ydt), device=DEVICE)
    y_ref = y.clone()
    M = 5
    k[(1,)](x, y, n, M)
    ref[(1,)](x, y_ref, n, M)
    torch.cuda.synchronize()
    if name in REORDERED:  # a float sum grouped otherwise (REORDERED says why)
        assert not torch.isnan(y).any()
        why, atol = REORDERED[name]
        torch.testing.assert_close(y, y_ref, rtol=0, atol=atol,
                                   msg=lambda m: f"{name} ({why}): {m}")
        return
    assert torch.equal(y.view(torch.uint8), y_ref.view(torch.uint8)), (name, y, y_ref)
