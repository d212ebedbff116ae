#include "runtime.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>

#include "collect/worker.h"
#include "cupti/cupti_activity_collector.h"
#include "cupti/cupti_launch_callbacks.h"
#include "cupti/nvtx_emitter.h"
#include "diagnostics.h"
#include "driver_api.h"
#include "interpose/entry_points.h"
#include "launch_path/handle_cache.h"
#include "launch_path/handle_kinds.h"
#include "launch_path/string_table.h"
#include "launch_path/thread_ring.h"
#include "launch_path/thread_state.h"

namespace pm2lat::shim {

namespace {

constexpr std::uint32_t kCuptiFlushPeriodMs = 250;
// Generous: a loaded machine can slow the final flush (and the profiles still loading) a lot;
// only a worker that is truly stuck makes the exit wait this long. Two thirds of it (20 s) go
// to profiles still loading, the rest to writing the records (with or without predictions).
constexpr std::uint32_t kExitFlushTimeoutMs = 30000;
constexpr int kSignalFlushTimeoutMs = 3000;

bool g_forked_child = false;
long g_load_pid = 0;
bool g_exit_hooks_armed = false;

std::string read_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (char& c : raw) {
    if (c == '\0') c = ' ';
  }
  while (!raw.empty() && raw.back() == ' ') raw.pop_back();
  return raw;
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return {};
  return buf;
}

// More devices than any host has (8 on an HGX board, 16 in a DGX-2); a device past it is
// described as unknown and its kernels go unscored.
constexpr int kMaxDescribedDevices = 64;

// Every device as the driver names and describes it, by ordinal, into the sink's setup, so
// each record can be scored against the GPU it ran on (not only device 0's: a process may run
// on `cuda:1` of a workstation with two models); what the driver does not answer stays empty
// or zero. Once, at start, never on the launch path.
void describe_devices(const DriverApi* api, SinkSetup& sink) {
  int count = 0;
  if (api == nullptr || api->device_get_count == nullptr || api->device_get == nullptr ||
      api->device_get_count(&count) != CUDA_SUCCESS || count <= 0)
    return;
  sink.devices.resize(static_cast<std::size_t>(std::min(count, kMaxDescribedDevices)));
  for (int ordinal = 0; ordinal < static_cast<int>(sink.devices.size()); ++ordinal) {
    RunDevice& out = sink.devices[static_cast<std::size_t>(ordinal)];
    CUdevice dev = 0;
    if (api->device_get(&dev, ordinal) != CUDA_SUCCESS) continue;
    char name[256] = {};
    if (api->device_get_name != nullptr &&
        api->device_get_name(name, sizeof(name) - 1, dev) == CUDA_SUCCESS)
      out.name = name;
    if (api->device_get_attribute == nullptr) continue;
    auto attribute = [&](CUdevice_attribute a) {
      int v = 0;
      return api->device_get_attribute(&v, a, dev) == CUDA_SUCCESS ? v : 0;
    };
    out.hardware = {attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
                    attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR),
                    attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)};
  }
}

void at_exit() { Runtime::instance().shutdown(0); }

// `pm2lat run` passes a directory: records.<rank>.jsonl there (records.<pid>.jsonl when no
// rank is known), with the pid added for a forked child or when the name is taken, so no two
// processes ever write one file.
void choose_output_paths(const Config& c, long pid, std::string* records, std::string* summary) {
  records->clear();
  summary->clear();
  if (c.out.empty()) return;
  std::error_code ec;
  const bool dir = c.out.back() == '/' || std::filesystem::is_directory(c.out, ec);
  if (!dir) {
    *records = expand_path(c.out, pid, g_forked_child);
    std::string stem = *records;
    if (stem.size() > 6 && stem.compare(stem.size() - 6, 6, ".jsonl") == 0)
      stem.resize(stem.size() - 6);
    *summary = stem + ".summary.json";
    return;
  }
  std::filesystem::create_directories(c.out, ec);
  std::string id = c.rank_known ? std::to_string(c.rank) : std::to_string(pid);
  const std::filesystem::path d(c.out);
  if (g_forked_child ||
      (c.rank_known && std::filesystem::exists(d / ("records." + id + ".jsonl"), ec))) {
    id += "." + std::to_string(pid);
  }
  *records = (d / ("records." + id + ".jsonl")).string();
  *summary = (d / ("summary." + id + ".json")).string();
}

// SIGTERM/SIGINT with their default action would kill the process without running atexit:
// flush first (bounded), then die of the same signal, so the exit status is unchanged.
void on_fatal_signal(int sig) {
  Runtime::instance().shutdown(sig);
  signal(sig, SIG_DFL);
  raise(sig);
}

void arm_signal(int sig) {
  struct sigaction current {};
  if (sigaction(sig, nullptr, &current) != 0) return;
  // The program (or Python) handles it itself: leave it alone.
  if ((current.sa_flags & SA_SIGINFO) != 0 || current.sa_handler != SIG_DFL) return;
  struct sigaction sa {};
  sa.sa_handler = on_fatal_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(sig, &sa, nullptr);
}

