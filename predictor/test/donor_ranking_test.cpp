// The one ranking of calibrated GPUs that may stand in for a target, and the routing table's
// queries.
#include <gtest/gtest.h>

#include <array>
#include <cmath>

#include "pm2lat/models/donor_ranking.h"
#include "pm2lat/predictor.h"
#include "pm2lat/profile.h"

namespace pm2lat {
namespace {

DeviceSpec gpu(const char* name, int major, int minor, int sms, double bandwidth_gbps,
               double bf16_tflops) {
  DeviceSpec s;
  s.name = name;
  s.cc_major = major;
  s.cc_minor = minor;
  s.sm_count = sms;
  s.mem_bw_gbps = bandwidth_gbps;
  s.fp32_tflops = 10;
  s.bf16_tflops = bf16_tflops;
  s.smem_per_sm_bytes = 100 * 1024;
  return s;
}

TEST(DonorRanking, SameGenerationBeatsCloserSpecsOfAnother) {
  const DeviceSpec target = gpu("T", 8, 0, 100, 2000, 300);
  const DeviceSpec same_gen = gpu("A", 8, 0, 50, 1000, 150);  // half of everything
  const DeviceSpec other_gen = gpu("B", 9, 0, 100, 2000, 300);
  const std::vector<DonorCandidate> c{{&other_gen}, {&same_gen}};
  EXPECT_EQ(rank_donors(target, c, kGemmDonorWeights), (std::vector<std::size_t>{1, 0}));
  // Memory-bound families weigh a generation apart lightly: the closer specs win.
  EXPECT_EQ(rank_donors(target, c, kMemoryFamilyDonorWeights), (std::vector<std::size_t>{0, 1}));
}

TEST(DonorRanking, OwnProfilesFirstKernelTimeBeforeCallTime) {
  const DeviceSpec target = gpu("T", 8, 0, 100, 2000, 300);
  const DeviceSpec twin = gpu("Twin", 8, 0, 100, 2000, 300);  // same spec, another GPU
  const std::vector<DonorCandidate> c{
      {&twin, TimeBasis::kKernel}, {&target, TimeBasis::kCall}, {&target, TimeBasis::kKernel}};
  EXPECT_EQ(rank_donors(target, c, kConvDonorWeights), (std::vector<std::size_t>{2, 1, 0}));
  // Without own-first, equal distances keep the candidates' order.
  EXPECT_EQ(rank_donors(target, c, kFixedCostDonorWeights), (std::vector<std::size_t>{0, 1, 2}));
}

TEST(DonorRanking, DistanceAddsOnlyWeightedTerms) {
  const DeviceSpec target = gpu("T", 8, 0, 100, 2000, 300);
  DeviceSpec donor = gpu("D", 8, 6, 50, 2000, 600);
  donor.smem_per_sm_bytes = 200 * 1024;
  const double sm = std::log(2.0);
  EXPECT_DOUBLE_EQ(donor_distance(target, {&donor}, kFixedCostDonorWeights), sm);
  EXPECT_DOUBLE_EQ(donor_distance(target, {&donor}, kGemmDonorWeights), sm + std::log(2.0) + 2);
  EXPECT_DOUBLE_EQ(donor_distance(target, {&donor}, kAttentionDonorWeights),
                   sm + std::log(2.0) + std::log(2.0) + 2);
}

// Ranking from a GPU known only at prediction time, without allocating, gives rank_donors'
// order, ties and own-first included; too many devices for the array rank none.
TEST(DonorRanking, TheAllocationFreeRankingIsRankDonors) {
  const DeviceSpec target = gpu("T", 8, 0, 100, 2000, 300);
  const DeviceSpec twin = gpu("Twin", 8, 0, 100, 2000, 300);
  const DeviceSpec far = gpu("Far", 9, 0, 132, 3350, 990);
  const DeviceSpec near = gpu("Near", 8, 6, 84, 900, 150);
  struct Device {
    const DeviceSpec* spec;
    const Profile* profile;
  };
  Profile kernel_time, call_time;
  call_time.basis = TimeBasis::kCall;
  const std::vector<Device> devices{{&far, &kernel_time},    {&twin, &kernel_time},
                                    {&target, &call_time},   {&near, &kernel_time},
                                    {&target, &kernel_time}, {&twin, &call_time}};
  const std::vector<DonorCandidate> candidates = donor_candidates(devices);
  for (const DonorWeights& w :
       {kConvDonorWeights, kMemoryFamilyDonorWeights, kGemmDonorWeights, kFixedCostDonorWeights}) {
    for (const DeviceSpec* from : {&target, &far, &near}) {
      std::array<int, 8> order{};
      const std::size_t n = rank_donors_into(*from, devices, w, order);
      const std::vector<std::size_t> expected = rank_donors(*from, candidates, w);
      ASSERT_EQ(n, expected.size());
      for (std::size_t i = 0; i < n; ++i)
        EXPECT_EQ(static_cast<std::size_t>(order[i]), expected[i]);
    }
  }
  std::array<int, 4> too_small{};
  EXPECT_EQ(rank_donors_into(target, devices, kConvDonorWeights, too_small), 0u);
}

TEST(RoutingTable, FamiliesGoWhereTheTableSays) {
  EXPECT_TRUE(routes_to(KernelFamily::kLayerNorm, ModelRoute::kOwnKernelFits));
  EXPECT_TRUE(routes_to(KernelFamily::kLayerNorm, ModelRoute::kOperatorFits));
  EXPECT_FALSE(routes_to(KernelFamily::kElementwise, ModelRoute::kOwnKernelFits));
  EXPECT_TRUE(routes_to(KernelFamily::kReduction, ModelRoute::kFamilyFits));
  EXPECT_TRUE(routes_to(KernelFamily::kGemm, ModelRoute::kConv));  // cuDNN's GEMM kernels
  EXPECT_FALSE(routes_to(KernelFamily::kAttention, ModelRoute::kRoofline));
  // Calibration fits per kernel family what the routing reads, and the stand-ins: Triton
  // pointwise kernels read elementwise fits.
  EXPECT_TRUE(fitted_as_kernel_family(KernelFamily::kElementwise));
  EXPECT_TRUE(fitted_as_kernel_family(KernelFamily::kSoftmax));
  EXPECT_TRUE(fitted_as_kernel_family(KernelFamily::kTritonReduction));
  EXPECT_FALSE(fitted_as_kernel_family(KernelFamily::kGemm));
  EXPECT_FALSE(fitted_as_kernel_family(KernelFamily::kConv));
}

}  // namespace
}  // namespace pm2lat
