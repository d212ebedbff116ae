// GEMM shapes from PyTorch matmul operators. Convention (the one calibration uses): the
// row-major product C[batch, m, n] = A[batch, m, k] x B[batch, k, n]; m and n are output rows
// and columns, k the reduction; trans_a/trans_b say A or B is a transposed view in memory
// (nn.Linear multiplies by weight.t(), so its B is transposed).
#include <algorithm>

#include "op_inputs.h"
#include "op_shape_rules.h"

namespace pm2lat::reports::trace_rules {
namespace {

using trace_inputs::Tensor;

std::int64_t leading_product(const Tensor& t, std::size_t keep) {
  std::int64_t p = 1;
  for (std::size_t i = 0; i + keep < t.rank(); ++i) p *= std::max<std::int64_t>(1, t.dim(i));
  return p;
}

void set_types(GemmShape& g, const Tensor& a, const Tensor& b) {
  g.a = a.dtype;
  g.b = b.dtype;
  g.c = a.dtype;
}

std::optional<GemmShape> two_dim(const Tensor& a, const Tensor& b) {
  if (a.rank() != 2 || b.rank() != 2) return std::nullopt;
  GemmShape g;
  g.m = a.dim(0);
  g.k = a.dim(1);
  g.n = b.dim(1);
  g.trans_a = trace_inputs::is_transposed_view(a);
  g.trans_b = trace_inputs::is_transposed_view(b);
  set_types(g, a, b);
  return g;
}

std::optional<GemmShape> batched(const Tensor& a, const Tensor& b) {
  if (a.rank() != 3 || b.rank() != 3) return std::nullopt;
  GemmShape g;
  g.batch = std::max(a.dim(0), b.dim(0));
  g.m = a.dim(1);
  g.k = a.dim(2);
  g.n = b.dim(2);
  g.trans_a = trace_inputs::is_transposed_view(a);
  g.trans_b = trace_inputs::is_transposed_view(b);
  set_types(g, a, b);
  return g;
}

// torch.matmul's rules: vectors are promoted, a 2-D right operand folds the left operand's
// leading dimensions into m, otherwise leading dimensions broadcast into a batch.
std::optional<GemmShape> matmul(const Tensor& a, const Tensor& b) {
  if (a.rank() == 0 || b.rank() == 0) return std::nullopt;
  GemmShape g;
  set_types(g, a, b);
  const bool a_vec = a.rank() == 1;
  const bool b_vec = b.rank() == 1;
  g.k = a.dim_from_end(1);
  g.m = a_vec ? 1 : a.dim_from_end(2);
  g.n = b_vec ? 1 : b.dim_from_end(1);
  if (b.rank() <= 2) {
    g.m *= a_vec ? 1 : leading_product(a, 2);
  } else {
    std::int64_t batch_a = a.rank() > 2 ? leading_product(a, 2) : 1;
    std::int64_t batch_b = leading_product(b, 2);
    g.batch = std::max(batch_a, batch_b);
  }
  if (!a_vec) g.trans_a = trace_inputs::is_transposed_view(a);
  if (!b_vec) g.trans_b = trace_inputs::is_transposed_view(b);
  return g;
}

}  // namespace

std::string_view aten_name(std::string_view op_name) {
  if (op_name.rfind("aten::", 0) == 0) op_name.remove_prefix(6);
  return op_name;
}

bool is_matmul_op(std::string_view a) {
  return a == "mm" || a == "addmm" || a == "bmm" || a == "baddbmm" || a == "matmul" ||
         a == "linear" || a == "_addmm_activation" || a == "_scaled_mm" || a == "_int_mm" ||
         a == "mv" || a == "addmv" || a == "addbmm" || a == "einsum" || a == "_scaled_mm_v2";
}

std::optional<GemmShape> gemm_shape(const TraceOp& op, std::string_view a, bool inside_linear) {
  using trace_inputs::tensor_at;
  std::optional<GemmShape> g;
  auto at = [&](std::size_t i) { return tensor_at(op, i); };
  if (a == "mm" || a == "_int_mm" || a == "_scaled_mm" || a == "_scaled_mm_v2") {
    if (auto x = at(0), y = at(1); x && y) g = two_dim(*x, *y);
  } else if (a == "addmm" || a == "_addmm_activation") {
    if (auto x = at(1), y = at(2); x && y) g = two_dim(*x, *y);
    if (g) g->has_bias = true;
  } else if (a == "bmm") {
    if (auto x = at(0), y = at(1); x && y) g = batched(*x, *y);
  } else if (a == "baddbmm") {
    if (auto x = at(1), y = at(2); x && y) g = batched(*x, *y);
    if (g) g->has_bias = true;
  } else if (a == "addbmm") {
    // Sums the batch of products into one matrix: one long reduction.
    if (auto x = at(1), y = at(2); x && y) g = batched(*x, *y);
    if (g) {
      g->k *= g->batch;
      g->batch = 1;
      g->has_bias = true;
    }
  } else if (a == "matmul") {
    if (auto x = at(0), y = at(1); x && y) g = matmul(*x, *y);
  } else if (a == "linear") {
    // linear(input[..., k], weight[n, k], bias): input x weight.t().
    if (auto x = at(0), w = at(1); x && w && w->rank() == 2 && x->rank() >= 1) {
      GemmShape s;
      s.k = x->dim_from_end(1);
      s.m = leading_product(*x, 1);
      s.n = w->dim(0);
      s.trans_a = trace_inputs::is_transposed_view(*x);
      s.trans_b = true;
      s.has_bias = at(2).has_value();
      set_types(s, *x, *w);
      g = s;
    }
  } else if (a == "mv") {
    if (auto x = at(0), v = at(1); x && v && x->rank() == 2) {
      GemmShape s;
      s.m = x->dim(0);
      s.k = x->dim(1);
      s.n = 1;
      s.trans_a = trace_inputs::is_transposed_view(*x);
      set_types(s, *x, *v);
      g = s;
    }
  } else if (a == "addmv") {
    if (auto x = at(1), v = at(2); x && v && x->rank() == 2) {
      GemmShape s;
      s.m = x->dim(0);
      s.k = x->dim(1);
      s.n = 1;
      s.has_bias = true;
      s.trans_a = trace_inputs::is_transposed_view(*x);
      set_types(s, *x, *v);
      g = s;
    }
  }
  if (!g || !g->valid()) return std::nullopt;
  // Traces without strides: the weight of a linear layer is used transposed.
  const bool strides_recorded = std::any_of(op.inputs.begin(), op.inputs.end(),
                                            [](const OpInput& in) { return !in.strides.empty(); });
  if (!strides_recorded && inside_linear) g->trans_b = true;
  return g;
}

DType gemm_compute_type(DType operands, const KernelClass& cls) {
  switch (operands) {
    case DType::kFp32:
    case DType::kTf32: return cls.gemm.tensor_core ? DType::kTf32 : DType::kFp32;
    case DType::kFp16:
    case DType::kBf16:
    case DType::kFp8E4M3:
    case DType::kFp8E5M2:
    case DType::kFp4E2M1: return DType::kFp32;
    case DType::kInt8: return DType::kInt32;
    case DType::kFp64: return DType::kFp64;
    default: return operands;
  }
}

}  // namespace pm2lat::reports::trace_rules
