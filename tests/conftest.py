"""Test configuration: a deterministic hypothesis profile for CI, the GPU marker, and the default
of running the CPU suite on several processes (pytest-xdist)."""

import functools
import os

import pytest
from hypothesis import HealthCheck, settings

# CI (and anyone who sets TLE_HYPOTHESIS=ci) runs the same examples every time; locally, "dev"
# explores new ones and keeps failures in the example database. Neither times its examples: the
# suite runs on every core of a machine that may be busy, where the per-example deadline and the
# too_slow health check fail on load, not on behaviour (a test that did flaked in CI).
UNTIMED = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", derandomize=True, database=None, print_blob=True, **UNTIMED)
settings.register_profile("dev", print_blob=True, **UNTIMED)
settings.load_profile("ci" if os.environ.get("CI") or os.environ.get("TLE_HYPOTHESIS") == "ci" else "dev")


@functools.lru_cache(maxsize=None)
def has_cuda() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except Exception:  # pragma: no cover - torch missing or broken
        return False


#: the most worker processes the default starts (each imports torch and Triton)
MAX_WORKERS = 8


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """Without -n, a CPU-only run is spread over the machine's cores (at most MAX_WORKERS), whole
    files to a worker (--dist loadfile), so a file's module-scoped fixtures and caches are built
    once. -n 0 (or -p no:xdist) runs in one process, as --pdb does and as a run of one file does
    (its tests would all go to one worker); -n N and --dist choose otherwise. Where a CUDA GPU is
    visible the default stays one process: GPU tests share the device and scripts/gpu_check.sh
    reads the last test -v names as the one that hung."""
    opt = config.option
    if getattr(opt, "numprocesses", 0) is not None or hasattr(config, "workerinput"):
        return  # no xdist, -n given, or this is a worker
    files = {a.split("::")[0] for a in config.args}
    if opt.usepdb or opt.collectonly or (len(files) == 1 and files.pop().endswith(".py")):
        return
    if has_cuda():
        return
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - no sched_getaffinity (macOS)
        cores = os.cpu_count() or 1
    opt.numprocesses = min(cores, MAX_WORKERS)
    if opt.numprocesses < 2:
        opt.numprocesses = 0  # one core: no workers to wait for
    elif opt.dist == "no":
        opt.dist = "loadfile"


def pytest_collection_modifyitems(config, items):
    if has_cuda():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
