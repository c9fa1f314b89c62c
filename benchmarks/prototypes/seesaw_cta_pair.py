"""Prototype (measured, not kept): the seesaw with its K gathers shared by a CTA pair.

    python3 benchmarks/prototypes/seesaw_cta_pair.py [--mode pair|solo|forward] [-o OUT.py]
    python3 benchmarks/ab_sparse_mla.py tle_kernels/sparse_mla_seesaw.py OUT.py --skv 8192   # on the GPU

Why: the seesaw runs at the H200's 700 W power cap, and a copy of it that reads only half of each
K tile's rows from L2 (the rest zero-filled: same shared-memory writes, half the L2 traffic) ran
1.07x at SKV=8K and 1.18x at 128K (docs/BENCHMARKS.md, session 5). The two head blocks of a query
token gather exactly the same rows, so a cluster of two CTAs (head block = CTA rank) could read
each row from L2 once and deliver it to both.

What this writes: the lowering's Gluon for tle_kernels/sparse_mla_seesaw.py (tle-dump --gluon), edited
as text into a module benchmarks/ab_sparse_mla.py can load:
- pair mode: each CTA gathers half the rows of every K piece (rank 0 rows 0-31, rank 1 rows 32-63)
  with one TMA box [1, 64] per row and 64 columns, multicast into both CTAs' tiles (the hardware
  swizzles a box by its shared-memory address, so single-row boxes land in the 128B-swizzled
  tile where wgmma expects them; out-of-range rows are zero-filled). Each CTA's producer arms its
  own full barrier with the whole piece's bytes (expect_tx; count 1), each consumer's release
  also arrives on the peer CTA's empty barrier (mapa + mbarrier.arrive.release.cluster; counts
  doubled), the CTAs exchange a start handshake after initialising their barriers and each
  producer drains its empty barriers before exiting (no remote arrive may reach an exited CTA).
- solo mode: the same TMA row gathers, every CTA all 64 rows, no cluster.
- forward mode: each CTA gathers its 32 rows with cp.async (as the bundled kernel does, half the
  rows) and, once they landed (a landed barrier per piece, waited by the producer), forwards each
  contiguous 4 KiB half-chunk to the peer with a bulk shared::cta -> shared::cluster copy that
  completes on the peer's full barrier (armed by the peer's producer for those bytes).
Inline asm reaches shared memory as global_smem + an offset read from a first compile and baked
into the second (as lowering/debug.py and lowering/eager.py do), and the tensor map through the
kernel parameter Triton passes for the descriptor.

Measured (H200, 2026-11-29, interleaved A/B against the bundled kernel, docs/gpu_logs/
2026-11-29_s5_ab_pair_tma_multicast.log and _ab_tma_row_gathers.log): both modes CORRECT (out rel
2.01e-3, lse 1.4e-6, as the bundled kernel), pair 0.53x and solo 0.39x. The TMA unit takes ~14-20
cycles per 128-byte box: 576 (pair) or 1,152 (solo) boxes a pair of K tiles cost more than the
whole pair loop (~6,000 cycles): per-row TMA is the wrong tool for 128-byte rows. Forward mode
is correct too and runs at **0.69x / 0.77x** (8K / 128K; 2026-11-29_s5_ab_pair_bulk_forward.log):
every piece now waits for its own half to land before the peer's half even starts, a second
latency on the late pieces the consumers already wait for (and the producer spills 84 B).
Register-staged gathers (an `st.async` carrier) run 0.72x / 0.54x even unshared. None of the
carriers pays for the L2 traffic it saves (the half-rows probe's +7 % is the ceiling).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

ROOT = Path(__file__).resolve().parents[2]
CX = {"TOPK": 2048, "BLOCK_H": 64}
NAMES = ["kv0_kv_l", "kv0_tkv", "kv0_full0", "kv0_empty0", "kv0r_kv_r", "kv0r_full0",
         "kv0r_empty0", "kv1_kv_r", "kv1_tkv", "kv1_full0", "kv1_empty0", "kv1l_kv_l",
         "kv1l_full0", "kv1l_empty0", "ready"]
SW128 = ("NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2, transposed=False, "
         "fp4_padded=False, cga_layout=[])")
SIG = {"q_ptr": "*bf16", "kv_ptr": "*bf16", "idx_ptr": "*i32", "out_ptr": "*bf16",
       "lse_ptr": "*fp32", "max_logits_ptr": "*fp32", "stride_q_s": "i32", "stride_q_h": "i32",
       "stride_kv_s": "i32", "stride_idx_s": "i32", "stride_o_s": "i32", "stride_o_h": "i32",
       "stride_l_s": "i32", "s_kv": "i32", "sm_scale": "fp32", "n_items": "i32", "n_hb": "i32",
       "ROUNDS": "i32", "kv_desc": f"tensordesc<bf16[1,64],{SW128}>", "TOPK": "constexpr",
       "BLOCK_H": "constexpr"}

HELPERS = r'''
ROWS_L = gl.constexpr(gl.NVMMASharedLayout(swizzle_byte_width=0, element_bitwidth=16, rank=2))

@gluon.jit
def _tle_tma_mc(dst, col, row, pred, mbar):
    # one TMA box [1, 64] of kv (row `row`, columns col..col+63) into shared memory at global_smem +
    # dst of BOTH CTAs of the cluster, completing its bytes on the mbarrier at global_smem + mbar of each
    return gl.inline_asm_elementwise(
        "{ .reg .u32 d, m; .reg .u64 tm; .reg .b16 mk; .reg .pred p; setp.ne.u32 p, $4, 0; "
        "mov.u32 d, global_smem; add.u32 d, d, $1; mov.u32 m, global_smem; add.u32 m, m, $5; "
        "mov.b64 tm, __PARAM__; cvta.param.u64 tm, tm; mov.b16 mk, 3; "
        "@p cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
        " [d], [tm, {$2, $3}], [m], mk; mov.u32 $0, 0; }",
        "=r,r,r,r,r,r", [dst, col, row, pred, mbar], dtype=gl.int32, is_pure=False, pack=1)

@gluon.jit
def _tle_remote_arrive(off):
    # the first thread of the warp group arrives on the peer CTA's mbarrier at the same offset
    L: gl.constexpr = gl.BlockedLayout([1], [32], [4], [0])
    gl.inline_asm_elementwise(
        "{ .reg .u32 a, ra, t, rk; .reg .pred p; mov.u32 t, %tid.x; and.b32 t, t, 127; setp.eq.u32 p, t, 0; "
        "mov.u32 rk, %cluster_ctarank; xor.b32 rk, rk, 1; mov.u32 a, global_smem; add.u32 a, a, $1; "
        "mapa.shared::cluster.u32 ra, a, rk; @p mbarrier.arrive.release.cluster.shared::cluster.b64 _, [ra]; "
        "mov.u32 $0, 0; }",
        "=r,r", [gl.full([128], 0, gl.int32, layout=L) + off], dtype=gl.int32, is_pure=False, pack=1)

@gluon.jit
def _tle_cluster_handshake(off):
    # barriers initialised: tell the peer (arrive on its `ready`), then wait for the peer's word
    L: gl.constexpr = gl.BlockedLayout([1], [32], [4], [0])
    gl.inline_asm_elementwise(
        "{ .reg .u32 a, ra, t, rk; .reg .pred p, q; fence.mbarrier_init.release.cluster; "
        "mov.u32 t, %tid.x; setp.eq.u32 p, t, 0; "
        "mov.u32 rk, %cluster_ctarank; xor.b32 rk, rk, 1; mov.u32 a, global_smem; add.u32 a, a, $1; "
        "mapa.shared::cluster.u32 ra, a, rk; @p mbarrier.arrive.release.cluster.shared::cluster.b64 _, [ra]; "
        "tle_hs: mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 q, [a], 0; @!q bra tle_hs; "
        "mov.u32 $0, 0; }",
        "=r,r", [gl.full([128], 0, gl.int32, layout=L) + off], dtype=gl.int32, is_pure=False, pack=1)
'''

PRODUCER = '''            ot = gl.arange(0, 128, layout=L0)
            rk = gl.program_id(0) % 2
            rowA = rk * 32 + ot // 4            # 256-column pieces: thread t -> row, box t % 4
            boxA = ot % 4
            rowT = rk * 32 + ot % 32            # tails: threads 0..31
            isT = (ot < 32).to(gl.int32)
            one = (ot >= 0).to(gl.int32)
            tiA0 = gl.load(idx_row + (2 * p) * BK + rowA)
            tiA1 = gl.load(idx_row + ((2 * p) + 1) * BK + rowA)
            tiT0 = gl.load(idx_row + (2 * p) * BK + rowT)
            tiT1 = gl.load(idx_row + ((2 * p) + 1) * BK + rowT)
            mbarrier.wait(kv0_empty0.index(0), ((g) & 1) ^ 1)
            kv0_valid.index(0).store(valid0.to(gl.int8))
            _tle_tma_mc(__OFF_kv0_kv_l__ + boxA * 8192 + rowA * 128, boxA * 64, tiA0, one, one * __OFF_kv0_full0__)
            _tle_tma_mc(__OFF_kv0_tkv__ + rowT * 128, ot * 0 + 512, tiT0, isT, one * __OFF_kv0_full0__)
            gl.thread_barrier()  # every thread's valid store before the arrive
            mbarrier.expect(kv0_full0.index(0), 40960)
            mbarrier.wait(kv1_empty0.index(0), ((g) & 1) ^ 1)
            kv1_valid.index(0).store(valid1.to(gl.int8))
            _tle_tma_mc(__OFF_kv1_kv_r__ + boxA * 8192 + rowA * 128, 256 + boxA * 64, tiA1, one, one * __OFF_kv1_full0__)
            _tle_tma_mc(__OFF_kv1_tkv__ + rowT * 128, ot * 0 + 512, tiT1, isT, one * __OFF_kv1_full0__)
            gl.thread_barrier()  # every thread's valid store before the arrive
            mbarrier.expect(kv1_full0.index(0), 40960)
            mbarrier.wait(kv0r_empty0.index(0), ((g) & 1) ^ 1)
            _tle_tma_mc(__OFF_kv0r_kv_r__ + boxA * 8192 + rowA * 128, 256 + boxA * 64, tiA0, one, one * __OFF_kv0r_full0__)
            mbarrier.expect(kv0r_full0.index(0), 32768)
            mbarrier.wait(kv1l_empty0.index(0), ((g) & 1) ^ 1)
            _tle_tma_mc(__OFF_kv1l_kv_l__ + boxA * 8192 + rowA * 128, boxA * 64, tiA1, one, one * __OFF_kv1l_full0__)
            mbarrier.expect(kv1l_full0.index(0), 32768)
    # drain: every fill released by both CTAs' consumers (the peer's remote arrives included)
    GN = ROUNDS * NP
    mbarrier.wait(kv0_empty0.index(0), ((GN) & 1) ^ 1)
    mbarrier.wait(kv1_empty0.index(0), ((GN) & 1) ^ 1)
    mbarrier.wait(kv0r_empty0.index(0), ((GN) & 1) ^ 1)
    mbarrier.wait(kv1l_empty0.index(0), ((GN) & 1) ^ 1)'''

LAUNCH = '''

# ---------------------------------------------------------------- launch (prototype)
OFFSETS = __OFFSETS__
TMAP_PARAM = __PARAM__


class _PairLaunch:
    """The per-CTA call signature of benchmarks/ab_sparse_mla.py; launches the persistent kernel
    over all SMs, in clusters of two CTAs in pair mode: Triton's launcher reads the cluster size
    from the compiled kernel's packed metadata (num_warps, num_ctas, shared), so a kernel compiled
    for one CTA runs in clusters when that field says 2 (tests/gpu/test_platform_tma_cluster.py)."""

    def __init__(self, cluster):
        self.ck = None
        self.cluster = cluster  # 2: CTA pairs (one query token, head blocks 0 and 1); 1: plain

    def __getitem__(self, grid):
        return self.launch

    def launch(self, q, kv, idx, out, lse, ml, sqs, sqh, skvs, sidx, sos, soh, sls, s_kv, sm_scale,
               TOPK=2048, BLOCK_H=64):
        import torch
        from triton.experimental.gluon.nvidia.hopper import TensorDescriptor
        sq, h = q.shape[0], q.shape[1]
        assert h == 128 and BLOCK_H == 64 and TOPK == 2048
        kv2 = kv.view(kv.shape[0], kv.shape[-1])
        desc = TensorDescriptor(kv2, [kv2.shape[0], 576], [kv2.stride(0), 1], [1, 64], SW128_L)
        sms = torch.cuda.get_device_properties(q.device).multi_processor_count
        n_items = sq * 2
        clusters = sms // 2 if self.cluster == 2 else min(sms, n_items)
        rounds = -(-(n_items // self.cluster) // clusters)
        args = (q, kv, idx, out, lse, ml, sqs, sqh, skvs, sidx, sos, soh, sls, s_kv, sm_scale,
                n_items, 2, rounds, desc, TOPK, BLOCK_H)
        if self.ck is None:
            ck = sparse_mla_seesaw.warmup(*args[:-2], TOPK=TOPK, BLOCK_H=BLOCK_H, grid=(1,), num_warps=4)
            from tle_compiler.lowering.debug import barrier_offsets
            got = barrier_offsets(ck.asm["ttgir"])
            assert {k: got[k] for k in OFFSETS} == OFFSETS, "allocation moved on this machine"
            assert TMAP_PARAM in ck.asm["ptx"]
            ck._init_handles()
            nw, _, shared = ck.packed_metadata
            ck.packed_metadata = (nw, self.cluster, shared)
            self.ck = ck
        self.ck[(clusters, 1, 1)](*args)


SW128_L = gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2)
__ATTR__ = _PairLaunch(__CLUSTER__)
'''


_BULK = ("mapa.shared::cluster.u32 d, s, pe; @p cp.async.bulk.shared::cluster.shared::cta"
         ".mbarrier::complete_tx::bytes [d], [s], 4096, [m]; ")


def _forward_helper(nchunk: int) -> str:
    """Gluon helper ``_tle_forward<nchunk>(src, full)``: one thread of the producer copies this
    CTA's half (its 32 rows) of ``nchunk`` 64-column chunks of a slot, each a contiguous 4 KiB block
    at global_smem + src + chunk * 8192 + rank * 4096, to the same offset in the peer CTA,
    completing on the peer's full barrier at global_smem + full."""
    asm = ("{ .reg .u32 s, d, m, me, pe, t, h; .reg .pred p; mov.u32 t, %tid.x; and.b32 t, t, 127; "
           "setp.eq.u32 p, t, 0; fence.proxy.async.shared::cta; mov.u32 me, %cluster_ctarank; "
           "xor.b32 pe, me, 1; shl.b32 h, me, 12; mov.u32 m, global_smem; add.u32 m, m, $2; "
           "mapa.shared::cluster.u32 m, m, pe; mov.u32 s, global_smem; add.u32 s, s, $1; "
           "add.u32 s, s, h; " + "add.u32 s, s, 8192; ".join([_BULK] * nchunk) + "mov.u32 $0, 0; }")
    return (f"\n@gluon.jit\ndef _tle_forward{nchunk}(src, full):\n"
            "    L: gl.constexpr = gl.BlockedLayout([1], [32], [4], [0])\n"
            "    z = gl.full([128], 0, gl.int32, layout=L)\n"
            f"    gl.inline_asm_elementwise({asm!r},\n"
            '                              "=r,r,r", [z + src, z + full], dtype=gl.int32, '
            "is_pure=False, pack=1)\n")


