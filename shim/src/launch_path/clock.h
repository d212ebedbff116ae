// Host timestamps in CUPTI's time base (CLOCK_REALTIME on Linux), read through the vDSO:
// no system call.
#pragma once

#include <time.h>

#include <cstdint>

namespace pm2lat::shim {

inline constexpr std::uint64_t kNsPerMs = 1'000'000;

inline std::uint64_t realtime_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

inline std::uint64_t monotonic_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace pm2lat::shim
