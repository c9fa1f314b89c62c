"""A/B of the row width of the FP8 split decode producer's NoPE byte loads.

The producer loads each token's 512 FP8 NoPE bytes as two [64, 256] tiles in the byte layout the
lowering picks for 1-byte elements (lowering/layouts.byte_rows: 16 bytes a thread, 4 threads over
64 bytes of a row, 8 rows a warp). A token is 656 bytes, so every other token's rows start 16 bytes
into a 32-byte sector and a 64-byte row segment then spans three sectors. Wider row segments per
warp instruction span fewer extra sectors: 128 bytes (4 rows a warp, ``r4``) or 256 bytes (2 rows
a warp, ``r2``). ``r4rope`` also copies the RoPE rows with 8 threads over a row's 128 bytes (16-bit
data's default layout, one 16-byte piece a thread) where the kernel as it is copies two 16-byte
pieces per thread at a 32-byte stride.

Each variant is a copy of tle_kernels whose generated Gluon for the split FP8 kernel is rewritten
as the lowering loads it: the token indices loaded a second time in the new layout, the NoPE
bytes and scales loaded through those offsets, the dequantized tiles stored from that layout (the
RoPE copy and the valid field keep the kernel's layout unless ``r4rope``). The check against the
fp32 reference, timing and printing are benchmarks/ab_fp8_load_hints.py's.

    python3 benchmarks/ab_fp8_row_width.py [--variants base r4 r2 r4rope] [--anchor LIB] [--reps 5]
    python3 benchmarks/ab_fp8_row_width.py --cpu      # registers, spills and loads per variant
"""
import importlib
import shutil
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import benchmarks.ab_fp8_load_hints as hints  # noqa: E402

#: threads of a warp along the rows for each variant (32 // that along a row's bytes)
ROW_THREADS = {"r4": 4, "r2": 2, "r4rope": 4}


def widen(src: str, rows: int, rope: bool = False) -> tuple[str, int]:
    """``src`` (the split FP8 kernel's generated Gluon) with its producer's NoPE and scale loads
    in a byte layout of ``rows`` rows per warp, and with ``rope`` its RoPE copy in 16-bit data's
    layout of 4 rows per warp; returns the text and the number of lines rewritten."""
    a = src.index("def split_fp8_producer(")
    b = src.index("@gluon.jit", a)
    cols = 32 // rows
    out, n = [], 0
    for ln in src[a:b].split("\n"):
        ind = ln[: len(ln) - len(ln.lstrip())]
        s = ln.strip()
        if s.startswith("L4: gl.constexpr"):
            out += [ln,
                    f"{ind}L90: gl.constexpr = gl.SliceLayout(1, gl.BlockedLayout([1, 16], [{rows}, {cols}], [4, 1], [1, 0]))",
                    f"{ind}L91: gl.constexpr = gl.SliceLayout(0, gl.BlockedLayout([1, 16], [{rows}, {cols}], [4, 1], [1, 0]))"]
            if rope:
                out += [f"{ind}L92: gl.constexpr = gl.SliceLayout(1, gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0]))",
                        f"{ind}L93: gl.constexpr = gl.SliceLayout(0, gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0]))"]
            n += 1
        elif rope and s.startswith("async_copy.async_copy_global_to_shared(kv_tkv"):
            s2 = s.replace("((off + ROPE_BYTE) // 2)[:, None]",
                           "gl.convert_layout((offb + ROPE_BYTE) // 2, L92)[:, None]")
            s2 = s2.replace("layout=L4)", "layout=L93)").replace(
                "mask=valid[:, None]", "mask=gl.convert_layout(validb, L92)[:, None]")
            out.append(ind + s2)
            n += 1
        elif s.startswith("t_next = _v"):
            # the line before loads the next tile's indices: load them again in the new layout
            v = s.split("=")[1].strip()
            prev = out[-1].strip()
            if not (prev.startswith(v + " = gl.load(") and "layout=L2" in prev):
                raise SystemExit(f"unexpected index load: {prev}")
            out += [ln, ind + prev.replace(v + " = ", v + "b = ").replace("layout=L2", "layout=L90"),
                    f"{ind}tb_next = {v}b"]
            n += 1
        elif s == "t = t_next":
            out += [ln, f"{ind}tb = tb_next", f"{ind}validb = ((tb >= 0) & (tb < n_tokens))",
                    f"{ind}_tokb = gl.where(validb, tb, 0)",
                    f"{ind}offb = (((_tokb // page).to(gl.int64) * stride_blk) + "
                    f"((_tokb % page).to(gl.int64) * TOKEN_BYTES))"]
            n += 1
        elif "kv8_ptr + off[" in s or "_scales = ((kv32_ptr + ((off +" in s or "_scales, mask=valid" in s \
                or "_scales + 1), mask=valid" in s:
            out.append(ind + s.replace("off[", "offb[").replace("(off +", "(offb +")
                       .replace("mask=valid", "mask=validb"))
            n += 1
        elif "_offs_d = gl.arange(0, D_HALF, layout=L4)" in s or ("_dequantized" in s and "layout=L4" in s):
            out.append(ind + s.replace("layout=L4", "layout=L91"))
            n += 1
        else:
            out.append(ln)
    return src[:a] + "\n".join(out) + src[b:], n


def install(names):
    """Make the lowering's module loader rewrite the split FP8 kernel of each variant's package
    (its files live under /tmp/variants/tk_<name>/)."""
    from tle_compiler.lowering import compile as lowering_compile
    original = lowering_compile.load_module

    def load_module(gen):
        first = gen.source.split("\n", 1)[0]
        for n in names:
            if n in ROW_THREADS and f"/tk_{n}/" in first and "def split_fp8_producer(" in gen.source:
                text, count = widen(gen.source, ROW_THREADS[n], n.endswith("rope"))
                if count != 16 + n.endswith("rope"):
                    raise SystemExit(f"variant {n}: {count} lines rewritten: update this script")
                gen = replace(gen, source=text)
        return original(gen)

    lowering_compile.load_module = load_module


def make(name, hint=None, where="/tmp/variants"):
    """tle_kernels itself for ``base``, else a copy of it under ``where``/tk_``name``."""
    if name == "base":
        return importlib.import_module("tle_kernels")
    dst = Path(where) / f"tk_{name}"
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(ROOT / "tle_kernels", dst, ignore=shutil.ignore_patterns("__pycache__"))
    if where not in sys.path:
        sys.path.insert(0, where)
    return importlib.import_module(f"tk_{name}")


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cpu", action="store_true", help="compile each variant for sm_90a and print its loads")
    ap.add_argument("--variants", nargs="+", default=["base", "r4", "r2", "r4rope"],
                    choices=["base", *ROW_THREADS])
    ap.add_argument("--shapes", nargs="+", metavar="bB_sS_hH",
                    default=["b128_s1_h128", "b64_s1_h128", "b64_s2_h128", "b128_s1_h64"])
    ap.add_argument("--reps", type=int, default=5, help="interleaved rounds (median reported)")
    ap.add_argument("--anchor", default=None, help="FlashMLA sparse decode anchor library")
    a = ap.parse_args()
    hints.make = make
    hints.install_gluon_rewrites = install
    hints.VARIANTS.update({k: k for k in ROW_THREADS})
    if a.cpu:
        hints.cpu(a.variants)
    else:
        hints.gpu(a.variants, a.shapes, a.reps, a.anchor)
