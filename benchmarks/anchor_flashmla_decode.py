"""FlashMLA's own dense bf16 MLA decode, loaded from a shared library, to time in one process with
this project's decode kernels.

    python3 benchmarks/anchor_flashmla_decode.py --lib PATH/libanchor_flashmla_decode.so
        [--batch 128] [--s-q 1] [--heads 128] [--seqlen 4096 ...] [--causal] [--no-check]

The anchor is not part of this repository: ``--lib`` is a shared library built from FlashMLA's
public source (its metadata, sm90 split-KV decode and combine kernels, unchanged) with the C entry
points of benchmarks/anchor/flashmla_decode_glue.cu, by
benchmarks/anchor/build_flashmla_decode_anchor.sh (which FlashMLA files and commit: its header
and docs/BENCHMARKS.md). ``load_decode_anchor(path)`` returns a callable

    anchor(q, k_cache, block_table, cache_seqlens, causal=False, sm_scale=None) -> (out, lse)

with q [b, s_q, h_q, 576] bf16, k_cache [num_blocks, 64, h_k, 576] bf16, block_table [b, max_blocks]
int32, cache_seqlens [b] int32; out [b, s_q, h_q, 512] bf16, lse [b, h_q, s_q] fp32 (natural log).
It does on each call what FlashMLA's ``flash_mla_with_kvcache`` does for dense attention: the q
reshape, fresh torch allocations of the outputs and the split partials, the split-KV kernel and the
combine kernel on the current CUDA stream. The scheduler metadata is computed on the first call and
reused afterwards, as FlashMLA's ``FlashMLASchedMeta`` is, for as long as the shapes, the
``cache_seqlens`` tensor and its torch version counter stay the same (writes through torch bump
the counter and give a fresh schedule; writes by a raw kernel do not: call ``clear_schedules()``).

``__main__`` checks the anchor against an fp32 reference on small mixed batches with FlashMLA's own
test tolerances, then times it with ``triton.testing.do_bench`` (warm-up 50 ms, 200 ms, median) at
b=128, s_q=1, h_q=128, seqlens L + 2i (a random block table) and prints TFLOP/s =
2·s_q·Σseqlen·h_q·(576 + 512) / t and GB/s (KV, q and out bytes).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import math
import sys
from collections import OrderedDict

HEAD_DIM_K = 576  # q and k_cache rows: 512 NoPE + 64 RoPE
HEAD_DIM_V = 512  # V is the first 512 dims of the K cache
PAGE_BLOCK_SIZE = 64  # the only page size FlashMLA's dense decode accepts
MAX_CACHED_SCHEDULES = 16

# The glue's exported C functions: name -> (restype, argtypes). tests/test_anchor_flashmla_decode.py
# checks these against the prototypes in benchmarks/anchor/flashmla_decode_glue.cu.
SIGNATURES = {
    "anchor_decode_last_error": (ctypes.c_char_p, []),
    "anchor_decode_sched_meta_ints": (ctypes.c_int, []),
    "anchor_decode_num_sm_parts": (ctypes.c_int, [ctypes.c_int] * 4),
    "anchor_decode_metadata": (ctypes.c_int, [ctypes.c_void_p] * 3 + [ctypes.c_int] * 3
                               + [ctypes.c_void_p]),
    "anchor_decode": (ctypes.c_int, [ctypes.c_void_p] * 10 + [ctypes.c_int] * 7 + [ctypes.c_float]
                      + [ctypes.c_longlong] * 7 + [ctypes.c_void_p]),
}


def bind(lib):
    """Set restype/argtypes of the glue's functions on a loaded library (ctypes.CDLL) and return
    it; a library without one of them raises AttributeError naming it."""
    for name, (restype, argtypes) in SIGNATURES.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    return lib


class CudaDevice:
    """What the anchor asks of the CUDA runtime through torch: the SM count, the current stream
    and the device guard (FlashMLA's binding launches on q's device and its current stream).
    Host time per call matters: at short seqlens a call's GPU time is ~100 us, so the stream
    comes from the raw getter Triton's launcher uses and the SM count is read once per device."""

    def __init__(self):
        self._sms: dict = {}

    def num_sms(self, device) -> int:
        n = self._sms.get(device.index)
        if n is None:
            import torch
            props = torch.cuda.get_device_properties(device)
            n = self._sms[device.index] = props.multi_processor_count
        return n

    def stream(self, device) -> int:
        import torch
        try:
            return torch._C._cuda_getCurrentRawStream(device.index)
        except AttributeError:  # a torch without the raw getter
            return torch.cuda.current_stream(device).cuda_stream

    def guard(self, device):
        import torch
        if device.index == torch.cuda.current_device():
            return contextlib.nullcontext()
        return torch.cuda.device(device)


