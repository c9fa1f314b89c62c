"""The text form of the Pipe IR: parser (tle_compiler/ir/parser.py) and printer (printer.py).

Covers the DESIGN example, every construct of the language, the error messages (each must name the
line and column), and the round-trip properties print → parse → print (identity) and
parse(print(p)) == p up to locations, on random programs from tests/strategies.py.
"""

from __future__ import annotations

import re
import textwrap

import pytest
from hypothesis import given, settings

from tests.strategies import affines, conditions, modules, programs
from tle_compiler.diagnostics import TleError
from tle_compiler.ir.nodes import Access
from tle_compiler.ir.expr import Affine, BoolOp, Compare, ModCompare, Not
from tle_compiler.ir.nodes import (NOLOC, Event, For, If, Loc, Module, Param, Partition, Pipe,
                                   Program)
from tle_compiler.ir.parser import parse_file, parse_module
from tle_compiler.ir.printer import print_module, print_program, without_locations

DESIGN_EXAMPLE = """\
kernel sparse_mla_pipe
param NK                         # symbolic trip count (any value >= 0)

pipe q     capacity=1 one_shot readers=(left, right) fields=(q_l, q_r, q_tail)
pipe kv    capacity=2 readers=(left, right) fields=(kv_l, kv_r, tkv, valid)
pipe score capacity=1 fields=(alpha, sum_exp)

partition producer default warps=4 {
  q.acquire(0)
  q.commit(0)
  for ck in range(NK) {
    kv.acquire(ck)
    kv.commit(ck)
  }
}
partition left warps=4 regs=240 {
  q[left].wait(0)
  for ck in range(NK) {
    kv[left].wait(ck)
    score.acquire(ck)
    score.commit(ck)
    kv[left].release(ck)
  }
}
partition right warps=4 regs=168 {
  q[right].wait(0)
  for ck in range(NK) {
    kv[right fields=(kv_r)].wait(ck)
    score.wait(ck)
    score.release(ck)
    kv[right].release(ck)
  }
}
"""

A = Affine.of


def one(text: str, path: str | None = None) -> Program:
    module = parse_module(text, path)
    assert len(module.kernels) == 1
    return module.kernels[0]


def body_of(stmts: str) -> tuple:
    """Parse statements inside a partition of a minimal kernel."""
    return one(f"kernel k\npartition p {{\n{stmts}\n}}\n").partitions[0].body


def error_of(text: str) -> TleError:
    with pytest.raises(TleError) as info:
        parse_module(text, "t.pipe")
    return info.value


# ------------------------------------------------------------------------------------------------
# the DESIGN example


