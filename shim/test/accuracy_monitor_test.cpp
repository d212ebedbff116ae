#include <gtest/gtest.h>

#include "collect/accuracy_monitor.h"

namespace pm2lat::shim {
namespace {

TEST(AccuracyMonitor, WarnsOncePerFamilyWhenTheRollingErrorDrifts) {
  AccuracyMonitor m(30);
  // 100 GEMMs predicted within 10 %: no warning.
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(m.add("gemm", 110, 100));
  ASSERT_TRUE(m.rolling_error_pct("gemm"));
  EXPECT_NEAR(*m.rolling_error_pct("gemm"), 10.0, 1e-3);
  // The model starts to miss by 2x: once the window has drifted past 30 %, one warning.
  int warnings = 0;
  std::string text;
  for (int i = 0; i < 600; ++i) {
    if (auto w = m.add("gemm", 200, 100)) {
      ++warnings;
      text = *w;
    }
  }
  EXPECT_EQ(warnings, 1);
  EXPECT_NE(text.find("gemm"), std::string::npos);
  EXPECT_NE(text.find("ms"), std::string::npos);
  // The window only holds the recent kernels: all 512 are the 2x ones now.
  EXPECT_NEAR(*m.rolling_error_pct("gemm"), 100.0, 1e-3);
  EXPECT_EQ(m.drift_warnings(), 1u);
}

TEST(AccuracyMonitor, WaitsForEnoughKernelsAndTimeAndIgnoresOtherFamilies) {
  AccuracyMonitor m(30);
  for (int i = 0; i < 63; ++i) EXPECT_FALSE(m.add("softmax", 300, 100));  // too few kernels
  EXPECT_FALSE(m.rolling_error_pct("softmax"));
  // Enough kernels but under 1 ms measured in all: still not judged.
  AccuracyMonitor tiny(30);
  for (int i = 0; i < 200; ++i) EXPECT_FALSE(tiny.add("copy", 3, 1));
  // A second family is judged on its own.
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(m.add("gemm", 100, 100));
  EXPECT_TRUE(m.add("softmax", 300, 100));  // the 64th softmax kernel: 6.4 ms at 200 %
}

TEST(AccuracyMonitor, DisabledAndBadValuesAreIgnored) {
  AccuracyMonitor off(0);
  for (int i = 0; i < 1000; ++i) EXPECT_FALSE(off.add("gemm", 1000, 1));
  AccuracyMonitor m(30);
  for (int i = 0; i < 1000; ++i) EXPECT_FALSE(m.add("gemm", -1, 100));
  for (int i = 0; i < 1000; ++i) EXPECT_FALSE(m.add("gemm", 100, 0));
  EXPECT_FALSE(m.rolling_error_pct("gemm"));
}

}  // namespace
}  // namespace pm2lat::shim
