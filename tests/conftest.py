"""Test configuration: a deterministic hypothesis profile for CI, the GPU marker, and the default
of running the CPU suite on several processes (pytest-xdist)."""

import functools
import os
import sys

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
        # xdist would hand out the files with the most tests first, which leaves the few long
        # ones (a handful of tests of tens of seconds each) to the end, run by one worker while
        # the others wait; the workers order the files longest first (pytest_collection_
        # modifyitems), and xdist keeps that order
        opt.loadscopereorder = False


#: the files that take longest (tens of seconds on 2 cores, most of it a few tests: the
#: decode kernels verified and emulated, the Triton interpreter runs), longest first. Only the
#: order of a default run over several workers reads it: the workers start these first, so
#: the run does not end waiting on one of them. A file missing here, or named and gone, changes
#: nothing else.
LONGEST_FILES = [
    "test_mla_decode_seesaw.py", "test_cli_param_constexpr.py", "test_decode_schedule.py",
    "test_bench_sparse_decode.py", "test_seesaw_d512_sink_topk.py",
    "test_sparse_decode_split_fp8.py", "test_seesaw_sink_topk.py", "test_kernel_text.py",
    "test_adversarial_cli_4.py", "test_dump_inputs_fuzz.py", "test_bench_sparse_decode_skips.py",
    "test_stamp_kernels.py", "test_dump_kir_plain.py", "test_adversarial_verdicts_51.py",
    "test_run_flashmla_sparse_decode_test.py", "test_engine.py", "test_cli.py",
    "test_lowering_adversarial_3.py", "test_adversarial_kir.py", "test_beside.py",
    "test_properties.py", "test_sparse_mla_seesaw_d512.py", "test_false_refusals_20.py",
    "test_text_form.py", "test_named_barrier_pipes.py", "test_bench_sparse_mla.py",
]


def pytest_configure(config):
    """A worker of a run over several processes computes on one thread: torch (and numpy's
    BLAS) would otherwise start a thread per core in every worker, N workers x N threads on N
    cores, and a busy machine runs the torch-heavy tests several times slower. A value set
    beforehand (OMP_NUM_THREADS=...) is kept."""
    if not hasattr(config, "workerinput"):
        return
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    if "torch" in sys.modules:  # imported before this hook: set it by hand
        sys.modules["torch"].set_num_threads(int(os.environ["OMP_NUM_THREADS"]))


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """xdist's controller, starting a worker: where files go to workers in the order collected
    (--dist loadfile, xdist's reordering off), the worker puts the longest first."""
    opt = node.config.option
    if getattr(opt, "dist", None) == "loadfile" and not getattr(opt, "loadscopereorder", True):
        node.workerinput["tle_longest_first"] = True


def _longest_first(config, items):
    """In such a worker: the files of LONGEST_FILES first, in that order, then the others by
    their number of tests, most first (xdist's own order), each file's tests in their order.
    Every worker orders the same collection the same way, as xdist requires."""
    if not getattr(config, "workerinput", {}).get("tle_longest_first"):
        return
    rank = {name: i for i, name in enumerate(LONGEST_FILES)}
    count: dict = {}
    for item in items:
        f = item.nodeid.split("::")[0]
        count[f] = count.get(f, 0) + 1
    order = {f: i for i, f in enumerate(count)}

    def key(item):
        f = item.nodeid.split("::")[0]
        return (rank.get(f.rsplit("/", 1)[-1], len(rank)), -count[f], order[f])

    items.sort(key=key)  # stable: a file's tests keep their order


def pytest_collection_modifyitems(config, items):
    _longest_first(config, items)
    if has_cuda():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
