// How the fake cuBLAS, cuBLASLt and cuDNN reach the driver: the way NVIDIA's libraries do,
// with dlopen("libcuda.so.1") + dlsym("cuGetProcAddress_v2") and every other entry point
// resolved through it. Their kernels live in a module the library loads once; the module
// image declares each kernel's parameters (one by-value Params struct, as in CUTLASS/xmma
// kernels).
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace fake_lib {

class LibraryDriver {
 public:
  // `kernels` are the names this library can launch.
  explicit LibraryDriver(std::vector<std::string> kernels) : kernels_(std::move(kernels)) {}

  bool ready() {
    std::lock_guard<std::mutex> lock(mu_);
    if (module_ != nullptr) return true;
    void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) return false;
    auto gpa = reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(h, "cuGetProcAddress_v2"));
    if (gpa == nullptr) return false;
    PFN_cuInit_v2000 init = nullptr;
    resolve(gpa, "cuInit", init);
    // The library's own runtime initialises the driver before loading its kernels.
    if (init == nullptr || init(0) != CUDA_SUCCESS) return false;
    resolve(gpa, "cuModuleLoadData", load_);
    resolve(gpa, "cuModuleGetFunction", get_function_);
    resolve(gpa, "cuLaunchKernel", launch_);
    resolve(gpa, "cuLaunchKernelEx", launch_ex_);
    if (!load_ || !get_function_ || !launch_ || !launch_ex_) return false;
    image_ = "FAKECUBIN\n";
    for (const auto& k : kernels_) image_ += k + ":256:regs=128\n";
    return load_(&module_, image_.c_str()) == CUDA_SUCCESS;
  }

  CUfunction function(const std::string& name) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = functions_.find(name);
    if (it != functions_.end()) return it->second;
    CUfunction f = nullptr;
    if (get_function_(&f, module_, name.c_str()) != CUDA_SUCCESS) return nullptr;
    functions_[name] = f;
    return f;
  }

  // `work`, when given, goes at the start of the kernel's Params (what the problem is).
  CUresult launch(const std::string& name, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                  CUstream stream, const void* work = nullptr, std::size_t work_size = 0) {
    if (!ready()) return CUDA_ERROR_NOT_INITIALIZED;
    CUfunction f = function(name);
    if (f == nullptr) return CUDA_ERROR_NOT_FOUND;
    unsigned char params[256] = {};
    if (work != nullptr && work_size <= sizeof(params)) std::memcpy(params, work, work_size);
    void* args[] = {params};
    return launch_(f, gx, gy, gz, bx, 1, 1, 0, stream, args, nullptr);
  }

  // Hopper-style launch through cuLaunchKernelEx with a thread-block cluster.
  CUresult launch_cluster(const std::string& name, unsigned gx, unsigned gy, unsigned gz,
                          unsigned bx, unsigned cx, unsigned cy, CUstream stream,
                          const void* work = nullptr, std::size_t work_size = 0) {
    if (!ready()) return CUDA_ERROR_NOT_INITIALIZED;
    CUfunction f = function(name);
    if (f == nullptr) return CUDA_ERROR_NOT_FOUND;
    CUlaunchAttribute attr{};
    attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.clusterDim.x = cx;
    attr.value.clusterDim.y = cy;
    attr.value.clusterDim.z = 1;
    CUlaunchConfig cfg{};
    cfg.gridDimX = gx;
    cfg.gridDimY = gy;
    cfg.gridDimZ = gz;
    cfg.blockDimX = bx;
    cfg.blockDimY = 1;
    cfg.blockDimZ = 1;
    cfg.sharedMemBytes = 200 * 1024;
    cfg.hStream = stream;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    unsigned char params[256] = {};
    if (work != nullptr && work_size <= sizeof(params)) std::memcpy(params, work, work_size);
    void* args[] = {params};
    return launch_ex_(&cfg, f, args, nullptr);
  }

 private:
  template <typename T>
  static void resolve(PFN_cuGetProcAddress_v12000 gpa, const char* name, T& out) {
    void* p = nullptr;
    CUdriverProcAddressQueryResult status{};
    if (gpa(name, &p, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &status) == CUDA_SUCCESS &&
        status == CU_GET_PROC_ADDRESS_SUCCESS) {
      out = reinterpret_cast<T>(p);
    }
  }

  std::vector<std::string> kernels_;
  std::mutex mu_;
  std::string image_;
  CUmodule module_ = nullptr;
  std::map<std::string, CUfunction> functions_;
  PFN_cuModuleLoadData_v2000 load_ = nullptr;
  PFN_cuModuleGetFunction_v2000 get_function_ = nullptr;
  PFN_cuLaunchKernel_v4000 launch_ = nullptr;
  PFN_cuLaunchKernelEx_v11060 launch_ex_ = nullptr;
};

inline std::string cutlass_kernel2(const std::string& config) {
  return "_ZN7cutlass7Kernel2I" + std::to_string(config.size()) + config + "EEvNT_6ParamsE";
}

inline unsigned ceil_div(std::int64_t a, std::int64_t b) { return unsigned((a + b - 1) / b); }

}  // namespace fake_lib
