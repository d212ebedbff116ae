// Launch-path overhead: the cuLaunchKernel interposer body (hook mode) and the ring write,
// around a "driver" that does nothing, while a consumer thread drains the rings as the
// worker would (no I/O). Reports the per-launch latency distribution (p50/p99, measured
// launch by launch with the TSC) and the heap allocations made by the launching thread.
//
//   build/default/shim/pm2lat_launch_path_bench --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>
#include <malloc.h>
#include <x86intrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>
#include <vector>

#include "interpose/library_context.h"
#include "launch_path/driver_hooks.h"
#include "launch_path/handle_cache.h"
#include "launch_path/launch_path_state.h"
#include "launch_path/string_table.h"
#include "launch_path/thread_ring.h"
#include "launch_path/thread_state.h"

// ---- allocation counting: every allocation on a thread that asked to be counted ------------

namespace {
thread_local bool t_counting = false;
thread_local std::uint64_t t_allocations = 0;
}  // namespace

// glibc's own entry points, which the counting allocator below forwards to: their names are
// glibc's, reserved on purpose.
extern "C" {
// NOLINTBEGIN(bugprone-reserved-identifier,readability-inconsistent-declaration-parameter-name)
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);

void* malloc(size_t n) {
  if (t_counting) ++t_allocations;
  return __libc_malloc(n);
}
void* calloc(size_t a, size_t b) {
  if (t_counting) ++t_allocations;
  return __libc_calloc(a, b);
}
void* realloc(void* p, size_t n) {
  if (t_counting) ++t_allocations;
  return __libc_realloc(p, n);
}
void* aligned_alloc(size_t a, size_t n) {
  if (t_counting) ++t_allocations;
  return __libc_memalign(a, n);
}
int posix_memalign(void** out, size_t a, size_t n) {
  if (t_counting) ++t_allocations;
  *out = __libc_memalign(a, n);
  return *out ? 0 : 12;
}
// NOLINTEND(bugprone-reserved-identifier,readability-inconsistent-declaration-parameter-name)
}

namespace {

using namespace pm2lat::shim;

CUresult noop_launch(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                     unsigned, CUstream, void**, void**) {
  return CUDA_SUCCESS;
}

double tsc_ns_per_tick() {
  const auto t0 = std::chrono::steady_clock::now();
  const std::uint64_t c0 = __rdtsc();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto t1 = std::chrono::steady_clock::now();
  const std::uint64_t c1 = __rdtsc();
  return double(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count()) /
         double(c1 - c0);
}

// Drains every ring, as the worker does (a pass, then a short sleep: the worker polls with a
// 250 us - 2 ms back-off), so the launch path never sees a full ring. A consumer spinning
// on the ring indices would measure cache-line ping-pong the runtime does not cause.
class Consumer {
 public:
  // spin: drain without pausing (the worker's behaviour under a sustained flood of launches,
  // the worst case for the launch path: every ring index and slot line bounces between cores).
  explicit Consumer(bool spin = false) : spin_(spin), thread_([this] { run(); }) {}
  ~Consumer() {
    stop_ = true;
    thread_.join();
  }

