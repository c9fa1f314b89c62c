"""Compile a ``@tle.jit`` kernel for Hopper through Gluon: generate the Gluon module
(:mod:`.codegen`), write it to a cache file and import it (Gluon's JIT reads its functions' source
with ``inspect``, so the module must live in a real file), then ``triton.compile`` a
``GluonASTSource`` for ``GPUTarget("cuda", 90, 32)`` — which works on a machine without a GPU and
gives ``asm["ttgir"]``, ``asm["ptx"]`` and a cubin.

Pointer arguments carry ``tt.divisibility = 16`` (docs/lowering.md: without alignment hints cp.async
legalization fails on the CPU, and the launcher checks the same alignment at run time).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Optional

from ..diagnostics import TleError, TleLoweringWarning
from .codegen import Generated, generate
from .descriptors import signature_for_compile
from .signature_checks import (check_i64_args, check_integer_args, check_scalar_args,  # noqa: F401
                               check_signature, protocol_args)

HOPPER = ("cuda", 90, 32)


def cache_dir() -> Path:
    d = Path(os.environ.get("TLE_CACHE_DIR", Path(tempfile.gettempdir()) / "tle_compiler_gluon"))
    d.mkdir(parents=True, exist_ok=True)
    return d


def debug_waits_enabled(debug_waits=None):
    """The debug-waits bound of a call (a :class:`.debug.Bound`, falsy when off): ``debug_waits``
    (bool, seconds, "500ms", "1000000polls") or else ``$TLE_DEBUG_WAITS`` (lowering/debug.py)."""
    from .debug import bound_from

    return bound_from(debug_waits)


def load_module(gen: Generated):
    """Write the generated source to the cache and import it; returns the module."""
    h = hashlib.sha256(gen.source.encode()).hexdigest()[:16]
    path = cache_dir() / f"tle_{gen.kernel}_{h}.py"
    if not path.exists():
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(gen.source)
        tmp.replace(path)
    name = f"tle_gluon_{gen.kernel}_{h}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def kernel_info_of(kernel, constexprs: Optional[dict] = None):
    """A TleKernel, a KernelInfo, or a (path, name) pair → KernelInfo. A kernel whose pipe indices
    (loop bounds, conditions) are affine only once its integer constexprs are numbers (e.g.
    ``it * NP + p`` with ``NP = TOPK // 128``) is read specialised to ``constexprs``: verified and
    lowered for those values. So is a kernel whose generic reading the protocol passes do not
    prove at those values while its specialised reading is proved, or at least not rejected
    (:func:`verified_reading`): the reading ``tle-dump --param`` verifies."""
    from ..frontend import SPECIALIZABLE, KernelInfo, read_kernels
    from ..frontend.budgets import with_budgets

    if isinstance(kernel, KernelInfo):
        return kernel

    def read(bind=None):
        if hasattr(kernel, "kernel_info"):
            return kernel.kernel_info(bind=bind)
        if isinstance(kernel, tuple):
            path, name = kernel
            infos = read_kernels(str(path), name=name, bind=bind)
            if not infos:
                raise TleError(f"{path}: no kernel named {name}", None, check="lowering")
            return infos[0]
        raise TypeError(f"compile_kernel: expected a @tle.jit kernel, got {type(kernel).__name__}")

    numbers = {k: v for k, v in (constexprs or {}).items() if isinstance(v, int)}  # bools too
    bind = {k: v for k, v in numbers.items() if not isinstance(v, bool)}
    # with the bools as the integers Triton reads them as, where the kernel needs them bound
    # (`if FLAG: K = N` then a loop to K): a launch with FLAG=True is read and verified as
    # `tle-dump --param FLAG=True` reads it, not refused
    with_bools = {k: int(v) for k, v in numbers.items()}
    try:
        info = read()
    except TleError as e:
        if e.check not in SPECIALIZABLE or not with_bools:
            raise
        info = _read_specialised(read, bind, with_bools)
    else:
        info = verified_reading(info, read, with_bools, constexprs)
    # a register budget written as an expression of constexprs (`224 + 8 * WIDE`, or of a bool
    # one: `8 * (1 - BALANCE)`, Triton's constexpr arithmetic) evaluated with their values, in
    # the reading verified (tle-dump lowers the same)
    return with_budgets(info, numbers)


def _read_specialised(read, bind: dict, with_bools: dict):
    """The kernel read with its integer constexprs bound (``bind``, the bools left free, so that
    the Gluon keeps them as bools), or, where it still needs values bound and a bool is given,
    with the bools bound as well (``with_bools``)."""
    from ..frontend import SPECIALIZABLE

    if bind:
        try:
            return read(bind)
        except TleError as e:
            if e.check not in SPECIALIZABLE or with_bools == bind:
                raise
    return read(with_bools)


#: the protocol verdicts from worst to best (the lowering refuses a rejected kernel, lowers one
#: not proved for every value of its params with a warning, and a proved one without)
_VERDICT_RANK = {"rejected": 0, "unknown": 1, "bounded": 1, None: 1, "proved": 2}


def _verdict_at(info, constexprs: dict) -> Optional[str]:
    """The kind of the protocol verdict the lowering gives ``info`` compiled with ``constexprs``
    (its passes, at the integer constexprs that are params: codegen.lowered_module):
    "rejected" when it finds an error."""
    from .codegen import lowered_module

    try:
        module = lowered_module(info, constexprs)
    except TleError:
        return "rejected"
    ctx = module.protocol()
    if ctx.errors:
        return "rejected"
    verdict = ctx.verdict()
    return verdict.kind if verdict is not None else None


def verified_reading(info, read, bind: dict, constexprs: Optional[dict]):
    """The reading of a kernel the lowering lowers for the integer constexprs ``bind``: ``info``,
    its generic reading, unless a constexpr given is not a param of its protocol (so the
    generic reading cannot be checked at its value: `if C % 4 == 1: K = N else: K = N + 1` in the
    kernel body leaves K a param of its own), the generic reading is not proved at these values
    and the reading specialised to them (``read(bind)``, the one ``tle-dump --param`` verifies)
    gets a better verdict or is rejected, or the generic one is rejected (nothing is lowered,
    and the errors are then the specialised reading's, as tle-dump --param reports them). Then the specialised
    reading is lowered, for these values only: a launch or compile with other values reads the
    kernel again (the runtime keys its compiled kernels by every constexpr). The generic reading
    stays the one lowered whenever it is proved, so that the Gluon of a kernel lowered for any
    value keeps its constexpr expressions."""
    from ..passes.fixed_params import fixable

    program = getattr(info, "program", None)
    if not bind or program is None:
        return info
    names = set(fixable(program))
    if not any(n in info.constexprs and n not in names for n in bind):
        return info
    generic = _verdict_at(info, dict(constexprs or {}))
    if generic == "proved":
        return info
    try:
        specialised = read(bind)
    except TleError:
        return info
    if generic == "rejected":  # nothing is lowered: the errors are those tle-dump --param gives
        return specialised
    at_values = _verdict_at(specialised, dict(constexprs or {}))
    if at_values == "rejected" or _VERDICT_RANK.get(at_values, 1) > _VERDICT_RANK.get(generic, 1):
        # a fault of the reading at these values is a fault of every launch with them, however
        # the generic reading's verdict reads (`unknown` where the fault found there is at a
        # value of a param the kernel computes, which it cannot tie to the constexpr's)
        return specialised
    return info


def gluon_source(kernel, constexprs: Optional[dict] = None, debug_waits: Optional[bool] = None,
                 signature: Optional[dict] = None) -> Generated:
    """The Gluon module of ``kernel``. ``signature`` (argument -> Triton type, as compile_kernel
    takes it), when given, types the arguments as a compile with it does: the element types it
    gives decide 2-D byte-load layouts and which slot stores need no conversion, so the source is
    then the one compile_kernel compiles."""
    info = kernel_info_of(kernel, constexprs)
    return generate(info, dict(constexprs or {}), debug_waits_enabled(debug_waits),
                    arg_types=signature)


def compile_options(info) -> dict:
    """Triton options of a kernel: its default partition's warps and, when ``@tle.jit(maxnreg=R)``
    asks for it, the per-thread register cap that lets several CTAs share an SM."""
    from ..language.registers import maxnreg_of

    options = {"num_warps": info.num_warps}
    cap = maxnreg_of(info)
    if cap is not None:
        options["maxnreg"] = cap
    return options


# Triton's MLIR passes recurse over the IR; a large warp-specialized kernel (the scheduled seesaw
# decode: three partitions with nested ifs in pipelined loops) overflows the default 8 MiB main
# thread stack inside gluon_to_ttgir's canonicalizer and segfaults. Compiling on a thread with a
# larger stack (reserved address space, touched only as deep as the recursion goes) avoids it.
COMPILE_STACK_BYTES = 512 << 20


def on_big_stack(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` on a thread with a COMPILE_STACK_BYTES stack; its result, or its
    exception re-raised here."""
    import threading

    out: dict = {}

    def run():
        try:
            out["value"] = fn(*args, **kwargs)
        except BaseException as e:  # re-raised in the caller's thread
            out["error"] = e

    old = threading.stack_size()
    threading.stack_size(COMPILE_STACK_BYTES)
    try:
        t = threading.Thread(target=run, name="tle-compile")
        t.start()
    finally:
        threading.stack_size(old)
    t.join()
    if "error" in out:
        raise out["error"]
    return out["value"]


def _canonicalize_before_llir(backend, stages, options, language, capability):
    """A stages hook (``knobs.runtime.add_stages_inspection_hook``): MLIR's canonicalizer on the
    TTGIR before ``make_llir``. Gluon's own canonicalizer keeps an ``scf.if`` whose condition
    folded to a constant (``if M * 0 < 0:``, ``if tl.cdiv(4, -3) < 0:``; plain Triton's
    make_ttir folds such an ``if`` away), and Triton's conversion to LLVM then fails on the
    unreachable branch (an LLVM assertion, ``SmallVector::operator[]``, and "PassManager::run
    failed", reported at the kernel's first line) although the kernel is valid Triton."""
    from triton._C.libtriton import ir, passes

    make_llir = stages["llir"]

    def canonicalized_llir(src, metadata):
        pm = ir.pass_manager(src.context)
        pm.enable_debug()
        passes.common.add_canonicalizer(pm)
        pm.run(src, "tle_canonicalize")
        return make_llir(src, metadata)

    stages["llir"] = canonicalized_llir


def compile_folding_dead_branches(compile_once):
    """``compile_once()``; when that fails in Triton's backend (not in its code generator, whose
    CompilationError is the kernel's own), once more with :func:`_canonicalize_before_llir`, and
    the first error when that fails too. A kernel that compiles as it is compiles unchanged."""
    from triton import knobs

    try:
        return compile_once()
    except Exception as first:
        e, seen = first, set()
        while e is not None and id(e) not in seen:
            seen.add(id(e))
            if type(e).__name__ == "CompilationError":
                raise first
            e = e.__cause__ or e.__context__
        old = knobs.runtime.add_stages_inspection_hook
        knobs.runtime.add_stages_inspection_hook = _canonicalize_before_llir
        compiled = None
        try:
            compiled = compile_once()
        except Exception:
            pass  # the first error is the one to report (its chain kept)
        finally:
            knobs.runtime.add_stages_inspection_hook = old
        if compiled is None:
            raise first
        return compiled


def with_default_warps(info, num_warps: int):
    """``info`` with its default partition run on ``num_warps`` warps (a launch's or a compile's
    ``num_warps=`` other than the kernel's @tle.jit one), in the KernelInfo's partitions and in
    the kernel IR it carries (``info.kir``) alike. The lowering reads warps from both: layouts,
    arrive units and init counts from the KernelInfo, and materialize-barriers the thread count of
    a ``barrier="named"`` pipe's ``bar.arrive`` / ``bar.sync`` from the kernel IR's partitions
    (kir_passes.named_barrier_allocs). With the KernelInfo alone replaced, a named pipe with the
    default partition at one end counted the @tle.jit warps: ``bar.sync 15, 192`` for 8 + 2 warps
    (320 threads), which completes the barrier before the last warps arrive (a race) and
    desynchronises its later phases.

    The rules the frontend checked at the @tle.jit warps are checked again at ``num_warps``:
    Triton compiles a warp-specialized kernel only for a power of two that is a multiple of 4
    (the default partition is whole warp groups), a ``tl.dot`` in the default partition needs
    whole warp groups, and the workers' register requests must still leave the default partition
    setmaxnreg's minimum. A count that breaks one is refused here, naming it, instead of failing
    in Triton's compile with its own message."""
    from dataclasses import replace

    from ..frontend.partition_rules import check_register_budgets, check_wgmma_warps

    if not isinstance(num_warps, int) or num_warps < 4 or num_warps & (num_warps - 1):
        raise TleError(f"num_warps={num_warps!r}: a warp-specialized kernel runs its default "
                       f"partition on whole warp groups, and Triton compiles it for a power of "
                       f"two that is a multiple of 4 (4, 8, 16)", info.program.loc,
                       check="bad-warps")
    parts = tuple(replace(p, warps=num_warps) if p.default else p for p in info.partitions)
    from ..passes.verify_protocol import MAX_CTA_WARPS

    if sum(p.warps for p in parts) > MAX_CTA_WARPS:
        raise TleError(f"num_warps={num_warps}: with the workers' warps ("
                       + ", ".join(f"{p.name}: {p.warps}" for p in parts if not p.default)
                       + f") the kernel runs {sum(p.warps for p in parts)} warps in one CTA, which "
                       f"has at most {MAX_CTA_WARPS} (1024 threads): it would never launch",
                       info.program.loc, check="bad-warps")
    kir = getattr(info, "kir", None)
    if kir is not None:
        kparts = tuple(replace(p, warps=num_warps) if p.default else p for p in kir.partitions)
        for p in kparts:
            check_wgmma_warps(p)
        check_register_budgets(list(kparts), dict(kir.options), info.program.loc)
        kir = replace(kir, num_warps=num_warps, partitions=kparts)
        return replace(info, num_warps=num_warps, partitions=parts, kir=kir)
    return replace(info, num_warps=num_warps, partitions=parts)


def compile_kernel(kernel, signature: dict, constexprs: Optional[dict] = None,
                   num_warps: Optional[int] = None, debug_waits: Optional[bool] = None,
                   target=None, divisible_ints: Optional[set] = None):
    """Lower and compile ``kernel`` for sm_90a; returns Triton's CompiledKernel (``.asm["ttgir"]``,
    ``.asm["ptx"]``, ``.asm["cubin"]``) with ``.tle_generated`` (the Gluon source and plan).

    ``signature``: every kernel argument → Triton type ("*bf16", "i32", "fp32",
    "tensordesc<bf16[64, 256]>" for the descriptor of a TMA copy, completed with the layout of the
    ring it fills: lowering/descriptors.py; constexprs may be given as "constexpr" or omitted); ``constexprs``: values of the constexpr arguments;
    ``num_warps``: the default partition's warps (the kernel's @tle.jit num_warps by default);
    ``divisible_ints``: the integer arguments whose value is a multiple of 16 (they get
    ``tt.divisibility = 16``, as Triton's launcher specialises them, so that cp.async gathers can
    move 16 bytes); None assumes every integer argument is (the runtime passes the exact set, and
    this is what a CPU compile for inspection wants). When Triton cannot vectorise a cp.async gather
    (an unaligned row), the kernel is lowered again with register gathers instead.
    ``debug_waits``: bounded mbarrier waits that print the wait and trap (True, seconds, "500ms",
    "1000000polls"; None reads ``$TLE_DEBUG_WAITS``; lowering/debug.py)."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource

    info = kernel_info_of(kernel, constexprs)
    constexprs = dict(constexprs or {})
    if num_warps is not None and num_warps != info.num_warps:
        info = with_default_warps(info, num_warps)
    signature = signature_for_compile(info, signature, constexprs)
    sig, attrs = {}, {}
    for i, a in enumerate(info.args):
        if a in info.constexprs:
            sig[a] = "constexpr"
            continue
        t = signature.get(a)
        if t is None:
            raise TleError(f"kernel '{info.name}': the signature has no type for argument '{a}'",
                           info.program.loc, check="signature")
        sig[a] = t
        if t.startswith("*") or (t in ("i32", "i64")
                                 and (divisible_ints is None or a in divisible_ints)):
            attrs[(i,)] = [["tt.divisibility", 16]]
    check_signature(info, sig)
    tgt = target or GPUTarget(*HOPPER)
    bound = debug_waits_enabled(debug_waits)

    def gen_of(cp_async: bool, offsets=None):
        return generate(info, constexprs, bound or False, cp_async=cp_async,
                        barrier_offsets=offsets, arg_types=sig)

    def compile_gen(gen):
        fn = getattr(load_module(gen), gen.kernel)
        src = GluonASTSource(fn, sig, constexprs={a: constexprs[a] for a in info.constexprs},
                             attrs=attrs)
        return compile_folding_dead_branches(lambda: on_big_stack(
            triton.compile, src, target=tgt, options=compile_options(info)))

    # TLE_CP_ASYNC=0: register gathers only (Triton's concurrency sanitizer does not model cp.async
    # copies completed through cp.async.mbarrier.arrive, docs/GPU_TESTS.md)
    fallback = None  # Triton's error on the cp.async form, when the register form is compiled
    for cp_async in ((False,) if os.environ.get("TLE_CP_ASYNC", "1") == "0" else (True, False)):
        gen = gen_of(cp_async)
        try:
            compiled = compile_gen(gen)
            # debug waits and eager publish address the barriers through inline asm: bake in
            # their shared-memory offsets (lowering/debug.py, lowering/eager.py)
            if gen.barrier_asm:
                gen, compiled = _with_barrier_offsets(
                    info, gen, compiled, lambda offs: gen_of(cp_async, offs), compile_gen, tgt)
            break
        except TleError:
            raise
        except Exception as e:
            if cp_async and gen.uses_cp_async:
                # e.g. unaligned gather rows (cp.async < 4 bytes): register gathers, said (a
                # warning, and ``tle_cp_async_fallback``): the module compiled is then not the
                # one tle-dump --gluon prints (lowering adversarial round 11; it was silent)
                fallback = f"{type(e).__name__}: {str(e).strip().splitlines()[0][:300]}" \
                    if str(e).strip() else type(e).__name__
                continue

            err = e
            compiled = None
            break
    if compiled is None:
        e = err
        path = cache_dir()
        where = _refused_gluon_line(e, gen, info)
        if where is not None:
            loc, text = where
            raise TleError(f"Triton refused the lowered kernel '{info.name}' (generated Gluon in "
                           f"{path}) at {text}", loc, check="lowering") from e
        raise TleError(f"Triton failed to compile the lowered kernel '{info.name}' (generated Gluon "
                       f"in {path}): {type(e).__name__}: {str(e).strip()[:2000]}",
                       info.program.loc, check="lowering") from e
    compiled.tle_generated = gen
    compiled.tle_cp_async_fallback = fallback
    if fallback is not None:
        warnings.warn(TleLoweringWarning(
            f"kernel '{info.name}': Triton did not compile its cp.async gathers ({fallback}); "
            f"compiled with register gathers instead (the same values, loaded through registers): "
            f"the Gluon `tle-dump --gluon` prints is the cp.async form, `--ttgir` / `--ptx` are "
            f"the compiled one", kernel=info.name), stacklevel=2)
    return compiled


def _refused_gluon_line(e: BaseException, gen, info):
    """For a compile Triton's code generator refused: (the source location of the statement the
    refused Gluon line was emitted for, ``partition 'P', `<Gluon line>`: <Triton's message>``),
    from the innermost CompilationError of the chain (its function's source and line). None when
    the failure is no such error (a pass of the backend) or its line is not found. Before, the
    error named the kernel's first line and the outermost error (the warp_specialize call)."""
    import dataclasses

    from triton.compiler.errors import CompilationError

    chain, seen = [], set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        # its subclasses too (UnsupportedLanguageConstruct: `if` of a float constexpr, ...)
        if isinstance(e, CompilationError):
            chain.append(e)
        e = e.__cause__ or e.__context__
    said = [err for err in chain if getattr(err, "error_message", None)]
    if not said:
        return None

    def site(err):
        """(function name, its source line) of ``err``, or None."""
        src, node = getattr(err, "src", None) or "", getattr(err, "node", None)
        lineno = getattr(node, "lineno", None)
        m = re.match(r"\s*def\s+(\w+)\s*\(", src)
        lines = src.splitlines()
        if m is None or not isinstance(lineno, int) or not 1 <= lineno <= len(lines):
            return None
        return m.group(1), lines[lineno - 1].strip()

    # the innermost error raised in a function of the generated module (one raised inside a
    # Triton library function, tl.xor_sum's static_assert, names that function's source), with
    # the innermost error's message
    ours = [x for x in (site(err) for err in reversed(chain))
            if x is not None and (x[0] == info.name or x[0] in (gen.origins or {}))]
    if not ours:
        return None
    fn, text = ours[0]
    line = ((gen.origins or {}).get(fn) or {}).get(text)
    message = " ".join(str(said[-1].error_message).split())[:600]
    who = "the kernel body" if fn == info.name else f"partition '{fn}'"
    loc = info.program.loc
    if line:
        loc = dataclasses.replace(loc, line=line, column=0) if dataclasses.is_dataclass(loc) \
            else loc
    return loc, f"{who}, `{text}`: {message}"


def _with_barrier_offsets(info, gen, compiled, gen_of, compile_gen, tgt):
    """Recompile a kernel that addresses its barriers through inline asm (debug waits, eager
    publish) with the barrier offsets Triton's allocator chose, until the allocation of the
    compiled kernel agrees with the offsets baked into it (usually one round: the inline asm
    allocates no shared memory)."""
    from .debug import barrier_offsets

    cap = tgt.arch if isinstance(tgt.arch, int) else 90
    wanted = [a.var for pp in gen.plans.values() for a in pp.arrays]
    used: dict = {}
    for _ in range(3):
        offs = barrier_offsets(compiled.asm["ttgir"], cap)
        missing = [v for v in wanted if v not in offs]
        if missing:
            raise TleError(f"no shared-memory offset found for barrier(s) "
                           f"{', '.join(missing)} of '{info.name}'", info.program.loc,
                           check="lowering")
        offs = {v: offs[v] for v in wanted}
        if offs == used:
            return gen, compiled
        used = offs
        gen = gen_of(offs)
        compiled = compile_gen(gen)
    raise TleError(f"the shared-memory allocation of '{info.name}' does not settle (barrier "
                   f"offsets baked into inline asm)",
                   info.program.loc, check="lowering")


def ptxas_stats(compiled) -> dict:
    """Registers and spills of the kernel, and whether ptxas serialized its wgmmas, from
    ``ptxas -v`` on its PTX (CompiledKernel.n_spills is only filled in when the binary is loaded
    on a GPU)."""
    from triton.backends.nvidia.compiler import get_ptxas

    ptxas = get_ptxas(90).path
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "k.ptx"
        p.write_text(compiled.asm["ptx"])
        r = subprocess.run([ptxas, "-v", "--gpu-name", "sm_90a", str(p), "-o", str(Path(d) / "k.o")],
                           capture_output=True, text=True)
    text = r.stdout + r.stderr
    regs = re.search(r"Used (\d+) registers", text)
    spill_st = re.search(r"(\d+) bytes spill stores", text)
    spill_ld = re.search(r"(\d+) bytes spill loads", text)
    return {"registers": int(regs.group(1)) if regs else None,
            "spill_stores": int(spill_st.group(1)) if spill_st else 0,
            "spill_loads": int(spill_ld.group(1)) if spill_ld else 0,
            # ptxas C7515 (and its kin): it could not prove a wgmma pipeline stage free of other
            # writes to an accumulator, so it waits for every wgmma as soon as it is issued
            "wgmma_serialized": "wgmma.mma_async instructions are serialized" in text,
            # ptxas C7517: a warpgroup.wait it added where registers a wgmma defines are used
            # before the kernel's own wait (a copy of an in-flight accumulator)
            "wgmma_wait_injected": "warpgroup.wait is injected" in text,
            "ok": r.returncode == 0, "log": text}
