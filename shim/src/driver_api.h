// The driver entry points the shim itself calls (names, attributes, capture state, events,
// device queries), resolved once through the real cuGetProcAddress_v2 so that they are the
// driver's own functions and never our interposers. Each is asked for at the version the
// driver implements when that is older than the one the shim was written against
// (cuGetProcAddress refuses versions above the driver's), with the ABI of that version. Any of
// them may be null (an older driver): callers check, and missing_capabilities() says what that
// costs.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>

#include <string>

namespace pm2lat::shim {

struct DriverApi {
  int version = 0;  // cuDriverGetVersion, e.g. 12020
  PFN_cuGetProcAddress_v12000 get_proc_address = nullptr;
  PFN_cuDriverGetVersion_v2020 driver_get_version = nullptr;
  PFN_cuDeviceGetCount_v2000 device_get_count = nullptr;
  PFN_cuDeviceGet_v2000 device_get = nullptr;
  PFN_cuDeviceGetName_v2000 device_get_name = nullptr;
  PFN_cuDeviceGetAttribute_v2000 device_get_attribute = nullptr;
  PFN_cuCtxGetDevice_v2000 ctx_get_device = nullptr;
  PFN_cuCtxGetCurrent_v4000 ctx_get_current = nullptr;
  PFN_cuFuncGetName_v12030 func_get_name = nullptr;
  PFN_cuKernelGetName_v12030 kernel_get_name = nullptr;
  PFN_cuFuncGetAttribute_v2020 func_get_attribute = nullptr;
  PFN_cuKernelGetAttribute_v12000 kernel_get_attribute = nullptr;
  PFN_cuFuncGetParamInfo_v12040 func_get_param_info = nullptr;
  PFN_cuKernelGetParamInfo_v12040 kernel_get_param_info = nullptr;
  PFN_cuStreamIsCapturing_v10000 stream_is_capturing = nullptr;
  // One of the two, by the driver's version: _v3 (12.3) adds the edge data.
  PFN_cuStreamGetCaptureInfo_v12030 stream_get_capture_info = nullptr;
  PFN_cuStreamGetCaptureInfo_v11030 stream_get_capture_info_v2 = nullptr;
  PFN_cuThreadExchangeStreamCaptureMode_v10010 thread_exchange_stream_capture_mode = nullptr;
  PFN_cuEventCreate_v2000 event_create = nullptr;
  PFN_cuEventRecord_v2000 event_record = nullptr;
  PFN_cuEventQuery_v2000 event_query = nullptr;
  // cuEventElapsedTime_v2 (12.8) or the original: the same signature.
  PFN_cuEventElapsedTime_v12080 event_elapsed_time = nullptr;
  PFN_cuEventDestroy_v4000 event_destroy = nullptr;
  PFN_cuStreamGetId_v12000 stream_get_id = nullptr;
};

// Resolves the table on first use (thread-safe). `resolver` is the real
// cuGetProcAddress_v2 when the caller knows it; otherwise it is found in the loaded
// libcuda.so.1. Returns null when no driver is loaded.
const DriverApi* driver_api(PFN_cuGetProcAddress_v12000 resolver = nullptr) noexcept;

// What the runtime cannot do with this driver, one line naming the driver's version and the
// missing entry points with what their absence costs; "" when nothing is missing.
std::string missing_capabilities(const DriverApi& api);

}  // namespace pm2lat::shim
