#include "pm2lat/reports/eval/model_lowering.h"

#include <array>
#include <map>
#include <set>

#include "lowering_builders.h"
#include "pm2lat/models/broadcast_traffic.h"
#include "view_strides.h"

namespace pm2lat::reports {

using namespace lowering;  // NOLINT(build/namespaces): the builders are this file's vocabulary

namespace {

std::vector<LoweredOp> forward(const ModelOpRow& r, const RowContext& ctx) {
  const OpClass c = op_class_of(r.op_class);
  const OpGroup g = op_group_of(r, ctx);
  const std::string& cl = r.op_class;
  const std::string& k = r.op_kind;
  if (cl == "io") return {};
  if (cl == "host") return {cpu_only(r, g, HostWork::kPython)};
  if (cl == "view") return {cpu_only(r, g, HostWork::kView)};
  const double es = element_bytes(r.dtype);
  if (cl == "gemm") {
    if (r.M <= 0 || r.N <= 0 || r.K <= 0) return {cpu_only(r, g, HostWork::kLaunch)};
    const bool linear = g == OpGroup::kLinear;
    // NeuSight: N is the reduction; output [M, K]. nn.Linear multiplies by the transposed
    // weight (cuBLAS tn); addmm (GPT-2's Conv1D) and activation products by the operand as
    // stored (nn).
    const bool trans_b = linear ? k == "linear" : ctx.second_operand_transposed;
    std::vector<LoweredOp> ops = matmul_copies(c, g, "reshape", ctx, es);
    ops.push_back(
        gemm(g, "fwd", linear ? "linear" : "bmm", r.B, r.M, r.K, r.N, false, trans_b, linear));
    return ops;
  }
  if (ctx.masked_indexing) return masked_indexing(r, es, k != "getitem" && k != "index");
  if (host_reads_result(k)) {
    const TensorDims* in = first_tensor(r);
    const double n = in ? numel(*in) : 1.0;
    LoweredOp op = memory_bound(c, g, "count", KernelFamily::kReduction, OpKind::kReduction, k, 1,
                                static_cast<std::int64_t>(n), n * es, kIndexBytes);
    op.host_waits = true;
    return {op};
  }
  if (!r.output) return {cpu_only(r, g, HostWork::kView)};
  const TensorDims& out = *r.output;
  const double n = numel(out);
  const std::int64_t rows = leading(out), cols = last_dim(out);
  // A cast to the type the tensor already has, and indexing by integers or slices, return
  // views: they dispatch without a kernel. A cast that converts is a copy.
  if (cl == "cast") {
    if (ctx.input_dtype.empty() || ctx.input_dtype == r.dtype)
      return {cpu_only(r, g, HostWork::kView)};
    return {memory_bound(c, g, "convert", KernelFamily::kCopy, OpKind::kCopy, "copy", rows, cols,
                         n * element_bytes(ctx.input_dtype), n * es)};
  }
  if (k == "getitem") return {cpu_only(r, g, HostWork::kView)};
  const Inputs in = tensor_inputs(r, es);
  if (cl == "elementwise") {
    LoweredOp op =
        elementwise(c, g, "fwd", elementwise_key(r, in.tensors), rows, cols, in.bytes, n * es);
    // Arithmetic: every operand has the result's type (a comparison's or a select's mask does
    // not, and the file does not say its type).
    if (k == "add" || k == "sub" || k == "mul" || k == "div" || k == "truediv" || k == "pow") {
      const std::vector<const TensorDims*> inputs = tensor_inputs_of(r);
      std::vector<PointwiseOperand> operands;
      operands.reserve(inputs.size());
      for (const TensorDims* d : inputs) operands.push_back({*d, es});
      state_broadcast_reuse(operands, out, es, op.record.op.vec);
    }
    return {op};
  }
  if (cl == "softmax") {
    return {memory_bound(c, g, "fwd", KernelFamily::kSoftmax, OpKind::kSoftmax, "softmax", rows,
                         cols, n * es, n * es)};
  }
  if (cl == "layernorm") {
    return {memory_bound(c, g, "fwd", KernelFamily::kLayerNorm, OpKind::kLayerNorm, "ln", rows,
                         cols, n * es + 2.0 * static_cast<double>(cols) * es,
                         n * es + 8.0 * static_cast<double>(rows))};
  }
  if (cl == "embedding") {
    // Gather: read the selected rows and the indices, write the output.
    return {memory_bound(c, g, "fwd", KernelFamily::kEmbedding, OpKind::kEmbedding, "embedding",
                         rows, cols, n * es + static_cast<double>(rows) * kIndexBytes, n * es)};
  }
  if (is_pointwise_reduction(r)) {
    return {elementwise(c, g, "fwd", elementwise_key(r, in.tensors), rows, cols, in.bytes, n * es)};
  }
  if (cl == "reduction" || is_routing_choice(k)) {
    return {memory_bound(c, g, "fwd", KernelFamily::kReduction, OpKind::kReduction, k, rows, cols,
                         in.bytes > 0 ? in.bytes : n * es, n * es)};
  }
  if (cl == "memory") {
    if (is_fill(k)) {
      return {memory_bound(c, g, "fill", KernelFamily::kMemset, OpKind::kMemset, k, rows, cols, 0,
                           n * es)};
    }
    if (k == "dropout") {  // training dropout: random mask, scaled copy, mask kept for backward
      return {elementwise(c, g, "fwd", "dropout", rows, cols, n * es, n * es + n)};
    }
    if (is_indexing(k)) {  // assignment through a slice: a copy of the assigned values
      const auto tensors = tensor_inputs_of(r);
      const double v = tensors.size() > 1 ? numel(*tensors.back()) : n;
      return {memory_bound(c, g, "copy", KernelFamily::kCopy, OpKind::kCopy, "copy", rows, cols,
                           v * es, v * es)};
    }
    return {memory_bound(c, g, "copy", KernelFamily::kCopy, OpKind::kCopy, k, rows, cols, n * es,
                         n * es)};
  }
  return {cpu_only(r, g, HostWork::kView)};
}

std::string dims_key(const TensorDims& d) {
  std::string s;
  for (auto v : d) {
    s += std::to_string(v);
    s += 'x';
  }
  return s;
}

bool floating(const std::string& dtype) {
  return dtype == "fp32" || dtype == "fp16" || dtype == "bf16" || dtype == "fp64";
}

// Rows whose inputs receive gradients: not host values, not the benchmark's inputs and
// parameters (a parameter's gradients go to its accumulation), not an embedding's indices.
bool passes_gradients(const ModelOpRow& r) {
  return r.op_class != "host" && r.op_class != "io" && r.op_class != "embedding" &&
         !is_fill(r.op_kind);
}

// See RowContext::gradient_sums.
void place_gradient_sums(const std::vector<ModelOpRow>& rows, std::vector<RowContext>& out) {
  // Shapes of tensors that carry gradients: produced from parameters (GEMM, embedding,
  // layer norm) or from a tensor that carries them. A shape stands for its tensors.
  std::set<std::string> carrying;
  for (const ModelOpRow& r : rows) {
    if (!r.output || !floating(r.dtype)) continue;
    const bool has_parameters =
        r.op_class == "gemm" || r.op_class == "layernorm" || r.op_class == "embedding";
    bool from_gradient = has_parameters;
    if (passes_gradients(r)) {
      for (const TensorDims* d : tensor_inputs_of(r))
        from_gradient = from_gradient || carrying.contains(dims_key(*d));
    }
    if (from_gradient) carrying.insert(dims_key(*r.output));
  }
  // Per (occurrence count, shape): uses minus tensors produced, and the first using row.
  struct Balance {
    std::int64_t uses = 0, produced = 0;
    std::size_t first_user = 0;
    const TensorDims* dims = nullptr;
  };
  std::map<std::pair<std::int64_t, std::string>, Balance> balance;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const ModelOpRow& r = rows[i];
    if (r.op_class == "host" || r.op_class == "io") continue;
    if (passes_gradients(r)) {
      for (const TensorDims* d : tensor_inputs_of(r)) {
        const std::string key = dims_key(*d);
        if (!carrying.contains(key)) continue;
        Balance& b = balance[{r.repeat, key}];
        if (b.uses++ == 0) {
          b.first_user = i;
          b.dims = d;
        }
      }
    }
    const bool gradient_producer = passes_gradients(r) || r.op_class == "embedding";
    if (gradient_producer && r.output && carrying.contains(dims_key(*r.output)))
      ++balance[{r.repeat, dims_key(*r.output)}].produced;
  }
  for (const auto& [key, b] : balance) {
    for (std::int64_t s = b.produced; s < b.uses; ++s)
      out[b.first_user].gradient_sums.push_back(*b.dims);
  }
}

}  // namespace