FORWARD_HELPERS = _forward_helper(4) + _forward_helper(1)


def _forward_piece(pipe, fields, peer_bytes, valid):
    """Producer text for one K piece in forward mode: cp.async of this CTA's 32 rows, the mask, then
    the full barrier armed for the peer's half and per-thread arrives on full and landed."""
    out = [f"            mbarrier.wait({pipe}_empty0.index(0), ((g) & 1) ^ 1)"]
    for branch, start in (("            if rk == 0:", 0), ("            else:", 32)):
        out.append(branch)
        for field, col0, ncol in fields:
            out.append(f"                async_copy.async_copy_global_to_shared({pipe}_{field}.index(0)"
                       f".slice({start}, 32), ((rH{valid} + {col0}) + gl.arange(0, {ncol}, "
                       f"layout=L2)[None, :]), mask=vH{valid}[:, None])")
    if pipe in ("kv0", "kv1"):
        out.append(f"            {pipe}_valid.index(0).store(valid{valid}.to(gl.int8))")
    out += ["            fence_async_shared()",
            "            gl.thread_barrier()",
            f"            mbarrier.expect({pipe}_full0.index(0), {peer_bytes})",
            f"            async_copy.mbarrier_arrive({pipe}_full0.index(0), increment_count=False)",
            f"            async_copy.mbarrier_arrive({pipe}_land0.index(0), increment_count=False)"]
    return "\n".join(out)


