"""The SparseMLA prefill at head counts that are not a multiple of 64 (tle_kernels/head_padding.py,
tle_kernels/api.py) on the CPU:

- the rule: the seesaw runs h_q padded to the next multiple of 64; "auto" takes it where that is
  at most 2x the naive kernel's head rows (h_q > 16), else the naive kernel; the support and
  selection functions say so;
- the math: ``api.launch`` with the seesaw kernels replaced by their CPU emulations
  (tle_compiler/testing/emulator.py) at h_q 8 / 16 / 32 (and 48, 96, d_qk 512), plain, with
  attn_sink, with topk_length and with both, against the fp32 reference on hostile inputs
  (invalid indices of every kind, a row without a valid index, sinks of +-inf); a launch under
  one wave split into topk pieces; the kernels see 64-head q with zero padded heads and -inf
  padded sinks, and nothing of a padded head reaches the caller's outputs;
- the copies are device ops only (no host reads: a call captures in a CUDA graph), and the
  custom op's fake implementation and the batched layout give h_q-head outputs;
- the sparse decode keeps its own rule (8 / 16 / 32 padded, everything else refused).
"""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

import tle_kernels as K  # noqa: E402
import tle_kernels.sparse_mla_seesaw as plain_mod  # noqa: E402
import tle_kernels.sparse_mla_seesaw_d512 as d512_mod  # noqa: E402
import tle_kernels.sparse_mla_seesaw_sink as sink_mod  # noqa: E402
import tle_kernels.sparse_mla_seesaw_topk_length as length_mod  # noqa: E402
from tle_kernels import api, head_padding as P  # noqa: E402
from tle_kernels.reference import sparse_mla_reference  # noqa: E402

KDIR = Path(__file__).resolve().parent.parent / "tle_kernels"
BF16, I32, F32 = torch.bfloat16, torch.int32, torch.float32
BAD = (-1, -2**31, 2**31 - 1)  # and s_kv


# ----------------------------------------------------------------------------------- the rule

@pytest.mark.parametrize("h_q,heads,naive_rows,auto", [
    (1, 64, 16, "naive"), (8, 64, 16, "naive"), (16, 64, 16, "naive"),
    (17, 64, 32, "seesaw"), (24, 64, 32, "seesaw"), (32, 64, 32, "seesaw"),
    (48, 64, 64, "seesaw"), (64, 64, 64, "seesaw"), (96, 128, 128, "seesaw"),
    (128, 128, 128, "seesaw"), (160, 192, 192, "seesaw"),
])
def test_padding_rule_and_what_auto_takes(h_q, heads, naive_rows, auto):
    assert P.padded_heads(h_q) == heads == api.kernel_heads("seesaw", h_q)
    assert api.kernel_heads("naive", h_q) == h_q == api.kernel_heads("pipe", h_q)
    assert P.naive_head_rows(h_q) == naive_rows
    assert P.auto_pads(h_q) == (heads <= 2 * naive_rows)
    assert api.unsupported_reason("seesaw", h_q, 576, 2048, True, True) is None
    assert api.select_impl("auto", h_q, 576, 2048) == auto
    assert api.select_impl("seesaw", h_q, 576, 2048) == "seesaw"  # on request at any h_q
    passes = api.auto_passes_over("seesaw", h_q)
    assert (passes is None) == (auto == "seesaw")
    if passes is not None:
        assert passes == (f"seesaw would run h_q={h_q} padded to 64 heads, 4x the head rows of "
                          f"the naive kernel, which is about as fast then")


def test_the_pipe_kernel_does_not_pad():
    assert "h_q % 64 == 0 (got h_q=32)" in api.unsupported_reason("pipe", 32, 576, 576)
    assert api.select_impl("auto", 32, 576, 576) == "naive"  # topk 576: not the seesaw's
    with pytest.raises(ValueError, match=r"impl='pipe' cannot run this call: .*h_q % 64"):
        api.select_impl("pipe", 32, 576, 2048)


def test_decode_keeps_its_own_rule():
    """The decode pads its tensor-parallel counts only (its validation takes no other)."""
    assert [P.decode_padded_heads(h) for h in (8, 16, 32, 64, 128, 48, 96)] == \
        [64, 64, 64, 64, 128, 48, 96]


