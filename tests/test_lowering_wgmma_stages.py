"""Waits for in-flight wgmmas told apart by slot (lowering/wgmma_sites.py ``rings_overlap``).

Before a store into a pipe slot or a release of one, the lowering retires the async wgmmas that
may still read that shared memory. It used to take a whole ring (every slot of a pipe field) as
one buffer, so a release of tile t - 1 also waited for the QK just issued on tile t, and a
partition refilling slot t + 1 of a ring it reads waited for the wgmma on slot t before the
store. Each access now carries its event's stage (``index % C``, infer-stages); two accesses of a
ring are apart when C does not divide the difference of their indices (same loop variables, same
coefficients). Checked here: the rule itself, the generated waits, and the control-skeleton
trace (testing/gluon_trace.py), which runs the generated code and flags a release *or a store*
of a slot while a wgmma reading it may be in flight.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("triton.experimental.gluon")

from tle_compiler.ir.attrs import AffineIndex, Mod  # noqa: E402
from tle_compiler.lowering.wgmma_sites import ring_key, rings_overlap, stages_differ  # noqa: E402
from tle_compiler.testing.gluon_trace import LoweredKernel, trace_gluon, release_rings_of  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
# both run on the GPU too (tests/gpu/test_pipe_kernels.py)
OVERLAP = ROOT / "tle_kernels" / "gpu_tests" / "slot_overlap.py"


def at(const: int, cap: int, *terms) -> Mod:
    """The stage ``(const + Σ coef·var) % cap`` of an event."""
    return Mod(AffineIndex(const, tuple(sorted(terms))), cap)


# ------------------------------------------------------------------ the rule


def test_stages_of_one_loop_variable_differ_by_the_offset_modulo_the_capacity():
    assert stages_differ(at(0, 2, ("t", 1)), at(-1, 2, ("t", 1)))      # t vs t - 1
    assert stages_differ(at(1, 2, ("t", 1)), at(0, 2, ("t", 1)))       # t + 1 vs t
    assert not stages_differ(at(2, 2, ("t", 1)), at(0, 2, ("t", 1)))   # t + 2: the same slot
    assert stages_differ(at(1, 3, ("t", 1)), at(0, 3, ("t", 1)))
    assert not stages_differ(at(3, 3, ("t", 1)), at(0, 3, ("t", 1)))
    assert not stages_differ(at(0, 2, ("t", 1)), at(0, 2, ("t", 1)))   # itself


def test_indices_not_affine_in_the_same_terms_are_not_told_apart():
    # r * NT + k against k: equal slots for some NT
    assert not stages_differ(at(0, 2, ("k", 1), ("r", 32)), at(1, 2, ("k", 1)))
    assert not stages_differ(at(1, 2, ("t", 2)), at(0, 2, ("t", 1)))   # 2t + 1 vs t
    assert not stages_differ(None, at(0, 2, ("t", 1)))                 # a stage not known
    assert not stages_differ(at(0, 2, ("t", 1)), None)


def test_constant_slots():
    assert not stages_differ(0, 0)       # a capacity-1 ring has one slot
    assert stages_differ(0, 1)
    assert stages_differ(at(1, 2), 0) and not stages_differ(at(2, 2), 0)


def test_keys_overlap_on_one_ring_unless_the_stages_differ_and_unknown_buffers_always():
    read = {ring_key("kv_v", at(0, 2, ("t", 1))), ring_key("q_q", 0)}
    assert not rings_overlap(read, {ring_key("kv_v", at(-1, 2, ("t", 1))), ring_key(None)})
    assert rings_overlap(read, {ring_key("kv_v", at(-2, 2, ("t", 1))), ring_key(None)})
    assert rings_overlap(read, {ring_key("kv_v"), ring_key(None)})     # any slot of kv_v
    assert not rings_overlap(read, {ring_key("other", 0), ring_key(None)})
    assert rings_overlap({ring_key(None)}, {ring_key("other", 0), ring_key(None)})


# ------------------------------------------------------------------ a partition refilling its ring


def _mm_source(lk) -> str:
    src = lk.gen.source
    return src[src.index("def mm("):src.index("@gluon.jit\ndef refill(")]


def test_the_refill_of_the_other_slot_does_not_wait_for_the_wgmma_reading_this_one():
    """The store into slot t + 1 comes between the wgmma on slot t and the release of slot t
    with no warpgroup_mma_wait between them: the wgmma is waited for once, at the release."""
    lk = LoweredKernel((str(OVERLAP), "refill"), {})
    mm = _mm_source(lk)
    loop = mm[mm.index("for t in range"):mm.index("mbarrier.wait(a_full0.index(0), ((NT - 1))")]
    issue = loop.index("warpgroup_mma(a_x")
    store = loop.index(".store(nxt.to(gl.bfloat16))")
    release = loop.index("a.release: a wgmma may still read the slot")
    assert issue < store < release
    assert "warpgroup_mma_wait" not in loop[issue:store]
    assert loop.count("warpgroup_mma_wait") == 1
    params, problems = lk.check({}, pins={"N": 3})
    assert params == {"N": 3} and not problems, problems


#: the refill's store of tile t + 1 into the other slot (``_r_s4``: the slot its wgmma reads)
REFILL_STORE = "r_v.index(_r_s7).store(nxt.to(gl.bfloat16))"


def _violations(lk, src: str) -> list[str]:
    """What the trace of ``src`` (the refill's generated code, edited) reports, at N = 3."""
    tr = trace_gluon(src, lk.gen.kernel, {}, {c: lk.constexprs[c] for c in lk.info.constexprs},
                     release_rings=release_rings_of(lk.gen.plans), pins={"N": 3})
    return [v for p in tr.partitions for v in p.violations]


def test_the_trace_flags_a_store_into_the_slot_an_inflight_wgmma_reads():
    """The generated code edited to store into the slot the wgmma reads (its wait's stage
    variable instead of the acquire's): the trace reports the store, naming the ring and the
    stage; the generated code as it is has no such report."""
    lk = LoweredKernel((str(OVERLAP), "refill"), {})
    src = lk.gen.source
    assert src.count(REFILL_STORE) == 1
    assert not _violations(lk, src)
    found = [v for v in _violations(lk, src.replace(REFILL_STORE,
                                                    REFILL_STORE.replace("_r_s7", "_r_s4")))
             if "store into" in v]
    assert found and "store into r_v at stage 0" in found[0] and "t=0" in found[0], found


def test_a_delayed_release_retires_only_the_wgmma_carried_in():
    """Pipelined attention releasing tile t - 1 right after tile t's Q·Kᵀ is issued: the wait
    before the release leaves one wgmma (that Q·Kᵀ, on the other slot) in flight, and the trace
    of the generated code finds every release and store after the wgmmas reading its slot."""
    lk = LoweredKernel((str(OVERLAP), "delayed_release"), {})
    assert lk.gen.source.count("warpgroup_mma_wait(1, deps=[gl.full([256], 0, gl.int32, "
                               "layout=L3)])  # kv.release") == 1
    for nt in (1, 2, 5):
        params, problems = lk.check({"NT": nt})
        assert params == {"NT": nt} and not problems, problems


def test_the_trace_flags_a_tma_copy_into_the_slot_an_inflight_wgmma_reads():
    """A TMA copy overwrites its slot as a register store does: the refill's store replaced by a
    copy into the slot the wgmma reads is reported; into the other slot, not."""
    lk = LoweredKernel((str(OVERLAP), "refill"), {})
    src = "from triton.experimental.gluon.language.nvidia.hopper import tma\n" + lk.gen.source
    copy = "tma.async_copy_global_to_shared(v_ptr, [0, 0], r_full0.index(_r_s7), r_v.index({}))"

    def violations(stage_var):
        return [v for v in _violations(lk, src.replace(REFILL_STORE, copy.format(stage_var)))
                if "store into" in v]

    assert not violations("_r_s7")
    found = violations("_r_s4")
    assert found and "store into r_v at stage 0" in found[0], found
