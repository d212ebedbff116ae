// The record joiner driven with made-up slots and CUPTI records, and a clock the test moves.
#include "collect/record_joiner.h"

#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <vector>

#include "collect/record_notes.h"
#include "launch_path/string_table.h"

namespace pm2lat::shim {
namespace {

constexpr std::uint64_t kMs = 1'000'000;

// What the joiner handed on, copied (its pointers only live during the call).
struct Joined {
  std::optional<LaunchSlot> launch;
  std::optional<KernelTiming> timing;
  std::optional<OpPod> op;
  std::optional<double> events_us;
  std::uint32_t notes = 0;
  bool replay = false;
};

class Collector final : public JoinedKernelSink {
 public:
  void on_kernel(const JoinedKernel& k) override {
    Joined j;
    if (k.launch) j.launch = *k.launch;
    if (k.timing) j.timing = *k.timing;
    if (k.op) j.op = *k.op;
    j.events_us = k.events_us;
    j.notes = k.notes;
    j.replay = k.replay;
    out.push_back(j);
  }
  std::vector<Joined> out;
};

LaunchSlot kernel_slot(std::uint64_t seq, std::uint32_t correlation, std::uint16_t flags,
                       const char* name = "k", std::uint32_t grid_x = 4) {
  LaunchSlot s;
  std::memset(static_cast<void*>(&s), 0, sizeof s);
  s.kind = SlotKind::kKernel;
  s.seq = seq;
  s.correlation_id = correlation;
  s.flags = flags;
  s.name_id = StringTable::instance().intern(name);
  s.grid[0] = grid_x;
  s.grid[1] = s.grid[2] = 1;
  s.block[0] = 128;
  s.block[1] = s.block[2] = 1;
  return s;
}

LaunchSlot event_slot(SlotKind kind) {
  LaunchSlot s;
  std::memset(static_cast<void*>(&s), 0, sizeof s);
  s.kind = kind;
  return s;
}

KernelTiming timing(std::uint32_t correlation, const char* name = "k", std::uint32_t grid_x = 4) {
  KernelTiming t;
  t.correlation_id = correlation;
  t.start_ns = 1000;
  t.end_ns = 1000 + 250 * correlation;
  t.grid[0] = grid_x;
  t.block[0] = 128;
  // CUPTI's names are its own strings: the joiner compares their text.
  t.name = StringTable::instance().get(StringTable::instance().intern(name)).data();
  return t;
}

struct Fixture {
  explicit Fixture(MetadataSource metadata, TimingMode timing = TimingMode::kCupti)
      : joiner(JoinerSetup{metadata, timing, timing == TimingMode::kNone}, counters, sink) {}
  ShimCounters counters;
  Collector sink;
  RecordJoiner joiner;
};

const RingState kEmptyRings{};

TEST(RecordJoiner, CallbackLaunchesJoinTheirRecordsByCorrelationId) {
  Fixture f(MetadataSource::kCuptiCallbacks);
  f.joiner.on_slot(kernel_slot(1, 11, slot_flags::kFromCallback), 0);
  f.joiner.on_slot(kernel_slot(2, 12, slot_flags::kFromCallback), 0);
  EXPECT_EQ(f.joiner.launches_waiting(), 2u);
  f.joiner.on_timing(timing(12), 0, 3);
  f.joiner.on_timing(timing(11), 0, 3);
  ASSERT_EQ(f.sink.out.size(), 2u);
  EXPECT_EQ(f.sink.out[0].launch->seq, 2u);
  EXPECT_EQ(f.sink.out[0].timing->correlation_id, 12u);
  EXPECT_EQ(f.sink.out[0].notes, 0u);
  EXPECT_EQ(f.sink.out[1].launch->seq, 1u);
  EXPECT_EQ(f.joiner.launches_waiting(), 0u);
  EXPECT_EQ(f.counters.launches, 2u);
}

TEST(RecordJoiner, HookedLaunchesJoinThroughTheirExternalCorrelation) {
  Fixture f(MetadataSource::kHooks);
  f.joiner.on_slot(kernel_slot(7, 0, slot_flags::kExternalCorrelation), 0);
  f.joiner.on_external(ExternalCorrelation{40, 7});
  f.joiner.on_timing(timing(40), 0, 8);
  ASSERT_EQ(f.sink.out.size(), 1u);
  EXPECT_EQ(f.sink.out[0].launch->seq, 7u);
  EXPECT_EQ(f.sink.out[0].timing->correlation_id, 40u);
  // The record of a launch whose slot was dropped is attributed to the drop.
  f.joiner.on_external(ExternalCorrelation{41, kDroppedLaunchSeq});
  f.joiner.on_timing(timing(41), 0, 8);
  ASSERT_EQ(f.sink.out.size(), 2u);
  EXPECT_FALSE(f.sink.out[1].launch);
  EXPECT_EQ(f.sink.out[1].notes, notes::kLaunchDropped);
}

TEST(RecordJoiner, ARecordAheadOfItsLaunchWaitsForItAndJoinsAsSoonAsItIsDrained) {
  Fixture f(MetadataSource::kCuptiCallbacks);
  f.joiner.on_timing(timing(5), 0, 10);
  f.joiner.on_timing(timing(6), 0, 10);
  EXPECT_EQ(f.joiner.records_waiting(), 2u);
  // The launches are still in a ring (seq 9 < bound 10): the records wait, however late.
  for (int pass = 0; pass < 3; ++pass) f.joiner.end_pass(RingState{9, 0}, 5'000 * kMs, false);
  EXPECT_TRUE(f.sink.out.empty());
  // Drained: joined at the end of that pass, well within the grace period of orphans.
  f.joiner.on_slot(kernel_slot(9, 5, slot_flags::kFromCallback), 1 * kMs);
  f.joiner.on_slot(kernel_slot(10, 6, slot_flags::kFromCallback), 1 * kMs);
  f.joiner.end_pass(kEmptyRings, 2 * kMs, false);
  ASSERT_EQ(f.sink.out.size(), 2u);
  EXPECT_EQ(f.sink.out[0].launch->seq, 9u);
  EXPECT_EQ(f.sink.out[0].notes, 0u);
  EXPECT_EQ(f.sink.out[1].launch->seq, 10u);
  EXPECT_EQ(f.joiner.records_waiting(), 0u);
}

TEST(RecordJoiner, RecordsNoLaunchClaimsAreDropsFirstThenUnhooked) {
  Fixture f(MetadataSource::kCuptiCallbacks);
  f.joiner.on_timing(timing(1), 0, 0);
  f.joiner.on_timing(timing(2), 0, 0);
  // Within the grace period nothing is settled.
  f.joiner.end_pass(RingState{UINT64_MAX, 1}, 1 * kMs, false);
  f.joiner.end_pass(RingState{UINT64_MAX, 1}, 2 * kMs, false);
  f.joiner.end_pass(RingState{UINT64_MAX, 1}, 3 * kMs, false);
  EXPECT_TRUE(f.sink.out.empty());
  f.joiner.end_pass(RingState{UINT64_MAX, 1}, RecordJoiner::kOrphanGraceNs + 4 * kMs, false);
  ASSERT_EQ(f.sink.out.size(), 2u);
  EXPECT_EQ(f.sink.out[0].notes, notes::kLaunchDropped);  // one launch was dropped
  EXPECT_EQ(f.sink.out[1].notes, notes::kUnhooked);
  EXPECT_TRUE(f.sink.out[1].timing);
  EXPECT_EQ(f.counters.unhooked, 1u);
}

// Records far ahead of their launches (a worker kept from running while the buffers fill) are
// held up to the bound, within a pass as well: beyond it the oldest are settled at once.
TEST(RecordJoiner, RecordsAheadOfTheirLaunchesAreBoundedWithinAPass) {
  Fixture f(MetadataSource::kCuptiCallbacks);
  f.joiner.end_pass(RingState{UINT64_MAX, 3}, 0, false);  // three launches dropped so far
  const std::size_t extra = 5;
  for (std::uint32_t c = 1; c <= RecordJoiner::kMaxPending + extra; ++c)
    f.joiner.on_timing(timing(c), 0, 0);
  EXPECT_EQ(f.joiner.records_waiting(), RecordJoiner::kMaxPending);
  ASSERT_EQ(f.sink.out.size(), extra);
  EXPECT_EQ(f.sink.out[0].timing->correlation_id, 1u);  // the oldest first
  EXPECT_EQ(f.sink.out[2].notes, notes::kLaunchDropped);
  EXPECT_EQ(f.sink.out[3].notes, notes::kUnhooked);
  // The launch of a record still held joins it.
  f.joiner.on_slot(kernel_slot(1, extra + 1, slot_flags::kFromCallback), 0);
  ASSERT_EQ(f.sink.out.size(), extra + 1);
  EXPECT_TRUE(f.sink.out.back().launch && f.sink.out.back().timing);
}

TEST(RecordJoiner, ALaunchWhoseRecordNeverComesIsWrittenUnmeasuredAfterTheTimeout) {
  Fixture f(MetadataSource::kCuptiCallbacks);
  f.joiner.on_slot(kernel_slot(1, 3, slot_flags::kFromCallback), 0);
  f.joiner.end_pass(kEmptyRings, RecordJoiner::kTimingTimeoutNs - 1, false);
  EXPECT_TRUE(f.sink.out.empty());
  f.joiner.end_pass(kEmptyRings, RecordJoiner::kTimingTimeoutNs + 1, false);
  ASSERT_EQ(f.sink.out.size(), 1u);
  EXPECT_EQ(f.sink.out[0].notes, notes::kUnmeasured | notes::kTimingLost);
  EXPECT_EQ(f.counters.timing_lost, 1u);
  // The final pass settles whatever waits, at once.
  f.joiner.on_slot(kernel_slot(2, 4, slot_flags::kFromCallback), 0);
  f.joiner.end_pass(kEmptyRings, 1, true);
  EXPECT_EQ(f.sink.out.size(), 2u);
}

TEST(RecordJoiner, KernelsCarryTheirLibraryCallsContext) {
  Fixture f(MetadataSource::kCuptiCallbacks);
  LaunchSlot call = event_slot(SlotKind::kLibraryCall);
  OpPod op;
  op.call_id = 3;
  op.kind = OpKind::kGemm;
  op.gemm().m = 512;
  set_library_call(call, op);
  f.joiner.on_slot(call, 0);
  LaunchSlot k = kernel_slot(1, 8, slot_flags::kFromCallback);
  k.call_id = 3;
  f.joiner.on_slot(k, 0);
  f.joiner.on_timing(timing(8), 0, 2);
  ASSERT_EQ(f.sink.out.size(), 1u);
  ASSERT_TRUE(f.sink.out[0].op);
  EXPECT_EQ(f.sink.out[0].op->gemm_or_default().m, 512);
  EXPECT_EQ(f.sink.out[0].op->conv_or_default().batch, 0);
}

TEST(RecordJoiner, GraphReplaysAreTheCapturedTemplateWithTheReplaysTiming) {
  Fixture f(MetadataSource::kCuptiCallbacks);
  LaunchSlot captured =
      kernel_slot(1, 20, slot_flags::kFromCallback | slot_flags::kCaptured, "graph_kernel", 16);
  captured.graph_node = 100;
  f.joiner.on_slot(captured, 0);
  EXPECT_EQ(f.counters.captured, 1u);
  LaunchSlot cloned = event_slot(SlotKind::kGraphNodeCloned);
  cloned.graph_node = 100;
  cloned.graph_exec = 200;
  f.joiner.on_slot(cloned, 0);
  LaunchSlot launch = event_slot(SlotKind::kGraphLaunch);
  launch.correlation_id = 30;
  launch.flags = slot_flags::kFromCallback;
  f.joiner.on_slot(launch, 0);
  KernelTiming t = timing(30, "graph_kernel", 16);
  t.graph_node_id = 200;
  t.graph_id = 1;
  f.joiner.on_timing(t, 0, 3);
  f.joiner.on_timing(t, 0, 3);  // a second replay of the same launch's node
  ASSERT_EQ(f.sink.out.size(), 2u);
  for (const Joined& j : f.sink.out) {
    EXPECT_TRUE(j.replay);
    EXPECT_EQ(j.notes, notes::kGraphReplay);
    EXPECT_EQ(j.launch->grid[0], 16u);
    EXPECT_EQ(j.timing->graph_node_id, 200u);
  }
  EXPECT_EQ(f.counters.graph_replays, 2u);
}

TEST(RecordJoiner, ARuntimeOnlyLaunchJoinsItsRecordByNameAndGeometry) {
  Fixture f(MetadataSource::kHooks);
  f.joiner.on_slot(kernel_slot(4, 0, slot_flags::kRuntimeOnly, "runtime_kernel", 2), 0);
  f.joiner.on_timing(timing(50, "other_kernel", 2), 0, 5);
  f.joiner.on_timing(timing(51, "runtime_kernel", 2), 0, 5);
  f.joiner.end_pass(kEmptyRings, RecordJoiner::kOrphanGraceNs + 1, false);
  f.joiner.end_pass(kEmptyRings, RecordJoiner::kOrphanGraceNs + 2, false);
  f.joiner.end_pass(kEmptyRings, RecordJoiner::kOrphanGraceNs + 3, false);
  ASSERT_EQ(f.sink.out.size(), 2u);
  EXPECT_EQ(f.sink.out[0].notes, notes::kUnhooked);
  EXPECT_EQ(f.sink.out[1].notes, notes::kRuntimeOnly);
  EXPECT_EQ(f.sink.out[1].launch->seq, 4u);
  EXPECT_EQ(f.sink.out[1].timing->correlation_id, 51u);
}

TEST(RecordJoiner, WithoutCuptiLaunchesAreWrittenAtOnceAndFailedOnesOnlyCounted) {
  Fixture f(MetadataSource::kHooks, TimingMode::kNone);
  LaunchSlot failed = kernel_slot(1, 0, 0);
  failed.result = 1;
  f.joiner.on_slot(failed, 0);
  f.joiner.on_slot(kernel_slot(2, 0, 0), 0);
  f.joiner.on_events_timed(kernel_slot(3, 0, slot_flags::kEventsTimed), 4.5);
  f.joiner.on_events_timed(kernel_slot(4, 0, slot_flags::kEventsTimed), std::nullopt);
  ASSERT_EQ(f.sink.out.size(), 3u);
  EXPECT_EQ(f.sink.out[0].notes, notes::kUnmeasured | notes::kPredictOnly);
  EXPECT_EQ(f.sink.out[1].notes, notes::kEventsTiming);
  EXPECT_EQ(*f.sink.out[1].events_us, 4.5);
  EXPECT_EQ(f.sink.out[2].notes, notes::kUnmeasured | notes::kTimingLost);
  EXPECT_EQ(f.counters.failed_launches, 1u);
  EXPECT_EQ(f.counters.launches, 4u);
}

}  // namespace
}  // namespace pm2lat::shim
