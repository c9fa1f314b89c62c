"""CPU checks of the GPU-test kernels (tle_kernels/gpu_tests/), no GPU needed:

* every kernel of every file is accepted by the verifier (frontend + default pass pipeline), as
  ``tle-dump`` would;
* each file's DEFAULT_CONFIG (keyed by kernel name for files with several kernels) names each
  kernel's arguments in order;
* the GPU tests' checks (tests/gpu/cases.py) pass on the CPU emulation of the language
  (tests/gpu/emulator.py): the kernels' math, the harness and the references are right, so a GPU
  failure points at the lowering;
* once the lowering exists, every kernel compiles for sm_90a on the CPU.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from tle_compiler.diagnostics import TleError
from tle_compiler.frontend import SPECIALIZABLE, read_file, read_kernels
from tle_compiler.lowering.dumping import default_config
from tle_compiler.passes import verify

from .bundled import tle_kernels

GPU_KERNELS = Path(__file__).resolve().parent.parent / "tle_kernels" / "gpu_tests"
FILES = sorted(p for p in GPU_KERNELS.glob("*.py") if p.name != "__init__.py")


def test_every_listed_module_exists():
    pkg = importlib.import_module("tle_kernels.gpu_tests")
    assert sorted(pkg.MODULES) == sorted(p.stem for p in FILES)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_gpu_kernels_verify(path):
    try:
        programs = read_file(path).kernels
    except TleError as e:
        # a kernel that reads only with its constexprs bound (ring_stages: a capacity of
        # STAGES), read as tle-dump reads it, with its DEFAULT_CONFIG's values
        if e.check not in SPECIALIZABLE:
            raise
        bind = default_config(str(path), "")["constexprs"]
        programs = [i.program for i in read_kernels(path, bind=bind)]
    assert programs, f"{path.name} has no @tle.jit kernel"
    for program in programs:
        ctx = verify(program)
        assert ctx.ok, f"{path.name}:{program.name}:\n" + "\n".join(map(str, ctx.diagnostics))


def configs_of(path: Path) -> dict[str, dict]:
    """kernel name → its DEFAULT_CONFIG (the entry of that kernel when the config is keyed by
    kernel name)."""
    return {name: default_config(str(path), name) for _, name in tle_kernels(path)}


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_config_names_the_kernel_arguments(path):
    tree = ast.parse(path.read_text())
    fns = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    configs = configs_of(path)
    assert configs
    for name, config in configs.items():
        assert config is not None, f"{path.name}: no DEFAULT_CONFIG"
        assert list(config["signature"]) == [a.arg for a in fns[name].args.args], name
        assert set(config["constexprs"]) == {a for a, t in config["signature"].items()
                                             if t == "constexpr"}


# ------------------------------------------------------------------ the checks, on the emulation

def _emulated(stem: str):
    from tle_compiler.testing.emulator import load_kernel_module
    return load_kernel_module(GPU_KERNELS / f"{stem}.py")


@pytest.mark.parametrize("capacity", [1, 2, 3, 4])
@pytest.mark.parametrize("n", [0, 1, "C", "C+1", 9])
def test_ring_on_emulation(capacity, n):
    from tests.gpu.cases import check_ring
    n = {"C": capacity, "C+1": capacity + 1}.get(n, n)
    check_ring(_emulated("spsc_ring"), "cpu", capacity, n)


@pytest.mark.parametrize("capacity", [1, 2, 3])
@pytest.mark.parametrize("n", [0, 1, "C+1", 9])
def test_ring_of_constexpr_capacity_on_emulation(capacity, n):
    from tests.gpu.cases import check_ring
    n = {"C+1": capacity + 1}.get(n, n)
    check_ring(_emulated("ring_stages"), "cpu", capacity, n)


@pytest.mark.parametrize("n", [0, 1, 2, 5])
def test_spmc_on_emulation(n):
    from tests.gpu.cases import check_spmc2, check_spmc3
    mod = _emulated("spmc")
    check_spmc2(mod, "cpu", n)
    check_spmc3(mod, "cpu", n)


@pytest.mark.parametrize("n", [0, 1, 3])
def test_one_shot_close_chain_seesaw_on_emulation(n):
    from tests.gpu import cases
    cases.check_one_shot(_emulated("one_shot"), "cpu", n)
    cases.check_close(_emulated("close"), "cpu", n)
    cases.check_chain(_emulated("chain"), "cpu", n)
    cases.check_seesaw(_emulated("seesaw"), "cpu", n)


@pytest.mark.parametrize("nk", [1, 3])
def test_attention_on_emulation(nk):
    from tests.gpu.cases import check_attention
    check_attention(_emulated("attention"), "cpu", nk)


# ------------------------------------------------------------------ compiling (once the lowering exists)

def _compile_kernel():
    try:
        lowering = importlib.import_module("tle_compiler.lowering")
    except ImportError:
        return None
    return getattr(lowering, "compile_kernel", None)


def _all_kernels():
    return [(p.stem, name) for p in FILES for name in configs_of(p)]


@pytest.mark.parametrize("stem,name", _all_kernels(), ids=lambda x: x)
def test_gpu_kernel_compiles_for_sm90(stem, name):
    compile_kernel = _compile_kernel()
    if compile_kernel is None:
        pytest.skip("tle_compiler.lowering.compile_kernel does not exist yet")
    mod = importlib.import_module(f"tle_kernels.gpu_tests.{stem}")
    config = configs_of(GPU_KERNELS / f"{stem}.py")[name]
    compile_kernel(getattr(mod, name), config["signature"], config["constexprs"],
                   num_warps=config["num_warps"])


def test_acc_store_on_emulation():
    import torch

    from tests.gpu.cases import check_acc_store
    check_acc_store(_emulated("acc_store"), "cpu", torch.bfloat16, 1)
    check_acc_store(_emulated("acc_store"), "cpu", torch.float32, 0)


@pytest.mark.parametrize("nt", [1, 2, 3])
def test_slot_overlap_on_emulation(nt):
    from tests.gpu.cases import check_delayed_release, check_refill
    check_refill(_emulated("slot_overlap"), "cpu", nt)
    check_delayed_release(_emulated("slot_overlap"), "cpu", nt)
