"""A tuple that a loop body rebinds is carried by the loop, as a rebound scalar is: each
iteration reads what the previous one bound (Python's and Triton's semantics). The frontend keeps
each item of such a tuple in a variable of its own, so neither the verifier nor the lowering can
read the tuple's entry value in every iteration:

- a pipe index kept in a carried tuple (``o = (o[1], o[0] + 1)``) is refused as non-affine, as
  the same index kept in a carried scalar is (it was verified with the entry value, and hung);
- source pointers swapped each iteration (``ps = (ps[1], ps[0])``) lower to loop-carried
  variables (the lowering loaded from the first pointer in every iteration);
- TMA descriptors swapped the same way are refused at the copy (it copied from the first one);
- a tuple holding a pipe handle, or rebound to a value that is no tuple of as many items, is an
  error at the rebinding, naming the tuple.

A tuple the loop only reads keeps lowering to the items it holds.

A tuple a branch of an ``if`` rebinds is kept the same way: after the if the name reads the item
variables, which the branches assign, so a load through ``ps[0]`` reads the pointer of the path
that ran (the lowering read the binding before the if on every path), and an index in ``o[0]`` is
merged as the same index in a scalar is. Branches that bind tuples of different lengths, or a
tuple holding a pipe handle, are an error at the binding.

Another name bound to such a tuple (``a = o``, ``a = (o[0], o[1])``, ``a = keep(o)``) keeps the
items it holds at that point: ``o = (o[1], o[0])`` after it leaves ``a`` alone (the load read the
swapped item variable), in a loop, between loops or ifs, and in a branch. A scalar rebound after
a tuple holding it, or after a helper returned it, is kept alike. The emitted Gluon producer is
run with stand-ins for Gluon to see which pointer each tile is loaded from."""

from __future__ import annotations

import re
import textwrap

import pytest

from tle_compiler.cli.dump import main as dump_main
from tle_compiler.diagnostics import TleError

# A producer fills a ring of fp32 tiles; a consumer stores them. PRODUCER is replaced.
RING = '''
import triton.language as tl
import tle_compiler as tle

BM = tl.constexpr(64)


@tle.jit(num_warps=4)
def k(x_ptr, z_ptr, y_ptr, N):
    tle.assume(N >= 0)
    ring = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, BM], tl.float32))
    tle.gpu.warp_specialize([(produce, (ring, x_ptr, z_ptr, N)), (consume, (ring, y_ptr, N))],
                            [4], [232])


def produce(ring, x_ptr, z_ptr, N):
    w = ring.writer()
PRODUCER


def consume(ring, y_ptr, N):
    r = ring.reader()
    for t in range(N):
        res = r.wait(t)
        tile = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t)
        tl.store(y_ptr + t * BM + tl.arange(0, BM), tile)


DEFAULT_CONFIG = {
    "signature": {"x_ptr": "*fp32", "z_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"},
    "constexprs": {}, "num_warps": 4, "grid": (1,),
}
'''

# The writer's indices run t + 0, t + 0, t + 1, t + 1, ... (0, 1, 3, 4, 6, ...): index 2 is never
# committed, and the reader's wait(2) hangs.
INDEX_IN_TUPLE = '''
    o = (0, 0)
    for t in range(N):
        slot = w.acquire(t + o[0])
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + t * BM + tl.arange(0, BM)))
        w.commit(t + o[0])
        o = (o[1], o[0] + 1)
'''
INDEX_IN_SCALAR = '''
    j = 0
    for t in range(N):
        slot = w.acquire(t + j)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + t * BM + tl.arange(0, BM)))
        w.commit(t + j)
        j = j + 1
'''
# Even tiles come from x_ptr, odd ones from z_ptr.
SWAPPED_POINTERS = '''
    ps = (x_ptr, z_ptr)
    for t in range(N):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(ps[0] + t * BM + tl.arange(0, BM)))
        w.commit(t)
        ps = (ps[1], ps[0])
'''
# The control: a tuple the loop reads and never rebinds.
READ_ONLY_TUPLE = '''
    ps = (x_ptr, z_ptr)
    for t in range(N):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(ps[1] + t * BM + tl.arange(0, BM)))
        w.commit(t)
'''
HANDLE_IN_TUPLE = '''
    hw = (w, 0)
    for t in range(N):
        slot = hw[0].acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + t * BM + tl.arange(0, BM)))
        hw[0].commit(t)
        hw = (hw[0], hw[1] + 1)
'''
TUPLE_BECOMES_SCALAR = '''
    ps = (x_ptr, z_ptr)
    for t in range(N):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(ps[0] + t * BM + tl.arange(0, BM)))
        w.commit(t)
        ps = x_ptr
'''

