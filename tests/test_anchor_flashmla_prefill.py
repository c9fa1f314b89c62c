"""The FlashMLA sparse-prefill anchor (benchmarks/anchor_flashmla_prefill.py, its glue
benchmarks/anchor/flashmla_prefill_glue.cu and build script), checked without a GPU:

- the ctypes signatures match the glue's C prototypes, argument for argument;
- a stand-in C library with the glue's prototype (compiled here with cc) plays the kernel on CPU
  memory through ctypes, so every pointer, stride and scalar the loader passes is read back as
  the kernel would read it;
- the loader refuses, by argument name and before any call, what FlashMLA's binding or kernel
  refuses; a library refusal raises the library's message;
- the build script compiles FlashMLA's dispatcher, its four kernel instantiations and the glue
  with FlashMLA's flags (a stand-in nvcc records its arguments), and names what is missing;
- benchmarks/ab_prefill_features.py --anchor times FlashMLA with the same arguments as the
  seesaw and prints one bar line per case;
- where the real library has been built (.anchor/libanchor_flashmla_prefill.so), its glue
  refuses bad shapes with its message, and without a GPU a call it accepts reaches FlashMLA's
  launcher, whose C++ exception comes back as a refusal instead of unwinding into Python.
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from benchmarks import ab_prefill_features as ab  # noqa: E402
from benchmarks.anchor_flashmla_prefill import (  # noqa: E402
    SIGNATURES, FlashMLAPrefillAnchor, bind, load_prefill_anchor)

ROOT = Path(__file__).resolve().parent.parent
GLUE = ROOT / "benchmarks/anchor/flashmla_prefill_glue.cu"
BUILD = ROOT / "benchmarks/anchor/build_flashmla_prefill_anchor.sh"
SCRIPT = ROOT / "benchmarks/anchor_flashmla_prefill.py"
REAL_LIB = Path(os.environ.get("TLE_FLASHMLA_PREFILL_ANCHOR",
                               ROOT / ".anchor/libanchor_flashmla_prefill.so"))

C_TYPES = {"int": ctypes.c_int, "float": ctypes.c_float, "long long": ctypes.c_longlong,
           "void*": ctypes.c_void_p, "const void*": ctypes.c_void_p,
           "const char*": ctypes.c_char_p}


def glue_prototypes() -> dict:
    """name -> (restype, [argtypes], [argument names]) of every extern "C" function of the glue."""
    src = re.sub(r"//[^\n]*", "", GLUE.read_text())
    protos = {}
    for ret, name, params in re.findall(r'extern "C"\s+([\w\s\*]+?)\s*(\w+)\(([^)]*)\)', src):
        types, names = [], []
        for p in filter(None, (p.strip() for p in params.split(","))):
            names.append(re.search(r"(\w+)$", p).group(1))
            types.append(C_TYPES[re.sub(r"\s*\*\s*", "* ", re.sub(r"\s+\w+$", "", p)).strip()])
        protos[name] = (C_TYPES[re.sub(r"\s*\*\s*", "*", ret.strip())], types, names)
    return protos


def test_ctypes_signatures_match_the_glue():
    protos = glue_prototypes()
    assert set(protos) == set(SIGNATURES)
    for name, (restype, argtypes) in SIGNATURES.items():
        assert protos[name][:2] == (restype, argtypes), name


def test_anchor_sparse_prefill_takes_its_arguments_in_the_loaders_order():
    assert glue_prototypes()["anchor_sparse_prefill"][2] == [
        "q", "kv", "indices", "out", "max_logits", "lse", "s_q", "s_kv", "h_q", "d_qk", "topk",
        "stride_q_s", "stride_q_h", "stride_kv_s", "stride_indices_s", "sm_scale", "attn_sink",
        "topk_length", "num_sms", "stream"]


# The glue's contract, played on host memory through the pointers and strides it is given:
# out[s, h, :] = q[s, h, :512]; max_logits[s, h] = indices[s, 0, 0] + 1000 * topk_length[s];
# lse[s, h] = kv[s % s_kv, 0, 1] + attn_sink[h] (each optional term 0 without its tensor).
# Every scalar argument is recorded; topk 4096 is refused.
STAND_IN_C = r"""
#include <stdint.h>
#include <string.h>
static double args[16];
static float bf16_to_float(uint16_t b) { uint32_t u = (uint32_t)b << 16; float f;
    memcpy(&f, &u, 4); return f; }
