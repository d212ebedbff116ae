#include "config.h"

#include <gtest/gtest.h>

#include <map>

namespace pm2lat::shim {
namespace {

Config parse(const std::map<std::string, std::string>& env) {
  return Config::from_environment([&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

TEST(Config, DefaultsWriteRecordsAndTheSummaryAndUseCuptiWhenPossible) {
  const Config c = parse({});
  EXPECT_FALSE(c.disabled);
  EXPECT_TRUE(c.targets.empty());
  EXPECT_EQ(c.out, "records.%p.jsonl");
  EXPECT_EQ(c.summary, "stderr");
  EXPECT_EQ(c.cupti, CuptiUse::kAuto);
  EXPECT_EQ(c.timing, TimingSource::kAuto);
  EXPECT_EQ(c.ring_slots, 8192u);
  EXPECT_EQ(c.drift_pct, 30.0);
  EXPECT_FALSE(c.rank_known);
  EXPECT_TRUE(c.problems.empty());
}

TEST(Config, ReadsEveryVariable) {
  const Config c = parse({{"PM2LAT_TARGETS", " H100, a100 ,,L4 "},
                          {"PM2LAT_OUT", "/tmp/out/"},
                          {"PM2LAT_SUMMARY", "none"},
                          {"PM2LAT_CUPTI", "off"},
                          {"PM2LAT_CUPTI_LIBRARY", "/opt/cupti.so"},
                          {"PM2LAT_LAUNCH_SOURCE", "hooks"},
                          {"PM2LAT_TIMING", "events"},
                          {"PM2LAT_NVTX", "on"},
                          {"PM2LAT_LOG", "info"},
                          {"PM2LAT_RING_SLOTS", "4096"},
                          {"PM2LAT_FLUSH_MS", "50"},
                          {"PM2LAT_DRIFT_PCT", "15"},
                          {"RANK", "7"}});
  EXPECT_EQ(c.targets, (std::vector<std::string>{"H100", "a100", "L4"}));
  EXPECT_EQ(c.out, "/tmp/out/");
  EXPECT_EQ(c.summary, "");
  EXPECT_EQ(c.cupti, CuptiUse::kOff);
  EXPECT_EQ(c.cupti_library, "/opt/cupti.so");
  EXPECT_EQ(c.launch_source, LaunchSource::kHooks);
  EXPECT_EQ(c.timing, TimingSource::kEvents);
  EXPECT_EQ(c.nvtx, NvtxUse::kOn);
  EXPECT_EQ(c.log, LogLevel::kInfo);
  EXPECT_EQ(c.ring_slots, 4096u);
  EXPECT_EQ(c.flush_ms, 50u);
  EXPECT_EQ(c.drift_pct, 15.0);
  EXPECT_EQ(c.rank, 7);
  EXPECT_TRUE(c.rank_known);
  EXPECT_TRUE(c.problems.empty());
}

TEST(Config, PmRunsNoMeasureMeansPredictOnly) {
  EXPECT_EQ(parse({{"PM2LAT_MEASURE", "0"}}).timing, TimingSource::kNone);
  EXPECT_EQ(parse({{"PM2LAT_MEASURE", "1"}}).timing, TimingSource::kAuto);
}

TEST(Config, BadValuesAreReportedAndFallBackToDefaults) {
  const Config c = parse({{"PM2LAT_TIMING", "sometimes"},
                          {"PM2LAT_RING_SLOTS", "12"},
                          {"PM2LAT_FLUSH_MS", "abc"},
                          {"PM2LAT_DRIFT_PCT", "-5"}});
  EXPECT_EQ(c.timing, TimingSource::kAuto);
  EXPECT_EQ(c.ring_slots, 8192u);
  EXPECT_EQ(c.flush_ms, 200u);
  EXPECT_EQ(c.drift_pct, 30.0);
  ASSERT_EQ(c.problems.size(), 4u);
  EXPECT_NE(c.problems[0].find("PM2LAT_TIMING=sometimes"), std::string::npos);
}

TEST(Config, DisableAndNoOutput) {
  EXPECT_TRUE(parse({{"PM2LAT_DISABLE", "1"}}).disabled);
  EXPECT_FALSE(parse({{"PM2LAT_DISABLE", "0"}}).disabled);
  EXPECT_EQ(parse({{"PM2LAT_OUT", "none"}}).out, "");
}

TEST(ExpandPath, PidPlaceholderAndForkChildren) {
  EXPECT_EQ(expand_path("run-%p.jsonl", 42, false), "run-42.jsonl");
  EXPECT_EQ(expand_path("a/%p/%p.jsonl", 7, true), "a/7/7.jsonl");
  EXPECT_EQ(expand_path("records.jsonl", 42, false), "records.jsonl");
  EXPECT_EQ(expand_path("records.jsonl", 42, true), "records.42.jsonl");
  EXPECT_EQ(expand_path("dir.v1/records", 42, true), "dir.v1/records.42");
}

}  // namespace
}  // namespace pm2lat::shim
