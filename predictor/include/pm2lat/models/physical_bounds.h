// What physics allows a kernel's latency to be on a GPU, whatever a fitted model says:
//
//   lower = max(launch floor, bytes / bandwidth, FLOPs / peak of the operand type), where a
//           launch with fewer blocks than SMs only has the bandwidth and the math units of the
//           SMs it occupies, and bytes that fit in L2 may move at L2 speed;
//   upper = fixed cost + bytes at the lowest efficiency a memory-bound kernel is seen to reach
//           (memory-bound families only: a GEMM or a convolution has no such ceiling here).
//
// And whether the work a kernel is charged (from its operator's inputs) is work its launch can
// have done: threads x the most a thread of that kind of kernel is seen to move.
//
// Every constant is derived from the measurements in ../shared/data (the profiler traces,
// kernel time, and the NeuSight tables, call time) by `scripts/derive-bound-constants.py`;
// predictor/ACCURACY.md gives the figures. A predictor applies the bounds at its one exit
// point; `pm2lat eval bounds` counts the predictions that leave them.
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>

#include "pm2lat/device_spec.h"
#include "pm2lat/kernel_class.h"
#include "pm2lat/kernel_record.h"

namespace pm2lat {

namespace bound_constants {
// The shortest kernel any trace measured: 1.00 us (an H100 memset; A100 1.34 us). No kernel
// takes less.
inline constexpr double kLaunchFloorUs = 1.0;
// Data-sheet peaks are at the nominal boost clock, and parts run faster: NeuSight's V100-PCIe
// GEMMs reach 99.9 % of the sheet's FP32 peak with host dispatch included. The lower bound
// allows every peak (math and bandwidth) 10 % above the data sheet.
inline constexpr double kPeakMargin = 1.1;
// The highest apparent bandwidth of an elementwise kernel whose data fits in L2: 2.25x the
// DRAM peak (an A100 mul over 31.5 MB, integer-µs timestamps). Bytes that fit in L2 are
// allowed 4x DRAM in the lower bound.
inline constexpr double kL2BandwidthFactor = 4.0;
// Bandwidth one occupied SM reached when a launch had fewer blocks than SMs: at most 1.95x
// its fair share (DRAM bandwidth / SMs; A100 multi-tensor-apply kernels of 71 blocks). A
// launch of n < SMs blocks is allowed twice that per block.
inline constexpr double kPerSmBandwidthShare = 4.0;
// The lowest bandwidth efficiency of a memory-bound kernel of an ATen operator moving >= 4 MB
// in the traces, per family: reductions 2.64 % (an A100 reduce_kernel), layer-norm 7.7 %,
// copies 8.2 %, elementwise 8.7 %, optimizers 11.6 %, softmax 19.6 %, fills 80 % (NeuSight's
// lowest call of >= 64 MB: 27.5 %). The upper bound allows half of each; families with too
// few kernels to say (gathers, GEMV, split-K reductions, Triton, unknown) half the lowest.
// The copies' 8.2 % was an H100 cuDNN layout transform. The importer now charges such a
// transform the one tensor of its convolution whose size its grid covers: its lowest is then
// 23.5 %, and the lowest copy 14.1 % (an A100 copy_; scripts/derive-bound-constants.py).
// The bound keeps the lower figure: it only allows more.
inline constexpr double kMinBandwidthEfficiency = 0.0125;
// Fixed cost a memory-bound kernel may carry: the longest kernel moving < 256 KB in the
// traces took 36 us (a one-block A100 mul); NeuSight's longest call of < 256 KB took 64.8 us
// (P100 softmax, host dispatch included).
inline constexpr double kMaxFixedKernelUs = 40.0;
inline constexpr double kMaxFixedCallUs = 80.0;
// Bytes one launched thread is seen to move at most: 100 B in element-mapped kernels (ATen's
// vectorised kernels: 4 elements of up to 3 tensors; NeuSight's rows, per launch: 48 B) and
// 2 KB in looping ones (multi-tensor-apply chunks; a row per block in norms: 457 B). The
// check allows 5x the first and 32x the second: a grid-stride loop's share grows with its
// tensor, and 64 KB lets a GPU-sized grid of 200K threads cover 13 GB.
inline constexpr double kElementMappedBytesPerThread = 512.0;
inline constexpr double kLoopingBytesPerThread = 65536.0;
// A launch of more threads than any GPU of the catalogue holds at once (303,104 on a B200 or
// B300: 148 SMs x 2048; the RTX PRO 6000's 188 SMs hold 1536 each) was sized by its work, not
// by the GPU, so each thread has some of it. In such launches in the traces, the memory-bound
// kernels of ATen's own operators moved at least 8 B a thread (a warp-per-row softmax); the 60
// kernels whose stated work gave each thread under 2 B (less than a one-byte element read and
// written) took at least 3.5x, median 312x, what those bytes take at the DRAM peak: a library
// operator's work shared among its kernels (FBGEMM's embedding backward, its sorts), cuDNN's
// layout transposes inside a convolution (padded tiles), adaptive pooling, a kernel linked to
// an unrelated fill. Below 2 B a thread in a launch of 2^19 threads or more, the stated work
// is not the kernel's (scripts/derive-bound-constants.py prints the 8 B; the 60 were read
// from replay records made before this check).
inline constexpr double kWorkSizedLaunchThreads = 524288.0;
inline constexpr double kMinBytesPerThread = 2.0;
}  // namespace bound_constants

// The least work an operator implies: every operand read once and every result written once,
// and the FLOPs of its math, with the type the math runs in on tensor cores or SIMT units.
struct OperatorWork {
  double bytes = 0;
  double flops = 0;
  DType math = DType::kUnknown;

