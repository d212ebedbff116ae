#include "collect/worker.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <tuple>

#include "diagnostics.h"
#include "interpose/library_context.h"
#include "launch_path/clock.h"
#include "launch_path/event_timer.h"
#include "launch_path/handle_cache.h"
#include "launch_path/launch_recorder.h"
#include "launch_path/string_table.h"
#include "launch_path/thread_ring.h"
#include "launch_path/thread_state.h"

namespace pm2lat::shim {

namespace {

constexpr std::uint64_t kMs = 1'000'000;
constexpr std::uint64_t kTimingTimeoutNs = 10'000 * kMs;  // a launch's CUPTI record is late
// A record waits this long for a launch slot that may still be in flight: reserved but not
// yet published, or (runtime launches the driver hooks did not see) written only after the
// runtime call returned. Only records without a slot wait, so a generous grace costs nothing
// in the common case; it covers a launching thread descheduled in between.
constexpr std::uint64_t kOrphanGraceNs = 2'000 * kMs;
constexpr std::uint64_t kGraphLaunchKeepNs = 30'000 * kMs;
constexpr std::size_t kMaxPending = std::size_t(1) << 19;
constexpr std::size_t kRingBudget = 2048;  // slots per ring per pass
constexpr std::size_t kMaxExternal = std::size_t(1) << 20;
constexpr std::size_t kMaxPredictionMemo = std::size_t(1) << 16;
constexpr std::size_t kMaxCalls = std::size_t(1) << 16;       // recent library calls kept
constexpr std::size_t kMaxDeferred = std::size_t(1) << 17;    // records waiting for profiles
constexpr std::uint64_t kSeqKeyBit = std::uint64_t(1) << 63;  // tells by_seq_ keys apart
constexpr std::uint64_t kDroppedLaunch = ~std::uint64_t{0};

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}

template <typename T>
std::uint64_t mix_bytes(std::uint64_t h, const T& v) {
  unsigned char bytes[sizeof(T)];
  std::memcpy(bytes, &v, sizeof(T));
  for (unsigned char b : bytes) h = (h ^ b) * 1099511628211ull;
  return h;
}

std::uint64_t prediction_key(const KernelRecord& r, std::uint32_t name_id) {
  std::uint64_t h = mix(1469598103934665603ull, name_id);
  for (auto d : {r.launch.grid, r.launch.block, r.launch.cluster}) {
    h = mix(h, d.x);
    h = mix(h, d.y);
    h = mix(h, d.z);
  }
  h = mix(h, r.launch.shared_mem_bytes);
  h = mix(h, r.launch.registers_per_thread);
  h = mix(h, static_cast<std::uint64_t>(r.op.kind));
  if (r.op.kind == OpKind::kGemm) h = mix_bytes(h, r.op.gemm);
  if (r.op.kind == OpKind::kConv) h = mix_bytes(h, r.op.conv);
  for (std::int64_t a : r.launch.int_args) h = mix(h, static_cast<std::uint64_t>(a));
  return h;
}

bool same_geometry(const LaunchSlot& s, const KernelTiming& t) {
  for (int i = 0; i < 3; ++i) {
    if (s.grid[i] != t.grid[i] || s.block[i] != t.block[i]) return false;
  }
  return true;
}

}  // namespace

Worker::Worker(WorkerSetup setup) : setup_(std::move(setup)), accuracy_(setup_.drift_pct) {
  if (::pipe2(wake_pipe_, O_CLOEXEC | O_NONBLOCK) != 0) wake_pipe_[0] = wake_pipe_[1] = -1;
  if (::pipe2(done_pipe_, O_CLOEXEC | O_NONBLOCK) != 0) done_pipe_[0] = done_pipe_[1] = -1;
}

Worker::~Worker() {
  for (int fd : {wake_pipe_[0], wake_pipe_[1], done_pipe_[0], done_pipe_[1]}) {
    if (fd >= 0) ::close(fd);
  }
}

void Worker::start() {
  thread_ = std::thread([this] { run(); });
}

