"""Lowering a kernel needs a register budget per worker partition (Gluon's warp_specialize takes
one integer each). A kernel that gave none, or one written as an expression of constexprs that
nothing else in the kernel branches on, lowered to ``worker_num_regs=[None]`` and failed inside
Triton with a traceback about set_requested_registers. Now a budget written with int or bool
constexprs is lowered as its value for the constexprs bound, a kernel without budgets is refused
at the partition with a TLE error (tle-dump --gluon exit 1), and a budget of a runtime value is
refused by the reader. The protocol verdict does not read budgets, but plain tle-dump translates
every kernel it verifies, as --gluon does: a kernel without them is refused there too."""

import io
import re
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from tle_compiler.cli.dump import main

ROOT = Path(__file__).resolve().parents[1]
RING = ROOT / "tle_kernels" / "examples" / "ring.py"
CALL = "], [4], [232])"


def dump(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def ring_with_budget(tmp_path: Path, budget: str, extra: str = "") -> Path:
    """The bundled ring kernel with its worker_num_regs replaced by ``budget`` ('' drops it)."""
    src = RING.read_text()
    assert src.count(CALL) == 1
    src = src.replace(CALL, "], [4]" + (f", {budget})" if budget else ")"))
    if extra:  # constexpr parameters added to the kernel and its DEFAULT_CONFIG
        src = src.replace("def ring_sum(x_ptr, out_ptr, stride_x, N_TILES):",
                          f"def ring_sum(x_ptr, out_ptr, stride_x, N_TILES, {extra}):")
        src = src.replace('"constexprs": {},', '"constexprs": {"FLAG": True, "WIDE": 1},')
        src = src.replace('"N_TILES": "i32"},', '"N_TILES": "i32", "FLAG": "constexpr", '
                                                '"WIDE": "constexpr"},')
    path = tmp_path / "ring_budget.py"
    path.write_text(src)
    return path


def lowered_budget(gluon: str) -> str:
    (call,) = re.findall(r"^    \], \[4\], (\[[^\]]*\])\)$", gluon, re.M)
    return call


def test_the_bundled_ring_lowers_its_budget():
    code, out, err = dump(["-q", "--gluon", str(RING)])
    assert code == 0, err
    assert lowered_budget(out) == "[232]"


def test_no_budget_is_refused_at_lowering_with_the_partition_named(tmp_path):
    path = ring_with_budget(tmp_path, "")
    code, _, err = dump(["-q", str(path)])
    # the protocol does not read budgets; the translation tle-dump runs needs them
    assert code == 1 and "register budget of partition 'sum_tiles' is not known" in err, err
    assert "tle-dump: ring_sum: rejected: 1 error" in err, err
    code, out, err = dump(["-q", "--gluon", str(path)])
    assert code == 1
    assert "register budget of partition 'sum_tiles' is not known" in err
    assert "Traceback" not in err and "set_requested_registers" not in err
    assert "[None]" not in out


def test_a_budget_of_bool_constexpr_arithmetic_is_its_python_value(tmp_path):
    """Triton evaluates a budget as constexpr arithmetic, True as 1 (FLAG is True by default)."""
    path = ring_with_budget(tmp_path, "[224 + 8 * (1 - FLAG)]",
                            "FLAG: tl.constexpr, WIDE: tl.constexpr")
    code, out, err = dump(["-q", "--gluon", str(path)])
    assert code == 0, err
    assert lowered_budget(out) == "[224]"
    code, out, err = dump(["-q", "--gluon", "--param", "FLAG=False", str(path)])
    assert code == 0, err
    assert lowered_budget(out) == "[232]"


def test_a_budget_of_a_runtime_value_is_refused(tmp_path):
    path = ring_with_budget(tmp_path, "[N_TILES]")
    code, out, err = dump(["-q", "--gluon", str(path)])
    assert code in (1, 2), (out, err)
    assert "register budget" in err or "worker_num_regs" in err
    assert "set_requested_registers" not in err and "Traceback" not in err


def test_a_budget_of_int_constexpr_arithmetic_is_lowered_as_its_value(tmp_path):
    path = ring_with_budget(tmp_path, "[224 + 8 * WIDE]",
                            "FLAG: tl.constexpr, WIDE: tl.constexpr")
    code, out, err = dump(["-q", "--gluon", str(path)])
    assert code == 0, err
    assert lowered_budget(out) == "[232]"
    code, out, err = dump(["-q", "--gluon", "--param", "WIDE=2", str(path)])
    assert code == 0, err
    assert lowered_budget(out) == "[240]"


def test_a_bool_budget_is_read_in_a_kernel_read_only_specialised(tmp_path):
    """A kernel the reader can read only with its int constexprs bound (here a commit index
    ``t * WIDE``, affine once WIDE is a number; in the bundled decode kernels, TMA copies under
    ``if TMA``) was re-read with the ints alone, so a budget of a bool constexpr stayed unknown
    and lowering refused it."""
    path = ring_with_budget(tmp_path, "[224 + 8 * WIDE * (1 - FLAG)]",
                            "FLAG: tl.constexpr, WIDE: tl.constexpr")
    src = path.read_text()
    for old, new in (("(load_tiles, (ring, x_ptr, stride_x, N_TILES))",
                      "(load_tiles, (ring, x_ptr, stride_x, N_TILES, WIDE))"),
                     ("def load_tiles(ring, x_ptr, stride_x, N_TILES):",
                      "def load_tiles(ring, x_ptr, stride_x, N_TILES, WIDE: tl.constexpr):"),
                     ("        w.commit(t)", "        w.commit(t * WIDE)")):
        assert src.count(old) == 1
        src = src.replace(old, new)
    path.write_text(src)
    code, out, err = dump(["-q", "--gluon", str(path)])
    assert code == 0, err
    assert lowered_budget(out) == "[224]"
    code, out, err = dump(["-q", "--gluon", "--param", "FLAG=False", str(path)])
    assert code == 0, err
    assert lowered_budget(out) == "[232]"


def test_a_budget_its_constexpr_values_put_out_of_range_is_refused_at_the_list(tmp_path):
    """The budget is evaluated with the constexprs' values in the reading that was verified
    (frontend/budgets.py): a DEFAULT_CONFIG value that puts it past setmaxnreg's 256 rejects the
    kernel at the list, as a literal 288 does, for tle-dump and for --gluon; the same value
    given with --param is one the kernel cannot be read with (exit 2, naming it)."""
    path = ring_with_budget(tmp_path, "[224 + 8 * WIDE]",
                            "FLAG: tl.constexpr, WIDE: tl.constexpr")
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1)
                if "224 + 8 * WIDE" in text)
    why = "warp_specialize: register budget 288 is not a multiple of 8 in [24, 256] (setmaxnreg)"
    for argv in (["-q", "--gluon", "--param", "WIDE=8", str(path)],
                 ["-q", "--param", "WIDE=8", str(path)]):
        code, out, err = dump(argv)
        assert code == 2 and f"--param WIDE=8: the kernel cannot be read with this value: " \
                             f"{why} (line {line})" in err, (argv, out, err)
    path.write_text(path.read_text().replace('"WIDE": 1}', '"WIDE": 8}'))
    for argv in (["-q", str(path)], ["-q", "--gluon", str(path)]):
        code, out, err = dump(argv)
        assert code == 1 and f"{path}:{line}: error: {why}" in err, (argv, out, err)
        assert "Traceback" not in err


