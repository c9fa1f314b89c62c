"""The builder of the kernel IR (frontend/build.py): the one reader of a kernel's Python.

What it must get right: names bound once (locals, module constants by value, dtypes), helpers
inlined from this module or any module it imports (relative imports too) with their locals
renamed, pipe verbs resolved to events of named pipes and readers, Python's evaluation order
kept around inlined helpers, and decisions made at compile time (a constant `if`) taken.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tle_compiler.diagnostics import TleError
from tle_compiler.frontend.build import build_file
from tle_compiler.ir import kernel as K

KERNEL = '''
import triton.language as tl

import tle_compiler as tle
{imports}

BK = tl.constexpr(64)


@tle.jit(num_warps=4)
def k(x_ptr, N, BLOCK: tl.constexpr):
    ring = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, BK], tl.float32))
    tle.gpu.warp_specialize([(produce, (ring, x_ptr, N)), (consume, (ring, x_ptr, N))], [4], [232])


def produce(ring, x_ptr, N):
    w = ring.writer()
    for t in range(N):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + t * BK + tl.arange(0, BK)))
        w.commit(t)


def consume(ring, x_ptr, N):
    r = ring.reader()
    for t in range(N):
{consume}
'''


def write_package(tmp_path: Path, consume: str, imports: str = "", common: str = "") -> Path:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "common.py").write_text(textwrap.dedent(common))
    path = pkg / "kern.py"
    path.write_text(KERNEL.format(imports=imports, consume=textwrap.indent(
        textwrap.dedent(consume).strip(), " " * 8)))
    return path


def events(body) -> list[tuple[str, str, str]]:
    return [(e.verb, e.handle.pipe, type(e.index).__name__) for e in K.events(body)]


def ops(body) -> list[str]:
    out = []
    for s in K.walk_stmts(body):
        for e in K.stmt_exprs(s):
            out += [x.name for x in K.walk_expr(e) if isinstance(x, K.Op)]
    return out


def test_a_kernel_gets_its_pipes_params_constants_and_partitions(tmp_path):
    path = write_package(tmp_path, '''
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t)
        tl.store(x_ptr + tl.arange(0, BK), v)''')
    (k,) = build_file(path)
    assert [p.name for p in k.params] == ["x_ptr", "N", "BLOCK"]
    assert [p.constexpr for p in k.params] == [False, False, True]
    assert k.num_warps == 4 and dict(k.consts) == {"BK": 64}
    (pipe,) = k.pipes
    assert (pipe.name, pipe.capacity, pipe.readers) == ("ring", 2, ())
    assert [(b.name, b.shape, b.dtype) for b in pipe.fields] == [("tile", (2, 64), "fp32")]
    produce, consume = k.partitions
    assert (produce.name, produce.default, consume.warps, consume.regs) == ("produce", True, 4, 232)
    assert [name for name, _ in produce.bindings] == ["ring", "x_ptr", "N"]
    assert isinstance(produce.bindings[0][1], K.PipeRef)
    assert events(produce.body) == [("acquire", "ring", "Name"), ("commit", "ring", "Name")]
    assert events(consume.body) == [("wait", "ring", "Name"), ("release", "ring", "Name")]
    assert ops(consume.body) == ["tl.load", "tle.gpu.local_ptr", "tl.store", "tl.arange"]


def test_helpers_come_from_another_module_of_the_package(tmp_path):
    common = '''
    import triton.language as tl
    import tle_compiler as tle

    SCALE = tl.constexpr(0.5)


    def drain(r, t, x_ptr):
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile)) * SCALE
        r.release(t)
        return v
    '''
    path = write_package(tmp_path, '''
        v = drain(r, t, x_ptr)
        tl.store(x_ptr + tl.arange(0, BK), v)''', imports="from .common import drain", common=common)
    (k,) = build_file(path)
    consume = k.partitions[1]
    assert events(consume.body) == [("wait", "ring", "Name"), ("release", "ring", "Name")]
    assert dict(k.consts) == {"BK": 64, "SCALE": 0.5}
    # the helper's locals are renamed, and its result is a name the caller stores
    names = [s.target for s in K.walk_stmts(consume.body) if isinstance(s, K.Assign)]
    assert any(n.startswith("_drain") and n.endswith("_res") for n in names), names
    (store,) = [s for s in K.walk_stmts(consume.body)
                if isinstance(s, K.Eval) and isinstance(s.value, K.Op)]
    assert store.value.name == "tl.store"
    # the inlined statements carry the helper's file in their locations
    assert any(s.loc.file.endswith("common.py") for s in K.walk_stmts(consume.body))


def test_a_whole_module_import_works_too(tmp_path):
    common = '''
    def release(r, t):
        r.release(t)
    '''
    path = write_package(tmp_path, '''
        res = r.wait(t)
        common.release(r, t)''', imports="from . import common", common=common)
    (k,) = build_file(path)
    assert events(k.partitions[1].body) == [("wait", "ring", "Name"), ("release", "ring", "Name")]


def test_python_evaluation_order_is_kept_around_an_inlined_helper(tmp_path):
    # the load (a slot read) is evaluated before the helper that releases the slot: the KIR must
    # not hoist the helper's release above it
    common = '''
    def give_back(r, t):
        r.release(t)
        return 0
    '''
    path = write_package(tmp_path, '''
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile)) + give_back(r, t)''',
                         imports="from .common import give_back", common=common)
    (k,) = build_file(path)
    order = []
    for s in K.walk_stmts(k.partitions[1].body):
        for e in K.stmt_exprs(s):
            for x in K.walk_expr(e):
                if isinstance(x, K.Event):
                    order.append(x.verb)
                elif isinstance(x, K.Op) and x.name == "tl.load":
                    order.append("load")
    assert order == ["wait", "load", "release"]


def _consumer_body(k):
    return [s for s in k.partitions[1].body[0].body]


def test_a_value_only_helper_is_used_in_place_without_temporaries(tmp_path):
    # the lowering recognises patterns in a statement (a global load stored to a slot is a
    # cp.async); a helper that only computes a value must leave the statement whole
    common = '''
    import triton.language as tl

    def offsets(t, n):
        return t * n + tl.arange(0, n)
    '''
    path = write_package(tmp_path, '''
        res = r.wait(t)
        tl.store(x_ptr + offsets(t, BK), tl.load(tle.gpu.local_ptr(res.slot.tile)))
        r.release(t)''', imports="from .common import offsets", common=common)
    (k,) = build_file(path)
    body = _consumer_body(k)
    assert [type(s).__name__ for s in body] == ["Assign", "Eval", "Eval"]
    store = body[1].value
    assert isinstance(store, K.Op) and store.name == "tl.store"
    assert isinstance(store.args[1], K.Op) and store.args[1].name == "tl.load"
    assert any(isinstance(x, K.Op) and x.name == "tl.arange" for x in K.walk_expr(store.args[0]))


def test_a_helper_that_loads_is_built_in_order(tmp_path):
    # a load is not a pure value: the helper is inlined in sequential form
    common = '''
    import triton.language as tl

    def peek(ptr):
        return tl.load(ptr)
    '''
    path = write_package(tmp_path, '''
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile)) + peek(x_ptr)
        r.release(t)''', imports="from .common import peek", common=common)
    (k,) = build_file(path)
    loads = [s for s in _consumer_body(k) if isinstance(s, K.Assign)
             and isinstance(s.value, K.Op) and s.value.name == "tl.load"]
    assert len(loads) == 2 and loads[0].value.args[0] != loads[1].value.args[0]


def test_tuple_assignment_reads_the_right_side_before_assigning(tmp_path):
    # `a, b = b, a` swaps; a helper returning a tuple built from its argument, assigned back to
    # that argument's variable, must not read the variable it has just assigned
    common = '''
    def pair(x):
        return x * 2, x + 1
    '''
    path = write_package(tmp_path, '''
        a = t
        b = t + 3
        a, b = b, a
        a, c = pair(a)
        tl.store(x_ptr + t, a + b + c)
        res = r.wait(t)
        r.release(t)''', imports="from .common import pair", common=common)
    (k,) = build_file(path)
    env = {"t": 10}

    def ev(e):
        if isinstance(e, K.Const):
            return e.value
        if isinstance(e, K.Name):
            return env[e.id]
        assert isinstance(e, K.BinOp)
        lhs, rhs = ev(e.lhs), ev(e.rhs)
        return {"+": lhs + rhs, "*": lhs * rhs}[e.op]

    for s in _consumer_body(k):
        if isinstance(s, K.Assign) and not isinstance(s.value, K.Event):
            env[s.target] = ev(s.value)
    # a, b = 13, 10; a, c = 26, 14
    assert (env["a"], env["b"], env["c"]) == (26, 10, 14)


def test_a_constant_if_keeps_only_the_branch_that_runs(tmp_path):
    path = write_package(tmp_path, '''
        res = r.wait(t)
        if BK > 32:
            r.release(t)
        else:
            r.release(t + 1)''')
    (k,) = build_file(path)
    assert not any(isinstance(s, K.If) for s in K.walk_stmts(k.partitions[1].body))
    assert [str(e.index.id) for e in K.events(k.partitions[1].body)] == ["t", "t"]


def test_handles_resolve_to_their_pipe_reader_and_view(tmp_path):
    src = '''
import triton.language as tl
import tle_compiler as tle


@tle.jit
def k(x_ptr, N):
    kv = tle.pipe(capacity=1, readers=("a", "b"), x=tle.gpu.alloc([1, 64], tl.int32),
                  y=tle.gpu.alloc([1, 64], tl.int32))
    tle.gpu.warp_specialize([(p, (kv, N)), (a, (kv, N)), (b, (kv, N))], [4, 4], [232, 232])


def p(kv, N):
    w = kv.writer()
    for t in range(N):
        w.acquire(t)
        w.commit(t)


def a(kv, N):
    r = kv.reader("a")
    for t in range(N):
        r.wait(t)
        r.release(t)


def b(kv, N):
    r = kv.reader("b", fields=("y",))
    for t in range(N):
        r.wait(t)
        r.release(t)
'''
    path = tmp_path / "k.py"
    path.write_text(src)
    (k,) = build_file(path)
    (ev,) = [e for e in K.events(k.partitions[2].body) if e.verb == "wait"]
    assert (ev.handle.side, ev.handle.reader, ev.handle.view) == ("reader", "b", ("y",))
    (ev,) = [e for e in K.events(k.partitions[1].body) if e.verb == "wait"]
    assert (ev.handle.reader, ev.handle.view) == ("a", None)


def test_a_verb_passed_as_a_callback_is_refused(tmp_path):
    common = '''
    def notify(f, t):
        f(t)
    '''
    path = write_package(tmp_path, '''
        res = r.wait(t)
        notify(r.release, t)''', imports="from .common import notify", common=common)
    with pytest.raises(TleError) as e:
        build_file(path)
    assert e.value.check == "verb-as-value"


def test_bound_constexprs_are_read_as_their_values(tmp_path):
    path = write_package(tmp_path, '''
        res = r.wait(t)
        r.release(t)''')
    text = path.read_text().replace("for t in range(N):\n        res",
                                    "for t in range(BLOCK):\n        res")
    path.write_text(text.replace("(consume, (ring, x_ptr, N))", "(consume, (ring, x_ptr, BLOCK))")
                    .replace("def consume(ring, x_ptr, N):", "def consume(ring, x_ptr, BLOCK):"))
    (k,) = build_file(path, bind={"BLOCK": 8})
    (loop,) = [s for s in k.partitions[1].body if isinstance(s, K.For)]
    assert loop.stop == K.Const(8)


@pytest.mark.parametrize("stmt,check", [
    ("for j in range(3):\n    pass\nelse:\n    pass", "unsupported-control-flow"),
    ("while t < 3:\n    t += 1\nelse:\n    pass", "unsupported-control-flow"),
    ("break", "unsupported-control-flow"),
])
def test_constructs_triton_rejects_are_refused_at_their_line(tmp_path, stmt, check):
    path = write_package(tmp_path, stmt)
    with pytest.raises(TleError) as e:
        build_file(path)
    assert e.value.check == check
    assert e.value.loc.line >= 27


def test_a_while_loop_without_events_is_read_the_lowering_refuses_it(tmp_path):
    # the frontend reads it (its slot accesses may happen); only `while ... else` is refused
    path = write_package(tmp_path, "j = 0\nwhile j < 3:\n    j += 1")
    (k,) = build_file(path)
    (loop,) = [s for s in K.walk_stmts(k.partitions[1].body) if isinstance(s, K.While)]
    assert isinstance(loop.cond, K.Compare) and loop.loc.line >= 27


def test_every_bundled_example_and_gpu_test_kernel_builds():
    root = Path(__file__).resolve().parent.parent
    pkg = root / ("tle_kernels" if (root / "tle_kernels").is_dir() else "kernels")
    files = [pkg / "sparse_mla_pipe.py", pkg / "sparse_mla_seesaw.py",
             *sorted((pkg / "examples").glob("*.py")), *sorted((pkg / "gpu_tests").glob("*.py"))]
    built = 0
    for f in files:
        if f.name == "__init__.py":
            continue
        # (a kernel whose pipe capacity reads a constexpr builds only with it bound)
        bind = {"TOPK": 2048, "BLOCK_H": 64} if f.name == "sparse_mla_seesaw.py" else \
            {"STAGES": 2} if f.name == "ring_stages.py" else None
        for k in build_file(f, bind=bind):
            assert k.partitions and all(p.body for p in k.partitions), (f, k.name)
            built += 1
    assert built >= 15


# ----------------------------------------------------------------------------------------------
# DEFAULT_CONFIG, and one reading per kernel


CONFIG = '''
DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "N": "i32", "BLOCK": "constexpr"},
                  "constexprs": {"BLOCK": 64}, "num_warps": 4, "grid": (1,), "sizes": [2, 3]}
'''


def test_default_config_is_read_into_the_kernel_ir(tmp_path, monkeypatch):
    from tle_compiler.frontend.config_literal import decode_config
    from tle_compiler.lowering.dumping import default_config

    path = write_package(tmp_path, "res = r.wait(t)\nr.release(t)")
    path.write_text(path.read_text() + CONFIG)
    (k,) = build_file(path)
    encoded = K.get_attr(k, "default_config")
    assert encoded[0] == "dict" and all(isinstance(x, tuple) for x in encoded[1])
    want = {"signature": {"x_ptr": "*fp32", "N": "i32", "BLOCK": "constexpr"},
            "constexprs": {"BLOCK": 64}, "num_warps": 4, "grid": (1,), "sizes": [2, 3]}
    assert decode_config(encoded) == want
    assert type(decode_config(encoded)["grid"]) is tuple  # a tuple stays a tuple, a list a list
    assert type(decode_config(encoded)["sizes"]) is list

    # dumping reads it from the kernel IR the frontend built (the source is not parsed again)
    assert default_config(str(path), "k") == want
    import tle_compiler.frontend as frontend

    other = K.with_attrs(k, default_config=("dict", (("signature", ("dict", ())),
                                                     ("constexprs", ("dict", (("BLOCK", 8),))))))
    monkeypatch.setattr(frontend, "read_kir", lambda p, name=None: [other])
    assert default_config(str(path), "k") == {"signature": {}, "constexprs": {"BLOCK": 8}}


def test_a_default_config_per_kernel_and_no_literal(tmp_path):
    from tle_compiler.lowering.dumping import default_config

    path = write_package(tmp_path, "res = r.wait(t)\nr.release(t)")
    base = path.read_text()
    path.write_text(base + '\nDEFAULT_CONFIG = {"k": {"signature": {}, "constexprs": {"BLOCK": 8}}}\n')
    assert default_config(str(path), "k") == {"signature": {}, "constexprs": {"BLOCK": 8}}
    path.write_text(base + "\nDEFAULT_CONFIG = dict(signature={})\n")
    line = len(base.splitlines()) + 2
    with pytest.raises(TleError, match="DEFAULT_CONFIG must be a literal dict") as e:
        default_config(str(path), "k")
    assert e.value.loc.line == line
    path.write_text(base)
    with pytest.raises(TleError, match="has no DEFAULT_CONFIG"):
        default_config(str(path), "k")
    (k,) = build_file(path)
    assert K.get_attr(k, "default_config") is None


def test_a_kernel_is_built_once_and_lowered_from_the_kir_it_was_verified_from(tmp_path):
    from tle_compiler.frontend import read_kernels, read_kir
    from tle_compiler.lowering.codegen import kernel_ir
    from tle_compiler.lowering.compile import kernel_info_of

    path = write_package(tmp_path, "res = r.wait(t)\nr.release(t)")
    (info,) = read_kernels(path)
    assert isinstance(info.kir, K.Kernel) and info.kir.name == "k"
    # read again, specialised, by (path, name): the same KIR object
    (again,) = read_kernels(path)
    (special,) = read_kernels(path, bind={"BLOCK": 8})
    assert again.kir is info.kir and special.kir is info.kir
    assert read_kir(path)[0] is info.kir
    lowered = kernel_info_of((str(path), "k"))
    assert kernel_ir(lowered) is read_kir(str(path), name="k")[0]
    assert kernel_ir(lowered) is lowered.kir
    # an edit of the file, or of a module it imports, is a new reading
    path.write_text(path.read_text() + "\n")
    (edited,) = read_kernels(path)
    assert edited.kir is not info.kir
    common = path.parent / "common.py"
    path.write_text(path.read_text().replace("BK = tl.constexpr(64)", "from .common import BK"))
    common.write_text("BK = 64\n")
    (first,) = read_kernels(path)
    assert read_kernels(path)[0].kir is first.kir
    import os

    common.write_text("BK = 128\n")
    st = os.stat(common)
    os.utime(common, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    (second,) = read_kernels(path)
    assert second.kir is not first.kir
    assert dict(second.kir.consts) != dict(first.kir.consts)


# ----------------------------------------------------------------------------------------------
# imports, resolved as Python resolves them
#
# Each case writes a package (pkg/__init__.py, pkg/kern.py with the kernel, and the modules it
# imports) and reads the address the consumer stores to: `tl.store(x_ptr + <expr>, t)`.


def write_modules(tmp_path: Path, expr: str, imports: str, **modules: str) -> Path:
    """pkg/kern.py whose consumer stores to ``x_ptr + expr`` (between a wait and a release), with
    ``imports`` at module level, and pkg/<name>.py for each of ``modules``."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for name, text in modules.items():
        (pkg / f"{name}.py").write_text(textwrap.dedent(text))
    path = pkg / "kern.py"
    consume = f"res = r.wait(t)\ntl.store(x_ptr + ({expr}), t)\nr.release(t)"
    path.write_text(KERNEL.format(imports=textwrap.dedent(imports),
                                  consume=textwrap.indent(consume, " " * 8)))
    return path


