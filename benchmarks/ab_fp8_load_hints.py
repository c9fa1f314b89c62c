"""A/B of cache hints on the FP8 sparse decode's token loads: each variant is a copy of
tle_kernels (under /tmp/variants, imported as its own package) whose ``fp8_half`` gives its three
loads (the NoPE bytes and the two scales) the variant's ``tl.load`` keywords, so every variant and
FlashMLA run in one process. Each is checked against the fp32 reference, then timed as CUDA-graph
replays, interleaved, medians of ``--reps`` rounds (do_bench, warm-up 10 ms, 50 ms).

    python3 benchmarks/ab_fp8_load_hints.py [--variants base ef cg el] [--anchor LIB] [--reps 5]
    python3 benchmarks/ab_fp8_load_hints.py --cpu        # ptxas report and the PTX load forms only

Variants: base (no hint), ef (eviction_policy="evict_first"), cg (cache_modifier=".cg": L2 only),
el (eviction_policy="evict_last"). A cache_modifier and an eviction_policy together are refused
by the frontend (no instruction takes both). PTX forms no tl.load keyword gives, written into the
lowered Gluon as inline PTX (16-byte loads, masked rows 0): nc (`ld.global.nc`: the read-only
path), nc256 (with the `L2::256B` prefetch size), fm (`ld.global.nc.L1::evict_last.L2::256B`,
FlashMLA's NoPE load).
"""
import os, re, shutil, statistics, sys, importlib
from dataclasses import replace
from pathlib import Path
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

VARIANTS = {
    "base": None,
    "ef": 'eviction_policy="evict_first"',
    "cg": 'cache_modifier=".cg"',
    "el": 'eviction_policy="evict_last"',
    # PTX load forms Triton's tl.load cannot ask for, written into the lowered Gluon (below)
    "nc": "ld.global.nc.v4.b32",
    "nc256": "ld.global.nc.L2::256B.v4.b32",
    "fm": "ld.global.nc.L1::evict_last.L2::256B.v4.b32",
}
#: the variants whose NoPE byte loads are rewritten in the generated Gluon as inline PTX
PTX_FORMS = {"nc", "nc256", "fm"}


def ptx_load_helper(name: str, form: str) -> str:
    """A Gluon helper loading a [rows, bytes] tile of 16 contiguous one-byte elements per thread
    with the PTX load ``form`` (a v4.b32 load), masked rows reading 0: inline PTX packed 16
    elements per call (4 output registers; operands $4 the first element's pointer, $20 its
    row's mask). The result has the pointers' element type (fp8e4nv for the NoPE bytes: a
    uint8 result would be converted as integers)."""
    asm = ("{ .reg .pred p; setp.ne.b32 p, $20, 0; mov.b32 $0, 0; mov.b32 $1, 0; "
           "mov.b32 $2, 0; mov.b32 $3, 0; @p " + form + " {$0, $1, $2, $3}, [$4]; }")
    constraints = ",".join(["=r"] * 4 + ["l"] * 16 + ["r"] * 16)
    return (f"\n\n@gluon.jit\ndef {name}(ptrs, mask):\n"
            f"    m, ptrs = gl.broadcast(gl.where(mask, 1, 0), ptrs)\n"
            f"    return gl.inline_asm_elementwise({asm!r}, {constraints!r}, [ptrs, m],\n"
            f"                                     dtype=ptrs.dtype.element_ty, is_pure=True, pack=16)\n")


def _call_end(text: str, start: int) -> int:
    """The index just past the parenthesis closing the call whose '(' is at ``start``."""
    depth = 0
    for i in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            return i + 1
    raise ValueError("unbalanced call")


def rewrite_nope_loads(source: str, form: str, helper: str = "_ab_ldg") -> tuple[str, int]:
    """``source`` (a generated Gluon module) with each ``gl.load(<kv8_ptr ...>, mask=M,
    other=0.0)`` (the producer's FP8 NoPE bytes) replaced by ``helper(<pointers>, M)``, and the
    helper appended; returns the text and the number of loads rewritten."""
    out, n, pos = [], 0, 0
    while True:
        i = source.find("gl.load(", pos)
        if i < 0:
            break
        end = _call_end(source, i + len("gl.load"))
        call = source[i:end]
        args = call[len("gl.load("):-1]
        if "kv8_ptr" in args and args.endswith(", other=0.0") and ", mask=" in args:
            ptrs, mask = args[:-len(", other=0.0")].rsplit(", mask=", 1)
            out.append(source[pos:i] + f"{helper}({ptrs}, {mask})")
            n += 1
        else:
            out.append(source[pos:end])
        pos = end
    out.append(source[pos:])
    return "".join(out) + ptx_load_helper(helper, form), n


def install_gluon_rewrites(variant_names):
    """Make the lowering's module loader rewrite the NoPE loads of the kernels of each PTX-form
    variant's package (its files live under /tmp/variants/tk_<name>/), so that each variant
    compiles its own kernels."""
    from tle_compiler.lowering import compile as lowering_compile

    original = lowering_compile.load_module
    forms = {n: VARIANTS[n] for n in variant_names if n in PTX_FORMS}

    def load_module(gen):
        first = gen.source.split("\n", 1)[0]
        for n, form in forms.items():
            if f"/tk_{n}/" in first:
                text, count = rewrite_nope_loads(gen.source, form)
                if "sparse_decode" in first and "fp8" in first and count == 0:
                    raise SystemExit(f"variant {n}: no NoPE load found in {first}")
                gen = replace(gen, source=text)
        return original(gen)

    lowering_compile.load_module = load_module

