"""The seesaw SparseMLA prefill with attn_sink and topk_length on the CPU.

tle_kernels/sparse_mla_seesaw_sink.py (persistent, attn_sink) and
tle_kernels/sparse_mla_seesaw_topk_length.py (persistent, each program walking the K-tile pairs
of its items; topk_length, optional attn_sink), launched by
tle_kernels/sparse_mla_seesaw_sink_topk_launch.py from ``api.launch``:

- their math, run by the CPU emulator (tle_compiler/testing/emulator.py) through ``api.launch``
  itself (the emulated kernels put where the launcher looks them up), against the fp32 reference
  (tle_kernels/reference.py) on hostile inputs: every row a different topk_length (0, 1, 63, 64,
  65, ..., past topk, negative), index slots past a row's length pointing at NaN kv rows (a slot
  that is read or used poisons the row), invalid indices, sinks of -inf, +inf, +-60 and 1e4; the
  topk_length kernel on more items than programs (each program walking several rows of
  different lengths, empty ones included), on fewer (one item each) and one program per item,
  and with more than 128 items per program (its pair count summed over several chunks); each
  program runs exactly its items' pairs; its last wave split into topk pieces of the same
  kernel, each with its own length (``piece_lengths``), the sink applied by the merge; the
  persistent sink kernel with repeated last items, and with its last wave split into
  plain-seesaw pieces that get the sink after the merge;
- their protocol: tle-dump proves the topk_length kernel for every value of its pair count NP
  (summed from topk_length in the kernel body), the sink kernel for every ROUNDS, and rejects
  the topk_length kernel without its trailing releases;
- their lowering: the topk_length kernel's generated barrier operations are its verified events
  for several pair counts; TTGIR and PTX for sm_90a without spills for every constexpr
  combination, and the sink kernel's TTGIR is the plain seesaw's plus the sink's epilogue ops,
  nothing removed.
"""

from __future__ import annotations

import collections
import functools
import re
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

import tle_kernels.sparse_mla_seesaw as plain_mod  # noqa: E402
import tle_kernels.sparse_mla_seesaw_sink as sink_mod  # noqa: E402
import tle_kernels.sparse_mla_seesaw_topk_length as length_mod  # noqa: E402
from tle_kernels import api  # noqa: E402
from tle_kernels.reference import sparse_mla_reference  # noqa: E402

KDIR = Path(__file__).resolve().parent.parent / "tle_kernels"
PLAIN = KDIR / "sparse_mla_seesaw.py"
SINK = KDIR / "sparse_mla_seesaw_sink.py"
LENGTH = KDIR / "sparse_mla_seesaw_topk_length.py"
SCALE = 576 ** -0.5
BAD = (-1, -2**31, 2**31 - 1)  # and s_kv


@pytest.fixture
def emulated(monkeypatch):
    """api.launch runs the emulated kernels: the three seesaw kernels replaced in their modules
    by their CPU emulations; ``emulated(sms)`` sets the SM count persistent launches see."""
    from tle_compiler.testing.emulator import load_kernel_module

    for mod, path, name in ((plain_mod, PLAIN, "sparse_mla_seesaw"),
                            (sink_mod, SINK, "sparse_mla_seesaw_sink"),
                            (length_mod, LENGTH, "sparse_mla_seesaw_topk_length")):
        emu = load_kernel_module(path, dot_dtypes=(torch.bfloat16,))
        monkeypatch.setattr(mod, name, getattr(emu, name))

    def set_sms(sms: int) -> None:
        monkeypatch.setattr(api, "sm_count", lambda device: sms)
    return set_sms


def make_case(s_q, h_q, topk, lengths=None, seed=0, s_kv=300, poison=40):
    """q, kv, indices: kv has ``poison`` NaN rows after its s_kv real ones; slots past a row's
    length point at them (so reading or using one shows as NaN), the others are random real rows
    with ~1/8 invalid values of every kind."""
    g = torch.Generator().manual_seed(seed)
    q = (torch.randn(s_q, h_q, 576, generator=g) * 0.3).bfloat16()
    kv = (torch.randn(s_kv + poison, 1, 576, generator=g) * 0.3).bfloat16()
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