def test_design_example_structure():
    prog = one(DESIGN_EXAMPLE, "ex.pipe")
    assert prog.name == "sparse_mla_pipe"
    assert prog.loc == Loc("ex.pipe", 1, 1)
    assert prog.params == (Param("NK", 0, Loc("ex.pipe", 2, 1)),)

    q, kv, score = prog.pipes
    assert (q.name, q.capacity, q.one_shot) == ("q", 1, True)
    assert q.readers == ("left", "right") and q.fields == ("q_l", "q_r", "q_tail")
    assert (kv.name, kv.capacity, kv.one_shot) == ("kv", 2, False)
    assert kv.readers == ("left", "right") and kv.fields == ("kv_l", "kv_r", "tkv", "valid")
    assert (score.name, score.capacity, score.readers) == ("score", 1, ())
    assert score.fields == ("alpha", "sum_exp") and score.mma == () and not score.is_spmc
    assert [p.loc.line for p in prog.pipes] == [4, 5, 6]

    producer, left, right = prog.partitions
    assert (producer.name, producer.default, producer.warps, producer.regs) == ("producer", True, 4,
                                                                                None)
    assert (left.name, left.default, left.warps, left.regs) == ("left", False, 4, 240)
    assert (right.name, right.regs) == ("right", 168)
    assert [p.loc.line for p in prog.partitions] == [8, 16, 25]

    assert producer.body[:2] == (
        Event("acquire", "q", A(0), loc=Loc("ex.pipe", 9, 3)),
        Event("commit", "q", A(0), loc=Loc("ex.pipe", 10, 3)))
    loop = producer.body[2]
    assert isinstance(loop, For)
    assert (loop.var, loop.start, loop.stop, loop.step) == ("ck", A(0), A("NK"), 1)
    assert loop.loc == Loc("ex.pipe", 11, 3)
    assert loop.body == (Event("acquire", "kv", A("ck"), loc=Loc("ex.pipe", 12, 5)),
                         Event("commit", "kv", A("ck"), loc=Loc("ex.pipe", 13, 5)))

    assert left.body[0] == Event("wait", "q", A(0), reader="left", loc=Loc("ex.pipe", 17, 3))
    assert left.body[1].body[0] == Event("wait", "kv", A("ck"), reader="left",
                                         loc=Loc("ex.pipe", 19, 5))
    r_loop = right.body[1]
    assert r_loop.body == (
        Event("wait", "kv", A("ck"), reader="right", fields=("kv_r",), loc=Loc("ex.pipe", 28, 5)),
        Event("wait", "score", A("ck"), loc=Loc("ex.pipe", 29, 5)),
        Event("release", "score", A("ck"), loc=Loc("ex.pipe", 30, 5)),
        Event("release", "kv", A("ck"), reader="right", loc=Loc("ex.pipe", 31, 5)))
    assert r_loop.body[1].reader is None and r_loop.body[1].fields is None


def test_design_example_prints_canonically():
    prog = one(DESIGN_EXAMPLE)
    text = print_program(prog)
    # The example is canonical up to its comment and the blank lines between partitions.
    expected = DESIGN_EXAMPLE.replace("param NK                         # symbolic trip count "
                                      "(any value >= 0)", "param NK")
    expected = expected.replace("}\npartition", "}\n\npartition")
    assert text == expected
    assert without_locations(one(text)) == without_locations(prog)


def test_parser_docstring_example_parses():
    import tle_compiler.ir.parser as parser_module

    doc = parser_module.__doc__
    block = doc.split("::\n\n", 1)[1].split("\n\n", 1)[0]
    prog = one(textwrap.dedent(block))
    assert [p.name for p in prog.partitions] == ["producer", "left"]
    assert [p.domain() for p in prog.params] == ["NK >= 0", "every integer M"]
    loop = prog.partitions[1].body[0]
    assert isinstance(loop.body[1], Access) and (loop.body[1].side, loop.body[1].field) == ("reader", "kv_l")
    assert isinstance(loop.body[2], If)


def test_parse_file_records_path(tmp_path):
    f = tmp_path / "ex.pipe"
    f.write_text(DESIGN_EXAMPLE)
    module = parse_file(f)
    assert module.path == str(f)
    assert module.kernels[0].partitions[2].body[1].body[0].loc == Loc(str(f), 28, 5)


# ------------------------------------------------------------------------------------------------
# the language


def test_multi_kernel_file():
    module = parse_module("""
kernel first
param N >= 1
pipe a capacity=2
partition p default { a.acquire(0) }

# the second kernel owns everything below its header
kernel second
param M
param K >= -2
pipe b capacity=1 one_shot
partition w warps=1 {
  b.close(0)
}
partition r { b.wait(0) }
""", "m.pipe")
    first, second = module.kernels
    assert module.path == "m.pipe"
    assert (first.name, first.param_names) == ("first", ("N",))
    assert [p.name for p in first.pipes] == ["a"]
    assert first.params[0].min == 1
    assert [p.name for p in first.partitions] == ["p"]
    assert second.param_names == ("M", "K") and second.params[1].min == -2
    assert [p.name for p in second.pipes] == ["b"] and second.pipes[0].one_shot
    assert [(p.name, p.warps, p.default) for p in second.partitions] == [("w", 1, False),
                                                                         ("r", 4, False)]
    assert second.partitions[0].body[0] == Event("close", "b", A(0), loc=Loc("m.pipe", 13, 3))
    assert second.loc.line == 8
    # printed: kernels separated by a blank line, and it parses back
    text = print_module(module)
    assert "\n\nkernel second\n" in text
    assert without_locations(parse_module(text)) == without_locations(module)


