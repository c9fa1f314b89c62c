"""The seesaw SparseMLA prefill at d_qk = 512 with attn_sink and topk_length on the CPU.

tle_kernels/sparse_mla_seesaw_d512_sink.py (the seesaw's partitions at ROPE = 0, SINK = 1) and
tle_kernels/sparse_mla_seesaw_d512_topk_length.py (the topk_length seesaw's partitions at
ROPE = 0, HAS_SINK 0 or 1), launched by tle_kernels/sparse_mla_seesaw_sink_topk_launch.py from
``api.launch``:

- their routing: ``impl="auto"`` and ``impl="seesaw"`` run them for d_qk = 512 with attn_sink,
  topk_length or both (never the naive kernel, where the seesaw takes the call);
- their math, run by the CPU emulator (every address bounds-checked: a read of a 576-wide row
  would leave the 512-wide tensors) through ``api.launch`` against the fp32 reference, with the
  576 kernels replaced by ones that fail if launched: per-row lengths 0, 1, 63, 64, 65, 127, 128,
  129, topk, past topk and negative (slots past a length naming NaN kv rows), sinks of -inf,
  +inf, +-60 and 1e4; the topk_length walk on more items than programs, fewer, one program per
  item; each program running exactly its items' pairs; the last wave split into topk pieces
  (topk_length: pieces of the same d512 kernel with their own lengths; sink: pieces of the d512
  plain seesaw), the sink applied once by the merge; repeated last items of the persistent sink
  kernel;
- their protocol: tle-dump proves the sink kernel for every ROUNDS and the topk_length kernel for
  every NP, with no RoPE tail field in either; the generated barrier operations are the
  verified events;
- their lowering: PTX for sm_90a without spills for every constexpr combination; the sink
  kernel's TTGIR is the d512 kernel's plus the sink's epilogue, and the topk_length kernel's is
  the 576 one's without the tail (two tail wgmmas, two tail gathers and buffers, the q-tail
  loads), nothing added.
"""

from __future__ import annotations

import collections
import functools
import re
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

import tle_kernels.sparse_mla_seesaw as plain_mod  # noqa: E402
import tle_kernels.sparse_mla_seesaw_d512 as d512_mod  # noqa: E402
import tle_kernels.sparse_mla_seesaw_d512_sink as d512_sink_mod  # noqa: E402
import tle_kernels.sparse_mla_seesaw_d512_topk_length as d512_length_mod  # noqa: E402
import tle_kernels.sparse_mla_seesaw_sink as sink_mod  # noqa: E402
import tle_kernels.sparse_mla_seesaw_topk_length as length_mod  # noqa: E402
from tle_kernels import api  # noqa: E402
from tle_kernels.reference import sparse_mla_reference  # noqa: E402

from .test_seesaw_sink_topk import LAUNCHES, check, expected_pairs, hostile_sink  # noqa: E402

KDIR = Path(__file__).resolve().parent.parent / "tle_kernels"
D512 = KDIR / "sparse_mla_seesaw_d512.py"
D512_SINK = KDIR / "sparse_mla_seesaw_d512_sink.py"
D512_LENGTH = KDIR / "sparse_mla_seesaw_d512_topk_length.py"
LENGTH = KDIR / "sparse_mla_seesaw_topk_length.py"
SCALE = 512 ** -0.5
BAD = (-1, -2**31, 2**31 - 1)  # and s_kv


# ------------------------------------------------------------------------------------- routing

@pytest.mark.parametrize("sink,tlen", [(True, False), (False, True), (True, True)],
                         ids=["sink", "topk_length", "both"])
@pytest.mark.parametrize("h_q,topk", [(128, 2048), (64, 128), (192, 384), (48, 2048)])
def test_auto_runs_the_seesaw_for_d512_with_sink_or_topk_length(h_q, topk, sink, tlen):
    assert api.unsupported_reason("seesaw", h_q, 512, topk, sink, tlen) is None
    assert api.select_impl("auto", h_q, 512, topk, sink, tlen) == "seesaw"
    assert api.select_impl("seesaw", h_q, 512, topk, sink, tlen) == "seesaw"
    assert api.supported_impls(h_q, 512, topk, sink, tlen) == ["naive", "seesaw"]


