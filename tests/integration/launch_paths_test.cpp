// Every driver launch path a program can take is seen exactly once, with the right name,
// geometry, entry point and duration, in each measurement mode: CUPTI callbacks + activity
// (the default), hooks + CUPTI activity (external correlation), hooks + CUDA events (CUPTI
// missing). The fake driver's own log is the ground truth.
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "pm2lat/test/occurrences.h"
#include "run_program.h"

namespace pm2lat::test {
namespace {

struct Mode {
  const char* name;
  std::map<std::string, std::string> env;
  std::string expected_mode;
  bool exact_timing;
};

void PrintTo(const Mode& m, std::ostream* os) { *os << m.name; }

std::map<std::string, std::string> expected_launches(const std::string& out) {
  std::map<std::string, std::string> m;
  std::istringstream in(out);
  std::string word, name, api;
  while (in >> word) {
    if (word == "launch" && in >> name >> api) m[name] = api;
  }
  return m;
}

class DriverLaunchPaths : public ::testing::TestWithParam<Mode> {};

TEST_P(DriverLaunchPaths, EveryPathIsRecordedOnceWithGeometryApiAndDuration) {
  const Mode& mode = GetParam();
  const RunResult r = run({{program("driver_launch_paths")}, mode.env});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("symbol-status ok"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rejected ok"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rtld-next ok"), std::string::npos) << r.out;

  const Records records = read_records(r.dir + "/records.jsonl");
  const FakeLog fake = read_fake_log(r.dir + "/fake.log");
  ASSERT_EQ(records.header.at("runtime").at("mode"), mode.expected_mode);
  ASSERT_FALSE(fake.executions.empty());
  ASSERT_EQ(records.kernels.size(), fake.executions.size());

