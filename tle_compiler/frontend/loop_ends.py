"""Whether a ``while`` loop surely ends: the counter rule (docs/language.md, "while loops").

A `while` holds no pipe event, so the verifier never runs it; its verdict says every partition
(and the kernel body) runs to its end, which holds only if every `while` ends. A loop whose body
assigns nothing its condition reads never ends once the condition holds (check `endless-loop`,
walk_loops.py Walker.refuse_endless). A body that assigns what the condition reads need not end
either (`c = c + 0`, `i += 2` against `i != N`, `i -= 1` against `i < N`, `i = i * 2` from 0), so
a loop whose condition may hold is accepted only where it has a *counter* (adversarial round 27,
tests/test_adversarial_verdicts_27.py):

* the condition is one comparison ``k OP E`` (or ``E OP k``), ``OP`` one of ``<``, ``<=``,
  ``>``, ``>=``, of a name ``k`` the body assigns and an expression ``E`` that reads no name the
  body assigns (a param, a value fixed before the loop, memory nothing writes: a load of memory
  another partition writes is frontend/memory_waits.py's `memory-wait`);
* the body assigns ``k`` once, as a statement of its own (under no `if` or loop of the body),
  and binds it as no `for` loop's variable (Triton leaves that a poison value after its loop:
  adversarial round 48):
  ``k += c``, ``k -= c``, ``k = k + c``, ``k = k - c`` or ``k = c + k``, ``c`` a nonzero integer
  constant that moves ``k`` toward ending the comparison (up for ``<`` / ``<=``, down for ``>`` /
  ``>=``);
* the step never wraps past the bound in i32: a step of 1 (-1) against ``<`` (``>``), where
  ``k + c`` stays at most ``E``; another step or a non-strict comparison against a bound known
  when the kernel is read where ``E + c`` stays in i32, or against a bound affine in params
  whose domains (``tle.assume``) keep ``E + c`` in i32 for every value (a bound of a constexpr
  the reading leaves unbound stops the reading, constexpr-operand, so that the kernel is read
  again with the value it compiles with, where the bound is a number); never against a bound
  read from memory, or one affine in params of an open domain, which may be 2^31 - 1 (`k <= n;
  k += 1` then wraps k to -2^31 and never ends; `k < n; k += 2` neither). (Before adversarial
  round 28 a bound affine in params was left to the verdict's i32 caveat, which checks the
  Program's loops, bounds and indices only: `while i <= N + 0: i += 1` in a partition whose
  events N does not decide was "verified for its single instance" and hangs at N = 2^31 - 1.)
* ``k`` is no float (`x = x - 1.0` stops changing at 2^24) nor an 8- or 16-bit integer, and ``E``
  no float (an i32 `k` compared with `1e10` wraps before it gets there) nor a 64-bit integer
  unless ``k`` is one, where the frontend knows the types;
* where ``k`` or ``E`` is a uint32 or uint64 (a tile, cast or typed load of that type, or a
  kernel-body value of it: KernelCtx.unsigned_params), Triton compares them unsigned, and the
  counter wraps at 0 and 2^bits - 1: `k >= 0; k -= 1` never ends (`icmp uge k, 0` always
  holds), nor `k <= -1; k += 1` (the -1 is 2^32 - 1 there). There a step of 1 against ``<``
  (-1 against ``>``) still ends (the counter's bits step by one modulo 2^bits and meet the
  bound); any other only against a bound known when the kernel is read, read modulo 2^bits,
  whose last value stays in [0, 2^bits) (adversarial round 47).

Then ``k`` moves by ``c`` at every iteration and reaches the bound: the loop ends. A kernel-body
`while` walked iteration by iteration to its end (PrologueWalker.unroll) needs no counter.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..ir import kernel as K
from ..ir.expr import Affine
from ..ir.i32 import I32_MAX, I32_MIN
from ..ir.loop_counter import innermost_next_counter
from ..ir.promotion import computation_type
from .load_signs import first_untyped
from .load_types import INTEGERS, first_float_read, own_typed
from .load_types import NARROW as NARROW_RANGES
from .params import is_placeholder
from .values import I64, Aff, KernelArg, Sym

#: a comparison with the counter on its right, read with the counter on its left
FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}
NARROW = ("int8", "int16", "uint8", "uint16")
WIDE = ("int64", "uint64")
UNSIGNED = ("uint32", "uint64")


def _step(s: K.Stmt, k: str, walker) -> Optional[int]:
    """The constant ``c`` of ``k = k + c`` (``k - c``, ``c + k``, and ``+=`` / ``-=``, which
    the builder writes so) assigned by ``s``, else None."""
    if not (isinstance(s, K.Assign) and s.target == k and isinstance(s.value, K.BinOp)
            and s.value.op in ("+", "-")):
        return None
    v = s.value
    if isinstance(v.lhs, K.Name) and v.lhs.id == k:
        c = _int(v.rhs, walker)
        return None if c is None else c if v.op == "+" else -c
    if v.op == "+" and isinstance(v.rhs, K.Name) and v.rhs.id == k:
        return _int(v.lhs, walker)
    return None


def _int(e: K.Expr, walker) -> Optional[int]:
    """An integer constant written as such (a literal, a module constant, a negated one)."""
    if isinstance(e, K.UnaryOp) and e.op == "-":
        v = _int(e.operand, walker)
        return None if v is None else -v
    if isinstance(e, (K.Const, K.Global)):
        v = e.value
        return v if isinstance(v, int) and not isinstance(v, bool) else None
    return None


def _wide(walker, e: K.Expr, dtype: Optional[str]) -> bool:
    """Whether the GPU computes ``e`` in 64 bits, where the frontend knows it: a 64-bit element
    type, or a value that went through ``.to(tl.int64)`` (its ``wide`` mark)."""
    if dtype in WIDE:
        return True
    v = walker.eval_quiet(e)
    return I64 in getattr(v, "wide", ())


def _resolved(cond: K.Expr, body: tuple, names: set, depth: int = 0) -> K.Expr:
    """``cond`` with each name the statements that compute it assign replaced by the value they
    give it: the builder runs a condition's own statements (an inlined helper's locals, `while
    above(p, k):`) before the loop and again at the end of its body, so the condition tested is
    ``above``'s comparison of the body's last values. A name is replaced where the body assigns
    it once, as a statement of its own, from a value that does not read it, and nothing the value
    reads is assigned after it."""
    if depth > 16:
        return cond
    stores = [st for st in K.walk_stmts(body) if isinstance(st, K.Assign)]
    position = {id(st): i for i, st in enumerate(body)}

    def value_of(name: str) -> Optional[K.Expr]:
        mine = [st for st in stores if st.target == name]
        if len(mine) != 1 or id(mine[0]) not in position:
            return None
        at = position[id(mine[0])]
        read = {x.id for x in K.walk_expr(mine[0].value) if isinstance(x, K.Name)}
        later = {st.target for st in body[at + 1:] if isinstance(st, K.Assign)}
        if name in read or read & later \
                or any(not isinstance(st, K.Assign) for st in body[at + 1:]):
            return None  # (a counter `k = k + 1` is kept: it is what the condition tests)
        return mine[0].value

    if isinstance(cond, K.Name) and cond.id in names:
        v = value_of(cond.id)
        return cond if v is None else _resolved(v, body, names, depth + 1)
    if isinstance(cond, K.Compare):
        return K.Compare(cond.op, _resolved(cond.lhs, body, names, depth + 1),
                         _resolved(cond.rhs, body, names, depth + 1), cond.loc)
    return cond


def _unsigned_compare(walker, k: K.Expr, bound: K.Expr, kd: Optional[str],
                      ed: Optional[str]) -> Optional[str]:
    """The unsigned type ("uint32" / "uint64") Triton compares ``k`` and ``bound`` in, where the
    frontend knows one of them is unsigned (a uint32 / uint64 tile, cast or typed load: ``kd`` /
    ``ed``, their :meth:`tile_dtype`), else None. Triton promotes an integer pair of one width
    and either sign to the unsigned type, and a Python number to the tensor's type, so the
    comparison is unsigned (``arith.cmpi uge``) unless the other side is a wider signed type."""
    types = [walker.scalar_int_type(x) for x in (k, bound)]
    t = computation_type(*types) if None not in types else None
    if t in UNSIGNED:
        return t
    if t is not None:
        return None  # (a uint32 beside an int64: compared signed, in 64 bits)
    for d in (kd, ed):
        if d in UNSIGNED:
            return d
    # a kernel-body value of an unsigned type is a param (values.Sym, or an affine value of its
    # placeholder in a partition), which keeps no type: the kernel body noted it
    for x in (k, bound):
        for name in (n.id for n in K.walk_expr(x) if isinstance(n, K.Name)):
            v = walker.env.get(name)
            phs = [v.param] if isinstance(v, Sym) else \
                v.expr.variables if isinstance(v, Aff) else ()
            for ph in phs:
                t = walker.k.unsigned_params.get(ph)
                if t is not None:
                    return t
    return None


def _last_value(e: int, c: int, op: str, up: bool) -> int:
    """The farthest value a counter stepping by ``c`` toward the bound ``e`` reaches when ``k op
    e`` first fails: one step past the bound (``<=`` / ``>=``) or past the value before it
    (``<`` / ``>``). The loop ends only if that value is in the counter's range."""
    return e + c if op in ("<=", ">=") else e - (1 if up else -1) + c