# The TMA version: z_desc's box is [64, 64], not the slot's [64, 128].
TMA_SWAP = '''
import triton.language as tl
import tle_compiler as tle

BM = tl.constexpr(64)
BN = tl.constexpr(128)


@tle.jit(num_warps=4)
def k(x_desc, z_desc, y_ptr, N):
    ring = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, BM, BN], tl.float8e4nv))
    tle.gpu.warp_specialize([(produce, (ring, x_desc, z_desc, N)), (consume, (ring, y_ptr, N))],
                            [4], [232])


def produce(ring, x_desc, z_desc, N):
    w = ring.writer()
    ds = (x_desc, z_desc)
    for t in range(N):
        slot = w.acquire(t)
        tle.gpu.tma_load(slot.tile, ds[0], [t * BM, 0])
        w.commit(t)
        ds = (ds[1], ds[0])


def consume(ring, y_ptr, N):
    r = ring.reader()
    for t in range(N):
        res = r.wait(t)
        tile = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t)
        tl.store(y_ptr + t * BM * BN + tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :],
                 tile)
'''
TMA_SIGNATURE = {"x_desc": "tensordesc<fp8e4nv[64, 128]>",
                 "z_desc": "tensordesc<fp8e4nv[64, 64]>", "y_ptr": "*fp8e4nv", "N": "i32"}


def ring_file(tmp_path, producer: str):
    f = tmp_path / "k.py"
    f.write_text(RING.replace("PRODUCER\n", textwrap.dedent(producer).strip("\n")
                              .replace("\n", "\n    ").join(["    ", "\n"])))
    return f


def line_of(f, text: str) -> int:
    return next(n for n, line in enumerate(f.read_text().splitlines(), 1)
                if line.strip() == text)


def gluon(tmp_path, producer: str, capsys) -> str:
    f = ring_file(tmp_path, producer)
    assert dump_main(["-q", "--gluon", str(f)]) == 0, capsys.readouterr().err
    return capsys.readouterr().out


def test_an_index_in_a_rebound_tuple_is_refused_as_the_same_index_in_a_rebound_scalar(
        tmp_path, capsys):
    f = ring_file(tmp_path, INDEX_IN_TUPLE)
    assert dump_main(["-q", str(f)]) == 1
    err = capsys.readouterr().err
    line = line_of(f, "slot = w.acquire(t + o[0])")
    assert f"k.py:{line}: error: index of w.acquire must be affine" in err
    assert "`t + o[0]`" in err and "[non-affine]" in err
    assert "verified" not in err

    g = ring_file(tmp_path, INDEX_IN_SCALAR)
    assert dump_main(["-q", str(g)]) == 1
    assert "[non-affine]" in capsys.readouterr().err


def test_an_index_in_a_rebound_tuple_is_not_lowered(tmp_path, capsys):
    f = ring_file(tmp_path, INDEX_IN_TUPLE)
    assert dump_main(["-q", "--gluon", str(f)]) == 1
    out, err = capsys.readouterr()
    assert "[non-affine]" in err
    assert "_ring_s1 = ((t + 0)) % 2" not in out


