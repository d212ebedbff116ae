// Scratch directories a test makes: removed when the test passes (a suite run would otherwise
// leave dozens in the temp directory), kept for a look when it fails. Shared by the runtime's
// integration tests and the reports tests.
//
//   const std::string dir = make_it();
//   test::remove_when_test_passes(dir);
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <mutex>
#include <system_error>
#include <utility>
#include <vector>

namespace pm2lat::test {

namespace scratch_detail {

struct Registry {
  std::mutex mu;
  std::vector<std::filesystem::path> dirs;
};

inline Registry& registry() {
  static Registry r;
  return r;
}

class Cleaner : public ::testing::EmptyTestEventListener {
  void OnTestEnd(const ::testing::TestInfo& info) override {
    std::vector<std::filesystem::path> dirs;
    {
      const std::lock_guard<std::mutex> lock(registry().mu);
      dirs.swap(registry().dirs);
    }
    if (info.result() == nullptr || !info.result()->Passed()) return;
    for (const auto& dir : dirs) {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
  }
};

}  // namespace scratch_detail

// `dir` is removed at the end of the running test if it passes. The first call installs the
// cleaner (gtest owns it); it sees the end of the test that made the call.
inline void remove_when_test_passes(std::filesystem::path dir) {
  static const bool installed = [] {
    ::testing::UnitTest::GetInstance()->listeners().Append(new scratch_detail::Cleaner);
    return true;
  }();
  (void)installed;
  const std::lock_guard<std::mutex> lock(scratch_detail::registry().mu);
  scratch_detail::registry().dirs.push_back(std::move(dir));
}

}  // namespace pm2lat::test
