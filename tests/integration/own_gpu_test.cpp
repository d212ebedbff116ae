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
  o.env["FAKE_CUDA_DEVICE"] = "RTX4070L";  // 36 SMs of compute capability 8.9
  const RunResult r = run(o);
  ASSERT_EQ(r.exit_code, 0) << r.err;

  // Not the desktop RTX 4070 (46 SMs) its name shares a number with: the Ada GPU nearest in
  // SMs, the RTX 4060 Ti (34); the requested A100 stays the first target.
  const Records records = read_records(r.dir + "/records.jsonl");
  ASSERT_FALSE(records.kernels.empty());
  EXPECT_EQ(records.header.at("gpu"), "RTX-4060-Ti");
  EXPECT_EQ(records.header.at("targets").front(), "A100-SXM");
  std::size_t scored = 0;
  for (const auto& k : records.kernels) {
    if (!k.at("measured_us").is_null() && k.at("predicted_us").contains("RTX-4060-Ti")) ++scored;
  }
  EXPECT_EQ(scored, records.kernels.size()) << "every measured kernel has its own-GPU forecast";

  const auto summary = nlohmann::json::parse(read_file(r.dir + "/summary.json"));
  std::size_t said = 0;
  for (const auto& w : summary.at("warnings")) {
    const std::string text = w.get<std::string>();
    if (text.find("GPU 'NVIDIA GeForce RTX 4070 Laptop GPU' is not in the device catalogue") ==
        std::string::npos)
      continue;
    ++said;
    EXPECT_NE(text.find("as RTX-4060-Ti, of the same compute capability (8.9)"), std::string::npos)
        << text;
    EXPECT_NE(text.find("34 against its 36"), std::string::npos) << text;
  }
  EXPECT_EQ(said, 1u) << summary.at("warnings").dump();
}

}  // namespace
}  // namespace pm2lat::test
