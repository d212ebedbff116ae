// Bytes moved by memory-bound operators, from their recorded inputs and what each operator
// is known to write (Kineto records inputs only). Every rule returns the [rows, cols] view the
// memory-bound model uses: the output's rows and last dimension for pointwise work, the
// number of outputs and the reduced length for reductions and normalisations.
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <numeric>
#include <string>

#include "op_inputs.h"
#include "op_shape_rules.h"
#include "pm2lat/models/broadcast_traffic.h"

namespace pm2lat::reports::trace_rules {
namespace {

using trace_inputs::Tensor;

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.rfind(prefix, 0) == 0; }

template <std::size_t N>
bool one_of(std::string_view s, const std::array<std::string_view, N>& set) {
  return std::find(set.begin(), set.end(), s) != set.end();
}

// [rows, cols] of a shape: everything but the last dimension, and the last.
void rows_cols(const std::vector<std::int64_t>& shape, VectorShape& v) {
  const std::int64_t n = trace_inputs::numel(shape);
  v.cols = shape.empty() ? 1 : std::max<std::int64_t>(1, shape.back());
  v.rows = v.cols > 0 ? std::max<std::int64_t>(1, n / v.cols) : 1;
  if (n == 0) v.rows = v.cols = 0;
}

double sum_bytes(const std::vector<Tensor>& ts) {
  double b = 0;
  for (const auto& t : ts) b += t.bytes();
  return b;
}

const Tensor* largest(const std::vector<Tensor>& ts) {
  const Tensor* best = nullptr;
  for (const auto& t : ts) {
    if (best == nullptr || t.numel() > best->numel()) best = &t;
  }
  return best;
}

DType first_float(const std::vector<Tensor>& ts) {
  for (const auto& t : ts) {
    if (t.dtype == DType::kFp32 || t.dtype == DType::kBf16 || t.dtype == DType::kFp16 ||
        t.dtype == DType::kFp64 || t.dtype == DType::kFp8E4M3 || t.dtype == DType::kFp8E5M2)
      return t.dtype;
  }
  return ts.empty() ? DType::kUnknown : ts.front().dtype;
}

MemoryWork make(OpKind kind, const std::vector<std::int64_t>& view, double read, double written,
                DType dtype) {
  MemoryWork w;
  w.kind = kind;
  rows_cols(view, w.vec);
  w.vec.bytes_read = read;
  w.vec.bytes_written = written;
  w.vec.dtype = dtype;
  return w;
}

// Reduction view: rows = outputs, cols = reduced length.
MemoryWork make_rows(OpKind kind, std::int64_t rows, std::int64_t cols, double read, double written,
                     DType dtype) {
  MemoryWork w;
  w.kind = kind;
  w.vec.rows = std::max<std::int64_t>(1, rows);
  w.vec.cols = std::max<std::int64_t>(1, cols);
  w.vec.bytes_read = read;
  w.vec.bytes_written = written;
  w.vec.dtype = dtype;
  return w;
}

std::int64_t wrap_dim(std::int64_t d, std::size_t rank) {
  const auto r = static_cast<std::int64_t>(rank);
  if (d < 0) d += r;
  return std::clamp<std::int64_t>(d, 0, std::max<std::int64_t>(0, r - 1));
}

OpKind kind_for_family(KernelFamily f) {
  switch (f) {
    case KernelFamily::kReduction:
    case KernelFamily::kTritonReduction: return OpKind::kReduction;
    case KernelFamily::kSoftmax: return OpKind::kSoftmax;
    case KernelFamily::kLayerNorm: return OpKind::kLayerNorm;
    case KernelFamily::kEmbedding: return OpKind::kEmbedding;
    case KernelFamily::kCopy: return OpKind::kCopy;
    case KernelFamily::kMemset: return OpKind::kMemset;
    default: return OpKind::kElementwise;
  }
}

// ---------------------------------------------------------------- rule families

constexpr std::array<std::string_view, 14> kComparisons{
    "eq",         "ne",          "lt",          "le",    "gt",    "ge",       "logical_and",
    "logical_or", "logical_not", "logical_xor", "isnan", "isinf", "isfinite", "isin"};

constexpr std::array<std::string_view, 10> kWriters{
    "fill_",      "zero_",        "normal_",    "uniform_", "random_",
    "bernoulli_", "exponential_", "geometric_", "cauchy_",  "log_normal_"};

constexpr std::array<std::string_view, 17> kReductions{"sum",
                                                       "mean",
                                                       "amax",
                                                       "amin",
                                                       "max",
                                                       "min",
                                                       "argmax",
                                                       "argmin",
                                                       "prod",
                                                       "norm",
                                                       "linalg_vector_norm",
                                                       "var",
                                                       "std",
                                                       "all",
                                                       "any",
                                                       "logsumexp",
                                                       "nansum"};

constexpr std::array<std::string_view, 4> kReductionsExtra{"var_mean", "std_mean", "count_nonzero",
                                                           "aminmax"};

constexpr std::array<std::string_view, 8> kCopies{
    "clone", "contiguous", "_to_copy", "to", "_copy_from", "_copy_from_and_resize", "flip", "roll"};

std::optional<MemoryWork> elementwise(const std::vector<Tensor>& ts, std::string_view a) {
  if (ts.empty()) return std::nullopt;
  const auto out = trace_inputs::broadcast_shape(ts);
  DType out_type = first_float(ts);
  double out_bytes = dtype_bytes(out_type);
  if (one_of(a, kComparisons)) {
    out_type = DType::kBool;
    out_bytes = 1;
  } else if (a == "where" && ts.size() >= 2) {
    out_type = ts[1].dtype;
    out_bytes = ts[1].element_bytes;
  }
  MemoryWork w = make(OpKind::kElementwise, out, sum_bytes(ts),
                      static_cast<double>(trace_inputs::numel(out)) * out_bytes, out_type);
  std::vector<PointwiseOperand> operands;
  operands.reserve(ts.size());
  for (const Tensor& t : ts) operands.push_back({*t.shape, t.element_bytes});
  state_broadcast_reuse(operands, out, out_bytes, w.vec);
  return w;
}

std::optional<MemoryWork> in_place(const std::vector<Tensor>& ts, std::string_view a) {
  if (ts.empty()) return std::nullopt;
  const Tensor& self = ts.front();
  double read = sum_bytes(ts);
  OpKind kind = OpKind::kElementwise;
  if (one_of(a, kWriters)) {
    read -= self.bytes();  // overwritten, never read
    kind = (a == "fill_" || a == "zero_") ? OpKind::kMemset : OpKind::kElementwise;
  }
  return make(kind, *self.shape, read, self.bytes(), self.dtype);
}

std::optional<MemoryWork> copy(const std::vector<Tensor>& ts, std::string_view a) {
  if (ts.empty()) return std::nullopt;
  if ((a == "copy_" || a == "_copy_from" || a == "_copy_from_and_resize") && ts.size() >= 2) {
    // copy_(self, src): src is read, self written (a cast changes the element size).
    const Tensor& dst = a == "copy_" ? ts[0] : ts[1];
    const Tensor& src = a == "copy_" ? ts[1] : ts[0];
    const double written =
        static_cast<double>(std::max(dst.numel(), src.numel())) * dst.element_bytes;
    return make(OpKind::kCopy, *dst.shape, src.bytes(), written, dst.dtype);
  }
  const Tensor& self = ts.front();
  return make(OpKind::kCopy, *self.shape, self.bytes(), self.bytes(), self.dtype);
}

std::optional<MemoryWork> concatenate(const TraceOp& op) {
  const auto all = trace_inputs::all_tensors(op);
  if (all.empty()) return std::nullopt;
  const double bytes = sum_bytes(all);
  // The output has the inputs' rows; its columns are what makes the bytes add up.
  std::vector<std::int64_t> view = *all.front().shape;
  const double elems = bytes / std::max(0.5, all.front().element_bytes);
  if (!view.empty()) {
    const std::int64_t rows = std::max<std::int64_t>(
        1, trace_inputs::numel(view) / std::max<std::int64_t>(1, view.back()));
    view = {rows, std::max<std::int64_t>(1, static_cast<std::int64_t>(elems) / rows)};
  }
  return make(OpKind::kCopy, view, bytes, bytes, all.front().dtype);
}

std::optional<MemoryWork> reduction(const TraceOp& op, const std::vector<Tensor>& ts) {
  const auto self = trace_inputs::tensor_at(op, 0);
  if (!self)
    return ts.empty() ? std::nullopt
                      : std::optional<MemoryWork>(make(OpKind::kReduction, *ts.front().shape,
                                                       ts.front().bytes(), 4, ts.front().dtype));
  std::vector<std::int64_t> dims = trace_inputs::concrete_ints(op, 1);
  const std::int64_t n = self->numel();
  std::int64_t reduced = 1;
  if (dims.empty()) {
    reduced = n;  // full reduction
  } else {
    std::vector<bool> seen(self->rank(), false);
    for (std::int64_t d : dims) {
      if (self->rank() == 0) break;
      const auto w = static_cast<std::size_t>(wrap_dim(d, self->rank()));
      if (!seen[w]) reduced *= std::max<std::int64_t>(1, self->dim(w));
      seen[w] = true;
    }
  }
  const std::int64_t outputs = std::max<std::int64_t>(1, n / std::max<std::int64_t>(1, reduced));
  return make_rows(OpKind::kReduction, outputs, reduced, self->bytes(),
                   static_cast<double>(outputs) * self->element_bytes, self->dtype);
}

std::optional<MemoryWork> softmax(const TraceOp& op, std::string_view a) {
  const bool backward = a.find("backward") != std::string_view::npos;
  const auto self = trace_inputs::tensor_at(op, backward ? 1 : 0);
  if (!self || self->rank() == 0) return std::nullopt;
  const std::int64_t dim =
      wrap_dim(trace_inputs::concrete_int(op, backward ? 2 : 1).value_or(-1), self->rank());
  const std::int64_t cols = std::max<std::int64_t>(1, self->dim(static_cast<std::size_t>(dim)));
  const std::int64_t rows = self->numel() / cols;
  double out_elem = self->element_bytes;
  if (!backward && a != "_masked_softmax" && trace_inputs::concrete_bool(op, 2).value_or(false))
    out_elem = 4;  // half_to_float
  double read = self->bytes();
  if (backward) {
    if (auto g = trace_inputs::tensor_at(op, 0)) read += g->bytes();
  } else if (a == "_masked_softmax") {
    if (auto m = trace_inputs::tensor_at(op, 1)) read += m->bytes();
  }
  return make_rows(OpKind::kSoftmax, rows, cols, read,
                   static_cast<double>(self->numel()) * out_elem, self->dtype);
}

// Columns normalised together: the normalized_shape argument, else the weight's size.
std::int64_t norm_cols(const TraceOp& op, std::size_t shape_arg, std::size_t weight_arg,
                       const Tensor& input) {
  const auto dims = trace_inputs::concrete_ints(op, shape_arg);
  if (!dims.empty()) return std::max<std::int64_t>(1, trace_inputs::numel(dims));
  if (auto w = trace_inputs::tensor_at(op, weight_arg))
    return std::max<std::int64_t>(1, w->numel());
  return std::max<std::int64_t>(1, input.dim_from_end(1));
}

std::optional<MemoryWork> layer_norm(const TraceOp& op, std::string_view a) {
  const bool backward = a.find("backward") != std::string_view::npos;
  const auto input = trace_inputs::tensor_at(op, backward ? 1 : 0);
  if (!input) return std::nullopt;
  const bool rms = a.find("rms") != std::string_view::npos;
  // native_layer_norm(input, normalized_shape, weight, bias, eps); rms_norm(input,
  // normalized_shape, weight, eps); native_layer_norm_backward(grad_out, input, normalized_shape,
  // mean, rstd, weight, bias, output_mask)
  const std::int64_t cols = norm_cols(op, backward ? 2 : 1, backward ? 5 : 2, *input);
  const std::int64_t rows = std::max<std::int64_t>(1, input->numel() / cols);
  const auto ts = trace_inputs::tensors(op);
  double read = sum_bytes(ts);
  double written = input->bytes();
  if (backward) {
    if (auto w = trace_inputs::tensor_at(op, 5)) written += 2 * w->bytes();  // grad weight and bias
  } else if (!rms) {
    written += static_cast<double>(rows) * 8;  // mean and rstd in fp32
  }
  return make_rows(OpKind::kLayerNorm, rows, cols, read, written, input->dtype);
}

std::optional<MemoryWork> group_norm(const TraceOp& op, std::string_view a) {
  const bool backward = a.find("backward") != std::string_view::npos;
  const auto input = trace_inputs::tensor_at(op, backward ? 1 : 0);
  if (!input) return std::nullopt;
  // native_group_norm(input, weight, bias, N, C, HxW, group, eps)
  // native_group_norm_backward(grad_out, input, mean, rstd, weight, N, C, HxW, group, output_mask)
  const std::int64_t n =
      trace_inputs::concrete_int(op, backward ? 5 : 3).value_or(input->dim_from_end(input->rank()));
  const std::int64_t groups = trace_inputs::concrete_int(op, backward ? 8 : 6).value_or(1);
  const std::int64_t rows = std::max<std::int64_t>(1, n * groups);
  const auto ts = trace_inputs::tensors(op);
  return make_rows(OpKind::kLayerNorm, rows, input->numel() / rows, sum_bytes(ts), input->bytes(),
                   input->dtype);
}

std::optional<MemoryWork> batch_norm(const TraceOp& op, std::string_view a) {
  const bool backward = a.find("backward") != std::string_view::npos;
  // cudnn_batch_norm_backward(input, grad_output, ...); native_batch_norm_backward(grad_out, input,
  // ...)
  const std::size_t input_arg = backward && a.rfind("native", 0) == 0 ? 1 : 0;
  const auto input = trace_inputs::tensor_at(op, input_arg);
  if (!input || input->rank() < 2) return std::nullopt;
  const std::int64_t channels = std::max<std::int64_t>(1, input->dim(1));
  const auto ts = trace_inputs::tensors(op);
  return make_rows(OpKind::kReduction, channels, input->numel() / channels, sum_bytes(ts),
                   input->bytes(), input->dtype);
}

std::optional<MemoryWork> embedding(const TraceOp& op, std::string_view a) {
  const auto ts = trace_inputs::tensors(op);
  if (a == "embedding" || a == "embedding_renorm_") {
    auto w = trace_inputs::tensor_at(op, 0), idx = trace_inputs::tensor_at(op, 1);
    if (!w || !idx || w->rank() != 2) return std::nullopt;
    const std::int64_t rows = idx->numel(), cols = w->dim(1);
    const double out = static_cast<double>(rows * cols) * w->element_bytes;
    return make_rows(OpKind::kEmbedding, rows, cols, out + idx->bytes(), out, w->dtype);
  }
  if (a == "index_select") {
    auto self = trace_inputs::tensor_at(op, 0), idx = trace_inputs::tensor_at(op, 2);
    if (!self || !idx || self->rank() == 0) return std::nullopt;
    const auto dim = static_cast<std::size_t>(
        wrap_dim(trace_inputs::concrete_int(op, 1).value_or(0), self->rank()));
    std::vector<std::int64_t> out = *self->shape;
    out[dim] = idx->numel();
    const double bytes = static_cast<double>(trace_inputs::numel(out)) * self->element_bytes;
    MemoryWork w = make(OpKind::kEmbedding, out, bytes + idx->bytes(), bytes, self->dtype);
    if (dim == 0 && self->rank() >= 1) {
      w.vec.rows = idx->numel();  // one gathered row per index
      w.vec.cols =
          std::max<std::int64_t>(1, self->numel() / std::max<std::int64_t>(1, self->dim(0)));
    }
    return w;
  }
  if (a == "embedding_dense_backward" || a == "embedding_backward") {
    auto grad = trace_inputs::tensor_at(op, 0), idx = trace_inputs::tensor_at(op, 1);
    if (!grad || !idx) return std::nullopt;
    const std::int64_t cols = grad->dim_from_end(1);
    const std::int64_t table_rows = trace_inputs::concrete_int(op, 2).value_or(idx->numel());
    const double table = static_cast<double>(table_rows * cols) * grad->element_bytes;
    return make_rows(OpKind::kEmbedding, idx->numel(), cols, grad->bytes() + idx->bytes(), table,
                     grad->dtype);
  }
  if (a == "gather") {
    auto self = trace_inputs::tensor_at(op, 0), idx = trace_inputs::tensor_at(op, 2);
    if (!self || !idx) return std::nullopt;
    const double out = static_cast<double>(idx->numel()) * self->element_bytes;
    return make(OpKind::kEmbedding, *idx->shape, out + idx->bytes(), out, self->dtype);
  }
  if (starts_with(a, "scatter") || a == "index_add_" || a == "index_add" || a == "index_copy_" ||
      a == "index_copy" || a == "index_put_" || a == "_index_put_impl_" || a == "index_put") {
    // Scatters: the source and the indices are read, as many elements are written.
    if (ts.size() < 2) return std::nullopt;
    const std::vector<Tensor> sources(ts.begin() + 1, ts.end());
    const Tensor* src = largest(sources);
    double read = 0;
    for (std::size_t i = 1; i < ts.size(); ++i) read += ts[i].bytes();
    const double written = static_cast<double>(src->numel()) * ts.front().element_bytes;
    return make(OpKind::kEmbedding, *src->shape, read, written, ts.front().dtype);
  }
  return std::nullopt;
}

std::int64_t pooled(std::int64_t len, std::int64_t k, std::int64_t s, std::int64_t p,
                    std::int64_t d, bool ceil_mode) {
  if (s <= 0) return len;
  const double span = static_cast<double>(len + 2 * p - d * (k - 1) - 1) / static_cast<double>(s);
  std::int64_t out = static_cast<std::int64_t>(ceil_mode ? std::ceil(span) : std::floor(span)) + 1;
  if (ceil_mode && (out - 1) * s >= len + p) --out;
  return std::max<std::int64_t>(1, out);
}

std::optional<MemoryWork> pooling(const TraceOp& op, std::string_view a) {
  const bool backward = a.find("backward") != std::string_view::npos;
  if (backward) {
    // *_backward(grad_output, self, ...): the gradient is read, an input-sized tensor written.
    auto grad = trace_inputs::tensor_at(op, 0), self = trace_inputs::tensor_at(op, 1);
    if (!grad || !self) return std::nullopt;
    double read = grad->bytes();
    for (const auto& t : trace_inputs::tensors(op)) {
      if (t.input >= 2) read += t.bytes();  // indices
    }
    return make(OpKind::kReduction, *self->shape, read, self->bytes(), self->dtype);
  }
  const auto self = trace_inputs::tensor_at(op, 0);
  if (!self || self->rank() < 3) return std::nullopt;
  std::vector<std::int64_t> out = *self->shape;
  const std::size_t spatial = self->rank() - 2;
  if (starts_with(a, "_adaptive") || starts_with(a, "adaptive")) {
    const auto size = trace_inputs::concrete_ints(op, 1);
    for (std::size_t i = 0; i < spatial; ++i) {
      if (!size.empty())
        out[2 + i] = size.size() == 1 ? size[0] : (i < size.size() ? size[i] : out[2 + i]);
    }
  } else {
    // max_pool2d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode)
    // avg_pool2d(self, kernel_size, stride, padding, ceil_mode, ...)
    const bool is_max = starts_with(a, "max_pool");
    const auto k = trace_inputs::concrete_ints(op, 1);
    auto s = trace_inputs::concrete_ints(op, 2);
    const auto p = trace_inputs::concrete_ints(op, 3);
    const auto d = is_max ? trace_inputs::concrete_ints(op, 4) : std::vector<std::int64_t>{};
    const bool ceil_mode = trace_inputs::concrete_bool(op, is_max ? 5 : 4).value_or(false);
    if (k.empty()) return std::nullopt;
    if (s.empty()) s = k;
    auto at = [](const std::vector<std::int64_t>& v, std::size_t i, std::int64_t f) {
      return v.empty() ? f : (v.size() == 1 ? v[0] : (i < v.size() ? v[i] : f));
    };
    for (std::size_t i = 0; i < spatial; ++i) {
      out[2 + i] =
          pooled(self->dim(2 + i), at(k, i, 1), at(s, i, 1), at(p, i, 0), at(d, i, 1), ceil_mode);
    }
  }
  const double out_elems = static_cast<double>(trace_inputs::numel(out));
  const double indices = a.find("with_indices") != std::string_view::npos ? out_elems * 8 : 0;
  return make(OpKind::kReduction, out, self->bytes(), out_elems * self->element_bytes + indices,
              self->dtype);
}

std::optional<MemoryWork> upsample(const TraceOp& op, std::string_view a) {
  const auto self = trace_inputs::tensor_at(op, 0);
  if (!self || self->rank() < 3) return std::nullopt;
  if (a.find("backward") != std::string_view::npos) {
    // upsample_*_backward(grad_output, output_size, input_size, ...): input_size is written.
    const auto in_size = trace_inputs::concrete_ints(op, 2);
    const double written =
        in_size.empty() ? self->bytes()
                        : static_cast<double>(trace_inputs::numel(in_size)) * self->element_bytes;
    return make(OpKind::kCopy, in_size.empty() ? *self->shape : in_size, self->bytes(), written,
                self->dtype);
  }
  std::vector<std::int64_t> out = *self->shape;
  const auto size = trace_inputs::concrete_ints(op, 1);
  for (std::size_t i = 0; i + 2 < out.size() && i < size.size(); ++i) out[2 + i] = size[i];
  return make(OpKind::kCopy, out, self->bytes(),
              static_cast<double>(trace_inputs::numel(out)) * self->element_bytes, self->dtype);
}

std::optional<MemoryWork> dropout(const TraceOp& op, std::string_view a) {
  const auto ts = trace_inputs::tensors(op);
  if (ts.empty()) return std::nullopt;
  const Tensor& x = ts.front();
  if (a == "native_dropout") {
    // The output and a one-byte keep mask are written.
    return make(OpKind::kElementwise, *x.shape, x.bytes(),
                x.bytes() + static_cast<double>(x.numel()), x.dtype);
  }
  return make(OpKind::kElementwise, *x.shape, sum_bytes(ts), x.bytes(), x.dtype);
}

std::optional<MemoryWork> foreach_lists(const TraceOp& op, std::string_view a) {
  // Tensor lists are recorded in some PyTorch versions only; without them the launch
  // geometry decides (geometry_shape.cpp).
  const auto all = trace_inputs::all_tensors(op);
  if (all.empty()) return std::nullopt;
  double first_list = 0;
  for (const auto& t : all) {
    if (t.input == all.front().input) first_list += t.bytes();
  }
  (void)a;
  const double elems = first_list / std::max(0.5, all.front().element_bytes);
  return make_rows(OpKind::kElementwise, 1, static_cast<std::int64_t>(elems), sum_bytes(all),
                   first_list, all.front().dtype);
}

// Inductor's Triton kernels: pointer arguments in order in_out, in, out; then the element
// counts (xnumel, rnumel) as concrete integers.
std::optional<MemoryWork> triton(const TraceOp& op, const KernelClass& cls) {
  const auto ts = trace_inputs::tensors(op);
  if (ts.empty()) return std::nullopt;
  std::vector<std::int64_t> counts;
  for (std::size_t i = 0; i < op.inputs.size(); ++i) {
    if (auto v = trace_inputs::concrete_int(op, i)) counts.push_back(*v);
  }
  const double written = ts.back().bytes();
  const double read = sum_bytes(ts) - (ts.size() > 1 ? written : 0);
  const OpKind kind =
      cls.family == KernelFamily::kTritonReduction ? OpKind::kReduction : OpKind::kElementwise;
  if (!counts.empty()) {
    const std::int64_t x = std::max<std::int64_t>(1, counts[0]);
    const std::int64_t r = counts.size() > 1 ? std::max<std::int64_t>(1, counts[1]) : 1;
    return make_rows(kind, x, r, read, written, ts.front().dtype);
  }
  return make(kind, *largest(ts)->shape, read, written, ts.front().dtype);
}

std::optional<MemoryWork> generic(const std::vector<Tensor>& ts, const KernelClass& cls) {
  if (ts.empty()) return std::nullopt;
  const Tensor* big = largest(ts);
  return make(kind_for_family(cls.family), *big->shape, sum_bytes(ts), big->bytes(), big->dtype);
}

// A tensor this many times the median one is a buffer the op indexes into (a KV cache, an
// embedding table, a memory pool), not an operand it streams through.
constexpr double kBufferRatio = 64.0;

}  // namespace

