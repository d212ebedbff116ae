// The shim's life cycle: nothing happens until the program initialises CUDA; then the
// configuration is read, the measurement mode chosen (CUPTI callbacks + activity, hooks +
// CUPTI activity, hooks + CUDA events, or predict-only when another tool owns CUPTI), the
// worker started and the exit paths armed. At exit (or SIGTERM/SIGINT) everything is
// flushed. A forked child starts from scratch.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "config.h"
#include "cupti/cupti_api.h"
#include "launch_path/launch_path_state.h"

namespace pm2lat::shim {

class Worker;

class Runtime {
 public:
  static Runtime& instance();

  // After a successful cuInit (from our cuInit interposer or InitializeInjection).
  void on_cuda_initialised() noexcept;
  // From a launch that reached us while CUDA initialisation went unseen.
  void ensure_started() noexcept;
  // Final flush and summary; idempotent. `signal_number` != 0 when called for a signal.
  void shutdown(int signal_number) noexcept;

  const CuptiApi* cupti() const noexcept { return cupti_ok_ ? &cupti_ : nullptr; }
  const Config& config() const noexcept { return config_; }

  // pthread_atfork child handler.
  void on_fork_child() noexcept;
  // From the library constructor: the process the library was loaded into. A process that
  // starts CUDA with another pid is a fork child, even if it forked before CUDA started.
  static void note_loaded() noexcept;

  // Description of the chosen mode, for the header and the summary.
  std::string mode_description() const;

 private:
  Runtime() = default;
  void start() noexcept;
  void choose_mode();

  Config config_;
  CuptiApi cupti_;
  bool cupti_ok_ = false;
  std::string cupti_holder_;  // who had the CUPTI subscriber slot, when taken
  std::string cupti_problem_;
  Worker* worker_ = nullptr;
  long owner_pid_ = 0;
  std::atomic<bool> shut_down_{false};
};

}  // namespace pm2lat::shim
