"""An adversarial round on tle-dump's two text inputs, the ``.pipe`` protocol text and the ``.kir``
kernel IR text: files built to make tle-dump say `verified` where it is not true, to crash it, or
to print a report (itself a ``.pipe`` file) that reads back with another verdict. Each case is
written to a file and read by tle-dump's main(); its exit status (and the check of a rejection)
is pinned, and two properties hold over every ``.pipe`` file of the repository and every case
here: the report reads back with the same exit status and verdict (line numbers aside), and a
rejection's witness ``(when N=...)`` given back with ``--param`` is rejected again.

Wrong before the fixes that came with this file:
- a report that does not read back. The ``.pipe`` reader refused integers of more than 100
  digits, while it computed larger ones (``9...9 * 9...9 * N`` of two 100-digit literals, a sum
  in a condition, a modulus or a range step computed from literals) and a ``.kir`` kernel may
  hold integers of 1024 bits (ir/kernel_text.MAX_INT_BITS): the report printed them as literals
  the reader then refused (exit 2 where the kernel was rejected, bounded or unknown). Now the
  reader holds literals and every value it computes to 1024 bits (ir/parser.MAX_BITS), refusing
  a larger one at its expression's line.
- names. A ``.kir`` (or Python) kernel may use Unicode identifiers (a param ``Ñ``, a pipe
  ``ríng``), which the ``.pipe`` reader refused, and a ``.kir`` kernel may name a param or a loop
  variable `` `not` ``, which the report printed bare (``range(not)``, a syntax error). The
  ``.pipe`` reader now reads Unicode identifiers (in Unicode normal form NFKC, as Python reads
  them: ``ℕ`` is refused, Python reads it as ``N``) and any name in backticks; the printer writes
  the reserved words ``for if else not`` in backticks (ir/expr.name_text). tests/
  test_adversarial_pipe_text.py's "non-ASCII name" case is now a name not in NFKC.
- a .kir location comment naming a quoted file with a newline (``# "x\\nkernel evil":6:7``):
  tle-dump prints that file after each event of the report and in each error line, so the
  report held lines of the file's choosing and did not read back. Now refused at the comment
  (exit 2), as tle-dump refuses a PATH holding a control character.
- a .kir kernel whose ``num_warps`` @tle.jit refuses (0, 3) or differs from its default
  partition's ``warps`` (``num_warps=8`` beside ``default warps=4``) was verified: the verifier
  counts the partition's warps, the lowering launches the default partition with num_warps.
  Now refused where the file is read (ir/kernel_text.check_warps, exit 2).
- a name of letters and digits that is no Python identifier (``N৴``: the grammars' ``\\w``
  holds a few number signs Python's identifiers do not): a .kir kernel with such a param was
  verified, ``--param`` could not name it (a witness not reproducible) and its report did not
  read back. Both readers now refuse such a name at its line.
- a pipe nothing writes. A Python or ``.kir`` kernel whose reader reads a pipe its writer never
  stores into is rejected (``unwritten-field``: the program records every access), but in a
  ``.pipe`` file such a pipe is a protocol skeleton: the report read back was verified. The
  report now says ``kernel NAME every_access`` where it matters (ir/printer.py), and the reader
  reads the flag (Program.every_access).
- a derived param (``M = N // 2`` of a .kir kernel) printed as a param of its own, so the report
  of a kernel bounded because its fault needs values no launch gives read back rejected: the
  .pipe text had no form for a definition. The report now writes it (``def M = N // 2``, and
  ``base N`` for a param only definitions use; ir/parser.py, tests/test_pipe_derived_params.py).

Checked and found right (pinned as twins): domains of one value or none in i32 (``param N >=
3000000000``: the theorem's values below the domain prove it, a fault is not claimed away),
capacities of 2^31 and 2^63 (bad-capacity), loop bounds that leave i32 (unknown, never
verified), CRLF line ends with tabs, form feeds and ``else`` after a comment line, one-line
files joined by ``;``, a final line without a newline, a vertical tab or a lone carriage return
(one error line), ``--param`` spellings (``+3`` and `` 3`` read as 3; ``0x10``, ``1_000``,
Arabic-Indic digits and ``3.0`` refused), a param declared after its use or in another kernel
of the file, pipes and partitions of one name, warps and registers beyond the hardware,
backticked reserved words as names of a .pipe file (`` `for`.acquire(`not`) ``), a .kir
kernel of matching num_warps, a .kir location file with blanks. Also checked, not pinned: some
2,000 random near-miss protocols that tle-dump verified (loops over N from 0 or 1 to N + c,
conditions on N - i, ``rem`` and ``%``, nested constant loops, events indexed by N outside the
loops, close with ``openread`` and the closed flag; capacities 1 to 3, domains bounded or not)
run through the simulator up to N = 90 without a fault.
"""