def stored_offset(k: K.Kernel) -> K.Expr:
    """What the consumer adds to x_ptr in its one tl.store."""
    (store,) = [s.value for s in K.walk_stmts(k.partitions[1].body)
                if isinstance(s, K.Eval) and isinstance(s.value, K.Op) and s.value.name == "tl.store"]
    addr = store.args[0]
    assert isinstance(addr, K.BinOp) and addr.op == "+" and addr.lhs == K.Name("x_ptr"), addr
    return addr.rhs


def line_of(path: Path, text: str) -> int:
    (n,) = [i for i, ln in enumerate(path.read_text().splitlines(), 1) if text in ln]
    return n


CONSTS = '''
import triton.language as tl

A = tl.constexpr(3)
STEP = tl.constexpr(2)
DT = tl.bfloat16


def triple(x):
    return x * A
'''

G, T = K.Global, K.Name("t")


def test_a_module_level_alias_of_an_imported_modules_constant(tmp_path):
    path = write_modules(tmp_path, "STEP", "from . import common\nSTEP = common.STEP\n",
                         common=CONSTS)
    (k,) = build_file(path, bind={"TOPK": 8})
    assert stored_offset(k) == G("STEP", 2)
    assert dict(k.consts) == {"BK": 64, "STEP": 2}


