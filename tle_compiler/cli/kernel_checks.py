"""The checks tle-dump makes of a kernel beside its pipe protocol, each recorded on the kernel's
report: the launch signature against the config, the shared memory of the default shapes,
global memory two partitions may race on, float constexprs, and loads through pointers whose
element type only a signed reading fixes."""

from __future__ import annotations

import math
import sys
from typing import Optional

from ..diagnostics import TleError
from ..ir.nodes import Program
from ..passes.verdict import BOUNDED, PROVED
from .report import KernelReport, Qualification
from .constexprs import lowering_constexprs
from .loading import Loaded, int_constexprs


def check_launch_signature(rep: KernelReport, loaded: Loaded, fixed: dict[str, int]) -> None:
    """A kernel the passes found no fault in, checked against its DEFAULT_CONFIG signature as
    the compile checks it (lowering/signature_checks.py, lowering/loaded_params.py): an
    integer argument typed narrow or unsigned, a protocol param typed i64 or i1, or a value its
    events depend on read through a pointer that is not i32 (or computed as a float, an unsigned
    or a narrow integer), is computed on the GPU in an arithmetic the verifier did not check;
    and a tensor descriptor whose box, element type or offsets are not those of the slot its TMA
    copies fill (lowering/descriptors.complete_signature, with the constexprs the kernel would be
    lowered with) would land other bytes than the commit's expect-tx counts. The kernel is
    rejected at that line, as the compile would refuse it, rather than verified."""
    name = rep.program.name
    info, sig = loaded.infos.get(name), loaded.signatures.get(name)
    if info is None and loaded.kirs.get(name) is not None:
        info = kir_facts(loaded, name, rep.program)
    if info is None or any(d.severity == "error" for d in rep.diagnostics):
        return
    from ..diagnostics import Diagnostic
    from ..lowering.descriptors import complete_signature
    from ..lowering.loaded_params import check_loaded_params
    from ..lowering.signature_checks import check_signature
    from .constexprs import lowering_constexprs, over_config

    if not sig:
        # no signature: arguments and loads are read as i32 (the verdict's caveat), but a value
        # the kernel itself computes as another type whatever the launch's types (`M =
        # tl.full([], 0, tl.uint32) + N`, `N * 1.0`) is refused as a compile would refuse it
        try:
            check_loaded_params(info, {}, untyped=True)
        except TleError as e:
            rep.early.append(Diagnostic(loc=e.loc, message=e.message, check=e.check))
        return

    try:
        check_signature(info, sig)
    except TleError as e:
        rep.early.append(Diagnostic(loc=e.loc, message=e.message, check=e.check))
        return
    config, given = loaded.defaults.get(name, {}), lowering_constexprs(loaded, name, fixed)
    if any(n in config and config[n] != v for n, v in given.items()):
        return  # another configuration than DEFAULT_CONFIG's: its descriptors are a launch's
    try:
        complete_signature(info, sig, over_config(config, given))
    except TleError as e:
        if e.check == "signature":  # a shape left to a launch's constexprs is the lowering's
            rep.early.append(Diagnostic(loc=e.loc, message=e.message, check=e.check))


def kir_facts(loaded: Loaded, name: str, program: Program):
    """What a .kir file's kernel ``name`` carries of a .py kernel's KernelInfo for the signature
    checks (lowering/walks.kernel_facts, and the kernel arguments its protocol params are read
    from, ``param_args``, derived as the frontend derives them for the view verified), so that
    its DEFAULT_CONFIG signature is checked as a .py kernel's is (a protocol param typed u32,
    i64, i1 or fp32); None where the view cannot be derived again (the verdict says why)."""
    from ..frontend.protocol import analyse
    from ..lowering.walks import kernel_facts

    kir = loaded.kirs[name]
    try:
        param_args = analyse(kir, bind=dict(loaded.specialised_of(name)),
                             read_files=False).param_args
    except TleError:
        return None
    facts = kernel_facts(kir, program)
    facts.param_args = dict(param_args)
    return facts


