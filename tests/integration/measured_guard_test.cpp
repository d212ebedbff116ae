// The measurement guard in the runtime: a record whose measured time on the run's GPU
// disagrees wildly with the model's prediction for that GPU has its forecasts for the other
// targets anchored to the measurement (flag `anchored`), while its prediction for the run's
// GPU stays the model's.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>

#include "run_program.h"

namespace pm2lat::test {
namespace {

// Every fake kernel takes at least 2 ms: hundreds of times what the model predicts for the
// demo's kernels (a few µs to a few hundred µs on an H100).
constexpr const char* kSlowKernelNs = "2000000";

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
    // measured x target prediction / source prediction
    EXPECT_NEAR(k.at("predicted_us").at(other).get<double>(), m * other_model / own_model,
                1e-6 * m * other_model / own_model)
        << k.dump();
    ++anchored;
  }
  EXPECT_GT(compared, 50u);
  EXPECT_GT(anchored, compared / 2);
}

}  // namespace
}  // namespace pm2lat::test
