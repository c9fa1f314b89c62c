"""The sparse MLA decode's seesaws at the tensor-parallel head counts 8, 16 and 32 on the CPU: the
bf16 one (tle_kernels/sparse_decode_seesaw_launch.py, through the prefill's seesaw kernels) and
the FP8 one (tle_kernels/sparse_decode_seesaw_fp8_launch.py) hand their kernels the caller's
h_q-head q and the real head count (the last head block's rows past h_q masked: q read as 0,
nothing stored), with no padded copy of q or out; at h_q 8 a batch under one wave, whose pieces
are merged in blocks of 16 heads, runs its pieces over 16-head copies.

The kernels are their CPU emulations (every address bounds-checked, masked lanes too), the
outputs views inside fenced buffers (a write past h_q, past s_q or past the batch shows), the
results against the fp32 sparse decode reference, with attn_sink (+-inf heads included) and
per-request topk_length, s_q 1 (lse written in place) and 2 (through the transposing scratch).
"""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

import tle_kernels.sparse_decode_seesaw_fp8 as fp8_mod  # noqa: E402
import tle_kernels.sparse_decode_seesaw_fp8_sink as fp8_sink_mod  # noqa: E402
import tle_kernels.sparse_mla_seesaw as plain_mod  # noqa: E402
import tle_kernels.sparse_mla_seesaw_sink as sink_mod  # noqa: E402
import tle_kernels.sparse_mla_seesaw_topk_length as length_mod  # noqa: E402
from tle_kernels import api  # noqa: E402
from tle_kernels import sparse_decode_api as A  # noqa: E402
from tle_kernels.sparse_decode_reference import (make_sparse_decode_inputs,  # noqa: E402
                                                 sparse_decode_reference)
from tle_kernels.sparse_decode_seesaw_fp8_launch import launch_sparse_seesaw_fp8  # noqa: E402
from tle_kernels.sparse_decode_seesaw_launch import launch_sparse_seesaw  # noqa: E402

from .gpu.test_sparse_decode import (LSE_ABS, LSE_REL, OUT_ABS, OUT_COS, OUT_REL,  # noqa: E402
                                     SCALE, close)
from .test_prefill_head_padding import as_kernel_argument  # noqa: E402

KDIR = Path(__file__).resolve().parent.parent / "tle_kernels"
OPTIONAL = ("attn_sink", "topk_length", "extra_k_cache", "extra_indices", "extra_topk_length")
KERNELS = ((plain_mod, "sparse_mla_seesaw"), (sink_mod, "sparse_mla_seesaw_sink"),
           (length_mod, "sparse_mla_seesaw_topk_length"),
           (fp8_mod, "sparse_decode_seesaw_fp8"), (fp8_sink_mod, "sparse_decode_seesaw_fp8_sink"))


@pytest.fixture
def emulated(monkeypatch):
    """The decode's kernels as their CPU emulations, each launch recorded as (kernel, q, the head
    count it was given); ``emulated(sms)`` sets the SM count the launches see (default 132)."""
    from tle_compiler.testing.emulator import load_kernel_module

    seen = []
    for mod, name in KERNELS:
        emu = getattr(load_kernel_module(KDIR / f"{name}.py", dot_dtypes=(torch.bfloat16,)), name)

        class Recorded:
            def __init__(self, name, emu):
                self.name, self.emu, self.fn = name, emu, emu.fn

            def __getitem__(self, grid):
                def run(*args, **kw):
                    heads = kw["n_heads"] if "n_heads" in kw else args[-1]
                    seen.append((self.name, args[0], heads))
                    return self.emu[grid](*map(as_kernel_argument, args), **kw)
                return run
        monkeypatch.setattr(mod, name, Recorded(name, emu))

    def set_sms(sms: int = 132):
        monkeypatch.setattr(api, "sm_count", lambda device: sms)
        return seen
    set_sms()
    return set_sms


