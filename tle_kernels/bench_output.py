"""What the benchmarks of the bundled kernels (bench_sparse_mla.py, bench_mla_decode.py,
bench_sparse_decode.py) share besides their tables: the results as JSON (``--json``), a plot
(``--plot``), drawn with matplotlib's Agg backend when matplotlib is installed (it is not a
dependency: without it the benchmark says so and plots nothing), and the refusal to start
without a CUDA GPU."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Callable


def gpu_missing() -> bool:
    """Whether a benchmark cannot run here (no CUDA device torch can use); if so it says why in
    one line on stderr, and the benchmark exits with status 2 before touching the GPU, instead of
    failing deep inside torch with a traceback."""
    import torch

    if torch.cuda.is_available():
        return False
    build = "torch is a CPU-only build" if torch.version.cuda is None else "no CUDA device is visible"
    print(f"error: this benchmark needs a CUDA GPU (Hopper, sm_90a) and {build}; the CPU tests "
          f"(python3 -m pytest -q) and tle-dump run without one", file=sys.stderr)
    return True


def flashmla_errors(out, lse, want, out_abs: float, out_rel: float, out_cos: float,
                    lse_abs: float, lse_rel: float):
    """(ok, details) of ``out`` and ``lse`` against ``want`` = (out, lse) of the fp32 reference,
    by FlashMLA's decode tests' rules: no NaN, infinities exactly where the reference has them,
    every finite element within ``*_abs`` or ``*_rel`` of it, and out's cosine distance (1 - 2<g,w> /
    (|g|^2 + |w|^2)) below ``out_cos``. The reference out is rounded to bf16 first, as the kernels'
    output is. The details name what failed (``out_nan``, ``lse_off``, ``out_inf_mismatch`` ...)."""
    import torch

    info, ok = {}, True
    for name, got, ref, a_tol, r_tol in (
            ("out", out, want[0].to(torch.bfloat16), out_abs, out_rel),
            ("lse", lse, want[1], lse_abs, lse_rel)):
        got, ref = got.float(), ref.float()
        if torch.isnan(got).any():
            info[f"{name}_nan"] = True
            ok = False
            continue
        same_inf = all(torch.equal(got == v, ref == v) for v in (float("inf"), float("-inf")))
        fin = torch.isfinite(ref)
        g, w = got[fin].double(), ref[fin].double()
        err = (g - w).abs()
        off = int(((err >= a_tol) & (err / (w.abs() + 1e-6) >= r_tol)).sum())
        info[f"{name}_max_abs"] = err.max().item() if err.numel() else 0.0
        info[f"{name}_off"] = off
        ok &= same_inf and off == 0
        if not same_inf:
            info[f"{name}_inf_mismatch"] = True
        if name == "out" and (w * w).sum() > 1e-12:
            cos = (1 - 2 * (g * w).sum() / (g * g + w * w).sum()).item()
            info["out_cos"] = cos
            ok &= cos < out_cos
    return ok, info


def write_json(path: str, results: dict) -> None:
    with open(path, "w") as f:
        json.dump(results, f, indent=2)
    print(f"wrote {path}")


def save_plot(path: str, draw: Callable) -> None:
    """The figure ``draw(plt)`` returns (``plt``: matplotlib.pyplot), laid out and saved at
    ``path``."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no plot")
        return
    fig = draw(plt)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"wrote {path}")


def finish_axes(ax, xlabel: str, ylabel: str, title: str) -> None:
    """Labels and title of a throughput plot, its y axis from 0, a light grid, the legend."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend()


def bench_parser(module: str, doc: str) -> argparse.ArgumentParser:
    """The argument parser of benchmark ``module`` (``tle_kernels.bench_...``): its usage names
    the command a user runs (``python3 -m tle_kernels.bench_...``, not the file), the docstring's
    first paragraph is the description and the rest follows the options, so the details a flag's
    help refers to ("below") are on the screen, not only in the source."""
    head, _, rest = doc.strip().partition("\n\n")
    return argparse.ArgumentParser(prog=f"python3 -m {module}", description=head,
                                   epilog=rest or None,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)


def positive(text: str) -> int:
    """An argparse ``type`` for an integer flag that must be at least 1: a bad value is the usual
    one-line usage error (exit 2) naming the flag, before any GPU work, rather than a failure
    deep inside the run."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer of at least 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer of at least 1, got {value}")
    return value


def output_path(text: str) -> str:
    """An argparse ``type`` for --json / --plot: a path whose folder exists ('' stays '': no
    file), checked before the run, so that a benchmark of minutes does not fail at its end on a
    path it cannot write."""
    import os

    if text == "":
        return text
    folder = os.path.dirname(text) or "."
    if text.endswith(("/", os.sep)) or os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text!r} is a folder: give a file path")
    if not os.path.isdir(folder):
        raise argparse.ArgumentTypeError(f"{text!r}: no folder {folder!r} to write it in")
    return text
