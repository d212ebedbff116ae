#include "pm2lat/calibrate/run/gemm_fill_planner.h"

#include <fmt/core.h>

#include <algorithm>
#include <set>
#include <tuple>

#include "pm2lat/calibrate/run/measurement_cost.h"
#include "pm2lat/classifier.h"

namespace pm2lat::calibrate::run {
namespace {

using ShapeKey =
    std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>;  // batch, m, n, k

ShapeKey key(const GemmProblem& p) { return {p.batch, p.m, p.n, p.k}; }

std::uint32_t fnv1a32(const std::string& s) {
  std::uint32_t h = 2166136261u;
  for (unsigned char c : s) {
    h ^= c;
    h *= 16777619u;
  }
  return h;
}

// Sizes around the anchor, in the order they are tried: the K loop first (it is what the
// wave model's per-step terms need), then the number of waves (M, then N), then both.
struct Step {
  double m, n, k;
};
constexpr Step kSteps[] = {{1, 1, 4}, {1, 1, 0.25},  {4, 1, 1}, {0.25, 1, 1},
                           {1, 1, 2}, {1, 1, 0.5},   {2, 1, 1}, {0.5, 1, 1},
                           {1, 2, 1}, {1, 0.5, 1},   {2, 2, 1}, {0.5, 0.5, 1},
                           {1, 1, 8}, {1, 1, 0.125}, {2, 2, 2}, {0.5, 0.5, 0.5},
                           {3, 1, 1}, {1, 3, 1},     {1, 1, 3}, {1.5, 1.5, 1.5}};
constexpr std::int64_t kMinDim = 16;

// Multiples of 16 keep every dtype's alignment requirement.
std::int64_t scaled(std::int64_t v, double f) {
  const auto s = static_cast<std::int64_t>(static_cast<double>(v) * f + 0.5);
  return std::max<std::int64_t>(kMinDim, (s + 15) / 16 * 16);
}

struct ConfigGroup {
  std::vector<const MeasurementTask*> anchors;  // survey tasks where the heuristic picked it
  std::set<ShapeKey> sizes;                     // survey and candidate shapes that ran it
};

}  // namespace

std::string gemm_run_config(const GemmRun& run) {
  for (const auto& k : run.kernels) {
    const KernelClass c = classify_kernel(k.name);
    if (c.family == KernelFamily::kGemm && c.gemm.tile_m > 0 && c.gemm.tile_n > 0) return c.config;
  }
  return "";
}

std::vector<MeasurementTask> plan_fill(const CalibrationPlan& plan,
                                       const std::map<std::string, const TaskResult*>& done) {
  // (dtype, layout, batched) -> config -> group; shapes measured per (dtype, layout, batched).
  using GroupKey = std::tuple<DType, GemmLayout, bool>;
  std::map<GroupKey, std::map<std::string, ConfigGroup>> groups;
  std::map<GroupKey, std::set<ShapeKey>> measured;
  std::int64_t max_dim = 0;
  for (std::int64_t d : plan.options.dims) max_dim = std::max(max_dim, d);
  for (const MeasurementTask& t : plan.tasks) {
    if (t.kind != TaskKind::kGemm && t.kind != TaskKind::kGemmCandidates) continue;
    const auto it = done.find(t.id);
    if (it == done.end() || !it->second->error.empty()) continue;
    const GroupKey gk{t.gemm.dtype, t.gemm.layout, t.gemm.batch > 1};
    measured[gk].insert(key(t.gemm));
    for (const GemmRun& run : it->second->gemm) {
      if (!run.error.empty()) continue;
      const std::string config = gemm_run_config(run);
      if (config.empty()) continue;
      ConfigGroup& g = groups[gk][config];
      g.sizes.insert(key(t.gemm));
      if (t.kind == TaskKind::kGemm && run.rank == 0) g.anchors.push_back(&t);
    }
  }

  std::vector<MeasurementTask> out;
  const int want = std::max(0, plan.options.fill_sizes);
  for (auto& [gk, configs] : groups) {
    std::set<ShapeKey>& taken = measured[gk];
    for (auto& [config, g] : configs) {
      if (g.anchors.empty() || static_cast<int>(g.sizes.size()) >= want) continue;
      // The anchor: the median-work shape where the heuristic picked this configuration.
      std::sort(g.anchors.begin(), g.anchors.end(),
                [](const MeasurementTask* a, const MeasurementTask* b) {
                  return std::make_tuple(a->gemm.flops(), a->id) <
                         std::make_tuple(b->gemm.flops(), b->id);
                });
      const MeasurementTask& anchor = *g.anchors[g.anchors.size() / 2];
      int missing = want - static_cast<int>(g.sizes.size());
      for (const Step& s : kSteps) {
        if (missing <= 0) break;
        GemmProblem p = anchor.gemm;
        p.m = scaled(p.m, s.m);
        p.n = scaled(p.n, s.n);
        p.k = scaled(p.k, s.k);
        if (max_dim > 0 && std::max({p.m, p.n, p.k}) > 2 * max_dim) continue;
        if (!taken.insert(key(p)).second) continue;  // another task already measures this shape
        MeasurementTask t;
        t.kind = TaskKind::kGemmFill;
        t.gemm = p;
        t.anchor = anchor.id;
        t.config = config;
        t.id = fmt::format("{}/{:08x}", gemm_task_id(TaskKind::kGemmFill, p), fnv1a32(config));
        t.timing = gemm_timing(p, plan.spec, plan.options.reps);
        t.estimated_us = estimated_task_us(estimated_kernel_us(p, plan.spec), t.timing,
                                           kCostConstants.gemm_task_setup_us);
        out.push_back(std::move(t));
        --missing;
      }
    }
  }
  return out;
}

}  // namespace pm2lat::calibrate::run
