#include "pm2lat/reports/eval/model_lowering.h"

#include <array>
#include <numeric>

namespace pm2lat::reports {
namespace {

using calibrate::ModelOpRow;
using calibrate::TensorDims;

double numel(const TensorDims& d) {
  return std::accumulate(d.begin(), d.end(), 1.0,
                         [](double a, std::int64_t b) { return a * static_cast<double>(b); });
}

double element_bytes(const std::string& dtype) {
  if (dtype == "int64" || dtype == "fp64") return 8;
  if (dtype == "bool" || dtype == "int8" || dtype == "uint8") return 1;
  if (dtype == "fp16" || dtype == "bf16") return 2;
  return 4;
}

std::int64_t last_dim(const TensorDims& d) { return d.empty() ? 1 : d.back(); }
std::int64_t leading(const TensorDims& d) {
  std::int64_t r = 1;
  for (std::size_t i = 0; i + 1 < d.size(); ++i) r *= d[i];
  return d.empty() ? 1 : r;
}

LoweredOp cpu_only(OpClass c, HostWork w) {
  LoweredOp op;
  op.op_class = c;
  op.host = w;
  op.has_kernel = false;
  return op;
}

// C[batch, m, n] = A[batch, m, k] * B[batch, k, n].
LoweredOp gemm(OpClass c, const std::string& key, std::int64_t batch, std::int64_t m,
               std::int64_t n, std::int64_t k, bool trans_a, bool trans_b, bool bias) {
  LoweredOp op;
  op.op_class = c;
  op.has_kernel = true;
  op.overhead_key = key;
  op.cls.family = KernelFamily::kGemm;
  OpContext& ctx = op.record.op;
  ctx.kind = OpKind::kGemm;
  ctx.name = key;
  ctx.gemm.batch = std::max<std::int64_t>(1, batch);
  ctx.gemm.m = m;
  ctx.gemm.n = n;
  ctx.gemm.k = k;
  ctx.gemm.trans_a = trans_a;
  ctx.gemm.trans_b = trans_b;
  ctx.gemm.a = ctx.gemm.b = ctx.gemm.c = ctx.gemm.compute = DType::kFp32;
  ctx.gemm.has_bias = bias;
  return op;
}

LoweredOp memory_bound(OpClass c, KernelFamily family, OpKind kind, const std::string& key,
                       std::int64_t rows, std::int64_t cols, double read, double written) {
  LoweredOp op;
  op.op_class = c;
  op.has_kernel = true;
  op.overhead_key = key;
  op.cls.family = family;
  OpContext& ctx = op.record.op;
  ctx.kind = kind;
  ctx.name = key;
  ctx.vec.rows = std::max<std::int64_t>(1, rows);
  ctx.vec.cols = std::max<std::int64_t>(1, cols);
  ctx.vec.bytes_read = read;
  ctx.vec.bytes_written = written;
  ctx.vec.dtype = DType::kFp32;
  return op;
}

// Tensor inputs and the bytes they hold.
struct Inputs {
  int tensors = 0;
  double bytes = 0;
};
Inputs tensor_inputs(const ModelOpRow& r, double esize) {
  Inputs in;
  for (const auto& d : r.inputs) {
    if (!d) continue;
    ++in.tensors;
    in.bytes += numel(*d) * esize;
  }
  return in;
}

// The kernel-table operator an elementwise row corresponds to ("add" / "addu", ...).
std::string elementwise_key(const ModelOpRow& r, int tensor_inputs) {
  const std::string& k = r.op_kind;
  const bool scalar = tensor_inputs < 2;
  if (k == "add" || k == "sub") return scalar ? "addu" : "add";
  if (k == "mul") return scalar ? "mulu" : "mul";
  if (k == "div" || k == "truediv") return scalar ? "divu" : "div";
  if (k == "pow") return scalar ? "powu" : "pow";
  return k;  // gelu, tanh, relu keep their names; others use the family's bandwidth fit
}

// The embedding table's shape: from NeuSight's accumulation decomposition ("MEM:VxH").
std::optional<TensorDims> embedding_table(const ModelOpRow& r) {
  const auto p = r.neusight_acc_ops.find("MEM:");
  if (p == std::string::npos) return std::nullopt;
  const auto e = r.neusight_acc_ops.find_first_of(";|", p);
  return calibrate::parse_dims_text(
      r.neusight_acc_ops.substr(p + 4, e == std::string::npos ? std::string::npos : e - p - 4));
}

std::vector<LoweredOp> forward(const ModelOpRow& r) {
  const OpClass c = op_class_of(r.op_class);
  const std::string& cl = r.op_class;
  if (cl == "io") return {};
  if (cl == "host") return {cpu_only(c, HostWork::kPython)};
  if (cl == "view") return {cpu_only(c, HostWork::kView)};
  const double es = element_bytes(r.dtype);
  if (cl == "gemm") {
    if (r.M <= 0 || r.N <= 0 || r.K <= 0) return {cpu_only(c, HostWork::kLaunch)};
    const bool linear = r.op_kind == "linear" || r.op_kind == "addmm";
    // NeuSight: N is the reduction; output [M, K]. nn.Linear multiplies by the transposed
    // weight; addmm (GPT-2's Conv1D) by the weight as stored.
    return {gemm(c, linear ? "linear" : "bmm", r.B, r.M, r.K, r.N, false, r.op_kind == "linear",
                 linear)};
  }
  // Indexing returns a view, and casts of these fp32 models to their own type are no-ops:
  // both dispatch without a kernel.
  if (cl == "cast" || r.op_kind == "getitem") return {cpu_only(c, HostWork::kView)};
  if (!r.output) return {cpu_only(c, HostWork::kView)};
  const TensorDims& out = *r.output;
  const double n = numel(out);
  const std::int64_t rows = leading(out), cols = last_dim(out);
  const Inputs in = tensor_inputs(r, es);
  if (cl == "elementwise") {
    return {memory_bound(c, KernelFamily::kElementwise, OpKind::kElementwise,
                         elementwise_key(r, in.tensors), rows, cols, in.bytes, n * es)};
  }
  if (cl == "softmax") {
    return {memory_bound(c, KernelFamily::kSoftmax, OpKind::kSoftmax, "softmax", rows, cols, n * es,
                         n * es)};
  }
  if (cl == "layernorm") {
    return {memory_bound(c, KernelFamily::kLayerNorm, OpKind::kLayerNorm, "ln", rows, cols,
                         n * es + 2.0 * static_cast<double>(cols) * es,
                         n * es + 8.0 * static_cast<double>(rows))};
  }
  if (cl == "embedding") {
    // Gather: read the selected rows and the indices, write the output.
    return {memory_bound(c, KernelFamily::kEmbedding, OpKind::kEmbedding, "embedding", rows, cols,
                         n * es + static_cast<double>(rows) * 8, n * es)};
  }
  if (cl == "reduction") {
    return {memory_bound(c, KernelFamily::kReduction, OpKind::kReduction, r.op_kind, rows, cols,
                         in.bytes > 0 ? in.bytes : n * es, n * es)};
  }
  if (cl == "memory") {
    const std::string& k = r.op_kind;
    if (k == "ones" || k == "full" || k == "arange" || k == "tensor" || k == "zeros") {
      return {memory_bound(c, KernelFamily::kMemset, OpKind::kMemset, k, rows, cols, 0, n * es)};
    }
    if (k == "dropout") {  // training dropout: random mask, scaled copy, mask kept for backward
      return {memory_bound(c, KernelFamily::kElementwise, OpKind::kElementwise, "dropout", rows,
                           cols, n * es, n * es + n)};
    }
    return {memory_bound(c, KernelFamily::kCopy, OpKind::kCopy, k, rows, cols, n * es, n * es)};
  }
  return {cpu_only(c, HostWork::kView)};
}

std::vector<LoweredOp> backward(const ModelOpRow& r) {
  const OpClass c = op_class_of(r.op_class);
  const std::string& cl = r.op_class;
  if (cl == "io" || cl == "host" || cl == "cast") return {};
  if (cl == "view") return {cpu_only(c, HostWork::kView)};  // the gradient of a view is a view
  const double es = element_bytes(r.dtype);
  if (cl == "gemm") {
    if (r.M <= 0 || r.N <= 0 || r.K <= 0) return {};
    const bool linear = r.op_kind == "linear" || r.op_kind == "addmm";
    // Forward C[B,M,K] = A[B,M,N] x W[B,N,K] (N reduction). dA = dC W^T: [M,N] over K;
    // dW = A^T dC: [N,K] over M (batched for bmm, summed over the batch for linear).
    std::vector<LoweredOp> ops;
    ops.push_back(gemm(c, "bmm", r.B, r.M, r.N, r.K, false, true, false));
    if (linear) {
      ops.push_back(
          gemm(c, "bmm", 1, r.K, r.N, r.M * std::max<std::int64_t>(1, r.B), true, false, false));
      // Bias gradient: a column reduction of dC.
      ops.push_back(memory_bound(
          OpClass::kOther, KernelFamily::kReduction, OpKind::kReduction, "sum", r.M, r.K,
          static_cast<double>(r.M) * static_cast<double>(r.K) * 4, static_cast<double>(r.K) * 4));
    } else {
      ops.push_back(gemm(c, "bmm", r.B, r.N, r.K, r.M, true, false, false));
    }
    return ops;
  }
  if (!r.output) return {};
  const TensorDims& out = *r.output;
  const double n = numel(out);
  const std::int64_t rows = leading(out), cols = last_dim(out);
  const Inputs in = tensor_inputs(r, es);
  if (cl == "elementwise") {
    const std::string& k = r.op_kind;
    if (k == "add" || k == "sub") return {cpu_only(c, HostWork::kView)};  // gradient passes through
    if (k == "lt" || k == "where" || k == "masked_fill" || k == "masked_fill_") {
      return {memory_bound(c, KernelFamily::kElementwise, OpKind::kElementwise, "mul", rows, cols,
                           2 * n * es, n * es)};
    }
    // One kernel per tensor input needing a gradient: reads the gradient and an operand.
    std::vector<LoweredOp> ops;
    const int kernels = std::max(1, in.tensors);
    const std::string key =
        (k == "gelu" || k == "tanh" || k == "relu") ? k : (kernels > 1 ? "mul" : "mulu");
    for (int i = 0; i < kernels; ++i) {
      ops.push_back(memory_bound(c, KernelFamily::kElementwise, OpKind::kElementwise, key, rows,
                                 cols, 2 * n * es, n * es));
    }
    return ops;
  }
  if (cl == "softmax") {  // dX = y * (dY - sum(dY * y)): reads y and dY
    return {memory_bound(c, KernelFamily::kSoftmax, OpKind::kSoftmax, "softmax", rows, cols,
                         2 * n * es, n * es)};
  }
  if (cl == "layernorm") {  // input gradient, then gamma/beta gradients
    return {memory_bound(c, KernelFamily::kLayerNorm, OpKind::kLayerNorm, "ln", rows, cols,
                         2 * n * es, n * es),
            memory_bound(c, KernelFamily::kLayerNorm, OpKind::kLayerNorm, "ln", rows, cols,
                         2 * n * es, 2.0 * static_cast<double>(cols) * es)};
  }
  if (cl == "embedding") {
    // Dense embedding backward: zero the table's gradient, then scatter-add the rows.
    const auto table = embedding_table(r);
    const double table_bytes = table ? numel(*table) * es : n * es;
    return {memory_bound(c, KernelFamily::kMemset, OpKind::kMemset, "embedding", rows, cols, 0,
                         table_bytes),
            memory_bound(c, KernelFamily::kEmbedding, OpKind::kEmbedding, "embedding", rows, cols,
                         n * es + static_cast<double>(rows) * 8, n * es)};
  }
  if (cl == "memory") {
    if (r.op_kind == "dropout") {
      return {memory_bound(c, KernelFamily::kElementwise, OpKind::kElementwise, "mul", rows, cols,
                           n * es + n, n * es)};
    }
    return {cpu_only(c, HostWork::kView)};
  }
  return {};
}

std::vector<LoweredOp> accumulate(const ModelOpRow& r) {
  const OpClass c = op_class_of(r.op_class);
  // AccumulateGrad: grad += new gradient for every parameter of the operator.
  auto acc = [&](std::int64_t rows, std::int64_t cols) {
    const double b = static_cast<double>(rows) * static_cast<double>(cols) * 4;
    return memory_bound(c, KernelFamily::kElementwise, OpKind::kElementwise, "add", rows, cols,
                        2 * b, b);
  };
  if (r.op_class == "gemm" && (r.op_kind == "linear" || r.op_kind == "addmm") && r.N > 0 &&
      r.K > 0) {
    return {acc(r.K, r.N), acc(1, r.K)};
  }
  if (r.op_class == "layernorm" && r.output) {
    const std::int64_t h = last_dim(*r.output);
    return {acc(1, h), acc(1, h)};
  }
  if (r.op_class == "embedding") {
    if (const auto t = embedding_table(r); t && t->size() == 2) return {acc((*t)[0], (*t)[1])};
  }
  return {};
}

}  // namespace

std::string_view to_string(OpClass c) noexcept {
  static constexpr std::array<std::string_view, 6> kNames{"gemm",      "elementwise", "softmax",
                                                          "layernorm", "embedding",   "other"};
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

std::vector<LoweredOp> lower(const ModelOpRow& row, Pass pass) {
  switch (pass) {
    case Pass::kForward: return forward(row);
    case Pass::kBackward: return backward(row);
    case Pass::kAccumulate: return accumulate(row);
  }
  return {};
}

}  // namespace pm2lat::reports
