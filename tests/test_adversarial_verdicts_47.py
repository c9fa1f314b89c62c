"""A forty-seventh adversarial round (adversarial round 47), on the protocol side: trip counts
loaded from memory (in the kernel body, in a partition, twice, through another address, a
mask, ``volatile``, an atomic), loops and ``while`` loops a partition runs without events,
steps computed at run time, conditions on data and on program ids around events, indices that
skip, wrap or repeat, handles and pipes in tuples, helpers and branches, partitions that write
and read one pipe, reader views, closed-flag guards and named-barrier pipes. Each case is a
small kernel written to a file and read by tle-dump's main(); where the case is about what
Triton 3.6 does, a plain ``@triton.jit`` kernel is compiled for sm_90a on the CPU and its TTIR
read.

Bugs found, one line each (before the fixes that came with this file):

- a ``while`` loop whose counter Triton compares unsigned was taken to end by the signed
  counter rule: ``k = tl.full([], 5, tl.uint32); while k >= 0: k -= 1`` (Triton's ``arith.cmpi
  uge k, 0`` always holds, LLVM makes it an unconditional branch), ``while k <= -1: k += 1``
  (the -1 is 2^32 - 1), ``while k < N: k += 2`` of a uint32 ``k`` with ``-5 <= N <= 100`` (N =
  -1 is 2^32 - 1, never met by even steps), a uint32 load through a ``*u32`` argument or a
  uint64 counter, in a partition or in the kernel body, and a kernel-body uint32 value handed
  to a partition: the partition (or the kernel body) never ends, and the kernel was "verified"
  (exit 0); FIXED: where the counter or the bound is a uint32 / uint64 (its type, or a
  kernel-body value's, KernelCtx.unsigned_params), only a step of 1 against ``<`` (-1 against
  ``>``), or a bound known when the kernel is read whose last value modulo 2^bits stays in the
  unsigned range, shows an end (frontend/loop_ends.py ``_unsigned_compare``); otherwise
  ``endless-loop``, the message saying the comparison is unsigned.
- a kernel-body value computed as a fill of an unsigned or float dtype and handed to the
  partitions as a protocol param was read as a signed integer param: ``M = tl.full([], 0,
  tl.uint32) + N`` with a writer under ``if M >= 1:`` and a reader under ``if M - 1 >= 0:``
  (Triton: ``cmpi uge``, true at M = 0, where the writer commits nothing) hangs at N = 0 and
  was "verified for every value of M" (exit 0); with ``range(M)`` (a uint32 mbarrier phase) or
  ``tl.full([], 5, tl.float32) + N`` (a float range bound) it was verified and Triton refuses
  the lowered kernel; FIXED: the signature check of values the protocol reads types ``tl.full``
  / ``tl.zeros`` by their dtype (lowering/loaded_params.py ``_Types.op``), so such a value is
  refused (``signature``) as docs/semantics.md says of unsigned, narrow and float values.
- the same kernels without a DEFAULT_CONFIG signature (or without a DEFAULT_CONFIG) were still
  "verified" (exit 0): the check of the values the protocol reads ran only with a signature,
  though a fill's type is the kernel's own whatever the launch passes; FIXED: without one,
  tle-dump runs it with the arguments read as i32 and loads of any type left alone
  (cli/kernel_checks.py ``check_launch_signature``, loaded_params.check_loaded_params ``untyped``).

Checked and found right (pinned below where cheap): a trip count a partition loads itself
(``non-affine-loop``), two kernel-body loads of one address, or of two, or with a mask, a
``volatile`` load, an atomic (each its own param: a mismatch rejected); a run-time or zero step
(``zero-step``), ``while`` loops with events (refused), ``break`` / ``continue`` / ``return``
in a loop, ``for ... else``, an ``if`` on data or on ``tl.program_id`` around events, C's
``%`` of a negative loop variable, ``&`` / ``^`` / ``//`` of loop variables around events,
indices that skip a stage (verified: the stage used alternates its phases) or wrap into one
phase (rejected), an acquire of ``i + 2`` while ``i`` is open, a second wait of one index, a
release before the wait, a read after the release, handles chosen by a branch or rebound in a
loop, handles and pipes in tuples, a slot of another pipe's window, two pipes of one declaring
helper, a partition that writes and reads one pipe (a deadlock found), two partitions of one
reader, an empty or unknown reader view, guards of the closed flag (``~``, ``^``, ``< 1``, a
flag carried from the previous iteration), and a named-barrier pipe of capacity 2 or of two
readers in a ``.pipe`` file.
"""

from __future__ import annotations

import pytest

from .adversarial_oracles import triton_ttir
from .adversarial_support import dump, expect, get, indented, kernel, loop, put

ENDLESS = ("rejected", "[endless-loop]", "compared with", "unsigned")

#: the ring every case below starts from: N tiles through a pipe of capacity 2
WRITER = loop("for p in range(N):", put("p"))
READER = loop("for p in range(N):", get("p"))


def reader_first(stmts: str) -> str:
    """The ring whose reader runs ``stmts`` before its loop."""
    return kernel(WRITER, stmts + READER)


