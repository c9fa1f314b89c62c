"""The writer's cp.async waits follow the pointer's value, not its spelling (cp_async_waits.py).

A read-back of a field the partition gathered into must wait for the copies however the pointer
is spelled: a `dst = tle.gpu.local_ptr(slot.f)` held in a name and reused in a loop got no wait
(the loop head knew only the inline spelling), so iteration k read the tile before iteration
k-1's copy landed. Two gathers into one field in one window must be ordered (PTX gives two
cp.async copies no order without a wait): the second waits for the first; gathers into the slots
of different windows of one ring are not waited for (the pipelined producer). `tl.store` /
`tl.load` with `pointer=` / `value=` keywords lower as their positional forms.
"""

from __future__ import annotations

import re

import pytest

from tle_compiler.diagnostics import TleError
from tle_compiler.lowering.compile import gluon_source

KERNEL = '''
import triton.language as tl
import tle_compiler as tle


@tle.jit
def ring(x_ptr, y_ptr, N):
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64, 64], tl.bfloat16))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, y_ptr, N)), (consume, (kv, y_ptr, N))],
                            [4], [232])

HELPERS
def produce(kv, x_ptr, y_ptr, N):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    w = kv.writer()
BODY


def consume(kv, y_ptr, N):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    r = kv.reader()
    for t in range(READS):
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t)
        tl.store(y_ptr + t * 4096 + offs, v)
'''

SIGNATURE = {"x_ptr": "*bf16", "y_ptr": "*bf16", "N": "i32"}


def read_back_loop(ptr: str, setup: str = "") -> str:
    """Each inner iteration reads back the previous iteration's gather, then gathers again."""
    return f'''    for t in range(N):
        slot = w.acquire(t)
{setup}        for k in range(4):
            if k > 0:
                prev = tl.load({ptr})
                tl.store(y_ptr + (N + k) * 4096 + offs, prev)
            tl.store({ptr}, tl.load(x_ptr + (t * 4 + k) * 4096 + offs))
        w.commit(t)'''


NAMED = read_back_loop("dst", "        dst = tle.gpu.local_ptr(slot.tile)\n")
INLINE = read_back_loop("tle.gpu.local_ptr(slot.tile)")
HELPER = read_back_loop("tile_ptr(slot)")
TILE_PTR = "\n\ndef tile_ptr(slot):\n    return tle.gpu.local_ptr(slot.tile)\n\n"

GATHER_TWICE = '''    for t in range(N):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + t * 4096 + offs))
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(y_ptr + t * 4096 + offs))
        w.commit(t)'''

LOOP_GATHERS = '''    for t in range(N):
        slot = w.acquire(t)
        for k in range(2):
            tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + (t * 2 + k) * 4096 + offs))
        w.commit(t)'''

TWO_WINDOWS = '''    for t in range(N):
        a = w.acquire(2 * t)
        b = w.acquire(2 * t + 1)
        tl.store(tle.gpu.local_ptr(a.tile), tl.load(x_ptr + (2 * t) * 4096 + offs))
        tl.store(tle.gpu.local_ptr(b.tile), tl.load(x_ptr + (2 * t + 1) * 4096 + offs))
        w.commit(2 * t)
        w.commit(2 * t + 1)'''

POSITIONAL = '''    for t in range(N):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + t * 4096 + offs))
        w.commit(t)'''

KEYWORDS = '''    for t in range(N):
        slot = w.acquire(t)
        tl.store(value=tl.load(pointer=x_ptr + t * 4096 + offs),
                 pointer=tle.gpu.local_ptr(slot.tile))
        w.commit(t)'''

WAIT = ("async_copy.commit_group()", "async_copy.wait_group(0)")


def _write(tmp_path, body: str, helpers: str = "", reads: str = "N", name: str = "ring.py"):
    path = tmp_path / name
    path.write_text(KERNEL.replace("HELPERS", helpers).replace("BODY", body)
                    .replace("READS", reads))
    return path


def _gluon(path) -> str:
    src = gluon_source((str(path), "ring")).source
    return src[src.index("\n") + 1:]  # (the header names the file)


def _producer(src: str) -> str:
    start = src.index("def produce(")
    return src[start:src.index("@gluon.jit", start)]


def _lines_with(text: str, needle: str) -> list[int]:
    return [i for i, ln in enumerate(text.splitlines()) if needle in ln]


@pytest.mark.parametrize("body,helpers", [(NAMED, ""), (HELPER, TILE_PTR), (INLINE, "")],
                         ids=["named", "helper", "inline"])
def test_a_read_back_in_a_loop_waits_however_the_pointer_is_spelled(tmp_path, body, helpers):
    prod = _producer(_gluon(_write(tmp_path, body, helpers)))
    lines = prod.splitlines()
    read = _lines_with(prod, ".load(L")[0]
    # the read under `if k > 0` waits, at its own indentation, for the previous iteration's copy
    assert lines[read - 2].strip() == WAIT[0] and lines[read - 1].strip().startswith(WAIT[1]), prod
    assert lines[read - 1].startswith(" " * 16), prod
    gather = _lines_with(prod, "async_copy_global_to_shared")
    assert len(gather) == 1 and read < gather[0], prod


