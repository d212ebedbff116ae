// A program on a machine with two GPUs of different models (the fake's
// FAKE_CUDA_DEVICE=H100,A100): `both` launches a kernel three times on each device, `second`
// only on device 1, as a program told to run on `cuda:1` does. Each device's kernel has a name
// of its own; "launch <name> <device>" is printed for each.
#include <cuda.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "program_support.h"

using test_program::check;

int main(int argc, char** argv) {
  check(cuInit(0), "cuInit");
  int count = 0;
  check(cuDeviceGetCount(&count), "cuDeviceGetCount");
  if (count < 2) {
    std::fprintf(stderr, "two devices needed, the driver has %d\n", count);
    return 94;
  }
  const bool both = argc > 1 && std::strcmp(argv[1], "both") == 0;
  const std::string image = test_program::module_image({"device_kernel_0", "device_kernel_1"});
  for (int ordinal = both ? 0 : 1; ordinal < 2; ++ordinal) {
    CUdevice dev = 0;
    check(cuDeviceGet(&dev, ordinal), "cuDeviceGet");
    CUcontext ctx = nullptr;
    check(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
    check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    CUdevice current = -1;
    check(cuCtxGetDevice(&current), "cuCtxGetDevice");
    if (current != dev) return 95;
    CUmodule module = nullptr;
    check(cuModuleLoadData(&module, image.c_str()), "cuModuleLoadData");
    const std::string name = "device_kernel_" + std::to_string(ordinal);
    CUfunction f = nullptr;
    check(cuModuleGetFunction(&f, module, name.c_str()), "cuModuleGetFunction");
    CUstream stream = nullptr;
    check(cuStreamCreate(&stream, 0), "cuStreamCreate");
    for (int i = 0; i < 3; ++i)
      check(cuLaunchKernel(f, 64, 1, 1, 128, 1, 1, 0, stream, nullptr, nullptr), "cuLaunchKernel");
    check(cuStreamSynchronize(stream), "cuStreamSynchronize");
    std::printf("launch %s %d\n", name.c_str(), ordinal);
  }
  return 0;
}
