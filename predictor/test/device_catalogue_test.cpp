#include <gtest/gtest.h>

#include "pm2lat/device_catalogue.h"

namespace pm2lat {
namespace {

DeviceCatalogue shipped() {
  return DeviceCatalogue::load(std::string(PM2LAT_PROFILE_DIR) + "/devices.json");
}

TEST(DeviceCatalogue, ForgivingNames) {
  const auto c = shipped();
  for (const char* n : {"H100", "h100-sxm", "NVIDIA H100 80GB HBM3", "H100-SXM-80GB", "h100 sxm"}) {
    const DeviceSpec* s = c.find(n);
    ASSERT_NE(s, nullptr) << n;
    EXPECT_EQ(s->name, "H100-SXM") << n;
  }
  EXPECT_EQ(c.resolve("Tesla T4").name, "T4");
  EXPECT_EQ(c.resolve("A100-PG509-200").name, "A100-SXM4-40GB");
  EXPECT_EQ(c.resolve("a10").name, "A10");  // not A100
  EXPECT_EQ(c.resolve("L4").name, "L4");    // not L40
  EXPECT_EQ(c.resolve("NVIDIA H200").name, "H200-SXM");
  EXPECT_EQ(c.resolve("rtx 4090").name, "RTX-4090");
}

TEST(DeviceCatalogue, UnknownNamesListCloseMatches) {
  const auto c = shipped();
  try {
    c.resolve("H1000");
    FAIL();
  } catch (const UnknownDeviceError& e) {
    ASSERT_FALSE(e.close_matches().empty());
    EXPECT_NE(std::string(e.what()).find("H100"), std::string::npos) << e.what();
  }
  EXPECT_THROW(c.resolve(""), UnknownDeviceError);
}

TEST(DeviceCatalogue, SpecsAreComplete) {
  const auto c = shipped();
  EXPECT_GE(c.devices().size(), 20u);
  for (const auto& d : c.devices()) {
    EXPECT_GT(d.sm_count, 0) << d.name;
    EXPECT_GT(d.mem_bw_gbps, 0) << d.name;
    EXPECT_GT(d.fp32_tflops, 0) << d.name;
    EXPECT_GT(d.compute_capability(), 59) << d.name;
    EXPECT_GT(d.peak_tflops(DType::kBf16), 0) << d.name;  // falls back to FP32 where no BF16
  }
  // Peak falls back along the dtype chain on GPUs without a unit.
  const DeviceSpec& v100 = c.resolve("V100-PCIE-32GB");
  EXPECT_DOUBLE_EQ(v100.peak_tflops(DType::kBf16), v100.fp16_tflops);
}

TEST(DeviceCatalogue, MalformedCatalogue) {
  EXPECT_THROW(DeviceCatalogue::load("/nonexistent.json"), ProfileError);
}

}  // namespace
}  // namespace pm2lat
