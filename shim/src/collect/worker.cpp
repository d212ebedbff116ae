#include "collect/worker.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <string>

#include "collect/run_contained.h"
#include "diagnostics.h"
#include "driver_api.h"
#include "interpose/library_context.h"
#include "launch_path/clock.h"
#include "launch_path/event_timer.h"
#include "launch_path/thread_ring.h"
#include "launch_path/thread_state.h"

namespace pm2lat::shim {

namespace {

// Passes alternate between rings and CUPTI buffers up to this many times per iteration.
constexpr int kPassesPerIteration = 64;
// Slots drained per pass before the records that came meanwhile, shared among the rings.
constexpr std::uint64_t kPassSlots = 16384;
constexpr std::uint64_t kMinRingShare = 256;
// Records that arrived ahead of their launches wait in the joiner, and past its cap
// (RecordJoiner::kMaxPending) the oldest is settled unclaimed though its launch may still be
// in a ring: a kernel then counted twice (once unhooked) and its launch left unmeasured. With
// a slow worker and many launching threads (64 threads under ThreadSanitizer: 49,000 waiting,
// and past the cap on a busier machine) the rings' share per pass lets the records run that
// far ahead. From this many waiting, every ring is drained to what it has published before
// the next record: those launches are what the records wait for.
constexpr std::size_t kRecordsAheadDrainRings = RecordJoiner::kMaxPending / 4;
// A share of slots no ring's backlog exceeds: each ring drained to what it has published.
constexpr std::uint64_t kWholeRing = UINT64_MAX;
// CUPTI's own periodic flush may be unavailable: complete buffers are asked for this often.
constexpr std::uint64_t kCuptiFlushNs = 500 * kNsPerMs;
// A final events-timed slot waits this long for its GPU work (1 ms steps).
constexpr int kFinalEventWaitMs = 500;
// Idle sleep: doubles from the first to the last while nothing arrives. Shorter than a ring
// takes to fill at a high launch rate (8192 slots at ~1M/s).
constexpr std::uint32_t kFirstIdleSleepUs = 250;
constexpr std::uint32_t kLastIdleSleepUs = 2'000;

}  // namespace

Worker::Worker(WorkerSetup setup)
    : cupti_activity_(setup.joiner.timing == TimingMode::kCupti),
      sink_(std::move(setup.sink)),
      builder_(sink_.rank(), sink_),
      joiner_(setup.joiner, sink_.counters(), builder_) {
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
    finish_deadline_ns_.store(monotonic_ns() + std::uint64_t(budget_ms) * kNsPerMs * 2 / 3,
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
  // The same budget split as a signal's: profiles still loading when it runs out are given
  // up and the records go out without predictions, rather than not at all.
  const int done = request_finish_from_signal(timeout_ms);
  if (!thread_.joinable()) return;
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

// Out of memory is the one error expected here: the step's batch is lost, said once, and the
// worker goes on.
void Worker::report_error(const char* what) noexcept {
  try {
    Diagnostics::instance().warn_once(
        "worker-error", std::string("records lost to an error in the worker (") + what +
                            "); the program is not affected");
  } catch (...) {  // NOLINT(bugprone-empty-catch): nothing left to say it with
  }
}

void Worker::run() {
  thread_state().internal = true;
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  pthread_setname_np(pthread_self(), "pm2lat-worker");
  // The worker queries events while the program may be capturing a graph in global mode on
  // another thread (torch.cuda.graph): in the default mode that query would invalidate the
  // program's capture (pytorch#104487). Relaxed mode makes this thread's calls legal.
  if (const DriverApi* api = driver_api(); api && api->thread_exchange_stream_capture_mode) {
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    api->thread_exchange_stream_capture_mode(&mode);
  }
  sink_.start_loading_profiles();

  std::uint32_t idle_sleep_us = kFirstIdleSleepUs;
  while (!stop_.load(std::memory_order_acquire)) {
    const std::uint64_t before = work_done_;
    run_contained([this] { iteration(false); }, report_error);
    if (work_done_ != before) {
      idle_sleep_us = kFirstIdleSleepUs;
      continue;
    }
    pollfd p{wake_pipe_[0], POLLIN, 0};
    ::poll(&p, wake_pipe_[0] >= 0 ? 1 : 0, static_cast<int>(idle_sleep_us / 1000 + 1));
    idle_sleep_us = idle_sleep_us < kLastIdleSleepUs ? idle_sleep_us * 2 : kLastIdleSleepUs;
  }
  run_contained([this] { finalise(); }, report_error);
  // Said even when finalise stopped on an error midway: the exit must not wait for it.
  finished_.store(true, std::memory_order_release);
  if (done_pipe_[1] >= 0) {
    const char c = 'd';
    [[maybe_unused]] ssize_t n = ::write(done_pipe_[1], &c, 1);
  }
}

RingState Worker::ring_state() const noexcept {
  RingState state;
  state.launches_dropped = dropped_by_retired_rings_;
  for (ThreadRing* r = RingRegistry::instance().head(); r != nullptr; r = r->next) {
    // A launch reserved and not yet published (its thread may be stalled inside the driver
    // call, its record already here) waits as much as one in the ring; read first (see
    // oldest_open_seq).
    state.oldest_waiting_seq = std::min(state.oldest_waiting_seq, r->oldest_open_seq());
    if (const LaunchSlot* s = r->peek(); s != nullptr && s->seq < state.oldest_waiting_seq) {
      state.oldest_waiting_seq = s->seq;
    }
    state.launches_dropped += r->dropped();
  }
  return state;
}

void Worker::iteration(bool final) {
  sink_.adopt_profiles();
  builder_.release_held();
  // Passes alternate between rings and CUPTI's buffers, so that a backlog in the rings does
  // not pile up as launches waiting for records that are already there.
  CuptiActivity& activity = CuptiActivity::instance();
  for (int pass = 0; pass < kPassesPerIteration; ++pass) {
    // One clock read per pass: arrival times only feed timeouts of seconds.
    pass_ns_ = monotonic_ns();
    buffers_.clear();
    if (cupti_activity_) activity.take_completed(buffers_);
    // Then the rings, up to what each had published by now: a launch's slot is published
    // before its kernel can complete, so the records in these buffers mostly find their
    // launches waiting. Only what was there is drained, so that a thread launching without
    // pause cannot keep the worker from the records; and at most kPassSlots, shared among the
    // rings, so that CUPTI's buffers come back to the pool while the worker catches up (a record
    // ahead of its launch waits and is joined when the launch is drained).
    std::size_t rings = 0;
    for (ThreadRing* r = RingRegistry::instance().head(); r != nullptr; r = r->next) ++rings;
    const std::uint64_t share =
        std::max<std::uint64_t>(kMinRingShare, kPassSlots / std::max<std::size_t>(1, rings));
    const bool drained_any = drain_rings(final, share);
    const std::uint64_t seq_bound = launch_path_state().next_seq.load(std::memory_order_relaxed);
    for (const auto& b : buffers_) {
      activity.parse(
          b,
          [this, seq_bound, final](const KernelTiming& t) {
            ++work_done_;
            if (joiner_.records_waiting() >= kRecordsAheadDrainRings)
              drain_rings(final, kWholeRing);
            joiner_.on_timing(t, pass_ns_, seq_bound);
          },
          [this](const ExternalCorrelation& e) { joiner_.on_external(e); },
          [this](const TransferTiming& t) {
            sink_.add_transfer(transfer_kind_name(t.kind), t.bytes,
                               t.end_ns > t.start_ns ? t.end_ns - t.start_ns : 0);
          });
    }
    if (!drained_any && buffers_.empty()) break;
  }
  const std::uint64_t now = monotonic_ns();
  joiner_.end_pass(ring_state(), now, final);
  RingRegistry::instance().prune([this](ThreadRing* r) {
    // The ring of a finished thread goes away: keep its count of dropped launches.
    dropped_by_retired_rings_ += r->dropped();
    EventTimer::release(r);
  });
  sink_.flush_if_due(now);
  if (cupti_activity_ && now - last_cupti_flush_ns_ > kCuptiFlushNs) {
    activity.flush(false);
    last_cupti_flush_ns_ = now;
  }
}

bool Worker::drain_rings(bool final, std::uint64_t share) {
  bool drained_any = false;
  for (ThreadRing* r = RingRegistry::instance().head(); r != nullptr; r = r->next) {
    const std::uint64_t published = r->published();
    const std::uint64_t until =
        published - r->consumed() > share ? r->consumed() + share : published;
    drained_any |= drain_ring(r, final, until);
  }
  return drained_any;
}

bool Worker::drain_ring(ThreadRing* ring, bool final, std::uint64_t until) {
  bool drained_any = false;
  while (ring->consumed() < until) {
    LaunchSlot* s = ring->peek();
    if (s == nullptr || !handle_slot(ring, *s, final)) break;
    ring->pop();
    drained_any = true;
  }
  return drained_any;
}

bool Worker::handle_slot(ThreadRing* ring, const LaunchSlot& s, bool final) {
  ++work_done_;
  const bool events_timed = s.kind == SlotKind::kKernel &&
                            (s.flags & slot_flags::kEventsTimed) != 0 && s.result == 0 &&
                            (s.flags & slot_flags::kCaptured) == 0;
  if (!events_timed) {
    joiner_.on_slot(s, pass_ns_);
    return true;
  }
  double us = 0;
  EventTimer::Poll p = EventTimer::poll(ring, &s, &us);
  for (int waited = 0; final && p == EventTimer::Poll::kPending && waited < kFinalEventWaitMs;
       ++waited) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    p = EventTimer::poll(ring, &s, &us);
  }
  // Keep the slot (and its event pair) until the GPU is done with it.
  if (p == EventTimer::Poll::kPending && !final) return false;
  joiner_.on_events_timed(s,
                          p == EventTimer::Poll::kReady ? std::optional<double>(us) : std::nullopt);
  return true;
}

void Worker::finalise() {
  if (cupti_activity_) CuptiActivity::instance().flush(true);
  iteration(true);
  sink_.settle_profiles(finish_deadline_ns_.load(std::memory_order_acquire));
  builder_.release_held();
  ShimCounters& c = sink_.counters();
  c.passed_through = launch_path_state().passed_through.load(std::memory_order_relaxed);
  c.library_calls = library_calls_made();
  c.dropped = ring_state().launches_dropped;
  if (cupti_activity_) c.cupti_dropped += CuptiActivity::instance().records_dropped();
  sink_.close();
}

}  // namespace pm2lat::shim
