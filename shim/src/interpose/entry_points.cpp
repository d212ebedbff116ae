#include "interpose/entry_points.h"

#include <dlfcn.h>

#include <atomic>
#include <cstring>
#include <mutex>

#include "diagnostics.h"
#include "interpose/real_dl.h"
#include "launch_path/driver_hooks.h"
#include "pm2lat/shim/cuda_exported_variants.h"

namespace pm2lat::shim {

namespace {

constexpr std::size_t kCount = static_cast<std::size_t>(EntryPoint::kCount);

const char* const kNames[kCount] = {
    "cuInit",
    "cuGetProcAddress",
    "cuGetProcAddress_v2",
    "cuLaunchKernel",
    "cuLaunchKernel_ptsz",
    "cuLaunchKernelEx",
    "cuLaunchKernelEx_ptsz",
    "cuLaunchCooperativeKernel",
    "cuLaunchCooperativeKernel_ptsz",
    "cuGraphLaunch",
    "cuGraphLaunch_ptsz",
    "cuGraphInstantiateWithFlags",
    "cuGraphInstantiateWithParams",
    "cuGraphInstantiateWithParams_ptsz",
    "cuGraphExecDestroy",
    "cuGraphDestroy",
    "cuStreamBeginCapture_v2",
    "cuStreamBeginCapture_v2_ptsz",
    "cuStreamBeginCaptureToGraph",
    "cuStreamBeginCaptureToGraph_ptsz",
    "cuStreamEndCapture",
    "cuStreamEndCapture_ptsz",
    "cuModuleUnload",
    "cuLibraryUnload",
};

std::atomic<void*> g_real[kCount] = {};

template <typename T>
T real(EntryPoint e) noexcept {
  return reinterpret_cast<T>(g_real[static_cast<std::size_t>(e)].load(std::memory_order_acquire));
}

// ---- wrappers: one per entry point, each bound to the real pointer recorded for it ------

CUresult w_init(unsigned int flags) {
  return hooks::init(real<PFN_cuInit_v2000>(EntryPoint::kInit), flags);
}

CUresult w_get_proc_address(const char* symbol, void** pfn, int version, cuuint64_t flags) {
  auto r = real<PFN_cuGetProcAddress_v11030>(EntryPoint::kGetProcAddress);
  if (r == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  const CUresult res = r(symbol, pfn, version, flags);
  if (res == CUDA_SUCCESS && pfn != nullptr && *pfn != nullptr) {
    *pfn = wrap_entry_point(*pfn, symbol, version, flags);
  }
  return res;
}

CUresult w_get_proc_address_v2(const char* symbol, void** pfn, int version, cuuint64_t flags,
                               CUdriverProcAddressQueryResult* status) {
  auto r = real<PFN_cuGetProcAddress_v12000>(EntryPoint::kGetProcAddressV2);
  if (r == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  const CUresult res = r(symbol, pfn, version, flags, status);
  if (res == CUDA_SUCCESS && pfn != nullptr && *pfn != nullptr) {
    *pfn = wrap_entry_point(*pfn, symbol, version, flags);
  }
  return res;
}

CUresult w_launch_kernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                         unsigned by, unsigned bz, unsigned smem, CUstream s, void** p, void** e) {
  return hooks::launch_kernel(real<PFN_cuLaunchKernel_v4000>(EntryPoint::kLaunchKernel),
                              LaunchApi::kCuLaunchKernel, f, gx, gy, gz, bx, by, bz, smem, s, p, e);
}

CUresult w_launch_kernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                              unsigned by, unsigned bz, unsigned smem, CUstream s, void** p,
                              void** e) {
  return hooks::launch_kernel(real<PFN_cuLaunchKernel_v4000>(EntryPoint::kLaunchKernelPtsz),
                              LaunchApi::kCuLaunchKernelPtsz, f, gx, gy, gz, bx, by, bz, smem, s, p,
                              e);
}

CUresult w_launch_kernel_ex(const CUlaunchConfig* c, CUfunction f, void** p, void** e) {
  return hooks::launch_kernel_ex(real<PFN_cuLaunchKernelEx_v11060>(EntryPoint::kLaunchKernelEx),
                                 LaunchApi::kCuLaunchKernelEx, c, f, p, e);
}

CUresult w_launch_kernel_ex_ptsz(const CUlaunchConfig* c, CUfunction f, void** p, void** e) {
  return hooks::launch_kernel_ex(real<PFN_cuLaunchKernelEx_v11060>(EntryPoint::kLaunchKernelExPtsz),
                                 LaunchApi::kCuLaunchKernelExPtsz, c, f, p, e);
}

CUresult w_launch_cooperative(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                              unsigned by, unsigned bz, unsigned smem, CUstream s, void** p) {
  return hooks::launch_cooperative(
      real<PFN_cuLaunchCooperativeKernel_v9000>(EntryPoint::kLaunchCooperativeKernel),
      LaunchApi::kCuLaunchCooperativeKernel, f, gx, gy, gz, bx, by, bz, smem, s, p);
}

CUresult w_launch_cooperative_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                   unsigned by, unsigned bz, unsigned smem, CUstream s, void** p) {
  return hooks::launch_cooperative(
      real<PFN_cuLaunchCooperativeKernel_v9000>(EntryPoint::kLaunchCooperativeKernelPtsz),
      LaunchApi::kCuLaunchCooperativeKernelPtsz, f, gx, gy, gz, bx, by, bz, smem, s, p);
}

CUresult w_graph_launch(CUgraphExec g, CUstream s) {
  return hooks::graph_launch(real<PFN_cuGraphLaunch_v10000>(EntryPoint::kGraphLaunch),
                             LaunchApi::kCuGraphLaunch, g, s);
}

CUresult w_graph_launch_ptsz(CUgraphExec g, CUstream s) {
  return hooks::graph_launch(real<PFN_cuGraphLaunch_v10000>(EntryPoint::kGraphLaunchPtsz),
                             LaunchApi::kCuGraphLaunchPtsz, g, s);
}

CUresult w_instantiate_with_flags(CUgraphExec* e, CUgraph g, unsigned long long f) {
  return hooks::graph_instantiate_with_flags(
      real<PFN_cuGraphInstantiateWithFlags_v11040>(EntryPoint::kGraphInstantiateWithFlags), e, g,
      f);
}

CUresult w_instantiate_with_params(CUgraphExec* e, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS* p) {
  return hooks::graph_instantiate_with_params(
      real<PFN_cuGraphInstantiateWithParams_v12000>(EntryPoint::kGraphInstantiateWithParams), e, g,
      p);
}

CUresult w_instantiate_with_params_ptsz(CUgraphExec* e, CUgraph g,
                                        CUDA_GRAPH_INSTANTIATE_PARAMS* p) {
  return hooks::graph_instantiate_with_params(
      real<PFN_cuGraphInstantiateWithParams_v12000>(EntryPoint::kGraphInstantiateWithParamsPtsz), e,
      g, p);
}

CUresult w_graph_exec_destroy(CUgraphExec e) {
  return hooks::graph_exec_destroy(
      real<PFN_cuGraphExecDestroy_v10000>(EntryPoint::kGraphExecDestroy), e);
}

CUresult w_graph_destroy(CUgraph g) {
  return hooks::graph_destroy(real<PFN_cuGraphDestroy_v10000>(EntryPoint::kGraphDestroy), g);
}

CUresult w_begin_capture(CUstream s, CUstreamCaptureMode m) {
  return hooks::begin_capture(
      real<PFN_cuStreamBeginCapture_v10010>(EntryPoint::kStreamBeginCaptureV2), s, m);
}

CUresult w_begin_capture_ptsz(CUstream s, CUstreamCaptureMode m) {
  return hooks::begin_capture(
      real<PFN_cuStreamBeginCapture_v10010>(EntryPoint::kStreamBeginCaptureV2Ptsz), s, m);
}

CUresult w_begin_capture_to_graph(CUstream s, CUgraph g, const CUgraphNode* d,
                                  const CUgraphEdgeData* e, size_t n, CUstreamCaptureMode m) {
  return hooks::begin_capture_to_graph(
      real<PFN_cuStreamBeginCaptureToGraph_v12030>(EntryPoint::kStreamBeginCaptureToGraph), s, g, d,
      e, n, m);
}

CUresult w_begin_capture_to_graph_ptsz(CUstream s, CUgraph g, const CUgraphNode* d,
                                       const CUgraphEdgeData* e, size_t n, CUstreamCaptureMode m) {
  return hooks::begin_capture_to_graph(
      real<PFN_cuStreamBeginCaptureToGraph_v12030>(EntryPoint::kStreamBeginCaptureToGraphPtsz), s,
      g, d, e, n, m);
}

CUresult w_end_capture(CUstream s, CUgraph* g) {
  return hooks::end_capture(real<PFN_cuStreamEndCapture_v10000>(EntryPoint::kStreamEndCapture), s,
                            g);
}

CUresult w_end_capture_ptsz(CUstream s, CUgraph* g) {
  return hooks::end_capture(real<PFN_cuStreamEndCapture_v10000>(EntryPoint::kStreamEndCapturePtsz),
                            s, g);
}

CUresult w_module_unload(CUmodule m) {
  return hooks::module_unload(real<PFN_cuModuleUnload_v2000>(EntryPoint::kModuleUnload), m);
}

CUresult w_library_unload(CUlibrary l) {
  return hooks::library_unload(real<PFN_cuLibraryUnload_v12000>(EntryPoint::kLibraryUnload), l);
}

// Each wrapper has exactly its entry point's cudaTypedefs.h type.
static_assert(std::is_same_v<decltype(&w_init), PFN_cuInit_v2000>);
static_assert(std::is_same_v<decltype(&w_get_proc_address), PFN_cuGetProcAddress_v11030>);
static_assert(std::is_same_v<decltype(&w_get_proc_address_v2), PFN_cuGetProcAddress_v12000>);
static_assert(std::is_same_v<decltype(&w_launch_kernel), PFN_cuLaunchKernel_v4000>);
static_assert(std::is_same_v<decltype(&w_launch_kernel_ptsz), PFN_cuLaunchKernel_v7000_ptsz>);
static_assert(std::is_same_v<decltype(&w_launch_kernel_ex), PFN_cuLaunchKernelEx_v11060>);
static_assert(std::is_same_v<decltype(&w_launch_kernel_ex_ptsz), PFN_cuLaunchKernelEx_v11060_ptsz>);
static_assert(std::is_same_v<decltype(&w_launch_cooperative), PFN_cuLaunchCooperativeKernel_v9000>);
static_assert(
    std::is_same_v<decltype(&w_launch_cooperative_ptsz), PFN_cuLaunchCooperativeKernel_v9000_ptsz>);
static_assert(std::is_same_v<decltype(&w_graph_launch), PFN_cuGraphLaunch_v10000>);
static_assert(std::is_same_v<decltype(&w_graph_launch_ptsz), PFN_cuGraphLaunch_v10000_ptsz>);
static_assert(
    std::is_same_v<decltype(&w_instantiate_with_flags), PFN_cuGraphInstantiateWithFlags_v11040>);
static_assert(
    std::is_same_v<decltype(&w_instantiate_with_params), PFN_cuGraphInstantiateWithParams_v12000>);
static_assert(std::is_same_v<decltype(&w_instantiate_with_params_ptsz),
                             PFN_cuGraphInstantiateWithParams_v12000_ptsz>);
static_assert(std::is_same_v<decltype(&w_graph_exec_destroy), PFN_cuGraphExecDestroy_v10000>);
static_assert(std::is_same_v<decltype(&w_graph_destroy), PFN_cuGraphDestroy_v10000>);
static_assert(std::is_same_v<decltype(&w_begin_capture), PFN_cuStreamBeginCapture_v10010>);
static_assert(
    std::is_same_v<decltype(&w_begin_capture_ptsz), PFN_cuStreamBeginCapture_v10010_ptsz>);
static_assert(
    std::is_same_v<decltype(&w_begin_capture_to_graph), PFN_cuStreamBeginCaptureToGraph_v12030>);
static_assert(std::is_same_v<decltype(&w_begin_capture_to_graph_ptsz),
                             PFN_cuStreamBeginCaptureToGraph_v12030_ptsz>);
static_assert(std::is_same_v<decltype(&w_end_capture), PFN_cuStreamEndCapture_v10000>);
static_assert(std::is_same_v<decltype(&w_end_capture_ptsz), PFN_cuStreamEndCapture_v10000_ptsz>);
static_assert(std::is_same_v<decltype(&w_module_unload), PFN_cuModuleUnload_v2000>);
static_assert(std::is_same_v<decltype(&w_library_unload), PFN_cuLibraryUnload_v12000>);

void* const kWrappers[kCount] = {
    reinterpret_cast<void*>(&w_init),
    reinterpret_cast<void*>(&w_get_proc_address),
    reinterpret_cast<void*>(&w_get_proc_address_v2),
    reinterpret_cast<void*>(&w_launch_kernel),
    reinterpret_cast<void*>(&w_launch_kernel_ptsz),
    reinterpret_cast<void*>(&w_launch_kernel_ex),
    reinterpret_cast<void*>(&w_launch_kernel_ex_ptsz),
    reinterpret_cast<void*>(&w_launch_cooperative),
    reinterpret_cast<void*>(&w_launch_cooperative_ptsz),
    reinterpret_cast<void*>(&w_graph_launch),
    reinterpret_cast<void*>(&w_graph_launch_ptsz),
    reinterpret_cast<void*>(&w_instantiate_with_flags),
    reinterpret_cast<void*>(&w_instantiate_with_params),
    reinterpret_cast<void*>(&w_instantiate_with_params_ptsz),
    reinterpret_cast<void*>(&w_graph_exec_destroy),
    reinterpret_cast<void*>(&w_graph_destroy),
    reinterpret_cast<void*>(&w_begin_capture),
    reinterpret_cast<void*>(&w_begin_capture_ptsz),
    reinterpret_cast<void*>(&w_begin_capture_to_graph),
    reinterpret_cast<void*>(&w_begin_capture_to_graph_ptsz),
    reinterpret_cast<void*>(&w_end_capture),
    reinterpret_cast<void*>(&w_end_capture_ptsz),
    reinterpret_cast<void*>(&w_module_unload),
    reinterpret_cast<void*>(&w_library_unload),
};

// The exported variant addresses of up to four driver libraries (normally exactly one).
struct VariantTable {
  std::atomic<void*> base{nullptr};  // load address of the library (dli_fbase)
  void* address[kCount] = {};
};
VariantTable g_tables[4];
std::atomic<int> g_tables_used{0};

const VariantTable* table_for(void* real) noexcept {
  Dl_info info{};
  if (dladdr(real, &info) == 0 || info.dli_fbase == nullptr) return nullptr;
  const int used = g_tables_used.load(std::memory_order_acquire);
  for (int i = 0; i < used && i < 4; ++i) {
    if (g_tables[i].base.load(std::memory_order_acquire) == info.dli_fbase) return &g_tables[i];
  }
  // Build it outside any lock of ours: dlopen/dlsym take the loader's lock, which a thread
  // inside a library constructor may already hold while calling dlsym into us.
  void* addresses[kCount] = {};
  void* handle = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) return nullptr;
  for (std::size_t k = 0; k < kCount; ++k) addresses[k] = real_dlsym(handle, kNames[k]);
  dlclose(handle);
  static std::mutex publish_mu;  // only ever taken without the loader lock held
  std::lock_guard<std::mutex> lock(publish_mu);
  const int now = g_tables_used.load(std::memory_order_relaxed);
  for (int i = 0; i < now && i < 4; ++i) {
    if (g_tables[i].base.load(std::memory_order_relaxed) == info.dli_fbase) return &g_tables[i];
  }
  if (now >= 4) return nullptr;
  VariantTable& t = g_tables[now];
  for (std::size_t k = 0; k < kCount; ++k) t.address[k] = addresses[k];
  t.base.store(info.dli_fbase, std::memory_order_release);
  g_tables_used.store(now + 1, std::memory_order_release);
  return &t;
}

