#include "pm2lat/calibrate/run/calibration_plan.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

#include "pm2lat/calibrate/run/measurement_cost.h"
#include "pm2lat/text.h"

namespace pm2lat::calibrate::run {
namespace {

// Grid densities, densest first. Half-octave steps (x1.5, x1.33) put the hidden sizes of
// real models (768, 1536, 3072, 6144, 12288) on the grid and give every configuration
// partial last waves of different sizes.
struct Density {
  const char* name;
  std::vector<std::int64_t> dims;
  std::vector<std::int64_t> batched_dims;  // M = N and K of the batched shapes
  std::vector<std::int64_t> batches;
  double memory_step_octaves;
};

const std::vector<Density>& densities() {
  static const std::vector<Density> kDensities{
      {"fine",
       {64, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384},
       {64, 128, 256, 512, 1024, 2048},
       {4, 16, 64},
       0.25},
      {"medium",
       {64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384},
       {64, 128, 256, 512, 1024, 2048},
       {4, 16, 64},
       0.5},
      {"coarse", {64, 256, 1024, 4096, 16384}, {64, 256, 1024}, {16}, 0.5},
  };
  return kDensities;
}

// Repetitions tried for each density, most first.
constexpr int kRepsChoices[] = {20, 10, 5};

// Kernel configurations cuBLASLt picks over one dtype and layout's grid (fill estimate).
constexpr int kAssumedConfigsPerGroup = 12;
// Shapes whose kernel is estimated longer than this get no candidate measurements.
constexpr double kCandidateMaxKernelUs = 2000;
// Softmax row lengths of the bandwidth curves: enough (x sizes) for a per-row term to be fitted.
constexpr std::int64_t kSoftmaxCols[] = {256, 1024, 4096, 16384, 65536};

bool fp8(DType t) { return t == DType::kFp8E4M3 || t == DType::kFp8E5M2; }

// Hopper's FP8 GEMMs need A transposed: only the linear layout (TN in cuBLAS terms) runs.
std::vector<GemmLayout> layouts_for(DType t, const std::vector<GemmLayout>& wanted) {
  if (!fp8(t)) return wanted;
  if (std::find(wanted.begin(), wanted.end(), GemmLayout::kLinear) != wanted.end())
    return {GemmLayout::kLinear};
  return {};
}

MeasurementTask gemm_task(TaskKind kind, const GemmProblem& p, const DeviceSpec& spec, int reps,
                          int candidates = 0) {
  MeasurementTask t;
  t.kind = kind;
  t.gemm = p;
  t.id = gemm_task_id(kind, p);
  t.timing = gemm_timing(p, spec, reps);
  t.candidates = candidates;
  t.estimated_us =
      estimated_task_us(estimated_kernel_us(p, spec), t.timing, kCostConstants.gemm_task_setup_us,
                        kind == TaskKind::kGemmCandidates ? std::max(1, candidates - 1) : 1);
  return t;
}

MeasurementTask memory_task(const MemoryProblem& p, const DeviceSpec& spec, int reps) {
  MeasurementTask t;
  t.kind = TaskKind::kMemory;
  t.memory = p;
  t.id = memory_task_id(p);
  t.timing = memory_timing(p, spec, reps);
  t.estimated_us = estimated_task_us(estimated_kernel_us(p, spec), t.timing,
                                     kCostConstants.memory_task_setup_us);
  return t;
}

// Memory sizes from L2/8 to 4x L2 (bytes moved per launch), `step` octaves apart.
void add_memory_tasks(const DeviceSpec& spec, const PlanOptions& o, double step,
                      std::vector<MeasurementTask>& out) {
  const double l2 = std::max(1.0, spec.l2_mb) * 1024.0 * 1024.0;
  std::vector<DType> types{DType::kFp32};
  for (DType t : o.dtypes) {
    if (t == DType::kBf16 || t == DType::kFp16 || fp8(t)) {
      types.push_back(DType::kBf16);
      break;
    }
  }
  const int steps = static_cast<int>(std::lround(5.0 / step));  // 2^-3 .. 2^2
  auto size = [&](int i) { return l2 * std::pow(2.0, -3.0 + i * step); };
  // Copies move bytes whatever their type: one curve. The others per element type, one type
  // after the other (the operands are refilled when the type changes).
  for (int i = 0; i <= steps; ++i) {
    MemoryProblem p;
    p.pattern = MemoryPattern::kCopy;
    p.dtype = DType::kFp32;
    p.cols = std::max<std::int64_t>(1024, static_cast<std::int64_t>(size(i) / 8.0) / 1024 * 1024);
    out.push_back(memory_task(p, spec, o.reps));
  }
  for (DType t : types) {
    const double e = dtype_bytes(t);
    for (int i = 0; i <= steps; ++i) {
      MemoryProblem add;
      add.pattern = MemoryPattern::kAdd;
      add.dtype = t;
      add.cols = std::max<std::int64_t>(
          1024, static_cast<std::int64_t>(size(i) / (3.0 * e)) / 1024 * 1024);
      out.push_back(memory_task(add, spec, o.reps));
      for (std::int64_t cols : kSoftmaxCols) {
        MemoryProblem sm;
        sm.pattern = MemoryPattern::kSoftmaxRows;
        sm.dtype = t;
        sm.cols = cols;
        sm.rows = std::max<std::int64_t>(
            1, static_cast<std::int64_t>(size(i) / (2.0 * e * static_cast<double>(cols))));
        out.push_back(memory_task(sm, spec, o.reps));
      }
    }
  }
}

struct Grid {
  std::vector<std::int64_t> dims, batched_dims, batches;
  double memory_step = 0.5;
};

CalibrationPlan build(const DeviceSpec& spec, const PlanOptions& o, const Grid& g,
                      const std::string& density) {
  CalibrationPlan plan;
  plan.spec = spec;
  plan.options = o;
  plan.options.dims = g.dims;
  plan.options.batches = g.batches;
  plan.density = density;

  MeasurementTask launch;
  launch.kind = TaskKind::kLaunch;
  launch.id = "launch";
  launch.estimated_us = kCostConstants.launch_task_us;
  plan.tasks.push_back(launch);

  if (o.memory) add_memory_tasks(spec, o, g.memory_step, plan.tasks);

  std::vector<MeasurementTask> candidates;
  std::map<std::pair<DType, GemmLayout>, std::pair<std::size_t, double>> groups;  // tasks, estimate
  for (DType t : o.dtypes) {
    for (GemmLayout l : layouts_for(t, o.layouts)) {
      std::vector<GemmProblem> shapes;
      for (std::int64_t m : g.dims)
        for (std::int64_t n : g.dims)
          for (std::int64_t k : g.dims) shapes.push_back(GemmProblem{t, l, 1, m, n, k});
      if (l == GemmLayout::kMatmul) {
        for (std::int64_t b : g.batches)
          for (std::int64_t mn : g.batched_dims)
            for (std::int64_t k : g.batched_dims) shapes.push_back(GemmProblem{t, l, b, mn, mn, k});
      }
      const int stride = std::max(1, o.candidate_stride);
      for (std::size_t i = 0; i < shapes.size(); ++i) {
        MeasurementTask task = gemm_task(TaskKind::kGemm, shapes[i], spec, o.reps);
        auto& grp = groups[{t, l}];
        ++grp.first;
        grp.second += task.estimated_us;
        plan.tasks.push_back(task);
        if (o.candidates > 1 &&
            static_cast<int>(i % static_cast<std::size_t>(stride)) == stride / 2 &&
            estimated_kernel_us(shapes[i], spec) < kCandidateMaxKernelUs) {
          candidates.push_back(
              gemm_task(TaskKind::kGemmCandidates, shapes[i], spec, o.reps, o.candidates));
        }
      }
    }
  }
  plan.tasks.insert(plan.tasks.end(), candidates.begin(), candidates.end());
  // Sizes that round to the same shape (small L2, custom grids) are measured once.
  std::set<std::string> seen;
  plan.tasks.erase(
      std::remove_if(plan.tasks.begin(), plan.tasks.end(),
                     [&](const MeasurementTask& t) { return !seen.insert(t.id).second; }),
      plan.tasks.end());

  // Fill: configurations found at too few sizes get forced on more (after the survey).
  plan.assumed_configs_per_group = kAssumedConfigsPerGroup;
  for (const auto& [key, grp] : groups) {
    const std::size_t configs =
        std::min<std::size_t>(kAssumedConfigsPerGroup, std::max<std::size_t>(1, grp.first / 4));
    const std::size_t fill = configs * static_cast<std::size_t>(std::max(0, o.fill_sizes));
    plan.fill_tasks_estimate += fill;
    plan.fill_estimated_s +=
        static_cast<double>(fill) * grp.second / static_cast<double>(grp.first) * 1e-6;
  }
  return plan;
}

std::string join_dims(const std::vector<std::int64_t>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

std::string part_name(const MeasurementTask& t) {
  switch (t.kind) {
    case TaskKind::kLaunch: return "launch overhead";
    case TaskKind::kMemory: return "memory bandwidth curves";
    case TaskKind::kGemm: return fmt::format("gemm {} survey", to_string(t.gemm.dtype));
    case TaskKind::kGemmCandidates: return "gemm heuristic candidates";
    case TaskKind::kGemmFill: return "gemm fill";
  }
  return "other";
}

}  // namespace

std::vector<PlanPart> CalibrationPlan::parts() const {
  std::vector<PlanPart> out;
  for (const auto& t : tasks) {
    const std::string name = part_name(t);
    auto it =
        std::find_if(out.begin(), out.end(), [&](const PlanPart& p) { return p.name == name; });
    if (it == out.end()) {
      out.push_back(PlanPart{name, 0, 0});
      it = out.end() - 1;
    }
    ++it->tasks;
    it->estimated_s += t.estimated_us * 1e-6;
  }
  if (fill_tasks_estimate > 0)
    out.push_back(PlanPart{"gemm fill (estimate)", fill_tasks_estimate, fill_estimated_s});
  return out;
}

double CalibrationPlan::estimated_s() const {
  double s = fill_estimated_s;
  for (const auto& t : tasks) s += t.estimated_us * 1e-6;
  return s;
}

CalibrationPlan plan_calibration(const DeviceSpec& spec, PlanOptions options) {
  if (options.dtypes.empty()) throw std::invalid_argument("no dtypes to calibrate");
  if (spec.sm_count <= 0 || spec.mem_bw_gbps <= 0) {
    throw std::invalid_argument(
        fmt::format("device spec of '{}' lacks SM count or bandwidth", spec.name));
  }
  if (!options.dims.empty()) {
    Grid g{options.dims, {}, options.batches, 0.5};
    for (std::int64_t d : options.dims) {
      if (d <= 2048) g.batched_dims.push_back(d);
    }
    if (options.reps <= 0) options.reps = kRepsChoices[0];
    return build(spec, options, g, "custom");
  }
  CalibrationPlan best;
  bool have = false;
  for (const Density& d : densities()) {
    for (int reps : kRepsChoices) {
      if (options.reps > 0 && reps != kRepsChoices[0]) continue;  // reps fixed: one try per density
      PlanOptions o = options;
      if (o.reps <= 0) o.reps = reps;
      CalibrationPlan p =
          build(spec, o, Grid{d.dims, d.batched_dims, d.batches, d.memory_step_octaves}, d.name);
      if (p.estimated_s() <= options.budget_s) return p;
      if (!have || p.estimated_s() < best.estimated_s()) {
        best = std::move(p);
        have = true;
      }
    }
  }
  return best;  // nothing fits the budget: the cheapest plan
}

std::string describe_plan(const CalibrationPlan& p) {
  const DeviceSpec& s = p.spec;
  const PlanOptions& o = p.options;
  std::string dtypes, layouts;
  for (DType t : o.dtypes) dtypes += (dtypes.empty() ? "" : ",") + std::string(to_string(t));
  for (GemmLayout l : o.layouts)
    layouts += (layouts.empty() ? "" : ",") + std::string(to_string(l));
  std::string out = fmt::format("Calibration plan for {} ({} SMs, {:.0f} MB L2, {:.0f} GB/s)\n",
                                s.name, s.sm_count, s.l2_mb, s.mem_bw_gbps);
  out += fmt::format("  dtypes {}; layouts {}; budget {}\n", dtypes, layouts,
                     format_duration(o.budget_s));
  out += fmt::format("  grid {}: M, N, K each in {{{}}}", p.density, join_dims(o.dims));
  if (!o.batches.empty()) out += fmt::format("; batched (bmm) batch {{{}}}", join_dims(o.batches));
  out += "\n";
  out += fmt::format(
      "  timing: {} repetitions (median) after warm-up, back-to-back launches in a CUDA graph, "
      "GEMM operands "
      "rotated over more than 2x L2 ({:.0f} MB), random inputs\n",
      o.reps, 2 * s.l2_mb);
  out += fmt::format("  {:<34} {:>8} {:>12}\n", "part", "tasks", "estimated");
  std::size_t tasks = 0;
  for (const PlanPart& part : p.parts()) {
    out += fmt::format("  {:<34} {:>8} {:>12}\n", part.name, part.tasks,
                       format_duration(part.estimated_s));
    tasks += part.tasks;
  }
  out += fmt::format("  {:<34} {:>8} {:>12}   (budget {})\n", "total", tasks,
                     format_duration(p.estimated_s()), format_duration(o.budget_s));
  if (p.fill_tasks_estimate > 0) {
    out += fmt::format(
        "  the fill is planned after the survey; its estimate assumes {} kernel configurations per "
        "dtype and layout, "
        "each forced on {} sizes\n",
        p.assumed_configs_per_group, o.fill_sizes);
  }
  if (p.estimated_s() > o.budget_s) out += "  warning: even the coarsest plan exceeds the budget\n";
  out +=
      "  not measured: fused attention (SDPA backends are reached through PyTorch; see "
      "calibrate/RUN.md)\n";
  return out;
}

double parse_duration_s(std::string_view text) {
  std::string t;
  for (char c : text) {
    if (!std::isspace(static_cast<unsigned char>(c))) t.push_back(ascii_lower(c));
  }
  if (t.empty()) throw std::invalid_argument("empty duration");
  double total = 0;
  std::size_t i = 0;
  bool any_unit = false;
  while (i < t.size()) {
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(t.substr(i), &used);
    } catch (const std::exception&) {
      throw std::invalid_argument(
          fmt::format("bad duration '{}' (expected e.g. 30m, 1h30m, 90s)", text));
    }
    if (v < 0 || !std::isfinite(v))
      throw std::invalid_argument(fmt::format("bad duration '{}'", text));
    i += used;
    if (i == t.size()) {
      if (any_unit)
        throw std::invalid_argument(fmt::format("bad duration '{}': number without unit", text));
      return v * 60.0;  // a bare number is minutes
    }
    const char u = t[i++];
    any_unit = true;
    if (u == 'h')
      total += v * 3600.0;
    else if (u == 'm')
      total += v * 60.0;
    else if (u == 's')
      total += v;
    else
      throw std::invalid_argument(
          fmt::format("bad duration '{}': unit '{}' (use h, m or s)", text, u));
  }
  return total;
}

std::string format_duration(double seconds) {
  const long s = std::lround(std::max(0.0, seconds));
  if (s >= 3600) return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
  if (s >= 60) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

namespace {

// The lower-cased items of a comma-separated option value ("FP32, bf16" -> fp32, bf16).
std::vector<std::string> lower_case_items(std::string_view text) {
  std::vector<std::string> items = split_list(text);
  for (std::string& item : items) item = ascii_lower(item);
  return items;
}

}  // namespace

std::vector<DType> parse_dtype_list(std::string_view text) {
  std::vector<DType> out;
  for (const std::string& s : lower_case_items(text)) {
    DType t = DType::kUnknown;
    if (s == "fp32")
      t = DType::kFp32;
    else if (s == "tf32")
      t = DType::kTf32;
    else if (s == "bf16")
      t = DType::kBf16;
    else if (s == "fp16")
      t = DType::kFp16;
    else if (s == "fp8" || s == "fp8_e4m3")
      t = DType::kFp8E4M3;
    if (t == DType::kUnknown) {
      throw std::invalid_argument(
          fmt::format("unknown dtype '{}' (expected fp32, tf32, bf16, fp16, fp8)", s));
    }
    if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
  }
  if (out.empty()) throw std::invalid_argument("no dtypes given");
  return out;
}

std::vector<GemmLayout> parse_layout_list(std::string_view text) {
  std::vector<GemmLayout> out;
  for (const std::string& s : lower_case_items(text)) {
    const auto l = parse_gemm_layout(s);
    if (!l)
      throw std::invalid_argument(
          fmt::format("unknown layout '{}' (expected linear, matmul, weight_grad)", s));
    if (std::find(out.begin(), out.end(), *l) == out.end()) out.push_back(*l);
  }
  if (out.empty()) throw std::invalid_argument("no layouts given");
  return out;
}

}  // namespace pm2lat::calibrate::run