from __future__ import annotations

import contextlib
import io
import re
import traceback
from pathlib import Path

import pytest

from tle_compiler.cli.dump import main
from tle_compiler.ir.parser import MAX_BITS, MAX_DIGITS, parse_file, parse_module
from tle_compiler.ir.printer import print_module, without_locations
from tle_compiler.semantics.simulator import simulate_range

ROOT = Path(__file__).resolve().parents[1]
REPO_PIPES = sorted([*(ROOT / "tests" / "fixtures" / "pipe_text").glob("*.pipe"),
                     *(ROOT / "docs").glob("*.pipe"), *(ROOT / "tle_kernels").glob("*.pipe"),
                     *(ROOT / "benchmarks").glob("*.pipe")])


def dump(*args) -> tuple[int, str, str]:
    """tle-dump in process: exit status, stdout, stderr; an exception escaping fails the test."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(a) for a in args])
        except BaseException:  # noqa: BLE001 - main returns its status, it never raises
            pytest.fail(f"tle-dump {args} raised:\n{traceback.format_exc()}")
    assert "Traceback" not in out.getvalue() + err.getvalue(), err.getvalue()
    return code, out.getvalue(), err.getvalue()


def verdict_line(report: str) -> str:
    """The report's verdict, line numbers aside (the report's lines are not the file's)."""
    lines = [ln for ln in report.splitlines() if ln.startswith("# verdict")]
    return re.sub(r"line \d+", "line L", lines[-1]) if lines else ""


WITNESS = re.compile(r"\(when ([^\s=()]+=-?\d+(?:, [^\s=()]+=-?\d+)*)")


def check_report_and_witnesses(path: Path, tmp_path: Path, code: int, out: str, err: str) -> None:
    """The report reads back with the same exit status and verdict; each witness of a rejection
    is rejected again when its param values are given with --param."""
    if code == 2:
        return
    back = tmp_path / "report.pipe"
    back.write_text(out, encoding="utf-8")
    code2, out2, err2 = dump(back)
    assert code2 == code, (out, err2)
    assert verdict_line(out2) == verdict_line(out)
    if code != 1:
        return
    params = {p.name for k in parse_file(back).kernels for p in k.params}
    for m in WITNESS.finditer(err):
        given = [kv for kv in m.group(1).split(", ") if kv.split("=")[0] in params]
        code3, _, err3 = dump(*[a for kv in given for a in ("--param", kv)], path)
        assert code3 == 1, (m.group(0), err3)


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return path


def one_error_line(err: str, path: Path) -> int:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    m = re.match(re.escape(str(path)) + r":(\d+)(?::\d+)?: error: ", lines[0])
    assert m, err
    return int(m.group(1))


# ------------------------------------------------ properties over the repository's .pipe files

@pytest.mark.parametrize("path", REPO_PIPES, ids=[p.stem for p in REPO_PIPES])
def test_every_repository_pipe_report_reads_back(tmp_path, path):
    code, out, err = dump(path)
    check_report_and_witnesses(path, tmp_path, code, out, err)


# ------------------------------------------------ .pipe cases: (text, exit, check or None)

