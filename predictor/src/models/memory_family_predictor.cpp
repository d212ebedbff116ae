#include "pm2lat/models/memory_family_predictor.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <exception>
#include <span>
#include <unordered_map>

#include "pm2lat/models/donor_ranking.h"
#include "pm2lat/models/launch_work.h"
#include "pm2lat/models/memory_bound_model.h"

namespace pm2lat {
namespace {

constexpr double kTritonTensorsPerElement = 3.0;
// A GPU's own kernel fits of the row families answer up to this factor above the bytes
// they were made on; further out, the per-operator tables (made on other sizes) do.
constexpr double kOwnFitReach = 4.0;

// The families whose kernels process rows of a tensor and whose geometry fits may stand in
// for a missing shape.
bool is_row_family(KernelFamily f) noexcept {
  return f == KernelFamily::kElementwise || f == KernelFamily::kSoftmax ||
         f == KernelFamily::kLayerNorm;
}

}  // namespace

KernelFamily kernel_family_stand_in(KernelFamily f) noexcept {
  if (f == KernelFamily::kTritonPointwise) return KernelFamily::kElementwise;
  if (f == KernelFamily::kTritonReduction) return KernelFamily::kReduction;
  return f;
}

std::string geometry_fit_name(KernelFamily family) {
  return std::string(to_string(family)) + "#geometry";
}

struct MemoryFamilyPredictor::Impl {
  struct Device {
    const Profile* profile = nullptr;
    const DeviceSpec* spec = nullptr;
    // "family" or "family#geometry" -> (config -> fit index); config "" = family-wide.
    std::unordered_map<std::string, std::unordered_map<std::string, std::size_t>> fits;

    // The fit of `op` for kernel configuration `config` ("" = the family-wide pool).
    const VectorFit* find(const std::string& op, const std::string& config) const {
      const auto it = fits.find(op);
      if (it == fits.end()) return nullptr;
      const auto c = it->second.find(config);
      return c == it->second.end() ? nullptr : &profile->family_fits[c->second];
    }
  };
  std::vector<Device> devices;
  struct TargetDevices {
    const DeviceSpec* spec = nullptr;
    std::vector<int> order;  // own device first, then by similarity
    int own = -1;
  };
  std::vector<TargetDevices> targets;
  // Family names, computed once (prediction stays allocation-free).
  std::vector<std::string> family_names, geometry_names;

  // Which fits a walk may take: the kernel's own configuration's, the family-wide pool's, or
  // either (its own configuration first).
  enum class Fits { kOwnConfig, kPool, kEither };
  struct Found {
    const VectorFit* fit = nullptr;
    const Device* device = nullptr;
    bool own_config = false;  // the kernel's configuration's, not the family-wide pool's
  };

