"""A signature typing a param of the verified protocol ``i64`` is refused by ``compile_kernel``.

The verifier computes the protocol's params in i32 (what a launch passes for a Python int that
fits) and covers only the values at which every loop bound, condition and index stays inside
i32; there i32's modular sums equal the integers' whatever their order. Typed i64, an argument
makes Triton compute the i32 part of an expression first and widen it beside the i64 operand, so
two spellings of one verified condition, ``N * 3 + B`` and ``(N + B) + N * 2``, differ at N =
715827883, B = -2147483647 (a covered point: both are 2 over the integers): the writer skips its
commit while the reader waits for it. tle_compiler.lowering.compile.check_i64_args refuses such a
signature; arguments the protocol does not read (a stride) may be i64.
"""

from __future__ import annotations

import contextlib
import io

import pytest

pytest.importorskip("triton.experimental.gluon")

from tle_compiler.diagnostics import TleError, TleVerificationWarning  # noqa: E402

# the kernel is proved only for the values given (two free params): lowered with a warning
pytestmark = pytest.mark.filterwarnings(f"ignore::{TleVerificationWarning.__module__}."
                                        f"{TleVerificationWarning.__name__}")

KERNEL = '''
import triton.language as tl
import tle_compiler as tle


@tle.jit(num_warps=4)
def mixed(x_ptr, y_ptr, N, B, stride):
    p = tle.pipe(capacity=1, t=tle.gpu.alloc([1, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (p, x_ptr, N, B, stride)), (consume, (p, y_ptr, N, B))],
                            [4], [232])


def produce(p, x_ptr, N, B, stride):
    w = p.writer()
    if N * 3 + B == 2:
        s = w.acquire(0)
        tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + stride + tl.arange(0, 64)))
        w.commit(0)


def consume(p, y_ptr, N, B):
    r = p.reader()
    if (N + B) + N * 2 == 2:
        res = r.wait(0)
        tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.t)))
        r.release(0)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32", "B": "i32",
                                "stride": "i32"},
                  "constexprs": {}, "num_warps": 4, "grid": (1,)}
'''

# a point the verdict covers (every value, index and condition operand inside i32) at which an
# i32 part of `N * 3 + B` leaves i32
AT = {"N": 715827883, "B": -2147483647}


def _sig(**types) -> dict:
    return {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32", "B": "i32", "stride": "i32", **types}


@pytest.fixture
def path(tmp_path):
    p = tmp_path / "mixed.py"
    p.write_text(KERNEL)
    return p


def test_the_point_is_verified(path):
    from tle_compiler.cli.dump import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        rc = main(["--param=N=715827883", "--param=B=-2147483647", str(path)])
    assert rc == 0 and "mixed: verified for N = 715827883, B = -2147483647" in out.getvalue(), \
        out.getvalue()


def test_the_i32_kernel_performs_the_verified_events_and_an_i64_one_would_not(path):
    """The generated Gluon run at the covered point: with B an i32 both partitions take their
    branch (the verified events); computed with B an i64, the writer skips its commit and the
    reader still waits, which hangs: what check_i64_args keeps from being compiled."""
    from tle_compiler.testing.gluon_trace import LoweredKernel

    args = {**AT, "stride": 0}
    i32 = LoweredKernel((str(path), "mixed"))
    params, problems = i32.check(args)
    assert params == AT and problems == []
    i64 = LoweredKernel((str(path), "mixed"), int64_args=["B"])
    _, problems = i64.check(args)
    assert any("produce" in p for p in problems), problems


@pytest.mark.parametrize("arg", ["N", "B"])
def test_compile_kernel_refuses_an_i64_protocol_param(path, arg):
    from tle_compiler.lowering import compile_kernel

    with pytest.raises(TleError) as e:
        compile_kernel((str(path), "mixed"), _sig(**{arg: "i64"}))
    assert e.value.check == "signature"
    assert (f"argument '{arg}' is typed i64 in the signature, but it is a param of the verified "
            f"pipe protocol") in str(e.value)
    assert f"type '{arg}' i32" in str(e.value)


def test_an_i64_argument_the_protocol_does_not_read_compiles(path):
    from tle_compiler.lowering import compile_kernel

    c = compile_kernel((str(path), "mixed"), _sig(stride="i64"))
    assert ".target sm_90a" in c.asm["ptx"]
    head = next(line for line in c.asm["ttgir"].splitlines() if "tt.func public @mixed" in line)
    assert "%stride: i64" in head and "%N: i32" in head and "%B: i32" in head, head


def test_a_derived_params_base_typed_i64_is_refused(tmp_path):
    """N only reaches the protocol through M = N // 64 (a base of a derived param)."""
    from tle_compiler.lowering import compile_kernel

    src = KERNEL.replace("if N * 3 + B == 2:", "if (N // 64) + B == 2:") \
                .replace("if (N + B) + N * 2 == 2:", "if B + N // 64 == 2:")
    p = tmp_path / "derived.py"
    p.write_text(src)
    with pytest.raises(TleError, match="argument 'N' is typed i64"):
        compile_kernel((str(p), "mixed"), _sig(N="i64"))


def test_tle_dump_refuses_an_i64_param_in_default_config(path, capsys):
    from tle_compiler.cli.dump import main

    path.write_text(KERNEL.replace('"B": "i32"', '"B": "i64"'))
    assert main(["-q", "--ttgir", str(path)]) == 1
    assert "argument 'B' is typed i64 in the signature" in capsys.readouterr().err


def test_the_bundled_i64_stride_is_no_protocol_param():
    """The FP8 sparse decode kernels type stride_blk i64 (a page stride in bytes): an address,
    not read by the protocol, so their signature stays valid."""
    from pathlib import Path

    from tle_compiler.lowering.compile import kernel_info_of, protocol_args
    from tle_compiler.lowering.dumping import default_config

    root = Path(__file__).resolve().parents[1]
    path = str(root / "tle_kernels" / "sparse_decode_split_fp8.py")
    config = default_config(path, "sparse_decode_split_fp8")
    assert config["signature"]["stride_blk"] == "i64"
    info = kernel_info_of((path, "sparse_decode_split_fp8"), config["constexprs"])
    assert "stride_blk" not in protocol_args(info)
    assert protocol_args(info)  # the check has params to look at


def test_a_launch_with_a_param_outside_i32_is_refused_at_its_compile(path):
    """A launch types a Python int outside i32 as i64 (runtime.arg_type): for a protocol param
    that value is outside what was verified, and the compile it asks for is refused as above
    (before, it was compiled and launched unverified); one inside i32 compiles and, on this
    machine, then finds no GPU."""
    import importlib.util

    torch = pytest.importorskip("torch")
    spec = importlib.util.spec_from_file_location("mixed_launch", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    x, y = torch.zeros(64), torch.zeros(64)
    with pytest.raises(TleError) as e:
        mod.mixed[(1,)](x, y, 2**31, 0, 0)
    assert e.value.check == "signature" and "argument 'N' is typed i64" in str(e.value)
    if not torch.cuda.is_available():
        with pytest.raises(TleError) as e:
            mod.mixed[(1,)](x, y, 1, -1, 2**40)  # an i64 stride is no param
        assert e.value.check == "no-gpu", str(e.value)
