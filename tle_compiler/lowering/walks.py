"""The translation walks of one kernel: what every walk shares (:func:`prepare`) and the walk of
each function (the kernel prologue, each partition).

The lowering passes walk the same kernel IR with :class:`~.translate.FnTranslator` in the same
order: assign-layouts walks it collecting layout constraints (``emit=False``), schedule-wgmma
and emit-gluon walk it emitting with the layouts assign-layouts wrote (schedule-wgmma deciding
the wgmma waits at the walk's points, emit-gluon printing them: lowering/wgmma_sites.py). The translator numbers
layout variables and constraints in visiting order, so every walk finds a value's layout in the
function's :class:`~tle_compiler.ir.attrs.LayoutTable` by number.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace
from types import SimpleNamespace
from typing import Callable, Optional

from ..diagnostics import TleError, TleVerificationWarning
from ..ir import kernel as K
from . import instrument
from .names import NameAllocator, source_names
from .plan import build_plan
from .layouts import pointee_of
from ..ir import promotion
from ..ir.promotion import SIGNATURE_SCALARS
from .translate import I64_ARG_TYPES, Ctx, FnTranslator, V, constant, literal
from .wgmma_sites import Drain, WgmmaWaits


def kernel_option(info, name: str, default: bool = False) -> bool:
    """A boolean ``@tle.jit(...)`` option of the kernel (``default`` when not given)."""
    return bool((getattr(info, "options", None) or {}).get(name, default))


def eager_arrays(info, plans: dict) -> set[str]:
    """The barrier arrays whose arriving partitions all have one warp count (lowering/eager.py),
    except the full arrays of groups filled by TMA copies (their commit's expect-tx arrive is one
    elected thread)."""
    warps_of = {p.name: p.warps for p in info.partitions}
    out = set()
    for pp in plans.values():
        for arr in pp.arrays:
            if arr.kind == "full" and any(pp.rings[f].tma for f in arr.barriers[0].fields):
                continue
            ws = {warps_of.get(a.partition, info.num_warps) for b in arr.barriers for a in b.arrivers}
            if len(ws) == 1:
                out.add(arr.var)
    return out


@dataclass
class Lowering:
    """One kernel on its way to Gluon: the frontend's facts (``info``), the constexpr values, the
    kernel IR the passes annotated (``kir``), its module constants (``consts``) and the
    translators' shared context (``ctx``: plans, options)."""

    info: object
    constexprs: dict
    kir: K.Kernel
    consts: dict
    ctx: Ctx
    barriers: list


def kernel_facts(kernel: K.Kernel, program) -> SimpleNamespace:
    """What the lowering reads of a kernel besides its IR (the frontend's KernelInfo has the same
    fields), for a kernel that comes without one (parsed from the KIR text form)."""
    parts = tuple(SimpleNamespace(name=p.name, warps=p.warps, regs=p.regs, default=p.default,
                                  loc=p.loc) for p in kernel.partitions)
    pipes = {d.name: SimpleNamespace(fields=[SimpleNamespace(name=b.name, shape=list(b.shape),
                                                             dtype=b.dtype, loc=b.loc)
                                             for b in d.fields])
             for d in kernel.pipes}
    return SimpleNamespace(name=kernel.name, path=kernel.loc.file or "<kir>", program=program,
                           num_warps=kernel.num_warps, partitions=parts, options=dict(kernel.options),
                           args=tuple(p.name for p in kernel.params),
                           constexprs=tuple(p.name for p in kernel.params if p.constexpr),
                           pipes=pipes, kir=kernel)


def module_info(module):
    """The frontend's facts of the module's kernel (its KernelInfo, or the same fields read from
    the KIR for a kernel parsed from the text form)."""
    if module.info is not None:
        return module.info
    module.info = kernel_facts(module.kernel, module.protocol().program)
    return module.info


def reject_errors(module) -> None:
    """A protocol the verifier rejects is never lowered: the first error, with its line."""
    ctx_p = module.protocol()
    if ctx_p.errors:
        first = ctx_p.errors[0]
        raise TleError(f"the pipe protocol is rejected, nothing is lowered: {first.message}",
                       first.loc, check=first.check or "protocol")


def unproved_message(kernel: str, what: str) -> str:
    """What the lowering says of kernel ``kernel`` lowered without a proof for every value of its
    params (``what``: the verdict's description)."""
    return (f"kernel '{kernel}' is lowered, but its pipe protocol is not proved for every value "
            f"of its params: {what}")


