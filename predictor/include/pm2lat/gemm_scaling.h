// How a low-precision GEMM scales its operands: what the quantised values are multiplied by
// before they are summed. The scale layout decides the extra bytes a kernel loads and the
// quantisation kernel that runs before it, so two FP8 GEMMs of the same shape with different
// scaling are different work.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "pm2lat/dtype.h"

namespace pm2lat {

enum class GemmScaling : std::uint8_t {
  kNone = 0,   // plain GEMM (BF16, FP16, FP32) or scaling not known
  kPerTensor,  // one FP32 scale per operand (vLLM/TensorRT-LLM "fp8")
  kPerToken,   // one FP32 scale per activation row and per weight column ("rowwise")
  kBlock128,   // 1x128 activation and 128x128 weight FP32 blocks (DeepSeek-V3 "fp8_block")
  kMx32,       // OCP microscaling: one UE8M0 exponent per 32 elements along K (MXFP8/MXFP4)
  kNv16,       // NVFP4: one UE4M3 scale per 16 elements along K plus one FP32 per tensor
};

// Operand types whose GEMMs carry scale factors beyond alpha and beta: FP8 (E4M3, E5M2) and
// FP4 (E2M1).
bool is_scaled_dtype(DType t) noexcept;

// Stable names: "none", "per_tensor", "per_token", "block128", "mx32", "nv16".
std::string_view to_string(GemmScaling s) noexcept;
GemmScaling parse_gemm_scaling(std::string_view s) noexcept;

// Bytes of the scale factors of the activation A[m, k] and of the weight B[n, k].
double activation_scale_bytes(GemmScaling s, double m, double k) noexcept;
double weight_scale_bytes(GemmScaling s, double n, double k) noexcept;

// The name measurement tables and reports use for an operand type with its scaling:
// "bf16", "fp8" (per-tensor), "fp8_rowwise", "fp8_block", "mxfp8", "nvfp4", "mxfp4";
// a plain type is its own name ("fp16", "fp32").
std::string gemm_type_label(DType operand, GemmScaling scaling);

// Inverse of gemm_type_label for the table spellings; false when `label` names no
// known combination.
bool parse_gemm_type_label(std::string_view label, DType& operand, GemmScaling& scaling) noexcept;

}  // namespace pm2lat