def ring(dom: str = "", cap: str = "2", wr: str = "N", rd: str = "N", head: str = "kernel k",
         names: dict | None = None) -> str:
    """A ring of one field: the writer commits range(wr), the reader waits range(rd)."""
    n = {"N": "N", "kv": "kv", "f": "f", "p": "p", "c": "c", "i": "i", **(names or {})}
    return (f"{head}\nparam {n['N']}{dom}\npipe {n['kv']} capacity={cap} fields=({n['f']})\n"
            f"partition {n['p']} default {{\n  for {n['i']} in range({wr}) {{\n"
            f"    {n['kv']}.acquire({n['i']})\n    {n['kv']}.write({n['i']}, {n['f']})\n"
            f"    {n['kv']}.commit({n['i']})\n  }}\n}}\n"
            f"partition {n['c']} {{\n  for {n['i']} in range({rd}) {{\n"
            f"    {n['kv']}.wait({n['i']})\n    {n['kv']}.read({n['i']}, {n['f']})\n"
            f"    {n['kv']}.release({n['i']})\n  }}\n}}\n")


B100 = "9" * 100
TOP = 2 ** MAX_BITS - 1  # the largest integer a .pipe file holds
HEAD = "kernel k\nparam N\npipe kv capacity=2\n"


def two(writer: str, reader: str = "kv.wait(0)\n  kv.release(0)") -> str:
    return HEAD + f"partition p default {{\n  {writer}\n}}\npartition c {{\n  {reader}\n}}\n"


def loop_if(cond: str, index: str = "i") -> tuple[str, str]:
    w = (f"for i in range(N) {{\n    if {cond} {{\n      kv.acquire({index})\n"
         f"      kv.commit({index})\n    }}\n  }}")
    r = (f"for i in range(N) {{\n    if {cond} {{\n      kv.wait({index})\n"
         f"      kv.release({index})\n    }}\n  }}")
    return w, r


UNI = {"N": "Ñ", "kv": "ríng", "f": "ĉampo", "p": "écrit", "c": "lü", "i": "ï"}
KW = {"N": "`not`", "kv": "`for`", "f": "`if`", "p": "`else`", "c": "`not_`", "i": "`if`"}
KW_PIPES = ("kernel k\nparam N\npipe `else` capacity=1\npipe `if` capacity=1\n"
            "partition `for` default {{\n  if N > 0 {{\n    `if`.acquire(0)\n    `if`.commit(0)\n"
            "  }}\n  `else`.acquire(0)\n  `else`.commit(0)\n}}\n"
            "partition `not` {{\n  if not N < 1 {{\n    `if`.wait(0)\n    `if`.release(0)\n  }}\n"
            "  `else`.wait({idx})\n  `else`.release({idx})\n}}\n")
CRLF_ELSE = ("kernel k\nparam N\npipe kv capacity=2 fields=(f)\n"
             "partition p default {\n  for i in range(N) {\n    kv.acquire(i)\n"
             "    kv.write(i, f)\n    kv.commit(i)\n  }\n}\n"
             "partition c {\n\tfor i in range(N) {\n\t\tif i % 2 == 0 {\n\t\t\tkv.wait(i)\n"
             "\t\t\tkv.read(i, f)\n\t\t\tkv.release(i)\n\t\t}\n  # odd ones\n\n\t else {\n"
             "\t\t\tkv.wait({odd})\n\t\t\tkv.release({odd})\n\t\t}}\n\t}}\n}}\n")

