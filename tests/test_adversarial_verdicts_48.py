"""A forty-eighth adversarial round (adversarial round 48): ``while`` counters loaded through a
pointer of no known element type, ``tl.where`` of params as derived values, and integer types,
helpers, early returns, aliases and branches around pipe events. Each case is a small kernel
written to a file and read by tle-dump's main(); where the case is about what Triton 3.6 does,
a plain ``@triton.jit`` kernel is compiled for sm_90a on the CPU and its TTIR read.

Bugs found, one line each (before the fixes that came with this file):

- a ``while`` loop whose counter is loaded through a pointer that no DEFAULT_CONFIG signature
  types was proved by the signed counter rule: ``k = tl.load(cnt_ptr); while k >= 0: k -= 1``
  (in a partition, in the kernel body, or loaded in the kernel body and handed to a partition),
  ``while 0 <= k``, ``k = tl.load(cnt_ptr) + 0``, ``while k >= N`` with ``N >= 0``: a launch
  whose ``cnt_ptr`` points to uint32 compares unsigned (``arith.cmpi uge``, always true at the
  bound 0) and never ends, and the kernel was "verified" (exit 0); FIXED: the value may be a
  uint32 as well as the int32 the verifier reads (frontend/load_signs.py), so a loop that ends
  only when compared signed is not proved (bounded, exit 3), the reason naming the pointer,
  the line and the unsigned reading (loop_ends.SignedOnly, cli/kernel_checks.py
  ``check_signed_loads``); counters that end under both readings stay proved. Followed
  through helpers, atomics, ``tl.where`` / ``tl.maximum`` and reductions (``tl.sum`` of uint32
  tiles is a uint32).
- a comparison of such a load deciding pipe events was read signed: ``n = tl.load(cnt_ptr)``
  handed to both partitions as the count, the reader waiting under ``if p - 1 >= -1`` in
  ``for p in range(n)`` (always true signed; Triton types ``p`` by its bounds, a uint32, and
  ``cmpi uge p - 1, 0xffffffff`` holds at p = 0 only, so the writer blocks at index 2: a
  deadlock), or a kernel-body ``B = n - 1 >= 0`` the Program reads; FIXED: such a comparison
  with a side the verifier reads as negative qualifies the verdict to signed element types
  (load_signs.unsigned_compare, protocol ``signed_conditions``); a bounded verdict is
  qualified too.
- a ``while`` counter the body also rebinds as a ``for`` loop's variable (``k -= 1`` beside
  ``for k in range(1)``) was proved to end: Triton yields ``ub.poison`` for it after that loop,
  so the condition tests an undefined value; FIXED: no counter (loop_ends.py, endless-loop).
- a run-time loop's variable bound before the loop and read after it (``j = 7; for j in
  range(3): ...; tl.store(y_ptr + j, ...)``, a loop bound or a ``while`` condition of it, or
  such a read after a loop or run-time ``if`` whose body rebinds it so) was verified with
  Python's value (the last iteration's): Triton leaves ``ub.poison`` there; FIXED: undefined
  after the loop (build.py, ``unknown-name``), as a name first bound in the loop was.

False rejection fixed: ``tl.where(N > 0, N, 0)`` (a ``tl.where`` choosing between the two sides
of its own comparison) is read as the ``tl.maximum`` it is (frontend/where_extrema.py): a loop
over it was ``non-affine-loop``, a kernel-body one an opaque param of every integer.

Checked and found right (not pinned): a helper redefined later in the file (the last definition
is the one called), a module constexpr rebound after the kernel, ``range(N, step=2)``, a
negative tensor step, ``return`` in a loop or a helper, tuple swaps of pipes, shadowing
``range``, a partition parameter with a default, ``not`` of an integer, a loop variable read
after its loop (first bound there), names bound in one branch or in a loop body, tuple and
conditional rebinding of a ``while`` counter.
"""

from __future__ import annotations

import pytest

from .adversarial_oracles import triton_ttir
from .adversarial_support import HEAD, dump, expect, indented

