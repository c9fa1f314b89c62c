"""A thirty-third adversarial round (adversarial round 33): the refusals a translation with a
free buffer's stand-in excuses, the builtins a module binds to themselves, and the protocol
side outside global memory: named-barrier pipes, one-shot pipes, closed pipes, partitions of
one function, constexpr defaults, conditions and indices the verifier reads, tle.assume
domains, several kernels in a file and the JSON report. Each case is a small kernel written to
a file and read by tle-dump's main(); the exit code and the verdict's words are pinned, and a
form of plain Triton that a case rests on is compiled by Triton itself to TTIR (no GPU needed).

Bugs found, one line each:
1. `tl.debug_barrier(buf)` of a free shared buffer `buf` (refused whatever the buffer is) was
   excused as a refusal at an expression reading a buffer, which may be its stand-in tile's,
   and verified untranslated (round 31's open item); so were `tl.cast(tl.load(
   tle.gpu.local_ptr(buf)), 'fp16')` and `tl.load(tle.gpu.local_ptr(buf)).foo`, which Triton
   refuses of any loaded tile. FIXED: such a refusal is translated again with the buffers the
   refused expression reads replaced, a load of a whole buffer by `tl.zeros` of its shape and
   type and any other read by the integer 0 (cli/translation_check.py buffers_replaced_at); the same
   refusal, place and words, is the kernel's. A conditional expression of buffers, which
   translates so, keeps the verdict.
2. A module-level `min = min` (a builtin bound to itself) was read as a circular definition,
   rejecting a correct kernel (round 31's open item). FIXED: where the module binds the name
   nowhere else, its value is the builtin, as `from builtins import min` binds it
   (frontend/build.py Builder.module_assign, PYTHON_BUILTINS): Python's min, refused of a
   run-time value as round 31 refuses it, verified of numbers.
3. The excuse of a refusal at a line reading a free buffer compared line numbers only: a
   `tl.debug_barrier(1)` in a helper of another module, at the line number of a kernel line
   that reads a buffer (and at its column), was left out with that line and verified.
   FIXED: lines are places, a file and a line (cli/translation_check.py place_of), in every set of
   lines the translations with stand-ins keep.
4. `tl.sqrt_rn` and `tl.div_rn` of an fp16 or fp64 tile and `tl.umulhi` of int8 / uint16
   tiles were verified; Triton 3.6 computes the first two on fp32 alone and umulhi on 32- and
   64-bit integers ("Expected dtype ['fp32'] but got fp16"). FIXED: refused at the call
   (frontend/triton_rules.py operand_dtype_rule, check unsupported-expression).
5. A conversion between an integer type (int1 included) and an fp8 type (`t.to(tl.int32)
   .to(tl.float8e4nv)`, `.to(tl.float8e5).to(tl.int32)`, `(t > 0).to(tl.float8e5)`, tl.cast)
   was verified; Triton 3.6's cast has no rule for it ("cannot cast int32[...] to fp8e4nv").
   FIXED: the lowering refuses it (ir/promotion.py fp8_conversion_refusal), so tle-dump
   rejects the kernel at its line; float8e4b15 to an integer, which Triton's backend converts,
   is still verified.
6. `/`, `//` and `%` of two integer tiles (or a tile and a run-time scalar) of different
   signedness (`t.to(tl.int32) % t.to(tl.uint32)`, `u32 % N`) were verified; Triton 3.6
   refuses them ("Cannot use /, #, or % with int32 and uint32 because they have different
   signedness"). The lowering's promotion (ir/promotion.py computation_type) knew the pair was
   refused and left that to Triton's compile, which tle-dump does not run; so was an fp8
   tile beside an integer one (`t.to(tl.float8e5) + t.to(tl.int32)`: "unexpected type").
   FIXED: the lowering refuses both at their line (promotion.operand_pair_refusal).
7. `tl.where(c, t, y_ptr)` (a pointer and a float) and `tl.where(c, y_ptr, 0)` (a pointer and
   an integer) were verified; Triton 3.6 refuses the first ("invalid operands of type
   pointer<fp32> and triton.language.float32") and builds IR that does not verify for the
   second. FIXED: refused at the call (frontend/triton_rules.py operand_dtype_rule).

8. An absolute import of a sibling module (`import hmod` beside the kernel file) was resolved
   on tle-dump's sys.path, whose '' is the working directory, not on the kernel's folder: run
   from another directory, `hmod` was taken for a library the kernel does not read and the
   lowering refused `hmod.barrier()` (a correct kernel rejected), and an `hmod.py` of the
   working directory was read in its place (a kernel verified with another module's helper).
   FIXED: a top-level module is looked up first in the folder above the importing file's
   outermost package, where Python finds it when it imports or runs that file
   (frontend/modules.py root_folder).

Checked and found right (pinned below where marked): named-barrier pipes handed back through
another pipe (pinned), a lagged hand-back, a commit before the release, a close, capacity 2
(rejected, pinned), and a hand-back through the release of a pipe of capacity 2, whose acquire
comes one use too late (rejected, pinned); one-shot pipes at index 0, 1 or 2 (one parity,
pinned) and at N (negative-index); a ring starting at index 1 (phase-aliasing); one partition
function given twice, under an alias, or wrapped by a second function (refused); C's and
Python's `%` in conditions of range and tl.static_range loops (pinned), a partition's name
bound to a number in `%` (refused), a constexpr one (Python's); tle.assume on `N // 2`,
`N >> 1`, `tl.cdiv(N, 2)`, `N * 3 // 4` (C's division, pinned) and `N % 4` narrowing the
domain; a constexpr kernel parameter with a default (every value of it checked), a partition
function's constexpr parameter with a default that warp_specialize leaves out (since verified,
as Gluon binds the default: tests/test_correct_kernels_accepted.py); a free
buffer written by the kernel body before warp_specialize and read by a worker, and one handed
over through an alias, a tuple, a local_ptr of the kernel body or a helper (buffer-race);
close(i) then more writer events, a close inside the loop, reads guarded by `not
res.is_closed`, `c == False`, `!= True`, `not (not ...)` and a conjunction (verified), by a
flag carried from the previous iteration or a previous window's result (refused); several
kernels in one file (the worst exit wins) and the JSON report's verdict, exit code and
`translated` fields, which agree with the text; about sixty Triton 3.6 refusals in a reader's
window (float `//`, shifts and bit operations, math of int or fp16, bad cache modifiers and
eviction policies, broadcasts, reductions of bad axes, atomics' sem / scope): refused as
Triton refuses them (the cases above aside; a method `t.reshape` and return_indices are
refused where Triton compiles them: the lowering's limits; tl.fdiv of fp16 Triton itself fails
on, and tl.interleave is since lowered: tests/test_correct_kernels_accepted.py). A value Triton compiles is checked stored (USE): Triton drops a dead one before its
backend, which would compile fp8 arithmetic it refuses once the value is used.
"""

