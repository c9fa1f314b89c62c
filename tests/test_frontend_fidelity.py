"""The frontend reads kernels exactly as Triton runs them.

Each test holds a kernel that an earlier frontend misread (integer semantics, loop forms, param
signs, control flow Triton rejects, pipe verbs used as values, aliased buffers, reader views) and
checks the reading now matches Triton's, down to the verifier's verdict where that differs.
"""

from __future__ import annotations

import textwrap

import pytest

from tle_compiler.diagnostics import TleError
from tle_compiler.frontend import read_kernels, read_source
from tle_compiler.ir import Affine, For, If, ModCompare, walk_events
from tle_compiler.ir.printer import print_program
from tle_compiler.passes import verify

HEAD = '''\
import triton.language as tl
import tle_compiler as tle

'''


def kernel(body: str) -> str:
    """A kernel file: HEAD, then ``body`` (dedented)."""
    return HEAD + textwrap.dedent(body)


def read_one(text: str, path: str = "k.py"):
    (prog,) = read_source(text, path).kernels
    return prog


def line_with(text: str, needle: str, nth: int = 0) -> int:
    hits = [i for i, line in enumerate(text.splitlines(), 1) if needle in line]
    assert len(hits) > nth, f"{needle!r} not in the kernel"
    return hits[nth]


def read_error(text: str, needle: str, path: str = "k.py") -> TleError:
    """Reading ``text`` fails at the line containing ``needle``."""
    with pytest.raises(TleError) as ei:
        read_source(text, path)
    err = ei.value
    assert err.loc is not None and (err.loc.file, err.loc.line) == (path, line_with(text, needle)), \
        f"reported at {err.loc}: {err.message}"
    return err


def errors_of(prog) -> list:
    return [(d.check, d.message) for d in verify(prog).errors]


def first(body, kind):
    """The first statement of type ``kind`` in ``body``, searching loops and ifs."""
    for s in body:
        if isinstance(s, kind):
            return s
        inner = s.body if isinstance(s, For) else (s.then + s.orelse if isinstance(s, If) else ())
        found = first(inner, kind)
        if found is not None:
            return found
    return None


def events_of(body) -> list[str]:
    return [f"{e.verb}({e.index})" for e in walk_events(body)]


def loop(body) -> For:
    """The first loop in ``body``."""
    f = first(body, For)
    assert f is not None
    return f


SPSC = '''
@tle.jit
def k(N, M: tl.constexpr):
    p = tle.pipe(capacity=1, x=tle.gpu.alloc([1, 16], tl.float32))
    tle.gpu.warp_specialize([(prod, (p, N, M)), (cons, (p, N, M))], [4], [200])

'''


def spsc(prod: str, cons: str, head: str = SPSC) -> str:
    """A two-partition SPSC kernel with the given partition bodies (``p``, ``N``, ``M`` in scope;
    ``M`` is a constexpr)."""
    return kernel(head + "def prod(p, N, M):\n" + textwrap.indent(textwrap.dedent(prod), "    ")
                  + "\n\ndef cons(p, N, M):\n" + textwrap.indent(textwrap.dedent(cons), "    "))


# -- 1. `%` and `//`: C semantics on runtime integers, Python semantics on constexprs -------------

def test_remainder_of_a_runtime_loop_variable_that_may_be_negative_is_c_remainder():
    text = spsc('''
        w = p.writer()
        w.acquire(0)
        w.commit(0)
    ''', '''
        r = p.reader()
        for j in range(-2, 0):
            if j % 2 == 1:
                r.wait(0)
                r.release(0)
    ''')
    prog = read_one(text)
    cond = first(prog.partitions[1].body, If).cond
    assert cond == ModCompare(Affine.of("j"), 2, "==", 1, c=True)
    assert str(cond) == "rem(j, 2) == 1"
    # Triton computes rem(-1, 2) = -1: the reader never waits, the committed slot is unconsumed.
    # Read with Python's % (-1 % 2 == 1) the protocol would look correct.
    assert any(check == "unconsumed" for check, _ in errors_of(prog))


def test_remainder_of_a_static_range_variable_is_python_modulo():
    text = spsc('''
        w = p.writer()
        w.acquire(0)
        w.commit(0)
    ''', '''
        r = p.reader()
        for j in tl.static_range(-2, 0):
            if j % 2 == 1:
                r.wait(0)
                r.release(0)
    ''')
    prog = read_one(text)
    assert first(prog.partitions[1].body, If).cond == ModCompare(Affine.of("j"), 2, "==", 1)
    assert errors_of(prog) == []  # j = -1 is a constexpr: -1 % 2 == 1, the reader waits once


