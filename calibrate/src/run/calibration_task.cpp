#include "pm2lat/calibrate/run/calibration_task.h"

#include <fmt/core.h>

#include <array>

namespace pm2lat::calibrate::run {
namespace {

constexpr std::array<std::string_view, 5> kTaskKinds{"launch", "gemm", "gemm-candidates",
                                                     "gemm-fill", "memory"};
constexpr std::array<std::string_view, 3> kLayouts{"linear", "matmul", "weight_grad"};
constexpr std::array<std::string_view, 3> kPatterns{"copy", "add", "softmax_rows"};

template <typename E, std::size_t N>
std::optional<E> parse_name(const std::array<std::string_view, N>& names, std::string_view s) {
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == s) return static_cast<E>(i);
  }
  return std::nullopt;
}

// FP8 GEMMs write a 16-bit result.
double output_bytes(DType t) {
  return t == DType::kFp8E4M3 || t == DType::kFp8E5M2 ? 2.0 : dtype_bytes(t);
}

}  // namespace

std::string_view to_string(TaskKind k) noexcept { return kTaskKinds[static_cast<std::size_t>(k)]; }
std::optional<TaskKind> parse_task_kind(std::string_view s) noexcept {
  return parse_name<TaskKind>(kTaskKinds, s);
}

std::string_view to_string(GemmLayout l) noexcept { return kLayouts[static_cast<std::size_t>(l)]; }
std::optional<GemmLayout> parse_gemm_layout(std::string_view s) noexcept {
  return parse_name<GemmLayout>(kLayouts, s);
}

std::string gemm_op_key(GemmLayout layout, std::int64_t batch) {
  if (batch > 1 && layout == GemmLayout::kMatmul) return "bmm";
  return std::string(to_string(layout));
}

std::string_view to_string(MemoryPattern p) noexcept {
  return kPatterns[static_cast<std::size_t>(p)];
}

std::string_view memory_op_key(MemoryPattern p) noexcept {
  switch (p) {
    case MemoryPattern::kCopy: return "copy";
    case MemoryPattern::kAdd: return "add";
    case MemoryPattern::kSoftmaxRows: return "softmax";
  }
  return "copy";
}

double GemmProblem::flops() const noexcept {
  return 2.0 * static_cast<double>(batch) * static_cast<double>(m) * static_cast<double>(n) *
         static_cast<double>(k);
}

double GemmProblem::bytes() const noexcept {
  const double b = static_cast<double>(batch), dm = static_cast<double>(m),
               dn = static_cast<double>(n), dk = static_cast<double>(k);
  const double in = dtype == DType::kTf32 ? 4.0 : dtype_bytes(dtype);
  return b * (in * (dm * dk + dk * dn) + output_bytes(dtype) * dm * dn);
}

double MemoryProblem::bytes_read() const noexcept {
  const double elems = static_cast<double>(rows) * static_cast<double>(cols);
  return elems * dtype_bytes(dtype) * (pattern == MemoryPattern::kAdd ? 2.0 : 1.0);
}

double MemoryProblem::bytes_written() const noexcept {
  return static_cast<double>(rows) * static_cast<double>(cols) * dtype_bytes(dtype);
}

std::string gemm_task_id(TaskKind kind, const GemmProblem& p) {
  return fmt::format("{}/{}/{}/{}x{}x{}x{}", to_string(kind), to_string(p.dtype),
                     to_string(p.layout), p.batch, p.m, p.n, p.k);
}

std::string memory_task_id(const MemoryProblem& p) {
  return fmt::format("memory/{}/{}/{}x{}", to_string(p.pattern), to_string(p.dtype), p.rows,
                     p.cols);
}

}  // namespace pm2lat::calibrate::run
