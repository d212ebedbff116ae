#include "pending_launches.h"

namespace pm2lat::shim {

namespace {
std::uint64_t mix(std::uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  return k;
}
}  // namespace

std::size_t PendingLaunches::bucket_of(std::uint64_t key) const noexcept {
  const std::size_t mask = buckets_.size() - 1;
  std::size_t i = mix(key) & mask;
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
  buckets_.assign(old.empty() ? 1024 : (size_ * 4 > old.size() ? old.size() * 2 : old.size()),
                  Bucket{0, kEmpty});
  used_buckets_ = 0;
  for (const Bucket& b : old) {
    if (b.index == kEmpty || b.index == kTombstone) continue;
    buckets_[bucket_of(b.key)] = b;
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
  slab_[index].slot = slot;
  slab_[index].arrived_ns = arrived_ns;
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
  free_.push_back(b.index);
  b.index = kTombstone;
  --size_;
}

std::pair<std::uint64_t, PendingLaunches::Entry*> PendingLaunches::oldest() noexcept {
  // Entries joined since are dropped from the front lazily.
  while (!order_.empty()) {
    const auto [key, index] = order_.front();
    Entry* e = find(key);
    if (e != nullptr && e == &slab_[index]) return {key, e};
    order_.pop_front();
  }
  return {0, nullptr};
}

}  // namespace pm2lat::shim
