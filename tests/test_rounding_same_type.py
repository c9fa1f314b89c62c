"""A conversion to the type a value already has, with a rounding mode (``t.to(tl.float32,
fp_downcast_rounding='rtz')`` of an fp32 ``t``): Triton 3.6's cast returns the value unchanged
before it reads the mode, so it compiles whatever the mode says (even one it would refuse on a
narrowing). The lowering refused it ("takes a rounding mode only for a float narrowed to a
float", adversarial round 63's open item); now it lowers it as the no-op Triton compiles, and
still refuses the mode where the types differ."""

from __future__ import annotations

import pytest

from tle_compiler.diagnostics import TleVerificationWarning

from tests.test_lowering_adversarial_5 import _dump, _write
from tests.test_lowering_adversarial_12 import _tle_text, added_ops

pytestmark = pytest.mark.filterwarnings(f"ignore::{TleVerificationWarning.__module__}."
                                        f"{TleVerificationWarning.__name__}")

SAME = [
    ("float32", "t.to(tl.float32, fp_downcast_rounding='rtz')"),
    ("float32", "t.to(tl.float32, fp_downcast_rounding='rtne')"),
    ("float32", "t.to(tl.float32, fp_downcast_rounding='xyz')"),
    ("float32", "tl.cast(t, tl.float32, fp_downcast_rounding='rtz')"),
    ("bfloat16", "t.to(tl.bfloat16, fp_downcast_rounding='rtz')"),
    ("float16", "t.to(tl.float16, 'rtz')"),
    ("int32", "t.to(tl.int32, fp_downcast_rounding='rtz')"),
]


@pytest.mark.parametrize("dt, expr", SAME, ids=[f"{d}:{e}" for d, e in SAME])
def test_a_conversion_to_the_same_type_lowers_as_the_no_op_triton_compiles(tmp_path, dt, expr):
    tle, ref = added_ops(tmp_path, dt, expr, f"same_{abs(hash((dt, expr)))}")
    assert tle == ref == type(ref)(), (tle, ref)


@pytest.mark.parametrize("dt, expr, words", [
    ("float32", "t.to(tl.float16, fp_downcast_rounding='xyz')", "'rtne' and 'rtz' only"),
    ("float16", "t.to(tl.float32, fp_downcast_rounding='rtz')",
     "only for a float narrowed to a float"),
])
def test_a_mode_on_a_conversion_between_types_is_still_refused(tmp_path, dt, expr, words):
    rc, out = _dump(_write(tmp_path, _tle_text(expr, dt)), "-q", "--gluon")
    assert rc == 1 and words in out, out
