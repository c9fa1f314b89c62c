"""MLA decode API on the CPU (tle_kernels/decode_api.py): validation before anything needs CUDA,
the scheduler metadata's fill / reuse / mismatch rules, the sparse arguments refused without
indices, the custom op's fake implementation, the impl table and the launch contract of the TLE
launchers; the fp32 reference's semantics against a per-row loop; the naive kernel and the combine
run by Triton's CPU interpreter, and compiled for sm_90a."""

from __future__ import annotations

import math
import types

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

import tle_kernels as K
from tle_kernels import decode_api as D
from tle_kernels.decode_reference import BAD_BLOCK, make_decode_inputs, mla_decode_reference

from .triton_cpu import compile_for_sm90, run_in_triton_interpreter

BF16, I32, F32 = torch.bfloat16, torch.int32, torch.float32


def args(b=2, s_q=1, h_q=16, h_kv=1, blocks=4, max_blocks=2, device="cpu"):
    q = torch.zeros(b, s_q, h_q, 576, dtype=BF16, device=device)
    k = torch.zeros(blocks, 64, h_kv, 576, dtype=BF16, device=device)
    bt = torch.zeros(b, max_blocks, dtype=I32, device=device)
    sl = torch.zeros(b, dtype=I32, device=device)
    return q, k, bt, sl


def call(q, k, bt, sl, meta=None, **kw):
    meta = meta if meta is not None else K.get_mla_metadata()[0]
    kw.setdefault("head_dim_v", 512)
    return K.flash_mla_with_kvcache(q, k, bt, sl, kw.pop("head_dim_v"), meta, **kw)


def on(x, device):
    """x on ``device`` with the same strides (``.to`` would make a meta view contiguous)."""
    return torch.empty_strided(x.shape, x.stride(), dtype=x.dtype, device=device)


# ---------------------------------------------------------------------------------------------
# Validation: each error names the argument; CPU and meta tensors reach every rule but the device
# ---------------------------------------------------------------------------------------------

def bad_cases():
    q, k, bt, sl = args()
    yield "q", TypeError, dict(q=q.float())
    yield "q", TypeError, dict(q="q")
    yield "q", ValueError, dict(q=q[0])                                           # rank
    yield "q", ValueError, dict(q=torch.zeros(2, 1, 16, 512, dtype=BF16))         # head dim
    yield "q", ValueError, dict(q=torch.zeros(2, 0, 16, 576, dtype=BF16))         # s_q = 0
    yield "q", ValueError, dict(q=torch.zeros(2, 1, 576, 16, dtype=BF16).transpose(2, 3))
    yield "k_cache", TypeError, dict(k_cache=k.half())
    yield "k_cache", ValueError, dict(k_cache=k[0])
    yield "k_cache", ValueError, dict(k_cache=torch.zeros(4, 32, 1, 576, dtype=BF16))  # page
    yield "k_cache", ValueError, dict(k_cache=torch.zeros(4, 64, 1, 512, dtype=BF16))  # head dim
    yield "k_cache", ValueError, dict(k_cache=torch.zeros(4, 64, 3, 576, dtype=BF16))  # 3 ∤ 16
    yield "k_cache", ValueError, dict(k_cache=torch.zeros(4, 64, 1, 1152, dtype=BF16)[..., ::2])
    yield "block_table", TypeError, dict(block_table=bt.long())
    yield "block_table", ValueError, dict(block_table=bt[0])
    yield "block_table", ValueError, dict(block_table=torch.zeros(3, 2, dtype=I32))  # batch
    yield "block_table", ValueError, dict(block_table=torch.zeros(2, 4, dtype=I32)[:, ::2])
    yield "cache_seqlens", TypeError, dict(cache_seqlens=sl.long())
    yield "cache_seqlens", ValueError, dict(cache_seqlens=torch.zeros(3, dtype=I32))
    yield "cache_seqlens", ValueError, dict(cache_seqlens=torch.zeros(2, 1, dtype=I32))
    yield "cache_seqlens", ValueError, dict(cache_seqlens=torch.zeros(4, dtype=I32)[::2])
    yield "head_dim_v", ValueError, dict(head_dim_v=576)
    yield "head_dim_v", ValueError, dict(head_dim_v=512.0)
    yield "softmax_scale", TypeError, dict(softmax_scale="0.1")
    yield "softmax_scale", ValueError, dict(softmax_scale=0.0)
    yield "softmax_scale", ValueError, dict(softmax_scale=-1.0)
    yield "softmax_scale", ValueError, dict(softmax_scale=float("inf"))
    yield "causal", TypeError, dict(causal=1)
    yield "num_splits", ValueError, dict(num_splits=4)
    yield "tile_scheduler_metadata", TypeError, dict(meta=object())
    yield "is_fp8_kvcache", TypeError, dict(is_fp8_kvcache=None)
    yield "impl", ValueError, dict(impl="flash")


