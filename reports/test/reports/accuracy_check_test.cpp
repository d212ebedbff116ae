#include <gtest/gtest.h>

#include "pm2lat/reports/accuracy_check.h"
#include "pm2lat/reports/input_file.h"
#include "support/run_fixture.h"

namespace pm2lat::reports {
namespace {

TEST(AccuracyCheck, PassesAndFailsAroundTheMeanPerKernelError) {
  const RunTable t = test::fixture_run(test::standard_kernels());
  // Per-kernel errors on the own GPU: 10 %, 10 %, 20 % (the NCCL kernel is not compared).
  const CheckResult loose = check_accuracy(t, 14.0, std::nullopt);
  EXPECT_TRUE(loose.passed);
  EXPECT_EQ(loose.kernels, 3u);
  EXPECT_NEAR(loose.mape_pct, 40.0 / 3.0, 1e-9);
  EXPECT_NEAR(loose.total_error_pct, 4.0, 1e-9);
  EXPECT_FALSE(check_accuracy(t, 13.0, std::nullopt).passed);
  const CheckResult gemm = check_accuracy(t, 10.0, KernelFamily::kGemm);
  EXPECT_TRUE(gemm.passed);
  EXPECT_EQ(gemm.kernels, 2u);
  ASSERT_EQ(gemm.families.size(), 1u);
  EXPECT_FALSE(check_accuracy(t, 10.0, KernelFamily::kElementwise).passed);
}

TEST(AccuracyCheck, NothingToCompareIsAnInputError) {
  const RunTable t = test::fixture_run(test::standard_kernels());
  EXPECT_THROW(check_accuracy(t, 10.0, KernelFamily::kAttention), InputError);
  EXPECT_THROW(check_accuracy(t, 10.0, KernelFamily::kCollective), InputError)
      << "communication is never checked";
}

}  // namespace
}  // namespace pm2lat::reports
