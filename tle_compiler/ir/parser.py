"""Parser for the text form of the Pipe IR (``*.pipe`` files).

``tle-dump`` prints a kernel's Pipe IR in this form and reads such files back, so protocols can be
written, checked and diffed without a GPU or a Python kernel. The parser builds the frozen
dataclasses of :mod:`tle_compiler.ir.nodes`; every node gets ``loc=Loc(path, line, column)`` of its
first token (lines and columns are 1-based). It does **no** semantic validation (unknown pipes,
undeclared readers, writer verbs with a reader name, ... are the passes' business); it only rejects
what cannot become a well-formed node: a syntax error, a non-affine product, a zero ``range`` step,
a duplicate or unknown attribute, a pipe without ``capacity``. Every error is a
:class:`~tle_compiler.diagnostics.TleError` whose message says what was expected and ends with
``at LINE:COLUMN``.

The language
============
::

    kernel sparse_mla_pipe
    param NK                        # a symbolic integer >= 0;  `param NK >= 1`: >= 1
    param M any                     # every integer (`param M any <= 8`: at most 8)
    pipe kv capacity=2 readers=(left, right) fields=(kv_l, kv_r) mma=(kv_l)
    pipe q  capacity=1 one_shot
    partition producer default warps=4 {
      for ck in range(NK) {         # range(STOP) / range(START, STOP) / range(START, STOP, STEP)
        kv.acquire(ck)
        kv.commit(ck)
      }
    }
    partition left warps=4 regs=240 {
      for ck in range(0, NK) {
        kv[left fields=(kv_l)].wait(ck)      # PIPE[READER].VERB / PIPE[READER fields=(..)].VERB
        kv[left].read(ck, kv_l)              # a read of field kv_l of the slot waited at ck
        if ck % 2 == 0 and not ck < 1 {
          kv[left].release(ck)
        } else if ck >= NK - 1 {
          kv[left].release(ck)
        } else {
          kv[left].release(ck)
        }
      }
    }

* A file holds one or more kernels; each ``kernel NAME`` header owns the ``param``, ``pipe`` and
  ``partition`` declarations that follow it, up to the next header.
* ``kernel NAME every_access``: the protocol lists every slot access the kernel makes
  (``Program.every_access``), so a pipe without any write access is one nothing writes, whose
  reads find uninitialised shared memory (``unwritten-field``). Without the flag such a pipe is a
  protocol skeleton, its reads checked against their windows only. tle-dump prints the flag in
  the report of a Python or .kir kernel that has such a pipe, so that the report reads back with
  the kernel's verdict.
* Pipe attributes, in any order, each at most once: ``capacity=N`` (required, N >= 1),
  ``one_shot``, ``named_barrier``, ``readers=(a, b)``, ``fields=(x, y)``, ``mma=(x)``.
* Partition header: ``partition NAME [default] [warps=N] [regs=N] {`` (warps defaults to 4).
* Events: ``PIPE.VERB(EXPR)``, ``PIPE[READER].VERB(EXPR)``,
  ``PIPE[READER fields=(a, b)].VERB(EXPR)`` and ``PIPE[fields=(a)].VERB(EXPR)``; VERB is one of acquire, commit, close, wait, release.
  ``Event.reader`` is None when no reader is written, ``Event.fields`` None when no view is.
* Slot accesses: ``PIPE.write(EXPR, FIELD)`` (the writer touches field FIELD of the slot it
  acquired at EXPR: legal until ``commit(EXPR)``) and ``PIPE.read(EXPR, FIELD)`` /
  ``PIPE[READER].read(EXPR, FIELD)`` (a reader reads the slot it waited at EXPR: legal until
  ``release(EXPR)``); they build :class:`~tle_compiler.ir.nodes.Access` nodes.
  ``PIPE.readback(EXPR, FIELD)`` is the writer's read of the slot it acquired at EXPR (a load of
  what it wrote): inside the window, after a write of FIELD in that same window.
  ``PIPE.maywrite(EXPR, FIELD)`` is a writer's write that may not run (a Python kernel's store
  under control flow on data): inside the window like a write, but it fills nothing for rule 7.
  ``PIPE.openread(EXPR, FIELD)`` / ``PIPE[READER].openread(EXPR, FIELD)`` is a reader's read
  that runs only when EXPR is not the index the writer closed (``if not res.is_closed:``).
  ``PIPE.tma(EXPR, FIELD[, BYTES])`` is the writer's TMA copy of the whole field (a write that
  lands asynchronously; the commit's full barrier expects BYTES, the field's slot size, at least
  1, omitted when unknown).
* ``param NAME`` ranges over the integers >= 0; ``param NAME >= K`` / ``<= K`` set the ends,
  ``param NAME any`` (optionally with ``<= K``) drops the lower end.
* Derived params (``Program.derived`` and ``.bases``, ir/derived.py): the params a kernel computes
  from others, and what from. tle-dump writes them for a Python or .kir kernel, so that its
  report reads back with the kernel's verdict (a fault at values of derived params no launch
  gives is bounded, not rejected)::

      param NK any                    # a param of the protocol, checked as any other
      base TOPK >= 1                  # a param only definitions use (bounds as for `param`)
      def NK = (TOPK + 63) // 64      # NK is computed from TOPK

  ``def NAME = DEXPR`` defines a param of the protocol or a value computed on the way to one
  (a name no ``param`` declares); it may use params, base params and the definitions before it
  (none after it, nor itself: a cycle is refused). A definition applies an operation to affine
  operands (``+``, ``-``, ``INT*EXPR`` fold into one operand as in an index) or to other
  operations: the infix ``//``, ``%``, ``<<``, ``>>``, ``&``, ``|``, ``^``, ``**`` and a ``*``
  of two non-constant operands (Python's precedence; ``+``, ``-`` and ``*`` are operations
  where an operand is one: ``(N // 2) + 1``), and the calls ``min(a, b, ...)``,
  ``max(...)``, ``minimum(...)``, ``maximum(...)``, ``abs(x)``, ``next_power_of_2(x)``,
  ``int64(x)`` (a widening to i64) and ``add(a, b)``, ``sub(a, b)``, ``mul(a, b)`` (a sum,
  difference or product by a constant the kernel computes as an operation, which infix would
  fold). An operation is a runtime one unless marked: Triton's arithmetic on runtime integers,
  C's truncating ``//`` and ``%`` (``-7 // 2`` is -3), computed in i32; ``constexpr(X)``
  makes the operations in X Python's (unbounded integers, floor ``//`` and ``%``: -4),
  ``i64(X)`` computed in i64 (``Definition.wide``), and ``runtime(X)`` / ``i32(X)`` undo
  them inside (``constexpr(runtime(N // 2) // 3)``). The printer writes the fewest marks,
  every operand but a name, a non-negative integer or a call in parentheses, and a protocol
  without derived params as before. Refused at their line: a definition that is affine (no
  operation), one naming a name no param, base param or earlier definition declares, a name
  defined twice, a base param that is also a param or defined, an unknown function, a wrong
  number of arguments, a unary ``-`` of an operation (``sub(0, X)``), and an operation whose
  right operand is a constant that leaves it undefined at every value (a ``//`` or ``%`` by 0,
  ``N // (K - K)``, ``N % min(0, 1)``; a shift or power by a constant outside [0, 64]): no launch
  computes it. A run-time divisor that the domains let be 0 at some values (``N // (N - 3)``,
  ``N // M`` over ``base M any``), or -1 beside a dividend that may be the type's least value, is
  read, and the verdict rejects the kernel at the ``def`` (check division-by-zero, as the Python
  frontend's runtime_division does), unless --param fixes the divisor where it is defined.
* ``constexpr NAME = INT`` (``Program.constexprs``): a constexpr the kernel was read specialised
  to (tle-dump's report of a Python kernel read specialised writes them, so that the report
  reads back with its verdict, "with BLOCK_H = 64 (read specialised)"). A constant: NAME is no
  param, base param or definition, declared once; the protocol's events do not use it.
* ``endless CHECK "MESSAGE"`` (``Program.zero_steps``): a loop of the kernel without events
  that may never end, CHECK ``zero-step`` (a run-time step that may be 0) or ``endless-loop``
  (a counter that may wrap in i32), MESSAGE a JSON string saying which loop and why. tle-dump's
  report of a Python or .kir kernel writes one for each such obligation (a ``.pipe`` partition
  holds no loop without events), so that the report reads back rejected as the kernel is
  (adversarial round 62); verify-protocol refuses it at its line. Another CHECK, or a MESSAGE
  that is no JSON string or is blank, is refused at its line. ``endless zero-step step(EXPR)
  "MESSAGE"`` states the loop's step, EXPR an affine expression of the params, bases and
  definitions declared before the line: a verdict for --param values that fix it to a non-zero
  i32 drops the obligation, as for the Python kernel (adversarial round 63); a step of another
  check, or one naming another value, is refused at its line.
* ``loaded PTR (TYPE, ...) "WHY"`` (``Program.signed_only``): the verdict holds only where PTR, a
  pointer of no known element type, points to one of the TYPEs (nodes.LOAD_TYPES:
  ``int32``, ``uint8``, ``float``, ...); tle-dump then qualifies its proof to them (bounded, exit
  3), as for the Python kernel it printed the line for (adversarial round 62). WHY is a JSON
  string; no TYPE, an unknown one or a blank WHY is refused at its line.
* ``computed NAME LINE`` (``Program.computed``): the param or base NAME stands for a value the
  kernel computes (at LINE of its source) in a way the verifier does not model (``C =
  tl.where(N % 64 == 0, N // 64, N // 64 + 1)``): checked for every value, but a fault at one
  of its values is no launch's witness, and the verdict is then "unknown" (exit 3), as for the
  Python kernel tle-dump printed the line for (adversarial round 74). ``computed NAME LINE in
  (EXPR, ...)``: a value a branch chose on data or the program id, each EXPR (affine in the
  params and bases) at some launch: a fault where NAME holds one of them is a launch's; ``EXPR
  when COND``: the value where COND holds (a branch on the params). A NAME that is no param or
  base declared in the kernel, named twice, or an EXPR or COND naming another value is refused
  at its line.
* ``if COND { } else { }``; ``else if COND { }`` is sugar for an ``else`` holding one ``if``.
* EXPR: affine integer expressions: integers, names, ``+``, ``-``, unary minus, ``INT*EXPR`` and
  ``EXPR*INT``, parentheses. A product of two non-constant expressions is an error.
* COND: ``EXPR OP EXPR`` (OP in ``== != < <= > >=``), ``EXPR % M == R`` / ``!= R`` (Python's
  modulo), ``rem(EXPR, M) == R`` / ``!= R`` (C's remainder, the sign of EXPR: what Triton computes
  on runtime integers), ``and``, ``or``,
  ``not``, parentheses; precedence as in Python (``%`` binds like ``*``, so ``-i % 2`` is
  ``(-i) % 2`` and ``i + 1 % 2`` is rejected rather than silently read as ``(i + 1) % 2``).
* ``#`` comments run to the end of the line; blank lines are allowed anywhere; newlines separate
  declarations and statements.
* Names are Python identifiers (Unicode letters too, in normal form NFKC as Python reads
  them: ``ℕ`` is refused, Python reads it as ``N``). Words are keywords only where the grammar
  expects them (lark's contextual lexer): ``kernel param pipe partition`` at the start of a
  declaration (and ``base def``), ``for if`` at the start of a statement, ``in range`` after ``for NAME``, ``and or
  not`` inside conditions, ``else`` after a block; attribute names (``capacity``, ``fields``, ...)
  and verbs are plain names. Only ``for``, ``if``, ``else`` and ``not`` (:data:`RESERVED_WORDS`)
  cannot be used as plain names everywhere; a name in backticks (`` `not` ``) is a name
  wherever it stands, and the printer writes those four so (a .kir kernel may name a param
  `` `not` ``).

Extensions beyond the design brief, for hand-written files (the printer uses none of them, except
that it writes an empty view as ``fields=()``):

* ``;`` separates declarations and statements like a newline (``q.acquire(0); q.commit(0)``).
* ``else`` may start the line after the closing ``}`` (comment lines in between are allowed).
* ``param N >= K`` accepts a negative K.
* Partition attributes, like pipe attributes, come in any order (each at most once).
* Event views may be written before the reader name (``kv[fields=(a) left]``) and may be empty
  (``fields=()``); name tuples accept a trailing comma.
* The ``range`` step and the ``%`` modulus may be any constant expression (``2*2``); the step
  must be non-zero and the modulus positive.
* A file with no kernel at all is an empty :class:`Module`; ``else { }`` equals no ``else``.

Limits (an error at the line, never a traceback): a parse tree at most :data:`MAX_DEPTH` levels
deep (nested blocks, parentheses, ``not``, unary minus, terms of a sum) and integers of at most
:data:`MAX_BITS` bits (a .kir file's bound), literals and the values computed from them alike
(``2*X`` of a literal X of 1024 bits is refused), so that every value read prints back as a
literal that reads.
"""