def test_aliases_of_a_helper_a_dtype_a_module_and_a_library_function(tmp_path):
    path = write_modules(tmp_path, "tri(t) + tl.zeros([4], DT).to(D2) + c.A + ld(x_ptr)", '''
        from . import common
        tri = common.triple
        DT = common.DT
        c = common
        D2 = tl.float32
        ld = tl.load
        ''', common=CONSTS)
    (k,) = build_file(path)
    zeros = K.Op("to", (K.Op("tl.zeros", (K.TupleExpr((K.Const(4),)), K.DType("bf16"))),
                        K.DType("fp32")))
    tri = K.BinOp("*", T, G("A", 3))
    want = K.BinOp("+", K.BinOp("+", K.BinOp("+", tri, zeros), G("A", 3)),
                   K.Op("tl.load", (K.Name("x_ptr"),)))
    assert stored_offset(k) == want


def test_from_import_as_renames(tmp_path):
    path = write_modules(tmp_path, "t3(t) + AA", "from .common import A as AA, triple as t3\n",
                         common=CONSTS)
    (k,) = build_file(path)
    assert stored_offset(k) == K.BinOp("+", K.BinOp("*", T, G("A", 3)), G("A", 3))


def test_a_module_import_reads_its_helpers_and_constants(tmp_path):
    path = write_modules(tmp_path, "common.triple(t) + common.STEP", "from . import common\n",
                         common=CONSTS)
    (k,) = build_file(path)
    assert stored_offset(k) == K.BinOp("+", K.BinOp("*", T, G("A", 3)), G("STEP", 2))


