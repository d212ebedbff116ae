#include "collect/record_builder.h"

#include <algorithm>
#include <cmath>

#include "collect/predictor_adapter.h"
#include "collect/record_sink.h"
#include "launch_path/launch_path_state.h"
#include "launch_path/launch_recorder.h"
#include "launch_path/string_table.h"
#include "pm2lat/models/gemm_wave_model.h"

namespace pm2lat::shim {

namespace {

// An 8-byte kernel parameter this large is a pointer, not a size the models could use.
constexpr std::int64_t kLargestSizeArgument = std::int64_t(1) << 40;

void set_dim(Dim3& d, const std::uint32_t v[3]) { d = Dim3{v[0], v[1], v[2]}; }

// The GEMM configuration a record carries comes from the kernel it ran, whichever way the
// library reached it: cuBLAS runs its GEMMs on cuBLASLt through internal entry points, so the
// algorithm is rarely seen at a cublasLtMatmul call. What cuBLASLt said, when it did, stays.
void complete_gemm_config(GemmShape& g, const KernelClass& cls, const Dim3& grid) {
  if (cls.family != KernelFamily::kGemm) return;
  if (g.algo_tile_m == 0 && cls.gemm.tile_m > 0 && cls.gemm.tile_n > 0) {
    g.algo_tile_m = cls.gemm.tile_m;
    g.algo_tile_n = cls.gemm.tile_n;
  }
  if (g.algo_stages == 0 && cls.gemm.stages > 0) g.algo_stages = cls.gemm.stages;
  // cuBLAS and CUTLASS launch split-K slices along grid z, batch by batch (the reading the
  // GEMM models make of a launch).
  if (g.algo_split_k == 0) g.algo_split_k = split_k_from_grid(grid, g.batch);
}

}  // namespace

RecordBuilder::RecordBuilder(std::int32_t rank, RecordSink& sink) : rank_(rank), sink_(sink) {}

void RecordBuilder::on_kernel(const JoinedKernel& kernel) {
  if (sink_.waiting_for_profiles()) {
    if (!held_.full()) {
      held_.add(kernel);
      return;
    }
  } else if (!held_.empty()) {
    release_held();  // first what came first
  }
  build(kernel, scratch_);
  sink_.add(scratch_);
}

void RecordBuilder::release_held() {
  if (held_.empty() || sink_.waiting_for_profiles()) return;
  held_.release([this](const JoinedKernel& k) {
    build(k, scratch_);
    sink_.add(scratch_);
  });
}

// A library call's split-K reduction follows its GEMM kernel and sums the partial results
// of the slices that kernel's launch ran, which the call itself rarely states.
void RecordBuilder::carry_split_k(GemmShape& g, KernelFamily family, std::uint64_t call) {
  if (family == KernelFamily::kGemm) {
    last_gemm_call_ = call;
    last_gemm_split_k_ = g.algo_split_k;
  } else if (family == KernelFamily::kSplitKReduce && g.algo_split_k == 0 && call != 0 &&
             call == last_gemm_call_) {
    g.algo_split_k = last_gemm_split_k_;
  }
}

const KernelClass& RecordBuilder::classify(std::uint32_t name_id) {
  auto it = classes_.find(name_id);
  if (it != classes_.end()) return it->second;
  return classes_.emplace(name_id, PredictorAdapter::classify(StringTable::instance().get(name_id)))
      .first->second;
}

std::uint32_t RecordBuilder::name_id_of(const JoinedKernel& k) {
  const std::uint32_t id = k.launch ? k.launch->name_id : StringTable::kUnknown;
  if (id != StringTable::kUnknown || k.timing == nullptr || k.timing->name == nullptr) return id;
  // The hooks could not name it (or never saw it): CUPTI's name.
  auto it = cupti_names_.find(k.timing->name);
  if (it == cupti_names_.end()) {
    it = cupti_names_.emplace(k.timing->name, StringTable::instance().intern(k.timing->name)).first;
  }
  return it->second;
}

void RecordBuilder::build(const JoinedKernel& k, BuiltRecord& b) {
  const LaunchSlot* s = k.launch;
  const KernelTiming* t = k.timing;
  b.name_id = name_id_of(k);
  b.measured_ns = 0;
  b.handle = 0;
  b.geometry = 0;
  PredictedRecord& pr = b.pr;
  pr.predictions.clear();
  KernelRecord& r = pr.record;
  r.seq = (s != nullptr && !k.replay)
              ? s->seq
              : launch_path_state().next_seq.fetch_add(1, std::memory_order_relaxed);
  r.ts_ns = t ? t->start_ns : s->host_ts_ns;
  // CUPTI's record says the device; a launch timed with events, its slot (the events'
  // context's device).
  r.device = t ? static_cast<std::int32_t>(t->device) : (s != nullptr ? s->device : 0);
  r.stream = t ? t->stream : s->stream;
  r.graph_id = 0;
  r.graph_node_id = 0;
  r.launch.name.assign(StringTable::instance().get(b.name_id));
  set_dim(r.launch.grid, s ? s->grid : t->grid);
  set_dim(r.launch.block, s ? s->block : t->block);
  set_dim(r.launch.cluster, s ? s->cluster : t->cluster);
  // CUPTI's shared memory (static + dynamic) when it measured the kernel: a launch seen by a
  // CUPTI callback may not know its handle's static part.
  r.launch.shared_mem_bytes = t ? t->smem : s->smem;
  r.launch.registers_per_thread = (s && s->regs) ? s->regs : (t ? t->registers : 0);
  r.launch.int_args.clear();
  if (t != nullptr && t->graph_node_id != 0) {
    r.graph_id = t->graph_id;
    r.graph_node_id = t->graph_node_id;
  }

  RecordNotes& n = b.notes;
  n.api = nullptr;
  n.via = nullptr;
  n.correlation = 0;
  n.call = 0;
  n.args.clear();
  n.bits = k.notes;
  if (s != nullptr) {
    for (int i = 0; i < s->n_args; ++i) {
      const std::int64_t v = s->args[i];
      n.args.push_back(v);
      const bool eight_bytes = (s->arg_is_8byte >> i) & 1u;
      if (!eight_bytes || (v > -kLargestSizeArgument && v < kLargestSizeArgument)) {
        r.launch.int_args.push_back(v);
      }
    }
    n.call = s->call_id;
    if (s->flags & slot_flags::kFirstLaunch) n.bits |= notes::kFirstLaunch;
    if (s->flags & slot_flags::kCooperative) n.bits |= notes::kCooperative;
    if (s->flags & slot_flags::kRuntimeOnly) n.bits |= notes::kRuntimeOnly;
    if (s->api != LaunchApi::kUnknown) n.api = to_string(s->api);
    if (s->runtime_api != LaunchApi::kUnknown) n.via = to_string(s->runtime_api);
    n.correlation = s->correlation_id;
  }
  if (t != nullptr) {
    n.correlation = t->correlation_id;
    if (t->cooperative) n.bits |= notes::kCooperative;
  }
  OpContext& op = r.op;
  op.kind = k.op ? k.op->kind : OpKind::kUnknown;
  op.source.assign(k.op ? to_string(k.op->source) : "");
  op.name.assign(k.op ? to_string(k.op->api) : "");
  op.gemm = k.op ? k.op->gemm_or_default() : GemmShape{};
  op.conv = k.op ? k.op->conv_or_default() : ConvShape{};
  op.attention = AttentionShape{};
  op.vec = VectorShape{};
  op.collective = CollectiveShape{};
  if (k.op != nullptr) n.call = k.op->call_id;

  r.measured_us.reset();
  if (t != nullptr) {
    b.measured_ns = t->end_ns - t->start_ns;
    r.measured_us = double(b.measured_ns) / 1000.0;
  } else if (k.events_us) {
    r.measured_us = *k.events_us;
    b.measured_ns = static_cast<std::uint64_t>(std::llround(*k.events_us * 1000.0));
  }
  r.basis = TimeBasis::kKernel;
  pr.rank = rank_;

  const KernelClass& cls = classify(b.name_id);
  b.cls = &cls;
  if (op.kind == OpKind::kGemm) {
    complete_gemm_config(op.gemm, cls, r.launch.grid);
    carry_split_k(op.gemm, cls.family, n.call);
  }
  pr.family = cls.family;
  pr.config = cls.config;
  if (s != nullptr) {
    b.handle = s->handle;
    b.geometry = geometry_digest(s->name_id, s->grid, s->block, s->smem);
  }
}

}  // namespace pm2lat::shim
