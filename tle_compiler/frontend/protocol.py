"""The protocol view of the kernel IR: a :class:`~tle_compiler.ir.kernel.Kernel` → its Pipe IR
:class:`~tle_compiler.ir.nodes.Program`, by abstract interpretation (:func:`analyse`).

The builder (build.py) has resolved everything Python: names, module constants, helpers (inlined,
their locals renamed), imports, pipe handles (every verb is a KIR ``Event`` naming its pipe, reader
and view), and the declarations (pipes, buffers, partitions). What is left is the protocol: which
events each partition performs, under which loops and conditions, at which indices; which slot
fields it touches where; and the kernel's params with their domains. The kernel body before
``warp_specialize`` is walked by prologue_walker.py, each partition by walker.py's
:class:`~.walker.Walker`; this module holds what one kernel's analysis shares (:class:`Ctx`), the
kernel's DEFAULT_CONFIG read as data, and the checks made once every partition is walked.

Error messages name expressions as :func:`~.protocol_terms.src` prints them (Python's spelling,
with inlined helpers' locals under their own names).
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import dataclass, replace
from typing import Iterable, Optional

from ..diagnostics import TleError
from ..ir import kernel as K
from ..ir.expr import Affine
from ..ir.nodes import For, Loc, Partition, Pipe, Program
from ..language.gpu import SharedBuffer
from ..language.pipe import PipeDecl
from .context import Assumption, FieldSpec, KernelCtx, PipeInfo
from .load_types import BOUNDS, narrow_arithmetic
from .loop_ends import I32_MAX, I32_MIN, counter_wraps
from .params import (assumed_interval, derivations, finalize, is_placeholder, reached, subst_body, subst_cond,
                     used_placeholders)
from .protocol_terms import Names, Source, generated, source_text
from .shared_memory import check_bound_shapes
from .values import Aff, Data, KernelArg, Sym, TupleV, Value
from .walker import Walker
from .prologue_walker import PrologueWalker


# ----------------------------------------------------------------------------------------------
# the kernel


class Ctx(KernelCtx):
    """What one kernel's analysis shares: params, pipes, mma uses, buffer uses, names."""

    def __init__(self, kernel: K.Kernel, names: Names, sources: Optional[dict[str, str]] = None,
                 trees: Optional[dict[str, ast.Module]] = None, read_files: bool = True):
        super().__init__(kernel.name, path=kernel.loc.file)
        self.names = names
        self.temps: dict[str, K.Expr] = {}  # the builder's temporaries → their values
        self.kir_buffers = {b.name: b for b in kernel.buffers}
        self.kernel_buffers = set(self.kir_buffers)
        self.source = Source(sources, trees, read_files)
        # and / or / not of an operand that is an integer if these kernel arguments are
        # (Walker.triton_truth): (the error, their placeholders)
        self.truths: list[tuple[TleError, frozenset]] = []
        # placeholders of the kernel arguments a load, store or atomic takes its pointer from
        self.pointers: set[str] = set()
        # the DEFAULT_CONFIG signature's argument types (the dtype a global load gives)
        self.config_signature: dict[str, str] = {}
        # those that are the only kernel argument of a pointer expression: surely pointers
        self.sure_pointers: set[str] = set()
        # the kernel arguments tle.gpu.tma_load copies read as tensor descriptors: argument ->
        # the (pipe, field, element type, slot shape, location) of each copy
        self.tma_descriptors: dict[str, list[tuple[str, str, str, tuple, Loc]]] = {}
        self.tma_descriptor_locs: dict[str, Loc] = {}  # argument -> its first copy
        # loops whose run-time step may be 0: (location, message) (Walker.note_runtime_step)
        self.zero_steps: list[tuple[Loc, str]] = []
        # run-time `//` / `%` whose divisor may be 0 (or -1 beside a dividend that may be
        # -2^31): key -> (location, message, (dividend, divisor, least)), an obligation where
        # the key is a param of the Program (Walker.runtime_division)
        self.runtime_divisions: dict[str, tuple] = {}
        # run-time loops without events or accesses, for the i32 check (Walker.note_data_loop)
        self.data_loops: list[For] = []

    def refuse_truths(self) -> None:
        """Raise the first error of :attr:`truths` whose kernel arguments the kernel never
        uses as pointers: integers, on which Triton's bitcast to i1 fails (it casts a pointer
        to i1 without complaint)."""
        for err, needs in self.truths:
            if not needs & self.pointers:
                raise err

    def source_text(self, loc: Loc) -> Optional[str]:
        """The source of the outermost call at ``loc`` (None when there is none to read)."""
        call = self.source.call(loc)
        return ast.unparse(call) if call is not None else None


