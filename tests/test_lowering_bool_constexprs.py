"""A bool constexpr is lowered as the integer Triton reads it as (``if FLAG:`` with FLAG=True is
FLAG = 1), as ``tle-dump --param FLAG=True`` verifies it (tle_compiler/lowering/compile.py
kernel_info_of, codegen.fixed_constexprs).

Wrong before: the lowering left a bool constexpr out of the values it checks the protocol at
and reads the kernel specialised to. A kernel whose pipe events depend on FLAG, proved for
FLAG=True and for FLAG=False by ``tle-dump --param``, lowered with FLAG=True warned that its
protocol was not proved (the generic verdict, FLAG free); with FLAG=1 it did not. A kernel that
can be read only with FLAG bound (`if FLAG: K = N else: K = N + 3`, then a loop to K) was
refused with FLAG=True (not affine: the generic reading) and lowered with FLAG=1.
"""

from __future__ import annotations

import textwrap
import warnings

import pytest

from tle_compiler.cli.dump import main as tle_dump
from tle_compiler.diagnostics import TleError
from tle_compiler.lowering.compile import gluon_source

HEAD = '''
import triton.language as tl
import tle_compiler as tle


@tle.jit
def k(x_ptr, y_ptr, N, FLAG: tl.constexpr):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N, FLAG)), (consume, (kv, y_ptr, N))],
                            [4], [232])


def consume(kv, y_ptr, N):
    r = kv.reader()
    for p in range(N):
        res = r.wait(p)
        tl.store(y_ptr + p * 64 + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))
        r.release(p)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32",
                                "FLAG": "constexpr"},
                  "constexprs": {"FLAG": True}, "num_warps": 4}
'''

PUT = ("slot = w.acquire({i})\n"
       "tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + {i} * 64 + tl.arange(0, 64)))\n"
       "w.commit({i})\n")

# the events of the producer in two orders, each safe: FLAG is a param of the protocol
TWO_ORDERS = textwrap.indent(
    "w = kv.writer()\nfor p in range(N):\n    if FLAG:\n"
    + textwrap.indent(PUT.format(i="p"), " " * 8)
    + "    else:\n" + textwrap.indent(PUT.format(i="p").replace("64 +", "64 + 0 +"), " " * 8),
    " " * 4)
# safe for FLAG true only: FLAG false commits three slots no one reads
ONLY_TRUE = textwrap.indent(
    "w = kv.writer()\nif FLAG:\n    K = N\nelse:\n    K = N + 3\nfor p in range(K):\n"
    + textwrap.indent(PUT.format(i="p"), " " * 4), " " * 4)
# a loop to N under the flag and a loop to N + 3 otherwise (a bound the generic reading takes)
ONLY_TRUE_AFFINE = textwrap.indent(
    "w = kv.writer()\nfor p in range(N + 3 * (1 - FLAG)):\n"
    + textwrap.indent(PUT.format(i="p"), " " * 4), " " * 4)


def kernel_file(tmp_path, body: str):
    path = tmp_path / "kernel.py"
    path.write_text(HEAD + "\n\ndef produce(kv, x_ptr, N, FLAG: tl.constexpr):\n" + body)
    return path


def lower(path, value):
    """(the Gluon source, the warnings the lowering gave) for FLAG = ``value``."""
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        src = gluon_source((str(path), "k"), {"FLAG": value}).source
    return src, [str(w.message) for w in got]


def verdict(capsys, path, *argv):
    code = tle_dump([*argv, str(path)])
    out, err = capsys.readouterr()
    return code, err


@pytest.mark.parametrize("value", [True, False, 1, 0])
def test_a_flag_the_protocol_depends_on_lowers_without_a_warning(tmp_path, capsys, value):
    path = kernel_file(tmp_path, TWO_ORDERS)
    # generically: FLAG free, two params, so bounded; at each value: proved
    assert verdict(capsys, path)[0] == 3
    assert verdict(capsys, path, "--param", f"FLAG={value}")[0] == 0
    src, warned = lower(path, value)
    assert not warned, warned
    assert "mbarrier" in src


@pytest.mark.parametrize("body", [ONLY_TRUE, ONLY_TRUE_AFFINE], ids=["if-bound", "affine-bound"])
def test_a_flag_safe_one_way_lowers_that_way_only(tmp_path, capsys, body):
    path = kernel_file(tmp_path, body)
    assert verdict(capsys, path, "--param", "FLAG=True")[0] == 0
    assert verdict(capsys, path, "--param", "FLAG=False")[0] == 1
    for value in (True, 1):
        src, warned = lower(path, value)
        assert not warned, warned
    for value in (False, 0):
        with pytest.raises(TleError, match="rejected, nothing is lowered"):
            lower(path, value)
