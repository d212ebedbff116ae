// `pm2lat merge DIR...`: the ranks of a multi-process run (torchrun, Slurm) as one report.
#include <fmt/core.h>

#include <iostream>

#include "cli/commands.h"
#include "pm2lat/reports/console_reporter.h"
#include "pm2lat/reports/runtime_summaries.h"
#include "pm2lat/reports/records_file.h"
#include "pm2lat/reports/run_summary.h"

namespace pm2lat::cli {

void add_merge_commands(CLI::App& app, const GlobalOptions& /*global*/,
                        std::vector<std::pair<CLI::App*, Action>>& actions) {
  struct Options {
    std::vector<std::string> inputs;
    std::string out;
  };
  auto o = std::make_shared<Options>();
  auto* cmd =
      app.add_subcommand("merge", "Aggregate the ranks of a multi-process run into one report");
  cmd->add_option("dirs", o->inputs, "run directories (or records files), one or more per node")
      ->required();
  cmd->add_option("--out", o->out,
                  "directory for the merged report files (default: the first directory)");
  actions.emplace_back(cmd, [o]() {
    const auto files = reports::find_records_files(o->inputs);
    reports::RunInput run = reports::read_run(files);
    const reports::RunSummary summary = reports::summarize(run.table);
    reports::ReportHeading h;
    h.title =
        fmt::format("merged run: {} ranks from {} files", run.table.ranks().size(), files.size());
    h.notes = run.notes;
    for (std::string& n : reports::runtime_summary_notes(reports::read_runtime_summaries(files),
                                                          summary.measured_us))
      h.notes.push_back(std::move(n));
    reports::print_run_summary(std::cout, summary, h);
    reports::print_rank_table(std::cout, summary);
    std::string dir = o->out;
    if (dir.empty())
      dir = std::filesystem::is_directory(o->inputs.front()) ? o->inputs.front() : ".";
    const auto written =
        write_run_reports(run.table, summary, dir, "pm2lat-merged", h.title, h.notes);
    fmt::print("\nreports:\n");
    for (const auto& f : written) fmt::print("  {}\n", f);
    return 0;
  });
}

}  // namespace pm2lat::cli
