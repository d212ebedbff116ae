#include "pm2lat/calibrate/profile_builder.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

#include "pm2lat/calibrate/nnls.h"
#include "pm2lat/call_dispatch.h"
#include "pm2lat/classifier.h"
#include "pm2lat/median.h"
#include "pm2lat/models/gemm_wave_model.h"
#include "pm2lat/models/memory_bound_model.h"
#include "pm2lat/models/roofline_model.h"

namespace pm2lat::calibrate {
namespace {

// Rows within this factor of the floor time the host, not the kernel: fits skip them.
constexpr double kFitAboveFloor = 1.3;
// Overhead estimation uses only clearly kernel-bound rows.
constexpr double kOverheadAboveFloor = 1.5;
constexpr std::size_t kMinRowsForOverhead = 20;
// Default K step of SIMT sgemm kernels whose names do not state it.
constexpr std::int32_t kDefaultTileK = 8;
constexpr std::size_t kMinRowsForRowTerm = 50;

// Measured latencies carry about six significant digits; storing more only bloats profiles.
double six_digits(double v) {
  if (v == 0 || !std::isfinite(v)) return v;
  const double scale = std::pow(10.0, 5 - static_cast<int>(std::floor(std::log10(std::fabs(v)))));
  return std::round(v * scale) / scale;
}

struct GemmRow {
  const MeasuredCall* call;
  KernelClass cls;
};

// The work of a measured launch for a configuration: blocks and split-K as launched.
GemmWork launched_work(const GemmConfigFit& c, const KernelRecord& r) {
  const GemmShape& s = r.op.gemm;
  return gemm_work(c, s, blocks_from_grid(r.launch.grid, s.batch),
                   split_k_from_grid(r.launch.grid, s.batch), dtype_bytes(c.dtype));
}

std::vector<double> gemm_regressors(const GemmConfigFit& c, const DeviceSpec& spec,
                                    const KernelRecord& r) {
  const GemmWaveFeatures f = gemm_wave_features(c, spec, launched_work(c, r));
  return {1.0, f.wave_k, f.wave, f.mem, f.block_k};
}

// Mean absolute percentage error of a configuration over its rows, in the profile's basis.
double fit_mape_pct(const GemmConfigFit& c, const std::vector<const GemmRow*>& rows,
                    const DeviceSpec& spec, const Profile& profile) {
  if (rows.empty()) return 0;
  double err = 0;
  for (const GemmRow* r : rows) {
    const auto& rec = r->call->record;
    const CallOverhead& o = profile.overhead_for(r->call->op);
    const double kern = gemm_wave_kernel_us(c, spec, launched_work(c, rec));
    const double pred =
        profile.basis == TimeBasis::kCall ? std::max(o.floor_us, o.pre_us + kern) : kern;
    err += std::fabs(pred - *rec.measured_us) / *rec.measured_us;
  }
  return 100.0 * err / static_cast<double>(rows.size());
}

// Which way the kernel's tile_m runs: compare observed grids with both orientations.
bool tile_m_runs_on_n(const GemmConfigFit& c, const std::vector<const GemmRow*>& rows) {
  std::size_t along_m = 0, along_n = 0;
  for (const GemmRow* r : rows) {
    const auto& rec = r->call->record;
    const double xy = static_cast<double>(rec.launch.grid.x) * rec.launch.grid.y;
    GemmConfigFit a = c, b = c;
    a.tile_m_on_n = false;
    b.tile_m_on_n = true;
    GemmShape s = rec.op.gemm;
    s.batch = 1;
    if (std::fabs(blocks_for_shape(a, s, 1) - xy) < 0.5) ++along_m;
    if (std::fabs(blocks_for_shape(b, s, 1) - xy) < 0.5) ++along_n;
  }
  return along_n > along_m;
}

// Below this many distinct shapes the five wave-model coefficients are not identifiable
// (a profiled run repeats a handful of layer shapes): the configuration then gets the
// spec's throughput model scaled by one measured efficiency.
constexpr std::size_t kMinShapesForWaveFit = 8;

std::size_t distinct_shapes(const std::vector<const GemmRow*>& rows) {
  std::set<std::array<std::int64_t, 4>> shapes;
  for (const GemmRow* r : rows) {
    const GemmShape& g = r->call->record.op.gemm;
    shapes.insert({g.batch, g.m, g.n, g.k});
  }
  return shapes.size();
}

// The prior for a configuration seen at few shapes: an empty kernel, plus each block's K
// steps at the SM's peak rate for the configuration's math, plus one pass over the bytes;
// the compute and memory terms scaled by the median efficiency the measurements show.
GemmConfigFit fit_gemm_efficiency(GemmConfigFit c, const std::vector<const GemmRow*>& rows,
                                  const DeviceSpec& spec, const Profile& profile) {
  const double tile_flops = 2.0 * c.tile_m * c.tile_n * c.tile_k;
  const DType math = c.dtype == DType::kFp32 ? DType::kFp32 : c.dtype;
  const double per_sm = std::max(1.0, spec.peak_flop_per_us(math) / std::max(1, spec.sm_count));
  c.blocks_per_sm = 1;
  c.c0 = kMinimumKernelUs;
  c.c_wave_k = 0;
  c.c_wave = 0;
  c.c_block_k = tile_flops / per_sm;
  c.c_mem = 1.0;
  std::vector<double> ratios;
  for (const GemmRow* r : rows) {
    const auto& rec = r->call->record;
    const CallOverhead& o = profile.overhead_for(r->call->op);
    const double variable = gemm_wave_kernel_us(c, spec, launched_work(c, rec)) - c.c0;
    const double measured = std::max(0.5, *rec.measured_us - o.pre_us) - c.c0;
    if (variable > 0 && measured > 0) ratios.push_back(measured / variable);
  }
  const double scale = ratios.empty() ? 1.0 : median(ratios);
  c.c_block_k *= scale;
  c.c_mem *= scale;
  c.fit_mape_pct = fit_mape_pct(c, rows, spec, profile);
  c.points = static_cast<std::int32_t>(rows.size());
  return c;
}

// Fits one configuration for each blocks-per-SM candidate and keeps the best.
GemmConfigFit fit_gemm_config(const GemmConfigFit& base, const std::vector<const GemmRow*>& rows,
                              const DeviceSpec& spec, const Profile& profile) {
  if (distinct_shapes(rows) < kMinShapesForWaveFit)
    return fit_gemm_efficiency(base, rows, spec, profile);
  GemmConfigFit best = base;
  double best_err = -1;
  for (std::int32_t bps = 1; bps <= 4; ++bps) {
    GemmConfigFit c = base;
    c.blocks_per_sm = bps;
    std::vector<std::vector<double>> x;
    std::vector<double> y;
    for (const GemmRow* r : rows) {
      const auto& rec = r->call->record;
      const CallOverhead& o = profile.overhead_for(r->call->op);
      if (*rec.measured_us < kFitAboveFloor * o.floor_us) continue;
      x.push_back(gemm_regressors(c, spec, rec));
      y.push_back(std::max(0.5, *rec.measured_us - o.pre_us));
    }
    if (x.size() < 4) {  // too few kernel-bound rows: use them all
      x.clear();
      y.clear();
      for (const GemmRow* r : rows) {
        const auto& rec = r->call->record;
        const CallOverhead& o = profile.overhead_for(r->call->op);
        x.push_back(gemm_regressors(c, spec, rec));
        y.push_back(std::max(0.5, *rec.measured_us - o.pre_us));
      }
    }
    const auto fit = nnls_relative(x, y);
    if (!fit) continue;
    c.c0 = fit->coef[0];
    c.c_wave_k = fit->coef[1];
    c.c_wave = fit->coef[2];
    c.c_mem = fit->coef[3];
    c.c_block_k = fit->coef[4];
    const double err = fit_mape_pct(c, rows, spec, profile);
    if (best_err < 0 || err < best_err) {
      best_err = err;
      best = c;
      best.fit_mape_pct = err;
    }
  }
  best.points = static_cast<std::int32_t>(rows.size());
  return best;
}

// Per-operator floor and dispatch time for call-basis measurements.
void estimate_overheads(const std::vector<const MeasuredCall*>& calls, const DeviceSpec& spec,
                        Profile& profile,
                        const std::unordered_map<std::string, KernelClass>& classes) {
  std::map<std::string, std::vector<double>> by_op;
  for (const auto* c : calls) by_op[c->op].push_back(*c->record.measured_us);
  for (auto& [op, lat] : by_op) profile.call_overhead[op].floor_us = latency_floor(lat);

  // Dispatch time: the intercept kernel-bound rows extrapolate to, minus an empty kernel.
  std::map<std::string, std::vector<double>> intercepts;
  std::map<std::string, std::map<std::string, std::vector<const MeasuredCall*>>> groups;
  for (const auto* c : calls) {
    const OpKind kind = c->record.op.kind;
    if (kind != OpKind::kGemm && c->record.op.vec.bytes() <= 0) continue;  // no model for it yet
    const double floor = profile.call_overhead[c->op].floor_us;
    if (*c->record.measured_us < kOverheadAboveFloor * floor) continue;
    const KernelClass& k = classes.at(c->record.launch.name);
    groups[c->op][k.config].push_back(c);
  }
  for (const auto& [op, configs] : groups) {
    for (const auto& [config, rows] : configs) {
      if (rows.size() < kMinRowsForOverhead) continue;
      const KernelClass& k = classes.at(rows.front()->record.launch.name);
      std::optional<NnlsResult> best;
      // GEMM intercepts depend on the blocks-per-SM guess: keep the best-fitting one.
      const std::int32_t max_bps = rows.front()->record.op.kind == OpKind::kGemm ? 4 : 1;
      for (std::int32_t bps = 1; bps <= max_bps; ++bps) {
        std::vector<std::vector<double>> x;
        std::vector<double> y;
        for (const auto* c : rows) {
          const auto& rec = c->record;
          if (rec.op.kind == OpKind::kGemm) {
            GemmConfigFit g;
            g.tile_m = k.gemm.tile_m;
            g.tile_n = k.gemm.tile_n;
            g.tile_k = k.gemm.tile_k > 0 ? k.gemm.tile_k : kDefaultTileK;
            g.blocks_per_sm = bps;
            x.push_back(gemm_regressors(g, spec, rec));
          } else {
            const auto f = memory_bound_features(spec, rec.op.vec.bytes(),
                                                 static_cast<double>(rec.op.vec.rows));
            x.push_back({1.0, f.bytes_term, f.row_term});
          }
          y.push_back(*rec.measured_us);
        }
        auto fit = nnls_relative(x, y);
        if (fit && (!best || fit->mape_pct < best->mape_pct)) best = std::move(fit);
      }
      if (best) {
        for (std::size_t i = 0; i < rows.size(); ++i) intercepts[op].push_back(best->coef[0]);
      }
    }
  }
  for (auto& [op, o] : profile.call_overhead) {
    const auto it = intercepts.find(op);
    const double icpt = it != intercepts.end() ? median(it->second) : 0.5 * o.floor_us;
    o.pre_us =
        std::clamp(icpt - kMinimumKernelUs, 0.0, std::max(0.0, o.floor_us - kMinimumKernelUs));
  }
}

void build_gemm(const std::vector<const MeasuredCall*>& calls, const DeviceSpec& spec,
                const std::unordered_map<std::string, KernelClass>& classes, Profile& p,
                BuildReport& rep) {
  std::map<std::string, std::vector<GemmRow>> by_config;
  for (const auto* c : calls) {
    if (c->record.op.kind != OpKind::kGemm) continue;
    const KernelClass& k = classes.at(c->record.launch.name);
    if (k.family != KernelFamily::kGemm || k.gemm.tile_m <= 0 || k.gemm.tile_n <= 0) {
      ++rep.skipped_rows;
      continue;
    }
    by_config[k.config].push_back(GemmRow{c, k});
  }
  for (auto& [config, rows] : by_config) {
    const KernelClass& k = rows.front().cls;
    GemmConfigFit c;
    c.config = config;
    c.dtype = rows.front().call->record.op.gemm.a;
    if (k.gemm.tensor_core && c.dtype == DType::kFp32) c.dtype = DType::kTf32;
    c.tile_m = k.gemm.tile_m;
    c.tile_n = k.gemm.tile_n;
    c.tile_k = k.gemm.tile_k > 0 ? k.gemm.tile_k : kDefaultTileK;
    std::vector<const GemmRow*> ptrs;
    for (const auto& r : rows) ptrs.push_back(&r);
    c.tile_m_on_n = tile_m_runs_on_n(c, ptrs);
    c.nominal_launch = k.nominal;
    const auto index = static_cast<std::int32_t>(p.gemm_configs.size());
    p.gemm_configs.push_back(fit_gemm_config(c, ptrs, spec, p));
    for (const auto& r : rows) {
      const auto& rec = r.call->record;
      GemmPoint pt;
      pt.op = r.call->op;
      pt.transposed_weight = rec.op.gemm.trans_b;
      pt.config = index;
      pt.batch = rec.op.gemm.batch;
      pt.m = rec.op.gemm.m;
      pt.n = rec.op.gemm.n;
      pt.k = rec.op.gemm.k;
      pt.grid = rec.launch.grid;
      pt.us = six_digits(*rec.measured_us);
      p.gemm_points.push_back(pt);
      ++rep.gemm_rows;
    }
  }
  rep.gemm_configs = p.gemm_configs.size();
}

// `with_rows`: whether the fit has a per-row term (pays_per_row).
std::optional<VectorFit> fit_vector(const std::string& op, const std::string& config,
                                    const std::vector<const MeasuredCall*>& rows,
                                    const DeviceSpec& spec, const Profile& p, bool with_rows) {
  std::vector<std::vector<double>> x;
  std::vector<double> y;
  auto add = [&](bool only_above) {
    for (const auto* c : rows) {
      const auto& rec = c->record;
      const CallOverhead& o = p.overhead_for(c->op);
      if (only_above && *rec.measured_us < kFitAboveFloor * o.floor_us) continue;
      const auto f =
          memory_bound_features(spec, rec.op.vec.bytes(), static_cast<double>(rec.op.vec.rows));
      x.push_back({1.0, f.bytes_term, f.row_term});
      y.push_back(std::max(0.5, *rec.measured_us - o.pre_us));
    }
  };
  add(true);
  if (x.size() < 4) {
    x.clear();
    y.clear();
    add(false);
  }
  // A per-row term is identifiable only from many shapes with varied row counts; with a
  // few it would absorb the byte term and extrapolate to other row counts without bound.
  if (!with_rows || x.size() < kMinRowsForRowTerm) {
    for (auto& r : x) r[2] = 0;
  }
  const auto fit = nnls_relative(x, y);
  if (!fit) return std::nullopt;
  VectorFit v;
  v.op = op;
  v.config = config;
  v.c0 = fit->coef[0];
  v.c_byte = fit->coef[1];
  v.c_row = fit->coef[2];
  v.points = static_cast<std::int32_t>(rows.size());
  v.fit_mape_pct = fit->mape_pct;
  return v;
}

void build_vector(const std::vector<const MeasuredCall*>& calls, const DeviceSpec& spec,
                  const std::unordered_map<std::string, KernelClass>& classes, Profile& p,
                  BuildReport& rep) {
  std::map<std::pair<std::string, std::string>, std::vector<const MeasuredCall*>> by_fit;
  std::map<std::string, std::vector<const MeasuredCall*>> by_family;
  for (const auto* c : calls) {
    const OpKind kind = c->record.op.kind;
    if (kind != OpKind::kElementwise && kind != OpKind::kSoftmax && kind != OpKind::kLayerNorm)
      continue;
    const KernelClass& k = classes.at(c->record.launch.name);
    by_fit[{c->op, k.config}].push_back(c);
    by_family[std::string(to_string(k.family))].push_back(c);
  }
  // The calls of one fit, or of one family, are kernels of one family.
  const auto with_rows = [&](const std::vector<const MeasuredCall*>& rows) {
    return pays_per_row(classes.at(rows.front()->record.launch.name).family);
  };
  for (const auto& [key, rows] : by_fit) {
    const auto fit = fit_vector(key.first, key.second, rows, spec, p, with_rows(rows));
    if (!fit) continue;
    const auto index = static_cast<std::int32_t>(p.vector_fits.size());
    p.vector_fits.push_back(*fit);
    for (const auto* c : rows) {
      VectorPoint pt;
      pt.fit = index;
      pt.rows = c->record.op.vec.rows;
      pt.cols = c->record.op.vec.cols;
      pt.bytes = c->record.op.vec.bytes();
      pt.us = six_digits(*c->record.measured_us);
      p.vector_points.push_back(pt);
      ++rep.vector_rows;
    }
  }
  // Family-level fits serve kernels whose operator the runtime cannot name.
  for (const auto& [family, rows] : by_family) {
    if (auto fit = fit_vector(family, "", rows, spec, p, with_rows(rows))) {
      fit->points = 0;  // carries no points of its own
      // It was made on its operators' calls: their sizes are its range, outside which the
      // predictor carries it by bandwidth from the edge rather than extrapolate its intercept
      // (NeuSight's A100-PCIE-80GB table times elementwise calls of 50 MB and more only).
      for (const auto* c : rows) {
        const double b = c->record.op.vec.bytes();
        if (!(b > 0)) continue;
        fit->bytes_min = fit->bytes_max > 0 ? std::min(fit->bytes_min, b) : b;
        fit->bytes_max = std::max(fit->bytes_max, b);
      }
      p.vector_fits.push_back(*fit);
    }
  }
  rep.vector_fits = p.vector_fits.size();
}

}  // namespace

void append_gemm_section(const std::vector<const MeasuredCall*>& calls, const DeviceSpec& spec,
                         Profile& profile, BuildReport* report) {
  BuildReport local;
  std::unordered_map<std::string, KernelClass> classes;
  for (const auto* c : calls) {
    if (classes.find(c->record.launch.name) == classes.end()) {
      classes.emplace(c->record.launch.name,
                      c->kernel_class ? *c->kernel_class : classify_kernel(c->record.launch.name));
    }
  }
  build_gemm(calls, spec, classes, profile, report ? *report : local);
}

double latency_floor(std::vector<double> latencies, double q) {
  if (latencies.empty()) return 0;
  std::sort(latencies.begin(), latencies.end());
  const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(latencies.size() - 1);
  return latencies[static_cast<std::size_t>(pos)];
}

TableOverheads estimate_table_overheads(const std::vector<const MeasuredCall*>& calls,
                                        const DeviceSpec& spec) {
  Profile p;
  p.device = spec.name;
  p.basis = TimeBasis::kCall;
  std::unordered_map<std::string, KernelClass> classes;
  for (const auto* c : calls) {
    if (classes.find(c->record.launch.name) == classes.end()) {
      classes.emplace(c->record.launch.name,
                      c->kernel_class ? *c->kernel_class : classify_kernel(c->record.launch.name));
    }
  }
  estimate_overheads(calls, spec, p, classes);
  // The calls' shapes as calibration points, so that call_dispatch.h judges which are small.
  std::map<std::string, std::int32_t> fit_of_op;
  std::set<std::string> gemm_ops;
  for (const auto* c : calls) {
    const KernelRecord& rec = c->record;
    if (rec.op.kind == OpKind::kGemm) {
      gemm_ops.insert(c->op);
      GemmPoint pt;
      pt.op = c->op;
      pt.batch = rec.op.gemm.batch;
      pt.m = rec.op.gemm.m;
      pt.n = rec.op.gemm.n;
      pt.k = rec.op.gemm.k;
      p.gemm_points.push_back(pt);
    } else if (rec.op.vec.bytes() > 0) {
      auto [it, added] = fit_of_op.emplace(c->op, static_cast<std::int32_t>(p.vector_fits.size()));
      if (added) {
        VectorFit f;
        f.op = c->op;
        p.vector_fits.push_back(f);
      }
      VectorPoint pt;
      pt.fit = it->second;
      pt.bytes = rec.op.vec.bytes();
      p.vector_points.push_back(pt);
    }
  }
  return {p.call_overhead, ops_with_small_calls(p, spec), gemm_ops};
}

Profile build_profile(const std::vector<const MeasuredCall*>& calls, const DeviceSpec& spec,
                      const BuildOptions& options, BuildReport* report) {
  BuildReport local;
  BuildReport& rep = report ? *report : local;
  Profile p;
  p.device = spec.name;
  p.basis = options.basis;
  p.provenance = options.provenance;
  std::unordered_map<std::string, KernelClass> classes;
  for (const auto* c : calls) {
    auto it = classes.find(c->record.launch.name);
    if (it == classes.end()) {
      classes.emplace(c->record.launch.name,
                      c->kernel_class ? *c->kernel_class : classify_kernel(c->record.launch.name));
    }
  }
  if (options.basis == TimeBasis::kCall) {
    estimate_overheads(calls, spec, p, classes);
    for (const auto& [op, pre_us] : options.borrowed_dispatch_us) {
      if (const auto it = p.call_overhead.find(op); it != p.call_overhead.end())
        it->second.pre_us = pre_us;
    }
  }
  build_gemm(calls, spec, classes, p, rep);
  build_vector(calls, spec, classes, p, rep);
  return p;
}

}  // namespace pm2lat::calibrate
