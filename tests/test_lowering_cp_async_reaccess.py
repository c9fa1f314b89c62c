"""A writer that touches its slot again after gathering into it with cp.async waits for the copy.

`tl.store(local_ptr(slot.f), tl.load(ptrs))` becomes a cp.async gather, which lands in shared
memory asynchronously. The protocol lets the writer read or rewrite its own slot inside its
acquire..commit window, so before such an access the lowering commits the partition's copies as a
group and waits for them (translate.py, ``await_cp_async``); without that wait a read sees the
old bytes and a late copy can overwrite a later store. A gather nobody touches again costs
nothing: the commit's arrive tracks it as before.
"""

from __future__ import annotations

import re

import pytest

from tle_compiler.lowering.compile import gluon_source

KERNEL = '''
import triton.language as tl
import tle_compiler as tle


@tle.jit
def ring(x_ptr, y_ptr, N):
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64, 64], tl.bfloat16))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, y_ptr, N)), (consume, (kv, y_ptr, N))],
                            [4], [232])


def produce(kv, x_ptr, y_ptr, N):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    w = kv.writer()
    for t in range(N):
        slot = w.acquire(t)
BODY
        w.commit(t)


def consume(kv, y_ptr, N):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    r = kv.reader()
    for t in range(N):
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t)
        tl.store(y_ptr + (N + t) * 4096 + offs, v)
'''

SIGNATURE = {"x_ptr": "*bf16", "y_ptr": "*bf16", "N": "i32"}
GATHER = "tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + t * 4096 + offs))"
READ_BACK = "back = tl.load(tle.gpu.local_ptr(slot.tile))\ntl.store(y_ptr + t * 4096 + offs, back)"
OVERWRITE = "tl.store(tle.gpu.local_ptr(slot.tile), tl.zeros([64, 64], tl.bfloat16))"


def _indent(text: str, n: int) -> str:
    return "\n".join(" " * n + ln for ln in text.splitlines())


def _producer(tmp_path, body: str) -> str:
    path = tmp_path / "ring.py"
    path.write_text(KERNEL.replace("BODY", body))
    src = gluon_source((str(path), "ring")).source
    start = src.index("def produce(")
    return src[start:src.index("@gluon.jit", start)]


WAIT = ("async_copy.commit_group()", "async_copy.wait_group(0)")


def _order(text: str, *needles: str) -> list[int]:
    """Line numbers of the first line holding each needle, in the order given."""
    lines = text.splitlines()
    return [next(i for i, ln in enumerate(lines) if n in ln) for n in needles]


@pytest.mark.parametrize("access,marker", [(READ_BACK, ".load(L"), (OVERWRITE, ".store(gl.full")],
                         ids=["read-back", "overwrite"])
def test_a_later_access_waits_for_the_gather(tmp_path, access, marker):
    prod = _producer(tmp_path, _indent(GATHER, 8) + "\n" + _indent(access, 8))
    gather, commit, wait, use, arrive = _order(
        prod, "async_copy_global_to_shared", WAIT[0], WAIT[1], marker, "mbarrier_arrive(")
    assert gather < commit < wait < use < arrive, prod


def test_a_gather_touched_by_nobody_else_is_not_waited_for(tmp_path):
    prod = _producer(tmp_path, _indent(GATHER, 8))
    assert "async_copy_global_to_shared" in prod
    assert "wait_group" not in prod and "commit_group" not in prod, prod


def test_a_gather_under_an_if_is_waited_for_after_it(tmp_path):
    """Only one path gathered (the other stores the field: a read-back must follow a write in its
    window): the join keeps the copy as possibly in flight."""
    body = _indent(f"if t % 2 == 0:\n    {GATHER}\nelse:\n    {OVERWRITE}\n" + READ_BACK, 8)
    prod = _producer(tmp_path, body)
    lines = prod.splitlines()
    gather, use = _order(prod, "async_copy_global_to_shared", ".load(L")
    # the last wait before the read (the store's branch also waits, for the previous window's copy)
    wait = max(i for i, ln in enumerate(lines[:use]) if WAIT[1] in ln)
    assert gather < wait < use
    # the wait is after the `if`, at the read's indentation
    wait_line = lines[wait]
    assert wait_line.startswith(" " * 8 + "async_copy.wait_group"), prod


def test_a_gather_in_an_inner_loop_is_waited_for_in_the_body_and_after_it(tmp_path):
    """Inside the inner loop a store at the top of the body may meet the copy of the previous
    iteration (the back-edge); after the loop the read may meet the last one."""
    body = _indent(f"for j in range(2):\n    {OVERWRITE}\n    {GATHER}\n" + READ_BACK, 8)
    prod = _producer(tmp_path, body)
    lines = prod.splitlines()
    waits = [i for i, ln in enumerate(lines) if WAIT[1] in ln]
    store = next(i for i, ln in enumerate(lines) if ".store(gl.full" in ln)
    gather = next(i for i, ln in enumerate(lines) if "async_copy_global_to_shared" in ln)
    load = next(i for i, ln in enumerate(lines) if ".load(L" in ln)
    assert len(waits) == 2, prod
    assert waits[0] < store < gather < waits[1] < load, prod


def test_the_ptx_orders_the_copy_before_the_read(tmp_path):
    """Compiled for sm_90a: the copies, their commit and wait, a partition barrier, and only then
    the shared-memory loads of the read-back (Triton's barrier orders the other threads' copies)."""
    from tle_compiler.lowering import compile_kernel

    path = tmp_path / "ring.py"
    path.write_text(KERNEL.replace("BODY", _indent(GATHER, 8) + "\n" + _indent(READ_BACK, 8)))
    ptx = compile_kernel((str(path), "ring"), SIGNATURE).asm["ptx"]
    lines = ptx.splitlines()

    def first(pattern, after=0):
        return next(i for i in range(after, len(lines)) if re.search(pattern, lines[i]))

    cp = first(r"cp\.async\.cg\.shared\.global")
    commit = first(r"cp\.async\.commit_group", cp)
    wait = first(r"cp\.async\.wait_group\s+0", commit)
    bar = first(r"\bbar\.sync\b", wait)
    load = first(r"ld\.shared", cp)
    arrive = first(r"cp\.async\.mbarrier\.arrive", cp)
    assert cp < commit < wait < bar < load < arrive
    # every copy of the gather was issued before the wait
    assert all(not re.search(r"cp\.async\.cg", ln) for ln in lines[wait:arrive])
