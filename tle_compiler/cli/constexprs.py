"""The constexpr values a kernel is lowered with by tle-dump (cli/dump.py's --gluon/--ttgir/--ptx
and cli/print_ir.py's -p with a lowering pass), in a module of its own so that both import it
without importing each other."""

from __future__ import annotations


def lowering_constexprs(loaded, kernel: str, fixed: dict[str, int]) -> dict:
    """The constexpr values that replace the kernel's DEFAULT_CONFIG ones when it is lowered
    (--gluon/--ttgir/--ptx, and -p with a lowering pass: cli/print_ir.py): those it was read
    specialised to and any --param naming one of its constexprs (also one that is a param as
    well, e.g. TOPK of NK = TOPK // BK), so that what is lowered is what was verified. A constexpr
    the DEFAULT_CONFIG gives as True/False is lowered as one."""
    names = loaded.constexprs.get(kernel, ())
    values = {**loaded.specialised_of(kernel), **{n: v for n, v in fixed.items() if n in names}}
    return typed_as(loaded.defaults.get(kernel, {}), values)


def typed_as(config: dict, values: dict) -> dict:
    """``values`` with each constexpr that ``config`` (DEFAULT_CONFIG's constexprs) gives as
    True/False made a bool (a --param gives 0/1)."""
    return {n: bool(v) if isinstance(config.get(n), bool) else v for n, v in values.items()}


def over_config(config: dict, values: dict) -> dict:
    """DEFAULT_CONFIG's constexprs ``config`` with ``values`` (typed as the config's) in place of
    theirs; a value the config does not name is dropped, unless there is no config (then the
    values alone: the other constexprs are lowered generically)."""
    return {**config, **{n: v for n, v in typed_as(config, values).items()
                         if n in config or not config}}


def translation_types(loaded, kernel: str, fixed: dict[str, int]) -> tuple[dict, dict, dict]:
    """What ``kernel`` is translated with, as --gluon lowers it (and -p with a lowering pass:
    cli/print_ir.py): its constexprs (DEFAULT_CONFIG's, with those the kernel was read
    specialised to and the --param values in their place), DEFAULT_CONFIG's signature, and
    that signature as the translation takes it."""
    config = loaded.defaults.get(kernel, {})
    cx = over_config(config, lowering_constexprs(loaded, kernel, fixed))
    sig = dict(loaded.signatures.get(kernel) or {})
    typed = sig
    if any(n in config and config[n] != v for n, v in cx.items()) and \
            any(str(t).startswith("tensordesc") for t in sig.values()):
        # another configuration than DEFAULT_CONFIG's: the descriptor boxes it gives are its
        # own shapes' (kernel_checks.check_launch_signature), a launch's are others
        typed = {}
    return cx, sig, typed