#: the ring of this round: a writer of N tiles and a reader that first runs PART, the kernel
#: body running BODY before the pipe and handing CARG to the reader as its C
RING = HEAD + '''@tle.jit
def k(x_ptr, y_ptr, cnt_ptr, N, C: tl.constexpr):
    tle.assume(N >= 0)
BODY    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N, C)),
                             (consume, (kv, y_ptr, cnt_ptr, N, CARG))], [4], [232])


def produce(kv, x_ptr, N, C: tl.constexpr):
    w = kv.writer()
    for p in range(N):
        s = w.acquire(p)
        tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + tl.arange(0, 64)))
        w.commit(p)


def consume(kv, y_ptr, cnt_ptr, N, C):
    r = kv.reader()
PART    for p in range(N):
        res = r.wait(p)
        tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))
        r.release(p)
'''


def ring(part: str = "", body: str = "", carg: str = "C", cnt: str = "") -> str:
    """:data:`RING` with the reader's ``part``, the kernel body's ``body`` and ``carg``; with
    ``cnt`` a DEFAULT_CONFIG signature typing cnt_ptr so (none otherwise)."""
    text = (RING.replace("PART", indented(part, 4)).replace("BODY", indented(body, 4))
            .replace("CARG", carg))
    if cnt:
        text += ('\nDEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", '
                 f'"cnt_ptr": "{cnt}", "N": "i32"}}, "constexprs": {{"C": 5}}}}\n')
    return text


def check(tmp_path, capsys, text: str, want) -> str:
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, want)
    return err


# ------------------------------------------- while counters loaded through an untyped pointer

DOWN_TO_ZERO = "k = tl.load(cnt_ptr)\nwhile k >= 0:\n    k -= 1\n"
#: a helper that loads the count, and one that counts a value down to -1
HELPERS = """

@triton.jit
def count(p):
    return tl.load(p)


@triton.jit
def spin(k):
    while k >= 0:
        k -= 1
"""
SIGNED_ONLY = {
    "partition load, k >= 0": ring(DOWN_TO_ZERO),
    "partition load, 0 <= k": ring("k = tl.load(cnt_ptr)\nwhile 0 <= k:\n    k = k - 1\n"),
    "partition load plus 0": ring("k = tl.load(cnt_ptr) + 0\nwhile k >= 0:\n    k -= 1\n"),
    "partition load, k >= N": ring("k = tl.load(cnt_ptr)\nwhile k >= N:\n    k -= 1\n"),
    "partition load through an offset": ring(
        "k = tl.load(cnt_ptr + 1)\nwhile k >= 0:\n    k -= 1\n"),
    "partition load under tl.maximum": ring(
        "k = tl.maximum(tl.load(cnt_ptr), 3)\nwhile k >= 0:\n    k -= 1\n"),
    "partition load through a helper": ring(
        "k = count(cnt_ptr)\nwhile k >= 0:\n    k -= 1\n") + HELPERS,
    "partition load spun by a helper": ring("spin(tl.load(cnt_ptr))\n") + HELPERS,
    "partition atomic": ring("k = tl.atomic_add(cnt_ptr, 0)\nwhile k >= 0:\n    k -= 1\n"),
    "partition sum of loads": ring(
        "k = tl.sum(tl.load(cnt_ptr + tl.arange(0, 4)))\nwhile k >= 0:\n    k -= 1\n"),
    "partition max of loads, as a method": ring(
        "k = tl.load(cnt_ptr + tl.arange(0, 4)).max()\nwhile k >= 0:\n    k -= 1\n"),
    "kernel-body load": ring(body=DOWN_TO_ZERO),
    "kernel-body load handed to a partition": ring(
        "k = C\nwhile k >= 0:\n    k -= 1\n", body="m = tl.load(cnt_ptr)\n", carg="m"),
}


@pytest.mark.parametrize("name", sorted(SIGNED_ONLY))
def test_a_while_counter_loaded_untyped_that_ends_only_signed_is_not_proved(tmp_path, capsys,
                                                                            name):
    err = check(tmp_path, capsys, SIGNED_ONLY[name], (
        "bounded", "cnt_ptr's element type is not known (no DEFAULT_CONFIG signature types it)",
        "ends if it is an int32", "through a *u32 cnt_ptr", "unsigned"))
    assert "line " in err.split("not proved for other values")[1], err
    # (round 50: the types it ends under, uint32 not among them; an 8- or 16-bit counter may
    # wrap too, and a float never ends)
    assert any(f"only for cnt_ptr in {types};" in err for types in (
        "signed integer element types", "signed integer element types of 32 or 64 bits",
        "element types other than uint32, uint64 or float")), err


