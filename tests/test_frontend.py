"""The frontend: Python AST of a kernel file → Pipe IR (and KernelInfo for the lowering).

Good inputs: the example kernels (tle_kernels/examples) and tests/fixtures/frontend/good_*.py.
Bad inputs: tests/fixtures/frontend/bad_*.py and the inline cases below, each with a line marked
``# error: <text>`` where the TleError must be reported.
"""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path

import pytest

from tle_compiler.diagnostics import TleError
from tle_compiler.frontend import KernelInfo, read_file, read_kernels, read_source
from tle_compiler.frontend.values import Aff, KernelArg, PipeRef, ReaderRef, Sym, WriterRef
from tle_compiler.ir import (Affine, BoolOp, Compare, Event, For, If, ModCompare, Not, Program,
                             walk_events)

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "tle_kernels" / "examples"
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "frontend"


def A(x) -> Affine:
    """Affine from an int, a name, or 'a*x + b*y + c'-style pairs."""
    if isinstance(x, dict):
        const = x.pop("", 0)
        out = Affine.of(const)
        for v, c in x.items():
            out = out + Affine.of(v).scale(c)
        return out
    return Affine.of(x)


def line_of(path: Path, text: str, nth: int = 0) -> int:
    hits = [i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line]
    assert len(hits) > nth, f"{text!r} not in {path}"
    return hits[nth]


def only(path: Path) -> Program:
    m = read_file(path)
    assert len(m.kernels) == 1
    return m.kernels[0]


def events(body) -> list[tuple]:
    """(verb, pipe, reader, fields, index-as-str) of every event, in order."""
    return [(e.verb, e.pipe, e.reader, e.fields, str(e.index)) for e in walk_events(body)]


def marked(text: str) -> tuple[int, str]:
    for i, line in enumerate(text.splitlines(), 1):
        if "# error:" in line:
            return i, line.split("# error:", 1)[1].strip()
    raise AssertionError("no '# error:' marker")


def check_error(text: str, path: str = "case.py") -> TleError:
    line, expected = marked(text)
    with pytest.raises(TleError) as ei:
        read_source(text, path)
    err = ei.value
    assert expected in err.message, f"{expected!r} not in {err.message!r}"
    assert err.loc is not None and (err.loc.file, err.loc.line) == (path, line), \
        f"reported at {err.loc}, expected line {line}: {err.message}"
    return err


# -- example kernels ------------------------------------------------------------------------------

def test_ring_example():
    path = EXAMPLES / "ring.py"
    prog = only(path)
    assert prog.name == "ring_sum" and prog.loc.line == line_of(path, "def ring_sum")
    assert prog.param_names == ("N_TILES",)
    (ring,) = prog.pipes
    assert (ring.name, ring.capacity, ring.fields, ring.readers, ring.one_shot, ring.mma) == \
        ("ring", 3, ("tile",), (), False, ())
    prod, cons = prog.partitions
    assert (prod.name, prod.default, prod.warps, prod.regs) == ("load_tiles", True, 4, None)
    assert (cons.name, cons.default, cons.warps, cons.regs) == ("sum_tiles", False, 4, 232)
    loop = prod.body[0]
    assert isinstance(loop, For) and (loop.var, loop.start, loop.stop, loop.step) == \
        ("t", A(0), A("N_TILES"), 1)
    assert events(prod.body) == [("acquire", "ring", None, None, "t"),
                                 ("commit", "ring", None, None, "t"),
                                 ("close", "ring", None, None, "N_TILES")]
    assert events(cons.body) == [("wait", "ring", None, None, "t"),
                                 ("release", "ring", None, None, "t"),
                                 ("wait", "ring", None, None, "N_TILES"),
                                 ("release", "ring", None, None, "N_TILES")]
    acq = next(walk_events(prod.body))
    assert acq.loc.file == str(path)
    assert acq.loc.line == line_of(path, "slot = w.acquire(t)")
    assert acq.loc.column == line_of_col(path, "w.acquire(t)")
    close = list(walk_events(prod.body))[-1]
    assert close.loc.line == line_of(path, "w.close(N_TILES)")


def line_of_col(path: Path, text: str) -> int:
    for line in path.read_text().splitlines():
        if text in line:
            return line.index(text) + 1
    raise AssertionError(text)


