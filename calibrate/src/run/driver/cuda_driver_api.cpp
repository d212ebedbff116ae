#include "driver/cuda_driver_api.h"

#include <dlfcn.h>
#include <fmt/core.h>

#include "pm2lat/calibrate/run/measurement_backend.h"

namespace pm2lat::calibrate::run::driver {
namespace {

template <typename T>
bool resolve(PFN_cuGetProcAddress_v12000 gpa, const char* name, int version, T& out) {
  void* p = nullptr;
  CUdriverProcAddressQueryResult status{};
  if (gpa(name, &p, version, CU_GET_PROC_ADDRESS_DEFAULT, &status) == CUDA_SUCCESS &&
      status == CU_GET_PROC_ADDRESS_SUCCESS && p != nullptr) {
    out = reinterpret_cast<T>(p);
    return true;
  }
  return false;
}

}  // namespace

CudaDriverApi CudaDriverApi::load(const std::string& library) {
  CudaDriverApi api;
  api.library = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (api.library == nullptr) {
    const char* err = dlerror();
    throw BackendError(
        fmt::format("cannot load the CUDA driver ({}): {}. Is an NVIDIA driver installed?", library,
                    err ? err : "unknown error"));
  }
  auto gpa =
      reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(api.library, "cuGetProcAddress_v2"));
  if (gpa == nullptr) {
    throw BackendError(
        fmt::format("{} has no cuGetProcAddress_v2: the driver is older than CUDA 12", library));
  }
  std::string missing;
  auto need = [&](bool ok, const char* name) {
    if (!ok) missing += fmt::format(" {}", name);
  };
  need(resolve(gpa, "cuInit", 2000, api.init), "cuInit");
  need(resolve(gpa, "cuDriverGetVersion", 2020, api.driver_get_version), "cuDriverGetVersion");
  need(resolve(gpa, "cuDeviceGet", 2000, api.device_get), "cuDeviceGet");
  need(resolve(gpa, "cuDeviceGetCount", 2000, api.device_get_count), "cuDeviceGetCount");
  need(resolve(gpa, "cuDeviceGetName", 2000, api.device_get_name), "cuDeviceGetName");
  need(resolve(gpa, "cuDeviceGetAttribute", 2000, api.device_get_attribute),
       "cuDeviceGetAttribute");
  need(resolve(gpa, "cuDeviceTotalMem", 3020, api.device_total_mem), "cuDeviceTotalMem");
  need(resolve(gpa, "cuDevicePrimaryCtxRetain", 7000, api.primary_ctx_retain),
       "cuDevicePrimaryCtxRetain");
  need(resolve(gpa, "cuDevicePrimaryCtxRelease", 11000, api.primary_ctx_release),
       "cuDevicePrimaryCtxRelease");
  need(resolve(gpa, "cuCtxSetCurrent", 4000, api.ctx_set_current), "cuCtxSetCurrent");
  need(resolve(gpa, "cuCtxSynchronize", 2000, api.ctx_synchronize), "cuCtxSynchronize");
  need(resolve(gpa, "cuGetErrorName", 6000, api.get_error_name), "cuGetErrorName");
  need(resolve(gpa, "cuMemAlloc", 3020, api.mem_alloc), "cuMemAlloc");
  need(resolve(gpa, "cuMemFree", 3020, api.mem_free), "cuMemFree");
  need(resolve(gpa, "cuMemcpyHtoD", 3020, api.memcpy_htod), "cuMemcpyHtoD");
  need(resolve(gpa, "cuMemcpyDtoH", 3020, api.memcpy_dtoh), "cuMemcpyDtoH");
  resolve(gpa, "cuMemGetInfo", 3020, api.mem_get_info);
  need(resolve(gpa, "cuModuleLoadData", 2000, api.module_load_data), "cuModuleLoadData");
  need(resolve(gpa, "cuModuleGetFunction", 2000, api.module_get_function), "cuModuleGetFunction");
  need(resolve(gpa, "cuModuleUnload", 2000, api.module_unload), "cuModuleUnload");
  resolve(gpa, "cuFuncGetName", 12030, api.func_get_name);
  need(resolve(gpa, "cuLaunchKernel", 4000, api.launch_kernel), "cuLaunchKernel");
  need(resolve(gpa, "cuStreamCreate", 2000, api.stream_create), "cuStreamCreate");
  need(resolve(gpa, "cuStreamDestroy", 4000, api.stream_destroy), "cuStreamDestroy");
  need(resolve(gpa, "cuStreamSynchronize", 2000, api.stream_synchronize), "cuStreamSynchronize");
  need(resolve(gpa, "cuEventCreate", 2000, api.event_create), "cuEventCreate");
  need(resolve(gpa, "cuEventDestroy", 4000, api.event_destroy), "cuEventDestroy");
  need(resolve(gpa, "cuEventRecord", 2000, api.event_record), "cuEventRecord");
  need(resolve(gpa, "cuEventSynchronize", 2000, api.event_synchronize), "cuEventSynchronize");
  need(resolve(gpa, "cuEventQuery", 2000, api.event_query), "cuEventQuery");
  need(resolve(gpa, "cuEventElapsedTime", 12080, api.event_elapsed_time), "cuEventElapsedTime");
  need(resolve(gpa, "cuStreamBeginCapture", 10010, api.stream_begin_capture),
       "cuStreamBeginCapture");
  need(resolve(gpa, "cuStreamEndCapture", 10000, api.stream_end_capture), "cuStreamEndCapture");
  need(resolve(gpa, "cuGraphInstantiateWithFlags", 11040, api.graph_instantiate),
       "cuGraphInstantiateWithFlags");
  need(resolve(gpa, "cuGraphLaunch", 10000, api.graph_launch), "cuGraphLaunch");
  need(resolve(gpa, "cuGraphExecDestroy", 10000, api.graph_exec_destroy), "cuGraphExecDestroy");
  need(resolve(gpa, "cuGraphDestroy", 10000, api.graph_destroy), "cuGraphDestroy");
  if (!missing.empty()) {
    throw BackendError(fmt::format(
        "the CUDA driver ({}) lacks entry points the calibrator needs:{}", library, missing));
  }
  return api;
}

std::string CudaDriverApi::error_name(CUresult r) const {
  const char* name = nullptr;
  if (get_error_name != nullptr && get_error_name(r, &name) == CUDA_SUCCESS && name != nullptr)
    return name;
  return fmt::format("CUresult {}", static_cast<int>(r));
}

void CudaDriverApi::check(CUresult r, const char* what) const {
  if (r != CUDA_SUCCESS) throw BackendError(fmt::format("{}: {}", what, error_name(r)));
}

}  // namespace pm2lat::calibrate::run::driver
