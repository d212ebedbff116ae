// CUDA runtime launch entry points. The driver-level observation of a launch (interposer or
// CUPTI callback) stays authoritative; these only name the runtime API that led to it, and
// record the launch themselves when nothing at driver level saw it (a runtime reaching the
// driver through a path no hook covers). CUDA 13 `<<<>>>` goes through __cudaLaunchKernel
// with a cudaKernel_t, not cudaLaunchKernel, so both are covered.
#include <cuda_runtime_api.h>

#include "interpose/export.h"
#include "interpose/library_context.h"
#include "launch_path/launch_path_state.h"
#include "launch_path/launch_recorder.h"
#include "launch_path/thread_state.h"

using namespace pm2lat;
using namespace pm2lat::shim;

// Declarations nvcc-generated code uses (crt/device_functions.h, nvcc-only), and the
// per-thread-stream variants cuda_runtime_api.h declares only in that build mode.
extern "C" {
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void** args,
                               size_t sharedMem, cudaStream_t stream);
cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void** args,
                                    size_t sharedMem, cudaStream_t stream);
extern decltype(cudaLaunchKernel) cudaLaunchKernel_ptsz;
extern decltype(cudaLaunchKernelExC) cudaLaunchKernelExC_ptsz;
}

namespace {

NextDefinition g_func_get_name;

// The device function's name for a host stub, from the runtime the launch went to (`real`),
// on the stub's first launch only.
const char* host_stub_name(const void* func, const void* real) noexcept {
  if (HandleCache::instance().find(reinterpret_cast<std::uint64_t>(func)) != nullptr)
    return nullptr;
  auto get = g_func_get_name.get<decltype(&cudaFuncGetName)>("cudaFuncGetName", real);
  const char* name = nullptr;
  if (get == nullptr || get(&name, func) != cudaSuccess) return nullptr;
  return name;
}

template <typename CallReal>
cudaError_t runtime_launch(LaunchCall call, bool host_stub, const void* func, const void* runtime,
                           CallReal&& real) {
  ThreadState& ts = thread_state();
  LaunchPathState& lp = launch_path_state();
  if (ts.internal || ts.hook_depth != 0 || ts.runtime.active || !lp.ready()) return real();
  RuntimePending& p = ts.runtime;
  p.active = true;
  p.consumed = false;
  p.api = call.api;
  p.handle = call.handle;
  const cudaError_t r = real();
  const bool seen_by_driver = p.consumed;
  p.active = false;
  if (!seen_by_driver && r == cudaSuccess && lp.ready()) {
    // A host stub is not a driver handle: name it through the runtime, never the driver.
    call.host_stub = host_stub;
    if (host_stub) call.name_hint = host_stub_name(func, runtime);
    LaunchSlot* s = begin_kernel_slot(call, 0, slot_flags::kRuntimeOnly);
    if (s != nullptr) s->runtime_api = call.api;
    commit_slot(s, static_cast<std::int32_t>(r));
  }
  return r;
}

LaunchCall make_call(LaunchApi api, const void* handle, dim3 grid, dim3 block, size_t smem,
                     cudaStream_t stream, void** args) {
  LaunchCall c;
  c.api = api;
  c.handle = reinterpret_cast<std::uint64_t>(handle);
  c.grid[0] = grid.x;
  c.grid[1] = grid.y;
  c.grid[2] = grid.z;
  c.block[0] = block.x;
  c.block[1] = block.y;
  c.block[2] = block.z;
  c.smem = static_cast<std::uint32_t>(smem);
  c.stream = reinterpret_cast<std::uint64_t>(stream);
  c.params = args;
  return c;
}

LaunchCall make_ex_call(LaunchApi api, const cudaLaunchConfig_t* config, const void* func,
                        void** args) {
  if (config == nullptr) return make_call(api, func, dim3(), dim3(), 0, nullptr, args);
  LaunchCall c = make_call(api, func, config->gridDim, config->blockDim, config->dynamicSmemBytes,
                           config->stream, args);
  for (unsigned i = 0; i < config->numAttrs && config->attrs != nullptr; ++i) {
    const cudaLaunchAttribute& a = config->attrs[i];
    if (a.id == cudaLaunchAttributeClusterDimension) {
      c.cluster[0] = a.val.clusterDim.x ? a.val.clusterDim.x : 1;
      c.cluster[1] = a.val.clusterDim.y ? a.val.clusterDim.y : 1;
      c.cluster[2] = a.val.clusterDim.z ? a.val.clusterDim.z : 1;
    } else if (a.id == cudaLaunchAttributeCooperative) {
      c.cooperative = a.val.cooperative != 0;
    }
  }
  return c;
}

// The definition the caller would have reached, from its own scope (next_definition.h).
#define PM2LAT_REAL(fn)                                                       \
  static NextDefinition next_##fn;                                            \
  auto real = next_##fn.get<decltype(&fn)>(#fn, __builtin_return_address(0)); \
  if (real == nullptr) return cudaErrorInitializationError

}  // namespace

