// Where records end: predicted for every target (memoised: training loops repeat the same
// launches), checked against the measurement on the run's GPU (the accuracy monitor), added to
// the summary, written to the records file. The profiles load on a thread of their own while
// the program starts; the record builder holds back what it builds meanwhile
// (waiting_for_profiles()).
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "collect/accuracy_monitor.h"
#include "collect/predictor_adapter.h"
#include "collect/record_builder.h"
#include "collect/summary.h"
#include "pm2lat/record_jsonl.h"

namespace pm2lat::shim {

struct SinkSetup {
  std::string records_path;       // "" = no records file
  std::string summary;            // "stderr", "" or a JSON file path
  std::string summary_json_path;  // next to the records file, "" = none
  std::vector<std::string> targets;
  std::vector<RunDevice> devices;  // the run's devices by ordinal, as the driver describes them
  RecordsHeader header;
  std::string mode;           // for the header and the summary
  bool predict_only = false;  // another tool owns CUPTI: predictions also go to NVTX
  std::uint32_t flush_ms = 200;
  double drift_pct = 30;  // see AccuracyMonitor
};

class RecordSink {
 public:
  static constexpr std::size_t kMaxPredictionMemo = std::size_t(1) << 16;

  explicit RecordSink(SinkSetup setup);
  ~RecordSink();
  RecordSink(const RecordSink&) = delete;
  RecordSink& operator=(const RecordSink&) = delete;

  // Starts loading the profiles on a thread of its own (signals blocked).
  void start_loading_profiles();
  // Takes the predictor once loaded; writes what waited for it.
  void adopt_profiles();
  // At the end: waits for the profiles until `deadline_ns` (monotonic; 0 = as long as it
  // takes), then writes what still waits, with or without predictions.
  void settle_profiles(std::uint64_t deadline_ns);

  // True while records should wait for the profiles (loading, not given up on).
  bool waiting_for_profiles() const noexcept { return predictor_ == nullptr && !gave_up_; }

  // Predicts and writes `record` (its buffers are the caller's to reuse afterwards); without
  // profiles, writes it without predictions.
  void add(BuiltRecord& record);

  // One memory copy or memset the GPU ran (`kind` as Summary::add_transfer names it).
  void add_transfer(std::string_view kind, std::uint64_t bytes, std::uint64_t measured_ns) {
    summary_.add_transfer(kind, bytes, measured_ns);
  }

  // Flushes the records file every flush_ms (`now_ns` monotonic).
  void flush_if_due(std::uint64_t now_ns);
  // Writes the summary and closes the records file.
  void close();

  std::int32_t rank() const noexcept { return setup_.header.rank; }
  ShimCounters& counters() noexcept { return summary_.counters(); }
  const Summary& summary() const noexcept { return summary_; }

 private:
  using Predictions = std::vector<std::pair<std::string, Prediction>>;
  // What a distinct launch is predicted once for: every target, and the lower bound of its
  // work on the run's GPU (the measurement guard's test).
  struct Predicted {
    Predictions targets;
    double source_lower_us = 0;
  };

  const Predicted& predict(const BuiltRecord& b);
  // The measurement guard (pm2lat/measured_guard.h): a measured record whose own-GPU
  // prediction disagrees with its measured time has its other targets' forecasts anchored.
  void guard_forecasts(PredictedRecord& pr, double source_lower_us) const;
  void finish(BuiltRecord& b);
  void start_loader();
  // The loader thread's end without an adapter: its reason kept for the worker to report.
  void note_load_failure(const char* what) noexcept;
  // Whether the loader thread is done, with profiles or without.
  bool load_ended() const noexcept;
  void open_records_file();
  void write_summary();

  SinkSetup setup_;
  std::unique_ptr<PredictorAdapter> predictor_;  // null until loaded
  std::thread loader_;
  std::atomic<PredictorAdapter*> loaded_{nullptr};
  std::vector<std::string> load_problems_;
  std::atomic<bool> load_failed_{false};  // the loader ended without an adapter
  // No profiles will be adopted (they did not load in time, or the load failed): records go
  // without predictions.
  bool gave_up_ = false;
  std::unordered_map<std::uint64_t, Predicted> predictions_;
  Summary summary_;
  AccuracyMonitor accuracy_;  // rolling per-family error on the run's GPU
  std::FILE* records_ = nullptr;
  bool open_failed_ = false;
  std::uint64_t last_flush_ns_ = 0;
  std::string line_;
};

}  // namespace pm2lat::shim