def check_lowerable(module, kernel: str) -> Optional[TleVerificationWarning]:
    """What the lowering says of kernel ``kernel`` before it lowers it from ``module`` (after the
    protocol passes): a protocol the verifier rejects is refused (:func:`reject_errors` raises its
    first error); one verified only for the param values checked (verdict "bounded" or
    "unknown", or no verdict) is lowered with the returned TleVerificationWarning, which says
    what was checked; None for a proof. The one rule for the lowering (:func:`warn_unproved`)
    and for ``tle-dump -p ... emit-gluon`` (cli/print_ir.py), which say it the same way."""
    reject_errors(module)
    verdict = module.protocol().verdict()
    if verdict is not None and verdict.kind == "proved":
        return None
    return TleVerificationWarning(
        unproved_message(kernel, verdict.describe() if verdict else "the passes gave no verdict"),
        kernel=kernel, verdict=verdict)


def warn_unproved(info, module) -> None:
    """A protocol verified only for the param values checked is lowered with a
    TleVerificationWarning saying what was checked (:func:`check_lowerable`; a rejected one is
    refused). The warning points at the caller of the lowering's emit."""
    warning = check_lowerable(module, info.name)
    if warning is not None:  # lowered, but say what the claim covers
        warnings.warn(warning, stacklevel=3)


def prepare(info, constexprs: dict, module, debug_waits=False, cp_async: bool = True,
            arg_types: Optional[dict] = None, **_emit_only) -> Lowering:
    """The shared-memory plan and the translators' context of the kernel of ``module`` (the
    barrier arrays from its pipes' attributes; the kernel's lowering options; ``arg_types``: the
    compile's signature, when known)."""
    reject_errors(module)
    kir = module.kernel
    consts = dict(kir.consts)
    missing = [c for c in info.constexprs if c not in constexprs]
    if missing:
        raise TleError(f"kernel '{info.name}': constexpr argument(s) {', '.join(missing)} need a "
                       f"value", info.program.loc, check="lowering")
    all_consts = dict(consts)
    all_consts.update({k: v for k, v in constexprs.items()})
    plans = build_plan(info, kir, all_consts)
    barriers = [b for pp in plans.values() for arr in pp.arrays for b in arr.barriers]
    for decl in kir.pipes:  # assign-layouts' arrive units, once it has run
        units = {u.barrier: u for u in K.get_attr(decl, "arrive_units", ())}
        for arr in plans[decl.name].arrays if units else ():
            u = units[arr.barrier]
            arr.mode, arr.threads = u.mode, u.threads
            arr.init_counts = [u.init_count] * len(arr.counts)
    ctx = Ctx(info.path, all_consts, plans, debug_waits)
    # the kernel's own names, which the generated module spells as written: the translators'
    # temporaries and layout names step over them (FnTranslator.fresh / L)
    ctx.taken = frozenset(source_names(kir))
    ctx.cp_async = cp_async
    ctx.arg_types = dict(arg_types or {})
    ctx.free_buffers = {b.name: b for b in kir.buffers}
    # opt-in: async wgmmas stay in flight across loop back-edges (docs/lowering.md, "Pipelined wgmma")
    ctx.wgmma_pipeline = kernel_option(info, "wgmma_pipeline")
    ctx.row_reduce_tree = kernel_option(info, "row_reduce_tree")  # lowering/row_reduce.py
    # opt-in: per-thread release arrives, publishes ahead of the work after them (lowering/eager.py)
    ctx.eager_arrays = eager_arrays(info, plans) if kernel_option(info, "eager_publish") else set()
    # on by default: 16-byte stores of accumulator-layout tiles (lowering/acc_store.py)
    ctx.acc_stores = kernel_option(info, "acc_stores", True)
    # instrument.skip_fills: fills left out to measure their cost (benchmarks/gather_probe.py)
    ctx.probe_skip = set(instrument.fills_skipped(info.path))
    unknown = {s.split(".")[0] for s in ctx.probe_skip} - set(plans)
    if unknown:
        raise TleError(f"instrument.skip_fills names no pipe of kernel '{info.name}': "
                       f"{', '.join(sorted(unknown))} (pipes: {', '.join(plans)})",
                       info.program.loc, check="lowering")
    if debug_waits:
        from .debug import parse_bound

        ctx.debug_waits = parse_bound(debug_waits)
        ctx.kernel_name = info.name
    return Lowering(info, dict(constexprs), kir, consts, ctx, barriers)


