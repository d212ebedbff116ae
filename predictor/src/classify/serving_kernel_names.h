// Memory-bound kernels of LLM serving stacks (vLLM, SGLang, TensorRT-LLM, FlashInfer, DeepEP)
// by what their names say: mixture-of-experts routing, token permutation and the weighted
// un-permutation that finishes it, KV-cache writes and copies, rotary embeddings, gated
// activations, sampling. Their generic words ("softmax" in topkGatingSoftmax, "embedding" in
// rotary_embedding_kernel) would otherwise send them to the wrong family.
#pragma once

#include <optional>
#include <string_view>

#include "pm2lat/kernel_class.h"

namespace pm2lat {

// The family of a serving-stack kernel from its lower-cased name; nullopt for other names.
std::optional<KernelFamily> serving_kernel_family(std::string_view lower_name) noexcept;

}  // namespace pm2lat
