#include "launch_path/event_timer.h"

#include <cmath>
#include <new>

#include "driver_api.h"

namespace pm2lat::shim {

namespace {

std::atomic<std::uint32_t> g_pairs{0};

// A free pair of the thread's pool (created if the bounds allow), or -1.
int take_pair(EventPairs* p, const DriverApi* api) noexcept {
  // What the worker handed back first.
  const std::uint32_t head = p->returned_head.load(std::memory_order_acquire);
  while (p->returned_tail != head) {
    p->free[p->free_count++] = p->returned[p->returned_tail % EventPairs::kMaxPerThread];
    ++p->returned_tail;
  }
  if (p->free_count > 0) return p->free[--p->free_count];
  if (p->created == EventPairs::kMaxPerThread || api->event_create == nullptr) return -1;
  if (g_pairs.fetch_add(1, std::memory_order_relaxed) >= EventTimer::kMaxPairs) {
    g_pairs.fetch_sub(1, std::memory_order_relaxed);
    return -1;
  }
  // Needs the thread's current context; without one the launch stays untimed.
  const std::uint16_t i = p->created;
  if (api->event_create(&p->start[i], CU_EVENT_DEFAULT) != CUDA_SUCCESS) {
    g_pairs.fetch_sub(1, std::memory_order_relaxed);
    return -1;
  }
  if (api->event_create(&p->end[i], CU_EVENT_DEFAULT) != CUDA_SUCCESS) {
    if (api->event_destroy != nullptr) api->event_destroy(p->start[i]);
    g_pairs.fetch_sub(1, std::memory_order_relaxed);
    return -1;
  }
  ++p->created;
  return i;
}

// A slot's event_pair: the pool (the context's index in the thread's table) above the pair.
constexpr unsigned kPairBits = 10;
static_assert(EventPairs::kMaxPerThread == 1u << kPairBits);
static_assert(ThreadRing::kEventContexts <= 1u << (16 - kPairBits));
std::uint16_t pool_of(std::uint16_t event_pair) { return event_pair >> kPairBits; }
std::uint16_t pair_of(std::uint16_t event_pair) {
  return event_pair & (EventPairs::kMaxPerThread - 1);
}

// The pool of the thread's current context, created on the thread's first launch in it; -1
// when there is no current context, no room for another context, or no memory.
int pool_for_current_context(ThreadRing* ring, const DriverApi* api) noexcept {
  CUcontext ctx = nullptr;
  if (api->ctx_get_current == nullptr || api->ctx_get_current(&ctx) != CUDA_SUCCESS ||
      ctx == nullptr)
    return -1;
  for (std::size_t k = 0; k < ThreadRing::kEventContexts; ++k) {
    EventPairs* p = ring->events[k];
    if (p == nullptr) {
      // First launch of this thread in this context: its pool's table (like the ring, once).
      CUdevice device = 0;
      if (api->ctx_get_device == nullptr || api->ctx_get_device(&device) != CUDA_SUCCESS ||
          device < 0 || device > 0xff)
        return -1;
      p = new (std::nothrow) EventPairs();
      if (p == nullptr) return -1;
      p->context = ctx;
      p->device = static_cast<std::uint8_t>(device);
      ring->events[k] = p;
      return static_cast<int>(k);
    }
    if (p->context == ctx) return static_cast<int>(k);
  }
  return -1;
}

}  // namespace

bool EventTimer::before(ThreadRing* ring, LaunchSlot* slot, CUstream stream) noexcept {
  const DriverApi* api = driver_api();
  if (ring == nullptr || slot == nullptr || api == nullptr || api->event_record == nullptr) {
    return false;
  }
  const int pool = pool_for_current_context(ring, api);
  if (pool < 0) return false;
  EventPairs* p = ring->events[pool];
  const int i = take_pair(p, api);
  if (i < 0) return false;
  if (api->event_record(p->start[i], stream) != CUDA_SUCCESS) {
    p->free[p->free_count++] = static_cast<std::uint16_t>(i);
    return false;
  }
  slot->event_pair = static_cast<std::uint16_t>((pool << kPairBits) | i);
  slot->device = p->device;
  return true;
}

void EventTimer::after(ThreadRing* ring, LaunchSlot* slot, CUstream stream) noexcept {
  const DriverApi* api = driver_api();
  EventPairs* p = ring->events[pool_of(slot->event_pair)];
  const std::uint16_t i = pair_of(slot->event_pair);
  if (api->event_record(p->end[i], stream) == CUDA_SUCCESS) {
    slot->flags |= slot_flags::kEventsTimed;
  } else {
    p->free[p->free_count++] = i;  // never reaches the worker
  }
}

EventTimer::Poll EventTimer::poll(ThreadRing* ring, const LaunchSlot* slot,
                                  double* elapsed_us) noexcept {
  const DriverApi* api = driver_api();
  const std::uint16_t pool = pool_of(slot->event_pair);
  EventPairs* p = pool < ThreadRing::kEventContexts ? ring->events[pool] : nullptr;
  if (api == nullptr || p == nullptr) return Poll::kFailed;
  const std::uint16_t i = pair_of(slot->event_pair);
  Poll result = Poll::kFailed;
  const CUresult q = api->event_query(p->end[i]);
  if (q == CUDA_ERROR_NOT_READY) return Poll::kPending;
  float ms = 0;
  if (q == CUDA_SUCCESS && api->event_elapsed_time != nullptr &&
      api->event_elapsed_time(&ms, p->start[i], p->end[i]) == CUDA_SUCCESS) {
    // Events resolve about half a microsecond; keep whole nanoseconds, not float noise.
    *elapsed_us = std::round(double(ms) * 1e6) / 1000.0;
    result = Poll::kReady;
  }
  const std::uint32_t head = p->returned_head.load(std::memory_order_relaxed);
  p->returned[head % EventPairs::kMaxPerThread] = i;
  p->returned_head.store(head + 1, std::memory_order_release);
  return result;
}

void EventTimer::release(ThreadRing* ring) noexcept {
  const DriverApi* api = driver_api();
  for (EventPairs*& p : ring->events) {
    if (p == nullptr) continue;
    if (api != nullptr && api->event_destroy != nullptr) {
      for (std::uint16_t i = 0; i < p->created; ++i) {
        api->event_destroy(p->start[i]);
        api->event_destroy(p->end[i]);
      }
    }
    g_pairs.fetch_sub(p->created, std::memory_order_relaxed);
    delete p;
    p = nullptr;
  }
}

std::uint32_t EventTimer::pairs_created() noexcept {
  return g_pairs.load(std::memory_order_relaxed);
}

}  // namespace pm2lat::shim
