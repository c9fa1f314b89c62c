"""The checks of the GPU tests, written once for two launchers: the real kernels on CUDA
(tests/gpu/test_*.py) and the CPU emulation (tests/test_gpu_kernels_verify.py), so the harness and
the references are debugged before device time.

Each ``check_*(mod, device, ...)`` takes a kernel module (``tle_kernels.gpu_tests.X`` or its emulation),
poisons the outputs, launches, synchronizes and compares element-exact (attention: to a bf16
tolerance). Data is random int32 in a range where the kernels' arithmetic cannot overflow."""

from __future__ import annotations

import math

import torch

BM = BN = 64
POISON = -0x5EED5EED  # int32 sentinel for "never written"


def _sync(device: str) -> None:
    if str(device).startswith("cuda"):
        torch.cuda.synchronize()


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _ints(shape, seed: int, device: str) -> torch.Tensor:
    return torch.randint(-(2 ** 28), 2 ** 28, tuple(shape), generator=_gen(seed),
                         dtype=torch.int32).to(device)


def _poison(shape, device: str) -> torch.Tensor:
    return torch.full(tuple(shape), POISON, dtype=torch.int32, device=device)


def _exact(got: torch.Tensor, want: torch.Tensor, what: str) -> None:
    assert got.shape == want.shape, f"{what}: shape {tuple(got.shape)} != {tuple(want.shape)}"
    bad = got != want
    if bool(bad.any()):
        idx = bad.nonzero()[0].tolist()
        raise AssertionError(
            f"{what}: {int(bad.sum())} of {got.numel()} elements differ; first at {idx}: got "
            f"{int(got[tuple(idx)])}, want {int(want[tuple(idx)])}"
            + (" (never written)" if int(got[tuple(idx)]) == POISON else ""))


def check_ring(mod, device: str, capacity: int, n: int, programs: int = 2) -> None:
    """spsc_ring: y[p, t] == x[p, t] for every program p and tile t < n. ring_stages (one kernel
    whose capacity is its constexpr STAGES): the same, launched with STAGES=capacity."""
    x = _ints((programs, max(n, 1), BM, BN), 1000 + 10 * capacity + n, device)
    y = _poison(x.shape, device)
    if hasattr(mod, "KERNELS"):
        getattr(mod, mod.KERNELS[capacity])[(programs,)](x, y, n)
    else:
        mod.ring_stages[(programs,)](x, y, n, STAGES=capacity)
    _sync(device)
    if n == 0:
        _exact(y, _poison(x.shape, device), f"ring capacity {capacity}, 0 tiles (nothing written)")
    else:
        _exact(y, x, f"ring capacity {capacity}, {n} tiles")


def check_spmc2(mod, device: str, n: int) -> None:
    x = _ints((max(n, 1), 3, BM, BN), 2000 + n, device)
    out0, out1 = _poison((max(n, 1), BM, BN), device), _poison((max(n, 1), BM, BN), device)
    mod.spmc2[(1,)](x, out0, out1, n)
    _sync(device)
    if n == 0:
        _exact(out0, _poison(out0.shape, device), "spmc2 out0, 0 tiles")
        _exact(out1, _poison(out1.shape, device), "spmc2 out1, 0 tiles")
        return
    _exact(out0, x[:, 0], f"spmc2 left (view a), {n} tiles")
    _exact(out1, x[:, 0] + x[:, 1], f"spmc2 right (a + b, late release), {n} tiles")


def check_spmc3(mod, device: str, n: int) -> None:
    x = _ints((max(n, 1), 3, BM, BN), 3000 + n, device)
    outs = [_poison((max(n, 1), BM, BN), device) for _ in range(3)]
    mod.spmc3[(1,)](x, *outs, n)
    _sync(device)
    if n == 0:
        for k, o in enumerate(outs):
            _exact(o, _poison(o.shape, device), f"spmc3 out{k}, 0 tiles")
        return
    _exact(outs[0], x[:, 0], f"spmc3 r0 (view a), {n} tiles")
    _exact(outs[1], x[:, 1] - x[:, 2], f"spmc3 r1 (view b, c), {n} tiles")
    _exact(outs[2], x[:, 0] + x[:, 1] + x[:, 2], f"spmc3 r2 (all fields), {n} tiles")


def check_one_shot(mod, device: str, n: int) -> None:
    q = _ints((BM, BN), 4000, device)
    x = _ints((max(n, 1), BM, BN), 4001 + n, device)
    out0, out1 = _poison(x.shape, device), _poison((BM, BN), device)
    mod.one_shot_two_readers[(1,)](q, x, out0, out1, n)
    _sync(device)
    _exact(out1, q * 2, "one_shot: r1 reads q once")
    if n == 0:
        _exact(out0, _poison(x.shape, device), "one_shot: r0 stream, 0 tiles")
    else:
        _exact(out0, q[None] + x, f"one_shot: r0 uses q for {n} tiles")


def check_close(mod, device: str, n: int) -> None:
    x = _ints((max(n, 1), BM, BN), 5000 + n, device)
    y = _poison(x.shape, device)
    flags = _poison((n + 1, BN), device)
    count = _poison((BN,), device)
    mod.close_count[(1,)](x, y, flags, count, n)
    _sync(device)
    want_flags = torch.zeros((n + 1, BN), dtype=torch.int32, device=device)
    want_flags[n] = 1
    _exact(flags, want_flags, f"close: is_closed per wait (closed only at index {n})")
    _exact(count, torch.full((BN,), n, dtype=torch.int32, device=device),
           "close: tiles seen before the closed one")
    if n:
        _exact(y, x, f"close: {n} tiles copied")