from __future__ import annotations

import pytest

from .adversarial_support import (dump, expect, get, kernel, loop, put, reader_does, run_dump,
                                  write_kernel)
from .test_adversarial_verdicts_30 import FREE_BUFFER
from .test_adversarial_verdicts_26 import triton_refuses
from .test_adversarial_verdicts_31 import BARRIER, _min_ring, _reader_with_buffer, _triton_min


# ------------------------------- bug 1: a refusal of an expression reading a buffer, excused

@pytest.mark.parametrize("stmt", ["tl.debug_barrier(buf)", "b2 = buf\ntl.debug_barrier(b2)",
                                  "tl.debug_barrier((buf, 1))"])
def test_a_refusal_of_an_expression_reading_a_buffer_whatever_it_is_is_rejected(tmp_path,
                                                                                capsys, stmt):
    """Before: verified, not translated. The barrier takes no argument, whatever the lowering
    makes of the buffer: the refusal stands with the buffer read as 0."""
    text = _reader_with_buffer(stmt.replace("\n", "\n        "))
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, ("rejected", f"error: lowering: {BARRIER}", "[lowering]"))


def _own_buffer(stmt: str) -> str:
    """Round 30's kernel of a free buffer `buf` that only the reader uses: it stores the
    buffer after each release, then runs ``stmt``."""
    text = FREE_BUFFER.replace(
        "    tl.store(tle.gpu.local_ptr(buf), tl.load(x_ptr + tl.arange(0, 64)))\n", "")
    text = text.replace("consume, (kv, y_ptr, N))", "consume, (kv, y_ptr, N, buf))").replace(
        "def consume(kv, y_ptr, N)", "def consume(kv, y_ptr, N, buf)")
    return text.replace("        STMT\n", "        tl.store(tle.gpu.local_ptr(buf), "
                        f"tl.load(y_ptr + tl.arange(0, 64)))\n        {stmt}\n")


