#include "pm2lat/models/gemm_predictor.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "models/gemm_calibration.h"
#include "pm2lat/call_dispatch.h"
#include "pm2lat/dtype.h"
#include "pm2lat/models/donor_ranking.h"
#include "pm2lat/models/dtype_substitution.h"
#include "pm2lat/models/gemm_fit_range.h"
#include "pm2lat/models/gemm_neighbourhood.h"
#include "pm2lat/models/gemm_wave_model.h"
#include "pm2lat/models/narrow_operand_access.h"
#include "pm2lat/models/residual_interpolator.h"
#include "pm2lat/models/roofline_model.h"
#include "pm2lat/models/shapeless_tile_model.h"

namespace pm2lat {
namespace {

// An own GEMM calibration with fewer points than this chooses kernel configurations from a
// similar GPU's denser one instead.
constexpr std::size_t kRichSelectorPoints = 500;
using gemm_neighbourhood::kSelectorVotes;
// Offset of the vote's inverse-square distance weights, the residual interpolation's: a
// shape calibrated exactly weighs 1/0.09, one an octave away in one dimension 1/1.69.
constexpr double kVoteDistanceOffset = residual_interpolation::kDistanceOffset;
// A shape none of whose target's calibrated shapes lies within this distance in the selector's
// key (octaves: 3 = 8x in one dimension, or a layout away) has its configuration chosen by
// another GPU of the target's generation that calibrated one within it, nearer by at least
// kNearerByOctaves, carried over by spec ratios. A table of model-like shapes alone (as the
// A100-PCIE-80GB's, L4's and H100's NeuSight tables are) otherwise sends a decode-sized GEMM
// (M = 8) to a configuration calibrated at M >= 512 (10x its time). Chosen on the NeuSight
// table with each GPU's table cut to those model-like shapes and its other shapes judged
// across GPUs: 2.5-3 octaves best, 1-2 and 4-5 worse (predictor/ACCURACY.md).
constexpr double kFarFromCalibrationOctaves = 3.0;
constexpr double kNearerByOctaves = 1.0;

// The operand type whose calibration a GEMM uses: the record's, else the kernel name's, else
// FP32; FP32 on tensor cores is TF32.
DType gemm_math_type(const GemmShape& s, const KernelClass& cls) {
  DType dtype = s.a != DType::kUnknown ? s.a : cls.gemm.a;
  if (dtype == DType::kUnknown) dtype = DType::kFp32;
  if (s.compute == DType::kTf32 || (cls.gemm.tensor_core && dtype == DType::kFp32))
    dtype = DType::kTf32;
  return dtype;
}

// Spec-scaling factors from the profile's GPU to the target's for one compute type.
struct Scale {
  double wave_k = 1;  // per-wave K-step time: per-SM throughput ratio
  double wave = 1;    // per-wave fixed time: clock ratio
};

Scale scale_between(const DeviceSpec& from, const DeviceSpec& to, DType compute) {
  Scale s;
  const double per_sm_from = from.peak_tflops(compute) / std::max(1, from.sm_count);
  const double per_sm_to = to.peak_tflops(compute) / std::max(1, to.sm_count);
  if (per_sm_from > 0 && per_sm_to > 0) s.wave_k = per_sm_from / per_sm_to;
  if (from.boost_clock_mhz > 0 && to.boost_clock_mhz > 0)
    s.wave = from.boost_clock_mhz / to.boost_clock_mhz;
  return s;
}

// The GEMM a launch of configuration `cfg` of `d` implies when its shape was not recorded:
// the K of the configuration's calibrated launch nearest in block count and split, and an
// output of the observed block count at that launch's aspect ratio. False when the
// configuration has no calibrated launch.
bool launch_shape(const GemmCalibration& d, std::int32_t cfg, const Dim3& grid, GemmShape& s) {
  const double blocks = static_cast<double>(grid.volume());
  const std::optional<std::uint32_t> nearest = d.nearest_launch(cfg, grid);
  if (!nearest) return false;
  const GemmLaunchPoint* near = &d.points[*nearest];
  s.batch = 1;
  s.k = near->k;
  const double scale = std::sqrt(blocks / std::max(1.0, d.launch_of(*nearest).blocks));
  s.m = std::max<std::int64_t>(
      1,
      static_cast<std::int64_t>(static_cast<double>(std::int64_t{near->m} * near->batch) * scale));
  s.n = std::max<std::int64_t>(1, static_cast<std::int64_t>(static_cast<double>(near->n) * scale));
  return true;
}

}  // namespace

struct GemmPredictor::Impl {
  const Profile* profiles = nullptr;        // the predictor's profiles, in order
  std::vector<GemmCalibration> calibrated;  // parallel to the profiles