def test_remainder_of_a_runtime_value_proved_non_negative_keeps_the_python_form():
    text = spsc('''
        w = p.writer()
        for i in range(3, N + 3):
            w.acquire(i)
            w.commit(i)
    ''', '''
        r = p.reader()
        for i in tl.range(3, N + 3):
            if i % 2 == 0:
                r.wait(i)
                r.release(i)
            else:
                r.wait(i)
                r.release(i)
    ''')
    prog = read_one(text)
    cond = first(prog.partitions[1].body, If).cond
    assert cond == ModCompare(Affine.of("i"), 2, "==", 0) and str(cond) == "i % 2 == 0"


def test_remainder_of_a_constexpr_argument_is_python_modulo():
    text = spsc('''
        w = p.writer()
        if (M - 5) % 4 == 3:
            w.acquire(0)
            w.commit(0)
    ''', '''
        r = p.reader()
        if (M - 5) % 4 == 3:
            r.wait(0)
            r.release(0)
    ''')
    cond = read_one(text).partitions[0].body[0].cond
    assert isinstance(cond, ModCompare) and not cond.c


def test_nested_loop_variable_bounds_decide_the_remainder_form():
    # j ranges over [i - 1, i + 1) with i >= 0: j may be -1, so rem(j, 2) is C's
    text = spsc('''
        w = p.writer()
        for i in range(N):
            for j in range(i - 1, i + 1):
                if j % 2 == 0:
                    w.acquire(2 * i + j + 1)
                    w.commit(2 * i + j + 1)
    ''', '''
        r = p.reader()
    ''')
    cond = first(read_one(text).partitions[0].body, If).cond
    assert cond.c and str(cond) == "rem(j, 2) == 0"


def test_negative_step_loop_variable_is_bounded_by_its_stop():
    # range(N, -1, -1) runs i = N .. 0: i >= 0, so Python's and C's remainders agree
    text = spsc('''
        w = p.writer()
        for i in range(N, -1, -1):
            if i % 2 == 0:
                w.acquire(0)
                w.commit(0)
    ''', '''
        r = p.reader()
    ''')
    assert not first(read_one(text).partitions[0].body, If).cond.c


RUNTIME_FOLD = '''
@tle.jit
def k(N, M: tl.constexpr):
    SPAN = (N - 1) - (N + 2)           # runtime: -3, computed by the GPU
    SHIFT = SPAN // 2                  # arith.divsi: -1 (Python's floor would give -2)
    CSPAN: tl.constexpr = (M - 1) - (M + 2)  # constexpr: -3, a Python int
    CSHIFT = CSPAN // 2                # Python's floor: -2
    p = tle.pipe(capacity=1, x=tle.gpu.alloc([1, 16], tl.float32))
    tle.gpu.warp_specialize([(prod, (p, SHIFT, CSHIFT)), (cons, (p, SHIFT, CSHIFT))], [4], [200])


def prod(p, SHIFT, CSHIFT):
    w = p.writer()
    w.acquire(SHIFT + 1)
    w.commit(SHIFT + 1)
    w.acquire(CSHIFT + 2)
    w.commit(CSHIFT + 2)
    for i in range(4):
        j = i - i - 7
        w.acquire(j % 4 + 4)           # arith.remsi(-7, 4) = -3: index 1
        w.commit(j % 4 + 4)


def cons(p, SHIFT, CSHIFT):
    pass
'''


def test_constant_folding_of_runtime_integers_uses_c_division_and_remainder():
    prog = read_one(kernel(RUNTIME_FOLD))
    assert [str(e.index) for e in walk_events(prog.partitions[0].body)] == \
        ["0", "0", "0", "0", "1", "1"]


def test_a_plain_assigned_span_divided_and_handed_over_is_refused():
    """`CSPAN = (M - 1) - (M + 2)` without the annotation is an i32 tensor in Triton (a plain
    assignment), so `CSPAN // 2` is C's -1, where this test read Python's -2 (as the constexpr
    above) until lowering adversarial round 11: handed to a partition, it is refused now."""
    text = RUNTIME_FOLD.replace("CSPAN: tl.constexpr = (M - 1)", "CSPAN = (M - 1)")
    with pytest.raises(TleError, match="is handed to a partition"):
        read_one(kernel(text))


# -- 2. loops: range / tl.range / tl.static_range arguments bound as Triton binds them -------------