int Worker::request_finish_from_signal(std::uint32_t budget_ms) noexcept {
  if (budget_ms != 0) {
    // Two thirds of the budget for the profiles, the rest to write what is there.
    finish_deadline_ns_.store(monotonic_ns() + std::uint64_t(budget_ms) * kMs * 2 / 3,
                              std::memory_order_release);
  }
  stop_.store(true, std::memory_order_release);
  if (wake_pipe_[1] >= 0) {
    const char c = 's';
    [[maybe_unused]] ssize_t n = ::write(wake_pipe_[1], &c, 1);
  }
  return done_pipe_[0];
}

void Worker::finish(std::uint32_t timeout_ms) {
  const int done = request_finish_from_signal();
  if (thread_.joinable()) {
    if (done >= 0) {
      pollfd p{done, POLLIN, 0};
      ::poll(&p, 1, static_cast<int>(timeout_ms));
    }
    if (finished_.load(std::memory_order_acquire)) {
      thread_.join();
    } else {
      // The worker is stuck (a driver or CUPTI lock held by a thread that will never run
      // again): leave it rather than hang the program's exit.
      thread_.detach();
    }
  }
}

void Worker::run() {
  ThreadState& ts = thread_state();
  ts.internal = true;
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  pthread_setname_np(pthread_self(), "pm2lat-worker");

  // Loading the profiles takes from a fraction of a second to seconds; the rings and
  // CUPTI's buffers are drained meanwhile and the records made wait (bounded) for predictions.
  loader_ = std::thread([this] {
    thread_state().internal = true;
    sigset_t mask;
    sigfillset(&mask);
    pthread_sigmask(SIG_BLOCK, &mask, nullptr);
    auto* p = new PredictorAdapter(setup_.targets, setup_.source_device, &load_problems_);
    loaded_.store(p, std::memory_order_release);
  });

  std::uint32_t idle_sleep_us = 250;
  while (!stop_.load(std::memory_order_acquire)) {
    const std::uint64_t before = work_done_;
    iteration(false);
    const bool progress = work_done_ != before;
    if (progress) {
      idle_sleep_us = 250;
      continue;
    }
    // Sleep less than a ring takes to fill at a high launch rate (8192 slots at ~1M/s).
    pollfd p{wake_pipe_[0], POLLIN, 0};
    ::poll(&p, wake_pipe_[0] >= 0 ? 1 : 0, static_cast<int>(idle_sleep_us / 1000 + 1));
    idle_sleep_us = idle_sleep_us < 2'000 ? idle_sleep_us * 2 : 2'000;
  }
  finalise();
}

void Worker::open_records_file() {
  if (setup_.records_path.empty()) return;
  records_ = std::fopen(setup_.records_path.c_str(), "we");
  if (records_ == nullptr) {
    Diagnostics::instance().warn_once(
        "records-open", "cannot write " + setup_.records_path + ": " + std::strerror(errno));
    return;
  }
  std::setvbuf(records_, nullptr, _IOFBF, std::size_t(1) << 20);
  RecordsHeader h = setup_.header;
  if (predictor_ != nullptr) {
    h.gpu = predictor_->source_name();
    h.targets = predictor_->target_names();
  } else {
    h.targets = setup_.targets;  // as requested: nothing resolved them
  }
  std::string line = header_to_jsonl(h);
  line.pop_back();
  line += ",\"runtime\":{\"mode\":\"" + setup_.mode + "\",\"version\":\"" PM2LAT_VERSION "\"}}";
  write_line(line);
}

void Worker::adopt_predictor() {
  if (predictor_ != nullptr) return;
  PredictorAdapter* p = loaded_.load(std::memory_order_acquire);
  if (p == nullptr) return;
  if (loader_.joinable()) loader_.join();
  predictor_.reset(p);
  std::vector<std::string> problems = setup_.startup_problems;
  problems.insert(problems.end(), load_problems_.begin(), load_problems_.end());
  for (const auto& msg : problems) Diagnostics::instance().warn_once(msg, msg);
  summary_.set_source(predictor_->source_name());
  open_records_file();
  while (!deferred_.empty()) {
    Deferred& d = deferred_.front();
    finish(d.pr, d.notes, d.name_id, d.measured_ns, d.handle, d.geometry);
    deferred_.pop_front();
  }
}

