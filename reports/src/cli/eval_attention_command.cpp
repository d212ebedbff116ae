// `pm2lat eval attention`: AIConfigurator-format attention tables against the predictor.
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "pm2lat/calibrate/attention_table.h"
#include "pm2lat/calibrate/csv_table.h"
#include "pm2lat/predictor.h"
#include "pm2lat/reports/eval/attention_eval.h"

namespace pm2lat::cli {

void add_eval_attention_command(CLI::App& app, const GlobalOptions& global,
                                std::vector<std::pair<CLI::App*, Action>>& actions) {
  CLI::App* eval = app.get_subcommand("eval");
  struct Options {
    std::string data, json;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = eval->add_subcommand("attention",
                                   "AIConfigurator-format attention table (system, kernel_source, "
                                   "batch, isl, heads, head_dim, latency)");
  cmd->add_option("--data", o->data, "attention table (.csv or .csv.gz)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--json", o->json, "write the per system x backend summary as JSON");
  actions.emplace_back(cmd, [o, &global]() {
    check_writable(o->json);
    Predictor predictor = Predictor::from_directory(global.profiles);
    calibrate::AttentionReadStats stats;
    const auto rows = calibrate::read_attention_table(calibrate::CsvTable::read(o->data), &stats);
    const auto result = reports::eval_attention(predictor, rows);
    reports::print_attention_eval(std::cout, result);
    if (stats.skipped_bad_shape + stats.skipped_unknown_backend > 0) {
      std::cout << stats.skipped_bad_shape << " rows skipped for bad shapes, "
                << stats.skipped_unknown_backend << " for unknown backends\n";
    }
    if (!o->json.empty())
      write_text_file(o->json, reports::attention_eval_json(result).dump(2) + "\n");
    return 0;
  });
}

}  // namespace pm2lat::cli
