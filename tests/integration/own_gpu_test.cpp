// The GPU the program runs on, as the runtime resolves it from the driver: a model the
// catalogue does not list is predicted and scored as the catalogue GPU of the same compute
// capability nearest in SMs, and the run says so once; on a machine with GPUs of two models,
// each kernel is scored against the GPU of the device it ran on.
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

// A process on a MIG partition (a shared A100's smallest): its device is named after the whole
// GPU and the profile, with the partition's SMs. Scored as the whole A100 its kernels would be
// judged against forecasts up to 7x too fast.
TEST(OwnGpu, AMigPartitionIsScoredAsItsShareOfTheWholeGpu) {
  RunOptions o;
  o.argv = {PM2LAT_EXAMPLE_BERT_STEP, "1"};
  o.env["FAKE_CUDA_DEVICE"] = "A100MIG";
  const RunResult r = run(o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string partition = "A100-SXM MIG 1g.10gb";  // the driver's name, as the catalogue's
  const Records records = read_records(r.dir + "/records.jsonl");
  ASSERT_FALSE(records.kernels.empty());
  EXPECT_EQ(records.header.at("gpu"), partition);
  EXPECT_EQ(records.header.at("targets"), (nlohmann::json{"A100-SXM", partition}));
  double on_partition = 0, on_whole = 0;
  for (const auto& k : records.kernels) {
    ASSERT_TRUE(k.at("predicted_us").contains(partition)) << k.dump();
    EXPECT_EQ(k.at("gpu"), partition);
    on_partition += k.at("predicted_us").at(partition).get<double>();
    on_whole += k.at("predicted_us").at("A100-SXM").get<double>();
  }
  // A step of small kernels: launch floors, then 1/8 of the bandwidth and 14 of 108 SMs.
  EXPECT_GT(on_partition, 2 * on_whole);

  const auto summary = nlohmann::json::parse(read_file(r.dir + "/summary.json"));
  EXPECT_NE(summary.at("warnings")
                .dump()
                .find("is a MIG partition of A100-SXM: predicted and scored as 14 of its 108 SMs"),
            std::string::npos)
      << summary.at("warnings").dump();
}

// A workstation with an H100 (device 0) and an A100 (device 1).
RunOptions two_models(const char* which) {
  RunOptions o;
  o.argv = {program("two_devices"), which};
  o.env["FAKE_CUDA_DEVICE"] = "H100,A100";
  o.env["PM2LAT_TARGETS"] = "L4";
  return o;
}

// Measured by CUPTI, whose records say the device, and without CUPTI by CUDA events, which
// must be created in the context of the stream they time (an event of device 0's context
// cannot time a launch on device 1's stream).
class OwnGpuTiming : public ::testing::TestWithParam<const char*> {};
INSTANTIATE_TEST_SUITE_P(OwnGpu, OwnGpuTiming, ::testing::Values("Cupti", "Events"),
                         [](const auto& info) { return std::string(info.param); });

TEST_P(OwnGpuTiming, EachKernelIsScoredAgainstTheGpuOfTheDeviceItRanOn) {
  RunOptions o = two_models("both");
  if (std::string(GetParam()) == "Events") o.env["PM2LAT_CUPTI"] = "off";
  const RunResult r = run(o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Records records = read_records(r.dir + "/records.jsonl");
  ASSERT_EQ(records.kernels.size(), 6u) << r.err;
  // The header names device 0's GPU; the targets hold both GPUs, after the requested one.
  EXPECT_EQ(records.header.at("gpu"), "H100-SXM");
  EXPECT_EQ(records.header.at("targets"), (nlohmann::json{"L4", "H100-SXM", "A100-SXM"}));
  for (const auto& k : records.kernels) {
    const std::string name = k.at("name");
    const int device = name == "device_kernel_1" ? 1 : 0;
    EXPECT_EQ(k.at("device"), device) << name;
    EXPECT_EQ(k.at("gpu"), device == 1 ? "A100-SXM" : "H100-SXM") << name;
    EXPECT_FALSE(k.at("measured_us").is_null()) << name;
    for (const char* gpu : {"L4", "H100-SXM", "A100-SXM"})
      EXPECT_TRUE(k.at("predicted_us").contains(gpu)) << name << " " << gpu;
  }
  // The summary compares every measured kernel with its own GPU's prediction.
  const auto summary = nlohmann::json::parse(read_file(r.dir + "/summary.json"));
  EXPECT_EQ(summary.at("gpu"), "H100-SXM, A100-SXM");
  std::uint64_t compared = 0;
  for (const auto& f : summary.at("families")) {
    if (f.contains("source_error")) compared += f.at("source_error").at("kernels").get<int>();
  }
  EXPECT_EQ(compared, 6u);
}

TEST(OwnGpu, AProgramOnItsSecondDeviceIsScoredAgainstThatDevicesGpu) {
  const RunResult r = run(two_models("second"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Records records = read_records(r.dir + "/records.jsonl");
  ASSERT_EQ(records.kernels.size(), 3u) << r.err;
  for (const auto& k : records.kernels) {
    EXPECT_EQ(k.at("device"), 1);
    EXPECT_EQ(k.at("gpu"), "A100-SXM") << "not device 0's H100";
  }
  EXPECT_EQ(nlohmann::json::parse(read_file(r.dir + "/summary.json")).at("gpu"), "A100-SXM")
      << "the GPU its kernels ran on";
}

}  // namespace
}  // namespace pm2lat::test