  // Where a target's GEMM models come from, per operand type: its own profile for that type,
  // or the most similar calibrated GPU's (borrowed: evaluated with the target's spec).
  struct Source {
    DType dtype = DType::kUnknown;
    const GemmCalibration* device = nullptr;  // the richest calibration: chooses configs
    bool borrowed = false;                    // `device` is another GPU's
    // The most similar other GPU of the target's generation calibrated with this type: it
    // chooses configurations for shapes far from every shape `device` calibrated.
    const GemmCalibration* nearer = nullptr;
    // The target's own profiles with this type: a kernel observed on the target is looked up
    // by name in these first (e.g. configurations calibrated from the target's traces).
    std::vector<const GemmCalibration*> named;
  };
  struct TargetState {
    const DeviceSpec* spec = nullptr;
    std::vector<Source> sources;
    // What an isolated kernel takes beyond its time per call in a replayed graph.
    double graph_offset_us = 0;
  };
  std::vector<TargetState> targets;

  // The calibrated GPU most similar to `spec` among those `accept` allows.
  template <typename Accept>
  const GemmCalibration* most_similar(const DeviceSpec& spec, Accept&& accept) const {
    for (std::size_t i : rank_donors(spec, donor_candidates(calibrated), kGemmDonorWeights)) {
      if (accept(calibrated[i])) return &calibrated[i];
    }
    return nullptr;
  }

  // The source for GEMMs of `dtype`: one calibrated with that type (own profile first, then
  // the most similar GPU's), else one with the closest math path.
  const Source* source_for(const TargetState& t, DType dtype) const {
    for (DType x : substitution_order(dtype)) {
      for (const auto& g : t.sources) {
        if (g.dtype == x) return &g;
      }
    }
    return nullptr;
  }

  // What an isolated kernel takes beyond its time per call in a replayed graph, when the
  // profile timed graphs and the caller wants isolated kernels.
  static double isolation_offset(const Profile& prof, const TargetState& t,
                                 const PredictOptions& o) {
    return prof.graph_replay && !o.graph_replay ? t.graph_offset_us : 0.0;
  }