// A driver entry point asked of cuGetProcAddress, by the caller's base name, version and
// flags: which one it is. cuGetProcAddress guarantees the pointer it returns has the ABI of the
// variant the request selects (cuda.h), whatever address it is. Versions are those that
// introduced each ABI (cudaTypedefs.h); a request older than that gets an ABI we do not wrap.
struct Request {
  const char* symbol;
  int version;
  EntryPoint legacy;
  EntryPoint per_thread;  // == legacy when there is no _ptsz variant
};
constexpr Request kRequests[] = {
    {"cuInit", 2000, EntryPoint::kInit, EntryPoint::kInit},
    {"cuGetProcAddress", 12000, EntryPoint::kGetProcAddressV2, EntryPoint::kGetProcAddressV2},
    {"cuGetProcAddress", 11030, EntryPoint::kGetProcAddress, EntryPoint::kGetProcAddress},
    {"cuLaunchKernel", 4000, EntryPoint::kLaunchKernel, EntryPoint::kLaunchKernelPtsz},
    {"cuLaunchKernelEx", 11060, EntryPoint::kLaunchKernelEx, EntryPoint::kLaunchKernelExPtsz},
    {"cuLaunchCooperativeKernel", 9000, EntryPoint::kLaunchCooperativeKernel,
     EntryPoint::kLaunchCooperativeKernelPtsz},
    {"cuGraphLaunch", 10000, EntryPoint::kGraphLaunch, EntryPoint::kGraphLaunchPtsz},
    // CUDA 12 made cuGraphInstantiate the three-argument cuGraphInstantiateWithFlags.
    {"cuGraphInstantiate", 12000, EntryPoint::kGraphInstantiateWithFlags,
     EntryPoint::kGraphInstantiateWithFlags},
    {"cuGraphInstantiateWithFlags", 11040, EntryPoint::kGraphInstantiateWithFlags,
     EntryPoint::kGraphInstantiateWithFlags},
    {"cuGraphInstantiateWithParams", 12000, EntryPoint::kGraphInstantiateWithParams,
     EntryPoint::kGraphInstantiateWithParamsPtsz},
    {"cuGraphExecDestroy", 10000, EntryPoint::kGraphExecDestroy, EntryPoint::kGraphExecDestroy},
    {"cuGraphDestroy", 10000, EntryPoint::kGraphDestroy, EntryPoint::kGraphDestroy},
    {"cuStreamBeginCapture", 10010, EntryPoint::kStreamBeginCaptureV2,
     EntryPoint::kStreamBeginCaptureV2Ptsz},
    {"cuStreamBeginCaptureToGraph", 12030, EntryPoint::kStreamBeginCaptureToGraph,
     EntryPoint::kStreamBeginCaptureToGraphPtsz},
    {"cuStreamEndCapture", 10000, EntryPoint::kStreamEndCapture, EntryPoint::kStreamEndCapturePtsz},
    {"cuModuleUnload", 2000, EntryPoint::kModuleUnload, EntryPoint::kModuleUnload},
    {"cuLibraryUnload", 12000, EntryPoint::kLibraryUnload, EntryPoint::kLibraryUnload},
};

