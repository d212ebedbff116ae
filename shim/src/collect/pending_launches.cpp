#include "collect/pending_launches.h"

#include <cstddef>
#include <cstring>

namespace pm2lat::shim {

namespace {
// Fibonacci hashing (Knuth, TAOCP vol. 3, 6.4): the top bits of key x 2^64/phi spread
// consecutive keys (correlation ids, sequence numbers) evenly over the table.
constexpr std::uint64_t kGoldenRatio = 0x9e3779b97f4a7c15ull;
// A kernel slot uses the arguments half of the slot's union: the library-call half is neither
// read nor copied (it is most of the slot, and each waiting launch is copied once).
constexpr std::size_t kKernelSlotBytes = offsetof(LaunchSlot, args) + sizeof(LaunchSlot::args);
}  // namespace

PendingLaunches::PendingLaunches() { rebuild(kMinBucketBits); }

PendingLaunches::~PendingLaunches() = default;

std::size_t PendingLaunches::home_of(std::uint64_t key) const noexcept {
  return static_cast<std::size_t>((key * kGoldenRatio) >> (64 - bits_));
}

std::size_t PendingLaunches::bucket_of(std::uint64_t key) const noexcept {
  const std::size_t mask = buckets_.size() - 1;
  std::size_t i = home_of(key);
  while (buckets_[i].index != kEmpty && buckets_[i].key != key) i = (i + 1) & mask;
  return i;
}

void PendingLaunches::rebuild(unsigned bits) {
  std::vector<Bucket> old = std::move(buckets_);
  bits_ = bits;
  buckets_.assign(std::size_t{1} << bits, Bucket{0, kEmpty});
  for (const Bucket& b : old) {
    if (b.index != kEmpty) buckets_[bucket_of(b.key)] = b;
  }
}

std::uint32_t PendingLaunches::allocate_entry() {
  if (!free_.empty()) {
    const std::uint32_t index = free_.back();
    free_.pop_back();
    return index;
  }
  if ((entries_made_ >> kChunkBits) == chunks_.size()) {
    // Default-initialised: every field is written by insert().
    chunks_.emplace_back(new Entry[std::size_t{1} << kChunkBits]);
  }
  return entries_made_++;
}

void PendingLaunches::insert(std::uint64_t key, const LaunchSlot& slot, std::uint64_t arrived_ns) {
  // At most half full: linear probes stay short.
  if ((size_ + 1) * 2 > buckets_.size()) rebuild(bits_ + 1);
  Bucket& b = buckets_[bucket_of(key)];
  if (b.index == kEmpty) {
    b.key = key;
    b.index = allocate_entry();
    ++size_;
  }
  Entry& e = entry(b.index);
  std::memcpy(static_cast<void*>(&e.slot), &slot, kKernelSlotBytes);
  e.arrived_ns = arrived_ns;
  e.key = key;
  e.live = true;
  order_.emplace_back(key, b.index);
}

PendingLaunches::Entry* PendingLaunches::find(std::uint64_t key) noexcept {
  if (size_ == 0) return nullptr;
  const Bucket& b = buckets_[bucket_of(key)];
  return b.index == kEmpty ? nullptr : &entry(b.index);
}

void PendingLaunches::erase(std::uint64_t key) noexcept { erase(find(key)); }

void PendingLaunches::erase(Entry* e) noexcept {
  if (e == nullptr || !e->live) return;
  const std::size_t mask = buckets_.size() - 1;
  std::size_t hole = bucket_of(e->key);
  e->live = false;
  free_.push_back(buckets_[hole].index);
  --size_;
  // Backward-shift deletion: pull later members of the probe run into the hole when their
  // home lies at or before it, so that no lookup ever needs a tombstone to keep walking.
  for (std::size_t next = (hole + 1) & mask; buckets_[next].index != kEmpty;
       next = (next + 1) & mask) {
    const std::size_t home = home_of(buckets_[next].key);
    const bool stays = ((next - home) & mask) < ((next - hole) & mask);
    if (stays) continue;
    buckets_[hole] = buckets_[next];
    hole = next;
  }
  buckets_[hole].index = kEmpty;
}

void PendingLaunches::compact() {
  while (bits_ > kMinBucketBits && size_ * 64 < buckets_.size()) rebuild(bits_ - 1);
}

std::pair<std::uint64_t, PendingLaunches::Entry*> PendingLaunches::oldest() noexcept {
  // Entries joined since are dropped from the front lazily. Their liveness is read from the
  // entry: a reused entry carries another key.
  while (!order_.empty()) {
    const auto [key, index] = order_.front();
    Entry* e = &entry(index);
    if (e->live && e->key == key) return {key, e};
    order_.pop_front();
  }
  return {0, nullptr};
}

}  // namespace pm2lat::shim
