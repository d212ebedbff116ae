#include "collect/summary.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace pm2lat::shim {
namespace {

PredictedRecord record(const char* name, KernelFamily f, std::optional<double> measured,
                       double pred_source, double pred_target) {
  PredictedRecord r;
  r.record.launch.name = name;
  r.family = f;
  r.record.measured_us = measured;
  Prediction a, b;
  a.us = pred_source;
  b.us = pred_target;
  r.predictions = {{"H100-SXM", a}, {"A100-SXM", b}};
  r.gpu = "H100-SXM";
  return r;
}

TEST(Summary, TotalsPerFamilyAndTargetAndErrorOnTheSourceGpu) {
  Summary s("H100-SXM");
  s.add(record("gemm_a", KernelFamily::kGemm, 100.0, 110.0, 200.0), 100000);
  s.add(record("gemm_a", KernelFamily::kGemm, 100.0, 90.0, 200.0), 100000);
  s.add(record("ew", KernelFamily::kElementwise, std::nullopt, 5.0, 8.0), 0);
  s.add(record("ln", KernelFamily::kLayerNorm, 100.0, 80.0, 90.0), 100000);
  const auto& gemm = s.families().at("gemm");
  EXPECT_EQ(gemm.count, 2u);
  EXPECT_DOUBLE_EQ(gemm.measured_ms, 0.2);
  EXPECT_DOUBLE_EQ(gemm.predicted_ms.at("A100-SXM"), 0.4);
  EXPECT_EQ(gemm.compared, 2u);
  EXPECT_DOUBLE_EQ(gemm.error_pct_sum, 20.0);  // |+10%| + |-10%|
  const auto& ew = s.families().at("elementwise");
  EXPECT_EQ(ew.measured_count, 0u);
  EXPECT_EQ(ew.compared, 0u);
  EXPECT_EQ(s.kernels().at("gemm_a").measured_ns, 200000u);

  s.counters().records = 3;
  const auto j = nlohmann::json::parse(
      s.to_json("cupti-callbacks+cupti-activity", {"A100-SXM", "H100-SXM"}, {"a warning"}));
  EXPECT_EQ(j.at("schema"), "pm2lat.summary");
  EXPECT_EQ(j.at("counters").at("records"), 3);
  EXPECT_EQ(j.at("warnings"), (nlohmann::json{"a warning"}));
  bool found = false;
  for (const auto& f : j.at("families")) {
    if (f.at("family") == "layernorm") {
      // An under-prediction is as far off as an over-prediction: the error is absolute.
      EXPECT_NEAR(f.at("source_error").at("total_error_pct").get<double>(), 20.0, 1e-9);
    }
    if (f.at("family") != "gemm") continue;
    found = true;
    EXPECT_NEAR(f.at("source_error").at("total_error_pct").get<double>(), 0.0, 1e-9);
    EXPECT_NEAR(f.at("source_error").at("mean_abs_error_pct").get<double>(), 10.0, 1e-9);
  }
  EXPECT_TRUE(found);
  EXPECT_EQ(j.at("kernels").at(0).at("name"), "gemm_a");  // busiest first
  const std::string text = s.to_text({"A100-SXM", "H100-SXM"});
  EXPECT_NE(text.find("gemm"), std::string::npos);
  EXPECT_NE(text.find("0.400"), std::string::npos);
}

TEST(Summary, APredictOnlyTableHasNoMeasuredOrErrorColumn) {
  Summary s("H100-SXM");
  s.add(record("gemm_a", KernelFamily::kGemm, std::nullopt, 110.0, 200.0), 0);
  const std::string text = s.to_text({"A100-SXM", "H100-SXM"});
  EXPECT_EQ(text.find("measured ms"), std::string::npos) << text;
  EXPECT_EQ(text.find("error"), std::string::npos) << text;
  EXPECT_NE(text.find("0.200"), std::string::npos) << text;  // the A100 forecast
  s.add(record("gemm_a", KernelFamily::kGemm, 100.0, 110.0, 200.0), 100000);
  const std::string measured = s.to_text({"A100-SXM", "H100-SXM"});
  EXPECT_NE(measured.find("measured ms"), std::string::npos) << measured;
  EXPECT_NE(measured.find("error"), std::string::npos) << measured;
}

}  // namespace
TEST(Summary, EachKernelIsComparedWithTheGpuItRanOn) {
  // A process driving an H100 and an A100: the A100's kernel is scored on the A100's
  // prediction (200 against 100 measured), not on the H100's (100, which would say 0 %).
  Summary s("H100-SXM, A100-SXM");
  s.add(record("gemm_h", KernelFamily::kGemm, 100.0, 110.0, 300.0), 100000);
  PredictedRecord on_a100 = record("gemm_a", KernelFamily::kGemm, 100.0, 100.0, 200.0);
  on_a100.gpu = "A100-SXM";
  s.add(on_a100, 100000);
  PredictedRecord unknown = record("gemm_u", KernelFamily::kGemm, 100.0, 100.0, 100.0);
  unknown.gpu.clear();  // a device no catalogue GPU stands in for: not scored
  s.add(unknown, 100000);
  const auto& gemm = s.families().at("gemm");
  EXPECT_EQ(gemm.compared, 2u);
  EXPECT_DOUBLE_EQ(gemm.compared_predicted_ms, 0.31);
  EXPECT_DOUBLE_EQ(gemm.error_pct_sum, 110.0);  // 10 % + 100 %
  const auto j = nlohmann::json::parse(s.to_json("m", {"H100-SXM", "A100-SXM"}, {}));
  EXPECT_EQ(j.at("gpu"), "H100-SXM, A100-SXM");
}

TEST(Summary, CopiesAndMemsetsAreSaidWithTheirShareOfTheGpuTime) {
  Summary s("H100-SXM");
  s.add(record("gemm_a", KernelFamily::kGemm, 300.0, 300.0, 600.0), 300000);
  s.add_transfer("host_to_device", 1 << 20, 400000);
  s.add_transfer("host_to_device", 1 << 20, 200000);
  s.add_transfer("device_to_host", 4096, 50000);
  s.add_transfer("memset", 1024, 50000);
  const auto& h2d = s.transfers().at("host_to_device");
  EXPECT_EQ(h2d.count, 2u);
  EXPECT_EQ(h2d.bytes, 2u << 20);
  EXPECT_DOUBLE_EQ(h2d.measured_ms, 0.6);
  const auto j = nlohmann::json::parse(s.to_json("m", {"H100-SXM"}, {}));
  ASSERT_EQ(j.at("transfers").size(), 3u);
  EXPECT_EQ(j.at("transfers").at(0).at("kind"), "device_to_host");  // by name
  EXPECT_EQ(j.at("transfers").at(1).at("count"), 2);
  // 0.65 ms of copies and 0.05 of memsets beside 0.3 ms of kernels: 70 % of the GPU's time.
  const std::string text = s.to_text({"H100-SXM"});
  EXPECT_NE(text.find("not forecast: 3 memory copies (0.650 ms: device_to_host 0.050, "
                      "host_to_device 0.600) and 1 memsets (0.050 ms), 70.0 % of the GPU time"),
            std::string::npos)
      << text;
  // Without copies or memsets the summary says nothing of them.
  Summary none("H100-SXM");
  none.add(record("gemm_a", KernelFamily::kGemm, 300.0, 300.0, 600.0), 300000);
  EXPECT_EQ(none.to_text({"H100-SXM"}).find("not forecast"), std::string::npos);
  EXPECT_TRUE(nlohmann::json::parse(none.to_json("m", {}, {})).at("transfers").empty());
}

}  // namespace pm2lat::shim
