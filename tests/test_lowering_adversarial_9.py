"""Lowering against the verdict, adversarial round 49: kernels tle-dump verified and translated to
Gluon whose Gluon computed something else than the source read (Triton 3.6's semantics).

Wrong and fixed:
* test_a_budget_of_a_reassigned_constexpr_is_refused: ``WIDE = 0`` in the kernel body, then
  ``worker_num_regs=[224 + 8 * WIDE]``. The budget expression was recorded as a kernel IR
  expression of the name ``WIDE`` and evaluated (frontend/budgets.py) with the parameter's launch
  value: the Gluon assigned ``WIDE = 0`` and launched the worker with ``[232]``, where the source
  says 224 (and Triton, whose plain assignment makes ``WIDE`` an i32 tensor, has no number there
  at all). The builder now refuses a budget that reads a constexpr parameter the kernel assigns,
  naming the assignment's line (frontend/build.py, ``warp_specialize``); so is one reading a
  local a plain assignment bound (``R = 224 + 8 * WIDE``, an i32 tensor in Triton).

A false refusal fixed: ``R: tl.constexpr = 224 + 8 * WIDE; worker_num_regs=[R]`` (a constexpr in
Triton) was refused as "register budgets must be integer literals": the budget's constexprs were
looked for in its source text, not in the expression the builder reads it as."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from tle_compiler.cli.dump import main

ROOT = Path(__file__).resolve().parents[1]
RING = ROOT / "tle_kernels" / "examples" / "ring.py"


def dump(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def ring_variant(tmp_path: Path, *edits: tuple[str, str], name: str = "ring49") -> Path:
    """The bundled ring kernel with each (old, new) of ``edits`` replaced once."""
    src = RING.read_text()
    for old, new in edits:
        assert src.count(old) == 1, old
        src = src.replace(old, new)
    path = tmp_path / f"{name}.py"
    path.write_text(src)
    return path


def with_wide(budget: str, prelude: str = "") -> tuple[tuple[str, str], ...]:
    """Edits giving the ring kernel a constexpr WIDE (1 by default), ``budget`` as its register
    budget list and ``prelude`` before its pipe."""
    return (("def ring_sum(x_ptr, out_ptr, stride_x, N_TILES):",
             "def ring_sum(x_ptr, out_ptr, stride_x, N_TILES, WIDE: tl.constexpr):"),
            ('"constexprs": {},', '"constexprs": {"WIDE": 1},'),
            ('"N_TILES": "i32"},', '"N_TILES": "i32", "WIDE": "constexpr"},'),
            ("], [4], [232])", f"], [4], {budget})"),
            ("    ring = tle.pipe(", prelude + "    ring = tle.pipe("))


@pytest.mark.parametrize("prelude", ["    WIDE = 0\n", "    WIDE = WIDE + 1\n",
                                     "    WIDE += 1\n"])
def test_a_budget_of_a_reassigned_constexpr_is_refused(tmp_path, prelude):
    path = ring_variant(tmp_path, *with_wide("[224 + 8 * WIDE]", prelude))
    code, out, err = dump(["-q", "--gluon", str(path)])
    assert code == 1, (out, err)
    assert "reads `WIDE`, which the kernel assigns at line 17" in err, err
    assert "[232]" not in out


def test_a_budget_of_an_unassigned_constexpr_is_its_value(tmp_path):
    """The refusal is for assigned parameters alone: the same kernel without the assignment
    lowers its budget for the launch's WIDE."""
    path = ring_variant(tmp_path, *with_wide("[232 if WIDE else 224]", "    X = WIDE\n"))
    code, out, err = dump(["-q", "--gluon", str(path)])
    assert code == 0, err
    assert "], [4], [232])" in out
    code, out, err = dump(["-q", "--gluon", "--param", "WIDE=0", str(path)])
    assert code == 0, err
    assert "], [4], [224])" in out


@pytest.mark.parametrize("prelude", ["    R = 224 + 8 * WIDE\n", "    W = WIDE\n"])
def test_a_budget_of_an_assigned_local_is_refused(tmp_path, prelude):
    """A plain assignment makes the local an i32 tensor in Triton: no register budget."""
    name = prelude.split()[0]
    budget = "[R]" if name == "R" else "[224 + 8 * W]"
    path = ring_variant(tmp_path, *with_wide(budget, prelude))
    code, out, err = dump(["-q", "--gluon", str(path)])
    assert code == 1, (out, err)
    assert f"reads `{name}`, which the kernel assigns at line 17" in err, err


def test_a_budget_of_a_constexpr_annotated_local_is_its_value(tmp_path):
    """``R: tl.constexpr = 224 + 8 * WIDE`` is a constexpr in Triton (visit_AnnAssign), and
    ``worker_num_regs=[R]`` its value; it was refused ("register budgets must be integer
    literals, got `R`"): the budget's constexprs were looked for in its source text, not in the
    expression the builder reads for it."""
    path = ring_variant(tmp_path, *with_wide("[R]", "    R: tl.constexpr = 224 + 8 * WIDE\n"))
    code, out, err = dump(["-q", "--gluon", str(path)])
    assert code == 0, err
    assert "], [4], [232])" in out
    code, out, err = dump(["-q", "--gluon", "--param", "WIDE=0", str(path)])
    assert code == 0, err
    assert "], [4], [224])" in out