def test_the_json_report_of_a_signed_only_loop_is_not_verified(tmp_path, capsys):
    import json

    from .adversarial_support import run_dump, write_kernel

    path = write_kernel(tmp_path, ring(DOWN_TO_ZERO))
    code, out, _ = run_dump(capsys, "--format", "json", str(path))
    (kernel,) = json.loads(out)["kernels"]
    assert code == 3 and kernel["verified"] is False and kernel["verdict"] == "bounded", kernel
    assert kernel["checked"] == {"cnt_ptr": "signed integer element types"}, kernel


#: loops that end under either sign, but whose counter or bound may be a float (round 50: a
#: float counter's `k -= 1` stops changing it at 2^24, an integer one never reaches inf): proved
#: for integer element types only
ENDS_FOR_INTEGERS = {
    # a step of 1 against `<` (-1 against `>`) meets the bound before it wraps, either sign
    "up to a loaded bound": ring("n = tl.load(cnt_ptr)\nk = 0\nwhile k < n:\n    k += 1\n"),
    "loaded counter down to > 0": ring("k = tl.load(cnt_ptr)\nwhile k > 0:\n    k -= 1\n"),
    # `k >= 1` stops at 0 whether k is compared signed or unsigned
    "loaded counter down to >= 1": ring("k = tl.load(cnt_ptr)\nwhile k >= 1:\n    k -= 1\n"),
}


@pytest.mark.parametrize("name", sorted(ENDS_FOR_INTEGERS))
def test_a_while_counter_that_ends_under_either_sign_is_proved_for_integers(tmp_path, capsys,
                                                                            name):
    check(tmp_path, capsys, ENDS_FOR_INTEGERS[name], (
        "bounded", "only for cnt_ptr in integer element types;", "through a float cnt_ptr"))


ENDS_EITHER_WAY = {
    # a cast fixes the type: compared signed
    "loaded counter cast to int32": ring(
        "k = tl.load(cnt_ptr).to(tl.int32)\nwhile k >= 0:\n    k -= 1\n"),
    # the signature types the pointer signed: Triton compares signed
    "pointer typed *i32": ring(DOWN_TO_ZERO, cnt="*i32"),
    # cast to an int64: compared signed, in 64 bits
    "loaded counter cast to int64": ring(
        "k = tl.load(cnt_ptr).to(tl.int64)\nwhile k >= 0:\n    k -= 1\n"),
}


@pytest.mark.parametrize("name", sorted(ENDS_EITHER_WAY))
def test_a_while_counter_that_ends_under_either_sign_stays_verified(tmp_path, capsys, name):
    check(tmp_path, capsys, ENDS_EITHER_WAY[name], "verified")


def test_a_loaded_counter_typed_u32_is_still_refused(tmp_path, capsys):
    # the type known: compared unsigned, endless (round 47's rule)
    check(tmp_path, capsys, ring(DOWN_TO_ZERO, cnt="*u32"),
          ("rejected", "[endless-loop]", "unsigned"))


def test_a_loaded_counter_that_wraps_signed_too_is_still_refused(tmp_path, capsys):
    # `k <= n; k += 1` of a loaded n wraps in i32 at n = 2^31 - 1 already: rejected as before
    check(tmp_path, capsys, ring("n = tl.load(cnt_ptr)\nk = 0\nwhile k <= n:\n    k += 1\n"),
          ("rejected", "[endless-loop]", "read from memory"))


def test_triton_compares_a_u32_load_with_zero_unsigned(tmp_path, monkeypatch):
    """The oracle: through a ``*u32`` pointer, ``k >= 0`` of the loaded ``k`` is ``cmpi uge``
    (always true); through ``*i32`` it is ``cmpi sge``."""
    source = ("import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
              "def k(x_ptr, N, C: tl.constexpr):\n"
              "    k = tl.load(x_ptr)\n    while k >= 0:\n        k -= 1\n"
              "    tl.store(x_ptr, k)\n")
    typed = {t: triton_ttir(tmp_path, monkeypatch, source, f"{t}load",
                            {"x_ptr": f"*{t}", "N": "i32", "C": "constexpr"})
             for t in ("u32", "i32")}
    assert "arith.cmpi uge" in typed["u32"] and "arith.cmpi sge" in typed["i32"], typed


# ------------------------------------------------ tl.where of a comparison of its two values

