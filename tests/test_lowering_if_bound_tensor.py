"""A tensor name first bound inside an ``if`` and bound again in its ``else`` has one layout on
both paths (lowering/translate.py, ``then_bound``): the generated Gluon merges the two branches'
values into one name, and Gluon requires them to have the same type, whether the condition is a
runtime scalar (an ``scf.if`` with results) or a constexpr that Triton folds (then the code after
the ``if`` must accept the layout of whichever branch remains). Before, each branch's assignment
got a layout variable of its own: a use after the ``if`` that wants a slice layout (``x[None,
:]``) fixed one branch's and left the other's blocked, and the kernel did not compile (the seesaw
producer's index load, masked only when TOPK % 128 == 64, hit this).

The kernel is tle_kernels/examples/attention_tile.py with its output columns chosen by an
``if``/``else``, as a runtime argument and as a constexpr."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("triton.experimental.gluon")

ROOT = Path(__file__).resolve().parent.parent
ATT = ROOT / "tle_kernels/examples/attention_tile.py"

_STORE = "    tl.store(o_ptr + tl.arange(0, BM)[:, None] * D + tl.arange(0, D)[None, :], out)\n"
_BOTH = ("    if REVERSE != 0:\n"
         "        cols = (D - 1) - tl.arange(0, D)  # the columns in reverse order\n"
         "    else:\n"
         "        cols = tl.arange(0, D) + 0\n"
         "    tl.store(o_ptr + tl.arange(0, BM)[:, None] * D + cols[None, :], out)\n")


def _variant(tmp_path: Path, constexpr: bool) -> Path:
    src = ATT.read_text().replace('"o_ptr": "*fp32"', '"o_ptr": "*bf16"')
    assert _STORE in src
    src = src.replace(_STORE, _BOTH)
    kind = '"constexpr"' if constexpr else '"i32"'
    for old, new in (("o_ptr, N_KV, sm_scale):", "o_ptr, N_KV, sm_scale, REVERSE):"),
                     ("(attend, (q, kv, o_ptr, sm_scale, NT))",
                      "(attend, (q, kv, o_ptr, sm_scale, NT, REVERSE))"),
                     ("def attend(q, kv, o_ptr, sm_scale, NT):",
                      "def attend(q, kv, o_ptr, sm_scale, NT, REVERSE):"),
                     ('"sm_scale": "fp32"}', f'"sm_scale": "fp32", "REVERSE": {kind}}}')):
        assert old in src, old
        src = src.replace(old, new)
    if constexpr:
        old = "o_ptr, N_KV, sm_scale, REVERSE):"
        src = src.replace(old, "o_ptr, N_KV, sm_scale, REVERSE: tl.constexpr):")
    p = tmp_path / f"att_cols_{'cx' if constexpr else 'rt'}.py"
    p.write_text(src)
    return p


def _compiled(path: Path, constexprs: dict):
    from tle_compiler.frontend import read_kernels
    from tle_compiler.lowering import compile_kernel
    from tle_compiler.lowering.dumping import default_config

    info = next(i for i in read_kernels(str(path), name="attention_tile"))
    sig = default_config(str(path), "attention_tile")["signature"]
    return compile_kernel(info, sig, constexprs, num_warps=4)


def test_a_name_bound_in_both_branches_of_a_runtime_if_compiles(tmp_path):
    c = _compiled(_variant(tmp_path, constexpr=False), {})
    assert ".target sm_90a" in c.asm["ptx"] and c.asm["cubin"]


@pytest.mark.parametrize("reverse", [0, 1])
def test_a_name_bound_in_both_branches_of_a_constexpr_if_compiles(tmp_path, reverse):
    c = _compiled(_variant(tmp_path, constexpr=True), {"REVERSE": reverse})
    assert ".target sm_90a" in c.asm["ptx"] and c.asm["cubin"]


def test_both_branches_bind_the_name_with_one_layout(tmp_path):
    import re

    from tle_compiler.lowering import gluon_source

    src = gluon_source((str(_variant(tmp_path, constexpr=False)), "attention_tile")).source
    attend = src.split("def attend(", 1)[1].split("@gluon.jit", 1)[0]
    layouts = re.findall(r"cols = .*gl\.arange\(0, D, layout=(\w+)\)", attend)
    assert len(layouts) == 2 and layouts[0] == layouts[1], attend


@pytest.mark.parametrize("reverse", [0, 1])
def test_emulated_kernel_stores_the_chosen_columns(tmp_path, reverse):
    torch = pytest.importorskip("torch")
    from tle_compiler.testing.emulator import load_kernel_module

    mod = load_kernel_module(_variant(tmp_path, constexpr=False))
    bm = d = 64
    g = torch.Generator().manual_seed(reverse)
    q, k, v = (torch.randn(n, d, generator=g).bfloat16() for n in (bm, 2 * bm, 2 * bm))
    o = torch.full((bm, d), float("nan")).bfloat16()
    mod.attention_tile[(1,)](q, k, v, o, 2 * bm, d ** -0.5, reverse)
    ref = torch.softmax((q.float() @ k.float().T) * d ** -0.5, 1) @ v.float()
    if reverse:
        ref = ref.flip(1)
    assert torch.allclose(o.float(), ref, atol=2e-2, rtol=2e-2)
