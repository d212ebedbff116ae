// The real backend on the fake CUDA stack: the driver API, cuBLASLt and CUPTI entry points it
// resolves, the graphs and events it times with, and everything up to the hardware boundary
// (the fake runs no kernel code; its kernels take simulated times, GEMMs by the law in
// tests/fake/common/fake_gemm_law.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "pm2lat/calibrate/run/calibration_fit.h"
#include "pm2lat/calibrate/run/driver_backend.h"
#include "pm2lat/calibrate/run/gemm_fill_planner.h"
#include "pm2lat/classifier.h"
#include "pm2lat/device_catalogue.h"
#include "pm2lat/predictor.h"
#include "pm2lat/profile_io.h"
#include "scratch_directory.h"

namespace pm2lat::calibrate::run {
namespace {

namespace fs = std::filesystem;

const std::string kFakeDir = PM2LAT_FAKE_CUDA_DIR;

DeviceCatalogue catalogue() {
  return DeviceCatalogue::load(std::string(PM2LAT_PROFILE_DIR) + "/devices.json");
}

// The H100's spec with a small L2, so that operand rotation and the L2 scrub stay small in
// host memory (the fake's device memory).
DeviceSpec spec() {
  DeviceSpec s = catalogue().resolve("H100");
  s.l2_mb = 1;
  return s;
}

class FakeStack : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!PM2LAT_CALIBRATE_GPU_BACKEND) GTEST_SKIP() << "built without the GPU backend";
    if (!fs::exists(kFakeDir + "/libcuda.so.1"))
      GTEST_SKIP() << "no fake CUDA stack in " << kFakeDir;
    options_.driver_library = kFakeDir + "/libcuda.so.1";
    options_.cublaslt_library = kFakeDir + "/libcublasLt.so.13";
    options_.cupti_library = kFakeDir + "/libcupti.so.13";
    options_.warmup_s = 0;
    backend_ = open_driver_backend(options_);
  }

  CalibrationPlan plan(std::vector<std::int64_t> dims, std::vector<DType> dtypes,
                       bool memory = false) {
    PlanOptions o;
    o.dtypes = std::move(dtypes);
    o.layouts = {GemmLayout::kLinear, GemmLayout::kMatmul};
    o.dims = std::move(dims);
    o.reps = 3;
    o.memory = memory;
    o.candidate_stride = 9;
    o.candidates = 4;
    return plan_calibration(spec(), o);
  }

  MeasurementTask gemm_task(TaskKind kind, GemmProblem p, const CalibrationPlan& pl) {
    for (const auto& t : pl.tasks) {
      if (t.kind == kind && t.gemm.dtype == p.dtype && t.gemm.layout == p.layout &&
          t.gemm.m == p.m && t.gemm.n == p.n && t.gemm.k == p.k)
        return t;
    }
    MeasurementTask t;
    t.kind = kind;
    t.gemm = p;
    t.id = gemm_task_id(kind, p);
    t.timing.launches = 8;
    t.timing.reps = 3;
    t.timing.warmup = 1;
    t.timing.rotation_sets = 2;
    return t;
  }

  DriverBackendOptions options_;
  std::unique_ptr<MeasurementBackend> backend_;
};

double sum_us(const std::vector<KernelObservation>& ks) {
  double s = 0;
  for (const auto& k : ks) s += k.duration_us;
  return s;
}

TEST_F(FakeStack, DescribesTheGpuAndItsLibraries) {
  EXPECT_EQ(backend_->device_name(), "NVIDIA H100 80GB HBM3");
  const Environment e = backend_->environment();
  EXPECT_EQ(e.at("driver_version"), "13.0");
  EXPECT_EQ(e.at("cublaslt_version"), "130000");
  EXPECT_EQ(e.at("sm_count"), "132");
  EXPECT_EQ(e.at("compute_capability"), "9.0");
  // The clock probe is a kernel that reads SM clocks: the fake runs no kernel code.
  EXPECT_EQ(e.at("sm_clock_mhz_measured"), "unavailable");
  EXPECT_EQ(catalogue().find(backend_->device_name())->name, "H100-SXM");
}

TEST_F(FakeStack, MeasuresTheLaunchOverhead) {
  const CalibrationPlan pl = plan({256}, {DType::kBf16});
  backend_->prepare(pl);
  const TaskResult r = backend_->measure(pl.tasks.front(), nullptr);
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_EQ(r.launch.kernel, "pm2lat_calibrate_empty_kernel");
  EXPECT_GT(r.launch.kernel_us, 1.0);
  // The fake device runs graph nodes back to back: no gap between them.
  EXPECT_NEAR(r.launch.graph_per_launch_us, r.launch.kernel_us, 0.01);
  EXPECT_GE(r.launch.single_call_us, r.launch.kernel_us);
  EXPECT_GT(r.launch.host_launch_us, 0);
}

