#include "launch_path/handle_cache.h"

#include <cstdlib>
#include <new>

namespace pm2lat::shim {

HandleCache::~HandleCache() { std::free(entries_.load(std::memory_order_relaxed)); }

HandleCache& HandleCache::instance() {
  static HandleCache* cache = new HandleCache();  // never destroyed: used until exit
  return *cache;
}

KernelInfo* HandleCache::find(std::uint64_t handle) const noexcept {
  Entry* entries = entries_.load(std::memory_order_acquire);
  if (entries == nullptr || handle == 0) return nullptr;
  const std::uint32_t gen = generation_.load(std::memory_order_acquire);
  std::uint32_t i = hash(handle);
  for (std::uint32_t n = 0; n < kProbe; ++n, ++i) {
    Entry& e = entries[i & (kCapacity - 1)];
    const std::uint64_t key = key_of(e).load(std::memory_order_acquire);
    if (key == handle) {
      return generation_of(e).load(std::memory_order_acquire) == gen ? &e.info : nullptr;
    }
    if (key == 0) return nullptr;
  }
  return nullptr;
}

KernelInfo* HandleCache::insert(std::uint64_t handle, const KernelFacts& facts) {
  if (handle == 0) return nullptr;
  std::lock_guard<std::mutex> lock(mu_);
  Entry* entries = entries_.load(std::memory_order_relaxed);
  if (entries == nullptr) {
    entries = static_cast<Entry*>(std::calloc(kCapacity, sizeof(Entry)));
    if (entries == nullptr) return nullptr;
    entries_.store(entries, std::memory_order_release);
  }
  const std::uint32_t gen = generation_.load(std::memory_order_acquire);
  std::uint32_t i = hash(handle);
  Entry* target = nullptr;
  for (std::uint32_t n = 0; n < kProbe; ++n, ++i) {
    Entry& e = entries[i & (kCapacity - 1)];
    const std::uint64_t key = key_of(e).load(std::memory_order_relaxed);
    if (key == handle) {
      // Another thread resolved the same handle first: keep its entry, readers may be on it.
      if (generation_of(e).load(std::memory_order_relaxed) == gen) return &e.info;
      target = &e;
      break;
    }
    if (key == 0) {
      if (target == nullptr) target = &e;
      break;
    }
    // A stale entry (from before an unload) can be reused, once we know the handle is not
    // further along the probe window.
    if (target == nullptr && generation_of(e).load(std::memory_order_relaxed) != gen) target = &e;
  }
  if (target == nullptr) return nullptr;
  KernelInfo& dst = target->info;
  static_cast<KernelFacts&>(dst) = facts;
  std::atomic_ref<std::uint64_t>(dst.last_geometry).store(0, std::memory_order_relaxed);
  std::atomic_ref<void*>(dst.nvtx_message).store(nullptr, std::memory_order_relaxed);
  generation_of(*target).store(gen, std::memory_order_release);
  key_of(*target).store(handle, std::memory_order_release);
  return &dst;
}

void HandleCache::reset_lock_after_fork() noexcept { new (&mu_) std::mutex(); }

}  // namespace pm2lat::shim