const char* anchor_prefill_last_error(void) { return "stand-in refusal"; }
int anchor_sparse_prefill(const void* q, const void* kv, const void* indices, void* out,
                          void* max_logits, void* lse, int s_q, int s_kv, int h_q, int d_qk,
                          int topk, long long stride_q_s, long long stride_q_h,
                          long long stride_kv_s, long long stride_indices_s, float sm_scale,
                          const void* attn_sink, const void* topk_length, int num_sms,
                          void* stream) {
    double a[] = {s_q, s_kv, h_q, d_qk, topk, stride_q_s, stride_q_h, stride_kv_s,
                  stride_indices_s, sm_scale, attn_sink != 0, topk_length != 0, num_sms,
                  (double)(intptr_t)stream};
    memcpy(args, a, sizeof(a));
    if (topk == 4096) return 1;
    for (int s = 0; s < s_q; s++) for (int h = 0; h < h_q; h++) {
        long long row = (long long)s * h_q + h;
        memcpy((uint16_t*)out + row * 512,
               (const uint16_t*)q + s * stride_q_s + h * stride_q_h, 512 * sizeof(uint16_t));
        float first = (float)((const int*)indices)[s * stride_indices_s];
        float len = topk_length ? (float)((const int*)topk_length)[s] : 0.0f;
        ((float*)max_logits)[row] = first + 1000.0f * len;
        float k = bf16_to_float(((const uint16_t*)kv)[(s % s_kv) * stride_kv_s + 1]);
        ((float*)lse)[row] = k + (attn_sink ? ((const float*)attn_sink)[h] : 0.0f);
    }
    return 0; }
