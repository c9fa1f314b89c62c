"""The seesaw SparseMLA prefill for d_qk = 512 (tle_kernels/sparse_mla_seesaw_d512.py: the seesaw's
partitions with ROPE = 0, pipes without the RoPE tail) on the CPU:

- its protocol: tle-dump proves it for every ROUNDS at the default TOPK and at others, and its
  generated Gluon performs exactly the verified barrier operations;
- its lowering: PTX for sm_90a without spills, and its TTGIR is the 576 kernel's minus the tail
  (two cp.async gathers, two wgmmas, the q-tail loads and the two tail buffers), nothing added;
- its routing: ``impl="auto"`` and ``impl="seesaw"`` run it for d_qk = 512 at topk % 128 == 0
  (attn_sink / topk_length at d_qk = 512 run its variants: tests/test_seesaw_d512_sink_topk.py);
- its math, run by the CPU emulator (every address bounds-checked: a read of a 576-wide row
  would leave the 512-wide tensors) through ``api.launch`` against the fp32 reference: invalid
  indices of every kind, a row with no valid index, scores that move the lazy reference max,
  h_q 64 and 128, several topk, persistent programs that repeat the last item, one program per
  item, and the last wave split into topk pieces.
"""

from __future__ import annotations

import collections
import re
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

import tle_kernels.sparse_mla_seesaw as plain_mod  # noqa: E402
import tle_kernels.sparse_mla_seesaw_d512 as d512_mod  # noqa: E402
from tle_kernels import api  # noqa: E402
from tle_kernels.reference import sparse_mla_reference  # noqa: E402

from .test_seesaw_sink_topk import check  # noqa: E402

KDIR = Path(__file__).resolve().parent.parent / "tle_kernels"
D512 = KDIR / "sparse_mla_seesaw_d512.py"
PLAIN = KDIR / "sparse_mla_seesaw.py"
NAME = "sparse_mla_seesaw_d512"
SCALE = 512 ** -0.5
BAD = (-1, -2**31, 2**31 - 1)  # and s_kv


# ------------------------------------------------------------------------------------ protocol

def _dump(capsys, *args):
    from tle_compiler.cli.dump import main

    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_d512_kernel_is_proved_for_every_round_count(capsys):
    code, out, err = _dump(capsys, "--graph", D512)
    assert code == 0, err
    assert "read specialised to BLOCK_H=64, TOPK=2048" in err
    assert re.search(r"^param ROUNDS any$", out, re.M)
    assert "# verdict: verified for every value of ROUNDS (every integer ROUNDS)" in out
    # the K pieces without the RoPE tail: no tail field anywhere in the protocol
    assert "producer --kv0(kv_l, valid)--> consumer0" in out
    assert "producer --kv1(kv_r, valid)--> consumer1" in out
    assert "tkv" not in out


@pytest.mark.parametrize("topk", [128, 384])
def test_d512_kernel_is_proved_at_other_topk(capsys, topk):
    code, out, err = _dump(capsys, "--graph", "--param", f"TOPK={topk}", D512)
    assert code == 0, err
    assert f"TOPK = {topk} (read specialised)" in out


def test_d512_kernel_lowering_emits_the_verified_barrier_operations():
    from tle_compiler.lowering.dumping import default_config

    from .test_lowering_events import Runs, param_grid

    runs = Runs(D512, NAME, default_config(str(D512), NAME))
    problems = []
    for values in param_grid(runs.base.program):
        problems += runs.check(values)
    assert not problems, "\n".join(problems)


# ------------------------------------------------------------------------------------ lowering

def _compiled(path, name):
    from tle_compiler.lowering import compile_kernel
    from tle_compiler.lowering.dumping import default_config

    cfg = default_config(str(path), name)
    return compile_kernel((str(path), name), cfg["signature"], dict(cfg["constexprs"]))


def _ops(ttgir: str) -> collections.Counter:
    return collections.Counter(re.findall(r"= ([a-z_]+\.[a-z0-9_.]+)", ttgir)
                               + re.findall(r"^\s*([a-z_]+\.[a-z0-9_.]+) ", ttgir, re.M))


