// Joins what the worker drains into kernels: each launch (a ring slot, in launch order per
// thread) with its measurement (a CUPTI kernel record, arriving later and in batches, joined
// by correlation id, by external correlation id or by graph node; or CUDA events) and with
// the library call it was made in. What cannot be joined is still handed on, marked: a
// record no launch claims (unhooked, a dropped launch), a launch whose record never comes
// (timing lost). Memory is bounded: launches wait at most kTimingTimeoutNs, every table has
// a cap. Time comes in as arguments, so tests drive it with made-up slots and timings.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <unordered_map>
#include <vector>

#include "collect/graph_registry.h"
#include "collect/pending_launches.h"
#include "collect/summary.h"
#include "cupti/cupti_activity_collector.h"
#include "launch_path/launch_path_state.h"
#include "launch_path/launch_slot.h"

namespace pm2lat::shim {

// One kernel ready to become a record. Any part may be missing.
struct JoinedKernel {
  const LaunchSlot* launch = nullptr;    // null: only CUPTI saw it
  const KernelTiming* timing = nullptr;  // CUPTI's record; null when CUPTI did not measure it
  const OpPod* op = nullptr;             // the library call it was launched in
  std::optional<double> events_us;       // measured with CUDA events instead
  std::uint32_t notes = 0;               // notes:: bits (record_notes.h)
  bool replay = false;  // `launch` is a graph node's template run again: a new seq is due
};

// Where joined kernels go (the record builder; a test).
class JoinedKernelSink {
 public:
  virtual ~JoinedKernelSink() = default;
  virtual void on_kernel(const JoinedKernel& kernel) = 0;
};

struct JoinerSetup {
  MetadataSource metadata = MetadataSource::kHooks;  // who recorded the launches
  TimingMode timing = TimingMode::kNone;
  bool predict_only = false;  // another tool owns CUPTI
};

// The rings as the worker left them at the end of a pass.
struct RingState {
  // Smallest seq still in a ring, or reserved in one and not yet published.
  std::uint64_t oldest_waiting_seq = UINT64_MAX;
  std::uint64_t launches_dropped = 0;  // by full rings, so far
};

class RecordJoiner {
 public:
  // A launch's CUPTI record is this late: the launch is written unmeasured.
  static constexpr std::uint64_t kTimingTimeoutNs = 10'000'000'000;
  // A record waits this long for a launch slot the rings cannot show yet: one written only
  // after the runtime call returned (runtime launches the driver hooks did not see). A slot
  // reserved and not yet published is shown (RingState), however long its thread is
  // descheduled. Only records without a slot wait, so a generous grace costs nothing in the
  // common case.
  static constexpr std::uint64_t kOrphanGraceNs = 2'000'000'000;
  // How long a graph launch is remembered for its kernels' records.
  static constexpr std::uint64_t kGraphLaunchKeepNs = 30'000'000'000;
  // Launches waiting for their record, and records waiting for their launch. A launch waits
  // until CUPTI completes the buffer its record is in (a few thousand records, cupti/
  // cupti_activity_collector.h) or its periodic flush hands over a partial one: this is many
  // times that, reached only when records stop coming (then the oldest are written
  // unmeasured). 2^16 waiting launches take 14 MB.
  static constexpr std::size_t kMaxPending = std::size_t(1) << 16;
  // Launch sequence numbers by CUPTI correlation id (hook mode), one per launch whose record
  // has not come: as many as launches may wait, with room.
  static constexpr std::size_t kMaxExternal = std::size_t(1) << 17;
  static constexpr std::size_t kMaxCalls = std::size_t(1) << 16;  // recent library calls kept

  RecordJoiner(JoinerSetup setup, ShimCounters& counters, JoinedKernelSink& sink);

