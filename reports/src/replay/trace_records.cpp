#include "pm2lat/reports/replay/trace_records.h"

#include <cmath>

#include "pm2lat/models/gemm_wave_model.h"
#include "pm2lat/reports/replay/trace_op_context.h"
#include "pm2lat/reports/replay/trace_op_linker.h"

namespace pm2lat::reports {

TraceRecords records_from_trace(KinetoTrace& trace, KernelClassCache& classes) {
  link_kernels_to_ops(trace);
  TraceRecords out;
  out.source = trace.source;
  out.rank = std::max(0, trace.rank);
  if (!trace.kernels.empty()) {
    const TraceDevice* dev = trace.device(trace.kernels.front().device);
    if (dev == nullptr && !trace.devices.empty()) dev = &trace.devices.front();
    if (dev != nullptr) {
      out.gpu = dev->name;
      out.gpu_hardware = {dev->cc_major, dev->cc_minor, dev->sm_count};
    }
  }
  const double t0 = trace.kernels.empty() ? 0.0 : trace.kernels.front().ts_us;
  out.records.reserve(trace.kernels.size());
  out.classes.reserve(trace.kernels.size());
  std::uint64_t seq = 0;
  const std::vector<double> op_threads = launched_threads_per_op(trace);
  // The split-K slices of the last GEMM kernel each operator launched: its reduction kernel
  // follows it inside the same operator and sums that many partial results.
  std::vector<std::int32_t> op_split_k(trace.ops.size(), 0);
  for (const TraceKernel& k : trace.kernels) {
    KernelRecord r;
    r.seq = seq++;
    r.ts_ns = static_cast<std::uint64_t>(std::llround(std::max(0.0, k.ts_us - t0) * 1000.0));
    r.device = k.device;
    r.stream = static_cast<std::uint64_t>(std::max<std::int64_t>(0, k.stream));
    r.launch.name = trace.strings[k.name];
    r.launch.grid = k.grid;
    r.launch.block = k.block;
    r.launch.shared_mem_bytes = k.shared_mem;
    r.launch.registers_per_thread = k.registers;
    const KernelClass& cls = classes.classify(r.launch.name);
    r.op = op_context_for_kernel(trace, k, cls, &r.launch.int_args, &op_threads);
    if (k.op >= 0 && static_cast<std::size_t>(k.op) < op_split_k.size()) {
      std::int32_t& split = op_split_k[static_cast<std::size_t>(k.op)];
      if (cls.family == KernelFamily::kGemm && r.op.kind == OpKind::kGemm) {
        split = split_k_from_grid(k.grid, r.op.gemm.batch);
      } else if (cls.family == KernelFamily::kSplitKReduce && r.op.kind == OpKind::kGemm) {
        charge_split_k_slices(r.op, split, cls.family);
      }
    }
    r.measured_us = k.dur_us;
    r.basis = TimeBasis::kKernel;
    if (k.op >= 0) ++out.linked;
    if (r.op.source == kRejectedWorkSource) {
      ++out.work_rejected;
    } else if (r.op.source == "geometry") {
      ++out.from_geometry;
    } else if (r.op.gemm.valid() || r.op.conv.valid() || r.op.attention.valid() ||
               r.op.vec.bytes() > 0 || r.op.collective.bytes > 0) {
      ++out.with_shape;
    }
    out.records.push_back(std::move(r));
    out.classes.push_back(&cls);
  }
  return out;
}

}  // namespace pm2lat::reports
