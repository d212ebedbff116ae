#include "collect/run_contained.h"

#include <gtest/gtest.h>

#include <new>
#include <stdexcept>
#include <string>
#include <vector>

namespace pm2lat::shim {
namespace {

TEST(RunContained, AStepThatThrowsIsReportedNotLetOut) {
  std::vector<std::string> reports;
  const auto report = [&](const char* what) noexcept { reports.emplace_back(what); };
  run_contained([] { throw std::runtime_error("records file gone"); }, report);
  run_contained([] { throw std::bad_alloc(); }, report);
  run_contained([] { throw 42; }, report);  // not a std::exception
  ASSERT_EQ(reports.size(), 3u);
  EXPECT_EQ(reports[0], "records file gone");
  EXPECT_EQ(reports[1], std::bad_alloc().what());
  EXPECT_EQ(reports[2], "an unknown error");
}

TEST(RunContained, TheStepsAfterAFailedOneStillRun) {
  // The worker's loop: one pass failing loses that pass, not the ones after it.
  int done = 0, failed = 0;
  const auto report = [&](const char*) noexcept { ++failed; };
  for (int pass = 0; pass < 3; ++pass) {
    run_contained(
        [&] {
          if (pass == 1) throw std::bad_alloc();
          ++done;
        },
        report);
  }
  EXPECT_EQ(done, 2);
  EXPECT_EQ(failed, 1);
}

}  // namespace
}  // namespace pm2lat::shim
