// The timing fallback when CUPTI is unavailable: a pair of CUDA events around each hooked
// launch. Events are bound to ring slots (pair i serves slot i), created once per thread on
// its first timed launch, so the launch path only records them. The worker reads a slot's
// elapsed time before releasing the slot, which is what makes the pair free again.
// Never used inside stream capture (an event record would become a node of the user's graph).
#pragma once

#include <cuda.h>

#include <cstdint>

#include "launch_path/launch_slot.h"
#include "launch_path/thread_ring.h"

namespace pm2lat::shim {

struct EventPairs {
  std::uint32_t count = 0;
  bool usable = false;
  CUevent* start = nullptr;
  CUevent* end = nullptr;
};

class EventTimer {
 public:
  // Launch path. `stream` is the stream the kernel is launched on, with a per-thread default
  // stream already turned into CU_STREAM_PER_THREAD.
  static bool before(ThreadRing* ring, const LaunchSlot* slot, CUstream stream) noexcept;
  static void after(ThreadRing* ring, LaunchSlot* slot, CUstream stream) noexcept;

  enum class Poll { kReady, kPending, kFailed };
  // Worker.
  static Poll poll(ThreadRing* ring, const LaunchSlot* slot, double* elapsed_us) noexcept;
  static void release(ThreadRing* ring) noexcept;
};

}  // namespace pm2lat::shim
