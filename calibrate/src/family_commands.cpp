#include "family_commands.h"

#include <fmt/core.h>

#include <algorithm>
#include <ctime>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "command_support.h"
#include "pm2lat/calibrate/csv_table.h"
#include "pm2lat/calibrate/graph_offset.h"
#include "pm2lat/calibrate/kernel_family_fit.h"
#include "pm2lat/calibrate/neusight_table.h"
#include "pm2lat/calibrate/profile_builder.h"
#include "pm2lat/device_catalogue.h"
#include "pm2lat/models/roofline_model.h"
#include "pm2lat/predictor.h"
#include "pm2lat/profile_io.h"
#include "pm2lat/record_jsonl.h"

namespace pm2lat::calibrate {
namespace {

struct Options {
  std::vector<std::string> inputs;
  std::string data, out_dir, catalogue, tag, source, devices;
};

// A predictor over the graph-timed profiles of `dir` (nullptr when there are none).
std::unique_ptr<Predictor> graph_table_predictor(const std::string& dir,
                                                 const std::string& catalogue_file) {
  std::vector<Profile> graph;
  for (Profile& p : load_profiles(dir)) {
    if (p.graph_replay) graph.push_back(std::move(p));
  }
  if (graph.empty()) return nullptr;
  return std::make_unique<Predictor>(DeviceCatalogue::load(catalogue_file), std::move(graph));
}

int run_import_records(const Options& o) {
  const DeviceCatalogue catalogue = DeviceCatalogue::load(o.catalogue);
  std::vector<KernelRecord> records;
  std::vector<std::string> gpus;
  for (const auto& file : o.inputs) {
    std::istringstream in(read_maybe_gzipped(file));
    std::string line;
    RecordsHeader header;
    std::size_t n = 0;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      const std::string where = file + ":" + std::to_string(++n);
      if (n == 1) {
        header = header_from_jsonl(line, where);
        continue;
      }
      PredictedRecord r = record_from_jsonl(line, where);
      if (!r.record.measured_us || r.record.basis != TimeBasis::kKernel) continue;
      gpus.push_back(r.gpu.empty() ? header.gpu : r.gpu);
      records.push_back(std::move(r.record));
    }
  }
  std::map<std::string, std::vector<const KernelRecord*>> by_device;
  std::set<std::string> unknown;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const DeviceSpec* spec = catalogue.find(gpus[i]);
    if (spec == nullptr) {
      unknown.insert(gpus[i]);
      continue;
    }
    by_device[spec->name].push_back(&records[i]);
  }
  for (const auto& u : unknown)
    fmt::print(stderr, "warning: records of GPU '{}' skipped: not in the catalogue\n", u);
  if (by_device.empty()) {
    fmt::print(stderr, "error: no measured kernel records of a catalogued GPU\n");
    return 1;
  }
  std::vector<SpecRecord> pooled;
  for (const auto& [device, list] : by_device) {
    for (const auto* r : list) pooled.emplace_back(r, &catalogue.resolve(device));
  }
  const std::unique_ptr<Predictor> graph_tables = graph_table_predictor(o.out_dir, o.catalogue);
  for (const auto& [device, list] : by_device) {
    Profile p;
    p.device = device;
    p.basis = TimeBasis::kKernel;
    if (graph_tables)
      p.graph_kernel_offset_us =
          graph_kernel_offset_us(*graph_tables, catalogue.resolve(device), list);
    p.provenance.source = o.source;
    p.provenance.tool = "pm2lat-calibrate import-records";
    p.provenance.created = today();
    p.provenance.notes = "Kernel durations (CUPTI) of real runs: basis 'kernel'.";
    FamilyBuildReport rep;
    build_family_section(list, catalogue.resolve(device), p, &rep, &pooled);
    build_conv_section(list, catalogue.resolve(device), p, nullptr, &rep);
    // GEMM kernels with their shapes calibrate their own configurations (real kernel names).
    std::vector<MeasuredCall> gemm_calls;
    for (const KernelRecord* r : list) {
      if (r->op.kind != OpKind::kGemm || !r->op.gemm.valid()) continue;
      MeasuredCall c;
      c.device = device;
      c.op = op_key(r->op);
      c.record = *r;
      gemm_calls.push_back(std::move(c));
    }
    std::vector<const MeasuredCall*> gemm_ptrs;
    for (const auto& c : gemm_calls) gemm_ptrs.push_back(&c);
    BuildReport gemm_rep;
    append_gemm_section(gemm_ptrs, catalogue.resolve(device), p, &gemm_rep);
    const std::string file = o.out_dir + "/" + device + "." + o.tag + ".json";
    save_profile(p, file);
    fmt::print(
        "{:<16} {:>6} family kernels in {:>3} fits, {:>4} conv kernels in {} configs + {} classes, "
        "{:>4} GEMM kernels in {} configs, graph-to-isolated offset {:.2f} us -> {}\n",
        device, rep.family_kernels, rep.family_fits, rep.conv_kernels, rep.conv_configs,
        rep.conv_classes, gemm_rep.gemm_rows, gemm_rep.gemm_configs, p.graph_kernel_offset_us,
        file);
  }
  return 0;
}

