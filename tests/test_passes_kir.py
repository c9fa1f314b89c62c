"""The kernel IR passes: their typed attributes agree with the Pipe IR passes they wrap, and the
pass manager runs prerequisites and refuses unknown passes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tle_compiler.frontend.build import build_file
from tle_compiler.ir import kernel as K
from tle_compiler.ir.attrs import eval_index, render_index
from tle_compiler.ir.nodes import walk_events
from tle_compiler.lowering.kir_passes import run_passes

RING = Path(__file__).resolve().parent.parent / "tle_kernels" / "examples" / "ring.py"
SPMC = Path(__file__).resolve().parent.parent / "tle_kernels" / "examples" / "spmc.py"


@pytest.mark.parametrize("path", [RING, SPMC], ids=["ring", "spmc"])
def test_stage_and_parity_evaluate_as_the_ring_semantics(path):
    m = run_passes(build_file(str(path))[0], "infer-stages")
    program = m.ctx.program
    for part in m.kernel.partitions:
        ppart = next(p for p in program.partitions if p.name == part.name)
        for e, pe in zip(K.events(part.body), walk_events(ppart.body)):
            pipe = program.pipe(pe.pipe)
            for value in range(0, 9):
                env = {v: value for v in pe.index.variables}
                i = pe.index.eval(env)
                if i < 0:
                    continue
                c = pipe.capacity
                stage = 0 if pipe.one_shot or c == 1 else i % c
                assert eval_index(K.get_attr(e, "stage"), env) == stage
                parity = K.get_attr(e, "parity")
                phase = 0 if pipe.one_shot else (i // c) & 1
                if e.verb == "wait":
                    assert eval_index(parity, env) == phase
                elif e.verb in ("acquire", "close") and not pipe.one_shot:
                    assert eval_index(parity, env) == phase ^ 1
                else:
                    assert parity is None


def test_parity_text_is_infer_stages_formula():
    m = run_passes(build_file(str(RING))[0], "infer-stages")
    acquire = next(e for e in K.events(m.kernel.partitions[0].body) if e.verb == "acquire")
    assert render_index(K.get_attr(acquire, "parity")) == "((t // 3) & 1) ^ 1"
    assert render_index(K.get_attr(acquire, "stage")) == "t % 3"
    assert render_index(K.get_attr(acquire, "parity"), lambda _: "(i)") == "(((i) // 3) & 1) ^ 1"


def test_prerequisites_run_first_and_unknown_passes_are_refused():
    m = run_passes(build_file(str(RING))[0], "materialize-barriers")
    assert m.passes_run == ["infer-stages", "infer-barriers", "materialize-barriers"]
    with pytest.raises(ValueError, match="unknown pass 'nope'"):
        run_passes(m, "nope")


def test_the_lowering_registers_its_passes():
    # passes.manager alone knows the protocol passes (the passes layer does not import the
    # lowering); importing lowering.kir_passes adds the lowering's, in pipeline order
    import subprocess
    import sys

    code = ("from tle_compiler.passes.manager import kir_passes, parse_passes\n"
            "print(','.join(kir_passes()))\n"
            "try:\n    parse_passes('emit-gluon')\nexcept ValueError as e:\n    print(e)\n"
            "from tle_compiler.lowering.kir_passes import passes_with_lowering\n"
            "print(','.join(passes_with_lowering()))\n"
            "print([p.name for p in parse_passes('emit-gluon')])\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=Path(__file__).resolve().parent.parent)
    assert r.returncode == 0, r.stderr
    protocol = "verify-protocol,infer-stages,infer-barriers,verify-deadlock"
    assert r.stdout.splitlines() == [
        protocol,
        f"unknown pass 'emit-gluon' (passes: {protocol.replace(',', ', ')}; the lowering's "
        "passes register when tle_compiler.lowering.kir_passes is imported)",
        protocol + ",materialize-barriers,assign-layouts,schedule-wgmma,emit-gluon",
        "['emit-gluon']",
    ]


def test_barriers_match_the_pipe_ir_pass():
    m = run_passes(build_file(str(SPMC))[0], "infer-barriers")
    inferred = m.ctx.barriers
    for p in m.kernel.pipes:
        for d in K.get_attr(p, "barriers"):
            same = [b for b in inferred if b.pipe == p.name and b.kind == d.kind
                    and b.group == d.group]
            assert len(same) == d.stages and {b.count for b in same} == {d.count}
