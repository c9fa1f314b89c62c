"""A kernel argument typed i8/i16/u8/u16/u32/u64 in a signature (DEFAULT_CONFIG, or
compile_kernel's ``signature``) is refused: the verifier reads integer arguments as signed i32
(i64 where passed so), which is what a launch with a Python int runs, so a compiled kernel doing
unsigned or narrow arithmetic (``N - 1`` at N = 0 as u32 is 0xFFFFFFFF; ``N + 1`` at 127 as i8 is
-128) would perform events the verifier never checked: here a consumer waiting for an index the
producer does not commit, which hangs. i32 compiles; i64 only for an argument the protocol does not
read (tests/test_signature_i64_params.py)."""

from __future__ import annotations

import pytest

pytest.importorskip("triton.experimental.gluon")

from tle_compiler.cli.dump import main  # noqa: E402

KERNEL = '''
import triton.language as tl
import tle_compiler as tle


@tle.jit(num_warps=4)
def ring(x_ptr, y_ptr, N):
    a = tle.pipe(capacity=1, t=tle.gpu.alloc([1, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (a, x_ptr, N)), (consume, (a, y_ptr, N))], [4], [232])


def produce(a, x_ptr, N):
    w = a.writer()
    if N >= 1:
        s = w.acquire(0)
        tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + tl.arange(0, 64)))
        w.commit(0)


def consume(a, y_ptr, N):
    r = a.reader()
    if N - 1 >= 0:
        res = r.wait(0)
        tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.t)))
        r.release(0)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "TYPE"},
                  "constexprs": {}, "num_warps": 4, "grid": (1,)}
'''


def _file(tmp_path, t: str):
    p = tmp_path / f"ring_{t}.py"
    p.write_text(KERNEL.replace("TYPE", t))
    return p


@pytest.mark.parametrize("t", ["u32", "i8", "u64", "i16"])
def test_narrow_or_unsigned_integer_arguments_are_refused(tmp_path, capsys, t):
    """The protocol itself is fine for a signed N; the DEFAULT_CONFIG signature types N narrow or
    unsigned, so tle-dump rejects it as its compile does (cli/kernel_checks.py
    check_launch_signature), and the compile refuses it."""
    path = _file(tmp_path, t)
    message = f"argument 'N' is typed {t} in the signature; integer arguments must be i32 or i64"
    for args in (["-q"], ["-q", "--ttgir"]):
        code = main([*args, str(path)])
        err = capsys.readouterr().err
        assert code == 1, err
        assert message in err


def test_signed_32_bit_arguments_compile(tmp_path, capsys):
    assert main(["-q", "--ttgir", str(_file(tmp_path, "i32"))]) == 0, capsys.readouterr().err


def test_an_i64_protocol_param_is_refused(tmp_path, capsys):
    """N decides the protocol (`if N >= 1`): typed i64 it is refused too
    (tests/test_signature_i64_params.py says why)."""
    assert main(["-q", "--ttgir", str(_file(tmp_path, "i64"))]) == 1
    assert "argument 'N' is typed i64 in the signature" in capsys.readouterr().err
