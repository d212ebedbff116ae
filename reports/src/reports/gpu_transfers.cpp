#include "pm2lat/reports/gpu_transfers.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

namespace pm2lat::reports {

std::string transfers_note(const GpuTransfers& t, double kernel_us, std::string_view share_of) {
  const double busy_us = kernel_us + t.copy_us + t.memset_us;
  return fmt::format(
      "not forecast: the GPU's memory copies ({}, {:.3f} ms) and memsets ({}, {:.3f} ms) "
      "besides its kernels, {:.1f} % of {}",
      t.copies, t.copy_us / 1e3, t.memsets, t.memset_us / 1e3,
      busy_us > 0 ? 100.0 * (t.copy_us + t.memset_us) / busy_us : 0.0, share_of);
}

GpuTransfers summary_transfers(const std::filesystem::path& dir) {
  GpuTransfers sum;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.starts_with("summary") || it->path().extension() != ".json") continue;
    try {
      std::ifstream in(it->path());
      const nlohmann::json s = nlohmann::json::parse(in);
      if (s.value("schema", "") != "pm2lat.summary" || !s.contains("transfers")) continue;
      for (const nlohmann::json& t : s.at("transfers")) {
        const auto count = t.at("count").get<std::size_t>();
        const double us = t.at("measured_ms").get<double>() * 1e3;
        if (t.at("kind") == "memset") {
          sum.memsets += count;
          sum.memset_us += us;
        } else {
          sum.copies += count;
          sum.copy_us += us;
        }
      }
    } catch (const std::exception&) {
      // Not a summary the runtime wrote (or one cut short): it adds nothing.
    }
  }
  return sum;
}

}  // namespace pm2lat::reports
