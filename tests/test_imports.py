"""The package's import graph is layered: every import of a tle_compiler module goes down.

The graph is read from the source (``ast``, every ``.py`` of the package): module-level imports
and imports inside functions count alike (a function-level import is a dependency deferred, not
removed), ``if TYPE_CHECKING:`` ones too. Its nodes are the package's units, one per subpackage and
top-level module, with ``diagnostics`` part of the bottom unit ``core`` with ``ir`` (a TleError
carries an ir Loc, ir's parsers raise TleError: one vocabulary).

| layer | units | what they are |
|---:|---|---|
| 0 | core (ir/, diagnostics.py) | the IRs (Pipe IR, kernel IR), their text forms, locations, errors |
| 1 | language/ | the tle.* surface: declarations and their validation (shared by the frontend) |
| 2 | frontend/ | Python source → kernel IR → Pipe IR + KernelInfo |
| 3 | passes/, semantics/ | the protocol passes; the executable semantics (independent) |
| 4 | lowering/ | kernel IR → Gluon → TTGIR/PTX, the runtime |
| 5 | cli/, testing/ | tle-dump; GPU-fuzz stamps and Gluon traces |
| 6 | jit.py | ``@tle.jit``: reads (frontend) and launches (lowering) a kernel |
| 7 | tle_compiler (``__init__``) | ``import tle_compiler as tle``: the language and the decorator |

An import from a unit of layer *a* to one of layer *b* needs *b* < *a* (units of one layer do not
import each other); so the units' graph has no cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

PKG = Path(__file__).resolve().parent.parent / "tle_compiler"

LAYERS = {
    "core": 0, "language": 1, "frontend": 2, "passes": 3, "semantics": 3, "lowering": 4,
    "cli": 5, "testing": 5, "jit": 6, "tle_compiler": 7,
}

#: Imports against the layering that their owners are to move, each with why it is there; the
#: test fails when one is gone (remove it here) as it fails for a new one.
KNOWN: dict = {}


def module_name(path: Path, pkg: Path = PKG) -> str:
    parts = list(path.relative_to(pkg.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph(pkg: Path = PKG) -> nx.DiGraph:
    """Module → imported tle_compiler module, with the line of the (first) import as ``line``.
    ``from X import name`` names the submodule X.name when there is one, else X."""
    files = {module_name(p, pkg): p for p in pkg.rglob("*.py")}
    g = nx.DiGraph()
    g.add_nodes_from(files)
    root = pkg.name
    for mod, path in files.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                targets = [f"{target}.{a.name}" if f"{target}.{a.name}" in files else target
                           for a in node.names]
            for t in targets:
                if t == root or t.startswith(root + "."):
                    while t not in files and "." in t:  # `import tle_compiler.ir.nodes.Loc`
                        t = t.rpartition(".")[0]
                    if t != mod and not g.has_edge(mod, t):
                        g.add_edge(mod, t, line=node.lineno)
    return g


def unit(mod: str) -> str:
    parts = mod.split(".")
    if len(parts) == 1:
        return parts[0]
    return "core" if parts[1] in ("ir", "diagnostics") else parts[1]


def unit_graph(g: nx.DiGraph) -> nx.DiGraph:
    """Unit → imported unit, each edge with the module imports behind it (``why``)."""
    u = nx.DiGraph()
    u.add_nodes_from(unit(m) for m in g)
    for a, b, d in g.edges(data=True):
        ua, ub = unit(a), unit(b)
        if ua != ub:
            if not u.has_edge(ua, ub):
                u.add_edge(ua, ub, why=[])
            u.edges[ua, ub]["why"].append(f"{a} -> {b} (line {d['line']})")
    return u


GRAPH = import_graph()
UNITS = unit_graph(GRAPH)


def test_every_unit_has_a_layer():
    assert set(UNITS) == set(LAYERS)


def test_imports_go_down_the_layers():
    wrong = {(a, b): d["why"] for a, b, d in UNITS.edges(data=True)
             if LAYERS[b] >= LAYERS[a] and (a, b) not in KNOWN}
    assert not wrong, "imports against the layering:\n" + "\n".join(
        f"{a} (layer {LAYERS[a]}) -> {b} (layer {LAYERS[b]}): {'; '.join(w)}"
        for (a, b), w in wrong.items())
    stale = [e for e in KNOWN if not UNITS.has_edge(*e)]
    assert not stale, f"no longer imported, remove from KNOWN: {stale}"


def test_no_cycle_between_units():
    allowed = UNITS.copy()
    allowed.remove_edges_from(KNOWN)
    cycles = list(nx.simple_cycles(allowed))
    assert not cycles, [" -> ".join(c + c[:1]) for c in cycles]


PACKAGES = sorted(p.name for p in PKG.iterdir() if (p / "__init__.py").exists())


def test_the_packages_are_found():
    assert {"frontend", "ir", "passes", "lowering", "cli"} <= set(PACKAGES)


@pytest.mark.parametrize("package", PACKAGES)
def test_no_cycle_inside_a_package(package):
    # the modules of one package import each other in one direction too (frontend: ast_reader →
    # build → kernel; passes: manager → kir_protocol → kir_module; lowering: codegen →
    # kir_passes → emit → walks → translate → pipes → values)
    prefix = f"tle_compiler.{package}"
    sub = GRAPH.subgraph(m for m in GRAPH if m == prefix or m.startswith(prefix + "."))
    cycles = list(nx.simple_cycles(sub))
    assert not cycles, [" -> ".join(c + c[:1]) for c in cycles]


def test_the_graph_sees_every_kind_of_import(tmp_path):
    # a function-level import counts, relative and absolute ones resolve, a `from . import x`
    # names the submodule: a cycle made only by a deferred import is found
    pkg = tmp_path / "tle_compiler"
    (pkg / "frontend").mkdir(parents=True)
    (pkg / "lowering").mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "jit.py").write_text("def f():\n    from .lowering import run\n")
    (pkg / "frontend" / "__init__.py").write_text("")
    (pkg / "frontend" / "read.py").write_text("import os\n\ndef g():\n    from ..jit import f\n")
    (pkg / "lowering" / "__init__.py").write_text("from . import run\n")
    (pkg / "lowering" / "run.py").write_text("from tle_compiler.frontend.read import g\n")
    g = import_graph(pkg)
    assert set(g.edges) == {
        ("tle_compiler.jit", "tle_compiler.lowering.run"),
        ("tle_compiler.frontend.read", "tle_compiler.jit"),
        ("tle_compiler.lowering", "tle_compiler.lowering.run"),
        ("tle_compiler.lowering.run", "tle_compiler.frontend.read"),
    }
    u = unit_graph(g)
    assert list(nx.simple_cycles(u)) and ("frontend", "jit") in u.edges
    assert LAYERS["jit"] >= LAYERS["frontend"]  # the edge the layering refuses


@pytest.mark.parametrize("name", ["jit", "frontend", "lowering", "cli", "passes"])
def test_each_unit_imports_alone(name):
    # with no cycle a unit can be imported first, in a fresh interpreter
    import subprocess
    import sys

    mod = "tle_compiler" if name == "tle_compiler" else f"tle_compiler.{name}"
    r = subprocess.run([sys.executable, "-c", f"import {mod}"], capture_output=True, text=True,
                       cwd=PKG.parent)
    assert r.returncode == 0, r.stderr
