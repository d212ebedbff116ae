#include "collect/record_sink.h"

#include <malloc.h>

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>

#include "collect/run_contained.h"
#include "diagnostics.h"
#include "launch_path/clock.h"
#include "launch_path/handle_cache.h"
#include "launch_path/thread_state.h"
#include "pm2lat/hash.h"
#include "pm2lat/measured_guard.h"
#include "pm2lat/text.h"

namespace pm2lat::shim {

namespace {

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}

// What a prediction depends on: the kernel, its geometry, its library call, its arguments.
// `gpu`: the GPU the record ran on (its predictions' source), so that devices of one model
// share their predictions and devices of two models do not.
std::uint64_t prediction_key(const KernelRecord& r, std::uint32_t name_id, std::string_view gpu) {
  std::uint64_t h = mix(kFnvOffsetBasis, name_id);
  for (auto d : {r.launch.grid, r.launch.block, r.launch.cluster}) {
    h = mix(h, d.x);
    h = mix(h, d.y);
    h = mix(h, d.z);
  }
  h = mix(h, r.launch.shared_mem_bytes);
  h = mix(h, r.launch.registers_per_thread);
  h = mix(h, static_cast<std::uint64_t>(r.op.kind));
  if (r.op.kind == OpKind::kGemm) h = fnv1a_value(r.op.gemm, h);
  // A convolution's fields, not its trailing padding (whose bytes are unspecified, so equal
  // shapes could key apart).
  if (r.op.kind == OpKind::kConv) {
    h = fnv1a(reinterpret_cast<const unsigned char*>(&r.op.conv),
              offsetof(ConvShape, dtype) + sizeof(r.op.conv.dtype), h);
  }
  for (std::int64_t a : r.launch.int_args) h = mix(h, static_cast<std::uint64_t>(a));
  return fnv1a(gpu, h);
}

}  // namespace

RecordSink::RecordSink(SinkSetup setup) : setup_(std::move(setup)), accuracy_(setup_.drift_pct) {}

RecordSink::~RecordSink() {
  if (loader_.joinable()) loader_.detach();
  if (records_ != nullptr) std::fclose(records_);
}

void RecordSink::start_loading_profiles() {
  // Loading the profiles takes from a fraction of a second to seconds; the rings and CUPTI's
  // buffers are drained meanwhile and the records made wait (bounded) for predictions.
  // No thread to be had (the process's limit) is a load that failed, not an error to throw.
  run_contained([this] { start_loader(); },
                [this](const char* what) noexcept { note_load_failure(what); });
}

void RecordSink::start_loader() {
  loader_ = std::thread([this] {
    thread_state().internal = true;
    sigset_t mask;
    sigfillset(&mask);
    pthread_sigmask(SIG_BLOCK, &mask, nullptr);
    // A load that fails in a way the adapter does not report itself (out of memory) ends in
    // no predictions, not in the end of the program.
    run_contained(
        [this] {
          auto* p = new PredictorAdapter(setup_.targets, setup_.devices, &load_problems_);
          // Loading freed about as much as the predictor keeps (each table of points, each
          // profile's text): give the pages of those holes back rather than keep them.
          malloc_trim(0);
          loaded_.store(p, std::memory_order_release);
        },
        [this](const char* what) noexcept { note_load_failure(what); });
  });
}

void RecordSink::note_load_failure(const char* what) noexcept {
  try {
    load_problems_.push_back(std::string("cannot load the GPU profiles (") + what +
                             "); no predictions will be made");
  } catch (...) {  // NOLINT(bugprone-empty-catch): the failure itself is still marked below
  }
  load_failed_.store(true, std::memory_order_release);
}

bool RecordSink::load_ended() const noexcept {
  return loaded_.load(std::memory_order_acquire) != nullptr ||
         load_failed_.load(std::memory_order_acquire);
}

