#include "pm2lat/models/scaled_gemm_predictor.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "octaves.h"
#include "pm2lat/models/donor_ranking.h"
#include "pm2lat/models/gemm_neighbourhood.h"
#include "pm2lat/models/residual_interpolator.h"
#include "pm2lat/models/scaled_gemm_model.h"
#include "pm2lat/predictor.h"

namespace pm2lat {
namespace {

using gemm_neighbourhood::kSelectorVotes;
using residual_interpolation::kDistanceOffset;
using residual_interpolation::kMaxLogCorrection;
using residual_interpolation::kNeighbours;
// A GPU with an integrated CPU (Grace) runs the host part of eager calls on another CPU than
// a PCIe/SXM board's x86 host: a donor of the other kind counts as this much farther.
constexpr double kHostCpuPenalty = 0.5;
// Donor choice across architecture generations: compute capability major and minor.
constexpr double kOtherGenerationPenalty = 10.0;
constexpr double kOtherMinorPenalty = 2.0;

struct TypeKey {
  DType dtype = DType::kUnknown;
  GemmScaling scaling = GemmScaling::kNone;
  bool operator==(const TypeKey&) const = default;
};

// FP8 E5M2 runs on the same tensor cores at the same rate as E4M3.
DType math_type(DType t) { return t == DType::kFp8E5M2 ? DType::kFp8E4M3 : t; }

// A low-precision operand whose scaling nobody stated: FP8 is scaled per tensor unless told
// otherwise (torch._scaled_mm's and cuBLASLt's default), FP4 comes with NVFP4's block scales.
GemmScaling default_scaling(DType t) {
  return t == DType::kFp4E2M1 ? GemmScaling::kNv16 : GemmScaling::kPerTensor;
}

TypeKey fit_key(const ScaledGemmFit& f) { return {math_type(f.dtype), f.scaling}; }

std::array<double, 3> selector_key(std::int64_t m, std::int64_t n, std::int64_t k) {
  return {octaves(static_cast<double>(m)), octaves(static_cast<double>(n)),
          octaves(static_cast<double>(k))};
}

// What the model leaves unexplained near a shape: the weighted median of the log residuals of
// the nearest calibrated calls of the backend. A median, not a mean: eager calls and some
// graph-timed ones carry spikes of 2-7x in a few per cent of the rows (the same shape on a
// sibling GPU shows none), and one spike must not bend its neighbours' forecasts.
double robust_correction(const ResidualInterpolator<5>& index,
                         const std::array<double, 5>& x) noexcept {
  std::array<double, kNeighbours> residuals{};
  std::array<double, kNeighbours> dist2{};
  const std::size_t found =
      index.nearest_k_residuals(x, kNeighbours, residuals.data(), dist2.data());
  if (found == 0) return 1.0;
  std::array<std::pair<double, double>, kNeighbours> rw{};  // residual, weight
  double total = 0;
  for (std::size_t i = 0; i < found; ++i) {
    const double d = std::sqrt(dist2[i]) + kDistanceOffset;
    rw[i] = {residuals[i], 1.0 / (d * d)};
    total += rw[i].second;
  }
  std::sort(rw.begin(), rw.begin() + static_cast<std::ptrdiff_t>(found));
  double acc = 0, med = rw[0].first;
  for (std::size_t i = 0; i < found; ++i) {
    acc += rw[i].second;
    if (acc >= 0.5 * total) {
      med = rw[i].first;
      break;
    }
  }
  return std::exp(std::clamp(med, -kMaxLogCorrection, kMaxLogCorrection));
}

// One profile's low-precision backends, with their interpolation indexes: all a prediction
// reads of the calibration points, which the predictor releases once these are built (the
// residual indexes hold each point's key and residual once; the selectors its backend).
struct Calibrated {
  const Profile* profile = nullptr;
  const DeviceSpec* spec = nullptr;
  std::size_t point_count = 0;                    // calibrated calls, all backends
  std::vector<ResidualInterpolator<5>> residual;  // per fit
  struct Selector {
    TypeKey key;
    ResidualInterpolator<3> index;  // answers the point's backend (fit index)
    std::int32_t only_fit = -1;     // the one backend of the type, if it has one only
  };
  std::vector<Selector> selectors;

