"""A twenty-first adversarial round: kernels whose safety depends on params and arithmetic (strides,
steps, lagged indices, nested loops, `tle.assume` of computed values), two pipes in opposite
directions, the argument types of a DEFAULT_CONFIG signature, and what a file's verdict covers.
Each case is a small kernel written to a file and read by tle-dump's main(); the exit code and
the verdict (the check of a rejection, the witness) are pinned, and verified ones are lowered to
their events where the events oracle maps the params back to arguments
(tests/adversarial_oracles.py).

Wrong before the fixes that came with this file:
- rejected (exit 1) with a witness no launch gives: a `tle.assume` on a computed value that no
  event uses (`tle.assume(N // 2 >= 2)`, `N % 2 == 0`, `N * N >= 16`, `tl.abs(N - 3) >= 1`,
  `tl.cdiv(N, 4) <= 2`) was dropped from the Program, so the params it is computed from were
  checked at every value: a kernel whose reader waits one tile more only when N = 3 was rejected
  "when N=3", a launch every one of those assumptions refuses; and `--param N=3` checked that
  value instead of refusing it (exit 2, as for a bound on N itself). Now (frontend/protocol.py
  assumed_unused, frontend/params.py assumed_interval) a bound on a value monotone in one param,
  none of whose steps wraps in i32 over the values it leaves out, narrows that param exactly
  (`N // 2 >= 2`: verified for N >= 4); any other is kept as a derived param of the Program that
  no trace depends on (one value of its domain checked, no free param: passes/cutoff.py), whose
  domain the search for witnesses keeps: the kernel is bounded, not rejected, and a fault at a
  value a launch gives (N = 4 with `N % 2 == 0`) is still rejected with it.
- verified (exit 0), a hang on the GPU: a protocol argument typed `i1` in the DEFAULT_CONFIG
  signature. Triton widens an i1 loop bound by sign extension (`range(N)` runs no iteration at
  N = True, as from 0 to -1) and an i1 in a comparison by zero extension (`N == 1` is true
  there): the writer's `range(N)` committed nothing while the reader's `if N == 1:` waited.
  Now rejected (check signature, cli/kernel_checks.py check_launch_signature).
- verified (exit 0 with `--param N=6`, bounded without), a hang on the GPU: a bool the kernel
  body computes (`B = N > 5`) passed to the partitions, the reader looping `range(-B + N + 2 *
  B)` against the writer's `range(N + B)`. Triton computes `-B` in i1 (B itself, widened to 1),
  so the reader waited N + 3 tiles for N + 1; the verifier read Python's -1. Now `-B` and `~B`
  of a bool name are values the verifier does not model (refused as bounds, indices and
  conditions of events, frontend/protocol.py Walker.unary), and a partition parameter bound
  to a kernel-body bool is such a name (so is `B + B`, refused before for names of the
  partition only).
- rejected with a witness no launch gives: that `B = N > 5` was an opaque param of its own, so a
  correct kernel whose reader waits one tile more `if B:` against the writer's `if N > 5:` was
  rejected "when N=0, B=1" (or B=-1). A kernel-body comparison of params is now a derived param
  of [0, 1] with its definition (`min(max(N - 5, 0), 1)`, Walker.compared_param); the kernel is
  bounded, and a real fault is rejected with the launch (`when N=6 (B=1)`). A comparison in a
  partition stays the data it was.
- left out of the file's verdict (exit 0 beside a correct kernel): a `@tle.jit async def` that
  calls warp_specialize, which Python makes a kernel (tle.jit takes any function) and no launch
  could read ("has no Pipe IR"); and a kernel a module-level `exec` of a string defines (no
  launch can read it either: "cannot read <string>"). Now refused at the def or the call
  (bad-jit, frontend/build.py, frontend/kernel.py string_code_call); an `exec` whose constant
  code defines no function and names no `jit` (`exec('B = 1')`) is read as before.

Then: `compile_kernel` (and so a launch passing a Python bool) compiled the i1 kernel above,
which tle-dump rejected; the i1 rule is now lowering/signature_checks.check_i1_args, which both
run.

Checked and found right (pinned as twins): strides `2*p + 1` and `2*p`, steps of 2 and 3 (a
step-3 writer against a `3 * tl.cdiv(N, 3)` reader aliases phases), a remainder of the loop
variable as an index, a runtime step, a negative step through a partition's name (`S = -1`,
which the lowering folded into a reversed loop; refused since, as Triton 3.6 holds S as an i32
tensor, does not reverse the loop and runs no iteration: its TTIR has no loop), `tl.range` options (refused: the lowering has none), a
`tl.static_range` over a constexpr, commits under a condition on a loaded value, early returns,
two pipes in opposite directions (ping-pong, a cross of waits, a writer running ahead of a
capacity, lagged reads of the return pipe), nested loops of constant and param trip counts,
releases out of order and a read after an out-of-order release, conditions that C and Python
compute differently (`(p - 3) % 2`, `(-p) % 3`, refused `//`, `&`, `>>` and `not` of the loop
variable), `tle.assume` forms that bound nothing (refused) and affine ones, warp_specialize twice,
in a loop or under an `if`, partition parameters spelt in another order or with defaults, Python
statements in a partition, kernels defined under module-level control flow, `@tle.jit()` and
`@(tle.jit)`, argument types (i64, u32, fp32), a kernel-body value past i32 passed to a partition
(the lowering passed Python's value as a constexpr; refused since lowering adversarial round 11,
Triton's i32 wraps), a capacity that is a constexpr (refused
then; read specialised since, tests/test_pipe_capacity_constexpr.py) or a module constant rebound after the kernel (the last binding read, as Python does), slot
pointers kept past their window (stored through after the commit, carried to a later window,
returned by a helper and read after the release), derived params of a negative divisor and C's
remainder of a shifted count, `tle.assume` in a partition or after warp_specialize (refused),
three partitions in a ring (relaying, a cycle, one running ahead), named pipes (the release
implied by the return commit, or not: the commit before the release, the return read a tile
late), and pipe handles chosen at run time (refused).
"""

from __future__ import annotations

import importlib
import textwrap

import pytest

from .adversarial_oracles import lowers_to_its_events
from .adversarial_support import run_dump, verdict, write_kernel
from .test_adversarial_python_semantics import CONFIG, reader, ring, writer
from .test_adversarial_verdicts_19 import HEAD as HEAD19
from .test_adversarial_verdicts_19 import PARTS, kernel

REJECTED = ("rejected",)
NEVER = REJECTED + ("[wait-never-committed]",)


def put(idx: str = "p") -> str:
    """The writer's window of ``idx`` (unindented)."""
    return (f"slot = w.acquire({idx})\ntl.store(tle.gpu.local_ptr(slot.tile), "
            f"tl.load(x_ptr + tl.arange(0, 64)))\nw.commit({idx})\n")


def consume(body: str) -> str:
    """The reader's body (after ``r = kv.reader()``): ``body`` dedented, indented once."""
    return textwrap.indent(textwrap.dedent(body), "    ")


