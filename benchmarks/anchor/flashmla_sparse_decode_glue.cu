// C entry points for benchmarks/anchor_flashmla_sparse_decode.py: FlashMLA's sm90 sparse FP8 MLA
// decode on the DeepSeek-V3.2 cache (its decoding scheduler metadata kernel, its persistent
// split-KV sparse FP8 kernel at 64 and 128 query heads, and its combine kernel, all compiled
// unchanged next to this file by build_flashmla_sparse_decode_anchor.sh), with the parameters
// FlashMLA's own PyTorch binding (csrc/api/sparse_decode.h, the sm90 path taken with `indices` and
// an FP8 cache) fills in, from raw pointers, so that the library needs neither torch headers nor a
// torch extension build.
//
// The caller (the Python loader) does what the binding does with torch: it checks dtypes and
// shapes and allocates, contiguous,
//   sched_meta [num_sm_parts, anchor_sparse_decode_sched_meta_ints()] int32,
//   num_splits [b + 1] int32,
//   out [b, s_q, h_q, 512] bf16, lse [b, s_q, h_q] fp32,
//   lse_accum [b + num_sm_parts, s_q, h_q] fp32, out_accum [b + num_sm_parts, s_q, h_q, 512] fp32,
// and returns lse transposed to [b, h_q, s_q]. q [b, s_q, h_q, 576] bf16, k_cache
// [num_blocks, page_block_size, 1, 656] bytes in the V3.2 FP8 layout and indices [b, s_q, topk]
// int32 need only their last dimension contiguous (and the cache's tokens 656 bytes apart);
// strides are in elements (bytes for k_cache). attn_sink ([h_q] fp32) may be null. No
// topk_length and no extra cache: the V3.2 kernel takes neither.
//
// Every function returns 0, or a nonzero code after which anchor_sparse_decode_last_error() says
// what was refused. What the kernels cannot take is refused here: FlashMLA's metadata and combine
// host code exits the process on a failed CUDA call or assertion, and its split-KV host code throws
// a C++ exception, which is caught and reported the same way, so that nothing unwinds through the
// C boundary into Python.
#include <climits>
#include <cstdint>
#include <cstdio>
#include <exception>

#include "params.h"
#include "sm90/decode/sparse_fp8/splitkv_mla.h"
#include "smxx/decode/combine/combine.h"
#include "smxx/decode/get_decoding_sched_meta/get_decoding_sched_meta.h"

namespace {

constexpr int kHeadDimK = 576;          // q rows: 512 NoPE + 64 RoPE (the V3.2 model)
constexpr int kHeadDimV = 512;          // V is the NoPE part of the same cache
constexpr int kBytesPerToken = 656;     // 512 fp8 NoPE, 4 fp32 scales, 64 bf16 RoPE
constexpr int kTopkBlock = 64;          // index slots per step of the kernel (the binding's
                                        // block_size_topk for the scheduler)
constexpr int kFixedOverheadBlocks = 5;  // the binding's per-request cost in the scheduler (sm90)
constexpr int kMaxSplits = 160;         // the largest split count the combine kernel is built for
constexpr int kMaxGridY = 65535;        // s_q is the split-KV kernel's grid y
// The metadata kernel keeps 5 ints per request (and one more) in shared memory; sm90's opt-in
// limit per block is 227 KiB, beyond which FlashMLA's host code exits the process.
constexpr long long kMaxMetadataSmem = 227 * 1024;
constexpr float kLog2E = 1.44269504f;   // the binding's LOG_2_E, to the same float

char last_error[512] = "";

int refuse(const char* what) {
    std::snprintf(last_error, sizeof(last_error), "%s", what);
    return 1;
}

// The checks both entry points make on the schedule's shape.
int check_schedule_shape(int b, int s_q, int topk, int num_sm_parts) {
    if (b <= 0) return refuse("batch size must be positive");
    if ((5LL * b + 1) * static_cast<long long>(sizeof(int)) > kMaxMetadataSmem)
        return refuse("batch size too large for the metadata kernel's shared memory");
    if (s_q <= 0 || s_q > kMaxGridY) return refuse("s_q must lie in 1..65535");
    if (topk <= 0 || topk % kTopkBlock != 0)
        return refuse("topk must be a positive multiple of 64");
    if (num_sm_parts <= 0 || num_sm_parts > kMaxSplits) return refuse("num_sm_parts out of 1..160");
    return 0;
}

}  // namespace

// The message of the last nonzero return, "" if none.
extern "C" const char* anchor_sparse_decode_last_error() { return last_error; }

// int32 words per DecodingSchedMeta record (a row of sched_meta).
extern "C" int anchor_sparse_decode_sched_meta_ints() {
    return static_cast<int>(sizeof(DecodingSchedMeta) / sizeof(int));
}

