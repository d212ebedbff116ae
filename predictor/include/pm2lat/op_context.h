// What the library call (cuBLAS, cuDNN, an ATen operator, a trace's operator row) said
// about the work a kernel does. A kernel inherits the context of the call that launched it.
#pragma once

#include <cstdint>
#include <string>

#include "pm2lat/dtype.h"
#include "pm2lat/gemm_scaling.h"

namespace pm2lat {

enum class OpKind : std::uint8_t {
  kUnknown = 0,
  kGemm,         // matrix multiply (linear, matmul, bmm, addmm, cuBLAS/cuBLASLt)
  kConv,         // convolution (cuDNN)
  kAttention,    // fused attention (FlashAttention, mem-efficient, cuDNN SDPA)
  kElementwise,  // pointwise over tensors
  kReduction,    // reductions (sum, mean, norms) other than the ones below
  kSoftmax,
  kLayerNorm,
  kEmbedding,  // gather / index_select
  kCopy,       // copies, casts, contiguous, cat
  kMemset,
  kCollective,  // NCCL and other communication
};

std::string_view to_string(OpKind k) noexcept;
OpKind parse_op_kind(std::string_view s) noexcept;

// GEMM in the row-major (PyTorch) view: C[batch, m, n] = A[batch, m, k] * B[batch, k, n].
// m, n are output dimensions and k is the reduction, whatever the data source calls them.
// trans_a / trans_b say that A / B are stored transposed in that view: nn.Linear's
// y = x W^T has trans_b (the weight is stored [n, k]). A column-major cuBLAS call
// C(M,N) = op(A)(M,K) op(B)(K,N) is the row-major C^T[N,M] = op(B)^T op(A)^T: m = N, n = M,
// trans_a = (transb != N), trans_b = (transa != N).
struct GemmShape {
  std::int64_t batch = 1;
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  bool trans_a = false;
  bool trans_b = false;
  DType a = DType::kUnknown;
  DType b = DType::kUnknown;
  DType c = DType::kUnknown;
  DType compute = DType::kUnknown;  // math/accumulate type (kTf32 when TF32 is allowed)
  // Scale factors of low-precision operands (FP8, FP4); kNone for plain types.
  GemmScaling scaling = GemmScaling::kNone;
  bool has_bias = false;
  // What the library said about the algorithm it ran, when it said (cuBLASLt algo
  // attributes). Zero = not known.
  std::int32_t algo_tile_m = 0;
  std::int32_t algo_tile_n = 0;
  std::int32_t algo_stages = 0;
  std::int32_t algo_split_k = 0;

  bool valid() const noexcept { return batch > 0 && m > 0 && n > 0 && k > 0; }
  bool operator==(const GemmShape&) const = default;
  double flops() const noexcept {
    return 2.0 * static_cast<double>(batch) * static_cast<double>(m) * static_cast<double>(n) *
           static_cast<double>(k);
  }
};

struct ConvShape {
  std::int64_t batch = 0;
  std::int64_t in_channels = 0;
  std::int64_t out_channels = 0;
  std::int64_t in_h = 0, in_w = 0;
  std::int64_t kernel_h = 0, kernel_w = 0;
  std::int64_t stride_h = 1, stride_w = 1;
  std::int64_t pad_h = 0, pad_w = 0;
  std::int64_t dilation_h = 1, dilation_w = 1;
  std::int64_t groups = 1;
  DType dtype = DType::kUnknown;

  bool valid() const noexcept {
    return batch > 0 && in_channels > 0 && out_channels > 0 && in_h > 0 && in_w > 0 &&
           kernel_h > 0 && kernel_w > 0 && stride_h > 0 && stride_w > 0;
  }
  bool operator==(const ConvShape&) const = default;
  std::int64_t out_h() const noexcept;
  std::int64_t out_w() const noexcept;
  double flops() const noexcept;
};

struct AttentionShape {
  std::int64_t batch = 0;
  std::int64_t seqlen_q = 0;
  std::int64_t seqlen_kv = 0;
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;  // == heads without grouped-query attention
  std::int64_t head_dim = 0;
  bool causal = false;
  bool backward = false;
  DType dtype = DType::kUnknown;
  std::int64_t window = 0;           // sliding window: keys before each query (0 = unlimited)
  DType kv_dtype = DType::kUnknown;  // KV-cache element type when it differs from dtype

  bool valid() const noexcept {
    return batch > 0 && seqlen_q > 0 && seqlen_kv > 0 && heads > 0 && head_dim > 0;
  }
  double flops() const noexcept;
};

// Memory-bound work over a [rows, cols] view: elementwise, softmax/layer-norm rows,
// reductions, copies. Bytes are what the kernel reads and writes in global memory.
struct VectorShape {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  double bytes_read = 0;
  double bytes_written = 0;
  DType dtype = DType::kUnknown;
  // An operand broadcast over the output (a position embedding added to every sample, a mask
  // added to every head): bytes_read counts it once, as if every reuse of an element hit in
  // L2. broadcast_reuse_bytes is what the kernel streams between two uses of one of its
  // elements; where that exceeds the GPU's L2 the element is evicted before its reuse and
  // read again from DRAM, broadcast_reread_bytes more in all (models/broadcast_traffic.h).
  // 0 = no such operand (the runtime never knows of one).
  double broadcast_reuse_bytes = 0;
  double broadcast_reread_bytes = 0;

  std::int64_t elements() const noexcept { return rows * cols; }
  double bytes() const noexcept { return bytes_read + bytes_written; }
};

struct CollectiveShape {
  double bytes = 0;        // payload per rank
  std::int32_t ranks = 0;  // 0 = unknown
};

struct OpContext {
  OpKind kind = OpKind::kUnknown;
  // Where the context came from: "cublasLt", "cublas", "cudnn", "aten", "neusight", ...
  std::string source;
  // The operator or library entry point, e.g. "aten::addmm", "cublasGemmEx", "softmax".
  std::string name;
  GemmShape gemm;
  ConvShape conv;
  AttentionShape attention;
  VectorShape vec;
  CollectiveShape collective;
};

// OpContext::source of a kernel whose operator stated work its launch cannot have done
// (models/physical_bounds.h, work_consistent_with_launch), set by whoever built the record:
// the work was dropped or replaced by the launch geometry's, and the prediction is flagged
// shape_rejected as when the predictor drops it itself.
inline constexpr const char* kRejectedWorkSource = "rejected";

// The source of a record made from a table of framework operator calls timed whole
// (AIConfigurator's CUDA-graph-replayed linear and attention calls, calibrate/DATA.md): one
// such call may run several kernels, where a launch record is one kernel.
inline constexpr const char* kOperatorCallTableSource = "aiconfigurator";

// The operator name as overhead tables key it: namespace dropped, lower case
// ("aten::addmm" -> "addmm", "bmm" -> "bmm").
std::string op_key(const OpContext& op);

}  // namespace pm2lat
