#include "launch_path/thread_ring.h"

#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bit>
#include <new>

#include "launch_path/thread_state.h"

namespace pm2lat::shim {

thread_local ThreadState t_thread_state{};

namespace {

std::uint32_t round_up_pow2(std::uint32_t v) {
  std::uint32_t p = 64;
  while (p < v && p < (1u << 24)) p <<= 1;
  return p;
}

// Slots per segment: 256 (47 KB), a few times what a ring holds between two visits of a
// worker that keeps up, so that one segment's worth is rarely the most a ring holds; at
// least 4 segments a ring and at most kMaxSegments.
std::uint32_t segment_bits_for(std::uint32_t capacity, std::uint32_t max_segments) {
  std::uint32_t bits = 8;
  while ((capacity >> bits) < 4 && bits > 4) --bits;
  while ((capacity >> bits) > max_segments) ++bits;
  return bits;
}

pthread_key_t g_retire_key;
pthread_once_t g_retire_once = PTHREAD_ONCE_INIT;

// Runs at thread exit: the worker drains what is left and frees the ring.
void retire_ring(void* p) {
  auto* ring = static_cast<ThreadRing*>(p);
  ring->retired.store(true, std::memory_order_release);
}

void make_retire_key() { pthread_key_create(&g_retire_key, retire_ring); }

}  // namespace

ThreadRing* ThreadRing::create(std::uint32_t capacity, std::uint32_t epoch) {
  const std::uint32_t n = round_up_pow2(capacity);
  auto* ring = new (std::nothrow) ThreadRing();
  if (ring == nullptr) return nullptr;
  // Mapped, not taken from the heap: pages no slot was written to are never resident.
  ring->bytes_ = sizeof(LaunchSlot) * n;
  void* slots = ::mmap(nullptr, ring->bytes_, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (slots == MAP_FAILED) {
    delete ring;
    return nullptr;
  }
  ring->slots_ = static_cast<LaunchSlot*>(slots);
  ring->segment_bits_ = segment_bits_for(n, kMaxSegments);
  ring->slot_mask_ = (std::uint64_t{1} << ring->segment_bits_) - 1;
  ring->segment_mask_ = (n >> ring->segment_bits_) - 1;
  ring->epoch = epoch;
  ring->tid = static_cast<pid_t>(::syscall(SYS_gettid));
  return ring;
}

void ThreadRing::destroy(ThreadRing* ring) {
  if (ring == nullptr) return;
  ::munmap(ring->slots_, ring->bytes_);
  delete ring;
}

bool ThreadRing::enter_segment() noexcept {
  const std::uint64_t entering = next_ >> segment_bits_;
  const std::uint64_t consuming = tail_.load(std::memory_order_acquire) >> segment_bits_;
  if (entering - consuming > segment_mask_) return false;  // every segment holds slots
  std::uint64_t used = 0;
  for (std::uint64_t s = consuming; s < entering; ++s) {
    used |= std::uint64_t{1} << segment_of_[s & segment_mask_];
  }
  const auto segment = static_cast<std::uint8_t>(std::countr_one(used));
  segment_of_[entering & segment_mask_] = segment;
  writing_ = slots_ + (std::uint64_t{segment} << segment_bits_);
  return true;
}

LaunchSlot* ThreadRing::try_reserve() noexcept {
  if ((next_ & slot_mask_) == 0 && !enter_segment()) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  LaunchSlot* s = writing_ + (next_ & slot_mask_);
  ++next_;
  ++open_;
  return s;
}

void ThreadRing::publish() noexcept {
  if (open_ == 0) return;
  if (--open_ == 0) {
    head_.store(next_, std::memory_order_release);
    open_seq_.store(kNoneOpen, std::memory_order_release);
  }
}

LaunchSlot* ThreadRing::peek() noexcept {
  const std::uint64_t tail = tail_.load(std::memory_order_relaxed);
  if (tail == cached_head_) {
    cached_head_ = head_.load(std::memory_order_acquire);
    if (tail == cached_head_) return nullptr;
  }
  return slot_at(tail);
}

void ThreadRing::pop() noexcept {
  tail_.store(tail_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

bool ThreadRing::empty() const noexcept {
  return tail_.load(std::memory_order_relaxed) == head_.load(std::memory_order_acquire);
}

RingRegistry& RingRegistry::instance() {
  static RingRegistry* registry = new RingRegistry();  // never destroyed: used at exit
  return *registry;
}

void RingRegistry::add(ThreadRing* ring) noexcept {
  ThreadRing* head = head_.load(std::memory_order_relaxed);
  do {
    ring->next = head;
  } while (!head_.compare_exchange_weak(head, ring, std::memory_order_release,
                                        std::memory_order_relaxed));
}

ThreadRing* current_thread_ring() noexcept {
  ThreadState& ts = thread_state();
  RingRegistry& registry = RingRegistry::instance();
  const std::uint32_t epoch = registry.epoch();
  if (ts.ring != nullptr && ts.ring_epoch == epoch) [[likely]] {
    return ts.ring;
  }
  if (ts.ring_failed && ts.ring_epoch == epoch) return nullptr;
  // First launch of this thread in this process generation.
  ts.ring_epoch = epoch;
  ThreadRing* ring = ThreadRing::create(registry.ring_capacity(), epoch);
  if (ring == nullptr) {
    ts.ring = nullptr;
    ts.ring_failed = true;
    return nullptr;
  }
  pthread_once(&g_retire_once, make_retire_key);
  pthread_setspecific(g_retire_key, ring);
  registry.add(ring);
  ts.ring = ring;
  ts.ring_failed = false;
  return ring;
}

}  // namespace pm2lat::shim