// The binding's number of "SM parts" on sm90 (persistent CTAs, or CTA pairs at 128 heads, per
// query row, each walking a share of all requests' index blocks): SMs / s_q / (h_q / 64), at
// least 1. 0 for an h_q the kernel is not built for.
extern "C" int anchor_sparse_decode_num_sm_parts(int num_sms, int s_q, int h_q) {
    if (h_q != 64 && h_q != 128) return 0;
    if (num_sms <= 0 || s_q <= 0) return 0;
    int parts = num_sms / s_q / (h_q / 64);
    return parts > 1 ? parts : 1;
}

// FlashMLA's decoding metadata kernel: every request has topk index slots (no topk_length), split
// into 64-slot blocks over num_sm_parts; writes sched_meta and num_splits (prefix sums of splits
// per request). Runs on `stream`.
extern "C" int anchor_sparse_decode_metadata(void* sched_meta, void* num_splits, int b, int s_q,
                                             int topk, int num_sm_parts, void* stream) {
    last_error[0] = '\0';
    if (check_schedule_shape(b, s_q, topk, num_sm_parts)) return 1;
    if (sched_meta == nullptr || num_splits == nullptr) return refuse("a tensor pointer is null");
    GetDecodeSchedMetaParams p{};
    p.b = b;
    p.s_q = s_q;
    p.block_size_n = kTopkBlock;
    p.fixed_overhead_num_blocks = kFixedOverheadBlocks;
    p.topk = topk;
    // 0, not -1: the kernel adds extra tokens whenever extra_topk is nonzero, and the binding
    // passes 0 without an extra cache
    p.extra_topk = 0;
    p.topk_length = nullptr;
    p.extra_topk_length = nullptr;
    p.seqlens_k_ptr = nullptr;  // read only for dense attention (topk == -1)
    p.tile_scheduler_metadata_ptr = static_cast<DecodingSchedMeta*>(sched_meta);
    p.num_splits_ptr = static_cast<int*>(num_splits);
    p.num_sm_parts = num_sm_parts;
    p.stream = static_cast<cudaStream_t>(stream);
    smxx::decode::run_get_decoding_sched_meta_kernel(p);
    return 0;
}