void RecordSink::adopt_profiles() {
  if (predictor_ != nullptr) return;
  if (load_failed_.load(std::memory_order_acquire)) {
    if (gave_up_) return;  // said already, or the exit gave up on the load first
    if (loader_.joinable()) loader_.join();
    for (const auto& msg : load_problems_) Diagnostics::instance().warn_once(msg, msg);
    gave_up_ = true;  // records go out without predictions, from now on
    open_records_file();
    return;
  }
  PredictorAdapter* p = loaded_.load(std::memory_order_acquire);
  if (p == nullptr) return;
  if (loader_.joinable()) loader_.join();
  predictor_.reset(p);
  for (const auto& msg : load_problems_) Diagnostics::instance().warn_once(msg, msg);
  summary_.set_source(join_list(predictor_->device_models()));
  open_records_file();
}

void RecordSink::settle_profiles(std::uint64_t deadline_ns) {
  while (deadline_ns != 0 && !load_ended() && monotonic_ns() < deadline_ns) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (deadline_ns == 0 || load_ended()) {
    if (loader_.joinable()) loader_.join();
    adopt_profiles();
    return;
  }
  // The process is ending (a signal, or an exit while the profiles still load) before the
  // profiles loaded: the records go out without predictions. The loader is left to the end
  // of the process.
  if (loader_.joinable()) loader_.detach();
  Diagnostics::instance().warn_once("profiles-late",
                                    "the program ended before the profiles loaded: records "
                                    "are written without predictions");
  gave_up_ = true;
  open_records_file();
}

void RecordSink::add(BuiltRecord& record) {
  adopt_profiles();
  finish(record);
}

const RecordSink::Predicted& RecordSink::predict(const BuiltRecord& b) {
  static const Predicted kNone;
  if (predictor_ == nullptr || !predictor_->available()) return kNone;
  // Training loops repeat the same launches: predict each distinct one once.
  const std::uint64_t key = prediction_key(b.pr.record, b.name_id, b.pr.gpu);
  auto it = predictions_.find(key);
  if (it != predictions_.end()) return it->second;
  if (predictions_.size() >= kMaxPredictionMemo) predictions_.clear();
  Predicted out;
  predictor_->predict(b.pr.record, *b.cls, out.targets);
  out.source_lower_us = predictor_->source_lower_bound_us(b.pr.record, *b.cls);
  return predictions_.emplace(key, std::move(out)).first->second;
}

void RecordSink::guard_forecasts(PredictedRecord& pr, double source_lower_us) const {
  const KernelRecord& r = pr.record;
  // Only a kernel's device time compares with the model's kernel-time predictions.
  if (!r.measured_us || r.basis != TimeBasis::kKernel || pr.gpu.empty()) return;
  const Prediction* own = pr.prediction_for(pr.gpu);
  if (own == nullptr) return;
  GuardInput in;
  in.measured_us = *r.measured_us;
  in.source = *own;
  in.source_lower_us = source_lower_us;
  in.family = pr.family;
  const GuardVerdict verdict = judge_measurement(in);
  if (!verdict.anchors()) return;
  for (auto& [name, p] : pr.predictions) {
    if (name == pr.gpu) continue;  // the GPU it ran on keeps the model's prediction
    p = guarded_forecast(verdict, p, false, 0, predictor_->time_ratio_range(name, r.device));
  }
}