#: the ring whose writer loops over WBOUND and reader over RBOUND, the kernel body running
#: BODY and handing WARG / RARG to the partitions as their N
WHERE_RING = HEAD + '''@tle.jit
def k(x_ptr, y_ptr, N, C: tl.constexpr):
BODY    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, WARG, C)), (consume, (kv, y_ptr, RARG, C))],
                            [4], [232])


def produce(kv, x_ptr, N, C: tl.constexpr):
    w = kv.writer()
WPRE    for p in range(WBOUND):
        s = w.acquire(p)
        tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + tl.arange(0, 64)))
        w.commit(p)


def consume(kv, y_ptr, N, C: tl.constexpr):
    r = kv.reader()
    for p in range(RBOUND):
        res = r.wait(p)
        tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))
        r.release(p)
'''


def where_ring(body: str = "", wpre: str = "", wbound: str = "N", rbound: str = "N",
               warg: str = "N", rarg: str = "N") -> str:
    return (WHERE_RING.replace("BODY", indented(body, 4)).replace("WPRE", indented(wpre, 4))
            .replace("WBOUND", wbound).replace("RBOUND", rbound).replace("WARG", warg)
            .replace("RARG", rarg))


WHERE_MAX = {
    # a clamp of the trip count in a partition: a loop over it was `non-affine-loop`
    "N > 0 in a partition": where_ring(wpre="M = tl.where(N > 0, N, 0)\n", wbound="M",
                                       rbound="tl.maximum(N, 0)"),
    "N < 0 in a partition, values swapped": where_ring(
        wpre="M = tl.where(N < 0, 0, N)\n", wbound="M", rbound="tl.maximum(N, 0)"),
    "0 < N in a partition": where_ring(wpre="M = tl.where(0 < N, N, 0)\n", wbound="M",
                                       rbound="tl.maximum(0, N)"),
    "N <= 8 in a partition (a minimum)": where_ring(
        wpre="M = tl.where(N <= 8, N, 8)\n", wbound="M", rbound="tl.minimum(N, 8)"),
    # a kernel-body value handed to both partitions: a derived param M >= 0
    "kernel body, both partitions": where_ring(body="M = tl.where(N > 0, N, 0)\n", warg="M",
                                               rarg="M"),
}


@pytest.mark.parametrize("name", sorted(WHERE_MAX))
def test_a_where_of_its_own_comparison_reads_as_a_maximum(tmp_path, capsys, name):
    code, err = dump(tmp_path, capsys, WHERE_MAX[name])
    assert code in (0, 3) and "error" not in err, err  # no fault; proved or bounded


def test_a_where_clamp_in_the_kernel_body_is_a_param_of_no_negative_value(tmp_path, capsys):
    # M = max(N, 0): its domain is M >= 0, which the verdict names (an opaque param of every
    # integer before)
    err = check(tmp_path, capsys, WHERE_MAX["kernel body, both partitions"], "verified")
    assert "(M >= 0)" in err, err


def test_a_where_read_as_a_minimum_still_finds_the_mismatch(tmp_path, capsys):
    # the writer commits min(N, 3) tiles, the reader waits N: a fault at N = 4
    check(tmp_path, capsys, where_ring(wpre="M = tl.where(N > 3, 3, N)\n", wbound="M"),
          ("rejected", "[wait-never-committed]", "N=4"))


@pytest.mark.parametrize("where", ["tl.where(N > 0, N, 1)", "tl.where(N > 0, N + 0 * C, 0)"])
def test_a_where_that_is_no_extremum_of_its_comparison_is_not_read_as_one(tmp_path, capsys,
                                                                          where):
    # `tl.where(N > 0, N, 1)` is not max(N, 1) at N = 0; a value of other text is no side of
    # the comparison: the loop over it stays refused, as a bound not affine in params
    check(tmp_path, capsys, where_ring(wpre=f"M = {where}\n", wbound="M"),
          ("rejected", "[non-affine-loop]"))


# -------------------------------- conditions on a count loaded through an untyped pointer