  const Selector* selector_for(const TypeKey& key) const {
    for (const auto& s : selectors) {
      if (s.key == key) return &s;
    }
    return nullptr;
  }
  bool has(const TypeKey& key) const { return selector_for(key) != nullptr; }
};

Calibrated build_calibrated(const Profile& p, const DeviceSpec& spec) {
  Calibrated c;
  c.profile = &p;
  c.spec = &spec;
  c.point_count = p.scaled_gemm_points.size();
  const std::size_t nf = p.scaled_gemm_fits.size();
  std::vector<std::vector<std::array<double, 5>>> keys(nf);
  std::vector<std::vector<double>> res(nf);
  std::vector<
      std::pair<TypeKey, std::pair<std::vector<std::array<double, 3>>, std::vector<std::uint32_t>>>>
      sel;
  for (std::size_t i = 0; i < p.scaled_gemm_points.size(); ++i) {
    const ScaledGemmPoint& pt = p.scaled_gemm_points[i];
    const auto fi = static_cast<std::size_t>(pt.config);
    const ScaledGemmFit& f = p.scaled_gemm_fits[fi];
    const double model = scaled_gemm_time(f, spec, scaled_gemm_work(f, pt.m, pt.n, pt.k)).call_us();
    keys[fi].push_back(scaled_gemm_residual_key(f, spec, pt.m, pt.n, pt.k));
    res[fi].push_back(std::log(pt.us / std::max(0.5, model)));
    const TypeKey key = fit_key(f);
    auto it = std::find_if(sel.begin(), sel.end(), [&](const auto& s) { return s.first == key; });
    if (it == sel.end()) it = sel.insert(sel.end(), {key, {}});
    it->second.first.push_back(selector_key(pt.m, pt.n, pt.k));
    it->second.second.push_back(static_cast<std::uint32_t>(pt.config));
  }
  for (std::size_t f = 0; f < nf; ++f) {
    c.residual.push_back(ResidualInterpolator<5>::residuals_only(std::move(keys[f]),
                                                                 std::move(res[f]), kNeighbours));
  }
  for (auto& [key, kp] : sel) {
    Calibrated::Selector s;
    s.key = key;
    for (const std::uint32_t f : kp.second) {
      const auto fi = static_cast<std::int32_t>(f);
      if (s.only_fit == -1) s.only_fit = fi;
      if (s.only_fit != fi) s.only_fit = -2;  // several
    }
    s.index = ResidualInterpolator<3>(std::move(kp.first), kp.second);
    c.selectors.push_back(std::move(s));
  }
  return c;
}

bool integrated_cpu(const DeviceSpec& s) { return !s.host_cpu.empty(); }

// How far a calibrated GPU is from a target for carrying its fits: generation first, then SM
// count and bandwidth, the operand type's tensor throughput, and the host CPU.
double donor_distance(const DeviceSpec& donor, const DeviceSpec& target, DType dtype) {
  double d = sm_and_bandwidth_distance(donor, target) +
             std::fabs(std::log(std::max(1e-9, donor.peak_tflops(dtype)) /
                                std::max(1e-9, target.peak_tflops(dtype))));
  if (donor.cc_major != target.cc_major)
    d += kOtherGenerationPenalty;
  else if (donor.cc_minor != target.cc_minor)
    d += kOtherMinorPenalty;
  if (integrated_cpu(donor) != integrated_cpu(target)) d += kHostCpuPenalty;
  return d;
}

}  // namespace

struct ScaledGemmPredictor::Impl {
  std::vector<Calibrated> calibrated;
  // GPUs whose profiles measured the graph-to-isolated kernel offset, with the largest one.
  std::vector<std::pair<const DeviceSpec*, double>> graph_offsets;
  struct Source {
    TypeKey key;
    const Calibrated* device = nullptr;
    bool borrowed = false;
  };
  struct TargetState {
    const DeviceSpec* spec = nullptr;
    std::vector<Source> sources;
    double graph_offset_us = 0;
  };
  std::vector<TargetState> targets;

  const Source* source_for(const TargetState& t, const TypeKey& key) const {
    for (const auto& s : t.sources) {
      if (s.key == key) return &s;
    }
    return nullptr;
  }

