// A program whose GPU time is partly memory copies and memsets, as a training loop's input
// pipeline makes it: two host-to-device copies of 1 MiB, three kernels, a memset, a
// device-to-device and a device-to-host copy. Prints "copied <bytes>" when the data came back
// as it went in (the copies must still copy under the shim).
#include <cuda.h>

#include <cstdio>
#include <vector>

#include "program_support.h"

using test_program::check;

int main() {
  test_program::init_primary_context();
  constexpr std::size_t kBytes = std::size_t{1} << 20;
  std::vector<unsigned char> host(kBytes), back(kBytes, 0);
  for (std::size_t i = 0; i < kBytes; ++i) host[i] = static_cast<unsigned char>(i * 7);
  CUdeviceptr a = 0, b = 0;
  check(cuMemAlloc(&a, kBytes), "cuMemAlloc");
  check(cuMemAlloc(&b, kBytes), "cuMemAlloc");
  check(cuMemcpyHtoD(a, host.data(), kBytes), "cuMemcpyHtoD");
  check(cuMemcpyHtoD(a, host.data(), kBytes), "cuMemcpyHtoD");

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
  check(cuMemcpyDtoD(b, a, kBytes), "cuMemcpyDtoD");
  check(cuMemcpyDtoH(back.data(), b, kBytes), "cuMemcpyDtoH");
  check(cuCtxSynchronize(), "cuCtxSynchronize");
  if (back != host) return 80;
  std::printf("copied %zu\n", kBytes);
  check(cuMemFree(a), "cuMemFree");
  check(cuMemFree(b), "cuMemFree");
  return 0;
}