void Worker::finalise() {
  if (setup_.cupti_activity) CuptiActivity::instance().flush(true);
  iteration(true);
  const std::uint64_t deadline = finish_deadline_ns_.load(std::memory_order_acquire);
  while (deadline != 0 && loaded_.load(std::memory_order_acquire) == nullptr &&
         monotonic_ns() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (deadline == 0 || loaded_.load(std::memory_order_acquire) != nullptr) {
    if (loader_.joinable()) loader_.join();
    adopt_predictor();
  } else {
    // A signal is ending the process before the profiles loaded: the records go out without
    // predictions. The loader is left to the signal that is about to end the process.
    if (loader_.joinable()) loader_.detach();
    Diagnostics::instance().warn_once(
        "profiles-late",
        "the program was stopped by a signal before the profiles loaded: "
        "records are written without predictions");
    for (const auto& msg : setup_.startup_problems) Diagnostics::instance().warn_once(msg, msg);
    open_records_file();
    while (!deferred_.empty()) {
      Deferred& d = deferred_.front();
      finish(d.pr, d.notes, d.name_id, d.measured_ns, d.handle, d.geometry);
      deferred_.pop_front();
    }
  }
  summary_.counters().passed_through =
      launch_path_state().passed_through.load(std::memory_order_relaxed);
  summary_.counters().library_calls = library_calls_made();
  for (ThreadRing* r = RingRegistry::instance().head(); r != nullptr; r = r->next) {
    summary_.counters().dropped += r->dropped();
  }
  if (setup_.cupti_activity)
    summary_.counters().cupti_dropped += CuptiActivity::instance().records_dropped();
  write_summary();
  if (records_ != nullptr) {
    std::fclose(records_);
    records_ = nullptr;
  }
  finished_.store(true, std::memory_order_release);
  if (done_pipe_[1] >= 0) {
    const char c = 'd';
    [[maybe_unused]] ssize_t n = ::write(done_pipe_[1], &c, 1);
  }
}

void Worker::iteration(bool final) {
  ++iterations_;
  adopt_predictor();
  // Passes alternate between rings and CUPTI's buffers, so that a backlog in the rings does
  // not pile up as launches waiting for records that are already there.
  CuptiActivity& activity = CuptiActivity::instance();
  for (int pass = 0; pass < 64; ++pass) {
    // One clock read per pass: arrival times only feed timeouts of seconds.
    pass_ns_ = monotonic_ns();
    buffers_.clear();
    if (setup_.cupti_activity) activity.take_completed(buffers_);
    // Rings before buffers: a launch's slot is published before its kernel can complete, so
    // every record in these buffers has its slot drained by now (or arriving in a moment).
    bool more = false;
    for (ThreadRing* r = RingRegistry::instance().head(); r != nullptr; r = r->next) {
      more |= drain_ring(r, final, kRingBudget);
    }
    for (const auto& b : buffers_) {
      activity.parse(
          b, [this](const KernelTiming& t) { on_timing(t, false); },
          [this](const ExternalCorrelation& e) { on_external(e); });
    }
    if (!more && buffers_.empty()) break;
  }
  process_orphans(final);
  expire_pending(final);
  graphs_.sweep(monotonic_ns(), kGraphLaunchKeepNs);
  RingRegistry::instance().prune([this](ThreadRing* r) {
    // The ring of a finished thread goes away: keep its count of dropped launches.
    summary_.counters().dropped += r->dropped();
    EventTimer::release(r);
  });

  const std::uint64_t now = monotonic_ns();
  if (records_ != nullptr && now - last_flush_ns_ > setup_.flush_ms * kMs) {
    std::fflush(records_);
    last_flush_ns_ = now;
  }
  if (setup_.cupti_activity && now - last_cupti_flush_ns_ > 500 * kMs) {
    // Complete buffers only; CUPTI's own periodic flush may be unavailable.
    activity.flush(false);
    last_cupti_flush_ns_ = now;
  }
}

bool Worker::drain_ring(ThreadRing* ring, bool final, std::size_t budget) {
  std::size_t n = 0;
  while (n < budget) {
    LaunchSlot* s = ring->peek();
    if (s == nullptr || !handle_slot(ring, *s, final)) return false;
    ring->pop();
    ++n;
  }
  return true;  // budget used up: more may be waiting
}

bool Worker::handle_slot(ThreadRing* ring, const LaunchSlot& s, bool final) {
  ++work_done_;
  switch (s.kind) {
    case SlotKind::kKernel:
      if ((s.flags & slot_flags::kEventsTimed) != 0 && s.result == 0 &&
          (s.flags & slot_flags::kCaptured) == 0) {
        double us = 0;
        EventTimer::Poll p = EventTimer::poll(ring, &s, &us);
        for (int waited = 0; final && p == EventTimer::Poll::kPending && waited < 500; ++waited) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
          p = EventTimer::poll(ring, &s, &us);
        }
        // Keep the slot (and its event pair) until the GPU is done with it.
        if (p == EventTimer::Poll::kPending && !final) return false;
        summary_.counters().launches++;
        if (p == EventTimer::Poll::kReady) {
          emit(&s, nullptr, call_context(s), us, static_cast<std::uint64_t>(us * 1000.0 + 0.5),
               notes::kEventsTiming);
        } else {
          summary_.counters().timing_lost++;
          emit(&s, nullptr, call_context(s), std::nullopt, 0,
               notes::kUnmeasured | notes::kTimingLost);
        }
        return true;
      }
      handle_kernel_slot(s);
      return true;
    case SlotKind::kGraphLaunch: handle_graph_launch(s); return true;
    case SlotKind::kGraphInstantiate: graphs_.instantiate(s.graph, s.graph_exec); return true;
    case SlotKind::kGraphExecDestroy:
      graphs_.destroy_exec(s.graph_exec, monotonic_ns());
      return true;
    case SlotKind::kGraphDestroy: graphs_.destroy_graph(s.graph); return true;
    case SlotKind::kGraphNodeCloned: graphs_.clone(s.graph_node, s.graph_exec); return true;
    case SlotKind::kGraphNodeDestroyed:
      graphs_.remove_node(s.graph_node, monotonic_ns());
      return true;
    case SlotKind::kLibraryCall:
      if (calls_.insert_or_assign(s.call_id, s.op).second) {
        call_order_.push_back(s.call_id);
        if (call_order_.size() > kMaxCalls) {
          calls_.erase(call_order_.front());
          call_order_.pop_front();
        }
      }
      return true;
  }
  return true;
}

