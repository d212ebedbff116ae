// `pm2lat replay`: a recorded PyTorch profiler trace through the same prediction and
// reports as a live run. Each kernel event becomes a kernel record (trace_records.h), is
// predicted on every target and on the trace's own GPU, and the run is summarised; the
// own-GPU column is what accuracy and coverage are measured on.
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "pm2lat/kernel_record.h"
#include "pm2lat/predictor.h"
#include "pm2lat/reports/run_summary.h"
#include "pm2lat/reports/run_table.h"

namespace pm2lat::reports {

class ProgressBar;

struct ReplayOptions {
  std::vector<std::string> targets;  // GPU names as users type them
  std::string gpu;                   // overrides the trace's own GPU ("" = from the trace)
  ProgressBar* progress = nullptr;
  bool keep_records = false;  // keep the kernel records (to write them as a records file)
};

// A trace among several that could not be read (`pm2lat replay` goes on with the others).
struct FailedTrace {
  std::string trace;  // file name
  std::string error;  // the reader's message, which names the file
};

struct TraceReplay {
  std::string trace;   // file name
  std::string device;  // the GPU as the trace names it, or as inferred/overridden
  std::string gpu;     // its catalogue name ("" when not in the catalogue)
  // How the GPU was found and how it is predicted: "", "inferred from kernel names",
  // "not in the device catalogue: no accuracy", "no profile: spec-scaled from <GPU>".
  std::vector<std::string> notes;
  bool own_spec_scaled = false;
  std::size_t linked = 0, with_shape = 0, from_geometry = 0, work_rejected = 0;
  RunTable table;
  RunSummary summary;
  std::vector<KernelRecord> records;  // with ReplayOptions::keep_records, parallel to table rows
};

// The replayed kernels as a records file (record_jsonl.h): header and one record per kernel
// with its predictions; a trace of GPUs of several models writes each other model's kernels
// to a file of its own beside it ("records.<name>.<gpu>.jsonl"). Requires
// ReplayOptions::keep_records.
void write_replay_records(const TraceReplay& replay, const std::filesystem::path& file);

class RunPredictor;

// The prediction stage of replay, on its own for benchmarks: every record predicted on every
// target of `predictor` into new rows of `table` (rank `rank_index`, columns already added).
void predict_records(const RunPredictor& predictor, std::span<const KernelRecord> records,
                     std::span<const KernelClass* const> classes, const DeviceSpec* source,
                     std::size_t rank_index, RunTable& table, ProgressBar* progress = nullptr);

// Throws InputError for an unreadable trace, UnknownDeviceError for an unknown target GPU.
TraceReplay replay_trace(const std::filesystem::path& file, Predictor& predictor,
                         const ReplayOptions& options);

}  // namespace pm2lat::reports