// FlashMLA's sm90 sparse FP8 split-KV kernel (V3.2 cache, h_q 64 or 128), then its combine kernel
// (launched with programmatic dependent launch, as the binding does), on `stream`. sm_scale is
// the softmax scale; the kernel's softmax runs in exp2 on sm_scale * log2(e), as the binding
// passes it; lse comes out in natural-log units, +inf for a row without a valid slot.
extern "C" int anchor_sparse_decode(const void* q, const void* k_cache, const void* indices,
                                    const void* attn_sink, const void* sched_meta,
                                    const void* num_splits, void* out, void* lse, void* lse_accum,
                                    void* out_accum, int b, int s_q, int h_q, int num_blocks,
                                    int page_block_size, int topk, int num_sm_parts,
                                    float sm_scale, int stride_q_b, int stride_q_s_q,
                                    int stride_q_h_q, int stride_kv_block, int stride_kv_row,
                                    int stride_indices_b, int stride_indices_s_q, void* stream) {
    last_error[0] = '\0';
    if (check_schedule_shape(b, s_q, topk, num_sm_parts)) return 1;
    if (h_q != 64 && h_q != 128) return refuse("h_q must be 64 or 128 (the sm90 kernel's heads)");
    if (num_blocks <= 0 || page_block_size <= 0) return refuse("k_cache has no tokens");
    if (stride_kv_row != kBytesPerToken)
        return refuse("k_cache tokens must be 656 bytes apart (a block's tokens back to back)");
    if (stride_kv_block <= 0 || stride_kv_block % 16 != 0)
        return refuse("k_cache block stride must be a positive multiple of 16 bytes (the kernel "
                      "loads each token's scales 16 bytes at a time)");
    if (stride_q_b <= 0 || stride_q_s_q <= 0 || stride_q_h_q <= 0 || stride_q_b % 8 != 0 ||
        stride_q_s_q % 8 != 0 || stride_q_h_q % 8 != 0)
        return refuse("q strides must be positive multiples of 8 elements (FlashMLA loads q by "
                      "TMA)");
    if (stride_indices_b < 0 || stride_indices_s_q < 0)
        return refuse("indices strides must not be negative");
    // out's batch stride and out_accum's split stride are s_q * h_q * 512 as int, as in the binding
    if (static_cast<long long>(s_q) * h_q * kHeadDimV > INT_MAX)
        return refuse("s_q * h_q * 512 does not fit in int32 (the kernel's strides are int)");
    if (q == nullptr || k_cache == nullptr || indices == nullptr || sched_meta == nullptr ||
        num_splits == nullptr || out == nullptr || lse == nullptr || lse_accum == nullptr ||
        out_accum == nullptr)
        return refuse("a tensor pointer is null");
    if (reinterpret_cast<uintptr_t>(q) % 16 != 0 || reinterpret_cast<uintptr_t>(k_cache) % 16 != 0)
        return refuse("q and k_cache data must be 16-byte aligned");

    SparseAttnDecodeParams p{};
    p.b = b;
    p.s_q = s_q;
    p.h_q = h_q;
    p.h_kv = 1;
    p.d_qk = kHeadDimK;
    p.d_v = kHeadDimV;
    p.sm_scale = sm_scale;
    p.sm_scale_div_log2 = sm_scale * kLog2E;
    p.num_blocks = num_blocks;
    p.page_block_size = page_block_size;
    p.topk = topk;
    p.model_type = ModelType::V32;
    p.q = static_cast<cutlass::bfloat16_t*>(const_cast<void*>(q));
    p.kv = static_cast<cutlass::bfloat16_t*>(const_cast<void*>(k_cache));
    p.indices = static_cast<int*>(const_cast<void*>(indices));
    p.topk_length = nullptr;
    p.attn_sink = static_cast<float*>(const_cast<void*>(attn_sink));
    p.lse = static_cast<float*>(lse);
    p.out = static_cast<cutlass::bfloat16_t*>(out);
    // no extra cache: the binding's zeros and nulls
    p.extra_num_blocks = 0;
    p.extra_page_block_size = 0;
    p.extra_topk = 0;
    p.extra_kv = nullptr;
    p.extra_indices = nullptr;
    p.extra_topk_length = nullptr;
    p.stride_q_b = stride_q_b;
    p.stride_q_s_q = stride_q_s_q;
    p.stride_q_h_q = stride_q_h_q;
    p.stride_kv_block = stride_kv_block;
    p.stride_kv_row = stride_kv_row;
    p.stride_indices_b = stride_indices_b;
    p.stride_indices_s_q = stride_indices_s_q;
    // lse [b, s_q, h_q] and out [b, s_q, h_q, 512], contiguous
    p.stride_lse_b = s_q * h_q;
    p.stride_lse_s_q = h_q;
    p.stride_o_b = s_q * h_q * kHeadDimV;
    p.stride_o_s_q = h_q * kHeadDimV;
    p.stride_o_h_q = kHeadDimV;
    p.stride_extra_kv_block = 0;
    p.stride_extra_kv_row = 0;
    p.stride_extra_indices_b = 0;
    p.stride_extra_indices_s_q = 0;
    p.stream = static_cast<cudaStream_t>(stream);
    // lse_accum [b + num_sm_parts, s_q, h_q] and out_accum [b + num_sm_parts, s_q, h_q, 512],
    // contiguous
    p.lse_accum = static_cast<float*>(lse_accum);
    p.o_accum = static_cast<float*>(out_accum);
    p.stride_lse_accum_split = s_q * h_q;
    p.stride_lse_accum_s_q = h_q;
    p.stride_o_accum_split = s_q * h_q * kHeadDimV;
    p.stride_o_accum_s_q = h_q * kHeadDimV;
    p.stride_o_accum_h_q = kHeadDimV;
    p.tile_scheduler_metadata_ptr = static_cast<DecodingSchedMeta*>(const_cast<void*>(sched_meta));
    p.num_splits_ptr = static_cast<int*>(const_cast<void*>(num_splits));
    p.num_sm_parts = num_sm_parts;
    using sm90::decode::sparse_fp8::run_flash_splitkv_mla_fp8_sparse_kernel;
    try {
        if (h_q == 64)
            run_flash_splitkv_mla_fp8_sparse_kernel<ModelType::V32, 64>(p);
        else
            run_flash_splitkv_mla_fp8_sparse_kernel<ModelType::V32, 128>(p);
    } catch (const std::exception& e) {
        return refuse(e.what());
    } catch (...) {
        return refuse("FlashMLA's host code threw a non-standard exception");
    }

    // The binding's combine arguments, field for field.
    CombineParams c{};
    c.b = b;
    c.s_q = s_q;
    c.h_q = h_q;
    c.d_v = kHeadDimV;
    c.lse = p.lse;
    c.out = p.out;
    c.stride_lse_b = p.stride_lse_b;
    c.stride_lse_s_q = p.stride_lse_s_q;
    c.stride_o_b = p.stride_o_b;
    c.stride_o_s_q = p.stride_o_s_q;
    c.stride_o_h_q = p.stride_o_h_q;
    c.lse_accum = p.lse_accum;
    c.o_accum = p.o_accum;
    c.stride_lse_accum_split = p.stride_lse_accum_split;
    c.stride_lse_accum_s_q = p.stride_lse_accum_s_q;
    c.stride_o_accum_split = p.stride_o_accum_split;
    c.stride_o_accum_s_q = p.stride_o_accum_s_q;
    c.stride_o_accum_h_q = p.stride_o_accum_h_q;
    c.tile_scheduler_metadata_ptr = p.tile_scheduler_metadata_ptr;
    c.num_splits_ptr = p.num_splits_ptr;
    c.num_sm_parts = num_sm_parts;
    c.attn_sink = p.attn_sink;
    c.stream = p.stream;
    smxx::decode::run_flash_mla_combine_kernel<cutlass::bfloat16_t>(c);
    return 0;
}
