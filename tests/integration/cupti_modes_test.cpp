// What the shim does when it cannot have CUPTI: another tool holds the subscriber slot (a
// profiler, Nsight), CUPTI fails to start, or the GPU profiles are corrupt. The program must
// run exactly as without the shim, and the user is told once.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "pm2lat/test/occurrences.h"
#include "run_program.h"

namespace pm2lat::test {
namespace {

TEST(CuptiModes, WhenAnotherToolOwnsCuptiTheShimPredictsOnlyAndEmitsNvtx) {
  const RunResult r =
      run({{program("cupti_owner"), "20"},
           {{"NVTX_INJECTION64_PATH", std::string(PM2LAT_FAKE_CUDA_DIR) + "/libfake_nvtx_tool.so"},
            {"FAKE_NVTX_LOG", "nvtx.log"}}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The program launches 20 kernels plus the probes it needed to see predictions appear.
  int probes = -1;
  ASSERT_EQ(std::sscanf(r.out.c_str(), "probes %d", &probes), 1) << r.out;
  const std::size_t launches = 20 + static_cast<std::size_t>(probes);
  // The program's own CUPTI client saw every launch: the shim took nothing from it.
  EXPECT_NE(r.out.find("own callbacks " + std::to_string(launches)), std::string::npos) << r.out;
  EXPECT_EQ(test::occurrences(r.err, "CUPTI is in use by test-profiler"), 1u) << r.err;

  const Records records = read_records(r.dir + "/records.jsonl");
  EXPECT_EQ(records.header.at("runtime").at("mode"), "hooks+predict-only");
  ASSERT_EQ(records.kernels.size(), launches);
  std::map<std::string, double> predicted;
  for (const auto& k : records.kernels) {
    EXPECT_TRUE(k.at("measured_us").is_null()) << k.dump();
    EXPECT_TRUE(has_note(k, "predict_only")) << k.dump();
    predicted[k.at("name")] = k.at("predicted_us").at("A100-SXM").get<double>();
  }

  // Every launch is an NVTX range in domain pm2lat, named after its kernel; once the worker
  // has predicted a kernel, its ranges carry that prediction as payload.
  std::istringstream nvtx(read_file(r.dir + "/nvtx.log"));
  std::string line;
  int domains = 0, pushes = 0, with_payload = 0;
  while (std::getline(nvtx, line)) {
    std::istringstream words(line);
    std::string kind, domain, target, kernel, payload;
    words >> kind >> domain;
    if (kind == "domain" && domain == "pm2lat") ++domains;
    if (kind != "push") continue;
    ASSERT_EQ(domain, "pm2lat") << line;
    words >> target >> kernel >> payload;
    EXPECT_EQ(target, "A100:") << line;
    ASSERT_EQ(predicted.count(kernel), 1u) << line;
    ++pushes;
    if (payload != "none") {
      ++with_payload;
      EXPECT_NEAR(std::stod(payload), predicted[kernel], 1e-6 * predicted[kernel] + 1e-6) << line;
    }
  }
  EXPECT_EQ(domains, 1);
  EXPECT_EQ(pushes, static_cast<int>(launches));
  // The second half was launched after predictions for both kernels reached NVTX.
  EXPECT_GE(with_payload, 10 + 2);
}

TEST(CuptiModes, ACuptiThatFailsToStartFallsBackToEvents) {
  const RunResult r = run({{program("driver_launch_paths")}, {{"FAKE_CUPTI_FAIL_INIT", "1"}}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Records records = read_records(r.dir + "/records.jsonl");
  EXPECT_EQ(records.header.at("runtime").at("mode"), "hooks+cuda-events");
  for (const auto& k : records.kernels) EXPECT_TRUE(k.at("measured_us").is_number());
  EXPECT_EQ(test::occurrences(r.err, "CUPTI unavailable"), 1u) << r.err;
}

TEST(CuptiModes, ACorruptProfileIsOneClearErrorAndTheProgramIsUnaffected) {
  namespace fs = std::filesystem;
  const fs::path profiles = scratch_dir() + "/profiles";
  fs::copy(PM2LAT_TEST_PROFILE_DIR, profiles, fs::copy_options::recursive);
  std::ofstream(profiles / "H100-SXM.broken.json")
      << "{\"schema\": \"pm2lat.profile\", \"version\": 1, \"device\": ";

  const RunResult clean = run({{program("driver_launch_paths")}, {}});
  const RunResult r =
      run({{program("driver_launch_paths")}, {{"PM2LAT_PROFILES", profiles.string()}}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, clean.out);  // the program's own output is the same
  EXPECT_EQ(test::occurrences(r.err, "pm2lat:"), 1u) << r.err;
  EXPECT_NE(r.err.find("H100-SXM.broken.json"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no predictions"), std::string::npos) << r.err;
  // Still measured and recorded, without predictions.
  const Records records = read_records(r.dir + "/records.jsonl");
  ASSERT_FALSE(records.kernels.empty());
  for (const auto& k : records.kernels) {
    EXPECT_TRUE(k.at("measured_us").is_number());
    EXPECT_TRUE(k.at("predicted_us").empty()) << k.dump();
  }
}

}  // namespace
}  // namespace pm2lat::test