PIPE_CASES = {
    # integers the reader computes: before, the report printed literals it refused
    "product of two 100-digit literals cancels": (
        two(f"kv.acquire({B100} * {B100} * N - {B100} * {B100} * N)\n  kv.commit(0)"), 0, None),
    "product of two 100-digit literals as index": (
        two(f"kv.acquire({B100} * {B100} * N)\n  kv.commit(0)"), 1, None),
    "sum of 100-digit literals in a condition": (
        two(f"if N == {B100} + {B100} {{\n    kv.acquire(0)\n    kv.commit(0)\n  }}"), 1,
        "wait-never-committed"),
    "modulus computed past 100 digits": (two(*loop_if(f"i % ({B100} * 10) == 0")), 3, None),
    "step computed past 100 digits": (ring(wr=f"0, N, {B100} * 10", rd=f"0, N, {B100} * 10"),
                                      3, None),
    "the largest literal": (two(*loop_if(f"i % {TOP} == 0")), 3, None),
    "the largest literal, faulty twin": (two(loop_if(f"i % {TOP} == 0")[0],
                                             loop_if("i % 2 == 0")[1]), 1, None),
    # names: Unicode identifiers and backticked reserved words
    "Unicode names": (ring(names=UNI, wr="Ñ", rd="Ñ"), 0, None),
    "Unicode names, faulty twin": (ring(names=UNI, wr="Ñ", rd="Ñ + 1"), 1, None),
    "backticked reserved words": (ring(names=KW, wr="`not`", rd="`not`"), 0, None),
    "backticked reserved words, faulty twin": (ring(names=KW, wr="`not`", rd="`not` - 1"), 1,
                                               "unconsumed"),
    "a name starting with else after a block": (
        two("if N > 0 {\n    kv.acquire(0)\n    kv.commit(0)\n  }\n  elseé.acquire(0)\n"
            "  elseé.commit(0)",
            "if N > 0 {\n    kv.wait(0)\n    kv.release(0)\n  }\n  elseé.wait(0)\n"
            "  elseé.release(0)").replace(
                "pipe kv capacity=2\n", "pipe kv capacity=2\npipe elseé capacity=1\n"), 0, None),
    "pipes named `else` and `if` after an if block": (KW_PIPES.format(idx="0"), 0, None),
    "pipes named `else` and `if`, faulty twin": (KW_PIPES.format(idx="1"), 1, None),
    # the every_access flag
    "every_access: a pipe nothing writes is read uninitialised": (
        ring(head="kernel k every_access").replace("    kv.write(i, f)\n", ""), 1,
        "unwritten-field"),
    "without the flag the pipe is a protocol skeleton": (
        ring().replace("    kv.write(i, f)\n", ""), 0, None),
    "every_access with every pipe written": (ring(head="kernel k every_access"), 0, None),
    # domains and sizes
    "a domain above i32, correct": (ring(" >= 3000000000"), 0, None),
    "a domain above i32, faulty twin": (ring(" >= 3000000000", rd="N - 1"), 3, None),
    "a domain of i32's largest value on": (ring(" >= 2147483647"), 0, None),
    "a domain below i32": (ring(" any <= -3000000000"), 3, None),
    "capacity 2^31": (ring(cap=str(2 ** 31)), 1, "bad-capacity"),
    "capacity 2^63": (ring(cap=str(2 ** 63)), 1, "bad-capacity"),
    "a loop bound past i32": (ring(wr="N + 4294967296"), 3, None),
    "a loop bound past i32 on a finite domain": (ring(" <= 10", wr="N + 4294967296"), 3, None),
    "every integer": (ring(" any"), 0, None),
    "every integer, faulty twin": (ring(" any", rd="N + 1"), 1, None),
    # layout: line ends, blanks, separators
    "CRLF, tabs and else after a comment line": (
        CRLF_ELSE.replace("{odd}", "i").replace("}}", "}").replace("\n", "\r\n"), 0, None),
    "CRLF, tabs and else, faulty twin": (
        CRLF_ELSE.replace("{odd}", "i + 2").replace("}}", "}").replace("\n", "\r\n"), 1,
        "order-mismatch"),
    "form feeds": (ring().replace("  ", "\f "), 0, None),
    "one line joined by semicolons": (
        "kernel k; param N; pipe kv capacity=2 fields=(f); partition p default { for i in "
        "range(N) { kv.acquire(i); kv.write(i, f); kv.commit(i) } }; partition c { for i in "
        "range(N) { kv.wait(i); kv.read(i, f); kv.release(i) } }", 0, None),
    "one line joined by semicolons, faulty twin": (
        "kernel k; param N; pipe kv capacity=2 fields=(f); partition p default { for i in "
        "range(N) { kv.acquire(i); kv.write(i, f); kv.commit(i) } }; partition c { for i in "
        "range(N) { kv.wait(i); kv.read(i, f); kv.release(i); kv.wait(i) } }", 1, None),
    "no newline at the end": (ring().rstrip("\n"), 0, None),
    "a comment at the end without a newline": (ring() + "# end", 0, None),
    # declarations
    "a param declared after its use": (ring().replace("param N\n", "") + "param N\n", 0, None),
    "a param declared after its use, faulty twin": (
        ring(rd="N + 1").replace("param N\n", "") + "param N >= 3\n", 1, None),
    "a param of another kernel": (ring() + ring(head="kernel k2").replace("param N\n", ""), 1,
                                  "unknown-name"),
    "a pipe named like a partition": (ring(names={"kv": "c"}), 1, "duplicate-name"),
    "warps beyond a CTA": (ring().replace("partition c {", "partition c warps=4096 {"), 1,
                           "bad-warps"),
    "registers beyond setmaxnreg": (ring().replace("partition c {", "partition c regs=100000 {"),
                                    1, "bad-regs"),
}


