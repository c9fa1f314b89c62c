"""A thirty-first adversarial round (adversarial round 31): the translations tle-dump makes with
stand-ins (round 30's: a constexpr without a value at a probe value, a free shared buffer read as
a shared-memory tile, no argument types), forms a user writes in a partition that the tool might
not model, the names a module binds (shadowed builtins, aliases of tl and tle, globals rebound at
import), decorators and kernels made in other ways, tle.assume facts that leave no value, and the
--param values the CLI takes. Each case is a small kernel written to a file and read by
tle-dump's main(); the exit code and the verdict's words are pinned, and each refused form of
plain Triton is compiled by Triton itself to TTIR (no GPU needed) to check that it refuses it.

Bugs found, one line each:
1. The first refusal of a translation with stand-ins hid the refusals after it: a kernel
   without a DEFAULT_CONFIG signature whose reader sums an untyped load with keep_dims=True (a
   refusal a launch's types may lift, lowering-untyped) and then runs `tl.debug_barrier(1)`
   (Triton refuses it whatever the types) was verified untranslated; so was a kernel a
   constexpr of which has no value whose reader runs `z = tl.reshape(t, [C, 2])` (refused at
   the probe value C = 16, a line reading C, excused) before the barrier. FIXED: the untyped
   translation is made again with a stand-in element type (translate.UNTYPED_STAND_IN, each of
   float32, float16, bfloat16, int32) and the probe with each of several values (16, 64, 32,
   ..., cli/translation_check.PROBE_CONSTEXPRS); the verdict is kept only where one of them
   translates, and a refusal at a line no stand-in reaches is reported first
   (cli/translation_check.py refusal_outside).
2. A refusal at a line reading a constexpr without a value was excused, so a form refused for
   every value beside it was verified: `x = C; tl.debug_barrier(1)` on one line,
   `tl.debug_barrier(C)`; and a refusal at a line reading a free buffer (a kernel body's `b2 =
   buf if N > 0 else buf`, refused with the buffer's tile) hid a `tl.debug_barrier(1)` after
   it. FIXED: by 1, a kernel no probe value translates is rejected, the message saying which
   values were tried; a translation refused at a line reading a free buffer is made again
   without the lines that read one (cli/translation_check.py without_lines), and a refusal there
   rejects; `_ = (buf, tl.debug_barrier(1))` (a refused expression that reads no buffer on a line
   that does, verified before) is a refusal of the kernel (refused_node_reads, by the refused
   expression's column).
3. A kernel with a free shared buffer and a constexpr without a value stopped the probe at the
   buffer's first use (lowering-not-yet: nothing learnt), so its `tl.debug_barrier(1)` was
   verified untranslated. FIXED: every translation with stand-ins reads the free buffers as
   shared-memory tiles (translate.STUB_FREE_BUFFERS).
4. `min` / `max` that the kernel's module binds (`from builtins import min`, `min = max`,
   `min = builtins.min`) were read as Triton's builtin_min / builtin_max and verified; Triton
   3.6's global lookup comes before its builtin namespace, so it calls Python's function with
   the tensor N and fails ("Did you forget to add @triton.jit ?"). FIXED: refused unless every
   argument is a compile-time number (frontend/build.py Builder.triton_builtin); `builtins.min(
   ...)` is refused, of numbers too (Triton's dependency finder: "Unsupported function
   referenced"). (test_adversarial_verdicts_24's and _6's `min = max` / `from builtins import
   max as min`, rejected for their protocol fault before, are refused for this now.)
5. A kernel Python makes of a function the reading does not name was left out of the file's
   verdict (exit 0 beside a correct kernel, the other hanging): `[tle.jit(f) for f in
   [bad_fn]]`, `tle.jit(fn=bad_fn)`, `tle.jit(*[bad_fn])`, `map(tle.jit, [bad_fn])`, an alias's
   call in a comprehension, `getattr(tle, 'jit')(bad_fn)`, `tle.jit.__call__(bad_fn)`,
   `functools.partial(tle.jit, num_warps=4)(bad_fn)`. FIXED: where a module-level function
   calls warp_specialize without being a @tle.jit kernel, such a use of tle.jit, or any read of
   that function's name, is refused (check bad-jit; frontend/kernel.py jit_reference).
6. `@getattr(tle, 'jit')` over such a def was skipped as a builtin decorator that returns no
   kernel (as `@print`): it returns tle.jit. FIXED: a call of a builtin as a decorator is
   refused there like any decorator the reading does not take for tle.jit
   (kernel.foreign_decorated_kernel).
7. One of Python's builtins bound by the module under a name Triton 3.6's builtin namespace does
   not hold (`from builtins import range as rng`, `rng = range`, `mn = min`, `I = int`) was read
   as the builtin and verified; Triton's global lookup refuses such a global ("Cannot access
   global variable rng from within @jit'ed function"), its dependency finder a builtin function
   first ("Unsupported function referenced"). FIXED: refused where the name is read (check
   unknown-name; frontend/build.py Builder.renamed_builtin).
8. A free buffer of an element type the lowering has no Gluon name for (tl.float8e4b15, which
   Triton 3.6 takes on sm_90) stopped the translation past the buffers (lowering-not-yet:
   nothing learnt), so a reader's `tl.debug_barrier(1)` was verified. FIXED: its stub tile
   takes a stand-in element type (translate.ex_BufferRef).
9. A cast to tl.float8e4b8 or tl.float8e5b16 (or a tensor of them) in a partition was verified;
   Triton 3.6 makes no IR type of them on sm_90 ("type fp8e4b8 not supported in this
   architecture"). FIXED: the lowering refuses the dtype (translate.ex_DType), so tle-dump
   rejects the kernel at its line.
10. `x.to(tl.float16, fp_downcast_rounding="rtn")` (a mode Triton 3.6 does not have) and a
   rounding mode on a conversion that narrows no float (`.to(tl.float64, ...="rtz")`) were
   verified; Triton refuses both. FIXED: the lowering refuses them (rounding.rounding_refusal).

11. `(t.to(tl.float8e4b15) + t.to(tl.float8e4b15))` was verified, and Triton 3.6 fails to
   compile it (fp8 arithmetic, which the lowering refuses for the fp8 types it names, reached
   this one under Triton's spelling "fp8e4b15"). FIXED (after the round): the lowering reads
   that name as float8e4b15 (translate.TL_DTYPES), so the fp8-arithmetic refusal holds for it;
   its conversions alone still verify and compile.

Checked and found right (tried, not kept unless marked): in a partition, tl.inline_asm_elementwise
(`bar.sync 1;`, `exit;`, pure or not), tl.reduce / tl.associative_scan with a combine function,
an atomic on a slot pointer, tl.extra.cuda.globaltimer (refused); tl.device_assert,
tl.device_print, tl.static_print, libdevice exp, tl.multiple_of (verified, as Triton and the
lowering take them); tl.static_assert false at the value read (refused); tl.range with
num_stages (positional too), warp_specialize, flatten, loop_unroll_factor,
disallow_acc_multi_buffer, disable_licm (refused; None / False defaults verified); tle.assume
facts that leave no value (`N >= 5` with `N <= 3`, `N % 2 == 3`, `N * 2 == 1`, `0 > 1`, `and`
of contradictions), `False`, non-affine facts (bounded), and assume in a partition, a helper,
under an `if` or a loop, after warp_specialize (refused); --param values outside i32 (unknown,
never verified), outside the domain, bool for an integer, floats, hex, underscores, a name no
param has, given twice (exit 2); `range` bound to tl.static_range at module level, a module
`def range`, star imports, `tl` shadowed by a parameter, `import triton.language as T`;
@triton.autotune / @triton.heuristics over @tle.jit, tle.jit(fn) called, kernels defined in an
`if` / `try` / `with` / `for` / `while` / class / factory, a file with a syntax error or a
top-level raise, two kernels in one file (the worst verdict wins); module globals rebound at
import (globals(), setattr on the module, tuple / augmented / walrus bindings, a function
declaring it global), a helper default reading a global rebound later; isinstance / hasattr /
getattr / list in a kernel (refused); register budgets not a multiple of 8, outside [24,
256], written with constexprs, and warp counts 0, 3, 16 (refused), 1, 2, 8 (verified); data
loops whose bound reaches the end of i32 through a helper's return, a tuple, an augmented
assignment, tl.where, tl.maximum, a cast or a conditional expression (endless-loop); module
constants folded as Python computes them (`-7 // 2`, `int(-2.5)`, `~-3`, `3 & -2`, `(1, 2)[-1]`;
builtins the reading does not fold, refused).
"""

