// The exported driver API of the fake libcuda.so.1. Signatures come from cuda.h (and, for
// the variants cuda.h does not declare in this build mode, from cudaTypedefs.h through
// cuda_exported_variants.h), so the fake is ABI-faithful by construction.
// cupti.h brings the driver callback ids and the generated_cuda_meta.h parameter structs
// (which need the _v1 typedefs cupti.h declares first).
#include <cupti.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <utility>

#include "fake_device_memory.h"
#include "fake_driver_state.h"
#include "fake_sim.h"
#include "pm2lat/shim/cuda_exported_variants.h"

using namespace fake_cuda;

namespace {

struct Context {
  int device = 0;
};
// One primary context per device, each naming its device.
Context* primary_context(int device) {
  static std::array<Context, fake_sim::kMaxDevices> contexts = [] {
    std::array<Context, fake_sim::kMaxDevices> c{};
    for (int d = 0; d < fake_sim::kMaxDevices; ++d) c[d].device = d;
    return c;
  }();
  return &contexts[static_cast<std::size_t>(device)];
}
thread_local CUcontext t_current = nullptr;

bool valid_device(CUdevice dev) { return dev >= 0 && dev < fake_sim::device_count(); }

CUresult check_init() { return state().initialized ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED; }

// Waits for the simulated device the way the real driver does with more host threads than
// cores (CU_CTX_SCHED_AUTO yields then): sleeping, not spinning, so that threads done with
// their work do not take the CPU from the others.
void wait_until(std::uint64_t ready_ns) {
  for (std::uint64_t now = now_ns(); now < ready_ns; now = now_ns()) {
    std::this_thread::sleep_for(std::chrono::nanoseconds(ready_ns - now));
  }
}

void fill_dims(LaunchSpec& s, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
               unsigned bz) {
  s.grid[0] = gx;
  s.grid[1] = gy;
  s.grid[2] = gz;
  s.block[0] = bx;
  s.block[1] = by;
  s.block[2] = bz;
}

bool dims_valid(const LaunchSpec& s) {
  for (int i = 0; i < 3; ++i) {
    if (s.grid[i] == 0 || s.block[i] == 0) return false;
  }
  return s.block[0] * s.block[1] * s.block[2] <= 1024;
}

template <typename Params>
CUresult launch_with_callbacks(int cbid, const char* fname, const Params& params, LaunchSpec spec) {
  if (check_init() != CUDA_SUCCESS) return CUDA_ERROR_NOT_INITIALIZED;
  spec.function = launchable(reinterpret_cast<CUfunction>(spec.function));
  if (spec.function == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if (!dims_valid(spec)) return CUDA_ERROR_INVALID_VALUE;
  // A GEMM kernel's Params say what problem it solves, which its duration depends on.
  const KernelDecl& decl = spec.function->decl;
  if (decl.params_known && !decl.param_sizes.empty()) {
    spec.has_gemm_work =
        fake_sim::read_gemm_work(spec.kernel_params, decl.param_sizes[0], spec.gemm_work);
  }
  return with_api_callbacks(cbid, fname, &params, spec.function->name, nullptr,
                            [&](std::uint32_t corr) { return launch(spec, corr); });
}

CUresult launch_ex(int cbid, const char* fname, const CUlaunchConfig* config, CUfunction f,
                   void** kernelParams, void** extra) {
  if (config == nullptr) return CUDA_ERROR_INVALID_VALUE;
  LaunchSpec spec;
  spec.function = reinterpret_cast<Function*>(f);
  fill_dims(spec, config->gridDimX, config->gridDimY, config->gridDimZ, config->blockDimX,
            config->blockDimY, config->blockDimZ);
  spec.smem = config->sharedMemBytes;
  spec.stream = config->hStream;
  spec.kernel_params = kernelParams;
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    const CUlaunchAttribute& a = config->attrs[i];
    if (a.id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
      spec.cluster[0] = a.value.clusterDim.x;
      spec.cluster[1] = a.value.clusterDim.y;
      spec.cluster[2] = a.value.clusterDim.z;
    } else if (a.id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE) {
      spec.cooperative = a.value.cooperative != 0 ? 1 : 0;
    }
  }
  cuLaunchKernelEx_params params{config, f, kernelParams, extra};
  return launch_with_callbacks(cbid, fname, params, spec);
}

CUresult begin_capture(CUstream hStream, CUstreamCaptureMode mode) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  Stream* st = resolve_stream(hStream);
  if (st->capturing) return CUDA_ERROR_ILLEGAL_STATE;
  st->capturing = true;
  st->capture_invalidated = false;
  st->capture_mode = mode;
  st->capture_thread = capture_thread_id();
  st->capture_id = s.next_capture_id++;
  st->capture_graph = new Graph();
  st->capture_graph->id = s.next_graph_id++;
  st->last_node = nullptr;
  s.capturing.insert(st);
  return CUDA_SUCCESS;
}

CUresult end_capture(CUstream hStream, CUgraph* phGraph) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  Stream* st = resolve_stream(hStream);
  if (!st->capturing) return CUDA_ERROR_ILLEGAL_STATE;
  st->capturing = false;
  s.capturing.erase(st);
  Graph* g = st->capture_graph;
  st->capture_graph = nullptr;
  st->last_node = nullptr;
  if (st->capture_invalidated) {
    if (phGraph) *phGraph = nullptr;
    return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  }
  if (phGraph) *phGraph = reinterpret_cast<CUgraph>(g);
  return CUDA_SUCCESS;
}

CUresult is_capturing(CUstream hStream, CUstreamCaptureStatus* status) {
  if (status == nullptr) return CUDA_ERROR_INVALID_VALUE;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  Stream* st = resolve_stream(hStream);
  *status = !st->capturing            ? CU_STREAM_CAPTURE_STATUS_NONE
            : st->capture_invalidated ? CU_STREAM_CAPTURE_STATUS_INVALIDATED
                                      : CU_STREAM_CAPTURE_STATUS_ACTIVE;
  return CUDA_SUCCESS;
}

