"""Debug waits (``TLE_DEBUG_WAITS``, ``compile_kernel(..., debug_waits=...)``, ``tle-dump
--debug-waits``): every mbarrier wait the lowering emits becomes a *bounded* wait, so that a bug in
the lowering shows up as an error naming the wait, not as a hung GPU (docs/lowering.md, "Debug
waits").

One wait site in the generated Gluon (instead of ``mbarrier.wait(arr.index(s), parity)``,
:func:`emit_wait`)::

    _tle_ok2 = _tle_try_wait(_TLE_OFF_ring_empty0 + _ring_s1 * 8, (((t) // 3) & 1) ^ 1)
    if _tle_ok2 == 0:
        _tle_tid3 = _tle_thread(128)
        if _tle_tid3 == 0:
            if (_ring_s1) == 0 and (...) == 0: gl.device_print('tle debug-waits: kernel ring_sum, '
                'partition load_tiles: pipe ring: acquire(t) on empty[g0] (line 28) timed out after '
                '2 s (...), stage 0, parity 0; index', t)
            ...                                   # one per (stage, parity)
        _tle_trap(_tle_tid3)

``_tle_try_wait`` (emitted once per module, :func:`helpers_src`) is one inline-PTX block that polls
``mbarrier.try_wait.parity`` until the phase completes or the bound runs out (``%globaltimer``
nanoseconds, or a number of polls) and returns 1 / 0; on 0 the first thread of the partition
``printf``s one line (kernel, partition, pipe, verb, barrier, source line, stage, parity, logical
index) and traps; the partition's other threads trap 20 ms later, so the line is written first.

The barrier's shared-memory address: Gluon 3.6 has no way to hand a ``shared_memory_descriptor``
to inline asm, so the address is ``global_smem`` (the kernel's dynamic shared memory symbol) + the
offset Triton's allocator gives the barrier array's ``ttg.local_alloc`` + 8·stage. The offsets are
read by running Triton's own allocation passes on the compiled TTGIR (:func:`barrier_offsets`);
``compile_kernel`` compiles, reads the offsets, regenerates with them and checks that the
allocation did not move (the bounded-wait code allocates no shared memory, so one round suffices).
"""

from __future__ import annotations

import os
import re
import tempfile
from typing import Optional, Union
from ..ir.record import record

DEFAULT_NS = 2_000_000_000  # 2 s of %globaltimer
ENV = "TLE_DEBUG_WAITS"


@record
class Bound:
    """How long one wait may take: ``unit`` "ns" (``%globaltimer``) or "polls" (try_wait calls;
    each ``mbarrier.try_wait`` may itself suspend for a hardware-defined time)."""

    unit: str
    value: int

    def __str__(self) -> str:
        if self.unit == "ns":
            s = self.value / 1e9
            return f"{s:g} s"
        return f"{self.value} polls"

    @property
    def key(self) -> str:
        return f"{self.value}{self.unit}"


#: The largest bounds of one wait: the lowered wait compares a 64-bit %globaltimer difference in
#: nanoseconds, or a 32-bit poll count, with it.
MAX_NS = 2**64 - 1
MAX_POLLS = 2**32 - 1


def parse_bound(spec: Union[None, bool, int, float, str, Bound]) -> Optional[Bound]:
    """``None``/``False``/``""``/``"0"``/``"off"`` → off. ``True``/``"1"``/``"on"`` → the default
    (2 s). A number → seconds (``1`` means "on", i.e. the default, for the env var's sake; write
    ``"1s"`` for one second). Strings: ``"500ms"``, ``"0.5s"``, ``"3"`` (seconds), ``"1000000polls"``
    (or ``"1e6polls"``)."""
    if spec is None or spec is False:
        return None
    if isinstance(spec, Bound):
        return spec
    if spec is True:
        return Bound("ns", DEFAULT_NS)
    if isinstance(spec, (int, float)):
        if spec == 0:
            return None
        if spec == 1:
            return Bound("ns", DEFAULT_NS)
        if spec < 0:
            raise ValueError(f"{ENV}: a bound must be positive, got {spec}")
        return _ns_bound(spec * 1e9)
    s = str(spec).strip().lower()
    if s in ("", "0", "off", "false", "no"):
        return None
    if s in ("1", "on", "true", "yes"):
        return Bound("ns", DEFAULT_NS)
    m = re.fullmatch(r"([0-9.eE+]+)\s*(s|ms|us|ns|polls?|iters?|iterations?)?", s)
    if not m:
        raise ValueError(f"{ENV}: expected 1, a time (2s, 500ms) or a poll count (1000000polls), "
                         f"got {spec!r}")
    try:
        v = float(m.group(1))
    except ValueError:
        raise ValueError(f"{ENV}: bad number in {spec!r}") from None
    unit = m.group(2) or "s"
    if v <= 0:
        raise ValueError(f"{ENV}: a bound must be positive, got {spec!r}")
    if unit.startswith(("poll", "iter")):
        return Bound("polls", min(int(v), MAX_POLLS))
    scale = {"s": 1e9, "ms": 1e6, "us": 1e3, "ns": 1.0}[unit]
    return _ns_bound(v * scale)