FORWARD_PRODUCER = "\n".join([
    "            rk = gl.program_id(0) % 2",
    "            tH0 = gl.load(idx_row + (2 * p) * BK + rk * 32 + gl.arange(0, 32, layout=L1))",
    "            tH1 = gl.load(idx_row + ((2 * p) + 1) * BK + rk * 32 + gl.arange(0, 32, layout=L1))",
    "            vH0 = ((tH0 >= 0) & (tH0 < s_kv))",
    "            vH1 = ((tH1 >= 0) & (tH1 < s_kv))",
    "            rH0 = (kv_ptr + (gl.where(vH0, tH0, 0).to(gl.int64)[:, None] * stride_kv_s))",
    "            rH1 = (kv_ptr + (gl.where(vH1, tH1, 0).to(gl.int64)[:, None] * stride_kv_s))",
    _forward_piece("kv0", (("kv_l", 0, "D_HALF"), ("tkv", "D_MAIN", "D_TAIL")), 20480, 0),
    _forward_piece("kv1", (("kv_r", "D_HALF", "D_HALF"), ("tkv", "D_MAIN", "D_TAIL")), 20480, 1),
    # forward each half once it landed (the producer's own cp.asyncs: its landed barrier)
    "            mbarrier.wait(kv0_land0.index(0), (g) & 1)",
    "            _tle_forward4(__OFF_kv0_kv_l__, __OFF_kv0_full0__)",
    "            _tle_forward1(__OFF_kv0_tkv__, __OFF_kv0_full0__)",
    "            mbarrier.wait(kv1_land0.index(0), (g) & 1)",
    "            _tle_forward4(__OFF_kv1_kv_r__, __OFF_kv1_full0__)",
    "            _tle_forward1(__OFF_kv1_tkv__, __OFF_kv1_full0__)",
    _forward_piece("kv0r", (("kv_r", "D_HALF", "D_HALF"),), 16384, 0),
    _forward_piece("kv1l", (("kv_l", 0, "D_HALF"),), 16384, 1),
    "            mbarrier.wait(kv0r_land0.index(0), (g) & 1)",
    "            _tle_forward4(__OFF_kv0r_kv_r__, __OFF_kv0r_full0__)",
    "            mbarrier.wait(kv1l_land0.index(0), (g) & 1)",
    "            _tle_forward4(__OFF_kv1l_kv_l__, __OFF_kv1l_full0__)",
    "    # drain: every fill released by both CTAs' consumers (the peer's remote arrives included)",
    "    GN = ROUNDS * NP",
    "    mbarrier.wait(kv0_empty0.index(0), ((GN) & 1) ^ 1)",
    "    mbarrier.wait(kv1_empty0.index(0), ((GN) & 1) ^ 1)",
    "    mbarrier.wait(kv0r_empty0.index(0), ((GN) & 1) ^ 1)",
    "    mbarrier.wait(kv1l_empty0.index(0), ((GN) & 1) ^ 1)"])


