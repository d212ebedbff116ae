#include "collect/held_kernels.h"

namespace pm2lat::shim {

void HeldKernels::add(const JoinedKernel& k) {
  if (size_ == chunks_.size() * kChunk) chunks_.push_back(std::make_unique<Entry[]>(kChunk));
  Entry& h = at(size_++);
  h.has_launch = k.launch != nullptr;
  if (h.has_launch) h.launch = *k.launch;
  h.has_timing = k.timing != nullptr;
  if (h.has_timing) h.timing = *k.timing;
  h.op = kNoOp;
  if (k.op != nullptr) {
    // Kernels of one library call come in a row: its context is kept once for them.
    if (ops_.empty() || !(ops_.back() == *k.op)) ops_.push_back(*k.op);
    h.op = static_cast<std::uint32_t>(ops_.size() - 1);
  }
  h.has_events = k.events_us.has_value();
  h.events_us = k.events_us.value_or(0);
  h.notes = k.notes;
  h.replay = k.replay;
}

}  // namespace pm2lat::shim
