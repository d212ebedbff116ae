#include <gtest/gtest.h>

#include "pm2lat/calibrate/nnls.h"

namespace pm2lat::calibrate {
namespace {

TEST(Nnls, RecoversNonNegativeCoefficients) {
  std::vector<std::vector<double>> x;
  std::vector<double> y;
  for (int i = 1; i <= 20; ++i) {
    x.push_back({1.0, double(i), double(i * i)});
    y.push_back(3.0 + 0.5 * i + 0.1 * i * i);
  }
  const auto r = nnls_relative(x, y);
  ASSERT_TRUE(r);
  EXPECT_NEAR(r->coef[0], 3.0, 1e-6);
  EXPECT_NEAR(r->coef[1], 0.5, 1e-6);
  EXPECT_NEAR(r->coef[2], 0.1, 1e-6);
  EXPECT_LT(r->mape_pct, 1e-6);
}

TEST(Nnls, ClampsWhatWouldGoNegative) {
  std::vector<std::vector<double>> x;
  std::vector<double> y;
  for (int i = 1; i <= 20; ++i) {
    x.push_back({1.0, double(i)});
    y.push_back(10.0 - 0.2 * i);  // the unconstrained slope is negative
  }
  const auto r = nnls_relative(x, y);
  ASSERT_TRUE(r);
  EXPECT_GE(r->coef[1], 0.0);
  EXPECT_GT(r->coef[0], 0.0);
}

TEST(Nnls, RejectsEmptyInput) { EXPECT_FALSE(nnls_relative({}, {})); }

}  // namespace
}  // namespace pm2lat::calibrate
