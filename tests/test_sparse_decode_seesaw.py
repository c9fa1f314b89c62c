"""The bf16 sparse MLA decode by the seesaw SparseMLA prefill kernels
(tle_kernels/sparse_decode_seesaw_launch.py, impl "seesaw" of tle_kernels/sparse_decode_api.py) on
the CPU:

- the math: ``launch_sparse`` with the prefill's three seesaw kernels replaced by their CPU
  emulations (tle_compiler/testing/emulator.py), against the fp32 sparse decode reference on
  hostile inputs (invalid indices of every kind, NaN in every token no valid slot names, sinks of
  +-inf, per-request topk_length 0 / partial / past topk, a row with no valid slot), for the
  three prefill kernels it reaches (plain persistent, persistent with the sink, per-row
  topk_length), s_q 1 and 2, h_q 64 and 128, pages of 7, 16 and 64 tokens;
- the reshape contract, with the prefill launch stood in for: q, indices, kv and out reach it as
  views of the caller's tensors, token t = i * s_q + j of the prefill is row (i, j) of the decode
  (out [b, s_q, h_q, 512], lse [b, h_q, s_q]), outputs that do not flatten or are misaligned go
  through scratch buffers, topk_length is repeated over s_q, and nothing is read on the host;
- which calls it takes ("auto" picks it) and why not for the others ("auto" falls back to naive).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

import tle_kernels.sparse_mla_seesaw as plain_mod  # noqa: E402
import tle_kernels.sparse_mla_seesaw_sink as sink_mod  # noqa: E402
import tle_kernels.sparse_mla_seesaw_topk_length as length_mod  # noqa: E402
from tle_kernels import api  # noqa: E402
from tle_kernels import sparse_decode_api as A  # noqa: E402
from tle_kernels import sparse_decode_seesaw_launch as S  # noqa: E402
from tle_kernels.sparse_decode_reference import (make_sparse_decode_inputs,  # noqa: E402
                                                 sparse_decode_reference)

KDIR = Path(__file__).resolve().parent.parent / "tle_kernels"
SCALE = 576 ** -0.55
BF16, I32, F32, U8 = torch.bfloat16, torch.int32, torch.float32, torch.uint8
OPTIONAL = ("attn_sink", "topk_length", "extra_k_cache", "extra_indices", "extra_topk_length")


@pytest.fixture
def emulated(monkeypatch):
    """The prefill's seesaw kernels replaced in their modules by their CPU emulations (where
    api.launch and its sink / topk_length launcher look them up); ``emulated(sms)`` sets the SM
    count the persistent launches see."""
    from tle_compiler.testing.emulator import load_kernel_module

    for mod, name in ((plain_mod, "sparse_mla_seesaw"), (sink_mod, "sparse_mla_seesaw_sink"),
                      (length_mod, "sparse_mla_seesaw_topk_length")):
        emu = load_kernel_module(KDIR / f"{name}.py", dot_dtypes=(torch.bfloat16,))
        monkeypatch.setattr(mod, name, getattr(emu, name))

    def set_sms(sms: int) -> None:
        monkeypatch.setattr(api, "sm_count", lambda device: sms)
    set_sms(132)
    return set_sms


def run_decode(x, impl="seesaw", out=None, lse=None):
    """launch_sparse into NaN-poisoned outputs (fresh ones unless given); returns (out, lse)."""
    if out is None:
        out, lse = A.empty_outputs(x["q"])
    out.fill_(float("nan")), lse.fill_(float("nan"))
    ran = A.launch_sparse(impl, x["q"], x["k_cache"], x["indices"], SCALE, False, out, lse,
                          *(x[k] for k in OPTIONAL))
    assert ran == "seesaw"
    return out, lse


def check(got, want):
    """bf16 out against the fp32 reference: no NaN, each row within bf16 rounding of its own
    largest element (a row scaled down by a sink counts as much as any), rows the reference makes
    0 exactly 0; lse to fp32 precision, infinities at the same places."""
    out, lse = got
    r_out, r_lse = want
    assert not out.float().isnan().any() and not lse.isnan().any()
    o, r = out.float().flatten(0, 2), r_out.flatten(0, 2)
    zero = r.abs().amax(1) == 0
    assert (o[zero] == 0).all()
    rel = (o[~zero] - r[~zero]).abs().amax(1) / r[~zero].abs().amax(1)
    assert rel.max().item() < 2e-2, f"worst row {rel.argmax().item()}: rel {rel.max().item():.3e}"
    assert ((o - r).norm() / r.norm()).item() < 5e-3
    fin = torch.isfinite(r_lse)
    assert torch.equal(lse[~fin], r_lse[~fin])
    assert torch.allclose(lse[fin], r_lse[fin], atol=1e-5, rtol=0)


def inputs(b, s_q, h_q, topk, page, seed, sink=False, lengths=None, invalid=0.2):
    x = make_sparse_decode_inputs(b, s_q, h_q, topk, page=page, is_fp8=False, device="cpu",
                                  seed=seed, invalid=invalid, attn_sink=sink, topk_length=lengths)
    x["indices"][0, s_q - 1] = -1       # a row with no valid slot: out 0, lse +inf
    return x


# ------------------------------------------------------------------------------- the math

CASES = {
    # name: (b, s_q, h_q, topk, page, sink, topk_length, sms)
    "plain_repeated_items": (3, 2, 64, 128, 16, False, None, 4),    # 6 items on 4 programs
    "sink_persistent": (2, 1, 128, 256, 7, True, None, 3),           # 4 items on 3 programs
    "sink_mtp": (3, 2, 128, 128, 64, True, None, 132),
    "topk_length_mtp": (3, 2, 128, 256, 16, False, [0, 100, 999], 132),
    "topk_length_sink": (4, 1, 64, 256, 7, True, [129, 1, 256, -3], 132),
    # under one wave: both query rows run as 16 pieces of one pair each, merged (tail_split.py),
    # each piece reading its token's q row (q_div)
    "small_batch_split": (1, 2, 64, 2048, 64, False, None, 132),
    "small_batch_split_sink": (1, 2, 64, 2048, 64, True, None, 132),
    "small_batch_split_topk_length": (1, 2, 64, 2048, 64, True, [1500], 132),
    # topk % 128 == 64: the last K-tile pair's second tile masked, no tail split
    "topk_192_repeated_items": (3, 2, 64, 192, 16, False, None, 4),
    "topk_64_sink": (2, 1, 128, 64, 7, True, None, 3),
    "topk_320_topk_length": (3, 1, 64, 320, 16, True, [0, 250, 999], 132),
}


@pytest.mark.parametrize("case", list(CASES))
def test_emulated_seesaw_matches_the_reference(emulated, case, monkeypatch):
    import tle_kernels.tail_split as ts

    b, s_q, h_q, topk, page, sink, lengths, sms = CASES[case]
    emulated(sms)
    splits = []
    run_split = ts.run_split
    monkeypatch.setattr(ts, "run_split", lambda *a, **k: splits.append((a[-1], k.get("shared_q")))
                        or run_split(*a, **k))
    x = inputs(b, s_q, h_q, topk, page, seed=sum(map(ord, case)), sink=sink, lengths=lengths)
    want = sparse_decode_reference(x["q"], x["k_cache"], x["indices"], 512, SCALE,
                                   *(x[k] for k in OPTIONAL))
    if case.startswith("small_batch_split"):
        from tle_kernels.tail_split import TailSplit, plan_tail_split

        assert plan_tail_split(b * s_q, h_q // 64, topk, sms, 128) == TailSplit(0, 16)
    check(run_decode(x), want)
    # the pieces read their token's q row in place (the kernel's q_div = 16), no copy of q
    assert splits == ([(ts.TailSplit(0, 16), True)] if case.startswith("small_batch_split")
                      else []), splits
    assert (want[1][0, :, s_q - 1] == float("inf")).all()
    if lengths is not None and 0 in lengths:
        assert (want[1][lengths.index(0)] == float("inf")).all()
    if sink:
        assert torch.isinf(x["attn_sink"]).any()


def test_auto_runs_the_seesaw_and_outputs_that_do_not_flatten(emulated):
    """"auto" picks the seesaw for a bf16 call it supports; out as a slice of a larger buffer (b
    and s_q do not merge) and lse with a padded s_q are written through scratch buffers, and
    nothing around them is touched."""
    x = inputs(2, 2, 64, 128, 16, seed=11, sink=True, lengths=[50, 128])
    want = sparse_decode_reference(x["q"], x["k_cache"], x["indices"], 512, SCALE,
                                   *(x[k] for k in OPTIONAL))
    out_buf = torch.full((2, 3, 64, 512), 7.0, dtype=BF16)
    lse_buf = torch.full((2, 64, 3), 7.0, dtype=F32)
    out, lse = out_buf[:, :2], lse_buf[:, :, :2]
    check(run_decode(x, "auto", out, lse), want)
    assert (out_buf[:, 2] == 7).all() and (lse_buf[:, :, 2] == 7).all()


# ------------------------------------------------------------------- the reshape contract

class RecordOps(TorchDispatchMode):
    """Records the name of every operator call."""

    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(str(func))
        return func(*args, **(kwargs or {}))


HOST_READS = ("aten._local_scalar_dense", "aten.item", "aten.nonzero", "aten.masked_select",
              "aten.equal", "aten.is_nonzero")


@pytest.fixture
def stand_in(monkeypatch):
    """api.launch stood in for: records its arguments and writes token t, head h of the prefill's
    outputs as out = t + h / 256 (every column), lse = 1000 t + h."""
    calls = []

    def launch(impl, q, kv, indices, sm_scale, out, max_logits, lse, attn_sink=None,
               topk_length=None, tail_min_speedup=2.0):
        # a decode step asks for the decode's tail split threshold, not the prefill's
        assert tail_min_speedup == S.SEESAW_DECODE_MIN_SPEEDUP
        calls.append(dict(impl=impl, q=q, kv=kv, indices=indices, sm_scale=sm_scale, out=out,
                          max_logits=max_logits, lse=lse, attn_sink=attn_sink,
                          topk_length=topk_length))
        t = torch.arange(q.shape[0], dtype=F32)[:, None]
        h = torch.arange(q.shape[1], dtype=F32)[None, :]
        out.copy_((t + h / 256)[..., None].expand(out.shape))
        lse.copy_(1000 * t + h)
        return "seesaw"

    monkeypatch.setattr(api, "launch", launch)
    return calls


def expected(b, s_q, h_q):
    t = torch.arange(b * s_q, dtype=F32).view(b, s_q, 1)
    h = torch.arange(h_q, dtype=F32).view(1, 1, h_q)
    return (t + h / 256).to(BF16), (1000 * t + h).transpose(1, 2)


@pytest.mark.parametrize("b", [5, 1])
@pytest.mark.parametrize("s_q", [1, 2, 3])
def test_tokens_are_rows_of_the_decode_and_reach_the_prefill_as_views(stand_in, s_q, b):
    h_q, topk, page = 128, 256, 16
    x = inputs(b, s_q, h_q, topk, page, seed=s_q, sink=True, lengths=[0, 1, 300, 256, 9][:b])
    out, lse = A.empty_outputs(x["q"])
    with RecordOps() as rec:
        S.launch_sparse_seesaw(x["q"], x["k_cache"], x["indices"], SCALE, False, out, lse,
                               *(x[k] for k in OPTIONAL))
    (c,) = stand_in
    T = b * s_q
    assert c["impl"] == "seesaw" and c["sm_scale"] == SCALE
    # views of the caller's tensors: same memory, the prefill's shapes
    assert c["q"].shape == (T, h_q, 576) and c["q"].data_ptr() == x["q"].data_ptr()
    assert c["indices"].shape == (T, 1, topk)
    assert c["indices"].data_ptr() == x["indices"].data_ptr()
    assert c["kv"].shape == (x["k_cache"].shape[0] * page, 1, 576)
    assert c["kv"].data_ptr() == x["k_cache"].data_ptr() and c["kv"].stride(0) == 576
    assert c["out"].data_ptr() == out.data_ptr() and c["out"].shape == (T, h_q, 512)
    assert c["attn_sink"] is x["attn_sink"]
    assert torch.equal(c["topk_length"], x["topk_length"].repeat_interleave(s_q))
    assert (c["topk_length"] is x["topk_length"]) == (s_q == 1)
    # the kernel reads token t's length at topk_length + t: a stride-0 view of one request's
    # length (what expanding b = 1 over s_q gives) would read past it
    assert c["topk_length"].stride() == (1,)
    # lse: the kernel writes it itself when s_q == 1, else a scratch transposed into it
    assert (c["lse"].data_ptr() == lse.data_ptr()) == (s_q == 1)
    assert c["max_logits"].stride() == c["lse"].stride() and c["max_logits"].shape == (T, h_q)
    want_out, want_lse = expected(b, s_q, h_q)
    assert torch.equal(out, want_out[..., None].expand(out.shape))
    assert torch.equal(lse, want_lse)
    read = [op for op in rec.ops if op.split(".")[0] + "." + op.split(".")[1] in HOST_READS]
    assert not read, f"host reads: {read}"


def test_unflattenable_or_misaligned_inputs_are_copied_aligned(stand_in):
    """q whose b and s_q do not merge (FlashMLA's test pads q), indices, sink and topk_length
    starting 4 bytes off a 16-byte boundary: the prefill gets aligned copies with the same
    values; out and lse that do not flatten get their values through scratch buffers."""
    b, s_q, h_q, topk = 3, 2, 64, 128
    x = inputs(b, s_q, h_q, topk, 16, seed=5, sink=True, lengths=[3, 4, 5])
    q = torch.zeros(4, 3, 65, 640, dtype=BF16)[:b, :s_q, :h_q, :576]
    q.copy_(x["q"])
    idx = torch.zeros(b * s_q * topk + 1, dtype=I32)[1:].view(b, s_q, topk)
    idx.copy_(x["indices"])
    sink = torch.zeros(h_q + 1)[1:]
    sink.copy_(x["attn_sink"])
    lengths = torch.zeros(b + 1, dtype=I32)[1:]
    lengths.copy_(x["topk_length"])
    out = torch.zeros(b, s_q + 1, h_q, 512, dtype=BF16)[:, 1:]
    lse = torch.zeros(b, h_q, s_q + 1)[:, :, :s_q]
    assert not api.rows_aligned(idx) and not api.rows_aligned(sink)
    S.launch_sparse_seesaw(q, x["k_cache"], idx, SCALE, False, out, lse, sink, lengths)
    (c,) = stand_in
    for name, want in (("q", x["q"].reshape(b * s_q, h_q, 576)),
                       ("indices", x["indices"].reshape(b * s_q, 1, topk)),
                       ("attn_sink", x["attn_sink"]),
                       ("topk_length", x["topk_length"].repeat_interleave(s_q))):
        assert api.rows_aligned(c[name]) and torch.equal(c[name], want), name
    want_out, want_lse = expected(b, s_q, h_q)
    assert torch.equal(out, want_out[..., None].expand(out.shape))
    assert torch.equal(lse, want_lse)
    # s_q == 1: a misaligned topk_length is copied too, an aligned one passed as it is
    S.launch_sparse_seesaw(q[:, :1], x["k_cache"], idx[:, :1], SCALE, False, out[:, :1],
                           lse[:, :, :1], None, lengths)
    assert stand_in[1]["topk_length"].data_ptr() != lengths.data_ptr()
    assert torch.equal(stand_in[1]["topk_length"], lengths)


# ------------------------------------------------------------------- which calls it takes

def call(b=2, s_q=1, h_q=64, topk=128, page=16, blocks=4, is_fp8=False, **kw):
    """A valid sparse call's support arguments (SUPPORT_ARGS) on CPU tensors."""
    width = 656 if is_fp8 else 576
    k = torch.zeros(blocks, page, 1, width, dtype=U8 if is_fp8 else BF16)
    c = dict(q=torch.zeros(b, s_q, h_q, 576, dtype=BF16), k_cache=k,
             indices=torch.zeros(b, s_q, topk, dtype=I32), is_fp8=is_fp8, attn_sink=None,
             topk_length=None, extra_k_cache=None, extra_indices=None, extra_topk_length=None)
    c.update(kw)
    return c


def padded_blocks():
    """FlashMLA's tests' cache: page + 1 token rows per block, the page sliced off."""
    return torch.zeros(4, 17, 1, 576, dtype=BF16)[:, :16]


UNSUPPORTED = {
    "fp8 cache": (dict(is_fp8=True), r"bf16 cache only \(seesaw-fp8 reads the FP8 one\)"),
    "extra cache": (dict(extra_k_cache=torch.zeros(2, 16, 1, 576, dtype=BF16),
                         extra_indices=torch.zeros(2, 1, 64, dtype=I32)),
                    "seesaw with an extra cache: its kernels store bf16 outputs only"),
    "h_q 48": (dict(h_q=48), r"h_q % 64 == 0 \(got h_q=48\)"),
    "padded block stride": (dict(k_cache=padded_blocks()), "evenly spaced"),
    "misaligned cache": (dict(k_cache=torch.zeros(4 * 16 * 576 + 4, dtype=BF16)[4:]
                              .view(4, 16, 1, 576)), "16-byte aligned"),
}


@pytest.mark.parametrize("what", list(UNSUPPORTED))
def test_what_it_cannot_run_falls_back(what):
    change, reason = UNSUPPORTED[what]
    c = call(**change)
    assert re.search(reason, A.sparse_unsupported_reason("seesaw", **c))
    # an FP8 cache is the split FP8 kernel's; everything else here is the naive kernel's
    assert A.select_sparse_impl("auto", c) == ("split-fp8" if what == "fp8 cache" else "naive")
    with pytest.raises(NotImplementedError, match=r"^impl: 'seesaw' cannot run this call: "):
        A.select_sparse_impl("seesaw", c)
    with pytest.raises(NotImplementedError, match=r"^impl: 'seesaw' cannot run this call: "):
        S.launch_sparse_seesaw(c["q"], c["k_cache"], c["indices"], SCALE, c["is_fp8"],
                               *A.empty_outputs(c["q"]), c["attn_sink"], c["topk_length"],
                               c["extra_k_cache"], c["extra_indices"], c["extra_topk_length"])


@pytest.mark.parametrize("kw", [dict(), dict(h_q=128, s_q=2, page=7, blocks=3),
                                dict(topk=2048, page=1, blocks=3000),
                                dict(attn_sink=torch.zeros(64),
                                     topk_length=torch.zeros(2, dtype=I32))],
                         ids=["plain", "h128_mtp_page7", "page1", "sink_topk_length"])
def test_what_it_runs_auto_takes(kw):
    c = call(**kw)
    assert A.sparse_unsupported_reason("seesaw", **c) is None
    assert A.select_sparse_impl("auto", c) == "seesaw" == A.select_sparse_impl("seesaw", c)


@pytest.mark.parametrize("h_q", [8, 16, 32])
def test_tensor_parallel_head_counts_run_padded_to_64_heads(emulated, h_q):
    """h_q 8 / 16 / 32 on the seesaw by name ("auto" takes the narrow-head kernel there), which
    runs the real heads in one 64-head block (head_padding.py); with attn_sink and topk_length,
    s_q 2 (lse through the transposing scratch)."""
    emulated(132)
    x = inputs(2, 2, h_q, 256, 16, seed=h_q, sink=True, lengths=[50, 256])
    call = {k: x[k] for k in ("q", "k_cache", "indices") + OPTIONAL}
    assert A.select_sparse_impl("auto", dict(call, is_fp8=False)) == "narrow"
    assert A.select_sparse_impl("seesaw", dict(call, is_fp8=False)) == "seesaw"
    want = sparse_decode_reference(x["q"], x["k_cache"], x["indices"], 512, SCALE,
                                   *(x[k] for k in OPTIONAL))
    out, lse = run_decode(x)
    assert out.shape == (2, 2, h_q, 512) and lse.shape == (2, h_q, 2)
    check((out, lse), want)


def test_built_and_named_in_the_api():
    assert A.built_impls() == ("naive", "seesaw", "seesaw-fp8", "split-fp8", "narrow")
    # the narrow-head kernel first (h_q <= 32 only, unpadded), then the seesaw
    assert A.PREFERENCE[:2] == ("narrow", "seesaw") and A.PREFERENCE[-1] == "naive"
    # the split FP8 kernel first (faster, attn_sink included), then the FP8 seesaw
    assert A.PREFERENCE.index("split-fp8") < A.PREFERENCE.index("seesaw-fp8") \
        < A.PREFERENCE.index("naive")
    assert A.launcher_module("seesaw") is S
    assert A.select_sparse_impl("auto") == "auto"     # no call yet: nothing to choose by
    for impl in ("pipe", "seesaw-tma"):
        with pytest.raises(NotImplementedError, match=rf"^impl: the sparse decode has no "
                                                      rf"'{impl}' kernel yet"):
            A.select_sparse_impl(impl)
        assert "no" in A.sparse_unsupported_reason(impl, **call())


@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_validation_chooses_before_the_device_check(device):
    """validate_sparse on CPU / meta tensors: an explicit "seesaw" it cannot run fails naming
    impl before the device check; one it can run reaches the device check."""
    c = call(is_fp8=True, page=64)
    c = {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in c.items()}
    args = dict(q=c["q"], k_cache=c["k_cache"], indices=c["indices"], is_fp8=True)
    with pytest.raises(NotImplementedError, match=r"^impl: 'seesaw' cannot run this call: .*FP8"):
        A.validate_sparse(**args, impl="seesaw")
    with pytest.raises(ValueError, match=r"^q: expected a CUDA tensor"):
        A.validate_sparse(**args, impl="auto")
    c = call()
    c = {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in c.items()}
    with pytest.raises(ValueError, match=r"^q: expected a CUDA tensor"):
        A.validate_sparse(c["q"], c["k_cache"], c["indices"], is_fp8=False, impl="seesaw")


def test_a_decode_step_of_32_requests_runs_as_two_topk_pieces():
    """b 32, h_q 128, topk 2048 (64 items on 132 SMs): the decode's threshold splits each row
    into two pieces of 8 pairs (measured 1.38x faster on the H200), which the prefill's would
    not; b 40 (80 items) cannot take two pieces per row in one wave."""
    from tle_kernels.tail_split import TailSplit, plan_tail_split

    assert plan_tail_split(32, 2, 2048, 132, 128,
                           min_speedup=S.SEESAW_DECODE_MIN_SPEEDUP) == TailSplit(0, 2)
    assert plan_tail_split(32, 2, 2048, 132, 128) is None
    assert plan_tail_split(40, 2, 2048, 132, 128, min_speedup=S.SEESAW_DECODE_MIN_SPEEDUP) is None
