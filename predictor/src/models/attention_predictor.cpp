#include "pm2lat/models/attention_predictor.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <string_view>

#include "octaves.h"
#include "pm2lat/models/attention_kernel.h"
#include "pm2lat/models/attention_model.h"
#include "pm2lat/models/donor_ranking.h"
#include "pm2lat/models/residual_interpolator.h"
#include "pm2lat/models/roofline_model.h"
#include "pm2lat/op_context.h"

namespace pm2lat {
namespace {

using residual_interpolation::kNeighbours;
// The backward pass recomputes the scores and runs five GEMMs to the forward's two (2.5x the
// FLOPs) at a lower share of peak (FlashAttention 2 reaches ~63 % of A100 peak backward
// against ~73 % forward): one backward iteration costs about three forward ones.
constexpr double kBackwardIterationCost = 3.0;
// Hopper and data-centre Blackwell reach their datasheet tensor peak only through
// wgmma/tcgen05; kernels built on Ampere-style mma.sync (FlashAttention 2, the CUTLASS
// memory-efficient kernels, FlashInfer's FA2 path) get about half of it (FA2 runs at
// ~35 % of H100 peak where it reaches ~70 % of A100's).
constexpr double kLegacyMmaShareOnNewTensorCores = 0.5;
// Helper kernels (dO.O dot, dQ conversion, split-KV combine) stream their operands at
// about this share of DRAM bandwidth.
constexpr double kHelperBandwidthShare = 0.7;
// Calibrated vLLM attention calls of versions before 0.16 (the A100's table) wrote the new
// tokens' K and V into the KV cache (reshape_and_cache_flash, a kernel of its own) before
// the attention kernel, inside the timed CUDA graph (calibrate/DATA.md, "Facts that
// matter"). A launch record is the attention kernel alone (the cache write, where a program
// runs one, is a record of its own), so its forecast from such a fit leaves that kernel out:
// one kernel of a graph replay at the tables' own floor for a one-kernel call (1.5-2.5 us
// for BF16 GEMM rows on every GPU: the lower end) and its bytes (K and V read, the cache
// written) at a helper's bandwidth. The FlashAttention-2 fits of the same tables timed
// without the write (vLLM 0.24 on the L40S and RTX PRO 6000) have about half the fixed cost
// (3.6-4.8 us against 8.3) and K,V term (0.9-2.3 against 3.7).
constexpr double kGraphKernelFloorUs = 1.5;

// What a calibrated call spent on its KV-cache write: nothing for a fit of calls that did
// not write it, or for a record of the calibration tables' own kind (a whole call).
double cache_write_us(const AttentionConfigFit& fit, const KernelRecord& r, const AttentionShape& s,
                      const DeviceSpec& spec) {
  if (!fit.calls_write_kv_cache || r.op.source == kOperatorCallTableSource) return 0.0;
  // The new tokens' K and V, read and written into the cache.
  return kGraphKernelFloorUs + 2.0 * attention_kv_bytes(s, s.seqlen_q) /
                                   (kHelperBandwidthShare * std::max(1.0, spec.bytes_per_us()));
}

// Preference when the target must stand in its own implementation for one it lacks.
constexpr std::array<AttentionVariant, 10> kPreferred{AttentionVariant::kFlash3,
                                                      AttentionVariant::kFlash2,
                                                      AttentionVariant::kFlash4,
                                                      AttentionVariant::kTrtllmPrefill,
                                                      AttentionVariant::kFlashInferPrefill,
                                                      AttentionVariant::kCudnn,
                                                      AttentionVariant::kMemEfficient,
                                                      AttentionVariant::kTriton,
                                                      AttentionVariant::kFlashInferDecode,
                                                      AttentionVariant::kTrtllmDecode};

bool legacy_mma(AttentionVariant v) {
  return v == AttentionVariant::kFlash2 || v == AttentionVariant::kMemEfficient ||
         v == AttentionVariant::kFlashInferPrefill || v == AttentionVariant::kFlashInferDecode ||
         v == AttentionVariant::kPaged;
}

// Tensor throughput per SM an implementation reaches on a GPU, relative units.
double per_sm_math(const DeviceSpec& s, AttentionVariant v, DType dtype) {
  const DType math = dtype == DType::kFp8E4M3 || dtype == DType::kFp8E5M2 ? dtype : DType::kBf16;
  double peak = s.peak_tflops(math) / std::max(1, s.sm_count);
  const bool wgmma_era = s.cc_major == 9 || s.cc_major == 10;
  if (legacy_mma(v) && wgmma_era) peak *= kLegacyMmaShareOnNewTensorCores;
  return peak;
}

// Decoding a long templated name costs more than the model itself; a run predicts the same
// few attention kernels over and over. A small per-thread cache keyed by a hash of the name
// (and its length) keeps predictions fast without locks or allocation. The hash is the
// standard library's, which reads the name 8 bytes a step: FNV-1a (hash.h), a byte a step, took
// a quarter of an attention prediction on a 200-character FlashAttention name. This key lives
// only in the process, so it need not be stable across builds as the splits' keys must.
AttentionKernel decode_cached(std::string_view name) {
  struct Entry {
    std::uint64_t hash = 0;
    std::size_t size = 0;
    AttentionKernel kernel;
  };
  constexpr std::size_t kEntries = 64;
  thread_local std::array<Entry, kEntries> cache{};
  const std::uint64_t h = std::hash<std::string_view>{}(name);
  Entry& e = cache[h % kEntries];
  if (e.hash != h || e.size != name.size()) {
    e.hash = h;
    e.size = name.size();
    e.kernel = decode_attention_kernel(name);
  }
  return e.kernel;
}

std::array<double, 5> residual_key(std::int64_t b, std::int64_t s, std::int64_t h, std::int64_t kvh,
                                   std::int64_t window) {
  return {octaves(static_cast<double>(b)), octaves(static_cast<double>(s)),
          octaves(static_cast<double>(h)), octaves(static_cast<double>(kvh)),
          octaves(1.0 + static_cast<double>(window))};
}

AttentionShape point_shape(const AttentionPoint& p, const AttentionConfigFit& c) {
  AttentionShape s;
  s.batch = p.batch;
  s.seqlen_q = p.seqlen_q;
  s.seqlen_kv = p.seqlen_kv;
  s.heads = p.heads;
  s.kv_heads = p.kv_heads;
  s.head_dim = c.head_dim;
  s.window = p.window;
  s.causal = p.causal;
  s.dtype = DType::kBf16;
  s.kv_dtype = c.kv_dtype;
  return s;
}

// Dimensions the launch geometry implies when the record has no shape (flag no_shape):
// FlashAttention 2 launches (row blocks, batch, heads), the memory-efficient kernels
// (row blocks, heads, batch); anything else counts each CTA as one (batch, head) row block.
AttentionShape shape_from_geometry(const AttentionKernel& k, const KernelLaunch& l,
                                   std::int32_t tile_m, std::int32_t tile_n) {
  AttentionShape s;
  s.head_dim = k.head_dim > 0 ? k.head_dim : 128;
  s.causal = k.causal_known && k.causal;
  s.dtype = k.dtype == DType::kUnknown ? DType::kBf16 : k.dtype;
  const bool bwd = k.pass == AttentionPass::kBackward;
  const std::int64_t rows_per_cta = bwd ? tile_n : tile_m;
  if (k.variant == AttentionVariant::kFlash2 && !k.split_kv) {
    s.seqlen_q = static_cast<std::int64_t>(l.grid.x) * rows_per_cta;
    s.batch = l.grid.y;
    s.heads = l.grid.z;
  } else if (k.variant == AttentionVariant::kMemEfficient && !bwd) {
    s.seqlen_q = static_cast<std::int64_t>(l.grid.x) * rows_per_cta;
    s.heads = l.grid.y;
    s.batch = l.grid.z;
  } else {
    s.seqlen_q = rows_per_cta;
    s.batch = 1;
    s.heads = static_cast<std::int64_t>(std::max<std::uint64_t>(1, l.grid.volume()));
  }
  s.seqlen_kv = s.seqlen_q;
  s.kv_heads = s.heads;
  return s;
}

}  // namespace

struct AttentionPredictor::Impl {
  struct Device {
    const Profile* profile = nullptr;
    const DeviceSpec* spec = nullptr;
    std::vector<ResidualInterpolator<5>> residual;  // per attention config
    std::vector<AttentionVariant> variant;          // per attention config
  };
  std::vector<Device> devices;
  // Per target: its own calibrated device (or -1) and every device, most similar first.
  struct TargetDevices {
    const DeviceSpec* spec = nullptr;
    int own = -1;
    std::vector<int> by_similarity;
  };
  std::vector<TargetDevices> targets;

