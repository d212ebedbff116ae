// A program whose own profiler uses CUPTI's activity API the way PyTorch's (kineto,
// CuptiActivityApi.cpp) does, through its PLT: started in the middle of the run it registers
// its buffer callbacks and enables kinds, stopped it disables them and flushes. Like kineto it
// only accepts buffers it allocated ("bufferCompleted called with unknown buffer" otherwise)
// and does not subscribe to the callback API. Prints what the profiler collected.
// Usage: kineto_like_profiler <before> <while profiling> <after>
#include <cuda.h>
#include <cupti.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>

#include "program_support.h"

using test_program::check;

namespace {

// kineto's buffer size (CuptiActivityApi.cpp: kBufSize).
constexpr std::size_t kBufferBytes = 4 * 1024 * 1024;

struct Profiler {
  std::mutex mu;
  std::set<std::uint8_t*> allocated;
  std::set<CUpti_ActivityKind> enabled;
  int kernels = 0;
  int unknown_buffers = 0;
  int unexpected_records = 0;  // of a kind it did not enable
};

Profiler g_profiler;

void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max) {
  std::lock_guard<std::mutex> lock(g_profiler.mu);
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = kBufferBytes;
  *max = 0;
  g_profiler.allocated.insert(*buffer);
}

void CUPTIAPI buffer_completed(CUcontext, std::uint32_t, std::uint8_t* buffer, std::size_t,
                               std::size_t valid) {
  std::lock_guard<std::mutex> lock(g_profiler.mu);
  if (g_profiler.allocated.erase(buffer) == 0) {
    ++g_profiler.unknown_buffers;  // kineto logs an error and drops it
    return;
  }
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (g_profiler.enabled.count(record->kind) == 0) {
      ++g_profiler.unexpected_records;
      continue;
    }
    if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) continue;
    const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
    if (std::strcmp(k->name, "profiled_kernel") == 0) ++g_profiler.kernels;
  }
  std::free(buffer);
}

void enable(CUpti_ActivityKind kind) {
  if (cuptiActivityEnable(kind) != CUPTI_SUCCESS) std::exit(70);
  std::lock_guard<std::mutex> lock(g_profiler.mu);
  g_profiler.enabled.insert(kind);
}

void disable(CUpti_ActivityKind kind) {
  if (cuptiActivityDisable(kind) != CUPTI_SUCCESS) std::exit(71);
}

void launch(CUfunction f, int n) {
  for (int i = 0; i < n; ++i) {
    check(cuLaunchKernel(f, 4, 1, 1, 64, 1, 1, 0, nullptr, nullptr, nullptr), "launch");
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int before = test_program::arg_int(argc, argv, 1, 20);
  const int profiled = test_program::arg_int(argc, argv, 2, 30);
  const int after = test_program::arg_int(argc, argv, 3, 40);
  test_program::init_primary_context();
  const std::string image = test_program::module_image(
      {"before_profiler_kernel", "profiled_kernel", "after_profiler_kernel"});
  CUmodule m = nullptr;
  check(cuModuleLoadData(&m, image.c_str()), "cuModuleLoadData");
  CUfunction f_before = nullptr, f_profiled = nullptr, f_after = nullptr;
  check(cuModuleGetFunction(&f_before, m, "before_profiler_kernel"), "get");
  check(cuModuleGetFunction(&f_profiled, m, "profiled_kernel"), "get");
  check(cuModuleGetFunction(&f_after, m, "after_profiler_kernel"), "get");

  launch(f_before, before);
  check(cuCtxSynchronize(), "sync");

  // torch.profiler starts: kineto's enableCuptiActivities.
  if (cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS)
    return 72;
  enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  enable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  launch(f_profiled, profiled);
  check(cuCtxSynchronize(), "sync");
  // ... and stops: disableCuptiActivities, then a forced flush that must deliver everything.
  disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  disable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  if (cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != CUPTI_SUCCESS) return 73;
  {
    std::lock_guard<std::mutex> lock(g_profiler.mu);
    std::printf("profiler kernels %d unknown_buffers %d unexpected_records %d\n",
                g_profiler.kernels, g_profiler.unknown_buffers, g_profiler.unexpected_records);
  }

  launch(f_after, after);
  check(cuCtxSynchronize(), "sync");
  return 0;
}
