#include "launch_path/launch_slot.h"

namespace pm2lat::shim {

const char* to_string(LaunchApi api) noexcept {
  switch (api) {
    case LaunchApi::kCuLaunchKernel: return "cuLaunchKernel";
    case LaunchApi::kCuLaunchKernelPtsz: return "cuLaunchKernel_ptsz";
    case LaunchApi::kCuLaunchKernelEx: return "cuLaunchKernelEx";
    case LaunchApi::kCuLaunchKernelExPtsz: return "cuLaunchKernelEx_ptsz";
    case LaunchApi::kCuLaunchCooperativeKernel: return "cuLaunchCooperativeKernel";
    case LaunchApi::kCuLaunchCooperativeKernelPtsz: return "cuLaunchCooperativeKernel_ptsz";
    case LaunchApi::kCuGraphLaunch: return "cuGraphLaunch";
    case LaunchApi::kCuGraphLaunchPtsz: return "cuGraphLaunch_ptsz";
    case LaunchApi::kCudaLaunchKernel: return "cudaLaunchKernel";
    case LaunchApi::kCudaLaunchKernelPtsz: return "cudaLaunchKernel_ptsz";
    case LaunchApi::kCudaLaunchKernelExC: return "cudaLaunchKernelExC";
    case LaunchApi::kCudaLaunchKernelExCPtsz: return "cudaLaunchKernelExC_ptsz";
    case LaunchApi::kCudaLaunchKernelInternal: return "__cudaLaunchKernel";
    case LaunchApi::kCudaLaunchKernelInternalPtsz: return "__cudaLaunchKernel_ptsz";
    case LaunchApi::kUnknown: break;
  }
  return "unknown";
}

bool is_per_thread_stream(LaunchApi api) noexcept {
  switch (api) {
    case LaunchApi::kCuLaunchKernelPtsz:
    case LaunchApi::kCuLaunchKernelExPtsz:
    case LaunchApi::kCuLaunchCooperativeKernelPtsz:
    case LaunchApi::kCuGraphLaunchPtsz:
    case LaunchApi::kCudaLaunchKernelPtsz:
    case LaunchApi::kCudaLaunchKernelExCPtsz:
    case LaunchApi::kCudaLaunchKernelInternalPtsz: return true;
    default: return false;
  }
}

const char* to_string(LibrarySource s) noexcept {
  switch (s) {
    case LibrarySource::kCublas: return "cublas";
    case LibrarySource::kCublasLt: return "cublasLt";
    case LibrarySource::kCudnn: return "cudnn";
    case LibrarySource::kNone: break;
  }
  return "";
}

const char* to_string(LibraryApi a) noexcept {
  switch (a) {
    case LibraryApi::kCublasLtMatmul: return "cublasLtMatmul";
    case LibraryApi::kCublasGemmEx: return "cublasGemmEx";
    case LibraryApi::kCublasGemmEx64: return "cublasGemmEx_64";
    case LibraryApi::kCublasGemmStridedBatchedEx: return "cublasGemmStridedBatchedEx";
    case LibraryApi::kCublasGemmStridedBatchedEx64: return "cublasGemmStridedBatchedEx_64";
    case LibraryApi::kCublasGemmBatchedEx: return "cublasGemmBatchedEx";
    case LibraryApi::kCublasGemmBatchedEx64: return "cublasGemmBatchedEx_64";
    case LibraryApi::kCublasSgemm: return "cublasSgemm_v2";
    case LibraryApi::kCublasHgemm: return "cublasHgemm";
    case LibraryApi::kCublasSgemmStridedBatched: return "cublasSgemmStridedBatched";
    case LibraryApi::kCudnnConvolutionForward: return "cudnnConvolutionForward";
    case LibraryApi::kCudnnBackendExecute: return "cudnnBackendExecute";
    case LibraryApi::kNone: break;
  }
  return "";
}

}  // namespace pm2lat::shim