void Worker::handle_kernel_slot(const LaunchSlot& s) {
  ShimCounters& c = summary_.counters();
  c.launches++;
  if (s.result != 0) {
    c.failed_launches++;
    return;
  }
  if ((s.flags & slot_flags::kCaptured) != 0) {
    graphs_.add_captured(s, call_context(s));
    c.captured++;
    return;
  }
  const std::uint64_t now = pass_ns_;
  if (setup_.timing == TimingMode::kCupti) {
    if ((s.flags & slot_flags::kFromCallback) != 0 && s.correlation_id != 0) {
      pending_.insert(s.correlation_id, s, now);
    } else if ((s.flags & slot_flags::kExternalCorrelation) != 0) {
      pending_.insert(s.seq | kSeqKeyBit, s, now);
    } else {
      runtime_only_.push_back(Pending{s, now});
    }
    return;
  }
  std::uint32_t bits = notes::kUnmeasured;
  if (setup_.predict_only) bits |= notes::kPredictOnly;
  emit(&s, nullptr, call_context(s), std::nullopt, 0, bits);
}

void Worker::handle_graph_launch(const LaunchSlot& s) {
  ShimCounters& c = summary_.counters();
  if (s.result != 0) {
    c.failed_launches++;
    return;
  }
  const std::uint64_t now = monotonic_ns();
  if (setup_.timing == TimingMode::kCupti) {
    if ((s.flags & slot_flags::kFromCallback) != 0) {
      graph_by_correlation_[s.correlation_id] = s;
      graph_order_.emplace_back(s.correlation_id, now);
    } else if ((s.flags & slot_flags::kExternalCorrelation) != 0) {
      graph_by_seq_[s.seq] = s;
      graph_order_.emplace_back(s.seq | kSeqKeyBit, now);
    }
    return;
  }
  // No per-kernel durations: each replay is the kernels recorded at capture.
  const std::vector<GraphTemplate>* kernels = graphs_.kernels_of_exec(s.graph_exec);
  if (kernels == nullptr) return;
  std::uint32_t bits = notes::kGraphReplay | notes::kUnmeasured;
  if (setup_.predict_only) bits |= notes::kPredictOnly;
  for (const GraphTemplate& t : *kernels) {
    LaunchSlot k = t.slot;
    k.seq = launch_path_state().next_seq.fetch_add(1, std::memory_order_relaxed);
    k.host_ts_ns = s.host_ts_ns;
    k.stream = s.stream;
    c.graph_replays++;
    emit(&k, nullptr, t.has_op ? &t.op : nullptr, std::nullopt, 0, bits);
  }
}