def check_default_shapes(rep: KernelReport, loaded: Loaded) -> None:
    """A kernel the passes found no fault in (of a .py or a .kir file), read generically, checked
    at its DEFAULT_CONFIG's integer constexprs as a specialised read is
    (frontend/shared_memory.check_bound_shapes): a field `[2, C]` with C = 3 there, or a C that
    makes the rings outgrow shared memory, is rejected at the declaration, as the launch of that
    configuration would fail (Gluon refuses the allocation), rather than verified. Constexprs
    the read was specialised to were checked when it was made."""
    name = rep.program.name
    info, config = loaded.infos.get(name), loaded.defaults.get(name)
    kir = getattr(info, "kir", None) or loaded.kirs.get(name)  # a .py kernel's, or a .kir's
    if kir is None or not config or any(d.severity == "error" for d in rep.diagnostics):
        return
    done = loaded.specialised_of(name)
    bind = {n: v for n, v in int_constexprs(config).items() if n not in done}
    if not bind:
        return
    from ..diagnostics import Diagnostic
    from ..frontend.shared_memory import check_bound_shapes

    try:
        check_bound_shapes(kir, bind)
    except TleError as e:
        rep.early.append(Diagnostic(loc=e.loc, message=f"{e.message} (DEFAULT_CONFIG: "
                                    f"{', '.join(f'{n} = {v}' for n, v in sorted(bind.items()))})",
                                    check=e.check))


def reject_at(rep: KernelReport, e: TleError, check: Optional[str] = None) -> None:
    """Rejects the kernel of ``rep`` at the refusal ``e``: its words at its place (the kernel's
    where it has none), under ``check`` (``e``'s own by default)."""
    from ..diagnostics import Diagnostic

    rep.early.append(Diagnostic(loc=e.loc or rep.program.loc, message=e.message,
                                check=check or e.check))


def check_memory_races(rep: KernelReport, loaded: Loaded, beside=None) -> None:
    """A kernel the passes found no fault in, checked for global memory that two partitions
    access, one writing, with no pipe hand-off proved to order them
    (frontend/global_races.check_global_races): rejected with a witness (the iterations and
    the address) rather than verified, or, where z3 cannot decide a pair, not proved (verdict
    unknown, exit 3). After the passes, so that a protocol fault is reported as such, and so
    that the ordering the check reads from commits and waits holds. A .kir file's kernels are
    checked as a .py file's are; a .pipe protocol has no memory accesses. The integer
    constexprs the kernel was read specialised to are numbers in the addresses; where the check
    refuses the kernel for some value of another (a row pitch `row * D`), it is checked again
    with DEFAULT_CONFIG's values, and verified, if so, for those values only. ``beside``: the
    outcomes a child process computed meanwhile (RacesBeside), taken where they were computed
    from the same inputs."""
    if rep.stopped is not None or any(d.severity == "error" for d in rep.diagnostics):
        return
    inputs = race_inputs(rep.program, rep.specialised, loaded)
    if inputs is None:
        return
    outcome = beside.outcome(rep.program.name, inputs) if beside is not None else None
    if outcome is None:
        outcome = race_outcome(*inputs)
    kind = outcome[0]
    if kind == "refused":
        reject_at(rep, TleError(outcome[1], outcome[2], check=outcome[3]))
        return
    if kind == "unproved":
        rep.stopped = TleError(outcome[1], outcome[2], check="memory-race")
        return
    relied, extra = outcome[1], outcome[2]
    if extra is not None:
        rep.specialised = {**rep.specialised, **extra}
        print(f"tle-dump: {rep.program.name}: global memory proved apart with "
              f"{', '.join(f'{n}={v}' for n, v in extra.items())} (DEFAULT_CONFIG; a race "
              f"otherwise); the verdict holds for these values only", file=sys.stderr)
    from ..frontend.race_divisions import NOTE

    divided = [g for g in relied if g and g[0] == NOTE]
    strides = sorted({n for group in relied if not (group and group[0] == NOTE)
                      for n in group})
    # a division by arguments alone that may be 0 (race_divisions.py) is a launch's to
    # choose: the verdict takes it nonzero and says so, also of the values of a param it
    # quantifies (`for every value of d`: but those at which the divisor `d` is 0)
    params = {p.name for p in getattr(rep.program, "params", ())}
    narrowed = sorted({a for g in divided for a in g[6] if a in params})
    # each divisor once, with the lines it divides at grouped by file (a helper inlined at
    # several call sites divides at one line many times), in a fixed order
    places: dict[str, dict[str, set]] = {}
    for _, arg, file, line, _, _, _ in divided:
        places.setdefault(arg, {}).setdefault(file.rsplit('/', 1)[-1] if file else "",
                                              set()).add(line)

    def at(lines: set, file: str) -> str:
        ls = sorted(lines)
        return (f"line{'s' if len(ls) > 1 else ''} "
                + (", ".join(map(str, ls[:-1])) + " and " if len(ls) > 1 else "")
                + str(ls[-1]) + (f" of {file}" if file else ""))

    divided = [f"{arg} at " + "; ".join(at(ls, f) for f, ls in sorted(places[arg].items()))
               for arg in sorted(places)]
    assumed = []
    if strides:
        # the stride rule is an assumption about the launch (docs/semantics.md, "Strides"):
        # a verdict that may rest on it says so, naming the strides
        assumed.append(f"global memory proved apart taking the rows of the stride argument"
                       f"{'s' if len(strides) > 1 else ''} {', '.join(strides)} not to "
                       f"overlap: each "
                       f"stride at least the width of the columns addressed beside it, and no "
                       f"row offset `row * stride` wrapping around int32 or the address space "
                       f"(docs/semantics.md, \"Strides\"); a launch with a smaller stride, or "
                       f"with rows that wrap, is not covered")
    if divided:
        # a division by a kernel argument that may be 0 (or -1 beside the dividend's least
        # value) is undefined behaviour the compiled kernel rests on (race_divisions.py)
        assumed.append(f"taking the divisor{'s' if len(divided) > 1 else ''} "
                       f"{', '.join(divided)} never 0 (nor -1 where the dividend is its type's "
                       f"least value): LLVM takes such a division as undefined behaviour and "
                       f"compiles the code around it for a divisor that is not (`if d != 0:` "
                       f"after `s % d` is dropped), so a launch at which one is 0 is not "
                       f"covered"
                       + (f" (the verdict's values of {', '.join(narrowed)} are those at which "
                          f"none is)" if narrowed else "")
                       + "; state the domain with tle.assume (d >= 1), which a launch checks")
    if assumed:
        rep.assumed = "; ".join(assumed)
        print(f"tle-dump: {rep.program.name}: {rep.assumed}", file=sys.stderr)


