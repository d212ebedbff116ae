#include "pm2lat/models/donor_ranking.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numeric>

namespace pm2lat {
namespace {

// |log| ratio of two positive quantities, each floored at 1 (a missing value is not a ratio).
double log_ratio(double a, double b) noexcept {
  return std::abs(std::log(std::max(1.0, a) / std::max(1.0, b)));
}

}  // namespace

double sm_and_bandwidth_distance(const DeviceSpec& donor, const DeviceSpec& target) noexcept {
  return log_ratio(donor.sm_count, target.sm_count) +
         log_ratio(donor.mem_bw_gbps, target.mem_bw_gbps);
}

double donor_distance(const DeviceSpec& target, const DonorCandidate& donor,
                      const DonorWeights& w) noexcept {
  const DeviceSpec& s = *donor.spec;
  // Terms are added in this order, and only when weighted: equal distances must stay equal.
  double d = sm_and_bandwidth_distance(s, target);
  if (w.tensor_throughput != 0)
    d += w.tensor_throughput *
         log_ratio(s.peak_tflops(DType::kBf16), target.peak_tflops(DType::kBf16));
  if (w.shared_memory != 0 && s.smem_per_sm_bytes > 0 && target.smem_per_sm_bytes > 0)
    d += w.shared_memory *
         std::abs(std::log(static_cast<double>(s.smem_per_sm_bytes) / target.smem_per_sm_bytes));
  if (s.cc_major != target.cc_major) {
    d += w.other_generation;
  } else if (s.cc_minor != target.cc_minor) {
    d += w.other_minor;
  }
  if (w.per_generation != 0) d += w.per_generation * std::abs(s.cc_major - target.cc_major);
  if (donor.basis == TimeBasis::kCall) d += w.call_basis;
  return d;
}

std::vector<std::size_t> rank_donors(const DeviceSpec& target,
                                     std::span<const DonorCandidate> candidates,
                                     const DonorWeights& weights) {
  std::vector<double> distance(candidates.size());
  std::vector<bool> own(candidates.size());
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    distance[i] = donor_distance(donor_reference(target), candidates[i], weights);
    own[i] = ranks_as_own(target, *candidates[i].spec, weights);
  }
  std::vector<std::size_t> order(candidates.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (own[a] != own[b]) return static_cast<bool>(own[a]);
    return distance[a] < distance[b];
  });
  return order;
}

}  // namespace pm2lat
