"""benchmarks/variants/mla_decode_pipe_ahead.py, the pipe decode with the left's QK one tile ahead
(an A/B candidate for tle_kernels/mla_decode_pipe.py), on the CPU, so that it stays ready to be
measured on the GPU:

- tle-dump proves its protocol for every tile count NK, both K producers, causal and split;
- it compiles for sm_90a at the bundled kernel's budgets without spills, and ptxas keeps its
  wgmmas asynchronous;
- the generated Gluon issues tile ck + 1's QK before tile ck's softmax and waits for it only
  after P·V_L (the point of the variant);
- the CPU emulator runs it with the bundled launcher's exact arguments against the fp32 reference
  on the bundled kernel's cases (poisoned inputs), with both producers.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from . import decode_kernel_checks as checks

VARIANT = Path(__file__).resolve().parent.parent / "benchmarks" / "variants" / \
    "mla_decode_pipe_ahead.py"


@pytest.mark.parametrize("params", [["TMA=1"], ["TMA=0"], ["TMA=1", "CAUSAL=1"],
                                    ["TMA=1", "SPLIT=1"], ["TMA=0", "CAUSAL=1", "SPLIT=1"]],
                         ids=lambda p: ",".join(p))
def test_verified_for_every_tile_count(capsys, params):
    from tle_compiler.cli.dump import main

    args = ["--graph"]
    for p in params:
        args += ["--param", p]
    code = main(args + [str(VARIANT)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "# verdict: verified for every value of NK (NK >= 0)" in out
    # two reader names in the left partition, each with its own view of kv
    assert "left_qk" in out and "left_pv" in out


def load_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("mla_decode_pipe_ahead", VARIANT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("tma", [0, 1])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("split", [False, True])
def test_compiles_without_spills_or_serialized_wgmmas(tma, causal, split):
    from tle_compiler.lowering import compile_kernel, ptxas_stats

    mod = load_module()
    cfg = mod.DEFAULT_CONFIG
    compiled = compile_kernel(mod.mla_decode_pipe, dict(cfg["signature"]),
                              dict(cfg["constexprs"], TMA=tma, CAUSAL=causal, SPLIT=split))
    st = ptxas_stats(compiled)
    assert st["ok"] and st["spill_stores"] == 0 and st["spill_loads"] == 0, st["log"]
    assert not st["wgmma_serialized"], st["log"]


def test_the_next_qk_is_in_flight_across_the_softmax():
    """In the left's loop: the three QK wgmmas of tile ck + 1, then the softmax (exp2) with no
    wgmma wait between, then P·V_L, then one wait that retires both."""
    from tle_compiler.lowering import compile_kernel

    mod = load_module()
    cfg = mod.DEFAULT_CONFIG
    src = compile_kernel(mod.mla_decode_pipe, dict(cfg["signature"]),
                         dict(cfg["constexprs"], TMA=1)).tle_generated.source
    left = src[src.index("def left("):]
    left = left[:left.index("\n@gluon.jit")] if "\n@gluon.jit" in left else left
    loop = left[left.index("for ck in range(NK):"):]
    events = [(i, w) for w in ("warpgroup_mma(", "warpgroup_mma_wait(", "gl.exp2(")
              for i in _find_all(loop, w)]
    order = [w for _, w in sorted(events)]
    first_wait = order.index("warpgroup_mma_wait(")
    assert order[:3] == ["warpgroup_mma("] * 3, order          # tile ck + 1's QK
    assert "gl.exp2(" in order[3:first_wait], order             # the softmax before any wait
    assert order[first_wait - 1] == "warpgroup_mma(", order     # P·V_L, then the wait


def _find_all(text: str, word: str) -> list:
    out, i = [], text.find(word)
    while i >= 0:
        out.append(i)
        i = text.find(word, i + 1)
    return out


@pytest.mark.parametrize("tma", [False, True], ids=["cp_async", "tma"])
@pytest.mark.parametrize("b,s_q,h_q,h_kv,seqlens,causal,n_split",
                         checks.CASES + checks.MASK_EDGE_CASES,
                         ids=checks.CASE_IDS + checks.MASK_EDGE_IDS)
def test_emulated_variant_matches_the_reference(b, s_q, h_q, h_kv, seqlens, causal, n_split,
                                                tma):
    torch = pytest.importorskip("torch")
    from tle_compiler.testing.emulator import load_kernel_module

    mod = load_kernel_module(VARIANT, dot_dtypes=(torch.bfloat16,))
    checks.check_case("pipe", b, s_q, h_q, h_kv, seqlens, causal, n_split, tma=tma, mod=mod)
