"""Python's import of a kernel's module, run on the files' statements in order: which names each
user module has bound when another one imports from it. Two modules that import each other
(a cycle) see each other partially initialised, and ``from .kernel import k`` in a helper module
that the kernel module imports before it defines ``k`` raises ImportError ("cannot import name
'k' from partially initialized module"), so no kernel of the module can be launched. The
frontend reads every module as a whole and resolves names at their last binding, so it needs
this separate pass to see the order.

What is run: each user module's top-level statements, in order. An ``import`` or ``from ...
import`` statement at the top level imports its user modules (their enclosing packages'
``__init__.py`` first, as Python does), running each module once: a module already running is
partially initialised, one already run is complete. Every other statement binds the names it
stores (:func:`bound_names`). A ``from M import n`` where ``M`` is running and has not bound
``n``, and ``n`` is no submodule of a package ``M``, is Python's ImportError; an attribute
``m.n`` read at the top level of a module (outside function bodies) of a module ``m`` that is
running and has not bound ``n`` is Python's AttributeError.

Left out, so never an error here: imports inside functions (they run when called) and inside
module-level control flow (``try: ... except ImportError:`` handles the failure, ``if
TYPE_CHECKING:`` does not run); a module with a star import or a module-level ``__getattr__``
(its names are not known statically); libraries (triton, tle_compiler, the standard library:
:func:`~.modules.is_library`). ``import a.b as m`` and ``from a import b`` of a submodule that
is running succeed (Python 3.7+ falls back to ``sys.modules``), as they do here.
"""

from __future__ import annotations

import ast
import builtins
import importlib.util
import os
import warnings
from typing import Optional

from ..diagnostics import TleError
from ..ir.nodes import Loc
from .parsed import cached_tree
from .modules import find_module, in_folder, is_library, module_name_of, shown
from .scope import matched_names, rebound_elsewhere
from .source_text import read_python

#: Names every module can read without binding them: the builtins and the module attributes
#: Python sets before it runs the module's statements.
_PRESET = frozenset(dir(builtins)) | {"__name__", "__file__", "__doc__", "__package__",
                                      "__spec__", "__loader__", "__builtins__", "__path__",
                                      "__cached__", "__annotations__", "__dict__"}
#: The names Python binds in a module's own scope before it runs its statements (``del``
#: may remove them; a builtin it may not).
_MODULE_ATTRIBUTES = frozenset({"__name__", "__file__", "__doc__", "__package__", "__spec__",
                                "__loader__", "__builtins__", "__path__", "__cached__",
                                "__annotations__"})
#: Calls through which a module may bind names no statement shows.
_DYNAMIC = frozenset({"exec", "eval", "globals", "vars", "locals", "setattr", "__import__"})
_SCOPES = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def parse_python(text: str, path: str) -> ast.Module:
    """The parsed module (parsed once per text and path: parsed.cached_tree), or a TleError
    (check ``syntax``) as :func:`_parse_checked` raises it."""
    return cached_tree(path, text, _parse_checked)


def _parse_checked(text: str, path: str) -> ast.Module:
    """The parsed module, or a TleError (check ``syntax``) where Python's compiler refuses the
    source: a parse error, and the errors ``ast.parse`` does not raise but compiling the module
    for its import does (``from __future__`` after other statements, ``return`` / ``break`` /
    ``yield`` / ``await`` outside their function or loop, a repeated argument or keyword, a
    ``global`` after the name's use, ``nonlocal`` at module level, a misplaced starred
    expression): Python cannot import such a file, so none of its kernels can be launched."""
    try:
        tree = ast.parse(text, filename=path)
        with warnings.catch_warnings():  # SyntaxWarnings (an invalid escape) are not errors
            warnings.simplefilter("ignore")
            compile(tree, path, "exec", dont_inherit=True)
    except SyntaxError as e:
        raise TleError(f"syntax error: {e.msg}", Loc(path, e.lineno or 0, e.offset or 0),
                       check="syntax") from None
    return tree


def bound_names(st: ast.stmt) -> set[str]:
    """The module-level names a statement binds (an assignment's targets, an import's locals, a
    def or class, every name stored inside module-level control flow) or unbinds (``del``)."""
    if isinstance(st, (ast.Import, ast.ImportFrom)):
        return {a.asname or a.name.split(".")[0] for a in st.names}
    if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {st.name}
    out = set()
    for n in ast.walk(st):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            out.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            out |= {a.asname or a.name.split(".")[0] for a in n.names}
    return out


