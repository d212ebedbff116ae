#include "launch_path/thread_ring.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

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
  ring->slots_ = static_cast<LaunchSlot*>(::operator new(sizeof(LaunchSlot) * n, std::nothrow));
  if (ring->slots_ == nullptr) {
    delete ring;
    return nullptr;
  }
  ring->mask_ = n - 1;
  ring->epoch = epoch;
  ring->tid = static_cast<pid_t>(::syscall(SYS_gettid));
  return ring;
}

void ThreadRing::destroy(ThreadRing* ring) {
  if (ring == nullptr) return;
  ::operator delete(ring->slots_);
  delete ring;
}

LaunchSlot* ThreadRing::try_reserve() noexcept {
  if (next_ - cached_tail_ > mask_) {
    cached_tail_ = tail_.load(std::memory_order_acquire);
    if (next_ - cached_tail_ > mask_) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return nullptr;
    }
  }
  LaunchSlot* s = &slots_[next_ & mask_];
  ++next_;
  ++open_;
  return s;
}

void ThreadRing::publish() noexcept {
  if (open_ == 0) return;
  if (--open_ == 0) head_.store(next_, std::memory_order_release);
}

LaunchSlot* ThreadRing::peek() noexcept {
  const std::uint64_t tail = tail_.load(std::memory_order_relaxed);
  if (tail == cached_head_) {
    cached_head_ = head_.load(std::memory_order_acquire);
    if (tail == cached_head_) return nullptr;
  }
  return &slots_[tail & mask_];
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
