"""What the GPU tests of the two TLE MLA decode kernels (tests/gpu/test_mla_decode_pipe.py,
tests/gpu/test_mla_decode_seesaw.py) check alike, written once for a launch function with the
launchers' contract (``launch_decode_pipe``, ``launch_decode_seesaw``; the combine of
tle_kernels/mla_decode_combine.py runs after a split launch): the case list and mixed seqlens, the
tolerances against the fp32 decode reference, and the checks of a case, of a batch of long and
short requests, of the lazy reference max moving, and of a CUDA-graph replay with new seqlens.

Inputs come from ``make_decode_inputs``: random non-contiguous block tables, cache rows past each
request's seqlen set to NaN and block-table entries past its pages set to a block id no cache has,
so a kernel that reads past seqlen shows NaN (or faults). Outputs are poisoned with NaN before the
launch, so an unwritten row shows too.
"""

from __future__ import annotations

import torch

from tle_kernels.decode_reference import make_decode_inputs, mla_decode_reference
from tle_kernels.mla_decode_combine import mla_decode_combine

MIXED = [0, 1, 63, 64, 65, 4096]
OUT_ABS = 1e-3      # bf16 probabilities and bf16 output, inputs randn / 10
OUT_REL = 5e-3      # relative Frobenius norm of the error
LSE_ABS = 2e-5      # natural log, fp32 row sums (ex2/lg2.approx)

CASES = [
    # b, s_q, h_q, h_kv, causal, n_split
    (6, 1, 16, 1, False, 1),     # TP8: 16 rows, one partial row block
    (6, 1, 128, 1, False, 1),    # DeepSeek: two whole row blocks
    (6, 2, 128, 1, True, 1),     # MTP: four whole row blocks, causal
    (6, 2, 16, 1, True, 2),
    (6, 1, 32, 2, False, 3),     # grouped: 16 rows per kv head
    (6, 2, 64, 2, True, 4),      # grouped: 64 rows per kv head
    (6, 1, 128, 1, False, 8),    # more splits than the short requests have pages
    (6, 2, 48, 1, True, 3),      # 96 rows: a whole and a partial row block
]
CASE_IDS = [f"sq{c[1]}_hq{c[2]}_hkv{c[3]}_{'causal' if c[4] else 'full'}_split{c[5]}"
            for c in CASES]


class ScheduledLaunch:
    """A launch of the scheduled seesaw decode (tle_kernels/mla_decode_launch.launch_scheduled)
    in the checks' contract: where a check passes ``n_split``, it is the number of parts P the
    batch's pairs are balanced over (``balance=False``: runs of ``run`` whole requests per
    program, P ignored); the launch writes out and lse itself (its partials and combine inside),
    so the checks allocate no parts for it."""

    scheduled = True

    def __init__(self, tma: bool, balance: bool = True, run: int = 1):
        self.tma, self.balance, self.run = tma, balance, run

    def __call__(self, q, k_cache, block_table, cache_seqlens, sm_scale, causal, parts, out, lse):
        from tle_kernels.mla_decode_launch import launch_scheduled

        launch_scheduled("seesaw", q, k_cache, block_table, cache_seqlens, sm_scale, causal, out,
                         lse, parts, tma=self.tma, balance=self.balance, run=self.run)


def seesaw_launches() -> dict:
    """The seesaw decode's launches by K producer: "cp_async" (row gathers) and "tma" (shifted
    TMA boxes from tensor descriptors), both forced by keyword, so each GPU test of the seesaw
    runs both whatever TLE_DECODE_TMA says."""
    return {"cp_async": ScheduledLaunch(tma=False), "tma": ScheduledLaunch(tma=True)}


