"""How the KIR builder resolves a name: locals of the kernel and of inlined helpers, module
globals and constexprs, imports, renamed builtins, and names stored from outside a module."""

from __future__ import annotations

import ast
import dataclasses
import os
from typing import Optional

from ..diagnostics import TleError
from ..ir import kernel as K
from ..ir.nodes import Loc
from .build_support import (Frame, Module, PYTHON_BUILTINS, Static, TRITON_BUILTIN_NAMES, loc_of,
                            module_label, tensor_items_of)
from .folding import fold
from .modules import submodule


class NameBuild:
    """The name resolution of :class:`~.build.Builder`: its methods, kept here by idea."""

    # -- names ------------------------------------------------------------------------------
    def lookup(self, name: str, node: ast.AST) -> tuple[K.Expr, Optional[Static]]:
        f = self.frame
        if name in f.undefined and name not in f.env:
            raise self.err(f"`{name}` is read here, but {f.undefined[name]}: Triton does not "
                           f"define it here (Python would); bind `{name}` before that statement",
                           node, check="unknown-name")
        if name in f.env:
            st = f.env[name]
            loc = self.loc(node)
            if st is None and name in f.lost_by:
                names, where = f.lost_by[name]
                self.undecided_choice(f"`{name}` holds a pipe handle, a pipe or a buffer that the "
                                      f"`if` at line {where.lineno} chooses",
                                      where.test, names)
            if st is None and name in f.lost_buffers:
                # `b = scr` in one branch, `b = scr2` in the other: read as a runtime value, `b`
                # viewed no buffer at all, so a partition that wrote through it raced with one
                # that read `scr` and the race check never saw the write (nor could the
                # lowering name the buffer)
                raise self.err(f"`{name}` holds a different shared buffer on different paths "
                               f"({', '.join(f.lost_buffers[name])}, or a value of another "
                               f"kind), so the frontend cannot tell which buffer it is (nor "
                               f"check the partitions that use it for races): bind `{name}` "
                               f"to one buffer", node, check="unknown-buffer")
            if st is not None and self.in_partition:
                owner = self.field_buffer_in(st)
                if owner is not None:
                    # a pipe field's buffer is reached through slots only: taken from a tuple or
                    # passed by keyword, its uses would lie in no window the verifier checks
                    raise self.err(f"`{name}` reaches the buffer of field '{owner[1]}' of pipe "
                                   f"'{owner[0]}' directly: use the slot of an acquire or a wait "
                                   f"(whose window the verifier checks)", node,
                                   check="field-buffer")
            if st is not None:
                if st.kind == "const" and name in f.carried:
                    # a carried tuple's item variables, located where the tuple is used
                    items = tuple(dataclasses.replace(x, loc=loc) for x in st.value.items)
                    return K.TupleExpr(items, loc), st
                if st.kind == "const":  # located where it is used
                    return self.tensor_number(name, dataclasses.replace(st.value, loc=loc)), st
                if st.kind == "pipe":
                    return K.PipeRef(st.value.name, loc), st
                if st.kind == "handle":
                    return st.value, st
                if st.kind == "buffer" and st.value[1] is not None:
                    return K.BufferRef(st.value[1], loc), st
            return K.Name(f.kir(name), loc), st
        for reads in f.module_reads:
            reads.setdefault(name, node)
        return self.module_name(f.module, name, node)

    def calls_helper(self, node: ast.Call) -> bool:
        """Whether ``node`` calls a helper (a function the builder inlines), built yet or not:
        a check that runs before a call's arguments are built (tl.arange's operands) names a
        helper's result by its call as :attr:`helper_calls` does for one built. The function is
        resolved by :meth:`callee`, which evaluates nothing (names and attribute chains)."""
        try:
            _, fst = self.callee(node.func)
        except TleError:
            return False
        return fst is not None and fst.kind == "func"

    def tensor_number(self, name: str, e: K.Expr) -> K.Expr:
        """``e``, the number a name of the partition folds to, as Triton holds the name: a
        name it binds by a plain assignment (`b = 100`), a helper's parameter given one, or a
        partition's parameter given such a name of the kernel body is a scalar tensor in
        Triton 3.6 (visit_Assign converts the number: an int an i32, u32 or i64 by its range, a
        float an fp32), so `t + b` of an int8 tile is computed in i32 where `t + 100` stays
        i8. Such a read is ``to_tensor(e)`` in the kernel IR: folding sees through it (loop
        bounds, conditions and indices read the value), the lowering makes the tensor. Any
        other value is ``e`` (a bool, an i1 tensor, promotes as the literal does)."""
        if not self.in_partition:
            return e
        if isinstance(e, K.TupleExpr):
            # a tuple: its number items that are tensors (all of a tuple a plain assignment
            # binds, `T = (100, 1)`; those of a tuple written in the call that were tensors
            # there, `(I, 1)`: item 0 only, the literal 1 a constexpr)
            f = self.frame
            if self._folded_tensor(ast.Name(id=name, ctx=ast.Load())) is not None:
                return tensor_items_of(e)
            if name in f.stores:
                return e
            paths = {**f.tensor_items.get(name, {}), **f.body_items.get(name, {})}
            return tensor_items_of(e, tuple(paths)) if paths else e
        if not isinstance(e, K.Const) or isinstance(e.value, bool) \
                or not isinstance(e.value, (int, float)):
            return e
        if self._folded_tensor(ast.Name(id=name, ctx=ast.Load())) is None:
            return e
        return K.Op("to_tensor", (e,), (), e.loc)

    def item_of(self, base: K.Expr, st: Static, i: int, loc: Loc) -> tuple[K.Expr, Optional[Static]]:
        """Item ``i`` of ``base``, a tuple whose items' compile-time values ``st`` holds: the
        item itself when it is one (a pipe, a handle, a named buffer), else ``base[i]``."""
        item = st.value[i]
        if item is not None and item.kind == "handle":
            return item.value, item
        if item is not None and item.kind == "pipe":
            return K.PipeRef(item.value.name, loc), item
        if item is not None and item.kind == "buffer" and item.value[1] is not None:
            return K.BufferRef(item.value[1], loc), item
        if item is not None and item.kind == "buffer" and item.value[0] in self.buffer_names:
            # a tuple built before its buffer was named (`t = (tle.gpu.alloc(...),)`, then `fc
            # = t[0]`): the name it was given (adversarial round 65: None, so an access through
            # `t[0]` elsewhere reached no buffer the race check saw)
            name = self.buffer_names[item.value[0]]
            return K.BufferRef(name, loc), Static("buffer", (item.value[0], name))
        if item is not None and item.kind == "const":
            return dataclasses.replace(item.value, loc=loc), item
        if item is not None and item.kind != "tuple":
            return K.Const(None, loc), item
        return K.Subscript(base, (i,), loc), item

    def without_field_buffers(self, e: K.Expr, st: Optional[Static]) -> K.Expr:
        """A partition's argument ``e`` with each pipe field's buffer it holds (in a tuple,
        ``(kv, (ring_buf,))``) passed as None: the KIR names no field's buffer (a field is
        reached through slots only, and the partition's use of the item is refused, check
        ``field-buffer``), so the binding held a BufferRef to no buffer of the kernel, which
        --print-ir could not write."""
        if st is None:
            return e
        if st.kind == "buffer" and self.buffer_owner.get(st.value[0]) is not None:
            return K.Const(None, e.loc)
        if st.kind == "tuple" and isinstance(e, K.TupleExpr) and len(e.items) == len(st.value):
            return K.TupleExpr(tuple(self.without_field_buffers(x, y)
                                     for x, y in zip(e.items, st.value)), e.loc)
        return e

    def field_buffer_in(self, st: Optional[Static]) -> Optional[tuple[str, str, Loc]]:
        """(pipe, field, location) of a pipe field's buffer that ``st`` is or holds, else None."""
        if st is None:
            return None
        if st.kind == "buffer":
            return self.buffer_owner.get(st.value[0])
        if st.kind == "tuple":
            return next((o for o in map(self.field_buffer_in, st.value) if o is not None), None)
        return None

    def stored_from_outside(self, m: Module, name: str) -> Optional[Loc]:
        """Where a module the build read assigns ``name`` as an attribute of module ``m``
        (``common.STEP = 8`` after ``from . import common``), else None: Python's value of
        ``m.name`` is then not the one ``m``'s own statements give."""
        for at in self.cache.package_init_stores(name):
            return at
        for other in list(self.cache.modules.values()):
            for dotted, attr, at in other.attr_stores:
                if dotted is None:
                    if attr == name:  # stored through a module object found at run time
                        return at
                    continue
                if dotted[0] not in other.imports:
                    if attr == name and dotted[0] not in other.consts \
                            and dotted[0] not in other.scope.functions:
                        # `M.C = 3` with M no import of that module: M may hold a module
                        # object found at run time (`M = sys.modules[...]`)
                        return at
                    continue
                file, imported_name, _ = other.imports[dotted[0]]
                # the store's whole path from the imported module: it rebinds m's name when
                # it ends there (`common.STEP = 8`), and changes the object m's name holds in
                # place when it goes on through it (`common.C.value = 3`, or `C.value = 3`
                # after `from .common import C`)
                chain = ([imported_name] if imported_name is not None else []) + \
                    [*dotted[1:], attr]
                for part in chain:
                    sub = submodule(file, part)
                    if sub is None:
                        if part == name and os.path.abspath(file) == os.path.abspath(m.path):
                            return at
                        break
                    file = sub
        return None

    def module_name(self, m: Module, name: str, node: ast.AST) -> tuple[K.Expr, Optional[Static]]:
        loc = self.loc(node)
        at = self.stored_from_outside(m, name)
        if at is not None:
            raise self.err(f"'{name}' of module '{module_label(m)}' is assigned from another "
                           f"module ({at.file}:{at.line}), so its value is not the one the "
                           f"module's own statements give: bind it once, in its module",
                           node, check="unknown-name")
        if name in m.consts:
            return self.global_of(m, name, node), None
        if name in m.scope.dtypes:
            return K.DType(m.scope.dtypes[name], loc), None
        if name in m.scope.functions:
            return K.Const(None, loc), Static("func", (m, m.scope.functions[name]))
        if name in m.imports:
            sub, attr = self.imported(m, name)
            if attr is None:
                return K.Const(None, loc), Static("usermod", sub)
            return self.renamed_builtin(name, self.module_name(sub, attr, node), node)
        if name in m.assigns:
            e, st = self.module_assign(m, name)
            value = dataclasses.replace(e, loc=loc) if e is not None else K.Const(None, loc)
            return self.renamed_builtin(name, (value, st), node)
        alias = m.scope.alias(name)
        if alias is not None:
            return self.renamed_builtin(name, (K.Const(None, loc), Static("mod", alias)), node)
        f = m.submodule(name)
        if f is not None:  # `pkg.common` after `import pkg.common`
            return K.Const(None, loc), Static("usermod", self.cache.get(f))
        if name in PYTHON_BUILTINS:
            return K.Const(None, loc), Static("mod", f"builtins.{name}")
        if name in m.scope.other:
            raise self.err(f"module-level name '{name}' is not a compile-time value the kernel "
                           f"can read (it is bound in module-level control flow, by a tuple or "
                           f"augmented assignment, by `:=` or a match pattern, through globals(), "
                           f"by a function declaring it global, by an exec'd string, or as a "
                           f"class, or deleted, or its object is changed in place: "
                           f"`C.value = 3`, setattr, `sys.modules[...].C = 3`); "
                           f"Triton kernels read globals that are tl.constexpr values, dtypes, "
                           f"modules or functions", node, check="unknown-name")
        if m is not self.frame.module:
            raise self.err(f"module '{module_label(m)}' has no attribute '{name}'", node,
                           check="unknown-name")
        raise self.err(f"name '{name}' is not defined here", node, check="unknown-name")

    def renamed_builtin(self, name: str, got: tuple[K.Expr, Optional[Static]],
                        node: ast.AST) -> tuple[K.Expr, Optional[Static]]:
        """``got``, the value of the module-level ``name``, unless it is one of Python's builtins
        bound under a name that Triton 3.6's builtin namespace does not hold (`rng = range`,
        `from builtins import min as mn`, `I = int`): Triton's global lookup takes a module-level
        name only when it is a tl.constexpr, a module, a jit function, a dtype, something of
        triton.language or one of those names (code_generator.global_lookup; "Cannot access
        global variable rng from within @jit'ed function"), and its dependency finder refuses a
        builtin function first ("Unsupported function referenced")."""
        st = got[1]
        if st is not None and st.kind == "mod" and isinstance(st.value, str) \
                and st.value.startswith("builtins.") and name not in TRITON_BUILTIN_NAMES \
                and st.value != "builtins.abs":  # refused under any name where it is called
            raise self.err(f"`{name}` is Python's {st.value[9:]} under another name, which a "
                           f"Triton 3.6 kernel cannot read (\"Cannot access global variable "
                           f"{name} from within @jit'ed function\"; a builtin function: "
                           f"\"Unsupported function referenced\"): call {st.value[9:]} by its "
                           f"own name", node, check="unknown-name")
        return got

    def imported(self, m: Module, name: str) -> tuple[Module, Optional[str]]:
        """(module, name in it or None for the module itself) of imported name ``name`` of
        ``m``; a name the module does not define is an error at the import (Python raises
        ImportError there)."""
        file, attr, at = m.imports[name]
        sub = self.cache.get(file)
        if attr is not None and not sub.defines(attr):
            raise TleError(f"cannot import name '{attr}' from '{module_label(sub)}' ({sub.path}):"
                           f" it defines no '{attr}' (Python raises ImportError)", at,
                           check="bad-import")
        if attr is not None and m is not self.root:
            # (the kernel's own file is imported first: what it imports runs to its end, and a
            # module importing from it back runs while it is partially initialised)
            back = self.cache.import_back(sub, m.path)
            later = [ln for ln in sub.bound_lines.get(attr, ()) if back is not None and ln > back]
            if later:
                # a circular import: Python imports `m` at line `back` of `sub`, and `m` reads
                # the binding of `attr` before it (`sub` is partially initialised), not the
                # one after it that the frontend would read
                raise TleError(f"`{attr}` is imported from '{module_label(sub)}', which imports "
                               f"this module back ({sub.path}:{back}) and binds '{attr}' again "
                               f"after that, at line {later[0]}: a circular import, where Python "
                               f"reads the binding before line {back} (a partially initialised "
                               f"module); bind '{attr}' once, before the import", at,
                               check="bad-import")
        return sub, attr

    def module_assign(self, m: Module, name: str) -> tuple[Optional[K.Expr], Optional[Static]]:
        """The value of module-level assignment ``name = expr`` of ``m``, evaluated once, as
        Python evaluates it when the module is imported (in ``m``'s names): a compile-time
        constant (a Global of ``m``'s), a dtype, a helper function, a module, a library name.
        Anything else (a runtime value, a pipe, ...) is an error at the assignment: Triton
        kernels read only such globals."""
        hit = m.resolved.get(name)
        if hit is not None:
            if hit[0] == "busy" and name in PYTHON_BUILTINS \
                    and len(m.bound_lines.get(name, ())) == 1:
                # `min = min`: the module binds the name nowhere before this assignment (and
                # nowhere after it: rebound-global), so Python reads the builtin there, as
                # `from builtins import min` binds it
                return None, Static("mod", f"builtins.{name}")
            if hit[0] == "busy":
                raise TleError(f"circular definition of module-level name '{name}' (Python "
                               f"raises NameError or reads a partially initialised module)",
                               hit[1], check="bad-import")
            return hit[1], hit[2]
        node = m.assigns[name]
        at = loc_of(m.path, node)
        # Python evaluates the assignment where it stands; the frontend reads module names at
        # their last binding, so a name the module binds again after it (`prod2 = produce`,
        # then a second `def produce`) held another value when Python read it (the first def):
        # read at its last binding, a safe second def verified a kernel that runs the first
        for n in ast.walk(node):
            if isinstance(n, ast.Name):
                later = [ln for ln in m.bound_lines.get(n.id, ()) if ln > node.lineno]
                if later:
                    raise TleError(f"module-level name '{name}' = `{ast.unparse(node)}` reads "
                                   f"'{n.id}', which the module binds again at line {later[0]}, "
                                   f"after this assignment: Python reads the binding before it "
                                   f"(bind '{n.id}' once, or assign '{name}' after its last "
                                   f"binding)", loc_of(m.path, n), check="rebound-global")
        m.resolved[name] = ("busy", at)
        # the constants the expression reads are not the kernel's (only its value is)
        saved = (self.out, self.sequential, self.in_partition, dict(self.consts),
                 dict(self.const_ids), self.not_triton)
        self.out, self.sequential, self.in_partition = [], 0, False
        self.not_triton = True  # Python evaluates it, not Triton
        self.frames.append(Frame(m, "", {}, "<module>"))
        try:
            e, st = self.expr(node)
            emitted = self.out
        except BaseException:
            del m.resolved[name]
            raise
        finally:
            self.frames.pop()
            self.out, self.sequential, self.in_partition = saved[:3]
            self.consts, self.const_ids, self.not_triton = saved[3:]
        v = fold(e)
        if st is not None and st.kind in ("func", "usermod", "mod"):
            result: tuple = (None, st)
        elif isinstance(e, K.DType):
            result = (e, None)
        elif not emitted and isinstance(v, (bool, int, float)):
            m.consts[name] = v
            result = (self.global_of(m, name, node), None)
        elif not emitted and isinstance(v, str):
            del m.resolved[name]
            raise TleError(f"module-level name '{name}' = `{ast.unparse(node)}` holds the string "
                           f"{v!r}: kernels read numbers and booleans from module constants, not "
                           f"strings; write the string where it is used (e.g. "
                           f"tle.pipe(..., barrier={v!r}))", at, check="unknown-name")
        else:
            del m.resolved[name]
            raise TleError(f"module-level name '{name}' = `{ast.unparse(node)}` is not a "
                           f"compile-time value: Triton kernels read globals that are tl.constexpr "
                           f"values (`{name} = tl.constexpr(...)`), dtypes, modules or functions",
                           at, check="unknown-name")
        m.resolved[name] = ("done",) + result
        return result
