"""Addresses as integer terms (z3), for the memory-race check (frontend/global_races.py).

A node run at one iteration of each loop around it is an :class:`Instance`; :func:`term` reads an
expression there: kernel arguments and program ids are symbols every instance shares, each
``tl.arange`` occurrence a lane of its own, a loop variable ``start + step * n``, a name the value
of the assignment that reaches the use (read where it is assigned), a counter a loop carries its
closed form, and what is not modelled an unknown of any value (frontend/global_races.py's
docstring gives the whole reading). The terms over-approximate the addresses an access reaches.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import NamedTuple, Optional

from ..ir import kernel as K
from .race_casts import CASTS, cast_target, fill_type, pointer_cast, target_of
from .race_sites import Part, Site


#: Ops whose value is their first argument's, as far as addresses go (hints, shapes, int casts).
SAME_VALUE = ("tl.multiple_of", "tl.max_contiguous", "tl.max_constancy", "tl.broadcast_to",
               "tl.reshape", "tl.view", "tl.expand_dims", "to_tensor", "tl.broadcast")


#: Ops whose value :func:`term` makes of their operands' (a choice among them, a fill, a
#: bound, a ceiling quotient), besides SAME_VALUE's and casts: every other op is an unknown.
COMPOSED = ("tl.where", "ifexp", "tl.full", "tl.minimum", "tl.maximum", "builtins.min",
            "builtins.max", "min", "max", "tl.cdiv")


#: Ops whose result is a number, never a pointer (an offset a pointer expression may add).
VALUES = ("tl.load", "tl.arange", "tl.program_id", "tl.num_programs", "tl.cdiv", "tl.zeros",
           "tl.full", "tl.minimum", "tl.maximum", "min", "max", "builtins.min", "builtins.max",
           "tl.sum", "tl.max", "tl.min",
           "tl.dot", "tle.gpu.scale_rows") + tuple(f"tl.{m}" for m in K.UNARY_MATH)


#: integer types narrower than 32 bits, and uint32: (least value, greatest value, modulus of a
#: cast to it)
NARROW_CASTS = {"int1": (0, 1, None), "int8": (-128, 127, 256), "uint8": (0, 255, 256),
                "int16": (-32768, 32767, 65536), "uint16": (0, 65535, 65536),
                "uint32": (0, 2 ** 32 - 1, 2 ** 32)}


#: the ranges of the 32- and 64-bit integer types a cast converts to (a uint64 one: its
#: unsigned value, which the model's signed reading of it agrees with modulo 2 ** 64)
_TARGET_RANGES = {"int32": (-2 ** 31, 2 ** 31 - 1), "int64": (-2 ** 63, 2 ** 63 - 1),
                  "uint64": (0, 2 ** 64 - 1)}

#: the integer types a cast converts to that the model reads
INTEGER_TYPES = ("int32", "int64", "uint64") + tuple(NARROW_CASTS)


#: the comparisons :func:`condition` reads
_COMPARE_OPS = ("==", "!=", "<", "<=", ">", ">=")


class Integers:
    """Arithmetic on unbounded integers: :class:`Model`'s reading until a check plugs in
    another (race_wraps.py's fixed-width one, with the same functions)."""

    @staticmethod
    def settle(model: "Model", e: K.BinOp, a, b, inst: "Instance", where: str):
        """The term of ``e`` (``+``, ``-``, ``*`` or ``<<`` by a number) of operand terms."""
        if e.op == "+":
            return a + b
        if e.op == "-":
            return a - b
        if e.op == "*":
            return a * b
        return a * (1 << model.z3.simplify(b).as_long())

    @staticmethod
    def operand(model: "Model", e: K.Expr, value, inst: "Instance", where: str,
                cut: bool = False):
        """The value of ``e`` an op that is no ring operation takes: ``value``."""
        return value

    @staticmethod
    def in_type(model: "Model", e: K.Expr, value, inst: "Instance", where: str,
                cut: bool = False, plus: int = 0):
        """``value`` computed from ``e`` in ``e``'s type: ``value``."""
        return value

    @staticmethod
    def unsigned(model: "Model", e: K.Expr, value, inst: "Instance", where: str):
        """The value of ``e`` a division or a right shift takes: ``value``."""
        return value

    @staticmethod
    def bits(model: "Model", e: K.Expr, inst: "Instance", where: str) -> int:
        """The bits of the type a shift ``e`` computes in: 64 (the widest)."""
        return 64

    @staticmethod
    def ordered(model: "Model", args, inst: "Instance", where: str) -> bool:
        """Whether a ``min`` / ``max`` of ``args`` orders their terms as integers: yes."""
        return True

    @staticmethod
    def compared(model: "Model", e: K.Compare, a, b, inst: "Instance", where: str):
        """The operand terms a comparison ``e`` compares as integers: ``(a, b)``."""
        return a, b

    @staticmethod
    def divides(model: "Model", e: K.BinOp, inst: "Instance", where: str) -> bool:
        """Whether ``e`` (a ``//`` or ``%`` by a divisor that is no number) divides signed
        values: yes (integers)."""
        return True


class Model:
    """Builds z3 terms of one kernel's expressions; symbols of kernel arguments and program ids
    are shared by every instance."""

    def __init__(self, kern: K.Kernel, domains: dict, constexprs: Optional[dict] = None):
        import z3

        self.z3 = z3
        self.kern = kern
        self.params = {p.name for p in kern.params}
        self.domains = domains
        #: integer constexpr arguments the kernel is read with (a --param's, DEFAULT_CONFIG's):
        #: each is its number in every term (a row pitch `row * D` is then one)
        self.constexprs = {n: v for n, v in (constexprs or {}).items()
                           if isinstance(v, int) and not isinstance(v, bool)
                           and n in self.params}
        #: those a term has read (a witness names their values)
        self.constexprs_read: set[str] = set()
        self._sym: dict[str, object] = {}
        #: terms of kernel-body expressions, by id: one value for every partition
        self.shared: dict[int, object] = {}
        #: (partition, id of its outermost loop) -> its range (:class:`LoopRange`)
        self.bounds: dict[tuple, LoopRange] = {}
        self.facts: list = []
        self._fresh = 0
        #: unknown's name -> the kernel arguments the expression it stands for reads
        self.hidden: dict[str, set] = {}
        self._edges: dict = {}
        #: facts about the kernel computed once (race_order.increasing)
        self.cache: dict = {}
        from .tensor_args import body_assigns

        self.prologue_assigns = body_assigns(kern.prologue)
        #: the arguments that are pointers (race_wraps.pointer_arguments): 64-bit; the others
        #: integers of int32 values
        self.pointers: set[str] = set()
        #: how arithmetic reads (race_wraps.py, which the check plugs in: values in their
        #: fixed-width types; :class:`Integers` until then)
        self.arith = Integers
        #: the integer arguments' kinds a signature gives (race_wraps.integer_widths)
        self.widths: dict[str, str] = {}
        #: the integer element types of the pointer arguments a signature gives
        #: (race_wraps.element_types): a value loaded through one has its type
        self.elements: dict[str, str] = {}
        #: (pointer expression, instance, where) -> the arguments it may be based on (the race
        #: check's global_races._candidates, plugged in beside ``elements``)
        self.based_on = None
        #: whether the terms being built are read as Triton computes them, their int32
        #: arithmetic wrapping around (race_wraps.py): an access's address, mask and the
        #: conditions of the ``if``s around it; a pipe index (race_order.py, whose proofs
        #: quantify over iterations) is read as an integer
        self.int32 = False
        #: (term id, range) -> (term, its wrap unknown, the wrapped term, their constraints):
        #: race_wraps._wrapped
        self.wraps: dict[tuple, tuple] = {}
        #: the bytes of an element of each pointer argument a signature types
        #: (race_wraps.element_bytes): an address wraps modulo 2 ** 64 bytes
        self.sizes: dict[str, int] = {}
        #: the arguments whose values are floats, no integers (:func:`floating`): the
        #: constexprs the kernel is read with a float (DEFAULT_CONFIG's ``"SCALE": 0.5``), and
        #: the scalars a signature types as floats (race_wraps.float_arguments, added by the
        #: race check)
        self.float_args: set[str] = {n for n, v in (constexprs or {}).items()
                                     if isinstance(v, float) and n in self.params}
        #: the constexprs of no value that may be floats (global_races.check_global_races'
        #: ``floats``), and those :func:`floating` has read as one
        self.maybe_float: set[str] = set()
        self.maybe_float_read: set[str] = set()
        #: the ids of the int32 range constraints (of integer arguments, of wrapped results:
        #: race_wraps.operand): the stride rule does not count a stride they read as read by
        #: a condition
        self.wrap_facts: set[int] = set()

    @contextmanager
    def fixed_width(self):
        """Terms built inside are read as Triton computes them (:attr:`int32`)."""
        before, self.int32 = self.int32, True
        try:
            yield
        finally:
            self.int32 = before

    def sym(self, name: str):
        if name.startswith("a:") and name[2:] in self.constexprs:
            self.constexprs_read.add(name[2:])
            return self.z3.IntVal(self.constexprs[name[2:]])
        if name not in self._sym:
            v = self.z3.Int(name)
            self._sym[name] = v
            lo, hi = self.domains.get(name[2:], (None, None)) if name.startswith("a:") else \
                (None, None)
            if lo is not None:
                self.facts.append(v >= lo)
            if hi is not None:
                self.facts.append(v <= hi)
            if name.startswith("a:") and name[2:] not in self.pointers and \
                    self.widths.get(name[2:], "i32") != "64":
                # an integer argument is an int32 (as the verdict states), or a uint32 where
                # the signature says so
                ranges = [v >= -2 ** 31, v < 2 ** 31] if self.widths.get(name[2:]) != "u32" \
                    else [v >= 0, v < 2 ** 32]
                self.wrap_facts.update(c.get_id() for c in ranges)
                self.facts += ranges
            if name.startswith("pid:"):
                # a program id lies in [0, num_programs) of its axis (the launch's grid)
                self.facts += [v >= 0, v < self.sym("nprog:" + name[4:])]
            if name.startswith("nprog:"):
                # a grid has 1 to 2 ** 31 - 1 programs along an axis
                self.facts += [v >= 1, v <= 2 ** 31 - 1]
        return self._sym[name]

    def fresh(self, tag: str, inst: "Instance"):
        self._fresh += 1
        v = self.z3.Int(f"{tag}#{self._fresh}")
        inst.fresh.append(v)
        return v


@dataclass
class Instance:
    """One dynamic run of a node of a partition: the iteration of each loop on its path."""

    part: Part
    site: Site
    label: str
    #: loop statement id -> (n, value of its variable)
    iters: dict = field(default_factory=dict)
    constraints: list = field(default_factory=list)
    fresh: list = field(default_factory=list)
    #: a loop on its path has a range of unknowns of its own (a nested loop's bound loaded in
    #: the loop around it): an iteration of it may be one the loop does not have
    unsure: bool = False
    #: where an access's pointer and mask are read with one lane per ``tl.arange`` (no axis
    #: moved: :func:`access_mask`), that lane by the id of the ``tl.arange`` node
    lanes: Optional[dict] = None
    #: the ranges of the loops on its path (:class:`LoopRange`), for the witness
    ranges: list = field(default_factory=list)


class LoopRange(NamedTuple):
    """A ``for`` loop's range as :func:`instance` read it: the start, stop and step terms, the
    unknowns their reading made (an int32 bound's wrap: race_wraps.py) and the loop."""

    start: object
    stop: object
    step: object
    made: tuple
    loop: K.For


def instance(model: Model, part: Part, site: Site, label: str) -> Instance:
    """An instance of ``site`` with a fresh iteration for each loop on its path, constrained to
    the loop's range (start, stop and step read at the outer loops' iterations)."""
    z3 = model.z3
    inst = Instance(part, site, label)
    for depth, loop in site.loops():
        n = z3.Int(f"{label}.n{depth}")
        inst.fresh.append(n)
        if isinstance(loop, K.While):
            inst.iters[id(loop)] = (n, None)
            inst.constraints.append(n >= 0)
            continue
        key = (part.kp.name, id(loop))
        got = model.bounds.get(key)
        if got is None:
            # read where the loop statement stands (names its block assigns before it hold)
            outer = Instance(part, _statement(site, depth), label, dict(inst.iters), [], [])
            # each read in its type, as Triton computes it, for an access's instance and a
            # pipe event's alike: the loop compares its counter with them, so `range(s *
            # 65536)` of an int32 `s` runs 65,536 times at s = -65535, where the integer
            # product is negative, and `range((s * 65536) // 65536)` none at s = 32768, where
            # an event in it was taken to order two accesses (adversarial round 76)
            with model.fixed_width():
                start, stop, step = (model.arith.operand(model, x, term(model, x, outer),
                                                         outer, "part")
                                     for x in (loop.start, loop.stop, loop.step))
            got = LoopRange(start, stop, step, tuple(outer.fresh), loop)
            if len(inst.iters) == 0:
                # the partition's outermost loop: its range is read once per run, so every
                # instance of the partition shares it (an event's iteration is then one the
                # loop really has)
                model.bounds[key] = got
                model.facts += outer.constraints
            else:
                inst.constraints += outer.constraints
                inst.fresh += outer.fresh
                inst.unsure = inst.unsure or bool(outer.fresh)
        inst.ranges.append(got)
        start, stop, step = got.start, got.stop, got.step
        t = start + step * n
        inst.iters[id(loop)] = (n, t)
        inst.constraints += [n >= 0, step != 0, z3.Implies(step > 0, t < stop),
                             z3.Implies(step < 0, t > stop)]
    return inst


def _statement(site: Site, depth: int) -> Site:
    """The site of the loop or ``if`` statement at step ``depth`` of ``site``'s path, where its
    range or condition is read: in the loops above it, after the statements before it."""
    return Site(site.path[:depth] + (("at", site.path[depth][1], 0),))


def condition(model: Model, e: K.Expr, inst: Instance, where: str = "part",
              names: bool = False):
    """The z3 truth of an ``if``'s condition at ``inst``, or None where it is not read (a
    float, a loaded flag: the branch is then taken to run either way). ``names``: a name is
    read as the one value that reaches it (a mask `m = offs < 64`)."""
    z3 = model.z3
    number = _tensor_number(e)
    if number is not None:
        # a number a plain assignment bound (`f = 1; ... if f else ...`): Triton tests the
        # tensor at run time, and it holds the number (adversarial round 57: the builder keeps
        # such a conditional expression whole, where it took the branch the number chooses)
        return z3.BoolVal(number != 0)
    if names and isinstance(e, K.Name):
        if where == "part" and _loop_value(inst, e.id) is not None:
            return None
        got = single_value(model, e.id, inst, where)
        if got is None:
            return None
        if got[1] == "prologue":
            return condition(model, got[0], inst, "prologue", names)
        return condition(model, got[0], _at(inst, got[2]), "part", names)
    if isinstance(e, K.Compare):
        if not _compare_read(e):
            return None
        if model.int32 and (floating(model, e.lhs, inst, where) or
                            floating(model, e.rhs, inst, where)):
            # floats compared as reals (`2 < v < 3` holds for v = 2.5): a truth the model does
            # not read, either way at each reading (so that a conjunction, a negation and an
            # else branch of it stay sound, as :func:`_read_whole` takes it to be read), but
            # for comparisons of one value with one number (below)
            return _unread_compare(model, e, inst, where, "fcompare")
        a = model.arith.operand(model, e.lhs, term(model, e.lhs, inst, 24, where), inst, where)
        b = model.arith.operand(model, e.rhs, term(model, e.rhs, inst, 24, where), inst, where)
        got = model.arith.compared(model, e, a, b, inst, where)
        if got is None:
            # operands of a width or signedness the model does not know: a truth it does not
            # read, either way at each reading (as a comparison of floats above)
            return _unread_compare(model, e, inst, where, "ucompare")
        a, b = got
        return {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b,
                ">=": a >= b}.get(e.op)
    if names and isinstance(e, K.BinOp) and e.op in ("&", "|"):
        # of a mask (a boolean: Triton refuses another type) the logical and / or
        e = K.BoolOp(e.op, (e.lhs, e.rhs), e.loc)
    if isinstance(e, K.BoolOp) and e.op in ("and", "or", "&", "|"):
        items = [condition(model, x, inst, where, names) for x in e.items]
        if e.op in ("and", "&"):
            known = [c for c in items if c is not None]  # a conjunct left out: weaker
            return z3.And(*known) if known else None
        return None if any(c is None for c in items) else z3.Or(*items)
    if isinstance(e, K.UnaryOp) and e.op == "not" and _read_whole(e.operand):
        c = condition(model, e.operand, inst, where, names)
        return None if c is None else z3.Not(c)
    return None


#: a comparison's operator with its operands swapped (`a < b` is `b > a`)
_SWAPPED = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


def _unread_compare(model: Model, e: K.Compare, inst: Instance, where: str, tag: str):
    """The truth of a comparison the model does not compute (of a float, or of a value of
    unknown width or signedness): either, at each reading, except where its two operands are
    one value each (a value no arithmetic made, the kernel body's one for every partition, or
    a number): then the comparisons of those two values are related as those of one type are,
    whatever the type (a float's too, NaN compared false), which z3 reads through three truths
    of the pair, `less`, `equal` and `greater`, at most one of which holds. So complementary
    masks on one loaded value (`n > 0`, `n <= 0`) are apart, where each comparison read on its
    own would let both hold."""
    z3 = model.z3
    terms = [term(model, x, inst, 24, where) for x in (e.lhs, e.rhs)]
    if not all(z3.is_const(t) for t in terms) or all(z3.is_int_value(t) for t in terms) or \
            any(isinstance(x, K.Const) and not isinstance(x.value, int) for x in (e.lhs, e.rhs)):
        return model.fresh(tag, inst) == 1
    key, op = (terms[0].get_id(), terms[1].get_id()), e.op
    if key[0] > key[1]:
        key, op = (key[1], key[0]), _SWAPPED[op]
    table = model.cache.setdefault("unread_compare", {})
    got = table.get(key)
    if got is None:
        lt, eq, gt = (model.fresh(tag, inst) for _ in range(3))
        model.facts += [z3.And(x >= 0, x <= 1) for x in (lt, eq, gt)] + [lt + eq + gt <= 1]
        got = table[key] = (lt, eq, gt)
    else:
        inst.fresh.extend(got)  # (a witness's words name the float truths it read)
    lt, eq, gt = (x == 1 for x in got)
    return {"<": lt, "<=": z3.Or(lt, eq), ">": gt, ">=": z3.Or(gt, eq), "==": eq,
            "!=": z3.Not(eq)}[op]


#: ops whose value :func:`term` reads as their first operand's but on other axes (an axis added,
#: a reshape): the lanes of an access whose pointer or mask holds one are not one per range
_AXIS_MOVES = ("tl.reshape", "tl.view", "tl.expand_dims", "tl.broadcast_to", "tl.broadcast")


def _mask_expr(op: K.Op) -> Optional[K.Expr]:
    """The ``mask`` of a load (``tl.load(ptr, mask)``), a store (``tl.store(ptr, v, mask)``) or
    an atomic (``tl.atomic_add(ptr, v, mask)``; a compare-and-swap has none), or None."""
    got = op.kw("mask")
    if got is not None:
        return got
    at = 1 if op.name == "tl.load" else None if op.name == "tl.atomic_cas" else 2
    return op.args[at] if at is not None and len(op.args) > at else None


def _flat(model: Model, exprs: list, part: Part) -> bool:
    """Whether no value :func:`term` may read for ``exprs`` (through the names they read: every
    value of each, a partition parameter's binding, the kernel body's values) moves a tensor's
    values to another axis (`offs[:, None]`, a reshape): each 1-d range then lines up with the
    last axis in the pointer and the mask alike (Triton's broadcasting), so that every read of
    one ``tl.arange`` in them is one lane. A loaded value, a reduction, are read as unknowns:
    their operands are not followed."""
    binds = dict(part.kp.bindings)
    todo = [(e, "part") for e in exprs]
    seen: set = set()
    while todo:
        e, where = todo.pop()
        if isinstance(e, K.Name):
            key = (where, e.id)
            if key in seen:
                continue
            seen.add(key)
            if where == "part":
                todo += [(v, "part") for v, _ in part.assigns.get(e.id, [])]
                if e.id in binds:
                    todo.append((binds[e.id], "prologue"))
            else:
                todo += [(v, "prologue") for v in model.prologue_assigns.get(e.id, [])]
            continue
        if isinstance(e, K.Subscript) and not all(isinstance(i, int) for i in e.index):
            return False
        if isinstance(e, K.Op):
            if e.name in _AXIS_MOVES:
                return False
            if e.name not in COMPOSED + SAME_VALUE + CASTS + ("tl.arange",):
                continue  # an unknown of its own (a load, a reduction): operands not read
        todo += [(c, where) for c in K.children(e)]
    return True


#: ops of one operand whose value has that operand's shape (hints, casts)
_SAME_SHAPE = ("tl.multiple_of", "tl.max_contiguous", "tl.max_constancy", "to_tensor")


class _Aligned:
    """Whether each ``tl.arange`` that :func:`term` may read in an access's pointer and mask
    lands on one axis of the access (``rows[:, None] * N + cols[None, :]`` beside the mask
    ``(rows[:, None] < M) & (cols[None, :] < N)``: ``rows`` on axis 0 in both, ``cols`` on axis
    1), so that element ``(i, k)`` of the access reads ``rows`` at ``i`` in the pointer and in
    the mask alike, one lane per range. An axis is placed as Triton broadcasts: an operand of
    rank ``r`` in a result of rank ``R`` takes its last ``r`` axes, ``x[:, None]`` puts ``x``'s
    axis first, and the mask is broadcast to the pointer's shape the same way. Every value of
    each name is followed (a partition parameter's binding, the kernel body's values); a value
    whose rank is not known here (a load, a reshape, a name its own value reads, values of
    different ranks) makes the answer no."""

    def __init__(self, model: Model, part: Part):
        self.model, self.part = model, part
        self.binds = dict(part.kp.bindings)
        self.ranks: dict = {}
        self.places: dict[int, set] = {}
        self.seen: set = set()

    def _values(self, name: str, where: str) -> Optional[list]:
        """(expression, where it is read) of each value ``name`` may hold, a loop variable's a
        scalar (the number 0 stands for it); [] for a kernel argument; None where it is none
        of these."""
        if where == "part":
            vals = [(v, "part") for v, _ in self.part.assigns.get(name, [])]
            if name in self.binds:
                vals.append((self.binds[name], "prologue"))
            loop = name in self.part.loop_vars
        else:
            vals = [(v, "prologue") for v in self.model.prologue_assigns.get(name, [])]
            loop = any(isinstance(st, K.For) and st.var == name
                       for st in K.walk_stmts(self.model.kern.prologue))
        if loop:  # (a name also assigned a tensor elsewhere has values of two ranks: none)
            vals.append((K.Const(0), where))
        if not vals:
            return [] if name in self.model.params else None
        return vals

    def _operands(self, e: K.Expr) -> Optional[list]:
        """The operands of ``e`` that broadcast together into its value, or None."""
        if isinstance(e, (K.BinOp, K.Compare)):
            return [e.lhs, e.rhs]
        if isinstance(e, K.BoolOp):
            return list(e.items)
        if isinstance(e, K.UnaryOp):
            return [e.operand]
        if isinstance(e, K.Op) and e.args:
            if e.name in _SAME_SHAPE + CASTS:
                return [e.args[0]]  # (a cast's type, a hint's number: no operand)
            if e.name in ("tl.where", "ifexp", "tl.cdiv") + _MIN_MAX:
                return list(e.args)
        return None

    def rank(self, e: K.Expr, where: str, depth: int = 32) -> Optional[int]:
        """The rank of ``e``'s value, or None where it is not known here."""
        if depth <= 0:
            return None
        if isinstance(e, (K.Const, K.Global)):
            return 0
        if isinstance(e, K.Name):
            key = (where, e.id)
            if key in self.ranks:
                return self.ranks[key]
            self.ranks[key] = None  # a name its own value reads: not known
            vals = self._values(e.id, where)
            got = None
            if vals is not None:
                rs = {self.rank(v, w, depth - 1) for v, w in vals} or {0}
                got = rs.pop() if len(rs) == 1 else None
            self.ranks[key] = got
            return got
        if isinstance(e, K.Subscript):
            if not all(i in (":", None) for i in e.index) or \
                    self.rank(e.value, where, depth - 1) != sum(i == ":" for i in e.index):
                return None
            return len(e.index)
        if isinstance(e, K.Op):
            if e.name == "tl.arange":
                return 1
            if e.name in ("tl.program_id", "tl.num_programs"):
                return 0
        ops = self._operands(e)
        if not ops:
            return None
        rs = [self.rank(x, where, depth - 1) for x in ops]
        return None if None in rs else max(rs)

    def place(self, e: K.Expr, where: str, axes: tuple, depth: int = 32) -> bool:
        """Record the axes of the access each ``tl.arange`` in ``e`` (whose axes are
        ``axes``) lands on; False where a rank is not known."""
        if depth <= 0:
            return False
        if isinstance(e, (K.Const, K.Global)):
            return True
        if isinstance(e, K.Name):
            key = (where, e.id, axes)
            if key in self.seen:
                return True
            self.seen.add(key)
            vals = self._values(e.id, where)
            return vals is not None and all(self.place(v, w, axes, depth - 1) for v, w in vals)
        if isinstance(e, K.Subscript):
            inner = tuple(a for a, i in zip(axes, e.index) if i == ":")
            return self.place(e.value, where, inner, depth - 1)
        if isinstance(e, K.Op):
            if e.name == "tl.arange":
                self.places.setdefault(id(e), set()).add(axes)
                return True
            if e.name in ("tl.program_id", "tl.num_programs"):
                return True
        ops = self._operands(e)
        if not ops:
            return False
        for x in ops:
            r = self.rank(x, where)
            if r is None or r > len(axes):
                return False
            if not self.place(x, where, axes[len(axes) - r:], depth - 1):
                return False
        return True

    def __call__(self, ptr: K.Expr, mask: K.Expr) -> bool:
        rp, rm = self.rank(ptr, "part"), self.rank(mask, "part")
        if rp is None or rm is None:
            return False
        top = max(rp, rm)
        if not (self.place(ptr, "part", tuple(range(top - rp, top)))
                and self.place(mask, "part", tuple(range(top - rm, top)))):
            return False
        return all(len(p) == 1 for p in self.places.values())


class _Slopes:
    """What a ``tl.max_contiguous(x, values)`` hint claims, proved of ``x`` or not.

    Triton trusts the hint: its axis analysis takes ``values[d]`` as the contiguity of ``x``
    along axis ``d`` (runs of that many elements, each one above the one before it), and the
    load or store of a pointer so hinted is vectorised along it, each thread accessing the
    elements ``p, p + 1, ..., p + v - 1`` from the address ``p`` of the first element of its
    run. Where the claim is false (``tl.max_contiguous(2 * offs, 128)``: even offsets) the
    access reaches other addresses than the elements' own (``y + 1``, ``y + 3``, ...), which
    the reading of the hint as its operand's value never sees (adversarial round 76).

    ``slopes(e)`` is the change of ``e``'s value per step along each of its axes, where ``e`` is
    affine along each axis with an integer slope that the names it reads agree on (a
    ``tl.arange`` 1, a scalar nothing), else None; the hint is proved where every axis it
    claims a run longer than 1 along has slope 1."""

    def __init__(self, model: Model, part: Part):
        self.values = _Aligned(model, part)._values
        self.model = model
        self.busy: set = set()
        self.guess: dict = {}

    def _number(self, e: K.Expr) -> Optional[int]:
        if isinstance(e, (K.Const, K.Global)):
            v = getattr(e.value, "value", e.value)
            return v if isinstance(v, int) and not isinstance(v, bool) else None
        if isinstance(e, K.Name) and e.id in self.model.constexprs:
            v = self.model.constexprs[e.id]
            return v if isinstance(v, int) and not isinstance(v, bool) else None
        return None

    def slopes(self, e: K.Expr, where: str, depth: int = 32) -> Optional[tuple]:
        if depth <= 0:
            return None
        sub = lambda x: self.slopes(x, where, depth - 1)  # noqa: E731
        if isinstance(e, (K.Const, K.Global)):
            v = getattr(e.value, "value", e.value)
            return () if isinstance(v, int) else None
        if isinstance(e, K.Name):
            key = (where, e.id)
            if key in self.busy:
                # a name its own value reads (a counter, `offs += 64`): the slopes its other
                # values give, where the check below finds every value keeping them
                return self.guess.get(key)
            vals = self.values(e.id, where)
            if vals is None:
                return None
            self.busy.add(key)
            try:
                got = [self.slopes(v, w, depth - 1) for v, w in vals]
                kept = set(got) - {None}
                if None in got and len(kept) == 1 and key not in self.guess:
                    self.guess[key] = kept.pop()
                    try:
                        got = [self.slopes(v, w, depth - 1) for v, w in vals]
                    finally:
                        del self.guess[key]
            finally:
                self.busy.discard(key)
            kept = set(got) or {()}
            return kept.pop() if len(kept) == 1 else None
        if isinstance(e, K.Subscript):
            inner = sub(e.value)
            if inner is None or not all(i in (":", None) for i in e.index) or \
                    len(inner) != sum(i == ":" for i in e.index):
                return None
            it = iter(inner)
            return tuple(next(it) if i == ":" else 0 for i in e.index)
        if isinstance(e, K.UnaryOp):
            inner = sub(e.operand)
            if inner is None or e.op not in ("-", "+"):
                return None
            return tuple(-x for x in inner) if e.op == "-" else inner
        if isinstance(e, K.BinOp):
            a, b = sub(e.lhs), sub(e.rhs)
            if a is None or b is None:
                return None
            n = max(len(a), len(b))
            a, b = (0,) * (n - len(a)) + a, (0,) * (n - len(b)) + b
            if e.op == "+":
                return tuple(x + y for x, y in zip(a, b))
            if e.op == "-":
                return tuple(x - y for x, y in zip(a, b))
            if not any(a) and not any(b):
                return a  # of values the same along every axis
            if e.op == "*":
                for x, c in ((a, self._number(e.rhs)), (b, self._number(e.lhs))):
                    if c is not None:
                        return tuple(v * c for v in x)
            if e.op == "<<":
                c = self._number(e.rhs)
                if c is not None and 0 <= c < 64:
                    return tuple(v << c for v in a)
            return None
        if isinstance(e, K.Op):
            if e.name == "tl.arange":
                return (1,)
            if e.name in ("tl.multiple_of", "tl.max_contiguous", "tl.max_constancy",
                          "to_tensor") + CASTS and e.args:
                return sub(e.args[0])
        if isinstance(e, (K.Op, K.Compare, K.BoolOp)):
            # any other op, of scalar operands alone, is a scalar
            ops = list(e.args) + [v for _, v in e.kwargs] if isinstance(e, K.Op) else \
                [e.lhs, e.rhs] if isinstance(e, K.Compare) else list(e.items)
            if all(isinstance(x, K.DType) or sub(x) == () for x in ops):
                return ()
        return None

    def proved(self, hint: K.Op, where: str) -> bool:
        """Whether ``tl.max_contiguous(x, values)`` holds of ``x`` (class docstring)."""
        if len(hint.args) < 2:
            return False
        v = hint.args[1]
        items = list(v.items) if isinstance(v, K.TupleExpr) else [v]
        got = self.slopes(hint.args[0], where)
        if got is None or len(got) != len(items):
            return False
        for item, slope in zip(items, got):
            c = self._number(item)
            if (c is None or c > 1) and slope != 1:
                return False
        return True


def access_mask(model: Model, op: K.Op, inst: Instance):
    """The pointer of access ``op`` at ``inst`` as a term, its mask's condition added to the
    instance's constraints where :func:`condition` reads it (names followed: `m = offs < 64`):
    a lane the mask leaves out accesses nothing. Where no axis is moved (:func:`_flat`), the
    pointer and the mask read one lane per ``tl.arange`` (`offs` in `y + offs` and `offs < 64`
    is one number); else each occurrence is a lane of its own, and the mask only says that some
    lane is on."""
    from .race_sites import pointer_of

    ptr, mask = pointer_of(op), _mask_expr(op)
    if mask is not None and (_flat(model, [ptr, mask], inst.part)
                             or _Aligned(model, inst.part)(ptr, mask)):
        inst.lanes = {}
    with model.fixed_width():  # its int32 arithmetic wraps around (race_wraps.py)
        t = term(model, ptr, inst)
        c = condition(model, mask, inst, names=True) if mask is not None else None
    if c is not None:
        inst.constraints.append(c)
    inst.lanes = None
    return t


def branch_conditions(model: Model, inst: Instance) -> None:
    """Constrain ``inst`` by the conditions of the ``if`` branches on its path (read at the
    iterations of the loops above each ``if``), where they can be read."""
    z3 = model.z3
    for d, s in enumerate(inst.site.path):
        if s[0] != "if":
            continue
        outer = Instance(inst.part, _statement(inst.site, d), inst.label, inst.iters,
                         inst.constraints, inst.fresh)
        with model.fixed_width():  # as Triton computes it (race_wraps.py)
            c = condition(model, s[2].cond, outer)
        if c is None:
            continue
        if s[3] == "else":
            # only where the condition is read whole is its negation the else branch's
            if not _read_whole(s[2].cond):
                continue
            c = z3.Not(c)
        inst.constraints.append(c)


def floating(model: Model, e: K.Expr, inst: Instance, where: str, depth: int = 16,
             seen: frozenset = frozenset()) -> bool:
    """Whether the value of ``e`` may be a float, which the model's integer terms do not
    read: a float number, a true division ``/``, a cast or fill to a float type (or to one not
    named here), a load through a pointer the signature does not type as an integer one
    (``*fp32``, or no signature: any element type), an argument the signature types as a
    float (``fp32``), an op the model does not read (a math function, a reduction), and
    arithmetic, choices and names of any of them. Triton converts a float to an integer by
    truncation (``(v * 2).to(tl.int32)`` of v = 2.5 is 5, odd) and compares floats as reals
    (``2 < v < 3`` holds for v = 2.5), so a cast or a comparison of a float is read as an
    unknown (:func:`_cast`, :func:`condition`). A loop variable, a lane, a program id, an
    integer argument and a number of no fraction are no floats."""
    key = (id(e), where, tuple((x[0], x[1]) for x in inst.site.path))
    memo = model.cache.setdefault("float", {})
    if key in memo and (memo[key] or not seen):
        return memo[key]
    got = _floating(model, e, inst, where, depth, seen)
    if got or not seen:
        # (a name met again inside its own values counts no float: within such a walk only a
        # float found is the value's own, whatever names the walk has passed)
        memo[key] = got
    return got


def _floating(model: Model, e: K.Expr, inst: Instance, where: str, depth: int,
              seen: frozenset) -> bool:
    if depth <= 0:
        return True
    sub = lambda x, at=inst, w=where: floating(model, x, at, w, depth - 1, seen)  # noqa: E731
    if isinstance(e, (K.Const, K.Global)):
        return isinstance(getattr(e.value, "value", e.value), float)
    if isinstance(e, (K.Compare, K.BoolOp)):
        return False  # a boolean
    if isinstance(e, K.UnaryOp):
        return e.op != "not" and sub(e.operand)
    if isinstance(e, K.BinOp):
        return e.op == "/" or sub(e.lhs) or sub(e.rhs)
    if isinstance(e, K.Subscript):
        if len(e.index) == 1 and isinstance(e.index[0], int):
            got = item_of(model, e, inst, where)
            return True if got is None else sub(got[0], got[1], got[2])
        return sub(e.value)
    if isinstance(e, K.Name):
        return _floating_name(model, e.id, inst, where, depth, seen)
    if isinstance(e, K.Op):
        if e.name in CASTS or e.name in ("tl.full", "tl.zeros"):
            return not pointer_cast(e) and target_of(e) not in INTEGER_TYPES
        if e.name in SAME_VALUE:
            return bool(e.args) and sub(e.args[0])
        if e.name in ("tl.where", "ifexp") and len(e.args) == 3:
            return sub(e.args[1]) or sub(e.args[2])
        if e.name in _MIN_MAX or e.name == "tl.cdiv":
            return any(sub(x) for x in e.args)
        if e.name in ("tl.arange", "tl.program_id", "tl.num_programs"):
            return False
        if e.name == "tl.load":
            ptr = e.args[0] if e.args else e.kw("pointer")
            if ptr is None or model.based_on is None:
                return True
            based = model.based_on(ptr, inst, where)
            return not based or any(b not in model.elements for b in based)
        return True  # an op the model does not read: a math function, a reduction
    return True


def _floating_name(model: Model, name: str, inst: Instance, where: str, depth: int,
                   seen: frozenset) -> bool:
    """:func:`floating` of a name: a loop variable's range is of integers; else any value the
    name holds (each assignment, a partition parameter's binding, a kernel argument as the
    signature types it). A name met again inside its own values (a counter) is decided by its
    other values."""
    if (where, name) in seen:
        return False
    seen = seen | {(where, name)}
    if where == "part" and isinstance(loop_of(inst.site, name), K.For):
        return False
    values: list = []
    if where == "part":
        values = [(v, "part") for v, _ in inst.part.assigns.get(name, [])]
        binds = dict(inst.part.kp.bindings)
        if name in binds:
            values.append((binds[name], "prologue"))
            return any(floating(model, v, inst, w, depth - 1, seen) for v, w in values)
    else:
        values = [(v, "prologue") for v in model.prologue_assigns.get(name, [])]
    if name in model.params and name in model.float_args:
        if name in model.maybe_float:
            model.maybe_float_read.add(name)  # (a refusal names it: global_races.py)
        return True
    return any(floating(model, v, inst, w, depth - 1, seen) for v, w in values)


def _compare_read(e: K.Compare) -> bool:
    """Whether :func:`condition` reads the comparison ``e``: one of the six, of integers the
    model gives signed values (a cast to an unsigned 64-bit type, which the model leaves the
    value it had, makes a negative number a large one, so such a comparison is not read)."""
    return e.op in _COMPARE_OPS and not any(target_of(x) == "uint64" for x in K.walk_expr(e))


def _tensor_number(e: K.Expr):
    """The number of ``to_tensor(n)`` (a number a plain assignment bound, which the builder
    folded the name to), else None."""
    if isinstance(e, K.Op) and e.name == "to_tensor" and len(e.args) == 1 \
            and isinstance(e.args[0], K.Const) and isinstance(e.args[0].value, (bool, int)):
        return int(e.args[0].value)
    return None


def _read_whole(e: K.Expr) -> bool:
    """Whether :func:`condition` reads ``e`` without leaving a conjunct out."""
    if _tensor_number(e) is not None:
        return True
    if isinstance(e, K.Compare):
        return _compare_read(e)
    if isinstance(e, K.BoolOp):
        return all(_read_whole(x) for x in e.items)
    if isinstance(e, K.UnaryOp) and e.op == "not":
        return _read_whole(e.operand)
    return False


#: :func:`_loop_value` of a loop variable whose loop body binds it again
REBOUND = object()


def loop_of(site: Site, name: str):
    """The innermost ``for`` loop of variable ``name`` on the path of ``site``, or None; or
    :data:`REBOUND` where that loop's body binds the name again (an assignment, or a nested
    loop of the same variable, which leaves its last value behind), so that at a use the name
    may hold another value than the loop's."""
    for _, loop in reversed(site.loops()):
        if isinstance(loop, K.For) and loop.var == name:
            if any((isinstance(s, K.Assign) and s.target == name)
                   or (isinstance(s, K.For) and s.var == name) for s in K.walk_stmts(loop.body)):
                return REBOUND
            return loop
    return None


def _loop_value(inst: Instance, name: str):
    """The value of loop variable ``name`` at ``inst`` (:func:`loop_of`), None, or
    :data:`REBOUND`."""
    loop = loop_of(inst.site, name)
    return inst.iters[id(loop)][1] if loop is not None and loop is not REBOUND else loop


def _assigned_before(assign: Site, use: Site) -> bool:
    """Whether the assignment at ``assign`` is the value a read at ``use`` sees at the same
    iterations: every loop and branch holding the assignment holds the use too, and in their
    innermost common block the assignment's statement comes first."""
    blocks = assign.path[:-1]
    if len(use.path) <= len(blocks) or use.path[:len(blocks)] != blocks:
        return False
    return assign.path[-1][1] < use.path[len(blocks)][1]


def term(model: Model, e: K.Expr, inst: Instance, depth: int = 24, where: str = "part"):
    """The integer term of ``e`` at ``inst`` (``where``: "part" for a partition body's names,
    "prologue" for the kernel body's). Where it is an unknown made for ``e``, the kernel
    arguments ``e`` reads are recorded as hidden in it (``model.hidden``): a stride among them
    may be a factor of its value, which the stride rule could not see."""
    # one expression read twice at one instance (the pointer's `rows` and the mask's, a
    # quotient's row and column) is one value: its term is made once, so that its unknowns
    # (a quotient, a wrap) are one, not two that only nonlinear reasoning would tie. Kept per
    # instance (its constraints' list, which the instances moved to an assignment share), per
    # site and per reading (int32 or integers); a term that holds a lane of its own occurrence
    # (no lanes shared by the access: `rows[:, None]` beside `rows[None, :]`) is made anew
    key = (id(e), where, model.int32, tuple((x[0], x[1]) for x in inst.site.path),
           id(inst.constraints), id(inst.iters),
           id(inst.lanes) if inst.lanes is not None else None)
    memo = model.cache.setdefault("terms", {})
    if key in memo:
        return memo[key][0]
    before = len(inst.fresh)
    t = _term(model, e, inst, depth, where)
    z3 = model.z3
    if inst.lanes is not None or not any(
            (const_name(z3, v) or "").startswith("lane#") for v in inst.fresh[before:]):
        # (the objects whose ids the key holds are kept alive beside the term)
        memo[key] = (t, e, inst.constraints, inst.iters, inst.lanes)
    name = const_name(z3, t)
    if name is not None and "#" in name and name not in model.hidden:
        model.hidden[name] = _reads(model, e, inst.part, where)
    return t


def const_name(z3, t) -> Optional[str]:
    """The name of ``t`` when it is an uninterpreted constant (an unknown or an argument), else
    None (``str(t)`` spells it too, through z3's pretty printer, many times slower). Read
    through z3's C API, as ``z3.is_const(t)``, ``t.decl().kind()`` and ``t.decl().name()`` read
    it, without the Python wrappers of the declaration each of those makes."""
    import z3 as _z3

    if not isinstance(t, _z3.ExprRef):
        return None
    ctx = t.ctx.ref()
    a = t.as_ast()
    if _z3.Z3_get_ast_kind(ctx, a) != _z3.Z3_APP_AST:  # a numeral's declaration is none of these
        return None
    app = _z3.Z3_to_app(ctx, a)
    if _z3.Z3_get_app_num_args(ctx, app):
        return None
    decl = _z3.Z3_get_app_decl(ctx, app)
    if _z3.Z3_get_decl_kind(ctx, decl) != _z3.Z3_OP_UNINTERPRETED:
        return None
    sym = _z3.Z3_get_decl_name(ctx, decl)
    if _z3.Z3_get_symbol_kind(ctx, sym) == _z3.Z3_INT_SYMBOL:
        return "k!%s" % _z3.Z3_get_symbol_int(ctx, sym)
    return _z3.Z3_get_symbol_string(ctx, sym)


def _reads(model: Model, e: K.Expr, part: Part, where: str) -> set[str]:
    """The kernel arguments the value of ``e`` may depend on: those it names, and those of
    every value and loop range of each name it reads, through the names those read."""
    todo = list(_names_in(e, where))
    seen, out = set(todo), set()
    while todo:
        node = todo.pop()
        if node[0] == "param":
            out.add(node[1])
            continue
        for nxt in _name_edges(model, part, node):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return out


def _names_in(e: K.Expr, where: str) -> set:
    return {(where, x.id) for x in K.walk_expr(e) if isinstance(x, K.Name)}


def _name_edges(model: Model, part: Part, node: tuple) -> set:
    """What the name ``node`` ((body, name)) reads: its values, its loops' ranges, the binding
    of a partition parameter, or the kernel argument it is."""
    key = (part.kp.name, node)
    if key in model._edges:
        return model._edges[key]
    where, name = node
    out: set = set()
    if where == "part":
        vals = [v for v, _ in part.assigns.get(name, [])]
        body = part.kp.body
        binds = dict(part.kp.bindings)
    else:
        vals = list(model.prologue_assigns.get(name, []))
        body = model.kern.prologue
        binds = {}
    for st in K.walk_stmts(body):
        if isinstance(st, K.For) and st.var == name:
            vals += [st.start, st.stop, st.step]
    for v in vals:
        out |= _names_in(v, where)
    if where == "part" and name in binds:  # its first value, whatever the body assigns
        out |= _names_in(binds[name], "prologue")
    elif name in model.params and (where == "prologue" or name not in binds):
        out.add(("param", name))
    model._edges[key] = out
    return out


def _term(model: Model, e: K.Expr, inst: Instance, depth: int, where: str):
    z3 = model.z3
    if depth <= 0:
        return model.fresh("deep", inst)
    if isinstance(e, K.Const):
        if isinstance(e.value, bool):
            return z3.IntVal(int(e.value))
        if isinstance(e.value, int):
            return z3.IntVal(e.value)
        return model.fresh("const", inst)
    if isinstance(e, K.Global):
        v = e.value
        v = getattr(v, "value", v)  # tl.constexpr(64)
        if isinstance(v, bool):
            return z3.IntVal(int(v))
        if isinstance(v, int):
            return z3.IntVal(v)
        return model.fresh("global", inst)
    if isinstance(e, K.Name):
        return _name(model, e.id, inst, depth, where)
    if isinstance(e, K.Subscript):
        if len(e.index) == 1 and isinstance(e.index[0], int):
            got = item_of(model, e, inst, where)
            if got is not None:
                item, at, w = got
                if w == "prologue":
                    return _prologue_term(model, item, at, depth - 1)
                return term(model, item, at, depth - 1, w)
            return model.fresh("item", inst)
        return term(model, e.value, inst, depth - 1, where)  # a broadcast: the same values
    if isinstance(e, K.UnaryOp):
        a = term(model, e.operand, inst, depth - 1, where)
        if e.op == "-":
            return -a
        if e.op == "+":
            return a
        if e.op == "~":
            return -a - 1
        return model.fresh("not", inst)
    if isinstance(e, K.BinOp):
        return _binop(model, e, inst, depth, where)
    if isinstance(e, K.Op):
        return _op(model, e, inst, depth, where)
    return model.fresh("expr", inst)


def _tuple_of(model: Model, e: K.Expr, inst: Instance, where: str, depth: int = 16):
    """The tuple expression ``e`` names, with the instance and the body (``where``) its items
    are read at, following names (read where they are assigned) and items of tuples (``xa[0]``
    of ``xa = ((p, M), N)``); None where it is no such tuple."""
    for _ in range(depth):
        if isinstance(e, K.TupleExpr):
            return e, inst, where
        if isinstance(e, K.Subscript):
            got = item_of(model, e, inst, where, depth - 1)
            if got is None:
                return None
            e, inst, where = got
            continue
        if not isinstance(e, K.Name):
            return None
        vals = single_value(model, e.id, inst, where)
        if vals is None:
            return None
        e, where, site = vals
        if site is not None:
            inst = _at(inst, site)
    return None


def item_of(model: Model, e: K.Subscript, inst: Instance, where: str, depth: int = 16):
    """(the expression, the instance and the body it is read at) item ``e`` (``t[k]``, k a
    number) of a tuple stands for, or None."""
    if depth <= 0 or len(e.index) != 1 or not isinstance(e.index[0], int):
        return None
    got = _tuple_of(model, e.value, inst, where, depth - 1)
    if got is None or not -len(got[0].items) <= e.index[0] < len(got[0].items):
        return None
    return got[0].items[e.index[0]], got[1], got[2]


def _at(inst: Instance, site: Site) -> Instance:
    """``inst`` moved to ``site``, a node before it on a path the loops of ``site`` all hold:
    the same iterations of those loops (where a name's value is read: its assignment)."""
    return Instance(inst.part, site, inst.label, inst.iters, inst.constraints, inst.fresh,
                    inst.unsure, inst.lanes)


def single_value(model: Model, name: str, inst: Instance, where: str):
    """The one expression ``name`` holds at ``inst``, where it is read ("part" / "prologue") and
    the site of its assignment in the partition (None for the kernel body's), or None. The
    value is to be read at that site, not at the use: a counter incremented in between, a loop
    variable the use's loop shadows, hold other values there.

    In a partition: the last assignment before the use in a block that holds both (the
    deepest such block, the latest there), where no other assignment of the name stands in
    that block between the two (in the statements from it up to the one that holds the use, a
    loop there included, whose later statements reach the use at its next iteration); the
    binding of a partition parameter the body never assigns."""
    if where == "part":
        part = inst.part
        vals = part.assigns.get(name, [])
        binds = dict(part.kp.bindings)
        if name in part.loop_vars:
            return None
        if not vals:
            return (binds[name], "prologue", None) if name in binds else None
        reaching = [(v, st) for v, st in vals if _assigned_before(st, inst.site)]
        if not reaching:
            # a partition parameter, read before the body assigns it at all: its binding
            top = inst.site.path[0][1]
            if name in binds and all(
                    st.path[0][1] > top or (len(st.path) == 1 and st.path[0][1] == top)
                    for _, st in vals):
                return binds[name], "prologue", None
            return None
        value, site = max(reaching, key=lambda vs: (len(vs[1].path), vs[1].path[-1][1]))
        block = site.path[:-1]
        last = inst.site.path[len(block)][1]
        for _, other in vals:
            if other is site or other.path[:len(block)] != block:
                continue
            if len(other.path) == len(block) + 1 and other.path[-1][1] == last:
                continue  # the assignment whose value holds the use: it reads the name first
            if site.path[-1][1] < other.path[len(block)][1] <= last:
                return None  # assigned again in between (or later in a loop around the use)
        return value, "part", site
    vals = model.prologue_assigns.get(name, [])
    # a kernel argument the body binds again holds the argument before that assignment and
    # its value after: no one value (`base = S + 64; S = 0`)
    if len(vals) == 1 and name not in model.params and not any(
            isinstance(s, K.For) and s.var == name for s in K.walk_stmts(model.kern.prologue)):
        return vals[0], "prologue", None
    return None


def _name(model: Model, name: str, inst: Instance, depth: int, where: str):
    if where == "part":
        v = _loop_value(inst, name)
        if v is REBOUND:
            return model.fresh(f"name:{name}", inst)
        if v is not None:
            return v
    got = single_value(model, name, inst, where)
    if got is not None:
        if got[1] == "prologue":
            return _prologue_term(model, got[0], inst, depth - 1)
        return term(model, got[0], _at(inst, got[2]), depth - 1, "part")
    if where == "part":
        v = _induction(model, name, inst, depth)
        if v is not None:
            return v  # an int32 one is wrapped where it is used (race_wraps.operand)
    local = inst.part.assigns if where == "part" else model.prologue_assigns
    if name in model.params and name not in local and \
            (where == "prologue" or name not in dict(inst.part.kp.bindings)):
        return model.sym(f"a:{name}")
    return model.fresh(f"name:{name}", inst)


def _prologue_term(model: Model, e: K.Expr, inst: Instance, depth: int):
    """The term of a kernel-body expression: one value for every partition, so made once and
    shared (its unknowns and their constraints are the kernel's), unless it holds lanes (a
    ``tl.arange`` the body made: each use of it is an axis of its own)."""
    key = (id(e), model.int32)
    if key in model.shared:
        return model.shared[key]
    scratch = Instance(inst.part, Site(()), inst.label, lanes=inst.lanes)
    t = term(model, e, scratch, depth, "prologue")
    if any(const_name(model.z3, v).startswith("lane#") for v in scratch.fresh):
        inst.constraints += scratch.constraints
        inst.fresh += scratch.fresh
        return t
    model.shared[key] = t
    model.facts += scratch.constraints
    return t


def _induction(model: Model, name: str, inst: Instance, depth: int):
    """A counter a loop carries (``row = i`` before the loop, ``row += c`` in its body, ``c`` a
    number): at the use, ``init + c * n`` (``n`` the loop's iteration, plus one past the
    increment); None where ``name`` is no such counter or the use is not in that loop. Where
    ``for`` loops alone stand between the first value and the counter's loop, each directly in
    the one before, and the counter's loop and those inside the outermost of them run a
    constant number of times, ``n`` counts the iterations of the counter's loop over all of
    them (``(n1 * T2 + n2) * T3 + n3``); any other loop or branch between: None. A partition
    parameter the body assigns only in the loop (``y_ptr += 64``) starts from its binding."""
    vals = inst.part.assigns.get(name, [])
    inside = [(v, st) for v, st in vals if len(st.path) > 1 and st.path[-2][0] == "for"]
    binds = dict(inst.part.kp.bindings)
    if len(inside) != 1 or name in inst.part.loop_vars or \
            (len(vals) < 2 and name not in binds):
        return None
    v1, s1 = inside[0]
    before = [(v, st) for v, st in vals if st is not s1]
    if before:
        if any(st.path[:-1] != before[0][1].path[:-1] for _, st in before):
            return None  # the first values in blocks of their own: not one value at the loop
        v0, s0 = max(before, key=lambda vs: vs[1].path[-1][1])  # the last one runs last
    else:  # the binding, before the body's first statement
        v0, s0 = binds[name], Site((("at", -1, 0),))
    if not (isinstance(v1, K.BinOp) and v1.op in ("+", "-") and isinstance(v1.lhs, K.Name)
            and v1.lhs.id == name):
        return None
    step = v1.rhs.value if isinstance(v1.rhs, K.Const) else getattr(v1.rhs, "value", None)
    step = getattr(step, "value", step)
    if isinstance(step, bool) or not isinstance(step, int):
        return None
    step = step if v1.op == "+" else -step
    loop_at = len(s1.path) - 2  # the increment stands directly in a for loop's body
    if loop_at < 0 or s1.path[loop_at][0] != "for":
        return None
    loop_step = s1.path[loop_at]
    use = inst.site.path
    if len(use) <= loop_at + 1 or use[:loop_at + 1] != s1.path[:loop_at + 1]:
        return None  # the use is outside that loop
    loop_site = Site(s1.path[:loop_at] + (("at", loop_step[1], 0),))
    if not _assigned_before(s0, loop_site):
        return None  # the first value is not set before the loop
    between = s1.path[len(s0.path) - 1:loop_at]
    if before and any(isinstance(x, K.Name) and x.id == name for x in K.walk_expr(v0)):
        return None
    n = inst.iters[id(loop_step[2])][0]
    if any(st[0] in ("for", "while") for st in between):
        # loops around the counter's loop: the first value is not set again at their
        # iterations, so the count runs on over them
        if any(st[0] != "for" for st in between):
            return None
        first = len(s0.path) - 1
        count = inst.iters[id(between[0][2])][0]
        for d in range(first + 1, loop_at + 1):
            trips = _trip_count(model, inst, Site(s1.path[:d] + (("at", s1.path[d][1], 0),)),
                                s1.path[d][2])
            if trips is None:
                return None
            count = count * trips + inst.iters[id(s1.path[d][2])][0]
        n = count
    # read where it is assigned
    init = term(model, v0, _at(inst, s0), depth - 1) if before else \
        _prologue_term(model, v0, inst, depth - 1)
    after = use[loop_at + 1][1] > s1.path[loop_at + 1][1]
    return init + step * (n + (1 if after else 0))


def _trip_count(model: Model, inst: Instance, site: Site, loop: K.For) -> Optional[int]:
    """How many times ``loop`` (its statement at ``site``) runs, where its range is numbers."""
    probe = Instance(inst.part, site, "probe", dict(inst.iters), [], [])
    nums = [_number(term(model, x, probe)) for x in (loop.start, loop.stop, loop.step)]
    if None in nums or nums[2] == 0:
        return None
    return len(range(*nums))


def _number(t) -> Optional[int]:
    import z3

    t = z3.simplify(t)
    return t.as_long() if z3.is_int_value(t) else None


def _cast(model: Model, x: K.Expr, a, target: Optional[str], inst: Instance, where: str):
    """The value of ``x`` (term ``a``) converted to the integer type ``target`` (None: a type
    not named here, the value kept): a cast to int32 or a 64-bit type is the value in its
    type (an address adds a uint64 offset modulo 2 ** 64, as a signed one); a cast to fewer
    bits, or to uint32, keeps the value modulo 2 ** bits, in the type's range (int1: whether
    it is nonzero); a cast to a float or to a type not named here (``x.to(y.dtype)``) is an
    unknown (a float rounds, the type may be narrow)."""
    if target not in INTEGER_TYPES:
        return model.fresh("cast", inst)
    if model.int32 and floating(model, x, inst, where):
        # a float truncated toward zero, which the GPU's conversion saturates into the
        # target's range: any value of it (`(v * 2).to(tl.int32)` of v = 2.5 is 5, which the
        # integer term `2 * v` never is)
        v = model.fresh("fcast", inst)
        lo, hi = _TARGET_RANGES.get(target) or NARROW_CASTS[target][:2]
        inst.constraints += [v >= lo, v <= hi]
        return v
    if target in ("int64", "uint64", "int32"):
        a = model.arith.operand(model, x, a, inst, where, cut=target == "int32")
    narrow = NARROW_CASTS.get(target)
    if narrow is None:
        return a
    lo, hi, mod = narrow
    v = model.fresh("narrow", inst)
    inst.constraints += [v >= lo, v <= hi]
    if mod:
        k = model.fresh("wrap", inst)
        inst.constraints.append(v == a - mod * k)
    return v


#: the minimum and maximum ops (the builtins take two values or more)
_MIN_MAX = ("tl.minimum", "tl.maximum", "builtins.min", "builtins.max", "min", "max")


def _grid_value(model: Model, e: K.Op, inst: Instance, depth: int, where: str):
    """``tl.program_id(axis)`` / ``tl.num_programs(axis)``: the symbol of its axis (``pid:1``),
    one for both partitions. The axis is the first argument or ``axis=`` (Triton 3.6 binds both
    alike: `tl.program_id(axis=1)` is the y axis, not axis 0). An axis the kernel is read
    without a number for (a constexpr parameter read for every value, which Triton 3.6 takes
    as 0, 1 or 2) is the symbol of the axis it names: two such calls of different constexprs
    are not one value."""
    z3 = model.z3
    kind = "pid" if e.name == "tl.program_id" else "nprog"
    given = e.args[0] if e.args else e.kw("axis")
    if given is None:
        return model.fresh(kind, inst)  # no axis (Triton refuses the call): any value
    a = term(model, given, inst, depth - 1, where)
    axis = _number(a)
    if axis is not None:
        return model.sym(f"{kind}:{axis}")
    inst.constraints += [a >= 0, a <= 2]
    return z3.If(a == 0, model.sym(f"{kind}:0"),
                 z3.If(a == 1, model.sym(f"{kind}:1"), model.sym(f"{kind}:2")))


def _choice(model: Model, e: K.Op, inst: Instance, depth: int, where: str):
    """``tl.where(c, a, b)`` / ``a if c else b``: each branch in its own type (promoted after,
    as Triton converts it: an int32 branch beside an int64 one has wrapped first), ``a`` where
    the condition holds and ``b`` where it does not, as far as :func:`condition` reads it (a
    condition read in part only says where ``b`` is taken: where it is false)."""
    z3 = model.z3
    a, b = (model.arith.operand(model, x, term(model, x, inst, depth - 1, where), inst, where)
            for x in e.args[1:])
    c = condition(model, e.args[0], inst, where, names=True)
    if c is not None and _read_whole(e.args[0]):
        return z3.If(c, a, b)
    v = model.fresh("choice", inst)
    inst.constraints.append(z3.Or(v == a, v == b))
    if c is not None:
        inst.constraints.append(z3.Implies(z3.Not(c), v == b))
    return v


def _min_max(model: Model, e: K.Op, inst: Instance, depth: int, where: str):
    """``min`` / ``max`` of values (``tl.minimum``, ``tl.maximum``, the builtins of two or
    more, which Triton folds pairwise): the least or greatest where the model's integers
    order them as Triton compares the promoted type (``model.arith.ordered``: a signed
    comparison of int32 values), else one of them."""
    z3 = model.z3
    vals = [model.arith.operand(model, x, term(model, x, inst, depth - 1, where), inst, where)
            for x in e.args]
    exact = model.arith.ordered(model, e.args, inst, where)
    least = e.name in ("tl.minimum", "builtins.min", "min")
    v = vals[0]
    for x in vals[1:]:
        if exact:
            v = z3.If(x < v, x, v) if least else z3.If(x > v, x, v)
        else:
            w = model.fresh("minmax", inst)
            inst.constraints.append(z3.Or(w == v, w == x))
            v = w
    return v


def _binop(model: Model, e: K.BinOp, inst: Instance, depth: int, where: str):
    z3 = model.z3
    a = term(model, e.lhs, inst, depth - 1, where)
    b = term(model, e.rhs, inst, depth - 1, where)
    if e.op in ("+", "-", "*"):
        return model.arith.settle(model, e, a, b, inst, where)
    c = _number(b)
    if e.op in ("<<", ">>") and c is not None and \
            not 0 <= c < model.arith.bits(model, e, inst, where):
        # a shift by the type's width or more (or by a negative number): LLVM's poison, so
        # the GPU's value is any (`t << 40` of an int32 t makes the store's address poison)
        return model.fresh("shift", inst)
    if e.op in ("//", "%", ">>") and c is not None:
        a = model.arith.operand(model, e.lhs, a, inst, where)
        a = model.arith.unsigned(model, e.lhs, a, inst, where)
        if e.op == ">>":
            if not 0 <= c < 64:
                return model.fresh("shift", inst)
            c = 1 << c
        if c == 0:
            return model.fresh("div0", inst)
        n = _number(a)
        if n is not None and n >= 0 and c > 0:
            # numbers both, where floor and truncation agree: the one value (a tile count
            # `tl.cdiv(N, BN)` of a constexpr N read specialised, a divisor of `i // ...`)
            return z3.IntVal(n // c if e.op in ("//", ">>") else n % c)
        # `>>` floors (an arithmetic shift), `//` and `%` truncate (Triton's sdiv / srem): a
        # shift's quotient is its own, never one `//` of the same operands reads (`s >> 1` is
        # -2 at s = -3, `s // 2` is -1: adversarial round 75)
        q, r = _quotient(model, a, z3.IntVal(c), inst,
                         tag="shr" if e.op == ">>" else "quot")
        return q if e.op in ("//", ">>") else r
    if e.op in ("//", "%") and c is None and model.arith.divides(model, e, inst, where):
        # a divisor that is no number (`j // tl.cdiv(N, BN)` of a run-time N): the quotient
        # and remainder of the operands in their type, where the divisor is neither 0 nor -1
        # (a division by 0 is undefined, by -1 may overflow): any value there
        a = model.arith.operand(model, e.lhs, a, inst, where)
        b = model.arith.operand(model, e.rhs, b, inst, where)
        q, r = _quotient(model, a, b, inst, guard=z3.Or(b > 0, b < -1))
        return q if e.op == "//" else r
    if e.op == "<<" and c is not None and 0 <= c < 64:
        return model.arith.settle(model, e, a, b, inst, where)
    if e.op == "&":
        m = c if c is not None else _number(a)
        v = model.fresh("and", inst)
        if m is not None and m >= 0:
            inst.constraints += [v >= 0, v <= m]
        return v
    return model.fresh(f"op{e.op}", inst)


def _quotient(model: Model, a, b, inst: Instance, guard=None, tag: str = "quot"):
    """The quotient and the remainder of ``a`` by ``b`` (terms), as floor division (Python's
    numbers) or truncation (C, Triton's signed integers) computes them: ``a == b q + r`` with
    ``|r| < |b|``, ``r`` zero or of the sign of ``a`` (truncation) or of ``b`` (floor). Where
    ``a >= 0`` and ``b > 0`` both agree and the quotient is the one floor gives, so two
    partitions dividing one value by one divisor get one quotient (a tile's row
    ``j // tl.cdiv(N, BN)`` and column ``j % tl.cdiv(N, BN)`` give ``j`` back). ``guard``:
    where the constraints hold (elsewhere the quotient is any value). ``tag``: the operation
    (a quotient is shared by equal operands of one tag only): "quot" for `//` and `%`, "cdiv",
    and "shr" for a `>>` by a number, ``b`` its power of two, read as floor exactly."""
    z3 = model.z3
    # one quotient for one dividend and divisor (z3's terms are hash-consed: equal terms have
    # one id), as race_wraps._wrapped keeps one wrap: the tile count `tl.cdiv(N, BN)` that
    # two partitions (or a row's and a column's expressions) compute is one value
    key = (a.get_id(), b.get_id(), tag, None if guard is None else guard.get_id())
    memo = model.cache.setdefault("quotients", {})
    hit = memo.get(key)
    if hit is None:
        q = model.fresh(tag, inst)
        inst.fresh.pop()  # (appended below, as for a reuse)
        r = a - b * q
        n = _number(b)
        size = abs(n) if n is not None else z3.Abs(b)
        facts = z3.And(r < size, r > -size,
                       z3.Or(r == 0, z3.And(r > 0, z3.Or(a > 0, b > 0)),
                             z3.And(r < 0, z3.Or(a < 0, b < 0))))
        if tag == "shr":  # a right shift by a positive power of two: floor, exactly
            facts = z3.And(r >= 0, r < size)
        fact = facts if guard is None else z3.Implies(guard, facts)
        hit = memo[key] = (q, r, fact, a, b)  # (the terms held: their ids name no other)
    q, r, fact = hit[:3]
    inst.fresh.append(q)
    inst.constraints.append(fact)
    if guard is not None and not _implied(model, guard, inst):
        # where the divisor may be 0 or -1 (a division by 0 undefined, INT_MIN // -1
        # overflowing), each occurrence's value there is any value of its own, as a `// 0`
        # of a number's is (`div0`): the shared quotient would make `s // d` of two
        # partitions one value at d = 0, and `a - b * q` makes `s % 0` exactly `s`
        # (adversarial round 75)
        q = z3.If(guard, q, model.fresh("divany", inst))
        r = z3.If(guard, r, model.fresh("divany", inst))
    return q, r


#: z3's resource limit for proving a quotient's divisor neither 0 nor -1 (:func:`_implied`)
GUARD_RLIMIT = 200_000


def _implied(model: Model, guard, inst: Instance) -> bool:
    """Whether ``guard`` holds wherever ``inst``'s constraints and the model's facts do (z3
    proves its negation unsatisfiable in :data:`GUARD_RLIMIT`): every query of a term of
    ``inst`` holds those, so a value that differs only where ``guard`` fails never shows."""
    z3 = model.z3
    key = (guard.get_id(), id(inst.constraints), len(inst.constraints), len(model.facts))
    memo = model.cache.setdefault("implied", {})
    if key not in memo:
        solver = z3.Solver()
        solver.add(*inst.constraints, *model.facts, z3.Not(guard))
        budget = getattr(model, "budget", None)
        if budget is not None and budget.left() > 0:
            # the kernel's units (race_solver.Budget): a kernel of many run-time divisors
            # spends them here as in its pairs' queries, and with none left the guard is not
            # proved (each occurrence's value any where it may fail: more runs, never fewer)
            got, _ = budget.check(solver, GUARD_RLIMIT)
        elif budget is not None:
            got = z3.unknown
        else:
            solver.set("rlimit", GUARD_RLIMIT)
            got = solver.check()
        memo[key] = (got == z3.unsat, inst.constraints)
    return memo[key][0]


def _op(model: Model, e: K.Op, inst: Instance, depth: int, where: str):
    z3 = model.z3
    name = e.name
    if name == "tl.arange" and len(e.args) == 2:
        if inst.lanes is not None and id(e) in inst.lanes:
            v = inst.lanes[id(e)]  # the access's one lane of this range (access_mask)
            inst.fresh.append(v)  # (a kernel-body term holding it is not one for all)
            return v
        lo = term(model, e.args[0], inst, depth - 1, where)
        hi = term(model, e.args[1], inst, depth - 1, where)
        v = model.fresh("lane", inst)
        inst.constraints += [v >= lo, v < hi]
        if inst.lanes is not None:
            inst.lanes[id(e)] = v
        return v
    if name in ("tl.program_id", "tl.num_programs"):
        return _grid_value(model, e, inst, depth, where)
    if name == "tl.max_contiguous" and not _Slopes(model, inst.part).proved(e, where):
        # a contiguity the value does not have: the access may be vectorised from another
        # element's address (_Slopes): any address
        return model.fresh("hint", inst)
    if name in SAME_VALUE and e.args:
        return term(model, e.args[0], inst, depth - 1, where)
    if name in CASTS and e.args:
        if pointer_cast(e):
            return model.fresh("cast", inst)  # a pointer cast: offsets in other units
        a = term(model, e.args[0], inst, depth - 1, where)
        return _cast(model, e.args[0], a, cast_target(e), inst, where)
    if name == "tl.full" and (len(e.args) >= 2 or e.kw("value") is not None):
        # the value cast to the fill's type (Triton's make_scalar)
        x = e.args[1] if len(e.args) >= 2 else e.kw("value")
        return _cast(model, x, term(model, x, inst, depth - 1, where), fill_type(e), inst,
                     where)
    if name == "tl.zeros":
        return z3.IntVal(0)
    if name in ("tl.where", "ifexp") and len(e.args) == 3:
        return _choice(model, e, inst, depth, where)
    if name in _MIN_MAX and len(e.args) >= 2:
        return _min_max(model, e, inst, depth, where)
    if name == "tl.cdiv" and len(e.args) == 2:
        a = model.arith.operand(model, e.args[0], term(model, e.args[0], inst, depth - 1, where),
                                inst, where)
        c = _number(term(model, e.args[1], inst, depth - 1, where))
        if c:
            # Triton's (x + (c - 1)) // c, the sum in x's type (it wraps)
            x = e.args[0]
            s = model.arith.in_type(model, x, a + (c - 1), inst, where, plus=c - 1)
            s = model.arith.unsigned(model, x, s, inst, where)
            n = _number(s)
            if n is not None and n >= 0 and c > 0:
                return z3.IntVal(n // c)  # numbers both: the one value
            return _quotient(model, s, z3.IntVal(c), inst, tag="cdiv")[0]
        if c is None:
            # a divisor that is no number (`tl.cdiv(n_tiles - pid, tl.num_programs(0))`), of
            # int32 operands: Triton's (x + (d - 1)) // d, each sum wrapped in int32, the
            # quotient truncated where the divisor is neither 0 nor -1 (a `//` by a term:
            # _binop), so that a tile count of a persistent kernel is 0 where there are no
            # tiles, not any value (adversarial round 76: the loop it bounds holds divisions
            # whose divisor is 0 there, race_divisions.py)
            x, d = e.args
            int32 = getattr(model.arith, "both_int32", None)
            if not model.int32 or (int32 is not None and int32(model, x, d, inst, where)):
                b = model.arith.operand(model, d, term(model, d, inst, depth - 1, where), inst,
                                        where)
                dm1 = model.arith.in_type(model, d, b - 1, inst, where)
                s = model.arith.in_type(model, x, a + dm1, inst, where)
                return _quotient(model, s, b, inst, guard=z3.Or(b > 0, b < -1), tag="cdiv")[0]
    return model.fresh(name.replace(".", "_"), inst)


#: symbols() of recent terms by (context, term id), each with its term (held, so that the id
#: names no other term while it is kept): the race check asks for the same model facts' names
#: at every pair of accesses.
_SYMBOLS: dict[tuple[int, int], tuple[object, frozenset]] = {}
_SYMBOLS_KEPT = 4096


def symbols(t) -> frozenset[str]:
    """The names of the uninterpreted constants in the z3 term ``t``."""
    import z3

    key = (id(t.ctx), t.get_id())
    hit = _SYMBOLS.get(key)
    if hit is not None:
        return hit[1]
    # walked through z3's C API on the term's own nodes (alive while ``t`` is): the Python
    # wrappers of every subterm (children()) cost several times the walk itself
    ctx = t.ctx.ref()
    out, todo, seen = set(), [t.as_ast()], set()
    while todo:
        x = todo.pop()
        i = z3.Z3_get_ast_id(ctx, x)
        if i in seen:
            continue
        seen.add(i)
        kind = z3.Z3_get_ast_kind(ctx, x)
        if kind == z3.Z3_QUANTIFIER_AST:
            todo.append(z3.Z3_get_quantifier_body(ctx, x))
            continue
        if kind != z3.Z3_APP_AST:
            continue  # a number, a bound variable
        app = z3.Z3_to_app(ctx, x)
        n = z3.Z3_get_app_num_args(ctx, app)
        if n == 0:
            decl = z3.Z3_get_app_decl(ctx, app)
            if z3.Z3_get_decl_kind(ctx, decl) == z3.Z3_OP_UNINTERPRETED:
                out.add(z3.Z3_get_symbol_string(ctx, z3.Z3_get_decl_name(ctx, decl)))
            continue
        todo += [z3.Z3_get_app_arg(ctx, app, k) for k in range(n)]
    if len(_SYMBOLS) >= _SYMBOLS_KEPT or (_SYMBOLS and next(iter(_SYMBOLS))[0] != key[0]):
        # (a check's terms are of a z3 context of its own, race_solver.InContext: those of an
        # earlier context are not asked for again, and held they would keep it alive)
        _SYMBOLS.clear()
    found = frozenset(out)
    _SYMBOLS[key] = (t, found)
    return found
