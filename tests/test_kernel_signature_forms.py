"""A @tle.jit kernel's arguments are plain positional ones: `*args`, `**kwargs` and keyword-only
arguments are refused at the kernel's line (check unsupported-signature). They were verified,
then the lowering dropped them or took them by position, so the function launched was not the
one verified."""

from __future__ import annotations

import textwrap

import pytest

from tle_compiler.cli.dump import main

BODY = '''
import triton.language as tl

import tle_compiler as tle


@tle.jit
def k({params}):
    ring = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 16, 16], tl.float32))
    tle.gpu.warp_specialize([(prod, (ring, N)), (cons, (ring, N))], [4], [232])


def prod(ring, N):
    w = ring.writer()
    for t in range(N):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.zeros([16, 16], tl.float32))
        w.commit(t)


def cons(ring, N):
    r = ring.reader()
    for t in range(N):
        res = r.wait(t)
        r.release(t)
'''


@pytest.mark.parametrize("params,named", [("x_ptr, *, N", "keyword-only `N`"),
                                          ("x_ptr, N, *rest", "*rest"),
                                          ("x_ptr, N, **extra", "**extra")])
def test_star_and_keyword_only_arguments_are_refused(tmp_path, capsys, params, named):
    path = tmp_path / "k.py"
    path.write_text(textwrap.dedent(BODY.format(params=params)))
    code = main(["-q", str(path)])
    err = capsys.readouterr().err
    assert code == 1, err
    assert f"k.py:8: error: kernel 'k': {named}" in err and "[unsupported-signature]" in err


def test_plain_positional_arguments_are_verified(tmp_path, capsys):
    path = tmp_path / "k.py"
    path.write_text(textwrap.dedent(BODY.format(params="x_ptr, N")))
    code = main(["-q", str(path)])
    assert code in (0, 3), capsys.readouterr().err  # every integer N: proved or bounded
