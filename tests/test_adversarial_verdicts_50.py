"""A fiftieth adversarial round (adversarial round 50): values loaded through a pointer that no
DEFAULT_CONFIG signature types, read by the verifier as int32 while a launch may pass an 8- or
16-bit integer or a float. Each case is a small kernel written to a file and read by tle-dump's
main(); where the case is about what Triton 3.6 does, a plain ``@triton.jit`` kernel is compiled
for sm_90a on the CPU and its TTIR read.

Bugs found, one line each (before the fixes that came with this file):

- a ``while`` counter loaded through an untyped pointer was proved to end by the int32 reading:
  ``k = tl.load(cnt_ptr); while k < 200: k += 1`` (through ``*i8`` Triton adds in i8 and
  compares the sign-extended value with 200: always true, endless), ``k > 0; k -= 1`` (through
  ``*fp32`` a counter of 1e10 never changes), ``k = 0; while k < n: k += 1`` of a loaded ``n``
  (an infinite float bound): "verified" (exit 0); FIXED: the element types under which the loop
  ends are worked out (frontend/loop_ends.py ``_untyped_types``, frontend/load_types.py), and
  the verdict is qualified to them ("only for cnt_ptr in integer element types", exit 3;
  cli/kernel_checks.py ``check_signed_loads``), round 48's uint32 reading one of them; a counter
  handed over from the kernel body's ``m = n + 1`` of such a load is of its type too.
- a comparison deciding pipe events of a value so loaded, all of whose sides are never negative,
  was verified: writer ``if p + 1 <= n``, reader ``if p < n`` of a kernel-body ``n =
  tl.maximum(tl.load(cnt_ptr), 0)`` differ at p = 2 of a float n = 2.5 (the reader waits for a
  commit never made); FIXED: a comparison of the loaded value itself (not only of a loop
  variable over it, whose float bound Triton refuses) qualifies the verdict to integer element
  types (protocol ``signed_conditions``, load_types.first_float_read).
- arithmetic of such a value with Python numbers, which Triton computes in the load's own type,
  deciding pipe events was verified: a kernel-body ``n = tl.load(cnt_ptr) & 127`` with the
  writer over ``range(n + 1)`` and the reader over ``range(n)`` and one more window (``n + 1``
  of an int8 127 is -128: the writer commits nothing, the reader waits), or an index ``p + n *
  4`` against ``p + n * 2 + n * 2`` (``n * 4`` wraps in i8); FIXED: such arithmetic in a loop
  bound, an ``if`` condition, an event index, a partition's argument or a kernel-body value the
  Program reads qualifies the verdict to element types of 32 bits or more
  (load_types.narrow_arithmetic; protocol ``_s_For``, ``_e_Event``, ``signed_conditions``,
  ``analyse``'s bindings). ``tl.maximum(tl.load(p), 0)`` is computed in
  int32 (a function makes the number a tensor first) and keeps its proof; ``tl.where(n > 0, n,
  0)`` keeps the load's type (an int8 select), and ``+ 1`` of it wraps.
- such a value read both as a loop bound of pipe events and otherwise was verified: the writer
  over ``range(n)``, the reader's first window under ``n > 0`` and the others over ``range(1,
  n)`` of a kernel-body ``n = tl.load(cnt_ptr)``; through ``*i1`` Triton sign-extends the bound
  (True is -1: no window) and zero-extends the comparison (the reader waits index 0); FIXED:
  such a pair of reads excludes int1 (protocol ``_s_For``, ``analyse``; KernelCtx.bool_bounds
  and bool_others); a value read as loop bounds only keeps its proof.
- a constexpr DEFAULT_CONFIG gives as a float no integer equals (``"C": 1.25``) was verified
  "for every value of C (every integer C)" (exit 0) although --gluon compiles the kernel with
  C = 1.25: writer ``if p <= C * 2 - 1``, reader ``if p < C * 2`` agree for integers and the
  reader waits index 2, never committed, at 1.25; FIXED: such a constexpr the protocol reads
  qualifies the verdict to the integers (bounded, exit 3, "C = 1.25: DEFAULT_CONFIG gives a
  float"; cli/kernel_checks.py ``check_float_constexprs``), as one of no value did; a bounded claim
  too (its box of C values named no type).
- the same int1 kernel with DEFAULT_CONFIG typing ``cnt_ptr`` ``*i1`` was verified: the
  signature check took a loaded i1 for a comparison's truth; FIXED: a value loaded as an i1
  that pipe events depend on is refused at its compile and by tle-dump (check ``signature``,
  lowering/loaded_params.py ``_refused``), a comparison's truth of a load still accepted.

- a comparison of such a value computed in warp_specialize's argument list (``n >= 2`` to the
  writer, ``n > 1`` to the reader) was bounded "only for n in [-16, 16]" with no element type
  named, while an assigned one was qualified; FIXED: noted on the param a partition makes of
  it (KernelCtx.key_notes, reserve_pure; protocol ``analyse``'s bindings).

False rejection fixed: ``tl.maximum(tl.load(cnt_ptr), 0)`` through a ``*i8`` pointer (or
``tl.minimum`` through ``*u8``) deciding events was refused at the signature check as an int8;
Triton makes the number an int32 tensor first and the value is an int32 (loaded_params ``op``).
"""

