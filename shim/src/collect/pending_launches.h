// Launches waiting for their CUPTI record, keyed by correlation id (callback mode) or seq
// (hook mode). CUPTI hands records over in batches, so hundreds of thousands of launches can
// be waiting at once on a busy GPU, and the worker inserts and joins one per launch: both
// must cost tens of nanoseconds. Slots live in fixed chunks that never move (a growing
// table never copies them) and are reused last-freed-first, so the hot ones stay in cache;
// an open-addressing index with backward-shift deletion finds them without tombstones (which
// made probes walk ever longer and forced whole-table rebuilds under churn).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
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
    bool live;
  };

  PendingLaunches();
  ~PendingLaunches();
  PendingLaunches(const PendingLaunches&) = delete;
  PendingLaunches& operator=(const PendingLaunches&) = delete;

  // Stores a kernel launch (a kKernel slot); an existing entry with the same key is replaced.
  void insert(std::uint64_t key, const LaunchSlot& slot, std::uint64_t arrived_ns);
  // The launch with `key`, or null.
  Entry* find(std::uint64_t key) noexcept;
  void erase(std::uint64_t key) noexcept;
  // Erases an entry found with find() or oldest().
  void erase(Entry* entry) noexcept;
  // The oldest launch still waiting (insertion order), or null.
  std::pair<std::uint64_t, Entry*> oldest() noexcept;
  std::size_t size() const noexcept { return size_; }
  // After a burst, gives most of the index back (never below its starting size). Called once
  // per pass of the worker rather than on every erase: a table that shrinks while a batch of
  // records drains it would only grow again with the next batch of launches.
  void compact();

 private:
  static constexpr std::uint32_t kEmpty = ~std::uint32_t{0};
  static constexpr unsigned kMinBucketBits = 10;
  static constexpr unsigned kChunkBits = 12;  // 4096 entries (1.5 MiB) per chunk

  struct Bucket {
    std::uint64_t key;
    std::uint32_t index;  // into the entry chunks, or kEmpty
  };

  std::size_t home_of(std::uint64_t key) const noexcept;
  // The bucket holding `key`, or the empty bucket where it would go.
  std::size_t bucket_of(std::uint64_t key) const noexcept;
  void rebuild(unsigned bits);
  Entry& entry(std::uint32_t index) noexcept {
    return chunks_[index >> kChunkBits][index & ((1u << kChunkBits) - 1)];
  }
  std::uint32_t allocate_entry();

  std::vector<Bucket> buckets_;
  unsigned bits_ = 0;
  std::vector<std::unique_ptr<Entry[]>> chunks_;
  std::uint32_t entries_made_ = 0;
  std::vector<std::uint32_t> free_;
  std::deque<std::pair<std::uint64_t, std::uint32_t>> order_;  // (key, entry index)
  std::size_t size_ = 0;
};

}  // namespace pm2lat::shim
