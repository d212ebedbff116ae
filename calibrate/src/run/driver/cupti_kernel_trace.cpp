#include "driver/cupti_kernel_trace.h"

#include <cupti.h>
#include <dlfcn.h>
#include <fmt/core.h>

#include <type_traits>

#include <algorithm>
#include <cstdlib>
#include <mutex>

#include "pm2lat/calibrate/run/measurement_backend.h"

namespace pm2lat::calibrate::run::driver {

struct CuptiKernelTrace::Api {
  void* library = nullptr;
  decltype(&cuptiGetVersion) get_version = nullptr;
  decltype(&cuptiGetResultString) result_string = nullptr;
  decltype(&cuptiActivityRegisterCallbacks) register_callbacks = nullptr;
  decltype(&cuptiActivityEnable) enable = nullptr;
  decltype(&cuptiActivityDisable) disable = nullptr;
  decltype(&cuptiActivityFlushAll) flush_all = nullptr;
  decltype(&cuptiActivityGetNextRecord) next_record = nullptr;
};

namespace {

constexpr std::size_t kBufferBytes = 1 << 20;
constexpr std::size_t kBufferAlign = 8;  // CUPTI's requirement for activity buffers

// CUPTI calls back into plain functions: the records of the one trace in the process.
struct Collected {
  std::mutex mu;
  CuptiKernelTrace::Api* api = nullptr;
  std::vector<std::pair<std::uint64_t, KernelObservation>> kernels;  // start time, kernel
};

Collected& collected() {
  static Collected c;
  return c;
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kBufferAlign, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  Collected& c = collected();
  std::lock_guard<std::mutex> lock(c.mu);
  CUpti_Activity* record = nullptr;
  while (c.api != nullptr && c.api->next_record(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL &&
        record->kind != CUPTI_ACTIVITY_KIND_KERNEL)
      continue;
    // libcupti.so.13 writes the CUDA 13 record; older records are prefixes of it.
    const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
    KernelObservation o;
    o.name = k->name != nullptr ? k->name : "";
    o.grid = Dim3{static_cast<std::uint32_t>(k->gridX), static_cast<std::uint32_t>(k->gridY),
                  static_cast<std::uint32_t>(k->gridZ)};
    o.block = Dim3{static_cast<std::uint32_t>(k->blockX), static_cast<std::uint32_t>(k->blockY),
                   static_cast<std::uint32_t>(k->blockZ)};
    o.cluster =
        Dim3{std::max(1u, k->clusterX), std::max(1u, k->clusterY), std::max(1u, k->clusterZ)};
    o.duration_us = k->end > k->start ? static_cast<double>(k->end - k->start) * 1e-3 : 0.0;
    c.kernels.emplace_back(k->start, std::move(o));
  }
  std::free(buffer);
}

}  // namespace

std::unique_ptr<CuptiKernelTrace> CuptiKernelTrace::open(const std::string& library) {
  auto api = std::make_unique<Api>();
  api->library = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (api->library == nullptr) {
    const char* err = dlerror();
    throw BackendError(fmt::format(
        "cannot load CUPTI ({}): {}. The calibrator needs it to name the kernels cuBLASLt runs; "
        "add "
        "$CUDA_HOME/extras/CUPTI/lib64 (or the CUDA lib64 directory) to LD_LIBRARY_PATH",
        library, err ? err : "unknown error"));
  }
  std::string missing;
  auto need = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(api->library, name));
    if (fn == nullptr) missing += fmt::format(" {}", name);
  };
  need(api->get_version, "cuptiGetVersion");
  need(api->result_string, "cuptiGetResultString");
  need(api->register_callbacks, "cuptiActivityRegisterCallbacks");
  need(api->enable, "cuptiActivityEnable");
  need(api->disable, "cuptiActivityDisable");
  need(api->flush_all, "cuptiActivityFlushAll");
  need(api->next_record, "cuptiActivityGetNextRecord");
  if (!missing.empty()) throw BackendError(fmt::format("{} lacks:{}", library, missing));
  {
    std::lock_guard<std::mutex> lock(collected().mu);
    collected().api = api.get();
  }
  const CUptiResult r = api->register_callbacks(buffer_requested, buffer_completed);
  if (r != CUPTI_SUCCESS) {
    const char* s = nullptr;
    api->result_string(r, &s);
    throw BackendError(fmt::format(
        "CUPTI refused its activity buffers ({}): is a profiler attached?", s ? s : "?"));
  }
  std::unique_ptr<CuptiKernelTrace> t(new CuptiKernelTrace());
  t->api_ = std::move(api);
  return t;
}

CuptiKernelTrace::~CuptiKernelTrace() {
  if (api_) {
    api_->disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    api_->flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    std::lock_guard<std::mutex> lock(collected().mu);
    collected().api = nullptr;
    collected().kernels.clear();
  }
}

std::string CuptiKernelTrace::version() const {
  uint32_t v = 0;
  return api_->get_version(&v) == CUPTI_SUCCESS ? std::to_string(v) : "unknown";
}

void CuptiKernelTrace::start() {
  {
    std::lock_guard<std::mutex> lock(collected().mu);
    collected().kernels.clear();
  }
  const CUptiResult r = api_->enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (r != CUPTI_SUCCESS) {
    const char* s = nullptr;
    api_->result_string(r, &s);
    throw BackendError(fmt::format("CUPTI cannot trace kernels: {}", s ? s : "?"));
  }
}

std::vector<KernelObservation> CuptiKernelTrace::stop() {
  api_->flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  api_->disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  std::vector<std::pair<std::uint64_t, KernelObservation>> got;
  {
    std::lock_guard<std::mutex> lock(collected().mu);
    got.swap(collected().kernels);
  }
  std::stable_sort(got.begin(), got.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<KernelObservation> out;
  for (auto& [t, k] : got) out.push_back(std::move(k));
  return out;
}

}  // namespace pm2lat::calibrate::run::driver