void Worker::on_external(const ExternalCorrelation& e) {
  if (external_.size() >= kMaxExternal) external_.clear();
  external_[e.correlation_id] = e.external_id;
}

void Worker::on_timing(const KernelTiming& t, bool) {
  ++work_done_;
  if (join_timing(t)) return;
  orphans_.push_back(Orphan{t, monotonic_ns(), iterations_,
                            launch_path_state().next_seq.load(std::memory_order_relaxed)});
}

bool Worker::join_timing(const KernelTiming& t) {
  const bool callbacks = setup_.metadata == MetadataSource::kCuptiCallbacks;
  const double us = double(t.end_ns - t.start_ns) / 1000.0;
  const std::uint64_t ns = t.end_ns - t.start_ns;
  if (t.graph_node_id != 0) {
    const LaunchSlot* launch = nullptr;
    if (callbacks) {
      if (auto it = graph_by_correlation_.find(t.correlation_id);
          it != graph_by_correlation_.end()) {
        launch = &it->second;
      }
    } else if (auto e = external_.find(t.correlation_id); e != external_.end()) {
      if (auto it = graph_by_seq_.find(e->second); it != graph_by_seq_.end()) launch = &it->second;
    }
    const GraphTemplate* tmpl = graphs_.node(t.graph_node_id);
    if (tmpl == nullptr && launch != nullptr) {
      // Hook mode knows nodes by handle, CUPTI by id: match the replayed kernel to its
      // graph's capture by name and geometry, and remember the id for the next replays.
      if (const auto* kernels = graphs_.kernels_of_exec(launch->graph_exec)) {
        for (const GraphTemplate& k : *kernels) {
          if (same_geometry(k.slot, t) && t.name != nullptr &&
              StringTable::instance().get(k.slot.name_id) == t.name) {
            LaunchSlot alias = k.slot;
            alias.graph_node = t.graph_node_id;
            alias.graph = 0;
            graphs_.add_captured(alias, k.has_op ? &k.op : nullptr);
            tmpl = graphs_.node(t.graph_node_id);
            break;
          }
        }
      }
    }
    if (tmpl == nullptr && launch == nullptr) return false;
    summary_.counters().graph_replays++;
    if (tmpl != nullptr) {
      LaunchSlot k = tmpl->slot;
      k.seq = launch_path_state().next_seq.fetch_add(1, std::memory_order_relaxed);
      k.correlation_id = t.correlation_id;
      emit(&k, &t, tmpl->has_op ? &tmpl->op : nullptr, us, ns, notes::kGraphReplay);
    } else {
      emit(nullptr, &t, nullptr, us, ns, notes::kGraphReplay);
    }
    return true;
  }
  if (callbacks) {
    PendingLaunches::Entry* e = pending_.find(t.correlation_id);
    if (e == nullptr) return false;
    emit(&e->slot, &t, call_context(e->slot), us, ns, 0);
    pending_.erase(e);
    return true;
  }
  auto e = external_.find(t.correlation_id);
  if (e == external_.end()) return false;
  if (e->second == kDroppedLaunch) {
    external_.erase(e);
    emit(nullptr, &t, nullptr, us, ns, notes::kLaunchDropped);
    return true;
  }
  const std::uint64_t key = e->second | kSeqKeyBit;
  PendingLaunches::Entry* p = pending_.find(key);
  if (p == nullptr) return false;
  emit(&p->slot, &t, call_context(p->slot), us, ns, 0);
  pending_.erase(p);
  external_.erase(e);
  return true;
}

