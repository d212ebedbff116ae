// A clean-room libcudart.so.13 for test programs built with `nvcc -cudart shared`. It is
// not NVIDIA's runtime (which cannot start on a fake driver) but reaches the driver the way
// NVIDIA's does: dlopen("libcuda.so.1"), dlsym only cuGetProcAddress_v2, and every other
// entry point through it. It implements the CUDA 13 launch ABI nvcc emits
// (__cudaRegisterFatBinary / __cudaRegisterFunction / __cudaPushCallConfiguration /
// __cudaPopCallConfiguration / __cudaGetKernel / __cudaLaunchKernel) and the handful of
// runtime calls the test programs make. Host memory stands in for device memory.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

// Declarations nvcc's generated code relies on (crt/host_runtime.h and
// crt/device_functions.h, which only compile under nvcc), copied with their exact types.
extern "C" {
void** __cudaRegisterFatBinary(void* fatCubin);
void __cudaRegisterFatBinaryEnd(void** fatCubinHandle);
void __cudaUnregisterFatBinary(void** fatCubinHandle);
void __cudaRegisterFunction(void** fatCubinHandle, const char* hostFun, char* deviceFun,
                            const char* deviceName, int thread_limit, uint3* tid, uint3* bid,
                            dim3* bDim, dim3* gDim, int* wSize);
char __cudaInitModule(void** fatCubinHandle);
unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                                     struct CUstream_st* stream);
cudaError_t __cudaPopCallConfiguration(dim3* gridDim, dim3* blockDim, size_t* sharedMem,
                                       void* stream);
cudaError_t __cudaGetKernel(cudaKernel_t*, const void*);
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void** args,
                               size_t sharedMem, cudaStream_t stream);
cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void** args,
                                    size_t sharedMem, cudaStream_t stream);
extern decltype(cudaLaunchKernel) cudaLaunchKernel_ptsz;
extern decltype(cudaLaunchKernelExC) cudaLaunchKernelExC_ptsz;
}