@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_validation_names_the_argument(device):
    q, k, bt, sl = args(device=device)
    base = dict(q=q, k=k, bt=bt, sl=sl)
    rename = dict(q="q", k_cache="k", block_table="bt", cache_seqlens="sl")
    for name, exc, override in bad_cases():
        kw = dict(base)
        for key, v in override.items():
            kw[rename.get(key, key)] = on(v, device) if isinstance(v, torch.Tensor) else v
        with pytest.raises(exc, match=rf"^{name}\b"):
            call(**kw)


@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_validation_device_last(device):
    with pytest.raises(ValueError, match=r"^q: expected a CUDA tensor"):
        call(*args(device=device))
    # grouped heads, s_q up to 4, h_q not a power of two: all valid shapes (FlashMLA's test grid)
    for b, s_q, h_q, h_kv in [(1, 4, 3, 1), (6, 2, 126, 2), (2, 1, 9, 3), (1, 3, 128, 8)]:
        with pytest.raises(ValueError, match=r"^q: expected a CUDA tensor"):
            call(*args(b=b, s_q=s_q, h_q=h_q, h_kv=h_kv, device=device))


@pytest.mark.parametrize("name", ["attn_sink", "extra_k_cache", "extra_indices_in_kvcache",
                                  "topk_length", "extra_topk_length"])
def test_sparse_arguments_without_indices_are_refused(name):
    """Without indices the call is dense, which takes none of the sparse arguments (FlashMLA's
    rule); with indices it is the sparse decode (tests/test_sparse_decode_api.py)."""
    with pytest.raises(ValueError, match=rf"^{name}: belongs to the sparse decode"):
        call(*args(), **{name: torch.zeros(2, dtype=I32)})


def test_fp8_cache_is_not_implemented():
    with pytest.raises(NotImplementedError, match=r"^is_fp8_kvcache: .*FP8"):
        call(*args(), is_fp8_kvcache=True)


def test_explicit_impl_that_does_not_exist_is_rejected_before_launch(monkeypatch):
    monkeypatch.setitem(D.LAUNCHERS, "seesaw", ("no_such_launcher", "run", "why"))
    monkeypatch.setitem(D.LAUNCHERS, "seesaw-tma", ("no_such_launcher", "run", "why"))
    with pytest.raises(ValueError, match=r"impl='seesaw' cannot run.*no_such_launcher.py does not exist"):
        call(*args(), impl="seesaw")
    assert D.select_impl("auto", 1, 128, 1) in ("pipe", "naive")


# ---------------------------------------------------------------------------------------------
# Scheduler metadata
# ---------------------------------------------------------------------------------------------

def test_get_mla_metadata_is_empty_and_fresh():
    a, none = K.get_mla_metadata()
    b, _ = K.get_mla_metadata(torch.zeros(3, dtype=I32), 128, 1)   # the older interface's arguments
    assert none is None and a is not b
    assert not a.have_initialized and a.config is None and a.n_split is None


@pytest.mark.parametrize("b,s_q,h_q,h_kv,n_split", [
    (128, 1, 128, 1, 1),     # 256 items: already two waves
    (64, 2, 128, 1, 1),      # 256 items
    (128, 1, 16, 1, 1),      # 128 items: one wave, 4 SMs idle, no split
    (1, 1, 128, 1, 64),      # 2 items: 66 would fit, capped at MAX_SPLIT
    (7, 1, 128, 1, 9),       # 14 items: 9 splits = 126 programs
    (1, 2, 16, 8, 16),       # 8 kv heads x 1 block of 4 rows: 8 items, 16 splits
])
def test_n_split_from_shapes(b, s_q, h_q, h_kv, n_split):
    meta, _ = K.get_mla_metadata()
    q, k, _, _ = args(b=b, s_q=s_q, h_q=h_q, h_kv=h_kv)
    meta.fill(D.DecodeSchedMeta.Config.of(q, k, False), 132)
    assert meta.have_initialized and meta.n_split == n_split and meta.sm_count == 132
    items = b * h_kv * D.row_blocks(s_q, h_q, h_kv)
    assert meta.n_split == 1 or items * meta.n_split <= 132      # never more than one wave


def test_n_split_values():
    assert D.row_blocks(1, 128, 1) == 2 and D.row_blocks(2, 128, 1) == 4
    assert D.row_blocks(1, 16, 8) == 1 and D.row_blocks(4, 126, 2) == 4
    assert D.choose_n_split(1, 1, 2, 132) == 64
    assert D.choose_n_split(7, 1, 2, 132) == 9
    assert D.choose_n_split(1, 8, 1, 132) == 16
    assert D.choose_n_split(66, 1, 2, 132) == 1
    assert D.choose_n_split(65, 1, 2, 132) == 1      # 130 items: 132 // 130 = 1
    assert D.choose_n_split(1, 1, 1, 132, max_split=8) == 8