@pytest.mark.parametrize("header", [
    "tl.range(0, 2 * N, step=2)",
    "tl.range(0, 2 * N, 2, num_stages=None)",
    "tl.range(arg1=0, arg2=2 * N, step=2)",
    "tl.range(0, 2 * N, 2, None)",                  # num_stages positionally, at its default
    "range(0, 2 * N, 2)",
])
def test_range_steps_are_read_in_every_form(header):
    text = spsc(f'''
        w = p.writer()
        for i in {header}:
            w.acquire(i)
            w.commit(i)
            w.acquire(i + 1)
            w.commit(i + 1)
    ''', '''
        r = p.reader()
        for i in range(2 * N):
            r.wait(i)
            r.release(i)
    ''')
    prog = read_one(text)
    f = loop(prog.partitions[0].body)
    assert (str(f.start), str(f.stop), f.step) == ("0", "2*N", 2)
    # read with step 1, the writer would acquire i + 1 while i + 1 is still open
    assert errors_of(prog) == []


def test_static_range_keyword_arguments():
    text = spsc('''
        w = p.writer()
        for i in tl.static_range(1, 7, step=3):
            w.acquire(i)
            w.commit(i)
    ''', "pass\n")
    f = loop(read_one(text).partitions[0].body)
    assert (str(f.start), str(f.stop), f.step) == ("1", "7", 3)


def test_single_argument_tl_range_with_options_counts_from_zero():
    text = spsc('''
        w = p.writer()
        for i in tl.range(N, num_stages=None, loop_unroll_factor=None, disable_licm=False):
            w.acquire(i)
            w.commit(i)
    ''', "pass\n")
    f = loop(read_one(text).partitions[0].body)
    assert (str(f.start), str(f.stop), f.step) == ("0", "N", 1)


@pytest.mark.parametrize("header,option", [
    ("tl.range(0, 2 * N, 2, num_stages=3)", "num_stages=3"),
    ("tl.range(0, 2 * N, 2, 2)", "num_stages=2"),
    ("tl.range(N, loop_unroll_factor=2)", "loop_unroll_factor=2"),
    ("tl.range(N, disable_licm=True)", "disable_licm=True"),
])
def test_tl_range_options_the_lowering_refuses_are_read_errors(header, option):
    """A tl.range option at a value other than its default is refused when the kernel is read
    (check bad-loop, at the loop), with the lowering's message: the lowering cannot honour it,
    so a verdict on the kernel would be on one the compiler refuses."""
    text = spsc(f'''
        w = p.writer()
        for i in {header}:
            w.acquire(i)
            w.commit(i)
    ''', "pass\n")
    e = read_error(text, f"for i in {header}:")
    assert e.check == "bad-loop" and f"tl.range(..., {option}) is not supported by the " \
        f"lowering" in e.message


def test_negative_constant_step_runs_like_python():
    text = spsc('''
        w = p.writer()
        for i in tl.range(N - 1, -1, -1):
            w.acquire(N - 1 - i)
            w.commit(N - 1 - i)
    ''', '''
        r = p.reader()
        for i in range(N):
            r.wait(i)
            r.release(i)
    ''')
    prog = read_one(text)
    f = loop(prog.partitions[0].body)
    assert (str(f.start), str(f.stop), f.step) == ("N - 1", "-1", -1)
    assert errors_of(prog) == []


@pytest.mark.parametrize("header, needle, message", [
    ("for i in range(0, N, 0):", "for i", "must be a non-zero integer, got 0"),
    ("for i in tl.range(0, N, step=0):", "for i", "must be a non-zero integer, got 0"),
    ("for i in range(0, N, step=2):", "for i", "Python's range takes no keyword arguments"),
    ("for i in tl.range(0, N, stride=2):", "for i", "has no argument 'stride'"),
    ("for i in tl.range(start=0, stop=N):", "for i", "has no argument 'start'"),
    ("for i in tl.static_range(0, 4, 1, 2):", "for i", "at most 3 positional arguments"),
    ("for i in tl.range(0, N, arg2=4):", "for i", "got two values for 'arg2'"),
    ("for i in range(0, 1, 2, 3):", "for i", "range takes 1 to 3 arguments"),
])
def test_loop_headers_triton_rejects_are_errors_even_without_events(header, needle, message):
    text = spsc(f'''
        x = 0
        {header}
            x = x + 1
    ''', "pass\n")
    err = read_error(text, needle)
    assert message in err.message