def check_chain(mod, device: str, n: int) -> None:
    x = _ints((max(n, 1), BM, BN), 6000 + n, device)
    y = _poison(x.shape, device)
    mod.chain3[(1,)](x, y, n)
    _sync(device)
    if n == 0:
        _exact(y, _poison(x.shape, device), "chain: 0 tiles")
    else:
        _exact(y, x + 1, f"chain A -> B(+1) -> C, {n} tiles")


def check_seesaw(mod, device: str, n: int) -> None:
    x0 = _ints((max(n, 1), BM, BN), 7000 + n, device)
    x1 = _ints((max(n, 1), BM, BN), 7500 + n, device)
    out0, out1 = _poison(x0.shape, device), _poison(x0.shape, device)
    mod.seesaw[(1,)](x0, x1, out0, out1, n)
    _sync(device)
    if n == 0:
        _exact(out0, _poison(x0.shape, device), "seesaw out0, 0 tiles")
        _exact(out1, _poison(x0.shape, device), "seesaw out1, 0 tiles")
        return
    _exact(out0, x0 + x1, f"seesaw consumer0, {n} iterations")
    _exact(out1, x1 + x0, f"seesaw consumer1, {n} iterations")


def attention_reference(q, k, v, sm_scale):
    s = (q.float() @ k.float().T) * sm_scale
    return torch.softmax(s, dim=-1) @ v.float()


def check_attention(mod, device: str, nk: int, m_blocks: int = 2, rel_tol: float = 1e-2) -> None:
    g = _gen(8000 + nk)
    D = 64
    q = torch.randn(m_blocks * BM, D, generator=g).bfloat16().to(device)
    k = torch.randn(nk * BN, D, generator=g).bfloat16().to(device)
    v = torch.randn(nk * BN, D, generator=g).bfloat16().to(device)
    sm_scale = D ** -0.5
    o = torch.full((m_blocks * BM, D), float("nan"), dtype=torch.float32, device=device)
    mod.attention[(m_blocks,)](q, k, v, o, sm_scale * 1.4426950408889634, nk)
    _sync(device)
    ref = attention_reference(q, k, v, sm_scale)
    assert not bool(o.isnan().any()), f"attention: {int(o.isnan().sum())} outputs never written"
    err = ((o - ref).norm() / ref.norm()).item()
    assert err < rel_tol, f"attention NK={nk}: relative error {err:.3g} >= {rel_tol}"


def check_acc_store(mod, device: str, dtype: torch.dtype, off: int) -> None:
    """O = A·B (64x64 by 64x128, small integers: exact) stored at element offset ``off`` of a
    row-padded output (leading dim 136) in ``dtype``; every element exact, the padding untouched."""
    g = _gen(9000 + off)
    a = torch.randint(-3, 4, (64, 64), generator=g).to(torch.bfloat16).to(device)
    b = torch.randint(-3, 4, (64, 128), generator=g).to(torch.bfloat16).to(device)
    ld = 136
    o = torch.full((off + 64 * ld,), float("nan"), dtype=dtype, device=device)
    mod.acc_store[(1,)](a, b, o, off, ld)
    _sync(device)
    want = (a.float() @ b.float()).to(dtype)
    got = o[off:].view(64, ld)
    assert bool((got[:, :128] == want).all()), (
        f"acc_store {dtype} off={off}: {int((got[:, :128] != want).sum())} of 8192 elements differ"
        f"{' (some never written)' if bool(got[:, :128].isnan().any()) else ''}")
    assert bool(got[:, 128:].isnan().all()) and bool(o[:off].isnan().all()), \
        f"acc_store {dtype} off={off}: wrote outside the tile"


def check_refill(mod, device: str, nt: int) -> None:
    """slot_overlap.refill: O = sum over t of X_t·V_t, small integers (exact in fp32), the V
    tiles refilled into the other slot of a two-slot ring while the wgmma on this one runs."""
    g = _gen(9500 + nt)
    x = torch.randint(-3, 4, (nt * BM, BN), generator=g).to(torch.bfloat16).to(device)
    v = torch.randint(-3, 4, (nt * BM, BN), generator=g).to(torch.bfloat16).to(device)
    o = torch.full((BM, BN), float("nan"), dtype=torch.float32, device=device)
    mod.refill[(1,)](x, v, o, nt)
    _sync(device)
    want = sum(x[t * BM:(t + 1) * BM].float() @ v[t * BM:(t + 1) * BM].float() for t in range(nt))
    assert bool((o == want).all()), (
        f"refill NT={nt}: {int((o != want).sum())} of {o.numel()} elements differ"
        f"{' (some never written)' if bool(o.isnan().any()) else ''}")


def check_delayed_release(mod, device: str, nt: int, rel_tol: float = 1e-2) -> None:
    """slot_overlap.delayed_release: softmax in base 2 of Q·Kᵀ (no scale) times V, the K/V slot
    of tile t - 1 released while tile t's Q·Kᵀ runs."""
    g = _gen(9700 + nt)
    q = (torch.randn(BM, BN, generator=g) / 4).bfloat16().to(device)
    k = (torch.randn(nt * BM, BN, generator=g) / 4).bfloat16().to(device)
    v = torch.randn(nt * BM, BN, generator=g).bfloat16().to(device)
    o = torch.full((BM, BN), float("nan"), dtype=torch.float32, device=device)
    mod.delayed_release[(1,)](q, k, v, o, nt)
    _sync(device)
    ref = attention_reference(q, k, v, math.log(2.0))  # exp2(s) = exp(s · ln 2)
    assert not bool(o.isnan().any()), f"delayed_release: {int(o.isnan().sum())} outputs never written"
    err = ((o - ref).norm() / ref.norm()).item()
    assert err < rel_tol, f"delayed_release NT={nt}: relative error {err:.3g} >= {rel_tol}"
