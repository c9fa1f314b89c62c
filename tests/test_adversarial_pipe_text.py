"""Adversarial ``.pipe`` files given to tle-dump: hand-written protocol skeletons that race or hang
in ways a verifier could miss, their safe twins, and malformed text.

tests/fixtures/pipe_text/ holds the protocols, each with its expectation on its second line
(``# expect: verified`` / ``rejected [CHECK]`` / ``bounded`` / ``not-verified``): events under
``if``s on params and loop variables, faults that appear only beyond a constant (300, 5000, at
the domain's least or greatest value, below -5000 over every integer), loops with steps and
offsets, nested loops, reversed loops, indices that differ by a constant or by two rounds of the
ring (same stage, same parity, another item), C's remainder against Python's modulo, readers that
skip, double-release or hold two slots, close and the closed flag, one-shot pipes, named-barrier
pipes and the hop that implies their release, slot accesses and TMA copies, capacity edges,
structural errors (duplicate names, shadowing, warps, registers). Each is run through tle-dump in
text and JSON form; a verified one is also run through the simulator (the executable semantics)
at small values. Malformed text must give exit 2 and one ``PATH:LINE: error:`` line. A verified
example kernel's text report, itself a .pipe file, must get the same verdict when read back.

What was wrong before, each pinned below:

* Nesting deeper than Python's stack (a few hundred parentheses, unary minus or ``not``, a sum of
  thousands of terms, a few hundred nested ``if``/``for`` blocks) ended in a RecursionError
  traceback from the .pipe reader. The reader now refuses a parse tree deeper than
  ``parser.MAX_DEPTH`` at its line (exit 2); everything up to that depth is verified.
* 21 nested loops, 99 nested ``if`` blocks or 199 ``not`` (nested parentheses in Python) verified
  nothing: the trace generator compiles each partition into Python, which refuses
  such nesting (SyntaxError "too many statically nested blocks", IndentationError), a traceback.
  Such a body is now run by an interpreter of the IR (ir/tracegen.py, ``_interpreter``) that
  gives the same traces.
* An integer literal of more than 4300 digits (a capacity, index, bound, modulus, step, warps,
  regs or TMA byte count) ended in Python's ValueError for long integer strings, a traceback.
  Literals longer than ``parser.MAX_DIGITS`` are now refused at their line.
* Loop iterations that emit no event cost nothing against the verification budget, which counts
  events: ``if i % 1000000 == 0`` inside a loop over N (the cutoff theorem's values reach past
  2 000 000, each expanding N iterations) or a constant loop of 10^8 empty iterations ran for
  hours. The budget now pays, per partition, for the larger of its events and its loop
  iterations (tracegen ``CompiledProgram.work``, charged by passes/sweep.py and
  passes/witness.py): such a file is ``unknown`` within seconds.
* Pipes that each fit in shared memory but whose mbarriers together do not (two pipes of 14,000
  stages) were verified from a .pipe file, while a .kir file with the same pipes is refused; now
  verify-protocol refuses them too (check ``bad-capacity``, passes/verify_protocol.py).
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from tle_compiler.cli.dump import main
from tle_compiler.diagnostics import TleError
from tle_compiler.ir import tracegen
from tle_compiler.ir.parser import MAX_DEPTH, MAX_DIGITS, parse_file, parse_module
from tle_compiler.semantics.simulator import simulate_range

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "pipe_text"
EXPECT = re.compile(r"^# expect: (verified|rejected|bounded|not-verified)(?: ([a-z0-9-]+))?$", re.M)


def dump(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err, err
    return code, out, err


def dump_json(capsys, path: Path, *args) -> tuple[int, dict, str]:
    code, out, err = dump(capsys, "--format", "json", *args, path)
    data = json.loads(out)
    assert data["exit_code"] == code
    return code, data, err


def one_error_line(err: str, path: Path) -> int:
    """The line number of the single ``PATH:LINE: error:`` line an exit 2 printed."""
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    m = re.match(re.escape(str(path)) + r":(\d+)(?::\d+)?: error: ", lines[0])
    assert m, err
    return int(m.group(1))


# ---------------------------------------------------------------- fixtures: protocols and twins

CASES = sorted(FIXTURES.glob("*.pipe"))


def expectation(path: Path) -> tuple[str, str]:
    m = EXPECT.search(path.read_text())
    assert m, f"{path.name} has no '# expect:' line"
    return m.group(1), m.group(2) or ""


def test_the_fixtures_cover_both_sides():
    kinds = [expectation(p)[0] for p in CASES]
    assert kinds.count("verified") >= 30 and kinds.count("rejected") >= 60


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_fixture_verdict(capsys, path):
    kind, check = expectation(path)
    code, data, err = dump_json(capsys, path)
    (kernel,) = data["kernels"]
    checks = {d["check"] for d in kernel["diagnostics"] if d["severity"] == "error"}
    if kind == "verified":
        assert code == 0 and kernel["verdict"] == "proved" and kernel["verified"], err
    elif kind == "rejected":
        assert code == 1 and kernel["verdict"] == "rejected" and checks, err
        if check:
            assert check in checks, (checks, err)
    elif kind == "bounded":
        assert code == 3 and kernel["verdict"] == "bounded" and not checks, err
    else:  # not-verified: a fault lies beyond what the budget or the bound reaches
        assert code in (1, 3) and kernel["verdict"] != "proved" and not kernel["verified"], err
    # the text form gives the same exit status and says the same
    tcode, out, terr = dump(capsys, path)
    assert tcode == code, terr
    if kind == "rejected" and check:
        assert f"[{check}]" in terr, terr
    if kind == "verified":
        assert "# verdict: verified" in out
        # the executable semantics agrees at small values
        program = parse_file(path).kernels[0]
        assert all(r.ok for r in simulate_range(program, 3)), path.name


# ---------------------------------------------------------------- nesting (was a traceback)

HEAD = "kernel k\nparam N\npipe kv capacity=2\n"


def _two(writer: str, reader: str = "kv.wait(0)\nkv.release(0)") -> str:
    return HEAD + f"partition p default {{\n{writer}\n}}\npartition c {{\n{reader}\n}}\n"


COMMIT0 = "kv.acquire(0)\nkv.commit(0)"
NESTS = {
    "parentheses": lambda d: _two("kv.acquire(" + "(" * d + "0" + ")" * d + ")\nkv.commit(0)"),
    "unary minus": lambda d: _two("kv.acquire(" + "-" * d + "0)\nkv.commit(0)"),
    "not": lambda d: _two("if " + "not " * d + "N < 0 {\n" + COMMIT0 + "\n}",
                          "if " + "not " * d + "N < 0 {\nkv.wait(0)\nkv.release(0)\n}"),
    "sum": lambda d: _two("kv.acquire(" + "+".join(["0"] * d) + ")\nkv.commit(0)"),
    "and in parentheses": lambda d: _two("if " + "(N >= 0 and " * d + "N >= 0" + ")" * d
                                         + " {\n" + COMMIT0 + "\n}"),
    "if": lambda d: _two("if N >= 0 {\n" * d + COMMIT0 + "\n" + "}\n" * d),
    "for": lambda d: _two("".join(f"for a{i} in range(1) {{\n" for i in range(d)) + COMMIT0
                          + "\n" + "}\n" * d),
    "else if": lambda d: _two("".join(f"if N == {i} {{\n{COMMIT0}\n}} else " for i in range(d))
                              + "{\n" + COMMIT0 + "\n}"),
    "for and if": lambda d: _two("".join(f"for a{i} in range(1) {{\nif a{i} == 0 {{\n"
                                         for i in range(d)) + COMMIT0 + "\n" + "}\n}\n" * d),
}


@pytest.mark.parametrize("kind", NESTS)
@pytest.mark.parametrize("depth", [3000, 600])
def test_nesting_beyond_the_limit_is_one_error_line(capsys, tmp_path, kind, depth):
    path = tmp_path / "deep.pipe"
    path.write_text(NESTS[kind](depth))
    code, _, err = dump(capsys, path)
    assert code == 2
    line = one_error_line(err, path)
    assert "nested too deeply" in err and 1 <= line <= path.read_text().count("\n")
    jcode, out, _ = dump(capsys, "--format", "json", path)
    assert jcode == 2 and json.loads(out)["exit_code"] == 2


def _deepest(kind: str) -> int:
    """The deepest nesting of this kind the reader accepts."""
    lo, hi = 1, 2 * MAX_DEPTH
    while lo < hi:
        mid = (lo + hi + 1) // 2
        try:
            parse_module(NESTS[kind](mid))
            lo = mid
        except TleError:
            hi = mid - 1
    return lo


@pytest.mark.parametrize("kind", NESTS)
def test_nesting_at_the_limit_is_verified(capsys, tmp_path, kind):
    depth = _deepest(kind)
    assert depth >= 45  # far beyond any real protocol
    path = tmp_path / "deepest.pipe"
    path.write_text(NESTS[kind](depth))
    for fmt in ("text", "json", "dot"):
        code, _, err = dump(capsys, "--format", fmt, path)
        assert code == 0, err


# ------------------------------------------------- loops nested deeper than Python compiles

def _nest(depth: int, inner: str) -> str:
    return ("".join(f"for a{i} in range({2 if i < 3 else 1}) {{\n" for i in range(depth))
            + inner + "\n" + "}\n" * depth)


def _deep_ring(depth: int, reader_index: str) -> str:
    """A ring of 8 items over `depth` nested loops in each partition (the first three of two
    iterations, the others of one); the item is 4*a0 + 2*a1 + a2 (+ the others, always 0), an
    affine index of every loop variable."""
    index = " + ".join(f"{1 << (2 - i) if i < 3 else 1}*a{i}" for i in range(depth))
    w = _nest(depth, f"kv.acquire({index})\nkv.commit({index})")
    r = _nest(depth, f"kv.wait({reader_index.format(index=index)})\n"
                     f"kv.release({reader_index.format(index=index)})")
    return f"kernel k\npipe kv capacity=2\npartition p default {{\n{w}}}\npartition c {{\n{r}}}\n"


def test_loops_nested_deeper_than_python_compiles_are_verified(capsys, tmp_path):
    """22 nested loops (CPython compiles at most 20 nested loops): was a SyntaxError traceback."""
    path = tmp_path / "deep_ring.pipe"
    path.write_text(_deep_ring(22, "{index}"))
    code, _, err = dump(capsys, path)
    assert code == 0, err


def test_loops_nested_deeper_than_python_compiles_are_checked(capsys, tmp_path):
    """The same ring with the reader two rounds ahead (same stage, same parity): rejected."""
    path = tmp_path / "deep_ring_ahead.pipe"
    path.write_text(_deep_ring(22, "{index} + 4"))
    code, _, err = dump(capsys, path)
    assert code == 1 and ("[order-mismatch]" in err or "[wait-never-committed]" in err), err


def test_the_interpreter_gives_the_generated_traces(monkeypatch):
    """Where Python cannot compile a partition, the IR is interpreted: same statements, same
    traces, same work, on the bundled skeletons and a deep nest."""
    programs = [parse_file(p).kernels[0] for p in (
        ROOT / "tle_kernels" / "sparse_mla_seesaw.pipe", ROOT / "tle_kernels" / "sparse_mla_pipe.pipe",
        ROOT / "benchmarks" / "tle_dump_nested.pipe", FIXTURES / "close.pipe",
        FIXTURES / "write_first_uses_and_300.pipe")]
    generated = [tracegen.compile_program(p) for p in programs]

    def refuse(program):
        raise SyntaxError("too many statically nested blocks")

    monkeypatch.setattr(tracegen, "_generated", refuse)
    for program, gen in zip(programs, generated):
        interp = tracegen.compile_program(program)
        assert [id(s) for s in interp.stmts] == [id(s) for s in gen.stmts]
        for n in range(8):
            params = {p.name: n for p in program.params}
            assert interp.run(params, 10 ** 6) == gen.run(params, 10 ** 6)
            assert interp.work == gen.work
        with pytest.raises(tracegen.TraceBudgetExceeded):
            interp.run({p.name: 7 for p in program.params}, 3)


# ------------------------------------------------ integer literals (was a traceback)

BIG = "9" * 5000
RING_TEMPLATE = ("kernel k\nparam N{bound}\npipe kv capacity={cap} fields=(a)\n"
                 "partition p default warps={warps} {{\n"
                 "  for i in range(0, N, {step}) {{\n"
                 "    if i % {mod} == 0 {{\n"
                 "      kv.acquire({index})\n      kv.tma({index}, a, {nbytes})\n"
                 "      kv.commit({index})\n    }}\n  }}\n}}\n"
                 "partition c regs={regs} {{\n  kv.wait(0)\n  kv.read(0, a)\n  kv.release(0)\n}}\n")
FIELDS = {"bound": (" <= {}", 2), "cap": ("{}", 3), "warps": ("{}", 4), "step": ("{}", 5),
          "mod": ("{}", 6), "index": ("{}", 7), "nbytes": ("{}", 8), "regs": ("{}", 13)}
PLAIN = {"bound": "", "cap": "2", "warps": "4", "step": "1", "mod": "1", "index": "i",
         "nbytes": "64", "regs": "240"}


@pytest.mark.parametrize("where", FIELDS)
def test_an_integer_literal_of_5000_digits_is_one_error_line(capsys, tmp_path, where):
    spelled, line = FIELDS[where]
    path = tmp_path / "big.pipe"
    path.write_text(RING_TEMPLATE.format(**{**PLAIN, where: spelled.format(BIG)}))
    code, _, err = dump(capsys, path)
    assert code == 2 and one_error_line(err, path) == line, err
    assert f"integer literal of 5000 digits: at most {MAX_DIGITS}" in err


def test_an_integer_literal_of_the_most_digits_is_read(capsys, tmp_path):
    """A literal of MAX_DIGITS digits is read: its index leaves i32, so nothing is proved."""
    path = tmp_path / "long.pipe"
    path.write_text(RING_TEMPLATE.format(**{**PLAIN, "index": "1" * MAX_DIGITS}))
    code, _, err = dump(capsys, path)
    assert code in (1, 3), err


# ------------------------------------------------ loop iterations are paid for (was a hang)

SPARSE = """kernel k
param N
pipe kv capacity=2
partition p default {{
  for i in range(N) {{
    if i % {m} == 0 {{
      kv.acquire(i)
      kv.commit(i)
    }}
  }}
}}
partition c {{
  for i in range(N) {{
    if i % {m} == 0 {{
      kv.wait(i)
      kv.release(i)
    }}
  }}
}}
"""


@pytest.mark.parametrize("modulus", [10 ** 6, 10 ** 30])
def test_a_loop_that_rarely_emits_ends_unknown_within_the_budget(capsys, tmp_path, modulus):
    """Indices m apart on capacity 2 alias phases from N = m + 1 on, which no value within the
    budget reaches: unknown, in seconds (it ran for hours)."""
    path = tmp_path / "sparse.pipe"
    path.write_text(SPARSE.format(m=modulus))
    t0 = time.perf_counter()
    code, data, err = dump_json(capsys, path)
    assert time.perf_counter() - t0 < 60
    (kernel,) = data["kernels"]
    assert code == 3 and kernel["verdict"] == "unknown" and "budget" in kernel["reason"], err


def test_a_rarely_emitting_loop_within_the_budget_is_still_rejected(capsys, tmp_path):
    path = tmp_path / "sparse.pipe"
    path.write_text(SPARSE.format(m=1000))
    code, _, err = dump(capsys, path)
    assert code == 1 and "[phase-aliasing]" in err, err


def test_a_constant_loop_of_empty_iterations_ends_unknown(capsys, tmp_path):
    """10^8 iterations before the one commit (the reader waits another index)."""
    path = tmp_path / "spin.pipe"
    path.write_text("kernel spin\npipe kv capacity=1\npartition p default {\n"
                    "  for j in range(100000000) {\n    if j == 99999999 {\n"
                    "      kv.acquire(0)\n      kv.commit(0)\n    }\n  }\n}\n"
                    "partition c {\n  kv.wait(1)\n  kv.release(1)\n}\n")
    t0 = time.perf_counter()
    code, _, err = dump(capsys, path)
    assert code == 3 and "budget" in err and time.perf_counter() - t0 < 60, err


# ------------------------------------------------ mbarriers of all pipes together

def test_pipes_whose_barriers_fit_together_are_verified(capsys, tmp_path):
    """The twin of fixtures/pipe_text/barriers_of_two_pipes_beyond_smem.pipe: two pipes of 7000
    stages (224,000 bytes of mbarriers) fit."""
    text = (FIXTURES / "barriers_of_two_pipes_beyond_smem.pipe").read_text()
    path = tmp_path / "fit.pipe"
    path.write_text(text.replace("capacity=14000", "capacity=7000")
                    .replace("# expect: rejected bad-capacity", ""))
    code, _, err = dump(capsys, path)
    assert code == 0, err


# ------------------------------------------------ malformed text: exit 2, one line

MALFORMED = {
    "byte order mark": ("\ufeffkernel k\nparam N\n", 1),
    "carriage returns only": ("kernel k\rparam N\rpipe kv capacity=1\r", 1),
    # a Unicode name is read (a .kir or Python kernel's report holds one), a look-alike that
    # Python reads as another name is not (tests/test_adversarial_text_inputs.py)
    "name not in NFKC": ("kernel k\nparam \u2115\n", 2),
    "non-breaking space": ("kernel k\u00a0\nparam N\n", 1),
    "Arabic-Indic digits": ("kernel k\nparam N <= \u0661\u0662\n", 2),
    "missing closing brace": (HEAD + "partition p default {\nkv.acquire(0)\nkv.commit(0)\n"
                              "partition c {\nkv.wait(0)\nkv.release(0)\n}\n", 4),
    "missing brace at end": (HEAD + "partition p default {\nfor i in range(N) {\nkv.acquire(i)\n}\n", 4),
    "extra closing brace": (_two(COMMIT0) + "}\n", 12),
    "unknown pipe attribute": ("kernel k\npipe kv capacity=2 depth=3\n", 2),
    "unknown partition attribute": ("kernel k\npartition p default foo=1 {\n}\n", 2),
    "attribute twice": ("kernel k\npipe kv capacity=2 capacity=3\n", 2),
    "flag with a value": ("kernel k\npipe kv capacity=2 one_shot=1\n", 2),
    "capacity 0": ("kernel k\npipe kv capacity=0\n", 2),
    "negative capacity": ("kernel k\npipe kv capacity=-1\n", 2),
    "no capacity": ("kernel k\npipe kv fields=(a)\n", 2),
    "empty param domain": ("kernel k\nparam N >= 5 <= 4\n", 2),
    "two lower bounds": ("kernel k\nparam N >= 1 <= 4 >= 2\n", 2),
    "bound expression": ("kernel k\nparam N >= 1+1\n", 2),
    "bound naming a param": ("kernel k\nparam M\nparam N >= M\n", 3),
    "declaration before kernel": ("param N\nkernel k\n", 1),
    "empty selector": (_two(COMMIT0, "kv[].wait(0)"), 9),
    "two readers in a selector": (_two(COMMIT0, "kv[a b].wait(0)"), 9),
    "unknown event attribute": (_two(COMMIT0, "kv[a depth=(x)].wait(0)"), 9),
    "modulus 0": (_two("for i in range(N) {\nif i % 0 == 0 {\n" + COMMIT0 + "\n}\n}"), 6),
    "negative rem modulus": (_two("for i in range(N) {\nif rem(i, -2) == 0 {\n" + COMMIT0
                                  + "\n}\n}"), 6),
    "unknown function": (_two("for i in range(N) {\nif mod(i, 2) == 0 {\n" + COMMIT0 + "\n}\n}"), 6),
    "step naming a param": (_two("for i in range(0, N, N) {\n" + COMMIT0 + "\n}"), 5),
    "step 0": (_two("for i in range(0, N, 2 - 2) {\n" + COMMIT0 + "\n}"), 5),
    "modulus compared with a param": (_two("for i in range(N) {\nif i % 2 == N {\n" + COMMIT0
                                           + "\n}\n}"), 6),
    "modulus compared with <": (_two("for i in range(N) {\nif i % 2 < 1 {\n" + COMMIT0 + "\n}\n}"), 6),
    "modulus of a modulus": (_two("for i in range(N) {\nif (i % 4) % 2 == 0 {\n" + COMMIT0
                                  + "\n}\n}"), 6),
    "modulus as index": (_two("for i in range(N) {\nkv.acquire(i % 2)\nkv.commit(i)\n}"), 6),
    "modulus on the right": (_two("for i in range(N) {\nif 0 == i % 2 {\n" + COMMIT0 + "\n}\n}"), 6),
    "chained comparison": (_two("for i in range(N) {\nif 0 < i < 2 {\n" + COMMIT0 + "\n}\n}"), 6),
    "condition as index": (_two("kv.acquire(N < 2)\nkv.commit(0)"), 5),
    "integer as condition": (_two("if N {\n" + COMMIT0 + "\n}"), 5),
    "product of params": (_two("kv.acquire(N * N)\nkv.commit(0)"), 5),
    "else without if": (_two("else {\n}"), 5),
    "range of four": (_two("for i in range(0, N, 1, 2) {\n}"), 5),
    "empty range": (_two("for i in range() {\n}"), 5),
    "verb in capitals": (_two("kv.ACQUIRE(0)"), 5),
    "access without field": (_two("kv.acquire(0)\nkv.write(0)\nkv.commit(0)"), 6),
    "negative TMA bytes": (_two("kv.acquire(0)\nkv.tma(0, a, -4)\nkv.commit(0)"), 6),
    "bytes on a read": (_two(COMMIT0, "kv.wait(0)\nkv.read(0, a, 4)\nkv.release(0)"), 10),
    "reader name on a write": (_two("kv.acquire(0)\nkv[r].write(0, a)\nkv.commit(0)"), 6),
    "view on an access": (_two(COMMIT0, "kv.wait(0)\nkv[fields=(a)].read(0, a)\nkv.release(0)"), 10),
    "named pipe of capacity 2": ("kernel k\npipe x capacity=2 named_barrier\n", 2),
    "named one-shot pipe": ("kernel k\npipe x capacity=1 named_barrier one_shot\n", 2),
    "named pipe of two readers": ("kernel k\npipe x capacity=1 named_barrier readers=(a, b)\n", 2),
}


@pytest.mark.parametrize("name", MALFORMED)
def test_malformed_text_is_one_error_line(capsys, tmp_path, name):
    text, line = MALFORMED[name]
    path = tmp_path / "bad.pipe"
    path.write_bytes(text.encode("utf-8"))
    code, _, err = dump(capsys, path)
    assert code == 2 and one_error_line(err, path) == line, err
    jcode, out, _ = dump(capsys, "--format", "json", path)
    assert jcode == 2 and json.loads(out)["exit_code"] == 2


@pytest.mark.parametrize("text, message", [
    ("", "no kernel"), ("# only a comment\n\n", "no kernel"), ("kernel k\x00\n", "NUL"),
])
def test_a_file_without_a_kernel_is_an_error_of_the_file(capsys, tmp_path, text, message):
    path = tmp_path / "empty.pipe"
    path.write_text(text)
    code, _, err = dump(capsys, path)
    assert code == 2 and err.startswith(f"{path}: error: ") and message in err, err


# ------------------------------------------------ a verified kernel's report, read back

EXAMPLES = ["ring", "chain", "spmc", "attention_tile"]


@pytest.mark.parametrize("name", EXAMPLES)
def test_the_report_of_a_verified_kernel_reads_back_verified(capsys, tmp_path, name):
    source = ROOT / "tle_kernels" / "examples" / f"{name}.py"
    code, report, err = dump(capsys, source)
    assert code == 0 and "# verdict: verified" in report, err
    path = tmp_path / f"{name}.pipe"
    path.write_text(report)
    code2, data, err2 = dump_json(capsys, path)
    assert code2 == 0, err2
    (kernel,) = data["kernels"]
    assert kernel["verdict"] == "proved" and kernel["verified"]
    code3, report2, _ = dump(capsys, path)
    assert code3 == 0 and report2.splitlines()[-1] == report.splitlines()[-1]


def test_two_kernels_of_one_name_are_one_error_line(capsys, tmp_path):
    """A report names kernels by their names (--kernel NAME, the JSON's "kernels"), so a second
    kernel of the same name is refused at its line (it was read and reported twice, the JSON
    ambiguous)."""
    one = ("kernel k\nparam N\npipe kv capacity=1 fields=(f)\npartition p default {\n"
           "  kv.acquire(0)\n  kv.commit(0)\n}\npartition c {\n  kv.wait(0)\n  kv.release(0)\n}\n")
    path = tmp_path / "twice.pipe"
    path.write_text(one + one)
    code, _, err = dump(capsys, path)
    assert code == 2 and one_error_line(err, path) == 12, err
    assert "kernel 'k' is declared twice (first at line 1)" in err
    path.write_text(one + one.replace("kernel k", "kernel k2"))
    code, _, err = dump(capsys, path)
    assert code == 0, err