TEST_F(FakeStack, GemmTimesAreTheProfiledKernelsTimes) {
  const CalibrationPlan pl = plan({256, 4096}, {DType::kBf16});
  backend_->prepare(pl);
  // A long reduction: the xmma kernel split four ways, then the split-K reduction.
  const TaskResult split = backend_->measure(
      gemm_task(TaskKind::kGemm, {DType::kBf16, GemmLayout::kLinear, 1, 256, 256, 4096}, pl),
      nullptr);
  ASSERT_TRUE(split.error.empty()) << split.error;
  ASSERT_EQ(split.gemm.size(), 1u);
  const GemmRun& s = split.gemm[0];
  ASSERT_EQ(s.kernels.size(), 2u);
  EXPECT_NE(s.kernels[0].name.find("sm90_xmma_gemm_bf16bf16"), std::string::npos);
  EXPECT_EQ(s.kernels[0].grid, (Dim3{2, 2, 4}));
  EXPECT_EQ(s.kernels[1].name, "splitKreduce_kernel");
  EXPECT_EQ(s.algo.split_k, 4);
  EXPECT_NEAR(s.timing.median_us / sum_us(s.kernels), 1.0, 0.005);
  // A large output: the Hopper kernel with a 1x2 cluster.
  const TaskResult big = backend_->measure(
      gemm_task(TaskKind::kGemm, {DType::kBf16, GemmLayout::kMatmul, 1, 4096, 4096, 256}, pl),
      nullptr);
  ASSERT_TRUE(big.error.empty()) << big.error;
  const GemmRun& b = big.gemm.at(0);
  ASSERT_EQ(b.kernels.size(), 1u);
  EXPECT_EQ(b.kernels[0].name, "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_TNT");
  EXPECT_EQ(b.kernels[0].cluster, (Dim3{1, 2, 1}));
  EXPECT_EQ(b.kernels[0].block, (Dim3{384, 1, 1}));
  EXPECT_NEAR(b.timing.median_us / sum_us(b.kernels), 1.0, 0.005);
  // Strict FP32 runs the SIMT kernel.
  const TaskResult f32 = backend_->measure(
      gemm_task(TaskKind::kGemm, {DType::kFp32, GemmLayout::kLinear, 1, 256, 256, 256}, pl),
      nullptr);
  ASSERT_TRUE(f32.error.empty()) << f32.error;
  EXPECT_TRUE(classify_kernel(f32.gemm.at(0).kernels.at(0).name).config.find("ffma") !=
              std::string::npos);
}

TEST_F(FakeStack, CandidatesAndForcedAlgorithms) {
  const CalibrationPlan pl = plan({256, 4096}, {DType::kBf16});
  backend_->prepare(pl);
  MeasurementTask cand = gemm_task(TaskKind::kGemmCandidates,
                                   {DType::kBf16, GemmLayout::kLinear, 1, 256, 256, 4096}, pl);
  cand.candidates = 4;
  const TaskResult c = backend_->measure(cand, nullptr);
  ASSERT_TRUE(c.error.empty()) << c.error;
  ASSERT_EQ(c.gemm.size(), 3u);  // ranks 1..3; the pick is the survey's
  for (std::size_t i = 0; i < c.gemm.size(); ++i) {
    EXPECT_EQ(c.gemm[i].rank, static_cast<int>(i) + 1);
    EXPECT_TRUE(c.gemm[i].error.empty()) << c.gemm[i].error;
    EXPECT_NEAR(c.gemm[i].timing.median_us / sum_us(c.gemm[i].kernels), 1.0, 0.005);
  }
  // The survey's algorithm forced on another size runs the same kernel configuration.
  const TaskResult pick = backend_->measure(
      gemm_task(TaskKind::kGemm, {DType::kBf16, GemmLayout::kLinear, 1, 256, 256, 256}, pl),
      nullptr);
  const GemmAlgo algo = pick.gemm.at(0).algo;
  const TaskResult forced = backend_->measure(
      gemm_task(TaskKind::kGemmFill, {DType::kBf16, GemmLayout::kLinear, 1, 2048, 2048, 256}, pl),
      &algo);
  ASSERT_TRUE(forced.error.empty()) << forced.error;
  EXPECT_EQ(forced.gemm.at(0).rank, -1);
  EXPECT_EQ(gemm_run_config(forced.gemm[0]), gemm_run_config(pick.gemm[0]));
  // An algorithm that cannot run the problem is refused by cublasLtMatmulAlgoCheck.
  const TaskResult simt = backend_->measure(
      gemm_task(TaskKind::kGemm, {DType::kFp32, GemmLayout::kLinear, 1, 256, 256, 256}, pl),
      nullptr);
  const GemmAlgo simt_algo = simt.gemm.at(0).algo;
  const TaskResult refused = backend_->measure(
      gemm_task(TaskKind::kGemmFill, {DType::kBf16, GemmLayout::kLinear, 1, 512, 512, 512}, pl),
      &simt_algo);
  EXPECT_NE(refused.error.find("cublasLtMatmulAlgoCheck"), std::string::npos) << refused.error;
}