void Worker::process_orphans(bool final) {
  if (orphans_.empty()) return;
  const std::uint64_t now = monotonic_ns();
  const std::uint64_t waiting_seq = oldest_waiting_seq();
  while (!orphans_.empty()) {
    Orphan& o = orphans_.front();
    // A record can arrive before its launch's slot is drained when the worker is behind
    // (a starved CPU): it waits until the rings are drained past it. The grace period covers
    // a launch still between its reservation and its publication. Old or too many orphans
    // are settled regardless, so that a stuck ring cannot hold memory.
    const bool settled_anyway =
        now - o.arrived_ns > kTimingTimeoutNs || orphans_.size() > kMaxPending;
    const bool may_still_come = o.seq_bound > waiting_seq || iterations_ - o.iteration < 2 ||
                                now - o.arrived_ns < kOrphanGraceNs;
    if (!final && !settled_anyway && may_still_come) break;
    const KernelTiming t = o.timing;
    orphans_.pop_front();
    if (join_timing(t)) continue;
    const double us = double(t.end_ns - t.start_ns) / 1000.0;
    const std::uint64_t ns = t.end_ns - t.start_ns;
    // A launch only a runtime hook saw has no correlation: join it by name and geometry.
    bool matched = false;
    for (auto it = runtime_only_.begin(); it != runtime_only_.end(); ++it) {
      if (same_geometry(it->slot, t) && t.name != nullptr &&
          StringTable::instance().get(it->slot.name_id) == t.name) {
        const LaunchSlot s = it->slot;
        runtime_only_.erase(it);
        emit(&s, &t, call_context(s), us, ns, notes::kRuntimeOnly);
        matched = true;
        break;
      }
    }
    if (matched) continue;
    // A launch dropped from a full ring still runs: its record is an orphan too. Orphans are
    // put down to drops first (their count is known), the rest to the coverage oracle: CUPTI
    // ran a kernel no hook saw.
    std::uint64_t dropped = summary_.counters().dropped;
    for (ThreadRing* r = RingRegistry::instance().head(); r != nullptr; r = r->next)
      dropped += r->dropped();
    if (orphans_from_drops_ < dropped) {
      ++orphans_from_drops_;
      emit(nullptr, &t, nullptr, us, ns, notes::kLaunchDropped);
      continue;
    }
    summary_.counters().unhooked++;
    emit(nullptr, &t, nullptr, us, ns, notes::kUnhooked);
  }
}

std::uint64_t Worker::oldest_waiting_seq() noexcept {
  std::uint64_t oldest = UINT64_MAX;
  for (ThreadRing* r = RingRegistry::instance().head(); r != nullptr; r = r->next) {
    if (const LaunchSlot* s = r->peek(); s != nullptr && s->seq < oldest) oldest = s->seq;
  }
  return oldest;
}