// The newest ABI of `symbol` that `version` selects.
const Request* requested(const char* symbol, int version) noexcept {
  const Request* best = nullptr;
  for (const Request& r : kRequests) {
    if (std::strcmp(r.symbol, symbol) != 0 || r.version > version) continue;
    if (best == nullptr || r.version > best->version) best = &r;
  }
  return best;
}

// True when `real` lies in the loaded driver (the object that exports cuGetProcAddress_v2).
bool inside_driver(void* real) noexcept {
  void* driver = loaded_driver_handle();
  void* resolver = driver ? real_dlsym(driver, "cuGetProcAddress_v2") : nullptr;
  Dl_info a{}, b{};
  return resolver != nullptr && dladdr(real, &a) != 0 && dladdr(resolver, &b) != 0 &&
         a.dli_fbase == b.dli_fbase;
}

}  // namespace

bool entry_point_for_request(const char* symbol, int version, std::uint64_t flags,
                             EntryPoint* out) noexcept {
  if (symbol == nullptr) return false;
  const Request* r = requested(symbol, version);
  if (r == nullptr) return false;
  *out = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) ? r->per_thread : r->legacy;
  return true;
}

namespace {}  // namespace

const char* exported_name(EntryPoint e) noexcept { return kNames[static_cast<std::size_t>(e)]; }

