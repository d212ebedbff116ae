// Per-thread single-producer/single-consumer rings of launch slots, and the registry the
// worker walks. The producer side (the launch path) never allocates, locks or blocks: when a
// ring is full the launch is counted as dropped and the program carries on.
//
// A ring is sized for bursts (thousands of slots) but usually holds a few hundred: its
// memory is mapped once and used by need. Slots are written in segments; a segment the worker
// has emptied is reused before one never touched (the lowest free one), so a ring's resident
// memory is the most it ever held at once rounded up to segments, not its capacity.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "launch_path/launch_slot.h"

namespace pm2lat::shim {

struct EventPairs;  // CUDA events bound to ring slots (event_timer.h)

class ThreadRing {
 public:
  // `capacity` is rounded up to a power of two (at least 64).
  static ThreadRing* create(std::uint32_t capacity, std::uint32_t epoch);
  static void destroy(ThreadRing* ring);

  // Producer. Reservations nest (a slot may be reserved while another is open); slots
  // become visible to the consumer, in order, when the outermost one is published. A
  // reservation fails (counted as dropped) when every segment holds slots not yet consumed.
  LaunchSlot* try_reserve() noexcept;
  // Right after the outermost open reservation got its launch sequence number: until it is
  // published, oldest_open_seq() says that a launch this old is still being written.
  void mark_open(std::uint64_t seq) noexcept {
    if (open_ == 1) open_seq_.store(seq, std::memory_order_release);
  }
  void publish() noexcept;

  // Consumer.
  LaunchSlot* peek() noexcept;
  void pop() noexcept;
  bool empty() const noexcept;
  // Slots published so far, and consumed so far (both count from the ring's creation).
  std::uint64_t published() const noexcept { return head_.load(std::memory_order_acquire); }
  std::uint64_t consumed() const noexcept { return tail_.load(std::memory_order_relaxed); }
  // The sequence number of a launch reserved and not yet published (kNoneOpen if none). Read
  // it before peek(): once it no longer shows a launch, that launch's slot is visible.
  static constexpr std::uint64_t kNoneOpen = UINT64_MAX;
  std::uint64_t oldest_open_seq() const noexcept {
    return open_seq_.load(std::memory_order_acquire);
  }

  std::uint64_t dropped() const noexcept { return dropped_.load(std::memory_order_relaxed); }
  // Slots published and not yet consumed (a snapshot, from any thread).
  std::uint64_t occupancy() const noexcept {
    return head_.load(std::memory_order_acquire) - tail_.load(std::memory_order_acquire);
  }
  std::uint32_t capacity() const noexcept { return (segment_mask_ + 1) << segment_bits_; }
  std::uint32_t segment_slots() const noexcept { return 1u << segment_bits_; }
  // Where `s` lies in the ring's memory (0 .. capacity - 1).
  std::uint32_t index_of(const LaunchSlot* s) const noexcept {
    return static_cast<std::uint32_t>(s - slots_);
  }

  std::atomic<bool> retired{false};  // its thread has exited
  ThreadRing* next = nullptr;        // registry link
  std::uint32_t epoch = 0;           // process generation it belongs to (see fork)
  pid_t tid = 0;
  // Event pools, one per CUDA context the thread launched in (an event times only launches
  // on its own context's streams); owned by the event timer.
  static constexpr std::size_t kEventContexts = 8;
  EventPairs* events[kEventContexts] = {};

 private:
  // At most this many segments a ring (a bit each in a word while choosing a free one).
  static constexpr std::uint32_t kMaxSegments = 64;

  ThreadRing() = default;
  // Producer, at a segment's first slot: takes the lowest segment holding nothing unconsumed
  // for it; false when there is none.
  bool enter_segment() noexcept;
  // The slot of sequence index `i` (the segment it was written in, and its place there).
  LaunchSlot* slot_at(std::uint64_t i) const noexcept {
    const std::uint32_t segment = segment_of_[(i >> segment_bits_) & segment_mask_];
    return slots_ + (std::uint64_t{segment} << segment_bits_) + (i & slot_mask_);
  }

