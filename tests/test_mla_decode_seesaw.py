"""The TLE-FlashMLA seesaw MLA decode kernel (tle_kernels/mla_decode_seesaw.py) on the CPU: its
protocol is verified for every pair count the balanced schedule gives a program, its generated
Gluon performs exactly the verified barrier operations, it compiles for sm_90a without register
spills with the balanced schedule and with one program per request, causal or not, its launcher
checks shapes and takes TMA only when asked, and its math (run by the CPU emulator with exactly
the arguments tle_kernels/mla_decode_launch.scheduled_call gives it, the split requests merged by
the schedule of tle_kernels/decode_schedule.py) matches the fp32 decode reference: parts cutting
requests anywhere, empty requests inside a program's walk, causal or not, grouped kv heads,
partial row blocks, odd tile counts (a pair's second tile masked). Each of these holds for both
K producers (the TMA constexpr): cp.async gathers, and TMA boxes shifted so that no cache row
past a request's end reaches a slot. The checks both decode kernels share are
tests/decode_kernel_checks.py's.
"""

from __future__ import annotations

import inspect
import os
import re
from pathlib import Path

import pytest

from tle_kernels.mla_decode_seesaw_launch import seesaw_unsupported_reason

from . import decode_kernel_checks as checks

GOLDEN_TMA = (Path(__file__).resolve().parent / "golden" / "gluon" / "mla_decode_seesaw.tma"
              / "mla_decode_seesaw.mla_decode_seesaw.py")
PRODUCERS = [False, True]
PRODUCER_IDS = ["cp_async", "tma"]

# ---------------------------------------------------------------- protocol and compilation


@pytest.mark.parametrize("tma", PRODUCERS, ids=PRODUCER_IDS)
def test_tle_dump_graph_verifies_for_every_pair_count(tma, capsys):
    """The pair count NP of a program's part comes from cache_seqlens at run time (the balanced
    schedule, mla_decode_parts.py); the kernel body computes it once and hands the same value to
    every partition, so the verifier treats it as one opaque param and proves the protocol for
    every value of it (an idle part has NP = 0). The
    producer's `if TMA:` holds pipe events, so the kernel is read specialised to TMA (0 from
    DEFAULT_CONFIG, 1 with --param): each producer is verified as it runs."""
    checks.check_verified_for_every_value("seesaw", "NP", capsys,
                                          ["--param", f"TMA={int(tma)}"] if tma else [])
    err = capsys.readouterr().err
    assert f"read specialised to BLOCK_H=64, TMA={int(tma)}" in err or err == ""


@pytest.mark.parametrize("tma", PRODUCERS, ids=PRODUCER_IDS)
def test_the_producer_fills_k_slots_by_tma_exactly_when_tma(tma):
    """With TMA every K piece is one TMA copy per field in its window (kv0: kv_l 32 KiB + tkv
    8 KiB, kv1: kv_r + tkv, kv0r: kv_r, kv1l: kv_l), and the full barriers expect those bytes;
    without it no copy and no expect-tx (q stays a cp.async gather either way)."""
    from tle_compiler.frontend import read_kernels
    from tle_compiler.passes import verify

    (info,) = read_kernels(str(checks.kernel_file("seesaw")),
                           bind={"BLOCK_H": 64, "TMA": int(tma), "BALANCE": 1, "RUN": 1})
    ctx = verify(info.program)
    assert ctx.ok and ctx.verdict().kind == "proved"
    full = {b.pipe: (b.expect_tx, tuple(b.tma)) for b in ctx.barriers
            if b.kind == "full" and b.stage == 0}
    want = {"kv0": (32768 + 8192, ("kv_l", "tkv")), "kv1": (32768 + 8192, ("kv_r", "tkv")),
            "kv0r": (32768, ("kv_r",)), "kv1l": (32768, ("kv_l",))}
    for pipe, (tx, fields) in want.items():
        got_tx, got_fields = full[pipe]
        if tma:
            assert (got_tx, set(got_fields)) == (tx, set(fields)), pipe
        else:
            assert (got_tx or 0, got_fields) == (0, ()), pipe
    assert (full["q"][0] or 0, full["q"][1]) == (0, ())


@pytest.mark.parametrize("causal,balance,run", [(False, True, 1), (True, True, 1),
                                               (False, False, 1), (True, False, 1),
                                               (False, False, 2), (True, False, 2)],
                         ids=["balanced", "causal_balanced", "per_request", "causal_per_request",
                              "runs", "causal_runs"])
def test_the_tma_kernel_compiles_for_sm90a_without_spills(causal, balance, run):
    """The TMA producer (the default wherever k_cache allows descriptors), with the balanced
    schedule (a program's walk crossing requests, their outputs flushed inside the loop), with
    one program per request and with runs of two whole requests, with and without the causal
    mask: no register spills with the consumers at [232, 232] (the copy-only producer keeps
    40; consumer0 240 with CAUSAL and whole requests, the producer then 32), and the pipes fit
    in Hopper's shared memory."""
    regs = 240 if causal and not balance else 232
    # one program per request copies Q with TMA too, as its launch does (mla_decode_launch.q_args)
    checks.check_compiles_without_spills("seesaw", causal, None, regs=regs, TMA=1,
                                         BALANCE=int(balance), RUN=run,
                                         QTMA=int(not balance and run == 1))