def hostile_sink(h_q, seed=1):
    g = torch.Generator().manual_seed(seed)
    sink = torch.randn(h_q, generator=g) * 2
    sink[:6] = torch.tensor([float("-inf"), float("inf"), 60.0, -60.0, 1e4, 0.0])
    return sink


def run_seesaw(q, kv, idx, sink=None, tlen=None, **kw):
    out, ml, lse = api.empty_outputs(q)
    out.fill_(float("nan")), ml.fill_(float("nan")), lse.fill_(float("nan"))
    assert api.launch("seesaw", q, kv, idx, SCALE, out, ml, lse, attn_sink=sink,
                      topk_length=tlen, **kw) == "seesaw"
    return out, ml, lse


def check(got, want):
    """bf16 out against the fp32 reference: no NaN, every row within bf16 rounding of its own
    norm (so a sink-dominated row of size e^-60 counts as much as any), rows the reference makes 0
    exactly 0; lse and max_logits to fp32 precision, infinities exact."""
    out, ml, lse = got
    r_out, r_ml, r_lse = want
    assert not out.float().isnan().any() and not ml.isnan().any() and not lse.isnan().any()
    o, r = out.float().flatten(0, 1), r_out.flatten(0, 1)
    zero = r.abs().amax(1) == 0
    assert (o[zero] == 0).all()
    # max-abs per row (a norm would square a 1e-27 row into underflow)
    rel = (o[~zero] - r[~zero]).abs().amax(1) / r[~zero].abs().amax(1)
    assert rel.max().item() < 2e-2, f"worst row {rel.argmax().item()}: rel {rel.max().item():.3e}"
    assert ((o - r).norm() / r.norm()).item() < 5e-3
    for a, b in ((lse, r_lse), (ml, r_ml)):
        fin = torch.isfinite(b)
        assert torch.equal(a[~fin], b[~fin])
        assert torch.allclose(a[fin], b[fin], atol=1e-5, rtol=0)


LENGTHS = torch.tensor([0, 1, 63, 64, 65, 127, 128, 129, 255, 256, 300, -5], dtype=torch.int32)

# How the topk_length kernel is launched: (SMs the launch sees, persistent); 24 items (12 rows of
# 2 head blocks): 5 programs walk 4 or 5 items each, 100 SMs give one program per item, and
# persistent=False one program per item whatever the SM count.
LAUNCHES = {"5_programs": (5, True), "fewer_items_than_sms": (100, True),
            "one_program_per_item": (5, False)}


def program_items(n_items: int, programs: int) -> list:
    """The items each persistent program walks: k, k + P, ... (P = min(items, programs))."""
    n_progs = max(1, min(n_items, programs))
    return [list(range(k, n_items, n_progs)) for k in range(n_progs)]