def _replace(src: str, old: str, new: str, count: int = 1) -> str:
    n = src.count(old)
    if n != count:
        raise SystemExit(f"the lowering's output changed: expected {count} x {old[:60]!r}, found {n}")
    return src.replace(old, new)


def edited_source(mode: str) -> str:
    """The Gluon module text with placeholders __OFF_<name>__ and __PARAM__."""
    from tle_compiler.lowering import gluon_source

    solo, forward = mode == "solo", mode == "forward"
    src = gluon_source((str(ROOT / "tle_kernels/sparse_mla_seesaw.py"), "sparse_mla_seesaw"), CX).source
    helpers = HELPERS
    if solo:
        helpers = helpers.replace(".multicast::cluster", "").replace(", [m], mk;", ", [m];")
    if forward:
        helpers += FORWARD_HELPERS
    src = _replace(src, "@gluon.jit\ndef _tle_store_acc(", helpers + "\n@gluon.jit\ndef _tle_store_acc(")
    if not solo:  # cluster c takes query token r * clusters + c, CTA rank k its head block k
        src = _replace(src, """        item = ((r * gl.num_programs(0)) + gl.program_id(0))
        item = gl.where((item < n_items), item, (n_items - 1))""",
                       """        qtok = ((r * (gl.num_programs(0) // 2)) + (gl.program_id(0) // 2))
        qtok = gl.where((qtok < (n_items // 2)), qtok, ((n_items // 2) - 1))
        item = ((qtok * 2) + (gl.program_id(0) % 2))""", count=3)
    producer = FORWARD_PRODUCER if forward else PRODUCER
    if solo:
        producer = (producer.replace("rk = gl.program_id(0) % 2", "rk = 0")
                    .replace("isT = (ot < 32).to(gl.int32)", "isT = (ot < 64).to(gl.int32)")
                    .replace("rowT = rk * 32 + ot % 32", "rowT = ot % 64")
                    .replace("            tiA1 = gl.load(idx_row + ((2 * p) + 1) * BK + rowA)\n",
                             "            tiA1 = gl.load(idx_row + ((2 * p) + 1) * BK + rowA)\n"
                             "            tiB0 = gl.load(idx_row + (2 * p) * BK + rowA + 32)\n"
                             "            tiB1 = gl.load(idx_row + ((2 * p) + 1) * BK + rowA + 32)\n"))
        out = []
        for line in producer.split("\n"):
            out.append(line)
            m = re.match(r"(\s*)_tle_tma_mc\((__OFF_\w+__) \+ boxA \* 8192 \+ rowA \* 128, (.*), "
                         r"tiA(\d), one, (.*)\)$", line)
            if m:  # rows 32..63 too
                out.append(f"{m.group(1)}_tle_tma_mc({m.group(2)} + boxA * 8192 + (rowA + 32) * 128, "
                           f"{m.group(3)}, tiB{m.group(4)}, one, {m.group(5)})")
        producer = "\n".join(out)
    i0 = src.index("            rows0 = (kv_ptr + ")
    i1 = src.index("\n\n@gluon.jit\ndef consumer0(")
    src = src[:i0] + producer + src[i1:]
    if not solo:  # every kv release also arrives on the peer CTA's empty barrier
        for pipe in ("kv0", "kv0r", "kv1", "kv1l"):
            pat = re.compile(r"^(\s*)mbarrier\.arrive\(" + pipe + r"_empty0\.index\(0\), count=1\)\n",
                             re.M)
            src, n = pat.subn(lambda m: m.group(0) + f"{m.group(1)}_tle_remote_arrive("
                              f"__OFF_{pipe}_empty0__)\n", src)
            assert n >= 1, pipe
    for pipe, old in (("kv0", 129), ("kv1", 129), ("kv0r", 128), ("kv1l", 128)):
        # TMA modes: one expect_tx arrive; forward: the own half's 128 per-thread cp.async arrives
        # + the expect_tx arrive for the peer's half; and a landed barrier for the forwarder
        src = _replace(src, f"mbarrier.init({pipe}_full0.index(0), count={old})",
                       f"mbarrier.init({pipe}_full0.index(0), count={129 if forward else 1})"
                       + (f"\n    mbarrier.init({pipe}_land0.index(0), count=128)" if forward else ""))
        if forward:
            src = _replace(src, f"    {pipe}_empty0 = gl.allocate_shared_memory(",
                           f"    {pipe}_land0 = gl.allocate_shared_memory(gl.int64, [1, 1], "
                           f"mbarrier.MBarrierLayout())\n    {pipe}_empty0 = gl.allocate_shared_memory(")
    if not solo:
        for pipe, old in (("kv0", 1), ("kv1", 1), ("kv0r", 2), ("kv1l", 2)):
            src = _replace(src, f"mbarrier.init({pipe}_empty0.index(0), count={old})",
                           f"mbarrier.init({pipe}_empty0.index(0), count={2 * old})")
    src = _replace(src, "n_items, n_hb, ROUNDS, TOPK: gl.constexpr, BLOCK_H: gl.constexpr):\n",
                   "n_items, n_hb, ROUNDS, kv_desc, TOPK: gl.constexpr, BLOCK_H: gl.constexpr):\n"
                   "    ready = gl.allocate_shared_memory(gl.int64, [1, 1], mbarrier.MBarrierLayout())\n"
                   "    dummy = gl.allocate_shared_memory(gl.bfloat16, [1, 1, 64], ROWS_L)\n")
    src = _replace(src, "    mbarrier.init(q_full0.index(0), count=128)",
                   "    mbarrier.init(ready.index(0), count=1)\n"
                   "    mbarrier.init(q_full0.index(0), count=128)")
    # a never-taken Gluon TMA names the descriptor, so Triton passes it as a CUtensorMap parameter
    src = _replace(src, "    fence_async_shared()\n    gl.warp_specialize([",
                   "    fence_async_shared()\n"
                   "    tma.async_copy_global_to_shared(kv_desc, [0, 0], ready.index(0), dummy.index(0), "
                   "pred=False)\n"
                   + ("" if solo else "    _tle_cluster_handshake(__OFF_ready__)\n")
                   + "    gl.warp_specialize([")
    if forward:  # the producer also waits on the landed barriers (a 4th partition would not
        # fit: 13 warps leave ptxas 128 registers for the whole kernel, below a 64x256 wgmma's need)
        src = src.replace("def producer(q_ptr,", "def producer(kv0_land0, kv1_land0, kv0r_land0, kv1l_land0, q_ptr,")
        src = src.replace("        (producer, (q_ptr,", "        (producer, (kv0_land0, kv1_land0, kv0r_land0, kv1l_land0, q_ptr,")
    return _replace(src, "from triton.experimental.gluon.language.nvidia.hopper import warpgroup_mma_init",
                    "from triton.experimental.gluon.language.nvidia.hopper import warpgroup_mma_init, tma")