void* wrapper_of(EntryPoint e) noexcept { return kWrappers[static_cast<std::size_t>(e)]; }

void* real_of(EntryPoint e) noexcept {
  return g_real[static_cast<std::size_t>(e)].load(std::memory_order_acquire);
}

void set_real(EntryPoint e, void* r) noexcept {
  void* expected = nullptr;
  g_real[static_cast<std::size_t>(e)].compare_exchange_strong(expected, r,
                                                              std::memory_order_acq_rel);
}

bool identify_entry_point(void* real, EntryPoint* out) noexcept {
  if (real == nullptr) return false;
  const VariantTable* t = table_for(real);
  if (t == nullptr) return false;
  for (std::size_t k = 0; k < kCount; ++k) {
    if (t->address[k] == real) {
      *out = static_cast<EntryPoint>(k);
      return true;
    }
  }
  return false;
}

void* wrap_entry_point(void* real, const char* symbol, int version, std::uint64_t flags) noexcept {
  if (real == nullptr || is_own_address(real)) return real;  // already ours
  EntryPoint e;
  if (!identify_entry_point(real, &e)) {
    // Not one of the driver's exported symbols (a resolver may hand out internal addresses):
    // a pointer inside the driver that answers a request for an entry point we wrap has that
    // entry point's ABI, as cuGetProcAddress guarantees.
    if (version == 0 || !entry_point_for_request(symbol, version, flags, &e)) return real;
    if (!inside_driver(real)) {
      const std::string what = std::string(symbol) + "@" + std::to_string(version);
      Diagnostics::instance().warn_once(
          "unwrapped:" + what, "cannot identify the driver entry point returned for " + what +
                                   "; launches through it are only seen by CUPTI");
      return real;
    }
  }
  set_real(e, real);
  // Two different real functions for one entry point (two drivers loaded, or an exported
  // symbol and another address of the same function): the first is wrapped, a second one is
  // passed through unless it is inside the driver the first came from.
  if (real_of(e) != real && !inside_driver(real)) return real;
  return wrapper_of(e);
}

}  // namespace pm2lat::shim
