"""``tle-dump -p PIPELINE --print-ir PATH``: run kernel IR passes and print the IR after them.

PATH is a ``.py`` file with ``@tle.jit`` kernels (read by the frontend; a kernel whose indices are
affine only with its constexprs as numbers is read with its DEFAULT_CONFIG's constexprs and the
``--param`` values) or a ``.kir`` file in the KIR text form (ir/kernel_text.py). Every pass of
the pipeline is a registered kernel IR pass (passes/manager.py; the lowering's registered by
lowering/kir_passes.py); a pass's prerequisites run first.
The output is the KIR text form with the passes' attributes, or the Gluon module when the
pipeline ends in emit-gluon (assign-layouts, schedule-wgmma and emit-gluon lower for the file's
DEFAULT_CONFIG constexprs with the values the kernel was read specialised to and the ``--param``
values of constexprs in their place, as ``--gluon`` does, so that both print the same module; a
``.kir`` file's are those of the ``default_config`` its kernel carries, and its protocol view is
read specialised to them as a ``.py`` kernel's is). A DEFAULT_CONFIG whose num_warps differs
from the kernel's is unusable input, as with ``--gluon`` (lowering/dumping.py).

Exit status as tle-dump's: 1 when a pass reports a fault or the lowering refuses the kernel,
otherwise the verdict's (0 proved, 3 bounded or unknown) when the pipeline gives one, else 0.
A pipeline ending in emit-gluon with ``--param`` values of params or a ``--bound`` lowers only
what ``--gluon`` lowers (the Gluon runs for every value: verified again with neither), says
that a kernel is not proved on one ``tle-dump: warning:`` line, and prints the Gluon under
``-q`` too, as ``--gluon`` does.
"""

from __future__ import annotations

import sys
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Optional

from ..diagnostics import TleError, TleVerificationWarning
from ..ir.kernel_text import print_kernel
from ..lowering.kir_passes import KirModule, run_passes
from ..passes.fixed_params import fixable
from ..passes.verdict import EXIT_CODES

#: The passes that lower for the constexpr values of the file's DEFAULT_CONFIG and --param
#: (shapes, layouts; materialize-barriers: the expect-tx bytes of TMA copies into fields shaped
#: by constexprs).
SPECIALISED_PASSES = ("materialize-barriers", "assign-layouts", "schedule-wgmma", "emit-gluon")
#: The kernel attributes that state a verdict (passes/kir_protocol.verdict_attrs).
VERDICT_ATTRS = ("verdict", "errors")


def _modules(path: Path, args, fixed: dict, names: list[str], load, unusable, check
              ) -> list[tuple[KirModule, dict]]:
    """One module per selected kernel of the file, ready for the pipeline. ``check(fixed,
    programs, specialised, constexprs)``: refuses (unusable input) a --param that names neither
    a param of a selected kernel, nor a base param of its derived ones, nor a constexpr it is
    read specialised to or lowered with, as tle-dump's other modes do. Each module comes with
    the constexprs its protocol view was read specialised to (which its verdict names)."""
    if path.suffix == ".kir":
        from ..ir.kernel_text import parse_kernel_file

        try:
            kernels = parse_kernel_file(str(path))
        except TleError as e:  # not the text form: unusable input, as a .pipe syntax error
            raise unusable(str(e)) from None
        kernels = [k for k in kernels if not args.kernel or k.name in args.kernel]
        modules = [_kir_module(path, k, args, fixed, names, unusable) for k in kernels]
        # a constexpr given is one the view is specialised to or the lowering lowers with
        given = {n: v for n, v in fixed.items()
                 if any(p.constexpr and p.name == n for k in kernels for p in k.params)}
        check(fixed, [m.program for m, _ in modules],
              {**given, **{n: v for m, _ in modules for n, v in m.constexprs.items()
                           if n in fixed}},
              {k.name: tuple(p.name for p in k.params if p.constexpr) for k in kernels},
              {k.name: _kir_config(path, k) for k in kernels})
        return modules
    from ..lowering.codegen import kernel_ir
    from ..lowering.compile import kernel_info_of
    from .constexprs import translation_types

    loaded = load(path, fixed, args.kernel)
    check(fixed, [prog for prog in loaded.module.kernels
                  if not args.kernel or prog.name in args.kernel], loaded.specialised,
          loaded.constexprs, loaded.defaults)
    out = []
    for prog in loaded.module.kernels:
        if args.kernel and prog.name not in args.kernel:
            continue
        constexprs = dict(loaded.per_kernel.get(prog.name, loaded.specialised))
        typed = {}
        if any(n in names for n in SPECIALISED_PASSES):
            # as --gluon (lowering/dumping.py lowered): DEFAULT_CONFIG's values, replaced by those
            # the kernel was verified with; no DEFAULT_CONFIG (loaded.defaults has none): the
            # values given only, the others lowered generically (constexprs must not be); and
            # the argument types --gluon's translation takes
            constexprs, sig, typed = translation_types(loaded, prog.name, fixed)
        info = kernel_info_of((str(path), prog.name), constexprs)
        if any(n in names for n in SPECIALISED_PASSES) and sig:
            # the argument types as tle-dump's verdict checks them
            # (kernel_checks.check_launch_signature): an integer param typed narrow, unsigned or i64
            # is computed in an arithmetic the verifier did not check, so the kernel is refused
            # rather than lowered as verified
            from ..lowering.signature_checks import check_signature

            check_signature(info, sig)
        module = KirModule(kernel_ir(info), info=info, constexprs=constexprs,
                           program=info.program, bound=args.bound,
                           params={n: v for n, v in fixed.items() if n in fixable(info.program)})
        if typed:
            module.lowering = _typed(info, typed, constexprs)
        out.append((module, loaded.specialised_of(prog.name)))
    return out