def extra_wait_when(cond: str) -> str:
    """The reader: every tile, then one tile more (index N, never committed) under ``cond``."""
    return reader() + f"    if {cond}:\n        res = r.wait(N)\n        r.release(N)\n"


def assumed(assumption: str, cond: str = "N == 3") -> str:
    """The ring with ``assumption`` in place of `tle.assume(N >= 0)`, its reader waiting one tile
    more under ``cond``."""
    return ring(rbody=extra_wait_when(cond)).replace("tle.assume(N >= 0)", assumption)


def conditional(wcond: str, rcond: str) -> str:
    """The ring: the writer commits tile p under ``wcond``, the reader waits it under ``rcond``."""
    return ring(writer(body=f"if {wcond}:\n" + textwrap.indent(put(), "    ")),
                consume(f"""\
                    for p in range(N):
                        if {rcond}:
                            res = r.wait(p)
                            t = tl.load(tle.gpu.local_ptr(res.slot.tile))
                            r.release(p)
                            tl.store(y_ptr + tl.arange(0, 64), t)
                    """))


# ------------------------------------------------- tle.assume of a computed value no event uses

ASSUMED = {
    # the fault (an extra wait at N = 3) needs a value each assumption excludes: before, rejected
    # "when N=3"
    "N // 2 >= 2 (narrowed: N >= 4)": (
        assumed("tle.assume(N // 2 >= 2)"), "verified", "for every value of N (N >= 4)"),
    "3 - N // 2 >= 1 (narrowed: N <= 5), the fault at N = 6": (
        assumed("tle.assume(3 - N // 2 >= 1)", "N == 6"), "verified", "(N <= 5)"),
    "max(N, 2) // 4 == 1 (narrowed: 4 <= N <= 7)": (
        assumed("tle.assume(max(N, 2) // 4 == 1)"), "verified", "(4 <= N <= 7)"),
    "N // 2 >= 2 and N // 2 <= 3 (narrowed: 4 <= N <= 7), the fault at N = 8": (
        assumed("tle.assume(N // 2 >= 2 and N // 2 <= 3)", "N == 8"), "verified",
        "(4 <= N <= 7)"),
    "tl.cdiv(N, 64) >= 1 (narrowed: N >= 1), the fault at N = 0": (
        assumed("tle.assume(tl.cdiv(N, 64) >= 1)", "N == 0"), "verified", "(N >= 1)"),
    "N.to(tl.int64) // 2 >= 2 (narrowed: N >= 4)": (
        assumed("tle.assume(N.to(tl.int64) // 2 >= 2)"), "verified", "(N >= 4)"),
    "N % 2 == 0 (kept as a derived param)": (
        assumed("tle.assume(N >= 0)\n    tle.assume(N % 2 == 0)"), "bounded",
        "needs derived values no checked value of N gives"),
    "N * N >= 16 (kept)": (
        assumed("tle.assume(N >= 0)\n    tle.assume(N * N >= 16)"), "bounded",
        "needs derived values no checked value of N gives"),
    "tl.abs(N - 3) >= 1 (kept)": (
        assumed("tle.assume(N >= 0)\n    tle.assume(tl.abs(N - 3) >= 1)"), "bounded",
        "needs derived values no checked value of N gives"),
    # tl.cdiv(N, 4) = (N + 3) // 4 wraps near 2^31 - 1, among the values the bound leaves out:
    # the GPU's value satisfies it there, so it is kept, not narrowed
    "tl.cdiv(N, 4) <= 2 (kept: the sum wraps among the values left out), the fault at N = 9": (
        assumed("tle.assume(tl.cdiv(N, 4) <= 2)\n    tle.assume(N >= 0)", "N == 9"), "bounded",
        "needs derived values no checked value of N gives"),
    # twins: the fault at a value the assumption keeps is rejected, with that value
    "N // 2 >= 2, the fault at N = 5": (
        assumed("tle.assume(N // 2 >= 2)", "N == 5"), "rejected", "[wait-never-committed]",
        "(when N=5)"),
    "N % 2 == 0, the fault at N = 4": (
        assumed("tle.assume(N >= 0)\n    tle.assume(N % 2 == 0)", "N == 4"), "rejected",
        "[wait-never-committed]", "(when N=4 (N_2=0))"),
    "tl.cdiv(N, 4) <= 2, the fault at N = 8": (
        assumed("tle.assume(tl.cdiv(N, 4) <= 2)\n    tle.assume(N >= 0)", "N == 8"), "rejected",
        "(when N=8 (cdiv_N_4=2))"),
    "N * 2 // 3 >= 2 keeps N = 3 (6 // 3 = 2)": (
        assumed("tle.assume(N * 2 // 3 >= 2)"), "rejected", "[wait-never-committed]", "N=3"),
    "the plain ring: rejected at N = 3": (assumed("tle.assume(N >= 0)"), "rejected", "(when N=3)"),
    # an assumption that leaves nothing
    "N // 2 >= 2000000000: no i32 value of N": (
        assumed("tle.assume(N // 2 >= 2000000000)"), "rejected", "[bad-assume]",
        "leaves no value of N a launch can pass"),
    "min(N, 2) >= 4": (assumed("tle.assume(min(N, 2) >= 4)"), "rejected", "[bad-assume]"),
    "N // 2 >= 2 and, after it, N <= 3": (
        assumed("tle.assume(N // 2 >= 2)\n    tle.assume(N <= 3)"), "rejected", "[bad-assume]",
        "leaves no value of N a launch can pass"),
    "N <= 3 and, after it, N // 2 >= 2": (
        assumed("tle.assume(N <= 3)\n    tle.assume(N // 2 >= 2)"), "rejected", "[bad-assume]"),
    # forms that bound no param: refused
    "N % 4 != 3": (assumed("tle.assume(N >= 0)\n    tle.assume(N % 4 != 3)"), "rejected",
                   "[bad-assume]", "does not bound a param"),
    "an & of comparisons": (assumed("tle.assume((N >= 4) & (N < 100))"), "rejected",
                            "[bad-assume]"),
    "a conditional expression": (
        assumed("tle.assume(N >= 0)\n    tle.assume(N >= 4 if N > 100 else N >= 0)"), "rejected",
        "[bad-assume]"),
    "under an if": (assumed("tle.assume(N >= 0)\n    if N > 100:\n        tle.assume(N >= 4)"),
                    "rejected", "[bad-assume]", "top level of the kernel body"),
    "a float bound": (assumed("tle.assume(N > 3.5)"), "rejected", "[bad-assume]"),
    "in a partition": (ring(rbody="    tle.assume(N <= 2)\n" + extra_wait_when("N == 3")),
                       "rejected", "[bad-assume]", "before tle.gpu.warp_specialize"),
    "after warp_specialize": (
        ring(rbody=extra_wait_when("N == 3")).replace(
            "                            [4], [232])\n",
            "                            [4], [232])\n    tle.assume(N <= 2)\n"),
        "rejected", "[bad-assume]"),
    # a bound on the value a partition receives (N + 0 is N): exact
    "on the expression passed to the reader": (
        ring(rbody=extra_wait_when("N == 3"), rarg="N + 0").replace(
            "tle.assume(N >= 0)", "tle.assume(N >= 0)\n    tle.assume(N + 0 <= 2)"),
        "verified", "(0 <= N <= 2)"),
    # affine bounds: exact on N
    "2 * N >= 7": (assumed("tle.assume(N * 2 >= 7)"), "verified", "(N >= 4)"),
    "-N <= -4": (assumed("tle.assume(-N <= -4)"), "verified", "(N >= 4)"),
}