def _affine(v):
    """``v`` as an :class:`Aff` where it is a kernel argument or a symbolic param (its param)."""
    return Aff(Affine.of(v.param)) if isinstance(v, (KernelArg, Sym)) else v


def _interval(walker, v) -> Optional[tuple[Optional[int], Optional[int]]]:
    """The range of the integer ``v`` affine in params (an :class:`Aff`, a kernel argument) over
    the params' domains as stated so far (``tle.assume``; None: open on that side), or None when
    ``v`` is no such value (a tl.static_range or loop variable in it, a value read from memory).
    """
    v = _affine(v)
    if not isinstance(v, Aff):
        return None
    lo: Optional[int] = v.expr.const
    hi: Optional[int] = v.expr.const
    for var, coef in v.expr.terms:
        if not is_placeholder(var):
            return None
        a, b = walker.k.params.domain(var)
        if coef < 0:
            a, b = (None if b is None else -b), (None if a is None else -a)
            coef = -coef
        lo = None if lo is None or a is None else lo + coef * a
        hi = None if hi is None or b is None else hi + coef * b
    return lo, hi


def why_not_ending(walker, s: K.While) -> Optional[str]:
    """None when the counter rule shows that ``s`` ends; else why it may not (a phrase that
    follows "it may never end: "). ``walker``'s environment is the one before the loop."""
    names = {st.target for st in K.walk_stmts(s.body) if isinstance(st, K.Assign)} | {
        st.var for st in K.walk_stmts(s.body) if isinstance(st, K.For)}
    cond = _resolved(s.cond, s.body, names)
    shape = ("its condition is no comparison `k < E` (`<=`, `>`, `>=`) of a counter `k` the body "
             "steps by a constant and a bound `E` the body does not change")
    if not isinstance(cond, K.Compare) or cond.op not in FLIPPED:
        return shape
    k, op, bound = None, cond.op, None
    for lhs, rhs, o in ((cond.lhs, cond.rhs, cond.op), (cond.rhs, cond.lhs, FLIPPED[cond.op])):
        if isinstance(lhs, K.Name) and lhs.id in names and not any(
                isinstance(x, K.Name) and x.id in names for x in K.walk_expr(rhs)):
            k, op, bound = lhs.id, o, rhs
            break
    if k is None:
        return shape
    py = walker.k.names.py(k)
    rebound = next((st for st in K.walk_stmts(s.body) if isinstance(st, K.For) and st.var == k),
                   None)
    if rebound is not None:
        # Triton leaves a `for` loop's variable undefined after the loop (`ub.poison`): the
        # condition then tests a poison value (Python's would be the loop's last value)
        return (f"the body rebinds `{py}` as the variable of the `for` loop at line "
                f"{rebound.loc.line}, which Triton leaves undefined after that loop (a poison "
                f"value), so the condition tests no counter")
    stores = [st for st in K.walk_stmts(s.body) if isinstance(st, K.Assign) and st.target == k]
    steps = [_step(st, k, walker) for st in stores]
    if len(stores) != 1 or not any(st is stores[0] for st in s.body) \
            or steps[0] in (None, 0):
        return (f"the body does not step `{py}` by a nonzero integer constant once per iteration "
                f"(`{py} += 1` as a statement of its own, under no `if` or loop)")
    c = steps[0]
    up = op in ("<", "<=")
    if (c > 0) != up:
        return (f"the body steps `{py}` by {c}, away from ending `{walker.src(cond)}`")
    kt = walker.operand_type(K.Name(k))
    kd = walker.tile_dtype(K.Name(k))
    if kt == "float" or kd in NARROW:
        return (f"`{py}` is {'a float' if kt == 'float' else 'an ' + kd}, whose steps stop "
                f"changing it or wrap before it reaches the bound")
    et, ed = walker.operand_type(bound), walker.tile_dtype(bound)
    if et == "float" or isinstance(bound, K.Const) and isinstance(bound.value, float):
        return (f"the bound `{walker.src(bound)}` is a float, which an integer counter may never "
                f"reach")
    e = walker.literal_int(bound)
    e = None if isinstance(e, bool) else e
    if _wide(walker, bound, ed) and not _wide(walker, K.Name(k), kd) \
            or e is not None and not I32_MIN <= e <= I32_MAX:
        return (f"the bound `{walker.src(bound)}` is (or may be) a 64-bit integer, beyond what "
                f"the counter "
                f"`{py}` reaches before it wraps")
    unsigned = _unsigned_compare(walker, K.Name(k), bound, kd, ed)
    # (compared unsigned too, a step of 1 against `<` (-1 against `>`) ends: the counter's bits
    # step by one modulo 2^bits, so a strict bound is met before they wrap, as `k < 0` / `k >
    # 2^bits - 1` never holds)
    unit = abs(c) == 1 and op in ("<", ">")
    if unsigned is not None:
        why = None if unit else _unsigned_reason(walker, bound, e, c, op, up, unsigned)
        if why is not None:
            return f"`{py}` is {why}"
    elif not unit:
        signed = _signed_reason(walker, s, py, bound, e, c, op, up)
        if signed is not None:
            return signed
    # ends as the verifier reads its values; a counter or bound loaded through a pointer of no
    # known element type may be of another type, where it may not
    return _untyped_types(walker, py, k, bound, e, c, op, up, unit, unsigned is not None)


