// pm2lat: the command line. Subcommands are thin: each parses its options and calls one
// unit of reports/.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "pm2lat/calibrate/csv_table.h"
#include "pm2lat/calibrate/neusight_table.h"
#include "pm2lat/predictor.h"
#include "pm2lat/reports/kernel_eval.h"

namespace {

using namespace pm2lat;

void write_json(const std::string& file, const nlohmann::json& j) {
  std::ofstream out(file);
  if (!out) throw std::runtime_error(file + ": cannot be written");
  out << j.dump(2) << '\n';
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"pm2lat: GPU kernel latency forecasts from a live run or a recorded trace"};
  app.require_subcommand(1);
  std::string profiles = Predictor::default_profile_dir().string();
  app.add_option("--profiles", profiles, "directory of device profiles and devices.json");

  auto* eval = app.add_subcommand("eval", "Accuracy of the predictor against measurement tables");
  eval->require_subcommand(1);
  std::string data, json_out;
  auto* ek = eval->add_subcommand("kernels", "NeuSight-format kernel table: each row on its own GPU");
  ek->add_option("--data", data, "kernel table (.csv or .csv.gz)")->required()->check(CLI::ExistingFile);
  ek->add_option("--json", json_out, "write the summary as JSON");
  ek->add_option("--profiles", profiles, "directory of device profiles and devices.json");

  CLI11_PARSE(app, argc, argv);
  try {
    if (ek->parsed()) {
      Predictor predictor = Predictor::from_directory(profiles);
      const auto table = calibrate::CsvTable::read(data);
      const auto calls = calibrate::read_neusight_kernels(table);
      const auto result = reports::eval_kernels(predictor, calls);
      reports::print_kernel_eval(std::cout, result);
      if (!json_out.empty()) write_json(json_out, reports::kernel_eval_json(result));
      return 0;
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
  return 0;
}
