// `pm2lat check RECORDS --max-mape PCT [--family F]`: exit status 0 when the run's
// per-kernel error on its own GPU is within the threshold, 1 when it exceeds it, 2 when the
// records cannot be checked (unreadable, nothing measured).
#include <fmt/core.h>

#include "cli/commands.h"
#include "pm2lat/reports/accuracy_check.h"
#include "pm2lat/reports/input_file.h"
#include "pm2lat/reports/records_file.h"
#include "pm2lat/reports/run_predictor.h"

namespace pm2lat::cli {

void add_check_commands(CLI::App& app, const GlobalOptions& global,
                        std::vector<std::pair<CLI::App*, Action>>& actions) {
  struct Options {
    std::vector<std::string> inputs;
    double max_mape = 0;
    std::string family;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "check", "Exit non-zero when a run's prediction error exceeds a threshold (CI gate)");
  cmd->add_option("records", o->inputs, "records files or run directories")->required();
  cmd->add_option("--max-mape", o->max_mape,
                  "largest acceptable mean absolute percentage error of single kernels")
      ->required()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--family", o->family,
                  "check one kernel family only (gemm, elementwise, attention, ...)");
  actions.emplace_back(cmd, [o, &global]() {
    try {
      std::optional<KernelFamily> family;
      if (!o->family.empty()) {
        family = parse_kernel_family(o->family);
        if (*family == KernelFamily::kUnknown && o->family != "unknown")
          throw reports::InputError("unknown kernel family '" + o->family + "'");
      }
      const auto files = reports::find_records_files(o->inputs);
      reports::RunInput run = reports::read_run(files);
      // Records without predictions for the GPU they ran on: predict them here.
      bool own_missing = false;
      for (std::size_t r = 0; r < run.table.ranks().size(); ++r) {
        const auto& gpu = run.table.ranks()[r].gpu;
        if (!gpu.empty() && run.table.target_index(gpu) == reports::RunTable::npos)
          own_missing = true;
      }
      std::unique_ptr<Predictor> predictor;
      std::unique_ptr<reports::RunPredictor> own;
      if (own_missing) {
        predictor = std::make_unique<Predictor>(Predictor::from_directory(global.profiles));
        std::vector<std::string> gpus;
        for (const auto& r : run.table.ranks()) {
          if (!r.gpu.empty()) gpus.push_back(r.gpu);
        }
        own = std::make_unique<reports::RunPredictor>(*predictor, gpus);
        run = reports::read_run(files, own.get());
      }
      const auto result = reports::check_accuracy(run.table, o->max_mape, family);
      for (const auto& f : result.families) {
        fmt::print("  {:<18} {:>8} kernels  MAPE {:>7.2f}%  total-time error {:>6.2f}%\n",
                   to_string(f.family), f.kernels, f.mape_pct, f.total_error_pct);
      }
      fmt::print(
          "{}: per-kernel MAPE {:.2f}% over {} kernels (limit {:.2f}%), total-time error {:.2f}%\n",
          result.passed ? "PASS" : "FAIL", result.mape_pct, result.kernels, o->max_mape,
          result.total_error_pct);
      return result.passed ? 0 : 1;
    } catch (const std::exception& e) {
      fmt::print(stderr, "error: {}\n", e.what());
      return 2;
    }
  });
}

}  // namespace pm2lat::cli