def test_a_budget_is_evaluated_from_the_reading_not_read_again():
    """with_budgets takes the verified reading's budget expressions and the constexprs' values;
    where one it reads has no value the budgets stay unknown (the lowering refuses such a
    partition, naming it); a reading that binds them has them as numbers."""
    from tle_compiler.frontend.ast_reader import kernels_of_source
    from tle_compiler.frontend.budgets import with_budgets

    seesaw = ROOT / "tle_kernels" / "mla_decode_seesaw.py"
    bind = {"BALANCE": 1, "BLOCK_H": 64, "RUN": 1, "TMA": 1, "QTMA": 0}
    (info,) = kernels_of_source(seesaw.read_text(), str(seesaw), bind=bind)
    assert [p.regs for p in info.partitions[1:]] == [None, None]  # CAUSAL is left free
    # 224 + 8*TMA + 8*TMA*CAUSAL*(1 - BALANCE), 224 + 8*TMA, with TMA = 1
    for balance, causal, regs in ((1, True, [232, 232]), (0, True, [240, 232]),
                                  (0, False, [232, 232])):
        (read,) = kernels_of_source(seesaw.read_text(), str(seesaw),
                                    bind={**bind, "BALANCE": balance})
        bound = with_budgets(read, {**bind, "BALANCE": balance, "CAUSAL": causal})
        assert [p.regs for p in bound.partitions] == [None, *regs]
        assert bound.kir is read.kir and bound.program is read.program
        (whole,) = kernels_of_source(seesaw.read_text(), str(seesaw),
                                     bind={**bind, "BALANCE": balance, "CAUSAL": int(causal)})
        assert [p.regs for p in whole.partitions] == [None, *regs]
    assert with_budgets(info, bind) is info


@pytest.mark.parametrize("budget,regs", [
    ("[232 if WIDE else 224]", "[232]"),              # a conditional expression
    ("[224 + 8 * WIDE if FLAG else 224]", "[232]"),
    ("[224 + 8 * (WIDE and FLAG)]", "[232]"),         # Python's `and`: 1 and True is True
    ("[224 + 8 * (not FLAG)]", "[224]"),
    ("[224 + (8 << WIDE)]", "[240]"),
    ("[224 + 8 * (WIDE > 0)]", "[232]"),
])
def test_a_budget_of_any_constexpr_arithmetic_is_its_python_value(tmp_path, budget, regs):
    """Budgets are evaluated with the constexprs' values (FLAG True, WIDE 1) as Triton's
    constexpr arithmetic evaluates them, which is Python's."""
    path = ring_with_budget(tmp_path, budget, "FLAG: tl.constexpr, WIDE: tl.constexpr")
    code, out, err = dump(["-q", "--gluon", str(path)])
    assert code == 0, err
    assert lowered_budget(out) == regs


def test_a_budget_the_lowering_cannot_evaluate_is_refused_naming_the_partition(tmp_path):
    path = ring_with_budget(tmp_path, "[max(224, 216 + 8 * WIDE)]",
                            "FLAG: tl.constexpr, WIDE: tl.constexpr")
    code, out, err = dump(["-q", "--gluon", str(path)])
    assert code == 1, (out, err)
    assert "the register budget of partition 'sum_tiles' is not constexpr arithmetic" in err
    assert "Traceback" not in err
