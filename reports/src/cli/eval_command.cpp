// `pm2lat eval ...`: accuracy harnesses against measurement tables.
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "pm2lat/calibrate/csv_table.h"
#include "pm2lat/calibrate/neusight_table.h"
#include "pm2lat/predictor.h"
#include "pm2lat/reports/kernel_eval.h"

namespace pm2lat::cli {

void add_eval_commands(CLI::App& app, const GlobalOptions& global,
                       std::vector<std::pair<CLI::App*, Action>>& actions) {
  auto* eval = app.add_subcommand("eval", "Accuracy of the predictor against measurement tables");
  eval->require_subcommand(1);

  struct KernelsOptions {
    std::string data, json;
  };
  auto ko = std::make_shared<KernelsOptions>();
  auto* ek = eval->add_subcommand("kernels", "NeuSight-format kernel table: each row on its own GPU");
  ek->add_option("--data", ko->data, "kernel table (.csv or .csv.gz)")->required()->check(CLI::ExistingFile);
  ek->add_option("--json", ko->json, "write the summary as JSON");
  actions.emplace_back(ek, [ko, &global]() {
    Predictor predictor = Predictor::from_directory(global.profiles);
    const auto table = calibrate::CsvTable::read(ko->data);
    const auto calls = calibrate::read_neusight_kernels(table);
    const auto result = reports::eval_kernels(predictor, calls);
    reports::print_kernel_eval(std::cout, result);
    if (!ko->json.empty()) write_text_file(ko->json, reports::kernel_eval_json(result).dump(2) + "\n");
    return 0;
  });
}

}  // namespace pm2lat::cli