@dataclass
class Analysis:
    """What :func:`analyse` learns about a kernel: its Program and what the KernelInfo carries."""

    program: Program
    bindings: dict[str, dict[str, Value]]  # partition → parameter → kernel-level value
    values: dict[str, Value]  # kernel-level names (KIR names) at warp_specialize
    param_args: dict[str, str]
    assumptions: tuple[Assumption, ...]
    pipes: dict[str, PipeInfo]


def pipe_info(decl: K.PipeDecl) -> PipeInfo:
    fields = tuple((b.name, SharedBuffer(tuple(b.shape), b.dtype)) for b in decl.fields)
    d = PipeDecl(decl.name, decl.capacity, "cta", decl.readers, decl.one_shot, fields, decl.loc,
                 decl.named)
    specs = tuple(FieldSpec(b.name, list(b.shape), b.dtype, "smem", b.loc) for b in decl.fields)
    return PipeInfo(d, specs, None, None)  # type: ignore[arg-type]


def kernel_functions(kernel: K.Kernel, sources: Optional[dict[str, str]] = None,
                     read_files: bool = True) -> set[str]:
    """The names of the functions defined in the files the kernel's statements come from (the
    helpers it inlined), so their renamed locals can be spelled as in Python."""
    files = {kernel.loc.file}
    for p in kernel.partitions:
        files.add(p.loc.file)
        for s in K.walk_stmts(p.body):
            files.add(s.loc.file)
    for s in K.walk_stmts(kernel.prologue):
        files.add(s.loc.file)
    out = {p.name for p in kernel.partitions}
    # the helpers the builder inlined (a kernel IR read on its own has no files to read them
    # from: without them its params were named `split_range1_NK` where the .py read says `NK`)
    out.update(h for h in K.get_attr(kernel, "helpers", ()) or () if isinstance(h, str))
    for f in files:
        text = source_text(f, sources, read_files)
        if text:
            out.update(re.findall(r"^\s*def\s+([A-Za-z_]\w*)", text, flags=re.M))
    return out


def config_section(kernel: K.Kernel, section: str) -> dict[str, object]:
    """The dict ``section`` ("constexprs", "signature") of the DEFAULT_CONFIG the builder
    recorded on ``kernel`` (its entry for the kernel in a config keyed by kernel name), its
    string keys only; {} without one."""
    from .config_literal import entry_section

    return entry_section(K.get_attr(kernel, "default_config"), kernel.name, section)


def _enclosing_ifs(body: tuple, target: K.Stmt) -> Optional[list]:
    """The ``if`` statements of ``body`` that ``target`` stands in, outermost first; None when
    ``target`` is not in ``body``."""
    for st in body:
        if st is target:
            return []
        if isinstance(st, K.If):
            branches = (st.then, st.orelse)
        elif isinstance(st, (K.For, K.While)):
            branches = (st.body,)
        else:
            continue
        for branch in branches:
            inner = _enclosing_ifs(branch, target)
            if inner is not None:
                return [st, *inner] if isinstance(st, K.If) else inner
    return None


def config_values(kernel: K.Kernel) -> dict[str, object]:
    """The constexprs the DEFAULT_CONFIG the builder recorded on ``kernel`` gives, as it writes
    them; {} without one."""
    return config_section(kernel, "constexprs")


def config_signature(kernel: K.Kernel) -> dict[str, str]:
    """The argument types the DEFAULT_CONFIG the builder recorded on ``kernel`` gives
    (``{"x_ptr": "*fp32", ...}``); {} without one."""
    return {n: t for n, t in config_section(kernel, "signature").items() if isinstance(t, str)}


def config_constexprs(kernel: K.Kernel) -> dict[str, int]:
    """The integer (and bool) constexprs the DEFAULT_CONFIG the builder recorded on ``kernel``
    gives (its entry for the kernel in a config keyed by kernel name); {} without one."""
    return {n: int(v) for n, v in config_values(kernel).items() if isinstance(v, int)}


