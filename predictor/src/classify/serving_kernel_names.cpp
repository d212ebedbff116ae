#include "classify/serving_kernel_names.h"

#include <algorithm>
#include <string>

#include "classify/name_parts.h"

namespace pm2lat {
namespace {

struct NameRule {
  std::string_view word;  // lower case, matched anywhere in the name
  KernelFamily family;
};

// First match wins; more specific words first. Families: what the kernel's traffic looks
// like to the memory-bound models (a per-token reduction over experts is a reduction; a
// scatter of new tokens into a cache is a copy).
constexpr NameRule kRules[] = {
    // Expert-parallel all-to-all (DeepEP dispatch/combine): communication.
    {"deep_ep::", KernelFamily::kCollective},
    // MoE routing: scores of each token over the experts, softmax or sigmoid, top-k.
    {"topkgatingsoftmax", KernelFamily::kReduction},   // vLLM, TRT-LLM, SGLang
    {"moesoftmax", KernelFamily::kReduction},          // vLLM topk_softmax fallback
    {"moetopk", KernelFamily::kReduction},             // vLLM topk_softmax fallback
    {"moe_fused_gate", KernelFamily::kReduction},      // SGLang biased grouped top-k
    {"grouped_topk", KernelFamily::kReduction},        // vLLM grouped_topk_kernels.cu
    {"routingmainkernel", KernelFamily::kReduction},   // TRT-LLM gen MoE routing
    {"routingindices", KernelFamily::kReduction},      // ...Cluster/Coop/Histogram/Offsets
    {"routingrenormalize", KernelFamily::kReduction},  // namespace of Qwen/Mixtral routing
    {"routingdeepseek", KernelFamily::kReduction},     // namespace of DeepSeek routing
    {"routingllama4", KernelFamily::kReduction},       // namespace of Llama-4 routing
    // MoE token bookkeeping: counts, sorts and offsets per expert.
    {"moe_align_block_size", KernelFamily::kReduction},  // vLLM, SGLang
    {"count_and_sort_expert_tokens", KernelFamily::kReduction},
    {"expertfirsttokenoffset", KernelFamily::kReduction},  // TRT-LLM, vLLM permute
    {"expertprefixsum", KernelFamily::kReduction},         // TRT-LLM block/global/merge
    {"buildexpertmaps", KernelFamily::kReduction},         // TRT-LLM fused build+sort
    {"preprocesstopkid", KernelFamily::kReduction},        // vLLM moe_permute
    // MoE permutation of token rows into expert order, and back with the k-way weighted sum.
    {"expandinputrows", KernelFamily::kCopy},          // TRT-LLM, vLLM moe_permute
    {"finalizemoerouting", KernelFamily::kReduction},  // TRT-LLM, vLLM moe_unpermute
    {"moe_sum_kernel", KernelFamily::kReduction},      // vLLM moe_sum
    // KV-cache writes and copies.
    {"reshape_and_cache", KernelFamily::kCopy},   // vLLM (and _flash)
    {"concat_and_cache", KernelFamily::kCopy},    // vLLM MLA caches
    {"copy_blocks_kernel", KernelFamily::kCopy},  // vLLM block copies
    {"gather_cache", KernelFamily::kCopy},        // vLLM (cp_)gather_cache
    {"appendpagedkvcache", KernelFamily::kCopy},  // FlashInfer
    {"updatekvcache", KernelFamily::kCopy},       // TRT-LLM applyBiasRopeUpdateKVCache
    // Rotary position embeddings (elementwise on Q and K).
    {"rotary_embedding", KernelFamily::kElementwise},  // vLLM (batched_)rotary_embedding
    {"applyrotary", KernelFamily::kElementwise},       // FlashInfer BatchQKApplyRotary...
    // Gated activations: act(x) * y over [tokens, 2, d].
    {"act_and_mul", KernelFamily::kElementwise},   // vLLM, FlashInfer
    {"silu_and_mul", KernelFamily::kElementwise},  // SGLang
    {"gelu_and_mul", KernelFamily::kElementwise},
    {"doactivation", KernelFamily::kElementwise},  // TRT-LLM MoE activation
    // Merging the partial outputs of split attention by their log-sum-exp.
    {"merge_attn_states", KernelFamily::kElementwise},  // vLLM
    {"mergestate", KernelFamily::kElementwise},         // FlashInfer (VariableLength)MergeStates
    // Scheduler bookkeeping between decode steps: next tokens, positions and slot mappings
    // written per sequence (vLLM advance_step_flashattn / advance_step_flashinfer).
    {"advance_step", KernelFamily::kElementwise},
    // Norms fused with rotary embeddings.
    {"qknormrope", KernelFamily::kLayerNorm},  // TRT-LLM fusedQKNormRope
    // Token sampling over the vocabulary.
    {"samplingfromprob", KernelFamily::kReduction},  // FlashInfer
    {"topktoppsampling", KernelFamily::kReduction},  // FlashInfer
    {"topprenormprob", KernelFamily::kReduction},    // FlashInfer
    {"topkmasklogits", KernelFamily::kReduction},    // FlashInfer
    // Repetition penalties applied to each sequence's logits before sampling.
    {"apply_repetition_penalties", KernelFamily::kElementwise},  // vLLM csrc/sampler.cu
};

// DeepGEMM's kernels that are not GEMMs: transposes and packing of scale factors
// (deep_gemm/include/deep_gemm/impls/smxx_layout.cuh: transpose_fp32,
// transpose_and_pack_fp32_into_ue8m0, pack_fp32_into_ue8m0) and the clearing of logits
// (smxx_clean_logits.cuh).
constexpr std::string_view kDeepGemmHelpers[] = {"transpose", "pack_fp32", "layout",
                                                 "clean_logits"};

}  // namespace

std::optional<GemmConfig> serving_gemm_config(std::string_view lower_name) {
  GemmConfig g;
  g.tensor_core = true;
  // vLLM vllm/model_executor/layers/fused_moe/fused_moe.py, SGLang
  // python/sglang/srt/layers/moe/fused_moe_triton/fused_moe.py: fused_moe_kernel (and
  // fused_moe_kernel_gptq_awq), one program per tile of the experts' sorted token rows.
  if (contains(lower_name, "fused_moe_kernel")) {
    g.scheme = GemmNameScheme::kTriton;
    return g;
  }
  // vLLM vllm/model_executor/layers/quantization/utils/fp8_utils.py, SGLang
  // python/sglang/srt/layers/quantization/fp8_kernel.py: _w8a8_block_fp8_matmul, FP8 operands
  // with 1x128 activation and 128x128 weight scale blocks.
  if (contains(lower_name, "block_fp8_matmul")) {
    g.scheme = GemmNameScheme::kTriton;
    g.a = DType::kFp8E4M3;
    g.scaling = GemmScaling::kBlock128;
    return g;
  }
  const std::size_t ns = lower_name.find("deep_gemm::");
  if (ns == std::string_view::npos) return std::nullopt;
  const std::string_view kernel = lower_name.substr(ns);
  for (std::string_view helper : kDeepGemmHelpers) {
    if (contains(kernel, helper)) return std::nullopt;
  }
  // deepseek-ai/DeepGEMM: deep_gemm/include/deep_gemm/fp8_gemm.cuh (fp8_gemm_kernel, Hopper
  // only) and impls/sm{90,100}_{fp8,bf16,fp4,fp8_fp4}_gemm_*_impl, *_mqa_logits, *_mega_moe.
  // The operand type is the first the name states (FP8 activations of an fp8_fp4 GEMM).
  const std::size_t fp8 = kernel.find("fp8"), bf16 = kernel.find("bf16"), fp4 = kernel.find("fp4");
  const std::size_t first = std::min({fp8, bf16, fp4});
  g.a = first == std::string_view::npos ? DType::kUnknown
        : first == fp8                  ? DType::kFp8E4M3
        : first == bf16                 ? DType::kBf16
                                        : DType::kFp4E2M1;
  for (std::string_view word : {"sm120_", "sm100_", "sm90_"}) {
    if (contains(kernel, word)) {
      g.arch = std::string(word.substr(0, word.size() - 1));
      break;
    }
  }
  if (g.arch.empty() && contains(kernel, "fp8_gemm_kernel")) g.arch = "sm90";
  return g;
}

std::optional<KernelFamily> serving_kernel_family(std::string_view lower_name) noexcept {
  for (const NameRule& r : kRules) {
    if (lower_name.find(r.word) != std::string_view::npos) return r.family;
  }
  return std::nullopt;
}

}  // namespace pm2lat
