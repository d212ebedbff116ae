// Attention kernel names: see attention_kernel.h. Substring rules only (no regex, no
// allocation): this runs once per predicted kernel.
#include "pm2lat/models/attention_kernel.h"

#include <array>

#include "classify/name_parts.h"

namespace pm2lat {
namespace {

constexpr std::array<std::string_view, kAttentionVariantCount> kVariantNames{"unknown",
                                                                             "flash2",
                                                                             "flash3",
                                                                             "flash4",
                                                                             "mem_efficient",
                                                                             "cudnn",
                                                                             "flashinfer_prefill",
                                                                             "flashinfer_decode",
                                                                             "trtllm_prefill",
                                                                             "trtllm_decode",
                                                                             "triton",
                                                                             "paged"};

// Reads a decimal integer at s[i...]; advances i. -1 if none.
std::int64_t read_int(std::string_view s, std::size_t& i) {
  if (i >= s.size() || !is_digit(s[i])) return -1;
  std::int64_t v = 0;
  while (i < s.size() && is_digit(s[i]) && v < (1LL << 40)) v = v * 10 + (s[i++] - '0');
  return v;
}

// Integer template arguments after `marker`, in order, in either spelling: demangled
// ("<64, 128, 128, 4, false") or Itanium-mangled ("ILi64ELi128ELi128ELi4ELb0E"). Stops at the
// first argument that is not an integer. Returns how many were read.
std::size_t leading_int_args(std::string_view s, std::string_view marker, std::int64_t* out,
                             std::size_t max) {
  const std::size_t p = s.find(marker);
  if (p == std::string_view::npos) return 0;
  std::size_t i = p + marker.size();
  std::size_t n = 0;
  if (i < s.size() && s[i] == '<') {
    ++i;
    while (n < max) {
      while (i < s.size() && s[i] == ' ') ++i;
      const std::int64_t v = read_int(s, i);
      if (v < 0) break;
      while (i < s.size() && (s[i] == 'u' || s[i] == 'l' || s[i] == 'L')) ++i;  // 64ul
      out[n++] = v;
      while (i < s.size() && s[i] == ' ') ++i;
      if (i >= s.size() || s[i] != ',') break;
      ++i;
    }
    return n;
  }
  if (i < s.size() && s[i] == 'I') {
    ++i;
    while (n < max && i + 2 < s.size() && s[i] == 'L' && s[i + 1] == 'i') {
      i += 2;
      const std::int64_t v = read_int(s, i);
      if (v < 0 || i >= s.size() || s[i] != 'E') break;
      ++i;
      out[n++] = v;
    }
  }
  return n;
}

// The demangled template argument `index` (depth 1) of the template opened at `marker<`,
// or empty. Nested <...> and (...) are skipped.
std::string_view template_arg(std::string_view s, std::string_view marker, std::size_t index) {
  const std::size_t p = s.find(marker);
  if (p == std::string_view::npos) return {};
  std::size_t i = p + marker.size();
  if (i >= s.size() || s[i] != '<') return {};
  int depth = 0;
  std::size_t start = i + 1, arg = 0;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '<' || c == '(') {
      ++depth;
    } else if (c == '>' || c == ')') {
      if (--depth == 0) return arg == index ? s.substr(start, i - start) : std::string_view{};
    } else if (c == ',' && depth == 1) {
      if (arg == index) return s.substr(start, i - start);
      ++arg;
      start = i + 1;
    }
  }
  return {};
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// "true"/"false"/"1"/"0" -> 1/0, anything else -1.
int bool_arg(std::string_view a) {
  a = trim(a);
  if (a == "true" || a == "1") return 1;
  if (a == "false" || a == "0") return 0;
  return -1;
}

void set_causal_local(AttentionKernel& k, std::string_view name, std::string_view marker,
                      std::size_t causal_index) {
  const int c = bool_arg(template_arg(name, marker, causal_index));
  const int l = bool_arg(template_arg(name, marker, causal_index + 1));
  if (c >= 0) {
    k.causal_known = true;
    k.causal = c == 1;
    k.local = l == 1;
  }
}

// The first "cute::C<a>, cute::C<b>, cute::C<c>" triple with a tile-sized first value
// (cluster shapes are triples of 1s and 2s): CTA tile M, N and head dimension of FA3 names.
// Mangled names spell it "NS_1CILi128EEE".
bool cute_tile(std::string_view s, std::int64_t (&mnk)[3]) {
  std::size_t from = 0;
  while (true) {
    std::size_t p = s.find("C<", from);
    const bool mangled = p == std::string_view::npos;
    if (mangled) p = s.find("CILi", from);
    if (p == std::string_view::npos) return false;
    std::size_t i = p;
    std::size_t n = 0;
    while (n < 3) {
      const std::size_t q = mangled ? s.find("CILi", i) : s.find("C<", i);
      if (q == std::string_view::npos || q > i + 24) break;
      i = q + (mangled ? 4 : 2);
      const std::int64_t v = read_int(s, i);
      if (v < 0) break;
      mnk[n++] = v;
    }
    if (n == 3 && mnk[0] >= 16) return true;
    from = p + 2;
  }
}

// The first "{a}x{b}" (or "{a}x{b}x{c}") token between underscores whose values look like a
// tile: fmha_cutlassF_bf16_aligned_64x64_rf_sm80, ..._knob_7_64x128x128_4x1x1_...
std::size_t underscore_dims(std::string_view s, std::int64_t* out, std::size_t max) {
  std::size_t i = 0;
  while (i < s.size()) {
    const std::size_t b = s.find('_', i);
    if (b == std::string_view::npos) return 0;
    std::size_t j = b + 1;
    std::size_t n = 0;
    std::int64_t v = read_int(s, j);
    while (v >= 0 && n < max) {
      out[n++] = v;
      if (j < s.size() && s[j] == 'x') {
        ++j;
        v = read_int(s, j);
      } else {
        break;
      }
    }
    if (n >= 2 && (j >= s.size() || s[j] == '_') && out[0] >= 8) return n;
    i = b + 1;
  }
  return 0;
}

DType name_dtype(std::string_view s) {
  if (contains(s, "bfloat16") || contains(s, "bf16") || contains(s, "Bfloat16") ||
      contains(s, "BFloat16"))
    return DType::kBf16;
  if (contains(s, "e4m3") || contains(s, "E4m3")) return DType::kFp8E4M3;
  if (contains(s, "half_t") || contains(s, "_f16_") || contains(s, "Fp16") ||
      contains(s, "c10::Half"))
    return DType::kFp16;
  if (contains(s, "_f32_") || contains(s, "float")) return DType::kFp32;
  return DType::kUnknown;
}

}  // namespace

