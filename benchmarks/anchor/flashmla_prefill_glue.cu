// C entry point for benchmarks/anchor_flashmla_prefill.py: FlashMLA's sm90 sparse prefill (its
// d_qk 512 / 576 kernels with and without topk_length, and the dispatcher that picks one, all
// compiled unchanged next to this file by build_flashmla_prefill_anchor.sh), with the parameters
// FlashMLA's own PyTorch binding (csrc/api/sparse_fwd.h) fills in, from raw pointers, so that the
// library needs neither torch headers nor a torch extension build.
//
// The caller (the Python loader) does what the binding does with torch: it checks dtypes and shapes
// and allocates, contiguous, out [s_q, h_q, 512] bf16 and max_logits / lse [s_q, h_q] fp32 (the
// kernel's output tensor map and its bulk stores of max_logits and lse assume these layouts).
// q [s_q, h_q, d_qk], kv [s_kv, 1, d_qk] bf16 and indices [s_q, 1, topk] int32 need only their
// last dimension contiguous; strides are in elements.
//
// Returns 0, or a nonzero code after which anchor_prefill_last_error() says what was refused. The
// shapes the kernel cannot take are refused here, before FlashMLA's host code (which throws on a
// failed assertion) sees them; a C++ exception it throws anyway is caught and reported the same
// way, so that nothing unwinds through the C boundary into Python.
#include <climits>
#include <cstdio>
#include <exception>

#include "params.h"
#include "sm90/prefill/sparse/fwd.h"

namespace {

constexpr int kHeadDimV = 512;      // V is the first 512 dims of each kv row
constexpr int kTopkGranule = 128;   // the kernel walks topk in pairs of 64-slot blocks
constexpr float kLog2E = 1.44269504f;  // the binding's LOG_2_E, to the same float

char last_error[512] = "";

int refuse(const char* what) {
    std::snprintf(last_error, sizeof(last_error), "%s", what);
    return 1;
}

bool fits_int(long long v) { return v >= INT_MIN && v <= INT_MAX; }

}  // namespace

// The message of the last nonzero return, "" if none.
extern "C" const char* anchor_prefill_last_error() { return last_error; }

// FlashMLA's sparse prefill on `stream`. attn_sink ([h_q] fp32) and topk_length ([s_q] int32) may
// be null; topk_length[i] must lie in [0, topk] (the kernel reads index slots up to it). sm_scale
// is the softmax scale; the kernel's softmax runs in exp2, on sm_scale * log2(e), as the binding
// passes it. lse and max_logits come out in natural-log units.
extern "C" int anchor_sparse_prefill(const void* q, const void* kv, const void* indices, void* out,
                                     void* max_logits, void* lse, int s_q, int s_kv, int h_q,
                                     int d_qk, int topk, long long stride_q_s, long long stride_q_h,
                                     long long stride_kv_s, long long stride_indices_s,
                                     float sm_scale, const void* attn_sink,
                                     const void* topk_length, int num_sms, void* stream) {
    last_error[0] = '\0';
    if (s_q <= 0) return refuse("s_q must be positive (a launch of zero CTAs fails)");
    if (s_kv <= 0) return refuse("s_kv must be positive");
    if (h_q != 64 && h_q != 128) return refuse("h_q must be 64 or 128 (the binding's head counts)");
    if (d_qk != 512 && d_qk != 576) return refuse("d_qk must be 512 or 576");
    if (topk <= 0 || topk % kTopkGranule != 0)
        return refuse("topk must be a positive multiple of 128");
    if (!fits_int(stride_q_s) || !fits_int(stride_q_h) || !fits_int(stride_kv_s) ||
        !fits_int(stride_indices_s))
        return refuse("a stride does not fit in int32 (the kernel's strides are int)");
    if (q == nullptr || kv == nullptr || indices == nullptr || out == nullptr ||
        max_logits == nullptr || lse == nullptr)
        return refuse("a tensor pointer is null");

    SparseAttnFwdParams p{};
    p.s_q = s_q;
    p.s_kv = s_kv;
    p.h_q = h_q;
    p.h_kv = 1;
    p.d_qk = d_qk;
    p.d_v = kHeadDimV;
    p.topk = topk;
    p.sm_scale = sm_scale;
    p.sm_scale_div_log2 = sm_scale * kLog2E;
    p.q = static_cast<cutlass::bfloat16_t*>(const_cast<void*>(q));
    p.kv = static_cast<cutlass::bfloat16_t*>(const_cast<void*>(kv));
    p.indices = static_cast<int*>(const_cast<void*>(indices));
    p.attn_sink = static_cast<float*>(const_cast<void*>(attn_sink));
    p.topk_length = static_cast<int*>(const_cast<void*>(topk_length));
    p.stride_q_s_q = static_cast<int>(stride_q_s);
    p.stride_q_h_q = static_cast<int>(stride_q_h);
    p.stride_kv_s_kv = static_cast<int>(stride_kv_s);
    // h_kv is 1: the binding passes the strides of that size-1 dim, which the kernel never reads;
    // these are the values a contiguous tensor has there
    p.stride_kv_h_kv = d_qk;
    p.stride_indices_s_q = static_cast<int>(stride_indices_s);
    p.stride_indices_h_kv = topk;
    p.out = static_cast<cutlass::bfloat16_t*>(out);
    p.max_logits = static_cast<float*>(max_logits);
    p.lse = static_cast<float*>(lse);
    p.num_sm = num_sms;
    p.stream = static_cast<cudaStream_t>(stream);
    try {
        sm90::run_fwd_kernel(p);
    } catch (const std::exception& e) {
        return refuse(e.what());
    } catch (...) {
        return refuse("FlashMLA's host code threw a non-standard exception");
    }
    return 0;
}
