// `pm2lat report RECORDS...`: the table of a run's records, and its report files.
#include <fmt/core.h>

#include <iostream>

#include "cli/commands.h"
#include "pm2lat/reports/console_reporter.h"
#include "pm2lat/reports/runtime_summaries.h"
#include "pm2lat/reports/records_file.h"
#include "pm2lat/reports/run_predictor.h"
#include "pm2lat/reports/run_summary.h"
#include "pm2lat/text.h"

namespace pm2lat::cli {

void add_report_commands(CLI::App& app, const GlobalOptions& global,
                         std::vector<std::pair<CLI::App*, Action>>& actions) {
  struct Options {
    std::vector<std::string> inputs;
    std::string out;
    std::string targets;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "report", "Summarise a run's kernel records; write Perfetto trace, HTML and CSV");
  cmd->add_option("records", o->inputs, "records files or run directories (records.*.jsonl)")
      ->required();
  cmd->add_option("--out", o->out,
                  "directory for report files (default: the run directory, else '.')");
  cmd->add_option("--targets", o->targets,
                  "also predict every record on these GPUs (comma-separated)");
  actions.emplace_back(cmd, [o, &global]() {
    const auto files = reports::find_records_files(o->inputs);
    std::unique_ptr<Predictor> predictor;
    std::unique_ptr<reports::RunPredictor> repredict;
    if (!o->targets.empty()) {
      predictor = std::make_unique<Predictor>(Predictor::from_directory(global.profiles));
      repredict = std::make_unique<reports::RunPredictor>(*predictor, split_list(o->targets));
    }
    reports::RunInput run = reports::read_run(files, repredict.get());
    const reports::RunSummary summary = reports::summarize(run.table);
    reports::ReportHeading h;
    h.title = "records " +
              (o->inputs.size() == 1 ? o->inputs.front() : std::to_string(files.size()) + " files");
    if (const auto gpus = reports::rank_gpus(summary); !gpus.empty())
      h.facts.emplace_back("GPU", join_list(gpus));
    h.notes = run.notes;
    for (std::string& n : reports::runtime_summary_notes(reports::read_runtime_summaries(files),
                                                          summary.measured_us))
      h.notes.push_back(std::move(n));
    reports::print_run_summary(std::cout, summary, h);
    if (summary.per_rank.size() > 1) reports::print_rank_table(std::cout, summary);
    std::string dir = o->out;
    if (dir.empty())
      dir = std::filesystem::is_directory(o->inputs.front()) ? o->inputs.front() : ".";
    const auto written =
        write_run_reports(run.table, summary, dir, "pm2lat-report", h.title, h.notes);
    fmt::print("\nreports:\n");
    for (const auto& f : written) fmt::print("  {}\n", f);
    return 0;
  });
}

}  // namespace pm2lat::cli