from __future__ import annotations

import pytest

from .adversarial_oracles import triton_ttir
from .adversarial_support import HEAD, dump, expect, indented

#: a ring whose reader first runs PART; the kernel body runs BODY before the pipe
RING = HEAD + '''@tle.jit
def k(x_ptr, y_ptr, cnt_ptr, N, C: tl.constexpr):
    tle.assume(N >= 0)
BODY    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N, C)),
                             (consume, (kv, y_ptr, cnt_ptr, N, C))], [4], [232])


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

#: DEFAULT_CONFIG typing cnt_ptr as CNT
CONFIG = ('\nDEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", '
          '"cnt_ptr": "CNT", "N": "i32"}, "constexprs": {"C": 5}}\n')


def ring(part: str = "", body: str = "", cnt: str = "") -> str:
    text = RING.replace("PART", indented(part, 4)).replace("BODY", indented(body, 4))
    return text + CONFIG.replace("CNT", cnt) if cnt else text


def check(tmp_path, capsys, text: str, want) -> str:
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, want)
    return err


# --------------------------------------------- while counters of 8-bit, 16-bit or float loads

WHILE_LOOPS = {
    # an int8 counter wraps at 127 and never reaches 200 (Triton compares it sign-extended);
    # an int16 or a uint8 one reaches it
    "int8 counter up to 200": (
        "k = tl.load(cnt_ptr)\nwhile k < 200:\n    k += 1\n",
        "element types other than int1, int8 or float", "through a *i1 or *i8 cnt_ptr"),
    # ends in every integer type wide enough for the bound (its last value too); a float
    # counter of 1e10 never changes
    "counter up to 100": (
        "k = tl.load(cnt_ptr)\nwhile k < 100:\n    k += 1\n",
        "element types other than int1 or float", "through a float cnt_ptr"),
    # an int32 counter up to a loaded bound: an infinite float bound is never reached
    "up to a loaded bound": (
        "n = tl.load(cnt_ptr)\nk = 0\nwhile k < n:\n    k += 1\n",
        "integer element types", "an integer counter never reaches an infinite bound"),
    # against a bound that is an int32 argument, an 8- or 16-bit counter may wrap first
    "counter up to an argument": (
        "k = tl.load(cnt_ptr)\nwhile k < N:\n    k += 1\n",
        "integer element types of 32 or 64 bits", "*i8 or *i16 or *u8 or *u16 cnt_ptr"),
    # the kernel body's own load, a counter there
    "kernel-body counter up to 200": (
        "", "element types other than int1, int8 or float", "through a *i1 or *i8 cnt_ptr"),
}


@pytest.mark.parametrize("name", sorted(WHILE_LOOPS))
def test_a_while_counter_of_a_narrow_or_float_load_is_not_proved(tmp_path, capsys, name):
    part, types, why = WHILE_LOOPS[name]
    text = ring(part) if part else ring(
        body="k = tl.load(cnt_ptr)\nwhile k < 200:\n    k += 1\n")
    err = check(tmp_path, capsys, text, (
        "bounded", f"only for cnt_ptr in {types};", why,
        "cnt_ptr's element type is not known (no DEFAULT_CONFIG signature types it)"))
    assert "line " in err.split("not proved for other values")[1], err


@pytest.mark.parametrize("part,cnt", [
    # a cast fixes the type: the counter is an int32 whatever was loaded
    ("k = tl.load(cnt_ptr).to(tl.int32)\nwhile k < 200:\n    k += 1\n", ""),
    # the signature types the pointer
    ("k = tl.load(cnt_ptr)\nwhile k < 200:\n    k += 1\n", "*i32"),
    # a bound that reads the load through a loop variable only: no float (Triton refuses a
    # float loop bound), and the variable an int32 or a uint32 (met by a step of 1)
    ("n = tl.load(cnt_ptr)\nfor j in range(n):\n    k = 0\n    while k < j:\n        k += 1\n",
     ""),
])
def test_a_while_counter_of_a_known_type_keeps_its_verdict(tmp_path, capsys, part, cnt):
    check(tmp_path, capsys, ring(part, cnt=cnt), "verified")


def test_a_typed_int8_counter_is_still_refused(tmp_path, capsys):
    check(tmp_path, capsys, ring("k = tl.load(cnt_ptr)\nwhile k < 200:\n    k += 1\n",
                                 cnt="*i8"), ("rejected", "[endless-loop]", "int8"))


def test_triton_steps_an_int8_counter_in_i8_and_compares_it_widened(tmp_path, monkeypatch):
    """The oracle: `k += 1` of an int8 load is an i8 sum (it wraps at 127), and `k < 200` the
    sign-extended value against an i32 200: always true. Through *fp32 `k -= 1` is a float
    subtraction."""
    source = ("import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
              "def k(x_ptr, N, C: tl.constexpr):\n"
              "    k = tl.load(x_ptr)\n    while k < 200:\n        k += 1\n"
              "    tl.store(x_ptr, k)\n")
    ttir = triton_ttir(tmp_path, monkeypatch, source, "i8count",
                       {"x_ptr": "*i8", "N": "i32", "C": "constexpr"})
    assert "arith.addi %k_1, %c1_i8 : i8" in ttir and "arith.extsi" in ttir, ttir
    assert "arith.cmpi slt" in ttir and "%c200_i32" in ttir, ttir
    ttir = triton_ttir(tmp_path, monkeypatch, source.replace("< 200", "> 0").replace(
        "+= 1", "-= 1"), "f32count", {"x_ptr": "*fp32", "N": "i32", "C": "constexpr"})
    assert "arith.subf" in ttir, ttir


# ---------------------------------------- comparisons of a loaded value that may be a float

#: the kernel body loads the count N; the writer runs its windows under WCOND, the reader
#: under RCOND
COUNTED = HEAD + '''@tle.jit
def k(x_ptr, y_ptr, cnt_ptr, C: tl.constexpr):
BODY    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, n, C)), (consume, (kv, y_ptr, n, C))],
                            [4], [232])


