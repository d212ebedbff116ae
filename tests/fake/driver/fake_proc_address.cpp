// cuGetProcAddress of the fake driver: base symbol name + CUDA version + stream flags ->
// the exported variant, with the same rules the real driver documents (the variant
// introduced in the highest version <= the requested one; `_ptsz` only with the per-thread
// flag; a missing symbol is CUDA_SUCCESS with a NULL pointer and SYMBOL_NOT_FOUND; a version
// above the driver's is CUDA_ERROR_INVALID_VALUE). The driver's version is chosen per test
// (FAKE_CUDA_DRIVER_VERSION): entry points introduced after it are not there.
#include <cstdlib>
#include <cstring>

#include "fake_driver_state.h"
#include "pm2lat/shim/cuda_exported_variants.h"

PM2LAT_DECLARE_LEGACY_GET_PROC_ADDRESS(fake_legacy_get_proc_address)
PM2LAT_DECLARE_EVENT_ELAPSED_TIME_V1(fake_event_elapsed_time_v1)

namespace {

struct Entry {
  const char* symbol;
  int version;       // CUDA version that introduced this ABI
  void* legacy;      // default / legacy-stream variant
  void* per_thread;  // `_ptsz`/`_ptds` variant, or null when there is none
};

#define FN(x) (reinterpret_cast<void*>(&(x)))

const Entry kEntries[] = {
    {"cuInit", 2000, FN(cuInit), nullptr},
    {"cuDriverGetVersion", 2020, FN(cuDriverGetVersion), nullptr},
    {"cuDeviceGet", 2000, FN(cuDeviceGet), nullptr},
    {"cuDeviceGetCount", 2000, FN(cuDeviceGetCount), nullptr},
    {"cuDeviceGetName", 2000, FN(cuDeviceGetName), nullptr},
    {"cuDeviceGetAttribute", 2000, FN(cuDeviceGetAttribute), nullptr},
    {"cuDeviceTotalMem", 3020, FN(cuDeviceTotalMem_v2), nullptr},
    {"cuDevicePrimaryCtxRetain", 7000, FN(cuDevicePrimaryCtxRetain), nullptr},
    {"cuDevicePrimaryCtxRelease", 11000, FN(cuDevicePrimaryCtxRelease_v2), nullptr},
    {"cuCtxCreate", 12050, FN(cuCtxCreate_v4), nullptr},
    {"cuCtxSetCurrent", 4000, FN(cuCtxSetCurrent), nullptr},
    {"cuCtxGetCurrent", 4000, FN(cuCtxGetCurrent), nullptr},
    {"cuCtxGetDevice", 2000, FN(cuCtxGetDevice), nullptr},
    {"cuCtxSynchronize", 2000, FN(cuCtxSynchronize), nullptr},
    {"cuGetErrorString", 6000, FN(cuGetErrorString), nullptr},
    {"cuGetErrorName", 6000, FN(cuGetErrorName), nullptr},
    {"cuMemAlloc", 3020, FN(cuMemAlloc_v2), nullptr},
    {"cuMemFree", 3020, FN(cuMemFree_v2), nullptr},
    {"cuMemcpyHtoD", 3020, FN(cuMemcpyHtoD_v2), nullptr},
    {"cuMemcpyDtoH", 3020, FN(cuMemcpyDtoH_v2), nullptr},
    {"cuMemcpyDtoD", 3020, FN(cuMemcpyDtoD_v2), nullptr},
    {"cuMemcpy", 4000, FN(cuMemcpy), nullptr},
    {"cuMemsetD8", 3020, FN(cuMemsetD8_v2), nullptr},
    {"cuMemsetD32", 3020, FN(cuMemsetD32_v2), nullptr},
    {"cuModuleLoadData", 2000, FN(cuModuleLoadData), nullptr},
    {"cuModuleLoadDataEx", 2010, FN(cuModuleLoadDataEx), nullptr},
    {"cuModuleGetFunction", 2000, FN(cuModuleGetFunction), nullptr},
    {"cuModuleUnload", 2000, FN(cuModuleUnload), nullptr},
    {"cuLibraryLoadData", 12000, FN(cuLibraryLoadData), nullptr},
    {"cuLibraryUnload", 12000, FN(cuLibraryUnload), nullptr},
    {"cuLibraryGetKernel", 12000, FN(cuLibraryGetKernel), nullptr},
    {"cuKernelGetFunction", 12000, FN(cuKernelGetFunction), nullptr},
    {"cuKernelGetAttribute", 12000, FN(cuKernelGetAttribute), nullptr},
    {"cuFuncGetName", 12030, FN(cuFuncGetName), nullptr},
    {"cuKernelGetName", 12030, FN(cuKernelGetName), nullptr},
    {"cuFuncGetParamInfo", 12040, FN(cuFuncGetParamInfo), nullptr},
    {"cuKernelGetParamInfo", 12040, FN(cuKernelGetParamInfo), nullptr},
    {"cuFuncGetAttribute", 2020, FN(cuFuncGetAttribute), nullptr},
    {"cuLaunchKernel", 4000, FN(cuLaunchKernel), FN(cuLaunchKernel_ptsz)},
    {"cuLaunchKernelEx", 11060, FN(cuLaunchKernelEx), FN(cuLaunchKernelEx_ptsz)},
    {"cuLaunchCooperativeKernel", 9000, FN(cuLaunchCooperativeKernel),
     FN(cuLaunchCooperativeKernel_ptsz)},
    {"cuStreamCreate", 2000, FN(cuStreamCreate), nullptr},
    {"cuStreamDestroy", 4000, FN(cuStreamDestroy_v2), nullptr},
    {"cuStreamGetId", 12000, FN(cuStreamGetId), FN(cuStreamGetId_ptsz)},
    {"cuStreamSynchronize", 2000, FN(cuStreamSynchronize), nullptr},
    {"cuEventCreate", 2000, FN(cuEventCreate), nullptr},
    {"cuEventDestroy", 4000, FN(cuEventDestroy_v2), nullptr},
    {"cuEventRecord", 2000, FN(cuEventRecord), FN(cuEventRecord_ptsz)},
    {"cuEventQuery", 2000, FN(cuEventQuery), nullptr},
    {"cuEventSynchronize", 2000, FN(cuEventSynchronize), nullptr},
    {"cuEventElapsedTime", 2000, FN(fake_event_elapsed_time_v1), nullptr},
    {"cuEventElapsedTime", 12080, FN(cuEventElapsedTime_v2), nullptr},
    {"cuThreadExchangeStreamCaptureMode", 10010, FN(cuThreadExchangeStreamCaptureMode), nullptr},
    {"cuStreamBeginCapture", 10010, FN(cuStreamBeginCapture_v2), FN(cuStreamBeginCapture_v2_ptsz)},
    {"cuStreamEndCapture", 10000, FN(cuStreamEndCapture), FN(cuStreamEndCapture_ptsz)},
    {"cuStreamIsCapturing", 10000, FN(cuStreamIsCapturing), FN(cuStreamIsCapturing_ptsz)},
    {"cuStreamGetCaptureInfo", 11030, FN(cuStreamGetCaptureInfo_v2),
     FN(cuStreamGetCaptureInfo_v2_ptsz)},
    {"cuStreamGetCaptureInfo", 12030, FN(cuStreamGetCaptureInfo_v3),
     FN(cuStreamGetCaptureInfo_v3_ptsz)},
    {"cuGraphInstantiate", 12000, FN(cuGraphInstantiateWithFlags), nullptr},
    {"cuGraphInstantiateWithFlags", 11040, FN(cuGraphInstantiateWithFlags), nullptr},
    {"cuGraphInstantiateWithParams", 12000, FN(cuGraphInstantiateWithParams),
     FN(cuGraphInstantiateWithParams_ptsz)},
    {"cuGraphLaunch", 10000, FN(cuGraphLaunch), FN(cuGraphLaunch_ptsz)},
    {"cuGraphExecDestroy", 10000, FN(cuGraphExecDestroy), nullptr},
    {"cuGraphDestroy", 10000, FN(cuGraphDestroy), nullptr},
    {"cuGetProcAddress", 11030, FN(fake_legacy_get_proc_address), nullptr},
    {"cuGetProcAddress", 12000, FN(cuGetProcAddress_v2), nullptr},
};

#undef FN

// FAKE_CUDA_PROC_TRAMPOLINES=1: cuGetProcAddress hands out internal addresses that are not
// the exported symbols (functions of the driver that forward to them), as a driver may: a tool
// cannot recognise the entry points by address then.
template <auto Fn>
struct Trampoline;
template <typename R, typename... A, R (*Fn)(A...)>
struct Trampoline<Fn> {
  __attribute__((noinline)) static R call(A... a) { return Fn(a...); }
};

#define TRAMPOLINE(x) \
  { reinterpret_cast<void*>(&(x)), reinterpret_cast<void*>(&Trampoline<&(x)>::call) }

struct Internal {
  void* exported;
  void* internal;
};

const Internal kInternal[] = {
    TRAMPOLINE(cuLaunchKernel),
    TRAMPOLINE(cuLaunchKernel_ptsz),
    TRAMPOLINE(cuLaunchKernelEx),
    TRAMPOLINE(cuLaunchKernelEx_ptsz),
    TRAMPOLINE(cuLaunchCooperativeKernel),
    TRAMPOLINE(cuLaunchCooperativeKernel_ptsz),
    TRAMPOLINE(cuGraphLaunch),
    TRAMPOLINE(cuGraphLaunch_ptsz),
    TRAMPOLINE(cuGraphInstantiateWithFlags),
    TRAMPOLINE(cuStreamBeginCapture_v2),
    TRAMPOLINE(cuStreamEndCapture),
};

#undef TRAMPOLINE

void* internal_address(void* exported) {
  static const bool enabled = std::getenv("FAKE_CUDA_PROC_TRAMPOLINES") != nullptr;
  if (!enabled) return exported;
  for (const Internal& i : kInternal) {
    if (i.exported == exported) return i.internal;
  }
  return exported;
}

CUresult lookup(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags,
                CUdriverProcAddressQueryResult* status) {
  if (symbol == nullptr || pfn == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *pfn = nullptr;
  // cuda.h: "If the specified CUDA version is greater than the driver version, the API will
  // return CUDA_ERROR_INVALID_VALUE."
  const int driver = fake_cuda::driver_version();
  if (cudaVersion > driver) return CUDA_ERROR_INVALID_VALUE;
  const Entry* best = nullptr;
  bool found_name = false;
  for (const Entry& e : kEntries) {
    // An entry point newer than the driver does not exist in it.
    if (std::strcmp(e.symbol, symbol) != 0 || e.version > driver) continue;
    found_name = true;
    if (e.version <= cudaVersion && (best == nullptr || e.version > best->version)) best = &e;
  }
  if (best == nullptr) {
    if (status) {
      *status = found_name ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                           : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    }
    return CUDA_SUCCESS;
  }
  const bool per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
  *pfn = internal_address((per_thread && best->per_thread) ? best->per_thread : best->legacy);
  if (status) *status = CU_GET_PROC_ADDRESS_SUCCESS;
  return CUDA_SUCCESS;
}

}  // namespace

extern "C" CUresult fake_legacy_get_proc_address(const char* symbol, void** pfn, int cudaVersion,
                                                 cuuint64_t flags) {
  return lookup(symbol, pfn, cudaVersion, flags, nullptr);
}

extern "C" CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int cudaVersion,
                                        cuuint64_t flags, CUdriverProcAddressQueryResult* status) {
  return lookup(symbol, pfn, cudaVersion, flags, status);
}
