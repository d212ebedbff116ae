#include "run_command.h"

#include <fmt/core.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <memory>

#include "command_support.h"
#include "pm2lat/calibrate/run/calibration_fit.h"
#include "pm2lat/calibrate/run/calibration_journal.h"
#include "pm2lat/calibrate/run/calibration_plan.h"
#include "pm2lat/calibrate/run/calibration_runner.h"
#include "pm2lat/calibrate/run/driver_backend.h"
#include "pm2lat/calibrate/run/progress_meter.h"
#include "pm2lat/device_catalogue.h"
#include "pm2lat/predictor.h"
#include "pm2lat/profile_io.h"
#include "pm2lat/text.h"

namespace pm2lat::calibrate {
namespace {

using namespace pm2lat::calibrate::run;

struct RunCommandOptions {
  std::string dtypes = "fp32,bf16";
  std::string layouts = "linear,matmul,weight_grad";
  std::string budget = "30m";
  std::string output, journal, device, catalogue, dims, batches;
  int reps = 0;
  bool dry_run = false, fit_only = false, restart = false, quiet = false, no_memory = false;
  std::size_t max_tasks = 0;
  double warmup_s = 1.0;
  DriverBackendOptions libs;
};

std::atomic<int> g_interrupts{0};

extern "C" void on_interrupt(int) {
  // The first interrupt stops after the measurement in progress; the second ends the process.
  if (g_interrupts.fetch_add(1) >= 1) {
    std::signal(SIGINT, SIG_DFL);
    std::raise(SIGINT);
  }
}

std::vector<std::int64_t> parse_ints(const std::string& text) {
  std::vector<std::int64_t> out;
  for (const std::string& part : split_list(text)) {
    std::size_t used = 0;
    const long long v = std::stoll(part, &used);
    if (used != part.size() || v <= 0)
      throw std::invalid_argument(fmt::format("bad size '{}'", part));
    out.push_back(v);
  }
  return out;
}

PlanOptions plan_options(const RunCommandOptions& o) {
  PlanOptions p;
  p.dtypes = parse_dtype_list(o.dtypes);
  p.layouts = parse_layout_list(o.layouts);
  p.budget_s = parse_duration_s(o.budget);
  p.dims = parse_ints(o.dims);
  p.batches = parse_ints(o.batches);
  p.reps = o.reps;
  p.memory = !o.no_memory;
  return p;
}

// The catalogue spec for the GPU: --device when given, else the driver's name.
const DeviceSpec& device_spec(const DeviceCatalogue& catalogue, const std::string& forced,
                              const std::string& detected) {
  if (!forced.empty()) {
    const DeviceSpec& s = catalogue.resolve(forced);
    if (!detected.empty() && catalogue.find(detected) != &s) {
      fmt::print(stderr, "warning: calibrating '{}' as {} (--device)\n", detected, s.name);
    }
    return s;
  }
  if (const DeviceSpec* s = catalogue.find(detected)) return *s;
  throw std::runtime_error(
      fmt::format("the GPU '{}' is not in the device catalogue: add its spec to devices.json (the "
                  "predictor needs it) or name "
                  "the closest entry with --device",
                  detected));
}

Provenance provenance(const std::string& device, const Environment& env,
                      const CalibrationPlan& plan) {
  Provenance p;
  p.source = fmt::format(
      "pm2lat-calibrate run: microbenchmarks on the local {} (cuBLASLt GEMMs, own memory-bound "
      "kernels)",
      device);
  p.tool = "pm2lat-calibrate run " PM2LAT_VERSION;
  p.created = today();
  p.environment = env;
  p.environment["plan_density"] = plan.density;
  p.environment["plan_repetitions"] = std::to_string(plan.options.reps);
  p.environment["plan_estimated_s"] = fmt::format("{:.0f}", plan.estimated_s());
  p.notes =
      "Device time (basis 'kernel'): events around CUDA graphs of back-to-back launches behind a "
      "busy kernel, median "
      "of repetitions, operands rotated over more than 2x L2 and L2 scrubbed between repetitions; "
      "the graph's "
      "per-launch gap (empty kernels in a graph minus their profiled time) and the other kernels "
      "of a call (split-K "
      "reductions, profiled) are subtracted. Points are cuBLASLt heuristic picks; candidate and "
      "fill runs only "
      "inform their configuration's fit. call_overhead '*' is one empty kernel timed alone with "
      "events.";
  return p;
}

void report_fit(const FitReport& r, const std::string& file) {
  fmt::print(
      "profile {}: {} GEMM points in {} kernel configurations (+{} candidate/fill runs), {} memory "
      "rows in {} "
      "fits, {} skipped; launch gap {:.2f} us{}; config fit error median {:.2f} %, max {:.2f} %\n",
      file, r.gemm_points, r.gemm_configs, r.gemm_fit_only, r.memory_rows, r.vector_fits, r.skipped,
      r.launch_gap_us, r.launch_measured ? "" : " (not measured)", r.median_config_mape_pct,
      r.max_config_mape_pct);
}

// Where the outputs go: -o PROFILE names the profile (one dtype) or the stem of one per dtype
// (PROFILE without .json, then .<dtype>.json); by default <device>.calibrated-<dtype>.json.
struct Outputs {
  std::string given, device;