def test_non_constant_step_of_a_loop_with_events_is_an_error_naming_it():
    text = spsc('''
        w = p.writer()
        for i in tl.range(0, N, step=N):
            w.acquire(i)
            w.commit(i)
    ''', "pass\n")
    err = read_error(text, "for i in")
    assert "the step of `tl.range(0, N, step=N)` must be a non-zero integer literal or " \
           "constant, got `N`" in err.message


def test_non_constant_step_of_a_loop_without_events_is_fine():
    text = spsc('''
        w = p.writer()
        x = 0
        for i in tl.range(0, N, step=N):
            x = x + i
        w.acquire(0)
        w.commit(0)
    ''', "pass\n")
    assert events_of(read_one(text).partitions[0].body) == ["acquire(0)", "commit(0)"]


# -- 3. params range over every integer unless the kernel states a domain -------------------------

NEGATIVE_ONLY = '''
@tle.jit
def k(N):
{assume}    p = tle.pipe(capacity=1, x=tle.gpu.alloc([1, 16], tl.float32))
    tle.gpu.warp_specialize([(prod, (p, N)), (cons, (p, N))], [4], [200])


def prod(p, N):
    w = p.writer()
    for i in range(N):
        w.acquire(i)
        w.commit(i)


def cons(p, N):
    r = p.reader()
    if N != 0:
        for i in range(N):
            r.wait(i)
            r.release(i)
        if N < 0:
            r.wait(0)
            r.release(0)
'''


@pytest.mark.parametrize("assume, verified", [
    ("", False),                                     # every integer: N = -1 hangs the reader
    ("tle.assume(N >= 0)", True),
    ("tle.assume(N > -1)", True),
    ("tle.assume(-1 < N)", True),                    # the param on the right
    ("tle.assume(0 <= N <= 64)", True),              # a chain
    ("tle.assume(N >= 0 and N < 100)", True),        # a conjunction
    ("tle.assume(N == 3)", True),
    ("tle.assume(N >= -1)", False),                  # still admits N = -1
    ("tle.assume(N <= 64)", False),
])
def test_a_protocol_wrong_only_for_negative_values_needs_an_assumption(assume, verified):
    text = kernel(NEGATIVE_ONLY.format(assume=f"    {assume}\n" if assume else ""))
    prog = read_one(text)
    errors = verify(prog).errors
    if verified:
        assert errors == [], [str(d) for d in errors]
    else:
        assert errors and any("N=-1" in d.message for d in errors), [str(d) for d in errors]


def test_params_range_over_every_integer_by_default():
    prog = read_one(kernel(NEGATIVE_ONLY.format(assume="")))
    (n,) = prog.params
    assert (n.name, n.min, n.max) == ("N", None, None)
    assert "param N any" in print_program(prog)


@pytest.mark.parametrize("assume, domain", [
    ("tle.assume(N >= 0)", (0, None)),
    ("tle.assume(1 <= N <= 64)", (1, 64)),
    ("tle.assume(N < 100)", (None, 99)),
    ("tle.assume(N >= 2)\n    tle.assume(N <= 9)", (2, 9)),      # several statements intersect
    ("tle.assume(N >= 2 * BK)", (128, None)),                      # constants may be expressions
])
def test_assumptions_set_the_param_domain(assume, domain):
    text = kernel("BK = 64\n" + NEGATIVE_ONLY.format(assume=f"    {assume}\n"))
    (n,) = read_one(text).params
    assert (n.min, n.max) == domain


def test_program_ids_and_counts_have_known_domains():
    text = kernel('''
        @tle.jit
        def k(N):
            pid = tl.program_id(0)
            n = tl.num_programs(0)
            p = tle.pipe(capacity=1, x=tle.gpu.alloc([1, 16], tl.float32))
            tle.gpu.warp_specialize([(prod, (p, pid, n)), (cons, (p, N))], [4], [200])


        def prod(p, pid, n):
            w = p.writer()
            for i in range(pid, pid + n):
                w.acquire(i)
                w.commit(i)


        def cons(p, N):
            pass
    ''')
    assert [(q.name, q.min, q.max) for q in read_one(text).params] == \
        [("pid", 0, None), ("n", 1, None)]


def test_a_runtime_remainder_of_a_param_is_c_unless_assumed_non_negative():
    body = NEGATIVE_ONLY.replace("    if N != 0:", "    if N % 2 == 1:")
    plain = read_one(kernel(body.format(assume="")))
    assert str(plain.partitions[1].body[0].cond) == "rem(N, 2) == 1"
    assumed = read_one(kernel(body.format(assume="    tle.assume(N >= 0)\n")))
    assert str(assumed.partitions[1].body[0].cond) == "N % 2 == 1"


