// Decoders of low-precision GEMM and quantisation kernel names: CUTLASS 3.x library names
// (cutlass3x_sm90_tensorop_gemm_e4m3_e4m3_..., block-scaled bstensorop ue8m0xe4m3 /
// ue4m3xe2m1), DeepGEMM (deep_gemm::sm90_fp8_gemm_1d2d_impl<...>), TensorRT-LLM generated
// GEMMs (bmm_E4m3_E4m3E4m3_Fp32_t128x8x128..., bmm_E4m3_MxE2m1E4m3_...), CuTe DSL kernels
// (kernel_cutlass_..._BlockScaled..., tensorptrf8E4M3FN...), and the activation quantisation
// kernels that run before them (scaled_fp8_quant, per_token_group_quant,
// quantize_with_block_size, cvt_fp16_to_fp4, ...).
#pragma once

#include <optional>
#include <string_view>

#include "classify/gemm_name_decoder.h"
#include "pm2lat/kernel_class.h"

namespace pm2lat {

// `name` normalised (normalize_kernel_name); nullopt when it is none of the schemes above.
std::optional<DecodedGemm> decode_lowp_gemm_name(std::string_view name);

// An activation quantisation kernel: the type it writes and the scales it computes.
struct QuantizeKernel {
  DType dtype = DType::kUnknown;
  GemmScaling scaling = GemmScaling::kNone;
};

// `lname`: the normalised name in lower case. nullopt when it is not a quantisation kernel
// (dequantisation kernels are not).
std::optional<QuantizeKernel> decode_quantize_name(std::string_view lname);

// The scaling a scale-factor type word states: "ue8m0" -> kMx32, "ue4m3" -> kNv16, "f32"
// (FP32 block scales) -> kBlock128; kNone for anything else.
GemmScaling scale_word_scaling(std::string_view word);

}  // namespace pm2lat