def test_swapped_pointers_are_carried_by_the_loop(tmp_path, capsys):
    """Each iteration loads through the item variable the previous one swapped, and the swap
    assigns both from the values before it (not the first item twice)."""
    f = ring_file(tmp_path, SWAPPED_POINTERS)
    assert dump_main(["-q", str(f)]) == 0
    capsys.readouterr()
    src = gluon(tmp_path, SWAPPED_POINTERS, capsys)
    produce = src[src.index("def produce"):src.index("def consume")] if "def consume" in src \
        else src
    loop = produce[produce.index("for t in range(N):"):]
    (load,) = [x for x in loop.splitlines() if "gl.load(" in x and "BM" in x]
    assert "x_ptr" not in load and "z_ptr" not in load, load
    first = re.search(r"gl\.load\(\(*(\w+) \+", load).group(1)
    # before the loop the item variables hold x_ptr and z_ptr
    assert re.search(rf"^\s*{first} = x_ptr$", produce, re.M), produce
    second = re.search(rf"^\s*(\w+) = z_ptr$", produce, re.M).group(1)
    # in the loop: both are assigned, from temporaries holding the values before the swap
    tmp_a = re.search(rf"^\s*(\w+) = {second}$", loop, re.M).group(1)
    tmp_b = re.search(rf"^\s*(\w+) = {first}$", loop, re.M).group(1)
    assert re.search(rf"^\s*{first} = {tmp_a}$", loop, re.M), loop
    assert re.search(rf"^\s*{second} = {tmp_b}$", loop, re.M), loop


def test_swapped_pointers_compile_to_ttgir(tmp_path, capsys):
    f = ring_file(tmp_path, SWAPPED_POINTERS)
    assert dump_main(["-q", "--ttgir", str(f)]) == 0, capsys.readouterr().err
    assert "scf.for" in capsys.readouterr().out


def test_swapped_tma_descriptors_are_refused_at_the_copy(tmp_path, capsys):
    f = tmp_path / "k.py"
    f.write_text(TMA_SWAP)
    line = line_of(f, "tle.gpu.tma_load(slot.tile, ds[0], [t * BM, 0])")
    assert dump_main(["-q", str(f)]) == 1
    err = capsys.readouterr().err
    assert f"k.py:{line}: error:" in err and "`ds[0]`" in err
    assert dump_main(["-q", "--ptx", str(f)]) == 1
    assert f"k.py:{line}: error:" in capsys.readouterr().err


def test_swapped_tma_descriptors_are_a_lowering_error(tmp_path):
    from tle_compiler.lowering.compile import compile_kernel

    f = tmp_path / "k.py"
    f.write_text(TMA_SWAP)
    with pytest.raises(TleError) as e:
        compile_kernel((str(f), "k"), TMA_SIGNATURE, {})
    assert e.value.loc.line == line_of(f, "tle.gpu.tma_load(slot.tile, ds[0], [t * BM, 0])")


@pytest.mark.parametrize("producer,rebinding,message", [
    (HANDLE_IN_TUPLE, "hw = (hw[0], hw[1] + 1)",
     "`hw` holds a tuple with a compile-time value (a pipe, a handle, a buffer)"),
    (TUPLE_BECOMES_SCALAR, "ps = x_ptr",
     "`ps` holds a tuple of 2 runtime values on entry to a loop that rebinds it here"),
], ids=["handle in the tuple", "tuple rebound to a pointer"])
def test_a_rebound_tuple_the_frontend_cannot_carry_is_an_error_at_the_rebinding(
        tmp_path, capsys, producer, rebinding, message):
    f = ring_file(tmp_path, producer)
    assert dump_main(["-q", str(f)]) == 1
    err = capsys.readouterr().err
    assert f"k.py:{line_of(f, rebinding)}: error: {message}" in err, err
    assert dump_main(["-q", "--gluon", str(f)]) == 1
    capsys.readouterr()


def test_a_tuple_the_loop_only_reads_verifies_and_lowers_to_its_item(tmp_path, capsys):
    f = ring_file(tmp_path, READ_ONLY_TUPLE)
    assert dump_main(["-q", str(f)]) == 0
    capsys.readouterr()
    src = gluon(tmp_path, READ_ONLY_TUPLE, capsys)
    loads = [x for x in src.splitlines() if "gl.load(" in x and "BM" in x and "t * BM" in x]
    assert any("z_ptr + (t * BM)" in x for x in loads), loads
    assert "__0" not in src


