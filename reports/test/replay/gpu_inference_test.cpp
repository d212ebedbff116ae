// Which GPU a trace without device properties is scored on: the architecture its kernel names
// tell, then the GPU of that architecture whose own calibration knows its kernels.
#include "pm2lat/reports/replay/gpu_inference.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pm2lat/device_catalogue.h"

namespace pm2lat::reports {
namespace {

DeviceSpec gpu(const std::string& name, int cc_major, int cc_minor) {
  DeviceSpec s;
  s.name = name;
  s.sm_count = 100;
  s.mem_bw_gbps = 1000;
  s.cc_major = cc_major;
  s.cc_minor = cc_minor;
  s.fp32_tflops = 20;
  s.tf32_tflops = 150;
  s.bf16_tflops = s.fp16_tflops = 300;
  s.boost_clock_mhz = 1500;
  return s;
}

// A kernel-time profile of `device` with a fit of its own for the fill kernel's configuration.
Profile fill_fit_profile(const std::string& device, const KernelClass& cls) {
  Profile p;
  p.device = device;
  p.basis = TimeBasis::kKernel;
  VectorFit fit;
  fit.op = "memset";
  fit.config = cls.config;
  fit.c0 = 2;
  fit.c_byte = 1;
  fit.bytes_min = 1e3;
  fit.bytes_max = 1e8;
  p.family_fits.push_back(fit);
  return p;
}

constexpr const char* kFill =
    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
    "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, "
    "at::detail::Array<char*, 1>)";

TEST(GpuInference, ArchitectureFromKernelNames) {
  EXPECT_EQ(infer_gpu_from_kernel_names({"ampere_sgemm_128x64_tn", "sm90_xmma_gemm_bf16"}), "H100");
  EXPECT_EQ(infer_gpu_from_kernel_names({"volta_sgemm_128x64_nn"}), "V100");
  EXPECT_EQ(infer_gpu_from_kernel_names({"vectorized_elementwise_kernel"}), "");
}

TEST(GpuInference, TheArchitecturesGpuWhoseOwnCalibrationKnowsTheKernels) {
  // "A" is what the names resolve to (the catalogue's first of its architecture); only "B",
  // of the same compute capability, calibrated the trace's kernel; "C", another architecture,
  // did too and is never a candidate.
  DeviceCatalogue cat({gpu("A", 8, 0), gpu("B", 8, 0), gpu("C", 9, 0)});
  const KernelClass cls = classify_kernel(kFill);
  ASSERT_EQ(cls.family, KernelFamily::kMemset);
  Predictor predictor(cat, {fill_fit_profile("C", cls), fill_fit_profile("B", cls)});
  KernelRecord r;
  r.launch.name = kFill;
  r.op.kind = OpKind::kMemset;
  r.op.name = "aten::fill_";
  r.op.vec.rows = 1000;
  r.op.vec.cols = 250;
  r.op.vec.bytes_written = 1e6;
  const std::vector<KernelRecord> records(3, r);
  const std::vector<const KernelClass*> classes(3, &cls);
  const DeviceSpec& a = *predictor.catalogue().find("A");
  EXPECT_EQ(best_calibrated_variant(predictor, a, records, classes).name, "B");
  // Nothing to tell them apart by: the GPU the names resolved to stays.
  EXPECT_EQ(best_calibrated_variant(predictor, a, {}, {}).name, "A");
  // Another architecture's calibration never makes its GPU a candidate.
  Predictor only_other(cat, {fill_fit_profile("C", cls)});
  const DeviceSpec& a2 = *only_other.catalogue().find("A");
  EXPECT_EQ(best_calibrated_variant(only_other, a2, records, classes).name, "A");
}

TEST(GpuInference, ATraceGpuIsOnlyWhatItsNamesAndTheCatalogueTell) {
  DeviceCatalogue cat({gpu("A", 8, 0)});
  Predictor predictor(cat, {});
  // Names of no architecture: no GPU, no note.
  const InferredTraceGpu none =
      infer_trace_gpu(predictor, {"vectorized_elementwise_kernel"}, {}, {});
  EXPECT_EQ(none.device, "");
  EXPECT_EQ(none.note, "");
  // An architecture this catalogue has no entry for: its name, said to be inferred.
  const InferredTraceGpu volta = infer_trace_gpu(predictor, {"volta_sgemm_128x64_nn"}, {}, {});
  EXPECT_EQ(volta.device, "V100");
  EXPECT_NE(volta.note.find("inferred from kernel names"), std::string::npos);
}

}  // namespace
}  // namespace pm2lat::reports
