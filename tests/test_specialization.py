"""Kernels verified per specialisation: an index such as ``r * NP + p`` with ``NP = TOPK // 128``
(TOPK a constexpr) is not affine in params, but is once TOPK is a number. The frontend reads such a
kernel with its integer constexprs bound (read_kernels(bind=...)); the lowering, the runtime and
tle-dump fall back to that when the generic read fails for that reason."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from tle_compiler.cli.dump import main as dump_main
from tle_compiler.diagnostics import TleError
from tle_compiler.frontend import kernel_signature, read_kernels
from tle_compiler.ir.expr import Affine
from tle_compiler.lowering import gluon_source
from tle_compiler.passes import verify

K = str(Path(__file__).parent / "fixtures" / "persistent_rounds.py")


def test_generic_read_rejects_the_product():
    with pytest.raises(TleError) as e:
        read_kernels(K)
    assert e.value.check == "non-affine" and "r * NP + p" in e.value.message


@pytest.mark.parametrize("topk,np_", [(512, 4), (384, 3)])
def test_bound_read_is_affine_and_verified(topk, np_):
    (info,) = read_kernels(K, bind={"TOPK": topk})
    assert info.constexprs == ("TOPK",) and [p.name for p in info.program.params] == ["ROUNDS"]
    loop = info.program.partitions[0].body[0].body[0]       # for p in range(NP)
    assert loop.stop == Affine.of(np_)
    assert loop.body[0].index == Affine(0, (("p", 1), ("r", np_)))
    assert verify(info.program).ok


def test_signature_without_reading_the_body():
    assert kernel_signature(K, "k") == (("x_ptr", "ROUNDS", "TOPK"), ("TOPK",))


def test_lowering_specialises_to_the_constexprs():
    src = gluon_source((K, "k"), {"TOPK": 384}).source
    assert "NP: gl.constexpr = 3" in src
    assert "mbarrier.wait(p1_full0.index(0), (((r * NP) + p)) & 1)" in src
    with pytest.raises(TleError):   # no value to specialise to: the frontend's error stands
        gluon_source((K, "k"), {})


def test_tle_dump_reads_specialised_and_says_so():
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = dump_main([K, "--param", "TOPK=256", "-q"])
    assert rc == 0, err.getvalue()
    assert "read specialised to TOPK=256" in err.getvalue()
    assert "verified" in err.getvalue()