def race_inputs(program: Program, specialised: dict, loaded: Loaded) -> Optional[tuple]:
    """What the memory-race check of ``program`` reads (the arguments of :func:`race_outcome`),
    None for a kernel with no kernel IR (a .pipe protocol)."""
    info = loaded.infos.get(program.name)
    kir = getattr(info, "kir", None) or loaded.kirs.get(program.name)
    if kir is None:
        return None
    # the tle.assume ranges of the kernel's integer arguments (the protocol's params)
    args = {p.name for p in kir.params}
    domains = {p.name: (p.min, p.max) for p in getattr(program, "params", ())
               if p.name in args}
    # and those of arguments that are no param of the protocol (`N` where the loops run over
    # `N // 2`): each tle.assume comparison of an argument itself narrows its range
    for a in getattr(info, "assumptions", ()):
        if a.arg in args and not a.steps:
            lo, hi = domains.get(a.arg, (None, None))
            lo = a.min if lo is None else lo if a.min is None else max(lo, a.min)
            hi = a.max if hi is None else hi if a.max is None else min(hi, a.max)
            domains[a.arg] = (lo, hi)
    # the constexprs the kernel was read specialised to (a --param's) are numbers in the
    # addresses (a row pitch `row * D`); the others are of any value
    names = set(loaded.constexprs.get(program.name, ())) | \
        {p.name for p in kir.params if p.constexpr}
    values = {n: v for n, v in specialised.items() if n in names}
    config = loaded.defaults.get(program.name, {})  # DEFAULT_CONFIG's constexpr values
    # and the float constexprs DEFAULT_CONFIG gives (`"SCALE": 0.5`), whose values are no
    # integers: a cast or a comparison of one is not read as of an integer
    values.update({n: v for n, v in config.items()
                   if n in names and isinstance(v, float) and n not in values})
    # a constexpr of no value here (neither DEFAULT_CONFIG nor --param gives one) is a launch's
    # to choose, a float too (`SCALE=0.5`), unless the kernel's own use of it compiles only for
    # an integer (a range bound, tl.arange, a shape, or its arithmetic in a loop bound or a
    # pointer's offset: frontend/constexpr_kinds.py): a cast or a comparison of it is read as of
    # a float (race_terms.floating)
    from ..frontend.constexpr_kinds import integer_arguments, integer_constexprs

    floats = frozenset(n for n in names if n not in values and n not in config) - \
        integer_constexprs(kir) - integer_arguments(kir)
    signature = loaded.signatures.get(program.name)  # pointers, integer widths
    # and a run-time argument no signature types, which a launch may pass as a float (Triton's
    # JIT types a Python float fp32), unless the kernel's own use of it compiles only for no
    # float (a loop bound, a pointer's offset: constexpr_kinds.integer_arguments)
    floats |= frozenset(p.name for p in kir.params if not p.constexpr and
                        (not signature or p.name not in signature)) - integer_arguments(kir)
    return kir, domains, values, config, names, floats, signature


