// A program built by nvcc with -cudart shared, running on the clean-room runtime: CUDA 13
// `<<<>>>` launches (__cudaLaunchKernel with a cudaKernel_t), cudaLaunchKernel and
// cudaLaunchKernelExC are each recorded once, named by the driver and by the runtime entry
// point that led there. When the runtime reaches the driver through a path no hook covers,
// the runtime interposer records the launch and CUPTI's record is joined to it.
#include <gtest/gtest.h>

#include <map>

#include "run_program.h"

namespace pm2lat::test {
namespace {

#ifndef PM2LAT_HAVE_NVCC_PROGRAM
TEST(RuntimeLaunches, NeedsNvcc) { GTEST_SKIP() << "nvcc could not build test programs here"; }
#else

struct RuntimeMode {
  const char* name;
  std::map<std::string, std::string> env;
  bool private_path;
};

void PrintTo(const RuntimeMode& m, std::ostream* os) { *os << m.name; }

class RuntimeLaunches : public ::testing::TestWithParam<RuntimeMode> {};

TEST_P(RuntimeLaunches, EachLaunchIsRecordedOnceWithItsRuntimeEntryPoint) {
  const RunResult r = run({{program("runtime_launches")}, GetParam().env});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Records records = read_records(r.dir + "/records.jsonl");
  const FakeLog fake = read_fake_log(r.dir + "/fake.log");
  ASSERT_EQ(fake.executions.size(), 4u);
  ASSERT_EQ(records.kernels.size(), 4u);

  std::map<std::string, std::vector<nlohmann::json> > by_via;
  for (const auto& k : records.kernels) {
    EXPECT_TRUE(k.at("measured_us").is_number()) << k.dump();
    EXPECT_FALSE(has_note(k, "unhooked")) << k.dump();
    by_via[k.at("runtime").value("via", "")].push_back(k);
  }
  // <<<>>> in CUDA 13: the mangled device function names, through __cudaLaunchKernel.
  ASSERT_EQ(by_via["__cudaLaunchKernel"].size(), 2u);
  EXPECT_EQ(by_via["__cudaLaunchKernel"][0].at("name"), "_Z12scale_kernelPfif");
  EXPECT_EQ(by_via["__cudaLaunchKernel"][0].at("grid"), (nlohmann::json{40, 1, 1}));
  EXPECT_EQ(by_via["__cudaLaunchKernel"][1].at("name"), "_Z17vector_add_kernelILi4EEvPfPKfi");
  EXPECT_EQ(by_via["__cudaLaunchKernel"][1].at("grid"), (nlohmann::json{12, 2, 1}));
  ASSERT_EQ(by_via["cudaLaunchKernel"].size(), 1u);
  EXPECT_EQ(by_via["cudaLaunchKernel"][0].at("name"), "_Z12scale_kernelPfif");
  ASSERT_EQ(by_via["cudaLaunchKernelExC"].size(), 1u);
  EXPECT_EQ(by_via["cudaLaunchKernelExC"][0].at("cluster"), (nlohmann::json{2, 1, 1}));
  EXPECT_EQ(by_via["cudaLaunchKernelExC"][0].at("runtime").at("api"), "cuLaunchKernelEx");
  // cudaMemcpyDefault's copies, each in the direction its pointers give, as CUPTI records them.
  const auto summary = nlohmann::json::parse(read_file(r.dir + "/summary.json"));
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t> > copies;
  for (const auto& t : summary.at("transfers"))
    copies[t.at("kind")] = {t.at("count").get<std::uint64_t>(), t.at("bytes").get<std::uint64_t>()};
  EXPECT_EQ(copies,
            (decltype(copies){{"device_to_host", {1, 4096}}, {"host_to_device", {1, 4096}}}))
      << summary.dump();
  for (const auto& k : by_via["__cudaLaunchKernel"]) {
    if (GetParam().private_path) {
      EXPECT_TRUE(has_note(k, "runtime_only")) << k.dump();
    } else {
      EXPECT_EQ(k.at("runtime").at("api"), "cuLaunchKernel") << k.dump();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Modes, RuntimeLaunches,
    ::testing::Values(
        RuntimeMode{"CuptiCallbacks", {}, false},
        RuntimeMode{"Hooks", {{"PM2LAT_LAUNCH_SOURCE", "hooks"}}, false},
        RuntimeMode{"PrivateDriverPathWithCallbacks", {{"FAKE_CUDART_PRIVATE_LAUNCH", "1"}}, true},
        RuntimeMode{"PrivateDriverPathWithHooks",
                    {{"FAKE_CUDART_PRIVATE_LAUNCH", "1"}, {"PM2LAT_LAUNCH_SOURCE", "hooks"}},
                    true}),
    [](const ::testing::TestParamInfo<RuntimeMode>& info) { return std::string(info.param.name); });

#endif

}  // namespace
}  // namespace pm2lat::test