from __future__ import annotations

import pytest

from .test_adversarial_verdicts_25 import dump, expect
from .test_adversarial_verdicts_26 import reader_does, triton_refuses, without_config
from .test_adversarial_verdicts_30 import FREE_BUFFER

BARRIER = "`tl.debug_barrier()` takes no arguments"


def untyped(stmt: str) -> str:
    """Round 26's ring without its DEFAULT_CONFIG and without the constexpr C (so that the
    lowering translates it, untyped), its reader running ``stmt`` in its window."""
    return (without_config(reader_does(stmt)).replace(", C: tl.constexpr", "")
            .replace(", C)", ")"))


#: a refusal of the untyped translation that the element type of a load decides
UNTYPED_SUM = "u = tl.sum(tl.load(y_ptr + tl.arange(0, 64)), keep_dims=True)"


# --------------------------------------------- bug 1: the first refusal hid the ones after it

def test_a_type_decided_refusal_does_not_hide_a_refusal_after_it(tmp_path, capsys, monkeypatch):
    code, err = dump(tmp_path, capsys, untyped(UNTYPED_SUM + "\ntl.debug_barrier(1)"))
    expect(code, err, ("rejected", f"kernel.py:32: error: lowering: {BARRIER}"))
    assert triton_refuses(tmp_path, monkeypatch, "tl.debug_barrier(1)", "r31a")


