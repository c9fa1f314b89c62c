"""The lowering: a verified pipe kernel → Gluon source → TTGIR/PTX/cubin for Hopper (sm_90a).

    plan.py      shared-memory rings + mbarrier arrays from the pipes and their barrier attributes
    layouts.py   the layout assignment pass (union-find over layout variables)
    translate.py partition bodies (Triton syntax) → Gluon source, pipes.py: pipe verbs → mbarriers
    kir_passes.py  the lowering's kernel IR passes (materialize-barriers .. emit-gluon), registered
    emit.py      the whole Gluon module;  codegen.py: generate (passes, then emit)
    compile.py   triton.compile;  runtime.py: kernel[grid](...)
    debug.py     TLE_DEBUG_WAITS=1: bounded mbarrier waits that trap with the pipe's name
    instrument.py  probes and tests only: plan hooks and skipped fills, turned on by `with` blocks
See docs/lowering.md.
"""



def __getattr__(name):
    # the entry points load the whole lowering on first use, so importing one of its small
    # modules (dumping.py's DEFAULT_CONFIG lookup, say) does not load all of it
    if name in __all__:
        from . import compile as _compile

        return getattr(_compile, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["compile_kernel", "gluon_source", "ptxas_stats"]
