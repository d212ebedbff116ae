// The GPU's memory copies and memsets beside its kernels: GPU time a forecast of the kernels
// leaves out. A trace has them as gpu_memcpy and gpu_memset events (Memcpy HtoD, DtoD,
// Memset); the runtime counts them, from CUPTI's MEMCPY and MEMSET records, in the
// `transfers` of its summary files. Neither is forecast: a report says how much of the GPU's
// time they are.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace pm2lat::reports {

struct GpuTransfers {
  std::size_t copies = 0;
  double copy_us = 0;
  std::size_t memsets = 0;
  double memset_us = 0;

  bool any() const noexcept { return copies + memsets > 0; }
};

// "not forecast: the GPU's memory copies (N, X ms) and memsets (M, Y ms) besides its kernels,
// P % of <share_of>", P their share of `kernel_us` and their own time together (no share when
// the kernels were not measured: `kernel_us` 0).
std::string transfers_note(const GpuTransfers& t, double kernel_us, std::string_view share_of);

// The transfers the runtime's summaries of `records_files` hold, summed: each records file's
// summary is the one the runtime wrote beside it (`summary.<id>.json` for `records.<id>.jsonl`
// in a run directory, `<stem>.summary.json` for `<stem>.jsonl`). A summary that is missing,
// cannot be read or holds none adds nothing: a report of the kernels does not depend on them.
GpuTransfers summary_transfers(const std::vector<std::filesystem::path>& records_files);

}  // namespace pm2lat::reports