#: the kernel body loads the count and hands it to both partitions; the reader runs its
#: windows under COND (of its loop variable p over the count, or of the count N)
COUNTED = HEAD + '''@tle.jit
def k(x_ptr, y_ptr, cnt_ptr, C: tl.constexpr):
    n = tl.load(cnt_ptr)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, n, C)), (consume, (kv, y_ptr, n, C))],
                            [4], [232])


def produce(kv, x_ptr, N, C: tl.constexpr):
    w = kv.writer()
    for p in range(N):
        s = w.acquire(p)
        tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + tl.arange(0, 64)))
        w.commit(p)


def consume(kv, y_ptr, N, C: tl.constexpr):
    r = kv.reader()
    for p in range(N):
        if COND:
            res = r.wait(p)
            tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))
            r.release(p)
'''


def test_a_condition_that_holds_only_signed_on_an_untyped_count_is_not_proved(tmp_path,
                                                                             capsys):
    # `p - 1 >= -1` always holds signed; through a *u32 cnt_ptr p is a uint32 (Triton types
    # the loop variable by its bounds) and the compare is `uge p - 1, 0xffffffff`: true at p = 0
    # only, so the reader waits index 0 alone and the writer blocks at index 2 (a deadlock)
    err = check(tmp_path, capsys, COUNTED.replace("COND", "p - 1 >= -1"), (
        "bounded", "only for cnt_ptr in element types other than uint32 or uint64",
        "`p - 1 >= -1` decides which pipe events run", "compares it unsigned"))
    assert "line 25" in err, err


def test_a_condition_of_nonnegative_sides_on_an_untyped_count_stays_verified(tmp_path,
                                                                            capsys):
    # p >= 0 and 0 <= p + 1: both sides never negative, the same compare either way
    check(tmp_path, capsys, COUNTED.replace("COND", "p + 1 >= 0"), "verified")


def test_triton_types_a_loop_variable_over_a_u32_count_unsigned(tmp_path, monkeypatch):
    """The oracle: over `range(n)` of a *u32 load, `p - 1 >= -1` is `cmpi uge`."""
    source = ("import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
              "def k(x_ptr, N, C: tl.constexpr):\n"
              "    n = tl.load(x_ptr)\n    for p in range(n):\n        if p - 1 >= -1:\n"
              "            tl.store(x_ptr + 1, p)\n")
    ttir = triton_ttir(tmp_path, monkeypatch, source, "u32range",
                       {"x_ptr": "*u32", "N": "i32", "C": "constexpr"})
    assert "arith.cmpi uge" in ttir, ttir


def test_a_kernel_body_comparison_of_an_untyped_load_is_qualified(tmp_path, capsys):
    # `B = n - 1 >= 0` is false at n = 0 signed, true unsigned: the reader then waits index 0
    # that the writer (min(n, 1) windows) never commits; the verdict, bounded for its own
    # reason, is qualified to signed element types too
    text = (COUNTED.replace("    n = tl.load(cnt_ptr)\n",
                            "    n = tl.load(cnt_ptr)\n    B = n - 1 >= 0\n")
            .replace("(consume, (kv, y_ptr, n, C))", "(consume, (kv, y_ptr, n, B))")
            .replace("def consume(kv, y_ptr, N, C: tl.constexpr):",
                     "def consume(kv, y_ptr, N, B):")
            .replace("    for p in range(N):\n        s = w",
                     "    for p in range(tl.minimum(N, 1)):\n        s = w")
            .replace("    for p in range(N):\n        if COND:\n", "    for p in range(1):\n"
                     "        if B:\n"))
    check(tmp_path, capsys, text, ("bounded", "cnt_ptr in signed integer element types of 32 or 64",
                                   "`n - 1 >= 0`, which pipe events depend on"))


# ------------------------------------ a while counter rebound as a for loop's variable

@pytest.mark.parametrize("where", ["partition", "kernel body"])
def test_a_while_counter_rebound_by_a_for_loop_is_no_counter(tmp_path, capsys, where):
    # `for k in range(1)` in the body: Triton yields `ub.poison` for k after that loop (the
    # condition tests an undefined value; Python's k would be 0, ending the loop at once), and
    # the counter rule, which counted the one `k -= 1`, proved the loop ended
    stmts = ("k = 5\nwhile k > 2:\n    k -= 1\n    for k in range(1):\n"
             "        tl.store(y_ptr, 1.0)\n")
    text = ring(stmts) if where == "partition" else ring(body=stmts)
    check(tmp_path, capsys, text, ("rejected", "[endless-loop]", "as the variable of the `for` "
                                   "loop", "poison"))