def test_metadata_reuse_and_mismatch():
    q, k, bt, sl = args(b=2, s_q=2, h_q=16)
    meta, _ = K.get_mla_metadata()
    meta.fill(D.DecodeSchedMeta.Config.of(q, k, True), 132)
    filled = (meta.config, meta.n_split)
    # same shapes and causal: passes the metadata check, stops at the device (last) check
    with pytest.raises(ValueError, match=r"^q: expected a CUDA tensor"):
        call(q, k, bt, sl, meta, causal=True)
    # other cache contents, block table width and page count are not part of the metadata
    with pytest.raises(ValueError, match=r"^q: expected a CUDA tensor"):
        call(q, torch.zeros(9, 64, 1, 576, dtype=BF16), torch.zeros(2, 7, dtype=I32), sl, meta,
             causal=True)
    for what, kw in [("b 2 -> 3", dict(q=torch.zeros(3, 2, 16, 576, dtype=BF16),
                                       bt=torch.zeros(3, 2, dtype=I32), sl=torch.zeros(3, dtype=I32))),
                     ("s_q 2 -> 1", dict(q=torch.zeros(2, 1, 16, 576, dtype=BF16))),
                     ("h_q 16 -> 32", dict(q=torch.zeros(2, 2, 32, 576, dtype=BF16))),
                     ("h_kv 1 -> 2", dict(k=torch.zeros(4, 64, 2, 576, dtype=BF16))),
                     ("causal True -> False", dict(causal=False))]:
        full = dict(q=q, k=k, bt=bt, sl=sl, causal=True)
        full.update(kw)
        with pytest.raises(ValueError, match=rf"^tile_scheduler_metadata: .*{what}.*same shapes"):
            call(full.pop("q"), full.pop("k"), full.pop("bt"), full.pop("sl"), meta, **full)
    assert (meta.config, meta.n_split) == filled


def test_failed_call_leaves_metadata_empty():
    meta, _ = K.get_mla_metadata()
    for kw in (dict(head_dim_v=256), dict(indices=torch.zeros(1)), dict()):   # last: CPU device
        with pytest.raises((ValueError, NotImplementedError)):
            call(*args(), meta, **kw)
        assert not meta.have_initialized and meta.config is None


# ---------------------------------------------------------------------------------------------
# The custom op's fake implementation, the impl table and the launch contract
# ---------------------------------------------------------------------------------------------

def test_fake_implementation_shapes():
    with FakeTensorMode():
        q, k, bt, sl = args(b=3, s_q=2, h_q=128, h_kv=1, blocks=10, device="cuda")
        out, lse = torch.ops.tle_kernels.mla_decode(q, k, bt, sl, 0.04, True, 4, "naive")
        assert out.shape == (3, 2, 128, 512) and out.dtype == BF16 and out.device.type == "cuda"
        assert lse.shape == (3, 128, 2) and lse.dtype == F32
        q, k, bt, sl = args(b=5, s_q=4, h_q=9, h_kv=3, device="cuda")
        meta, _ = K.get_mla_metadata()
        meta.fill(D.DecodeSchedMeta.Config.of(q, k, False), 132)   # no CUDA here to count SMs
        out, lse = call(q, k, bt, sl, meta)
        assert out.shape == (5, 4, 9, 512) and out.dtype == BF16
        assert lse.shape == (5, 9, 4) and lse.dtype == F32


def test_op_schema():
    schema = str(torch.ops.tle_kernels.mla_decode.default._schema)
    assert "float softmax_scale" in schema and "bool causal" in schema and "str impl" in schema


def test_impl_table(monkeypatch):
    # every implementation but the TMA producer (opt-in until measured on a GPU) is in "auto"
    assert D.PREFERENCE[-1] == "naive" and set(D.PREFERENCE) == set(D.IMPLS) - {"seesaw-tma"}
    assert "naive" in D.supported_impls(1, 1, 1)
    fake = types.SimpleNamespace(why=lambda s_q, h_q, h_kv: None if h_q % 64 == 0 else "h_q % 64")
    monkeypatch.setattr(D, "launcher_module", lambda impl: fake if impl == "pipe" else None)
    monkeypatch.setitem(D.LAUNCHERS, "pipe", ("mod", "run", "why"))
    assert D.supported_impls(1, 128, 1) == ["naive", "pipe"]
    assert D.supported_impls(1, 16, 1) == ["naive"]
    assert D.select_impl("auto", 1, 128, 1) == "pipe"
    assert D.select_impl("auto", 1, 16, 1) == "naive"
    with pytest.raises(ValueError, match=r"impl='pipe' cannot run this call: h_q % 64"):
        D.select_impl("pipe", 1, 16, 1)
    with pytest.raises(ValueError, match=r"impl='seesaw'.*does not exist"):
        D.select_impl("seesaw", 1, 128, 1)
    # rows not 16-byte aligned: "auto" falls back to the naive kernel, an explicit TLE one refuses
    assert D.select_impl("auto", 1, 128, 1, aligned=False) == "naive"
    with pytest.raises(ValueError, match=r"impl='pipe' cannot run this call: .*16-byte aligned"):
        D.select_impl("pipe", 1, 128, 1, aligned=False)


