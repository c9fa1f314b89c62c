"""A fifty-ninth adversarial round (adversarial round 59): round 58's open item (a `.pipe`
file's run-time division by a param that may be 0), then DOCSTRING_REST
"""

from __future__ import annotations

import pytest

from .adversarial_oracles import triton_compile_error, triton_ttir
from .adversarial_support import dump, expect, get, kernel, loop, put, triton_k

#: the ring's writer and reader over N windows
WRITER = loop("for p in range(N):", put("p"))
READER = loop("for p in range(N):", get("p"))


# ------------------------------------------ A1: a .pipe definition dividing by a param

DIVIDED_PIPE = """kernel k
param N_M any
base M BOUND_M
base N BOUND_N
def N_M = DEFINITION

pipe kv capacity=2 fields=(tile)

partition produce default warps=4 {
  for p in range(N_M) {
    kv.acquire(p)
    kv.write(p, tile)
    kv.commit(p)
  }
}

partition consume warps=4 regs=232 {
  for p in range(N_M) {
    kv.wait(p)
    kv.read(p, tile)
    kv.release(p)
  }
}
"""

_PIPE_ZERO = ("rejected", "kernel.pipe:5: error: 'def N_M = ", "[division-by-zero]",
              "may be 0 in the params' domains", "('base M >= 1')")
_PIPE_MINUS_ONE = ("rejected", "kernel.pipe:5: error: ", "[division-by-zero]",
                   "may be -1 where 'N' may be -2147483648")


def _pipe(definition="N // M", m="any", n=""):
    return (DIVIDED_PIPE.replace("DEFINITION", definition).replace("BOUND_M", m)
            .replace("BOUND_N", n).replace(" \n", "\n"))


@pytest.mark.parametrize("definition, m, n, want", [
    ("N // M", "any", "", _PIPE_ZERO),
    ("N % M", "any", "", _PIPE_ZERO),
    ("N // M", ">= -5", "", _PIPE_ZERO),
    ("N // (M - 1)", ">= 1", "", ("rejected", "[division-by-zero]", "divisor 'M - 1' may be 0")),
    ("N // max(M, 1)", "any", "", "verified"),
    ("N // min(M, 1)", "any", "", ("rejected", "[division-by-zero]", "divisor 'min(M, 1)'")),
    ("N // (M % 4)", "any", "", ("rejected", "[division-by-zero]")),
    ("N // M", ">= 1", "", "verified"),
    ("N // M", "any <= -1", "any", _PIPE_MINUS_ONE),
    ("N // M", "any <= -1", "", "verified"),
    ("N // M", "any <= -1", ">= -2147483647", "verified"),
    ("i64(N // M)", "any <= -2", "any", "verified"),
    # Python's division of constexprs, at compile time: Triton refuses it there, no launch
    ("constexpr(N // M)", "any", "", "verified"),
])
def test_a_pipe_definition_dividing_by_a_param_that_may_be_zero(tmp_path, capsys, definition,
                                                                 m, n, want):
    """`def N_M = N // M` over `base M any` was "verified for every value of N_M (every integer
    N_M)", the launches with M = 0 included, where a Python kernel of the same division is
    rejected (division-by-zero, round 58), and so tle-dump's printed protocol of a rejected
    kernel read back verified."""
    code, err = dump(tmp_path, capsys, _pipe(definition, m, n), name="kernel.pipe")
    expect(code, err, want)


@pytest.mark.parametrize("params, want", [
    (("M=3",), "verified"), (("M=0",), _PIPE_ZERO), (("M=-1", "N=5"), "verified"),
])
def test_a_pipe_division_by_a_param_given_by_param(tmp_path, capsys, params, want):
    """--param values that fix the divisor where it is defined keep the verdict, as for a Python
    kernel (verify_protocol._division_defined reads the same operands)."""
    flags = [a for p in params for a in ("--param", p)]
    code, err = dump(tmp_path, capsys, _pipe(n="any" if "N=5" in params else ""), *flags,
                     name="kernel.pipe")
    expect(code, err, want)


PY_DIVIDED = '''import triton.language as tl
import tle_compiler as tle


@tle.jit
def k(x_ptr, y_ptr, M, N):
    ASSUME
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, M, N)), (consume, (kv, y_ptr, M, N))],
                            [4], [232])


def produce(kv, x_ptr, M, N):
    w = kv.writer()
    for p in range(N // M):
        s = w.acquire(p)
        tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + tl.arange(0, 64)))
        w.commit(p)


def consume(kv, y_ptr, M, N):
    r = kv.reader()
    for p in range(N // M):
        res = r.wait(p)
        tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))
        r.release(p)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "M": "i32", "N": "i32"},
                  "constexprs": {}}
'''


@pytest.mark.parametrize("assume, code", [
    ("tle.assume(N >= 0)", 1), ("tle.assume(N >= 0)\n    tle.assume(M >= 1)", 0)])
def test_the_printed_protocol_reads_back_with_the_kernels_verdict(tmp_path, capsys, assume,
                                                                   code):
    """The report of the Python kernel (rejected at `N // M`, verified with M >= 1) read back as
    a .pipe file gets the same exit status: before, the rejected one read back verified."""
    from .adversarial_support import run_dump
    path = tmp_path / "k.py"
    path.write_text(PY_DIVIDED.replace("ASSUME", assume))
    got, out, err = run_dump(capsys, "--no-locations", str(path))
    assert got == code, err
    assert "def N_M = N // M" in out, out
    back = tmp_path / "k.pipe"
    back.write_text(out)
    got, _, err = run_dump(capsys, "-q", str(back))
    assert got == code, err
    if code:
        assert "[division-by-zero]" in err, err
