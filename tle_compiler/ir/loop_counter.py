"""The iterations of a run-time ``for`` loop over intervals of its bounds, and the next value of
the counter Triton's compiled loop steps: one computation for the i32 check of a Program's loops
(passes/i32_range.py) and the endless-loop check of data loops whose bounds read a value no
checked value stands for (frontend/loop_ends.counter_wraps), so that both agree on which values
a loop variable takes, which loops run no iteration, and where a counter wraps.

Triton 3.6 compiles ``range(a, b, s)`` to an scf.for. For ``s > 0`` its counter is the variable:
from ``a``, while below ``b``, by ``s``. For ``s < 0`` visit_For swaps the bounds and negates the
step: the counter runs from ``b``, while below ``a``, by ``-s``, and the variable is ``a - counter
+ b``. Either way the loop adds the step to its counter in i32 before it compares, so the value
one step past the counter's last is computed; past 2^31 - 1 it wraps below the bound and the
loop never ends (`range(N, 0, -3)` at N = 2^31 - 1: the counter steps from 2147483646 to
2147483649).

Every interval is over-approximated, with one exception: a loop whose bounds each have a single
value and whose step is more than 1 gives its exact last value (`range(0, 10, 4)` ends at 8, not
9), since a step > 1 stops short of the bound.
"""

from __future__ import annotations

from typing import Mapping, Optional

from .i32 import I32_MAX, I32_MIN
from .nodes import For
from .record import record

Interval = tuple[int, int]


def as_i32(r: Interval) -> Interval:
    """``r`` as the GPU computes it in i32: itself inside i32, any i32 value where it wraps."""
    return r if I32_MIN <= r[0] and r[1] <= I32_MAX else (I32_MIN, I32_MAX)


@record
class Iterations:
    """What a loop that runs at least one iteration computes over intervals of its bounds.

    ``values``: the least and greatest value of the loop variable; ``counter``: those of the
    counter Triton's scf.for steps (the variable itself for a positive step; for a negative one
    the counter from the stop up to the start); ``k``: the counter's step, the size of the
    loop's step."""

    values: Interval
    counter: Interval
    k: int

    @property
    def next_counter(self) -> Interval:
        """The counter's value one step past each of its values: the one the compiled loop
        computes in i32 after the last iteration, before it compares with the bound."""
        return self.counter[0] + self.k, self.counter[1] + self.k


def iterations(loop: For, env: Mapping[str, Interval]) -> Optional[Iterations]:
    """The iterations of ``loop`` with its bounds' variables over their intervals in ``env``;
    None where a bound reads a variable without one, or where the loop runs no iteration for any
    value (its body then runs never). A bound whose interval leaves i32 is any i32 value
    (:func:`as_i32`): the GPU computes it in i32."""
    start, stop = loop.start.span(env), loop.stop.span(env)
    if start is None or stop is None:
        return None
    start, stop = as_i32(start), as_i32(stop)
    step, k = loop.step, abs(loop.step)
    one = start[0] == start[1] and stop[0] == stop[1] and k > 1
    if step > 0:
        values = (start[0], stop[1] - 1)
        if one:
            r = range(start[0], stop[0], step)
            if r:
                values = (r[0], r[-1])
        counter = values
    else:
        values, counter = (stop[0] + 1, start[1]), (stop[0], start[1] - 1)
        if one:
            r, c = range(start[0], stop[0], step), range(stop[0], start[0], k)
            if r:
                values, counter = (r[-1], r[0]), (c[0], c[-1])
    if values[0] > values[1]:
        return None
    return Iterations(values, counter, k)


def innermost_next_counter(nest: For, env: Mapping[str, Interval]) -> Optional[Interval]:
    """The interval of the next counter value (:attr:`Iterations.next_counter`) of the innermost
    loop of ``nest``, a loop nested in the loops around it (each holding the next as the first
    loop of its body), with the variables of ``env`` over their intervals and each loop's
    variable over the values its loop gives it, as the i32 check walks a loop's body; None
    where a bound is not known or some loop of the nest runs no iteration."""
    loop, env = nest, dict(env)
    while True:
        it = iterations(loop, env)
        if it is None:
            return None
        inner = [s for s in loop.body if isinstance(s, For)]
        if not inner:
            return it.next_counter
        env[loop.var] = it.values
        loop = inner[0]


__all__ = ["Interval", "Iterations", "as_i32", "innermost_next_counter", "iterations"]