def test_d512_compiles_without_spills_and_is_the_576_kernel_without_its_tail():
    """Op for op, the d512 kernel's TTGIR is a part of the 576 kernel's: what is missing is the
    tail (per consumer a tail wgmma, per K piece kv0 / kv1 a tail gather and its buffer, the q
    tail's two loads per consumer), and nothing is added; its pipes take 16 KiB less shared
    memory, and ptxas fits it in the same budgets without spills."""
    from tle_compiler.lowering import ptxas_stats

    d512 = _compiled(D512, NAME)
    st = ptxas_stats(d512)
    assert st["ok"] and (st["spill_stores"], st["spill_loads"]) == (0, 0), st["log"]
    plain = _compiled(PLAIN, "sparse_mla_seesaw")
    ours, theirs = _ops(d512.asm["ttgir"]), _ops(plain.asm["ttgir"])
    assert ours - theirs == collections.Counter()
    gone = theirs - ours
    assert gone["ttng.warp_group_dot"] == 2 and gone["ttg.async_copy_global_to_local"] == 2
    assert gone["ttg.local_alloc"] == 2 and gone["tt.load"] == 4
    assert plain.metadata.shared - d512.metadata.shared >= 2 * 64 * 64 * 2


def test_d512_pipe_buffers_take_214144_bytes():
    """The figure the kernel's docstring states: the 576 kernel's 230,528 B less two tails."""
    from tle_compiler.frontend.build import build_file

    (k,) = build_file(D512, NAME, bind=dict(d512_mod.DEFAULT_CONFIG["constexprs"]))
    size = {"bf16": 2, "fp32": 4, "int8": 1}
    total = 0
    for b in [b for p in k.pipes for b in p.fields] + list(k.buffers):
        n = 1
        for d in b.shape:
            n *= d
        total += n * size[b.dtype]
    assert total == 214_144


# ------------------------------------------------------------------------------------- routing

@pytest.mark.parametrize("h_q,topk", [(64, 128), (64, 2048), (128, 256), (128, 2048), (192, 384),
                                     (48, 2048), (96, 384),   # padded to 64 / 128 heads
                                     (128, 576), (128, 64)])  # the last pair half masked
def test_auto_runs_the_seesaw_at_d512(h_q, topk):
    assert api.unsupported_reason("seesaw", h_q, 512, topk) is None
    assert api.select_impl("auto", h_q, 512, topk) == "seesaw"
    assert api.supported_impls(h_q, 512, topk) == ["naive", "seesaw"]


@pytest.mark.parametrize("h_q,topk,why", [
    (128, 100, "seesaw needs topk % 64 == 0"),
    (128, 32, "seesaw needs topk % 64 == 0"),   # the pipe kernel does not take d_qk 512
])
def test_d512_calls_the_seesaw_does_not_take_run_naive(h_q, topk, why):
    assert why in api.unsupported_reason("seesaw", h_q, 512, topk)
    assert api.unsupported_reason("pipe", h_q, 512, topk) is not None
    assert api.select_impl("auto", h_q, 512, topk) == "naive"


@pytest.mark.parametrize("sink,tlen", [(True, False), (False, True), (True, True)])
def test_d512_with_sink_or_topk_length_runs_the_seesaw_where_its_topk_fits(sink, tlen):
    assert api.select_impl("auto", 128, 512, 2048, sink, tlen) == "seesaw"
    assert api.select_impl("auto", 128, 512, 576, sink, tlen) == "seesaw"
    assert api.select_impl("auto", 128, 512, 100, sink, tlen) == "naive"
    with pytest.raises(ValueError, match=r"impl='seesaw' cannot run this call: seesaw needs topk"):
        api.select_impl("seesaw", 128, 512, 100, sink, tlen)


def test_the_launcher_picks_the_kernel_of_the_width():
    assert api.seesaw_kernel(512) is d512_mod.sparse_mla_seesaw_d512
    assert api.seesaw_kernel(576) is plain_mod.sparse_mla_seesaw


# ------------------------------------------------------------------------------ emulated math

@pytest.fixture
def emulated(monkeypatch):
    """api.launch runs the emulated d512 kernel (the 576 kernel, which must not run, raises);
    ``emulated(sms)`` sets the SM count persistent launches see."""
    from tle_compiler.testing.emulator import load_kernel_module

    emu = load_kernel_module(D512, dot_dtypes=(torch.bfloat16,))
    monkeypatch.setattr(d512_mod, NAME, getattr(emu, NAME))

    class NotThisOne:
        def __getitem__(self, grid):
            raise AssertionError("the 576 kernel ran a d_qk = 512 call")
    monkeypatch.setattr(plain_mod, "sparse_mla_seesaw", NotThisOne())

    def set_sms(sms: int) -> None:
        monkeypatch.setattr(api, "sm_count", lambda device: sms)
    set_sms(3)
    return set_sms


