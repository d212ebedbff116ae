// `pm2lat eval bounds`: traces and measurement tables predicted on every target GPU, each
// prediction checked against its physical bounds.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "pm2lat/text.h"
#include "pm2lat/calibrate/aiconfigurator_table.h"
#include "pm2lat/calibrate/attention_table.h"
#include "pm2lat/calibrate/csv_table.h"
#include "pm2lat/calibrate/neusight_table.h"
#include "pm2lat/classifier.h"
#include "pm2lat/predictor.h"
#include "pm2lat/reports/eval/bounds_eval.h"
#include "pm2lat/reports/replay/kineto_trace.h"
#include "pm2lat/reports/replay/trace_records.h"
#include "pm2lat/reports/replay/trace_replay.h"
#include "pm2lat/reports/run_predictor.h"

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

void add_trace_cases(const std::filesystem::path& file, const DeviceCatalogue& catalogue,
                     std::vector<reports::BoundsCase>& cases) {
  reports::KinetoTrace trace = reports::read_kineto_trace(file);
  reports::KernelClassCache classes;
  reports::TraceRecords records = reports::records_from_trace(trace, classes);
  std::string gpu = records.gpu;
  if (gpu.empty()) {
    std::vector<std::string> names;
    for (const auto& r : records.records) names.push_back(r.launch.name);
    gpu = reports::infer_gpu_from_kernel_names(names);
  }
  const DeviceSpec* source = gpu.empty() ? nullptr : catalogue.find(gpu);
  if (source == nullptr && !gpu.empty()) source = catalogue.closest_relative(gpu);
  std::string set = file.filename().string();
  set = set.substr(0, set.find(".json"));
  for (std::size_t i = 0; i < records.records.size(); ++i)
    cases.push_back({set, std::move(records.records[i]), *records.classes[i], source, false});
}

void add_table_cases(const std::vector<calibrate::MeasuredCall>& calls, const std::string& set,
                     bool graph_replay, const DeviceCatalogue& catalogue,
                     std::vector<reports::BoundsCase>& cases) {
  for (const auto& c : calls) {
    const DeviceSpec* source = catalogue.find(c.device);
    if (source == nullptr) continue;
    cases.push_back({set, c.record,
                     c.kernel_class ? *c.kernel_class : classify_kernel(c.record.launch.name),
                     source, graph_replay});
  }
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
    Predictor predictor = Predictor::from_directory(global.profiles);
    const DeviceCatalogue& catalogue = predictor.catalogue();
    std::vector<reports::BoundsCase> cases;
    for (const auto& file : trace_files(o->traces)) add_trace_cases(file, catalogue, cases);
    if (!o->neusight.empty()) {
      add_table_cases(calibrate::read_neusight_kernels(calibrate::CsvTable::read(o->neusight)),
                      "neusight", false, catalogue, cases);
    }
    for (const auto& file : o->gemm) {
      add_table_cases(calibrate::read_aiconfigurator_gemm(calibrate::CsvTable::read(file)),
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
