"""Rule 7 (docs/semantics.md): a store that may write only part of a slot field fills nothing.
A masked store, a store through the slot pointer plus an offset, and an atomic on the field were
each counted as writing the whole field, so a reader's load of elements nothing wrote was
verified; each is now a write that may not run (``maywrite``), and the read is
``unwritten-field``. An unmasked store, and the pointer ``+ 0``, still fill the field; a partial
store followed by a whole one in the same window is filled by the whole one. (The store through
the pointer plus an offset is refused where the kernel is read since: the lowering addresses
shared memory as whole buffers and refused it, while a whole store after it was verified;
tests/test_adversarial_verdicts_20.py; so are the masked store and the atomic, since
adversarial round 26: neither form of the lowered slot store takes a mask, and Gluon has atomics
on global pointers only, tests/test_adversarial_verdicts_26.py. The rule stays for the stores
the lowering takes, through a pointer `tl.where` chose per element.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

KERNEL = '''
import triton.language as tl
import tle_compiler as tle


@tle.jit(num_warps=4)
def k(x_ptr, out_ptr, N):
    tle.assume(N >= 0)
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(prod, (p, x_ptr, N)), (cons, (p, out_ptr, N))], [4], [232])


def prod(p, x_ptr, N):
    offs = tl.arange(0, 64)
    w = p.writer()
    for i in range(N):
        s = w.acquire(i)
FILL
        w.commit(i)


def cons(p, out_ptr, N):
    offs = tl.arange(0, 64)
    r = p.reader()
    acc = tl.zeros([64], tl.float32)
    for i in range(N):
        res = r.wait(i)
        acc += tl.load(tle.gpu.local_ptr(res.slot.t))
        r.release(i)
    tl.store(out_ptr + offs, acc)
'''
WHOLE = "        tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + i * 64 + offs))"
PARTIAL = {
    "mask_kw": "        tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + i * 64 + offs), mask=offs < 32)",
    "mask_positional": "        tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + i * 64 + offs), offs < 32)",
    "atomic": "        tl.atomic_add(tle.gpu.local_ptr(s.t), tl.load(x_ptr + i * 64 + offs))",
}
#: what tle-dump says of each since adversarial round 26: the lowering's refusal
REFUSAL = {"mask_kw": "with a `mask` is not supported", "mask_positional": "with a `mask` is not "
           "supported", "atomic": "atomics on global pointers"}


def _verdict(tmp_path: Path, fill: str) -> subprocess.CompletedProcess:
    path = tmp_path / "k.py"
    path.write_text(KERNEL.replace("FILL", fill))
    return subprocess.run([sys.executable, "-m", "tle_compiler.cli.dump", "-q", str(path)],
                          capture_output=True, text=True)


@pytest.mark.parametrize("kind", sorted(PARTIAL))
def test_a_partial_store_is_refused(tmp_path, kind):
    """Alone it filled nothing (unwritten-field), after a whole store or before one it was
    verified, and --gluon refused it: refused where the kernel is read (adversarial round 26,
    tests/test_adversarial_verdicts_26.py)."""
    for fill in (PARTIAL[kind], PARTIAL[kind] + "\n" + WHOLE, WHOLE + "\n" + PARTIAL[kind]):
        out = _verdict(tmp_path, fill)
        assert out.returncode == 1, out.stderr
        assert "[unsupported-expression]" in out.stderr and REFUSAL[kind] in out.stderr


@pytest.mark.parametrize("fill", [WHOLE, WHOLE.replace("local_ptr(s.t)", "local_ptr(s.t) + 0")])
def test_a_whole_store_fills_it(tmp_path, fill):
    out = _verdict(tmp_path, fill)
    assert out.returncode == 0, out.stderr


OFFSET = ("        tl.store(tle.gpu.local_ptr(s.t) + tl.arange(0, 32),\n"
          "                 tl.load(x_ptr + i * 64 + tl.arange(0, 32)))")


@pytest.mark.parametrize("fill", [OFFSET, OFFSET + "\n" + WHOLE])
def test_a_store_through_an_offset_slot_pointer_is_refused(tmp_path, fill):
    """Alone it filled nothing (unwritten-field); after it a whole store made the kernel
    verified, which --gluon then refused (no pointer arithmetic on shared memory): refused
    where the kernel is read, in the lowering's words."""
    out = _verdict(tmp_path, fill)
    assert out.returncode == 1, out.stderr
    assert "[unsupported-expression]" in out.stderr and "on a shared-memory pointer" in out.stderr
