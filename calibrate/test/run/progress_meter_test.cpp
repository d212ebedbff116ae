#include <gtest/gtest.h>

#include "pm2lat/calibrate/run/progress_meter.h"

namespace pm2lat::calibrate::run {
namespace {

TEST(ProgressMeter, TimeLeftFollowsTheRealSpeedOfTheEstimates) {
  double now = 0;
  ProgressMeter m(nullptr, false, [&] { return now; });
  m.set_total(100, 10);
  EXPECT_DOUBLE_EQ(m.remaining_s(), 100);  // nothing measured yet: the estimate itself
  // Tasks take twice their estimate: the time left doubles too.
  for (int i = 0; i < 4; ++i) {
    now += 20;
    m.advance(10, "task");
  }
  EXPECT_NEAR(m.remaining_s(), 60 * 2.0, 1e-9);
  EXPECT_NE(m.line().find("4/10 tasks"), std::string::npos) << m.line();
  EXPECT_NE(m.line().find(" 40%"), std::string::npos) << m.line();
  EXPECT_NE(m.line().find("~2m00s left"), std::string::npos) << m.line();
}

TEST(ProgressMeter, ResumedTasksCountAsDoneButNotAsSpeed) {
  double now = 0;
  ProgressMeter m(nullptr, false, [&] { return now; });
  m.set_total(100, 10);
  for (int i = 0; i < 5; ++i) m.advance(10, "journal", /*resumed=*/true);  // no time passes
  EXPECT_DOUBLE_EQ(m.remaining_s(), 50);
  now += 5;
  m.advance(10, "task");  // 5 s for 10 estimated seconds
  EXPECT_NEAR(m.remaining_s(), 40 * 0.5, 1e-9);
}

}  // namespace
}  // namespace pm2lat::calibrate::run
