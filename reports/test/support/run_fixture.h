// A small run built in code: two ranks on H100-SXM, targets H100-SXM and A100-SXM, kernels
// of three families with known measured and predicted times.
#pragma once

#include "pm2lat/reports/run_table.h"

namespace pm2lat::test {

struct FixtureKernel {
  const char* name;
  KernelFamily family;
  int rank;
  std::uint64_t stream;
  double start_us;
  double measured_us;
  double h100_us;
  double a100_us;
  std::uint32_t h100_flags = 0;
};

inline Prediction prediction(double us, std::uint32_t flags,
                             ModelKind model = ModelKind::kGemmWave) {
  Prediction p;
  p.us = us;
  p.flags = flags;
  p.model = model;
  return p;
}

inline reports::RunTable fixture_run(const std::vector<FixtureKernel>& kernels, int ranks = 1) {
  reports::RunTable t;
  t.add_target("H100-SXM");
  t.add_target("A100-SXM");
  for (int r = 0; r < ranks; ++r) {
    reports::RankInfo info;
    info.rank = r;
    info.gpu = "H100-SXM";
    info.command = "python train.py";
    t.add_rank(info);
  }
  for (const auto& k : kernels) {
    const std::size_t row =
        t.add_kernel(k.name, k.family, static_cast<std::size_t>(k.rank), k.stream,
                     static_cast<std::uint64_t>(k.start_us * 1000), k.measured_us);
    t.set_prediction(row, 0, prediction(k.h100_us, k.h100_flags));
    t.set_prediction(row, 1, prediction(k.a100_us, prediction_flags::kSpecScaled));
  }
  return t;
}

// gemm: 2 x 100 µs measured, predicted 90 and 110 on H100 (sum exact), 200 each on A100;
// elementwise: 50 µs measured, predicted 60 by the fallback; nccl: 400 µs measured.
inline std::vector<FixtureKernel> standard_kernels() {
  using F = KernelFamily;
  return {
      {"ampere_sgemm_128x64_tn", F::kGemm, 0, 7, 0, 100, 90, 200},
      {"ampere_sgemm_128x64_tn", F::kGemm, 0, 7, 100, 100, 110, 200},
      {"vectorized_elementwise_kernel<4, add>", F::kElementwise, 0, 7, 250, 50, 60, 80,
       prediction_flags::kFallback},
      {"ncclDevKernel_AllReduce_Sum_f32_RING_LL", F::kCollective, 0, 9, 0, 400, 30, 40,
       prediction_flags::kCommunication},
  };
}

}  // namespace pm2lat::test