from __future__ import annotations

import functools
import json
import os
import re
import unicodedata
from pathlib import Path
from typing import Optional, Union

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from ..diagnostics import TleError
from .derived import WIDEN, Definition, Derived, constant_fault, undefined_divisions
from .expr import CMP_OPS, RESERVED_WORDS, Affine, BoolOp, Compare, Cond, ModCompare, Not
from .nodes import (ACCESS_VERBS, ENDLESS_CHECKS, VERBS, Access, Event, For, If, Loc, Module, Param,
                    Partition, Pipe, Program, Stmt)
from .record import record
from .syntax_errors import expected_phrase, terminal_word, token_word

__all__ = ["parse_module", "parse_file", "RESERVED_WORDS"]

#: Words that cannot be used as names in every position: ``for``/``if`` start a statement, ``else``
#: follows a block and ``not`` starts a condition. (All are Python keywords, so names taken from a
#: Python kernel never collide.) Other words of the language (``kernel``, ``pipe``, ``range``,
#: ``in``, ``and``, ``capacity``, ``fields``, ...) are keywords only where a name cannot stand.
#: Written in backticks (`` `not` ``), any of them is a name everywhere; the printer writes them
#: so. (The set is ir/expr.RESERVED_WORDS, which prints names in expressions.)

_GRAMMAR = Path(__file__).with_name("grammar.lark")


@functools.lru_cache(maxsize=1)
def _lark() -> Lark:
    return Lark(_GRAMMAR.read_text(), parser="lalr", lexer="contextual", propagate_positions=True,
                maybe_placeholders=False)


def parse_module(text: str, path: Optional[str] = None) -> Module:
    """Parse the text of a ``*.pipe`` file into a :class:`Module` (one Program per kernel).

    ``path`` is only used for locations and messages. Raises :class:`TleError` on any error."""
    _check_line_ends(text, path)
    try:
        tree = _lark().parse(text)
    except UnexpectedInput as e:
        raise _syntax_error(e, text, path) from None
    _check_sizes(tree, path)
    _read_names(tree, path)
    return _Builder(path).module(tree)


