"""An integer cast the verifier does not model is refused where it decides pipe events.

``x.to(dtype)`` of a param was read as the same integer whatever the type: ``range(N.to(tl.int8))``
was verified for every N while the GPU truncates N to 8 bits (N = 200 runs -56 times: the writer
commits nothing and the reader hangs), and ``M = N.to(tl.uint32)`` made ``M < 5`` an unsigned
comparison (N = -1 skips the commit) the verifier compared signed. Now a cast to any type other
than tl.int32 / tl.int64 is data: a loop bound, a condition around events, a pipe index or a
derived param computed from it is refused at its use, the message naming the cast and its line.
A cast to tl.int32 or tl.int64 keeps the value (a verdict covers only values whose bounds,
conditions and indices stay in i32), and a narrowing cast of data that decides no event is fine.
What follows a cast to tl.int64 is computed in i64, so it is not taken for the same expression of
the i32 value (tests/test_adversarial_verdicts_3.py, test_widening_casts_are_not_verified)."""

from __future__ import annotations

import pytest

from tle_compiler.diagnostics import TleError
from tle_compiler.frontend import read_source
from tle_compiler.passes import verify

KERNEL = '''\
import triton.language as tl
import tle_compiler as tle


@tle.jit
def tiles(x_ptr, y_ptr, N):
    tle.assume(0 <= N <= 1000)
    M = KERNEL_LEVEL
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N, M)), (consume, (kv, y_ptr, N, M))],
                            [4], [232])


def produce(kv, x_ptr, N, M):
    w = kv.writer()
    for i in range(BOUND):
        if COND:
            slot = w.acquire(INDEX)
            tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + DATA + tl.arange(0, 64)))
            w.commit(INDEX)


def consume(kv, y_ptr, N, M):
    r = kv.reader()
    for i in range(N):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(i)
        tl.store(y_ptr + i * 64 + tl.arange(0, 64), v)
'''

DEFAULTS = {"KERNEL_LEVEL": "N", "BOUND": "N", "COND": "i >= 0", "INDEX": "i", "DATA": "i * 64"}


def _read(**parts: str):
    text = KERNEL
    for key, value in {**DEFAULTS, **parts}.items():
        text = text.replace(key, value)
    (program,) = read_source(text, "casts.py").kernels
    return program


def _line(fragment: str) -> int:
    """The line of KERNEL holding ``fragment`` (its placeholder)."""
    return next(i for i, text in enumerate(KERNEL.splitlines(), 1) if fragment in text)


@pytest.mark.parametrize("parts, cast, check, at", [
    ({"BOUND": "N.to(tl.int8)"}, "N.to(tl.int8)", "non-affine-loop", "BOUND"),
    ({"BOUND": "N.to(tl.int16) + 1 - 1"}, "N.to(tl.int16)", "non-affine-loop", "BOUND"),
    ({"BOUND": "N.to(tl.int8).to(tl.int32)"}, "N.to(tl.int8)", "non-affine-loop", "BOUND"),
    ({"BOUND": "tl.minimum(N.to(tl.uint32), 8)"}, "N.to(tl.uint32)", "non-affine-loop", "BOUND"),
    ({"COND": "N.to(tl.int8) >= 0"}, "N.to(tl.int8)", "non-affine-if", "COND"),
    ({"COND": "i.to(tl.uint32) < 5"}, "i.to(tl.uint32)", "non-affine-if", "COND"),
    ({"INDEX": "i.to(tl.int8)"}, "i.to(tl.int8)", "non-affine", "acquire(INDEX)"),
    ({"KERNEL_LEVEL": "N.to(tl.int8)", "BOUND": "M"}, "N.to(tl.int8)", "non-affine-loop", "BOUND"),
    ({"KERNEL_LEVEL": "N.to(tl.uint32) // 2", "COND": "M < 5"}, "N.to(tl.uint32)",
     "non-affine-if", "COND"),
    ({"BOUND": "N.to(tl.int32, bitcast=True)"}, "N.to(tl.int32, bitcast=True)",
     "non-affine-loop", "BOUND"),
])
def test_a_cast_deciding_events_is_refused_at_its_use(parts, cast, check, at):
    with pytest.raises(TleError) as info:
        _read(**parts)
    err = info.value
    assert (err.check, err.loc.line) == (check, _line(at)), str(err)
    assert f"`{cast}`" in str(err) and "does not model" in str(err), str(err)


def test_a_float_cast_as_a_loop_bound_is_refused_as_triton_refuses_it():
    """Triton 3.6 takes integer loop bounds only, on every loop
    (tests/test_adversarial_verdicts_9.py, float loop bounds)."""
    with pytest.raises(TleError) as info:
        _read(BOUND="N.to(tl.float32)")
    err = info.value
    assert (err.check, err.loc.line) == ("bad-loop", _line("BOUND")), str(err)
    assert "(`N.to(tl.float32)`)" in str(err) and "must all be ints" in str(err), str(err)


def test_the_message_names_a_kernel_level_cast_and_its_line():
    with pytest.raises(TleError) as info:
        _read(KERNEL_LEVEL="N.to(tl.int8)", BOUND="M")
    assert f"`N.to(tl.int8)` at line {_line('KERNEL_LEVEL')} casts to tl.int8" in str(info.value)


@pytest.mark.parametrize("parts", [
    {"BOUND": "N.to(tl.int32)"},
    {"BOUND": "N.to(tl.int64)", "COND": "i.to(tl.int32) >= 0"},
    {"KERNEL_LEVEL": "N.to(tl.int64)", "BOUND": "M", "INDEX": "i.to(tl.int32)"},
    {"BOUND": "N.to(dtype=tl.int32, bitcast=False)"},
    {"DATA": "i.to(tl.int8) * 64"},  # a narrowing cast of data no event depends on
    {"KERNEL_LEVEL": "N.to(tl.uint32)"},  # unused by any event
])
def test_identity_casts_and_casts_of_data_are_verified(parts):
    ctx = verify(_read(**parts))
    assert ctx.ok, [str(d) for d in ctx.diagnostics]
    assert ctx.verdict().kind == "proved", ctx.verdict().describe()


def test_a_narrowing_cast_in_a_loop_bound_was_the_identity_before():
    """The int8 bound is refused, while the same kernel with tl.int32 is proved: the verdict
    turns on the cast's type, not on the loop's shape."""
    assert verify(_read(BOUND="N.to(tl.int32)")).ok
    with pytest.raises(TleError):
        _read(BOUND="N.to(tl.int8)")