def _typed(info, sig: dict, constexprs: dict) -> dict:
    """The lowering options of a .py kernel's lowering passes: the argument types of its
    DEFAULT_CONFIG signature ``sig`` as the translation takes it (constexprs.translation_types),
    as --gluon types its Gluon (lowering/dumping.lowered: element types decide which slot stores
    convert and the layouts of byte loads), so that -p emit-gluon prints the module --gluon
    prints; untyped it converted every value stored into a slot (``.to(gl.float32)`` of an fp32
    load). A descriptor whose box, element type or offsets are not those of the slot its TMA
    copies fill (check "signature") raises, as tle-dump's verdict rejects it
    (kernel_checks.check_launch_signature): its copy would land other bytes than the commit's
    expect-tx counts, so no Gluon is printed and the kernel is not verified. Untyped where a shape
    is left to a launch's constexprs (the lowering's to check)."""
    from ..lowering.descriptors import signature_for_compile

    try:
        types = signature_for_compile(info, sig, constexprs)
    except TleError as e:
        if e.check == "signature":
            raise
        return {}
    return {"arg_types": types} if types else {}


def _kir_config(path: Path, k) -> dict:
    """The DEFAULT_CONFIG constexprs a kernel read from a ``.kir`` file carries ({} without)."""
    from .config import kernel_config

    try:
        return dict(kernel_config(k, str(path), k.name).get("constexprs", {}))
    except TleError:
        return {}


def _kir_module(path: Path, k, args, fixed: dict, names: list[str], unusable
                ) -> tuple[KirModule, dict]:
    """The module of a kernel read from a ``.kir`` file, as a ``.py`` kernel's: its protocol view
    from the KIR alone, specialised (with a note on stderr) to the ``--param`` values and the
    DEFAULT_CONFIG constexprs the KIR carries when its indices are affine only with them; the
    lowering passes lower for those constexprs, with the values read specialised to and the
    ``--param`` values of its constexprs in their place."""
    from ..lowering.dumping import CONFIG_CHECK
    from .config import kernel_config
    from .constexprs import over_config

    try:
        whole = kernel_config(k, str(path), k.name)
        config = dict(whole.get("constexprs", {}))
    except TleError as e:  # no DEFAULT_CONFIG: lowered generically (constexprs must not be)
        if e.check == CONFIG_CHECK:  # num_warps contradicting the kernel's: unusable input
            raise unusable(str(e)) from None
        whole, config = {}, {}
    # a verdict is this run's: one the file carries (written by an earlier run, or by hand) is
    # dropped, so that a pipeline that does not verify prints none, and one that does, only its own
    k = replace(k, attrs=tuple((key, v) for key, v in k.attrs if key not in VERDICT_ATTRS))
    program, specialised = kir_protocol_view(path, k, {**config, **fixed})
    constexprs = specialised
    if any(n in names for n in SPECIALISED_PASSES):
        constexprs = over_config(config, {**constexprs, **{p.name: fixed[p.name] for p in k.params
                                                           if p.constexpr and p.name in fixed}})
        _check_descriptors(k, program, whole, config, constexprs)
    return KirModule(k, constexprs=constexprs, program=program, bound=args.bound,
                     params={n: v for n, v in fixed.items() if n in fixable(program)}), \
        dict(specialised)