  bool named() const { return !given.empty(); }
  std::string stem() const {
    if (!named()) return device + ".calibrated";
    const std::string ext = ".json";
    return given.size() > ext.size() &&
                   given.compare(given.size() - ext.size(), ext.size(), ext) == 0
               ? given.substr(0, given.size() - ext.size())
               : given;
  }
  std::string profile(DType t, std::size_t dtypes) const {
    if (named() && dtypes == 1) return given;
    return named() ? fmt::format("{}.{}.json", stem(), to_string(t))
                   : fmt::format("{}-{}.json", stem(), to_string(t));
  }
  std::string side_file(const std::string& suffix) const {
    return (named() ? given : stem()) + suffix;
  }
};

int write_outputs(const RunOutcome& outcome, const DeviceSpec& spec, const Provenance& prov,
                  const Outputs& out) {
  const std::vector<DType> dtypes = gemm_dtypes(outcome.measurements);
  for (DType t : dtypes) {
    FitReport rep;
    const Profile profile = fit_profile(outcome.measurements, spec, prov, t, &rep);
    const std::string file = out.profile(t, dtypes.size());
    save_profile(profile, file);
    report_fit(rep, file);
  }
  const std::string csv = out.side_file(".candidates.csv");
  const std::size_t rows = write_candidates_csv(csv, outcome.measurements);
  if (rows > 0) fmt::print("heuristic candidates: {} rows -> {}\n", rows, csv);
  return 0;
}

int run_fit_only(const RunCommandOptions& o, const DeviceCatalogue& catalogue) {
  if (o.journal.empty()) throw std::runtime_error("--fit-only needs --journal");
  const JournalContents j = read_journal(o.journal);
  const DeviceSpec& spec = device_spec(catalogue, o.device, j.identity.device);
  const CalibrationPlan plan = plan_calibration(spec, plan_options(o));
  const RunOutcome outcome = collect_results(plan, j.results);
  fmt::print("{}: {} of the plan's measurements{}\n", o.journal, outcome.measurements.size(),
             outcome.complete ? "" : " (the run is not complete: fitting what there is)");
  Environment env(j.identity.versions.begin(), j.identity.versions.end());
  env["device"] = j.identity.device;
  return write_outputs(outcome, spec, provenance(j.identity.device, env, plan),
                       Outputs{o.output, spec.name});
}

int run_command(RunCommandOptions o) {
  const DeviceCatalogue catalogue = DeviceCatalogue::load(o.catalogue);
  if (o.fit_only) return run_fit_only(o, catalogue);
  if (o.dry_run) {
    std::string detected;
    if (o.device.empty()) {
      try {
        detected = open_driver_backend(o.libs)->device_name();
      } catch (const BackendError& e) {
        throw std::runtime_error(fmt::format(
            "{}; to plan without a GPU, name one with --device (e.g. --device H100)", e.what()));
      }
    }
    const CalibrationPlan plan =
        plan_calibration(device_spec(catalogue, o.device, detected), plan_options(o));
    fmt::print("{}", describe_plan(plan));
    return 0;
  }

  o.libs.warmup_s = o.warmup_s;
  std::unique_ptr<MeasurementBackend> backend = open_driver_backend(o.libs);
  const std::string detected = backend->device_name();
  const DeviceSpec& spec = device_spec(catalogue, o.device, detected);
  const CalibrationPlan plan = plan_calibration(spec, plan_options(o));
  if (!o.quiet) fmt::print("{}", describe_plan(plan));
  std::fflush(stdout);  // the plan before the progress line
  const Outputs outputs{o.output, spec.name};
  const std::string journal_file =
      o.journal.empty() ? outputs.side_file(".journal.jsonl") : o.journal;
  const Environment env_start = backend->environment();
  JournalIdentity id;
  id.device = detected;
  for (const char* k : {"driver_version", "cublaslt_version"}) {
    if (auto it = env_start.find(k); it != env_start.end()) id.versions[k] = it->second;
  }
  CalibrationJournal journal = CalibrationJournal::open(journal_file, id, o.restart);
  if (!journal.results().empty()) {
    fmt::print("resuming from {}: {} measurements already done{}\n", journal_file,
               journal.results().size(),
               journal.dropped_lines()
                   ? fmt::format(" ({} unreadable lines dropped)", journal.dropped_lines())
                   : "");
  }

  ProgressMeter progress(o.quiet ? nullptr : stderr, isatty(STDERR_FILENO) != 0);
  RunnerOptions ro;
  ro.max_tasks = o.max_tasks;
  ro.progress = &progress;
  g_interrupts = 0;
  ro.stop_requested = [] { return g_interrupts.load() > 0; };
  auto previous = std::signal(SIGINT, on_interrupt);
  RunOutcome outcome;
  try {
    outcome = run_calibration(plan, *backend, journal, ro);
  } catch (...) {
    std::signal(SIGINT, previous);
    fmt::print(
        stderr,
        "the journal {} keeps every finished measurement: run the same command to continue\n",
        journal_file);
    throw;
  }
  std::signal(SIGINT, previous);
  fmt::print("{} measured now, {} from the journal, {} failed{}\n", outcome.measured,
             outcome.resumed, outcome.failed,
             outcome.ignored
                 ? fmt::format(", {} journal entries not in this plan ignored", outcome.ignored)
                 : "");
  if (!outcome.complete) {
    fmt::print(
        "stopped before the end; {} keeps what was measured: run the same command to continue\n",
        journal_file);
    return g_interrupts.load() > 0 ? 130 : 0;
  }
  return write_outputs(outcome, spec, provenance(detected, backend->environment(), plan), outputs);
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto o = std::make_shared<RunCommandOptions>();
  o->catalogue = (Predictor::default_profile_dir() / "devices.json").string();
  auto* cmd = app.add_subcommand("run", "Calibrate the local GPU with microbenchmarks (resumable)");
  cmd->add_option("--dtypes", o->dtypes, "GEMM types: fp32, tf32, bf16, fp16, fp8")
      ->capture_default_str();
  cmd->add_option("--layouts", o->layouts, "GEMM layouts: linear, matmul, weight_grad")
      ->capture_default_str();
  cmd->add_option("--budget", o->budget,
                  "time budget (30m, 1h30m, 90s): the plan's density follows it")
      ->capture_default_str();
  cmd->add_option(
      "-o,--output", o->output,
      "profile to write; with several dtypes, one per dtype: PROFILE.<dtype>.json (default: "
      "<device>.calibrated-<dtype>.json)");
  cmd->add_option("--journal", o->journal,
                  "journal of finished measurements (default: next to the output)");
  cmd->add_flag("--dry-run", o->dry_run,
                "print the plan and its estimated time; needs no GPU with --device");
  cmd->add_flag("--fit-only", o->fit_only, "build the profile from --journal without measuring");
  cmd->add_option("--device", o->device,
                  "catalogue name of the GPU (default: the driver's name for it)");
  cmd->add_option("--catalogue", o->catalogue, "device catalogue JSON");
  cmd->add_flag("--restart", o->restart, "discard the journal and start over");
  cmd->add_option("--max-tasks", o->max_tasks,
                  "stop after this many new measurements (continue later)");
  cmd->add_option("--dims", o->dims,
                  "GEMM sizes M, N and K take, e.g. 256,1024,4096 (default: by budget)");
  cmd->add_option("--batches", o->batches,
                  "batch counts of batched GEMMs with --dims (default: none)");
  cmd->add_option("--reps", o->reps, "timed repetitions per measurement (default: by budget)");
  cmd->add_flag("--no-memory", o->no_memory, "skip the bandwidth curves");
  cmd->add_option("--warmup", o->warmup_s, "seconds of busy work before measuring")
      ->capture_default_str();
  cmd->add_flag("--quiet", o->quiet, "no plan and no progress line");
  cmd->add_option("--cuda-lib", o->libs.driver_library, "CUDA driver library")
      ->capture_default_str();
  cmd->add_option("--cublaslt-lib", o->libs.cublaslt_library, "cuBLASLt library")
      ->capture_default_str();
  cmd->add_option("--cupti-lib", o->libs.cupti_library, "CUPTI library")->capture_default_str();
  cmd->add_option("--gpu", o->libs.device, "GPU ordinal")->capture_default_str();
  cmd->callback([o]() {
    int rc = 1;
    try {
      rc = run_command(*o);
    } catch (const std::exception& e) {
      fmt::print(stderr, "error: {}\n", e.what());
    }
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace pm2lat::calibrate
