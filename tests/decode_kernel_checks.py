"""What the CPU tests of the two TLE MLA decode kernels (tests/test_mla_decode_pipe.py,
tests/test_mla_decode_seesaw.py) check alike, written once and named by the kernel's short name
("pipe", "seesaw"): the verdict of ``tle-dump`` for every trip count read from cache_seqlens, one
loop per partition over that count, a sm_90a compile without register spills, the shape checks of
the shared launcher, and the kernel's math in CPU emulation, launched with exactly the arguments
the launcher gives it, against the fp32 decode reference on NaN-poisoned inputs (the case list, the
combine's formula for split parts, the checks of a case and of the lazy reference max moving).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tle_kernels.mla_decode_launch import decode_call, launch_decode

ROOT = Path(__file__).resolve().parent.parent

CASES = [
    # b, s_q, h_q, h_kv, seqlens, causal, n_split
    (6, 1, 16, 1, [0, 1, 63, 64, 65, 300], False, 1),    # TP8 heads: one partial row block
    (6, 2, 32, 2, [0, 1, 63, 64, 65, 300], True, 1),     # causal row before the first token
    (3, 2, 64, 1, [1, 65, 300], True, 3),                # 128 rows: two whole row blocks
    (4, 1, 128, 2, [0, 64, 129, 300], False, 4),         # more splits than some requests' pages
    (2, 3, 48, 2, [130, 7], True, 2),                    # 72 rows per kv head: a partial 2nd block
]
CASE_IDS = [f"b{c[0]}_sq{c[1]}_hq{c[2]}_hkv{c[3]}_{'causal' if c[5] else 'full'}_split{c[6]}"
            for c in CASES]


def kernel_file(kernel: str) -> Path:
    return ROOT / "tle_kernels" / f"mla_decode_{kernel}.py"


# ---------------------------------------------------------------- protocol and compilation


def check_verified_for_every_value(kernel: str, param: str, capsys, options=()) -> None:
    """``tle-dump --graph`` proves the protocol for every value of the one param ``param``, the
    trip count the kernel body computes from cache_seqlens and hands to every partition
    (``options``: more tle-dump arguments, e.g. ``--param TMA=1``)."""
    from tle_compiler.cli.dump import main

    code = main(["--graph", "--format", "json", *options, str(kernel_file(kernel))])
    out = json.loads(capsys.readouterr().out)
    (k,) = out["kernels"]
    assert code == 0 and k["verified"] and k["verdict"] == "proved", k["reason"]
    assert k["scope"].startswith(f"every value of {param}")
    assert [p["name"] if isinstance(p, dict) else p for p in k["params"]] == [param]


def check_partitions_loop_over(kernel: str, partitions: set, param: str,
                               binds: tuple = (None,)) -> None:
    """Each partition of the kernel has one loop, ``for _ in range(param)``, in each reading
    ``binds`` (None: the generic one; a dict: specialised to those constexprs, e.g. each
    producer of a kernel with a TMA constexpr)."""
    from tle_compiler.frontend import read_kernels
    from tle_compiler.ir import For

    for bind in binds:
        (info,) = read_kernels(str(kernel_file(kernel)), bind=bind)
        loops = {part.name: [s for s in part.body if isinstance(s, For)]
                 for part in info.program.partitions}
        assert set(loops) == partitions
        for name, fors in loops.items():
            assert len(fors) == 1, (name, bind)
            assert str(fors[0].start) == "0" and str(fors[0].stop) == param, (name, bind)


def check_compiles_without_spills(kernel: str, causal: bool, split, regs: int,
                                  **more) -> None:
    """The CAUSAL x SPLIT variant (SPLIT: fp32 parts instead of bf16 out; None for a kernel
    without SPLIT, the scheduled seesaw; ``more``: other constexprs, e.g. TMA=1) compiles for
    sm_90a without register spills, its pipes fit in Hopper's shared memory, and a worker
    partition raises its registers to ``regs``."""
    import importlib

    from tle_compiler.lowering import compile_kernel, ptxas_stats

    mod = importlib.import_module(f"tle_kernels.mla_decode_{kernel}")
    sig = dict(mod.DEFAULT_CONFIG["signature"])
    constexprs = dict(mod.DEFAULT_CONFIG["constexprs"], CAUSAL=causal, **more)
    if split is not None:
        sig["out_ptr"] = "*fp32" if split else "*bf16"
        constexprs["SPLIT"] = split
    c = compile_kernel(getattr(mod, f"mla_decode_{kernel}"), sig, constexprs)
    st = ptxas_stats(c)
    assert st["ok"], st["log"]
    assert (st["spill_stores"], st["spill_loads"]) == (0, 0), st["log"]
    assert not st["wgmma_serialized"], st["log"]  # ptxas C7515
    assert not st["wgmma_wait_injected"], st["log"]  # ptxas C7517
    assert c.metadata.shared <= 232_448
    assert re.search(rf"setmaxnreg\.inc\.sync\.aligned\.u32\s+{regs}\b", c.asm["ptx"])


# ---------------------------------------------------------------- the launcher


def check_unsupported_reason(kernel: str, unsupported) -> None:
    """The kernel's launcher module's ``unsupported(s_q, h_q, h_kv)``: any s_q >= 1 and h_q a
    multiple of h_kv >= 1 (a partial block of 64 rows is masked); otherwise why not, naming the
    kernel."""
    for s_q, h_q, h_kv in [(1, 16, 1), (2, 128, 1), (4, 128, 8), (1, 8, 8), (3, 48, 2)]:
        assert unsupported(s_q, h_q, h_kv) is None
    assert f"{kernel} needs h_q to be a multiple of h_kv" in unsupported(1, 48, 5)
    assert "s_q" in unsupported(0, 16, 1)
    assert "h_kv" in unsupported(1, 16, 0)


def check_launch_shapes(kernel: str) -> None:
    """decode_call refuses a split launch without fp32 parts and rows that are not 576 wide, and
    gives the grid and constexprs of a one-split launch (causal with one query masks nothing); a
    launch refuses unaligned q rows, naming the kernel."""
    torch = pytest.importorskip("torch")
    from tle_kernels.decode_reference import make_decode_inputs

    q, k, bt, sl = make_decode_inputs(2, 1, 16, 1, [5, 70], device="cpu", seed=0)
    out, lse = torch.empty(2, 1, 16, 512).bfloat16(), torch.empty(2, 16, 1)
    with pytest.raises(ValueError, match="o_part and lse_part"):
        decode_call(kernel, q, k, bt, sl, 0.1, False, 2, out, lse)
    with pytest.raises(ValueError, match="o_part must be fp32"):
        decode_call(kernel, q, k, bt, sl, 0.1, False, 2, out, lse,
                    torch.empty(2, 2, 1, 16, 512).bfloat16(), torch.empty(2, 2, 1, 16))
    with pytest.raises(ValueError, match=f"{kernel} needs q and k_cache rows of 576"):
        decode_call(kernel, q[..., :512], k, bt, sl, 0.1, False, 1, out, lse)
    grid, args, constexprs = decode_call(kernel, q, k, bt, sl, 0.1, True, 1, out, lse)
    assert grid == (2, 1)
    assert {n: constexprs[n] for n in ("BLOCK_H", "CAUSAL", "SPLIT")} == \
        {"BLOCK_H": 64, "CAUSAL": False, "SPLIT": False}
    unaligned = torch.zeros(2, 1, 16, 577).bfloat16()[..., 1:]  # rows start 2 bytes in
    with pytest.raises(ValueError, match=f"q: the {kernel} decode kernel needs 16-byte aligned"):
        launch_decode(kernel, unaligned, k, bt, sl, 0.1, False, 1, out, lse)


# ---------------------------------------------------------------- math, in CPU emulation


def emulated(kernel: str):
    """The kernel's module with its ``@tle.jit`` kernel run by the CPU emulator."""
    torch = pytest.importorskip("torch")
    from tle_compiler.testing.emulator import load_kernel_module

    return load_kernel_module(kernel_file(kernel), dot_dtypes=(torch.bfloat16,))


