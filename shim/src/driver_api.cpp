#include "driver_api.h"

#include <atomic>
#include <mutex>

#include "interpose/real_dl.h"

namespace pm2lat::shim {

namespace {

template <typename T>
void resolve(PFN_cuGetProcAddress_v12000 gpa, const char* name, int version, T& out) {
  void* p = nullptr;
  CUdriverProcAddressQueryResult status{};
  if (gpa(name, &p, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &status) == CUDA_SUCCESS &&
      status == CU_GET_PROC_ADDRESS_SUCCESS) {
    out = reinterpret_cast<T>(p);
  }
}

DriverApi* build(PFN_cuGetProcAddress_v12000 gpa) {
  auto* api = new DriverApi();
  api->get_proc_address = gpa;
  // The version each entry point's ABI was introduced with (cudaTypedefs.h PFN suffix).
  resolve(gpa, "cuDriverGetVersion", 2020, api->driver_get_version);
  resolve(gpa, "cuDeviceGetCount", 2000, api->device_get_count);
  resolve(gpa, "cuDeviceGet", 2000, api->device_get);
  resolve(gpa, "cuDeviceGetName", 2000, api->device_get_name);
  resolve(gpa, "cuDeviceGetAttribute", 2000, api->device_get_attribute);
  resolve(gpa, "cuCtxGetDevice", 2000, api->ctx_get_device);
  resolve(gpa, "cuFuncGetName", 12030, api->func_get_name);
  resolve(gpa, "cuKernelGetName", 12030, api->kernel_get_name);
  resolve(gpa, "cuFuncGetAttribute", 2020, api->func_get_attribute);
  resolve(gpa, "cuKernelGetAttribute", 12000, api->kernel_get_attribute);
  resolve(gpa, "cuFuncGetParamInfo", 12040, api->func_get_param_info);
  resolve(gpa, "cuKernelGetParamInfo", 12040, api->kernel_get_param_info);
  resolve(gpa, "cuStreamIsCapturing", 10000, api->stream_is_capturing);
  resolve(gpa, "cuStreamGetCaptureInfo", 12030, api->stream_get_capture_info);
  resolve(gpa, "cuEventCreate", 2000, api->event_create);
  resolve(gpa, "cuEventRecord", 2000, api->event_record);
  resolve(gpa, "cuEventQuery", 2000, api->event_query);
  resolve(gpa, "cuEventElapsedTime", 12080, api->event_elapsed_time);
  resolve(gpa, "cuEventDestroy", 4000, api->event_destroy);
  resolve(gpa, "cuStreamGetId", 12000, api->stream_get_id);
  return api;
}

std::atomic<DriverApi*> g_api{nullptr};
std::mutex g_mu;

}  // namespace

const DriverApi* driver_api(PFN_cuGetProcAddress_v12000 resolver) noexcept {
  if (DriverApi* api = g_api.load(std::memory_order_acquire)) return api;
  if (resolver == nullptr) {
    void* h = loaded_driver_handle();
    if (h == nullptr) return nullptr;
    resolver = reinterpret_cast<PFN_cuGetProcAddress_v12000>(real_dlsym(h, "cuGetProcAddress_v2"));
    if (resolver == nullptr) return nullptr;
  }
  std::lock_guard<std::mutex> lock(g_mu);
  if (DriverApi* api = g_api.load(std::memory_order_relaxed)) return api;
  DriverApi* api = build(resolver);
  g_api.store(api, std::memory_order_release);
  return api;
}

}  // namespace pm2lat::shim
