#include "collect/record_joiner.h"

#include "collect/record_notes.h"
#include "launch_path/string_table.h"

namespace pm2lat::shim {

namespace {

// Keys of launches joined by external correlation (hook mode) carry this bit, so they never
// meet correlation ids (callback mode) in the one table.
constexpr std::uint64_t kSeqKeyBit = std::uint64_t(1) << 63;

bool same_geometry(const LaunchSlot& s, const KernelTiming& t) {
  for (int i = 0; i < 3; ++i) {
    if (s.grid[i] != t.grid[i] || s.block[i] != t.block[i]) return false;
  }
  return true;
}

// A launch recorded without a correlation (by a runtime hook, or at capture in hook mode)
// is recognised in CUPTI's record by its kernel name and geometry.
bool same_kernel(const LaunchSlot& s, const KernelTiming& t) {
  return same_geometry(s, t) && t.name != nullptr &&
         StringTable::instance().get(s.name_id) == t.name;
}

// A replayed node's record matches its template: same geometry, and the same name when the
// template has one.
bool launched_as(const LaunchSlot& s, const KernelTiming& t) {
  if (!same_geometry(s, t)) return false;
  return s.name_id == StringTable::kUnknown || t.name == nullptr ||
         StringTable::instance().get(s.name_id) == t.name;
}

}  // namespace

RecordJoiner::RecordJoiner(JoinerSetup setup, ShimCounters& counters, JoinedKernelSink& sink)
    : setup_(setup), counters_(counters), sink_(sink) {}

void RecordJoiner::emit(const LaunchSlot* launch, const KernelTiming* timing, const OpPod* op,
                        std::uint32_t notes, bool replay) {
  JoinedKernel k;
  k.launch = launch;
  k.timing = timing;
  k.op = op;
  k.notes = notes;
  k.replay = replay;
  sink_.on_kernel(k);
}

const OpPod* RecordJoiner::call_context(const LaunchSlot& s) const {
  if (s.call_id == 0) return nullptr;
  auto it = calls_.find(s.call_id);
  return it == calls_.end() ? nullptr : &it->second;
}

void RecordJoiner::on_slot(const LaunchSlot& s, std::uint64_t now_ns) {
  switch (s.kind) {
    case SlotKind::kKernel: on_kernel_slot(s, now_ns); return;
    case SlotKind::kGraphLaunch: on_graph_launch(s, now_ns); return;
    case SlotKind::kGraphInstantiate: graphs_.instantiate(s.graph, s.graph_exec); return;
    case SlotKind::kGraphExecDestroy: graphs_.destroy_exec(s.graph_exec, now_ns); return;
    case SlotKind::kGraphDestroy: graphs_.destroy_graph(s.graph); return;
    case SlotKind::kGraphNodeCloned: graphs_.clone(s.graph_node, s.graph_exec); return;
    case SlotKind::kGraphNodeDestroyed: graphs_.remove_node(s.graph_node, now_ns); return;
    case SlotKind::kLibraryCall: on_library_call(s); return;
  }
}

void RecordJoiner::on_library_call(const LaunchSlot& s) {
  const OpPod op = library_call(s);
  if (calls_.insert_or_assign(op.call_id, op).second) {
    call_order_.push_back(op.call_id);
    if (call_order_.size() > kMaxCalls) {
      calls_.erase(call_order_.front());
      call_order_.pop_front();
    }
  }
}

void RecordJoiner::on_events_timed(const LaunchSlot& s, std::optional<double> us) {
  counters_.launches++;
  JoinedKernel k;
  k.launch = &s;
  k.op = call_context(s);
  if (us) {
    k.events_us = us;
    k.notes = notes::kEventsTiming;
  } else {
    counters_.timing_lost++;
    k.notes = notes::kUnmeasured | notes::kTimingLost;
  }
  sink_.on_kernel(k);
}

void RecordJoiner::on_kernel_slot(const LaunchSlot& s, std::uint64_t now_ns) {
  counters_.launches++;
  if (s.result != 0) {
    counters_.failed_launches++;
    return;
  }
  if ((s.flags & slot_flags::kCaptured) != 0) {
    graphs_.add_captured(s, call_context(s));
    counters_.captured++;
    return;
  }
  if (setup_.timing == TimingMode::kCupti) {
    if ((s.flags & slot_flags::kFromCallback) != 0 && s.correlation_id != 0) {
      if (join_waiting_record(s)) return;
      pending_.insert(s.correlation_id, s, now_ns);
    } else if ((s.flags & slot_flags::kExternalCorrelation) != 0) {
      pending_.insert(s.seq | kSeqKeyBit, s, now_ns);
    } else {
      runtime_only_.push_back(RuntimeOnly{s, now_ns});
    }
    return;
  }
  std::uint32_t bits = notes::kUnmeasured;
  if (setup_.predict_only) bits |= notes::kPredictOnly;
  emit(&s, nullptr, call_context(s), bits);
}

void RecordJoiner::on_graph_launch(const LaunchSlot& s, std::uint64_t now_ns) {
  if (s.result != 0) {
    counters_.failed_launches++;
    return;
  }
  if (setup_.timing == TimingMode::kCupti) {
    if ((s.flags & slot_flags::kFromCallback) != 0) {
      graph_by_correlation_[s.correlation_id] = s;
      graph_order_.emplace_back(s.correlation_id, now_ns);
    } else if ((s.flags & slot_flags::kExternalCorrelation) != 0) {
      graph_by_seq_[s.seq] = s;
      graph_order_.emplace_back(s.seq | kSeqKeyBit, now_ns);
    }
    return;
  }
  // No per-kernel durations: each replay is the kernels recorded at capture.
  const std::vector<GraphTemplate>* kernels = graphs_.kernels_of_exec(s.graph_exec);
  if (kernels == nullptr) return;
  std::uint32_t bits = notes::kGraphReplay | notes::kUnmeasured;
  if (setup_.predict_only) bits |= notes::kPredictOnly;
  for (const GraphTemplate& t : *kernels) {
    LaunchSlot k = t.slot;
    k.host_ts_ns = s.host_ts_ns;
    k.stream = s.stream;
    counters_.graph_replays++;
    emit(&k, nullptr, t.has_op ? &t.op : nullptr, bits, /*replay=*/true);
  }
}

void RecordJoiner::on_external(const ExternalCorrelation& e) {
  if (external_.size() >= kMaxExternal) external_.clear();
  external_[e.correlation_id] = e.external_id;
}

void RecordJoiner::on_timing(const KernelTiming& t, std::uint64_t now_ns, std::uint64_t seq_bound) {
  if (join(t)) return;
  if (setup_.metadata == MetadataSource::kCuptiCallbacks && t.graph_node_id == 0) {
    orphan_by_correlation_[t.correlation_id] = orphans_erased_ + orphans_.size();
  }
  orphans_.push_back(Orphan{t, now_ns, passes_, seq_bound, false});
  ++orphans_waiting_;
  // Records far ahead of their launches (a worker kept from running while CUPTI's buffers
  // fill): beyond the bound the oldest is settled now, not at the end of the pass.
  if (orphans_waiting_ > kMaxPending) {
    while (orphans_[orphans_head_].joined) ++orphans_head_;
    Orphan& oldest = orphans_[orphans_head_];
    const KernelTiming settled = oldest.timing;
    forget_orphan(oldest);
    settle_unclaimed(settled, last_rings_);
    compact_orphans();
  }
}

bool RecordJoiner::join_waiting_record(const LaunchSlot& s) {
  if (orphan_by_correlation_.empty()) return false;
  auto it = orphan_by_correlation_.find(s.correlation_id);
  if (it == orphan_by_correlation_.end()) return false;
  Orphan& o = orphans_[it->second - orphans_erased_];
  orphan_by_correlation_.erase(it);
  o.joined = true;
  --orphans_waiting_;
  emit(&s, &o.timing, call_context(s), 0);
  return true;
}

bool RecordJoiner::join_graph_node(const KernelTiming& t) {
  const bool callbacks = setup_.metadata == MetadataSource::kCuptiCallbacks;
  const LaunchSlot* launch = nullptr;
  if (callbacks) {
    if (auto it = graph_by_correlation_.find(t.correlation_id); it != graph_by_correlation_.end())
      launch = &it->second;
  } else if (auto e = external_.find(t.correlation_id); e != external_.end()) {
    if (auto it = graph_by_seq_.find(e->second); it != graph_by_seq_.end()) launch = &it->second;
  }
  const GraphTemplate* tmpl = graphs_.node(t.graph_node_id);
  if (tmpl == nullptr && launch != nullptr) {
    // Hook mode knows nodes by handle, CUPTI by id: match the replayed kernel to its graph's
    // capture by name and geometry, and remember the id for the next replays.
    if (const auto* kernels = graphs_.kernels_of_exec(launch->graph_exec)) {
      for (const GraphTemplate& k : *kernels) {
        if (!launched_as(k.slot, t)) continue;
        LaunchSlot alias = k.slot;
        alias.graph_node = t.graph_node_id;
        alias.graph = 0;
        graphs_.add_captured(alias, k.has_op ? &k.op : nullptr);
        tmpl = graphs_.node(t.graph_node_id);
        break;
      }
    }
  }
  if (tmpl == nullptr && launch == nullptr) return false;
  counters_.graph_replays++;
  // A node no hook recorded (added with cuGraphAddKernelNode), or one changed in its
  // executable since it was captured (cuGraphExecKernelNodeSetParams): what ran is what CUPTI
  // says, and no hook saw it.
  if (tmpl == nullptr || !launched_as(tmpl->slot, t)) {
    counters_.unhooked++;
    emit(nullptr, &t, nullptr, notes::kGraphReplay | notes::kUnhooked);
    return true;
  }
  LaunchSlot k = tmpl->slot;
  k.correlation_id = t.correlation_id;
  emit(&k, &t, tmpl->has_op ? &tmpl->op : nullptr, notes::kGraphReplay, /*replay=*/true);
  return true;
}

bool RecordJoiner::join(const KernelTiming& t) {
  if (t.graph_node_id != 0) return join_graph_node(t);
  if (setup_.metadata == MetadataSource::kCuptiCallbacks) {
    PendingLaunches::Entry* e = pending_.find(t.correlation_id);
    if (e == nullptr) return false;
    emit(&e->slot, &t, call_context(e->slot), 0);
    pending_.erase(e);
    return true;
  }
  auto e = external_.find(t.correlation_id);
  if (e == external_.end()) return false;
  if (e->second == kDroppedLaunchSeq) {
    external_.erase(e);
    emit(nullptr, &t, nullptr, notes::kLaunchDropped);
    return true;
  }
  PendingLaunches::Entry* p = pending_.find(e->second | kSeqKeyBit);
  if (p == nullptr) return false;
  emit(&p->slot, &t, call_context(p->slot), 0);
  pending_.erase(p);
  external_.erase(e);
  return true;
}

void RecordJoiner::end_pass(const RingState& rings, std::uint64_t now_ns, bool final) {
  last_rings_ = rings;
  settle_orphans(rings, now_ns, final);
  expire(now_ns, final);
  graphs_.sweep(now_ns, kGraphLaunchKeepNs);
  ++passes_;
}

void RecordJoiner::settle_orphans(const RingState& rings, std::uint64_t now_ns, bool final) {
  while (orphans_head_ < orphans_.size()) {
    Orphan& o = orphans_[orphans_head_];
    if (o.joined) {
      ++orphans_head_;
      continue;
    }
    // Its launch may have been drained since (hook mode: through its external correlation).
    if (join(o.timing)) {
      forget_orphan(o);
      continue;
    }
    // A record can arrive before its launch's slot is drained when the worker is behind
    // (a starved CPU) or the launching thread is descheduled before it publishes: it waits
    // until the rings, reservations included, are past it. The grace period covers a slot
    // written after its launch (kOrphanGraceNs). Old or too many orphans are settled
    // regardless, so that a stuck ring cannot hold memory.
    const bool settled_anyway =
        now_ns - o.arrived_ns > kTimingTimeoutNs || orphans_waiting_ > kMaxPending;
    const bool may_still_come = o.seq_bound > rings.oldest_waiting_seq || passes_ - o.pass < 2 ||
                                now_ns - o.arrived_ns < kOrphanGraceNs;
    if (!final && !settled_anyway && may_still_come) break;
    const KernelTiming t = o.timing;
    forget_orphan(o);
    settle_unclaimed(t, rings);
  }
  compact_orphans();
}

void RecordJoiner::compact_orphans() {
  // The queue is a vector read from orphans_head_: its front is given back in large steps,
  // and its storage once a burst is over.
  if (orphans_head_ == orphans_.size()) {
    orphans_erased_ += orphans_.size();
    if (orphans_.capacity() > kOrphanCompactAt) {
      std::vector<Orphan>().swap(orphans_);
    } else {
      orphans_.clear();
    }
    orphans_head_ = 0;
  } else if (orphans_head_ > kOrphanCompactAt && orphans_head_ * 2 > orphans_.size()) {
    orphans_.erase(orphans_.begin(), orphans_.begin() + static_cast<std::ptrdiff_t>(orphans_head_));
    orphans_erased_ += orphans_head_;
    orphans_head_ = 0;
  }
}

void RecordJoiner::forget_orphan(Orphan& o) {
  if (setup_.metadata == MetadataSource::kCuptiCallbacks && o.timing.graph_node_id == 0) {
    orphan_by_correlation_.erase(o.timing.correlation_id);
  }
  o.joined = true;
  --orphans_waiting_;
  ++orphans_head_;
}

void RecordJoiner::settle_unclaimed(const KernelTiming& t, const RingState& rings) {
  // A launch only a runtime hook saw has no correlation: join it by name and geometry.
  for (auto it = runtime_only_.begin(); it != runtime_only_.end(); ++it) {
    if (!same_kernel(it->slot, t)) continue;
    const LaunchSlot s = it->slot;
    runtime_only_.erase(it);
    emit(&s, &t, call_context(s), notes::kRuntimeOnly);
    return;
  }
  // A launch dropped from a full ring still runs: its record is an orphan too. Orphans are put
  // down to drops first (their count is known), the rest to the coverage oracle: CUPTI ran a
  // kernel no hook saw.
  if (orphans_from_drops_ < rings.launches_dropped) {
    ++orphans_from_drops_;
    emit(nullptr, &t, nullptr, notes::kLaunchDropped);
    return;
  }
  counters_.unhooked++;
  emit(nullptr, &t, nullptr, notes::kUnhooked);
}

void RecordJoiner::expire(std::uint64_t now_ns, bool final) {
  for (auto [key, p] = pending_.oldest(); p != nullptr; std::tie(key, p) = pending_.oldest()) {
    const bool too_many = pending_.size() > kMaxPending;
    if (!final && !too_many && now_ns - p->arrived_ns < kTimingTimeoutNs) break;
    counters_.timing_lost++;
    emit(&p->slot, nullptr, call_context(p->slot), notes::kUnmeasured | notes::kTimingLost);
    pending_.erase(p);
  }
  pending_.compact();
  while (!runtime_only_.empty() &&
         (final || now_ns - runtime_only_.front().arrived_ns > kTimingTimeoutNs)) {
    counters_.timing_lost++;
    const LaunchSlot s = runtime_only_.front().slot;
    runtime_only_.pop_front();
    emit(&s, nullptr, call_context(s),
         notes::kRuntimeOnly | notes::kUnmeasured | notes::kTimingLost);
  }
  while (!graph_order_.empty() &&
         (final || now_ns - graph_order_.front().second > kGraphLaunchKeepNs)) {
    const std::uint64_t key = graph_order_.front().first;
    if (key & kSeqKeyBit) {
      graph_by_seq_.erase(key & ~kSeqKeyBit);
    } else {
      graph_by_correlation_.erase(static_cast<std::uint32_t>(key));
    }
    graph_order_.pop_front();
  }
}

}  // namespace pm2lat::shim
