// Decoders of GEMM kernel-name schemes (predictor/MODELS.md, "Kernel names"): legacy cuBLAS,
// pre-Maxwell sgemm, xmma, nvjet, CUTLASS 2.x and CUTLASS 3.x names.
#pragma once

#include <optional>
#include <string_view>

#include "pm2lat/kernel_class.h"

namespace pm2lat {

// `name` must be normalised (normalize_kernel_name). Returns nullopt when the name is not a
// GEMM-like kernel of a known scheme. Conv kernels of the same schemes (xmma fprop/dgrad/
// wgrad, CUTLASS fprop) decode too; `is_conv` tells them apart.
struct DecodedGemm {
  GemmConfig config;
  bool is_conv = false;
};

std::optional<DecodedGemm> decode_gemm_name(std::string_view name);

// The compute-capability major of a GPU generation as NVIDIA's library kernel names spell it
// ("volta" in volta_sgemm_128x64_nn and cudnn_infer_volta_scudnn_128x64_relu_small_nn_v1: 7);
// 0 when `word` is none.
int architecture_word_generation(std::string_view word) noexcept;

}  // namespace pm2lat