TEST_F(FakeStack, MemoryKernelsAreTimedLikeTheProfilerSeesThem) {
  const CalibrationPlan pl = plan({256}, {DType::kBf16}, /*memory=*/true);
  backend_->prepare(pl);
  std::set<std::string> names;
  for (const auto& t : pl.tasks) {
    if (t.kind != TaskKind::kMemory) continue;
    const TaskResult r = backend_->measure(t, nullptr);
    ASSERT_TRUE(r.error.empty()) << t.id << ": " << r.error;
    names.insert(r.memory_kernel.name);
    EXPECT_NEAR(r.memory_timing.median_us / r.memory_kernel.duration_us, 1.0, 0.005) << t.id;
  }
  EXPECT_EQ(names, (std::set<std::string>{"pm2lat_copy_kernel_vec4",
                                          "pm2lat_vectorized_elementwise_add_f32",
                                          "pm2lat_vectorized_elementwise_add_bf16",
                                          "pm2lat_softmax_rows_f32", "pm2lat_softmax_rows_bf16"}));
}

fs::path fake_stack_scratch(const std::string& name) {
  return test::scratch_file("fake-stack-" + name);
}

TEST_F(FakeStack, AProfileFromTheFakeStackPredictsItsTimingsWithinTwoPercent) {
  const CalibrationPlan pl = plan({64, 256, 1024}, {DType::kFp32, DType::kBf16}, /*memory=*/true);
  const fs::path journal_file = fake_stack_scratch("run.jsonl");
  const JournalIdentity id{backend_->device_name(), {{"driver_version", "13.0"}}};
  {
    // Interrupted after 20 measurements...
    auto journal = CalibrationJournal::open(journal_file, id);
    RunnerOptions ro;
    ro.max_tasks = 20;
    EXPECT_FALSE(run_calibration(pl, *backend_, journal, ro).complete);
  }
  // ...and continued by another process (another backend instance).
  backend_.reset();
  backend_ = open_driver_backend(options_);
  auto journal = CalibrationJournal::open(journal_file, id);
  const RunOutcome out = run_calibration(pl, *backend_, journal, {});
  ASSERT_TRUE(out.complete);
  EXPECT_EQ(out.resumed, 20u);
  EXPECT_EQ(out.failed, 0u);

  std::vector<Profile> profiles;
  for (DType t : gemm_dtypes(out.measurements)) {
    FitReport rep;
    const fs::path file =
        fake_stack_scratch("H100-SXM.calibrated-" + std::string(to_string(t)) + ".json");
    save_profile(fit_profile(out.measurements, spec(),
                             Provenance{"fake CUDA stack", "test", "2025-01-01", {}, ""}, t, &rep),
                 file);
    EXPECT_GE(rep.gemm_configs, 1u);
    EXPECT_LT(rep.max_config_mape_pct, 1.0) << to_string(t);
    profiles.push_back(load_profile(file));
  }
  ASSERT_EQ(profiles.size(), 2u);
  Predictor predictor(catalogue(), std::move(profiles));
  const TargetId h100 = predictor.add_target("H100");
  PredictOptions po;
  po.source_device = "H100";

  // Shapes off the grid, measured on the same fake GPU.
  std::vector<double> errors;
  const std::int64_t shapes[][3] = {
      {96, 96, 96}, {200, 700, 900}, {320, 320, 1000}, {768, 1000, 200}, {1000, 1000, 1000}};
  for (DType t : {DType::kFp32, DType::kBf16}) {
    for (GemmLayout l : {GemmLayout::kLinear, GemmLayout::kMatmul}) {
      for (const auto& s : shapes) {
        const MeasurementTask task = gemm_task(TaskKind::kGemm, {t, l, 1, s[0], s[1], s[2]}, pl);
        const TaskResult r = backend_->measure(task, nullptr);
        ASSERT_TRUE(r.error.empty()) << r.error;
        const GemmRun& run = r.gemm.at(0);
        const int gi = gemm_kernel_index(run);
        ASSERT_GE(gi, 0);
        const double truth = run.kernels[static_cast<std::size_t>(gi)].duration_us;
        const CallSets calls = measured_calls({MeasuredTask{task, r}}, spec(), 0.0);
        const KernelRecord& rec = calls.selectable.at(0).record;
        const Prediction p = predictor.predict(rec, classify_kernel(rec.launch.name), h100, po);
        const double err = std::fabs(p.us / truth - 1.0) * 100;
        EXPECT_LT(err, 2.0) << task.id << ": predicted " << p.us << " us, simulated " << truth
                            << " us";
        errors.push_back(err);
      }
    }
  }
  std::sort(errors.begin(), errors.end());
  std::printf("fake stack, %zu held-out GEMMs: prediction error median %.3f %%, max %.3f %%\n",
              errors.size(), errors[errors.size() / 2], errors.back());
}

}  // namespace
}  // namespace pm2lat::calibrate::run