  // Index of the fit serving (m, n, k): the named backend when it may run as itself, else the
  // vote of the nearest calibrated shapes of the type.
  std::int32_t choose_fit(const Source& src, const TypeKey& key, std::string_view named,
                          std::int64_t m, std::int64_t n, std::int64_t k) const {
    const auto& fits = src.device->profile->scaled_gemm_fits;
    if (!named.empty()) {
      for (std::size_t i = 0; i < fits.size(); ++i) {
        if (fits[i].config == named && fit_key(fits[i]) == key) return static_cast<std::int32_t>(i);
      }
    }
    const Calibrated::Selector* sel = src.device->selector_for(key);
    if (sel == nullptr) return -1;
    if (sel->only_fit >= 0) return sel->only_fit;
    std::array<std::size_t, kSelectorVotes> idx{};
    std::array<double, kSelectorVotes> dist2{};
    const std::size_t found =
        sel->index.nearest_k(selector_key(m, n, k), kSelectorVotes, idx.data(), dist2.data());
    if (found == 0) return -1;
    std::array<double, kSelectorVotes> votes{};
    for (std::size_t i = 0; i < found; ++i) {
      const double dist = std::sqrt(dist2[i]) + 0.3;
      const std::size_t c = idx[i];
      for (std::size_t j = 0; j <= i; ++j) {
        if (idx[j] == c) {
          votes[j] += 1.0 / (dist * dist);
          break;
        }
      }
    }
    const auto winner = static_cast<std::size_t>(
        std::max_element(votes.begin(), votes.begin() + static_cast<std::ptrdiff_t>(found)) -
        votes.begin());
    return static_cast<std::int32_t>(idx[winner]);
  }

