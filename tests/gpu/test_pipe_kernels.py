"""The kernels of tle_kernels/gpu_tests/, lowered and run on the GPU, compared element-exact with torch
(attention: relative error < 1e-2 against an fp32 reference). The same checks pass on the CPU
emulation (tests/test_gpu_kernels_verify.py), so a failure here is the lowering's. Keep sizes small:
a hang is a protocol or lowering bug, and scripts/gpu_check.sh runs this under `timeout`."""

from __future__ import annotations

import importlib

import pytest

from tests.gpu import cases

pytestmark = pytest.mark.gpu

DEVICE = "cuda"


def _mod(stem: str):
    return importlib.import_module(f"tle_kernels.gpu_tests.{stem}")


@pytest.mark.parametrize("capacity", [1, 2, 3, 4])
@pytest.mark.parametrize("trips", ["0", "1", "C", "C+1", "1000"])
def test_spsc_ring_copy(capacity, trips):
    n = {"C": capacity, "C+1": capacity + 1}.get(trips) or int(trips)
    cases.check_ring(_mod("spsc_ring"), DEVICE, capacity, n)


@pytest.mark.parametrize("capacity", [1, 2, 3, 4])
@pytest.mark.parametrize("trips", ["0", "1", "C+1", "1000"])
def test_ring_of_constexpr_capacity_copy(capacity, trips):
    """ring_stages: capacity=STAGES, lowered per launch with the launch's STAGES."""
    n = {"C+1": capacity + 1}.get(trips) or int(trips)
    cases.check_ring(_mod("ring_stages"), DEVICE, capacity, n)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 64])
def test_spmc_two_readers_with_views_and_late_release(n):
    cases.check_spmc2(_mod("spmc"), DEVICE, n)


@pytest.mark.parametrize("n", [0, 1, 3, 4, 64])
def test_spmc_three_readers_two_field_groups(n):
    cases.check_spmc3(_mod("spmc"), DEVICE, n)


@pytest.mark.parametrize("n", [0, 1, 5])
def test_one_shot_two_readers(n):
    cases.check_one_shot(_mod("one_shot"), DEVICE, n)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 50])
def test_close_is_closed(n):
    cases.check_close(_mod("close"), DEVICE, n)


@pytest.mark.parametrize("n", [0, 1, 4, 100])
def test_chain_three_partitions(n):
    cases.check_chain(_mod("chain"), DEVICE, n)


@pytest.mark.parametrize("n", [0, 1, 2, 100])
def test_seesaw_exchange(n):
    cases.check_seesaw(_mod("seesaw"), DEVICE, n)


@pytest.mark.parametrize("nk", [1, 2, 3, 16])
def test_attention_online_softmax(nk):
    cases.check_attention(_mod("attention"), DEVICE, nk)


@pytest.mark.parametrize("dtype,off", [("bfloat16", 0), ("bfloat16", 1), ("float16", 8),
                                       ("float16", 3), ("float32", 0)])
def test_accumulator_store(dtype, off):
    """16-byte quad-transpose stores (aligned), their 2-byte fallback (odd offsets), fp32: plain."""
    import torch
    cases.check_acc_store(_mod("acc_store"), DEVICE, getattr(torch, dtype), off)


@pytest.mark.parametrize("nt", [1, 2, 3, 17])
def test_refill_of_the_other_slot_while_its_wgmma_runs(nt):
    cases.check_refill(_mod("slot_overlap"), DEVICE, nt)


@pytest.mark.parametrize("nt", [1, 2, 5, 16])
def test_delayed_release_while_the_next_qk_runs(nt):
    cases.check_delayed_release(_mod("slot_overlap"), DEVICE, nt)
