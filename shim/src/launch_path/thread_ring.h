// Per-thread single-producer/single-consumer rings of launch slots, and the registry the
// worker walks. The producer side (the launch path) never allocates, locks or blocks: when a
// ring is full the launch is counted as dropped and the program carries on.
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
  // `capacity` is rounded up to a power of two.
  static ThreadRing* create(std::uint32_t capacity, std::uint32_t epoch);
  static void destroy(ThreadRing* ring);

  // Producer. Reservations nest (a slot may be reserved while another is open); slots
  // become visible to the consumer, in order, when the outermost one is published.
  LaunchSlot* try_reserve() noexcept;
  void publish() noexcept;

  // Consumer.
  LaunchSlot* peek() noexcept;
  void pop() noexcept;
  bool empty() const noexcept;
  // Slots published so far, and consumed so far (both count from the ring's creation).
  std::uint64_t published() const noexcept { return head_.load(std::memory_order_acquire); }
  std::uint64_t consumed() const noexcept { return tail_.load(std::memory_order_relaxed); }

  std::uint64_t dropped() const noexcept { return dropped_.load(std::memory_order_relaxed); }
  // Slots published and not yet consumed (a snapshot, from any thread).
  std::uint64_t occupancy() const noexcept {
    return head_.load(std::memory_order_acquire) - tail_.load(std::memory_order_acquire);
  }
  std::uint32_t capacity() const noexcept { return mask_ + 1; }
  std::uint32_t index_of(const LaunchSlot* s) const noexcept {
    return static_cast<std::uint32_t>(s - slots_);
  }

  std::atomic<bool> retired{false};  // its thread has exited
  ThreadRing* next = nullptr;        // registry link
  std::uint32_t epoch = 0;           // process generation it belongs to (see fork)
  pid_t tid = 0;
  EventPairs* events = nullptr;  // owned by the event timer

 private:
  ThreadRing() = default;

  alignas(64) std::atomic<std::uint64_t> head_{0};  // published by the producer
  std::uint64_t next_ = 0;                          // producer: next index to reserve
  std::uint64_t cached_tail_ = 0;                   // producer's view of tail_
  std::uint32_t open_ = 0;                          // producer: reserved, not yet published
  alignas(64) std::atomic<std::uint64_t> tail_{0};  // consumed by the worker
  // The consumer's view of head_: re-read only when it has consumed everything it saw, so the
  // line the producer writes on every publish is not pulled over on every slot.
  std::uint64_t cached_head_ = 0;
  std::atomic<std::uint64_t> dropped_{0};
  std::uint32_t mask_ = 0;
  LaunchSlot* slots_ = nullptr;
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