namespace {

// The subset of nvcc's fat binary wrapper the runtime needs (fatbinary_section.h).
struct FatbinWrapper {
  int magic;
  int version;
  const void* data;
  void* filename_or_fatbins;
};

struct Registration {
  const void* image = nullptr;
  CUlibrary library = nullptr;
  std::vector<std::pair<const void*, std::string>> functions;
};

struct Driver {
  PFN_cuInit_v2000 init = nullptr;
  PFN_cuDeviceGetCount_v2000 device_count = nullptr;
  PFN_cuDevicePrimaryCtxRetain_v7000 retain = nullptr;
  PFN_cuCtxSetCurrent_v4000 set_current = nullptr;
  PFN_cuLibraryLoadData_v12000 library_load = nullptr;
  PFN_cuLibraryGetKernel_v12000 library_get_kernel = nullptr;
  PFN_cuLaunchKernel_v4000 launch = nullptr;
  PFN_cuLaunchKernel_v7000_ptsz launch_ptsz = nullptr;
  PFN_cuLaunchKernelEx_v11060 launch_ex = nullptr;
  PFN_cuLaunchKernelEx_v11060_ptsz launch_ex_ptsz = nullptr;
  PFN_cuMemAlloc_v3020 mem_alloc = nullptr;
  PFN_cuMemFree_v3020 mem_free = nullptr;
  PFN_cuMemcpyHtoD_v3020 memcpy_htod = nullptr;
  PFN_cuMemcpy_v4000 memcpy_unified = nullptr;
  PFN_cuMemcpyDtoH_v3020 memcpy_dtoh = nullptr;
  PFN_cuMemcpyDtoD_v3020 memcpy_dtod = nullptr;
  PFN_cuMemsetD8_v3020 memset_d8 = nullptr;
  PFN_cuCtxSynchronize_v2000 ctx_sync = nullptr;
  PFN_cuStreamCreate_v2000 stream_create = nullptr;
  PFN_cuStreamSynchronize_v2000 stream_sync = nullptr;
  PFN_cuStreamBeginCapture_v10010 begin_capture = nullptr;
  PFN_cuStreamEndCapture_v10000 end_capture = nullptr;
  PFN_cuGraphInstantiateWithFlags_v11040 instantiate = nullptr;
  PFN_cuGraphLaunch_v10000 graph_launch = nullptr;
  PFN_cuGraphExecDestroy_v10000 graph_exec_destroy = nullptr;
  PFN_cuGraphDestroy_v10000 graph_destroy = nullptr;
  PFN_cuKernelGetName_v12030 kernel_get_name = nullptr;
  // A driver entry point no interposer knows about, standing in for the private paths a
  // runtime may use (FAKE_CUDART_PRIVATE_LAUNCH=1).
  PFN_cuLaunchKernel_v4000 private_launch = nullptr;
  CUcontext context = nullptr;
  bool ok = false;
};

std::mutex g_mu;
std::vector<Registration*>* g_registrations = nullptr;
std::unordered_map<const void*, std::pair<Registration*, std::string>>* g_functions = nullptr;
std::unordered_map<const void*, CUkernel>* g_kernels = nullptr;
thread_local cudaError_t t_last_error = cudaSuccess;
thread_local bool t_context_set = false;

struct CallConfig {
  dim3 grid, block;
  size_t smem;
  cudaStream_t stream;
};
thread_local std::vector<CallConfig> t_configs;

template <typename T>
void resolve(PFN_cuGetProcAddress_v12000 gpa, const char* name, T& out, cuuint64_t flags = 0) {
  void* p = nullptr;
  CUdriverProcAddressQueryResult status{};
  if (gpa(name, &p, 13000, flags, &status) == CUDA_SUCCESS &&
      status == CU_GET_PROC_ADDRESS_SUCCESS) {
    out = reinterpret_cast<T>(p);
  }
}

Driver& driver() {
  static Driver d = [] {
    Driver d;
    void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (h == nullptr) return d;
    auto gpa = reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(h, "cuGetProcAddress_v2"));
    if (gpa == nullptr) return d;
    resolve(gpa, "cuInit", d.init);
    resolve(gpa, "cuDeviceGetCount", d.device_count);
    resolve(gpa, "cuDevicePrimaryCtxRetain", d.retain);
    resolve(gpa, "cuCtxSetCurrent", d.set_current);
    resolve(gpa, "cuLibraryLoadData", d.library_load);
    resolve(gpa, "cuLibraryGetKernel", d.library_get_kernel);
    resolve(gpa, "cuLaunchKernel", d.launch);
    resolve(gpa, "cuLaunchKernel", d.launch_ptsz, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
    resolve(gpa, "cuLaunchKernelEx", d.launch_ex);
    resolve(gpa, "cuLaunchKernelEx", d.launch_ex_ptsz,
            CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
    resolve(gpa, "cuMemAlloc", d.mem_alloc);
    resolve(gpa, "cuMemFree", d.mem_free);
    resolve(gpa, "cuMemcpyHtoD", d.memcpy_htod);
    resolve(gpa, "cuMemcpy", d.memcpy_unified);
    resolve(gpa, "cuMemcpyDtoH", d.memcpy_dtoh);
    resolve(gpa, "cuMemcpyDtoD", d.memcpy_dtod);
    resolve(gpa, "cuMemsetD8", d.memset_d8);
    resolve(gpa, "cuCtxSynchronize", d.ctx_sync);
    resolve(gpa, "cuStreamCreate", d.stream_create);
    resolve(gpa, "cuStreamSynchronize", d.stream_sync);
    resolve(gpa, "cuStreamBeginCapture", d.begin_capture);
    resolve(gpa, "cuStreamEndCapture", d.end_capture);
    resolve(gpa, "cuGraphInstantiate", d.instantiate);
    resolve(gpa, "cuGraphLaunch", d.graph_launch);
    resolve(gpa, "cuGraphExecDestroy", d.graph_exec_destroy);
    resolve(gpa, "cuGraphDestroy", d.graph_destroy);
    resolve(gpa, "cuKernelGetName", d.kernel_get_name);
    d.private_launch =
        reinterpret_cast<PFN_cuLaunchKernel_v4000>(dlsym(h, "fakecuda_private_launch"));
    d.ok = d.init && d.retain && d.set_current && d.library_load && d.library_get_kernel &&
           d.launch && d.init(0) == CUDA_SUCCESS && d.retain(&d.context, 0) == CUDA_SUCCESS;
    return d;
  }();
  if (d.ok && !t_context_set) {
    d.set_current(d.context);
    t_context_set = true;
  }
  return d;
}

cudaError_t fail(cudaError_t e) {
  t_last_error = e;
  return e;
}

cudaError_t from(CUresult r) {
  if (r == CUDA_SUCCESS) return cudaSuccess;
  if (r == CUDA_ERROR_INVALID_VALUE) return fail(cudaErrorInvalidValue);
  if (r == CUDA_ERROR_NOT_READY) return cudaErrorNotReady;
  return fail(cudaErrorUnknown);
}

CUkernel kernel_for(const void* host_fun) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_kernels == nullptr) g_kernels = new std::unordered_map<const void*, CUkernel>();
  if (auto it = g_kernels->find(host_fun); it != g_kernels->end()) return it->second;
  if (g_functions == nullptr) return nullptr;
  auto fit = g_functions->find(host_fun);
  if (fit == g_functions->end()) return nullptr;
  Registration* reg = fit->second.first;
  Driver& d = driver();
  if (!d.ok) return nullptr;
  if (reg->library == nullptr && d.library_load(&reg->library, reg->image, nullptr, nullptr, 0,
                                                nullptr, nullptr, 0) != CUDA_SUCCESS) {
    return nullptr;
  }
  CUkernel k = nullptr;
  if (d.library_get_kernel(&k, reg->library, fit->second.second.c_str()) != CUDA_SUCCESS) {
    return nullptr;
  }
  (*g_kernels)[host_fun] = k;
  return k;
}

