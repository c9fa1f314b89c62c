"""What is verified is what is lowered, seventh round (lowering adversarial round 7).

(header written at the end of the round)
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from tle_compiler.diagnostics import TleError, TleVerificationWarning  # noqa: E402
from tle_compiler.lowering.compile import compile_kernel  # noqa: E402

pytestmark = pytest.mark.filterwarnings(f"ignore::{TleVerificationWarning.__module__}."
                                        f"{TleVerificationWarning.__name__}")

# the kernel templates and helpers of lowering rounds 5 and 6, shared
from tests.test_lowering_adversarial_5 import (  # noqa: E402,F401
    HEAD, REG, SIG, _compiled, _config, _dump, _line_of, _reg, _write)
from tests.test_lowering_adversarial_6 import _refused_at, _triton  # noqa: E402,F401

STORE = "tl.store(y_ptr + p * 2048 + offs, {})"


# ------------------------------------------------------------------ volatile loads with hints
def test_plain_triton_cannot_compile_a_volatile_load_with_a_cache_hint():
    """The reference: ``tl.load(..., cache_modifier=".cg", volatile=True)`` (".ca", an
    eviction policy, or the hints given positionally) fails in ptxas ("Modifier '.volatile'
    cannot be combined with modifier '.cg'"); ``.cv`` with volatile compiles."""
    import triton
    import triton.language as tl

    @triton.jit
    def vol(x_ptr, y_ptr, C: tl.constexpr):
        offs = tl.arange(0, 64)
        if C == 0:
            u = tl.load(x_ptr + offs, cache_modifier=".cg", volatile=True)
        elif C == 1:
            u = tl.load(x_ptr + offs, eviction_policy="evict_first", volatile=True)
        else:
            u = tl.load(x_ptr + offs, cache_modifier=".cv", volatile=True)
        tl.store(y_ptr + offs, u)

    sig = {"x_ptr": "*i32", "y_ptr": "*i32", "C": "constexpr"}
    for c in (0, 1):
        with pytest.raises(Exception, match="PTXAS"):
            _triton(vol, sig, {"C": c})
    assert "ld.volatile" in _triton(vol, sig, {"C": 2}).asm["ptx"]


@pytest.mark.parametrize("load", [
    'tl.load(y_ptr + p * 2048 + offs, cache_modifier=".cg", volatile=True)',
    'tl.load(y_ptr + p * 2048 + offs, cache_modifier=".ca", volatile=True)',
    'tl.load(y_ptr + p * 2048 + offs, eviction_policy="evict_last", volatile=True)',
    'tl.load(y_ptr + p * 2048 + offs, None, None, None, None, ".cg", "", True)',
])
def test_a_volatile_load_with_a_cache_hint_is_refused_at_its_line(tmp_path, load):
    """tle-dump verified a volatile load with a ``.ca`` / ``.cg`` cache modifier or an eviction
    policy, and the compile failed in ptxas, reported at the kernel's first line ("Triton failed
    to compile the lowered kernel 'k' ...: PTXASError"); plain Triton fails alike. Now refused
    where the kernel is read (partition_rules.check_cache_hints), at the load's line."""
    _refused_at(tmp_path, _reg(f"u = {load}\n" + STORE.format("t + u")), "u = tl.load",
                "a volatile load takes no cache hint")


def test_a_volatile_load_with_cv_compiles(tmp_path):
    """``cache_modifier=".cv"`` with ``volatile=True`` is one ``ld.volatile`` in both."""
    compiled = _compiled(tmp_path, _reg(
        'u = tl.load(y_ptr + p * 2048 + offs, cache_modifier=".cv", volatile=True)\n'
        + STORE.format("t + u")))
    assert "ld.volatile.global" in compiled.asm["ptx"]
