// The measurement guard in the runtime: a record whose measured time on the run's GPU
// disagrees wildly with the model's prediction for that GPU has its forecasts for the other
// targets anchored to the measurement (flag `anchored`), while its prediction for the run's
// GPU stays the model's.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <string>
#include <utility>

#include "run_program.h"

namespace pm2lat::test {
namespace {

// Every fake kernel takes at least 2 ms: hundreds of times what the model predicts for the
// demo's kernels (a few µs to a few hundred µs on an H100).
constexpr const char* kSlowKernelNs = "2000000";

// How many times the run's GPU's time a kernel can take on `target` (measured_guard.h,
// time_ratio_range): the two GPUs' ratios of bandwidth, SMs x clock and FP32 peak, and 1.
std::pair<double, double> time_ratio_range(const std::string& source, const std::string& target) {
  std::ifstream in(std::string(PM2LAT_TEST_PROFILE_DIR) + "/devices.json");
  const nlohmann::json catalogue = nlohmann::json::parse(in);
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& d : catalogue.at("devices")) by_name[d.at("name")] = d;
  const nlohmann::json& s = by_name.at(source);
  const nlohmann::json& t = by_name.at(target);
  auto num = [](const nlohmann::json& d, const char* f) { return d.at(f).get<double>(); };
  const double ratios[] = {num(s, "mem_bw_gbps") / num(t, "mem_bw_gbps"),
                           num(s, "sm_count") * num(s, "boost_clock_mhz") /
                               (num(t, "sm_count") * num(t, "boost_clock_mhz")),
                           num(s, "fp32_tflops") / num(t, "fp32_tflops")};
  double lo = 1, hi = 1;
  for (const double r : ratios) {
    lo = std::min(lo, r);
    hi = std::max(hi, r);
  }
  return {lo, hi};
}

RunResult run_bert_step(bool measure) {
  RunOptions o;
  o.argv = {PM2LAT_EXAMPLE_BERT_STEP, "1"};
  o.env["PM2LAT_TARGETS"] = "A100";  // the run's GPU (the fake's H100) is not listed
  o.env["FAKE_CUDA_BASE_NS"] = kSlowKernelNs;
  if (!measure) o.env["PM2LAT_MEASURE"] = "0";
  return run(o);
}

TEST(MeasuredGuard, WildlySlowKernelsAnchorOtherTargetsAndLeaveTheOwnPredictionAlone) {
  const RunResult measured = run_bert_step(true);
  ASSERT_EQ(measured.exit_code, 0) << measured.err;
  const RunResult forecast = run_bert_step(false);
  ASSERT_EQ(forecast.exit_code, 0) << forecast.err;
  const Records with = read_records(measured.dir + "/records.jsonl");
  const Records without = read_records(forecast.dir + "/records.jsonl");
  const std::string own = with.header.at("gpu");
  ASSERT_FALSE(own.empty());
  std::string other;
  for (const auto& t : with.header.at("targets"))
    if (t != own) other = t;
  ASSERT_FALSE(other.empty());

  // The model's predictions of each (seq, kernel) without any measurement.
  std::map<std::pair<std::uint64_t, std::string>, nlohmann::json> model;
  for (const auto& k : without.kernels) model[{k.at("seq"), k.at("name")}] = k.at("predicted_us");

  // The A100 is smaller than the run's H100 in every respect: never forecast faster than it.
  const auto range = time_ratio_range(own, other);
  ASSERT_GE(range.first, 1.0);
  std::size_t anchored = 0, compared = 0;
  for (const auto& k : with.kernels) {
    if (k.at("measured_us").is_null()) continue;
    const auto it = model.find({k.at("seq"), k.at("name")});
    if (it == model.end()) continue;
    ++compared;
    const double m = k.at("measured_us");
    const double own_model = it->second.at(own);
    const double other_model = it->second.at(other);
    // The run's GPU: the model's prediction, never anchored.
    EXPECT_DOUBLE_EQ(k.at("predicted_us").at(own).get<double>(), own_model) << k.at("name");
    EXPECT_EQ(k.at("flags").value(own, "").find("anchored"), std::string::npos) << k.dump();
    ASSERT_GT(m, 5 * own_model) << "the fake kernel is not slow enough: " << k.dump();
    const std::string flags = k.at("flags").value(other, "");
    if (flags.find("config_chosen") != std::string::npos) {
      // The A100 runs a GEMM configuration of its own: the H100's kernel time says nothing
      // about it, and the model's forecast stands.
      EXPECT_EQ(flags.find("anchored"), std::string::npos) << k.dump();
      EXPECT_DOUBLE_EQ(k.at("predicted_us").at(other).get<double>(), other_model);
      continue;
    }
    EXPECT_NE(flags.find("anchored"), std::string::npos) << k.dump();
    // measured x target prediction / source prediction, that ratio within the hardware's
    const double ratio = std::clamp(other_model / own_model, range.first, range.second);
    EXPECT_NEAR(k.at("predicted_us").at(other).get<double>(), m * ratio, 1e-6 * m * ratio)
        << k.dump();
    ++anchored;
  }
  EXPECT_GT(compared, 50u);
  EXPECT_GT(anchored, compared / 2);
}

}  // namespace
}  // namespace pm2lat::test