cudaError_t launch(CUkernel k, dim3 grid, dim3 block, void** args, size_t smem, cudaStream_t stream,
                   bool per_thread) {
  Driver& d = driver();
  if (!d.ok) return fail(cudaErrorInitializationError);
  if (k == nullptr) return fail(cudaErrorInvalidDeviceFunction);
  auto fn = reinterpret_cast<CUfunction>(k);  // a CUkernel is accepted where a CUfunction is
  auto s = reinterpret_cast<CUstream>(stream);
  if (d.private_launch != nullptr && std::getenv("FAKE_CUDART_PRIVATE_LAUNCH") != nullptr) {
    return from(d.private_launch(fn, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                 unsigned(smem), s, args, nullptr));
  }
  auto real = (per_thread && d.launch_ptsz) ? d.launch_ptsz : d.launch;
  return from(real(fn, grid.x, grid.y, grid.z, block.x, block.y, block.z, unsigned(smem), s, args,
                   nullptr));
}

cudaError_t launch_ex(const cudaLaunchConfig_t* config, const void* func, void** args,
                      bool per_thread) {
  Driver& d = driver();
  if (!d.ok || d.launch_ex == nullptr) return fail(cudaErrorInitializationError);
  if (config == nullptr) return fail(cudaErrorInvalidValue);
  CUkernel k = kernel_for(func);
  if (k == nullptr) return fail(cudaErrorInvalidDeviceFunction);
  std::vector<CUlaunchAttribute> attrs;
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    const cudaLaunchAttribute& a = config->attrs[i];
    if (a.id == cudaLaunchAttributeClusterDimension) {
      CUlaunchAttribute c{};
      c.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
      c.value.clusterDim.x = a.val.clusterDim.x;
      c.value.clusterDim.y = a.val.clusterDim.y;
      c.value.clusterDim.z = a.val.clusterDim.z;
      attrs.push_back(c);
    }
  }
  CUlaunchConfig cfg{};
  cfg.gridDimX = config->gridDim.x;
  cfg.gridDimY = config->gridDim.y;
  cfg.gridDimZ = config->gridDim.z;
  cfg.blockDimX = config->blockDim.x;
  cfg.blockDimY = config->blockDim.y;
  cfg.blockDimZ = config->blockDim.z;
  cfg.sharedMemBytes = unsigned(config->dynamicSmemBytes);
  cfg.hStream = reinterpret_cast<CUstream>(config->stream);
  cfg.attrs = attrs.data();
  cfg.numAttrs = unsigned(attrs.size());
  auto real = (per_thread && d.launch_ex_ptsz) ? d.launch_ex_ptsz : d.launch_ex;
  return from(real(&cfg, reinterpret_cast<CUfunction>(k), args, nullptr));
}

}  // namespace

extern "C" {

// ---- registration and the nvcc launch ABI ---------------------------------------------------

void** __cudaRegisterFatBinary(void* fatCubin) {
  auto* reg = new Registration();
  reg->image = fatCubin ? static_cast<FatbinWrapper*>(fatCubin)->data : nullptr;
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_registrations == nullptr) g_registrations = new std::vector<Registration*>();
  g_registrations->push_back(reg);
  return reinterpret_cast<void**>(reg);
}

void __cudaRegisterFatBinaryEnd(void**) {}

void __cudaUnregisterFatBinary(void**) {}

char __cudaInitModule(void**) { return 1; }

void __cudaRegisterFunction(void** fatCubinHandle, const char* hostFun, char*,
                            const char* deviceName, int, uint3*, uint3*, dim3*, dim3*, int*) {
  auto* reg = reinterpret_cast<Registration*>(fatCubinHandle);
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_functions == nullptr) {
    g_functions = new std::unordered_map<const void*, std::pair<Registration*, std::string>>();
  }
  reg->functions.emplace_back(hostFun, deviceName);
  (*g_functions)[hostFun] = {reg, deviceName};
}

unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                                     struct CUstream_st* stream) {
  t_configs.push_back({gridDim, blockDim, sharedMem, stream});
  return 0;
}

cudaError_t __cudaPopCallConfiguration(dim3* gridDim, dim3* blockDim, size_t* sharedMem,
                                       void* stream) {
  if (t_configs.empty()) return fail(cudaErrorMissingConfiguration);
  const CallConfig c = t_configs.back();
  t_configs.pop_back();
  *gridDim = c.grid;
  *blockDim = c.block;
  *sharedMem = c.smem;
  *static_cast<cudaStream_t*>(stream) = c.stream;
  return cudaSuccess;
}

cudaError_t __cudaGetKernel(cudaKernel_t* out, const void* hostFun) {
  CUkernel k = kernel_for(hostFun);
  if (k == nullptr) return fail(cudaErrorInvalidDeviceFunction);
  *out = reinterpret_cast<cudaKernel_t>(k);
  return cudaSuccess;
}

cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void** args,
                               size_t sharedMem, cudaStream_t stream) {
  return launch(reinterpret_cast<CUkernel>(kernel), gridDim, blockDim, args, sharedMem, stream,
                false);
}

cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void** args,
                                    size_t sharedMem, cudaStream_t stream) {
  return launch(reinterpret_cast<CUkernel>(kernel), gridDim, blockDim, args, sharedMem, stream,
                true);
}

cudaError_t cudaLaunchKernel(const void* func, dim3 gridDim, dim3 blockDim, void** args,
                             size_t sharedMem, cudaStream_t stream) {
  return launch(kernel_for(func), gridDim, blockDim, args, sharedMem, stream, false);
}

cudaError_t cudaLaunchKernel_ptsz(const void* func, dim3 gridDim, dim3 blockDim, void** args,
                                  size_t sharedMem, cudaStream_t stream) {
  return launch(kernel_for(func), gridDim, blockDim, args, sharedMem, stream, true);
}

cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void* func, void** args) {
  return launch_ex(config, func, args, false);
}

cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t* config, const void* func,
                                     void** args) {
  return launch_ex(config, func, args, true);
}

cudaError_t cudaFuncGetName(const char** name, const void* func) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (name == nullptr || g_functions == nullptr) return fail(cudaErrorInvalidValue);
  auto it = g_functions->find(func);
  if (it == g_functions->end()) return fail(cudaErrorInvalidDeviceFunction);
  *name = it->second.second.c_str();
  return cudaSuccess;
}

// ---- devices, memory, synchronisation, errors ---------------------------------------------

cudaError_t cudaGetDeviceCount(int* count) {
  Driver& d = driver();
  if (!d.ok || d.device_count == nullptr) return fail(cudaErrorNoDevice);
  if (count == nullptr) return fail(cudaErrorInvalidValue);
  return from(d.device_count(count));
}

// As the real runtime: the device's primary context becomes the calling thread's current one.
cudaError_t cudaSetDevice(int device) {
  Driver& d = driver();
  int count = 0;
  if (!d.ok || d.device_count == nullptr || d.device_count(&count) != CUDA_SUCCESS)
    return fail(cudaErrorNoDevice);
  if (device < 0 || device >= count) return fail(cudaErrorInvalidDevice);
  CUcontext ctx = nullptr;
  if (cudaError_t e = from(d.retain(&ctx, device)); e != cudaSuccess) return e;
  return from(d.set_current(ctx));
}

cudaError_t cudaMalloc(void** devPtr, size_t size) {
  Driver& d = driver();
  if (!d.ok || d.mem_alloc == nullptr) return fail(cudaErrorInitializationError);
  CUdeviceptr p = 0;
  cudaError_t e = from(d.mem_alloc(&p, size));
  *devPtr = reinterpret_cast<void*>(p);
  return e;
}

// cuda_runtime_api.h: "If devPtr is 0, no operation is performed" (the driver's cuMemFree
// refuses what it did not allocate).
cudaError_t cudaFree(void* devPtr) {
  if (devPtr == nullptr) return cudaSuccess;
  Driver& d = driver();
  if (!d.ok || d.mem_free == nullptr) return fail(cudaErrorInitializationError);
  return from(d.mem_free(reinterpret_cast<CUdeviceptr>(devPtr)));
}