  bool known() const noexcept { return bytes > 0 || flops > 0; }
};

// From the record's operator context (GEMM, convolution, attention, memory-bound views).
OperatorWork operator_work(const OpContext& op, const KernelClass& cls) noexcept;

// Which term set the lower bound.
enum class LowerLimit : std::uint8_t {
  kLaunchFloor = 0,
  kBandwidth,  // bytes over the GPU's (or its occupied SMs') bandwidth
  kCompute,    // FLOPs over the peak of the math type (of the occupied SMs)
};

std::string_view to_string(LowerLimit l) noexcept;

struct PhysicalBounds {
  double lower_us = bound_constants::kLaunchFloorUs;
  double upper_us = std::numeric_limits<double>::infinity();  // infinity: no ceiling
  LowerLimit lower_limit = LowerLimit::kLaunchFloor;
  // A launch of fewer blocks than SMs: the bounds use the SMs it occupies.
  bool grid_limited = false;

  bool has_upper() const noexcept { return upper_us < std::numeric_limits<double>::infinity(); }
  bool below(double us) const noexcept { return us < lower_us; }
  bool above(double us) const noexcept { return us > upper_us; }
  bool contains(double us) const noexcept { return !below(us) && !above(us); }
  double clamp(double us) const noexcept;
};

// What the bounds of one kernel on one GPU depend on.
struct BoundsQuery {
  OperatorWork work;
  KernelFamily family = KernelFamily::kUnknown;
  Dim3 grid;
  Dim3 block;
  TimeBasis basis = TimeBasis::kKernel;
  const DeviceSpec* target = nullptr;  // required
  // The GPU the launch was observed on: a grid sized to its SMs (a persistent or grid-stride
  // kernel) is not a small launch on a GPU with more SMs. Null: the target itself.
  const DeviceSpec* source = nullptr;
};

// Memory-bound families (time is bytes over bandwidth): the ones with an upper bound.
bool has_bandwidth_ceiling(KernelFamily f) noexcept;

// The lowest share of the bandwidth (of the SMs a launch occupies) a kernel of the family is
// allowed in the upper bound (bound_constants::kMinBandwidthEfficiency and the table above).
double min_bandwidth_efficiency(KernelFamily f) noexcept;

PhysicalBounds physical_bounds(const BoundsQuery& q) noexcept;

// What the bounds of a record on a target depend on, its work from its operator context.
BoundsQuery bounds_query(const KernelRecord& record, const KernelClass& cls,
                         const DeviceSpec& target, const DeviceSpec* source,
                         TimeBasis basis) noexcept;

// The bounds of a record on a target, its work from its operator context.
PhysicalBounds physical_bounds(const KernelRecord& record, const KernelClass& cls,
                               const DeviceSpec& target, const DeviceSpec* source,
                               TimeBasis basis) noexcept;

// The most bytes a launch of this kernel can plausibly move: threads x the most a thread is
// seen to move. Element-mapped kernels (the class says so, or the family is elementwise, fill
// or Triton pointwise) handle a few elements a thread; the others may loop (over rows,
// chunks, or a grid sized to the GPU).
double launch_work_capacity_bytes(const Dim3& grid, const Dim3& block,
                                  const KernelClass& cls) noexcept;

// Whether `bytes` of work is consistent with the launch: false when the launch cannot have
// moved it (the operator's inputs describe more than the kernel touched), or when a launch
// sized by its work leaves each thread less than kMinBytesPerThread of it (the inputs describe
// less than the kernel did). No stated work, a launch without a block (a table that recorded
// none) and math kernels are consistent with anything.
bool work_consistent_with_launch(double bytes, const Dim3& grid, const Dim3& block,
                                 const KernelClass& cls) noexcept;

}  // namespace pm2lat
