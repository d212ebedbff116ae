// The GPU the program runs on, as the runtime resolves it from the driver: a model the
// catalogue does not list is predicted and scored as the catalogue GPU of the same compute
// capability nearest in SMs, and the run says so once.
#include <gtest/gtest.h>

#include <string>

#include "run_program.h"

namespace pm2lat::test {
namespace {

TEST(OwnGpu, AModelTheCatalogueDoesNotListIsScoredAsTheNearestGpuOfItsArchitecture) {
  RunOptions o;
  o.argv = {PM2LAT_EXAMPLE_BERT_STEP, "1"};
  o.env["FAKE_CUDA_DEVICE"] = "RTX4080S";  // 80 SMs of compute capability 8.9
  const RunResult r = run(o);
  ASSERT_EQ(r.exit_code, 0) << r.err;

  // L20: the Ada GPU nearest in SMs (92); the requested A100 stays the first target.
  const Records records = read_records(r.dir + "/records.jsonl");
  ASSERT_FALSE(records.kernels.empty());
  EXPECT_EQ(records.header.at("gpu"), "L20");
  EXPECT_EQ(records.header.at("targets").front(), "A100-SXM");
  std::size_t scored = 0;
  for (const auto& k : records.kernels) {
    if (!k.at("measured_us").is_null() && k.at("predicted_us").contains("L20")) ++scored;
  }
  EXPECT_EQ(scored, records.kernels.size()) << "every measured kernel has its own-GPU forecast";

  const auto summary = nlohmann::json::parse(read_file(r.dir + "/summary.json"));
  std::size_t said = 0;
  for (const auto& w : summary.at("warnings")) {
    const std::string text = w.get<std::string>();
    if (text.find("GPU 'NVIDIA GeForce RTX 4080 SUPER' is not in the device catalogue") ==
        std::string::npos)
      continue;
    ++said;
    EXPECT_NE(text.find("as L20, of the same compute capability (8.9)"), std::string::npos) << text;
    EXPECT_NE(text.find("92 against its 80"), std::string::npos) << text;
  }
  EXPECT_EQ(said, 1u) << summary.at("warnings").dump();
}

}  // namespace
}  // namespace pm2lat::test
