// The accuracy harnesses: model lowering, `eval models`, `eval gemm`, cross-GPU scoring.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "pm2lat/calibrate/aiconfigurator_table.h"
#include "pm2lat/calibrate/csv_table.h"
#include "pm2lat/calibrate/neusight_models.h"
#include "pm2lat/calibrate/neusight_table.h"
#include "pm2lat/reports/eval/gemm_eval.h"
#include "pm2lat/reports/eval/kernel_eval.h"
#include "pm2lat/reports/eval/model_eval.h"
#include "pm2lat/reports/eval/model_lowering.h"
#include "pm2lat/test/measurement_data.h"
#include "support/test_support.h"

namespace pm2lat::reports {
namespace {

// The shipped catalogue without a profile: every GPU forecast from its spec alone, for tests of
// how an evaluation groups rows (not of what it forecasts), without loading the profiles.
Predictor catalogue_only() {
  return Predictor(
      DeviceCatalogue::load(std::filesystem::path(PM2LAT_SHIPPED_PROFILES) / "devices.json"), {});
}

calibrate::ModelOpRow labelled_gemm_row(const char* kind, std::int64_t B, std::int64_t M,
                                        std::int64_t N, std::int64_t K) {
  calibrate::ModelOpRow r;
  r.op_kind = kind;
  r.op_class = "gemm";
  r.B = B;
  r.M = M;
  r.N = N;
  r.K = K;
  r.output = calibrate::TensorDims{M, K};
  return r;
}

TEST(ModelLowering, LinearUsesTheStandardConventionAndDerivesTheBackward) {
  // NeuSight: x[M,N] -> Linear(N -> K); N is the reduction.
  const auto row = labelled_gemm_row("linear", 1, 1024, 768, 3072);
  const auto fw = lower(row, Pass::kForward);
  ASSERT_EQ(fw.size(), 1u);
  const GemmShape& g = fw[0].record.op.gemm;
  EXPECT_EQ(g.m, 1024);
  EXPECT_EQ(g.n, 3072);
  EXPECT_EQ(g.k, 768);
  EXPECT_TRUE(g.trans_b);
  const auto bw = lower(row, Pass::kBackward);
  ASSERT_EQ(bw.size(), 3u);                 // input gradient, weight gradient, bias gradient
  EXPECT_EQ(bw[0].record.op.gemm.m, 1024);  // dX[M,N] over K
  EXPECT_EQ(bw[0].record.op.gemm.n, 768);
  EXPECT_EQ(bw[0].record.op.gemm.k, 3072);
  EXPECT_EQ(bw[1].record.op.gemm.m, 3072);  // dW[K,N] over M
  EXPECT_EQ(bw[1].record.op.gemm.n, 768);
  EXPECT_EQ(bw[1].record.op.gemm.k, 1024);
  EXPECT_EQ(bw[2].record.op.kind, OpKind::kReduction);
  const auto acc = lower(row, Pass::kAccumulate);
  ASSERT_EQ(acc.size(), 2u);  // weight and bias
  EXPECT_EQ(acc[0].record.op.vec.rows * acc[0].record.op.vec.cols, 3072 * 768);
}

TEST(ModelLowering, ViewsAndPythonValuesDispatchWithoutKernels) {
  calibrate::ModelOpRow view;
  view.op_kind = "permute";
  view.op_class = "view";
  calibrate::ModelOpRow host;
  host.op_kind = "size";
  host.op_class = "host";
  calibrate::ModelOpRow io;
  io.op_class = "io";
  for (const auto* r : {&view, &host}) {
    const auto ops = lower(*r, Pass::kForward);
    ASSERT_EQ(ops.size(), 1u);
    EXPECT_FALSE(ops[0].has_kernel);
  }
  EXPECT_EQ(lower(view, Pass::kForward)[0].host, HostWork::kView);
  EXPECT_EQ(lower(host, Pass::kForward)[0].host, HostWork::kPython);
  EXPECT_TRUE(lower(io, Pass::kForward).empty());
}

TEST(ModelLowering, ElementwiseBytesFollowTheOperandsBroadcastAndScalars) {
  calibrate::ModelOpRow add;
  add.op_kind = "add";
  add.op_class = "elementwise";
  add.dtype = "fp32";
  add.inputs = {calibrate::TensorDims{2, 16, 512, 512}, calibrate::TensorDims{2, 1, 1, 512}};
  add.output = calibrate::TensorDims{2, 16, 512, 512};
  auto ops = lower(add, Pass::kForward);
  ASSERT_EQ(ops.size(), 1u);
  const double n = 2.0 * 16 * 512 * 512;
  EXPECT_DOUBLE_EQ(ops[0].record.op.vec.bytes_read, (n + 1024) * 4);
  EXPECT_DOUBLE_EQ(ops[0].record.op.vec.bytes_written, n * 4);
  EXPECT_EQ(ops[0].record.op.name, "add");
  add.inputs = {calibrate::TensorDims{2, 16, 512, 512}, std::nullopt};  // tensor + scalar
  EXPECT_EQ(lower(add, Pass::kForward)[0].record.op.name, "addu");
}

// A two-layer model whose files are written on the fly: the harness reads, lowers,
// predicts and scores it, and counts runs without an operator file.
TEST(ModelEval, ScoresRunsFromIndexAndOperatorFiles) {
  const auto dir = test::scratch_dir("model_eval");
  std::filesystem::create_directories(dir / "V100-PCIE-32GB");
  std::ofstream(dir / "index.csv")
      << "device,model,mode,seqlen,batch,option,num_layer,measured_e2e_ms,ops_file,neusight_pred_"
         "ms,neusight_err_pct\n"
         "V100-PCIE-32GB,toy,inf,512,8,,2,5.0,V100-PCIE-32GB/toy-inf-512-8.csv,5.5,10.0\n"
         "V100-PCIE-32GB,toy,inf,512,16,,2,9.0,,9.9,10.0\n";
  std::ofstream(dir / "V100-PCIE-32GB" / "toy-inf-512-8.csv")
      << "op_index,name,op_kind,op_class,repeat,input_shapes,output_shape,dtype,B,M,N,K,H,fw_"
         "latency_us\n"
         "0,x,input,io,1,,8x512x1024,fp32,,,,,,0\n"
         "1,fc,linear,gemm,2,8x512x1024,8x512x4096,fp32,1,4096,1024,4096,,900\n"
         "2,act,gelu,elementwise,2,8x512x4096,8x512x4096,fp32,4096,,,,4096,200\n"
         "3,v,view,view,2,8x512x4096;1,8x512x64x64,fp32,,,,,,15\n";
  Predictor p = Predictor::from_directory(PM2LAT_SHIPPED_PROFILES);
  calibrate::ModelRunsReadStats stats;
  const auto runs = calibrate::load_model_runs(dir, &stats);
  EXPECT_EQ(stats.with_ops, 1u);
  EXPECT_EQ(stats.missing_ops_file, 1u);
  const auto r = eval_models(p, runs);
  ASSERT_EQ(r.runs.size(), 1u);
  EXPECT_EQ(r.skipped_without_ops, 1u);
  const auto& run = r.runs[0];
  EXPECT_EQ(run.device, "V100-PCIE-32GB");
  // Two layers of a 4096x1024x4096 GEMM and a GELU over 16M floats on a V100: a few ms.
  EXPECT_GT(run.predicted_ms, 1.0);
  EXPECT_LT(run.predicted_ms, 20.0);
  EXPECT_NEAR(run.error_pct, 100.0 * std::fabs(run.predicted_ms - 5.0) / 5.0, 1e-9);
  EXPECT_GT(run.classes[static_cast<std::size_t>(OpClass::kGemm)].predicted_ms,
            run.classes[static_cast<std::size_t>(OpClass::kElementwise)].predicted_ms);
  const auto j = model_eval_json(r, true);
  EXPECT_EQ(j["overall"]["cells"], 1);
  EXPECT_TRUE(j["runs"][0].contains("neusight_error_pct"));
  EXPECT_TRUE(j["runs"][0].contains("classes"));
  std::filesystem::remove_all(dir);
}

TEST(GemmEval, GroupsBySystemAndDtypeAndFlagsUncalibratedSystems) {
  const auto table = calibrate::CsvTable::parse(
      "system,framework,version,kernel_source,dtype,m,n,k,latency_us,tc_dtype\n"
      "H100-SXM,vllm,0.24.0,torch.nn.functional.linear,bf16,4096,4096,4096,180.0,bf16\n"
      "H100-SXM,vllm,0.24.0,torch.nn.functional.linear,bf16,16,4096,4096,20.0,bf16\n"
      "H200-SXM,vllm,0.24.0,torch.nn.functional.linear,bf16,4096,4096,4096,175.0,bf16\n",
      "t.csv");
  const auto calls = calibrate::read_aiconfigurator_gemm(table);
  ASSERT_EQ(calls.size(), 3u);
  Predictor p = Predictor::from_directory(PM2LAT_SHIPPED_PROFILES);
  const auto r = eval_gemm(p, calls);
  ASSERT_EQ(r.groups.size(), 2u);
  ASSERT_EQ(r.devices.size(), 2u);
  for (const auto& g : r.groups) {
    EXPECT_EQ(g.dtype, "bf16");
    EXPECT_EQ(g.spec_scaled, g.device == "H200-SXM") << g.device;
    EXPECT_LT(g.error.mape_pct, 40.0) << g.device;  // a 4096^3 BF16 GEMM is ~0.2 ms on both
  }
  const auto j = gemm_eval_json(r);
  EXPECT_EQ(j["overall"]["n"], 3);
  EXPECT_EQ(j["groups"].size(), 2u);
  EXPECT_EQ(j["groups"][0]["dtype"], "bf16");
  EXPECT_EQ(j["devices"].size(), 2u);
}

TEST(CrossEval, PairsEveryShapeMeasuredOnBothGpus) {
  const auto table = calibrate::CsvTable::parse(
      "device,op,kernel_name,grid_x,grid_y,grid_z,block_x,block_y,block_z,B,M,N,K,H,latency_us\n"
      "T4,bmm,volta_sgemm_128x64_nn,8,16,4,256,1,1,4,1024,512,1024,,1500\n"
      "V100-PCIE-32GB,bmm,volta_sgemm_64x64_nn,16,16,4,64,1,1,4,1024,512,1024,,520\n"
      "V100-PCIE-32GB,bmm,volta_sgemm_64x64_nn,16,16,8,64,1,1,8,1024,512,1024,,1000\n",
      "t.csv");
  const auto calls = calibrate::read_neusight_kernels(table);
  Predictor p = Predictor::from_directory(PM2LAT_SHIPPED_PROFILES);
  const auto all = eval_kernels_cross(p, calls, "all", "all");
  ASSERT_EQ(all.totals.size(), 2u);  // T4 -> V100 and V100 -> T4, the shared shape only
  for (const auto& g : all.totals) EXPECT_EQ(g.error.n, 1u);
  const auto one = eval_kernels_cross(p, calls, "T4", "V100-PCIE-32GB");
  ASSERT_EQ(one.totals.size(), 1u);
  EXPECT_EQ(one.totals[0].source, "T4");
  EXPECT_LT(one.totals[0].error.mape_pct, 30.0);
  EXPECT_THROW(eval_kernels_cross(p, calls, "T44", "all"), UnknownDeviceError);
}

TEST(KernelEval, BreaksEachDevicesRowsDownByTheTablesCollection) {
  // Two rows of one shape from each collection, the `train` ones timed 1.5x the `test` ones:
  // whatever the prediction, the two collections' median ratios of predicted over measured
  // stand 1.5x apart, and each collection counts its own rows.
  const auto table = calibrate::CsvTable::parse(
      "split,device,op,kernel_name,grid_x,grid_y,grid_z,block_x,block_y,block_z,B,M,N,K,H,"
      "latency_us\n"
      "train,T4,bmm,volta_sgemm_128x64_nn,8,16,4,256,1,1,4,1024,512,1024,,1500\n"
      "train,T4,bmm,volta_sgemm_128x64_nn,8,16,8,256,1,1,8,1024,512,1024,,3000\n"
      "test,T4,bmm,volta_sgemm_128x64_nn,8,16,4,256,1,1,4,1024,512,1024,,1000\n"
      "test,T4,bmm,volta_sgemm_128x64_nn,8,16,8,256,1,1,8,1024,512,1024,,2000\n",
      "t.csv");
  Predictor p = catalogue_only();
  const KernelEvalResult r = eval_kernels(p, calibrate::read_neusight_kernels(table));
  ASSERT_EQ(r.collections.size(), 2u);  // sorted: test, train
  const KernelEvalCollection& test = r.collections[0];
  const KernelEvalCollection& train = r.collections[1];
  EXPECT_EQ(test.collection, "test");
  EXPECT_EQ(train.collection, "train");
  EXPECT_EQ(test.device, "T4");
  EXPECT_EQ(test.error.n, 2u);
  EXPECT_EQ(train.error.n, 2u);
  EXPECT_DOUBLE_EQ(train.measured_us, 4500.0);
  ASSERT_GT(test.median_ratio, 0.0);
  EXPECT_NEAR(test.median_ratio / train.median_ratio, 1.5, 1e-9);
  const nlohmann::json j = kernel_eval_json(r);
  ASSERT_EQ(j.at("collections").size(), 2u);
  EXPECT_EQ(j.at("collections")[1].at("collection"), "train");
  std::ostringstream printed;
  print_kernel_eval_collections(printed, r);
  EXPECT_NE(printed.str().find("T4               bmm       train"), std::string::npos)
      << printed.str();
}

TEST(KernelEval, ATableWithoutCollectionsHasOneUnnamedCollection) {
  const auto table = calibrate::CsvTable::parse(
      "device,op,kernel_name,grid_x,grid_y,grid_z,block_x,block_y,block_z,B,M,N,K,H,latency_us\n"
      "T4,bmm,volta_sgemm_128x64_nn,8,16,4,256,1,1,4,1024,512,1024,,1500\n",
      "t.csv");
  Predictor p = catalogue_only();
  const KernelEvalResult r = eval_kernels(p, calibrate::read_neusight_kernels(table));
  ASSERT_EQ(r.collections.size(), 1u);
  EXPECT_EQ(r.collections[0].collection, "");
  std::ostringstream printed;
  print_kernel_eval_collections(printed, r);
  EXPECT_NE(printed.str().find("bmm       -"), std::string::npos) << printed.str();
}

}  // namespace
}  // namespace pm2lat::reports

namespace pm2lat::reports {
namespace {

// Floor on NeuSight's model runs (the public measurements, PM2LAT_DATA_DIR) with the shipped
// profiles (built from kernel tables, never from these runs' operator latencies).
TEST(AccuracyFloor, NeusightModelRuns) {
  const char* const relative = "neusight/models/index.csv";
  const auto index = test::measurement_file(relative);
  if (!index) GTEST_SKIP() << test::missing_measurements(relative);
  Predictor p = Predictor::from_directory(PM2LAT_SHIPPED_PROFILES);
  const auto runs = calibrate::load_model_runs(index->parent_path());
  const auto r = eval_models(p, runs);
  EXPECT_GE(r.runs.size(), 30u);
  EXPECT_LT(r.overall.mape_pct, 10.0);
  EXPECT_LT(r.overall.median_ape_pct, 6.0);
  EXPECT_GE(r.cells_better_than_neusight * 3, r.cells_with_neusight * 2);  // at least two in three
}

}  // namespace
}  // namespace pm2lat::reports
