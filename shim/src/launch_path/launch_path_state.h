// The few process-wide switches the launch path reads on every launch (relaxed atomic loads,
// no locks): whether the shim is ready, who records launches, how they are timed.
#pragma once

#include <atomic>
#include <cstdint>

namespace pm2lat::shim {

enum class RuntimeState : std::uint8_t {
  kUninitialised = 0,  // CUDA not initialised yet (or a fresh fork child)
  kInitialising,
  kReady,
  kShutDown,  // records flushed at exit; later launches pass through
  kDisabled,  // PM2LAT_DISABLE or a fatal start-up problem
};

// Who turns launches into slots.
enum class MetadataSource : std::uint8_t {
  kNone = 0,
  kCuptiCallbacks,  // CUPTI callback API (the subscriber slot was free)
  kHooks,           // our interposers (slot taken by another tool, CUPTI missing, or forced)
};

// How launches get their measured duration.
enum class TimingMode : std::uint8_t {
  kNone = 0,  // predict-only
  kCupti,     // CUPTI activity records
  kEvents,    // CUDA events around each launch (fallback)
};

struct LaunchPathState {
  std::atomic<RuntimeState> state{RuntimeState::kUninitialised};
  std::atomic<MetadataSource> metadata{MetadataSource::kNone};
  std::atomic<TimingMode> timing{TimingMode::kNone};
  // Push the launch's seq as a CUPTI external correlation id around hooked launches, so
  // activity records can be joined to launches recorded by hooks.
  std::atomic<bool> external_correlation{false};
  std::atomic<bool> nvtx{false};  // emit predict-only NVTX ranges around launches
  // Stream captures in progress (from the capture-begin/end interposers); while zero the
  // launch path does not ask the driver whether a stream is capturing.
  std::atomic<std::int32_t> captures_active{0};
  std::atomic<std::uint64_t> next_seq{0};
  // Launches that reached a hook before the shim was ready or after it shut down.
  std::atomic<std::uint64_t> passed_through{0};

  bool ready() const noexcept {
    return state.load(std::memory_order_acquire) == RuntimeState::kReady;
  }
  bool hooks_record() const noexcept {
    return ready() && metadata.load(std::memory_order_relaxed) == MetadataSource::kHooks;
  }
};

LaunchPathState& launch_path_state() noexcept;

}  // namespace pm2lat::shim