// As NVIDIA's runtime, through the driver's synchronous copies (which the device runs and
// CUPTI records); cudaMemcpyDefault through the driver's unified copy, which tells host from
// device pointers by where they lie.
cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind) {
  const auto d_dst = reinterpret_cast<CUdeviceptr>(dst);
  const auto d_src = reinterpret_cast<CUdeviceptr>(src);
  switch (kind) {
    case cudaMemcpyHostToHost: std::memcpy(dst, src, count); return cudaSuccess;
    case cudaMemcpyDefault:
    case cudaMemcpyHostToDevice:
    case cudaMemcpyDeviceToHost:
    case cudaMemcpyDeviceToDevice: break;
    default: return fail(cudaErrorInvalidMemcpyDirection);
  }
  Driver& d = driver();
  if (!d.ok || d.memcpy_htod == nullptr || d.memcpy_dtoh == nullptr || d.memcpy_dtod == nullptr ||
      d.memcpy_unified == nullptr)
    return fail(cudaErrorInitializationError);
  if (kind == cudaMemcpyDefault) return from(d.memcpy_unified(d_dst, d_src, count));
  if (kind == cudaMemcpyHostToDevice) return from(d.memcpy_htod(d_dst, src, count));
  if (kind == cudaMemcpyDeviceToHost) return from(d.memcpy_dtoh(dst, d_src, count));
  return from(d.memcpy_dtod(d_dst, d_src, count));
}

cudaError_t cudaMemset(void* devPtr, int value, size_t count) {
  Driver& d = driver();
  if (!d.ok || d.memset_d8 == nullptr) return fail(cudaErrorInitializationError);
  return from(
      d.memset_d8(reinterpret_cast<CUdeviceptr>(devPtr), static_cast<unsigned char>(value), count));
}

cudaError_t cudaDeviceSynchronize(void) {
  Driver& d = driver();
  if (!d.ok || d.ctx_sync == nullptr) return fail(cudaErrorInitializationError);
  return from(d.ctx_sync());
}

cudaError_t cudaStreamCreate(cudaStream_t* pStream) {
  Driver& d = driver();
  if (!d.ok || d.stream_create == nullptr) return fail(cudaErrorInitializationError);
  CUstream s = nullptr;
  cudaError_t e = from(d.stream_create(&s, 0));
  *pStream = reinterpret_cast<cudaStream_t>(s);
  return e;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  Driver& d = driver();
  if (!d.ok || d.stream_sync == nullptr) return fail(cudaErrorInitializationError);
  return from(d.stream_sync(reinterpret_cast<CUstream>(stream)));
}

cudaError_t cudaGetLastError(void) {
  cudaError_t e = t_last_error;
  t_last_error = cudaSuccess;
  return e;
}

const char* cudaGetErrorString(cudaError_t error) {
  return error == cudaSuccess ? "no error" : "fake runtime error";
}

// ---- graphs -----------------------------------------------------------------------------------

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode) {
  Driver& d = driver();
  if (!d.ok || d.begin_capture == nullptr) return fail(cudaErrorInitializationError);
  return from(d.begin_capture(reinterpret_cast<CUstream>(stream), CUstreamCaptureMode(mode)));
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* pGraph) {
  Driver& d = driver();
  if (!d.ok || d.end_capture == nullptr) return fail(cudaErrorInitializationError);
  CUgraph g = nullptr;
  cudaError_t e = from(d.end_capture(reinterpret_cast<CUstream>(stream), &g));
  *pGraph = reinterpret_cast<cudaGraph_t>(g);
  return e;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t* pGraphExec, cudaGraph_t graph,
                                 unsigned long long flags) {
  Driver& d = driver();
  if (!d.ok || d.instantiate == nullptr) return fail(cudaErrorInitializationError);
  CUgraphExec e = nullptr;
  cudaError_t r = from(d.instantiate(&e, reinterpret_cast<CUgraph>(graph), flags));
  *pGraphExec = reinterpret_cast<cudaGraphExec_t>(e);
  return r;
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream) {
  Driver& d = driver();
  if (!d.ok || d.graph_launch == nullptr) return fail(cudaErrorInitializationError);
  return from(
      d.graph_launch(reinterpret_cast<CUgraphExec>(graphExec), reinterpret_cast<CUstream>(stream)));
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec) {
  Driver& d = driver();
  if (!d.ok || d.graph_exec_destroy == nullptr) return fail(cudaErrorInitializationError);
  return from(d.graph_exec_destroy(reinterpret_cast<CUgraphExec>(graphExec)));
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  Driver& d = driver();
  if (!d.ok || d.graph_destroy == nullptr) return fail(cudaErrorInitializationError);
  return from(d.graph_destroy(reinterpret_cast<CUgraph>(graph)));
}

}  // extern "C"
