// The one thread that does everything the launch path must not: drains the per-thread rings,
// joins launches with their measured durations (CUPTI records by correlation id, external
// correlation or graph node; or CUDA events), classifies, predicts for every target, writes
// the records file and keeps the summary. Its memory is bounded: launches waiting for a
// duration too long are written unmeasured, and every table has a cap.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "collect/accuracy_monitor.h"

#include "collect/graph_registry.h"
#include "collect/pending_launches.h"
#include "collect/predictor_adapter.h"
#include "collect/record_notes.h"
#include "collect/summary.h"
#include "cupti/cupti_activity_collector.h"
#include "launch_path/launch_path_state.h"
#include "launch_path/launch_slot.h"
#include "pm2lat/kernel_class.h"
#include "pm2lat/record_jsonl.h"

namespace pm2lat::shim {

class ThreadRing;

struct WorkerSetup {
  MetadataSource metadata = MetadataSource::kHooks;
  TimingMode timing = TimingMode::kNone;
  bool predict_only = false;  // another tool owns CUPTI
  bool cupti_activity = false;
  std::string records_path;       // "" = no records file
  std::string summary;            // "stderr", "" or a JSON file path
  std::string summary_json_path;  // next to the records file, "" = none
  std::vector<std::string> targets;
  std::string source_device;  // the driver's name for device 0
  RecordsHeader header;
  std::string mode;  // for the header and the summary
  std::uint32_t flush_ms = 200;
  double drift_pct = 30;  // see AccuracyMonitor
  std::vector<std::string> startup_problems;
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
  const Summary& summary() const noexcept { return summary_; }

 private:
  struct Pending {
    LaunchSlot slot;
    std::uint64_t arrived_ns;
  };
  struct Orphan {
    KernelTiming timing;
    std::uint64_t arrived_ns;
    std::uint64_t iteration;
    // Launch sequence numbers handed out when the record arrived: its launch, if hooked, has
    // a smaller one, so once every ring is drained past this bound it can no longer turn up.
    std::uint64_t seq_bound;
  };

  void run();
  // The smallest sequence number still waiting in a ring (UINT64_MAX when all are empty).
  std::uint64_t oldest_waiting_seq() noexcept;
  void finalise();
  // Handles up to `budget` slots; true when it stopped on the budget.
  bool drain_ring(ThreadRing* ring, bool final, std::size_t budget);
  bool handle_slot(ThreadRing* ring, const LaunchSlot& s, bool final);
  void handle_kernel_slot(const LaunchSlot& s);
  void handle_graph_launch(const LaunchSlot& s);
  void on_timing(const KernelTiming& t, bool orphan_retry);
  bool join_timing(const KernelTiming& t);
  void on_external(const ExternalCorrelation& e);
  void process_orphans(bool final);
  void expire_pending(bool final);
  // `op` is the library call context (null: none, or look it up from slot->call_id).
  void emit(const LaunchSlot* slot, const KernelTiming* timing, const OpPod* op,
            std::optional<double> measured_us, std::uint64_t measured_ns, std::uint32_t bits);
  const OpPod* call_context(const LaunchSlot& s) const;
  const KernelClass& classify(std::uint32_t name_id);
  const std::vector<std::pair<std::string, Prediction>>& predict(const KernelRecord& r,
                                                                 std::uint32_t name_id,
                                                                 const KernelClass& cls);
  // Classifies, predicts and writes one record (the predictor is loaded).
  void finish(PredictedRecord& pr, const RecordNotes& n, std::uint32_t name_id,
              std::uint64_t measured_ns, std::uint64_t handle, std::uint64_t geometry);
  // Takes the predictor once its loader thread is done; writes what waited for it.
  void adopt_predictor();
  void open_records_file();
  void write_line(const std::string& line);
  void write_summary();

  // Records made while the profiles were still loading (bounded; beyond the bound records
  // are written without predictions rather than held).
  struct Deferred {
    PredictedRecord pr;
    RecordNotes notes;
    std::uint32_t name_id;
    std::uint64_t measured_ns;
    std::uint64_t handle;
    std::uint64_t geometry;
  };

  WorkerSetup setup_;
  std::unique_ptr<PredictorAdapter> predictor_;  // null until loaded
  std::thread loader_;
  std::atomic<PredictorAdapter*> loaded_{nullptr};
  std::atomic<std::uint64_t> finish_deadline_ns_{0};  // 0: wait for the profiles
  std::vector<std::string> load_problems_;
  std::deque<Deferred> deferred_;
  Summary summary_;
  AccuracyMonitor accuracy_;  // rolling per-family error on the run's GPU
  GraphRegistry graphs_;
  std::FILE* records_ = nullptr;
  std::thread thread_;
  int wake_pipe_[2] = {-1, -1};
  int done_pipe_[2] = {-1, -1};
  std::atomic<bool> stop_{false};
  std::atomic<bool> finished_{false};
  std::uint64_t iterations_ = 0;
  std::uint64_t pass_ns_ = 0;    // monotonic time at the start of the current drain pass
  std::uint64_t work_done_ = 0;  // slots and timings handled: tells busy from idle
  std::uint64_t orphans_from_drops_ = 0;
  std::uint64_t last_flush_ns_ = 0;
  std::uint64_t last_cupti_flush_ns_ = 0;

  // Launches waiting for their CUPTI record: by correlation id (callback mode) or by seq
  // with the top bit set (hook mode with external correlation).
  PendingLaunches pending_;
  std::unordered_map<std::uint32_t, std::uint64_t> external_;  // correlation id -> seq
  std::unordered_map<std::uint32_t, LaunchSlot> graph_by_correlation_;
  std::unordered_map<std::uint64_t, LaunchSlot> graph_by_seq_;
  std::deque<std::pair<std::uint64_t, std::uint64_t>> graph_order_;  // (key, arrived)
  std::deque<Pending> runtime_only_;  // launches joinable only by name and geometry
  std::deque<Orphan> orphans_;
  std::unordered_map<std::uint64_t, OpPod> calls_;  // library call id -> context
  std::deque<std::uint64_t> call_order_;
  std::vector<CuptiActivity::Completed> buffers_;

  std::unordered_map<std::uint32_t, KernelClass> classes_;
  std::unordered_map<std::uint64_t, std::vector<std::pair<std::string, Prediction>>> predictions_;
  std::unordered_map<const char*, std::uint32_t> cupti_names_;
  std::string line_;
};

}  // namespace pm2lat::shim
