#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "pm2lat/calibrate/run/calibration_fit.h"
#include "pm2lat/classifier.h"
#include "pm2lat/device_catalogue.h"
#include "pm2lat/predictor.h"
#include "pm2lat/profile_io.h"
#include "scratch_directory.h"
#include "simulated_backend.h"

namespace pm2lat::calibrate::run {
namespace {

namespace fs = std::filesystem;

DeviceCatalogue catalogue() {
  return DeviceCatalogue::load(std::string(PM2LAT_PROFILE_DIR) + "/devices.json");
}

fs::path fit_scratch(const std::string& name) { return test::scratch_file("fit-" + name); }

CalibrationPlan fit_plan() {
  PlanOptions o;
  o.dtypes = {DType::kFp32, DType::kBf16};
  o.layouts = {GemmLayout::kLinear, GemmLayout::kMatmul};
  o.dims = {64, 128, 256, 512, 1024, 2048, 4096};
  o.batches = {4, 16};
  o.reps = 5;
  return plan_calibration(catalogue().resolve("H100"), o);
}

RunOutcome simulated_run(const CalibrationPlan& p, test::SimulatedBackend& backend) {
  auto journal = CalibrationJournal::open(fit_scratch("run.jsonl"),
                                          JournalIdentity{backend.device_name(), {}});
  return run_calibration(p, backend, journal, {});
}

Provenance provenance() {
  Provenance p;
  p.source = "simulated H100 (tests)";
  p.tool = "pm2lat-calibrate run (test)";
  p.created = "2025-01-01";
  return p;
}

TEST(CalibrationFit, KernelTimeRemovesTheGapAndTheOtherKernels) {
  GemmRun run;
  run.kernels.push_back(
      KernelObservation{"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_"
                        "warpgroupsize1x1x1_execute_segment_k_off_kernel__"
                        "5x_cublas",
                        {2, 2, 4},
                        {256, 1, 1},
                        {1, 1, 1},
                        3.5});
  run.kernels.push_back(
      KernelObservation{"splitKreduce_kernel", {256, 1, 1}, {256, 1, 1}, {1, 1, 1}, 2.75});
  run.timing.median_us = 3.5 + 2.75 + 2 * 0.7;
  const int gi = gemm_kernel_index(run);
  ASSERT_EQ(gi, 0);
  EXPECT_NEAR(gemm_kernel_us(run, gi, 0.7), 3.5, 1e-12);
  // A gap larger than the measurement leaves the floor, not a negative time.
  EXPECT_GT(gemm_kernel_us(run, gi, 10.0), 0.0);
  GemmRun gemv;
  gemv.kernels.push_back(
      KernelObservation{"gemv2T_kernel_val", {1, 1, 1}, {128, 1, 1}, {1, 1, 1}, 2});
  EXPECT_EQ(gemm_kernel_index(gemv), -1);
}

TEST(CalibrationFit, PicksArePointsAndEverythingInformsTheFits) {
  const CalibrationPlan p = fit_plan();
  test::SimulatedBackend backend;
  const RunOutcome out = simulated_run(p, backend);
  ASSERT_TRUE(out.complete);
  const DeviceSpec spec = catalogue().resolve("H100");
  const CallSets calls = measured_calls(out.measurements, spec, launch_gap_us(out.measurements));
  EXPECT_NEAR(launch_gap_us(out.measurements), test::SimulatedBackend::kGapUs, 1e-12);
  std::size_t picks = 0;
  for (const auto& m : out.measurements) picks += m.task.kind == TaskKind::kGemm;
  EXPECT_EQ(calls.selectable.size(), picks);
  EXPECT_GT(calls.fit_only.size(), 0u);
  EXPECT_EQ(calls.skipped, 0u);

  EXPECT_EQ(gemm_dtypes(out.measurements), (std::vector<DType>{DType::kFp32, DType::kBf16}));
  std::size_t points = 0, fit_only = 0;
  for (DType t : gemm_dtypes(out.measurements)) {
    FitReport rep;
    const Profile prof = fit_profile(out.measurements, spec, provenance(), t, &rep);
    EXPECT_EQ(prof.basis, TimeBasis::kKernel);
    // One dtype per profile: the SIMT kernel for fp32, the nvjet and xmma kernels for bf16.
    EXPECT_EQ(prof.gemm_configs.size(), t == DType::kFp32 ? 1u : 2u);
    for (const auto& c : prof.gemm_configs) {
      EXPECT_EQ(c.dtype, t) << c.config;
      EXPECT_LT(c.fit_mape_pct, 0.5) << c.config;
    }
    points += prof.gemm_points.size();
    fit_only += rep.gemm_fit_only;
    // Every point is a pick of this dtype.
    std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>> pick_shapes;
    std::size_t picks_of_t = 0;
    for (const auto& m : out.measurements) {
      if (m.task.kind != TaskKind::kGemm || m.task.gemm.dtype != t) continue;
      pick_shapes.insert({m.task.gemm.batch, m.task.gemm.m, m.task.gemm.n, m.task.gemm.k});
      ++picks_of_t;
    }
    EXPECT_EQ(prof.gemm_points.size(), picks_of_t);
    for (const auto& pt : prof.gemm_points)
      EXPECT_TRUE(pick_shapes.count({pt.batch, pt.m, pt.n, pt.k}));
    // Launch overhead, in the profile's own terms and in its provenance; the memory fits.
    ASSERT_TRUE(prof.call_overhead.count("*"));
    EXPECT_NEAR(prof.call_overhead.at("*").floor_us, test::SimulatedBackend::kEmptyKernelUs + 4.0,
                1e-9);
    EXPECT_NEAR(prof.call_overhead.at("*").pre_us, 4.0, 1e-9);
    EXPECT_EQ(prof.provenance.environment.at("launch_graph_gap_us"), "0.700");
    EXPECT_GT(prof.vector_fits.size(), 0u);
  }
  EXPECT_EQ(points, picks);
  EXPECT_EQ(fit_only, calls.fit_only.size());
}

struct HeldOut {
  GemmProblem problem;
  double truth_us = 0;
  KernelRecord record;
};

// Shapes off the calibration grid, run on the simulated GPU: the kernel the heuristic picks
// and its simulated time.
std::vector<HeldOut> held_out(test::SimulatedBackend& backend, const DeviceSpec& spec) {
  std::vector<HeldOut> out;
  const std::int64_t shapes[][4] = {
      {1, 96, 96, 96},       {1, 200, 700, 3000},  {1, 320, 320, 2400},   {1, 768, 1536, 768},
      {1, 1536, 3072, 1536}, {1, 3000, 1000, 300}, {1, 1200, 2500, 2000}, {1, 3500, 3500, 200},
      {1, 100, 4000, 1500},  {4, 300, 300, 700},   {16, 768, 768, 96},    {1, 2900, 360, 3800}};
  for (DType t : {DType::kFp32, DType::kBf16}) {
    for (GemmLayout l : {GemmLayout::kLinear, GemmLayout::kMatmul}) {
      for (const auto& s : shapes) {
        if (s[0] > 1 && l != GemmLayout::kMatmul) continue;
        MeasurementTask task;
        task.kind = TaskKind::kGemm;
        task.gemm = GemmProblem{t, l, s[0], s[1], s[2], s[3]};
        task.id = gemm_task_id(TaskKind::kGemm, task.gemm);
        const TaskResult r = backend.measure(task, nullptr);
        const GemmRun& run = r.gemm.at(0);
        const int gi = gemm_kernel_index(run);
        HeldOut h;
        h.problem = task.gemm;
        h.truth_us = run.kernels.at(static_cast<std::size_t>(gi)).duration_us;
        const CallSets calls =
            measured_calls({MeasuredTask{task, r}}, spec, test::SimulatedBackend::kGapUs);
        h.record = calls.selectable.at(0).record;
        out.push_back(h);
      }
    }
  }
  return out;
}

TEST(CalibrationFit, AProfileFittedFromSimulatedTimingsPredictsThemWithinTwoPercent) {
  const CalibrationPlan p = fit_plan();
  test::SimulatedBackend backend;
  const RunOutcome out = simulated_run(p, backend);
  const DeviceSpec spec = catalogue().resolve("H100");
  std::vector<Profile> profiles;
  for (DType t : gemm_dtypes(out.measurements)) {
    const fs::path file = fit_scratch("H100-SXM.calibrated-" + std::string(to_string(t)) + ".json");
    save_profile(fit_profile(out.measurements, spec, provenance(), t), file);
    profiles.push_back(load_profile(file));  // what pm2lat eval and the runtime read
  }
  Predictor predictor(catalogue(), std::move(profiles));
  const TargetId h100 = predictor.add_target("H100");
  PredictOptions po;
  po.basis = TimeBasis::kKernel;
  po.source_device = "H100";

  std::vector<double> named, chosen;
  for (const HeldOut& h : held_out(backend, spec)) {
    // The runtime's case: the kernel and its grid are known.
    const Prediction with_kernel =
        predictor.predict(h.record, classify_kernel(h.record.launch.name), h100, po);
    const double e1 = std::fabs(with_kernel.us / h.truth_us - 1.0) * 100;
    EXPECT_LT(e1, 2.0) << gemm_task_id(TaskKind::kGemm, h.problem) << " predicted "
                       << with_kernel.us << " us, simulated " << h.truth_us << " us";
    named.push_back(e1);
    // The offline case: only the shape; the profile chooses the kernel.
    KernelRecord shape_only = h.record;
    shape_only.launch = KernelLaunch{};
    const Prediction by_shape = predictor.predict(shape_only, classify_kernel(""), h100, po);
    chosen.push_back(std::fabs(by_shape.us / h.truth_us - 1.0) * 100);
  }
  std::sort(named.begin(), named.end());
  std::sort(chosen.begin(), chosen.end());
  std::printf(
      "held-out GEMMs: %zu; error with the kernel known: median %.3f %%, max %.3f %%; "
      "kernel chosen by the profile: median %.3f %%, max %.3f %%\n",
      named.size(), named[named.size() / 2], named.back(), chosen[chosen.size() / 2],
      chosen.back());
  // Near the heuristic's boundaries the nearest calibrated shape runs another kernel than the
  // shape itself would: only the typical shape is held to 2 %.
  EXPECT_LT(chosen[chosen.size() / 2], 2.0);
}

TEST(CalibrationFit, MemoryFitsPredictHeldOutSizes) {
  const CalibrationPlan p = fit_plan();
  test::SimulatedBackend backend;
  const RunOutcome out = simulated_run(p, backend);
  const DeviceSpec spec = catalogue().resolve("H100");
  std::vector<Profile> profiles;
  profiles.push_back(fit_profile(out.measurements, spec, provenance(), DType::kBf16));
  Predictor predictor(catalogue(), std::move(profiles));
  const TargetId h100 = predictor.add_target("H100");
  PredictOptions po;
  po.source_device = "H100";
  for (const MemoryProblem& mp :
       {MemoryProblem{MemoryPattern::kCopy, DType::kFp32, 1, 3000000},
        MemoryProblem{MemoryPattern::kAdd, DType::kBf16, 1, 7000000},
        MemoryProblem{MemoryPattern::kSoftmaxRows, DType::kFp32, 5000, 1024}}) {
    MeasurementTask t;
    t.kind = TaskKind::kMemory;
    t.memory = mp;
    t.id = memory_task_id(mp);
    const TaskResult r = backend.measure(t, nullptr);
    const CallSets calls =
        measured_calls({MeasuredTask{t, r}}, spec, test::SimulatedBackend::kGapUs);
    const KernelRecord& rec = calls.memory.at(0).record;
    const Prediction pred = predictor.predict(rec, classify_kernel(rec.launch.name), h100, po);
    EXPECT_NEAR(pred.us / r.memory_kernel.duration_us, 1.0, 0.02) << t.id;
  }
}

}  // namespace
}  // namespace pm2lat::calibrate::run
