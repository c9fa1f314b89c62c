"""``tl.trans(x, *dims)`` of a register tensor: dims that are no permutation of x's axes are
refused where the kernel is read, by the lowering's own rule (frontend/partition_rules.py
``trans_dims_refusal``, used by frontend/protocol.py and lowering/more_ops.transpose), so
tle-dump and ``--gluon`` agree.

Wrong before: ``tl.trans(x, 0, 0)`` of a 2-D tile (or three axes for two, or an axis twice) was
verified by tle-dump, then refused by --gluon (and by Triton: "permutation"). Valid dims (none:
the last two axes swapped; ``1, 0``; the tuple ``(1, 0)``) stay verified and lower to
``gl.permute``.
"""

from __future__ import annotations

import pytest

from tle_compiler.cli.dump import main as tle_dump

KERNEL = '''
import triton.language as tl
import tle_compiler as tle


@tle.jit
def k(x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, y_ptr, N))],
                            [4], [232])


def produce(kv, x_ptr, N):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    w = kv.writer()
    for p in range(N):
        slot = w.acquire(p)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.trans(tl.load(x_ptr + p * 4096 + offs)DIMS))
        w.commit(p)


def consume(kv, y_ptr, N):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    r = kv.reader()
    for p in range(N):
        res = r.wait(p)
        tl.store(y_ptr + p * 4096 + offs, tl.load(tle.gpu.local_ptr(res.slot.tile)))
        r.release(p)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"}}
'''

VALID = {"none": "", "1-0": ", 1, 0", "tuple": ", (1, 0)"}
INVALID = {"0-0": ", 0, 0", "tuple-0-0": ", (0, 0)", "three-axes": ", 0, 1, 2", "1-1": ", 1, 1",
           "one-axis": ", 0"}


def dump(tmp_path, capsys, dims: str, *argv: str):
    path = tmp_path / "kernel.py"
    path.write_text(KERNEL.replace("DIMS", dims))
    code = tle_dump([*argv, "-q", str(path)])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("dims", list(INVALID.values()), ids=list(INVALID))
def test_dims_no_permutation_of_the_axes_are_refused_by_both(tmp_path, capsys, dims):
    code, _, err = dump(tmp_path, capsys, dims)
    assert code == 1 and "verified" not in err, err
    assert "dims must be a permutation of its 2 axes" in err, err
    code, _, err = dump(tmp_path, capsys, dims, "--gluon")
    assert code == 1 and "permutation" in err, err


@pytest.mark.parametrize("dims", list(VALID.values()), ids=list(VALID))
def test_a_permutation_is_verified_and_lowered(tmp_path, capsys, dims):
    code, _, err = dump(tmp_path, capsys, dims)
    assert code == 0 and "verified" in err, err
    code, out, err = dump(tmp_path, capsys, dims, "--gluon")
    assert code == 0 and "gl.permute(" in out and "(1, 0)" in out, err