def _untyped_types(walker, py: str, k: str, bound: K.Expr, e: Optional[int], c: int, op: str,
                   up: bool, unit: bool, unsigned: bool) -> Optional["TypedOnly"]:
    """Where the counter ``k`` or the bound of a `while` loop that ends as the verifier reads it
    is loaded through a pointer of no known element type (frontend/load_signs.py), the element
    types of that pointer under which it still ends, with why it may not under the others
    (frontend/load_types.py): a :class:`TypedOnly`; None where no such load is read.

    * uint32 / uint64: compared unsigned (round 48, :func:`_unsigned_reason`), unless a side is
      a known 64-bit integer (a 32-bit value beside it is compared signed, in 64 bits);
    * an 8- or 16-bit integer: a counter loaded so steps in that type (`k += 1` of an int8 is an
      int8 sum) and ends only against a bound known when the kernel is read whose last value
      stays in the type (a bound outside it that the condition never holds against ends it at
      once), or against a bound of the same load's type with a step of 1 (-1); a counter of
      another type meets any such bound;
    * a float: never (a float counter's steps stop changing it past 2^24 in fp32, an integer
      counter never reaches an infinite bound), unless the load is read through a loop variable
      only (`while k < j` of `for j in range(n)`: Triton refuses a float loop bound);
    * int32 (the verifier's reading) and int64 (the i32 caveat's) keep the verdict."""
    sides = (K.Name(k), bound)
    pointer = first_untyped(walker, sides)
    if pointer is None:
        return None
    holds = set(INTEGERS)
    whys = []
    if not unsigned and not unit and \
            not any(_wide(walker, x, walker.tile_dtype(x)) for x in sides):
        for t in ("uint32", "uint64"):
            why = _unsigned_reason(walker, bound, e, c, op, up, t)
            if why is not None:
                holds.discard(t)
                if t == "uint32":
                    whys.append(f"through a *u32 {pointer} `{py}` is {why}")
    counter = own_typed(walker, K.Name(k))
    if counter is not None:
        same = own_typed(walker, bound) == counter
        wraps = []
        for t, (lo, hi) in NARROW_RANGES.items():
            if abs(c) > hi:
                ends = False  # (Triton widens the counter: a loop-carried type it refuses)
            elif e is not None and lo <= e <= hi:
                ends = lo <= _last_value(e, c, op, up) <= hi
            elif e is not None:
                ends = (e > hi) != up  # (never holds for any value of the type: ends at once)
            else:
                ends = same and unit
            if not ends:
                holds.discard(t)
                wraps.append(t)
        if wraps:
            whys.append(f"through a *{' or *'.join(_short(t) for t in wraps)} {counter} `{py}` "
                        f"steps in that type and may wrap (at its ends) before `{op} "
                        f"{walker.src(bound)}` fails")
    if first_float_read(walker, sides) is not None:
        whys.append(f"through a float {pointer} the value may be no integer: a float counter's "
                    f"steps stop changing it (past 2^24 in fp32), and an integer counter never "
                    f"reaches an infinite bound")
    else:
        holds.add("float")  # (read through a loop variable only: Triton refuses a float bound)
    if not whys:
        return None
    return TypedOnly(pointer, "; ".join(whys), frozenset(holds))


