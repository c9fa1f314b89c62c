"""The language surface at Python runtime: `tle.pipe`, handles, `tle.gpu`, `@tle.jit`.

Every misuse is a TleError located at the *caller's* line (the line of the call in this file).
"""

from __future__ import annotations

import importlib.util
import textwrap

import pytest
import triton.language as tl

import tle_compiler as tle
from tle_compiler.diagnostics import TleError
from tle_compiler.ir.nodes import Program
from tle_compiler.jit import TleKernel
from tle_compiler.language.gpu import SharedBuffer
from tle_compiler.language.pipe import Pipe, Reader, Slot, WaitResult, Writer

HERE = __file__


def raises_here(fn, text: str) -> TleError:
    """``fn`` (a lambda written where the call is) raises a TleError mentioning ``text``, located
    at the lambda's line: the caller's line."""
    line = fn.__code__.co_firstlineno
    with pytest.raises(TleError) as ei:
        fn()
    err = ei.value
    assert text in err.message, err.message
    assert err.loc is not None and err.loc.file == HERE and err.loc.line == line, (err.loc, line)
    return err


def buf(*shape, dtype=tl.float32):
    return tle.gpu.alloc(list(shape), dtype)


# -- the package surface ---------------------------------------------------------------------------

def test_package_exports():
    assert callable(tle.jit) and callable(tle.pipe)
    assert tle.gpu.smem == "smem"
    for name in ("alloc", "local_ptr", "warp_specialize", "smem"):
        assert hasattr(tle.gpu, name)
    assert "import tle_compiler as tle" in tle.__doc__


# -- tle.gpu ---------------------------------------------------------------------------------------

def test_alloc_returns_shared_buffer():
    b = tle.gpu.alloc([2, 64, 256], tl.bfloat16)
    assert isinstance(b, SharedBuffer)
    assert (b.shape, b.dtype, b.scope) == ((2, 64, 256), "bf16", tle.gpu.smem)
    assert tle.gpu.alloc((4,), "bfloat16") == tle.gpu.alloc([4], "bf16", scope=tle.gpu.smem)
    assert tle.gpu.alloc([1], tl.int8).dtype == "int8"
    assert b.index(1).shape == (64, 256)


def test_alloc_errors_name_the_caller_line():
    raises_here(lambda: tle.gpu.alloc([2, 0], tl.float32), "must be >= 1")
    raises_here(lambda: tle.gpu.alloc([], tl.float32), "non-empty list")
    raises_here(lambda: tle.gpu.alloc([2, "N"], tl.float32), "positive integers")
    raises_here(lambda: tle.gpu.alloc([2], "float13"), "is not a dtype")
    raises_here(lambda: tle.gpu.alloc([2], tl.float32, scope="gmem"), "tle.gpu.smem")


def test_kernel_only_functions_raise():
    e = raises_here(lambda: tle.gpu.local_ptr(buf(2)), "only meaningful inside a @tle.jit")
    assert "tle.gpu.local_ptr" in e.message
    e = raises_here(lambda: tle.gpu.warp_specialize([], [], []), "tle_compiler")
    assert "warp_specialize" in e.message


# -- tle.pipe --------------------------------------------------------------------------------------

def test_pipe_declaration():
    kv = tle.pipe(capacity=2, readers=("left", "right"),
                  kv_l=buf(2, 64, 256, dtype=tl.bfloat16), kv_r=buf(2, 64, 256, dtype=tl.bfloat16))
    assert isinstance(kv, Pipe)
    assert kv.name == "kv"  # the variable it is assigned to
    assert (kv.capacity, kv.scope, kv.readers, kv.one_shot) == (2, "cta", ("left", "right"), False)
    assert kv.field_names == ("kv_l", "kv_r") and kv.is_spmc
    q = tle.pipe(capacity=1, one_shot=True, name="query", q=buf(1, 64))
    assert (q.name, q.one_shot, q.readers, q.is_spmc) == ("query", True, (), False)