def expected_pairs(lengths, n_hb, topk, programs) -> list:
    """Per program, the K-tile pairs it must run: max(1, ceil(n / 128)) per item (an empty row
    keeps one fully masked pair), n = clamp(length of the item's row, 0, topk)."""
    pairs = [max(1, -(-max(0, min(n, topk)) // 128)) for n in lengths.tolist()]
    return [sum(pairs[i // n_hb] for i in items)
            for items in program_items(len(lengths) * n_hb, programs)]


@pytest.mark.parametrize("launch", list(LAUNCHES))
@pytest.mark.parametrize("with_sink", [False, True], ids=["topk_length", "topk_length+sink"])
def test_topk_length_rows_stop_early_and_match_the_reference(emulated, with_sink, launch):
    """Per-row lengths around every tile and pair boundary (TOPK = 256: 0 to 2 pairs per row);
    a row's slots past its length point at NaN rows, so the check fails if any is gathered."""
    sms, persistent = LAUNCHES[launch]
    emulated(sms)
    s_q, h_q, topk = len(LENGTHS), 128, 256
    q, kv, idx = make_case(s_q, h_q, topk, LENGTHS, seed=3)
    sink = hostile_sink(h_q) if with_sink else None
    got = run_seesaw(q, kv, idx, sink, LENGTHS, persistent=persistent)
    check(got, sparse_mla_reference(q, kv, idx, SCALE, attn_sink=sink, topk_length=LENGTHS))
    empty = (LENGTHS <= 0)
    assert (got[0][empty] == 0).all() and (got[2][empty] == float("inf")).all()
    assert (got[1][empty] == float("-inf")).all()


@pytest.fixture
def pair_counts(monkeypatch):
    """The topk_length kernel emulated with its producer's kv0 acquires (one per K-tile pair)
    counted per program: returns the Counter."""
    from tle_compiler.testing import emulator

    counts = collections.Counter()
    real = emulator.make_language

    def counting(*a, **kw):  # the emulation of this test's kernels, with kv0 acquires counted
        tl, tle = real(*a, **kw)
        pipe = tle.pipe

        def counted_pipe(*pa, **pkw):
            p = pipe(*pa, **pkw)
            if "valid" in pkw and "kv_l" in pkw:  # kv0: one acquire per K-tile pair
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
    emu = emulator.load_kernel_module(LENGTH, dot_dtypes=(torch.bfloat16,))
    monkeypatch.setattr(length_mod, "sparse_mla_seesaw_topk_length",
                        emu.sparse_mla_seesaw_topk_length)
    return counts


@pytest.mark.parametrize("sms", [5, 100])
def test_topk_length_programs_run_only_their_items_pairs(emulated, pair_counts, sms):
    """Each program's K-tile acquires are the sum over its items of max(1, ceil(n / 128)), not
    TOPK / 128 per item: the walk stops each row early instead of masking."""
    emulated(sms)
    s_q, h_q, topk = len(LENGTHS), 128, 256
    q, kv, idx = make_case(s_q, h_q, topk, LENGTHS, seed=4)
    run_seesaw(q, kv, idx, None, LENGTHS)
    want = expected_pairs(LENGTHS, h_q // 64, topk, sms)
    assert [pair_counts[k] for k in range(len(want))] == want
    assert sum(want) < s_q * (h_q // 64) * topk // 128


def test_topk_length_walks_more_than_a_chunk_of_items_per_program(emulated, pair_counts):
    """270 one-head-block rows on 2 programs: 135 items each, so the kernel body sums its pair
    count over two chunks of 128 items; random lengths (empty and past topk included)."""
    emulated(2)
    s_q, h_q, topk = 270, 64, 256
    g = torch.Generator().manual_seed(11)
    lengths = torch.randint(-3, topk + 20, (s_q,), generator=g, dtype=torch.int32)
    q, kv, idx = make_case(s_q, h_q, topk, lengths, seed=12)
    got = run_seesaw(q, kv, idx, None, lengths)
    check(got, sparse_mla_reference(q, kv, idx, SCALE, topk_length=lengths))
    want = expected_pairs(lengths, 1, topk, 2)
    assert [pair_counts[k] for k in range(2)] == want and min(want) > 135


def test_piece_lengths_cover_each_row_exactly():
    """Piece k of a token holds its slots [k * w, (k + 1) * w): its length is the part of
    clamp(n, 0, topk) that falls there, so the pieces of a token sum to it."""
    from tle_kernels.sparse_mla_seesaw_sink_topk_launch import piece_lengths

    n = torch.tensor([0, 1, 127, 128, 129, 700, 2047, 2048, 5000, -3], dtype=torch.int32)
    got = piece_lengths(n, 16, 128)
    assert got.dtype == torch.int32 and got.shape == (160,)
    assert got.view(10, 16).sum(1).tolist() == n.clamp(0, 2048).tolist()
    assert got.view(10, 16)[5].tolist() == [128] * 5 + [60] + [0] * 10


@pytest.mark.parametrize("with_sink", [False, True], ids=["topk_length", "topk_length+sink"])
def test_topk_length_with_the_last_wave_split(emulated, monkeypatch, with_sink):
    """17 tokens of one head block on 16 SMs at TOPK 2048: 16 tokens on the persistent
    topk_length kernel, the 17th as 16 one-pair pieces of the same kernel without the sink, each
    with its own length (most empty), merged, then scaled by the sink. Tail rows of several
    lengths, each against the reference and the unsplit launch; slots past a length name NaN
    rows."""
    from tle_kernels.tail_split import plan_tail_split

    emulated(16)
    launches = []
    kernel = length_mod.sparse_mla_seesaw_topk_length

    class Recorded:  # the emulated kernel, its launches' grids and constexprs recorded
        def __getitem__(self, grid):
            def run(*args, **cx):
                launches.append((grid, cx["TOPK"], cx["HAS_SINK"]))
                kernel[grid](*args, **cx)
            return run

    monkeypatch.setattr(length_mod, "sparse_mla_seesaw_topk_length", Recorded())
    s_q, h_q, topk = 17, 64, 2048
    assert plan_tail_split(s_q, 1, topk, 16, 128) is not None
    sink = hostile_sink(h_q, seed=9) if with_sink else None
    if with_sink:
        sink[6:] += 3.0  # the sink's share of the denominator is large: a repeat would show
    for tail_length in (0, 700, 2048):
        lengths = torch.tensor([0, 1, 63, 64, 127, 128, 129, 2048, 5000, -3, 200, 1000, 1500,
                                2047, 640, 5, tail_length], dtype=torch.int32)
        q, kv, idx = make_case(s_q, h_q, topk, lengths, seed=13 + tail_length, s_kv=3000)
        want = sparse_mla_reference(q, kv, idx, SCALE, attn_sink=sink, topk_length=lengths)
        launches.clear()
        check(run_seesaw(q, kv, idx, sink, lengths), want)
        assert launches == [((16,), 2048, int(with_sink)), ((16,), 128, 0)]
        check(run_seesaw(q, kv, idx, sink, lengths, tail_split=False), want)


def test_sink_persistent_with_repeated_items_matches_the_reference(emulated):
    """10 items on 3 persistent programs (4 rounds: two programs recompute the last item), no
    tail split (one tail item per piece would not pay)."""
    emulated(3)
    s_q, h_q, topk = 5, 128, 256
    q, kv, idx = make_case(s_q, h_q, topk, seed=5)
    idx[1] = -1  # a row with no valid index: out 0 whatever the sink
    sink = hostile_sink(h_q, seed=6)
    want = sparse_mla_reference(q, kv, idx, SCALE, attn_sink=sink)
    check(run_seesaw(q, kv, idx, sink), want)
    check(run_seesaw(q, kv, idx, sink, persistent=False), want)


def test_sink_with_the_last_wave_split_gets_the_sink_once(emulated):
    """17 tokens of one head block on 16 SMs at TOPK 2048: 16 tokens in the persistent sink
    kernel, the 17th as 16 pieces of the plain seesaw, merged, then scaled by the sink (a piece
    applying it would count exp(sink) 16 times). Compared with the unsplit launch too."""
    from tle_kernels.tail_split import plan_tail_split

    emulated(16)
    s_q, h_q, topk = 17, 64, 2048
    assert plan_tail_split(s_q, 1, topk, 16, 128) is not None
    q, kv, idx = make_case(s_q, h_q, topk, seed=7, s_kv=3000)
    sink = hostile_sink(h_q, seed=8)
    sink[6:] += 3.0  # the sink's share of the denominator is large: a repeat would show
    want = sparse_mla_reference(q, kv, idx, SCALE, attn_sink=sink)
    check(run_seesaw(q, kv, idx, sink), want)
    check(run_seesaw(q, kv, idx, sink, tail_split=False), want)


# ------------------------------------------------------------------------ protocol and lowering

def _dump(path, capsys, *flags):
    from tle_compiler.cli.dump import main

    code = main([*flags, str(path)])
    out, err = capsys.readouterr()
    return code, out, err


def test_topk_length_kernel_is_proved_for_every_pair_count(capsys):
    code, out, _ = _dump(LENGTH, capsys, "--graph")
    assert code == 0
    assert re.search(r"^param NP any$", out, re.M)
    assert "# verdict: verified for every value of NP (every integer NP)" in out


def test_topk_length_partitions_each_walk_one_loop_over_the_pair_count():
    """No item loop: every partition's one loop is ``for p in range(NP)`` over the program's
    flat pair sequence (a pair loop nested in an item loop would be outside the cutoff theorem's
    fragment for an opaque count)."""
    from tle_compiler.frontend import read_kernels
    from tle_compiler.ir import For

    (info,) = read_kernels(str(LENGTH))
    loops = {part.name: [s for s in part.body if isinstance(s, For)]
             for part in info.program.partitions}
    assert set(loops) == {"producer", "consumer0", "consumer1"}
    for name, fors in loops.items():
        assert len(fors) == 1, name
        assert (str(fors[0].start), str(fors[0].stop)) == ("0", "NP"), name


def test_sink_kernel_is_proved_for_every_round_count(capsys):
    code, out, err = _dump(SINK, capsys, "--graph")
    assert code == 0 and "read specialised to BLOCK_H=64, TOPK=2048" in err
    assert "# verdict: verified for every value of ROUNDS (every integer ROUNDS)" in out


def test_topk_length_kernel_without_its_trailing_releases_is_rejected(tmp_path, capsys):
    """consumer0 hands back the last pair's kv1l and prob1 after its loop (`if NP > 0`); without
    that the verifier finds the unreleased slots (a fault it names, exit 1)."""
    from tests.test_kernels import kernel_copy

    old = "    if NP > 0:\n        pr.release(NP - 1)\n        peer.release(NP - 1)\n"
    path = kernel_copy("sparse_mla_seesaw_topk_length", tmp_path / "no_release.py",
                       [(old, "")])
    code, _, err = _dump(path, capsys)
    assert code == 1 and "error" in err


@pytest.mark.parametrize("has_sink", [0, 1], ids=["topk_length", "topk_length+sink"])
def test_topk_length_lowering_emits_the_verified_barrier_operations(has_sink):
    """What is lowered is what was verified (tests/test_lowering_events.py's check): the generated
    Gluon's mbarrier operations, partition by partition, equal the verified events for pair
    counts NP = 0, 1, 2, 3 and 5 (NP, summed from topk_length in the kernel body, pinned), and no
    release hands back a slot an in-flight wgmma reads (consumer0's P1·V1_L, left in flight
    across the back-edge and past the item-end ``if``, included)."""
    pytest.importorskip("triton.experimental.gluon")
    from tests.test_lowering_events import Runs, jit_kernels, param_grid

    ((path, name, config),) = jit_kernels(LENGTH)
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


@pytest.mark.parametrize("path,name,cx", [
    (SINK, "sparse_mla_seesaw_sink", {}),
    (LENGTH, "sparse_mla_seesaw_topk_length", {"HAS_SINK": 0}),
    (LENGTH, "sparse_mla_seesaw_topk_length", {"HAS_SINK": 1}),
], ids=["sink", "topk_length", "topk_length+sink"])
def test_compiles_for_sm90a_without_spills(path, name, cx):
    from tle_compiler.lowering import ptxas_stats

    c = _compiled(path, name, **cx)
    st = ptxas_stats(c)
    assert st["ok"] and (st["spill_stores"], st["spill_loads"]) == (0, 0), st["log"]
    assert not st["wgmma_serialized"], st["log"]  # ptxas C7515
    assert c.metadata.shared <= 232_448  # Hopper's shared memory per block
    assert re.search(r"setmaxnreg\.inc\.sync\.aligned\.u32\s+224\b", c.asm["ptx"])


def _ops(ttgir: str) -> collections.Counter:
    return collections.Counter(re.findall(r"= ([a-z_]+\.[a-z0-9_.]+)", ttgir)
                               + re.findall(r"^\s*([a-z_]+\.[a-z0-9_.]+) ", ttgir, re.M))


def test_sink_kernel_is_the_plain_seesaw_plus_its_epilogue():
    """Op for op, the sink kernel's TTGIR holds everything the plain seesaw's does (the same
    wgmmas, barriers, gathers, rescales) and, in each consumer's epilogue, the sink's load and
    the exp2 / add that put it into the denominator: its pair loop runs at the plain kernel's
    speed."""
    plain = _ops(_compiled(PLAIN, "sparse_mla_seesaw").asm["ttgir"])
    sink = _ops(_compiled(SINK, "sparse_mla_seesaw_sink").asm["ttgir"])
    # but the plain kernel's q row // q_div (its argument; the sink kernel passes a literal 1,
    # folded): one division where the producer loads Q, two in each consumer's q tail loads
    assert plain - sink == collections.Counter({"arith.divsi": 5, "arith.extsi": 1})
    added = sink - plain
    assert added["tt.load"] == 2 and added["math.exp2"] == 2 and added["arith.addf"] == 2
    assert not any(k.startswith(("ttng.", "ttg.", "tt.dot")) for k in added), added
