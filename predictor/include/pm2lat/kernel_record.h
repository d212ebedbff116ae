// One kernel execution as every layer passes it around: what ran, in which context, and
// (when measured) how long it took.
#pragma once

#include <cstdint>
#include <optional>

#include "pm2lat/kernel_launch.h"
#include "pm2lat/op_context.h"

namespace pm2lat {

// What a latency covers. CUPTI kernel durations are device time only; a CUDA-event timing
// around a framework call also includes host dispatch (and floors at tens of µs).
enum class TimeBasis : std::uint8_t {
  kKernel = 0,  // device execution of the kernel
  kCall = 1,    // a whole library/framework call timed with events, host dispatch included
};

std::string_view to_string(TimeBasis b) noexcept;

struct KernelRecord {
  std::uint64_t seq = 0;    // order of launch in the process
  std::uint64_t ts_ns = 0;  // start timestamp (device clock when measured)
  std::int32_t device = 0;
  std::uint64_t stream = 0;
  std::uint64_t graph_id = 0;  // non-zero when the kernel ran as a CUDA graph node
  std::uint64_t graph_node_id = 0;
  KernelLaunch launch;
  OpContext op;
  std::optional<double> measured_us;
  TimeBasis basis = TimeBasis::kKernel;
};

}  // namespace pm2lat