def body_first(stmts: str) -> str:
    """The ring whose kernel body runs ``stmts`` before the pipe."""
    text = kernel(WRITER, READER)
    return text.replace("    kv = tle.pipe", indented(stmts, 4) + "    kv = tle.pipe")


def check(tmp_path, capsys, text: str, want) -> str:
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, want)
    return err


# ------------------------------------------------------- while loops compared unsigned

UNSIGNED_ENDLESS = {
    "uint32 counter down to >= 0": reader_first(
        "k = tl.full([], 5, tl.uint32)\nwhile k >= 0:\n    k -= 1\n"),
    "uint32 counter up to <= -1": reader_first(
        "k = tl.full([], 5, tl.uint32)\nwhile k <= -1:\n    k += 1\n"),
    "uint64 counter down to >= 0": reader_first(
        "k = tl.full([], 5, tl.uint64)\nwhile k >= 0:\n    k -= 1\n"),
    "uint32 cast of a param": reader_first(
        "k = (N * 0 + 5).to(tl.uint32)\nwhile k >= 0:\n    k -= 1\n"),
    "int32 counter against a uint32 bound": reader_first(
        "z = tl.full([], 0, tl.uint32)\nk = 5\nwhile k >= z:\n    k -= 1\n"),
    "step 2 against a param that may be -1": kernel(
        WRITER, "k = tl.full([], 0, tl.uint32)\nwhile k < N:\n    k += 2\n" + READER).replace(
        "tle.assume(N >= 0)", "tle.assume(-5 <= N <= 100)"),
    "kernel-body uint32 counter": body_first(
        "k = tl.full([], 5, tl.uint32)\nwhile k >= 0:\n    k -= 1\n"),
    "kernel-body uint32 handed to a partition": body_first(
        "k = tl.full([], 5, tl.uint32)\n").replace("(kv, y_ptr, N, C)", "(kv, y_ptr, N, k)")
    .replace("def consume(kv, y_ptr, N, C: tl.constexpr):\n    r = kv.reader()\n",
             "def consume(kv, y_ptr, N, k):\n    r = kv.reader()\n    while k >= 0:\n"
             "        k -= 1\n"),
}


@pytest.mark.parametrize("name", sorted(UNSIGNED_ENDLESS))
def test_a_while_counter_compared_unsigned_that_wraps_is_refused(tmp_path, capsys, name):
    check(tmp_path, capsys, UNSIGNED_ENDLESS[name], ENDLESS)


def test_a_uint32_counter_loaded_through_a_typed_pointer_is_compared_unsigned(tmp_path,
                                                                              capsys):
    text = reader_first("k = tl.load(z_ptr)\nwhile k >= 0:\n    k -= 1\n")
    text = (text.replace("(kv, y_ptr, N, C)", "(kv, y_ptr, N, C, z_ptr)")
            .replace("def consume(kv, y_ptr, N, C: tl.constexpr)",
                     "def consume(kv, y_ptr, N, C: tl.constexpr, z_ptr)")
            .replace("def k(x_ptr, y_ptr, N, C: tl.constexpr)",
                     "def k(x_ptr, y_ptr, N, C: tl.constexpr, z_ptr)")
            .replace('"N": "i32"}', '"N": "i32", "z_ptr": "*u32"}'))
    check(tmp_path, capsys, text, ENDLESS)


UNSIGNED_ENDING = {
    # the bits step by one modulo 2^32 and meet a strict bound before they wrap
    "uint32 counter down to > 0": reader_first(
        "k = tl.full([], 5, tl.uint32)\nwhile k > 0:\n    k -= 1\n"),
    "uint32 counter up to < N": reader_first(
        "k = tl.full([], 0, tl.uint32)\nwhile k < N:\n    k += 1\n"),
    # a known bound whose last value stays in [0, 2^32): 0 + 3 - 1 + ... ends at 12
    "uint32 counter by 3 up to < 10": reader_first(
        "k = tl.full([], 0, tl.uint32)\nwhile k < 10:\n    k += 3\n"),
    "uint32 counter by -1 down to >= 1": reader_first(
        "k = tl.full([], 5, tl.uint32)\nwhile k >= 1:\n    k -= 1\n"),
    "kernel-body uint32 handed to a partition, down to > 0": body_first(
        "k = tl.full([], 5, tl.uint32)\n").replace("(kv, y_ptr, N, C)", "(kv, y_ptr, N, k)")
    .replace("def consume(kv, y_ptr, N, C: tl.constexpr):\n    r = kv.reader()\n",
             "def consume(kv, y_ptr, N, k):\n    r = kv.reader()\n    while k > 0:\n"
             "        k -= 1\n"),
    # signed: N + 5 may wrap negative, and then the loop does not run
    "kernel-body int32 counter down to >= 0": body_first(
        "k = N + 5\nwhile k >= 0:\n    k -= 1\n"),
}


@pytest.mark.parametrize("name", sorted(UNSIGNED_ENDING))
def test_a_while_counter_that_ends_stays_verified(tmp_path, capsys, name):
    check(tmp_path, capsys, UNSIGNED_ENDING[name], "verified")


