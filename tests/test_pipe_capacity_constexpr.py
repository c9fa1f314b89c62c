"""A pipe's capacity read from the kernel's constexpr parameters (``tle.pipe(capacity=STAGES,
...)``, ``STAGES + 1``): the kernel is read specialised to their values (DEFAULT_CONFIG's, a
``--param``'s, a compile's or a launch's), verified and lowered with that capacity, and the
verdict names the values. Without a value it is refused at the capacity, naming the constexpr;
a runtime value is refused as before. What a proof at one value must not claim for another
is checked at both: a ring that needs two free slots deadlocks at capacity 1.
"""

from __future__ import annotations

import pytest

from tle_compiler.diagnostics import TleError
from tle_compiler.frontend.ast_reader import kernels_of_source
from tle_compiler.lowering.compile import gluon_source

from .adversarial_support import dump, expect, run_dump, write_kernel

KERNEL = '''import triton.language as tl
import tle_compiler as tle


@tle.jit(num_warps=4)
def k(x_ptr, y_ptr, N, STAGES: tl.constexpr):
    tle.assume(N >= 0)
    p = tle.pipe(capacity=CAP, t=tle.gpu.alloc([DIM, 64], tl.float32))
    tle.gpu.warp_specialize([(prod, (p, x_ptr, N)), (cons, (p, y_ptr, N))], [4], [64])


def prod(p, x_ptr, N):
    w = p.writer()
    for i in range(N):
WRITER


def cons(p, y_ptr, N):
    r = p.reader()
    for i in range(N):
        for j in range(2):
            s = r.wait(2 * i + j)
            tl.store(y_ptr + (2 * i + j) * 64 + tl.arange(0, 64),
                     tl.load(tle.gpu.local_ptr(s.slot.t)))
            r.release(2 * i + j)
CONFIG'''

# one slot at a time: safe at every capacity
ONE_AT_A_TIME = '''        for j in range(2):
            s = w.acquire(2 * i + j)
            tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + (2 * i + j) * 64 + tl.arange(0, 64)))
            w.commit(2 * i + j)'''

# two slots held at once before either is committed: deadlocks at capacity 1
TWO_HELD = '''        s0 = w.acquire(2 * i)
        s1 = w.acquire(2 * i + 1)
        tl.store(tle.gpu.local_ptr(s0.t), tl.load(x_ptr + 2 * i * 64 + tl.arange(0, 64)))
        tl.store(tle.gpu.local_ptr(s1.t), tl.load(x_ptr + (2 * i + 1) * 64 + tl.arange(0, 64)))
        w.commit(2 * i)
        w.commit(2 * i + 1)'''

CONFIG = '''

DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32",
                                "STAGES": "constexpr"},
                  "constexprs": {"STAGES": VALUE}, "num_warps": 4}
'''


def kernel(writer: str = ONE_AT_A_TIME, cap: str = "STAGES", dim: str = "STAGES",
           value=2) -> str:
    config = "" if value is None else CONFIG.replace("VALUE", str(value))
    return (KERNEL.replace("CAP", cap).replace("DIM", dim).replace("WRITER", writer)
            .replace("CONFIG", config))


def test_verified_with_default_configs_value_and_named(tmp_path, capsys):
    code, err = dump(tmp_path, capsys, kernel())
    expect(code, err, "verified")
    assert "with STAGES = 2 (read specialised)" in err
    assert "read specialised to STAGES=2" in err


@pytest.mark.parametrize("stages", [1, 3, 4])
def test_param_value_is_the_capacity_verified_and_lowered(tmp_path, capsys, stages):
    path = write_kernel(tmp_path, kernel())
    code, err = dump(tmp_path, capsys, kernel(), "--param", f"STAGES={stages}")
    expect(code, err, "verified")
    assert f"with STAGES = {stages} (read specialised)" in err
    info, = kernels_of_source(path.read_text(), str(path), bind={"STAGES": stages})
    assert info.program.pipes[0].capacity == stages
    src = gluon_source((str(path), "k"), constexprs={"STAGES": stages}).source
    # the slot buffer and both barrier arrays have one entry per stage
    assert f"gl.allocate_shared_memory(gl.float32, [{stages}, 64]" in src
    assert src.count(f"gl.allocate_shared_memory(gl.int64, [{stages}, 1]") == 2