def analyse(kernel: K.Kernel, sources: Optional[dict[str, str]] = None,
            bind: Optional[dict] = None, trees: Optional[dict[str, ast.Module]] = None,
            read_files: bool = True) -> Analysis:
    """The Pipe IR of a kernel and the values the KernelInfo records. ``bind``: the constexpr
    values the kernel was built specialised to (they are constants, not params). ``sources`` and
    ``trees``: the text and the parsed form of the files the kernel was built from (by their
    location names), which messages quote; a file not given is read from disk unless
    ``read_files`` is False (a kernel IR on its own: messages print its expressions)."""
    if bind:
        # slot shapes and the shared-memory budget with the bound constexprs' values
        check_bound_shapes(kernel, bind)
    names = Names(kernel_functions(kernel, sources, read_files))
    k = Ctx(kernel, names, sources, trees, read_files)
    for d in kernel.pipes:
        k.pipes[d.name] = pipe_info(d)
    bind = bind or {}
    k.bind = {n: v for n, v in bind.items() if isinstance(v, int) and not isinstance(v, bool)}
    k.config_constexprs = config_constexprs(kernel)
    k.config_values = config_values(kernel)
    k.config_signature = config_signature(kernel)

    env: dict[str, Value] = {}
    k.free_constexprs = frozenset(p.name for p in kernel.params if p.constexpr and not (
        isinstance(bind.get(p.name), int) and not isinstance(bind.get(p.name), bool)))
    for p in kernel.params:
        value = bind.get(p.name) if p.constexpr else None
        if isinstance(value, int) and not isinstance(value, bool):
            env[p.name] = Aff(Affine.of(value))
            continue
        if p.floating:
            # a float argument is compared and computed with as a float: no integer param models it
            env[p.name] = Data(node=K.Name(p.name, p.loc), runtime=True, floating=True, why=(
                f"`{p.name}` is a float kernel argument (the source declares it one): the "
                f"verifier models integers only, so which events run must not depend on it"))
            continue
        ph = k.params.reserve(("arg", p.name), p.name, p.loc, arg=p.name)
        env[p.name] = KernelArg(p.name, ph, p.constexpr)
    body = PrologueWalker(k, "kernel", env)
    body.number_names = {p.name for p in kernel.params if p.constexpr and p.name in k.bind}
    for s in kernel.prologue:
        body.exec_stmt(s)

    partitions: list[Partition] = []
    bindings: dict[str, dict[str, Value]] = {}
    for part in kernel.partitions:
        argv = {name: body.eval(e) for name, e in part.bindings}
        for name, e in part.bindings:
            body.refuse_c_division(e, argv[name], passed=True)
            # an argument computed in a narrow load's own type, as an assignment may be
            # (`n + 1` passed to the partition): what reads the parameter reads the wrap
            narrow = narrow_arithmetic(body, e) if isinstance(argv[name], Aff) else None
            if narrow is not None:
                k.narrow_values.setdefault(argv[name].expr, narrow)
            # a comparison computed there (`n >= 2` passed as a flag) is noted as a kernel-body
            # value's is, on the param a partition makes of it
            key = argv[name].key if isinstance(argv[name], Data) else None
            if key is not None and not isinstance(e, K.Name):
                marker = f"argument {part.name}.{name}"
                body.signed_conditions(e, e.loc, ", which pipe events depend on, holds", marker)
                note = k.signed_params.pop(marker, None)
                if note is not None:
                    k.key_notes.setdefault(key, note)
        pw = Walker(k, "partition", dict(argv))
        pw.partition = part.name
        # a partition parameter bound to a bool of the kernel body (`B = N > 5`, passed as B) is
        # an i1 tensor there as in the kernel body: `-B` and `B + B` compute in i1
        pw.bool_names |= {name for name, e in part.bindings if body.i1_like(e)}
        pw.number_names = {name for name, e in part.bindings if body.python_number(e)}
        pw.last_top = part.body[-1] if part.body else None
        stores = [st.target for st in K.walk_stmts(part.body)
                  if isinstance(st, K.Assign) and not generated(st)]
        pw.multi_assigned = frozenset(n for n, c in Counter(stores).items() if c > 1)
        for s in part.body:
            pw.exec_stmt(s)
        # An early return (the builder allows one only outside loops) is refused when a pipe
        # event is read after it in program order: whether that event runs would depend on the
        # path taken. One after all of the partition's events (`if N > 0: return` at its end)
        # changes no event, so it is kept, as Triton compiles it.
        if pw.early_return is not None and k.events != pw.events_at_return:
            guards = [n for st in _enclosing_ifs(part.body, pw.early_return) or ()
                      for n in pw.constexpr_names(st.cond)]
            if guards:
                # `if C == 2: return` on a constexpr the reading leaves free: Triton decides it
                # when it compiles, so the kernel is read again specialised to the constexprs
                # (SPECIALIZABLE), where only the branch taken exists
                raise TleError(f"early `return` in '{part.name}' under a condition on constexpr "
                               f"{', '.join(dict.fromkeys(guards))}, which performs pipe events "
                               f"after it: the kernel is read specialised to its constexpr "
                               f"values, so that only the branch that runs exists",
                               pw.early_return.loc, check="constexpr-if")
            raise TleError(f"early `return` in '{part.name}', which performs pipe events "
                           f"after it: whether they run would depend on the path taken; "
                           f"restructure so the function returns after its last event",
                           pw.early_return.loc,
                           check="unsupported-control-flow")
        partitions.append(Partition(part.name, tuple(pw.out), part.warps, part.regs, part.default,
                                    part.loc))
        bindings[part.name] = argv

    check_free_buffers(k)
    uses = used_placeholders(partitions)
    # kernel-body values computed by a comparison of a load of no known element type, which
    # the Program reads: the verdict holds only where that load is signed
    for ph in uses:
        note = k.signed_params.get(ph)
        if note is not None:
            k.keep_signed_only(note)
    # a value of no known element type read as a loop bound of pipe events and otherwise too:
    # an int1 is -1 in the one (sign-extended), 1 in the other (zero-extended)
    for pointer, loc in k.bool_bounds.items():
        other = k.bool_others.get(pointer)
        if other is not None:
            k.keep_signed_only((loc, pointer, (
                f"line {loc.line}: {pointer}'s element type is not known: a bound of this loop "
                f"of pipe events is {pointer}'s value, which through a *i1 {pointer} Triton "
                f"widens by sign extension (True is -1: `range(n)` runs no iteration), while "
                f"line {other.line} reads it zero-extended (True is 1), where the verifier "
                f"reads one integer; type {pointer} in DEFAULT_CONFIG's signature, or cast the "
                f"loaded value .to(tl.int32)"), BOUNDS))
    k.refuse_truths()
    extra = assumed_unused(k, uses)
    params, partitions, pnames = finalize(k.params, partitions, extra)
    uses = uses + extra
    env_names = {ph: Affine.of(n) for ph, n in pnames.items()}

    def rename(v: Value) -> Value:
        if isinstance(v, Aff):
            return Aff(v.expr.substitute(env_names), v.runtime, v.wide)
        if isinstance(v, (KernelArg, Sym)):
            return replace(v, param=pnames.get(v.param, v.param))
        if isinstance(v, TupleV):
            return TupleV(tuple(rename(x) for x in v.items))
        return v

    by_name = {pnames[ph]: slot for ph, slot in k.params.by_placeholder.items()}
    param_args = {p.name: by_name[p.name].arg for p in params if by_name[p.name].arg}
    assumptions = tuple(replace(a, param=pnames.get(ph, a.param)) for ph, a in k.assumptions)
    pipes = tuple(
        Pipe(d.name, d.capacity, tuple(b.name for b in d.fields), d.readers, d.one_shot,
             tuple(b.name for b in d.fields if b.name in k.mma.get(d.name, ())), d.loc, d.named)
        for d in kernel.pipes)
    derived, bases = derivations(k.params, k.definitions, uses, pnames, partitions)
    refuse_pointer_params(k, param_args, bases)
    # the walk records every slot access the kernel makes: a pipe it saw no write of is one
    # nothing writes, not a .pipe file's protocol skeleton
    unnamed = frozenset(pnames[slot.placeholder] for key, slot in k.params.by_key.items()
                        if isinstance(key, tuple) and key and key[0] == "load"
                        and slot.placeholder in pnames)
    # opaque params the kernel computes from its arguments without reading memory: a fault at
    # one of their values is no launch's witness
    declared = {p.name for p in (*params, *bases)}

    def options(ph: str) -> Optional[tuple]:
        """The branches' values of a value a branch chose on data, over the Program's names;
        None where there are none or one names a value that is no param or base."""
        got = k.computed_options.get(ph)
        if got is None or any(not (v.variables | (g.variables if g is not None else set()))
                              <= pnames.keys() for v, g in got):
            return None
        out = tuple((v.substitute(env_names), None if g is None else subst_cond(g, env_names))
                    for v, g in got)
        return out if all((v.variables | (g.variables if g is not None else set())) <= declared
                          for v, g in out) else None

    computed = tuple(sorted((pnames[ph], line, options(ph))
                            for ph, line in k.computed_params.items()
                            if ph in pnames and pnames[ph] in declared))
    known = {p.name for p in params} | {b.name for b in bases} | {d.name for d in derived}
    endless = tuple(unchecked_data_loops(k, pnames, known))
    # a run-time division whose value the Program reads, by a divisor that may be 0
    # (runtime_division)
    division_slots = {key: k.params.by_key.get(("pure", key)) for key in k.runtime_divisions}
    endless += tuple((loc, msg, "division-by-zero",
                      (a.substitute(env_names), b.substitute(env_names), *rest))
                     for key, (loc, msg, (a, b, *rest)) in k.runtime_divisions.items()
                     if division_slots[key] is not None
                     and pnames.get(division_slots[key].placeholder) in known)
    program = Program(kernel.name, params, pipes, tuple(partitions), kernel.loc, derived, bases,
                      every_access=True, unnamed=unnamed, computed=computed,
                      zero_steps=tuple(z if len(z) < 4 else (*z[:3], tuple(
                          x.substitute(env_names) for x in z[3])) for z in k.zero_steps)
                      + endless,
                      data_loops=subst_body(tuple(k.data_loops), env_names),
                      signed_only=tuple(k.signed_only))
    return Analysis(program,
                    {p: {n: rename(v) for n, v in b.items()} for p, b in bindings.items()},
                    {n: rename(v) for n, v in body.env.items()}, param_args, assumptions,
                    dict(k.pipes))