def _check_descriptors(k, program, whole: dict, config: dict, constexprs: dict) -> None:
    """A ``.kir`` kernel lowered by the pipeline, its DEFAULT_CONFIG's tensor descriptors checked
    against the slots their TMA copies fill, as tle-dump's verdict checks them
    (translation_check.translation_of: lowering/descriptors.signature_for_compile): a box, element
    type or offsets that are not the slot's would land other bytes than the commit's expect-tx
    counts, so the kernel is refused (check "signature") rather than lowered with a wrong expect-tx.
    Unchecked for another configuration than DEFAULT_CONFIG's (its descriptors are a launch's)."""
    sig = whole.get("signature") if isinstance(whole, dict) else None
    if not isinstance(sig, dict) or \
            not any(str(t).startswith("tensordesc") for t in sig.values()) or \
            any(n in config and config[n] != v for n, v in constexprs.items()):
        return
    from ..lowering import walks
    from ..lowering.descriptors import signature_for_compile

    try:
        signature_for_compile(walks.kernel_facts(k, program), sig, constexprs)
    except TleError as e:
        if e.check == "signature":
            raise


def kir_protocol_view(path: Path, k, values: dict, given: Optional[dict] = None
                      ) -> tuple[object, dict]:
    """The protocol view of a kernel read from a ``.kir`` file and the constexprs it was read
    specialised to: to ``given`` (constexpr values a --param names) when there are any;
    otherwise generic, or, when its indices are affine only with its integer constexprs as
    numbers (a SPECIALIZABLE reading error), specialised to those of ``values`` (the
    DEFAULT_CONFIG's and --param's). A note on stderr names the values a view is specialised
    to, as for a .py file."""
    from ..frontend import SPECIALIZABLE
    from ..ir.kernel_text import check_event_places
    from ..passes.kir_module import protocol_view

    check_event_places(k)  # the events the protocol view reads are those the lowering emits
    check_barrier_memory(k)

    def note(bind: dict, why: str) -> None:
        print(f"tle-dump: {path}: read specialised to "
              f"{', '.join(f'{n}={v}' for n, v in sorted(bind.items()))} ({why}); the verdict "
              f"holds for these values only", file=sys.stderr)

    if given:
        program = protocol_view(k, bind=given)
        note(given, "--param")
        return program, dict(given)
    try:
        return protocol_view(k), {}
    except TleError as e:
        bind = {p.name: values[p.name] for p in k.params if p.constexpr and p.name in values
                and isinstance(values[p.name], int) and not isinstance(values[p.name], bool)}
        if e.check not in SPECIALIZABLE or not bind:
            raise
        program = protocol_view(k, bind=bind)
        note(bind, f"{e.message.split(':')[0]} otherwise")
        return program, bind


def check_barrier_memory(k) -> None:
    """The mbarriers of all of a kernel's pipes fit in shared memory: 16 bytes a stage (a full
    and an empty barrier), 8 for a one-shot pipe (a full one), none for a named-barrier pipe.
    verify-protocol refuses one pipe whose barriers alone do not fit (bad-capacity); a kernel
    file can declare many pipes that each fit, and checking a protocol takes time that grows with
    every pipe's capacity (fifty unused pipes of 14,000 stages took three minutes). A TleError
    (bad-capacity) at the pipe whose barriers no longer fit; none while some pipe does not fit
    alone, which verify-protocol reports."""
    from ..ir.smem import pipes_past_smem
    from ..passes.verify_protocol import MAX_CAPACITY

    if any(p.capacity > MAX_CAPACITY for p in k.pipes):
        return
    past = pipes_past_smem(k.name, k.pipes)
    if past is not None:
        raise TleError(past[1], past[0].loc, check="bad-capacity")


