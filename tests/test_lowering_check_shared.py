"""One rule decides whether a kernel is lowered, for the lowering and for ``tle-dump -p``.

``lowering/walks.check_lowerable`` refuses a protocol the verifier rejects (the lowering's error)
and returns the TleVerificationWarning of one not proved for every value of its params. The
lowering warns with it (``gluon_source``, ``--gluon``, the emit-gluon pass), and ``tle-dump -p
... emit-gluon`` with ``--param``/``--bound`` applies it to the kernel verified again over every
value. These tests pin that every path says the same words: the same warning line for a bounded
kernel, the same error for a rejected one.
"""

from __future__ import annotations

import warnings

import pytest

from tle_compiler.cli.dump import main as tle_dump
from tle_compiler.diagnostics import TleError, TleVerificationWarning
from tle_compiler.frontend import read_kernels
from tle_compiler.lowering import gluon_source
from tle_compiler.lowering.codegen import kernel_ir
from tle_compiler.lowering.kir_passes import run_passes
from tle_compiler.lowering.walks import check_lowerable, unproved_message
from tests.test_cli_emit_param import REJECTED_AT_3, TWO_PARAMS

FULL = "verify-protocol,verify-deadlock,materialize-barriers,assign-layouts,schedule-wgmma,emit-gluon"


def kernel_file(tmp_path, text: str, name: str = "k.py") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def verified(path: str):
    """The kernel IR of ``k`` after the protocol passes, over every value of its params."""
    (info,) = read_kernels(path)
    return run_passes(kernel_ir(info), "verify-protocol,verify-deadlock", info=info,
                      constexprs={}, program=info.program)


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = tle_dump(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def lowering_warning(path: str) -> TleVerificationWarning:
    """The one TleVerificationWarning the lowering issues for kernel ``k`` of ``path``."""
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always", TleVerificationWarning)
        gluon_source((path, "k"), {})
    (w,) = [w for w in rec if issubclass(w.category, TleVerificationWarning)]
    return w.message


def test_check_lowerable_proved_bounded_and_rejected(tmp_path):
    proved = verified(kernel_file(tmp_path, REJECTED_AT_3.replace("COND", "-5"), "proved.py"))
    assert check_lowerable(proved, "k") is None
    bounded = verified(kernel_file(tmp_path, TWO_PARAMS, "bounded.py"))
    verdict = bounded.protocol().verdict()
    assert verdict.kind == "bounded"
    w = check_lowerable(bounded, "k")
    assert isinstance(w, TleVerificationWarning)
    assert str(w) == unproved_message("k", verdict.describe())
    assert w.kernel == "k" and w.verdict is verdict
    rejected = verified(kernel_file(tmp_path, REJECTED_AT_3.replace("COND", "3"), "rejected.py"))
    with pytest.raises(TleError) as refused:
        check_lowerable(rejected, "k")
    assert refused.value.message.startswith(
        "the pipe protocol is rejected, nothing is lowered: the reader of pipe 'ring' never waits")
    assert refused.value.loc.line == 17 and refused.value.check == "unconsumed"


@pytest.mark.parametrize("argv", [(), ("--param", "N=2"), ("--bound", "40")],
                         ids=["every-value", "param", "bound"])
def test_a_bounded_kernel_gets_the_lowerings_warning_line_from_every_path(tmp_path, capsys, argv):
    """With no --param/--bound the emit-gluon pass warns; with them print_ir's check of the
    kernel verified again does; --gluon prints the verdict of its own run: the same one line, the
    lowering's own words."""
    path = kernel_file(tmp_path, TWO_PARAMS)
    line = f"tle-dump: warning: {lowering_warning(path)}"
    code, gluon, gerr = run(capsys, "--gluon", path)
    assert code == 3 and "@gluon.jit" in gluon
    assert [ln for ln in gerr.splitlines() if "warning" in ln] == [line], gerr  # --gluon too
    code, emitted, err = run(capsys, "-p", FULL, *argv, path)
    assert code == 3, err
    assert emitted == gluon
    assert [ln for ln in err.splitlines() if "warning" in ln] == [line], err


def test_a_rejected_kernel_gets_the_lowerings_error_from_every_path(tmp_path, capsys):
    path = kernel_file(tmp_path, REJECTED_AT_3.replace("COND", "3"))
    with pytest.raises(TleError) as refused:
        gluon_source((path, "k"), {})
    error = str(refused.value.to_diagnostic())
    assert "nothing is lowered" in error and "(when N=3, t=0)" in error
    for argv in (("--param", "N=2"), ("--bound", "2")):
        code, out, err = run(capsys, "-p", FULL, *argv, path)
        assert code == 1 and not out.strip(), err
        assert err.splitlines() == [error], err
    code, out, err = run(capsys, "--gluon", "--param", "N=2", path)
    assert code == 1 and not out.strip()
    assert str(refused.value) in err.splitlines(), err