def test_a_type_decided_refusal_alone_keeps_the_verdict_untranslated(tmp_path, capsys):
    """The twin: the keep_dims sum translates with a stand-in element type (a launch's types
    lift the refusal), and the verdict is kept, untranslated."""
    code, err = dump(tmp_path, capsys, untyped(UNTYPED_SUM))
    expect(code, err, "verified")


RESHAPE = "z = tl.reshape(t, [C, 2])"


def test_a_refusal_at_the_probe_value_does_not_hide_a_refusal_after_it(tmp_path, capsys):
    """The reshape of the 64-element tile is refused at C = 16 (a line that reads C, so the
    refusal may be the probe value's), which hid the barrier after it; at C = 32 the reshape
    translates and the barrier is refused."""
    code, err = dump(tmp_path, capsys,
                     without_config(reader_does(RESHAPE + "\ntl.debug_barrier(1)")))
    expect(code, err, ("rejected", f"kernel.py:32: error: lowering: {BARRIER}"))


def test_a_refusal_at_one_probe_value_alone_keeps_the_verdict_untranslated(tmp_path, capsys,
                                                                           monkeypatch):
    """The twin: the reshape alone translates at C = 32, which a launch may give (Triton
    compiles it there), so the kernel keeps its verdict, untranslated; with C given, it is
    checked at that value."""
    code, err = dump(tmp_path, capsys, without_config(reader_does(RESHAPE)))
    expect(code, err, "verified")
    code, err = dump(tmp_path, capsys, without_config(reader_does(RESHAPE)), "--param", "C=32")
    expect(code, err, "verified")
    code, err = dump(tmp_path, capsys, without_config(reader_does(RESHAPE)), "--param", "C=16")
    assert code == 2 and "the element counts differ (64 and 32) (line 31)" in err, err
    assert not triton_refuses(tmp_path, monkeypatch, "z = tl.reshape(t, [32, 2])", "r31r")


