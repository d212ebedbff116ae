#include "pm2lat/reports/replay/trace_replay.h"

#include <algorithm>
#include <cmath>
#include <span>
#include <string>
#include <utility>

#include "pm2lat/device_catalogue.h"
#include "pm2lat/reports/eval/progress_bar.h"
#include "pm2lat/reports/gpu_transfers.h"
#include "pm2lat/reports/input_file.h"
#include "pm2lat/reports/records_file.h"
#include "pm2lat/reports/replay/gpu_inference.h"
#include "pm2lat/reports/replay/kineto_trace.h"
#include "pm2lat/reports/replay/trace_records.h"
#include "pm2lat/reports/run_predictor.h"

namespace pm2lat::reports {
namespace {
// A duration from two whole-microsecond timestamps (each cut to its microsecond) is the true
// one to within 1 µs either way.
constexpr double kWholeMicrosecond = 1.0;

// A GPU the trace names, as replay scores it: the catalogue's entry, or the one that stands in
// for a name the catalogue does not list (said in a note), added as a target; nullptr when
// nothing stands in.
struct ScoredGpu {
  const DeviceSpec* spec = nullptr;
  bool spec_scaled = false;
};

ScoredGpu score_as(RunPredictor& run_predictor, const DeviceCatalogue& catalogue,
                   const std::string& name, GpuHardware hardware, std::vector<std::string>& notes) {
  ScoredGpu g;
  const StandIn stand_in = catalogue.stand_in(name, hardware);
  g.spec = stand_in.spec;
  if (std::string note = stand_in.note(name, hardware); !note.empty())
    notes.push_back(std::move(note));
  if (g.spec == nullptr) return g;
  const std::size_t own = run_predictor.add_target(*g.spec);
  g.spec_scaled = run_predictor.spec_scaled(own);
  if (g.spec_scaled) {
    const DeviceSpec* from = run_predictor.targets().target(own).profile_spec;
    notes.push_back("no profile for " + g.spec->name + ": predictions spec-scaled" +
                    (from != nullptr ? " from " + from->name : std::string(" (roofline only)")));
  }
  return g;
}

// Kernels that ran on a GPU of another model than the trace's first kernel did (one process
// driving GPUs of different models), by model in order of appearance. Empty when every kernel
// ran on one model, or on a device the trace does not describe.
struct OtherModel {
  std::string name;
  GpuHardware hardware;
  std::vector<std::size_t> records;  // indices into TraceRecords::records
};

std::vector<OtherModel> kernels_on_other_models(const KinetoTrace& trace,
                                                const TraceRecords& records) {
  std::vector<OtherModel> others;
  for (std::size_t i = 0; i < records.records.size(); ++i) {
    const TraceDevice* dev = trace.device(records.records[i].device);
    if (dev == nullptr || dev->name == records.gpu) continue;
    auto it = std::find_if(others.begin(), others.end(),
                           [&](const OtherModel& m) { return m.name == dev->name; });
    if (it == others.end()) {
      others.push_back({dev->name, {dev->cc_major, dev->cc_minor, dev->sm_count}, {}});
      it = others.end() - 1;
    }
    it->records.push_back(i);
  }
  return others;
}

// `records` and `classes` reordered so that the first model's kernels come first, then each
// other model's: each model's kernels are one rank's rows of the table. Returns how many
// kernels each rank has, the first model's first.
std::vector<std::size_t> group_by_model(TraceRecords& records,
                                        const std::vector<OtherModel>& others) {
  std::vector<bool> other(records.records.size(), false);
  for (const OtherModel& m : others)
    for (std::size_t i : m.records) other[i] = true;
  std::vector<std::size_t> order;
  order.reserve(records.records.size());
  for (std::size_t i = 0; i < records.records.size(); ++i)
    if (!other[i]) order.push_back(i);
  for (const OtherModel& m : others) order.insert(order.end(), m.records.begin(), m.records.end());
  std::vector<KernelRecord> by_model;
  std::vector<const KernelClass*> classes;
  by_model.reserve(order.size());
  classes.reserve(order.size());
  for (std::size_t i : order) {
    by_model.push_back(std::move(records.records[i]));
    classes.push_back(records.classes[i]);
  }
  std::vector<std::size_t> per_rank = {records.records.size()};
  for (const OtherModel& m : others) {
    per_rank.front() -= m.records.size();
    per_rank.push_back(m.records.size());
  }
  records.records = std::move(by_model);
  records.classes = std::move(classes);
  return per_rank;
}

// "records.run.jsonl" -> "records.run.<gpu>.jsonl": the records file of a trace's other rank k
// (k >= 1). "<gpu>-<k>" when an earlier other rank has the same GPU (two models that stand in
// as one catalogue entry), "device<k>" when nothing stands in: no two ranks share a file.
std::filesystem::path rank_records_file(const std::filesystem::path& file,
                                        const std::vector<RankInfo>& ranks, std::size_t k) {
  const std::string& gpu = ranks[k].gpu;
  const bool taken = std::any_of(ranks.begin() + 1, ranks.begin() + static_cast<std::ptrdiff_t>(k),
                                 [&](const RankInfo& r) { return r.gpu == gpu; });
  std::string tag = gpu.empty() ? "device" + std::to_string(k)
                    : taken     ? gpu + "-" + std::to_string(k)
                                : gpu;
  for (char& c : tag) {
    const bool keep = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '_';
    if (!keep) c = '_';
  }
  return std::filesystem::path(file).replace_extension("." + tag + ".jsonl");
}
}  // namespace

void predict_records(const RunPredictor& predictor, std::span<const KernelRecord> records,
                     std::span<const KernelClass* const> classes, const DeviceSpec* source,
                     std::size_t rank_index, RunTable& table, ProgressBar* progress) {
  table.reserve(table.size() + records.size());
  if (progress != nullptr) progress->stage("predicting", records.size());
  for (std::size_t i = 0; i < records.size(); ++i) {
    const KernelRecord& r = records[i];
    const KernelClass& cls = *classes[i];
    const std::size_t row =
        table.add_kernel(r.launch.name, cls.family, rank_index, r.stream, r.ts_ns, r.measured_us);
    predictor.predict(r, cls, source, table, row);
    if (progress != nullptr && (i & 0xFFF) == 0) progress->update(i);
  }
  if (progress != nullptr) progress->finish();
}

TraceReplay replay_trace(const std::filesystem::path& file, Predictor& predictor,
                         const ReplayOptions& options) {
  RunPredictor run_predictor(predictor, options.targets);  // unknown targets fail before any work
  KinetoTrace trace = read_kineto_trace(file, options.progress);
  KernelClassCache classes;
  TraceRecords records = records_from_trace(trace, classes);

  TraceReplay out;
  out.trace = file.filename().string();
  out.linked = records.linked;
  out.with_shape = records.with_shape;
  out.from_geometry = records.from_geometry;
  out.work_rejected = records.work_rejected;
  if (trace.skipped_kernels > 0) {
    out.notes.push_back(std::to_string(trace.skipped_kernels) +
                        " kernel event(s) not replayed: no start time, or a duration missing, "
                        "negative or not finite");
  }
  if (trace.transfers.any()) {
    double kernel_us = 0;
    for (const TraceKernel& k : trace.kernels) kernel_us += k.dur_us;
    out.notes.push_back(
        transfers_note(trace.transfers, kernel_us, "the GPU time the trace's events add up to"));
  }
  out.device = !options.gpu.empty() ? options.gpu : records.gpu;
  if (out.device.empty()) {
    std::vector<std::string> names;
    for (std::size_t i = 0; i < trace.strings.size(); ++i)
      names.push_back(trace.strings[static_cast<std::uint32_t>(i)]);
    InferredTraceGpu inferred = infer_trace_gpu(predictor, names, records.records, records.classes);
    out.device = std::move(inferred.device);
    if (!inferred.note.empty()) out.notes.push_back(std::move(inferred.note));
  }
  // A process that drove GPUs of different models: each model's kernels are scored against
  // their own GPU, as a rank of their own (not with --gpu, which names one GPU for all).
  const std::vector<OtherModel> others =
      options.gpu.empty() ? kernels_on_other_models(trace, records) : std::vector<OtherModel>{};
  const DeviceSpec* source = nullptr;  // the trace's GPU, resolved once
  if (!out.device.empty()) {
    // A name the catalogue does not list: the same model's entry, else the GPU of the same
    // compute capability nearest in SMs the trace's device properties point to (not for a
    // name given with --gpu: the properties describe the GPU the trace names), said so.
    const GpuHardware hardware = options.gpu.empty() ? records.gpu_hardware : GpuHardware{};
    const ScoredGpu own =
        score_as(run_predictor, predictor.catalogue(), out.device, hardware, out.notes);
    source = own.spec;
    if (source != nullptr) out.gpu = source->name;
    out.own_spec_scaled = own.spec_scaled;
  } else {
    out.notes.push_back(
        "the trace does not say which GPU it ran on: no accuracy (give one with --gpu)");
  }
  // Kernels per rank: all of them on the first model's unless others ran some.
  std::vector<std::size_t> per_rank = {records.records.size()};
  std::vector<ScoredGpu> other_gpus;
  other_gpus.reserve(others.size());
  for (const OtherModel& m : others)
    other_gpus.push_back(
        score_as(run_predictor, predictor.catalogue(), m.name, m.hardware, out.notes));
  if (!others.empty()) {
    std::string counts;
    for (const OtherModel& m : others)
      counts += ", " + std::to_string(m.records.size()) + " on " + m.name;
    out.notes.push_back("kernels ran on GPUs of " + std::to_string(others.size() + 1) +
                        " models (" + counts.substr(2) + ", the rest on " + out.device +
                        "): each is scored against its own GPU, as a rank of its own");
    per_rank = group_by_model(records, others);
  }

  RankInfo rank;
  rank.rank = records.rank;
  rank.gpu = out.gpu;
  rank.source = out.trace;
  rank.spec_scaled = out.own_spec_scaled;
  rank.timer_resolution_us = trace.whole_us_timestamps ? kWholeMicrosecond : 0.0;
  out.table.add_rank(rank);
  for (std::size_t k = 0; k < others.size(); ++k) {
    RankInfo other = rank;
    other.gpu = other_gpus[k].spec != nullptr ? other_gpus[k].spec->name : std::string();
    other.source = out.trace + " (" + others[k].name + ")";
    other.spec_scaled = other_gpus[k].spec_scaled;
    out.table.add_rank(std::move(other));
  }
  run_predictor.add_columns(out.table);
  // Each model's kernels (group_by_model: the first model's, then each other's) as its rank.
  const std::span<const KernelRecord> all(records.records);
  const std::span<const KernelClass* const> all_classes(records.classes);
  std::size_t first = 0;
  for (std::size_t k = 0; k < per_rank.size(); ++k) {
    const DeviceSpec* ran_on = k == 0 ? source : other_gpus[k - 1].spec;
    predict_records(run_predictor, all.subspan(first, per_rank[k]),
                    all_classes.subspan(first, per_rank[k]), ran_on, k, out.table,
                    options.progress);
    first += per_rank[k];
  }
  out.summary = summarize(out.table);
  if (options.keep_records) out.records = std::move(records.records);
  return out;
}

void write_replay_records(const TraceReplay& r, const std::filesystem::path& file) {
  // One file per rank, each headed by the GPU its kernels ran on (a trace of GPUs of several
  // models has a rank per model), which is what reading the file back scores them on.
  KernelClassCache classes;
  const auto& ranks = r.table.ranks();
  for (std::size_t k = 0; k < std::max<std::size_t>(1, ranks.size()); ++k) {
    RecordsHeader h;
    h.gpu = k < ranks.size() ? ranks[k].gpu : r.gpu;
    h.targets = r.table.targets();
    h.rank = k < ranks.size() ? ranks[k].rank : 0;
    h.command = "pm2lat replay " + r.trace;
    std::vector<PredictedRecord> out;
    out.reserve(r.records.size());
    for (std::size_t i = 0; i < r.records.size() && i < r.table.size(); ++i) {
      if (static_cast<std::size_t>(r.table.kernels()[i].rank_index) != k) continue;
      PredictedRecord pr;
      pr.record = r.records[i];
      pr.rank = h.rank;
      pr.gpu = h.gpu;
      pr.family = r.table.kernels()[i].family;
      pr.config = classes.classify(pr.record.launch.name).config;
      for (std::size_t t = 0; t < r.table.targets().size(); ++t) {
        const double us = r.table.predicted_us(i, t);
        if (std::isnan(us)) continue;
        Prediction p;
        p.us = us;
        p.model = r.table.model(i, t);
        p.flags = r.table.flags(i, t);
        p.band_pct = r.table.band_pct(i, t);
        pr.predictions.emplace_back(r.table.targets()[t], p);
      }
      out.push_back(std::move(pr));
    }
    write_records_file(k == 0 ? file : rank_records_file(file, ranks, k), h, out);
  }
}

}  // namespace pm2lat::reports