def test_validation_takes_any_positive_head_count():
    q = torch.zeros(3, 8, 576, dtype=BF16)
    kv = torch.zeros(50, 1, 576, dtype=BF16)
    idx = torch.zeros(3, 1, 128, dtype=I32)
    for impl in ("auto", "naive", "seesaw"):  # only the device check is left
        with pytest.raises(ValueError, match=r"^q: expected a CUDA tensor"):
            K.sparse_mla_prefill(q, kv, idx, 0.1, impl=impl)
    with pytest.raises(ValueError, match=r"impl='pipe' cannot run this call: .*h_q % 64"):
        K.sparse_mla_prefill(q, kv, idx, 0.1, impl="pipe")
    with pytest.raises(ValueError, match=r"^q: h_q must be at least 1, got 0"):
        K.sparse_mla_prefill(q[:, :0], kv, idx, 0.1)
    with pytest.raises(ValueError, match=r"^attn_sink: expected shape \[8\]"):
        K.sparse_mla_prefill(q, kv, idx, 0.1, attn_sink=torch.zeros(64))


def test_fake_implementation_and_batched_shapes_keep_h_q():
    with FakeTensorMode():
        q = torch.zeros(5, 8, 576, dtype=BF16, device="cuda")
        kv = torch.zeros(300, 1, 576, dtype=BF16, device="cuda")
        idx = torch.zeros(5, 1, 2048, dtype=I32, device="cuda")
        out, ml, lse = torch.ops.tle_kernels.sparse_mla_prefill(q, kv, idx, 0.1, 512, None, None,
                                                                "seesaw")
        assert out.shape == (5, 8, 512) and ml.shape == lse.shape == (5, 8)
        out, ml, lse = K.sparse_mla_prefill(q.view(1, 5, 8, 576).expand(2, 5, 8, 576),
                                            kv.view(1, 300, 1, 576).expand(2, 300, 1, 576),
                                            idx.view(1, 5, 1, 2048).expand(2, 5, 1, 2048), 0.1,
                                            attn_sink=torch.zeros(8, device="cuda"),
                                            topk_length=torch.zeros(2, 5, dtype=I32,
                                                                    device="cuda"))
        assert out.shape == (2, 5, 8, 512) and ml.shape == lse.shape == (2, 5, 8)


# ------------------------------------------------------------------------- the emulated math

@pytest.fixture
def emulated(monkeypatch):
    """api.launch runs the emulated seesaw kernels (plain, attn_sink, topk_length, d_qk 512),
    each call recorded as (kernel, q) in the returned list; the SM count is 132 unless the test
    sets ``api.sm_count``."""
    from tle_compiler.testing.emulator import load_kernel_module

    seen = []
    for mod, name in ((plain_mod, "sparse_mla_seesaw"), (sink_mod, "sparse_mla_seesaw_sink"),
                      (length_mod, "sparse_mla_seesaw_topk_length"),
                      (d512_mod, "sparse_mla_seesaw_d512")):
        emu = getattr(load_kernel_module(KDIR / f"{name}.py", dot_dtypes=(BF16,)), name)

        class Recorded:
            def __init__(self, name, emu):
                self.name, self.emu = name, emu

            def __getitem__(self, grid):
                def run(*args, **kw):
                    seen.append((self.name, args[0], args))
                    return self.emu[grid](*args, **kw)
                return run
        monkeypatch.setattr(mod, name, Recorded(name, emu))
    monkeypatch.setattr(api, "sm_count", lambda device: 132)
    return seen


def make_case(s_q, h_q, topk, d_qk=576, seed=0, s_kv=300):
    """q, kv, indices with ~1/8 invalid values of every kind and row 1 wholly invalid."""
    g = torch.Generator().manual_seed(seed)
    q = (torch.randn(s_q, h_q, d_qk, generator=g) * 0.3).bfloat16()
    kv = (torch.randn(s_kv, 1, d_qk, generator=g) * 0.3).bfloat16()
    idx = torch.randint(0, s_kv, (s_q, 1, topk), generator=g, dtype=I32)
    pick = torch.rand(s_q, 1, topk, generator=g) < 0.125
    bad = torch.tensor(BAD + (s_kv,), dtype=I32)
    idx[pick] = bad[torch.randint(0, len(bad), (int(pick.sum()),), generator=g)]
    idx[1] = bad[torch.arange(topk) % len(bad)]
    return q, kv, idx


def features(h_q, s_q, topk, which, seed=1):
    g = torch.Generator().manual_seed(seed)
    sink = tlen = None
    if which in ("sink", "both"):
        sink = torch.randn(h_q, generator=g) * 2
        sink[:3] = torch.tensor([float("-inf"), float("inf"), 3.0])[:h_q]
    if which in ("topk_length", "both"):
        tlen = torch.randint(0, topk + 1, (s_q,), generator=g, dtype=I32)
        tlen[:3] = torch.tensor([topk, 5, -3], dtype=I32)[:s_q]
    return sink, tlen