# ------------------------------------ bug 2: a refusal at a line reading a stand-in, excused

@pytest.mark.parametrize("stmt", ["x = C; tl.debug_barrier(1)", "tl.debug_barrier(C)"])
def test_a_refusal_beside_a_constexpr_without_a_value_is_not_excused(tmp_path, capsys,
                                                                     monkeypatch, stmt):
    code, err = dump(tmp_path, capsys, without_config(reader_does(stmt)))
    expect(code, err, ("rejected", f"kernel.py:31: error: lowering: {BARRIER}",
                       "the lowering refuses the kernel at each value tried"))
    assert triton_refuses(tmp_path, monkeypatch, stmt, "r31c")


def _reader_with_buffer(stmt: str) -> str:
    """Round 30's kernel of a free buffer `buf`, passed to the reader too, which runs ``stmt``
    after its release."""
    return (FREE_BUFFER.replace("        STMT", f"        {stmt}")
            .replace("consume, (kv, y_ptr, N))", "consume, (kv, y_ptr, N, buf))")
            .replace("def consume(kv, y_ptr, N)", "def consume(kv, y_ptr, N, buf)"))


def test_a_refusal_reading_a_free_buffer_does_not_hide_a_refusal_after_it(tmp_path, capsys):
    """The kernel body's conditional expression of buffers is refused by the translation with
    the buffers' tiles (a conditional expression of tensors), at a line reading a buffer: it
    may be the tile's, and it hid the reader's barrier. Translated again without the lines
    reading a free buffer, the barrier is refused."""
    text = FREE_BUFFER.replace("STMT", "tl.debug_barrier(1)").replace(
        "    buf = tle.gpu.alloc([64], tl.float32)\n",
        "    buf = tle.gpu.alloc([64], tl.float32)\n    b2 = buf if N > 0 else buf\n")
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, ("rejected", f"kernel.py:30: error: lowering: {BARRIER}"))


@pytest.mark.parametrize("stmt", ["_ = (buf, tl.debug_barrier(1))",
                                  "b2 = buf; tl.debug_barrier(1)"])
def test_a_refusal_beside_a_free_buffer_on_its_line_is_not_excused(tmp_path, capsys, stmt):
    """The refused expression (the barrier, found by its column) reads no buffer: a refusal
    whatever the lowering will make of the buffer (the tuple was excused before as one at a line
    reading it, and verified)."""
    code, err = dump(tmp_path, capsys, _reader_with_buffer(stmt))
    expect(code, err, ("rejected", f"kernel.py:29: error: lowering: {BARRIER}"))


def test_a_refusal_reading_a_free_buffer_alone_keeps_the_verdict(tmp_path, capsys):
    """The twin: the conditional expression alone keeps the verdict, untranslated (a refusal at
    a line that reads a buffer, excused: what the lowering will make of the buffer is not known
    yet). (`tl.debug_barrier(buf)`, refused whatever the buffer is, was excused so too; round 33
    rejects it.)"""
    text = FREE_BUFFER.replace("        STMT\n", "").replace(
        "    buf = tle.gpu.alloc([64], tl.float32)\n",
        "    buf = tle.gpu.alloc([64], tl.float32)\n    b2 = buf if N > 0 else buf\n")
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, "verified")
    code, err = dump(tmp_path, capsys, _reader_with_buffer("pass"))
    expect(code, err, "verified")


# -------------------------------- bug 3: a free buffer stopped the probe of a constexpr