def _check_line_ends(text: str, path: Optional[str]) -> None:
    """Refuse, saying what to do, a byte-order mark and a carriage return that ends no line
    (``\r`` without ``\n``: a file saved with classic Mac line endings). Without this the first
    was "unexpected character" and the second worse: a comment runs to the next ``\n``, so a file
    of such lines whose first is a comment read as a file without a kernel."""
    if text.startswith("\ufeff"):
        raise TleError("unexpected character '\\ufeff', a byte-order mark, at 1:1: .pipe text is "
                       "UTF-8 without one; save the file without it", Loc(path, 1, 1))
    m = re.search(r"\r(?!\n)", text)
    if m is not None:
        line = text.count("\n", 0, m.start()) + 1
        column = m.start() - text.rfind("\n", 0, m.start())
        raise TleError(f"a carriage return '\\r' that ends no line (not followed by '\\n') at "
                       f"{line}:{column}: lines of .pipe text end with \\n or \\r\\n; convert "
                       f"the file's line endings", Loc(path, line, column))


def _read_names(tree: Tree, path: Optional[str]) -> None:
    """Every name token as the name it stands for: the backticks of `` `not` `` dropped (in
    place, so the builder reads plain names), and a non-ASCII name refused unless it is a Python
    identifier in Unicode normal form NFKC, the form Python reads an identifier in (``ℕ`` is
    ``N``): two spellings of one name would be two names here, one in a Python kernel."""
    odd: list[Token] = []
    for node in tree.iter_subtrees():
        for i, tok in enumerate(node.children):
            if not (isinstance(tok, Token) and tok.type == "NAME"):
                continue
            name = str(tok)
            if name.startswith("`"):
                name = name[1:-1]
                node.children[i] = tok.update(value=name)
            if not name.isascii() and (unicodedata.normalize("NFKC", name) != name
                                       or not name.isidentifier()):
                odd.append(node.children[i])
    if odd:
        tok = min(odd, key=lambda t: (t.line, t.column))
        normal = unicodedata.normalize("NFKC", str(tok))
        if normal == str(tok):
            # the grammar's pattern takes every letter and digit of \w: a few (`৴`, a number
            # sign) are no part of a Python identifier, which --param NAME=... would refuse
            raise TleError(f"name {str(tok)!r} is not a Python identifier at "
                           f"{tok.line}:{tok.column}", Loc(path, tok.line, tok.column))
        raise TleError(f"name {str(tok)!r} is not in Unicode normal form NFKC (Python reads it as "
                       f"{normal!r}) at {tok.line}:{tok.column}", Loc(path, tok.line, tok.column))


#: The deepest parse tree read: each nested block (``for`` / ``if`` and its ``{ }``: two levels),
#: each chained ``else if``, each parenthesis, unary ``-``, ``not`` and ``and``/``or``, and each
#: term of a sum or product counts one level. The tree builder and the passes walk the IR
#: recursively; far beyond any real protocol (100 nested loops, a sum of 200 terms), a file
#: nested deeper would end in Python's RecursionError (a traceback) instead of an error line.
MAX_DEPTH = 200
#: The most bits an integer may have, a literal or a value the reader computes from literals (a
#: sum, a product by a constant, a negation): the bound on the integers of a .kir file
#: (ir/kernel_text.MAX_INT_BITS), so that every protocol tle-dump prints from a .kir or .py kernel
#: reads back, and every value this reader builds prints as a literal it reads. Python refuses to
#: convert a literal of more than 4300 digits (ValueError, a traceback), and no value with so many
#: means anything to a GPU.
MAX_BITS = 1024
#: The most digits an integer literal may have: 2**1024 has 309. A literal of that many digits
#: is read, then held to MAX_BITS like any value.
MAX_DIGITS = len(str(2 ** MAX_BITS))


