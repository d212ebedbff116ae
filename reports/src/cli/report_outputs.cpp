// The report files every command that summarises a run can write (replay --out, report,
// merge, run): Perfetto trace, HTML, summary CSV and per-kernel CSV.
#include <filesystem>
#include <fstream>

#include "cli/commands.h"
#include "pm2lat/reports/csv_reporter.h"
#include "pm2lat/reports/html_reporter.h"
#include "pm2lat/reports/perfetto_reporter.h"
#include "pm2lat/reports/run_summary.h"
#include "pm2lat/reports/run_table.h"
#include "pm2lat/text.h"

namespace pm2lat::cli {
namespace {

template <typename Writer>
std::string write_file(const std::filesystem::path& path, Writer&& writer) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error(path.string() + ": cannot be written");
  writer(out);
  out.flush();
  if (!out) throw std::runtime_error(path.string() + ": write failed");
  return path.string();
}

}  // namespace

std::vector<std::string> write_run_reports(const reports::RunTable& table,
                                           const reports::RunSummary& summary,
                                           const std::string& dir, const std::string& base,
                                           const std::string& title,
                                           const std::vector<std::string>& notes) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::runtime_error(dir + ": cannot create directory: " + ec.message());
  const std::filesystem::path d(dir);
  reports::ReportHeading heading;
  heading.title = title.empty() ? base : title;
  heading.notes = notes;
  if (!table.ranks().empty()) {
    const auto& r0 = table.ranks().front();
    if (const auto gpus = reports::rank_gpus(summary); !gpus.empty())
      heading.facts.emplace_back("GPU", join_list(gpus));
    if (!r0.command.empty()) heading.facts.emplace_back("command", r0.command);
    if (table.ranks().size() > 1)
      heading.facts.emplace_back("ranks", std::to_string(table.ranks().size()));
  }
  std::vector<std::string> files;
  files.push_back(write_file(d / (base + ".trace.json"),
                             [&](std::ostream& o) { reports::write_perfetto_trace(o, table); }));
  files.push_back(write_file(d / (base + ".html"), [&](std::ostream& o) {
    reports::write_html_report(o, table, summary, heading);
  }));
  files.push_back(write_file(d / (base + ".csv"), [&](std::ostream& o) {
    reports::write_summary_csv(o, summary, table);
  }));
  files.push_back(write_file(d / (base + ".kernels.csv"),
                             [&](std::ostream& o) { reports::write_kernels_csv(o, table); }));
  return files;
}

}  // namespace pm2lat::cli
