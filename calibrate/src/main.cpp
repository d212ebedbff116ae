// pm2lat-calibrate: builds device profiles from measurement tables (import), splits
// tables by shape for out-of-sample evaluation (split: a hashed share of the shapes, or the
// shapes some GPUs measured), and calibrates the local GPU (run).
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include <chrono>
#include <ctime>
#include <map>
#include <set>

#include "attention_commands.h"
#include "command_support.h"
#include "family_commands.h"
#include "pm2lat/calibrate/aiconfigurator_table.h"
#include "pm2lat/calibrate/borrowed_dispatch.h"
#include "pm2lat/calibrate/csv_table.h"
#include "pm2lat/calibrate/neusight_table.h"
#include "pm2lat/calibrate/profile_builder.h"
#include "pm2lat/calibrate/scaled_gemm_fit.h"
#include "pm2lat/device_catalogue.h"
#include "pm2lat/predictor.h"
#include "pm2lat/profile_io.h"
#include "pm2lat/text.h"
#include "run_command.h"

namespace {

using namespace pm2lat;
using namespace pm2lat::calibrate;

int run_import(const std::string& format, const std::string& data, const std::string& out_dir,
               const std::string& catalogue_file, const std::string& devices,
               const std::string& source, std::string tag) {
  const DeviceCatalogue catalogue = DeviceCatalogue::load(catalogue_file);
  const CsvTable table = CsvTable::read(data);
  const bool aic = format == "aiconfigurator";
  std::vector<MeasuredCall> calls;
  if (aic) {
    AiconfiguratorReadStats st;
    calls = read_aiconfigurator_gemm(table, &st);
    fmt::print("{}: {} rows read ({} skipped: bad shape, latency or dtype)\n", data, st.rows,
               st.skipped);
    if (tag.empty()) tag = "aiconfigurator";
  } else {
    NeusightReadStats st;
    calls = read_neusight_kernels(table, &st);
    fmt::print("{}: {} rows read ({} without latency, {} bad shapes, {} unknown ops skipped)\n",
               data, st.rows, st.skipped_no_latency, st.skipped_bad_shape, st.skipped_unknown_op);
    if (tag.empty()) tag = "neusight-fp32";
  }
  const auto device_list = split_list(devices);
  const std::set<std::string> wanted(device_list.begin(), device_list.end());
  // Every GPU's rows: a table lends the dispatch it times to the GPUs whose tables cannot
  // time it (borrowed_dispatch.h), whether or not its own profile is written.
  std::map<std::string, std::vector<const MeasuredCall*>> by_device;
  std::set<std::string> to_write;
  for (const auto& c : calls) {
    const DeviceSpec* spec = catalogue.find(c.device);
    if (spec == nullptr) {
      fmt::print(stderr, "warning: {}: GPU '{}' is not in the catalogue; its rows are skipped\n",
                 data, c.device);
      continue;
    }
    by_device[spec->name].push_back(&c);
    if (wanted.empty() || wanted.contains(spec->name) || wanted.contains(c.device))
      to_write.insert(spec->name);
  }
  if (to_write.empty()) {
    fmt::print(stderr, "error: {}: no rows for the requested GPUs\n", data);
    return 1;
  }
  std::vector<TableOverheads> overheads;
  std::map<std::string, std::size_t> overheads_of;
  if (!aic) {
    for (const auto& [device, rows] : by_device) {
      overheads_of[device] = overheads.size();
      overheads.push_back(estimate_table_overheads(rows, catalogue.resolve(device)));
    }
  }
  for (const auto& [device, rows] : by_device) {
    if (!to_write.contains(device)) continue;
    BuildOptions opt;
    opt.basis = aic ? TimeBasis::kKernel : TimeBasis::kCall;
    opt.provenance.source = source;
    opt.provenance.tool = "pm2lat-calibrate import " PM2LAT_VERSION;
    opt.provenance.created = today();
    opt.provenance.notes = aic ? "Latencies time one framework linear call inside a CUDA graph "
                                 "over rotated weights (device "
                                 "time, cold L2): basis 'kernel'. The tables do not name the "
                                 "kernel: a nominal 64x64x64 "
                                 "configuration per dtype stands for the library's choice."
                               : "Latencies time one PyTorch call with CUDA events (host dispatch "
                                 "included): basis 'call'.";
    // Low-precision backends are calibrated as whole calls, each on its own; the rest by the
    // profile builder.
    std::vector<const MeasuredCall*> plain, scaled;
    for (const MeasuredCall* c : rows) (is_scaled_gemm_call(*c) ? scaled : plain).push_back(c);
    if (!scaled.empty()) {
      opt.provenance.notes +=
          " Low-precision GEMM backends (section scaled_gemm) are fitted per backend as whole "
          "calls: activation quantisation plus GEMM, and the host's time per call for backends "
          "run without a CUDA graph.";
    }
    if (!aic) {
      opt.borrowed_dispatch_us = borrowed_dispatch_us(overheads, overheads_of.at(device));
      if (!opt.borrowed_dispatch_us.empty()) {
        std::vector<std::string> ops;
        for (const auto& [op, us] : opt.borrowed_dispatch_us) ops.push_back(op);
        opt.provenance.notes += fmt::format(
            " This table does not time the host dispatch of {} (no call small enough, or an "
            "intercept at 0): it is the median of the other GPUs' tables that time it, scaled "
            "by this host's dispatch.",
            fmt::join(ops, ", "));
      }
    }
    BuildReport rep;
    const DeviceSpec& spec = catalogue.resolve(device);
    Profile p = build_profile(plain, spec, opt, &rep);
    p.graph_replay = aic;
    const std::size_t scaled_rows = append_scaled_gemm_section(scaled, spec, p);
    const std::string file = fmt::format("{}/{}.{}.json", out_dir, device, tag);
    save_profile(p, file);
    fmt::print(
        "{:<16} {:>6} GEMM rows in {:>3} configs, {:>6} low-precision GEMM rows in {:>2} "
        "backends, {:>6} vector rows in {:>3} fits, {:>5} rows of unmodelled kernels -> {}\n",
        device, rep.gemm_rows, rep.gemm_configs, scaled_rows, p.scaled_gemm_fits.size(),
        rep.vector_rows, rep.vector_fits, rep.skipped_rows, file);
  }
  return 0;
}

// The shapes the rows of these GPUs measured (names as the table spells them).
std::set<std::string> shapes_measured_on(const CsvTable& table, const std::string& devices,
                                         std::string (*shape_key)(const CsvTable&, std::size_t)) {
  const auto list = split_list(devices);
  const std::set<std::string> on(list.begin(), list.end());
  const std::size_t c_device = table.require("device");
  std::set<std::string> keys;
  for (std::size_t i = 0; i < table.rows(); ++i)
    if (on.contains(table.row(i)[c_device])) keys.insert(shape_key(table, i));
  return keys;
}

// like = "": a hashed share of the shapes is held out. like = GPUs: the shapes those GPUs
// measured are kept for training and every other shape is held out, which rebuilds a densely
// measured GPU's table as sparse as theirs; with `cut` GPUs, only their rows are cut so, and
// every other GPU's stay whole for training (what lends to them when they are imported).
struct SplitRule {
  double fraction = 0.2;
  unsigned seed = 0;
  std::string like, cut;
};

int run_split(const std::string& format, const std::string& data, const SplitRule& rule,
              const std::string& train_out, const std::string& test_out) {
  const CsvTable table = CsvTable::read(data);
  const auto shape_key = format == "aiconfigurator" ? aiconfigurator_split_key : neusight_shape_key;
  const bool by_gpus = !rule.like.empty();
  const std::set<std::string> kept =
      by_gpus ? shapes_measured_on(table, rule.like, shape_key) : std::set<std::string>{};
  if (by_gpus && kept.empty()) {
    fmt::print(stderr, "error: {}: no rows of {}\n", data, rule.like);
    return 1;
  }
  const auto cut_list = split_list(rule.cut);
  const std::set<std::string> cut(cut_list.begin(), cut_list.end());
  const std::size_t c_device = by_gpus ? table.require("device") : 0;
  std::vector<const std::vector<std::string>*> train, test;
  std::set<std::string> train_keys, test_keys;
  for (std::size_t i = 0; i < table.rows(); ++i) {
    // The same shape goes to the same side on every GPU (every GPU cut).
    const std::string key = shape_key(table, i);
    const bool held_out =
        by_gpus ? (cut.empty() || cut.contains(table.row(i)[c_device])) && !kept.contains(key)
                : in_holdout(key, rule.fraction, rule.seed);
    if (held_out) {
      test.push_back(&table.row(i));
      test_keys.insert(key);
    } else {
      train.push_back(&table.row(i));
      train_keys.insert(key);
    }
  }
  write_csv(train_out, table.header(), train);
  write_csv(test_out, table.header(), test);
  fmt::print("{}: {} rows ({} shapes) -> {}; {} rows ({} shapes) -> {}\n", data, train.size(),
             train_keys.size(), train_out, test.size(), test_keys.size(), test_out);
  return 0;
}

}  // namespace