  std::map<std::string, nlohmann::json> by_name;
  for (const auto& k : records.kernels) {
    const std::string name = k.at("name");
    EXPECT_EQ(by_name.count(name), 0u) << "recorded twice: " << name;
    by_name[name] = k;
  }
  for (const FakeExecution& e : fake.executions) {
    ASSERT_EQ(by_name.count(e.name), 1u) << "not recorded: " << e.name;
    const nlohmann::json& k = by_name[e.name];
    EXPECT_EQ(k.at("grid"), (nlohmann::json{e.grid[0], e.grid[1], e.grid[2]})) << e.name;
    EXPECT_EQ(k.at("block"), (nlohmann::json{e.block[0], e.block[1], e.block[2]})) << e.name;
    ASSERT_TRUE(k.at("measured_us").is_number()) << e.name;
    const double simulated = double(e.end_ns - e.start_ns) / 1000.0;
    const double measured = k.at("measured_us").get<double>();
    if (mode.exact_timing) {
      EXPECT_NEAR(measured, simulated, 1e-6) << e.name;
      EXPECT_EQ(k.at("ts_ns").get<std::uint64_t>(), e.start_ns) << e.name;
    } else {
      // Events bracket the launch: the kernel plus the host gap before it started, which is
      // microseconds unless the launching thread is preempted in between (a loaded machine).
      EXPECT_GE(measured, simulated - 1e-3) << e.name;
      EXPECT_LE(measured, simulated + 100'000.0) << e.name;
      EXPECT_TRUE(has_note(k, "events_timing")) << e.name;
    }
    EXPECT_FALSE(has_note(k, "unhooked")) << e.name;
    // Predictions for the requested target and for the GPU it ran on.
    EXPECT_TRUE(k.at("predicted_us").contains("A100-SXM")) << k.dump();
    EXPECT_TRUE(k.at("predicted_us").contains("H100-SXM")) << k.dump();
  }

  const auto expected = expected_launches(r.out);
  ASSERT_EQ(expected.size(), 12u) << r.out;
  for (const auto& [name, api] : expected) {
    ASSERT_EQ(by_name.count(name), 1u) << name;
    EXPECT_EQ(by_name[name].at("runtime").at("api"), api) << name;
  }
  EXPECT_EQ(by_name["path_dlsym_ex"].at("cluster"), (nlohmann::json{2, 1, 1}));
  EXPECT_EQ(by_name["path_direct_launch"].at("cluster"), (nlohmann::json{1, 1, 1}));
  EXPECT_TRUE(has_note(by_name["path_cooperative"], "cooperative"));
  // Scalar arguments are read from the kernel's parameter layout.
  const auto args = by_name["triton_poi_fused_add_0"].at("runtime").at("args");
  EXPECT_NE(std::find(args.begin(), args.end(), 4096), args.end()) << args.dump();
  // A kernel loaded at an unloaded kernel's handle keeps its own name (both are above).
  EXPECT_EQ(by_name.count("path_rejected"), 0u);
  EXPECT_EQ(records.header.at("gpu"), "H100-SXM");

  const auto summary = nlohmann::json::parse(read_file(r.dir + "/summary.json"));
  const auto& c = summary.at("counters");
  EXPECT_EQ(c.at("records").get<std::size_t>(), fake.executions.size());
  EXPECT_EQ(c.at("measured").get<std::size_t>(), fake.executions.size());
  EXPECT_EQ(c.at("unhooked"), 0);
  EXPECT_EQ(c.at("dropped"), 0);
}

INSTANTIATE_TEST_SUITE_P(
    Modes, DriverLaunchPaths,
    ::testing::Values(Mode{"CuptiCallbacks", {}, "cupti-callbacks+cupti-activity", true},
                      Mode{"HooksWithCuptiActivity",
                           {{"PM2LAT_LAUNCH_SOURCE", "hooks"}},
                           "hooks+cupti-activity",
                           true},
                      Mode{"HooksWithEventsWhenCuptiIsMissing",
                           {{"PM2LAT_CUPTI_LIBRARY", "/nonexistent/libcupti.so"}},
                           "hooks+cuda-events",
                           false}),
    [](const ::testing::TestParamInfo<Mode>& info) { return std::string(info.param.name); });

TEST(DriverLaunchPaths, MissingCuptiIsReportedOnceAndTheProgramIsUnaffected) {
  const RunResult r = run(
      {{program("driver_launch_paths")}, {{"PM2LAT_CUPTI_LIBRARY", "/nonexistent/libcupti.so"}}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(occurrences(r.err, "CUPTI unavailable"), 1u) << r.err;
}

// The coverage oracle: kernels CUPTI saw run but no hook saw launched are still recorded
// (named, shaped and timed from the activity record), flagged and counted, in both ways of
// getting launch metadata.
class CoverageOracle : public ::testing::TestWithParam<const char*> {};

TEST_P(CoverageOracle, KernelsNoHookSawAreRecordedFromCuptiAndCounted) {
  std::map<std::string, std::string> env;
  if (std::string(GetParam()) == "hooks") env["PM2LAT_LAUNCH_SOURCE"] = "hooks";
  const RunResult r = run({{program("unhooked_launches"), "3", "5"}, env});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Records records = read_records(r.dir + "/records.jsonl");
  const FakeLog fake = read_fake_log(r.dir + "/fake.log");
  ASSERT_EQ(fake.executions.size(), 8u);

  std::map<std::string, int> hooked_by_name, unhooked_by_name;
  for (const auto& k : records.kernels) {
    ASSERT_TRUE(k.at("measured_us").is_number()) << k.dump();
    if (has_note(k, "unhooked")) {
      ++unhooked_by_name[k.at("name").get<std::string>()];
      EXPECT_EQ(k.at("grid"), (nlohmann::json{16, 2, 1})) << k.dump();
      EXPECT_EQ(k.at("block"), (nlohmann::json{128, 1, 1})) << k.dump();
    } else {
      ++hooked_by_name[k.at("name").get<std::string>()];
    }
  }
  EXPECT_EQ(hooked_by_name, (std::map<std::string, int>{{"public_kernel", 3}}));
  EXPECT_EQ(unhooked_by_name, (std::map<std::string, int>{{"private_kernel", 5}}));

  const auto summary = nlohmann::json::parse(read_file(r.dir + "/summary.json"));
  EXPECT_EQ(summary.at("counters").at("unhooked"), 5);
  EXPECT_EQ(summary.at("counters").at("records"), 8);
}

INSTANTIATE_TEST_SUITE_P(Modes, CoverageOracle, ::testing::Values("callbacks", "hooks"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param);
                         });

}  // namespace
}  // namespace pm2lat::test