@pytest.mark.parametrize("name", list(ASSUMED))
def test_assumptions_on_computed_values(tmp_path, capsys, name):
    """A bound on a computed value no event uses bounds the params it is computed from: the
    kernel is verified where the bound narrows the param, bounded where it is kept (the fault's
    values are no launch), and rejected only with values a launch gives."""
    text, kind, *said = ASSUMED[name]
    path = write_kernel(tmp_path, text + CONFIG)
    code, _, err = run_dump(capsys, "-q", str(path))
    assert code == {"verified": 0, "rejected": 1, "bounded": 3}[kind], err
    if kind == "verified":
        assert "k: verified for every value of N" in err, err
    elif kind == "bounded":
        assert "k: bounded:" in err, err
    for what in said:
        assert what in err, err


def test_a_param_value_an_assumption_refuses(tmp_path, capsys):
    """`--param N=3` with `tle.assume(N // 2 >= 2)` (or `N % 2 == 0`): no launch passes it, so it
    is unusable input (exit 2), as for a bound on N itself. Before: checked, and rejected."""
    for assumption, why in (("tle.assume(N // 2 >= 2)", "outside the domain of N (N >= 4)"),
                            ("tle.assume(N >= 0)\n    tle.assume(N % 2 == 0)",
                             "give N_2 = 1 (N_2 = N % 2), outside the domain of N_2")):
        path = write_kernel(tmp_path, assumed(assumption) + CONFIG)
        code, _, err = run_dump(capsys, "-q", "--param", "N=3", str(path))
        assert code == 2 and why in err, err
        code, _, err = run_dump(capsys, "-q", "--param", "N=4", str(path))
        assert code == 0 and "verified for N = 4" in err, err


def test_a_narrowed_kernel_lowers_to_its_events(tmp_path, capsys):
    """The verified kernel with `tle.assume(N // 2 >= 2)` (no fault at all) lowers to exactly its
    events; with `N % 2 == 0` kept as a derived param it is verified for every N and lowered."""
    path = verdict(tmp_path, capsys, ring().replace("tle.assume(N >= 0)",
                                                     "tle.assume(N // 2 >= 2)") + CONFIG,
                   "verified")
    lowers_to_its_events(path)
    even = write_kernel(tmp_path, ring().replace(
        "tle.assume(N >= 0)", "tle.assume(N >= 0)\n    tle.assume(N % 2 == 0)") + CONFIG, "e.py")
    for mode in ((), ("--gluon",), ("--print-ir",)):
        code, _, err = run_dump(capsys, "-q", *mode, str(even))
        assert code == 0, (mode, err)
    assert "k: verified for every value of N (N >= 0)" in run_dump(capsys, "-q", str(even))[2]


# ---------------------------------------------------------------- the signature's argument types

I1_HANG = ring(rbody=consume("""\
    if N == 1:
        res = r.wait(0)
        t = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(0)
        tl.store(y_ptr + tl.arange(0, 64), t)
    """)).replace("tle.assume(N >= 0)", "tle.assume(0 <= N <= 1)")


def test_an_i1_protocol_argument_is_rejected(tmp_path, capsys):
    """N typed i1: the writer's `range(N)` runs no iteration at N = True (sign extension), the
    reader's `N == 1` holds (zero extension): a hang. Before: verified. Twin: typed i32, the
    same kernel is verified and lowered."""
    path = write_kernel(tmp_path, I1_HANG + CONFIG.replace('"N": "i32"', '"N": "i1"'))
    code, _, err = run_dump(capsys, "-q", str(path))
    assert code == 1 and "[signature]" in err and "typed i1" in err, err
    assert "k: verified" not in err, err
    twin = verdict(tmp_path, capsys, I1_HANG + CONFIG, "verified")
    lowers_to_its_events(twin)


def test_the_i1_loop_bound_is_sign_extended_by_triton(tmp_path, monkeypatch):
    """The oracle: Triton 3.6 widens an i1 loop bound with `arith.extsi` and the operand of a
    comparison with `arith.extui`."""
    triton = pytest.importorskip("triton")
    src = ("import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
           "def k(x_ptr, N, C: tl.constexpr):\n    acc = 0\n    for q in range(N):\n"
           "        acc += 1\n    if N == 1:\n        acc += 100\n    tl.store(x_ptr, acc)\n")
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    (tmp_path / "i1_21.py").write_text(src)
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("i1_21")
    ttir = triton.compile(ASTSource(mod.k, signature={"x_ptr": "*fp32", "N": "i1",
                                                      "C": "constexpr"}, constexprs={"C": 3}),
                          target=GPUTarget("cuda", 90, 32)).asm["ttir"]
    assert "arith.extsi %N : i1 to i32" in ttir and "arith.extui %N : i1 to i32" in ttir


