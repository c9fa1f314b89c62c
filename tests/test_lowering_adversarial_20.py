"""Lowering round 20: a module constant a helper returns, or a tuple holds, is the tensor Triton
makes of it.

Triton 3.6's visit_Return makes a tensor of every number a jit function returns, a
``tl.constexpr`` module constant included (``return NB`` of ``NB = tl.constexpr(100)``: an i32
tensor), and visit_Assign does the same for each number item of a tuple (``tp = (M, NB)``). So
``t + h()`` of an int8 tile adds in i32 (the sum widened, added, truncated back), and of a
float16 tile with ``NB = tl.constexpr(1.5)`` in fp32. The lowering kept such a constant's name
and added in the tile's own type: the same sum in i8, another value once widened
(``(t + h()).to(tl.float32)`` of t = 100 is 200 in Triton, -56 here), and an fp16 add rounded
otherwise. Now the returned constant and a tuple's constant item are ``to_tensor(NB)``
(frontend/build_calls.py, build_support.py ``tensor_items_of``), the name kept inside it for the
readers that fold it (a loop bound ``range(get_nb())``, a pipe index). Each case is compared
with plain Triton's TTGIR, compiled on the CPU.
"""

from __future__ import annotations

import pytest

from .test_lowering_adversarial_19 import S, _same_as_triton

NB = "\nNB = tl.constexpr(100)\n"

CASES = [
    ("int8", S % "t + h()", NB + "\ndef h():\n    return NB\n"),
    ("float16", S % "t + h()", "\nNB = tl.constexpr(1.5)\n\ndef h():\n    return NB\n"),
    ("int8", S % "t + h()[0]", NB + "\ndef h():\n    return (NB, 7)\n"),
    ("int8", "tp = (M, NB)\n" + S % "t + tp[1]", NB),
    # already as Triton computes them, kept so: a plain assignment, a parameter returned, the
    # constant itself (a constexpr beside the tile: an i8 add in both)
    ("int8", "x = NB\n" + S % "t + x", NB),
    ("int8", S % "t + h(NB)", NB + "\ndef h(a):\n    return a\n"),
    ("int8", S % "t + NB", NB),
]


@pytest.mark.parametrize("dt, body, helpers", CASES,
                         ids=["returned", "returned-float", "returned-tuple-item",
                              "partition-tuple-item", "assigned", "parameter", "direct"])
def test_a_module_constant_made_a_tensor_adds_as_triton_adds(tmp_path, dt, body, helpers):
    _same_as_triton(tmp_path, body, dt, helpers=helpers)
