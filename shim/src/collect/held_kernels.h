// Joined kernels held back while the profiles load, to be built and predicted once they are
// there (record_builder.h). Each is a copy (a launch slot, its CUPTI record, its library call)
// in chunks that are allocated as they fill and all freed when the kernels are handed on:
// holding never copies what it held before, and a library call's context is kept once for
// the kernels that came in a row with the same one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "collect/record_joiner.h"

namespace pm2lat::shim {

class HeldKernels {
 public:
  // At most this many are held (about 5 MB): the start of a program, while the profiles load
  // (about a second), launches hundreds to a few thousand kernels; more are written without
  // predictions rather than held.
  static constexpr std::size_t kCapacity = std::size_t(1) << 14;

  bool full() const noexcept { return size_ >= kCapacity; }
  bool empty() const noexcept { return size_ == 0; }
  std::size_t size() const noexcept { return size_; }

  // Copies `kernel` (the caller checks full() first).
  void add(const JoinedKernel& kernel);
  // Hands every held kernel to `each(const JoinedKernel&)` in the order held, then frees them.
  template <typename Each>
  void release(Each&& each);

 private:
  static constexpr std::uint32_t kNoOp = ~std::uint32_t{0};
  static constexpr std::size_t kChunk = 1024;
  struct Entry {
    LaunchSlot launch;
    KernelTiming timing;
    double events_us;
    std::uint32_t notes;
    std::uint32_t op;  // index into ops_, or kNoOp
    bool has_launch, has_timing, has_events, replay;
  };
  Entry& at(std::size_t i) noexcept { return chunks_[i / kChunk][i % kChunk]; }

  std::vector<std::unique_ptr<Entry[]>> chunks_;
  std::vector<OpPod> ops_;
  std::size_t size_ = 0;
};

template <typename Each>
void HeldKernels::release(Each&& each) {
  for (std::size_t i = 0; i < size_; ++i) {
    const Entry& h = at(i);
    JoinedKernel k;
    k.launch = h.has_launch ? &h.launch : nullptr;
    k.timing = h.has_timing ? &h.timing : nullptr;
    k.op = h.op != kNoOp ? &ops_[h.op] : nullptr;
    if (h.has_events) k.events_us = h.events_us;
    k.notes = h.notes;
    k.replay = h.replay;
    each(k);
  }
  // The start-up burst is over: give the memory back.
  std::vector<std::unique_ptr<Entry[]>>().swap(chunks_);
  std::vector<OpPod>().swap(ops_);
  size_ = 0;
}

}  // namespace pm2lat::shim