@pytest.mark.parametrize("name", PIPE_CASES)
def test_pipe_case(tmp_path, name):
    text, want, check = PIPE_CASES[name]
    path = write(tmp_path, "case.pipe", text)
    code, out, err = dump(path)
    assert code == want, err
    if check:
        assert f"[{check}]" in err, err
    if code == 0:
        # the executable semantics agrees at small values (where the domain has them)
        program = parse_file(path).kernels[0]
        assert all(r.ok for r in simulate_range(program, 3)), name
    check_report_and_witnesses(path, tmp_path, code, out, err)


# ------------------------------------------------ unusable .pipe text: one error line, exit 2

MALFORMED = {
    "a literal of 2^1024": (two(*loop_if(f"i % {2 ** MAX_BITS} == 0")), 6, "1025 bits"),
    "a literal of 309 nines": (two(*loop_if(f"i % {'9' * MAX_DIGITS} == 0")), 6, "bits"),
    "twice the largest literal": (two(*loop_if(f"i % (2 * {TOP}) == 0")), 6, "1025 bits"),
    "the largest literal plus one": (two(f"kv.acquire({TOP} + 1)\n  kv.commit(0)"), 5,
                                     "1025 bits"),
    "the largest literal, negated, minus one": (
        two(f"if N == -{TOP} - 1 {{\n    kv.acquire(0)\n    kv.commit(0)\n  }}"), 5, "1025 bits"),
    "a range step past 1024 bits": (ring(wr=f"0, N, {TOP} * 3"), 5, "bits"),
    "a param bound past 1024 bits": (ring(f" <= {2 ** MAX_BITS}"), 2, "1025 bits"),
    "a name not in NFKC": (ring(names={"N": "ℕ"}), 2, "Unicode normal form NFKC"),
    "a backticked name not in NFKC": (ring(names={"f": "`ｆ`"}), 3, "Python reads it as 'f'"),
    "empty backticks": ("kernel k\nparam ``\n", 2, "unexpected character"),
    "a name that is no Python identifier": (ring(names={"i": "i\u09f4"}), 5,
                                            "not a Python identifier"),
    "a reserved word bare": (ring(names={"N": "not"}, wr="not", rd="not"), 5, "unexpected"),
    "an unknown kernel attribute": ("kernel k eager\nparam N\n", 1, "unknown attribute 'eager'"),
    "every_access with a value": ("kernel k every_access=1\nparam N\n", 1, "every_access"),
    "every_access twice": ("kernel k every_access every_access\n", 1, "duplicate attribute"),
    "a vertical tab": (ring().replace("  ", "\v "), 5, "'\\x0b'"),
    "a lone carriage return at the end": (ring() + "\r", 18, "'\\r'"),
}


