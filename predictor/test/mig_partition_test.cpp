// MIG device names and the partition a name stands for (pm2lat/mig_partition.h).
#include "pm2lat/mig_partition.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>

#include "pm2lat/classifier.h"
#include "pm2lat/device_catalogue.h"
#include "pm2lat/models/physical_bounds.h"
#include "pm2lat/predictor.h"
#include "shipped_catalogue_test.h"

namespace pm2lat {
namespace {

TEST(MigDeviceName, ReadsTheWholeGpuAndTheProfile) {
  const auto a = parse_mig_device_name("NVIDIA A100-SXM4-40GB MIG 1g.5gb");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->gpu, "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(a->profile.gpu_slices, 1);
  EXPECT_EQ(a->profile.compute_slices, 1);
  EXPECT_DOUBLE_EQ(a->profile.memory_gb, 5);

  // A compute instance smaller than its GPU instance; media extensions; any case.
  const auto b = parse_mig_device_name("NVIDIA A100-SXM4-80GB MIG 1c.3g.40gb");
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->profile.compute_slices, 1);
  EXPECT_EQ(b->profile.gpu_slices, 3);
  EXPECT_DOUBLE_EQ(b->profile.memory_gb, 40);
  const auto c = parse_mig_device_name("NVIDIA A30 mig 2g.12gb+me");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->gpu, "NVIDIA A30");
  EXPECT_EQ(c->profile.gpu_slices, 2);
}

TEST(MigDeviceName, AnythingElseIsNotOne) {
  for (const char* name :
       {"NVIDIA A100-SXM4-40GB", "NVIDIA A100-SXM4-40GB MIG", "NVIDIA A100-SXM4-40GB MIG 1g",
        "NVIDIA A100-SXM4-40GB MIG 0g.5gb", "NVIDIA A100-SXM4-40GB MIG 1g.5gb extra",
        "NVIDIA A100-SXM4-40GB MIG 3c.2g.10gb", "MIG 1g.5gb", "NVIDIA A100 MIG 1g.gb",
        "NVIDIA A100MIG 1g.5gb"}) {
    EXPECT_FALSE(parse_mig_device_name(name).has_value()) << name;
  }
}

class MigPartition : public ShippedCatalogueTest {
 protected:
  // What an ATen operator states of its rows: the operator and its row shape.
  struct AtenOp {
    OpKind kind;
    const char* name;
    VectorShape rows;
  };
  static KernelRecord aten_kernel(const char* kernel, const AtenOp& op, Dim3 grid, Dim3 block) {
    KernelRecord r;
    r.op.kind = op.kind;
    r.op.name = op.name;
    r.op.source = "aten";
    r.op.vec = op.rows;
    r.launch.name = kernel;
    r.launch.grid = grid;
    r.launch.block = block;
    return r;
  }
};

TEST_F(MigPartition, HasItsShareOfTheSmsTheBandwidthAndTheL2) {
  const DeviceSpec& a100 = gpu("A100-SXM4-40GB");
  const MigProfile one{1, 1, 5};
  // NVIDIA's MIG guide: an A100-SXM4-40GB 1g.5gb has 1/8 of the memory and L2, 14 SMs.
  const DeviceSpec reported = mig_partition_spec(a100, one, "A100 slice", 14);
  EXPECT_EQ(reported.name, "A100 slice");
  EXPECT_EQ(reported.sm_count, 14);
  EXPECT_DOUBLE_EQ(reported.fp32_tflops, a100.fp32_tflops * 14 / 108);
  EXPECT_DOUBLE_EQ(reported.bf16_tflops, a100.bf16_tflops * 14 / 108);
  EXPECT_DOUBLE_EQ(reported.mem_bw_gbps, a100.mem_bw_gbps / 8);
  EXPECT_DOUBLE_EQ(reported.l2_mb, a100.l2_mb / 8);
  EXPECT_DOUBLE_EQ(reported.mem_gb, 5);
  EXPECT_EQ(reported.nvlink_gbps, 0);
  EXPECT_EQ(reported.partition_of, &a100);
  EXPECT_EQ(reported.mig_compute_slices, 0) << "a partition is not partitioned again";
  EXPECT_EQ(reported.cc_major, 8);
  EXPECT_DOUBLE_EQ(reported.boost_clock_mhz, a100.boost_clock_mhz);
  // Not reported: whole slices of the 108 SMs (15 each), up to the GPU's 7.
  EXPECT_EQ(mig_partition_spec(a100, one, "s", 0).sm_count, 15);
  EXPECT_EQ(mig_partition_spec(a100, {7, 7, 40}, "s", 0).sm_count, 105);
  EXPECT_DOUBLE_EQ(mig_partition_spec(a100, {7, 7, 40}, "s", 0).mem_bw_gbps, a100.mem_bw_gbps);
  // The A30 has 4 slices of 14 SMs.
  EXPECT_EQ(mig_partition_spec(gpu("A30"), {2, 2, 12}, "s", 0).sm_count, 28);
}

