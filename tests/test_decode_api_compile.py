"""torch.compile(fullgraph=True) traces the decode entry point's validation in one graph: the
launchers are read from sys.modules (importlib cannot be traced) and no data pointer is read
while tracing (data_pointers.address_known). On this CPU-only machine the tensors are CPU
tensors, so a trace that gets through every rule stops at the device check: that error, raised
inside the traced code, is what a full trace looks like here (a graph break would name importlib
or data_ptr instead)."""

import pytest
import torch

import tle_kernels as flash_mla
from tle_kernels import data_pointers

BF16, I32 = torch.bfloat16, torch.int32


def _trace_error(fn, *args) -> str:
    torch._dynamo.reset()
    with pytest.raises(Exception) as info:
        torch.compile(fn, fullgraph=True, backend="eager")(*args)
    return str(info.value)


def _dense(impl):
    def step(q, k, bt, sl):
        meta, _ = flash_mla.get_mla_metadata()
        return flash_mla.flash_mla_with_kvcache(q, k, bt, sl, 512, meta, impl=impl)
    return step


@pytest.mark.parametrize("impl", ["auto", "naive", "pipe", "seesaw", "seesaw-tma"])
def test_dense_call_traces_to_the_device_check(impl):
    q = torch.zeros(2, 1, 64, 576, dtype=BF16)
    k = torch.zeros(4, 64, 1, 576, dtype=BF16)
    err = _trace_error(_dense(impl), q, k, torch.zeros(2, 2, dtype=I32), torch.zeros(2, dtype=I32))
    assert "q: expected a CUDA tensor" in err, err[-600:]


def test_dense_explicit_impl_refuses_misaligned_strides_while_tracing():
    # rows of 577 bf16 (1154 bytes): the stride rule needs no address, so the trace refuses it
    q = torch.zeros(2, 1, 16, 577, dtype=BF16)[..., :576]
    k = torch.zeros(4, 64, 1, 576, dtype=BF16)
    err = _trace_error(_dense("seesaw"), q, k, torch.zeros(2, 2, dtype=I32),
                       torch.zeros(2, dtype=I32))
    assert "16-byte aligned rows" in err, err[-600:]


def _sparse(impl, is_fp8, **extra):
    def step(q, k, idx):
        meta, _ = flash_mla.get_mla_metadata()
        return flash_mla.flash_mla_with_kvcache(q, k, None, None, 512, meta,
                                                is_fp8_kvcache=is_fp8, indices=idx, impl=impl,
                                                **extra)
    return step


@pytest.mark.parametrize("impl,is_fp8", [("auto", True), ("auto", False), ("naive", True),
                                         ("seesaw", False), ("seesaw-fp8", True),
                                         ("split-fp8", True)])
def test_sparse_call_traces_to_the_device_check(impl, is_fp8):
    q = torch.zeros(1, 1, 64, 576, dtype=BF16)
    k = (torch.zeros(2, 64, 1, 656, dtype=torch.uint8) if is_fp8
         else torch.zeros(2, 64, 1, 576, dtype=BF16))
    idx = torch.zeros(1, 1, 128, dtype=I32)
    err = _trace_error(_sparse(impl, is_fp8), q, k, idx)
    assert "q: expected a CUDA tensor" in err, err[-600:]


def test_sparse_call_with_sink_and_topk_length_traces_to_the_device_check():
    q = torch.zeros(2, 1, 64, 576, dtype=BF16)
    k = torch.zeros(2, 64, 1, 656, dtype=torch.uint8)
    idx = torch.zeros(2, 1, 128, dtype=I32)
    step = _sparse("auto", True, attn_sink=torch.zeros(64), topk_length=torch.ones(2, dtype=I32))
    err = _trace_error(step, q, k, idx)
    assert "q: expected a CUDA tensor" in err, err[-600:]


def test_address_is_not_read_while_tracing():
    seen = []

    def probe(x):
        seen.append(data_pointers.address_known(x))
        return x + 1

    torch._dynamo.reset()
    torch.compile(probe, fullgraph=True, backend="eager")(torch.zeros(2))
    assert seen == [False]                        # traced once, no data_ptr in the graph
    assert data_pointers.address_known(torch.zeros(2))
    assert not data_pointers.address_known(torch.zeros(2, device="meta"))


def test_rows_aligned_where_known_reads_strides_and_known_addresses():
    buf = torch.zeros(2 * 576 + 8, dtype=BF16)
    shifted = buf[1:1 + 2 * 576].view(2, 576)     # rows start 2 bytes past a 16-byte boundary
    assert data_pointers.strides_aligned(shifted)
    assert not data_pointers.rows_aligned_where_known(shifted)
    assert data_pointers.rows_aligned_where_known(buf[:2 * 576].view(2, 576))
    assert not data_pointers.rows_aligned_where_known(torch.zeros(2, 577, dtype=BF16)[:, :576])
    # a meta tensor has no address: only its strides are judged
    assert data_pointers.rows_aligned_where_known(torch.zeros(2, 576, dtype=BF16, device="meta"))
