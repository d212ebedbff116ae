// Fitting low-precision GEMM backends from AIConfigurator-format rows.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "pm2lat/calibrate/aiconfigurator_table.h"
#include "pm2lat/calibrate/scaled_gemm_fit.h"
#include "pm2lat/models/scaled_gemm_model.h"

namespace pm2lat::calibrate {
namespace {

DeviceSpec b200() {
  DeviceSpec s;
  s.name = "B200-SXM";
  s.cc_major = 10;
  s.sm_count = 148;
  s.boost_clock_mhz = 1965;
  s.mem_bw_gbps = 7700;
  s.fp32_tflops = 75;
  s.bf16_tflops = 2250;
  s.fp8_tflops = 4500;
  s.fp4_tflops = 9000;
  return s;
}

// A synthetic backend: a fixed cost, a GEMM at 60 % of the FP8 peak over 128x128 tiles, a
// bandwidth pass over the operands, a quantisation pass, and (eager) a host time per call.
double synthetic_us(std::int64_t m, std::int64_t n, std::int64_t k, double host_us) {
  const double tiles = std::ceil(m / 128.0) * std::ceil(n / 128.0);
  const double waves = std::ceil(tiles / 148.0);
  const double compute = waves * 148 * 2.0 * 128 * 128 * static_cast<double>(k) / (0.6 * 4500e6);
  const double memory = (static_cast<double>(m + n) * k + 2.0 * m * n) / 7.7e6;
  const double quant = 3.0 * m * k / 7.7e6;
  const double device = 5.0 + compute / 148 + 1.1 * memory + 1.4 * quant;
  const double host = m % 4 == 0 ? host_us : 1.3 * host_us;
  return std::max(host, device);
}

std::vector<MeasuredCall> synthetic_calls(const std::string& label, const std::string& backend,
                                          double host_us) {
  std::ostringstream csv;
  csv << "system,framework,version,kernel_source,dtype,m,n,k,latency_us,tc_dtype\n";
  for (std::int64_t m : {1, 2, 3, 4, 8, 13, 16, 32, 33, 64, 128, 129, 512, 1024, 4096, 8192}) {
    for (std::int64_t n : {256, 1024, 4096, 16384}) {
      for (std::int64_t k : {256, 1024, 4096, 16384}) {
        csv << "B200-SXM,vllm,0.24.0," << backend << "," << label << "," << m << "," << n << ","
            << k << "," << synthetic_us(m, n, k, host_us) << ",fp8\n";
      }
    }
  }
  return read_aiconfigurator_gemm(CsvTable::parse(csv.str(), "t.csv"));
}

TEST(ScaledGemmFit, AiconfiguratorRowsOfScaledTypesBecomeCallsOfTheirBackend) {
  const auto table = CsvTable::parse(
      "system,framework,version,kernel_source,dtype,m,n,k,latency_us,tc_dtype\n"
      "B200-SXM,vllm,0.24.0,DeepGemmFp8BlockScaledMMKernel,fp8_block,16,4096,4096,180,fp8\n"
      "B200-SXM,vllm,0.24.0,FlashInferCuteDslNvFp4LinearKernel,nvfp4,16,4096,4096,9,fp4\n"
      "GB200,vllm,0.24.0,torch.nn.functional.linear,bf16,16,4096,4096,9.5,bf16\n",
      "t.csv");
  const auto calls = read_aiconfigurator_gemm(table);
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_TRUE(is_scaled_gemm_call(calls[0]));
  EXPECT_EQ(calls[0].kernel_class->config, "vllm:DeepGemmFp8BlockScaledMMKernel");
  EXPECT_EQ(calls[0].record.op.gemm.scaling, GemmScaling::kBlock128);
  EXPECT_EQ(calls[1].record.op.gemm.a, DType::kFp4E2M1);
  EXPECT_EQ(calls[1].record.op.gemm.scaling, GemmScaling::kNv16);
  EXPECT_FALSE(is_scaled_gemm_call(calls[2]));
  // The same call measured on two GPUs shares a key; another type of the same shape does not;
  // the split holds a shape out in every type.
  EXPECT_EQ(calls[0].shape_key, "gemm|fp8_block|16|4096|4096");
  EXPECT_EQ(calls[2].shape_key, "gemm|bf16|16|4096|4096");
  EXPECT_EQ(aiconfigurator_split_key(table, 0), aiconfigurator_split_key(table, 2));
}

TEST(ScaledGemmFit, GraphTimedBackendFitsItsCallsClosely) {
  const auto calls = synthetic_calls("fp8", "CutlassFP8ScaledMMLinearKernel", 0);
  std::vector<const MeasuredCall*> ptrs;
  for (const auto& c : calls) ptrs.push_back(&c);
  const DeviceSpec spec = b200();
  const ScaledGemmFit f = fit_scaled_gemm(ptrs, spec);
  EXPECT_EQ(f.config, "vllm:CutlassFP8ScaledMMLinearKernel");
  EXPECT_EQ(f.scaling, GemmScaling::kPerTensor);
  EXPECT_EQ(f.gemm.tile_k, 128);  // 128 bytes of FP8 per K step
  EXPECT_DOUBLE_EQ(f.host_us, 0);
  EXPECT_LT(f.fit_mape_pct, 5.0);
  EXPECT_GT(f.quant_c0, 0);
  // A shape between the calibrated ones.
  const double pred = scaled_gemm_time(f, spec, scaled_gemm_work(f, 2048, 8192, 2048)).call_us();
  const double truth = synthetic_us(2048, 8192, 2048, 0);
  EXPECT_NEAR(pred, truth, 0.1 * truth);
}

TEST(ScaledGemmFit, EagerBackendKeepsItsHostTimePerTokenAlignment) {
  const auto calls = synthetic_calls("fp8_block", "DeepGemmFp8BlockScaledMMKernel", 180);
  std::vector<const MeasuredCall*> ptrs;
  for (const auto& c : calls) ptrs.push_back(&c);
  const DeviceSpec spec = b200();
  const ScaledGemmFit f = fit_scaled_gemm(ptrs, spec);
  EXPECT_NEAR(f.host_us, 180, 5);
  EXPECT_NEAR(f.host_unaligned_us, 1.3 * 180, 10);
  EXPECT_LT(f.fit_mape_pct, 5.0);
  const double big = scaled_gemm_time(f, spec, scaled_gemm_work(f, 8192, 16384, 16384)).call_us();
  EXPECT_NEAR(big, synthetic_us(8192, 16384, 16384, 180), 0.1 * big);

  Profile p;
  EXPECT_EQ(append_scaled_gemm_section(ptrs, spec, p), calls.size());
  ASSERT_EQ(p.scaled_gemm_fits.size(), 1u);
  EXPECT_EQ(p.scaled_gemm_points.front().config, 0);
}

TEST(ScaledGemmFit, AnEagerBackendMeasuredOnlyUnderItsHostTimeHasNoDeviceModel) {
  // Every call takes the host's 170 us, give or take 10 %, and a few take twice that.
  std::ostringstream csv;
  csv << "system,framework,version,kernel_source,dtype,m,n,k,latency_us,tc_dtype\n";
  int i = 0;
  for (std::int64_t m : {1, 4, 16, 64, 256, 1024, 4096}) {
    for (std::int64_t n : {32, 64}) {
      for (std::int64_t k : {256, 1024, 4096}) {
        const double noise = 1.0 + 0.1 * ((i * 7) % 5 - 2) / 2.0 + (i % 13 == 0 ? 1.2 : 0.0);
        csv << "B200-SXM,vllm,0.24.0,CutlassFp8BlockScaledMMKernel,fp8_block," << m << "," << n
            << "," << k << "," << 170 * noise << ",fp8\n";
        ++i;
      }
    }
  }
  const auto calls = read_aiconfigurator_gemm(CsvTable::parse(csv.str(), "t.csv"));
  std::vector<const MeasuredCall*> ptrs;
  for (const auto& c : calls) ptrs.push_back(&c);
  const ScaledGemmFit f = fit_scaled_gemm(ptrs, b200());
  EXPECT_NEAR(f.host_us, 170, 10);
  EXPECT_DOUBLE_EQ(f.gemm.c_block_k, 0);
  EXPECT_DOUBLE_EQ(f.gemm.c_wave_k, 0);
  const double pred = scaled_gemm_time(f, b200(), scaled_gemm_work(f, 64, 64, 1024)).call_us();
  EXPECT_DOUBLE_EQ(pred, f.host_us);
}

TEST(ScaledGemmFit, SpikesStayOutOfTheCalibrationPoints) {
  auto calls = synthetic_calls("fp8", "CutlassFP8ScaledMMLinearKernel", 0);
  // One call measured at 5x what its shape takes (as some B200 FP8 rows are).
  MeasuredCall& spike = calls[calls.size() / 2];
  *spike.record.measured_us *= 5;
  std::vector<const MeasuredCall*> ptrs;
  for (const auto& c : calls) ptrs.push_back(&c);
  Profile p;
  EXPECT_EQ(append_scaled_gemm_section(ptrs, b200(), p), calls.size() - 1);
  for (const ScaledGemmPoint& pt : p.scaled_gemm_points) {
    const GemmShape& g = spike.record.op.gemm;
    EXPECT_FALSE(pt.m == g.m && pt.n == g.n && pt.k == g.k);
  }
  EXPECT_LT(p.scaled_gemm_fits[0].fit_mape_pct, 10.0);
}

}  // namespace
}  // namespace pm2lat::calibrate
