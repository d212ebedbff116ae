// What a fused-attention kernel's name says: which implementation (FlashAttention 2/3/4,
// PyTorch memory-efficient, cuDNN SDPA, FlashInfer, TRT-LLM, Triton, vLLM paged attention),
// which pass (forward, backward, or a small pre/post-processing helper), and the CTA tile
// and head dimension where the name spells them (template arguments, "64x64" tokens).
//
// Decoding is allocation-free and runs on every prediction: the classifier only says
// "attention", the tile lives in template arguments it drops.
#pragma once

#include <cstdint>
#include <string_view>

#include "pm2lat/dtype.h"

namespace pm2lat {

enum class AttentionVariant : std::uint8_t {
  kUnknown = 0,
  kFlash2,             // flash::flash_fwd_kernel / pytorch_flash:: (FlashAttention 2)
  kFlash3,             // FlashAttnFwdSm90 / FlashAttnBwdSm90 (FlashAttention 3, Hopper)
  kFlash4,             // FlashAttentionForwardSm100 (FlashAttention 4, CuTe DSL)
  kMemEfficient,       // fmha_cutlassF/B_* (xFormers CUTLASS kernels inside PyTorch)
  kCudnn,              // cudnn_generated_fort_native_sdpa_*
  kFlashInferPrefill,  // BatchPrefillWith*KVCacheKernel, SinglePrefill*
  kFlashInferDecode,   // BatchDecodeWithPagedKVCacheKernel, SingleDecode*
  kTrtllmPrefill,      // fmhaSm100*Kernel_*Context (TRT-LLM generated, via FlashInfer)
  kTrtllmDecode,       // fmhaSm100*Kernel_* for generation
  kTriton,             // Triton attention (_attn_fwd, vLLM unified_attention, flex)
  kPaged,              // vLLM paged_attention_v1/v2 (decode)
};

inline constexpr std::size_t kAttentionVariantCount = 12;

// Stable names used in profiles and reports ("flash2", "flash3", ...).
std::string_view to_string(AttentionVariant v) noexcept;
AttentionVariant parse_attention_variant(std::string_view s) noexcept;

enum class AttentionPass : std::uint8_t {
  kForward = 0,
  kBackward,
  kHelper,  // pre/post-processing: dO.O dot, dQ conversion, split-KV combine, reduce
};

struct AttentionKernel {
  AttentionVariant variant = AttentionVariant::kUnknown;
  AttentionPass pass = AttentionPass::kForward;
  std::int32_t tile_m = 0;    // query rows per CTA (0 = the name does not say)
  std::int32_t tile_n = 0;    // keys per main-loop step
  std::int32_t head_dim = 0;  // the kernel's (maximum) head dimension
  std::int32_t warps = 0;
  bool split_kv = false;  // split-KV kernel (partial results combined by a helper)
  // Template flags where the name states them (FlashAttention 2/3).
  bool causal_known = false;
  bool causal = false;
  bool local = false;
  DType dtype = DType::kUnknown;  // element type the name states

  bool recognised() const noexcept { return variant != AttentionVariant::kUnknown; }
};

// A kernel name that decodes to `v` (forward pass): how harnesses present measurements that
// name an implementation but no kernel.
std::string_view attention_variant_kernel_name(AttentionVariant v) noexcept;

// Decodes mangled, demangled or normalised names alike.
AttentionKernel decode_attention_kernel(std::string_view name) noexcept;

}  // namespace pm2lat
