// The driver symbols libpm2lat.so exports, for programs that call libcuda directly (linked
// against it, or through dlsym(RTLD_DEFAULT)). Each forwards to the next definition (the
// driver's) through the same hook body as the wrappers cuGetProcAddress hands out.
#include <atomic>

#include "interpose/entry_points.h"
#include "interpose/export.h"
#include "interpose/real_dl.h"
#include "launch_path/driver_hooks.h"
#include "pm2lat/shim/cuda_exported_variants.h"

using namespace pm2lat::shim;

namespace {

std::atomic<void*> g_next[static_cast<std::size_t>(EntryPoint::kCount)] = {};

template <typename T>
T next(EntryPoint e) noexcept {
  std::atomic<void*>& slot = g_next[static_cast<std::size_t>(e)];
  void* p = slot.load(std::memory_order_acquire);
  if (p == nullptr) {
    p = find_next_definition(exported_name(e));
    if (p != nullptr) {
      slot.store(p, std::memory_order_release);
      set_real(e, p);
    }
  }
  return reinterpret_cast<T>(p);
}

}  // namespace

PM2LAT_DECLARE_LEGACY_GET_PROC_ADDRESS(pm2lat_cuGetProcAddress_v1)

extern "C" {

PM2LAT_EXPORT CUresult cuInit(unsigned int flags) {
  return hooks::init(next<PFN_cuInit_v2000>(EntryPoint::kInit), flags);
}

PM2LAT_EXPORT CUresult pm2lat_cuGetProcAddress_v1(const char* symbol, void** pfn, int version,
                                                  cuuint64_t flags) {
  auto real = next<PFN_cuGetProcAddress_v11030>(EntryPoint::kGetProcAddress);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  const CUresult r = real(symbol, pfn, version, flags);
  if (r == CUDA_SUCCESS && pfn != nullptr && *pfn != nullptr) {
    *pfn = wrap_entry_point(*pfn, symbol, version, flags);
  }
  return r;
}

PM2LAT_EXPORT CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int version,
                                           cuuint64_t flags,
                                           CUdriverProcAddressQueryResult* status) {
  auto real = next<PFN_cuGetProcAddress_v12000>(EntryPoint::kGetProcAddressV2);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  // The caller's exact symbol, version and flags go to the driver, and its status comes back
  // untouched; only a pointer we recognise is swapped for our wrapper of that pointer.
  const CUresult r = real(symbol, pfn, version, flags, status);
  if (r == CUDA_SUCCESS && pfn != nullptr && *pfn != nullptr) {
    *pfn = wrap_entry_point(*pfn, symbol, version, flags);
  }
  return r;
}

PM2LAT_EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy,
                                      unsigned int gz, unsigned int bx, unsigned int by,
                                      unsigned int bz, unsigned int smem, CUstream s, void** p,
                                      void** e) {
  return hooks::launch_kernel(next<PFN_cuLaunchKernel_v4000>(EntryPoint::kLaunchKernel),
                              LaunchApi::kCuLaunchKernel, f, gx, gy, gz, bx, by, bz, smem, s, p, e);
}

PM2LAT_EXPORT CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy,
                                           unsigned int gz, unsigned int bx, unsigned int by,
                                           unsigned int bz, unsigned int smem, CUstream s, void** p,
                                           void** e) {
  return hooks::launch_kernel(next<PFN_cuLaunchKernel_v4000>(EntryPoint::kLaunchKernelPtsz),
                              LaunchApi::kCuLaunchKernelPtsz, f, gx, gy, gz, bx, by, bz, smem, s, p,
                              e);
}

PM2LAT_EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig* c, CUfunction f, void** p, void** e) {
  return hooks::launch_kernel_ex(next<PFN_cuLaunchKernelEx_v11060>(EntryPoint::kLaunchKernelEx),
                                 LaunchApi::kCuLaunchKernelEx, c, f, p, e);
}

PM2LAT_EXPORT CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig* c, CUfunction f, void** p,
                                             void** e) {
  return hooks::launch_kernel_ex(next<PFN_cuLaunchKernelEx_v11060>(EntryPoint::kLaunchKernelExPtsz),
                                 LaunchApi::kCuLaunchKernelExPtsz, c, f, p, e);
}

PM2LAT_EXPORT CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gx, unsigned int gy,
                                                 unsigned int gz, unsigned int bx, unsigned int by,
                                                 unsigned int bz, unsigned int smem, CUstream s,
                                                 void** p) {
  return hooks::launch_cooperative(
      next<PFN_cuLaunchCooperativeKernel_v9000>(EntryPoint::kLaunchCooperativeKernel),
      LaunchApi::kCuLaunchCooperativeKernel, f, gx, gy, gz, bx, by, bz, smem, s, p);
}

PM2LAT_EXPORT CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gx,
                                                      unsigned int gy, unsigned int gz,
                                                      unsigned int bx, unsigned int by,
                                                      unsigned int bz, unsigned int smem,
                                                      CUstream s, void** p) {
  return hooks::launch_cooperative(
      next<PFN_cuLaunchCooperativeKernel_v9000>(EntryPoint::kLaunchCooperativeKernelPtsz),
      LaunchApi::kCuLaunchCooperativeKernelPtsz, f, gx, gy, gz, bx, by, bz, smem, s, p);
}