double stand_in_arg(int i) { return args[i]; }
"""


@pytest.fixture(scope="module")
def stand_in_lib(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler for the stand-in library")
    d = tmp_path_factory.mktemp("prefill_anchor")
    (d / "stand_in.c").write_text(STAND_IN_C)
    so = d / "libstand_in.so"
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", str(so), str(d / "stand_in.c")],
                   check=True, capture_output=True)
    return so


class StandInDevice:
    def num_sms(self, device):
        return 132

    def stream(self, device):
        return 0xABC

    def guard(self, device):  # pragma: no cover - CPU tensors take no guard
        raise AssertionError("no device guard for CPU tensors")


def _anchor(path) -> FlashMLAPrefillAnchor:
    anchor = load_prefill_anchor(str(path))
    anchor._device = StandInDevice()
    lib = anchor._lib
    lib.stand_in_arg.restype, lib.stand_in_arg.argtypes = ctypes.c_double, [ctypes.c_int]
    return anchor


def _inputs(s_q=5, s_kv=7, h_q=64, d_qk=576, topk=128, sink=False, lengths=False):
    """q, kv and indices as views into larger tensors, so that every stride differs from what its
    shape alone would give (each still a multiple of 8 elements, as FlashMLA's loads need)."""
    q = torch.randn(s_q, h_q + 2, d_qk + 64).to(torch.bfloat16)[:, 1:h_q + 1, :d_qk]
    kv = torch.randn(s_kv, 1, d_qk + 8).to(torch.bfloat16)[..., :d_qk]
    indices = torch.arange(s_q * (topk + 3), dtype=torch.int32).view(s_q, 1, topk + 3)[..., :topk]
    extra = {}
    if sink:
        extra["attn_sink"] = torch.arange(h_q, dtype=torch.float32) * 0.5
    if lengths:
        extra["topk_length"] = torch.arange(s_q, dtype=torch.int32) + 3
    return q, kv, indices, extra


@pytest.mark.parametrize("h_q, d_qk, topk, sink, lengths", [
    (64, 576, 128, False, False), (128, 576, 256, True, False), (64, 512, 512, False, True),
    (128, 512, 1024, True, True)])
def test_every_pointer_stride_and_scalar_reaches_the_kernel(stand_in_lib, h_q, d_qk, topk, sink,
                                                            lengths):
    anchor = _anchor(stand_in_lib)
    q, kv, indices, extra = _inputs(h_q=h_q, d_qk=d_qk, topk=topk, sink=sink, lengths=lengths)
    out, max_logits, lse = anchor(q, kv, indices, 0.125, **extra)
    assert out.shape == (5, h_q, 512) and out.dtype == torch.bfloat16 and out.is_contiguous()
    assert max_logits.shape == lse.shape == (5, h_q)
    assert max_logits.dtype == lse.dtype == torch.float32
    assert torch.equal(out, q[..., :512])
    first = indices[:, 0, 0].float() + (1000.0 * extra["topk_length"].float() if lengths else 0)
    assert torch.equal(max_logits, first[:, None].expand(5, h_q))
    want_lse = kv[torch.arange(5) % 7, 0, 1].float()[:, None] + \
        (extra["attn_sink"][None, :] if sink else torch.zeros(1, h_q))
    assert torch.equal(lse, want_lse)
    arg = anchor._lib.stand_in_arg
    assert [arg(i) for i in range(5)] == [5, 7, h_q, d_qk, topk]
    assert [arg(i) for i in range(5, 9)] == [q.stride(0), q.stride(1), kv.stride(0),
                                             indices.stride(0)]
    assert q.stride()[:2] == ((h_q + 2) * (d_qk + 64), d_qk + 64) and kv.stride(0) == d_qk + 8
    assert arg(9) == 0.125 and arg(10) == sink and arg(11) == lengths
    assert arg(12) == 132 and arg(13) == 0xABC


def test_given_outputs_are_written_and_returned(stand_in_lib):
    anchor = _anchor(stand_in_lib)
    q, kv, indices, _ = _inputs()
    outputs = (torch.full((5, 64, 512), float("nan"), dtype=torch.bfloat16),
               torch.full((5, 64), float("nan")), torch.full((5, 64), float("nan")))
    got = anchor(q, kv, indices, 0.5, outputs=outputs)
    assert all(g is o for g, o in zip(got, outputs))
    assert torch.equal(outputs[0], q[..., :512]) and not outputs[2].isnan().any()


def test_a_refusal_of_the_library_raises_its_message(stand_in_lib):
    anchor = _anchor(stand_in_lib)
    with pytest.raises(ValueError, match="anchor_sparse_prefill refused: stand-in refusal"):
        anchor(*_inputs(topk=4096)[:3], 0.1)


def test_a_missing_library_says_how_to_build_one(tmp_path):
    with pytest.raises(FileNotFoundError, match="build_flashmla_prefill_anchor.sh"):
        load_prefill_anchor(tmp_path / "libnot_built.so")


def test_a_library_without_the_glue_functions_is_refused_by_name():
    class Partial:
        anchor_prefill_last_error = ctypes.CFUNCTYPE(ctypes.c_char_p)()
    with pytest.raises(AttributeError, match="anchor_sparse_prefill"):
        bind(Partial())


class RecordingLibrary:
    """A Python stand-in recording each call; it writes nothing."""

    def __init__(self):
        self.calls = []

    def anchor_prefill_last_error(self):
        return b""

    def anchor_sparse_prefill(self, *args):
        self.calls.append(args)
        return 0


def _strided_q(q):
    """q with its head stride 580 elements: not a multiple of 8 (TMA needs 16-byte strides)."""
    s_q, h_q, d = q.shape
    return torch.zeros(s_q, h_q, d + 4, dtype=q.dtype)[..., :d]


def _misaligned_kv(kv):
    """kv whose data starts 2 bytes past a 16-byte boundary."""
    s_kv, _, d = kv.shape
    return torch.zeros(s_kv * (d + 8) + 1, dtype=kv.dtype)[1:].as_strided(
        (s_kv, 1, d), (d + 8, d, 1))


@pytest.mark.parametrize("change, name", [
    (lambda q, kv, i, kw: ((q[:, :32], kv, i), kw), "q"),                      # h_q 32
    (lambda q, kv, i, kw: ((q[..., :320], kv[..., :320], i), kw), "q"),        # d_qk 320
    (lambda q, kv, i, kw: ((q.float(), kv, i), kw), "q"),
    (lambda q, kv, i, kw: ((q[None], kv[None], i[None]), kw), "q"),            # batched layout
    (lambda q, kv, i, kw: ((q[:0], kv, i[:0]), kw), "q"),                      # s_q 0
    (lambda q, kv, i, kw: ((_strided_q(q), kv, i), kw), "q"),
    (lambda q, kv, i, kw: ((q, kv.expand(7, 2, 576), i), kw), "kv"),
    (lambda q, kv, i, kw: ((q, _misaligned_kv(kv), i), kw), "kv"),
    (lambda q, kv, i, kw: ((q, kv.half(), i), kw), "kv"),
    (lambda q, kv, i, kw: ((q, kv, i.long()), kw), "indices"),
    (lambda q, kv, i, kw: ((q, kv, torch.cat([i, i[:, :, :64]], -1)), kw), "indices"),  # topk 192
    (lambda q, kv, i, kw: ((q, kv, i[:4]), kw), "indices"),
    (lambda q, kv, i, kw: ((q, kv, i), dict(attn_sink=torch.zeros(32))), "attn_sink"),
    (lambda q, kv, i, kw: ((q, kv, i), dict(attn_sink=torch.zeros(128)[::2])), "attn_sink"),
    (lambda q, kv, i, kw: ((q, kv, i), dict(topk_length=torch.zeros(5, dtype=torch.int64))),
     "topk_length"),
    (lambda q, kv, i, kw: ((q, kv, i), dict(d_v=256)), "d_v"),
    (lambda q, kv, i, kw: ((q, kv, i), dict(outputs=(torch.empty(5, 64, 512),) * 3)), "outputs"),
    (lambda q, kv, i, kw: ((q, kv, i), dict(outputs=(
        torch.empty(5, 64, 1024, dtype=torch.bfloat16)[..., :512], torch.empty(5, 64),
        torch.empty(5, 64)))), "outputs"),
])
def test_what_flashmla_refuses_is_refused_by_name_before_any_call(change, name):
    lib = RecordingLibrary()
    anchor = FlashMLAPrefillAnchor(lib, StandInDevice())
    q, kv, i, _ = _inputs()
    args, kw = change(q, kv, i, {})
    with pytest.raises(ValueError, match=rf"FlashMLA prefill anchor: {name}:"):
        anchor(*args, 0.1, **kw)
    assert not lib.calls
    anchor(q, kv, i, 0.1)  # the unchanged call goes through
    assert len(lib.calls) == 1


def test_build_script_needs_a_flashmla_checkout_and_names_what_is_missing(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("FLASHMLA_SRC", "CUTLASS_INC")}
    r = subprocess.run(["bash", str(BUILD), str(tmp_path / "x.so")], capture_output=True,
                       text=True, env=env, timeout=60)
    assert r.returncode != 0 and "FLASHMLA_SRC" in r.stderr
    r = subprocess.run(["bash", str(BUILD)], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode != 0 and "usage" in r.stderr
    r = subprocess.run(["bash", str(BUILD), str(tmp_path / "x.so")], capture_output=True,
                       text=True, env={**env, "FLASHMLA_SRC": str(tmp_path)}, timeout=60)
    assert r.returncode != 0 and f"missing {tmp_path}/csrc/params.h" in r.stderr


SPARSE = "csrc/sm90/prefill/sparse"
SOURCES = [f"{SPARSE}/fwd.cu"] + [f"{SPARSE}/instantiations/phase1_{v}.cu"
                                  for v in ("k512", "k512_topklen", "k576", "k576_topklen")]


def _fake_checkout(root: Path) -> None:
    for rel in ["csrc/params.h", f"{SPARSE}/phase1.cuh", "csrc/cutlass/include/cute/tensor.hpp",
                *SOURCES]:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("")


def test_build_script_compiles_flashmlas_sparse_prefill_unchanged_with_the_glue(tmp_path):
    """A stand-in nvcc on PATH records its arguments: the dispatcher, the four instantiations and
    the glue, for sm_90a, with FlashMLA's include folders and CUTLASS from the checkout's
    submodule; NVCC_THREADS becomes --threads; the output's folder is created."""
    src = tmp_path / "FlashMLA"
    _fake_checkout(src)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "nvcc_args"
    (bin_dir / "nvcc").write_text(f'#!/usr/bin/env bash\nprintf "%s\\n" "$@" > {log}\n')
    (bin_dir / "nvcc").chmod(0o755)
    out = tmp_path / "deep" / "lib.so"
    env = {k: v for k, v in os.environ.items() if k != "CUTLASS_INC"}
    env.update(FLASHMLA_SRC=str(src), NVCC_THREADS="2", PATH=f"{bin_dir}:{env['PATH']}")
    r = subprocess.run(["bash", str(BUILD), str(out)], capture_output=True, text=True, env=env,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    args = log.read_text().splitlines()
    assert out.parent.is_dir() and args[args.index("-o") + 1] == str(out)
    assert [a for a in args if a.endswith(".cu")] == [str(src / s) for s in SOURCES] + [str(GLUE)]
    assert "arch=compute_90a,code=sm_90a" in args and "-shared" in args
    assert args[args.index("--threads") + 1] == "2"
    includes = [args[i + 1] for i, a in enumerate(args) if a == "-I"]
    assert includes == [str(src / "csrc"), str(src / "csrc/kerutils/include"),
                        str(src / "csrc/sm90"), str(src / "csrc/cutlass/include")]
    assert "-std=c++20" in args and "--use_fast_math" in args
    env["CUTLASS_INC"] = str(tmp_path / "elsewhere")
    r = subprocess.run(["bash", str(BUILD), str(out)], capture_output=True, text=True, env=env,
                       timeout=60)
    assert r.returncode != 0 and "elsewhere/cute/tensor.hpp" in r.stderr


def test_anchor_script_explains_the_build_and_needs_its_library():
    r = subprocess.run([sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert "--lib" in r.stdout and "build_flashmla_prefill_anchor.sh" in r.stdout
    assert "FLASHMLA_SRC" in r.stdout
    r = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "--lib" in r.stderr


# ---------------------------------------------------------------------------------------------
# benchmarks/ab_prefill_features.py --anchor

def test_bar_line_is_met_from_a_ratio_of_one():
    assert ab.bar_line("x", 500.0, 500.0).endswith("= 1.000 (>= 1.00: met)")
    assert ab.bar_line("x", 499.0, 500.0).endswith("= 0.998 (>= 1.00: not met)")
    assert ab.bar_line("skv=8192 attn_sink", 612.0, 600.0).startswith(
        "bar skv=8192 attn_sink: TLE 612.0 / FlashMLA 600.0 TFLOP/s = 1.020")


def test_features_benchmark_lists_anchor_flag():
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks/ab_prefill_features.py"), "--help"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "--anchor LIB" in r.stdout and "TLE / FlashMLA" in r.stdout


def test_features_benchmark_times_flashmla_with_the_seesaws_arguments(monkeypatch, capsys):
    """main(--anchor) on CPU with every GPU piece replaced: each FlashMLA case gets the inputs,
    scale and optional arguments its seesaw case gets, and a bar line is printed per case, with
    the TLE / FlashMLA ratio of the (stand-in) medians."""
    import benchmarks.anchor_flashmla_prefill as anchor_module
    import benchmarks.interleaved as interleaved
    import tle_kernels.reference as reference
    from tle_kernels import api

    calls = {"seesaw": [], "FlashMLA": []}

    def fake_anchor(q, kv, idx, sm_scale, d_v=512, attn_sink=None, topk_length=None,
                    outputs=None):
        calls["FlashMLA"].append((q, kv, idx, sm_scale, attn_sink, topk_length, outputs))

    def fake_launch(impl, q, kv, idx, sm_scale, out, ml, lse, attn_sink=None, topk_length=None):
        assert impl == "seesaw"
        calls["seesaw"].append((q, kv, idx, sm_scale, attn_sink, topk_length, (out, ml, lse)))

    def fake_tflops(cases, flop, reps, label="", warmup=50, rep=200):
        res = {}
        for name, f in cases.items():
            f()
            res[name] = [400.0 if name.startswith("FlashMLA") else 420.0] * reps
        return res

    make_inputs = reference.make_inputs

    def cpu_inputs(sq, skv, h, topk, d_qk=576, device="cuda", seed=0):
        return make_inputs(sq, skv, h, topk, d_qk, "cpu", seed)

    monkeypatch.setattr(anchor_module, "load_prefill_anchor", lambda path: fake_anchor)
    monkeypatch.setattr(ab, "check_anchor", lambda anchor: anchor is fake_anchor)
    monkeypatch.setattr(interleaved, "interleaved_tflops", fake_tflops)
    monkeypatch.setattr(api, "launch", fake_launch)
    monkeypatch.setattr(reference, "make_inputs", cpu_inputs)
    rc = ab.main(["--anchor", "lib.so", "--skv", "300", "--sq", "4", "--h", "64", "--topk",
                  "128", "--reps", "2"])
    assert rc == 0
    seesaw, flashmla = calls["seesaw"], calls["FlashMLA"]
    assert len(seesaw) == len(flashmla) == 4 + len(ab.D512_SHAPES)
    for t, f in zip(seesaw, flashmla):
        for a, b in zip(t[:3], f[:3]):  # the same input tensors
            assert a is b
        assert t[3] == f[3]
        assert (t[4] is None) == (f[4] is None) and (t[5] is None) == (f[5] is None)
        if t[4] is not None:
            assert t[4] is f[4]
        if t[5] is not None:
            assert t[5] is f[5] and bool((f[5] == f[2].shape[-1]).all())  # every row full
        assert all(a is not b for a, b in zip(t[6], f[6]))  # separate outputs
    assert [(c[4] is not None, c[5] is not None) for c in flashmla[:4]] == [
        (False, False), (True, False), (False, True), (True, True)]
    assert [(c[0].shape[1], c[0].shape[2], c[2].shape[-1]) for c in flashmla[4:]] == [
        (h, 512, topk) for h, topk in ab.D512_SHAPES]
    assert flashmla[4][3] == pytest.approx(512 ** -0.5) and flashmla[0][3] == pytest.approx(
        576 ** -0.5)
    bars = [line for line in capsys.readouterr().out.splitlines() if line.startswith("bar ")]
    assert len(bars) == 4 + len(ab.D512_SHAPES)
    assert all(line.endswith("= 1.050 (>= 1.00: met)") for line in bars)
    assert "d_qk=576 h_q=64 topk=128 attn_sink" in bars[1]
    assert "d_qk=512 h_q=128 topk=1024 plain" in bars[-1]


def test_features_benchmark_stops_when_the_anchor_fails_its_check(monkeypatch, capsys):
    import benchmarks.anchor_flashmla_prefill as anchor_module
    monkeypatch.setattr(anchor_module, "load_prefill_anchor", lambda path: object())
    monkeypatch.setattr(ab, "check_anchor", lambda anchor: False)
    assert ab.main(["--anchor", "lib.so"]) == 1
    assert "does not match the fp32 reference" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------
# The real library, where it has been built (no GPU needed for these)

needs_real_lib = pytest.mark.skipif(not REAL_LIB.is_file(),
                                    reason=f"no FlashMLA prefill anchor library at {REAL_LIB}")


@needs_real_lib
@pytest.mark.parametrize("h_q, d_qk, topk, s_q, message", [
    (32, 576, 256, 4, "h_q must be 64 or 128"), (64, 320, 256, 4, "d_qk must be 512 or 576"),
    (64, 576, 192, 4, "topk must be a positive multiple of 128"),
    (128, 512, 0, 4, "topk must be a positive multiple of 128"),
    (64, 576, 256, 0, "s_q must be positive")])
def test_the_built_glue_refuses_what_the_kernel_cannot_take(h_q, d_qk, topk, s_q, message):
    lib = bind(ctypes.CDLL(str(REAL_LIB)))
    rc = lib.anchor_sparse_prefill(16, 16, 16, 16, 16, 16, s_q, 100, h_q, d_qk, topk, h_q * d_qk,
                                   d_qk, d_qk, topk, 0.1, None, None, 132, None)
    assert rc == 1 and message in lib.anchor_prefill_last_error().decode()


@needs_real_lib
@pytest.mark.skipif(torch.cuda.is_available(),
                    reason="on a GPU this would launch on bogus pointers")
def test_without_a_gpu_flashmlas_exception_comes_back_as_a_refusal():
    """Each of the four kernels' host code (d_qk 512 / 576, with / without topk_length) runs until
    its tensor maps fail for want of a driver; the exception it throws is caught in the glue."""
    code = (
        "import ctypes, sys\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "from benchmarks.anchor_flashmla_prefill import bind\n"
        f"lib = bind(ctypes.CDLL({str(REAL_LIB)!r}))\n"
        "for d in (512, 576):\n"
        "    for tl in (None, 4096):\n"
        "        rc = lib.anchor_sparse_prefill(1024, 1024, 1024, 1024, 1024, 1024, 4, 100, 64, d,"
        " 256, 64 * d, d, d, 256, 0.1, None, tl, 132, None)\n"
        "        print(rc, lib.anchor_prefill_last_error().decode())\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 4
    for line in lines:
        rc, msg = line.split(" ", 1)
        assert rc == "1" and ("error" in msg.lower() or "failed" in msg.lower()), line
