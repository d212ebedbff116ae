// The predictor: dispatches a kernel record to the model of its family on a target GPU,
// choosing the target's kernel configuration when the record comes from another GPU.
#include "pm2lat/predictor.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <unordered_map>

#include "pm2lat/models/dtype_substitution.h"
#include "pm2lat/models/gemm_wave_model.h"
#include "pm2lat/models/long_tail_models.h"
#include "pm2lat/models/memory_bound_model.h"
#include "pm2lat/models/residual_interpolator.h"
#include "pm2lat/models/roofline_model.h"
#include "pm2lat/models/scaled_gemm_predictor.h"
#include "pm2lat/profile_io.h"
#include "prediction_memo.h"

namespace pm2lat {
namespace {

// A configuration needs this many calibration points before its own fit is trusted for
// a kernel seen by name; with fewer the nearest-shape choice decides.
constexpr std::int32_t kMinConfigPoints = 3;
// Interpolation neighbours (see ResidualInterpolator).
constexpr std::size_t kNeighbours = 8;
// Calls within this factor of the floor say nothing about the kernel behind them.
constexpr double kAboveFloor = 1.5;
// Distance penalty, in octaves, for choosing a configuration of another operand layout.
constexpr double kLayoutPenalty = 3.0;

double log2_pos(double v) { return std::log2(std::max(1.0, v)); }

std::array<double, 4> gemm_key(std::int64_t b, std::int64_t m, std::int64_t n, std::int64_t k) {
  return {log2_pos(static_cast<double>(b)), log2_pos(static_cast<double>(m)),
          log2_pos(static_cast<double>(n)), log2_pos(static_cast<double>(k))};
}

// Weight of the wave count in the residual neighbourhood: shapes on either side of a wave
// boundary (m = 1024 vs 1025 with 128-row tiles) differ by a whole wave and must not pass
// their residuals to each other, however close they are in log-shape.
constexpr double kWaveCoordinateWeight = 2.0;

std::array<double, 5> residual_key(const std::array<double, 4>& shape, const GemmConfigFit& c,
                                   const DeviceSpec& spec, double blocks) {
  const double slots =
      static_cast<double>(std::max(1, spec.sm_count)) * std::max(1, c.blocks_per_sm);
  const double waves = std::ceil(std::max(1.0, blocks) / slots);
  return {shape[0], shape[1], shape[2], shape[3], kWaveCoordinateWeight * std::log2(waves)};
}

std::array<double, 2> vector_key(std::int64_t rows, std::int64_t cols) {
  return {log2_pos(static_cast<double>(rows)), log2_pos(static_cast<double>(cols))};
}

// Calls that multiply by a weight stored transposed (nn.Linear) and plain (batched) products
// run different kernels for the same shape; keep them apart when choosing a configuration.
double transposed_weight_coordinate(bool transposed) { return transposed ? kLayoutPenalty : 0.0; }

// An own GEMM calibration with fewer points than this chooses kernel configurations from a
// similar GPU's denser one instead.
constexpr std::size_t kRichCalibrationPoints = 500;

// Configurations chosen by vote among this many nearest calibrated shapes: one odd point
// must not send a shape to a configuration calibrated far from it.
constexpr std::size_t kSelectorVotes = 8;

std::string lower_ascii(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

bool is_memory_bound_family(KernelFamily f) {
  switch (f) {
    case KernelFamily::kElementwise:
    case KernelFamily::kReduction:
    case KernelFamily::kSoftmax:
    case KernelFamily::kLayerNorm:
    case KernelFamily::kEmbedding:
    case KernelFamily::kCopy:
    case KernelFamily::kMemset:
    case KernelFamily::kOptimizer:
    case KernelFamily::kSplitKReduce:
    case KernelFamily::kGemv:
    case KernelFamily::kTritonPointwise:
    case KernelFamily::kTritonReduction: return true;
    default: return false;
  }
}

}  // namespace

std::string op_key(const OpContext& op) {
  std::string name = op.name;
  if (auto p = name.rfind("::"); p != std::string::npos) name = name.substr(p + 2);
  name = lower_ascii(name);
  // ATen's internal spellings of the same operators ("_softmax", "native_layer_norm").
  while (!name.empty() && name.front() == '_') name.erase(0, 1);
  if (name == "native_layer_norm" || name == "layer_norm" || name == "layernorm") return "ln";
  if (name == "log_softmax" || name == "safe_softmax") return "softmax";
  return name;
}

// Everything derived from one profile at load time: per-config point lists and the
// interpolation indexes over them.
struct CalibratedDevice {
  const Profile* profile = nullptr;
  const DeviceSpec* spec = nullptr;
  std::vector<ResidualInterpolator<5>> gemm_kernel_residual;  // per config
  std::vector<ResidualInterpolator<5>> gemm_call_residual;
  std::vector<std::int32_t> gemm_points_per_config;
  std::vector<std::vector<std::uint32_t>> gemm_points_of_config;  // config -> point indices
  // Nearest calibrated shapes per operand type (a profile may calibrate several types;
  // a shape must only ever choose among configurations of its own type).
  struct Selector {
    DType dtype = DType::kUnknown;
    ResidualInterpolator<5> index;    // nearest calibrated shape -> point
    std::vector<std::size_t> points;  // selector index -> gemm point
  };
  std::vector<Selector> gemm_selectors;
  const Selector* selector_for(DType t) const {
    for (const auto& s : gemm_selectors) {
      if (s.dtype == t) return &s;
    }
    return nullptr;
  }
  std::vector<ResidualInterpolator<2>> vector_kernel_residual;  // per fit
  std::vector<ResidualInterpolator<2>> vector_call_residual;
  // Per fit: the shortest kernel time it may forecast. A fit made on large tensors only has
  // no fixed cost of its own (c0 = 0); the operator's fixed cost on the most similar GPU that
  // measured one stands in (small layer-norms are latency-bound everywhere).
  std::vector<double> vector_floor_us;
  std::map<std::string, std::vector<std::int32_t>> fits_by_op;
  std::unordered_map<std::string_view, std::int32_t> config_index;  // config name -> index