  // The config of `d` that best matches; -1 if `d` has no config of this variant.
  int best_config(const Device& d, AttentionVariant v, std::int64_t head_dim, DType kv,
                  bool local) const {
    int best = -1;
    double best_score = 0;
    for (std::size_t i = 0; i < d.variant.size(); ++i) {
      if (d.variant[i] != v) continue;
      const AttentionConfigFit& c = d.profile->attention_configs[i];
      double score =
          2.0 * std::fabs(std::log2(static_cast<double>(std::max<std::int64_t>(1, head_dim)) /
                                    static_cast<double>(std::max(1, c.head_dim))));
      if (kv != DType::kUnknown && c.kv_dtype != kv) score += 1.0;
      if (c.local != local) score += 0.5;
      if (best < 0 || score < best_score) {
        best = static_cast<int>(i);
        best_score = score;
      }
    }
    return best;
  }
};

AttentionPredictor::AttentionPredictor() : impl_(std::make_unique<Impl>()) {}
AttentionPredictor::AttentionPredictor(AttentionPredictor&&) noexcept = default;
AttentionPredictor& AttentionPredictor::operator=(AttentionPredictor&&) noexcept = default;
AttentionPredictor::~AttentionPredictor() = default;

AttentionPredictor::AttentionPredictor(const DeviceCatalogue& catalogue,
                                       const std::vector<Profile>& profiles)
    : impl_(std::make_unique<Impl>()) {
  for (const Profile& p : profiles) add_profile(catalogue, p);
}

void AttentionPredictor::add_profile(const DeviceCatalogue& catalogue, const Profile& p) {
  if (p.attention_configs.empty()) return;
  Impl::Device d;
  d.profile = &p;
  d.spec = catalogue.find(p.device);
  if (d.spec == nullptr) return;
  const std::size_t n = p.attention_configs.size();
  std::vector<std::vector<std::array<double, 5>>> keys(n);
  std::vector<std::vector<double>> res(n);
  for (const AttentionConfigFit& c : p.attention_configs)
    d.variant.push_back(parse_attention_variant(c.variant));
  for (const AttentionPoint& pt : p.attention_points) {
    const auto ci = static_cast<std::size_t>(pt.config);
    const AttentionConfigFit& c = p.attention_configs[ci];
    const AttentionShape s = point_shape(pt, c);
    const AttentionWork w =
        attention_work(s, c.tile_m, c.tile_n, static_cast<GqaPacking>(c.gqa_packing));
    const double model = attention_kernel_us(c, attention_features(w, c.ctas_per_sm, *d.spec));
    keys[ci].push_back(residual_key(pt.batch, pt.seqlen_q, pt.heads, pt.kv_heads, pt.window));
    res[ci].push_back(std::log(pt.us / model));
  }
  for (std::size_t i = 0; i < n; ++i)
    d.residual.emplace_back(std::move(keys[i]), std::move(res[i]), kNeighbours);
  impl_->devices.push_back(std::move(d));
}

bool AttentionPredictor::calibrated() const noexcept { return !impl_->devices.empty(); }

void AttentionPredictor::add_target(const Target& target) {
  const DeviceSpec& spec = *target.spec;
  Impl::TargetDevices t;
  t.spec = &spec;
  for (std::size_t i = 0; i < impl_->devices.size(); ++i) {
    const DeviceSpec& s = *impl_->devices[i].spec;
    if (&s == &spec || s.name == spec.name) t.own = static_cast<int>(i);
  }
  for (std::size_t i : rank_donors(spec, donor_candidates(impl_->devices), kAttentionDonorWeights))
    t.by_similarity.push_back(static_cast<int>(i));
  impl_->targets.push_back(std::move(t));
}

std::optional<Prediction> AttentionPredictor::predict(const ModelQuery& q) const noexcept {
  const KernelRecord& r = q.record;
  Prediction p;
  p.model = ModelKind::kAttention;
  p.basis = TimeBasis::kKernel;
  if (q.target >= impl_->targets.size()) return p;
  const Impl::TargetDevices& t = impl_->targets[q.target];
  const DeviceSpec& spec = *t.spec;
  const AttentionKernel k = decode_cached(r.launch.name);
  const bool has_shape = r.op.kind == OpKind::kAttention && r.op.attention.valid();

  if (k.pass == AttentionPass::kHelper) {
    // Pre/post-processing kernels stream O, dO or partial results once.
    double bytes = 0;
    if (has_shape) {
      const AttentionShape& s = r.op.attention;
      const double elems = static_cast<double>(s.batch) * static_cast<double>(s.seqlen_q) *
                           static_cast<double>(s.heads) * static_cast<double>(s.head_dim);
      bytes =
          elems * (2.0 * dtype_bytes(s.dtype == DType::kUnknown ? DType::kBf16 : s.dtype) + 4.0);
    } else {
      p.flags |= prediction_flags::kNoShape;
      bytes = static_cast<double>(r.launch.grid.volume()) *
              static_cast<double>(r.launch.block.volume()) * 16.0;
    }
    p.us = kMinimumKernelUs + bytes / (kHelperBandwidthShare * std::max(1.0, spec.bytes_per_us()));
    return p;
  }

  const AttentionVariant wanted = k.recognised() ? k.variant : AttentionVariant::kFlash2;
  const std::int64_t head_dim =
      has_shape ? r.op.attention.head_dim : (k.head_dim > 0 ? k.head_dim : 128);
  const DType kv = has_shape ? (r.op.attention.kv_dtype != DType::kUnknown ? r.op.attention.kv_dtype
                                                                           : r.op.attention.dtype)
                             : k.dtype;
  const bool local = has_shape ? r.op.attention.window > 0 : k.local;

  // The calibrated configuration: this implementation on the target, then on the most
  // similar GPU that has it, then the target's (or its nearest GPU's) preferred one.
  const Impl::Device* dev = nullptr;
  int cfg = -1;
  if (t.own >= 0) {
    const auto& d = impl_->devices[static_cast<std::size_t>(t.own)];
    cfg = impl_->best_config(d, wanted, head_dim, kv, local);
    if (cfg >= 0) dev = &d;
  }
  if (dev == nullptr) {
    for (int i : t.by_similarity) {
      const auto& d = impl_->devices[static_cast<std::size_t>(i)];
      cfg = impl_->best_config(d, wanted, head_dim, kv, local);
      if (cfg >= 0) {
        dev = &d;
        break;
      }
    }
  }
  if (dev == nullptr && !t.by_similarity.empty()) {
    const auto& d =
        impl_->devices[static_cast<std::size_t>(t.own >= 0 ? t.own : t.by_similarity.front())];
    for (AttentionVariant v : kPreferred) {
      cfg = impl_->best_config(d, v, head_dim, kv, local);
      if (cfg >= 0) {
        dev = &d;
        p.flags |= prediction_flags::kConfigChosen;
        break;
      }
    }
  }

  AttentionShape s = has_shape ? r.op.attention : AttentionShape{};
  if (dev == nullptr) {
    // No attention calibration anywhere: the roofline of the attention FLOPs.
    if (!has_shape) {
      const AttentionTile tile = default_attention_tile(wanted, static_cast<std::int32_t>(head_dim),
                                                        spec.compute_capability());
      s = shape_from_geometry(k, r.launch, k.tile_m > 0 ? k.tile_m : tile.m,
                              k.tile_n > 0 ? k.tile_n : tile.n);
      p.flags |= prediction_flags::kNoShape;
    }
    p.model = ModelKind::kRoofline;
    p.flags |= prediction_flags::kFallback;
    p.us =
        roofline_kernel_us(spec, s.flops(), 0, s.dtype == DType::kUnknown ? DType::kBf16 : s.dtype);
    return p;
  }

  AttentionConfigFit c = dev->profile->attention_configs[static_cast<std::size_t>(cfg)];
  p.config = dev->profile->attention_configs[static_cast<std::size_t>(cfg)].variant;
  // The kernel's own tile when its name states it; the calibrated one otherwise. An iteration
  // of another tile does that tile's share of the math: the calibrated iteration's time
  // scaled by the tiles' areas (FlashAttention-2 runs head dim 128 over 128x64 tiles on an
  // A100 and head dim 64 over 128x128 ones: the same multiply-adds an iteration).
  if (dev->variant[static_cast<std::size_t>(cfg)] == k.variant && k.tile_m > 0 && k.tile_n > 0) {
    const double area = static_cast<double>(k.tile_m) * static_cast<double>(k.tile_n);
    const double calibrated_area =
        static_cast<double>(std::max(1, c.tile_m)) * static_cast<double>(std::max(1, c.tile_n));
    c.c_iter *= area / calibrated_area;
    c.tile_m = k.tile_m;
    c.tile_n = k.tile_n;
  }
  if (!has_shape) {
    // The grid was cut by the kernel's own tile, whatever configuration prices it.
    s = shape_from_geometry(k, r.launch, k.tile_m > 0 ? k.tile_m : c.tile_m,
                            k.tile_n > 0 ? k.tile_n : c.tile_n);
    if (s.head_dim <= 0) s.head_dim = c.head_dim;
    p.flags |= prediction_flags::kNoShape;
  }
  const bool exact =
      c.head_dim == s.head_dim && (kv == DType::kUnknown || c.kv_dtype == kv) && c.local == local;
  if (!exact) p.flags |= prediction_flags::kExtrapolated;
  // Per-iteration work grows with the head dimension.
  c.c_iter *= static_cast<double>(s.head_dim) / static_cast<double>(std::max(1, c.head_dim));
  const bool own = t.own >= 0 && dev == &impl_->devices[static_cast<std::size_t>(t.own)];
  if (!own) {
    const double from =
        per_sm_math(*dev->spec, dev->variant[static_cast<std::size_t>(cfg)], c.kv_dtype);
    const double to = per_sm_math(spec, dev->variant[static_cast<std::size_t>(cfg)], c.kv_dtype);
    if (from > 0 && to > 0) c.c_iter *= from / to;
    if (dev->spec->boost_clock_mhz > 0 && spec.boost_clock_mhz > 0)
      c.c_cta *= dev->spec->boost_clock_mhz / spec.boost_clock_mhz;
    p.flags |= prediction_flags::kSpecScaled;
  }

  const bool backward = k.pass == AttentionPass::kBackward || s.backward;
  AttentionWork w;
  if (backward) {
    // One CTA per key block walking the query blocks: the forward walk transposed.
    AttentionShape tr = s;
    std::swap(tr.seqlen_q, tr.seqlen_kv);
    w = attention_work(tr, c.tile_n, c.tile_m, GqaPacking::kNone);
    c.c_iter *= kBackwardIterationCost;
    p.flags |= prediction_flags::kExtrapolated;
  } else {
    w = attention_work(s, c.tile_m, c.tile_n, static_cast<GqaPacking>(c.gqa_packing));
  }
  double us = attention_kernel_us(c, attention_features(w, c.ctas_per_sm, spec));
  if (!backward && s.seqlen_q == s.seqlen_kv && !(p.flags & prediction_flags::kNoShape) &&
      s.head_dim == c.head_dim) {
    us *= dev->residual[static_cast<std::size_t>(cfg)].correction(residual_key(
        s.batch, s.seqlen_q, s.heads, s.kv_heads > 0 ? s.kv_heads : s.heads, s.window));
  }
  // Never below the smaller of the call's time and a kernel's floor.
  p.us = std::max(us - cache_write_us(c, r, s, spec), std::min(us, kMinimumKernelUs));
  return p;
}

}  // namespace pm2lat
