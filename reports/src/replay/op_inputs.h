// Reading an operator's recorded inputs: tensors (shape, strides, element type), tensor
// lists and concrete scalar values ("1", "False", "[1, 1]").
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "pm2lat/dtype.h"
#include "pm2lat/reports/replay/kineto_trace.h"

namespace pm2lat::reports::trace_inputs {

// One tensor argument of an op.
struct Tensor {
  const std::vector<std::int64_t>* shape = nullptr;
  const std::vector<std::int64_t>* strides = nullptr;  // nullptr when not recorded
  DType dtype = DType::kUnknown;
  double element_bytes = 4;
  std::size_t input = 0;  // position among the op's inputs

  std::size_t rank() const noexcept { return shape->size(); }
  std::int64_t dim(std::size_t i) const noexcept { return (*shape)[i]; }
  // Dimension counted from the end (-1 = last); 1 when out of range.
  std::int64_t dim_from_end(std::size_t i) const noexcept;
  std::int64_t numel() const noexcept;
  double bytes() const noexcept { return static_cast<double>(numel()) * element_bytes; }
};

// Element type of a Kineto "Input type" ("float", "c10::BFloat16", "long int", ...);
// kUnknown for non-tensor types.
DType element_type(std::string_view type) noexcept;
// Element size in bytes for a Kineto type name (complex and 16-bit integer types included).
double element_bytes(std::string_view type) noexcept;

std::int64_t numel(const std::vector<std::int64_t>& shape) noexcept;

// The single-tensor inputs of an op, in order (tensor lists excluded).
std::vector<Tensor> tensors(const TraceOp& op);
// The tensor at input position `i`, if that input is a single tensor.
std::optional<Tensor> tensor_at(const TraceOp& op, std::size_t i);
// Every tensor including the elements of recorded tensor lists.
std::vector<Tensor> all_tensors(const TraceOp& op);
// Number of inputs typed as tensor lists (recorded or not).
std::size_t tensor_list_count(const TraceOp& op);

// Concrete scalar values.
std::optional<std::int64_t> concrete_int(const TraceOp& op, std::size_t i);
std::optional<double> concrete_double(const TraceOp& op, std::size_t i);
std::optional<bool> concrete_bool(const TraceOp& op, std::size_t i);
// "[1, 1]" -> {1, 1}; a single integer gives one element; empty when absent or not ints.
std::vector<std::int64_t> concrete_ints(const TraceOp& op, std::size_t i);

// Shape two or more operands broadcast to (numpy rules); empty input gives {}.
std::vector<std::int64_t> broadcast_shape(const std::vector<Tensor>& operands);

// Whether strides say the last two dimensions are swapped (a transposed view: column-major
// storage of a row-major matrix). False when strides were not recorded.
bool is_transposed_view(const Tensor& t) noexcept;

}  // namespace pm2lat::reports::trace_inputs