@pytest.mark.parametrize("stmt, words", [
    ("tl.debug_barrier(tl.load(tle.gpu.local_ptr(buf)))", BARRIER),
    ("x = tl.cast(tl.load(tle.gpu.local_ptr(buf)), 'fp16')",
     "`tl.cast`'s dtype must be a tl dtype"),
    ("x = tl.load(tle.gpu.local_ptr(buf)).foo", "`.foo` of something that is not a pipe slot"),
])
def test_a_refusal_of_an_expression_over_a_load_of_a_buffer_is_rejected(tmp_path, capsys,
                                                                         monkeypatch, stmt,
                                                                         words):
    """Before: verified, not translated (the refused expression reads the buffer; with 0 in
    its place the translation is refused sooner, at the load). A load of the whole buffer is
    a tile of its shape and type whatever the lowering makes of the buffer: with `tl.zeros`
    of them in its place the refusal stands. Triton refuses each with a loaded tile."""
    code, err = dump(tmp_path, capsys, _own_buffer(stmt))
    expect(code, err, ("rejected", f"kernel.py:29: error: lowering: {words}"))
    assert triton_refuses(tmp_path, monkeypatch, stmt.replace(
        "tl.load(tle.gpu.local_ptr(buf))", "t"), "r33b")


@pytest.mark.parametrize("stmt", [
    "pass", "tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(buf)) * 2.0)",
    "tl.store(y_ptr, tl.sum(tl.load(tle.gpu.local_ptr(buf)), axis=0))"])
def test_a_buffer_the_reader_alone_uses_keeps_the_verdict(tmp_path, capsys, stmt):
    code, err = dump(tmp_path, capsys, _own_buffer(stmt))
    expect(code, err, "verified")


def test_a_refusal_only_the_buffer_tile_gives_keeps_the_verdict(tmp_path, capsys):
    """The twin of round 31: a conditional expression of buffers is refused with their tiles
    and translates with 0 in their place (it may be the tiles'): verified, not translated."""
    text = FREE_BUFFER.replace("        STMT\n", "").replace(
        "    buf = tle.gpu.alloc([64], tl.float32)\n",
        "    buf = tle.gpu.alloc([64], tl.float32)\n    b2 = buf if N > 0 else buf\n")
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, "verified")


# ------------------------------------------------- bug 2: `min = min` at module level

@pytest.mark.parametrize("bound, want", [
    ("min(3, 4) + N", "verified"),
    ("min(N, 4)", ("rejected", "is Python's", "[unsupported-expression]")),
])
def test_a_builtin_bound_to_itself_is_the_builtin(tmp_path, capsys, monkeypatch, bound, want):
    """Before: rejected, "circular definition of module-level name 'min'", for both. Python
    binds the builtin min there, which Triton 3.6's global lookup finds: of numbers it
    compiles, of the tensor N it fails as after `from builtins import min`."""
    code, err = dump(tmp_path, capsys, _min_ring(bound, "min = min\n"))
    expect(code, err, want)
    e = _triton_min(tmp_path, monkeypatch, "min = min\n", bound, "r33m")
    assert (e is None) == (want == "verified"), e


@pytest.mark.parametrize("prelude, loop_head", [("range = range\n", "range(N)"),
                                                ("abs = abs\n", "range(abs(N))")])
def test_other_builtins_bound_to_themselves(tmp_path, capsys, prelude, loop_head):
    code, err = dump(tmp_path, capsys, _min_ring("N", prelude).replace("range(N)", loop_head))
    if loop_head == "range(N)":
        expect(code, err, "verified")
    else:
        expect(code, err, ("rejected",))
        assert "circular" not in err, err


def test_a_name_bound_to_itself_after_another_binding_is_still_refused(tmp_path, capsys):
    """Python reads the earlier binding there, which the reading does not follow: refused, as
    before."""
    code, err = dump(tmp_path, capsys, _min_ring("min(3, 4) + N", "min = max\nmin = min\n"))
    expect(code, err, ("rejected",))