def run_decode(launch, q, k_cache, block_table, cache_seqlens, causal, n_split, sm_scale=None):
    """out (bf16), lse and, when split, the parts, all written into NaN-poisoned tensors by
    ``launch`` (and the combine). A scheduled launch (``ScheduledLaunch``) takes ``n_split`` as
    its part count and returns no parts."""
    b, s_q, h_q, d = q.shape
    sm_scale = d ** -0.5 if sm_scale is None else sm_scale
    dev = q.device
    out = torch.full((b, s_q, h_q, 512), float("nan"), device=dev, dtype=torch.bfloat16)
    lse = torch.full((b, h_q, s_q), float("nan"), device=dev)
    if getattr(launch, "scheduled", False):
        launch(q, k_cache, block_table, cache_seqlens, sm_scale, causal, n_split, out, lse)
        torch.cuda.synchronize()
        return out, lse, None, None
    o_part = lse_part = None
    if n_split > 1:
        o_part = torch.full((b, n_split, s_q, h_q, 512), float("nan"), device=dev)
        lse_part = torch.full((b, n_split, s_q, h_q), float("nan"), device=dev)
    launch(q, k_cache, block_table, cache_seqlens, sm_scale, causal, n_split, out, lse, o_part,
           lse_part)
    if n_split > 1:
        mla_decode_combine(o_part, lse_part, out, lse)
    torch.cuda.synchronize()
    return out, lse, o_part, lse_part


def check(out, lse, ref_out, ref_lse, what):
    assert not out.isnan().any(), f"{what}: NaN in out (a row unwritten, or a read past seqlen)"
    assert not lse.isnan().any(), f"{what}: NaN in lse"
    err = (out.float() - ref_out).abs()
    assert err.max().item() <= OUT_ABS, f"{what}: out max abs error {err.max().item():.3g}"
    rel = ((out.float() - ref_out).norm() / ref_out.norm().clamp_min(1e-30)).item()
    assert rel <= OUT_REL, f"{what}: out relative error {rel:.3g}"
    empty = ref_lse == float("inf")          # a row without a token: lse +inf, out 0
    assert torch.equal(lse[empty], ref_lse[empty]), f"{what}: lse of rows without a token"
    assert (out.permute(0, 2, 1, 3)[empty] == 0).all(), f"{what}: out of rows without a token"
    if (~empty).any():
        d = (lse[~empty] - ref_lse[~empty]).abs().max().item()
        assert d <= LSE_ABS, f"{what}: lse max abs error {d:.3g}"


