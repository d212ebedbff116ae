// `pm2lat eval bounds`: traces and measurement tables predicted on every target GPU, each
// prediction checked against its physical bounds.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "pm2lat/calibrate/aiconfigurator_table.h"
#include "pm2lat/calibrate/attention_table.h"
#include "pm2lat/calibrate/csv_table.h"
#include "pm2lat/calibrate/neusight_table.h"
#include "pm2lat/classifier.h"
#include "pm2lat/predictor.h"
#include "pm2lat/reports/eval/bounds_cases.h"
#include "pm2lat/reports/eval/bounds_eval.h"
#include "pm2lat/reports/run_predictor.h"
#include "pm2lat/text.h"

namespace pm2lat::cli {
namespace {

bool is_trace_file(const std::filesystem::path& p) {
  const std::string n = p.filename().string();
  auto ends = [&](const std::string& s) {
    return n.size() >= s.size() && n.compare(n.size() - s.size(), s.size(), s) == 0;
  };
  return (ends(".json") || ends(".json.gz")) && !ends(".kernels.csv.gz");
}

std::vector<std::filesystem::path> trace_files(const std::vector<std::string>& inputs) {
  std::vector<std::filesystem::path> files;
  for (const auto& in : inputs) {
    if (!std::filesystem::is_directory(in)) {
      files.emplace_back(in);
      continue;
    }
    std::vector<std::filesystem::path> found;
    for (const auto& e : std::filesystem::directory_iterator(in)) {
      if (e.is_regular_file() && is_trace_file(e.path())) found.push_back(e.path());
    }
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  return files;
}

}  // namespace

void add_eval_bounds_command(CLI::App& app, const GlobalOptions& global,
                             std::vector<std::pair<CLI::App*, Action>>& actions) {
  CLI::App* eval = app.get_subcommand("eval");
  struct Options {
    std::vector<std::string> traces, gemm;
    std::string neusight, attention, targets = "all", json;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = eval->add_subcommand(
      "bounds", "Predictions of traces and tables on every target against their physical bounds");
  cmd->add_option("--traces", o->traces, "trace files or directories of them");
  cmd->add_option("--neusight", o->neusight, "NeuSight-format kernel table")
      ->check(CLI::ExistingFile);
  cmd->add_option("--gemm", o->gemm, "AIConfigurator-format GEMM tables")->check(CLI::ExistingFile);
  cmd->add_option("--attention", o->attention, "AIConfigurator-format attention table")
      ->check(CLI::ExistingFile);
  cmd->add_option("--targets", o->targets,
                  "comma-separated target GPUs, or 'all' (every GPU of the catalogue)")
      ->capture_default_str();
  cmd->add_option("--json", o->json, "write the counts as JSON");
  actions.emplace_back(cmd, [o, &global]() {
    check_writable(o->json);
    Predictor predictor = Predictor::from_directory(global.profiles);
    const DeviceCatalogue& catalogue = predictor.catalogue();
    std::vector<reports::BoundsCase> cases;
    for (const auto& file : trace_files(o->traces))
      reports::add_trace_bounds_cases(file, predictor, cases);
    if (!o->neusight.empty()) {
      reports::add_table_bounds_cases(
          calibrate::read_neusight_kernels(calibrate::CsvTable::read(o->neusight)), "neusight",
          false, catalogue, cases);
    }
    for (const auto& file : o->gemm) {
      reports::add_table_bounds_cases(
          calibrate::read_aiconfigurator_gemm(calibrate::CsvTable::read(file)),
          "aiconfigurator-gemm", true, catalogue, cases);
    }
    if (!o->attention.empty()) {
      for (auto& m : calibrate::read_attention_table(calibrate::CsvTable::read(o->attention))) {
        const DeviceSpec* source = catalogue.find(m.system);
        if (source == nullptr) continue;
        KernelClass cls = classify_kernel(m.record.launch.name);
        cases.push_back(
            {"aiconfigurator-attention", std::move(m.record), std::move(cls), source, true});
      }
    }
    std::vector<std::string> targets;
    if (o->targets == "all") {
      for (const auto& d : catalogue.devices()) targets.push_back(d.name);
    } else {
      targets = split_list(o->targets);
    }
    const auto result = reports::eval_bounds(predictor, cases, targets);
    reports::print_bounds_eval(std::cout, result);
    if (!o->json.empty())
      write_text_file(o->json, reports::bounds_eval_json(result).dump(2) + "\n");
    return 0;
  });
}

}  // namespace pm2lat::cli