def test_the_launcher_picks_the_kernels_of_the_width():
    from tle_kernels import sparse_mla_seesaw_sink_topk_launch as launch

    assert launch.sink_kernel(512) is d512_sink_mod.sparse_mla_seesaw_d512_sink
    assert launch.sink_kernel(576) is sink_mod.sparse_mla_seesaw_sink
    assert launch.topk_length_kernel(512) is d512_length_mod.sparse_mla_seesaw_d512_topk_length
    assert launch.topk_length_kernel(576) is length_mod.sparse_mla_seesaw_topk_length


# ------------------------------------------------------------------------------ emulated math

class NotThisOne:
    """Stands for a kernel a d_qk = 512 call must not launch."""

    def __init__(self, what):
        self.what = what

    def __getitem__(self, grid):
        raise AssertionError(f"{self.what} ran a d_qk = 512 call")


@pytest.fixture
def emulated(monkeypatch):
    """api.launch runs the emulated d512 kernels (the plain one, for tail pieces, the sink one
    and the topk_length one); the 576 kernels raise if launched. ``emulated(sms)`` sets the SM
    count persistent launches see."""
    from tle_compiler.testing.emulator import load_kernel_module

    for mod, path, name in ((d512_mod, D512, "sparse_mla_seesaw_d512"),
                            (d512_sink_mod, D512_SINK, "sparse_mla_seesaw_d512_sink"),
                            (d512_length_mod, D512_LENGTH, "sparse_mla_seesaw_d512_topk_length")):
        emu = load_kernel_module(path, dot_dtypes=(torch.bfloat16,))
        monkeypatch.setattr(mod, name, getattr(emu, name))
    for mod, name in ((plain_mod, "sparse_mla_seesaw"), (sink_mod, "sparse_mla_seesaw_sink"),
                      (length_mod, "sparse_mla_seesaw_topk_length")):
        monkeypatch.setattr(mod, name, NotThisOne(name))

    def set_sms(sms: int) -> None:
        monkeypatch.setattr(api, "sm_count", lambda device: sms)
    set_sms(3)
    return set_sms


def make_case(s_q, h_q, topk, lengths=None, seed=0, s_kv=300, poison=40):
    """q [s_q, h_q, 512], kv [s_kv + poison, 1, 512] (the last ``poison`` rows NaN), indices:
    slots past a row's length name a NaN row (reading or using one shows as NaN), the others
    random real rows with ~1/8 invalid values of every kind."""
    g = torch.Generator().manual_seed(seed)
    q = (torch.randn(s_q, h_q, 512, generator=g) * 0.3).bfloat16()
    kv = (torch.randn(s_kv + poison, 1, 512, generator=g) * 0.3).bfloat16()
    kv[s_kv:] = float("nan")
    idx = torch.randint(0, s_kv, (s_q, 1, topk), generator=g, dtype=torch.int32)
    pick = torch.rand(s_q, 1, topk, generator=g) < 0.125
    bad = torch.tensor(BAD + (s_kv + poison,), dtype=torch.int32)
    idx[pick] = bad[torch.randint(0, len(bad), (int(pick.sum()),), generator=g)]
    if lengths is not None:
        for s, n in enumerate(lengths.tolist()):
            n = max(0, min(n, topk))
            idx[s, 0, n:] = torch.randint(s_kv, s_kv + poison, (topk - n,), generator=g,
                                          dtype=torch.int32)
    return q, kv, idx


def run_seesaw(q, kv, idx, sink=None, tlen=None, impl="seesaw", **kw):
    out, ml, lse = api.empty_outputs(q)
    out.fill_(float("nan")), ml.fill_(float("nan")), lse.fill_(float("nan"))
    assert api.launch(impl, q, kv, idx, SCALE, out, ml, lse, attn_sink=sink,
                      topk_length=tlen, **kw) == "seesaw"
    return out, ml, lse


TOPK = 256
LENGTHS = torch.tensor([0, 1, 63, 64, 65, 127, 128, 129, 255, TOPK, 300, -5], dtype=torch.int32)


