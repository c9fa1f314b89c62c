#!/usr/bin/env bash
# Build the FlashMLA sparse-prefill anchor library for benchmarks/anchor_flashmla_prefill.py (on any
# machine with nvcc >= 12.9; no GPU and no torch needed). FlashMLA's source is not part of this
# repository:
#   FLASHMLA_SRC  the root of a deepseek-ai/FlashMLA checkout, e.g. at commit
#                 9241ae3ef9bac614dd25e45e507e089f888280e0 (2026-04-29), the one this script was
#                 written against. Compiled from it, unchanged:
#                   csrc/sm90/prefill/sparse/fwd.cu (picks the kernel by d_qk and topk_length)
#                   csrc/sm90/prefill/sparse/instantiations/phase1_k512.cu, phase1_k512_topklen.cu,
#                     phase1_k576.cu, phase1_k576_topklen.cu (the kernel, csrc/sm90/prefill/sparse/
#                     phase1.cuh, at d_qk 512 / 576, without / with topk_length; attn_sink is a
#                     runtime pointer of each)
#                 with the headers they include (csrc/, csrc/kerutils/include, csrc/sm90).
#   CUTLASS_INC   CUTLASS's include folder (cute/, cutlass/). FlashMLA pins NVIDIA/cutlass at
#                 147f5673d0c1c3dcf66f78d677fd647e4a020219 as its csrc/cutlass submodule; default:
#                 $FLASHMLA_SRC/csrc/cutlass/include when that submodule is checked out.
#   NVCC_THREADS  optional: nvcc --threads (files compiled in parallel; each kernel takes minutes)
# The nvcc flags are FlashMLA's own (its setup.py) for sm_90a.
# Usage: FLASHMLA_SRC=... [CUTLASS_INC=...] [NVCC_THREADS=2] \
#            benchmarks/anchor/build_flashmla_prefill_anchor.sh OUT.so
set -euo pipefail
out=${1:?usage: FLASHMLA_SRC=... [CUTLASS_INC=...] $0 OUT.so}
here=$(cd "$(dirname "$0")" && pwd)
: "${FLASHMLA_SRC:?set FLASHMLA_SRC to a FlashMLA checkout}"
CUTLASS_INC=${CUTLASS_INC:-$FLASHMLA_SRC/csrc/cutlass/include}
csrc=$FLASHMLA_SRC/csrc
sparse=$csrc/sm90/prefill/sparse
sources=("$sparse/fwd.cu")
for v in k512 k512_topklen k576 k576_topklen; do
    sources+=("$sparse/instantiations/phase1_$v.cu")
done
for f in "$csrc/params.h" "$sparse/phase1.cuh" "${sources[@]}" "$CUTLASS_INC/cute/tensor.hpp"; do
    [[ -f $f ]] || { echo "missing $f (check FLASHMLA_SRC / CUTLASS_INC)" >&2; exit 1; }
done
mkdir -p "$(dirname "$out")"
echo "building $out from $sparse (sm_90a) ..." >&2
nvcc -std=c++20 -O3 -DNDEBUG -D_USE_MATH_DEFINES \
     -Wno-deprecated-declarations -U__CUDA_NO_HALF_OPERATORS__ -U__CUDA_NO_HALF_CONVERSIONS__ \
     -U__CUDA_NO_HALF2_OPERATORS__ -U__CUDA_NO_BFLOAT16_CONVERSIONS__ \
     --expt-relaxed-constexpr --expt-extended-lambda --use_fast_math \
     --ptxas-options=--register-usage-level=10,--warn-on-spills,--warn-on-local-memory-usage \
     -gencode arch=compute_90a,code=sm_90a ${NVCC_THREADS:+--threads "$NVCC_THREADS"} \
     -I "$csrc" -I "$csrc/kerutils/include" -I "$csrc/sm90" -I "$CUTLASS_INC" \
     -shared -Xcompiler -fPIC \
     "${sources[@]}" "$here/flashmla_prefill_glue.cu" -o "$out"
echo "wrote $out" >&2