def test_kernel_info_records_param_origins_and_assumptions():
    text = kernel('''
        @tle.jit
        def k(x_ptr, N, M: tl.constexpr):
            NK = tl.cdiv(N, 64)
            tle.assume(N >= 0)
            tle.assume(1 <= M <= 8 and NK < 1000)
            p = tle.pipe(capacity=1, x=tle.gpu.alloc([1, 16], tl.float32))
            tle.gpu.warp_specialize([(prod, (p, N, M, NK)), (cons, (p, N))], [4], [200])


        def prod(p, N, M, NK):
            w = p.writer()
            for i in range(N + M + NK):
                w.acquire(i)
                w.commit(i)


        def cons(p, N):
            pass
    ''')
    (info,) = read_kernels("k.py", text=text)
    assert info.param_args == {"N": "N", "M": "M"}  # NK is a kernel-level value, no argument
    got = [(a.param, a.arg, a.min, a.max, a.loc.line) for a in info.assumptions]
    assert got == [("N", "N", 0, None, line_with(text, "tle.assume(N >= 0)")),
                   ("M", "M", 1, 8, line_with(text, "tle.assume(1 <= M")),
                   ("NK", None, None, 999, line_with(text, "tle.assume(1 <= M"))]
    assert info.assumptions[1].text == "tle.assume(1 <= M <= 8 and NK < 1000)"
    assert [(q.name, q.min, q.max) for q in info.program.params] == \
        [("N", 0, None), ("M", 1, 8), ("NK", None, 999)]


def test_a_specialised_constexpr_is_checked_against_its_assumption():
    text = kernel('''
        @tle.jit
        def k(N, M: tl.constexpr):
            tle.assume(M >= 4)
            p = tle.pipe(capacity=1, x=tle.gpu.alloc([1, 16], tl.float32))
            tle.gpu.warp_specialize([(prod, (p, N)), (cons, (p, N))], [4], [200])


        def prod(p, N):
            pass


        def cons(p, N):
            pass
    ''')
    read_kernels("k.py", text=text, bind={"M": 4})
    with pytest.raises(TleError, match="does not hold") as ei:
        read_kernels("k.py", text=text, bind={"M": 2})
    assert ei.value.loc.line == line_with(text, "tle.assume(M >= 4)")


ASSUME_ERRORS = {
    "not-a-comparison": ("tle.assume(N)", "is not a comparison"),
    "or": ("tle.assume(N >= 0 or N < -5)", "is not a comparison"),
    "not-equal": ("tle.assume(N != 0)", "does not bound a param"),
    "two-params": ("tle.assume(N <= M)", "compares two params"),
    # (an affine expression of one param, N - 1 >= 0, bounds that param: tests/test_assume_affine.py)
    "expression": ("tle.assume(N + M >= 0)", "`N + M` is neither a param"),
    "data": ("tle.assume(tl.load(x_ptr) >= 0)", "is neither a param"),
    "empty": ("tle.assume(N >= 5 and N < 5)", "leaves no value of N"),
    "false-constant": ("tle.assume(BK < 0)", "does not hold"),
    "two-arguments": ("tle.assume(N >= 0, M >= 0)", "takes one condition"),
    "nested": ("if N > 0:\n        tle.assume(M >= 0)", "top level of the kernel body"),
    "in-expression": ("x = tle.assume(N >= 0)", "top level of the kernel body"),
}


@pytest.mark.parametrize("case", sorted(ASSUME_ERRORS))
def test_assume_misuse_is_an_error_at_its_line(case):
    stmt, message = ASSUME_ERRORS[case]
    text = kernel(f'''
BK = 64


@tle.jit
def k(x_ptr, N, M):
    {stmt}
    p = tle.pipe(capacity=1, x=tle.gpu.alloc([1, 16], tl.float32))
    tle.gpu.warp_specialize([(prod, (p, N)), (cons, (p, N))], [4], [200])


def prod(p, N):
    pass


def cons(p, N):
    pass
''')
    err = read_error(text, "tle.assume(")
    assert message in err.message and err.check == "bad-assume"


