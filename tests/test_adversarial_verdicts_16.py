"""A sixteenth set of adversarial kernels, on what the verifier reads against what the lowered
kernel (and Triton) computes: `tl.cdiv`, `if` / `while` conditions and i32 overflow on names the
kernel body binds to compile-time numbers, `tl.cdiv` of a partition's name bound more than once;
then several kernels in one file (each verdict and the exit code), the `--format json` / `dot`
outputs against the text verdict, the `.kir` text form printed by `--print-ir` read back, and
`tle.gpu.launch_dependents()` / `tle.gpu.prefetch_l2` under loops and branches (no verdict may
change). Each kernel is read by tle-dump and its verdict and exit code pinned (the check name of
a rejection); verified ones also have their generated Gluon's barrier operations checked against
the verified events (tests/adversarial_oracles.py lowering_problems), and what Triton computes
for the constructs at stake is checked on its TTIR.

Wrong before the fix that came with this file (tle_compiler/frontend/protocol.py: Walker.cdiv,
PrologueWalker.tensor_overflow / refuse_run_time_cond; tle_compiler/frontend/local_tensors.py:
WalkRules.tensor_division's `at`), each verified while the lowered kernel hangs:
- `tl.cdiv(M, 3)` with `M = -7` in the kernel body (a reader looping `N + tl.cdiv(M, 3) + 2`
  times, or `K = tl.cdiv(M, 3)` then `N + 2 + K`, against a writer's N). M is an i32 tensor in
  the lowered kernel, and Triton's cdiv is `(x + div - 1) // div`: C's -5 / 3 = -1 there, where
  the verifier read Python's -2. Round 15 refused a written `//` / `%` of such a name; the `//`
  inside cdiv was not checked. The same in a partition: `q = -7` bound twice (not folded, so a
  tensor), then `tl.cdiv(q, 3)` in the reader's trip count (or in a helper given q).
- a kernel-body `if` (or `while`) whose condition divides such a name: `M = -7; if M % 4 == 1:
  K = N else: K = N + 1`. The verifier took the `then` branch (Python's 1); the lowered kernel
  decides the branch at run time on the tensor (C's -3) and the reader looped N + 1 times. Round
  15's refusal looked only at assignments and partition arguments.
- i32 overflow of such a name: `M = 2147483647`, then `N + (M + 1 > 0)` (Python: N + 1; the GPU's
  M + 1 wraps to -2147483648: N); `M = 65536`, `if M * M == 0:` (the i32 product is 0 on the GPU);
  `M = 1`, `(M << 31) < 0`; `M = -2147483648`, `M - 1 < 0`. Partitions already refused this
  (WalkRules.tensor_overflow) for names the builder does not fold; the kernel body did not.
All are now refused (unsupported-expression) where the value reaches run-time code, as round
15's divisions are; the twins the lowering computes as the verifier does (a non-negative M, a
constexpr-annotated M, the literal, a result that fits in i32) stay verified.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tle_compiler.cli.dump import main as tle_dump

from .adversarial_oracles import lowering_problems, triton_ttir
from .test_adversarial_python_semantics import CONFIG, check, reader, ring, writer

HEAD = "import triton.language as tl\nimport tle_compiler as tle\n\n\n"


def _write(tmp_path: Path, text: str, name: str = "kernel.py") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _verdict(tmp_path, capsys, text, expect, params=()):
    path = _write(tmp_path, text)
    check(capsys, path, params, expect)
    return path


def _lowers_to_its_events(path: Path) -> None:
    problems = lowering_problems(path)
    assert not problems, "\n".join(problems)


def body(pre: str, warg: str = "N", rarg: str = "N", extra: str = "") -> str:
    """The ring of tests/test_adversarial_python_semantics.py with the kernel body ``pre``; the
    writer loops ``warg`` times, the reader ``rarg`` times."""
    return ring(warg=warg, rarg=rarg, kernel_pre=pre, extra=extra) + CONFIG


_WNC = ("rejected", "[wait-never-committed]")
_UNC = ("rejected", "[unconsumed]")
_C_DIV = ("rejected", "[unsupported-expression]", "C's division")
_WRAPS = ("rejected", "[unsupported-expression]", "leaves i32 there and wraps")

# --------------------------------------------------- tl.cdiv of a kernel-body constant (a tensor)

BODY_CDIV = {
    # C: (-7 + 2) / 3 = -1, so the reader loops N + 1 times (a hang); Python's -2: N
    "the reader's N + tl.cdiv(M, 3) + 2 with M = -7": (
        body("M = -7\n", rarg="N + tl.cdiv(M, 3) + 2"), _C_DIV + ("tl.cdiv(M, 3)",)),
    "the writer's N + tl.cdiv(M, 3) + 2 with M = -7": (
        body("M = -7\n", warg="N + tl.cdiv(M, 3) + 2"), _C_DIV),
    "K = tl.cdiv(M, 3), then N + 2 + K": (
        body("M = -7\nK = tl.cdiv(M, 3)\n", rarg="N + 2 + K"), _C_DIV + ("`K`, computed",)),
    "M = C - 10 (C = 3), then tl.cdiv(M, 3)": (
        body("M = C - 10\n", rarg="N + tl.cdiv(M, 3) + 2"), _C_DIV),
    # the twins the lowering computes as the verifier does
    "a non-negative M": (body("M = 7\n", rarg="N + tl.cdiv(M, 3) - 3"), "verified"),
    "M: tl.constexpr = -7": (
        body("M: tl.constexpr = -7\n", rarg="N + tl.cdiv(M, 3) + 2"), "verified"),
    "the literal": (body("", rarg="N + tl.cdiv(-7, 3) + 2"), "verified"),
    # C and Python agree on (-7 + 3) / 4 = -1
    "M = -7 where C's and Python's agree": (
        body("M = -7\n", rarg="N + tl.cdiv(M, 4) + 1"), "verified"),
    # K passed whole: a constexpr of Python's value
    "a cdiv passed whole": (body("M = -7\nK = tl.cdiv(M, 3) + 2\n", warg="K", rarg="0"),
                            "verified"),
    # a run-time operand: C's division on both sides, one derived param
    "tl.cdiv(N, 3) on both sides": (
        body("", warg="tl.cdiv(N, 3)", rarg="(N + 2) // 3"), "verified"),
}


@pytest.mark.parametrize("name", list(BODY_CDIV))
def test_cdiv_of_kernel_body_constants(tmp_path, capsys, name):
    text, expect = BODY_CDIV[name]
    path = _verdict(tmp_path, capsys, text, expect, params=("C=3",))
    if expect == "verified" and "N, 3" not in name:  # (the oracle runs no derived param)
        _lowers_to_its_events(path)


def _cdiv_reader(pre: str, call: str = "tl.cdiv(q, 3)", extra: str = "") -> str:
    rbody = reader(f"for p in range(N + {call} + 2):")
    rbody = "".join(f"    {line}\n" for line in pre.splitlines()) + rbody
    return ring(writer(), rbody, extra=extra) + CONFIG


PARTITION_CDIV = {
    # q bound twice: not folded, an i32 tensor in the Gluon (C's -1: the reader loops N + 1)
    "q = -7 bound twice": (_cdiv_reader("q = -7\nq = -7"),
                           ("rejected", "[unsupported-expression]", "`q` in `tl.cdiv(q, 3)`",
                            "bound more than once")),
    "q bound twice, divided in a helper": (
        _cdiv_reader("q = -7\nq = -7", "f(q)", "\n\ndef f(x):\n    return tl.cdiv(x, 3)\n"),
        ("rejected", "[unsupported-expression]", "C's `//`")),
    # bound once: folded, the Gluon computes gl.cdiv(-7, 3) on constexprs (Python's -2)
    "q = -7 bound once": (_cdiv_reader("q = -7"), "verified"),
    "q = 7 bound twice": (_cdiv_reader("q = 7\nq = 7", "tl.cdiv(q, 3) - 5"), "verified"),
}


@pytest.mark.parametrize("name", list(PARTITION_CDIV))
def test_cdiv_of_partition_names(tmp_path, capsys, name):
    text, expect = PARTITION_CDIV[name]
    path = _verdict(tmp_path, capsys, text, expect)
    if expect == "verified":
        _lowers_to_its_events(path)


# ------------------------------------------------------- kernel-body conditions on such a name

BODY_CONDITIONS = {
    # Python: -7 % 4 = 1, the then branch (K = N); the GPU: -3, the else branch (a hang)
    "if M % 4 == 1 / else": (
        body("M = -7\nif M % 4 == 1:\n    K = N\nelse:\n    K = N + 1\n", rarg="K"),
        _C_DIV + ("`M % 4 == 1`",)),
    "if M // 2 == -4 around one assignment": (
        body("M = -7\nK = N\nif M // 2 == -4:\n    K = N + 1\n", warg="N + 1", rarg="K"),
        _C_DIV),
    "if on a name bound to the remainder": (
        body("M = -7\nR = M % 4\nif R == 1:\n    K = N\nelse:\n    K = N + 1\n", rarg="K"),
        _C_DIV),
    "if on tl.cdiv": (
        body("M = -7\nif tl.cdiv(M, 3) == -2:\n    K = N\nelse:\n    K = N + 1\n", rarg="K"),
        _C_DIV),
    # the safe twins
    "if M % 4 == 3 with M = 7": (
        body("M = 7\nif M % 4 == 3:\n    K = N\nelse:\n    K = N + 1\n", rarg="K"), "verified"),
    "if C % 4 == 1 on the constexpr (C = -7)": (
        body("if C % 4 == 1:\n    K = N\nelse:\n    K = N + 1\n", rarg="K"), "verified"),
    "if M % 4 == 1 with M: tl.constexpr = -7": (
        body("M: tl.constexpr = -7\nif M % 4 == 1:\n    K = N\nelse:\n    K = N + 1\n",
             rarg="K"), "verified"),
    # the other branch on Python's reading: a hang on either side, rejected
    "if C % 4 == 1 against the else branch's count": (
        body("if C % 4 == 1:\n    K = N\nelse:\n    K = N + 1\n", rarg="N + 1", warg="K"),
        _WNC),
}


@pytest.mark.parametrize("name", list(BODY_CONDITIONS))
def test_kernel_body_conditions_on_divided_constants(tmp_path, capsys, name):
    text, expect = BODY_CONDITIONS[name]
    path = _verdict(tmp_path, capsys, text, expect, params=("C=-7",))
    if expect == "verified" and "C %" not in name:  # (the oracle lowers DEFAULT_CONFIG's C = 3)
        _lowers_to_its_events(path)


def test_a_kernel_body_while_on_a_divided_constant(tmp_path, capsys):
    """A conservative refusal (a safe kernel): the `while` on `M % 4 == 1` rebinds only M, which
    no partition receives, but its condition is decided on the tensor (C's remainder) and is
    refused as an `if` on it is."""
    _verdict(tmp_path, capsys,
             body("M = -7\nwhile M % 4 == 1:\n    M = M + 1\n"), _C_DIV, params=("C=3",))


# --------------------------------------------------------- i32 overflow of kernel-body constants

BODY_OVERFLOW = {
    # Python: 2147483648 > 0, N + 1; the GPU: M + 1 wraps, N (the reader waits a tile never
    # committed)
    "N + (M + 1 > 0) with M = 2**31 - 1": (
        body("M = 2147483647\n", warg="N + (M + 1 > 0)", rarg="N + 1"),
        _WRAPS + ("`M + 1`",)),
    "if M * M == 0 with M = 65536": (
        body("M = 65536\nK = N\nif M * M == 0:\n    K = N + 1\n", rarg="K"), _WRAPS),
    "(M << 31) < 0 with M = 1": (body("M = 1\n", rarg="N + ((M << 31) < 0)"), _WRAPS),
    "M - 1 < 0 with M = -2**31": (
        body("M = -2147483648\n", warg="N + (M - 1 < 0)", rarg="N + 1"), _WRAPS),
    "a wrapped sum bound to a name, then compared": (
        body("M = 2147483647\nK = M + 1\n", warg="N + (K > 0)", rarg="N + 1"), ("rejected",)),
    "tl.minimum(M + 1, N) with M = 2**31 - 1": (
        body("M = 2147483647\n", warg="tl.minimum(M + 1, N)"), _WRAPS),
    # the twins that fit in i32 (or a constexpr, Python's integers in the Gluon too)
    "N + (M + 1 > 0) with M = 2**31 - 2": (
        body("M = 2147483646\n", warg="N + (M + 1 > 0)", rarg="N + 1"), "verified"),
    "M - 1 < 0 with M = -2**31 + 1": (
        body("M = -2147483647\n", warg="N + (M - 1 < 0)", rarg="N + 1"), "verified"),
    "if M * M == 0 with M: tl.constexpr = 65536": (
        body("M: tl.constexpr = 65536\nK = N\nif M * M == 0:\n    K = N + 1\n", rarg="K"),
        "verified"),
    "(M << 30) > 0 with M = 1": (body("M = 1\n", rarg="N + ((M << 30) > 0) - 1"), "verified"),
}


@pytest.mark.parametrize("name", list(BODY_OVERFLOW))
def test_i32_overflow_of_kernel_body_constants(tmp_path, capsys, name):
    text, expect = BODY_OVERFLOW[name]
    path = _verdict(tmp_path, capsys, text, expect, params=("C=3",))
    if expect == "verified":
        _lowers_to_its_events(path)


# ------------------------------------------------------------------ what Triton itself computes

def _k(lines: str) -> str:
    lines = "".join(f"    {line}\n" for line in lines.splitlines())
    return ("import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
            f"def k(x_ptr, N, C: tl.constexpr):\n{lines}")


@pytest.mark.parametrize("pre,const", [
    # the assigned constant is an i32 tensor: cdiv divides it as C does
    ("M = -7\nx = tl.cdiv(M, 3)", "-1"),
    ("q = -7\nq = -7\nx = tl.cdiv(q, 3)", "-1"),
    # on a constexpr it is Python's
    ("M: tl.constexpr = -7\nx = tl.cdiv(M, 3) + 0 * N", "-2"),
])
def test_what_triton_computes_for_cdiv(tmp_path, monkeypatch, pre, const):
    ttir = triton_ttir(tmp_path, monkeypatch, _k(pre + "\ntl.store(x_ptr + x, 1.0)"), "cdiv16")
    assert f"arith.constant {const} : i32" in ttir, ttir


@pytest.mark.parametrize("pre,true", [
    ("M = 2147483647\nx = (M + 1) > 0", False),
    ("M = 65536\nx = (M * M) == 0", True),
    ("M = 1\nx = (M << 31) < 0", True),
    ("M = -7\nx = (M % 4) == 1", False),
    ("M = 2147483646\nx = (M + 1) > 0", True),
])
def test_what_triton_computes_for_wrapping_and_remainders(tmp_path, monkeypatch, pre, true):
    """The comparison folds to a constant: the store's offset is 1 (an addptr) exactly when it
    holds on the GPU."""
    ttir = triton_ttir(tmp_path, monkeypatch, _k(pre + "\ntl.store(x_ptr + x, 1.0)"), "wrap16")
    assert ("tt.addptr" in ttir) == true, ttir