# ------------------------------ bug 3: a line of another file excused as a buffer's line

def _cross_file(tmp_path, kernel_line: str) -> str:
    """A kernel whose reader stores its own free buffer `buf` and runs ``kernel_line`` after
    it, then calls `hmod.barrier()`, a helper of another module whose `tl.debug_barrier(1)`
    stands at the line number (and the column) of ``kernel_line``."""
    text = FREE_BUFFER.replace("        STMT\n", "").replace(
        "    tl.store(tle.gpu.local_ptr(buf), tl.load(x_ptr + tl.arange(0, 64)))\n", "")
    text = text.replace("consume, (kv, y_ptr, N))", "consume, (kv, y_ptr, N, buf))").replace(
        "def consume(kv, y_ptr, N)", "def consume(kv, y_ptr, N, buf)")
    text = text.replace("        r.release(p)\n", "        r.release(p)\n"
                        "    tl.store(tle.gpu.local_ptr(buf), tl.load(y_ptr + tl.arange(0, 64)))\n"
                        f"    {kernel_line}\n    hmod.barrier()\n")
    text = text.replace("import tle_compiler as tle\n", "import tle_compiler as tle\nimport hmod\n")
    line = text.splitlines().index(f"    {kernel_line}") + 1
    (tmp_path / "hmod.py").write_text("import triton.language as tl\n\n\ndef barrier():\n"
                                      + "    pass\n" * (line - 5) + "    tl.debug_barrier(1)\n")
    return text


@pytest.mark.parametrize("kernel_line", [
    "tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(buf)))",  # reads buf
    "tl.store(y_ptr + tl.arange(0, 64), tl.load(y_ptr + 64 + tl.arange(0, 64)))",
])
def test_a_refusal_in_another_file_is_not_excused_by_a_buffer_line(tmp_path, capsys,
                                                                   monkeypatch, kernel_line):
    """Before: verified when the kernel's line of that number reads the buffer (the helper's
    refusal was taken for one at it, and left out with it); rejected when it does not. (`import
    hmod` is found on sys.path, where the kernel's folder is put.)"""
    monkeypatch.syspath_prepend(str(tmp_path))
    code, err = dump(tmp_path, capsys, _cross_file(tmp_path, kernel_line))
    expect(code, err, ("rejected", f"hmod.py:30: error: lowering: {BARRIER}"))


#: a use of the value `u` a case computes: Triton drops a dead value before its backend, which
#: may refuse the live one (fp8 arithmetic), so a case Triton compiles is compiled stored
USE = "\ntl.store(y_ptr + tl.arange(0, 64), u.to(tl.float32))"


# ------------------------------- bug 4: math functions of element types Triton 3.6 refuses

@pytest.mark.parametrize("stmt, words", [
    ("u = tl.sqrt_rn(t.to(tl.float16))", "Expected dtype ['fp32'] but got fp16"),
    ("u = tl.sqrt_rn(t.to(tl.float64))", "Expected dtype ['fp32'] but got fp64"),
    ("u = tl.div_rn(t.to(tl.float16), t.to(tl.float16))", "Expected dtype ['fp32'] but got fp16"),
    ("u = tl.div_rn(t, t.to(tl.float64))", "Expected dtype ['fp32'] but got fp64"),
    ("u = tl.umulhi(t.to(tl.int8), t.to(tl.int8))", "but got int8"),
    ("u = tl.umulhi(t.to(tl.uint16), t.to(tl.uint16))", "but got uint16"),
])
def test_a_precise_math_function_of_another_type_is_rejected(tmp_path, capsys, monkeypatch,
                                                             stmt, words):
    """Before: verified. Triton 3.6 computes tl.sqrt_rn and tl.div_rn on fp32 alone (not fp64,
    as tl.sqrt), and tl.umulhi on 32- and 64-bit integers (math.py `_check_dtype`)."""
    code, err = dump(tmp_path, capsys, reader_does(stmt))
    expect(code, err, ("rejected", "kernel.py:31:", words, "[unsupported-expression]"))
    assert triton_refuses(tmp_path, monkeypatch, stmt, "r33d")