def check(got, want):
    """bf16 out against the fp32 reference: no NaN, every row within bf16 rounding of its own
    largest element, rows the reference makes 0 exactly 0; lse and max_logits to fp32
    precision, infinities exact."""
    out, ml, lse = got
    r_out, r_ml, r_lse = want
    assert not out.float().isnan().any() and not ml.isnan().any() and not lse.isnan().any()
    o, r = out.float().flatten(0, -2), r_out.flatten(0, -2)
    zero = r.abs().amax(1) == 0
    assert (o[zero] == 0).all()
    rel = (o[~zero] - r[~zero]).abs().amax(1) / r[~zero].abs().amax(1)
    assert rel.max().item() < 2e-2, f"worst row {rel.argmax().item()}: rel {rel.max().item():.3e}"
    assert ((o - r).norm() / r.norm()).item() < 5e-3
    for a, b in ((lse, r_lse), (ml, r_ml)):
        fin = torch.isfinite(b)
        assert torch.equal(a[~fin], b[~fin])
        assert torch.allclose(a[fin], b[fin], atol=1e-5, rtol=0)


def outputs_in_fences(q):
    """NaN-poisoned outputs that are views into buffers with 7.0 fences around them (heads past
    h_q and a token past s_q), so a write past a real head shows."""
    s_q, h_q = q.shape[0], q.shape[1]
    out_buf = torch.full((s_q + 1, h_q + 3, 512), 7.0, dtype=BF16)
    ml_buf = torch.full((s_q + 1, h_q + 3), 7.0, dtype=F32)
    lse_buf = torch.full((s_q + 1, h_q + 3), 7.0, dtype=F32)
    views = (out_buf[:s_q, :h_q], ml_buf[:s_q, :h_q], lse_buf[:s_q, :h_q])
    for v in views:
        v.fill_(float("nan"))
    return (out_buf, ml_buf, lse_buf), views


def fences_intact(bufs, s_q, h_q):
    for b in bufs:
        assert (b[s_q:] == 7).all() and (b[:, h_q:] == 7).all()


KERNEL_OF = {"plain": "sparse_mla_seesaw", "sink": "sparse_mla_seesaw_sink",
             "topk_length": "sparse_mla_seesaw_topk_length",
             "both": "sparse_mla_seesaw_topk_length"}


@pytest.mark.parametrize("which", ["plain", "sink", "topk_length", "both"])
@pytest.mark.parametrize("h_q", [8, 16, 32])
def test_tensor_parallel_head_counts_run_padded_on_the_seesaw(emulated, h_q, which):
    """5 tokens at topk 256 (one launch of 5 items: too few K tiles to split); the kernel of the
    call gets q of 64 heads whose padded ones are zero, the sink padded with -inf; the caller's
    outputs (views with fences) get the real heads only."""
    s_q, topk = 5, 256
    q, kv, idx = make_case(s_q, h_q, topk, seed=h_q)
    sink, tlen = features(h_q, s_q, topk, which)
    want = sparse_mla_reference(q, kv, idx, 576 ** -0.5, attn_sink=sink, topk_length=tlen)
    bufs, views = outputs_in_fences(q)
    impl = "seesaw" if h_q <= 16 else "auto"
    assert api.launch(impl, q, kv, idx, 576 ** -0.5, *views, attn_sink=sink,
                      topk_length=tlen) == "seesaw"
    check(views, want)
    fences_intact(bufs, s_q, h_q)
    assert (views[0][1] == 0).all() and (views[2][1] == float("inf")).all()
    ((name, kq, args),) = emulated  # one launch: 5 items, no split at topk 256
    assert name == KERNEL_OF[which]
    assert kq.shape == (s_q, 64, 576) and torch.equal(kq[:, :h_q], q) and (kq[:, h_q:] == 0).all()
    if sink is not None:  # the kernel reads the padded sink: -inf past the real heads
        (padded,) = [a for a in args if isinstance(a, torch.Tensor) and a.shape == (64,)]
        assert torch.equal(padded[:h_q], sink) and torch.isneginf(padded[h_q:]).all()


def test_auto_at_16_heads_runs_the_naive_kernel(emulated, monkeypatch):
    """h_q 16 on auto: the naive kernel (stood in for: it records its q), no seesaw launch."""
    import tle_kernels.sparse_mla_naive as naive_mod

    ran = []
    monkeypatch.setattr(naive_mod, "sparse_mla_naive", lambda q, *a: ran.append(q.shape))
    q, kv, idx = make_case(3, 16, 256)
    assert api.launch("auto", q, kv, idx, 0.1, *api.empty_outputs(q)) == "naive"
    assert ran == [(3, 16, 576)] and emulated == []


