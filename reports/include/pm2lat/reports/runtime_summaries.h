// What the runtime's own summaries add to a report of its records: the summary the runtime
// wrote beside each records file (`summary.<id>.json` for `records.<id>.jsonl` in a run
// directory, `<stem>.summary.json` for `<stem>.jsonl`) counts what no record holds: the GPU's
// memory copies and memsets, and the launches the runtime lost.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "pm2lat/reports/gpu_transfers.h"

namespace pm2lat::reports {

// Kernels the records lack or hold without a measurement, by cause (the summary's counters).
struct LostLaunches {
  std::uint64_t dropped = 0;        // launches not recorded: the launching thread's ring was full
  std::uint64_t cupti_dropped = 0;  // measurements CUPTI dropped (its buffers were full)
  std::uint64_t timing_lost = 0;    // launches whose measurement never came

  bool any() const noexcept { return dropped + cupti_dropped + timing_lost > 0; }
};

struct RuntimeSummaries {
  GpuTransfers transfers;
  LostLaunches lost;
};

// The summaries of `records_files`, summed. A summary that is missing, cannot be read or is
// not the runtime's adds nothing: a report of the kernels does not depend on them.
RuntimeSummaries read_runtime_summaries(const std::vector<std::filesystem::path>& records_files);

// "lost: N launches not recorded (a launching thread's ring was full), ..." naming each
// nonzero cause.
std::string lost_launches_note(const LostLaunches& lost);

// The notes a report of the records gives from them: the GPU's copies and memsets with their
// share of `kernel_us` and their own time (transfers_note), and the launches lost; none for
// what did not happen.
std::vector<std::string> runtime_summary_notes(const RuntimeSummaries& s, double kernel_us);

}  // namespace pm2lat::reports