def merge(o_part, lse_part):
    """The combine's formula (tle_kernels/mla_decode_combine.py) in torch: out = sum_s
    exp(lse_s - lse) o_s, lse = log sum_s exp(lse_s); an empty split (lse_s = -inf) has weight 0,
    a row with no token anywhere gives out 0 and lse +inf. lse comes back as [b, h_q, s_q]."""
    import torch

    m = lse_part.max(1, keepdim=True).values
    m = torch.where(m == float("-inf"), 0.0, m)
    w = torch.exp(lse_part - m)                       # [b, n_split, s_q, h_q]
    total = w.sum(1)
    out = (w[..., None] * torch.where(w[..., None] > 0, o_part, 0.0)).sum(1) \
        / torch.where(total > 0, total, 1.0)[..., None]
    lse = torch.where(total > 0, torch.log(total) + m[:, 0], float("inf"))
    return out, lse.transpose(1, 2)


def split_range(seqlen: int, n_split: int, s: int) -> tuple[int, int]:
    """The positions [lo, hi) of split s of a request of ``seqlen`` tokens."""
    chunk = -(-(-(-seqlen // n_split)) // 64) * 64
    return s * chunk, min(seqlen, (s + 1) * chunk)


def run_emulated(kernel: str, mod, q, k, bt, sl, causal, n_split, sm_scale=None, tma=False,
                 q_tma=False):
    """The emulated kernel, launched as the launcher launches it, into NaN-poisoned outputs; the
    split parts are merged as the combine merges them. ``tma``: the TMA producer (K pages copied
    as shifted boxes from tensor descriptors); ``q_tma``: Q copied as TMA boxes. Returns (out
    fp32, lse, o_part, lse_part)."""
    import torch

    b, s_q, h_q, _ = q.shape
    sm_scale = 576 ** -0.5 if sm_scale is None else sm_scale
    out = torch.full((b, s_q, h_q, 512), float("nan")).bfloat16()
    lse = torch.full((b, h_q, s_q), float("nan"))
    o_part = torch.full((b, n_split, s_q, h_q, 512), float("nan"))
    lse_part = torch.full((b, n_split, s_q, h_q), float("nan"))
    grid, args, constexprs = decode_call(kernel, q, k, bt, sl, sm_scale, causal, n_split, out, lse,
                                         o_part, lse_part, tma, q_tma)
    assert constexprs.get("QTMA", 0) == int(q_tma)
    getattr(mod, f"mla_decode_{kernel}")[grid](*args, **constexprs)
    if n_split == 1:
        assert o_part.isnan().all() and lse_part.isnan().all()  # untouched
        return out.float(), lse, None, None
    assert out.float().isnan().all() and lse.isnan().all()      # the combine's to write
    assert not o_part.isnan().any() and not lse_part.isnan().any()
    merged, merged_lse = merge(o_part, lse_part)
    return merged, merged_lse, o_part, lse_part


def check_against_reference(out, lse, ref_out, ref_lse) -> None:
    """An emulated decode's out (fp32 of bf16) and lse against the fp32 reference: nothing
    unwritten, out within bf16 P's error, rows without a token exactly out 0 and lse +inf."""
    import torch

    assert not out.isnan().any() and not lse.isnan().any()
    assert (out - ref_out).abs().max().item() < 2e-3          # bf16 P (and bf16 out, one split)
    empty = ref_lse == float("inf")
    assert torch.equal(lse[empty], ref_lse[empty])             # no token: +inf ...
    assert (out.permute(0, 2, 1, 3)[empty] == 0).all()         # ... and out 0
    assert (lse[~empty] - ref_lse[~empty]).abs().max().item() < 1e-4


def check_case(kernel: str, b, s_q, h_q, h_kv, seqlens, causal, n_split, tma=False,
               mod=None, q_tma=False) -> None:
    """One of CASES against tle_kernels/decode_reference.py (fp32) on poisoned inputs: cache rows
    past seqlen are NaN and block-table entries past a request's pages name no page, so reading
    either shows (NaN, or the emulator's out-of-bounds assertion). Split: a split with no token of
    a request writes lse -inf and o_part 0, any other split a finite lse for the last query.
    ``mod``: the emulated kernel module, when a test altered it."""
    pytest.importorskip("torch")
    from tle_kernels.decode_reference import make_decode_inputs, mla_decode_reference

    mod = emulated(kernel) if mod is None else mod
    q, k, bt, sl = make_decode_inputs(b, s_q, h_q, h_kv, seqlens, device="cpu", seed=11)
    out, lse, o_part, lse_part = run_emulated(kernel, mod, q, k, bt, sl, causal, n_split,
                                              tma=tma, q_tma=q_tma)
    ref_out, ref_lse = mla_decode_reference(q, k, bt, sl, causal=causal)

    check_against_reference(out, lse, ref_out, ref_lse)
    if n_split > 1:
        for i, n in enumerate(seqlens):
            for s in range(n_split):
                lo, hi = split_range(n, n_split, s)
                if hi <= lo:
                    assert (lse_part[i, s] == float("-inf")).all()
                    assert (o_part[i, s] == 0).all()
                else:
                    assert (lse_part[i, s, -1] > float("-inf")).all()  # the last query sees all


def leaning_inputs(lean):
    """Two requests (500 and 463 tokens, h_q = 64) whose scores grow along the positions: q gets
    a component along a random unit direction, and the key at position t of request i one of
    ``lean(i, t, n)`` times that direction (n = 500), so the lazy reference max moves wherever the
    lean grows by more than 2^TAU in log2 units. Returns (q, k, bt, sl, score), score being
    request 0's first 512 scores in log2 units [h_q, 512]."""
    import torch

    from tle_kernels.decode_reference import make_decode_inputs

    b, s_q, h_q, h_kv, n = 2, 1, 64, 1, 500
    q, k, bt, sl = make_decode_inputs(b, s_q, h_q, h_kv, [n, n - 37], device="cpu", seed=5)
    g = torch.Generator().manual_seed(5)
    direction = torch.randn(576, generator=g)
    direction /= direction.norm()
    q = (q.float() + 30.0 * direction).bfloat16()
    for i in range(b):
        for t in range(int(sl[i])):
            k[bt[i, t // 64], t % 64, 0] += (lean(i, t, n) * direction).bfloat16()
    score = (q[0, 0].float() @ k[bt[0, :8].long()].reshape(-1, 576)[:n].float().T) \
        * 576 ** -0.5 * 1.4426950408889634
    return q, k, bt, sl, score


def check_matches_reference_unsplit_and_split(kernel: str, q, k, bt, sl, tma=False) -> None:
    """One split and four against the reference: a skipped or misapplied rescale of the lazy
    reference max is off by a factor of at least 2^8."""
    from tle_kernels.decode_reference import mla_decode_reference

    mod = emulated(kernel)
    ref_out, ref_lse = mla_decode_reference(q, k, bt, sl)
    for n_split in (1, 4):
        out, lse, _, _ = run_emulated(kernel, mod, q, k, bt, sl, False, n_split, tma=tma)
        assert ((out - ref_out).norm() / ref_out.norm()).item() < 5e-3
        assert (lse - ref_lse).abs().max().item() < 1e-4


# ---------------------------------------------------------------- the scheduled kernel (seesaw)

SCHEDULED_CASES = [
    # b, s_q, h_q, h_kv, seqlens, causal, parts
    (6, 1, 16, 1, [0, 1, 63, 64, 65, 1000], False, 3),   # the long request split by 2 parts
    (6, 2, 32, 2, [0, 1, 63, 64, 65, 300], True, 1),     # one part walks the whole batch
    (3, 2, 64, 1, [300, 65, 1], True, 2),                # 128 rows; request 0 split
    (4, 1, 128, 2, [0, 64, 129, 600], False, 5),         # P_eff = X // 2 = 4 < P
    (2, 3, 48, 2, [400, 7], True, 2),                    # 72 rows per kv head: a partial block
    (5, 1, 64, 1, [700, 0, 0, 129, 5], False, 4),        # split 3 ways; empties mid-walk
]
SCHEDULED_IDS = [f"b{c[0]}_sq{c[1]}_hq{c[2]}_hkv{c[3]}_{'causal' if c[5] else 'full'}_P{c[6]}"
                 for c in SCHEDULED_CASES]

# Position-mask edges: seqlens whose smallest causal row limit, seqlen - s_q + 1, falls one
# before, on and one after a tile's end (64, 128, 192: both tiles of a seesaw pair). A tile may
# skip its mask only when it lies wholly before every row's limit (mla_decode_common.needs_mask);
# a condition one position late lets row 0 of a causal block see the key past its limit. The
# last item is the seesaw's part count or the pipe decode's split count.
MASK_EDGE_CASES = [
    # b, s_q, h_q, h_kv, seqlens, causal, parts / n_split
    (6, 2, 32, 1, [64, 65, 66, 127, 128, 129], True, 1),
    (6, 3, 16, 1, [130, 131, 132, 193, 194, 195], True, 2),
    (4, 1, 64, 1, [127, 128, 129, 192], False, 3),
]
MASK_EDGE_IDS = [f"sq{c[1]}_{'causal' if c[5] else 'full'}_{c[6]}" for c in MASK_EDGE_CASES]


def run_emulated_scheduled(kernel: str, mod, q, k, bt, sl, causal, parts, balance=True,
                           tma=False, sm_scale=None, run=1, q_tma=False):
    """The emulated scheduled kernel, launched as mla_decode_launch.launch_scheduled launches it,
    into NaN-poisoned out / lse / partials; the split requests' slots are merged as the
    scheduled combine merges them (with the schedule of tle_kernels/decode_schedule.py, the
    reference the kernel's own arithmetic must agree with). Checks that exactly the whole
    requests' rows were written directly and exactly the split segments' slots as partials.
    Without ``balance`` each program walks ``run`` whole requests; ``q_tma``: one program per
    request copies Q with TMA boxes. Returns (out fp32, lse)."""
    import torch

    from tle_kernels.decode_schedule import segments
    from tle_kernels.mla_decode_launch import scheduled_call

    b, s_q, h_q, _ = q.shape
    sm_scale = 576 ** -0.5 if sm_scale is None else sm_scale
    out = torch.full((b, s_q, h_q, 512), float("nan")).bfloat16()
    lse = torch.full((b, h_q, s_q), float("nan"))
    o_part = torch.full((b + parts, s_q, h_q, 512), float("nan"))
    lse_part = torch.full((b + parts, s_q, h_q), float("nan"))
    grid, args, constexprs = scheduled_call(kernel, q, k, bt, sl, sm_scale, causal, out, lse,
                                            parts, o_part, lse_part, tma, balance, run, q_tma)
    assert constexprs["QTMA"] == int(q_tma)
    getattr(mod, f"mla_decode_{kernel}")[grid](*args, **constexprs)
    out = out.float()
    if not balance:
        assert not out.isnan().any() and not lse.isnan().any()
        return out, lse
    segs = segments([int(x) for x in sl], parts)
    split = {s.request for s in segs if not s.whole}
    slots = {s.slot for s in segs if not s.whole}
    for i in range(b):
        assert out[i].isnan().all() == (i in split), i   # whole: written; split: the combine's
        assert lse[i].isnan().all() == (i in split), i
    for slot in range(b + parts):
        assert (not lse_part[slot].isnan().any()) == (slot in slots), slot
        assert (not o_part[slot].isnan().any()) == (slot in slots), slot
    for i in sorted(split):
        mine = sorted(s.slot for s in segs if s.request == i)
        merged, merged_lse = merge(o_part[mine].unsqueeze(0), lse_part[mine].unsqueeze(0))
        out[i], lse[i] = merged[0], merged_lse[0]
    return out, lse


def check_scheduled_case(kernel: str, b, s_q, h_q, h_kv, seqlens, causal, parts, balance=True,
                         tma=False, mod=None, run=1, q_tma=False) -> None:
    """One of SCHEDULED_CASES against the fp32 reference on poisoned inputs (as check_case)."""
    pytest.importorskip("torch")
    from tle_kernels.decode_reference import make_decode_inputs, mla_decode_reference

    mod = emulated(kernel) if mod is None else mod
    q, k, bt, sl = make_decode_inputs(b, s_q, h_q, h_kv, seqlens, device="cpu", seed=11)
    out, lse = run_emulated_scheduled(kernel, mod, q, k, bt, sl, causal, parts, balance, tma,
                                      run=run, q_tma=q_tma)
    ref_out, ref_lse = mla_decode_reference(q, k, bt, sl, causal=causal)
    check_against_reference(out, lse, ref_out, ref_lse)