def unchecked_data_loops(k: KernelCtx, pnames: dict, known: set) -> Iterable[tuple]:
    """The run-time loops without events (Ctx.data_loops) that may never end at a launch no
    checked value stands for: a loop whose bounds read a value that is no param, base or
    derived param of the Program (an argument only such loops read, a value computed from one,
    a value read from memory, a bound that is not affine), whose counter's next value may pass
    2^31 - 1 over that value's domain (``tle.assume``; else every i32 value), where scf.for
    wraps it below the bound. The i32 check of loop bounds (passes/i32_range.py) covers the
    others at the values it checks; such a loop it never saw: `for i in range(0, N + 4, 3)` in a
    partition whose events N does not decide was "verified for its single instance" and never
    ends at N = 2^31 - 5. (`while` counters: loop_ends.why_not_ending.)"""
    for nest in k.data_loops:
        chain = [nest]  # the loops of the nest, outermost first (each holds the next)
        while chain[-1].body:
            chain.append(next(x for x in chain[-1].body if isinstance(x, For)))
        free = set().union(*(set(x.start.variables) | set(x.stop.variables) for x in chain)) \
            - {x.var for x in chain}
        unknown = sorted(v for v in free if not is_placeholder(v) or pnames.get(v) not in known)
        if not unknown:
            continue  # every value is the Program's: the i32 check of loop bounds sees them
        env = {}
        for v in free:
            lo, hi = k.params.domain(v) if is_placeholder(v) else (None, None)
            env[v] = (I32_MIN if lo is None else max(lo, I32_MIN),
                      I32_MAX if hi is None else min(hi, I32_MAX))
        top = counter_wraps(nest, env)
        if top is None:
            continue
        loop = chain[-1]
        names = ", ".join(dict.fromkeys(
            f"`{pnames.get(v, v)}`" if is_placeholder(v) else
            "a value that is not affine in params (read from memory, or a product)"
            if v.startswith("?bound@") else
            "the variable of a loop around it whose bounds are not affine" for v in unknown))
        yield (loop.loc, (
            f"this loop may never end: it steps by {loop.step}, and Triton's compiled loop "
            f"(scf.for) adds the step to its counter in i32 before it compares, so a bound that "
            f"close to 2^31 - 1 carries the counter to {top}, past the end of i32, where it "
            f"wraps below the bound; its bounds read {names}, which no value the verifier "
            f"checks stands for (the kernel's events do not read it), and whose domain lets "
            f"the bound come that close (bound it with tle.assume, or step by 1)"),
            "endless-loop")


