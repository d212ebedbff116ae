// CUDA graphs: launches recorded at capture are not records themselves (nothing ran); each
// replay of the instantiated graph gives one record per kernel node, described by its
// captured launch and measured by the replayed kernel's activity record.
#include <gtest/gtest.h>

#include <map>

#include "run_program.h"

namespace pm2lat::test {
namespace {

constexpr int kReplays = 1000;

struct GraphMode {
  const char* name;
  std::map<std::string, std::string> env;
  bool measured;
};

void PrintTo(const GraphMode& m, std::ostream* os) { *os << m.name; }

class GraphReplay : public ::testing::TestWithParam<GraphMode> {};

TEST_P(GraphReplay, EveryReplayedNodeIsOneRecordWithItsCapturedLaunch) {
  const GraphMode& mode = GetParam();
  const RunResult r = run({{program("graph_replay"), std::to_string(kReplays)}, mode.env});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Records records = read_records(r.dir + "/records.jsonl");
  const FakeLog fake = read_fake_log(r.dir + "/fake.log");

  struct Totals {
    std::uint64_t count = 0;
    std::uint64_t replays = 0;
    double measured_us = 0;
  };
  std::map<std::string, Totals> by_name;
  for (const auto& k : records.kernels) {
    Totals& t = by_name[k.at("name")];
    ++t.count;
    if (has_note(k, "graph_replay")) {
      ++t.replays;
      if (mode.measured) {
        EXPECT_TRUE(k.at("graph").at("node").get<std::uint64_t>() > 0) << k.dump();
      }
    }
    if (k.at("measured_us").is_number()) t.measured_us += k.at("measured_us").get<double>();
    EXPECT_FALSE(has_note(k, "unhooked")) << k.dump();
  }
  // Captured launches produce no record; each replay produces one per node.
  EXPECT_EQ(by_name["graph_gemm_like"].count, std::uint64_t(kReplays));
  EXPECT_EQ(by_name["graph_gemm_like"].replays, std::uint64_t(kReplays));
  EXPECT_EQ(by_name["graph_elementwise"].replays, std::uint64_t(kReplays));
  // The eager launch of graph_reduce plus its replays.
  EXPECT_EQ(by_name["graph_reduce"].count, std::uint64_t(kReplays + 1));
  EXPECT_EQ(records.kernels.size(), std::size_t(3 * kReplays + 1));
  EXPECT_EQ(fake.executions.size(), records.kernels.size());

  if (mode.measured) {
    // Every replayed kernel's measured time is the simulated one.
    for (const auto& [name, totals] : fake.kernels) {
      EXPECT_NEAR(by_name[name].measured_us, double(totals.second) / 1000.0, 1e-3 * totals.first)
          << name;
    }
  }
  // The captured launch's arguments and geometry travel with every replay.
  for (const auto& k : records.kernels) {
    if (k.at("name") != "graph_elementwise") continue;
    EXPECT_EQ(k.at("grid"), (nlohmann::json{1024, 1, 1}));
    const auto args = k.at("runtime").at("args");
    EXPECT_NE(std::find(args.begin(), args.end(), 1 << 20), args.end()) << k.dump();
  }
  const auto summary = nlohmann::json::parse(read_file(r.dir + "/summary.json"));
  EXPECT_EQ(summary.at("counters").at("captured"), 3);
  EXPECT_EQ(summary.at("counters").at("graph_replays"), 3 * kReplays);
}

INSTANTIATE_TEST_SUITE_P(
    Modes, GraphReplay,
    ::testing::Values(
        GraphMode{"CuptiCallbacks", {}, true},
        GraphMode{"HooksWithCuptiActivity", {{"PM2LAT_LAUNCH_SOURCE", "hooks"}}, true},
        GraphMode{
            "HooksWithoutCupti", {{"PM2LAT_CUPTI_LIBRARY", "/nonexistent/libcupti.so"}}, false}),
    [](const ::testing::TestParamInfo<GraphMode>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace pm2lat::test