@pytest.mark.parametrize("b,s_q,h_q,h_kv,sms,split", [
    (8, 1, 128, 1, 132, True),     # 16 items of 2 row blocks each
    (4, 1, 128, 1, 132, True),     # 8 items
    (2, 1, 128, 1, 132, True),     # 4 items: the smallest batch taken
    (1, 1, 128, 1, 132, False),    # one request: the seesaw ran ahead there
    (1, 2, 128, 1, 132, False),    # 4 items of one request
    (2, 2, 128, 1, 132, True),
    (3, 1, 64, 1, 132, False),     # 3 items (one row block each: never split)
    (59, 1, 128, 1, 132, True),    # 118 items: one seesaw program per request fills 59 / 66
    (60, 1, 128, 1, 132, False),   # 60 / 66 >= 0.9: the seesaw runs one program per request
    (64, 1, 128, 1, 132, False),   # (where it ran ahead of the split pipe decode)
    (66, 1, 128, 1, 132, False),   # 132 items: a wave
    (128, 1, 128, 1, 132, False),
    (4, 2, 128, 1, 132, True),     # 4 row blocks a request
    (8, 2, 64, 1, 132, True),      # 128 rows: 2 row blocks
    (32, 1, 16, 1, 132, False),    # one row block a request (auto_prefers_few_rows takes it)
    (16, 1, 128, 2, 132, False),   # 64 rows per kv head: one row block
    (8, 1, 128, 1, 16, False),     # 16 items on a 16-SM part: a wave
])
def test_auto_takes_the_split_pipe_decode_at_small_batches(b, s_q, h_q, h_kv, sms, split):
    assert D.auto_prefers_split(b, s_q, h_q, h_kv, sms) is split
    if "pipe" in D.supported_impls(s_q, h_q, h_kv) and "seesaw" in D.supported_impls(s_q, h_q, h_kv):
        few = D.auto_prefers_few_rows(b, s_q, h_q, h_kv)
        assert D.select_impl("auto", s_q, h_q, h_kv, b=b, sms=sms) == ("pipe" if split or few
                                                                        else "seesaw")
        # without the batch and the SM count "auto" keeps PREFERENCE's order
        assert D.select_impl("auto", s_q, h_q, h_kv) == "seesaw"
        # rows not 16-byte aligned: no TLE kernel, split or not
        assert D.select_impl("auto", s_q, h_q, h_kv, aligned=False, b=b, sms=sms) == "naive"
        # an explicit impl is what runs
        assert D.select_impl("seesaw", s_q, h_q, h_kv, b=b, sms=sms) == "seesaw"


@pytest.mark.parametrize("b, s_q, h_q, h_kv, few", [
    (128, 1, 16, 1, True),         # 16 rows of a 64-row block
    (128, 1, 32, 1, True),
    (128, 2, 16, 1, True),         # 32 rows
    (32, 1, 16, 1, True),          # the least batch taken
    (31, 1, 16, 1, False),
    (128, 1, 64, 1, False),        # 64 rows: the seesaw
    (128, 2, 32, 1, False),
    (128, 1, 64, 2, True),         # 32 rows per kv head
    (128, 1, 128, 1, False),
])
def test_auto_takes_the_pipe_decode_at_few_rows_per_kv_head(b, s_q, h_q, h_kv, few):
    """At 32 or more requests of at most 32 query rows per kv head "auto" runs the pipe decode
    (it ran ahead of the seesaw there), unsplit once the requests fill the SMs; elsewhere the
    seesaw stays, and an explicit impl or unaligned rows are what they were."""
    assert D.auto_prefers_few_rows(b, s_q, h_q, h_kv) is few
    if not {"pipe", "seesaw"} <= set(D.supported_impls(s_q, h_q, h_kv)):
        return
    want = "pipe" if few or D.auto_prefers_split(b, s_q, h_q, h_kv, 132) else "seesaw"
    assert D.select_impl("auto", s_q, h_q, h_kv, b=b, sms=132) == want
    assert D.select_impl("auto", s_q, h_q, h_kv) == "seesaw"      # no batch: PREFERENCE
    assert D.select_impl("seesaw", s_q, h_q, h_kv, b=b, sms=132) == "seesaw"
    assert D.select_impl("auto", s_q, h_q, h_kv, aligned=False, b=b, sms=132) == "naive"


