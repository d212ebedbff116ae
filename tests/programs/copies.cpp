// A program whose GPU time is partly memory copies and memsets, as a training loop's input
// pipeline makes it: two host-to-device copies of 1 MiB, three kernels, a memset, a
// device-to-device and a device-to-host copy. Prints "copied <bytes>" when the data came back
// as it went in (the copies must still copy under the shim).
//
//   copies          the copies through cuMemcpyHtoD / DtoD / DtoH
//   copies unified  the same through cuMemcpy, which reads each direction from where the
//                   pointers lie (unified addressing); then copies the driver must refuse
//   copies touch    reads a device pointer on the host, which faults as on a GPU
#include <cuda.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "program_support.h"

using test_program::check;

// Copies a real driver refuses with CUDA_ERROR_INVALID_VALUE: past an allocation's end, to or
// from memory it never allocated, and freeing what it did not allocate. Exit code 81 if one
// succeeds.
int refused_copies(CUdeviceptr a, std::size_t bytes) {
  unsigned char host[16] = {};
  const auto host_ptr = reinterpret_cast<CUdeviceptr>(host);
  if (cuMemcpyHtoD(a + bytes - 8, host, 16) != CUDA_ERROR_INVALID_VALUE) return 81;
  if (cuMemcpyDtoH(host, host_ptr, 16) != CUDA_ERROR_INVALID_VALUE) return 81;
  if (cuMemsetD8(host_ptr, 0, 16) != CUDA_ERROR_INVALID_VALUE) return 81;
  if (cuMemFree(a + 16) != CUDA_ERROR_INVALID_VALUE) return 81;
  CUdeviceptr none = 0;
  if (cuMemAlloc(&none, 0) != CUDA_ERROR_INVALID_VALUE) return 81;
  return 0;
}

int main(int argc, char** argv) {
  const bool unified = argc > 1 && std::strcmp(argv[1], "unified") == 0;
  const bool touch = argc > 1 && std::strcmp(argv[1], "touch") == 0;
  test_program::init_primary_context();
  constexpr std::size_t kBytes = std::size_t{1} << 20;
  std::vector<unsigned char> host(kBytes), back(kBytes, 0);
  for (std::size_t i = 0; i < kBytes; ++i) host[i] = static_cast<unsigned char>(i * 7);
  CUdeviceptr a = 0, b = 0;
  check(cuMemAlloc(&a, kBytes), "cuMemAlloc");
  check(cuMemAlloc(&b, kBytes), "cuMemAlloc");
  if (touch) {
    std::printf("touching\n");
    std::fflush(stdout);
    // The host reading a device address is what this mode is for.
    return *reinterpret_cast<volatile unsigned char*>(a);  // NOLINT(performance-no-int-to-ptr)
  }
  const auto host_ptr = reinterpret_cast<CUdeviceptr>(host.data());
  const auto back_ptr = reinterpret_cast<CUdeviceptr>(back.data());
  for (int i = 0; i < 2; ++i) {
    check(unified ? cuMemcpy(a, host_ptr, kBytes) : cuMemcpyHtoD(a, host.data(), kBytes),
          "cuMemcpyHtoD");
  }

  CUmodule m = nullptr;
  const std::string image = test_program::module_image({"copies_kernel"});
  check(cuModuleLoadData(&m, image.c_str()), "cuModuleLoadData");
  CUfunction f = nullptr;
  check(cuModuleGetFunction(&f, m, "copies_kernel"), "cuModuleGetFunction");
  for (unsigned i = 1; i <= 3; ++i) {
    check(cuLaunchKernel(f, 64 * i, 1, 1, 256, 1, 1, 0, nullptr, nullptr, nullptr),
          "cuLaunchKernel");
  }
  check(cuMemsetD8(b, 0, kBytes), "cuMemsetD8");
  check(unified ? cuMemcpy(b, a, kBytes) : cuMemcpyDtoD(b, a, kBytes), "cuMemcpyDtoD");
  check(unified ? cuMemcpy(back_ptr, b, kBytes) : cuMemcpyDtoH(back.data(), b, kBytes),
        "cuMemcpyDtoH");
  check(cuCtxSynchronize(), "cuCtxSynchronize");
  if (back != host) return 80;
  if (unified) {
    if (const int refused = refused_copies(a, kBytes)) return refused;
  }
  std::printf("copied %zu\n", kBytes);
  check(cuMemFree(a), "cuMemFree");
  check(cuMemFree(b), "cuMemFree");
  return 0;
}