std::optional<MemoryWork> memory_work(const TraceOp& op, std::string_view op_name,
                                      const KernelClass& cls) {
  const std::string_view a = aten_name(op_name);
  const auto ts = trace_inputs::tensors(op);
  if (starts_with(op_name, "triton_") || cls.family == KernelFamily::kTritonPointwise ||
      cls.family == KernelFamily::kTritonReduction) {
    if (auto w = triton(op, cls)) return w;
  }
  if (starts_with(a, "_foreach_") || starts_with(a, "_fused_adam") ||
      starts_with(a, "_fused_sgd") || starts_with(a, "_fused_adagrad"))
    return foreach_lists(op, a);
  if (a.find("softmax") != std::string_view::npos) return softmax(op, a);
  if (a.find("layer_norm") != std::string_view::npos ||
      a.find("rms_norm") != std::string_view::npos)
    return layer_norm(op, a);
  if (a.find("group_norm") != std::string_view::npos) return group_norm(op, a);
  if (a.find("batch_norm") != std::string_view::npos) return batch_norm(op, a);
  if (a.find("pool") != std::string_view::npos && (a.find("max_pool") != std::string_view::npos ||
                                                   a.find("avg_pool") != std::string_view::npos))
    return pooling(op, a);
  if (starts_with(a, "upsample")) return upsample(op, a);
  if (a.find("dropout") != std::string_view::npos) return dropout(op, a);
  if (a == "cat" || a == "stack" || a == "_cat" || a == "concat" || a == "hstack" || a == "vstack")
    return concatenate(op);
  if (auto w = embedding(op, a)) return w;
  if (one_of(a, kReductions) || one_of(a, kReductionsExtra)) return reduction(op, ts);
  if (a == "copy_" || one_of(a, kCopies)) return copy(ts, a);
  if (a == "repeat" && !ts.empty()) {
    const auto reps = trace_inputs::concrete_ints(op, 1);
    const double factor = reps.empty() ? 1.0 : static_cast<double>(trace_inputs::numel(reps));
    const Tensor& self = ts.front();
    return make(OpKind::kCopy, *self.shape, self.bytes(), self.bytes() * factor, self.dtype);
  }
  if (ends_with(a, "_") && !starts_with(a, "_")) return in_place(ts, a);
  if (op_name.rfind("aten::", 0) == 0) {
    if (auto w = elementwise(ts, a)) {
      w->kind = kind_for_family(cls.family) == OpKind::kCopy ? OpKind::kCopy : w->kind;
      return w;
    }
  }
  return generic(ts, cls);
}

OpKind op_kind_for_family(KernelFamily f) { return kind_for_family(f); }

std::optional<MemoryWork> work_without_buffers(const TraceOp& op, const KernelClass& cls) {
  const auto ts = trace_inputs::tensors(op);
  if (ts.empty()) return std::nullopt;
  std::vector<double> sizes;
  sizes.reserve(ts.size());
  for (const auto& t : ts) sizes.push_back(t.bytes());
  std::sort(sizes.begin(), sizes.end());
  const double median = sizes[(sizes.size() - 1) / 2];
  std::vector<Tensor> operands;
  for (const auto& t : ts) {
    if (!(median > 0 && t.bytes() > kBufferRatio * median)) operands.push_back(t);
  }
  if (operands.size() == ts.size()) return std::nullopt;
  const Tensor* big = largest(operands);
  const double moved = sum_bytes(operands);
  return make(kind_for_family(cls.family), *big->shape, moved, moved, big->dtype);
}

bool is_tensor_iterator_reduction(std::string_view aten) {
  return one_of(aten, kReductions) || one_of(aten, kReductionsExtra);
}

}  // namespace pm2lat::reports::trace_rules
