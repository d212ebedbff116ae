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

TEST(DeviceCatalogue, ALaptopPartIsUnknownByNameAndTheErrorSaysWhy) {
  const auto c = shipped();
  try {
    c.resolve("NVIDIA GeForce RTX 4090 Laptop GPU");
    FAIL() << "a laptop part resolved to a desktop card";
  } catch (const UnknownDeviceError& e) {
    EXPECT_TRUE(e.close_matches().empty()) << "no desktop card is its relative";
    EXPECT_EQ(std::string(e.what()),
              "unknown GPU 'NVIDIA GeForce RTX 4090 Laptop GPU': a laptop part, another chip than "
              "the desktop card of its number; a run on it is priced as the GPU of its compute "
              "capability nearest in SMs (`pm2lat devices` lists every known GPU)");
  }
  EXPECT_EQ(c.find("NVIDIA GeForce RTX 3080 Mobile"), nullptr);
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

TEST(DeviceCatalogue, EveryDataCentreAndWorkstationGpuOfRecentGenerationsResolves) {
  const auto c = shipped();
  // As nvidia-smi and profiler traces name them.
  for (const char* n : {"Tesla P40",
                        "NVIDIA TITAN V",
                        "Tesla V100-DGXS-32GB",
                        "Tesla V100-PCIE-16GB",
                        "Tesla V100S-PCIE-32GB",
                        "Quadro GV100",
                        "Quadro RTX 8000",
                        "Quadro RTX 6000",
                        "Quadro RTX 5000",
                        "Quadro RTX 4000",
                        "Tesla T4",
                        "NVIDIA A100-SXM4-80GB",
                        "NVIDIA A100 80GB PCIe",
                        "NVIDIA A800-SXM4-80GB",
                        "NVIDIA A800 80GB PCIe",
                        "NVIDIA A800 40GB Active",
                        "NVIDIA A30",
                        "NVIDIA A10",
                        "NVIDIA A10G",
                        "NVIDIA A16",
                        "NVIDIA A2",
                        "NVIDIA A40",
                        "NVIDIA RTX A6000",
                        "NVIDIA RTX A5500",
                        "NVIDIA RTX A5000",
                        "NVIDIA RTX A4500",
                        "NVIDIA RTX A4000",
                        "NVIDIA RTX A2000 12GB",
                        "NVIDIA RTX A1000",
                        "NVIDIA RTX A400",
                        "NVIDIA GeForce RTX 3090",
                        "NVIDIA H100 80GB HBM3",
                        "NVIDIA H100 PCIe",
                        "NVIDIA H100 NVL",
                        "NVIDIA H800",
                        "NVIDIA H800 PCIe",
                        "NVIDIA H20",
                        "NVIDIA GH200 480GB",
                        "NVIDIA GH200 144G HBM3e",
                        "NVIDIA H200",
                        "NVIDIA H200 NVL",
                        "NVIDIA L4",
                        "NVIDIA L20",
                        "NVIDIA L40",
                        "NVIDIA L40S",
                        "NVIDIA RTX 6000 Ada Generation",
                        "NVIDIA RTX 5880 Ada Generation",
                        "NVIDIA RTX 5000 Ada Generation",
                        "NVIDIA RTX 4500 Ada Generation",
                        "NVIDIA RTX 4000 Ada Generation",
                        "NVIDIA RTX 4000 SFF Ada Generation",
                        "NVIDIA RTX 2000 Ada Generation",
                        "NVIDIA GeForce RTX 4090",
                        "NVIDIA B200",
                        "NVIDIA GeForce RTX 5090",
                        "NVIDIA RTX PRO 6000 Blackwell Server Edition",
                        "NVIDIA RTX PRO 6000 Blackwell Workstation Edition",
                        "NVIDIA RTX PRO 5000 Blackwell",
                        "NVIDIA RTX PRO 4500 Blackwell",
                        "NVIDIA RTX PRO 4000 Blackwell",
                        "NVIDIA RTX PRO 2000 Blackwell",
                        "NVIDIA GB10"}) {
    EXPECT_NE(c.find(n), nullptr) << n;
  }
  // GeForce cards, as nvidia-smi names them: the runtime's own GPU on a desktop.
  for (const char* n :
       {"NVIDIA TITAN RTX", "NVIDIA GeForce RTX 2080 Ti", "NVIDIA GeForce RTX 2080 SUPER",
        "NVIDIA GeForce RTX 2070", "NVIDIA GeForce RTX 2060", "NVIDIA GeForce RTX 3090 Ti",
        "NVIDIA GeForce RTX 3080", "NVIDIA GeForce RTX 3070 Ti", "NVIDIA GeForce RTX 3060",
        "NVIDIA GeForce RTX 4080 SUPER", "NVIDIA GeForce RTX 4070 Ti SUPER",
        "NVIDIA GeForce RTX 4060 Ti", "NVIDIA GeForce RTX 4060", "NVIDIA GeForce RTX 5080",
        "NVIDIA GeForce RTX 5070 Ti", "NVIDIA GeForce RTX 5070"}) {
    EXPECT_NE(c.find(n), nullptr) << n;
  }
  // A variant's name is not taken for its base model's, nor the other way round.
  EXPECT_EQ(c.resolve("NVIDIA GeForce RTX 4070").name, "RTX-4070");
  EXPECT_EQ(c.resolve("NVIDIA GeForce RTX 4070 Ti").name, "RTX-4070-Ti");
  EXPECT_EQ(c.resolve("NVIDIA GeForce RTX 4070 SUPER").name, "RTX-4070-SUPER");
  EXPECT_EQ(c.resolve("NVIDIA GeForce RTX 4070 Ti SUPER").name, "RTX-4070-Ti-SUPER");
  EXPECT_EQ(c.resolve("RTX 3080").name, "RTX-3080");
  EXPECT_EQ(c.resolve("NVIDIA A10G").name, "A10G");
  EXPECT_EQ(c.resolve("A10").name, "A10") << "not the A10G";
  EXPECT_EQ(c.resolve("NVIDIA H800").name, "H800-SXM");
  EXPECT_EQ(c.resolve("Tesla V100-DGXS-32GB").name, "V100-SXM2");
}

TEST(DeviceCatalogue, PeakFp32AgreesWithSmsCoresAndClock) {
  // FP32 FMA lanes per SM: 64 on GP100, Volta, Turing and GA100; 128 on the rest since Pascal.
  // A data sheet's FP32 peak is SMs x lanes x 2 x boost clock: an entry far from it has a
  // wrong figure somewhere.
  const auto c = shipped();
  for (const auto& d : c.devices()) {
    const int cc = d.compute_capability();
    const double lanes = (cc == 60 || cc == 70 || cc == 72 || cc == 75 || cc == 80) ? 64 : 128;
    const double expected = d.sm_count * lanes * 2 * d.boost_clock_mhz * 1e-6;
    EXPECT_NEAR(d.fp32_tflops / expected, 1.0, 0.12) << d.name << ": " << expected;
  }
}

TEST(DeviceCatalogue, AnUnknownNameFindsItsClosestRelative) {
  const auto c = shipped();
  auto relative = [&](const char* n) -> std::string {
    const DeviceSpec* s = c.closest_relative(n);
    return s != nullptr ? s->name : "";
  };
  EXPECT_EQ(device_model_key("NVIDIA GeForce RTX 4090 D"), "rtx4090");
  EXPECT_EQ(device_model_key("Tesla V100-SXM2-32GB"), "v100");
  EXPECT_EQ(relative("NVIDIA H100 80GB HBM2e"), "H100-SXM");
  EXPECT_EQ(relative("NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition"),
            "RTX-PRO-6000-Server");
  EXPECT_EQ(relative("NVIDIA GeForce RTX 4090 D"), "RTX-4090");
  EXPECT_EQ(relative("NVIDIA A100X"), "A100-SXM") << "suffix letter dropped";
  EXPECT_EQ(relative("Tesla V100-SXM3-32GB"), "V100-SXM2");
  // A memory size says nothing of the variant: the form factor decides.
  EXPECT_EQ(relative("NVIDIA H100 NVL 94GB"), "H100-NVL");
  EXPECT_EQ(relative("NVIDIA H100 SXM5 94GB"), "H100-SXM");
  EXPECT_EQ(relative("NVIDIA H200 NVL 141GB"), "H200-NVL");
  EXPECT_EQ(relative("AMD Instinct MI300X"), "");
  // A laptop part is another chip under the desktop model's number (the RTX 4090 Laptop GPU an
  // AD103 of 76 SMs): no relative by name; its hardware decides.
  EXPECT_EQ(relative("NVIDIA GeForce RTX 4090 Laptop GPU"), "");
  EXPECT_EQ(relative("NVIDIA GeForce RTX 3080 Mobile"), "");
  EXPECT_EQ(relative(""), "");
}

TEST(DeviceCatalogue, AModelNobodyListedFindsTheNearestGpuOfItsArchitecture) {
  const auto c = shipped();
  auto nearest = [&](int major, int minor, int sms) -> std::string {
    const DeviceSpec* s = c.closest_by_hardware({major, minor, sms});
    return s != nullptr ? s->name : "";
  };
  // A GeForce RTX 4090 Laptop GPU (8.9, 76 SMs): the RTX 4080's chip, not the RTX 4090's.
  EXPECT_EQ(nearest(8, 9, 76), "RTX-4080");
  // An RTX 3500 Ada Generation Laptop GPU (8.9, 40 SMs): the Ada GPUs nearest are the RTX
  // 4070 (46) and the RTX 4060 Ti (34); by ratio, the RTX 4070.
  EXPECT_EQ(nearest(8, 9, 40), "RTX-4070");
  // A Turing part of 44 SMs (7.5; none listed has 44): the RTX 2080 (46), not the T4 (40).
  EXPECT_EQ(nearest(7, 5, 44), "RTX-2080");
  // Equally near: the catalogue's first, its default variant.
  EXPECT_EQ(nearest(9, 0, 132), "H100-SXM");
  // Only the same compute capability: 8.0's 60 SMs find the A30 (56), not an 8.6 GPU of 56-64.
  EXPECT_EQ(nearest(8, 0, 60), "A30");
  EXPECT_EQ(nearest(8, 0, 90), "A100-SXM");
  EXPECT_EQ(nearest(3, 7, 13), "") << "no Kepler GPU in the catalogue";
  EXPECT_EQ(nearest(8, 9, 0), "");
  EXPECT_EQ(nearest(0, 0, 80), "");
}

TEST(DeviceCatalogue, TheStandInForARunsGpuAndTheNoteThatSaysWhichAndWhy) {
  const auto c = shipped();
  const GpuHardware ada{8, 9, 58};
  const StandIn named = c.stand_in("NVIDIA L4", ada);
  EXPECT_EQ(named.found, StandIn::Found::kNamed);
  EXPECT_EQ(named.spec->name, "L4") << "a listed name wins over what the hardware says";
  EXPECT_EQ(named.note("NVIDIA L4", ada), "");

  const StandIn variant = c.stand_in("NVIDIA H100 80GB HBM2e", ada);
  EXPECT_EQ(variant.found, StandIn::Found::kSameModel);
  EXPECT_EQ(variant.note("NVIDIA H100 80GB HBM2e", ada),
            "GPU 'NVIDIA H100 80GB HBM2e' is not in the device catalogue: predicted and scored "
            "as its closest relative H100-SXM");

  // The RTX 4080 Laptop GPU: an AD104 of 58 SMs, not the desktop RTX 4080's AD103 of 76.
  const StandIn unlisted = c.stand_in("NVIDIA GeForce RTX 4080 Laptop GPU", ada);
  EXPECT_EQ(unlisted.found, StandIn::Found::kSameArchitecture);
  EXPECT_EQ(unlisted.note("NVIDIA GeForce RTX 4080 Laptop GPU", ada),
            "GPU 'NVIDIA GeForce RTX 4080 Laptop GPU' is not in the device catalogue: predicted "
            "and scored as L4, of the same compute capability (8.9) and nearest in SMs (58 "
            "against its 58)");

  const StandIn none = c.stand_in("NVIDIA GeForce RTX 4080 Laptop GPU", GpuHardware{});
  EXPECT_EQ(none.found, StandIn::Found::kNone);
  EXPECT_EQ(none.spec, nullptr);
  EXPECT_EQ(none.note("NVIDIA GeForce RTX 4080 Laptop GPU", GpuHardware{}),
            "GPU 'NVIDIA GeForce RTX 4080 Laptop GPU' is not in the device catalogue: no accuracy "
            "on the run's own GPU");
}

TEST(DeviceCatalogue, MalformedCatalogue) {
  EXPECT_THROW(DeviceCatalogue::load("/nonexistent.json"), ProfileError);
}

}  // namespace
}  // namespace pm2lat
