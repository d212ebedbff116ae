// pm2lat-calibrate run as a user runs it: --dry-run without a GPU, and on the fake CUDA stack
// a run stopped early, continued with the same command, and refitted from its journal.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "pm2lat/profile_io.h"
#include "scratch_directory.h"

namespace pm2lat::calibrate::run {
namespace {

namespace fs = std::filesystem;

const std::string kFakeStackDir = PM2LAT_FAKE_CUDA_DIR;

struct Result {
  int status = -1;
  std::string out;
};

Result calibrate(const std::string& args) {
  const fs::path out = test::scratch_file("cli-stdout.txt");
  const std::string cmd =
      std::string(PM2LAT_CALIBRATE_EXE) + " run " + args + " > " + out.string() + " 2>&1";
  const int rc = std::system(cmd.c_str());
  Result r;
  r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  std::ifstream in(out);
  std::stringstream ss;
  ss << in.rdbuf();
  r.out = ss.str();
  return r;
}

TEST(RunCommand, DryRunPlansAnH100WithoutAGpu) {
  const Result r = calibrate("--dry-run --device H100 --dtypes fp32,bf16 --budget 30m");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("Calibration plan for H100-SXM"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(budget 30m00s)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("exceeds the budget"), std::string::npos) << r.out;
}

TEST(RunCommand, WithoutAGpuItSaysHowToPlanAnyway) {
  const Result r = calibrate("--dry-run --cuda-lib /nonexistent/libcuda.so.1");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("--device"), std::string::npos) << r.out;
  const Result bad = calibrate("--dry-run --device H100 --dtypes fp32,int4");
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.out.find("int4"), std::string::npos) << bad.out;
}

TEST(RunCommand, AnInterruptedRunContinuesWithTheSameCommand) {
  if (!PM2LAT_CALIBRATE_GPU_BACKEND) GTEST_SKIP() << "built without the GPU backend";
  if (!fs::exists(kFakeStackDir + "/libcuda.so.1"))
    GTEST_SKIP() << "no fake CUDA stack in " << kFakeStackDir;
  const fs::path dir = test::scratch_subdirectory("cli-run");
  const std::string profile = (dir / "h100.json").string();
  const std::string args =
      "--device H100 --cuda-lib " + kFakeStackDir + "/libcuda.so.1 --cublaslt-lib " +
      kFakeStackDir + "/libcublasLt.so.13 --cupti-lib " + kFakeStackDir +
      "/libcupti.so.13 --dtypes bf16 --layouts linear --dims 64,256,1024 --reps 3 --warmup 0 "
      "--no-memory --quiet -o " +
      profile;
  const Result first = calibrate(args + " --max-tasks 5");
  ASSERT_EQ(first.status, 0) << first.out;
  EXPECT_NE(first.out.find("run the same command to continue"), std::string::npos) << first.out;
  EXPECT_TRUE(fs::exists(profile + ".journal.jsonl"));
  EXPECT_FALSE(fs::exists(profile));

  const Result second = calibrate(args);
  ASSERT_EQ(second.status, 0) << second.out;
  EXPECT_NE(second.out.find("resuming from"), std::string::npos) << second.out;
  EXPECT_NE(second.out.find("5 from the journal"), std::string::npos) << second.out;
  ASSERT_TRUE(fs::exists(profile)) << second.out;
  const Profile p = load_profile(profile);
  EXPECT_EQ(p.device, "H100-SXM");
  EXPECT_EQ(p.basis, TimeBasis::kKernel);
  EXPECT_EQ(p.provenance.tool.rfind("pm2lat-calibrate run", 0), 0u);
  EXPECT_EQ(p.provenance.environment.at("driver_version"), "13.0");
  EXPECT_EQ(p.provenance.environment.at("cublaslt_version"), "130000");
  EXPECT_GE(p.gemm_configs.size(), 2u);
  EXPECT_EQ(p.gemm_points.size(), 27u);  // one per survey shape

  // The journal alone rebuilds the same profile.
  const std::string refit = (dir / "refit.json").string();
  const Result fit = calibrate(args.substr(0, args.find(" -o ")) + " --fit-only --journal " +
                               profile + ".journal.jsonl -o " + refit);
  ASSERT_EQ(fit.status, 0) << fit.out;
  const Profile q = load_profile(refit);
  ASSERT_EQ(q.gemm_configs.size(), p.gemm_configs.size());
  for (std::size_t i = 0; i < q.gemm_configs.size(); ++i) {
    EXPECT_EQ(q.gemm_configs[i].config, p.gemm_configs[i].config);
    EXPECT_NEAR(q.gemm_configs[i].c_block_k, p.gemm_configs[i].c_block_k, 1e-9);
  }
}

}  // namespace
}  // namespace pm2lat::calibrate::run
