"""The extra cache of the sparse decode as two launches merged by lse
(tle_kernels/sparse_decode_extra.py), on the CPU.

- The merge against the fp32 reference of the whole call, with a launcher that computes one
  cache's attention exactly (the reference itself, rounded to bf16 as a kernel stores it): attn_sink
  of both signs, large and infinite; topk_length and extra_topk_length 0, partial and full; rows
  with no valid token in one set or in both (out 0, lse +inf); h_q 8 (the torch merge) and 128,
  s_q 1 and 2, FP8 and bf16 caches.
- The same with a launcher that applies attn_sink itself (the sink counted once per launch), or
  a merge that drops the extra lengths, fails: the check can tell.
- Through the decode API on the split FP8 kernel run by the CPU emulator, with the sink, its two
  launches writing fp32 partial outputs; "auto" takes the split kernel for an FP8 call; a
  launcher whose kernels store bf16 only is refused, saying so (and "auto" takes the naive
  kernel).
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tle_kernels import sparse_decode_api as A  # noqa: E402
from tle_kernels.sparse_decode_extra import launch_with_extra  # noqa: E402
from tle_kernels.sparse_decode_reference import (make_sparse_decode_inputs,  # noqa: E402
                                                  sparse_decode_reference)

from .gpu.test_sparse_decode import LSE_ABS, LSE_REL, OUT_ABS, OUT_COS, OUT_REL, close  # noqa: E402

SCALE = 576 ** -0.55
ARGS = ("attn_sink", "topk_length", "extra_k_cache", "extra_indices", "extra_topk_length")


def one_cache_launch(q, k_cache, indices, sm_scale, is_fp8, out, lse, attn_sink, topk_length,
                     extra_k_cache, extra_indices, extra_topk_length):
    """A launcher reading one cache exactly: the reference, its output stored as bf16."""
    assert extra_k_cache is None and extra_indices is None and extra_topk_length is None
    o, l_ = sparse_decode_reference(q, k_cache, indices, 512, sm_scale, attn_sink, topk_length)
    out.copy_(o.to(out.dtype))
    lse.copy_(l_)


def inputs(h_q, s_q, is_fp8, sink_values=None, seed=0):
    b = 6
    x = make_sparse_decode_inputs(b, s_q, h_q, 128, is_fp8=is_fp8, device="cpu", seed=seed,
                                  invalid=0.3, attn_sink=True, topk_length=[0, 5, 128, 64, 90, 7],
                                  extra_topk=64, extra_page=3,
                                  extra_topk_length=[64, 0, 3, 0, 64, 17])
    x["indices"][3, 0] = -1          # request 3, row 0: no main token and no extra one (length 0)
    x["extra_indices"][1, -1] = -1   # request 1's last row: main tokens only
    if sink_values is not None:
        x["attn_sink"] = torch.tensor(sink_values, dtype=torch.float32).repeat(h_q)[:h_q]
    return x


def run(x, launch=one_cache_launch, lengths=True):
    out, lse = A.empty_outputs(x["q"])
    out.fill_(float("nan"))
    lse.fill_(float("nan"))
    launch_with_extra(launch, x["q"], x["k_cache"], x["indices"], SCALE, x["k_cache"].dtype !=
                      torch.bfloat16, out, lse, x["attn_sink"], x["topk_length"],
                      x["extra_k_cache"], x["extra_indices"],
                      x["extra_topk_length"] if lengths else None)
    return out, lse


def check(x, out, lse, what):
    want_out, want_lse = sparse_decode_reference(x["q"], x["k_cache"], x["indices"], 512, SCALE,
                                                 *(x[k] for k in ARGS))
    close(f"{what} out", out, want_out.to(torch.bfloat16), OUT_ABS, OUT_REL, OUT_COS)
    close(f"{what} lse", lse, want_lse, LSE_ABS, LSE_REL)


@pytest.mark.parametrize("is_fp8", [True, False], ids=["fp8", "bf16"])
@pytest.mark.parametrize("h_q,s_q", [(8, 2), (128, 1), (64, 2)])
@pytest.mark.parametrize("sink", [None, [0.5, -2.0, 30.0, -30.0, float("inf"), float("-inf")]],
                         ids=["randn_sink", "extreme_sinks"])
def test_merge_matches_the_whole_call(is_fp8, h_q, s_q, sink):
    x = inputs(h_q, s_q, is_fp8, sink)
    out, lse = run(x)
    check(x, out, lse, f"h_q={h_q} s_q={s_q} fp8={is_fp8}")
    # the row with no token in either set: out 0, lse +inf whatever its sinks
    assert torch.all(out[3, 0] == 0) and torch.all(torch.isposinf(lse[3, :, 0]))


def test_without_the_sink_the_merge_is_plain_attention():
    x = inputs(64, 1, True)
    x["attn_sink"] = None
    out, lse = run(x)
    check(x, out, lse, "no sink")


def test_a_sink_counted_by_each_launch_is_caught():
    x = inputs(64, 1, False, [1.0, 2.0])

    def sink_in_each_launch(q, k_cache, indices, sm_scale, is_fp8, out, lse, attn_sink, *rest):
        one_cache_launch(q, k_cache, indices, sm_scale, is_fp8, out, lse, x["attn_sink"], *rest)

    out, lse = run(x, sink_in_each_launch)
    with pytest.raises(AssertionError, match="out"):
        check(x, out, lse, "sink per launch")


def test_dropping_the_extra_lengths_is_caught():
    x = inputs(64, 2, True)
    out, lse = run(x, lengths=False)
    with pytest.raises(AssertionError):
        check(x, out, lse, "no extra_topk_length")


@pytest.mark.parametrize("h_q,s_q", [(64, 2), (8, 1)])
def test_split_fp8_kernel_with_an_extra_cache_through_the_api(monkeypatch, h_q, s_q):
    """The FP8 split kernel, run by the CPU emulator, for both launches of a call with an extra
    cache, attn_sink and both lengths, through sparse_decode_api.launch_sparse by name; on 3
    programs each launch runs as merged topk pieces (tail_split.py), h_q 8 over 16-head copies
    (head_padding.py), all in fp32."""
    import tle_kernels.sparse_decode_split_fp8 as kmod
    import tle_kernels.sparse_decode_split_fp8_sink as smod
    from tle_compiler.testing.emulator import load_kernel_module
    from tle_kernels import api

    emu = load_kernel_module(kmod.__file__, dot_dtypes=(torch.bfloat16,))
    monkeypatch.setattr(kmod, "sparse_decode_split_fp8", emu.sparse_decode_split_fp8)
    emu = load_kernel_module(smod.__file__, dot_dtypes=(torch.bfloat16,))
    monkeypatch.setattr(smod, "sparse_decode_split_fp8_sink", emu.sparse_decode_split_fp8_sink)
    monkeypatch.setattr(api, "sm_count", lambda device: 3)
    import tle_kernels.sparse_decode_split_fp8_launch as L
    dtypes = []
    launch = L.launch_sparse_split_fp8

    def recording(q, k_cache, indices, sm_scale, is_fp8, out, lse, *rest):
        dtypes.append(out.dtype)
        return launch(q, k_cache, indices, sm_scale, is_fp8, out, lse, *rest)

    monkeypatch.setattr(L, "launch_sparse_split_fp8", recording)
    x = inputs(h_q, s_q, True, [0.5, -1.0, 20.0, float("-inf")], seed=3)
    out, lse = A.empty_outputs(x["q"])
    out.fill_(float("nan"))
    lse.fill_(float("nan"))
    ran = A.launch_sparse("split-fp8", x["q"], x["k_cache"], x["indices"], SCALE, True, out, lse,
                          *(x[k] for k in ARGS))
    assert ran == "split-fp8" and dtypes == [torch.float32, torch.float32]
    check(x, out, lse, f"split-fp8 with an extra cache, h_q={h_q} s_q={s_q}")


def test_auto_takes_the_two_launches_where_a_kernel_stores_fp32():
    x = inputs(64, 1, True)
    call = dict(q=x["q"], k_cache=x["k_cache"], indices=x["indices"], is_fp8=True,
                **{k: x[k] for k in ARGS})
    assert A.select_sparse_impl("auto", call) == "split-fp8"
    # the bf16 cache's kernels store bf16 only: the naive kernel
    y = inputs(64, 1, False)
    call = dict(q=y["q"], k_cache=y["k_cache"], indices=y["indices"], is_fp8=False,
                **{k: y[k] for k in ARGS})
    assert A.select_sparse_impl("auto", call) == "naive"
    assert "its kernels store bf16 outputs only" in A.sparse_unsupported_reason("seesaw", **call)