def test_comments_and_blank_lines_anywhere():
    text = """# leading comment

   # indented comment
kernel k   # trailing comment
# between
param N # c


pipe q capacity=2 fields=(x) # c
partition p default warps=4 { # after brace

  # inside a block
  for i in range(N) {   # c

    q.acquire(i)   # c
    # c
    q.commit(i)
  }  # c

} # end

# trailing
"""
    prog = one(text)
    assert prog.param_names == ("N",)
    (loop,) = prog.partitions[0].body
    assert [e.verb for e in loop.body] == ["acquire", "commit"]
    assert [e.loc.line for e in loop.body] == [15, 17]
    assert one("kernel k") == Program("k", (), (), (), loc=Loc(None, 1, 1))
    assert parse_module("") == Module(())
    assert parse_module("# nothing\n\n") == Module(())


def test_crlf_and_semicolons():
    prog = one("kernel k\r\npipe q capacity=1\r\npartition p { q.acquire(0); q.commit(0); }\r\n")
    assert [e.verb for e in prog.partitions[0].body] == ["acquire", "commit"]
    prog = one("kernel k; pipe q capacity=1; partition p {\n q.acquire(0); q.commit(0)\n}")
    assert len(prog.partitions[0].body) == 2


def test_pipe_attributes_any_order_and_canonical_print():
    prog = one("kernel k\npipe p mma=(a) fields=(a, b,) readers=(x) one_shot capacity=3\n"
               "pipe longer_name capacity=1 fields=()\n")
    p = prog.pipes[0]
    assert p == Pipe("p", 3, ("a", "b"), readers=("x",), one_shot=True, mma=("a",),
                     loc=Loc(None, 2, 1))
    assert prog.pipes[1].fields == ()
    text = print_program(prog)
    assert "pipe p           capacity=3 one_shot readers=(x) fields=(a, b) mma=(a)\n" in text
    assert "pipe longer_name capacity=1\n" in text


def test_partition_header():
    prog = one("kernel k\npartition a regs=40 default warps=2 { }\npartition b {\n}\n")
    a, b = prog.partitions
    assert (a.warps, a.regs, a.default, a.body) == (2, 40, True, ())
    assert (b.warps, b.regs, b.default) == (4, None, False)
    text = print_program(prog)
    assert "partition a default warps=2 regs=40 {\n}" in text
    assert "partition b warps=4 {\n}" in text


def test_words_are_keywords_only_where_expected():
    prog = one("kernel fields\nparam default\npipe capacity capacity=1 readers=(fields, wait) "
               "fields=(readers)\npartition warps warps=2 {\n"
               "  capacity[fields fields=(readers)].wait(default)\n"
               "  capacity[wait].release(regs + mma)\n}\n")
    assert prog.name == "fields" and prog.pipes[0].name == "capacity"
    ev = prog.partitions[0].body
    assert ev[0] == Event("wait", "capacity", A("default"), reader="fields", fields=("readers",),
                          loc=Loc(None, 5, 3))
    assert ev[1].reader == "wait" and ev[1].index == A("mma") + A("regs")
    # declaration keywords are names inside blocks (regression: LALR state merging once made the
    # lexer read `kernel` at the start of a statement as the keyword)
    body = body_of("  kernel.acquire(0)\n  pipe[param].wait(partition)\n"
                   "  for in in range(range) {\n    and.commit(in + or)\n  }")
    assert [e.pipe for e in body[:2]] == ["kernel", "pipe"] and body[1].reader == "param"
    assert body[2].var == "in" and body[2].stop == A("range")
    assert body[2].body[0].pipe == "and" and body[2].body[0].index == A("in") + A("or")