def test_expression_of_constexprs(tmp_path, capsys):
    text = kernel(cap="STAGES + 1", dim="STAGES + 1")
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, "verified")
    path = write_kernel(tmp_path, text)
    info, = kernels_of_source(text, str(path), bind={"STAGES": 2})
    assert info.program.pipes[0].capacity == 3


def test_a_value_that_deadlocks_is_rejected_and_not_lowered(tmp_path, capsys):
    """Holding two slots before committing either needs capacity 2: verified at STAGES = 2,
    rejected at 1, and a compile with STAGES = 1 does not lower the proof made at 2."""
    text = kernel(writer=TWO_HELD)
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, "verified")
    code, err = dump(tmp_path, capsys, text, "--param", "STAGES=1")
    expect(code, err, ("rejected", "deadlock"))
    code, err = dump(tmp_path, capsys, kernel(writer=TWO_HELD, value=1))
    expect(code, err, ("rejected", "deadlock"))
    path = write_kernel(tmp_path, text)
    with pytest.raises(TleError):
        gluon_source((str(path), "k"), constexprs={"STAGES": 1})
    assert "[2, 64]" in gluon_source((str(path), "k"), constexprs={"STAGES": 2}).source


def test_no_value_is_refused_naming_the_constexpr(tmp_path, capsys):
    code, err = dump(tmp_path, capsys, kernel(value=None))
    expect(code, err, ("rejected", "[constexpr-operand]", "is read from constexpr STAGES",
                       "--param STAGES="))
    assert ":8:" in err  # the declaration's line


def test_generic_reading_stops_so_a_launch_reads_it_specialised(tmp_path):
    path = write_kernel(tmp_path, kernel())
    with pytest.raises(TleError) as e:
        kernels_of_source(path.read_text(), str(path))
    assert e.value.check == "constexpr-operand"  # in SPECIALIZABLE: read again with values
    info, = kernels_of_source(path.read_text(), str(path), bind={"STAGES": 5})
    assert info.program.pipes[0].capacity == 5


def test_slot_dim_that_does_not_follow_the_capacity_is_refused(tmp_path, capsys):
    code, err = dump(tmp_path, capsys, kernel(dim="2"), "--param", "STAGES=3")
    assert ": verified for " not in err
    assert code != 0
    assert "capacity" in err


@pytest.mark.parametrize("cap", ["N", "x_ptr"])
def test_runtime_capacity_is_still_refused(tmp_path, capsys, cap):
    code, err = dump(tmp_path, capsys, kernel(cap=cap))
    expect(code, err, ("rejected", "[bad-pipe]", "capacity must be an integer >= 1"))


HELPER = '''
def mk(PARAM):
    return tle.pipe(capacity=PARAM, name="p", t=tle.gpu.alloc([PARAM, 64], tl.float32))
'''


@pytest.mark.parametrize("param,arg,stages", [
    ("C", "STAGES", 2),            # a helper's parameter given the kernel's constexpr
    ("C: tl.constexpr", "STAGES", 2),
    ("STAGES", "STAGES + 1", 3),   # the helper's own STAGES, one more than the kernel's
])
def test_pipe_declared_in_a_helper_from_a_constexpr(tmp_path, capsys, param, arg, stages):
    text = kernel().replace(
        "    p = tle.pipe(capacity=STAGES, t=tle.gpu.alloc([STAGES, 64], tl.float32))\n",
        f"    p = mk({arg})\n").replace("\n\ndef prod(", HELPER.replace("PARAM", param.split(":")[0])
                                     .replace("def mk(" + param.split(":")[0], "def mk(" + param)
                                     + "\n\ndef prod(")
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, "verified")
    path = write_kernel(tmp_path, text)
    info, = kernels_of_source(text, str(path), bind={"STAGES": 2})
    assert info.program.pipes[0].capacity == stages
    src = gluon_source((str(path), "k"), constexprs={"STAGES": 2}).source
    assert f"gl.allocate_shared_memory(gl.float32, [{stages}, 64]" in src
    assert src.count(f"gl.allocate_shared_memory(gl.int64, [{stages}, 1]") == 2