def produce(kv, x_ptr, n, C: tl.constexpr):
    w = kv.writer()
    for p in range(WBOUND):
        if WCOND:
            s = w.acquire(WINDEX)
            tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + tl.arange(0, 64)))
            w.commit(WINDEX)


def consume(kv, y_ptr, n, C: tl.constexpr):
    r = kv.reader()
    for p in range(RBOUND):
        if RCOND:
            res = r.wait(RINDEX)
            tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))
            r.release(RINDEX)
RMORE'''


def counted(body: str, wcond: str = "True", rcond: str = "True", wbound: str = "4",
            rbound: str = "4", windex: str = "p", rindex: str = "p", rmore: str = "",
            cnt: str = "") -> str:
    text = (COUNTED.replace("BODY", indented(body, 4)).replace("WCOND", wcond)
            .replace("RCOND", rcond).replace("WBOUND", wbound).replace("RBOUND", rbound)
            .replace("WINDEX", windex).replace("RINDEX", rindex)
            .replace("RMORE", indented(rmore, 4)))
    if cnt:
        text += ('\nDEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", '
                 f'"cnt_ptr": "{cnt}"}}, "constexprs": {{"C": 5}}}}\n')
    return text


CLAMPED = "n = tl.maximum(tl.load(cnt_ptr), 0)\n"


def test_comparisons_of_a_loaded_value_that_differ_for_a_float_are_not_proved(tmp_path,
                                                                              capsys):
    # `p + 1 <= n` and `p < n` agree for every integer n (sides never negative, so the uint32
    # reading agrees too), not at n = 2.5: the reader waits index 2, never committed
    err = check(tmp_path, capsys, counted(CLAMPED, wcond="p + 1 <= n", rcond="p < n"), (
        "bounded", "only for cnt_ptr in integer element types;",
        "`p + 1 <= n` decides which pipe events run", "through a float cnt_ptr",
        "lie between two integers"))
    assert "line 17" in err and "line 26" in err, err


def test_the_same_comparisons_of_an_i32_load_are_verified(tmp_path, capsys):
    check(tmp_path, capsys, counted(CLAMPED, wcond="p + 1 <= n", rcond="p < n", cnt="*i32"),
          "verified")


def test_a_loop_over_a_loaded_count_compared_in_its_body_stays_verified(tmp_path, capsys):
    # a comparison of the loop variable alone: a float count is refused by Triton as a bound
    check(tmp_path, capsys, counted(CLAMPED, wbound="n", rbound="n", wcond="p + 1 >= 1",
                                    rcond="p >= 0"), "verified")


# ------------------------------------ arithmetic in the type of an 8- or 16-bit load

MASKED = "n = tl.load(cnt_ptr) & 127\n"
LAST = "res = r.wait(n)\ntl.store(y_ptr, 1.0)\nr.release(n)\n"
NARROW = {
    # `n + 1` of an int8 127 is -128: the writer runs no window, the reader waits index 0
    "loop bound": (counted(MASKED, wbound="n + 1", rbound="n", rmore=LAST),
                   "integer element types of 32 or 64 bits, or float", "line 16",
                   "`n + 1` in a bound of a loop of pipe events"),
    # `n * 4` wraps in i8 where `n * 2` does not: the indices differ
    "event index": (counted("n = tl.load(cnt_ptr) & 63\n", windex="p + n * 4",
                            rindex="p + n * 2 + n * 2"),
                    "integer element types of 32 or 64 bits, or float", "line 18",
                    "`n * 4` in the index of w.acquire"),
    # a condition: `n + 100 > p` is false at an int8 n = 100 (-56), the cast's true
    "condition": (counted(MASKED, wcond="n + 100 > p", rcond="n.to(tl.int32) + 100 > p"),
                  "integer element types of 32 or 64 bits", "line 17",
                  "`n + 100` in a condition around pipe events"),
    # a kernel-body value the Program reads: the writer loops over m = n + 1 (its n)
    "kernel-body value": (
        counted(MASKED + "m = n + 1\n", rbound="n", wbound="n", rmore=LAST).replace(
            "(produce, (kv, x_ptr, n, C))", "(produce, (kv, x_ptr, m, C))"),
        "integer element types of 32 or 64 bits, or float", "line 17",
        "`n + 1` in a bound of a loop of pipe events"),
    # the sum computed in warp_specialize's argument list
    "partition argument": (
        counted(MASKED, wbound="n", rbound="n", rmore=LAST).replace(
            "(produce, (kv, x_ptr, n, C))", "(produce, (kv, x_ptr, n + 1, C))"),
        "integer element types of 32 or 64 bits, or float", "line 16",
        "`n + 1` in a bound of a loop of pipe events"),
    # tl.where gives its number the loaded value's type (an int8 select), unlike tl.maximum
    "after a where clamp": (
        counted("n = tl.load(cnt_ptr)\nm = tl.where(n > 0, n, 0)\n", wbound="n + 1",
                rbound="n", rmore=LAST).replace(
            "(kv, x_ptr, n, C)), (consume, (kv, y_ptr, n, C))",
            "(kv, x_ptr, m, C)), (consume, (kv, y_ptr, m, C))"),
        "signed integer element types of 32 or 64 bits", "line 17",
        "`n + 1` in a bound of a loop of pipe events"),
}


@pytest.mark.parametrize("name", sorted(NARROW))
def test_arithmetic_in_a_narrow_loads_type_deciding_events_is_not_proved(tmp_path, capsys,
                                                                         name):
    text, types, line, what = NARROW[name]
    err = check(tmp_path, capsys, text, (
        "bounded", f"only for cnt_ptr in {types};", what, "wraps at the ends of 1, 8 or 16 bits"))
    assert line in err, err


def test_the_same_arithmetic_through_an_i32_pointer_is_verified(tmp_path, capsys):
    check(tmp_path, capsys, counted(MASKED, wbound="n + 1", rbound="n", rmore=LAST,
                                    cnt="*i32"), "verified")


def test_arithmetic_after_a_widening_function_stays_verified(tmp_path, capsys):
    # tl.maximum makes the 0 an int32 tensor first: `n + 1` is an int32 sum
    check(tmp_path, capsys, counted(CLAMPED, wbound="n + 1", rbound="n", rmore=LAST),
          "verified")


def test_triton_computes_a_masked_int8_load_plus_one_in_i8(tmp_path, monkeypatch):
    """The oracle: `(tl.load(p) & 127) + 1` of a *i8 load is an i8 sum (the loop bound wraps to
    -128), while `tl.maximum(tl.load(p), 0)` widens to i32 first."""
    source = ("import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
              "def k(x_ptr, N, C: tl.constexpr):\n"
              "    n = tl.load(x_ptr) & 127\n    for p in range(n + 1):\n"
              "        tl.store(x_ptr + p, 1)\n"
              "    m = tl.maximum(tl.load(x_ptr), 0)\n    for q in range(m + 1):\n"
              "        tl.store(x_ptr + q, 2)\n")
    ttir = triton_ttir(tmp_path, monkeypatch, source, "i8bound",
                       {"x_ptr": "*i8", "N": "i32", "C": "constexpr"})
    assert "arith.addi %n_1, %c1_i8 : i8" in ttir, ttir
    assert "arith.maxsi" in ttir and ": i32" in ttir.split("arith.maxsi")[1].splitlines()[0], \
        ttir
    ttir = triton_ttir(tmp_path, monkeypatch, source.replace(
        "tl.maximum(tl.load(x_ptr), 0)", "tl.where(tl.load(x_ptr) > 0, tl.load(x_ptr), 0)"),
        "i8where", {"x_ptr": "*i8", "N": "i32", "C": "constexpr"})
    assert "arith.select" in ttir and ": i8" in ttir.split("arith.select")[1].splitlines()[0], \
        ttir


# ------------------------------------- an int1 load read as a loop bound and otherwise

#: the reader's windows after its first: over range(1, n)
AFTER_FIRST = ("for q in range(1, n):\n    res = r.wait(q)\n    tl.store(y_ptr, 1.0)\n"
               "    r.release(q)\n")


def test_a_loaded_value_read_as_a_loop_bound_and_compared_is_not_proved(tmp_path, capsys):
    # the writer runs range(n), the reader its first window under `n > 0` and the others over
    # range(1, n): the same windows for every integer n; through *i1 Triton sign-extends the
    # bound (True is -1: no window) and zero-extends the comparison (1 > 0: the reader waits
    # index 0, never committed)
    err = check(tmp_path, capsys, counted("n = tl.load(cnt_ptr)\n", wbound="n", rbound="1",
                                          rcond="n > 0", rmore=AFTER_FIRST), (
        "bounded", "only for cnt_ptr in int8, int16, int32, int64, uint8 or uint16 element "
        "types;", "through a *i1 cnt_ptr Triton widens by sign extension",
        "line 26 reads it zero-extended"))
    assert "line 16: " in err, err


def test_the_same_kernel_through_an_i32_pointer_is_verified(tmp_path, capsys):
    check(tmp_path, capsys, counted("n = tl.load(cnt_ptr)\n", wbound="n", rbound="1",
                                    rcond="n > 0", rmore=AFTER_FIRST, cnt="*i32"), "verified")


def test_a_loaded_value_read_only_as_loop_bounds_stays_verified(tmp_path, capsys):
    # both partitions over range(n): an int1 is -1 in both, a value the verifier checks
    check(tmp_path, capsys, counted("n = tl.load(cnt_ptr)\n", wbound="n", rbound="n"),
          "verified")


def test_triton_sign_extends_an_int1_loop_bound_and_zero_extends_a_compare(tmp_path,
                                                                          monkeypatch):
    """The oracle: through *i1, `range(n)` is bounded by `extsi` of the loaded bool, `n >= 1`
    compares its `extui`."""
    source = ("import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
              "def k(x_ptr, N, C: tl.constexpr):\n"
              "    n = tl.load(x_ptr)\n    for p in range(n):\n        tl.store(x_ptr + 1 + p, 1)\n"
              "    if n >= 1:\n        tl.store(x_ptr, 2)\n")
    ttir = triton_ttir(tmp_path, monkeypatch, source, "i1bound",
                       {"x_ptr": "*i1", "N": "i32", "C": "constexpr"})
    assert "arith.extsi" in ttir and "arith.extui" in ttir, ttir
    bound = next(line for line in ttir.splitlines() if "arith.extsi" in line).split("=")[0]
    assert f"to {bound.strip()} step" in ttir, ttir


# -------------------------------------------------- a DEFAULT_CONFIG constexpr of a float

def windows_under(wcond: str, rcond: str, config: str) -> str:
    """Round 28's ring over 4 windows, the writer's under ``wcond``, the reader's under
    ``rcond``, DEFAULT_CONFIG giving C = ``config``."""
    from .adversarial_support import get, kernel, loop, put

    return kernel(loop("for p in range(4):", loop(f"if {wcond}:", put("p"))),
                  loop("for p in range(4):", loop(f"if {rcond}:", get("p"))), config=config)


def test_a_constexpr_the_config_gives_as_a_float_is_not_proved(tmp_path, capsys):
    # `p <= C * 2 - 1` and `p < C * 2` agree for every integer C; the Gluon compiles with
    # DEFAULT_CONFIG's C = 1.25, where the reader waits index 2, never committed
    text = windows_under("p <= C * 2 - 1", "p < C * 2", "1.25")
    check(tmp_path, capsys, text, ("bounded", "only for C in the integers",
                                   "C = 1.25: DEFAULT_CONFIG gives a float"))


@pytest.mark.parametrize("config", ["2", "2.0"])
def test_a_constexpr_the_config_gives_as_an_integer_stays_verified(tmp_path, capsys, config):
    check(tmp_path, capsys, windows_under("p <= C * 2 - 1", "p < C * 2", config), "verified")


def test_the_gluon_compiles_the_float_the_config_gives(tmp_path, capsys):
    from .adversarial_support import run_dump, write_kernel

    path = write_kernel(tmp_path, windows_under("p <= C * 2 - 1", "p < C * 2", "1.25"))
    code, out, _ = run_dump(capsys, "--gluon", str(path))
    # (lowered with the warning that the protocol is bounded: exit 3)
    assert code == 3 and "C: gl.constexpr = 1.25" in out and "if (p < (C * 2)):" in out, out


# ------------------------------------------ a count loaded through a pointer typed *i1

def test_a_count_loaded_through_a_typed_i1_pointer_is_refused(tmp_path, capsys):
    # the kernel of test_a_loaded_value_read_as_a_loop_bound_and_compared_is_not_proved with
    # DEFAULT_CONFIG typing cnt_ptr *i1: the loaded bool is sign-extended as range(n)'s bound
    # and zero-extended in `n > 0`; it was verified (an i1 was accepted as a comparison's truth)
    text = counted("n = tl.load(cnt_ptr)\n", wbound="n", rbound="1", rcond="n > 0",
                   rmore=AFTER_FIRST, cnt="*i1")
    check(tmp_path, capsys, text, ("rejected", "[signature]", "comes from a load",
                                   "a value of type i1"))


@pytest.mark.parametrize("body", [
    # widened by a function (zero extension): an i32 of 0 or 1
    "n = tl.maximum(tl.load(cnt_ptr), 0)\n",
    # a comparison's truth of the load
    "n = (tl.load(cnt_ptr) > 0) * 1\n",
])
def test_an_i1_load_made_an_i32_decides_events_as_verified(tmp_path, capsys, body):
    check(tmp_path, capsys, counted(body, wcond="p < n", rcond="p + 1 <= n", cnt="*i1"),
          "verified")


@pytest.mark.parametrize("body,cnt", [("n = tl.maximum(tl.load(cnt_ptr), 0)\n", "*i8"),
                                      ("n = tl.minimum(tl.load(cnt_ptr), 5)\n", "*u8")])
def test_a_narrow_load_widened_by_a_function_is_accepted(tmp_path, capsys, body, cnt):
    # false rejection fixed: tl.maximum / tl.minimum make the number an int32 tensor, so the
    # value is an int32 (the oracle above); the signature check took it for the narrow type
    check(tmp_path, capsys, counted(body, wbound="n", rbound="n", cnt=cnt), "verified")


def test_a_comparison_passed_to_a_partition_as_a_flag_is_qualified(tmp_path, capsys):
    # `n >= 2` and `n > 1` computed in warp_specialize's arguments agree for every integer n,
    # not at n = 1.5 (the reader waits, the writer commits nothing): the bounded claim "for n
    # in [-16, 16]" named no element type (an assigned comparison's was qualified)
    text = counted("n = tl.load(cnt_ptr)\n", wbound="1", rbound="1", wcond="n",
                   rcond="n").replace("(produce, (kv, x_ptr, n, C))",
                                      "(produce, (kv, x_ptr, n >= 2, C))").replace(
        "(consume, (kv, y_ptr, n, C))", "(consume, (kv, y_ptr, n > 1, C))")
    check(tmp_path, capsys, text, (
        "bounded", "cnt_ptr in element types other than uint32, uint64 or float;",
        "`n >= 2`, which pipe events depend on, holds", "through a float cnt_ptr"))


def test_a_bounded_claim_with_a_float_config_constexpr_names_the_integers(tmp_path, capsys):
    # a second param makes the verdict bounded; its box of C values must not read as covering
    # the configuration's C = 1.25
    from .adversarial_support import get, kernel, loop, put

    text = kernel(loop("for p in range(N):", loop("if p <= C * 2 - 1:", put("p"))),
                  loop("for p in range(N):", loop("if p < C * 2:", get("p"))), config="1.25")
    check(tmp_path, capsys, text, ("bounded", "C in the integers",
                                   "C = 1.25: DEFAULT_CONFIG gives a float"))


def test_a_while_counter_from_a_kernel_body_sum_of_a_narrow_load_is_not_proved_for_it(
        tmp_path, capsys):
    # m = n + 1 of an int8 n is an int8 (an affine value the kernel body hands to the reader as
    # C): `k = C; while k < 200: k += 1` wraps in i8; the loop was proved for every integer type
    text = ring("k = C\nwhile k < 200:\n    k += 1\n",
                body="n = tl.load(cnt_ptr) & 63\nm = n + 1\n").replace(
        "(consume, (kv, y_ptr, cnt_ptr, N, C))", "(consume, (kv, y_ptr, cnt_ptr, N, m))")
    check(tmp_path, capsys, text, ("bounded", "element types other than int1, int8 or float;",
                                   "through a *i1 or *i8 cnt_ptr"))
