// Launches waiting for their CUPTI record, keyed by correlation id (callback mode) or seq
// (hook mode). CUPTI hands records over in batches, so hundreds of thousands of launches can
// be waiting at once on a busy GPU: slots live in a reusable slab and an open-addressing
// index finds them, with no allocation per launch once warm.
#pragma once

#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

#include "launch_path/launch_slot.h"

namespace pm2lat::shim {

class PendingLaunches {
 public:
  struct Entry {
    LaunchSlot slot;
    std::uint64_t arrived_ns;
    std::uint64_t key;
    std::size_t bucket;  // where the index points at it, kept current across growth
    bool live;
  };

  // Stores a launch; an existing entry with the same key is replaced.
  void insert(std::uint64_t key, const LaunchSlot& slot, std::uint64_t arrived_ns);
  // The launch with `key`, or null.
  Entry* find(std::uint64_t key) noexcept;
  void erase(std::uint64_t key) noexcept;
  // Erases an entry found with find() or oldest(), without hashing its key again.
  void erase(Entry* entry) noexcept;
  // The oldest launch still waiting (insertion order), or null.
  std::pair<std::uint64_t, Entry*> oldest() noexcept;
  std::size_t size() const noexcept { return size_; }

 private:
  static constexpr std::uint32_t kEmpty = ~std::uint32_t{0};
  static constexpr std::uint32_t kTombstone = kEmpty - 1;
  static constexpr std::size_t kMinBuckets = 1024;

  struct Bucket {
    std::uint64_t key;
    std::uint32_t index;  // into slab_, or kEmpty / kTombstone
  };

  std::size_t bucket_of(std::uint64_t key) const noexcept;
  void grow();

  std::vector<Bucket> buckets_;
  std::size_t used_buckets_ = 0;  // live + tombstones
  std::vector<Entry> slab_;
  std::vector<std::uint32_t> free_;
  std::deque<std::pair<std::uint64_t, std::uint32_t>> order_;  // (key, slab index)
  std::size_t size_ = 0;
};

}  // namespace pm2lat::shim