PM2LAT_EXPORT CUresult cuGraphLaunch(CUgraphExec g, CUstream s) {
  return hooks::graph_launch(next<PFN_cuGraphLaunch_v10000>(EntryPoint::kGraphLaunch),
                             LaunchApi::kCuGraphLaunch, g, s);
}

PM2LAT_EXPORT CUresult cuGraphLaunch_ptsz(CUgraphExec g, CUstream s) {
  return hooks::graph_launch(next<PFN_cuGraphLaunch_v10000>(EntryPoint::kGraphLaunchPtsz),
                             LaunchApi::kCuGraphLaunchPtsz, g, s);
}

PM2LAT_EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec* e, CUgraph g,
                                                   unsigned long long f) {
  return hooks::graph_instantiate_with_flags(
      next<PFN_cuGraphInstantiateWithFlags_v11040>(EntryPoint::kGraphInstantiateWithFlags), e, g,
      f);
}

PM2LAT_EXPORT CUresult cuGraphInstantiateWithParams(CUgraphExec* e, CUgraph g,
                                                    CUDA_GRAPH_INSTANTIATE_PARAMS* p) {
  return hooks::graph_instantiate_with_params(
      next<PFN_cuGraphInstantiateWithParams_v12000>(EntryPoint::kGraphInstantiateWithParams), e, g,
      p);
}

PM2LAT_EXPORT CUresult cuGraphInstantiateWithParams_ptsz(CUgraphExec* e, CUgraph g,
                                                         CUDA_GRAPH_INSTANTIATE_PARAMS* p) {
  return hooks::graph_instantiate_with_params(
      next<PFN_cuGraphInstantiateWithParams_v12000>(EntryPoint::kGraphInstantiateWithParamsPtsz), e,
      g, p);
}

PM2LAT_EXPORT CUresult cuGraphExecDestroy(CUgraphExec e) {
  return hooks::graph_exec_destroy(
      next<PFN_cuGraphExecDestroy_v10000>(EntryPoint::kGraphExecDestroy), e);
}

PM2LAT_EXPORT CUresult cuGraphDestroy(CUgraph g) {
  return hooks::graph_destroy(next<PFN_cuGraphDestroy_v10000>(EntryPoint::kGraphDestroy), g);
}

PM2LAT_EXPORT CUresult cuStreamBeginCapture_v2(CUstream s, CUstreamCaptureMode m) {
  return hooks::begin_capture(
      next<PFN_cuStreamBeginCapture_v10010>(EntryPoint::kStreamBeginCaptureV2), s, m);
}

PM2LAT_EXPORT CUresult cuStreamBeginCapture_v2_ptsz(CUstream s, CUstreamCaptureMode m) {
  return hooks::begin_capture(
      next<PFN_cuStreamBeginCapture_v10010>(EntryPoint::kStreamBeginCaptureV2Ptsz), s, m);
}

PM2LAT_EXPORT CUresult cuStreamBeginCaptureToGraph(CUstream s, CUgraph g, const CUgraphNode* d,
                                                   const CUgraphEdgeData* e, size_t n,
                                                   CUstreamCaptureMode m) {
  return hooks::begin_capture_to_graph(
      next<PFN_cuStreamBeginCaptureToGraph_v12030>(EntryPoint::kStreamBeginCaptureToGraph), s, g, d,
      e, n, m);
}

PM2LAT_EXPORT CUresult cuStreamBeginCaptureToGraph_ptsz(CUstream s, CUgraph g, const CUgraphNode* d,
                                                        const CUgraphEdgeData* e, size_t n,
                                                        CUstreamCaptureMode m) {
  return hooks::begin_capture_to_graph(
      next<PFN_cuStreamBeginCaptureToGraph_v12030>(EntryPoint::kStreamBeginCaptureToGraphPtsz), s,
      g, d, e, n, m);
}

PM2LAT_EXPORT CUresult cuStreamEndCapture(CUstream s, CUgraph* g) {
  return hooks::end_capture(next<PFN_cuStreamEndCapture_v10000>(EntryPoint::kStreamEndCapture), s,
                            g);
}

PM2LAT_EXPORT CUresult cuStreamEndCapture_ptsz(CUstream s, CUgraph* g) {
  return hooks::end_capture(next<PFN_cuStreamEndCapture_v10000>(EntryPoint::kStreamEndCapturePtsz),
                            s, g);
}

PM2LAT_EXPORT CUresult cuModuleUnload(CUmodule m) {
  return hooks::module_unload(next<PFN_cuModuleUnload_v2000>(EntryPoint::kModuleUnload), m);
}

PM2LAT_EXPORT CUresult cuLibraryUnload(CUlibrary l) {
  return hooks::library_unload(next<PFN_cuLibraryUnload_v12000>(EntryPoint::kLibraryUnload), l);
}

}  // extern "C"
