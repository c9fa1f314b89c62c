"""The benchmark scripts that need a GPU still explain themselves on a machine without one (their
imports of torch and triton are inside main, after argument parsing)."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("script, words", [
    ("benchmarks/ab_tail_split.py", ("tail_split", "--reps", "--impl")),
    ("benchmarks/ab_prefill_features.py", ("attn_sink", "topk_length", "--reps", "--warmup")),
    ("benchmarks/anchor_flashmla.py", ("--lib", "FlashMLA", "--skv")),
    ("benchmarks/run_flashmla_decode_test.py", ("--tests", "--sample", "--shard", "FlashMLA")),
    ("benchmarks/ab_decode.py", ("--kernel", "--points", "--anchor", "--reps", "split-fp8")),
    ("benchmarks/decode_small_batch.py", ("--anchor", "--batches", "--lengths", "--reps")),
    ("benchmarks/ab_shared_q.py", ("--batches", "--topk-length", "--reps", "shares_q")),
    ("benchmarks/ab_round_split.py", ("--shapes", "--anchor", "--reps", "plan_round_split")),
    ("benchmarks/ab_fp8_load_hints.py", ("--variants", "--anchor", "--reps", "--cpu", "evict_first")),
])
def test_help_without_a_gpu(script, words):
    r = subprocess.run([sys.executable, str(ROOT / script), "--help"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    for w in words:
        assert w in r.stdout, (w, r.stdout)


def test_anchor_script_needs_its_library():
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks/anchor_flashmla.py")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "--lib" in r.stderr


def test_flashmla_test_runner_needs_the_test_folder(tmp_path):
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks/run_flashmla_decode_test.py"),
                        "--tests", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "test_flash_mla_dense_decoding.py" in r.stderr


def test_flashmla_test_runner_lists_the_tests_cases():
    """The runner rebuilds the test's case lists from its TestParam: a stand-in TestParam shows the
    sample is drawn from the correctness cases (only h_q divisible by h_kv) and every corner case
    is kept."""
    R = benchmark_module("run_flashmla_decode_test")

    class T:
        @staticmethod
        def TestParam(*a, **k):
            return (a, tuple(sorted(k.items())))

    sampled, corner, n_all = R.cases(T, 50, 0)
    assert n_all == 2304 and len(sampled) == 50 and len(set(sampled)) == 50
    assert len(corner) == 32
    assert all(dict(k)["h_q"] % dict(k)["h_kv"] == 0 for _, k in sampled + corner)
    assert R.cases(T, 50, 0)[0] == sampled and R.cases(T, 50, 1)[0] != sampled


def benchmark_module(name: str):
    """The script benchmarks/<name>.py imported as a module (its folder on the path meanwhile)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.pop(0)


def _ab_decode():
    return benchmark_module("ab_decode")


def test_ab_decode_loads_a_copy_with_relative_imports(tmp_path):
    """A variant is a copy of the kernel's module anywhere on disk: its package-relative imports
    are read from tle_kernels, and the kernel of the bundled name is what it returns (a tle.jit
    kernel of that file, not the bundled one); a file without that kernel is refused by name."""
    pytest.importorskip("triton")
    ab = _ab_decode()
    src = (ROOT / "tle_kernels" / "mla_decode_pipe.py").read_text()
    assert "\nfrom ." in src
    variant = tmp_path / "pipe_b.py"
    variant.write_text(src.replace("@tle.jit(num_warps=4)", "@tle.jit(num_warps=4)  # variant"))
    kernel = ab.load_variant(str(variant), "mla_decode_pipe", "t")
    import tle_kernels.mla_decode_pipe as bundled

    assert kernel is not bundled.mla_decode_pipe
    assert Path(kernel.file).name == "pipe_b_t.py" and kernel.name == "mla_decode_pipe"
    empty = tmp_path / "nothing.py"
    empty.write_text("X = 1\n")
    with pytest.raises(SystemExit, match="defines no kernel named mla_decode_pipe"):
        ab.load_variant(str(empty), "mla_decode_pipe", "t")
    with pytest.raises(SystemExit, match="no such file"):
        ab.load_variant(str(tmp_path / "missing.py"), "mla_decode_pipe", "t")