def _lowered_for_every_value(m: KirModule, names: list[str]) -> tuple[int, list[str]]:
    """A pipeline that emits Gluon with --param values of the kernel's params, or with --bound:
    the Gluon module takes the params as runtime arguments and runs for every value of them, so,
    as ``--gluon`` does (its lowering verifies the kernel over every value, with no bound), a
    protocol rejected for any value is not lowered (exit 1, the lowering's error), and one not
    proved for every value is lowered with the lowering's warning (exit 3): the lowering's own
    rule, lowering/walks.check_lowerable, on the kernel verified again. The status and the
    lines for stderr; (0, []) when nothing is emitted, or no param is fixed and no bound given
    (the pipeline's own verification is then that one)."""
    if "emit-gluon" not in names or (not m.params and m.bound is None):
        return 0, []
    from ..lowering import walks

    try:
        whole = run_passes(KirModule(m.kernel, info=m.info, constexprs=dict(m.constexprs),
                                     program=m.program, budget=m.budget),
                           "verify-protocol,verify-deadlock")
        unproved = walks.check_lowerable(whole, m.kernel.name)
    except TleError as e:
        return 1, [str(e.to_diagnostic())]
    if unproved is not None:
        return 3, [warning_line(unproved)]
    return 0, []


def warning_line(unproved: TleVerificationWarning) -> str:
    """The lowering's TleVerificationWarning (lowering/walks.py) as a tle-dump line."""
    return f"tle-dump: warning: {unproved}"