def prologue(low: Lowering, emit: bool, solver) -> FnTranslator:
    """Walk the kernel prologue (scalars: the partitions' bindings read its names)."""
    info = low.info
    kt = FnTranslator(low.ctx, "<kernel>", info.num_warps, solver, emit)
    for a in info.args:
        kt.env[a] = (V("const", a, value=low.constexprs[a]) if a in info.constexprs
                     else V("scalar", a, pointee=pointee_of(low.ctx.arg_types.get(a)), arg=a,
                            i64=low.ctx.arg_types.get(a) in I64_ARG_TYPES,
                            dtype=SIGNATURE_SCALARS.get(low.ctx.arg_types.get(a))))
    kt.assign_counts = kt._count_assigns(low.kir.prologue)
    for st in low.kir.prologue:
        kt.stmt(st)
    # The partitions' argument expressions are the prologue's last values: evaluated here, in
    # the prologue's walk, an expression that computes (`tl.sum(tl.arange(0, 4), 0)`) gets its
    # layout variables in the prologue's numbering before its layouts are solved, and its lines
    # in the prologue; :func:`bindings` reads the values.
    kt.binding_values = {(kpart.name, p): kt.ex(e) for kpart in low.kir.partitions
                         for p, e in kpart.bindings}
    return kt


@dataclass
class Binding:
    """A partition's bindings as the generated function sees them: its parameters, the kernel's
    arguments of its call, its constexpr locals, the translator's environment."""

    params: list
    call_args: list
    pre: list
    env: dict


def bindings(low: Lowering, kt: FnTranslator, kpart: K.KPartition) -> Binding:
    """The bindings of ``kpart`` evaluated in the kernel prologue's translator ``kt``.

    A tuple argument (``warp_specialize([(fill, ((p, x_ptr), N)), ...])``) is flattened: Gluon
    partitions take pipe buffers, scalars and constexprs, so each runtime scalar of the tuple (at
    any depth) becomes a parameter of its own (``px_1`` for ``px[1]``), each constant stays a
    constant and each pipe handle brings its pipe's rings and barriers, while the partition's
    environment binds ``px`` to a tuple of these values, so that ``px[1]``, ``p, x_ptr = px``
    and a helper taking ``px`` read them as the verifier did. Any other item (a tensor, a dtype)
    is refused at the binding with its position in the tuple."""
    params, call_args, pre, seen = [], [], [], []
    env: dict[str, V] = {}
    names = NameAllocator(low.kir, ())
    names.taken |= {var for pp in low.ctx.plans.values() for var in pp.vars}

    def handed(name: str, text: str, **attrs) -> V:
        # a scalar handed to the partition as its parameter ``name``, the caller passing ``text``
        params.append(name)
        call_args.append(text)
        return V("scalar", name, **attrs)

    def rebound(v: V) -> bool:
        # a number the prologue bound again (V.bound): a run-time value (``runtime``)
        return v.kind == "const" and v.bound and promotion.python_number_type(v.value) is not None

    def runtime(v: V, name: str) -> V:
        # a variable of the prologue that a plain assignment rebound (`S = 100; S = S + 0`, or
        # arithmetic on one: V.bound) is the scalar tensor Triton computes there, C's `//` and
        # `%`, i32 wraps and promotion included (`t + S` of an int8 tile adds in i32): handed
        # to the partition as that tensor, which the verifier reads as the run-time value it
        # is (frontend/protocol.py PrologueWalker._s_Assign); it was a gl.constexpr of
        # Python's value (lowering adversarial round 11). A text that is no variable of the
        # prologue (`S = C` of a constexpr C) is made the tensor the assignment made.
        text = v.text
        if not (text.isidentifier() and text not in low.ctx.consts
                and text not in low.constexprs):
            text = f"gl.to_tensor({text})"
        dtype = promotion.python_number_type(v.value)
        return handed(name, text, i64=dtype in ("int64", "uint64"), dtype=dtype)

    def flat(v: V, where: str, e) -> V:
        if rebound(v):
            return runtime(v, names(where.replace("[", "_").replace("]", "")))
        if v.kind == "const" and promotion.python_number_type(v.value) is not None \
                and v.text.isidentifier() \
                and (v.text not in low.ctx.consts or v.text in low.constexprs):
            # a tuple item that names a constexpr parameter of the kernel (`(C, 1)`): its
            # value, as such a name handed alone reaches the partition; the tuple spelt the
            # kernel's name there, undefined in the partition (a NameError of the compile;
            # lowering adversarial round 10). A module constant is defined in the generated
            # module and stays as spelt.
            return V("const", literal(v.value), value=v.value)
        if v.kind in ("pipe", "writer", "reader"):
            pipe = v.value if v.kind != "reader" else v.value[0]
            if pipe not in seen:
                seen.append(pipe)
            return v
        if v.kind in ("const", "none"):
            return v
        if v.kind == "scalar":
            return handed(names(where.replace("[", "_").replace("]", "")), v.text,
                          pointee=v.pointee, arg=v.arg, i64=v.i64, dtype=v.dtype)
        if v.kind == "tuple":
            items = [flat(item, f"{where}[{i}]", e) for i, item in enumerate(v.value)]
            return V("tuple", "(" + ", ".join(i.text for i in items)
                     + (",)" if len(items) == 1 else ")"), value=items)
        raise kt.err(f"partition '{kpart.name}': argument {where} is a {v.kind}; partitions take "
                     f"pipes, scalars and constants (and tuples of them)", e)

    for p, e in kpart.bindings:
        v = kt.binding_values[(kpart.name, p)]
        if v.kind in ("pipe", "writer", "reader"):
            env[p] = flat(v, p, e)
        elif v.kind == "const" and constant(p, v.value).kind == "dtype":
            # a dtype given as a constexpr (DT=tl.float16): Gluon's dtype of that name
            d = constant(p, v.value)
            pre.append(f"    {p}: gl.constexpr = {d.text}")
            env[p] = replace(d, text=p)
        elif rebound(v):
            env[p] = runtime(v, p)
        elif v.kind == "const":
            pre.append(f"    {p}: gl.constexpr = {literal(v.value)}")
            env[p] = V("const", p, value=v.value)
        elif v.kind == "scalar":
            env[p] = handed(p, v.text, pointee=v.pointee, arg=v.arg, i64=v.i64, dtype=v.dtype)
        elif v.kind == "tuple":
            env[p] = flat(v, p, e)
        elif (v.kind == "smem" and v.value is None) or (
                v.kind == "lptr" and getattr(v.value, "value", "") is None):
            env[p] = v  # a free buffer's stub, or its pointer (translate.STUB_FREE_BUFFERS)
        else:
            raise kt.err(f"partition '{kpart.name}': argument '{p}' is a {v.kind}; partitions take "
                         f"pipes, scalars and constants (and tuples of them)", e)
    for pipe in seen:
        params += low.ctx.plans[pipe].vars
        call_args += low.ctx.plans[pipe].vars
    return Binding(params, call_args, pre, env)