@pytest.mark.parametrize("stmt", ["u = tl.sqrt_rn(t)", "u = tl.div_rn(t, t)",
                                  "u = tl.div_rn(t, 2.0)",
                                  "u = tl.umulhi(t.to(tl.int32), t.to(tl.int32))",
                                  "u = tl.umulhi(t.to(tl.uint64), t.to(tl.uint64))"])
def test_a_precise_math_function_of_its_types_is_verified(tmp_path, capsys, monkeypatch, stmt):
    code, err = dump(tmp_path, capsys, reader_does(stmt + USE))
    expect(code, err, "verified")
    assert not triton_refuses(tmp_path, monkeypatch, stmt + USE, "r33e")


# --------------------------------------- bug 5: conversions between integers and fp8 types

@pytest.mark.parametrize("stmt", [
    "u = t.to(tl.int32).to(tl.float8e4nv)",
    "u = t.to(tl.int8).to(tl.float8e5)",
    "u = (t > 0).to(tl.float8e5)",
    "u = t.to(tl.uint32).to(tl.float8e4b15)",
    "u = t.to(tl.float8e5).to(tl.int32)",
    "u = t.to(tl.float8e4nv).to(tl.uint8)",
    "u = tl.cast(t.to(tl.int32), tl.float8e5)",
])
def test_a_conversion_between_an_integer_and_fp8_is_rejected(tmp_path, capsys, monkeypatch,
                                                             stmt):
    """Before: verified. Triton 3.6's cast converts integers to and from the standard floats
    only ("cannot cast int32[...] to fp8e4nv")."""
    code, err = dump(tmp_path, capsys, reader_does(stmt))
    expect(code, err, ("rejected", "kernel.py:31: error: lowering: a conversion from",
                       "converts integers to and from the standard float types only"))
    assert triton_refuses(tmp_path, monkeypatch, stmt, "r33c")


@pytest.mark.parametrize("stmt", [
    "u = t.to(tl.float8e4b15).to(tl.int32)",  # the backend's own conversion takes it
    "u = t.to(tl.float8e5).to(tl.int8, bitcast=True)",
    "u = t.to(tl.int32).to(tl.float16).to(tl.float8e5)",
    "u = t.to(tl.float8e5).to(tl.float16).to(tl.int32)",
])
def test_a_conversion_triton_takes_is_verified(tmp_path, capsys, monkeypatch, stmt):
    code, err = dump(tmp_path, capsys, reader_does(stmt + USE))
    expect(code, err, "verified")
    assert not triton_refuses(tmp_path, monkeypatch, stmt + USE, "r33f")


# ------------- bug 6: integer division of two signednesses, an fp8 tile beside an integer one

@pytest.mark.parametrize("stmt, words", [
    ("u = t.to(tl.int8) // tl.full([64], 3, tl.uint8)", "`//` of int8 and uint8"),
    ("u = t.to(tl.int32) % tl.full([64], 3, tl.uint32)", "`%` of int32 and uint32"),
    ("u = t.to(tl.int32) / t.to(tl.uint32)", "`/` of int32 and uint32"),
    ("u = t.to(tl.uint32) % N", "`%` of uint32 and int32"),
    ("u = t.to(tl.float8e5) + t.to(tl.int32)", "`+` of float8e5 and int32"),
    ("u = t.to(tl.int8) < t.to(tl.float8e4nv)", "`<` of int8 and float8e4nv"),
])
def test_a_division_of_integers_of_two_signednesses_is_rejected(tmp_path, capsys, monkeypatch,
                                                                stmt, words):
    """(The divisors are numbers: one of the tile's values may be 0, which round 76's division
    check refuses first.) Before: verified. Triton 3.6 refuses /, // and % of an int and a uint ("Cannot use /,
    #, or % with int32 and uint32 because they have different signedness"); the lowering's
    promotion knew the pair was refused and left the refusal to a compile tle-dump does not
    run."""
    code, err = dump(tmp_path, capsys, reader_does(stmt))
    expect(code, err, ("rejected", f"kernel.py:31: error: lowering: {words}: Triton 3.6"))
    assert triton_refuses(tmp_path, monkeypatch, stmt, "r33s")