  // The first fit under `names` (shape or geometry fits) for `cls`'s family, then for its
  // stand-in; within each, the kernel's own configuration on the first device of `order` that
  // measured it, then the family-wide pool of other kernels, even the target's own (kernels
  // of one family differ by 10x in efficiency and fixed cost: an index_select against FBGEMM's
  // gathers). With `only` a device, no device after that one (the own device sorts first).
  static constexpr int kAnyDevice = -1;
  Found find(const std::vector<std::string>& names, const KernelClass& cls,
             std::span<const int> order, Fits which, int only) const {
    static const std::string kFamilyWide;
    const std::array<KernelFamily, 2> families{cls.family, kernel_family_stand_in(cls.family)};
    const std::size_t walked = families[1] == families[0] ? 1 : 2;
    for (std::size_t fi = 0; fi < walked; ++fi) {
      const std::string& op = names[static_cast<std::size_t>(families[fi])];
      for (const std::string* config : {&cls.config, &kFamilyWide}) {
        const bool pool = config == &kFamilyWide;
        if ((pool && which == Fits::kOwnConfig) || (!pool && which == Fits::kPool) ||
            (!pool && config->empty()))
          continue;
        for (int i : order) {
          if (only != kAnyDevice && i != only) break;
          const Device& d = devices[static_cast<std::size_t>(i)];
          if (const VectorFit* fit = d.find(op, *config)) return {fit, &d, !pool};
        }
      }
    }
    return {};
  }
};

MemoryFamilyPredictor::MemoryFamilyPredictor() : impl_(std::make_unique<Impl>()) {}
MemoryFamilyPredictor::MemoryFamilyPredictor(MemoryFamilyPredictor&&) noexcept = default;
MemoryFamilyPredictor& MemoryFamilyPredictor::operator=(MemoryFamilyPredictor&&) noexcept = default;
MemoryFamilyPredictor::~MemoryFamilyPredictor() = default;

MemoryFamilyPredictor::MemoryFamilyPredictor(const DeviceCatalogue& catalogue,
                                             const std::vector<Profile>& profiles)
    : impl_(std::make_unique<Impl>()) {
  for (std::size_t f = 0; f < kKernelFamilyCount; ++f) {
    impl_->family_names.emplace_back(to_string(static_cast<KernelFamily>(f)));
    impl_->geometry_names.push_back(geometry_fit_name(static_cast<KernelFamily>(f)));
  }
  for (const Profile& p : profiles) {
    if (p.family_fits.empty()) continue;
    Impl::Device d;
    d.profile = &p;
    d.spec = catalogue.find(p.device);
    if (d.spec == nullptr) continue;
    for (std::size_t i = 0; i < p.family_fits.size(); ++i)
      d.fits[p.family_fits[i].op][p.family_fits[i].config] = i;
    impl_->devices.push_back(std::move(d));
  }
}

void MemoryFamilyPredictor::add_target(const Target& target) {
  const DeviceSpec& spec = *target.spec;
  Impl::TargetDevices t;
  t.spec = &spec;
  for (std::size_t i = 0; i < impl_->devices.size(); ++i) {
    if (impl_->devices[i].spec->name == spec.name) t.own = static_cast<int>(i);
  }
  for (std::size_t i :
       rank_donors(spec, donor_candidates(impl_->devices), kMemoryFamilyDonorWeights))
    t.order.push_back(static_cast<int>(i));
  impl_->targets.push_back(std::move(t));
}

std::optional<Prediction> MemoryFamilyPredictor::predict(const ModelQuery& q) const noexcept {
  return predict_from(q.record, q.cls, q.target, q.source, false, true);
}

std::optional<Prediction> MemoryFamilyPredictor::predict_own(const ModelQuery& q) const noexcept {
  return predict_from(q.record, q.cls, q.target, q.source, true, true);
}

std::optional<Prediction> MemoryFamilyPredictor::predict_row_without_shape(
    const ModelQuery& q) const noexcept {
  if (!is_row_family(q.cls.family) || q.record.op.vec.bytes() > 0) return std::nullopt;
  return predict_from(q.record, q.cls, q.target, q.source, false, false);
}

std::optional<double> MemoryFamilyPredictor::own_fixed_cost_us(const ModelQuery& q) const noexcept {
  if (q.target >= impl_->targets.size()) return std::nullopt;
  const Impl::TargetDevices& t = impl_->targets[q.target];
  if (t.own < 0) return std::nullopt;
  const Impl::Found found =
      impl_->find(impl_->family_names, q.cls, t.order, Impl::Fits::kOwnConfig, t.own);
  const VectorFit* fit = found.fit;
  if (fit == nullptr || !(fit->c0 > 0) || !(fit->bytes_min > 0)) return std::nullopt;
  // The intercept is a fixed cost the GPU was seen to pay only when the fit's smallest kernel
  // spent at least half its time on it; a fit made on large tensors only extrapolates it.
  const double smallest_traffic_us =
      fit->c_byte * memory_bound_features(*found.device->spec, fit->bytes_min, 1).bytes_term;
  if (smallest_traffic_us > fit->c0) return std::nullopt;
  return std::max(kMinMemoryKernelUs, fit->c0);
}

std::optional<Prediction> MemoryFamilyPredictor::predict_from(
    const KernelRecord& r, const KernelClass& cls, std::size_t target, const DeviceSpec* source,
    bool own_only, bool read_launch) const noexcept {
  if (target >= impl_->targets.size()) return std::nullopt;
  const Impl::TargetDevices& t = impl_->targets[target];
  if (own_only && t.own < 0) return std::nullopt;
  double shape_bytes = r.op.vec.bytes();
  double shape_rows = static_cast<double>(std::max<std::int64_t>(1, r.op.vec.rows));
  bool from_arguments = false;
  if (!(shape_bytes > 0) && !r.launch.int_args.empty() &&
      (cls.family == KernelFamily::kTritonPointwise ||
       cls.family == KernelFamily::kTritonReduction)) {
    // Inductor passes the element counts as the last integer arguments (xnumel, then rnumel
    // for reductions): a nominal two reads and one write per element.
    const auto& a = r.launch.int_args;
    const bool reduction = cls.family == KernelFamily::kTritonReduction && a.size() >= 2;
    const double x =
        static_cast<double>(std::max<std::int64_t>(1, reduction ? a[a.size() - 2] : a.back()));
    const double rn = reduction ? static_cast<double>(std::max<std::int64_t>(1, a.back())) : 1.0;
    const double eb = cls.dtype != DType::kUnknown ? dtype_bytes(cls.dtype) : 4.0;
    shape_bytes = kTritonTensorsPerElement * x * rn * eb;
    shape_rows = reduction ? x : static_cast<double>(std::max<std::uint32_t>(1, r.launch.grid.x));
    from_arguments = true;
  }
  bool from_launch = false;
  if (!(shape_bytes > 0) && read_launch) {
    // What the launch states (a persistent softmax's rows, an elementwise kernel's elements),
    // as trace replay reads it for a trace without shapes: bytes, not a fit over threads.
    // Reading a name allocates; a failure leaves the launch to the fit over threads.
    try {
      if (auto w = launch_work(r.launch.name, cls, r.launch.grid, r.launch.block);
          w && w->vec.bytes() > 0) {
        shape_bytes = w->vec.bytes();
        shape_rows = static_cast<double>(std::max<std::int64_t>(1, w->vec.rows));
        from_launch = true;
      }
    } catch (const std::exception&) {}
  }
  // Whose fits answer, in order: the target's own first, then the most similar GPUs'. A fit
  // over launched threads is the exception. It stands for the per-thread work of the
  // programs it was made on, not for the GPU: one configuration's differs 66x between the
  // shipped GPUs (ATen's reduce_kernel, 0.75 x a nominal pass on the A100 traces, 50 x on the
  // H100's). Taken from each target's own calibration, two GPUs' forecasts of one launch
  // would differ by which programs calibrated each (an A100 forecast 0.11 x the H100's for a
  // memory-bound kernel), and a forecast anchored to the measurement (measured_guard.h)
  // would carry that ratio. So for a GPU other than the one the kernel ran on, the fit that
  // GPU would take is carried to the target by its spec (bandwidth, SMs).
  std::array<int, kMaxRankedDonors> from_source{};
  const auto launch_fit_order = [&] {
    return order_from_source(source, *t.spec, t.order, impl_->devices, kMemoryFamilyDonorWeights,
                             from_source);
  };
  const int only = own_only ? t.own : Impl::kAnyDevice;
  using Fits = Impl::Fits;
  bool geometry = !(shape_bytes > 0);
  Impl::Found found;
  if (geometry) {
    found = impl_->find(impl_->geometry_names, cls,
                        own_only ? std::span<const int>(t.order) : launch_fit_order(),
                        Fits::kEither, only);
  } else if (own_only || from_arguments) {
    found = impl_->find(impl_->family_names, cls, t.order, Fits::kEither, only);
  } else {
    // A kernel with a shape whose configuration no GPU fitted by shape, but one timed from
    // launches without shapes (another trace recorded it so), is priced by that fit from its
    // launch geometry: its own configuration before the family's pool of other kernels
    // (VGG-13's max-pool backward, 0.17x from the pool's bytes, is 1.0x from NCCL-data's
    // shapeless launches of it; predictor/ACCURACY.md).
    found = impl_->find(impl_->family_names, cls, t.order, Fits::kOwnConfig, Impl::kAnyDevice);
    if (found.fit == nullptr) {
      found = impl_->find(impl_->geometry_names, cls, launch_fit_order(), Fits::kOwnConfig,
                          Impl::kAnyDevice);
      geometry = found.fit != nullptr;
    }
    if (found.fit == nullptr)
      found = impl_->find(impl_->family_names, cls, t.order, Fits::kPool, Impl::kAnyDevice);
  }
  const VectorFit* const fit = found.fit;
  const Impl::Device* const dev = found.device;
  const bool specific = found.own_config;
  if (fit == nullptr) return std::nullopt;
  // Own fits stand in for the per-operator tables only where they know this kernel: its own
  // configuration (a family-wide fit pools kernels as different as a warp-per-row softmax and
  // a block-per-row one), up to a few times the largest size measured.
  if (own_only && (!specific || (!geometry && fit->bytes_max > 0 &&
                                 shape_bytes > kOwnFitReach * fit->bytes_max)))
    return std::nullopt;
  Prediction p;
  p.model = ModelKind::kMemoryBound;
  p.basis = TimeBasis::kKernel;
  if (specific) p.config = fit->config;
  if (dev != &impl_->devices[static_cast<std::size_t>(std::max(0, t.own))] || t.own < 0)
    p.flags |= prediction_flags::kSpecScaled;
  if (from_arguments) p.flags |= prediction_flags::kExtrapolated;
  if (from_launch) p.flags |= prediction_flags::kNoShape;
  double bytes = shape_bytes, rows = shape_rows;
  if (geometry) {
    const double threads = launched_threads(r.launch.grid, r.launch.block);
    bytes = threads * kGeometryBytesPerThread;
    rows = static_cast<double>(r.launch.grid.volume());
    p.flags |= prediction_flags::kNoShape;
  }
  // A fit answers within the sizes it was made on (a geometry fit's: launched threads at
  // kGeometryBytesPerThread). Above the largest, any fit carries on from its time there at
  // its bandwidth, its per-row term taken no further. Below the smallest, the kernel only
  // gets closer to its fixed cost: the fit's bandwidth form runs down to it (flag clamped).
  // Own shape fits do so rather than hand the kernel to another GPU's call-time fit. Geometry
  // fits always: their terms were fitted on those launches only, and the intercept of one
  // made on a single launch size holds nearly that launch's whole time (an A100 grid-stride kernel
  // timed at 864 blocks, 71 us, priced a one-block launch of it at 67.6 us). Within its bytes,
  // rows past the most it was made on cost what that many did (memory_bound_kernel_us).
  const bool below_range = fit->bytes_max > 0 && bytes < fit->bytes_min;
  const bool above_range = fit->bytes_max > 0 && bytes > fit->bytes_max;
  if (below_range && (own_only || geometry)) {
    // Interpolate between the fixed cost and the fit at its smallest size (same bytes per row):
    // the per-row term is not extrapolated to rows it was not fitted on.
    // (A launch of no threads, as a malformed record may state, costs the fixed cost.)
    const double edge = fit->bytes_min;
    const double edge_rows = bytes > 0 ? rows * edge / bytes : rows;
    const double edge_us = memory_bound_kernel_us(*fit, *t.spec, edge, edge_rows);
    p.us = below_range_kernel_us(below_range_fixed_us(*fit, geometry), edge_us, bytes, edge);
    p.flags |= prediction_flags::kClamped;
    return p;
  }
  if (above_range) {
    p.us = above_range_kernel_us(*fit, *t.spec, bytes, rows);
    p.flags |= prediction_flags::kClamped;
    return p;
  }
  p.us = memory_bound_kernel_us(*fit, *t.spec, bytes, rows);
  if (rows_beyond_range(*fit, rows)) p.flags |= prediction_flags::kClamped;
  return p;
}

}  // namespace pm2lat