def test_pipe_handles():
    kv = tle.pipe(capacity=2, readers=("left", "right"), a=buf(2, 8), b=buf(2, 16))
    w = kv.writer()
    assert isinstance(w, Writer)
    slot = w.acquire(3)
    assert isinstance(slot, Slot)
    assert slot.a.shape == (8,) and slot.a.stage == 1 and slot.b.shape == (16,)
    w.commit(3)
    w.close(4)
    r = kv.reader("right", fields=("b",))
    assert isinstance(r, Reader) and (r.name, r.fields) == ("right", ("b",))
    res = r.wait(2)
    assert isinstance(res, WaitResult) and res.is_closed is False
    assert res.slot.b.shape == (16,) and res.slot.b.stage == 0
    with pytest.raises(AttributeError, match="visible: b"):
        res.slot.a
    r.release(2)
    assert kv.reader(name="left").fields is None
    assert kv.reader("left", fields=["b", "a"]).fields == ("a", "b")  # declaration order
    spsc = tle.pipe(capacity=1, x=buf(1, 4))
    assert spsc.reader().name is None


def test_pipe_declaration_errors():
    raises_here(lambda: tle.pipe(capacity=0, x=buf(1, 4)), "capacity must be an integer >= 1")
    raises_here(lambda: tle.pipe(capacity="2", x=buf(2, 4)), "capacity must be")
    raises_here(lambda: tle.pipe(capacity=True, x=buf(1, 4)), "capacity must be")
    raises_here(lambda: tle.pipe(capacity=2, scope="cluster", x=buf(2, 4)), 'scope must be "cta"')
    raises_here(lambda: tle.pipe(capacity=2, readers=["a", "b"], x=buf(2, 4)),
                "readers must be a tuple")
    raises_here(lambda: tle.pipe(capacity=2, readers=("a", 3), x=buf(2, 4)),
                "reader names must be identifier strings")
    raises_here(lambda: tle.pipe(capacity=2, readers=("a", "a"), x=buf(2, 4)),
                "reader 'a' is declared twice")
    raises_here(lambda: tle.pipe(capacity=2, one_shot=True, x=buf(2, 4)),
                "one_shot pipe is a single hand-off and must have capacity=1")
    raises_here(lambda: tle.pipe(capacity=2, x=[2, 4]), "must be a tle.gpu.alloc(...) buffer")
    raises_here(lambda: tle.pipe(capacity=2, x=buf(3, 4)),
                "leading dimension of field 'x' must be the capacity 2")
    raises_here(lambda: tle.pipe(capacity=2), "has no fields")
    raises_here(lambda: tle.pipe(2, x=buf(2, 4)), "keyword arguments only")
    raises_here(lambda: tle.pipe(x=buf(2, 4)), "capacity= is required")
    raises_here(lambda: tle.pipe(capacity=1, name="a b", x=buf(1, 4)), "identifier")


def test_multiline_call_is_located_at_its_first_line():
    raises_here(lambda: tle.pipe(
        capacity=0,
        x=buf(1, 4)), "capacity")


def test_reader_errors():
    kv = tle.pipe(capacity=2, readers=("left", "right"), a=buf(2, 8), b=buf(2, 16))
    spsc = tle.pipe(capacity=2, a=buf(2, 8))
    raises_here(lambda: kv.reader("middle"), "reader 'middle' is not declared")
    raises_here(lambda: kv.reader(), "reader() needs one of these names")
    raises_here(lambda: spsc.reader("left"), "takes no name")
    raises_here(lambda: kv.reader("left", fields=("c",)), "has no field 'c'")
    raises_here(lambda: kv.reader("left", fields=()), "fields= is empty")
    raises_here(lambda: kv.reader("left", fields="a"), "must be a tuple of field names")
    raises_here(lambda: kv.reader("left", fields=("a", "a")), "names a field twice")


