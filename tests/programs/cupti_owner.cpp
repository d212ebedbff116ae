// A program that is itself a CUPTI client (like a framework whose profiler subscribes at
// import, or a process under Nsight): it takes the subscriber slot before CUDA starts, then
// launches kernels and checks its own callbacks still see every launch.
// Usage: cupti_owner <launches>
#include <cuda.h>
#include <cupti.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include "program_support.h"

using test_program::check;

namespace {

std::atomic<int> g_seen{0};

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                          const void* data) {
  const auto* cb = static_cast<const CUpti_CallbackData*>(data);
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel &&
      cb->callbackSite == CUPTI_API_ENTER) {
    ++g_seen;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int launches = test_program::arg_int(argc, argv, 1, 20);
  CUpti_SubscriberHandle sub = nullptr;
  CUpti_SubscriberParams params{};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "test-profiler";
  if (cuptiSubscribe_v2(&sub, on_callback, nullptr, &params) != CUPTI_SUCCESS) return 80;
  cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);

  test_program::init_primary_context();
  const std::string image = test_program::module_image({"owned_kernel_a", "owned_kernel_b"});
  CUmodule m = nullptr;
  check(cuModuleLoadData(&m, image.c_str()), "cuModuleLoadData");
  CUfunction a = nullptr, b = nullptr;
  check(cuModuleGetFunction(&a, m, "owned_kernel_a"), "get");
  check(cuModuleGetFunction(&b, m, "owned_kernel_b"), "get");
  for (int i = 0; i < launches; ++i) {
    // Halfway, give the runtime's worker time to predict the kernels seen so far: the second
    // half's NVTX ranges then carry those predictions.
    if (i == launches / 2) std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    check(cuLaunchKernel(i % 2 ? b : a, 4, 1, 1, 128, 1, 1, 0, nullptr, nullptr, nullptr), "launch");
  }
  check(cuCtxSynchronize(), "sync");
  std::printf("own callbacks %d\n", g_seen.load());
  cuptiUnsubscribe(sub);
  return 0;
}
