"""A constexpr `if` around pipe events in a kernel read specialised: the protocol view folds it
(the bound constexpr is a Python value there), so the kernel IR that the lowering reads must fold
it too. Before ast_reader._branching_constexprs counted such an `if` (it counted only one around
TMA copies), the verifier proved the kernel and the lowering then stopped with an internal error
("the protocol view of partition ... has N events, its kernel IR 2N")."""

from __future__ import annotations

import textwrap

import pytest

from tle_compiler.cli.dump import main

KERNEL = textwrap.dedent('''
    import triton.language as tl

    import tle_compiler as tle


    @tle.jit(num_warps=4)
    def scaled_copy(x_ptr, y_ptr, NR, SLOTS: tl.constexpr, DOUBLE: tl.constexpr):
        NP = SLOTS // 2  # a constexpr count: the index r * NP + p is affine only once it is bound
        ch = tle.pipe(capacity=2, x=tle.gpu.alloc([2, 64], tl.float32))
        tle.gpu.warp_specialize([(fill, (ch, x_ptr, NR, NP, DOUBLE)),
                                 (drain, (ch, y_ptr, NR, NP))], [4], [232])


    def fill(ch, x_ptr, NR, NP, DOUBLE: tl.constexpr):
        w = ch.writer()
        offs = tl.arange(0, 64)
        for r in range(NR):
            for p in range(NP):
                g = r * NP + p
                if DOUBLE:
                    slot = w.acquire(g)
                    tl.store(tle.gpu.local_ptr(slot.x), tl.load(x_ptr + g * 64 + offs) * 2.0)
                    w.commit(g)
                else:
                    slot = w.acquire(g)
                    tl.store(tle.gpu.local_ptr(slot.x), tl.load(x_ptr + g * 64 + offs))
                    w.commit(g)


    def drain(ch, y_ptr, NR, NP):
        rd = ch.reader()
        offs = tl.arange(0, 64)
        for r in range(NR):
            for p in range(NP):
                g = r * NP + p
                res = rd.wait(g)
                tl.store(y_ptr + g * 64 + offs, tl.load(tle.gpu.local_ptr(res.slot.x)))
                rd.release(g)


    DEFAULT_CONFIG = {
        "signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "NR": "i32"},
        "constexprs": {"SLOTS": 8, "DOUBLE": DOUBLE_VALUE},
        "num_warps": 4,
        "grid": (1,),
    }
''')


# How the condition reaches the constexpr: directly, negated, through an expression passed to the
# partition, through a name the kernel body assigns (each once made the lowering fail).
SPELLINGS = {
    "direct": (),
    "negated": (("            if DOUBLE:", "            if not not DOUBLE:"),),
    "expression argument": (("(fill, (ch, x_ptr, NR, NP, DOUBLE))",
                             "(fill, (ch, x_ptr, NR, NP, DOUBLE * 1))"),),
    "alias in the body": (("    ch = tle.pipe(", "    SCALE_IT = DOUBLE\n    ch = tle.pipe("),
                          ("(fill, (ch, x_ptr, NR, NP, DOUBLE))",
                           "(fill, (ch, x_ptr, NR, NP, SCALE_IT))")),
    # a name the body computes from constexprs and a module constant (NT = TOPK // BK)
    "arithmetic in the body": (("    ch = tle.pipe(", "    TWICE = (DOUBLE * SLOTS) // SLOTS % 2\n"
                                                     "    ch = tle.pipe("),
                               ("(fill, (ch, x_ptr, NR, NP, DOUBLE))",
                                "(fill, (ch, x_ptr, NR, NP, TWICE))")),
    "arithmetic in the body, through another name": (
        ("    ch = tle.pipe(", "    HALF = SLOTS // WIDTH\n    ODD = (HALF + DOUBLE) % 2\n"
                             "    ch = tle.pipe("),
        ("(fill, (ch, x_ptr, NR, NP, DOUBLE))", "(fill, (ch, x_ptr, NR, NP, ODD))"),
        ("import tle_compiler as tle\n", "import tle_compiler as tle\n\nWIDTH = tl.constexpr(2)\n")),
}


@pytest.mark.parametrize("spelling", list(SPELLINGS))
@pytest.mark.parametrize("double", [1, 0])
def test_a_verified_kernel_is_lowered_with_the_branch_it_verified(tmp_path, capsys, double,
                                                                   spelling):
    text = KERNEL.replace("DOUBLE_VALUE", str(double))
    for old, new in SPELLINGS[spelling]:
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / "scaled_copy.py"
    path.write_text(text)
    assert main(["-q", str(path)]) == 0
    err = capsys.readouterr().err
    assert "read specialised to" in err and f"DOUBLE={double}" in err and "verified" in err
    assert main(["--gluon", str(path)]) == 0
    out, err = capsys.readouterr()
    assert "internal" not in err, err
    fill = out[out.index("def fill("):out.index("def drain(")]
    # only the branch that runs exists: one acquire, one commit, the scaling iff DOUBLE
    assert fill.count("mbarrier.wait(") == 1, fill
    assert ("* 2.0" in fill) == bool(double), fill


ONE_SIDED = (KERNEL
             .replace("    ch = tle.pipe(", "    ON = DOUBLE\n    ch = tle.pipe(")
             .replace("(fill, (ch, x_ptr, NR, NP, DOUBLE))", "(fill, (ch, x_ptr, NR, NP, ON))")
             .replace("(drain, (ch, y_ptr, NR, NP))", "(drain, (ch, y_ptr, NR, NP, ON))")
             .replace("def drain(ch, y_ptr, NR, NP):", "def drain(ch, y_ptr, NR, NP, ON: tl.constexpr):")
             .replace("""            else:
                slot = w.acquire(g)
                tl.store(tle.gpu.local_ptr(slot.x), tl.load(x_ptr + g * 64 + offs))
                w.commit(g)
""", "")
             .replace("""            res = rd.wait(g)
            tl.store(y_ptr + g * 64 + offs, tl.load(tle.gpu.local_ptr(res.slot.x)))
            rd.release(g)""", """            if ON:
                res = rd.wait(g)
                tl.store(y_ptr + g * 64 + offs, tl.load(tle.gpu.local_ptr(res.slot.x)))
                rd.release(g)"""))


@pytest.mark.parametrize("on", [1, 0])
def test_events_on_one_side_of_an_if_on_an_alias_lower_as_verified(tmp_path, capsys, on):
    """Both partitions use the pipe only when ON (a kernel-body name for DOUBLE): with ON = 0
    the protocol view has no event at all, and the lowering must not emit the ones it dropped."""
    assert ONE_SIDED.count("if ON:") == 1 and "ON = DOUBLE" in ONE_SIDED
    path = tmp_path / "one_sided.py"
    path.write_text(ONE_SIDED.replace("DOUBLE_VALUE", str(on)))
    assert main(["-q", str(path)]) == 0
    assert "verified" in capsys.readouterr().err
    assert main(["--gluon", str(path)]) == 0
    out, err = capsys.readouterr()
    assert "internal" not in err, err
    assert out.count("mbarrier.wait(") == 2 * on, out
