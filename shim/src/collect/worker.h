// The one thread that does everything the launch path must not. Each pass drains the
// per-thread rings and CUPTI's completed buffers into the record joiner, which hands joined
// kernels to the record builder, which hands records to the record sink (predictions,
// summary, records file). The worker owns the thread, its cadence, the CUDA-event timings
// (read before a slot is released) and the end of the run.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "collect/record_builder.h"
#include "collect/record_joiner.h"
#include "collect/record_sink.h"
#include "cupti/cupti_activity_collector.h"
#include "launch_path/launch_path_state.h"

namespace pm2lat::shim {

class ThreadRing;

struct WorkerSetup {
  JoinerSetup joiner;
  SinkSetup sink;
};

class Worker {
 public:
  explicit Worker(WorkerSetup setup);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  void start();
  // Flushes everything and writes the summary, then stops the thread. Waits at most
  // `timeout_ms`. Safe to call more than once.
  void finish(std::uint32_t timeout_ms);
  // Async-signal-safe: asks the worker to finish; returns the fd that becomes readable when
  // it has (or -1). With a budget (the time the caller will wait), records still waiting for
  // the profiles to load are written without predictions rather than not at all.
  int request_finish_from_signal(std::uint32_t budget_ms = 0) noexcept;

  // One pass over rings and CUPTI buffers (the thread calls it; tests may too).
  void iteration(bool final);
  const Summary& summary() const noexcept { return sink_.summary(); }

 private:
  void run();
  void finalise();
  // What a step of the worker threw (run_contained.h), said once.
  static void report_error(const char* what) noexcept;
  // Every ring's slots, at most `share` of each beyond what it had consumed and none past what
  // it has published; true if any was handled.
  bool drain_rings(bool final, std::uint64_t share);
  // Handles the ring's slots until `until` (a published() count); true if it handled any.
  bool drain_ring(ThreadRing* ring, bool final, std::uint64_t until);
  // False when the slot must stay in its ring (its CUDA events are not done yet).
  bool handle_slot(ThreadRing* ring, const LaunchSlot& s, bool final);
  RingState ring_state() const noexcept;

  bool cupti_activity_;
  RecordSink sink_;
  RecordBuilder builder_;
  RecordJoiner joiner_;
  std::thread thread_;
  int wake_pipe_[2] = {-1, -1};
  int done_pipe_[2] = {-1, -1};
  std::atomic<bool> stop_{false};
  std::atomic<bool> finished_{false};
  std::atomic<std::uint64_t> finish_deadline_ns_{0};  // 0: wait for the profiles
  std::uint64_t pass_ns_ = 0;    // monotonic time at the start of the current drain pass
  std::uint64_t work_done_ = 0;  // slots and records handled: tells busy from idle
  std::uint64_t dropped_by_retired_rings_ = 0;
  std::uint64_t last_cupti_flush_ns_ = 0;
  std::vector<CuptiActivity::Completed> buffers_;
};

}  // namespace pm2lat::shim