def _with_constexpr(text: str) -> str:
    """``text`` (round 30's kernel of a free buffer) with a constexpr C, which nothing gives a
    value, passed to the reader."""
    return (text.replace("def consume(kv, y_ptr, N):", "def consume(kv, y_ptr, N, C: tl.constexpr):")
            .replace("(consume, (kv, y_ptr, N))", "(consume, (kv, y_ptr, N, C))")
            .replace("def k(x_ptr, y_ptr, N):", "def k(x_ptr, y_ptr, N, C: tl.constexpr):"))


def test_a_free_buffer_does_not_stop_the_probe_of_a_constexpr(tmp_path, capsys):
    text = _with_constexpr(FREE_BUFFER.replace("STMT", "tl.debug_barrier(1)"))
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, ("rejected", f"kernel.py:29: error: lowering: {BARRIER}"))
    code, err = dump(tmp_path, capsys, _with_constexpr(FREE_BUFFER.replace("        STMT\n", "")))
    expect(code, err, "verified")


# ----------------------------------- bug 4: min / max that the module binds are Python's own

def _min_ring(bound: str, prelude: str) -> str:
    from .test_adversarial_verdicts_25 import ring

    return ring(wbound=bound, rbound=bound).replace("import triton\n",
                                                     "import triton\n" + prelude, 1)


#: the module's binding of min, the loop bound, and what Triton 3.6 does with the same loop
PYTHON_MIN = {
    "from builtins import min": ("from builtins import min\n", "min(N, 4)"),
    "min = max": ("min = max\n", "min(N, 4)"),
    "min = builtins.min": ("import builtins\nmin = builtins.min\n", "min(N, 4)"),
}

TRITON_MIN = '''import triton
import triton.language as tl
PRELUDE

@triton.jit
def k(x_ptr, N, C: tl.constexpr):
    for i in range(BOUND):
        tl.store(x_ptr + i, 1.0)
'''


def _triton_min(tmp_path, monkeypatch, prelude: str, bound: str, tag: str):
    """What Triton 3.6 does with the loop over ``bound`` in a module that runs ``prelude``. The
    kernel's source is the same whatever the module binds (Triton's cache key does not record a
    builtin's name), so a compiled kernel of another module could answer from the cache: each
    compile gets a cache of its own."""
    from .adversarial_oracles import triton_compile_error

    cache = tmp_path / f"cache_{tag}"
    cache.mkdir(exist_ok=True)
    monkeypatch.setenv("TRITON_CACHE_DIR", str(cache))
    return triton_compile_error(tmp_path, monkeypatch, TRITON_MIN.replace("PRELUDE", prelude)
                                .replace("BOUND", bound), tag)


@pytest.mark.parametrize("case", list(PYTHON_MIN))
def test_a_min_the_module_binds_is_pythons_and_refused_of_a_tensor(tmp_path, capsys,
                                                                   monkeypatch, case):
    """Triton's global lookup comes before its builtin namespace, so a module that binds `min`
    (or reaches builtins.min) hands Python's min the i32 tensor N, which fails; the reading took
    it for Triton's builtin_min (or, after `min = max`, builtin_max) and verified the kernel."""
    prelude, bound = PYTHON_MIN[case]
    code, err = dump(tmp_path, capsys, _min_ring(bound, prelude))
    expect(code, err, ("rejected", "kernel.py:", "is Python's", "[unsupported-expression]"))
    e = _triton_min(tmp_path, monkeypatch, prelude, bound, "r31m")
    assert e is not None and "Did you forget to add @triton.jit" in repr(e), e


@pytest.mark.parametrize("prelude, bound", [
    ("", "min(N, 4)"),  # Triton's own builtin_min
    ("from builtins import min\n", "min(3, 4) + N"),  # Python's, of Python numbers
])
def test_a_min_triton_reads_as_its_own_or_of_numbers_is_verified(tmp_path, capsys, monkeypatch,
                                                                 prelude, bound):
    code, err = dump(tmp_path, capsys, _min_ring(bound, prelude))
    expect(code, err, "verified")
    assert _triton_min(tmp_path, monkeypatch, prelude, bound, "r31n") is None


