// Launches one kernel through every driver path a real program can take, each with its own
// kernel name, and prints "launch <name> <driver entry point>" for each so the test knows
// what to expect. Also checks that cuGetProcAddress still reports symbol status faithfully.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "program_support.h"

using test_program::check;

namespace {

CUfunction load(CUmodule* module, const std::string& decl) {
  const std::string image = test_program::module_image({decl});
  check(cuModuleLoadData(module, image.c_str()), "cuModuleLoadData");
  CUfunction f = nullptr;
  const std::string name = decl.substr(0, decl.find(':'));
  check(cuModuleGetFunction(&f, *module, name.c_str()), "cuModuleGetFunction");
  return f;
}

CUfunction function(const std::string& decl) {
  CUmodule m = nullptr;
  return load(&m, decl);
}

void say(const char* name, const char* api) { std::printf("launch %s %s\n", name, api); }

template <typename T>
T proc(const char* symbol, int version, cuuint64_t flags) {
  void* p = nullptr;
  CUdriverProcAddressQueryResult status{};
  check(cuGetProcAddress(symbol, &p, version, flags, &status), "cuGetProcAddress");
  if (status != CU_GET_PROC_ADDRESS_SUCCESS || p == nullptr) {
    std::fprintf(stderr, "cuGetProcAddress(%s) status %d\n", symbol, int(status));
    std::exit(91);
  }
  return reinterpret_cast<T>(p);
}

CUlaunchConfig config(unsigned gx, unsigned gy, unsigned bx, CUlaunchAttribute* attr, unsigned n) {
  CUlaunchConfig c{};
  c.gridDimX = gx;
  c.gridDimY = gy;
  c.gridDimZ = 1;
  c.blockDimX = bx;
  c.blockDimY = 1;
  c.blockDimZ = 1;
  c.attrs = attr;
  c.numAttrs = n;
  return c;
}

}  // namespace

