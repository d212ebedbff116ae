// The whole-model replay (two timelines, host waits, training timed as forward then
// backward), the host dispatch it charges, and the per-operator comparison of `eval models`.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "pm2lat/calibrate/neusight_models.h"
#include "pm2lat/reports/eval/host_dispatch.h"
#include "pm2lat/reports/eval/model_eval.h"
#include "pm2lat/reports/eval/model_replay.h"
#include "support/test_support.h"

namespace pm2lat::reports {
namespace {

using calibrate::ModelOpRow;
using calibrate::ModelRun;
using calibrate::TensorDims;

ModelOpRow vec_row(const char* kind, const char* cls, TensorDims shape) {
  ModelOpRow r;
  r.op_kind = kind;
  r.op_class = cls;
  r.inputs = {shape};
  r.output = shape;
  r.dtype = "fp32";
  return r;
}

// Every kernel takes the same fixed time: the timeline arithmetic alone is under test.
OperatorForecast fixed_kernels(double us) {
  return [us](const ObservedOperator& op, std::vector<Prediction>& out) {
    for (const auto& k : op.kernels) {
      if (!k.has_kernel) continue;
      Prediction p;
      p.us = us;
      out.push_back(p);
    }
  };
}

TEST(StepReplay, AHostThatReadsACountWaitsForTheGpu) {
  Predictor p = Predictor::from_directory(PM2LAT_SHIPPED_PROFILES);
  const TargetId t = p.add_target("V100-PCIE-32GB");
  const StepReplay replay(p, t);
  ModelRun run;
  run.mode = "inf";
  run.ops = {vec_row("gelu", "elementwise", {4096, 4096}),
             vec_row("gelu", "elementwise", {4096, 4096})};
  const double d = replay.dispatch_us(lower(run.ops[0], Pass::kForward)[0]);
  ASSERT_GT(d, 0);
  // Two 100 µs kernels queued back to back: the host runs ahead.
  EXPECT_NEAR(replay.replay(run, fixed_kernels(100)).predicted_ms, (d + 200) / 1e3, 1e-9);
  // A count between them: the host waits for the first kernel before it dispatches on.
  ModelOpRow count = vec_row("count_nonzero", "reduction", {4096, 4096});
  count.output.reset();
  run.ops.insert(run.ops.begin() + 1, count);
  const double dc = replay.dispatch_us(lower(count, Pass::kForward)[0]);
  const double waited = std::max(d + 100, d + dc) + 100;  // the count's kernel ends here
  EXPECT_NEAR(replay.replay(run, fixed_kernels(100)).predicted_ms, (waited + d + 100) / 1e3, 1e-9);
}

TEST(StepReplay, TrainingTimesTheForwardAndTheBackwardEachFromAnIdleGpu) {
  Predictor p = Predictor::from_directory(PM2LAT_SHIPPED_PROFILES);
  const TargetId t = p.add_target("V100-PCIE-32GB");
  const StepReplay replay(p, t);
  ModelRun run;
  run.mode = "train";
  ModelOpRow fc;
  fc.op_kind = "linear";
  fc.op_class = "gemm";
  fc.repeat = 2;
  fc.B = 1;
  fc.M = 4096;
  fc.N = 1024;
  fc.K = 1024;
  fc.inputs = {TensorDims{4096, 1024}};
  fc.output = TensorDims{4096, 1024};
  run.ops = {fc};
  const ReplayedStep step = replay.replay(run, fixed_kernels(1000));
  // Forward: two layers of one GEMM. Backward: two layers of dgrad, wgrad, bias gradient and
  // two accumulations (weight, bias), every kernel 1 ms.
  EXPECT_NEAR(step.forward_ms, 2.0 + replay.dispatch_us(lower(fc, Pass::kForward)[0]) / 1e3, 1e-9);
  EXPECT_GT(step.backward_ms, 10.0);
  EXPECT_LT(step.backward_ms, 10.5);
  EXPECT_DOUBLE_EQ(step.predicted_ms, step.forward_ms + step.backward_ms);
  EXPECT_NEAR(step.kernel_ms.at("linear.bwd.wgrad.nt"), 2.0, 1e-9);
  EXPECT_NEAR(step.kernel_ms.at("linear.fwd.tn"), 2.0, 1e-9);
  EXPECT_NEAR(step.kernel_total_ms, 12.0, 1e-9);
}

// Profiles built in memory: two GPUs whose call tables hold small calls, one whose table
// holds large shapes only.
Profile call_profile(const char* device, std::map<std::string, CallOverhead> overheads,
                     const std::vector<std::pair<std::string, double>>& points) {
  Profile p;
  p.device = device;
  p.basis = TimeBasis::kCall;
  p.call_overhead = std::move(overheads);
  for (const auto& [op, bytes] : points) {
    VectorFit f;
    f.op = op;
    f.c0 = 1;
    f.c_byte = 1;
    p.vector_fits.push_back(f);
    VectorPoint v;
    v.fit = static_cast<std::int32_t>(p.vector_fits.size() - 1);
    v.rows = 1;
    v.cols = static_cast<std::int64_t>(bytes / 4);
    v.bytes = bytes;
    v.us = 40;
    p.vector_points.push_back(v);
  }
  return p;
}

TEST(HostDispatch, TakesWhatATableMeasuredAndTheTypicalHostElse) {
  std::vector<Profile> profiles;
  profiles.push_back(call_profile("V100-PCIE-32GB", {{"add", {30, 15}}}, {{"add", 4096}}));
  profiles.push_back(
      call_profile("T4", {{"add", {30, 25}}, {"mul", {30, 10}}}, {{"add", 4096}, {"mul", 4096}}));
  // Large shapes only: its intercept is no measurement of the dispatch.
  profiles.push_back(call_profile("L4", {{"add", {600, 1}}}, {{"add", 1e9}}));
  Predictor p(
      DeviceCatalogue::load(std::filesystem::path(PM2LAT_SHIPPED_PROFILES) / "devices.json"),
      std::move(profiles));
  const HostDispatch l4(p, p.add_target("L4"));
  EXPECT_DOUBLE_EQ(l4.launch_us("add"), 20.0);  // the median of the two measurements
  EXPECT_DOUBLE_EQ(l4.launch_us("mul"), 10.0);
  const HostDispatch v100(p, p.add_target("V100-PCIE-32GB"));
  EXPECT_DOUBLE_EQ(v100.launch_us("add"), 15.0);  // its own
  // Its host is 0.75x the typical one on `add`: the pooled `mul` scales with it.
  EXPECT_DOUBLE_EQ(v100.launch_us("mul"), 7.5);
  EXPECT_GT(v100.launch_us("softmax"), 0);  // an operator no table measured: the typical one
}

TEST(ModelEval, ComparesEachOperatorGroupWithTheFilesLabels) {
  const auto dir = test::write_toy_model_runs("model_truth");
  Predictor p = Predictor::from_directory(PM2LAT_SHIPPED_PROFILES);
  const auto runs = calibrate::load_model_runs(dir);
  const auto r = eval_models(p, runs);
  ASSERT_EQ(r.runs.size(), 1u);
  const auto& run = r.runs[0];
  ASSERT_TRUE(run.measured_fw_ms && run.measured_bw_ms);
  EXPECT_DOUBLE_EQ(*run.measured_fw_ms, 7.0);
  EXPECT_GT(run.predicted_bw_ms, run.predicted_fw_ms);  // two GEMMs for each forward one
  const auto& fc_fwd = run.operators.at("linear.fwd");
  EXPECT_EQ(fc_fwd.calls, 2);
  EXPECT_DOUBLE_EQ(fc_fwd.labelled_ms, 2 * 0.9);
  EXPECT_GT(fc_fwd.predicted_ms, 0.5);  // a 34 GFLOP GEMM on a V100: ~2.5 ms per call
  EXPECT_LT(fc_fwd.predicted_ms, 20);
  EXPECT_DOUBLE_EQ(run.operators.at("linear.bwd").labelled_ms, 2 * 1.8);
  EXPECT_DOUBLE_EQ(run.operators.at("linear.acc").labelled_ms, 2 * 0.07);
  EXPECT_GT(run.operators.at("loss.bwd").predicted_ms, 0);
  EXPECT_GT(run.kernel_ms.at("linear.bwd.dgrad.nn"), 0);
  // Only the training run of the V100 when asked for it.
  ModelEvalOptions only;
  only.modes = {"inf"};
  EXPECT_TRUE(eval_models(p, runs, only).runs.empty());
  const auto j = model_eval_json(r, true);
  EXPECT_TRUE(j["runs"][0]["operators"].contains("elementwise.fwd"));
  EXPECT_TRUE(j["runs"][0].contains("backward"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace pm2lat::reports
