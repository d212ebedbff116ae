// Memory-bound kernels of LLM serving stacks (vLLM, SGLang, TensorRT-LLM, FlashInfer, DeepEP)
// by what their names say: mixture-of-experts routing, token permutation and the weighted
// un-permutation that finishes it, KV-cache writes and copies, rotary embeddings, gated
// activations, sampling. Their generic words ("softmax" in topkGatingSoftmax, "embedding" in
// rotary_embedding_kernel) would otherwise send them to the wrong family.
//
// And the GEMM kernels of those stacks that no GEMM name decoder reads: the experts' grouped
// GEMM that vLLM and SGLang compile with Triton (fused_moe_kernel: "fused_" would make it
// elementwise) and DeepGEMM's FP8/BF16/FP4 GEMMs (unknown otherwise).
#pragma once

#include <optional>
#include <string_view>

#include "pm2lat/kernel_class.h"

namespace pm2lat {

// The family of a serving-stack kernel from its lower-cased name; nullopt for other names.
std::optional<KernelFamily> serving_kernel_family(std::string_view lower_name) noexcept;

// What the name of a serving stack's GEMM kernel says (operand type, the architecture it was
// built for, tensor cores) from its lower-cased name; nullopt for other names.
std::optional<GemmConfig> serving_gemm_config(std::string_view lower_name);

}  // namespace pm2lat
