// Builders and shape helpers shared by the forward and backward lowering of NeuSight
// model-file rows (model_lowering.h). Internal to reports/src/eval.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pm2lat/calibrate/neusight_models.h"
#include "pm2lat/reports/eval/model_lowering.h"

namespace pm2lat::reports::lowering {

using calibrate::ModelOpRow;
using calibrate::TensorDims;

// Bytes of an int64 index (nonzero's output, embedding and gather indices).
inline constexpr double kIndexBytes = 8;

double numel(const TensorDims& d);
double element_bytes(const std::string& dtype);
std::int64_t last_dim(const TensorDims& d);
// The product of all but the last dimension: the rows of a [rows, last] view.
std::int64_t leading(const TensorDims& d);
const TensorDims* first_tensor(const ModelOpRow& r);
std::vector<const TensorDims*> tensor_inputs_of(const ModelOpRow& r);

// Tensor inputs and the bytes they hold.
struct Inputs {
  int tensors = 0;
  double bytes = 0;
};
Inputs tensor_inputs(const ModelOpRow& r, double esize);

LoweredOp cpu_only(const ModelOpRow& r, OpGroup g, HostWork w);
// C[batch, m, n] = A[batch, m, k] * B[batch, k, n], operands stored as the flags say.
LoweredOp gemm(OpGroup g, std::string_view role, const std::string& key, std::int64_t batch,
               std::int64_t m, std::int64_t n, std::int64_t k, bool trans_a, bool trans_b,
               bool bias);
LoweredOp memory_bound(OpClass c, OpGroup g, std::string_view role, KernelFamily family,
                       OpKind kind, const std::string& key, std::int64_t rows, std::int64_t cols,
                       double read, double written);
LoweredOp elementwise(OpClass c, OpGroup g, std::string_view role, const std::string& key,
                      std::int64_t rows, std::int64_t cols, double read, double written);

// The copies torch.matmul makes of operands it cannot fold (RowContext::matmul_copies): the
// same strided-to-contiguous copy as an explicit .contiguous(), one per operand.
std::vector<LoweredOp> matmul_copies(OpClass c, OpGroup g, std::string_view role,
                                     const RowContext& ctx, double es);

// The kernel-table operator an elementwise row corresponds to ("add" / "addu", ...).
std::string elementwise_key(const ModelOpRow& r, int tensor_inputs);
// The embedding table's shape, from NeuSight's decompositions: "MEM:VxH" in the
// accumulation (inference files) or the backward (training files), else the accumulation's
// "VECadd:1x(V*H)" with H the row width of the output.
std::optional<TensorDims> embedding_table(const ModelOpRow& r);

bool is_fill(const std::string& k);
// Operators whose result the host reads (a count or an index list that sizes a later
// tensor): PyTorch copies it to the host, which waits for the GPU.
bool host_reads_result(const std::string& k);
// Expert choice of a mixture-of-experts layer.
bool is_routing_choice(const std::string& k);
// A row the files class as a reduction whose output is as large as its largest input:
// torch.max(a, b), cumsum. It streams its operands like an elementwise kernel.
bool is_pointwise_reduction(const ModelOpRow& r);
bool is_indexing(const std::string& k);
// Masked indexing: nonzero over the mask (the host reads how many rows it selected), then
// the gather (`assign` false) or scatter (`assign` true) of the selected rows.
std::vector<LoweredOp> masked_indexing(const ModelOpRow& r, double es, bool assign);

// The backward pass and the gradient accumulation of a row (backward_lowering.cpp).
std::vector<LoweredOp> backward(const ModelOpRow& r, const RowContext& ctx);
std::vector<LoweredOp> accumulate(const ModelOpRow& r, const RowContext& ctx);

}  // namespace pm2lat::reports::lowering