def _refuse(name: str, what: str) -> None:
    raise ValueError(f"FlashMLA decode anchor: {name}: {what}")


class FlashMLADecodeAnchor:
    """FlashMLA's dense decode behind a Python callable (see the module docstring)."""

    def __init__(self, lib, device=None):
        self._lib = lib
        self._device = device if device is not None else CudaDevice()
        self._meta_ints = int(lib.anchor_decode_sched_meta_ints())
        self._schedules: OrderedDict = OrderedDict()

    def clear_schedules(self) -> None:
        """Forget every computed schedule: the next call computes the metadata again."""
        self._schedules.clear()

    def _raise_if_refused(self, rc: int, fn: str) -> None:
        if rc != 0:
            msg = self._lib.anchor_decode_last_error()
            msg = msg.decode() if isinstance(msg, bytes) else str(msg)
            raise ValueError(f"FlashMLA decode anchor: {fn} refused: {msg}")

    @staticmethod
    def _validate(q, k_cache, block_table, cache_seqlens) -> None:
        """FlashMLA's binding's checks, each naming the argument (messages are built only on
        failure: this runs on every call)."""
        import torch
        qs, ks, bs = q.shape, k_cache.shape, block_table.shape
        if len(qs) != 4 or qs[3] != HEAD_DIM_K:
            _refuse("q", f"must be [b, s_q, h_q, {HEAD_DIM_K}], got {tuple(qs)}")
        if q.dtype != torch.bfloat16:
            _refuse("q", f"must be bfloat16, got {q.dtype}")
        if q.stride(3) != 1:
            _refuse("q", "last dimension must be contiguous")
        if qs[0] <= 0 or qs[1] <= 0:
            _refuse("q", "batch and s_q must be positive")
        if len(ks) != 4 or ks[1] != PAGE_BLOCK_SIZE or ks[3] != HEAD_DIM_K:
            _refuse("k_cache", f"must be [num_blocks, {PAGE_BLOCK_SIZE}, h_k, {HEAD_DIM_K}], "
                    f"got {tuple(ks)}")
        if k_cache.dtype != q.dtype:
            _refuse("k_cache", f"must be {q.dtype}, got {k_cache.dtype}")
        if k_cache.stride(3) != 1:
            _refuse("k_cache", "last dimension must be contiguous")
        if qs[2] % ks[2] != 0:
            _refuse("k_cache", f"h_k={ks[2]} must divide h_q={qs[2]}")
        if len(bs) != 2 or bs[0] != qs[0]:
            _refuse("block_table", f"must be [{qs[0]}, max_blocks], got {tuple(bs)}")
        if block_table.dtype != torch.int32:
            _refuse("block_table", f"must be int32, got {block_table.dtype}")
        if block_table.stride(1) != 1:
            _refuse("block_table", "last dimension must be contiguous")
        if cache_seqlens.shape != (qs[0],):
            _refuse("cache_seqlens", f"must be [{qs[0]}], got {tuple(cache_seqlens.shape)}")
        if cache_seqlens.dtype != torch.int32:
            _refuse("cache_seqlens", f"must be int32, got {cache_seqlens.dtype}")
        if not cache_seqlens.is_contiguous():
            _refuse("cache_seqlens", "must be contiguous")
        device = q.device
        for name, t in (("k_cache", k_cache), ("block_table", block_table),
                        ("cache_seqlens", cache_seqlens)):
            if t.device != device:
                _refuse(name, f"must be on {device}, got {t.device}")

    def _schedule(self, cache_seqlens, b: int, s_q: int, num_sm_parts: int, stream: int):
        """(sched_meta, num_splits) for these seqlens, computed by FlashMLA's metadata kernel on
        the first call and reused while the key below stays the same."""
        import torch
        try:
            version = cache_seqlens._version
        except RuntimeError:  # inference tensors have no version counter: reuse by identity
            version = None
        key = (b, s_q, num_sm_parts, cache_seqlens.data_ptr(), version)
        hit = self._schedules.get(key)
        if hit is not None:
            return hit[1], hit[2]
        meta = torch.empty((num_sm_parts, self._meta_ints), dtype=torch.int32,
                           device=cache_seqlens.device)
        splits = torch.empty((b + 1,), dtype=torch.int32, device=cache_seqlens.device)
        rc = self._lib.anchor_decode_metadata(cache_seqlens.data_ptr(), meta.data_ptr(),
                                              splits.data_ptr(), b, s_q, num_sm_parts, stream)
        self._raise_if_refused(rc, "anchor_decode_metadata")
        # the entry holds cache_seqlens, so its address cannot be reused by another tensor
        self._schedules[key] = (cache_seqlens, meta, splits)
        while len(self._schedules) > MAX_CACHED_SCHEDULES:
            self._schedules.popitem(last=False)
        return meta, splits

    def __call__(self, q, k_cache, block_table, cache_seqlens, causal: bool = False,
                 sm_scale: float | None = None):
        import torch
        self._validate(q, k_cache, block_table, cache_seqlens)
        if sm_scale is None:
            sm_scale = HEAD_DIM_K ** -0.5
        b, s_q, h_q, d = q.shape
        num_blocks, _, h_k, _ = k_cache.shape
        hq_per_hk = h_q // h_k
        rows = s_q * hq_per_hk  # the binding's q_seq_per_hk: rows (s, head) per KV head
        device = q.device
        with self._device.guard(device) if q.is_cuda else contextlib.nullcontext():
            stream = self._device.stream(device)
            num_sm_parts = int(self._lib.anchor_decode_num_sm_parts(
                self._device.num_sms(device), s_q, h_q, h_k))
            meta, splits = self._schedule(cache_seqlens, b, s_q, num_sm_parts, stream)
            if h_k == 1:
                # the binding's reshape is a view here: row s*h_q + h of q[b] is q[b, s, h], at
                # stride q.stride(2) when the heads of consecutive s_q are contiguous
                if s_q == 1 or q.stride(1) == h_q * q.stride(2):
                    q_strides = (q.stride(0), q.stride(2), rows * q.stride(2))
                else:
                    qr = q.reshape(b, rows, 1, d)
                    q_strides = qr.stride()[:3]
                    q = qr
                out = torch.empty((b, s_q, h_q, HEAD_DIM_V), dtype=q.dtype, device=device)
                lse = torch.empty((b, s_q, h_q), dtype=torch.float32, device=device)
            else:
                q = q.view(b, s_q, h_k, hq_per_hk, d).transpose(2, 3).reshape(b, rows, h_k, d)
                q_strides = q.stride()[:3]
                out = torch.empty((b, h_k, rows, HEAD_DIM_V), dtype=q.dtype, device=device)
                lse = torch.empty((b, h_k, rows), dtype=torch.float32, device=device)
            total_splits = b + num_sm_parts
            lse_accum = torch.empty((total_splits, h_k, rows), dtype=torch.float32, device=device)
            out_accum = torch.empty((total_splits, h_k, rows, HEAD_DIM_V), dtype=torch.float32,
                                    device=device)
            rc = self._lib.anchor_decode(
                q.data_ptr(), k_cache.data_ptr(), block_table.data_ptr(),
                cache_seqlens.data_ptr(), meta.data_ptr(), splits.data_ptr(), out.data_ptr(),
                lse.data_ptr(), lse_accum.data_ptr(), out_accum.data_ptr(),
                b, s_q, h_q, h_k, num_blocks, num_sm_parts, int(bool(causal)), float(sm_scale),
                *q_strides, *k_cache.stride()[:3], block_table.stride(0), stream)
            self._raise_if_refused(rc, "anchor_decode")
        if h_k == 1:  # out [b, 1, rows, 512] and lse [b, 1, rows] are these layouts already
            return out, lse.transpose(1, 2)
        out = out.view(b, h_k, s_q, hq_per_hk, HEAD_DIM_V).transpose(1, 2).reshape(
            b, s_q, h_q, HEAD_DIM_V)
        lse = lse.view(b, h_k, s_q, hq_per_hk).transpose(2, 3).reshape(b, h_q, s_q)
        return out, lse


