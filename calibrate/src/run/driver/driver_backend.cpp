#include "pm2lat/calibrate/run/driver_backend.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <vector>

#include "driver/calibration_module.h"
#include "driver/cublaslt_api.h"
#include "driver/cuda_driver_api.h"
#include "driver/cupti_kernel_trace.h"
#include "driver/gemm_bench.h"
#include "driver/graph_timer.h"
#include "driver/operand_pool.h"
#include "pm2lat/median.h"

namespace pm2lat::calibrate::run {
namespace {

using namespace driver;

// Launch-overhead probe sizes.
constexpr int kEmptyProfiled = 20;
constexpr int kEmptyGraphLaunches = 100;
constexpr int kSingleCalls = 50;
constexpr int kHostLaunches = 1000;
constexpr double kClockProbeUs = 20000;

class DriverBackend final : public MeasurementBackend {
 public:
  explicit DriverBackend(const DriverBackendOptions& o)
      : options_(o), cu_(CudaDriverApi::load(o.driver_library)) {
    cu_.check(cu_.init(0), "cuInit");
    int count = 0;
    cu_.check(cu_.device_get_count(&count), "cuDeviceGetCount");
    if (count <= o.device) {
      throw BackendError(
          count == 0
              ? std::string("no CUDA GPU is visible (check CUDA_VISIBLE_DEVICES and the driver)")
              : fmt::format("GPU {} requested, {} visible", o.device, count));
    }
    cu_.check(cu_.device_get(&device_, o.device), "cuDeviceGet");
    cu_.check(cu_.primary_ctx_retain(&context_, device_), "cuDevicePrimaryCtxRetain");
    cu_.check(cu_.ctx_set_current(context_), "cuCtxSetCurrent");
    char name[256] = {};
    cu_.check(cu_.device_get_name(name, sizeof(name), device_), "cuDeviceGetName");
    name_ = name;
    sm_count_ = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    cu_.check(cu_.stream_create(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    lt_.emplace(CublasLtApi::load(o.cublaslt_library));
    if (lt_->create(&handle_) != CUBLAS_STATUS_SUCCESS) throw BackendError("cublasLtCreate failed");
    trace_ = CuptiKernelTrace::open(o.cupti_library);
    kernels_.emplace(cu_);
    timer_.emplace(cu_, stream_, *kernels_, sm_count_);
    pool_.emplace(cu_);
    cu_.check(cu_.mem_alloc(&workspace_, o.workspace_bytes), "allocating the cuBLASLt workspace");
    cu_.check(cu_.mem_alloc(&probe_, 4 * sizeof(unsigned long long)), "cuMemAlloc");
  }

  ~DriverBackend() override {
    if (stream_ != nullptr) cu_.stream_synchronize(stream_);
    timer_.reset();
    kernels_.reset();
    pool_.reset();
    if (scrub_ != 0) cu_.mem_free(scrub_);
    if (workspace_ != 0) cu_.mem_free(workspace_);
    if (probe_ != 0) cu_.mem_free(probe_);
    trace_.reset();
    if (handle_ != nullptr) lt_->destroy(handle_);
    if (stream_ != nullptr) cu_.stream_destroy(stream_);
    if (context_ != nullptr) cu_.primary_ctx_release(device_);
  }

  std::string device_name() override { return name_; }

  Environment environment() override {
    Environment e;
    e["device"] = name_;
    int v = 0;
    if (cu_.driver_get_version(&v) == CUDA_SUCCESS)
      e["driver_version"] = fmt::format("{}.{}", v / 1000, (v % 1000) / 10);
    e["cublaslt_version"] = std::to_string(lt_->get_version());
    e["cupti_version"] = trace_->version();
    e["compute_capability"] =
        fmt::format("{}.{}", attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
                    attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
    e["sm_count"] = std::to_string(sm_count_);
    e["max_sm_clock_mhz"] = std::to_string(attribute(CU_DEVICE_ATTRIBUTE_CLOCK_RATE) / 1000);
    e["max_memory_clock_mhz"] =
        std::to_string(attribute(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE) / 1000);
    e["memory_bus_bits"] = std::to_string(attribute(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH));
    e["l2_bytes"] = std::to_string(attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE));
    std::size_t total = 0;
    if (cu_.device_total_mem(&total, device_) == CUDA_SUCCESS)
      e["memory_bytes"] = std::to_string(total);
    if (const char* vis = std::getenv("CUDA_VISIBLE_DEVICES")) e["cuda_visible_devices"] = vis;
    e["sm_clock_mhz_measured"] = measured_clock();
    if (!clock_at_start_.empty()) e["sm_clock_mhz_measured_at_start"] = clock_at_start_;
    return e;
  }

  void prepare(const CalibrationPlan& plan) override {
    // L2 scrub buffer: twice the larger of what the device and the spec say.
    const double l2 = std::max<double>(attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE),
                                       plan.spec.l2_mb * 1024 * 1024);
    scrub_bytes_ = aligned(static_cast<std::size_t>(2 * l2));
    cu_.check(cu_.mem_alloc(&scrub_, scrub_bytes_), "allocating the L2 scrub buffer");
    timer_->set_scrub(scrub_, scrub_bytes_);
    // Working clocks: the GPU ramps its clock under load.
    const auto until =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(options_.warmup_s);
    while (std::chrono::steady_clock::now() < until) {
      for (int i = 0; i < 20; ++i) kernels_->busy(stream_, 1000, sm_count_);
      cu_.check(cu_.stream_synchronize(stream_), "warm-up");
    }
    clock_at_start_ = measured_clock();
  }

  TaskResult measure(const MeasurementTask& task, const GemmAlgo* forced) override {
    TaskResult r;
    r.task_id = task.id;
    r.kind = task.kind;
    try {
      switch (task.kind) {
        case TaskKind::kLaunch: r.launch = measure_launch(); break;
        case TaskKind::kMemory: measure_memory(task, r); break;
        case TaskKind::kGemm:
        case TaskKind::kGemmCandidates:
        case TaskKind::kGemmFill: {
          GemmBenchContext ctx{
              cu_,     *lt_,   handle_, stream_, *pool_, workspace_, options_.workspace_bytes,
              *trace_, *timer_};
          r.gemm = measure_gemm(ctx, task, forced);
          if (!r.gemm.empty() && r.gemm.size() == 1 && !r.gemm[0].error.empty() &&
              r.gemm[0].kernels.empty()) {
            r.error = r.gemm[0].error;
          }
          break;
        }
      }
    } catch (const BackendError&) {
      throw;
    } catch (const std::exception& e) {
      r.error = e.what();
    }
    return r;
  }

 private:
  int attribute(CUdevice_attribute a) const {
    int v = 0;
    return cu_.device_get_attribute(&v, a, device_) == CUDA_SUCCESS ? v : 0;
  }

  // SM cycles per global-timer nanosecond over a short spin: the clock the GPU is running at.
  std::string measured_clock() {
    unsigned long long zero[4] = {0, 0, 0, 0}, got[4] = {0, 0, 0, 0};
    cu_.check(cu_.memcpy_htod(probe_, zero, sizeof(zero)), "cuMemcpyHtoD");
    kernels_->clock_probe(stream_, probe_, kClockProbeUs);
    cu_.check(cu_.stream_synchronize(stream_), "clock probe");
    cu_.check(cu_.memcpy_dtoh(got, probe_, sizeof(got)), "cuMemcpyDtoH");
    if (got[1] <= got[0] || got[3] <= got[2]) return "unavailable";
    return fmt::format("{:.0f}", static_cast<double>(got[3] - got[2]) /
                                     static_cast<double>(got[1] - got[0]) * 1e3);
  }

  LaunchOverhead measure_launch() {
    LaunchOverhead l;
    l.kernel = kernels_->empty_name();
    for (int i = 0; i < 10; ++i) kernels_->empty(stream_);
    cu_.check(cu_.stream_synchronize(stream_), "cuStreamSynchronize");
    trace_->start();
    for (int i = 0; i < kEmptyProfiled; ++i) kernels_->empty(stream_);
    cu_.check(cu_.stream_synchronize(stream_), "cuStreamSynchronize");
    std::vector<double> d;
    for (const auto& k : trace_->stop()) {
      if (k.name == l.kernel) d.push_back(k.duration_us);
    }
    if (d.empty()) throw std::runtime_error("the profiler saw none of the empty kernels");
    l.kernel_us = median(d);
    TimingPolicy graph;
    graph.launches = kEmptyGraphLaunches;
    graph.warmup = 2;
    graph.reps = 20;
    l.graph_per_launch_us = timer_
                                ->time(
                                    graph, [&](int) { kernels_->empty(stream_); }, false)
                                .median_us;
    l.single_call_us = timer_->single_call_us(kSingleCalls, [&] { kernels_->empty(stream_); });
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kHostLaunches; ++i) kernels_->empty(stream_);
    const auto t1 = std::chrono::steady_clock::now();
    cu_.check(cu_.stream_synchronize(stream_), "cuStreamSynchronize");
    l.host_launch_us = std::chrono::duration<double, std::micro>(t1 - t0).count() / kHostLaunches;
    return l;
  }