std::string_view to_string(OpClass c) noexcept {
  static constexpr std::array<std::string_view, kOpClassCount> kNames{
      "gemm", "elementwise", "softmax", "layernorm", "embedding", "other"};
  return kNames[static_cast<std::size_t>(c)];
}

OpClass op_class_of(const std::string& s) noexcept {
  if (s == "gemm") return OpClass::kGemm;
  if (s == "elementwise") return OpClass::kElementwise;
  if (s == "softmax") return OpClass::kSoftmax;
  if (s == "layernorm") return OpClass::kLayerNorm;
  if (s == "embedding") return OpClass::kEmbedding;
  return OpClass::kOther;
}

std::string_view to_string(OpGroup g) noexcept {
  static constexpr std::array<std::string_view, kOpGroupCount> kNames{
      "linear", "bmm",       "elementwise", "softmax",     "layernorm", "dropout",  "copy",
      "fill",   "embedding", "reduction",   "moe-routing", "loss",      "grad-sum", "host"};
  return kNames[static_cast<std::size_t>(g)];
}

std::string_view to_string(Pass p) noexcept {
  static constexpr std::array<std::string_view, kPassCount> kNames{"fwd", "bwd", "acc"};
  return kNames[static_cast<std::size_t>(p)];
}

std::string_view cublas_layout(const GemmShape& g) noexcept {
  static constexpr std::array<std::string_view, 4> kNames{"nn", "nt", "tn", "tt"};
  return kNames[(g.trans_b ? 2u : 0u) + (g.trans_a ? 1u : 0u)];
}

