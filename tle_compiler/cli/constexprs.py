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
    config = loaded.defaults.get(kernel, {})
    return {n: bool(v) if isinstance(config.get(n), bool) else v for n, v in values.items()}