@pytest.mark.parametrize("h_q,s_q,sms,d_qk", [(48, 6, 4, 576), (96, 3, 4, 576), (32, 5, 3, 512)])
def test_other_counts_and_d512_run_padded_persistent(emulated, monkeypatch, h_q, s_q, sms, d_qk):
    """48 -> 64 and 96 -> 128 heads on a few persistent programs (repeated last items, a split
    last wave), and d_qk 512 at 32 heads: its own kernel, with 512-wide padded q."""
    monkeypatch.setattr(api, "sm_count", lambda device: sms)
    q, kv, idx = make_case(s_q, h_q, 256, d_qk=d_qk, seed=h_q + s_q)
    scale = d_qk ** -0.5
    got = api.empty_outputs(q)
    assert api.launch("auto", q, kv, idx, scale, *got) == "seesaw"
    check(got, sparse_mla_reference(q, kv, idx, scale))
    want_kernel = "sparse_mla_seesaw_d512" if d_qk == 512 else "sparse_mla_seesaw"
    assert {n for n, _, _ in emulated} == {want_kernel}
    assert all(kq.shape[1:] == (P.padded_heads(h_q), d_qk) for _, kq, _ in emulated)


def test_split_under_one_wave_and_one_program_per_item(emulated, monkeypatch):
    """2 tokens of 32 heads at topk 2048: one head block each after padding, so the launch runs
    them as 16 one-pair pieces each (tail_split.py), merged by lse; persistent=False runs one
    program per item instead; both equal the reference."""
    import tle_kernels.tail_split as ts

    splits = []
    run_split = ts.run_split
    monkeypatch.setattr(ts, "run_split", lambda *a, **k: splits.append(a[-1]) or run_split(*a, **k))
    q, kv, idx = make_case(2, 32, 2048, seed=3, s_kv=3000)
    want = sparse_mla_reference(q, kv, idx, 576 ** -0.5)
    got = api.empty_outputs(q)
    assert api.launch("auto", q, kv, idx, 576 ** -0.5, *got) == "seesaw"
    check(got, want)
    assert splits == [ts.TailSplit(0, 16)]
    got = api.empty_outputs(q)
    assert api.launch("seesaw", q, kv, idx, 576 ** -0.5, *got, persistent=False) == "seesaw"
    check(got, want)
    assert splits == [ts.TailSplit(0, 16)]


def test_alignment_counts_only_what_the_padded_kernel_reads(emulated):
    """At h_q 32 q, the outputs and the sink are copied into the padded kernel's own buffers, so
    a misaligned q still runs the seesaw; a misaligned kv does not (auto: naive)."""
    q, kv, idx = make_case(3, 32, 128, seed=5)
    q_odd = torch.empty(q.numel() + 1, dtype=BF16)[1:].view(q.shape)
    q_odd.copy_(q)
    got = api.empty_outputs(q)
    assert api.launch("auto", q_odd, kv, idx, 0.1, *got) == "seesaw"
    check(got, sparse_mla_reference(q, kv, idx, 0.1))
    kv_odd = torch.empty(kv.numel() + 1, dtype=BF16)[1:].view(kv.shape)
    with pytest.raises(ValueError, match=r"impl='seesaw' cannot run this call: .*16-byte"):
        api.launch("seesaw", q, kv_odd, idx, 0.1, *api.empty_outputs(q))


# ----------------------------------------------------------------- device ops only (graphs)

class RecordOps(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(str(func))
        return func(*args, **(kwargs or {}))


HOST_READS = ("aten._local_scalar_dense", "aten.item", "aten.nonzero", "aten.masked_select",
              "aten.equal", "aten.is_nonzero")


def test_padding_reads_nothing_on_the_host():
    """launch_padded_prefill around a stand-in launch: only allocations, pads and copies, and the
    stand-in sees the padded tensors; the real heads come back."""
    q, kv, idx = make_case(4, 8, 128)
    sink, tlen = features(8, 4, 128, "both")
    out, ml, lse = api.empty_outputs(q)
    calls = []

    def stand_in(qp, kv_, idx_, scale, out_p, ml_p, lse_p, sink_p, tlen_):
        calls.append((qp.shape, out_p.shape, ml_p.shape, lse_p.shape, sink_p.shape,
                      tlen_ is tlen, kv_ is kv, idx_ is idx))
        h = torch.arange(64, dtype=F32)
        out_p.copy_(h.view(1, 64, 1).expand(out_p.shape))
        ml_p.copy_(-h.expand(ml_p.shape)), lse_p.copy_(2 * h.expand(lse_p.shape))

    with RecordOps() as rec:
        P.launch_padded_prefill(stand_in, q, kv, idx, 0.1, out, ml, lse, sink, tlen)
    assert not [op for op in rec.ops if op.startswith(HOST_READS)], rec.ops
    assert calls == [((4, 64, 576), (4, 64, 512), (4, 64), (4, 64), (64,), True, True, True)]
    h = torch.arange(8, dtype=F32)
    assert torch.equal(out.float(), h.view(1, 8, 1).expand(4, 8, 512))
    assert torch.equal(ml, -h.expand(4, 8)) and torch.equal(lse, 2 * h.expand(4, 8))