extern "C" {

PM2LAT_EXPORT cudaError_t cudaLaunchKernel(const void* func, dim3 gridDim, dim3 blockDim,
                                           void** args, size_t sharedMem, cudaStream_t stream) {
  PM2LAT_REAL(cudaLaunchKernel);
  return runtime_launch(
      make_call(LaunchApi::kCudaLaunchKernel, func, gridDim, blockDim, sharedMem, stream, args),
      true, func, reinterpret_cast<const void*>(real),
      [&] { return real(func, gridDim, blockDim, args, sharedMem, stream); });
}

PM2LAT_EXPORT cudaError_t cudaLaunchKernel_ptsz(const void* func, dim3 gridDim, dim3 blockDim,
                                                void** args, size_t sharedMem,
                                                cudaStream_t stream) {
  PM2LAT_REAL(cudaLaunchKernel_ptsz);
  return runtime_launch(
      make_call(LaunchApi::kCudaLaunchKernelPtsz, func, gridDim, blockDim, sharedMem, stream, args),
      true, func, reinterpret_cast<const void*>(real),
      [&] { return real(func, gridDim, blockDim, args, sharedMem, stream); });
}

PM2LAT_EXPORT cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void* func,
                                              void** args) {
  PM2LAT_REAL(cudaLaunchKernelExC);
  return runtime_launch(make_ex_call(LaunchApi::kCudaLaunchKernelExC, config, func, args), true,
                        func, reinterpret_cast<const void*>(real),
                        [&] { return real(config, func, args); });
}

PM2LAT_EXPORT cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t* config,
                                                   const void* func, void** args) {
  PM2LAT_REAL(cudaLaunchKernelExC_ptsz);
  return runtime_launch(make_ex_call(LaunchApi::kCudaLaunchKernelExCPtsz, config, func, args), true,
                        func, reinterpret_cast<const void*>(real),
                        [&] { return real(config, func, args); });
}

PM2LAT_EXPORT cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
                                             void** args, size_t sharedMem, cudaStream_t stream) {
  PM2LAT_REAL(__cudaLaunchKernel);
  return runtime_launch(make_call(LaunchApi::kCudaLaunchKernelInternal, kernel, gridDim, blockDim,
                                  sharedMem, stream, args),
                        false, kernel, reinterpret_cast<const void*>(real),
                        [&] { return real(kernel, gridDim, blockDim, args, sharedMem, stream); });
}

PM2LAT_EXPORT cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
                                                  void** args, size_t sharedMem,
                                                  cudaStream_t stream) {
  PM2LAT_REAL(__cudaLaunchKernel_ptsz);
  return runtime_launch(make_call(LaunchApi::kCudaLaunchKernelInternalPtsz, kernel, gridDim,
                                  blockDim, sharedMem, stream, args),
                        false, kernel, reinterpret_cast<const void*>(real),
                        [&] { return real(kernel, gridDim, blockDim, args, sharedMem, stream); });
}

}  // extern "C"