def _short(t: str) -> str:
    """Triton's signature name of the integer type ``t`` (``int8``: ``i8``)."""
    return t.replace("uint", "u").replace("int", "i")


@dataclass(frozen=True)
class TypedOnly:
    """A `while` loop that ends as the verifier reads the value its counter or bound loads
    through ``pointer`` (whose element type is not known: an int32), and may not where that
    pointer's element type is not one of ``holds`` (frontend/load_types.py's names; ``why``:
    how it may not): neither refused nor proved (the verdict is qualified to ``holds``, its
    reason naming ``pointer``)."""

    pointer: str
    why: str
    holds: frozenset


def _unsigned_reason(walker, bound: K.Expr, e: Optional[int], c: int, op: str, up: bool,
                     unsigned: str) -> Optional[str]:
    """Why a counter compared with ``bound`` (``e``: its value where known) as an ``unsigned``
    type may never end (a phrase that follows the counter's name), or None where it ends: the
    counter wraps at 0 and 2^bits - 1, not at the ends of i32, so `k >= 0; k -= 1` of a uint32
    `k` never ends (`icmp uge k, 0` always holds), nor `k <= -1; k += 1` (the -1 is 2^32 - 1
    there): only a bound known when the kernel is read whose last value stays inside the
    unsigned range shows an end (a step of 1 against `<`, -1 against `>`, ends before)."""
    bits = 64 if unsigned == "uint64" else 32
    if e is not None and 0 <= _last_value(e % (1 << bits), c, op, up) < (1 << bits):
        return None
    edge = f"2^{bits} - 1" if up else "0"
    return (f"compared with `{walker.src(bound)}` unsigned (as a {unsigned}, as Triton promotes "
            f"them), so its step {c} against `{op}` may carry it past {edge}, where it wraps and "
            f"the condition holds again (a step of 1 against `<`, of -1 against `>`, never "
            f"wraps)")


