"""What ``tle-dump --gluon / --ttgir / --ptx`` print: the lowered kernel, compiled for sm_90a on
any machine, with the signature and constexprs of the module's ``DEFAULT_CONFIG``:

    DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "N": "i32", "BLOCK": "constexpr"},
                      "constexprs": {"BLOCK": 64}, "num_warps": 4}

(or a dict of such configs keyed by kernel name, for files with several kernels). The config is
a literal the frontend reads into the kernel IR (the Kernel's ``default_config`` attribute, see
frontend/build.py), so the kernel module is not imported and its source is not read again.

The default partition's warps are the kernel's (``@tle.jit(num_warps=...)``, 4 when not given):
they are what a launch compiles, and they set the barrier counts of the Gluon source. A
``"num_warps"`` in the config that differs is an error (CONFIG_CHECK), so that ``--gluon`` and
``--ttgir``/``--ptx`` can never print two different kernels from one file.
"""

from __future__ import annotations

import ast
from typing import Optional

from ..diagnostics import TleError
from ..frontend.source_text import read_python
from ..ir.kernel import get_attr
from ..ir.nodes import Loc


def default_config(path: str, kernel: str) -> dict:
    """The DEFAULT_CONFIG of kernel ``kernel`` of the file ``path`` (of its first kernel when
    ``kernel`` is ""), from the file's kernel IR."""
    from ..frontend import read_kir

    kirs = read_kir(path, name=kernel or None)
    if not kirs:
        raise TleError(f"{path} has no DEFAULT_CONFIG = {{'signature': {{...}}, 'constexprs': "
                       f"{{...}}}}: --ttgir/--ptx/--gluon need one to know the argument types",
                       Loc(path, 1), check="lowering")
    return kernel_config(kirs[0], path, kernel)


def kernel_config(kir, path: str, kernel: str) -> dict:
    """The DEFAULT_CONFIG the frontend recorded on a kernel IR (its ``default_config``
    attribute; the same for a kernel read from a ``.kir`` file); ``path`` names the file in
    errors, ``kernel`` picks its entry in a config keyed by kernel name."""
    from ..frontend.config_literal import decode_config, kernel_entry

    encoded = get_attr(kir, "default_config")
    if isinstance(encoded, tuple) and encoded[0] == "error":
        raise TleError("DEFAULT_CONFIG must be a literal dict (signature, constexprs, num_warps)",
                       Loc(path, encoded[1]), check="lowering")
    if encoded is None:
        raise TleError(f"{path} has no DEFAULT_CONFIG = {{'signature': {{...}}, 'constexprs': "
                       f"{{...}}}}: --ttgir/--ptx/--gluon need one to know the argument types",
                       Loc(path, 1), check="lowering")
    cfg, keyed = kernel_entry(decode_config(encoded), kernel)
    warps = cfg.get("num_warps") if isinstance(cfg, dict) else None
    if warps is not None and warps != kir.num_warps:
        raise TleError(f"DEFAULT_CONFIG gives num_warps {warps!r}, but kernel '{kir.name}' has "
                       f"num_warps={kir.num_warps} (@tle.jit, 4 when not given): the lowering "
                       f"and launches use the kernel's; give the same value or leave "
                       f"\"num_warps\" out of DEFAULT_CONFIG",
                       Loc(path, _num_warps_line(path, kernel if keyed else None)),
                       check=CONFIG_CHECK)
    return cfg


#: The check of a DEFAULT_CONFIG that contradicts its kernel (tle-dump: unusable input, exit 2).
CONFIG_CHECK = "default-config"


