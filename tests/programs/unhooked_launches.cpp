// A program that reaches the driver through an entry point no hook covers and that CUPTI's
// API callbacks do not see (as a library with a private path to the driver might): its
// kernels still run, so they still appear in CUPTI's activity records, which is how the
// runtime finds out what it missed.
// Usage: unhooked_launches <hooked launches> <unhooked launches>
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>

#include <cstdio>

#include "program_support.h"

using test_program::check;

int main(int argc, char** argv) {
  const int hooked = test_program::arg_int(argc, argv, 1, 3);
  const int unhooked = test_program::arg_int(argc, argv, 2, 5);
  test_program::init_primary_context();
  const std::string image = test_program::module_image({"public_kernel", "private_kernel"});
  CUmodule m = nullptr;
  check(cuModuleLoadData(&m, image.c_str()), "cuModuleLoadData");
  CUfunction pub = nullptr, priv = nullptr;
  check(cuModuleGetFunction(&pub, m, "public_kernel"), "get");
  check(cuModuleGetFunction(&priv, m, "private_kernel"), "get");

  // The fake driver's private entry point, found in the driver itself, not through dlsym's
  // global scope or cuGetProcAddress.
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  auto* private_launch =
      driver ? reinterpret_cast<PFN_cuLaunchKernel_v4000>(dlsym(driver, "fakecuda_private_launch"))
             : nullptr;
  if (private_launch == nullptr) return 81;

  for (int i = 0; i < hooked; ++i) {
    check(cuLaunchKernel(pub, 8, 1, 1, 64, 1, 1, 0, nullptr, nullptr, nullptr), "launch");
  }
  for (int i = 0; i < unhooked; ++i) {
    check(private_launch(priv, 16, 2, 1, 128, 1, 1, 0, nullptr, nullptr, nullptr), "private");
  }
  check(cuCtxSynchronize(), "sync");
  std::printf("launched %d hooked, %d unhooked\n", hooked, unhooked);
  return 0;
}