@pytest.mark.parametrize("where, needle", [
    ("partition", "tle.assume(N >= 0)  # in prod"),
    ("after-warp-specialize", "tle.assume(N >= 0)  # after"),
])
def test_assume_outside_the_kernel_prologue_is_an_error(where, needle):
    text = kernel(f'''
@tle.jit
def k(N):
    p = tle.pipe(capacity=1, x=tle.gpu.alloc([1, 16], tl.float32))
    tle.gpu.warp_specialize([(prod, (p, N)), (cons, (p, N))], [4], [200])
    {"tle.assume(N >= 0)  # after" if where == "after-warp-specialize" else "pass"}


def prod(p, N):
    {"tle.assume(N >= 0)  # in prod" if where == "partition" else "pass"}


def cons(p, N):
    pass
''')
    assert "top level of the kernel body" in read_error(text, needle).message


def test_assume_imported_by_name_is_recognised():
    text = ("import triton.language as tl\nimport tle_compiler as tle\n"
            "from tle_compiler import assume\n"
            + NEGATIVE_ONLY.format(assume="    assume(N >= 0)\n"))
    assert read_one(text).params[0].min == 0


def test_assume_as_plain_python_raises():
    import tle_compiler as tle
    with pytest.raises(TleError, match="tle.assume is only meaningful inside a @tle.jit kernel"):
        tle.assume(True)


def load_kernel(tmp_path, text: str, name: str = "k"):
    """The @tle.jit kernel ``name`` of a module written from ``text``."""
    import importlib.util

    path = tmp_path / "assumed_kernel.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("assumed_kernel", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, name), path


LAUNCHED = kernel('''
@tle.jit
def k(x_ptr, N, M: tl.constexpr):
    tle.assume(N >= 0)
    tle.assume(M <= 8)
    p = tle.pipe(capacity=1, x=tle.gpu.alloc([1, 16], tl.float32))
    tle.gpu.warp_specialize([(prod, (p, N)), (cons, (p, N))], [4], [200])


def prod(p, N):
    w = p.writer()
    for i in range(N):
        w.acquire(i)
        w.commit(i)


def cons(p, N):
    r = p.reader()
    for i in range(N):
        r.wait(i)
        r.release(i)
''')


@pytest.mark.parametrize("args, kwargs, message", [
    ((0, -1), {"M": 4}, "argument N = -1 violates `tle.assume(N >= 0)`"),
    ((0, 3), {"M": 9}, "argument M = 9 violates `tle.assume(M <= 8)`"),
    ((0,), {"N": 2.5, "M": 4}, "argument N is bounded by `tle.assume(N >= 0)`"),
])
def test_a_launch_outside_the_assumptions_is_refused(tmp_path, args, kwargs, message):
    k, path = load_kernel(tmp_path, LAUNCHED)
    with pytest.raises(ValueError) as ei:
        k[(1,)](*args, **kwargs)
    assert message in str(ei.value)
    needle = message.split("`")[1]
    assert f"{path}:{line_with(LAUNCHED, needle)}" in str(ei.value)


def test_a_launch_inside_the_assumptions_passes_the_check(tmp_path):
    k, _ = load_kernel(tmp_path, LAUNCHED)
    rt = k.runtime
    rt.check_assumptions(rt.bind((0, 0), {"M": 8}))
    rt.check_assumptions(rt.bind((0, 1000), {"M": -3}))


def test_a_kernel_verified_per_specialisation_checks_its_assumptions_at_launch(tmp_path):
    from pathlib import Path

    fixture = Path(__file__).parent / "fixtures" / "persistent_rounds.py"
    text = fixture.read_text().replace("    NP = TOPK // 128\n",
                                       "    NP = TOPK // 128\n    tle.assume(ROUNDS >= 0)\n")
    k, _ = load_kernel(tmp_path, text)
    with pytest.raises(ValueError, match="argument ROUNDS = -1 violates `tle.assume"):
        k[(1,)](0, -1, TOPK=512)
    assert k.runtime._specialized  # read with TOPK bound: `r * NP + p` is affine only then


@pytest.mark.parametrize("spelling", ["tle.assume(N >= 0)", "assume(N >= 0)"])
def test_the_lowering_emits_nothing_for_an_assumption(tmp_path, spelling):
    pytest.importorskip("triton.experimental.gluon")
    from tle_compiler.lowering import gluon_source

    text = LAUNCHED.replace("    tle.assume(N >= 0)\n", f"    {spelling}\n").replace(
        "import tle_compiler as tle\n", "import tle_compiler as tle\nfrom tle_compiler import assume\n")
    path = tmp_path / "k.py"
    path.write_text(text)
    src = gluon_source((str(path), "k"), {"M": 4}).source
    assert "assume" not in src and "def prod(" in src


