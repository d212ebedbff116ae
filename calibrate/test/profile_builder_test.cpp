#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iterator>

#include "pm2lat/calibrate/profile_builder.h"
#include "pm2lat/device_catalogue.h"
#include "pm2lat/models/gemm_wave_model.h"
#include "pm2lat/profile_io.h"

namespace pm2lat::calibrate {
namespace {

DeviceSpec test_gpu() {
  DeviceSpec s;
  s.name = "T4";
  s.sm_count = 40;
  s.mem_bw_gbps = 320;
  s.fp32_tflops = 8.1;
  s.boost_clock_mhz = 1590;
  return s;
}

// The calls as the builder takes them.
std::vector<const MeasuredCall*> pointers(const std::vector<MeasuredCall>& calls) {
  std::vector<const MeasuredCall*> out;
  out.reserve(calls.size());
  for (const auto& c : calls) out.push_back(&c);
  return out;
}

// Calls generated from a known wave model (blocks_per_sm 2) plus a dispatch floor: the
// builder must find the blocks per SM, the coefficients and the floor again.
std::vector<MeasuredCall> synthetic_calls(const DeviceSpec& spec, const GemmConfigFit& truth,
                                          double floor, double pre) {
  std::vector<MeasuredCall> calls;
  for (std::int64_t b : {1, 3, 8, 20, 64}) {
    for (std::int64_t m : {64, 200, 512, 1000, 2048}) {
      for (std::int64_t k : {32, 128, 700, 2048}) {
        MeasuredCall c;
        c.device = "T4";
        c.op = "bmm";
        KernelRecord& r = c.record;
        r.launch.name = truth.config;
        r.launch.grid = {static_cast<std::uint32_t>((m + 127) / 128),
                         static_cast<std::uint32_t>((m + 63) / 64), static_cast<std::uint32_t>(b)};
        r.op.kind = OpKind::kGemm;
        r.op.name = "bmm";
        r.op.gemm.batch = b;
        r.op.gemm.m = m;
        r.op.gemm.n = m;
        r.op.gemm.k = k;
        r.op.gemm.a = DType::kFp32;
        const double kern = gemm_wave_kernel_us(
            truth, spec, gemm_work(truth, r.op.gemm, blocks_from_grid(r.launch.grid, b), 1, 4));
        r.measured_us = std::max(floor, pre + kern);
        r.basis = TimeBasis::kCall;
        calls.push_back(std::move(c));
      }
    }
  }
  return calls;
}

TEST(ProfileBuilder, RecoversAKnownWaveModel) {
  const DeviceSpec spec = test_gpu();
  GemmConfigFit truth;
  truth.config = "volta_sgemm_128x64_nn";
  truth.tile_m = 128;
  truth.tile_n = 64;
  truth.tile_k = 8;
  truth.blocks_per_sm = 2;
  truth.c0 = 3;
  truth.c_wave_k = 0.9;
  truth.c_wave = 4;
  truth.c_mem = 0.5;
  const auto calls = synthetic_calls(spec, truth, 30, 12);
  BuildReport rep;
  const Profile p = build_profile(pointers(calls), spec, BuildOptions{}, &rep);
  EXPECT_EQ(rep.gemm_rows, calls.size());
  ASSERT_EQ(p.gemm_configs.size(), 1u);
  const GemmConfigFit& c = p.gemm_configs[0];
  EXPECT_EQ(c.blocks_per_sm, 2);
  EXPECT_NEAR(c.c_wave_k, truth.c_wave_k, 0.02);
  EXPECT_LT(c.fit_mape_pct, 1.0);
  EXPECT_NEAR(p.call_overhead.at("bmm").floor_us, 30, 1e-9);
  EXPECT_EQ(p.gemm_points.size(), calls.size());
}

// Per-operator calls of kernel `name` for operator `op`: bytes over bandwidth plus a cost per
// row per SM, above a dispatch floor, and enough of them for a per-row term to be fitted at all.
std::vector<MeasuredCall> row_dependent_calls(const DeviceSpec& spec, const char* op, OpKind kind,
                                              const char* name) {
  std::vector<MeasuredCall> calls;
  for (double bytes = 1 << 20; bytes <= 1 << 30; bytes *= 2) {
    for (const std::int64_t rows : {16, 128, 1024, 8192, 65536}) {
      MeasuredCall c;
      c.device = spec.name;
      c.op = op;
      KernelRecord& r = c.record;
      r.launch.name = name;
      r.op.kind = kind;
      r.op.name = op;
      r.op.vec.rows = rows;
      r.op.vec.cols = static_cast<std::int64_t>(bytes / 8 / static_cast<double>(rows));
      r.op.vec.bytes_read = r.op.vec.bytes_written = bytes / 2;
      r.measured_us =
          20 + bytes / spec.bytes_per_us() * 1.25 + 0.3 * static_cast<double>(rows) / spec.sm_count;
      r.basis = TimeBasis::kCall;
      calls.push_back(std::move(c));
    }
  }
  return calls;
}

// A softmax gives each row its own block: its fit keeps the per-row term. An elementwise
// kernel indexes the flattened tensor: its fit has none (pays_per_row), and its operator's
// family-wide fit neither.
TEST(ProfileBuilder, OnlyKernelsThatGiveARowItsOwnBlockGetAPerRowTerm) {
  const DeviceSpec spec = test_gpu();
  const char* const softmax_kernel =
      "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, "
      "at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)";
  const char* const add_kernel =
      "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
      "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
      "at::detail::Array<char*, 3>)";
  auto calls = row_dependent_calls(spec, "softmax", OpKind::kSoftmax, softmax_kernel);
  auto adds = row_dependent_calls(spec, "add", OpKind::kElementwise, add_kernel);
  calls.insert(calls.end(), std::make_move_iterator(adds.begin()),
               std::make_move_iterator(adds.end()));
  const Profile p = build_profile(pointers(calls), spec, BuildOptions{}, nullptr);
  int softmax = 0, elementwise = 0;
  for (const VectorFit& f : p.vector_fits) {
    if (f.op == "softmax") {
      ++softmax;
      EXPECT_NEAR(f.c_row, 0.3, 0.03) << f.config;
    }
    if (f.op == "add" || f.op == "elementwise") {
      ++elementwise;
      EXPECT_EQ(f.c_row, 0.0) << f.op;
    }
  }
  EXPECT_GE(softmax, 1);
  EXPECT_EQ(elementwise, 2);
  // The family-wide fit pools its operators' calls, whose sizes are its range; the profile
  // file keeps it.
  const Profile read = parse_profile(serialize_profile(p), "round trip");
  const auto pool = std::find_if(read.vector_fits.begin(), read.vector_fits.end(),
                                 [](const VectorFit& f) { return f.op == "elementwise"; });
  ASSERT_NE(pool, read.vector_fits.end());
  EXPECT_DOUBLE_EQ(pool->bytes_min, 1 << 20);
  EXPECT_DOUBLE_EQ(pool->bytes_max, 1 << 30);
}

TEST(ProfileBuilder, LatencyFloorIsALowQuantile) {
  std::vector<double> v(100);
  for (int i = 0; i < 100; ++i) v[static_cast<std::size_t>(i)] = 100 + i;
  EXPECT_DOUBLE_EQ(latency_floor(v, 0.0), 100);
  EXPECT_DOUBLE_EQ(latency_floor(v, 0.02), 101);
  EXPECT_DOUBLE_EQ(latency_floor({}, 0.02), 0);
}

}  // namespace
}  // namespace pm2lat::calibrate
