#include "launch_path/event_timer.h"

#include <cmath>
#include <new>

#include "driver_api.h"

namespace pm2lat::shim {

namespace {

EventPairs* create_pairs(ThreadRing* ring, const DriverApi* api) noexcept {
  auto* pairs = new (std::nothrow) EventPairs();
  if (pairs == nullptr) return nullptr;
  ring->events = pairs;
  const std::uint32_t n = ring->capacity();
  pairs->start = new (std::nothrow) CUevent[n]();
  pairs->end = new (std::nothrow) CUevent[n]();
  if (pairs->start == nullptr || pairs->end == nullptr || api->event_create == nullptr) {
    return pairs;
  }
  for (std::uint32_t i = 0; i < n; ++i) {
    // Needs the thread's current context; without one the thread stays untimed.
    if (api->event_create(&pairs->start[i], CU_EVENT_DEFAULT) != CUDA_SUCCESS ||
        api->event_create(&pairs->end[i], CU_EVENT_DEFAULT) != CUDA_SUCCESS) {
      return pairs;
    }
    pairs->count = i + 1;
  }
  pairs->usable = true;
  return pairs;
}

}  // namespace

bool EventTimer::before(ThreadRing* ring, const LaunchSlot* slot, CUstream stream) noexcept {
  const DriverApi* api = driver_api();
  if (ring == nullptr || slot == nullptr || api == nullptr || api->event_record == nullptr) {
    return false;
  }
  EventPairs* pairs = ring->events;
  if (pairs == nullptr) pairs = create_pairs(ring, api);
  if (pairs == nullptr || !pairs->usable) return false;
  const std::uint32_t i = ring->index_of(slot);
  return api->event_record(pairs->start[i], stream) == CUDA_SUCCESS;
}

void EventTimer::after(ThreadRing* ring, LaunchSlot* slot, CUstream stream) noexcept {
  const DriverApi* api = driver_api();
  const std::uint32_t i = ring->index_of(slot);
  if (api->event_record(ring->events->end[i], stream) == CUDA_SUCCESS) {
    slot->flags |= slot_flags::kEventsTimed;
  }
}

EventTimer::Poll EventTimer::poll(ThreadRing* ring, const LaunchSlot* slot,
                                  double* elapsed_us) noexcept {
  const DriverApi* api = driver_api();
  if (api == nullptr || ring->events == nullptr || !ring->events->usable) return Poll::kFailed;
  const std::uint32_t i = ring->index_of(slot);
  const CUresult q = api->event_query(ring->events->end[i]);
  if (q == CUDA_ERROR_NOT_READY) return Poll::kPending;
  if (q != CUDA_SUCCESS || api->event_elapsed_time == nullptr) return Poll::kFailed;
  float ms = 0;
  if (api->event_elapsed_time(&ms, ring->events->start[i], ring->events->end[i]) != CUDA_SUCCESS) {
    return Poll::kFailed;
  }
  // Events resolve about half a microsecond; keep whole nanoseconds, not float noise.
  *elapsed_us = std::round(double(ms) * 1e6) / 1000.0;
  return Poll::kReady;
}

void EventTimer::release(ThreadRing* ring) noexcept {
  EventPairs* pairs = ring->events;
  if (pairs == nullptr) return;
  const DriverApi* api = driver_api();
  if (api != nullptr && api->event_destroy != nullptr) {
    for (std::uint32_t i = 0; i < pairs->count; ++i) {
      api->event_destroy(pairs->start[i]);
      api->event_destroy(pairs->end[i]);
    }
  }
  delete[] pairs->start;
  delete[] pairs->end;
  delete pairs;
  ring->events = nullptr;
}

}  // namespace pm2lat::shim