def test_event_forms():
    body = body_of("""  kv.acquire(0)
  kv[left].wait(2*p + 1)
  kv[left fields=(a, b)].release(ck - 1)
  kv[fields=(a)].wait(p*3)
  kv[fields=() r].wait(0)""")
    assert body[0] == Event("acquire", "kv", A(0), loc=Loc(None, 3, 3))
    assert (body[1].reader, body[1].fields, body[1].index) == ("left", None, A("p").scale(2) + 1)
    assert (body[2].reader, body[2].fields, body[2].index) == ("left", ("a", "b"), A("ck") - 1)
    assert (body[3].reader, body[3].fields, body[3].index) == (None, ("a",), A("p").scale(3))
    assert (body[4].reader, body[4].fields) == ("r", ())
    text = print_program(one("kernel k\npartition p {\n  kv[fields=() r].wait(0)\n"
                             "  kv[fields=(a)].wait(p*3)\n}\n"))
    assert "  kv[r fields=()].wait(0)\n  kv[fields=(a)].wait(3*p)\n" in text


def test_affine_expressions():
    def idx(expr: str) -> Affine:
        return body_of(f"  q.acquire({expr})")[0].index

    assert idx("2*p + 1") == A("p").scale(2) + 1
    assert idx("p*2 - -3") == A("p").scale(2) + 3
    assert idx("-(p - 1)") == -A("p") + 1
    assert idx("3*(p + 1) - p") == A("p").scale(2) + 3
    assert idx("2*3*p") == A("p").scale(6)
    assert idx("(1 + 1)*(p + q)") == (A("p") + A("q")).scale(2)
    assert idx("p - p") == A(0)
    assert idx("- - 4") == A(4)
    assert idx("0*x*y") == A(0)  # (0*x)*y: the product is the constant 0


def test_ranges():
    body = body_of("""  for a in range(N) {
    for b in range(1, N - 1) {
      for c in range(N, 0, -1) {
        for d in range(a, b + c, 2) {
          q.acquire(d)
        }
      }
    }
  }""")
    a = body[0]
    b = a.body[0]
    c = b.body[0]
    d = c.body[0]
    assert (a.var, a.start, a.stop, a.step) == ("a", A(0), A("N"), 1)
    assert (b.start, b.stop, b.step) == (A(1), A("N") - 1, 1)
    assert (c.start, c.stop, c.step) == (A("N"), A(0), -1)
    assert (d.start, d.stop, d.step) == (A("a"), A("b") + A("c"), 2)
    assert [s.loc.line for s in (a, b, c, d, d.body[0])] == [3, 4, 5, 6, 7]
    assert [s.loc.column for s in (a, b, c, d, d.body[0])] == [3, 5, 7, 9, 11]
    text = print_program(one("kernel k\npartition p {\n" + "\n".join(
        ["for a in range(0, N, 1) {", "for b in range(1, N - 1) {",
         "for c in range(N, 0, -1) { }", "}", "}"]) + "\n}\n"))
    assert "  for a in range(N) {\n    for b in range(1, N - 1) {\n" in text
    assert "      for c in range(N, 0, -1) {\n      }\n" in text


def test_conditions():
    def cond(text: str):
        return body_of(f"  if {text} {{\n  }}")[0].cond

    i, n = A("i"), A("N")
    assert cond("i < N") == Compare(i, "<", n)
    assert cond("i + 1 >= 2*N") == Compare(i + 1, ">=", n.scale(2))
    assert cond("i % 2 == 0") == ModCompare(i, 2, "==", 0)
    assert cond("(i - 1) % 3 != 2") == ModCompare(i - 1, 3, "!=", 2)
    assert cond("-i % 2 == 1") == ModCompare(-i, 2, "==", 1)  # unary minus binds tighter
    assert cond("2*i % 4 == 0") == ModCompare(i.scale(2), 4, "==", 0)
    lt, eq = Compare(i, "<", n), Compare(i, "==", A(0))
    assert cond("i < N and i == 0 and i < N") == BoolOp("and", (lt, eq, lt))
    assert cond("i < N or i == 0 and i < N") == BoolOp("or", (lt, BoolOp("and", (eq, lt))))
    assert cond("(i < N or i == 0) and i < N") == BoolOp("and", (BoolOp("or", (lt, eq)), lt))
    assert cond("not i < N") == Not(lt)
    assert cond("not not (i < N)") == Not(Not(lt))
    assert cond("not (i < N and i == 0)") == Not(BoolOp("and", (lt, eq)))
    assert cond("not i < N or i == 0") == BoolOp("or", (Not(lt), eq))
    assert cond("((i) < (N))") == lt