@pytest.mark.parametrize("stmt", ["u = t.to(tl.uint32) % 3",
                                  "u = t.to(tl.int32) // tl.full([64], 3, tl.int64)",
                                  "u = t.to(tl.uint8) // tl.full([64], 3, tl.uint32)",
                                  "u = t.to(tl.float8e5) < t.to(tl.float16)"])
def test_a_division_of_integers_of_one_signedness_is_verified(tmp_path, capsys, monkeypatch,
                                                              stmt):
    code, err = dump(tmp_path, capsys, reader_does(stmt + USE))
    expect(code, err, "verified")
    assert not triton_refuses(tmp_path, monkeypatch, stmt + USE, "r33t")


# ------------------------------------------------ bug 7: tl.where of a pointer and a number

@pytest.mark.parametrize("stmt", ["u = tl.where(t > 0, t, y_ptr)",
                                  "u = tl.where(t > 0, y_ptr, 0)",
                                  "u = tl.where(t > 0, 0, y_ptr + tl.arange(0, 64))"])
def test_a_where_of_a_pointer_and_a_number_is_rejected(tmp_path, capsys, monkeypatch, stmt):
    """Before: verified. Triton 3.6 checks where's values as a binary operation's: a pointer
    beside a float is refused, beside an integer its IR does not verify."""
    code, err = dump(tmp_path, capsys, reader_does(stmt))
    expect(code, err, ("rejected", "kernel.py:31:", "invalid operands of type pointer and",
                       "[unsupported-expression]"))
    assert triton_refuses(tmp_path, monkeypatch, stmt, "r33w")


def test_a_where_of_two_pointers_is_verified(tmp_path, capsys, monkeypatch):
    stmt = "tl.store(tl.where(t > 0, y_ptr, y_ptr + 64) + tl.arange(0, 64), t)"
    code, err = dump(tmp_path, capsys, reader_does(stmt))
    expect(code, err, "verified")
    assert not triton_refuses(tmp_path, monkeypatch, stmt, "r33x")


# ------------------------------------------------------------------ checked and found right

#: a named-barrier pipe `a` from produce to consume, handed back through the pipe `y` (of
#: capacity CAP) that produce writes and consume releases after it releases `a`
NAMED = '''import triton.language as tl
import tle_compiler as tle


@tle.jit
def k(x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    a = tle.pipe(capacity=ACAP, barrier="named", t=tle.gpu.alloc([ACAP, 64], tl.float32))
    y = tle.pipe(capacity=CAP, t=tle.gpu.alloc([CAP, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (a, y, x_ptr, N)), (consume, (a, y, y_ptr, N))], [4], [232])


def produce(a, y, x_ptr, N):
    w = a.writer()
    wy = y.writer()
    for p in range(N):
        s = wy.acquire(p)
        tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + tl.arange(0, 64)))
        wy.commit(p)
        s = w.acquire(p)
        tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + tl.arange(0, 64)))
        w.commit(p)


def consume(a, y, y_ptr, N):
    r = a.reader()
    ry = y.reader()
    for p in range(N):
        res = r.wait(p)
        v = tl.load(tle.gpu.local_ptr(res.slot.t))
        r.release(p)
        res = ry.wait(p)
        u = tl.load(tle.gpu.local_ptr(res.slot.t))
        ry.release(p)
        tl.store(y_ptr + p * 64 + tl.arange(0, 64), u + v)
'''


@pytest.mark.parametrize("acap, cap, want", [
    ("1", "1", "verified"),
    # the release of y(p) enables acquire(p + 2) of y, which comes after acquire(p + 1) of a
    ("1", "2", ("rejected", "[named-release]", "is not ordered after the reader's release")),
    ("2", "1", ("rejected", "[bad-pipe]", "capacity=1")),
])
def test_a_named_pipe_handed_back_through_a_release(tmp_path, capsys, acap, cap, want):
    code, err = dump(tmp_path, capsys, NAMED.replace("ACAP", acap).replace("CAP", cap))
    expect(code, err, want)


ONE_SHOT = '''import triton.language as tl
import tle_compiler as tle


@tle.jit
def k(x_ptr, y_ptr, N):
    q = tle.pipe(capacity=1, one_shot=True, t=tle.gpu.alloc([1, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (q, x_ptr, N)), (consume, (q, y_ptr, N))], [4], [232])


def produce(q, x_ptr, N):
    w = q.writer()
    s = w.acquire(IDX)
    tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + tl.arange(0, 64)))
    w.commit(IDX)


def consume(q, y_ptr, N):
    r = q.reader()
    res = r.wait(IDX)
    tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.t)))
    r.release(IDX)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"}, "constexprs": {}}
'''