def partition(low: Lowering, pinfo, kpart: K.KPartition, env: dict, emit: bool,
              solver, waits: Optional[WgmmaWaits] = None) -> FnTranslator:
    """Walk one partition's body (its statement list is the path ``body``, lowering/
    kir_paths.py), whose end drains the wgmmas still in flight; ``waits``: what the walk does at
    the points where a wgmma wait may go (lowering/wgmma_sites.py; by default nothing)."""
    tr = FnTranslator(low.ctx, pinfo.name, pinfo.warps, solver, emit)
    if waits is not None:
        tr.wgmma = waits
    tr.env = dict(env)
    tr.body(kpart.body, "body", end=Drain("end of the partition"), line=kpart.loc.line)
    tr.wgmma.finish(tr, kpart)
    return tr


def assigned(node, what: str):
    """The :class:`~.layouts.AssignedLayouts` of a function (the Kernel for its prologue, or a
    KPartition) from its ``layouts`` attribute; assign-layouts must have run."""
    from .layouts import AssignedLayouts

    table = K.get_attr(node, "layouts")
    if table is None:
        raise TleError(f"internal: {what} reaches the lowering without assign-layouts' layout "
                       f"table", node.loc, check="lowering")
    return AssignedLayouts(table, what)


def emitting_walks(low: Lowering, waits: Callable[[K.KPartition], WgmmaWaits] = None):
    """The emitting walk of every function with the layouts assign-layouts wrote: yields
    ``(None, kt, None)`` for the prologue, then ``(pinfo, tr, binding)`` per partition (each
    walk's layout numbering checked against its table); ``waits(kpart)``: what the partition's
    walk does at the points where a wgmma wait may go (schedule-wgmma decides, emit-gluon
    prints)."""
    ks = assigned(low.kir, "the kernel prologue")
    kt = prologue(low, True, ks)
    ks.finish()
    yield None, kt, None
    for pinfo, kpart in zip(low.info.partitions, low.kir.partitions):
        b = bindings(low, kt, kpart)
        solver = assigned(kpart, f"partition '{kpart.name}'")
        tr = partition(low, pinfo, kpart, b.env, True, solver,
                       waits(kpart) if waits is not None else None)
        solver.finish()
        yield pinfo, tr, b
