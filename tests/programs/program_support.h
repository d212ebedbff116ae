// Small helpers shared by the test programs that run under libpm2lat.so: fail loudly on
// any CUDA error (a test program that silently goes wrong would make a test pass for the
// wrong reason) and build fake module images.
#pragma once

#include <cuda.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace test_program {

inline void check(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "%s failed: %d\n", what, static_cast<int>(r));
    std::exit(90);
  }
}

// A module image for the fake driver: each entry is "name" or "name:size,size,...".
inline std::string module_image(const std::vector<std::string>& kernels) {
  std::string image = "FAKECUBIN\n";
  for (const auto& k : kernels) image += k + "\n";
  return image;
}

inline CUcontext init_primary_context() {
  check(cuInit(0), "cuInit");
  CUdevice dev = 0;
  check(cuDeviceGet(&dev, 0), "cuDeviceGet");
  CUcontext ctx = nullptr;
  check(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
  check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  return ctx;
}

inline int arg_int(int argc, char** argv, int i, int fallback) {
  return argc > i ? std::atoi(argv[i]) : fallback;
}

}  // namespace test_program
