// Everything the shim keeps per program thread. Trivial and zero-initialised so that access
// costs one TLS lookup and no guard check; the ring is retired through a pthread key
// destructor instead of a C++ thread_local destructor.
#pragma once

#include <cstdint>

#include "launch_path/launch_slot.h"

namespace pm2lat::shim {

class ThreadRing;

// The library call (cuBLAS, cuBLASLt, cuDNN) the thread is inside, if any. Nested calls
// (cuBLAS calling cuBLASLt) keep the outermost context so the work is counted once.
struct LibraryCallState {
  std::uint32_t depth;
  OpPod op;
};

// A runtime launch in progress: the driver-level observation of the same launch consumes
// it (so the launch is recorded once, with both APIs named); if nothing at driver level saw
// it, the runtime hook records it itself.
struct RuntimePending {
  bool active;
  bool consumed;
  LaunchApi api;
  std::uint64_t handle;  // cudaKernel_t or host stub
  std::uint32_t grid[3];
  std::uint32_t block[3];
  std::uint32_t cluster[3];
  std::uint32_t smem;
  std::uint64_t stream;
};

inline constexpr int kMaxInFlight = 4;

struct ThreadState {
  ThreadRing* ring;
  std::uint32_t ring_epoch;
  std::uint16_t hook_depth;  // > 0 inside a launch hook: nested launch hooks pass through
  bool internal;             // a shim thread: never recorded
  bool ring_failed;          // ring allocation failed once: stop trying
  LaunchSlot* in_flight[kMaxInFlight];  // slots reserved by launches not yet returned
  std::uint8_t n_in_flight;
  LibraryCallState library;
  RuntimePending runtime;
};

extern thread_local ThreadState t_thread_state;

inline ThreadState& thread_state() noexcept { return t_thread_state; }

}  // namespace pm2lat::shim
