#include "pm2lat/reports/gpu_transfers.h"

#include <gtest/gtest.h>

#include "support/test_support.h"

namespace pm2lat::reports {
namespace {

TEST(GpuTransfers, TheNoteSaysCountsTimesAndTheirShareOfTheGpuTime) {
  GpuTransfers t;
  t.copies = 3;
  t.copy_us = 1500;
  t.memsets = 1;
  t.memset_us = 500;
  // 2 ms of transfers beside 2 ms of kernels: half the GPU's time.
  EXPECT_EQ(transfers_note(t, 2000, "the GPU time measured"),
            "not forecast: the GPU's memory copies (3, 1.500 ms) and memsets (1, 0.500 ms) "
            "besides its kernels, 50.0 % of the GPU time measured");
  // Kernels not measured (a run that only predicted): no share is claimed.
  EXPECT_EQ(transfers_note(t, 0, "the GPU time measured"),
            "not forecast: the GPU's memory copies (3, 1.500 ms) and memsets (1, 0.500 ms) "
            "besides its kernels");
  EXPECT_FALSE(GpuTransfers{}.any());
  EXPECT_TRUE(t.any());
}

}  // namespace
}  // namespace pm2lat::reports
