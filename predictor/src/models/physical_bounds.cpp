#include "pm2lat/models/physical_bounds.h"

#include <algorithm>
#include <cmath>

namespace pm2lat {
namespace {

using namespace bound_constants;

double as_double(std::int64_t v) { return static_cast<double>(std::max<std::int64_t>(0, v)); }

// The type a GEMM's math runs in: 16-, 8- and 4-bit operands on their tensor-core path (the
// recorded `compute` is their fp32 accumulator); fp32 operands on TF32 tensor cores when the
// call allowed it or the kernel is a tensor-core kernel, else on SIMT FMA units.
DType gemm_math(const GemmShape& g, const KernelClass& cls) {
  const DType operands = g.a != DType::kUnknown ? g.a : cls.gemm.a;
  if (is_tensor_core_dtype(operands)) return operands;
  if (g.compute == DType::kTf32 || cls.gemm.tensor_core) return DType::kTf32;
  return operands == DType::kUnknown ? DType::kTf32 : DType::kFp32;
}

OperatorWork gemm_work(const GemmShape& g, const KernelClass& cls) {
  OperatorWork w;
  if (!g.valid()) return w;
  const double batch = as_double(g.batch), m = as_double(g.m), n = as_double(g.n),
               k = as_double(g.k);
  const double ea = dtype_bytes(g.a), eb = dtype_bytes(g.b != DType::kUnknown ? g.b : g.a),
               ec = dtype_bytes(g.c != DType::kUnknown ? g.c : g.a);
  // B counted once: a weight broadcast over the batch is read once.
  w.bytes = batch * m * k * ea + k * n * eb + batch * m * n * ec;
  w.flops = g.flops();
  w.math = gemm_math(g, cls);
  return w;
}

OperatorWork conv_work(const ConvShape& c) {
  OperatorWork w;
  if (!c.valid()) return w;
  const double e = dtype_bytes(c.dtype);
  const double groups = as_double(std::max<std::int64_t>(1, c.groups));
  const double input =
      as_double(c.batch) * as_double(c.in_channels) * as_double(c.in_h) * as_double(c.in_w);
  const double filter = as_double(c.out_channels) * as_double(c.in_channels) / groups *
                        as_double(c.kernel_h) * as_double(c.kernel_w);
  const double output =
      as_double(c.batch) * as_double(c.out_channels) * as_double(c.out_h()) * as_double(c.out_w());
  w.bytes = (input + filter + output) * e;
  // Winograd and FFT convolutions trade the filter taps for transforms, never the channel
  // reduction at each output position: the 1x1-equivalent FLOPs are what every algorithm does.
  w.flops = c.flops() / std::max(1.0, as_double(c.kernel_h) * as_double(c.kernel_w));
  w.math = is_tensor_core_dtype(c.dtype) ? c.dtype : DType::kTf32;
  return w;
}

OperatorWork attention_work(const AttentionShape& a) {
  OperatorWork w;
  if (!a.valid()) return w;
  const double e = dtype_bytes(a.dtype);
  const double ekv = a.kv_dtype != DType::kUnknown ? dtype_bytes(a.kv_dtype) : e;
  const double kv_heads = as_double(a.kv_heads > 0 ? a.kv_heads : a.heads);
  const double q =
      as_double(a.batch) * as_double(a.seqlen_q) * as_double(a.heads) * as_double(a.head_dim);
  const double kv = as_double(a.batch) * as_double(a.seqlen_kv) * kv_heads * as_double(a.head_dim);
  w.bytes = 2 * q * e + 2 * kv * ekv;  // Q and O; K and V
  w.flops = a.flops();
  // A sliding window lets each query see at most `window` keys (the causal half is kept: a
  // query near the start sees fewer).
  if (a.window > 0 && a.window < a.seqlen_kv)
    w.flops *= static_cast<double>(a.window) / static_cast<double>(a.seqlen_kv);
  w.math = is_tensor_core_dtype(a.dtype) ? a.dtype : DType::kTf32;
  return w;
}

bool element_mapped(KernelFamily f) {
  // One element (or one short vector) per thread, the grid sized to the tensor: ATen's
  // elementwise kernels, fills, Triton pointwise kernels.
  return f == KernelFamily::kElementwise || f == KernelFamily::kMemset ||
         f == KernelFamily::kTritonPointwise;
}

// Kernels whose grid is fixed by their library's tiling of the problem on the GPU that ran
// them: another GPU may tile the same problem into another number of blocks.
bool grid_chosen_per_gpu(KernelFamily f) {
  return f == KernelFamily::kGemm || f == KernelFamily::kConv || f == KernelFamily::kAttention ||
         f == KernelFamily::kTritonTemplate;
}

// A launch whose size says nothing: tables that recorded none, and tables of library calls
// that give a nominal grid of output tiles but no block. (Kernels of one thread, workspace
// set-up, are left unjudged with them.)
bool launch_unknown(const Dim3&, const Dim3& block) { return block.volume() <= 1; }

}  // namespace

OperatorWork operator_work(const OpContext& op, const KernelClass& cls) noexcept {
  switch (op.kind) {
    case OpKind::kGemm:
      // A split-K reduction of a GEMM moves the partial sums, not the GEMM's operands.
      if (cls.family == KernelFamily::kSplitKReduce)
        return OperatorWork{std::max(0.0, op.vec.bytes()), 0, DType::kUnknown};
      return gemm_work(op.gemm, cls);
    case OpKind::kConv: return conv_work(op.conv);
    case OpKind::kAttention: return attention_work(op.attention);
    case OpKind::kCollective: return OperatorWork{};  // link time, not this GPU's work
    default: return OperatorWork{std::max(0.0, op.vec.bytes()), 0, DType::kUnknown};
  }
}

std::string_view to_string(LowerLimit l) noexcept {
  switch (l) {
    case LowerLimit::kLaunchFloor: return "launch_floor";
    case LowerLimit::kBandwidth: return "bandwidth";
    case LowerLimit::kCompute: return "compute";
  }
  return "launch_floor";
}

double PhysicalBounds::clamp(double us) const noexcept {
  if (std::isnan(us)) return us;
  return std::min(std::max(us, lower_us), upper_us);
}

bool has_bandwidth_ceiling(KernelFamily f) noexcept {
  switch (f) {
    case KernelFamily::kUnknown:
    case KernelFamily::kSplitKReduce:
    case KernelFamily::kGemv:
    case KernelFamily::kElementwise:
    case KernelFamily::kReduction:
    case KernelFamily::kSoftmax:
    case KernelFamily::kLayerNorm:
    case KernelFamily::kEmbedding:
    case KernelFamily::kCopy:
    case KernelFamily::kMemset:
    case KernelFamily::kTritonPointwise:
    case KernelFamily::kTritonReduction:
    case KernelFamily::kOptimizer: return true;
    default: return false;
  }
}

double min_bandwidth_efficiency(KernelFamily f) noexcept {
  switch (f) {
    case KernelFamily::kMemset: return 0.40;       // 80 %: A100 fills
    case KernelFamily::kSoftmax: return 0.095;     // 19.6 %: an H100 cunn_SoftMaxForward
    case KernelFamily::kOptimizer: return 0.055;   // 11.6 %: an A100 multi-tensor-apply
    case KernelFamily::kElementwise: return 0.04;  // 8.7 %: an A100 vectorized kernel
    case KernelFamily::kCopy: return 0.04;         // 8.2 %: an H100 cuDNN layout transform
    case KernelFamily::kLayerNorm: return 0.038;   // 7.7 %: an A100 layer-norm forward
    default: return kMinBandwidthEfficiency;       // 2.64 %: an A100 reduce_kernel
  }
}

PhysicalBounds physical_bounds(const BoundsQuery& q) noexcept {
  PhysicalBounds b;
  if (q.target == nullptr) return b;
  const DeviceSpec& t = *q.target;
  const DeviceSpec& s = q.source != nullptr ? *q.source : t;
  const double sms = static_cast<double>(std::max(1, t.sm_count));
  const double bw = std::max(1.0, t.bytes_per_us());
  const double fast_bw = kPeakMargin * bw;  // the fastest the part may run (lower bound)
  // SMs the launch occupies: fewer than all only for a grid smaller than both GPUs' SM counts
  // (a grid sized to a smaller source GPU would be sized again on the target), and for a
  // library kernel only on the GPU that chose its tiling.
  const double blocks = static_cast<double>(q.grid.volume());
  const bool same_gpu = &s == &t || s.name == t.name;
  b.grid_limited = !launch_unknown(q.grid, q.block) && blocks < sms &&
                   blocks < static_cast<double>(std::max(1, s.sm_count)) &&
                   (same_gpu || !grid_chosen_per_gpu(q.family));
  const double occupied = b.grid_limited ? blocks / sms : 1.0;

  const double bytes = std::max(0.0, q.work.bytes);
  const double l2 = std::max(0.0, t.l2_bytes());
  double bandwidth_us =
      std::max(0.0, bytes - l2) / fast_bw + std::min(bytes, l2) / (kL2BandwidthFactor * fast_bw);
  if (b.grid_limited)
    bandwidth_us = std::max(bandwidth_us, bytes / (blocks * kPerSmBandwidthShare * fast_bw / sms));
  double compute_us = 0;
  if (q.work.flops > 0) {
    const DType math = q.work.math == DType::kUnknown ? DType::kTf32 : q.work.math;
    const double peak = kPeakMargin * t.peak_flop_per_us(math);
    if (peak > 0) compute_us = q.work.flops / (peak * occupied);
  }
  b.lower_us = kLaunchFloorUs;
  if (bandwidth_us > b.lower_us) {
    b.lower_us = bandwidth_us;
    b.lower_limit = LowerLimit::kBandwidth;
  }
  if (compute_us > b.lower_us) {
    b.lower_us = compute_us;
    b.lower_limit = LowerLimit::kCompute;
  }

  // GEMVs are memory-bound whatever their FLOPs; other kernels with math have no ceiling.
  if (has_bandwidth_ceiling(q.family) && bytes > 0 &&
      (q.work.flops <= 0 || q.family == KernelFamily::kGemv)) {
    const double fixed = q.basis == TimeBasis::kCall ? kMaxFixedCallUs : kMaxFixedKernelUs;
    b.upper_us =
        std::max(b.lower_us, fixed + bytes / (min_bandwidth_efficiency(q.family) * bw * occupied));
  }
  return b;
}

BoundsQuery bounds_query(const KernelRecord& record, const KernelClass& cls,
                         const DeviceSpec& target, const DeviceSpec* source,
                         TimeBasis basis) noexcept {
  BoundsQuery q;
  q.work = operator_work(record.op, cls);
  q.family = cls.family;
  q.grid = record.launch.grid;
  q.block = record.launch.block;
  q.basis = basis;
  q.target = &target;
  q.source = source;
  return q;
}

PhysicalBounds physical_bounds(const KernelRecord& record, const KernelClass& cls,
                               const DeviceSpec& target, const DeviceSpec* source,
                               TimeBasis basis) noexcept {
  return physical_bounds(bounds_query(record, cls, target, source, basis));
}

double launch_work_capacity_bytes(const Dim3& grid, const Dim3& block,
                                  const KernelClass& cls) noexcept {
  const double threads = launched_threads(grid, block);
  const bool maps_elements = cls.element_mapped || element_mapped(cls.family);
  return threads * (maps_elements ? kElementMappedBytesPerThread : kLoopingBytesPerThread);
}

bool work_consistent_with_launch(double bytes, const Dim3& grid, const Dim3& block,
                                 const KernelClass& cls) noexcept {
  if (launch_unknown(grid, block) || !has_bandwidth_ceiling(cls.family)) return true;
  if (bytes > launch_work_capacity_bytes(grid, block, cls)) return false;
  const double threads = launched_threads(grid, block);
  return !(bytes > 0 && threads >= kWorkSizedLaunchThreads && bytes < threads * kMinBytesPerThread);
}

}  // namespace pm2lat