  std::size_t points_with_dtype(DType t) const {
    std::size_t n = 0;
    for (std::size_t c = 0; c < profile->gemm_configs.size(); ++c) {
      if (profile->gemm_configs[c].dtype == t)
        n += static_cast<std::size_t>(gemm_points_per_config[c]);
    }
    return n;
  }

  bool has_dtype(DType t) const {
    for (const auto& c : profile->gemm_configs) {
      if (c.dtype == t) return true;
    }
    return false;
  }
};

namespace {

// The call-basis prediction around a kernel time: the kernel starts pre_us after the start
// event, and no call measures below the floor.
double call_from_kernel(const CallOverhead& o, double kernel_us) {
  return std::max(o.floor_us, o.pre_us + kernel_us);
}

void build_gemm_indexes(CalibratedDevice& d) {
  const Profile& p = *d.profile;
  const std::size_t nc = p.gemm_configs.size();
  std::vector<std::vector<std::array<double, 5>>> kpts(nc), cpts(nc);
  std::vector<std::vector<double>> kres(nc), cres(nc);
  d.gemm_points_per_config.assign(nc, 0);
  d.gemm_points_of_config.assign(nc, {});
  std::map<DType, std::pair<std::vector<std::array<double, 5>>, std::vector<std::size_t>>> sel;
  for (std::size_t i = 0; i < p.gemm_points.size(); ++i) {
    const GemmPoint& pt = p.gemm_points[i];
    const GemmConfigFit& c = p.gemm_configs[static_cast<std::size_t>(pt.config)];
    GemmShape s;
    s.batch = pt.batch;
    s.m = pt.m;
    s.n = pt.n;
    s.k = pt.k;
    const std::int32_t split = split_k_from_grid(pt.grid, pt.batch);
    const GemmWork w =
        gemm_work(c, s, blocks_from_grid(pt.grid, pt.batch), split, dtype_bytes(c.dtype));
    const double kern = gemm_wave_kernel_us(c, *d.spec, w);
    const auto shape = gemm_key(pt.batch, pt.m, pt.n, pt.k);
    const auto key = residual_key(shape, c, *d.spec, w.blocks);
    const auto ci = static_cast<std::size_t>(pt.config);
    ++d.gemm_points_per_config[ci];
    d.gemm_points_of_config[ci].push_back(static_cast<std::uint32_t>(i));
    if (p.basis == TimeBasis::kCall) {
      const CallOverhead& o = p.overhead_for(pt.op);
      cpts[ci].push_back(key);
      cres[ci].push_back(std::log(pt.us / call_from_kernel(o, kern)));
      if (pt.us >= kAboveFloor * o.floor_us) {
        kpts[ci].push_back(key);
        kres[ci].push_back(std::log(std::max(0.5, pt.us - o.pre_us) / kern));
      }
    } else {
      kpts[ci].push_back(key);
      kres[ci].push_back(std::log(pt.us / kern));
    }
    auto& [sel_keys, sel_points] = sel[c.dtype];
    sel_keys.push_back({shape[0], shape[1], shape[2], shape[3],
                        transposed_weight_coordinate(pt.transposed_weight)});
    sel_points.push_back(i);
  }
  for (std::size_t c = 0; c < nc; ++c) {
    d.gemm_kernel_residual.emplace_back(std::move(kpts[c]), std::move(kres[c]), kNeighbours);
    d.gemm_call_residual.emplace_back(std::move(cpts[c]), std::move(cres[c]), kNeighbours);
  }
  for (auto& [dtype, keys_points] : sel) {
    CalibratedDevice::Selector s;
    s.dtype = dtype;
    s.index = ResidualInterpolator<5>(std::move(keys_points.first), {}, 1);
    s.points = std::move(keys_points.second);
    d.gemm_selectors.push_back(std::move(s));
  }
  for (std::size_t c = 0; c < nc; ++c) {
    d.config_index.emplace(p.gemm_configs[c].config, static_cast<std::int32_t>(c));
  }
}

void build_vector_indexes(CalibratedDevice& d) {
  const Profile& p = *d.profile;
  const std::size_t nf = p.vector_fits.size();
  std::vector<std::vector<std::array<double, 2>>> kpts(nf), cpts(nf);
  std::vector<std::vector<double>> kres(nf), cres(nf);
  for (const VectorPoint& pt : p.vector_points) {
    const auto fi = static_cast<std::size_t>(pt.fit);
    const VectorFit& f = p.vector_fits[fi];
    const double kern = memory_bound_kernel_us(f, *d.spec, pt.bytes, static_cast<double>(pt.rows));
    const auto key = vector_key(pt.rows, pt.cols);
    if (p.basis == TimeBasis::kCall) {
      const CallOverhead& o = p.overhead_for(f.op);
      cpts[fi].push_back(key);
      cres[fi].push_back(std::log(pt.us / call_from_kernel(o, kern)));
      if (pt.us >= kAboveFloor * o.floor_us) {
        kpts[fi].push_back(key);
        kres[fi].push_back(std::log(std::max(0.5, pt.us - o.pre_us) / kern));
      }
    } else {
      kpts[fi].push_back(key);
      kres[fi].push_back(std::log(pt.us / kern));
    }
  }
  for (std::size_t f = 0; f < nf; ++f) {
    d.vector_kernel_residual.emplace_back(std::move(kpts[f]), std::move(kres[f]), kNeighbours);
    d.vector_call_residual.emplace_back(std::move(cpts[f]), std::move(cres[f]), kNeighbours);
    d.fits_by_op[p.vector_fits[f].op].push_back(static_cast<std::int32_t>(f));
  }
}

// Fixed cost for fits that have none: the same operator and kernel configuration on the
// most similar GPU (SM count and bandwidth) whose fit has one.
void set_vector_floors(std::vector<CalibratedDevice>& devices) {
  for (CalibratedDevice& d : devices) {
    const auto& fits = d.profile->vector_fits;
    d.vector_floor_us.assign(fits.size(), kMinMemoryKernelUs);
    for (std::size_t f = 0; f < fits.size(); ++f) {
      if (fits[f].c0 > 0) continue;
      double best_score = 0, best_c0 = 0;
      for (const CalibratedDevice& o : devices) {
        if (&o == &d) continue;
        for (const VectorFit& of : o.profile->vector_fits) {
          if (of.op != fits[f].op || of.config != fits[f].config || of.c0 <= 0) continue;
          const double score = sm_and_bandwidth_distance(*o.spec, *d.spec);
          if (best_c0 == 0 || score < best_score) {
            best_score = score;
            best_c0 = of.c0;
          }
        }
      }
      d.vector_floor_us[f] = std::max(kMinMemoryKernelUs, best_c0);
    }
  }
}

}  // namespace

struct Predictor::Impl {
  std::uint64_t generation = detail::PredictionMemo::next_generation();
  DeviceCatalogue catalogue;
  std::vector<Profile> profiles;
  std::vector<CalibratedDevice> calibrated;  // parallel to profiles
  std::vector<Target> targets;
  LongTailModels long_tail;         // attention, conv, collectives, memory-bound kernel families
  ScaledGemmPredictor scaled_gemm;  // FP8 / FP4 GEMMs with scale factors, quantisation kernels
  std::vector<std::vector<const CalibratedDevice*>> target_calibrated;  // parallel to targets
  // Where a target's GEMM models come from, per operand type: its own profile for that type,
  // or the most similar calibrated GPU's (borrowed: evaluated with the target's spec).
  struct GemmSource {
    DType dtype = DType::kUnknown;
    const CalibratedDevice* device = nullptr;  // the richest calibration: chooses configs
    bool borrowed = false;                     // `device` is another GPU's
    // The target's own profiles with this type: a kernel observed on the target is looked up
    // by name in these first (e.g. configurations calibrated from the target's traces).
    std::vector<const CalibratedDevice*> named;
  };
  std::vector<std::vector<GemmSource>> target_gemm;  // parallel to targets
  // Where a target's memory-bound fits come from: its own profiles, or (when they have no
  // vector fits) the most similar calibrated GPU's, evaluated with the target's spec.
  struct VectorSource {
    std::vector<const CalibratedDevice*> devices;
    bool borrowed = false;
  };
  std::vector<VectorSource> target_vector;  // parallel to targets