void Worker::expire_pending(bool final) {
  const std::uint64_t now = monotonic_ns();
  for (auto [key, p] = pending_.oldest(); p != nullptr; std::tie(key, p) = pending_.oldest()) {
    const bool too_many = pending_.size() > kMaxPending;
    if (!final && !too_many && now - p->arrived_ns < kTimingTimeoutNs) break;
    summary_.counters().timing_lost++;
    emit(&p->slot, nullptr, call_context(p->slot), std::nullopt, 0,
         notes::kUnmeasured | notes::kTimingLost);
    pending_.erase(p);
  }
  while (!runtime_only_.empty() &&
         (final || now - runtime_only_.front().arrived_ns > kTimingTimeoutNs)) {
    summary_.counters().timing_lost++;
    const LaunchSlot s = runtime_only_.front().slot;
    runtime_only_.pop_front();
    emit(&s, nullptr, call_context(s), std::nullopt, 0,
         notes::kRuntimeOnly | notes::kUnmeasured | notes::kTimingLost);
  }
  while (!graph_order_.empty() &&
         (final || now - graph_order_.front().second > kGraphLaunchKeepNs)) {
    const std::uint64_t key = graph_order_.front().first;
    if (key & kSeqKeyBit) {
      graph_by_seq_.erase(key & ~kSeqKeyBit);
    } else {
      graph_by_correlation_.erase(static_cast<std::uint32_t>(key));
    }
    graph_order_.pop_front();
  }
}

const KernelClass& Worker::classify(std::uint32_t name_id) {
  auto it = classes_.find(name_id);
  if (it != classes_.end()) return it->second;
  return classes_.emplace(name_id, PredictorAdapter::classify(StringTable::instance().get(name_id)))
      .first->second;
}

const std::vector<std::pair<std::string, Prediction>>& Worker::predict(const KernelRecord& r,
                                                                       std::uint32_t name_id,
                                                                       const KernelClass& cls) {
  static const std::vector<std::pair<std::string, Prediction>> kNone;
  if (predictor_ == nullptr || !predictor_->available()) return kNone;
  // Training loops repeat the same launches: predict each distinct one once.
  const std::uint64_t key = prediction_key(r, name_id);
  auto it = predictions_.find(key);
  if (it != predictions_.end()) return it->second;
  if (predictions_.size() >= kMaxPredictionMemo) predictions_.clear();
  std::vector<std::pair<std::string, Prediction>> out;
  predictor_->predict(r, cls, out);
  return predictions_.emplace(key, std::move(out)).first->second;
}

const OpPod* Worker::call_context(const LaunchSlot& s) const {
  if (s.call_id == 0) return nullptr;
  auto it = calls_.find(s.call_id);
  return it == calls_.end() ? nullptr : &it->second;
}

