"""The SparseMLA prefill at head counts that are not a multiple of 64 (tle_kernels/head_padding.py,
tle_kernels/api.py) on the CPU:

- the rule: the seesaw computes h_q's head rows rounded up to a multiple of 64 (its last head
  block masked); "auto" takes it where that is at most 2x the naive kernel's head rows
  (h_q > 16), else the naive kernel; the support and selection functions say so;
- the math: ``api.launch`` with the seesaw kernels replaced by their CPU emulations
  (tle_compiler/testing/emulator.py: every address bounds-checked, masked lanes too) at h_q 8 /
  16 / 32 (and 48, 96, d_qk 512), plain, with attn_sink, with topk_length and with both, against
  the fp32 reference on hostile inputs (invalid indices of every kind, a row without a valid
  index, sinks of +-inf), into outputs that are views inside fenced buffers (a write past h_q or
  past the last token shows); the kernels get the caller's q, outputs and sink themselves (no
  copies) and the real head count; a launch under one wave split into topk pieces (at h_q 8 its
  merge runs over pieces padded to 16 heads); misaligned tensors run over padded copies;
- the copies that remain are device ops only (no host reads: a call captures in a CUDA graph),
  and the custom op's fake implementation and the batched layout give h_q-head outputs;
- the sparse decode keeps its own rule (8 / 16 / 32 as one block of 64 rows, everything else
  refused).
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
import tle_kernels.sparse_mla_seesaw_d512_sink as d512_sink_mod  # noqa: E402
import tle_kernels.sparse_mla_seesaw_d512_topk_length as d512_length_mod  # noqa: E402
import tle_kernels.sparse_mla_seesaw_sink as sink_mod  # noqa: E402
import tle_kernels.sparse_mla_seesaw_topk_length as length_mod  # noqa: E402
from tle_kernels import api, head_padding as P  # noqa: E402
from tle_kernels.reference import sparse_mla_reference  # noqa: E402

KDIR = Path(__file__).resolve().parent.parent / "tle_kernels"
BF16, I32, F32 = torch.bfloat16, torch.int32, torch.float32
BAD = (-1, -2**31, 2**31 - 1)  # and s_kv


# ----------------------------------------------------------------------------------- the rule

@pytest.mark.parametrize("h_q,heads,naive_rows,padded", [
    (1, 64, 16, "naive"), (8, 64, 16, "naive"), (16, 64, 16, "naive"),
    (17, 64, 32, "seesaw"), (24, 64, 32, "seesaw"), (32, 64, 32, "seesaw"),
    (48, 64, 64, "seesaw"), (64, 64, 64, "seesaw"), (96, 128, 128, "seesaw"),
    (128, 128, 128, "seesaw"), (160, 192, 192, "seesaw"),
])
def test_padding_rule_and_what_auto_takes(h_q, heads, naive_rows, padded):
    """``padded``: what "auto" takes among the seesaw (padded) and the naive kernel; the
    narrow-head kernel takes h_q <= 32 unpadded at d_qk 576 and 512 (attn_sink and topk_length
    or not)."""
    assert P.padded_heads(h_q) == heads == api.kernel_heads("seesaw", h_q)
    assert api.kernel_heads("naive", h_q) == h_q == api.kernel_heads("pipe", h_q)
    assert api.kernel_heads("narrow", h_q) == h_q
    assert P.naive_head_rows(h_q) == naive_rows
    assert P.auto_pads(h_q) == (heads <= 2 * naive_rows)
    assert api.unsupported_reason("seesaw", h_q, 576, 2048, True, True) is None
    assert api.select_impl("auto", h_q, 576, 2048) == ("narrow" if h_q <= 32 else padded)
    assert api.select_impl("auto", h_q, 576, 2048, False, True) == \
        ("narrow" if h_q <= 32 else padded)
    assert api.select_impl("auto", h_q, 512, 2048, False, True) == \
        ("narrow" if h_q <= 32 else padded)
    assert api.select_impl("auto", h_q, 576, 2048, True) == ("narrow" if h_q <= 32 else padded)
    assert api.select_impl("seesaw", h_q, 576, 2048) == "seesaw"  # on request at any h_q
    passes = api.auto_passes_over("seesaw", h_q)
    assert (passes is None) == (padded == "seesaw")
    if passes is not None:
        assert passes == (f"seesaw would run h_q={h_q} as 64 head rows, 4x the head rows of "
                          f"the naive kernel, which is about as fast then")


def test_the_pipe_kernel_does_not_pad():
    assert "h_q % 64 == 0 (got h_q=32)" in api.unsupported_reason("pipe", 32, 576, 576)
    assert api.select_impl("auto", 32, 576, 100, False, True) == "naive"  # not the seesaw's topk
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

def as_kernel_argument(x):
    """A tensor argument as the emulated kernel takes it: itself when contiguous, else a pointer
    to its first element in its whole storage (the emulator's ``Ptr``), so that a view inside a
    fenced buffer is written in place and a write past it lands on the fence."""
    from tle_compiler.testing.emulator import Ptr

    if not isinstance(x, torch.Tensor) or x.is_contiguous():
        return x
    n = x.untyped_storage().nbytes() // x.element_size()
    return Ptr(x.as_strided((n,), (1,), 0), x.storage_offset())


KERNELS = ((plain_mod, "sparse_mla_seesaw"), (sink_mod, "sparse_mla_seesaw_sink"),
           (length_mod, "sparse_mla_seesaw_topk_length"), (d512_mod, "sparse_mla_seesaw_d512"),
           (d512_sink_mod, "sparse_mla_seesaw_d512_sink"),
           (d512_length_mod, "sparse_mla_seesaw_d512_topk_length"))


@pytest.fixture
def emulated(monkeypatch):
    """api.launch runs the emulated seesaw kernels (plain, attn_sink, topk_length, at d_qk 576
    and 512), each launch recorded as (kernel, q, args, keywords) in the returned list; the SM
    count is 132 unless the test sets ``api.sm_count``."""
    from tle_compiler.testing.emulator import load_kernel_module

    seen = []
    for mod, name in KERNELS:
        emu = getattr(load_kernel_module(KDIR / f"{name}.py", dot_dtypes=(BF16,)), name)

        class Recorded:
            def __init__(self, name, emu):
                self.name, self.emu = name, emu
                self.fn = emu.fn

            def __getitem__(self, grid):
                def run(*args, **kw):
                    seen.append((self.name, args[0], args, kw))
                    return self.emu[grid](*map(as_kernel_argument, args), **kw)
                return run
        monkeypatch.setattr(mod, name, Recorded(name, emu))
    monkeypatch.setattr(api, "sm_count", lambda device: 132)
    return seen


def n_heads_of(args, kw):
    """The head count a recorded seesaw launch passed (keyword, or the last argument)."""
    return kw["n_heads"] if "n_heads" in kw else args[-1]


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
    ml_buf = torch.full((s_q + 1, h_q + 4), 7.0, dtype=F32)  # rows of 16-byte multiples
    lse_buf = torch.full((s_q + 1, h_q + 4), 7.0, dtype=F32)
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
def test_tensor_parallel_head_counts_run_masked_on_the_seesaw(emulated, h_q, which):
    """5 tokens at topk 256 (one launch of 5 items: too few K tiles to split); the kernel of the
    call gets the caller's q, outputs and sink themselves and n_heads = h_q; the caller's
    outputs (views with fences) get the real heads, nothing past them."""
    s_q, topk = 5, 256
    q, kv, idx = make_case(s_q, h_q, topk, seed=h_q)
    sink, tlen = features(h_q, s_q, topk, which)
    want = sparse_mla_reference(q, kv, idx, 576 ** -0.5, attn_sink=sink, topk_length=tlen)
    bufs, views = outputs_in_fences(q)
    # on request: "auto" takes the narrow-head kernel at these counts
    # (tests/test_sparse_mla_narrow.py)
    assert api.select_impl("auto", h_q, 576, topk, sink is not None, tlen is not None) == "narrow"
    assert api.launch("seesaw", q, kv, idx, 576 ** -0.5, *views, attn_sink=sink,
                      topk_length=tlen) == "seesaw"
    check(views, want)
    fences_intact(bufs, s_q, h_q)
    assert (views[0][1] == 0).all() and (views[2][1] == float("inf")).all()
    ((name, kq, args, kw),) = emulated  # one launch: 5 items, no split at topk 256
    assert name == KERNEL_OF[which] and n_heads_of(args, kw) == h_q
    assert kq is q  # no padded copy
    assert args[3] is views[0]
    if sink is not None:
        assert any(a is sink for a in args)


@pytest.mark.parametrize("h_q,s_q,sms,d_qk,which", [
    (48, 6, 4, 576, "plain"), (96, 3, 4, 576, "plain"), (96, 3, 4, 576, "both"),
    (32, 5, 3, 512, "plain"), (32, 5, 3, 512, "sink"), (48, 5, 3, 512, "both")])
def test_other_counts_and_d512_run_masked_persistent(emulated, monkeypatch, h_q, s_q, sms, d_qk,
                                                     which):
    """48 (one masked block) and 96 (a whole block and a masked one) on a few persistent
    programs (repeated last items, a split last wave), and d_qk 512 with and without attn_sink
    and topk_length: each its own kernel, with the caller's h_q-head q ("auto" takes the
    seesaw for these calls above 32 heads, the narrow-head kernel at 32)."""
    monkeypatch.setattr(api, "sm_count", lambda device: sms)
    q, kv, idx = make_case(s_q, h_q, 256, d_qk=d_qk, seed=h_q + s_q)
    sink, tlen = features(h_q, s_q, 256, which)
    scale = d_qk ** -0.5
    bufs, views = outputs_in_fences(q)
    assert api.select_impl("auto", h_q, d_qk, 256, sink is not None, tlen is not None) == \
        ("narrow" if h_q <= 32 else "seesaw")
    assert api.launch("seesaw", q, kv, idx, scale, *views, attn_sink=sink,
                      topk_length=tlen) == "seesaw"
    check(views, sparse_mla_reference(q, kv, idx, scale, attn_sink=sink, topk_length=tlen))
    fences_intact(bufs, s_q, h_q)
    kernel = {"plain": "sparse_mla_seesaw", "sink": "sparse_mla_seesaw_sink",
              "both": "sparse_mla_seesaw_topk_length"}[which]
    if d_qk == 512:
        kernel = kernel.replace("sparse_mla_seesaw", "sparse_mla_seesaw_d512")
    names = {n for n, _, _, _ in emulated}
    assert kernel in names and names <= {kernel, "sparse_mla_seesaw", "sparse_mla_seesaw_d512"}
    assert all(kq.shape[1:] == (h_q, d_qk) for _, kq, _, _ in emulated)


@pytest.mark.parametrize("h_q,which", [(32, "plain"), (8, "plain"), (8, "sink"), (8, "both")])
def test_split_under_one_wave_and_one_program_per_item(emulated, monkeypatch, h_q, which):
    """2 tokens at topk 2048: one head block each, so the launch runs them as 16 one-pair pieces
    each (tail_split.py), merged by lse, the pieces reading their token's q row (q_div); at h_q
    32 over the caller's heads, at h_q 8 (the merge
    takes heads in blocks of 16) over pieces padded to 16 heads, whose padded heads stay out of
    the outputs; persistent=False runs one program per item instead; both equal the
    reference."""
    import tle_kernels.tail_split as ts

    splits = []
    run_split = ts.run_split
    monkeypatch.setattr(ts, "run_split", lambda *a, **k: splits.append(a[7]) or run_split(*a, **k))
    q, kv, idx = make_case(2, h_q, 2048, seed=3, s_kv=3000)
    sink, tlen = features(h_q, 2, 2048, which)
    want = sparse_mla_reference(q, kv, idx, 576 ** -0.5, attn_sink=sink, topk_length=tlen)
    bufs, views = outputs_in_fences(q)
    assert api.launch("seesaw", q, kv, idx, 576 ** -0.5, *views, attn_sink=sink,
                      topk_length=tlen) == "seesaw"
    check(views, want)
    fences_intact(bufs, 2, h_q)
    assert splits == [ts.TailSplit(0, 16)]
    merge_heads = -(-h_q // 16) * 16
    # the pieces read their token's q row in place (the 2 tokens' q, q_div 16), the plain
    # seesaw's and, with topk_length, the topk_length kernel's
    assert [(kq.shape, n_heads_of(a, kw), kw.get("q_div")) for _, kq, a, kw in emulated] == \
        [((2, merge_heads, 576), merge_heads, 16)]
    got = api.empty_outputs(q)
    assert api.launch("seesaw", q, kv, idx, 576 ** -0.5, *got, attn_sink=sink, topk_length=tlen,
                      persistent=False) == "seesaw"
    check(got, want)
    assert splits == [ts.TailSplit(0, 16)] and emulated[-1][1] is q


def test_misaligned_tensors_run_over_padded_copies(emulated):
    """At h_q 32 a q that is not 16-byte aligned, and at h_q 5 outputs whose rows are not
    (20 bytes of lse per token), run over aligned copies padded to 64 heads; a misaligned kv has
    no such way out (the seesaw refuses it)."""
    q, kv, idx = make_case(3, 32, 128, seed=5)
    q_odd = torch.empty(q.numel() + 1, dtype=BF16)[1:].view(q.shape)
    q_odd.copy_(q)
    got = api.empty_outputs(q)
    assert api.launch("seesaw", q_odd, kv, idx, 0.1, *got) == "seesaw"
    check(got, sparse_mla_reference(q, kv, idx, 0.1))
    assert [kq.shape for _, kq, _, _ in emulated] == [(3, 64, 576)]
    q5, kv5, idx5 = make_case(4, 5, 128, seed=6)
    sink = torch.randn(5)
    got = api.empty_outputs(q5)
    assert api.launch("seesaw", q5, kv5, idx5, 0.1, *got, attn_sink=sink) == "seesaw"
    check(got, sparse_mla_reference(q5, kv5, idx5, 0.1, attn_sink=sink))
    assert emulated[-1][1].shape == (4, 64, 576)
    kv_odd = torch.empty(kv.numel() + 1, dtype=BF16)[1:].view(kv.shape)
    with pytest.raises(ValueError, match=r"impl='seesaw' cannot run this call: .*16-byte"):
        api.launch("seesaw", q, kv_odd, idx, 0.1, *api.empty_outputs(q))


def test_auto_at_16_heads_with_topk_length_runs_the_narrow_kernel(emulated, monkeypatch):
    """h_q 16 on auto with topk_length: the narrow-head kernel's topk_length variant (stood in
    for: it records its q), no seesaw launch, no padded copy."""
    import tle_kernels.sparse_mla_narrow as narrow_mod

    ran = []

    class Record:
        def __getitem__(self, grid):
            return lambda q, *a, **kw: ran.append(q.shape)
    monkeypatch.setattr(narrow_mod, "sparse_mla_narrow_topk_length", Record())
    q, kv, idx = make_case(3, 16, 256)
    assert api.launch("auto", q, kv, idx, 0.1, *api.empty_outputs(q),
                      topk_length=torch.full((3,), 100, dtype=torch.int32)) == "narrow"
    assert ran == [(3, 16, 576)] and emulated == []


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


def test_split_merge_at_8_heads_reads_nothing_on_the_host():
    """run_split_any_heads at h_q 8 around a stand-in launch: the main tokens run as given, the
    tail tokens' pieces over 16-head copies (zero q past the real heads, a -inf sink there), the
    merge on the CPU; only device ops; the real heads come back."""
    from tle_kernels.tail_split import TailSplit

    q, kv, idx = make_case(3, 8, 256)
    sink = torch.randn(8)
    out, ml, lse = api.empty_outputs(q)
    calls = []

    def stand_in(q_, kv_, idx_, out_, ml_, lse_):
        calls.append((q_.shape, idx_.shape, q_))
        out_.copy_(q_[..., :512]), ml_.fill_(1.0), lse_.fill_(2.0)

    with RecordOps() as rec:
        P.run_split_any_heads(stand_in, q, kv, idx, out, ml, lse, TailSplit(1, 2), sink=sink,
                              run_main=stand_in)
    assert not [op for op in rec.ops if op.startswith(HOST_READS)], rec.ops
    assert [c[:2] for c in calls] == [((1, 8, 576), (1, 1, 256)), ((4, 16, 576), (4, 1, 128))]
    assert (calls[1][2][:, 8:] == 0).all()
    assert torch.equal(out[0], q[0, :, :512]) and (ml == 1).all()
    assert (lse[0] == 2).all()  # the main token as run; the tail: two pieces of lse 2 merged
    assert torch.allclose(lse[1:], torch.full_like(lse[1:], 2.0 + 0.6931471805599453))
