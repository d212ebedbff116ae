#include "pm2lat/reports/gpu_transfers.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

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

namespace {

// The summary the runtime wrote beside `records` (runtime.cpp, choose_output_paths).
std::filesystem::path summary_beside(const std::filesystem::path& records) {
  std::string name = records.filename().string();
  if (name.ends_with(".jsonl")) name.resize(name.size() - 6);
  std::error_code ec;
  if (name.starts_with("records.")) {
    std::filesystem::path in_run = records.parent_path() / ("summary." + name.substr(8) + ".json");
    if (std::filesystem::exists(in_run, ec)) return in_run;
  }
  return records.parent_path() / (name + ".summary.json");
}

void add_summary(const std::filesystem::path& path, GpuTransfers& sum) {
  std::ifstream in(path);
  if (!in) return;
  const nlohmann::json s = nlohmann::json::parse(in);
  if (s.value("schema", "") != "pm2lat.summary" || !s.contains("transfers")) return;
  GpuTransfers file;
  for (const nlohmann::json& t : s.at("transfers")) {
    const auto count = t.at("count").get<std::size_t>();
    const double us = t.at("measured_ms").get<double>() * 1e3;
    if (t.at("kind") == "memset") {
      file.memsets += count;
      file.memset_us += us;
    } else {
      file.copies += count;
      file.copy_us += us;
    }
  }
  sum.copies += file.copies;
  sum.copy_us += file.copy_us;
  sum.memsets += file.memsets;
  sum.memset_us += file.memset_us;
}

}  // namespace

GpuTransfers summary_transfers(const std::vector<std::filesystem::path>& records_files) {
  GpuTransfers sum;
  for (const std::filesystem::path& records : records_files) {
    try {
      add_summary(summary_beside(records), sum);
    } catch (const std::exception&) {
      // Not a summary the runtime wrote, or one cut short: it adds nothing.
    }
  }
  return sum;
}

}  // namespace pm2lat::reports
