"""The names the lowering allocates (rings, barrier arrays, closed flags) are unique in the module.

Rings are ``<pipe>_<field>`` and barrier arrays ``<pipe>_full<g>`` / ``<pipe>_empty<g>``: pipe
``a`` field ``x_tile`` and pipe ``a_x`` field ``tile``, or field ``full0`` of pipe ``a`` and the
array ``a_full0``, or pipe ``x`` field ``ptr`` and the argument ``x_ptr``, got one name, and
``tle-dump --gluon`` printed a partition with a duplicate parameter (exit 0) that ``--ttgir``
could not compile. Now a clashing name gets the first free ``__<k>`` suffix (lowering/names.py);
a kernel without a clash keeps its names (tests/test_golden_gluon.py).
"""

from __future__ import annotations

import ast
import re

import pytest

from tle_compiler.cli.dump import main
from tle_compiler.lowering.compile import gluon_source

KERNEL = '''
import triton.language as tl
import tle_compiler as tle


@tle.jit(num_warps=4)
def collide(x_ptr, y_ptr, N):
    p = tle.pipe(capacity=2, F1=tle.gpu.alloc([2, 64, 64], tl.float32))
    q = tle.pipe(capacity=1, F2=tle.gpu.alloc([1, 64, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (p, q, x_ptr, N)), (consume, (p, q, y_ptr, N))],
                            [4], [232])


def produce(p, q, x_ptr, N):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    wp = p.writer()
    wq = q.writer()
    for t in range(N):
        sp = wp.acquire(t)
        tl.store(tle.gpu.local_ptr(sp.F1), tl.load(x_ptr + offs))
        wp.commit(t)
        sq = wq.acquire(t)
        tl.store(tle.gpu.local_ptr(sq.F2), tl.load(x_ptr + 4096 + offs) * 2.0)
        wq.commit(t)


def consume(p, q, y_ptr, N):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    rp = p.reader()
    rq = q.reader()
    acc = tl.zeros([64, 64], tl.float32)
    for t in range(N):
        res_p = rp.wait(t)
        res_q = rq.wait(t)
        acc += (tl.load(tle.gpu.local_ptr(res_p.slot.F1))
                * tl.load(tle.gpu.local_ptr(res_q.slot.F2)))
        rq.release(t)
        rp.release(t)
    tl.store(y_ptr + offs, acc)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"},
                  "constexprs": {}, "num_warps": 4, "grid": (1,)}
'''

# (pipe p, its field, pipe q, its field): each pair of names met in the generated code
CLASHES = {
    "ring-ring": ("a", "x_tile", "a_x", "tile"),  # a_x_tile twice
    "ring-barrier": ("a", "full0", "b", "tile"),  # field a.full0 vs barrier array a_full0
    "ring-argument": ("x", "ptr", "b", "tile"),  # ring x_ptr vs the kernel argument x_ptr
}


def _kernel(tmp_path, clash: str):
    p, f1, q, f2 = CLASHES[clash]
    src = KERNEL
    for old, new in (("F1", f1), ("F2", f2)):
        src = src.replace(old, new)
    src = re.sub(r"\bp\b", p, src)
    src = re.sub(r"\bq\b", q, src)
    path = tmp_path / "collide.py"
    path.write_text(src)
    return path


def _functions(src: str) -> dict[str, list[str]]:
    """Each function of the generated module: its parameter names."""
    tree = ast.parse(src)
    return {f.name: [a.arg for a in f.args.args] for f in tree.body
            if isinstance(f, ast.FunctionDef)}


@pytest.mark.parametrize("clash", sorted(CLASHES))
def test_generated_names_are_unique(tmp_path, clash):
    src = gluon_source((str(_kernel(tmp_path, clash)), "collide")).source
    fns = _functions(src)  # parses: no duplicate parameter (a SyntaxError)
    for name, params in fns.items():
        assert len(params) == len(set(params)), (name, params)
    kernel = src[src.index("def collide("):]
    allocated = re.findall(r"^    (\w+) = gl\.allocate_shared_memory", kernel, re.M)
    assert len(allocated) == len(set(allocated)) == 6, allocated
    assert not set(allocated) & set(fns["collide"]), allocated
    # every partition receives exactly what the kernel allocated, in its order
    for part in ("produce", "consume"):
        assert fns[part][-6:] == allocated, (part, fns[part])


def test_the_clashing_names_get_a_suffix_and_the_rest_keep_theirs(tmp_path):
    src = gluon_source((str(_kernel(tmp_path, "ring-barrier")), "collide")).source
    params = _functions(src)["produce"]
    assert params[-6:] == ["a_full0", "a_full0__1", "a_empty0", "b_tile", "b_full0", "b_empty0"]
    prod = src[src.index("def produce("):src.index("@gluon.jit", src.index("def produce("))]
    # the ring is filled, the barrier array waited and arrived on
    assert "async_copy_global_to_shared(a_full0.index(" in prod, prod
    assert "mbarrier_arrive(a_full0__1.index(" in prod, prod
    src = gluon_source((str(_kernel(tmp_path, "ring-argument")), "collide")).source
    assert _functions(src)["collide"] == ["x_ptr", "y_ptr", "N"]
    assert "x_ptr__1 = gl.allocate_shared_memory" in src, src


@pytest.mark.parametrize("clash", ["ring-ring", "ring-barrier", "ring-argument"])
def test_tle_dump_ttgir_compiles_it(tmp_path, capsys, clash):
    code = main(["--ttgir", str(_kernel(tmp_path, clash))])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert out.out.count("ttng.init_barrier") == 6, out.out  # one per stage: 2 + 2 + 1 + 1
