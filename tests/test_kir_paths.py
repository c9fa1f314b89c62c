"""Paths of kernel IR nodes (tle_compiler/lowering/kir_paths.py), the names schedule-wgmma and
emit-gluon give the points of a wgmma wait: a path reaches its node as Python reaches it from the
partition (fields, tuple indices, keyword keys), means the same after the text form is printed
and read back, and a point below a node without attributes belongs to the innermost node with
them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tle_compiler.diagnostics import TleError
from tle_compiler.ir import kernel as K
from tle_compiler.ir.kernel_text import parse_kernel, print_kernel
from tle_compiler.lowering.codegen import kernel_ir
from tle_compiler.lowering.compile import kernel_info_of
from tle_compiler.lowering.dumping import default_config
from tle_compiler.lowering.kir_paths import carrier_of, carriers, expression_paths, join, walk

ROOT = Path(__file__).resolve().parent.parent
KERNELS = [(ROOT / "tle_kernels" / "sparse_mla_seesaw.py", "sparse_mla_seesaw"),
           (ROOT / "tests" / "filecheck" / "inputs" / "wgmma_placement.py", "placement")]
_SEGMENT = re.compile(r"\.?(\w+)((?:\[[^\]]+\])*)")


def reach(root, path: str):
    """The node at ``path`` from ``root``, reached by attribute access, tuple indexing and
    keyword lookup (``kwargs[mask]``), independently of kir_paths."""
    node = root
    for field, subs in _SEGMENT.findall(path):
        node = getattr(node, field)
        for sub in re.findall(r"\[([^\]]+)\]", subs):
            node = node[int(sub)] if sub.isdigit() else dict(node)[sub]
    return node


def kernel_of(path: Path, name: str) -> K.Kernel:
    try:
        constexprs = default_config(str(path), name).get("constexprs", {})
    except TleError:  # no DEFAULT_CONFIG
        constexprs = {}
    return kernel_ir(kernel_info_of((str(path), name), constexprs))


@pytest.mark.parametrize("path,name", KERNELS, ids=[n for _, n in KERNELS])
def test_every_path_reaches_its_node(path, name):
    kernel = kernel_of(path, name)
    seen = 0
    for part in kernel.partitions:
        for p, node in walk(part):
            assert reach(part, p) is node, p
            seen += 1
    assert seen > 100


@pytest.mark.parametrize("path,name", KERNELS, ids=[n for _, n in KERNELS])
def test_paths_survive_the_text_form(path, name):
    kernel = kernel_of(path, name)
    again = parse_kernel(print_kernel(kernel))
    for a, b in zip(kernel.partitions, again.partitions):
        pa = [(p, type(n).__name__) for p, n in walk(a)]
        assert pa == [(p, type(n).__name__) for p, n in walk(b)]
        assert list(carriers(a)) == list(carriers(b))


def test_expression_paths_are_the_statements_own():
    """A statement's expressions, not those of the statements nested in it."""
    kernel = kernel_of(*KERNELS[1])
    attend = kernel.partition("attend")
    loop_path, loop = next((p, s) for p, s in walk(attend) if isinstance(s, K.For))
    paths = expression_paths(loop, loop_path)
    assert sorted(paths.values()) == [f"{loop_path}.start", f"{loop_path}.step",
                                      f"{loop_path}.stop"]
    assign = loop.body[2]  # acc = acc + s
    paths = expression_paths(assign, f"{loop_path}.body[2]")
    assert paths[id(assign.value.rhs)] == f"{loop_path}.body[2].value.rhs"


def test_a_point_belongs_to_the_innermost_node_with_attributes():
    kernel = kernel_of(*KERNELS[1])
    attend = kernel.partition("attend")
    cs = list(carriers(attend))
    loop = next(p for p, n in carriers(attend).items() if isinstance(n, K.For))
    # a name read in the loop body: the loop (the statement and the name carry nothing)
    assert carrier_of(join(loop, "body[2].value.rhs"), cs) == (loop, "body[2].value.rhs")
    # the end of the loop body, and the loop itself
    assert carrier_of(join(loop, "body"), cs) == (loop, "body")
    assert carrier_of(loop, cs) == (loop, "")
    # an operand of an operation: the operation
    dot = next(p for p, n in carriers(attend).items() if isinstance(n, K.Op) and
               n.name == "tl.dot" and p.startswith(loop))
    assert carrier_of(join(dot, "args[0]"), cs) == (dot, "args[0]")
    # outside every loop: the partition
    assert carrier_of("body", cs) == ("", "body")