int main() {
  test_program::init_primary_context();

  // cuGetProcAddress must still answer exactly as the driver does.
  {
    void* p = reinterpret_cast<void*>(1);
    CUdriverProcAddressQueryResult status{};
    check(cuGetProcAddress("cuNoSuchSymbol", &p, 12000, 0, &status), "cuGetProcAddress");
    if (p != nullptr || status != CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND) return 92;
    check(cuGetProcAddress("cuLaunchKernelEx", &p, 11000, 0, &status), "cuGetProcAddress");
    if (p != nullptr || status != CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT) return 93;
    std::printf("symbol-status ok\n");
  }

  // dlsym(RTLD_NEXT) still means "after the caller": from the executable, the first
  // definition after it, which is the one RTLD_DEFAULT finds too.
  if (dlsym(RTLD_NEXT, "cuLaunchKernel") != dlsym(RTLD_DEFAULT, "cuLaunchKernel")) return 95;
  std::printf("rtld-next ok\n");

  // 1. Linked directly against libcuda: the exported symbol.
  CUfunction f = function("path_direct_launch");
  check(cuLaunchKernel(f, 2, 3, 1, 128, 1, 1, 0, nullptr, nullptr, nullptr), "direct");
  say("path_direct_launch", "cuLaunchKernel");

  // 2-3. Through cuGetProcAddress, default and per-thread default stream.
  auto launch =
      proc<PFN_cuLaunchKernel_v4000>("cuLaunchKernel", 12000, CU_GET_PROC_ADDRESS_DEFAULT);
  check(launch(function("path_getproc_default"), 4, 1, 1, 64, 1, 1, 0, nullptr, nullptr, nullptr),
        "getproc default");
  say("path_getproc_default", "cuLaunchKernel");
  auto launch_ptsz = proc<PFN_cuLaunchKernel_v7000_ptsz>(
      "cuLaunchKernel", 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
  check(launch_ptsz(function("path_getproc_ptds"), 5, 1, 1, 32, 2, 1, 0, nullptr, nullptr, nullptr),
        "getproc ptds");
  say("path_getproc_ptds", "cuLaunchKernel_ptsz");

  // 4. Triton's way: dlopen + dlsym(handle, "cuLaunchKernelEx"), with a cluster.
  void* libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  auto launch_ex =
      reinterpret_cast<PFN_cuLaunchKernelEx_v11060>(dlsym(libcuda, "cuLaunchKernelEx"));
  CUlaunchAttribute cluster{};
  cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  cluster.value.clusterDim.x = 2;
  cluster.value.clusterDim.y = 1;
  cluster.value.clusterDim.z = 1;
  CUlaunchConfig cfg = config(4, 2, 256, &cluster, 1);
  check(launch_ex(&cfg, function("path_dlsym_ex"), nullptr, nullptr), "dlsym ex");
  say("path_dlsym_ex", "cuLaunchKernelEx");

  // 5. cuLaunchKernelEx through cuGetProcAddress with the per-thread flag.
  auto launch_ex_ptsz = proc<PFN_cuLaunchKernelEx_v11060_ptsz>(
      "cuLaunchKernelEx", 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
  CUlaunchConfig cfg2 = config(3, 3, 96, nullptr, 0);
  check(launch_ex_ptsz(&cfg2, function("path_getproc_ex_ptds"), nullptr, nullptr),
        "getproc ex ptds");
  say("path_getproc_ex_ptds", "cuLaunchKernelEx_ptsz");

  // 6. Cooperative launch.
  check(cuLaunchCooperativeKernel(function("path_cooperative"), 8, 1, 1, 128, 1, 1, 0, nullptr,
                                  nullptr),
        "cooperative");
  say("path_cooperative", "cuLaunchCooperativeKernel");

  // 7. The CUDA 11.3 resolver, itself obtained from cuGetProcAddress_v2.
  auto legacy = proc<PFN_cuGetProcAddress_v11030>("cuGetProcAddress", 11030, 0);
  void* p = nullptr;
  check(legacy("cuLaunchKernel", &p, 12000, 0), "legacy resolver");
  check(reinterpret_cast<PFN_cuLaunchKernel_v4000>(p)(function("path_legacy_getproc"), 1, 1, 1, 32,
                                                      1, 1, 0, nullptr, nullptr, nullptr),
        "legacy launch");
  say("path_legacy_getproc", "cuLaunchKernel");

  // 8. The resolver asked for itself, then used.
  auto self = proc<PFN_cuGetProcAddress_v12000>("cuGetProcAddress", 12000, 0);
  CUdriverProcAddressQueryResult status{};
  check(self("cuLaunchKernel", &p, 12000, 0, &status), "self resolver");
  check(reinterpret_cast<PFN_cuLaunchKernel_v4000>(p)(function("path_resolver_self"), 6, 1, 1, 64,
                                                      1, 1, 0, nullptr, nullptr, nullptr),
        "self launch");
  say("path_resolver_self", "cuLaunchKernel");

  // 9. A context-independent CUkernel launched as a CUfunction (what CUDA 13's runtime does).
  {
    const std::string image = test_program::module_image({"path_library_kernel"});
    CUlibrary lib = nullptr;
    check(cuLibraryLoadData(&lib, image.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0),
          "cuLibraryLoadData");
    CUkernel k = nullptr;
    check(cuLibraryGetKernel(&k, lib, "path_library_kernel"), "cuLibraryGetKernel");
    check(cuLaunchKernel(reinterpret_cast<CUfunction>(k), 7, 1, 1, 64, 1, 1, 0, nullptr, nullptr,
                         nullptr),
          "kernel launch");
    say("path_library_kernel", "cuLaunchKernel");
  }

  // 10. Scalar arguments (Triton-style signature: two pointers and an i32 element count).
  {
    CUfunction t = function("triton_poi_fused_add_0:8,8,4");
    CUdeviceptr a = 0, b = 0;
    check(cuMemAlloc(&a, 4096 * 4), "cuMemAlloc");
    check(cuMemAlloc(&b, 4096 * 4), "cuMemAlloc");
    int xnumel = 4096;
    void* args[] = {&a, &b, &xnumel};
    check(cuLaunchKernel(t, 32, 1, 1, 128, 1, 1, 0, nullptr, args, nullptr), "triton launch");
    say("triton_poi_fused_add_0", "cuLaunchKernel");
  }

  // 11. Unload, then load another kernel at the same handle: it must not inherit the name.
  {
    CUmodule m = nullptr;
    CUfunction first = load(&m, "reuse_kernel_first");
    check(cuLaunchKernel(first, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr), "first");
    say("reuse_kernel_first", "cuLaunchKernel");
    check(cuModuleUnload(m), "cuModuleUnload");
    CUfunction second = load(&m, "reuse_kernel_second");
    if (second != first) std::printf("note: handle not reused\n");
    check(cuLaunchKernel(second, 2, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr), "second");
    say("reuse_kernel_second", "cuLaunchKernel");
  }

  // 12. A launch the driver rejects (too many threads per block) runs nothing.
  if (cuLaunchKernel(function("path_rejected"), 1, 1, 1, 2048, 1, 1, 0, nullptr, nullptr,
                     nullptr) == CUDA_SUCCESS) {
    return 94;
  }
  std::printf("rejected ok\n");

  check(cuCtxSynchronize(), "cuCtxSynchronize");
  return 0;
}
