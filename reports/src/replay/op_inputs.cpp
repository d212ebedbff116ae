#include "op_inputs.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <string>

namespace pm2lat::reports::trace_inputs {

std::int64_t Tensor::dim_from_end(std::size_t i) const noexcept {
  if (i == 0 || i > shape->size()) return 1;
  return (*shape)[shape->size() - i];
}

std::int64_t numel(const std::vector<std::int64_t>& shape) noexcept {
  std::int64_t n = 1;
  for (std::int64_t d : shape) {
    if (d <= 0) return 0;
    if (n > (std::int64_t{1} << 50) / d) return std::int64_t{1} << 50;  // garbled: saturate
    n *= d;
  }
  return n;
}

std::int64_t Tensor::numel() const noexcept { return trace_inputs::numel(*shape); }

DType element_type(std::string_view type) noexcept {
  // PyTorch's FP8 types by family, whatever their variant suffix ("fn", "fnuz").
  if (type.find("Float8_e4m3") != std::string_view::npos) return DType::kFp8E4M3;
  if (type.find("Float8_e5m2") != std::string_view::npos) return DType::kFp8E5M2;
  return parse_dtype(type);
}

double element_bytes(std::string_view type) noexcept {
  if (type == "c10::complex<float>") return 8;
  if (type == "c10::complex<double>") return 16;
  if (type == "c10::complex<c10::Half>") return 4;
  return dtype_bytes(element_type(type));
}

namespace {
bool is_list_type(std::string_view t) {
  return t == "TensorList" || t == "GenericList" || t == "TensorList?";
}
}  // namespace

std::vector<Tensor> tensors(const TraceOp& op) {
  std::vector<Tensor> out;
  for (std::size_t i = 0; i < op.inputs.size(); ++i) {
    if (auto t = tensor_at(op, i)) out.push_back(*t);
  }
  return out;
}

std::optional<Tensor> tensor_at(const TraceOp& op, std::size_t i) {
  if (i >= op.inputs.size()) return std::nullopt;
  const OpInput& in = op.inputs[i];
  if (in.shapes.size() != 1 || is_list_type(in.type)) return std::nullopt;
  Tensor t;
  t.shape = &in.shapes.front();
  t.strides = in.strides.size() == t.shape->size() && !in.strides.empty() ? &in.strides : nullptr;
  t.dtype = element_type(in.type);
  t.element_bytes = element_bytes(in.type);
  t.input = i;
  return t;
}

std::vector<Tensor> all_tensors(const TraceOp& op) {
  std::vector<Tensor> out;
  for (std::size_t i = 0; i < op.inputs.size(); ++i) {
    const OpInput& in = op.inputs[i];
    if (in.shapes.size() == 1 && !is_list_type(in.type)) {
      out.push_back(*tensor_at(op, i));
      continue;
    }
    for (const auto& s : in.shapes) {
      Tensor t;
      t.shape = &s;
      t.dtype = element_type(in.type);
      t.element_bytes = element_bytes(in.type);
      t.input = i;
      out.push_back(t);
    }
  }
  return out;
}

std::size_t tensor_list_count(const TraceOp& op) {
  return static_cast<std::size_t>(std::count_if(
      op.inputs.begin(), op.inputs.end(), [](const OpInput& in) { return is_list_type(in.type); }));
}

namespace {
std::string_view trimmed(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::optional<std::int64_t> parse_int(std::string_view s) {
  s = trimmed(s);
  std::int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}
}  // namespace

std::optional<std::int64_t> concrete_int(const TraceOp& op, std::size_t i) {
  if (i >= op.inputs.size()) return std::nullopt;
  return parse_int(op.inputs[i].concrete);
}

std::optional<double> concrete_double(const TraceOp& op, std::size_t i) {
  if (i >= op.inputs.size()) return std::nullopt;
  const std::string s(trimmed(op.inputs[i].concrete));
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const double d = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0') return std::nullopt;
  return d;
}

std::optional<bool> concrete_bool(const TraceOp& op, std::size_t i) {
  if (i >= op.inputs.size()) return std::nullopt;
  const std::string_view s = trimmed(op.inputs[i].concrete);
  if (s == "True" || s == "true" || s == "1") return true;
  if (s == "False" || s == "false" || s == "0") return false;
  return std::nullopt;
}

std::vector<std::int64_t> concrete_ints(const TraceOp& op, std::size_t i) {
  std::vector<std::int64_t> out;
  if (i >= op.inputs.size()) return out;
  std::string_view s = trimmed(op.inputs[i].concrete);
  if (!s.empty() && s.front() == '[') s.remove_prefix(1);
  if (!s.empty() && s.back() == ']') s.remove_suffix(1);
  while (!s.empty()) {
    const std::size_t comma = s.find(',');
    const auto v = parse_int(s.substr(0, comma));
    if (!v) return {};
    out.push_back(*v);
    if (comma == std::string_view::npos) break;
    s.remove_prefix(comma + 1);
  }
  return out;
}

std::vector<std::int64_t> broadcast_shape(const std::vector<Tensor>& operands) {
  std::size_t rank = 0;
  for (const auto& t : operands) rank = std::max(rank, t.rank());
  std::vector<std::int64_t> out(rank, 1);
  for (const auto& t : operands) {
    for (std::size_t i = 1; i <= t.rank(); ++i) {
      std::int64_t& o = out[rank - i];
      o = std::max(o, t.dim_from_end(i));
    }
  }
  return out;
}

bool is_transposed_view(const Tensor& t) noexcept {
  if (t.strides == nullptr || t.rank() < 2) return false;
  const auto& s = *t.strides;
  const std::size_t r = t.rank();
  // Row-major contiguous rows have unit stride in the last dimension; a transposed view has
  // it in the second to last (size-1 dimensions say nothing either way).
  if (t.dim(r - 1) == 1) return false;
  return s[r - 1] != 1 && s[r - 2] == 1;
}

}  // namespace pm2lat::reports::trace_inputs
