// `pm2lat run [--targets ...] [--out DIR] [--no-measure] -- CMD ARGS...`
#include <fmt/core.h>

#include <unistd.h>  // environ

#include <iostream>

#include "cli/commands.h"
#include "pm2lat/device_catalogue.h"
#include "pm2lat/reports/cli/launcher.h"
#include "pm2lat/reports/console_reporter.h"
#include "pm2lat/reports/runtime_summaries.h"
#include "pm2lat/reports/input_file.h"
#include "pm2lat/reports/records_file.h"
#include "pm2lat/reports/run_summary.h"
#include "pm2lat/target_set.h"
#include "pm2lat/text.h"

namespace pm2lat::cli {
namespace {

// After the program: the summary of what it recorded, and where the outputs are. Problems
// here are reported but never change the program's exit status.
void summarise_run(const std::filesystem::path& out_dir) {
  std::vector<std::filesystem::path> files;
  try {
    files = reports::find_records_files({out_dir.string()});
  } catch (const std::exception&) {
    fmt::print(stderr, "pm2lat: no kernel records in {} (did the program launch GPU kernels?)\n",
               out_dir.string());
    return;
  }
  try {
    reports::RunInput run = reports::read_run(files);
    const reports::RunSummary summary = reports::summarize(run.table);
    reports::ReportHeading h;
    h.title = "pm2lat run " + out_dir.string();
    if (!run.table.ranks().empty()) {
      const auto& r0 = run.table.ranks().front();
      if (!r0.command.empty()) h.facts.emplace_back("command", r0.command);
      if (const auto gpus = reports::rank_gpus(summary); !gpus.empty())
        h.facts.emplace_back("GPU", join_list(gpus));
    }
    h.notes = run.notes;
    // The runtime's summaries say what else the GPU did (its copies and memsets) and what
    // the records lack (launches lost).
    for (std::string& n : reports::runtime_summary_notes(reports::read_runtime_summaries(files),
                                                          summary.measured_us))
      h.notes.push_back(std::move(n));
    std::cerr.flush();
    reports::print_run_summary(std::cout, summary, h);
    if (summary.per_rank.size() > 1) reports::print_rank_table(std::cout, summary);
    const auto written =
        write_run_reports(run.table, summary, out_dir.string(), "pm2lat-report", h.title, h.notes);
    fmt::print("\noutputs in {}:\n", out_dir.string());
    for (const auto& f : files) fmt::print("  {}  (kernel records)\n", f.string());
    for (const auto& f : written) fmt::print("  {}\n", f);
  } catch (const std::exception& e) {
    fmt::print(stderr, "pm2lat: the run's records could not be summarised: {}\n", e.what());
  }
  std::cout.flush();
}

}  // namespace

void add_run_commands(CLI::App& app, const GlobalOptions& global,
                      std::vector<std::pair<CLI::App*, Action>>& actions) {
  struct Options {
    std::vector<std::string> command;
    std::string targets = kDefaultTargets;
    std::string out;
    bool no_measure = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "run", "Run a program with pm2lat loaded: pm2lat run [options] -- CMD ARGS...");
  cmd->add_option("--targets", o->targets, "comma-separated target GPUs")->capture_default_str();
  cmd->add_option(
      "--out", o->out,
      "output directory (default: a new ./pm2lat-<timestamp>); refused when it holds an "
      "earlier run's records");
  cmd->add_flag("--no-measure", o->no_measure, "predict only; do not time the kernels");
  cmd->add_option("command", o->command, "the program and its arguments, after '--'")->required();
  actions.emplace_back(cmd, [o, &global]() {
    reports::LaunchConfig config;
    config.command = o->command;
    // Check everything before starting the program: a typo must not cost a training run.
    const DeviceCatalogue catalogue =
        DeviceCatalogue::load(std::filesystem::path(global.profiles) / "devices.json");
    TargetSet targets(catalogue);
    for (const auto& t : split_list(o->targets)) targets.add(t);
    if (targets.size() == 0) throw reports::InputError("--targets names no GPU");
    config.targets = targets.names();
    config.library = reports::find_runtime_library(reports::executable_dir());
    if (o->out.empty()) {
      config.out_dir =
          std::filesystem::absolute(reports::create_fresh_out_dir(".")).lexically_normal();
    } else {
      config.out_dir = std::filesystem::absolute(o->out).lexically_normal();
      // The report reads every records file of the directory: an earlier run's would be
      // counted as this one's.
      if (reports::holds_records_files(config.out_dir))
        throw reports::InputError(config.out_dir.string() +
                                  " already holds the kernel records (records.*.jsonl) of an "
                                  "earlier run, which this run's report would count too: give "
                                  "another --out, or remove them");
      std::error_code ec;
      std::filesystem::create_directories(config.out_dir, ec);
      if (ec)
        throw reports::InputError(config.out_dir.string() +
                                  ": cannot create directory: " + ec.message());
    }
    config.profiles = std::filesystem::absolute(global.profiles).lexically_normal().string();
    config.measure = !o->no_measure;

    const auto env = reports::child_environment(config, environ);
    const reports::ChildStatus status = reports::run_child(config.command, env);
    if (status.signaled) {
      fmt::print(stderr, "pm2lat: the program was killed by signal {} ({})\n", status.code,
                 strsignal(status.code));
    }
    summarise_run(config.out_dir);
    return reports::exit_like(status);
  });
}

}  // namespace pm2lat::cli
