// What the driver saw of one kernel launch: name and launch geometry.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pm2lat {

struct Dim3 {
  std::uint32_t x = 1;
  std::uint32_t y = 1;
  std::uint32_t z = 1;

  constexpr std::uint64_t volume() const noexcept {
    return std::uint64_t{x} * std::uint64_t{y} * std::uint64_t{z};
  }
  friend constexpr bool operator==(const Dim3&, const Dim3&) = default;
};

// The threads a launch starts, as a double: the largest grid of 1024-thread blocks holds more
// than 2^64.
constexpr double launched_threads(const Dim3& grid, const Dim3& block) noexcept {
  return static_cast<double>(grid.volume()) * static_cast<double>(block.volume());
}

// CUDA's largest grid extents (CUDA C++ Programming Guide, "Technical Specifications per
// Compute Capability": 2^31 - 1 along x, 65535 along y and z).
inline constexpr std::uint32_t kMaxGridX = 2147483647u;
inline constexpr std::uint32_t kMaxGridYZ = 65535u;

// A count of blocks launched along one grid axis: at least one, at most the axis's limit.
constexpr std::uint32_t grid_extent_for(double blocks, std::uint32_t limit) noexcept {
  if (!(blocks >= 1)) return 1;
  return blocks >= limit ? limit : static_cast<std::uint32_t>(blocks);
}
constexpr std::uint32_t grid_x_for(double blocks) noexcept {
  return grid_extent_for(blocks, kMaxGridX);
}
constexpr std::uint32_t grid_yz_for(double blocks) noexcept {
  return grid_extent_for(blocks, kMaxGridYZ);
}

struct KernelLaunch {
  // The kernel's name as the source gives it: mangled (driver/CUPTI) or demangled (Kineto).
  std::string name;
  Dim3 grid;
  Dim3 block;
  Dim3 cluster;                            // 1x1x1 when no cluster was requested
  std::uint32_t shared_mem_bytes = 0;      // static + dynamic
  std::uint32_t registers_per_thread = 0;  // 0 = unknown
  // Integer scalar launch arguments in order, when the source could decode them (Triton
  // element counts, ATen numel). Empty when unknown.
  std::vector<std::int64_t> int_args;

  std::uint64_t blocks() const noexcept { return grid.volume(); }
  std::uint64_t threads_per_block() const noexcept { return block.volume(); }
};

}  // namespace pm2lat
