#include "pm2lat/reports/runtime_summaries.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

namespace pm2lat::reports {

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

// One summary file's counts; nothing when it is not the runtime's.
RuntimeSummaries read_summary(const std::filesystem::path& path) {
  RuntimeSummaries file;
  std::ifstream in(path);
  if (!in) return file;
  const nlohmann::json s = nlohmann::json::parse(in);
  if (s.value("schema", "") != "pm2lat.summary") return file;
  for (const nlohmann::json& t : s.value("transfers", nlohmann::json::array())) {
    const auto count = t.at("count").get<std::size_t>();
    const double us = t.at("measured_ms").get<double>() * 1e3;
    if (t.at("kind") == "memset") {
      file.transfers.memsets += count;
      file.transfers.memset_us += us;
    } else {
      file.transfers.copies += count;
      file.transfers.copy_us += us;
    }
  }
  const nlohmann::json c = s.value("counters", nlohmann::json::object());
  file.lost.dropped = c.value("dropped", std::uint64_t{0});
  file.lost.cupti_dropped = c.value("cupti_dropped", std::uint64_t{0});
  file.lost.timing_lost = c.value("timing_lost", std::uint64_t{0});
  return file;
}

}  // namespace

RuntimeSummaries read_runtime_summaries(const std::vector<std::filesystem::path>& records_files) {
  RuntimeSummaries sum;
  for (const std::filesystem::path& records : records_files) {
    RuntimeSummaries file;
    try {
      file = read_summary(summary_beside(records));
    } catch (const std::exception&) {
      continue;  // not a summary the runtime wrote, or one cut short: it adds nothing
    }
    sum.transfers.copies += file.transfers.copies;
    sum.transfers.copy_us += file.transfers.copy_us;
    sum.transfers.memsets += file.transfers.memsets;
    sum.transfers.memset_us += file.transfers.memset_us;
    sum.lost.dropped += file.lost.dropped;
    sum.lost.cupti_dropped += file.lost.cupti_dropped;
    sum.lost.timing_lost += file.lost.timing_lost;
  }
  return sum;
}

std::string lost_launches_note(const LostLaunches& lost) {
  std::string note;
  auto add = [&](std::uint64_t n, const char* what) {
    if (n == 0) return;
    note += fmt::format("{}{} {}", note.empty() ? "lost: " : ", ", n, what);
  };
  add(lost.dropped, "launches not recorded (a launching thread's ring was full)");
  add(lost.cupti_dropped, "measurements CUPTI dropped (its buffers were full)");
  add(lost.timing_lost, "launches whose measurement never came");
  return note;
}

std::vector<std::string> runtime_summary_notes(const RuntimeSummaries& s, double kernel_us) {
  std::vector<std::string> notes;
  if (s.transfers.any())
    notes.push_back(transfers_note(s.transfers, kernel_us, "the GPU time measured"));
  if (s.lost.any()) notes.push_back(lost_launches_note(s.lost));
  return notes;
}

}  // namespace pm2lat::reports