def _signed_reason(walker, s: K.While, py: str, bound: K.Expr, e: Optional[int], c: int,
                   op: str, up: bool) -> Optional[str]:
    """Why the counter ``py`` stepping by ``c`` against ``op`` ``bound`` (``e``: its value where
    known) may never end when compared signed in i32 (a phrase), or None where it ends: its
    last value stays inside i32 for a bound known when the kernel is read, or for every value
    of a bound affine in params over their domains."""
    if e is not None:
        if I32_MIN <= _last_value(e, c, op, up) <= I32_MAX:
            return None
    else:
        value = _affine(walker.eval_quiet(bound))
        span = _interval(walker, value)
        if span is not None:
            edge = span[1] if up else span[0]
            last = None if edge is None else \
                edge + c if op in ("<=", ">=") else edge - (1 if up else -1) + c
            if last is not None and I32_MIN <= last <= I32_MAX:
                return None
            free = sorted(walker.k.params.slot(v).arg for v in value.expr.variables
                          if walker.k.params.slot(v).arg in walker.k.free_constexprs) \
                if isinstance(value, Aff) else []
            if free:
                # a constexpr the reading leaves unbound: the bound is a number when the kernel
                # compiles, so the reading stops (a check of SPECIALIZABLE) and tle-dump reads
                # it again with the values it is compiled with, where the bound is known
                raise walker.err(f"the `while` loop's bound `{walker.src(bound)}` is computed "
                                 f"from the constexpr {', '.join(free)}, which the kernel is read "
                                 f"without a value for; whether its counter's step of {c} stays "
                                 f"inside i32 is checked at the value the kernel is compiled with",
                                 s, check="constexpr-operand")
    where = (f"the bound {e} is that close to the end of i32" if e is not None else
             f"the bound `{walker.src(bound)}` may be 2^31 - 1 (bound its params with "
             f"tle.assume to keep it from the end of i32)" if span is not None else
             "a bound read from memory may be 2^31 - 1")
    return (f"its step {c} against `{op}` may carry `{py}` past the end of i32, where it wraps "
            f"and the condition holds again ({where}; a step of 1 against `<`, of -1 against "
            f"`>`, never wraps)")


# -- run-time `for` loops without events (Program.data_loops) -------------------------------------


def counter_wraps(nest, env) -> Optional[int]:
    """Where the innermost loop of ``nest`` (a ``For`` nested in copies of the loops around it,
    Program.data_loops) may never end: the greatest next value of the counter Triton's scf.for
    steps (the variable, or for a negative step the counter from the stop up to the start by
    its size) past 2^31 - 1, where it wraps below the bound, with every variable over its
    interval in ``env`` (params: their domains in i32) and the loops around it over their
    values; None where it stays inside i32 (a step of size 1 always does) or the loop never
    runs. The walk is the i32 check's (ir/loop_counter.py), so that a loop the check of
    checked values finds ending is found ending here too."""
    top = innermost_next_counter(nest, env)
    return top[1] if top is not None and top[1] > I32_MAX else None
