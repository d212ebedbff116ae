// The launch fast path shared by every source of launch metadata (driver interposers,
// runtime interposers, CUPTI callbacks): reserve a slot in the calling thread's ring, copy
// geometry, handle info, a bounded slice of scalar arguments and the current library call
// into it. No allocation, lock, system call or log, except on a handle's first launch, when
// its name and parameter layout are resolved once.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "launch_path/handle_cache.h"
#include "launch_path/launch_slot.h"

namespace pm2lat::shim {

struct LaunchCall {
  LaunchApi api = LaunchApi::kUnknown;
  std::uint64_t handle = 0;
  std::uint32_t grid[3] = {1, 1, 1};
  std::uint32_t block[3] = {1, 1, 1};
  std::uint32_t cluster[3] = {1, 1, 1};
  std::uint32_t smem = 0;
  std::uint64_t stream = 0;
  void** params = nullptr;
  void** extra = nullptr;
  bool cooperative = false;
  const char* name_hint = nullptr;  // the kernel's name when the caller already has it
  bool host_stub = false;           // `handle` is a runtime host stub, not a driver handle
};

// Fills `call` from cuLaunchKernelEx's config (grid, block, stream, cluster, cooperative).
void read_launch_config(const CUlaunchConfig* config, LaunchCall& call) noexcept;

// Reserves and fills a kernel slot. Null when the ring is full (the launch is counted as
// dropped) or the thread cannot have a ring. The slot stays invisible to the worker until
// commit_slot().
LaunchSlot* begin_kernel_slot(const LaunchCall& call, std::uint32_t correlation_id,
                              std::uint16_t extra_flags) noexcept;
// Reserves a slot for a non-launch event (graph bookkeeping); seq and timestamp are set.
LaunchSlot* begin_event_slot(SlotKind kind) noexcept;
void commit_slot(LaunchSlot* slot, std::int32_t result) noexcept;

// The handle's cached info, resolving it on first sight (a host stub is never shown to the
// driver; a launch seen by a CUPTI callback asks only what its handle's kind allows). Sets
// *first when it was resolved now. Never null.
const KernelInfo* kernel_info(std::uint64_t handle, const char* name_hint, bool host_stub,
                              bool from_callback, bool* first) noexcept;

// A 64-bit digest of what a prediction depends on at launch (name, grid, block, smem):
// lets the worker publish a prediction that the launch path may reuse for NVTX.
std::uint64_t geometry_digest(std::uint32_t name_id, const std::uint32_t grid[3],
                              const std::uint32_t block[3], std::uint32_t smem) noexcept;

}  // namespace pm2lat::shim
