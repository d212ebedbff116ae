#include "collect/pending_launches.h"

namespace pm2lat::shim {

namespace {
// Keys (correlation ids, sequence numbers) are dense and increasing, inserted in launch order
// and looked up in nearly the same order. Runs of kRun consecutive keys share adjacent
// buckets, so both walks touch a new cache line every few keys instead of at every key; the
// runs themselves are scattered by a mixing hash so that probe sequences stay short.
constexpr unsigned kRunBits = 4;
std::uint64_t mix(std::uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  return k;
}
std::uint64_t spread(std::uint64_t key) {
  const std::uint64_t run_mask = (std::uint64_t{1} << kRunBits) - 1;
  return (mix(key >> kRunBits) << kRunBits) | (key & run_mask);
}
}  // namespace

std::size_t PendingLaunches::bucket_of(std::uint64_t key) const noexcept {
  const std::size_t mask = buckets_.size() - 1;
  std::size_t i = spread(key) & mask;
  std::size_t tombstone = SIZE_MAX;
  for (;;) {
    const Bucket& b = buckets_[i];
    if (b.index == kEmpty) return tombstone != SIZE_MAX ? tombstone : i;
    if (b.index == kTombstone) {
      if (tombstone == SIZE_MAX) tombstone = i;
    } else if (b.key == key) {
      return i;
    }
    i = (i + 1) & mask;
  }
}

void PendingLaunches::grow() {
  std::vector<Bucket> old = std::move(buckets_);
  // Doubles when half full of live entries, halves when they fill less than an eighth (after
  // a burst), otherwise just clears the tombstones.
  std::size_t n = old.empty() ? kMinBuckets : old.size();
  if (size_ * 4 > n) {
    n *= 2;
  } else if (size_ * 8 < n / 2 && n > kMinBuckets) {
    n /= 2;
  }
  buckets_.assign(n, Bucket{0, kEmpty});
  used_buckets_ = 0;
  for (const Bucket& b : old) {
    if (b.index == kEmpty || b.index == kTombstone) continue;
    const std::size_t i = bucket_of(b.key);
    buckets_[i] = b;
    slab_[b.index].bucket = i;
    ++used_buckets_;
  }
}

void PendingLaunches::insert(std::uint64_t key, const LaunchSlot& slot, std::uint64_t arrived_ns) {
  if ((used_buckets_ + 1) * 2 > buckets_.size()) grow();
  std::size_t i = bucket_of(key);
  Bucket& b = buckets_[i];
  std::uint32_t index;
  if (b.index != kEmpty && b.index != kTombstone) {
    index = b.index;  // same key again: replace
  } else {
    if (!free_.empty()) {
      index = free_.back();
      free_.pop_back();
    } else {
      index = static_cast<std::uint32_t>(slab_.size());
      slab_.emplace_back();
    }
    if (b.index == kEmpty) ++used_buckets_;
    b.key = key;
    b.index = index;
    ++size_;
  }
  Entry& e = slab_[index];
  e.slot = slot;
  e.arrived_ns = arrived_ns;
  e.key = key;
  e.bucket = i;
  e.live = true;
  order_.emplace_back(key, index);
}

PendingLaunches::Entry* PendingLaunches::find(std::uint64_t key) noexcept {
  if (size_ == 0) return nullptr;
  const Bucket& b = buckets_[bucket_of(key)];
  if (b.index == kEmpty || b.index == kTombstone) return nullptr;
  return &slab_[b.index];
}

void PendingLaunches::erase(std::uint64_t key) noexcept {
  if (size_ == 0) return;
  Bucket& b = buckets_[bucket_of(key)];
  if (b.index == kEmpty || b.index == kTombstone) return;
  erase(&slab_[b.index]);
}

void PendingLaunches::erase(Entry* entry) noexcept {
  if (entry == nullptr || !entry->live) return;
  Bucket& b = buckets_[entry->bucket];
  entry->live = false;
  free_.push_back(b.index);
  b.index = kTombstone;
  --size_;
}

std::pair<std::uint64_t, PendingLaunches::Entry*> PendingLaunches::oldest() noexcept {
  // Entries joined since are dropped from the front lazily. Their liveness is read from the
  // slab: looking an erased key up would walk its probe run to the next empty bucket.
  while (!order_.empty()) {
    const auto [key, index] = order_.front();
    Entry* e = &slab_[index];
    if (e->live && e->key == key) return {key, e};
    order_.pop_front();
  }
  return {0, nullptr};
}

}  // namespace pm2lat::shim