def test_pipe_declared_in_a_helper_from_a_runtime_value_is_refused(tmp_path, capsys):
    text = kernel().replace(
        "    p = tle.pipe(capacity=STAGES, t=tle.gpu.alloc([STAGES, 64], tl.float32))\n",
        "    p = mk(N)\n").replace("\n\ndef prod(", HELPER.replace("PARAM", "STAGES")
                                 + "\n\ndef prod(")
    code, err = dump(tmp_path, capsys, text)
    assert code == 1 and ": verified for " not in err, err


OTHER = '''

@tle.jit(num_warps=4)
def NAME(x_ptr, y_ptr, N, STAGES: tl.constexpr):
    tle.assume(N >= 0)
    p = tle.pipe(capacity=CAP, t=tle.gpu.alloc([CAP, 64], tl.float32))
    tle.gpu.warp_specialize([(prod, (p, x_ptr, N)), (cons, (p, y_ptr, N))], [4], [64])
'''

KEYED = '''

SIG = {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32", "STAGES": "constexpr"}
DEFAULT_CONFIG = {"k": {"signature": SIG_K, "constexprs": {"STAGES": 2}, "num_warps": 4},
                  "k2": {"signature": SIG_K, "constexprs": {"STAGES": S2}, "num_warps": 4}}
'''


def keyed_file(cap2: str, s2: int) -> str:
    sig = ('{"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32", "STAGES": "constexpr"}')
    return (kernel(value=None) + OTHER.replace("NAME", "k2").replace("CAP", cap2)
            + KEYED.replace("SIG_K", sig).replace("S2", str(s2)))


def test_a_file_keyed_by_kernel_reads_each_with_its_own_values(tmp_path, capsys):
    """One kernel's capacity=STAGES must not make the file's other kernels unreadable: each is
    read with its own DEFAULT_CONFIG entry (here k2's capacity is a literal)."""
    code, err = dump(tmp_path, capsys, keyed_file("2", 7))
    expect(code, err, "verified")
    assert "k: verified for" in err and "k2: verified for" in err
    assert "with STAGES = 2 (read specialised)" in err
    code, err = dump(tmp_path, capsys, keyed_file("2", 7), "--kernel", "k2")
    expect(code, err, "verified")
    code, err = dump(tmp_path, capsys, keyed_file("STAGES", 2))
    expect(code, err, "verified")


def test_kernel_asked_that_binds_nothing_gets_no_specialised_line(tmp_path, capsys):
    """One DEFAULT_CONFIG for the file, k reading only with STAGES bound, k2 of a literal
    capacity: `--kernel k2` shows k2 as it is read, so no line says the file was read
    specialised to STAGES=2 (k2 has no STAGES); `--kernel k` keeps the line."""
    text = kernel() + (OTHER.replace("NAME", "k2").replace("CAP", "2")
                       .replace(", STAGES: tl.constexpr", ""))
    code, err = dump(tmp_path, capsys, text, "--kernel", "k2")
    expect(code, err, "verified")
    assert "read specialised" not in err and "STAGES" not in err
    code, err = dump(tmp_path, capsys, text, "--kernel", "k")
    expect(code, err, "verified")
    assert "read specialised to STAGES=2" in err and "with STAGES = 2" in err


def test_one_constexpr_of_two_values_in_two_kernels_each_with_its_own(tmp_path, capsys):
    """k's entry gives STAGES 2, k2's 3: each kernel is verified and lowered with its own."""
    code, err = dump(tmp_path, capsys, keyed_file("STAGES", 3))
    expect(code, err, "verified")
    assert "read specialised to k: STAGES=2; k2: STAGES=3" in err
    assert "k: verified for every value of N (N >= 0), with STAGES = 2" in err
    assert "k2: verified for every value of N (N >= 0), with STAGES = 3" in err
    path = write_kernel(tmp_path, keyed_file("STAGES", 3))
    code, out, err = run_dump(capsys, "--gluon", "--kernel", "k2", str(path))
    assert code == 0, err
    assert "gl.allocate_shared_memory(gl.float32, [3, 64]" in out
    assert "[2, 64]" not in out
    code, err = dump(tmp_path, capsys, keyed_file("STAGES", 3), "--param", "STAGES=4")
    expect(code, err, "verified")
    assert err.count("with STAGES = 4 (read specialised)") == 2