TEST_F(MigPartition, IsWhatTheCatalogueStandsInForItsNameWithANote) {
  const DeviceCatalogue c =
      DeviceCatalogue::load(std::string(PM2LAT_PROFILE_DIR) + "/devices.json");
  const std::string name = "NVIDIA A100-SXM4-40GB MIG 1g.5gb";
  const StandIn s = c.stand_in(name, GpuHardware{8, 0, 14});
  ASSERT_EQ(s.found, StandIn::Found::kMigPartition);
  EXPECT_EQ(s.spec->name, "A100-SXM4-40GB MIG 1g.5gb") << "named as the catalogue names GPUs";
  EXPECT_EQ(s.spec->sm_count, 14);
  ASSERT_NE(s.spec->partition_of, nullptr);
  EXPECT_EQ(s.spec->partition_of->name, "A100-SXM4-40GB")
      << "the 40 GB SXM4 entry, not the A100's default";
  EXPECT_EQ(s.spec->partition_of, c.find("A100-SXM4-40GB"));
  EXPECT_EQ(s.note(name, GpuHardware{8, 0, 14}),
            "GPU 'NVIDIA A100-SXM4-40GB MIG 1g.5gb' is a MIG partition of A100-SXM4-40GB: "
            "predicted and scored as 14 of its 108 SMs, 194 of its 1555 GB/s and 5.0 of its "
            "40.0 MB of L2");
  // Derived once: the same name and hardware stand in as the same entry.
  EXPECT_EQ(c.stand_in(name, GpuHardware{8, 0, 14}).spec, s.spec);
  // A profile the GPU cannot have (9 of its 7 slices): its name as any unlisted one.
  EXPECT_NE(c.stand_in("NVIDIA A100-SXM4-40GB MIG 9g.5gb", {}).found,
            StandIn::Found::kMigPartition);
  // A target named so: the same partition (SMs not reported: whole compute slices).
  const DeviceSpec& target = c.resolve("a100-sxm4-40gb mig 3g.20GB");
  EXPECT_EQ(target.name, "A100-SXM4-40GB MIG 3g.20gb");
  EXPECT_EQ(target.sm_count, 45);
  EXPECT_DOUBLE_EQ(target.mem_bw_gbps, s.spec->partition_of->mem_bw_gbps / 2);
  EXPECT_EQ(&c.resolve("A100-SXM4-40GB MIG 3g.20gb"), &target);
  EXPECT_THROW((void)c.resolve("A100-SXM4-40GB MIG 8g.40gb"), UnknownDeviceError);
  EXPECT_THROW((void)c.resolve("Z900 MIG 1g.5gb"), UnknownDeviceError);
  // A GPU without MIG has no partitions: such a name is any unlisted one.
  EXPECT_NE(c.stand_in("NVIDIA L40S MIG 1g.12gb", {}).found, StandIn::Found::kMigPartition);
  EXPECT_THROW((void)c.resolve("L40S MIG 1g.12gb"), UnknownDeviceError);
  // Four slices on the RTX PRO 6000 Blackwell: a quarter of its 188 SMs.
  EXPECT_EQ(c.resolve("RTX-PRO-6000-Server MIG 1g.24gb").sm_count, 47);
  // A copy derives its own: its partitions point at its own entries.
  const DeviceCatalogue copy = c;  // NOLINT(performance-unnecessary-copy-initialization)
  const StandIn in_copy = copy.stand_in(name, GpuHardware{8, 0, 14});
  EXPECT_NE(in_copy.spec, s.spec);
  EXPECT_EQ(in_copy.spec->partition_of, copy.find("A100-SXM4-40GB"));
}