def test_compile_kernel_refuses_an_i1_protocol_argument(tmp_path):
    pytest.importorskip("triton.experimental.gluon")
    from tle_compiler.diagnostics import TleError
    from tle_compiler.lowering import compile_kernel

    path = write_kernel(tmp_path, I1_HANG + CONFIG)
    with pytest.raises(TleError, match="typed i1"):
        compile_kernel((str(path), "k"), {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i1"},
                       {"C": 3})


@pytest.mark.parametrize("typ, said", [("i64", "typed i64"), ("u32", "typed u32"),
                                       ("fp32", "typed fp32")])
def test_other_argument_types(tmp_path, capsys, typ, said):
    """Twins: i64, u32 and fp32 protocol arguments stay rejected (signature)."""
    path = write_kernel(tmp_path, ring() + CONFIG.replace('"N": "i32"', f'"N": "{typ}"'))
    code, _, err = run_dump(capsys, "-q", str(path))
    assert code == 1 and "[signature]" in err and said in err, err


# ----------------------------------------------------------------- which kernels a file holds

def test_an_async_def_kernel_fails_the_file(tmp_path, capsys, monkeypatch):
    """`@tle.jit async def bad`: Python makes it a kernel. Before: left out (exit 0 with
    `good`'s verdict only). Now refused at its def (bad-jit), in every mode."""
    from tle_compiler.jit import TleKernel

    text = HEAD19 + kernel("good") + kernel("bad", "@tle.jit", " + 1").replace(
        "def bad", "async def bad") + PARTS
    (tmp_path / "async21.py").write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert isinstance(importlib.import_module("async21").bad, TleKernel)
    path = write_kernel(tmp_path, text)
    for mode in ((), ("--gluon",), ("--print-ir",)):
        code, _, err = run_dump(capsys, "-q", *mode, str(path))
        assert code == 1 and "[bad-jit]" in err and "is an `async def`" in err, (mode, err)
        assert "good: verified" not in err, (mode, err)


def test_a_kernel_defined_by_exec_fails_the_file(tmp_path, capsys, monkeypatch):
    """`exec('''@tle.jit def bad ...''')` at module level: Python makes the kernel. Before: left
    out (exit 0 with `good`'s verdict only). Now refused at the call (bad-jit), as is an exec of
    code tle-dump cannot see; `exec('B = 1')` (no def, no jit) stays allowed."""
    from tle_compiler.jit import TleKernel

    text = (HEAD19 + kernel("good") + "\nexec('''" + kernel("bad", "@tle.jit", " + 1")
            + "''')\n" + PARTS)
    (tmp_path / "exec21.py").write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert isinstance(importlib.import_module("exec21").bad, TleKernel)
    for i, body in enumerate((text, HEAD19 + "CODE = 'X = 1'\n" + kernel("good")
                              + "\nexec(CODE)\n" + PARTS)):
        code, _, err = run_dump(capsys, "-q", str(write_kernel(tmp_path, body, f"e{i}.py")))
        assert code == 1 and "[bad-jit]" in err and "runs code from a string" in err, err
    ok = HEAD19 + kernel("good") + "\nexec('B = 1')\nZ = B\n" + PARTS
    code, _, err = run_dump(capsys, "-q", str(write_kernel(tmp_path, ok, "ok.py")))
    assert code == 0 and "good: verified" in err, err


def _indent(s: str) -> str:
    return textwrap.indent(s, "    ")


BAD = kernel("bad", "@tle.jit", " + 1")
FILES = {
    "a module-level try": ("\ntry:\n" + _indent(BAD) + "\nexcept Exception:\n    pass\n",
                           1, "inside a module-level `try`"),
    "a module-level with": ("\nimport contextlib\nwith contextlib.nullcontext():\n" + _indent(BAD),
                            1, "inside a module-level `with`"),
    "a module-level for": ("\nfor _i in range(1):\n" + _indent(BAD), 1,
                           "inside a module-level `for`"),
    "a module-level while": ("\nwhile True:\n" + _indent(BAD) + "    break\n", 1,
                             "inside a module-level `while`"),
    "a module-level match": ("\nmatch 1:\n    case 1:\n" + _indent(_indent(BAD)), 1,
                             "inside a module-level `match`"),
    "@tle.jit() read as @tle.jit": (kernel("bad", "@tle.jit()", " + 1"), 1,
                                    "[wait-never-committed]"),
    "@(tle.jit) read as @tle.jit": (kernel("bad", "@(tle.jit)", " + 1"), 1,
                                    "[wait-never-committed]"),
}


@pytest.mark.parametrize("name", list(FILES))
def test_kernels_python_makes_are_read_or_refused(tmp_path, capsys, name):
    """Twins: a faulty kernel beside `good` fails the file, whether tle-dump reads it (rejected)
    or refuses where it is defined (bad-jit)."""
    text, code, said = FILES[name]
    path = write_kernel(tmp_path, HEAD19 + kernel("good") + text + PARTS)
    got, _, err = run_dump(capsys, "-q", str(path))
    assert got == code and said in err, err


# ----------------------------------------------------------------- protocols: the true answers

TWO = """import triton.language as tl
import tle_compiler as tle


@tle.jit
def k(x_ptr, y_ptr, N, C: tl.constexpr):
    tle.assume(N >= 0)
    a = tle.pipe(capacity=CA, tile=tle.gpu.alloc([CA, 64], tl.float32))
    b = tle.pipe(capacity=CB, tile=tle.gpu.alloc([CB, 64], tl.float32))
    tle.gpu.warp_specialize([(left, (a, b, x_ptr, N)), (right, (a, b, y_ptr, N))], [4], [232])


def left(a, b, x_ptr, N):
    w = a.writer()
    r = b.reader()
LEFT


def right(a, b, x_ptr, N):
    r = a.reader()
    w = b.writer()
RIGHT
"""


def _put(h: str, i: str, ind: str = "        ") -> str:
    return textwrap.indent(put(i).replace("w.", f"{h}."), ind)


def _get(h: str, i: str, ind: str = "        ") -> str:
    return (f"{ind}res = {h}.wait({i})\n{ind}t = tl.load(tle.gpu.local_ptr(res.slot.tile))\n"
            f"{ind}{h}.release({i})\n")


def two(left: str, right: str, ca: int = 2, cb: int = 2) -> str:
    """Partitions `left` (writes a, reads b) and `right` (reads a, writes b)."""
    return (TWO.replace("CA", str(ca)).replace("CB", str(cb)).replace("LEFT", left.rstrip("\n"))
            .replace("RIGHT", right.rstrip("\n")))


LOOP = "    for p in range(N):\n"
LAG2 = (LOOP + _put("w", "p") + "        if p > 1:\n" + _get("r", "p - 2", "            ")
        + "    if N > 1:\n" + _get("r", "N - 2") + "    if N > 0:\n" + _get("r", "N - 1"))
PAIRS = consume("""\
    for q in range(N // 2):
        a = r.wait(2 * q)
        b = r.wait(2 * q + 1)
        ta = tl.load(tle.gpu.local_ptr(a.slot.tile))
        tb = tl.load(tle.gpu.local_ptr(b.slot.tile))
        r.release(2 * q + 1)
        r.release(2 * q)
        tl.store(y_ptr + tl.arange(0, 64), ta + tb)
    """)
NEST4 = ("for j in range(4):\n" + textwrap.indent(put("4 * i + j"), "    "))
W_S = writer(pre="S = -1\n", loop="for q in range(N, 0, S):", idx="N - q")

PROTOCOLS = {
    # strides and steps
    "a stride 2p + 1 on both sides": (ring(writer(idx="2*p+1"), reader(idx="2*p+1")),
                                      "verified"),
    "a stride 2p on a ring of 2 (one stage)": (ring(writer(idx="2*p"), reader(idx="2*p")),
                                               "verified"),
    "step 2 on both sides": (ring(writer(loop="for p in range(0, N, 2):"),
                                  reader(loop="for p in range(0, N, 2):")),
                             ("bounded", "only for N in [0, 64]")),
    "step 2, the reader one behind": (
        ring(writer(loop="for p in range(0, N, 2):"),
             reader(loop="for p in range(1, N, 2):", idx="p-1")),
        REJECTED + ("[unconsumed]", "when N=1")),
    "step 3 against 3 * tl.cdiv(N, 3)": (
        ring(writer(loop="for p in range(0, N, 3):"),
             reader(loop="for p in range(0, tl.cdiv(N,3)):", idx="3*p")),
        REJECTED + ("[phase-aliasing]",)),
    "a remainder of the loop variable as the index": (
        ring(writer(idx="p % 2"), reader(idx="p % 2")), REJECTED + ("[non-affine]",)),
    "a runtime step": (
        ring(writer(loop="for p in range(0, N, N):")), REJECTED + ("[non-affine-loop]",)),
    # S is an i32 tensor in Triton 3.6: a tensor step is not reversed, and scf.for runs no
    # iteration from N down to 0 (plain Triton's TTIR of the loop has none)
    "a negative step through a partition name S = -1 (a tensor: not reversed)": (
        ring(W_S).replace("tle.assume(N >= 0)", "tle.assume(0 <= N <= 6)"),
        REJECTED + ("[bad-loop]", "runs no iteration")),
    "a negative step through S = -1, the index one ahead": (
        ring(writer(pre="S = -1\n", loop="for q in range(N, 0, S):", idx="N - q + 1")),
        REJECTED + ("[bad-loop]", "runs no iteration")),
    "tl.static_range(C) against range(3), read generically": (
        ring(writer(loop="for p in tl.static_range(C):"), reader(loop="for p in range(3):")),
        NEVER + ("when C=0",)),
    # commits under data, early returns
    "a commit under a condition on a loaded value": (
        ring(writer(body="slot = w.acquire(p)\nv = tl.load(x_ptr)\ntl.store(tle.gpu.local_ptr("
                         "slot.tile), tl.load(x_ptr + tl.arange(0, 64)))\nif v > 0:\n"
                         "    w.commit(p)\n")), REJECTED + ("[non-affine-if]",)),
    "an early return on a loaded value after the last event": (
        ring(writer(post="if tl.load(x_ptr) > 0:\n    return\n")), "verified, compiled"),
    # (round FR20: read as an if / else, the writer skipping every commit the reader waits)
    "an early return before the events": (
        ring(writer(pre="if N > 5:\n    return\n")), REJECTED + ("[wait-never-committed]",)),
    "a return inside the loop": (
        ring(rbody=reader().replace("        r.release(p)\n", "        r.release(p)\n"
                                    "        if p == 3:\n            return\n")),
        REJECTED + ("[unsupported-control-flow]",)),
    # two pipes in opposite directions
    "ping-pong": (two(LOOP + _put("w", "p") + _get("r", "p"),
                      LOOP + _get("r", "p") + _put("w", "p")), "verified"),
    "a cross: left waits b first, right commits b first": (
        two(LOOP + _get("r", "p") + _put("w", "p"), LOOP + _put("w", "p") + _get("r", "p")),
        "verified"),
    "both wait first: a cycle": (
        two(LOOP + _get("r", "p") + _put("w", "p"), LOOP + _get("r", "p") + _put("w", "p")),
        REJECTED + ("[deadlock]", "when N=1")),
    "left fills a before reading b (b of capacity 1): a cycle at N = 5": (
        two(LOOP + _put("w", "p") + LOOP + _get("r", "p"), LOOP + _get("r", "p") + _put("w", "p"),
            2, 1), REJECTED + ("[deadlock]", "when N=5")),
    "both fill before reading: a cycle at N = 3": (
        two(LOOP + _put("w", "p") + LOOP + _get("r", "p"), LOOP + _put("w", "p") + LOOP
            + _get("r", "p")), REJECTED + ("[deadlock]", "when N=3")),
    "left reads b two behind, capacities 1": (
        two(LAG2, LOOP + _get("r", "p") + _put("w", "p"), 1, 1), "verified"),
    "left reads b one behind, capacities 1": (
        two(LOOP + _put("w", "p") + "        if p > 0:\n" + _get("r", "p - 1", "            ")
            + "    if N > 0:\n" + _get("r", "N - 1"), LOOP + _get("r", "p") + _put("w", "p"), 1, 1),
        "verified"),
    # nested loops
    "a nest of 4 per tile against a flat reader": (
        ring(writer(loop="for i in range(N):", body=NEST4), reader(loop="for p in range(4 * N):")),
        ("bounded", "only for N in [0, 64]")),
    "a nest of 4 per tile, the reader one short": (
        ring(writer(loop="for i in range(N):", body=NEST4),
             reader(loop="for p in range(4 * N - 1):")), REJECTED + ("[unconsumed]",)),
    "a nest over N, the index N * i + j": (
        ring(writer(loop="for i in range(N):", body=NEST4.replace("range(4)", "range(N)")
                    .replace("4 * i", "N * i")), reader(loop="for p in range(N * N):")),
        REJECTED + ("[non-affine]",)),
    # what the reader holds
    "two held, released out of order": (ring(rbody=PAIRS, warg="(N // 2) * 2"),
                                        ("bounded", "only for N_2 in [0, 64]")),
    "two held, released out of order, one read after its release": (
        ring(rbody=PAIRS.replace("        ta = tl.load(tle.gpu.local_ptr(a.slot.tile))\n", "")
             .replace("        r.release(2 * q)\n",
                      "        r.release(2 * q)\n        ta = tl.load(tle.gpu.local_ptr("
                      "a.slot.tile))\n"), warg="(N // 2) * 2"),
        REJECTED + ("[access-outside-window]",)),
    # slot pointers kept past their window
    "a slot pointer stored through after the commit": (
        ring(writer(body="slot = w.acquire(p)\nptr = tle.gpu.local_ptr(slot.tile)\n"
                         "tl.store(ptr, tl.load(x_ptr + tl.arange(0, 64)))\nw.commit(p)\n"
                         "tl.store(ptr, tl.load(x_ptr + tl.arange(0, 64)))\n")),
        REJECTED + ("[access-outside-window]",)),
    "the first slot written again in every later window": (
        ring(writer(pre=put("0"), loop="for p in range(1, N):",
                    body="slot = w.acquire(p)\ntl.store(tle.gpu.local_ptr(slot.tile), "
                         "tl.load(x_ptr + tl.arange(0, 64)))\ntl.store(tle.gpu.local_ptr("
                         "s0.tile), tl.load(x_ptr + tl.arange(0, 64)))\nw.commit(p)\n")
             .replace("    slot = w.acquire(0)\n    tl.store(tle.gpu.local_ptr(slot.tile)",
                      "    s0 = w.acquire(0)\n    tl.store(tle.gpu.local_ptr(s0.tile)"))
        .replace("tle.assume(N >= 0)", "tle.assume(N >= 1)"),
        REJECTED + ("[access-outside-window]", "when N=2")),
    "a slot carried to the next iteration": (
        ring(writer(pre="prev = w.acquire(0)\ntl.store(tle.gpu.local_ptr(prev.tile), "
                        "tl.load(x_ptr + tl.arange(0, 64)))\nw.commit(0)\n",
                    loop="for p in range(1, N):",
                    body=put() + "tl.store(tle.gpu.local_ptr(prev.tile), tl.load(x_ptr + "
                                 "tl.arange(0, 64)))\nprev = slot\n")),
        REJECTED + ("cannot tell which slot",)),
    "a reader's pointer from a helper, read after the release": (
        ring(rbody=consume("""\
            for p in range(N):
                res = r.wait(p)
                ptr = getp(res)
                r.release(p)
                t = tl.load(ptr)
                tl.store(y_ptr + tl.arange(0, 64), t)
            """), extra="\n\ndef getp(res):\n    return tle.gpu.local_ptr(res.slot.tile)\n"),
        REJECTED + ("[access-outside-window]",)),
    # derived params of a negative divisor, C's remainder of a shifted count
    "N % -3 on both sides": (ring(writer(), reader(), warg="M", rarg="M").replace(
        "tle.assume(N >= 0)", "tle.assume(N >= 0)\n    M = N % -3"), "verified, compiled"),
    "(N - 7) % 3 is C's remainder (-1 at N = 0)": (
        ring(writer(loop="for p in range(N + 2):"), reader(loop="for p in range(0):"),
             warg="M", rarg="M").replace("tle.assume(N >= 0)",
                                         "tle.assume(N >= 0)\n    M = (N - 7) % 3"),
        REJECTED + ("[unconsumed]", "when N=0 (M=-1)")),
    # conditions C and Python compute differently
    "(p - 3) % 2 == 1 is C's remainder (-1 at p = 0)": (
        conditional("(p - 3) % 2 == 1", "p % 2 == 0"), NEVER + ("when N=1, p=0",)),
    "(p - 3) % 2 != 0 against p % 2 == 0": (
        conditional("(p - 3) % 2 != 0", "p % 2 == 0"), "verified"),
    "(-p) % 3 == 1 is C's remainder": (
        conditional("(-p) % 3 == 1", "p % 3 == 2"), NEVER + ("when N=3, p=2",)),
    "(p - 3) // 2 in a condition": (conditional("(p - 3) // 2 < 0", "p < 3"),
                                    REJECTED + ("[non-affine-if]",)),
    "p & 1 in a condition": (conditional("p & 1", "p % 2 == 1"), REJECTED + ("[non-affine-if]",)),
    "p - 4 >> 1 in a condition": (conditional("(p - 4) >> 1 < 0", "p < 4"),
                                  REJECTED + ("[non-affine-if]",)),
    "not p": (conditional("not p", "p == 0"), REJECTED + ("[unsupported-expression]",)),
    "a float comparison": (conditional("p < 2.5", "p <= 2"), REJECTED + ("[non-affine-if]",)),
}


@pytest.mark.parametrize("name", list(PROTOCOLS))
def test_protocols(tmp_path, capsys, name):
    """The verdict is the true answer: a hang (a wait never committed, a cycle), a race (a read
    after the release), a fault rejected at its line; a construct refused; what is safe verified
    and lowered to exactly its events."""
    text, expect = PROTOCOLS[name]
    path = verdict(tmp_path, capsys, text + CONFIG, expect.split(",")[0] if isinstance(
        expect, str) else expect)
    if expect == "verified":
        lowers_to_its_events(path)
    elif expect == "verified, compiled":
        # (the events oracle runs no return under a condition on data, and drives no param
        # outside the values its definition gives): compiled for sm_90a
        pytest.importorskip("triton.experimental.gluon")
        from tle_compiler.lowering import compile_kernel

        compile_kernel((str(path), "k"), {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"},
                       {"C": 3})


# --------------------------------------------------------------- the kernel body and partitions

WS = ("    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N, C)), (consume, (kv, y_ptr, N, C))],\n"
      "                            [4], [232])\n")
STRUCTURE = {
    "warp_specialize twice": (ring().replace(WS, WS + WS), "[bad-warp-specialize]"),
    "warp_specialize in a loop": (ring().replace(WS, "    for it in range(2):\n" + _indent(WS)),
                                  "[bad-warp-specialize]"),
    "warp_specialize under an if": (ring().replace(WS, "    if N > 0:\n" + _indent(WS)),
                                     "[bad-warp-specialize]"),
    # (`E=1` is a constexpr Gluon binds, as an annotated one, since lowering adversarial
    # round 19: a default that is no number stays refused)
    "a partition parameter with a default": (
        ring().replace("def consume(kv, y_ptr, N, C: tl.constexpr):",
                       "def consume(kv, y_ptr, N, C: tl.constexpr, E=None):"), "[bad-call]"),
    "an async partition": (ring().replace("def consume(", "async def consume("),
                           "[unknown-partition]"),
    "a try around events": (ring(rbody="    try:\n" + _indent(reader())
                                 + "    except Exception:\n        pass\n"),
                            "[unsupported-control-flow]"),
    "a with around events": (ring(rbody="    with tl.static_range(1):\n" + _indent(reader())),
                             "[unsupported-control-flow]"),
    "a raise in a partition": (ring(rbody="    if N > 3:\n        raise ValueError('x')\n"
                                    + reader()), "[unsupported-statement]"),
    "del in a partition": (ring(rbody=reader() + "    del r\n"), "[unsupported-statement]"),
    "global in a partition": (ring(rbody="    global GG\n" + reader()), "[unsupported-statement]"),
    "a false tl.static_assert": (ring(rbody="    tl.static_assert(C == 4)\n" + reader()),
                                 "[unsupported-expression]"),
    "a capacity constant rebound to 1 after the kernel (pairs held)": (
        ring(rbody=PAIRS, warg="(N // 2) * 2", prelude="CAP = 2\n").replace(
            "capacity=2, tile=tle.gpu.alloc([2, 64]", "capacity=CAP, tile=tle.gpu.alloc([CAP, 64]")
        + "\nCAP = 1\n", "[wait-on-held-stage]"),
}


@pytest.mark.parametrize("name", list(STRUCTURE))
def test_structure_refused(tmp_path, capsys, name):
    """Twins: what the reading refuses, or the fault the module's last binding gives, at exit 1."""
    text, check = STRUCTURE[name]
    path = write_kernel(tmp_path, text + CONFIG)
    code, _, err = run_dump(capsys, "-q", str(path))
    assert code == 1 and check in err, err
    assert "k: verified" not in err, err


KB_WRITER = writer(loop="for p in range(8):", body="if N > 0:\n" + textwrap.indent(put(), "    "))
ACCEPTED = {
    "parameters spelt in another order": ring().replace(
        "def produce(kv, x_ptr, N, C: tl.constexpr):",
        "def produce(x_ptr, kv, N, C: tl.constexpr):")
    .replace("(produce, (kv, x_ptr, N, C))", "(produce, (x_ptr, kv, N, C))"),
    "a capacity that is a module constant": ring(prelude="CAP = 2\n").replace(
        "capacity=2, tile=tle.gpu.alloc([2, 64]", "capacity=CAP, tile=tle.gpu.alloc([CAP, 64]"),
    "assert, print, tl.static_assert and tl.device_assert in a partition": ring(
        rbody="    assert N >= 0\n    print('n', N)\n    tl.static_assert(C == 3)\n"
              "    tl.device_assert(N >= 0)\n" + reader()),
}


@pytest.mark.parametrize("name", list(ACCEPTED))
def test_accepted_and_lowered(tmp_path, capsys, name):
    """Twins: verified, and lowered (`--gluon`) to exactly the verified events."""
    path = verdict(tmp_path, capsys, ACCEPTED[name] + CONFIG, "verified")
    code, out, err = run_dump(capsys, "-q", "--gluon", str(path))
    assert code == 0, err
    lowers_to_its_events(path)


# a kernel-body value past i32 (K = 2147483647; K = K + 1 wraps in Triton's kernel body) or of
# C's remainder (K = -7; K %= 3 is -1 there), passed to a partition: pinned verified and lowered
# as a constexpr of Python's value (2147483648, 2) until lowering adversarial round 11, where
# Triton hands the partition its i32 tensor (-2147483648, -1); refused at the warp_specialize
# call since (tests/test_lowering_adversarial_11.py)
PASSED_PAST_I32 = {
    "K = 2147483647; K = K + 1 passed to a partition": ring(
        KB_WRITER, reader(loop="for p in range(8):"), warg="K").replace(
        "tle.assume(N >= 0)", "tle.assume(N >= 0)\n    K = 2147483647\n    K = K + 1"),
    "K = 2147483647; K += 1 passed to a partition": ring(
        KB_WRITER, reader(loop="for p in range(8):"), warg="K").replace(
        "tle.assume(N >= 0)", "tle.assume(N >= 0)\n    K = 2147483647\n    K += 1"),
    "K = -7; K %= 3 passed to a partition": ring(
        KB_WRITER, reader(loop="for p in range(8):"), warg="K").replace(
        "tle.assume(N >= 0)", "tle.assume(N >= 0)\n    K = -7\n    K %= 3"),
}


@pytest.mark.parametrize("name", list(PASSED_PAST_I32))
def test_a_kernel_body_value_triton_computes_otherwise_passed_to_a_partition(tmp_path, capsys,
                                                                             name):
    verdict(tmp_path, capsys, PASSED_PAST_I32[name] + CONFIG,
            ("rejected", "[unsupported-expression]", "is handed to a partition"))


# ------------------------------------------------ three partitions, a named pipe, chosen handles

THREE = """import triton.language as tl
import tle_compiler as tle


@tle.jit
def k(x_ptr, y_ptr, N, C: tl.constexpr):
    tle.assume(N >= 0)
    a = tle.pipe(capacity=1, tile=tle.gpu.alloc([1, 64], tl.float32))
    b = tle.pipe(capacity=1, tile=tle.gpu.alloc([1, 64], tl.float32))
    c = tle.pipe(capacity=1, tile=tle.gpu.alloc([1, 64], tl.float32))
    tle.gpu.warp_specialize([(p0, (a, b, c, x_ptr, N)), (p1, (a, b, c, x_ptr, N)),
                             (p2, (a, b, c, x_ptr, N))], [4, 4], [232, 232])


def p0(a, b, c, x_ptr, N):
    w = a.writer()
    r = c.reader()
P0


def p1(a, b, c, x_ptr, N):
    r = a.reader()
    w = b.writer()
P1


def p2(a, b, c, x_ptr, N):
    r = b.reader()
    w = c.writer()
P2
"""
RELAY = LOOP + _get("r", "p") + _put("w", "p")
AHEAD3 = (LOOP + _put("w", "p") + "        if p > 2:\n" + _get("r", "p - 3", "            ")
          + "".join(f"    if N > {k - 1}:\n" + _get("r", f"N - {k}") for k in (3, 2, 1)))

NAMED = """import triton.language as tl
import tle_compiler as tle


@tle.jit
def k(x_ptr, y_ptr, N, C: tl.constexpr):
    tle.assume(N >= 0)
    a = tle.pipe(capacity=1, barrier="named", tile=tle.gpu.alloc([1, 64], tl.float32))
    b = tle.pipe(capacity=1, tile=tle.gpu.alloc([1, 64], tl.float32))
    tle.gpu.warp_specialize([(left, (a, b, x_ptr, N)), (right, (a, b, x_ptr, N))], [4], [232])


def left(a, b, x_ptr, N):
    w = a.writer()
    r = b.reader()
LEFT


def right(a, b, x_ptr, N):
    r = a.reader()
    w = b.writer()
RIGHT
"""

CHOSEN = """import triton.language as tl
import tle_compiler as tle


@tle.jit
def k(x_ptr, y_ptr, N, C: tl.constexpr):
    tle.assume(N >= 0)
    a = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    b = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (a, b, x_ptr, N)), (consume, (a, b, x_ptr, N))], [4],
                            [232])


def produce(a, b, x_ptr, N):
    wa = a.writer()
    wb = b.writer()
    for p in range(N):
CHOICE
        s = h.acquire(p)
        tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + tl.arange(0, 64)))
        h.commit(p)


def consume(a, b, x_ptr, N):
    ra = a.reader()
    rb = b.reader()
    for p in range(N):
        res = ra.wait(p)
        t = tl.load(tle.gpu.local_ptr(res.slot.tile))
        ra.release(p)
"""

MORE = {
    "three partitions in a ring, each relaying": (
        THREE.replace("P0", LOOP + _put("w", "p") + _get("r", "p")).replace("P1", RELAY)
        .replace("P2", RELAY), "verified"),
    "three partitions, each waiting first: a cycle": (
        THREE.replace("P0", RELAY).replace("P1", RELAY).replace("P2", RELAY),
        REJECTED + ("[deadlock]", "when N=1")),
    "three partitions, the first three tiles ahead (capacities 1)": (
        THREE.replace("P0", AHEAD3).replace("P1", RELAY).replace("P2", RELAY), "verified"),
    "a named pipe, its release implied by the return commit": (
        NAMED.replace("LEFT", LOOP + _put("w", "p") + _get("r", "p")).replace(
            "RIGHT", LOOP + _get("r", "p") + _put("w", "p")), "verified"),
    "a named pipe, the return commit before the release": (
        NAMED.replace("LEFT", LOOP + _put("w", "p") + _get("r", "p")).replace(
            "RIGHT", LOOP + "        res = r.wait(p)\n" + _put("w", "p")
            + "        r.release(p)\n"), REJECTED + ("[named-release]",)),
    "a named pipe, the return pipe read one tile late": (
        NAMED.replace("LEFT", LOOP + _put("w", "p") + "        if p > 0:\n"
                      + _get("r", "p - 1", "            ") + "    if N > 0:\n"
                      + _get("r", "N - 1")).replace(
            "RIGHT", LOOP + _get("r", "p") + _put("w", "p")), REJECTED + ("[named-release]",)),
    "a handle chosen by a condition on a param": (
        CHOSEN.replace("CHOICE", "        h = wa if N > 0 else wb"),
        REJECTED + ("[unknown-handle]",)),
    "a handle chosen by a condition on data": (
        CHOSEN.replace("CHOICE", "        h = wa\n        if tl.load(x_ptr) > 0:\n"
                                 "            h = wb"), REJECTED + ("holds different values",)),
    "a handle indexed by the loop variable": (
        CHOSEN.replace("CHOICE", "        h = (wa, wb)[p % 2]"),
        REJECTED + ("a tuple's index must be a constant",)),
}


@pytest.mark.parametrize("name", list(MORE))
def test_more_protocols(tmp_path, capsys, name):
    """Twins: three partitions, named pipes and handles chosen at run time get the true answer."""
    text, expect = MORE[name]
    path = verdict(tmp_path, capsys, text + CONFIG, expect)
    if expect == "verified":
        lowers_to_its_events(path)


# --------------------------------------------------- a kernel-body bool passed to a partition

def bool_ring(pre: str, wloop: str = "for p in range(N):", rloop: str = "for p in range(N):",
              wpost: str = "", rcond: str = "") -> str:
    """The ring, the kernel body binding ``pre`` (B) before warp_specialize and passing B to
    both partitions; the writer loops ``wloop`` then runs ``wpost``, the reader loops ``rloop``
    and waits tile N more under ``rcond``."""
    rbody = reader(loop=rloop)
    if rcond:
        rbody += f"    if {rcond}:\n        res = r.wait(N)\n        r.release(N)\n"
    return (ring(writer(loop=wloop, post=wpost), rbody, warg="N, B", rarg="N, B")
            .replace("tle.assume(N >= 0)", "tle.assume(N >= 0)\n    " + pre)
            .replace("def consume(kv, y_ptr, N, C", "def consume(kv, y_ptr, N, B, C")
            .replace("def produce(kv, x_ptr, N, C", "def produce(kv, x_ptr, N, B, C"))


EXTRA_AFTER_6 = "if N > 6:\n" + textwrap.indent(put("N"), "    ")
BOOLS = {
    # Triton computes -B in i1 (B itself), widened to 1: the reader waits N + 3 tiles for the
    # writer's N + 1 at N = 6. Before: verified with --param N=6 (bounded without it)
    "-B + N + 2 * B against N + B": (
        bool_ring("B = N > 5", "for p in range(N + B):", "for p in range(-B + N + 2 * B):"),
        ("--param", "N=6"), 1, "negates a bool"),
    "N + ~B + 1": (bool_ring("B = N > 5", rloop="for p in range(N + ~B + 1):"), (), 1,
                   "negates a bool"),
    "B + B + N (two bools added in i1)": (
        bool_ring("B = N > 5", "for p in range(N + 2 * B):", "for p in range(B + B + N):"),
        (), 1, "adds or subtracts two bools"),
    # twins: arithmetic Triton computes as Python does (the bool widened to 1 beside an i32)
    "N + B on both sides": (bool_ring("B = N > 5", "for p in range(N + B):",
                                      "for p in range(N + B):"), ("--param", "N=6"), 0, ""),
    "N - 2 * B + B against N - B": (
        bool_ring("B = N > 5", "for p in range(N - B):", "for p in range(N - 2 * B + B):"),
        ("--param", "N=6"), 0, ""),
    # B = N > 5 is a derived param (1 where it holds): the fault needs a value no launch gives
    # (N = 0, B = 1). Before: rejected "when N=0, B=-1"
    "if B: one tile more, the writer's under N > 6": (
        bool_ring("B = N > 6", wpost=EXTRA_AFTER_6, rcond="B"), (), 3,
        "needs derived values no checked value of N gives"),
    "if B and N > 6 (B = N != 0, an i1 to `and`)": (
        bool_ring("B = N != 0", wpost=EXTRA_AFTER_6, rcond="B and N > 6"), (), 3,
        "needs derived values"),
    # twins: a fault a launch gives is rejected with it
    "if B with B = N > 5, the writer's under N > 6": (
        bool_ring("B = N > 5", wpost=EXTRA_AFTER_6, rcond="B"), (), 1, "(when N=6 (B=1))"),
    "if not B with B = N > 6": (
        bool_ring("B = N > 6", wpost=EXTRA_AFTER_6, rcond="not B"), (), 1, "(when N=0 (B=0))"),
    "if B with B = N == 7": (bool_ring("B = N == 7", wpost=EXTRA_AFTER_6, rcond="B"), (), 1,
                             "(when N=8 (B=0))"),
    "--param N=5 with B = N > 5": (bool_ring("B = N > 5", wpost=EXTRA_AFTER_6, rcond="B"),
                                   ("--param", "N=5"), 0, "verified for N = 5 (B = 0)"),
    # a bound on the comparison itself: its definition wraps in i32 where the comparison does
    # not, so a launch could not check it as the GPU computes it
    "tle.assume(B >= 1) with B = N > 6": (
        bool_ring("B = N > 6\n    tle.assume(B >= 1)", wpost=EXTRA_AFTER_6, rcond="B"), (), 1,
        "[bad-assume]"),
    # an integer given to `and` stays refused
    "if B and N > 6 with B = N (an i32 to `and`)": (
        bool_ring("B = N", wpost=EXTRA_AFTER_6, rcond="B and N > 6"), (), 1,
        "`and` of the runtime integer `B`"),
}


@pytest.mark.parametrize("name", list(BOOLS))
def test_a_kernel_body_bool_passed_to_partitions(tmp_path, capsys, name):
    """A bool the kernel body computes from params (`B = N > 5`) is an i1 in the partitions it
    is passed to: `-B`, `~B` and `B + B` compute in i1 there (refused as values the verifier
    does not model), and it is a derived param of [0, 1], so a fault is reported with values a
    launch gives."""
    text, args, code, said = BOOLS[name]
    path = write_kernel(tmp_path, text + CONFIG)
    got, _, err = run_dump(capsys, "-q", *args, str(path))
    assert got == code and said in err, err
    if code:
        assert "k: verified" not in err, err


def test_the_i1_negation_oracle(tmp_path, monkeypatch):
    """Triton 3.6 computes `-B + N + 2 * B` of a bool B passed to a function as `extui(0 - B) +
    N + 2 * extui(B)`: the negation stays in i1."""
    triton = pytest.importorskip("triton")
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    src = ("import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
           "def part(x_ptr, N, B):\n    tl.store(x_ptr, -B + N + 2 * B)\n\n\n@triton.jit\n"
           "def k(x_ptr, N, C: tl.constexpr):\n    B = N > 5\n    part(x_ptr, N, B)\n")
    (tmp_path / "neg21.py").write_text(src)
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("neg21")
    ttir = triton.compile(ASTSource(mod.k, signature={"x_ptr": "*i32", "N": "i32",
                                                      "C": "constexpr"}, constexprs={"C": 3}),
                          target=GPUTarget("cuda", 90, 32)).asm["ttir"]
    assert "arith.subi %false, %B_0 : i1" in ttir, ttir
