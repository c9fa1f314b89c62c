#!/usr/bin/env bash
# Build the FlashMLA sparse FP8 decode anchor library for
# benchmarks/anchor_flashmla_sparse_decode.py (on any machine with nvcc >= 12.9; no GPU and no
# torch needed). FlashMLA's source is not part of this repository:
#   FLASHMLA_SRC  the root of a deepseek-ai/FlashMLA checkout, e.g. at commit
#                 9241ae3ef9bac614dd25e45e507e089f888280e0 (2026-04-29), the one this script was
#                 written against. Compiled from it, unchanged:
#                   csrc/smxx/decode/get_decoding_sched_meta/get_decoding_sched_meta.cu (metadata)
#                   csrc/sm90/decode/sparse_fp8/instantiations/v32_persistent_h64.cu and
#                     v32_persistent_h128.cu (the persistent split-KV sparse FP8 kernel,
#                     csrc/sm90/decode/sparse_fp8/splitkv_mla.cuh, on the DeepSeek-V3.2 cache at
#                     64 and 128 query heads; attn_sink is a runtime pointer of each)
#                   csrc/smxx/decode/combine/combine.cu (the combine kernel)
#                 with the headers they include (csrc/, csrc/kerutils/include, csrc/sm90).
#   CUTLASS_INC   CUTLASS's include folder (cute/, cutlass/). FlashMLA pins NVIDIA/cutlass at
#                 147f5673d0c1c3dcf66f78d677fd647e4a020219 as its csrc/cutlass submodule; default:
#                 $FLASHMLA_SRC/csrc/cutlass/include when that submodule is checked out.
#   NVCC_THREADS  optional: nvcc --threads (files compiled in parallel; each kernel takes minutes)
# The nvcc flags are FlashMLA's own (its setup.py) for sm_90a, fp16 instantiations left out (the
# combine kernel's; the decode writes bf16).
# Usage: FLASHMLA_SRC=... [CUTLASS_INC=...] [NVCC_THREADS=2] \
#            benchmarks/anchor/build_flashmla_sparse_decode_anchor.sh OUT.so
set -euo pipefail
out=${1:?usage: FLASHMLA_SRC=... [CUTLASS_INC=...] $0 OUT.so}
here=$(cd "$(dirname "$0")" && pwd)
: "${FLASHMLA_SRC:?set FLASHMLA_SRC to a FlashMLA checkout}"
CUTLASS_INC=${CUTLASS_INC:-$FLASHMLA_SRC/csrc/cutlass/include}
csrc=$FLASHMLA_SRC/csrc
sparse=$csrc/sm90/decode/sparse_fp8
sources=("$csrc/smxx/decode/get_decoding_sched_meta/get_decoding_sched_meta.cu")
for h in 64 128; do
    sources+=("$sparse/instantiations/v32_persistent_h$h.cu")
done
sources+=("$csrc/smxx/decode/combine/combine.cu")
for f in "$csrc/params.h" "$sparse/splitkv_mla.cuh" "${sources[@]}" \
         "$CUTLASS_INC/cute/tensor.hpp"; do
    [[ -f $f ]] || { echo "missing $f (check FLASHMLA_SRC / CUTLASS_INC)" >&2; exit 1; }
done
mkdir -p "$(dirname "$out")"
echo "building $out from $csrc (sm_90a) ..." >&2
nvcc -std=c++20 -O3 -DNDEBUG -D_USE_MATH_DEFINES -DFLASH_MLA_DISABLE_FP16 \
     -Wno-deprecated-declarations -U__CUDA_NO_HALF_OPERATORS__ -U__CUDA_NO_HALF_CONVERSIONS__ \
     -U__CUDA_NO_HALF2_OPERATORS__ -U__CUDA_NO_BFLOAT16_CONVERSIONS__ \
     --expt-relaxed-constexpr --expt-extended-lambda --use_fast_math \
     --ptxas-options=--register-usage-level=10,--warn-on-spills,--warn-on-local-memory-usage \
     -gencode arch=compute_90a,code=sm_90a ${NVCC_THREADS:+--threads "$NVCC_THREADS"} \
     -I "$csrc" -I "$csrc/kerutils/include" -I "$csrc/sm90" -I "$CUTLASS_INC" \
     -shared -Xcompiler -fPIC \
     "${sources[@]}" "$here/flashmla_sparse_decode_glue.cu" -o "$out"
echo "wrote $out" >&2