  // A slot drained from a ring (any kind), `now_ns` on the monotonic clock.
  void on_slot(const LaunchSlot& s, std::uint64_t now_ns);
  // A kernel slot timed with CUDA events: its duration, or nullopt when the events failed.
  void on_events_timed(const LaunchSlot& s, std::optional<double> us);
  // A CUPTI kernel record. `seq_bound`: the next launch sequence number when it arrived (its
  // launch, if hooked, has a smaller one).
  void on_timing(const KernelTiming& t, std::uint64_t now_ns, std::uint64_t seq_bound);
  void on_external(const ExternalCorrelation& e);
  // Settles what can be settled: records whose launch can no longer turn up, launches whose
  // record is too late, forgotten graphs. `final` settles everything.
  void end_pass(const RingState& rings, std::uint64_t now_ns, bool final);

  std::size_t launches_waiting() const noexcept { return pending_.size() + runtime_only_.size(); }
  std::size_t records_waiting() const noexcept { return orphans_waiting_; }

 private:
  struct RuntimeOnly {
    LaunchSlot slot;
    std::uint64_t arrived_ns;
  };
  struct Orphan {
    KernelTiming timing;
    std::uint64_t arrived_ns;
    std::uint64_t pass;
    // Launch sequence numbers handed out when the record arrived: its launch, if hooked, has
    // a smaller one, so once every ring is drained past this bound it can no longer turn up.
    std::uint64_t seq_bound;
    bool joined;  // its launch arrived since and took it
  };

  void on_kernel_slot(const LaunchSlot& s, std::uint64_t now_ns);
  // A record that arrived ahead of its launch `s` (callback mode): joins it now.
  bool join_waiting_record(const LaunchSlot& s);
  void on_graph_launch(const LaunchSlot& s, std::uint64_t now_ns);
  void on_library_call(const LaunchSlot& s);
  bool join(const KernelTiming& t);
  bool join_graph_node(const KernelTiming& t);
  void settle_orphans(const RingState& rings, std::uint64_t now_ns, bool final);
  // Takes the orphan at orphans_head_ out of the queue.
  void forget_orphan(Orphan& o);
  void compact_orphans();
  // A record no launch claimed: a runtime-only launch's, a dropped launch's, or unhooked.
  void settle_unclaimed(const KernelTiming& t, const RingState& rings);
  void expire(std::uint64_t now_ns, bool final);
  const OpPod* call_context(const LaunchSlot& s) const;
  void emit(const LaunchSlot* launch, const KernelTiming* timing, const OpPod* op,
            std::uint32_t notes, bool replay = false);

  JoinerSetup setup_;
  ShimCounters& counters_;
  JoinedKernelSink& sink_;
  std::uint64_t passes_ = 0;
  std::uint64_t orphans_from_drops_ = 0;

  // Launches waiting for their CUPTI record: by correlation id (callback mode) or by seq
  // with the top bit set (hook mode with external correlation).
  PendingLaunches pending_;
  std::unordered_map<std::uint32_t, std::uint64_t> external_;  // correlation id -> seq
  GraphRegistry graphs_;
  std::unordered_map<std::uint32_t, LaunchSlot> graph_by_correlation_;
  std::unordered_map<std::uint64_t, LaunchSlot> graph_by_seq_;
  std::deque<std::pair<std::uint64_t, std::uint64_t>> graph_order_;  // (key, arrived)
  std::deque<RuntimeOnly> runtime_only_;  // launches joinable only by name and geometry
  // Records waiting for their launch, oldest first from orphans_head_. In callback mode a
  // launch arriving after its record finds it by correlation id (the value: the orphan's
  // position counted from the first orphan ever, orphans_erased_ + index).
  static constexpr std::size_t kOrphanCompactAt = 4096;
  std::vector<Orphan> orphans_;
  std::size_t orphans_head_ = 0;
  std::size_t orphans_erased_ = 0;
  std::size_t orphans_waiting_ = 0;
  std::unordered_map<std::uint32_t, std::size_t> orphan_by_correlation_;
  RingState last_rings_;                            // as the last pass left them
  std::unordered_map<std::uint64_t, OpPod> calls_;  // library call id -> context
  std::deque<std::uint64_t> call_order_;
};

}  // namespace pm2lat::shim
