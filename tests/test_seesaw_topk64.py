"""The seesaw SparseMLA prefill at topk % 128 == 64 (FlashMLA's sm90 kernels take any multiple of
64 in decode; the seesaw's K tiles go in pairs of 128 indices).

Every seesaw kernel runs NP = ceil(topk / 128) pairs; when topk % 128 == 64 the producer reads the
last pair's second index tile masked by position (slots >= TOPK read as -1, so no kv row is loaded
and the tile scores -inf: zero probability), and the consumers run the pair as any other
(tle_kernels/sparse_mla_seesaw.py, ``producer``). The topk_length kernels already stop at
clamp(topk_length, 0, TOPK) slots. Tested on the CPU:

- routing: ``impl="auto"`` takes the seesaw (and its attn_sink / topk_length / d_qk 512 variants)
  at topk % 128 == 64, the naive kernel only for topk % 64 != 0; no tail split is planned there
  (a piece's topk must be a multiple of the pair);
- protocol: tle-dump verifies each persistent seesaw kernel specialised to such a TOPK;
- lowering: TOPK = 192 compiles for sm_90a without spills, and at TOPK = 2048 the generated
  Gluon's masked index load sits under the folded constexpr branch only;
- math, run by the CPU emulator through ``api.launch`` against the fp32 reference, on contiguous
  index rows: a kernel that read the masked tile would take the next row's first indices as its
  own (a wrong result) and, in the last row, address past the tensor, which the emulator refuses
  even for a masked lane; attn_sink (hostile values), topk_length (0, 1, 63, ..., past topk,
  negative), d_qk 512, persistent programs repeating the last item. (The GPU test
  tests/gpu/test_seesaw_topk64.py runs index rows padded with slots that name NaN rows.)
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

import tle_kernels.sparse_mla_seesaw_d512 as d512_mod  # noqa: E402
import tle_kernels.sparse_mla_seesaw_d512_sink as d512_sink_mod  # noqa: E402
from tle_kernels import api  # noqa: E402
from tle_kernels.reference import sparse_mla_reference  # noqa: E402
from tle_kernels.tail_split import plan_tail_split  # noqa: E402

from .test_seesaw_sink_topk import (LENGTHS, check, emulated, hostile_sink,  # noqa: E402,F401
                                    make_case, run_seesaw)

ROOT = Path(__file__).resolve().parent.parent
KDIR = ROOT / "tle_kernels"
SCALE = 576 ** -0.5
PERSISTENT = ("sparse_mla_seesaw", "sparse_mla_seesaw_sink", "sparse_mla_seesaw_d512",
              "sparse_mla_seesaw_d512_sink")


# ------------------------------------------------------------------------------------- routing

@pytest.mark.parametrize("d_qk", [576, 512])
@pytest.mark.parametrize("sink,tlen", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("h_q,topk", [(64, 64), (128, 192), (128, 2112), (96, 576)])
def test_auto_takes_the_seesaw_at_topk_multiples_of_64(h_q, topk, d_qk, sink, tlen):
    assert api.unsupported_reason("seesaw", h_q, d_qk, topk, sink, tlen) is None
    assert api.select_impl("auto", h_q, d_qk, topk, sink, tlen) == "seesaw"


@pytest.mark.parametrize("topk", [1, 32, 100, 2080])
def test_topk_not_a_multiple_of_64_stays_on_the_naive_kernel(topk):
    assert "seesaw needs topk % 64 == 0" in api.unsupported_reason("seesaw", 128, 576, topk)
    assert api.select_impl("auto", 128, 576, topk) == "naive"


def test_no_tail_split_is_planned_when_the_last_pair_is_half_masked():
    assert plan_tail_split(17, 1, 2048, 16, 128) is not None
    assert plan_tail_split(17, 1, 2112, 16, 128) is None


# ------------------------------------------------------------------------------------ protocol

@pytest.mark.parametrize("topk", [64, 192])
@pytest.mark.parametrize("name", PERSISTENT)
def test_tle_dump_verifies_the_kernel_at_the_topk(capsys, name, topk):
    from tle_compiler.cli.dump import main

    code = main(["--graph", "--param", f"TOPK={topk}", str(KDIR / f"{name}.py")])
    out, err = capsys.readouterr()
    assert code == 0, out[-2000:] + err[-2000:]
    assert f"TOPK = {topk} (read specialised)" in out
    assert re.search(r"# verdict: verified for every value of ROUNDS", out)


# ------------------------------------------------------------------------------------ lowering

def _compiled(name, **constexprs):
    from tle_compiler.lowering import compile_kernel
    from tle_compiler.lowering.dumping import default_config

    path = str(KDIR / f"{name}.py")
    cfg = default_config(path, name)
    return compile_kernel((path, name), cfg["signature"], dict(cfg["constexprs"], **constexprs))


@pytest.mark.parametrize("name", ["sparse_mla_seesaw", "sparse_mla_seesaw_sink"])
def test_topk_192_compiles_for_sm90a_without_spills(name):
    from tle_compiler.lowering import ptxas_stats

    st = ptxas_stats(_compiled(name, TOPK=192))
    assert st["ok"] and (st["spill_stores"], st["spill_loads"]) == (0, 0), st["log"]
    assert not st["wgmma_serialized"], st["log"]


def test_the_masked_index_load_is_under_a_constexpr_branch():
    """The producer's second index load has two forms, chosen by ``TOPK % (2 * BK)`` (a constexpr
    Triton folds): unmasked for a whole number of pairs, as the kernel always was, masked by
    position otherwise; both bind one name with one layout."""
    from tle_compiler.lowering import gluon_source

    src = gluon_source((str(KDIR / "sparse_mla_seesaw.py"), "sparse_mla_seesaw"),
                       {"TOPK": 2048, "BLOCK_H": 64}).source
    producer = src.split("def producer(", 1)[1].split("@gluon.jit", 1)[0]
    branch = re.search(r"if \(\(TOPK % \(2 \* BK\)\) == 0\):\n(.*?)\n\s+else:\n(.*?)\n\s+valid0",
                       producer, re.S)
    assert branch, producer
    whole, partial = branch.groups()
    assert "mask=" not in whole and "mask=(slots1 < TOPK), other=(-1)" in partial
    assert "gl.minimum(slots1, (TOPK - 1))" in partial  # addresses inside the row
    layouts = [re.findall(r"gl\.arange\(0, BK, layout=(\w+)\)", b) for b in (whole, partial)]
    assert layouts[0] == layouts[1] and len(layouts[0]) == 1


# ------------------------------------------------------------------------------ emulated math

@pytest.mark.parametrize("h_q,topk", [(64, 64), (128, 192), (64, 320)])
def test_plain_seesaw_matches_the_reference(emulated, h_q, topk):
    """5 tokens on 3 persistent programs (the last round repeats the last item)."""
    emulated(3)
    q, kv, idx = make_case(5, h_q, topk, seed=h_q + topk)
    check(run_seesaw(q, kv, idx), sparse_mla_reference(q, kv, idx, SCALE))


def test_sink_seesaw_matches_the_reference(emulated):
    emulated(3)
    q, kv, idx = make_case(4, 128, 192, seed=3)
    sink = hostile_sink(128)
    check(run_seesaw(q, kv, idx, sink=sink), sparse_mla_reference(q, kv, idx, SCALE, attn_sink=sink))


@pytest.mark.parametrize("with_sink", [False, True], ids=["topk_length", "topk_length+sink"])
def test_topk_length_seesaw_matches_the_reference(emulated, with_sink):
    """Every row a different length (0 .. past topk, negative) at topk 320 (2.5 pairs)."""
    emulated(5)
    topk = 320
    lengths = LENGTHS.clone()
    q, kv, idx = make_case(len(lengths), 64, topk, lengths=lengths, seed=7)
    sink = hostile_sink(64) if with_sink else None
    want = sparse_mla_reference(q, kv, idx, SCALE, attn_sink=sink, topk_length=lengths)
    check(run_seesaw(q, kv, idx, sink=sink, tlen=lengths), want)


@pytest.fixture
def emulated_d512(monkeypatch):
    from tle_compiler.testing.emulator import load_kernel_module

    for mod, name in ((d512_mod, "sparse_mla_seesaw_d512"),
                      (d512_sink_mod, "sparse_mla_seesaw_d512_sink")):
        emu = load_kernel_module(KDIR / f"{name}.py", dot_dtypes=(torch.bfloat16,))
        monkeypatch.setattr(mod, name, getattr(emu, name))
    monkeypatch.setattr(api, "sm_count", lambda device: 3)


@pytest.mark.parametrize("with_sink", [False, True], ids=["d512", "d512+sink"])
def test_d512_seesaw_matches_the_reference(emulated_d512, with_sink):
    g = torch.Generator().manual_seed(11)
    s_q, h_q, topk, s_kv = 4, 64, 192, 300
    q = (torch.randn(s_q, h_q, 512, generator=g) * 0.3).bfloat16()
    kv = (torch.randn(s_kv + 40, 1, 512, generator=g) * 0.3).bfloat16()
    kv[s_kv:] = float("nan")
    idx = torch.randint(-1, s_kv, (s_q, 1, topk), generator=g, dtype=torch.int32)
    sink = hostile_sink(h_q) if with_sink else None
    scale = 512 ** -0.5
    out, ml, lse = api.empty_outputs(q)
    out.fill_(float("nan")), ml.fill_(float("nan")), lse.fill_(float("nan"))
    assert api.launch("auto", q, kv, idx, scale, out, ml, lse, attn_sink=sink) == "seesaw"
    check((out, ml, lse), sparse_mla_reference(q, kv, idx, scale, attn_sink=sink))
