// The GPU's memory copies and memsets beside its kernels: GPU time a forecast of the kernels
// leaves out. A trace has them as gpu_memcpy and gpu_memset events (Memcpy HtoD, DtoD,
// Memset); the runtime counts them, from CUPTI's MEMCPY and MEMSET records, in the
// `transfers` of its summary files (runtime_summaries.h). Neither is forecast: a report says how
// much of the GPU's time they are.
#pragma once

#include <cstddef>
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
// P % of <share_of>", P their share of `kernel_us` and their own time together (no share when
// the kernels were not measured: `kernel_us` 0).
std::string transfers_note(const GpuTransfers& t, double kernel_us, std::string_view share_of);

}  // namespace pm2lat::reports
