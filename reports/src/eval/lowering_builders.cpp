#include "lowering_builders.h"

#include <algorithm>
#include <numeric>

namespace pm2lat::reports::lowering {

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

const TensorDims* first_tensor(const ModelOpRow& r) {
  for (const auto& d : r.inputs) {
    if (d) return &*d;
  }
  return nullptr;
}

std::vector<const TensorDims*> tensor_inputs_of(const ModelOpRow& r) {
  std::vector<const TensorDims*> out;
  for (const auto& d : r.inputs) {
    if (d) out.push_back(&*d);
  }
  return out;
}

LoweredOp cpu_only(const ModelOpRow& r, OpGroup g, HostWork w) {
  LoweredOp op;
  op.op_class = op_class_of(r.op_class);
  op.group = g;
  op.host = w;
  op.has_kernel = false;
  return op;
}

// C[batch, m, n] = A[batch, m, k] * B[batch, k, n], operands stored as the flags say.
LoweredOp gemm(OpGroup g, std::string_view role, const std::string& key, std::int64_t batch,
               std::int64_t m, std::int64_t n, std::int64_t k, bool trans_a, bool trans_b,
               bool bias) {
  LoweredOp op;
  op.op_class = OpClass::kGemm;
  op.group = g;
  op.role = role;
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

LoweredOp memory_bound(OpClass c, OpGroup g, std::string_view role, KernelFamily family,
                       OpKind kind, const std::string& key, std::int64_t rows, std::int64_t cols,
                       double read, double written) {
  LoweredOp op;
  op.op_class = c;
  op.group = g;
  op.role = role;
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

LoweredOp elementwise(OpClass c, OpGroup g, std::string_view role, const std::string& key,
                      std::int64_t rows, std::int64_t cols, double read, double written) {
  return memory_bound(c, g, role, KernelFamily::kElementwise, OpKind::kElementwise, key, rows, cols,
                      read, written);
}

std::vector<LoweredOp> matmul_copies(OpClass c, OpGroup g, std::string_view role,
                                     const RowContext& ctx, double es) {
  std::vector<LoweredOp> ops;
  for (const TensorDims& d : ctx.matmul_copies) {
    const double b = numel(d) * es;
    ops.push_back(memory_bound(c, g, role, KernelFamily::kCopy, OpKind::kCopy, "contiguous",
                               leading(d), last_dim(d), b, b));
  }
  return ops;
}

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

// The embedding table's shape, from NeuSight's decompositions: "MEM:VxH" in the
// accumulation (inference files) or the backward (training files), else the accumulation's
// "VECadd:1x(V*H)" with H the row width of the output.
std::optional<TensorDims> embedding_table(const ModelOpRow& r) {
  for (const std::string* ops : {&r.neusight_acc_ops, &r.neusight_bw_ops}) {
    const auto p = ops->find("MEM:");
    if (p == std::string::npos) continue;
    const auto e = ops->find_first_of(";|", p);
    auto dims =
        calibrate::parse_dims_text(ops->substr(p + 4, e == std::string::npos ? e : e - p - 4));
    if (dims && dims->size() == 2) return dims;
  }
  const auto p = r.neusight_acc_ops.find("VECadd:1x");
  if (p == std::string::npos || !r.output || r.output->empty()) return std::nullopt;
  const auto e = r.neusight_acc_ops.find_first_of(";|", p);
  const auto n = calibrate::parse_dims_text(
      r.neusight_acc_ops.substr(p + 9, e == std::string::npos ? e : e - p - 9));
  const std::int64_t h = r.output->back();
  if (!n || n->size() != 1 || h <= 0 || (*n)[0] % h != 0) return std::nullopt;
  return TensorDims{(*n)[0] / h, h};
}

bool is_fill(const std::string& k) {
  return k == "ones" || k == "full" || k == "arange" || k == "tensor" || k == "zeros" ||
         k == "full_like" || k == "zeros_like" || k == "ones_like" || k == "new_zeros" ||
         k == "new_ones" || k == "empty";
}

// Operators whose result the host reads (a count or an index list that sizes a later
// tensor): PyTorch copies it to the host, which waits for the GPU.
bool host_reads_result(const std::string& k) {
  return k == "count_nonzero" || k == "count" || k == "nonzero" || k == "item" || k == "tolist" ||
         k == "masked_select" || k == "unique" || k == "argwhere";
}

// Expert choice of a mixture-of-experts layer.
bool is_routing_choice(const std::string& k) {
  return k == "argmax" || k == "argmin" || k == "topk" || k == "one_hot";
}

bool is_pointwise_reduction(const ModelOpRow& r) {
  if (r.op_class != "reduction" || !r.output) return false;
  double largest = 0;
  for (const TensorDims* d : tensor_inputs_of(r)) largest = std::max(largest, numel(*d));
  return largest > 0 && numel(*r.output) >= largest;
}

bool is_indexing(const std::string& k) {
  return k == "getitem" || k == "setitem" || k == "index" || k == "index_put" ||
         k == "index_put_" || k == "masked_scatter";
}

// Masked indexing: nonzero over the mask (the host reads how many rows it selected), then
// the gather (getitem) or scatter (setitem) of the selected rows.
std::vector<LoweredOp> masked_indexing(const ModelOpRow& r, double es, bool assign) {
  const auto tensors = tensor_inputs_of(r);
  const TensorDims* mask = tensors.size() > 1 ? tensors[1] : nullptr;
  const double mask_elems = mask ? numel(*mask) : 1.0;
  // Rows moved: the gathered output (getitem) or the assigned values (setitem).
  const TensorDims* moved =
      assign ? (tensors.size() > 2 ? tensors[2] : nullptr) : (r.output ? &*r.output : nullptr);
  const double moved_elems = moved ? numel(*moved) : 0.0;
  const std::int64_t moved_rows = moved ? leading(*moved) : 1;
  const std::int64_t cols = moved ? last_dim(*moved) : 1;
  LoweredOp nz =
      memory_bound(OpClass::kOther, OpGroup::kMoeRouting, "nonzero", KernelFamily::kReduction,
                   OpKind::kReduction, "nonzero", 1, static_cast<std::int64_t>(mask_elems),
                   mask_elems, static_cast<double>(moved_rows) * kIndexBytes);
  nz.host_waits = true;
  LoweredOp move = memory_bound(
      OpClass::kOther, OpGroup::kMoeRouting, assign ? "scatter" : "gather",
      KernelFamily::kEmbedding, OpKind::kEmbedding, assign ? "index_put" : "index", moved_rows,
      cols, moved_elems * es + static_cast<double>(moved_rows) * kIndexBytes, moved_elems * es);
  return {nz, move};
}

}  // namespace pm2lat::reports::lowering