def _ns_bound(ns: float) -> Bound:
    """A bound of ``ns`` nanoseconds (at least 1); OverflowError ("too large ...") past what the
    lowered wait counts, infinity included, rather than a PTX literal the assembler refuses or an
    int() of infinity."""
    if ns != ns or ns == float("inf"):
        raise OverflowError("too large")
    if ns > MAX_NS:
        raise OverflowError(f"too large (at most {MAX_NS // 10**9} s: the lowered wait counts in "
                            f"64 bits)")
    return Bound("ns", max(1, int(ns)))


def bound_from(debug_waits) -> Optional[Bound]:
    """The bound of a call: its ``debug_waits`` argument, else ``$TLE_DEBUG_WAITS``."""
    if debug_waits is not None:
        return parse_bound(debug_waits)
    return parse_bound(os.environ.get(ENV, ""))


def offset_const(var: str) -> str:
    return f"_TLE_OFF_{var}"


def _poll_asm(bound: Bound) -> str:
    """$0 (out): 1 when the phase of parity $2 of the mbarrier at global_smem + $1 completed, 0 when
    the bound ran out first."""
    if bound.unit == "ns":
        init = ".reg .u64 t0, t1; mov.u64 t0, %globaltimer;"
        step = (f"mov.u64 t1, %globaltimer; sub.u64 t1, t1, t0; "
                f"setp.lt.u64 p, t1, {bound.value};")
    else:
        init = ".reg .u32 n; mov.u32 n, 0;"
        step = f"add.u32 n, n, 1; setp.lt.u32 p, n, {bound.value};"
    return ("{ .reg .pred p; .reg .u32 a; " + init + " "
            "mov.u32 a, global_smem; add.u32 a, a, $1; "
            "tle_poll: mbarrier.try_wait.parity.shared::cta.b64 p, [a], $2; "
            "@p bra tle_done; " + step + " @p bra tle_poll; "
            "mov.u32 $0, 0; bra tle_end; "
            "tle_done: mov.u32 $0, 1; "
            "tle_end: }")


# $1 == 0: the printing thread traps at once (after its printf); the others wait 20 ms first
_TRAP_ASM = ("{ .reg .pred e; .reg .u64 t0, t1; mov.u32 $0, 0; setp.eq.u32 e, $1, 0; @e trap; "
             "mov.u64 t0, %globaltimer; tle_hold: mov.u64 t1, %globaltimer; sub.u64 t1, t1, t0; "
             "setp.lt.u64 e, t1, 20000000; @e bra tle_hold; trap; }")


def offsets_src(offsets: dict[str, int], why: str, known: bool = True) -> list[str]:
    """Module-level constants: each barrier array's shared-memory offset from Triton's allocator,
    for inline asm that addresses it (debug waits here, eager publish in lowering/eager.py).
    ``known`` False: the module is emitted before any compile read them (tle-dump -p ...
    emit-gluon, the first of compile_kernel's compiles): every offset 0, and the comment says the
    source cannot run as printed."""
    if known:
        head = [f"# {why}; barrier offsets in shared memory from Triton's allocator"]
    else:
        head = [f"# {why}; barrier offsets in shared memory: PLACEHOLDERS (0), not yet read from "
                f"Triton's allocator, which a compile does (tle-dump --gluon prints them "
                f"resolved): this source does not run as printed"]
    return head + [f"{offset_const(var)} = gl.constexpr({off})" for var, off in offsets.items()]


