// A program that is itself a CUPTI client (like a framework whose profiler subscribes at
// import, or a process under Nsight): it takes the subscriber slot before CUDA starts, then
// launches kernels and checks its own callbacks still see every launch.
// Usage: cupti_owner <launches>
#include <cuda.h>
#include <cupti.h>

#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
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

// The fake NVTX tool's query, when it is the injected tool (NVTX_INJECTION64_PATH).
using PayloadPushes = int (*)(const char*);
PayloadPushes nvtx_tool_payload_pushes() {
  const char* path = std::getenv("NVTX_INJECTION64_PATH");
  if (path == nullptr) return nullptr;
  void* tool = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  return tool ? reinterpret_cast<PayloadPushes>(dlsym(tool, "fake_nvtx_payload_pushes")) : nullptr;
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
  auto launch = [&](CUfunction f) {
    check(cuLaunchKernel(f, 4, 1, 1, 128, 1, 1, 0, nullptr, nullptr, nullptr), "launch");
  };
  for (int i = 0; i < launches / 2; ++i) launch(i % 2 ? b : a);
  // The runtime predicts in the background: keep launching (as a training loop would) until
  // the NVTX tool has seen ranges carrying predictions for both kernels, then launch the
  // second half, whose ranges must all carry them. The probes are reported for the test.
  int probes = 0;
  if (auto* payload_pushes = nvtx_tool_payload_pushes()) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while ((payload_pushes("owned_kernel_a") == 0 || payload_pushes("owned_kernel_b") == 0) &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      launch(probes++ % 2 ? b : a);
    }
  }
  for (int i = launches / 2; i < launches; ++i) launch(i % 2 ? b : a);
  std::printf("probes %d\n", probes);
  check(cuCtxSynchronize(), "sync");
  std::printf("own callbacks %d\n", g_seen.load());
  cuptiUnsubscribe(sub);
  return 0;
}
