// The end-of-run summary: per kernel family and target, how many kernels, how long they
// took, how long they would take on each target, and how far the prediction for the GPU the
// program ran on was from the measurement (the error of pm2lat/prediction_error.h, as every
// report gives it: of the family's summed time, and its mean over single kernels); the
// busiest kernels; and the shim's own counters (coverage, drops) so a user can tell how
// complete the records are.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pm2lat/record_jsonl.h"

namespace pm2lat::shim {

struct ShimCounters {
  std::uint64_t launches = 0;  // kernel launches recorded (captured ones included)
  std::uint64_t records = 0;   // kernel records emitted
  std::uint64_t measured = 0;
  std::uint64_t unmeasured = 0;
  std::uint64_t unhooked = 0;  // CUPTI saw it, no hook did (coverage gap)
  std::uint64_t runtime_only = 0;
  std::uint64_t captured = 0;         // launches recorded into graphs
  std::uint64_t graph_replays = 0;    // kernels emitted from graph launches
  std::uint64_t failed_launches = 0;  // launch calls that returned an error
  std::uint64_t dropped = 0;          // launches lost to full rings
  std::uint64_t cupti_dropped = 0;    // records CUPTI dropped
  std::uint64_t timing_lost = 0;      // launches whose CUPTI record never came
  std::uint64_t passed_through = 0;   // launches before start-up / after shutdown
  std::uint64_t library_calls = 0;    // outermost cuBLAS/cuBLASLt/cuDNN calls intercepted
};

class Summary {
 public:
  // `source` names the GPUs of the run's devices ("" when unknown), what the summary says until
  // a record names the GPU it ran on; each record is compared with its own `gpu`, and the
  // summary then names the GPUs the records ran on (several for a process driving two models).
  explicit Summary(std::string source = {}) : source_(std::move(source)) {}
  void set_source(std::string source) { source_ = std::move(source); }

  // `measured_ns` is exact when the duration came from CUPTI.
  void add(const PredictedRecord& r, std::uint64_t measured_ns);
  ShimCounters& counters() noexcept { return counters_; }
  const ShimCounters& counters() const noexcept { return counters_; }

  struct FamilyTotals {
    std::uint64_t count = 0;
    std::uint64_t measured_count = 0;
    double measured_ms = 0;
    std::map<std::string, double> predicted_ms;  // by target
    // Kernels with both a measurement and a prediction for the source GPU.
    std::uint64_t compared = 0;
    double compared_measured_ms = 0;
    double compared_predicted_ms = 0;
    double error_pct_sum = 0;  // sum of the kernels' error_pct (pm2lat/prediction_error.h)
  };
  struct KernelTotals {
    std::string family;
    std::uint64_t count = 0;
    std::uint64_t measured_count = 0;
    std::uint64_t measured_ns = 0;
  };

  // The GPU's memory copies and memsets (CUPTI's MEMCPY and MEMSET records), by kind
  // ("host_to_device", ..., "memset"): not forecast, but part of the GPU's time.
  struct TransferTotals {
    std::uint64_t count = 0;
    std::uint64_t bytes = 0;
    double measured_ms = 0;
  };
  void add_transfer(std::string_view kind, std::uint64_t bytes, std::uint64_t measured_ns);

  const std::map<std::string, FamilyTotals>& families() const noexcept { return families_; }
  const std::map<std::string, TransferTotals, std::less<>>& transfers() const noexcept {
    return transfers_;
  }
  const std::unordered_map<std::string, KernelTotals>& kernels() const noexcept { return kernels_; }

  // The summary as one JSON document ("schema":"pm2lat.summary","version":1).
  std::string to_json(const std::string& mode, const std::vector<std::string>& targets,
                      const std::vector<std::string>& warnings,
                      std::size_t top_kernels = 200) const;
  // A few lines for a terminal.
  std::string to_text(const std::vector<std::string>& targets) const;

 private:
  // The line of to_text() that says how much of the GPU's time went to copies and memsets.
  std::string transfers_line() const;

  std::string source_;
  std::vector<std::string> ran_on_;  // the records' GPUs, each once (one per device model)
  ShimCounters counters_;
  std::map<std::string, FamilyTotals> families_;
  std::unordered_map<std::string, KernelTotals> kernels_;
  std::map<std::string, TransferTotals, std::less<>> transfers_;
};

}  // namespace pm2lat::shim
