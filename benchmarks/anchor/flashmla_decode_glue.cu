// C entry points for benchmarks/anchor_flashmla_decode.py: FlashMLA's dense bf16 MLA decode (its
// tile scheduler metadata kernel, its sm90 split-KV "seesaw" decode kernel and its combine
// kernel, all compiled unchanged next to this file by build_flashmla_decode_anchor.sh), with the
// parameters FlashMLA's own PyTorch binding (csrc/api/dense_decode.h) fills in, from raw pointers,
// so that the library needs neither torch headers nor a torch extension build.
//
// The caller (the Python loader) does what the binding does with torch: it reshapes q from
// [b, s_q, h_q, 576] to [b, s_q * (h_q / h_k), h_k, 576] (query heads of one KV head become rows)
// and allocates, contiguous,
//   sched_meta [num_sm_parts, anchor_decode_sched_meta_ints()] int32, num_splits [b + 1] int32,
//   out [b, h_k, q_seq_per_hk, 512] bf16, lse [b, h_k, q_seq_per_hk] fp32,
//   lse_accum [b + num_sm_parts, h_k, q_seq_per_hk] fp32,
//   out_accum [b + num_sm_parts, h_k, q_seq_per_hk, 512] fp32,
// then reshapes out to [b, s_q, h_q, 512] and lse to [b, h_q, s_q].
//
// Every function returns 0, or a nonzero code after which anchor_decode_last_error() says which
// argument was refused. Arguments are checked here because FlashMLA's host code exits the process
// on a failed assertion.
#include <cmath>
#include <cstdio>

#include "params.h"
#include "sm90/decode/dense/splitkv_mla.h"
#include "smxx/decode/combine/combine.h"
#include "smxx/decode/get_decoding_sched_meta/get_decoding_sched_meta.h"

namespace {

constexpr int kHeadDimK = 576;         // q and k_cache rows: 512 NoPE + 64 RoPE
constexpr int kHeadDimV = 512;         // V is the first 512 dims of the same cache
constexpr int kPageBlockSize = 64;     // the only page size FlashMLA's dense decode accepts
constexpr int kBlockSizeM = 64;        // query rows per CTA of the split-KV kernel
constexpr int kFixedOverheadBlocks = 5;  // the binding's per-request cost in the scheduler
constexpr int kMaxSplits = 160;        // the largest split count the combine kernel is built for

char last_error[256] = "";

int refuse(const char* what) {
    std::snprintf(last_error, sizeof(last_error), "%s", what);
    return 1;
}

}  // namespace

// The message of the last nonzero return, "" if none.
extern "C" const char* anchor_decode_last_error() { return last_error; }

// int32 words per DecodingSchedMeta record (a row of sched_meta).
extern "C" int anchor_decode_sched_meta_ints() {
    return static_cast<int>(sizeof(DecodingSchedMeta) / sizeof(int));
}

// The binding's number of "SM parts" (CTAs per (m block, KV head), each walking a share of all
// requests' KV blocks): SMs / h_k / m blocks per KV head, at least 1.
extern "C" int anchor_decode_num_sm_parts(int num_sms, int s_q, int h_q, int h_k) {
    if (h_k <= 0 || h_q % h_k != 0) return 0;
    int m_blocks = (s_q * h_q / h_k + kBlockSizeM - 1) / kBlockSizeM;
    int parts = num_sms / h_k / m_blocks;
    return parts > 1 ? parts : 1;
}

// FlashMLA's get_mla_metadata kernel: splits all requests' KV blocks over num_sm_parts, writing
// sched_meta and num_splits (prefix sums of splits per request). Runs on `stream`.
extern "C" int anchor_decode_metadata(const void* cache_seqlens, void* sched_meta, void* num_splits,
                                      int b, int s_q, int num_sm_parts, void* stream) {
    if (b <= 0) return refuse("batch size must be positive");
    if (s_q <= 0) return refuse("s_q must be positive");
    if (num_sm_parts <= 0 || num_sm_parts > kMaxSplits) return refuse("num_sm_parts out of 1..160");
    GetDecodeSchedMetaParams p{};
    p.b = b;
    p.s_q = s_q;
    p.block_size_n = kPageBlockSize;
    p.fixed_overhead_num_blocks = kFixedOverheadBlocks;
    p.topk = -1;  // dense: a request's length is its cache_seqlens entry
    p.extra_topk = -1;
    p.topk_length = nullptr;
    p.extra_topk_length = nullptr;
    p.seqlens_k_ptr = static_cast<int*>(const_cast<void*>(cache_seqlens));
    p.tile_scheduler_metadata_ptr = static_cast<DecodingSchedMeta*>(sched_meta);
    p.num_splits_ptr = static_cast<int*>(num_splits);
    p.num_sm_parts = num_sm_parts;
    p.stream = static_cast<cudaStream_t>(stream);
    smxx::decode::run_get_decoding_sched_meta_kernel(p);
    return 0;
}