  void measure_memory(const MeasurementTask& task, TaskResult& r) {
    const MemoryProblem& p = task.memory;
    const std::size_t one = aligned(static_cast<std::size_t>(p.bytes_written()));
    pool_->require(2 * one, one, p.dtype);
    const CUdeviceptr a = pool_->inputs(), b = a + one, out = pool_->outputs();
    auto enqueue = [&](int) { kernels_->memory(stream_, p, a, b, out); };
    enqueue(0);
    cu_.check(cu_.stream_synchronize(stream_), "cuStreamSynchronize");
    trace_->start();
    enqueue(0);
    cu_.check(cu_.stream_synchronize(stream_), "cuStreamSynchronize");
    const auto seen = trace_->stop();
    if (seen.empty()) throw std::runtime_error("the profiler saw no kernel");
    r.memory_kernel = seen.front();
    r.memory_timing = timer_->time(task.timing, enqueue, false);
  }

  DriverBackendOptions options_;
  CudaDriverApi cu_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr;
  std::string name_;
  int sm_count_ = 0;
  std::optional<CublasLtApi> lt_;
  cublasLtHandle_t handle_ = nullptr;
  std::unique_ptr<CuptiKernelTrace> trace_;
  std::optional<CalibrationModule> kernels_;
  std::optional<GraphTimer> timer_;
  std::optional<OperandPool> pool_;
  CUdeviceptr workspace_ = 0, probe_ = 0, scrub_ = 0;
  std::size_t scrub_bytes_ = 0;
  std::string clock_at_start_;
};

}  // namespace

std::unique_ptr<MeasurementBackend> open_driver_backend(const DriverBackendOptions& options) {
  return std::make_unique<DriverBackend>(options);
}

}  // namespace pm2lat::calibrate::run
