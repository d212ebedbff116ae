#include "pm2lat/gemm_scaling.h"

#include <array>
#include <cmath>

namespace pm2lat {

bool is_scaled_dtype(DType t) noexcept {
  return t == DType::kFp8E4M3 || t == DType::kFp8E5M2 || t == DType::kFp4E2M1;
}

namespace {

constexpr std::array<std::string_view, 6> kScalingNames{"none",     "per_tensor", "per_token",
                                                        "block128", "mx32",       "nv16"};

// Block sizes along K of the block-scaled formats (DeepSeek-V3 technical report: 1x128 tiles
// of activations, 128x128 blocks of weights; OCP MX specification v1.0: 32 elements per
// UE8M0 scale; NVFP4: 16 elements per UE4M3 scale).
constexpr double kBlock128 = 128;
constexpr double kMxBlock = 32;
constexpr double kNvBlock = 16;
constexpr double kFp32Bytes = 4;

struct Label {
  std::string_view name;
  DType operand;
  GemmScaling scaling;
};
constexpr std::array<Label, 7> kLabels{{
    {"fp8", DType::kFp8E4M3, GemmScaling::kPerTensor},
    {"fp8_rowwise", DType::kFp8E4M3, GemmScaling::kPerToken},
    {"fp8_block", DType::kFp8E4M3, GemmScaling::kBlock128},
    {"mxfp8", DType::kFp8E4M3, GemmScaling::kMx32},
    {"nvfp4", DType::kFp4E2M1, GemmScaling::kNv16},
    {"mxfp4", DType::kFp4E2M1, GemmScaling::kMx32},
    {"fp8_e5m2", DType::kFp8E5M2, GemmScaling::kPerTensor},
}};

}  // namespace

std::string_view to_string(GemmScaling s) noexcept {
  const auto i = static_cast<std::size_t>(s);
  return i < kScalingNames.size() ? kScalingNames[i] : "none";
}

GemmScaling parse_gemm_scaling(std::string_view s) noexcept {
  for (std::size_t i = 0; i < kScalingNames.size(); ++i) {
    if (kScalingNames[i] == s) return static_cast<GemmScaling>(i);
  }
  return GemmScaling::kNone;
}

double activation_scale_bytes(GemmScaling s, double m, double k) noexcept {
  switch (s) {
    case GemmScaling::kPerTensor: return kFp32Bytes;
    case GemmScaling::kPerToken: return kFp32Bytes * m;
    case GemmScaling::kBlock128: return kFp32Bytes * m * std::ceil(k / kBlock128);
    case GemmScaling::kMx32: return m * std::ceil(k / kMxBlock);
    case GemmScaling::kNv16: return m * std::ceil(k / kNvBlock) + kFp32Bytes;
    case GemmScaling::kNone: break;
  }
  return 0;
}

double weight_scale_bytes(GemmScaling s, double n, double k) noexcept {
  switch (s) {
    case GemmScaling::kPerTensor: return kFp32Bytes;
    case GemmScaling::kPerToken: return kFp32Bytes * n;
    case GemmScaling::kBlock128:
      return kFp32Bytes * std::ceil(n / kBlock128) * std::ceil(k / kBlock128);
    case GemmScaling::kMx32: return n * std::ceil(k / kMxBlock);
    case GemmScaling::kNv16: return n * std::ceil(k / kNvBlock) + kFp32Bytes;
    case GemmScaling::kNone: break;
  }
  return 0;
}

std::string gemm_type_label(DType operand, GemmScaling scaling) {
  for (const auto& l : kLabels) {
    if (l.operand == operand && l.scaling == scaling) return std::string(l.name);
  }
  return std::string(to_string(operand));
}

bool parse_gemm_type_label(std::string_view label, DType& operand, GemmScaling& scaling) noexcept {
  for (const auto& l : kLabels) {
    if (l.name == label) {
      operand = l.operand;
      scaling = l.scaling;
      return true;
    }
  }
  const DType plain = parse_dtype(label);
  if (plain == DType::kUnknown) return false;
  operand = plain;
  scaling = GemmScaling::kNone;
  return true;
}

}  // namespace pm2lat