  alignas(64) std::atomic<std::uint64_t> head_{0};  // published by the producer
  std::uint64_t next_ = 0;                          // producer: next index to reserve
  LaunchSlot* writing_ = nullptr;                   // producer: the segment being written
  std::uint32_t open_ = 0;                          // producer: reserved, not yet published
  // The outermost open reservation's sequence number, for the worker (same line as head_,
  // which the producer writes with it).
  std::atomic<std::uint64_t> open_seq_{kNoneOpen};
  alignas(64) std::atomic<std::uint64_t> tail_{0};  // consumed by the worker
  // The consumer's view of head_: re-read only when it has consumed everything it saw, so the
  // line the producer writes on every publish is not pulled over on every slot.
  std::uint64_t cached_head_ = 0;
  std::atomic<std::uint64_t> dropped_{0};
  std::uint32_t segment_bits_ = 0;  // slots per segment = 2^segment_bits_
  std::uint64_t slot_mask_ = 0;     // place in a segment
  std::uint32_t segment_mask_ = 0;  // segments - 1
  std::size_t bytes_ = 0;           // mapped for the slots
  LaunchSlot* slots_ = nullptr;
  // Sequence segment (modulo the segment count) -> the segment of memory it was written in.
  // Written by the producer before it publishes the segment's first slot; read by the
  // consumer only for slots published since, and rewritten only once those are consumed.
  std::uint8_t segment_of_[kMaxSegments] = {};
};

// All rings of the process, newest first. Pushed by any thread, pruned by the worker only.
class RingRegistry {
 public:
  static RingRegistry& instance();

  void add(ThreadRing* ring) noexcept;
  ThreadRing* head() const noexcept { return head_.load(std::memory_order_acquire); }
  // Worker: frees retired rings that are empty, calling `on_free` first.
  template <typename OnFree>
  void prune(OnFree&& on_free);
  // After fork: forget every ring (the parent's rings are leaked in the child, which must
  // not touch their contents).
  void reset_after_fork() noexcept { head_.store(nullptr, std::memory_order_relaxed); }

  std::uint32_t epoch() const noexcept { return epoch_.load(std::memory_order_relaxed); }
  void bump_epoch() noexcept { epoch_.fetch_add(1, std::memory_order_relaxed); }

  std::uint32_t ring_capacity() const noexcept { return capacity_.load(std::memory_order_relaxed); }
  void set_ring_capacity(std::uint32_t c) noexcept {
    capacity_.store(c, std::memory_order_relaxed);
  }

 private:
  std::atomic<ThreadRing*> head_{nullptr};
  std::atomic<std::uint32_t> epoch_{1};
  std::atomic<std::uint32_t> capacity_{8192};
};

// The calling thread's ring for the current epoch, created on the thread's first launch
// (the only allocation a launching thread ever makes). Null if it cannot be created.
ThreadRing* current_thread_ring() noexcept;

template <typename OnFree>
void RingRegistry::prune(OnFree&& on_free) {
  ThreadRing* prev = nullptr;
  ThreadRing* r = head_.load(std::memory_order_acquire);
  while (r != nullptr) {
    ThreadRing* next = r->next;
    if (r->retired.load(std::memory_order_acquire) && r->empty()) {
      if (prev == nullptr) {
        ThreadRing* expected = r;
        // A thread may have pushed a new ring in front of r; then r is no longer the head
        // and is unlinked on the next pass.
        if (!head_.compare_exchange_strong(expected, next, std::memory_order_acq_rel)) return;
      } else {
        prev->next = next;
      }
      on_free(r);
      ThreadRing::destroy(r);
      r = next;
      continue;
    }
    prev = r;
    r = next;
  }
}

}  // namespace pm2lat::shim