@pytest.mark.parametrize("idx", ["0", "1", "2"])
def test_a_one_shot_pipe_at_any_index_waits_one_parity(tmp_path, capsys, idx):
    """A one-shot pipe has one stage and its lowering waits parity 0 whatever the index (an
    index of phase 1 on a pipe of capacity 1 would pass a fresh barrier at once)."""
    code, err = dump(tmp_path, capsys, ONE_SHOT.replace("IDX", idx))
    expect(code, err, "verified")
    path = write_kernel(tmp_path, ONE_SHOT.replace("IDX", idx))
    code, out, _ = run_dump(capsys, "-q", "--gluon", str(path))
    assert code == 0 and "mbarrier.wait(q_full0.index(0), 0)" in out, out


@pytest.mark.parametrize("head, cond, want", [
    ("for p in range(4):", "(p - 3) % 2 == -1", "verified"),  # C's remainder: p = 0, 2
    ("for p in range(4):", "(p - 3) % 2 == 1", ("rejected", "[wait-never-committed]")),
    ("for p in tl.static_range(4):", "(p - 3) % 2 == 1", "verified"),  # Python's
    ("for p in tl.static_range(4):", "(p - 3) % 2 == -1", ("rejected", "[wait-never-committed]")),
])
def test_a_remainder_of_a_negative_value_in_a_condition(tmp_path, capsys, head, cond, want):
    text = kernel(loop(head, loop(f"if {cond}:", put("p"))), loop("for p in range(2):",
                                                                   get("2 * p")))
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, want)


@pytest.mark.parametrize("off, want", [
    ("2", ("rejected", "negative index -1 (when N=-3)")),  # C's N // 2 >= -1 holds at N = -3
    ("3", "verified"),
])
def test_an_assumed_quotient_narrows_the_domain_by_cs_division(tmp_path, capsys, off, want):
    text = (ONE_SHOT.replace("IDX", f"N + {off}")
            .replace("    q = tle.pipe(",
                     "    M = N // 2\n    tle.assume(M >= -1)\n    q = tle.pipe("))
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, want)


# ------------------------------ bug 8: a sibling module found whatever the working directory

SIBLING = """import triton.language as tl
import tle_compiler as tle
import hmod


@tle.jit
def k(x_ptr, y_ptr, N):
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, y_ptr, N))], [4], [232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    for t in range(N):
        s = w.acquire(t)
        tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + hmod.off() + tl.arange(0, 64)))
        w.commit(t)


def consume(kv, y_ptr, N):
    r = kv.reader()
    for t in range(N):
        res = r.wait(t)
        tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))
        hmod.barrier()
        r.release(t)
"""
HMOD = "import triton.language as tl\n\n\ndef off():\n    return 64\n\n\ndef barrier():\n    BODY\n"


@pytest.mark.parametrize("body, want", [
    ("pass", "verified"),
    ("tl.debug_barrier(1)", ("rejected", "hmod.py:", BARRIER)),
])
def test_a_sibling_module_is_read_from_the_kernels_folder(tmp_path, capsys, monkeypatch, body,
                                                          want):
    """Run from another directory that holds a decoy `hmod.py` (the other body): the verdict is
    the one of the kernel's own sibling module. Before: the decoy was read (or, without one,
    `hmod` taken for a library and `hmod.barrier()` refused)."""
    kdir, elsewhere = tmp_path / "k", tmp_path / "elsewhere"
    kdir.mkdir()
    elsewhere.mkdir()
    (kdir / "hmod.py").write_text(HMOD.replace("BODY", body))
    decoy = "tl.debug_barrier(1)" if body == "pass" else "pass"
    (elsewhere / "hmod.py").write_text(HMOD.replace("BODY", decoy))
    monkeypatch.chdir(elsewhere)
    monkeypatch.syspath_prepend(str(elsewhere))
    code, err = dump(kdir, capsys, SIBLING)
    expect(code, err, want)
