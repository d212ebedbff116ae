// A kernel priced by a per-operator fit never goes under the fixed cost the target's own
// kernels of its configuration show. Per-operator tables timed framework calls of tensors large
// enough to be bandwidth-bound; what they leave for a kernel of a few kilobytes is the global
// launch floor, where a GPU whose kernels were measured (a profiler trace) says how short a
// launch of that configuration really gets there.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "pm2lat/classifier.h"
#include "pm2lat/device_catalogue.h"
#include "pm2lat/models/memory_bound_model.h"
#include "pm2lat/predictor.h"

#include "aten_kernel_names.h"

namespace pm2lat {
namespace {

DeviceSpec gpu(const std::string& name) {
  DeviceSpec s;
  s.name = name;
  s.sm_count = 100;
  s.mem_bw_gbps = 1000;  // 1e6 bytes per µs
  s.cc_major = 8;
  s.fp32_tflops = 20;
  s.boost_clock_mhz = 1500;
  return s;
}

// `device`'s per-operator relu fit at full bandwidth and no fixed cost, timed as `basis`.
Profile operator_table(const std::string& device, TimeBasis basis = TimeBasis::kKernel) {
  Profile p;
  p.device = device;
  p.basis = basis;
  VectorFit f;
  f.op = "relu";
  f.c_byte = 1.0;
  p.vector_fits.push_back(f);
  return p;
}

// `device`'s own kernel-time fit of `config` (a profiler trace's), fixed cost `c0`, made on
// kernels of `bytes_min` bytes and more.
Profile own_kernels(const std::string& device, const std::string& config, double c0,
                    double bytes_min = 1e3) {
  Profile p;
  p.device = device;
  p.basis = TimeBasis::kKernel;
  VectorFit f;
  f.op = "elementwise";
  f.config = config;
  f.c0 = c0;
  f.c_byte = 1.0;
  f.bytes_min = bytes_min;
  f.bytes_max = 1e8;
  p.family_fits.push_back(f);
  return p;
}

// An fp32 relu over `bytes` read and written, launched as ATen does: 4 elements a thread, 128
// threads a block.
KernelRecord relu(double bytes) {
  KernelRecord r;
  r.launch.name = test::kAtenReluKernel;
  const double elements = bytes / 8;
  r.launch.grid = {static_cast<std::uint32_t>(std::ceil(elements / 4 / 128)), 1, 1};
  r.launch.block = {128, 1, 1};
  r.op.kind = OpKind::kElementwise;
  r.op.name = "aten::relu";
  r.op.vec.rows = 1;
  r.op.vec.cols = static_cast<std::int64_t>(bytes / 8);
  r.op.vec.bytes_read = r.op.vec.bytes_written = bytes / 2;
  return r;
}

TEST(OwnKernelFloor, APerOperatorFitDoesNotTakeAKernelUnderItsConfigurationsOwnFixedCost) {
  const KernelClass cls = classify_kernel(test::kAtenReluKernel);
  ASSERT_EQ(cls.family, KernelFamily::kElementwise);
  ASSERT_FALSE(cls.config.empty());
  constexpr double kOwnFixedUs = 2.7;  // above the global floor
  ASSERT_GT(kOwnFixedUs, kMinMemoryKernelUs);
  DeviceCatalogue cat({gpu("Traced"), gpu("Tabled")});
  Predictor p(cat, {operator_table("Traced"), operator_table("Tabled"),
                    own_kernels("Traced", cls.config, kOwnFixedUs)});
  const TargetId traced = p.add_target("Traced");
  const TargetId tabled = p.add_target("Tabled");

  // 4 KB: the per-operator fit alone says 0.004 µs, the global floor 1.3.
  const Prediction tiny = p.predict(relu(4e3), cls, traced);
  EXPECT_EQ(tiny.model, ModelKind::kMemoryBound);
  EXPECT_DOUBLE_EQ(tiny.us, kOwnFixedUs);
  // A GPU that measured no kernel of its own keeps the global floor.
  EXPECT_DOUBLE_EQ(p.predict(relu(4e3), cls, tabled).us, kMinMemoryKernelUs);
  // A large kernel stays the per-operator fit's: the floor bounds, it does not price.
  EXPECT_NEAR(p.predict(relu(4e8), cls, traced).us, 4e2, 1e-6);
  // Another configuration of the family: the traced GPU measured none of it.
  KernelClass other = cls;
  other.config = "at::native::unrolled_elementwise_kernel";
  EXPECT_DOUBLE_EQ(p.predict(relu(4e3), other, traced).us, kMinMemoryKernelUs);
}

// A fit whose smallest kernel spent most of its time moving bytes never saw the fixed cost its
// intercept states: the intercept is an extrapolation, not a floor.
TEST(OwnKernelFloor, IsNotTakenFromAFitMadeOnLargeTensorsOnly) {
  const KernelClass cls = classify_kernel(test::kAtenReluKernel);
  DeviceCatalogue cat({gpu("Traced")});
  // Smallest kernel 4e7 bytes: 40 µs of traffic against an intercept of 30.
  Predictor large_only(cat, {operator_table("Traced"), own_kernels("Traced", cls.config, 30, 4e7)});
  EXPECT_DOUBLE_EQ(large_only.predict(relu(4e3), cls, large_only.add_target("Traced")).us,
                   kMinMemoryKernelUs);
  // Smallest kernel 2e7 bytes: 20 µs of traffic, the intercept of 30 the larger part.
  Predictor seen(cat, {operator_table("Traced"), own_kernels("Traced", cls.config, 30, 2e7)});
  EXPECT_DOUBLE_EQ(seen.predict(relu(4e3), cls, seen.add_target("Traced")).us, 30);
}

TEST(OwnKernelFloor, IsNoFloorOfAFrameworkCall) {
  const KernelClass cls = classify_kernel(test::kAtenReluKernel);
  DeviceCatalogue cat({gpu("Traced")});
  constexpr double kOwnFixedUs = 50;  // far above the call the table gives
  Predictor p(cat, {operator_table("Traced", TimeBasis::kCall),
                    own_kernels("Traced", cls.config, kOwnFixedUs)});
  const TargetId traced = p.add_target("Traced");
  PredictOptions call;
  call.basis = TimeBasis::kCall;
  const Prediction c = p.predict(relu(4e3), cls, traced, call);
  EXPECT_EQ(c.basis, TimeBasis::kCall);
  EXPECT_LT(c.us, kOwnFixedUs);
  // The same table asked for kernel time: the kernel's own fixed cost bounds it.
  EXPECT_DOUBLE_EQ(p.predict(relu(4e3), cls, traced).us, kOwnFixedUs);
}

}  // namespace
}  // namespace pm2lat
