// The CUDA driver entry points the calibrator uses, resolved the way NVIDIA's own libraries
// resolve them: dlopen("libcuda.so.1"), then cuGetProcAddress_v2 with the CUDA version each
// ABI was introduced with (the PFN suffix in cudaTypedefs.h). Nothing links against libcuda,
// so the calibrator starts on machines without a driver and says so.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>

#include <string>

namespace pm2lat::calibrate::run::driver {

struct CudaDriverApi {
  void* library = nullptr;
  PFN_cuInit_v2000 init = nullptr;
  PFN_cuDriverGetVersion_v2020 driver_get_version = nullptr;
  PFN_cuDeviceGet_v2000 device_get = nullptr;
  PFN_cuDeviceGetCount_v2000 device_get_count = nullptr;
  PFN_cuDeviceGetName_v2000 device_get_name = nullptr;
  PFN_cuDeviceGetAttribute_v2000 device_get_attribute = nullptr;
  PFN_cuDeviceTotalMem_v3020 device_total_mem = nullptr;
  PFN_cuDevicePrimaryCtxRetain_v7000 primary_ctx_retain = nullptr;
  PFN_cuDevicePrimaryCtxRelease_v11000 primary_ctx_release = nullptr;
  PFN_cuCtxSetCurrent_v4000 ctx_set_current = nullptr;
  PFN_cuCtxSynchronize_v2000 ctx_synchronize = nullptr;
  PFN_cuGetErrorName_v6000 get_error_name = nullptr;
  PFN_cuMemAlloc_v3020 mem_alloc = nullptr;
  PFN_cuMemFree_v3020 mem_free = nullptr;
  PFN_cuMemcpyHtoD_v3020 memcpy_htod = nullptr;
  PFN_cuMemcpyDtoH_v3020 memcpy_dtoh = nullptr;
  PFN_cuMemGetInfo_v3020 mem_get_info = nullptr;  // optional
  PFN_cuModuleLoadData_v2000 module_load_data = nullptr;
  PFN_cuModuleGetFunction_v2000 module_get_function = nullptr;
  PFN_cuModuleUnload_v2000 module_unload = nullptr;
  PFN_cuFuncGetName_v12030 func_get_name = nullptr;  // optional (driver 12.3+)
  PFN_cuLaunchKernel_v4000 launch_kernel = nullptr;
  PFN_cuStreamCreate_v2000 stream_create = nullptr;
  PFN_cuStreamDestroy_v4000 stream_destroy = nullptr;
  PFN_cuStreamSynchronize_v2000 stream_synchronize = nullptr;
  PFN_cuEventCreate_v2000 event_create = nullptr;
  PFN_cuEventDestroy_v4000 event_destroy = nullptr;
  PFN_cuEventRecord_v2000 event_record = nullptr;
  PFN_cuEventSynchronize_v2000 event_synchronize = nullptr;
  PFN_cuEventQuery_v2000 event_query = nullptr;
  PFN_cuEventElapsedTime_v12080 event_elapsed_time = nullptr;
  PFN_cuStreamBeginCapture_v10010 stream_begin_capture = nullptr;
  PFN_cuStreamEndCapture_v10000 stream_end_capture = nullptr;
  PFN_cuGraphInstantiateWithFlags_v11040 graph_instantiate = nullptr;
  PFN_cuGraphLaunch_v10000 graph_launch = nullptr;
  PFN_cuGraphExecDestroy_v10000 graph_exec_destroy = nullptr;
  PFN_cuGraphDestroy_v10000 graph_destroy = nullptr;

  // Opens `library` and resolves every entry point; throws BackendError naming what is
  // missing. The handle stays open for the life of the process (the driver is never
  // unloaded by NVIDIA's libraries either).
  static CudaDriverApi load(const std::string& library);

  // Throws BackendError "<what>: <CUDA error name>" unless r is CUDA_SUCCESS.
  void check(CUresult r, const char* what) const;
  std::string error_name(CUresult r) const;
};

}  // namespace pm2lat::calibrate::run::driver
