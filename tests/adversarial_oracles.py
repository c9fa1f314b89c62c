"""The two oracles the adversarial verdict tests (tests/test_adversarial_*.py) check tle-dump
against:

- ``triton_compile_error`` (and ``triton_ttir``, the TTIR it compiles to): what Triton 3.6
  itself does with a plain ``@triton.jit`` kernel (compiled for sm_90a, which needs no GPU), so
  that a refusal rests on Triton refusing the construct and an acceptance on Triton compiling
  it, and a trip count on the loop Triton builds;
- ``lowering_problems``: whether the Gluon a verified kernel lowers to performs, for a grid of
  its params, exactly the mbarrier operations that were verified (tests/test_lowering_events.py).
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Optional

import pytest

#: the signature of the kernels the Triton oracle compiles: ``k(x_ptr, N, C: tl.constexpr)``
SIGNATURE = {"x_ptr": "*fp32", "N": "i32", "C": "constexpr"}


def _triton_compile(tmp_path: Path, monkeypatch, source: str, tag: str, catch: bool,
                    signature: Optional[dict] = None):
    """Import the module ``source`` (defining ``k(x_ptr, N, C: tl.constexpr)``) and compile
    ``k`` with C = 3 for sm_90a (``signature`` its types, :data:`SIGNATURE` unless given): the
    compiled kernel, or with ``catch`` the exception Triton raised instead."""
    triton = pytest.importorskip("triton")
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    name = f"{tag}_{abs(hash(source))}"
    (tmp_path / f"{name}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module(name)
    try:
        return triton.compile(ASTSource(mod.k, signature=signature or SIGNATURE,
                                        constexprs={"C": 3}),
                              target=GPUTarget("cuda", 90, 32))
    except Exception as e:  # noqa: BLE001 - Triton raises CompilationError and its subclasses
        if catch:
            return e
        raise
    finally:
        sys.modules.pop(name, None)


def triton_compile_error(tmp_path: Path, monkeypatch, source: str, tag: str,
                         signature: Optional[dict] = None) -> Optional[Exception]:
    """Compile the module ``source`` (defining ``k(x_ptr, N, C: tl.constexpr)``) with C = 3 for
    sm_90a (``signature``: its types, :data:`SIGNATURE` unless given): None when Triton compiles
    it, else the exception it raised."""
    result = _triton_compile(tmp_path, monkeypatch, source, tag, catch=True, signature=signature)
    return result if isinstance(result, Exception) else None


def triton_ttir(tmp_path: Path, monkeypatch, source: str, tag: str,
                signature: Optional[dict] = None) -> str:
    """The TTIR Triton compiles the module ``source`` (as :func:`triton_compile_error`'s, with
    ``signature``) to."""
    return _triton_compile(tmp_path, monkeypatch, source, tag, catch=False,
                           signature=signature).asm["ttir"]


def lowering_problems(path: Path, min_grid: int = 1) -> list[str]:
    """The differences between the barrier operations the lowered Gluon of kernel ``k`` in
    ``path`` performs and the verified events, over a grid of its params (at least ``min_grid``
    points when it has params); [] when they agree everywhere."""
    pytest.importorskip("triton.experimental.gluon")
    from tle_compiler.lowering.dumping import default_config

    from .test_lowering_events import Runs, param_grid

    runs = Runs(path, "k", default_config(str(path), "k"))
    grid = param_grid(runs.base.program)
    assert len(grid) >= (min_grid if runs.base.program.params else 1)
    return [p for values in grid for p in runs.check(values)]


def lowers_to_its_events(path: Path) -> None:
    """Assert that the verified kernel at ``path`` lowers to exactly its verified events."""
    problems = lowering_problems(path)
    assert not problems, "\n".join(problems)