def test_spmc_example():
    path = EXAMPLES / "spmc.py"
    prog = only(path)
    assert prog.param_names == ("NK",)  # NK = tl.cdiv(N, BK): an opaque param
    (kv,) = prog.pipes
    assert (kv.readers, kv.fields, kv.mma) == (("scores", "vsum"), ("k", "v"), ("k",))
    prod, scores, vsum = prog.partitions
    assert [(p.warps, p.regs) for p in prog.partitions] == [(4, None), (4, 232), (4, 160)]
    assert events(scores.body) == [("wait", "kv", "scores", None, "ck"),
                                   ("release", "kv", "scores", None, "ck")]
    # the reader made at kernel level with fields=("v",) carries its view on every event
    assert events(vsum.body) == [("wait", "kv", "vsum", ("v",), "ck"),
                                 ("release", "kv", "vsum", ("v",), "ck - 1"),
                                 ("release", "kv", "vsum", ("v",), "NK - 1")]
    loop, tail = vsum.body
    inner = loop.body[2]  # after the wait and the slot read
    assert isinstance(inner, If) and inner.cond == Compare(A("ck"), ">", A(0))
    assert inner.loc.line == line_of(path, "if ck > 0:")
    assert isinstance(tail, If) and tail.cond == Compare(A("NK"), ">", A(0))


def test_chain_example_inlines_helpers():
    path = EXAMPLES / "chain.py"
    prog = only(path)
    assert prog.param_names == ("N_PAIRS",)
    assert [p.name for p in prog.pipes] == ["ab", "bc"]
    a, b, c = prog.partitions
    outer = a.body[0]
    assert isinstance(outer, For) and outer.var == "p"
    inner = outer.body[0]
    assert isinstance(inner, For) and (inner.var, inner.start, inner.stop) == ("j", A(0), A(2))
    assert events(a.body) == [("acquire", "ab", None, None, "j + 2*p"),
                              ("commit", "ab", None, None, "j + 2*p")]
    assert events(b.body) == [("wait", "ab", None, None, "2*p"),
                              ("release", "ab", None, None, "2*p"),
                              ("wait", "ab", None, None, "2*p + 1"),
                              ("release", "ab", None, None, "2*p + 1"),
                              ("acquire", "bc", None, None, "p"),
                              ("commit", "bc", None, None, "p")]
    # events of an inlined helper keep the helper's lines
    waits = [e for e in walk_events(b.body) if e.verb == "wait"]
    assert {e.loc.line for e in waits} == {line_of(path, "res = r.wait(i)")}
    assert events(c.body) == [("wait", "bc", None, None, "p"), ("release", "bc", None, None, "p")]