def _packages(path: str) -> list[str]:
    """The ``__init__.py`` of each package enclosing module file ``path``, outermost first (the
    modules Python imports before it)."""
    out = []
    folder = os.path.dirname(path)
    if os.path.basename(path) == "__init__.py":
        folder = os.path.dirname(folder)
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        out.insert(0, os.path.join(folder, "__init__.py"))
        folder = os.path.dirname(folder)
    return out


def _import_time_nodes(st: ast.stmt, scopes: bool = True):
    """The nodes of a top-level statement that Python evaluates when it runs the statement:
    function and lambda bodies and annotations left out (decorators and defaults included);
    ``scopes``: comprehensions included (their variables shadow the module's names)."""
    todo: list[ast.AST] = [st]
    while todo:
        n = todo.pop()
        if not scopes and isinstance(n, _SCOPES):
            continue
        yield n
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            todo.extend(n.decorator_list)
            todo.extend(d for d in n.args.defaults + n.args.kw_defaults if d is not None)
            continue
        if isinstance(n, ast.Lambda):
            todo.extend(d for d in n.args.defaults + n.args.kw_defaults if d is not None)
            continue
        if isinstance(n, (ast.AnnAssign, ast.arg)):
            todo.extend(c for c in ast.iter_child_nodes(n)
                        if c is not getattr(n, "annotation", None))
            continue
        todo.extend(ast.iter_child_nodes(n))


def _name_reads(st: ast.stmt, annotations: bool):
    """The names a simple top-level statement reads from the module's scope when it runs (a
    def's decorators, defaults and, without ``from __future__ import annotations``, its
    annotations; a class's decorators and bases); lambdas and comprehensions, which have scopes
    of their own, left out. Compound statements (whose inner statements bind names for later
    ones) yield nothing."""
    if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
        a = st.args
        roots = [*st.decorator_list, *a.defaults, *(d for d in a.kw_defaults if d is not None)]
        if annotations:
            args = [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]
            roots += [x.annotation for x in args if x is not None and x.annotation is not None]
            roots += [st.returns] if st.returns is not None else []
    elif isinstance(st, ast.ClassDef):
        roots = [*st.decorator_list, *st.bases, *(k.value for k in st.keywords)]
    elif isinstance(st, (ast.Assign, ast.AugAssign, ast.Expr, ast.Assert, ast.Raise)):
        roots = [st]
    elif isinstance(st, ast.AnnAssign):
        roots = [x for x in (st.value, st.annotation if annotations else None) if x is not None]
    else:
        return
    todo = list(roots)
    while todo:
        n = todo.pop()
        if isinstance(n, _SCOPES):
            continue
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            yield n
        todo.extend(ast.iter_child_nodes(n))


def _head(st: ast.stmt) -> str:
    """A statement's first line, as written (a def's or class's header)."""
    text = ast.unparse(st).splitlines()
    head = next((ln for ln in text if not ln.lstrip().startswith("@")), text[0] if text else "")
    return head if len(head) <= 80 else head[:77] + "..."


class _Unknown(Exception):
    """An expression whose value the import check does not compute."""


_NUM_OPS = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b, ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b,
    ast.Pow: lambda a, b: a ** b, ast.LShift: lambda a, b: a << b, ast.RShift: lambda a, b: a >> b,
    ast.BitAnd: lambda a, b: a & b, ast.BitOr: lambda a, b: a | b, ast.BitXor: lambda a, b: a ^ b,
}
_CMP_OPS = {
    ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b,
}


