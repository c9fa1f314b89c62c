// C entry point for benchmarks/anchor_flashmla.py: fills FlashMLA's SparsePrefillParams (its sm90
// sparse prefill, compiled next to this file by build_flashmla_anchor.sh) from raw pointers and
// launches its kernel on the given stream. q [s_q, h_q, 576], kv [s_kv, 1, 576] bf16, indices
// [s_q, 1, topk] int32 contiguous, out [s_q, h_q, 512] bf16, max_logits / lse [s_q, h_q] fp32.
#include "fwd.h"

extern "C" int anchor_sparse_prefill(void* q, void* kv, void* indices, void* out, void* max_logits,
                                     void* lse, int s_q, int s_kv, int h_q, int topk,
                                     int stride_q_s, int stride_q_h, int stride_kv_s,
                                     float sm_scale, void* stream) {
    SparsePrefillParams p{};
    p.s_q = s_q;
    p.s_kv = s_kv;
    p.h_q = h_q;
    p.h_kv = 1;
    p.d_qk = 576;
    p.d_v = 512;
    p.topk = topk;
    p.sm_scale = sm_scale;
    p.sm_scale_div_log2 = sm_scale * 1.4426950408889634f;  // the kernel's softmax runs in exp2
    p.q = static_cast<cutlass::bfloat16_t*>(q);
    p.kv = static_cast<cutlass::bfloat16_t*>(kv);
    p.indices = static_cast<int*>(indices);
    p.stride_q_s_q = stride_q_s;
    p.stride_q_h_q = stride_q_h;
    p.stride_kv_s_kv = stride_kv_s;
    p.stride_kv_h_kv = 576;
    p.stride_indices_s_q = topk;
    p.stride_indices_h_kv = topk;
    p.out = static_cast<cutlass::bfloat16_t*>(out);
    p.max_logits = static_cast<float*>(max_logits);
    p.lse = static_cast<float*>(lse);
    p.stream = static_cast<cudaStream_t>(stream);
    sm90::run_fwd_kernel(p);
    return 0;
}
