#!/usr/bin/env bash
# Build the FlashMLA anchor library for benchmarks/anchor_flashmla.py (on any machine with nvcc >= 12.8;
# no GPU needed). FlashMLA's source is not part of this repository:
#   FLASHMLA_SRC  a folder holding FlashMLA's sm90 sparse prefill kernel file fwd.cu and the headers it
#                 includes (fwd.h, params.h, utils.h, helpers.h), e.g. from deepseek-ai/FlashMLA at
#                 commit e77c3068 (csrc/sm90/prefill/sparse/ plus csrc/utils.h and csrc/params.h)
#   CUTLASS_INC   CUTLASS's include folder (cute/, cutlass/), e.g. from the nvidia-cutlass wheel:
#                 cutlass_library/source/include
# Usage: FLASHMLA_SRC=... CUTLASS_INC=... benchmarks/anchor/build_flashmla_anchor.sh OUT.so
set -euo pipefail
out=${1:?usage: FLASHMLA_SRC=... CUTLASS_INC=... $0 OUT.so}
here=$(cd "$(dirname "$0")" && pwd)
: "${FLASHMLA_SRC:?set FLASHMLA_SRC}" "${CUTLASS_INC:?set CUTLASS_INC}"
echo "building $out from $FLASHMLA_SRC/fwd.cu (sm_90a) ..." >&2
nvcc -std=c++17 -O3 -DNDEBUG -gencode arch=compute_90a,code=sm_90a --expt-relaxed-constexpr \
     --expt-extended-lambda -I "$CUTLASS_INC" -I "$FLASHMLA_SRC" -shared -Xcompiler -fPIC \
     "$FLASHMLA_SRC/fwd.cu" "$here/flashmla_glue.cu" -o "$out"
echo "wrote $out" >&2
