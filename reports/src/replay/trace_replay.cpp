#include "pm2lat/reports/replay/trace_replay.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "pm2lat/device_catalogue.h"
#include "pm2lat/reports/eval/progress_bar.h"
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
}  // namespace

void predict_records(const RunPredictor& predictor, const std::vector<KernelRecord>& records,
                     const std::vector<const KernelClass*>& classes, const DeviceSpec* source,
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
  out.device = !options.gpu.empty() ? options.gpu : records.gpu;
  if (out.device.empty()) {
    std::vector<std::string> names;
    for (std::size_t i = 0; i < trace.strings.size(); ++i)
      names.push_back(trace.strings[static_cast<std::uint32_t>(i)]);
    InferredTraceGpu inferred = infer_trace_gpu(predictor, names, records.records, records.classes);
    out.device = std::move(inferred.device);
    if (!inferred.note.empty()) out.notes.push_back(std::move(inferred.note));
  }
  const DeviceSpec* source = nullptr;  // the trace's GPU, resolved once
  if (!out.device.empty()) {
    // A name the catalogue does not list: the same model's entry, else the GPU of the same
    // compute capability nearest in SMs the trace's device properties point to (not for a
    // name given with --gpu: the properties describe the GPU the trace names), said so.
    const GpuHardware hardware = options.gpu.empty() ? records.gpu_hardware : GpuHardware{};
    const StandIn stand_in = predictor.catalogue().stand_in(out.device, hardware);
    source = stand_in.spec;
    if (std::string note = stand_in.note(out.device, hardware); !note.empty())
      out.notes.push_back(std::move(note));
    if (source != nullptr) {
      out.gpu = source->name;
      const std::size_t own = run_predictor.add_target(*source);
      out.own_spec_scaled = run_predictor.spec_scaled(own);
      if (out.own_spec_scaled) {
        const DeviceSpec* from = run_predictor.targets().target(own).profile_spec;
        out.notes.push_back(
            "no profile for " + out.gpu + ": predictions spec-scaled" +
            (from != nullptr ? " from " + from->name : std::string(" (roofline only)")));
      }
    }
  } else {
    out.notes.push_back(
        "the trace does not say which GPU it ran on: no accuracy (give one with --gpu)");
  }

  RankInfo rank;
  rank.rank = records.rank;
  rank.gpu = out.gpu;
  rank.source = out.trace;
  rank.spec_scaled = out.own_spec_scaled;
  rank.timer_resolution_us = trace.whole_us_timestamps ? kWholeMicrosecond : 0.0;
  out.table.add_rank(std::move(rank));
  run_predictor.add_columns(out.table);
  predict_records(run_predictor, records.records, records.classes, source, 0, out.table,
                  options.progress);
  out.summary = summarize(out.table);
  if (options.keep_records) out.records = std::move(records.records);
  return out;
}

void write_replay_records(const TraceReplay& r, const std::filesystem::path& file) {
  RecordsHeader h;
  h.gpu = r.gpu;
  h.targets = r.table.targets();
  h.rank = r.table.ranks().empty() ? 0 : r.table.ranks().front().rank;
  h.command = "pm2lat replay " + r.trace;
  std::vector<PredictedRecord> out;
  out.reserve(r.records.size());
  KernelClassCache classes;
  for (std::size_t i = 0; i < r.records.size() && i < r.table.size(); ++i) {
    PredictedRecord pr;
    pr.record = r.records[i];
    pr.rank = h.rank;
    pr.gpu = r.gpu;
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
  write_records_file(file, h, out);
}

}  // namespace pm2lat::reports