# -- 4. loop else, break and continue: Triton rejects them ----------------------------------------

LOOP_ELSE_CASES = {
    "for-else-in-partition": ("""
        w = p.writer()
        for i in range(N):
            w.acquire(i)
            w.commit(i)
        else:
            w.close(N)
    """, "for i in", "`for ... else` is not supported"),
    "static-range-else": ("""
        w = p.writer()
        for i in tl.static_range(2):
            w.acquire(i)
            w.commit(i)
        else:
            w.close(2)
    """, "for i in", "`for ... else` is not supported"),
    "for-else-without-events": ("""
        x = 0
        for i in range(N):
            x = x + i
        else:
            x = 0
    """, "for i in", "`for ... else` is not supported"),
    "while-else": ("""
        i = 0
        while i < N:
            i = i + 1
        else:
            i = 0
    """, "while i", "`while ... else` is not supported"),
    "break": ("""
        w = p.writer()
        for i in range(N):
            w.acquire(i)
            w.commit(i)
            if i == 3:
                break
    """, "break", "`break` is not supported"),
    "continue-without-events": ("""
        x = 0
        for i in range(N):
            if i == 3:
                continue
            x = x + i
    """, "continue", "`continue` is not supported"),
}


@pytest.mark.parametrize("case", sorted(LOOP_ELSE_CASES))
def test_loop_else_break_and_continue_are_rejected_in_partitions(case):
    body, needle, message = LOOP_ELSE_CASES[case]
    err = read_error(spsc(body, "pass\n"), needle)
    assert message in err.message


def test_a_loop_else_is_refused_with_tritons_reason():
    # the old reading ran a for's else unconditionally after the loop: here that would have been
    # a well-formed close(N), which Triton never runs; now the kernel is refused, not misread
    body, needle, _ = LOOP_ELSE_CASES["for-else-in-partition"]
    with pytest.raises(TleError, match="Don't know what to do with else after for"):
        read_source(spsc(body, "pass\n"))


def test_break_in_an_inlined_helper_is_rejected_at_its_line():
    text = spsc('''
        w = p.writer()
        for i in range(N):
            put(w, i)
    ''', "pass\n") + textwrap.dedent('''

        def put(w, i):
            for j in range(2):
                w.acquire(2 * i + j)
                w.commit(2 * i + j)
                if j == 1:
                    break
    ''')
    assert "`break` is not supported" in read_error(text, "break").message


def test_loop_else_in_the_kernel_body_is_rejected():
    text = kernel('''
        @tle.jit
        def k(N):
            total = 0
            for i in range(N):
                total = total + i
            else:
                total = 0
            p = tle.pipe(capacity=1, x=tle.gpu.alloc([1, 16], tl.float32))
            tle.gpu.warp_specialize([(prod, (p, N)), (cons, (p, N))], [4], [200])


        def prod(p, N):
            pass


        def cons(p, N):
            pass
    ''')
    assert "`for ... else` is not supported" in read_error(text, "for i in").message


# -- 5. pipe verbs are called directly on their handle ----------------------------------------------

CALLBACK_CASES = {
    "verb-as-argument": ("""
        w = p.writer()
        for i in range(N):
            w.acquire(i)
            notify(w.commit, i)
    """, "notify(w.commit", "`w.commit` is used as a value"),
    "verb-in-a-variable": ("""
        w = p.writer()
        f = w.acquire
        f(0)
    """, "f = w.acquire", "`w.acquire` is used as a value"),
    "verb-in-a-tuple": ("""
        w = p.writer()
        verbs = (w.acquire, w.commit)
    """, "verbs = (", "`w.acquire` is used as a value"),
    "handle-factory-as-value": ("""
        make = p.writer
    """, "make = p.writer", "`p.writer` is used as a value"),
    "reader-verb-as-value": ("""
        r = p.reader()
        release = r.release
    """, "release = r.release", "`r.release` is used as a value"),
}


@pytest.mark.parametrize("case", sorted(CALLBACK_CASES))
def test_pipe_verbs_used_as_values_are_rejected(case):
    body, needle, message = CALLBACK_CASES[case]
    text = spsc(body, "pass\n") + "\n\ndef notify(f, i):\n    f(i)\n"
    err = read_error(text, needle)
    assert message in err.message and err.check == "verb-as-value"