def fenced_outputs(b, s_q, h_q):
    """out [b, s_q, h_q, 512] and lse [b, h_q, s_q], NaN, as views inside 7.0-filled buffers
    with 4 more heads, one more query row and one more request."""
    out_b = torch.full((b + 1, s_q + 1, h_q + 4, 512), 7.0, dtype=torch.bfloat16)
    lse_b = torch.full((b + 1, h_q + 4, s_q + 1), 7.0)
    out, lse = out_b[:b, :s_q, :h_q], lse_b[:b, :h_q, :s_q]
    out.fill_(float("nan")), lse.fill_(float("nan"))
    return (out_b, lse_b), (out, lse)


def fences_intact(out_b, lse_b, b, s_q, h_q):
    assert (out_b[b:] == 7).all() and (out_b[:, s_q:] == 7).all() and (out_b[:, :, h_q:] == 7).all()
    assert (lse_b[b:] == 7).all() and (lse_b[:, h_q:] == 7).all() and (lse_b[:, :, s_q:] == 7).all()


CASES = {  # name: (b, s_q, topk, page, SMs)
    "b3_sq1": (3, 1, 256, 16, 132),          # one program per item
    "b2_sq2_rounds": (2, 2, 256, 7, 3),      # 4 items on 3 persistent programs
    "b2_sq1_pieces": (2, 1, 2048, 64, 132),  # under one wave: 16 topk pieces per row, merged
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("is_fp8", [False, True], ids=["bf16", "fp8"])
@pytest.mark.parametrize("h_q", [8, 16, 32])
def test_decode_runs_the_real_heads_into_fenced_outputs(emulated, h_q, is_fp8, case):
    b, s_q, topk, page, sms = CASES[case]
    seen = emulated(sms)
    lengths = [0, 100, 999, 37, 256][:b]
    x = make_sparse_decode_inputs(b, s_q, h_q, topk, page=page, is_fp8=is_fp8, device="cpu",
                                  seed=h_q + b, invalid=0.25, attn_sink=True,
                                  topk_length=lengths)
    assert torch.isinf(x["attn_sink"]).any()
    call = {k: x[k] for k in ("q", "k_cache", "indices") + OPTIONAL}
    # auto takes the split kernel for the FP8 cache and the narrow-head kernel for bf16
    # (tests/test_sparse_decode_narrow.py); this test runs the seesaws by name
    assert A.select_sparse_impl("auto", dict(call, is_fp8=is_fp8)) == \
        ("split-fp8" if is_fp8 else "narrow")
    want_out, want_lse = sparse_decode_reference(x["q"], x["k_cache"], x["indices"], 512, SCALE,
                                                 *(x[k] for k in OPTIONAL))
    (out_b, lse_b), (out, lse) = fenced_outputs(b, s_q, h_q)
    launch = launch_sparse_seesaw_fp8 if is_fp8 else launch_sparse_seesaw
    launch(x["q"], x["k_cache"], x["indices"], SCALE, is_fp8, out, lse,
           *(x[k] for k in OPTIONAL))
    close(f"h_q={h_q} out", out, want_out.to(torch.bfloat16), OUT_ABS, OUT_REL, OUT_COS)
    close(f"h_q={h_q} lse", lse, want_lse, LSE_ABS, LSE_REL)
    fences_intact(out_b, lse_b, b, s_q, h_q)
    assert (want_lse[0] == float("inf")).all()  # request 0: topk_length 0
    # the kernels got the real heads: the caller's q rows (no 64-head copy), n_heads = h_q; a
    # split at h_q 8 runs its pieces over 16-head copies (the merge takes blocks of 16 heads)
    from tle_kernels.tail_split import plan_tail_split

    split = plan_tail_split(b * s_q, 1, topk, sms, 128) is not None
    assert split == (case == "b2_sq1_pieces") and seen, "no kernel ran"
    for name, kq, heads in seen:
        if split and h_q % 16:
            assert (kq.shape[1], heads) == (16, 16), name
        else:
            assert (kq.shape[1], heads) == (h_q, h_q), name
            if not split:
                assert kq.data_ptr() == x["q"].data_ptr(), name
