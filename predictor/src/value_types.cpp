// Names and small helpers of the shared value types.
#include <algorithm>
#include <array>
#include <string>

#include "pm2lat/kernel_class.h"
#include "pm2lat/kernel_record.h"
#include "pm2lat/op_context.h"
#include "pm2lat/prediction.h"
#include "pm2lat/text.h"

namespace pm2lat {
namespace {

template <typename E, std::size_t N>
E parse_by_name(std::string_view s, const std::array<std::string_view, N>& names, E fallback) {
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == s) return static_cast<E>(i);
  }
  return fallback;
}

constexpr std::array<std::string_view, 12> kOpKindNames{
    "unknown", "gemm",      "conv",      "attention", "elementwise", "reduction",
    "softmax", "layernorm", "embedding", "copy",      "memset",      "collective"};

constexpr std::array<std::string_view, 19> kFamilyNames{"unknown",          "gemm",
                                                        "splitk_reduce",    "gemv",
                                                        "elementwise",      "reduction",
                                                        "softmax",          "layernorm",
                                                        "embedding",        "copy",
                                                        "memset",           "conv",
                                                        "attention",        "triton_pointwise",
                                                        "triton_reduction", "triton_template",
                                                        "optimizer",        "collective",
                                                        "quantize"};

constexpr std::array<std::string_view, 11> kSchemeNames{
    "none",     "legacy_cublas", "legacy_sgemm", "xmma",       "nvjet",   "cutlass2",
    "cutlass3", "triton",        "deep_gemm",    "trtllm_gen", "cute_dsl"};

constexpr std::array<std::string_view, 9> kModelNames{
    "none", "gemm_wave", "memory_bound", "overhead_floor", "roofline",
    "conv", "attention", "collective",   "measured_table"};

}  // namespace

std::string_view to_string(OpKind k) noexcept {
  const auto i = static_cast<std::size_t>(k);
  return i < kOpKindNames.size() ? kOpKindNames[i] : "unknown";
}
OpKind parse_op_kind(std::string_view s) noexcept {
  return parse_by_name(s, kOpKindNames, OpKind::kUnknown);
}

std::string_view to_string(KernelFamily f) noexcept {
  const auto i = static_cast<std::size_t>(f);
  return i < kFamilyNames.size() ? kFamilyNames[i] : "unknown";
}
KernelFamily parse_kernel_family(std::string_view s) noexcept {
  return parse_by_name(s, kFamilyNames, KernelFamily::kUnknown);
}

std::string_view to_string(GemmNameScheme s) noexcept {
  const auto i = static_cast<std::size_t>(s);
  return i < kSchemeNames.size() ? kSchemeNames[i] : "none";
}

std::string_view to_string(ModelKind m) noexcept {
  const auto i = static_cast<std::size_t>(m);
  return i < kModelNames.size() ? kModelNames[i] : "none";
}

std::string_view to_string(TimeBasis b) noexcept {
  return b == TimeBasis::kCall ? "call" : "kernel";
}

ModelKind parse_model_kind(std::string_view s) noexcept {
  return parse_by_name(s, kModelNames, ModelKind::kNone);
}

namespace {
constexpr std::array<std::string_view, 10> kFlagNames{
    "fallback", "spec_scaled",       "extrapolated", "config_chosen",  "communication",
    "no_shape", "dtype_substituted", "clamped",      "shape_rejected", "anchored"};
}  // namespace

std::string flags_to_string(std::uint32_t flags) {
  std::string out;
  for (std::size_t i = 0; i < kFlagNames.size(); ++i) {
    if ((flags & (1u << i)) == 0) continue;
    if (!out.empty()) out += ',';
    out += kFlagNames[i];
  }
  return out;
}

std::uint32_t parse_flags(std::string_view names) noexcept {
  std::uint32_t flags = 0;
  std::size_t start = 0;
  while (start <= names.size()) {
    const std::size_t e = names.find(',', start);
    const std::string_view part =
        names.substr(start, e == std::string_view::npos ? names.size() - start : e - start);
    for (std::size_t i = 0; i < kFlagNames.size(); ++i) {
      if (part == kFlagNames[i]) flags |= 1u << i;
    }
    if (e == std::string_view::npos) break;
    start = e + 1;
  }
  return flags;
}

std::int64_t ConvShape::out_h() const noexcept {
  if (stride_h <= 0) return 0;
  return (in_h + 2 * pad_h - dilation_h * (kernel_h - 1) - 1) / stride_h + 1;
}
std::int64_t ConvShape::out_w() const noexcept {
  if (stride_w <= 0) return 0;
  return (in_w + 2 * pad_w - dilation_w * (kernel_w - 1) - 1) / stride_w + 1;
}
double ConvShape::flops() const noexcept {
  const double g = groups > 0 ? static_cast<double>(groups) : 1.0;
  return 2.0 * static_cast<double>(batch) * static_cast<double>(out_channels) *
         static_cast<double>(out_h()) * static_cast<double>(out_w()) *
         (static_cast<double>(in_channels) / g) * static_cast<double>(kernel_h) *
         static_cast<double>(kernel_w);
}

double AttentionShape::flops() const noexcept {
  // QK^T and PV: 2 GEMMs of 2*sq*skv*d each per head; causal halves the useful work.
  double f = 4.0 * static_cast<double>(batch) * static_cast<double>(heads) *
             static_cast<double>(seqlen_q) * static_cast<double>(seqlen_kv) *
             static_cast<double>(head_dim);
  if (causal) f *= 0.5;
  if (backward) f *= 2.5;  // dQ, dK, dV and the recomputed scores
  return f;
}

std::string op_key(const OpContext& op) {
  std::string name = op.name;
  if (auto p = name.rfind("::"); p != std::string::npos) name = name.substr(p + 2);
  name = ascii_lower(name);
  // ATen's internal spellings of the same operators ("_softmax", "native_layer_norm").
  while (!name.empty() && name.front() == '_') name.erase(0, 1);
  if (name == "native_layer_norm" || name == "layer_norm" || name == "layernorm") return "ln";
  if (name == "log_softmax" || name == "safe_softmax") return "softmax";
  return name;
}

}  // namespace pm2lat
