// What the shim knows about each launched handle (CUfunction, CUkernel or runtime host
// stub): its interned name, registers and the layout of its first scalar parameters.
// Filled on a handle's first launch; afterwards the launch path finds it with a few atomic
// loads. Module/library unloads invalidate everything, since the driver reuses handles.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

namespace pm2lat::shim {

inline constexpr int kMaxCachedParams = 8;

// What the driver says about a handle, resolved once.
struct KernelFacts {
  std::uint32_t name_id = 0;
  std::uint32_t registers = 0;
  std::uint32_t static_smem = 0;
  std::uint8_t n_params = 0;  // parameters described below (the first ones, <= 8)
  std::uint8_t param_size[kMaxCachedParams] = {};
  std::uint16_t param_offset[kMaxCachedParams] = {};
};

struct KernelInfo : KernelFacts {
  // Published by the worker for NVTX emission in predict-only mode: the last prediction for
  // the first target and the launch geometry it was made for. Plain values read and written
  // through std::atomic_ref: the cache's table is zeroed memory (see HandleCache).
  std::uint64_t last_geometry;
  double last_prediction_us;
  void* nvtx_message;
};

class HandleCache {
 public:
  static constexpr std::uint32_t kCapacity = 1u << 16;
  static constexpr std::uint32_t kProbe = 32;

  HandleCache() = default;
  HandleCache(const HandleCache&) = delete;
  HandleCache& operator=(const HandleCache&) = delete;
  ~HandleCache();

  static HandleCache& instance();

  // Lock-free. Null on a miss or after invalidate_all().
  KernelInfo* find(std::uint64_t handle) const noexcept;
  // Stores `info` for `handle` (miss path, under a lock); returns the cached copy, or null
  // when the probe window is full of live entries (the caller then works uncached).
  KernelInfo* insert(std::uint64_t handle, const KernelFacts& facts);
  void invalidate_all() noexcept { generation_.fetch_add(1, std::memory_order_acq_rel); }

  // Around fork: hold the lock so the child never inherits a half-updated table.
  void lock_for_fork() noexcept { mu_.lock(); }
  void unlock_after_fork() noexcept { mu_.unlock(); }
  void reset_lock_after_fork() noexcept;

 private:
  // Zero is an empty entry. The table is calloc'd: its pages are only resident once an entry
  // on them is used (a run launches dozens to thousands of distinct kernels, not kCapacity),
  // so its fields are plain values, accessed through std::atomic_ref.
  struct Entry {
    std::uint64_t key;
    std::uint32_t generation;
    KernelInfo info;
  };
  static std::atomic_ref<std::uint64_t> key_of(Entry& e) noexcept {
    return std::atomic_ref<std::uint64_t>(e.key);
  }
  static std::atomic_ref<std::uint32_t> generation_of(Entry& e) noexcept {
    return std::atomic_ref<std::uint32_t>(e.generation);
  }

  static std::uint32_t hash(std::uint64_t k) noexcept {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return static_cast<std::uint32_t>(k);
  }

  std::atomic<Entry*> entries_{nullptr};
  std::atomic<std::uint32_t> generation_{1};
  std::mutex mu_;
};

}  // namespace pm2lat::shim
