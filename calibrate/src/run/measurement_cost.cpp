#include "pm2lat/calibrate/run/measurement_cost.h"

#include <algorithm>
#include <cmath>

namespace pm2lat::calibrate::run {
namespace {

constexpr double kMathEfficiency = 0.70;
constexpr double kMemoryEfficiency = 0.75;
// Tile the estimate assumes: a wave of these over the SMs is the least work a GEMM does.
constexpr double kAssumedTile = 128;
// Host time around one profiled (CUPTI) discovery call: flush and record parsing.
constexpr double kDiscoveryUs = 200;

// The math pipe a dtype's GEMMs run on.
DType compute_type(DType t) { return t == DType::kFp8E5M2 ? DType::kFp8E4M3 : t; }

double l2_bytes(const DeviceSpec& spec) { return spec.l2_mb * 1024.0 * 1024.0; }

}  // namespace

double gemm_footprint_bytes(const GemmProblem& p) { return p.bytes(); }

double estimated_kernel_us(const GemmProblem& p, const DeviceSpec& spec) {
  const double sms = std::max(1, spec.sm_count);
  const double tiles = std::ceil(static_cast<double>(p.m) / kAssumedTile) *
                       std::ceil(static_cast<double>(p.n) / kAssumedTile) *
                       static_cast<double>(std::max<std::int64_t>(1, p.batch));
  // Whole waves of tiles: a GEMM smaller than one wave still takes a wave's K loop.
  const double wave_flops =
      std::ceil(tiles / sms) * sms * 2.0 * kAssumedTile * kAssumedTile * static_cast<double>(p.k);
  const double math_us = wave_flops / (std::max(1e-3, spec.peak_tflops(compute_type(p.dtype))) *
                                       1e6 * kMathEfficiency);
  const double mem_us = p.bytes() / (std::max(1.0, spec.bytes_per_us()) * kMemoryEfficiency);
  return std::max(math_us, mem_us) + kCostConstants.kernel_floor_us;
}

double estimated_kernel_us(const MemoryProblem& p, const DeviceSpec& spec) {
  const double bytes = p.bytes_read() + p.bytes_written();
  return bytes / (std::max(1.0, spec.bytes_per_us()) * kMemoryEfficiency) +
         kCostConstants.kernel_floor_us;
}

namespace {

TimingPolicy timing_for(double kernel_us, int base_reps) {
  const CostConstants& c = kCostConstants;
  TimingPolicy t;
  t.launches = static_cast<std::int32_t>(
      std::clamp(std::ceil(c.rep_target_us / kernel_us), 1.0, static_cast<double>(c.max_launches)));
  t.reps = base_reps;
  if (kernel_us > c.long_kernel_us) {
    t.reps = std::max(c.min_reps,
                      static_cast<int>(std::lround(base_reps * c.long_kernel_us / kernel_us)));
  }
  t.reps = std::max(t.reps, std::min(base_reps, c.min_reps));
  t.warmup = static_cast<std::int32_t>(
      std::clamp(std::ceil(c.warmup_target_us / (t.launches * kernel_us)), 1.0, 3.0));
  return t;
}

}  // namespace

TimingPolicy gemm_timing(const GemmProblem& p, const DeviceSpec& spec, int base_reps) {
  TimingPolicy t = timing_for(estimated_kernel_us(p, spec), base_reps);
  // Between two uses of one operand set, more than 2x L2 of other sets pass through the cache.
  const double sets =
      std::ceil(2.0 * l2_bytes(spec) / std::max(1.0, gemm_footprint_bytes(p))) + 1.0;
  t.rotation_sets =
      static_cast<std::int32_t>(std::clamp(sets, 1.0, static_cast<double>(t.launches)));
  return t;
}

TimingPolicy memory_timing(const MemoryProblem& p, const DeviceSpec& spec, int base_reps) {
  TimingPolicy t = timing_for(estimated_kernel_us(p, spec), base_reps);
  t.rotation_sets = 1;  // the working set is what the bandwidth curve varies
  return t;
}

double estimated_task_us(double kernel_us, const TimingPolicy& t, double setup_us, int results) {
  const double per_result =
      kernel_us + kDiscoveryUs +
      (t.warmup + t.reps) * (t.launches * kernel_us + kCostConstants.rep_overhead_us);
  return setup_us + std::max(1, results) * per_result;
}

}  // namespace pm2lat::calibrate::run
