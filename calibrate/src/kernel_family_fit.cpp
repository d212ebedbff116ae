#include "pm2lat/calibrate/kernel_family_fit.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <unordered_map>

#include "pm2lat/calibrate/nnls.h"
#include "pm2lat/classifier.h"
#include "pm2lat/median.h"
#include "pm2lat/models/conv_model.h"
#include "pm2lat/models/gemm_wave_model.h"
#include "pm2lat/models/memory_bound_model.h"
#include "pm2lat/models/memory_family_predictor.h"
#include "pm2lat/predictor.h"

namespace pm2lat::calibrate {
namespace {

// Fewer kernels than this give no family fit.
constexpr std::size_t kMinFamilyKernels = 3;
// Conv configurations need this many measured shapes for a fit of their own.
constexpr std::size_t kMinConvShapes = 4;
constexpr double kOutlierFactor = 3.0;
constexpr double kSecondLaunchShare = 0.1;
// Robust family fits: kernels whose bytes take under this long at peak bandwidth are
// latency-bound; over the second, bandwidth-bound.
constexpr double kLatencyBoundUs = 1.0;
constexpr double kBandwidthBoundUs = 4.0;
// Inverse bandwidth efficiency: the nominal value and the plausible range (byte counts are
// estimates, so a little below 1 is allowed).
constexpr double kNominalInverseEfficiency = 1.5;
constexpr double kMinInverseEfficiency = 0.5;
constexpr double kMaxInverseEfficiency = 50.0;
// One configuration may be far from any bandwidth (gathers of scattered rows, atomics).
constexpr double kMaxConfigInverseEfficiency = 500.0;

struct Sample {
  const KernelRecord* record;
  const DeviceSpec* spec;
  double bytes, rows;  // as the fit sees them (shape bytes, or launched threads)
};

// Config fits use the per-row term too; family-wide fits pool kernels of every GPU and
// configuration, where a per-row term would extrapolate wildly: bytes only.
std::optional<VectorFit> fit_samples(const std::string& op, const std::string& config,
                                     const std::vector<Sample>& s, bool with_rows) {
  std::vector<std::vector<double>> x;
  std::vector<double> y;
  for (const auto& v : s) {
    const auto f = memory_bound_features(*v.spec, v.bytes, v.rows);
    if (with_rows)
      x.push_back({1.0, f.bytes_term, f.row_term});
    else
      x.push_back({1.0, f.bytes_term});
    y.push_back(*v.record->measured_us);
  }
  const auto fit = nnls_relative(x, y);
  if (!fit) return std::nullopt;
  VectorFit out;
  out.op = op;
  out.config = config;
  out.c0 = fit->coef[0];
  out.c_byte = fit->coef[1];
  out.c_row = with_rows ? fit->coef[2] : 0.0;
  out.points = static_cast<std::int32_t>(s.size());
  out.fit_mape_pct = fit->mape_pct;
  return out;
}

// The sizes a fit was made on: a GPU's own kernel fits answer within their bytes (and a
// little beyond) before per-operator tables of other sizes, and take their per-row term no
// further than their rows.
void set_size_range(VectorFit& f, const std::vector<Sample>& s) {
  if (s.empty()) return;
  const auto [lo, hi] = std::minmax_element(
      s.begin(), s.end(), [](const Sample& a, const Sample& b) { return a.bytes < b.bytes; });
  f.bytes_min = lo->bytes;
  f.bytes_max = hi->bytes;
  if (f.c_row > 0) {
    f.rows_max = std::max_element(s.begin(), s.end(), [](const Sample& a, const Sample& b) {
                   return a.rows < b.rows;
                 })->rows;
  }
}

// Family-wide fits pool many configurations whose byte counts are only roughly right: an
// NNLS on relative error then lets the many small kernels zero the per-byte term. Robust
// estimates instead: the fixed cost is the median time of the kernels too small to be
// bandwidth-bound, the per-byte term the median excess time per byte of the large ones.
std::optional<VectorFit> robust_fit(const std::string& op, const std::vector<Sample>& s) {
  std::vector<double> small, ratio;
  for (const auto& v : s) {
    const double bt = memory_bound_features(*v.spec, v.bytes, v.rows).bytes_term;
    if (bt <= kLatencyBoundUs) small.push_back(*v.record->measured_us);
  }
  const double c0 = small.size() >= kMinFamilyKernels ? upper_median(small) : kNominalMemoryFixedUs;
  for (const auto& v : s) {
    const double bt = memory_bound_features(*v.spec, v.bytes, v.rows).bytes_term;
    if (bt >= kBandwidthBoundUs) ratio.push_back((*v.record->measured_us - c0) / bt);
  }
  VectorFit out;
  out.op = op;
  out.c0 = c0;
  out.c_byte = std::clamp(
      ratio.size() >= kMinFamilyKernels ? upper_median(ratio) : kNominalInverseEfficiency,
      kMinInverseEfficiency, kMaxInverseEfficiency);
  out.points = static_cast<std::int32_t>(s.size());
  double ape = 0;
  for (const auto& v : s) {
    const double pred =
        out.c0 + out.c_byte * memory_bound_features(*v.spec, v.bytes, v.rows).bytes_term;
    ape += std::fabs(pred - *v.record->measured_us) / *v.record->measured_us;
  }
  out.fit_mape_pct = s.empty() ? 0 : 100.0 * ape / static_cast<double>(s.size());
  return out;
}

void add_family_fit(const std::string& op, const std::vector<Sample>& all, Profile& p) {
  if (all.size() < kMinFamilyKernels) return;
  if (auto f = robust_fit(op, all)) {
    set_size_range(*f, all);
    p.family_fits.push_back(*f);
  }
}

// `with_rows`: whether the fits have a per-row term (pays_per_row; geometry fits' rows are
// blocks, which they keep).
void add_config_fits(const std::string& op,
                     const std::map<std::string, std::vector<Sample>>& by_config, bool with_rows,
                     Profile& p) {
  for (const auto& [config, samples] : by_config) {
    double lo = 0, hi = 0;
    for (const auto& s : samples) {
      lo = lo == 0 ? s.bytes : std::min(lo, s.bytes);
      hi = std::max(hi, s.bytes);
    }
    // No minimum count: a configuration measured even once is a better guide to itself than
    // the family's pool of other kernels, which answers where this fit is absent (kernels of
    // one family differ 10x in efficiency). Repeats are mostly one layer's iterations anyway,
    // so a minimum count dropped the layers a trace timed in few iterations (predictor/
    // ACCURACY.md, "A configuration measured once").
    // Sizes too close together to tell the fixed cost from the per-byte one. Kernels that
    // move enough bytes to be bandwidth-bound: the nominal fixed cost and the
    // configuration's own time per byte (its bandwidth efficiency). Latency-bound ones: an
    // ordinary memory kernel's time per byte and the configuration's own fixed cost over
    // it; their time says nothing of bandwidth, and multiplying it by bytes would scale one
    // size's latency to every other size.
    if (hi < kMinSizeSpanForFixedCost * lo) {
      std::vector<double> bts;
      for (const auto& v : samples)
        bts.push_back(memory_bound_features(*v.spec, v.bytes, v.rows).bytes_term);
      const bool bandwidth_bound = upper_median(bts) >= kBandwidthBoundUs;
      std::vector<double> est;
      for (std::size_t i = 0; i < samples.size(); ++i) {
        const double t = *samples[i].record->measured_us;
        if (bandwidth_bound)
          est.push_back(std::max(0.0, t - kNominalMemoryFixedUs) / bts[i]);
        else
          est.push_back(std::max(kMinMemoryKernelUs, t - kNominalInverseEfficiency * bts[i]));
      }
      VectorFit f;
      f.op = op;
      f.config = config;
      f.c0 = bandwidth_bound ? kNominalMemoryFixedUs : upper_median(est);
      f.c_byte = bandwidth_bound ? std::clamp(upper_median(est), 0.0, kMaxConfigInverseEfficiency)
                                 : kNominalInverseEfficiency;
      f.points = static_cast<std::int32_t>(samples.size());
      double ape = 0;
      for (const auto& v : samples) {
        const double pred = memory_bound_kernel_us(f, *v.spec, v.bytes, v.rows);
        ape += std::fabs(pred - *v.record->measured_us) / *v.record->measured_us;
      }
      f.fit_mape_pct = 100.0 * ape / static_cast<double>(samples.size());
      set_size_range(f, samples);
      p.family_fits.push_back(f);
      continue;
    }
    auto f = fit_samples(op, config, samples, with_rows);
    // A per-byte term outside what any memory system does means the sizes never left the
    // latency-bound regime: the robust estimate of the configuration instead.
    if (f && (f->c_byte < kMinInverseEfficiency || f->c_byte > kMaxInverseEfficiency)) {
      f = robust_fit(op, samples);
      if (f) f->config = config;
    }
    if (f) {
      set_size_range(*f, samples);
      p.family_fits.push_back(*f);
    }
  }
}

using Grouped = std::map<KernelFamily, std::map<std::string, std::vector<Sample>>>;

KernelClass family_class(const KernelRecord& r) {
  KernelClass c = classify_kernel(r.launch.name);
  if (c.family == KernelFamily::kConv && is_conv_helper_kernel(r, c))
    c.family = KernelFamily::kCopy;
  return c;
}

// `run` is the convolution as the kernel runs it (kernel_channels).
std::vector<double> conv_regressors(const GemmConfigFit& fit, ConvPass pass, const ConvShape& run,
                                    const KernelRecord& r, const DeviceSpec& spec, double step) {
  const GemmWork w = conv_work(fit, run, pass, r.launch.grid, dtype_bytes(fit.dtype));
  const GemmWaveFeatures f = gemm_wave_features(fit, spec, w);
  return {1.0, f.wave_k * step, f.block_k * step, f.wave, f.mem};
}

struct ConvSample {
  const KernelRecord* record;
  KernelClass cls;
  GemmConfigFit kernel;
  GemmShape gemm;
  ConvPass pass = ConvPass::kForward;
  DType math;
  double y;
};

// Fits [c0, c_wave_k, c_block_k, c_wave, c_mem] for blocks per SM 1 and 2; keeps the better.
std::optional<GemmConfigFit> fit_conv(const GemmConfigFit& base,
                                      const std::vector<const ConvSample*>& s,
                                      const DeviceSpec& spec, bool normalised) {
  std::optional<GemmConfigFit> best;
  for (std::int32_t bps = 1; bps <= 2; ++bps) {
    std::vector<std::vector<double>> x;
    std::vector<double> y;
    for (const ConvSample* c : s) {
      GemmConfigFit k = c->kernel;
      k.blocks_per_sm = bps;
      const double step = normalised ? conv_tile_step_us(k, c->math, spec) : 1.0;
      x.push_back(conv_regressors(k, c->pass, kernel_channels(c->record->op.conv, c->cls),
                                  *c->record, spec, step));
      y.push_back(c->y);
    }
    auto fit = nnls_relative(x, y);
    if (!fit) continue;
    // Kernels the fit misses by more than a factor of three are not this configuration's
    // main work (a split's tiny second launch under the same name): refit without them.
    std::vector<std::vector<double>> x2;
    std::vector<double> y2;
    for (std::size_t i = 0; i < x.size(); ++i) {
      double pred = 0;
      for (std::size_t j = 0; j < x[i].size(); ++j) pred += x[i][j] * fit->coef[j];
      if (pred > 0 && std::fabs(std::log(pred / y[i])) < std::log(kOutlierFactor)) {
        x2.push_back(x[i]);
        y2.push_back(y[i]);
      }
    }
    if (x2.size() >= kMinConvShapes && x2.size() < x.size()) {
      if (auto refit = nnls_relative(x2, y2)) fit = refit;
    }
    if (best && fit->mape_pct >= best->fit_mape_pct) continue;
    GemmConfigFit out = base;
    out.blocks_per_sm = bps;
    out.c0 = fit->coef[0];
    out.c_wave_k = fit->coef[1];
    out.c_block_k = fit->coef[2];
    out.c_wave = fit->coef[3];
    out.c_mem = fit->coef[4];
    out.points = static_cast<std::int32_t>(s.size());
    out.fit_mape_pct = fit->mape_pct;
    best = out;
  }
  return best;
}

// Fits kernel_us = c0 + c_wave_k * waves * tile_step over launches of one configuration (or
// class) regardless of shape; stored under "<name>#geometry".
void add_conv_geometry_fits(const std::vector<const KernelRecord*>& records, const DeviceSpec& spec,
                            Profile& p, FamilyBuildReport& rep) {
  struct Launch {
    double waves_steps, y;
  };
  std::map<std::string, std::vector<Launch>> by_name;
  for (const KernelRecord* r : records) {
    if (!r->measured_us || *r->measured_us <= 0) continue;
    const KernelClass cls = classify_kernel(r->launch.name);
    if (cls.family != KernelFamily::kConv || is_conv_helper_kernel(*r, cls)) continue;
    const DType dtype = r->op.conv.dtype != DType::kUnknown ? r->op.conv.dtype
                        : cls.dtype != DType::kUnknown      ? cls.dtype
                                                            : DType::kFp32;
    const GemmConfigFit k = conv_kernel_config(cls, dtype);
    const DType math = conv_math_type(cls, dtype);
    const double waves =
        std::ceil(static_cast<double>(std::max<std::uint64_t>(1, r->launch.grid.volume())) /
                  static_cast<double>(std::max(1, spec.sm_count)));
    const Launch l{waves * conv_tile_step_us(k, math, spec), *r->measured_us};
    by_name[cls.config].push_back(l);
    by_name[conv_class_name(math)].push_back(l);
  }
  for (const auto& [name, launches] : by_name) {
    const bool is_class = name.rfind("conv:", 0) == 0;
    if (launches.size() < (is_class ? kMinFamilyKernels : kMinConvGeometryKernels)) continue;
    std::vector<std::vector<double>> x;
    std::vector<double> y;
    for (const auto& l : launches) {
      x.push_back({1.0, l.waves_steps});
      y.push_back(l.y);
    }
    const auto fit = nnls_relative(x, y);
    if (!fit) continue;
    GemmConfigFit g;
    g.config = conv_geometry_fit_name(name);
    g.tile_m = g.tile_n = 0;
    g.c0 = fit->coef[0];
    g.c_wave_k = fit->coef[1];
    g.points = static_cast<std::int32_t>(launches.size());
    g.fit_mape_pct = fit->mape_pct;
    p.conv_configs.push_back(g);
    ++rep.conv_classes;
  }
}

}  // namespace

void build_family_section(const std::vector<const KernelRecord*>& records, const DeviceSpec& spec,
                          Profile& p, FamilyBuildReport* report,
                          const std::vector<SpecRecord>* pooled) {
  FamilyBuildReport local;
  FamilyBuildReport& rep = report ? *report : local;
  // family -> config -> samples, for shape fits and geometry fits.
  auto group = [&](const std::vector<SpecRecord>& list, Grouped& shape, Grouped& geometry,
                   bool count) {
    for (const auto& [r, s] : list) {
      if (!r->measured_us || *r->measured_us <= 0) continue;
      const KernelClass c = family_class(*r);
      if (!fitted_as_kernel_family(c.family)) continue;
      if (count) ++rep.family_kernels;
      if (r->op.vec.bytes() > 0)
        shape[c.family][c.config].push_back(
            {r, s, r->op.vec.bytes(),
             static_cast<double>(std::max<std::int64_t>(1, r->op.vec.rows))});
      const double threads = static_cast<double>(r->launch.grid.volume()) *
                             static_cast<double>(r->launch.block.volume());
      geometry[c.family][c.config].push_back(
          {r, s, threads * kGeometryBytesPerThread, static_cast<double>(r->launch.grid.volume())});
    }
  };
  std::vector<SpecRecord> own;
  own.reserve(records.size());
  for (const KernelRecord* r : records) own.push_back({r, &spec});
  Grouped shape, geometry, pooled_shape, pooled_geometry;
  group(own, shape, geometry, true);
  group(pooled != nullptr ? *pooled : own, pooled_shape, pooled_geometry, false);
  for (const auto& [family, by_config] : shape)
    add_config_fits(std::string(to_string(family)), by_config, pays_per_row(family), p);
  for (const auto& [family, by_config] : geometry)
    add_config_fits(geometry_fit_name(family), by_config, true, p);
  for (const auto* g : {&pooled_shape, &pooled_geometry}) {
    for (const auto& [family, by_config] : *g) {
      std::vector<Sample> all;
      for (const auto& [config, samples] : by_config)
        all.insert(all.end(), samples.begin(), samples.end());
      add_family_fit(
          g == &pooled_shape ? std::string(to_string(family)) : geometry_fit_name(family), all, p);
    }
  }
  rep.family_fits = p.family_fits.size();
}

void build_conv_section(const std::vector<const KernelRecord*>& records, const DeviceSpec& spec,
                        Profile& p, const CallOverhead* call, FamilyBuildReport* report) {
  FamilyBuildReport local;
  FamilyBuildReport& rep = report ? *report : local;
  std::vector<ConvSample> samples;
  for (const KernelRecord* r : records) {
    if (!r->measured_us || *r->measured_us <= 0 || r->op.kind != OpKind::kConv ||
        !r->op.conv.valid())
      continue;
    ConvSample s;
    s.record = r;
    s.cls = classify_kernel(r->launch.name);
    if (s.cls.family != KernelFamily::kConv && s.cls.family != KernelFamily::kGemm) continue;
    if (is_conv_helper_kernel(*r, s.cls)) continue;
    const DType dtype = r->op.conv.dtype == DType::kUnknown ? DType::kFp32 : r->op.conv.dtype;
    s.kernel = conv_kernel_config(s.cls, dtype);
    s.math = conv_math_type(s.cls, dtype);
    s.pass = conv_pass(s.cls, r->op, r->launch.grid);
    s.gemm = conv_implicit_gemm(r->op.conv, s.pass);
    s.y = *r->measured_us;
    if (call != nullptr) {
      if (s.y < 1.3 * call->floor_us) continue;  // the host floor says nothing about the kernel
      s.y = std::max(0.5, s.y - call->pre_us);
    }
    samples.push_back(std::move(s));
  }
  // A kernel far faster than another launch computing the same implicit GEMM is a split's
  // small second launch (cuDNN's weight-gradient reduction), not the convolution.
  {
    std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>, double> slowest;
    for (const auto& s : samples) {
      double& v = slowest[{s.gemm.batch, s.gemm.m, s.gemm.n, s.gemm.k}];
      v = std::max(v, s.y);
    }
    std::erase_if(samples, [&](const ConvSample& s) {
      return s.y < kSecondLaunchShare * slowest[{s.gemm.batch, s.gemm.m, s.gemm.n, s.gemm.k}];
    });
  }
  rep.conv_kernels = samples.size();
  if (call != nullptr) p.call_overhead["conv"] = *call;
  std::map<std::string, std::vector<const ConvSample*>> by_config;
  std::map<DType, std::vector<const ConvSample*>> by_math;
  for (const auto& s : samples) {
    by_config[s.cls.config].push_back(&s);
    by_math[s.math].push_back(&s);
  }
  for (const auto& [config, list] : by_config) {
    std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>> shapes;
    for (const auto* s : list) shapes.insert({s->gemm.batch, s->gemm.m, s->gemm.n, s->gemm.k});
    if (shapes.size() < kMinConvShapes) continue;
    const auto index = static_cast<std::int32_t>(p.conv_configs.size());
    if (auto f = fit_conv(list.front()->kernel, list, spec, false)) {
      p.conv_configs.push_back(*f);
      ++rep.conv_configs;
      for (const auto* s : list) {
        const ConvShape& c = s->record->op.conv;
        ConvPoint pt;
        pt.config = index;
        pt.batch = c.batch;
        pt.in_channels = c.in_channels;
        pt.out_channels = c.out_channels;
        pt.in_h = c.in_h;
        pt.in_w = c.in_w;
        pt.kernel_h = c.kernel_h;
        pt.kernel_w = c.kernel_w;
        pt.stride = c.stride_h;
        pt.pad = c.pad_h;
        pt.grid = s->record->launch.grid;
        pt.us = *s->record->measured_us;
        p.conv_points.push_back(pt);
      }
    }
  }
  // Geometry fits serve kernels whose record has no shape: time against waves of tile steps
  // (K unknown, so a config's typical K is in its coefficient). Every measured launch counts.
  if (call == nullptr) add_conv_geometry_fits(records, spec, p, rep);
  // Class fits serve configurations this GPU did not measure; only device-time records
  // make them (a call's host floor would bias the normalised coefficients).
  if (call == nullptr) {
    for (const auto& [math, list] : by_math) {
      if (list.size() < kMinFamilyKernels) continue;
      GemmConfigFit base;
      base.config = conv_class_name(math);
      base.dtype = math == DType::kTf32 ? DType::kFp32 : math;
      base.tile_m = base.tile_n = 0;
      if (auto f = fit_conv(base, list, spec, true)) {
        p.conv_configs.push_back(*f);
        ++rep.conv_classes;
      }
    }
  }
}

}  // namespace pm2lat::calibrate
