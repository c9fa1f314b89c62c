"""A kernel argument the source declares a float is never an integer param of the protocol.

The verifier models kernel arguments as integers. A float argument (`scale: tl.float32`,
`scale: float`, `scale: "fp32"`, `scale=0.5`) compared in a condition that decides which pipe
events run was read as an integer: `if scale > 0:` in the producer and `if scale >= 1:` in the
consumer agree for every integer, so `tle-dump --param N=4` said "verified for every value of
scale", while at scale = 0.5 the producer commits tiles that nobody waits for. Now such an argument
is a float value: a condition or a loop bound on it that decides pipe events is refused at its
line (non-affine-if / non-affine-loop), as a float literal in a condition is, and the message says
why. A float argument that only scales data is fine; an argument the source does not declare a
float stays an integer param (the verdict's domain says "every integer")."""

from __future__ import annotations

import pytest

from tle_compiler.diagnostics import TleError
from tle_compiler.frontend import read_source
from tle_compiler.passes import verify

KERNEL = '''\
import triton.language as tl
import tle_compiler as tle


@tle.jit
def tiles(x_ptr, y_ptr, N, SIGNATURE):
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N, scale)), (consume, (kv, y_ptr, N, scale))],
                            [4], [232])


def produce(kv, x_ptr, N, scale):
    w = kv.writer()
    for i in range(N):
        if PRODUCER_TEST:
            slot = w.acquire(i)
            tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + i * 64 + tl.arange(0, 64)))
            w.commit(i)


def consume(kv, y_ptr, N, scale):
    r = kv.reader()
    for i in range(N):
        if scale >= 1:
            res = r.wait(i)
            v = tl.load(tle.gpu.local_ptr(res.slot.tile))
            r.release(i)
            tl.store(y_ptr + i * 64 + tl.arange(0, 64), v)
'''


def _kernel(signature: str, producer_test: str = "scale > 0") -> str:
    return KERNEL.replace("SIGNATURE", signature).replace("PRODUCER_TEST", producer_test)


@pytest.mark.parametrize("signature", [
    "scale: tl.float32", "scale: tl.bfloat16", "scale: float", 'scale: "fp32"', "scale=0.5",
])
def test_a_condition_on_a_declared_float_argument_is_refused(signature):
    with pytest.raises(TleError) as e:
        read_source(_kernel(signature), "k.py")
    assert e.value.check == "non-affine-if" and e.value.loc.line == 15
    assert "`scale` is a float kernel argument" in str(e.value)


def test_a_loop_bound_computed_from_a_declared_float_argument_is_refused():
    src = _kernel("scale: tl.float32", "True").replace(
        "    for i in range(N):\n        if True:", "    for i in range(N * scale):\n        if True:")
    with pytest.raises(TleError) as e:
        read_source(src, "k.py")
    # Triton refuses a float bound on any loop (tests/test_adversarial_verdicts_9.py)
    assert e.value.check == "bad-loop" and e.value.loc.line == 14
    assert "`N * scale` is a float (`scale`)" in e.value.message


def test_a_condition_on_a_float_literal_says_it_is_a_float():
    with pytest.raises(TleError) as e:
        read_source(_kernel("scale", "scale > 0.5"), "k.py")
    assert e.value.check == "non-affine-if" and "`0.5` is a float" in str(e.value)


def test_an_undeclared_argument_is_an_integer_param_and_the_verdict_says_so():
    """Read as an integer: `scale > 0` and `scale >= 1` agree for every integer, and the verdict
    names the domain it covers ("every integer scale"), not every value a launch could pass."""
    (program,) = read_source(_kernel("scale"), "k.py").kernels
    assert program.param_names == ("N", "scale")
    v = verify(program, params={"N": 4})
    assert v.ok
    assert v.verdict().kind == "proved" and "every integer scale" in v.verdict().describe()


def test_a_float_argument_that_only_scales_data_is_fine():
    src = _kernel("scale: tl.float32", "True").replace("        if scale >= 1:\n",
                                                        "        if True:\n")
    (program,) = read_source(src, "k.py").kernels
    assert program.param_names == ("N",)
    assert verify(program).ok
