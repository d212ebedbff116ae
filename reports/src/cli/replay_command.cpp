// `pm2lat replay TRACE...`: recorded PyTorch profiler traces through prediction and reports.
#include <fmt/core.h>

#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "pm2lat/reports/console_reporter.h"
#include "pm2lat/reports/eval/progress_bar.h"
#include "pm2lat/reports/input_file.h"
#include "pm2lat/reports/replay/trace_replay.h"
#include "pm2lat/reports/replay_json_reporter.h"
#include "pm2lat/reports/run_predictor.h"
#include "pm2lat/text.h"

namespace pm2lat::cli {
namespace {

bool looks_like_trace(const std::filesystem::path& p) {
  const std::string n = p.filename().string();
  auto ends = [&](const std::string& s) {
    return n.size() >= s.size() && n.compare(n.size() - s.size(), s.size(), s) == 0;
  };
  return (ends(".json") || ends(".json.gz")) && !ends(".kernels.csv.gz");
}

// Files as given; directories contribute their *.json and *.json.gz files, sorted.
std::vector<std::filesystem::path> expand_inputs(const std::vector<std::string>& inputs) {
  std::vector<std::filesystem::path> files;
  for (const auto& in : inputs) {
    const std::filesystem::path p(in);
    if (std::filesystem::is_directory(p)) {
      std::vector<std::filesystem::path> found;
      for (const auto& e : std::filesystem::directory_iterator(p)) {
        if (e.is_regular_file() && looks_like_trace(e.path())) found.push_back(e.path());
      }
      std::sort(found.begin(), found.end());
      if (found.empty())
        throw reports::InputError(in + ": no trace files (*.json, *.json.gz) in this directory");
      files.insert(files.end(), found.begin(), found.end());
    } else {
      files.push_back(p);
    }
  }
  return files;
}

// "run.pt.trace.json.gz" -> "run.pt.trace": a name for the report files of one trace.
std::string trace_base_name(const std::string& file) {
  std::string b = file;
  for (const char* ext : {".gz", ".json"}) {
    const std::string e(ext);
    if (b.size() > e.size() && b.compare(b.size() - e.size(), e.size(), e) == 0)
      b.resize(b.size() - e.size());
  }
  return b;
}

}  // namespace

void add_replay_commands(CLI::App& app, const GlobalOptions& global,
                         std::vector<std::pair<CLI::App*, Action>>& actions) {
  struct Options {
    std::vector<std::string> traces;
    std::string targets = kDefaultTargets;
    std::string gpu;
    std::string json;
    std::string out;
    bool quiet = false;
    bool progress = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "replay", "Predict the kernels of recorded PyTorch profiler (Kineto) traces");
  cmd->add_option("traces", o->traces, "trace files (.json or .json.gz) or directories of them")
      ->required();
  cmd->add_option("--targets", o->targets, "comma-separated target GPUs")->capture_default_str();
  cmd->add_option("--gpu", o->gpu,
                  "the GPU the trace ran on, when the trace does not say or says wrong");
  cmd->add_option("--json", o->json, "write the result as JSON to this file");
  cmd->add_option(
      "--out", o->out,
      "write records (JSONL), Perfetto trace, HTML report and CSV per trace into this directory");
  cmd->add_flag("--quiet", o->quiet, "print only the overview line per trace");
  cmd->add_flag("--progress", o->progress, "show progress even when stderr is not a terminal");
  actions.emplace_back(cmd, [o, &global]() {
    // Refused before the replay, not after it: the traces may take minutes.
    check_writable(o->json);
    Predictor predictor = Predictor::from_directory(global.profiles);
    reports::ReplayOptions opt;
    opt.targets = split_list(o->targets);
    opt.gpu = o->gpu;
    reports::ProgressBar bar(o->progress ? reports::ProgressBar::Mode::kAlways
                                         : reports::ProgressBar::Mode::kAuto);
    opt.progress = &bar;
    opt.keep_records = !o->out.empty();
    std::vector<std::unique_ptr<reports::TraceReplay>> results;
    std::vector<reports::FailedTrace> failed;
    for (const auto& file : expand_inputs(o->traces)) {
      try {
        results.push_back(
            std::make_unique<reports::TraceReplay>(reports::replay_trace(file, predictor, opt)));
      } catch (const reports::InputError& e) {
        // A trace that cannot be read is said; the others are still replayed and reported,
        // and the exit status says that one failed.
        fmt::print(stderr, "error: {}\n", e.what());
        failed.push_back({file.filename().string(), e.what()});
        continue;
      }
      const auto& r = *results.back();
      if (!o->quiet) {
        reports::ReportHeading h;
        h.title = "trace " + r.trace;
        h.facts.emplace_back("GPU", r.gpu.empty()
                                        ? (r.device.empty() ? "unknown" : r.device)
                                        : r.gpu + (r.device != r.gpu ? " (" + r.device + ")" : ""));
        h.facts.emplace_back(
            "kernels linked to operators",
            fmt::format("{} of {} ({} with shapes, {} from launch geometry{})", r.linked,
                        r.summary.kernels, r.with_shape, r.from_geometry,
                        r.work_rejected > 0
                            ? fmt::format(", {} whose operator's work their launch cannot do",
                                          r.work_rejected)
                            : std::string()));
        h.notes = r.notes;
        reports::print_run_summary(std::cout, r.summary, h);
        // A trace of GPUs of several models is a rank per model.
        if (r.summary.per_rank.size() > 1) reports::print_rank_table(std::cout, r.summary);
        std::cout << "\n";
      }
      if (!o->out.empty()) {
        const std::string base = trace_base_name(r.trace);
        write_run_reports(r.table, r.summary, o->out, base, "trace " + r.trace, r.notes);
        reports::write_replay_records(
            r, std::filesystem::path(o->out) / ("records." + base + ".jsonl"));
      }
    }
    std::vector<const reports::TraceReplay*> view;
    view.reserve(results.size());
    for (const auto& r : results) view.push_back(r.get());
    if (!view.empty()) reports::print_replay_overview(std::cout, view);
    if (!o->json.empty())
      write_text_file(o->json, reports::replay_json(view, failed).dump(2) + "\n");
    return failed.empty() ? 0 : 1;
  });
}

}  // namespace pm2lat::cli