// An error escaping the commands' own handling is a bug, and terminate's message names it.
// NOLINTNEXTLINE(bugprone-exception-escape)
int main(int argc, char** argv) {
  CLI::App app{"pm2lat-calibrate: build device profiles for the pm2lat latency predictor"};
  app.require_subcommand(1);
  std::string data, out_dir = Predictor::default_profile_dir().string(), devices,
                    catalogue = (Predictor::default_profile_dir() / "devices.json").string(),
                    source = "sitar-lab/NeuSight kernel measurements (MIT)", tag,
                    format = "neusight";
  auto* imp = app.add_subcommand("import", "Build profiles from a measurement table");
  imp->add_option("--format", format, "table format")
      ->check(CLI::IsMember({"neusight", "aiconfigurator"}))
      ->capture_default_str();
  imp->add_option("--data", data, "kernel table (.csv or .csv.gz)")
      ->required()
      ->check(CLI::ExistingFile);
  imp->add_option("--out", out_dir, "directory for the profiles");
  imp->add_option("--devices", devices,
                  "comma-separated GPUs to import (default: all in the table)");
  imp->add_option("--catalogue", catalogue, "device catalogue JSON");
  imp->add_option("--source", source, "provenance text recorded in the profiles");
  imp->add_option("--tag", tag, "profile file tag: <device>.<tag>.json (default: by format)");

  SplitRule rule;
  std::string train_out, test_out;
  auto* spl =
      app.add_subcommand("split", "Split a kernel table by shape into train and test files");
  spl->add_option("--data", data, "kernel table (.csv or .csv.gz)")
      ->required()
      ->check(CLI::ExistingFile);
  spl->add_option("--format", format, "table format")
      ->check(CLI::IsMember({"neusight", "aiconfigurator"}))
      ->capture_default_str();
  auto* fraction_option =
      spl->add_option("--fraction", rule.fraction, "share of shapes in the test file")
          ->check(CLI::Range(0.0, 1.0));
  spl->add_option("--seed", rule.seed, "hash seed");
  auto* like_option =
      spl->add_option("--like", rule.like,
                      "comma-separated GPUs: keep for training only the shapes they measured "
                      "(instead of --fraction)")
          ->excludes(fraction_option);
  spl->add_option("--cut", rule.cut,
                  "with --like: cut only these GPUs' rows (as the table names them); the other "
                  "GPUs' rows all go to the training file")
      ->needs(like_option);
  spl->add_option("--train", train_out, "train output (.csv or .csv.gz)")->required();
  spl->add_option("--test", test_out, "test output (.csv or .csv.gz)")->required();

  pm2lat::calibrate::add_attention_commands(app);
  pm2lat::calibrate::add_family_commands(app);
  pm2lat::calibrate::add_run_command(app);

  CLI11_PARSE(app, argc, argv);
  try {
    if (imp->parsed()) return run_import(format, data, out_dir, catalogue, devices, source, tag);
    if (spl->parsed()) return run_split(format, data, rule, train_out, test_out);
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
  return 0;
}