  // `s`: the record's shape, or the one its launch implies (predict_launch).
  Prediction predict_shape(const ModelQuery& q, const TargetState& t, const Source& source,
                           DType dtype, const GemmShape& s) const;
  Prediction predict_launch(const ModelQuery& q, const TargetState& t, const Source& source,
                            DType dtype) const;
  const GemmCalibration* calibration_where_run(const ModelQuery& q, const TargetState& t) const;
};

GemmPredictor::GemmPredictor() : impl_(std::make_unique<Impl>()) {}
GemmPredictor::GemmPredictor(GemmPredictor&&) noexcept = default;
GemmPredictor& GemmPredictor::operator=(GemmPredictor&&) noexcept = default;
GemmPredictor::~GemmPredictor() = default;

GemmPredictor::GemmPredictor(const DeviceCatalogue& catalogue, const std::vector<Profile>& profiles)
    : impl_(std::make_unique<Impl>()) {
  for (std::size_t i = 0; i < profiles.size(); ++i) add_profile(catalogue, profiles, i);
}

void GemmPredictor::add_profile(const DeviceCatalogue& catalogue,
                                const std::vector<Profile>& profiles, std::size_t i) {
  impl_->profiles = profiles.data();
  impl_->calibrated.resize(profiles.size());
  GemmCalibration& d = impl_->calibrated[i];
  d.profile = &profiles[i];
  d.spec = catalogue.find(profiles[i].device);
  build_indexes(d);
}

void GemmPredictor::add_target(const Target& target) {
  const DeviceSpec& spec = *target.spec;
  std::vector<const GemmCalibration*> own;
  for (const Profile* p : target.profiles)
    own.push_back(&impl_->calibrated[static_cast<std::size_t>(p - impl_->profiles)]);
  Impl::TargetState t;
  t.spec = &spec;
  // GEMM sources per operand type: own profile, else the most similar GPU calibrated for it.
  for (const auto& d : impl_->calibrated) {
    for (const auto& c : d.profile->gemm_configs) {
      const bool known = std::any_of(t.sources.begin(), t.sources.end(),
                                     [&](const auto& g) { return g.dtype == c.dtype; });
      if (known) continue;
      Impl::Source g;
      g.dtype = c.dtype;
      std::size_t own_points = 0;
      if (!target.spec_scaled) {
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
      if (own_points < kRichSelectorPoints) {
        const GemmCalibration* other = impl_->most_similar(spec, [&](const GemmCalibration& x) {
          return x.spec != &spec && x.has_dtype(c.dtype);
        });
        if (other != nullptr && other->points_with_dtype(c.dtype) > own_points) {
          g.device = other;
          g.borrowed = true;
        }
      }
      if (g.device != nullptr) {
        g.nearer = impl_->most_similar(spec, [&](const GemmCalibration& x) {
          return x.spec != &spec && x.spec != g.device->spec && x.spec->cc_major == spec.cc_major &&
                 x.has_dtype(c.dtype);
        });
        t.sources.push_back(g);
      }
    }
  }
  // The graph-to-isolated offset measured on this GPU, else on the most similar GPU that
  // measured one (a launch-and-drain cost, similar across recent GPUs).
  for (const auto& d : impl_->calibrated) {
    if (d.spec == &spec)
      t.graph_offset_us = std::max(t.graph_offset_us, d.profile->graph_kernel_offset_us);
  }
  if (t.graph_offset_us == 0) {
    if (const GemmCalibration* m = impl_->most_similar(
            spec, [](const GemmCalibration& d) { return d.profile->graph_kernel_offset_us > 0; }))
      t.graph_offset_us = m->profile->graph_kernel_offset_us;
  }
  impl_->targets.push_back(std::move(t));
}

std::optional<Prediction> GemmPredictor::predict(const ModelQuery& q) const {
  if (q.target >= impl_->targets.size()) return std::nullopt;
  const Impl::TargetState& t = impl_->targets[q.target];
  const DType dtype = gemm_math_type(q.record.op.gemm, q.cls);
  const Impl::Source* source = impl_->source_for(t, dtype);
  if (source == nullptr) return roofline_prediction(q.record, q.cls, *t.spec);
  if (!q.record.op.gemm.valid()) return impl_->predict_launch(q, t, *source, dtype);
  return impl_->predict_shape(q, t, *source, dtype, q.record.op.gemm);
}

// A GEMM kernel whose shape was not recorded (a trace without record_shapes): its kernel and
// grid are known, its K is not. The nearest calibrated launch of the same configuration (by
// block count and split) stands in for K, and the wave model runs with the observed grid; on
// a GPU whose architecture does not run the kernel, the configuration it chooses for that
// GEMM does.
Prediction GemmPredictor::Impl::predict_launch(const ModelQuery& q, const TargetState& t,
                                               const Source& source, DType dtype) const {
  const KernelRecord& r = q.record;
  const KernelClass& cls = q.cls;
  if (cls.config.empty() || r.launch.grid.volume() <= 1)
    return roofline_prediction(r, cls, *t.spec);
  // The calibration that knows this kernel: the target's own profiles (for a kernel observed
  // on it), the source's, then any GPU of the same architecture.
  const GemmCalibration* d = nullptr;
  int cfg = -1;
  bool borrowed = false;
  auto knows_kernel = [&](const GemmCalibration* cand, bool cand_borrowed) {
    cfg = cand->trusted_config(cls.config);
    if (cfg < 0) return false;
    d = cand;
    borrowed = cand_borrowed;
    return true;
  };
  bool found = false;
  if (q.observed_on_target) {
    for (const GemmCalibration* nd : source.named) {
      if ((found = knows_kernel(nd, false))) break;
    }
  }
  if (!found) found = knows_kernel(source.device, source.borrowed);
  for (std::size_t i = 0; !found && i < calibrated.size(); ++i) {
    const GemmCalibration& other = calibrated[i];
    if (other.spec->compute_capability() == t.spec->compute_capability() && other.spec != t.spec)
      found = knows_kernel(&other, true);
  }
  // The work the launch implies, from the calibration that knows the kernel. For another
  // GPU than the one it ran on (or one whose architecture no calibration of the kernel
  // shares), the work it implies there: every target forecasts the same GEMM, where each
  // target's own calibration (or a typical K loop for one that has none) put the forecasts
  // for two GPUs up to 35x apart.
  const GemmCalibration* shape_from = d;
  std::int32_t shape_cfg = cfg;
  if (!q.observed_on_target || d == nullptr) {
    if (const GemmCalibration* w = calibration_where_run(q, t)) {
      shape_from = w;
      shape_cfg = w->trusted_config(cls.config);
    }
  }
  GemmShape s;  // the output's bytes at a calibrated launch's aspect ratio, and its K
  if (shape_from == nullptr || !launch_shape(*shape_from, shape_cfg, r.launch.grid, s))
    return shapeless_tile_prediction(r, cls, *t.spec, dtype, q.observed_on_target);
  if (d == nullptr) {
    // No GPU of the target's architecture runs this kernel (an sm80 kernel forecast for an
    // sm90 GPU): the same GEMM with the configuration the target chooses for it (flags
    // no_shape, config_chosen). cuBLAS names the layout column-major: its first letter is
    // the row-major second operand's (a linear layer's weight: "tn"), its second the first's.
    const std::string& layout = cls.gemm.layout;
    s.trans_b = layout.size() == 2 && layout[0] == 't';
    s.trans_a = layout.size() == 2 && layout[1] == 't';
    const ModelQuery as_shape{r, cls, q.target, q.options, false, q.source};
    Prediction p = predict_shape(as_shape, t, source, dtype, s);
    p.flags |= prediction_flags::kNoShape;
    return p;
  }
  const Profile& prof = *d->profile;
  const GemmConfigFit& fit = prof.gemm_configs[static_cast<std::size_t>(cfg)];
  const std::int32_t split = split_k_from_grid(r.launch.grid, 1);
  const double blocks = static_cast<double>(r.launch.grid.volume());
  const GemmWork w = gemm_work(fit, s, blocks, split, dtype_bytes(dtype));
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
  if (q.options.basis == TimeBasis::kCall && prof.basis == TimeBasis::kCall) {
    const std::string op = op_key(r.op);
    p.us = table_call_us(prof.overhead_for(op), d->traffic_floor.contains(op), kern);
    p.basis = TimeBasis::kCall;
  } else {
    p.us = kern + isolation_offset(prof, t, q.options);
    p.basis = TimeBasis::kKernel;
  }
  return p;
}

// The calibration of the record's kernel on the GPU it ran on (the target when no source is
// given), else on a GPU of that architecture, else on any GPU; nullptr when none calibrated it.
const GemmCalibration* GemmPredictor::Impl::calibration_where_run(const ModelQuery& q,
                                                                  const TargetState& t) const {
  const DeviceSpec& ran_on = q.source != nullptr ? *q.source : *t.spec;
  auto first = [&](auto&& accept) -> const GemmCalibration* {
    for (const GemmCalibration& c : calibrated) {
      if (c.spec != nullptr && accept(*c.spec) && c.trusted_config(q.cls.config) >= 0) return &c;
    }
    return nullptr;
  };
  if (const GemmCalibration* c = first([&](const DeviceSpec& g) { return g.name == ran_on.name; }))
    return c;
  if (const GemmCalibration* c = first([&](const DeviceSpec& g) {
        return g.compute_capability() == ran_on.compute_capability();
      }))
    return c;
  return first([](const DeviceSpec&) { return true; });
}

Prediction GemmPredictor::Impl::predict_shape(const ModelQuery& q, const TargetState& t,
                                              const Source& source, DType dtype,
                                              const GemmShape& s) const {
  const KernelRecord& r = q.record;
  const KernelClass& cls = q.cls;
  const GemmCalibration* d = source.device;
  bool borrowed = source.borrowed;

  Prediction p;
  p.model = ModelKind::kGemmWave;
  int cfg = -1;
  double blocks = 0;
  std::int32_t split = 1;
  // The chosen stand-in was timed on a shape it may have loaded as narrowly as the kernel.
  bool stand_in_timed_narrow = false;
  // A kernel observed on the target runs as itself: its own calibration, if the target has
  // one for that configuration.
  if (!cls.config.empty() && q.observed_on_target) {
    for (const GemmCalibration* nd : source.named) {
      cfg = nd->trusted_config(cls.config);
      if (cfg < 0) continue;
      d = nd;
      borrowed = false;
      break;
    }
    // Not calibrated on the target (or the target has no profile): the same kernel
    // calibrated on a GPU of the same architecture generation, carried over by spec ratios.
    // The kernel's name fixes its tiles and code; only the GPU's rates differ.
    auto same_kernel = [&](const GemmCalibration* cand) {
      if (cand->spec->cc_major != t.spec->cc_major) return false;
      const std::int32_t c = cand->trusted_config(cls.config);
      if (c < 0) return false;
      d = cand;
      borrowed = cand->spec != t.spec;
      cfg = c;
      return true;
    };
    if (cfg < 0 && !same_kernel(source.device)) {
      for (const auto& other : calibrated) {
        if (&other != source.device && same_kernel(&other)) break;
      }
    }
  }
  if (cfg >= 0) {
    const GemmConfigFit& c = d->profile->gemm_configs[static_cast<std::size_t>(cfg)];
    if (r.launch.grid.volume() > 1) {
      blocks = blocks_from_grid(r.launch.grid, s.batch);
      split = split_k_from_grid(r.launch.grid, s.batch);
    } else {
      split = std::max(1, s.algo_split_k);
      blocks = blocks_for_shape(c, s, split);
    }
  } else {
    // The kernel cuBLAS runs on this GPU for the nearest calibrated shape of the same layout.
    std::array<std::size_t, kSelectorVotes> idx{};
    std::array<double, kSelectorVotes> dist2{};
    const GemmCalibration::Selector* selector = d->selector_for(source.dtype);
    if (selector == nullptr) return roofline_prediction(r, cls, *t.spec);
    const GemmShapeKey shape = gemm_shape_key(s.batch, s.m, s.n, s.k);
    const GemmSelectorKey key =
        gemm_selector_key(shape, s.m, s.n, s.k, s.trans_a, s.trans_b, dtype, selector->alignment);
    std::size_t found = selector->index.nearest_k(key, kSelectorVotes, idx.data(), dist2.data());
    if (found == 0) return roofline_prediction(r, cls, *t.spec);
    if (source.nearer != nullptr &&
        dist2[0] > kFarFromCalibrationOctaves * kFarFromCalibrationOctaves) {
      if (const GemmCalibration::Selector* other = source.nearer->selector_for(source.dtype)) {
        std::array<std::size_t, kSelectorVotes> near_idx{};
        std::array<double, kSelectorVotes> near_dist2{};
        // Its key as that GPU's selector tells alignments apart.
        const GemmSelectorKey other_key =
            gemm_selector_key(shape, s.m, s.n, s.k, s.trans_a, s.trans_b, dtype, other->alignment);
        const std::size_t near_found =
            other->index.nearest_k(other_key, kSelectorVotes, near_idx.data(), near_dist2.data());
        const double near = std::sqrt(near_dist2[0]);
        if (near_found > 0 && near <= kFarFromCalibrationOctaves &&
            near + kNearerByOctaves < std::sqrt(dist2[0])) {
          idx = near_idx;
          dist2 = near_dist2;
          found = near_found;
          d = source.nearer;
          borrowed = true;
        }
      }
    }
    // Distance-weighted vote; the winner's nearest point gives the split-K.
    std::array<double, kSelectorVotes> votes{};
    std::array<std::int32_t, kSelectorVotes> configs{};
    for (std::size_t i = 0; i < found; ++i)
      configs[i] = d->config_of(static_cast<std::uint32_t>(idx[i]));
    for (std::size_t i = 0; i < found; ++i) {
      const double dist = std::sqrt(dist2[i]) + kVoteDistanceOffset;
      for (std::size_t j = 0; j <= i; ++j) {
        if (configs[j] == configs[i]) {
          votes[j] += 1.0 / (dist * dist);
          break;
        }
      }
    }
    const std::size_t winner = static_cast<std::size_t>(
        std::max_element(votes.begin(), votes.begin() + static_cast<std::ptrdiff_t>(found)) -
        votes.begin());
    const GemmLaunchPoint& pt = d->points[idx[winner]];
    cfg = configs[winner];
    // The point in the layout the selector keeps it apart by (calibration points hold A
    // untransposed; B as the query's, which a point of the other layout is penalised for).
    stand_in_timed_narrow =
        !operands_vector_aligned(pt.m, pt.n, pt.k, false, s.trans_b,
                                 d->profile->gemm_configs[static_cast<std::size_t>(cfg)].dtype);
    // Launch the way this kernel launched for its nearest calibrated shape: same split-K,
    // and blocks scaled with the output tiles. Kernels map tiles to blocks in their own
    // ways (some loop over several tiles per block), and the fit saw them that way.
    const GemmConfigFit& chosen = d->profile->gemm_configs[static_cast<std::size_t>(cfg)];
    GemmShape at_point = s;
    at_point.batch = pt.batch;
    at_point.m = pt.m;
    at_point.n = pt.n;
    at_point.k = pt.k;
    const LaunchSize launch = d->launch_of(static_cast<std::uint32_t>(idx[winner]));
    split = launch.split;
    blocks = launch.blocks * blocks_for_shape(chosen, s, 1) / blocks_for_shape(chosen, at_point, 1);
    p.flags |= prediction_flags::kConfigChosen;
  }
  const auto ci = static_cast<std::size_t>(cfg);
  const GemmConfigFit& fit = d->profile->gemm_configs[ci];
  // Bytes move at the record's element size; the math runs at the calibrated type's rate,
  // scaled below when the record's type had no profile of its own.
  const double element_bytes = dtype_bytes(dtype);
  const GemmWork w = gemm_work(fit, s, blocks, split, element_bytes);
  const GemmFitRange& range = d->fit_range[ci];
  // How many blocks stream the operands past the calibrated K range (gemm_fit_range.h): the
  // launch observed on this GPU says it (a nominal class's grid is the model's, not observed).
  // With none, the library spreads the K loop over every SM; it runs a matrix-vector product,
  // or a thin tensor-core one, as a GEMV, and a thin FP32 product of several rows as a SIMT
  // tile kernel (NeuSight's FP32 tables: 13-36 % of bandwidth over 8 MB, A100 to P4).
  const bool observed_launch = q.observed_on_target && !cls.nominal && r.launch.grid.volume() > 1;
  const double launch_blocks = observed_launch ? blocks_from_grid(r.launch.grid, s.batch) : 0.0;
  const bool matrix_vector = s.m == 1 || s.n == 1;
  const bool gemv_product = matrix_vector || is_tensor_core_dtype(dtype);
  RangedGemmTime kern;
  const double dtype_scale =
      t.spec->peak_tflops(fit.dtype) / std::max(1e-9, t.spec->peak_tflops(dtype));
  if (borrowed || fit.dtype != dtype) {
    GemmConfigFit c = fit;  // coefficients carried to the target by spec ratios
    const Scale sc = borrowed ? scale_between(*d->spec, *t.spec, fit.dtype) : Scale{};
    const double compute = fit.dtype != dtype ? dtype_scale : 1.0;
    c.c_wave_k *= sc.wave_k * compute;
    c.c_block_k *= sc.wave_k * compute;
    c.c_wave *= sc.wave;
    // Carried by ratios, the fit at the range's edge is no longer the table's time there.
    c.nominal_launch = false;
    kern = gemm_kernel_us_in_range(c, *t.spec, w, range, s.flops(), launch_blocks, gemv_product);
    if (borrowed) p.flags |= prediction_flags::kSpecScaled;
    p.flags |= dtype_substitution_flags(*t.spec, fit.dtype, dtype);
  } else {
    kern = gemm_kernel_us_in_range(fit, *t.spec, w, range, s.flops(), launch_blocks, gemv_product);
  }
  // A kernel loading its operands in narrower accesses than the configuration pricing it (an
  // aligned stand-in for an `align1` kernel of an odd-width shape) runs slower than it.
  const int ran_access = operand_access_bytes(cls.gemm, dtype);
  kern.us *=
      narrow_access_slowdown(ran_access, stand_in_timed_narrow ? ran_access : d->access_bytes[ci]);
  if (p.has(prediction_flags::kConfigChosen) && matrix_vector) {
    const double operand_bytes = element_bytes * static_cast<double>(s.batch) *
                                 static_cast<double>(s.m * s.k + s.k * s.n + s.m * s.n);
    const double gemv_us = chosen_gemv_us(fit, *t.spec, operand_bytes, s.flops(), dtype);
    if (gemv_us < kern.us) {
      kern.us = gemv_us;
      kern.beyond_range = true;
    }
  }
  if (kern.beyond_range) p.flags |= prediction_flags::kClamped;
  const GemmResidualKey key =
      gemm_residual_key(gemm_shape_key(s.batch, s.m, s.n, s.k), fit, *d->spec, w.blocks);
  p.config = fit.config;
  // The fit's residual at calibrated neighbours corrects its configuration, not the library's
  // GEMV that stands in for it.
  const auto correction = [&](const auto& residual) {
    return kern.library_gemv ? 1.0 : residual.correction(key);
  };
  if (q.options.basis == TimeBasis::kCall && d->profile->basis == TimeBasis::kCall) {
    const std::string op = op_key(r.op);
    p.us = table_call_us(d->profile->overhead_for(op), d->traffic_floor.contains(op), kern.us) *
           correction(d->call_residual[ci]);
    p.basis = TimeBasis::kCall;
  } else {
    p.us =
        kern.us * correction(d->kernel_residual[ci]) + isolation_offset(*d->profile, t, q.options);
    p.basis = TimeBasis::kKernel;
  }
  return p;
}

}  // namespace pm2lat