def test_ab_decode_points():
    ab = _ab_decode()
    shapes = {"b128_s1": None, "b64_s2_causal": None}
    assert ab.parse_points(["b128_s1:4096", "b64_s2_causal:8192"], "dense", shapes) == \
        [("b128_s1", 4096), ("b64_s2_causal", 8192)]
    with pytest.raises(SystemExit, match="needs a length"):
        ab.parse_points(["b128_s1"], "dense", shapes)
    with pytest.raises(SystemExit, match="unknown shape 'b7'"):
        ab.parse_points(["b7:4096"], "dense", shapes)
    # a dense shape outside the benchmark's, spelled out (h_q 128 unless given)
    assert ab.parse_points(["b8_s1:4096", "b16_s2_causal:1024"], "dense", shapes) == \
        [("b8_s1", 4096), ("b16_s2_causal", 1024)]
    assert ab.dense_shape("b16_s2_causal", shapes) == (16, 2, 128, True, ())
    assert ab.dense_shape("b32_s1_h64", shapes) == (32, 1, 64, False, ())
    assert ab.dense_shape("b128_s1", {"b128_s1": (1, 2, 3, False, ())}) == (1, 2, 3, False, ())
    with pytest.raises(SystemExit, match="unknown shape 'b8_s1_causal_h64'"):
        ab.parse_points(["b8_s1_causal_h64:4096"], "dense", shapes)
    with pytest.raises(SystemExit, match="unknown shape 'b8_s1'"):
        ab.parse_points(["b8_s1"], "sparse", shapes)
    assert ab.parse_points(["b128_s1"], "sparse", shapes) == [("b128_s1",)]
    with pytest.raises(SystemExit, match="shape name only"):
        ab.parse_points(["b128_s1:4096"], "sparse", shapes)


def test_fp8_load_hint_variants_patch_the_three_token_loads(tmp_path):
    """ab_fp8_load_hints.py's variant copies give fp8_half's three loads (NoPE bytes, two scales)
    the variant's keywords and leave every other load of the package as it is."""
    H = benchmark_module("ab_fp8_load_hints")
    dst = H.patched_copy("ef", H.VARIANTS["ef"], tmp_path)
    src = (dst / "sparse_decode_seesaw_fp8.py").read_text()
    body = src[src.index("def fp8_half"):src.index("def dequantized")]
    assert body.count('other=0.0, eviction_policy="evict_first")') == 3
    assert src.count("evict_first") == 3
    orig = (ROOT / "tle_kernels/sparse_decode_seesaw_fp8.py").read_text()
    assert src.replace(', eviction_policy="evict_first"', "") == orig


def test_fp8_ptx_load_forms_rewrite_only_the_nope_loads():
    """ab_fp8_load_hints.py's PTX-form variants rewrite the split FP8 kernel's NoPE byte loads
    (two per tile, through kv8_ptr) as inline PTX of the variant's form and nothing else: the
    lowered Gluon compiles for sm_90a with the form's 16 loads in the PTX, every other global
    load unchanged, and no spills."""
    import collections
    import importlib
    import re

    pytest.importorskip("triton.experimental.gluon")
    from tle_compiler.lowering import compile_kernel, ptxas_stats

    H = benchmark_module("ab_fp8_load_hints")
    mod = importlib.import_module("tle_kernels.sparse_decode_split_fp8")
    cfg = mod.DEFAULT_CONFIG
    base = compile_kernel(mod.sparse_decode_split_fp8, cfg["signature"], cfg["constexprs"])
    text, n = H.rewrite_nope_loads(base.tle_generated.source, H.VARIANTS["fm"])
    assert n == 2, n
    assert text.count("_ab_ldg(") == 3  # two calls and the helper's definition
    from tle_compiler.lowering import compile as lowering_compile
    original = lowering_compile.load_module
    try:
        lowering_compile.load_module = lambda gen: original(
            type(gen)(**{**gen.__dict__, "source": H.rewrite_nope_loads(gen.source,
                                                                        H.VARIANTS["fm"])[0]}))
        c = compile_kernel(mod.sparse_decode_split_fp8, cfg["signature"], cfg["constexprs"])
    finally:
        lowering_compile.load_module = original
    loads = lambda k: collections.Counter(re.findall(r"\b(ld\.global[\w.:]*)", k.asm["ptx"]))
    before, after = loads(base), loads(c)
    assert after.pop("ld.global.nc.L1::evict_last.L2::256B.v4.b32") == 16
    assert before.pop("ld.global.v4.b32") == 16
    assert after == before
    assert ptxas_stats(c)["spill_stores"] == 0
