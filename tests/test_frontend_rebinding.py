"""Names that a loop or a branch rebinds are read as Python reads them: a parameter bound to the
caller's expression (read in place while it is not assigned) becomes a variable before a loop or
an if that assigns it, so later iterations and the other branch read the variable, not the
expression; a pipe handle that a loop body rebinds (two handles swapped each iteration) is an
error, since the body is built once with the handles it starts with."""

from __future__ import annotations

from pathlib import Path

import pytest

from tle_compiler.diagnostics import TleError
from tle_compiler.frontend.build import build_file
from tle_compiler.ir import kernel as K

CASES = Path(__file__).parent / "cases"

RING = '''
import triton.language as tl
import tle_compiler as tle


@tle.jit
def ring(x_ptr, N):
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.int32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, x_ptr, N))], [4], [232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    for t in range(N):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + t * 64 + tl.arange(0, 64)))
        w.commit(t)


def consume(kv, x_ptr, N):
    r = kv.reader()
    BODY
'''


def _partition(path: Path, name: str) -> K.KPartition:
    (kernel,) = build_file(path)
    return next(p for p in kernel.partitions if p.name == name)


def _store_addresses(stmts) -> list[K.Expr]:
    """The address operand of every tl.store (to global memory) under ``stmts``."""
    out = []
    for s in K.walk_stmts(stmts):
        for e in (getattr(s, "value", None),):
            for x in K.walk_expr(e) if e is not None else ():
                if isinstance(x, K.Op) and x.name == "tl.store" and x.args:
                    out.append(x.args[0])
    return out


def _names(e: K.Expr) -> set[str]:
    return {x.id for x in K.walk_expr(e) if isinstance(x, K.Name)}


def test_a_parameter_counted_up_in_a_loop_is_read_as_the_variable():
    # carried_parameter.ok.py: `row = i` (i bound to the literal 0), then `row += 1` each
    # iteration; the same with the parameter itself counted up in a helper
    part = _partition(CASES / "carried_parameter.ok.py", "consume")
    (address,) = _store_addresses(part.body)
    assert "row" in _names(address)


def test_a_helper_parameter_counted_up_in_a_loop_is_read_as_the_variable(tmp_path):
    # (the caller's `z = 0`, a tensor: a literal 0 is a constexpr parameter in Triton, which
    # refuses its rebinding in the loop; lowering adversarial round 10)
    body = "z = 0\n    drain(r, x_ptr, z, N)\n\n\ndef drain(r, x_ptr, row, N):\n" \
           "    for t in range(N):\n        res = r.wait(t)\n" \
           "        v = tl.load(tle.gpu.local_ptr(res.slot.tile))\n        r.release(t)\n" \
           "        tl.store(x_ptr + row * 64 + tl.arange(0, 64), v + 1)\n" \
           "        row = row + 1\n"
    path = tmp_path / "k.py"
    path.write_text(RING.replace("BODY", body))
    part = _partition(path, "consume")
    (loop,) = [s for s in part.body if isinstance(s, K.For)]
    (address,) = _store_addresses(loop.body)
    (row,) = [n for n in _names(address) if n.endswith("_row")]
    # the variable gets the caller's value before the loop, and its reads in the loop read it
    assigned = [s for s in part.body if isinstance(s, K.Assign) and s.target == row]
    assert assigned and isinstance(assigned[0].value, K.Const) and assigned[0].value.value == 0


def test_a_parameter_assigned_on_one_branch_is_a_variable_on_both(tmp_path):
    # (`three = 3`, a tensor in Triton: given the literal 3, a constexpr, the rebinding under
    # the `if` is refused as Triton refuses it; lowering adversarial round 10)
    body = "three = 3\n    for t in range(N):\n        res = r.wait(t)\n" \
           "        v = tl.load(tle.gpu.local_ptr(res.slot.tile))\n        r.release(t)\n" \
           "        put(x_ptr, v, three, N)\n\n\ndef put(x_ptr, v, row, N):\n" \
           "    if N > 4:\n        row = row + 1\n" \
           "    tl.store(x_ptr + row * 64 + tl.arange(0, 64), v)\n"
    path = tmp_path / "k.py"
    path.write_text(RING.replace("BODY", body))
    part = _partition(path, "consume")
    (address,) = _store_addresses(part.body)
    (row,) = [n for n in _names(address) if n.endswith("_row")]
    assert any(isinstance(s, K.Assign) and s.target == row and isinstance(s.value, K.Const)
               and s.value.value == 3 for s in K.walk_stmts(part.body))


def test_handles_swapped_in_a_loop_are_an_error():
    with pytest.raises(TleError) as e:
        build_file(CASES / "handle_swap.bad.py")
    assert e.value.check == "unsupported-control-flow" and e.value.loc.line == 21
    assert "holds a handle" in str(e.value)


def test_a_handle_made_again_each_iteration_is_the_same_handle(tmp_path):
    body = "for t in range(N):\n        r = kv.reader()\n        res = r.wait(t)\n" \
           "        v = tl.load(tle.gpu.local_ptr(res.slot.tile))\n        r.release(t)\n" \
           "        tl.store(x_ptr + t * 64 + tl.arange(0, 64), v + 1)\n"
    path = tmp_path / "k.py"
    path.write_text(RING.replace("BODY", body))
    part = _partition(path, "consume")
    assert sum(1 for _ in K.events(part.body)) == 2
