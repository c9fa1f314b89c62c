"""Every ``@tle.jit`` kernel bundled under tle_kernels/ lowers to TTGIR on the CPU with its file's
DEFAULT_CONFIG (the configuration ``tle-dump --ttgir`` compiles): a kernel without a config for
its own arguments, or whose config no longer matches it, fails here rather than on a GPU run."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from .bundled import KERNELS_DIR, tle_kernels

KERNELS = tle_kernels()


def test_the_bundled_kernels_are_found():
    names = {(p.relative_to(KERNELS_DIR).as_posix(), k) for p, k in KERNELS}
    assert {("sparse_mla_pipe.py", "sparse_mla_pipe"), ("sparse_mla_seesaw.py", "sparse_mla_seesaw"),
            ("gpu_tests/spmc.py", "spmc2"), ("gpu_tests/spmc.py", "spmc3")} <= names
    assert not any(p.name == "sparse_mla_naive.py" for p, _ in KERNELS)  # a Triton kernel
    assert len(KERNELS) >= 15


@pytest.mark.parametrize("path,kernel", KERNELS,
                         ids=[f"{p.relative_to(KERNELS_DIR).with_suffix('').as_posix()}.{k}"
                              for p, k in KERNELS])
def test_every_bundled_kernel_lowers_to_ttgir_with_its_default_config(path, kernel):
    from tle_compiler.lowering.dumping import default_config, lowered

    cfg = default_config(str(path), kernel)
    fdef = next(n for n in ast.parse(path.read_text()).body
                if isinstance(n, ast.FunctionDef) and n.name == kernel)
    assert list(cfg["signature"]) == [a.arg for a in fdef.args.args], \
        f"{path.name}: DEFAULT_CONFIG's signature is not {kernel}'s"
    ttgir = lowered(str(path), kernel, "ttgir")
    assert f"tt.func public @{kernel}" in ttgir
    assert "ttg.warp_specialize" in ttgir