def test_with_q_by_tma_the_q_barrier_expects_both_boxes():
    """One program per request with QTMA = 1: Q's two [64, 256] boxes are TMA copies in q's
    window, and its full barrier expects their 65,536 bytes (with the K pieces' as before)."""
    from tle_compiler.frontend import read_kernels
    from tle_compiler.passes import verify

    (info,) = read_kernels(str(checks.kernel_file("seesaw")),
                           bind={"BLOCK_H": 64, "TMA": 1, "BALANCE": 0, "RUN": 1, "QTMA": 1})
    ctx = verify(info.program)
    assert ctx.ok and ctx.verdict().kind == "proved"
    full = {b.pipe: (b.expect_tx, tuple(b.tma)) for b in ctx.barriers
            if b.kind == "full" and b.stage == 0}
    assert full["q"][0] == 65536 and set(full["q"][1]) == {"q_l", "q_r"}
    assert full["kv0"][0] == 32768 + 8192


@pytest.mark.parametrize("causal,balance", [(False, True), (True, True), (False, False)],
                         ids=["balanced", "causal_balanced", "per_request"])
def test_the_cp_async_kernel_compiles_for_sm90a_spilling_little(causal, balance):
    """The cp.async producer (the fallback for a cache TMA cannot describe) gathers rows with
    per-thread addresses and needs 56 registers, so the consumers keep [224, 224]: ptxas then
    spills a few scalars of the segment walk (under 64 bytes per thread, reloaded on the flush
    and advance paths), which this bound keeps from growing unnoticed."""
    import importlib

    from tle_compiler.lowering import compile_kernel, ptxas_stats

    mod = importlib.import_module("tle_kernels.mla_decode_seesaw")
    c = compile_kernel(mod.mla_decode_seesaw, dict(mod.DEFAULT_CONFIG["signature"]),
                       dict(mod.DEFAULT_CONFIG["constexprs"], CAUSAL=causal, BALANCE=int(balance),
                            TMA=0))
    st = ptxas_stats(c)
    assert st["ok"], st["log"]
    assert st["spill_stores"] <= 64 and st["spill_loads"] <= 64, st["log"]
    assert not st["wgmma_serialized"], st["log"]  # ptxas C7515
    assert c.metadata.shared <= 232_448


@pytest.mark.parametrize("tma", PRODUCERS, ids=PRODUCER_IDS)
def test_tle_dump_ptx_lowers_the_producer_it_verified(tma, capsys):
    """``tle-dump --ptx --param TMA=1`` lowers the TMA producer it read specialised (rank-4 bulk
    tensor copies, expect-tx arrives), DEFAULT_CONFIG's TMA = 0 the cp.async one (none)."""
    from tle_compiler.cli.dump import main

    code = main(["--ptx", *(["--param", "TMA=1"] if tma else []),
                 str(checks.kernel_file("seesaw"))])
    ptx = capsys.readouterr().out
    assert code == 0
    assert ("cp.async.bulk.tensor.4d" in ptx) == tma
    assert ("mbarrier.arrive.expect_tx" in ptx) == tma
    assert "cp.async.ca.shared" in ptx or "cp.async.cg.shared" in ptx  # q: a gather either way


