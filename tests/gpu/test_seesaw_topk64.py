"""The seesaw SparseMLA prefill at topk % 128 == 64 on the GPU (tle_kernels/sparse_mla_seesaw.py:
NP = ceil(topk / 128) K-tile pairs, the last pair's second tile read masked by position), every
variant (plain, attn_sink, topk_length, both; d_qk 576 and 512) through ``api.launch`` and
``sparse_mla_prefill``, against the fp32 reference with tests/gpu/test_sparse_mla.py's tolerances
and NaN-poisoned outputs. The index rows are views into rows 64 slots longer whose extra slots
name kv rows full of NaN: a kernel that read past topk would return NaN.

    python3 -m pytest -q -m gpu tests/gpu/test_seesaw_topk64.py
"""

from __future__ import annotations

import math

import pytest
import torch

import tle_kernels as K
from tle_kernels import api

from .test_sparse_mla import compare, make_case, poisoned

pytestmark = pytest.mark.gpu


def nan_padded(kv, idx, poison=64):
    """kv with ``poison`` NaN rows appended, and ``idx`` as a view of rows 64 slots longer whose
    extra slots name those rows (the invalid index s_kv becomes the new s_kv)."""
    s_q, _, topk = idx.shape
    s_kv = kv.shape[0]
    kv = torch.cat([kv, torch.full((poison,) + kv.shape[1:], float("nan"), dtype=kv.dtype,
                                   device=kv.device)])
    big = torch.randint(s_kv, s_kv + poison, (s_q, 1, topk + 64), dtype=torch.int32,
                        device=idx.device)
    # make_case's invalid index s_kv names a NaN row now: move it past the new end
    big[..., :topk] = torch.where(idx == s_kv, s_kv + poison, idx)
    return kv, big[..., :topk]


def features(h_q, s_q, topk, which):
    g = torch.Generator(device="cuda").manual_seed(h_q + topk)
    sink = tlen = None
    if which in ("sink", "both"):
        sink = torch.randn(h_q, device="cuda", generator=g) * 2
        sink[0], sink[1] = float("-inf"), 4.0
    if which in ("topk_length", "both"):
        tlen = torch.randint(0, topk + 1, (s_q,), device="cuda", generator=g, dtype=torch.int32)
        tlen[:6] = torch.tensor([0, 1, 63, topk - 1, topk + 100, -5], dtype=torch.int32)
    return sink, tlen


@pytest.mark.parametrize("which", ["plain", "sink", "topk_length", "both"])
@pytest.mark.parametrize("d_qk", [576, 512])
@pytest.mark.parametrize("s_q,h_q,topk,s_kv", [(37, 64, 64, 200), (300, 128, 192, 4096),
                                               (20, 128, 2112, 32768), (133, 96, 576, 8192)])
def test_seesaw_against_the_reference(s_q, h_q, topk, s_kv, d_qk, which):
    q, kv, idx = make_case(s_q, h_q, topk, s_kv, d_qk, seed=s_q + topk + d_qk)
    kv, idx = nan_padded(kv, idx)
    sink, tlen = features(h_q, s_q, topk, which)
    scale = 1 / math.sqrt(d_qk)
    want = K.sparse_mla_reference(q, kv, idx, scale, attn_sink=sink, topk_length=tlen)
    assert api.select_impl("auto", h_q, d_qk, topk, sink is not None, tlen is not None) == "seesaw"
    for persistent in (True, False):
        bufs = poisoned(q)
        assert api.launch("seesaw", q, kv, idx, scale, *bufs, attn_sink=sink, topk_length=tlen,
                          persistent=persistent) == "seesaw"
        torch.cuda.synchronize()
        compare(bufs, want, f"seesaw {which} d_qk={d_qk} topk={topk} persistent={persistent}")
    got = K.sparse_mla_prefill(q, kv, idx, scale, attn_sink=sink, topk_length=tlen)
    compare(got, want, "auto")


def test_seesaw_and_pipe_agree_at_topk_576():
    """The two TLE kernels that take topk % 128 == 64 on the same call, both within the
    reference's tolerance."""
    q, kv, idx = make_case(64, 128, 576, 8192, seed=3)
    want = K.sparse_mla_reference(q, kv, idx, 1 / math.sqrt(576))
    for impl in ("seesaw", "pipe"):
        bufs = poisoned(q)
        assert api.launch(impl, q, kv, idx, 1 / math.sqrt(576), *bufs) == impl
        torch.cuda.synchronize()
        compare(bufs, want, impl)
