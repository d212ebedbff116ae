// `pm2lat eval ...`: accuracy harnesses against measurement tables.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>

#include "cli/commands.h"
#include "pm2lat/calibrate/aiconfigurator_table.h"
#include "pm2lat/calibrate/csv_table.h"
#include "pm2lat/calibrate/neusight_models.h"
#include "pm2lat/calibrate/neusight_table.h"
#include "pm2lat/classifier.h"
#include "pm2lat/models/physical_bounds.h"
#include "pm2lat/predictor.h"
#include "pm2lat/reports/eval/gemm_eval.h"
#include "pm2lat/reports/eval/kernel_eval.h"
#include "pm2lat/reports/eval/live_run_eval.h"
#include "pm2lat/reports/eval/model_eval.h"

namespace pm2lat::cli {
namespace {

// Each evaluation has two modes (on each GPU, or across GPUs with --source/--target); an
// option only the other mode reads is refused rather than silently ignored.
void refuse_in_this_mode(const std::vector<const CLI::Option*>& options, std::string_view mode) {
  for (const CLI::Option* o : options) {
    if (o->count() > 0)
      throw std::invalid_argument(o->get_name(false, true) + " is not read " + std::string(mode));
  }
}

constexpr std::string_view kWithoutCross = "without --source or --target";
constexpr std::string_view kWithCross = "with --source or --target";

// The measurement guard's switches, shared by the cross-GPU evaluations.
struct GuardOptions {
  bool on = true;
  double factor = 0;  // 0: the shipped constants
  std::vector<const CLI::Option*> options;