def test_else_if_and_else():
    body = body_of("""  if i == 0 {
    q.acquire(0)
  } else if i == 1 {
    q.acquire(1)
  } else {
    q.acquire(2)
  }
  if i < 0 {
  }
  else {      # else on the next line is accepted
    q.commit(0)
  }
  if i < 0 {
  } else {
    if i < 1 {
    }
  }""")
    top = body[0]
    assert isinstance(top, If) and top.cond == Compare(A("i"), "==", A(0))
    assert top.loc == Loc(None, 3, 3)
    (inner,) = top.orelse
    assert isinstance(inner, If) and inner.loc == Loc(None, 5, 10)
    assert inner.then[0].index == A(1) and inner.orelse[0].index == A(2)
    assert body[1].then == () and body[1].orelse[0].verb == "commit"
    # `else { if ... }` is the same IR as `else if`, and both print as `else if`
    assert without_locations(body[2].orelse[0]) == If(Compare(A("i"), "<", A(1)), ())
    text = print_program(one("kernel k\npartition p {\n" + "\n".join(
        ["if i == 0 {", "} else {", "  if i == 1 {", "  } else {", "  }", "}"]) + "\n}\n"))
    assert text.endswith("partition p warps=4 {\n  if i == 0 {\n  } else if i == 1 {\n  }\n}\n")


def test_locations_comments():
    prog = one(DESIGN_EXAMPLE, "ex.pipe")
    text = print_program(prog, locations=True)
    assert "  q.acquire(0)  # ex.pipe:9\n" in text
    assert "    kv[right fields=(kv_r)].wait(ck)  # ex.pipe:28\n" in text
    assert without_locations(one(text)) == without_locations(prog)
    # in-memory programs have no locations to print
    bare = without_locations(prog)
    assert print_program(bare, locations=True) == print_program(bare)


def test_without_locations():
    prog = one(DESIGN_EXAMPLE, "ex.pipe")
    bare = without_locations(prog)
    assert bare.loc == NOLOC and bare.partitions[2].body[1].body[0].loc == NOLOC
    assert without_locations(parse_module(DESIGN_EXAMPLE, "ex.pipe")).path is None
    assert bare.partitions[2].body[1].body[0].fields == ("kv_r",)


# ------------------------------------------------------------------------------------------------
# errors: each message says what was expected and where (LINE:COLUMN), and loc matches


def assert_error_at(text: str, line: int, column: int, *words: str) -> TleError:
    err = error_of(text)
    assert f"{line}:{column}" in err.message, err.message
    assert err.loc == Loc("t.pipe", line, column), (err.loc, err.message)
    for w in words:
        assert w in err.message, err.message
    assert f"t.pipe:{line}: error:" in str(err)
    return err


def test_error_unexpected_token():
    assert_error_at("kernel k\npipe q capacity=1\npartition p {\n  q.acquire(0\n}\n", 4, 14,
                    "unexpected end of line", "')'")
    assert_error_at("kernel k\npartition p {\n  q.acquire(0) q.commit(0)\n}\n", 3, 16,
                    "unexpected name 'q'", "newline")
    assert_error_at("kernel k\npartition p {\n  q.acquire(0)\n  else {\n}\n", 4, 3,
                    "'else' without an 'if'")
    assert_error_at("kernel k\nparam\n", 2, 6, "expected a name")
    assert_error_at("kernel k\nkernel\n", 2, 7, "expected a name")
    assert_error_at("kernel k\npartition p {\n  for i in rnge(4) {\n  }\n}\n", 3, 12, "'range'")
    assert_error_at("kernel k\npartition p {\n  q.acquire(1 +)\n}\n", 3, 16, "unexpected ')'")