@pytest.mark.parametrize("bound", ["builtins.min(N, 4)", "builtins.min(3, 4) + N",
                                   "builtins.len((1, 2)) + N"])
def test_a_builtin_called_as_an_attribute_is_refused(tmp_path, capsys, monkeypatch, bound):
    """Triton 3.6's dependency finder refuses `builtins.min` (a function attribute of a module
    other than triton's, math and copy that is no jit function), of numbers too; the reading
    took it for the bare name's builtin."""
    code, err = dump(tmp_path, capsys, _min_ring(bound, "import builtins\n"))
    expect(code, err, ("rejected", "Unsupported function referenced", "[unknown-name]"))
    e = _triton_min(tmp_path, monkeypatch, "import builtins\n", bound, "r31b")
    assert e is not None and "Unsupported function referenced" in repr(e), e


# ------------------------------------ bug 5: kernels Python makes that the reading left out

#: a second kernel, whose writer commits N + 1 items to a reader waiting N (a hang), written
#: below round 25's ring without @tle.jit
LOOSE = '''def k2_(x_ptr, y_ptr, N, C: tl.constexpr):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N + 1, C)), (consume, (kv, y_ptr, N, C))],
                            [4], [232])


'''


def _with_loose(after: str, decorator: str = "") -> str:
    from .test_adversarial_verdicts_25 import ring

    return ring().replace("DEFAULT_CONFIG", decorator + LOOSE + after + "\nDEFAULT_CONFIG")


@pytest.mark.parametrize("after", [
    "ks = [tle.jit(f) for f in [k2_]]",
    "k2 = tle.jit(fn=k2_)",
    "k2 = tle.jit(*[k2_])",
    "ks = list(map(tle.jit, [k2_]))",
    "ks = [tle.jit(num_warps=4)(f) for f in [k2_]]",
    "J = tle.jit\nks = [J(f) for f in [k2_]]",
    "k2 = getattr(tle, 'jit')(k2_)",
    "k2 = tle.jit.__call__(k2_)",
    "import functools\nk2 = functools.partial(tle.jit, num_warps=4)(k2_)",
])
def test_a_kernel_made_of_a_function_the_reading_cannot_name_is_refused(tmp_path, capsys,
                                                                        after):
    """Python makes `k2_` a kernel (a launch lowers it and hangs); the reading took only the
    calls of tle.jit on a function's name (`tle.jit(k2_)`, refused since round 25) and verified
    the file by its other kernel."""
    code, err = dump(tmp_path, capsys, _with_loose(after))
    expect(code, err, ("rejected", "'k2_' calls tle.gpu.warp_specialize without being a "
                       "@tle.jit kernel", "may make a kernel of it that tle-dump cannot name",
                       "[bad-jit]"))


@pytest.mark.parametrize("after", ["", "J = tle.jit", "k3 = tle.jit(lambda x: x)"])
def test_a_function_nothing_makes_a_kernel_is_left_out(tmp_path, capsys, after):
    """The twins: `k2_` is never a kernel (an alias of tle.jit applied to nothing, a kernel of
    another function), so the file's verdict is its kernel's."""
    code, err = dump(tmp_path, capsys, _with_loose(after))
    expect(code, err, "verified")


def test_a_builtin_call_that_returns_the_decorator_is_not_skipped(tmp_path, capsys):
    """`@getattr(tle, 'jit')` is tle.jit: the def under it is a kernel (that hangs). A builtin
    decorator was skipped as one that returns no kernel (`@print`), a call of one too."""
    code, err = dump(tmp_path, capsys, _with_loose("", "@getattr(tle, 'jit')\n"))
    expect(code, err, ("rejected", "under the decorator `@getattr(tle, 'jit')`", "[bad-jit]"))


# -------------------------------- bug 7: a builtin under another name, which Triton cannot read