def _compile(text: str):
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource

    from types import SimpleNamespace

    from tle_compiler.lowering.compile import load_module

    # the lowering's module cache (content-addressed: both compiles' texts stay importable)
    mod = load_module(SimpleNamespace(source=text, kernel="sparse_mla_seesaw_pair"))
    attrs = {(i,): [["tt.divisibility", 16]] for i, v in enumerate(SIG.values())
             if v == "i32" or v.startswith("*")}
    src = GluonASTSource(mod.sparse_mla_seesaw, SIG, constexprs=CX, attrs=attrs)
    return triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})


def generate(mode: str, attr: str):
    """(module text, compiled kernel): offsets and the tensor map's parameter from a first compile,
    baked into the second, which must allocate the same."""
    from tle_compiler.lowering.debug import barrier_offsets

    src = edited_source(mode)

    def bake(offs, param):
        s = src
        for k, v in offs.items():
            s = s.replace(f"__OFF_{k}__", str(v))
        return s.replace("__PARAM__", param)

    first = _compile(bake({k: 0 for k in NAMES}, "sparse_mla_seesaw_param_0"))
    got = barrier_offsets(first.asm["ttgir"])
    offs = {k: got[k] for k in NAMES}
    param = re.search(r"\.param \.align 64 \.b8 (sparse_mla_seesaw_param_\d+)\[128\]",
                      first.asm["ptx"]).group(1)
    text = bake(offs, param)
    compiled = _compile(text)
    if {k: barrier_offsets(compiled.asm["ttgir"])[k] for k in NAMES} != offs:
        raise SystemExit("the shared-memory allocation moved between the two compiles")
    launch = (LAUNCH.replace("__ATTR__", attr).replace("__CLUSTER__", "1" if mode == "solo" else "2")
              .replace("__OFFSETS__", repr(offs)).replace("__PARAM__", repr(param)))
    return text + launch, compiled


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", choices=("pair", "solo", "forward"), default="pair")
    ap.add_argument("-o", "--out", default=None,
                    help="module to write (default /tmp/sparse_mla_seesaw_<mode>.py); its file name "
                         "is the kernel's name for benchmarks/ab_sparse_mla.py")
    args = ap.parse_args(argv)
    out = Path(args.out or f"/tmp/sparse_mla_seesaw_{args.mode}.py")
    text, compiled = generate(args.mode, out.stem)
    out.write_text(text)
    ptx = compiled.asm["ptx"]
    print(f"wrote {out} ({args.mode}: {ptx.count('cp.async.bulk.tensor') - 1} TMA sites, "
          f"{ptx.count('multicast::cluster')} multicast, {ptx.count('mapa.')} mapa, "
          f"{ptx.count('cp.async.bulk.shared::cluster.shared::cta')} bulk forwards; "
          f"{compiled.metadata.shared} B shared memory)")


if __name__ == "__main__":
    main()