def _check_sizes(tree: Tree, path: Optional[str]) -> None:
    """Refuse a parse tree nested deeper than MAX_DEPTH or an integer literal longer than
    MAX_DIGITS or of more than MAX_BITS bits, at its line (one error, no traceback). Walks the
    tree iteratively, so that the check itself cannot run out of Python stack."""
    stack: list[tuple[Union[Tree, Token], int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, Token):
            if node.type == "INT" and len(node.value) > MAX_DIGITS:
                raise TleError(f"integer literal of {len(node.value)} digits: at most "
                               f"{MAX_DIGITS} are read at {node.line}:{node.column}",
                               Loc(path, node.line, node.column))
            if node.type == "INT" and int(node.value).bit_length() > MAX_BITS:
                raise TleError(f"integer literal of {int(node.value).bit_length()} bits: the "
                               f"integers of a .pipe file have at most {MAX_BITS} bits at "
                               f"{node.line}:{node.column}", Loc(path, node.line, node.column))
            continue
        if depth > MAX_DEPTH:
            line = getattr(node.meta, "line", 0) or 0
            column = getattr(node.meta, "column", 0) or 0
            raise TleError(f"nested too deeply: more than {MAX_DEPTH} levels of blocks and "
                           f"sub-expressions (each nested block counts two, each term of a sum "
                           f"one) at {line}:{column}", Loc(path, line, column))
        # reversed: the walk meets the nodes in the order of the text, so the first one too
        # deep is named
        stack.extend((child, depth + 1) for child in reversed(node.children))


def parse_file(path: Union[str, os.PathLike]) -> Module:
    """Read and parse a ``*.pipe`` file."""
    p = os.fspath(path)
    with open(p, encoding="utf-8") as f:
        text = f.read()
    return parse_module(text, p)


# ---------------------------------------------------------------------------------------------
# syntax errors


_TERMINAL_WORDS = {
    "NAME": "a name",
    "INT": "an integer",
    "CMP": "a comparison operator",
    "_NL": "a newline",
    "_ELSE": "'else'",
    "$END": "end of input",
}


def _describe_terminal(name: str) -> str:
    return terminal_word(_lark(), name, _TERMINAL_WORDS)


def _describe_expected(names) -> str:
    return expected_phrase(_describe_terminal(n) for n in names)


def _end_position(text: str) -> tuple[int, int]:
    lines = text.split("\n")
    return len(lines), len(lines[-1]) + 1


def _unclosed_brace(text: str, upto: int) -> Optional[tuple[int, int]]:
    """(line, column) of the innermost '{' not closed before offset ``upto`` (comments skipped)."""
    stack: list[tuple[int, int]] = []
    line, col = 1, 1
    in_comment = False
    for ch in text[:upto]:
        if ch == "\n":
            line, col, in_comment = line + 1, 1, False
            continue
        if not in_comment:
            if ch == "#":
                in_comment = True
            elif ch == "{":
                stack.append((line, col))
            elif ch == "}" and stack:
                stack.pop()
        col += 1
    return stack[-1] if stack else None


def _accepted(e: UnexpectedToken) -> set[str]:
    """The terminals really acceptable at the error: LALR's state may list more (merged states)."""
    try:
        return set(e.interactive_parser.accepts())
    except Exception:  # pragma: no cover - fall back to the state's lookahead set
        return set(e.expected)


def _stray_else(text: str, upto: int) -> Optional[tuple[int, int]]:
    """(line, column) of an ``else`` word right before offset ``upto``, if there is one.

    Where ``else`` is not expected it lexes as a name, and the error surfaces at the next token."""
    m = re.search(r"(?<![A-Za-z0-9_])else[\t ]*$", text[:upto])
    if m is None:
        return None
    return _position(text, m.start())


def _position(text: str, offset: int) -> tuple[int, int]:
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _declaration_at(text: str, upto: int) -> Optional[tuple[int, str]]:
    """(offset, word) when the line of offset ``upto`` starts with a declaration keyword.

    Inside a block those words lex as names (a pipe may be called ``pipe``), so a declaration
    reached because a ``}`` is missing fails a little later, on the line's next token."""
    start = text.rfind("\n", 0, upto) + 1
    m = re.match(r"[\t ]*(kernel|param|base|def|pipe|partition)(?![A-Za-z0-9_])(?![\t ]*[.\[])",
                 text[start:])
    return (start + m.start(1), m.group(1)) if m else None


def _unterminated(brace: tuple[int, int], where: str, path: Optional[str]) -> TleError:
    bl, bc = brace
    return TleError(f"unterminated block: this '{{' has no matching '}}' ({where}) at {bl}:{bc}",
                    Loc(path, bl, bc))


def _syntax_error(e: UnexpectedInput, text: str, path: Optional[str]) -> TleError:
    if isinstance(e, UnexpectedToken):
        tok = e.token
        if tok.type == "$END":
            line, col = _end_position(text)
            upto = len(text)
        else:
            line, col = tok.line, tok.column
            upto = tok.start_pos if tok.start_pos is not None else len(text)
        stray = _stray_else(text, upto) if tok.type in ("LBRACE", "IF", "NAME") else None
        if stray is not None:
            sl, sc = stray
            return TleError(f"'else' without an 'if': an else must follow the '}}' of an if block "
                            f"at {sl}:{sc}", Loc(path, sl, sc))
        accepted = _accepted(e)
        if tok.type == "$END" and "RBRACE" in accepted:
            brace = _unclosed_brace(text, upto)
            if brace is not None:
                return _unterminated(brace, f"reached end of input at {line}:{col}", path)
        decl = _declaration_at(text, upto)
        if decl is not None:
            brace = _unclosed_brace(text, decl[0])
            if brace is not None:
                dl, dc = _position(text, decl[0])
                return _unterminated(brace, f"before the '{decl[1]}' declaration at {dl}:{dc}",
                                     path)
        msg = f"unexpected {token_word(tok, 'integer')}{_describe_expected(accepted)} at {line}:{col}"
        return TleError(msg, Loc(path, line, col))
    if isinstance(e, UnexpectedCharacters):
        ch = text[e.pos_in_stream] if e.pos_in_stream < len(text) else ""
        msg = (f"unexpected character {ch!r}{_describe_expected(e.allowed or ())} "
               f"at {e.line}:{e.column}")
        return TleError(msg, Loc(path, e.line, e.column))
    if isinstance(e, UnexpectedEOF):  # pragma: no cover - LALR reports $END as UnexpectedToken
        line, col = _end_position(text)
        return TleError(f"unexpected end of input{_describe_expected(e.expected)} at {line}:{col}",
                        Loc(path, line, col))
    line, col = getattr(e, "line", 0) or 0, getattr(e, "column", 0) or 0  # pragma: no cover
    return TleError(f"syntax error at {line}:{col}", Loc(path, line, col))  # pragma: no cover


# ---------------------------------------------------------------------------------------------
# tree → IR


@record
class _Val:
    """A typed sub-expression: an affine integer, ``expr % modulus``, or a condition."""

    kind: str  # "int" | "mod" | "crem" | "cond"
    value: object
    loc: Loc


_KIND_WORDS = {"int": "an integer expression", "mod": "a '%' expression",
               "crem": "a rem(...) expression", "cond": "a condition"}

_PIPE_ATTRS = {"capacity": "int", "one_shot": "flag", "named_barrier": "flag", "readers": "tuple",
               "fields": "tuple", "mma": "tuple"}
_PARTITION_ATTRS = {"default": "flag", "warps": "int", "regs": "int"}
_KERNEL_ATTRS = {"every_access": "flag"}
_ATTR_SPELLING = {"flag": "{}", "int": "{}=N", "tuple": "{}=(...)"}

#: A definition's infix operators (``+``, ``-`` and ``*`` only where an operand is an operation
#: or a product has no constant side: otherwise they fold into an affine operand).
_DEF_INFIX = {"d_or": "|", "d_xor": "^", "d_and": "&", "d_shl": "<<", "d_shr": ">>", "d_add": "+",
              "d_sub": "-", "d_mul": "*", "d_div": "//", "d_mod": "%", "d_pow": "**"}
#: The operations ``+``, ``-``, ``*`` of two affine operands, which infix would fold into one.
_DEF_FORMS = {"add": "+", "sub": "-", "mul": "*"}
#: A definition's functions and how many arguments each takes (None: no most).
_DEF_ARITY: dict[str, tuple[int, Optional[int]]] = {
    **{f: (2, 2) for f in _DEF_FORMS}, "min": (1, None), "max": (1, None), "minimum": (1, None),
    "maximum": (1, None), "abs": (1, 1), "next_power_of_2": (1, 1), WIDEN: (1, 1)}
#: The mode calls: the ``Definition`` field each sets for the operations inside, and its value.
_DEF_MODES = {"constexpr": ("c", False, "Python's unbounded integers, floor // and %"),
              "runtime": ("c", True, "C's truncating // and %, computed in i32 or i64"),
              "i64": ("wide", True, "computed in i64"),
              "i32": ("wide", False, "computed in the width of its operands")}
_DEF_OPERATIONS = ("//", "%", "<<", ">>", "&", "|", "^", "**", "min(...)", "int64(...)", "...")


class _Builder:
    def __init__(self, path: Optional[str]):
        self.path = path

    # -- helpers ------------------------------------------------------------------------------
    def loc(self, node: Union[Tree, Token]) -> Loc:
        if isinstance(node, Token):
            return Loc(self.path, node.line, node.column)
        return Loc(self.path, node.meta.line, node.meta.column)

    def error(self, message: str, loc: Loc) -> TleError:
        return TleError(f"{message} at {loc.line}:{loc.column}", loc)

    # -- top level ----------------------------------------------------------------------------
    def module(self, tree: Tree) -> Module:
        kernels: list[Program] = []
        current: Optional[dict] = None

        def finish() -> None:
            if current is not None:
                derived, bases = self.derivations(current)
                constexprs = self.constexprs(current, derived, bases)
                kernels.append(Program(current["name"], tuple(current["params"]),
                                       tuple(current["pipes"]), tuple(current["partitions"]),
                                       loc=current["loc"], every_access=current["every_access"],
                                       derived=derived, bases=bases, constexprs=constexprs,
                                       signed_only=tuple(current["loaded"]),
                                       computed=self.computed(current),
                                       zero_steps=tuple(current["endless"])
                                       + self.division_obligations(current, derived, bases)))

        for item in tree.children:
            kind = item.data
            if kind == "kernel_decl":
                finish()
                name = str(item.children[0])
                # one name, one kernel: a report (--kernel NAME, the JSON's "kernels") names
                # kernels by it, so a second kernel of the same name could not be told apart
                twin = next((k for k in kernels if k.name == name), None)
                if twin is not None:
                    raise self.error(f"kernel '{name}' is declared twice (first at line "
                                     f"{twin.loc.line}): give each kernel of a file its own name",
                                     self.loc(item))
                a = self.attrs(item.children[1:], _KERNEL_ATTRS, f"kernel '{name}'")
                current = {"name": name, "params": [], "pipes": [], "bases": [], "defs": [], "consts": [], "endless": [], "loaded": [],
                           "computed": [], "partitions": [], "loc": self.loc(item),
                           "every_access": bool(a.get("every_access", False))}
                continue
            if current is None:
                word = kind.split("_")[0]
                raise self.error(f"expected 'kernel NAME' before the first '{word}' declaration",
                                 self.loc(item))
            if kind == "param_decl":
                current["params"].append(self.param(item))
            elif kind == "base_decl":
                current["bases"].append(self.param(item, "base param"))
            elif kind == "def_decl":
                current["defs"].append((self.definition(item), item))
            elif kind == "constexpr_decl":
                v = item.children[1]
                value = -int(v.children[0]) if v.data == "neg_int" else int(v.children[0])
                current["consts"].append((str(item.children[0]), value, self.loc(item)))
            elif kind == "endless_decl":
                current["endless"].append(self.endless(item, current))
            elif kind == "loaded_decl":
                current["loaded"].append(self.loaded(item))
            elif kind == "computed_decl":
                current["computed"].append(item)
            elif kind == "pipe_decl":
                current["pipes"].append(self.pipe(item))
            else:
                current["partitions"].append(self.partition(item))
        finish()
        return Module(tuple(kernels), self.path)

    def param(self, tree: Tree, what: str = "param") -> Param:
        name = str(tree.children[0])
        minimum: Optional[int] = 0
        maximum: Optional[int] = None
        seen: set[str] = set()
        for bound in tree.children[1:]:
            kind = bound.data
            key = "lower" if kind in ("lower_bound", "any_bound") else "upper"
            if key in seen:
                raise self.error(f"{what} '{name}' has two {key} bounds", self.loc(bound))
            seen.add(key)
            if kind == "any_bound":
                minimum = None
                continue
            v = bound.children[0]
            value = -int(v.children[0]) if v.data == "neg_int" else int(v.children[0])
            if kind == "lower_bound":
                minimum = value
            else:
                maximum = value
        if minimum is not None and maximum is not None and maximum < minimum:
            raise self.error(f"{what} '{name}' has an empty range [{minimum}, {maximum}]",
                             self.loc(tree))
        return Param(name, minimum, loc=self.loc(tree), max=maximum)

    # -- derived params -----------------------------------------------------------------------
    def definition(self, tree: Tree) -> Derived:
        """``def NAME = DEXPR``: the definition, runtime (C's ``//`` and ``%``, i32) where no
        ``constexpr(...)`` / ``i64(...)`` says otherwise."""
        name = str(tree.children[0])
        value = self.dvalue(tree.children[1], True, False)
        if not isinstance(value, Definition):
            raise self.error(f"the definition of '{name}' is the affine expression '{value}': a "
                             f"definition applies an operation ({', '.join(_DEF_OPERATIONS)}) to "
                             f"its operands (a sum, difference or product the kernel computes "
                             f"as one is add(a, b), sub(a, b) or mul(a, b))",
                             self.loc(tree.children[1]))
        return Derived(name, value, self.loc(tree))

    def dvalue(self, tree: Union[Tree, Token], c: bool, wide: bool) -> Union[Affine, Definition]:
        """A definition's sub-expression: an affine operand (``+``, ``-`` and products by a
        constant of affine operands fold into one, as in an index) or an operation, whose ``c``
        and ``wide`` are those of the innermost mode call around it (``constexpr(...)``,
        ``runtime(...)``, ``i64(...)``, ``i32(...)``), else runtime and i32."""
        loc = self.loc(tree)
        kind = tree.data
        ch = tree.children
        if kind == "d_int":
            return Affine(int(ch[0]))
        if kind == "d_name":
            return Affine.of(str(ch[0]))
        if kind == "d_paren":
            return self.dvalue(ch[0], c, wide)
        if kind == "d_neg":
            a = self.dvalue(ch[0], c, wide)
            if isinstance(a, Definition):
                raise self.error(f"unary '-' of the operation '{a}': a definition has no "
                                 f"negation (write sub(0, X) or 0 - (X))", loc)
            return self._sized(_Val("int", -a, loc)).value  # type: ignore[return-value]
        if kind in _DEF_INFIX:
            op = _DEF_INFIX[kind]
            a, b = self.dvalue(ch[0], c, wide), self.dvalue(ch[1], c, wide)
            if isinstance(a, Affine) and isinstance(b, Affine):
                folded = None
                if op == "+":
                    folded = a + b
                elif op == "-":
                    folded = a - b
                elif op == "*" and (a.is_const or b.is_const):
                    folded = b.scale(a.const) if a.is_const else a.scale(b.const)
                if folded is not None:
                    return self._sized(_Val("int", folded, loc)).value  # type: ignore[return-value]
            self._defined_somewhere(op, a, b, self.loc(ch[1]))
            return Definition(op, (a, b), c, wide)
        assert kind == "d_call", kind
        fn_tok, args = ch[0], ch[1:]
        fn = str(fn_tok)
        if fn in _DEF_MODES:
            if len(args) != 1:
                raise self.error(f"{fn}(...) takes one operation, the one it marks "
                                 f"({_DEF_MODES[fn][2]}); found {len(args)} arguments", loc)
            field, flag, _ = _DEF_MODES[fn]
            value = self.dvalue(args[0], flag if field == "c" else c,
                                flag if field == "wide" else wide)
            if not isinstance(value, Definition):
                raise self.error(f"{fn}(...) marks the operations inside it "
                                 f"({_DEF_MODES[fn][2]}); '{value}' is affine and has none", loc)
            return value
        want = _DEF_ARITY.get(fn)
        if want is None:
            raise self.error(f"unknown function '{fn}' in a definition (expected one of "
                             f"{', '.join(_DEF_ARITY)}, or a mode: {', '.join(_DEF_MODES)})",
                             self.loc(fn_tok))
        lo, hi = want
        if not lo <= len(args) <= (hi if hi is not None else len(args)):
            many = f"{lo}" if lo == hi else f"at least {lo}"
            raise self.error(f"{fn}(...) takes {many} argument{'s' if lo != 1 else ''}, "
                             f"found {len(args)}", loc)
        operands = tuple(self.dvalue(a, c, wide) for a in args)
        return Definition(_DEF_FORMS.get(fn, fn), operands, c, wide)

    def _defined_somewhere(self, op: str, a: Union[Affine, Definition],
                           b: Union[Affine, Definition], at: Loc) -> None:
        """Refuse ``a OP b`` whose right operand is a constant that leaves it undefined at every
        value (derived.constant_fault: a ``//`` or ``%`` by 0, a shift or power by a constant
        outside [0, 64]): no launch computes it (the frontend refuses such a kernel, so tle-dump
        never writes one), and a verdict over the values it is defined at would be one over no
        value. A divisor that is 0 only at some values is read, and refused by the verdict
        where the domains let it be (``division_obligations``)."""
        what = constant_fault(op, b)
        if what is not None:
            raise self.error(f"this definition {what} ('{a} {op} {b}'): it has no value for any "
                             f"value of its params, so no launch gives one; a definition's "
                             f"operand must be one the kernel can compute (fix or drop the "
                             f"operand)", at)

    def endless(self, item: Tree, current: dict) -> tuple:
        """``endless CHECK [step(EXPR)] "MESSAGE"``: a loop of the kernel that may never end
        (Program.zero_steps, checks zero-step and endless-loop), kept as the obligation
        (location, message, check) the verdict refuses, with ``(step,)`` after it where the line
        states a zero-step loop's step (which --param values may fix). The message is a JSON
        string (the printer writes it so)."""
        check = str(item.children[0])
        if check not in ENDLESS_CHECKS:
            raise self.error(f"'endless {check}': the check of a loop that may never end is one "
                             f"of {', '.join(ENDLESS_CHECKS)}", self.loc(item))
        stated = item.children[1] if len(item.children) > 2 else None
        message = self.json_text(item.children[-1], f"the message of 'endless {check}'",
                                 f"'endless {check}' needs a message: what the loop is and "
                                 f"why it may never end")
        if stated is None:
            return (self.loc(item), message, check)
        if check != "zero-step":
            raise self.error(f"'endless {check}' states no step: only a zero-step loop's step "
                             f"(`endless zero-step step(N) \"...\"`) is written", self.loc(stated))
        step = self.affine(stated.children[0], f"the step of 'endless {check}'")
        known = ({p.name for p in current["params"]} | {b.name for b in current["bases"]}
                 | {d.name for d, _ in current["defs"]})
        unknown = sorted(step.variables - known)
        if unknown:
            raise self.error(f"the step of 'endless {check}' names '{unknown[0]}', which is no "
                             f"param, base or definition declared before it", self.loc(stated))
        return (self.loc(item), message, check, (step,))

    def computed(self, current: dict) -> tuple:
        """The ``computed NAME LINE [in (EXPR, ...)]`` lines (Program.computed) as (name, line,
        values or None): each NAME a param or base declared in the kernel, once, each EXPR an
        affine expression of them."""
        out: dict[str, tuple] = {}
        declared = {p.name for p in current["params"]} | {b.name for b in current["bases"]}
        for item in current["computed"]:
            name = str(item.children[0])
            if name not in declared:
                raise self.error(f"'computed {name}': {name} is no param or base of kernel "
                                 f"'{current['name']}'", self.loc(item))
            if name in out:
                raise self.error(f"'computed {name}' is declared twice", self.loc(item))
            values = None
            if len(item.children) > 2 and item.children[2] is not None:
                values = tuple(
                    (self.affine(t.children[0], f"a value of 'computed {name}'"),
                     self.cond(t.children[1]) if len(t.children) > 1 and t.children[1] is not None
                     else None)
                    for t in item.children[2].children)
                for v, g in values:
                    unknown = sorted((v.variables | (g.variables if g is not None else set()))
                                     - declared)
                    if unknown:
                        raise self.error(f"a value of 'computed {name}' names '{unknown[0]}', "
                                         f"which is no param or base of kernel "
                                         f"'{current['name']}'", self.loc(item))
            out[name] = (name, int(item.children[1]), values)
        return tuple(out[k] for k in sorted(out))

    def loaded(self, item: Tree) -> tuple:
        """``loaded PTR (TYPE, ...) "WHY"``: the verdict holds only where PTR points to one of
        the element types (Program.signed_only: tle-dump's proof is qualified to them, bounded),
        kept as (location, pointer, why, types). The types are nodes.LOAD_TYPES'
        names, at least one; WHY a JSON string."""
        from .nodes import LOAD_TYPES as TYPES

        pointer = str(item.children[0])  # names are read already (_read_names)
        types = [str(t) for t in item.children[1].children if t is not None]
        bad = [t for t in types if t not in TYPES]
        if bad or not types:
            raise self.error(f"'loaded {pointer}': the element types are one or more of "
                             f"{', '.join(sorted(TYPES))}", self.loc(item))
        why = self.json_text(item.children[2], f"the reason of 'loaded {pointer}'",
                             f"'loaded {pointer}' needs a reason: what the verdict rests on")
        return (self.loc(item), pointer, why, frozenset(types))

    def json_text(self, tok, what: str, blank: str) -> str:
        """The text of the JSON string token ``tok`` (a STRING of `endless` and `loaded` lines),
        refused at its place when it is no JSON string (``what`` names it) or blank (the
        message ``blank``)."""
        try:
            text = json.loads(str(tok))
        except ValueError as e:
            raise self.error(f"{what} is no JSON string ({e.msg})", self.loc(tok)) from None
        if not text.strip():
            raise self.error(blank, self.loc(tok))
        return text

    def division_obligations(self, kernel: dict, derived, bases) -> tuple:
        """The obligations (Program.zero_steps, check division-by-zero) of the definitions'
        run-time ``//`` and ``%`` whose divisor the params' and base params' domains let be 0,
        or -1 beside a dividend that may be the type's least value (derived.undefined_divisions):
        the GPU's division is undefined there, so "verified for every value of N_M" of
        `def N_M = N // M` covered no launch at M = 0 (adversarial round 59; a Python kernel's
        such division is refused at its line since round 58, and its printed protocol read back
        verified). --param values that fix the divisor where it is defined drop it
        (verify_protocol._division_defined), as for a Python kernel."""
        params = {p.name: p for p in kernel["params"]}
        bases_by = {b.name: b for b in bases}
        domains = {p.name: (p.min, p.max) for p in (*params.values(), *bases)}
        out = []
        for d, x, why, operands in undefined_divisions(derived, domains):
            b = operands[1]
            named = isinstance(b, Affine) and len(b.terms) == 1 and b.terms[0][1] == 1 \
                and not b.const and (b.terms[0][0] in params or b.terms[0][0] in bases_by)
            if named:
                v = b.terms[0][0]
                word = "param" if v in params else "base"
                hint = f"declare a domain that excludes it ('{word} {v} >= 1')"
            else:
                hint = "declare domains of its params that exclude it"
            out.append((d.loc, f"'def {d.name} = {d.definition}': '{x}' is the GPU's integer "
                               f"division (arith.divsi / remsi) and {why}, where it is undefined "
                               f"(LLVM's sdiv / srem): no launch computes '{d.name}' there; "
                               f"{hint}", "division-by-zero", operands))
        return tuple(out)

    def constexprs(self, kernel: dict, derived, bases) -> tuple[tuple[str, int], ...]:
        """The kernel's ``constexpr NAME = INT`` declarations (Program.constexprs), checked: each
        name once, and none a param, base param or definition (a constexpr the kernel was read
        specialised to is a constant, no longer a param)."""
        seen: dict[str, Loc] = {}
        taken = {p.name: ("param", p.loc) for p in kernel["params"]}
        taken.update({b.name: ("base param", b.loc) for b in bases})
        taken.update({d.name: ("definition", d.loc) for d in derived})
        for name, _, loc in kernel["consts"]:
            if name in seen:
                raise self.error(f"constexpr '{name}' is declared twice (first at line "
                                 f"{seen[name].line}): give its value once", loc)
            if name in taken:
                what, at = taken[name]
                raise self.error(f"constexpr '{name}' is also a {what} of kernel "
                                 f"'{kernel['name']}' (line {at.line}): a constexpr the kernel "
                                 f"was read specialised to is a constant, not a param; declare "
                                 f"it once", loc)
            seen[name] = loc
        return tuple((n, v) for n, v, _ in kernel["consts"])

    def derivations(self, kernel: dict) -> tuple[tuple[Derived, ...], tuple[Param, ...]]:
        """The kernel's ``def`` and ``base`` declarations as ``Program.derived`` and
        ``.bases``, checked: each name declared once, a base param no param of the protocol and
        computed by no definition, and each definition over params, base params and the
        definitions listed before it (so none refers to itself or, through others, back to
        itself)."""
        name = kernel["name"]
        params = {p.name: p for p in kernel["params"]}
        bases: dict[str, Param] = {}
        for b in kernel["bases"]:
            if b.name in params:
                raise self.error(f"base param '{b.name}' is also a param of kernel '{name}' "
                                 f"(line {params[b.name].loc.line}): a base param is one the "
                                 f"definitions use and the protocol does not; declare it once",
                                 b.loc)
            if b.name in bases:
                raise self.error(f"base param '{b.name}' is declared twice (first at line "
                                 f"{bases[b.name].loc.line})", b.loc)
            bases[b.name] = b
        defs: dict[str, tuple[Derived, Tree]] = {}
        for d, tree in kernel["defs"]:
            if d.name in defs:
                raise self.error(f"'{d.name}' is defined twice (first at line "
                                 f"{defs[d.name][0].loc.line})", d.loc)
            if d.name in bases:
                raise self.error(f"'{d.name}' is a base param (line {bases[d.name].loc.line}): "
                                 f"a base param is one no definition computes", d.loc)
            defs[d.name] = (d, tree)
        order = list(defs)
        for i, (d, tree) in enumerate(defs.values()):
            for v in sorted(d.definition.variables):
                if v in defs and order.index(v) < i:
                    continue
                at = self._name_loc(tree, v)
                if v == d.name:
                    raise self.error(f"the definition of '{v}' refers to '{v}' itself", at)
                if v in defs:
                    cycle = self._cycle(defs, v, d.name)
                    if cycle:
                        raise self.error(f"the definitions of {', '.join(sorted(set(cycle)))} "
                                         f"refer to each other ({' -> '.join(cycle)}): a "
                                         f"definition uses only params, base params and earlier "
                                         f"definitions", at)
                    raise self.error(f"the definition of '{d.name}' refers to '{v}', defined "
                                     f"after it (line {defs[v][0].loc.line}): list each "
                                     f"definition after the definitions it uses", at)
                if v not in params and v not in bases:
                    raise self.error(f"the definition of '{d.name}' refers to '{v}', which is "
                                     f"no param, base param or definition of kernel '{name}' "
                                     f"(declare it: 'param {v}' or 'base {v}')", at)
        return tuple(d for d, _ in defs.values()), tuple(bases.values())

    @staticmethod
    def _cycle(defs: dict, start: str, back: str) -> Optional[list[str]]:
        """The names from ``back`` through ``start`` and the definitions it uses back to
        ``back`` (``['M', 'K', 'M']``), or None when ``start``'s definition never reaches it."""
        path: list[str] = []
        seen: set[str] = set()

        def walk(n: str) -> bool:
            if n == back:
                return True
            if n in seen or n not in defs:
                return False
            seen.add(n)
            path.append(n)
            if any(walk(v) for v in sorted(defs[n][0].definition.variables)):
                return True
            path.pop()
            return False

        return [back, *path, back] if walk(start) else None

    def _name_loc(self, tree: Tree, name: str) -> Loc:
        """Where the definition ``tree`` first names ``name`` (its line when it names none)."""
        for tok in tree.scan_values(lambda t: isinstance(t, Token) and t.type == "NAME"):
            if str(tok) == name and tok is not tree.children[0]:
                return self.loc(tok)
        return self.loc(tree)

    def attrs(self, nodes: list[Tree], allowed: dict[str, str], what: str) -> dict[str, object]:
        """Check ``NAME`` / ``NAME=INT`` / ``NAME=(...)`` attributes against ``allowed``."""
        out: dict[str, object] = {}
        for node in nodes:
            name_tok = node.children[0]
            name = str(name_tok)
            loc = self.loc(node)
            if name not in allowed:
                spelled = ", ".join(_ATTR_SPELLING[k].format(n) for n, k in allowed.items())
                raise self.error(f"unknown attribute '{name}' on {what} "
                                 f"(expected one of {spelled})", loc)
            if name in out:
                raise self.error(f"duplicate attribute '{name}' on {what}", loc)
            want = allowed[name]
            have = {"flag_attr": "flag", "int_attr": "int", "tuple_attr": "tuple"}[node.data]
            if want != have:
                raise self.error(f"attribute '{name}' on {what} must be written "
                                 f"'{_ATTR_SPELLING[want].format(name)}'", loc)
            if have == "flag":
                out[name] = True
            elif have == "int":
                out[name] = int(node.children[1])
            else:
                out[name] = self.names(node.children[1])
        return out

    def names(self, tree: Tree) -> tuple[str, ...]:
        return tuple(str(t) for t in tree.children)

    def pipe(self, tree: Tree) -> Pipe:
        name = str(tree.children[0])
        loc = self.loc(tree)
        a = self.attrs(tree.children[1:], _PIPE_ATTRS, f"pipe '{name}'")
        if "capacity" not in a:
            raise self.error(f"pipe '{name}' needs a capacity (capacity=N)", loc)
        capacity = a["capacity"]
        if capacity < 1:
            cap_node = next(n for n in tree.children[1:] if str(n.children[0]) == "capacity")
            raise self.error(f"the capacity of pipe '{name}' must be at least 1",
                             self.loc(cap_node))
        named = bool(a.get("named_barrier", False))
        if named:
            from .kernel import named_pipe_error

            bad = named_pipe_error(name, capacity, a.get("readers", ()),
                                   bool(a.get("one_shot", False)))
            if bad:
                raise self.error(bad, loc)
        return Pipe(name, capacity, a.get("fields", ()), readers=a.get("readers", ()),
                    one_shot=bool(a.get("one_shot", False)), mma=a.get("mma", ()), loc=loc,
                    named=named)

    def partition(self, tree: Tree) -> Partition:
        name = str(tree.children[0])
        a = self.attrs(tree.children[1:-1], _PARTITION_ATTRS, f"partition '{name}'")
        body = self.block(tree.children[-1])
        return Partition(name, body, warps=a.get("warps", 4), regs=a.get("regs"),
                         default=bool(a.get("default", False)), loc=self.loc(tree))

    # -- statements ---------------------------------------------------------------------------
    def block(self, tree: Tree) -> tuple[Stmt, ...]:
        return tuple(self.stmt(s) for s in tree.children)

    def stmt(self, tree: Tree) -> Stmt:
        if tree.data == "event":
            return self.event(tree)
        if tree.data == "for_stmt":
            return self.for_stmt(tree)
        return self.if_stmt(tree)

    def event(self, tree: Tree) -> Union[Event, Access]:
        children = list(tree.children)
        pipe = str(children[0])
        reader: Optional[str] = None
        fields: Optional[tuple[str, ...]] = None
        if isinstance(children[1], Tree) and children[1].data == "selector":
            for item in children[1].children:
                if item.data == "sel_reader":
                    if reader is not None:
                        raise self.error(f"a second reader name '{item.children[0]}' in the event "
                                         f"selector (write one reader name per event)",
                                         self.loc(item))
                    reader = str(item.children[0])
                else:
                    key = str(item.children[0])
                    if key != "fields":
                        raise self.error(f"unknown event attribute '{key}' "
                                         f"(expected fields=(...))", self.loc(item))
                    if fields is not None:
                        raise self.error("duplicate attribute 'fields' on an event",
                                         self.loc(item))
                    fields = self.names(item.children[1])
            children.pop(1)
        verb_tok, index_tree = children[1], children[2]
        field_tok = children[3] if len(children) > 3 else None
        bytes_tok = children[4] if len(children) > 4 else None
        verb = str(verb_tok)
        if bytes_tok is not None and verb != "tma":
            raise self.error(f"only a TMA copy ({pipe}.tma(INDEX, FIELD, BYTES)) takes a byte "
                             f"count", self.loc(bytes_tok))
        if bytes_tok is not None and int(str(bytes_tok)) == 0:
            # 0 is how the IR holds "unknown" (printed with no count): a stated 0 would read
            # back as unknown, and no TMA copy lands 0 bytes (its commit's expect-tx of 0 lets
            # the phase complete before the copy lands)
            raise self.error(f"a TMA copy moves at least one byte: {pipe}.tma(INDEX, FIELD, "
                             f"BYTES) with BYTES >= 1, or {pipe}.tma(INDEX, FIELD) where the "
                             f"bytes are unknown", self.loc(bytes_tok))
        if verb in ACCESS_VERBS:
            if field_tok is None:
                raise self.error(f"a slot access names its field: {pipe}.{verb}(INDEX, FIELD)",
                                 self.loc(verb_tok))
            if fields is not None:
                raise self.error("a slot access takes no field view (the reader's view is on its "
                                 "wait)", self.loc(tree))
            if verb in ("write", "tma", "readback", "maywrite") and reader is not None:
                raise self.error(f"'{verb}' is the writer's access: it takes no reader name (a "
                                 f"reader reads its slot with {pipe}[READER].read)",
                                 self.loc(verb_tok))
            index = self.affine(index_tree, "a slot access index")
            return Access("reader" if verb in ("read", "openread") else "writer", pipe,
                          str(field_tok), index, reader=reader, loc=self.loc(tree),
                          tma=verb == "tma",
                          nbytes=int(str(bytes_tok)) if bytes_tok is not None else 0,
                          readback=verb == "readback", may=verb == "maywrite",
                          open_only=verb == "openread")
        if verb not in VERBS:
            raise self.error(f"unknown verb '{verb}' (expected one of "
                             f"{', '.join(VERBS + ACCESS_VERBS)})", self.loc(verb_tok))
        if field_tok is not None:
            raise self.error(f"{verb} takes one argument, the index (slot accesses are "
                             f"{pipe}.write(INDEX, FIELD) / {pipe}.read(INDEX, FIELD))",
                             self.loc(field_tok))
        index = self.affine(index_tree, "an event index")
        return Event(verb, pipe, index, reader=reader, fields=fields, loc=self.loc(tree))

    def for_stmt(self, tree: Tree) -> For:
        var = str(tree.children[0])
        args = tree.children[1:-1]
        body = self.block(tree.children[-1])
        start, step = Affine(0), 1
        if len(args) == 1:
            stop = self.affine(args[0], "a range bound")
        else:
            start = self.affine(args[0], "a range bound")
            stop = self.affine(args[1], "a range bound")
            if len(args) == 3:
                s = self.affine(args[2], "a range step")
                if not s.is_const:
                    raise self.error("the range step must be an integer constant",
                                     self.loc(args[2]))
                if s.const == 0:
                    raise self.error("the range step must not be zero", self.loc(args[2]))
                step = s.const
        return For(var, start, stop, step, body, loc=self.loc(tree))

    def if_stmt(self, tree: Tree) -> If:
        cond = self.cond(tree.children[0])
        then = self.block(tree.children[1])
        orelse: tuple[Stmt, ...] = ()
        if len(tree.children) > 2:
            other = tree.children[2]
            orelse = self.block(other) if other.data == "block" else (self.if_stmt(other),)
        return If(cond, then, orelse, loc=self.loc(tree))

    # -- expressions --------------------------------------------------------------------------
    def affine(self, tree: Union[Tree, Token], what: str) -> Affine:
        v = self.value(tree)
        if v.kind != "int":
            raise self.error(f"expected an integer expression for {what}, found "
                             f"{_KIND_WORDS[v.kind]}", v.loc)
        return v.value  # type: ignore[return-value]

    def cond(self, tree: Union[Tree, Token]) -> Cond:
        v = self.value(tree)
        if v.kind != "cond":
            raise self.error(f"expected a condition (such as 'i < N' or 'i % 2 == 0'), found "
                             f"{_KIND_WORDS[v.kind]}", v.loc)
        return v.value  # type: ignore[return-value]

    def _need(self, v: _Val, kind: str, context: str) -> None:
        if v.kind != kind:
            raise self.error(f"expected {_KIND_WORDS[kind]} {context}, found {_KIND_WORDS[v.kind]}",
                             v.loc)

    def _sized(self, v: _Val) -> _Val:
        """``v``, an integer expression the reader computed, unless a constant or coefficient of
        it has more than MAX_BITS bits: the printer writes each as a literal, which this reader
        would then refuse (``9...9 * 9...9`` of two 300-digit literals)."""
        a: Affine = v.value  # type: ignore[assignment]
        bits = max([abs(a.const).bit_length()] + [abs(c).bit_length() for _, c in a.terms])
        if bits > MAX_BITS:
            raise self.error(f"this expression computes an integer of {bits} bits: the integers "
                             f"of a .pipe file have at most {MAX_BITS} bits", v.loc)
        return v

    def value(self, tree: Union[Tree, Token]) -> _Val:
        loc = self.loc(tree)
        kind = tree.data
        ch = tree.children
        if kind == "int":
            return _Val("int", Affine(int(ch[0])), loc)
        if kind == "name":
            return _Val("int", Affine.of(str(ch[0])), loc)
        if kind == "paren":
            inner = self.value(ch[0])
            return _Val(inner.kind, inner.value, loc)
        if kind == "call":
            fn = str(ch[0])
            if fn != "rem":
                raise self.error(f"unknown function '{fn}' (the only one is rem(EXPR, M), C's "
                                 f"remainder)", loc)
            a, b = self.value(ch[1]), self.value(ch[2])
            self._need(a, "int", "as the first argument of rem")
            self._need(b, "int", "as the modulus of rem")
            if not b.value.is_const or b.value.const <= 0:
                raise self.error("the modulus of rem(EXPR, M) must be a positive integer constant",
                                 b.loc)
            return _Val("crem", (a.value, b.value.const), loc)
        if kind in ("add", "sub", "mul", "mod"):
            a, b = self.value(ch[0]), self.value(ch[1])
            op = {"add": "+", "sub": "-", "mul": "*", "mod": "%"}[kind]
            self._need(a, "int", f"before '{op}'")
            self._need(b, "int", f"after '{op}'")
            x, y = a.value, b.value
            if kind == "add":
                return self._sized(_Val("int", x + y, loc))
            if kind == "sub":
                return self._sized(_Val("int", x - y, loc))
            if kind == "mul":
                if x.is_const:
                    return self._sized(_Val("int", y.scale(x.const), loc))
                if y.is_const:
                    return self._sized(_Val("int", x.scale(y.const), loc))
                raise self.error(f"non-affine expression: '{x}' * '{y}' multiplies two "
                                 f"non-constant expressions (one side must be an integer)", loc)
            if not y.is_const:
                raise self.error("the modulus after '%' must be an integer constant", b.loc)
            if y.const <= 0:
                raise self.error("the modulus after '%' must be positive", b.loc)
            return _Val("mod", (x, y.const), loc)
        if kind == "neg":
            a = self.value(ch[0])
            self._need(a, "int", "after unary '-'")
            return _Val("int", -a.value, loc)
        if kind == "compare":
            a, op_tok, b = self.value(ch[0]), str(ch[1]), self.value(ch[2])
            assert op_tok in CMP_OPS
            if a.kind in ("mod", "crem"):
                if op_tok not in ("==", "!="):
                    raise self.error(f"a '%' expression can only be compared with == or !=, "
                                     f"not '{op_tok}'", self.loc(ch[1]))
                self._need(b, "int", f"after '{op_tok}'")
                if not b.value.is_const:
                    raise self.error("a '%' expression can only be compared with an integer "
                                     "constant", b.loc)
                expr, modulus = a.value
                return _Val("cond", ModCompare(expr, modulus, op_tok, b.value.const,
                                               c=a.kind == "crem"), loc)
            self._need(a, "int", f"before '{op_tok}'")
            self._need(b, "int", f"after '{op_tok}'")
            return _Val("cond", Compare(a.value, op_tok, b.value), loc)
        if kind == "not_test":
            a = self.value(ch[0])
            self._need(a, "cond", "after 'not'")
            return _Val("cond", Not(a.value), loc)
        if kind in ("and_test", "or_test"):
            op = "and" if kind == "and_test" else "or"
            items = []
            for c in ch:
                v = self.value(c)
                self._need(v, "cond", f"around '{op}'")
                items.append(v.value)
            return _Val("cond", BoolOp(op, tuple(items)), loc)
        raise AssertionError(f"unexpected tree {kind}")  # pragma: no cover