@pytest.mark.parametrize("name", MALFORMED)
def test_malformed_pipe_text_is_one_error_line(tmp_path, name):
    text, line, words = MALFORMED[name]
    path = write(tmp_path, "bad.pipe", text)
    code, _, err = dump(path)
    assert code == 2 and one_error_line(err, path) == line, err
    assert words in err, err


# ------------------------------------------------ the printer writes what the reader reads

@pytest.mark.parametrize("name", ["Unicode names", "backticked reserved words",
                                  "pipes named `else` and `if` after an if block",
                                  "every_access: a pipe nothing writes is read uninitialised",
                                  "product of two 100-digit literals as index",
                                  "the largest literal"])
def test_print_parse_print_is_the_identity(name):
    module = parse_module(PIPE_CASES[name][0])
    text = print_module(module)
    again = parse_module(text)
    assert without_locations(again) == without_locations(module)
    assert print_module(again) == text


def test_reserved_words_print_in_backticks():
    module = parse_module(ring(names=KW, wr="`not`", rd="`not`"))
    text = print_module(module)
    assert "for `if` in range(`not`)" in text and "`for`.acquire(`if`)" in text
    assert "partition `else` default" in text and "param `not`" in text


def test_every_access_is_printed_only_where_it_changes_a_verdict():
    written = parse_module(ring(head="kernel k every_access")).kernels[0]
    assert written.every_access and "every_access" not in print_module(parse_module(
        ring(head="kernel k every_access")))
    skeleton = ring(head="kernel k every_access").replace("    kv.write(i, f)\n", "")
    assert print_module(parse_module(skeleton)).startswith("kernel k every_access\n")


# ------------------------------------------------ .kir kernels: their reports read back

KIR = """kernel ring_sum(x_ptr, {N}) num_warps=4 {{
  pipe {ring} capacity=2 fields=({tile}: fp32[2, 64])
  tle.assume({N} >= 0)
  partition {load} default warps=4 ({ring} = {ring}, x_ptr = x_ptr, {N} = {N}) {{
    for {t} in range(0, {N}, 1) {{
      slot = {ring}.writer.acquire({t})
      tl.store(tle.gpu.local_ptr(slot.{tile}), tl.load(x_ptr + tl.arange(0, 64)))
      {ring}.writer.commit({t})
    }}
  }}
  partition {use} warps=4 ({ring} = {ring}, x_ptr = x_ptr, {N} = {N}) {{
    for {t} in range(0, {N}, 1) {{
      res = {ring}.reader.wait({t}{lag})
      tl.store(x_ptr + 64 + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.{tile})))
      {ring}.reader.release({t}{lag})
    }}
  }}
}}
"""


def kir(lag: str = "", **names: str) -> str:
    d = {"N": "N", "ring": "ring", "tile": "tile", "load": "load", "use": "use", "t": "t"}
    return KIR.format(lag=lag, **{**d, **names})


BIG = str(2 ** 1000)
KIR_CASES = {
    "a Unicode param": (kir(N="Ñ"), 0),
    "a Unicode param, faulty twin": (kir(N="Ñ", lag=" + 1"), 1),
    "Unicode pipe, field and partitions": (kir(ring="ríng", tile="ĉampo", load="écrit",
                                               use="lü"), 0),
    "a param named `not`": (kir(N="`not`"), 0),
    "a param named `not`, faulty twin": (kir(N="`not`", lag=" + 2"), 1),
    "a loop variable named `not`": (kir(t="`not`"), 0),
    "a loop variable named `else`": (kir(t="`else`"), 0),
    "a partition named `not`": (kir(load="`not`"), 0),
    "a field named `for`": (kir(tile="`for`"), 0),
    "a pipe nothing writes (the local slot is the pipe)": (kir(ring="slot"), 1),
    "a constant of 63 bits in a condition": (
        kir().replace("tle.assume(N >= 0)", "tle.assume(N >= 0)\n  tle.assume(N <= 5)").replace(
            "      slot = ring.writer.acquire(t)",
            f"      if t == {2 ** 63 - 1} {{\n        ring.writer.acquire(t)\n"
            f"        ring.writer.commit(t)\n      }}\n      slot = ring.writer.acquire(t)"), 3),
}