OpGroup op_group_of(const ModelOpRow& r, const RowContext& ctx) {
  const std::string& cl = r.op_class;
  const std::string& k = r.op_kind;
  if (cl == "gemm") return k == "linear" || k == "addmm" ? OpGroup::kLinear : OpGroup::kBmm;
  if (cl == "io") return k == "output" ? OpGroup::kLoss : OpGroup::kHost;
  if (ctx.masked_indexing || host_reads_result(k) || is_routing_choice(k))
    return OpGroup::kMoeRouting;
  if (cl == "host" || cl == "view") return OpGroup::kHost;
  if (cl == "cast") {
    return ctx.input_dtype.empty() || ctx.input_dtype == r.dtype ? OpGroup::kHost : OpGroup::kCopy;
  }
  if (cl == "elementwise" || is_pointwise_reduction(r)) return OpGroup::kElementwise;
  if (cl == "softmax") return OpGroup::kSoftmax;
  if (cl == "layernorm") return OpGroup::kLayerNorm;
  if (cl == "embedding") return OpGroup::kEmbedding;
  if (cl == "reduction") return OpGroup::kReduction;
  if (cl == "memory") {
    if (k == "dropout") return OpGroup::kDropout;
    if (is_fill(k)) return OpGroup::kFill;
    if (k == "getitem") return OpGroup::kHost;
    return OpGroup::kCopy;
  }
  return OpGroup::kHost;
}