def test_triton_compares_a_uint32_counter_with_zero_unsigned(tmp_path, monkeypatch):
    """The oracle: Triton 3.6 compares ``k >= 0`` of a uint32 ``k`` as ``uge`` (always true)
    and ``k <= -1`` as ``ule`` against -1 (2^32 - 1, always true)."""
    source = ("import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
              "def k(x_ptr, N, C: tl.constexpr):\n"
              "    k = tl.full([], 5, tl.uint32)\n    while k >= 0:\n        k -= 1\n"
              "    j = tl.full([], 5, tl.uint32)\n    while j <= -1:\n        j += 1\n"
              "    tl.store(x_ptr, (k + j).to(tl.float32))\n")
    ttir = triton_ttir(tmp_path, monkeypatch, source, "uge")
    assert "arith.cmpi uge" in ttir and "arith.cmpi ule" in ttir, ttir


# ------------------------------------------- kernel-body fills of an unsigned or float dtype

def handed_to_both(fill: str, writer: str = WRITER, reader: str = READER) -> str:
    """The ring whose kernel body computes ``M = fill + N`` and hands M to both partitions as
    their N."""
    return (kernel(writer, reader)
            .replace("    kv = tle.pipe", f"    M = {fill} + N\n    kv = tle.pipe")
            .replace("(kv, x_ptr, N, C)", "(kv, x_ptr, M, C)")
            .replace("(kv, y_ptr, N, C)", "(kv, y_ptr, M, C)"))


#: the writer commits index 0 where N >= 1, the reader waits it where N - 1 >= 0: the same
#: condition of a signed N, not of a uint32 one (at 0, `N - 1 >= 0` is `cmpi uge`: true)
UNSIGNED_CONDITION = handed_to_both(
    "tl.full([], 0, tl.uint32)", "if N >= 1:\n" + indented(put("0"), 4),
    "if N - 1 >= 0:\n" + indented(get("0"), 4))
FILLS = {
    "uint32 fill, conditions": UNSIGNED_CONDITION,
    "uint32 fill, trip count": handed_to_both("tl.full([], 5, tl.uint32)"),
    "uint32 zeros, trip count": handed_to_both("tl.zeros([], tl.uint32)"),
    "uint32 fill by keyword": handed_to_both("tl.full([], 5, dtype=tl.uint32)"),
    "fp32 fill, trip count": handed_to_both("tl.full([], 5, tl.float32)"),
}


@pytest.mark.parametrize("name", sorted(FILLS))
def test_a_kernel_body_fill_of_another_type_is_no_protocol_param(tmp_path, capsys, name):
    err = check(tmp_path, capsys, FILLS[name], ("rejected", "[signature]", "is computed as a "
                                                "value of type"))
    assert "'M', which partition 'produce' receives as 'N'" in err, err


@pytest.mark.parametrize("fill", ["tl.full([], 5, tl.int8)", "tl.full([], 5, tl.int32)",
                                  "tl.zeros([], tl.int32)"])
def test_a_kernel_body_fill_promoted_to_int32_stays_verified(tmp_path, capsys, fill):
    # an int8 beside the int32 N is promoted to int32: the value the verifier reads
    check(tmp_path, capsys, handed_to_both(fill), "verified")


def test_triton_compares_the_uint32_fill_unsigned(tmp_path, monkeypatch):
    """The oracle: `M - 1 >= 0` of `M = tl.full([], 0, tl.uint32) + N` is `cmpi uge`."""
    source = ("import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
              "def k(x_ptr, N, C: tl.constexpr):\n"
              "    M = tl.full([], 0, tl.uint32) + N\n"
              "    if M - 1 >= 0:\n        tl.store(x_ptr, 1.0)\n")
    assert "arith.cmpi uge" in triton_ttir(tmp_path, monkeypatch, source, "fill")


def without_signature(text: str) -> str:
    return text.replace('"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"},', "")


def without_config(text: str) -> str:
    return text[:text.index("DEFAULT_CONFIG = ")]


@pytest.mark.parametrize("strip", [without_signature, without_config])
@pytest.mark.parametrize("name", ["uint32 fill, conditions", "fp32 fill, trip count"])
def test_a_fill_of_another_type_is_refused_without_a_signature(tmp_path, capsys, strip, name):
    check(tmp_path, capsys, strip(FILLS[name]), ("rejected", "[signature]",
                                                 "is computed as a value of type"))


def test_without_a_signature_a_kernel_body_load_is_still_read_as_an_i32(tmp_path, capsys):
    """A load through an untyped pointer is read as an i32 (the verdict's caveat), and an
    int8 fill beside N is promoted to the i32 the verifier reads."""
    loaded = handed_to_both("tl.load(x_ptr).to(tl.int32) * 0 + tl.load(x_ptr + 1)")
    check(tmp_path, capsys, without_config(loaded), "verified")
    check(tmp_path, capsys, without_config(handed_to_both("tl.full([], 5, tl.int8)")),
          "verified")