def load_decode_anchor(path: str) -> FlashMLADecodeAnchor:
    """The anchor callable from the shared library at `path` (see the module docstring)."""
    return FlashMLADecodeAnchor(bind(ctypes.CDLL(str(path))))


# ---------------------------------------------------------------------------------------------
# The script: a correctness check against fp32, then a timing.

def decode_reference(q, k_cache, block_table, cache_seqlens, causal, sm_scale):
    """fp32 MLA decode: query j of request i sees its first cache_seqlens[i] tokens (with causal
    and s_q > 1, those t < seqlen - s_q + j + 1); a query that sees none gives out 0, lse +inf."""
    import torch
    b, s_q, h_q, _ = q.shape
    h_k = k_cache.shape[2]
    out = torch.zeros((b, s_q, h_q, HEAD_DIM_V), dtype=torch.float32, device=q.device)
    lse = torch.full((b, h_q, s_q), math.inf, dtype=torch.float32, device=q.device)
    for i, n in enumerate(cache_seqlens.tolist()):
        if n == 0:
            continue
        blocks = block_table[i, :math.ceil(n / PAGE_BLOCK_SIZE)].long()
        kv = k_cache[blocks].reshape(-1, h_k, HEAD_DIM_K)[:n].float()
        kv = kv.repeat_interleave(h_q // h_k, dim=1)  # [n, h_q, 576]
        s = torch.einsum("shd,nhd->hsn", q[i].float(), kv) * sm_scale
        if causal and s_q > 1:
            t = torch.arange(n, device=q.device)
            j = torch.arange(s_q, device=q.device)
            s = s.masked_fill(t[None, :] >= (n - s_q + j + 1)[:, None], -math.inf)
        row_lse = torch.logsumexp(s, dim=-1)  # [h_q, s_q]
        seen = torch.isfinite(row_lse)
        p = torch.exp(s - torch.where(seen, row_lse, 0.0)[..., None])
        o = torch.einsum("hsn,nhd->shd", p, kv[..., :HEAD_DIM_V])
        out[i] = torch.where(seen.T[..., None], o, 0.0)
        lse[i] = torch.where(seen, row_lse, math.inf)
    return out, lse


def allclose_like_flashmla(ans, ref, abs_tol: float, rel_tol: float) -> tuple[bool, float]:
    """FlashMLA's test criterion: inf/nan at the same places, and every other element within
    abs_tol or within rel_tol relative; also returns the largest absolute error."""
    import torch
    ans, ref = ans.float(), ref.float()
    for special in (math.inf, -math.inf):
        if not torch.equal(ans == special, ref == special):
            return False, math.inf
    if not torch.equal(ans.isnan(), ref.isnan()):
        return False, math.inf
    finite = torch.isfinite(ref)
    err = (ans - ref).abs()[finite]
    rel = err / (ref.abs()[finite] + 1e-6)
    ok = bool(((err < abs_tol) | (rel < rel_tol)).all())
    return ok, float(err.max()) if err.numel() else 0.0


def make_decode_inputs(b, s_q, h_q, h_k, seqlens, seed=0, poison=False, device="cuda"):
    """q, k_cache (randn/10 clamped to ±1, bf16), a random permutation of blocks as the block
    table, cache_seqlens, as FlashMLA's decode test makes them. With `poison`, as that test also
    does, cache rows past a request's length are NaN and its unused block-table entries point far
    outside the cache, so an anchor that reads them fails the check."""
    import torch
    torch.manual_seed(seed)
    max_blocks = max(1, math.ceil(max(seqlens) / PAGE_BLOCK_SIZE))
    block_table = torch.randperm(b * max_blocks, device=device).to(torch.int32).view(b, max_blocks)
    shape = (b * max_blocks, PAGE_BLOCK_SIZE, h_k, HEAD_DIM_K)
    k_cache = (torch.randn(shape, device=device) / 10).clamp(-1, 1).to(torch.bfloat16)
    q = (torch.randn(b, s_q, h_q, HEAD_DIM_K, device=device) / 10).clamp(-1, 1).to(torch.bfloat16)
    if poison:
        for i, n in enumerate(seqlens):
            used = math.ceil(n / PAGE_BLOCK_SIZE)
            k_cache[block_table[i, used:].long()] = float("nan")
            if n % PAGE_BLOCK_SIZE:
                k_cache[block_table[i, used - 1].long(), n % PAGE_BLOCK_SIZE:] = float("nan")
            block_table[i, used:] = 2147480000
    cache_seqlens = torch.tensor(seqlens, dtype=torch.int32, device=device)
    return q, k_cache, block_table, cache_seqlens


def check(anchor) -> bool:
    """The anchor against the fp32 reference on mixed batches; prints one line per case."""
    import torch
    all_ok = True
    for s_q, h_q, h_k, causal in ((1, 128, 1, False), (2, 128, 1, True), (2, 64, 1, False),
                                  (1, 16, 1, False), (1, 32, 2, False)):
        seqlens = [0, s_q, 63, 64, 65, 129, 1000, 4097]
        q, k_cache, block_table, seqlens_t = make_decode_inputs(len(seqlens), s_q, h_q, h_k,
                                                                seqlens, seed=s_q * 1000 + h_q,
                                                                poison=True)
        sm_scale = HEAD_DIM_K ** -0.5
        out, lse = anchor(q, k_cache, block_table, seqlens_t, causal, sm_scale)
        want_out, want_lse = decode_reference(q, k_cache, block_table, seqlens_t, causal, sm_scale)
        torch.cuda.synchronize()
        ok_o, err_o = allclose_like_flashmla(out, want_out.to(torch.bfloat16), 8e-4, 2.01 / 128)
        ok_l, err_l = allclose_like_flashmla(lse, want_lse, 1e-6, 8.01 / 65536)
        all_ok &= ok_o and ok_l
        print(f"check s_q={s_q} h_q={h_q} h_k={h_k} causal={causal} seqlens={seqlens}: out max "
              f"abs err {err_o:.1e} {'ok' if ok_o else 'FAIL'}, lse max abs err {err_l:.1e} "
              f"{'ok' if ok_l else 'FAIL'}", flush=True)
    return all_ok


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", required=True, help="the anchor shared library (see the docstring)")
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--s-q", type=int, default=1)
    ap.add_argument("--heads", type=int, default=128)
    ap.add_argument("--seqlen", type=int, nargs="+", default=[4096],
                    help="L: request i has L + 2i tokens")
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--no-check", action="store_true", help="skip the fp32 check")
    args = ap.parse_args(argv)

    import torch
    import triton

    anchor = load_decode_anchor(args.lib)
    print(f"device: {torch.cuda.get_device_name()}", flush=True)
    if not args.no_check and not check(anchor):
        print("the anchor does not match the fp32 reference", file=sys.stderr)
        return 1
    b, s_q, h_q = args.batch, args.s_q, args.heads
    for L in args.seqlen:
        seqlens = [L + 2 * i for i in range(b)]
        q, k_cache, block_table, seqlens_t = make_decode_inputs(b, s_q, h_q, 1, seqlens, seed=L)
        fn = lambda: anchor(q, k_cache, block_table, seqlens_t, args.causal)  # noqa: E731
        fn()  # the first call computes the schedule, as in serving
        t_ms = triton.testing.do_bench(fn, warmup=50, rep=200, return_mode="median")
        flop = 2 * s_q * sum(seqlens) * h_q * (HEAD_DIM_K + HEAD_DIM_V)
        nbytes = (sum(seqlens) * HEAD_DIM_K + b * s_q * h_q * (HEAD_DIM_K + HEAD_DIM_V)) * 2
        print(f"b={b} s_q={s_q} h_q={h_q} L={L} causal={args.causal}: {t_ms * 1e3:8.1f} us  "
              f"{flop / t_ms / 1e9:6.1f} TFLOP/s  {nbytes / t_ms / 1e6:7.1f} GB/s", flush=True)
        del q, k_cache
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
