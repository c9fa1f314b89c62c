"""What the benchmarks of the bundled kernels (bench_sparse_mla.py, bench_mla_decode.py,
bench_sparse_decode.py) share besides their tables: the results as JSON (``--json``), a plot
(``--plot``), drawn with matplotlib's Agg backend when matplotlib is installed (it is not a
dependency: without it the benchmark says so and plots nothing), and the refusal to start
without a CUDA GPU."""

from __future__ import annotations

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