@pytest.mark.parametrize("balance", [1, 0], ids=["walk", "one_request"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("tma", PRODUCERS, ids=PRODUCER_IDS)
def test_lowering_emits_the_verified_barrier_operations(tma, causal, balance):
    """What is lowered is what was verified (tests/test_lowering_events.py's check): the
    generated Gluon's mbarrier operations, partition by partition, equal the verified events for
    pair counts 0, 1, 2, 3 and 5, and no release hands back a slot an in-flight wgmma reads (the
    P1·V1_L left in flight across the back-edge included). NP comes from the schedule the kernel
    body computes from cache_seqlens, which the trace interpreter cannot evaluate, so the
    prologue's one line computing NP is replaced by the value (a runtime integer) before
    tracing. With TMA, every copy must signal its slot's group's full barrier at its stage, and
    each commit arrive with its expect-tx. Both loops: the walk (BALANCE = 1) and one whole
    request per program (BALANCE = 0, RUN = 1: q waited for once; its pair count is at least
    1, every request owning a pair)."""
    pytest.importorskip("triton.experimental.gluon")
    import tle_kernels.mla_decode_seesaw as mod
    from tle_compiler.testing.gluon_trace import (LoweredKernel, compare, release_rings_of,
                                                  trace_gluon)

    cfg = mod.DEFAULT_CONFIG
    lk = LoweredKernel((str(checks.kernel_file("seesaw")), "mla_decode_seesaw"),
                       dict(cfg["constexprs"], CAUSAL=causal, TMA=int(tma), BALANCE=balance))
    # (x_lo is 0 in a run of whole requests: the reading names the folded value otherwise)
    lines = re.findall(r"^    NP = gl\.maximum\(\(x_hi - \w*x_lo\), 0\)\n", lk.gen.source, re.M)
    assert len(lines) == 1
    np_line = lines[0]
    args = {a: 64 for a, t in cfg["signature"].items() if t == "i32"}
    constexprs = {c: lk.constexprs[c] for c in lk.info.constexprs}
    for n_pairs in (0, 1, 2, 3, 5)[1 - balance:]:
        source = lk.gen.source.replace(np_line, f"    NP = s_q * 0 + {n_pairs}\n")
        trace = trace_gluon(source, lk.gen.kernel, args, constexprs,
                            release_rings=release_rings_of(lk.gen.plans))
        params = lk.params(trace)
        assert params == {"NP": n_pairs}
        problems = compare(lk.expected(params), trace, lk.partitions, source) + trace.violations
        assert not problems, "\n".join(problems)


def test_generated_gluon_of_the_tma_producer_equals_its_golden():
    """The TMA setting's generated Gluon, held like every kernel's DEFAULT_CONFIG one
    (tests/test_golden_gluon.py; TLE_UPDATE_GOLDEN=1 rewrites it): its own file, beside them."""
    import tle_kernels.mla_decode_seesaw as mod
    from tle_compiler.lowering.compile import gluon_source

    constexprs = dict(mod.DEFAULT_CONFIG["constexprs"], TMA=1)
    src = gluon_source((str(checks.kernel_file("seesaw")), "mla_decode_seesaw"), constexprs,
                       debug_waits=False).source
    src = src.replace(str(checks.ROOT) + os.sep, "")
    assert src.count("tma.async_copy_global_to_shared(") == 6
    path = GOLDEN_TMA
    if os.environ.get("TLE_UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(src)
    assert src == path.read_text(), f"generated Gluon (TMA=1) differs from {path}"


# ---------------------------------------------------------------- the launcher


def test_scheduled_launch_checks_shapes_and_gives_the_schedules_grid():
    """scheduled_call: grid (h_kv * row blocks, P) balanced, (.., b) per request; a balanced
    launch needs fp32 partials of b + P slots; rows must be 576 wide; per-request launches pass
    no partials (out / lse stand in, never written); the batch size and the number of 128-request
    chunks of the in-kernel prefix sums are arguments."""
    torch = pytest.importorskip("torch")
    from tle_kernels.decode_reference import make_decode_inputs
    from tle_kernels.mla_decode_launch import parts_for, scheduled_call

    q, k, bt, sl = make_decode_inputs(3, 2, 128, 2, [5, 70, 0], device="cpu", seed=0)
    out, lse = torch.empty(3, 2, 128, 512).bfloat16(), torch.empty(3, 128, 2)
    parts = 5
    o_part, lse_part = torch.empty(3 + parts, 2, 128, 512), torch.empty(3 + parts, 2, 128)
    grid, args, constexprs = scheduled_call("seesaw", q, k, bt, sl, 0.1, True, out, lse, parts,
                                            o_part, lse_part)
    assert grid == (2 * 2, parts)          # 2 kv heads x 2 blocks of 64 rows (2 x 64 heads / 2)
    assert constexprs == {"BLOCK_H": 64, "CAUSAL": True, "BALANCE": 1, "TMA": 0, "RUN": 1,
                          "QTMA": 0}
    o_arg = list(mod_signature()).index("opart_ptr")
    assert args[o_arg] is o_part and args[o_arg + 1] is lse_part
    b_arg = list(mod_signature()).index("B")
    assert args[b_arg:b_arg + 2] == (3, 1)
    grid, args, constexprs = scheduled_call("seesaw", q, k, bt, sl, 0.1, False, out, lse, parts,
                                            balance=False)
    assert grid == (4, 3) and not constexprs["BALANCE"]
    assert args[o_arg] is lse and args[o_arg + 1] is lse
    assert constexprs["RUN"] == 1
    # runs of whole requests: ceil(b / run) programs per row block
    for run, progs in ((2, 2), (3, 1), (5, 1)):
        grid, _, constexprs = scheduled_call("seesaw", q, k, bt, sl, 0.1, False, out, lse, parts,
                                             balance=False, run=run)
        assert grid == (4, progs) and constexprs["RUN"] == run
    with pytest.raises(ValueError, match="run must be >= 1"):
        scheduled_call("seesaw", q, k, bt, sl, 0.1, False, out, lse, parts, balance=False, run=0)
    with pytest.raises(ValueError, match="needs o_part and lse_part"):
        scheduled_call("seesaw", q, k, bt, sl, 0.1, False, out, lse, parts)
    with pytest.raises(ValueError, match="o_part must be contiguous fp32"):
        scheduled_call("seesaw", q, k, bt, sl, 0.1, False, out, lse, parts, o_part[1:], lse_part)
    with pytest.raises(ValueError, match="seesaw needs q and k_cache rows of 576"):
        scheduled_call("seesaw", q[..., :512], k, bt, sl, 0.1, False, out, lse, parts, o_part,
                       lse_part)
    # parts: the SMs over the (kv head, row block) items, at least one
    assert parts_for(128, 1, 128, 1, 132) == 66 and parts_for(64, 2, 128, 1, 132) == 33
    assert parts_for(1, 1, 16, 1, 132) == 132 and parts_for(1, 4, 128, 1, 4) == 1


def mod_signature():
    import tle_kernels.mla_decode_seesaw as mod

    return mod.DEFAULT_CONFIG["signature"]


def test_seesaw_unsupported_reason():
    checks.check_unsupported_reason("seesaw", seesaw_unsupported_reason)


def test_launch_refuses_unaligned_rows_and_a_bad_balance_setting(monkeypatch):
    """launch_scheduled refuses unaligned q rows before anything runs, naming the kernel; the
    balance setting: keyword, else TLE_DECODE_BALANCE (0 / 1), else balanced."""
    torch = pytest.importorskip("torch")
    from tle_kernels.decode_reference import make_decode_inputs
    from tle_kernels.mla_decode_launch import BALANCE_ENV, launch_scheduled, use_balance

    q, k, bt, sl = make_decode_inputs(2, 1, 16, 1, [5, 70], device="cpu", seed=0)
    out, lse = torch.empty(2, 1, 16, 512).bfloat16(), torch.empty(2, 16, 1)
    unaligned = torch.zeros(2, 1, 16, 577).bfloat16()[..., 1:]  # rows start 2 bytes in
    with pytest.raises(ValueError, match="q: the seesaw decode kernel needs 16-byte aligned"):
        launch_scheduled("seesaw", unaligned, k, bt, sl, 0.1, False, out, lse, 3)
    monkeypatch.delenv(BALANCE_ENV, raising=False)
    # balanced only where one program per request would leave SMs idle: a short batch, or one
    # just past a whole number of waves
    assert use_balance(None, 7, 66) and not use_balance(None, 128, 66)
    assert not use_balance(None, 128, 132) and use_balance(None, 140, 132)
    assert not use_balance(None, 64, 33) and use_balance(None, 100, 132)
    assert not use_balance(False, 7, 66) and use_balance(True, 128, 66)
    monkeypatch.setenv(BALANCE_ENV, "0")
    assert not use_balance(None, 7, 66) and use_balance(True, 7, 66)
    monkeypatch.setenv(BALANCE_ENV, "1")
    assert use_balance(None, 128, 66)
    monkeypatch.setenv(BALANCE_ENV, "maybe")
    with pytest.raises(ValueError, match=BALANCE_ENV):
        use_balance()


def test_the_run_length_is_the_keyword_else_the_environment_else_one(monkeypatch):
    """run_length: the keyword, else TLE_DECODE_RUN (a positive integer), else 1 (one program per
    request); never longer than the batch; 0, negative or non-integer settings refused naming
    the setting."""
    from tle_kernels.mla_decode_launch import RUN_ENV, run_length

    monkeypatch.delenv(RUN_ENV, raising=False)
    assert run_length(128, 66) == 1 and run_length(128, 66, 2) == 2 and run_length(3, 66, 8) == 3
    assert run_length(0, 66, 4) == 1
    monkeypatch.setenv(RUN_ENV, "3")
    assert run_length(128, 66) == 3 and run_length(128, 66, 1) == 1
    for bad in ("0", "-2", "two", "1.5"):
        monkeypatch.setenv(RUN_ENV, bad)
        with pytest.raises(ValueError, match=RUN_ENV):
            run_length(128, 66)
    with pytest.raises(ValueError, match="run must be >= 1"):
        run_length(128, 66, 0)


def test_the_launcher_takes_tma_unless_told_or_unable(monkeypatch):
    """tma=None: TMA whenever k_cache allows the descriptors (the producer measured faster on the
    H200), cp.async for a cache whose pages are not 16-byte aligned; TMA=True refused for it,
    naming why; TLE_DECODE_TMA forces either, the keyword wins over it; with TMA the two
    descriptors follow k_cache (boxes [1, 64, 1, 256] and [1, 64, 1, 64]), without it k_cache
    stands in their places."""
    torch = pytest.importorskip("torch")
    from tle_kernels.decode_reference import make_decode_inputs
    from tle_kernels.mla_decode_launch import TMA_ENV, scheduled_call, use_tma

    monkeypatch.delenv(TMA_ENV, raising=False)
    q, k, bt, sl = make_decode_inputs(2, 1, 16, 1, [5, 70], device="cpu", seed=0)
    assert use_tma("seesaw", k) and use_tma("seesaw", k, True) and not use_tma("seesaw", k, False)
    assert use_tma("pipe", k) and not use_tma("pipe", k, False)  # the pipe decode's producer too
    odd = torch.zeros(k.numel() + 8).bfloat16()[1:1 + k.numel()].view(k.shape)  # base 2 B off
    assert not use_tma("seesaw", odd) and not use_tma("pipe", odd)
    with pytest.raises(ValueError, match="cannot copy K pages with TMA: k_cache is not 16-byte"):
        use_tma("seesaw", odd, True)
    monkeypatch.setenv(TMA_ENV, "0")
    assert not use_tma("seesaw", k) and use_tma("seesaw", k, True)
    monkeypatch.setenv(TMA_ENV, "1")
    assert use_tma("seesaw", k) and not use_tma("seesaw", k, False)
    monkeypatch.setenv(TMA_ENV, "yes")
    with pytest.raises(ValueError, match=TMA_ENV):
        use_tma("seesaw", k)

    out, lse = torch.empty(2, 1, 16, 512).bfloat16(), torch.empty(2, 16, 1)
    for tma in (False, True):
        _, args, constexprs = scheduled_call("seesaw", q, k, bt, sl, 0.1, False, out, lse, 2,
                                             tma=tma, balance=False)
        assert constexprs["TMA"] == int(tma)
        if tma:
            assert [list(d.block_shape) for d in args[2:4]] == [[1, 64, 1, 256], [1, 64, 1, 64]]
            assert all(d.base is k and list(d.shape) == list(k.shape) for d in args[2:4])
        else:
            assert args[2] is k and args[3] is k


def test_a_launch_compiles_each_producer_from_its_arguments():
    """Without a GPU a launch stops after compiling: the kernel is read specialised to the
    launch's TMA, the TMA launch's descriptor types come from the host descriptors (rank-4 bulk
    copies in its PTX), the cp.async launch's k_desc is k_cache (no bulk copy)."""
    torch = pytest.importorskip("torch")
    from tle_compiler.diagnostics import TleError
    from tle_kernels.decode_reference import make_decode_inputs
    from tle_kernels.mla_decode_launch import scheduled_call
    from tle_kernels.mla_decode_seesaw import mla_decode_seesaw

    q, k, bt, sl = make_decode_inputs(2, 1, 16, 1, [5, 70], device="cpu", seed=0)
    out, lse = torch.empty(2, 1, 16, 512).bfloat16(), torch.empty(2, 16, 1)
    for tma in (True, False):
        grid, args, constexprs = scheduled_call("seesaw", q, k, bt, sl, 0.1, False, out, lse,
                                                2, tma=tma, balance=False)
        with pytest.raises(TleError) as e:
            mla_decode_seesaw[grid](*args, **constexprs)
        assert e.value.check == "no-gpu"
    bulk = {dict(key[0])["k_desc"]: c.asm["ptx"].count("cp.async.bulk.tensor.4d")
            for key, c in mla_decode_seesaw.runtime.cache.items()}
    assert bulk["tensordesc<bf16[1, 64, 1, 256]>"] == 6 and bulk["*bf16"] == 0


def test_q_tma_is_taken_where_a_row_blocks_q_rows_are_consecutive(monkeypatch):
    """The Q copy by TMA boxes (mla_decode_launch.use_q_tma): taken by default where q viewed as
    rows [b * s_q * h_q, 576] holds each row block's rows consecutively (h_kv == 1 or s_q == 1,
    first three dims flattening, 16-byte rows); refused, naming why, when forced where it cannot;
    TLE_DECODE_QTMA forces either, the keyword wins; dropped by a walking launch (its Q staging
    sits under a run-time `if`, which an expect-tx commit cannot follow)."""
    torch = pytest.importorskip("torch")
    from tle_kernels.decode_reference import make_decode_inputs
    from tle_kernels.mla_decode_launch import QTMA_ENV, q_tma_reason, scheduled_call, use_q_tma

    monkeypatch.delenv(QTMA_ENV, raising=False)
    q, k, bt, sl = make_decode_inputs(3, 2, 32, 1, [5, 70, 130], device="cpu", seed=0)
    assert q_tma_reason(q, 1) is None and use_q_tma(q, 1)
    assert q_tma_reason(q[:, :1].contiguous(), 2) is None   # s_q == 1: any h_kv
    assert "do not flatten" in q_tma_reason(q[:, :1], 1)     # a request's second query skipped
    assert "not consecutive" in q_tma_reason(q, 2)    # grouped heads and two queries
    with pytest.raises(ValueError, match="cannot copy Q with TMA: a row block's q rows"):
        use_q_tma(q, 2, True)
    assert not use_q_tma(q, 2)
    wide = torch.zeros(3, 2, 32, 640).bfloat16()[..., :576]   # padded rows: still flatten
    assert q_tma_reason(wide, 1) is None
    gap = torch.zeros(3, 3, 32, 576).bfloat16()[:, :2]         # a query gap between requests
    assert "do not flatten" in q_tma_reason(gap, 1)
    odd = torch.zeros(q.numel() + 8).bfloat16()[1:1 + q.numel()].view(q.shape)
    assert "16-byte" in q_tma_reason(odd, 1)
    monkeypatch.setenv(QTMA_ENV, "0")
    assert not use_q_tma(q, 1) and use_q_tma(q, 1, True)
    monkeypatch.setenv(QTMA_ENV, "1")
    assert use_q_tma(q, 1) and not use_q_tma(q, 1, False)

    out, lse = torch.empty(3, 2, 32, 512).bfloat16(), torch.empty(3, 32, 2)
    _, args, cx = scheduled_call("seesaw", q, k, bt, sl, 0.1, False, out, lse, 2, tma=True,
                                 balance=False, q_tma=True)
    assert cx["QTMA"] == 1
    assert list(args[4].block_shape) == [64, 256] and list(args[4].shape) == [3 * 2 * 32, 576]
    assert list(args[4].strides) == [576, 1] and args[4].base is q
    for balance, run in ((False, 2), (True, 1)):
        o_part, lse_part = torch.empty(5, 2, 32, 512), torch.empty(5, 2, 32)
        _, args, cx = scheduled_call("seesaw", q, k, bt, sl, 0.1, False, out, lse, 2, o_part,
                                     lse_part, tma=True, balance=balance, run=run, q_tma=True)
        assert cx["QTMA"] == 0 and args[4] is q
    with pytest.raises(ValueError, match="cannot copy Q with TMA"):
        scheduled_call("seesaw", gap, k, bt, sl, 0.1, False, out, lse, 2, tma=True,
                       balance=False, q_tma=True)


def test_a_q_tma_launch_copies_q_with_two_boxes():
    """Compiled for sm_90a without a GPU: the QTMA launch's producer copies Q with two rank-2
    bulk copies and no cp.async, beside the six rank-4 K copies of a pair."""
    torch = pytest.importorskip("torch")
    from tle_compiler.diagnostics import TleError
    from tle_kernels.decode_reference import make_decode_inputs
    from tle_kernels.mla_decode_launch import scheduled_call
    from tle_kernels.mla_decode_seesaw import mla_decode_seesaw

    q, k, bt, sl = make_decode_inputs(2, 1, 128, 1, [5, 70], device="cpu", seed=0)
    out, lse = torch.empty(2, 1, 128, 512).bfloat16(), torch.empty(2, 128, 1)
    grid, args, constexprs = scheduled_call("seesaw", q, k, bt, sl, 0.1, False, out, lse, 2,
                                            tma=True, balance=False, q_tma=True)
    with pytest.raises(TleError) as e:
        mla_decode_seesaw[grid](*args, **constexprs)
    assert e.value.check == "no-gpu"
    ptx = next(c.asm["ptx"] for key, c in mla_decode_seesaw.runtime.cache.items()
               if dict(key[0])["q_desc"] == "tensordesc<bf16[64, 256]>")
    assert ptx.count("cp.async.bulk.tensor.2d") == 2 and ptx.count("cp.async.bulk.tensor.4d") == 6
    assert "cp.async.cg" not in ptx


Q_TMA_CASES = [c for c in checks.SCHEDULED_CASES if c[3] == 1 or c[1] == 1]


@pytest.mark.parametrize("b,s_q,h_q,h_kv,seqlens,causal,parts", Q_TMA_CASES,
                         ids=[f"b{c[0]}_sq{c[1]}_hq{c[2]}_hkv{c[3]}" for c in Q_TMA_CASES])
@pytest.mark.parametrize("tma", PRODUCERS, ids=PRODUCER_IDS)
def test_emulated_q_tma_programs_match_the_reference(tma, b, s_q, h_q, h_kv, seqlens, causal,
                                                     parts):
    """One program per request with Q copied by TMA boxes: partial row blocks (16 or 32 rows of
    a kv head) take the next rows of q into their unused rows (or zeros past q's end), which
    must not reach the real rows' outputs."""
    checks.check_scheduled_case("seesaw", b, s_q, h_q, h_kv, seqlens, causal, parts,
                                balance=False, tma=tma, q_tma=True)


def test_emulated_q_tma_partial_blocks_ignore_the_rows_they_borrow():
    """h_q 16, s_q 1: each program's box holds its request's 16 rows and 48 rows of the next
    requests. Those requests' q rows are NaN and +-inf: the first requests' outputs stay the
    reference's (each row's scores, softmax and output are its own), and the poisoned rows'
    outputs are what the reference gives them."""
    torch = pytest.importorskip("torch")

    def poison(q):
        q = q.clone()
        q[2, :, :8] = float("nan")
        q[2, :, 8:] = float("inf")
        q[3, :, :] = -float("inf")
        return q

    from tle_kernels.decode_reference import make_decode_inputs, mla_decode_reference
    from tle_kernels.mla_decode_launch import scheduled_call

    q, k, bt, sl = make_decode_inputs(4, 1, 16, 1, [70, 129, 64, 5], device="cpu", seed=3)
    q = poison(q)
    out = torch.full((4, 1, 16, 512), float("nan")).bfloat16()
    lse = torch.full((4, 16, 1), float("nan"))
    grid, args, cx = scheduled_call("seesaw", q, k, bt, sl, 576 ** -0.5, False, out, lse, 4,
                                    tma=True, balance=False, q_tma=True)
    assert cx["QTMA"] == 1
    checks.emulated("seesaw").mla_decode_seesaw[grid](*args, **cx)
    ref_out, ref_lse = mla_decode_reference(q, k, bt, sl)
    checks.check_against_reference(out[:2].float(), lse[:2], ref_out[:2], ref_lse[:2])
    for i in (2, 3):  # rows of q that are NaN / inf: the same non-finite outputs as the reference
        assert torch.equal(out[i].float().isnan(), ref_out[i].isnan())


# ---------------------------------------------------------------- math, in CPU emulation


@pytest.mark.parametrize("b,s_q,h_q,h_kv,seqlens,causal,parts", checks.SCHEDULED_CASES,
                         ids=checks.SCHEDULED_IDS)
@pytest.mark.parametrize("tma", PRODUCERS, ids=PRODUCER_IDS)
def test_emulated_kernel_matches_the_reference(tma, b, s_q, h_q, h_kv, seqlens, causal, parts):
    """Balanced over ``parts`` programs: the cuts fall inside requests, so segments of one
    request are written as partials by several programs and merged, while whole requests are
    written directly (run_emulated_scheduled checks which rows and slots were written). The
    seqlens give odd tile counts (1, 3, 5 pages), whose last pair's second tile has no position:
    its page must not be read. Cache rows past seqlen are NaN: with TMA the shifted boxes must
    keep them out of the slots (a zero probability times NaN is NaN)."""
    checks.check_scheduled_case("seesaw", b, s_q, h_q, h_kv, seqlens, causal, parts, tma=tma)


@pytest.mark.parametrize("b,s_q,h_q,h_kv,seqlens,causal,parts", checks.SCHEDULED_CASES[::2],
                         ids=checks.SCHEDULED_IDS[::2])
def test_emulated_per_request_programs_match_the_reference(b, s_q, h_q, h_kv, seqlens, causal,
                                                           parts):
    """BALANCE = False: one program per request, every output written directly."""
    checks.check_scheduled_case("seesaw", b, s_q, h_q, h_kv, seqlens, causal, parts,
                                balance=False)


@pytest.mark.parametrize("b,s_q,h_q,h_kv,seqlens,causal,parts", checks.SCHEDULED_CASES[1::2],
                         ids=checks.SCHEDULED_IDS[1::2])
@pytest.mark.parametrize("run", [2, 4])
@pytest.mark.parametrize("tma", PRODUCERS, ids=PRODUCER_IDS)
def test_emulated_runs_of_whole_requests_match_the_reference(tma, run, b, s_q, h_q, h_kv,
                                                             seqlens, causal, parts):
    """BALANCE = False, RUN > 1: each program walks a run of whole requests (the last run
    shorter, programs past the batch idle; empty requests mid-run), every output written
    directly, each request's state started afresh at its first pair."""
    checks.check_scheduled_case("seesaw", b, s_q, h_q, h_kv, seqlens, causal, parts,
                                balance=False, tma=tma, run=run)


@pytest.mark.parametrize("b,s_q,h_q,h_kv,seqlens,causal,parts", checks.MASK_EDGE_CASES,
                         ids=checks.MASK_EDGE_IDS)
@pytest.mark.parametrize("tma", PRODUCERS, ids=PRODUCER_IDS)
def test_emulated_mask_edges_match_the_reference(tma, b, s_q, h_q, h_kv, seqlens, causal, parts):
    """consumer1's tiles skip the position mask before every row's limit (checks.MASK_EDGE_CASES)."""
    checks.check_scheduled_case("seesaw", b, s_q, h_q, h_kv, seqlens, causal, parts, tma=tma)


@pytest.mark.parametrize("mutation", ["no_flush", "always_whole", "no_reset", "stale_tail"])
def test_emulated_checks_catch_a_broken_segment_walk(mutation):
    """The cases above fail when the walk is broken: a segment's output not flushed when the
    next request starts, every request taken as whole (partials written to out), the running
    max and sum not reset between requests, or q's RoPE tail kept from the previous request."""
    mod = checks.emulated("seesaw")
    g0, g1 = mod.consumer0.__globals__, mod.consumer1.__globals__
    if mutation == "no_flush":
        for g in (g0, g1):
            g["flush_segment"] = lambda *a, **k: None
    elif mutation == "always_whole":
        for g in (g0, g1):
            g["whole_in_part"] = lambda s, e, lo, hi: (s >= lo) | (s < lo)
    elif mutation == "no_reset":
        import inspect
        import textwrap

        for name in ("consumer0", "consumer1"):  # the same functions without the two resets
            fn = getattr(mod, name)
            code = textwrap.dedent(inspect.getsource(fn))
            kept = [ln for ln in code.splitlines()
                    if "ref = tl.full([BLOCK_H], float(\"-inf\")" not in ln.strip()
                    or not ln.startswith(" " * 12)]
            kept = [ln for ln in kept if not (ln.startswith(" " * 12)
                                              and ln.strip() == "l_i = tl.zeros([BLOCK_H], tl.float32)")]
            assert len(kept) == len(code.splitlines()) - 2, name
            exec(compile("\n".join(kept), inspect.getsourcefile(fn), "exec"), fn.__globals__)
    elif mutation == "stale_tail":
        real_tail = g0["q_tail_of"]
        first = {}

        def stale(*args):
            key = "t"
            if key not in first:
                first[key] = real_tail(*args)
            return first[key]
        g0["q_tail_of"] = stale
    b, s_q, h_q, h_kv, seqlens, causal, parts = checks.SCHEDULED_CASES[0]
    with pytest.raises(AssertionError):
        checks.check_scheduled_case("seesaw", b, s_q, h_q, h_kv, seqlens, causal, parts, mod=mod)


def test_emulated_tma_check_sees_an_unshifted_copy():
    """The cases above fail when the TMA boxes are copied at token 0 (the mask still right): the
    NaN rows past seqlen of a request's last page reach the slot and P·V."""
    mod = checks.emulated("seesaw")
    mod.producer.__globals__["page_shift"] = lambda lo, hi, tile: 0 * (hi - lo)
    b, s_q, h_q, h_kv, seqlens, causal, parts = checks.SCHEDULED_CASES[0]
    with pytest.raises(AssertionError):
        checks.check_scheduled_case("seesaw", b, s_q, h_q, h_kv, seqlens, causal, parts,
                                    tma=True, mod=mod)


@pytest.mark.parametrize("first_of_pair", [False, True],
                         ids=["moves_on_both_tiles", "moves_on_consumer0_tiles"])
@pytest.mark.parametrize("tma", PRODUCERS, ids=PRODUCER_IDS)
def test_emulated_lazy_rescale_moves_its_reference_in_each_pair(tma, first_of_pair):
    """Each K tile's keys lean towards q by one more step than the previous tile's, a step of
    ~12 log2 units (more than 2^TAU), so the lazy reference max moves at every tile: at
    consumer0's tile of a pair (its own rescale alpha0 before P0·V0) and at consumer1's (the beta
    that consumer0 applies to its output and to the P0 it hands over). With ``first_of_pair`` the
    tiles of each pair are swapped, so the reference moves only at consumer0's tile and beta stays
    1. One program per request and three balanced parts must match the reference."""
    def lean(i, t, n):  # the keys of tile j lean towards q by j (or j's partner) steps
        tile = t // 64
        return (tile ^ 1 if first_of_pair else tile) * 6.5

    q, k, bt, sl, score = checks.leaning_inputs(lean)
    torch = pytest.importorskip("torch")
    tile_max = torch.stack([score[:, 64 * j:64 * j + 64].max(1).values for j in range(8)])
    if first_of_pair:  # consumer0's tile (2p) is each pair's highest, 2^TAU above the last pair's
        assert (tile_max[0::2] > tile_max[1::2]).all()
        assert (tile_max[2::2] - tile_max[0:-2:2] > 8).all()
    else:              # every tile is 2^TAU above the one before
        assert (tile_max[1:] - tile_max[:-1] > 8).all()
    from tle_kernels.decode_reference import mla_decode_reference

    mod = checks.emulated("seesaw")
    ref_out, ref_lse = mla_decode_reference(q, k, bt, sl)
    for parts, balance in ((1, False), (3, True)):
        out, lse = checks.run_emulated_scheduled("seesaw", mod, q, k, bt, sl, False, parts,
                                                 balance, tma)
        assert ((out - ref_out).norm() / ref_out.norm()).item() < 5e-3
        assert (lse - ref_lse).abs().max().item() < 1e-4


def test_emulated_schedule_over_several_prefix_sum_chunks():
    """260 requests: the kernel's prefix sums run over three chunks of 128 (mla_decode_parts
    .SCHED_CHUNK), so a part's first request and where its pairs start are found across chunk
    boundaries; empty and one-pair requests everywhere, five balanced parts."""
    import random

    rng = random.Random(0)
    seqlens = [rng.choice([0, 1, 5, 63, 64, 65, 129]) for _ in range(260)]
    checks.check_scheduled_case("seesaw", 260, 1, 16, 1, seqlens, False, 5, tma=True)


@pytest.mark.parametrize("balance,per_pair", [(1, True), (0, False)], ids=["walk", "one_request"])
def test_q_is_waited_for_per_pair_only_in_the_walk(balance, per_pair):
    """One program per request (BALANCE = 0, RUN = 1) needs no walk: each consumer waits for q
    once, before its pair loop, and releases it once after; the walk waits for and releases q
    at every pair (a request's Q stays in the slot while its segment goes on)."""
    import tle_kernels.mla_decode_seesaw as mod
    from tle_compiler.lowering.compile import gluon_source

    constexprs = dict(mod.DEFAULT_CONFIG["constexprs"], TMA=1, BALANCE=balance)
    src = gluon_source((str(checks.kernel_file("seesaw")), "mla_decode_seesaw"), constexprs,
                       debug_waits=False).source
    for consumer in ("consumer0", "consumer1"):
        body = src[src.index(f"def {consumer}("):]
        body = body[:body.index("\n@gluon.jit")] if "\n@gluon.jit" in body else body
        loop = body.index("for p in range(")
        waits = [m.start() for m in re.finditer(r"mbarrier\.wait\(q_full0\.index\(", body)]
        arrives = [m.start() for m in re.finditer(r"mbarrier\.arrive\(q_empty0\.index\(", body)]
        assert len(waits) == 1 and len(arrives) == 1, consumer
        assert (waits[0] > loop) == per_pair, consumer
        assert "left" in body[loop:] if per_pair else "left" not in body[loop:], consumer
