#include <gtest/gtest.h>

#include "pm2lat/calibrate/run/measurement_json.h"

namespace pm2lat::calibrate::run {
namespace {

TaskResult gemm_result() {
  TaskResult r;
  r.task_id = "gemm-candidates/bf16/linear/1x4096x4096x256";
  r.kind = TaskKind::kGemmCandidates;
  r.wall_s = 0.125;
  GemmRun run;
  run.rank = 2;
  for (std::size_t i = 0; i < run.algo.data.size(); ++i)
    run.algo.data[i] = 0x0123456789abcdefull + i;
  run.algo.id = 21;
  run.algo.tile = 20;
  run.algo.stages = 11;
  run.algo.split_k = 2;
  run.algo.swizzle = 1;
  run.algo.custom = 3;
  run.algo.cluster = 4;
  run.algo.workspace_bytes = 1u << 22;
  run.kernels.push_back(
      KernelObservation{"_ZN7cutlass7Kernel2I", {32, 32, 2}, {256, 1, 1}, {1, 2, 1}, 28.188});
  run.kernels.push_back(
      KernelObservation{"splitKreduce_kernel", {65536, 1, 1}, {256, 1, 1}, {1, 1, 1}, 263.808});
  run.timing = TimingSample{28, 20, 291.996, 291.5, 0.1 + 0.2};
  r.gemm.push_back(run);
  GemmRun failed;
  failed.rank = 3;
  failed.error = "cublasLtMatmul: cublasStatus 15";
  r.gemm.push_back(failed);
  return r;
}

TEST(MeasurementJson, GemmResultsRoundTripExactly) {
  const TaskResult a = gemm_result();
  const TaskResult b = task_result_from_json(to_json_line(a));
  EXPECT_EQ(b.task_id, a.task_id);
  EXPECT_EQ(b.kind, a.kind);
  EXPECT_EQ(b.wall_s, a.wall_s);
  ASSERT_EQ(b.gemm.size(), 2u);
  EXPECT_EQ(b.gemm[0].algo.data, a.gemm[0].algo.data);
  EXPECT_EQ(b.gemm[0].algo.workspace_bytes, a.gemm[0].algo.workspace_bytes);
  EXPECT_EQ(b.gemm[0].algo.cluster, 4);
  ASSERT_EQ(b.gemm[0].kernels.size(), 2u);
  EXPECT_EQ(b.gemm[0].kernels[1].name, "splitKreduce_kernel");
  EXPECT_EQ(b.gemm[0].kernels[0].cluster, (Dim3{1, 2, 1}));
  EXPECT_EQ(b.gemm[0].kernels[1].duration_us, 263.808);
  EXPECT_EQ(b.gemm[0].timing.max_us, 0.1 + 0.2);  // doubles read back bit for bit
  EXPECT_EQ(b.gemm[1].error, a.gemm[1].error);
  EXPECT_EQ(to_json_line(b), to_json_line(a));
}

TEST(MeasurementJson, LaunchAndMemoryResultsRoundTrip) {
  TaskResult l;
  l.task_id = "launch";
  l.kind = TaskKind::kLaunch;
  l.launch = LaunchOverhead{"pm2lat_calibrate_empty_kernel", 1.8, 2.5, 6.25, 2.125};
  EXPECT_EQ(to_json_line(task_result_from_json(to_json_line(l))), to_json_line(l));
  TaskResult m;
  m.task_id = "memory/copy/fp32/1x1024";
  m.kind = TaskKind::kMemory;
  m.memory_kernel =
      KernelObservation{"pm2lat_copy_kernel_vec4", {4, 1, 1}, {256, 1, 1}, {1, 1, 1}, 3.5};
  m.memory_timing = TimingSample{64, 20, 3.5, 3.4, 3.9};
  const TaskResult back = task_result_from_json(to_json_line(m));
  EXPECT_EQ(back.memory_kernel.name, m.memory_kernel.name);
  EXPECT_EQ(back.memory_timing.median_us, 3.5);
}

TEST(MeasurementJson, RefusesMalformedLines) {
  EXPECT_THROW(task_result_from_json("{"), std::invalid_argument);
  EXPECT_THROW(task_result_from_json(R"({"task":"x","kind":"nonsense"})"), std::invalid_argument);
  EXPECT_THROW(task_result_from_json(R"({"kind":"gemm"})"), std::invalid_argument);
}

}  // namespace
}  // namespace pm2lat::calibrate::run
