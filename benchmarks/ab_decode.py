"""A/B versions of a decode kernel in one process, interleaved, against the bundled one and
(optionally) FlashMLA, to tell a real change from run-to-run noise (a decode ratio moves by about
±0.02 between runs).

    python3 benchmarks/ab_decode.py --kernel seesaw VARIANT.py [VARIANT2.py ...]
        [--points b128_s1:4096 b64_s2_causal:8192 ...] [--anchor LIB] [--reps 5]

A variant may also be ``env:NAME=VALUE[,NAME=VALUE ...]`` (e.g.
``env:TLE_DECODE_RUN=2,TLE_DECODE_BALANCE=0``): the bundled kernel launched, and checked, with
those environment variables set, for a launcher choice rather than a kernel change; or
``VARIANT.py+env:NAME=VALUE[,...]``: the variant file launched with those variables set (a
kernel written for one of the launcher's modes, e.g. ``+env:TLE_DECODE_BALANCE=0``).

--kernel names the bundled kernel the variants replace: "seesaw" (tle_kernels/mla_decode_seesaw.py,
kernel ``mla_decode_seesaw``), "pipe" (mla_decode_pipe.py) or "split-fp8" (the FP8 sparse decode,
sparse_decode_split_fp8.py). A variant file is a copy of that module with a change, defining a
kernel of the same name; its package-relative imports (``from .mla_decode_common import ...``)
are read as imports from tle_kernels, so the copy can live anywhere. Each version runs through
the bundled launcher, with the kernel the launcher looks up at launch replaced by the version's.

Every version (the bundled one included) is first checked against the fp32 reference on poisoned
mixed batches with the benchmark's tolerances (dense: s_q 1 and s_q 2 causal, seqlens 0 / 1 / 63 /
64 / 65 / 4096 / 4097 / 130; sparse: topk 2048 with invalid slots, s_q 1 and 2); a failure stops
the run with exit status 1. Then each point is timed as CUDA-graph replays, every version and the
anchor once per round, ``--reps`` rounds; the medians and the ratios B / A (A: the bundled kernel)
are printed. Points: dense SHAPE:L with SHAPE one of tle_kernels.bench_mla_decode's shapes or
spelled out as bB_sS[_hH][_causal] (b8_s1, b16_s2_causal, b32_s1_h64; h_q 128 unless given), sparse
one of tle_kernels.bench_sparse_decode's shape names. --anchor: the FlashMLA dense decode library
(dense) or the sparse FP8 decode library (split-fp8), built as docs/BENCHMARKS.md describes.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import re
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

#: --kernel: (module of tle_kernels holding the kernel, the kernel's name, the implementation
#: name the benchmark launches it by, dense or sparse)
KERNELS = {
    "seesaw": ("mla_decode_seesaw", "mla_decode_seesaw", "seesaw", "dense"),
    "pipe": ("mla_decode_pipe", "mla_decode_pipe", "pipe", "dense"),
    "split-fp8": ("sparse_decode_split_fp8", "sparse_decode_split_fp8", "split-fp8", "sparse"),
}
DEFAULT_POINTS = {
    "dense": ["b128_s1:4096", "b128_s1:32768", "b64_s2_causal:8192", "b128_s1:1024"],
    "sparse": ["b64_s1_h128", "b128_s1_h128", "b64_s2_h128", "b128_s1_h64"],
}


def load_variant(path: str, kernel_name: str, tag: str):
    """The kernel ``kernel_name`` of the file at ``path``, its relative imports read as imports
    from tle_kernels (a copy written beside the original's temporary twin)."""
    p = Path(path)
    if not p.is_file():
        raise SystemExit(f"{path}: no such file")
    src = re.sub(r"^from \.(\w*) import", lambda m: f"from tle_kernels{'.' if m[1] else ''}"
                 f"{m[1]} import", p.read_text(), flags=re.M)
    tmp = Path(tempfile.mkdtemp()) / f"{p.stem}_{tag}.py"
    tmp.write_text(src)
    spec = importlib.util.spec_from_file_location(tmp.stem, tmp)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    if not hasattr(mod, kernel_name):
        raise SystemExit(f"{path}: defines no kernel named {kernel_name}")
    return getattr(mod, kernel_name)


#: a dense shape outside the benchmark's: b<batch>_s<s_q>[_h<h_q>][_causal] (h_q 128 by default)
DENSE_SHAPE = re.compile(r"b(\d+)_s(\d+)(?:_h(\d+))?(_causal)?")


def dense_shape(name: str, shapes):
    """(b, s_q, h_q, causal, Ls) of a dense shape: one of ``shapes`` by name, or spelled out
    (``DENSE_SHAPE``: b8_s1, b16_s2_causal, b32_s1_h64), or None."""
    if name in shapes:
        return shapes[name]
    m = DENSE_SHAPE.fullmatch(name)
    if m is None:
        return None
    return int(m[1]), int(m[2]), int(m[3] or 128), bool(m[4]), ()


def parse_points(points, kind: str, shapes) -> list:
    """Dense points as (shape, L), sparse ones as (shape,), each checked against ``shapes`` (a
    dense shape may also be spelled out: ``dense_shape``)."""
    out = []
    for pt in points:
        name, _, length = pt.partition(":")
        if name not in shapes and not (kind == "dense" and DENSE_SHAPE.fullmatch(name)):
            also = " or bB_sS[_hH][_causal]" if kind == "dense" else ""
            raise SystemExit(f"--points: unknown shape {name!r} (one of {', '.join(shapes)}"
                             f"{also})")
        if kind == "dense":
            if not length.isdigit():
                raise SystemExit(f"--points: {pt!r} needs a length, e.g. {name}:4096")
            out.append((name, int(length)))
        elif length:
            raise SystemExit(f"--points: a sparse point is a shape name only, got {pt!r}")
        else:
            out.append((name,))
    return out


ENV_VARIANT = re.compile(r"env:([A-Z_][A-Z0-9_]*=[^,]*(?:,[A-Z_][A-Z0-9_]*=[^,]*)*)")


@contextlib.contextmanager
def environment(env: dict):
    """The environment variables ``env`` set for the block, restored after it."""
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def swapped(mod, name: str, kernel, f, env=None):
    """``f`` run with the module's kernel ``name`` set to ``kernel`` and the environment
    variables ``env`` set (the launchers look both up at each launch, so a CUDA graph captured
    inside records that version)."""
    def run():
        setattr(mod, name, kernel)
        with environment(env or {}):
            f()
    return run


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("variants", nargs="+",
                    help="variant files (each a copy of the kernel's module), "
                         "env:NAME=VALUE[,NAME=VALUE ...] (the bundled kernel with those "
                         "environment variables set), or FILE.py+env:NAME=VALUE[,...] (a "
                         "variant file with them set)")
    ap.add_argument("--kernel", required=True, choices=list(KERNELS),
                    help="the bundled kernel the variants replace")
    ap.add_argument("--points", nargs="+", default=None,
                    help="dense: SHAPE:L (e.g. b128_s1:4096); split-fp8: a shape name")
    ap.add_argument("--anchor", default=None, help="FlashMLA's decode library, timed alongside")
    ap.add_argument("--reps", type=int, default=5, help="interleaved rounds (median reported)")
    args = ap.parse_args(argv)

    import torch

    module, kname, impl, kind = KERNELS[args.kernel]
    if kind == "dense":
        from tle_kernels import bench_mla_decode as B
        from tle_kernels.decode_reference import make_decode_inputs
    else:
        from tle_kernels import bench_sparse_decode as B
        from tle_kernels.sparse_decode_reference import make_sparse_decode_inputs
    from tle_kernels.bench_mla_decode import time_interleaved

    points = parse_points(args.points or DEFAULT_POINTS[kind], kind, B.SHAPES)
    mod = importlib.import_module(f"tle_kernels.{module}")
    versions = {"A": getattr(mod, kname)}
    envs = {"A": {}}
    for i, path in enumerate(args.variants):
        tag = chr(ord("B") + i)
        file, _, env = path.partition("+")
        m = ENV_VARIANT.fullmatch(path) or (ENV_VARIANT.fullmatch(env) if env else None)
        if env and not m:
            raise SystemExit(f"{path}: expected FILE.py+env:NAME=VALUE[,NAME=VALUE ...]")
        envs[tag] = dict(kv.split("=", 1) for kv in m[1].split(",")) if m else {}
        versions[tag] = (versions["A"] if m and not env
                         else load_variant(file, kname, f"v{i}"))
        print(f"{tag}: {path}", flush=True)
    anchor = B.load_anchor(args.anchor) if args.anchor else None
    sm_scale = 576 ** -0.5

    ok_all = True
    for tag, kern in versions.items():
        setattr(mod, kname, kern)
        for s_q in (1, 2):
            if kind == "dense":
                seqlens = (B.MIXED * 2)[:B.CHECK_B]
                q, k, bt, sl = make_decode_inputs(B.CHECK_B, s_q, 128, 1, seqlens, seed=11 + s_q)
                with environment(envs[tag]):
                    ok, info = B.check_one(impl, None, q, k, bt, sl, s_q > 1, sm_scale)
            else:
                x = make_sparse_decode_inputs(B.CHECK_B, s_q, 128, B.TOPK, s_kv=4096, seed=11)
                with environment(envs[tag]):
                    ok, info = B.check_one(impl, None, x, True, sm_scale)
            print(f"check {tag} s_q={s_q}: {'ok' if ok else 'FAILED'} {info}", flush=True)
            ok_all &= ok
    setattr(mod, kname, versions["A"])
    if not ok_all:
        print("a version failed its check: not timed", flush=True)
        return 1

    for pt in points:
        if kind == "dense":
            shape, L = pt
            b, s_q, h_q, causal, _ = dense_shape(shape, B.SHAPES)
            seqlens = B.seqlens_for(b, L)
            q, k, bt, sl = make_decode_inputs(b, s_q, h_q, 1, seqlens, seed=1, poison=False)
            flop = B.flops(s_q, h_q, seqlens)
            runs = {tag: swapped(mod, kname, kern,
                                 B.runner(impl, None, q, k, bt, sl, causal, sm_scale), envs[tag])
                    for tag, kern in versions.items()}
            if anchor is not None:
                runs["flashmla"] = B.runner(B.ANCHOR, anchor, q, k, bt, sl, causal, sm_scale)
            label = f"{shape} L={L}"
        else:
            (shape,) = pt
            b, s_q, h_q = B.SHAPES[shape]
            x = make_sparse_decode_inputs(b, s_q, h_q, B.TOPK, s_kv=B.S_KV, seed=1, invalid=0.0,
                                          poison=False)
            flop = B.flops(b, s_q, h_q, B.TOPK)
            runs = {tag: swapped(mod, kname, kern, B.runner(impl, None, x, True, sm_scale),
                                 envs[tag])
                    for tag, kern in versions.items()}
            if anchor is not None and B.anchor_takes(x, "fp8"):
                runs["flashmla"] = B.runner(B.ANCHOR, anchor, x, True, sm_scale)
            label = shape
        times = {tag: [] for tag in runs}
        for r in range(args.reps):
            for tag, (ms, _, _) in time_interleaved(runs, 1, True, 50, 200).items():
                times[tag].append(ms)
            print(f"{label}: round {r + 1}/{args.reps}", flush=True)
        setattr(mod, kname, versions["A"])
        med = {tag: statistics.median(v) for tag, v in times.items()}
        cells = [f"{tag} {flop / med[tag] / 1e9:.1f} TFLOP/s" for tag in med]
        ratios = [f"{tag}/A {med['A'] / med[tag]:.3f}" for tag in versions if tag != "A"]
        if "flashmla" in med:
            ratios += [f"{tag}/FlashMLA {med['flashmla'] / med[tag]:.3f}" for tag in versions]
        print(f"{label}: " + ", ".join(cells) + " | " + ", ".join(ratios), flush=True)
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
