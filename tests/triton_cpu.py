"""Running a plain ``@triton.jit`` kernel of the package without a GPU, for the tests of the naive
Triton kernels and the decode combine (tests/test_sparse_mla_api.py, tests/test_decode_api.py):
in Triton's interpreter, in a child process (TRITON_INTERPRET must be set before triton is
imported), and compiled for sm_90a (a CPU-only Triton compiles through ptxas all the same).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# What every interpreted script starts with: Triton 3.6's interpreter turns a 1-element 1-d array
# into an int with int(), which numpy 2 refuses; index it instead. Then the repository on sys.path.
PRELUDE = r'''
import sys
import triton.runtime.interpreter as I
if hasattr(I, "_patch_lang_tensor"):
    _orig = I._patch_lang_tensor
    def _patched(tensor, scope):
        _orig(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.reshape(-1)[0]))
    I._patch_lang_tensor = _patched
sys.path.insert(0, sys.argv[1])
'''


def run_in_triton_interpreter(script: str, tmp_path: Path, timeout: int) -> None:
    """Run ``script`` (after PRELUDE) with TRITON_INTERPRET=1; it must exit 0 and print
    ``INTERPRETED OK`` as its last check passes."""
    pytest.importorskip("triton")
    path = tmp_path / "interp.py"
    path.write_text(PRELUDE + script)
    env = dict(os.environ, TRITON_INTERPRET="1")
    r = subprocess.run([sys.executable, str(path), str(ROOT)], env=env, capture_output=True,
                       text=True, timeout=timeout)
    assert r.returncode == 0 and "INTERPRETED OK" in r.stdout, r.stdout + r.stderr[-3000:]


def compile_for_sm90(fn, sig: dict, constexprs: dict, **options):
    """``fn`` compiled by Triton for sm_90a with the argument types ``sig`` and the constexpr
    values ``constexprs``; ``options``: num_warps, num_stages, ..."""
    triton = pytest.importorskip("triton")
    from triton.backends.compiler import GPUTarget

    sig = dict(sig, **{k: "constexpr" for k in constexprs})
    src = triton.compiler.ASTSource(fn, sig, constexprs)
    return triton.compile(src, target=GPUTarget("cuda", 90, 32), options=options)
