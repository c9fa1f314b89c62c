"""A name bound to a constant before a loop and rebound in its body is carried by the loop.

``c = True`` before ``for t in range(N)`` and ``c = t < 3`` inside: Triton makes the constant an
i1 scalar and each iteration reads the value the previous one left. The lowering kept ``c`` the
constant inside the loop, so ``tl.where(c, 1.0, 0.0)`` became ``gl.where(True, 1.0, 0.0)`` in
every iteration and the rebinding was dead (`--ttgir` exit 0 for code that is not the source).
Now the constant is assigned to the name's variable before the loop and the name is a runtime
scalar in it; a name the loop does not rebind stays the folded constant."""

from __future__ import annotations

import re

from tle_compiler.lowering import compile_kernel
from tle_compiler.lowering.compile import gluon_source

KERNEL = '''
import triton.language as tl
import tle_compiler as tle


@tle.jit(num_warps=4)
def ring(x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    a = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (a, x_ptr, N)), (consume, (a, y_ptr, N))], [4], [232])


def produce(a, x_ptr, N):
    w = a.writer()
    for t in range(N):
        s = w.acquire(t)
        tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + t * 64 + tl.arange(0, 64)))
        w.commit(t)


def consume(a, y_ptr, N):
    r = a.reader()
    acc = tl.zeros([64], tl.float32)
    c = INIT
    for t in range(N):
        acc += tl.where(USE, 1.0, 0.0)
        x = r.wait(t)
        acc += tl.load(tle.gpu.local_ptr(x.slot.tile))
        REBIND
        r.release(t)
    for i in tl.static_range(2):
        acc += k
        k = k + 1
    tl.store(y_ptr + tl.arange(0, 64), acc)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"},
                  "constexprs": {}, "num_warps": 4, "grid": (1,)}
'''
SIGNATURE = {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"}


def _write(tmp_path, init="True", use="c", rebind="c = t < 3"):
    path = tmp_path / "carried.py"
    text = KERNEL.replace("INIT", init).replace("USE", use).replace("REBIND", rebind)
    path.write_text(text.replace("    for i in tl.static_range", "    k = 0\n    for i in "
                                 "tl.static_range"))
    return path


def _consumer(path) -> str:
    src = gluon_source((str(path), "ring")).source
    start = src.index("def consume(")
    return src[start:src.index("@gluon.jit", start)]


def test_a_rebound_constant_is_read_from_its_variable(tmp_path):
    cons = _consumer(_write(tmp_path))
    head = cons.index("for t in range(N)")
    assert re.search(r"\n\s+c = True\n", cons[:head]), cons
    assert "gl.where(c, 1.0, 0.0)" in cons[head:], cons
    assert "gl.where(True" not in cons, cons
    assert re.search(r"\n\s+c = \(t < 3\)\n", cons[head:]), cons


def test_the_compiled_loop_carries_it(tmp_path):
    """The TTGIR's partition loop carries an i1 (c) from one iteration to the next."""
    ttgir = compile_kernel((str(_write(tmp_path)), "ring"), SIGNATURE).asm["ttgir"]
    loops = [ln for ln in ttgir.splitlines() if "scf.for" in ln and "iter_args" in ln]
    assert any(re.search(r"->\s*\(.*\bi1\b", ln) for ln in loops), loops


def test_a_static_range_reads_each_iterations_value(tmp_path):
    # k = 0, then acc += k; k = k + 1 in a static_range: the body is translated once, so k must
    # be its variable (0, then 1) in both unrolled iterations, never a constant folded into them
    # (an integer constant already had a variable; this keeps it so)
    cons = _consumer(_write(tmp_path))
    head = cons.index("gl.static_range(2)")
    assert re.search(r"\n\s+k = 0\n", cons[:head]), cons
    body = cons[head:]
    assert re.search(r"acc = \(acc \+ k\)", body), body
    assert re.search(r"\n\s+k = \(k \+ 1\)\n", body), body


def test_a_constant_the_loop_does_not_rebind_stays_folded(tmp_path):
    cons = _consumer(_write(tmp_path, rebind="pass"))
    assert "gl.where(True, 1.0, 0.0)" in cons, cons


# The rebinding is itself a constant: `c = False` (a Python keyword), `c = BM` (a module
# constexpr's name) or `c = 0`, unconditionally or under an `if` in the body. Each is a store to
# the carried variable. Before, a constant spelled as an identifier (False, True, None or a
# constexpr's name) was taken as another name for that constant: nothing was emitted, `c` read
# False for the rest of the iteration, and the next iteration read the stale True from the
# variable (the source applies the first-iteration branch once; the lowered code every time).
REBOUND_CONSTANTS = {
    "keyword": ("True", "c", "c = False", r"c = False"),
    "module constexpr": ("1", "c > 0", "c = ZERO", r"c = 0|c = ZERO"),
    "integer": ("1", "c > 0", "c = 0", r"c = 0"),
    "under an if": ("True", "c", "if t > 1:\n            c = False", r"c = False"),
}


def _write_with_zero(tmp_path, init, use, rebind):
    path = _write(tmp_path, init, use, rebind)
    path.write_text(path.read_text().replace("import tle_compiler as tle\n",
                                             "import tle_compiler as tle\n\nZERO = tl.constexpr(0)\n", 1))
    return path


def test_a_constant_rebound_in_the_loop_is_stored_to_the_carried_variable(tmp_path):
    for case, (init, use, rebind, stored) in REBOUND_CONSTANTS.items():
        d = tmp_path / case.replace(" ", "_")
        d.mkdir()
        cons = _consumer(_write_with_zero(d, init, use, rebind))
        head = cons.index("for t in range(N)")
        body = cons[head:cons.index("gl.static_range", head)]
        assert re.search(rf"\n\s+({stored})\n", body), (case, body)
        # the use before the rebinding reads the variable, never the folded constant
        assert "gl.where(True" not in cons and "gl.where(False" not in cons, (case, cons)


def test_a_constant_rebound_in_the_loop_compiles_to_a_carried_value(tmp_path):
    path = _write_with_zero(tmp_path, "True", "c", "c = False")
    ttgir = compile_kernel((str(path), "ring"), SIGNATURE).asm["ttgir"]
    loops = [ln for ln in ttgir.splitlines() if "scf.for" in ln and "iter_args" in ln]
    assert any(re.search(r"->\s*\(.*\bi1\b", ln) for ln in loops), loops