def test_error_unexpected_character():
    assert_error_at("kernel k\npartition p {\n  q.acquire(0) $\n}\n", 3, 16,
                    "unexpected character '$'")


def test_error_non_affine():
    err = assert_error_at("kernel k\npartition p {\n  q.acquire(1 + i * j)\n}\n", 3, 17,
                          "non-affine expression")
    assert "'i' * 'j'" in err.message
    assert_error_at("kernel k\npartition p {\n  if (i + 1)*(j) < 2 {\n  }\n}\n", 3, 6, "non-affine")
    assert_error_at("kernel k\npartition p {\n  for i in range(N*N) {\n  }\n}\n", 3, 18,
                    "non-affine")


def test_error_step_zero():
    assert_error_at("kernel k\npartition p {\n  for i in range(0, 4, 0) {\n  }\n}\n", 3, 24,
                    "step must not be zero")
    assert_error_at("kernel k\npartition p {\n  for i in range(0, 4, 1 - 1) {\n  }\n}\n", 3, 24,
                    "step must not be zero")
    assert_error_at("kernel k\npartition p {\n  for i in range(0, 4, N) {\n  }\n}\n", 3, 24,
                    "step must be an integer constant")


def test_error_duplicate_attribute():
    assert_error_at("kernel k\npipe q capacity=1 one_shot capacity=2\n", 2, 28,
                    "duplicate attribute 'capacity'", "pipe 'q'")
    assert_error_at("kernel k\npipe q capacity=1 one_shot one_shot\n", 2, 28, "duplicate")
    assert_error_at("kernel k\npartition p warps=4 warps=8 {\n}\n", 2, 21,
                    "duplicate attribute 'warps'", "partition 'p'")
    assert_error_at("kernel k\npartition p {\n  q[r fields=(a) fields=(b)].wait(0)\n}\n", 3, 18,
                    "duplicate attribute 'fields'")


def test_error_unterminated_block():
    assert_error_at("kernel k\npartition p {\n  for i in range(4) {\n    q.acquire(i)\n}\n", 2, 13,
                    "unterminated block", "end of input at 6:1")
    assert_error_at("kernel k\npartition p {\n  q.acquire(0)\n\npartition r {\n}\n", 2, 13,
                    "unterminated block", "'partition' declaration at 5:1")
    assert_error_at("kernel k\npartition p {\n  for i in range(4) {\n    q.acquire(i)\n}\n"
                    "partition r {\n}\n", 2, 13, "unterminated block", "declaration at 6:1")
    assert_error_at("kernel k\npartition p { # {\n", 2, 13, "unterminated block")


def test_error_bad_declarations():
    assert_error_at("pipe q capacity=1\n", 1, 1, "expected 'kernel NAME'")
    assert_error_at("kernel k\npipe q readers=(a)\n", 2, 1, "needs a capacity")
    assert_error_at("kernel k\npipe q capacity=0\n", 2, 8, "at least 1")
    assert_error_at("kernel k\npipe q capacity=1 color=(a)\n", 2, 19, "unknown attribute 'color'",
                    "capacity=N")
    assert_error_at("kernel k\npipe q capacity=(a)\n", 2, 8, "capacity=N")
    assert_error_at("kernel k\npipe q capacity=1 one_shot=1\n", 2, 19, "'one_shot'")
    assert_error_at("kernel k\npartition p colour {\n}\n", 2, 13, "unknown attribute 'colour'")