# Tiles come from z_ptr when N > 3, else from x_ptr.
POINTERS_REBOUND_IN_IF = '''
    ps = (x_ptr, z_ptr)
    if N > 3:
        ps = (z_ptr, x_ptr)
    for t in range(N):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(ps[0] + t * BM + tl.arange(0, BM)))
        w.commit(t)
'''
POINTERS_BOUND_IN_BOTH_BRANCHES = '''
    if N > 3:
        ps = (z_ptr, x_ptr)
    else:
        ps = (x_ptr, z_ptr)
    for t in range(N):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(ps[0] + t * BM + tl.arange(0, BM)))
        w.commit(t)
'''
# The pipe index, offset by 1 when N > 3 (indices 1..N: the reader's wait(0) hangs), in a tuple
# and in a scalar; and offset by 0 on both paths (the same index: verified).
INDEX_REBOUND_IN_IF = '''
    o = (0, 0)
    if N > 3:
        o = (1, 2)
    for t in range(N):
        slot = w.acquire(t + o[0])
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + t * BM + tl.arange(0, BM)))
        w.commit(t + o[0])
'''
INDEX_REBOUND_IN_IF_SCALAR = '''
    j = 0
    if N > 3:
        j = 1
    for t in range(N):
        slot = w.acquire(t + j)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + t * BM + tl.arange(0, BM)))
        w.commit(t + j)
'''
SAME_INDEX_ON_BOTH_PATHS = INDEX_REBOUND_IN_IF.replace("o = (1, 2)", "o = (0, 2)")
LENGTH_CHANGED_IN_IF = POINTERS_REBOUND_IN_IF.replace("ps = (z_ptr, x_ptr)",
                                                      "ps = (z_ptr, x_ptr, x_ptr)")
LENGTHS_DIFFER_BETWEEN_BRANCHES = POINTERS_BOUND_IN_BOTH_BRANCHES.replace(
    "ps = (x_ptr, z_ptr)", "ps = (x_ptr, z_ptr, x_ptr)")
HANDLE_TUPLE_REBOUND_IN_IF = '''
    hw = (w, 0)
    if N > 3:
        hw = (w, 1)
    for t in range(N):
        slot = hw[0].acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + t * BM + tl.arange(0, BM)))
        hw[0].commit(t)
'''


def produce_of(src: str) -> str:
    return src[src.index("def produce"):src.index("def consume")]


@pytest.mark.parametrize("producer", [POINTERS_REBOUND_IN_IF, POINTERS_BOUND_IN_BOTH_BRANCHES],
                         ids=["rebound in the then branch", "bound in both branches"])
def test_a_load_through_a_tuple_an_if_binds_reads_the_pointer_of_each_path(
        tmp_path, capsys, producer):
    f = ring_file(tmp_path, producer)
    assert dump_main(["-q", str(f)]) == 0
    capsys.readouterr()
    produce = produce_of(gluon(tmp_path, producer, capsys))
    lines = produce.splitlines()
    at_if = next(k for k, x in enumerate(lines) if x.strip() == "if (N > 3):")
    loop = produce[produce.index("for t in range(N):"):]
    (load,) = [x for x in loop.splitlines() if "gl.load(" in x and "BM" in x]
    assert "x_ptr" not in load and "z_ptr" not in load, load
    first = re.search(r"gl\.load\(\(*(\w+) \+", load).group(1)
    # the then branch binds it to z_ptr, the other path to x_ptr
    then = lines[at_if + 1:at_if + 3]
    assert f"        {first} = z_ptr" in then, produce
    other = lines[:at_if] + lines[at_if + 3:]
    assert any(re.fullmatch(rf"\s*{first} = x_ptr", x) for x in other), produce


def test_pointers_a_tuple_an_if_binds_compile_to_ttgir(tmp_path, capsys):
    f = ring_file(tmp_path, POINTERS_REBOUND_IN_IF)
    assert dump_main(["-q", "--ttgir", str(f)]) == 0, capsys.readouterr().err
    assert "scf.if" in capsys.readouterr().out


@pytest.mark.parametrize("n", [2, 5])
def test_the_emulation_of_the_kernel_loads_from_the_pointer_the_if_chose(tmp_path, n):
    torch = pytest.importorskip("torch")
    from tle_compiler.testing.emulator import load_kernel_module

    mod = load_kernel_module(ring_file(tmp_path, POINTERS_REBOUND_IN_IF))
    bm = 64
    x = torch.arange(n * bm, dtype=torch.float32)
    z = -1.0 - torch.arange(n * bm, dtype=torch.float32)
    y = torch.full((n * bm,), float("nan"))
    mod.k[(1,)](x, z, y, n)
    assert torch.equal(y, z if n > 3 else x)