 private:
  void run() {
    thread_state().internal = true;
    while (!stop_.load(std::memory_order_relaxed)) {
      for (ThreadRing* r = RingRegistry::instance().head(); r != nullptr; r = r->next) {
        while (r->peek() != nullptr) r->pop();
      }
      if (!spin_) std::this_thread::sleep_for(std::chrono::microseconds(250));
    }
  }
  std::atomic<bool> stop_{false};
  bool spin_ = false;
  std::thread thread_;
};

void set_up_hook_mode() {
  LaunchPathState& lp = launch_path_state();
  lp.metadata.store(MetadataSource::kHooks);
  lp.timing.store(TimingMode::kNone);
  lp.state.store(RuntimeState::kReady);
}

// A handle already seen once (its name and parameter layout cached), as in steady state.
CUfunction cached_handle(std::uint64_t value, int params) {
  KernelFacts facts;
  facts.name_id = StringTable::instance().intern("ampere_sgemm_128x64_tn");
  facts.registers = 128;
  for (int i = 0; i < params; ++i) {
    facts.param_size[i] = i == 2 ? 4 : 8;
    facts.param_offset[i] = static_cast<std::uint16_t>(i * 8);
  }
  facts.n_params = static_cast<std::uint8_t>(params);
  HandleCache::instance().insert(value, facts);
  return reinterpret_cast<CUfunction>(value);  // NOLINT(performance-no-int-to-ptr): a made-up handle, never dereferenced
}

void report(benchmark::State& state, std::vector<std::uint64_t>& ticks, std::uint64_t overhead,
            std::uint64_t allocations, std::uint64_t launches) {
  static const double ns_per_tick = tsc_ns_per_tick();
  std::sort(ticks.begin(), ticks.end());
  auto pct = [&](double p) {
    const std::uint64_t t =
        ticks[std::min<std::size_t>(ticks.size() - 1, std::size_t(p * ticks.size()))];
    return double(t > overhead ? t - overhead : 0) * ns_per_tick;
  };
  state.counters["p50_ns"] = pct(0.50);
  state.counters["p99_ns"] = pct(0.99);
  state.counters["p999_ns"] = pct(0.999);
  state.counters["allocs_per_launch"] = double(allocations) / double(launches);
  const ThreadRing* ring = thread_state().ring;
  state.counters["dropped"] = ring ? double(ring->dropped()) : 0.0;
}

std::uint64_t timer_overhead() {
  std::vector<std::uint64_t> t(10000);
  for (auto& v : t) {
    unsigned aux;
    const std::uint64_t a = __rdtscp(&aux);
    const std::uint64_t b = __rdtscp(&aux);
    v = b - a;
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

template <typename Body>
void measure(benchmark::State& state, Body&& body, bool spinning_consumer = false) {
  set_up_hook_mode();
  Consumer consumer(spinning_consumer);
  const std::uint64_t overhead = timer_overhead();
  for (int i = 0; i < 1000; ++i) body();  // first launch: ring creation, handle resolution
  std::vector<std::uint64_t> ticks;
  ticks.reserve(std::size_t(state.max_iterations));  // before counting: no allocation inside
  t_allocations = 0;
  std::uint64_t launches = 0;
  ThreadRing* ring = thread_state().ring;
  for (auto _ : state) {
    // Untimed: let the consumer catch up, so every timed launch takes the normal path (a
    // full ring would make it the cheaper drop path).
    while (ring != nullptr && ring->occupancy() > ring->capacity() / 2) std::this_thread::yield();
    unsigned aux;
    t_counting = true;
    const std::uint64_t a = __rdtscp(&aux);
    body();
    const std::uint64_t b = __rdtscp(&aux);
    t_counting = false;
    ticks.push_back(b - a);
    ++launches;
  }
  report(state, ticks, overhead, t_allocations, launches);
}

void BM_LaunchHook(benchmark::State& state) {
  const CUfunction f = cached_handle(0x1000, 0);
  measure(state, [&] {
    hooks::launch_kernel(&noop_launch, LaunchApi::kCuLaunchKernel, f, 128, 4, 1, 256, 1, 1, 0,
                         nullptr, nullptr, nullptr);
  });
}

// Inside a cuBLAS call: the call's GEMM context is copied into every slot.
void BM_LaunchHookInLibraryCall(benchmark::State& state) {
  const CUfunction f = cached_handle(0x2000, 0);
  LibraryCallScope scope(LibrarySource::kCublas, LibraryApi::kCublasGemmEx, pm2lat::OpKind::kGemm);
  scope.op().gemm().m = 4096;
  scope.op().gemm().n = 4096;
  scope.op().gemm().k = 4096;
  measure(state, [&] {
    hooks::launch_kernel(&noop_launch, LaunchApi::kCuLaunchKernel, f, 32, 32, 1, 256, 1, 1, 0,
                         nullptr, nullptr, nullptr);
  });
}

// A Triton-style kernel whose scalar arguments are read from its parameter layout.
void BM_LaunchHookWithScalarArgs(benchmark::State& state) {
  const CUfunction f = cached_handle(0x3000, 3);
  std::uint64_t a = 0x7f0000001000, b = 0x7f0000002000;
  int n = 4096;
  void* args[] = {&a, &b, &n};
  measure(state, [&] {
    hooks::launch_kernel(&noop_launch, LaunchApi::kCuLaunchKernel, f, 32, 1, 1, 128, 1, 1, 0,
                         nullptr, args, nullptr);
  });
}

}  // namespace

BENCHMARK(BM_LaunchHook)->Iterations(2'000'000)->UseRealTime();

void BM_LaunchHookSpinningConsumer(benchmark::State& state) {
  const CUfunction f = cached_handle(0x4000, 0);
  measure(
      state,
      [&] {
        hooks::launch_kernel(&noop_launch, LaunchApi::kCuLaunchKernel, f, 128, 4, 1, 256, 1, 1, 0,
                             nullptr, nullptr, nullptr);
      },
      /*spinning_consumer=*/true);
}
BENCHMARK(BM_LaunchHookSpinningConsumer)->Iterations(2'000'000)->UseRealTime();
BENCHMARK(BM_LaunchHookInLibraryCall)->Iterations(2'000'000)->UseRealTime();
BENCHMARK(BM_LaunchHookWithScalarArgs)->Iterations(2'000'000)->UseRealTime();

BENCHMARK_MAIN();
