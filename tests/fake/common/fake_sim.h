// The simulated GPU shared by the fake driver and the tests that check it: deterministic
// kernel durations and the device the fake pretends to be. Tests compute expected
// measurements with the same function the fake uses to time kernels.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace fake_sim {

inline std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// Base cost of every kernel in ns; FAKE_CUDA_BASE_NS overrides it (throughput tests use
// short kernels so they finish quickly).
// Read once: it is on every simulated launch, and the environment is fixed per process.
inline std::uint64_t base_ns() {
  static const std::uint64_t base = [] {
    const char* v = std::getenv("FAKE_CUDA_BASE_NS");
    return v != nullptr ? std::strtoull(v, nullptr, 10) : std::uint64_t{1500};
  }();
  return base;
}

// Duration of one kernel: a base cost, a name-dependent part and a part that grows with the
// work (blocks x threads). Integer nanoseconds, so measurements compare exactly.
inline std::uint64_t kernel_duration_ns(std::string_view name, std::uint32_t gx, std::uint32_t gy,
                                        std::uint32_t gz, std::uint32_t bx, std::uint32_t by,
                                        std::uint32_t bz, std::uint64_t base = base_ns()) {
  const std::uint64_t blocks = std::uint64_t{gx} * gy * gz;
  const std::uint64_t threads = std::uint64_t{bx} * by * bz;
  return base + fnv1a(name) % 997 + (blocks * threads) / 64;
}

// Duration of one memory copy or memset: a base cost and the bytes at a link's rate, 25
// bytes/ns across the host link (a PCIe 4.0 x16 link's achieved rate) and 1000 bytes/ns within
// the device. Integer nanoseconds.
inline std::uint64_t transfer_duration_ns(std::uint64_t bytes, bool crosses_host_link) {
  return base_ns() + bytes / (crosses_host_link ? 25 : 1000);
}

struct DeviceModel {
  const char* name;
  int cc_major;
  int cc_minor;
  int sm_count;
  int clock_khz;
  int max_smem_per_block;
};

// The model one FAKE_CUDA_DEVICE entry names: A100 an A100; RTX4070L a GeForce RTX 4070 Laptop
// GPU (a part no catalogue lists, named like a desktop card it is not: 36 SMs of compute
// capability 8.9, 2175 MHz boost, 99 KB of shared memory per block); A100MIG the smallest MIG
// partition of an 80 GB A100 as its driver names it (its 14 SMs, NVIDIA's MIG user guide);
// anything else an H100.
inline DeviceModel named_device_model(std::string_view v) {
  if (v == "A100") return {"NVIDIA A100-SXM4-80GB", 8, 0, 108, 1410000, 166912};
  if (v == "RTX4070L") return {"NVIDIA GeForce RTX 4070 Laptop GPU", 8, 9, 36, 2175000, 101376};
  if (v == "A100MIG") return {"NVIDIA A100-SXM4-80GB MIG 1g.10gb", 8, 0, 14, 1410000, 166912};
  return {"NVIDIA H100 80GB HBM3", 9, 0, 132, 1980000, 232448};
}

// The devices the fake has: FAKE_CUDA_DEVICE is a comma-separated list of models, one per
// ordinal ("H100,A100": device 0 an H100, device 1 an A100, as on a workstation with two
// different GPUs); unset, one H100.
inline constexpr int kMaxDevices = 8;

inline int device_count() {
  const char* v = std::getenv("FAKE_CUDA_DEVICE");
  if (v == nullptr) return 1;
  int n = 1;
  for (const char* c = v; *c != '\0'; ++c) n += *c == ',' ? 1 : 0;
  return n < kMaxDevices ? n : kMaxDevices;
}

// Device `ordinal`'s model (ordinal < device_count()).
inline DeviceModel device_model(int ordinal = 0) {
  const char* v = std::getenv("FAKE_CUDA_DEVICE");
  if (v == nullptr) return named_device_model({});
  std::string_view list(v);
  for (int i = 0; i < ordinal; ++i) {
    const std::size_t comma = list.find(',');
    if (comma == std::string_view::npos) return named_device_model({});
    list.remove_prefix(comma + 1);
  }
  return named_device_model(list.substr(0, list.find(',')));
}

}  // namespace fake_sim
