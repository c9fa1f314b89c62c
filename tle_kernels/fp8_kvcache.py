"""The DeepSeek-V3.2 FP8 KV-cache layout of the sparse MLA decode (FlashMLA's ``is_fp8_kvcache``
format): how a 576-dim bf16 K row (512 NoPE dims, which are also V, then 64 RoPE dims) is stored
in 656 bytes, and the quantizer / dequantizer between the two forms.

One token's 656 bytes, in order (a cache is [num_blocks, page_block_size, 1, 656], uint8 /
int8 / float8_e4m3fn, tokens of a block back to back):

    bytes   0 .. 511   512 float8_e4m3fn   NoPE dims, quantized
    bytes 512 .. 527     4 float32         scale of NoPE dims [128 t, 128 t + 128), t = 0 .. 3
    bytes 528 .. 655    64 bfloat16        RoPE dims, stored as they are (not quantized)

A NoPE value is ``fp8 * scale``. ``quantize`` picks each 128-dim tile's scale as FlashMLA's
tests do: the power of two 2^ceil(log2(max(amax / 448, 1e-4))), amax the tile's largest |x|
(448 is e4m3's largest finite value), so x / scale is exact, fits e4m3 and rounds to the nearest
e4m3 value. With a power-of-two scale ``fp8 * scale`` is a bf16 value again, so ``dequantize``
returns exactly what was stored and a bf16 kernel sees the same K.
"""

from __future__ import annotations

from typing import Tuple

import torch

D_NOPE = 512                 # quantized dims (also the V dims)
D_ROPE = 64                  # bf16 dims
D_QK = D_NOPE + D_ROPE       # 576
TILE = 128                   # NoPE dims per scale
N_SCALES = D_NOPE // TILE    # 4
SCALE_OFFSET = D_NOPE                        # byte 512: the 4 float32 scales
ROPE_OFFSET = SCALE_OFFSET + 4 * N_SCALES    # byte 528: the 64 bf16 RoPE values
BYTES_PER_TOKEN = ROPE_OFFSET + 2 * D_ROPE   # 656

FP8_MAX = 448.0              # largest finite float8_e4m3fn
MIN_SCALE_BASE = 1e-4        # amax / 448 below this still gets 2^ceil(log2(1e-4)) = 2^-13
CACHE_DTYPES = (torch.uint8, torch.int8, torch.float8_e4m3fn)


def tile_scales(nope: torch.Tensor) -> torch.Tensor:
    """The float32 scales [..., 4] of NoPE values [..., 512]: per 128-dim tile the power of two
    2^ceil(log2(max(amax / 448, 1e-4))). A NaN in a tile makes its scale NaN (as it does in
    FlashMLA's quantizer), so a poisoned token stays poisoned."""
    amax = nope.float().abs().unflatten(-1, (N_SCALES, TILE)).amax(dim=-1)
    return torch.pow(2.0, torch.clamp_min(amax / FP8_MAX, MIN_SCALE_BASE).log2().ceil())


def quantize(kv: torch.Tensor) -> torch.Tensor:
    """bf16 K rows [..., 576] (a cache [num_blocks, page_block_size, 1, 576]) -> uint8 cache
    [..., 656] in the layout of this module's docstring, contiguous."""
    if not isinstance(kv, torch.Tensor) or kv.dtype != torch.bfloat16:
        raise TypeError(f"kv: expected a bf16 tensor [..., {D_QK}], got "
                        f"{getattr(kv, 'dtype', type(kv).__name__)}")
    if kv.dim() < 1 or kv.shape[-1] != D_QK:
        raise ValueError(f"kv: last dim must be {D_QK}, got shape {tuple(kv.shape)}")
    lead = kv.shape[:-1]
    out = torch.empty(*lead, BYTES_PER_TOKEN, dtype=torch.uint8, device=kv.device)
    nope = kv[..., :D_NOPE].float()
    scales = tile_scales(nope)                                                  # [..., 4]
    q8 = (nope.unflatten(-1, (N_SCALES, TILE)) / scales[..., None]).flatten(-2)
    out[..., :D_NOPE] = q8.to(torch.float8_e4m3fn).view(torch.uint8)
    out[..., SCALE_OFFSET:ROPE_OFFSET] = scales.contiguous().view(torch.uint8)
    out[..., ROPE_OFFSET:] = kv[..., D_NOPE:].contiguous().view(torch.uint8)
    return out


def split_token_bytes(cache: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The three parts of cache rows [..., 656]: NoPE float8_e4m3fn [..., 512], scales float32
    [..., 4] and RoPE bf16 [..., 64] (copies, contiguous)."""
    if not isinstance(cache, torch.Tensor) or cache.dtype not in CACHE_DTYPES:
        raise TypeError(f"cache: expected a uint8, int8 or float8_e4m3fn tensor [..., "
                        f"{BYTES_PER_TOKEN}], got {getattr(cache, 'dtype', type(cache).__name__)}")
    if cache.dim() < 1 or cache.shape[-1] != BYTES_PER_TOKEN:
        raise ValueError(f"cache: last dim must be {BYTES_PER_TOKEN} bytes per token, got shape "
                         f"{tuple(cache.shape)}")
    raw = cache.view(torch.uint8)
    nope = raw[..., :D_NOPE].contiguous().view(torch.float8_e4m3fn)
    scales = raw[..., SCALE_OFFSET:ROPE_OFFSET].contiguous().view(torch.float32)
    rope = raw[..., ROPE_OFFSET:].contiguous().view(torch.bfloat16)
    return nope, scales, rope


def dequantize(cache: torch.Tensor) -> torch.Tensor:
    """uint8 / int8 / float8_e4m3fn cache rows [..., 656] -> bf16 K rows [..., 576]: NoPE dim d is
    bf16(fp8[d] * scale[d // 128]) (the product in fp32, exact for power-of-two scales), RoPE
    dims the stored bf16 values."""
    nope, scales, rope = split_token_bytes(cache)
    values = nope.float().unflatten(-1, (N_SCALES, TILE)) * scales[..., None]
    return torch.cat([values.flatten(-2).to(torch.bfloat16), rope], dim=-1)