  std::optional<Prediction> quantize(const KernelRecord& r, const KernelClass& cls,
                                     const TargetState& t) const;
};

ScaledGemmPredictor::ScaledGemmPredictor() : impl_(std::make_unique<Impl>()) {}

ScaledGemmPredictor::ScaledGemmPredictor(const DeviceCatalogue& catalogue,
                                         const std::vector<Profile>& profiles)
    : impl_(std::make_unique<Impl>()) {
  for (const Profile& p : profiles) add_profile(catalogue, p);
}

void ScaledGemmPredictor::add_profile(const DeviceCatalogue& catalogue, const Profile& p) {
  const DeviceSpec* spec = catalogue.find(p.device);
  if (spec == nullptr) return;
  if (!p.scaled_gemm_fits.empty()) impl_->calibrated.push_back(build_calibrated(p, *spec));
  if (p.graph_kernel_offset_us <= 0) return;
  auto& offsets = impl_->graph_offsets;
  auto it =
      std::find_if(offsets.begin(), offsets.end(), [&](const auto& o) { return o.first == spec; });
  if (it == offsets.end()) it = offsets.insert(offsets.end(), {spec, 0.0});
  it->second = std::max(it->second, p.graph_kernel_offset_us);
}

ScaledGemmPredictor::ScaledGemmPredictor(ScaledGemmPredictor&&) noexcept = default;
ScaledGemmPredictor& ScaledGemmPredictor::operator=(ScaledGemmPredictor&&) noexcept = default;
ScaledGemmPredictor::~ScaledGemmPredictor() = default;

void ScaledGemmPredictor::add_target(const DeviceSpec& spec) {
  Impl::TargetState t;
  t.spec = &spec;
  std::vector<TypeKey> keys;
  for (const Calibrated& c : impl_->calibrated) {
    for (const auto& s : c.selectors) {
      if (std::find(keys.begin(), keys.end(), s.key) == keys.end()) keys.push_back(s.key);
    }
  }
  for (const TypeKey& key : keys) {
    const Calibrated* best = nullptr;
    double best_d = 0;
    for (const Calibrated& c : impl_->calibrated) {
      if (!c.has(key)) continue;
      // The target's own calibration always wins; then the most similar GPU.
      const double d = c.spec == &spec ? -1.0 : donor_distance(*c.spec, spec, key.dtype);
      if (best == nullptr || d < best_d || (d == best_d && c.point_count > best->point_count)) {
        best = &c;
        best_d = d;
      }
    }
    if (best == nullptr) continue;
    Impl::Source s;
    s.key = key;
    s.device = best;
    s.borrowed = best->spec != &spec;
    t.sources.push_back(s);
  }
  // The graph-to-isolated kernel offset of the GPU, else of the most similar one measuring it
  // (a launch-and-drain cost, similar across recent GPUs).
  double best_d = 0;
  for (const auto& [gpu, offset] : impl_->graph_offsets) {
    const double d = gpu == &spec ? -1.0 : sm_and_bandwidth_distance(*gpu, spec);
    if (t.graph_offset_us == 0 || d < best_d) {
      t.graph_offset_us = offset;
      best_d = d;
    }
  }
  impl_->targets.push_back(std::move(t));
}

std::optional<Prediction> ScaledGemmPredictor::Impl::quantize(const KernelRecord& r,
                                                              const KernelClass& cls,
                                                              const TargetState& t) const {
  const double bytes_read = r.op.vec.bytes_read;
  if (bytes_read <= 0) return std::nullopt;
  const DType dtype = math_type(cls.gemm.a != DType::kUnknown ? cls.gemm.a : cls.dtype);
  if (!is_scaled_dtype(dtype)) return std::nullopt;
  const GemmScaling scaling =
      cls.gemm.scaling != GemmScaling::kNone ? cls.gemm.scaling : default_scaling(dtype);
  const Source* src = source_for(t, {dtype, scaling});
  if (src == nullptr) return std::nullopt;
  const auto& fits = src->device->profile->scaled_gemm_fits;
  // The quantisation kernel of the type's most calibrated backend; the activation it reads is
  // BF16, so its elements follow from the bytes read.
  std::size_t best = 0;
  for (std::size_t i = 0; i < fits.size(); ++i) {
    if (fit_key(fits[i]) == src->key &&
        (fit_key(fits[best]) != src->key || fits[i].points > fits[best].points))
      best = i;
  }
  const ScaledGemmFit& f = fits[best];
  const double elements = bytes_read / kScaledGemmInputBytes;
  const double k = std::max(1.0, static_cast<double>(r.op.vec.cols));
  Prediction p;
  p.model = ModelKind::kMemoryBound;
  p.basis = TimeBasis::kKernel;
  p.config = f.config;
  if (src->borrowed) p.flags |= prediction_flags::kSpecScaled;
  p.us = scaled_gemm_quant_us(f, *t.spec,
                              scaled_gemm_quant_bytes(f.dtype, f.scaling, elements / k, k));
  return p;
}

std::optional<Prediction> ScaledGemmPredictor::predict(const KernelRecord& r,
                                                       const KernelClass& cls, std::size_t target,
                                                       const PredictOptions& o,
                                                       bool observed_on_target) const noexcept {
  if (target >= impl_->targets.size()) return std::nullopt;
  const Impl::TargetState& t = impl_->targets[target];
  if (cls.family == KernelFamily::kQuantize) return impl_->quantize(r, cls, t);
  if (r.op.kind != OpKind::kGemm) return std::nullopt;
  const GemmShape& g = r.op.gemm;
  const DType dtype = math_type(g.a != DType::kUnknown ? g.a : cls.gemm.a);
  if (!is_scaled_dtype(dtype) || !g.valid()) return std::nullopt;
  GemmScaling scaling = g.scaling != GemmScaling::kNone ? g.scaling : cls.gemm.scaling;
  if (scaling == GemmScaling::kNone) scaling = default_scaling(dtype);
  const TypeKey key{dtype, scaling};
  const Impl::Source* src = impl_->source_for(t, key);
  if (src == nullptr) return std::nullopt;
  const std::int64_t m = g.m * std::max<std::int64_t>(1, g.batch);
  // A record without a library kernel name stands for the framework's call as a whole.
  const bool whole_call = cls.gemm.scheme == GemmNameScheme::kNone;
  const std::string_view named = observed_on_target ? std::string_view(cls.config) : "";
  const std::int32_t fi = impl_->choose_fit(*src, key, named, m, g.n, g.k);
  if (fi < 0) return std::nullopt;
  const auto i = static_cast<std::size_t>(fi);
  const ScaledGemmFit& fit = src->device->profile->scaled_gemm_fits[i];
  const double k_loop =
      src->borrowed ? scaled_gemm_k_step_scale(fit, *src->device->spec, *t.spec, m, g.n, g.k) : 1.0;
  const ScaledGemmTime time =
      scaled_gemm_time(fit, *t.spec, scaled_gemm_work(fit, m, g.n, g.k), k_loop);
  Prediction p;
  p.model = ModelKind::kGemmWave;
  p.basis = TimeBasis::kKernel;
  p.config = fit.config;
  if (src->borrowed) p.flags |= prediction_flags::kSpecScaled;
  if (!cls.config.empty() && cls.config != p.config) p.flags |= prediction_flags::kConfigChosen;
  const bool isolated = src->device->profile->graph_replay && !o.graph_replay && fit.host_us <= 0;
  if (whole_call) {
    const double correction = robust_correction(
        src->device->residual[i], scaled_gemm_residual_key(fit, *src->device->spec, m, g.n, g.k));
    p.us = time.call_us() * correction + (isolated ? 2 * t.graph_offset_us : 0.0);
  } else {
    p.us = time.gemm_us + (isolated ? t.graph_offset_us : 0.0);
  }
  return p;
}

}  // namespace pm2lat