class _Numbers:
    """The numbers (ints, floats, bools) a module's top-level names hold so far: a name bound by
    a plain (or annotated, augmented, chained) assignment of an expression of literals and such
    names (``tl.constexpr(x)`` is x); any other binding forgets it. What Python computes when it
    runs those statements, so an ``assert`` or a division on them decides as it does."""

    def __init__(self, constexpr_names: frozenset) -> None:
        self.values: dict[str, object] = {}
        self.constexpr_names = constexpr_names  # the dotted spellings of tl.constexpr

    def known(self, e: ast.expr) -> bool:
        try:
            self.eval(e)
        except (_Unknown, ArithmeticError, ValueError, TypeError):
            return False
        return True

    def value(self, e: ast.expr) -> object:
        return self.eval(e)

    def eval(self, e: ast.expr) -> object:
        if isinstance(e, ast.Constant) and isinstance(e.value, (int, float, bool)):
            return e.value
        if isinstance(e, ast.Name) and e.id in self.values:
            return self.values[e.id]
        if isinstance(e, ast.UnaryOp):
            v = self.eval(e.operand)
            if isinstance(e.op, ast.Not):
                return not v
            if isinstance(e.op, ast.USub):
                return -v
            if isinstance(e.op, ast.UAdd):
                return +v
            if isinstance(e.op, ast.Invert) and isinstance(v, int):
                return ~v
        if isinstance(e, ast.BinOp) and type(e.op) in _NUM_OPS:
            a, b = self.eval(e.left), self.eval(e.right)
            if isinstance(e.op, (ast.Pow, ast.LShift)) and (not isinstance(b, (int, float))
                                                              or abs(b) > 256):
                raise _Unknown  # a huge power: not worth computing here
            return _NUM_OPS[type(e.op)](a, b)
        if isinstance(e, ast.Compare):
            left = self.eval(e.left)
            for op, right in zip(e.ops, e.comparators):
                if type(op) not in _CMP_OPS:
                    raise _Unknown
                r = self.eval(right)
                if not _CMP_OPS[type(op)](left, r):
                    return False
                left = r
            return True
        if isinstance(e, ast.BoolOp):
            v = None
            for x in e.values:
                v = self.eval(x)
                if (not v) if isinstance(e.op, ast.And) else bool(v):
                    return v
            return v
        if isinstance(e, ast.IfExp):
            return self.eval(e.body) if self.eval(e.test) else self.eval(e.orelse)
        if isinstance(e, ast.Call) and len(e.args) == 1 and not e.keywords \
                and ast.unparse(e.func) in self.constexpr_names:
            return self.eval(e.args[0])
        raise _Unknown

    def run(self, st: ast.stmt) -> None:
        """Update the names ``st`` binds (after it ran)."""
        targets: list[ast.expr] = []
        value: Optional[ast.expr] = None
        if isinstance(st, ast.Assign):
            targets, value = st.targets, st.value
        elif isinstance(st, ast.AnnAssign) and st.value is not None:
            targets, value = [st.target], st.value
        elif isinstance(st, ast.AugAssign):
            targets, value = [st.target], ast.BinOp(st.target, st.op, st.value)
        try:
            v = self.eval(value) if value is not None else None
            ok = value is not None and all(isinstance(t, ast.Name) for t in targets)
        except (_Unknown, ArithmeticError, ValueError, TypeError):
            ok = False
        for n in bound_names(st):
            self.values.pop(n, None)
        if ok:
            for t in targets:
                self.values[t.id] = v


def _constexpr_spellings(tree: ast.Module) -> frozenset:
    """How the module spells tl.constexpr (``tl.constexpr``, ``triton.language.constexpr``,
    ``constexpr`` when imported by name), by its imports."""
    out = {"triton.language.constexpr"}
    for st in tree.body:
        if isinstance(st, ast.Import):
            for a in st.names:
                if a.name == "triton.language" and a.asname:
                    out.add(f"{a.asname}.constexpr")
                elif a.name == "triton" and a.asname:
                    out.add(f"{a.asname}.language.constexpr")
        elif isinstance(st, ast.ImportFrom) and st.module in ("triton.language", "triton"):
            for a in st.names:
                if st.module == "triton.language" and a.name == "constexpr":
                    out.add(a.asname or a.name)
                elif st.module == "triton" and a.name == "language":
                    out.add(f"{a.asname or a.name}.constexpr")
    return frozenset(out)


def _is_number(v: object) -> bool:
    return isinstance(v, (int, float, complex)) and not isinstance(v, bool)