std::vector<RowContext> describe_rows(const std::vector<ModelOpRow>& rows) {
  std::vector<RowContext> out(rows.size());
  // The dtype of the last tensor produced with each shape: inputs name no producer, but a
  // shape just produced is almost always the tensor the next rows consume.
  std::map<std::string, std::string> dtype_of_shape;
  std::map<std::string, std::size_t> producer_of_shape;
  // The strides of the last tensor produced with each shape: a view keeps (view of a
  // contiguous tensor) or permutes (permute, transpose) its input's; any other operator
  // writes a contiguous tensor. A view of a tensor that is not contiguous is taken as
  // contiguous: the files' models view only freshly written tensors.
  std::map<std::string, Strides> strides_of_shape;
  auto strides_of = [&](const TensorDims& d) {
    auto it = strides_of_shape.find(dims_key(d));
    return it != strides_of_shape.end() ? it->second : contiguous_strides(d);
  };
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const ModelOpRow& r = rows[i];
    const auto tensors = tensor_inputs_of(r);
    if (!tensors.empty()) {
      if (auto it = dtype_of_shape.find(dims_key(*tensors[0])); it != dtype_of_shape.end())
        out[i].input_dtype = it->second;
    }
    if (r.op_class == "gemm" && tensors.size() >= 2) {
      auto it = producer_of_shape.find(dims_key(*tensors[1]));
      out[i].second_operand_transposed =
          it != producer_of_shape.end() && rows[it->second].op_kind == "transpose";
      if (r.op_kind == "matmul" && tensors[0]->size() >= 3 && tensors[1]->size() >= 3) {
        for (std::size_t t = 0; t < 2; ++t) {
          if (!batch_dims_fold(*tensors[t], strides_of(*tensors[t])))
            out[i].matmul_copies.push_back(*tensors[t]);
        }
      }
    }
    if (is_indexing(r.op_kind) && tensors.size() >= 2) {
      // A boolean index covering the leading dimensions of the indexed tensor.
      const TensorDims& data = *tensors[0];
      const TensorDims& index = *tensors[1];
      auto it = dtype_of_shape.find(dims_key(index));
      const bool bool_index = it != dtype_of_shape.end() && it->second == "bool";
      const bool leading_dims =
          index.size() <= data.size() && std::equal(index.begin(), index.end(), data.begin());
      out[i].masked_indexing = bool_index && leading_dims;
    }
    if (r.output && !r.dtype.empty()) dtype_of_shape[dims_key(*r.output)] = r.dtype;
    if (r.output) {
      producer_of_shape[dims_key(*r.output)] = i;
      Strides strides = contiguous_strides(*r.output);
      if ((r.op_kind == "permute" || r.op_kind == "transpose") && !tensors.empty()) {
        if (auto permuted = permuted_strides(*tensors[0], strides_of(*tensors[0]), *r.output))
          strides = std::move(*permuted);
      }
      strides_of_shape[dims_key(*r.output)] = std::move(strides);
    }
  }
  place_gradient_sums(rows, out);
  return out;
}

std::vector<LoweredOp> lower(const ModelOpRow& row, Pass pass, const RowContext& ctx) {
  switch (pass) {
    case Pass::kForward: return forward(row, ctx);
    case Pass::kBackward: {
      auto ops = backward(row, ctx);
      for (const TensorDims& d : ctx.gradient_sums) {
        const double b = numel(d) * element_bytes(row.dtype.empty() ? "fp32" : row.dtype);
        ops.push_back(elementwise(OpClass::kOther, OpGroup::kGradientSum, "sum", "add", leading(d),
                                  last_dim(d), 2 * b, b));
      }
      return ops;
    }
    case Pass::kAccumulate: return accumulate(row, ctx);
  }
  return {};
}

}  // namespace pm2lat::reports