CUresult capture_info(CUstream hStream, CUstreamCaptureStatus* status, cuuint64_t* id,
                      CUgraph* graph, const CUgraphNode** deps, const CUgraphEdgeData** edges,
                      size_t* num_deps) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  Stream* st = resolve_stream(hStream);
  if (status)
    *status = st->capturing ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
  if (!st->capturing) return CUDA_SUCCESS;
  if (id) *id = st->capture_id;
  if (graph) *graph = reinterpret_cast<CUgraph>(st->capture_graph);
  if (deps) *deps = st->last_node ? &st->last_node : nullptr;
  if (edges) *edges = nullptr;
  if (num_deps) *num_deps = st->last_node ? 1 : 0;
  return CUDA_SUCCESS;
}

CUresult instantiate(CUgraphExec* phExec, CUgraph hGraph) {
  if (phExec == nullptr || hGraph == nullptr) return CUDA_ERROR_INVALID_VALUE;
  State& s = state();
  std::vector<FakeGraphEvent> events;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    auto* g = reinterpret_cast<Graph*>(hGraph);
    auto* exec = new GraphExec();
    exec->graph_id = g->id;
    for (Node* n : g->nodes) {
      auto* clone = new Node(*n);
      clone->id = s.next_node_id++;
      clone->original = n;
      exec->nodes.push_back(clone);
      events.push_back(FakeGraphEvent{20 /*CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED*/, nullptr, hGraph,
                                      hGraph, reinterpret_cast<CUgraphNode>(clone),
                                      reinterpret_cast<CUgraphNode>(n), n->type,
                                      reinterpret_cast<CUgraphExec>(exec)});
    }
    *phExec = reinterpret_cast<CUgraphExec>(exec);
  }
  for (const auto& e : events) notify_graph_event(e);
  return CUDA_SUCCESS;
}

CUresult record_event(CUevent hEvent, CUstream hStream) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  auto* ev = reinterpret_cast<Event*>(hEvent);
  if (ev == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  Stream* st = resolve_stream(hStream);
  // An event and a stream of different contexts (a default stream is the current context's).
  if (ev->device != (st->device >= 0 ? st->device : fake_cuda::current_device()))
    return CUDA_ERROR_INVALID_HANDLE;
  if (st->capturing) {
    // Recording into a capturing stream would add a node to the user's graph; the fake
    // refuses so that a tool doing it by mistake is caught by the tests.
    st->capture_invalidated = true;
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  const std::uint64_t now = now_ns();
  ev->time_ns = st->ready_ns > now ? st->ready_ns : now;
  ev->recorded = true;
  return CUDA_SUCCESS;
}

// The synchronous copies and memsets: they run on the legacy default stream after the work
// queued there, the calling thread waits for them, and during a stream capture they are
// unsafe calls as synchronisation is (cuda.h: cuMemcpy* "synchronous" API behaviour).
// `copy_kind` is a CUpti_ActivityMemcpyKind; `memset` a memset instead of a copy. `valid`:
// every device range lies inside a live allocation (else the call fails, its API callbacks
// still made, as the driver's are for a call that returns an error).
template <typename Params, typename Body>
CUresult synchronous_transfer(int cbid, const char* fname, const Params& params, bool valid,
                              bool memset, std::uint8_t copy_kind, std::uint64_t bytes,
                              Body&& body) {
  if (CUresult r = check_init()) return r;
  return with_api_callbacks(cbid, fname, &params, nullptr, nullptr, [&](std::uint32_t corr) {
    if (!valid) return CUDA_ERROR_INVALID_VALUE;
    {
      std::lock_guard<std::mutex> lock(state().mu);
      if (CUresult r = check_capture_safety_locked(state())) return r;
    }
    body();
    wait_until(transfer(nullptr, memset, copy_kind, bytes, corr));
    return CUDA_SUCCESS;
  });
}

// A copy between two host-visible views (a device range's from device_bytes, which is null
// when the range lies outside every allocation): refused when either is null.
template <typename Params>
CUresult copy_transfer(int cbid, const char* fname, const Params& params, void* to,
                       const void* from, std::uint8_t copy_kind, std::size_t n) {
  return synchronous_transfer(cbid, fname, params, to != nullptr && from != nullptr, false,
                              copy_kind, n, [&] { std::memmove(to, from, n); });
}

}  // namespace

int fake_cuda::current_device() {
  return t_current != nullptr ? reinterpret_cast<Context*>(t_current)->device : 0;
}

