"""Pipes declared in a helper function that the kernel body calls: the same pipes, the same
verdict and the same generated Gluon as when the kernel body declares them itself (kernels that
share a dataflow share one declaration). A helper called from a partition, or called under an if
or in a loop of the kernel body, is refused as a pipe declared there would be."""

from __future__ import annotations

import textwrap

import pytest

from tle_compiler.cli.dump import main

INLINE = textwrap.dedent('''
    import triton.language as tl

    import tle_compiler as tle


    @tle.jit(num_warps=4)
    def copy_kernel(x_ptr, y_ptr, NT):
        CHANNEL
        tle.gpu.warp_specialize([(fill, (ch, x_ptr, NT)), (drain, (ch, y_ptr, NT))], [4], [232])


    def fill(ch, x_ptr, NT):
        w = ch.writer()
        offs = tl.arange(0, 64)
        for t in range(NT):
            slot = w.acquire(t)
            tl.store(tle.gpu.local_ptr(slot.x), tl.load(x_ptr + t * 64 + offs))
            w.commit(t)


    def drain(ch, y_ptr, NT):
        DRAIN_EXTRA
        rd = ch.reader()
        offs = tl.arange(0, 64)
        for t in range(NT):
            res = rd.wait(t)
            tl.store(y_ptr + t * 64 + offs, tl.load(tle.gpu.local_ptr(res.slot.x)))
            rd.release(t)


    def channel():
        buf = tle.gpu.alloc([2, 64], tl.float32)
        ch = tle.pipe(capacity=2, x=buf)
        return ch


    DEFAULT_CONFIG = {
        "signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "NT": "i32"},
        "constexprs": {},
        "num_warps": 4,
        "grid": (1,),
    }
''')


def source(channel: str, drain_extra: str = "") -> str:
    return INLINE.replace("CHANNEL", channel).replace("DRAIN_EXTRA", drain_extra or "pass")


def dump(capsys, path, *flags):
    code = main([*flags, str(path)])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_helper_declares_the_pipes_the_body_would(tmp_path, capsys):
    inline = tmp_path / "inline.py"
    inline.write_text(source("ch = tle.pipe(capacity=2, x=tle.gpu.alloc([2, 64], tl.float32))"))
    helper = tmp_path / "helper.py"
    helper.write_text(source("ch = channel()"))
    results = []
    for path in (inline, helper):
        code, out, err = dump(capsys, path, "--no-locations")
        assert code == 0 and "verified for every value of NT" in err, err
        results.append(out)
    assert results[0] == results[1]  # the same Pipe IR, barriers and verdict
    gluon = []
    for path in (inline, helper):
        code, out, err = dump(capsys, path, "--gluon")
        assert code == 0, err
        gluon.append(out.splitlines()[1:])  # line 0 names the source file
    assert gluon[0] == gluon[1]


@pytest.mark.parametrize("channel, extra, message", [
    ("ch = channel()", "other = channel()", "not inside a partition"),
    ("if NT > 0:\n        ch = channel()", "", "top level of the kernel body"),
    ("for i in range(1):\n        ch = channel()", "", "top level of the kernel body"),
    ("ch = channel()\n    ch2 = channel()", "", "declared twice"),
], ids=["from a partition", "under an if", "in a loop", "twice"])
def test_where_a_helper_may_not_declare_pipes(tmp_path, capsys, channel, extra, message):
    path = tmp_path / "bad.py"
    path.write_text(source(channel, extra))
    code, _, err = dump(capsys, path, "-q")
    assert code != 0 and message in err and "[bad-pipe]" in err, err