def test_an_index_in_a_tuple_an_if_rebinds_gets_the_verdict_of_the_same_index_in_a_scalar(
        tmp_path, capsys):
    f = ring_file(tmp_path, INDEX_REBOUND_IN_IF)
    assert dump_main(["-q", str(f)]) == 1
    err = capsys.readouterr().err
    line = line_of(f, "slot = w.acquire(t + o[0])")
    assert f"k.py:{line}: error: index of w.acquire must be affine" in err, err
    assert "`t + o[0]`" in err and "[non-affine]" in err
    g = ring_file(tmp_path, INDEX_REBOUND_IN_IF_SCALAR)
    assert dump_main(["-q", str(g)]) == 1
    assert "[non-affine]" in capsys.readouterr().err
    # o[0] is 0 on both paths: the index is t, as in a scalar bound to 0 on both
    h = ring_file(tmp_path, SAME_INDEX_ON_BOTH_PATHS)
    assert dump_main(["-q", str(h)]) == 0, capsys.readouterr().err
    assert "verified" in capsys.readouterr().err


@pytest.mark.parametrize("producer,binding,message", [
    (LENGTH_CHANGED_IN_IF, "ps = (z_ptr, x_ptr, x_ptr)",
     "`ps` holds a tuple of 2 runtime values before an if whose branch rebinds it here"),
    (LENGTHS_DIFFER_BETWEEN_BRANCHES, "ps = (z_ptr, x_ptr)",
     "`ps` holds a tuple of 2 items after the then branch of the if at line {if_line} and a "
     "tuple of 3 items after its else"),
    (HANDLE_TUPLE_REBOUND_IN_IF, "hw = (w, 1)",
     "`hw` holds a tuple with a compile-time value (a pipe, a handle, a buffer) or a tuple "
     "among its items, and a branch of an if rebinds it here"),
], ids=["length changed", "lengths differ", "handle in the tuple"])
def test_a_tuple_an_if_cannot_carry_is_an_error_at_the_binding(tmp_path, capsys, producer,
                                                                binding, message):
    f = ring_file(tmp_path, producer)
    message = message.format(if_line=line_of(f, "if N > 3:"))
    assert dump_main(["-q", str(f)]) == 1
    err = capsys.readouterr().err
    assert f"k.py:{line_of(f, binding)}: error: {message}" in err, err
    assert dump_main(["-q", "--gluon", str(f)]) == 1
    capsys.readouterr()


