"""The lowering: a verified pipe kernel → Gluon source → TTGIR/PTX/cubin for Hopper (sm_90a).

    plan.py      shared-memory rings + mbarrier arrays from the pipes and their barrier attributes
    layouts.py   the layout assignment pass (union-find over layout variables)
    translate.py partition bodies (Triton syntax) → Gluon source, pipes.py: pipe verbs → mbarriers
    regs.py      the register rule of warp_specialize
    kir_passes.py  the lowering's kernel IR passes (materialize-barriers .. emit-gluon), registered
    emit.py      the whole Gluon module;  codegen.py: generate (passes, then emit)
    compile.py   triton.compile;  runtime.py: kernel[grid](...)
    debug.py     TLE_DEBUG_WAITS=1: bounded mbarrier waits that trap with the pipe's name
    instrument.py  probes and tests only: plan hooks and skipped fills, turned on by `with` blocks
See docs/lowering.md.
"""

from .compile import compile_kernel, gluon_source, ptxas_stats

__all__ = ["compile_kernel", "gluon_source", "ptxas_stats"]
