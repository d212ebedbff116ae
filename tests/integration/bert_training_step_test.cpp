// The demo's program (examples/bert_training_step) under the runtime in predict-only mode, as
// scripts/demo.sh runs it: every kernel of the training step is recorded once, classified,
// and forecast on every target by a dedicated model, never by the roofline fallback.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "run_program.h"

namespace pm2lat::test {
namespace {

TEST(BertTrainingStep, EveryKernelIsClassifiedAndForecastByADedicatedModel) {
  RunOptions o;
  o.argv = {PM2LAT_EXAMPLE_BERT_STEP, "2"};  // two encoder layers keep it quick
  o.env["PM2LAT_TARGETS"] = "H100,A100,L4";
  o.env["PM2LAT_MEASURE"] = "0";
  const RunResult r = run(o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Records records = read_records(r.dir + "/records.jsonl");
  const FakeLog fake = read_fake_log(r.dir + "/fake.log");
  ASSERT_GT(fake.launches, 100u);
  EXPECT_EQ(records.kernels.size(), fake.launches) << "every launch recorded once";

  std::map<std::string, int> families;
  for (const auto& k : records.kernels) {
    const std::string family = k.at("family");
    ++families[family];
    EXPECT_NE(family, "unknown") << k.at("name");
    EXPECT_TRUE(k.at("measured_us").is_null()) << "predict-only: " << k.dump();
    ASSERT_EQ(k.at("model").size(), 3u) << k.dump();
    for (const auto& [target, model] : k.at("model").items()) {
      EXPECT_NE(model, "roofline") << target << ": " << k.at("name");
      const std::string flags = k.at("flags").value(target, "");
      EXPECT_EQ(flags.find("fallback"), std::string::npos) << target << ": " << k.at("name");
    }
  }
  for (const char* f : {"gemm", "attention", "layernorm", "elementwise", "softmax", "reduction",
                        "embedding", "optimizer"}) {
    EXPECT_GT(families[f], 0) << f;
  }
}

}  // namespace
}  // namespace pm2lat::test
