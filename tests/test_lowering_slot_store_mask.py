"""A masked store into shared memory (``tl.store(tle.gpu.local_ptr(slot.f), v, mask=m)``) is refused.

The lowering spelled such a store without its mask: a cp.async gather copied every row (the
elements the source leaves alone were overwritten, from global addresses the source never read)
and a register store wrote the whole tile. Neither form can skip elements (a gather's mask
zero-fills), and the verifier counts the store as writing the whole field, which is what lets a
reader read it (rule 7: no read of an unwritten field). So the lowering refuses it at its line,
naming the way to write it: mask the value (``tl.where``) or the gathering load. A mask given
positionally (``tl.store(p, v, m)``) is the same mask; for global memory it is now kept, where it
was dropped too.

The verifier now counts a masked store as a write that may not run (it fills nothing, rule 7): a
kernel whose only fill of the field is masked is rejected before the lowering, with
``unwritten-field`` at the reader's load. The lowering's refusal was reached where a whole store
fills the field first and a masked one follows in the same window, a kernel tle-dump verified:
since adversarial round 26 the frontend refuses every masked store into shared memory where the
kernel is read, in the lowering's words (tests/test_adversarial_verdicts_26.py).
"""

from __future__ import annotations

import pytest

from tle_compiler.cli.dump import main
from tle_compiler.diagnostics import TleError
from tle_compiler.lowering.compile import gluon_source

KERNEL = '''
import triton.language as tl
import tle_compiler as tle


@tle.jit(num_warps=4)
def ring(x_ptr, y_ptr, N):
    a = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (a, x_ptr, N)), (consume, (a, y_ptr, N))], [4], [232])


def produce(a, x_ptr, N):
    rows = tl.arange(0, 64)[:, None]
    offs = rows * 64 + tl.arange(0, 64)[None, :]
    w = a.writer()
    for t in range(N):
        s = w.acquire(t)
        SLOT_WRITE
        w.commit(t)


def consume(a, y_ptr, N):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    r = a.reader()
    acc = tl.zeros([64, 64], tl.float32)
    for t in range(N):
        x = r.wait(t)
        acc += tl.load(tle.gpu.local_ptr(x.slot.tile))
        r.release(t)
    RESULT_WRITE


DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"},
                  "constexprs": {}, "num_warps": 4, "grid": (1,)}
'''

GATHER = "tl.load(x_ptr + t * 4096 + offs)"
MASKED = {
    "gather": f"tl.store(tle.gpu.local_ptr(s.tile), {GATHER}, mask=rows < 32)",
    "register": f"tl.store(tle.gpu.local_ptr(s.tile), {GATHER} * 2.0, mask=rows < 32)",
    "positional": f"tl.store(tle.gpu.local_ptr(s.tile), {GATHER}, rows < 32)",
}
#: a whole fill of the field before the masked store, so that the protocol is verified
WHOLE_FIRST = "tl.store(tle.gpu.local_ptr(s.tile), tl.zeros([64, 64], tl.float32))\n        "
MESSAGE = "tl.store into shared memory (tle.gpu.local_ptr) with a `mask` is not supported"


def _write(tmp_path, store: str, global_store: str = "tl.store(y_ptr + offs, acc)"):
    src = KERNEL.replace("SLOT_WRITE", store).replace("RESULT_WRITE", global_store)
    path = tmp_path / "slot_mask.py"
    path.write_text(src)
    line = next(i for i, ln in enumerate(src.splitlines(), 1)
                if "local_ptr(s.tile)" in ln and "tl.zeros" not in ln)
    return path, line


@pytest.mark.parametrize("form", sorted(MASKED))
def test_a_masked_store_into_a_slot_is_refused_at_its_line(tmp_path, form):
    path, line = _write(tmp_path, WHOLE_FIRST + MASKED[form])
    with pytest.raises(TleError, match="mask the stored value instead") as e:
        gluon_source((str(path), "ring"))
    assert MESSAGE in str(e.value)
    assert e.value.loc.line == line


@pytest.mark.parametrize("stage", ["--gluon", "--ttgir"])
def test_tle_dump_exits_1_with_the_message(tmp_path, capsys, stage):
    path, line = _write(tmp_path, WHOLE_FIRST + MASKED["gather"])
    code = main([stage, str(path)])
    err = capsys.readouterr().err
    assert code == 1, err
    # (refused where the kernel is read since adversarial round 26: tle-dump verified it)
    assert f"slot_mask.py:{line}: error: " in err and MESSAGE in err
    assert main(["-q", str(path)]) == 1


@pytest.mark.parametrize("form", sorted(MASKED))
def test_a_masked_store_alone_is_refused_too(tmp_path, form):
    """(It was an unwritten field for the verifier, a write that may not run; since adversarial
    round 26 the store itself is refused where the kernel is read, as the lowering refuses it.)"""
    path, _ = _write(tmp_path, MASKED[form])
    with pytest.raises(TleError, match="mask the stored value instead") as e:
        gluon_source((str(path), "ring"))
    assert MESSAGE in str(e.value)


def test_masking_the_value_instead_lowers(tmp_path):
    """The suggested form: the gathering load's own mask (cp.async zero-fills) writes every
    element; it lowers to a masked cp.async gather."""
    path, _ = _write(tmp_path, f"tl.store(tle.gpu.local_ptr(s.tile), "
                               f"tl.load(x_ptr + t * 4096 + offs, mask=rows < 32, other=0.0))")
    src = gluon_source((str(path), "ring")).source
    gather = next(ln for ln in src.splitlines() if "async_copy_global_to_shared(" in ln)
    assert "mask=" in gather, gather


def test_a_positional_mask_of_a_global_store_and_load_is_kept(tmp_path):
    """``tl.store(p, v, m)`` / ``tl.load(p, m, x)``: the positional mask and other are Triton's
    ``mask=`` / ``other=``, not dropped."""
    path, _ = _write(tmp_path, "tl.store(tle.gpu.local_ptr(s.tile), "
                               "tl.load(x_ptr + t * 4096 + offs, rows < 32, 5.0) * 2.0)",
                     "tl.store(y_ptr + offs, acc, offs < 100)")
    src = gluon_source((str(path), "ring")).source
    load = next(ln for ln in src.splitlines() if "gl.load(" in ln)
    assert "mask=" in load and "other=5.0" in load, load
    store = next(ln for ln in src.splitlines() if "gl.store(" in ln)
    assert "mask=(offs < 100)" in store, store
