#include "pm2lat/calibrate/run/calibration_fit.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>

#include "pm2lat/calibrate/profile_builder.h"
#include "pm2lat/classifier.h"

namespace pm2lat::calibrate::run {
namespace {

// No kernel is shorter than this after corrections (a correction larger than the time says
// the measurement was noise).
constexpr double kMinKernelUs = 0.1;

DType storage_type(DType t) { return t == DType::kTf32 ? DType::kFp32 : t; }
DType output_type(DType t) {
  if (t == DType::kFp8E4M3 || t == DType::kFp8E5M2) return DType::kBf16;
  return storage_type(t);
}
DType compute_type(DType t) {
  if (t == DType::kTf32) return DType::kTf32;
  return DType::kFp32;  // every other dtype accumulates in FP32
}

KernelLaunch launch_of(const KernelObservation& k) {
  KernelLaunch l;
  l.name = k.name;
  l.grid = k.grid;
  l.block = k.block;
  l.cluster = k.cluster;
  return l;
}

MeasuredCall gemm_call(const MeasurementTask& t, const GemmRun& run, int index, double kernel_us,
                       const DeviceSpec& spec) {
  const GemmProblem& p = t.gemm;
  MeasuredCall c;
  c.device = spec.name;
  c.op = gemm_op_key(p.layout, p.batch);
  c.shape_key = t.id;
  KernelRecord& r = c.record;
  r.launch = launch_of(run.kernels[static_cast<std::size_t>(index)]);
  r.op.kind = OpKind::kGemm;
  r.op.source = "cublasLt";
  r.op.name = "cublasLtMatmul";
  GemmShape& g = r.op.gemm;
  g.batch = p.batch;
  g.m = p.m;
  g.n = p.n;
  g.k = p.k;
  g.trans_a = p.layout == GemmLayout::kWeightGrad;
  g.trans_b = p.layout == GemmLayout::kLinear;
  g.a = g.b = storage_type(p.dtype);
  g.c = output_type(p.dtype);
  g.compute = compute_type(p.dtype);
  g.algo_split_k = std::max(0, run.algo.split_k);
  r.measured_us = kernel_us;
  r.basis = TimeBasis::kKernel;
  return c;
}

MeasuredCall memory_call(const MeasurementTask& t, const TaskResult& res, double gap_us,
                         const DeviceSpec& spec) {
  const MemoryProblem& p = t.memory;
  MeasuredCall c;
  c.device = spec.name;
  c.op = std::string(memory_op_key(p.pattern));
  c.shape_key = t.id;
  KernelRecord& r = c.record;
  r.launch = launch_of(res.memory_kernel);
  r.op.kind = p.pattern == MemoryPattern::kSoftmaxRows ? OpKind::kSoftmax : OpKind::kElementwise;
  r.op.source = "pm2lat-calibrate";
  r.op.name = c.op;
  r.op.vec.rows = p.rows;
  r.op.vec.cols = p.cols;
  r.op.vec.bytes_read = p.bytes_read();
  r.op.vec.bytes_written = p.bytes_written();
  r.op.vec.dtype = p.dtype;
  r.measured_us = std::max(kMinKernelUs, res.memory_timing.median_us - gap_us);
  r.basis = TimeBasis::kKernel;
  return c;
}

std::vector<const MeasuredCall*> pointers(
    std::initializer_list<const std::vector<MeasuredCall>*> lists) {
  std::vector<const MeasuredCall*> out;
  for (const auto* l : lists) {
    for (const auto& c : *l) out.push_back(&c);
  }
  return out;
}

const LaunchOverhead* launch_result(const std::vector<MeasuredTask>& m) {
  for (const auto& x : m) {
    if (x.task.kind == TaskKind::kLaunch && x.result.error.empty()) return &x.result.launch;
  }
  return nullptr;
}

}  // namespace

double launch_gap_us(const std::vector<MeasuredTask>& measurements) {
  const LaunchOverhead* l = launch_result(measurements);
  if (l == nullptr) return 0;
  return std::max(0.0, l->graph_per_launch_us - l->kernel_us);
}

int gemm_kernel_index(const GemmRun& run) {
  for (std::size_t i = 0; i < run.kernels.size(); ++i) {
    const KernelClass c = classify_kernel(run.kernels[i].name);
    if (c.family == KernelFamily::kGemm && c.gemm.tile_m > 0 && c.gemm.tile_n > 0)
      return static_cast<int>(i);
  }
  return -1;
}

double gemm_kernel_us(const GemmRun& run, int gemm_index, double gap_us) {
  double us = run.timing.median_us - gap_us * static_cast<double>(run.kernels.size());
  for (std::size_t i = 0; i < run.kernels.size(); ++i) {
    if (static_cast<int>(i) != gemm_index) us -= run.kernels[i].duration_us;
  }
  return std::max(kMinKernelUs, us);
}

CallSets measured_calls(const std::vector<MeasuredTask>& measurements, const DeviceSpec& spec,
                        double gap_us) {
  CallSets out;
  for (const MeasuredTask& m : measurements) {
    const TaskResult& res = m.result;
    if (!res.error.empty()) {
      if (m.task.kind != TaskKind::kLaunch) ++out.skipped;
      continue;
    }
    switch (m.task.kind) {
      case TaskKind::kLaunch: break;
      case TaskKind::kMemory: out.memory.push_back(memory_call(m.task, res, gap_us, spec)); break;
      case TaskKind::kGemm:
      case TaskKind::kGemmCandidates:
      case TaskKind::kGemmFill:
        for (const GemmRun& run : res.gemm) {
          const int index =
              run.error.empty() && run.timing.median_us > 0 ? gemm_kernel_index(run) : -1;
          if (index < 0) {
            ++out.skipped;
            continue;
          }
          MeasuredCall c = gemm_call(m.task, run, index, gemm_kernel_us(run, index, gap_us), spec);
          const bool pick = m.task.kind == TaskKind::kGemm && run.rank == 0;
          (pick ? out.selectable : out.fit_only).push_back(std::move(c));
        }
        break;
    }
  }
  return out;
}

std::vector<DType> gemm_dtypes(const std::vector<MeasuredTask>& measurements) {
  std::vector<DType> out;
  for (const MeasuredTask& m : measurements) {
    const TaskKind k = m.task.kind;
    if ((k == TaskKind::kGemm || k == TaskKind::kGemmCandidates || k == TaskKind::kGemmFill) &&
        std::find(out.begin(), out.end(), m.task.gemm.dtype) == out.end()) {
      out.push_back(m.task.gemm.dtype);
    }
  }
  return out;
}

Profile fit_profile(const std::vector<MeasuredTask>& measurements, const DeviceSpec& spec,
                    const Provenance& provenance, DType gemm_dtype, FitReport* report) {
  FitReport local;
  FitReport& rep = report ? *report : local;
  const LaunchOverhead* launch = launch_result(measurements);
  rep.launch_measured = launch != nullptr;
  rep.launch_gap_us = launch_gap_us(measurements);
  std::vector<MeasuredTask> mine;
  for (const MeasuredTask& m : measurements) {
    const TaskKind k = m.task.kind;
    const bool gemm =
        k == TaskKind::kGemm || k == TaskKind::kGemmCandidates || k == TaskKind::kGemmFill;
    if (!gemm || m.task.gemm.dtype == gemm_dtype) mine.push_back(m);
  }
  const CallSets calls = measured_calls(mine, spec, rep.launch_gap_us);

  BuildOptions opt;
  opt.basis = TimeBasis::kKernel;
  opt.provenance = provenance;
  // Fits see every run; the points are the heuristic's picks only.
  BuildReport all_rep;
  Profile p = build_profile(pointers({&calls.selectable, &calls.fit_only, &calls.memory}), spec,
                            opt, &all_rep);
  const Profile picks = build_profile(pointers({&calls.selectable}), spec, opt);
  p.gemm_points.clear();
  for (GemmPoint pt : picks.gemm_points) {
    const int idx =
        p.find_gemm_config(picks.gemm_configs[static_cast<std::size_t>(pt.config)].config);
    if (idx < 0) continue;
    pt.config = idx;
    p.gemm_points.push_back(pt);
  }

  if (launch != nullptr) {
    // Launch overhead in the profile's own terms: an events-timed call of one empty kernel
    // never measures below floor_us, and its kernel starts pre_us after the start event.
    CallOverhead& o = p.call_overhead["*"];
    o.floor_us = launch->single_call_us;
    o.pre_us = std::max(0.0, launch->single_call_us - launch->kernel_us);
    p.provenance.environment["launch_empty_kernel_us"] = fmt::format("{:.3f}", launch->kernel_us);
    p.provenance.environment["launch_graph_gap_us"] = fmt::format("{:.3f}", rep.launch_gap_us);
    p.provenance.environment["launch_single_call_us"] =
        fmt::format("{:.3f}", launch->single_call_us);
    p.provenance.environment["launch_host_us"] = fmt::format("{:.3f}", launch->host_launch_us);
  }

  rep.gemm_points = p.gemm_points.size();
  rep.gemm_fit_only = calls.fit_only.size();
  rep.gemm_configs = p.gemm_configs.size();
  rep.memory_rows = all_rep.vector_rows;
  rep.vector_fits = p.vector_fits.size();
  rep.skipped = calls.skipped + all_rep.skipped_rows;
  std::vector<double> mape;
  for (const auto& c : p.gemm_configs) {
    if (c.points >= 2) mape.push_back(c.fit_mape_pct);
  }
  if (!mape.empty()) {
    std::sort(mape.begin(), mape.end());
    rep.median_config_mape_pct = mape[mape.size() / 2];
    rep.max_config_mape_pct = mape.back();
  }
  return p;
}

std::size_t write_candidates_csv(const std::filesystem::path& file,
                                 const std::vector<MeasuredTask>& measurements) {
  // The pick at each shape, from the survey task of that shape.
  std::map<std::string, const GemmRun*> picks;
  for (const MeasuredTask& m : measurements) {
    if (m.task.kind != TaskKind::kGemm || !m.result.error.empty()) continue;
    for (const GemmRun& r : m.result.gemm) {
      if (r.rank == 0 && r.error.empty()) picks[gemm_task_id(TaskKind::kGemm, m.task.gemm)] = &r;
    }
  }
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> out(std::fopen(file.c_str(), "w"), &std::fclose);
  if (!out) throw std::runtime_error(fmt::format("{}: cannot write", file.string()));
  fmt::print(out.get(),
             "dtype,layout,batch,m,n,k,rank,algo_id,tile_id,stages_id,split_k,swizzle,custom,"
             "cluster_id,kernel,"
             "grid,call_us,vs_pick_pct\n");
  std::size_t rows = 0;
  for (const MeasuredTask& m : measurements) {
    if (m.task.kind != TaskKind::kGemmCandidates || !m.result.error.empty()) continue;
    const GemmProblem& p = m.task.gemm;
    const auto pick_it = picks.find(gemm_task_id(TaskKind::kGemm, p));
    const GemmRun* pick = pick_it == picks.end() ? nullptr : pick_it->second;
    std::vector<const GemmRun*> runs;
    if (pick) runs.push_back(pick);
    for (const GemmRun& r : m.result.gemm) runs.push_back(&r);
    for (const GemmRun* r : runs) {
      const int gi = gemm_kernel_index(*r);
      const KernelObservation* k = gi >= 0 ? &r->kernels[static_cast<std::size_t>(gi)]
                                           : (r->kernels.empty() ? nullptr : &r->kernels[0]);
      const double vs = pick && pick->timing.median_us > 0 && r->error.empty()
                            ? 100.0 * (r->timing.median_us / pick->timing.median_us - 1.0)
                            : 0.0;
      fmt::print(out.get(), "{},{},{},{},{},{},{},{},{},{},{},{},{},{},\"{}\",{}x{}x{},{},{}\n",
                 to_string(p.dtype), to_string(p.layout), p.batch, p.m, p.n, p.k, r->rank,
                 r->algo.id, r->algo.tile, r->algo.stages, r->algo.split_k, r->algo.swizzle,
                 r->algo.custom, r->algo.cluster,
                 k ? k->name : (r->error.empty() ? "" : "error: " + r->error), k ? k->grid.x : 0,
                 k ? k->grid.y : 0, k ? k->grid.z : 0,
                 r->error.empty() ? fmt::format("{:.3f}", r->timing.median_us) : "",
                 r->error.empty() ? fmt::format("{:.1f}", vs) : "");
      ++rows;
    }
  }
  return rows;
}

}  // namespace pm2lat::calibrate::run