def _num_warps_line(path: str, kernel: Optional[str]) -> int:
    """The line of DEFAULT_CONFIG's ``"num_warps"`` (in the entry of ``kernel`` in a config keyed
    by kernel name), else of DEFAULT_CONFIG itself, else 1 (a ``.kir`` file: its config is an
    attribute of the kernel header). The source is read only for this error message."""
    try:
        tree = ast.parse(read_python(path), path)
    except (OSError, SyntaxError, ValueError):
        return 1
    for st in tree.body:
        targets = st.targets if isinstance(st, ast.Assign) else \
            [st.target] if isinstance(st, ast.AnnAssign) else []
        if not any(isinstance(t, ast.Name) and t.id == "DEFAULT_CONFIG" for t in targets):
            continue
        config = st.value
        if kernel is not None:
            config = _entry(config, kernel)
        key = _entry_key(config, "num_warps")
        return key.lineno if key is not None else st.lineno
    return 1


def _entry_key(d, key: str):
    """The key node ``key`` of the dict literal ``d`` (None when absent or not a dict)."""
    if not isinstance(d, ast.Dict):
        return None
    return next((k for k in d.keys if isinstance(k, ast.Constant) and k.value == key), None)


def _entry(d, key: str):
    """The value node of ``key`` in the dict literal ``d`` (None when absent)."""
    k = _entry_key(d, key)
    return d.values[d.keys.index(k)] if k is not None else None


def lowered(path: str, kernel: str, what: str, debug_waits=None,
            constexprs: Optional[dict] = None) -> str:
    """``what``: "gluon", "ttgir" or "ptx"; ``debug_waits``: bounded waits (lowering/debug.py);
    ``constexprs``: values replacing DEFAULT_CONFIG's constexprs of the same names."""
    from .compile import compile_kernel, debug_waits_enabled, gluon_source, kernel_info_of

    cfg = default_config(path, kernel)
    cx = dict(cfg.get("constexprs", {}))
    cx.update({n: v for n, v in (constexprs or {}).items() if n in cx})
    info = kernel_info_of((path, kernel), cx)  # specialised to cx when it must be
    debug_waits = debug_waits_enabled(debug_waits)
    from .codegen import kernel_option

    if what == "gluon" and not debug_waits and not kernel_option(info, "eager_publish"):
        # typed by DEFAULT_CONFIG's signature, as the compile types it (element types decide
        # byte-load layouts and which slot stores convert): the source --ttgir compiles
        from .descriptors import signature_for_compile

        sig = signature_for_compile(info, dict(cfg.get("signature", {})), cx)
        return gluon_source(info, cx, debug_waits=False, signature=sig or None).source
    # the kernel's own num_warps, as --gluon's source (kernel_config refuses a config that differs)
    c = compile_kernel(info, cfg.get("signature", {}), cx, debug_waits=debug_waits or False)
    if what == "gluon":  # debug waits / eager publish: the source with the barrier offsets of
        return c.tle_generated.source  # the compiled kernel
    return c.asm[what]


def lowered_texts(path: str, kernels: list[str], flags: dict[str, bool],
                  debug_waits=None, constexprs: Optional[dict] = None) -> Optional[str]:
    """``constexprs``: values (by kernel) that replace DEFAULT_CONFIG's, e.g. those tle-dump
    read the kernel specialised to, so what is lowered is what was verified."""
    parts = []
    for k in kernels:
        for what in ("gluon", "ttgir", "ptx"):
            if flags.get(what):
                parts.append(lowered(path, k, what, debug_waits, (constexprs or {}).get(k)))
    return "\n".join(parts) if parts else None


def barrier_units_of(gen) -> dict:
    """label -> {"arrive_unit", "init_count"} of every mbarrier of a lowered kernel (a
    codegen.Generated), for ``tle-dump --format json``: the lowering decides the arrive unit
    (cp.async gathers arrive per thread), so the report reads the kernel tle-dump translated."""
    out = {}
    for pp in gen.plans.values():
        for arr in pp.arrays:
            for b, ic in zip(arr.barriers, arr.init_counts or arr.counts):
                out[b.label] = {"arrive_unit": arr.mode, "init_count": ic}
        if pp.named:  # a hardware named barrier: its id, and the threads bar.sync counts
            out[f"{pp.name}.named[g0][0]"] = {"arrive_unit": "named", "init_count": pp.named[1],
                                              "bar_id": pp.named[0]}
    return out