int run_import_conv(const Options& o) {
  const DeviceCatalogue catalogue = DeviceCatalogue::load(o.catalogue);
  const auto calls = read_neusight_kernels(CsvTable::read(o.data));
  std::map<std::string, std::vector<const KernelRecord*>> by_device;
  std::map<std::string, std::vector<double>> all_latencies;  // every op of the GPU: the host floor
  for (const auto& c : calls) {
    const DeviceSpec* spec = catalogue.find(c.device);
    if (spec == nullptr) continue;
    all_latencies[spec->name].push_back(*c.record.measured_us);
    if (c.op == "conv") by_device[spec->name].push_back(&c.record);
  }
  if (by_device.empty()) {
    fmt::print(stderr, "error: {}: no conv rows of a catalogued GPU\n", o.data);
    return 1;
  }
  for (const auto& [device, list] : by_device) {
    // The dispatch floor of a PyTorch call on this GPU: the fastest calls of any operator
    // (the conv rows alone floor at their smallest convolution, not at the host).
    CallOverhead call;
    call.floor_us = latency_floor(all_latencies[device]);
    call.pre_us = std::max(0.0, call.floor_us - kMinimumKernelUs);
    Profile p;
    p.device = device;
    p.basis = TimeBasis::kCall;
    p.provenance.source = o.source;
    p.provenance.tool = "pm2lat-calibrate import-conv";
    p.provenance.created = today();
    p.provenance.notes =
        "Conv2d calls timed with CUDA events (host dispatch included): basis 'call'.";
    FamilyBuildReport rep;
    build_conv_section(list, catalogue.resolve(device), p, &call, &rep);
    const std::string file = o.out_dir + "/" + device + "." + o.tag + ".json";
    save_profile(p, file);
    fmt::print("{:<16} {:>6} conv calls in {:>3} configs (floor {:.1f} us) -> {}\n", device,
               rep.conv_kernels, rep.conv_configs, call.floor_us, file);
  }
  return 0;
}

void common_options(CLI::App* cmd, Options& o) {
  cmd->add_option("--out", o.out_dir, "directory for the profiles");
  cmd->add_option("--catalogue", o.catalogue, "device catalogue JSON");
  cmd->add_option("--source", o.source, "provenance text recorded in the profiles");
  cmd->add_option("--tag", o.tag, "profile file tag: <device>.<tag>.json")->capture_default_str();
}

}  // namespace

void add_family_commands(CLI::App& app) {
  const std::string dir = Predictor::default_profile_dir().string();
  auto ro = std::make_shared<Options>();
  ro->out_dir = dir;
  ro->catalogue = dir + "/devices.json";
  ro->tag = "traces-kernel";
  ro->source = "kernel records of replayed profiler traces";
  auto* rec = app.add_subcommand("import-records",
                                 "Build kernel-family and convolution fits from measured kernel "
                                 "records (pm2lat replay --out)");
  rec->add_option("records", ro->inputs, "records files (.jsonl or .jsonl.gz)")
      ->required()
      ->check(CLI::ExistingFile);
  common_options(rec, *ro);
  rec->callback([ro]() { run_or_exit([&] { return run_import_records(*ro); }); });

  auto co = std::make_shared<Options>();
  co->out_dir = dir;
  co->catalogue = dir + "/devices.json";
  co->tag = "neusight-conv";
  co->source = "sitar-lab/NeuSight kernel measurements, conv rows (MIT)";
  auto* conv = app.add_subcommand(
      "import-conv", "Build convolution fits from a NeuSight-format table's conv rows");
  conv->add_option("--data", co->data, "kernel table (.csv or .csv.gz)")
      ->required()
      ->check(CLI::ExistingFile);
  common_options(conv, *co);
  conv->callback([co]() { run_or_exit([&] { return run_import_conv(*co); }); });
}

}  // namespace pm2lat::calibrate