class _Run:
    def __init__(self, root: str) -> None:
        #: the folder above the entry module's outermost package: where Python finds the entry's
        #: own package when it is imported from there (``from pkg.kernel import k``), which
        #: tle-dump's own sys.path need not hold
        self.root = root
        #: file -> how its locations name it (the entry module as tle-dump was given it)
        self.names: dict[str, str] = {}
        self.state: dict[str, str] = {}  # file -> "running" | "done"
        self.bound: dict[str, set[str]] = {}
        self.opaque: set[str] = set()  # star imports or __getattr__: names not known
        self.trees: dict[str, ast.Module] = {}
        #: per module: names bound other than by a top-level statement binding them by name
        #: (scope.rebound_elsewhere), and whether it has `from __future__ import annotations`
        self.elsewhere: dict[str, frozenset] = {}
        self.future: dict[str, bool] = {}
        #: per module: the numbers its names hold so far, and the names it bound to the
        #: standard library's sys and os (`import sys`, `import os as o`)
        self.numbers: dict[str, _Numbers] = {}
        self.stdlib_aliases: dict[str, dict[str, str]] = {}

    def tree(self, path: str) -> Optional[ast.Module]:
        if path not in self.trees:
            try:
                text = read_python(path)
            except (OSError, SyntaxError, ValueError):
                self.trees[path] = None  # reported where the module is read
                return None
            # a module the kernel does not read (a package's __init__.py) that Python cannot
            # compile stops the import too
            self.trees[path] = parse_python(text, self.shown(path))
        return self.trees[path]

    def import_file(self, path: str) -> None:
        """Import the module of ``path``, its packages first."""
        for pkg in _packages(path):
            self.run(pkg)
        self.run(path)

    def run(self, path: str) -> None:
        path = os.path.abspath(path)
        if path in self.state:
            return
        self.state[path] = "running"
        self.bound[path] = set()
        tree = self.tree(path)
        if tree is None:
            self.state[path] = "done"
            return
        if any(isinstance(st, ast.ImportFrom) and any(a.name == "*" for a in st.names)
               for st in tree.body) or any(
                isinstance(st, ast.FunctionDef) and st.name == "__getattr__" for st in tree.body):
            self.opaque.add(path)
        modules: dict[str, str] = {}  # local name -> module file it is bound to
        self.numbers[path] = _Numbers(_constexpr_spellings(tree))
        aliases = self.stdlib_aliases[path] = {}
        for st in tree.body:
            if isinstance(st, ast.Import):
                self.s_import(path, st, modules)
            elif isinstance(st, ast.ImportFrom):
                self.s_import_from(path, st, modules)
            else:
                self.undefined(path, st, tree)
                self.raises(path, st)
                self.attributes(path, st, modules)
                for n in bound_names(st):
                    modules.pop(n, None)
            for n in bound_names(st):
                aliases.pop(n, None)
            if isinstance(st, ast.Import):
                aliases.update((a.asname or a.name, a.name) for a in st.names
                               if a.name in ("sys", "os"))
            self.numbers[path].run(st)
            if isinstance(st, ast.Delete):  # the names it deletes are unbound again
                self.bound[path] -= {t.id for t in st.targets if isinstance(t, ast.Name)}
            else:
                self.bound[path] |= bound_names(st)
        self.state[path] = "done"

    def partial(self, path: str, name: str) -> bool:
        """Whether module ``path`` is running and has not bound ``name`` (nor has a submodule
        of that name)."""
        if self.state.get(path) != "running" or path in self.opaque \
                or name in self.bound.get(path, ()):
            return False
        return not (os.path.basename(path) == "__init__.py"
                    and in_folder(os.path.dirname(path), name) is not None)

    def shown(self, path: str) -> str:
        return self.names.get(path) or shown(path)

    def error(self, path: str, node: ast.AST, msg: str) -> TleError:
        return TleError(msg, Loc(self.shown(path), node.lineno, node.col_offset + 1),
                        check="bad-import")

    def find(self, module: str, level: int, importer: str) -> Optional[str]:
        f = find_module(module, level, importer)
        if f is None and not level and module and not is_library(module):
            f = in_folder(self.root, module)
        return f

    def s_import(self, path: str, st: ast.Import, modules: dict) -> None:
        for a in st.names:
            f = self.find(a.name, 0, path)
            if f is None:
                self.missing(path, st, a.name)
                continue
            self.import_file(f)
            if a.asname:
                modules[a.asname] = os.path.abspath(f)
            else:
                top = self.find(a.name.split(".")[0], 0, path)
                if top is not None:
                    modules[a.name.split(".")[0]] = os.path.abspath(top)

    def s_import_from(self, path: str, st: ast.ImportFrom, modules: dict) -> None:
        if st.level:
            self.relative(path, st)
        base = self.find(st.module or "", st.level, path)
        if base is None:
            if not st.level:
                self.missing(path, st, st.module or "")
            return
        base = os.path.abspath(base)
        self.import_file(base)
        for a in st.names:
            if a.name == "*":
                continue
            sub = (in_folder(os.path.dirname(base), a.name)
                   if os.path.basename(base) == "__init__.py" else None)
            if sub is not None and a.name not in self.bound.get(base, ()):
                self.import_file(sub)  # a submodule: imported, bound from sys.modules
                modules[a.asname or a.name] = os.path.abspath(sub)
                continue
            if self.partial(base, a.name):
                raise self.error(path, st, (
                    f"`{ast.unparse(st)}`: Python raises ImportError (cannot import name "
                    f"'{a.name}' from partially initialized module {self.shown(base)}): the "
                    f"modules import each other, and {self.shown(base)} is still running its "
                    f"import statements when this one runs, before it binds '{a.name}'. Import the "
                    f"module instead (`from . import mod`, then `mod.{a.name}` inside "
                    f"functions), or break the cycle"))
            modules.pop(a.asname or a.name, None)

    def relative(self, path: str, st: ast.ImportFrom) -> None:
        """A relative import that Python refuses in the module of ``path``, named as Python
        names it when the folder above its outermost package (folders with an
        ``__init__.py``) is on the path (modules.module_name_of: a file in a folder without
        ``__init__.py`` is a top-level module, as ``python kernel.py`` or an import from its own
        folder makes it): in a top-level module any relative import raises ImportError
        ("attempted relative import with no known parent package"), and one of more dots than
        the module has packages above it ("beyond top-level package")."""
        name, package = module_name_of(path)
        depth = len(package.split(".")) if package else 0
        if st.level <= depth:
            return
        if not package:
            why = (f"attempted relative import with no known parent package: "
                   f"{self.shown(path)} is a top-level module (its folder has no __init__.py)")
        else:
            why = (f"attempted relative import beyond top-level package: {self.shown(path)} "
                   f"is module {name}, {depth} package level{'s' if depth > 1 else ''} deep")
        raise self.error(path, st, (
            f"`{ast.unparse(st)}`: Python raises ImportError ({why}), so none of the module's "
            f"kernels can be launched; add an __init__.py to make the folder a package, or "
            f"import the module by its absolute name"))

    def undefined(self, path: str, st: ast.stmt, tree: ast.Module) -> None:
        """A name a top-level statement reads that the module has not bound by then (nor is a
        builtin): Python raises NameError when it imports the module (``X = UNDEFINED + 1``, a
        default ``D=MISSING``, a decorator or annotation naming nothing)."""
        if path in self.opaque:
            return
        if path not in self.elsewhere:
            dynamic = any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                          and n.func.id in _DYNAMIC for n in ast.walk(tree))
            if dynamic:  # names bound by running code (exec, globals().update, ...)
                self.opaque.add(path)
                return
            self.elsewhere[path] = frozenset(rebound_elsewhere(tree) | matched_names(tree))
            self.future[path] = any(
                isinstance(x, ast.ImportFrom) and x.module == "__future__"
                and any(a.name == "annotations" for a in x.names) for x in tree.body)
        known = self.bound[path] | self.elsewhere[path]
        self.deletes(path, st, known)
        for n in _name_reads(st, not self.future[path]):
            if n.id not in known and n.id not in _PRESET:
                raise self.error(path, n, (
                    f"name '{n.id}' is not defined when Python runs `{_head(st)}` at the top "
                    f"level of the module (no statement before it binds '{n.id}'): NameError "
                    f"when the module is imported, so none of its kernels can be launched"))

    def deletes(self, path: str, st: ast.stmt, known: set, where: str = "module") -> None:
        """``del X`` at the top level of the module (or of a class body there, which runs at the
        import too and deletes from the class's own names) where no statement before it binds
        ``X``, or after an earlier ``del X``:
        Python raises NameError when it runs it (a builtin's name too: ``del`` removes a name
        of the module's own scope, and builtins live in another)."""
        if isinstance(st, ast.ClassDef):  # a class body's del removes a name of its own scope
            local: set = set()
            for inner in st.body:
                if isinstance(inner, ast.Delete):
                    self.deletes(path, inner, local, f"class {st.name}")
                local |= bound_names(inner)
            return
        if not isinstance(st, ast.Delete):
            return
        for t in st.targets:
            for n in ([t] if isinstance(t, ast.Name) else
                      [x for x in ast.walk(t) if isinstance(x, ast.Name)]
                      if isinstance(t, (ast.Tuple, ast.List)) else []):
                if n.id not in known and n.id not in _MODULE_ATTRIBUTES:
                    raise self.error(path, n, (
                        f"`{_head(st)}` at the top level of the {where}: name '{n.id}' is not "
                        f"bound there when Python runs it (no statement before it binds "
                        f"'{n.id}', or an earlier `del` removed it): NameError when the module "
                        f"is imported, so none of its kernels can be launched"))
                known.discard(n.id)

    def raises(self, path: str, st: ast.stmt) -> None:
        """A top-level statement that raises whenever it runs: ``raise``, an ``assert`` whose
        test is false, a division or remainder by zero, ``sys.exit(...)`` (or ``exit()``,
        ``quit()``, ``os._exit(...)``), with the module's numbers known so far (literals and
        names bound to expressions of them, :class:`_Numbers`). Python's import of the module
        stops there, so no kernel of it (or of a module importing it) can be launched."""
        nums = self.numbers[path]
        why = None
        if isinstance(st, ast.Raise):
            why = "Python raises the exception when it imports the module"
        elif isinstance(st, ast.Assert) and nums.known(st.test) and not nums.value(st.test):
            why = "the assertion fails when Python imports the module (AssertionError)"
        elif isinstance(st, ast.Expr) and isinstance(st.value, ast.Call) \
                and self.exits(path, st.value.func):
            why = "Python stops (SystemExit) when it imports the module"
        else:
            for n in _import_time_nodes(st, scopes=False):
                if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Div, ast.FloorDiv, ast.Mod)) \
                        and nums.known(n.left) and _is_number(nums.value(n.left)) \
                        and nums.known(n.right) and nums.value(n.right) == 0:
                    st = n
                    why = "Python raises ZeroDivisionError when it imports the module"
                    break
        if why is not None:
            raise self.error(path, st, f"`{ast.unparse(st)}` at the top level of the module: "
                                       f"{why}, so none of its kernels can be launched")

    def exits(self, path: str, func: ast.expr) -> bool:
        """Whether ``func`` is sys.exit, os._exit, os.abort, or the builtin exit / quit, by the
        names this module has bound so far."""
        bound = self.bound[path]
        if isinstance(func, ast.Name):
            return func.id in ("exit", "quit") and func.id not in bound
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            mod = self.stdlib_aliases[path].get(func.value.id)
            return (mod, func.attr) in (("sys", "exit"), ("os", "_exit"), ("os", "abort"))
        return False

    def missing(self, path: str, st: ast.stmt, module: str) -> None:
        """An absolute import of a module that is neither a user module nor found by Python's
        import system here (``import not_installed``): ModuleNotFoundError at the import."""
        top = module.split(".")[0]
        if not top or is_library(top) or find_module(top, 0, path) is not None \
                or in_folder(self.root, top) is not None:
            return
        try:
            found = importlib.util.find_spec(top) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            raise self.error(path, st, f"`{ast.unparse(st)}`: no module named '{top}' (Python "
                                       f"raises ModuleNotFoundError when it imports this module)")

    def attributes(self, path: str, st: ast.stmt, modules: dict) -> None:
        """``m.n`` read at import time from a module ``m`` still running without ``n``."""
        for n in _import_time_nodes(st):
            if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load) \
                    and isinstance(n.value, ast.Name) and n.value.id in modules:
                f = modules[n.value.id]
                if self.partial(f, n.attr):
                    raise self.error(path, n, (
                        f"`{ast.unparse(n)}`: Python raises AttributeError (partially "
                        f"initialized module {self.shown(f)} has no attribute '{n.attr}' yet): "
                        f"the modules import each other and this statement runs before "
                        f"{self.shown(f)} binds '{n.attr}'"))


def import_failure(path: str, text: Optional[str] = None) -> Optional[TleError]:
    """The error Python raises when it imports the module of file ``path`` (whose source is
    ``text`` when given) and the user modules it imports, running their top-level statements in
    order (see the module's docstring): a name imported from a partially initialised module, a
    module that is not installed, a statement that always raises, a module (a package's
    ``__init__.py`` the kernel reads nothing from included) that does not compile (check
    ``syntax``); None when the import runs."""
    given, path = path, os.path.abspath(path)
    pkgs = _packages(path)
    run = _Run(os.path.dirname(os.path.dirname(pkgs[0])) if pkgs else os.path.dirname(path))
    run.names[path] = given
    try:
        if text is not None:
            run.trees[path] = parse_python(text, given)
        run.import_file(path)
    except TleError as e:
        return e
    return None
