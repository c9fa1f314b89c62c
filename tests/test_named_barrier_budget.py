"""The named-barrier id budget is one number for the verifier and the lowering.

A CTA has 16 hardware named barriers and Triton's warp specialization keeps the ids below
3 + P for a kernel of P partitions (passes/named_budget.py); the lowering gives each
``barrier="named"`` pipe an id from 15 down. A kernel with more named pipes than fit is refused by
tle-dump as an ill-formed protocol (check ``named-budget``, exit code 1) at the first pipe that
does not fit, with the lowering's own explanation, and the lowering (which never gets such a
kernel from the verifier) refuses it with the same text when its pass runs alone.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tle_compiler.cli.dump import main
from tle_compiler.diagnostics import TleError
from tle_compiler.frontend import read_file
from tle_compiler.frontend.build import build_file
from tle_compiler.lowering.kir_passes import named_barrier_allocs, run_passes
from tle_compiler.passes import verify
from tle_compiler.passes.named_budget import (NAMED_BARRIERS, named_budget, reserved_ids,
                                              too_many_named)

from .test_named_barrier_lowering import many_named_pipes


def exchange_pipe(pairs: int) -> str:
    """A .pipe protocol of ``pairs`` exchanges between two partitions, each two named pipes
    (``x<i>`` a -> b, ``y<i>`` b -> a) whose releases the other's hand-off implies (as
    tests/fixtures/named_barrier/exchange.ok.pipe)."""
    decls = "".join(f"pipe x{i} capacity=1 named_barrier fields=(m)\n"
                    f"pipe y{i} capacity=1 named_barrier fields=(m)\n" for i in range(pairs))
    a = "".join(f"    x{i}.acquire(p)\n    x{i}.write(p, m)\n    x{i}.commit(p)\n"
                f"    y{i}.wait(p)\n    y{i}.read(p, m)\n    y{i}.release(p)\n" for i in range(pairs))
    b = "".join(f"    x{i}.wait(p)\n    x{i}.read(p, m)\n    x{i}.release(p)\n"
                f"    y{i}.acquire(p)\n    y{i}.write(p, m)\n    y{i}.commit(p)\n" for i in range(pairs))
    return (f"kernel exchange\nparam N\n{decls}partition a default warps=4 {{\n"
            f"  for p in range(N) {{\n{a}  }}\n}}\npartition b warps=4 {{\n"
            f"  for p in range(N) {{\n{b}  }}\n}}\n")


def _line_of(path: Path, prefix: str) -> int:
    return next(i + 1 for i, ln in enumerate(path.read_text().splitlines())
                if ln.startswith(prefix))


def _dump(capsys, *args) -> tuple[int, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out + err


def test_the_budget():
    """0, 1 and one id per worker partition from 2, and two spare: 11 ids left for 2 partitions,
    10 for 3; the ids handed out are 15 down."""
    assert NAMED_BARRIERS == 16
    assert [reserved_ids(p) for p in (1, 2, 3, 4)] == [4, 5, 6, 7]
    assert [named_budget(p) for p in (1, 2, 3, 4)] == [12, 11, 10, 9]
    assert named_budget(16) == 0


def test_pipe_text_over_the_budget_is_rejected_by_the_verifier(tmp_path, capsys):
    """Five exchanges (10 named pipes) between two partitions verify; six (12) do not: the
    twelfth pipe, y5, has no id left."""
    ok = tmp_path / "five.pipe"
    ok.write_text(exchange_pipe(5))
    code, out = _dump(capsys, ok)
    assert code == 0 and "verified" in out, out
    over = tmp_path / "six.pipe"
    over.write_text(exchange_pipe(6))
    code, out = _dump(capsys, over)
    line = _line_of(over, "pipe y5 ")
    assert code == 1, out
    assert f"six.pipe:{line}: error: {too_many_named('y5', 2)} [named-budget]" in out, out
    # one error, at the first pipe that does not fit (x5, the eleventh, still fits)
    assert out.count("[named-budget]") == 1 and "pipe 'x5'" not in out


@pytest.mark.parametrize("third,fit", [(False, 11), (True, 10)], ids=["2-partitions", "3-partitions"])
def test_kernel_over_the_budget_is_rejected_by_tle_dump_and_the_lowering_alike(
        tmp_path, capsys, third, fit):
    """The first named pipe past the budget, x<fit>, is the error: tle-dump's verdict (exit code
    1, as any ill-formed protocol), tle-dump --gluon's refusal (nothing is lowered) and the
    lowering's own check, all with one message at the pipe's declaration."""
    path = tmp_path / "over.py"
    path.write_text(many_named_pipes(fit + 1, third))
    line = _line_of(path, f"    x{fit} = tle.pipe(")
    partitions = 3 if third else 2
    msg = too_many_named(f"x{fit}", partitions)
    assert f"at most {fit} named pipes fit" in msg

    ctx = verify(read_file(str(path)).kernels[0])
    (err,) = ctx.errors
    assert (err.check, err.loc.line, err.message) == ("named-budget", line, msg)

    code, out = _dump(capsys, path)
    assert code == 1 and f"over.py:{line}: error: {msg} [named-budget]" in out, out
    code, out = _dump(capsys, "--gluon", path)
    assert code == 1 and msg in out and "@gluon.jit" not in out, out

    # materialize-barriers without the verifier: the same budget, the same message
    with pytest.raises(TleError) as e:
        run_passes(build_file(str(path))[0], "materialize-barriers")
    assert (e.value.check, e.value.loc.line) == ("lowering", line)
    assert msg in str(e.value)


@pytest.mark.parametrize("third,fit", [(False, 11), (True, 10)], ids=["2-partitions", "3-partitions"])
def test_a_kernel_at_the_budget_gets_every_id_left(tmp_path, third, fit):
    """At the budget the verifier accepts the kernel and the lowering hands out the ids from 15
    down to the lowest one Triton leaves."""
    path = tmp_path / "fits.py"
    path.write_text(many_named_pipes(fit, third))
    assert verify(read_file(str(path)).kernels[0]).ok
    m = run_passes(build_file(str(path))[0], "infer-barriers")
    ids = sorted(a.bar_id for a in named_barrier_allocs(m.kernel).values())
    partitions = 3 if third else 2
    assert ids == list(range(reserved_ids(partitions), NAMED_BARRIERS))
