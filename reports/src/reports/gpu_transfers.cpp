#include "pm2lat/reports/gpu_transfers.h"

#include <fmt/format.h>

namespace pm2lat::reports {

std::string transfers_note(const GpuTransfers& t, double kernel_us, std::string_view share_of) {
  std::string note = fmt::format(
      "not forecast: the GPU's memory copies ({}, {:.3f} ms) and memsets ({}, {:.3f} ms) "
      "besides its kernels",
      t.copies, t.copy_us / 1e3, t.memsets, t.memset_us / 1e3);
  // Without the kernels' measured time (a run that only predicted) there is no share to give.
  if (kernel_us > 0) {
    const double transfers_us = t.copy_us + t.memset_us;
    note += fmt::format(", {:.1f} % of {}", 100.0 * transfers_us / (kernel_us + transfers_us),
                        share_of);
  }
  return note;
}

}  // namespace pm2lat::reports
