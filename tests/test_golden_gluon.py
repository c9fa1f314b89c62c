"""Golden Gluon: the generated source of every bundled, example and GPU-test kernel (with its
DEFAULT_CONFIG's constexprs, or none) is held equal to tests/golden/gluon/<file>.<kernel>.py.

Any change to the frontend, the kernel IR or the lowering that changes what a kernel becomes shows
up here as a diff to read; a change meant to alter the generated code updates the goldens with

    TLE_UPDATE_GOLDEN=1 python3 -m pytest -q tests/test_golden_gluon.py

and the diff of tests/golden/gluon/ goes into the same commit, where a reviewer sees it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tle_compiler.diagnostics import TleError
from tle_compiler.lowering.compile import gluon_source
from tle_compiler.lowering.dumping import default_config

from .bundled import KERNELS_DIR, tle_kernels

ROOT = KERNELS_DIR.parent
GOLDEN = Path(__file__).resolve().parent / "golden" / "gluon"
KERNELS = tle_kernels()


def _golden_name(f: Path, name: str) -> str:
    rel = f.relative_to(KERNELS_DIR).with_suffix("")
    return ".".join(rel.parts) + f".{name}.py"


def _constexprs(f: Path, name: str) -> dict:
    try:
        return default_config(str(f), name).get("constexprs", {})
    except TleError:  # no DEFAULT_CONFIG: the kernel is lowered generically
        return {}


def test_every_bundled_kernel_has_a_golden():
    assert len(KERNELS) >= 15
    names = {_golden_name(f, n) for f, n in KERNELS}
    on_disk = {p.name for p in GOLDEN.glob("*.py")}
    assert on_disk - names == set(), "goldens of kernels that no longer exist"


@pytest.mark.parametrize("f,name", KERNELS, ids=[_golden_name(f, n) for f, n in KERNELS])
def test_generated_gluon_equals_golden(f, name):
    src = gluon_source((str(f), name), _constexprs(f, name), debug_waits=False).source
    src = src.replace(str(ROOT) + os.sep, "")  # locations relative to the repository
    path = GOLDEN / _golden_name(f, name)
    if os.environ.get("TLE_UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(src)
    assert path.exists(), f"no golden {path.name}: run with TLE_UPDATE_GOLDEN=1"
    assert src == path.read_text(), (f"generated Gluon of {name} differs from {path.name} (if "
                                     f"meant: TLE_UPDATE_GOLDEN=1, and commit the diff)")
