#include "attention_commands.h"

#include <fmt/core.h>

#include <chrono>
#include <ctime>
#include <map>
#include <memory>
#include <set>

#include "command_support.h"
#include "pm2lat/calibrate/attention_fit.h"
#include "pm2lat/calibrate/attention_table.h"
#include "pm2lat/calibrate/csv_table.h"
#include "pm2lat/calibrate/neusight_table.h"
#include "pm2lat/device_catalogue.h"
#include "pm2lat/predictor.h"
#include "pm2lat/profile_io.h"

namespace pm2lat::calibrate {
namespace {

struct ImportOptions {
  std::string data, out_dir, catalogue,
      tag = "aiconfigurator-attention",
      source = "ai-dynamo/aiconfigurator silicon database attention tables (Apache-2.0)";
};

int run_import(const ImportOptions& o) {
  const DeviceCatalogue catalogue = DeviceCatalogue::load(o.catalogue);
  const CsvTable table = CsvTable::read(o.data);
  AttentionReadStats stats;
  const auto rows = read_attention_table(table, &stats);
  std::map<std::string, std::vector<const AttentionMeasurement*>> by_device;
  std::set<std::string> unknown;
  for (const auto& m : rows) {
    const DeviceSpec* spec = catalogue.find(m.system);
    if (spec == nullptr) {
      unknown.insert(m.system);
      continue;
    }
    by_device[spec->name].push_back(&m);
  }
  for (const auto& u : unknown)
    fmt::print(stderr, "warning: {}: GPU '{}' is not in the catalogue; its rows are skipped\n",
               o.data, u);
  fmt::print("{}: {} rows read ({} bad shapes, {} unknown backends skipped)\n", o.data, stats.rows,
             stats.skipped_bad_shape, stats.skipped_unknown_backend);
  if (by_device.empty()) {
    fmt::print(stderr, "error: {}: no rows for GPUs in the catalogue\n", o.data);
    return 1;
  }
  for (const auto& [device, list] : by_device) {
    Profile p;
    p.device = device;
    p.basis = TimeBasis::kKernel;
    p.graph_replay = true;  // calls captured in a CUDA graph and replayed
    p.provenance.source = o.source;
    p.provenance.tool = "pm2lat-calibrate import-attention";
    p.provenance.created = today();
    p.provenance.notes =
        "One attention call per row timed inside a CUDA graph (device time; the call may include "
        "the "
        "KV-cache write): basis 'kernel'.";
    AttentionBuildReport rep;
    build_attention_section(list, catalogue.resolve(device), p, &rep);
    const std::string file = o.out_dir + "/" + device + "." + o.tag + ".json";
    save_profile(p, file);
    fmt::print("{:<20} {:>6} rows in {:>3} attention configs, fit MAPE {:5.1f} % -> {}\n", device,
               rep.rows, rep.configs, rep.fit_mape_pct, file);
  }
  return 0;
}

struct SplitOptions {
  std::string data, train, test;
  double fraction = 0.2;
  unsigned seed = 0;
};

int run_split(const SplitOptions& o) {
  const CsvTable table = CsvTable::read(o.data);
  std::vector<const std::vector<std::string>*> train, test;
  std::set<std::string> train_keys, test_keys;
  for (std::size_t i = 0; i < table.rows(); ++i) {
    // The same shape goes to the same side on every system and backend.
    const std::string key = attention_shape_key(table, i);
    if (in_holdout(key, o.fraction, o.seed)) {
      test.push_back(&table.row(i));
      test_keys.insert(key);
    } else {
      train.push_back(&table.row(i));
      train_keys.insert(key);
    }
  }
  write_csv(o.train, table.header(), train);
  write_csv(o.test, table.header(), test);
  fmt::print("{}: {} rows ({} shapes) -> {}; {} rows ({} shapes) -> {}\n", o.data, train.size(),
             train_keys.size(), o.train, test.size(), test_keys.size(), o.test);
  return 0;
}

}  // namespace

void add_attention_commands(CLI::App& app) {
  auto io = std::make_shared<ImportOptions>();
  io->out_dir = Predictor::default_profile_dir().string();
  io->catalogue = (Predictor::default_profile_dir() / "devices.json").string();
  auto* imp = app.add_subcommand("import-attention",
                                 "Build attention profiles from an AIConfigurator attention table");
  imp->add_option("--data", io->data, "attention table (.csv or .csv.gz)")
      ->required()
      ->check(CLI::ExistingFile);
  imp->add_option("--out", io->out_dir, "directory for the profiles");
  imp->add_option("--catalogue", io->catalogue, "device catalogue JSON");
  imp->add_option("--source", io->source, "provenance text recorded in the profiles");
  imp->add_option("--tag", io->tag, "profile file tag: <device>.<tag>.json")->capture_default_str();
  imp->callback([io]() { run_or_exit([&] { return run_import(*io); }); });

  auto so = std::make_shared<SplitOptions>();
  auto* spl = app.add_subcommand("split-attention",
                                 "Split an attention table by shape into train and test files");
  spl->add_option("--data", so->data, "attention table (.csv or .csv.gz)")
      ->required()
      ->check(CLI::ExistingFile);
  spl->add_option("--fraction", so->fraction, "share of shapes in the test file")
      ->check(CLI::Range(0.0, 1.0));
  spl->add_option("--seed", so->seed, "hash seed");
  spl->add_option("--train", so->train, "train output (.csv or .csv.gz)")->required();
  spl->add_option("--test", so->test, "test output (.csv or .csv.gz)")->required();
  spl->callback([so]() { run_or_exit([&] { return run_split(*so); }); });
}

}  // namespace pm2lat::calibrate