def assumed_unused(k: KernelCtx, uses: list[str]) -> list[str]:
    """What the ``tle.assume`` bounds of values no event uses say of the params the events use.

    A bound on a value the kernel computes (``tle.assume(N // 2 >= 2)``) is checked by every
    launch, through its definition; where no event uses that value, the Program would not hold
    it, and the params its definition is computed from would be checked at values no launch
    gives (a fault at ``N = 3`` reported for a kernel no launch runs with ``N = 3``). Where the
    value is monotone in one param (``N // 2``, ``tl.cdiv(N, 64) - 1``), the bound is one on that
    param, narrowed here exactly (``N >= 4``); otherwise (``N % 2 == 0``, ``N * N >= 16``) the
    value is returned, to become a derived param of the Program, whose domain the search for
    witnesses keeps (passes/witness.py): a fault is reported only with values a launch gives."""
    used = set(reached(k.params, k.definitions, uses))
    extra: list[str] = []
    for ph, a in k.assumptions:
        if ph in used or ph in extra:
            continue
        if not set(reached(k.params, k.definitions, [ph])[1:]) & used:
            continue  # it bounds nothing the events depend on
        inv = assumed_interval(k.params, k.definitions, ph, a.min, a.max)
        if inv is None:
            extra.append(ph)
            continue
        base, lo, hi = inv
        slot = k.params.slot(base)
        if lo is not None and hi is not None and lo > hi:
            raise TleError(f"`{a.text}` leaves no value of {slot.arg or slot.hint} a launch can "
                           f"pass", a.loc, check="bad-assume")
        k.params.narrow(base, lo, hi)
    return extra


