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

namespace pm2lat::reports {

struct GpuTransfers {
  std::size_t copies = 0;
  double copy_us = 0;
  std::size_t memsets = 0;
  double memset_us = 0;

  bool any() const noexcept { return copies + memsets > 0; }
};

// "not forecast: the GPU's memory copies (N, X ms) and memsets (M, Y ms) besides its kernels,
// P % of <share_of>", P their share of `kernel_us` and their own time together.
std::string transfers_note(const GpuTransfers& t, double kernel_us, std::string_view share_of);

// The transfers of the runtime's summary files in `dir` (summary*.json, one per process),
// summed. A file that cannot be read or holds none adds nothing: a report of the kernels
// does not depend on them.
GpuTransfers summary_transfers(const std::filesystem::path& dir);

}  // namespace pm2lat::reports