def check_case(launch, b, s_q, h_q, h_kv, causal, n_split):
    """One of CASES on the MIXED seqlens; split: every split writes every row of its request, a
    split without tokens 0 and -inf."""
    q, k_cache, bt, sl = make_decode_inputs(b, s_q, h_q, h_kv, MIXED, device="cuda",
                                            seed=h_q + 7 * n_split + s_q)
    out, lse, o_part, lse_part = run_decode(launch, q, k_cache, bt, sl, causal, n_split)
    ref_out, ref_lse = mla_decode_reference(q, k_cache, bt, sl, causal=causal)
    check(out, lse, ref_out, ref_lse, f"s_q={s_q} h_q={h_q} h_kv={h_kv} causal={causal} "
                                      f"n_split={n_split}")
    if o_part is not None:
        assert not o_part.isnan().any() and not lse_part.isnan().any()
        for i, n in enumerate(MIXED):
            chunk = -(-(-(-n // n_split)) // 64) * 64
            for s in range(n_split):
                if min(n, (s + 1) * chunk) <= s * chunk:
                    assert (lse_part[i, s] == float("-inf")).all(), (i, s)
                    assert (o_part[i, s] == 0).all(), (i, s)


def check_requests(launch, seqlens, s_q, h_q, runs, seed, what):
    """The requests of ``seqlens`` (h_kv = 1), for each (causal, n_split) of ``runs``."""
    q, k_cache, bt, sl = make_decode_inputs(len(seqlens), s_q, h_q, 1, seqlens, device="cuda",
                                            seed=seed)
    for causal, n_split in runs:
        out, lse, _, _ = run_decode(launch, q, k_cache, bt, sl, causal, n_split)
        ref_out, ref_lse = mla_decode_reference(q, k_cache, bt, sl, causal=causal)
        check(out, lse, ref_out, ref_lse, f"{what} causal={causal} n_split={n_split}")


def check_batch_of_seven_long_and_short(launch):
    """b = 7 with two long requests around the short ones, and a seqlen that ends mid-page."""
    check_requests(launch, [4096, 0, 65, 1, 64, 63, 4096 + 17], 2, 128,
                   [(True, 1), (True, 5), (False, 2)], seed=3, what="b=7")


def check_lazy_rescale(launch, seqlens, lean):
    """Scores that grow along the positions: q gets a component along a random unit direction and
    the key at position t of request i ``lean(i, t, n)`` times that direction (a tensor of t, n the
    request's seqlen), so the lazy reference max moves wherever the lean grows by more than 2^TAU
    in log2 units; a skipped or misapplied rescale is off by a factor of at least 2^8. One split
    and three against the reference."""
    q, k_cache, bt, sl = make_decode_inputs(len(seqlens), 1, 64, 1, seqlens, device="cuda", seed=9)
    g = torch.Generator(device="cuda").manual_seed(9)
    direction = torch.randn(576, device="cuda", generator=g)
    direction /= direction.norm()
    q = (q.float() + 30.0 * direction).bfloat16()
    for i, n in enumerate(seqlens):
        t = torch.arange(n, device="cuda")
        pages, rows = bt[i, t // 64].long(), t % 64
        k_cache[pages, rows, 0] = (k_cache[pages, rows, 0].float()
                                   + lean(i, t, n).float()[:, None] * direction).bfloat16()
    ref_out, ref_lse = mla_decode_reference(q, k_cache, bt, sl)
    for n_split in (1, 3):
        out, lse, _, _ = run_decode(launch, q, k_cache, bt, sl, False, n_split)
        rel = ((out.float() - ref_out).norm() / ref_out.norm()).item()
        assert rel <= OUT_REL, f"n_split={n_split}: relative error {rel:.3g}"
        assert (lse - ref_lse).abs().max().item() <= 1e-4


def check_graph_replay_with_new_seqlens(launch, later_lens):
    """The trip count is read from cache_seqlens on the device, so one captured launch (split
    kernel + combine) serves a later step whose requests grew: replay after changing
    cache_seqlens in place to each of ``later_lens`` (within each request's pages) and compare
    with the reference of the new lengths."""
    b, s_q, h_q = 4, 1, 128
    first = [700, 64, 1, 2000]
    q, k_cache, bt, sl = make_decode_inputs(b, s_q, h_q, 1, first, device="cuda", seed=4,
                                            poison=False)
    n_split = 3
    out = torch.empty(b, s_q, h_q, 512, device="cuda", dtype=torch.bfloat16)
    lse = torch.empty(b, h_q, s_q, device="cuda")
    o_part = torch.empty(b, n_split, s_q, h_q, 512, device="cuda")
    lse_part = torch.empty(b, n_split, s_q, h_q, device="cuda")

    def step():
        if getattr(launch, "scheduled", False):  # n_split parts, its own partials and combine
            launch(q, k_cache, bt, sl, 576 ** -0.5, False, n_split, out, lse)
            return
        launch(q, k_cache, bt, sl, 576 ** -0.5, False, n_split, out, lse, o_part, lse_part)
        mla_decode_combine(o_part, lse_part, out, lse)

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        step()  # compile and warm up outside the capture
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step()
    for lens in [first] + list(later_lens):
        sl.copy_(torch.tensor(lens, dtype=torch.int32))
        out.fill_(float("nan"))
        lse.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        ref_out, ref_lse = mla_decode_reference(q, k_cache, bt, sl)
        check(out, lse, ref_out, ref_lse, f"graph replay, seqlens {lens}")