# Binding another name to a tuple keeps the values the tuple holds at that point (Python's
# semantics): `a = o` then `o = (o[1], o[0])` leaves `a` the tuple before the swap. A carried
# tuple's items are variables the swap assigns, so the alias takes a copy of them where it is
# bound (the load read the swapped item: tiles came from z, x, z, x instead of x, z, x, z).
KEEP_HELPER = '''

def keep(p):
    return p
'''
ALIAS_THEN_SWAP = '''
    o = (x_ptr, z_ptr)
    for t in range(N):
        ALIAS
        o = (o[1], o[0])
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(LOAD + t * BM + tl.arange(0, BM)))
        w.commit(t)
'''
# `a = o` before a branch (in the loop) that swaps `o`: x, then x, z, x (the swap runs from t=1)
ALIAS_THEN_SWAP_IN_IF = '''
    o = (x_ptr, z_ptr)
    for t in range(N):
        a = o
        if t > 0:
            o = (o[1], o[0])
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(a[0] + t * BM + tl.arange(0, BM)))
        w.commit(t)
'''
# `a = o` between two loops that swap `o`: a[0] is the first item after the first loop (z at an
# odd N) in every iteration of the second.
ALIAS_BETWEEN_LOOPS = '''
    o = (x_ptr, z_ptr)
    for t in range(N):
        o = (o[1], o[0])
    a = o
    for t in range(N):
        o = (o[1], o[0])
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(a[0] + t * BM + tl.arange(0, BM)))
        w.commit(t)
'''
# The if-carried case: the branch aliases `o`, then rebinds it; `b = a[1]` is z (the item before
# the rebinding), not the rebound x.
ALIAS_IN_BRANCH = '''
    o = (x_ptr, z_ptr)
    if N > 3:
        a = o
        o = (z_ptr, x_ptr)
        b = a[1]
    else:
        b = x_ptr
    for t in range(N):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(b + t * BM + tl.arange(0, BM)))
        w.commit(t)
'''
# `a = o` between two ifs that rebind `o`: a[0] is z for N > 3, whatever the second if binds.
ALIAS_BETWEEN_IFS = '''
    o = (x_ptr, z_ptr)
    if N > 3:
        o = (z_ptr, x_ptr)
    a = o
    if N > 5:
        o = (x_ptr, x_ptr)
    for t in range(N):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(a[0] + t * BM + tl.arange(0, BM)))
        w.commit(t)
'''
# A scalar rebound after a tuple holding it, and after a helper that returns it: x on every tile.
SCALAR_IN_TUPLE_REBOUND = '''
    j = x_ptr
    a = (j, z_ptr)
    j = z_ptr
    for t in range(N):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(a[0] + t * BM + tl.arange(0, BM)))
        w.commit(t)
'''
SCALAR_KEPT_BY_HELPER_REBOUND = SCALAR_IN_TUPLE_REBOUND.replace("a = (j, z_ptr)", "a = (keep(j), 0)")
# The control: an alias bound after the swap, which nothing rebinds before its use.
ALIAS_AFTER_SWAP = '''
    o = (x_ptr, z_ptr)
    for t in range(N):
        o = (o[1], o[0])
        a = o
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(a[0] + t * BM + tl.arange(0, BM)))
        w.commit(t)
'''


def producer_with_helper(tmp_path, producer: str):
    f = ring_file(tmp_path, producer)
    f.write_text(f.read_text() + KEEP_HELPER)
    return f


def gluon_of(f, capsys) -> str:
    assert dump_main(["-q", "--gluon", str(f)]) == 0, capsys.readouterr().err
    return capsys.readouterr().out


def tiles_loaded_by(produce: str, n: int) -> list[str]:
    """Runs the emitted Gluon producer as Python with stand-ins for Gluon (the statements it
    emits here are Python whose values are the pointers): which kernel argument each tile's
    load reads, in order ('x' or 'z')."""
    from unittest import mock

    class Ptr:
        def __init__(self, name):
            self.name = name

        def __add__(self, offset):
            return self

        __radd__ = __add__

    loads = []
    gl = mock.MagicMock()
    gl.arange.return_value = 0
    # a load's value is a stand-in too (a slot store may convert it: `.to(...)`)
    gl.load.side_effect = lambda p, *a, **k: loads.append(p.name) or mock.MagicMock()
    text = produce[:produce.index("@gluon.jit")] if "@gluon.jit" in produce else produce
    namespace = {"gl": gl, "mbarrier": mock.MagicMock(), "BM": 64}
    exec(compile(textwrap.dedent(text), "<produce>", "exec"), namespace)
    namespace["produce"](Ptr("x"), Ptr("z"), n, mock.MagicMock(), mock.MagicMock(),
                         mock.MagicMock())
    return loads


@pytest.mark.parametrize("alias,load", [
    ("a = o", "a[0]"),
    ("a = (o[0], o[1])", "a[0]"),
    ("a = keep(o)", "a[0]"),
    ("a = (o, 0)", "a[0][0]"),
], ids=["the tuple", "a tuple of its items", "through a helper", "nested in a tuple"])
def test_an_alias_of_a_carried_tuple_keeps_the_items_before_the_rebinding(
        tmp_path, capsys, alias, load):
    f = producer_with_helper(tmp_path, ALIAS_THEN_SWAP.replace("ALIAS", alias)
                             .replace("LOAD", load))
    assert dump_main(["-q", str(f)]) == 0
    assert "verified" in capsys.readouterr().err
    produce = produce_of(gluon_of(f, capsys))
    assert tiles_loaded_by(produce, 4) == ["x", "z", "x", "z"], produce
    # emitted order: the load reads a copy of the first item taken before the swap assigns it
    loop = produce[produce.index("for t in range(N):"):].splitlines()
    (at_load,) = [k for k, x in enumerate(loop) if "gl.load(" in x and "BM" in x]
    copy = re.search(r"gl\.load\(\(*(\w+) \+", loop[at_load]).group(1)
    first = re.search(r"^\s*(\w+) = x_ptr$", produce, re.M).group(1)
    at_copy = loop.index(f"        {copy} = {first}")
    swaps = [k for k, x in enumerate(loop) if re.fullmatch(rf"\s*{first} = \w+", x)]
    assert swaps and at_copy < min(swaps) and max(swaps) < at_load, produce