TWO_PIPES = """import triton.language as tl
import tle_compiler as tle


@tle.jit(num_warps=4)
def k(x_ptr, y_ptr, N, A: tl.constexpr, B: tl.constexpr):
    p = tle.pipe(capacity=A, t=tle.gpu.alloc([A, 64], tl.float32))
    q = tle.pipe(capacity=B, u=tle.gpu.alloc([B, 64], tl.float32))
    tle.gpu.warp_specialize([(prod, (p, q, x_ptr, N)), (cons, (p, q, y_ptr, N))], [4], [64])


def prod(p, q, x_ptr, N):
    w = p.writer()
    v = q.reader()
    for i in range(N):
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + i * 64 + tl.arange(0, 64)))
        w.commit(i)
        r = v.wait(i)
        tl.store(x_ptr + i * 64 + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(r.slot.u)))
        v.release(i)


def cons(p, q, y_ptr, N):
    r = p.reader()
    o = q.writer()
    for i in range(N):
        s = r.wait(i)
        x = tl.load(tle.gpu.local_ptr(s.slot.t))
        r.release(i)
        t = o.acquire(i)
        tl.store(tle.gpu.local_ptr(t.u), x + 1)
        o.commit(i)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32", "A": "constexpr", "B": "constexpr"},
                  "constexprs": {"A": 2, "B": 3}, "num_warps": 4}
"""


def test_two_pipes_whose_capacities_read_two_constexprs(tmp_path, capsys):
    """The generic build stops at the first capacity (A); the build binding A then stops at the
    second (B): every build binds both."""
    code, err = dump(tmp_path, capsys, TWO_PIPES)
    expect(code, err, "verified")
    assert "with A = 2, B = 3 (read specialised)" in err
    path = write_kernel(tmp_path, TWO_PIPES)
    src = gluon_source((str(path), "k"), constexprs={"A": 1, "B": 4}).source
    assert "gl.allocate_shared_memory(gl.float32, [1, 64]" in src
    assert "gl.allocate_shared_memory(gl.float32, [4, 64]" in src
    info, = kernels_of_source(TWO_PIPES, str(path), bind={"A": 3, "B": 2})
    assert [p.capacity for p in info.program.pipes] == [3, 2]
    without_b = TWO_PIPES.replace('"constexprs": {"A": 2, "B": 3}', '"constexprs": {"A": 2}') \
        .replace(', "B": "constexpr"}', '}')
    code, err = dump(tmp_path, capsys, without_b)
    expect(code, err, ("rejected", "[constexpr-operand]", "is read from constexpr B"))
    code, err = dump(tmp_path, capsys, without_b, "--param", "B=2")
    expect(code, err, "verified")


def test_kernel_asked_for_that_binds_nothing_beside_one_that_reads_only_specialised(tmp_path,
                                                                                   capsys):
    """`--kernel k2` of a keyed file where k (capacity=STAGES) reads only specialised and k2 has
    no constexpr: k2 is read as it is and verified (it was refused with k's capacity error)."""
    text = keyed_file("2", 7).replace(
        "def k2(x_ptr, y_ptr, N, STAGES: tl.constexpr):", "def k2(x_ptr, y_ptr, N):").replace(
        '"k2": {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32", '
        '"STAGES": "constexpr"}, "constexprs": {"STAGES": 7}',
        '"k2": {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"}, '
        '"constexprs": {}')
    assert "def k2(x_ptr, y_ptr, N):" in text and '"constexprs": {}' in text
    code, err = dump(tmp_path, capsys, text, "--kernel", "k2")
    expect(code, err, "verified")
    assert "read specialised" not in err
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, "verified")
    assert "with STAGES = 2 (read specialised)" in err