def race_outcome(kir, domains: dict, values: dict, config: dict, names: set, floats: frozenset,
                  signature: Optional[dict]) -> tuple:
    """The memory-race check's outcome, as plain data (a child process may compute it):
    ``("proved", relied, extra)`` (the stride groups relied on; ``extra``: the DEFAULT_CONFIG
    constexprs it was proved with after a refusal without them, else None), ``("refused",
    message, loc, check)`` or ``("unproved", message, loc)``."""
    from ..frontend.global_races import Unproved, check_global_races

    extra = None
    try:
        try:
            relied = check_global_races(kir, domains, values, signature, floats)
            # a free constexpr is read as an int32, as the integer arguments are: a
            # DEFAULT_CONFIG value past int32 (`"C": 2 ** 40`, which the lowering compiles with)
            # is outside that reading, so the kernel is checked with it too
            wide = {n: v for n, v in int_constexprs(config).items()
                    if n in names and n not in values and not -2 ** 31 <= v < 2 ** 31}
            if wide:
                relied = relied + check_global_races(kir, domains, {**values, **wide},
                                                     signature, floats)
        except TleError:
            # refused for some value of a constexpr argument (`row * D` with D = 32 overlaps
            # the next row): checked again with the DEFAULT_CONFIG values the lowering
            # translates it with, and, proved so, verified for those values only (the verdict
            # names them, as a reading specialised to them does)
            extra = {n: v for n, v in int_constexprs(config).items()
                     if n in names and n not in values}
            if not extra:
                raise
            relied = check_global_races(kir, domains, {**values, **extra}, signature,
                                        floats)  # its refusal
    except TleError as e:
        return ("refused", e.message, e.loc, e.check)
    except Unproved as e:
        return ("unproved", e.message, e.loc)
    return ("proved", relied, extra)


class RacesBeside:
    """The memory-race checks of the kernels of one run, computed in a forked process
    (cli/beside.py) while this one verifies and translates them: each outcome is taken where
    the check's inputs, computed again when it is due, are those it was computed from. Only a
    proof or a refusal is taken (an undecided check, whose z3 time limits a busy machine may
    decide, is run again here)."""

    def __init__(self, reports: list, loaded: Loaded):
        from .beside import start

        self.jobs: dict[str, tuple] = {}
        for k, specialised in reports:
            try:  # (computed ahead: a kernel whose check is never due must not fail here)
                inputs = race_inputs(k, specialised, loaded)
            except Exception:
                continue
            if inputs is not None and k.name not in self.jobs:
                self.jobs[k.name] = inputs
        self.child = start(race_outcome, list(self.jobs.values()))

    def outcome(self, name: str, inputs: tuple) -> Optional[tuple]:
        if self.child is None or name not in self.jobs:
            return None
        given = self.jobs[name]
        if given[0] is not inputs[0] or given[1:] != inputs[1:]:
            return None
        got = self.child.results()[list(self.jobs).index(name)]
        return got if got is not None and got[0] in ("proved", "refused") else None

    def close(self) -> None:
        if self.child is not None:
            self.child.close()