// A partition is forecast as its whole GPU's SMs, fewer of them: a GEMM of many waves and a
// streaming kernel take about the SM and the bandwidth shares longer than on the whole GPU,
// from the whole GPU's calibrations (not those of another GPU of a similar size).
TEST_F(MigPartition, IsForecastAsItsShareOfTheWholeGpu) {
  Predictor p = Predictor::from_directory(PM2LAT_PROFILE_DIR);
  const StandIn slice = p.catalogue().stand_in("NVIDIA A100-SXM4-40GB MIG 1g.5gb", {8, 0, 14});
  ASSERT_NE(slice.spec, nullptr);
  const TargetId part = p.add_target(*slice.spec);
  const TargetId whole = p.add_target("A100-SXM4-40GB");
  EXPECT_EQ(p.target(part).profile_spec, p.target(whole).profile_spec);

  KernelRecord gemm;
  gemm.launch.name = "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_tn";
  gemm.op.kind = OpKind::kGemm;
  gemm.op.name = "aten::mm";
  gemm.op.gemm.m = gemm.op.gemm.n = gemm.op.gemm.k = 8192;
  gemm.op.gemm.a = gemm.op.gemm.b = gemm.op.gemm.c = DType::kBf16;
  const double bytes = 256.0 * (1 << 20);
  const KernelRecord copy = aten_kernel(
      "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
      "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)",
      {OpKind::kElementwise, "aten::add", {1 << 16, 1 << 10, 2 * bytes, bytes, DType::kFp32}},
      {1 << 16, 1, 1}, {128, 1, 1});
  for (const KernelRecord* r : std::initializer_list<const KernelRecord*>{&gemm, &copy}) {
    const KernelClass cls = classify_kernel(r->launch.name);
    PredictOptions o;
    const double on_part = p.predict(*r, cls, part, o).us;
    const double on_whole = p.predict(*r, cls, whole, o).us;
    EXPECT_GT(on_part / on_whole, 5.5) << r->launch.name;  // 108/14 SMs, 8x the bandwidth
    EXPECT_LT(on_part / on_whole, 9.0) << r->launch.name;
  }
}

// The partition and its whole GPU may price one kernel by different routes: on the GPU a kernel
// was observed on it runs as its own configuration, elsewhere as its family. A BERT layer norm
// observed on an H100 was forecast 1.6 µs on a third of it and 4.6 µs on the whole.
TEST_F(MigPartition, IsNeverForecastFasterThanItsWholeGpu) {
  Predictor p = Predictor::from_directory(PM2LAT_PROFILE_DIR);
  const DeviceSpec& slice = p.catalogue().resolve("H100 MIG 3g.40gb");
  const TargetId part = p.add_target(slice);
  const TargetId whole = p.target(part).whole;
  ASSERT_NE(whole, Target::kNoWhole);
  EXPECT_EQ(p.target(whole).name, "H100-SXM");
  const KernelRecord r = aten_kernel(
      "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, "
      "float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, "
      "float*, float*, c10::BFloat16*)",
      {OpKind::kLayerNorm, "aten::native_layer_norm", {141, 512, 146432, 145512, DType::kBf16}},
      {141, 1, 1}, {32, 4, 1});
  const KernelClass cls = classify_kernel(r.launch.name);
  PredictOptions o;
  o.source_spec = p.target(whole).spec;  // observed on the whole GPU
  const Prediction on_part = p.predict(r, cls, part, o);
  const Prediction on_whole = p.predict(r, cls, whole, o);
  EXPECT_GE(on_part.us, on_whole.us);
  // The rule holds the forecast within the partition's own bounds.
  EXPECT_TRUE(physical_bounds(r, cls, slice, o.source_spec, o.basis).contains(on_part.us));
}

TEST(MigCatalogue, ACountOfSlicesThatIsNotPositiveIsRefusedNamingTheField) {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() /
      ("pm2lat_mig_catalogue_" + std::to_string(::getpid()) + ".json");
  std::ofstream(file) << R"({"schema":"pm2lat.devices","version":1,"devices":[{"name":"X1",)"
                         R"("compute_capability":"8.0","sm_count":10,"boost_clock_mhz":1000,)"
                         R"("mem_bw_gbps":100,"fp32_tflops":1,"mig_compute_slices":0}]})";
  try {
    (void)DeviceCatalogue::load(file);
    ADD_FAILURE() << "a catalogue with mig_compute_slices 0 was accepted";
  } catch (const ProfileError& e) {
    EXPECT_NE(std::string(e.what()).find("mig_compute_slices"), std::string::npos) << e.what();
  }
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace pm2lat
