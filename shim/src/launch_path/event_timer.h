// The timing fallback when CUPTI is unavailable: a pair of CUDA events around each hooked
// launch. Each launching thread has its own pool of event pairs per CUDA context it launches
// in (an event can time only launches on its own context's streams, cuda.h cuEventRecord; a
// thread that switches devices needs one pool per device), created as its launches need them
// (a thread with a few launches in flight has a few pairs) and bounded per thread and per
// process; a launch finding none free is not timed. A pool knows its context's device, which
// the launch's slot carries to its record. The launch path takes a pair from its
// thread's free list and records it; the worker reads the elapsed time and hands the pair
// back through a single-producer/single-consumer queue. Never used inside stream capture (an
// event record would become a node of the user's graph).
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstdint>

#include "launch_path/launch_slot.h"
#include "launch_path/thread_ring.h"

namespace pm2lat::shim {

struct EventPairs {
  // Pairs a thread may have per context: launches in flight beyond it are not timed.
  static constexpr std::uint16_t kMaxPerThread = 1024;

  CUcontext context = nullptr;  // the context its events were created in
  std::uint8_t device = 0;      // that context's device ordinal

  CUevent start[kMaxPerThread] = {};
  CUevent end[kMaxPerThread] = {};
  std::uint16_t created = 0;  // launching thread
  std::uint16_t free[kMaxPerThread] = {};
  std::uint16_t free_count = 0;  // launching thread
  // Pairs the worker is done with, on their way back to the launching thread.
  std::uint16_t returned[kMaxPerThread] = {};
  std::atomic<std::uint32_t> returned_head{0};  // written by the worker
  std::uint32_t returned_tail = 0;              // launching thread
};

class EventTimer {
 public:
  // Event pairs in the whole process at most (two events each).
  static constexpr std::uint32_t kMaxPairs = 4096;

  // Launch path. `stream` is the stream the kernel is launched on, with a per-thread default
  // stream already turned into CU_STREAM_PER_THREAD. False: the launch is not timed.
  static bool before(ThreadRing* ring, LaunchSlot* slot, CUstream stream) noexcept;
  static void after(ThreadRing* ring, LaunchSlot* slot, CUstream stream) noexcept;

  enum class Poll { kReady, kPending, kFailed };
  // Worker. Once it returns kReady or kFailed the slot's pair is handed back.
  static Poll poll(ThreadRing* ring, const LaunchSlot* slot, double* elapsed_us) noexcept;
  static void release(ThreadRing* ring) noexcept;

  // Event pairs created so far in this process.
  static std::uint32_t pairs_created() noexcept;
};

}  // namespace pm2lat::shim
