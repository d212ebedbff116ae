// Which calibrated GPU stands in for a target that lacks a calibration (the "donor"): every
// model that borrows fits from another GPU ranks the candidates by one distance, weighted
// per model for what decides whether its fits carry over to the target.
//
//   distance = |log SM ratio| + |log bandwidth ratio|          (always: sm_and_bandwidth_distance)
//            + tensor_throughput * |log BF16 peak ratio|
//            + shared_memory * |log shared memory per SM ratio|   (when both GPUs state it)
//            + other_generation   (compute capability major differs)
//            + per_generation * |major difference|
//            + other_minor        (same major, minor differs)
//            + call_basis         (the donor's profile timed framework calls, not kernels)
//
// For scale: no two GPUs of the shipped catalogue are further apart than 5.8 in SMs and
// bandwidth, or 11.9 with the BF16 peak added.
#pragma once

#include <array>
#include <cstddef>
#include <iterator>
#include <span>
#include <vector>

#include "pm2lat/device_spec.h"
#include "pm2lat/kernel_record.h"

namespace pm2lat {

struct DonorWeights {
  double tensor_throughput = 0;
  double shared_memory = 0;
  double other_generation = 0;
  double per_generation = 0;
  double other_minor = 0;
  double call_basis = 0;
  // The target's own profiles (same catalogue name) rank before every other GPU's.
  bool own_first = false;
};

// GEMM configurations, per-operator memory-bound fits and the graph-replay offset: kernels
// and their tiles are per architecture (sm80 vs sm90 names), a minor version changes shared
// memory and tensor instructions; within a generation SMs, bandwidth and tensor peak decide.
inline constexpr DonorWeights kGemmDonorWeights{
    .tensor_throughput = 1, .other_generation = 10, .other_minor = 2};

// Fused attention: as GEMMs, and shared memory per SM decides which tiles a kernel can use
// (FlashAttention 2 picks smaller ones on 100 KB parts).
inline constexpr DonorWeights kAttentionDonorWeights{
    .tensor_throughput = 1, .shared_memory = 1, .other_generation = 10, .other_minor = 2};

// Convolutions: the target's own fits first, kernel-time fits before call-time ones (a call
// adds host dispatch the kernel model does not have), cuDNN kernels are per architecture.
inline constexpr DonorWeights kConvDonorWeights{
    .other_generation = 10, .call_basis = 0.5, .own_first = true};

// Memory-bound kernel families measured as kernels: bandwidth and SM count decide; each
// architecture generation apart counts a little (memory pipelines change slowly).
inline constexpr DonorWeights kMemoryFamilyDonorWeights{.per_generation = 0.5, .own_first = true};

// The fixed cost a per-operator fit made on large tensors lacks: the same operator's on the
// GPU closest in SMs and bandwidth (a launch and a few memory round trips).
inline constexpr DonorWeights kFixedCostDonorWeights{};

// How far apart two GPUs are in SM count and memory bandwidth: the sum of the absolute log
// ratios (0 = alike).
double sm_and_bandwidth_distance(const DeviceSpec& donor, const DeviceSpec& target) noexcept;

// A calibrated GPU that may stand in: its spec and the time basis of its profile.
struct DonorCandidate {
  const DeviceSpec* spec = nullptr;
  TimeBasis basis = TimeBasis::kKernel;
};

// The candidates of calibrated devices that each have a `spec` and a `profile`, in order.
template <typename Devices>
std::vector<DonorCandidate> donor_candidates(const Devices& devices) {
  std::vector<DonorCandidate> candidates;
  candidates.reserve(std::size(devices));
  for (const auto& d : devices) candidates.push_back({d.spec, d.profile->basis});
  return candidates;
}

double donor_distance(const DeviceSpec& target, const DonorCandidate& donor,
                      const DonorWeights& weights) noexcept;

// The GPU donors are ranked against for `target`: the target, or for a MIG partition its whole
// GPU. A partition runs that GPU's SMs, kernels and libraries, so it borrows as that GPU does
// (its own calibrations first, whatever the weights), carried to the partition's SMs and
// bandwidth by spec ratios; ranked as itself, a 14-SM A100 slice would borrow an L4's.
inline const DeviceSpec& donor_reference(const DeviceSpec& target) noexcept {
  return target.partition_of != nullptr ? *target.partition_of : target;
}

// Whether `donor` is the target's own GPU, which `weights` (or a partition) ranks first.
inline bool ranks_as_own(const DeviceSpec& target, const DeviceSpec& donor,
                         const DonorWeights& weights) noexcept {
  const DeviceSpec& like = donor_reference(target);
  return (weights.own_first || &like != &target) && donor.name == like.name;
}

// Indices of `candidates`, most similar to `target` first; equal distances keep the
// candidates' order.
std::vector<std::size_t> rank_donors(const DeviceSpec& target,
                                     std::span<const DonorCandidate> candidates,
                                     const DonorWeights& weights);

// Calibrated devices of one model ranked without allocating (the shipped profiles give the
// convolution model 7, the kernel-family fits 2); a caller with more keeps its precomputed
// order.
inline constexpr std::size_t kMaxRankedDonors = 16;

// The order rank_donors gives for calibrated `devices` (each with a `spec` and a `profile`),
// written into `order` without allocating: for ranking from a GPU known only at prediction
// time. Returns how many were ranked, or 0 when there are more devices than `order` holds.
template <std::size_t N, typename Devices>
std::size_t rank_donors_into(const DeviceSpec& target, const Devices& devices,
                             const DonorWeights& weights, std::array<int, N>& order) noexcept {
  if (std::size(devices) > N) return 0;
  std::array<double, N> distance{};
  std::array<bool, N> own{};
  std::size_t n = 0;
  for (const auto& d : devices) {
    const std::size_t i = n++;
    distance[i] = donor_distance(donor_reference(target), {d.spec, d.profile->basis}, weights);
    own[i] = ranks_as_own(target, *d.spec, weights);
    // After every device that ranks before it or with it: rank_donors' stable order.
    std::size_t at = i;
    for (; at > 0; --at) {
      const auto prev = static_cast<std::size_t>(order[at - 1]);
      const bool before = own[i] != own[prev] ? own[i] : distance[i] < distance[prev];
      if (!before) break;
      order[at] = order[at - 1];
    }
    order[at] = static_cast<int>(i);
  }
  return n;
}

// The order in which to search `devices` for a record measured on `source` and forecast for
// `target`: `target_order` (the target's precomputed one) unless the source is known and
// another GPU, then the order the source takes as a target (rank_donors_into, into `buffer`).
// For fits that stand for the programs that calibrated them rather than for their GPU
// (geometry fits of launches without a shape): every target then takes the source's.
template <std::size_t N, typename Devices>
std::span<const int> order_from_source(const DeviceSpec* source, const DeviceSpec& target,
                                       std::span<const int> target_order, const Devices& devices,
                                       const DonorWeights& weights,
                                       std::array<int, N>& buffer) noexcept {
  if (source == nullptr || source->name == target.name) return target_order;
  const std::size_t n = rank_donors_into(*source, devices, weights, buffer);
  return n > 0 ? std::span<const int>(buffer.data(), n) : target_order;
}

}  // namespace pm2lat