def _run_passes_warning(m: KirModule, passes: str, warned: bool) -> tuple[KirModule, list[str]]:
    """``run_passes``, the lowering's TleVerificationWarning (emit-gluon under a verdict that is
    not a proof: ``--bound``, a bounded kernel) turned into a ``tle-dump: warning:`` line (none
    when ``warned``: the kernel's warning is already out), other warnings shown as Python
    shows them."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TleVerificationWarning)
        m = run_passes(m, passes)
    lines = []
    for w in caught:
        if not issubclass(w.category, TleVerificationWarning):
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
        elif not warned:
            lines.append(warning_line(w.message))
            warned = True
    return m, lines


def _narrowed_verdict(m: KirModule, specialised: dict):
    """The module's kernel with its ``verdict`` attribute naming the constexprs the protocol view
    was read specialised to, as the summary line does ("every value of ROUNDS, with TOPK = 2048
    (read specialised)"): verify-deadlock writes the verdict of the view it checked, and a kernel
    printed generic in TOPK must not carry a claim for every TOPK."""
    from ..ir.attrs import ProtocolVerdict
    from .report import KernelReport

    k = m.kernel
    if not specialised or m.ctx is None or not any(key == "verdict" for key, _ in k.attrs):
        return k
    v = KernelReport(m.ctx.program, m.ctx, specialised=specialised).verdict
    if v is None:
        return k
    pv = ProtocolVerdict(v.kind, v.scope, tuple(sorted(v.checked.items())), v.argument, v.reason,
                         v.errors)
    return replace(k, attrs=tuple((key, pv if key == "verdict" else a) for key, a in k.attrs))


def _summary(m: KirModule, specialised: dict) -> str:
    """The kernel's verdict line, as tle-dump's report prints it on stderr (cli/report.py): the
    verdict the pipeline gives, or what ran when it gives none; so that the exit status is
    never the only thing that says what was proved (the IR under -q is not printed)."""
    from .report import KernelReport

    rep = KernelReport(m.ctx.program, m.ctx, specialised=specialised) if m.ctx else None
    if rep is not None and (rep.verdict is not None or "verify-deadlock" in m.passes_run):
        return rep.summary()
    # no claim: name every pass that ran, the lowering's too (the report names protocol passes)
    return (f"not verified (ran {', '.join(m.passes_run) or 'no passes'}; no claim is made: "
            f"verify-protocol and verify-deadlock give the verdict)")


def run_print_ir(args, path: Path, fixed: dict, names: list[str], load, unusable, check,
                 beside: Optional[dict] = None) -> tuple[int, str]:
    """Run the pipeline on every kernel of ``path``: the exit status and the IR (or Gluon) after
    it; diagnostics go to stderr. ``check``: as :func:`_modules`'s. ``beside``: each kernel's
    report (cli/report.KernelReport) of tle-dump's run of the pipeline's protocol passes without
    --print-ir, whose checks beside the passes (memory races, the signature, the translation)
    the pipeline does not make: a kernel they reject and the pipeline does not is printed with
    their errors and summary and no IR (exit 1), and one they leave not proved that the
    pipeline proves gets a warning (exit 3)."""
    if path.suffix not in (".py", ".kir"):
        raise unusable(f"{path}: error: printing the kernel IR needs a .py or .kir file (a .pipe "
                       f"file holds only the protocol)")
    try:
        modules = _modules(path, args, fixed, names, load, unusable, check)
    except TleError as e:
        print(str(e.to_diagnostic()), file=sys.stderr)
        return 1, ""
    missing = [n for n in dict.fromkeys(args.kernel or ())
               if n not in {m.kernel.name for m, _ in modules}]
    if not modules or missing:
        # a kernel asked for by name and not there must not pass with the others; the error
        # names the kernels there are (read again: this is the error path)
        if path.suffix == ".kir":
            from ..ir.kernel_text import parse_kernel_file

            all_names = [k.name for k in parse_kernel_file(str(path))]
        else:
            all_names = [k.name for k in load(path, fixed).module.kernels]
        raise unusable(f"{path}: error: no kernel"
                       + (f" named {', '.join(missing)}" if args.kernel else "")
                       + (f" (kernels: {', '.join(all_names)})" if args.kernel and all_names
                          else ""))
    codes, texts = [], []
    for m, specialised in modules:
        whole, lines = _lowered_for_every_value(m, names)
        for line in lines:
            print(line, file=sys.stderr)
        if whole == 1:
            codes.append(1)
            continue
        try:
            m, pass_warnings = _run_passes_warning(m, args.passes, bool(lines))
        except TleError as e:
            print(str(e.to_diagnostic()), file=sys.stderr)
            codes.append(1)
            continue
        ctx = m.ctx
        verdict = ctx.verdict() if ctx is not None else None
        own = (1 if ctx is not None and ctx.errors else
               max(whole, EXIT_CODES[verdict.kind] if verdict is not None else 0))
        other = (beside or {}).get(m.kernel.name)
        if other is not None and own != 1 and other.exit_code == 1:
            # rejected by a check beside the passes: its errors and verdict, and no IR
            for d in other.diagnostics:
                print(str(d), file=sys.stderr)
            print(f"tle-dump: {m.kernel.name}: {other.summary()}", file=sys.stderr)
            codes.append(1)
            continue
        for d in (ctx.diagnostics if ctx is not None else ()):
            print(str(d), file=sys.stderr)
        for line in pass_warnings:
            print(line, file=sys.stderr)
        print(f"tle-dump: {m.kernel.name}: {_summary(m, specialised)}", file=sys.stderr)
        if other is not None and own == 0 and other.exit_code == 3:
            # not proved for a reason the pipeline's passes do not see (a value loaded through a
            # pointer of no known element type): not proved here either
            what = "Gluon" if m.gluon is not None and m.passes_run[-1] == "emit-gluon" else \
                "kernel IR"
            print(f"tle-dump: warning: {path}: not proved: with the checks tle-dump makes "
                  f"beside the pipeline's passes, kernel '{m.kernel.name}' is "
                  f"{other.summary()}; the {what} printed is not proved", file=sys.stderr)
            own = 3
        codes.append(own)
        if m.gluon is not None and m.passes_run[-1] == "emit-gluon":
            texts.append(m.gluon)
        else:
            texts.append(print_kernel(_narrowed_verdict(m, specialised),
                                      locations=not args.no_locations))
    return next((c for c in (1, 3) if c in codes), 0), "\n".join(texts)
