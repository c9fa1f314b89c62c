"""``tl.trans`` of a shared-memory tile bound to a name (lowering/translate.py,
``_trans_of_tile``): a helper that computes its QK as ``tl.dot(tl.load(local_ptr(q)),
tl.trans(tl.load(local_ptr(res.slot.k))))`` is inlined by the frontend with its subexpressions
split over temporaries, so the tl.trans no longer sits inside the tl.dot. The lowering keeps it
as a deferred view of the tile that a tl.dot reads transposed in place, exactly as the inline
form. A name whose tl.trans of a tile is also read otherwise (`+ kt`) is no deferred view (it was
refused, while tle-dump said verified): the tile is loaded and transposed in registers where it
is bound (``gl.permute``), and the tl.dot stages that register B through shared memory.

The kernels are tle_kernels/examples/attention_tile.py with its QK moved into a helper, and a
variant that reads the view into registers."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("triton.experimental.gluon")

ROOT = Path(__file__).resolve().parent.parent
ATT = ROOT / "tle_kernels/examples/attention_tile.py"
_QK = '''        s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q)),
                   tl.trans(tl.load(tle.gpu.local_ptr(res.slot.k)))) * qk_scale'''
_HELPER = '''def scores_of(qres, res):
    return tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q)),
                  tl.trans(tl.load(tle.gpu.local_ptr(res.slot.k))))


def attend('''


def _variant(tmp_path: Path, body: str, name: str) -> Path:
    src = ATT.read_text()
    assert _QK in src
    src = src.replace(_QK, body).replace("def attend(", _HELPER, 1)
    p = tmp_path / f"{name}.py"
    p.write_text(src)
    return p


def _wgmmas(path) -> list:
    from tle_compiler.lowering import gluon_source

    src = gluon_source((str(path), "attention_tile")).source
    return [ln.split("= ", 1)[1] for ln in src.splitlines() if "warpgroup_mma(" in ln]


def test_a_helper_qk_lowers_to_the_inline_wgmmas(tmp_path):
    import re

    helper = _variant(tmp_path, "        s = scores_of(qres, res) * qk_scale", "helper")
    norm = [re.sub(r"_\w*\d+", "_N", w) for w in _wgmmas(helper)]
    want = [re.sub(r"_\w*\d+", "_N", w) for w in _wgmmas(ATT)]
    assert norm == want and "kv_k.index(_N).permute((1, 0))" in norm[0]


def test_a_helper_qk_compiles_for_sm90a(tmp_path):
    from tle_compiler.frontend import read_kernels
    from tle_compiler.lowering import compile_kernel
    from tle_compiler.lowering.dumping import default_config

    path = _variant(tmp_path, "        s = scores_of(qres, res) * qk_scale", "helper")
    info = next(i for i in read_kernels(str(path), name="attention_tile"))
    c = compile_kernel(info, default_config(str(path), "attention_tile")["signature"], {},
                       num_warps=4)
    assert "wgmma.mma_async" in c.asm["ptx"]


def test_a_named_transposed_tile_feeds_the_dot(tmp_path):
    body = ('''        kt = tl.trans(tl.load(tle.gpu.local_ptr(res.slot.k)))
        s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q)), kt) * qk_scale''')
    assert _wgmmas(_variant(tmp_path, body, "named"))[0].startswith(
        _wgmmas(ATT)[0].split("(")[0])


def test_a_view_read_into_registers_is_loaded_where_bound(tmp_path):
    import re

    from tle_compiler.lowering import gluon_source

    body = ('''        kt = tl.trans(tl.load(tle.gpu.local_ptr(res.slot.k)))
        s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q)), kt) * qk_scale + kt''')
    src = gluon_source((str(_variant(tmp_path, body, "regs")), "attention_tile")).source
    bound = re.search(r"kt = gl\.convert_layout\(gl\.permute\((_v\d+), \(1, 0\)\), L\d+\)", src)
    assert bound is not None, src
    assert re.search(rf"{bound.group(1)} = kv_k\.index\(_kv_s\d+\)\.load\(", src), src
    assert re.search(r"_b\d+ = gl\.allocate_shared_memory\(gl\.bfloat16, \[\d+, \d+\], "
                     r"gl\.NVMMASharedLayout\([^)]*\), kt\)", src), src


def test_emulated_helper_kernel_matches_torch(tmp_path):
    torch = pytest.importorskip("torch")
    from tle_compiler.testing.emulator import load_kernel_module

    mod = load_kernel_module(_variant(tmp_path, "        s = scores_of(qres, res) * qk_scale",
                                      "helper"))
    d = 64
    g = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(n, d, generator=g).bfloat16() for n in (64, 128, 128))
    o = torch.full((64, d), float("nan"))
    mod.attention_tile[(1,)](q, k, v, o, 128, d ** -0.5)
    ref = torch.softmax((q.float() @ k.float().T) * d ** -0.5, 1) @ v.float()
    assert torch.allclose(o, ref, atol=2e-2, rtol=2e-2)


CHAIN = '''import triton.language as tl
import tle_compiler as tle


@tle.jit
def k(x_ptr, y_ptr, N):
    kv = tle.pipe(capacity=2, q=tle.gpu.alloc([2, 64, 64], tl.bfloat16),
                  f=tle.gpu.alloc([2, 64, 64], tl.bfloat16))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, y_ptr, N))], [4], [232])


def produce(kv, x_ptr, N):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    w = kv.writer()
    for p in range(N):
        slot = w.acquire(p)
        tl.store(tle.gpu.local_ptr(slot.q), tl.load(x_ptr + offs))
        tl.store(tle.gpu.local_ptr(slot.f), tl.load(x_ptr + 4096 + offs))
        w.commit(p)


def consume(kv, y_ptr, N):
    r = kv.reader()
    acc = tl.zeros([64, 64], tl.float32)
    for p in range(N):
        res = r.wait(p)
BODY
        r.release(p)
    tl.store(y_ptr + tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :], acc)


def s_tile(q_slot, k_slot, acc):
    return tl.dot(tl.load(tle.gpu.local_ptr(q_slot.q)),
                  tl.trans(tl.load(tle.gpu.local_ptr(k_slot.f))), acc)


def s_tile_named(q_slot, k_slot, acc):
    q = tl.load(tle.gpu.local_ptr(q_slot.q))
    kt = tl.trans(tl.load(tle.gpu.local_ptr(k_slot.f)))
    return tl.dot(q, kt, acc)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*bf16", "y_ptr": "*fp32", "N": "i32"},
                  "constexprs": {}}
'''
INLINE = ("        acc = tl.dot(tl.load(tle.gpu.local_ptr(res.slot.q)),\n"
          "                     tl.trans(tl.load(tle.gpu.local_ptr(res.slot.f))), acc)")


@pytest.mark.parametrize("call", ["acc = s_tile(res.slot, res.slot, acc)",
                                  "acc = s_tile_named(res.slot, res.slot, acc)"])
def test_a_dot_chain_through_a_helper_lowers_as_inline(tmp_path, call):
    """A dot whose slot operands a helper loads (``s_tile``): the frontend inlines the helper with
    its subexpressions split over temporaries (``t = tl.load(local_ptr(q_slot.q))``, ``u =
    tl.trans(...)``, ``tl.dot(t, u, acc)``). Each temporary read only as a tl.dot operand, or
    through such a transposed view, is a deferred tile that wgmma reads in place: the helper
    form lowers to the inline form's wgmmas and loads no slot into registers (it loaded each
    operand at its temporary, dead code the inline form never had)."""
    from tle_compiler.lowering import gluon_source

    def consume(body: str, name: str) -> str:
        path = tmp_path / f"{name}.py"
        path.write_text(CHAIN.replace("BODY", body))
        src = gluon_source((str(path), "k")).source
        return src.split("def consume(", 1)[1].split("@gluon.jit", 1)[0]

    inline, helper = consume(INLINE, "inline"), consume("        " + call, "helper")

    def shape(text: str) -> list[str]:
        # the partition's operations, generated names and aliases of the helper's names aside
        import re

        lines = [re.sub(r"\b_\w*?\d+\w*", "_N", ln.strip()) for ln in text.splitlines()]
        return [ln for ln in lines if not re.fullmatch(r"(_N|acc) = (_N|acc)", ln)]

    assert ".load(" not in helper.split("for p in range", 1)[1], helper
    assert shape(helper) == shape(inline), (helper, inline)
    assert "warpgroup_mma(kv_q.index(_kv_s1), kv_f.index(_kv_s1).permute((1, 0)), acc" in inline