void fork_prepare() {
  StringTable::instance().lock_for_fork();
  HandleCache::instance().lock_for_fork();
  HandleKinds::instance().lock_for_fork();
}

void fork_parent() {
  HandleKinds::instance().unlock_after_fork();
  HandleCache::instance().unlock_after_fork();
  StringTable::instance().unlock_after_fork();
}

void fork_child() {
  StringTable::instance().reset_lock_after_fork();
  HandleCache::instance().reset_lock_after_fork();
  HandleKinds::instance().reset_lock_after_fork();
  Runtime::instance().on_fork_child();
}

}  // namespace

Runtime& Runtime::instance() {
  static Runtime* r = new Runtime();  // never destroyed: used from atexit and signal handlers
  return *r;
}

void Runtime::on_cuda_initialised() noexcept {
  LaunchPathState& lp = launch_path_state();
  RuntimeState expected = RuntimeState::kUninitialised;
  if (!lp.state.compare_exchange_strong(expected, RuntimeState::kInitialising,
                                        std::memory_order_acq_rel)) {
    return;  // started, starting (on this or another thread), shut down or disabled
  }
  start();
}

void Runtime::ensure_started() noexcept { on_cuda_initialised(); }

void Runtime::note_loaded() noexcept { g_load_pid = static_cast<long>(getpid()); }

std::string Runtime::mode_description() const {
  const LaunchPathState& lp = launch_path_state();
  std::string m =
      lp.metadata.load() == MetadataSource::kCuptiCallbacks ? "cupti-callbacks" : "hooks";
  switch (lp.timing.load()) {
    case TimingMode::kCupti: m += "+cupti-activity"; break;
    case TimingMode::kEvents: m += "+cuda-events"; break;
    case TimingMode::kNone: m += "+predict-only"; break;
  }
  return m;
}

void Runtime::choose_mode() {
  LaunchPathState& lp = launch_path_state();
  Diagnostics& diag = Diagnostics::instance();
  MetadataSource metadata = MetadataSource::kHooks;
  TimingMode timing = TimingMode::kNone;
  bool predict_only = false;
  const bool want_cupti = config_.cupti != CuptiUse::kOff &&
                          config_.timing != TimingSource::kEvents &&
                          config_.timing != TimingSource::kNone;
  if (want_cupti) {
    std::string reason;
    if (!cupti_.load(config_.cupti_library, &reason)) {
      cupti_problem_ = reason;
    } else {
      // Subscribing is also how we learn whether another tool (Nsight, torch.profiler) owns
      // CUPTI; if it does we must not touch the activity API either.
      std::string holder;
      switch (CuptiCallbacks::instance().subscribe(&cupti_, &holder, &reason)) {
        case SubscribeResult::kSubscribed:
          cupti_ok_ = true;
          metadata = MetadataSource::kCuptiCallbacks;
          if (config_.launch_source == LaunchSource::kHooks) {
            // The slot was only probed: leave it to other tools.
            CuptiCallbacks::instance().unsubscribe();
            metadata = MetadataSource::kHooks;
          }
          break;
        case SubscribeResult::kSlotTaken:
          cupti_holder_ = holder.empty() ? "another tool" : holder;
          predict_only = true;
          break;
        case SubscribeResult::kFailed: cupti_problem_ = reason; break;
      }
      if (cupti_ok_) {
        const bool external = metadata == MetadataSource::kHooks;
        if (CuptiActivity::instance().start(&cupti_, external, kCuptiFlushPeriodMs, &reason)) {
          timing = TimingMode::kCupti;
          lp.external_correlation.store(external, std::memory_order_relaxed);
        } else {
          cupti_problem_ = reason;
          cupti_ok_ = false;
          metadata = MetadataSource::kHooks;
        }
      }
    }
  }
  if (predict_only) {
    diag.warn_once("cupti-taken", "CUPTI is in use by " + cupti_holder_ +
                                      "; predicting only (no measurements), predictions are also "
                                      "emitted as NVTX ranges in domain \"pm2lat\"");
  } else if (timing == TimingMode::kNone && config_.timing != TimingSource::kNone) {
    const DriverApi* api = driver_api();
    if (config_.timing == TimingSource::kCupti) {
      diag.warn_once("cupti-unavailable",
                     "CUPTI unavailable (" + cupti_problem_ +
                         "); PM2LAT_TIMING=cupti, so kernels are not measured");
    } else if (api != nullptr && api->event_create && api->event_record && api->event_query &&
               api->event_elapsed_time) {
      timing = TimingMode::kEvents;
      if (!cupti_problem_.empty()) {
        diag.warn_once("cupti-unavailable", "CUPTI unavailable (" + cupti_problem_ +
                                                "); timing kernels with CUDA events instead");
      }
    }
  }
  const bool nvtx =
      config_.nvtx == NvtxUse::kOn || (config_.nvtx == NvtxUse::kAuto && predict_only);
  if (nvtx) NvtxEmitter::start(config_.targets.empty() ? std::string() : config_.targets.front());
  lp.metadata.store(metadata, std::memory_order_relaxed);
  lp.timing.store(timing, std::memory_order_relaxed);
  lp.nvtx.store(nvtx, std::memory_order_relaxed);
}

