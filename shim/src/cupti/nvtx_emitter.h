// Predict-only output for Nsight Systems: when another tool owns CUPTI, each hooked launch
// is wrapped in an NVTX range of domain "pm2lat" whose message is the kernel name and whose
// payload is the prediction (µs, first target) the worker last made for the same kernel and
// geometry. Costs nothing when no NVTX tool is attached.
#pragma once

#include <cstdint>
#include <string>

#include "launch_path/handle_cache.h"

namespace pm2lat::shim {

class NvtxEmitter {
 public:
  // Creates the domain (the first NVTX call loads the tool, so never from a launch).
  static void start(const std::string& first_target);
  static bool started() noexcept;
  // Launch path.
  static void push(KernelInfo* info, std::uint64_t geometry) noexcept;
  static void pop() noexcept;
};

}  // namespace pm2lat::shim