def test_a_constant_of_1000_bits_beside_the_loop_variable_is_refused(tmp_path):
    """Compared with the loop variable, a tensor, the constant becomes a tensor in Triton, which
    refuses one outside i64 and u64 ("Nonrepresentable integer"): so does the frontend, where a
    verdict of `bounded` was given before (frontend/python_numbers.py)."""
    text = kir().replace("tle.assume(N >= 0)", "tle.assume(N >= 0)\n  tle.assume(N <= 5)").replace(
        "      slot = ring.writer.acquire(t)",
        f"      if t == {BIG} {{\n        ring.writer.acquire(t)\n"
        f"        ring.writer.commit(t)\n      }}\n      slot = ring.writer.acquire(t)")
    code, _, err = dump(write(tmp_path, "case.kir", text))
    assert code == 1 and "Nonrepresentable integer" in err and "(1001 bits)" in err, err


@pytest.mark.parametrize("name", KIR_CASES)
def test_kir_case_report_reads_back(tmp_path, name):
    text, want = KIR_CASES[name]
    path = write(tmp_path, "case.kir", text)
    code, out, err = dump(path)
    assert code == want, err
    check_report_and_witnesses(path, tmp_path, code, out, err)


@pytest.mark.parametrize("names, line", [
    ({"N": "N\u09f4"}, 1), ({"t": "`t\u09f4`"}, 5), ({"tile": "\u09f4"}, 2),
])
def test_a_kir_name_that_is_no_python_identifier_is_one_error_line(tmp_path, names, line):
    """The .kir grammar's names are letters and digits of \\w, a few of which (`৴`, a number
    sign) no Python identifier holds: such a param was verified, and its report did not read
    back, nor could --param name it."""
    path = write(tmp_path, "bad.kir", kir(**names))
    code, _, err = dump(path)
    assert code == 2 and one_error_line(err, path) == line, err
    assert "is not a Python identifier" in err


@pytest.mark.parametrize("num_warps, default_warps, line, words", [
    ("0", "4", 1, "num_warps=0: @tle.jit takes a power of two >= 4"),
    ("3", "4", 1, "num_warps=3"),
    ("99999999999", "4", 1, "num_warps=99999999999"),
    ("8", "4", 4, "default partition 'load' has warps=4, but the kernel's num_warps is 8"),
    ("4", "8", 4, "default partition 'load' has warps=8, but the kernel's num_warps is 4"),
])
def test_a_kir_kernel_whose_warps_python_cannot_give_is_one_error_line(tmp_path, num_warps,
                                                                       default_warps, line, words):
    """The verifier counts the partitions' warps, the lowering launches the default partition
    with the kernel's num_warps: `num_warps=8` beside `default warps=4` (or num_warps=0, 3) was
    verified for one kernel and lowered as another. Python's @tle.jit gives neither."""
    text = kir().replace("num_warps=4", f"num_warps={num_warps}").replace(
        "load default warps=4", f"load default warps={default_warps}")
    path = write(tmp_path, "warps.kir", text)
    code, _, err = dump(path)
    assert code == 2 and one_error_line(err, path) == line, err
    assert words in err, err


@pytest.mark.parametrize("num_warps", ["8", "16", None])
def test_a_kir_kernel_of_matching_warps_is_verified(tmp_path, num_warps):
    text = kir()
    if num_warps is None:  # 4 when left out
        text = text.replace(" num_warps=4", "")
    else:
        text = text.replace("num_warps=4", f"num_warps={num_warps}").replace(
            "load default warps=4", f"load default warps={num_warps}")
    path = write(tmp_path, "warps.kir", text)
    code, out, err = dump(path)
    assert code == 0, err
    check_report_and_witnesses(path, tmp_path, code, out, err)