  // The calibrated GPU most similar to `spec` among those `accept` allows: same compute
  // capability first, then the closest in SM count, bandwidth and throughput.
  template <typename Accept>
  const CalibratedDevice* most_similar(const DeviceSpec& spec, Accept&& accept) const {
    const CalibratedDevice* best = nullptr;
    double best_score = 0;
    for (const auto& d : calibrated) {
      if (!accept(d)) continue;
      const DeviceSpec& s = *d.spec;
      double score =
          sm_and_bandwidth_distance(s, spec) +
          std::abs(std::log(s.peak_tflops(DType::kBf16) / spec.peak_tflops(DType::kBf16)));
      if (s.cc_major != spec.cc_major)
        score += 10;
      else if (s.cc_minor != spec.cc_minor)
        score += 2;
      if (best == nullptr || score < best_score) {
        best = &d;
        best_score = score;
      }
    }
    return best;
  }

  // Spec-scaling factors from the profile's GPU to the target's for one compute type.
  struct Scale {
    double wave_k = 1;  // per-wave K-step time: per-SM throughput ratio
    double wave = 1;    // per-wave fixed time: clock ratio
  };
  static Scale scale_between(const DeviceSpec& from, const DeviceSpec& to, DType compute) {
    Scale s;
    const double per_sm_from = from.peak_tflops(compute) / std::max(1, from.sm_count);
    const double per_sm_to = to.peak_tflops(compute) / std::max(1, to.sm_count);
    if (per_sm_from > 0 && per_sm_to > 0) s.wave_k = per_sm_from / per_sm_to;
    if (from.boost_clock_mhz > 0 && to.boost_clock_mhz > 0)
      s.wave = from.boost_clock_mhz / to.boost_clock_mhz;
    return s;
  }

  // The source for GEMMs of `dtype`: one calibrated with that type (own profile first, then
  // the most similar GPU's), else one with the closest math path, scaled by peak-throughput
  // ratios where the types differ.
  const GemmSource* gemm_source_for(TargetId t, DType dtype) const {
    const auto& list = target_gemm[t];
    auto with = [&](DType x) -> const GemmSource* {
      for (const auto& g : list) {
        if (g.dtype == x) return &g;
      }
      return nullptr;
    };
    // Substitution order per type: the same math path first, then the closest one.
    using Order = std::array<DType, 4>;
    Order order{DType::kFp32, DType::kTf32, DType::kBf16, DType::kFp16};
    switch (dtype) {
      case DType::kTf32:
        order = Order{DType::kTf32, DType::kBf16, DType::kFp16, DType::kFp32};
        break;
      case DType::kFp16:
        order = Order{DType::kFp16, DType::kBf16, DType::kTf32, DType::kFp32};
        break;
      case DType::kBf16:
        order = Order{DType::kBf16, DType::kFp16, DType::kTf32, DType::kFp32};
        break;
      case DType::kFp8E4M3:
      case DType::kFp8E5M2:
      case DType::kFp4E2M1:
      case DType::kInt8: order = Order{dtype, DType::kBf16, DType::kFp16, DType::kTf32}; break;
      default: break;
    }
    for (DType x : order) {
      if (const GemmSource* g = with(x)) return g;
    }
    return nullptr;
  }

