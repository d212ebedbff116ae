// What a read of the runtime against NVIDIA's CUDA 13.0 libraries found, each reproduced on
// a fake stack made as strict as the real one: where CUDA 13 installs CUPTI, a second CUPTI
// client that behaves like PyTorch's profiler (kineto), drivers older than the headers, stream
// capture that another thread's query invalidates, two copies of one library loaded the way
// Python extension modules load them, a cuBLAS that reaches cuBLASLt through an internal entry
// point, driver pointers that are not the exported symbols, CUkernel handles that cuFunc*
// calls reject, and launch paths no hook covers.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "pm2lat/record_fields.h"
#include "pm2lat/test/occurrences.h"
#include "run_program.h"

namespace pm2lat::test {
namespace {

namespace fs = std::filesystem;
namespace field = record_field;

// A library directory holding the fake stack's `libraries` under the names given.
std::string library_dir(const std::map<std::string, std::string>& links) {
  const fs::path dir = fs::path(scratch_dir()) / "lib";
  fs::create_directories(dir);
  for (const auto& [name, target] : links) {
    fs::create_symlink(fs::path(PM2LAT_FAKE_CUDA_DIR) / target, dir / name);
  }
  return dir.string();
}

std::string mode_of(const Records& r) {
  return r.header.at(field::runtime::kObject).at(field::runtime::kMode);
}

// ---- CUPTI where CUDA 13 installs it ------------------------------------------------------

TEST(RealStack, CuptiIsFoundInTheToolkitsLib64AsCuda13InstallsIt) {
  // CUDA 13 puts libcupti.so.13 in $CUDA_HOME/lib64; there is no extras/CUPTI any more.
  const std::string cuda_home = scratch_dir() + "/cuda";
  fs::create_directories(cuda_home + "/lib64");
  fs::create_symlink(fs::path(PM2LAT_FAKE_CUDA_DIR) / "libcupti.so.13",
                     cuda_home + "/lib64/libcupti.so.13");
  RunOptions options{{program("many_threads"), "2", "20"},
                     {{"LD_LIBRARY_PATH", library_dir({{"libcuda.so.1", "libcuda.so.1"}})},
                      {"CUDA_HOME", cuda_home}}};
  options.without_loader_cache = true;
  const RunResult r = run(options);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Records records = read_records(r.dir + "/records.jsonl");
  EXPECT_EQ(mode_of(records), "cupti-callbacks+cupti-activity") << r.err;
  for (const auto& k : records.kernels) EXPECT_TRUE(k.at(field::kMeasuredUs).is_number());
}

TEST(RealStack, CuptiIsFoundAsLibcupti12OnTheLibraryPath) {
  // CUDA 12 wheels (nvidia-cuda-cupti-cu12) ship libcupti.so.12 only.
  RunOptions options{{program("many_threads"), "2", "20"},
                     {{"LD_LIBRARY_PATH", library_dir({{"libcuda.so.1", "libcuda.so.1"},
                                                       {"libcupti.so.12", "libcupti.so.13"}})}}};
  options.without_loader_cache = true;
  const RunResult r = run(options);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(mode_of(read_records(r.dir + "/records.jsonl")), "cupti-callbacks+cupti-activity")
      << r.err;
}

// ---- drivers older than the headers --------------------------------------------------------

// An r535 driver (CUDA 12.2) has no cuEventElapsedTime_v2 (12.8), cuFuncGetName (12.3),
// cuStreamGetCaptureInfo_v3 (12.3) nor cuFuncGetParamInfo (12.4); asking cuGetProcAddress for
// a version above the driver's is an error.
constexpr const char* kR535Driver = "12020";

TEST(RealStack, AnOlderDriverStillTimesLaunchesAndFollowsCapturesInHookMode) {
  const RunResult r = run({{program("graph_replay"), "10"},
                           {{"FAKE_CUDA_DRIVER_VERSION", kR535Driver}, {"PM2LAT_CUPTI", "off"}}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Records records = read_records(r.dir + "/records.jsonl");
  EXPECT_EQ(mode_of(records), "hooks+cuda-events");
  // The eager launch is timed with events; every replayed node is described by its capture.
  ASSERT_EQ(records.kernels.size(), 31u) << r.err;
  std::size_t replays = 0;
  for (const auto& k : records.kernels) {
    if (has_note(k, "graph_replay")) {
      ++replays;
    } else {
      EXPECT_TRUE(k.at(field::kMeasuredUs).is_number()) << k.dump();
    }
  }
  EXPECT_EQ(replays, 30u);
  // What the driver cannot give is said once.
  EXPECT_EQ(test::occurrences(r.err, "driver 12.2"), 1u) << r.err;
  EXPECT_NE(r.err.find("cuFuncGetName"), std::string::npos) << r.err;
}

TEST(RealStack, AnOlderDriverWithCuptiGetsItsNamesFromCupti) {
  const RunResult r =
      run({{program("graph_replay"), "10"},
           {{"FAKE_CUDA_DRIVER_VERSION", kR535Driver}, {"PM2LAT_LAUNCH_SOURCE", "hooks"}}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Records records = read_records(r.dir + "/records.jsonl");
  EXPECT_EQ(mode_of(records), "hooks+cupti-activity");
  ASSERT_EQ(records.kernels.size(), 31u);
  std::map<std::string, int> by_name;
  for (const auto& k : records.kernels) {
    ++by_name[k.at(field::kName)];
    EXPECT_TRUE(k.at(field::kMeasuredUs).is_number()) << k.dump();
    EXPECT_FALSE(has_note(k, "unhooked")) << k.dump();
  }
  EXPECT_EQ(by_name["graph_reduce"], 11);
  EXPECT_EQ(by_name["graph_gemm_like"], 10);
}

// ---- stream capture and the worker's queries -------------------------------------------------

TEST(RealStack, TimingWithEventsNeverInvalidatesAnotherThreadsGlobalCapture) {
  const RunResult r =
      run({{program("capture_while_timed"), "4", "100"}, {{"PM2LAT_CUPTI", "off"}}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("capture ok"), std::string::npos);
  const Records records = read_records(r.dir + "/records.jsonl");
  EXPECT_EQ(mode_of(records), "hooks+cuda-events");
  std::size_t eager = 0;
  for (const auto& k : records.kernels) {
    if (k.at(field::kName) != "eager_busy_kernel") continue;
    ++eager;
    EXPECT_TRUE(k.at(field::kMeasuredUs).is_number()) << k.dump();
  }
  EXPECT_EQ(eager, 4u);
}

// ---- a second CUPTI client: torch.profiler started and stopped mid-run ----------------------

TEST(RealStack, AProfilerStartedMidRunGetsItsRecordsAndTimingGoesOn) {
  const RunResult r = run({{program("kineto_like_profiler"), "20", "30", "40"}, {}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The profiler got every kernel it profiled, in buffers it allocated, of kinds it enabled.
  EXPECT_NE(r.out.find("profiler kernels 30 unknown_buffers 0 unexpected_records 0"),
            std::string::npos)
      << r.out;
  const Records records = read_records(r.dir + "/records.jsonl");
  std::map<std::string, int> measured;
  for (const auto& k : records.kernels) {
    if (k.at(field::kMeasuredUs).is_number()) ++measured[k.at(field::kName)];
  }
  EXPECT_EQ(measured["before_profiler_kernel"], 20);
  EXPECT_EQ(measured["profiled_kernel"], 30);
  EXPECT_EQ(measured["after_profiler_kernel"], 40);
  EXPECT_EQ(test::occurrences(r.err, "another CUPTI client"), 1u) << r.err;
}

// ---- two copies of a library, loaded the way Python extension modules are -------------------

TEST(RealStack, EachModulesCallsReachItsOwnCopyOfALibraryLoadedTwice) {
  const RunResult r = run({{program("two_library_copies"), "3"}, {}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("cublas12 gemms 3 cublas13 gemms 3"), std::string::npos) << r.out;
  // And both modules' GEMMs carry their call's context (k = 128 for the first, 64 for the
  // second).
  const Records records = read_records(r.dir + "/records.jsonl");
  std::map<std::int64_t, int> by_k;
  for (const auto& k : records.kernels) {
    ASSERT_TRUE(k.contains(field::kOp)) << k.dump();
    ++by_k[k.at(field::kOp).at(field::op::kK).get<std::int64_t>()];
  }
  EXPECT_EQ(by_k[128], 3);
  EXPECT_EQ(by_k[64], 3);
}

TEST(RealStack, RtldDefaultFromALocallyLoadedModuleStillFindsItsOwnDependencies) {
  const RunResult r = run({{program("two_library_copies"), "1"}, {}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("rtld_default cublas12 1 cublas13 1"), std::string::npos) << r.out;
}

// ---- cuBLAS reaches cuBLASLt through internal entry points --------------------------------

TEST(RealStack, GemmsCublasRunsOnCublasLtCarryTheirConfigurationFromTheKernel) {
  const RunResult r = run({{program("library_calls")}, {}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Records records = read_records(r.dir + "/records.jsonl");
  int checked = 0;
  for (const auto& k : records.kernels) {
    if (!k.contains(field::kOp) || k.at(field::kFamily) != "gemm") continue;
    const auto& op = k.at(field::kOp);
    const std::string api = op.at(field::op::kName);
    if (api == "cublasGemmEx") {
      // nvjet_tst_128x256_64x4_1x2_...: a 128x256 tile, 4 stages, no split-K.
      EXPECT_EQ(op.at(field::op::kAlgoTile), (nlohmann::json{128, 256})) << k.dump();
      EXPECT_EQ(op.at(field::op::kAlgoStages), 4) << k.dump();
      EXPECT_EQ(op.at(field::op::kAlgoSplitK), 1) << k.dump();
      ++checked;
    } else if (api == "cublasGemmStridedBatchedEx") {
      // sm90_xmma_gemm_f16f16_..._tilesize128x128x64...: batch 8 on grid z.
      EXPECT_EQ(op.at(field::op::kAlgoTile), (nlohmann::json{128, 128})) << k.dump();
      EXPECT_EQ(op.at(field::op::kAlgoSplitK), 1) << k.dump();
      ++checked;
    } else if (api == "cublasLtMatmul" && op.at(field::op::kDtype) == "bf16") {
      // Called directly with an algorithm: what it said (split-K 4) stands.
      EXPECT_EQ(op.at(field::op::kAlgoSplitK), 4) << k.dump();
      ++checked;
    } else if (api == "cublasLtMatmul") {
      // The FP8 call without an algorithm: what the heuristic's kernel states (no split-K).
      EXPECT_EQ(op.at(field::op::kAlgoTile), (nlohmann::json{128, 128})) << k.dump();
      EXPECT_EQ(op.at(field::op::kAlgoSplitK), 1) << k.dump();
      ++checked;
    }
  }
  EXPECT_EQ(checked, 4);
}

// ---- CUkernel handles and cuFunc* calls ---------------------------------------------------------

TEST(RealStack, InCallbackModeNoHandleIsAskedAboutWithTheWrongKindOfCall) {
  const RunResult r = run({{program("driver_launch_paths")}, {}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const FakeLog fake = read_fake_log(r.dir + "/fake.log");
  for (const auto& [api, n] : fake.misuse) ADD_FAILURE() << api << " called " << n << " times";
  const Records records = read_records(r.dir + "/records.jsonl");
  EXPECT_EQ(mode_of(records), "cupti-callbacks+cupti-activity");
  bool library_kernel = false, triton = false;
  for (const auto& k : records.kernels) {
    if (k.at(field::kName) == "path_library_kernel") {
      // A CUkernel launched as a CUfunction: name, registers and shared memory from CUPTI.
      library_kernel = true;
      EXPECT_EQ(k.at(field::kRegs), 32) << k.dump();
      EXPECT_EQ(k.at(field::kGrid), (nlohmann::json{7, 1, 1})) << k.dump();
    }
    if (k.at(field::kName) == "triton_poi_fused_add_0") {
      // A CUfunction from cuModuleGetFunction: its parameters are still read.
      triton = true;
      const auto args = k.at(field::runtime::kObject).at(field::runtime::kArgs);
      EXPECT_EQ(args.back(), 4096) << k.dump();
    }
  }
  EXPECT_TRUE(library_kernel);
  EXPECT_TRUE(triton);
}

// ---- cuGetProcAddress pointers that are not the exported symbols -----------------------------

TEST(RealStack, DriverPointersThatAreNotItsExportedSymbolsAreStillHooked) {
  const RunResult r =
      run({{program("driver_launch_paths")},
           {{"FAKE_CUDA_PROC_TRAMPOLINES", "1"}, {"PM2LAT_LAUNCH_SOURCE", "hooks"}}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Records records = read_records(r.dir + "/records.jsonl");
  EXPECT_EQ(mode_of(records), "hooks+cupti-activity");
  std::map<std::string, std::string> api;
  for (const auto& k : records.kernels) {
    EXPECT_FALSE(has_note(k, "unhooked")) << k.dump();
    const auto& rt = k.at(field::runtime::kObject);
    if (rt.contains(field::runtime::kApi)) api[k.at(field::kName)] = rt.at(field::runtime::kApi);
  }
  EXPECT_EQ(api["path_getproc_default"], "cuLaunchKernel");
  EXPECT_EQ(api["path_getproc_ptds"], "cuLaunchKernel_ptsz");
  EXPECT_EQ(api["path_getproc_ex_ptds"], "cuLaunchKernelEx_ptsz");
  EXPECT_EQ(api["path_resolver_self"], "cuLaunchKernel");
  EXPECT_EQ(api["path_legacy_getproc"], "cuLaunchKernel");
}

// ---- CUDA events, as many as launches need ----------------------------------------------------

TEST(RealStack, EventTimingCreatesEventsAsLaunchesNeedThemWithinABound) {
  constexpr int kThreads = 8;
  constexpr int kLaunches = 200;
  const RunResult r =
      run({{program("many_threads"), std::to_string(kThreads), std::to_string(kLaunches)},
           {{"PM2LAT_CUPTI", "off"}}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Records records = read_records(r.dir + "/records.jsonl");
  EXPECT_EQ(mode_of(records), "hooks+cuda-events");
  ASSERT_EQ(records.kernels.size(), std::size_t(kThreads * kLaunches));
  for (const auto& k : records.kernels) EXPECT_TRUE(k.at(field::kMeasuredUs).is_number());
  // At most a pair per launch in flight, never more than a pair per launch, within the
  // process-wide bound (EventTimer::kMaxPairs pairs).
  const FakeLog fake = read_fake_log(r.dir + "/fake.log");
  EXPECT_GT(fake.events_created, 0u);
  EXPECT_LE(fake.events_created, std::uint64_t(2 * kThreads * kLaunches));
  EXPECT_LE(fake.events_created, 2u * 4096u);
}

// ---- launch paths no hook covers ------------------------------------------------------------

// A cooperative multi-device launch, a graph built node by node, a graph node changed in its
// executable: recorded from CUPTI alone, with all CUPTI says, and marked unhooked.
void expect_unhooked_paths_recorded_completely(const std::map<std::string, std::string>& env) {
  const RunResult r = run({{program("unhooked_graph_paths"), "3"}, env});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Records records = read_records(r.dir + "/records.jsonl");
  const FakeLog fake = read_fake_log(r.dir + "/fake.log");
  ASSERT_EQ(records.kernels.size(), fake.executions.size());
  std::map<std::string, std::vector<nlohmann::json>> by_name;
  for (const auto& k : records.kernels) {
    // Complete: what ran, its geometry, its measurement.
    EXPECT_TRUE(k.at(field::kMeasuredUs).is_number()) << k.dump();
    EXPECT_GT(k.at(field::kRegs).get<int>(), 0) << k.dump();
    by_name[k.at(field::kName)].push_back(k);
  }
  ASSERT_EQ(by_name["multi_device_kernel"].size(), 1u);
  const auto& multi = by_name["multi_device_kernel"][0];
  EXPECT_TRUE(has_note(multi, "unhooked")) << multi.dump();
  EXPECT_TRUE(has_note(multi, "cooperative")) << multi.dump();
  EXPECT_EQ(multi.at(field::kGrid), (nlohmann::json{4, 1, 1}));

  ASSERT_EQ(by_name["explicit_node_kernel"].size(), 3u);
  for (const auto& k : by_name["explicit_node_kernel"]) {
    EXPECT_TRUE(has_note(k, "unhooked")) << k.dump();
    EXPECT_TRUE(has_note(k, "graph_replay")) << k.dump();
    EXPECT_EQ(k.at(field::kGrid), (nlohmann::json{8, 1, 1}));
  }

  // The first replay ran the captured launch; after the change, the new one, which no hook saw.
  const auto& updated = by_name["captured_then_updated_kernel"];
  ASSERT_EQ(updated.size(), 4u);
  int as_captured = 0, changed = 0;
  for (const auto& k : updated) {
    if (k.at(field::kGrid) == nlohmann::json{2, 1, 1}) {
      ++as_captured;
      EXPECT_FALSE(has_note(k, "unhooked")) << k.dump();
    } else {
      ++changed;
      EXPECT_EQ(k.at(field::kGrid), (nlohmann::json{16, 1, 1})) << k.dump();
      EXPECT_TRUE(has_note(k, "unhooked")) << k.dump();
    }
  }
  EXPECT_EQ(as_captured, 1);
  EXPECT_EQ(changed, 3);
  const auto summary = nlohmann::json::parse(read_file(r.dir + "/summary.json"));
  EXPECT_EQ(summary.at("counters").at("unhooked"), 1 + 3 + 3);
}

TEST(RealStack, LaunchPathsNoHookCoversAreRecordedCompletelyAndSayUnhooked) {
  expect_unhooked_paths_recorded_completely({});
}

TEST(RealStack, LaunchPathsNoHookCoversAreRecordedCompletelyAndSayUnhookedInHookMode) {
  expect_unhooked_paths_recorded_completely({{"PM2LAT_LAUNCH_SOURCE", "hooks"}});
}

}  // namespace
}  // namespace pm2lat::test