def helpers_src(bound: Bound, offsets: dict[str, int], known: bool = True) -> list[str]:
    """Module-level Gluon source of a debug-waits module: the barrier offsets (``known``:
    offsets_src's) and the helper."""
    out = offsets_src(offsets, f"debug waits (TLE_DEBUG_WAITS): every mbarrier wait is bounded by "
                               f"{bound} (lowering/debug.py)", known)
    out += [
        "",
        "",
        "@gluon.jit",
        "def _tle_try_wait(off, parity):",
        "    # 1: the phase of `parity` of the mbarrier at global_smem + off completed; 0: timed out",
        f"    return gl.inline_asm_elementwise({_poll_asm(bound)!r}, \"=r,r,r\", [off, parity],",
        "                                     dtype=gl.int32, is_pure=False, pack=1)",
        "",
        "",
        "@gluon.jit",
        "def _tle_thread(THREADS: gl.constexpr):",
        "    # 0 for exactly one thread of a partition of THREADS threads (partitions are contiguous)",
        "    return gl.inline_asm_elementwise(\"mov.u32 $0, %tid.x;\", \"=r\", [], dtype=gl.int32,",
        "                                     is_pure=True, pack=1) % THREADS",
        "",
        "",
        "@gluon.jit",
        "def _tle_trap(tid):",
        "    # thread 0 (which printed) traps now, the others 20 ms later: the printf gets out first",
        f"    gl.inline_asm_elementwise({_TRAP_ASM!r}, \"=r,r\", [tid], dtype=gl.int32,",
        "                              is_pure=False, pack=1)",
        "",
        "",
    ]
    return out


def emit_wait(tr, var: str, stage: str, parity: str, index: str, site: str, capacity: int,
              one_shot: bool) -> None:
    """The bounded wait of one site, emitted into the partition's body (pipes.py): poll; on a
    timeout one thread prints one line (the stage and parity chosen statically so that the line
    names them: device_print prints each runtime operand on a line of its own), then trap."""
    bound = tr.ctx.debug_waits
    tr.ctx.wait_sites.append(site)
    ok, tid = tr.fresh("tle_ok"), tr.fresh("tle_tid")
    head = site_message(getattr(tr.ctx, "kernel_name", "?"), tr.partition, site, bound)
    tr.emit(f"{ok} = _tle_try_wait({offset_const(var)} + {stage} * 8, {parity})  # {site}")
    tr.emit(f"if {ok} == 0:")
    tr.emit(f"    {tid} = _tle_thread({32 * tr.warps})")
    tr.emit(f"    if {tid} == 0:")
    combos = [(0, 0)] if one_shot else [(s, p) for s in range(capacity) for p in (0, 1)]
    for s, p in combos:
        msg = f"{head}, stage {s}, parity {p}; index"
        cond = "" if one_shot else f"if ({stage}) == {s} and ({parity}) == {p}: "
        tr.emit(f"        {cond}gl.device_print({msg!r}, {index})")
    tr.emit(f"    _tle_trap({tid})")


def site_message(kernel: str, partition: str, site: str, bound: Bound) -> str:
    """The printf text of one wait site, before ', stage S, parity P; index: <i>'."""
    msg = (f"tle debug-waits: kernel {kernel}, partition {partition}: {site} timed out after "
           f"{bound} (mbarrier phase never completed)")
    return msg.replace("\\", "/").replace('"', "'").replace("%", "")


def barrier_offsets(ttgir: str, capability: int = 90, ptx_version: Optional[int] = None
                    ) -> dict[str, int]:
    """``ttg.local_alloc`` result name → shared-memory offset, from Triton's own allocation passes
    run (as ``make_llir`` runs them) on a copy of the compiled TTGIR."""
    from triton._C.libtriton import ir, nvidia, passes

    if ptx_version is None:
        from triton.backends.nvidia.compiler import get_ptxas, ptx_get_version

        ptx_version = ptx_get_version(get_ptxas(capability).version)
    ctx = ir.context()
    ir.load_dialects(ctx)
    nvidia.load_dialects(ctx)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "k.ttgir")
        with open(path, "w") as f:
            f.write(ttgir)
        mod = ir.parse_mlir_module(path, ctx)
    mod.context = ctx
    pm = ir.pass_manager(ctx)
    passes.ttgpuir.add_combine_tensor_select_and_if(pm)
    passes.ttgpuir.add_allocate_warp_groups(pm)
    passes.convert.add_scf_to_cf(pm)
    passes.gluon.add_inliner(pm)
    nvidia.passes.ttgpuir.add_allocate_shared_memory_nv(pm, capability, ptx_version)
    pm.run(mod, "tle_debug_waits_offsets")
    out = {}
    for m in re.finditer(r"%([A-Za-z_][\w]*) = ttg\.local_alloc \{[^}]*allocation\.offset = (\d+)",
                         mod.str()):
        out[m.group(1)] = int(m.group(2))
    return out