std::string_view to_string(AttentionVariant v) noexcept {
  const auto i = static_cast<std::size_t>(v);
  return i < kVariantNames.size() ? kVariantNames[i] : "unknown";
}

AttentionVariant parse_attention_variant(std::string_view s) noexcept {
  for (std::size_t i = 0; i < kVariantNames.size(); ++i) {
    if (kVariantNames[i] == s) return static_cast<AttentionVariant>(i);
  }
  return AttentionVariant::kUnknown;
}

std::string_view attention_variant_kernel_name(AttentionVariant v) noexcept {
  switch (v) {
    case AttentionVariant::kFlash2: return "flash::flash_fwd_kernel";
    case AttentionVariant::kFlash3: return "flash::FlashAttnFwdSm90";
    case AttentionVariant::kFlash4: return "flash::FlashAttentionForwardSm100";
    case AttentionVariant::kMemEfficient: return "fmha_cutlassF_bf16_aligned_64x64_rf_sm80";
    case AttentionVariant::kCudnn: return "cudnn_generated_fort_native_sdpa_flash_fprop";
    case AttentionVariant::kFlashInferPrefill:
      return "flashinfer::BatchPrefillWithPagedKVCacheKernel";
    case AttentionVariant::kFlashInferDecode:
      return "flashinfer::BatchDecodeWithPagedKVCacheKernel";
    case AttentionVariant::kTrtllmPrefill: return "fmhaSm100Kernel_Context";
    case AttentionVariant::kTrtllmDecode: return "fmhaSm100Kernel_Generation";
    case AttentionVariant::kTriton: return "kernel_unified_attention_2d";
    case AttentionVariant::kPaged: return "paged_attention_v2_kernel";
    case AttentionVariant::kUnknown:
    default: return "";
  }
}

