// Element types of operands, outputs and accumulators, as every layer names them.
#pragma once

#include <cstdint>
#include <string_view>

namespace pm2lat {

enum class DType : std::uint8_t {
  kUnknown = 0,
  kFp64,
  kFp32,
  kTf32,  // fp32 storage computed on tensor cores
  kFp16,
  kBf16,
  kFp8E4M3,
  kFp8E5M2,
  kFp4E2M1,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kBool,
};

// Canonical lower-case name ("fp32", "bf16", "fp8_e4m3", ...).
std::string_view to_string(DType t) noexcept;

// Accepts the canonical names and the spellings found in the wild: "float", "float32",
// "c10::BFloat16", "half", "e4m3", "CUDA_R_16BF", ... Unknown spellings give kUnknown.
DType parse_dtype(std::string_view s) noexcept;

// Storage size of one element in bytes (fp4: 0.5). kUnknown counts as 4 so that byte
// estimates stay finite.
double dtype_bytes(DType t) noexcept;

// True for types whose GEMMs run on tensor cores on any GPU that has them.
bool is_tensor_core_dtype(DType t) noexcept;

}  // namespace pm2lat
