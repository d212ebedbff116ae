// N threads, each launching M kernels of its own ("thread_kernel_<t>", grid t+1) through the
// cuLaunchKernel pointer cuGetProcAddress returns, as quickly as the (simulated) GPU allows.
// Usage: many_threads <threads> <launches per thread>
#include <cuda.h>
#include <cudaTypedefs.h>

#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "program_support.h"

using test_program::check;

int main(int argc, char** argv) {
  const int threads = test_program::arg_int(argc, argv, 1, 64);
  const int launches = test_program::arg_int(argc, argv, 2, 100000);
  CUcontext ctx = test_program::init_primary_context();

  std::vector<std::string> names;
  for (int t = 0; t < threads; ++t) names.push_back("thread_kernel_" + std::to_string(t));
  const std::string image = test_program::module_image(names);
  CUmodule module = nullptr;
  check(cuModuleLoadData(&module, image.c_str()), "cuModuleLoadData");
  std::vector<CUfunction> functions(threads);
  for (int t = 0; t < threads; ++t) {
    check(cuModuleGetFunction(&functions[t], module, names[t].c_str()), "cuModuleGetFunction");
  }
  void* p = nullptr;
  CUdriverProcAddressQueryResult status{};
  check(cuGetProcAddress("cuLaunchKernel", &p, 12000, 0, &status), "cuGetProcAddress");
  auto launch = reinterpret_cast<PFN_cuLaunchKernel_v4000>(p);

  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
      CUstream stream = nullptr;
      check(cuStreamCreate(&stream, 0), "cuStreamCreate");
      for (int i = 0; i < launches; ++i) {
        check(launch(functions[t], unsigned(t + 1), 1, 1, 64, 1, 1, 0, stream, nullptr, nullptr),
              "launch");
      }
      check(cuStreamSynchronize(stream), "cuStreamSynchronize");
    });
  }
  for (auto& th : pool) th.join();
  std::printf("launched %d\n", threads * launches);
  return 0;
}