def test_error_bad_events():
    assert_error_at("kernel k\npartition p {\n  q.grab(0)\n}\n", 3, 5, "unknown verb 'grab'",
                    "acquire")
    assert_error_at("kernel k\npartition p {\n  q[a b].wait(0)\n}\n", 3, 7, "second reader name")
    assert_error_at("kernel k\npartition p {\n  q[a view=(x)].wait(0)\n}\n", 3, 7,
                    "unknown event attribute 'view'")
    assert_error_at("kernel k\npartition p {\n  q.wait(i < 2)\n}\n", 3, 10,
                    "expected an integer expression", "found a condition")


def test_error_bad_conditions():
    assert_error_at("kernel k\npartition p {\n  if i {\n  }\n}\n", 3, 6, "expected a condition")
    assert_error_at("kernel k\npartition p {\n  if i + 1 % 2 == 0 {\n  }\n}\n", 3, 10,
                    "found a '%' expression")
    assert_error_at("kernel k\npartition p {\n  if i % 2 < 1 {\n  }\n}\n", 3, 12, "== or !=")
    assert_error_at("kernel k\npartition p {\n  if i % 2 == j {\n  }\n}\n", 3, 15,
                    "integer constant")
    assert_error_at("kernel k\npartition p {\n  if i % 0 == 0 {\n  }\n}\n", 3, 10, "positive")
    assert_error_at("kernel k\npartition p {\n  if not i {\n  }\n}\n", 3, 10,
                    "expected a condition")
    assert_error_at("kernel k\npartition p {\n  if i < 1 and 2 {\n  }\n}\n", 3, 16,
                    "expected a condition")
    assert_error_at("kernel k\npartition p {\n  if i < j < k {\n  }\n}\n", 3, 12, "unexpected '<'")


# ------------------------------------------------------------------------------------------------
# round trips on random programs


def assert_round_trip(prog: Program) -> None:
    text = print_program(prog)
    back = one(text)
    assert without_locations(back) == prog, text
    assert print_program(back) == text
    # with location comments the output still parses to the same program
    assert without_locations(one(print_program(back, locations=True))) == prog


@settings(max_examples=200, deadline=None)
@given(programs())
def test_round_trip_programs(prog):
    assert_round_trip(prog)


@settings(max_examples=30, deadline=None)
@given(modules())
def test_round_trip_modules(module):
    text = print_module(module)
    back = parse_module(text, "r.pipe")
    assert without_locations(back) == module
    assert print_module(back) == text
    assert [k.loc.line for k in back.kernels] == [
        i + 1 for i, line in enumerate(text.splitlines()) if line.startswith("kernel ")]


VARS = ("i", "j", "NK")


@settings(max_examples=100, deadline=None)
@given(affines(VARS), conditions(VARS))
def test_expr_str_reparses(index, cond):
    """str() of expr.py's Affine and conditions is what the printer writes: it must parse back."""
    (stmt,) = body_of(f"  if {cond} {{\n    q.wait({index})\n  }}")
    assert stmt.cond == cond
    assert stmt.then[0].index == index


def test_printer_output_shape():
    prog = Program("k", (Param("N", 1),), (Pipe("q", 2, ("a",)),), (
        Partition("p", (For("i", A(0), A("N"), 1, (
            If(ModCompare(A("i"), 2, "==", 0),
               (Event("acquire", "q", A("i")), Event("commit", "q", A("i"))),
               (Event("close", "q", A("i")),)),)),), default=True),))
    assert print_program(prog) == """\
kernel k
param N >= 1

pipe q capacity=2 fields=(a)

partition p default warps=4 {
  for i in range(N) {
    if i % 2 == 0 {
      q.acquire(i)
      q.commit(i)
    } else {
      q.close(i)
    }
  }
}
"""
    assert_round_trip(prog)
    # the implicit SPSC reader "" prints as no reader name
    spsc = Program("k", (), (), (Partition("p", (Event("wait", "q", A(0), reader=""),)),))
    assert "  q.wait(0)\n" in print_program(spsc)
    assert re.fullmatch(r"(?s).*\n", print_module(Module((prog, prog))))