def protocol(kernel: K.Kernel, sources: Optional[dict[str, str]] = None,
             bind: Optional[dict] = None, trees: Optional[dict[str, ast.Module]] = None,
             read_files: bool = True) -> Program:
    """The Pipe IR :class:`Program` of a kernel (errors are TleErrors at their lines)."""
    return analyse(kernel, sources, bind, trees, read_files).program


def refuse_pointer_params(k: KernelCtx, param_args: dict[str, str], bases) -> None:
    """A kernel argument the kernel uses as a pointer (the only kernel argument a load, store
    or atomic computes its pointer from) that the protocol also reads as an integer (a loop
    bound, a condition, an index, or what a derived param is computed from): Triton refuses
    the loop ("For loop bounds and step must all be ints, are (int32, pointer<fp32>, int32)")
    or computes with an address, never the integer the verifier checked for every value
    (`range(x_ptr)` was verified "for every value of x_ptr"). An error at the kernel, where
    the argument is declared."""
    pointer_args = {k.params.slot(ph).arg: k.params.slot(ph) for ph in k.sure_pointers
                    if k.params.slot(ph).arg}
    read = set(param_args.values()) | {getattr(b, "name", b) for b in bases}
    for arg in sorted(read & set(k.tma_descriptor_locs)):
        # a tensor descriptor is no integer: Triton refuses it as a loop bound, and an integer
        # argument as a TMA copy's descriptor (the verdict was "verified for every value" of it)
        loc = k.tma_descriptor_locs[arg]
        raise TleError(f"kernel argument '{arg}' is the descriptor of a tle.gpu.tma_load and an "
                       f"integer the pipe protocol reads (a loop bound, condition or index): a "
                       f"tensor descriptor is no integer, and an integer no descriptor; pass the "
                       f"count and the descriptor as arguments of their own", loc,
                       check="bad-tma")
    for arg in sorted(read & set(pointer_args)):
        slot = next((sl for sl in k.params.by_placeholder.values() if sl.arg == arg),
                    pointer_args[arg])
        raise TleError(f"kernel argument '{arg}' is used as a pointer (a load, store or atomic "
                       f"takes its address from it) and as an integer by the pipe protocol (a "
                       f"loop bound, condition or index): Triton refuses a pointer as a loop "
                       f"bound and compares addresses, not the integer the verifier checks; pass "
                       f"the count as an integer argument of its own", slot.loc,
                       check="pointer-param")


def check_free_buffers(k: KernelCtx) -> None:
    """A free shared buffer (a tle.gpu.alloc of the kernel that is no pipe field) touched by two
    partitions, one of them writing, is a data race: no barrier orders the two. An error at the
    later access, naming both."""
    what = {True: "writes", False: "reads"}
    for buf, uses in k.buffer_uses.items():
        for i, (p2, w2, loc2, op2) in enumerate(uses):
            for p1, w1, loc1, op1 in uses[:i]:
                if p1 != p2 and (w1 or w2):
                    raise TleError(
                        f"shared buffer `{buf}` is used by two partitions, one of them writing: "
                        f"'{p1}' {what[w1]} it ({op1} at line {loc1.line}) and '{p2}' "
                        f"{what[w2]} it ({op2} at line {loc2.line}); no barrier orders them (a "
                        f"data race outside any pipe): hand the data over through a pipe", loc2,
                        check="buffer-race")