def test_callback_release_is_not_dropped_from_the_protocol():
    # before: the release through the callback was dropped by the frontend (the reader looked
    # like it never releases), while the lowering emitted it; now the kernel is refused
    text = spsc('''
        w = p.writer()
        for i in range(N):
            w.acquire(i)
            w.commit(i)
    ''', '''
        r = p.reader()
        for i in range(N):
            r.wait(i)
            notify(r.release, i)
    ''') + "\n\ndef notify(f, i):\n    f(i)\n"
    read_error(text, "notify(r.release")


# -- 6. one buffer is at most one pipe field -----------------------------------------------------

def two_pipes(decls: str) -> str:
    """A kernel declaring ``buf`` and then the pipes of ``decls`` (``p`` among them)."""
    return (HEAD + "@tle.jit\ndef k(N):\n    buf = tle.gpu.alloc([1, 16], tl.float32)\n"
            + textwrap.indent(textwrap.dedent(decls), "    ")
            + "    tle.gpu.warp_specialize([(prod, (p, N)), (cons, (p, N))], [4], [200])\n\n\n"
            "def prod(p, N):\n    pass\n\n\ndef cons(p, N):\n    pass\n")


def test_a_buffer_that_is_a_field_of_two_pipes_is_rejected_at_the_second():
    text = two_pipes('''
        p = tle.pipe(capacity=1, x=buf)
        q = tle.pipe(capacity=1, y=buf)
    ''')
    err = read_error(text, "y=buf")
    assert err.check == "aliased-buffer"
    assert f"already field 'x' of pipe 'p' (line {line_with(text, 'x=buf')})" in err.message
    assert f"tle.gpu.alloc at line {line_with(text, 'buf = tle.gpu.alloc')}" in err.message


def test_a_buffer_twice_in_one_pipe_is_rejected():
    text = two_pipes('''
        p = tle.pipe(capacity=1, x=buf,
                     y=buf)
    ''')
    err = read_error(text, "y=buf")
    assert "already field 'x' of pipe 'p'" in err.message


def test_buffers_of_equal_shape_from_different_allocs_are_distinct():
    text = two_pipes('''
        other = tle.gpu.alloc([1, 16], tl.float32)
        p = tle.pipe(capacity=1, x=buf, y=other)
        q = tle.pipe(capacity=1, z=tle.gpu.alloc([1, 16], tl.float32))
    ''')
    assert [p.fields for p in read_one(text).pipes] == [("x", "y"), ("z",)]


# -- 7. all handles of one reader see the same fields ---------------------------------------------

SPMC = '''
@tle.jit
def k(N):
    p = tle.pipe(capacity=2, readers=("a", "b"), x=tle.gpu.alloc([2, 16], tl.float32),
                 y=tle.gpu.alloc([2, 16], tl.float32))
    tle.gpu.warp_specialize([(prod, (p, N)), (ra, (p.reader("a", fields=("x",)), p, N)),
                             (rb, (p, N))], [4, 4], [200, 200])


def prod(p, N):
    w = p.writer()
    for i in range(N):
        w.acquire(i)
        w.commit(i)


def rb(p, N):
    r = p.reader("b")
    for i in range(N):
        r.wait(i)
        r.release(i)


def ra(first, p, N):
'''


def test_a_second_reader_handle_with_a_wider_view_is_rejected_naming_both_lines():
    text = kernel(SPMC + textwrap.indent(textwrap.dedent('''
        second = p.reader("a")
        for i in range(N):
            res = first.wait(i)
            v = tl.load(tle.gpu.local_ptr(res.slot.x))
            first.release(i)
    '''), "    "))
    err = read_error(text, 'second = p.reader("a")')
    assert err.check == "inconsistent-view"
    first_line = line_with(text, 'p.reader("a", fields')
    assert (f"fields (x) at line {first_line}, fields (x, y) at line "
            f"{line_with(text, 'second = p.reader')}") in err.message


def test_reader_handles_with_the_same_view_are_fine():
    text = kernel(SPMC + textwrap.indent(textwrap.dedent('''
        second = p.reader("a", fields=("x",))
        for i in range(N):
            second.wait(i)
            first.release(i)
    '''), "    "))
    assert events_of(read_one(text).partitions[1].body) == ["wait(i)", "release(i)"]


def test_an_explicit_full_view_is_the_same_view_as_none():
    text = kernel(SPMC.replace('p.reader("a", fields=("x",))', 'p.reader("a", fields=("y", "x"))')
                  + textwrap.indent(textwrap.dedent('''
        second = p.reader("a")
        for i in range(N):
            second.wait(i)
            first.release(i)
    '''), "    "))
    assert events_of(read_one(text).partitions[1].body) == ["wait(i)", "release(i)"]
