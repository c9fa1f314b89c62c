"""GPU-test setup. Under ``TRITON_INSTRUMENTATION_MODE=consan`` (Triton's concurrency sanitizer)
kernels need a global-scratch allocator: give Triton a torch-backed one. The lowering calls
``triton.compile`` directly (not through ``@triton.jit``), which does not pass the mode in the
compile options, so Triton would not switch on ``debug`` (ConSan's device-side assertions would be
optimised out): wrap ``triton.compile`` to add ``instrumentation_mode="consan"`` to its options."""

from __future__ import annotations

import os

CONSAN = os.environ.get("TRITON_INSTRUMENTATION_MODE", "") == "consan"


def _install_consan_hooks() -> None:
    import torch
    import triton

    def alloc(size: int, alignment: int, stream):
        return torch.empty(size, dtype=torch.int8, device="cuda")

    triton.set_allocator(alloc)
    compile_ = triton.compile
    if getattr(compile_, "_tle_consan", False):
        return

    def compile_with_consan(src, target=None, options=None, **kwargs):
        options = dict(options or {})
        options.setdefault("instrumentation_mode", "consan")
        return compile_(src, target=target, options=options, **kwargs)

    compile_with_consan._tle_consan = True
    triton.compile = compile_with_consan


if CONSAN:
    try:
        import torch

        if torch.cuda.is_available():
            _install_consan_hooks()
    except ImportError:  # pragma: no cover - no torch: the gpu tests are skipped anyway
        pass