void Runtime::start() noexcept {
  LaunchPathState& lp = launch_path_state();
  ThreadState& ts = thread_state();
  const bool was_internal = ts.internal;
  ts.internal = true;  // CUDA calls made while starting are ours, not the program's
  try {
    config_ = Config::from_environment();
    Diagnostics& diag = Diagnostics::instance();
    diag.set_level(config_.log);
    if (config_.disabled) {
      lp.state.store(RuntimeState::kDisabled, std::memory_order_release);
      ts.internal = was_internal;
      return;
    }
    for (const auto& p : config_.problems) diag.warn_once(p, p);
    RingRegistry::instance().set_ring_capacity(config_.ring_slots);
    owner_pid_ = static_cast<long>(getpid());
    if (g_load_pid != 0 && g_load_pid != owner_pid_) g_forked_child = true;
    const DriverApi* api = driver_api(
        reinterpret_cast<PFN_cuGetProcAddress_v12000>(real_of(EntryPoint::kGetProcAddressV2)));
    if (api != nullptr) {
      if (const std::string missing = missing_capabilities(*api); !missing.empty()) {
        diag.warn_once("driver-capabilities", missing);
      }
    }
    choose_mode();

    WorkerSetup setup;
    setup.joiner.metadata = lp.metadata.load();
    setup.joiner.timing = lp.timing.load();
    setup.joiner.predict_only = setup.joiner.timing == TimingMode::kNone;
    SinkSetup& sink = setup.sink;
    choose_output_paths(config_, owner_pid_, &sink.records_path, &sink.summary_json_path);
    sink.summary = config_.summary == "stderr" || config_.summary.empty()
                       ? config_.summary
                       : expand_path(config_.summary, owner_pid_, g_forked_child);
    sink.targets = config_.targets;
    describe_devices(api, sink);
    sink.header.pid = owner_pid_;
    sink.header.rank = config_.rank;
    sink.header.host = host_name();
    sink.header.command = read_command_line();
    sink.mode = mode_description();
    sink.predict_only = setup.joiner.predict_only;
    sink.flush_ms = config_.flush_ms;
    sink.drift_pct = config_.drift_pct;
    worker_ = new Worker(std::move(setup));
    worker_->start();

    if (!g_exit_hooks_armed) {
      g_exit_hooks_armed = true;
      std::atexit(at_exit);
      arm_signal(SIGTERM);
      arm_signal(SIGINT);
      pthread_atfork(fork_prepare, fork_parent, fork_child);
    }
    diag.info("started: " + mode_description());
    lp.state.store(RuntimeState::kReady, std::memory_order_release);
  } catch (const std::exception& e) {
    Diagnostics::instance().warn_once(
        "start", std::string("cannot start: ") + e.what() + "; the program runs unobserved");
    lp.state.store(RuntimeState::kDisabled, std::memory_order_release);
  }
  ts.internal = was_internal;
}

void Runtime::shutdown(int signal_number) noexcept {
  if (static_cast<long>(getpid()) != owner_pid_ || worker_ == nullptr) return;
  if (shut_down_.exchange(true)) return;
  launch_path_state().state.store(RuntimeState::kShutDown, std::memory_order_release);
  if (signal_number == 0) {
    worker_->finish(kExitFlushTimeoutMs);
    return;
  }
  // In a signal handler: only async-signal-safe calls. The worker does the work.
  const int done = worker_->request_finish_from_signal(kSignalFlushTimeoutMs);
  if (done >= 0) {
    pollfd p{done, POLLIN, 0};
    poll(&p, 1, kSignalFlushTimeoutMs);
  }
}

void Runtime::on_fork_child() noexcept {
  // The child has none of the parent's threads (its worker, CUPTI's): forget their state
  // without touching it, and start again if the child initialises CUDA itself.
  g_forked_child = true;
  worker_ = nullptr;
  owner_pid_ = 0;
  cupti_ok_ = false;
  cupti_holder_.clear();
  cupti_problem_.clear();
  shut_down_.store(false);
  LaunchPathState& lp = launch_path_state();
  lp.metadata.store(MetadataSource::kNone);
  lp.timing.store(TimingMode::kNone);
  lp.external_correlation.store(false);
  lp.nvtx.store(false);
  lp.captures_active.store(0);
  lp.passed_through.store(0);
  RingRegistry::instance().reset_after_fork();
  RingRegistry::instance().bump_epoch();
  HandleCache::instance().invalidate_all();
  Diagnostics::instance().reset_lock_after_fork();
  CuptiActivity::instance().reset_after_fork();
  CuptiCallbacks::instance().reset_after_fork();
  ThreadState& ts = thread_state();
  ts.n_in_flight = 0;
  ts.hook_depth = 0;
  lp.state.store(RuntimeState::kUninitialised, std::memory_order_release);
}

}  // namespace pm2lat::shim