def check_float_constexprs(rep: KernelReport, loaded: Loaded, fixed: dict) -> None:
    """A kernel whose protocol reads a constexpr of no value here (neither DEFAULT_CONFIG's
    ``constexprs`` nor --param gives one, so a launch chooses it) that the kernel's own code
    does not prove an integer (frontend/constexpr_kinds.py: a range bound, ``tl.arange``, a
    shape): the protocol checks integer values of it only, while a launch may give a float
    (``if t < SCALE`` and ``if t > SCALE - 1`` both hold at t = 2 of SCALE = 2.5, at no integer
    SCALE), as the memory-race proof reads it (race_terms.floating). Its "verified" is
    qualified to the integers: bounded (exit 3), the reason naming the constexpr.

    So is one DEFAULT_CONFIG gives as a float of no integer value (`"C": 1.25`, adversarial
    round 50): the kernel was read with C a param, proved for its integers, while --gluon and a
    launch of that configuration compile it with C = 1.25, where `p <= C * 2 - 1` and `p < C *
    2` differ at p = 2 (a reader waiting for a commit never made): that launch is outside the
    proof."""
    info = loaded.infos.get(rep.program.name)
    kir = getattr(info, "kir", None) or loaded.kirs.get(rep.program.name)
    if kir is None or rep.stopped is not None or rep.verdict is None or \
            rep.verdict.kind not in (PROVED, BOUNDED):
        return
    from ..frontend.constexpr_kinds import integer_arguments, integer_constexprs

    names = {p.name for p in kir.params if p.constexpr}
    config = loaded.defaults.get(rep.program.name, {})
    read = {p.name for p in rep.program.params} | \
        {p.name for p in getattr(rep.program, "bases", ())}
    # (a constexpr whose arithmetic the kernel uses where Triton takes no float, a loop bound
    # or a pointer's offset, is none either: constexpr_kinds.integer_arguments)
    integers = integer_constexprs(kir) | integer_arguments(kir)
    floats = sorted((names & read) - set(rep.specialised) - set(fixed) - integers
                    & {n for n, v in config.items() if float_of_no_integer(v)})
    if floats:
        rep.qualifications.append(Qualification(
            f"{', '.join(f'{n} = {config[n]!r}' for n in floats)}: DEFAULT_CONFIG gives a "
            f"float, with which --gluon and a launch of that configuration compile the kernel, "
            f"while the check reads integer values of it only; give it an integer value, or "
            f"check another with --param", tuple(floats), "the integers", of_bounded=True))
    if rep.verdict.kind != PROVED:
        return  # (a bounded claim names the integers it checked)
    free = sorted((names & read) - set(rep.specialised) - set(fixed) - set(config)
                  - integers)
    if free:
        rep.qualifications.append(Qualification(
            f"{', '.join(free)}: a constexpr of no value here, which the protocol reads and a "
            f"launch may give as a float, where the check reads integers only; give it a value "
            f"in DEFAULT_CONFIG or with --param, or use it where Triton takes only an integer, "
            f"a range bound or a shape", tuple(free), "the integers"))


def float_of_no_integer(value) -> bool:
    """Whether ``value`` (a DEFAULT_CONFIG constexpr) is a float that no integer equals (1.25,
    an infinity, a NaN): Python's and Triton's comparisons and arithmetic of 2.0 are those of
    2."""
    return isinstance(value, float) and not (math.isfinite(value) and value.is_integer())


def check_signed_loads(rep: KernelReport) -> None:
    """A kernel proved (or bounded) but for `while` loops that end, or comparisons and
    arithmetic deciding pipe events that keep the verifier's int32 reading, only where a value
    loaded through a pointer of no known element type is of some element types
    (frontend/load_signs.py, frontend/load_types.py: no DEFAULT_CONFIG signature types the
    pointer; Program.signed_only, of a .py or a .kir file's kernel): through a *u32 pointer
    Triton compares unsigned and the loop never ends (`k = tl.load(cnt_ptr); while k >= 0: k -=
    1`), through a *i8 one `k += 1` wraps, a float may lie between two integers. Its claim is
    qualified to the element types every note keeps: not proved (bounded, exit 3), the reason
    naming each pointer and line."""
    from ..frontend.load_types import TYPES, phrase

    loops = getattr(rep.program, "signed_only", ())
    if not loops or rep.stopped is not None or rep.verdict is None or \
            rep.verdict.kind not in (PROVED, BOUNDED):
        return
    holds = frozenset(TYPES).intersection(*(note[3] for note in loops))
    rep.qualifications.append(Qualification(
        "; ".join(note[2] for note in loops),
        tuple(dict.fromkeys(note[1] for note in loops)), phrase(holds), of_bounded=True))