def test_auto_takes_the_split_pipe_decode_only_where_the_seesaw_would_balance(monkeypatch):
    """Over batches 1-300, s_q 1-4, h_q 16-128, h_kv 1-2 and SM counts 16-160: wherever "auto"
    prefers the split pipe decode, the seesaw would have run its balanced schedule (never in
    place of one seesaw program per request) on fewer items than the SMs."""
    from tle_kernels.mla_decode_launch import parts_for, use_balance

    monkeypatch.delenv("TLE_DECODE_BALANCE", raising=False)
    taken = 0
    for sms in (16, 78, 132, 160):
        for h_kv in (1, 2):
            for h_q in (16, 64, 128):
                for s_q in (1, 2, 4):
                    for b in range(1, 301):
                        if not D.auto_prefers_split(b, s_q, h_q, h_kv, sms):
                            continue
                        taken += 1
                        blocks = D.row_blocks(s_q, h_q, h_kv)
                        assert blocks >= 2 and b >= D.SPLIT_MIN_REQUESTS
                        assert D.SPLIT_MIN_ITEMS <= b * h_kv * blocks < sms
                        assert use_balance(None, b, parts_for(b, s_q, h_q, h_kv, sms))
    assert taken > 0


def test_rows_aligned():
    big = torch.zeros(2, 1, 4, 600, dtype=BF16)
    assert D.rows_aligned(big[..., :576], torch.zeros(3, 64, 1, 576, dtype=BF16))
    assert not D.rows_aligned(big[..., 1:577])                 # rows start 2 bytes in
    assert not D.rows_aligned(torch.zeros(2, 1, 4, 580, dtype=BF16)[..., :576])  # 1160-byte rows


@pytest.mark.parametrize("n_split", [1, 5])
def test_launch_contract_of_a_tle_launcher(monkeypatch, n_split):
    """A TLE launcher gets the outputs, and with n_split > 1 fresh partial buffers of the combine's
    layout, which the combine then merges into the outputs."""
    calls = []

    def run(q, k_cache, block_table, cache_seqlens, sm_scale, causal, n, out, lse, o_part, lse_part):
        calls.append(("run", n, sm_scale, causal, o_part, lse_part, out, lse))

    fake = types.SimpleNamespace(run=run, why=lambda *a: None)
    monkeypatch.setattr(D, "launcher_module", lambda impl: fake)
    monkeypatch.setitem(D.LAUNCHERS, "pipe", ("mod", "run", "why"))
    import tle_kernels.mla_decode_combine as C

    monkeypatch.setattr(C, "mla_decode_combine", lambda *a: calls.append(("combine",) + a))
    q, k, bt, sl = args(b=3, s_q=2, h_q=16, h_kv=1)
    out, lse = D.empty_outputs(q)
    assert D.launch("pipe", q, k, bt, sl, 0.25, True, n_split, out, lse) == "pipe"
    (_, n, scale, causal, o_part, lse_part, o, l) = calls[0]
    assert (n, scale, causal) == (n_split, 0.25, True) and o is out and l is lse
    if n_split == 1:
        assert o_part is None and lse_part is None and len(calls) == 1
    else:
        assert o_part.shape == (3, n_split, 2, 16, 512) and o_part.dtype == F32
        assert lse_part.shape == (3, n_split, 2, 16) and lse_part.dtype == F32
        assert calls[1] == ("combine", o_part, lse_part, out, lse)


# ---------------------------------------------------------------------------------------------
# The reference's semantics (tiny CPU cases against a per-row loop written out by hand)
# ---------------------------------------------------------------------------------------------