@pytest.mark.parametrize("producer,n,tiles", [
    (ALIAS_THEN_SWAP_IN_IF, 4, ["x", "x", "z", "x"]),
    (ALIAS_BETWEEN_LOOPS, 3, ["z", "z", "z"]),
    (ALIAS_IN_BRANCH, 4, ["z"] * 4),
    (ALIAS_IN_BRANCH, 2, ["x"] * 2),
    (ALIAS_BETWEEN_IFS, 6, ["z"] * 6),
    (SCALAR_IN_TUPLE_REBOUND, 2, ["x", "x"]),
    (SCALAR_KEPT_BY_HELPER_REBOUND, 2, ["x", "x"]),
], ids=["swap in an if in the loop", "between two loops", "in a branch that rebinds",
        "in a branch that rebinds (else path)", "between two ifs", "scalar in a tuple",
        "scalar returned by a helper"])
def test_a_name_bound_to_a_value_rebound_later_keeps_the_value_at_its_binding(
        tmp_path, capsys, producer, n, tiles):
    f = producer_with_helper(tmp_path, producer)
    assert dump_main(["-q", str(f)]) == 0, capsys.readouterr().err
    capsys.readouterr()
    produce = produce_of(gluon_of(f, capsys))
    assert tiles_loaded_by(produce, n) == tiles, produce


def test_the_emulation_agrees_with_the_tiles_the_gluon_loads(tmp_path, capsys):
    """The expected order is Python's: the emulator runs the kernel as Python."""
    torch = pytest.importorskip("torch")
    from tle_compiler.testing.emulator import load_kernel_module

    f = producer_with_helper(tmp_path, ALIAS_THEN_SWAP.replace("ALIAS", "a = o")
                             .replace("LOAD", "a[0]"))
    n, bm = 4, 64
    x = torch.arange(n * bm, dtype=torch.float32)
    z = -1.0 - x
    y = torch.full((n * bm,), float("nan"))
    load_kernel_module(f).k[(1,)](x, z, y, n)
    emulated = ["x" if torch.equal(y[t * bm:(t + 1) * bm], x[t * bm:(t + 1) * bm]) else
                "z" if torch.equal(y[t * bm:(t + 1) * bm], z[t * bm:(t + 1) * bm]) else "?"
                for t in range(n)]
    assert emulated == tiles_loaded_by(produce_of(gluon_of(f, capsys)), n)


def test_an_alias_of_a_carried_tuple_compiles_to_ttgir(tmp_path, capsys):
    f = producer_with_helper(tmp_path, ALIAS_THEN_SWAP.replace("ALIAS", "a = o")
                             .replace("LOAD", "a[0]"))
    assert dump_main(["-q", "--ttgir", str(f)]) == 0, capsys.readouterr().err
    assert "scf.for" in capsys.readouterr().out


def test_an_alias_nothing_rebinds_before_its_use_reads_the_item_variable(tmp_path, capsys):
    f = ring_file(tmp_path, ALIAS_AFTER_SWAP)
    produce = produce_of(gluon_of(f, capsys))
    assert tiles_loaded_by(produce, 4) == ["z", "x", "z", "x"], produce
    (load,) = [x for x in produce.splitlines() if "gl.load(" in x and "BM" in x]
    first = re.search(r"^\s*(\w+) = x_ptr$", produce, re.M).group(1)
    assert re.search(rf"gl\.load\(\(*{first} \+", load), produce
