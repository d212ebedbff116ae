// Lowering one traced operator (a NeuSight model-file row) to the GPU work it launches:
// GEMMs with the right shape convention and operand layout, memory-bound kernels with the
// bytes they move, and CPU-only operators (views, Python values) that cost dispatch time but
// no kernel. For training, the backward pass and the gradient accumulation are derived from
// the forward shapes the way PyTorch's autograd runs them: input- and weight-gradient GEMMs
// (cuBLAS layouts nn / nt where the forward ran tn), elementwise/softmax/layer-norm backward
// kernels, dropout's masked scale, the dense embedding backward, one accumulation per
// parameter, and the backward of the benchmark's cross-entropy loss over the logits.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pm2lat/calibrate/neusight_models.h"
#include "pm2lat/kernel_class.h"
#include "pm2lat/kernel_record.h"

namespace pm2lat::reports {

// What the host does for an operator: launch kernels, or dispatch without a kernel.
enum class HostWork : std::uint8_t {
  kLaunch,  // framework dispatch ending in a kernel launch
  kView,    // framework dispatch without a kernel (view, permute, expand, ...)
  kPython,  // a Python-level value (size, getitem of ints): almost free
};

// Operator classes of the coarse --by-class breakdown.
enum class OpClass : std::uint8_t { kGemm, kElementwise, kSoftmax, kLayerNorm, kEmbedding, kOther };
inline constexpr std::size_t kOpClassCount = 6;
std::string_view to_string(OpClass c) noexcept;
OpClass op_class_of(const std::string& neusight_class) noexcept;

// What an operator row is, finer than OpClass: the unit of the per-operator comparison with
// the files' measured latencies, and the first part of every kernel's breakdown key.
enum class OpGroup : std::uint8_t {
  kLinear,       // nn.Linear / Conv1D (addmm): the kernel tables' `linear` rows, layout tn
  kBmm,          // matmul / bmm of activations: the kernel tables' `bmm` rows, layout nn
  kElementwise,  // pointwise arithmetic and activations
  kSoftmax,
  kLayerNorm,
  kDropout,  // training dropout (a view in inference)
  kCopy,     // contiguous, clone, cat, casts that convert
  kFill,     // ones, zeros, full, arange
  kEmbedding,
  kReduction,    // mean, sum, ...
  kMoeRouting,   // expert choice and token dispatch: masks, counts, masked gathers/scatters
  kLoss,         // the benchmark's cross-entropy (backward only: the forward is not timed)
  kGradientSum,  // autograd's sum of the gradients of a tensor used more than once
  kHost,         // views, Python values, no-op casts: dispatch only
};
inline constexpr std::size_t kOpGroupCount = 14;
std::string_view to_string(OpGroup g) noexcept;

enum class Pass : std::uint8_t { kForward, kBackward, kAccumulate };
inline constexpr std::size_t kPassCount = 3;
std::string_view to_string(Pass p) noexcept;

// cuBLAS's name for the operand layout of a row-major GEMM (the first letter is the stored
// B operand, as in `ampere_sgemm_128x64_tn` for nn.Linear's forward): "nn", "nt", "tn", "tt".
std::string_view cublas_layout(const GemmShape& g) noexcept;

struct LoweredOp {
  OpClass op_class = OpClass::kOther;
  OpGroup group = OpGroup::kHost;
  HostWork host = HostWork::kLaunch;
  bool has_kernel = false;
  // The host reads this kernel's result (a count that sizes a later tensor): it waits for
  // the GPU to finish everything queued before it dispatches anything else.
  bool host_waits = false;
  std::string_view role;     // what the kernel does within its operator ("dgrad", "mask", ...)
  KernelRecord record;       // op context filled; no kernel name (the target's kernel is chosen)
  KernelClass cls;           // family set from the operator
  std::string overhead_key;  // profile call-overhead key ("linear", "bmm", "add", ...)
};

// Facts about a row that only its neighbours in the file give.
struct RowContext {
  // The row indexes (getitem) or assigns into (setitem) a tensor through a boolean mask:
  // nonzero on the mask, whose count the host must read, then a gather or scatter.
  bool masked_indexing = false;
  // The dtype of the row's first tensor input, when a previous row produced a tensor of that
  // shape ("" = unknown): a cast to another type is a conversion kernel, not a no-op.
  std::string input_dtype;
  // A product's second operand is a transposed view (attention's K^T): the GEMM reads it
  // transposed (cuBLAS tn) and its input gradient multiplies by it as stored (nn).
  bool second_operand_transposed = false;
  // The operands torch.matmul copies before its batched product: views of three or more
  // dimensions whose batch dimensions do not fold into one (attention's heads split by
  // permute(0, 2, 1, 3), batch above one). matmul reshapes each operand to [batch, rows,
  // cols] and reshape copies what it cannot view (aten/src/ATen/native/LinearAlgebra.cpp,
  // _matmul_impl). In the backward pass each such operand's gradient, contiguous out of the
  // product, reaches its producer permuted, whose reshape copies it back.
  std::vector<calibrate::TensorDims> matmul_copies;
  // Gradients autograd sums in this row's backward, one tensor shape per sum. A tensor used
  // by several operators receives one gradient from each; the engine adds them before it
  // runs the producer's backward (InputBuffer::accumulate: read both, write the sum). The
  // files do not name a row's producers, so the sums are counted per tensor shape over the
  // rows that occur equally often (the layer, the rest): uses of the shape's tensors beyond
  // one per tensor produced. They land on the first row of that set using the shape.
  std::vector<calibrate::TensorDims> gradient_sums;
};

// One context per row, from the dtypes of the tensors earlier rows produced.
std::vector<RowContext> describe_rows(const std::vector<calibrate::ModelOpRow>& rows);

// The group a row's operator belongs to.
OpGroup op_group_of(const calibrate::ModelOpRow& row, const RowContext& ctx = {});

// The work of one row in one pass (empty when the pass has none for this operator).
std::vector<LoweredOp> lower(const calibrate::ModelOpRow& row, Pass pass,
                             const RowContext& ctx = {});

}  // namespace pm2lat::reports