def loop_reference(q, k_cache, bt, seqlens, causal, scale):
    b, s_q, h_q, _ = q.shape
    h_kv = k_cache.shape[2]
    out = torch.zeros(b, s_q, h_q, 512, dtype=torch.float64)
    lse = torch.full((b, h_q, s_q), math.inf, dtype=torch.float64)
    for i in range(b):
        n = int(seqlens[i])
        for j in range(s_q):
            seen = min(n, n - s_q + j + 1) if causal else n
            if seen <= 0:
                continue
            for h in range(h_q):
                g = h // (h_q // h_kv)
                rows = torch.stack([k_cache[int(bt[i, t // 64]), t % 64, g] for t in range(seen)])
                rows = rows.double()
                logits = rows @ q[i, j, h].double() * scale
                lse[i, h, j] = torch.logsumexp(logits, 0)
                out[i, j, h] = torch.softmax(logits, 0) @ rows[:, :512]
    return out, lse


def assert_matches(got, want):
    out, lse = got
    w_out, w_lse = want
    assert out.dtype == F32 and lse.dtype == F32
    assert torch.allclose(out.double(), w_out, atol=1e-5, rtol=1e-5)
    fin = torch.isfinite(w_lse)
    assert torch.equal(lse[~fin].double(), w_lse[~fin])
    assert torch.allclose(lse[fin].double(), w_lse[fin], atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("b,s_q,h_q,h_kv,seqlens,causal", [
    (3, 1, 4, 1, [0, 1, 70], False),        # an empty request, a one-token one, two pages
    (2, 2, 4, 1, [1, 65], True),            # causal: the first query of request 0 sees nothing
    (2, 3, 6, 2, [2, 130], True),           # grouped heads (3 per kv head), causal, s_q = 3
    (2, 4, 8, 8, [3, 64], False),           # one head per kv head
])
def test_reference_against_a_loop(b, s_q, h_q, h_kv, seqlens, causal):
    q, k, bt, sl = make_decode_inputs(b, s_q, h_q, h_kv, seqlens, device="cpu", seed=b + s_q)
    got = mla_decode_reference(q, k, bt, sl, causal=causal)
    assert_matches(got, loop_reference(q, k, bt, sl, causal, 576 ** -0.5))
    assert not torch.isnan(got[0]).any()            # the NaN poison past seqlen is never read


def test_reference_empty_rows_and_scale():
    q, k, bt, sl = make_decode_inputs(2, 2, 4, 1, [0, 1], device="cpu", seed=3)
    out, lse = mla_decode_reference(q, k, bt, sl, causal=True)
    assert torch.all(out[0] == 0) and torch.all(lse[0] == math.inf)           # empty request
    assert torch.all(out[1, 0] == 0) and torch.all(lse[1, :, 0] == math.inf)  # causal row, no token
    # one token: out is that token's V exactly, lse its scaled score
    row = k[int(bt[1, 0]), 0, 0].float()
    assert torch.allclose(out[1, 1], row[:512].expand(4, 512))
    assert torch.allclose(lse[1, :, 1], q[1, 1].float() @ row * 576 ** -0.5)
    out2, lse2 = mla_decode_reference(q, k, bt, sl, causal=True, softmax_scale=0.5)
    assert torch.allclose(lse2[1, :, 1], q[1, 1].float() @ row * 0.5)


def test_reference_grouped_heads_use_their_kv_head():
    q, k, bt, sl = make_decode_inputs(1, 1, 4, 2, [5], device="cpu", seed=4)
    out, lse = mla_decode_reference(q, k, bt, sl)
    k0 = k.clone()
    k0[:, :, 1] = 0        # kv head 1 changed: heads 0 and 1 (kv head 0) must not move
    out0, lse0 = mla_decode_reference(q, k0, bt, sl)
    assert torch.equal(out[:, :, :2], out0[:, :, :2]) and torch.equal(lse[:, :2], lse0[:, :2])
    assert not torch.equal(out[:, :, 2:], out0[:, :, 2:])


def test_make_decode_inputs_layout_and_poison():
    q, k, bt, sl = make_decode_inputs(3, 2, 16, 1, [0, 63, 130], device="cpu", seed=5)
    assert q.shape == (3, 2, 16, 576) and q.dtype == BF16
    assert k.shape == (9, 64, 1, 576) and bt.shape == (3, 3) and bt.dtype == I32
    assert sl.tolist() == [0, 63, 130]
    assert bt[0].tolist() == [BAD_BLOCK] * 3
    assert bt[1, 1:].tolist() == [BAD_BLOCK] * 2 and bt[2, 2] != BAD_BLOCK
    used = [int(bt[1, 0]), int(bt[2, 0]), int(bt[2, 1]), int(bt[2, 2])]
    assert not torch.isnan(k[used[0], :63]).any() and torch.isnan(k[used[0], 63:]).all()
    assert not torch.isnan(k[used[1]]).any() and not torch.isnan(k[used[3], :2]).any()
    assert torch.isnan(k[used[3], 2:]).all()
    assert int(torch.isnan(k[:, :, 0, 0]).sum()) == 9 * 64 - (63 + 130)       # exactly the unused
    q2, k2, bt2, _ = make_decode_inputs(3, 2, 16, 1, [0, 63, 130], device="cpu", seed=5,
                                        poison=False)
    assert not torch.isnan(k2).any()
    pages = bt2.flatten().tolist()                 # every page owned once, in a shuffled order
    assert sorted(pages) == list(range(9)) and pages != list(range(9))
    assert [pages[3], pages[6], pages[7], pages[8]] == used
    assert torch.equal(q, q2)


# ---------------------------------------------------------------------------------------------
# The naive kernel and the combine, run by Triton's CPU interpreter (fp32 data: the interpreter
# computes with numpy, which has no bf16; bf16 accuracy is the GPU tests' job)
# ---------------------------------------------------------------------------------------------

INTERPRETED = r'''
import math, os, torch
from tle_kernels.mla_decode_naive import mla_decode_naive
from tle_kernels.mla_decode_combine import mla_decode_combine
from tle_kernels.decode_reference import make_decode_inputs, mla_decode_reference
nan = float("nan")
for b, s_q, h_q, h_kv, seqlens, causal, n_split in [
        (3, 2, 16, 1, [0, 70, 130], True, 1),      # empty request, causal, partial last page
        (3, 2, 16, 1, [0, 70, 130], True, 3),      # the same split in 3 (empty splits included)
        (2, 1, 6, 2, [1, 64], False, 1),           # grouped heads, a full page
        (2, 4, 3, 1, [2, 200], True, 4),           # s_q = 4: causal rows with no token
        (1, 1, 80, 1, [129], False, 2)]:           # two row blocks (64 + 16 rows)
    q, k, bt, sl = make_decode_inputs(b, s_q, h_q, h_kv, seqlens, device="cpu", seed=b * s_q + h_q)
    q, k = q.float(), k.float()
    scale = 576 ** -0.5
    want_out, want_lse = mla_decode_reference(q, k, bt, sl, causal=causal)
    out = torch.full((b, s_q, h_q, 512), nan)
    lse = torch.full((b, h_q, s_q), nan)
    if n_split == 1:
        mla_decode_naive(q, k, bt, sl, scale, causal, out, lse)
    else:
        o_part = torch.full((b, n_split, s_q, h_q, 512), nan)
        lse_part = torch.full((b, n_split, s_q, h_q), nan)
        mla_decode_naive(q, k, bt, sl, scale, causal, o_part, lse_part, n_split=n_split)
        assert not torch.isnan(lse_part).any()
        empty = lse_part == -math.inf
        assert empty[0].all() or seqlens[0] > 0     # no token in a request: every split empty
        assert not torch.isnan(o_part[~empty]).any()
        o_part[empty] = nan                        # an empty split's o_part must not be read
        # the column block combine_blocks picks for these few rows (64) and the pipelined split
        # loop combine_stages picks for them, then forced: whole rows (512) and 128 columns, and
        # the plain loop (stages 0: each partial's load masked by its lse); each run into fresh
        # NaN outputs
        for forced, stages in ((None, None), ("512", "0"), ("128", "4"), (None, "0")):
            if forced:
                os.environ["TLE_COMBINE_BLOCK_D"] = forced
            if stages:
                os.environ["TLE_COMBINE_STAGES"] = stages
            out.fill_(nan)
            lse.fill_(nan)
            mla_decode_combine(o_part, lse_part, out, lse)
            os.environ.pop("TLE_COMBINE_BLOCK_D", None)
            os.environ.pop("TLE_COMBINE_STAGES", None)
            case = (b, s_q, h_q, h_kv, seqlens, causal, n_split, forced, stages)
            assert torch.allclose(out, want_out, atol=1e-5), case
            fin = torch.isfinite(want_lse)
            assert torch.equal(lse[~fin], want_lse[~fin]), case
            assert torch.allclose(lse[fin], want_lse[fin], atol=1e-5), case
        continue
    case = (b, s_q, h_q, h_kv, seqlens, causal, n_split)
    assert torch.allclose(out, want_out, atol=1e-5), case
    fin = torch.isfinite(want_lse)
    assert torch.equal(lse[~fin], want_lse[~fin]), case
    assert torch.allclose(lse[fin], want_lse[fin], atol=1e-5), case
print("INTERPRETED OK")
'''


def test_naive_and_combine_in_triton_interpreter(tmp_path):
    run_in_triton_interpreter(INTERPRETED, tmp_path, timeout=300)


@pytest.mark.parametrize("block_m,causal,split", [(64, False, False), (16, True, True)])
def test_naive_kernel_compiles_for_sm90(block_m, causal, split):
    from tle_kernels import mla_decode_naive as N

    ints = ["stride_q_b", "stride_q_s", "stride_q_h", "stride_k_blk", "stride_k_tok", "stride_k_h",
            "stride_bt_b", "stride_o_b", "stride_o_split", "stride_o_s", "stride_o_h", "stride_l_b",
            "stride_l_split", "stride_l_s", "stride_l_h", "s_q", "h_kv", "group"]
    sig = {"q_ptr": "*bf16", "k_ptr": "*bf16", "bt_ptr": "*i32", "seqlens_ptr": "*i32",
           "out_ptr": "*fp32" if split else "*bf16", "lse_ptr": "*fp32",
           **{n: "i32" for n in ints}, "sm_scale": "fp32"}
    cx = dict(D_MAIN=512, D_TAIL=64, BLOCK_M=block_m, PAGE=64, CAUSAL=causal, SPLIT=split)
    k = compile_for_sm90(N.mla_decode_naive_kernel, sig, cx, num_warps=N.num_warps_for(block_m),
                 num_stages=N.NUM_STAGES)
    assert "mla_decode_naive_kernel" in k.asm["ptx"]


def test_combine_kernel_compiles_for_sm90():
    from tle_kernels import mla_decode_combine as C

    ints = ["stride_op_b", "stride_op_split", "stride_op_s", "stride_op_h", "stride_lp_b",
            "stride_lp_split", "stride_lp_s", "stride_lp_h", "stride_o_b", "stride_o_s", "stride_o_h",
            "stride_l_b", "stride_l_h", "stride_l_s", "s_q", "h_q", "n_split"]
    sig = {"o_part_ptr": "*fp32", "lse_part_ptr": "*fp32", "out_ptr": "*bf16", "lse_ptr": "*fp32",
           **{n: "i32" for n in ints}}
    for block_d, stages in ((512, 4), (64, 4), (64, 0)):
        k = compile_for_sm90(C.mla_decode_combine_kernel, sig,
                             dict(D_V=512, BLOCK_H=16, BLOCK_D=block_d, SPLIT_P2=64, PDL=True,
                                  STAGES=stages), num_warps=4)
        ptx = k.asm["ptx"]
        assert "mla_decode_combine_kernel" in ptx
        # the split loop software-pipelined: partials stream in by cp.async, several in flight
        # (an lse-masked load would wait for its lse first and cannot be issued ahead)
        assert ("cp.async" in ptx) == (stages > 1), (block_d, stages)


def test_combine_blocks_spread_small_batches_over_the_sms(monkeypatch):
    """A combine of few rows splits the 512 output columns so that the launch has about two
    programs per SM (a batch of one request at h_q 128: 8 head blocks x 8 column blocks of 64);
    a full batch keeps whole rows; TLE_COMBINE_BLOCK_D forces the block and refuses other
    widths."""
    from tle_kernels import mla_decode_combine as C

    monkeypatch.delenv("TLE_COMBINE_BLOCK_D", raising=False)
    monkeypatch.setattr(C, "sm_count", lambda device: 132)
    cuda = torch.device("cuda", 0)
    assert C.combine_blocks(1, 128, cuda) == (16, 64)
    assert C.combine_blocks(8, 128, cuda) == (16, 64)         # 64 programs x 4 < 264
    assert C.combine_blocks(9, 128, cuda) == (16, 128)        # 72 programs x 4 >= 264
    assert C.combine_blocks(2, 16, cuda) == (16, 64)          # never narrower than 64
    assert C.combine_blocks(33, 128, cuda) == (16, 512)       # 264 programs: whole rows
    assert C.combine_blocks(64, 128, cuda) == (16, 512)
    assert C.combine_blocks(1, 3, cuda) == (4, 64)
    monkeypatch.setattr(C, "sm_count", lambda device: 16)
    assert C.combine_blocks(1, 128, cuda) == (16, 128)        # 16 SMs: 8 x 4 = 32 programs
    monkeypatch.setenv("TLE_COMBINE_BLOCK_D", "512")
    assert C.combine_blocks(1, 128, cuda) == (16, 512)
    monkeypatch.setenv("TLE_COMBINE_BLOCK_D", "96")
    with pytest.raises(ValueError, match="TLE_COMBINE_BLOCK_D"):
        C.combine_blocks(1, 128, cuda)


def test_combine_pipelines_its_split_loop_under_one_program_per_sm(monkeypatch):
    """Fewer combine programs than SMs (a batch of one or two requests): the split loop runs
    pipelined (PIPELINED_STAGES partials in flight); one program per SM or more: the plain loop
    (0); TLE_COMBINE_STAGES forces either."""
    from tle_kernels import mla_decode_combine as C

    monkeypatch.delenv("TLE_COMBINE_STAGES", raising=False)
    monkeypatch.setattr(C, "sm_count", lambda device: 132)
    cuda = torch.device("cuda", 0)
    assert C.combine_stages(64, cuda) == C.PIPELINED_STAGES == 4   # b 1, h_q 128: 8 x 8
    assert C.combine_stages(128, cuda) == 4                         # b 2
    assert C.combine_stages(132, cuda) == 0
    assert C.combine_stages(256, cuda) == 0                         # b 4
    monkeypatch.setattr(C, "sm_count", lambda device: 16)
    assert C.combine_stages(64, cuda) == 0
    monkeypatch.setenv("TLE_COMBINE_STAGES", "0")
    monkeypatch.setattr(C, "sm_count", lambda device: 132)
    assert C.combine_stages(64, cuda) == 0
    for bad in ("-1", "four", "9"):
        monkeypatch.setenv("TLE_COMBINE_STAGES", bad)
        with pytest.raises(ValueError, match="TLE_COMBINE_STAGES"):
            C.combine_stages(64, cuda)


def test_flash_mla_sparse_fwd_is_the_prefill():
    import inspect

    params = list(inspect.signature(K.flash_mla_sparse_fwd).parameters)
    assert params[:7] == ["q", "kv", "indices", "sm_scale", "d_v", "attn_sink", "topk_length"]
    q = torch.zeros(4, 64, 576, dtype=BF16)
    with pytest.raises(ValueError, match=r"^q: expected a CUDA tensor"):   # the prefill's validation
        K.flash_mla_sparse_fwd(q, torch.zeros(10, 1, 576, dtype=BF16), torch.zeros(4, 1, 64, dtype=I32),
                               0.1)