  void add_to(CLI::App* cmd) {
    options.push_back(
        cmd->add_flag("--guard,!--no-guard", on,
                      "cross-GPU: anchor forecasts to the source's measurement where the model "
                      "disagrees with it (default on)"));
    options.push_back(cmd->add_option("--guard-factor", factor,
                                      "cross-GPU: disagreement factor of the guard for every "
                                      "kernel (default: the shipped constants)")
                          ->check(CLI::PositiveNumber));
  }
  // Without --source/--target: the guard switches and `matrix` are refused.
  void refuse_without_cross(const CLI::Option* matrix) const {
    std::vector<const CLI::Option*> cross_only = options;
    cross_only.push_back(matrix);
    refuse_in_this_mode(cross_only, kWithoutCross);
  }
  std::optional<GuardPolicy> policy() const {
    if (!on) return std::nullopt;
    return factor > 0 ? GuardPolicy::with_factor(factor) : GuardPolicy{};
  }
};

}  // namespace

void add_eval_commands(CLI::App& app, const GlobalOptions& global,
                       std::vector<std::pair<CLI::App*, Action>>& actions) {
  auto* eval = app.add_subcommand("eval", "Accuracy of the predictor against measurement tables");
  eval->require_subcommand(1);

  struct KernelsOptions {
    std::string data, json, source, target, band_rows;
    std::vector<std::string> ops;
    bool matrix = false, by_collection = false;
    double max_bytes = 0;
    GuardOptions guard;
  };
  auto ko = std::make_shared<KernelsOptions>();
  auto* ek =
      eval->add_subcommand("kernels", "NeuSight-format kernel table: each row on its own GPU");
  ek->add_option("--data", ko->data, "kernel table (.csv or .csv.gz)")
      ->required()
      ->check(CLI::ExistingFile);
  ek->add_option("--json", ko->json, "write the summary as JSON");
  ek->add_option("--source", ko->source,
                 "cross-GPU: present each shape as measured on this GPU ('all': every GPU)");
  ek->add_option("--target", ko->target,
                 "cross-GPU: predict it on this GPU ('all': every other GPU)");
  const CLI::Option* k_matrix =
      ek->add_flag("--matrix", ko->matrix, "cross-GPU: also print the source x target MAPE matrix");
  ek->add_option("--ops", ko->ops, "only rows of these ops (e.g. bmm,linear)")->delimiter(',');
  ek->add_option("--band-rows", ko->band_rows,
                 "write every scored prediction for the error-band estimate (CSV, "
                 "scripts/build-error-bands.py)");
  ek->add_option("--max-bytes", ko->max_bytes,
                 "only rows whose operands and results together are smaller than this many bytes "
                 "(small operators: 1048576)");
  const CLI::Option* k_collection = ek->add_flag(
      "--by-collection", ko->by_collection,
      "also break each device's rows down by the table's collection (its split column)");
  ko->guard.add_to(ek);
  actions.emplace_back(ek, [ko, k_matrix, k_collection, &global]() {
    check_writable(ko->json);
    // An option the chosen mode does not read is refused before anything is loaded.
    const bool cross_gpu = !ko->source.empty() || !ko->target.empty();
    if (cross_gpu) {
      refuse_in_this_mode({k_collection}, kWithCross);
    } else {
      ko->guard.refuse_without_cross(k_matrix);
    }
    Predictor predictor = Predictor::from_directory(global.profiles);
    const auto table = calibrate::CsvTable::read(ko->data);
    auto calls = calibrate::read_neusight_kernels(table);
    if (!ko->ops.empty()) {
      std::erase_if(calls, [&](const calibrate::MeasuredCall& c) {
        return std::find(ko->ops.begin(), ko->ops.end(), c.op) == ko->ops.end();
      });
    }
    if (ko->max_bytes > 0) {
      std::erase_if(calls, [&](const calibrate::MeasuredCall& c) {
        const KernelClass cls =
            c.kernel_class ? *c.kernel_class : classify_kernel(c.record.launch.name);
        return !(operator_work(c.record.op, cls).bytes < ko->max_bytes);
      });
    }
    std::ofstream band_file;
    std::optional<reports::BandRows> band_rows;
    if (!ko->band_rows.empty()) {
      band_file.open(ko->band_rows);
      if (!band_file) throw std::runtime_error("cannot write " + ko->band_rows);
      band_rows.emplace(band_file);
    }
    reports::BandRows* rows = band_rows ? &*band_rows : nullptr;
    if (cross_gpu) {
      const auto cross =
          reports::eval_kernels_cross(predictor, calls, ko->source.empty() ? "all" : ko->source,
                                      ko->target.empty() ? "all" : ko->target, false,
                                      reports::CrossGrouping::kByOp, ko->guard.policy(), rows);
      reports::print_cross_eval(std::cout, cross);
      if (ko->matrix) reports::print_cross_matrix(std::cout, cross);
      if (!ko->json.empty())
        write_text_file(ko->json, reports::cross_eval_json(cross).dump(2) + "\n");
      return 0;
    }
    const auto result = reports::eval_kernels(predictor, calls, rows);
    reports::print_kernel_eval(std::cout, result);
    if (ko->by_collection) reports::print_kernel_eval_collections(std::cout, result);
    if (!ko->json.empty())
      write_text_file(ko->json, reports::kernel_eval_json(result).dump(2) + "\n");
    return 0;
  });

  struct GemmOptions {
    std::string data, json, source, target, rows;
    bool matrix = false;
    GuardOptions guard;
  };
  auto go = std::make_shared<GemmOptions>();
  auto* eg =
      eval->add_subcommand("gemm", "AIConfigurator-format GEMM table (system, m, n, k, latency)");
  eg->add_option("--data", go->data, "GEMM table (.csv or .csv.gz)")
      ->required()
      ->check(CLI::ExistingFile);
  eg->add_option("--json", go->json, "write the summary as JSON");
  eg->add_option("--source", go->source,
                 "cross-GPU: present each shape as measured on this system ('all')");
  eg->add_option("--target", go->target, "cross-GPU: predict it on this system ('all')");
  const CLI::Option* g_matrix =
      eg->add_flag("--matrix", go->matrix, "cross-GPU: also print the source x target MAPE matrix");
  const CLI::Option* g_rows =
      eg->add_option("--rows", go->rows, "write every call's measured and predicted latency (CSV)");
  go->guard.add_to(eg);
  actions.emplace_back(eg, [go, g_matrix, g_rows, &global]() {
    check_writable(go->json);
    const bool cross_gpu = !go->source.empty() || !go->target.empty();
    if (cross_gpu) {
      refuse_in_this_mode({g_rows}, kWithCross);
    } else {
      go->guard.refuse_without_cross(g_matrix);
    }
    Predictor predictor = Predictor::from_directory(global.profiles);
    const auto calls = calibrate::read_aiconfigurator_gemm(calibrate::CsvTable::read(go->data));
    if (cross_gpu) {
      const auto cross =
          reports::eval_kernels_cross(predictor, calls, go->source.empty() ? "all" : go->source,
                                      go->target.empty() ? "all" : go->target, true,
                                      reports::CrossGrouping::kByGemmType, go->guard.policy());
      reports::print_cross_eval(std::cout, cross);
      if (go->matrix) reports::print_cross_matrix(std::cout, cross);
      if (!go->json.empty())
        write_text_file(go->json, reports::cross_eval_json(cross).dump(2) + "\n");
      return 0;
    }
    std::ofstream rows;
    if (!go->rows.empty()) {
      rows.open(go->rows);
      if (!rows) throw std::runtime_error("cannot write " + go->rows);
    }
    const auto result = reports::eval_gemm(predictor, calls, go->rows.empty() ? nullptr : &rows);
    reports::print_gemm_eval(std::cout, result);
    if (!go->json.empty())
      write_text_file(go->json, reports::gemm_eval_json(result).dump(2) + "\n");
    return 0;
  });

  struct ModelsOptions {
    std::string data, json, source, target;
    std::vector<std::string> devices, modes;
    bool by_class = false, matrix = false;
    GuardOptions guard;
  };
  auto mo = std::make_shared<ModelsOptions>();
  auto* em =
      eval->add_subcommand("models", "NeuSight model runs: whole-model forecasts vs measured");
  em->add_option("--data", mo->data,
                 "directory with index.csv and <device>/<run>.csv operator files")
      ->required()
      ->check(CLI::ExistingDirectory);
  em->add_option("--json", mo->json, "write the runs (or pairs) and the overall line as JSON");
  em->add_flag("--by-class", mo->by_class,
               "break each run down by operator group and pass, and GEMMs by cuBLAS layout "
               "(live run: each pair by operator class)");
  auto* devices = em->add_option("--devices", mo->devices, "only runs on these GPUs");
  devices->delimiter(',');
  em->add_option("--modes", mo->modes, "only runs of these modes (inf, train)")->delimiter(',');
  auto* source =
      em->add_option("--source", mo->source,
                     "live run: forecast from each run's records on this GPU ('all': every GPU)");
  auto* target =
      em->add_option("--target", mo->target,
                     "live run: for the same run measured on this GPU ('all': every other GPU)");
  // A live run picks its GPUs with --source and --target.
  devices->excludes(source);
  devices->excludes(target);
  const CLI::Option* m_matrix =
      em->add_flag("--matrix", mo->matrix, "live run: also print the source x target error matrix");
  mo->guard.add_to(em);
  actions.emplace_back(em, [mo, m_matrix, &global]() {
    check_writable(mo->json);
    const bool live_run = !mo->source.empty() || !mo->target.empty();
    if (!live_run) mo->guard.refuse_without_cross(m_matrix);
    Predictor predictor = Predictor::from_directory(global.profiles);
    auto runs = calibrate::load_model_runs(mo->data);
    if (live_run) {
      std::erase_if(runs, [&](const calibrate::ModelRun& r) {
        return !reports::mode_wanted(mo->modes, r.mode);
      });
      const auto live =
          reports::eval_live_runs(predictor, runs, mo->source.empty() ? "all" : mo->source,
                                  mo->target.empty() ? "all" : mo->target, mo->guard.policy());
      reports::print_live_runs(std::cout, live, mo->by_class);
      if (mo->matrix) reports::print_live_run_matrix(std::cout, live);
      if (!mo->json.empty())
        write_text_file(mo->json, reports::live_runs_json(live, mo->by_class).dump(2) + "\n");
      return 0;
    }
    reports::ModelEvalOptions options;
    options.devices = mo->devices;
    options.modes = mo->modes;
    const auto result = reports::eval_models(predictor, runs, options);
    reports::print_model_eval(std::cout, result, mo->by_class);
    if (!mo->json.empty())
      write_text_file(mo->json, reports::model_eval_json(result, mo->by_class).dump(2) + "\n");
    return 0;
  });
}

}  // namespace pm2lat::cli