def patched_copy(name, hint, where):
    """A copy of tle_kernels at ``where``/tk_``name`` whose fp8_half gives its three loads the
    keywords ``hint`` (a string of Python keyword arguments); returns the copy's folder."""
    dst = Path(where) / f"tk_{name}"
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(ROOT / "tle_kernels", dst, ignore=shutil.ignore_patterns("__pycache__"))
    f = dst / "sparse_decode_seesaw_fp8.py"
    src = f.read_text()
    a = src.index("def fp8_half"); b = src.index("def dequantized")
    body = src[a:b]
    n = body.count("other=0.0)")
    if n != 3:
        raise SystemExit(f"fp8_half has {n} loads ending in other=0.0), not 3: update this script")
    f.write_text(src[:a] + body.replace("other=0.0)", f"other=0.0, {hint})") + src[b:])
    return dst


def make(name, hint, where="/tmp/variants"):
    """The package of variant ``name``: tle_kernels itself for no hint, a plain copy for a PTX
    form (its Gluon is rewritten as it loads: install_gluon_rewrites), else a patched copy."""
    if hint is None:
        return importlib.import_module("tle_kernels")
    if name in PTX_FORMS:
        dst = Path(where) / f"tk_{name}"
        if dst.exists():
            shutil.rmtree(dst)
        shutil.copytree(ROOT / "tle_kernels", dst, ignore=shutil.ignore_patterns("__pycache__"))
    else:
        patched_copy(name, hint, where)
    if where not in sys.path:
        sys.path.insert(0, where)
    return importlib.import_module(f"tk_{name}")


def cpu(names):
    from tle_compiler.lowering import compile_kernel, ptxas_stats
    import collections
    install_gluon_rewrites(names)
    for n in names:
        pkg = make(n, VARIANTS[n])
        mod = importlib.import_module(pkg.__name__ + ".sparse_decode_split_fp8")
        cfg = mod.DEFAULT_CONFIG
        c = compile_kernel(mod.sparse_decode_split_fp8, cfg["signature"], cfg["constexprs"])
        ptx = c.asm["ptx"]
        st = ptxas_stats(c)
        print(n, f"registers {st['registers']}, spills {st['spill_stores']} / {st['spill_loads']} B,",
              collections.Counter(re.findall(r"\b(ld\.global[\w.:]*)", ptx)), flush=True)

def gpu(names, shapes, reps, anchor_lib):
    import torch
    from benchmarks.interleaved import graph_replay_ms
    from tle_kernels.bench_sparse_decode import load_anchor, parse_shape
    from tle_kernels.sparse_decode_reference import make_sparse_decode_inputs, sparse_decode_reference
    install_gluon_rewrites(names)
    pkgs = {n: make(n, VARIANTS[n]) for n in names}
    apis = {n: importlib.import_module(p.__name__ + ".sparse_decode_api") for n, p in pkgs.items()}
    anchor = load_anchor(anchor_lib) if anchor_lib else None
    scale = 576 ** -0.5
    for name in shapes:
        b, s_q, h_q = parse_shape(name)
        x = make_sparse_decode_inputs(b, s_q, h_q, 2048, s_kv=32768, is_fp8=True, seed=b,
                                      invalid=0.0, poison=False)
        want = sparse_decode_reference(x["q"], x["k_cache"], x["indices"], 512, scale)
        cases = {}
        for n, A in apis.items():
            out, lse = A.empty_outputs(x["q"])
            ran = A.launch_sparse("auto", x["q"], x["k_cache"], x["indices"], scale, True, out, lse)
            err = (out.float() - want[0].float()).abs().max().item()
            lerr = (lse - want[1]).nan_to_num(0.0).abs().max().item()
            print(f"{name} {n} ran {ran}: out err {err:.2e} lse err {lerr:.2e}", flush=True)
            assert err < 1e-2 and lerr < 1e-4
            cases[n] = (lambda A=A, out=out, lse=lse: A.launch_sparse(
                "auto", x["q"], x["k_cache"], x["indices"], scale, True, out, lse))
        if anchor is not None and h_q in (64, 128):
            cases["FlashMLA"] = lambda: anchor(x["q"], x["k_cache"], x["indices"], scale)
        t = {k: [] for k in cases}
        for _ in range(reps):
            for k, f in cases.items():
                t[k].append(graph_replay_ms(f, warmup=10, rep=50))
        us = {k: statistics.median(v) * 1e3 for k, v in t.items()}
        flop = 2 * b * s_q * h_q * 2048 * (576 + 512)
        line = f"{name}: " + ", ".join(f"{k} {v:.1f}us {flop / v / 1e6:.1f}TF" for k, v in us.items())
        if "base" in us:
            line += " | base/x: " + ", ".join(f"{k} {us['base'] / v:.3f}" for k, v in us.items() if k != "base")
        if "FlashMLA" in us:
            line += " | x/FM: " + ", ".join(f"{k} {us['FlashMLA'] / v:.3f}" for k, v in us.items() if k != "FlashMLA")
        print(line, flush=True)
        del x
        torch.cuda.empty_cache()

if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cpu", action="store_true", help="compile each variant for sm_90a and print its loads")
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    ap.add_argument("--shapes", nargs="+", metavar="bB_sS_hH",
                    default=["b128_s1_h128", "b64_s1_h128", "b64_s2_h128", "b128_s1_h64"])
    ap.add_argument("--reps", type=int, default=5, help="interleaved rounds (median reported)")
    ap.add_argument("--anchor", default=None, help="FlashMLA sparse decode anchor library")
    a = ap.parse_args()
    if a.cpu:
        cpu(a.variants)
    else:
        gpu(a.variants, a.shapes, a.reps, a.anchor)