extern "C" {

// ---- initialisation, devices, contexts ----------------------------------------------------

CUresult cuInit(unsigned int) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.initialized) {
    s.initialized = true;
    s.default_stream.id = 7;
    if (const char* v = std::getenv("FAKE_CUDA_MAX_BACKLOG_US")) {
      s.max_backlog_ns = std::strtoull(v, nullptr, 10) * 1000;
    }
    // Set and not empty (tests switch it off with an empty value): one line per execution
    // is ~200 bytes held until exit, gigabytes for a launch storm.
    const char* log_kernels = std::getenv("FAKE_CUDA_LOG_KERNELS");
    s.log_kernels = log_kernels != nullptr && *log_kernels != '\0';
    if (const char* v = std::getenv("FAKE_CUDA_LOG")) {
      std::string path = v;
      if (auto pos = path.find("%p"); pos != std::string::npos) {
        path.replace(pos, 2, std::to_string(getpid()));
      }
      s.log_path = path;
      static bool registered = false;
      if (!registered) {
        registered = true;
        std::atexit(log_exit_handler);
      }
    }
  }
  return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int* v) {
  if (v == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *v = driver_version();
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int* count) {
  if (CUresult r = check_init()) return r;
  if (count == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *count = fake_sim::device_count();
  return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  if (CUresult r = check_init()) return r;
  if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!valid_device(ordinal)) return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char* name, int len, CUdevice dev) {
  if (CUresult r = check_init()) return r;
  if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
  if (name == nullptr || len <= 0) return CUDA_ERROR_INVALID_VALUE;
  std::snprintf(name, std::size_t(len), "%s", fake_sim::device_model(dev).name);
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int* pi, CUdevice_attribute attrib, CUdevice dev) {
  if (CUresult r = check_init()) return r;
  if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
  if (pi == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const auto m = fake_sim::device_model(dev);
  switch (attrib) {
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *pi = m.sm_count; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *pi = m.cc_major; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *pi = m.cc_minor; break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *pi = m.clock_khz; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *pi = m.max_smem_per_block; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = 1024; break;
    // Compute capability 8.0 and 9.0 both keep 2048 threads resident per SM.
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: *pi = 2048; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *pi = 32; break;
    default: *pi = 0; break;
  }
  return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem(size_t* bytes, CUdevice) {
  *bytes = size_t(80) << 30;
  return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev) {
  if (CUresult r = check_init()) return r;
  if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
  if (pctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *pctx = reinterpret_cast<CUcontext>(primary_context(dev));
  return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease(CUdevice) { return check_init(); }

CUresult cuCtxCreate(CUcontext* pctx, CUctxCreateParams*, unsigned int, CUdevice dev) {
  if (CUresult r = check_init()) return r;
  if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
  if (pctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *pctx = reinterpret_cast<CUcontext>(primary_context(dev));
  t_current = *pctx;
  return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext ctx) {
  if (CUresult r = check_init()) return r;
  t_current = ctx;
  return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext* pctx) {
  if (CUresult r = check_init()) return r;
  *pctx = t_current;
  return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice* device) {
  if (CUresult r = check_init()) return r;
  if (t_current == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  *device = reinterpret_cast<Context*>(t_current)->device;
  return CUDA_SUCCESS;
}

CUresult cuCtxSynchronize(void) {
  if (CUresult r = check_init()) return r;
  // Waits until the simulated device has finished all queued work.
  std::uint64_t ready;
  {
    std::lock_guard<std::mutex> lock(state().mu);
    if (CUresult r = check_capture_safety_locked(state())) return r;
    ready = state().device_ready_ns;
  }
  wait_until(ready);
  return CUDA_SUCCESS;
}

CUresult cuGetErrorString(CUresult error, const char** pStr) {
  if (pStr == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *pStr = error == CUDA_SUCCESS ? "no error" : "fake driver error";
  return CUDA_SUCCESS;
}

CUresult cuGetErrorName(CUresult error, const char** pStr) {
  if (pStr == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *pStr = error == CUDA_SUCCESS ? "CUDA_SUCCESS" : "CUDA_ERROR_FAKE";
  return CUDA_SUCCESS;
}

// ---- memory (fake_device_memory.h: device addresses the host cannot touch) ----------------

CUresult cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytesize) {
  if (CUresult r = check_init()) return r;
  if (dptr == nullptr || bytesize == 0) return CUDA_ERROR_INVALID_VALUE;  // cuda.h: cuMemAlloc
  const CUdeviceptr p = device_alloc(bytesize);
  if (p == 0) return CUDA_ERROR_OUT_OF_MEMORY;
  *dptr = p;
  return CUDA_SUCCESS;
}

CUresult cuMemFree_v2(CUdeviceptr dptr) {
  if (CUresult r = check_init()) return r;
  return device_free(dptr) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void* src, size_t n) {
  const cuMemcpyHtoD_v2_params params{dst, src, n};
  return copy_transfer(CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2, "cuMemcpyHtoD_v2", params,
                       device_bytes(dst, n), src, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, n);
}

CUresult cuMemcpyDtoH_v2(void* dst, CUdeviceptr src, size_t n) {
  const cuMemcpyDtoH_v2_params params{dst, src, n};
  return copy_transfer(CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2, "cuMemcpyDtoH_v2", params, dst,
                       device_bytes(src, n), CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, n);
}

CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n) {
  const cuMemcpyDtoD_v2_params params{dst, src, n};
  return copy_transfer(CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoD_v2, "cuMemcpyDtoD_v2", params,
                       device_bytes(dst, n), device_bytes(src, n), CUPTI_ACTIVITY_MEMCPY_KIND_DTOD,
                       n);
}

// Unified addressing: the direction is where each pointer lies. A copy between two host
// buffers is the host's own memcpy here: it reaches no device and leaves no record.
CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n) {
  if (CUresult r = check_init()) return r;
  const bool device_dst = is_device_pointer(dst), device_src = is_device_pointer(src);
  if (!device_dst && !device_src) {
    if (dst == 0 || src == 0) return CUDA_ERROR_INVALID_VALUE;
    std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), n);
    return CUDA_SUCCESS;
  }
  void* to = device_dst ? device_bytes(dst, n) : reinterpret_cast<void*>(dst);
  const void* from = device_src ? device_bytes(src, n) : reinterpret_cast<const void*>(src);
  const std::uint8_t kind = device_dst && device_src ? CUPTI_ACTIVITY_MEMCPY_KIND_DTOD
                            : device_dst             ? CUPTI_ACTIVITY_MEMCPY_KIND_HTOD
                                                     : CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
  const cuMemcpy_params params{dst, src, n};
  return copy_transfer(CUPTI_DRIVER_TRACE_CBID_cuMemcpy, "cuMemcpy", params, to, from, kind, n);
}

CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char value, size_t n) {
  const cuMemsetD8_v2_params params{dst, value, n};
  void* to = device_bytes(dst, n);
  return synchronous_transfer(CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2, "cuMemsetD8_v2", params,
                              to != nullptr, true, CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN, n,
                              [&] { std::memset(to, value, n); });
}

CUresult cuMemsetD32_v2(CUdeviceptr dst, unsigned int value, size_t n) {
  const cuMemsetD32_v2_params params{dst, value, n};
  auto* to = static_cast<unsigned int*>(device_bytes(dst, n * sizeof(unsigned int)));
  return synchronous_transfer(CUPTI_DRIVER_TRACE_CBID_cuMemsetD32_v2, "cuMemsetD32_v2", params,
                              to != nullptr, true, CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN,
                              n * sizeof(unsigned int), [&] { std::fill_n(to, n, value); });
}

// ---- modules, libraries, functions, kernels ----------------------------------------------

CUresult cuModuleLoadData(CUmodule* module, const void* image) {
  if (CUresult r = check_init()) return r;
  if (module == nullptr || image == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(state().mu);
  auto* m = new Module();
  m->declared = parse_module_image(image);
  *module = reinterpret_cast<CUmodule>(m);
  return CUDA_SUCCESS;
}

CUresult cuModuleLoadDataEx(CUmodule* module, const void* image, unsigned int, CUjit_option*,
                            void**) {
  return cuModuleLoadData(module, image);
}

static CUresult module_get_function(CUfunction* hfunc, CUmodule hmod, const char* name) {
  if (CUresult r = check_init()) return r;
  if (hfunc == nullptr || hmod == nullptr || name == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(state().mu);
  auto* m = reinterpret_cast<Module*>(hmod);
  for (Function* f : m->functions) {
    if (std::strcmp(f->name, name) == 0 && f->magic == kFunctionMagic) {
      *hfunc = reinterpret_cast<CUfunction>(f);
      return CUDA_SUCCESS;
    }
  }
  KernelDecl decl;
  decl.name = name;
  for (const auto& d : m->declared) {
    if (d.name == name) decl = d;
  }
  Function* f = new_function(decl, m, kFunctionMagic);
  m->functions.push_back(f);
  *hfunc = reinterpret_cast<CUfunction>(f);
  return CUDA_SUCCESS;
}

CUresult cuModuleUnload(CUmodule hmod) {
  if (CUresult r = check_init()) return r;
  std::lock_guard<std::mutex> lock(state().mu);
  auto* m = reinterpret_cast<Module*>(hmod);
  if (m == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  // Free in reverse so the next allocation reuses the first function's address.
  for (auto it = m->functions.rbegin(); it != m->functions.rend(); ++it) {
    if ((*it)->context_function) free_function((*it)->context_function);
    free_function(*it);
  }
  delete m;
  return CUDA_SUCCESS;
}

CUresult cuLibraryLoadData(CUlibrary* library, const void* code, CUjit_option*, void**,
                           unsigned int, CUlibraryOption*, void**, unsigned int) {
  CUmodule m = nullptr;
  CUresult r = cuModuleLoadData(&m, code);
  if (r != CUDA_SUCCESS) return r;
  reinterpret_cast<Module*>(m)->is_library = true;
  *library = reinterpret_cast<CUlibrary>(m);
  return CUDA_SUCCESS;
}

CUresult cuLibraryUnload(CUlibrary library) {
  return cuModuleUnload(reinterpret_cast<CUmodule>(library));
}

static CUresult library_get_kernel(CUkernel* pKernel, CUlibrary library, const char* name) {
  if (CUresult r = check_init()) return r;
  if (pKernel == nullptr || library == nullptr || name == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(state().mu);
  auto* m = reinterpret_cast<Module*>(library);
  for (Function* f : m->functions) {
    if (std::strcmp(f->name, name) == 0 && f->magic == kKernelMagic) {
      *pKernel = reinterpret_cast<CUkernel>(f);
      return CUDA_SUCCESS;
    }
  }
  KernelDecl decl;
  decl.name = name;
  for (const auto& d : m->declared) {
    if (d.name == name) decl = d;
  }
  Function* k = new_function(decl, m, kKernelMagic);
  k->context_function = new_function(decl, m, kFunctionMagic);
  m->functions.push_back(k);
  *pKernel = reinterpret_cast<CUkernel>(k);
  return CUDA_SUCCESS;
}

static CUresult kernel_get_function(CUfunction* pFunc, CUkernel kernel) {
  auto* k = reinterpret_cast<Function*>(kernel);
  if (k == nullptr || k->magic != kKernelMagic) return CUDA_ERROR_INVALID_HANDLE;
  *pFunc = reinterpret_cast<CUfunction>(k->context_function);
  return CUDA_SUCCESS;
}

// The calls that hand out kernel handles are seen by a CUPTI client like any driver call.
CUresult cuModuleGetFunction(CUfunction* hfunc, CUmodule hmod, const char* name) {
  cuModuleGetFunction_params params{hfunc, hmod, name};
  return with_api_callbacks(CUPTI_DRIVER_TRACE_CBID_cuModuleGetFunction, "cuModuleGetFunction",
                            &params, nullptr, nullptr,
                            [&](std::uint32_t) { return module_get_function(hfunc, hmod, name); });
}

CUresult cuLibraryGetKernel(CUkernel* pKernel, CUlibrary library, const char* name) {
  cuLibraryGetKernel_params params{pKernel, library, name};
  return with_api_callbacks(
      CUPTI_DRIVER_TRACE_CBID_cuLibraryGetKernel, "cuLibraryGetKernel", &params, nullptr, nullptr,
      [&](std::uint32_t) { return library_get_kernel(pKernel, library, name); });
}

CUresult cuKernelGetFunction(CUfunction* pFunc, CUkernel kernel) {
  cuKernelGetFunction_params params{pFunc, kernel};
  return with_api_callbacks(CUPTI_DRIVER_TRACE_CBID_cuKernelGetFunction, "cuKernelGetFunction",
                            &params, nullptr, nullptr,
                            [&](std::uint32_t) { return kernel_get_function(pFunc, kernel); });
}

// cuFuncGet* are documented for CUfunction handles and cuKernelGet* for CUkernel handles only;
// the fake refuses the other kind, and counts each such call in its log ("misuse"): what a
// real driver does with it is undefined.
namespace {
bool misused(const Function* f, std::uint32_t expected, const char* api) {
  if (f == nullptr || f->magic == expected || f->magic == kDeadMagic) return false;
  std::lock_guard<std::mutex> lock(state().mu);
  ++state().misuse[api];
  return true;
}
}  // namespace

CUresult cuFuncGetName(const char** name, CUfunction hfunc) {
  auto* f = reinterpret_cast<Function*>(hfunc);
  if (name == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (misused(f, kFunctionMagic, "cuFuncGetName")) return CUDA_ERROR_INVALID_HANDLE;
  if (f == nullptr || f->magic != kFunctionMagic) return CUDA_ERROR_INVALID_HANDLE;
  *name = f->name;
  return CUDA_SUCCESS;
}

CUresult cuKernelGetName(const char** name, CUkernel hfunc) {
  auto* f = reinterpret_cast<Function*>(hfunc);
  if (name == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (misused(f, kKernelMagic, "cuKernelGetName")) return CUDA_ERROR_INVALID_HANDLE;
  if (f == nullptr || f->magic != kKernelMagic) return CUDA_ERROR_INVALID_HANDLE;
  *name = f->name;
  return CUDA_SUCCESS;
}

static CUresult param_info(Function* f, size_t index, size_t* offset, size_t* size) {
  if (!f->decl.params_known) return CUDA_ERROR_NOT_SUPPORTED;
  if (index >= f->decl.param_sizes.size()) return CUDA_ERROR_INVALID_VALUE;
  size_t off = 0;
  for (size_t i = 0; i <= index; ++i) {
    const size_t sz = f->decl.param_sizes[i];
    off = (off + sz - 1) / sz * sz;  // natural alignment
    if (i == index) {
      if (offset) *offset = off;
      if (size) *size = sz;
    }
    off += sz;
  }
  return CUDA_SUCCESS;
}

CUresult cuFuncGetParamInfo(CUfunction func, size_t paramIndex, size_t* paramOffset,
                            size_t* paramSize) {
  auto* f = reinterpret_cast<Function*>(func);
  if (misused(f, kFunctionMagic, "cuFuncGetParamInfo")) return CUDA_ERROR_INVALID_HANDLE;
  if (f == nullptr || f->magic != kFunctionMagic) return CUDA_ERROR_INVALID_HANDLE;
  return param_info(f, paramIndex, paramOffset, paramSize);
}

CUresult cuKernelGetParamInfo(CUkernel kernel, size_t paramIndex, size_t* paramOffset,
                              size_t* paramSize) {
  auto* f = reinterpret_cast<Function*>(kernel);
  if (misused(f, kKernelMagic, "cuKernelGetParamInfo")) return CUDA_ERROR_INVALID_HANDLE;
  if (f == nullptr || f->magic != kKernelMagic) return CUDA_ERROR_INVALID_HANDLE;
  return param_info(f, paramIndex, paramOffset, paramSize);
}

static CUresult function_attribute(int* pi, CUfunction_attribute attrib, Function* f) {
  switch (attrib) {
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *pi = f->decl.registers; break;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *pi = f->decl.static_smem; break;
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = 1024; break;
    default: *pi = 0; break;
  }
  return CUDA_SUCCESS;
}

CUresult cuFuncGetAttribute(int* pi, CUfunction_attribute attrib, CUfunction hfunc) {
  auto* f = reinterpret_cast<Function*>(hfunc);
  if (misused(f, kFunctionMagic, "cuFuncGetAttribute")) return CUDA_ERROR_INVALID_HANDLE;
  if (f == nullptr || f->magic != kFunctionMagic || pi == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  return function_attribute(pi, attrib, f);
}

CUresult cuKernelGetAttribute(int* pi, CUfunction_attribute attrib, CUkernel kernel, CUdevice) {
  auto* f = reinterpret_cast<Function*>(kernel);
  if (misused(f, kKernelMagic, "cuKernelGetAttribute")) return CUDA_ERROR_INVALID_HANDLE;
  if (f == nullptr || f->magic != kKernelMagic || pi == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  return function_attribute(pi, attrib, f);
}

// ---- launches -----------------------------------------------------------------------------

CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                        unsigned int bx, unsigned int by, unsigned int bz, unsigned int smem,
                        CUstream hStream, void** kernelParams, void** extra) {
  LaunchSpec spec;
  spec.function = reinterpret_cast<Function*>(f);
  fill_dims(spec, gx, gy, gz, bx, by, bz);
  spec.smem = smem;
  spec.stream = hStream;
  spec.kernel_params = kernelParams;
  cuLaunchKernel_params params{f, gx, gy, gz, bx, by, bz, smem, hStream, kernelParams, extra};
  return launch_with_callbacks(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "cuLaunchKernel", params,
                               spec);
}

CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                             unsigned int bx, unsigned int by, unsigned int bz, unsigned int smem,
                             CUstream hStream, void** kernelParams, void** extra) {
  LaunchSpec spec;
  spec.function = reinterpret_cast<Function*>(f);
  fill_dims(spec, gx, gy, gz, bx, by, bz);
  spec.smem = smem;
  spec.stream = hStream;
  spec.kernel_params = kernelParams;
  cuLaunchKernel_ptsz_params params{f, gx, gy, gz, bx, by, bz, smem, hStream, kernelParams, extra};
  return launch_with_callbacks(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz, "cuLaunchKernel_ptsz",
                               params, spec);
}

CUresult cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f, void** kernelParams,
                          void** extra) {
  return launch_ex(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, "cuLaunchKernelEx", config, f,
                   kernelParams, extra);
}

CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig* config, CUfunction f, void** kernelParams,
                               void** extra) {
  return launch_ex(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz, "cuLaunchKernelEx_ptsz", config,
                   f, kernelParams, extra);
}

CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                   unsigned int bx, unsigned int by, unsigned int bz,
                                   unsigned int smem, CUstream hStream, void** kernelParams) {
  LaunchSpec spec;
  spec.function = reinterpret_cast<Function*>(f);
  fill_dims(spec, gx, gy, gz, bx, by, bz);
  spec.smem = smem;
  spec.stream = hStream;
  spec.kernel_params = kernelParams;
  spec.cooperative = 1;
  cuLaunchCooperativeKernel_params params{f, gx, gy, gz, bx, by, bz, smem, hStream, kernelParams};
  return launch_with_callbacks(CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
                               "cuLaunchCooperativeKernel", params, spec);
}

CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy,
                                        unsigned int gz, unsigned int bx, unsigned int by,
                                        unsigned int bz, unsigned int smem, CUstream hStream,
                                        void** kernelParams) {
  LaunchSpec spec;
  spec.function = reinterpret_cast<Function*>(f);
  fill_dims(spec, gx, gy, gz, bx, by, bz);
  spec.smem = smem;
  spec.stream = hStream;
  spec.kernel_params = kernelParams;
  spec.cooperative = 1;
  cuLaunchCooperativeKernel_ptsz_params params{f,  gx, gy,   gz,      bx,
                                               by, bz, smem, hStream, kernelParams};
  return launch_with_callbacks(CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
                               "cuLaunchCooperativeKernel_ptsz", params, spec);
}

// Deprecated in CUDA 13 but still exported: one launch per device (the fake has one).
CUresult cuLaunchCooperativeKernelMultiDevice(CUDA_LAUNCH_PARAMS* launchParamsList,
                                              unsigned int numDevices, unsigned int flags) {
  if (launchParamsList == nullptr || numDevices != 1) return CUDA_ERROR_INVALID_VALUE;
  const CUDA_LAUNCH_PARAMS& p = launchParamsList[0];
  LaunchSpec spec;
  spec.function = reinterpret_cast<Function*>(p.function);
  fill_dims(spec, p.gridDimX, p.gridDimY, p.gridDimZ, p.blockDimX, p.blockDimY, p.blockDimZ);
  spec.smem = p.sharedMemBytes;
  spec.stream = p.hStream;
  spec.kernel_params = p.kernelParams;
  spec.cooperative = 2;
  cuLaunchCooperativeKernelMultiDevice_params params{launchParamsList, numDevices, flags};
  return launch_with_callbacks(CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernelMultiDevice,
                               "cuLaunchCooperativeKernelMultiDevice", params, spec);
}

// ---- graphs built node by node ----------------------------------------------------------------

CUresult cuGraphCreate(CUgraph* phGraph, unsigned int) {
  if (CUresult r = check_init()) return r;
  if (phGraph == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(state().mu);
  auto* g = new Graph();
  g->id = state().next_graph_id++;
  *phGraph = reinterpret_cast<CUgraph>(g);
  return CUDA_SUCCESS;
}

namespace {
// A kernel node's launch from its parameters (func, else kern). Caller holds the lock.
bool set_kernel_node(Node* n, const CUDA_KERNEL_NODE_PARAMS* p) {
  Function* f = launchable(p->func != nullptr ? p->func : reinterpret_cast<CUfunction>(p->kern));
  if (f == nullptr) return false;
  const Function* ctx_f =
      (f->magic == kKernelMagic && f->context_function) ? f->context_function : f;
  n->name = f->name;
  n->grid[0] = p->gridDimX;
  n->grid[1] = p->gridDimY;
  n->grid[2] = p->gridDimZ;
  n->block[0] = p->blockDimX;
  n->block[1] = p->blockDimY;
  n->block[2] = p->blockDimZ;
  n->smem = p->sharedMemBytes;
  n->registers = ctx_f->decl.registers;
  n->static_smem = ctx_f->decl.static_smem;
  n->has_gemm_work = false;
  return true;
}
}  // namespace

CUresult cuGraphAddKernelNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode*, size_t,
                              const CUDA_KERNEL_NODE_PARAMS* nodeParams) {
  if (phGraphNode == nullptr || hGraph == nullptr || nodeParams == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  FakeGraphEvent created{};
  {
    std::lock_guard<std::mutex> lock(state().mu);
    auto* node = new Node();
    if (!set_kernel_node(node, nodeParams)) {
      delete node;
      return CUDA_ERROR_INVALID_HANDLE;
    }
    node->id = state().next_node_id++;
    auto* g = reinterpret_cast<Graph*>(hGraph);
    g->nodes.push_back(node);
    *phGraphNode = reinterpret_cast<CUgraphNode>(node);
    created = FakeGraphEvent{13 /*CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED*/,
                             nullptr,
                             hGraph,
                             nullptr,
                             *phGraphNode,
                             nullptr,
                             CU_GRAPH_NODE_TYPE_KERNEL,
                             nullptr};
  }
  notify_graph_event(created);
  return CUDA_SUCCESS;
}

CUresult cuGraphGetNodes(CUgraph hGraph, CUgraphNode* nodes, size_t* numNodes) {
  if (hGraph == nullptr || numNodes == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(state().mu);
  const auto* g = reinterpret_cast<Graph*>(hGraph);
  if (nodes == nullptr) {
    *numNodes = g->nodes.size();
    return CUDA_SUCCESS;
  }
  const size_t n = std::min(*numNodes, g->nodes.size());
  for (size_t i = 0; i < n; ++i) nodes[i] = reinterpret_cast<CUgraphNode>(g->nodes[i]);
  *numNodes = n;
  return CUDA_SUCCESS;
}

// Changes a kernel node of an executable graph in place: its next replays run the new launch.
CUresult cuGraphExecKernelNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                        const CUDA_KERNEL_NODE_PARAMS* nodeParams) {
  if (hGraphExec == nullptr || hNode == nullptr || nodeParams == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(state().mu);
  auto* exec = reinterpret_cast<GraphExec*>(hGraphExec);
  for (Node* n : exec->nodes) {
    if (n->original != reinterpret_cast<Node*>(hNode)) continue;
    return set_kernel_node(n, nodeParams) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  }
  return CUDA_ERROR_INVALID_VALUE;
}

// A launch entry point that no interposer wraps and that the tool's API callbacks do not
// see, standing in for private paths a runtime may take to the driver. The kernel still
// runs and still reaches the activity records, like any kernel does on a real driver.
CUresult fakecuda_private_launch(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                 unsigned int bx, unsigned int by, unsigned int bz,
                                 unsigned int smem, CUstream hStream, void**, void**) {
  if (check_init() != CUDA_SUCCESS) return CUDA_ERROR_NOT_INITIALIZED;
  LaunchSpec spec;
  spec.function = launchable(f);
  if (spec.function == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  fill_dims(spec, gx, gy, gz, bx, by, bz);
  spec.smem = smem;
  spec.stream = hStream;
  return launch(spec, state().next_correlation.fetch_add(1, std::memory_order_relaxed));
}

// ---- streams and events -------------------------------------------------------------------

CUresult cuStreamCreate(CUstream* phStream, unsigned int) {
  if (CUresult r = check_init()) return r;
  std::lock_guard<std::mutex> lock(state().mu);
  auto* s = new Stream();
  s->id = state().next_stream_id++;
  s->device = current_device();
  *phStream = reinterpret_cast<CUstream>(s);
  return CUDA_SUCCESS;
}

CUresult cuStreamDestroy_v2(CUstream hStream) {
  if (hStream == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  std::lock_guard<std::mutex> lock(state().mu);
  delete reinterpret_cast<Stream*>(hStream);
  return CUDA_SUCCESS;
}

CUresult cuStreamGetId(CUstream hStream, unsigned long long* streamId) {
  std::lock_guard<std::mutex> lock(state().mu);
  *streamId = resolve_stream(hStream)->id;
  return CUDA_SUCCESS;
}

CUresult cuStreamGetId_ptsz(CUstream hStream, unsigned long long* streamId) {
  return cuStreamGetId(hStream, streamId);
}

CUresult cuStreamSynchronize(CUstream hStream) {
  if (CUresult r = check_init()) return r;
  std::uint64_t ready;
  {
    std::lock_guard<std::mutex> lock(state().mu);
    if (CUresult r = check_capture_safety_locked(state())) return r;
    ready = resolve_stream(hStream)->ready_ns;
  }
  wait_until(ready);
  return CUDA_SUCCESS;
}

CUresult cuEventCreate(CUevent* phEvent, unsigned int) {
  if (CUresult r = check_init()) return r;
  auto* ev = new Event();
  ev->device = fake_cuda::current_device();
  *phEvent = reinterpret_cast<CUevent>(ev);
  state().events_created.fetch_add(1, std::memory_order_relaxed);
  return CUDA_SUCCESS;
}

CUresult cuEventDestroy_v2(CUevent hEvent) {
  delete reinterpret_cast<Event*>(hEvent);
  return CUDA_SUCCESS;
}

CUresult cuEventRecord(CUevent hEvent, CUstream hStream) { return record_event(hEvent, hStream); }

CUresult cuEventRecord_ptsz(CUevent hEvent, CUstream hStream) {
  return record_event(hEvent, hStream);
}

CUresult cuEventQuery(CUevent hEvent) {
  auto* ev = reinterpret_cast<Event*>(hEvent);
  if (ev == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  std::lock_guard<std::mutex> lock(state().mu);
  if (CUresult r = check_capture_safety_locked(state())) return r;
  if (!ev->recorded) return CUDA_SUCCESS;
  return now_ns() >= ev->time_ns ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult cuEventSynchronize(CUevent hEvent) {
  auto* ev = reinterpret_cast<Event*>(hEvent);
  if (ev == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  std::uint64_t ready;
  {
    std::lock_guard<std::mutex> lock(state().mu);
    if (CUresult r = check_capture_safety_locked(state())) return r;
    ready = ev->recorded ? ev->time_ns : 0;
  }
  wait_until(ready);
  return CUDA_SUCCESS;
}

PM2LAT_DECLARE_EVENT_ELAPSED_TIME_V1(fake_event_elapsed_time_v1)

CUresult fake_event_elapsed_time_v1(float* ms, CUevent hStart, CUevent hEnd) {
  return cuEventElapsedTime_v2(ms, hStart, hEnd);
}

CUresult cuEventElapsedTime_v2(float* ms, CUevent hStart, CUevent hEnd) {
  auto* a = reinterpret_cast<Event*>(hStart);
  auto* b = reinterpret_cast<Event*>(hEnd);
  if (ms == nullptr || a == nullptr || b == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(state().mu);
  if (!a->recorded || !b->recorded) return CUDA_ERROR_INVALID_HANDLE;
  if (now_ns() < b->time_ns) return CUDA_ERROR_NOT_READY;
  *ms = float(double(b->time_ns - a->time_ns) / 1e6);
  return CUDA_SUCCESS;
}

// ---- stream capture and graphs --------------------------------------------------------------

CUresult cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode) {
  return begin_capture(hStream, mode);
}

CUresult cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode) {
  return begin_capture(hStream, mode);
}

CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode* mode) {
  if (mode == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::swap(*mode, thread_capture_mode());
  return CUDA_SUCCESS;
}

CUresult cuStreamEndCapture(CUstream hStream, CUgraph* phGraph) {
  return end_capture(hStream, phGraph);
}

CUresult cuStreamEndCapture_ptsz(CUstream hStream, CUgraph* phGraph) {
  return end_capture(hStream, phGraph);
}

CUresult cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus* status) {
  return is_capturing(hStream, status);
}

CUresult cuStreamIsCapturing_ptsz(CUstream hStream, CUstreamCaptureStatus* status) {
  return is_capturing(hStream, status);
}

CUresult cuStreamGetCaptureInfo_v2(CUstream hStream, CUstreamCaptureStatus* status, cuuint64_t* id,
                                   CUgraph* graph, const CUgraphNode** deps, size_t* num) {
  return capture_info(hStream, status, id, graph, deps, nullptr, num);
}

CUresult cuStreamGetCaptureInfo_v2_ptsz(CUstream hStream, CUstreamCaptureStatus* status,
                                        cuuint64_t* id, CUgraph* graph, const CUgraphNode** deps,
                                        size_t* num) {
  return capture_info(hStream, status, id, graph, deps, nullptr, num);
}

CUresult cuStreamGetCaptureInfo_v3(CUstream hStream, CUstreamCaptureStatus* status, cuuint64_t* id,
                                   CUgraph* graph, const CUgraphNode** deps,
                                   const CUgraphEdgeData** edges, size_t* num) {
  return capture_info(hStream, status, id, graph, deps, edges, num);
}

CUresult cuStreamGetCaptureInfo_v3_ptsz(CUstream hStream, CUstreamCaptureStatus* status,
                                        cuuint64_t* id, CUgraph* graph, const CUgraphNode** deps,
                                        const CUgraphEdgeData** edges, size_t* num) {
  return capture_info(hStream, status, id, graph, deps, edges, num);
}

CUresult cuGraphInstantiateWithFlags(CUgraphExec* phGraphExec, CUgraph hGraph, unsigned long long) {
  return instantiate(phGraphExec, hGraph);
}

CUresult cuGraphInstantiateWithParams(CUgraphExec* phGraphExec, CUgraph hGraph,
                                      CUDA_GRAPH_INSTANTIATE_PARAMS* params) {
  CUresult r = instantiate(phGraphExec, hGraph);
  if (params)
    params->result_out =
        r == CUDA_SUCCESS ? CUDA_GRAPH_INSTANTIATE_SUCCESS : CUDA_GRAPH_INSTANTIATE_ERROR;
  return r;
}

CUresult cuGraphInstantiateWithParams_ptsz(CUgraphExec* phGraphExec, CUgraph hGraph,
                                           CUDA_GRAPH_INSTANTIATE_PARAMS* params) {
  return cuGraphInstantiateWithParams(phGraphExec, hGraph, params);
}

CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream) {
  if (hGraphExec == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  cuGraphLaunch_params params{hGraphExec, hStream};
  return with_api_callbacks(CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, "cuGraphLaunch", &params,
                            nullptr, nullptr, [&](std::uint32_t corr) {
                              return replay(reinterpret_cast<GraphExec*>(hGraphExec), hStream,
                                            corr);
                            });
}

CUresult cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream) {
  if (hGraphExec == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  cuGraphLaunch_ptsz_params params{hGraphExec, hStream};
  return with_api_callbacks(CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz, "cuGraphLaunch_ptsz",
                            &params, nullptr, nullptr, [&](std::uint32_t corr) {
                              return replay(reinterpret_cast<GraphExec*>(hGraphExec), hStream,
                                            corr);
                            });
}

CUresult cuGraphExecDestroy(CUgraphExec hGraphExec) {
  auto* exec = reinterpret_cast<GraphExec*>(hGraphExec);
  if (exec == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  std::vector<FakeGraphEvent> events;
  {
    std::lock_guard<std::mutex> lock(state().mu);
    for (Node* n : exec->nodes) {
      events.push_back(FakeGraphEvent{14 /*GRAPHNODE_DESTROY_STARTING*/, nullptr, nullptr, nullptr,
                                      reinterpret_cast<CUgraphNode>(n), nullptr, n->type,
                                      hGraphExec});
    }
  }
  for (const auto& e : events) notify_graph_event(e);
  std::lock_guard<std::mutex> lock(state().mu);
  for (Node* n : exec->nodes) delete n;
  delete exec;
  return CUDA_SUCCESS;
}

CUresult cuGraphDestroy(CUgraph hGraph) {
  auto* g = reinterpret_cast<Graph*>(hGraph);
  if (g == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  std::vector<FakeGraphEvent> events;
  {
    std::lock_guard<std::mutex> lock(state().mu);
    for (Node* n : g->nodes) {
      events.push_back(FakeGraphEvent{14 /*GRAPHNODE_DESTROY_STARTING*/, nullptr, hGraph, nullptr,
                                      reinterpret_cast<CUgraphNode>(n), nullptr, n->type, nullptr});
    }
  }
  for (const auto& e : events) notify_graph_event(e);
  std::lock_guard<std::mutex> lock(state().mu);
  for (Node* n : g->nodes) delete n;
  delete g;
  return CUDA_SUCCESS;
}

// ---- the private tool channel ---------------------------------------------------------------

int fakecuda_attach_tool(const FakeToolCallbacks* callbacks) {
  state().tool.store(callbacks, std::memory_order_release);
  return 0;
}

std::uint64_t fakecuda_graph_node_id(CUgraphNode node) {
  return node ? reinterpret_cast<Node*>(node)->id : 0;
}

std::uint32_t fakecuda_graph_id(CUgraph graph) {
  return graph ? reinterpret_cast<Graph*>(graph)->id : 0;
}

}  // extern "C"
