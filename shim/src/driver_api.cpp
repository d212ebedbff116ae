#include "driver_api.h"

#include <atomic>
#include <mutex>
#include <type_traits>

#include "interpose/real_dl.h"

namespace pm2lat::shim {

namespace {

// The version of each entry point's ABI (the cudaTypedefs.h PFN suffix), asked for at the
// driver's version when that is older: cuGetProcAddress refuses a version above the driver's.
template <typename T>
void resolve(PFN_cuGetProcAddress_v12000 gpa, int driver, const char* name, int version, T& out) {
  if (driver != 0 && version > driver) return;  // introduced after this driver
  void* p = nullptr;
  CUdriverProcAddressQueryResult status{};
  if (gpa(name, &p, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &status) == CUDA_SUCCESS &&
      status == CU_GET_PROC_ADDRESS_SUCCESS) {
    out = reinterpret_cast<T>(p);
  }
}

// Entry points whose later versions changed the ABI: the newest one the driver has.
constexpr int kEventElapsedTimeV2 = 12080;  // cuEventElapsedTime_v2, same signature
constexpr int kEventElapsedTimeV1 = 2000;
constexpr int kStreamGetCaptureInfoV3 = 12030;  // adds edge data
constexpr int kStreamGetCaptureInfoV2 = 11030;

DriverApi* build(PFN_cuGetProcAddress_v12000 gpa) {
  auto* api = new DriverApi();
  api->get_proc_address = gpa;
  resolve(gpa, 0, "cuDriverGetVersion", 2020, api->driver_get_version);
  if (api->driver_get_version == nullptr || api->driver_get_version(&api->version) != CUDA_SUCCESS)
    api->version = 0;
  const int v = api->version;
  resolve(gpa, v, "cuDeviceGetCount", 2000, api->device_get_count);
  resolve(gpa, v, "cuDeviceGet", 2000, api->device_get);
  resolve(gpa, v, "cuDeviceGetName", 2000, api->device_get_name);
  resolve(gpa, v, "cuDeviceGetAttribute", 2000, api->device_get_attribute);
  resolve(gpa, v, "cuCtxGetDevice", 2000, api->ctx_get_device);
  resolve(gpa, v, "cuCtxGetCurrent", 4000, api->ctx_get_current);
  resolve(gpa, v, "cuFuncGetName", 12030, api->func_get_name);
  resolve(gpa, v, "cuKernelGetName", 12030, api->kernel_get_name);
  resolve(gpa, v, "cuFuncGetAttribute", 2020, api->func_get_attribute);
  resolve(gpa, v, "cuKernelGetAttribute", 12000, api->kernel_get_attribute);
  resolve(gpa, v, "cuFuncGetParamInfo", 12040, api->func_get_param_info);
  resolve(gpa, v, "cuKernelGetParamInfo", 12040, api->kernel_get_param_info);
  resolve(gpa, v, "cuStreamIsCapturing", 10000, api->stream_is_capturing);
  resolve(gpa, v, "cuStreamGetCaptureInfo", kStreamGetCaptureInfoV3, api->stream_get_capture_info);
  if (api->stream_get_capture_info == nullptr) {
    resolve(gpa, v, "cuStreamGetCaptureInfo", kStreamGetCaptureInfoV2,
            api->stream_get_capture_info_v2);
  }
  resolve(gpa, v, "cuThreadExchangeStreamCaptureMode", 10010,
          api->thread_exchange_stream_capture_mode);
  resolve(gpa, v, "cuEventCreate", 2000, api->event_create);
  resolve(gpa, v, "cuEventRecord", 2000, api->event_record);
  resolve(gpa, v, "cuEventQuery", 2000, api->event_query);
  resolve(gpa, v, "cuEventElapsedTime", kEventElapsedTimeV2, api->event_elapsed_time);
  if (api->event_elapsed_time == nullptr) {
    static_assert(std::is_same_v<PFN_cuEventElapsedTime_v2000, PFN_cuEventElapsedTime_v12080>);
    resolve(gpa, v, "cuEventElapsedTime", kEventElapsedTimeV1, api->event_elapsed_time);
  }
  resolve(gpa, v, "cuEventDestroy", 4000, api->event_destroy);
  resolve(gpa, v, "cuStreamGetId", 12000, api->stream_get_id);
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

std::string missing_capabilities(const DriverApi& api) {
  std::string missing;
  auto lacks = [&missing](bool absent, const char* names, const char* cost) {
    if (!absent) return;
    missing += missing.empty() ? "" : "; ";
    missing += names;
    missing += " (";
    missing += cost;
    missing += ")";
  };
  lacks(api.func_get_name == nullptr && api.kernel_get_name == nullptr,
        "cuFuncGetName, cuKernelGetName", "kernel names come from CUPTI only");
  lacks(api.func_get_param_info == nullptr && api.kernel_get_param_info == nullptr,
        "cuFuncGetParamInfo, cuKernelGetParamInfo", "no scalar launch arguments");
  lacks(api.stream_get_capture_info == nullptr && api.stream_get_capture_info_v2 == nullptr,
        "cuStreamGetCaptureInfo", "captured launches are not followed into their graphs");
  lacks(api.event_elapsed_time == nullptr || api.event_record == nullptr ||
            api.event_query == nullptr || api.event_create == nullptr ||
            api.ctx_get_current == nullptr || api.ctx_get_device == nullptr,
        "the event API", "no timing without CUPTI");
  if (missing.empty()) return missing;
  const std::string version = api.version > 0 ? std::to_string(api.version / 1000) + "." +
                                                    std::to_string(api.version % 1000 / 10)
                                              : std::string("of unknown version");
  return "the CUDA driver " + version + " lacks " + missing;
}

}  // namespace pm2lat::shim