@pytest.mark.parametrize("prelude, bound, loop", [
    ("from builtins import range as rng\n", "N", "rng"),
    ("rng = range\n", "N", "rng"),
    ("from builtins import min as mn\n", "mn(3, 4) + N", "range"),
    ("mn = min\n", "mn(3, 4) + N", "range"),
    ("I = int\n", "I(3) + N", "range"),
])
def test_a_builtin_under_another_name_is_refused(tmp_path, capsys, monkeypatch, prelude, bound,
                                                 loop):
    """Triton 3.6 reads a module-level name only when it is a tl.constexpr, a module, a jit
    function, a dtype, something of triton.language or a name of its builtin namespace: `rng`
    bound to Python's range is "Cannot access global variable rng", `mn` bound to min
    "Unsupported function referenced". The reading took each for the builtin and verified."""
    text = _min_ring(bound, prelude).replace("for p in range(", f"for p in {loop}(")
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, ("rejected", "under another name, which a Triton 3.6 kernel cannot read",
                       "[unknown-name]"))
    e = _triton_loop(tmp_path, monkeypatch, prelude, f"{loop}({bound})", "r31g")
    assert e is not None and ("Cannot access global variable" in repr(e)
                              or "Unsupported function referenced" in repr(e)), e


def _triton_loop(tmp_path, monkeypatch, prelude: str, loop: str, tag: str):
    """As _triton_min, with the loop's iterator ``loop`` written out."""
    from .adversarial_oracles import triton_compile_error

    cache = tmp_path / f"cache_{tag}"
    cache.mkdir(exist_ok=True)
    monkeypatch.setenv("TRITON_CACHE_DIR", str(cache))
    return triton_compile_error(tmp_path, monkeypatch, TRITON_MIN.replace("PRELUDE", prelude)
                                .replace("range(BOUND)", loop), tag)


@pytest.mark.parametrize("prelude", ["from builtins import range\n", "import builtins\n"])
def test_a_builtin_under_its_own_name_or_a_range_attribute_is_read(tmp_path, capsys, monkeypatch,
                                                                   prelude):
    """The twins: `range` bound to Python's range is the name Triton's lookup takes, and
    `builtins.range` (a type, which the dependency finder lets through) runs the same loop."""
    loop = "builtins.range(N)" if prelude.startswith("import") else "range(N)"
    text = _min_ring("N", prelude).replace("for p in range(N)", f"for p in {loop}")
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, "verified")
    assert _triton_loop(tmp_path, monkeypatch, prelude, loop, "r31i") is None


# ---------------------- bug 8: a free buffer of an element type the lowering has no name for

def _fp8_buffer(stmt: str) -> str:
    """Round 30's kernel of a free buffer, the buffer of tl.float8e4b15 (a type Triton 3.6 takes
    on sm_90, which the lowering has no Gluon name for), the reader running ``stmt``."""
    return (FREE_BUFFER.replace("        STMT", f"        {stmt}")
            .replace("buf = tle.gpu.alloc([64], tl.float32)",
                     "buf = tle.gpu.alloc([64], tl.float8e4b15)")
            .replace("tl.store(tle.gpu.local_ptr(buf), tl.load(x_ptr + tl.arange(0, 64)))",
                     "tl.store(tle.gpu.local_ptr(buf), tl.load(x_ptr + tl.arange(0, 64))"
                     ".to(tl.float8e4b15))"))


def test_a_free_buffer_of_another_element_type_does_not_stop_the_translation(tmp_path, capsys):
    """The stub tile of such a buffer was not made (lowering-not-yet again: nothing learnt), so
    the reader's barrier was verified untranslated."""
    code, err = dump(tmp_path, capsys, _fp8_buffer("tl.debug_barrier(1)"))
    expect(code, err, ("rejected", f"kernel.py:29: error: lowering: {BARRIER}"))
    code, err = dump(tmp_path, capsys, _fp8_buffer("pass"))
    expect(code, err, "verified")