// FlashMLA's split-KV decode kernel, then its combine kernel (launched with programmatic dependent
// launch, as the binding does), on `stream`. q strides are those of the reshaped
// [b, q_seq_per_hk, h_k, 576] view, k_cache's those of [num_blocks, 64, h_k, 576], in elements.
// causal is ignored for s_q == 1, as in the binding.
extern "C" int anchor_decode(const void* q, const void* k_cache, const void* block_table,
                             const void* cache_seqlens, const void* sched_meta,
                             const void* num_splits, void* out, void* lse, void* lse_accum,
                             void* out_accum, int b, int s_q, int h_q, int h_k, int num_blocks,
                             int num_sm_parts, int causal, float sm_scale, long long stride_q_b,
                             long long stride_q_row, long long stride_q_head,
                             long long stride_k_block, long long stride_k_row,
                             long long stride_k_head, long long stride_block_table_b,
                             void* stream) {
    if (b <= 0) return refuse("batch size must be positive");
    if (s_q <= 0) return refuse("s_q must be positive");
    if (h_k <= 0 || h_q <= 0 || h_q % h_k != 0) return refuse("h_q must be a multiple of h_k");
    if (num_blocks <= 0) return refuse("k_cache has no blocks");
    if (num_sm_parts <= 0 || num_sm_parts > kMaxSplits) return refuse("num_sm_parts out of 1..160");
    const int q_head_per_hk = h_q / h_k;
    const int q_seq_per_hk = s_q * q_head_per_hk;

    DenseAttnDecodeParams p{};
    p.b = b;
    p.s_q = s_q;
    p.q_seq_per_hk = q_seq_per_hk;
    p.seqlens_k_ptr = static_cast<int*>(const_cast<void*>(cache_seqlens));
    p.h_q = h_q;
    p.h_k = h_k;
    p.num_blocks = num_blocks;
    p.q_head_per_hk = q_head_per_hk;
    p.is_causal = causal != 0 && s_q > 1;
    p.d = kHeadDimK;
    p.d_v = kHeadDimV;
    p.scale_softmax = sm_scale;
    p.scale_softmax_log2 = static_cast<float>(sm_scale * M_LOG2E);  // the kernel runs in exp2
    p.q_ptr = const_cast<void*>(q);
    p.k_ptr = const_cast<void*>(k_cache);
    p.o_ptr = out;
    p.softmax_lse_ptr = static_cast<float*>(lse);
    // out is [b, h_k, q_seq_per_hk, 512] contiguous
    p.q_batch_stride = stride_q_b;
    p.k_batch_stride = stride_k_block;
    p.o_batch_stride = static_cast<long long>(h_k) * q_seq_per_hk * kHeadDimV;
    p.q_row_stride = stride_q_row;
    p.k_row_stride = stride_k_row;
    p.o_row_stride = kHeadDimV;
    p.q_head_stride = stride_q_head;
    p.k_head_stride = stride_k_head;
    p.o_head_stride = static_cast<long long>(q_seq_per_hk) * kHeadDimV;
    p.block_table = static_cast<int*>(const_cast<void*>(block_table));
    p.block_table_batch_stride = stride_block_table_b;
    p.page_block_size = kPageBlockSize;
    p.tile_scheduler_metadata_ptr = static_cast<DecodingSchedMeta*>(const_cast<void*>(sched_meta));
    p.num_sm_parts = num_sm_parts;
    p.num_splits_ptr = static_cast<int*>(const_cast<void*>(num_splits));
    p.total_num_splits = b + num_sm_parts;
    p.softmax_lseaccum_ptr = static_cast<float*>(lse_accum);
    p.oaccum_ptr = static_cast<float*>(out_accum);
    p.stream = static_cast<cudaStream_t>(stream);
    sm90::run_flash_splitkv_mla_kernel<cutlass::bfloat16_t>(p);

    // The binding's combine arguments, field for field (lse/out strides as it passes them).
    CombineParams c{};
    c.b = b;
    c.s_q = s_q;
    c.h_q = h_q;
    c.d_v = kHeadDimV;
    c.lse = p.softmax_lse_ptr;
    c.out = p.o_ptr;
    c.stride_lse_b = h_k * q_seq_per_hk;
    c.stride_lse_s_q = h_q;
    c.stride_o_b = h_q * s_q * kHeadDimV;
    c.stride_o_s_q = h_q * kHeadDimV;
    c.stride_o_h_q = kHeadDimV;
    c.lse_accum = p.softmax_lseaccum_ptr;
    c.o_accum = p.oaccum_ptr;
    c.stride_lse_accum_split = h_k * q_seq_per_hk;
    c.stride_lse_accum_s_q = h_q;
    c.stride_o_accum_split = h_q * s_q * kHeadDimV;
    c.stride_o_accum_s_q = h_q * kHeadDimV;
    c.stride_o_accum_h_q = kHeadDimV;
    c.tile_scheduler_metadata_ptr = p.tile_scheduler_metadata_ptr;
    c.num_splits_ptr = p.num_splits_ptr;
    c.num_sm_parts = num_sm_parts;
    c.attn_sink = nullptr;
    c.stream = p.stream;
    smxx::decode::run_flash_mla_combine_kernel<cutlass::bfloat16_t>(c);
    return 0;
}