def test_examples_pipe_ir_through_jit():
    for name, kernel in (("ring", "ring_sum"), ("spmc", "spmc_qk"), ("chain", "chain")):
        path = EXAMPLES / f"{name}.py"
        spec = importlib.util.spec_from_file_location(f"tle_example_{name}", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        assert getattr(mod, kernel).pipe_ir() == only(path)


def test_examples_verify():
    passes = pytest.importorskip("tle_compiler.passes")
    for name in ("ring", "spmc", "chain"):
        ctx = passes.verify(only(EXAMPLES / f"{name}.py"))
        assert not ctx.errors, [str(d) for d in ctx.errors]


# -- good fixtures --------------------------------------------------------------------------------

def test_decorators_and_skipped_functions():
    m = read_file(FIXTURES / "good_forms.py")
    # `no_partitions` has no warp_specialize; `triton_kernel` is a @triton.jit function
    assert [k.name for k in m.kernels] == ["plain", "chained"]
    assert m.path == str(FIXTURES / "good_forms.py")
    chained = m.kernels[1]
    assert chained.partitions[0].warps == 8  # @jit(num_warps=8) imported from tle_compiler
    assert chained.pipes[0].name == "chan"   # name= wins over the variable
    assert events(chained.partitions[0].body) == [("acquire", "chan", None, None, "i"),
                                                  ("commit", "chan", None, None, "i")]
    assert events(chained.partitions[1].body) == [("wait", "chan", None, None, "i"),
                                                  ("release", "chan", None, None, "i")]


def test_constants_views_mma_and_bindings():
    info = next(k for k in read_kernels(FIXTURES / "good_forms.py") if k.name == "plain")
    assert isinstance(info, KernelInfo)
    prog = info.program
    (kv,) = prog.pipes
    assert (kv.capacity, kv.readers, kv.fields) == (2, ("left", "right"), ("a", "b", "c"))
    assert kv.mma == ("a", "c")  # tl.dot(q, kt), kt = tl.trans(k): through local variables
    specs = info.field_specs["kv"]
    assert [(f.name, f.shape, f.dtype) for f in specs] == [
        ("a", [2, 64, 32], "bf16"),       # BK: tl.constexpr = 64, BN = tl.constexpr(32)
        ("b", [2, 128], "fp32"),          # TWO_BK = BK * 2; F32 = tl.float32
        ("c", [2, 16, "BLOCK"], "fp16")]  # BD = gl.constexpr(16); an unknown name stays a name
    assert [p.name for p in prog.partitions] == ["prod", "left", "right"]
    assert [(p.warps, p.regs, p.default) for p in prog.partitions] == \
        [(4, None, True), (4, 240, False), (2, 168, False)]
    prod, left, right = info.partitions
    assert prod.bindings["w"] == WriterRef("kv")
    assert prod.bindings["x_ptr"] == KernelArg("x_ptr", "x_ptr")
    assert isinstance(left.bindings["kv"], PipeRef) and left.bindings["kv"].name == "kv"
    assert right.bindings["r"] == ReaderRef("kv", "right", ("a", "b"))  # declaration order
    assert right.bindings["last"] == Aff(A({"NK": 1, "": -1}))
    assert right.function == "right" and right.node.name == "right"
    assert events(prog.partitions[2].body) == [("wait", "kv", "right", ("a", "b"), "i"),
                                               ("release", "kv", "right", ("a", "b"), "i")]


def test_params():
    info = read_kernels(FIXTURES / "good_params.py")[0]
    prog = info.program
    # first-use order; NP (= NK // 2) and NK (= tl.cdiv(TOPK, BK)) are opaque, NK2 = NK - 1 affine
    assert prog.param_names == ("NP", "M", "NK")
    w, r = prog.partitions
    second = w.body[1]
    assert (second.start, second.stop) == (A("M"), A({"M": 1, "NK": 1, "": -1}))
    assert events(w.body)[2][4] == str(A({"NP": 1, "j": 1, "M": -1}))
    assert r.body[0].stop == A({"NP": 1, "NK": 1, "": -1})
    assert info.args == ("x_ptr", "TOPK", "M", "unused") and info.constexprs == ("M",)
    assert isinstance(info.values["NK"], Sym) and info.values["NK"].param == "NK"
    assert info.values["base"] == Aff(A({"x_ptr": 1, "M": 1}))  # affine in kernel args
    p = prog.params[0]
    assert p.loc.line == line_of(FIXTURES / "good_params.py", "NP = NK // 2")


def test_loops_ifs_and_dropped_control_flow():
    prog = read_kernels(FIXTURES / "good_control.py")[0].program
    assert prog.param_names == ("NP",)  # N is only used by dropped control flow
    prod, cons = prog.partitions
    first, second = prod.body  # the event-free loop and if are dropped
    assert isinstance(first, For) and first.stop == A("NP")
    assert isinstance(first.body[0], For) and first.body[0].var == "j"
    assert isinstance(second, For) and (second.start, second.stop, second.step) == \
        (A({"NP": 2}), A({"NP": 2, "": 4}), 2)
    assert events(second.body) == [("acquire", "p", None, None, "k"),
                                   ("commit", "p", None, None, "k"),
                                   ("acquire", "p", None, None, "k + 1"),
                                   ("commit", "p", None, None, "k + 1")]
    (loop,) = cons.body
    cond = loop.body[1]
    assert isinstance(cond, If)
    assert cond.cond == BoolOp("or", (
        BoolOp("and", (ModCompare(A("i"), 2, "==", 0), Not(Compare(A("i"), "<", A(1))))),
        Compare(A("i"), "!=", A(3))))
    assert len(cond.then) == 1 and len(cond.orelse) == 1


def test_read_source_and_kernel_level_handles():
    src = textwrap.dedent('''
        import triton.language as tl
        import tle_compiler as tle

        @tle.jit
        def k(NK):
            p = tle.pipe(capacity=2, readers=("a",), x=tle.gpu.alloc([2, 4], tl.float32))
            tle.gpu.warp_specialize([(w, (p.writer(), NK)), (r, (p, NK))], [4], [200])

        def w(h, NK):
            for i in range(NK):
                if i % 2 == 1:
                    h.acquire(i)
                    h.commit(i)
                else:
                    h.close(i)

        def r(p, NK):
            rd = p.reader(name="a")
            for i in tl.range(0, NK, 1):
                res = rd.wait(i)
                done = res.is_closed
                rd.release(i)
    ''')
    (prog,) = read_source(src, "mem.py").kernels
    w, r = prog.partitions
    (loop,) = w.body
    (branch,) = loop.body
    assert branch.cond == ModCompare(A("i"), 2, "==", 1)
    assert [e.verb for e in branch.then] == ["acquire", "commit"]
    assert [e.verb for e in branch.orelse] == ["close"]
    assert events(r.body) == [("wait", "p", "a", None, "i"), ("release", "p", "a", None, "i")]
    assert all(e.loc.file == "mem.py" for e in walk_events(r.body))


def test_static_conditions_are_folded():
    src = textwrap.dedent('''
        import triton.language as tl
        import tle_compiler as tle
        USE_TAIL = True

        @tle.jit
        def k(NK):
            p = tle.pipe(capacity=1, x=tle.gpu.alloc([1, 4], tl.float32))
            tle.gpu.warp_specialize([(w, (p, NK)), (r, (p, NK))], [4], [200])

        def w(p, NK):
            h = p.writer()
            if USE_TAIL:
                h.acquire(0)
                h.commit(0)
            else:
                h.acquire(tl.load(NK))  # never read: the branch is statically dead

        def r(p, NK):
            h = p.reader()
            h.wait(0)
            h.release(0)
    ''')
    (prog,) = read_source(src).kernels
    assert [type(s) for s in prog.partitions[0].body] == [Event, Event]


def test_inlining_renames_loops_and_shares_pure_params():
    (prog,) = read_source(T1, "t1.py").kernels
    # n = tl.cdiv(TOPK, 64) in one partition and the same expression inline in the other are one
    # param; M (kernel level, assigned in both branches of an if) is an opaque param
    assert prog.param_names == ("n", "M")
    prod, cons = prog.partitions
    outer = prod.body[0]
    inner = outer.body[0]
    assert (outer.var, inner.var) == ("i", "i_1")  # the helper's `i` would shadow the caller's
    assert str(inner.body[0].index) == "2*i + i_1"
    assert [str(s.stop) for s in cons.body] == ["2*n", "M"]
    assert str(cons.body[1].body[0].index) == "i + 2*n"


T1 = textwrap.dedent('''
    import triton.language as tl
    import tle_compiler as tle

    @tle.jit
    def k(x_ptr, TOPK, N):
        pid = tl.program_id(0)
        if pid >= N:
            return
        if N > 4:
            M = 3
        else:
            M = tl.load(x_ptr)
        p = tle.pipe(capacity=2, x=tle.gpu.alloc([2, 4], tl.float32))
        tle.gpu.warp_specialize([(prod, (p, TOPK, M)), (cons, (p, TOPK, M))], [4], [200])

    def prod(p, TOPK, M):
        w = p.writer()
        n = tl.cdiv(TOPK, 64)
        for i in range(n):
            helper(w, i)

    def helper(w, base):
        for i in range(2):
            w.acquire(2 * base + i)
            w.commit(2 * base + i)

    def cons(p, TOPK, M):
        r = p.reader()
        for i in range(2 * tl.cdiv(TOPK, 64)):
            r.wait(i)
            r.release(i)
        for i in range(M):
            r.wait(i + 2 * tl.cdiv(TOPK, 64))
            r.release(i + 2 * tl.cdiv(TOPK, 64))
''')


# -- errors ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("bad_*.py")))
def test_bad_fixtures(name):
    path = FIXTURES / name
    line, expected = marked(path.read_text())
    with pytest.raises(TleError) as ei:
        read_file(path)
    err = ei.value
    assert expected in err.message, err.message
    assert (err.loc.file, err.loc.line) == (str(path), line), (err.loc, err.message)


def test_required_bad_fixtures_exist():
    names = {p.name for p in FIXTURES.glob("bad_*.py")}
    assert {"bad_capacity_zero.py", "bad_scope_cluster.py", "bad_undeclared_reader.py",
            "bad_view_field.py", "bad_leading_dim.py", "bad_one_shot_capacity.py",
            "bad_index_product.py", "bad_data_if.py"} <= names


HEAD = '''import triton.language as tl
import tle_compiler as tle
import other_module


@tle.jit
def k(x_ptr, NK):
    p = tle.pipe(capacity=2, readers=("a", "b"),
                 x=tle.gpu.alloc([2, 64], tl.float32), y=tle.gpu.alloc([2, 64], tl.float32))
    s = tle.pipe(capacity=1, z=tle.gpu.alloc([1, 64], tl.float32))
    tle.gpu.warp_specialize([(prod, (p, s, x_ptr, NK)), (cons, (p, s, x_ptr, NK))], [4], [200])


def cons(p, s, x_ptr, NK):
    pass


def prod(p, s, x_ptr, NK):
'''

PARTITION_CASES = {
    "index-division": '''
    w = p.writer()
    for i in range(NK):
        w.acquire(i // 2)  # error: index of w.acquire must be affine
''',
    "index-data": '''
    w = p.writer()
    w.acquire(tl.load(x_ptr))  # error: index of w.acquire must be affine
''',
    "index-loop-carried": '''
    w = p.writer()
    it = 0
    for i in range(NK):
        w.acquire(it)  # error: 'it' is assigned inside the loop
        w.commit(it)
        it += 1
''',
    "index-after-loop": '''
    w = p.writer()
    for i in range(NK):
        pass
    w.acquire(i)  # error: 'i' is the variable of the loop
''',
    "index-branch-dependent": '''
    w = p.writer()
    if tl.load(x_ptr) > 0:
        j = 1
    else:
        j = 2
    w.acquire(j)  # error: assigned differently in the branches
''',
    "while": '''
    w = p.writer()
    i = 0
    while i < NK:  # error: pipe events inside a `while` loop
        w.acquire(i)
        w.commit(i)
        i += 1
''',
    "loop-bound-data": '''
    w = p.writer()
    for i in range(tl.load(x_ptr)):  # error: loop bounds must be affine
        w.acquire(i)
        w.commit(i)
''',
    "loop-step": '''
    w = p.writer()
    for i in range(0, NK, NK):  # error: the step of `range(0, NK, NK)` must be a non-zero integer
        w.acquire(i)
        w.commit(i)
''',
    "loop-step-zero": '''
    w = p.writer()
    for i in tl.range(0, NK, 0):  # error: must be a non-zero integer
        w.acquire(i)
''',
    "loop-not-range": '''
    w = p.writer()
    for i in [0, 1]:  # error: only `for v in range(...)`
        w.acquire(i)
        w.commit(i)
''',
    "loop-break": '''
    w = p.writer()
    for i in range(NK):
        w.acquire(i)
        w.commit(i)
        if tl.load(x_ptr + i) > 0:
            break  # error: `break` is not supported
''',
    "if-data": '''
    r = p.reader("a")
    for i in range(NK):
        res = r.wait(i)
        if res.is_closed:  # error: pipe events under a condition that is not affine
            r.release(i)
''',
    "if-mod-lt": '''
    w = p.writer()
    for i in range(NK):
        if i % 2 < 1:  # error: a remainder can only be compared with == or !=
            w.acquire(i)
''',
    "if-in-operand": '''
    w = p.writer()
    for i in range(NK):
        if i > 0 and tl.load(x_ptr) > 0:  # error: not affine
            w.acquire(i)
''',
    "conditional-expression": '''
    r = p.reader("a")
    res = r.wait(0) if NK > 0 else None  # error: inside a conditional expression
''',
    "comprehension": '''
    w = p.writer()
    xs = [w.acquire(i) for i in range(4)]  # error: inside a lambda or comprehension
''',
    # (a guard clause, an `if` without `else` ending in `return`, is read as an if / else
    # holding the rest of the body; one with an `else` is not)
    "early-return": '''
    w = p.writer()
    if NK == 0:
        return  # error: early `return` in 'prod'
    else:
        x = 1
    w.acquire(0)
    w.commit(0)
''',
    "wrong-verb": '''
    w = p.writer()
    w.wait(0)  # error: it has acquire, commit, close, not wait
''',
    "verb-on-pipe": '''
    p.acquire(0)  # error: pipe events go through a handle
''',
    "outside-view": '''
    r = p.reader("a", fields=("x",))
    res = r.wait(0)
    v = tl.load(tle.gpu.local_ptr(res.slot.y))  # error: outside its view
''',
    "unknown-slot-field": '''
    slot = p.writer().acquire(0)
    v = slot.zz  # error: pipe 'p' has no field 'zz'
''',
    "spmc-reader-without-name": '''
    r = p.reader()  # error: reader() needs one of these names
''',
    "spsc-reader-with-name": '''
    r = s.reader("a")  # error: takes no name
''',
    "empty-view": '''
    r = p.reader("a", fields=())  # error: fields= is empty
''',
    "view-not-literal": '''
    r = p.reader("a", fields=x_ptr)  # error: fields= must be a tuple of field names
''',
    "pipe-in-partition": '''
    q = tle.pipe(capacity=1, q=tle.gpu.alloc([1, 4], tl.float32))  # error: declared in the kernel body
''',
    "handle-to-imported-function": '''
    w = p.writer()
    other_module.send(w)  # error: receives a pipe or a pipe handle
''',
    "unknown-handle": '''
    h = tl.load(x_ptr)
    h.acquire(0)  # error: cannot tell which pipe handle
''',
    "nested-function": '''
    w = p.writer()

    def step(i):
        w.acquire(i)  # error: inside the nested function 'step'
    step(0)
''',
    "try": '''
    w = p.writer()
    try:  # error: pipe events inside a `try` statement
        w.acquire(0)
    except Exception:
        pass
''',
    "index-arity": '''
    w = p.writer()
    w.acquire(0, 1)  # error: takes one argument
''',
    "recursion": '''
    loop_forever(p.writer(), 0)


def loop_forever(w, i):
    w.acquire(i)
    loop_forever(w, i + 1)  # error: recursive call of 'loop_forever'
''',
    "helper-arity": '''
    put(p.writer())  # error: missing argument 'i'


def put(w, i):
    w.acquire(i)
''',
}


@pytest.mark.parametrize("case", sorted(PARTITION_CASES))
def test_partition_errors(case):
    check_error(HEAD + PARTITION_CASES[case])


KERNEL_HEAD = '''import triton.language as tl
import tle_compiler as tle


def f(p, NK):
    pass


def g(p, NK):
    pass


def h(p):
    pass


'''

KERNEL_CASES = {
    "warps-length": '''
@tle.jit
def k(NK):
    p = tle.pipe(capacity=1, x=tle.gpu.alloc([1, 4], tl.float32))
    tle.gpu.warp_specialize([(f, (p, NK)), (g, (p, NK))],
                            [4, 4],  # error: 2 warp counts for 1 worker
                            [200])
''',
    "regs-length": '''
@tle.jit
def k(NK):
    p = tle.pipe(capacity=1, x=tle.gpu.alloc([1, 4], tl.float32))
    tle.gpu.warp_specialize([(f, (p, NK)), (g, (p, NK))], [4], [200, 100])  # error: 2 register budgets for 1 worker
''',
    "warps-not-literal": '''
@tle.jit
def k(NK, W):
    p = tle.pipe(capacity=1, x=tle.gpu.alloc([1, 4], tl.float32))
    tle.gpu.warp_specialize([(f, (p, NK)), (g, (p, NK))], [W], [200])  # error: warp counts must be integer literals >= 1, got `W`
''',
    "regs-not-literal": '''
@tle.jit
def k(NK, R):
    p = tle.pipe(capacity=1, x=tle.gpu.alloc([1, 4], tl.float32))
    tle.gpu.warp_specialize([(f, (p, NK)), (g, (p, NK))], [4], R)  # error: must be a list of integer literals, got `R`
''',
    "regs-range": '''
@tle.jit
def k(NK):
    p = tle.pipe(capacity=1, x=tle.gpu.alloc([1, 4], tl.float32))
    tle.gpu.warp_specialize([(f, (p, NK)), (g, (p, NK))], [4], [300])  # error: setmaxnreg
''',
    "unknown-function": '''
@tle.jit
def k(NK):
    p = tle.pipe(capacity=1, x=tle.gpu.alloc([1, 4], tl.float32))
    tle.gpu.warp_specialize([(f, (p, NK)),
                             (nowhere, (p, NK))],  # error: `nowhere` is not a module-level function
                            [4], [200])
''',
    "function-twice": '''
@tle.jit
def k(NK):
    p = tle.pipe(capacity=1, x=tle.gpu.alloc([1, 4], tl.float32))
    tle.gpu.warp_specialize([(f, (p, NK)),
                             (f, (p, NK))],  # error: 'f' is used twice
                            [4], [200])
''',
    "partition-arity": '''
@tle.jit
def k(NK):
    p = tle.pipe(capacity=1, x=tle.gpu.alloc([1, 4], tl.float32))
    tle.gpu.warp_specialize([(f, (p, NK)),
                             (h, (p, NK))],  # error: partition 'h' takes 1 positional argument(s), 2 given
                            [4], [200])
''',
    "args-not-tuple": '''
@tle.jit
def k(NK):
    p = tle.pipe(capacity=1, x=tle.gpu.alloc([1, 4], tl.float32))
    tle.gpu.warp_specialize([(f, (p, NK)), (h, p)], [4], [200])  # error: must be a tuple
''',
    "num-warps": '''
@tle.jit(num_warps=3)  # error: num_warps must be a power of two
def k(NK):
    p = tle.pipe(capacity=1, x=tle.gpu.alloc([1, 4], tl.float32))
    tle.gpu.warp_specialize([(f, (p, NK)), (g, (p, NK))], [4], [200])
''',
    "ws-nested": '''
@tle.jit
def k(NK):
    p = tle.pipe(capacity=1, x=tle.gpu.alloc([1, 4], tl.float32))
    if NK > 0:
        tle.gpu.warp_specialize([(f, (p, NK)), (g, (p, NK))], [4], [200])  # error: top level of the kernel body
''',
    "event-in-kernel": '''
@tle.jit
def k(NK):
    p = tle.pipe(capacity=1, x=tle.gpu.alloc([1, 4], tl.float32))
    p.writer().acquire(0)  # error: pipe events belong in partition functions
    tle.gpu.warp_specialize([(f, (p, NK)), (g, (p, NK))], [4], [200])
''',
    "pipe-in-if": '''
@tle.jit
def k(NK):
    if NK > 0:
        p = tle.pipe(capacity=1, x=tle.gpu.alloc([1, 4], tl.float32))  # error: top level of the kernel body
    tle.gpu.warp_specialize([(f, (p, NK)), (g, (p, NK))], [4], [200])
''',
    "pipe-twice": '''
@tle.jit
def k(NK):
    p = tle.pipe(capacity=1, x=tle.gpu.alloc([1, 4], tl.float32))
    q = tle.pipe(capacity=1, name="p", x=tle.gpu.alloc([1, 4], tl.float32))  # error: pipe 'p' is declared twice
    tle.gpu.warp_specialize([(f, (p, NK)), (g, (q, NK))], [4], [200])
''',
    "pipe-positional": '''
@tle.jit
def k(NK):
    p = tle.pipe(1, x=tle.gpu.alloc([1, 4], tl.float32))  # error: keyword arguments only
    tle.gpu.warp_specialize([(f, (p, NK)), (g, (p, NK))], [4], [200])
''',
    "capacity-not-constant": '''
@tle.jit
def k(NK, S: tl.constexpr):
    p = tle.pipe(capacity=NK, x=tle.gpu.alloc([2, 4], tl.float32))  # error: capacity must be an integer >= 1 (a literal, a module-level constant or an expression of the kernel's constexpr parameters), got `NK`
    tle.gpu.warp_specialize([(f, (p, NK)), (g, (p, NK))], [4], [200])
''',
    "readers-list": '''
@tle.jit
def k(NK):
    p = tle.pipe(capacity=1, readers=["a", "b"], x=tle.gpu.alloc([1, 4], tl.float32))  # error: readers must be a tuple
    tle.gpu.warp_specialize([(f, (p, NK)), (g, (p, NK))], [4], [200])
''',
    "readers-duplicate": '''
@tle.jit
def k(NK):
    p = tle.pipe(capacity=1, readers=("a", "a"), x=tle.gpu.alloc([1, 4], tl.float32))  # error: reader 'a' is declared twice
    tle.gpu.warp_specialize([(f, (p, NK)), (g, (p, NK))], [4], [200])
''',
    "field-not-alloc": '''
@tle.jit
def k(x_ptr, NK):
    p = tle.pipe(capacity=1,
                 x=x_ptr)  # error: field 'x' must be a tle.gpu.alloc(...) buffer, got `x_ptr`
    tle.gpu.warp_specialize([(f, (p, NK)), (g, (p, NK))], [4], [200])
''',
    "leading-dim-symbolic": '''
@tle.jit
def k(NK, S: tl.constexpr):
    p = tle.pipe(capacity=2, x=tle.gpu.alloc([S, 4], tl.float32))  # error: got shape [S, 4]
    tle.gpu.warp_specialize([(f, (p, NK)), (g, (p, NK))], [4], [200])
''',
    "no-fields": '''
@tle.jit
def k(NK):
    p = tle.pipe(capacity=1)  # error: has no fields
    tle.gpu.warp_specialize([(f, (p, NK)), (g, (p, NK))], [4], [200])
''',
    "bad-dtype": '''
@tle.jit
def k(NK):
    p = tle.pipe(capacity=1, x=tle.gpu.alloc([1, 4], "float13"))  # error: is not a dtype
    tle.gpu.warp_specialize([(f, (p, NK)), (g, (p, NK))], [4], [200])
''',
    "unnamed-pipe": '''
@tle.jit
def k(NK):
    tle.gpu.warp_specialize([(f, (tle.pipe(capacity=1, x=tle.gpu.alloc([1, 4], tl.float32)), NK)),  # error: name= is required
                             (g, (None, NK))], [4], [200])
''',
    "syntax": '''
@tle.jit
def k(NK):
    p = tle.pipe(capacity=1,, x=1)  # error: syntax error
''',
}


@pytest.mark.parametrize("case", sorted(KERNEL_CASES))
def test_kernel_errors(case):
    check_error(KERNEL_HEAD + KERNEL_CASES[case])


def test_missing_file_is_a_tle_error(tmp_path):
    with pytest.raises(TleError, match="cannot read"):
        read_file(tmp_path / "nope.py")


BUDGET_KERNEL = '''
import triton.language as tl
import tle_compiler as tle


@tle.jit(num_warps=4)
def k(x_ptr, N, WIDE: tl.constexpr):
    p = tle.pipe(capacity=2, v=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(prod, (p, x_ptr, N)), (cons, (p, N))], [4], [192 + 40 * WIDE])


def prod(p, x_ptr, N):
    w = p.writer()
    for i in range(N):
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.v), tl.load(x_ptr + tl.arange(0, 64)))
        w.commit(i)


def cons(p, N):
    r = p.reader()
    for i in range(N):
        res = r.wait(i)
        r.release(i)
'''


def test_a_register_budget_may_be_an_expression_of_constexprs():
    """`[192 + 40 * WIDE]`: a number once WIDE is bound, so each binding reads its own budget
    (the generic reading, which the protocol view needs no budget for, leaves it out); any
    other expression that is not a literal stays an error."""
    for wide, regs in ((0, 192), (1, 232)):
        (k,) = read_kernels("budget.py", text=BUDGET_KERNEL, bind={"WIDE": wide})
        assert [p.regs for p in k.partitions] == [None, regs]
    (k,) = read_kernels("budget.py", text=BUDGET_KERNEL)
    assert [p.regs for p in k.partitions] == [None, None]
    e = check_error(BUDGET_KERNEL.replace(
        "[192 + 40 * WIDE])", "[192 + N])  # error: register budgets must be integer literals"))
    assert e.check == "bad-warp-specialize"
