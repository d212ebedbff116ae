// The GPU's memory copies and memsets under the runtime: they are not kernels and are not
// forecast, but they take the GPU's time, so the summary says how much (CUPTI's MEMCPY and
// MEMSET records), and the program's data is copied as without the runtime.
#include <gtest/gtest.h>

#include <csignal>

#include "fake_sim.h"
#include "run_program.h"

namespace pm2lat::test {
namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

const nlohmann::json* transfer(const nlohmann::json& summary, const std::string& kind) {
  for (const auto& t : summary.at("transfers")) {
    if (t.at("kind") == kind) return &t;
  }
  return nullptr;
}

// Through the driver's copies of each direction, and through cuMemcpy, which reads the
// direction from where each pointer lies (unified addressing), as cudaMemcpyDefault does.
class CopyEntryPoints : public ::testing::TestWithParam<const char*> {};
INSTANTIATE_TEST_SUITE_P(Driver, CopyEntryPoints, ::testing::Values("EachDirection", "Unified"),
                         [](const auto& info) { return std::string(info.param); });

TEST_P(CopyEntryPoints, TheSummarySaysTheGpuTimeOfCopiesAndMemsetsAndTheirKinds) {
  std::vector<std::string> argv{program("copies")};
  if (std::string(GetParam()) == "Unified") argv.emplace_back("unified");
  const RunResult r = run({argv, {}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("copied 1048576"), std::string::npos) << r.out;
  const auto summary = nlohmann::json::parse(read_file(r.dir + "/summary.json"));
  // The fake device's time for each (fake_sim::transfer_duration_ns), as CUPTI measured it.
  struct Expected {
    const char* kind;
    std::uint64_t count, bytes, ns;
  };
  const std::uint64_t over_link = fake_sim::transfer_duration_ns(kMiB, true);
  const std::uint64_t on_device = fake_sim::transfer_duration_ns(kMiB, false);
  for (const Expected& e :
       {Expected{"host_to_device", 2, 2 * kMiB, 2 * over_link},
        Expected{"device_to_host", 1, kMiB, over_link},
        Expected{"device_to_device", 1, kMiB, on_device}, Expected{"memset", 1, kMiB, on_device}}) {
    const nlohmann::json* t = transfer(summary, e.kind);
    ASSERT_NE(t, nullptr) << e.kind << " " << summary.dump();
    EXPECT_EQ(t->at("count").get<std::uint64_t>(), e.count) << e.kind;
    EXPECT_EQ(t->at("bytes").get<std::uint64_t>(), e.bytes) << e.kind;
    EXPECT_NEAR(t->at("measured_ms").get<double>(), static_cast<double>(e.ns) / 1e6, 1e-9)
        << e.kind;
  }
  EXPECT_EQ(summary.at("transfers").size(), 4u) << summary.dump();
  // Copies are not kernel records: the three kernels are all there is.
  const Records records = read_records(r.dir + "/records.jsonl");
  EXPECT_EQ(records.kernels.size(), 3u);
}

// Device memory is the device's: a host read through a device pointer faults, as on a GPU,
// so a runtime that read the program's device memory from the host would crash here too.
TEST(FakeDeviceMemory, IsNotTheHosts) {
  const RunResult r = run({{program("copies"), "touch"}, {}});
  // (Built with AddressSanitizer, the program reports the fault and exits instead.)
  EXPECT_TRUE(r.signal == SIGSEGV || r.err.find("SEGV on unknown address") != std::string::npos)
      << r.signal << " " << r.exit_code << " " << r.err;
  EXPECT_NE(r.out.find("touching"), std::string::npos) << r.out;
}

TEST(Copies, TheTerminalSummarySaysTheShareOfGpuTimeNotForecast) {
  const RunResult r = run({{program("copies")}, {{"PM2LAT_SUMMARY", "stderr"}}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("pm2lat: not forecast: 4 memory copies"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("and 1 memsets"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("% of the GPU time measured"), std::string::npos) << r.err;
}

// Timed with CUDA events (no CUPTI), the runtime sees no copies: the summary lists none
// rather than claiming the GPU did nothing else.
TEST(Copies, WithoutCuptiNoCopiesAreClaimed) {
  const RunResult r = run({{program("copies")}, {{"PM2LAT_TIMING", "events"}}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("copied 1048576"), std::string::npos) << r.out;
  const auto summary = nlohmann::json::parse(read_file(r.dir + "/summary.json"));
  EXPECT_TRUE(summary.at("transfers").empty()) << summary.dump();
}

}  // namespace
}  // namespace pm2lat::test