def test_triton_leaves_a_for_variable_poison_in_a_while_body(tmp_path, monkeypatch):
    """The oracle: the while loop yields `ub.poison` for a name its body rebinds by a `for`."""
    source = ("import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
              "def k(x_ptr, N, C: tl.constexpr):\n"
              "    k = 5\n    while k > 2:\n        k -= 1\n        for k in range(1):\n"
              "            tl.store(x_ptr + k, 1.0)\n    tl.store(x_ptr, k.to(tl.float32))\n")
    ttir = triton_ttir(tmp_path, monkeypatch, source, "forpoison")
    assert "ub.poison" in ttir and "scf.yield %0" in ttir, ttir


# --------------------------------------------- a for loop's variable read after the loop

#: a name bound before a run-time loop that rebinds it as its variable, read after the loop
POISON_READS = {
    "store address": ("j = 7\nfor j in range(3):\n    tl.store(y_ptr, 1.0)\n"
                      "tl.store(y_ptr + j, 1.0)\n"),
    "loop bound": ("j = 7\nfor j in range(3):\n    tl.store(y_ptr, 1.0)\nfor q in range(j):\n"
                   "    tl.store(y_ptr, 1.0)\n"),
    "while condition": ("j = 7\nfor j in range(3):\n    tl.store(y_ptr, 1.0)\nwhile j > 0:\n"
                        "    j -= 1\n"),
    "after a while whose body rebinds it": (
        "j = 0\nk = 5\nwhile k > 0:\n    k -= 1\n    for j in range(3):\n"
        "        tl.store(y_ptr, 1.0)\ntl.store(y_ptr + j, 1.0)\n"),
    "after an if one branch of which rebinds it": (
        "j = 0\nif N > 3:\n    for j in range(3):\n        tl.store(y_ptr, 1.0)\n"
        "tl.store(y_ptr + j, 1.0)\n"),
    "tl.range": ("j = 7\nfor j in tl.range(0, 3):\n    tl.store(y_ptr, 1.0)\n"
                 "tl.store(y_ptr + j, 1.0)\n"),
}


@pytest.mark.parametrize("name", sorted(POISON_READS))
def test_a_loop_variable_read_after_its_loop_is_undefined(tmp_path, capsys, name):
    # Triton binds the variable to `ub.poison` and leaves it so after the loop, whether or not
    # the name was bound before: the store (or loop, or test) reads an undefined value; it was
    # verified with Python's value (the loop's last)
    check(tmp_path, capsys, ring(POISON_READS[name]), (
        "rejected", "[unknown-name]", "is the variable of the loop at line"))


def test_a_static_loop_variable_read_after_the_loop_stays_verified(tmp_path, capsys):
    # tl.static_range unrolls: the name keeps its last value, as in Python
    check(tmp_path, capsys, ring("j = 7\nfor j in tl.static_range(3):\n    tl.store(y_ptr, 1.0)\n"
                                 "tl.store(y_ptr + j, 1.0)\n"), "verified")


def test_triton_leaves_a_loop_variable_bound_before_poison_after_the_loop(tmp_path, monkeypatch):
    """The oracle: `j = 7; for j in range(3): ...; tl.store(x_ptr + j, ...)` stores at
    `ub.poison`."""
    source = ("import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
              "def k(x_ptr, N, C: tl.constexpr):\n    j = 7\n    for j in range(3):\n"
              "        tl.store(x_ptr, 1.0)\n    tl.store(x_ptr + j, 2.0)\n")
    ttir = triton_ttir(tmp_path, monkeypatch, source, "poisonafter")
    poison = next(line.split("=")[0].strip() for line in ttir.splitlines()
                  if "ub.poison" in line)
    assert f"tt.addptr %x_ptr, {poison}" in ttir, ttir


def test_a_kir_file_of_a_signed_only_loop_is_not_proved_either(tmp_path, capsys):
    # the kernel IR text form of the ring (as --print-ir prints it) carries no signature: its
    # protocol view keeps the loop's qualification too (Program.signed_only)
    from .adversarial_support import run_dump, write_kernel

    path = write_kernel(tmp_path, ring(DOWN_TO_ZERO))
    _, kir, _ = run_dump(capsys, "--print-ir", "-p", "verify-protocol", str(path))
    code, err = dump(tmp_path, capsys, kir, name="kernel.kir")
    expect(code, err, ("bounded", "only for cnt_ptr in signed integer element types",
                       "ends if it is an int32"))