  Prediction roofline(const KernelRecord& r, const KernelClass& cls, const Target& t) const;
  Prediction gemm(const KernelRecord& r, const KernelClass& cls, TargetId t,
                  const PredictOptions& o) const;
  Prediction gemm_uncached(const KernelRecord& r, const KernelClass& cls, TargetId t,
                           const PredictOptions& o) const;
  Prediction gemm_from_launch(const KernelRecord& r, const KernelClass& cls, TargetId t,
                              const GemmSource& source, DType dtype, const PredictOptions& o) const;
  Prediction memory_bound(const KernelRecord& r, const KernelClass& cls, TargetId t,
                          const PredictOptions& o) const;
  // Whether the record was observed on the target GPU itself (then its kernel is one this
  // GPU runs).
  bool observed_on_target(const Target& t, const PredictOptions& o) const {
    if (o.source_spec != nullptr) return o.source_spec == t.spec;
    if (o.source_device.empty() || o.source_device == t.name) return true;
    return catalogue.find(o.source_device) == t.spec;
  }
  // What an isolated kernel takes beyond its time per call in a replayed graph, when the
  // profile timed graphs and the caller wants isolated kernels.
  double isolation_offset(const Profile& prof, TargetId tid, const PredictOptions& o) const {
    return prof.graph_replay && !o.graph_replay ? target_graph_offset[tid] : 0.0;
  }
  std::vector<double> target_graph_offset;  // parallel to targets
};

Prediction Predictor::Impl::roofline(const KernelRecord& r, const KernelClass& cls,
                                     const Target& t) const {
  Prediction p;
  p.model = ModelKind::kRoofline;
  p.flags |= prediction_flags::kFallback;
  p.basis = TimeBasis::kKernel;
  double flops = 0, bytes = 0;
  DType compute = DType::kFp32;
  switch (r.op.kind) {
    case OpKind::kGemm:
      flops = r.op.gemm.flops();
      bytes = dtype_bytes(r.op.gemm.a) * static_cast<double>(r.op.gemm.batch) *
              static_cast<double>(r.op.gemm.m * r.op.gemm.k + r.op.gemm.k * r.op.gemm.n +
                                  r.op.gemm.m * r.op.gemm.n);
      compute = r.op.gemm.compute != DType::kUnknown ? r.op.gemm.compute : r.op.gemm.a;
      break;
    case OpKind::kConv:
      flops = r.op.conv.flops();
      compute = r.op.conv.dtype;
      break;
    case OpKind::kAttention:
      flops = r.op.attention.flops();
      compute = r.op.attention.dtype;
      break;
    default: bytes = r.op.vec.bytes(); break;
  }
  if (cls.gemm.tensor_core && compute == DType::kFp32) compute = DType::kTf32;
  if (flops <= 0 && bytes <= 0) p.flags |= prediction_flags::kNoShape;
  if (r.op.kind == OpKind::kCollective || cls.family == KernelFamily::kCollective) {
    p.model = ModelKind::kCollective;
    p.flags |= prediction_flags::kCommunication;
    const double link = t.spec->nvlink_gbps > 0 ? t.spec->nvlink_gbps : t.spec->pcie_gbps;
    p.us = kMinimumKernelUs + r.op.collective.bytes / std::max(1.0, link * 1e3);
    return p;
  }
  p.us = roofline_kernel_us(*t.spec, flops, bytes, compute);
  return p;
}

Prediction Predictor::Impl::gemm(const KernelRecord& r, const KernelClass& cls, TargetId tid,
                                 const PredictOptions& o) const {
  // Everything the GEMM prediction depends on, hashed: a repeat of a recent call is served
  // from the thread's memo.
  using Memo = detail::PredictionMemo;
  const GemmShape& g = r.op.gemm;
  std::uint64_t key = 1469598103934665603ULL;
  key = Memo::mix(key, generation);
  key = Memo::mix(key, tid);
  key = Memo::mix(key, std::string_view(cls.config));
  key = Memo::mix(key, cls.gemm.tensor_core);
  key = Memo::mix(key, cls.gemm.a);
  key = Memo::mix(key, g.batch);
  key = Memo::mix(key, g.m);
  key = Memo::mix(key, g.n);
  key = Memo::mix(key, g.k);
  key = Memo::mix(key, g.trans_a);
  key = Memo::mix(key, g.trans_b);
  key = Memo::mix(key, g.a);
  key = Memo::mix(key, g.compute);
  key = Memo::mix(key, g.algo_split_k);
  key = Memo::mix(key, r.launch.grid);
  key = Memo::mix(key, o.basis);
  key = Memo::mix(key, o.graph_replay);
  key = Memo::mix(key, o.source_spec);
  key = Memo::mix(key, o.source_device);
  key = Memo::mix(key, std::string_view(r.op.name));
  Prediction p;
  if (Memo::find(key, p)) return p;
  p = gemm_uncached(r, cls, tid, o);
  Memo::store(key, p);
  return p;
}

// A GEMM kernel whose shape was not recorded (a trace without record_shapes): its kernel and
// grid are known, its K is not. The nearest calibrated launch of the same configuration (by
// block count and split) stands in for K, and the wave model runs with the observed grid.
Prediction Predictor::Impl::gemm_from_launch(const KernelRecord& r, const KernelClass& cls,
                                             TargetId tid, const GemmSource& source, DType dtype,
                                             const PredictOptions& o) const {
  const Target& t = targets[tid];
  if (cls.config.empty() || r.launch.grid.volume() <= 1) return roofline(r, cls, t);
  const CalibratedDevice* d = nullptr;
  int cfg = -1;
  bool borrowed = false;
  std::vector<std::pair<const CalibratedDevice*, bool>> search;
  if (observed_on_target(t, o)) {
    for (const CalibratedDevice* nd : source.named) search.emplace_back(nd, false);
  }
  search.emplace_back(source.device, source.borrowed);
  // Then any GPU of the same architecture that calibrated this kernel.
  for (const auto& other : calibrated) {
    if (other.spec->compute_capability() == t.spec->compute_capability() && other.spec != t.spec) {
      search.emplace_back(&other, true);
    }
  }
  for (const auto& [cand, cand_borrowed] : search) {
    const auto it = cand->config_index.find(cls.config);
    if (it == cand->config_index.end() ||
        cand->gemm_points_per_config[static_cast<std::size_t>(it->second)] < kMinConfigPoints) {
      continue;
    }
    d = cand;
    cfg = it->second;
    borrowed = cand_borrowed;
    break;
  }
  if (d == nullptr) return roofline(r, cls, t);
  const Profile& prof = *d->profile;
  const GemmConfigFit& fit = prof.gemm_configs[static_cast<std::size_t>(cfg)];
  const std::int32_t split = split_k_from_grid(r.launch.grid, 1);
  const double blocks = static_cast<double>(r.launch.grid.volume());
  const GemmPoint* near = nullptr;
  double best = 0;
  for (std::uint32_t i : d->gemm_points_of_config[static_cast<std::size_t>(cfg)]) {
    const GemmPoint& pt = prof.gemm_points[i];
    const double dist =
        std::fabs(std::log(blocks_from_grid(pt.grid, pt.batch) / blocks)) +
        std::fabs(std::log(static_cast<double>(split_k_from_grid(pt.grid, pt.batch)) / split));
    if (near == nullptr || dist < best) {
      near = &pt;
      best = dist;
    }
  }
  if (near == nullptr) return roofline(r, cls, t);
  GemmShape s;
  s.batch = 1;
  s.k = near->k;
  // An output of the observed block count at the point's aspect ratio (bytes only).
  const double scale = std::sqrt(blocks / std::max(1.0, blocks_from_grid(near->grid, near->batch)));
  s.m = std::max<std::int64_t>(
      1, static_cast<std::int64_t>(static_cast<double>(near->m * near->batch) * scale));
  s.n = std::max<std::int64_t>(1, static_cast<std::int64_t>(static_cast<double>(near->n) * scale));
  const GemmWork w =
      gemm_work(fit, s, blocks, split, dtype_bytes(dtype == DType::kTf32 ? DType::kFp32 : dtype));
  GemmConfigFit c = fit;
  if (borrowed) {
    const Scale sc = scale_between(*d->spec, *t.spec, fit.dtype);
    c.c_wave_k *= sc.wave_k;
    c.c_block_k *= sc.wave_k;
    c.c_wave *= sc.wave;
  }
  Prediction p;
  p.model = ModelKind::kGemmWave;
  p.config = fit.config;
  p.flags |= prediction_flags::kNoShape;
  if (borrowed) p.flags |= prediction_flags::kSpecScaled;
  const double kern = gemm_wave_kernel_us(c, *t.spec, w);
  if (o.basis == TimeBasis::kCall && prof.basis == TimeBasis::kCall) {
    p.us = call_from_kernel(prof.overhead_for(op_key(r.op)), kern);
    p.basis = TimeBasis::kCall;
  } else {
    p.us = kern + isolation_offset(prof, tid, o);
    p.basis = TimeBasis::kKernel;
  }
  return p;
}

Prediction Predictor::Impl::gemm_uncached(const KernelRecord& r, const KernelClass& cls,
                                          TargetId tid, const PredictOptions& o) const {
  const Target& t = targets[tid];
  const GemmShape& s = r.op.gemm;
  DType dtype = s.a != DType::kUnknown ? s.a : cls.gemm.a;
  if (dtype == DType::kUnknown) dtype = DType::kFp32;
  if (s.compute == DType::kTf32 || (cls.gemm.tensor_core && dtype == DType::kFp32))
    dtype = DType::kTf32;
  const GemmSource* source = gemm_source_for(tid, dtype);
  if (source == nullptr) return roofline(r, cls, t);
  if (!s.valid()) return gemm_from_launch(r, cls, tid, *source, dtype, o);
  const CalibratedDevice* d = source->device;
  bool borrowed = source->borrowed;

  Prediction p;
  p.model = ModelKind::kGemmWave;
  int cfg = -1;
  double blocks = 0;
  std::int32_t split = 1;
  // A kernel observed on the target runs as itself: its own calibration, if the target has
  // one for that configuration.
  if (!cls.config.empty() && observed_on_target(t, o)) {
    for (const CalibratedDevice* nd : source->named) {
      const auto it = nd->config_index.find(cls.config);
      if (it == nd->config_index.end() ||
          nd->gemm_points_per_config[static_cast<std::size_t>(it->second)] < kMinConfigPoints) {
        continue;
      }
      d = nd;
      borrowed = false;
      cfg = it->second;
      break;
    }
    // Not calibrated on the target (or the target has no profile): the same kernel
    // calibrated on a GPU of the same architecture generation, carried over by spec ratios.
    // The kernel's name fixes its tiles and code; only the GPU's rates differ.
    auto same_kernel = [&](const CalibratedDevice* cand) {
      if (cand->spec->cc_major != t.spec->cc_major) return false;
      const auto it = cand->config_index.find(cls.config);
      if (it == cand->config_index.end() ||
          cand->gemm_points_per_config[static_cast<std::size_t>(it->second)] < kMinConfigPoints) {
        return false;
      }
      d = cand;
      borrowed = cand->spec != t.spec;
      cfg = it->second;
      return true;
    };
    if (cfg < 0 && !same_kernel(source->device)) {
      for (const auto& other : calibrated) {
        if (&other != source->device && same_kernel(&other)) break;
      }
    }
  }
  const Profile& prof = *d->profile;
  {
    if (cfg >= 0) {
      const GemmConfigFit& c = prof.gemm_configs[static_cast<std::size_t>(cfg)];
      if (r.launch.grid.volume() > 1) {
        blocks = blocks_from_grid(r.launch.grid, s.batch);
        split = split_k_from_grid(r.launch.grid, s.batch);
      } else {
        split = std::max(1, s.algo_split_k);
        blocks = blocks_for_shape(c, s, split);
      }
    }
  }
  if (cfg < 0) {
    // The kernel cuBLAS runs on this GPU for the nearest calibrated shape of the same layout.
    const auto key = gemm_key(s.batch, s.m, s.n, s.k);
    std::array<std::size_t, kSelectorVotes> idx{};
    std::array<double, kSelectorVotes> dist2{};
    const CalibratedDevice::Selector* selector = d->selector_for(source->dtype);
    if (selector == nullptr) return roofline(r, cls, t);
    const std::size_t found = selector->index.nearest_k(
        {key[0], key[1], key[2], key[3], transposed_weight_coordinate(s.trans_b)}, kSelectorVotes,
        idx.data(), dist2.data());
    if (found == 0) return roofline(r, cls, t);
    // Distance-weighted vote; the winner's nearest point gives the split-K.
    std::array<double, kSelectorVotes> votes{};
    for (std::size_t i = 0; i < found; ++i) {
      const double dist = std::sqrt(dist2[i]) + 0.3;
      const std::int32_t c = prof.gemm_points[selector->points[idx[i]]].config;
      for (std::size_t j = 0; j <= i; ++j) {
        if (prof.gemm_points[selector->points[idx[j]]].config == c) {
          votes[j] += 1.0 / (dist * dist);
          break;
        }
      }
    }
    const std::size_t winner = static_cast<std::size_t>(
        std::max_element(votes.begin(), votes.begin() + static_cast<std::ptrdiff_t>(found)) -
        votes.begin());
    const GemmPoint& pt = prof.gemm_points[selector->points[idx[winner]]];
    cfg = pt.config;
    // Launch the way this kernel launched for its nearest calibrated shape: same split-K,
    // and blocks scaled with the output tiles. Kernels map tiles to blocks in their own
    // ways (some loop over several tiles per block), and the fit saw them that way.
    const GemmConfigFit& chosen = prof.gemm_configs[static_cast<std::size_t>(cfg)];
    GemmShape at_point = s;
    at_point.batch = pt.batch;
    at_point.m = pt.m;
    at_point.n = pt.n;
    at_point.k = pt.k;
    split = split_k_from_grid(pt.grid, pt.batch);
    blocks = blocks_from_grid(pt.grid, pt.batch) * blocks_for_shape(chosen, s, 1) /
             blocks_for_shape(chosen, at_point, 1);
    p.flags |= prediction_flags::kConfigChosen;
  }
  const auto ci = static_cast<std::size_t>(cfg);
  const GemmConfigFit& fit = prof.gemm_configs[ci];
  // Bytes move at the record's element size; the math runs at the calibrated type's rate,
  // scaled below when the record's type had no profile of its own.
  const GemmWork w =
      gemm_work(fit, s, blocks, split, dtype_bytes(dtype == DType::kTf32 ? DType::kFp32 : dtype));
  double kern = 0;
  const double dtype_scale =
      t.spec->peak_tflops(fit.dtype) / std::max(1e-9, t.spec->peak_tflops(dtype));
  if (borrowed || fit.dtype != dtype) {
    GemmConfigFit c = fit;  // coefficients carried to the target by spec ratios
    const Scale sc = borrowed ? scale_between(*d->spec, *t.spec, fit.dtype) : Scale{};
    const double compute = fit.dtype != dtype ? dtype_scale : 1.0;
    c.c_wave_k *= sc.wave_k * compute;
    c.c_block_k *= sc.wave_k * compute;
    c.c_wave *= sc.wave;
    kern = gemm_wave_kernel_us(c, *t.spec, w);
    if (borrowed) p.flags |= prediction_flags::kSpecScaled;
    p.flags |= dtype_substitution_flags(*t.spec, fit.dtype, dtype);
  } else {
    kern = gemm_wave_kernel_us(fit, *t.spec, w);
  }
  const auto key = residual_key(gemm_key(s.batch, s.m, s.n, s.k), fit, *d->spec, w.blocks);
  p.config = fit.config;
  if (o.basis == TimeBasis::kCall && prof.basis == TimeBasis::kCall) {
    const CallOverhead& oh = prof.overhead_for(op_key(r.op));
    p.us = call_from_kernel(oh, kern) * d->gemm_call_residual[ci].correction(key);
    p.basis = TimeBasis::kCall;
  } else {
    p.us = kern * d->gemm_kernel_residual[ci].correction(key) + isolation_offset(prof, tid, o);
    p.basis = TimeBasis::kKernel;
  }
  return p;
}

Prediction Predictor::Impl::memory_bound(const KernelRecord& r, const KernelClass& cls,
                                         TargetId tid, const PredictOptions& o) const {
  const Target& t = targets[tid];
  const VectorShape& v = r.op.vec;
  if (v.bytes() <= 0) return roofline(r, cls, t);
  const std::string key_op = op_key(r.op);
  const std::string family(to_string(cls.family));
  // The most specific fit: this operator with this kernel, this operator, the family.
  const CalibratedDevice* best_d = nullptr;
  std::int32_t best_f = -1;
  int best_rank = 6;  // worse than any match
  static const std::string kGenericFamily = "elementwise";
  const VectorSource& source = target_vector[tid];
  for (const CalibratedDevice* d : source.devices) {
    // This operator, then its family, then the plain elementwise bandwidth fit.
    for (const std::string* op : {&key_op, &family, &kGenericFamily}) {
      auto it = d->fits_by_op.find(*op);
      if (it == d->fits_by_op.end()) continue;
      for (std::int32_t f : it->second) {
        const VectorFit& fit = d->profile->vector_fits[static_cast<std::size_t>(f)];
        const int rank = (op == &key_op   ? 0
                          : op == &family ? 2
                                          : 4) +
                         (fit.config == cls.config ? 0 : 1);
        if (rank < best_rank ||
            (rank == best_rank && best_d != nullptr &&
             fit.points > best_d->profile->vector_fits[static_cast<std::size_t>(best_f)].points)) {
          best_rank = rank;
          best_d = d;
          best_f = f;
        }
      }
    }
  }
  if (best_d == nullptr) return roofline(r, cls, t);
  const auto fi = static_cast<std::size_t>(best_f);
  const VectorFit& fit = best_d->profile->vector_fits[fi];
  Prediction p;
  p.model = ModelKind::kMemoryBound;
  p.config = fit.config;
  if (t.spec_scaled || source.borrowed) p.flags |= prediction_flags::kSpecScaled;
  const double kern = memory_bound_kernel_us(
      fit, *t.spec, v.bytes(), static_cast<double>(std::max<std::int64_t>(1, v.rows)));
  const auto key = vector_key(v.rows, v.cols);
  const bool specific = best_rank <= 1;  // the residual table belongs to this operator
  if (o.basis == TimeBasis::kCall && best_d->profile->basis == TimeBasis::kCall) {
    const CallOverhead& oh = best_d->profile->overhead_for(fit.op);
    p.us = call_from_kernel(oh, kern) *
           (specific ? best_d->vector_call_residual[fi].correction(key) : 1.0);
    p.basis = TimeBasis::kCall;
  } else {
    // Neither the residual table's correction nor a fit without a fixed cost may take a
    // kernel under the operator's fixed cost.
    p.us = std::max(best_d->vector_floor_us[fi],
                    kern * (specific ? best_d->vector_kernel_residual[fi].correction(key) : 1.0));
    p.basis = TimeBasis::kKernel;
  }
  return p;
}

Predictor Predictor::from_directory(const std::filesystem::path& profile_dir) {
  DeviceCatalogue catalogue = DeviceCatalogue::load(profile_dir / "devices.json");
  return Predictor(std::move(catalogue), load_profiles(profile_dir));
}

std::filesystem::path Predictor::default_profile_dir() {
  if (const char* env = std::getenv("PM2LAT_PROFILES"); env != nullptr && *env != '\0') return env;
#ifdef PM2LAT_INSTALL_PROFILE_DIR
  if (std::filesystem::exists(std::filesystem::path(PM2LAT_INSTALL_PROFILE_DIR) / "devices.json"))
    return PM2LAT_INSTALL_PROFILE_DIR;
#endif
#ifdef PM2LAT_SOURCE_PROFILE_DIR
  return PM2LAT_SOURCE_PROFILE_DIR;
#else
  return "profiles";
#endif
}

Predictor::Predictor(DeviceCatalogue catalogue, std::vector<Profile> profiles)
    : impl_(std::make_unique<Impl>()) {
  impl_->catalogue = std::move(catalogue);
  impl_->profiles = std::move(profiles);
  impl_->calibrated.resize(impl_->profiles.size());
  for (std::size_t i = 0; i < impl_->profiles.size(); ++i) {
    Profile& p = impl_->profiles[i];
    const DeviceSpec* spec = impl_->catalogue.find(p.device);
    if (spec == nullptr) {
      throw ProfileError(p.file, "device", "'" + p.device + "' is not in the device catalogue");
    }
    p.device = spec->name;
    CalibratedDevice& d = impl_->calibrated[i];
    d.profile = &p;
    d.spec = spec;
    build_gemm_indexes(d);
    build_vector_indexes(d);
  }
  set_vector_floors(impl_->calibrated);
  impl_->long_tail = LongTailModels(impl_->catalogue, impl_->profiles);
  impl_->scaled_gemm = ScaledGemmPredictor(impl_->catalogue, impl_->profiles);
}

Predictor::Predictor(Predictor&&) noexcept = default;
Predictor& Predictor::operator=(Predictor&&) noexcept = default;
Predictor::~Predictor() = default;

TargetId Predictor::add_target(std::string_view gpu_name) {
  const DeviceSpec& spec = impl_->catalogue.resolve(gpu_name);
  for (std::size_t i = 0; i < impl_->targets.size(); ++i) {
    if (impl_->targets[i].name == spec.name) return i;
  }
  Target t;
  t.name = spec.name;
  t.spec = &spec;
  std::vector<const CalibratedDevice*> own;
  for (const auto& d : impl_->calibrated) {
    if (d.profile->device == spec.name) own.push_back(&d);
  }
  if (!own.empty()) {
    t.profile_spec = &spec;
  } else if (const CalibratedDevice* best =
                 impl_->most_similar(spec, [](const CalibratedDevice&) { return true; })) {
    // No profile of its own: borrow the most similar calibrated GPU's.
    for (const auto& d : impl_->calibrated) {
      if (d.profile->device == best->profile->device) own.push_back(&d);
    }
    t.profile_spec = best->spec;
    t.spec_scaled = true;
  }
  // GEMM sources per operand type: own profile, else the most similar GPU calibrated for it.
  std::vector<Impl::GemmSource> gemm;
  for (const auto& d : impl_->calibrated) {
    for (const auto& c : d.profile->gemm_configs) {
      const bool known =
          std::any_of(gemm.begin(), gemm.end(), [&](const auto& g) { return g.dtype == c.dtype; });
      if (known) continue;
      Impl::GemmSource g;
      g.dtype = c.dtype;
      std::size_t own_points = 0;
      if (!t.spec_scaled) {
        for (const auto* o : own) {
          if (!o->has_dtype(c.dtype)) continue;
          g.named.push_back(o);
          if (o->points_with_dtype(c.dtype) > own_points) {
            own_points = o->points_with_dtype(c.dtype);
            g.device = o;
          }
        }
      }
      // A few calibrated launches (a profiled run) choose configurations poorly: prefer a
      // similar GPU's dense calibration for that, keeping the own launches for their kernels.
      if (own_points < kRichCalibrationPoints) {
        const CalibratedDevice* other = impl_->most_similar(spec, [&](const CalibratedDevice& x) {
          return x.spec != &spec && x.has_dtype(c.dtype);
        });
        if (other != nullptr && other->points_with_dtype(c.dtype) > own_points) {
          g.device = other;
          g.borrowed = true;
        }
      }
      if (g.device != nullptr) gemm.push_back(g);
    }
  }
  impl_->target_gemm.push_back(std::move(gemm));
  Impl::VectorSource vec;
  for (const auto* d : own) {
    if (!d->profile->vector_fits.empty()) vec.devices.push_back(d);
  }
  if (vec.devices.empty()) {
    // A donor's fits must have seen many shapes: a GPU measured at a handful only
    // extrapolates its per-row and per-byte terms far outside them.
    const bool any_rich = std::any_of(
        impl_->calibrated.begin(), impl_->calibrated.end(), [](const CalibratedDevice& d) {
          return d.profile->vector_points.size() >= kRichCalibrationPoints;
        });
    if (const CalibratedDevice* donor = impl_->most_similar(spec, [&](const CalibratedDevice& d) {
          return !d.profile->vector_fits.empty() &&
                 (!any_rich || d.profile->vector_points.size() >= kRichCalibrationPoints);
        })) {
      vec.devices.push_back(donor);
      vec.borrowed = true;
    }
  }
  impl_->target_vector.push_back(std::move(vec));
  for (const auto* d : own) t.profiles.push_back(d->profile);
  // The graph-to-isolated offset measured on this GPU, else on the most similar GPU that
  // measured one (a launch-and-drain cost, similar across recent GPUs).
  double offset = 0;
  for (const auto& d : impl_->calibrated) {
    if (d.spec == &spec) offset = std::max(offset, d.profile->graph_kernel_offset_us);
  }
  if (offset == 0) {
    if (const CalibratedDevice* m = impl_->most_similar(
            spec, [](const CalibratedDevice& d) { return d.profile->graph_kernel_offset_us > 0; }))
      offset = m->profile->graph_kernel_offset_us;
  }
  impl_->target_graph_offset.push_back(offset);
  impl_->long_tail.add_target(spec);
  impl_->scaled_gemm.add_target(spec);
  impl_->targets.push_back(std::move(t));
  impl_->target_calibrated.push_back(std::move(own));
  return impl_->targets.size() - 1;
}

const Target& Predictor::target(TargetId id) const { return impl_->targets.at(id); }
std::size_t Predictor::target_count() const noexcept { return impl_->targets.size(); }
const DeviceCatalogue& Predictor::catalogue() const noexcept { return impl_->catalogue; }
const std::vector<Profile>& Predictor::profiles() const noexcept { return impl_->profiles; }

Prediction Predictor::predict(const KernelRecord& record, const KernelClass& cls, TargetId target,
                              const PredictOptions& options) const {
  if (target >= impl_->targets.size()) return Prediction{};
  if (auto p = impl_->long_tail.predict(record, cls, target, options,
                                        impl_->observed_on_target(impl_->targets[target], options)))
    return *p;
  if (auto p = impl_->scaled_gemm.predict(
          record, cls, target, options, impl_->observed_on_target(impl_->targets[target], options)))
    return *p;
  const bool gemm_like =
      cls.family == KernelFamily::kGemm ||
      (cls.family == KernelFamily::kTritonTemplate && record.op.kind == OpKind::kGemm) ||
      (cls.family == KernelFamily::kUnknown && record.op.kind == OpKind::kGemm);
  if (gemm_like) return impl_->gemm(record, cls, target, options);
  if (is_memory_bound_family(cls.family) ||
      (cls.family == KernelFamily::kUnknown && record.op.vec.bytes() > 0)) {
    return impl_->memory_bound(record, cls, target, options);
  }
  return impl_->roofline(record, cls, impl_->targets[target]);
}

}  // namespace pm2lat