AttentionKernel decode_attention_kernel(std::string_view name) noexcept {
  AttentionKernel k;
  k.dtype = name_dtype(name);
  std::int64_t v[4] = {0, 0, 0, 0};

  // FlashAttention 3 (Hopper) and 4 (CuTe DSL) first: their names embed "flash" tokens too.
  if (contains(name, "FlashAttnFwdSm90") || contains(name, "FlashAttnBwdSm90") ||
      contains(name, "FlashAttnFwdCombine") || contains(name, "FlashAttnBwdPreprocess") ||
      contains(name, "FlashAttnBwdPostprocess") || contains(name, "prepare_varlen_num_blocks")) {
    k.variant = AttentionVariant::kFlash3;
    if (contains(name, "FlashAttnFwdSm90")) {
      k.pass = AttentionPass::kForward;
      set_causal_local(k, name, "CollectiveMainloopFwdSm90", 7);
    } else if (contains(name, "FlashAttnBwdSm90")) {
      k.pass = AttentionPass::kBackward;
      set_causal_local(k, name, "CollectiveMainloopBwdSm90", 8);
    } else {
      k.pass = AttentionPass::kHelper;
    }
    std::int64_t mnk[3] = {0, 0, 0};
    if (k.pass != AttentionPass::kHelper && cute_tile(name, mnk)) {
      k.tile_m = static_cast<std::int32_t>(mnk[0]);
      k.tile_n = static_cast<std::int32_t>(mnk[1]);
      k.head_dim = static_cast<std::int32_t>(mnk[2]);
    }
    k.split_kv = contains(name, "FlashAttnFwdCombine");
    return k;
  }
  if (contains(name, "FlashAttentionForwardSm100") ||
      contains(name, "FlashAttentionBackwardSm100") || contains(name, "flash_fwd_sm100") ||
      contains(name, "flash_bwd_sm100") || contains(name, "FlashAttentionForwardSm90")) {
    k.variant = AttentionVariant::kFlash4;
    k.pass = contains(name, "Backward") || contains(name, "bwd") ? AttentionPass::kBackward
                                                                 : AttentionPass::kForward;
    return k;
  }
  // FlashAttention 2 (flash::, pytorch_flash::, vLLM's fork).
  if (contains(name, "flash_fwd_splitkv_combine_kernel") ||
      contains(name, "flash_bwd_dot_do_o_kernel") ||
      contains(name, "flash_bwd_convert_dq_kernel") ||
      contains(name, "flash_bwd_convert_dkv_kernel") ||
      contains(name, "flash_bwd_clear_dkvaccum_kernel")) {
    k.variant = AttentionVariant::kFlash2;
    k.pass = AttentionPass::kHelper;
    k.split_kv = contains(name, "combine");
    return k;
  }
  if (contains(name, "flash_fwd_kernel") || contains(name, "flash_fwd_splitkv_kernel") ||
      contains(name, "flash_bwd_dq_dk_dv")) {
    k.variant = AttentionVariant::kFlash2;
    const bool bwd = contains(name, "flash_bwd");
    k.pass = bwd ? AttentionPass::kBackward : AttentionPass::kForward;
    k.split_kv = contains(name, "splitkv");
    if (leading_int_args(name, bwd ? "Flash_bwd_kernel_traits" : "Flash_fwd_kernel_traits", v, 4) ==
        4) {
      k.head_dim = static_cast<std::int32_t>(v[0]);
      k.tile_m = static_cast<std::int32_t>(v[1]);
      k.tile_n = static_cast<std::int32_t>(v[2]);
      k.warps = static_cast<std::int32_t>(v[3]);
    }
    if (k.split_kv) {
      set_causal_local(k, name, "flash_fwd_splitkv_kernel", 1);
    } else if (bwd) {
      set_causal_local(k, name,
                       contains(name, "seqk_parallel_kernel")
                           ? "flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel"
                           : "flash_bwd_dq_dk_dv_loop_kernel",
                       2);
    } else {
      set_causal_local(k, name, "flash_fwd_kernel", 2);
    }
    return k;
  }
  // PyTorch memory-efficient attention: fmha_cutlassF_{dt}_{aligned}_{QB}x{KB}_{rf|gmem}_sm{CC},
  // fmha_cutlassB_{dt}_{aligned}_{BI}x{BJ}_k{MaxK}[...]_sm{CC}.
  if (contains(name, "fmha_cutlassF") || contains(name, "fmha_cutlassB")) {
    k.variant = AttentionVariant::kMemEfficient;
    k.pass = contains(name, "fmha_cutlassB") ? AttentionPass::kBackward : AttentionPass::kForward;
    if (underscore_dims(name, v, 2) == 2) {
      k.tile_m = static_cast<std::int32_t>(v[0]);
      k.tile_n = static_cast<std::int32_t>(v[1]);
    }
    // A forward kernel that keeps its output in registers ("_rf_") is generated with
    // kMaxK = kKeysPerBlock, and PyTorch's dispatcher takes the first kernel whose kMaxK
    // holds the head dimension (mem_eff_attention/kernels/generate_kernels.py): the head
    // dimension is at most the key tile, 64 or 128, the common head dimensions themselves.
    if (k.pass == AttentionPass::kForward && contains(name, "_rf_") && k.tile_n > 0)
      k.head_dim = k.tile_n;
    if (const std::size_t p = name.find("_k");
        p != std::string_view::npos && k.pass == AttentionPass::kBackward) {
      std::size_t i = p + 2;
      const std::int64_t hd = read_int(name, i);
      if (hd > 0) k.head_dim = static_cast<std::int32_t>(hd);
    }
    if (contains(name, "_f16_")) k.dtype = DType::kFp16;
    if (contains(name, "_bf16_")) k.dtype = DType::kBf16;
    if (contains(name, "_f32_")) k.dtype = DType::kFp32;
    return k;
  }
  // cuDNN runtime-compiled SDPA: ..._sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x128_4x1x1_...
  if (contains(name, "sdpa") && contains(name, "cudnn")) {
    k.variant = AttentionVariant::kCudnn;
    k.pass = contains(name, "bprop") ? AttentionPass::kBackward : AttentionPass::kForward;
    if (underscore_dims(name, v, 3) == 3) {
      k.tile_m = static_cast<std::int32_t>(v[0]);
      k.tile_n = static_cast<std::int32_t>(v[1]);
      k.head_dim = static_cast<std::int32_t>(v[2]);
    }
    return k;
  }
  if (contains(name, "BatchPrefillWith") || contains(name, "SinglePrefillWith")) {
    k.variant = AttentionVariant::kFlashInferPrefill;
    return k;
  }
  if (contains(name, "BatchDecodeWith") || contains(name, "SingleDecodeWith")) {
    k.variant = AttentionVariant::kFlashInferDecode;
    return k;
  }
  // TRT-LLM generated FMHA:
  // fmhaSm100aKernel_QkvBfloat16OBfloat16H64PagedKvCausalP32VarSeqQ128Kv128PersistentContext
  if (contains(name, "fmhaSm") || contains(name, "fmha_v2") || contains(name, "trtllm_fmha") ||
      contains(name, "fmhaKernel")) {
    const bool gen = contains(name, "Generation") || contains(name, "ForGen") ||
                     contains(name, "SwapsMmaAb") || contains(name, "Decode");
    k.variant = gen ? AttentionVariant::kTrtllmDecode : AttentionVariant::kTrtllmPrefill;
    if (const std::size_t p = name.find("VarSeqQ"); p != std::string_view::npos) {
      std::size_t i = p + 7;
      const std::int64_t q = read_int(name, i);
      if (q > 0 && name.substr(i, 2) == "Kv") {
        i += 2;
        const std::int64_t kv = read_int(name, i);
        k.tile_m = static_cast<std::int32_t>(q);
        k.tile_n = static_cast<std::int32_t>(kv > 0 ? kv : 0);
      }
    }
    if (const std::size_t p = name.find("HQk"); p != std::string_view::npos) {
      std::size_t i = p + 3;
      const std::int64_t hd = read_int(name, i);
      if (hd > 0) k.head_dim = static_cast<std::int32_t>(hd);
    }
    return k;
  }
  if (contains(name, "paged_attention_v")) {
    k.variant = AttentionVariant::kPaged;
    k.pass = contains(name, "reduce_kernel") ? AttentionPass::kHelper : AttentionPass::kForward;
    return k;
  }
  if (contains(name, "unified_attention") || contains(name, "_attn_fwd") ||
      contains(name, "_attn_bwd") || contains(name, "flex_attention") ||
      contains(name, "triton_tem_fused") || contains(name, "_fwd_kernel_flash_decode")) {
    k.variant = AttentionVariant::kTriton;
    k.pass = contains(name, "_attn_bwd") || contains(name, "flex_attention_backward")
                 ? AttentionPass::kBackward
                 : AttentionPass::kForward;
    if (contains(name, "_attn_bwd_preprocess") || contains(name, "reduce_segments"))
      k.pass = AttentionPass::kHelper;
    return k;
  }
  return k;
}

}  // namespace pm2lat