def make_case(s_q, h_q, topk, seed=0, s_kv=300, spread=0.0):
    """q [s_q, h_q, 512], kv [s_kv, 1, 512] bf16, indices with ~1/8 invalid values of every kind
    and row 1 wholly invalid. ``spread`` > 0 adds a shared direction to each row's q, so its scores
    span tens of log2 units and its reference max moves mid-row."""
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(s_q, h_q, 512, generator=g) * 0.3
    if spread:
        q = q + torch.randn(s_q, 1, 512, generator=g) * spread
    q = q.bfloat16()
    kv = (torch.randn(s_kv, 1, 512, generator=g) * 0.3).bfloat16()
    idx = torch.randint(0, s_kv, (s_q, 1, topk), generator=g, dtype=torch.int32)
    pick = torch.rand(s_q, 1, topk, generator=g) < 0.125
    bad = torch.tensor(BAD + (s_kv,), dtype=torch.int32)
    idx[pick] = bad[torch.randint(0, len(bad), (int(pick.sum()),), generator=g)]
    if s_q > 1:
        idx[1] = bad[torch.arange(topk) % len(bad)]  # no valid index at all
    return q, kv, idx


def run(q, kv, idx, impl="seesaw", **kw):
    out, ml, lse = api.empty_outputs(q)
    out.fill_(float("nan")), ml.fill_(float("nan")), lse.fill_(float("nan"))
    assert api.launch(impl, q, kv, idx, SCALE, out, ml, lse, **kw) == "seesaw"
    return out, ml, lse


@pytest.mark.parametrize("h_q,topk", [(64, 128), (128, 256), (64, 384)])
def test_d512_matches_the_reference(emulated, h_q, topk):
    """5 tokens: with h_q 64 (5 items) or 128 (10 items) on 3 persistent programs the last round
    repeats the last item; the empty row gives out 0, lse +inf, max_logits -inf."""
    q, kv, idx = make_case(5, h_q, topk, seed=h_q + topk)
    got = run(q, kv, idx, impl="auto")
    check(got, sparse_mla_reference(q, kv, idx, SCALE))
    assert (got[0][1] == 0).all() and (got[2][1] == float("inf")).all()
    assert (got[1][1] == float("-inf")).all()


def test_d512_one_program_per_item_matches_the_reference(emulated):
    q, kv, idx = make_case(4, 128, 256, seed=11)
    check(run(q, kv, idx, persistent=False), sparse_mla_reference(q, kv, idx, SCALE))


def test_d512_with_a_moving_reference_max_matches_the_reference(emulated):
    """Each row's indices in increasing score order over scores tens of log2 units apart: the
    lazy reference max moves many times per item (a skipped or misapplied rescale is off by at
    least 2^8); row 2 starts with 100 invalid slots."""
    q, kv, idx = make_case(3, 128, 512, seed=13, spread=40.0)
    score = (q.float().mean(1) @ kv[:, 0].float().T) * SCALE * 1.4426950408889634
    for s in (0, 2):
        row = idx[s, 0].clamp(0, kv.shape[0] - 1).long()
        idx[s, 0] = idx[s, 0][score[s, row].argsort()]
    idx[2, 0, :100] = -1
    valid = (idx[0, 0] >= 0) & (idx[0, 0] < kv.shape[0])
    spread = score[0, idx[0, 0][valid].long()]
    assert spread.max() - spread[:64].max() > 32  # the reference has to move several times
    check(run(q, kv, idx), sparse_mla_reference(q, kv, idx, SCALE))


def test_d512_with_the_last_wave_split_matches_the_reference(emulated):
    """17 tokens of one head block on 16 SMs at TOPK 2048: 16 tokens in the persistent d512
    kernel, the 17th as 16 one-pair pieces of it, merged by their lse; compared with the unsplit
    launch too."""
    from tle_kernels.tail_split import plan_tail_split

    emulated(16)
    s_q, h_q, topk = 17, 64, 2048
    assert plan_tail_split(s_q, 1, topk, 16, 128) is not None
    q, kv, idx = make_case(s_q, h_q, topk, seed=17, s_kv=3000)
    want = sparse_mla_reference(q, kv, idx, SCALE)
    check(run(q, kv, idx), want)
    check(run(q, kv, idx, tail_split=False), want)
