"""The ``.pipe`` text form of derived params: ``def NAME = EXPR`` (``Program.derived``,
ir/derived.py) and ``base NAME`` (``Program.bases``).

Before, the printer left both out: a derived param (``M = N // 2`` of a .kir or Python kernel)
printed as a param of its own, so the report of a kernel bounded because its fault needs values
no launch gives read back rejected (tests/test_adversarial_text_inputs.py). Now:

- every Definition ir/derived.py can hold prints and reads back to an equal one (its operations,
  C's or Python's ``//`` and ``%`` (``Definition.c``), the i64 mark (``Definition.wide``), nested
  operations, affine operands, names that are keywords elsewhere), and the program to the same
  verdict (hypothesis, and each form by hand);
- a base param keeps its bounds, a derived param that is a param of the protocol its own;
- a malformed definition is one error naming its line; a definition that uses a name no param,
  base param or earlier definition declares, itself, or a cycle, is refused saying so;
- a protocol without derived params prints as before (the repository's .pipe files), and the
  reports of the repository's kernels with derived params read back with their verdict.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tle_compiler.diagnostics import TleError
from tle_compiler.ir.derived import (BINARY_OPS, WIDEN, Definition, Derived, derive,
                                     undefined_divisions)
from tle_compiler.ir.expr import Affine
from tle_compiler.ir.nodes import Event, For, Param, Partition, Pipe, Program
from tle_compiler.ir.parser import parse_file, parse_module
from tle_compiler.ir.printer import definition_text, print_module, print_program, without_locations
from tle_compiler.passes import verify

from .test_adversarial_text_inputs import (DERIVED, REPO_PIPES, check_report_and_witnesses, dump,
                                           write)

ROOT = Path(__file__).resolve().parents[1]
A = Affine.of


def program(definitions: tuple[Derived, ...], params: tuple[Param, ...],
            bases: tuple[Param, ...] = (), stop: str = "M") -> Program:
    """A ring whose writer commits N indices and whose reader waits ``stop`` of them."""
    writer = Partition("w", (For("t", A(0), A("N"), 1, (Event("acquire", "p", A("t")),
                                                        Event("commit", "p", A("t")))),),
                       default=True)
    reader = Partition("r", (For("t", A(0), A(stop), 1, (Event("wait", "p", A("t")),
                                                         Event("release", "p", A("t")))),))
    return Program("k", params, (Pipe("p", 2, ()),), (writer, reader), derived=definitions,
                   bases=bases)


def round_trip(prog: Program) -> Program:
    """``prog`` printed and read back, after checking that it reads back equal (the derived
    params and bases too, which Program's equality leaves aside) and prints the same again."""
    text = print_program(prog)
    (back,) = parse_module(text).kernels
    back = without_locations(back)
    assert back == without_locations(prog), text
    assert back.derived == without_locations(prog.derived), text
    assert back.bases == without_locations(prog.bases), text
    assert print_program(back) == text
    return back


# ------------------------------------------------------------------ each form, by hand

N, K = A("N"), A("K")


def d(op, *args, c=True, wide=False) -> Definition:
    return Definition(op, tuple(args), c, wide)


FORMS = [
    ("N // 2", d("//", N, A(2))),
    ("constexpr(N // 2)", d("//", N, A(2), c=False)),
    ("N % 4", d("%", N, A(4))),
    ("constexpr(N % 4)", d("%", N, A(4), c=False)),
    ("(N + 63) // 64", d("//", N + 63, A(64))),
    ("(-N) // (-3)", d("//", -N, A(-3))),
    ("(-K + 2*N + 1) % 7", d("%", N.scale(2) - K + 1, A(7))),
    ("N << 3", d("<<", N, A(3))),
    ("N >> K", d(">>", N, K)),
    ("N & 15", d("&", N, A(15))),
    ("N | K", d("|", N, K)),
    ("N ^ 1", d("^", N, A(1))),
    ("constexpr(2 ** N)", d("**", A(2), N, c=False)),
    ("N * K", d("*", N, K)),
    ("add(N + 1, K)", d("+", N + 1, K)),
    ("sub(1, N)", d("-", A(1), N)),
    ("mul(N, 4)", d("*", N, A(4))),
    ("min(N, 4)", d("min", N, A(4))),
    ("max(N, K, 0)", d("max", N, K, A(0))),
    ("minimum(N - 1, K)", d("minimum", N - 1, K)),
    ("maximum(N)", d("maximum", N)),
    ("abs(-K + N)", d("abs", N - K)),
    ("next_power_of_2(N)", d("next_power_of_2", N)),
    ("int64(268435456*N)", d(WIDEN, N.scale(268435456))),
    ("i64(N * K)", d("*", N, K, wide=True)),
    ("constexpr(i64(N // 2))", d("//", N, A(2), c=False, wide=True)),
    ("1 - min(abs(-K + N), 1)", d("-", A(1), d("min", d("abs", N - K), A(1)))),
    ("min(max(N - 5, 0), 1)", d("min", d("max", N - 5, A(0)), A(1))),
    ("(N // 2) // 3", d("//", d("//", N, A(2)), A(3))),
    ("2 * (N // 2)", d("*", A(2), d("//", N, A(2)))),
    ("(N // 2) + 1", d("+", d("//", N, A(2)), A(1))),
    ("constexpr(runtime(N // 2) // 3)", d("//", d("//", N, A(2)), A(3), c=False)),
    ("i64(i32(N // 2) * K)", d("*", d("//", N, A(2)), K, wide=True)),
    ("constexpr(min(N, 2) ** 2)", d("**", d("min", N, A(2), c=False), A(2), c=False)),
    ("add(N, 1) // 2", d("//", d("+", N, A(1)), A(2))),
    ("(-2) ** N", d("**", A(-2), N)),
    ("`not` // 2", d("//", A("not"), A(2))),
    ("base // def", d("//", A("base"), A("def"))),
    ("min // constexpr", d("//", A("min"), A("constexpr"))),
    ("7 // 2", d("//", A(7), A(2))),
    # `N // 0` (undefined at every value) is refused: tests/test_adversarial_cli_4.py
    (f"N // {2 ** 1000}", d("//", N, A(2 ** 1000))),
]


@pytest.mark.parametrize("text, definition", FORMS, ids=[t for t, _ in FORMS])
def test_each_form_prints_and_reads_back(text, definition):
    assert definition_text(definition) == text
    names = sorted(definition.variables)
    src = "kernel k\n" + "".join(f"param {'`not`' if n == 'not' else n} any\n" for n in names) \
        + f"def M = {text}\n"
    (prog,) = parse_module(src).kernels
    (got,) = prog.derived
    assert got.name == "M" and got.definition == definition and got.loc.line == len(names) + 2
    assert print_program(prog) == src


@pytest.mark.parametrize("text, canonical", [
    ("def M = (N + 63)//64", "N + 63) // 64"),  # spacing
    ("def M = ((N) + (63)) // (64)", "N + 63) // 64"),  # parentheses
    ("def M = (63 + N) // 64 # a comment", "N + 63) // 64"),
    ("def M = runtime(N + 63 // 64)", None),  # 63 // 64 is an operation: a sum of one
])
def test_other_spellings_read_as_the_canonical_one(text, canonical):
    (prog,) = parse_module(f"kernel k\nparam N\n{text}\n").kernels
    printed = print_program(prog)
    if canonical is not None:
        assert f"def M = ({canonical}\n" in printed
    else:
        assert "def M = N + (63 // 64)\n" in printed
    assert print_program(parse_module(printed).kernels[0]) == printed


def test_a_protocol_with_bases_and_intermediates_reads_back():
    """A program count beside its program id (``num_programs = pid + 1 + later``), values
    computed on the way (no params of the protocol) and base params with bounds of each kind."""
    text = """kernel k
param pid
param NK any <= 100
base split >= 1 <= 8
base seqlen any
base later any <= 3
def num = add(pid + 1, later)
def chunk = (num + seqlen - 1) // num
def NK = constexpr(chunk // split)

pipe p capacity=2

partition w default warps=4 {
  for t in range(NK) {
    p.acquire(t)
    p.commit(t)
  }
}

partition r warps=4 {
  for t in range(NK) {
    p.wait(t)
    p.release(t)
  }
}
"""
    (prog,) = parse_module(text).kernels
    assert [p.name for p in prog.params] == ["pid", "NK"]
    assert [(b.name, b.min, b.max) for b in prog.bases] == [("split", 1, 8), ("seqlen", None, None),
                                                            ("later", None, 3)]
    assert [x.name for x in prog.derived] == ["num", "chunk", "NK"]
    assert prog.derived[2].definition == d("//", A("chunk"), A("split"), c=False)
    assert derive(prog.derived, {"pid": 2, "later": 1, "seqlen": 17, "split": 2}) == {
        "pid": 2, "later": 1, "seqlen": 17, "split": 2, "num": 4, "chunk": 5, "NK": 2}
    assert print_program(prog) == text
    round_trip(prog)


def test_a_program_without_derived_params_prints_as_before():
    prog = program((), (Param("N"), Param("M")))
    assert print_program(prog).startswith("kernel k\nparam N\nparam M\n\npipe p capacity=2\n")


# ------------------------------------------------------------------ random definitions

NAMES = ("N", "K", "x_1", "Ñ", "not", "def", "base", "min", "constexpr", "i64", "add", "int64")
CONSTS = st.one_of(st.integers(-70, 70), st.integers(-(2 ** 80), 2 ** 80))
AFFINES = st.builds(Affine, CONSTS, st.lists(st.tuples(st.sampled_from(NAMES), CONSTS),
                                             max_size=3).map(tuple))


def operations(operands):
    binary = st.tuples(st.sampled_from(BINARY_OPS), st.tuples(operands, operands))
    unary = st.tuples(st.sampled_from(("abs", "next_power_of_2", WIDEN)), st.tuples(operands))
    nary = st.tuples(st.sampled_from(("min", "max", "minimum", "maximum")),
                     st.lists(operands, min_size=1, max_size=3).map(tuple))
    # an operation whose constant right operand leaves it undefined everywhere (`N // 0`,
    # `N << -1`) is refused by the reader (tests/test_adversarial_cli_4.py): none generated
    return st.builds(lambda opargs, c, wide: Definition(opargs[0], opargs[1], c, wide),
                     st.one_of(binary, unary, nary), st.booleans(), st.booleans()
                     ).filter(lambda d: d.fault_everywhere() is None)


DEFINITIONS = st.recursive(operations(AFFINES), lambda kids: operations(st.one_of(AFFINES, kids)),
                           max_leaves=8)


@settings(max_examples=300)
@given(st.lists(DEFINITIONS, min_size=1, max_size=3), st.data())
def test_random_definitions_print_and_read_back_equal(definitions, data):
    """Definitions of every op, nested, each operation C's or Python's and i64 or not, over
    affine operands of large and negative constants and names that are keywords elsewhere:
    print → parse gives the equal IR, which prints the same; each definition may use the ones
    before it, and the values derived from random base values are the same."""
    derived: list[Derived] = []
    for i, x in enumerate(definitions):
        earlier = [y.name for y in derived]
        if earlier and data.draw(st.booleans()):
            y = x.substitute({v: A(data.draw(st.sampled_from(earlier))) for v in x.variables})
            # two names renamed to one can leave an operand constant (`0 << (N - K - 1)` is
            # `0 << -1` with both D0), which the reader refuses as operations() never draws:
            # the definition is then kept as drawn
            if y.fault_everywhere() is None:
                x = y
        derived.append(Derived(f"D{i}", x))
    defined = {y.name for y in derived}
    used = sorted(set().union(*(x.definition.variables for x in derived)) - defined)
    params = tuple(Param(n, None) for n in used if data.draw(st.booleans()))
    bases = tuple(Param(n, data.draw(st.sampled_from([None, 0, -3])),
                        max=data.draw(st.sampled_from([None, 5])))
                  for n in used if n not in {p.name for p in params})
    params += tuple(Param(y.name, None) for y in derived if data.draw(st.booleans()))
    prog = Program("k", params, (), (), derived=tuple(derived), bases=bases)
    back = round_trip(prog)
    for _ in range(3):
        env = {n: data.draw(st.integers(-40, 40)) for n in used}
        assert derive(back.derived, env) == derive(prog.derived, env)


SMALL = st.builds(Affine, st.integers(-3, 70), st.lists(st.tuples(st.just("N"), st.integers(-3, 3)),
                                                        max_size=1).map(tuple))
SMALL_DEFINITIONS = st.recursive(operations(SMALL), lambda kids: operations(st.one_of(SMALL, kids)),
                                 max_leaves=3)


@settings(max_examples=40)
@given(SMALL_DEFINITIONS, st.booleans())
def test_random_definitions_keep_their_verdict(definition, base):
    """The ring whose reader waits M of the indices the writer commits, M derived from N: the
    program read back from its text gets the verdict and the errors the program had (rejected,
    bounded where a fault needs an M no N gives, unknown). ``base``: the writer commits M
    indices too, N is a base param only (``base N any <= 64``), else both are params."""
    derived = (Derived("M", definition),)
    if base:
        prog = program(derived, (Param("M", None),), (Param("N", None, max=64),))
        prog = dataclasses.replace(prog, partitions=tuple(
            dataclasses.replace(p, body=(dataclasses.replace(p.body[0], stop=A("M")),))
            for p in prog.partitions))
    else:
        prog = program(derived, (Param("N", None, max=64), Param("M", None)))
    back = round_trip(prog)
    got = verify(back, budget=20000)
    domains = {p.name: (p.min, p.max) for p in (*prog.params, *prog.bases)}
    if undefined_divisions(derived, domains):
        # a run-time division the domains let be undefined (a divisor that may be 0): the text
        # read back is refused at its `def` (adversarial round 59), which the Program built
        # here, without the reader's obligations, is not
        assert got.verdict().kind == "rejected"
        assert any(e.check == "division-by-zero" for e in got.errors), got.errors
        return
    want = verify(prog, budget=20000)
    assert str(got.verdict()) == str(want.verdict())
    assert [e.message for e in got.errors] == [e.message for e in want.errors]


# ------------------------------------------------------------------ malformed definitions

@pytest.mark.parametrize("text, line, words", [
    ("def M = N //\n", 3, "unexpected end of line"),
    ("def M N // 2\n", 3, "expected '='"),
    ("def = N // 2\n", 3, "expected a name"),
    ("def M = N // // 2\n", 3, "unexpected '//'"),
    ("def M = N // 2 3\n", 3, "unexpected integer 3"),
    ("def M = (N // 2\n", 3, "expected"),
    ("def M = N < 2\n", 3, "unexpected '<'; expected one of '%', '&'"),
    ("def M = N + 1\n", 3, "the definition of 'M' is the affine expression 'N + 1'"),
    ("def M = N\n", 3, "is the affine expression 'N'"),
    ("def M = -(N // 2)\n", 3, "unary '-' of the operation"),
    ("def M = N * 2\n", 3, "is the affine expression '2*N'"),
    ("def M = min()\n", 3, "min(...) takes at least 1 argument, found 0"),
    ("def M = abs(N, 2)\n", 3, "abs(...) takes 1 argument, found 2"),
    ("def M = add(N)\n", 3, "add(...) takes 2 arguments, found 1"),
    ("def M = cdiv(N, 64)\n", 3, "unknown function 'cdiv' in a definition"),
    ("def M = constexpr(N + 1) // 2\n", 3, "constexpr(...) marks the operations inside it"),
    ("def M = i64(N // 2, 1)\n", 3, "i64(...) takes one operation"),
    (f"def M = N // {2 ** 1025}\n", 3, "integer literal of 1026 bits"),
    (f"def M = {2 ** 1000}*{2 ** 1000}*N // 2\n", 3, "an integer of"),
    ("base N >= 1 >= 2\n", 3, "base param 'N' has two lower bounds"),
    ("base N >= 3 <= 2\n", 3, "base param 'N' has an empty range [3, 2]"),
    ("base N =\n", 3, "unexpected '='"),
])
def test_a_malformed_definition_is_one_error_at_its_line(tmp_path, text, line, words):
    src = "kernel k\nparam P\n" + text + "\npipe p capacity=1\n"
    with pytest.raises(TleError) as e:
        parse_module(src)
    assert words in e.value.message, e.value.message
    assert e.value.loc.line == line and e.value.message.endswith(f"at {line}:{e.value.loc.column}")
    path = write(tmp_path, "bad.pipe", src)
    code, out, err = dump(path)
    assert code == 2 and err.startswith(f"{path}:{line}:"), err
    assert len(err.strip().splitlines()) == 1


def test_a_definition_before_any_kernel_is_refused():
    with pytest.raises(TleError, match=r"expected 'kernel NAME' before the first 'def' declaration"
                                       r" at 1:1"):
        parse_module("def M = N // 2\nkernel k\n")
    with pytest.raises(TleError, match=r"before the first 'base' declaration at 1:1"):
        parse_module("base N\nkernel k\n")


def test_a_missing_brace_before_a_definition_names_the_block():
    with pytest.raises(TleError, match=r"unterminated block: this '\{' has no matching '\}' "
                                       r"\(before the 'def' declaration at 5:1\) at 3:29"):
        parse_module("kernel k\npipe p capacity=1\npartition w default warps=4 {\n"
                     "  p.acquire(0)\ndef M = N // 2\n")


# ------------------------------------------------------------------ names a definition uses

@pytest.mark.parametrize("defs, line, column, message", [
    ("def M = K // 2", 3, 9,
     "the definition of 'M' refers to 'K', which is no param, base param or definition of "
     "kernel 'k' (declare it: 'param K' or 'base K')"),
    ("def M = min(N, M)", 3, 16, "the definition of 'M' refers to 'M' itself"),
    ("def M = N // 2\ndef K = M // 3\ndef M = N % 2", 5, 1,
     "'M' is defined twice (first at line 3)"),
    ("def M = K // 2\ndef K = M // 3", 3, 9,
     "the definitions of K, M refer to each other (M -> K -> M)"),
    ("def A = B // 2\ndef B = C // 2\ndef C = A // 2", 3, 9,
     "the definitions of A, B, C refer to each other (A -> B -> C -> A)"),
    ("def M = K // 2\ndef K = N // 3", 3, 9,
     "the definition of 'M' refers to 'K', defined after it (line 4): list each definition "
     "after the definitions it uses"),
    ("base B\ndef B = N // 2", 4, 1, "'B' is a base param (line 3): a base param is one no "
                                      "definition computes"),
    ("base N", 3, 1, "base param 'N' is also a param of kernel 'k' (line 2)"),
    ("base B\nbase B <= 3", 4, 1, "base param 'B' is declared twice (first at line 3)"),
])
def test_a_definition_over_undeclared_names_or_a_cycle_is_refused(tmp_path, defs, line, column,
                                                                   message):
    src = f"kernel k\nparam N\n{defs}\n"
    with pytest.raises(TleError) as e:
        parse_module(src)
    assert e.value.message.startswith(message), e.value.message
    assert (e.value.loc.line, e.value.loc.column) == (line, column), e.value.message
    path = write(tmp_path, "bad.pipe", src)
    code, _, err = dump(path)
    assert code == 2 and err.startswith(f"{path}:{line}: error: {message}"), err
    assert err.rstrip().endswith(f" at {line}:{column}") and len(err.strip().splitlines()) == 1


def test_definitions_may_come_before_the_params_they_use():
    """Only definitions are ordered (after those they use): params and base params may be
    declared anywhere in the kernel, as params may be used before they are declared."""
    (prog,) = parse_module("kernel k\ndef M = N // B\nbase B >= 1\nparam N\nparam M\n").kernels
    assert print_program(prog) == "kernel k\nparam N\nparam M\nbase B >= 1\ndef M = N // B\n"


def test_each_kernel_has_its_own_definitions():
    text = "kernel a\nparam N\ndef M = N // 2\n\nkernel b\nparam M\n"
    a, b = parse_module(text).kernels
    assert [x.name for x in a.derived] == ["M"] and b.derived == () and b.bases == ()
    assert print_module(parse_module(text)) == text
    with pytest.raises(TleError, match="refers to 'N', which is no param, base param or "
                                       "definition of kernel 'b'"):
        parse_module("kernel a\nparam N\n\nkernel b\nparam M\ndef M = N // 2\n")


# ------------------------------------------------------------------ the repository

def test_the_repository_pipe_files_have_no_definitions_and_print_as_before():
    """Their text is unchanged by the form (test_adversarial_text_inputs.py reads each report
    back with its verdict)."""
    assert len(REPO_PIPES) >= 150
    for path in REPO_PIPES:
        module = parse_file(path)
        assert all(not k.derived and not k.bases for k in module.kernels), path
        text = print_module(module)
        assert "\ndef " not in text and "\nbase " not in text
        assert print_module(parse_module(text)) == text


KERNELS = ["tests/cases/cdiv_spelling.bad.py", "tests/cases/cdiv_spelling.ok.py",
           "tests/cases/remainder_param.bad.py", "tests/cases/remainder_param.ok.py",
           "tests/cases/derived_witness.bad.py", "tests/cases/derived_witness.ok.py",
           "tests/cases/assume_unlaunchable.ok.py", "tle_kernels/sparse_mla_narrow.py"]


@pytest.mark.parametrize("rel", KERNELS)
def test_a_kernel_with_derived_params_reads_back_with_its_verdict(tmp_path, rel):
    path = ROOT / rel
    code, out, err = dump(path)
    assert "\ndef " in out, out
    check_report_and_witnesses(path, tmp_path, code, out, err)


def test_the_kir_case_reads_back_bounded(tmp_path):
    path = write(tmp_path, "derived.kir", DERIVED)
    code, out, err = dump(path)
    assert code == 3 and "\ndef M = N // 2\n" in out
    back = write(tmp_path, "back.pipe", out)
    code2, out2, _ = dump(back)
    assert code2 == 3 and "needs derived values no checked value of N gives" in out2
