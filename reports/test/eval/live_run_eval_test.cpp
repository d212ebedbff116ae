// `eval models --source A --target B`: the live-run pairs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "pm2lat/calibrate/neusight_models.h"
#include "pm2lat/reports/eval/live_run_eval.h"
#include "pm2lat/reports/eval/model_eval.h"
#include "support/test_support.h"

namespace pm2lat::reports {
namespace {

Predictor shipped() { return Predictor::from_directory(PM2LAT_SHIPPED_PROFILES); }

// A training run measured on a V100 (with its operator file) and on a T4 (end to end only),
// and a batch the V100 did not run.
std::filesystem::path write_runs(const char* name) {
  const auto dir = test::scratch_dir(name);
  std::filesystem::create_directories(dir / "V100-PCIE-32GB");
  std::ofstream(dir / "index.csv")
      << "device,model,mode,seqlen,batch,option,num_layer,measured_e2e_ms,measured_fw_ms,"
         "measured_bw_ms,ops_file,neusight_pred_ms,neusight_err_pct\n"
         "V100-PCIE-32GB,toy,train,512,8,,2,20.0,7.0,13.0,V100-PCIE-32GB/toy-train-512-8.csv,,\n"
         "T4,toy,train,512,8,,2,60.0,20.0,40.0,,,\n"
         "T4,toy,train,512,16,,2,120.0,40.0,80.0,,,\n";
  std::ofstream(dir / "V100-PCIE-32GB" / "toy-train-512-8.csv")
      << "op_index,name,op_kind,op_class,repeat,input_shapes,output_shape,dtype,B,M,N,K,H,fw_"
         "latency_us,bw_latency_us,acc_latency_us\n"
         "0,x,input,io,1,,8x512x1024,fp32,,,,,,0,0,0\n"
         "1,fc,linear,gemm,2,8x512x1024,8x512x4096,fp32,1,4096,1024,4096,,900,1800,70\n"
         "2,act,gelu,elementwise,2,8x512x4096,8x512x4096,fp32,4096,,,,4096,200,300,0\n"
         "3,v,view,view,2,8x512x4096;1,8x512x64x64,fp32,,,,,,15,0,0\n"
         "4,output,output,io,1,8x512x4096,8x512x4096,fp32,,,,,,0,0,0\n";
  return dir;
}

TEST(LiveRunEval, ForecastsEachGpuThatMeasuredTheSameRunFromAnothersRecords) {
  const auto dir = write_runs("live_run");
  Predictor p = shipped();
  const auto runs = calibrate::load_model_runs(dir);
  const auto all = eval_live_runs(p, runs, "all", "all");
  // The T4 measured the batch-8 run the V100's records describe; nothing else pairs (the T4
  // has no records, the batch-16 run no partner).
  ASSERT_EQ(all.pairs.size(), 1u);
  const auto& pair = all.pairs[0];
  EXPECT_EQ(pair.source, "V100-PCIE-32GB");
  EXPECT_EQ(pair.target, "T4");
  EXPECT_DOUBLE_EQ(pair.measured_ms, 60.0);
  // The same records replayed on the T4 as on its own: the forecast does not use the V100's
  // times yet, and the T4 is slower than the V100 at every kernel.
  const auto own = eval_models(p, runs);
  EXPECT_GT(pair.predicted_ms, own.runs.at(0).predicted_ms);
  EXPECT_EQ(all.by_pair.size(), 1u);
  EXPECT_TRUE(eval_live_runs(p, runs, "T4", "all").pairs.empty());
  EXPECT_EQ(eval_live_runs(p, runs, "V100-PCIE-32GB", "T4").pairs.size(), 1u);
  EXPECT_THROW(eval_live_runs(p, runs, "T44", "all"), UnknownDeviceError);
  const auto j = live_runs_json(all);
  for (const char* key : {"source", "target", "model", "mode", "seqlen", "batch", "measured_ms",
                          "predicted_ms", "error_pct"})
    EXPECT_TRUE(j["pairs"][0].contains(key)) << key;
  EXPECT_EQ(j["overall"]["pairs"], 1);
  EXPECT_TRUE(j["overall"].contains("mean_error_pct"));
  EXPECT_TRUE(j["overall"].contains("median_error_pct"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace pm2lat::reports