void RecordSink::finish(BuiltRecord& b) {
  PredictedRecord& pr = b.pr;
  const KernelRecord& r = pr.record;
  // Scored against the GPU of the device it ran on (a process may drive GPUs of two models).
  pr.gpu = predictor_ ? predictor_->device_gpu(r.device) : std::string();
  const Predicted& predicted = predict(b);
  const Predictions& preds = predicted.targets;
  pr.predictions = preds;
  guard_forecasts(pr, predicted.source_lower_us);

  // Predict-only: let the launch path label the next launches of this kernel in NVTX.
  if (setup_.predict_only && b.handle != 0 && !preds.empty()) {
    if (KernelInfo* info = HandleCache::instance().find(b.handle)) {
      std::atomic_ref<double>(info->last_prediction_us)
          .store(preds.front().second.us, std::memory_order_relaxed);
      std::atomic_ref<std::uint64_t>(info->last_geometry)
          .store(b.geometry, std::memory_order_release);
    }
  }

  ShimCounters& c = summary_.counters();
  c.records++;
  if (r.measured_us) {
    c.measured++;
  } else {
    c.unmeasured++;
  }
  if (b.notes.bits & notes::kRuntimeOnly) c.runtime_only++;
  summary_.add(pr, b.measured_ns);
  if (r.measured_us && !pr.gpu.empty()) {
    if (const Prediction* own = pr.prediction_for(pr.gpu)) {
      const std::string family(to_string(pr.family));
      if (auto warning = accuracy_.add(family, own->us, *r.measured_us)) {
        Diagnostics::instance().warn_once("drift:" + family, *warning);
      }
    }
  }

  // Written without predictions when it could not wait for the profiles any longer.
  if (records_ == nullptr) open_records_file();
  if (records_ != nullptr) {
    const RecordRuntime runtime = record_runtime(b.notes);
    line_ = record_to_jsonl(pr, &runtime);
    line_ += '\n';
    std::fwrite(line_.data(), 1, line_.size(), records_);
  }
}

void RecordSink::open_records_file() {
  if (setup_.records_path.empty() || records_ != nullptr || open_failed_) return;
  records_ = std::fopen(setup_.records_path.c_str(), "we");
  if (records_ == nullptr) {
    open_failed_ = true;
    Diagnostics::instance().warn_once(
        "records-open", "cannot write " + setup_.records_path + ": " + std::strerror(errno));
    return;
  }
  std::setvbuf(records_, nullptr, _IOFBF, std::size_t(1) << 20);
  RecordsHeader h = setup_.header;
  if (predictor_ != nullptr) {
    h.gpu = predictor_->device_gpu(0);  // each record names the GPU it ran on
    h.targets = predictor_->target_names();
  } else {
    h.targets = setup_.targets;  // as requested: nothing resolved them
  }
  const RuntimeHeader runtime{setup_.mode, PM2LAT_VERSION};
  line_ = header_to_jsonl(h, &runtime);
  line_ += '\n';
  std::fwrite(line_.data(), 1, line_.size(), records_);
}

void RecordSink::flush_if_due(std::uint64_t now_ns) {
  if (records_ != nullptr && now_ns - last_flush_ns_ > setup_.flush_ms * kNsPerMs) {
    std::fflush(records_);
    last_flush_ns_ = now_ns;
  }
}

void RecordSink::close() {
  write_summary();
  if (records_ != nullptr) {
    std::fclose(records_);
    records_ = nullptr;
  }
}

void RecordSink::write_summary() {
  const std::vector<std::string> targets =
      predictor_ ? predictor_->target_names() : std::vector<std::string>{};
  const std::string json =
      summary_.to_json(setup_.mode, targets, Diagnostics::instance().warnings());
  auto write_file = [&](const std::string& path) {
    if (path.empty()) return;
    if (std::FILE* f = std::fopen(path.c_str(), "we")) {
      std::fwrite(json.data(), 1, json.size(), f);
      std::fclose(f);
    } else {
      Diagnostics::instance().warn_once("summary-open", "cannot write " + path);
    }
  };
  write_file(setup_.summary_json_path);
  if (setup_.summary == "stderr") {
    const std::string text = summary_.to_text(targets);
    [[maybe_unused]] ssize_t n = ::write(STDERR_FILENO, text.data(), text.size());
  } else if (!setup_.summary.empty() && setup_.summary != setup_.summary_json_path) {
    write_file(setup_.summary);
  }
}

}  // namespace pm2lat::shim