ACQUIRE = "      slot = ring.writer.acquire(t)\n"


def located(file: str) -> str:
    """kir() with the writer's acquire located in ``file`` (a quoted file name)."""
    return kir().replace(ACQUIRE, ACQUIRE[:-1] + f"  # {file}:6:7 | 9 {file}:6:9 10\n")


@pytest.mark.parametrize("file", ['"x\\nkernel evil\\n"', '"x\\rkernel"', '"x\\u2028y"',
                                  '"x\\ty"', '"x\\x85y"'])
def test_a_kir_location_file_that_breaks_lines_is_one_error_line(tmp_path, file):
    """A location comment's quoted file is printed after each event of the report and at each
    error: one holding a newline put lines of its own choosing into the report (which then did
    not read back) and into stderr. Refused as tle-dump refuses such a PATH."""
    path = write(tmp_path, "bad.kir", located(file))
    code, _, err = dump(path)
    assert code == 2 and one_error_line(err, path) == 6, err
    assert "holds the control character" in err


def test_a_kir_location_file_with_blanks_reads_back(tmp_path):
    path = write(tmp_path, "ok.kir", located('"a b.py"'))
    code, out, err = dump(path)
    assert code == 0 and "ring.acquire(t)  # a b.py:6\n" in out, err
    check_report_and_witnesses(path, tmp_path, code, out, err)


def test_a_kir_pipe_nothing_writes_reads_back_rejected(tmp_path):
    path = write(tmp_path, "slot.kir", kir(ring="slot"))
    code, out, err = dump(path)
    assert code == 1 and "[unwritten-field]" in err, err
    assert out.startswith("kernel ring_sum every_access\n")


DERIVED = """kernel k(x_ptr, N) num_warps=4 {
  pipe ring capacity=2 fields=(tile: fp32[2, 64])
  tle.assume(N >= 0)
  M = N // 2
  partition load default warps=4 (ring = ring, x_ptr = x_ptr, N = N) {
    for t in range(0, N, 1) {
      slot = ring.writer.acquire(t)
      tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + tl.arange(0, 64)))
      ring.writer.commit(t)
    }
  }
  partition use warps=4 (ring = ring, x_ptr = x_ptr, N = N, M = M) {
    for t in range(0, 2 * M, 1) {
      res = ring.reader.wait(t)
      tl.store(x_ptr + 64 + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))
      ring.reader.release(t)
    }
    if N % 2 == 1 {
      res = ring.reader.wait(N - 1)
      tl.store(x_ptr + 64 + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))
      ring.reader.release(N - 1)
    }
  }
}
"""


def test_a_derived_param_report_reads_back(tmp_path):
    """The report writes the definition (``def M = N // 2``), so the fault at N=0, M=1 is again
    one no launch gives: bounded, not rejected."""
    path = write(tmp_path, "derived.kir", DERIVED)
    code, out, err = dump(path)
    assert code == 3, err
    assert "\nparam M\ndef M = N // 2\n" in out, out
    check_report_and_witnesses(path, tmp_path, code, out, err)


# ------------------------------------------------ --param spellings

@pytest.mark.parametrize("value, want", [
    ("N=3", 0), ("N=+3", 0), ("N= 3", 0), ("N=-0", 0), ("N=0x10", 2), ("N=1_000", 2),
    ("N=\u0663", 2), ("N=3.0", 2), ("N=", 2), ("M=3", 2), ("N=3=4", 2),
])
def test_param_spellings(tmp_path, value, want):
    path = write(tmp_path, "ring.pipe", ring())
    code, out, err = dump("--param", value, path)
    assert code == want, err
    if want == 0:
        assert re.search(r"verified for N = [03]\b", out), out
