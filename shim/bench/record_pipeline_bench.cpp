// The worker's cost per launch: a launch slot and its CUPTI record through the record joiner,
// builder and sink (classification memoised, predictions for two GPUs memoised, summary and
// accuracy monitor updated, no records file), as a training loop produces them: many threads'
// launches of a few dozen kernels, their records arriving a CUPTI buffer later. The worker
// must stay well below the time a launch takes (a few microseconds), or a launch storm fills
// the rings faster than it drains them.
//
//   build/ci/shim/pm2lat_record_pipeline_bench
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "collect/record_builder.h"
#include "collect/record_joiner.h"
#include "collect/record_sink.h"
#include "launch_path/string_table.h"

namespace {

using namespace pm2lat::shim;

constexpr int kThreads = 64;  // launching threads, each with its own kernel
// Launches whose records arrive together: about one CUPTI activity buffer's worth.
constexpr int kBatch = 8192;

struct Pipeline {
  Pipeline() : sink(setup()), builder(0, sink), joiner(joiner_setup(), sink.counters(), builder) {
    sink.start_loading_profiles();
    sink.settle_profiles(0);
    for (int t = 0; t < kThreads; ++t) {
      names.push_back(StringTable::instance().intern("thread_kernel_" + std::to_string(t)));
      cupti_names.push_back("thread_kernel_" + std::to_string(t));
    }
  }
  static SinkSetup setup() {
    SinkSetup s;
    s.targets = {"A100"};
    s.devices = {RunDevice{"NVIDIA H100 80GB HBM3", pm2lat::GpuHardware{9, 0, 132}}};
    s.drift_pct = 30;
    return s;
  }
  static JoinerSetup joiner_setup() {
    return JoinerSetup{MetadataSource::kCuptiCallbacks, TimingMode::kCupti, false};
  }
  RecordSink sink;
  RecordBuilder builder;
  RecordJoiner joiner;
  std::vector<std::uint32_t> names;
  std::vector<std::string> cupti_names;
  std::uint32_t next_correlation = 1;
  std::uint64_t next_seq = 1;
};

void BM_LaunchThroughJoinerBuilderSink(benchmark::State& state) {
  ::setenv("PM2LAT_PROFILES", PM2LAT_SOURCE_PROFILE_DIR, 0);
  Pipeline p;
  LaunchSlot slot;
  std::memset(static_cast<void*>(&slot), 0, sizeof slot);
  slot.kind = SlotKind::kKernel;
  slot.flags = slot_flags::kFromCallback;
  slot.api = LaunchApi::kCuLaunchKernel;
  slot.block[0] = 64;
  slot.block[1] = slot.block[2] = 1;
  slot.grid[1] = slot.grid[2] = 1;
  slot.cluster[0] = slot.cluster[1] = slot.cluster[2] = 1;
  std::vector<KernelTiming> records(kBatch);
  std::uint64_t now = 0;
  for (auto _ : state) {
    // One batch of launches from every thread, round robin as the driver numbers them, drained
    // ring by ring; then their records.
    const std::uint32_t first = p.next_correlation;
    for (int t = 0; t < kThreads; ++t) {
      for (int i = t; i < kBatch; i += kThreads) {
        slot.seq = p.next_seq++;
        slot.correlation_id = first + std::uint32_t(i);
        slot.name_id = p.names[std::size_t(t)];
        slot.grid[0] = std::uint32_t(t + 1);
        p.joiner.on_slot(slot, now);
      }
    }
    for (int i = 0; i < kBatch; ++i) {
      KernelTiming& r = records[std::size_t(i)];
      const int t = i % kThreads;
      r.correlation_id = first + std::uint32_t(i);
      r.start_ns = now;
      r.end_ns = now + 4000 + std::uint64_t(t);
      r.grid[0] = std::uint32_t(t + 1);
      r.block[0] = 64;
      r.name = p.cupti_names[std::size_t(t)].c_str();
      p.joiner.on_timing(r, now, p.next_seq);
    }
    p.next_correlation += kBatch;
    now += 1'000'000;
    p.joiner.end_pass(RingState{}, now, false);
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
  state.counters["ns_per_launch"] =
      benchmark::Counter(double(state.iterations()) * kBatch,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  if (p.sink.counters().measured != p.sink.counters().records) state.SkipWithError("unjoined");
}
BENCHMARK(BM_LaunchThroughJoinerBuilderSink)->Unit(benchmark::kMillisecond)->MinTime(2.0);

}  // namespace

BENCHMARK_MAIN();
