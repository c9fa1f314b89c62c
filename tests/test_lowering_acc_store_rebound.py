"""The 16-byte accumulator store (lowering/acc_store.py) takes only a column index known to be
contiguous where the store runs: ``tl.arange(0, n)`` itself or a name assigned exactly once in the
partition. A name bound to the arange and rebound on another path (``if REVERSE != 0: cols =
(D - 1) - cols`` before the store; ``cols = (D - 1) - cols`` after it in a loop body, reaching it
over the back-edge) is not: the walk holds the arange binding there, but the helper's lane
addressing (first element + 12q bytes) would then write the reversed tile unreversed and past the
row end. Such a store is a plain ``gl.store``.

The kernels are tle_kernels/examples/attention_tile.py with the epilogues below and a bf16 output
(the helper's 16-bit path). The Gluon and the PTX show which store the lowering chose; the CPU
emulator runs the kernels' source and checks the results their stores must produce (the reversed
columns), the reference a GPU run of the lowered kernels is held to."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

pytest.importorskip("triton.experimental.gluon")

from tle_compiler.lowering import gluon_source  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
ATT = ROOT / "tle_kernels/examples/attention_tile.py"
BM = BN = D = 64

_STORE = "    tl.store(o_ptr + tl.arange(0, BM)[:, None] * D + tl.arange(0, D)[None, :], out)\n"
_EPILOGUES = {
    # rebound under an `if` before the store
    "branch": ("    cols = tl.arange(0, D)\n"
               "    if REVERSE != 0:\n"
               "        cols = (D - 1) - cols  # store the columns in reverse order\n"
               "    tl.store(o_ptr + tl.arange(0, BM)[:, None] * D + cols[None, :], out)\n"),
    # assigned once: contiguous, keeps the 16-byte store
    "once": ("    cols = tl.arange(0, D)\n"
             "    tl.store(o_ptr + tl.arange(0, BM)[:, None] * D + cols[None, :], out)\n"),
}
# rebound after the store in the loop body: iteration t stores the running (unnormalised)
# accumulator into rows t*BM.., its columns reversed in odd iterations
_LOOP_STORE = ("        tl.store(o_ptr + t * BM * D + tl.arange(0, BM)[:, None] * D + cols[None, :], acc)\n"
               "        cols = (D - 1) - cols\n")


def _variant(tmp_path: Path, kind: str) -> Path:
    src = ATT.read_text()
    src = src.replace('"o_ptr": "*fp32"', '"o_ptr": "*bf16"')
    if kind == "loop":
        rel = "        r.release(t)\n"
        init = "    acc = tl.zeros([BM, D], tl.float32)\n"  # attend's, before its loop
        assert rel in src and src.count(init) == 1
        src = src.replace(init, init + "    cols = tl.arange(0, D)\n")
        src = src.replace(rel, rel + _LOOP_STORE)
        out = "    out = acc / l_i[:, None]\n"
        assert out + _STORE in src
        src = src.replace(out + _STORE, "")  # the loop's stores are the output
    else:
        assert _STORE in src
        src = src.replace(_STORE, _EPILOGUES[kind])
    if kind == "branch":
        for old, new in (("o_ptr, N_KV, sm_scale):", "o_ptr, N_KV, sm_scale, REVERSE):"),
                         ("(attend, (q, kv, o_ptr, sm_scale, NT))", "(attend, (q, kv, o_ptr, sm_scale, NT, REVERSE))"),
                         ("def attend(q, kv, o_ptr, sm_scale, NT):", "def attend(q, kv, o_ptr, sm_scale, NT, REVERSE):"),
                         ('"sm_scale": "fp32"}', '"sm_scale": "fp32", "REVERSE": "i32"}')):
            assert old in src, old
            src = src.replace(old, new)
    p = tmp_path / f"att_cols_{kind}.py"
    p.write_text(src)
    return p


def _attend(src: str) -> str:
    return src.split("def attend(", 1)[1].split("@gluon.jit", 1)[0]


@pytest.mark.parametrize("kind", ["branch", "loop"])
def test_a_rebound_column_index_takes_the_plain_store(tmp_path, kind):
    attend = _attend(gluon_source((str(_variant(tmp_path, kind)), "attention_tile")).source)
    assert "_tle_store_acc(" not in attend
    (store,) = [ln for ln in attend.splitlines() if "gl.store(" in ln]
    assert "cols[None, :]" in store  # the rebound name, as the walk binds it at the store


def test_a_column_index_assigned_once_keeps_the_16_byte_store(tmp_path):
    attend = _attend(gluon_source((str(_variant(tmp_path, "once")), "attention_tile")).source)
    (store,) = [ln for ln in attend.splitlines() if "_tle_store_acc(" in ln]
    assert "gl.store(" not in attend
    assert "gl.arange(0, D" in store  # the name rematerialised as the arange it was bound to


@pytest.mark.parametrize("kind", ["branch", "loop", "once"])
def test_the_stores_compile_for_sm90a(tmp_path, kind):
    """The plain store of an accumulator-layout tile compiles; the quad-transpose asm (its lane
    offset ``q * 12``) is in the PTX only where the lowering chose the 16-byte store."""
    from tle_compiler.frontend import read_kernels
    from tle_compiler.lowering import compile_kernel
    from tle_compiler.lowering.dumping import default_config

    path = _variant(tmp_path, kind)
    info = next(i for i in read_kernels(str(path), name="attention_tile"))
    c = compile_kernel(info, default_config(str(path), "attention_tile")["signature"], {},
                       num_warps=4)
    assert ".target sm_90a" in c.asm["ptx"] and c.asm["cubin"]
    assert ("mul.wide.u32 o, q, 12;" in c.asm["ptx"]) is (kind == "once")


def _inputs(n_kv: int):
    import torch

    g = torch.Generator().manual_seed(n_kv)
    q = torch.randn(BM, D, generator=g).bfloat16()
    k = torch.randn(n_kv, D, generator=g).bfloat16()
    v = torch.randn(n_kv, D, generator=g).bfloat16()
    return q, k, v


def _running_acc(q, k, v, n_tiles: int, sm_scale: float) -> list:
    """The unnormalised accumulator after each tile: exp2(S - running max) · V (fp32)."""
    s = (q.float() @ k.float().T) * (sm_scale * math.log2(math.e))
    out = []
    for t in range(n_tiles):
        st = s[:, :(t + 1) * BN]
        p = (st - st.max(1, keepdim=True).values).exp2()
        out.append(p @ v[:(t + 1) * BN].float())
    return out


@pytest.mark.parametrize("reverse", [0, 1])
def test_emulated_branch_kernel_reverses_the_columns(tmp_path, reverse):
    torch = pytest.importorskip("torch")
    from tle_compiler.testing.emulator import load_kernel_module

    mod = load_kernel_module(_variant(tmp_path, "branch"))
    n_kv, sm_scale = 2 * BN, D ** -0.5
    q, k, v = _inputs(n_kv)
    o = torch.full((BM, D), float("nan")).bfloat16()
    mod.attention_tile[(1,)](q, k, v, o, n_kv, sm_scale, reverse)
    s = (q.float() @ k.float().T) * sm_scale
    ref = torch.softmax(s, 1) @ v.float()
    want = ref.flip(1) if reverse else ref
    torch.testing.assert_close(o.float(), want, rtol=2e-2, atol=2e-2)
    assert not torch.allclose(o.float(), ref.flip(1) if not reverse else ref, rtol=2e-2, atol=2e-2)


def test_emulated_loop_kernel_reverses_the_odd_tiles(tmp_path):
    torch = pytest.importorskip("torch")
    from tle_compiler.testing.emulator import load_kernel_module

    mod = load_kernel_module(_variant(tmp_path, "loop"))
    n_tiles, sm_scale = 3, D ** -0.5
    q, k, v = _inputs(n_tiles * BN)
    o = torch.full((n_tiles * BM, D), float("nan")).bfloat16()
    mod.attention_tile[(1,)](q, k, v, o, n_tiles * BN, sm_scale)
    for t, acc in enumerate(_running_acc(q, k, v, n_tiles, sm_scale)):
        want = acc.flip(1) if t % 2 else acc
        got = o[t * BM:(t + 1) * BM].float()
        torch.testing.assert_close(got, want, rtol=3e-2, atol=3e-2 * acc.abs().max().item())