def test_absolute_imports_of_the_package_on_sys_path(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    path = write_modules(tmp_path, "c.triple(t) + pkg.common.STEP",
                         "import pkg.common as c\nimport pkg.common\n", common=CONSTS)
    (k,) = build_file(path)
    assert stored_offset(k) == K.BinOp("+", K.BinOp("*", T, G("A", 3)), G("STEP", 2))
    # `import pkg` alone does not import pkg.common: Python has no attribute pkg.common then
    path.write_text(path.read_text().replace("import pkg.common as c\nimport pkg.common\n",
                                             "import pkg\n").replace("c.triple(t) + ", ""))
    with pytest.raises(TleError, match="module 'pkg' has no attribute 'common'") as e:
        build_file(path)
    assert e.value.loc.line == line_of(path, "tl.store(x_ptr + ")
    path.write_text(path.read_text().replace("import pkg\n", "import pkg.nothere as c\n"))
    with pytest.raises(TleError, match="package 'pkg' .* has no module 'nothere'") as e:
        build_file(path)
    assert e.value.check == "bad-import" and e.value.loc.line == line_of(path, "pkg.nothere")


def test_constants_defined_from_other_modules_constants(tmp_path):
    base = "import triton.language as tl\nA0 = tl.constexpr(5)\nF0 = tl.constexpr(0.25)\n"
    common = "from .base import A0, F0\nfrom . import base\nA = A0 * 2\nF = base.F0 * 2\n"
    path = write_modules(tmp_path, "B + C + F", "from . import common\nB = common.A * 2\n"
                         "C = tl.constexpr(B + 1)\nF = common.F\n", common=common, base=base)
    (k,) = build_file(path)
    assert stored_offset(k) == K.BinOp("+", K.BinOp("+", G("B", 20), G("C", 21)), G("F", 0.5))
    assert dict(k.consts) == {"BK": 64, "B": 20, "C": 21, "F": 0.5}


def test_a_helper_calls_a_helper_its_own_module_imports(tmp_path):
    a = "from .b import inner\n\n\ndef outer(x):\n    return inner(x) + 1\n"
    b = "import triton.language as tl\nK5 = tl.constexpr(5)\n\n\ndef inner(x):\n    return x * K5\n"
    path = write_modules(tmp_path, "outer(t)", "from .a import outer\n", a=a, b=b)
    (k,) = build_file(path)
    assert stored_offset(k) == K.BinOp("+", K.BinOp("*", T, G("K5", 5)), K.Const(1))


def test_two_modules_with_the_same_helper_and_constant_names(tmp_path):
    mod = "import triton.language as tl\nS = tl.constexpr({})\n\n\ndef scale(x):\n    return x * S\n"
    path = write_modules(tmp_path, "a.scale(t) + b.scale(t) + scale(t)",
                         "from . import a, b\nfrom .b import scale\n",
                         a=mod.format(2), b=mod.format(3))
    (k,) = build_file(path)
    b3 = K.BinOp("*", T, G("S_1", 3))
    assert stored_offset(k) == K.BinOp("+", K.BinOp("+", K.BinOp("*", T, G("S", 2)), b3), b3)
    assert dict(k.consts) == {"BK": 64, "S": 2, "S_1": 3}


def test_the_last_module_level_binding_of_a_name_wins(tmp_path):
    common = "import triton.language as tl\nSCALE = tl.constexpr(0.25)\nA = tl.constexpr(3)\n"
    path = write_modules(tmp_path, "SCALE + A", '''
        SCALE = tl.constexpr(0.5)
        from .common import SCALE
        from .common import A
        A = tl.constexpr(7)
        ''', common=common)
    (k,) = build_file(path)
    assert stored_offset(k) == K.BinOp("+", G("SCALE", 0.25), G("A", 7))


def test_a_local_name_shadows_a_module_level_one(tmp_path):
    common = CONSTS + "\n\ndef plus(A):\n    return A + STEP\n"
    path = write_modules(tmp_path, "plus(t) + common", "from .common import plus, A\n"
                         "from . import common\n", common=common)
    text = path.read_text().replace("        res = r.wait(t)", "        common = t * A\n"
                                    "        res = r.wait(t)")
    path.write_text(text)
    (k,) = build_file(path)
    # the helper's parameter A is the argument t, the local `common` the partition's variable
    assert stored_offset(k) == K.BinOp("+", K.BinOp("+", T, G("STEP", 2)), K.Name("common"))


def test_a_circular_import_between_helper_modules(tmp_path):
    a = ("import triton.language as tl\nfrom . import b\nA = tl.constexpr(1)\n\n\n"
         "def f(x):\n    return b.g(x) + A\n")
    b = "from . import a\n\n\ndef g(x):\n    return x * a.A\n"
    path = write_modules(tmp_path, "f(t)", "from .a import f\n", a=a, b=b)
    (k,) = build_file(path)
    assert stored_offset(k) == K.BinOp("+", K.BinOp("*", T, G("A", 1)), G("A", 1))
    # constants defined from each other: no value (Python reads a partially initialised module)
    (tmp_path / "pkg" / "a.py").write_text("from . import b\nX = b.Y\n\n\ndef f(x):\n"
                                           "    return x + X\n")
    (tmp_path / "pkg" / "b.py").write_text("from . import a\nY = a.X + 1\n")
    with pytest.raises(TleError, match="circular definition of module-level name 'X'") as e:
        build_file(path)
    assert e.value.loc.file.endswith("a.py") and e.value.loc.line == 2


def test_a_star_import_is_refused_at_its_line(tmp_path):
    path = write_modules(tmp_path, "A", "from .common import *\n", common=CONSTS)
    with pytest.raises(TleError, match=r"`from \.common import \*`: star imports are not "
                                       r"supported") as e:
        build_file(path)
    assert e.value.check == "bad-import" and e.value.loc.line == line_of(path, "import *")


@pytest.mark.parametrize("imports,match", [
    ("from .missing import x\n", r"no module 'missing' in .*pkg \(neither missing\.py"),
    ("from . import missing\n", r"cannot import name 'missing' from 'pkg' \("),
    ("from ..missing import x\n", r"no module 'missing' in "),
    ("from .common import nothere as x\n", r"cannot import name 'nothere' from 'pkg\.common'"),
])
def test_an_import_of_something_missing_is_an_error_at_the_import(tmp_path, imports, match):
    path = write_modules(tmp_path, "x", imports, common=CONSTS)
    with pytest.raises(TleError, match=match) as e:
        build_file(path)
    assert e.value.check == "bad-import"
    assert e.value.loc.line == line_of(path, imports.strip())


@pytest.mark.parametrize("imports,match", [
    # Triton reads only tl.constexpr globals, dtypes, modules and functions
    ("import torch\nX = torch.zeros(3)\n", r"module-level name 'X' = `torch.zeros\(3\)` is not a "
                                           r"compile-time value"),
    ("X = (1, 2)\n", r"module-level name 'X' = `\(1, 2\)` is not a compile-time value"),
    ("X, Y = 1, 2\n", r"module-level name 'X' is not a compile-time value"),
    ("from . import common\nX = common.NOPE\n", r"module 'pkg\.common' has no attribute 'NOPE'"),
])
def test_module_level_names_triton_cannot_read_are_refused(tmp_path, imports, match):
    path = write_modules(tmp_path, "X", imports, common=CONSTS)
    with pytest.raises(TleError, match=match) as e:
        build_file(path)
    assert e.value.check == "unknown-name"
    assert e.value.loc.line in (line_of(path, imports.strip().splitlines()[-1]),
                                line_of(path, "tl.store(x_ptr + "))


def test_an_import_inside_a_function_is_refused_as_triton_does(tmp_path):
    path = write_modules(tmp_path, "A", "", common=CONSTS)
    path.write_text(path.read_text().replace("        res = r.wait(t)",
                                             "        from .common import A\n        res = r.wait(t)"))
    with pytest.raises(TleError, match="Triton 3.6 rejects it") as e:
        build_file(path)
    assert e.value.loc.line == line_of(path, "from .common import A")