void Worker::emit(const LaunchSlot* slot, const KernelTiming* timing, const OpPod* op,
                  std::optional<double> measured_us, std::uint64_t measured_ns,
                  std::uint32_t bits) {
  StringTable& names = StringTable::instance();
  std::uint32_t name_id = slot ? slot->name_id : 0;
  if (name_id == StringTable::kUnknown && timing != nullptr && timing->name != nullptr) {
    auto it = cupti_names_.find(timing->name);
    if (it == cupti_names_.end())
      it = cupti_names_.emplace(timing->name, names.intern(timing->name)).first;
    name_id = it->second;
  }

  PredictedRecord pr;
  KernelRecord& r = pr.record;
  r.seq = slot ? slot->seq : launch_path_state().next_seq.fetch_add(1, std::memory_order_relaxed);
  r.ts_ns = timing ? timing->start_ns : slot->host_ts_ns;
  r.device = timing ? static_cast<std::int32_t>(timing->device) : 0;
  r.stream = timing ? timing->stream : slot->stream;
  r.launch.name = std::string(names.get(name_id));
  const std::uint32_t* grid = slot ? slot->grid : timing->grid;
  const std::uint32_t* block = slot ? slot->block : timing->block;
  const std::uint32_t* cluster = slot ? slot->cluster : timing->cluster;
  r.launch.grid = Dim3{grid[0], grid[1], grid[2]};
  r.launch.block = Dim3{block[0], block[1], block[2]};
  r.launch.cluster = Dim3{cluster[0], cluster[1], cluster[2]};
  r.launch.shared_mem_bytes = slot ? slot->smem : timing->smem;
  r.launch.registers_per_thread =
      (slot && slot->regs) ? slot->regs : (timing ? timing->registers : 0);
  if (timing != nullptr && timing->graph_node_id != 0) {
    r.graph_id = timing->graph_id;
    r.graph_node_id = timing->graph_node_id;
  }
  RecordNotes n;
  n.bits = bits;
  if (slot != nullptr) {
    for (int i = 0; i < slot->n_args; ++i) {
      const std::int64_t v = slot->args[i];
      n.args.push_back(v);
      // An 8-byte parameter this large is a pointer, not a size the models could use.
      const bool eight = (slot->arg_is_8byte >> i) & 1u;
      if (!eight || (v > -(std::int64_t(1) << 40) && v < (std::int64_t(1) << 40))) {
        r.launch.int_args.push_back(v);
      }
    }
    n.call = slot->call_id;
    if (slot->flags & slot_flags::kFirstLaunch) n.bits |= notes::kFirstLaunch;
    if (slot->flags & slot_flags::kCooperative) n.bits |= notes::kCooperative;
    if (slot->flags & slot_flags::kRuntimeOnly) n.bits |= notes::kRuntimeOnly;
    if (slot->api != LaunchApi::kUnknown) n.api = to_string(slot->api);
    if (slot->runtime_api != LaunchApi::kUnknown) n.via = to_string(slot->runtime_api);
    n.correlation = slot->correlation_id;
  }
  if (timing != nullptr) n.correlation = timing->correlation_id;
  if (op != nullptr) {
    r.op.kind = op->kind;
    r.op.source = to_string(op->source);
    r.op.name = to_string(op->api);
    r.op.gemm = op->gemm;
    r.op.conv = op->conv;
    n.call = op->call_id;
  }
  r.measured_us = measured_us;
  r.basis = TimeBasis::kKernel;
  pr.rank = setup_.header.rank;
  const std::uint64_t handle = slot ? slot->handle : 0;
  const std::uint64_t geometry =
      slot ? geometry_digest(slot->name_id, slot->grid, slot->block, slot->smem) : 0;
  if (predictor_ == nullptr && deferred_.size() < kMaxDeferred) {
    deferred_.push_back(
        Deferred{std::move(pr), std::move(n), name_id, measured_ns, handle, geometry});
    return;
  }
  finish(pr, n, name_id, measured_ns, handle, geometry);
}

void Worker::finish(PredictedRecord& pr, const RecordNotes& n, std::uint32_t name_id,
                    std::uint64_t measured_ns, std::uint64_t handle, std::uint64_t geometry) {
  KernelRecord& r = pr.record;
  pr.gpu = predictor_ ? predictor_->source_name() : std::string();
  const KernelClass& cls = classify(name_id);
  pr.family = cls.family;
  pr.config = cls.config;
  const auto& preds = predict(r, name_id, cls);
  pr.predictions = preds;

  // Predict-only: let the launch path label the next launches of this kernel in NVTX.
  if (setup_.predict_only && handle != 0 && !preds.empty()) {
    if (KernelInfo* info = HandleCache::instance().find(handle)) {
      info->last_prediction_us.store(preds.front().second.us, std::memory_order_relaxed);
      info->last_geometry.store(geometry, std::memory_order_release);
    }
  }

  ShimCounters& c = summary_.counters();
  c.records++;
  if (r.measured_us) {
    c.measured++;
  } else {
    c.unmeasured++;
  }
  if (n.bits & notes::kRuntimeOnly) c.runtime_only++;
  summary_.add(pr, measured_ns);
  if (r.measured_us && !pr.gpu.empty()) {
    if (const Prediction* own = pr.prediction_for(pr.gpu)) {
      if (auto warning =
              accuracy_.add(std::string(to_string(pr.family)), own->us, *r.measured_us)) {
        Diagnostics::instance().warn_once("drift:" + std::string(to_string(pr.family)), *warning);
      }
    }
  }

  if (records_ != nullptr) {
    line_ = record_to_jsonl(pr);
    append_notes(line_, n);
    write_line(line_);
  }
}

void Worker::write_line(const std::string& line) {
  if (records_ == nullptr) return;
  std::fwrite(line.data(), 1, line.size(), records_);
  std::fputc('\n', records_);
}

void Worker::write_summary() {
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