@pytest.mark.parametrize("launch", list(LAUNCHES))
@pytest.mark.parametrize("with_sink", [False, True], ids=["topk_length", "topk_length+sink"])
def test_d512_topk_length_rows_stop_early_and_match_the_reference(emulated, with_sink, launch):
    """Per-row lengths around every tile and pair boundary (TOPK = 256: 0 to 2 pairs per row) on
    24 items; auto takes the call."""
    sms, persistent = LAUNCHES[launch]
    emulated(sms)
    s_q, h_q = len(LENGTHS), 128
    q, kv, idx = make_case(s_q, h_q, TOPK, LENGTHS, seed=3)
    sink = hostile_sink(h_q) if with_sink else None
    got = run_seesaw(q, kv, idx, sink, LENGTHS, impl="auto", persistent=persistent)
    check(got, sparse_mla_reference(q, kv, idx, SCALE, attn_sink=sink, topk_length=LENGTHS))
    empty = LENGTHS <= 0
    assert (got[0][empty] == 0).all() and (got[2][empty] == float("inf")).all()
    assert (got[1][empty] == float("-inf")).all()


@pytest.mark.parametrize("sms", [5, 100])
def test_d512_topk_length_programs_run_only_their_items_pairs(emulated, monkeypatch, sms):
    """Each program's kv0 acquires (one per K-tile pair) are the sum over its items of
    max(1, ceil(n / 128)): the d512 walk stops each row early as the 576 one does."""
    from tle_compiler.testing import emulator

    counts = collections.Counter()
    real = emulator.make_language

    def counting(*a, **kw):  # the emulation with the kv0 writer's acquires counted per program
        tl, tle = real(*a, **kw)
        pipe = tle.pipe

        def counted_pipe(*pa, **pkw):
            p = pipe(*pa, **pkw)
            if "valid" in pkw and "kv_l" in pkw:  # kv0
                writer = p.writer

                def counted_writer():
                    w = writer()
                    acquire = w.acquire

                    def acq(i):
                        counts[int(tl.program_id(0))] += 1
                        return acquire(i)
                    w.acquire = acq
                    return w
                p.writer = counted_writer
            return p
        tle.pipe = counted_pipe
        return tl, tle

    monkeypatch.setattr(emulator, "make_language", counting)
    emu = emulator.load_kernel_module(D512_LENGTH, dot_dtypes=(torch.bfloat16,))
    monkeypatch.setattr(d512_length_mod, "sparse_mla_seesaw_d512_topk_length",
                        emu.sparse_mla_seesaw_d512_topk_length)
    emulated(sms)
    s_q, h_q = len(LENGTHS), 128
    q, kv, idx = make_case(s_q, h_q, TOPK, LENGTHS, seed=4)
    check(run_seesaw(q, kv, idx, None, LENGTHS),
          sparse_mla_reference(q, kv, idx, SCALE, topk_length=LENGTHS))
    want = expected_pairs(LENGTHS, h_q // 64, TOPK, sms)
    assert [counts[k] for k in range(len(want))] == want


@pytest.mark.parametrize("with_sink", [False, True], ids=["topk_length", "topk_length+sink"])
def test_d512_topk_length_with_the_last_wave_split(emulated, monkeypatch, with_sink):
    """17 tokens of one head block on 16 SMs at TOPK 2048: 16 tokens on the persistent d512
    topk_length kernel, the 17th as 16 one-pair pieces of the same kernel without the sink (each
    with its own length), merged, then scaled by the sink; against the reference and the
    unsplit launch."""
    from tle_kernels.tail_split import plan_tail_split

    emulated(16)
    launches = []
    kernel = d512_length_mod.sparse_mla_seesaw_d512_topk_length

    class Recorded:  # the emulated kernel, its launches' grids and constexprs recorded
        def __getitem__(self, grid):
            def run(*args, **cx):
                launches.append((grid, cx["TOPK"], cx["HAS_SINK"]))
                kernel[grid](*args, **cx)
            return run

    monkeypatch.setattr(d512_length_mod, "sparse_mla_seesaw_d512_topk_length", Recorded())
    s_q, h_q, topk = 17, 64, 2048
    assert plan_tail_split(s_q, 1, topk, 16, 128) is not None
    sink = hostile_sink(h_q, seed=9) if with_sink else None
    if with_sink:
        sink[6:] += 3.0  # the sink's share of the denominator is large: a repeat would show
    for tail_length in (700, topk):
        lengths = torch.tensor([0, 1, 63, 64, 65, 128, 129, topk, 5000, -3, 200, 1000, 1500,
                                2047, 640, 5, tail_length], dtype=torch.int32)
        q, kv, idx = make_case(s_q, h_q, topk, lengths, seed=13 + tail_length, s_kv=3000)
        want = sparse_mla_reference(q, kv, idx, SCALE, attn_sink=sink, topk_length=lengths)
        launches.clear()
        check(run_seesaw(q, kv, idx, sink, lengths), want)
        assert launches == [((16,), topk, int(with_sink)), ((16,), 128, 0)]
        check(run_seesaw(q, kv, idx, sink, lengths, tail_split=False), want)


def test_d512_sink_persistent_with_repeated_items_matches_the_reference(emulated):
    """10 items on 3 persistent programs (two recompute the last item), and one program per
    item; a row with no valid index is 0 whatever the sink; auto takes the call."""
    s_q, h_q, topk = 5, 128, 256
    q, kv, idx = make_case(s_q, h_q, topk, seed=5)
    idx[1] = -1
    sink = hostile_sink(h_q, seed=6)
    want = sparse_mla_reference(q, kv, idx, SCALE, attn_sink=sink)
    got = run_seesaw(q, kv, idx, sink, impl="auto")
    check(got, want)
    assert (got[0][1] == 0).all() and (got[2][1] == float("inf")).all()
    check(run_seesaw(q, kv, idx, sink, persistent=False), want)


def test_d512_sink_with_the_last_wave_split_gets_the_sink_once(emulated):
    """17 tokens of one head block on 16 SMs at TOPK 2048: 16 tokens in the persistent d512 sink
    kernel, the 17th as 16 pieces of the d512 plain seesaw, merged, then scaled by the sink (a
    piece applying it would count exp(sink) 16 times); the unsplit launch too."""
    from tle_kernels.tail_split import plan_tail_split

    emulated(16)
    s_q, h_q, topk = 17, 64, 2048
    assert plan_tail_split(s_q, 1, topk, 16, 128) is not None
    q, kv, idx = make_case(s_q, h_q, topk, seed=7, s_kv=3000)
    sink = hostile_sink(h_q, seed=8)
    sink[6:] += 3.0
    want = sparse_mla_reference(q, kv, idx, SCALE, attn_sink=sink)
    check(run_seesaw(q, kv, idx, sink), want)
    check(run_seesaw(q, kv, idx, sink, tail_split=False), want)


# ------------------------------------------------------------------------ protocol and lowering

def _dump(path, capsys, *flags):
    from tle_compiler.cli.dump import main

    code = main([*flags, str(path)])
    out, err = capsys.readouterr()
    return code, out, err


def test_d512_sink_kernel_is_proved_for_every_round_count(capsys):
    code, out, err = _dump(D512_SINK, capsys, "--graph")
    assert code == 0 and "read specialised to BLOCK_H=64, TOPK=2048" in err
    assert "# verdict: verified for every value of ROUNDS (every integer ROUNDS)" in out
    assert "producer --kv0(kv_l, valid)--> consumer0" in out and "tkv" not in out


@pytest.mark.parametrize("topk", [128, 384])
def test_d512_sink_kernel_is_proved_at_other_topk(capsys, topk):
    code, out, err = _dump(D512_SINK, capsys, "--graph", "--param", f"TOPK={topk}")
    assert code == 0, err
    assert f"TOPK = {topk} (read specialised)" in out


def test_d512_topk_length_kernel_is_proved_for_every_pair_count(capsys):
    code, out, _ = _dump(D512_LENGTH, capsys, "--graph")
    assert code == 0
    assert re.search(r"^param NP any$", out, re.M)
    assert "# verdict: verified for every value of NP (every integer NP)" in out
    assert "producer --kv1(kv_r, valid)--> consumer1" in out and "tkv" not in out


def test_d512_sink_lowering_emits_the_verified_barrier_operations():
    from tle_compiler.lowering.dumping import default_config

    from .test_lowering_events import Runs, param_grid

    name = "sparse_mla_seesaw_d512_sink"
    runs = Runs(D512_SINK, name, default_config(str(D512_SINK), name))
    problems = [p for values in param_grid(runs.base.program) for p in runs.check(values)]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("has_sink", [0, 1], ids=["topk_length", "topk_length+sink"])
def test_d512_topk_length_lowering_emits_the_verified_barrier_operations(has_sink):
    """The generated Gluon's mbarrier operations equal the verified events for NP = 0, 1, 2, 3
    and 5 (pinned), with and without the sink."""
    pytest.importorskip("triton.experimental.gluon")
    from tests.test_lowering_events import Runs, jit_kernels, param_grid

    ((path, name, config),) = jit_kernels(D512_LENGTH)
    runs = Runs(path, name, dict(config, constexprs=dict(config["constexprs"],
                                                         HAS_SINK=has_sink)))
    assert runs.pinned == {"NP"}
    grid = param_grid(runs.base.program)
    assert [v["NP"] for v in grid] == [0, 1, 2, 3, 5]
    problems = [p for values in grid for p in runs.check(values)]
    assert not problems, "\n".join(problems)


@functools.lru_cache(maxsize=None)
def _compiled(path, name, **constexprs):
    """The kernel compiled for sm_90a with its DEFAULT_CONFIG and ``constexprs``; compiled once
    per module (several tests read the same compile)."""
    from tle_compiler.lowering import compile_kernel
    from tle_compiler.lowering.dumping import default_config

    cfg = default_config(str(path), name)
    return compile_kernel((str(path), name), cfg["signature"],
                          dict(cfg["constexprs"], **constexprs))


def _ops(ttgir: str) -> collections.Counter:
    return collections.Counter(re.findall(r"= ([a-z_]+\.[a-z0-9_.]+)", ttgir)
                               + re.findall(r"^\s*([a-z_]+\.[a-z0-9_.]+) ", ttgir, re.M))


@pytest.mark.parametrize("path,name,cx", [
    (D512_SINK, "sparse_mla_seesaw_d512_sink", {}),
    (D512_LENGTH, "sparse_mla_seesaw_d512_topk_length", {"HAS_SINK": 0}),
    (D512_LENGTH, "sparse_mla_seesaw_d512_topk_length", {"HAS_SINK": 1}),
], ids=["sink", "topk_length", "topk_length+sink"])
def test_compiles_for_sm90a_without_spills(path, name, cx):
    from tle_compiler.lowering import ptxas_stats

    c = _compiled(path, name, **cx)
    st = ptxas_stats(c)
    assert st["ok"] and (st["spill_stores"], st["spill_loads"]) == (0, 0), st["log"]
    assert c.metadata.shared <= 232_448  # Hopper's shared memory per block
    assert re.search(r"setmaxnreg\.inc\.sync\.aligned\.u32\s+224\b", c.asm["ptx"])


def test_d512_sink_kernel_is_the_d512_kernel_plus_its_epilogue():
    """Op for op, the d512 sink kernel's TTGIR holds everything the d512 kernel's does and, in
    each consumer's epilogue, the sink's load and the exp2 / add that put it into the
    denominator."""
    plain = _ops(_compiled(D512, "sparse_mla_seesaw_d512").asm["ttgir"])
    sink = _ops(_compiled(D512_SINK, "sparse_mla_seesaw_d512_sink").asm["ttgir"])
    assert plain - sink == collections.Counter()
    added = sink - plain
    assert added["tt.load"] == 2 and added["math.exp2"] == 2 and added["arith.addf"] == 2
    assert not any(k.startswith(("ttng.", "ttg.", "tt.dot")) for k in added), added


@pytest.mark.parametrize("has_sink", [0, 1], ids=["topk_length", "topk_length+sink"])
def test_d512_topk_length_kernel_is_the_576_kernel_without_its_tail(has_sink):
    """Op for op, the d512 topk_length kernel's TTGIR is a part of the 576 one's: what is missing
    is the tail (a tail wgmma per consumer, a tail gather and its buffer per K piece kv0 / kv1,
    each consumer's two q-tail loads: before the walk and at an item's end), nothing added."""
    ours = _ops(_compiled(D512_LENGTH, "sparse_mla_seesaw_d512_topk_length",
                          HAS_SINK=has_sink).asm["ttgir"])
    theirs = _ops(_compiled(LENGTH, "sparse_mla_seesaw_topk_length",
                            HAS_SINK=has_sink).asm["ttgir"])
    assert ours - theirs == collections.Counter()
    gone = theirs - ours
    assert gone["ttng.warp_group_dot"] == 2 and gone["ttg.async_copy_global_to_local"] == 2
    assert gone["ttg.local_alloc"] == 2 and gone["tt.load"] == 4
