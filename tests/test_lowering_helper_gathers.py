"""A cp.async gather written in a helper: ``tl.store(tle.gpu.local_ptr(slot.f), tl.load(ptrs))``
inside a function a partition calls is lowered as the same line in the partition is, a cp.async
copy into the slot (lowering/translate.py ``_gather_of_the_next_store``).

Wrong before: the frontend builds an inlined helper's statements in sequential form (each call's
value bound to a temporary, in Python's order), so the line reached the lowering as ``_t8 =
tl.load(ptrs)`` then ``tl.store(_t7, _t8)``, which is not the gather's form: the slot was filled
by a register load and a store (a producer factored into helpers lost its asynchronous copies and
held each tile in registers). Now a load bound to a name read once, by a whole store in the very
next statement, is read at that store (nothing runs between them: the same program). A load
with a statement between it and the store (a producer's load before the acquire, in flight during
the wait for a free slot) or whose name is read again stays a register load where it is written.
"""

from __future__ import annotations

import re

import pytest

pytest.importorskip("triton.experimental.gluon")

from tle_compiler.frontend import read_kernels  # noqa: E402
from tle_compiler.ir.kernel_text import print_kernel  # noqa: E402
from tle_compiler.lowering.compile import gluon_source  # noqa: E402

KERNEL = '''
import triton.language as tl
import tle_compiler as tle


@tle.jit
def k(x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64, 64], tl.bfloat16))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, y_ptr, N))],
                            [4], [232])


def put(w, x_ptr, p):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    slot = w.acquire(p)
    tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + p * 4096 + offs))
    w.commit(p)


def bumped(x_ptr, p):
    # a statement that calls a helper (sequential: Python's order around the helper's body)
    return tl.load(x_ptr + p * 4096 + one_more(p) + tl.arange(0, 64)[:, None] * 64
                   + tl.arange(0, 64)[None, :])


def one_more(p):
    return p + 1


def produce(kv, x_ptr, N):
    w = kv.writer()
    for p in range(N):
BODY


def consume(kv, y_ptr, N):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    r = kv.reader()
    for p in range(N):
        res = r.wait(p)
        tl.store(y_ptr + p * 4096 + offs, tl.load(tle.gpu.local_ptr(res.slot.tile)))
        r.release(p)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*bf16", "y_ptr": "*bf16", "N": "i32"}}
'''

INLINE = '''        offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
        slot = w.acquire(p)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + p * 4096 + offs))
        w.commit(p)'''
HELPER = "        put(w, x_ptr, p)"


def _file(tmp_path, body: str):
    path = tmp_path / "kernel.py"
    path.write_text(KERNEL.replace("BODY", body))
    return path


def _produce(src: str) -> str:
    return src.split("def produce(", 1)[1].split("@gluon.jit", 1)[0]


@pytest.mark.parametrize("body", [INLINE, HELPER], ids=["inline", "helper"])
def test_a_slot_gathered_in_a_helper_is_a_cp_async_copy_as_inline(tmp_path, body):
    produce = _produce(gluon_source((str(_file(tmp_path, body)), "k")).source)
    assert "async_copy.async_copy_global_to_shared(kv_tile.index(" in produce, produce
    assert ".store(" not in produce, produce  # no register load and store of the tile


def test_the_helper_reaches_the_lowering_in_sequential_form(tmp_path):
    """What the lowering sees: the load bound to a temporary, the store of it next."""
    info, = read_kernels(str(_file(tmp_path, HELPER)), name="k")
    text = print_kernel(info.kir)
    load = re.search(r"(_put\d+__t\d+) = tl\.load\(x_ptr", text)
    assert load is not None, text
    assert re.search(rf"= tl\.store\(_put\d+__t\d+, {load.group(1)}\)", text), text


def test_a_load_read_again_stays_in_registers(tmp_path):
    """The name is read twice (stored into the slot and into y): not deferred to the store."""
    body = ("        slot = w.acquire(p)\n"
            "        t = tl.load(x_ptr + p * 4096 + tl.arange(0, 64)[:, None] * 64\n"
            "                    + tl.arange(0, 64)[None, :])\n"
            "        tl.store(tle.gpu.local_ptr(slot.tile), t)\n"
            "        tl.store(x_ptr + p * 4096 + tl.arange(0, 64)[:, None] * 64\n"
            "                 + tl.arange(0, 64)[None, :], t)\n"
            "        w.commit(p)")
    produce = _produce(gluon_source((str(_file(tmp_path, body)), "k")).source)
    assert "async_copy" not in produce and "kv_tile.index(" in produce, produce


def test_a_helper_value_stored_by_the_next_statement_is_gathered_too(tmp_path):
    """The partition's statement calls ``bumped``: its load is bound to a temporary where the
    helper's body ends, and the store of it is the next statement, so nothing runs between them:
    a gather as well."""
    body = ("        slot = w.acquire(p)\n"
            "        tl.store(tle.gpu.local_ptr(slot.tile), bumped(x_ptr, p))\n"
            "        w.commit(p)")
    path = _file(tmp_path, body)
    info, = read_kernels(str(path), name="k")
    assert re.search(r"_bumped\d+__t\d+ = tl\.load\(", print_kernel(info.kir))
    produce = _produce(gluon_source((str(path), "k")).source)
    assert "async_copy.async_copy_global_to_shared(kv_tile.index(" in produce, produce


def test_a_load_issued_before_the_acquire_stays_there(tmp_path):
    """``t = tl.load(...)``, then the acquire, then the store: the load is in flight during the
    wait for a free slot (the producers' prefetch); reading it at the store would serialise
    them, so it stays a register load where it is written."""
    body = ("        t = tl.load(x_ptr + p * 4096 + tl.arange(0, 64)[:, None] * 64\n"
            "                    + tl.arange(0, 64)[None, :])\n"
            "        slot = w.acquire(p)\n"
            "        tl.store(tle.gpu.local_ptr(slot.tile), t)\n"
            "        w.commit(p)")
    produce = _produce(gluon_source((str(_file(tmp_path, body)), "k")).source)
    assert "async_copy" not in produce, produce
    assert produce.index("gl.load(") < produce.index("mbarrier.wait(kv_empty"), produce