# -------------------------------------- bug 9: fp8 types Triton 3.6 has no IR type of on sm_90

@pytest.mark.parametrize("dtype", ["tl.float8e4b8", "tl.float8e5b16"])
def test_an_fp8_type_sm_90_does_not_have_is_refused(tmp_path, capsys, monkeypatch, dtype):
    stmt = f"u = t.to({dtype})\ntl.store(y_ptr + tl.arange(0, 64), u.to(tl.float32))"
    code, err = dump(tmp_path, capsys, reader_does(stmt))
    expect(code, err, ("rejected", "is not supported on sm_90", "kernel.py:31:"))
    assert triton_refuses(tmp_path, monkeypatch, stmt, "r31f")


@pytest.mark.parametrize("dtype", ["tl.float8e4b15", "tl.float8e4nv", "tl.float8e5"])
def test_an_fp8_type_sm_90_has_is_verified(tmp_path, capsys, monkeypatch, dtype):
    stmt = f"u = t.to({dtype})\ntl.store(y_ptr + tl.arange(0, 64), u.to(tl.float32))"
    code, err = dump(tmp_path, capsys, reader_does(stmt))
    expect(code, err, "verified")
    assert not triton_refuses(tmp_path, monkeypatch, stmt, "r31g")


# ------------------------------------------- bug 10: rounding modes Triton 3.6 refuses in a cast

@pytest.mark.parametrize("stmt, words", [
    ('u = t.to(tl.float16, fp_downcast_rounding="rtn")', "supports the rounding modes"),
    ('u = t.to(tl.float64, fp_downcast_rounding="rtz")', "only for a float narrowed to a float"),
    ('u = t.to(tl.int32, fp_downcast_rounding="rtz")', "only for a float narrowed to a float"),
])
def test_a_rounding_mode_triton_refuses_is_refused(tmp_path, capsys, monkeypatch, stmt, words):
    code, err = dump(tmp_path, capsys, reader_does(stmt))
    expect(code, err, ("rejected", "kernel.py:31: error: lowering: fp_downcast_rounding=", words))
    assert triton_refuses(tmp_path, monkeypatch, stmt, "r31r")


@pytest.mark.parametrize("stmt", ['u = t.to(tl.float16, fp_downcast_rounding="rtz")',
                                  'u = t.to(tl.bfloat16, fp_downcast_rounding="rtne")',
                                  # (float8e4nv until round 37: Triton compiled it only
                                  # because `u` is unused; stored, its LLVM lowering fails)
                                  'u = t.to(tl.float8e5, fp_downcast_rounding="rtz")'])
def test_a_rounding_mode_of_a_narrowing_is_verified(tmp_path, capsys, monkeypatch, stmt):
    code, err = dump(tmp_path, capsys, reader_does(stmt))
    expect(code, err, "verified")
    assert not triton_refuses(tmp_path, monkeypatch, stmt, "r31s")


@pytest.mark.parametrize("stmt,want", [
    ("u = t.to(tl.float8e4b15) + t.to(tl.float8e4b15)", ("rejected", "computed in float8e4b15")),
    ("u = t.to(tl.float8e4b15) * 2.0", ("rejected", "computed in float8e4b15")),
    ("u = t.to(tl.float8e4b15)", "verified"),
], ids=["sum", "product", "conversion"])
def test_float8e4b15_arithmetic_is_refused_as_every_fp8_type(tmp_path, capsys, monkeypatch, stmt,
                                                             want):
    """Triton 3.6 does no arithmetic in any fp8 type, float8e4b15 (named "fp8e4b15") included;
    the conversions compile."""
    code, err = dump(tmp_path, capsys, reader_does(stmt))
    expect(code, err, want)
    assert triton_refuses(tmp_path, monkeypatch, f"{stmt}\n"
                          "tl.store(x_ptr + tl.arange(0, 64), u.to(tl.float32))",
                          "e4b15" + str(len(stmt))) is (want != "verified")
