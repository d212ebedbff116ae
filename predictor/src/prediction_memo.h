// A per-thread memo of recent GEMM predictions. A program repeats the same kernels with the
// same shapes every step, so most predictions of a run are repeats; the memo turns them into
// a hash and a compare. Direct-mapped and fixed-size: bounded memory, no allocation, no
// lock (each thread has its own), and entries of a destroyed Predictor can never be
// returned (every Predictor gets a fresh generation number).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string_view>

#include "pm2lat/prediction.h"

namespace pm2lat::detail {

class PredictionMemo {
 public:
  static constexpr std::size_t kSlots = 4096;

  static std::uint64_t next_generation() noexcept {
    static std::atomic<std::uint64_t> gen{1};
    return gen.fetch_add(1, std::memory_order_relaxed);
  }

  // FNV-1a over raw bytes, for building keys.
  static std::uint64_t mix(std::uint64_t h, const void* data, std::size_t n) noexcept {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < n; ++i) {
      h ^= p[i];
      h *= 1099511628211ULL;
    }
    return h;
  }
  template <typename T>
  static std::uint64_t mix(std::uint64_t h, const T& v) noexcept {
    return mix(h, &v, sizeof v);
  }
  static std::uint64_t mix(std::uint64_t h, std::string_view s) noexcept {
    return mix(mix(h, s.data(), s.size()), s.size());
  }

  static bool find(std::uint64_t key, Prediction& out) noexcept {
    const Slot& s = table()[key % kSlots];
    if (s.key != key || key == 0) return false;
    out = s.value;
    return true;
  }
  static void store(std::uint64_t key, const Prediction& p) noexcept {
    Slot& s = table()[key % kSlots];
    s.key = key;
    s.value = p;
  }

 private:
  struct Slot {
    std::uint64_t key = 0;
    Prediction value;
  };
  static std::array<Slot, kSlots>& table() noexcept {
    thread_local std::array<Slot, kSlots> slots{};
    return slots;
  }
};

}  // namespace pm2lat::detail