def test_the_named_pointer_lowers_as_the_inline_one(tmp_path):
    named = _gluon(_write(tmp_path, NAMED, name="named.py"))
    inline = _gluon(_write(tmp_path, INLINE, name="inline.py"))
    assert named == inline
    assert "#<cp.async wait" not in named  # no placeholder is left


def _first(lines, pattern, after=0):
    return next(i for i in range(after, len(lines)) if re.search(pattern, lines[i]))


def test_the_ptx_of_the_named_pointer_waits_before_the_read(tmp_path):
    """sm_90a: between each group of copies and the next shared-memory load of the tile, a
    cp.async.wait_group (the copies of iteration k-1 land before iteration k reads them)."""
    from tle_compiler.lowering import compile_kernel

    ptx = compile_kernel((str(_write(tmp_path, NAMED)), "ring"), SIGNATURE).asm["ptx"]
    lines = ptx.splitlines()
    cp = _first(lines, r"cp\.async\.cg\.shared\.global")
    load = _first(lines, r"ld\.shared", cp)
    assert any(re.search(r"cp\.async\.wait_group\s+0", ln) for ln in lines[cp:load]), \
        "\n".join(lines[cp:load + 1])


def test_two_gathers_into_one_window_are_ordered(tmp_path):
    prod = _producer(_gluon(_write(tmp_path, GATHER_TWICE)))
    first, second = _lines_with(prod, "async_copy_global_to_shared")
    commit, wait = _lines_with(prod, WAIT[0]), _lines_with(prod, WAIT[1])
    assert len(commit) == len(wait) == 1, prod
    assert first < commit[0] < wait[0] < second, prod


def test_gathers_of_one_window_in_a_loop_are_ordered(tmp_path):
    """The gather of iteration k waits for iteration k-1's (the back-edge)."""
    prod = _producer(_gluon(_write(tmp_path, LOOP_GATHERS)))
    lines = prod.splitlines()
    gather = _lines_with(prod, "async_copy_global_to_shared")
    assert len(gather) == 1, prod
    assert lines[gather[0] - 1].strip().startswith(WAIT[1]), prod
    assert lines[gather[0] - 2].strip() == WAIT[0], prod


def test_the_ptx_of_two_gathers_waits_between_them(tmp_path):
    from tle_compiler.lowering import compile_kernel

    ptx = compile_kernel((str(_write(tmp_path, GATHER_TWICE)), "ring"), SIGNATURE).asm["ptx"]
    lines = ptx.splitlines()
    copies = [i for i, ln in enumerate(lines) if re.search(r"cp\.async\.cg\.shared\.global", ln)]
    assert len(copies) == 8, ptx  # two tiles of 64x64 bf16, four 16-byte copies per thread each
    wait = _first(lines, r"cp\.async\.wait_group\s+0", copies[3])
    assert copies[3] < wait < copies[4]


@pytest.mark.parametrize("body,reads", [(POSITIONAL, "N"), (TWO_WINDOWS, "2 * N")],
                         ids=["one-window-per-iteration", "two-windows-held"])
def test_gathers_into_other_windows_of_the_ring_are_not_waited_for(tmp_path, body, reads):
    """The pipelined producer: each window's gather is a different slot; its commit's
    per-thread arrive tracks the copy."""
    prod = _producer(_gluon(_write(tmp_path, body, reads=reads)))
    assert len(_lines_with(prod, "async_copy_global_to_shared")) == body.count("tl.store("), prod
    assert "wait_group" not in prod and "commit_group" not in prod, prod


def test_keyword_store_and_load_lower_as_the_positional_ones(tmp_path):
    kw = _gluon(_write(tmp_path, KEYWORDS, name="kw.py"))
    pos = _gluon(_write(tmp_path, POSITIONAL, name="pos.py"))
    assert kw == pos
    assert "async_copy_global_to_shared" in kw


def test_a_keyword_global_store_lowers(tmp_path):
    path = _write(tmp_path, POSITIONAL)
    text = path.read_text().replace("tl.store(y_ptr + t * 4096 + offs, v)",
                                    "tl.store(pointer=y_ptr + t * 4096 + offs, value=v)")
    path.write_text(text)
    src = _gluon(path)
    assert re.search(r"gl\.store\(\(\(y_ptr \+ \(t \* 4096\)\) \+ offs\), ", src), src


def test_a_store_without_its_value_is_an_error_at_its_line(tmp_path):
    path = _write(tmp_path, POSITIONAL)
    text = path.read_text().replace("tl.store(y_ptr + t * 4096 + offs, v)",
                                    "tl.store(pointer=y_ptr + t * 4096 + offs)")
    path.write_text(text)
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if "pointer=y_ptr" in ln)
    with pytest.raises(TleError) as e:
        gluon_source((str(path), "ring"))
    assert f":{line}" in str(e.value) or getattr(e.value.loc, "line", None) == line, str(e.value)