def test_index_errors():
    w = tle.pipe(capacity=2, a=buf(2, 8)).writer()
    raises_here(lambda: w.acquire(-1), "iteration index must be an integer >= 0")
    raises_here(lambda: w.commit(1.5), "iteration index")


# -- @tle.jit --------------------------------------------------------------------------------------

KERNEL_FILE = '''
import triton.language as tl
import tle_compiler as tle


@tle.jit(num_warps=8)
def ring(x_ptr, NK):
    p = tle.pipe(capacity=2, x=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(prod, (p, x_ptr, NK)), (cons, (p, NK))], [4], [200])


@tle.jit
def plain(x):
    pass


def prod(p, x_ptr, NK):
    w = p.writer()
    for i in range(NK):
        slot = w.acquire(i)
        tl.store(tle.gpu.local_ptr(slot.x), tl.load(x_ptr + tl.arange(0, 64)))
        w.commit(i)


def cons(p, NK):
    r = p.reader()
    for i in range(NK):
        r.wait(i)
        r.release(i)
'''


@pytest.fixture
def kernel_module(tmp_path):
    path = tmp_path / "kmod.py"
    path.write_text(textwrap.dedent(KERNEL_FILE))
    spec = importlib.util.spec_from_file_location("kmod_for_test_language", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod, str(path)


def test_jit_kernel_object(kernel_module):
    mod, path = kernel_module
    k = mod.ring
    assert isinstance(k, TleKernel)
    assert k.name == "ring" and k.num_warps == 8 and k.file == path
    assert k.line == 7  # the `def` line, not the decorator's
    assert mod.plain.num_warps == 4


def test_jit_pipe_ir(kernel_module):
    mod, path = kernel_module
    prog = mod.ring.pipe_ir()
    assert isinstance(prog, Program)
    assert prog.name == "ring" and prog.param_names == ("NK",)
    assert [p.name for p in prog.partitions] == ["prod", "cons"]
    assert prog.partitions[0].warps == 8 and prog.partitions[0].default
    with pytest.raises(TleError, match="warp_specialize"):
        mod.plain.pipe_ir()


def test_jit_launch_compiles_then_needs_a_gpu(kernel_module):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a GPU is present: the launch would run")
    mod, _ = kernel_module
    e = raises_here(lambda: mod.ring[(1,)](torch.zeros(64), 4), "no CUDA GPU")
    assert "tle-dump --ttgir" in e.message
    raises_here(lambda: mod.ring[(1,)](torch.zeros(64), "4"), "argument 'NK' is a str")
    raises_here(lambda: mod.ring(0, 4), "ring[grid]")


def test_jit_options():
    @tle.jit
    def a(x):
        pass

    @tle.jit()
    def b(x):
        pass

    assert a.num_warps == b.num_warps == 4 and a.fn.__name__ == "a"
    raises_here(lambda: tle.jit(num_warps=3), "power of two")
    # a power of two under 4: Triton refuses a warp-specialized kernel whose default partition
    # is not whole warp groups, so the decorator does
    raises_here(lambda: tle.jit(num_warps=2), "power of two >= 4")
    raises_here(lambda: tle.jit(num_warps=1), "power of two >= 4")


def test_frontend_and_runtime_share_rules(tmp_path):
    """The same mistake reads the same from plain Python and from a kernel's AST."""
    with pytest.raises(TleError) as rt:
        x = tle.pipe(capacity=2, readers=("a",), one_shot=True, x=buf(2, 4))
        del x
    src = textwrap.dedent('''
        import triton.language as tl
        import tle_compiler as tle

        @tle.jit
        def k(N):
            x = tle.pipe(capacity=2, readers=("a",), one_shot=True,
                         x=tle.gpu.alloc([2, 4], tl.float32))
            tle.gpu.warp_specialize([(f, (x,))], [], [])

        def f(x):
            pass
    ''')
    from tle_compiler.frontend import read_source
    with pytest.raises(TleError) as fe:
        read_source(src, "k.py")
    assert rt.value.message == fe.value.message
    assert fe.value.loc.line == 7
