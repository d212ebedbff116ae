#include "driver/calibration_module.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "pm2lat/calibrate/run/measurement_backend.h"
#include "pm2lat/kernel_launch.h"

// calibration_kernels.cu as PTX, embedded at build time (empty without nvcc).
extern const unsigned char kCalibrationKernelsPtx[];
extern const std::size_t kCalibrationKernelsPtx_size;

namespace pm2lat::calibrate::run::driver {
namespace {

constexpr unsigned kThreads = 256;
constexpr double kBusyBlocksPerSm = 384;  // per SM and 50 us of busy time
constexpr std::size_t kVectorBytes = 16;

unsigned blocks_for(std::uint64_t threads) {
  return static_cast<unsigned>(std::max<std::uint64_t>(1, (threads + kThreads - 1) / kThreads));
}

}  // namespace

bool calibration_kernels_available() { return kCalibrationKernelsPtx_size > 0; }

CalibrationModule::CalibrationModule(const CudaDriverApi& api) : api_(api) {
  if (!calibration_kernels_available()) {
    throw BackendError(
        "this build of pm2lat-calibrate has no calibration kernels (nvcc was not found when it was "
        "built); rebuild with the CUDA toolkit's nvcc on the PATH or in PM2LAT_CUDA_ROOT");
  }
  api_.check(api_.module_load_data(&module_, kCalibrationKernelsPtx),
             "loading the calibration kernels (PTX JIT)");
  empty_ = get("pm2lat_calibrate_empty_kernel");
  busy_ = get("pm2lat_calibrate_busy_kernel");
  clock_ = get("pm2lat_calibrate_clock_probe");
  scrub_ = get("pm2lat_calibrate_scrub_kernel");
  copy_ = get("pm2lat_copy_kernel_vec4");
  add_f32_ = get("pm2lat_vectorized_elementwise_add_f32");
  add_bf16_ = get("pm2lat_vectorized_elementwise_add_bf16");
  softmax_f32_ = get("pm2lat_softmax_rows_f32");
  softmax_bf16_ = get("pm2lat_softmax_rows_bf16");
}

CalibrationModule::~CalibrationModule() {
  if (module_ != nullptr) api_.module_unload(module_);
}

CUfunction CalibrationModule::get(const char* name) {
  CUfunction f = nullptr;
  api_.check(api_.module_get_function(&f, module_, name), name);
  return f;
}

void CalibrationModule::launch(CUstream s, CUfunction f, unsigned grid, unsigned block,
                               void** args) const {
  api_.check(api_.launch_kernel(f, grid, 1, 1, block, 1, 1, 0, s, args, nullptr), "cuLaunchKernel");
}

void CalibrationModule::empty(CUstream s) const { launch(s, empty_, 1, 1, nullptr); }

void CalibrationModule::busy(CUstream s, double us, int sm_count) const {
  // Blocks in proportion to the time asked for, each waiting about 2 us once resident (up
  // to 16 blocks of 128 threads share an SM): the kernel spans the whole device throughout.
  const double sms = std::max(1, sm_count);
  const double blocks =
      std::clamp(std::ceil(us / 50.0 * kBusyBlocksPerSm) * sms, sms, double{pm2lat::kMaxGridX});
  const double waves = std::ceil(blocks / (16.0 * sms));
  unsigned long long ns = static_cast<unsigned long long>(std::max(1.0, us * 1e3 / waves));
  void* args[] = {&ns};
  launch(s, busy_, static_cast<unsigned>(blocks), 128, args);
}

void CalibrationModule::clock_probe(CUstream s, CUdeviceptr out, double us) const {
  unsigned long long ns = static_cast<unsigned long long>(us * 1e3);
  void* args[] = {&out, &ns};
  launch(s, clock_, 1, 32, args);
}

void CalibrationModule::scrub(CUstream s, CUdeviceptr buf, std::size_t bytes, unsigned salt) const {
  unsigned long long n = bytes / kVectorBytes;
  void* args[] = {&buf, &n, &salt};
  launch(s, scrub_, std::min<unsigned>(blocks_for(n), 65535), kThreads, args);
}

std::string CalibrationModule::memory_kernel_name(const MemoryProblem& p) const {
  const bool half = p.dtype != DType::kFp32;
  switch (p.pattern) {
    case MemoryPattern::kCopy: return "pm2lat_copy_kernel_vec4";
    case MemoryPattern::kAdd:
      return half ? "pm2lat_vectorized_elementwise_add_bf16"
                  : "pm2lat_vectorized_elementwise_add_f32";
    case MemoryPattern::kSoftmaxRows:
      return half ? "pm2lat_softmax_rows_bf16" : "pm2lat_softmax_rows_f32";
  }
  return "";
}

std::string CalibrationModule::memory(CUstream s, const MemoryProblem& p, CUdeviceptr in_a,
                                      CUdeviceptr in_b, CUdeviceptr out) const {
  const bool half = p.dtype != DType::kFp32;
  const std::uint64_t elems =
      static_cast<std::uint64_t>(p.rows) * static_cast<std::uint64_t>(p.cols);
  unsigned long long vectors =
      elems * static_cast<std::uint64_t>(dtype_bytes(p.dtype)) / kVectorBytes;
  switch (p.pattern) {
    case MemoryPattern::kCopy: {
      void* args[] = {&in_a, &out, &vectors};
      launch(s, copy_, blocks_for(vectors), kThreads, args);
      break;
    }
    case MemoryPattern::kAdd: {
      void* args[] = {&in_a, &in_b, &out, &vectors};
      launch(s, half ? add_bf16_ : add_f32_, blocks_for(vectors), kThreads, args);
      break;
    }
    case MemoryPattern::kSoftmaxRows: {
      int cols = static_cast<int>(p.cols);
      void* args[] = {&in_a, &out, &cols};
      launch(s, half ? softmax_bf16_ : softmax_f32_, static_cast<unsigned>(p.rows), kThreads, args);
      break;
    }
  }
  return memory_kernel_name(p);
}

}  // namespace pm2lat::calibrate::run::driver
